/*
 * write_pool.c — recycled scratch buffers for the column-chunk writers.
 *
 * A table append opens a fresh Parquet writer per data file, and each leaf
 * needs a few page-sized buffers (values, levels, encoded and compressed
 * page, the chunk's pages). Allocated anew every time, those megabytes are
 * fresh pages that the kernel zero-fills on first touch: a third of the CPU
 * of an uncompressed append went to page faults. Writers therefore hand
 * their buffers back here when freed and take them again when opened.
 *
 * Buffers are kept per role (writer_internal.h, HS_WBUF_*), because sizes
 * follow roles (a page buffer is about page_bytes_max; a chunk buffer about
 * a column chunk). Bounds: HS_WPOOL_SLOTS buffers per role, each between
 * HS_WPOOL_CAP_MIN and HS_WPOOL_CAP_MAX bytes of capacity, and
 * HS_WPOOL_BYTES_MAX bytes in all; anything else is freed. The pool is
 * process-wide and mutex-protected (writers on worker threads share it);
 * pooled memory stays allocated for the life of the process.
 */
#include <pthread.h>
#include <string.h>

#include "writer_internal.h"

#define HS_WPOOL_SLOTS 16
#define HS_WPOOL_CAP_MIN ((size_t)16 << 10)
#define HS_WPOOL_CAP_MAX ((size_t)16 << 20)
#define HS_WPOOL_BYTES_MAX ((size_t)96 << 20)

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_buf pool[HS_WBUF_ROLES][HS_WPOOL_SLOTS];
static int pool_n[HS_WBUF_ROLES];
static size_t pool_bytes;

void hs_wpool_take(int role, hs_buf *b) {
  if (b->data != NULL || role < 0 || role >= HS_WBUF_ROLES) return;
  pthread_mutex_lock(&pool_lock);
  int n = pool_n[role];
  if (n > 0) {
    /* The largest: a buffer that grew for one column fits the next one. */
    int best = 0;
    for (int i = 1; i < n; i++)
      if (pool[role][i].cap > pool[role][best].cap) best = i;
    *b = pool[role][best];
    pool[role][best] = pool[role][n - 1];
    pool_n[role] = n - 1;
    pool_bytes -= b->cap;
    b->len = 0;
  }
  pthread_mutex_unlock(&pool_lock);
}

void hs_wpool_give(int role, hs_buf *b) {
  if (b->data == NULL) return;
  bool kept = false;
  if (role >= 0 && role < HS_WBUF_ROLES && b->cap >= HS_WPOOL_CAP_MIN &&
      b->cap <= HS_WPOOL_CAP_MAX) {
    pthread_mutex_lock(&pool_lock);
    if (pool_n[role] < HS_WPOOL_SLOTS && pool_bytes + b->cap <= HS_WPOOL_BYTES_MAX) {
      pool[role][pool_n[role]++] = *b;
      pool_bytes += b->cap;
      kept = true;
    }
    pthread_mutex_unlock(&pool_lock);
  }
  if (!kept) hs_buf_free(b);
  memset(b, 0, sizeof(*b));
}

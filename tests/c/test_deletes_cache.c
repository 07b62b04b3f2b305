/*
 * test_deletes_cache.c — the per-process cache of position delete files'
 * contents (src/table/deletes_cache.h): what is put is handed back, per
 * data file in path order, as copies (the caller's bitmaps may go); a
 * different size misses; a put of the same path replaces; the entry and
 * position bounds evict the least recently used; a callback's error stops
 * the walk and is returned; concurrent puts and applies agree.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "hs_test.h"
#include "table/deletes_cache.h"

typedef struct seen {
  char paths[8][64];
  uint64_t card[8];
  uint32_t min[8];
  size_t n;
  int fail_at; /* -1: never */
} seen;

static hs_status record(void *ctx, const char *data_file, const roaring_bitmap_t *rows,
                        hs_error *err) {
  seen *s = ctx;
  if ((int)s->n == s->fail_at) return hs_error_set(err, HS_ERR_CORRUPT, "stop at %zu", s->n);
  if (s->n < 8) {
    snprintf(s->paths[s->n], sizeof s->paths[0], "%s", data_file);
    s->card[s->n] = roaring_bitmap_get_cardinality(rows);
    s->min[s->n] = roaring_bitmap_minimum(rows);
  }
  s->n++;
  return HS_OK;
}

static roaring_bitmap_t *range(uint32_t lo, uint32_t hi) {
  roaring_bitmap_t *b = roaring_bitmap_create();
  roaring_bitmap_add_range(b, lo, hi);
  return b;
}

static void *hammer(void *arg) {
  long id = (long)arg;
  hs_error e = {0};
  for (int i = 0; i < 200; i++) {
    char path[64], df[64];
    snprintf(path, sizeof path, "/t/del-%ld-%d", id, i % 20);
    snprintf(df, sizeof df, "/t/data-%d", i);
    roaring_bitmap_t *b = range((uint32_t)i, (uint32_t)i + 10);
    hs_table_delete_group g = {df, b};
    hs_posdel_cache_put(path, 100 + i, &g, 1);
    roaring_bitmap_free(b);
    seen s = {.fail_at = -1};
    hs_status st = HS_OK;
    if (hs_posdel_cache_apply(path, 100 + i, record, &s, &st, &e) && (s.n != 1 || s.card[0] != 10))
      return (void *)1;
  }
  return NULL;
}

int main(void) {
  hs_error e = {0};
  hs_status st = HS_OK;
  /* put, then apply: copies, in data file path order */
  roaring_bitmap_t *a = range(0, 5), *b = range(10, 13);
  hs_table_delete_group g[2] = {{"/t/data-b", a}, {"/t/data-a", b}};
  hs_posdel_cache_put("/t/del-1", 1234, g, 2);
  roaring_bitmap_free(a);
  roaring_bitmap_free(b);
  seen s = {.fail_at = -1};
  CHECK(hs_posdel_cache_apply("/t/del-1", 1234, record, &s, &st, &e));
  CHECK_EQ_INT(st, HS_OK);
  CHECK_EQ_INT(s.n, 2);
  CHECK(strcmp(s.paths[0], "/t/data-a") == 0 && s.card[0] == 3 && s.min[0] == 10);
  CHECK(strcmp(s.paths[1], "/t/data-b") == 0 && s.card[1] == 5 && s.min[1] == 0);
  /* another size, another path: misses */
  memset(&s, 0, sizeof s);
  s.fail_at = -1;
  CHECK(!hs_posdel_cache_apply("/t/del-1", 1235, record, &s, &st, &e));
  CHECK(!hs_posdel_cache_apply("/t/del-2", 1234, record, &s, &st, &e));
  CHECK_EQ_INT(s.n, 0);
  /* the callback's error stops the walk */
  s.fail_at = 1;
  CHECK(hs_posdel_cache_apply("/t/del-1", 1234, record, &s, &st, &e));
  CHECK_EQ_INT(st, HS_ERR_CORRUPT);
  CHECK_EQ_INT(s.n, 1);
  /* a put of the same path replaces */
  roaring_bitmap_t *c = range(7, 8);
  hs_table_delete_group g1 = {"/t/data-c", c};
  hs_posdel_cache_put("/t/del-1", 99, &g1, 1);
  CHECK(!hs_posdel_cache_apply("/t/del-1", 1234, record, &s, &st, &e));
  memset(&s, 0, sizeof s);
  s.fail_at = -1;
  CHECK(hs_posdel_cache_apply("/t/del-1", 99, record, &s, &st, &e));
  CHECK(s.n == 1 && strcmp(s.paths[0], "/t/data-c") == 0);
  /* the entry bound: the least recently used goes */
  for (int i = 0; i < HS_POSDEL_CACHE_ENTRIES + 10; i++) {
    char path[64];
    snprintf(path, sizeof path, "/t/many-%d", i);
    hs_posdel_cache_put(path, 1, &g1, 1);
    CHECK(hs_posdel_cache_apply("/t/del-1", 99, record, &s, &st, &e)); /* kept in use */
  }
  CHECK(hs_posdel_cache_apply("/t/del-1", 99, record, &s, &st, &e));
  CHECK(!hs_posdel_cache_apply("/t/many-0", 1, record, &s, &st, &e));
  CHECK(hs_posdel_cache_apply("/t/many-265", 1, record, &s, &st, &e));
  /* the position bound: a file over a quarter of it is not kept */
  roaring_bitmap_t *big = range(0, HS_POSDEL_CACHE_POSITIONS / 4 + 1);
  hs_table_delete_group gb = {"/t/data-big", big};
  hs_posdel_cache_put("/t/del-big", 5, &gb, 1);
  CHECK(!hs_posdel_cache_apply("/t/del-big", 5, record, &s, &st, &e));
  roaring_bitmap_free(big);
  /* an empty file (no groups) is an entry too */
  hs_posdel_cache_put("/t/del-empty", 7, NULL, 0);
  memset(&s, 0, sizeof s);
  s.fail_at = -1;
  CHECK(hs_posdel_cache_apply("/t/del-empty", 7, record, &s, &st, &e));
  CHECK_EQ_INT(s.n, 0);
  /* concurrent puts and applies */
  pthread_t th[4];
  for (long i = 0; i < 4; i++) pthread_create(&th[i], NULL, hammer, (void *)i);
  for (int i = 0; i < 4; i++) {
    void *r = NULL;
    pthread_join(th[i], &r);
    CHECK(r == NULL);
  }
  hs_posdel_cache_clear();
  CHECK(!hs_posdel_cache_apply("/t/del-1", 99, record, &s, &st, &e));
  roaring_bitmap_free(c);
  return hs_test_finish("test_deletes_cache");
}

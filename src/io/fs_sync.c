/*
 * fs_sync.c — sync sets (fs_sync.h): syncs started as files are written,
 * waited for once, on an io_uring or on a thread each.
 *
 * The io_uring is driven through the raw system calls and the kernel's
 * UAPI header (no liburing): a ring of RING_ENTRIES submission slots, one
 * IORING_OP_FSYNC per sync (IORING_FSYNC_DATASYNC for files), submitted
 * at once (the kernel runs fsync on its async workers, so the submit
 * returns without waiting), reaped in hs_fs_syncs_wait. A set never has
 * more than RING_ENTRIES syncs in flight (it reaps one first), so the
 * completion ring (twice the size) never overflows.
 *
 * Why not a thread per sync (what hs_fs_sync_group does): each of a
 * commit's five or six syncs then costs a clone and a join, and on a
 * loaded machine every one of those threads waits to be scheduled before
 * its sync even starts. With the ring the caller sleeps once.
 */
#include "fs_sync.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { RING_ENTRIES = 32, POOL_MAX = 4 };

/* ------------------------------------------------------------ the ring */

typedef struct ring {
  int fd;
  pid_t pid; /* the process that made it: a forked child makes its own */
  void *sq_map, *cq_map;
  size_t sq_len, cq_len, sqes_len;
  struct io_uring_sqe *sqes;
  unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
  unsigned *cq_head, *cq_tail, *cq_mask;
  struct io_uring_cqe *cqes;
} ring;

static void ring_destroy(ring *r) {
  if (r == NULL) return;
  if (r->sqes != NULL) munmap(r->sqes, r->sqes_len);
  if (r->cq_map != NULL && r->cq_map != r->sq_map) munmap(r->cq_map, r->cq_len);
  if (r->sq_map != NULL) munmap(r->sq_map, r->sq_len);
  if (r->fd >= 0) close(r->fd);
  hs_free(r);
}

/* A new ring; NULL with *unsupported set when this kernel or sandbox has
 * no io_uring (then no set of this process tries again). */
static ring *ring_create(bool *unsupported) {
  *unsupported = false;
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  int fd = (int)syscall(__NR_io_uring_setup, RING_ENTRIES, &p);
  if (fd < 0) {
    int e = errno;
    *unsupported = e == ENOSYS || e == EPERM || e == EACCES || e == EINVAL;
    return NULL;
  }
  ring *r = hs_calloc(1, sizeof *r);
  if (r == NULL) {
    close(fd);
    return NULL;
  }
  r->fd = fd;
  r->pid = getpid();
  r->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  bool single = (p.features & IORING_FEAT_SINGLE_MMAP) != 0;
  if (single && r->cq_len > r->sq_len) r->sq_len = r->cq_len;
  r->sq_map = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                   IORING_OFF_SQ_RING);
  if (r->sq_map == MAP_FAILED) {
    r->sq_map = NULL;
    ring_destroy(r);
    return NULL;
  }
  if (single) {
    r->cq_map = r->sq_map;
  } else {
    r->cq_map = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                     IORING_OFF_CQ_RING);
    if (r->cq_map == MAP_FAILED) {
      r->cq_map = NULL;
      ring_destroy(r);
      return NULL;
    }
  }
  r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
  r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                 IORING_OFF_SQES);
  if (r->sqes == MAP_FAILED) {
    r->sqes = NULL;
    ring_destroy(r);
    return NULL;
  }
  char *sq = r->sq_map, *cq = r->cq_map;
  r->sq_head = (unsigned *)(sq + p.sq_off.head);
  r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
  r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
  r->sq_array = (unsigned *)(sq + p.sq_off.array);
  r->cq_head = (unsigned *)(cq + p.cq_off.head);
  r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
  r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
  r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
  return r;
}

static int ring_enter(ring *r, unsigned submit, unsigned wait_nr) {
  for (;;) {
    long rc = syscall(__NR_io_uring_enter, r->fd, submit, wait_nr,
                      wait_nr ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
    if (rc >= 0) return (int)rc;
    if (errno != EINTR) return -errno;
  }
}

/* --------------------------------------------------- the pool of rings */

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static ring *pool[POOL_MAX];
static size_t n_pool;
static bool uring_unsupported; /* io_uring_setup refused: not tried again */

/* A ring for a new set: a pooled one of this process, else a new one;
 * NULL (a thread per sync) without io_uring or when HS_IO_URING=0 (read
 * at every set, so a test can compare both ways in one process). */
static ring *ring_take(void) {
  const char *off = getenv("HS_IO_URING");
  if (off != NULL && strcmp(off, "0") == 0) return NULL;
  pthread_mutex_lock(&pool_mu);
  ring *r = NULL;
  pid_t me = getpid();
  while (r == NULL && n_pool > 0) {
    ring *c = pool[--n_pool];
    if (c->pid == me) {
      r = c;
    } else {
      ring_destroy(c); /* the parent's, inherited through fork */
    }
  }
  bool try_new = r == NULL && !uring_unsupported;
  pthread_mutex_unlock(&pool_mu);
  if (!try_new) return r;
  bool unsupported = false;
  r = ring_create(&unsupported);
  if (unsupported) {
    pthread_mutex_lock(&pool_mu);
    uring_unsupported = true;
    pthread_mutex_unlock(&pool_mu);
  }
  return r;
}

static void ring_give(ring *r) {
  if (r == NULL) return;
  pthread_mutex_lock(&pool_mu);
  if (r->pid == getpid() && n_pool < POOL_MAX) {
    pool[n_pool++] = r;
    r = NULL;
  }
  pthread_mutex_unlock(&pool_mu);
  ring_destroy(r);
}

bool hs_fs_syncs_uring(void) {
  ring *r = ring_take();
  bool yes = r != NULL;
  ring_give(r);
  return yes;
}

/* ------------------------------------------------------------- the set */

typedef struct item {
  char *path;
  int fd;
  bool dir;      /* fsync of a directory (fd opened here) instead of fdatasync */
  bool threaded; /* thread mode: `thread` runs it */
  bool done;
  int rc; /* 0 or errno */
  pthread_t thread;
} item;

struct hs_fs_syncs {
  ring *r;          /* NULL: a thread per sync */
  bool ring_broken; /* a submit failed: the ring is not given back */
  item **items;
  size_t n, cap;
  size_t in_flight; /* on the ring, not yet reaped */
};

hs_fs_syncs *hs_fs_syncs_new(void) {
  hs_fs_syncs *s = hs_calloc(1, sizeof *s);
  if (s != NULL) s->r = ring_take();
  return s;
}

static void sync_now(item *it) {
  int rc = it->dir ? fsync(it->fd) : fdatasync(it->fd);
  it->rc = rc == 0 || (it->dir && errno == EINVAL) ? 0 : errno;
  it->done = true;
}

static void *sync_thread(void *arg) {
  sync_now(arg);
  return NULL;
}

static void finish(item *it, int res) {
  it->rc = res >= 0 || (it->dir && res == -EINVAL) ? 0 : -res;
  it->done = true;
  if (it->dir && it->fd >= 0) {
    close(it->fd);
    it->fd = -1;
  }
}

/* Reap completions until at most `left` syncs are in flight. */
static void reap(hs_fs_syncs *s, size_t left) {
  ring *r = s->r;
  while (s->in_flight > left) {
    unsigned head = *r->cq_head;
    unsigned tail = atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire);
    if (head == tail) {
      int rc = ring_enter(r, 0, 1);
      if (rc < 0 && rc != -EAGAIN && rc != -EBUSY) {
        /* Cannot wait on the ring: nothing more can be learned from it.
         * The syncs still in flight are reported failed. */
        for (size_t i = 0; i < s->n; i++)
          if (!s->items[i]->done && !s->items[i]->threaded) finish(s->items[i], rc);
        s->in_flight = 0;
        s->ring_broken = true;
        return;
      }
      continue;
    }
    for (; head != tail; head++) {
      struct io_uring_cqe *c = &r->cqes[head & *r->cq_mask];
      if (c->user_data < s->n) finish(s->items[c->user_data], c->res);
      s->in_flight--;
    }
    atomic_store_explicit((_Atomic unsigned *)r->cq_head, head, memory_order_release);
  }
}

/* Start the sync of s->items[s->n - 1]. */
static void start(hs_fs_syncs *s) {
  size_t idx = s->n - 1;
  item *it = s->items[idx];
  if (s->r != NULL && !s->ring_broken) {
    if (s->in_flight >= RING_ENTRIES) reap(s, RING_ENTRIES - 1);
  }
  if (s->r != NULL && !s->ring_broken) {
    ring *r = s->r;
    unsigned tail = *r->sq_tail;
    unsigned slot = tail & *r->sq_mask;
    struct io_uring_sqe *e = &r->sqes[slot];
    memset(e, 0, sizeof *e);
    e->opcode = IORING_OP_FSYNC;
    e->fd = it->fd;
    e->fsync_flags = it->dir ? 0 : IORING_FSYNC_DATASYNC;
    e->user_data = idx;
    r->sq_array[slot] = slot;
    atomic_store_explicit((_Atomic unsigned *)r->sq_tail, tail + 1, memory_order_release);
    int rc;
    do {
      rc = ring_enter(r, 1, 0);
      if (rc == -EAGAIN || rc == -EBUSY) reap(s, s->in_flight ? s->in_flight - 1 : 0);
    } while ((rc == -EAGAIN || rc == -EBUSY) && !s->ring_broken);
    if (rc == 1) {
      s->in_flight++;
      return;
    }
    /* The entry may still sit in the submission ring: this ring is not
     * used again (freeing it cancels or finishes what it holds). */
    s->ring_broken = true;
  }
  it->threaded = pthread_create(&it->thread, NULL, sync_thread, it) == 0;
  if (!it->threaded) sync_now(it);
}

static hs_status add(hs_fs_syncs *s, int fd, const char *path, bool dir, hs_error *err) {
  if (s->n == s->cap) {
    size_t ncap = s->cap ? 2 * s->cap : 8;
    item **ni = hs_realloc(s->items, ncap * sizeof *ni);
    if (ni == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory for its sync", path);
    s->items = ni;
    s->cap = ncap;
  }
  item *it = hs_calloc(1, sizeof *it);
  char *p = hs_strdup(path);
  if (it == NULL || p == NULL) {
    hs_free(it);
    hs_free(p);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory for its sync", path);
  }
  it->path = p;
  it->fd = fd;
  it->dir = dir;
  s->items[s->n++] = it;
  start(s);
  return HS_OK;
}

hs_status hs_fs_syncs_add_file(hs_fs_syncs *s, int fd, const char *path, hs_error *err) {
  return add(s, fd, path, false, err);
}

hs_status hs_fs_syncs_add_dir(hs_fs_syncs *s, const char *path, hs_error *err) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return hs_error_set(err, HS_ERR_IO, "%s: cannot open directory to fsync it: %s", path,
                        strerror(errno));
  }
  hs_status st = add(s, fd, path, true, err);
  if (st != HS_OK) close(fd);
  return st;
}

/* Every started sync returned; items freed. The first failure, in order. */
static hs_status drain(hs_fs_syncs *s, hs_error *err) {
  if (s->r != NULL) reap(s, 0);
  hs_status st = HS_OK;
  for (size_t i = 0; i < s->n; i++) {
    item *it = s->items[i];
    if (it->threaded) pthread_join(it->thread, NULL);
    if (it->dir && it->fd >= 0) close(it->fd);
    if (it->rc != 0 && st == HS_OK) {
      st = hs_error_set(err, HS_ERR_IO, "%s: %s failed: %s", it->path,
                        it->dir ? "fsync of directory" : "fdatasync", strerror(it->rc));
    }
    hs_free(it->path);
    hs_free(it);
  }
  s->n = 0;
  return st;
}

hs_status hs_fs_syncs_wait(hs_fs_syncs *s, hs_error *err) {
  return drain(s, err);
}

void hs_fs_syncs_free(hs_fs_syncs *s) {
  if (s == NULL) return;
  (void)drain(s, NULL);
  if (s->ring_broken) {
    ring_destroy(s->r);
  } else {
    ring_give(s->r);
  }
  hs_free(s->items);
  hs_free(s);
}

/* file.c — local-file, in-memory and custom (a backend's reader, e.g. S3's
 * ranged GETs) sources; buffered local-file and custom sinks. A custom
 * source has no mapping: its views copy into the caller's scratch. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "store_internal.h"

struct hs_source {
  atomic_int refs;     /* sources are shared by scan workers (index caches) */
  int fd;              /* -1 for memory sources */
  const uint8_t *base; /* mapped or borrowed bytes; NULL if unmapped */
  bool mapped;
  bool stamped; /* file sources: stamp taken at open */
  hs_fs_stamp stamp;
  uint64_t size;
  char *name;
  const hs_source_ops *ops; /* custom sources: reads go to ops->read(impl) */
  void *impl;
};

hs_status hs_source_open_file(const char *path, hs_source **out, hs_error *err) {
  *out = NULL;
  int fd = -1;
  struct stat st;
  hs_status rc = hs_fs_open_read(path, &fd, &st, err); /* never blocks (a FIFO) */
  if (rc != HS_OK) return rc;
  hs_source *s = hs_calloc(1, sizeof *s);
  char *name = hs_strdup(path);
  if (s == NULL || name == NULL) {
    hs_free(s);
    hs_free(name);
    close(fd);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
  }
  s->refs = 1;
  s->fd = fd;
  s->size = (uint64_t)st.st_size;
  s->name = name;
  s->stamped = hs_fs_stamp_of_fd(fd, &s->stamp);
  if (s->size > 0) {
    void *p = mmap(NULL, (size_t)s->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      s->base = p;
      s->mapped = true;
    }
  }
  *out = s;
  return HS_OK;
}

hs_status hs_source_open_memory(const uint8_t *buf, size_t len, const char *name, hs_source **out,
                                hs_error *err) {
  *out = NULL;
  hs_source *s = hs_calloc(1, sizeof *s);
  char *n = hs_strdup(name ? name : "<memory>");
  if (s == NULL || n == NULL) {
    hs_free(s);
    hs_free(n);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  s->refs = 1;
  s->fd = -1;
  s->base = buf;
  s->size = len;
  s->name = n;
  *out = s;
  return HS_OK;
}

hs_status hs_source_open_custom(const char *name, const hs_object_info *info,
                                const hs_source_ops *ops, void *impl, hs_source **out,
                                hs_error *err) {
  *out = NULL;
  if (ops == NULL || ops->read == NULL || info == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: custom source without a reader",
                        name ? name : "<custom>");
  }
  hs_source *s = hs_calloc(1, sizeof *s);
  char *n = hs_strdup(name ? name : "<custom>");
  if (s == NULL || n == NULL) {
    hs_free(s);
    hs_free(n);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", name ? name : "<custom>");
  }
  s->refs = 1;
  s->fd = -1;
  s->size = info->size;
  s->name = n;
  s->stamped = hs_store_is_remote(s->name) && hs_store_stamp_from_info(s->name, info, &s->stamp);
  s->ops = ops;
  s->impl = impl;
  *out = s;
  return HS_OK;
}

void hs_source_ref(hs_source *src) {
  atomic_fetch_add_explicit(&src->refs, 1, memory_order_relaxed);
}

void hs_source_unref(hs_source *src) {
  if (src == NULL || atomic_fetch_sub_explicit(&src->refs, 1, memory_order_acq_rel) > 1) return;
  if (src->mapped) munmap((void *)src->base, (size_t)src->size);
  if (src->fd >= 0) close(src->fd);
  if (src->ops != NULL && src->ops->close != NULL) src->ops->close(src->impl);
  hs_free(src->name);
  hs_free(src);
}

uint64_t hs_source_size(const hs_source *src) {
  return src->size;
}
const char *hs_source_name(const hs_source *src) {
  return src->name;
}

static hs_status check_range(hs_source *src, uint64_t offset, size_t len, hs_error *err) {
  if (offset > src->size || len > src->size - offset) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: read of %zu bytes at offset %llu is past the end (size %llu)",
                        src->name, len, (unsigned long long)offset, (unsigned long long)src->size);
  }
  return HS_OK;
}

static hs_status read_range(hs_source *src, uint64_t offset, size_t len, void *dst, bool mapped_ok,
                            hs_error *err) {
  hs_status st = check_range(src, offset, len, err);
  if (st != HS_OK) return st;
  if (len == 0) return HS_OK;
  if (src->ops != NULL) return src->ops->read(src->impl, offset, len, dst, err);
  if (src->base != NULL && (mapped_ok || src->fd < 0)) {
    memcpy(dst, src->base + offset, len);
    return HS_OK;
  }
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(src->fd, (uint8_t *)dst + done, len - done, (off_t)(offset + done));
    if (n < 0 && errno == EINTR) continue;
    /* hs_fs_open_read left O_NONBLOCK set; a file system that honours it
     * on a regular file gets a blocking descriptor now. */
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && hs_fs_set_blocking(src->fd)) continue;
    if (n <= 0) {
      return hs_error_set(err, HS_ERR_IO, "%s: read failed at offset %llu: %s", src->name,
                          (unsigned long long)(offset + done), n < 0 ? strerror(errno) : "EOF");
    }
    done += (size_t)n;
  }
  return HS_OK;
}

hs_status hs_source_read(hs_source *src, uint64_t offset, size_t len, void *dst, hs_error *err) {
  return read_range(src, offset, len, dst, true, err);
}

hs_status hs_source_read_unmapped(hs_source *src, uint64_t offset, size_t len, void *dst,
                                  hs_error *err) {
  return read_range(src, offset, len, dst, false, err);
}

bool hs_source_stamp(const hs_source *src, hs_fs_stamp *out) {
  if (src->stamped) *out = src->stamp;
  return src->stamped;
}

bool hs_source_is_file(const hs_source *src) {
  return src != NULL && src->fd >= 0;
}

bool hs_source_is_remote(const hs_source *src) {
  return src != NULL && src->ops != NULL && src->name != NULL && hs_store_is_remote(src->name);
}

void hs_source_prefetch(hs_source *src, const uint64_t *offsets, const size_t *lens, size_t n) {
  if (!hs_source_is_remote(src) || n == 0) return;
  hs_store_prefetch_item *items = hs_malloc(n * sizeof *items);
  if (items == NULL) return; /* best effort: the reads fetch for themselves */
  size_t w = 0;
  for (size_t i = 0; i < n; i++)
    if (lens[i] > 0 && offsets[i] < src->size)
      items[w++] = (hs_store_prefetch_item){src->name, offsets[i], lens[i], false, true};
  (void)hs_store_prefetch(items, w);
  hs_free(items);
}

/* Declared in src/parquet/page_read.h until io.h offers it: tell the source
 * that bytes [offset, offset + len) will not be needed soon. For a mapped
 * file the whole OS pages inside the range leave the process's resident
 * set (they are still in the page cache, and a later view maps them
 * again), so reading a large file does not keep it resident. Only a hint:
 * views already handed out stay valid. */
void hs_source_release(hs_source *src, uint64_t offset, size_t len) {
  if (src == NULL || !src->mapped || offset >= src->size) return;
  long page = sysconf(_SC_PAGESIZE); /* no lazy static: called from scan workers */
  if (page <= 0) return;
  uint64_t end = len > src->size - offset ? src->size : offset + len;
  uint64_t a = (offset + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page;
  uint64_t b = end / (uint64_t)page * (uint64_t)page;
  if (b > a) madvise((void *)(src->base + a), (size_t)(b - a), MADV_DONTNEED);
}

hs_status hs_source_view(hs_source *src, uint64_t offset, size_t len, hs_buf *scratch,
                         const uint8_t **out, hs_error *err) {
  hs_status st = check_range(src, offset, len, err);
  if (st != HS_OK) return st;
  if (src->base != NULL) {
    *out = src->base + offset;
    return HS_OK;
  }
  scratch->len = 0;
  if (!hs_buf_reserve(scratch, len)) {
    return hs_error_set(err, HS_ERR_NOMEM, "%s: cannot buffer %zu bytes", src->name, len);
  }
  st = hs_source_read(src, offset, len, scratch->data, err);
  if (st != HS_OK) return st;
  scratch->len = len;
  *out = scratch->data;
  return HS_OK;
}

/* ------------------------------------------------------------------ sink */

#define SINK_BUFFER_BYTES (1u << 20)

struct hs_sink {
  int fd; /* -1 for custom sinks */
  char *path;
  uint64_t offset;
  hs_buf pending;
  const hs_sink_ops *ops; /* custom sinks: chunks of >= SINK_BUFFER_BYTES to ops->write */
  void *impl;
};

hs_status hs_sink_open_file(const char *path, hs_sink **out, hs_error *err) {
  *out = NULL;
  if (strncmp(path, "s3://", 5) == 0) /* store.h's hs_store_sink_open is for those */
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: not a local path (a store location)", path);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return hs_error_set(err, HS_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
  }
  hs_sink *s = hs_calloc(1, sizeof *s);
  char *p = hs_strdup(path);
  if (s == NULL || p == NULL) {
    hs_free(s);
    hs_free(p);
    close(fd);
    unlink(path);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
  }
  s->fd = fd;
  s->path = p;
  hs_buf_init(&s->pending);
  *out = s;
  return HS_OK;
}

hs_status hs_sink_open_custom(const char *name, const hs_sink_ops *ops, void *impl, hs_sink **out,
                              hs_error *err) {
  *out = NULL;
  const char *shown = name ? name : "<custom>";
  if (ops == NULL || ops->write == NULL || ops->close == NULL || ops->abort == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: custom sink without its operations", shown);
  }
  hs_sink *s = hs_calloc(1, sizeof *s);
  char *p = hs_strdup(shown);
  if (s == NULL || p == NULL) {
    hs_free(s);
    hs_free(p);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", shown);
  }
  s->fd = -1;
  s->path = p;
  s->ops = ops;
  s->impl = impl;
  hs_buf_init(&s->pending);
  *out = s;
  return HS_OK;
}

static hs_status write_all(hs_sink *s, const uint8_t *data, size_t len, hs_error *err) {
  if (s->ops != NULL) return len == 0 ? HS_OK : s->ops->write(s->impl, data, len, err);
  while (len > 0) {
    ssize_t n = write(s->fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return hs_error_set(err, HS_ERR_IO, "%s: write failed: %s", s->path, strerror(errno));
    data += n;
    len -= (size_t)n;
  }
  return HS_OK;
}

/* Custom sinks: every write but the last is at least SINK_BUFFER_BYTES
 * (an S3 multipart part has a minimum size), so small writes gather in
 * `pending` until it is that large; a large write with nothing pending
 * goes straight through. */
static hs_status custom_write(hs_sink *sink, const void *data, size_t len, hs_error *err) {
  if (sink->pending.len == 0 && len >= SINK_BUFFER_BYTES) return write_all(sink, data, len, err);
  if (!hs_buf_append(&sink->pending, data, len)) {
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", sink->path);
  }
  if (sink->pending.len < SINK_BUFFER_BYTES) return HS_OK;
  hs_status st = write_all(sink, sink->pending.data, sink->pending.len, err);
  sink->pending.len = 0;
  return st;
}

hs_status hs_sink_write(hs_sink *sink, const void *data, size_t len, hs_error *err) {
  sink->offset += len;
  if (sink->ops != NULL) return custom_write(sink, data, len, err);
  if (sink->pending.len + len < SINK_BUFFER_BYTES) {
    if (!hs_buf_append(&sink->pending, data, len)) {
      return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", sink->path);
    }
    return HS_OK;
  }
  hs_status st = write_all(sink, sink->pending.data, sink->pending.len, err);
  sink->pending.len = 0;
  if (st != HS_OK) return st;
  return write_all(sink, data, len, err);
}

uint64_t hs_sink_offset(const hs_sink *sink) {
  return sink->offset;
}

static void sink_free(hs_sink *sink) {
  hs_buf_free(&sink->pending);
  hs_free(sink->path);
  hs_free(sink);
}

/* The last bytes, then ops->close; a failed last write aborts instead
 * (exactly one of close and abort is called). */
static hs_status custom_close(hs_sink *sink, hs_error *err) {
  hs_status st = write_all(sink, sink->pending.data, sink->pending.len, err);
  if (st == HS_OK) {
    st = sink->ops->close(sink->impl, err);
  } else {
    sink->ops->abort(sink->impl);
  }
  sink_free(sink);
  return st;
}

hs_status hs_sink_close(hs_sink *sink, hs_error *err) {
  if (sink->ops != NULL) return custom_close(sink, err);
  hs_status st = write_all(sink, sink->pending.data, sink->pending.len, err);
  if (st == HS_OK && fsync(sink->fd) != 0) {
    st = hs_error_set(err, HS_ERR_IO, "%s: fsync failed: %s", sink->path, strerror(errno));
  }
  if (close(sink->fd) != 0 && st == HS_OK) {
    st = hs_error_set(err, HS_ERR_IO, "%s: close failed: %s", sink->path, strerror(errno));
  }
  if (st != HS_OK) unlink(sink->path);
  sink_free(sink);
  return st;
}

hs_status hs_sink_close_unsynced(hs_sink *sink, int *fd_out, hs_error *err) {
  *fd_out = -1;
  if (sink->ops != NULL) { /* no descriptor to hand over: nothing becomes visible */
    hs_status st = hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: an unsynced close needs a local file",
                                sink->path);
    sink->ops->abort(sink->impl);
    sink_free(sink);
    return st;
  }
  hs_status st = write_all(sink, sink->pending.data, sink->pending.len, err);
  if (st == HS_OK) {
    *fd_out = sink->fd;
  } else {
    close(sink->fd);
    unlink(sink->path);
  }
  sink_free(sink);
  return st;
}

void hs_sink_abort(hs_sink *sink) {
  if (sink == NULL) return;
  if (sink->ops != NULL) {
    sink->ops->abort(sink->impl);
  } else {
    close(sink->fd);
    unlink(sink->path);
  }
  sink_free(sink);
}

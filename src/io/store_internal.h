/*
 * store_internal.h — what store.c dispatches to: one table of functions per
 * backend (local.c, s3.c), given a location already resolved to its
 * backend, bucket, key and options. Only io/ includes this header.
 *
 * Ownership: a hs_store_loc and the hs_store_config it points at are owned
 * by store.c and live for the call; backends borrow them.
 */
#ifndef HS_IO_STORE_INTERNAL_H
#define HS_IO_STORE_INTERNAL_H

#include "io.h"
#include "store.h"

/* Options resolved for one location: registered prefix options over the
 * environment over ~/.aws files. Strings are NUL-terminated, empty when
 * unset. */
typedef struct hs_store_config {
  char access_key[128], secret_key[128], session_token[2048];
  char region[64];
  char endpoint[512]; /* "http://127.0.0.1:9000"; empty: AWS's for the region */
  char profile[128];
  bool allow_http;
  bool virtual_hosted; /* bucket.host/key instead of host/bucket/key */
  long request_timeout_ms, connect_timeout_ms;
  int max_retries;
} hs_store_config;

typedef struct hs_store_loc {
  hs_store_kind kind;
  const char *uri;            /* as given */
  const char *path;           /* local: the file-system path (file:// stripped) */
  char bucket[64];            /* S3: bucket name (validated: 3-63 chars, [a-z0-9.-]) */
  const char *key;            /* S3: key, no leading '/' ("" for the bucket root) */
  const hs_store_config *cfg; /* S3 only */
} hs_store_loc;

typedef struct hs_store_backend {
  hs_status (*get)(const hs_store_loc *loc, size_t max_bytes, hs_buf *out, hs_object_info *info,
                   hs_error *err);
  hs_status (*get_range)(const hs_store_loc *loc, uint64_t offset, size_t len, void *dst,
                         hs_error *err);
  /* locs[i] pairs with ranges[i] */
  hs_status (*get_ranges)(const hs_store_loc *locs, const hs_store_range *ranges, size_t n,
                          hs_error *err);
  hs_status (*head)(const hs_store_loc *loc, hs_object_info *info, hs_error *err);
  /* Optional: a HEAD answer that may come from a cache of objects written
   * once (S3: s3_cache.c), for the stamps of immutable files. */
  hs_status (*head_cached)(const hs_store_loc *loc, hs_object_info *info, hs_error *err);
  hs_status (*put)(const hs_store_loc *loc, const void *data, size_t len, hs_error *err);
  hs_status (*put_if_absent)(const hs_store_loc *loc, const void *data, size_t len, bool *won,
                             hs_error *err);
  hs_status (*put_if_match)(const hs_store_loc *loc, const void *data, size_t len, const char *etag,
                            bool *won, hs_error *err);
  hs_status (*put_many)(const hs_store_loc *locs, const hs_store_put_item *items, size_t n,
                        hs_error *err);
  hs_status (*del)(const hs_store_loc *loc, hs_error *err);
  hs_status (*mkdirs)(const hs_store_loc *loc, hs_error *err);
  hs_status (*list)(const hs_store_loc *dir, bool recursive, hs_store_entry **out, size_t *n_out,
                    hs_error *err);
  /* Optional (else store.c lists the folder and filters): the objects
   * directly in loc's folder whose names start with its last component. */
  hs_status (*list_prefix)(const hs_store_loc *loc, hs_store_entry **out, size_t *n_out,
                           hs_error *err);
  /* Optional (else one list_prefix after another): list_prefix of locs[i]
   * into outs[i], n_outs[i], together, and the whole GETs gets[k] (at
   * glocs[k]) and the prefetch of pf[j] (at plocs[j], at most pf_max bytes)
   * in the same wave. */
  hs_status (*list_prefixes)(const hs_store_loc *locs, size_t n, hs_store_entry **outs,
                             size_t *n_outs, const hs_store_loc *glocs, hs_store_get_item *gets,
                             size_t n_gets, const hs_store_loc *plocs,
                             const hs_store_prefetch_item *pf, size_t n_pf, uint64_t pf_max,
                             hs_error *err);
  /* Optional (else nothing): hs_store_prefetch_max of items[i] at locs[i]. */
  size_t (*prefetch)(const hs_store_loc *locs, const hs_store_prefetch_item *items, size_t n,
                     uint64_t max_bytes);
  /* Optional (else 0): the GETs that prefetch would make, none made. */
  size_t (*prefetch_missing)(const hs_store_loc *locs, const hs_store_prefetch_item *items,
                             size_t n);
  /* Optional (else an empty pack / nothing loaded): hs_store_pack and
   * hs_store_unpack. */
  hs_status (*pack)(const hs_store_loc *locs, const hs_store_prefetch_item *items, size_t n,
                    size_t max_bytes, hs_buf *out, size_t *n_segments, hs_error *err);
  hs_status (*unpack)(const uint8_t *data, size_t len, const char *what, size_t *n_loaded,
                      hs_error *err);
  /* Sources and sinks (io.h) on this backend. S3: a source HEADs once
   * (size, etag), reads by ranged GET, and copies views into the caller's
   * scratch; a sink buffers, switches to multipart upload past one part
   * (8 MiB), completes on close and aborts the upload on abort. */
  hs_status (*source_open)(const hs_store_loc *loc, hs_source **out, hs_error *err);
  hs_status (*sink_open)(const hs_store_loc *loc, hs_sink **out, hs_error *err);
} hs_store_backend;

/* Sources and sinks over a backend's own reader and writer: file.c wraps
 * them with the reference count, bounds checks, names and (for views)
 * copies into the caller's scratch, so a backend implements only these.
 * `impl` is owned by the source/sink from a successful open on (close is
 * called once, when the last reference goes / the sink closes or aborts);
 * on a failed open the caller still owns it. */
typedef struct hs_source_ops {
  hs_status (*read)(void *impl, uint64_t offset, size_t len, void *dst, hs_error *err);
  void (*close)(void *impl);
} hs_source_ops;
hs_status hs_source_open_custom(const char *name, const hs_object_info *info,
                                const hs_source_ops *ops, void *impl, hs_source **out,
                                hs_error *err);

typedef struct hs_sink_ops {
  /* Called with buffered bytes in order (chunks of at least 1 MiB except the last). */
  hs_status (*write)(void *impl, const void *data, size_t len, hs_error *err);
  /* Make everything written durable and visible (S3: complete the upload). */
  hs_status (*close)(void *impl, hs_error *err);
  void (*abort)(void *impl); /* discard: nothing becomes visible */
} hs_sink_ops;
hs_status hs_sink_open_custom(const char *name, const hs_sink_ops *ops, void *impl, hs_sink **out,
                              hs_error *err);

/* Resolve `uri` into `loc` (pointing into `uri`, which must outlive it)
 * and, for S3, its options into `cfg` (loc->cfg = cfg); local locations
 * leave `cfg` untouched. HS_ERR_INVALID_ARG naming the URI for a bad
 * bucket, a key with a "." or ".." segment, a file:// URI with a host.
 * What every call of store.c starts with; exposed for tests. */
hs_status hs_store_resolve(const char *uri, hs_store_loc *loc, hs_store_config *cfg, hs_error *err);

/* The options of S3 location `uri` (store_config.c): registered options
 * over the environment over ~/.aws/credentials and ~/.aws/config, then the
 * defaults. */
hs_status hs_store_config_resolve(const char *uri, hs_store_config *cfg, hs_error *err);

extern const hs_store_backend hs_store_local_backend; /* local.c */
extern const hs_store_backend hs_store_s3_backend;    /* s3.c */

#endif /* HS_IO_STORE_INTERNAL_H */

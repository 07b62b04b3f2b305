/*
 * store.h — the object-store interface: every layer above io/ reads and
 * writes table files through these calls, whatever holds them.
 *
 * A location is a URI string. A plain path ("/data/t/metadata/v3.metadata.json")
 * or "file:///data/t/..." is the local backend (local.c: POSIX, reads
 * memory-mapped, the durability contract of fs.h). "s3://bucket/key" is the
 * S3 backend (s3.c: libcurl with SigV4, path-style or virtual-hosted
 * addressing, retries with jittered backoff, bodies checked against
 * Content-Length). Objects are blobs named by key; "folders" are key
 * prefixes ending in '/'. Callers build child locations with
 * hs_store_join and never parse URIs themselves.
 *
 * Configuration. S3 credentials, region and endpoint come the AWS way
 * (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION /
 * AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_PROFILE with
 * ~/.aws/credentials and ~/.aws/config), overridden per location prefix by
 * hs_store_configure (Python's storage_options={...}): the longest
 * registered prefix of a URI wins, then the environment.
 *
 * Errors: a missing object is HS_ERR_NOT_FOUND; every other failure is
 * HS_ERR_IO (or HS_ERR_CORRUPT for a truncated body or a range past the end)
 * with a message naming the URI, the operation and the cause ("s3://b/k: GET
 * failed: 403 SignatureDoesNotMatch: ..."). Every call is safe from any
 * number of threads at once.
 *
 * Ownership: strings and buffers passed in are borrowed for the call;
 * hs_buf contents are appended; arrays returned (*_out) are owned by the
 * caller and freed with the matching *_free.
 */
#ifndef HS_IO_STORE_H
#define HS_IO_STORE_H

#include "../common/common.h"
#include "io.h"

typedef enum hs_store_kind { HS_STORE_LOCAL = 0, HS_STORE_S3 = 1 } hs_store_kind;

/* The backend a location belongs to (anything not "s3://" is local). */
hs_store_kind hs_store_kind_of(const char *uri);
/* True for locations that are not on the local file system. */
bool hs_store_is_remote(const char *uri);

/* What HEAD (and LIST) tell about an object. `etag` identifies the bytes:
 * S3's ETag without quotes; local: "<dev>-<ino>-<size>-<mtime_ns>". Two
 * infos with equal size and etag are the same bytes (the key of every
 * cache of something derived from an object). */
typedef struct hs_object_info {
  uint64_t size;
  int64_t mtime_ms; /* last modified, ms since the epoch; 0 when unknown */
  char etag[96];
} hs_object_info;

/* ------------------------------------------------------------ options */

typedef struct hs_store_option {
  const char *key; /* see below; unknown keys are HS_ERR_INVALID naming them */
  const char *value;
} hs_store_option;

/* Register options for every location starting with `uri_prefix` (e.g.
 * "s3://bucket" or "s3://bucket/tables/t1"), replacing what that exact
 * prefix had. Keys (pyiceberg's and LanceDB's spellings both accepted):
 * aws_access_key_id | s3.access-key-id, aws_secret_access_key |
 * s3.secret-access-key, aws_session_token | s3.session-token, region |
 * aws_region | s3.region, endpoint | aws_endpoint | s3.endpoint,
 * allow_http, virtual_hosted_style_request | s3.path-style-access (inverse),
 * profile, request_timeout_ms, connect_timeout_ms, max_retries. */
hs_status hs_store_configure(const char *uri_prefix, const hs_store_option *opts, size_t n,
                             hs_error *err);
/* Whether `key` is one of the keys above. */
bool hs_store_option_known(const char *key);

/* ------------------------------------------------------------- paths */

/* `base` + "/" + `rel` with exactly one separator, as an owned string
 * (hs_free); NULL when out of memory. */
char *hs_store_join(const char *base, const char *rel);

/* HS_OK when `uri` is a well-formed location whose options resolve (S3:
 * the bucket name, the key's segments; file:// URIs name no host); else
 * the error every call on it would give. */
hs_status hs_store_validate(const char *uri, hs_error *err);

/* ------------------------------------------------------------- reads */

/* The whole object, appended to `out`. More than `max_bytes` is
 * HS_ERR_CORRUPT naming the object. `info` may be NULL. */
hs_status hs_store_get(const char *uri, size_t max_bytes, hs_buf *out, hs_object_info *info,
                       hs_error *err);

/* Exactly `len` bytes at `offset` into `dst`; an object shorter than
 * offset + len is HS_ERR_CORRUPT. */
hs_status hs_store_get_range(const char *uri, uint64_t offset, size_t len, void *dst,
                             hs_error *err);

/* Several ranges (of one or many objects) fetched concurrently (S3: the
 * curl multi interface over reused connections; nearby ranges of one
 * object may be coalesced). All or nothing: the first error is returned. */
typedef struct hs_store_range {
  const char *uri;
  uint64_t offset;
  size_t len;
  void *dst;
} hs_store_range;
hs_status hs_store_get_ranges(const hs_store_range *ranges, size_t n, hs_error *err);

/* HS_ERR_NOT_FOUND when missing. */
hs_status hs_store_head(const char *uri, hs_object_info *info, hs_error *err);
/* *exists false only when the object is certainly missing; other
 * failures are errors (never "missing" by accident). */
hs_status hs_store_exists(const char *uri, bool *exists, hs_error *err);

/* ------------------------------------------------------------ writes */

/* Create or replace the object, durable on return (local: fdatasync +
 * directory fsync; S3: the PUT's 200). Parents are created as needed. */
hs_status hs_store_put(const char *uri, const void *data, size_t len, hs_error *err);

/* Create the object only if nothing is there: *won false (and HS_OK) when
 * it already exists. The atomic publish of commits (local: link(2) of a
 * synced temporary; S3: PUT with If-None-Match: *). */
hs_status hs_store_put_if_absent(const char *uri, const void *data, size_t len, bool *won,
                                 hs_error *err);

/* Replace the object only if its etag is still `etag`: *won false when it
 * changed or is gone (S3: If-Match; local: compared under a lock file). */
hs_status hs_store_put_if_match(const char *uri, const void *data, size_t len, const char *etag,
                                bool *won, hs_error *err);

/* Several new objects made durable together (local: written unsynced,
 * then synced in parallel with one fsync per directory; S3: concurrent
 * PUTs). All or nothing from the caller's view: on error the ones written
 * are deleted (best effort) and the first error is returned. */
typedef struct hs_store_put_item {
  const char *uri;
  const void *data;
  size_t len;
} hs_store_put_item;
hs_status hs_store_put_many(const hs_store_put_item *items, size_t n, hs_error *err);

/* Remove the object; a missing object is HS_OK. */
hs_status hs_store_delete(const char *uri, hs_error *err);

/* Make `uri` usable as a folder (local: mkdir -p; S3: nothing). */
hs_status hs_store_mkdirs(const char *uri, hs_error *err);

/* --------------------------------------------------- sources, sinks */

/* A source (io.h) over the object: local files are memory-mapped
 * (hs_source_open_file); S3 objects are HEADed once and read by ranged
 * GETs. Either carries a stamp (hs_source_stamp) for the caches of things
 * derived from its bytes. *out is owned (hs_source_unref). */
hs_status hs_store_source_open(const char *uri, hs_source **out, hs_error *err);

/* A sink (io.h) creating or replacing the object, visible and durable once
 * hs_sink_close returns (local: fsync; S3: a single PUT, or a multipart
 * upload completed at close); hs_sink_abort leaves nothing behind. Local
 * parents are created as needed. *out is owned (close or abort it). */
hs_status hs_store_sink_open(const char *uri, hs_sink **out, hs_error *err);

/* The cache stamp (fs.h) of the object `uri` described by `info`: for a
 * local file its hs_fs_stamp_of (the info is not used); for a remote
 * object fields derived from a hash of the URI, the size, the mtime and
 * a hash of the ETag, so a replaced object gets another stamp. False
 * when there is none (a local path that cannot be stat'ed, a remote
 * object without an ETag). */
bool hs_store_stamp_from_info(const char *uri, const hs_object_info *info, hs_fs_stamp *out);
/* The same from a HEAD of the object (local: stat); false on any error. */
bool hs_store_stamp_of(const char *uri, hs_fs_stamp *out);

/* ------------------------------------------------------------- lists */

typedef struct hs_store_entry {
  char *name; /* relative to the listed folder, no trailing '/' */
  bool is_dir;
  hs_object_info info; /* size, mtime and etag where the listing gives them */
} hs_store_entry;

/* The entries directly under folder `dir_uri` (recursive = false), or every
 * object below it with names relative to it ("data/a.parquet",
 * recursive = true), sorted by name. A missing folder is an empty list. */
hs_status hs_store_list(const char *dir_uri, bool recursive, hs_store_entry **out, size_t *n_out,
                        hs_error *err);
/* The objects directly in the folder of `uri_prefix` whose names start
 * with its last component ("s3://b/t/metadata/v12" lists v12.metadata.json,
 * v120.metadata.json, ...), named relative to that folder, sorted: one
 * LIST request on S3 where probing each name would be a HEAD each. */
hs_status hs_store_list_prefix(const char *uri_prefix, hs_store_entry **out, size_t *n_out,
                               hs_error *err);
void hs_store_entries_free(hs_store_entry *entries, size_t n);
/* hs_store_list_prefix for n prefixes at once: outs[i], n_outs[i] for
 * uri_prefixes[i]; on S3 one parallel wave of LISTs (a prefix whose
 * listing runs past one page is continued alone). On failure nothing is
 * returned (every outs[i] NULL). */
hs_status hs_store_list_prefixes(const char *const *uri_prefixes, size_t n, hs_store_entry **outs,
                                 size_t *n_outs, hs_error *err);
/* Whole objects to GET in the same wave as such LISTs (a version probe
 * and the index stream of the version it expects): each answer's bytes
 * appended to `out` (at most max_bytes), `info` set, `status` HS_OK, HS_ERR_NOT_FOUND
 * or the failure (never the call's error: a LIST failing is). */
typedef struct hs_store_get_item {
  const char *uri;
  size_t max_bytes;
  hs_buf *out;
  hs_status status;
  hs_object_info info; /* the answer's size, mtime and ETag (when HS_OK) */
} hs_store_get_item;
hs_status hs_store_list_prefixes_get(const char *const *uri_prefixes, size_t n,
                                     hs_store_entry **outs, size_t *n_outs, hs_store_get_item *gets,
                                     size_t n_gets, hs_error *err);
/* The same with ranges to prefetch (hs_store_prefetch_max of pf, at most
 * pf_max bytes) in that wave too: a freshness LIST and the first reads of
 * the version it expects (a query's index sections) in one round trip.
 * The prefetch is best effort as ever; only a LIST failing fails. */
struct hs_store_prefetch_item;
hs_status hs_store_list_prefixes_wave(const char *const *uri_prefixes, size_t n,
                                      hs_store_entry **outs, size_t *n_outs,
                                      hs_store_get_item *gets, size_t n_gets,
                                      const struct hs_store_prefetch_item *pf, size_t n_pf,
                                      uint64_t pf_max, hs_error *err);

/* ----------------------------------------------------------- prefetch */

/* Bytes a caller will read soon: [offset, offset + len) of `uri`, or with
 * `tail` its last len bytes (where Parquet and Puffin footers are: what a
 * source open reads first). */
typedef struct hs_store_prefetch_item {
  const char *uri;
  uint64_t offset;
  size_t len;
  bool tail;
  /* Fetch just these bytes, not widened to the cache's blocks (kept as a
   * fragment that serves reads inside it): for scattered small ranges read
   * once each, a search's re-ranked rows or a filtered scan's pages. Exact
   * ranges of an object closer than 4 KiB share a GET (up to 1 MiB). */
  bool exact;
} hs_store_prefetch_item;
/* Bring what the items name and the process's S3 object cache does not
 * hold yet into it, with one parallel wave of ranged GETs (64 at a time;
 * ranges widened to the cache's 64 KiB blocks unless `exact`), so that the reads that
 * follow, made one by one by readers that know nothing of each other,
 * cost no round trip. An object not seen before is fetched without a HEAD
 * (the answer's Content-Range and ETag describe it). Local files (memory
 * mapped) and names the cache never keeps are skipped. Best effort: a
 * failure is not an error (the read that needs the bytes then fails by
 * name). Returns the number of GETs made. */
size_t hs_store_prefetch(const hs_store_prefetch_item *items, size_t n);
/* At most this many bytes fetched by one call (a caller that asks for more
 * gets the first objects' ranges, by name and offset; the rest are read as
 * before). */
#define HS_STORE_PREFETCH_MAX ((uint64_t)64 << 20)
/* The same with a lower bound on the bytes fetched (what the cache holds
 * already does not count). */
size_t hs_store_prefetch_max(const hs_store_prefetch_item *items, size_t n, uint64_t max_bytes);

/* How many GETs hs_store_prefetch(items, n) would make (0: the process's
 * object cache holds all of it, or none is on S3); nothing is fetched. */
size_t hs_store_prefetch_missing(const hs_store_prefetch_item *items, size_t n);

/* ---------------------------------------------------- packs of ranges */

/* The ranges the items name (as hs_store_prefetch reads them: widened to
 * the object cache's blocks), with the HEAD answer (size, mtime, ETag)
 * each object was read under, appended to `out` as one pack (format in
 * s3_pack.c): fetched in one parallel wave where the cache lacks them, at
 * most max_bytes of ranges (first items first). Objects that are missing,
 * local, or never cached are left out; *n_segments says how many ranges
 * went in; an item of length 0 with `tail` set packs every block of its
 * object the cache holds. The index stream (src/table/stream.c) is one. */
hs_status hs_store_pack(const hs_store_prefetch_item *items, size_t n, size_t max_bytes,
                        hs_buf *out, size_t *n_segments, hs_error *err);
/* Load a pack into the process's object cache as if its ranges had just
 * been fetched: a later read of them costs no request. A segment whose
 * object the cache holds under another HEAD is skipped. A damaged pack
 * (checksum, bounds, version; `what` names it) is an error and loads
 * nothing. */
hs_status hs_store_unpack(const uint8_t *data, size_t len, const char *what, size_t *n_loaded,
                          hs_error *err);
/* Only the checks of hs_store_unpack (fuzz_index_stream). */
hs_status hs_store_pack_check(const uint8_t *data, size_t len, const char *what, size_t *n_segments,
                              hs_error *err);

#endif /* HS_IO_STORE_H */

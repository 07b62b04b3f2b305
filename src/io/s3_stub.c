/*
 * s3_stub.c — TEMPORARY stand-in for the S3 backend until src/io/s3.c
 * lands (written on another branch): every call is HS_ERR_UNSUPPORTED
 * "<uri>: S3 support is not built yet". DELETE THIS FILE when s3.c is
 * merged (both define hs_store_s3_backend; the link fails until then).
 */
#include "store_internal.h"

static hs_status unsupported(const hs_store_loc *loc, hs_error *err) {
  return hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: S3 support is not built yet",
                      loc != NULL ? loc->uri : "s3://");
}

static hs_status stub_get(const hs_store_loc *loc, size_t max_bytes, hs_buf *out,
                          hs_object_info *info, hs_error *err) {
  (void)max_bytes, (void)out, (void)info;
  return unsupported(loc, err);
}

static hs_status stub_get_range(const hs_store_loc *loc, uint64_t offset, size_t len, void *dst,
                                hs_error *err) {
  (void)offset, (void)len, (void)dst;
  return unsupported(loc, err);
}

static hs_status stub_get_ranges(const hs_store_loc *locs, const hs_store_range *ranges, size_t n,
                                 hs_error *err) {
  (void)ranges;
  return unsupported(n > 0 ? &locs[0] : NULL, err);
}

static hs_status stub_head(const hs_store_loc *loc, hs_object_info *info, hs_error *err) {
  (void)info;
  return unsupported(loc, err);
}

static hs_status stub_put(const hs_store_loc *loc, const void *data, size_t len, hs_error *err) {
  (void)data, (void)len;
  return unsupported(loc, err);
}

static hs_status stub_put_if_absent(const hs_store_loc *loc, const void *data, size_t len,
                                    bool *won, hs_error *err) {
  (void)data, (void)len;
  *won = false;
  return unsupported(loc, err);
}

static hs_status stub_put_if_match(const hs_store_loc *loc, const void *data, size_t len,
                                   const char *etag, bool *won, hs_error *err) {
  (void)data, (void)len, (void)etag;
  *won = false;
  return unsupported(loc, err);
}

static hs_status stub_put_many(const hs_store_loc *locs, const hs_store_put_item *items, size_t n,
                               hs_error *err) {
  (void)items;
  return unsupported(n > 0 ? &locs[0] : NULL, err);
}

static hs_status stub_del(const hs_store_loc *loc, hs_error *err) {
  return unsupported(loc, err);
}

static hs_status stub_mkdirs(const hs_store_loc *loc, hs_error *err) {
  return unsupported(loc, err);
}

static hs_status stub_list(const hs_store_loc *dir, bool recursive, hs_store_entry **out,
                           size_t *n_out, hs_error *err) {
  (void)recursive;
  *out = NULL;
  *n_out = 0;
  return unsupported(dir, err);
}

static hs_status stub_source_open(const hs_store_loc *loc, hs_source **out, hs_error *err) {
  *out = NULL;
  return unsupported(loc, err);
}

static hs_status stub_sink_open(const hs_store_loc *loc, hs_sink **out, hs_error *err) {
  *out = NULL;
  return unsupported(loc, err);
}

const hs_store_backend hs_store_s3_backend = {
    .get = stub_get,
    .get_range = stub_get_range,
    .get_ranges = stub_get_ranges,
    .head = stub_head,
    .put = stub_put,
    .put_if_absent = stub_put_if_absent,
    .put_if_match = stub_put_if_match,
    .put_many = stub_put_many,
    .del = stub_del,
    .mkdirs = stub_mkdirs,
    .list = stub_list,
    .source_open = stub_source_open,
    .sink_open = stub_sink_open,
};

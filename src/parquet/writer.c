/*
 * writer.c — the Parquet file writer (public API in hyperstream.h).
 *
 * Batches of any size are sliced at row-group boundaries and fed leaf by
 * leaf to the column-chunk writers (column_write.c). A full row group is
 * emitted column after column: dictionary page, data pages; its
 * ColumnIndex/OffsetIndex are serialised into two writer-level buffers that
 * are written, all ColumnIndexes first, after the last row group and just
 * before the footer (as parquet-mr does); their offsets are patched into the
 * footer's column chunks at close.
 *
 * Columns are independent until they are emitted, so when a call carries
 * enough rows their leaves are encoded (levels, dictionary, pages,
 * compression) on the worker pool (common/parallel.h, HS_THREADS), each
 * leaf by one worker, and then written in column order. A leaf is fed the
 * same slices whatever the thread count, so the file is byte-identical to
 * a serial writer's; only the wide-row-group case keeps its serial,
 * drain-as-you-go path to bound memory.
 *
 * Failure is sticky: after any error the partial file is removed and every
 * later call fails.
 */
#include <string.h>

#include "../arrow/ipc.h"
#include "../common/parallel.h"
#include "../io/store.h"
#include "parquet.h"
#include "writer_internal.h"

struct hs_parquet_writer {
  char *path;
  hs_sink *sink;
  bool remote; /* the sink is a store object (hs_store_sink_open) */
  struct ArrowSchema schema;
  hs_wschema ws;
  hs_wopts wo;
  hs_wcol *cols;
  int64_t rg_rows_max, rg_rows, num_rows;
  hs_arena arena; /* footer structures */
  hs_pq_row_group *rgs;
  uint32_t n_rgs, rgs_cap;
  hs_buf ci_all, oi_all, scratch;
  hs_pq_key_value *kv;
  uint32_t n_kv;
  const char *created_by;
  bool failed, closed;
  uint64_t closed_size; /* bytes of the closed file (footer in `scratch`) */
};

#define FIXED_LIST_KEY "hyperstream:fixed_size_list"
/* Rows fed per call in direct mode, between drains of finished pages. */
#define DIRECT_SLICE_ROWS 65536
#define DIRECT_SLICE_BYTES (4 << 20)
/* Columns are encoded on worker threads when a call feeds at least this
 * many rows x columns... */
#define PARALLEL_MIN_VALUES 65536
/* ...and when the Arrow bytes of the call's rows stay under this bound
 * (a serial writer drains the first leaf's pages, or in direct mode every
 * leaf's, as it goes); wider data (vectors) is written column by column
 * with bounded memory. */
#define PARALLEL_DIRECT_BYTES_MAX ((int64_t)256 << 20)

void hs_parquet_write_options_init(hs_parquet_write_options *opts) {
  memset(opts, 0, sizeof(*opts));
  opts->compression = HS_CODEC_ZSTD;
  opts->row_group_rows_max = 1048576;
  opts->page_bytes_max = 1 << 20;
  opts->dictionary_bytes_max = 1 << 20;
  opts->use_dictionary = 1;
  opts->data_page_version = 1;
  opts->write_statistics = 1;
  opts->write_page_index = 1;
  opts->write_page_crc = 1; /* README.md "Page checksums" */
  opts->created_by = NULL;
}

static hs_status fail(hs_parquet_writer *w, hs_status st, hs_error *err) {
  w->failed = true;
  hs_sink_abort(w->sink);
  w->sink = NULL;
  if (err && err->status != HS_OK && w->path) hs_error_prefix(err, "%s: ", w->path);
  return st;
}

static hs_status nomem(hs_error *err) {
  return hs_error_set(err, HS_ERR_NOMEM, "parquet writer: out of memory");
}

static hs_status sink_write(hs_parquet_writer *w, const void *p, size_t n, hs_error *err) {
  return n == 0 ? HS_OK : hs_sink_write(w->sink, p, n, err);
}

void hs_parquet_writer_free(hs_parquet_writer *w) {
  if (w == NULL) return;
  if (w->sink) hs_sink_abort(w->sink);
  if (w->cols)
    for (uint32_t i = 0; i < w->ws.n_leaves; i++) hs_wcol_free(&w->cols[i]);
  hs_free(w->cols);
  hs_wschema_free(&w->ws);
  if (w->schema.release) w->schema.release(&w->schema);
  hs_arena_reset(&w->arena);
  hs_free(w->rgs);
  hs_buf_free(&w->ci_all);
  hs_buf_free(&w->oi_all);
  hs_buf_free(&w->scratch);
  hs_free(w->path);
  hs_free(w);
}

static hs_status check_options(const hs_parquet_write_options *o, hs_error *err) {
  switch (o->compression) {
  case HS_CODEC_UNCOMPRESSED:
  case HS_CODEC_SNAPPY:
  case HS_CODEC_GZIP:
  case HS_CODEC_BROTLI:
  case HS_CODEC_ZSTD:
  case HS_CODEC_LZ4_RAW: break;
  default:
    return hs_error_set(err, HS_ERR_INVALID_ARG, "write options: unknown codec %d",
                        (int)o->compression);
  }
  if (o->row_group_rows_max <= 0 || o->page_bytes_max <= 0 || o->dictionary_bytes_max < 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "write options: row_group_rows_max and page_bytes_max must be > 0, "
                        "dictionary_bytes_max >= 0");
  if (o->data_page_version != 1 && o->data_page_version != 2)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "write options: data_page_version %d",
                        o->data_page_version);
  if (o->compress_min_saving_pct < 0 || o->compress_min_saving_pct > 100)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "write options: compress_min_saving_pct %d is not in 0..100",
                        o->compress_min_saving_pct);
  if ((o->n_encodings > 0 && (o->encoding_columns == NULL || o->encodings == NULL)) ||
      (o->n_kv > 0 && (o->kv_keys == NULL || o->kv_values == NULL)))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "write options: NULL arrays with a count");
  return HS_OK;
}

/* base64 of the IPC Schema message of the writer's Arrow schema, as pyarrow
 * stores it under "ARROW:schema" so that Arrow readers restore the exact
 * types (large offsets, fixed-size lists, time zones, seconds, date64,
 * durations). NULL (nothing stored) if the schema cannot be encoded. */
static const char *arrow_schema_b64(hs_parquet_writer *w) {
  hs_buf ipc, b64;
  hs_buf_init(&ipc);
  hs_buf_init(&b64);
  const char *out = NULL;
  if (hs_arrow_ipc_schema_encode(&w->schema, &ipc, NULL) == HS_OK &&
      hs_base64_encode(ipc.data, ipc.len, &b64))
    out = hs_arena_strndup(&w->arena, (const char *)b64.data, b64.len);
  hs_buf_free(&ipc);
  hs_buf_free(&b64);
  return out;
}

static hs_status copy_kv(hs_parquet_writer *w, const hs_parquet_write_options *o, hs_error *err) {
  const char *arrow_schema = arrow_schema_b64(w);
  size_t n = o->n_kv + (w->ws.fixed_list_json ? 1 : 0) + (arrow_schema ? 1 : 0);
  if (n == 0) return HS_OK;
  w->kv = hs_arena_alloc(&w->arena, n * sizeof(hs_pq_key_value));
  if (!w->kv) return nomem(err);
  for (size_t i = 0; i < o->n_kv; i++) {
    if (o->kv_keys[i] == NULL)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "write options: key-value key %zu is NULL", i);
    if (w->ws.fixed_list_json && strcmp(o->kv_keys[i], FIXED_LIST_KEY) == 0) continue;
    if (arrow_schema && strcmp(o->kv_keys[i], HS_ARROW_IPC_SCHEMA_KEY) == 0) continue;
    hs_pq_key_value *kv = &w->kv[w->n_kv++];
    kv->key = hs_arena_strndup(&w->arena, o->kv_keys[i], strlen(o->kv_keys[i]));
    if (!kv->key) return nomem(err);
    if (o->kv_values[i]) {
      size_t len = strlen(o->kv_values[i]);
      kv->has_value = true;
      kv->value.data = hs_arena_memdup(&w->arena, o->kv_values[i], len + 1);
      kv->value.len = (uint32_t)len;
      if (!kv->value.data) return nomem(err);
    }
  }
  if (w->ws.fixed_list_json) {
    hs_pq_key_value *kv = &w->kv[w->n_kv++];
    kv->key = FIXED_LIST_KEY;
    kv->has_value = true;
    kv->value.data = (const uint8_t *)w->ws.fixed_list_json;
    kv->value.len = (uint32_t)strlen(w->ws.fixed_list_json);
  }
  if (arrow_schema) {
    hs_pq_key_value *kv = &w->kv[w->n_kv++];
    kv->key = HS_ARROW_IPC_SCHEMA_KEY;
    kv->has_value = true;
    kv->value.data = (const uint8_t *)arrow_schema;
    kv->value.len = (uint32_t)strlen(arrow_schema);
  }
  return HS_OK;
}

hs_status hs_parquet_writer_open(const char *path, const struct ArrowSchema *schema,
                                 const hs_parquet_write_options *opts, hs_parquet_writer **out,
                                 hs_error *err) {
  if (out) *out = NULL;
  if (path == NULL || schema == NULL || out == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "parquet writer: NULL path, schema or out");
  hs_parquet_write_options defaults;
  if (opts == NULL) {
    hs_parquet_write_options_init(&defaults);
    opts = &defaults;
  }
  hs_status st = check_options(opts, err);
  if (st != HS_OK) return st;
  hs_parquet_writer *w = hs_calloc(1, sizeof(*w));
  if (!w) return nomem(err);
  hs_arena_init(&w->arena);
  w->path = hs_strdup(path);
  if (!w->path) {
    st = nomem(err);
    goto fail;
  }
  if ((st = hs_arrow_schema_copy(schema, &w->schema, err)) != HS_OK) goto fail;
  if ((st = hs_wschema_build(&w->schema, opts, &w->ws, err)) != HS_OK) goto fail;
  w->wo.codec = (int32_t)opts->compression;
  w->wo.level = opts->compression_level;
  w->wo.page_bytes_max = opts->page_bytes_max;
  w->wo.list_page_bytes_max =
      opts->list_page_bytes_max > 0 ? opts->list_page_bytes_max : opts->page_bytes_max;
  w->wo.dictionary_bytes_max = opts->dictionary_bytes_max;
  w->wo.page_version = opts->data_page_version;
  w->wo.compress_min_saving_pct = opts->compress_min_saving_pct;
  w->wo.delta_fallback = opts->delta_fallback != 0;
  w->wo.statistics = opts->write_statistics != 0;
  w->wo.page_index = opts->write_page_index != 0;
  w->wo.crc = opts->write_page_crc != 0;
  w->rg_rows_max = opts->row_group_rows_max;
  if ((st = copy_kv(w, opts, err)) != HS_OK) goto fail;
  const char *cb = opts->created_by ? opts->created_by : "hyperstreamdb version " HS_VERSION_STRING;
  w->created_by = hs_arena_strndup(&w->arena, cb, strlen(cb));
  if (!w->created_by) {
    st = nomem(err);
    goto fail;
  }
  if (w->ws.n_leaves > 0) {
    w->cols = hs_calloc(w->ws.n_leaves, sizeof(hs_wcol));
    if (!w->cols) {
      st = nomem(err);
      goto fail;
    }
  }
  for (uint32_t i = 0; i < w->ws.n_leaves; i++)
    if ((st = hs_wcol_init(&w->cols[i], &w->ws.leaves[i], &w->wo, err)) != HS_OK) goto fail;
  w->remote = hs_store_is_remote(path);
  st = w->remote ? hs_store_sink_open(path, &w->sink, err) : hs_sink_open_file(path, &w->sink, err);
  if (st != HS_OK) goto fail;
  if ((st = sink_write(w, "PAR1", 4, err)) != HS_OK) goto fail;
  *out = w;
  return HS_OK;
fail:
  if (err && err->status != HS_OK) hs_error_prefix(err, "%s: ", path);
  hs_parquet_writer_free(w);
  return st;
}

/* ------------------------------------------------------- page indexes */

static int boundary_order(const hs_wcol *c) {
  bool asc = true, desc = true;
  const hs_wpage *prev = NULL;
  static const uint8_t none[1] = {0};
  const uint8_t *b = c->pi_bytes.data ? c->pi_bytes.data : none; /* all values may be empty */
  hs_wsort s = c->leaf->sort;
  for (uint32_t i = 0; i < c->n_pages; i++) {
    const hs_wpage *p = &c->page_list[i];
    if (p->null_page) continue;
    if (prev) {
      int cmin = hs_wstat_cmp(s, b + p->min_off, p->min_len, b + prev->min_off, prev->min_len);
      int cmax = hs_wstat_cmp(s, b + p->max_off, p->max_len, b + prev->max_off, prev->max_len);
      if (cmin < 0 || cmax < 0) asc = false;
      if (cmin > 0 || cmax > 0) desc = false;
    }
    prev = p;
  }
  return asc    ? HS_PQ_BOUNDARY_ASCENDING
         : desc ? HS_PQ_BOUNDARY_DESCENDING
                : HS_PQ_BOUNDARY_UNORDERED;
}

static hs_status write_page_indexes(hs_parquet_writer *w, const hs_wcol *c, hs_pq_column_chunk *cc,
                                    int64_t data_start, hs_error *err) {
  uint32_t n = c->n_pages;
  hs_arena tmp;
  hs_arena_init(&tmp);
  hs_status st = HS_OK;
  bool ci_ok = true;
  for (uint32_t i = 0; i < n; i++)
    if (!c->page_list[i].null_page && !c->page_list[i].has_minmax) ci_ok = false;
  if (ci_ok) {
    hs_pq_column_index ci;
    memset(&ci, 0, sizeof(ci));
    ci.n_pages = n;
    ci.null_pages = hs_arena_alloc(&tmp, n * sizeof(bool) + 1);
    ci.min_values = hs_arena_alloc(&tmp, n * sizeof(hs_pq_bytes) + 1);
    ci.max_values = hs_arena_alloc(&tmp, n * sizeof(hs_pq_bytes) + 1);
    ci.null_counts = hs_arena_alloc(&tmp, n * sizeof(int64_t) + 1);
    if (!ci.null_pages || !ci.min_values || !ci.max_values || !ci.null_counts) {
      st = nomem(err);
      goto done;
    }
    ci.has_null_counts = true;
    ci.boundary_order = boundary_order(c);
    static const uint8_t empty[1] = {0};
    const uint8_t *pib = c->pi_bytes.data ? c->pi_bytes.data : empty;
    for (uint32_t i = 0; i < n; i++) {
      const hs_wpage *p = &c->page_list[i];
      ci.null_pages[i] = p->null_page;
      ci.null_counts[i] = p->null_count;
      if (p->null_page) {
        ci.min_values[i] = (hs_pq_bytes){empty, 0};
        ci.max_values[i] = (hs_pq_bytes){empty, 0};
      } else {
        ci.min_values[i] = (hs_pq_bytes){pib + p->min_off, p->min_len};
        ci.max_values[i] = (hs_pq_bytes){pib + p->max_off, p->max_len};
      }
    }
    size_t at = w->ci_all.len;
    if ((st = hs_pq_column_index_write(&ci, &w->ci_all, err)) != HS_OK) goto done;
    cc->has_column_index = true;
    cc->column_index_offset = (int64_t)at; /* patched at close */
    cc->column_index_length = (int32_t)(w->ci_all.len - at);
  }
  hs_pq_offset_index oi;
  memset(&oi, 0, sizeof(oi));
  oi.n_pages = n;
  oi.page_locations = hs_arena_alloc(&tmp, n * sizeof(hs_pq_page_location) + 1);
  if (!oi.page_locations) {
    st = nomem(err);
    goto done;
  }
  for (uint32_t i = 0; i < n; i++) {
    oi.page_locations[i].offset = data_start + c->page_list[i].offset;
    oi.page_locations[i].compressed_page_size = c->page_list[i].size;
    oi.page_locations[i].first_row_index = c->page_list[i].first_row;
  }
  size_t at = w->oi_all.len;
  if ((st = hs_pq_offset_index_write(&oi, &w->oi_all, err)) != HS_OK) goto done;
  cc->has_offset_index = true;
  cc->offset_index_offset = (int64_t)at;
  cc->offset_index_length = (int32_t)(w->oi_all.len - at);
done:
  hs_arena_reset(&tmp);
  return st;
}

/* ---------------------------------------------------------- row groups */

/* Copy of a buffer's bytes (possibly none) into the arena; never NULL
 * unless out of memory. */
static const uint8_t *arena_bytes(hs_arena *a, const hs_buf *b) {
  uint8_t *p = hs_arena_alloc(a, b->len + 1);
  if (p && b->len) memcpy(p, b->data, b->len);
  return p;
}

static hs_status fill_chunk_meta(hs_parquet_writer *w, const hs_wcol *c, hs_pq_column_chunk *cc,
                                 int64_t chunk_start, hs_error *err) {
  const hs_wleaf *l = c->leaf;
  hs_pq_column_meta *m = &cc->meta_data;
  cc->has_meta_data = true;
  cc->file_offset = 0; /* deprecated; parquet-cpp writes 0 */
  m->type = l->type;
  int32_t encs[6];
  uint32_t ne = 0;
  if (c->used_dict) encs[ne++] = HS_PQ_ENC_PLAIN; /* the dictionary page */
  if (c->used_plain && !c->used_dict) encs[ne++] = HS_PQ_ENC_PLAIN;
  if (l->max_def > 0 || l->max_rep > 0) encs[ne++] = HS_PQ_ENC_RLE;
  if (c->used_dict) encs[ne++] = HS_PQ_ENC_RLE_DICTIONARY;
  if (c->used_other) encs[ne++] = c->other_encoding;
  m->encodings = hs_arena_memdup(&w->arena, encs, ne * sizeof(int32_t) + 1);
  m->n_encodings = ne;
  m->path_in_schema = l->path; /* lives in w->ws.arena, as long as the writer */
  m->n_path = l->n_path;
  m->codec = w->wo.codec;
  m->num_values = c->chunk_levels;
  m->total_uncompressed_size = c->uncompressed_bytes;
  m->total_compressed_size = c->compressed_bytes;
  m->data_page_offset = chunk_start + (int64_t)c->dict_page.len;
  if (c->dict_page.len > 0) {
    m->has_dictionary_page_offset = true;
    m->dictionary_page_offset = chunk_start;
  }
  if (!m->encodings) return nomem(err);
  if (w->wo.statistics) {
    hs_pq_statistics *s = &m->statistics;
    m->has_statistics = true;
    s->has_null_count = true;
    s->null_count = c->chunk_nulls;
    if (c->chunk_stat.has) {
      s->has_min_value = s->has_max_value = true;
      s->min_value.data = arena_bytes(&w->arena, &c->chunk_stat.min);
      s->min_value.len = (uint32_t)c->chunk_stat.min.len;
      s->max_value.data = arena_bytes(&w->arena, &c->chunk_stat.max);
      s->max_value.len = (uint32_t)c->chunk_stat.max.len;
      if (!s->min_value.data || !s->max_value.data) return nomem(err);
      s->has_is_min_value_exact = s->has_is_max_value_exact = true;
      s->is_min_value_exact = s->is_max_value_exact = true;
    }
  }
  return HS_OK;
}

/* Hand a column's finished pages to the sink once no dictionary page can
 * still be due before them. Only the column being emitted (direct mode) or
 * the first column of the row group may do so: nothing else can come
 * between its pages in the file. */
static hs_status drain_pages(hs_parquet_writer *w, hs_wcol *c, hs_error *err) {
  if (c->dict_on || c->dict_used || c->pages.len == 0) return HS_OK;
  hs_status st = sink_write(w, c->pages.data, c->pages.len, err);
  if (st != HS_OK) return st;
  c->pages_drained += (int64_t)c->pages.len;
  c->pages.len = 0;
  return HS_OK;
}

/* Feed rows [first, first + n) of the top-level array `col` to `c`; with
 * `slice`, in slices of about DIRECT_SLICE_BYTES of values (by the running
 * estimate), draining finished pages after each when `drain`, so that a
 * wide column (vectors) is never held whole in memory. Page boundaries
 * depend on the slicing, not on `drain`: a worker thread feeds with the
 * same slices but without draining, and the file comes out byte for byte
 * as from a serial writer. */
static hs_status feed_column(hs_parquet_writer *w, hs_wcol *c, const struct ArrowArray *col,
                             int64_t first, int64_t n_rows, bool slice, bool drain, hs_error *err) {
  hs_status st;
  if (!slice) return hs_wcol_write(c, col, first, n_rows, err);
  for (int64_t at = 0, n; at < n_rows; at += n) {
    n = c->est_row_bytes > 0 ? DIRECT_SLICE_BYTES / c->est_row_bytes : 1;
    if (n < 1) n = 1;
    if (n > DIRECT_SLICE_ROWS) n = DIRECT_SLICE_ROWS;
    if (n > n_rows - at) n = n_rows - at;
    if ((st = hs_wcol_write(c, col, first + at, n, err)) != HS_OK) return st;
    if (drain && (st = drain_pages(w, c, err)) != HS_OK) return st;
  }
  return HS_OK;
}

/* ------------------------------------------------- parallel columns */

/* One call's work for every leaf: feed rows [first, first + n) of `batch`
 * (when not NULL; leaf 0 or every leaf sliced as the serial writer would)
 * and/or finish the chunk. Each leaf's writer is touched by one worker
 * only; errors stay in the leaf's own slot. */
typedef struct par_job {
  hs_parquet_writer *w;
  const struct ArrowArray *batch;
  int64_t first, n;
  bool slice_all, finish;
  hs_status *st;
  hs_error *errs;
} par_job;

static void par_column(void *ctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  par_job *j = ctx;
  for (size_t i = begin; i < end; i++) {
    hs_wcol *c = &j->w->cols[i];
    hs_status st = HS_OK;
    if (j->batch) {
      const struct ArrowArray *col = j->batch->children[c->leaf->field];
      st = feed_column(j->w, c, col, j->first, j->n, j->slice_all || i == 0, false, &j->errs[i]);
    }
    if (st == HS_OK && j->finish) st = hs_wcol_finish(c, &j->errs[i]);
    j->st[i] = st;
  }
}

/* Worker threads for `values` (rows x leaves) of work; 1 means serial. */
static uint32_t par_threads(const hs_parquet_writer *w, int64_t values) {
  uint32_t nl = w->ws.n_leaves;
  if (nl < 2 || values < PARALLEL_MIN_VALUES) return 1;
  uint32_t t = hs_parallel_cores();
  return t < nl ? t : nl;
}

/* Run `j` over every leaf on `threads` workers; the first failing leaf's
 * error (in leaf order, so the same one as a serial writer's) is returned. */
static hs_status par_run(hs_parquet_writer *w, par_job *j, uint32_t threads, hs_error *err) {
  uint32_t nl = w->ws.n_leaves;
  j->w = w;
  j->st = hs_calloc(nl, sizeof(hs_status));
  j->errs = hs_calloc(nl, sizeof(hs_error));
  if (!j->st || !j->errs) {
    hs_free(j->st);
    hs_free(j->errs);
    return nomem(err);
  }
  hs_parallel_for(nl, 1, threads, par_column, j);
  hs_status st = HS_OK;
  for (uint32_t i = 0; i < nl && st == HS_OK; i++)
    if (j->st[i] != HS_OK) {
      st = j->st[i];
      if (err) *err = j->errs[i];
    }
  hs_free(j->st);
  hs_free(j->errs);
  return st;
}

/* Arrow bytes of rows [first, first + n) of leaf i, or -1 when they are not
 * cheap to know (variable-size lists). */
static int64_t leaf_bytes(const hs_parquet_writer *w, uint32_t i, const struct ArrowArray *batch,
                          int64_t first, int64_t n) {
  const hs_wleaf *l = &w->ws.leaves[i];
  const struct ArrowArray *a = batch->children[l->field];
  int64_t per = l->conv == HS_WCONV_BOOL ? 1 : l->src_width > 0 ? l->src_width : 0;
  if (l->list_kind == HS_WLIST_FIXED && per > 0) return per * (int64_t)l->list_size * n;
  if (l->list_kind != HS_WLIST_NONE) return -1;
  if (l->conv == HS_WCONV_BINARY && a->n_buffers >= 2 && a->buffers[1]) {
    const int32_t *o = (const int32_t *)a->buffers[1] + a->offset;
    return (int64_t)o[first + n] - o[first] + 4 * n;
  }
  if (l->conv == HS_WCONV_LARGE_BINARY && a->n_buffers >= 2 && a->buffers[1]) {
    const int64_t *o = (const int64_t *)a->buffers[1] + a->offset;
    return o[first + n] - o[first] + 4 * n;
  }
  return per > 0 ? per * n : -1;
}

/* The same summed over every leaf; -1 when any is unknown. */
static int64_t batch_bytes(const hs_parquet_writer *w, const struct ArrowArray *batch,
                           int64_t first, int64_t n) {
  int64_t total = 0;
  for (uint32_t i = 0; i < w->ws.n_leaves; i++) {
    int64_t b = leaf_bytes(w, i, batch, first, n);
    if (b < 0) return -1;
    total += b;
  }
  return total;
}

/* Emit the current row group. With `batch` (direct mode: the row group is
 * empty and rows [pos, pos + rg_rows_max) of `batch` fill it), each column
 * is fed and emitted in turn, and its pages go to the sink as soon as no
 * dictionary page can still be due before them, so a wide vector column is
 * never held whole in memory. */
static hs_status flush_row_group(hs_parquet_writer *w, const struct ArrowArray *batch, int64_t pos,
                                 hs_error *err) {
  hs_status st;
  if (w->n_rgs == w->rgs_cap) {
    uint32_t cap = w->rgs_cap ? w->rgs_cap * 2 : 8;
    hs_pq_row_group *r = hs_realloc(w->rgs, cap * sizeof(hs_pq_row_group));
    if (!r) return nomem(err);
    w->rgs = r;
    w->rgs_cap = cap;
  }
  if (batch) w->rg_rows = w->rg_rows_max;
  uint32_t nl = w->ws.n_leaves;
  hs_pq_row_group *rg = &w->rgs[w->n_rgs];
  memset(rg, 0, sizeof(*rg));
  rg->columns = hs_arena_alloc(&w->arena, nl * sizeof(hs_pq_column_chunk) + 1);
  if (!rg->columns) return nomem(err);
  rg->n_columns = nl;
  rg->num_rows = w->rg_rows;
  rg->has_file_offset = true;
  /* The first column may have drained pages while the row group filled. */
  rg->file_offset = (int64_t)hs_sink_offset(w->sink) - (nl > 0 ? w->cols[0].pages_drained : 0);
  /* Encode every column on workers first when that is cheap in memory;
   * then emit them in order exactly as below. */
  bool done = false;
  uint32_t threads = par_threads(w, w->rg_rows * (int64_t)nl);
  if (threads > 1) {
    int64_t bytes = batch ? batch_bytes(w, batch, batch->offset + pos, w->rg_rows) : 0;
    if (bytes >= 0 && bytes <= PARALLEL_DIRECT_BYTES_MAX) {
      par_job j = {.batch = batch,
                   .first = batch ? batch->offset + pos : 0,
                   .n = w->rg_rows,
                   .slice_all = true,
                   .finish = true};
      if ((st = par_run(w, &j, threads, err)) != HS_OK) return st;
      done = true;
    }
  }
  for (uint32_t i = 0; i < nl; i++) {
    hs_wcol *c = &w->cols[i];
    int64_t start = (int64_t)hs_sink_offset(w->sink) - c->pages_drained;
    if (batch && !done) {
      const struct ArrowArray *col = batch->children[c->leaf->field];
      if ((st = feed_column(w, c, col, batch->offset + pos, w->rg_rows, true, true, err)) != HS_OK)
        return st;
    }
    if (!done && (st = hs_wcol_finish(c, err)) != HS_OK) return st;
    if (c->pages_drained > 0 && c->dict_page.len > 0)
      return hs_error_set(err, HS_ERR_INTERNAL, "column '%s': dictionary after drained pages",
                          c->leaf->dotted);
    if ((st = sink_write(w, c->dict_page.data, c->dict_page.len, err)) != HS_OK ||
        (st = sink_write(w, c->pages.data, c->pages.len, err)) != HS_OK)
      return st;
    hs_pq_column_chunk *cc = &rg->columns[i];
    if ((st = fill_chunk_meta(w, c, cc, start, err)) != HS_OK) return st;
    if (w->wo.page_index &&
        (st = write_page_indexes(w, c, cc, cc->meta_data.data_page_offset, err)) != HS_OK)
      return st;
    rg->total_byte_size += c->uncompressed_bytes;
    rg->total_compressed_size += c->compressed_bytes;
    hs_wcol_reset(c);
  }
  rg->has_total_compressed_size = true;
  if (w->n_rgs <= INT16_MAX) {
    rg->has_ordinal = true;
    rg->ordinal = (int16_t)w->n_rgs;
  }
  w->n_rgs++;
  w->num_rows += w->rg_rows;
  w->rg_rows = 0;
  return HS_OK;
}

hs_status hs_parquet_writer_write(hs_parquet_writer *w, const struct ArrowArray *batch,
                                  hs_error *err) {
  if (w == NULL || batch == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "parquet writer: NULL writer or batch");
  if (w->failed || w->closed)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: writer is %s", w->path,
                        w->closed ? "closed" : "failed");
  hs_status st = hs_arrow_array_validate(&w->schema, batch, err);
  if (st != HS_OK) return fail(w, st, err);
  if (batch->n_children != w->ws.n_fields)
    return fail(w,
                hs_error_set(err, HS_ERR_SCHEMA, "batch has %lld columns, schema has %d",
                             (long long)batch->n_children, w->ws.n_fields),
                err);
  int64_t pos = 0, len = batch->length;
  while (pos < len) {
    if (w->rg_rows == 0 && len - pos >= w->rg_rows_max) {
      if ((st = flush_row_group(w, batch, pos, err)) != HS_OK) return fail(w, st, err);
      pos += w->rg_rows_max;
      continue;
    }
    int64_t take = w->rg_rows_max - w->rg_rows;
    if (take > len - pos) take = len - pos;
    uint32_t threads = par_threads(w, take * (int64_t)w->ws.n_leaves);
    if (threads > 1) {
      /* Leaf 0 would otherwise drain as it goes: keep that for wide data. */
      int64_t bytes = leaf_bytes(w, 0, batch, batch->offset + pos, take);
      if (bytes < 0 || bytes > PARALLEL_DIRECT_BYTES_MAX) threads = 1;
    }
    if (threads > 1) {
      /* Leaf 0 is sliced as below but drained after the workers are done. */
      par_job j = {.batch = batch, .first = batch->offset + pos, .n = take};
      if ((st = par_run(w, &j, threads, err)) != HS_OK ||
          (st = drain_pages(w, &w->cols[0], err)) != HS_OK)
        return fail(w, st, err);
    } else {
      for (uint32_t i = 0; i < w->ws.n_leaves; i++) {
        const hs_wleaf *l = &w->ws.leaves[i];
        const struct ArrowArray *col = batch->children[l->field];
        if ((st = feed_column(w, &w->cols[i], col, batch->offset + pos, take, i == 0, i == 0,
                              err)) != HS_OK)
          return fail(w, st, err);
      }
    }
    w->rg_rows += take;
    pos += take;
    if (w->rg_rows >= w->rg_rows_max && (st = flush_row_group(w, NULL, 0, err)) != HS_OK)
      return fail(w, st, err);
  }
  return HS_OK;
}

/* Close; with `fd_out` the file is left unsynced and its descriptor
 * handed over (hs_parquet_writer_close_unsynced). */
static hs_status close_impl(hs_parquet_writer *w, int *fd_out, hs_error *err) {
  if (w == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "parquet writer: NULL writer");
  if (w->failed || w->closed)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: writer is %s", w->path,
                        w->closed ? "closed" : "failed");
  hs_status st;
  if (w->rg_rows > 0 && (st = flush_row_group(w, NULL, 0, err)) != HS_OK) return fail(w, st, err);
  int64_t ci_base = (int64_t)hs_sink_offset(w->sink);
  if ((st = sink_write(w, w->ci_all.data, w->ci_all.len, err)) != HS_OK) return fail(w, st, err);
  int64_t oi_base = (int64_t)hs_sink_offset(w->sink);
  if ((st = sink_write(w, w->oi_all.data, w->oi_all.len, err)) != HS_OK) return fail(w, st, err);
  for (uint32_t r = 0; r < w->n_rgs; r++)
    for (uint32_t i = 0; i < w->rgs[r].n_columns; i++) {
      hs_pq_column_chunk *cc = &w->rgs[r].columns[i];
      if (cc->has_column_index) cc->column_index_offset += ci_base;
      if (cc->has_offset_index) cc->offset_index_offset += oi_base;
    }
  hs_pq_file_metadata md;
  memset(&md, 0, sizeof(md));
  md.version = 2;
  md.schema = w->ws.elems;
  md.n_schema = w->ws.n_elems;
  md.num_rows = w->num_rows;
  md.row_groups = w->rgs;
  md.n_row_groups = w->n_rgs;
  md.key_value_metadata = w->kv;
  md.n_key_value_metadata = w->n_kv;
  md.created_by = w->created_by;
  md.n_column_orders = w->ws.n_leaves;
  w->scratch.len = 0;
  if ((st = hs_pq_file_metadata_write(&md, &w->scratch, err)) != HS_OK) return fail(w, st, err);
  if (w->scratch.len > UINT32_MAX)
    return fail(w, hs_error_set(err, HS_ERR_UNSUPPORTED, "footer over 4 GiB"), err);
  uint8_t tail[8];
  hs_store_u32le(tail, (uint32_t)w->scratch.len);
  memcpy(tail + 4, "PAR1", 4);
  if ((st = sink_write(w, w->scratch.data, w->scratch.len, err)) != HS_OK ||
      (st = sink_write(w, tail, 8, err)) != HS_OK)
    return fail(w, st, err);
  hs_sink *s = w->sink;
  w->sink = NULL;
  w->closed_size = hs_sink_offset(s);
  /* A remote object has no descriptor: it is durable once closed. */
  st = fd_out && !w->remote ? hs_sink_close_unsynced(s, fd_out, err) : hs_sink_close(s, err);
  if (st != HS_OK) {
    w->failed = true;
    if (err && err->status != HS_OK) hs_error_prefix(err, "%s: ", w->path);
    return st;
  }
  w->closed = true;
  return HS_OK;
}

hs_status hs_parquet_writer_close(hs_parquet_writer *w, hs_error *err) {
  return close_impl(w, NULL, err);
}

hs_status hs_parquet_writer_close_unsynced(hs_parquet_writer *w, int *fd_out, hs_error *err) {
  *fd_out = -1;
  return close_impl(w, fd_out, err);
}

hs_status hs_parquet_writer_footer(const hs_parquet_writer *w, hs_arena *arena,
                                   hs_pq_file_metadata *out, hs_error *err) {
  if (w == NULL || !w->closed)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: the footer of a writer not closed",
                        w != NULL ? w->path : "parquet writer");
  /* the bytes the file ends with (the scratch is not reused after close) */
  hs_status st = hs_pq_file_metadata_parse(w->scratch.data, w->scratch.len, arena, out, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "%s: the footer written: ", w->path);
    return st;
  }
  out->file_size = w->closed_size;
  out->footer_len = (uint32_t)w->scratch.len;
  out->footer_crc32c = hs_crc32c_extend(0, w->scratch.data, w->scratch.len);
  return HS_OK;
}

hs_status hs_parquet_write_stream(const char *path, struct ArrowArrayStream *stream,
                                  const hs_parquet_write_options *opts, hs_error *err) {
  if (stream == NULL || stream->release == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "parquet write: NULL or released stream");
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof(schema));
  hs_parquet_writer *w = NULL;
  hs_status st = HS_OK;
  int rc = stream->get_schema(stream, &schema);
  if (rc != 0) {
    const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
    st = hs_error_set(err, HS_ERR_IO, "%s: stream get_schema failed (%d): %s", path, rc,
                      m ? m : "no message");
    goto done;
  }
  if ((st = hs_parquet_writer_open(path, &schema, opts, &w, err)) != HS_OK) goto done;
  for (;;) {
    struct ArrowArray batch;
    memset(&batch, 0, sizeof(batch));
    rc = stream->get_next(stream, &batch);
    if (rc != 0) {
      const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
      st = hs_error_set(err, HS_ERR_IO, "%s: stream get_next failed (%d): %s", path, rc,
                        m ? m : "no message");
      goto done;
    }
    if (batch.release == NULL) break;
    st = hs_parquet_writer_write(w, &batch, err);
    batch.release(&batch);
    if (st != HS_OK) goto done;
  }
  st = hs_parquet_writer_close(w, err);
done:
  hs_parquet_writer_free(w);
  if (schema.release) schema.release(&schema);
  stream->release(stream);
  return st;
}

/*
 * vector_search.c — hs_table_vector_search(_batch): exact top-k over a
 * table snapshot, alone or inside a filter.
 *
 * Pipeline:
 *  1. check the column (fixed_size_list<float32> or list<float32>), the
 *     metric, k and the queries;
 *  2. score: a filtered scan (scan.c) projected to the vector column alone
 *     streams the matching rows; hs_scan_batch_origin tells each batch's
 *     data file (ordinal in plan order) and row positions. Every query
 *     keeps a bounded max-heap of its k best hits (vector_search_topk.c):
 *     memory is k hits per query plus one batch, whatever the table's size.
 *     Several queries are scored in parallel (one query per worker); one
 *     query over a large batch is split by rows;
 *  3. fetch: the winners' rows are grouped by data file and the projected
 *     columns are read for exactly those rows (the Parquet reader's row
 *     selection decodes only the pages holding them), gathered into global
 *     order with hs_table_take, and "distance" (and "query_index") appended.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../arrow/arrow.h"
#include "../common/parallel.h"
#include "../index/vector/distance.h"
#include "scan.h"
#include "vector_search.h"

/* Floats per scoring batch (rows = this / dim): bounds scan memory. */
#define VS_BATCH_FLOATS ((int64_t)1 << 21)
/* One query over fewer rows than this is scored on the calling thread. */
#define VS_PARALLEL_ROWS 8192

void hs_vector_search_options_init(hs_vector_search_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->snapshot_id = -1;
  opts->k = 10;
}

/* ----------------------------------------------------------- the column */

typedef struct vs_column {
  const char *name;
  bool fixed;    /* fixed_size_list; else list / large_list */
  int64_t width; /* fixed: the list size */
  bool large;    /* large_list: int64 offsets */
  bool f64;      /* float64 values (pandas' lists), scored as float32 */
} vs_column;

/* Find `name` in `schema` and check it holds float32 vectors. */
static hs_status column_check(const struct ArrowSchema *schema, const char *name, vs_column *out,
                              hs_error *err) {
  const struct ArrowSchema *f = NULL;
  for (int64_t i = 0; i < schema->n_children && f == NULL; i++)
    if (schema->children[i]->name != NULL && strcmp(schema->children[i]->name, name) == 0)
      f = schema->children[i];
  if (f == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vector search: no column '%s' in the table",
                        name);
  }
  hs_arrow_type at;
  hs_error local = {0};
  bool ok = hs_arrow_type_parse(f->format, &at, &local) == HS_OK && f->n_children == 1 &&
            (at.id == HS_AT_FIXED_LIST || at.id == HS_AT_LIST || at.id == HS_AT_LARGE_LIST) &&
            (strcmp(f->children[0]->format, "f") == 0 || strcmp(f->children[0]->format, "g") == 0);
  if (!ok) {
    return hs_error_set(err, HS_ERR_SCHEMA,
                        "vector search: column '%s' has Arrow type '%s', not a float vector "
                        "(fixed_size_list or list of float32 or float64)",
                        name, f->format);
  }
  out->name = name;
  out->fixed = at.id == HS_AT_FIXED_LIST;
  out->width = out->fixed ? at.width : -1;
  out->large = at.id == HS_AT_LARGE_LIST;
  out->f64 = strcmp(f->children[0]->format, "g") == 0;
  return HS_OK;
}

/* ------------------------------------------------------------- scoring */

typedef struct vs_score {
  hs_metric metric;
  size_t dim, nq;
  const float *queries;
  hs_vs_topk *topk; /* nq heaps */
  /* The current batch's candidates: vector i at ptrs[i], row pos[i]. */
  const float **ptrs;
  int64_t *pos;
  size_t n, cap;
  bool contiguous; /* ptrs[i] == ptrs[0] + i * dim */
  float *conv;     /* float64 columns: the candidates converted, cap * dim floats */
  size_t conv_cap;
  uint32_t file;
  /* Scratch distances: one array of `cap` floats per worker. */
  float **dist;
  uint32_t threads;
  bool *oom; /* per worker */
  int64_t scored;
} vs_score;

static void distances(const vs_score *s, const float *q, size_t begin, size_t end, float *out) {
  if (s->contiguous) {
    hs_error e = {0};
    (void)hs_distance_f32_batch(s->metric, q, s->ptrs[0] + begin * s->dim, end - begin, s->dim,
                                out + begin, &e);
    return;
  }
  for (size_t i = begin; i < end; i++) {
    hs_error e = {0};
    (void)hs_distance_f32(s->metric, q, s->ptrs[i], s->dim, &out[i], &e);
  }
}

static bool push_all(const vs_score *s, hs_vs_topk *t, const float *d) {
  for (size_t i = 0; i < s->n; i++) {
    if (!isfinite(d[i])) continue; /* NaN/inf components, zero vectors under cosine */
    if (hs_vs_topk_full(t) && d[i] > t->h[0].distance) continue;
    hs_vs_hit h = {.distance = d[i], .file = s->file, .row = s->pos[i]};
    if (!hs_vs_topk_push(t, &h)) return false;
  }
  return true;
}

static void score_queries(void *ctx, size_t begin, size_t end, uint32_t worker) {
  vs_score *s = ctx;
  float *d = s->dist[worker];
  for (size_t q = begin; q < end; q++) {
    distances(s, s->queries + q * s->dim, 0, s->n, d);
    if (!push_all(s, &s->topk[q], d)) s->oom[worker] = true;
  }
}

static void score_rows(void *ctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  vs_score *s = ctx;
  distances(s, s->queries, begin, end, s->dist[0]);
}

static hs_status score_grow(vs_score *s, size_t n, hs_error *err) {
  if (n <= s->cap) return HS_OK;
  const float **np = hs_realloc(s->ptrs, n * sizeof *np);
  if (np != NULL) s->ptrs = np;
  int64_t *nr = np != NULL ? hs_realloc(s->pos, n * sizeof *nr) : NULL;
  if (nr != NULL) s->pos = nr;
  bool ok = np != NULL && nr != NULL;
  for (uint32_t w = 0; ok && w < (s->nq > 1 ? s->threads : 1); w++) {
    float *nd = hs_realloc(s->dist[w], n * sizeof *nd);
    if (nd == NULL)
      ok = false;
    else
      s->dist[w] = nd;
  }
  if (!ok) return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory (%zu rows)", n);
  s->cap = n;
  return HS_OK;
}

/* Room for n converted float64 vectors. */
static hs_status conv_grow(vs_score *s, size_t n, hs_error *err) {
  size_t need;
  if (!hs_mul_size(n, s->dim, &need) || !hs_mul_size(need, sizeof(float), &need))
    return hs_error_set(err, HS_ERR_NOMEM, "vector search: batch too large");
  if (need <= s->conv_cap) return HS_OK;
  float *nc = hs_realloc(s->conv, need);
  if (nc == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  s->conv = nc;
  s->conv_cap = need;
  return HS_OK;
}

/* The candidates of scan batch `b` (struct of one vector child) with
 * origin `o`: non-null vectors without null components. */
static hs_status batch_candidates(vs_score *s, const vs_column *col, const struct ArrowArray *b,
                                  const hs_scan_origin *o, hs_error *err) {
  s->n = 0;
  s->contiguous = col->fixed;
  if (b->n_children != 1 || b->children[0]->n_children != 1) {
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: column '%s' read with an unexpected shape",
                        o->path, col->name);
  }
  const struct ArrowArray *a = b->children[0], *v = a->children[0];
  if (v->n_buffers < 2 || (b->length > 0 && v->buffers[1] == NULL)) {
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: column '%s' has no values", o->path, col->name);
  }
  const float *vals = (const float *)v->buffers[1];
  const double *dvals = (const double *)v->buffers[1];
  const uint8_t *vvalid = v->null_count != 0 ? (const uint8_t *)v->buffers[0] : NULL;
  hs_status st = score_grow(s, (size_t)b->length, err);
  if (st == HS_OK && col->f64) st = conv_grow(s, (size_t)b->length, err);
  if (st != HS_OK) return st;
  for (int64_t r = 0; r < b->length; r++) {
    int64_t j = b->offset + r; /* index into the child `a` */
    int64_t pos = o->rows != NULL ? o->rows[r] : o->first + r;
    if (!hs_arrow_is_valid(a, j)) {
      s->contiguous = false;
      continue;
    }
    int64_t start, len;
    if (col->fixed) {
      start = (a->offset + j) * col->width;
      len = col->width;
    } else if (col->large) {
      const int64_t *off = (const int64_t *)a->buffers[1];
      start = off[a->offset + j];
      len = off[a->offset + j + 1] - start;
    } else {
      const int32_t *off = (const int32_t *)a->buffers[1];
      start = off[a->offset + j];
      len = off[a->offset + j + 1] - start;
    }
    if (len != (int64_t)s->dim) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "vector search: column '%s' has dimension %lld (row %lld of %s), the "
                          "query has dimension %zu",
                          col->name, (long long)len, (long long)pos, o->path, s->dim);
    }
    if (start < 0 || start + len > v->length) {
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: column '%s' row %lld: values out of range",
                          o->path, col->name, (long long)pos);
    }
    start += v->offset;
    if (vvalid != NULL) {
      bool any_null = false;
      for (int64_t e = start; e < start + len && !any_null; e++)
        any_null = !((vvalid[e >> 3] >> (e & 7)) & 1);
      if (any_null) {
        s->contiguous = false;
        continue;
      }
    }
    if (col->f64) {
      float *dst = s->conv + s->n * s->dim;
      for (int64_t e = 0; e < len; e++) dst[e] = (float)dvals[start + e];
      s->ptrs[s->n] = dst;
    } else {
      s->ptrs[s->n] = vals + start;
    }
    s->pos[s->n] = pos;
    if (s->n > 0 && s->ptrs[s->n] != s->ptrs[s->n - 1] + s->dim) s->contiguous = false;
    s->n++;
  }
  return HS_OK;
}

static hs_status score_batch(vs_score *s, hs_error *err) {
  if (s->n == 0) return HS_OK;
  s->scored += (int64_t)(s->n * s->nq);
  if (s->nq > 1) {
    hs_parallel_for(s->nq, 1, s->threads, score_queries, s);
  } else {
    if (s->n >= VS_PARALLEL_ROWS && s->threads > 1)
      hs_parallel_for(s->n, VS_PARALLEL_ROWS / 2, s->threads, score_rows, s);
    else
      distances(s, s->queries, 0, s->n, s->dist[0]);
    if (!push_all(s, &s->topk[0], s->dist[0])) s->oom[0] = true;
  }
  for (uint32_t w = 0; w < s->threads; w++)
    if (s->oom[w]) return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  return HS_OK;
}

/* Paths of the scan's files by ordinal (grown as batches arrive). */
typedef struct vs_files {
  char **paths;
  size_t n;
} vs_files;

/* Record the path of plan file `file` (once); *searched counts files. */
static hs_status files_set(vs_files *f, size_t file, const char *path, int64_t *searched,
                           hs_error *err) {
  if (file < f->n && f->paths[file] != NULL) return HS_OK;
  if (file >= f->n) {
    char **np = hs_realloc(f->paths, (file + 1) * sizeof *np);
    if (np == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
    for (size_t i = f->n; i <= file; i++) np[i] = NULL;
    f->paths = np;
    f->n = file + 1;
  }
  if ((f->paths[file] = hs_strdup(path)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  if (searched != NULL) (*searched)++;
  return HS_OK;
}

/* The exact pass reads only the files without a usable index. */
static bool keep_exact(void *ctx, size_t plan_index, const char *path, int64_t size) {
  (void)path;
  (void)size;
  const hs_vs_indexed *ix = ctx;
  return plan_index >= ix->n || ix->vx[plan_index] == NULL;
}

static void files_free(vs_files *f) {
  for (size_t i = 0; i < f->n; i++) hs_free(f->paths[i]);
  hs_free(f->paths);
}

/* Stream the scan, scoring each batch. */
static hs_status score_table(hs_table *table, const hs_vector_search_options *o,
                             const vs_column *col, vs_score *s, vs_files *files,
                             const hs_vs_indexed *ix, const hs_table_plan *plan,
                             hs_vector_search_stats *stats, hs_error *err) {
  hs_scan_options so;
  hs_scan_options_init(&so);
  so.snapshot_id = o->snapshot_id;
  so.columns = &col->name;
  so.n_columns = 1;
  so.filter = o->filter;
  int64_t rows = VS_BATCH_FLOATS / (int64_t)(s->dim ? s->dim : 1);
  so.batch_rows_max = rows < 256 ? 256 : rows;
  struct ArrowArrayStream st;
  hs_scan_hooks hooks = {ix->n_indexed ? keep_exact : NULL, NULL, (void *)ix, plan};
  hs_status rc = hs_table_scan_query_hooked(table, &so, &hooks, &st, err);
  if (rc != HS_OK) return rc;
  for (;;) {
    struct ArrowArray b;
    int e = st.get_next(&st, &b);
    if (e != 0) {
      const char *m = st.get_last_error(&st);
      rc = hs_error_set(err, hs_status_of_errno(e), "%s", m ? m : "vector search: scan failed");
      break;
    }
    if (b.release == NULL) break;
    hs_scan_origin org;
    rc = hs_scan_batch_origin(&st, &org, err);
    if (rc == HS_OK && org.file > UINT32_MAX)
      rc = hs_error_set(err, HS_ERR_UNSUPPORTED, "vector search: too many data files");
    if (rc == HS_OK) rc = files_set(files, org.file, org.path, &stats->files_searched, err);
    if (rc == HS_OK) rc = batch_candidates(s, col, &b, &org, err);
    s->file = (uint32_t)org.file;
    if (rc == HS_OK) rc = score_batch(s, err);
    b.release(&b);
    if (rc != HS_OK) break;
  }
  hs_scan_stats ss;
  hs_error local = {0};
  if (hs_scan_stats_get(&st, &ss, &local) == HS_OK) {
    stats->files_planned = ss.files_planned;
    stats->rows_matched += ss.rows_matched;
  }
  st.release(&st);
  stats->rows_scored = s->scored;
  return rc;
}

/* -------------------------------------------------------------- fetch */

typedef struct vs_key {
  uint32_t file;
  int64_t row;
} vs_key;

static int key_cmp(const void *a, const void *b) {
  const vs_key *x = a, *y = b;
  if (x->file != y->file) return x->file < y->file ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

static bool same_shape(const struct ArrowSchema *a, const struct ArrowSchema *b, int depth) {
  if (depth > 64 || strcmp(a->format, b->format) != 0 || a->n_children != b->n_children)
    return false;
  if ((a->name == NULL) != (b->name == NULL) || (a->name && strcmp(a->name, b->name) != 0))
    return false;
  for (int64_t i = 0; i < a->n_children; i++)
    if (!same_shape(a->children[i], b->children[i], depth + 1)) return false;
  return true;
}

/* `full` projected to names[0..n) into owned struct schema `out`. */
static hs_status project(const struct ArrowSchema *full, const char *const *names, size_t n,
                         const char *what, struct ArrowSchema *out, hs_error *err) {
  hs_status st = hs_arrow_schema_init(out, "+s", "", 0, (int64_t)n, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    int64_t k = 0;
    while (k < full->n_children &&
           (full->children[k]->name == NULL || strcmp(full->children[k]->name, names[i]) != 0))
      k++;
    if (k == full->n_children) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "vector search: %s has no column '%s'", what,
                        names[i]);
      break;
    }
    hs_arrow_schema_release(out->children[i]);
    st = hs_arrow_schema_copy(full->children[k], out->children[i], err);
  }
  if (st != HS_OK) hs_arrow_schema_release(out);
  return st;
}

/* Read the projected columns of the rows keys[0..n) (sorted, unique) into
 * batches; where[i] is key i's place. *schema is the projected schema
 * (already set from the table when there are no keys). */
static hs_status fetch_rows(const vs_files *files, const char *const *names, size_t n_names,
                            const vs_key *keys, size_t n, struct ArrowSchema *schema,
                            struct ArrowArray **batches, size_t *n_batches, hs_table_row *where,
                            hs_error *err) {
  hs_status st = HS_OK;
  bool have_schema = false;
  int64_t *rows = hs_malloc((n ? n : 1) * sizeof *rows);
  if (rows == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  for (size_t i = 0; st == HS_OK && i < n;) {
    size_t j = i;
    while (j < n && keys[j].file == keys[i].file) {
      rows[j - i] = keys[j].row;
      j++;
    }
    const char *path = files->paths[keys[i].file];
    hs_parquet_reader *r = NULL;
    struct ArrowArrayStream stream;
    memset(&stream, 0, sizeof stream);
    st = hs_parquet_reader_open(path, &r, err);
    if (st == HS_OK) {
      hs_parquet_read_options ro;
      hs_parquet_read_options_init(&ro);
      ro.columns = names;
      ro.n_columns = n_names;
      ro.rows = rows;
      ro.n_rows = j - i;
      st = hs_parquet_reader_stream(r, &ro, &stream, err);
    }
    struct ArrowSchema got;
    struct ArrowArray *bs = NULL;
    size_t nb = 0;
    memset(&got, 0, sizeof got);
    if (st == HS_OK) st = hs_arrow_stream_collect(&stream, &got, &bs, &nb, err);
    if (stream.release != NULL) stream.release(&stream);
    hs_parquet_reader_free(r);
    if (st == HS_OK && !have_schema) {
      hs_arrow_schema_release(schema);
      st = hs_arrow_schema_copy(&got, schema, err);
      have_schema = st == HS_OK;
    } else if (st == HS_OK && !same_shape(&got, schema, 0)) {
      st = hs_error_set(err, HS_ERR_SCHEMA, "%s: columns or types differ from the first file's",
                        path);
    }
    hs_arrow_schema_release(&got);
    /* Key i + m is row m of this file's selection: find its batch. */
    size_t m = 0, b = 0;
    int64_t in_b = 0;
    for (; st == HS_OK && m < j - i; m++) {
      while (b < nb && in_b >= bs[b].length) b++, in_b = 0;
      if (b == nb) {
        st = hs_error_set(err, HS_ERR_CORRUPT, "%s: fewer rows read than selected", path);
        break;
      }
      where[i + m].batch = (uint32_t)(*n_batches + b);
      where[i + m].row = in_b++;
    }
    if (st == HS_OK && nb > 0) {
      struct ArrowArray *grown = hs_realloc(*batches, (*n_batches + nb) * sizeof *grown);
      if (grown == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
      } else {
        *batches = grown;
        memcpy(grown + *n_batches, bs, nb * sizeof *bs);
        *n_batches += nb;
        hs_free(bs);
        bs = NULL;
        nb = 0;
      }
    }
    hs_arrow_batches_free(bs, nb);
    if (st != HS_OK) hs_error_prefix(err, "vector search: ");
    i = j;
  }
  hs_free(rows);
  return st;
}

/* The result: [query_index] + projected + distance, one batch. */
static hs_status build_result(const struct ArrowSchema *proj, struct ArrowArray *taken,
                              const hs_vs_topk *topk, size_t nq, bool with_qi, size_t total,
                              struct ArrowArrayStream *out, hs_error *err) {
  int64_t np = proj->n_children, nc = np + 1 + (with_qi ? 1 : 0);
  struct ArrowSchema schema;
  hs_status st = hs_arrow_schema_init(&schema, "+s", "", 0, nc, err);
  if (st != HS_OK) {
    hs_arrow_array_release(taken);
    return st;
  }
  int64_t c = 0;
  if (with_qi) {
    hs_arrow_schema_release(schema.children[c]);
    st = hs_arrow_schema_init(schema.children[c++], "i", "query_index", 0, 0, err);
  }
  for (int64_t i = 0; st == HS_OK && i < np; i++) {
    hs_arrow_schema_release(schema.children[c]);
    st = hs_arrow_schema_copy(proj->children[i], schema.children[c++], err);
  }
  if (st == HS_OK) {
    hs_arrow_schema_release(schema.children[c]);
    st = hs_arrow_schema_init(schema.children[c], "f", "distance", 0, 0, err);
  }
  if (st != HS_OK || total == 0) {
    hs_arrow_array_release(taken);
    if (st != HS_OK) {
      hs_arrow_schema_release(&schema);
      return st;
    }
    return hs_arrow_stream_from_batches(&schema, NULL, 0, out, err);
  }
  float *dist = hs_malloc(total * sizeof *dist);
  int32_t *qi = with_qi ? hs_malloc(total * sizeof *qi) : NULL;
  struct ArrowArray *kids = hs_calloc((size_t)nc, sizeof *kids);
  struct ArrowArray batch;
  memset(&batch, 0, sizeof batch);
  if (dist == NULL || (with_qi && qi == NULL) || kids == NULL) {
    hs_free(dist);
    hs_free(qi);
    hs_free(kids);
    hs_arrow_array_release(taken);
    hs_arrow_schema_release(&schema);
    return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  }
  size_t at = 0;
  for (size_t q = 0; q < nq; q++)
    for (size_t i = 0; i < topk[q].n; i++, at++) {
      dist[at] = topk[q].h[i].distance;
      if (qi != NULL) qi[at] = (int32_t)q;
    }
  c = 0;
  if (with_qi) st = hs_arrow_array_make_primitive(&kids[c++], (int64_t)total, qi, NULL, 0, err);
  for (int64_t i = 0; i < np; i++) { /* move the gathered children */
    kids[c++] = *taken->children[i];
    taken->children[i]->release = NULL;
  }
  hs_arrow_array_release(taken);
  if (st == HS_OK) {
    st = hs_arrow_array_make_primitive(&kids[c], (int64_t)total, dist, NULL, 0, err);
  } else {
    hs_free(dist);
  }
  if (st == HS_OK) st = hs_arrow_array_make_struct(&batch, (int64_t)total, kids, nc, NULL, 0, err);
  if (st != HS_OK) {
    for (int64_t i = 0; i < nc; i++) hs_arrow_array_release(&kids[i]);
  }
  hs_free(kids);
  if (st != HS_OK) {
    hs_arrow_schema_release(&schema);
    return st;
  }
  return hs_arrow_stream_from_batches(&schema, &batch, 1, out, err);
}

/* --------------------------------------------------------------- entry */

static hs_status search(hs_table *table, const hs_vector_search_options *o, const float *queries,
                        size_t nq, size_t dim, bool with_qi, struct ArrowArrayStream *out,
                        hs_vector_search_stats *stats_out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_vector_search_stats stats;
  memset(&stats, 0, sizeof stats);
  hs_vector_search_options defaults;
  if (o == NULL) {
    hs_vector_search_options_init(&defaults);
    o = &defaults;
  }
  if (o->column == NULL || o->column[0] == 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vector search: no vector column given");
  if (o->k < 1)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vector search: k must be >= 1, got %lld",
                        (long long)o->k);
  if (queries == NULL || nq == 0 || dim == 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vector search: no query vector (or dimension 0)");
  if (nq > INT32_MAX)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vector search: too many queries (%zu)", nq);
  if (o->columns == NULL && o->n_columns > 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vector search: NULL columns with a count");
  hs_metric metric = HS_METRIC_L2;
  hs_status st = o->metric != NULL ? hs_metric_parse(o->metric, &metric, err) : HS_OK;
  if (st != HS_OK) return st;
  if (metric == HS_METRIC_HAMMING || metric == HS_METRIC_JACCARD) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "vector search: metric '%s' needs bit vectors; column '%s' holds float32",
                        hs_metric_name(metric), o->column);
  }
  size_t nfloats;
  if (!hs_mul_size(nq, dim, &nfloats))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vector search: %zu queries of %zu floats", nq,
                        dim);
  for (size_t i = 0; i < nfloats; i++) {
    if (!isfinite(queries[i])) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "vector search: query %zu component %zu is %s (queries must be finite)",
                          i / dim, i % dim, isnan(queries[i]) ? "NaN" : "infinite");
    }
  }
  struct ArrowSchema tschema;
  if ((st = hs_table_schema(table, &tschema, err)) != HS_OK) return st;
  vs_column col;
  st = column_check(&tschema, o->column, &col, err);
  if (st == HS_OK && col.fixed && col.width != (int64_t)dim) {
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "vector search: column '%s' has dimension %lld, the query has dimension %zu",
                      o->column, (long long)col.width, dim);
  }
  /* Projection: the table's columns by default; never clashing with ours. */
  size_t n_names = o->columns != NULL ? o->n_columns : (size_t)tschema.n_children;
  const char **names = hs_calloc(n_names + 1, sizeof *names);
  if (st == HS_OK && names == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "vector search: OOM");
  for (size_t i = 0; st == HS_OK && i < n_names; i++) {
    names[i] = o->columns != NULL ? o->columns[i] : tschema.children[i]->name;
    if (names[i] == NULL)
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "vector search: NULL column");
    else if (strcmp(names[i], "distance") == 0 || (with_qi && strcmp(names[i], "query_index") == 0))
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "vector search: column '%s' clashes with the result's own column; "
                        "project it away (columns=...)",
                        names[i]);
  }
  struct ArrowSchema proj;
  memset(&proj, 0, sizeof proj);
  if (st == HS_OK) st = project(&tschema, names, n_names, "the table", &proj, err);
  /* tschema stays alive: names[] may point into it. */

  /* Score. */
  vs_score s;
  memset(&s, 0, sizeof s);
  s.metric = metric;
  s.dim = dim;
  s.nq = nq;
  s.queries = queries;
  s.threads = hs_parallel_cores();
  if (nq > 1 && s.threads > nq) s.threads = (uint32_t)nq;
  s.topk = hs_calloc(nq, sizeof *s.topk);
  s.dist = hs_calloc(s.threads, sizeof *s.dist);
  s.oom = hs_calloc(s.threads, sizeof *s.oom);
  if (st == HS_OK && (s.topk == NULL || s.dist == NULL || s.oom == NULL))
    st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  for (size_t q = 0; s.topk != NULL && q < nq; q++) hs_vs_topk_init(&s.topk[q], (size_t)o->k);
  vs_files files = {0};
  /* Files with a usable vector index are searched through it (their
   * allowed rows from the filter); the rest are scored exactly. */
  hs_vs_indexed ix;
  memset(&ix, 0, sizeof ix);
  bool filtered = o->filter != NULL && o->filter[strspn(o->filter, " \t\r\n")] != 0;
  hs_table_plan plan; /* planned once for every pass */
  memset(&plan, 0, sizeof plan);
  if (st == HS_OK) st = hs_table_plan_files(table, o->snapshot_id, &plan, err);
  if (st == HS_OK && !o->exact)
    st = hs_vs_indexed_open(table, &plan, o->column, metric, dim, &ix, err);
  if (st == HS_OK && ix.n_indexed > 0 && filtered)
    st = hs_vs_indexed_allow(table, &plan, o->filter, o->column, &ix, &stats.rows_matched, err);
  if (st == HS_OK) st = score_table(table, o, &col, &s, &files, &ix, &plan, &stats, err);
  hs_table_plan_free(&plan);
  if (st == HS_OK)
    st = hs_vs_indexed_search(&ix, queries, nq, dim, (size_t)o->k, o->ef_search, o->nprobe,
                              s.threads, s.topk, &stats.files_indexed, err);
  stats.files_searched += stats.files_indexed;
  for (size_t f = 0; st == HS_OK && f < ix.n; f++)
    if (ix.vx[f] != NULL) st = files_set(&files, f, ix.paths[f], NULL, err);
  hs_vs_indexed_free(&ix);

  /* Fetch the winners' projected columns. */
  size_t total = 0;
  for (size_t q = 0; st == HS_OK && q < nq; q++) {
    hs_vs_topk_sort(&s.topk[q]);
    total += s.topk[q].n;
  }
  vs_key *keys = NULL;
  hs_table_row *where = NULL, *rows = NULL;
  struct ArrowArray *batches = NULL;
  size_t n_keys = 0, n_batches = 0;
  struct ArrowArray taken;
  memset(&taken, 0, sizeof taken);
  if (st == HS_OK && total > 0) {
    keys = hs_malloc(total * sizeof *keys);
    where = hs_malloc(total * sizeof *where);
    rows = hs_malloc(total * sizeof *rows);
    if (keys == NULL || where == NULL || rows == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  }
  if (st == HS_OK && total > 0) {
    for (size_t q = 0; q < nq; q++)
      for (size_t i = 0; i < s.topk[q].n; i++)
        keys[n_keys++] = (vs_key){s.topk[q].h[i].file, s.topk[q].h[i].row};
    qsort(keys, n_keys, sizeof *keys, key_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n_keys; i++)
      if (u == 0 || key_cmp(&keys[u - 1], &keys[i]) != 0) keys[u++] = keys[i];
    n_keys = u;
    if (n_names > 0)
      st =
          fetch_rows(&files, names, n_names, keys, n_keys, &proj, &batches, &n_batches, where, err);
  }
  if (st == HS_OK && total > 0 && n_names > 0) {
    size_t at = 0;
    for (size_t q = 0; q < nq; q++)
      for (size_t i = 0; i < s.topk[q].n; i++) {
        vs_key k = {s.topk[q].h[i].file, s.topk[q].h[i].row};
        const vs_key *f = bsearch(&k, keys, n_keys, sizeof *keys, key_cmp);
        rows[at++] = where[f - keys];
      }
    st = hs_table_take(&proj, batches, rows, total, &taken, err);
  } else if (st == HS_OK) { /* no rows or no projected columns: an empty struct */
    st = hs_arrow_array_make_struct(&taken, (int64_t)total, NULL, 0, NULL, 0, err);
  }
  if (st == HS_OK) {
    st = build_result(&proj, &taken, s.topk, nq, with_qi, total, out, err);
  } else {
    hs_arrow_array_release(&taken);
  }
  stats.rows_returned = st == HS_OK ? (int64_t)total : 0;
  hs_arrow_batches_free(batches, n_batches);
  hs_free(keys);
  hs_free(where);
  hs_free(rows);
  files_free(&files);
  for (size_t q = 0; s.topk != NULL && q < nq; q++) hs_vs_topk_free(&s.topk[q]);
  for (uint32_t w = 0; s.dist != NULL && w < s.threads; w++) hs_free(s.dist[w]);
  hs_free(s.topk);
  hs_free(s.dist);
  hs_free(s.oom);
  hs_free(s.ptrs);
  hs_free(s.pos);
  hs_free(s.conv);
  hs_free(names);
  hs_arrow_schema_release(&proj);
  hs_arrow_schema_release(&tschema);
  if (stats_out != NULL) *stats_out = stats;
  return st;
}

hs_status hs_table_vector_search(hs_table *table, const hs_vector_search_options *opts,
                                 const float *query, size_t dim, struct ArrowArrayStream *out,
                                 hs_vector_search_stats *stats, hs_error *err) {
  return search(table, opts, query, 1, dim, false, out, stats, err);
}

hs_status hs_table_vector_search_batch(hs_table *table, const hs_vector_search_options *opts,
                                       const float *queries, size_t n_queries, size_t dim,
                                       struct ArrowArrayStream *out, hs_vector_search_stats *stats,
                                       hs_error *err) {
  return search(table, opts, queries, n_queries, dim, true, out, stats, err);
}

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
#include "../table/schema_map.h"
#include "scan.h"
#include "vector_search.h"

void hs_vector_search_options_init(hs_vector_search_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->snapshot_id = -1;
  opts->k = 10;
}

/* ----------------------------------------------------------- the column */

/* Find `name` in `schema` and check it holds float32 vectors. */
static hs_status column_check(const struct ArrowSchema *schema, const char *name, hs_vs_column *out,
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

/* -------------------------------------------------------------- fetch */

typedef hs_vs_key vs_key;

/* The field id of top-level column `name` of `schema`, or -1. */
static int32_t vs_field_id(const struct ArrowSchema *schema, const char *name) {
  for (int64_t i = 0; i < schema->n_children; i++) {
    const struct ArrowSchema *c = schema->children[i];
    if (c->name == NULL || strcmp(c->name, name) != 0) continue;
    return hs_arrow_field_id(c);
  }
  return -1;
}

static int key_cmp(const void *a, const void *b) {
  const vs_key *x = a, *y = b;
  if (x->file != y->file) return x->file < y->file ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* `full` projected to names[0..n) into owned struct schema `out`. */
static hs_status project(const struct ArrowSchema *full, const char *const *names, size_t n,
                         const char *what, struct ArrowSchema *out, hs_error *err) {
  size_t missing = 0;
  hs_status st = hs_arrow_schema_project(full, names, n, out, &missing, err);
  if (st == HS_ERR_NOT_FOUND)
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "vector search: %s has no column '%s'", what,
                      names[missing]);
  return st;
}

/* Read the projected columns of the rows keys[0..n) (sorted, unique) into
 * batches; where[i] is key i's place. *schema is the projected schema
 * (already set from the table when there are no keys); proj_key names its
 * columns (the prepared search keeps each file's map under it). */
static hs_status fetch_rows(const hs_vs_files *files, hs_vs_prep *prep, const hs_colmap_ctx *ctx,
                            const char *proj_key, const vs_key *keys, size_t n,
                            struct ArrowSchema *schema, struct ArrowArray **batches,
                            size_t *n_batches, hs_table_row *where, hs_error *err) {
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
    /* The file's columns by field id (schema_map.h): the first file fixes
     * the output types, the others must read as those. */
    hs_colmap map;
    memset(&map, 0, sizeof map);
    struct ArrowSchema full;
    memset(&full, 0, sizeof full);
    st = hs_vs_prep_reader(prep, keys[i].file, path, &r, err);
    /* The first file's map of this projection is kept by the prepared
     * search: the same version maps the same file the same way (a name
     * mapping is a table property, which may change without a new
     * version: such maps are built every time). */
    bool keep = !have_schema && ctx->name_mapping == NULL;
    const hs_colmap *cm =
        st == HS_OK && keep ? hs_vs_prep_map_get(prep, keys[i].file, path, proj_key) : NULL;
    if (st == HS_OK && cm == NULL) {
      st = hs_parquet_reader_schema(r, &full, err);
      if (st == HS_OK) st = hs_colmap_build(ctx, schema, &full, have_schema, path, &map, err);
      hs_arrow_schema_release(&full);
      if (st == HS_OK && keep) cm = hs_vs_prep_map_put(prep, keys[i].file, path, proj_key, &map);
      if (cm == NULL) cm = &map;
    }
    if (st == HS_OK) {
      hs_parquet_read_options ro;
      hs_parquet_read_options_init(&ro);
      ro.columns = (const char *const *)cm->read;
      ro.n_columns = cm->n_read;
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
    for (size_t q = 0; st == HS_OK && !cm->identity && q < nb; q++) {
      struct ArrowArray a;
      st = hs_colmap_apply(cm, &bs[q], &a, err); /* this call's own: kept maps are identity */
      bs[q] = a;                                 /* released on failure: a is zeroed */
    }
    if (st == HS_OK && !have_schema) {
      hs_arrow_schema_release(schema);
      st = hs_arrow_schema_copy(&cm->out, schema, err);
      have_schema = st == HS_OK;
    }
    hs_colmap_free(&map);
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

/* names[0..n) as one string (unit separators between): the projection's
 * key in the prepared search; NULL when out of memory. */
static char *names_key(const char *const *names, size_t n) {
  hs_buf b;
  hs_buf_init(&b);
  bool ok = true;
  for (size_t i = 0; ok && i < n; i++)
    ok = (i == 0 || hs_buf_append_byte(&b, 0x1f)) && hs_buf_append(&b, names[i], strlen(names[i]));
  if (ok) ok = hs_buf_append_byte(&b, 0);
  if (!ok) {
    hs_buf_free(&b);
    return NULL;
  }
  return (char *)hs_buf_detach(&b);
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

/* paths (may be NULL: every file): the data files searched (split.c). */
static hs_status search(hs_table *table, const hs_vector_search_options *o,
                        const char *const *paths, size_t n_paths, const float *queries, size_t nq,
                        size_t dim, bool with_qi, struct ArrowArrayStream *out,
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
  /* The read schema: the snapshot's own for time travel (schema_map.h). */
  struct ArrowSchema tschema;
  if ((st = hs_table_read_schema_arrow(table, o->snapshot_id, &tschema, err)) != HS_OK) return st;
  hs_colmap_ctx ctx;
  if ((st = hs_colmap_ctx_init(table, hs_table_read_schema(table, o->snapshot_id), &ctx, err)) !=
      HS_OK) {
    hs_arrow_schema_release(&tschema);
    return st;
  }
  hs_vs_column col;
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

  /* Score: per-query heaps of the k best hits. */
  hs_vs_topk *topk = hs_calloc(nq, sizeof *topk);
  if (st == HS_OK && topk == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "vector search: OOM");
  for (size_t q = 0; topk != NULL && q < nq; q++) hs_vs_topk_init(&topk[q], (size_t)o->k);
  hs_vs_files files = {0};
  /* Files with a usable vector index are searched through it (their
   * allowed rows from the filter); the rest are scored exactly. */
  hs_vs_indexed ix;
  memset(&ix, 0, sizeof ix);
  bool filtered = o->filter != NULL && o->filter[strspn(o->filter, " \t\r\n")] != 0;
  /* The plan and indexes of this version: prepared once, reused while the
   * version is unchanged (vector_search_prep.c; a split's, restricted to
   * its files, is its own). `ix` is this search's
   * copy of the prepared view: only its `allowed` sets are its own. */
  hs_vs_prep *prep = NULL;
  if (st == HS_OK)
    st = hs_vs_prep_acquire(table, o->snapshot_id, o->column, vs_field_id(&tschema, o->column),
                            metric, dim, o->exact, filtered, paths, n_paths, &prep, err);
  const hs_table_plan *planp = prep != NULL ? hs_vs_prep_plan(prep) : NULL;
  if (st == HS_OK) ix = *hs_vs_prep_indexed(prep);
  bool own_allowed = false;
  if (st == HS_OK && ix.n_indexed > 0 && filtered) {
    if ((ix.allowed = hs_calloc(ix.n + 1, sizeof *ix.allowed)) == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
    own_allowed = st == HS_OK;
  }
  if (ix.n_rejected > 0) {
    stats.files_index_rejected = ix.n_rejected;
    memcpy(stats.index_rejected, ix.why, sizeof stats.index_rejected);
  }
  if (st == HS_OK && ix.n_indexed > 0 && filtered) {
    /* The same filter on the same version allows the same rows. */
    if (hs_vs_prep_allowed_get(prep, o->filter, ix.allowed, ix.n, &stats.rows_matched)) {
      ix.filtered = true;
    } else {
      int64_t matched = 0;
      st = hs_vs_indexed_allow(table, planp, o->filter, &ix, &matched, err);
      if (st == HS_OK) hs_vs_prep_allowed_put(prep, o->filter, ix.allowed, ix.n, matched);
      stats.rows_matched += matched;
    }
  }
  if (st == HS_OK)
    st = hs_vs_score_exact(table, o, &col, metric, queries, nq, dim, &ix, planp, topk, &files,
                           &stats, err);
  if (st == HS_OK)
    st = hs_vs_indexed_search(&ix, queries, nq, dim, (size_t)o->k, o->ef_search, o->nprobe,
                              hs_parallel_cores(), topk, &stats.files_indexed, err);
  stats.files_searched += stats.files_indexed;
  for (size_t f = 0; st == HS_OK && f < ix.n; f++)
    if (ix.vx[f] != NULL) st = hs_vs_files_set(&files, f, ix.paths[f], NULL, err);
  if (own_allowed) {
    for (size_t f = 0; f < ix.n; f++)
      if (ix.allowed[f] != NULL) roaring_bitmap_free(ix.allowed[f]);
    hs_free(ix.allowed);
  }

  /* Fetch the winners' projected columns. */
  size_t total = 0;
  for (size_t q = 0; st == HS_OK && q < nq; q++) {
    hs_vs_topk_sort(&topk[q]);
    total += topk[q].n;
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
      for (size_t i = 0; i < topk[q].n; i++)
        keys[n_keys++] = (vs_key){topk[q].h[i].file, topk[q].h[i].row};
    qsort(keys, n_keys, sizeof *keys, key_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n_keys; i++)
      if (u == 0 || key_cmp(&keys[u - 1], &keys[i]) != 0) keys[u++] = keys[i];
    n_keys = u;
    if (n_names > 0) hs_vs_prefetch_rows(&files, prep, &ctx, &proj, keys, n_keys);
    char *proj_key = n_names > 0 ? names_key((const char *const *)names, n_names) : NULL;
    if (n_names > 0 && proj_key == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
    if (st == HS_OK && n_names > 0)
      st = fetch_rows(&files, prep, &ctx, proj_key, keys, n_keys, &proj, &batches, &n_batches,
                      where, err);
    hs_free(proj_key);
  }
  if (st == HS_OK && total > 0 && n_names > 0) {
    size_t at = 0;
    for (size_t q = 0; q < nq; q++)
      for (size_t i = 0; i < topk[q].n; i++) {
        vs_key k = {topk[q].h[i].file, topk[q].h[i].row};
        const vs_key *f = bsearch(&k, keys, n_keys, sizeof *keys, key_cmp);
        rows[at++] = where[f - keys];
      }
    st = hs_table_take(&proj, batches, rows, total, &taken, err);
  } else if (st == HS_OK) { /* no rows or no projected columns: an empty struct */
    st = hs_arrow_array_make_struct(&taken, (int64_t)total, NULL, 0, NULL, 0, err);
  }
  if (st == HS_OK) {
    st = build_result(&proj, &taken, topk, nq, with_qi, total, out, err);
  } else {
    hs_arrow_array_release(&taken);
  }
  stats.rows_returned = st == HS_OK ? (int64_t)total : 0;
  hs_arrow_batches_free(batches, n_batches);
  hs_free(keys);
  hs_free(where);
  hs_free(rows);
  hs_vs_files_free(&files);
  hs_vs_prep_release(prep);
  for (size_t q = 0; topk != NULL && q < nq; q++) hs_vs_topk_free(&topk[q]);
  hs_free(topk);
  hs_free(names);
  hs_arrow_schema_release(&proj);
  hs_arrow_schema_release(&tschema);
  hs_colmap_ctx_free(&ctx);
  if (stats_out != NULL) *stats_out = stats;
  return st;
}

hs_status hs_table_vector_search(hs_table *table, const hs_vector_search_options *opts,
                                 const float *query, size_t dim, struct ArrowArrayStream *out,
                                 hs_vector_search_stats *stats, hs_error *err) {
  return search(table, opts, NULL, 0, query, 1, dim, false, out, stats, err);
}

hs_status hs_table_vector_search_split(hs_table *table, const hs_vector_search_options *opts,
                                       const char *const *paths, size_t n_paths, const float *query,
                                       size_t dim, struct ArrowArrayStream *out,
                                       hs_vector_search_stats *stats, hs_error *err) {
  if (paths == NULL && n_paths > 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vector search: NULL split paths with a count");
  static const char *const none[1] = {NULL};
  return search(table, opts, paths != NULL ? paths : none, n_paths, query, 1, dim, false, out,
                stats, err);
}

hs_status hs_table_vector_search_batch(hs_table *table, const hs_vector_search_options *opts,
                                       const float *queries, size_t n_queries, size_t dim,
                                       struct ArrowArrayStream *out, hs_vector_search_stats *stats,
                                       hs_error *err) {
  return search(table, opts, NULL, 0, queries, n_queries, dim, true, out, stats, err);
}

/*
 * scan.c — hs_table_scan_query: a filtered, projected scan of a table
 * snapshot, streamed as Arrow record batches.
 *
 * Pipeline:
 *  1. open: bind the filter against the table's Arrow schema (errors with
 *     positions surface here); plan the snapshot's data files
 *     (src/table/plan.c); drop files whose manifest statistics (column
 *     bounds, null/NaN counts, partition tuple) prove no row can match;
 *  2. per remaining file: read the footer, bind the filter against the
 *     file's own types, drop row groups whose Parquet statistics prove no
 *     row can match; in the kept ones, cut out the row ranges whose pages
 *     the page indexes rule out (scan_pages.c, hs_scan_page_stats_get);
 *  3. pass one: decode only the filter's columns of each kept row group
 *     (only the rows left by the page indexes) and evaluate the filter
 *     vectorized into a selection;
 *  4. pass two: read the projected columns of exactly the selected rows
 *     (the reader's row selection decodes only the pages holding them), so
 *     wide columns (vectors, long strings) of rows that do not match are
 *     never decoded; the batch is emitted as the reader assembles it.
 * Without a filter, files stream straight through the reader.
 *
 * The output schema is the first surviving file's projected schema (as
 * hs_table_scan does), or the table schema projected when no file
 * survives; every later file must produce the same names and formats.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/parallel.h"
#include "../table/lineage.h"
#include "../table/schema_map.h"
#include "expr_internal.h"
#include "index_plan.h"
#include "scan.h"

#define SCAN_BATCH_ROWS_DEFAULT 65536
/* Rows of the batches a file with deleted rows is read in before
 * drop_deleted cuts them (whole row groups up to this size). */
#define DEL_BATCH_MAX (INT64_C(1) << 20)
/* Pass one CPU time per file below which files are not run ahead in
 * parallel (prefetch_window). */
#define HS_SCAN_PAR_FILE_NS 1000000

void hs_scan_options_init(hs_scan_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->snapshot_id = -1;
  opts->limit = -1;
}

/* ------------------------------------------------------------ the stream */

typedef struct scan_state {
  /* Fixed at open. */
  char *filter; /* NULL: every row */
  char **files; /* surviving data files, plan order */
  size_t n_files, next_file;
  char **proj; /* projected names (output order) */
  size_t n_proj;
  char **fcols; /* columns pass one reads: the filter's (table order) */
  size_t n_fcols;
  int64_t limit, batch_rows;
  struct ArrowSchema schema; /* output */
  /* Schema evolution (src/table/schema_map.h): the read schema's facts,
   * the filter columns as the read schema types them, and the borrowed
   * pointers a sub scan shares (to the main scan's schema, fwant, ctx). */
  hs_colmap_ctx ctx_own;
  struct ArrowSchema fwant_own;
  const hs_colmap_ctx *ctx;
  const struct ArrowSchema *want_out, *want_f;
  hs_scan_stats stats;
  hs_scan_page_stats pstats;
  /* Scalar indexes (index_plan.c): ixp[f * n_fcols + k] is the resolved
   * index file of filter column k of files[f], or NULL; cand the current
   * file's candidate rows (NULL: all). ixn (same shape) is the column's
   * name in that data file as the registry records it (the name the index
   * blob carries); the index is used only where the file's column matched
   * to the filter column by field id has that name, unpromoted. */
  char **ixp;
  char **ixn;
  size_t ixp_n;
  roaring_bitmap_t *cand;
  bool cand_exact;             /* cand is exactly the filter's TRUE rows (index_plan.h) */
  hs_scan_bitmap_fn on_bitmap; /* hs_table_scan_rows_bitmap: index rows as bitmaps */
  hs_scan_index_stats istats;
  /* Per-file records (hs_scan_file_info_get), one per opened file: the
   * totals at the file's opening (f_base*) are subtracted when it closes;
   * fst_cols[k] owns record k's index_columns text. */
  hs_scan_file_info *fst;
  char **fst_cols;
  size_t n_fst;
  bool fst_open;
  hs_scan_stats f_base;
  hs_scan_page_stats f_pbase;
  hs_scan_index_stats f_ibase;
  /* The current file. */
  hs_parquet_reader *reader;
  const char *path;
  hs_expr *expr;              /* bound to the file's filter columns */
  struct ArrowSchema fschema; /* the filter columns as this file reads them */
  /* The last file's bound filter and its filter columns, taken over by the
   * next file that reads them alike instead of parsing and binding the
   * filter again (an index join's IN list of thousands of keys: ~0.2 ms a
   * file). */
  hs_expr *expr_prev;
  struct ArrowSchema fschema_prev;
  hs_colmap omap, fmap; /* this file's columns -> output / filter columns */
  int64_t *rg_first;    /* file-wide first row of each row group (+ end) */
  bool *rg_keep;
  uint32_t n_rg, next_rg;
  bool whole; /* pass one reads the whole file in one stream */
  /* Page pruning (scan_pages.c): rows of each kept row group that the page
   * indexes leave; pass one reads only those (p1rows, file-wide). */
  hs_arena page_arena;
  hs_scan_page_ranges *rg_pages;
  int64_t *p1rows; /* NULL: pass one reads contiguous rows from pass1_pos */
  size_t p1_cap, p1_n, p1_next;
  /* Pass one (filter columns) and the output stream (projected columns). */
  struct ArrowArrayStream pass1, out;
  bool pass1_open, out_open;
  int64_t pass1_pos; /* file-wide row of pass one's next batch */
  uint64_t *sel;
  size_t sel_cap;
  int64_t *rows;
  size_t rows_cap;
  /* Origin of the emitted batches (hs_scan_batch_origin): the current
   * file's ordinal in `files`, rows of the output stream emitted so far
   * (offset into `rows` with a filter, else the file-wide first row), and
   * the last batch's origin. */
  size_t cur_file;
  size_t *plan_idx;       /* plan index of each of `files` */
  int64_t *fsize, *frows; /* per file: size and record count its manifest entry records */
  int64_t *flin; /* per file: first_row_id (-1: none) and data sequence number (v3 lineage) */
  /* Per file: its deleted rows (a copy of the plan's live-row set, owned;
   * NULL: none deleted), and the current file's (borrowed from fdel). */
  roaring_bitmap_t **fdel;
  size_t n_fdel;
  roaring_bitmap_t *const *fdel_from; /* a sub scan's: the main scan's fdel (borrowed) */
  const roaring_bitmap_t *del;
  /* Without a filter and with up to 7/8 of its rows deleted, a file streams whole and
   * each batch drops its deleted rows (drop_deleted): a row selection of
   * most rows costs the reader a gather per row. The stream's batches are
   * whole row groups (their decoded buffers handed over, not copied), and
   * the live rows are cut from the held one, dbig, into batches of at most
   * batch_rows (one copy). del_pos is the file row of the stream's next
   * row; dbig_first the file row of dbig's row 0, dbig_pos its next row;
   * dbuf[dbig_j .. dbig_dead) its deleted file rows not yet passed. */
  bool del_filter;
  int64_t del_pos;
  uint32_t *dbuf; /* a batch's deleted positions */
  size_t dbuf_cap;
  struct ArrowArray dbig;
  int64_t dbig_first, dbig_pos;
  size_t dbig_dead, dbig_j;
  /* The last batch cut from dbig came from file rows [lazy_lo, lazy_hi)
   * (its rows listed on demand, hs_scan_batch_origin). */
  bool last_lazy;
  int64_t lazy_lo, lazy_hi;
  hs_scan_hooks hooks;
  int64_t out_pos;
  size_t last_file;
  const int64_t *last_rows;
  int64_t last_first, last_n;
  /* batch_rows_min: small batches merged (hs_arrow_coalescer); a merged
   * batch has no single origin (hs_scan_batch_origin refuses it). */
  hs_arrow_coalescer coal;
  /* Pass one of the next files run ahead on the worker pool (prefetch_window):
   * pf[k] holds file pf_first + k, pf_next of the pf_n are taken. Used with a
   * filter, without on_rows and limit, when threads > 1 (the window size). */
  struct scan_prefetch *pf;
  size_t pf_first, pf_n, pf_next;
  size_t pf_windows; /* windows run so far */
  bool pf_serial;    /* the last window's files were cheap: run the next on one thread */
  uint32_t threads;
  /* The files read are files[next_file .. end_file) (n_files, or one for a
   * morsel). A morsel (hs_scan_morsel_open) reads file rows [r_lo, r_hi)
   * only, and counts a row group (read, pruned, its pages) and the file
   * only in the morsel holding their first row, so that the morsels'
   * counters add up to the whole scan's. */
  size_t end_file;
  bool ranged;
  int64_t r_lo, r_hi;
  hs_error error;
} scan_state;

/* Rows [first, end) of the current file meet the morsel's range (always
 * without one); row `first` is counted by this scan. */
static bool in_range(const scan_state *s, int64_t first, int64_t end) {
  return !s->ranged || (first < s->r_hi && end > s->r_lo);
}
static bool counts_row(const scan_state *s, int64_t first) {
  return !s->ranged || (first >= s->r_lo && first < s->r_hi);
}

static void names_free(char **v, size_t n) {
  for (size_t i = 0; v != NULL && i < n; i++) hs_free(v[i]);
  hs_free(v);
}

static hs_status names_push(char ***v, size_t *n, const char *name, hs_error *err) {
  char **nv = hs_realloc(*v, (*n + 1) * sizeof *nv);
  if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  *v = nv;
  if ((nv[*n] = hs_strdup(name)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  (*n)++;
  return HS_OK;
}

static void close_stream(struct ArrowArrayStream *st, bool *open) {
  if (*open && st->release != NULL) st->release(st);
  *open = false;
}

/* Record r's counters: the scan's totals now minus those at its file's opening. */
static void fst_fill(const scan_state *s, hs_scan_file_info *r) {
  r->row_groups_read = s->stats.row_groups_read - s->f_base.row_groups_read;
  r->row_groups_pruned = s->stats.row_groups_pruned - s->f_base.row_groups_pruned;
  r->rows_scanned = s->stats.rows_scanned - s->f_base.rows_scanned;
  r->rows_matched = s->stats.rows_matched - s->f_base.rows_matched;
  r->pages = s->pstats.pages - s->f_pbase.pages;
  r->pages_pruned = s->pstats.pages_pruned - s->f_pbase.pages_pruned;
  r->rows_candidate = s->istats.rows_candidate - s->f_ibase.rows_candidate;
  r->rows_eliminated = s->istats.rows_eliminated - s->f_ibase.rows_eliminated;
  r->rows_deleted = s->stats.rows_deleted - s->f_base.rows_deleted;
}

static void expr_prev_free(scan_state *s) {
  hs_expr_free(s->expr_prev);
  s->expr_prev = NULL;
  hs_arrow_schema_release(&s->fschema_prev);
}

static void file_close(scan_state *s) {
  if (s->fst_open) fst_fill(s, &s->fst[s->n_fst - 1]);
  s->fst_open = false;
  close_stream(&s->pass1, &s->pass1_open);
  close_stream(&s->out, &s->out_open);
  hs_parquet_reader_free(s->reader);
  s->reader = NULL;
  if (s->expr != NULL) { /* kept for the next file (expr_reuse) */
    expr_prev_free(s);
    s->expr_prev = s->expr;
    s->fschema_prev = s->fschema; /* moved */
    s->fschema.release = NULL;
  }
  s->expr = NULL;
  hs_arrow_schema_release(&s->fschema);
  hs_colmap_free(&s->omap);
  hs_colmap_free(&s->fmap);
  hs_free(s->rg_first);
  hs_free(s->rg_keep);
  hs_free(s->rg_pages);
  hs_arena_reset(&s->page_arena);
  s->rg_first = NULL;
  s->rg_keep = NULL;
  s->rg_pages = NULL;
  s->n_rg = s->next_rg = 0;
  if (s->cand != NULL) roaring_bitmap_free(s->cand);
  s->cand = NULL;
  s->cand_exact = false;
  s->del_filter = false;
  if (s->dbig.release != NULL) s->dbig.release(&s->dbig);
  memset(&s->dbig, 0, sizeof s->dbig);
}

static void prefetch_free(scan_state *s);

static void state_free(scan_state *s) {
  if (s == NULL) return;
  if (s->hooks.cand_free != NULL) s->hooks.cand_free(s->hooks.cand_ctx);
  prefetch_free(s);
  file_close(s);
  expr_prev_free(s);
  hs_arrow_schema_release(&s->schema);
  hs_arrow_schema_release(&s->fwant_own);
  hs_colmap_ctx_free(&s->ctx_own);
  names_free(s->files, s->n_files);
  names_free(s->proj, s->n_proj);
  names_free(s->fcols, s->n_fcols);
  names_free(s->fst_cols, s->n_fst);
  hs_free(s->fst);
  hs_free(s->filter);
  hs_free(s->sel);
  hs_free(s->rows);
  hs_free(s->p1rows);
  names_free(s->ixp, s->ixp_n);
  names_free(s->ixn, s->ixp_n);
  hs_free(s->plan_idx);
  hs_free(s->fsize);
  hs_free(s->frows);
  hs_free(s->flin);
  for (size_t i = 0; s->fdel != NULL && i < s->n_fdel; i++)
    if (s->fdel[i] != NULL) roaring_bitmap_free(s->fdel[i]);
  hs_free(s->fdel);
  hs_free(s->dbuf);
  hs_arrow_coalescer_free(&s->coal);
  hs_free(s);
}

/* `full` (a struct schema) projected to `names`, in that order, into an
 * owned struct schema. `what` names the source in errors. */
static hs_status project_schema(const struct ArrowSchema *full, char *const *names, size_t n,
                                const char *what, struct ArrowSchema *out, hs_error *err) {
  size_t missing = 0;
  hs_status st = hs_arrow_schema_project(full, (const char *const *)names, n, out, &missing, err);
  if (st == HS_ERR_NOT_FOUND)
    st = hs_error_set(err, HS_ERR_NOT_FOUND, "%s: no column '%s'", what, names[missing]);
  return st;
}

/* Open a reader stream over `names` of the current file with an optional
 * row selection. */
static hs_status open_stream(scan_state *s, char *const *names, size_t n, const int64_t *rows,
                             size_t n_rows, int64_t batch, bool output, hs_error *err) {
  hs_parquet_read_options ro;
  hs_parquet_read_options_init(&ro);
  ro.columns = (const char *const *)names;
  ro.n_columns = n;
  ro.rows = rows;
  ro.n_rows = n_rows;
  ro.batch_rows_max = batch;
  struct ArrowArrayStream *st = output ? &s->out : &s->pass1;
  hs_status rc = hs_parquet_reader_stream(s->reader, &ro, st, err);
  if (rc != HS_OK) return rc;
  if (output) s->out_pos = 0;
  *(output ? &s->out_open : &s->pass1_open) = true;
  return HS_OK; /* the column maps (file_open) make batches the scan's shape */
}

/* Page pruning of the current file's kept row groups: fills rg_pages; a
 * row group none of whose rows survive is dropped like one pruned by its
 * statistics (counted in row_groups_pruned). Page indexes are read through
 * the reader's own source (no second mapping of the file). */
static hs_status prune_pages(scan_state *s, const hs_pq_file_metadata *md, hs_error *err) {
  bool any = false;
  for (uint32_t g = 0; g < s->n_rg; g++) any |= s->rg_keep[g];
  if (!any) return HS_OK;
  s->rg_pages = hs_calloc(s->n_rg, sizeof *s->rg_pages);
  if (s->rg_pages == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  hs_source *src = hs_parquet_reader_source(s->reader);
  hs_status st = HS_OK;
  for (uint32_t g = 0; st == HS_OK && g < s->n_rg; g++) {
    if (!s->rg_keep[g]) continue;
    hs_scan_page_ranges *pr = &s->rg_pages[g];
    st = hs_scan_page_ranges_compute_names(src, md, g, &s->fschema,
                                           (const char *const *)s->fmap.file_names, s->expr,
                                           &s->page_arena, pr, err);
    if (st != HS_OK || !pr->indexed) continue;
    int64_t rg_rows = s->rg_first[g + 1] - s->rg_first[g];
    bool counted = counts_row(s, s->rg_first[g]);
    if (counted) {
      s->pstats.row_groups_indexed++;
      s->pstats.pages += pr->pages;
      s->pstats.pages_pruned += pr->pages_pruned;
      s->pstats.rows_pruned += rg_rows - pr->rows;
    }
    if (pr->rows < rg_rows) s->whole = false;
    if (pr->n == 0) {
      s->rg_keep[g] = false;
      if (counted) s->stats.row_groups_pruned++;
    }
  }
  hs_source_unref(src);
  if (st != HS_OK) hs_error_prefix(err, "%s: ", s->path);
  return st;
}

/* Record `rec` was answered by an index: name the filter columns that have
 * one on this file ("a,b"), owned by s->fst_cols. */
static hs_status fst_index_columns(scan_state *s, hs_scan_file_info *rec, const char *const *paths,
                                   hs_error *err) {
  size_t len = 1;
  for (size_t k = 0; k < s->n_fcols; k++)
    if (paths[k] != NULL) len += strlen(s->fcols[k]) + 1;
  char *t = hs_malloc(len), *w = t;
  if (t == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  for (size_t k = 0; k < s->n_fcols; k++) {
    if (paths[k] == NULL) continue;
    if (w != t) *w++ = ',';
    size_t n = strlen(s->fcols[k]);
    memcpy(w, s->fcols[k], n);
    w += n;
  }
  *w = 0;
  rec->indexed = 1;
  rec->index_columns = t;
  s->fst_cols[s->n_fst - 1] = t;
  return HS_OK;
}

/* A row group whose index candidates are more than 1/HS_SCAN_DENSE_DIV of
 * its rows is read whole, as without an index: turning candidates into a
 * row selection costs more than evaluating the filter on every row, and
 * the filter is re-checked on every row read either way. Measured with
 * bench/bench_scalar_query.py (BENCHMARKS.md, "Scalar indexes: queries"):
 * candidates at 10 % of the rows were still 0.85x the plain scan through
 * the selection, so the line is drawn at 1/16. */
#define HS_SCAN_DENSE_DIV 16

static bool cand_dense(uint64_t cand, int64_t rows) {
  return rows > 0 && cand * HS_SCAN_DENSE_DIV > (uint64_t)rows;
}

/* After the index answered: true when every kept row group is dense, so
 * the file is read exactly as the unindexed scan reads it (s->cand
 * dropped, s->whole untouched: it already says whether statistics pruned
 * anything). Row groups without a candidate are never dense. */
static bool dense_everywhere(scan_state *s) {
  for (uint32_t g = 0; g < s->n_rg; g++) {
    if (!s->rg_keep[g]) continue;
    int64_t first = s->rg_first[g], n = s->rg_first[g + 1] - first;
    if (n <= 0) continue;
    uint64_t c = roaring_bitmap_range_cardinality(s->cand, (uint64_t)first, (uint64_t)(first + n));
    if (!cand_dense(c, n)) return false;
  }
  roaring_bitmap_free(s->cand);
  s->cand = NULL;
  return true;
}

/* The rows-only shortcut (hooks.rows_from_index): the index's candidates
 * are exactly the file's matching rows, so they go to on_rows straight
 * from the bitmap, row group by row group (those statistics kept), and
 * nothing of the file is read. Every row group is consumed. */
static int64_t cand_rows(const roaring_bitmap_t *cand, int64_t first, int64_t end,
                         const hs_scan_page_ranges *pr, int64_t *out, int64_t cap);

/* index_rows_out with hooks.on_bitmap: the candidates of the kept row
 * groups as one bitmap (the index's own when every group is kept). */
static hs_status index_bitmap_out(scan_state *s, hs_error *err) {
  roaring_bitmap_t *part = NULL;
  uint32_t kept = 0;
  for (uint32_t g = 0; g < s->n_rg; g++) kept += s->rg_keep[g] ? 1 : 0;
  const roaring_bitmap_t *rows = s->cand;
  if (kept < s->n_rg) {
    if ((part = roaring_bitmap_copy(s->cand)) == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    for (uint32_t g = 0; g < s->n_rg; g++)
      if (!s->rg_keep[g] && s->rg_first[g + 1] > s->rg_first[g])
        roaring_bitmap_remove_range(part, (uint64_t)s->rg_first[g], (uint64_t)s->rg_first[g + 1]);
    rows = part;
  }
  uint64_t c = roaring_bitmap_get_cardinality(rows);
  s->stats.row_groups_read += kept;
  s->stats.rows_matched += (int64_t)c;
  s->stats.rows_returned += (int64_t)c;
  hs_status st =
      c == 0 ? HS_OK : s->on_bitmap(s->hooks.ctx, s->plan_idx[s->cur_file], s->path, rows, err);
  if (part != NULL) roaring_bitmap_free(part);
  s->next_rg = s->n_rg;
  s->whole = false;
  return st;
}

static hs_status index_rows_out(scan_state *s, hs_error *err) {
  if (s->on_bitmap != NULL) return index_bitmap_out(s, err);
  for (uint32_t g = 0; g < s->n_rg; g++) {
    if (!s->rg_keep[g]) continue;
    int64_t first = s->rg_first[g], end = s->rg_first[g + 1];
    if (end <= first) continue;
    uint64_t c = roaring_bitmap_range_cardinality(s->cand, (uint64_t)first, (uint64_t)end);
    if (c == 0) continue;
    if (c > s->rows_cap) {
      int64_t *nr = hs_realloc(s->rows, sizeof(int64_t) * (size_t)c);
      if (nr == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      s->rows = nr;
      s->rows_cap = (size_t)c;
    }
    int64_t k = cand_rows(s->cand, first, end, NULL, s->rows, (int64_t)c);
    s->stats.row_groups_read++;
    s->stats.rows_matched += k;
    s->stats.rows_returned += k;
    hs_status st =
        s->hooks.on_rows(s->hooks.ctx, s->plan_idx[s->cur_file], s->path, s->rows, (size_t)k, err);
    if (st != HS_OK) return st;
  }
  s->next_rg = s->n_rg;
  s->whole = false;
  return HS_OK;
}

/* Planning (hooks.on_cand): the file's candidates within its kept row
 * groups (or, without an index, how many live rows those hold) go to
 * on_cand, and nothing of the file is read. */
static hs_status cand_out(scan_state *s, hs_error *err) {
  roaring_bitmap_t *part = NULL;
  const roaring_bitmap_t *rows = s->cand;
  int64_t n = 0;
  for (uint32_t g = 0; g < s->n_rg; g++) {
    int64_t first = s->rg_first[g], end = s->rg_first[g + 1];
    if (end <= first) continue;
    if (!s->rg_keep[g]) {
      if (s->cand != NULL && part == NULL && (part = roaring_bitmap_copy(s->cand)) == NULL)
        return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      if (part != NULL) roaring_bitmap_remove_range(part, (uint64_t)first, (uint64_t)end);
      continue;
    }
    if (s->cand == NULL)
      n += end - first -
           (s->del != NULL
                ? (int64_t)roaring_bitmap_range_cardinality(s->del, (uint64_t)first, (uint64_t)end)
                : 0);
  }
  if (part != NULL) rows = part;
  if (rows != NULL) n = (int64_t)roaring_bitmap_get_cardinality(rows);
  hs_status st = s->hooks.on_cand(s->hooks.ctx, s->plan_idx[s->cur_file], s->path, rows,
                                  rows != NULL && s->cand_exact, n, err);
  if (part != NULL) roaring_bitmap_free(part);
  s->next_rg = s->n_rg;
  s->whole = false;
  return st;
}

/* Whether the filter reads a v3 row-lineage column (src/table/lineage.h). */
static bool filter_lineage(const scan_state *s) {
  for (size_t k = 0; k < s->fmap.n; k++)
    if (s->fmap.conv[k] == HS_COLMAP_ROW_ID || s->fmap.conv[k] == HS_COLMAP_LAST_SEQ) return true;
  return false;
}

/* The filter's lineage columns' statistics for file rows [first, end):
 * stored values widened by what their NULLs inherit, or all inherited. */
static void lineage_stats(const scan_state *s, int64_t first, int64_t end, hs_expr_stats *stats) {
  for (size_t k = 0; k < s->fmap.n; k++) {
    hs_colmap_conv c = s->fmap.conv[k];
    if (c != HS_COLMAP_ROW_ID && c != HS_COLMAP_LAST_SEQ) continue;
    hs_scan_lineage_stats(c == HS_COLMAP_ROW_ID, s->fmap.lin->first_row_id, s->fmap.lin->data_seq,
                          first, end, s->fmap.src[k] >= 0, &stats[k]);
  }
}

/* A morsel without a filter: its live rows of the current file are the
 * output stream's row selection (and the batches' origin, s->rows). */
static hs_status range_open(scan_state *s, hs_error *err) {
  const hs_pq_file_metadata *md = hs_parquet_reader_metadata(s->reader);
  int64_t pos = 0;
  for (uint32_t g = 0; g < md->n_row_groups; g++) {
    if (counts_row(s, pos)) s->stats.row_groups_read++;
    pos += md->row_groups[g].num_rows;
  }
  int64_t lo = s->r_lo, hi = s->r_hi < pos ? s->r_hi : pos;
  if (lo >= hi) return HS_OK; /* nothing: no stream, the file ends at once */
  size_t cap = (size_t)(hi - lo);
  if (cap > s->rows_cap) {
    int64_t *nr = hs_realloc(s->rows, sizeof(int64_t) * cap);
    if (nr == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    s->rows = nr;
    s->rows_cap = cap;
  }
  size_t k = 0;
  if (s->del == NULL || lo > (int64_t)UINT32_MAX) {
    for (int64_t r = lo; r < hi; r++) s->rows[k++] = r;
  } else {
    roaring_uint32_iterator_t it;
    roaring_init_iterator(s->del, &it);
    bool more = roaring_move_uint32_iterator_equalorlarger(&it, (uint32_t)lo);
    for (int64_t r = lo; r < hi; r++) {
      if (more && (int64_t)it.current_value == r) {
        more = roaring_advance_uint32_iterator(&it);
        continue;
      }
      s->rows[k++] = r;
    }
  }
  if (k == 0) return HS_OK;
  return open_stream(s, s->omap.read, s->omap.n_read, s->rows, k, s->batch_rows, true, err);
}

/* Open data file `i`: footer, and with a filter, its binding and row-group
 * pruning. Without a filter the output stream starts right away. */

/* On an object store: the candidates' pages of every column this file's
 * passes read (the filter's; the output's unless only rows are wanted) in
 * one wave (scan_prefetch.c), not a round trip per page. */
static hs_status collect_rows(void *ctx, size_t plan_index, const char *path, const int64_t *rows,
                              size_t n, hs_error *err);

static void prefetch_cand(scan_state *s) {
  /* A sub scan's rows (collect_rows) are read by the main scan's pass two. */
  bool out = s->hooks.on_rows == NULL || s->hooks.on_rows == collect_rows;
  size_t n = s->fmap.n_read + (out ? s->omap.n_read : 0);
  const char **cols = hs_calloc(n ? n : 1, sizeof *cols);
  if (cols == NULL) return;
  size_t m = 0;
  for (size_t i = 0; i < s->fmap.n_read; i++) cols[m++] = s->fmap.read[i];
  for (size_t i = 0; out && i < s->omap.n_read; i++) cols[m++] = s->omap.read[i];
  hs_scan_prefetch_rows(s->reader, s->path, s->cand, cols, m);
  hs_free(cols);
}

static bool no_dictionaries(const struct ArrowSchema *f, int depth) {
  if (f->dictionary != NULL || depth > 64) return false;
  for (int64_t i = 0; i < f->n_children; i++)
    if (!no_dictionaries(f->children[i], depth + 1)) return false;
  return true;
}

/* Take over the last file's bound filter when this file's filter columns
 * have the same formats and names (binding reads nothing else of them:
 * hs_expr_col_init), with the schema its column names point into. */
static bool expr_reuse(scan_state *s) {
  if (s->expr_prev == NULL || !no_dictionaries(&s->fschema, 0) ||
      !hs_arrow_schema_same_shape(&s->fschema_prev, &s->fschema))
    return false;
  hs_arrow_schema_release(&s->fschema);
  s->fschema = s->fschema_prev; /* moved */
  s->fschema_prev.release = NULL;
  s->expr = s->expr_prev;
  s->expr_prev = NULL;
  return true;
}

static hs_status file_open(scan_state *s, size_t i, hs_error *err) {
  s->path = s->files[i];
  s->cur_file = i;
  roaring_bitmap_t *const *fdel = s->fdel != NULL ? s->fdel : s->fdel_from;
  s->del = fdel != NULL ? fdel[i] : NULL;
  if (s->fst == NULL) { /* each file opens once: n_files records at most */
    s->fst = hs_calloc(s->n_files, sizeof *s->fst);
    s->fst_cols = hs_calloc(s->n_files, sizeof *s->fst_cols);
    if (s->fst == NULL || s->fst_cols == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  }
  if (s->n_fst == s->n_files) return hs_error_set(err, HS_ERR_INTERNAL, "scan: file reopened");
  hs_scan_file_info *rec = &s->fst[s->n_fst++];
  rec->path = s->path;
  rec->index_columns = "";
  s->f_base = s->stats;
  s->f_pbase = s->pstats;
  s->f_ibase = s->istats;
  s->fst_open = true;
  hs_status st = hs_parquet_reader_open_shared(s->path, &s->reader, err);
  if (st == HS_OK && s->fsize != NULL)
    st = hs_table_data_file_check(s->path, hs_parquet_reader_metadata(s->reader), s->fsize[i],
                                  s->frows[i], err);
  if (st != HS_OK) return st;
  rec->rows = hs_parquet_reader_metadata(s->reader)->num_rows;
  if (counts_row(s, 0)) s->stats.files_read++;
  if (s->del != NULL && !s->ranged)
    s->stats.rows_deleted += (int64_t)roaring_bitmap_get_cardinality(s->del);
  else if (s->del != NULL && s->r_lo < s->r_hi)
    s->stats.rows_deleted +=
        (int64_t)roaring_bitmap_range_cardinality(s->del, (uint64_t)s->r_lo, (uint64_t)s->r_hi);
  /* The file's columns by field id: the output's, and the filter's. */
  struct ArrowSchema full;
  if ((st = hs_parquet_reader_schema(s->reader, &full, err)) != HS_OK) return st;
  st = hs_colmap_build(s->ctx, s->want_out, &full, true, s->path, &s->omap, err);
  if (st == HS_OK && s->flin != NULL) { /* what v3 row lineage inherits */
    s->omap.lin->first_row_id = s->flin[2 * i];
    s->omap.lin->data_seq = s->flin[2 * i + 1];
  }
  if (st == HS_OK && s->filter != NULL) {
    st = hs_colmap_build(s->ctx, s->want_f, &full, false, s->path, &s->fmap, err);
    if (st == HS_OK && s->flin != NULL) {
      s->fmap.lin->first_row_id = s->flin[2 * i];
      s->fmap.lin->data_seq = s->flin[2 * i + 1];
    }
  }
  full.release(&full);
  if (st == HS_OK && s->filter != NULL) st = hs_arrow_schema_copy(&s->fmap.out, &s->fschema, err);
  if (st != HS_OK) return st;
  if (s->filter == NULL && s->ranged) return range_open(s, err);
  if (s->filter == NULL) {
    s->stats.row_groups_read += hs_parquet_reader_num_row_groups(s->reader);
    if (s->del == NULL)
      return open_stream(s, s->omap.read, s->omap.n_read, NULL, 0, s->batch_rows, true, err);
    /* Deleted rows are never returned: with up to 7/8 of the rows
     * deleted, whole row groups drop them; else the live rows are the row
     * selection (and the batches' origin, s->rows). CPU of a full scan of
     * 1M rows (5 columns) by the share deleted, row groups dropping /
     * selection: 60 % 0.023 / 0.061 s, 80 % 0.024 / 0.035, 90 % 0.024 /
     * 0.021, 95 % 0.025 / 0.015. */
    int64_t total = rec->rows;
    uint64_t dead = roaring_bitmap_range_cardinality(s->del, 0, (uint64_t)total);
    size_t live = (size_t)(total - (int64_t)dead);
    s->del_filter = live > 0 && dead * 8 <= (uint64_t)total * 7;
    s->del_pos = 0;
    if (s->del_filter) {
      /* Whole row groups (up to DEL_BATCH_MAX rows): the reader lends their
       * decoded buffers, and drop_deleted's copy is the only one. */
      const hs_pq_file_metadata *md = hs_parquet_reader_metadata(s->reader);
      int64_t big = s->batch_rows;
      for (uint32_t g = 0; g < md->n_row_groups; g++)
        if (md->row_groups[g].num_rows > big) big = md->row_groups[g].num_rows;
      if (big > DEL_BATCH_MAX) big = s->batch_rows > DEL_BATCH_MAX ? s->batch_rows : DEL_BATCH_MAX;
      return open_stream(s, s->omap.read, s->omap.n_read, NULL, 0, big, true, err);
    }
    if (live > s->rows_cap) {
      int64_t *nr = hs_realloc(s->rows, sizeof(int64_t) * live);
      if (nr == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      s->rows = nr;
      s->rows_cap = live;
    }
    size_t k = 0;
    roaring_uint32_iterator_t it;
    roaring_init_iterator(s->del, &it);
    for (int64_t r = 0; r < total && k < live; r++) {
      if (it.has_value && (int64_t)it.current_value == r) {
        roaring_advance_uint32_iterator(&it);
        continue;
      }
      s->rows[k++] = r;
    }
    if (k == 0) return HS_OK; /* nothing live: no stream, the file ends at once */
    return open_stream(s, s->omap.read, s->omap.n_read, s->rows, k, s->batch_rows, true, err);
  }
  if (!expr_reuse(s)) st = hs_expr_parse(s->filter, &s->fschema, &s->expr, NULL, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "%s: ", s->path);
    return st;
  }
  const hs_pq_file_metadata *md = hs_parquet_reader_metadata(s->reader);
  s->n_rg = md->n_row_groups;
  s->rg_first = hs_malloc(sizeof(int64_t) * ((size_t)s->n_rg + 1));
  s->rg_keep = hs_malloc(sizeof(bool) * ((size_t)s->n_rg + 1));
  hs_expr_stats *stats = hs_malloc(sizeof(hs_expr_stats) * (size_t)(s->n_fcols ? s->n_fcols : 1));
  if (s->rg_first == NULL || s->rg_keep == NULL || stats == NULL) {
    hs_free(stats);
    return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  }
  s->whole = !s->ranged;
  int64_t pos = 0;
  for (uint32_t g = 0; st == HS_OK && g < s->n_rg; g++) {
    s->rg_first[g] = pos;
    pos += md->row_groups[g].num_rows;
    if (!in_range(s, pos - md->row_groups[g].num_rows, pos)) { /* another morsel's */
      s->rg_keep[g] = false;
      continue;
    }
    hs_scan_row_group_stats_names(md, g, &s->fschema, (const char *const *)s->fmap.file_names,
                                  stats);
    lineage_stats(s, pos - md->row_groups[g].num_rows, pos, stats);
    bool may = true;
    st = hs_expr_may_match(s->expr, stats, (int64_t)s->n_fcols, &may, err);
    s->rg_keep[g] = may;
    if (!may) {
      s->whole = false;
      if (counts_row(s, s->rg_first[g])) s->stats.row_groups_pruned++;
    }
  }
  s->rg_first[s->n_rg] = pos;
  hs_free(stats);
  s->next_rg = 0;
  /* Page statistics of a stored lineage column do not cover what its NULLs
   * inherit: row groups only. */
  if (st == HS_OK && !filter_lineage(s)) st = prune_pages(s, md, err);
  /* Candidates the plan gave this file (a split's scan, split.c): used
   * instead of its index files. */
  bool given = false;
  if (st == HS_OK && s->hooks.given_cand != NULL && s->n_fcols > 0) {
    bool ex = false;
    const roaring_bitmap_t *g = s->hooks.given_cand(s->hooks.cand_ctx, s->plan_idx[i], &ex);
    if (g != NULL) {
      given = true;
      if ((s->cand = roaring_bitmap_copy(g)) == NULL)
        return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      s->cand_exact = ex;
      if (s->del != NULL) roaring_bitmap_andnot_inplace(s->cand, s->del);
      uint64_t k = roaring_bitmap_get_cardinality(s->cand);
      s->istats.files_indexed++;
      s->istats.rows_candidate += (int64_t)k;
      s->istats.rows_eliminated += s->rg_first[s->n_rg] - (int64_t)k;
      rec->index_columns = "(planned candidates)";
      if (!dense_everywhere(s)) s->whole = false;
    }
  }
  if (st == HS_OK && !given && s->ixp != NULL && s->n_fcols > 0) {
    /* Narrow with the file's scalar indexes: candidate rows only. The
     * registry entry was found by the filter column's field id (or, for an
     * entry without field ids, by its name); it is used only where the
     * file's column matched to the filter column by field id is the one the
     * entry names, unpromoted: never for a re-added name, a dropped field or
     * keys of the file's narrower type. After a rename the entry and the
     * index blob carry the file's (old) name. */
    const char **paths = hs_calloc(s->n_fcols, sizeof *paths);
    const char **names = hs_calloc(s->n_fcols, sizeof *names);
    if (paths == NULL || names == NULL) {
      hs_free(paths);
      hs_free(names);
      return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    }
    bool anyp = false;
    for (size_t k = 0; k < s->n_fcols; k++) {
      const char *fn = s->fmap.file_names[k], *in = s->ixn[i * s->n_fcols + k];
      if (fn != NULL && in != NULL && strcmp(fn, in) == 0 && s->fmap.conv[k] == HS_COLMAP_PASS &&
          (paths[k] = s->ixp[i * s->n_fcols + k]) != NULL) {
        names[k] = in;
        anyp = true;
      }
    }
    hs_index_plan_data data = {s->path, md->file_size, md->footer_crc32c};
    hs_index_plan_report rep;
    rep.rejected = 0;
    rep.why[0] = '\0';
    if (anyp)
      st = hs_index_plan_rows(s->expr, paths, names, s->n_fcols, &data, &rep, &s->cand,
                              &s->cand_exact, err);
    hs_free(names);
    if (rep.rejected > 0) {
      hs_index_rejection_note(rep.why);
      if (s->istats.files_index_rejected++ == 0)
        memcpy(s->istats.index_rejected, rep.why, sizeof s->istats.index_rejected - 1);
      memcpy(rec->index_rejected, rep.why, sizeof rec->index_rejected - 1);
    }
    if (st == HS_OK && s->cand != NULL && s->del != NULL)
      roaring_bitmap_andnot_inplace(s->cand, s->del); /* deleted rows are never candidates */
    if (st == HS_OK && s->cand != NULL) {
      uint64_t k = roaring_bitmap_get_cardinality(s->cand);
      s->istats.files_indexed++;
      s->istats.rows_candidate += (int64_t)k;
      s->istats.rows_eliminated += s->rg_first[s->n_rg] - (int64_t)k;
      st = fst_index_columns(s, rec, paths, err);
      if (st == HS_OK && s->hooks.on_cand != NULL)
        ; /* planning: cand_out below */
      else if (st == HS_OK && s->cand_exact && s->hooks.rows_from_index &&
               s->hooks.on_rows != NULL && s->limit < 0)
        st = index_rows_out(s, err);
      else if (!dense_everywhere(s))
        s->whole = false;
    }
    hs_free(paths);
  }
  if (st == HS_OK && s->cand != NULL && s->hooks.on_cand == NULL) prefetch_cand(s);
  if (st == HS_OK && s->hooks.on_cand != NULL) st = cand_out(s, err);
  return st;
}

/* The index's candidates among rows [first, end) of the file, and inside
 * the page ranges `pr` (relative to first) where the page index gave them,
 * into out (at most cap); returns how many. One walk over the candidates
 * and the ranges: never a step per row of the row group. */
static int64_t cand_rows(const roaring_bitmap_t *cand, int64_t first, int64_t end,
                         const hs_scan_page_ranges *pr, int64_t *out, int64_t cap) {
  if (first > (int64_t)UINT32_MAX) return 0; /* bitmaps hold 32-bit positions */
  bool ranged = pr != NULL && pr->indexed;
  roaring_uint32_iterator_t it;
  roaring_init_iterator(cand, &it);
  if (!roaring_move_uint32_iterator_equalorlarger(&it, (uint32_t)first)) return 0;
  int64_t k = 0;
  size_t r = 0;
  for (; it.has_value && (int64_t)it.current_value < end && k < cap;
       roaring_advance_uint32_iterator(&it)) {
    int64_t v = (int64_t)it.current_value;
    if (ranged) {
      while (r < pr->n && first + pr->ranges[2 * r + 1] <= v) r++;
      if (r == pr->n) break;
      if (v < first + pr->ranges[2 * r]) continue;
    }
    out[k++] = v;
  }
  return k;
}

/* Start pass one on the current file's next kept row groups; false when
 * the file has none left. */
static hs_status pass1_next(scan_state *s, bool *started, hs_error *err) {
  *started = false;
  if (s->whole) {
    if (s->next_rg > 0 || s->n_rg == 0) return HS_OK;
    s->next_rg = s->n_rg;
    s->stats.row_groups_read += s->n_rg;
    s->pass1_pos = 0;
    s->p1_n = 0; /* contiguous rows from pass1_pos */
    *started = true;
    return open_stream(s, s->fmap.read, s->fmap.n_read, NULL, 0, 0, false, err);
  }
  while (s->next_rg < s->n_rg && !s->rg_keep[s->next_rg]) s->next_rg++;
  if (s->next_rg == s->n_rg) return HS_OK;
  uint32_t g = s->next_rg++;
  int64_t first = s->rg_first[g], n = s->rg_first[g + 1] - first;
  if (n <= 0) return pass1_next(s, started, err);
  const hs_scan_page_ranges *pr = s->rg_pages != NULL ? &s->rg_pages[g] : NULL;
  if (pr != NULL && pr->indexed) n = pr->rows;
  /* The index's candidates are the rows (within the page ranges, if any):
   * read them straight from the bitmap (no pass over the row group's rows). */
  bool use_cand = s->cand != NULL;
  uint64_t c = 0;
  if (use_cand) { /* no candidate: skip; dense: read as without an index */
    c = roaring_bitmap_range_cardinality(s->cand, (uint64_t)first, (uint64_t)(s->rg_first[g + 1]));
    if (c == 0) return pass1_next(s, started, err);
    use_cand = !cand_dense(c, s->rg_first[g + 1] - first);
  }
  if (use_cand) n = (int64_t)c; /* at most the row group's candidates are kept */
  if ((size_t)n > s->p1_cap) {
    int64_t *nr = hs_realloc(s->p1rows, sizeof(int64_t) * (size_t)n);
    if (nr == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    s->p1rows = nr;
    s->p1_cap = (size_t)n;
  }
  int64_t k = 0;
  if (use_cand) {
    k = cand_rows(s->cand, first, s->rg_first[g + 1], pr, s->p1rows, n);
    if (k == 0) return pass1_next(s, started, err);
  } else if (pr != NULL && pr->indexed) {
    for (size_t r = 0; r < pr->n; r++)
      for (int64_t x = pr->ranges[2 * r]; x < pr->ranges[2 * r + 1] && k < n; x++)
        s->p1rows[k++] = first + x;
  } else {
    int64_t lo = first, hi = first + n; /* a morsel: its rows of the row group */
    if (s->ranged && lo < s->r_lo) lo = s->r_lo;
    if (s->ranged && hi > s->r_hi) hi = s->r_hi;
    for (; lo + k < hi; k++) s->p1rows[k] = lo + k;
  }
  if (s->ranged && k > 0) { /* candidates, page ranges: the morsel's rows of them */
    int64_t a = 0, b = k;
    while (a < b && s->p1rows[a] < s->r_lo) a++;
    while (b > a && s->p1rows[b - 1] >= s->r_hi) b--;
    if (a > 0) memmove(s->p1rows, s->p1rows + a, sizeof(int64_t) * (size_t)(b - a));
    k = b - a;
  }
  if (k == 0) return pass1_next(s, started, err);
  s->p1_n = (size_t)k;
  s->p1_next = 0;
  if (counts_row(s, first)) s->stats.row_groups_read++;
  s->pass1_pos = first;
  *started = true;
  return open_stream(s, s->fmap.read, s->fmap.n_read, s->p1rows, (size_t)k, 0, false, err);
}

/* Pass one's batch `b`, read with the file's names, as the filter columns
 * (renamed, promoted, NULL-filled); on failure b is released. */
static hs_status adapt_pass1(scan_state *s, struct ArrowArray *b, hs_error *err) {
  if (s->fmap.identity) return HS_OK;
  /* Lineage columns inherit by file position: the batch's rows. */
  s->fmap.lin->set = true;
  s->fmap.lin->rows = s->p1_n > 0 ? s->p1rows + s->p1_next : NULL;
  s->fmap.lin->first = s->pass1_pos;
  struct ArrowArray a;
  hs_status st = hs_colmap_apply(&s->fmap, b, &a, err);
  if (st != HS_OK) hs_error_prefix(err, "%s: ", s->path);
  *b = a;
  return st;
}

/* Evaluate the filter on pass one's batch `b` (file-wide rows from
 * s->pass1_pos) and open the output stream over the selected rows. */
static hs_status select_batch(scan_state *s, const struct ArrowArray *b, hs_error *err) {
  int64_t n = b->length;
  size_t words = (size_t)(n + 63) / 64;
  if (words > s->sel_cap) {
    uint64_t *ns = hs_realloc(s->sel, words * sizeof(uint64_t));
    if (ns == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    s->sel = ns;
    s->sel_cap = words;
  }
  int64_t k = 0;
  hs_status st = hs_expr_eval(s->expr, b, s->sel, &k, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "%s: ", s->path);
    return st;
  }
  int64_t pos = s->pass1_pos;
  s->pass1_pos += n;
  /* With a row selection, batch row i is file row p1rows[p1_next + i]. */
  const int64_t *map = s->p1_n > 0 ? s->p1rows + s->p1_next : NULL;
  if (map != NULL && (size_t)n > s->p1_n - s->p1_next) {
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: pass one returned more rows than selected",
                        s->path);
  }
  if (s->del != NULL && k > 0) { /* deleted rows never match */
    for (size_t w = 0; w < words; w++) {
      uint64_t bits = s->sel[w];
      while (bits != 0) {
        int64_t i = (int64_t)(w * 64) + __builtin_ctzll(bits);
        int64_t r = map != NULL ? map[i] : pos + i;
        if (r >= 0 && r <= (int64_t)UINT32_MAX && roaring_bitmap_contains(s->del, (uint32_t)r)) {
          s->sel[w] &= ~(1ULL << (i & 63));
          k--;
        }
        bits &= bits - 1;
      }
    }
  }
  if (map != NULL) s->p1_next += (size_t)n;
  s->stats.rows_scanned += n;
  s->stats.rows_matched += k;
  if (s->limit >= 0 && k > s->limit - s->stats.rows_returned) k = s->limit - s->stats.rows_returned;
  if (k <= 0) return HS_OK;
  if ((size_t)k > s->rows_cap) {
    int64_t *nr = hs_realloc(s->rows, sizeof(int64_t) * (size_t)k);
    if (nr == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    s->rows = nr;
    s->rows_cap = (size_t)k;
  }
  int64_t m = 0;
  for (size_t w = 0; w < words && m < k; w++) {
    uint64_t bits = s->sel[w];
    while (bits != 0 && m < k) {
      int64_t i = (int64_t)(w * 64) + __builtin_ctzll(bits);
      s->rows[m++] = map != NULL ? map[i] : pos + i;
      bits &= bits - 1;
    }
  }
  if (s->hooks.on_rows != NULL) { /* rows only: no output stream */
    s->stats.rows_returned += m;
    st = s->hooks.on_rows(s->hooks.ctx, s->plan_idx[s->cur_file], s->path, s->rows, (size_t)m, err);
    return st;
  }
  return open_stream(s, s->omap.read, s->omap.n_read, s->rows, (size_t)m, s->batch_rows, true, err);
}

/* Hold the output batch *b (rows del_pos.. of the file) as dbig, with its
 * deleted positions in dbuf (one bulk copy by rank); *b is emptied. */
static hs_status hold_deleted(scan_state *s, struct ArrowArray *b, hs_error *err) {
  int64_t first = s->del_pos, n = b->length;
  s->del_pos += n;
  s->dbig = *b;
  memset(b, 0, sizeof *b);
  s->dbig_first = first;
  s->dbig_pos = 0;
  s->dbig_dead = s->dbig_j = 0;
  if (n == 0) return HS_OK;
  if (first + n - 1 > (int64_t)UINT32_MAX)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "scan: rows past 2^32 with deletes");
  uint64_t lo = first > 0 ? roaring_bitmap_rank(s->del, (uint32_t)(first - 1)) : 0;
  uint64_t hi = roaring_bitmap_rank(s->del, (uint32_t)(first + n - 1));
  size_t dead = (size_t)(hi - lo);
  if (dead > s->dbuf_cap) {
    uint32_t *nd = hs_realloc(s->dbuf, dead * sizeof *nd);
    if (nd == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    s->dbuf = nd;
    s->dbuf_cap = dead;
  }
  if (dead > 0) roaring_bitmap_range_uint32_array(s->del, (size_t)lo, dead, s->dbuf);
  s->dbig_dead = dead;
  return HS_OK;
}

/* The next batch of dbig's live rows into *out: at most batch_rows of
 * them, copied (hs_arrow_array_filter of the rows they span); dbig itself
 * when it has no deleted row and fits. dbig is released once cut up. *out
 * stays unset (release NULL) when every row of the span is deleted. */
static hs_status drop_deleted(scan_state *s, struct ArrowArray *out, hs_error *err) {
  struct ArrowArray *b = &s->dbig;
  int64_t n = b->length, pos = s->dbig_pos;
  memset(out, 0, sizeof *out);
  if (s->dbig_dead == 0 && pos == 0 && n <= s->batch_rows) { /* nothing to drop: as it is */
    *out = *b;
    memset(b, 0, sizeof *b);
    s->last_lazy = true;
    s->lazy_lo = s->dbig_first;
    s->lazy_hi = s->dbig_first + n;
    return HS_OK;
  }
  /* The span [pos, end) holding batch_rows live rows (or dbig's rest). */
  int64_t end = pos + s->batch_rows, base = s->dbig_first;
  size_t j = s->dbig_j, j0 = j;
  while (j < s->dbig_dead && (int64_t)s->dbuf[j] - base < end && end < n) {
    end++;
    j++;
  }
  if (end > n) end = n;
  while (j < s->dbig_dead && (int64_t)s->dbuf[j] - base < end) j++;
  int64_t m = end - pos, k = m - (int64_t)(j - j0);
  size_t words = (size_t)(m + 63) / 64 + 1;
  if (words > s->sel_cap) {
    uint64_t *ns = hs_realloc(s->sel, words * sizeof(uint64_t));
    if (ns == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    s->sel = ns;
    s->sel_cap = words;
  }
  memset(s->sel, 0xff, words * sizeof(uint64_t));
  for (size_t i = j0; i < j; i++) {
    int64_t r = (int64_t)s->dbuf[i] - base - pos;
    s->sel[r >> 6] &= ~(UINT64_C(1) << (r & 63));
  }
  struct ArrowArray view = *b; /* rows pos .. end of dbig, borrowed */
  view.offset = b->offset + pos;
  view.length = m;
  view.release = NULL;
  hs_status st = HS_OK;
  if (k > 0) st = hs_arrow_array_filter(s->want_out, &view, s->sel, k, out, err);
  s->last_lazy = true;
  s->lazy_lo = base + pos;
  s->lazy_hi = base + end;
  s->dbig_pos = end;
  s->dbig_j = j;
  if (end == n || st != HS_OK) {
    b->release(b);
    memset(b, 0, sizeof *b);
  }
  return st;
}

/* The file rows of the last batch cut by drop_deleted into s->rows: the
 * first last_n rows of [lazy_lo, lazy_hi) not deleted. */
static hs_status list_lazy_rows(scan_state *s, hs_error *err) {
  size_t need = (size_t)(s->last_n > 0 ? s->last_n : 1);
  if (need > s->rows_cap) {
    int64_t *nr = hs_realloc(s->rows, sizeof(int64_t) * need);
    if (nr == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    s->rows = nr;
    s->rows_cap = need;
  }
  roaring_uint32_iterator_t it;
  roaring_init_iterator(s->del, &it);
  bool more = roaring_move_uint32_iterator_equalorlarger(&it, (uint32_t)s->lazy_lo);
  int64_t k = 0;
  for (int64_t r = s->lazy_lo; r < s->lazy_hi && k < s->last_n; r++) {
    if (more && (int64_t)it.current_value == r) {
      more = roaring_advance_uint32_iterator(&it);
      continue;
    }
    s->rows[k++] = r;
  }
  s->last_rows = s->rows;
  s->last_lazy = false;
  return HS_OK;
}

/* Cut an emitted batch to its first k rows: the struct and each child
 * (null counts become unknown where they were not 0). */
static void truncate_batch(struct ArrowArray *a, int64_t k) {
  a->length = k;
  if (a->null_count != 0) a->null_count = -1;
  for (int64_t i = 0; i < a->n_children; i++) {
    struct ArrowArray *c = a->children[i];
    if (c->length > k) c->length = k;
    if (c->null_count != 0) c->null_count = -1;
  }
}

static int scan_fail(scan_state *s, const char *what, struct ArrowArrayStream *st, int rc) {
  const char *m = st->get_last_error(st);
  hs_error_set(&s->error, hs_status_of_errno(rc), "%s: %s", what, m ? m : "read failed");
  return hs_status_errno(s->error.status);
}

/* ---------------------------------------- pass one ahead, file by file */

/* With a filter, pass one of a file ends in its list of matching rows (8
 * bytes a row at most), so the next files' pass one runs ahead, one file
 * per worker, each in a state of its own (a "sub" scan: the same code as
 * the serial scan, borrowing the fixed fields, its on_rows hook collecting
 * the rows). The main stream then takes them in file order: counters and
 * per-file records merged, the file's reader adopted, and the projected
 * columns of exactly those rows streamed (pass two, whose columns the
 * reader decodes in parallel). Rows, batches and counters are the serial
 * scan's; memory is one window of `threads` files' matching rows. */
typedef struct scan_prefetch {
  scan_state *sub; /* the file's pass one, run to its end; NULL once taken */
  int64_t *rows;   /* its matching rows, file-wide, increasing */
  size_t n, cap;
  hs_status st;
  int64_t cpu_ns; /* CPU time its pass one took */
} scan_prefetch;

static hs_status collect_rows(void *ctx, size_t plan_index, const char *path, const int64_t *rows,
                              size_t n, hs_error *err) {
  (void)plan_index;
  scan_prefetch *p = ctx;
  if (n > p->cap - p->n) {
    size_t cap = p->cap ? p->cap : 4096;
    while (cap - p->n < n) cap *= 2;
    int64_t *nr = hs_realloc(p->rows, cap * sizeof *nr);
    if (nr == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: scan: out of memory", path);
    p->rows = nr;
    p->cap = cap;
  }
  memcpy(p->rows + p->n, rows, n * sizeof *rows);
  p->n += n;
  return HS_OK;
}

/* Frees what a sub scan owns (its fixed fields are borrowed). */
static void sub_free(scan_state *sub) {
  if (sub == NULL) return;
  file_close(sub);
  expr_prev_free(sub);
  names_free(sub->fst_cols, sub->n_fst);
  hs_free(sub->fst);
  hs_free(sub->sel);
  hs_free(sub->rows);
  hs_free(sub->p1rows);
  hs_free(sub->dbuf);
  hs_free(sub);
}

static scan_state *sub_new(const scan_state *s, scan_prefetch *p) {
  scan_state *sub = hs_calloc(1, sizeof *sub);
  if (sub == NULL) return NULL;
  hs_arena_init(&sub->page_arena);
  sub->filter = s->filter;
  sub->files = s->files;
  sub->n_files = s->n_files;
  sub->proj = s->proj;
  sub->n_proj = s->n_proj;
  sub->fcols = s->fcols;
  sub->n_fcols = s->n_fcols;
  sub->ixp = s->ixp;
  sub->ixn = s->ixn;
  sub->ixp_n = s->ixp_n;
  sub->plan_idx = s->plan_idx;
  sub->fsize = s->fsize;
  sub->frows = s->frows;
  sub->flin = s->flin;
  sub->fdel = NULL; /* borrowed per file: file_open takes s->fdel's entry through sub->del */
  sub->fdel_from = s->fdel;
  sub->ctx = s->ctx;
  sub->want_out = s->want_out;
  sub->want_f = s->want_f;
  sub->limit = -1;
  sub->batch_rows = s->batch_rows;
  sub->hooks.on_rows = collect_rows;
  sub->hooks.ctx = p;
  sub->hooks.given_cand = s->hooks.given_cand;
  sub->hooks.cand_ctx = s->hooks.cand_ctx;
  return sub;
}

/* Pass one of file i in `sub`, to its end; the reader stays open. */
static hs_status sub_run(scan_state *sub, size_t i) {
  hs_error *err = &sub->error;
  hs_status st = file_open(sub, i, err);
  while (st == HS_OK) {
    if (sub->pass1_open) {
      struct ArrowArray b;
      int rc = sub->pass1.get_next(&sub->pass1, &b);
      if (rc != 0) {
        scan_fail(sub, sub->path, &sub->pass1, rc);
        st = sub->error.status;
        break;
      }
      if (b.release == NULL) {
        close_stream(&sub->pass1, &sub->pass1_open);
        continue;
      }
      st = adapt_pass1(sub, &b, err);
      if (st == HS_OK) st = select_batch(sub, &b, err);
      if (b.release != NULL) b.release(&b);
      continue;
    }
    bool started = false;
    st = pass1_next(sub, &started, err);
    if (st == HS_OK && !started) break;
  }
  if (sub->fst_open) fst_fill(sub, &sub->fst[sub->n_fst - 1]);
  sub->fst_open = false;
  return st;
}

static int64_t thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void window_worker(void *ctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  scan_state *s = ctx;
  for (size_t k = begin; k < end; k++) {
    int64_t t0 = thread_cpu_ns();
    s->pf[k].st = sub_run(s->pf[k].sub, s->pf_first + k);
    s->pf[k].cpu_ns = thread_cpu_ns() - t0;
  }
}

static void prefetch_clear(scan_state *s) {
  for (size_t k = 0; s->pf != NULL && k < s->threads; k++) {
    sub_free(s->pf[k].sub);
    s->pf[k].sub = NULL;
    s->pf[k].n = 0;
    s->pf[k].st = HS_OK;
  }
  s->pf_n = s->pf_next = 0;
}

static void prefetch_free(scan_state *s) {
  prefetch_clear(s);
  for (size_t k = 0; s->pf != NULL && k < s->threads; k++) hs_free(s->pf[k].rows);
  hs_free(s->pf);
  s->pf = NULL;
}

/* Run pass one of the next min(threads, files left) files in parallel. */
static hs_status prefetch_window(scan_state *s, hs_error *err) {
  prefetch_clear(s);
  if (s->pf == NULL && (s->pf = hs_calloc(s->threads, sizeof *s->pf)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  size_t n = s->n_files - s->next_file;
  if (n > s->threads) n = s->threads;
  /* The first window is one file: its pass one says whether the others are
   * worth threads. */
  if (s->pf_windows == 0) n = 1;
  s->pf_first = s->next_file;
  for (size_t k = 0; k < n; k++) {
    if ((s->pf[k].sub = sub_new(s, &s->pf[k])) == NULL) {
      prefetch_clear(s);
      return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    }
  }
  s->pf_n = n;
  hs_parallel_for(n, 1, s->pf_serial ? 1 : (uint32_t)n, window_worker, s);
  /* Threads for files whose pass one takes well under a millisecond (an
   * index that leaves a few candidates) cost more than they save: a thread
   * start, and on a busy machine a wait of milliseconds for a core. Such
   * windows are followed by serial ones, until a file costs more again. */
  int64_t cpu = 0;
  for (size_t k = 0; k < n; k++) cpu += s->pf[k].cpu_ns;
  s->pf_serial = cpu < (int64_t)n * HS_SCAN_PAR_FILE_NS;
  s->pf_windows++;
  return HS_OK;
}

/* Take the next file's pass one from the window: its counters and record,
 * its reader, its rows; open the output stream over them. */
static hs_status prefetch_take(scan_state *s, hs_error *err) {
  scan_prefetch *p = &s->pf[s->pf_next++];
  scan_state *sub = p->sub;
  size_t i = s->next_file++;
  s->path = s->files[i];
  s->cur_file = i;
  if (s->fst == NULL) {
    s->fst = hs_calloc(s->n_files, sizeof *s->fst);
    s->fst_cols = hs_calloc(s->n_files, sizeof *s->fst_cols);
    if (s->fst == NULL || s->fst_cols == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  }
  if (sub->n_fst == 1 && s->n_fst < s->n_files) {
    s->fst[s->n_fst] = sub->fst[0];
    s->fst_cols[s->n_fst] = sub->fst_cols[0];
    sub->fst_cols[0] = NULL;
    s->n_fst++;
  }
  hs_scan_stats *a = &s->stats;
  const hs_scan_stats *b = &sub->stats; /* its rows_returned are the matches collected */
  a->files_read += b->files_read;
  a->row_groups_read += b->row_groups_read;
  a->row_groups_pruned += b->row_groups_pruned;
  a->rows_scanned += b->rows_scanned;
  a->rows_matched += b->rows_matched;
  a->rows_deleted += b->rows_deleted;
  s->pstats.row_groups_indexed += sub->pstats.row_groups_indexed;
  s->pstats.pages += sub->pstats.pages;
  s->pstats.pages_pruned += sub->pstats.pages_pruned;
  s->pstats.rows_pruned += sub->pstats.rows_pruned;
  s->istats.files_indexed += sub->istats.files_indexed;
  s->istats.rows_candidate += sub->istats.rows_candidate;
  s->istats.rows_eliminated += sub->istats.rows_eliminated;
  if (sub->istats.files_index_rejected > 0 && s->istats.files_index_rejected == 0)
    memcpy(s->istats.index_rejected, sub->istats.index_rejected, sizeof s->istats.index_rejected);
  s->istats.files_index_rejected += sub->istats.files_index_rejected;
  if (p->st != HS_OK) {
    if (err != NULL) *err = sub->error;
    return p->st;
  }
  s->reader = sub->reader;
  sub->reader = NULL;
  hs_colmap_free(&s->omap);
  s->omap = sub->omap; /* adopted with the reader */
  memset(&sub->omap, 0, sizeof sub->omap);
  int64_t *r = s->rows;
  size_t cap = s->rows_cap;
  s->rows = p->rows;
  s->rows_cap = p->cap;
  p->rows = r;
  p->cap = cap;
  size_t n = p->n;
  sub_free(sub);
  p->sub = NULL;
  if (n == 0) return HS_OK;
  return open_stream(s, s->omap.read, s->omap.n_read, s->rows, n, s->batch_rows, true, err);
}

static int scan_get_next(struct ArrowArrayStream *stream, struct ArrowArray *out) {
  scan_state *s = stream->private_data;
  memset(out, 0, sizeof *out);
  if (s->error.status != HS_OK) return hs_status_errno(s->error.status);
  for (;;) {
    if (s->out_open && s->dbig.release != NULL) { /* live rows of the held batch */
      if (s->limit >= 0 && s->stats.rows_returned >= s->limit) return 0;
      if (drop_deleted(s, out, &s->error) != HS_OK) {
        hs_error_prefix(&s->error, "%s: ", s->path);
        return hs_status_errno(s->error.status);
      }
      if (out->release == NULL) continue; /* that span was all deleted */
    } else if (s->out_open) {
      int rc = s->out.get_next(&s->out, out);
      if (rc != 0) return scan_fail(s, s->path, &s->out, rc);
      if (out->release != NULL && !s->omap.identity) {
        /* The batch's rows in the file (v3 row lineage, lineage.h). */
        s->omap.lin->set = true;
        s->omap.lin->rows = NULL;
        if (s->del_filter)
          s->omap.lin->first = s->del_pos;
        else if (s->filter != NULL || s->del != NULL || s->ranged)
          s->omap.lin->rows = s->rows + s->out_pos;
        else
          s->omap.lin->first = s->out_pos;
        struct ArrowArray a;
        if (hs_colmap_apply(&s->omap, out, &a, &s->error) != HS_OK) {
          hs_error_prefix(&s->error, "%s: ", s->path);
          return hs_status_errno(s->error.status);
        }
        *out = a;
      }
      if (out->release != NULL && s->del_filter) { /* held, cut up above */
        if (hold_deleted(s, out, &s->error) != HS_OK) {
          hs_error_prefix(&s->error, "%s: ", s->path);
          return hs_status_errno(s->error.status);
        }
        continue;
      }
    }
    if (s->out_open) {
      if (out->release != NULL) {
        if (s->filter == NULL) {
          s->stats.rows_scanned += out->length;
          s->stats.rows_matched += out->length;
        }
        int64_t left = s->limit < 0 ? INT64_MAX : s->limit - s->stats.rows_returned;
        if (out->length > left) truncate_batch(out, left);
        if (out->length == 0) {
          out->release(out);
          memset(out, 0, sizeof *out);
          continue;
        }
        s->stats.rows_returned += out->length;
        s->last_file = s->cur_file;
        bool listed = s->filter != NULL || s->del != NULL || s->ranged; /* rows from s->rows */
        s->last_rows = listed && !s->del_filter ? s->rows + s->out_pos : NULL;
        s->last_first = listed ? -1 : s->out_pos;
        s->last_lazy = s->del_filter; /* listed when asked (list_lazy_rows) */
        s->last_n = out->length;
        s->out_pos += out->length;
        return 0;
      }
      close_stream(&s->out, &s->out_open);
    }
    if (s->limit >= 0 && s->stats.rows_returned >= s->limit) return 0;
    if (s->pass1_open) {
      struct ArrowArray b;
      int rc = s->pass1.get_next(&s->pass1, &b);
      if (rc != 0) return scan_fail(s, s->path, &s->pass1, rc);
      if (b.release == NULL) {
        close_stream(&s->pass1, &s->pass1_open);
        continue;
      }
      hs_status st = adapt_pass1(s, &b, &s->error);
      if (st == HS_OK) st = select_batch(s, &b, &s->error);
      if (b.release != NULL) b.release(&b);
      if (st != HS_OK) return hs_status_errno(s->error.status);
      continue;
    }
    if (s->reader != NULL && s->filter != NULL) {
      bool started = false;
      if (pass1_next(s, &started, &s->error) != HS_OK) return hs_status_errno(s->error.status);
      if (started) continue;
    }
    file_close(s);
    if (s->next_file == s->end_file) return 0; /* end: out->release == NULL */
    if (s->threads > 1) {
      if (s->pf_next == s->pf_n && prefetch_window(s, &s->error) != HS_OK)
        return hs_status_errno(s->error.status);
      if (prefetch_take(s, &s->error) != HS_OK) return hs_status_errno(s->error.status);
      continue;
    }
    if (file_open(s, s->next_file++, &s->error) != HS_OK) return hs_status_errno(s->error.status);
  }
}

static int coalesce_pull(void *ctx, struct ArrowArray *out) {
  return scan_get_next(ctx, out);
}

static int scan_get_next_coalesced(struct ArrowArrayStream *stream, struct ArrowArray *out) {
  scan_state *s = stream->private_data;
  hs_error e = {0};
  int rc = hs_arrow_coalescer_next(&s->coal, &s->schema, coalesce_pull, stream, out, &e);
  if (rc != 0 && s->error.status == HS_OK) s->error = e;
  if (rc == 0 && s->coal.merged) s->last_n = 0;
  return rc;
}

static int scan_get_schema(struct ArrowArrayStream *stream, struct ArrowSchema *out) {
  scan_state *s = stream->private_data;
  return hs_arrow_schema_copy(&s->schema, out, &s->error) == HS_OK ? 0 : 12;
}

static const char *scan_last_error(struct ArrowArrayStream *stream) {
  scan_state *s = stream->private_data;
  return s->error.status != HS_OK ? s->error.message : NULL;
}

static void scan_release(struct ArrowArrayStream *stream) {
  if (stream == NULL || stream->release == NULL) return;
  state_free(stream->private_data);
  stream->release = NULL;
  stream->private_data = NULL;
}

hs_status hs_scan_stats_get(const struct ArrowArrayStream *stream, hs_scan_stats *out,
                            hs_error *err) {
  if (stream == NULL || out == NULL || stream->release != scan_release) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan stats: not a table scan stream");
  }
  *out = ((const scan_state *)stream->private_data)->stats;
  return HS_OK;
}

hs_status hs_scan_page_stats_get(const struct ArrowArrayStream *stream, hs_scan_page_stats *out,
                                 hs_error *err) {
  if (stream == NULL || out == NULL || stream->release != scan_release) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan page stats: not a table scan stream");
  }
  *out = ((const scan_state *)stream->private_data)->pstats;
  return HS_OK;
}

hs_status hs_scan_index_stats_get(const struct ArrowArrayStream *stream, hs_scan_index_stats *out,
                                  hs_error *err) {
  if (stream == NULL || out == NULL || stream->release != scan_release) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan index stats: not a table scan stream");
  }
  *out = ((const scan_state *)stream->private_data)->istats;
  return HS_OK;
}

hs_status hs_scan_file_info_get(const struct ArrowArrayStream *stream, size_t i,
                                hs_scan_file_info *out, size_t *n, hs_error *err) {
  if (stream == NULL || stream->release != scan_release) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan file stats: not a table scan stream");
  }
  const scan_state *s = stream->private_data;
  if (n != NULL) *n = s->n_fst;
  if (out == NULL) return HS_OK;
  if (i >= s->n_fst) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan file stats: file %zu of %zu opened", i,
                        s->n_fst);
  }
  *out = s->fst[i];
  if (s->fst_open && i == s->n_fst - 1) fst_fill(s, out); /* still being read */
  return HS_OK;
}

hs_status hs_scan_batch_origin(const struct ArrowArrayStream *stream, hs_scan_origin *out,
                               hs_error *err) {
  if (stream == NULL || out == NULL || stream->release != scan_release) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan batch origin: not a table scan stream");
  }
  scan_state *s = stream->private_data;
  if (s->last_n == 0) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        s->coal.merged ? "scan batch origin: a merged batch (batch_rows_min)"
                                       : "scan batch origin: no batch emitted yet");
  }
  if (s->last_lazy) {
    hs_status st = list_lazy_rows(s, err);
    if (st != HS_OK) return st;
  }
  out->file = s->plan_idx[s->last_file];
  out->path = s->files[s->last_file];
  out->rows = s->last_rows;
  out->first = s->last_first;
  out->n = s->last_n;
  return HS_OK;
}

/* ------------------------------------------------------------- morsels */

hs_status hs_scan_morsels(const struct ArrowArrayStream *stream, int64_t rows, hs_scan_morsel **out,
                          size_t *n, hs_error *err) {
  *out = NULL;
  *n = 0;
  if (stream == NULL || stream->release != scan_release)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan morsels: not a table scan stream");
  const scan_state *s = stream->private_data;
  /* A limit ends early; hooks replace the output; a started stream has
   * moved on; an index's candidates are per file (a morsel would look
   * them up again). */
  if (s->limit >= 0 || s->hooks.on_rows != NULL || s->hooks.keep_file != NULL ||
      s->on_bitmap != NULL || s->next_file > 0 || s->frows == NULL)
    return HS_OK;
  for (size_t k = 0; k < s->ixp_n; k++)
    if (s->ixp[k] != NULL) return HS_OK;
  if (rows < 1) rows = 1;
  size_t total = 0;
  for (size_t i = 0; i < s->n_files; i++)
    if (s->frows[i] > 0) total += (size_t)(s->frows[i] / rows + (s->frows[i] % rows != 0));
  if (total == 0) return HS_OK;
  hs_scan_morsel *m = hs_malloc(total * sizeof *m);
  if (m == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  size_t k = 0;
  for (size_t i = 0; i < s->n_files; i++)
    for (int64_t r = 0; r<s->frows[i]; r = s->frows[i] - r> rows ? r + rows : s->frows[i])
      m[k++] = (hs_scan_morsel){i, r, s->frows[i] - r > rows ? r + rows : s->frows[i]};
  *out = m;
  *n = k;
  return HS_OK;
}

static int morsel_get_schema(struct ArrowArrayStream *stream, struct ArrowSchema *out) {
  scan_state *s = stream->private_data;
  return hs_arrow_schema_copy(s->want_out, out, &s->error) == HS_OK ? 0 : 12;
}

static void morsel_release(struct ArrowArrayStream *stream) {
  if (stream == NULL || stream->release == NULL) return;
  sub_free(stream->private_data);
  stream->release = NULL;
  stream->private_data = NULL;
}

hs_status hs_scan_morsel_open(const struct ArrowArrayStream *stream, const hs_scan_morsel *m,
                              struct ArrowArrayStream *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  if (stream == NULL || stream->release != scan_release)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan morsel: not a table scan stream");
  const scan_state *s = stream->private_data;
  if (m->file >= s->n_files || m->first < 0 || m->end < m->first)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan morsel: no file %zu rows [%lld, %lld)",
                        m->file, (long long)m->first, (long long)m->end);
  scan_state *sub = sub_new(s, NULL);
  if (sub == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  memset(&sub->hooks, 0, sizeof sub->hooks);
  sub->next_file = m->file;
  sub->end_file = m->file + 1;
  /* A whole file reads as in the serial scan (no row selection). */
  sub->ranged = m->first > 0 || m->end < s->frows[m->file];
  sub->r_lo = m->first;
  sub->r_hi = m->end;
  out->get_schema = morsel_get_schema;
  out->get_next = scan_get_next;
  out->get_last_error = scan_last_error;
  out->release = morsel_release;
  out->private_data = sub;
  return HS_OK;
}

hs_status hs_scan_morsel_done(struct ArrowArrayStream *stream,
                              const struct ArrowArrayStream *morsel, hs_error *err) {
  if (stream == NULL || stream->release != scan_release || morsel == NULL ||
      morsel->release != morsel_release)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan morsel: not a table scan stream");
  scan_state *s = stream->private_data;
  const scan_state *sub = morsel->private_data;
  hs_scan_stats *a = &s->stats;
  const hs_scan_stats *b = &sub->stats;
  a->files_read += b->files_read;
  a->row_groups_read += b->row_groups_read;
  a->row_groups_pruned += b->row_groups_pruned;
  a->rows_scanned += b->rows_scanned;
  a->rows_matched += b->rows_matched;
  a->rows_returned += b->rows_returned;
  a->rows_deleted += b->rows_deleted;
  s->pstats.row_groups_indexed += sub->pstats.row_groups_indexed;
  s->pstats.pages += sub->pstats.pages;
  s->pstats.pages_pruned += sub->pstats.pages_pruned;
  s->pstats.rows_pruned += sub->pstats.rows_pruned;
  return HS_OK;
}

/* ------------------------------------------------------------------ open */

/* Record the registered index files of the filter columns of data file
 * `pf` (just added as files[n_files - 1]) in s->ixp. */
static hs_status index_paths(const hs_table *t, const hs_iceberg_schema *schema,
                             const hs_table_index_registry *reg, const hs_table_plan_file *pf,
                             scan_state *s, hs_error *err) {
  if (reg == NULL || reg->n_entries == 0 || s->n_fcols == 0) return HS_OK;
  size_t need = s->n_files * s->n_fcols;
  char **nv = hs_realloc(s->ixp, need * sizeof *nv);
  if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  s->ixp = nv;
  char **nn = hs_realloc(s->ixn, need * sizeof *nn);
  if (nn == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  s->ixn = nn;
  for (size_t k = s->ixp_n; k < need; k++) nv[k] = nn[k] = NULL;
  s->ixp_n = need;
  char **row = nv + (s->n_files - 1) * s->n_fcols;
  char **nrow = nn + (s->n_files - 1) * s->n_fcols;
  for (size_t k = 0; k < s->n_fcols; k++) {
    int32_t fid = -1; /* the filter column's field in the read schema */
    for (size_t j = 0; j < schema->root.n_fields; j++)
      if (strcmp(schema->root.fields[j].name, s->fcols[k]) == 0) fid = schema->root.fields[j].id;
    const char *stored = NULL;
    const char *rec = hs_table_index_lookup_field(reg, pf->path, pf->data_file->file_size_in_bytes,
                                                  s->fcols[k], fid, &stored);
    if (rec == NULL || stored == NULL) continue;
    if ((nrow[k] = hs_strdup(stored)) == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    hs_status st = hs_table_resolve_path(t, rec, "index registry", &row[k], err);
    if (st == HS_ERR_NOMEM) return st;
    if (st != HS_OK) { /* outside the table: never opened, not used */
      row[k] = NULL;
      if (err != NULL) memset(err, 0, sizeof *err);
    }
  }
  return HS_OK;
}

/* Drop files whose manifest statistics prove the filter false. */
static hs_status prune_files(const hs_table *t, const hs_iceberg_schema *schema,
                             const hs_table_plan *plan, const hs_expr *e,
                             const struct ArrowSchema *tschema, const hs_table_index_registry *reg,
                             scan_state *s, hs_error *err) {
  if (schema == NULL) {
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: no current schema", t->metadata_path);
  }
  size_t n = (size_t)tschema->n_children;
  hs_expr_stats *stats = hs_malloc(sizeof(hs_expr_stats) * (n ? n : 1));
  bool *used = hs_malloc(sizeof(bool) * (n ? n : 1));
  if (stats == NULL || used == NULL) {
    hs_free(stats);
    hs_free(used);
    return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  }
  for (size_t i = 0; i < n; i++) used[i] = e == NULL || hs_expr_uses_field(e, (int64_t)i);
  hs_arena scratch;
  hs_arena_init(&scratch);
  hs_status st = HS_OK;
  for (size_t f = 0; st == HS_OK && f < plan->n_files; f++) {
    const hs_table_plan_file *pf = &plan->files[f];
    bool may = true;
    if (e != NULL) {
      const hs_iceberg_partition_spec *spec = NULL;
      for (size_t k = 0; k < t->meta.n_specs; k++)
        if (t->meta.specs[k].spec_id == pf->spec_id) spec = &t->meta.specs[k];
      if (spec != NULL && spec->n_fields != pf->data_file->n_partition) spec = NULL;
      st = hs_scan_file_stats(&t->meta, schema, spec, tschema, used, pf->data_file, &scratch, stats,
                              err);
      if (st == HS_OK) st = hs_expr_may_match(e, stats, (int64_t)n, &may, err);
      hs_arena_reset(&scratch);
    }
    if (st != HS_OK) break;
    if (!may) {
      s->stats.files_pruned++;
      continue;
    }
    if (hs_table_plan_file_live(pf) <= 0) continue; /* every row deleted */
    if (s->hooks.keep_file != NULL &&
        !s->hooks.keep_file(s->hooks.ctx, f, pf->path, pf->data_file->file_size_in_bytes))
      continue;
    roaring_bitmap_t **nd = hs_realloc(s->fdel, (s->n_files + 1) * sizeof *nd);
    if (nd == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      break;
    }
    s->fdel = nd;
    nd[s->n_files] = NULL;
    s->n_fdel = s->n_files + 1;
    if (pf->deleted != NULL && (nd[s->n_files] = roaring_bitmap_copy(pf->deleted)) == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      break;
    }
    size_t *np = hs_realloc(s->plan_idx, (s->n_files + 1) * sizeof *np);
    if (np == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      break;
    }
    s->plan_idx = np;
    np[s->n_files] = f;
    int64_t *ns = hs_realloc(s->fsize, (s->n_files + 1) * sizeof *ns);
    if (ns != NULL) s->fsize = ns;
    int64_t *nr = ns != NULL ? hs_realloc(s->frows, (s->n_files + 1) * sizeof *nr) : NULL;
    if (nr == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      break;
    }
    s->frows = nr;
    ns[s->n_files] = pf->data_file->file_size_in_bytes;
    nr[s->n_files] = pf->data_file->record_count;
    int64_t *nl = hs_realloc(s->flin, (s->n_files + 1) * 2 * sizeof *nl);
    if (nl == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      break;
    }
    s->flin = nl;
    nl[2 * s->n_files] = pf->data_file->has_first_row_id ? pf->data_file->first_row_id : -1;
    nl[2 * s->n_files + 1] = pf->data_seq;
    char **nv = hs_realloc(s->files, (s->n_files + 1) * sizeof *nv);
    if (nv == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      break;
    }
    s->files = nv;
    if ((nv[s->n_files] = hs_strdup(pf->path)) == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      break;
    }
    s->n_files++;
    if ((st = index_paths(t, schema, reg, pf, s, err)) != HS_OK) break;
  }
  hs_arena_reset(&scratch);
  hs_free(stats);
  hs_free(used);
  return st;
}

/* The output schema: the read schema's projection, with the first
 * surviving file's own type for each column it holds unpromoted (so that
 * batches come out as the reader makes them); every later file must read
 * as that (schema_map.c). */
static hs_status output_schema(scan_state *s, const struct ArrowSchema *tschema,
                               const char *metadata_path, hs_error *err) {
  struct ArrowSchema want;
  hs_status st = project_schema(tschema, s->proj, s->n_proj, metadata_path, &want, err);
  if (st != HS_OK || s->n_files == 0) {
    if (st == HS_OK) s->schema = want;
    return st;
  }
  hs_parquet_reader *r = NULL;
  struct ArrowSchema full;
  memset(&full, 0, sizeof full);
  st = hs_parquet_reader_open(s->files[0], &r, err);
  if (st == HS_OK) st = hs_parquet_reader_schema(r, &full, err);
  hs_parquet_reader_free(r);
  hs_colmap m;
  if (st == HS_OK) st = hs_colmap_build(s->ctx, &want, &full, false, s->files[0], &m, err);
  if (st == HS_OK) {
    s->schema = m.out;
    memset(&m.out, 0, sizeof m.out);
    hs_colmap_free(&m);
  }
  hs_arrow_schema_release(&full);
  hs_arrow_schema_release(&want);
  return st;
}

hs_status hs_table_scan_query(hs_table *table, const hs_scan_options *opts,
                              struct ArrowArrayStream *out, hs_error *err) {
  return hs_table_scan_query_hooked(table, opts, NULL, out, err);
}

static hs_status scan_query(hs_table *table, const hs_scan_options *opts,
                            const hs_scan_hooks *hooks, hs_scan_bitmap_fn on_bitmap,
                            struct ArrowArrayStream *out, hs_error *err);

hs_status hs_table_scan_query_hooked(hs_table *table, const hs_scan_options *opts,
                                     const hs_scan_hooks *hooks, struct ArrowArrayStream *out,
                                     hs_error *err) {
  return scan_query(table, opts, hooks, NULL, out, err);
}

static hs_status scan_query(hs_table *table, const hs_scan_options *opts,
                            const hs_scan_hooks *hooks, hs_scan_bitmap_fn on_bitmap,
                            struct ArrowArrayStream *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_scan_options defaults;
  if (opts == NULL) {
    hs_scan_options_init(&defaults);
    opts = &defaults;
  }
  if ((opts->columns == NULL && opts->n_columns > 0) || opts->batch_rows_max < 0 ||
      opts->batch_rows_min < 0 || opts->limit < -1) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "scan: invalid options (NULL columns with a count, negative batch size "
                        "or limit)");
  }
  if (opts->columns != NULL && opts->n_columns == 0) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan: an empty column list");
  }
  scan_state *s = hs_calloc(1, sizeof *s);
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  hs_arena_init(&s->page_arena);
  if (hooks != NULL) s->hooks = *hooks;
  s->on_bitmap = on_bitmap;
  s->limit = opts->limit;
  s->batch_rows = opts->batch_rows_max ? opts->batch_rows_max : SCAN_BATCH_ROWS_DEFAULT;
  hs_arrow_coalescer_init(&s->coal, opts->batch_rows_min);
  struct ArrowSchema tschema;
  memset(&tschema, 0, sizeof tschema);
  hs_expr *e = NULL;
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  /* The snapshot's own schema (time travel reads with it). */
  const hs_iceberg_schema *rschema = hs_table_read_schema(table, opts->snapshot_id);
  hs_status st = hs_table_read_schema_arrow(table, opts->snapshot_id, &tschema, err);
  /* v3 row-lineage columns, when named (src/table/lineage.h). */
  if (st == HS_OK)
    st = hs_lineage_schema_add(table, opts->columns, opts->columns ? opts->n_columns : 0, NULL,
                               &tschema, err);
  /* A filter on them reads them too (pass one only: a NULL projection is
   * the columns before these). */
  int64_t n_all = st == HS_OK ? tschema.n_children : 0;
  if (st == HS_OK && opts->filter != NULL)
    st = hs_lineage_schema_add(table, NULL, 0, opts->filter, &tschema, err);
  if (st == HS_OK) st = hs_colmap_ctx_init(table, rschema, &s->ctx_own, err);
  s->ctx = &s->ctx_own;
  s->want_out = &s->schema;
  s->want_f = &s->fwant_own;
  /* Projection: named columns must exist in the table. */
  for (size_t i = 0; st == HS_OK && i < (opts->columns ? opts->n_columns : (size_t)n_all); i++) {
    const char *name = opts->columns ? opts->columns[i] : tschema.children[i]->name;
    if (name == NULL) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "scan: column %zu is NULL", i);
      break;
    }
    st = names_push(&s->proj, &s->n_proj, name, err);
  }
  if (st == HS_OK && s->n_proj == 0) {
    st =
        hs_error_set(err, HS_ERR_INVALID_ARG, "%s: the table has no columns", table->metadata_path);
  }
  if (st == HS_OK && opts->filter != NULL && opts->filter[strspn(opts->filter, " \t\r\n")] != 0) {
    st = hs_expr_parse(opts->filter, &tschema, &e, NULL, err);
    if (st == HS_OK && (s->filter = hs_strdup(opts->filter)) == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    for (int64_t i = 0; st == HS_OK && i < tschema.n_children; i++)
      if (hs_expr_uses_field(e, i))
        st = names_push(&s->fcols, &s->n_fcols, tschema.children[i]->name, err);
    /* A filter without columns (a constant) still needs the row counts. */
    if (st == HS_OK && s->n_fcols == 0) st = names_push(&s->fcols, &s->n_fcols, s->proj[0], err);
    if (st == HS_OK)
      st = project_schema(&tschema, s->fcols, s->n_fcols, table->metadata_path, &s->fwant_own, err);
  }
  /* A caller's plan of the same snapshot (hooks) saves reading the manifests again. */
  const hs_table_plan *pl = hooks != NULL && hooks->plan != NULL ? hooks->plan : &plan;
  if (st == HS_OK && pl == &plan) st = hs_table_plan_files(table, opts->snapshot_id, &plan, err);
  if (st == HS_OK) {
    s->stats.manifests_read = pl->n_manifests;
    s->stats.delete_files = pl->n_delete_files;
    s->stats.files_planned = (int64_t)pl->n_files;
    /* Indexes only matter with a filter; the registry is keyed by data
     * file, so any snapshot uses exactly its own files' indexes. */
    hs_table_index_registry reg;
    memset(&reg, 0, sizeof reg);
    const hs_table_index_registry *use = &reg;
    if (e != NULL && hooks != NULL && hooks->reg != NULL)
      use = hooks->reg; /* the caller's, loaded once per query */
    else if (e != NULL)
      st = hs_table_index_registry_load(table, NULL, &reg, err);
    if (st != HS_OK && st != HS_ERR_NOMEM) { /* a broken registry: scan unindexed */
      if (err != NULL) memset(err, 0, sizeof *err);
      st = HS_OK;
    }
    if (st == HS_OK) st = prune_files(table, rschema, pl, e, &tschema, use, s, err);
    hs_table_index_registry_free(&reg);
  }
  if (st == HS_OK) st = output_schema(s, &tschema, table->metadata_path, err);
  hs_table_plan_free(&plan);
  hs_expr_free(e);
  hs_arrow_schema_release(&tschema);
  if (st != HS_OK) {
    s->hooks.cand_free = NULL; /* not opened: the caller keeps cand_ctx */
    state_free(s);
    return st;
  }
  /* Pass one runs ahead on several files at once (prefetch_window) when
   * nothing can end the scan early. */
  if (s->filter != NULL && s->hooks.on_rows == NULL && s->hooks.on_cand == NULL && s->limit < 0 &&
      s->n_files >= 2) {
    s->threads = hs_parallel_cores();
    if (s->threads > s->n_files) s->threads = (uint32_t)s->n_files;
  }
  s->end_file = s->n_files;
  out->get_schema = scan_get_schema;
  out->get_next = s->coal.rows_min > 0 ? scan_get_next_coalesced : scan_get_next;
  out->get_last_error = scan_last_error;
  out->release = scan_release;
  out->private_data = s;
  return HS_OK;
}

static hs_status scan_rows(hs_table *table, int64_t snapshot_id, const char *filter,
                           const hs_scan_hooks *hooks, hs_scan_bitmap_fn on_bitmap,
                           const char *what, hs_scan_stats *stats, hs_error *err);

hs_status hs_table_scan_rows(hs_table *table, int64_t snapshot_id, const char *filter,
                             const hs_scan_hooks *hooks, const char *what, hs_scan_stats *stats,
                             hs_error *err) {
  return scan_rows(table, snapshot_id, filter, hooks, NULL, what, stats, err);
}

hs_status hs_table_scan_rows_bitmap(hs_table *table, int64_t snapshot_id, const char *filter,
                                    const hs_scan_hooks *hooks, hs_scan_bitmap_fn on_bitmap,
                                    const char *what, hs_scan_stats *stats, hs_error *err) {
  return scan_rows(table, snapshot_id, filter, hooks, on_bitmap, what, stats, err);
}

static hs_status scan_rows(hs_table *table, int64_t snapshot_id, const char *filter,
                           const hs_scan_hooks *hooks, hs_scan_bitmap_fn on_bitmap,
                           const char *what, hs_scan_stats *stats, hs_error *err) {
  if (hooks == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "scan rows: no hooks");
  struct ArrowSchema rs;
  hs_status st = hs_table_read_schema_arrow(table, snapshot_id, &rs, err);
  if (st != HS_OK) return st;
  const char *col = rs.n_children > 0 ? rs.children[0]->name : NULL;
  hs_scan_options so;
  hs_scan_options_init(&so);
  so.snapshot_id = snapshot_id;
  so.columns = &col; /* never read: on_rows replaces the output */
  so.n_columns = 1;
  so.filter = filter;
  struct ArrowArrayStream s;
  st = col == NULL
           ? hs_error_set(err, HS_ERR_SCHEMA, "%s: the table has no columns", table->metadata_path)
           : scan_query(table, &so, hooks, on_bitmap, &s, err);
  rs.release(&rs);
  if (st != HS_OK) return st;
  struct ArrowArray b;
  memset(&b, 0, sizeof b);
  int rc = s.get_next(&s, &b);
  if (rc != 0) {
    const char *m = s.get_last_error(&s);
    st = hs_error_set(err, hs_status_of_errno(rc), "%s%s%s", what ? what : "", what ? ": " : "",
                      m ? m : "scan failed");
  } else if (b.release != NULL) {
    b.release(&b);
    st = hs_error_set(err, HS_ERR_INTERNAL, "%s%sa rows-only scan emitted rows", what ? what : "",
                      what ? ": " : "");
  }
  hs_error local = {0};
  if (stats != NULL && hs_scan_stats_get(&s, stats, &local) != HS_OK)
    memset(stats, 0, sizeof *stats);
  s.release(&s);
  return st;
}

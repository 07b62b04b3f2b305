/*
 * scan_pages.c — page-level pruning for the table scan (scan.c): which
 * rows of a row group the Parquet page indexes (ColumnIndex +
 * OffsetIndex, read by src/parquet/page_index.c) cannot rule out.
 *
 * Pages of different columns start at different rows. We cut the row
 * group at the union of all page boundaries of the indexed filter
 * columns; inside one such piece every column's values come from exactly
 * one of its pages. For each piece we build per-column statistics from
 * those pages and ask hs_expr_may_match, the same conservative three-valued
 * evaluation used for row groups and files. A piece's rows are a subset of
 * each page's rows, so page statistics are valid (if loose) bounds for
 * the piece, column by column, and may_match treats columns independently:
 * AND, OR and NOT come out right without any range algebra here.
 *
 * Conservative rules, as for row-group statistics:
 *  - only flat columns (top-level, non-repeated leaves) use page indexes;
 *    others keep their row-group statistics for every piece;
 *  - min/max are converted by hs_scan_pq_scalar into the column's Arrow
 *    type; unconvertible bounds are dropped; string/binary/unsigned bounds
 *    are used only when the file declares column orders (the index is in
 *    the column's own order then), otherwise they are dropped;
 *  - a null page has no bounds and only nulls; null counts are used when
 *    present and not above the page's rows;
 *  - NaN counts are unknown (page indexes have none), so for floats the
 *    max is taken as NaN by hs_expr_may_match and only lower bounds prune;
 *  - truncated binary bounds (allowed by PageIndex.md) are still valid
 *    bounds: the spec requires min <= every value <= max in column order;
 *  - a missing or malformed index (bad offsets, page counts that disagree,
 *    rows out of order) means "no page information" for that column: the
 *    scan never fails or drops rows because of it.
 */
#include <stdlib.h>
#include <string.h>

#include "scan.h"

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct page_col {
  int64_t field;                 /* index in `fields` */
  const hs_pq_schema_element *e; /* the leaf */
  hs_arrow_type at;
  const hs_pq_column_index *ci;
  const hs_pq_offset_index *oi;
  uint32_t cur;  /* page covering the current piece */
  bool *touched; /* per page: some surviving piece lies in it */
} page_col;

/* Statistics of page c->cur (rows [first, end)) into *s. */
static void page_stats(const page_col *c, bool typed, int64_t first, int64_t end,
                       hs_expr_stats *s) {
  uint32_t p = c->cur;
  int64_t rows = end - first;
  hs_expr_stats_init(s);
  s->row_count = rows;
  if (c->ci->null_pages[p]) {
    s->null_count = rows;
    return;
  }
  if (c->ci->has_null_counts && c->ci->null_counts[p] <= rows)
    s->null_count = c->ci->null_counts[p];
  s->has_bounds = hs_scan_pq_scalar(c->e, &c->at, c->ci->min_values[p], typed, &s->min) &&
                  hs_scan_pq_scalar(c->e, &c->at, c->ci->max_values[p], typed, &s->max);
}

static hs_status nomem(hs_error *err) {
  return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory (page index)");
}

hs_status hs_scan_page_ranges_compute(hs_source *src, const hs_pq_file_metadata *md, uint32_t g,
                                      const struct ArrowSchema *fields, const hs_expr *e,
                                      hs_arena *arena, hs_scan_page_ranges *out, hs_error *err) {
  return hs_scan_page_ranges_compute_names(src, md, g, fields, NULL, e, arena, out, err);
}

hs_status hs_scan_page_ranges_compute_names(hs_source *src, const hs_pq_file_metadata *md,
                                            uint32_t g, const struct ArrowSchema *fields,
                                            const char *const *names, const hs_expr *e,
                                            hs_arena *arena, hs_scan_page_ranges *out,
                                            hs_error *err) {
  memset(out, 0, sizeof *out);
  const hs_pq_row_group *rg = g < md->n_row_groups ? &md->row_groups[g] : NULL;
  int64_t rg_rows = rg != NULL ? rg->num_rows : 0;
  size_t nf = (size_t)fields->n_children;
  out->ranges = hs_arena_alloc(arena, 2 * sizeof(int64_t));
  hs_expr_stats *stats = hs_arena_alloc(arena, sizeof(hs_expr_stats) * (nf ? nf : 1));
  page_col *cols = hs_arena_alloc(arena, sizeof(page_col) * (nf ? nf : 1));
  if (out->ranges == NULL || stats == NULL || cols == NULL) return nomem(err);
  out->ranges[0] = 0;
  out->ranges[1] = rg_rows;
  out->n = rg_rows > 0;
  out->rows = rg_rows > 0 ? rg_rows : 0;
  if (rg == NULL || rg_rows <= 0) return HS_OK;

  /* Row-group statistics for every column; indexed columns override. */
  hs_scan_row_group_stats_names(md, g, fields, names, stats);
  size_t nc = 0;
  size_t n_bounds = 0;
  for (size_t i = 0; i < nf; i++) {
    if (!hs_expr_uses_field(e, (int64_t)i)) continue;
    const struct ArrowSchema *f = fields->children[i];
    const hs_pq_schema_element *el = NULL;
    const char *fname = names != NULL ? names[i] : f->name;
    int32_t leaf = fname ? hs_scan_pq_top_leaf(md, fname, &el) : -1;
    if (leaf < 0 || (uint32_t)leaf >= rg->n_columns || el == NULL ||
        (el->has_repetition && el->repetition == HS_PQ_REPEATED)) {
      continue;
    }
    page_col *c = &cols[nc];
    memset(c, 0, sizeof *c);
    if (hs_arrow_type_parse(f->format, &c->at, NULL) != HS_OK) continue;
    hs_pq_column_index *ci = NULL;
    hs_pq_offset_index *oi = NULL;
    hs_error local = {0};
    hs_status st =
        hs_parquet_page_index_read(src, &rg->columns[leaf], rg_rows, arena, &ci, &oi, &local);
    if (st == HS_ERR_NOMEM) return nomem(err);
    if (st != HS_OK || ci == NULL || oi == NULL) continue; /* no usable index: row-group stats */
    c->field = (int64_t)i;
    c->e = el;
    c->ci = ci;
    c->oi = oi;
    c->touched = hs_arena_alloc(arena, sizeof(bool) * oi->n_pages);
    if (c->touched == NULL) return nomem(err);
    memset(c->touched, 0, sizeof(bool) * oi->n_pages);
    n_bounds += oi->n_pages;
    out->pages += oi->n_pages;
    nc++;
  }
  if (nc == 0) return HS_OK;
  out->indexed = true;

  /* Piece boundaries: every page start of every indexed column, plus the end. */
  int64_t *b = hs_arena_alloc(arena, sizeof(int64_t) * (n_bounds + 1));
  if (b == NULL) return nomem(err);
  size_t nb = 0;
  for (size_t k = 0; k < nc; k++)
    for (uint32_t p = 0; p < cols[k].oi->n_pages; p++)
      b[nb++] = cols[k].oi->page_locations[p].first_row_index;
  qsort(b, nb, sizeof *b, cmp_i64);
  size_t u = 0;
  for (size_t k = 0; k < nb; k++)
    if (u == 0 || b[k] != b[u - 1]) b[u++] = b[k];
  b[u] = rg_rows; /* page_index.c checked every start lies in [0, rg_rows) */
  size_t n_pieces = u;

  /* At most one range per piece. */
  int64_t *r = hs_arena_alloc(arena, sizeof(int64_t) * 2 * n_pieces);
  if (r == NULL) return nomem(err);
  bool typed = md->n_column_orders > 0;
  size_t nr = 0;
  int64_t kept_rows = 0;
  for (size_t k = 0; k < n_pieces; k++) {
    int64_t lo = b[k], hi = b[k + 1];
    for (size_t j = 0; j < nc; j++) {
      page_col *c = &cols[j];
      while (c->cur + 1 < c->oi->n_pages && c->oi->page_locations[c->cur + 1].first_row_index <= lo)
        c->cur++;
      int64_t first, end;
      hs_parquet_page_rows(c->oi, c->cur, rg_rows, &first, &end);
      page_stats(c, typed, first, end, &stats[c->field]);
    }
    bool may = true;
    hs_status st = hs_expr_may_match(e, stats, (int64_t)nf, &may, err);
    if (st != HS_OK) return st;
    if (!may) continue;
    for (size_t j = 0; j < nc; j++) cols[j].touched[cols[j].cur] = true;
    kept_rows += hi - lo;
    if (nr > 0 && r[2 * nr - 1] == lo) {
      r[2 * nr - 1] = hi; /* extends the previous range */
    } else {
      r[2 * nr] = lo;
      r[2 * nr + 1] = hi;
      nr++;
    }
  }
  for (size_t j = 0; j < nc; j++)
    for (uint32_t p = 0; p < cols[j].oi->n_pages; p++) out->pages_pruned += !cols[j].touched[p];
  out->ranges = r;
  out->n = nr;
  out->rows = kept_rows;
  return HS_OK;
}

/*
 * page_index.c — reading a column chunk's page index (PageIndex.md):
 * the ColumnIndex (per-page min/max, null pages, null counts) and the
 * OffsetIndex (per-page file offset, size and first row). The query layer
 * prunes pages with them (src/query/scan_pages.c); the reader itself only
 * uses the OffsetIndex to skip pages (reader.c).
 *
 * Both structures live outside the footer, at offsets the footer's column
 * chunk names. Every read is bounded: offset and length are checked
 * against the source size before anything is allocated, and a declared
 * length is capped (HS_PQ_PAGE_INDEX_MAX) so a hostile footer cannot make
 * us allocate gigabytes. The parsed index is validated against the row
 * group (see parquet.h) so that callers can map pages to rows without
 * further checks.
 */
#include <stdio.h>
#include <string.h>

#include "parquet.h"

/* Largest index we read: 64 MiB is ~ a million pages. */
#define HS_PQ_PAGE_INDEX_MAX ((size_t)64 << 20)

/* "a.b.c" of the chunk's path, for messages (truncated to the buffer). */
static const char *chunk_name(const hs_pq_column_chunk *cc, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = 0;
  if (!cc->has_meta_data) return "?";
  for (uint32_t i = 0; i < cc->meta_data.n_path && at + 1 < cap; i++) {
    const char *p = cc->meta_data.path_in_schema[i] ? cc->meta_data.path_in_schema[i] : "";
    int n = snprintf(buf + at, cap - at, "%s%s", i ? "." : "", p);
    if (n < 0) break;
    at += (size_t)n < cap - at ? (size_t)n : cap - at - 1;
  }
  return buf[0] ? buf : "?";
}

/* Bytes [off, off + len) of `src` into the arena, bounded by its size. */
static hs_status read_range(hs_source *src, int64_t off, int32_t len, const char *what,
                            const char *col, hs_arena *arena, uint8_t **out, hs_error *err) {
  uint64_t size = hs_source_size(src);
  if (off < 0 || len <= 0 || (uint64_t)off > size || (uint64_t)len > size - (uint64_t)off ||
      (size_t)len > HS_PQ_PAGE_INDEX_MAX) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "column '%s': %s at offset %lld, length %d lies outside the file "
                        "(%llu bytes) or is too large",
                        col, what, (long long)off, (int)len, (unsigned long long)size);
  }
  *out = hs_arena_alloc(arena, (size_t)len);
  if (*out == NULL) return hs_error_set(err, HS_ERR_NOMEM, "column '%s': out of memory", col);
  return hs_source_read(src, (uint64_t)off, (size_t)len, *out, err);
}

void hs_parquet_page_rows(const hs_pq_offset_index *oi, uint32_t p, int64_t rg_rows, int64_t *first,
                          int64_t *end) {
  *first = oi->page_locations[p].first_row_index;
  *end = p + 1 < oi->n_pages ? oi->page_locations[p + 1].first_row_index : rg_rows;
}

static hs_status check_offset_index(const hs_pq_offset_index *oi, int64_t rg_rows, const char *col,
                                    int64_t at, hs_error *err) {
  if (oi->n_pages == 0 || (int64_t)oi->n_pages > (rg_rows > 0 ? rg_rows : 1)) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "column '%s': offset index at offset %lld lists %u pages for %lld rows",
                        col, (long long)at, oi->n_pages, (long long)rg_rows);
  }
  if (oi->page_locations[0].first_row_index != 0) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "column '%s': offset index at offset %lld: first page starts at row %lld",
                        col, (long long)at, (long long)oi->page_locations[0].first_row_index);
  }
  for (uint32_t p = 1; p < oi->n_pages; p++) {
    int64_t prev = oi->page_locations[p - 1].first_row_index;
    int64_t cur = oi->page_locations[p].first_row_index;
    if (cur <= prev || cur >= rg_rows) {
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "column '%s': offset index at offset %lld: page %u starts at row %lld "
                          "(previous %lld, row group of %lld rows)",
                          col, (long long)at, p, (long long)cur, (long long)prev,
                          (long long)rg_rows);
    }
  }
  return HS_OK;
}

static hs_status check_column_index(const hs_pq_column_index *ci, const hs_pq_offset_index *oi,
                                    const char *col, int64_t at, hs_error *err) {
  if (ci->n_pages != oi->n_pages ||
      (ci->n_pages > 0 &&
       (ci->null_pages == NULL || ci->min_values == NULL || ci->max_values == NULL)) ||
      (ci->has_null_counts && ci->null_counts == NULL)) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "column '%s': column index at offset %lld describes %u pages, the offset "
                        "index %u",
                        col, (long long)at, ci->n_pages, oi->n_pages);
  }
  for (uint32_t p = 0; ci->has_null_counts && p < ci->n_pages; p++) {
    /* A page's null count may exceed its rows only in repeated columns
     * (nulls are counted per value); callers prune only flat ones, and
     * those check null_count <= rows themselves. Negative is never valid. */
    if (ci->null_counts[p] < 0) {
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "column '%s': column index at offset %lld: page %u null count %lld", col,
                          (long long)at, p, (long long)ci->null_counts[p]);
    }
  }
  return HS_OK;
}

hs_status hs_parquet_page_index_read(hs_source *src, const hs_pq_column_chunk *cc, int64_t rg_rows,
                                     hs_arena *arena, hs_pq_column_index **ci,
                                     hs_pq_offset_index **oi, hs_error *err) {
  *ci = NULL;
  *oi = NULL;
  char name[256];
  const char *col = chunk_name(cc, name, sizeof name);
  if (!cc->has_offset_index || cc->offset_index_length == 0) return HS_OK;
  if (rg_rows <= 0) return HS_OK; /* nothing to index */
  uint8_t *buf = NULL;
  hs_status st = read_range(src, cc->offset_index_offset, cc->offset_index_length, "offset index",
                            col, arena, &buf, err);
  if (st != HS_OK) return st;
  hs_pq_offset_index *o = hs_arena_alloc(arena, sizeof *o);
  if (o == NULL) return hs_error_set(err, HS_ERR_NOMEM, "column '%s': out of memory", col);
  st = hs_pq_offset_index_parse(buf, (size_t)cc->offset_index_length, arena, o, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "column '%s': offset index at offset %lld: ", col,
                    (long long)cc->offset_index_offset);
    return st;
  }
  if ((st = check_offset_index(o, rg_rows, col, cc->offset_index_offset, err)) != HS_OK) return st;
  *oi = o;
  /* A column index is only useful with the offset index mapping its
   * pages to rows, so it is read only when that one is present. */
  if (!cc->has_column_index || cc->column_index_length == 0) return HS_OK;
  st = read_range(src, cc->column_index_offset, cc->column_index_length, "column index", col, arena,
                  &buf, err);
  if (st != HS_OK) return st;
  hs_pq_column_index *c = hs_arena_alloc(arena, sizeof *c);
  if (c == NULL) return hs_error_set(err, HS_ERR_NOMEM, "column '%s': out of memory", col);
  st = hs_pq_column_index_parse(buf, (size_t)cc->column_index_length, arena, c, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "column '%s': column index at offset %lld: ", col,
                    (long long)cc->column_index_offset);
    return st;
  }
  st = check_column_index(c, o, col, cc->column_index_offset, err);
  if (st != HS_OK) return st;
  *ci = c;
  return HS_OK;
}

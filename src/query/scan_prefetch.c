/*
 * scan_prefetch.c — a filtered scan on an object store, once a file's
 * scalar indexes gave its candidate rows: the pages those rows live in,
 * for every column the scan will read of them (the filter's, then the
 * projection's), with their chunks' dictionary pages, brought into the
 * object cache in one parallel wave (hs_store_prefetch; pages up to 64 KiB
 * exactly, `exact`), instead of one 64 KiB block per round trip as the
 * reader meets them. The offset indexes it needs are read first (one wave
 * when the footer's tail, which the index stream packs, lacks them).
 * Local files do nothing (memory-mapped).
 *
 * Best effort throughout: a chunk without an offset index, or one that
 * does not parse, is left to the reads, which fetch it themselves and word
 * any error. Owns nothing after it returns.
 */
#include <stdlib.h>
#include <string.h>

#include "../io/store.h"
#include "scan.h"

/* At most this many candidate rows a file: more are a dense read, which
 * the reader's own chunk reads serve. */
#define PF_MAX_ROWS 65536

typedef struct pf_list {
  hs_store_prefetch_item *v;
  size_t n, cap;
} pf_list;

static void pf_add(pf_list *l, const char *uri, int64_t offset, int64_t len, bool exact) {
  if (offset < 0 || len <= 0) return;
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    hs_store_prefetch_item *g = hs_realloc(l->v, cap * sizeof *g);
    if (g == NULL) return;
    l->v = g;
    l->cap = cap;
  }
  l->v[l->n++] = (hs_store_prefetch_item){uri, (uint64_t)offset, (size_t)len, false, exact};
}

/* What a reader of a compressed chunk reads of its first data page's
 * header to learn whether its pages are stored raw (src/parquet/reader.c
 * chunk_pages_raw: 256 bytes at data_page_offset), before it reads any
 * page: in this wave, not a block read of its own after it. */
#define PF_RAW_PROBE 256

static bool wanted(const hs_pq_column_chunk *cc, const char *const *cols, size_t n) {
  if (!cc->has_meta_data || cc->meta_data.n_path == 0) return false;
  for (size_t i = 0; i < n; i++)
    if (cols[i] != NULL && strcmp(cols[i], cc->meta_data.path_in_schema[0]) == 0) return true;
  return false;
}

void hs_scan_prefetch_rows(hs_parquet_reader *r, const char *uri, const roaring_bitmap_t *rows,
                           const char *const *cols, size_t n_cols) {
  if (r == NULL || rows == NULL || !hs_store_is_remote(uri)) return;
  uint64_t n_rows = roaring_bitmap_get_cardinality(rows);
  if (n_rows == 0 || n_rows > PF_MAX_ROWS) return;
  const hs_pq_file_metadata *md = hs_parquet_reader_metadata(r);
  hs_source *src = hs_parquet_reader_source(r); /* a reference of ours */
  if (md == NULL || src == NULL) {
    if (src != NULL) hs_source_unref(src);
    return;
  }
  uint32_t *v = hs_malloc((size_t)n_rows * sizeof *v);
  if (v == NULL) {
    hs_source_unref(src);
    return;
  }
  roaring_bitmap_to_uint32_array(rows, v);
  for (int wave = 1; wave <= 2; wave++) {
    pf_list l = {0};
    int64_t base = 0;
    size_t k = 0;
    for (uint32_t g = 0; g < md->n_row_groups && k < n_rows; g++) {
      const hs_pq_row_group *rg = &md->row_groups[g];
      int64_t end = base + rg->num_rows;
      size_t kb = k;
      while (kb < n_rows && (int64_t)v[kb] < end) kb++;
      for (uint32_t c = 0; kb > k && c < rg->n_columns; c++) {
        const hs_pq_column_chunk *cc = &rg->columns[c];
        if (!wanted(cc, cols, n_cols) || !cc->has_offset_index) continue;
        if (wave == 1) {
          pf_add(&l, uri, cc->offset_index_offset, cc->offset_index_length, false);
          if (cc->has_column_index)
            pf_add(&l, uri, cc->column_index_offset, cc->column_index_length, false);
          continue;
        }
        const hs_pq_column_meta *cm = &cc->meta_data;
        if (cm->codec != HS_PQ_CODEC_UNCOMPRESSED)
          pf_add(&l, uri, cm->data_page_offset, PF_RAW_PROBE, true);
        if (cm->has_dictionary_page_offset && cm->dictionary_page_offset < cm->data_page_offset)
          pf_add(&l, uri, cm->dictionary_page_offset,
                 cm->data_page_offset - cm->dictionary_page_offset, true);
        hs_arena arena;
        hs_arena_init(&arena);
        hs_pq_column_index *ci = NULL;
        hs_pq_offset_index *oi = NULL;
        if (hs_parquet_page_index_read(src, cc, rg->num_rows, &arena, &ci, &oi, NULL) == HS_OK &&
            oi != NULL) {
          uint32_t p = 0, last = UINT32_MAX;
          for (size_t x = k; x < kb; x++) {
            int64_t row = (int64_t)v[x] - base, first, pend;
            for (;; p++) {
              hs_parquet_page_rows(oi, p, rg->num_rows, &first, &pend);
              if (row < pend || p + 1 >= oi->n_pages) break;
            }
            if (p != last && p < oi->n_pages) {
              const hs_pq_page_location *pl = &oi->page_locations[p];
              pf_add(&l, uri, pl->offset, pl->compressed_page_size, true);
              last = p;
            }
          }
        }
        hs_arena_reset(&arena);
      }
      k = kb;
      base = end;
    }
    (void)hs_store_prefetch(l.v, l.n);
    hs_free(l.v);
  }
  hs_free(v);
  hs_source_unref(src);
}

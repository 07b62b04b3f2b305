/*
 * vector_search_prefetch.c — before a search fetches its winners' rows
 * file by file (vector_search.c fetch_rows), bring the bytes those reads
 * will ask for into the object cache in two parallel waves: the offset
 * indexes of the projected columns' chunks (most already in the footer's
 * tail), then for each winner the page holding it in each projected
 * column, with the chunk's dictionary page. Nearby ranges of one object
 * are coalesced by the prefetch (src/io/s3_prefetch.c). Local tables do
 * nothing here (their files are memory-mapped).
 *
 * Best effort throughout: whatever cannot be worked out (no offset index,
 * a malformed one, a column that is not top-level) is left to the reads,
 * which fetch it themselves and word any error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../arrow/arrow.h"
#include "../io/store.h"
#include "../parquet/parquet.h"
#include "../table/schema_map.h"
#include "vector_search.h"

/* Growable list of prefetch items; the paths are borrowed (files->paths). */
typedef struct pf_list {
  hs_store_prefetch_item *v;
  size_t n, cap;
} pf_list;

static void pf_add(pf_list *l, const char *uri, int64_t offset, int64_t len) {
  if (offset < 0 || len <= 0) return;
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    hs_store_prefetch_item *g = hs_realloc(l->v, cap * sizeof *g);
    if (g == NULL) return;
    l->v = g;
    l->cap = cap;
  }
  l->v[l->n++] = (hs_store_prefetch_item){uri, (uint64_t)offset, (size_t)len, false, false};
}

static bool is_read(const hs_colmap *map, const hs_pq_column_chunk *cc) {
  if (!cc->has_meta_data || cc->meta_data.n_path == 0) return false;
  for (size_t i = 0; i < map->n_read; i++)
    if (strcmp(map->read[i], cc->meta_data.path_in_schema[0]) == 0) return true;
  return false;
}

/* For file keys[a..b) (its sorted rows): wave 1 (offset indexes) or wave
 * 2 (pages and dictionaries) into l. */
static void file_items(hs_parquet_reader *r, const char *path, const hs_colmap *map,
                       const hs_vs_key *keys, size_t a, size_t b, int wave, pf_list *l) {
  const hs_pq_file_metadata *md = hs_parquet_reader_metadata(r);
  hs_source *src = wave == 2 ? hs_parquet_reader_source(r) : NULL; /* a reference of ours */
  int64_t base = 0;
  size_t k = a;
  for (uint32_t g = 0; md != NULL && g < md->n_row_groups && k < b; g++) {
    const hs_pq_row_group *rg = &md->row_groups[g];
    int64_t end = base + rg->num_rows;
    size_t kb = k;
    while (kb < b && keys[kb].row < end) kb++;
    for (uint32_t c = 0; kb > k && c < rg->n_columns; c++) {
      const hs_pq_column_chunk *cc = &rg->columns[c];
      if (!is_read(map, cc) || !cc->has_offset_index) continue;
      if (wave == 1) {
        pf_add(l, path, cc->offset_index_offset, cc->offset_index_length);
        continue;
      }
      const hs_pq_column_meta *cm = &cc->meta_data;
      if (cm->has_dictionary_page_offset && cm->dictionary_page_offset < cm->data_page_offset)
        pf_add(l, path, cm->dictionary_page_offset,
               cm->data_page_offset - cm->dictionary_page_offset);
      hs_arena arena;
      hs_arena_init(&arena);
      hs_pq_column_index *ci = NULL;
      hs_pq_offset_index *oi = NULL;
      if (src != NULL &&
          hs_parquet_page_index_read(src, cc, rg->num_rows, &arena, &ci, &oi, NULL) == HS_OK &&
          oi != NULL) {
        uint32_t p = 0, last = UINT32_MAX;
        for (size_t x = k; x < kb; x++) {
          int64_t row = keys[x].row - base, first, pend;
          for (;; p++) {
            hs_parquet_page_rows(oi, p, rg->num_rows, &first, &pend);
            if (row < pend || p + 1 >= oi->n_pages) break;
          }
          if (p != last && p < oi->n_pages) {
            const hs_pq_page_location *pl = &oi->page_locations[p];
            pf_add(l, path, pl->offset, pl->compressed_page_size);
            last = p;
          }
        }
      }
      hs_arena_reset(&arena);
    }
    k = kb;
    base = end;
  }
  if (src != NULL) hs_source_unref(src);
}

void hs_vs_prefetch_rows(const hs_vs_files *files, hs_vs_prep *prep, const hs_colmap_ctx *ctx,
                         const struct ArrowSchema *proj, const hs_vs_key *keys, size_t n) {
  if (n == 0 || !hs_store_is_remote(files->paths[keys[0].file])) return;
  size_t n_files = 0;
  for (size_t i = 0; i < n; i++) n_files += i == 0 || keys[i].file != keys[i - 1].file;
  size_t f = 0;
  hs_parquet_reader **rs = hs_calloc(n_files, sizeof *rs);
  hs_colmap *maps = hs_calloc(n_files, sizeof *maps);
  size_t *starts = hs_calloc(n_files + 1, sizeof *starts);
  if (rs == NULL || maps == NULL || starts == NULL) goto done;
  /* Readers (their footers are cached since the search opened them) and
   * each file's columns to read, as fetch_rows will map them. */
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && keys[i].file == keys[i - 1].file) continue;
    starts[f] = i;
    const char *path = files->paths[keys[i].file];
    struct ArrowSchema full;
    memset(&full, 0, sizeof full);
    if (hs_vs_prep_reader(prep, keys[i].file, path, &rs[f], NULL) != HS_OK ||
        hs_parquet_reader_schema(rs[f], &full, NULL) != HS_OK ||
        hs_colmap_build(ctx, proj, &full, false, path, &maps[f], NULL) != HS_OK) {
      hs_parquet_reader_free(rs[f]);
      rs[f] = NULL;
    }
    hs_arrow_schema_release(&full);
    f++;
  }
  starts[n_files] = n;
  for (int wave = 1; wave <= 2; wave++) {
    pf_list l = {0};
    for (f = 0; f < n_files; f++) {
      if (rs[f] == NULL) continue;
      size_t a = starts[f], b = starts[f + 1];
      file_items(rs[f], files->paths[keys[a].file], &maps[f], keys, a, b, wave, &l);
    }
    (void)hs_store_prefetch(l.v, l.n);
    hs_free(l.v);
  }
done:
  for (f = 0; rs != NULL && maps != NULL && f < n_files; f++) {
    hs_parquet_reader_free(rs[f]);
    hs_colmap_free(&maps[f]);
  }
  hs_free(rs);
  hs_free(maps);
  hs_free(starts);
}

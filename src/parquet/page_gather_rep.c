/*
 * page_gather_rep.c — row gather for a list leaf (max_rep 1): the selected
 * rows of an uncompressed data page v2 of a list<T> / fixed_size_list<T>
 * column (a vector column) are read from the page bytes without decoding
 * the page. Only positions up to the last selected row are looked at.
 *
 * A row starts at a repetition level 0. Repetition levels (bit width 1)
 * are walked by runs: an RLE run of 0s is one row per level, of 1s none,
 * and a bit-packed run is searched 64 levels at a time (popcount of the
 * inverted bits). The value index of a row's first level is the count of
 * definition levels equal to max_def before it, counted by runs (popcount
 * for bit width 1, a SWAR compare for width 2, one step a level otherwise).
 * The walk is done once a page: its row map (each row's first level and
 * first value, or one stride when every row has the same number of levels,
 * all defined, as a vector column's pages have) is kept in the page cache,
 * so a later search's rows in that page are found in constant time (the
 * walk to the k-th row was ~8 % of a ten-row search's time).
 * The row's levels are copied (repetition 0 then 1s, definition levels read
 * one at a time) and its values appended: one copy for PLAIN fixed-width
 * values (a row's values are contiguous), else value by value through
 * hs_pq_gather_value (page_gather.c).
 *
 * Bytes are untrusted: every position is bounds-checked by the cursors; a
 * page whose first level does not start a row is left to the decoder.
 */
#include <string.h>

#include "chunk_memo.h"
#include "encoding.h"
#include "page_read.h"

static hs_status rep_corrupt(hs_error *err, const char *what, long long v) {
  return hs_error_set(err, HS_ERR_CORRUPT, "list page: %s (%lld)", what, v);
}

/* A walk over the repetition levels (bit width 1) by runs, parsed here
 * rather than through hs_rle_cursor: a vector column's levels are two
 * short runs a row (one 0, then list_size - 1 ones), and the run headers
 * are most of what a row's lookup reads. */
typedef struct rep_walk {
  const uint8_t *buf;
  size_t len, at;             /* at: next run header */
  int64_t run_start, run_end; /* levels of the current run */
  bool packed;
  uint8_t value;       /* RLE run's level */
  const uint8_t *data; /* bit-packed run's bytes, (run_end - run_start) / 8 */
  int64_t pos;         /* next level to look at */
} rep_walk;

/* Load the run after the current one. */
static hs_status rep_next_run(rep_walk *w, hs_error *err) {
  uint64_t h = 0;
  int shift = 0;
  for (;;) {
    if (w->at >= w->len || shift > 28)
      return rep_corrupt(err, "repetition levels end early", (long long)w->run_end);
    uint8_t byte = w->buf[w->at++];
    h |= (uint64_t)(byte & 0x7f) << shift;
    shift += 7;
    if ((byte & 0x80) == 0) break;
  }
  w->run_start = w->run_end;
  if (h & 1) {
    uint64_t groups = h >> 1; /* 8 levels, one byte, a group */
    if (groups > w->len - w->at)
      return rep_corrupt(err, "bit-packed repetition run cut short", (long long)w->run_start);
    w->packed = true;
    w->data = w->buf + w->at;
    w->at += (size_t)groups;
    w->run_end = w->run_start + (int64_t)groups * 8;
  } else {
    if (w->at >= w->len || w->buf[w->at] > 1)
      return rep_corrupt(err, "repetition run value missing or above 1", (long long)w->run_start);
    w->packed = false;
    w->value = w->buf[w->at++];
    w->run_end = w->run_start + (int64_t)(h >> 1);
  }
  return HS_OK;
}

/* Position of the (skip + 1)-th repetition level 0 at or after w->pos
 * (below n), or n when there is none; w->pos moves past it. */
static hs_status rep_find_start(rep_walk *w, int64_t n, int64_t skip, int64_t *out, hs_error *err) {
  int64_t p = w->pos;
  while (p < n) {
    if (p >= w->run_end) {
      hs_status st = rep_next_run(w, err);
      if (st != HS_OK) return st;
      continue;
    }
    int64_t end = w->run_end < n ? w->run_end : n;
    if (!w->packed) {
      if (w->value == 0) {
        if (skip < end - p) {
          *out = p + skip;
          w->pos = *out + 1;
          return HS_OK;
        }
        skip -= end - p;
      }
      p = end;
      continue;
    }
    uint64_t b = (uint64_t)(p - w->run_start), e = (uint64_t)(end - w->run_start);
    const uint8_t *d = w->data;
    while (b < e) {
      if (b % 64 == 0 && b + 64 <= e) {
        uint64_t x;
        memcpy(&x, d + b / 8, 8);
        uint64_t z = ~x;
        int64_t cnt = __builtin_popcountll(z);
        if (skip >= cnt) {
          skip -= cnt;
          b += 64;
          continue;
        }
        for (; skip > 0; skip--) z &= z - 1;
        b += (uint64_t)__builtin_ctzll(z);
        *out = w->run_start + (int64_t)b;
        w->pos = *out + 1;
        return HS_OK;
      }
      if (((d[b / 8] >> (b % 8)) & 1) == 0) {
        if (skip == 0) {
          *out = w->run_start + (int64_t)b;
          w->pos = *out + 1;
          return HS_OK;
        }
        skip--;
      }
      b++;
    }
    p = end;
  }
  w->pos = n;
  *out = n;
  return HS_OK;
}

/* Definition levels equal to `value` in [*pos, to), added to *count. */
static hs_status def_count(hs_rle_cursor *c, int64_t *pos, int64_t to, uint32_t value,
                           int64_t *count, hs_error *err) {
  int64_t p = *pos;
  while (p < to) {
    uint32_t x;
    hs_status st = hs_rle_cursor_get(c, p, &x, err);
    if (st != HS_OK) return st;
    int64_t end = c->run_end < to ? c->run_end : to;
    if (!c->packed) {
      if (c->value == value) *count += end - p;
      p = end;
      continue;
    }
    uint64_t b = (uint64_t)(p - c->run_start), e = (uint64_t)(end - c->run_start);
    uint64_t bw = (uint64_t)c->bw;
    if ((e * bw + 7) / 8 > c->data_len)
      return rep_corrupt(err, "bit-packed run cut short", (long long)p);
    const uint8_t *d = c->data;
    if (bw == 1 || bw == 2) {
      uint64_t per = 64 / bw; /* levels a word */
      uint64_t pat = value == 0 ? 0 : bw == 1 ? ~0ull : 0x5555555555555555ull * value;
      while (b < e) {
        if (b % per == 0 && b + per <= e) {
          uint64_t w;
          memcpy(&w, d + b * bw / 8, 8);
          uint64_t y = w ^ pat; /* a level equal to value: its bits 0 */
          uint64_t z = bw == 1 ? ~y : ~(y | (y >> 1)) & 0x5555555555555555ull;
          *count += __builtin_popcountll(z);
          b += per;
          continue;
        }
        uint64_t bit = b * bw;
        uint32_t v = (uint32_t)(d[bit / 8] >> (bit % 8)) & (uint32_t)((1u << bw) - 1);
        *count += v == value;
        b++;
      }
      p = end;
      continue;
    }
    for (; p < end; p++) {
      st = hs_rle_cursor_get(c, p, &x, err);
      if (st != HS_OK) return st;
      *count += x == value;
    }
  }
  *pos = p > to ? p : to;
  return HS_OK;
}

/* Where each row of a page starts: level and value index. `stride` > 0
 * when row r's levels are [r * stride, (r + 1) * stride), all defined
 * (no arrays then); else lv[r] / vs[r] for r <= rows (lv[rows] = levels,
 * vs[rows] = values). */
typedef struct rowmap {
  int64_t rows, stride;
  uint32_t *lv, *vs;
} rowmap;

static void rowmap_free(void *p) {
  rowmap *m = p;
  hs_free(m->lv);
  hs_free(m->vs);
  hs_free(m);
}

static hs_status rowmap_build(const hs_pq_gather_page *pg, int16_t max_def, int64_t page_rows,
                              rowmap **out, size_t *bytes, hs_error *err) {
  int64_t n = pg->n_levels;
  if (n > (int64_t)UINT32_MAX) return rep_corrupt(err, "too many levels in a page", (long long)n);
  rep_walk rw;
  memset(&rw, 0, sizeof rw);
  rw.buf = pg->rep;
  rw.len = pg->rep_len;
  rw.pos = 1; /* level 0 starts row 0 (the caller checked) */
  hs_rle_cursor defc;
  hs_rle_cursor_init(&defc, pg->def, pg->def_len,
                     hs_bit_width((uint64_t)(max_def > 0 ? max_def : 0)));
  rowmap *m = hs_calloc(1, sizeof *m);
  hs_buf lv = {0}, vs = {0};
  hs_status st = m != NULL ? HS_OK : HS_ERR_NOMEM;
  /* Rows past the header's num_rows are never selected: the map stops
   * there, which also bounds it by what the header says. */
  int64_t start = 0, cpos = 0, vcount = 0, found = 0;
  while (st == HS_OK && start < n && found++ < page_rows) {
    if (max_def > 0) st = def_count(&defc, &cpos, start, (uint32_t)max_def, &vcount, err);
    uint32_t l = (uint32_t)start, v = (uint32_t)(max_def > 0 ? vcount : start);
    if (st == HS_OK && (!hs_buf_append(&lv, &l, sizeof l) || !hs_buf_append(&vs, &v, sizeof v)))
      st = HS_ERR_NOMEM;
    if (st == HS_OK) st = rep_find_start(&rw, n, 0, &start, err);
  }
  if (st == HS_OK && max_def > 0)
    st = def_count(&defc, &cpos, start, (uint32_t)max_def, &vcount, err);
  uint32_t l = (uint32_t)start, v = (uint32_t)(max_def > 0 ? vcount : start);
  if (st == HS_OK && (!hs_buf_append(&lv, &l, sizeof l) || !hs_buf_append(&vs, &v, sizeof v)))
    st = HS_ERR_NOMEM;
  if (st != HS_OK) {
    hs_buf_free(&lv);
    hs_buf_free(&vs);
    hs_free(m);
    if (st == HS_ERR_NOMEM && (err == NULL || err->status != HS_ERR_NOMEM))
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory for a list page's row map");
    return st;
  }
  m->rows = (int64_t)(lv.len / sizeof(uint32_t)) - 1;
  const uint32_t *L = (const uint32_t *)(void *)lv.data, *V = (const uint32_t *)(void *)vs.data;
  int64_t stride = m->rows > 0 ? (int64_t)L[m->rows] / m->rows : 0;
  bool uniform = stride > 0 && stride * m->rows == (int64_t)L[m->rows];
  for (int64_t r = 0; uniform && r <= m->rows; r++)
    uniform = L[r] == (uint64_t)(r * stride) && V[r] == L[r];
  *bytes = sizeof *m;
  if (uniform) {
    m->stride = stride;
    hs_buf_free(&lv);
    hs_buf_free(&vs);
  } else {
    m->lv = (uint32_t *)(void *)lv.data; /* owned by m from here */
    m->vs = (uint32_t *)(void *)vs.data;
    *bytes += lv.len + vs.len;
  }
  *out = m;
  return HS_OK;
}

/* The page's row map: cached, or built (and cached when the page has a
 * file stamp). *ref is the caller's to put. */
static hs_status rowmap_get(const hs_pq_gather_page *pg, int16_t max_def, int64_t page_rows,
                            const rowmap **map, hs_pq_cached **ref, hs_error *err) {
  hs_pq_cached *kept =
      pg->memo != NULL ? atomic_load_explicit(&pg->memo->rowmap, memory_order_acquire) : NULL;
  if (kept != NULL) { /* the page's memo holds it (chunk_memo.h) */
    *ref = NULL;
    *map = hs_pq_cached_obj(kept);
    return HS_OK;
  }
  *ref = hs_pq_cache_find(pg->stamp, pg->offset, pg->rep_len, HS_PQ_CACHED_ROW_MAP);
  if (*ref == NULL) {
    rowmap *m = NULL;
    size_t bytes = 0;
    hs_status st = rowmap_build(pg, max_def, page_rows, &m, &bytes, err);
    if (st != HS_OK) return st;
    *ref = hs_pq_cache_add(pg->stamp, pg->offset, pg->rep_len, HS_PQ_CACHED_ROW_MAP, m, bytes,
                           rowmap_free);
    if (*ref == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory for a row map");
  }
  *map = hs_pq_cached_obj(*ref);
  if (pg->memo != NULL && hs_pq_memo_keep_cached(&pg->memo->rowmap, *ref, hs_pq_cached_bytes(*ref)))
    *ref = NULL; /* the memo's reference now */
  return HS_OK;
}

hs_status hs_pq_page_gather_rep(const hs_pq_page_ctx *ctx, const hs_pq_gather_page *pg,
                                const int64_t *rows, size_t n_sel, int64_t base, int64_t page_rows,
                                int64_t implicit_period, hs_pq_acc *acc, hs_pq_gather_rep_out *out,
                                hs_error *err) {
  const hs_pq_leaf_desc *d = ctx->desc;
  int16_t max_def = d->max_def;
  int64_t n = pg->n_levels;
  memset(out, 0, sizeof *out);
  hs_rle_cursor rep, defg;
  /* The page must start a row (else the decoder reads or rejects it). Its
   * row count is the header's num_rows, as when pages are skipped; a row
   * below it that the levels do not hold is HS_ERR_CORRUPT. */
  int starts =
      pg->memo != NULL ? atomic_load_explicit(&pg->memo->starts_row, memory_order_relaxed) : 0;
  if (starts == 0) { /* not known yet: read the first level */
    uint32_t first = 1;
    hs_rle_cursor_init(&rep, pg->rep, pg->rep_len, 1);
    bool ok = n > 0 && hs_rle_cursor_get(&rep, 0, &first, NULL) == HS_OK && first == 0;
    starts = ok ? 1 : 2;
    if (pg->memo != NULL)
      atomic_store_explicit(&pg->memo->starts_row, starts, memory_order_relaxed);
  }
  if (starts != 1) {
    out->declined = true;
    return HS_OK;
  }
  int dbw = hs_bit_width((uint64_t)(max_def > 0 ? max_def : 0));
  hs_rle_cursor_init(&defg, pg->def, pg->def_len, dbw);
  size_t k = 0;
  while (k < n_sel && rows[k] < base + page_rows) k++;
  hs_pq_gather_cursors cur;
  memset(&cur, 0, sizeof cur);
  hs_pq_cached *dref = NULL;
  hs_status st = hs_pq_gather_cursors_init(ctx, pg, &cur, &dref, k > 0, err);
  if (st == HS_OK && d->type == HS_PQ_BYTE_ARRAY) st = hs_pq_acc_init_offsets(acc, err);
  size_t w = ctx->width > 0 ? (size_t)ctx->width : 0;
  bool plain_fixed = pg->encoding == HS_PQ_ENC_PLAIN && d->type != HS_PQ_BOOLEAN && w > 0;
  const rowmap *map = NULL;
  hs_pq_cached *mref = NULL;
  if (st == HS_OK && k > 0) st = rowmap_get(pg, max_def, page_rows, &map, &mref, err);
  /* Levels left implicit: every row `stride` levels, all defined, the
   * period the caller keeps (or the first). */
  bool implicit = st == HS_OK && k > 0 && implicit_period >= 0 && map->stride > 0 &&
                  (implicit_period == 0 || implicit_period == map->stride);
  out->implicit = implicit;
  out->stride = implicit ? map->stride : 0;
  int64_t row_at = base - 1, nl = 0, nv = 0;
  for (size_t j = 0; j < k && st == HS_OK; j++) {
    int64_t want = rows[j];
    if (want <= row_at) {
      st = rep_corrupt(err, "selection not increasing", (long long)want);
      break;
    }
    int64_t r = want - base;
    if (r >= map->rows) {
      st = rep_corrupt(err, "row past the page's levels", (long long)r);
      break;
    }
    row_at = want;
    /* levels [start, end) are the row's; v0 its first value */
    int64_t start = map->stride > 0 ? r * map->stride : (int64_t)map->lv[r];
    int64_t end = map->stride > 0 ? start + map->stride : (int64_t)map->lv[r + 1];
    int64_t v0 = map->stride > 0 ? start : (int64_t)map->vs[r];
    bool all_defined = map->stride > 0;
    int64_t len = end - start, vn = 0;
    if (implicit) {
      vn = len; /* every level a value */
    } else if (!hs_buf_reserve(&acc->rep, (size_t)len * sizeof(int16_t)) ||
               (max_def > 0 && !hs_buf_reserve(&acc->def, (size_t)len * sizeof(int16_t)))) {
      st = HS_ERR_NOMEM;
      break;
    }
    int16_t *rp = implicit ? NULL : (int16_t *)(void *)(acc->rep.data + acc->rep.len);
    int16_t *dp =
        !implicit && max_def > 0 ? (int16_t *)(void *)(acc->def.data + acc->def.len) : NULL;
    for (int64_t i = 0; !implicit && i < len && st == HS_OK; i++) {
      rp[i] = i == 0 ? 0 : 1;
      if (max_def == 0) {
        vn++;
        continue;
      }
      uint32_t lv = (uint32_t)max_def;
      if (!all_defined) st = hs_rle_cursor_get(&defg, start + i, &lv, err);
      if (st == HS_OK && lv > (uint32_t)max_def)
        st = rep_corrupt(err, "definition level above its maximum", (long long)lv);
      dp[i] = (int16_t)lv;
      vn += lv == (uint32_t)max_def;
    }
    if (st != HS_OK) break;
    if (!implicit) {
      acc->rep.len += (size_t)len * sizeof(int16_t);
      if (max_def > 0) acc->def.len += (size_t)len * sizeof(int16_t);
    }
    if (plain_fixed) {
      if ((uint64_t)(v0 + vn) > pg->vlen / w) {
        st = rep_corrupt(err, "values past the page", (long long)(v0 + vn));
        break;
      }
      if (vn > 0 && !hs_buf_append(&acc->values, pg->vals + (size_t)v0 * w, (size_t)vn * w))
        st = HS_ERR_NOMEM;
    } else {
      for (int64_t v = v0; v < v0 + vn && st == HS_OK; v++)
        st = hs_pq_gather_value(ctx, pg, &cur, want - base, v, acc, err);
    }
    nl += len;
    nv += vn;
  }
  if (st == HS_ERR_NOMEM && (err == NULL || err->status != HS_ERR_NOMEM)) {
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory gathering %zu list rows", k);
  }
  hs_pq_cache_put(dref);
  hs_pq_cache_put(mref);
  out->rows_taken = k;
  out->n_levels = nl;
  out->n_values = nv;
  return st;
}

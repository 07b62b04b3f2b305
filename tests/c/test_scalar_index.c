/*
 * test_scalar_index.c — scalar inverted indexes (src/index/scalar/):
 *   1. the portable-bitmap checker accepts everything CRoaring writes and
 *      rejects mutations that break the format's invariants;
 *   2. random columns of every supported type (NULLs, NaN, -0.0, empty
 *      strings, few and many distinct values, both layouts, tiny blocks,
 *      chunks with offsets) round trip: validate passes and thousands of
 *      random predicates equal a brute-force evaluation over the values,
 *      which compares typed values directly (not through index keys);
 *   3. corrupted files never crash: validate fails or queries run;
 *   4. driver mode for tests/python/test_scalar_index.py: with
 *      HS_SIDX_DRIVER=<parquet file> and HS_SIDX_COLUMN=<name>, build the
 *      column's index and answer predicates read from stdin (one a line:
 *      `eq V`, `in V V…`, `range L|- incl H|- incl`, `null`, `notnull`,
 *      `prefix HEX`, where V is i:INT, u:UINT, d:DOUBLE or s:HEX), printing
 *      the sorted row positions of each answer on one line.
 */
#include <math.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "index/index.h"
#include "index/scalar/sidx_internal.h"

__extension__ typedef __int128 t_i128;
__extension__ typedef unsigned __int128 t_u128;

enum { T_I64, T_I32, T_U64, T_F64, T_F32, T_STR, T_BOOL, T_DEC, T_FIX, T_FIX8, T_COUNT };
static const char *const t_format[] = {"l", "i", "L", "g", "f", "u", "b", "d:20,2", "w:3", "w:8"};

typedef struct tcol {
  int type;
  uint32_t n;
  uint8_t *valid;
  int64_t *i;
  uint64_t *u;
  double *d;
  t_i128 *dec;
  uint8_t (*s)[8];
  uint8_t *slen;
} tcol;

static uint64_t seed = 42;
static uint64_t rnd(uint64_t n) {
  return n ? hs_test_rand(&seed) % n : 0;
}

static const double special_d[] = {0.0, -0.0, 1.0, -1.0, 2.5, INFINITY, -INFINITY, NAN, 1e300, 0.5};

static void gen_string(uint8_t *s, uint8_t *len, int distinct) {
  static const uint8_t alpha[] = {'a', 'b', 0xFF, 0, 'z'};
  *len = (uint8_t)rnd(distinct < 20 ? 3 : 7);
  for (int k = 0; k < *len; k++) s[k] = alpha[rnd(distinct < 20 ? 2 : 5)];
}

static void tcol_gen(tcol *c, int type, uint32_t n, int distinct, int null_pct) {
  memset(c, 0, sizeof *c);
  c->type = type;
  c->n = n;
  c->valid = calloc(n + 1, 1);
  c->i = calloc(n + 1, sizeof *c->i);
  c->u = calloc(n + 1, sizeof *c->u);
  c->d = calloc(n + 1, sizeof *c->d);
  c->dec = calloc(n + 1, sizeof *c->dec);
  c->s = calloc(n + 1, sizeof *c->s);
  c->slen = calloc(n + 1, 1);
  for (uint32_t r = 0; r < n; r++) {
    c->valid[r] = rnd(100) >= (uint64_t)null_pct;
    int64_t k = (int64_t)rnd((uint64_t)distinct) - distinct / 2;
    switch (type) {
    case T_I64: c->i[r] = rnd(20) == 0 ? (rnd(2) ? INT64_MAX : INT64_MIN) : k * 1000003; break;
    case T_I32: c->i[r] = (int32_t)k; break;
    case T_U64: c->u[r] = rnd(20) == 0 ? UINT64_MAX : (uint64_t)(k + distinct) * 7; break;
    case T_F64:
    case T_F32:
      c->d[r] = rnd(5) == 0 ? special_d[rnd(10)] : (double)k / 4;
      if (type == T_F32) c->d[r] = (float)c->d[r];
      break;
    case T_STR: gen_string(c->s[r], &c->slen[r], distinct); break;
    case T_BOOL: c->i[r] = (int64_t)rnd(2); break;
    case T_DEC: c->dec[r] = (t_i128)k * 37 - (rnd(10) == 0 ? (t_i128)1 << 70 : 0); break;
    case T_FIX:
      c->slen[r] = 3;
      for (int b = 0; b < 3; b++) c->s[r][b] = (uint8_t)(rnd(2) ? 'a' + rnd(3) : 0xFF);
      break;
    case T_FIX8: /* 8-byte keys, packed as deltas: nibbles of k, 0x00 to 0xFF bytes */
      c->slen[r] = 8;
      for (int b = 0; b < 8; b++)
        c->s[r][b] = (uint8_t)((((uint64_t)(k + distinct) >> (28 - 4 * b)) & 15) * 17);
      break;
    }
  }
}

static void tcol_free(tcol *c) {
  free(c->valid), free(c->i), free(c->u), free(c->d), free(c->dec), free(c->s), free(c->slen);
}

/* Arrow array for rows [from, from + len) with `pad` leading dummy rows. */
static void make_chunk(const tcol *c, uint32_t from, uint32_t len, uint32_t pad,
                       struct ArrowArray *out) {
  uint32_t m = len + pad;
  uint8_t *validity = hs_calloc((m + 8) / 8 + 1, 1);
  int64_t nulls = 0;
  for (uint32_t j = 0; j < len; j++) {
    if (c->valid[from + j])
      validity[(j + pad) / 8] |= (uint8_t)(1u << ((j + pad) % 8));
    else
      nulls++;
  }
  hs_error err = {0};
  if (c->type == T_STR) {
    int32_t *offs = hs_calloc(m + 1, 4);
    uint8_t *data = hs_malloc((size_t)m * 8 + 1);
    int32_t at = 0;
    for (uint32_t j = 0; j < m; j++) {
      offs[j] = at;
      if (j >= pad) {
        memcpy(data + at, c->s[from + j - pad], c->slen[from + j - pad]);
        at += c->slen[from + j - pad];
      }
    }
    offs[m] = at;
    CHECK_OK(hs_arrow_array_make_binary(out, m, offs, data, validity, -1, &err), &err);
  } else {
    int w = c->type == T_DEC                       ? 16
            : c->type == T_FIX                     ? 3
            : c->type == T_FIX8                    ? 8
            : c->type == T_I32 || c->type == T_F32 ? 4
                                                   : 8;
    uint8_t *vals = hs_calloc((size_t)m * w + 8, 1);
    for (uint32_t j = pad; j < m; j++) {
      uint32_t r = from + j - pad;
      uint8_t *p = vals + (size_t)j * w;
      switch (c->type) {
      case T_I64: memcpy(p, &c->i[r], 8); break;
      case T_I32: {
        int32_t v = (int32_t)c->i[r];
        memcpy(p, &v, 4);
        break;
      }
      case T_U64: memcpy(p, &c->u[r], 8); break;
      case T_F64: memcpy(p, &c->d[r], 8); break;
      case T_F32: {
        float v = (float)c->d[r];
        memcpy(p, &v, 4);
        break;
      }
      case T_DEC: memcpy(p, &c->dec[r], 16); break;
      case T_FIX: memcpy(p, c->s[r], 3); break;
      case T_FIX8: memcpy(p, c->s[r], 8); break;
      case T_BOOL:
        if (c->i[r]) vals[j / 8] |= (uint8_t)(1u << (j % 8));
        break;
      }
    }
    CHECK_OK(hs_arrow_array_make_primitive(out, m, vals, validity, -1, &err), &err);
  }
  out->offset = pad;
  out->length = len;
  out->null_count = nulls;
}

/* ------------------------------------------------------ brute force */

static int cmp_ld(long double a, long double b) {
  return a < b ? -1 : a > b ? 1 : 0;
}
static int cmp_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  return hs_sidx_key_cmp(a, na, b, nb);
}

/* Compare row r's value with v (SQL order, NaN greatest and equal to NaN). */
static int value_cmp(const tcol *c, uint32_t r, const hs_sidx_value *v) {
  switch (c->type) {
  case T_I64:
  case T_I32:
    if (v->kind == HS_SIDX_INT) return cmp_ld(c->i[r], v->i);
    if (v->kind == HS_SIDX_UINT) return cmp_ld(c->i[r], v->u);
    if (v->d != v->d) return -1;
    return cmp_ld(c->i[r], v->d);
  case T_U64:
    if (v->kind == HS_SIDX_INT) return cmp_ld(c->u[r], v->i);
    if (v->kind == HS_SIDX_UINT) return cmp_ld(c->u[r], v->u);
    if (v->d != v->d) return -1;
    return cmp_ld(c->u[r], v->d);
  case T_F64:
  case T_F32: {
    long double q = v->kind == HS_SIDX_INT    ? (long double)v->i
                    : v->kind == HS_SIDX_UINT ? (long double)v->u
                                              : (long double)v->d;
    bool an = c->d[r] != c->d[r], bn = v->kind == HS_SIDX_DOUBLE && v->d != v->d;
    if (an || bn) return an && bn ? 0 : an ? 1 : -1;
    return cmp_ld(c->d[r], q);
  }
  case T_STR:
  case T_FIX:
  case T_FIX8: return cmp_bytes(c->s[r], c->slen[r], v->bytes, v->n_bytes);
  case T_BOOL: return cmp_ld(c->i[r], v->b);
  case T_DEC: {
    t_i128 q = v->kind == HS_SIDX_INT ? (t_i128)v->i * 100
                                      : (t_i128)((t_u128)(uint64_t)v->dec_hi << 64 | v->dec_lo);
    return c->dec[r] < q ? -1 : c->dec[r] > q ? 1 : 0;
  }
  }
  return 0;
}

typedef struct pred {
  int op; /* 0 eq, 1 in, 2 range, 3 null, 4 notnull, 5 prefix */
  hs_sidx_value v[4];
  int n_in;
  bool has_lo, has_hi, lo_incl, hi_incl;
  uint8_t sbuf[4][8];
} pred;

static bool brute(const tcol *c, uint32_t r, const pred *p) {
  if (p->op == 3) return !c->valid[r];
  if (!c->valid[r]) return false;
  switch (p->op) {
  case 0: return value_cmp(c, r, &p->v[0]) == 0;
  case 1:
    for (int k = 0; k < p->n_in; k++)
      if (value_cmp(c, r, &p->v[k]) == 0) return true;
    return false;
  case 2: {
    int a = p->has_lo ? value_cmp(c, r, &p->v[0]) : 1,
        b = p->has_hi ? value_cmp(c, r, &p->v[1]) : -1;
    return (a > 0 || (a == 0 && p->lo_incl)) && (b < 0 || (b == 0 && p->hi_incl));
  }
  case 4: return true;
  case 5:
    return c->slen[r] >= p->v[0].n_bytes && memcmp(c->s[r], p->v[0].bytes, p->v[0].n_bytes) == 0;
  }
  return false;
}

static void gen_value(const tcol *c, pred *p, int k) {
  hs_sidx_value *v = &p->v[k];
  memset(v, 0, sizeof *v);
  uint32_t r = (uint32_t)rnd(c->n);
  bool from_data = c->n > 0 && rnd(3) != 0;
  switch (c->type) {
  case T_I64:
  case T_I32:
  case T_U64: {
    int kind = (int)rnd(4);
    if (kind == 3) {
      v->kind = HS_SIDX_DOUBLE;
      v->d = from_data ? (c->type == T_U64 ? (double)c->u[r] : (double)c->i[r]) + (rnd(2) ? 0.5 : 0)
                       : special_d[rnd(10)] * (rnd(2) ? 1 : 1e19);
    } else if (kind == 2 || c->type == T_U64) {
      v->kind = HS_SIDX_UINT;
      v->u = from_data ? (c->type == T_U64 ? c->u[r] : (uint64_t)c->i[r]) : rnd(UINT64_MAX);
    } else {
      v->kind = HS_SIDX_INT;
      v->i = from_data ? (int64_t)((c->type == T_U64 ? c->u[r] : (uint64_t)c->i[r]) + rnd(3) - 1)
                       : (int64_t)hs_test_rand(&seed);
    }
    break;
  }
  case T_F64:
  case T_F32:
    if (rnd(4) == 0) {
      v->kind = HS_SIDX_INT;
      v->i = rnd(2) ? (int64_t)rnd(20) - 10 : INT64_MAX - (int64_t)rnd(3);
    } else {
      v->kind = HS_SIDX_DOUBLE;
      v->d = from_data ? c->d[r] : special_d[rnd(10)];
    }
    break;
  case T_STR:
  case T_FIX:
  case T_FIX8:
    v->kind = HS_SIDX_BYTES;
    if (from_data) {
      memcpy(p->sbuf[k], c->s[r], 8);
      v->n_bytes = c->slen[r];
    } else {
      uint8_t l;
      gen_string(p->sbuf[k], &l, 100);
      v->n_bytes = l;
    }
    if (p->op == 5 && v->n_bytes > 0) v->n_bytes = rnd(v->n_bytes + 1);
    v->bytes = p->sbuf[k];
    break;
  case T_BOOL:
    v->kind = HS_SIDX_BOOL;
    v->b = rnd(2);
    break;
  case T_DEC:
    if (rnd(4) == 0) {
      v->kind = HS_SIDX_INT;
      v->i = (int64_t)rnd(40) - 20;
    } else {
      t_i128 x = from_data ? c->dec[r] + (t_i128)rnd(3) - 1 : (t_i128)rnd(2000) - 1000;
      v->kind = HS_SIDX_DECIMAL;
      v->dec_lo = (uint64_t)x;
      v->dec_hi = (int64_t)(x >> 64);
    }
    break;
  }
}

static hs_status run_pred(hs_sidx_column *col, const pred *p, roaring_bitmap_t **out,
                          hs_error *err) {
  switch (p->op) {
  case 0: return hs_sidx_column_equals(col, &p->v[0], out, err);
  case 1: return hs_sidx_column_in(col, p->v, (size_t)p->n_in, out, err);
  case 2:
    return hs_sidx_column_range(col, p->has_lo ? &p->v[0] : NULL, p->lo_incl,
                                p->has_hi ? &p->v[1] : NULL, p->hi_incl, out, err);
  case 3: return hs_sidx_column_is_null(col, out, err);
  case 4: return hs_sidx_column_is_not_null(col, out, err);
  default: return hs_sidx_column_prefix(col, p->v[0].bytes, p->v[0].n_bytes, out, err);
  }
}

static hs_status build_file(const tcol *c, const hs_sidx_column_options *opts, hs_buf *file,
                            hs_error *err) {
  struct ArrowArray chunks[8];
  size_t nch = 0;
  for (uint32_t at = 0; at < c->n || nch == 0;) {
    uint32_t len = nch == 7 ? c->n - at : (uint32_t)rnd(c->n - at + 1);
    make_chunk(c, at, len, (uint32_t)rnd(4), &chunks[nch++]);
    at += len;
    if (at >= c->n) break;
  }
  struct ArrowSchema s;
  hs_arrow_schema_init(&s, t_format[c->type], "col", 2, 0, NULL);
  hs_sidx_builder *b = NULL;
  hs_status st = hs_sidx_builder_create(&b, err);
  if (st == HS_OK) st = hs_sidx_builder_add_column(b, &s, 7, chunks, nch, opts, err);
  if (st == HS_OK) st = hs_sidx_builder_finish(b, file, err);
  hs_sidx_builder_free(b);
  for (size_t i = 0; i < nch; i++) hs_arrow_array_release(&chunks[i]);
  hs_arrow_schema_release(&s);
  return st;
}

static void check_column(int type, uint32_t n, int distinct, int null_pct, hs_sidx_layout layout,
                         uint32_t block_rows, int n_preds) {
  tcol c;
  tcol_gen(&c, type, n, distinct, null_pct);
  /* packed, plain and lossy blocks (lossy: every third column, SORTED only) */
  hs_sidx_column_options opts = {layout, block_rows, n % 2 == 1, rnd(3) == 0};
  hs_buf file;
  hs_buf_init(&file);
  hs_error err = {0};
  CHECK_OK(build_file(&c, &opts, &file, &err), &err);
  hs_source *src = NULL;
  hs_sidx_file *f = NULL;
  hs_sidx_column *col = NULL;
  CHECK_OK(hs_source_open_memory(file.data, file.len, "idx", &src, &err), &err);
  CHECK_OK(hs_sidx_file_open(src, &f, &err), &err);
  if (f == NULL) goto out;
  CHECK_OK(hs_sidx_file_validate(f, &err), &err);
  CHECK_OK(hs_sidx_column_open(f, "col", &col, &err), &err);
  if (col == NULL) goto out;
  if (layout != HS_SIDX_LAYOUT_AUTO) CHECK_EQ_INT(hs_sidx_column_layout(col), layout);
  CHECK_EQ_INT(hs_sidx_column_row_count(col), n);
  int failures = 0;
  for (int q = 0; q < n_preds && failures < 5; q++) {
    pred p;
    memset(&p, 0, sizeof p);
    p.op = (int)rnd(type == T_STR || type == T_FIX || type == T_FIX8 ? 6 : 5);
    p.n_in = 1 + (int)rnd(4);
    for (int k = 0; k < 4; k++) gen_value(&c, &p, k);
    p.has_lo = rnd(4) != 0;
    p.has_hi = rnd(4) != 0;
    p.lo_incl = rnd(2);
    p.hi_incl = rnd(2);
    roaring_bitmap_t *got = NULL;
    hs_error qerr = {0};
    hs_status st = run_pred(col, &p, &got, &qerr);
    CHECK_OK(st, &qerr);
    if (st != HS_OK) {
      failures++;
      continue;
    }
    uint64_t want = 0;
    bool same = true;
    /* Lossy columns answer supersets: every matching row, plus at most the
     * other rows of the two blocks at each end of each searched key range
     * (IN: a range per value). IS [NOT] NULL stays exact. */
    bool exact = hs_sidx_column_exact(col) || p.op == 3 || p.op == 4;
    if (!exact) CHECK(opts.lossy && hs_sidx_column_layout(col) == HS_SIDX_LAYOUT_SORTED);
    for (uint32_t r = 0; r < n; r++) {
      bool b = brute(&c, r, &p);
      want += b;
      bool has = roaring_bitmap_contains(got, r);
      if (b && !has) same = false;
      if (!b && has && exact) same = false;
    }
    uint64_t got_n = roaring_bitmap_get_cardinality(got);
    uint64_t br = block_rows ? block_rows : 4096, ranges = p.op == 1 ? (uint64_t)p.n_in : 1;
    same = same && (exact ? want == got_n : got_n - want <= 2 * ranges * br);
    CHECK(same);
    if (!same) {
      failures++;
      fprintf(stderr,
              "  type %d n %u distinct %d layout %d op %d kinds %d/%d lo %d%d hi %d%d: "
              "want %" PRIu64 " got %" PRIu64 "\n",
              type, n, distinct, (int)layout, p.op, p.v[0].kind, p.v[1].kind, p.has_lo, p.lo_incl,
              p.has_hi, p.hi_incl, want, roaring_bitmap_get_cardinality(got));
    }
    roaring_bitmap_free(got);
  }
out:
  hs_sidx_column_free(col);
  hs_sidx_file_free(f);
  hs_source_unref(src);
  hs_buf_free(&file);
  tcol_free(&c);
}

/* -------------------------------------------------- bitmap checker */

static void test_roaring_check(void) {
  for (int t = 0; t < 300; t++) {
    roaring_bitmap_t *r = roaring_bitmap_create();
    uint32_t limit = 1 + (uint32_t)rnd(300000);
    int shape = (int)rnd(4);
    for (int k = 0; k < 1 + (int)rnd(20000); k++) {
      uint32_t v = (uint32_t)rnd(limit);
      if (shape == 0)
        roaring_bitmap_add(r, v);
      else if (shape == 1) {
        uint64_t e = v + rnd(5000);
        roaring_bitmap_add_range(r, v, e < limit ? e : limit);
      } else if (shape == 2 && k < 50)
        roaring_bitmap_add(r, v);
      else if (shape == 3)
        roaring_bitmap_add(r, v & ~15u);
    }
    hs_buf b;
    hs_buf_init(&b);
    hs_error err = {0};
    CHECK_OK(hs_sidx_roaring_append(r, &b, &err), &err);
    uint64_t card = 0;
    CHECK_OK(hs_sidx_roaring_check(b.data, b.len, limit, &card, &err), &err);
    CHECK_EQ_INT(card, roaring_bitmap_get_cardinality(r));
    if (!roaring_bitmap_is_empty(r))
      CHECK(hs_sidx_roaring_check(b.data, b.len, roaring_bitmap_maximum(r), &card, NULL) != HS_OK);
    CHECK(hs_sidx_roaring_check(b.data, b.len - 1, limit, &card, NULL) != HS_OK);
    /* Mutations: rejected, or accepted and then consistent. */
    for (int m = 0; m < 20; m++) {
      size_t at = rnd(b.len);
      uint8_t old = b.data[at];
      b.data[at] ^= (uint8_t)(1u << rnd(8));
      roaring_bitmap_t *x = NULL;
      if (hs_sidx_roaring_load(b.data, b.len, limit, &x, NULL) == HS_OK) {
        CHECK(roaring_bitmap_get_cardinality(x) == 0 || roaring_bitmap_maximum(x) < limit);
        roaring_bitmap_free(x);
      }
      b.data[at] = old;
    }
    hs_buf_free(&b);
    roaring_bitmap_free(r);
  }
}

/* Flip bytes of valid files: validate and queries must not crash. */
static void test_corruption(void) {
  for (int t = 0; t < 60; t++) {
    tcol c;
    int type = (int)rnd(T_COUNT);
    tcol_gen(&c, type, 1 + (uint32_t)rnd(300), 1 + (int)rnd(50), 10);
    hs_sidx_column_options opts = {(hs_sidx_layout)rnd(3), 1 + (uint32_t)rnd(16), rnd(2) == 0,
                                   rnd(3) == 0};
    hs_buf file;
    hs_buf_init(&file);
    CHECK_OK(build_file(&c, &opts, &file, NULL), NULL);
    for (int m = 0; m < 40; m++) {
      hs_buf copy;
      hs_buf_init(&copy);
      hs_buf_append(&copy, file.data, file.len);
      for (int k = 0; k < 1 + (int)rnd(3); k++) copy.data[rnd(copy.len)] ^= (uint8_t)(1 + rnd(255));
      hs_source *src;
      hs_sidx_file *f;
      hs_sidx_column *col;
      hs_source_open_memory(copy.data, copy.len, "bad", &src, NULL);
      if (hs_sidx_file_open(src, &f, NULL) == HS_OK) {
        hs_sidx_file_validate(f, NULL);
        if (hs_sidx_column_open(f, "col", &col, NULL) == HS_OK) {
          pred p;
          memset(&p, 0, sizeof p);
          for (p.op = 0; p.op < 6; p.op++) {
            p.n_in = 2;
            gen_value(&c, &p, 0);
            gen_value(&c, &p, 1);
            p.has_lo = p.has_hi = true;
            roaring_bitmap_t *r = NULL;
            if (run_pred(col, &p, &r, NULL) == HS_OK) roaring_bitmap_free(r);
          }
          hs_sidx_column_free(col);
        }
        hs_sidx_file_free(f);
      }
      hs_source_unref(src);
      hs_buf_free(&copy);
    }
    hs_buf_free(&file);
    tcol_free(&c);
  }
}

static void test_api_edges(void) {
  hs_error err = {0};
  hs_sidx_builder *b;
  CHECK_OK(hs_sidx_builder_create(&b, &err), &err);
  hs_buf file;
  hs_buf_init(&file);
  CHECK_OK(hs_sidx_builder_finish(b, &file, &err), &err); /* no columns: valid, empty */
  hs_sidx_builder_free(b);
  hs_source *src;
  hs_sidx_file *f = NULL;
  hs_source_open_memory(file.data, file.len, "empty", &src, NULL);
  CHECK_OK(hs_sidx_file_open(src, &f, &err), &err);
  CHECK_EQ_INT(hs_sidx_file_column_count(f), 0);
  hs_sidx_column *col;
  CHECK(hs_sidx_column_open(f, "x", &col, NULL) == HS_ERR_NOT_FOUND);
  CHECK_OK(hs_sidx_file_validate(f, &err), &err);
  hs_sidx_file_free(f);
  hs_source_unref(src);
  hs_buf_free(&file);
  /* Unsupported type, type mismatch in a query. */
  struct ArrowSchema s;
  hs_arrow_schema_init(&s, "+s", "st", 2, 0, NULL);
  CHECK_OK(hs_sidx_builder_create(&b, &err), &err);
  CHECK(hs_sidx_builder_add_column(b, &s, 1, NULL, 0, NULL, NULL) == HS_ERR_UNSUPPORTED);
  hs_sidx_builder_free(b);
  hs_arrow_schema_release(&s);
  hs_sidx_file_free(NULL);
  hs_sidx_column_free(NULL);
  hs_sidx_builder_free(NULL);
}

/* ------------------------------------------------------------ driver */

static bool parse_value(const char *tok, hs_sidx_value *v, uint8_t *buf) {
  memset(v, 0, sizeof *v);
  if (tok[0] == 'i' && tok[1] == ':')
    v->kind = HS_SIDX_INT, v->i = strtoll(tok + 2, NULL, 10);
  else if (tok[0] == 'u' && tok[1] == ':')
    v->kind = HS_SIDX_UINT, v->u = strtoull(tok + 2, NULL, 10);
  else if (tok[0] == 'd' && tok[1] == ':')
    v->kind = HS_SIDX_DOUBLE, v->d = strtod(tok + 2, NULL);
  else if (tok[0] == 'b' && tok[1] == ':')
    v->kind = HS_SIDX_BOOL, v->b = tok[2] == '1';
  else if (tok[0] == 's' && tok[1] == ':') {
    size_t n = strlen(tok + 2) / 2;
    for (size_t k = 0; k < n; k++) {
      unsigned x;
      sscanf(tok + 2 + 2 * k, "%2x", &x);
      buf[k] = (uint8_t)x;
    }
    v->kind = HS_SIDX_BYTES, v->bytes = buf, v->n_bytes = n;
  } else {
    return false;
  }
  return true;
}

static int driver(const char *path, const char *column) {
  hs_error err = {0};
  hs_parquet_reader *rd = NULL;
  struct ArrowArrayStream stream = {0};
  struct ArrowSchema schema = {0};
  struct ArrowArray *batches = NULL;
  size_t nb = 0;
  hs_status st = hs_parquet_reader_open(path, &rd, &err);
  hs_parquet_read_options ro;
  hs_parquet_read_options_init(&ro);
  const char *cols[1] = {column};
  ro.columns = cols;
  ro.n_columns = 1;
  if (st == HS_OK) st = hs_parquet_reader_stream(rd, &ro, &stream, &err);
  if (st == HS_OK) st = hs_arrow_stream_collect(&stream, &schema, &batches, &nb, &err);
  if (st != HS_OK) {
    fprintf(stderr, "driver: %s\n", err.message);
    return 2;
  }
  struct ArrowArray *chunks = calloc(nb + 1, sizeof *chunks);
  for (size_t i = 0; i < nb; i++) chunks[i] = *batches[i].children[0];
  hs_sidx_builder *b;
  hs_buf file;
  hs_buf_init(&file);
  hs_sidx_builder_create(&b, &err);
  st = hs_sidx_builder_add_column(b, schema.children[0], 1, chunks, nb, NULL, &err);
  if (st == HS_OK) st = hs_sidx_builder_finish(b, &file, &err);
  hs_sidx_builder_free(b);
  hs_source *src = NULL;
  hs_sidx_file *f = NULL;
  hs_sidx_column *col = NULL;
  if (st == HS_OK) st = hs_source_open_memory(file.data, file.len, "idx", &src, &err);
  if (st == HS_OK) st = hs_sidx_file_open(src, &f, &err);
  if (st == HS_OK) st = hs_sidx_file_validate(f, &err);
  if (st == HS_OK) st = hs_sidx_column_open(f, column, &col, &err);
  if (st != HS_OK) {
    fprintf(stderr, "driver: %s\n", err.message);
    return 2;
  }
  printf("layout %d entries %u\n", (int)hs_sidx_column_layout(col),
         hs_sidx_column_entry_count(col));
  char line[65536];
  while (fgets(line, sizeof line, stdin) != NULL) {
    char *tok[16];
    int nt = 0;
    for (char *t = strtok(line, " \n"); t != NULL && nt < 16; t = strtok(NULL, " \n"))
      tok[nt++] = t;
    if (nt == 0) continue;
    hs_sidx_value v[8];
    uint8_t buf[8][1024];
    roaring_bitmap_t *r = NULL;
    hs_error qerr = {0};
    if (strcmp(tok[0], "eq") == 0 && nt == 2 && parse_value(tok[1], &v[0], buf[0])) {
      st = hs_sidx_column_equals(col, &v[0], &r, &qerr);
    } else if (strcmp(tok[0], "in") == 0 && nt <= 9) {
      for (int k = 1; k < nt; k++) parse_value(tok[k], &v[k - 1], buf[k - 1]);
      st = hs_sidx_column_in(col, v, (size_t)(nt - 1), &r, &qerr);
    } else if (strcmp(tok[0], "range") == 0 && nt == 5) {
      bool hl = strcmp(tok[1], "-") != 0 && parse_value(tok[1], &v[0], buf[0]);
      bool hh = strcmp(tok[3], "-") != 0 && parse_value(tok[3], &v[1], buf[1]);
      st = hs_sidx_column_range(col, hl ? &v[0] : NULL, tok[2][0] == '1', hh ? &v[1] : NULL,
                                tok[4][0] == '1', &r, &qerr);
    } else if (strcmp(tok[0], "null") == 0) {
      st = hs_sidx_column_is_null(col, &r, &qerr);
    } else if (strcmp(tok[0], "notnull") == 0) {
      st = hs_sidx_column_is_not_null(col, &r, &qerr);
    } else if (strcmp(tok[0], "prefix") == 0 && nt <= 2) {
      parse_value(nt == 2 ? tok[1] : "s:", &v[0], buf[0]);
      st = hs_sidx_column_prefix(col, v[0].bytes, v[0].n_bytes, &r, &qerr);
    } else {
      printf("error bad command\n");
      fflush(stdout);
      continue;
    }
    if (st != HS_OK) {
      printf("error %s\n", qerr.message);
    } else {
      roaring_uint32_iterator_t *it = roaring_create_iterator(r);
      printf("ok");
      for (; it->has_value; roaring_advance_uint32_iterator(it)) printf(" %u", it->current_value);
      printf("\n");
      roaring_free_uint32_iterator(it);
      roaring_bitmap_free(r);
    }
    fflush(stdout);
  }
  hs_sidx_column_free(col);
  hs_sidx_file_free(f);
  hs_source_unref(src);
  hs_buf_free(&file);
  free(chunks);
  hs_arrow_batches_free(batches, nb);
  hs_arrow_schema_release(&schema);
  if (stream.release) stream.release(&stream);
  hs_parquet_reader_free(rd);
  return 0;
}

/* HS_SIDX_SEEDS=<dir>: write small index files of every type and layout
 * (the fuzz seeds in fuzz/corpus/scalar_index/), SORTED plain and packed. */
static int write_seeds(const char *dir) {
  int k = 0;
  for (int type = 0; type < T_COUNT; type++)
    for (int layout = 1; layout <= 4; layout++) { /* DICT, SORTED plain, packed, lossy */
      tcol c;
      tcol_gen(&c, type, 40, 6, 20);
      hs_sidx_column_options opts = {layout >= 3 ? HS_SIDX_LAYOUT_SORTED : (hs_sidx_layout)layout,
                                     8, layout == 2, layout == 4};
      hs_buf file;
      hs_buf_init(&file);
      if (build_file(&c, &opts, &file, NULL) == HS_OK) {
        char path[512];
        snprintf(path, sizeof path, "%s/seed_%02d.puffin", dir, k++);
        FILE *fp = fopen(path, "wb");
        if (fp != NULL) {
          fwrite(file.data, 1, file.len, fp);
          fclose(fp);
        }
      }
      hs_buf_free(&file);
      tcol_free(&c);
    }
  return 0;
}

/* hs_sidx_builder_add_columns on 1 and 2 threads writes the same bytes as
 * add_column per column in order; a column named twice is refused. */
static void test_add_columns(void) {
  enum { NC = 6, CH = 3 };
  static const int types[NC] = {T_I64, T_STR, T_F64, T_BOOL, T_DEC, T_U64};
  tcol c[NC];
  struct ArrowArray chunks[NC][CH];
  const struct ArrowArray *cp[NC];
  struct ArrowSchema sch[NC];
  const struct ArrowSchema *fp[NC];
  int32_t ids[NC];
  hs_sidx_column_options opts[NC];
  char name[NC][8];
  uint32_t n = 3000 + (uint32_t)rnd(3000);
  for (int k = 0; k < NC; k++) {
    tcol_gen(&c[k], types[k], n, k % 2 ? 40 : 5000, 10);
    for (int j = 0; j < CH; j++)
      make_chunk(&c[k], (uint32_t)j * (n / CH), j == CH - 1 ? n - (CH - 1) * (n / CH) : n / CH,
                 (uint32_t)rnd(4), &chunks[k][j]);
    snprintf(name[k], sizeof name[k], "c%d", k);
    hs_arrow_schema_init(&sch[k], t_format[types[k]], name[k], 2, 0, NULL);
    cp[k] = chunks[k];
    fp[k] = &sch[k];
    ids[k] = 10 + k;
    opts[k] = (hs_sidx_column_options){k == 0 ? HS_SIDX_LAYOUT_SORTED : HS_SIDX_LAYOUT_AUTO,
                                       k == 2 ? 64 : 0, k == 5, k == 4};
  }
  hs_error err = {0};
  hs_buf files[3];
  for (int v = 0; v < 3; v++) {
    hs_buf_init(&files[v]);
    hs_sidx_builder *b = NULL;
    CHECK_OK(hs_sidx_builder_create(&b, &err), &err);
    if (v == 0) {
      for (int k = 0; k < NC; k++)
        CHECK_OK(hs_sidx_builder_add_column(b, fp[k], ids[k], cp[k], CH, &opts[k], &err), &err);
    } else {
      CHECK_OK(hs_sidx_builder_add_columns(b, NC, fp, ids, cp, CH, opts, (uint32_t)v, &err), &err);
      /* the same names again: refused, the file unchanged */
      CHECK(hs_sidx_builder_add_columns(b, 2, fp + 1, ids, cp, CH, NULL, 2, &err) ==
            HS_ERR_INVALID_ARG);
    }
    CHECK_OK(hs_sidx_builder_finish(b, &files[v], &err), &err);
    hs_sidx_builder_free(b);
  }
  for (int v = 1; v < 3; v++)
    CHECK(files[v].len == files[0].len && memcmp(files[v].data, files[0].data, files[0].len) == 0);
  for (int v = 0; v < 3; v++) hs_buf_free(&files[v]);
  for (int k = 0; k < NC; k++) {
    for (int j = 0; j < CH; j++) hs_arrow_array_release(&chunks[k][j]);
    hs_arrow_schema_release(&sch[k]);
    tcol_free(&c[k]);
  }
}

/* The union into row words (dictionary ranges of many entries): bitmaps of
 * every container kind (arrays, bitsets, runs), a last chunk cut short by
 * row_count, OR-ed into words and built back equal CRoaring's union. */
static void test_roaring_words(void) {
  const uint32_t row_counts[] = {1, 64, 65536, 65537, 200003};
  for (size_t ri = 0; ri < sizeof row_counts / sizeof *row_counts; ri++) {
    uint32_t rc = row_counts[ri];
    size_t nw = ((size_t)rc + 63) / 64;
    uint64_t *words = calloc(nw, sizeof *words);
    roaring_bitmap_t *want = roaring_bitmap_create();
    hs_error err = {0};
    for (int kind = 0; kind < 5; kind++) {
      roaring_bitmap_t *r = roaring_bitmap_create();
      for (uint32_t v = 0; v < rc; v++) {
        bool on = kind == 0   ? rnd(97) == 0                /* arrays */
                  : kind == 1 ? rnd(3) == 0                 /* bitsets */
                  : kind == 2 ? (v / 1000) % 3 == 1         /* runs */
                  : kind == 3 ? v == rc - 1                 /* the last row */
                              : v % 65536 < 5000 && rnd(2); /* bitset containers by chunk */
        if (on) roaring_bitmap_add(r, v);
      }
      hs_buf b;
      hs_buf_init(&b);
      CHECK_OK(hs_sidx_roaring_append(r, &b, &err), &err);
      CHECK_OK(hs_sidx_roaring_or_words(b.data, b.len, rc, words, &err), &err);
      roaring_bitmap_or_inplace(want, r);
      /* a bitmap past the rows is refused */
      if (kind == 3) {
        CHECK(hs_sidx_roaring_or_words(b.data, b.len, rc - 1, words, &err) == HS_ERR_CORRUPT);
        memset(words, 0, nw * sizeof *words);
        roaring_bitmap_clear(want);
      }
      hs_buf_free(&b);
      roaring_bitmap_free(r);
    }
    roaring_bitmap_t *got = NULL;
    CHECK_OK(hs_sidx_roaring_from_words(words, rc, &got, &err), &err);
    CHECK(got != NULL && roaring_bitmap_equals(got, want));
    roaring_bitmap_free(got);
    roaring_bitmap_free(want);
    free(words);
  }
}

/* ------------------------------------------------ IN lists (cursor) */

/* Row r's own value as a query value. */
static void row_value(const tcol *c, uint32_t r, hs_sidx_value *v) {
  memset(v, 0, sizeof *v);
  switch (c->type) {
  case T_I64:
  case T_I32: v->kind = HS_SIDX_INT, v->i = c->i[r]; break;
  case T_U64: v->kind = HS_SIDX_UINT, v->u = c->u[r]; break;
  case T_F64:
  case T_F32: v->kind = HS_SIDX_DOUBLE, v->d = c->d[r]; break;
  case T_STR:
  case T_FIX:
  case T_FIX8: v->kind = HS_SIDX_BYTES, v->bytes = c->s[r], v->n_bytes = c->slen[r]; break;
  case T_BOOL: v->kind = HS_SIDX_BOOL, v->b = c->i[r] != 0; break;
  case T_DEC:
    v->kind = HS_SIDX_DECIMAL;
    v->dec_lo = (uint64_t)c->dec[r];
    v->dec_hi = (int64_t)(c->dec[r] >> 64);
    break;
  }
}

static const tcol *sort_col;
static int row_order(const void *a, const void *b) { /* (value, row): the index's pair order */
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  hs_sidx_value v;
  row_value(sort_col, y, &v);
  int k = value_cmp(sort_col, x, &v);
  return k != 0 ? k : x < y ? -1 : x > y ? 1 : 0;
}

static bool open_column(const tcol *c, const hs_sidx_column_options *opts, hs_buf *file,
                        hs_source **src, hs_sidx_file **f, hs_sidx_column **col) {
  hs_error err = {0};
  hs_buf_init(file);
  CHECK_OK(build_file(c, opts, file, &err), &err);
  CHECK_OK(hs_source_open_memory(file->data, file->len, "idx", src, &err), &err);
  if (*src == NULL) return false;
  CHECK_OK(hs_sidx_file_open(*src, f, &err), &err);
  if (*f == NULL) return false;
  CHECK_OK(hs_sidx_file_validate(*f, &err), &err);
  CHECK_OK(hs_sidx_column_open(*f, "col", col, &err), &err);
  return *col != NULL;
}

/* IN lists of 1-400 values through the merge cursor (README "Point
 * lookups"): values of the data, values at SORTED block edges (pairs
 * k * block_rows - 1, k * block_rows, k * block_rows + 1 in (value, row)
 * order), duplicates, absent and cross-kind values, against brute force
 * (exact) or, lossy, a superset of it. */
static void check_in_lists(int type, uint32_t n, int distinct, hs_sidx_column_options opts,
                           int lists) {
  tcol c;
  tcol_gen(&c, type, n, distinct, 5);
  hs_buf file;
  hs_source *src = NULL;
  hs_sidx_file *f = NULL;
  hs_sidx_column *col = NULL;
  uint32_t *order = calloc(n + 1, sizeof *order), nv = 0;
  pred *ps = calloc(400, sizeof *ps);
  hs_sidx_value *vs = calloc(400, sizeof *vs);
  if (!open_column(&c, &opts, &file, &src, &f, &col)) goto out;
  for (uint32_t r = 0; r < n; r++)
    if (c.valid[r]) order[nv++] = r;
  sort_col = &c;
  qsort(order, nv, sizeof *order, row_order);
  uint32_t br = opts.block_rows ? opts.block_rows : 4096;
  bool exact = hs_sidx_column_exact(col);
  for (int q = 0; q < lists; q++) {
    size_t m = 1 + rnd(rnd(2) ? 8 : 400);
    for (size_t i = 0; i < m; i++) {
      int kind = (int)rnd(5);
      if (nv == 0 || kind == 0) { /* random: often absent, sometimes another kind */
        ps[i].op = 1;
        gen_value(&c, &ps[i], 0);
        vs[i] = ps[i].v[0];
      } else if (kind == 1) { /* at a block edge */
        uint64_t k = 1 + rnd(nv / br + 1), at = k * br + rnd(3) - 1;
        row_value(&c, order[at < nv ? at : nv - 1], &vs[i]);
      } else if (kind == 2 && i > 0) { /* a duplicate */
        vs[i] = vs[rnd(i)];
      } else {
        row_value(&c, order[rnd(nv)], &vs[i]);
        if (vs[i].kind == HS_SIDX_BYTES && rnd(4) == 0) /* a key cut short: its bytes follow */
          vs[i].n_bytes = rnd(vs[i].n_bytes + 1);
      }
    }
    roaring_bitmap_t *got = NULL;
    hs_error err = {0};
    hs_status st = hs_sidx_column_in(col, vs, m, &got, &err);
    CHECK_OK(st, &err);
    if (st != HS_OK) break;
    uint64_t want = 0;
    bool same = true;
    for (uint32_t r = 0; r < n; r++) {
      bool b = false;
      for (size_t i = 0; i < m && !b && c.valid[r]; i++) b = value_cmp(&c, r, &vs[i]) == 0;
      want += b;
      bool has = roaring_bitmap_contains(got, r);
      if ((b && !has) || (!b && has && exact)) same = false;
    }
    if (exact && roaring_bitmap_get_cardinality(got) != want) same = false;
    CHECK(same);
    if (!same)
      fprintf(stderr,
              "  IN: type %d n %u layout %d block %u plain %d lossy %d: %zu values, %" PRIu64
              " rows wanted, %" PRIu64 " got\n",
              type, n, (int)opts.layout, opts.block_rows, opts.plain_blocks, opts.lossy, m, want,
              roaring_bitmap_get_cardinality(got));
    roaring_bitmap_free(got);
    if (!same) break;
  }
out:
  hs_sidx_column_free(col);
  hs_sidx_file_free(f);
  hs_source_unref(src);
  hs_buf_free(&file);
  tcol_free(&c);
  free(order);
  free(ps);
  free(vs);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Large int64 columns whose block bitmaps hold several containers, run
 * containers (values rising with the row) and bitset containers (16384-pair
 * blocks of every other row), unique values with 1-13 apart (4-bit deltas,
 * arrays) and repeats: IN lists of up to 3,000 values, each row
 * checked by a binary search in the sorted list. */
static void check_in_shapes(void) {
  const uint32_t n = 200000;
  for (int shape = 0; shape < 4; shape++) {
    tcol c;
    tcol_gen(&c, T_I64, n, 10, 1);
    for (uint32_t r = 0; r < n; r++) {
      c.i[r] = shape == 0   ? (int64_t)(r / 3)                                      /* runs */
               : shape == 1 ? (r % 2 == 0 ? (int64_t)r : 1000000000 + r)            /* bitsets */
               : shape == 2 ? (int64_t)((r * 2654435761u) % n) * 7 + r * 40503u % 7 /* unique */
                            : (int64_t)rnd(5000) * 1000003;                         /* repeats */
    }
    hs_sidx_column_options opts = {HS_SIDX_LAYOUT_SORTED, shape == 1 ? 16384 : 0, shape == 3,
                                   false};
    hs_buf file;
    hs_source *src = NULL;
    hs_sidx_file *f = NULL;
    hs_sidx_column *col = NULL;
    size_t cap = 3000;
    hs_sidx_value *vs = calloc(cap, sizeof *vs);
    int64_t *sorted = calloc(cap, sizeof *sorted);
    if (open_column(&c, &opts, &file, &src, &f, &col)) {
      for (int q = 0; q < 6; q++) {
        size_t m = 1 + rnd(cap);
        for (size_t i = 0; i < m; i++) {
          uint32_t r = (uint32_t)rnd(n);
          vs[i].kind = HS_SIDX_INT;
          vs[i].i = rnd(4) == 0 ? (int64_t)hs_test_rand(&seed) : c.i[r] + (rnd(5) == 0);
          sorted[i] = vs[i].i;
        }
        qsort(sorted, m, sizeof *sorted, cmp_i64);
        roaring_bitmap_t *got = NULL;
        hs_error err = {0};
        CHECK_OK(hs_sidx_column_in(col, vs, m, &got, &err), &err);
        if (got == NULL) break;
        uint64_t want = 0;
        bool same = true;
        for (uint32_t r = 0; r < n; r++) {
          bool b = c.valid[r] && bsearch(&c.i[r], sorted, m, sizeof *sorted, cmp_i64) != NULL;
          want += b;
          if (b != roaring_bitmap_contains(got, r)) same = false;
        }
        CHECK(same && roaring_bitmap_get_cardinality(got) == want);
        if (!same) fprintf(stderr, "  IN shape %d: %zu values, %" PRIu64 " rows\n", shape, m, want);
        roaring_bitmap_free(got);
      }
    }
    hs_sidx_column_free(col);
    hs_sidx_file_free(f);
    hs_source_unref(src);
    hs_buf_free(&file);
    tcol_free(&c);
    free(vs);
    free(sorted);
  }
}

/* hs_sidx_roaring_select against CRoaring's select on arrays, bitsets and
 * runs, with and without container offsets; cut bytes fail, never read
 * past them. */
static void test_roaring_select(void) {
  for (int t = 0; t < 200; t++) {
    roaring_bitmap_t *r = roaring_bitmap_create();
    uint32_t limit = 1 + (uint32_t)rnd(t % 2 ? 150000 : 300000);
    int shape = (int)rnd(4);
    for (int k = 0; k < 1 + (int)rnd(t % 3 ? 5000 : 30000); k++) {
      uint32_t v = (uint32_t)rnd(limit);
      if (shape == 0)
        roaring_bitmap_add(r, v);
      else if (shape == 1)
        roaring_bitmap_add_range(r, v, v + rnd(300) < limit ? v + rnd(300) : limit);
      else if (shape == 2)
        roaring_bitmap_add(r, v & ~1u);
      else
        roaring_bitmap_add(r, rnd(3) ? v : v / 64);
    }
    hs_buf b;
    hs_buf_init(&b);
    hs_error err = {0};
    CHECK_OK(hs_sidx_roaring_append(r, &b, &err), &err);
    hs_sidx_roaring_view v;
    CHECK_OK(hs_sidx_roaring_view_init(b.data, b.len, &v, &err), &err);
    uint64_t card = roaring_bitmap_get_cardinality(r);
    CHECK_EQ_INT(v.card, card);
    for (int q = 0; q < 300 && card > 0; q++) {
      uint64_t k = q == 0 ? 0 : q == 1 ? card - 1 : rnd(card);
      uint32_t want = 0, got = 0;
      CHECK(roaring_bitmap_select(r, (uint32_t)k, &want));
      CHECK_OK(hs_sidx_roaring_select(&v, k, &got, &err), &err);
      CHECK_EQ_INT(got, want);
      if (got != want) break;
    }
    CHECK(hs_sidx_roaring_select(&v, card, &(uint32_t){0}, NULL) == HS_ERR_CORRUPT);
    /* the same bytes cut short: a copy of exactly that length (ASan sees
     * a read past it) */
    size_t cut = b.len > 8 ? b.len - 1 - rnd(b.len / 2) : b.len;
    uint8_t *part = malloc(cut);
    memcpy(part, b.data, cut);
    hs_sidx_roaring_view pv;
    if (hs_sidx_roaring_view_init(part, cut, &pv, NULL) == HS_OK)
      for (int q = 0; q < 50 && card > 0; q++) {
        uint32_t x;
        (void)hs_sidx_roaring_select(&pv, rnd(card), &x, NULL);
      }
    free(part);
    hs_buf_free(&b);
    roaring_bitmap_free(r);
  }
}

static void test_in_lists(void) {
  for (int type = 0; type < T_COUNT; type++) {
    int distinct = type == T_BOOL ? 2 : 1 + (int)rnd(3000);
    hs_sidx_column_options dict = {HS_SIDX_LAYOUT_DICT, 0, false, false};
    check_in_lists(type, 1500 + (uint32_t)rnd(1500), distinct, dict, 12);
    for (int k = 0; k < 4; k++) {
      hs_sidx_column_options o = {HS_SIDX_LAYOUT_SORTED, k == 0 ? 0 : 1 + (uint32_t)rnd(200),
                                  k == 2, k == 3};
      check_in_lists(type, (k == 0 ? 9000 : 1500) + (uint32_t)rnd(1500), distinct, o, 12);
    }
  }
  check_in_shapes();
}

int main(void) {
  if (getenv("HS_SIDX_SEEDS") != NULL) return write_seeds(getenv("HS_SIDX_SEEDS"));
  const char *drv = getenv("HS_SIDX_DRIVER");
  if (drv != NULL) return driver(drv, getenv("HS_SIDX_COLUMN") ? getenv("HS_SIDX_COLUMN") : "x");
  test_api_edges();
  test_add_columns();
  test_roaring_check();
  test_roaring_select();
  test_in_lists();
  static const hs_sidx_layout layouts[] = {HS_SIDX_LAYOUT_AUTO, HS_SIDX_LAYOUT_DICT,
                                           HS_SIDX_LAYOUT_SORTED};
  for (int type = 0; type < T_COUNT; type++) {
    for (int li = 0; li < 3; li++) {
      check_column(type, 0, 1, 0, layouts[li], 0, 20);
      check_column(type, 1 + (uint32_t)rnd(5), 3, 30, layouts[li], 1, 50);
      check_column(type, 500 + (uint32_t)rnd(500), 10, 20, layouts[li], 1 + (uint32_t)rnd(64), 400);
      check_column(type, 2000 + (uint32_t)rnd(2000), 1000, 5, layouts[li], 0, 400);
      check_column(type, 300, 5, 100, layouts[li], 3, 40); /* all NULL */
    }
  }
  check_column(T_I64, 70000, 70000, 1, HS_SIDX_LAYOUT_AUTO, 0, 200); /* > one bitmap container */
  test_roaring_words();
  /* dictionary ranges of many entries (the union into row words) over
   * several containers, bitset containers in each list */
  check_column(T_I32, 150000, 40, 2, HS_SIDX_LAYOUT_DICT, 0, 60);
  test_corruption();
  return hs_test_finish("test_scalar_index");
}

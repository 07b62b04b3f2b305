/*
 * test_colmap_vectors.c — a vector column another engine wrote as
 * list<float> (src/table/schema_map.c, HS_COLMAP_LIST_FSL): random batches
 * of list<float> / large_list<float> with NULL rows, NULL elements and
 * sliced offsets are converted to the read schema's fixed_size_list<float,
 * D> and compared value by value with the input (the oracle is the input
 * itself); every output validates; a list of another length is
 * HS_ERR_SCHEMA naming the file, the row counted over the batches applied,
 * and the length. Also run under ASan/UBSan.
 */
#include <string.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "table/schema_map.h"

static uint64_t rng = 3;
static uint32_t next(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng >> 33);
}

static void node(struct ArrowSchema *s, const char *fmt, const char *name, int id, int64_t nch) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, fmt, name, ARROW_FLAG_NULLABLE, nch, &e), &e);
  char buf[16];
  snprintf(buf, sizeof buf, "%d", id);
  const char *k = "PARQUET:field_id", *v = buf;
  CHECK_OK(hs_arrow_schema_set_metadata(s, &k, &v, 1, &e), &e);
}

static void set_bit(uint8_t *b, int64_t i, bool on) {
  if (on) b[i >> 3] |= (uint8_t)(1u << (i & 7));
}

typedef struct model {
  bool null_row;
  int len;
  float v[8];
  bool valid[8];
} model;

/* A struct batch of one list column of `n` rows (offset `off` into the
 * list array), `large` offsets; rows from `rows`. */
static void make_batch(struct ArrowArray *in, const model *rows, int64_t n, int64_t off,
                       bool large) {
  hs_error e = {0};
  int64_t total_rows = n + off, total_vals = 0;
  for (int64_t i = 0; i < n; i++) total_vals += rows[i].len;
  total_vals += 3 * off; /* junk rows before */
  CHECK_OK(hs_arrow_array_init(in, 1, 1, &e), &e);
  in->length = n;
  in->null_count = 0;
  struct ArrowArray *l = in->children[0];
  CHECK_OK(hs_arrow_array_init(l, 2, 1, &e), &e);
  l->length = n;
  l->offset = off;
  uint8_t *lv = hs_calloc(1, (size_t)(total_rows + 7) / 8 + 1);
  void *offs = hs_calloc((size_t)total_rows + 1, large ? 8 : 4);
  float *vals = hs_calloc((size_t)total_vals + 1, sizeof(float));
  uint8_t *ev = hs_calloc(1, (size_t)(total_vals + 7) / 8 + 1);
  int64_t at = 0, nulls = 0, enulls = 0;
  for (int64_t r = 0; r < total_rows; r++) {
    if (large)
      ((int64_t *)offs)[r] = at;
    else
      ((int32_t *)offs)[r] = (int32_t)at;
    if (r < off) {
      for (int k = 0; k < 3; k++) set_bit(ev, at++, true);
      set_bit(lv, r, true);
      continue;
    }
    const model *m = &rows[r - off];
    set_bit(lv, r, !m->null_row);
    if (m->null_row) nulls++;
    for (int k = 0; k < m->len; k++) {
      vals[at] = m->v[k];
      set_bit(ev, at, m->valid[k]);
      if (!m->valid[k]) enulls++;
      at++;
    }
  }
  if (large)
    ((int64_t *)offs)[total_rows] = at;
  else
    ((int32_t *)offs)[total_rows] = (int32_t)at;
  hs_arrow_array_set_buffer(l, 0, lv);
  hs_arrow_array_set_buffer(l, 1, offs);
  l->null_count = nulls;
  uint8_t *evc = enulls ? ev : NULL;
  if (!enulls) hs_free(ev);
  CHECK_OK(hs_arrow_array_make_primitive(l->children[0], at, vals, evc, enulls, &e), &e);
}

int main(void) {
  for (int round = 0; round < 200; round++) {
    int dim = 1 + (int)(next() % 8);
    bool large = next() % 2;
    struct ArrowSchema want, file;
    node(&want, "+s", "", -1, 1);
    char fmt[16];
    snprintf(fmt, sizeof fmt, "+w:%d", dim);
    node(want.children[0], fmt, "emb", 2, 1);
    node(want.children[0]->children[0], "f", "element", 3, 0);
    node(&file, "+s", "", -1, 1);
    node(file.children[0], large ? "+L" : "+l", "emb", 2, 1);
    node(file.children[0]->children[0], "f", "element", 3, 0);
    hs_colmap_ctx ctx = {0};
    hs_colmap m;
    hs_error e = {0};
    CHECK_OK(hs_colmap_build(&ctx, &want, &file, round % 2 == 0, "f.parquet", &m, &e), &e);
    CHECK_EQ_INT(m.conv[0], large ? HS_COLMAP_LLIST_FSL : HS_COLMAP_LIST_FSL);
    CHECK(strcmp(m.out.children[0]->format, fmt) == 0);
    int64_t seen = 0;
    int bad_batch = round % 5 == 0 ? (int)(next() % 3) : -1;
    for (int batch = 0; batch < 3; batch++) {
      int64_t n = next() % 40, off = next() % 3;
      model *rows = calloc((size_t)n + 1, sizeof *rows);
      int64_t bad_row = bad_batch == batch && n > 0 ? (int64_t)(next() % n) : -1;
      for (int64_t i = 0; i < n; i++) {
        rows[i].null_row = next() % 6 == 0;
        rows[i].len = rows[i].null_row ? (int)(next() % 2) * 0 : dim;
        if (i == bad_row) {
          rows[i].null_row = false;
          rows[i].len = dim == 1 ? 2 : dim - 1;
        }
        for (int k = 0; k < rows[i].len; k++) {
          rows[i].v[k] = (float)(int)(next() % 1000) / 8.0f;
          rows[i].valid[k] = next() % 9 != 0;
        }
      }
      struct ArrowArray in, out;
      make_batch(&in, rows, n, off, large);
      hs_error e2 = {0};
      hs_status st = hs_colmap_apply(&m, &in, &out, &e2);
      CHECK(in.release == NULL);
      if (bad_row >= 0) {
        CHECK_EQ_INT(st, HS_ERR_SCHEMA);
        char want_msg[160];
        snprintf(want_msg, sizeof want_msg, "f.parquet: row %lld ", (long long)(seen + bad_row));
        CHECK(strstr(e2.message, want_msg) != NULL);
        snprintf(want_msg, sizeof want_msg, "a list of %d floats", rows[bad_row].len);
        CHECK(strstr(e2.message, want_msg) != NULL);
        free(rows);
        break;
      }
      CHECK_OK(st, &e2);
      if (st == HS_OK) {
        CHECK_OK(hs_arrow_array_validate(&m.out, &out, &e2), &e2);
        const struct ArrowArray *v = out.children[0];
        const struct ArrowArray *el = v->children[0];
        CHECK_EQ_INT(el->length, n * dim);
        const float *fv = el->buffers[1];
        for (int64_t i = 0; i < n; i++) {
          CHECK(hs_arrow_is_valid(v, i) == !rows[i].null_row);
          if (rows[i].null_row) continue;
          for (int k = 0; k < dim; k++) {
            int64_t q = i * dim + k;
            CHECK(hs_arrow_is_valid(el, q) == rows[i].valid[k]);
            if (rows[i].valid[k]) CHECK(fv[q] == rows[i].v[k]);
          }
        }
        out.release(&out);
      }
      seen += n;
      free(rows);
    }
    hs_colmap_free(&m);
    hs_arrow_schema_release(&want);
    hs_arrow_schema_release(&file);
  }
  /* double elements are not vectors here: the map refuses the mismatch */
  struct ArrowSchema want, file;
  node(&want, "+s", "", -1, 1);
  node(want.children[0], "+w:4", "emb", 2, 1);
  node(want.children[0]->children[0], "f", "element", 3, 0);
  node(&file, "+s", "", -1, 1);
  node(file.children[0], "+l", "emb", 2, 1);
  node(file.children[0]->children[0], "g", "element", 3, 0);
  hs_colmap_ctx ctx = {0};
  hs_colmap m;
  hs_error e = {0};
  CHECK_EQ_INT(hs_colmap_build(&ctx, &want, &file, true, "g.parquet", &m, &e), HS_ERR_SCHEMA);
  hs_arrow_schema_release(&want);
  hs_arrow_schema_release(&file);
  return hs_test_finish("test_colmap_vectors");
}

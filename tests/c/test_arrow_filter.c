/*
 * test_arrow_filter.c — hs_arrow_array_filter (src/arrow/filter.c) against
 * a brute-force oracle: every column type (bool, 1/2/4/8/16-byte values,
 * strings, large strings, lists, fixed-size lists narrow and wide, structs),
 * with and without NULLs, at array offsets 0 and not, under keep patterns
 * none, one, every other row, long runs, all but one, all, and random
 * sparse and dense ones. Each kept row of the output must equal its source
 * row value by value (NULLs included), and the output must validate.
 *
 * Also hs_arrow_array_concat (src/arrow/concat.c) on the same types: views
 * of several random arrays (random offsets and lengths, some empty) joined,
 * each output row equal to its source row; and hs_arrow_coalescer over a
 * producer of random small batches: the rows come out in order, every
 * merged batch holds at least rows_min rows (but the last), and a failing
 * producer's error comes through.
 */
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"

static uint64_t rng = 14;

static int64_t rnd(int64_t n) {
  return (int64_t)(hs_test_rand(&rng) % (uint64_t)n);
}

/* Buffers of exactly n bytes (ASan builds catch any read or write past
 * them; the filter's 16-byte and vector copies must stay inside). */
static void *zalloc(size_t n) {
  return hs_calloc(n > 0 ? n : 1, 1);
}

static uint8_t *make_validity(int64_t n, bool nulls, int64_t *null_count) {
  *null_count = 0;
  if (!nulls) return NULL;
  uint8_t *v = zalloc((size_t)(n + 7) / 8);
  for (int64_t i = 0; i < n; i++) {
    if (rnd(5) != 0)
      v[i >> 3] |= (uint8_t)(1u << (i & 7));
    else
      (*null_count)++;
  }
  return v;
}

static bool bit(const uint8_t *b, int64_t i) {
  return (b[i >> 3] >> (i & 7)) & 1;
}

static bool valid(const struct ArrowArray *a, int64_t i) {
  const uint8_t *v = a->buffers[0];
  return v == NULL || a->null_count == 0 || bit(v, a->offset + i);
}

/* A random array of `format` with n rows (children of nested types built
 * alongside); the schema node is filled in too. */
static void make_array(const char *format, int64_t n, bool nulls, struct ArrowSchema *s,
                       struct ArrowArray *a, int depth) {
  hs_error e = {0};
  bool nested = format[0] == '+';
  int64_t nc = nested ? (format[1] == 's' ? 2 : 1) : 0;
  CHECK_OK(hs_arrow_schema_init(s, format, "c", ARROW_FLAG_NULLABLE, nc, &e), &e);
  hs_arrow_type at;
  CHECK_OK(hs_arrow_type_parse(format, &at, &e), &e);
  int64_t nb = at.id == HS_AT_STRING || at.id == HS_AT_LARGE_STRING ? 3
               : at.id == HS_AT_STRUCT || at.id == HS_AT_FIXED_LIST ? 1
                                                                    : 2;
  CHECK_OK(hs_arrow_array_init(a, nb, nc, &e), &e);
  a->length = n;
  int64_t nn;
  uint8_t *v = make_validity(n, nulls, &nn);
  if (v != NULL) hs_arrow_array_set_buffer(a, 0, v);
  a->null_count = nn;
  switch (at.id) {
  case HS_AT_BOOL: {
    uint8_t *b = zalloc((size_t)(n + 7) / 8);
    for (int64_t i = 0; i < n; i++)
      if (rnd(2)) b[i >> 3] |= (uint8_t)(1u << (i & 7));
    hs_arrow_array_set_buffer(a, 1, b);
    break;
  }
  case HS_AT_STRING:
  case HS_AT_LARGE_STRING: {
    bool large = at.id == HS_AT_LARGE_STRING;
    uint8_t *offs = zalloc((size_t)(n + 1) * (large ? 8 : 4));
    int64_t *lens = hs_malloc((size_t)(n + 1) * 8), at_ = 0;
    for (int64_t i = 0; i < n; i++) at_ += lens[i] = rnd(4) == 0 ? 17 + rnd(30) : rnd(17);
    uint8_t *data = zalloc((size_t)at_);
    at_ = 0;
    for (int64_t i = 0; i <= n; i++) {
      if (large)
        ((int64_t *)(void *)offs)[i] = at_;
      else
        ((int32_t *)(void *)offs)[i] = (int32_t)at_;
      if (i == n) break;
      for (int64_t j = 0; j < lens[i]; j++) data[at_++] = (uint8_t)('a' + rnd(26));
    }
    hs_free(lens);
    hs_arrow_array_set_buffer(a, 1, offs);
    hs_arrow_array_set_buffer(a, 2, data);
    break;
  }
  case HS_AT_LIST: {
    int32_t *offs = zalloc((size_t)(n + 1) * 4);
    for (int64_t i = 0; i < n; i++) offs[i + 1] = offs[i] + (int32_t)rnd(4);
    hs_arrow_array_set_buffer(a, 1, offs);
    make_array("i", offs[n], nulls, s->children[0], a->children[0], depth + 1);
    break;
  }
  case HS_AT_FIXED_LIST:
    make_array(at.width > 8 ? "g" : "f", n * at.width, nulls && depth > 0, s->children[0],
               a->children[0], depth + 1);
    break;
  case HS_AT_STRUCT:
    make_array("l", n, nulls, s->children[0], a->children[0], depth + 1);
    make_array("u", n, nulls, s->children[1], a->children[1], depth + 1);
    break;
  default: {
    int w = hs_arrow_type_byte_width(&at);
    uint8_t *vals = zalloc((size_t)(n * w));
    for (int64_t i = 0; i < n * w; i++) vals[i] = (uint8_t)rnd(256);
    hs_arrow_array_set_buffer(a, 1, vals);
    break;
  }
  }
}

/* Row i of a (node s) equals row j of b. */
static bool row_eq(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                   const struct ArrowArray *b, int64_t j) {
  bool va = valid(a, i), vb = valid(b, j);
  if (va != vb) return false;
  if (!va) return true;
  hs_arrow_type at;
  if (hs_arrow_type_parse(s->format, &at, NULL) != HS_OK) return false;
  int64_t ia = a->offset + i, jb = b->offset + j;
  switch (at.id) {
  case HS_AT_BOOL: return bit(a->buffers[1], ia) == bit(b->buffers[1], jb);
  case HS_AT_STRING: {
    const int32_t *oa = a->buffers[1], *ob = b->buffers[1];
    int32_t la = oa[ia + 1] - oa[ia], lb = ob[jb + 1] - ob[jb];
    return la == lb && memcmp((const uint8_t *)a->buffers[2] + oa[ia],
                              (const uint8_t *)b->buffers[2] + ob[jb], (size_t)la) == 0;
  }
  case HS_AT_LARGE_STRING: {
    const int64_t *oa = a->buffers[1], *ob = b->buffers[1];
    int64_t la = oa[ia + 1] - oa[ia], lb = ob[jb + 1] - ob[jb];
    return la == lb && memcmp((const uint8_t *)a->buffers[2] + oa[ia],
                              (const uint8_t *)b->buffers[2] + ob[jb], (size_t)la) == 0;
  }
  case HS_AT_LIST: {
    const int32_t *oa = a->buffers[1], *ob = b->buffers[1];
    if (oa[ia + 1] - oa[ia] != ob[jb + 1] - ob[jb]) return false;
    for (int32_t k = 0; k < oa[ia + 1] - oa[ia]; k++)
      if (!row_eq(s->children[0], a->children[0], oa[ia] + k, b->children[0], ob[jb] + k))
        return false;
    return true;
  }
  case HS_AT_FIXED_LIST:
    for (int64_t k = 0; k < at.width; k++)
      if (!row_eq(s->children[0], a->children[0], ia * at.width + k, b->children[0],
                  jb * at.width + k))
        return false;
    return true;
  case HS_AT_STRUCT:
    for (int64_t c = 0; c < s->n_children; c++)
      if (!row_eq(s->children[c], a->children[c], ia, b->children[c], jb)) return false;
    return true;
  default: {
    int w = hs_arrow_type_byte_width(&at);
    return memcmp((const uint8_t *)a->buffers[1] + ia * w, (const uint8_t *)b->buffers[1] + jb * w,
                  (size_t)w) == 0;
  }
  }
}

enum { P_NONE, P_ONE, P_ALT, P_RUNS, P_ALL_BUT_ONE, P_ALL, P_SPARSE, P_DENSE, P_N };

static int64_t make_keep(uint64_t *keep, int64_t n, int pattern) {
  size_t words = (size_t)(n + 63) / 64 + 1;
  /* Bits past n are set on purpose: the filter must ignore them. */
  memset(keep, pattern == P_ALL || pattern == P_ALL_BUT_ONE ? 0xff : 0, words * 8);
  int64_t one = n > 0 ? rnd(n) : 0, run = 0;
  bool on = false;
  for (int64_t i = 0; i < n; i++) {
    bool k;
    switch (pattern) {
    case P_NONE: k = false; break;
    case P_ONE: k = i == one; break;
    case P_ALT: k = i % 2 == 1; break;
    case P_RUNS:
      if (run-- <= 0) {
        on = !on;
        run = 1 + rnd(300);
      }
      k = on;
      break;
    case P_ALL_BUT_ONE: k = i != one; break;
    case P_ALL: k = true; break;
    case P_SPARSE: k = rnd(10) != 0; break;
    default: k = rnd(10) == 0; break;
    }
    if (k)
      keep[i >> 6] |= UINT64_C(1) << (i & 63);
    else
      keep[i >> 6] &= ~(UINT64_C(1) << (i & 63));
  }
  int64_t c = 0;
  for (int64_t i = 0; i < n; i++) c += (keep[i >> 6] >> (i & 63)) & 1;
  return c;
}

static void one_case(const char *format, int64_t n, bool nulls, int64_t offset, int pattern) {
  hs_error e = {0};
  struct ArrowSchema s;
  struct ArrowArray a, out;
  make_array(format, n + offset, nulls, &s, &a, 0);
  /* A view of rows offset .. offset + n, as the scan cuts its held batch. */
  struct ArrowArray view = a;
  view.offset = offset;
  view.length = n;
  view.null_count = a.null_count > 0 ? -1 : 0;
  uint64_t *keep = hs_malloc(((size_t)(n + 63) / 64 + 1) * 8);
  int64_t k = make_keep(keep, n, pattern);
  hs_status st = hs_arrow_array_filter(&s, &view, keep, k, &out, &e);
  CHECK_OK(st, &e);
  if (st == HS_OK) {
    CHECK_EQ_INT(out.length, k);
    CHECK_OK(hs_arrow_array_validate(&s, &out, &e), &e);
    int64_t j = 0, bad = 0;
    for (int64_t i = 0; i < n; i++) {
      if (!((keep[i >> 6] >> (i & 63)) & 1)) continue;
      bad += !row_eq(&s, &view, i, &out, j);
      j++;
    }
    if (bad)
      fprintf(stderr, "  %s n=%lld nulls=%d offset=%lld pattern=%d: %lld rows differ\n", format,
              (long long)n, nulls, (long long)offset, pattern, (long long)bad);
    CHECK_EQ_INT(bad, 0);
    if (out.null_count >= 0) {
      int64_t nc = 0;
      for (int64_t i = 0; i < out.length; i++) nc += !valid(&out, i);
      if (out.buffers[0] != NULL) CHECK_EQ_INT(out.null_count, nc);
    }
    out.release(&out);
  }
  hs_free(keep);
  a.release(&a);
  s.release(&s);
}

/* The source rows behind the coalescer's producer: views of `parts`. */
typedef struct producer {
  const struct ArrowSchema *s;
  const struct ArrowArray *views;
  int n, next, fail_at;
} producer;

static uint64_t all_ones[200];

/* Each call: an owned copy of the next view (as a scan hands a batch over). */
static int produce(void *ctx, struct ArrowArray *out) {
  producer *p = ctx;
  memset(out, 0, sizeof *out);
  if (p->next == p->fail_at) return 5;
  if (p->next == p->n) return 0;
  const struct ArrowArray *v = &p->views[p->next++];
  hs_error e = {0};
  CHECK_OK(hs_arrow_array_filter(p->s, v, all_ones, v->length, out, &e), &e);
  return 0;
}

static void concat_case(const char *format, int n_parts, bool nulls) {
  hs_error e = {0};
  struct ArrowSchema s[8];
  struct ArrowArray a[8], v[8];
  int64_t total = 0;
  for (int i = 0; i < n_parts; i++) {
    int64_t off = rnd(3) == 0 ? 0 : rnd(70), len = rnd(4) == 0 ? 0 : 1 + rnd(150);
    make_array(format, off + len + rnd(5), nulls, &s[i], &a[i], 0);
    v[i] = a[i];
    v[i].offset = off;
    v[i].length = len;
    v[i].null_count = a[i].null_count > 0 ? -1 : 0;
    total += len;
  }
  struct ArrowArray out;
  hs_status st = hs_arrow_array_concat(&s[0], v, (size_t)n_parts, &out, &e);
  CHECK_OK(st, &e);
  if (st == HS_OK) {
    CHECK_EQ_INT(out.length, total);
    CHECK_OK(hs_arrow_array_validate(&s[0], &out, &e), &e);
    int64_t j = 0, bad = 0, nulls_seen = 0;
    for (int i = 0; i < n_parts; i++)
      for (int64_t r = 0; r < v[i].length; r++, j++) bad += !row_eq(&s[0], &v[i], r, &out, j);
    for (int64_t r = 0; r < out.length; r++) nulls_seen += !valid(&out, r);
    if (bad)
      fprintf(stderr, "  concat %s parts=%d: %lld rows differ\n", format, n_parts, (long long)bad);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(out.null_count, nulls_seen);
    out.release(&out);
  }
  /* The coalescer over the same views, one owned batch per view (empty
   * views skipped: a scan never emits an empty batch). */
  struct ArrowArray ne[8];
  int m = 0;
  for (int i = 0; i < n_parts; i++)
    if (v[i].length > 0) ne[m++] = v[i];
  for (int fail = 0; fail < 2; fail++) {
    int64_t rows_min = 1 + rnd(300);
    producer p = {&s[0], ne, m, 0, fail && m > 1 ? m - 1 : -1};
    hs_arrow_coalescer c;
    hs_arrow_coalescer_init(&c, rows_min);
    int src = 0;
    int64_t src_row = 0, bad = 0, batches = 0;
    for (;;) {
      struct ArrowArray b;
      int rc = hs_arrow_coalescer_next(&c, &s[0], produce, &p, &b, &e);
      if (rc != 0) {
        CHECK(p.fail_at >= 0);
        CHECK_EQ_INT(rc, 5);
        break;
      }
      if (b.release == NULL) {
        CHECK(p.fail_at < 0);
        CHECK_EQ_INT(src, m);
        break;
      }
      batches++;
      bool last = p.next == p.n && c.pos == c.n;
      if (!last && b.length < rows_min) bad++;
      for (int64_t r = 0; r < b.length; r++) {
        if (src >= m) {
          bad++;
          break;
        }
        bad += !row_eq(&s[0], &ne[src], src_row, &b, r);
        if (++src_row == ne[src].length) src++, src_row = 0;
      }
      b.release(&b);
    }
    CHECK_EQ_INT(bad, 0);
    hs_arrow_coalescer_free(&c);
  }
  for (int i = 0; i < n_parts; i++) {
    a[i].release(&a[i]);
    s[i].release(&s[i]);
  }
}

int main(int argc, char **argv) {
  (void)argc;
  const char *formats[] = {"b", "c",  "s",    "i",      "l",  "g",    "d:12,2", "u",
                           "U", "+l", "+w:3", "+w:100", "+s", "tsu:", "w:5"};
  int64_t sizes[] = {0, 1, 63, 64, 65, 1000, 5000};
  for (size_t f = 0; f < sizeof formats / sizeof *formats; f++)
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
      for (int nulls = 0; nulls < 2; nulls++)
        for (int p = 0; p < P_N; p++) {
          one_case(formats[f], sizes[z], nulls, 0, p);
          one_case(formats[f], sizes[z], nulls, 1 + rnd(130), p);
        }
  memset(all_ones, 0xff, sizeof all_ones);
  if (getenv("HS_SIMD") == NULL)
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++)
      for (int rep = 0; rep < 12; rep++) concat_case(formats[f], 1 + (int)rnd(8), rep % 2 == 1);
  const char *simd = getenv("HS_SIMD");
  printf("HS_SIMD=%s: ", simd ? simd : "(any)");
  int rc = hs_test_finish("test_arrow_filter");
  /* Again with the portable loops (and PEXT alone): filter.c picks its
   * SIMD paths once per process, so the test runs itself again. */
  const char *next = simd == NULL ? "scalar" : strcmp(simd, "scalar") == 0 ? "avx2" : NULL;
  if (rc != 0 || next == NULL) return rc;
  fflush(stdout);
  setenv("HS_SIMD", next, 1);
  execv("/proc/self/exe", argv);
  perror("execv /proc/self/exe");
  return 1;
}

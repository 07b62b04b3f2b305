/*
 * test_sql_join.c — the JOIN operator (src/sql/op_join.c) against a
 * brute-force nested-loop reference on random data.
 *
 * Each side is a table (id, k1 bigint, k2 text, v bigint) with duplicate
 * and NULL keys, fed to the join in random chunk sizes by a tiny source
 * operator. Every join type runs with one and two keys, each residual
 * (none, l.v < r.v, l.v IS NULL OR l.v < r.v, r.v IS NULL, l.v IS NOT NULL AND
 * r.v IS NULL: conjuncts of one side are evaluated per row of it), by hash and by
 * nested loop (keys then become an "=" residual), with empty sides and
 * with enough duplicates that one left chunk makes several output chunks.
 * The (left id, right id) pairs that come out, and every column's value,
 * must be what the reference computes. Then float keys (-0 = 0, NaN =
 * NaN), the memory limit and cancellation.
 */
#include <math.h>

#include "hs_test.h"
#include "hs_table_fixture.h"
#include "sql/exec.h"
#include "sql/plan.h"

static const char *const k2_words[] = {"a", "b", "it's", "", "quite a long key string"};
#define N_WORDS 5

/* One side's rows. */
typedef struct side {
  int64_t n;
  int64_t *k1, *v;
  int *k2; /* index into k2_words */
  bool *k1null, *k2null, *vnull;
} side;

static void side_free(side *s) {
  free(s->k1);
  free(s->v);
  free(s->k2);
  free(s->k1null);
  free(s->k2null);
  free(s->vnull);
  memset(s, 0, sizeof *s);
}

static void side_random(side *s, int64_t n, int64_t domain, int null_pct, uint64_t *rng) {
  s->n = n;
  s->k1 = calloc((size_t)n + 1, 8);
  s->v = calloc((size_t)n + 1, 8);
  s->k2 = calloc((size_t)n + 1, sizeof(int));
  s->k1null = calloc((size_t)n + 1, 1);
  s->k2null = calloc((size_t)n + 1, 1);
  s->vnull = calloc((size_t)n + 1, 1);
  for (int64_t i = 0; i < n; i++) {
    s->k1[i] = (int64_t)(hs_test_rand(rng) % (uint64_t)domain) - domain / 3;
    s->k2[i] = (int)(hs_test_rand(rng) % 3);
    s->v[i] = (int64_t)(hs_test_rand(rng) % 100);
    s->k1null[i] = (int)(hs_test_rand(rng) % 100) < null_pct;
    s->k2null[i] = (int)(hs_test_rand(rng) % 100) < null_pct;
    s->vnull[i] = (int)(hs_test_rand(rng) % 100) < 10;
  }
}

/* --------------------------------------------------------- sources */

typedef struct src_state {
  hs_sql_chunk *chunks;
  size_t n, pos;
} src_state;

static hs_status src_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  src_state *s = op->state;
  if (s->pos == s->n) return HS_OK;
  const hs_sql_chunk *c = &s->chunks[s->pos++];
  hs_status st = hs_sql_chunk_init(out, c->n_cols, c->n, err);
  for (int32_t k = 0; k < c->n_cols && st == HS_OK; k++)
    st = hs_sql_vec_share(&out->cols[k], &c->cols[k], err);
  if (st != HS_OK) hs_sql_chunk_release(out);
  return st;
}

static hs_sql_type t_i64, t_text, t_bool;

/* The side as chunks of random sizes (columns id, k1, k2, v). */
static src_state side_chunks(const side *s, uint64_t *rng) {
  src_state r = {0};
  r.chunks = calloc((size_t)s->n + 1, sizeof(hs_sql_chunk));
  hs_error err = {0};
  int64_t at = 0;
  while (at < s->n) {
    int64_t len = 1 + (int64_t)(hs_test_rand(rng) % 3000);
    if (len > s->n - at) len = s->n - at;
    hs_sql_chunk *c = &r.chunks[r.n++];
    CHECK_OK(hs_sql_chunk_init(c, 4, len, &err), &err);
    CHECK_OK(hs_sql_vec_alloc(&c->cols[0], t_i64, len, false, &err), &err);
    CHECK_OK(hs_sql_vec_alloc(&c->cols[1], t_i64, len, true, &err), &err);
    CHECK_OK(hs_sql_vec_alloc(&c->cols[2], t_text, len, true, &err), &err);
    CHECK_OK(hs_sql_vec_alloc(&c->cols[3], t_i64, len, true, &err), &err);
    int64_t *id = hs_sql_vec_mut_data(&c->cols[0]);
    int64_t *k1 = hs_sql_vec_mut_data(&c->cols[1]);
    hs_sql_str *k2 = hs_sql_vec_mut_data(&c->cols[2]);
    int64_t *v = hs_sql_vec_mut_data(&c->cols[3]);
    uint8_t *k1v = hs_sql_vec_mut_valid(&c->cols[1]), *k2v = hs_sql_vec_mut_valid(&c->cols[2]),
            *vv = hs_sql_vec_mut_valid(&c->cols[3]);
    for (int64_t i = 0; i < len; i++) {
      int64_t row = at + i;
      id[i] = row;
      k1[i] = s->k1null[row] ? 0 : s->k1[row];
      k1v[i] = !s->k1null[row];
      const char *w = k2_words[s->k2[row]];
      k2[i].ptr = s->k2null[row] ? NULL : w;
      k2[i].len = s->k2null[row] ? 0 : (uint32_t)strlen(w);
      k2v[i] = !s->k2null[row];
      v[i] = s->vnull[row] ? 0 : s->v[row];
      vv[i] = !s->vnull[row];
    }
    at += len;
  }
  return r;
}

static void src_free(src_state *s) {
  for (size_t i = 0; i < s->n; i++) hs_sql_chunk_release(&s->chunks[i]);
  free(s->chunks);
  memset(s, 0, sizeof *s);
}

/* ------------------------------------------------- test kernels */

/* bigint < bigint and bigint = bigint, strict. */
static hs_status cmp_kernel(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n,
                            hs_sql_type ret, hs_sql_vec *out, hs_error *err, bool lt) {
  hs_status st = hs_sql_vec_alloc(out, ret, n, true, err);
  if (st != HS_OK) return st;
  uint8_t *d = hs_sql_vec_mut_data(out), *valid = hs_sql_vec_mut_valid(out);
  const int64_t *a = args[0].data, *b = args[1].data;
  for (int64_t i = 0; i < n; i++) {
    valid[i] = hs_sql_vec_valid(&args[0], i) && hs_sql_vec_valid(&args[1], i);
    d[i] = valid[i] && (lt ? a[i] < b[i] : a[i] == b[i]);
  }
  return HS_OK;
}
static hs_status lt_kernel(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n,
                           hs_sql_type ret, hs_sql_vec *out, hs_error *err) {
  return cmp_kernel(e, args, n_args, n, ret, out, err, true);
}
static hs_status eq_kernel(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n,
                           hs_sql_type ret, hs_sql_vec *out, hs_error *err) {
  return cmp_kernel(e, args, n_args, n, ret, out, err, false);
}
static const hs_sql_fn fn_lt = {"<",       2,    {HS_SQL_INT64, HS_SQL_INT64}, HS_SQL_BOOL, NULL,
                                lt_kernel, false};
static const hs_sql_fn fn_eq = {"=",       2,    {HS_SQL_INT64, HS_SQL_INT64}, HS_SQL_BOOL, NULL,
                                eq_kernel, false};

/* ------------------------------------------------------- plans */

static hs_arena arena;

static hs_sql_expr *col(int32_t c, hs_sql_type t) {
  hs_sql_expr *e = hs_sql_expr_new(&arena, HS_SX_COL, t, 0);
  e->col = c;
  return e;
}
static hs_sql_expr *node(hs_sql_expr_kind k, const hs_sql_fn *fn, hs_sql_expr *a, hs_sql_expr *b) {
  hs_sql_expr *e = hs_sql_expr_new(&arena, k, t_bool, 0);
  e->fn = fn;
  e->args = hs_arena_alloc(&arena, 2 * sizeof(hs_sql_expr *));
  e->args[0] = a;
  e->args[1] = b;
  e->n_args = b != NULL ? 2 : 1;
  return e;
}

static hs_sql_plan *plan_node(hs_sql_plan_kind kind, int32_t n_cols) {
  hs_sql_plan *p = hs_arena_alloc(&arena, sizeof *p);
  p->kind = kind;
  p->n_cols = n_cols;
  p->types = hs_arena_alloc(&arena, sizeof(hs_sql_type) * (size_t)(n_cols + 1));
  p->names = hs_arena_alloc(&arena, sizeof(char *) * (size_t)(n_cols + 1));
  p->est_rows = -1;
  p->limit = -1;
  p->scan.snapshot_id = -1;
  p->scan.limit = -1;
  return p;
}

static hs_sql_plan *side_plan(void) {
  hs_sql_plan *p = plan_node(HS_SP_VALUES, 4);
  static const char *names[] = {"id", "k1", "k2", "v"};
  for (int c = 0; c < 4; c++) {
    p->types[c] = c == 2 ? t_text : t_i64;
    p->names[c] = names[c];
  }
  return p;
}

enum { P_NONE, P_LT, P_OR, P_RNULL, P_LR, P_COUNT };

/* pred over left (0..3) then right (4..7) columns; keys added as "="
 * (only k1: bigint) when `keys_as_pred` (nested loop). */
static hs_sql_expr *make_pred(int pk, int n_keys, bool keys_as_pred) {
  hs_sql_expr *p = NULL;
  switch (pk) {
  case P_LT: p = node(HS_SX_FUNC, &fn_lt, col(3, t_i64), col(7, t_i64)); break;
  case P_OR:
    p = node(HS_SX_OR, NULL, node(HS_SX_ISNULL, NULL, col(3, t_i64), NULL),
             node(HS_SX_FUNC, &fn_lt, col(3, t_i64), col(7, t_i64)));
    break;
  case P_RNULL: p = node(HS_SX_ISNULL, NULL, col(7, t_i64), NULL); break;
  case P_LR: { /* l.v IS NOT NULL AND r.v IS NULL: one conjunct per side */
    hs_sql_expr *lnn = node(HS_SX_ISNULL, NULL, col(3, t_i64), NULL);
    lnn->negated = true;
    p = node(HS_SX_AND, NULL, lnn, node(HS_SX_ISNULL, NULL, col(7, t_i64), NULL));
    break;
  }
  default: break;
  }
  if (keys_as_pred && n_keys > 0) {
    hs_sql_expr *k = node(HS_SX_FUNC, &fn_eq, col(1, t_i64), col(5, t_i64));
    p = p != NULL ? node(HS_SX_AND, NULL, k, p) : k;
  }
  return p;
}

/* --------------------------------------------------- reference */

static int tv_lt(const side *l, int64_t i, const side *r, int64_t j) {
  if (l->vnull[i] || r->vnull[j]) return -1;
  return l->v[i] < r->v[j];
}

static bool ref_match(const side *l, int64_t i, const side *r, int64_t j, int n_keys, int pk) {
  if (n_keys >= 1 && (l->k1null[i] || r->k1null[j] || l->k1[i] != r->k1[j])) return false;
  if (n_keys >= 2 && (l->k2null[i] || r->k2null[j] || l->k2[i] != r->k2[j])) return false;
  switch (pk) {
  case P_LT: return tv_lt(l, i, r, j) == 1;
  case P_OR: return l->vnull[i] || tv_lt(l, i, r, j) == 1;
  case P_RNULL: return r->vnull[j];
  case P_LR: return !l->vnull[i] && r->vnull[j];
  default: return true;
  }
}

static bool ref_maybe_eq(const side *l, int64_t i, const side *r, int64_t j, int n_keys) {
  if (n_keys >= 1 && !l->k1null[i] && !r->k1null[j] && l->k1[i] != r->k1[j]) return false;
  if (n_keys >= 2 && !l->k2null[i] && !r->k2null[j] && l->k2[i] != r->k2[j]) return false;
  return true;
}

typedef struct pair {
  int64_t l, r;
} pair;

static int pair_cmp(const void *a, const void *b) {
  const pair *x = a, *y = b;
  if (x->l != y->l) return x->l < y->l ? -1 : 1;
  if (x->r != y->r) return x->r < y->r ? -1 : 1;
  return 0;
}

typedef struct pairs {
  pair *v;
  size_t n, cap;
} pairs;

static void pairs_add(pairs *p, int64_t l, int64_t r) {
  if (p->n == p->cap) {
    p->cap = p->cap ? p->cap * 2 : 1024;
    p->v = realloc(p->v, p->cap * sizeof *p->v);
  }
  p->v[p->n].l = l;
  p->v[p->n].r = r;
  p->n++;
}

static pairs reference(const side *l, const side *r, hs_sql_join_type type, int n_keys, int pk) {
  pairs out = {0};
  uint8_t *rmatched = calloc((size_t)r->n + 1, 1);
  for (int64_t i = 0; i < l->n; i++) {
    bool any = false, maybe = false;
    for (int64_t j = 0; j < r->n; j++) {
      if (ref_match(l, i, r, j, n_keys, pk)) {
        any = true;
        rmatched[j] = 1;
        if (type == HS_SJ_INNER || type == HS_SJ_LEFT || type == HS_SJ_RIGHT || type == HS_SJ_FULL)
          pairs_add(&out, i, j);
      }
      /* NOT IN: a right row passing the condition that could equal the left row */
      if (type == HS_SJ_ANTI_NULLAWARE && ref_maybe_eq(l, i, r, j, n_keys) &&
          ref_match(l, i, r, j, 0, pk))
        maybe = true;
    }
    if ((type == HS_SJ_LEFT || type == HS_SJ_FULL) && !any) pairs_add(&out, i, -1);
    if (type == HS_SJ_SEMI && any) pairs_add(&out, i, -1);
    if (type == HS_SJ_ANTI && !any) pairs_add(&out, i, -1);
    if (type == HS_SJ_ANTI_NULLAWARE && !maybe) pairs_add(&out, i, -1);
  }
  if (type == HS_SJ_RIGHT || type == HS_SJ_FULL)
    for (int64_t j = 0; j < r->n; j++)
      if (!rmatched[j]) pairs_add(&out, -1, j);
  free(rmatched);
  if (out.n > 1) qsort(out.v, out.n, sizeof *out.v, pair_cmp);
  return out;
}

/* ------------------------------------------------------ running */

static hs_sql_exec *exec_new(int64_t memory_limit, const volatile int *cancel) {
  hs_sql_plan_ctx *pctx = hs_calloc(1, sizeof *pctx);
  hs_arena_init(&pctx->arena);
  hs_sql_plan *root = hs_arena_alloc(&pctx->arena, sizeof *root);
  root->kind = HS_SP_VALUES;
  root->limit = -1;
  hs_sql_exec_opts o = {0};
  o.memory_limit = memory_limit;
  o.cancel = cancel;
  hs_sql_exec *x = NULL;
  hs_error err = {0};
  CHECK_OK(hs_sql_exec_new(pctx, root, &o, &x, &err), &err);
  return x;
}

/* Check one side's columns of output row k against source row `row`
 * (-1: all NULL). */
static bool row_ok(const hs_sql_chunk *c, int32_t base, int64_t k, const side *s, int64_t row) {
  const hs_sql_vec *id = &c->cols[base], *k1 = &c->cols[base + 1], *k2 = &c->cols[base + 2],
                   *v = &c->cols[base + 3];
  if (row < 0)
    return !hs_sql_vec_valid(id, k) && !hs_sql_vec_valid(k1, k) && !hs_sql_vec_valid(k2, k) &&
           !hs_sql_vec_valid(v, k);
  if (!hs_sql_vec_valid(id, k) || ((const int64_t *)id->data)[k] != row) return false;
  if (hs_sql_vec_valid(k1, k) != !s->k1null[row]) return false;
  if (!s->k1null[row] && ((const int64_t *)k1->data)[k] != s->k1[row]) return false;
  if (hs_sql_vec_valid(k2, k) != !s->k2null[row]) return false;
  if (!s->k2null[row]) {
    hs_sql_str t = ((const hs_sql_str *)k2->data)[k];
    const char *w = k2_words[s->k2[row]];
    if (t.len != strlen(w) || memcmp(t.ptr, w, t.len) != 0) return false;
  }
  if (hs_sql_vec_valid(v, k) != !s->vnull[row]) return false;
  if (!s->vnull[row] && ((const int64_t *)v->data)[k] != s->v[row]) return false;
  return true;
}

typedef struct run_result {
  hs_status status;
  pairs got;
  int64_t max_chunk;
  bool values_ok, types_ok;
  char message[HS_ERROR_MESSAGE_MAX];
} run_result;

static run_result run_join(hs_sql_exec *x, const side *l, const side *r, hs_sql_join_type type,
                           hs_sql_join_method method, int n_keys, int pk, uint64_t *rng) {
  run_result res = {0};
  res.values_ok = res.types_ok = true;
  hs_sql_plan *lp = side_plan(), *rp = side_plan();
  bool out_right =
      type == HS_SJ_INNER || type == HS_SJ_LEFT || type == HS_SJ_RIGHT || type == HS_SJ_FULL;
  hs_sql_plan *jp = plan_node(HS_SP_JOIN, out_right ? 8 : 4);
  for (int c = 0; c < jp->n_cols; c++) {
    jp->types[c] = c % 4 == 2 ? t_text : t_i64;
    jp->names[c] = lp->names[c % 4];
  }
  jp->kids[0] = lp;
  jp->kids[1] = rp;
  jp->join.type = type;
  jp->join.method = method;
  bool nl = method == HS_SJM_NL;
  jp->pred = make_pred(pk, n_keys, nl);
  if (!nl && n_keys > 0) {
    jp->join.n_keys = n_keys;
    jp->join.left_keys = hs_arena_alloc(&arena, 2 * sizeof(hs_sql_expr *));
    jp->join.right_keys = hs_arena_alloc(&arena, 2 * sizeof(hs_sql_expr *));
    jp->join.left_keys[0] = col(1, t_i64);
    jp->join.right_keys[0] = col(1, t_i64);
    jp->join.left_keys[1] = col(2, t_text);
    jp->join.right_keys[1] = col(2, t_text);
  }
  src_state ls = side_chunks(l, rng), rs = side_chunks(r, rng);
  hs_sql_op lop = {0}, rop = {0}, jop = {0};
  lop.plan = lp;
  lop.x = x;
  lop.next = src_next;
  lop.state = &ls;
  rop.plan = rp;
  rop.x = x;
  rop.next = src_next;
  rop.state = &rs;
  jop.plan = jp;
  jop.x = x;
  jop.kids[0] = &lop;
  jop.kids[1] = &rop;
  hs_error err = {0};
  res.status = hs_sql_op_join_open(x, jp, &jop, &err);
  hs_sql_chunk *chunks = NULL;
  size_t n_chunks = 0;
  if (res.status == HS_OK) res.status = hs_sql_op_drain(&jop, &chunks, &n_chunks, &err);
  snprintf(res.message, sizeof res.message, "%s", err.message);
  for (size_t ci = 0; ci < n_chunks; ci++) {
    const hs_sql_chunk *c = &chunks[ci];
    if (c->n > res.max_chunk) res.max_chunk = c->n;
    for (int32_t k = 0; k < c->n_cols; k++)
      if (c->cols[k].n != c->n || c->cols[k].type.id != jp->types[k].id) res.types_ok = false;
    if (!res.types_ok) continue;
    for (int64_t k = 0; k < c->n; k++) {
      int64_t li = -1, ri = -1;
      if (hs_sql_vec_valid(&c->cols[0], k)) li = ((const int64_t *)c->cols[0].data)[k];
      if (out_right && hs_sql_vec_valid(&c->cols[4], k)) ri = ((const int64_t *)c->cols[4].data)[k];
      if ((li >= 0 && li >= l->n) || (ri >= 0 && ri >= r->n)) {
        res.values_ok = false;
        continue;
      }
      if (!row_ok(c, 0, k, l, li) || (out_right && !row_ok(c, 4, k, r, ri))) res.values_ok = false;
      pairs_add(&res.got, li, ri);
    }
  }
  for (size_t ci = 0; ci < n_chunks; ci++) hs_sql_chunk_release(&chunks[ci]);
  hs_free(chunks);
  if (jop.free != NULL) jop.free(&jop);
  src_free(&ls);
  src_free(&rs);
  if (res.got.n > 1) qsort(res.got.v, res.got.n, sizeof *res.got.v, pair_cmp);
  return res;
}

static const char *type_names[] = {"inner", "left", "right", "full", "semi", "anti", "not in"};

static int failures_reported;

static void check_case(hs_sql_exec *x, const side *l, const side *r, hs_sql_join_type type,
                       hs_sql_join_method method, int n_keys, int pk, uint64_t *rng) {
  pairs want = reference(l, r, type, n_keys, pk);
  run_result got = run_join(x, l, r, type, method, n_keys, pk, rng);
  bool same = got.status == HS_OK && got.got.n == want.n &&
              (want.n == 0 || memcmp(got.got.v, want.v, want.n * sizeof(pair)) == 0);
  CHECK(same);
  CHECK(got.values_ok);
  CHECK(got.types_ok);
  CHECK(got.max_chunk <= 16384);
  if ((!same || !got.values_ok || !got.types_ok) && failures_reported++ < 10)
    fprintf(stderr,
            "  case: %s join, %s, %d keys, pred %d, left %lld rows, right %lld rows: got %zu "
            "pairs (%s%s), want %zu\n",
            type_names[type], method == HS_SJM_HASH ? "hash" : "nested loop", n_keys, pk,
            (long long)l->n, (long long)r->n, got.got.n, hs_status_str(got.status),
            got.message[0] ? got.message : "", want.n);
  free(want.v);
  free(got.got.v);
}

static void test_random(void) {
  uint64_t rng = 42;
  hs_sql_exec *x = exec_new(0, NULL);
  if (x == NULL) return;
  /* (left rows, right rows, key domain, left null %, right null %) */
  static const int64_t shapes[][5] = {
      {0, 0, 10, 0, 0},      {0, 50, 10, 10, 10},       {50, 0, 10, 10, 10},
      {1, 1, 1, 0, 0},       {300, 200, 40, 15, 15},    {400, 300, 30, 20, 0},
      {200, 300, 20, 0, 20}, {2000, 1500, 300, 10, 10}, {3000, 1000, 5, 5, 5},
      {100, 900, 3, 30, 30},
  };
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    side l = {0}, r = {0};
    side_random(&l, shapes[si][0], shapes[si][2], (int)shapes[si][3], &rng);
    side_random(&r, shapes[si][1], shapes[si][2], (int)shapes[si][4], &rng);
    for (int type = HS_SJ_INNER; type <= HS_SJ_ANTI_NULLAWARE; type++) {
      for (int n_keys = 1; n_keys <= 2; n_keys++) {
        for (int pk = 0; pk < P_COUNT; pk++) {
          check_case(x, &l, &r, (hs_sql_join_type)type, HS_SJM_HASH, n_keys, pk, &rng);
          /* Nested loop: one key (k1 as an "=" residual), small sides. */
          if (n_keys == 1 && l.n * r.n <= 2000000 && type != HS_SJ_ANTI_NULLAWARE)
            check_case(x, &l, &r, (hs_sql_join_type)type, HS_SJM_NL, n_keys, pk, &rng);
        }
      }
      /* Cross join and friends: nested loop without any condition. */
      if (l.n * r.n <= 200000 && type != HS_SJ_ANTI_NULLAWARE)
        check_case(x, &l, &r, (hs_sql_join_type)type, HS_SJM_NL, 0, P_NONE, &rng);
    }
    side_free(&l);
    side_free(&r);
  }
  hs_sql_exec_free(x);
}

/* Float keys: -0 = 0, NaN = NaN, NULL matches nothing. */
static void test_float_keys(void) {
  hs_sql_exec *x = exec_new(0, NULL);
  if (x == NULL) return;
  hs_sql_type t_f64 = hs_sql_type_of(HS_SQL_FLOAT64);
  const double lv[] = {0.0, -0.0, NAN, 1.5, 2.0, 0.0};
  const double rv[] = {-0.0, NAN, NAN, 1.5, 3.0, 0.0};
  const bool rnull[] = {false, false, false, false, false, true};
  hs_error err = {0};
  hs_sql_chunk lc = {0}, rc = {0};
  CHECK_OK(hs_sql_chunk_init(&lc, 1, 6, &err), &err);
  CHECK_OK(hs_sql_chunk_init(&rc, 1, 6, &err), &err);
  CHECK_OK(hs_sql_vec_alloc(&lc.cols[0], t_f64, 6, false, &err), &err);
  CHECK_OK(hs_sql_vec_alloc(&rc.cols[0], t_f64, 6, true, &err), &err);
  memcpy(hs_sql_vec_mut_data(&lc.cols[0]), lv, sizeof lv);
  memcpy(hs_sql_vec_mut_data(&rc.cols[0]), rv, sizeof rv);
  for (int i = 0; i < 6; i++) hs_sql_vec_mut_valid(&rc.cols[0])[i] = !rnull[i];
  hs_sql_plan *lp = plan_node(HS_SP_VALUES, 1), *rp = plan_node(HS_SP_VALUES, 1);
  lp->types[0] = rp->types[0] = t_f64;
  hs_sql_plan *jp = plan_node(HS_SP_JOIN, 2);
  jp->types[0] = jp->types[1] = t_f64;
  jp->kids[0] = lp;
  jp->kids[1] = rp;
  jp->join.type = HS_SJ_INNER;
  jp->join.method = HS_SJM_HASH;
  jp->join.n_keys = 1;
  jp->join.left_keys = hs_arena_alloc(&arena, sizeof(hs_sql_expr *));
  jp->join.right_keys = hs_arena_alloc(&arena, sizeof(hs_sql_expr *));
  jp->join.left_keys[0] = col(0, t_f64);
  jp->join.right_keys[0] = col(0, t_f64);
  src_state ls = {&lc, 1, 0}, rs = {&rc, 1, 0};
  hs_sql_op lop = {0}, rop = {0}, jop = {0};
  lop.plan = lp, lop.x = x, lop.next = src_next, lop.state = &ls;
  rop.plan = rp, rop.x = x, rop.next = src_next, rop.state = &rs;
  jop.plan = jp, jop.x = x, jop.kids[0] = &lop, jop.kids[1] = &rop;
  CHECK_OK(hs_sql_op_join_open(x, jp, &jop, &err), &err);
  hs_sql_chunk *chunks = NULL;
  size_t n = 0;
  CHECK_OK(hs_sql_op_drain(&jop, &chunks, &n, &err), &err);
  /* Brute force with PostgreSQL's float "=". */
  int want = 0, got = 0;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++)
      if (!rnull[j] && (lv[i] == rv[j] || (isnan(lv[i]) && isnan(rv[j])))) want++;
  for (size_t c = 0; c < n; c++) {
    got += (int)chunks[c].n;
    for (int64_t k = 0; k < chunks[c].n; k++) {
      double a = ((const double *)chunks[c].cols[0].data)[k];
      double b = ((const double *)chunks[c].cols[1].data)[k];
      CHECK(a == b || (isnan(a) && isnan(b)));
    }
    hs_sql_chunk_release(&chunks[c]);
  }
  hs_free(chunks);
  CHECK_EQ_INT(got, want);
  CHECK_EQ_INT(want, 6); /* three zeros x -0, NaN x two NaN, 1.5 */
  jop.free(&jop);
  hs_sql_chunk_release(&lc);
  hs_sql_chunk_release(&rc);
  hs_sql_exec_free(x);
}

/* The build side counts against the memory limit; a set cancel flag stops
 * the join with "query cancelled". */
static void test_limits(void) {
  uint64_t rng = 7;
  side l = {0}, r = {0};
  side_random(&l, 1000, 50, 5, &rng);
  side_random(&r, 20000, 50, 5, &rng);
  hs_sql_exec *x = exec_new(64 << 10, NULL);
  if (x != NULL) {
    run_result res = run_join(x, &l, &r, HS_SJ_INNER, HS_SJM_HASH, 1, P_NONE, &rng);
    CHECK_EQ_INT(res.status, HS_ERR_NOMEM);
    CHECK(strstr(res.message, "memory limit") != NULL);
    free(res.got.v);
    hs_sql_exec_free(x);
  }
  volatile int cancel = 1;
  x = exec_new(0, &cancel);
  if (x != NULL) {
    run_result res = run_join(x, &l, &r, HS_SJ_LEFT, HS_SJM_HASH, 1, P_NONE, &rng);
    CHECK(res.status != HS_OK);
    CHECK(strstr(res.message, "cancelled") != NULL);
    free(res.got.v);
    hs_sql_exec_free(x);
  }
  side_free(&l);
  side_free(&r);
}

/* ------------------------------------------- index nested loop */

/* The fixture table's row `id` (hs_table_fixture.h): name "n<id % 37>"
 * (NULL when id % 7 == 0), x = (id % 50) * 0.5 (NULL when id % 11 == 0),
 * k = id % 13. The right SCAN reads (id, name, k) WHERE x >= 5. */
#define IX_ROWS 2000
static bool ix_row_passes(int64_t id) {
  return id % 11 != 0 && (double)(id % 50) * 0.5 >= 5;
}

/* Left rows: (lk integer, lname text, tag bigint = row number). */
typedef struct ix_left {
  int64_t n;
  int32_t *lk;
  int *lname; /* n<lname>, -1 NULL */
  bool *lknull;
} ix_left;

static src_state ix_left_chunks(const ix_left *l, uint64_t *rng, char names[][16]) {
  src_state r = {0};
  r.chunks = calloc((size_t)l->n + 1, sizeof(hs_sql_chunk));
  hs_error err = {0};
  hs_sql_type t_i32 = hs_sql_type_of(HS_SQL_INT32);
  for (int64_t at = 0; at < l->n;) {
    int64_t len = 1 + (int64_t)(hs_test_rand(rng) % 700);
    if (len > l->n - at) len = l->n - at;
    hs_sql_chunk *c = &r.chunks[r.n++];
    CHECK_OK(hs_sql_chunk_init(c, 3, len, &err), &err);
    CHECK_OK(hs_sql_vec_alloc(&c->cols[0], t_i32, len, true, &err), &err);
    CHECK_OK(hs_sql_vec_alloc(&c->cols[1], t_text, len, true, &err), &err);
    CHECK_OK(hs_sql_vec_alloc(&c->cols[2], t_i64, len, false, &err), &err);
    int32_t *lk = hs_sql_vec_mut_data(&c->cols[0]);
    hs_sql_str *ln = hs_sql_vec_mut_data(&c->cols[1]);
    int64_t *tag = hs_sql_vec_mut_data(&c->cols[2]);
    for (int64_t i = 0; i < len; i++) {
      int64_t row = at + i;
      lk[i] = l->lknull[row] ? 0 : l->lk[row];
      hs_sql_vec_mut_valid(&c->cols[0])[i] = !l->lknull[row];
      if (l->lname[row] >= 0) {
        ln[i].ptr = names[l->lname[row]];
        /* names[47] is "n1\0z": a NUL no filter literal can hold */
        ln[i].len = l->lname[row] == 47 ? 4 : (uint32_t)strlen(names[l->lname[row]]);
      }
      hs_sql_vec_mut_valid(&c->cols[1])[i] = l->lname[row] >= 0;
      tag[i] = row;
    }
    at += len;
  }
  return r;
}

/* The right SCAN's rows (id, name, k WHERE x >= 5) as chunks, for hashing. */
static src_state table_chunks(const char *root) {
  src_state r = {0};
  hs_error e = {0};
  hs_table *t = NULL;
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  if (t == NULL) return r;
  static const char *cols[] = {"id", "name", "k"};
  hs_scan_options o;
  hs_scan_options_init(&o);
  o.columns = cols;
  o.n_columns = 3;
  o.filter = "x >= 5";
  o.batch_rows_max = 333;
  struct ArrowArrayStream s = {0};
  CHECK_OK(hs_table_scan_query(t, &o, &s, &e), &e);
  struct ArrowSchema schema = {0};
  if (s.release != NULL && s.get_schema(&s, &schema) == 0) {
    r.chunks = calloc(IX_ROWS, sizeof(hs_sql_chunk));
    for (;;) {
      struct ArrowArray b = {0};
      if (s.get_next(&s, &b) != 0 || b.release == NULL) break;
      CHECK_OK(hs_sql_chunk_from_arrow(&schema, &b, NULL, 0, &r.chunks[r.n], &e), &e);
      r.n++;
    }
    schema.release(&schema);
  }
  if (s.release != NULL) s.release(&s);
  hs_table_free(t);
  return r;
}

static void test_index_nl(void) {
  char *root = hs_test_temp_root("sql_join");
  if (root == NULL) return;
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, NULL, &t, &e), &e);
  s.release(&s);
  if (t == NULL) return;
  for (int f = 0; f < 5; f++) append_rows(t, f * (IX_ROWS / 5), IX_ROWS / 5);
  CHECK_OK(hs_table_add_index(t, "k", "bitmap", NULL, &e), &e);
  CHECK_OK(hs_table_add_index(t, "name", "inverted", NULL, &e), &e);
  CHECK_OK(hs_table_build_configured_indexes(t, NULL, NULL, &e), &e);
  hs_table_free(t);

  static char names[48][16];
  for (int i = 0; i < 47; i++) snprintf(names[i], sizeof names[i], "n%d", i);
  memcpy(names[47], "n1\0z", 5);
  uint64_t rng = 99;
  ix_left l = {0};
  l.n = 1500; /* the first 300 rows: under the index nested loop's bound (2000 / 4) */
  l.lk = calloc((size_t)l.n, sizeof *l.lk);
  l.lname = calloc((size_t)l.n, sizeof *l.lname);
  l.lknull = calloc((size_t)l.n, 1);
  for (int64_t i = 0; i < l.n; i++) {
    l.lk[i] = (int32_t)(hs_test_rand(&rng) % 16) - 2;
    l.lknull[i] = hs_test_rand(&rng) % 10 == 0;
    l.lname[i] = hs_test_rand(&rng) % 10 == 0 ? -1 : (int)(hs_test_rand(&rng) % 45);
  }
  hs_sql_type t_i32 = hs_sql_type_of(HS_SQL_INT32);
  hs_sql_exec *x = exec_new(0, NULL);
  hs_sql_rel *rel = hs_arena_alloc(&arena, sizeof *rel);
  rel->name = "t";
  rel->uri = root;
  /* (index column, keys): k alone; name alone; (k, name) answered by name. */
  static const struct {
    const char *ixcol;
    int n_keys;
    bool by_name_first;
  } variants[] = {{"k", 1, false}, {"name", 1, true}, {"name", 2, false}};
  static const hs_sql_join_type types[] = {HS_SJ_INNER, HS_SJ_LEFT, HS_SJ_SEMI, HS_SJ_ANTI};
  const int64_t full_n = l.n;
  for (size_t vi = 0; vi < 7 && x != NULL; vi++) {
    /* variants 0-2 with 300 left rows (index lookups), 3-5 with 1500 (hashing), 6: the
     * name variant with a NUL in one key (hashing from the chunk that holds it) */
    l.n = vi < 3 || vi == 6 ? 300 : full_n;
    bool lookups = vi < 3;
    const int var = vi == 6 ? 1 : (int)(vi % 3);
    if (vi == 6) l.lname[200] = 47;
    for (size_t ti = 0; ti < 4; ti++) {
      hs_sql_join_type type = types[ti];
      bool out_right = type == HS_SJ_INNER || type == HS_SJ_LEFT;
      hs_sql_plan *lp = plan_node(HS_SP_VALUES, 3);
      lp->types[0] = t_i32, lp->types[1] = t_text, lp->types[2] = t_i64;
      hs_sql_plan *rp = plan_node(HS_SP_SCAN, 3);
      rp->types[0] = t_i64, rp->types[1] = t_text, rp->types[2] = t_i32;
      static const char *cols[] = {"id", "name", "k"};
      rp->names[0] = "id", rp->names[1] = "name", rp->names[2] = "k";
      rp->scan.rel = rel;
      rp->scan.columns = cols;
      rp->scan.n_columns = 3;
      rp->scan.filter = hs_arena_strndup(&arena, "x >= 5", 6);
      hs_sql_plan *jp = plan_node(HS_SP_JOIN, out_right ? 6 : 3);
      for (int c = 0; c < jp->n_cols; c++) jp->types[c] = c < 3 ? lp->types[c] : rp->types[c - 3];
      jp->kids[0] = lp;
      jp->kids[1] = rp;
      jp->join.type = type;
      jp->join.method = HS_SJM_INDEX_NL;
      jp->join.index_column = variants[var].ixcol;
      jp->join.n_keys = variants[var].n_keys;
      jp->join.left_keys = hs_arena_alloc(&arena, 2 * sizeof(hs_sql_expr *));
      jp->join.right_keys = hs_arena_alloc(&arena, 2 * sizeof(hs_sql_expr *));
      int kcol = 0, ncol = 1;
      if (variants[var].by_name_first) kcol = 1, ncol = 0;
      jp->join.left_keys[kcol] = col(0, t_i32);
      jp->join.right_keys[kcol] = col(2, t_i32);
      jp->join.left_keys[ncol] = col(1, t_text);
      jp->join.right_keys[ncol] = col(1, t_text);
      src_state ls = ix_left_chunks(&l, &rng, names), rs = table_chunks(root);
      hs_sql_op lop = {0}, rop = {0}, jop = {0};
      lop.plan = lp, lop.x = x, lop.next = src_next, lop.state = &ls;
      rop.plan = rp, rop.x = x, rop.next = src_next, rop.state = &rs; /* read when hashing */
      jop.plan = jp, jop.x = x, jop.kids[0] = &lop, jop.kids[1] = &rop;
      CHECK_OK(hs_sql_op_join_open(x, jp, &jop, &e), &e);
      hs_sql_chunk *chunks = NULL;
      size_t n_chunks = 0;
      CHECK_OK(hs_sql_op_drain(&jop, &chunks, &n_chunks, &e), &e);
      /* The lookups went through the index: "..., N of M files answered by the index";
       * or, over the bound, the right side was hashed. */
      if (lookups) {
        long long answered = -1, read = -1;
        const char *fl = strstr(jop.stats.note, "fetched, ");
        CHECK(fl != NULL && sscanf(fl, "fetched, %lld of %lld files", &answered, &read) == 2);
        CHECK(answered > 0 && answered == read);
      } else if (vi == 6) {
        CHECK(strstr(jop.stats.note, "cannot state") != NULL);
      } else {
        CHECK(strstr(jop.stats.note, "no index lookups") != NULL);
      }
      pairs got = {0}, want = {0};
      for (size_t ci = 0; ci < n_chunks; ci++) {
        for (int64_t k = 0; k < chunks[ci].n; k++) {
          int64_t li = ((const int64_t *)chunks[ci].cols[2].data)[k], ri = -1;
          if (out_right && hs_sql_vec_valid(&chunks[ci].cols[3], k))
            ri = ((const int64_t *)chunks[ci].cols[3].data)[k];
          /* the right columns agree with the row they name */
          if (ri >= 0) {
            CHECK_EQ_INT(((const int32_t *)chunks[ci].cols[5].data)[k], ri % 13);
            CHECK(hs_sql_vec_valid(&chunks[ci].cols[4], k) == (ri % 7 != 0));
          }
          pairs_add(&got, li, ri);
        }
        hs_sql_chunk_release(&chunks[ci]);
      }
      hs_free(chunks);
      for (int64_t i = 0; i < l.n; i++) {
        bool any = false;
        for (int64_t id = 0; id < IX_ROWS; id++) {
          if (!ix_row_passes(id)) continue;
          bool kq = !l.lknull[i] && l.lk[i] == id % 13;
          bool nq = l.lname[i] >= 0 && id % 7 != 0 && l.lname[i] == id % 37;
          bool eq = variants[var].ixcol[0] == 'k' ? kq : variants[var].n_keys == 1 ? nq : kq && nq;
          if (!eq) continue;
          any = true;
          if (out_right) pairs_add(&want, i, id);
        }
        if ((type == HS_SJ_LEFT && !any) || (type == HS_SJ_SEMI && any) ||
            (type == HS_SJ_ANTI && !any))
          pairs_add(&want, i, -1);
      }
      if (got.n > 1) qsort(got.v, got.n, sizeof *got.v, pair_cmp);
      if (want.n > 1) qsort(want.v, want.n, sizeof *want.v, pair_cmp);
      bool same =
          got.n == want.n && (want.n == 0 || memcmp(got.v, want.v, want.n * sizeof(pair)) == 0);
      CHECK(same);
      if (!same)
        fprintf(stderr,
                "  index nested loop on %s, %d keys, %s join: got %zu pairs, want %zu (%s)\n",
                variants[var].ixcol, variants[var].n_keys, type_names[type], got.n, want.n,
                jop.stats.note);
      free(got.v);
      free(want.v);
      if (jop.free != NULL) jop.free(&jop);
      src_free(&ls);
      src_free(&rs);
    }
  }
  hs_sql_exec_free(x);
  free(l.lk);
  free(l.lname);
  free(l.lknull);
  free(root);
}

int main(void) {
  t_i64 = hs_sql_type_of(HS_SQL_INT64);
  t_text = hs_sql_type_of(HS_SQL_TEXT);
  t_bool = hs_sql_type_of(HS_SQL_BOOL);
  hs_arena_init(&arena);
  test_random();
  test_float_keys();
  test_limits();
  test_index_nl();
  hs_arena_reset(&arena);
  return hs_test_finish("test_sql_join");
}

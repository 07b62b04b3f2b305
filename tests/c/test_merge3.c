/*
 * test_merge3.c — the three-way merge of keyed lists (common/merge3.h)
 * checked by the properties any such merge must have, on random lists:
 * when theirs is base the result is ours (same order, "no change"); when
 * ours is base the result is theirs; when the two sides edit disjoint keys
 * the result is base with both edits, ours' entries first in ours' order;
 * and the hand-picked conflicts (both change a key: ours wins; theirs
 * removes what ours changed: removed; ours removes what theirs changed:
 * removed; both add a key: ours').
 */
#include "common/merge3.h"
#include "hs_test.h"

#define MAXE 64

typedef struct ent {
  int key, val;
} ent;

typedef struct list {
  ent e[MAXE];
  size_t n;
} list;

typedef struct ctx {
  const list *l[3];
  list out;
  int fail_after; /* emits that succeed before one fails (-1: never) */
} ctx;

static const void *at(void *c, int which, size_t i) {
  return &((ctx *)c)->l[which]->e[i];
}

static const ent *lfind(const list *l, int key) {
  for (size_t i = 0; i < l->n; i++)
    if (l->e[i].key == key) return &l->e[i];
  return NULL;
}

static const void *find(void *c, int which, const void *e) {
  return lfind(((ctx *)c)->l[which], ((const ent *)e)->key);
}

static bool same(void *c, const void *a, const void *b) {
  (void)c;
  return ((const ent *)a)->val == ((const ent *)b)->val;
}

static bool emit(void *c, const void *e) {
  ctx *x = c;
  if (x->fail_after == 0) return false;
  if (x->fail_after > 0) x->fail_after--;
  if (x->out.n == MAXE) return false;
  x->out.e[x->out.n++] = *(const ent *)e;
  return true;
}

static int run(const list *b, const list *t, const list *o, list *out) {
  ctx c = {{b, t, o}, {{{0}}, 0}, -1};
  hs_merge3 m = {
      .ctx = &c, .n = {b->n, t->n, o->n}, .at = at, .find = find, .same = same, .emit = emit};
  int r = hs_merge3_run(&m);
  *out = c.out;
  return r;
}

static bool same_set(const list *a, const list *b) {
  if (a->n != b->n) return false;
  for (size_t i = 0; i < a->n; i++) {
    const ent *x = lfind(b, a->e[i].key);
    if (x == NULL || x->val != a->e[i].val) return false;
  }
  return true;
}

static bool same_list(const list *a, const list *b) {
  if (a->n != b->n) return false;
  for (size_t i = 0; i < a->n; i++)
    if (a->e[i].key != b->e[i].key || a->e[i].val != b->e[i].val) return false;
  return true;
}

/* base with random edits of the keys k where (k % 2 == side) or, with
 * side < 0, any key: removals, value changes, additions of new keys
 * (from `next_key`). */
static void edit(const list *base, list *out, int side, int *next_key, uint64_t *rng) {
  out->n = 0;
  for (size_t i = 0; i < base->n; i++) {
    ent e = base->e[i];
    bool mine = side < 0 || e.key % 2 == side;
    unsigned r = (unsigned)(hs_test_rand(rng) % 4);
    if (mine && r == 0) continue;      /* removed */
    if (mine && r == 1) e.val += 1000; /* changed */
    out->e[out->n++] = e;
  }
  int adds = (int)(hs_test_rand(rng) % 4);
  for (int k = 0; k < adds && out->n < MAXE; k++) {
    int key = (*next_key)++;
    if (side >= 0 && key % 2 != side) key = (*next_key)++;
    out->e[out->n++] = (ent){key, (int)(hs_test_rand(rng) % 100)};
  }
  /* shuffle: the merge must not depend on order */
  for (size_t i = out->n; i > 1; i--) {
    size_t j = (size_t)(hs_test_rand(rng) % i);
    ent tmp = out->e[i - 1];
    out->e[i - 1] = out->e[j];
    out->e[j] = tmp;
  }
}

static void random_base(list *b, int *next_key, uint64_t *rng) {
  b->n = (size_t)(hs_test_rand(rng) % 12);
  for (size_t i = 0; i < b->n; i++) b->e[i] = (ent){(*next_key)++, (int)(hs_test_rand(rng) % 100)};
}

/* Ours' entries in the result appear in ours' order. */
static bool ours_order_kept(const list *res, const list *o) {
  size_t j = 0;
  for (size_t i = 0; i < res->n; i++) {
    const ent *x = lfind(o, res->e[i].key);
    if (x == NULL) continue;
    size_t pos = (size_t)(x - o->e);
    if (pos < j) return false;
    j = pos;
  }
  return true;
}

static void test_random(void) {
  uint64_t rng = 20261203;
  for (int it = 0; it < 3000; it++) {
    int next = 0;
    list b, t, o, res, want;
    random_base(&b, &next, &rng);
    /* theirs is base: ours, unchanged, in order */
    edit(&b, &o, -1, &next, &rng);
    CHECK_EQ_INT(run(&b, &b, &o, &res), 0);
    CHECK(same_list(&res, &o));
    /* ours is base: theirs */
    edit(&b, &t, -1, &next, &rng);
    int r = run(&b, &t, &b, &res);
    CHECK(same_set(&res, &t));
    CHECK_EQ_INT(r, same_set(&t, &b) ? 0 : 1);
    /* disjoint edits: base with both */
    edit(&b, &t, 0, &next, &rng);
    edit(&b, &o, 1, &next, &rng);
    want.n = 0;
    for (size_t i = 0; i < b.n; i++) {
      const list *side = b.e[i].key % 2 == 0 ? &t : &o;
      const ent *x = lfind(side, b.e[i].key);
      if (x != NULL) want.e[want.n++] = *x;
    }
    for (size_t i = 0; i < t.n; i++)
      if (!lfind(&b, t.e[i].key)) want.e[want.n++] = t.e[i];
    for (size_t i = 0; i < o.n; i++)
      if (!lfind(&b, o.e[i].key)) want.e[want.n++] = o.e[i];
    r = run(&b, &t, &o, &res);
    CHECK(same_set(&res, &want));
    CHECK(ours_order_kept(&res, &o));
    CHECK_EQ_INT(r, same_list(&res, &o) ? 0 : 1);
  }
}

static void test_conflicts(void) {
  list b = {{{1, 10}, {2, 20}, {3, 30}}, 3}, res;
  /* both changed key 1: ours */
  list t = {{{1, 11}, {2, 20}, {3, 30}}, 3}, o = {{{1, 12}, {2, 20}, {3, 30}}, 3};
  run(&b, &t, &o, &res);
  CHECK(lfind(&res, 1) && lfind(&res, 1)->val == 12);
  /* theirs removed key 2, ours changed it: removed */
  list t2 = {{{1, 10}, {3, 30}}, 2}, o2 = {{{1, 10}, {2, 21}, {3, 30}}, 3};
  CHECK_EQ_INT(run(&b, &t2, &o2, &res), 1);
  CHECK(lfind(&res, 2) == NULL && res.n == 2);
  /* ours removed key 3, theirs changed it: removed */
  list t3 = {{{1, 10}, {2, 20}, {3, 31}}, 3}, o3 = {{{1, 10}, {2, 20}}, 2};
  CHECK_EQ_INT(run(&b, &t3, &o3, &res), 0);
  CHECK(lfind(&res, 3) == NULL);
  /* both added key 4: ours' */
  list t4 = {{{1, 10}, {2, 20}, {3, 30}, {4, 41}}, 4},
       o4 = {{{1, 10}, {2, 20}, {3, 30}, {4, 42}}, 4};
  CHECK_EQ_INT(run(&b, &t4, &o4, &res), 0);
  CHECK(res.n == 4 && lfind(&res, 4)->val == 42);
  /* a failing emit is reported */
  ctx c = {{&b, &t4, &o2}, {{{0}}, 0}, 1};
  hs_merge3 m = {
      .ctx = &c, .n = {b.n, t4.n, o2.n}, .at = at, .find = find, .same = same, .emit = emit};
  CHECK_EQ_INT(hs_merge3_run(&m), -1);
  /* empty lists */
  list e = {{{0}}, 0};
  CHECK_EQ_INT(run(&e, &e, &e, &res), 0);
  CHECK_EQ_INT(res.n, 0);
}

int main(void) {
  test_random();
  test_conflicts();
  return hs_test_finish("test_merge3");
}

/*
 * op_agg.c — the hash aggregate: GROUP BY keys with aggregates, and
 * DISTINCT (an AGG with no aggregates).
 *
 * The input is drained chunk by chunk. Per chunk the key expressions are
 * evaluated, each row's hash computed a column at a time, and each row
 * found in (or added to) an open-addressing table of group ids; the
 * aggregates then fold whole argument vectors into their per-group states
 * with the chunk's group-id array (func.h update). Keys are kept
 * column-wise in growable typed arrays (string bytes copied into the
 * operator's arena), so comparing a row with a group is hs_sql_vec_cmp
 * against a view of those arrays; NULL keys form one group, NaN one group.
 * Without GROUP BY there is exactly one group, also for empty input
 * (count 0, sum NULL).
 *
 * FILTER (WHERE ...) and DISTINCT arguments select rows first: a distinct
 * aggregate keeps a hash set of (group, argument) pairs and passes only
 * rows new to it.
 *
 * In parallel (morsel-driven, pipe.h): when every aggregate merges
 * exactly (no DISTINCT, no float sum/avg/variance), the input pipeline —
 * its source pulled a chunk at a time under a lock, the FILTER / PROJECT
 * stages above it — runs on hs_parallel_cores() workers, each folding its
 * chunks into a partial state that notes where each group first appeared
 * (chunk sequence number, row). The partials are merged in that order, so
 * groups come out as in a serial run and HS_THREADS=1 and N agree exactly.
 *
 * Memory (keys, hashes, states, string bytes) is accounted with
 * hs_sql_exec_reserve; past the limit the query fails with its message
 * (no spilling yet).
 */
#include <stdio.h>
#include <string.h>

#include "func_tables.h"
#include "op_sort.h"
#include "pipe.h"

#define HS_AGG_CHUNK 4096
#define EMPTY_SLOT UINT64_MAX
#define GROUPS_MAX ((int64_t)UINT32_MAX - 1)

/* ------------------------------------------------------------ key store */

/* An index entry: group id | upper hash bits << 32 (EMPTY_SLOT: free)
 * and, for one integer-like key column, the key's value. */
typedef struct ks_slot {
  uint64_t meta;
  int64_t key;
} ks_slot;

/* Distinct tuples of n_cols values with an open-addressing index. */
typedef struct keystore {
  int32_t n_cols;
  hs_sql_vec *views; /* per column: type, valid, data over [0, n) (no refs) */
  size_t *widths;
  uint64_t *hashes; /* per tuple */
  int64_t n, cap;
  struct ks_slot *slots;
  uint64_t mask; /* slots: mask + 1 */
  /* One integer-like key column: its value sits in the slot (compared
   * there, without touching the key arrays) and its NULL group is kept
   * aside as null_gid (-1: none yet) instead of in the index. */
  bool int_key;
  int64_t null_gid;
  hs_arena arena; /* string bytes */
  int64_t bytes;  /* memory held */
} keystore;

typedef struct agg_state {
  hs_sql_exec *x;
  const hs_sql_evalctx *ctx;
  int32_t n_keys, n_aggs;
  keystore groups;
  uint8_t **states;   /* per aggregate: groups.cap * state_size */
  keystore *distinct; /* per aggregate (n_cols 0 when not distinct) */
  hs_arena agg_arena; /* aggregates' variable memory */
  int64_t reserved;
  uint32_t *gid; /* per input row of the current chunk */
  int64_t gid_cap;
  /* A worker's partial state (op_agg_par.c): per group, the position
   * (chunk sequence number << 32 | row) where it first appeared. */
  int64_t *first;
  int64_t first_cap;
  bool track_first;
  bool built;
  int64_t pos; /* next group to emit */
} agg_state;

static hs_status reserve(agg_state *s, int64_t bytes, hs_error *err) {
  hs_status st = hs_sql_exec_reserve(s->x, bytes, "hash aggregate", err);
  if (st == HS_OK) s->reserved += bytes;
  return st;
}

static hs_status ks_init(keystore *ks, const hs_sql_type *types, int32_t n_cols, hs_error *err) {
  memset(ks, 0, sizeof *ks);
  hs_arena_init(&ks->arena);
  ks->n_cols = n_cols;
  if (n_cols > 0) {
    ks->views = hs_calloc((size_t)n_cols, sizeof *ks->views);
    ks->widths = hs_calloc((size_t)n_cols, sizeof *ks->widths);
    if (ks->views == NULL || ks->widths == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
  }
  ks->null_gid = -1;
  if (n_cols == 1) {
    hs_sql_tid id = types[0].id;
    ks->int_key = id == HS_SQL_INT32 || id == HS_SQL_DATE || id == HS_SQL_INT64 ||
                  id == HS_SQL_TIMESTAMP || id == HS_SQL_TIMESTAMPTZ;
  }
  for (int32_t c = 0; c < n_cols; c++) {
    ks->views[c].type = types[c];
    ks->widths[c] = hs_sql_vec_width(types[c]);
  }
  return HS_OK;
}

static void ks_free(keystore *ks) {
  for (int32_t c = 0; c < ks->n_cols; c++) {
    hs_free((void *)ks->views[c].data);
    hs_free((void *)ks->views[c].valid);
  }
  hs_free(ks->views);
  hs_free(ks->widths);
  hs_free(ks->hashes);
  hs_free(ks->slots);
  hs_arena_reset(&ks->arena);
  memset(ks, 0, sizeof *ks);
}

/* Room for `need` tuples (arrays grown by doubling). */
static hs_status ks_grow(agg_state *s, keystore *ks, int64_t need, hs_error *err) {
  if (need <= ks->cap) return HS_OK;
  if (need > GROUPS_MAX)
    return hs_error_set(err, HS_ERR_NOMEM, "hash aggregate: more than %lld groups",
                        (long long)GROUPS_MAX);
  int64_t cap = ks->cap ? ks->cap : 256;
  while (cap < need) cap *= 2;
  if (cap > GROUPS_MAX) cap = GROUPS_MAX;
  int64_t add = cap - ks->cap;
  int64_t bytes = add * (int64_t)sizeof(uint64_t);
  for (int32_t c = 0; c < ks->n_cols; c++) bytes += add * (int64_t)(ks->widths[c] + 1);
  hs_status st = reserve(s, bytes, err);
  if (st != HS_OK) return st;
  ks->bytes += bytes;
  uint64_t *h = hs_realloc(ks->hashes, (size_t)cap * sizeof *h);
  if (h == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
  ks->hashes = h;
  for (int32_t c = 0; c < ks->n_cols; c++) {
    size_t w = ks->widths[c];
    if (w > 0) {
      uint8_t *d = hs_realloc((void *)ks->views[c].data, (size_t)cap * w);
      if (d == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
      memset(d + (size_t)ks->cap * w, 0, (size_t)add * w);
      ks->views[c].data = d;
    }
    uint8_t *v = hs_realloc((void *)ks->views[c].valid, (size_t)cap);
    if (v == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
    memset(v + ks->cap, 0, (size_t)add);
    ks->views[c].valid = v;
  }
  ks->cap = cap;
  return HS_OK;
}

static inline uint64_t slot_of(uint64_t g, uint64_t h) {
  return g | (h & 0xffffffff00000000ull);
}

/* Row i of an integer-like column as int64. */
static inline int64_t int_at(const hs_sql_vec *v, int64_t i) {
  return hs_sql_vec_width(v->type) == 4 ? ((const int32_t *)v->data)[i]
                                        : ((const int64_t *)v->data)[i];
}

/* An index of at least twice as many slots as tuples. */
static hs_status ks_rehash(agg_state *s, keystore *ks, hs_error *err) {
  uint64_t n_slots = ks->slots ? (ks->mask + 1) * 2 : 1024;
  int64_t bytes = (int64_t)(n_slots - (ks->slots ? ks->mask + 1 : 0)) * (int64_t)sizeof(ks_slot);
  hs_status st = reserve(s, bytes, err);
  if (st != HS_OK) return st;
  ks->bytes += bytes;
  ks_slot *slots = hs_malloc((size_t)n_slots * sizeof *slots);
  if (slots == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
  for (uint64_t i = 0; i < n_slots; i++) slots[i].meta = EMPTY_SLOT;
  uint64_t mask = n_slots - 1;
  for (int64_t g = 0; g < ks->n; g++) {
    if (g == ks->null_gid) continue;
    uint64_t i = ks->hashes[g] & mask;
    while (slots[i].meta != EMPTY_SLOT) i = (i + 1) & mask;
    slots[i].meta = slot_of((uint64_t)g, ks->hashes[g]);
    slots[i].key = ks->int_key ? int_at(&ks->views[0], g) : 0;
  }
  hs_free(ks->slots);
  ks->slots = slots;
  ks->mask = mask;
  return HS_OK;
}

/* Append row `row` of cols as tuple ks->n (room already made). */
static hs_status ks_append(agg_state *s, keystore *ks, const hs_sql_vec *cols, int64_t row,
                           uint64_t h, hs_error *err) {
  int64_t g = ks->n;
  for (int32_t c = 0; c < ks->n_cols; c++) {
    const hs_sql_vec *v = &cols[c];
    hs_sql_vec *kv = &ks->views[c];
    size_t w = ks->widths[c];
    bool valid = hs_sql_vec_valid(v, row);
    ((uint8_t *)kv->valid)[g] = valid;
    if (!valid || w == 0) continue;
    uint8_t *dst = (uint8_t *)kv->data + (size_t)g * w;
    memcpy(dst, (const uint8_t *)v->data + (size_t)row * w, w);
    if (hs_sql_type_is_string(kv->type.id)) {
      hs_sql_str *str = (hs_sql_str *)dst;
      if (str->len > 0) {
        char *copy = hs_arena_memdup(&ks->arena, str->ptr, str->len);
        if (copy == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
        str->ptr = copy;
        int64_t bytes = (int64_t)str->len;
        hs_status st = reserve(s, bytes, err);
        if (st != HS_OK) return st;
        ks->bytes += bytes;
      }
    }
  }
  ks->hashes[g] = h;
  ks->n = g + 1;
  for (int32_t c = 0; c < ks->n_cols; c++) ks->views[c].n = ks->n;
  return HS_OK;
}

static inline bool ks_equal(const keystore *ks, const hs_sql_vec *cols, int64_t row, int64_t g) {
  for (int32_t c = 0; c < ks->n_cols; c++) {
    const hs_sql_vec *v = &cols[c], *kv = &ks->views[c];
    bool va = hs_sql_vec_valid(v, row), vb = kv->valid[g] != 0;
    if (va != vb) return false;
    if (!va) continue;
    switch (v->type.id) {
    case HS_SQL_INT32:
    case HS_SQL_DATE:
      if (((const int32_t *)v->data)[row] != ((const int32_t *)kv->data)[g]) return false;
      break;
    case HS_SQL_INT64:
    case HS_SQL_TIMESTAMP:
    case HS_SQL_TIMESTAMPTZ:
      if (((const int64_t *)v->data)[row] != ((const int64_t *)kv->data)[g]) return false;
      break;
    case HS_SQL_TEXT:
    case HS_SQL_BYTEA: {
      hs_sql_str x = ((const hs_sql_str *)v->data)[row], y = ((const hs_sql_str *)kv->data)[g];
      if (x.len != y.len) return false;
      if (x.len <= 8) { /* short keys: no call */
        for (size_t b = 0; b < x.len; b++)
          if (x.ptr[b] != y.ptr[b]) return false;
      } else if (memcmp(x.ptr, y.ptr, x.len) != 0) {
        return false;
      }
      break;
    }
    default:
      if (hs_sql_vec_cmp(v, row, kv, g) != 0) return false;
    }
  }
  return true;
}

static inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

#define NULL_HASH 0x5bd1e9955bd1e995ull

/* Hashes of rows [0, n) of cols into h, a column at a time with the
 * common types inline (the hash is private to this operator: equal keys
 * hash equal, NULLs alike, -0.0 as 0.0 and every NaN alike). */
static void hash_rows(const hs_sql_vec *cols, int32_t n_cols, int64_t n, uint64_t *h) {
  for (int64_t i = 0; i < n; i++) h[i] = 0x9E3779B97F4A7C15ull;
  for (int32_t c = 0; c < n_cols; c++) {
    const hs_sql_vec *v = &cols[c];
    const uint8_t *valid = v->valid;
    switch (v->type.id) {
    case HS_SQL_INT32:
    case HS_SQL_DATE: {
      const int32_t *d = v->data;
      for (int64_t i = 0; i < n; i++)
        h[i] = mix64(h[i] * 31 + (valid && !valid[i] ? NULL_HASH : (uint64_t)(int64_t)d[i]));
      break;
    }
    case HS_SQL_INT64:
    case HS_SQL_TIMESTAMP:
    case HS_SQL_TIMESTAMPTZ: {
      const int64_t *d = v->data;
      for (int64_t i = 0; i < n; i++)
        h[i] = mix64(h[i] * 31 + (valid && !valid[i] ? NULL_HASH : (uint64_t)d[i]));
      break;
    }
    case HS_SQL_FLOAT64: {
      const double *d = v->data;
      for (int64_t i = 0; i < n; i++) {
        uint64_t x;
        double f = d[i];
        if (valid && !valid[i]) {
          x = NULL_HASH;
        } else if (f == 0.0) {
          x = 0; /* -0.0 */
        } else if (f != f) {
          x = 0x7ff8000000000000ull; /* NaN */
        } else {
          memcpy(&x, &f, sizeof x);
        }
        h[i] = mix64(h[i] * 31 + x);
      }
      break;
    }
    case HS_SQL_TEXT:
    case HS_SQL_BYTEA: { /* up to 8 bytes as one word (flags, modes, codes) */
      const hs_sql_str *d = v->data;
      for (int64_t i = 0; i < n; i++) {
        uint64_t x;
        if (valid && !valid[i]) {
          x = NULL_HASH;
        } else if (d[i].len <= 8) {
          x = (uint64_t)d[i].len << 56 ^ 0x2545F4914F6CDD1Dull;
          for (size_t b = 0; b < d[i].len; b++) x ^= (uint64_t)(uint8_t)d[i].ptr[b] << (8 * b);
        } else {
          x = hs_sql_vec_hash(v, i, 0);
        }
        h[i] = mix64(h[i] * 31 + x);
      }
      break;
    }
    default:
      for (int64_t i = 0; i < n; i++) h[i] = mix64(hs_sql_vec_hash(v, i, h[i]));
    }
  }
}

/* Find row `row` of cols; insert it when new (*is_new). */
static inline hs_status ks_find(agg_state *s, keystore *ks, const hs_sql_vec *cols, int64_t row,
                                uint64_t h, uint32_t *gid, bool *is_new, hs_error *err) {
  hs_status st;
  if (ks->int_key && !hs_sql_vec_valid(&cols[0], row)) {
    *is_new = ks->null_gid < 0;
    if (*is_new) {
      st = ks_grow(s, ks, ks->n + 1, err);
      if (st == HS_OK) st = ks_append(s, ks, cols, row, h, err);
      if (st != HS_OK) return st;
      ks->null_gid = ks->n - 1;
    }
    *gid = (uint32_t)ks->null_gid;
    return HS_OK;
  }
  if (ks->slots == NULL || (uint64_t)(ks->n + 1) * 2 > ks->mask + 1) {
    st = ks_rehash(s, ks, err);
    if (st != HS_OK) return st;
  }
  uint64_t i = h & ks->mask, salt = h & 0xffffffff00000000ull;
  int64_t key = ks->int_key ? int_at(&cols[0], row) : 0;
  for (;;) {
    const ks_slot *e = &ks->slots[i];
    if (e->meta == EMPTY_SLOT) break;
    uint32_t g = (uint32_t)e->meta;
    if ((e->meta & 0xffffffff00000000ull) == salt &&
        (ks->int_key ? e->key == key : ks_equal(ks, cols, row, g))) {
      *gid = g;
      *is_new = false;
      return HS_OK;
    }
    i = (i + 1) & ks->mask;
  }
  st = ks_grow(s, ks, ks->n + 1, err);
  if (st == HS_OK) st = ks_append(s, ks, cols, row, h, err);
  if (st != HS_OK) return st;
  ks->slots[i].meta = slot_of((uint64_t)(ks->n - 1), h);
  ks->slots[i].key = key;
  *gid = (uint32_t)(ks->n - 1);
  *is_new = true;
  return HS_OK;
}

/* -------------------------------------------------------------- groups */

/* Make room in every aggregate's state array for groups.cap groups, and
 * init the states of groups [from, to). */
static hs_status states_sync(const hs_sql_plan *p, agg_state *s, int64_t old_cap, int64_t from,
                             int64_t to, hs_error *err) {
  for (int32_t a = 0; a < s->n_aggs; a++) {
    const hs_sql_aggcall *call = &p->agg.aggs[a];
    const hs_sql_agg *agg = call->m.agg;
    size_t sz = agg->state_size;
    if (s->groups.cap > old_cap || s->states[a] == NULL) {
      int64_t cap = s->groups.cap > 0 ? s->groups.cap : 1;
      hs_status st = reserve(s, (cap - old_cap) * (int64_t)sz, err);
      if (st != HS_OK) return st;
      uint8_t *ns = hs_realloc(s->states[a], (size_t)cap * sz);
      if (ns == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
      s->states[a] = ns;
    }
    for (int64_t g = from; g < to; g++) {
      void *state = s->states[a] + (size_t)g * sz;
      memset(state, 0, sz);
      agg->init(state, call->m.cast_to, call->m.ret);
    }
  }
  return HS_OK;
}

static hs_status gid_room(agg_state *s, int64_t n, hs_error *err) {
  if (n <= s->gid_cap) return HS_OK;
  uint32_t *g = hs_realloc(s->gid, (size_t)n * sizeof *g);
  if (g == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
  s->gid = g;
  s->gid_cap = n;
  return HS_OK;
}

/* The rows sel[0..n_sel) of args and their group ids. */
static hs_status select_rows(const hs_sql_vec *args, int32_t n_args, const int64_t *sel,
                             int64_t n_sel, const uint32_t *gid, hs_sql_vec *out_args,
                             uint32_t *out_gid, hs_error *err) {
  for (int32_t k = 0; k < n_args; k++) {
    hs_status st = hs_sql_vec_take(&out_args[k], &args[k], sel, n_sel, err);
    if (st != HS_OK) return st;
  }
  for (int64_t i = 0; i < n_sel; i++) out_gid[i] = gid[sel[i]];
  return HS_OK;
}

/* Fold the chunk's rows into aggregate a. */
static hs_status update_agg(const hs_sql_plan *p, agg_state *s, int32_t a, const hs_sql_chunk *in,
                            hs_error *err) {
  const hs_sql_aggcall *call = &p->agg.aggs[a];
  int32_t na = call->n_args;
  hs_sql_vec args[HS_SQL_FN_ARGS_MAX + 1];
  hs_sql_vec sel_args[HS_SQL_FN_ARGS_MAX + 1];
  memset(args, 0, sizeof args);
  memset(sel_args, 0, sizeof sel_args);
  int64_t *sel = NULL;
  uint32_t *sel_gid = NULL;
  uint64_t *h = NULL;
  hs_sql_vec gvec = {0};
  hs_status st = HS_OK;
  if (na > HS_SQL_FN_ARGS_MAX)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "aggregate with %d arguments", (int)na);
  for (int32_t k = 0; k < na && st == HS_OK; k++)
    st = hs_sql_eval(call->args[k], in, s->ctx, &args[k], err);
  const hs_sql_vec *use = args;
  const uint32_t *use_gid = s->gid;
  int64_t n = in->n;
  if (st == HS_OK && (call->filter != NULL || call->distinct)) {
    sel = hs_malloc((size_t)(n > 0 ? n : 1) * sizeof *sel);
    sel_gid = hs_malloc((size_t)(n > 0 ? n : 1) * sizeof *sel_gid);
    if (sel == NULL || sel_gid == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
  }
  if (st == HS_OK && call->filter != NULL) {
    int64_t n_sel = 0;
    st = hs_sql_eval_select(call->filter, in, s->ctx, sel, &n_sel, err);
    if (st == HS_OK) st = select_rows(args, na, sel, n_sel, s->gid, sel_args, sel_gid, err);
    if (st == HS_OK) {
      for (int32_t k = 0; k < na; k++) {
        hs_sql_vec_release(&args[k]);
        args[k] = sel_args[k];
        memset(&sel_args[k], 0, sizeof sel_args[k]);
      }
      use_gid = sel_gid;
      n = n_sel;
    }
  }
  if (st == HS_OK && call->distinct && n > 0) {
    /* (group, args...) pairs not seen before */
    keystore *ks = &s->distinct[a];
    st = hs_sql_vec_alloc(&gvec, hs_sql_type_of(HS_SQL_INT64), n, false, err);
    if (st == HS_OK) {
      int64_t *gd = hs_sql_vec_mut_data(&gvec);
      for (int64_t i = 0; i < n; i++) gd[i] = use_gid[i];
    }
    hs_sql_vec cols[HS_SQL_FN_ARGS_MAX + 1];
    if (st == HS_OK) {
      cols[0] = gvec;
      for (int32_t k = 0; k < na; k++) cols[k + 1] = args[k];
      h = hs_malloc((size_t)n * sizeof *h);
      if (h == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
    }
    int64_t n_new = 0;
    if (st == HS_OK) {
      hash_rows(cols, na + 1, n, h);
      for (int64_t i = 0; i < n && st == HS_OK; i++) {
        uint32_t id;
        bool is_new = false;
        st = ks_find(s, ks, cols, i, h[i], &id, &is_new, err);
        if (is_new) sel[n_new++] = i;
      }
    }
    if (st == HS_OK && n_new < n) {
      /* use_gid may be sel_gid itself: gather into a copy first */
      uint32_t *g2 = hs_malloc((size_t)n * sizeof *g2);
      if (g2 == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
      if (st == HS_OK) {
        memcpy(g2, use_gid, (size_t)n * sizeof *g2);
        st = select_rows(args, na, sel, n_new, g2, sel_args, sel_gid, err);
        hs_free(g2);
      }
      if (st == HS_OK) {
        for (int32_t k = 0; k < na; k++) {
          hs_sql_vec_release(&args[k]);
          args[k] = sel_args[k];
          memset(&sel_args[k], 0, sizeof sel_args[k]);
        }
        use_gid = sel_gid;
        n = n_new;
      }
    }
  }
  if (st == HS_OK && n > 0)
    st = call->m.agg->update(call->m.agg, s->states[a], use_gid, use, n, &s->agg_arena, err);
  for (int32_t k = 0; k < na; k++) {
    hs_sql_vec_release(&args[k]);
    hs_sql_vec_release(&sel_args[k]);
  }
  hs_sql_vec_release(&gvec);
  hs_free(sel);
  hs_free(sel_gid);
  hs_free(h);
  return st;
}

/* Record where group g first appeared (partial states only). */
static hs_status note_first(agg_state *s, uint32_t g, int64_t pos, hs_error *err) {
  if ((int64_t)g >= s->first_cap) {
    int64_t cap = s->first_cap ? s->first_cap * 2 : 256;
    while (cap <= (int64_t)g) cap *= 2;
    hs_status st = reserve(s, (cap - s->first_cap) * (int64_t)sizeof(int64_t), err);
    if (st != HS_OK) return st;
    int64_t *f = hs_realloc(s->first, (size_t)cap * sizeof *f);
    if (f == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
    s->first = f;
    s->first_cap = cap;
  }
  s->first[g] = pos;
  return HS_OK;
}

/* Fold chunk `in` in; `base` is the position of its first row in the
 * input (pipe.h), for partial states that track where groups first
 * appeared. */
static hs_status consume(const hs_sql_plan *p, agg_state *s, const hs_sql_chunk *in, int64_t base,
                         hs_error *err) {
  int64_t n = in->n;
  hs_status st = gid_room(s, n, err);
  if (st != HS_OK) return st;
  if (s->n_keys == 0) {
    memset(s->gid, 0, (size_t)n * sizeof *s->gid);
  } else {
    hs_sql_vec keys[64];
    hs_sql_vec *kv = s->n_keys <= 64 ? keys : hs_calloc((size_t)s->n_keys, sizeof *kv);
    uint64_t *h = hs_malloc((size_t)n * sizeof *h);
    if (kv == NULL || h == NULL) {
      if (kv != keys) hs_free(kv);
      hs_free(h);
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
    }
    memset(kv, 0, (size_t)s->n_keys * sizeof *kv);
    for (int32_t k = 0; k < s->n_keys && st == HS_OK; k++)
      st = hs_sql_eval(p->agg.keys[k], in, s->ctx, &kv[k], err);
    if (st == HS_OK) hash_rows(kv, s->n_keys, n, h);
    for (int64_t i = 0; i < n && st == HS_OK; i++) {
      /* A row equal to the one before (clustered or sorted input: lineitem
       * by order key) is in its group without a probe. */
      if (i > 0 && h[i] == h[i - 1] && ks_equal(&s->groups, kv, i, s->gid[i - 1])) {
        s->gid[i] = s->gid[i - 1];
        continue;
      }
      bool is_new;
      int64_t old_cap = s->groups.cap;
      if (i + 8 < n && s->groups.slots != NULL)
        __builtin_prefetch(&s->groups.slots[h[i + 8] & s->groups.mask]);
      st = ks_find(s, &s->groups, kv, i, h[i], &s->gid[i], &is_new, err);
      if (st == HS_OK && is_new) st = states_sync(p, s, old_cap, s->groups.n - 1, s->groups.n, err);
      if (st == HS_OK && is_new && s->track_first) st = note_first(s, s->gid[i], base + i, err);
    }
    for (int32_t k = 0; k < s->n_keys; k++) hs_sql_vec_release(&kv[k]);
    if (kv != keys) hs_free(kv);
    hs_free(h);
    if (st != HS_OK) return st;
  }
  for (int32_t a = 0; a < s->n_aggs && st == HS_OK; a++) st = update_agg(p, s, a, in, err);
  return st;
}

/* ------------------------------------------------------------- parallel */

static hs_status state_new(hs_sql_exec *x, const hs_sql_plan *p, agg_state **out, hs_error *err);
static void state_free(agg_state *s);

/* Can partial states of this aggregate be merged into exactly the serial
 * result? Not for DISTINCT (the partial sets overlap), nor float sums,
 * averages and variances (their rounding depends on the order of
 * additions), nor the vector aggregates. */
static bool par_exact(const hs_sql_plan *p) {
  for (int32_t a = 0; a < p->agg.n_aggs; a++) {
    const hs_sql_aggcall *call = &p->agg.aggs[a];
    const hs_sql_agg *g = call->m.agg;
    if (call->distinct || g->merge == NULL) return false;
    if (g < hs_sql_aggs_basic || g >= hs_sql_aggs_basic + hs_sql_aggs_basic_n) return false;
    if (g->arg == HS_SQL_FLOAT64 && strcmp(g->name, "min") != 0 && strcmp(g->name, "max") != 0)
      return false;
    for (int32_t k = 0; k < call->n_args; k++)
      if (hs_sql_expr_has_volatile(call->args[k])) return false;
    if (call->filter != NULL && hs_sql_expr_has_volatile(call->filter)) return false;
  }
  for (int32_t k = 0; k < p->agg.n_keys; k++)
    if (hs_sql_expr_has_volatile(p->agg.keys[k])) return false;
  return true;
}

/* Groups a partial state may reach before the rest of the input is
 * aggregated serially: with many groups every partial holds most of them,
 * and merging costs more than the workers saved. */
#define PAR_GROUPS_MAX 65536

typedef struct par_ctx {
  const hs_sql_plan *p;
  agg_state **parts; /* per worker */
  int stop;          /* some partial passed PAR_GROUPS_MAX */
} par_ctx;

static hs_status par_sink(void *vctx, uint32_t w, int64_t pos, const hs_sql_chunk *c,
                          hs_error *err) {
  par_ctx *pc = vctx;
  hs_status st = consume(pc->p, pc->parts[w], c, pos, err);
  if (pc->parts[w]->groups.n > PAR_GROUPS_MAX) __atomic_store_n(&pc->stop, 1, __ATOMIC_RELAXED);
  return st;
}

/* Merge the partial states into s: groups in the order they first
 * appeared in the input (the serial run's order), states merged. Each
 * partial's groups are in that order already (a worker takes its chunks
 * in sequence order), so this is an n-way merge by first position. */
static hs_status par_merge(const hs_sql_plan *p, agg_state *s, agg_state **parts, uint32_t n,
                           hs_error *err) {
  hs_status st = HS_OK;
  if (s->n_keys == 0) {
    for (uint32_t w = 0; w < n && st == HS_OK; w++)
      for (int32_t a = 0; a < s->n_aggs && st == HS_OK; a++)
        st = p->agg.aggs[a].m.agg->merge(p->agg.aggs[a].m.agg, s->states[a], parts[w]->states[a],
                                         &s->agg_arena, err);
    return st;
  }
  int64_t head[HS_SQL_PIPE_WORKERS_MAX] = {0};
  for (;;) {
    uint32_t best = n;
    for (uint32_t w = 0; w < n; w++)
      if (head[w] < parts[w]->groups.n &&
          (best == n || parts[w]->first[head[w]] < parts[best]->first[head[best]]))
        best = w;
    if (best == n || st != HS_OK) break;
    agg_state *src = parts[best];
    uint32_t g = (uint32_t)head[best]++, gid = 0;
    bool is_new = false;
    int64_t old_cap = s->groups.cap;
    st = ks_find(s, &s->groups, src->groups.views, g, src->groups.hashes[g], &gid, &is_new, err);
    if (st == HS_OK && is_new) st = states_sync(p, s, old_cap, s->groups.n - 1, s->groups.n, err);
    for (int32_t a = 0; a < s->n_aggs && st == HS_OK; a++) {
      const hs_sql_agg *agg = p->agg.aggs[a].m.agg;
      st = agg->merge(agg, s->states[a] + (size_t)gid * agg->state_size,
                      src->states[a] + (size_t)g * agg->state_size, &s->agg_arena, err);
    }
  }
  return st;
}

/* The input pulled by several workers, each folding its chunks into a
 * partial state, merged at the end. *ran false when not applicable;
 * *ended false when the partials grew too many groups and the rest of
 * the input is to be aggregated serially (after the merged groups). */
static hs_status build_parallel(hs_sql_op *op, agg_state *s, bool *ran, bool *ended,
                                hs_error *err) {
  *ran = false;
  *ended = false;
  const hs_sql_plan *p = op->plan;
  uint32_t workers = hs_sql_pipe_workers();
  hs_sql_pipe pipe;
  if (workers < 2 || !par_exact(p) || !hs_sql_pipe_find(op->kids[0], &pipe)) return HS_OK;
  agg_state **parts = hs_calloc(workers, sizeof *parts);
  if (parts == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
  hs_status st = HS_OK;
  for (uint32_t w = 0; w < workers && st == HS_OK; w++) {
    st = state_new(s->x, p, &parts[w], err);
    if (st == HS_OK) parts[w]->track_first = true;
  }
  par_ctx pc = {p, parts, 0};
  if (st == HS_OK) st = hs_sql_pipe_run(&pipe, workers, par_sink, &pc, &pc.stop, ended, err);
  if (st == HS_OK) st = par_merge(p, s, parts, workers, err);
  for (uint32_t w = 0; w < workers; w++) state_free(parts[w]);
  hs_free(parts);
  if (st == HS_OK) {
    if (*ended)
      snprintf(op->stats.note, sizeof op->stats.note, "%u workers", (unsigned)workers);
    else
      snprintf(op->stats.note, sizeof op->stats.note, "%u workers, serial past %d groups",
               (unsigned)workers, PAR_GROUPS_MAX);
    *ran = true;
  }
  return st;
}

static hs_status build(hs_sql_op *op, agg_state *s, hs_error *err) {
  bool ran = false, ended = false;
  hs_status st0 = build_parallel(op, s, &ran, &ended, err);
  if (st0 != HS_OK) return st0;
  if (ran && ended) {
    s->built = true;
    return HS_OK;
  }
  for (;;) {
    hs_status st = hs_sql_op_check_cancel(s->x, err);
    if (st != HS_OK) return st;
    hs_sql_chunk in = {0};
    st = hs_sql_op_next(op->kids[0], &in, err);
    if (st != HS_OK) return st;
    if (in.n == 0) {
      hs_sql_chunk_release(&in);
      break;
    }
    st = consume(op->plan, s, &in, 0, err);
    hs_sql_chunk_release(&in);
    if (st != HS_OK) return st;
  }
  s->built = true;
  return HS_OK;
}

/* ---------------------------------------------------------------- output */

/* Give a string column's rows bytes of its own (one blob per column). */
static hs_status own_strings(hs_sql_vec *v, hs_error *err) {
  if (!hs_sql_type_is_string(v->type.id)) return HS_OK;
  hs_sql_str *d = hs_sql_vec_mut_data(v);
  size_t total = 0;
  for (int64_t i = 0; i < v->n; i++)
    if (hs_sql_vec_valid(v, i)) total += d[i].len;
  if (total == 0) return HS_OK;
  char *dst = hs_sql_vec_add_bytes(v, total, err);
  if (dst == NULL) return err != NULL && err->status ? err->status : HS_ERR_NOMEM;
  for (int64_t i = 0; i < v->n; i++) {
    if (!hs_sql_vec_valid(v, i) || d[i].len == 0) continue;
    memcpy(dst, d[i].ptr, d[i].len);
    d[i].ptr = dst;
    dst += d[i].len;
  }
  return HS_OK;
}

static hs_status emit_key(const keystore *ks, int32_t c, int64_t off, int64_t len, hs_sql_vec *out,
                          hs_error *err) {
  const hs_sql_vec *kv = &ks->views[c];
  bool nulls = false;
  for (int64_t i = 0; i < len; i++)
    if (!kv->valid[off + i]) nulls = true;
  hs_status st = hs_sql_vec_alloc(out, kv->type, len, nulls, err);
  if (st != HS_OK) return st;
  size_t w = ks->widths[c];
  if (w > 0 && len > 0)
    memcpy(hs_sql_vec_mut_data(out), (const uint8_t *)kv->data + (size_t)off * w, (size_t)len * w);
  if (nulls) memcpy(hs_sql_vec_mut_valid(out), kv->valid + off, (size_t)len);
  return own_strings(out, err);
}

static hs_status agg_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  agg_state *s = op->state;
  const hs_sql_plan *p = op->plan;
  hs_status st;
  if (!s->built) {
    st = build(op, s, err);
    if (st != HS_OK) return st;
  }
  int64_t n_groups = s->groups.n;
  if (s->pos >= n_groups) return hs_sql_chunk_init(out, p->n_cols, 0, err);
  int64_t len = n_groups - s->pos;
  if (len > HS_AGG_CHUNK) len = HS_AGG_CHUNK;
  st = hs_sql_chunk_init(out, p->n_cols, len, err);
  if (st != HS_OK) return st;
  out->n = len;
  for (int32_t k = 0; k < s->n_keys && st == HS_OK; k++) {
    hs_sql_vec_release(&out->cols[k]);
    st = emit_key(&s->groups, k, s->pos, len, &out->cols[k], err);
  }
  for (int32_t a = 0; a < s->n_aggs && st == HS_OK; a++) {
    const hs_sql_aggcall *call = &p->agg.aggs[a];
    const hs_sql_agg *agg = call->m.agg;
    hs_sql_vec *v = &out->cols[s->n_keys + a];
    hs_sql_vec_release(v);
    st = hs_sql_vec_alloc(v, call->m.ret, len, true, err);
    for (int64_t i = 0; i < len && st == HS_OK; i++)
      st = agg->final(agg, s->states[a] + (size_t)(s->pos + i) * agg->state_size, call->m.ret, v, i,
                      err);
    if (st == HS_OK) st = own_strings(v, err);
  }
  if (st != HS_OK) {
    hs_sql_chunk_release(out);
    return st;
  }
  s->pos += len;
  return HS_OK;
}

static void state_free(agg_state *s) {
  if (s == NULL) return;
  ks_free(&s->groups);
  for (int32_t a = 0; a < s->n_aggs; a++) {
    if (s->states != NULL) hs_free(s->states[a]);
    if (s->distinct != NULL) ks_free(&s->distinct[a]);
  }
  hs_free(s->states);
  hs_free(s->distinct);
  hs_arena_reset(&s->agg_arena);
  hs_free(s->gid);
  hs_free(s->first);
  if (s->reserved) hs_sql_exec_reserve(s->x, -s->reserved, "hash aggregate", NULL);
  hs_free(s);
}

static void agg_free(hs_sql_op *op) {
  state_free(op->state);
  op->state = NULL;
}

/* A new state for plan p in *out (state_free it, also on failure). */
static hs_status state_new(hs_sql_exec *x, const hs_sql_plan *p, agg_state **out, hs_error *err) {
  agg_state *s = *out = hs_calloc(1, sizeof *s);
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory opening hash aggregate");
  s->x = x;
  s->ctx = hs_sql_exec_evalctx(x);
  s->n_keys = p->agg.n_keys;
  s->n_aggs = p->agg.n_aggs;
  hs_arena_init(&s->agg_arena);
  hs_status st;
  {
    hs_sql_type kt[64];
    hs_sql_type *types = s->n_keys <= 64 ? kt : hs_calloc((size_t)s->n_keys, sizeof *types);
    if (types == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
    for (int32_t k = 0; k < s->n_keys; k++) types[k] = p->agg.keys[k]->type;
    st = ks_init(&s->groups, types, s->n_keys, err);
    if (types != kt) hs_free(types);
    if (st != HS_OK) return st;
  }
  if (s->n_aggs > 0) {
    s->states = hs_calloc((size_t)s->n_aggs, sizeof *s->states);
    s->distinct = hs_calloc((size_t)s->n_aggs, sizeof *s->distinct);
    if (s->states == NULL || s->distinct == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory in hash aggregate");
  }
  for (int32_t a = 0; a < s->n_aggs; a++) {
    const hs_sql_aggcall *call = &p->agg.aggs[a];
    hs_arena_init(&s->distinct[a].arena);
    if (!call->distinct) continue;
    if (call->n_args > HS_SQL_FN_ARGS_MAX)
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "aggregate with %d arguments",
                          (int)call->n_args);
    hs_sql_type t[HS_SQL_FN_ARGS_MAX + 1];
    t[0] = hs_sql_type_of(HS_SQL_INT64);
    for (int32_t k = 0; k < call->n_args; k++) t[k + 1] = call->args[k]->type;
    st = ks_init(&s->distinct[a], t, call->n_args + 1, err);
    if (st != HS_OK) return st;
  }
  if (s->n_keys == 0) {
    /* exactly one group, whatever the input */
    st = ks_grow(s, &s->groups, 1, err);
    if (st != HS_OK) return st;
    s->groups.n = 1;
    st = states_sync(p, s, 0, 0, 1, err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

hs_status hs_sql_op_agg_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err) {
  agg_state *s = NULL;
  hs_status st = state_new(x, p, &s, err);
  op->state = s;
  op->next = agg_next;
  op->free = agg_free;
  return st;
}

/*
 * func.c — resolution of operator and function calls against the
 * per-file tables (func_tables.h).
 *
 * Candidates are the rows with the called name and a fitting arity. A
 * candidate's cost is the number of arguments that need an implicit cast
 * (an untyped string literal costs one, as it is parsed into the wanted
 * type; NULLTYPE costs nothing). The cheapest wins; on a tie the earlier
 * row wins, so tables list their preferred overloads first. An argument
 * keeps its own type parameters (numeric precision/scale, vector dim) when
 * its type id already matches the declared one.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "func_tables.h"

typedef struct fn_table {
  const hs_sql_fn *rows;
  const size_t *n;
} fn_table;

static const fn_table TABLES[] = {
    {hs_sql_fns_arith, &hs_sql_fns_arith_n},
    {hs_sql_fns_string, &hs_sql_fns_string_n},
    {hs_sql_fns_time, &hs_sql_fns_time_n},
    {hs_sql_fns_vector, &hs_sql_fns_vector_n},
};
#define N_TABLES (sizeof(TABLES) / sizeof(TABLES[0]))

/* Cost of passing an argument of type `have` (unknown: an untyped string
 * literal) where `want` is declared; -1 when impossible. */
static int arg_cost(hs_sql_type have, bool unknown, hs_sql_tid want, hs_sql_type *cast_to) {
  if (have.id == want) {
    *cast_to = have;
    return 0;
  }
  if (have.id == HS_SQL_NULLTYPE) {
    *cast_to = hs_sql_type_of(want);
    return 0;
  }
  hs_sql_type w = hs_sql_type_of(want);
  if (want == HS_SQL_NUMERIC) {
    /* integers become numeric wide enough to hold them */
    w.a = have.id == HS_SQL_INT32 ? 10 : have.id == HS_SQL_INT64 ? 19 : 38;
    w.b = 0;
  }
  if (unknown && have.id == HS_SQL_TEXT) {
    *cast_to = w;
    return want == HS_SQL_TEXT ? 0 : 1;
  }
  if (hs_sql_type_implicit(have, w)) {
    *cast_to = w;
    return 1;
  }
  return -1;
}

static hs_status match_row(const hs_sql_fn *f, const hs_sql_type *args, const bool *unknown,
                           int32_t n, hs_sql_fn_match *m, int *cost) {
  int total = 0;
  if (f->n_args >= 0 && f->n_args != n) return HS_ERR_NOT_FOUND;
  if (n > HS_SQL_FN_ARGS_MAX) return HS_ERR_NOT_FOUND;
  for (int32_t i = 0; i < n; i++) {
    hs_sql_tid want = f->n_args < 0 ? f->args[0] : f->args[i];
    int c = arg_cost(args[i], unknown != NULL && unknown[i], want, &m->cast_to[i]);
    if (c < 0) return HS_ERR_NOT_FOUND;
    total += c;
  }
  m->fn = f;
  *cost = total;
  return HS_OK;
}

static void type_list(const hs_sql_type *args, int32_t n, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int32_t i = 0; i < n && len + 1 < cap; i++) {
    char tn[64];
    int w = snprintf(
        buf + len, cap - len, "%s%s", i ? ", " : "",
        args[i].id == HS_SQL_NULLTYPE ? "unknown" : hs_sql_type_name(args[i], tn, sizeof tn));
    if (w < 0) break;
    len += (size_t)w;
    if (len >= cap) len = cap - 1;
  }
}

static bool is_operator_name(const char *name) {
  return name[0] != '\0' && !((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_');
}

/* Every row by name (then table order), for resolution by binary search:
 * a statement resolves each operator and function once while binding, and
 * a scan of all ~1,000 rows with strcmp was 3-4 % of a short statement. */
typedef struct fn_ref {
  const char *name;
  const hs_sql_fn *f;
  size_t ord;
} fn_ref;
static fn_ref *g_refs;
static size_t g_n_refs;
static pthread_once_t g_refs_once = PTHREAD_ONCE_INIT;

static int ref_cmp(const void *a, const void *b) {
  const fn_ref *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c != 0 ? c : (x->ord > y->ord) - (x->ord < y->ord);
}

static void build_refs(void) {
  size_t n = 0;
  for (size_t t = 0; t < N_TABLES; t++) n += *TABLES[t].n;
  fn_ref *r = hs_malloc(sizeof(*r) * (n ? n : 1)); /* process lifetime; NULL: linear scans */
  if (r == NULL) return;
  size_t k = 0;
  for (size_t t = 0; t < N_TABLES; t++)
    for (size_t i = 0; i < *TABLES[t].n; i++, k++)
      r[k] = (fn_ref){TABLES[t].rows[i].name, &TABLES[t].rows[i], k};
  qsort(r, n, sizeof(*r), ref_cmp);
  g_refs = r;
  g_n_refs = n;
}

/* The rows named `name`: [*lo, *hi) of g_refs; false when there is no
 * index (then the caller scans the tables). */
static bool refs_of(const char *name, size_t *lo, size_t *hi) {
  pthread_once(&g_refs_once, build_refs);
  if (g_refs == NULL) return false;
  size_t a = 0, b = g_n_refs;
  while (a < b) {
    size_t m = a + (b - a) / 2;
    if (strcmp(g_refs[m].name, name) < 0)
      a = m + 1;
    else
      b = m;
  }
  size_t e = a;
  while (e < g_n_refs && strcmp(g_refs[e].name, name) == 0) e++;
  *lo = a, *hi = e;
  return true;
}

static void consider(const hs_sql_fn *f, const hs_sql_type *args, const bool *unknown, int32_t n,
                     hs_sql_fn_match *m, int *best) {
  hs_sql_fn_match cand;
  int cost;
  memset(&cand, 0, sizeof cand);
  if (match_row(f, args, unknown, n, &cand, &cost) != HS_OK) return;
  if (*best < 0 || cost < *best) {
    *best = cost;
    *m = cand;
  }
}

hs_status hs_sql_fn_resolve(const char *name, const hs_sql_type *args, const bool *unknown,
                            int32_t n, hs_sql_fn_match *m, hs_error *err) {
  int best = -1;
  bool named = false;
  memset(m, 0, sizeof(*m));
  size_t lo, hi;
  if (refs_of(name, &lo, &hi)) {
    named = hi > lo;
    for (size_t i = lo; i < hi; i++) consider(g_refs[i].f, args, unknown, n, m, &best);
  } else {
    for (size_t t = 0; t < N_TABLES; t++)
      for (size_t r = 0; r < *TABLES[t].n; r++) {
        const hs_sql_fn *f = &TABLES[t].rows[r];
        if (strcmp(f->name, name) != 0) continue;
        named = true;
        consider(f, args, unknown, n, m, &best);
      }
  }
  char types[256];
  if (best < 0) {
    type_list(args, n, types, sizeof types);
    bool op = is_operator_name(name);
    if (!named)
      return hs_error_set(err, HS_ERR_NOT_FOUND, "%s %s(%s) does not exist",
                          op ? "operator" : "function", name, types);
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s %s(%s) does not exist; no overload takes these argument types "
                        "(add explicit casts)",
                        op ? "operator" : "function", name, types);
  }
  /* the return type from the cast argument types */
  const hs_sql_fn *f = m->fn;
  if (f->rettype != NULL) {
    char why[200] = "";
    if (!f->rettype(m->cast_to, n, &m->ret, why, sizeof why)) {
      type_list(args, n, types, sizeof types);
      return hs_error_set(err, HS_ERR_INVALID_ARG, "%s(%s): %s", name, types,
                          why[0] ? why : "arguments not accepted");
    }
  } else {
    m->ret = hs_sql_type_of(f->ret);
  }
  return HS_OK;
}

bool hs_sql_fn_exists(const char *name) {
  size_t lo, hi;
  if (refs_of(name, &lo, &hi)) return hi > lo;
  for (size_t t = 0; t < N_TABLES; t++)
    for (size_t r = 0; r < *TABLES[t].n; r++)
      if (strcmp(TABLES[t].rows[r].name, name) == 0) return true;
  return false;
}

#define NAMES_MAX 1024
static const char *g_names[NAMES_MAX];
static size_t g_n_names;
static pthread_once_t g_names_once = PTHREAD_ONCE_INIT;

static void build_names(void) {
  size_t k = 0;
  for (size_t t = 0; t < N_TABLES; t++)
    for (size_t r = 0; r < *TABLES[t].n && k < NAMES_MAX; r++) {
      const char *nm = TABLES[t].rows[r].name;
      if (is_operator_name(nm)) continue;
      bool dup = false;
      for (size_t j = 0; j < k && !dup; j++) dup = strcmp(g_names[j], nm) == 0;
      if (!dup) g_names[k++] = nm;
    }
  g_n_names = k;
}

void hs_sql_fn_names(const char *const **names, size_t *n) {
  pthread_once(&g_names_once, build_names);
  *names = g_names;
  *n = g_n_names;
}

hs_status hs_sql_fn_strict_valid(const hs_sql_vec *args, int32_t n_args, hs_sql_vec *out,
                                 hs_error *err) {
  bool any = false;
  for (int32_t k = 0; k < n_args; k++)
    if (args[k].valid != NULL || args[k].type.id == HS_SQL_NULLTYPE) any = true;
  if (!any) {
    if (out->valid != NULL) memset(hs_sql_vec_mut_valid(out), 1, (size_t)out->n);
    return HS_OK;
  }
  if (out->valid == NULL) {
    hs_status st = hs_sql_vec_make_nullable(out, err);
    if (st != HS_OK) return st;
  }
  uint8_t *v = hs_sql_vec_mut_valid(out);
  int64_t n = out->n;
  for (int32_t k = 0; k < n_args; k++) {
    if (args[k].type.id == HS_SQL_NULLTYPE) {
      memset(v, 0, (size_t)n);
      return HS_OK;
    }
  }
  bool first = true;
  for (int32_t k = 0; k < n_args; k++) {
    const uint8_t *a = args[k].valid;
    if (a == NULL) continue;
    if (first) {
      memcpy(v, a, (size_t)n);
      first = false;
    } else {
      for (int64_t i = 0; i < n; i++) v[i] &= a[i];
    }
  }
  return HS_OK;
}

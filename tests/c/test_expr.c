/*
 * test_expr.c — filter expressions (src/query/): parse errors and their
 * positions, the bound tree's rendering, vectorized evaluation on a
 * hand-made batch (three-valued logic, NaN, decimals, dates, timestamps,
 * LIKE), and statistics pruning.
 *
 * Filter mode (used by tests/python/test_expr.py, differential against
 * DuckDB): with HS_EXPR_PARQUET=<file> set, the program reads the whole file
 * with our Parquet reader, then for each line of stdin (a filter) prints one
 * line: "OK <n> <row> <row> ..." (file-wide row indices) or
 * "ERROR <status number> <position> <message, newlines as '|'>".
 */
#include <math.h>
#include <pthread.h>

#include "hs_test.h"
#include "parquet/parquet.h"
#include "query/expr.h"

/* ------------------------------------------------------------ fixtures */

enum { N = 8 };

static void add_field(struct ArrowSchema *s, int i, const char *fmt, const char *name) {
  CHECK_OK(hs_arrow_schema_init(s->children[i], fmt, name, ARROW_FLAG_NULLABLE, 0, NULL), NULL);
}

static struct ArrowSchema make_schema(void) {
  struct ArrowSchema s;
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 9, NULL), NULL);
  add_field(&s, 0, "l", "id");
  add_field(&s, 1, "i", "age");
  add_field(&s, 2, "u", "name");
  add_field(&s, 3, "g", "score");
  add_field(&s, 4, "b", "flag");
  add_field(&s, 5, "tdD", "d");
  add_field(&s, 6, "tsu:UTC", "ts");
  add_field(&s, 7, "d:10,2", "price");
  add_field(&s, 8, "C", "Small");
  return s;
}

static void *dup(const void *p, size_t n) {
  void *q = hs_malloc(n);
  memcpy(q, p, n);
  return q;
}

static uint8_t *bits(const int *v) {
  uint8_t *b = hs_calloc(1, 8);
  for (int i = 0; i < N; i++) b[i / 8] |= (uint8_t)((v[i] != 0) << (i % 8));
  return b;
}

/* Rows (null marked by valid = 0):
 *  id:    0..7
 *  age:   10, 20, NULL, 40, 50, 60, NULL, -5
 *  name:  "ann", "bob", "", NULL, "al%x", "Ann", "ñandú", "b_c"
 *  score: 1.5, NaN, -0.0, NULL, 3.0, inf, -inf, NaN
 *  flag:  T, F, NULL, T, F, T, F, NULL
 *  d:     2024-01-01 (19723), 19724, NULL, 0, -1, 19723, 19725, 1
 *  ts(us) 2024-01-01 00:00:00, +1us, NULL, 0, -1, 2024-01-01 12:00, 1, 2
 *  price: 1.00, 2.50, NULL, -3.25, 0.10, 99999999.99, 0, 2.49
 *  Small: 0, 255, 7, 8, 9, NULL, 1, 2 */
static struct ArrowArray make_batch(void) {
  struct ArrowArray kids[9];
  int64_t id[N] = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK_OK(hs_arrow_array_make_primitive(&kids[0], N, dup(id, sizeof(id)), NULL, 0, NULL), NULL);
  int32_t age[N] = {10, 20, 0, 40, 50, 60, 0, -5};
  int av[N] = {1, 1, 0, 1, 1, 1, 0, 1};
  CHECK_OK(hs_arrow_array_make_primitive(&kids[1], N, dup(age, sizeof(age)), bits(av), 2, NULL),
           NULL);
  const char *names =
      "annbobal%xAnn\xc3\xb1"
      "and\xc3\xba"
      "b_c";
  int32_t off[N + 1] = {0, 3, 6, 6, 6, 10, 13, 20, 23};
  int nv[N] = {1, 1, 1, 0, 1, 1, 1, 1};
  CHECK_OK(hs_arrow_array_make_binary(&kids[2], N, dup(off, sizeof(off)), dup(names, 23), bits(nv),
                                      1, NULL),
           NULL);
  double sc[N] = {1.5, NAN, -0.0, 0, 3.0, INFINITY, -INFINITY, NAN};
  int sv[N] = {1, 1, 1, 0, 1, 1, 1, 1};
  CHECK_OK(hs_arrow_array_make_primitive(&kids[3], N, dup(sc, sizeof(sc)), bits(sv), 1, NULL),
           NULL);
  int fl[N] = {1, 0, 0, 1, 0, 1, 0, 0}, fv[N] = {1, 1, 0, 1, 1, 1, 1, 0};
  CHECK_OK(hs_arrow_array_make_primitive(&kids[4], N, bits(fl), bits(fv), 2, NULL), NULL);
  int32_t d[N] = {19723, 19724, 0, 0, -1, 19723, 19725, 1};
  CHECK_OK(hs_arrow_array_make_primitive(&kids[5], N, dup(d, sizeof(d)), bits(av), 2, NULL), NULL);
  const int64_t day = 19723LL * 86400 * 1000000;
  int64_t ts[N] = {day, day + 1, 0, 0, -1, day + 43200LL * 1000000, 1, 2};
  CHECK_OK(hs_arrow_array_make_primitive(&kids[6], N, dup(ts, sizeof(ts)), bits(av), 2, NULL),
           NULL);
  __extension__ __int128 pr[N] = {100, 250, 0, -325, 10, 9999999999LL, 0, 249};
  CHECK_OK(hs_arrow_array_make_primitive(&kids[7], N, dup(pr, sizeof(pr)), bits(av), 2, NULL),
           NULL);
  uint8_t sm[N] = {0, 255, 7, 8, 9, 0, 1, 2};
  int smv[N] = {1, 1, 1, 1, 1, 0, 1, 1};
  CHECK_OK(hs_arrow_array_make_primitive(&kids[8], N, dup(sm, sizeof(sm)), bits(smv), 1, NULL),
           NULL);
  struct ArrowArray b;
  CHECK_OK(hs_arrow_array_make_struct(&b, N, kids, 9, NULL, 0, NULL), NULL);
  return b;
}

/* ------------------------------------------------------------- helpers */

/* Rows selected by `filter` as "0,3,5" (or "ERR"). */
static const char *sel(const struct ArrowSchema *s, const struct ArrowArray *b,
                       const char *filter) {
  static char out[256];
  hs_error err = {0};
  hs_expr *e = NULL;
  if (hs_expr_parse(filter, s, &e, NULL, &err) != HS_OK) {
    fprintf(stderr, "  parse '%s': %s\n", filter, err.message);
    return "ERR";
  }
  int64_t *rows = NULL, n = 0;
  if (hs_expr_select_rows(e, b, &rows, &n, &err) != HS_OK) {
    hs_expr_free(e);
    return "ERR";
  }
  out[0] = '\0';
  for (int64_t i = 0; i < n; i++) {
    snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%lld", i ? "," : "",
             (long long)rows[i]);
  }
  hs_free(rows);
  hs_expr_free(e);
  return out;
}

#define CHECK_SEL(filter, expect)                                                                  \
  do {                                                                                             \
    const char *got_ = sel(&s, &b, filter);                                                        \
    hs_test_checks++;                                                                              \
    if (strcmp(got_, expect) != 0) {                                                               \
      hs_test_failures++;                                                                          \
      fprintf(stderr, "%s:%d: filter %s: got [%s], want [%s]\n", __FILE__, __LINE__, filter, got_, \
              expect);                                                                             \
    }                                                                                              \
  } while (0)

/* Parse must fail with `status` at `pos` and a message containing `needle`. */
static void check_error(const struct ArrowSchema *s, const char *filter, hs_status status, int pos,
                        const char *needle) {
  hs_error err = {0};
  hs_expr *e = NULL;
  int32_t p = -1;
  hs_status st = hs_expr_parse(filter, s, &e, &p, &err);
  hs_test_checks++;
  if (st != status || p != pos || strstr(err.message, needle) == NULL || e != NULL) {
    hs_test_failures++;
    fprintf(stderr, "filter %s: got %s at %d: %s; want %s at %d containing '%s'\n", filter,
            hs_status_str(st), (int)p, err.message, hs_status_str(status), pos, needle);
  }
  hs_expr_free(e);
}

static void check_render(const struct ArrowSchema *s, const char *filter, const char *want) {
  hs_expr *e = NULL;
  hs_error err = {0};
  char *str = NULL;
  CHECK_OK(hs_expr_parse(filter, s, &e, NULL, &err), &err);
  if (e != NULL) CHECK_OK(hs_expr_to_string(e, &str, &err), &err);
  hs_test_checks++;
  if (str == NULL || strcmp(str, want) != 0) {
    hs_test_failures++;
    fprintf(stderr, "render %s: got %s, want %s\n", filter, str ? str : "(null)", want);
  }
  hs_free(str);
  hs_expr_free(e);
}

/* --------------------------------------------------------------- tests */

/* `prefix` x n + `middle` + `suffix` x n, hs_malloc'd. */
static char *repeat(const char *prefix, const char *middle, const char *suffix, int n) {
  size_t lp = strlen(prefix), lm = strlen(middle), ls = strlen(suffix);
  char *f = hs_malloc((lp + ls) * (size_t)n + lm + 1), *p = f;
  for (int i = 0; i < n; i++, p += lp) memcpy(p, prefix, lp);
  memcpy(p, middle, lm);
  p += lm;
  for (int i = 0; i < n; i++, p += ls) memcpy(p, suffix, ls);
  *p = '\0';
  return f;
}

/* Issue 12: deep nesting says "filter nested too deeply (limit 256)" at the
 * point where it passes the limit, before libpg_query runs out of parser
 * stack ("memory exhausted") or recurses past the C stack (a 100,000-term
 * 1+1+... chain crashed it); shallower nesting and parentheses inside
 * literals and comments still parse. */
static void test_deep(const struct ArrowSchema *s) {
  static const struct {
    const char *prefix, *middle, *suffix;
    int n, pos; /* pos 0: anywhere in the filter */
  } deep[] = {
      {"(", "age = 1", ")", 10000, 257},         {"(", "age = 1", ")", 257, 257},
      {"(", "age = 1", ")", 256, 261},           {"NOT ", "flag", "", 10000, 0},
      {"", "age = 1", "::int8", 100000, 0},      {"", "age = 1", " + 1", 100000, 0},
      {"(age = 1 OR ", "age = 2", ")", 5000, 0}, {"", "flag", " IS TRUE", 300, 0},
      {"-(", "1 = age", ")", 300, 257},
  };
  for (size_t i = 0; i < sizeof deep / sizeof deep[0]; i++) {
    char *f = repeat(deep[i].prefix, deep[i].middle, deep[i].suffix, deep[i].n);
    hs_error err = {0};
    hs_expr *e = NULL;
    int32_t pos = -1;
    hs_status st = hs_expr_parse(f, s, &e, &pos, &err);
    hs_test_checks++;
    if (st != HS_ERR_UNSUPPORTED ||
        strstr(err.message, "filter nested too deeply (limit 256)") == NULL ||
        (deep[i].pos > 0 ? pos != deep[i].pos : (pos < 1 || (size_t)pos > strlen(f)))) {
      hs_test_failures++;
      fprintf(stderr, "deep %zu: got %s at %d: %.160s\n", i, hs_status_str(st), (int)pos,
              err.message);
    }
    hs_expr_free(e);
    hs_free(f);
  }
  static const struct {
    const char *prefix, *middle, *suffix;
    int n;
    const char *render;
  } ok[] = {
      {"(", "age = 1", ")", 255, "age = 1"},
      {"NOT ", "flag", "", 100, "NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT "},
      {"", "name = '", "(", 5000, NULL},
      {"", "name = $q$", "(", 5000, NULL},
      {"", "name = E'\\'", "(", 5000, NULL},
      {"", "age = 1 -- ", "(", 5000, "age = 1"},
      {"", "age = 1 /* /* */ ", "(", 5000, NULL},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    char *f = repeat(ok[i].prefix, ok[i].middle, ok[i].suffix, ok[i].n);
    size_t len = strlen(f);
    /* close what the middle opened: a quote, a dollar tag, a comment */
    char *g = hs_malloc(len + 8);
    memcpy(g, f, len + 1);
    if (strstr(ok[i].middle, "$q$") != NULL)
      strcat(g, "$q$");
    else if (strchr(ok[i].middle, '\'') != NULL)
      strcat(g, "'");
    else if (strstr(ok[i].middle, "/*") != NULL)
      strcat(g, " */");
    hs_expr *e = NULL;
    hs_error err = {0};
    hs_status st = hs_expr_parse(g, s, &e, NULL, &err);
    hs_test_checks++;
    if (st != HS_OK) {
      hs_test_failures++;
      fprintf(stderr, "deep ok %zu: %.160s\n", i, err.message);
    }
    char *str = NULL;
    if (e != NULL && ok[i].render != NULL) {
      CHECK_OK(hs_expr_to_string(e, &str, &err), &err);
      CHECK(str != NULL && strncmp(str, ok[i].render, strlen(ok[i].render)) == 0);
    }
    hs_free(str);
    hs_expr_free(e);
    hs_free(g);
    hs_free(f);
  }
  /* a long flat list is not deep */
  hs_buf b;
  hs_buf_init(&b);
  hs_buf_printf(&b, "id IN (");
  for (int i = 0; i < 20000; i++) hs_buf_printf(&b, "%s-%d", i ? ", " : "", i);
  hs_buf_printf(&b, ") OR age = -1e-3");
  for (int i = 0; i < 3000; i++) hs_buf_printf(&b, " OR NOT age = -%d", i);
  hs_buf_append_byte(&b, 0);
  hs_expr *e = NULL;
  hs_error err = {0};
  CHECK_OK(hs_expr_parse((const char *)b.data, s, &e, NULL, &err), &err);
  hs_expr_free(e);
  hs_buf_free(&b);
}

static void test_errors(const struct ArrowSchema *s) {
  check_error(s, "id > 3 AND agee > 5", HS_ERR_INVALID_ARG, 12,
              "unknown column 'agee'; columns are: id, age, name");
  hs_error err = {0};
  hs_expr *e = NULL;
  hs_expr_parse("id > 3 AND agee > 5", s, &e, NULL, &err);
  CHECK(strstr(err.message, "\n  id > 3 AND agee > 5\n             ^") != NULL);
  check_error(s, "id >", HS_ERR_INVALID_ARG, 5, "syntax error at end of input");
  check_error(s, "id > 1 AND AND", HS_ERR_INVALID_ARG, 12, "syntax error at or near \"AND\"");
  check_error(s, "name = 5", HS_ERR_INVALID_ARG, 8, "type mismatch: column 'name' is string");
  check_error(s, "age = 'abc'", HS_ERR_INVALID_ARG, 7, "invalid integer literal 'abc'");
  check_error(s, "d > DATE '2024-02-30'", HS_ERR_INVALID_ARG, 10, "invalid date literal");
  check_error(s, "flag = 1", HS_ERR_INVALID_ARG, 8, "type mismatch");
  check_error(s, "age = id", HS_ERR_UNSUPPORTED, 5, "two columns");
  check_error(s, "lower(name) = 'x'", HS_ERR_UNSUPPORTED, 1, "function calls");
  check_error(s, "age + 1 > 3", HS_ERR_UNSUPPORTED, 5, "arithmetic");
  check_error(s, "age > 1; DROP TABLE t", HS_ERR_INVALID_ARG, 8, "not several statements");
  check_error(s, "age > 1 ORDER BY 1", HS_ERR_INVALID_ARG, 0, "boolean expression only");
  check_error(s, "age > 1 UNION SELECT 2", HS_ERR_INVALID_ARG, 0, "boolean expression only");
  check_error(s, "age > (SELECT 1)", HS_ERR_UNSUPPORTED, 7, "subqueries");
  check_error(s, "age", HS_ERR_INVALID_ARG, 1, "not boolean");
  check_error(s, "name LIKE 'a\\'", HS_ERR_INVALID_ARG, 11, "escape character");
  check_error(s, "age LIKE 'a'", HS_ERR_INVALID_ARG, 1, "needs a string column");
  check_error(s, "t.age = 1", HS_ERR_UNSUPPORTED, 1, "plain column names");
  check_error(s, "'unterminated", HS_ERR_INVALID_ARG, 1, "unterminated");
  check_error(s, "", HS_ERR_INVALID_ARG, 1, "syntax error");
  /* Deep nesting is refused, not overflowed. */
  char deep[4000];
  size_t k = 0;
  for (int i = 0; i < 600; i++) k += (size_t)snprintf(deep + k, sizeof(deep) - k, "NOT (");
  k += (size_t)snprintf(deep + k, sizeof(deep) - k, "flag");
  for (int i = 0; i < 600; i++) deep[k++] = ')';
  deep[k] = '\0';
  hs_error derr = {0};
  CHECK(hs_expr_parse(deep, s, &e, NULL, &derr) != HS_OK);
  test_deep(s);
}

/* Parse trees are kept per process by filter text (expr_parse.c): the same
 * text binds afresh against each schema, more distinct filters than are
 * kept still parse, and threads share kept trees. */
static void test_tree_cache(const struct ArrowSchema *s) {
  struct ArrowSchema other;
  CHECK_OK(hs_arrow_schema_init(&other, "+s", "", 0, 2, NULL), NULL);
  add_field(&other, 0, "u", "age"); /* a string here */
  add_field(&other, 1, "u", "name");
  for (int round = 0; round < 2; round++) {
    check_render(s, "age > 3 AND name = 'x'", "(age > 3 AND name = 'x')");
    check_error(&other, "age > 3 AND name = 'x'", HS_ERR_INVALID_ARG, 7, "type mismatch");
    check_error(s, "age >>", HS_ERR_INVALID_ARG, 7, "syntax error");
  }
  char f[64], want[64];
  for (int i = 0; i < 40; i++) {
    snprintf(f, sizeof f, "age = %d", i);
    snprintf(want, sizeof want, "age = %d", i);
    check_render(s, f, want);
  }
  check_render(s, "age > 3 AND name = 'x'", "(age > 3 AND name = 'x')");
  other.release(&other);
}

typedef struct tree_job {
  const struct ArrowSchema *s;
  int id, bad;
} tree_job;

static void *tree_worker(void *arg) {
  tree_job *j = arg;
  for (int i = 0; i < 300; i++) {
    char f[64], want[64];
    int v = (i * 7 + j->id) % 24; /* more filters than are kept, shared by all threads */
    snprintf(f, sizeof f, "id < %d OR age = %d", v, v);
    snprintf(want, sizeof want, "(id < %d OR age = %d)", v, v);
    hs_expr *e = NULL;
    hs_error err = {0};
    char *str = NULL;
    if (hs_expr_parse(f, j->s, &e, NULL, &err) != HS_OK ||
        hs_expr_to_string(e, &str, &err) != HS_OK || strcmp(str, want) != 0)
      j->bad++;
    hs_free(str);
    hs_expr_free(e);
  }
  return NULL;
}

static void test_tree_cache_threads(const struct ArrowSchema *s) {
  pthread_t th[4];
  tree_job jobs[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (tree_job){s, i, 0};
    CHECK(pthread_create(&th[i], NULL, tree_worker, &jobs[i]) == 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CHECK_EQ_INT(jobs[i].bad, 0);
  }
}

static void test_render(const struct ArrowSchema *s) {
  check_render(s, "age BETWEEN 1 AND 3", "(age >= 1 AND age <= 3)");
  check_render(s, "age NOT BETWEEN 1 AND 3", "NOT (age >= 1 AND age <= 3)");
  check_render(s, "id IN (1, -2, 0, 1)", "id IN (-2, 0, 1)");
  check_render(s, "id = 3 OR id IN (1, NULL) OR id = 1", "id IN (1, 3, NULL)");
  check_render(s, "id IN (2.5, NULL, 99999999999999999999)", "id IN (NULL)");
  check_render(s, "id NOT IN (-2147483648, -(7))", "NOT id IN (-2147483648, -7)");
  check_render(s, "-5 < id AND 3 >= age", "(id > -5 AND age <= 3)");
  check_render(s, "AGE != +4 OR name IS NOT NULL", "(age <> 4 OR name IS NOT NULL)");
  check_render(s, "d = DATE '2024-01-01' AND ts < '2024-01-01'::timestamp",
               "(d = DATE(19723) AND ts < TIMESTAMP(1704067200.000000000))");
  check_render(s, "name LIKE 'a!%' ESCAPE '!'", "name LIKE 'a!%'");
  check_render(s, "flag AND NOT flag IS TRUE", "(flag = TRUE AND NOT (flag = TRUE IS TRUE))");
  check_render(s, "age = NULL OR name = 'it''s'", "(NULL OR name = 'it''s')");
  check_render(s, "Small = 1", "Small = 1");
}

static void test_eval(void) {
  struct ArrowSchema s = make_schema();
  struct ArrowArray b = make_batch();
  CHECK_OK(hs_arrow_array_validate(&s, &b, NULL), NULL);
  CHECK_SEL("age > 15", "1,3,4,5");
  CHECK_SEL("NOT age > 15", "0,7");
  CHECK_SEL("age > 15 OR age IS NULL", "1,2,3,4,5,6");
  CHECK_SEL("age <> 20", "0,3,4,5,7");
  CHECK_SEL("age = 20.0 OR age < -4.5", "1,7");
  CHECK_SEL("age > 19.99 AND age < 40.0001", "1,3");
  CHECK_SEL("age > 9999999999999999999999", "");
  CHECK_SEL("age < 9999999999999999999999", "0,1,3,4,5,7");
  CHECK_SEL("age IN (10, 40, NULL)", "0,3");
  CHECK_SEL("age NOT IN (10, 40)", "1,4,5,7");
  CHECK_SEL("age NOT IN (10, NULL)", "");
  CHECK_SEL("age BETWEEN 20 AND 50", "1,3,4");
  CHECK_SEL("age NOT BETWEEN 20 AND 50", "0,5,7");
  CHECK_SEL("age = '40'", "3");
  CHECK_SEL("age = NULL", "");
  CHECK_SEL("NOT (age = NULL)", "");
  CHECK_SEL("(age > 30) IS NOT TRUE", "0,1,2,6,7");
  CHECK_SEL("(age > 30) IS UNKNOWN", "2,6");
  CHECK_SEL("TRUE", "0,1,2,3,4,5,6,7");
  CHECK_SEL("NULL OR id = 1", "1");
  /* strings: bytewise, LIKE with % _ and escapes, '_' is one character */
  CHECK_SEL("name = 'ann'", "0");
  CHECK_SEL("name < 'b'", "0,2,4,5");
  CHECK_SEL("name >= 'b'", "1,6,7");
  CHECK_SEL("name LIKE 'a%'", "0,4");
  CHECK_SEL("name LIKE '%n%'", "0,5,6");
  CHECK_SEL("name NOT LIKE '%n%'", "1,2,4,7");
  CHECK_SEL("name LIKE '_and_'", "6");
  CHECK_SEL("name LIKE 'al\\%x'", "4");
  CHECK_SEL("name LIKE 'al!%_' ESCAPE '!'", "4");
  CHECK_SEL("name LIKE 'b\\_c'", "7");
  CHECK_SEL("name LIKE 'b_c'", "7");
  CHECK_SEL("name LIKE ''", "2");
  CHECK_SEL("name LIKE '%'", "0,1,2,4,5,6,7");
  CHECK_SEL("name IN ('bob', 'Ann')", "1,5");
  /* floats: NaN = NaN and NaN above everything; -0 = 0 */
  CHECK_SEL("score = 'NaN'", "1,7");
  CHECK_SEL("score > 'Infinity'::float8", "1,7");
  CHECK_SEL("score < 'NaN'::float8", "0,2,4,5,6");
  CHECK_SEL("score = 0", "2");
  CHECK_SEL("score >= 1.5", "0,1,4,5,7");
  CHECK_SEL("score < 0", "6");
  /* booleans */
  CHECK_SEL("flag", "0,3,5");
  CHECK_SEL("NOT flag", "1,4,6");
  CHECK_SEL("flag = 'f'", "1,4,6");
  CHECK_SEL("flag IS NULL", "2,7");
  CHECK_SEL("flag IS NOT FALSE", "0,2,3,5,7");
  /* dates and timestamps */
  CHECK_SEL("d = DATE '2024-01-01'", "0,5");
  CHECK_SEL("d >= '2024-01-02'", "1");
  CHECK_SEL("d < '1970-01-01'", "4");
  CHECK_SEL("d > TIMESTAMP '2024-01-01 00:00:01'", "1");
  CHECK_SEL("d = TIMESTAMP '2024-01-01 00:00:01'", "");
  CHECK_SEL("d = TIMESTAMP '2024-01-01 00:00:00'", "0,5");
  CHECK_SEL("ts = '2024-01-01'", "0");
  CHECK_SEL("ts > '2024-01-01 00:00:00.0000005'", "1,5");
  CHECK_SEL("ts >= '2024-01-01T00:00:00.000001Z'", "1,5");
  CHECK_SEL("ts = '2024-01-01 13:00:00+01:00'", "5");
  CHECK_SEL("ts < '1970-01-01'", "4");
  CHECK_SEL("ts BETWEEN '1970-01-01' AND '1970-01-01 00:00:00.000002'", "3,7");
  CHECK_SEL("ts > DATE '2023-12-31'", "0,1,5");
  /* decimals: exact against any literal */
  CHECK_SEL("price = 2.5", "1");
  CHECK_SEL("price = 2.50000", "1");
  CHECK_SEL("price > 2.495", "1,5");
  CHECK_SEL("price < 0.1", "3");
  CHECK_SEL("price <= 0.1", "3,4");
  CHECK_SEL("price = 1", "0");
  CHECK_SEL("price > 1e8", "");
  CHECK_SEL("price < -3.2", "3");
  /* unsigned with out-of-range literals */
  CHECK_SEL("Small > -1", "0,1,2,3,4,6,7");
  CHECK_SEL("Small = 256", "");
  CHECK_SEL("small >= 255", "1");
  CHECK_SEL("Small < 2.5", "0,6,7");
  /* a sliced batch: offsets honoured */
  struct ArrowArray sliced = b;
  sliced.offset = 3, sliced.length = 4;
  const char *got = sel(&s, &sliced, "age > 15");
  CHECK(strcmp(got, "0,1,2") == 0);
  /* a batch shaped differently is refused */
  struct ArrowArray bad = b;
  bad.n_children = 2;
  hs_expr *e = NULL;
  hs_error err = {0};
  uint64_t w[1];
  CHECK_OK(hs_expr_parse("age > 1", &s, &e, NULL, &err), &err);
  CHECK(hs_expr_eval(e, &bad, w, NULL, &err) == HS_ERR_INVALID_ARG);
  CHECK(hs_expr_uses_field(e, 1) && !hs_expr_uses_field(e, 0));
  hs_expr_free(e);
  test_errors(&s);
  test_tree_cache(&s);
  test_tree_cache_threads(&s);
  test_render(&s);
  hs_arrow_array_release(&b);
  hs_arrow_schema_release(&s);
}

/* A large batch crosses chunk boundaries; compare with a scalar loop. */
static void test_large(void) {
  struct ArrowSchema s;
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 1, NULL), NULL);
  add_field(&s, 0, "i", "x");
  enum { M = 10000 };
  int32_t *v = hs_malloc(sizeof(int32_t) * M);
  uint8_t *valid = hs_calloc(1, M / 8 + 1);
  uint64_t st = 7;
  int64_t nulls = 0;
  for (int i = 0; i < M; i++) {
    v[i] = (int32_t)(hs_test_rand(&st) % 100);
    if (hs_test_rand(&st) % 5)
      valid[i / 8] |= (uint8_t)(1u << (i % 8));
    else
      nulls++;
  }
  struct ArrowArray kid, b;
  CHECK_OK(hs_arrow_array_make_primitive(&kid, M, v, valid, nulls, NULL), NULL);
  CHECK_OK(hs_arrow_array_make_struct(&b, M, &kid, 1, NULL, 0, NULL), NULL);
  hs_expr *e = NULL;
  hs_error err = {0};
  CHECK_OK(hs_expr_parse("x < 30 OR NOT (x <> 50 AND x IS NOT NULL)", &s, &e, NULL, &err), &err);
  uint64_t *sel_w = hs_calloc(M / 64 + 1, sizeof(uint64_t));
  int64_t n = 0, want = 0;
  CHECK_OK(hs_expr_eval(e, &b, sel_w, &n, &err), &err);
  int mism = 0;
  for (int i = 0; i < M; i++) {
    bool ok = (valid[i / 8] >> (i % 8)) & 1;
    /* NULL: NOT (unknown AND false) is TRUE */
    bool m = !ok || v[i] < 30 || v[i] == 50;
    want += m;
    if (m != (bool)((sel_w[i / 64] >> (i % 64)) & 1)) mism++;
  }
  CHECK_EQ_INT(mism, 0);
  CHECK_EQ_INT(n, want);
  hs_free(sel_w);
  hs_expr_free(e);
  hs_arrow_array_release(&b);
  hs_arrow_schema_release(&s);
}

static bool may(const struct ArrowSchema *s, const char *filter, const hs_expr_stats *st) {
  hs_expr *e = NULL;
  hs_error err = {0};
  bool m = true;
  CHECK_OK(hs_expr_parse(filter, s, &e, NULL, &err), &err);
  if (e != NULL) CHECK_OK(hs_expr_may_match(e, st, 9, &m, &err), &err);
  hs_expr_free(e);
  return m;
}

static void test_prune(void) {
  struct ArrowSchema s = make_schema();
  hs_expr_stats st[9];
  for (int i = 0; i < 9; i++) hs_expr_stats_init(&st[i]);
  CHECK(may(&s, "age > 100", st)); /* nothing known */
  st[1].has_bounds = true, st[1].min.i64 = 10, st[1].max.i64 = 60, st[1].null_count = 0;
  st[1].row_count = 100;
  CHECK(!may(&s, "age > 60", st));
  CHECK(may(&s, "age >= 60", st));
  CHECK(!may(&s, "age < 10", st));
  CHECK(!may(&s, "age = 9.5", st) || true); /* conservative either way */
  CHECK(!may(&s, "age IN (1, 2, 100)", st));
  CHECK(may(&s, "age IN (1, 20)", st));
  CHECK(!may(&s, "age BETWEEN 61 AND 70", st));
  CHECK(may(&s, "age NOT BETWEEN 61 AND 70", st));
  CHECK(!may(&s, "age IS NULL", st));
  CHECK(may(&s, "age IS NOT NULL", st));
  CHECK(!may(&s, "NOT (age >= 10)", st));
  CHECK(may(&s, "age > 60 OR id = 3", st));
  CHECK(!may(&s, "age > 60 AND id = 3", st));
  CHECK(!may(&s, "age = NULL", st));
  st[1].null_count = -1;
  CHECK(may(&s, "age IS NULL", st));
  CHECK(!may(&s, "age > 60", st));
  CHECK(may(&s, "(age > 60) IS NOT TRUE", st));
  st[1].null_count = 100; /* all null */
  CHECK(!may(&s, "age < 1000", st));
  CHECK(may(&s, "age IS NULL", st));
  CHECK(!may(&s, "NOT (age < 1000)", st));
  /* floats: NaN may hide above max unless nan_count says none */
  st[3].has_bounds = true, st[3].min.f64 = 0, st[3].max.f64 = 1, st[3].null_count = 0;
  CHECK(may(&s, "score > 2", st));
  st[3].nan_count = 0;
  CHECK(!may(&s, "score > 2", st));
  CHECK(!may(&s, "score = 'NaN'", st));
  /* strings and LIKE prefixes */
  st[2].has_bounds = true, st[2].null_count = 0;
  st[2].min.bytes = (const uint8_t *)"apple", st[2].min.len = 5;
  st[2].max.bytes = (const uint8_t *)"banana", st[2].max.len = 6;
  CHECK(!may(&s, "name = 'cherry'", st));
  CHECK(may(&s, "name < 'apricot'", st));
  CHECK(!may(&s, "name LIKE 'c%'", st));
  CHECK(may(&s, "name LIKE 'ba%'", st));
  CHECK(may(&s, "name LIKE 'ap%'", st));
  CHECK(!may(&s, "name LIKE 'aa%'", st));
  CHECK(may(&s, "name LIKE '%z'", st));
  CHECK(may(&s, "name NOT LIKE 'c%'", st));
  /* decimals and timestamps */
  st[7].has_bounds = true, st[7].null_count = 0;
  __extension__ __int128 lo = 100, hi = 250;
  memcpy(st[7].min.dec, &lo, 16), memcpy(st[7].max.dec, &hi, 16);
  CHECK(!may(&s, "price > 2.5", st));
  CHECK(may(&s, "price >= 2.5", st));
  CHECK(!may(&s, "price < 0.999", st));
  st[6].has_bounds = true, st[6].null_count = 0, st[6].min.i64 = 0, st[6].max.i64 = 1000000;
  CHECK(!may(&s, "ts > '1970-01-01 00:00:01'", st));
  CHECK(may(&s, "ts = '1970-01-01 00:00:01'", st));
  /* missing statistics are an error */
  hs_expr *e = NULL;
  hs_error err = {0};
  bool m;
  CHECK_OK(hs_expr_parse("price > 1", &s, &e, NULL, &err), &err);
  CHECK(hs_expr_may_match(e, st, 3, &m, &err) == HS_ERR_INVALID_ARG);
  hs_expr_free(e);
  hs_arrow_schema_release(&s);
}

/* ------------------------------------------------------ filter mode */

static int filter_mode(const char *path) {
  hs_error err = {0};
  hs_parquet_reader *r = NULL;
  struct ArrowArrayStream stream;
  struct ArrowSchema schema;
  struct ArrowArray *batches = NULL;
  size_t nb = 0;
  if (hs_parquet_reader_open(path, &r, &err) != HS_OK ||
      hs_parquet_reader_stream(r, NULL, &stream, &err) != HS_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 2;
  }
  if (hs_arrow_stream_collect(&stream, &schema, &batches, &nb, &err) != HS_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 2;
  }
  stream.release(&stream);
  hs_parquet_reader_free(r);
  static char line[1 << 16];
  while (fgets(line, sizeof(line), stdin) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    hs_expr *e = NULL;
    int32_t pos = 0;
    hs_error perr = {0};
    hs_status st = hs_expr_parse(line, &schema, &e, &pos, &perr);
    hs_buf out;
    hs_buf_init(&out);
    int64_t total = 0, base = 0;
    for (size_t i = 0; st == HS_OK && i < nb; i++) {
      int64_t *rows = NULL, n = 0;
      st = hs_expr_select_rows(e, &batches[i], &rows, &n, &perr);
      for (int64_t k = 0; k < n; k++) hs_buf_printf(&out, " %lld", (long long)(base + rows[k]));
      total += n;
      base += batches[i].length;
      hs_free(rows);
    }
    if (st == HS_OK) {
      printf("OK %lld%.*s\n", (long long)total, (int)out.len, out.data ? (char *)out.data : "");
    } else {
      for (char *p = perr.message; *p; p++) {
        if (*p == '\n') *p = '|';
      }
      printf("ERROR %d %d %s\n", (int)st, (int)pos, perr.message);
    }
    fflush(stdout);
    hs_buf_free(&out);
    hs_expr_free(e);
  }
  hs_arrow_batches_free(batches, nb);
  hs_arrow_schema_release(&schema);
  return 0;
}

int main(void) {
  const char *path = getenv("HS_EXPR_PARQUET");
  if (path != NULL && *path) return filter_mode(path);
  test_eval();
  test_large();
  test_prune();
  return hs_test_finish("test_expr");
}

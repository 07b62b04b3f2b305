/*
 * expr_parse.c — filter text to a bound expression tree.
 *
 * The filter is parsed by PostgreSQL's grammar (libpg_query) as the WHERE
 * clause of `SELECT 1 WHERE <filter>`; we read libpg_query's JSON parse tree
 * with jansson and bind it against an Arrow schema in one recursive pass.
 * We only call libpg_query's public entry points: its errors (PostgreSQL
 * longjmps) stay inside pg_query_parse and come back as a PgQueryError.
 *
 * Anything besides the WHERE clause (FROM, GROUP BY, ORDER BY, LIMIT,
 * UNION, a second statement) is refused, so a filter cannot smuggle in a
 * query. Positions in messages are 1-based character offsets in the filter.
 *
 * libpg_query 15-4.0.0 drops integer constants <= 0 from its JSON output
 * (`"ival": {}`); since such a constant can only come from a literal
 * written with a minus sign (or 0), we re-read its digits from the text at
 * the constant's location (see int_from_text).
 */
#include <jansson.h>
#include <pg_query.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "expr_internal.h"

#define PREFIX "SELECT 1 WHERE "
#define PREFIX_LEN 15
#define FILTER_BYTES_MAX (1u << 20)

typedef struct ctx {
  hs_expr *e;
  const struct ArrowSchema *schema;
  const char *filter;
  const char *sql;
  size_t sql_len;
  hs_error *err;
  int32_t *error_pos;
} ctx;

/* ------------------------------------------------------------- errors */

static int32_t pos_of(const ctx *c, json_t *node) {
  json_t *loc = json_object_get(node, "location");
  if (!json_is_integer(loc)) return 0;
  json_int_t l = json_integer_value(loc);
  if (l < PREFIX_LEN || (size_t)l > c->sql_len) return 0;
  return (int32_t)(l - PREFIX_LEN + 1);
}

/* Format "filter: at position P: <msg>" plus the filter and a caret line. */
static hs_status fail(const ctx *c, hs_status st, int32_t pos, const char *fmt, ...)
    HS_PRINTF(4, 5);
static hs_status fail(const ctx *c, hs_status st, int32_t pos, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (c->error_pos != NULL) *c->error_pos = pos;
  size_t flen = strlen(c->filter);
  if (pos <= 0 || flen > 200 || memchr(c->filter, '\n', flen) != NULL) {
    if (pos > 0) return hs_error_set(c->err, st, "filter: at position %d: %s", (int)pos, msg);
    return hs_error_set(c->err, st, "filter: %s", msg);
  }
  return hs_error_set(c->err, st, "filter: at position %d: %s\n  %s\n  %*s^", (int)pos, msg,
                      c->filter, (int)pos - 1, "");
}

static hs_status nomem(const ctx *c) {
  return fail(c, HS_ERR_NOMEM, 0, "out of memory");
}

#define TOO_DEEP "filter nested too deeply (limit %d)"

static hs_status too_deep(const ctx *c, int32_t pos) {
  return fail(c, HS_ERR_UNSUPPORTED, pos, TOO_DEEP, HS_EXPR_DEPTH_MAX);
}

/* ------------------------------------------------------ nesting bound
 *
 * Deep nesting must be refused before libpg_query sees it: PostgreSQL's
 * grammar runs out of parser stack near 10,000 open parentheses ("memory
 * exhausted"), the parse tree's JSON output recurses once per tree level
 * (a 100,000-term `1+1+...` chain overflowed the C stack) and jansson
 * refuses JSON deeper than 2048. This lexical pass bounds the depth the
 * tree can have: at each point, the open parentheses / brackets plus, at
 * every open level, the operators since that level's last comma, AND or
 * OR (each can nest one tree level: NOT NOT x, a::t::t, 1+1+1, x IS TRUE
 * IS TRUE). Beyond HS_EXPR_DEPTH_MAX the filter is refused at that point.
 * String literals (also E'..' and $tag$..$tag$), quoted identifiers and
 * comments are skipped; anything malformed is left to the parser. */

static bool ident_start(unsigned char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch >= 0x80;
}

static bool ident_char(unsigned char ch) {
  return ident_start(ch) || (ch >= '0' && ch <= '9') || ch == '$';
}

static bool word_is(const char *w, size_t n, const char *kw) {
  size_t k = strlen(kw);
  if (n != k) return false;
  for (size_t i = 0; i < n; i++) {
    char ch = w[i];
    if (ch >= 'a' && ch <= 'z') ch = (char)(ch - 'a' + 'A');
    if (ch != kw[i]) return false;
  }
  return true;
}

/* End of the quoted text that starts at f[i] (a quote char `q`), past the
 * closing quote; a doubled quote is one character, and with `backslash`
 * (E'...') a backslash escapes the next character. */
static size_t skip_quoted(const char *f, size_t n, size_t i, char q, bool backslash) {
  for (i++; i < n; i++) {
    if (backslash && f[i] == '\\') {
      i++;
    } else if (f[i] == q) {
      if (i + 1 < n && f[i + 1] == q) {
        i++;
      } else {
        return i + 1;
      }
    }
  }
  return n;
}

/* 1-based position where the nesting passes HS_EXPR_DEPTH_MAX, or 0. */
int32_t hs_expr_nesting_overflow(const char *f, size_t n) {
  int base[HS_EXPR_DEPTH_MAX + 2], run[HS_EXPR_DEPTH_MAX + 2];
  int level = 0;
  base[0] = run[0] = 0;
  size_t i = 0;
  while (i < n) {
    unsigned char ch = (unsigned char)f[i];
    size_t at = i;
    bool op = false;
    if (ch == '-' && i + 1 < n && f[i + 1] == '-') { /* -- comment */
      while (i < n && f[i] != '\n') i++;
      continue;
    }
    if (ch == '/' && i + 1 < n && f[i + 1] == '*') { /* nested comment */
      int open = 0;
      do {
        if (f[i] == '/' && i + 1 < n && f[i + 1] == '*') {
          open++;
          i += 2;
        } else if (f[i] == '*' && i + 1 < n && f[i + 1] == '/') {
          open--;
          i += 2;
        } else {
          i++;
        }
      } while (i < n && open > 0);
      continue;
    }
    if (ch == '\'' || ch == '"') {
      i = skip_quoted(f, n, i, (char)ch, false);
      continue;
    }
    if (ch == '$') { /* $tag$ ... $tag$, or a parameter $1 */
      size_t t = i + 1;
      while (t < n && ident_char((unsigned char)f[t]) && f[t] != '$' &&
             !(t == i + 1 && f[t] >= '0' && f[t] <= '9'))
        t++;
      if (t < n && f[t] == '$') {
        size_t tag = t + 1 - i, j = t + 1;
        while (j + tag <= n && memcmp(f + j, f + i, tag) != 0) j++;
        i = j + tag <= n ? j + tag : n;
        continue;
      }
      i = t > i + 1 ? t : i + 1;
      continue;
    }
    if (ident_start(ch)) {
      size_t s0 = i;
      while (i < n && ident_char((unsigned char)f[i])) i++;
      size_t len = i - s0;
      if (i < n && f[i] == '\'' && len == 1 && (f[s0] == 'E' || f[s0] == 'e')) {
        i = skip_quoted(f, n, i, '\'', true);
      } else if (word_is(f + s0, len, "AND") || word_is(f + s0, len, "OR")) {
        run[level] = 0;
      } else if (word_is(f + s0, len, "NOT") || word_is(f + s0, len, "IS")) {
        op = true;
      }
      if (!op) continue;
    } else if ((ch >= '0' && ch <= '9') ||
               (ch == '.' && i + 1 < n && f[i + 1] >= '0' && f[i + 1] <= '9')) {
      while (i < n && (ident_char((unsigned char)f[i]) || f[i] == '.')) {
        bool exp = f[i] == 'e' || f[i] == 'E';
        i++;
        if (exp && i < n && (f[i] == '+' || f[i] == '-')) i++;
      }
      continue;
    } else if (ch == '(' || ch == '[') {
      if (level == HS_EXPR_DEPTH_MAX) return (int32_t)at + 1;
      level++;
      base[level] = base[level - 1] + run[level - 1] + 1;
      run[level] = 0;
      i++;
    } else if (ch == ')' || ch == ']') {
      if (level > 0) level--;
      i++;
      continue;
    } else if (ch == ',') {
      run[level] = 0;
      i++;
      continue;
    } else if (ch == ':' && i + 1 < n && f[i + 1] == ':') {
      op = true;
      i += 2;
    } else if (strchr("+-*/<>=~!@#%^&|`?", ch) != NULL) {
      op = true;
      i++;
    } else {
      i++;
      continue;
    }
    if (op) run[level]++;
    if (base[level] + run[level] > HS_EXPR_DEPTH_MAX) return (int32_t)at + 1;
  }
  return 0;
}

/* ------------------------------------------------------------ helpers */

/* The single key of a node object ({"A_Expr": {...}}) and its body. */
static const char *node_type(json_t *n, json_t **body) {
  if (!json_is_object(n) || json_object_size(n) != 1) return NULL;
  const char *key;
  json_t *val;
  json_object_foreach(n, key, val) {
    *body = val;
    return key;
  }
  return NULL;
}

static const char *str_node(json_t *n) {
  json_t *b;
  const char *t = node_type(n, &b);
  if (t == NULL || strcmp(t, "String") != 0) return NULL;
  return json_string_value(json_object_get(b, "sval"));
}

static hs_expr_node *new_node(const ctx *c, hs_expr_node_kind kind, int32_t pos) {
  hs_expr_node *n = hs_arena_alloc(&c->e->arena, sizeof(*n));
  if (n != NULL) n->kind = kind, n->pos = pos, n->escape = -1;
  return n;
}

/* ---------------------------------------------------------- operands */

typedef struct operand {
  bool is_col;
  int64_t field;
  hs_expr_lit lit;
  int32_t pos;
} operand;

/* Digits of a constant <= 0 from the text at its location: skip signs,
 * parentheses, whitespace and comments, then read the digits. */
static bool int_from_text(const ctx *c, json_t *node, int64_t *out) {
  json_int_t l = json_integer_value(json_object_get(node, "location"));
  if (l < 0 || (size_t)l >= c->sql_len) return false;
  const char *s = c->sql;
  size_t i = (size_t)l, n = c->sql_len;
  while (i < n) {
    if (s[i] == '-' && i + 1 < n && s[i + 1] == '-') {
      while (i < n && s[i] != '\n') i++;
    } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
      int depth = 0;
      while (i < n) {
        if (s[i] == '/' && i + 1 < n && s[i + 1] == '*')
          depth++, i += 2;
        else if (s[i] == '*' && i + 1 < n && s[i + 1] == '/') {
          i += 2;
          if (--depth == 0) break;
        } else
          i++;
      }
    } else if (s[i] == '-' || s[i] == '+' || s[i] == '(' || s[i] == ' ' || s[i] == '\t' ||
               s[i] == '\n' || s[i] == '\r' || s[i] == '\f' || s[i] == '\v') {
      i++;
    } else {
      break;
    }
  }
  int64_t v = 0;
  size_t d = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9' && d < 11) v = v * 10 + (s[i++] - '0'), d++;
  if (d == 0 || v > 2147483648LL) return false;
  *out = -v; /* the JSON dropped it, so it was <= 0 */
  return true;
}

static hs_status lit_text(const ctx *c, hs_expr_lit *lit, const char *s, size_t n) {
  char *t = hs_arena_strndup(&c->e->arena, s, n);
  if (t == NULL) return nomem(c);
  lit->text = t, lit->len = n;
  return HS_OK;
}

static hs_status const_from_json(const ctx *c, json_t *body, int32_t pos, hs_expr_lit *lit) {
  memset(lit, 0, sizeof(*lit));
  lit->pos = pos;
  json_t *v;
  if (json_is_true(json_object_get(body, "isnull"))) {
    lit->kind = HS_LIT_NULL;
    return HS_OK;
  }
  if ((v = json_object_get(body, "ival")) != NULL) {
    json_t *iv = json_object_get(v, "ival");
    int64_t x = 0;
    if (json_is_integer(iv)) {
      x = json_integer_value(iv);
    } else if (!int_from_text(c, body, &x)) {
      return fail(c, HS_ERR_INTERNAL, pos, "cannot read the integer constant");
    }
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%lld", (long long)x);
    lit->kind = HS_LIT_NUM;
    return lit_text(c, lit, buf, (size_t)n);
  }
  if ((v = json_object_get(body, "fval")) != NULL) {
    const char *f = json_string_value(json_object_get(v, "fval"));
    if (f == NULL) return fail(c, HS_ERR_INTERNAL, pos, "malformed numeric constant");
    lit->kind = HS_LIT_NUM;
    return lit_text(c, lit, f, strlen(f));
  }
  if ((v = json_object_get(body, "boolval")) != NULL) {
    lit->kind = HS_LIT_BOOL;
    lit->b = json_is_true(json_object_get(v, "boolval"));
    return HS_OK;
  }
  if ((v = json_object_get(body, "sval")) != NULL) {
    json_t *sv = json_object_get(v, "sval");
    const char *s = sv != NULL ? json_string_value(sv) : "";
    if (s == NULL) return fail(c, HS_ERR_INTERNAL, pos, "malformed string constant");
    lit->kind = HS_LIT_STR;
    return lit_text(c, lit, s, sv != NULL ? json_string_length(sv) : 0);
  }
  return fail(c, HS_ERR_UNSUPPORTED, pos, "unsupported constant (bit strings are not supported)");
}

/* Apply a cast written in the filter ('…'::date, CAST(x AS int8), DATE '…'). */
static hs_status apply_cast(const ctx *c, json_t *type_name, int32_t pos, hs_expr_lit *lit) {
  json_t *names = json_object_get(type_name, "names");
  size_t nn = json_array_size(names);
  const char *t = nn > 0 ? str_node(json_array_get(names, nn - 1)) : NULL;
  int32_t tpos = pos_of(c, type_name) > 0 ? pos_of(c, type_name) : pos;
  if (t == NULL || json_object_get(type_name, "arrayBounds") != NULL) {
    return fail(c, HS_ERR_UNSUPPORTED, tpos, "unsupported cast");
  }
  if (lit->kind == HS_LIT_NULL) return HS_OK;
  static const char *const nums[] = {"int2", "int4",    "int8",   "numeric",  "float4",  "float8",
                                     "int",  "integer", "bigint", "smallint", "decimal", "real"};
  for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
    if (strcmp(t, nums[k]) != 0) continue;
    if ((lit->kind != HS_LIT_NUM && lit->kind != HS_LIT_STR) ||
        !hs_expr_is_number(lit->text, lit->len)) {
      return fail(c, HS_ERR_INVALID_ARG, lit->pos, "invalid input for type %s", t);
    }
    lit->kind = HS_LIT_NUM;
    return HS_OK;
  }
  if (strcmp(t, "text") == 0 || strcmp(t, "varchar") == 0 || strcmp(t, "bpchar") == 0) {
    if (lit->kind == HS_LIT_NUM) lit->kind = HS_LIT_STR;
    if (lit->kind != HS_LIT_STR) return fail(c, HS_ERR_UNSUPPORTED, tpos, "unsupported cast");
    return HS_OK;
  }
  if (strcmp(t, "bool") == 0) {
    if (lit->kind == HS_LIT_BOOL) return HS_OK;
    bool b;
    if ((lit->kind != HS_LIT_STR && lit->kind != HS_LIT_NUM) ||
        !hs_expr_parse_bool(lit->text, lit->len, &b)) {
      return fail(c, HS_ERR_INVALID_ARG, lit->pos, "invalid input for type boolean");
    }
    lit->kind = HS_LIT_BOOL, lit->b = b;
    return HS_OK;
  }
  bool is_date = strcmp(t, "date") == 0;
  if (is_date || strcmp(t, "timestamp") == 0 || strcmp(t, "timestamptz") == 0) {
    if (lit->kind == HS_LIT_DATE || lit->kind == HS_LIT_TS) {
      if (is_date && lit->kind == HS_LIT_TS) {
        int64_t r = lit->secs % 86400;
        lit->secs -= r < 0 ? r + 86400 : r;
        lit->nanos = 0;
      }
      lit->kind = is_date ? HS_LIT_DATE : HS_LIT_TS;
      return HS_OK;
    }
    if (lit->kind != HS_LIT_STR) {
      return fail(c, HS_ERR_INVALID_ARG, lit->pos, "cannot cast %s to %s",
                  lit->kind == HS_LIT_NUM ? "a number" : "a boolean", t);
    }
    bool ok = is_date ? hs_expr_parse_date(lit->text, lit->len, &lit->secs)
                      : hs_expr_parse_timestamp(lit->text, lit->len, &lit->secs, &lit->nanos);
    if (!ok) {
      return fail(c, HS_ERR_INVALID_ARG, lit->pos, "invalid %s literal '%.*s'",
                  is_date ? "date" : "timestamp", (int)(lit->len > 64 ? 64 : lit->len), lit->text);
    }
    lit->kind = is_date ? HS_LIT_DATE : HS_LIT_TS;
    return HS_OK;
  }
  return fail(c, HS_ERR_UNSUPPORTED, tpos, "unsupported cast to type '%s'", t);
}

static hs_status column_ref(const ctx *c, json_t *body, int32_t pos, int64_t *field);

static hs_status operand_from_json(const ctx *c, json_t *n, operand *op, int depth) {
  memset(op, 0, sizeof(*op));
  json_t *body;
  const char *t = node_type(n, &body);
  op->pos = t != NULL ? pos_of(c, body) : 0;
  if (t == NULL) return fail(c, HS_ERR_INTERNAL, 0, "malformed parse tree");
  if (depth > HS_EXPR_DEPTH_MAX) return too_deep(c, op->pos);
  if (strcmp(t, "ColumnRef") == 0) {
    op->is_col = true;
    return column_ref(c, body, op->pos, &op->field);
  }
  if (strcmp(t, "A_Const") == 0) return const_from_json(c, body, op->pos, &op->lit);
  if (strcmp(t, "TypeCast") == 0) {
    hs_status st = operand_from_json(c, json_object_get(body, "arg"), op, depth + 1);
    if (st != HS_OK) return st;
    if (op->is_col) {
      return fail(c, HS_ERR_UNSUPPORTED, op->pos,
                  "casting a column is not supported; cast the literal instead");
    }
    return apply_cast(c, json_object_get(body, "typeName"), op->pos, &op->lit);
  }
  if (strcmp(t, "A_Expr") == 0) {
    /* Unary plus on a number (unary minus on constants is folded by the
     * grammar). */
    json_t *nm = json_object_get(body, "name");
    const char *o = json_array_size(nm) == 1 ? str_node(json_array_get(nm, 0)) : NULL;
    if (o != NULL && strcmp(o, "+") == 0 && json_object_get(body, "lexpr") == NULL) {
      hs_status st = operand_from_json(c, json_object_get(body, "rexpr"), op, depth + 1);
      if (st != HS_OK) return st;
      if (!op->is_col && op->lit.kind == HS_LIT_NUM) return HS_OK;
    }
    return fail(c, HS_ERR_UNSUPPORTED, op->pos, "arithmetic is not supported in filters");
  }
  if (strcmp(t, "FuncCall") == 0) {
    return fail(c, HS_ERR_UNSUPPORTED, op->pos, "function calls are not supported in filters");
  }
  if (strcmp(t, "SubLink") == 0) {
    return fail(c, HS_ERR_UNSUPPORTED, op->pos, "subqueries are not supported in filters");
  }
  return fail(c, HS_ERR_UNSUPPORTED, op->pos, "unsupported construct (%s) in a filter", t);
}

static hs_status column_ref(const ctx *c, json_t *body, int32_t pos, int64_t *field) {
  json_t *fields = json_object_get(body, "fields");
  const char *name = json_array_size(fields) == 1 ? str_node(json_array_get(fields, 0)) : NULL;
  if (name == NULL) {
    return fail(c, HS_ERR_UNSUPPORTED, pos,
                "only plain column names are supported (no qualified names or *)");
  }
  const struct ArrowSchema *s = c->schema;
  int64_t found = -1, ci = -1, ci_count = 0;
  for (int64_t i = 0; i < s->n_children; i++) {
    const char *fn = s->children[i]->name != NULL ? s->children[i]->name : "";
    if (strcmp(fn, name) == 0) {
      found = i;
      break;
    }
    if (strcasecmp(fn, name) == 0) ci = i, ci_count++;
  }
  /* PostgreSQL folds unquoted names to lower case; a unique
   * case-insensitive match lets `Age > 3` find column "Age". */
  if (found < 0 && ci_count == 1) found = ci;
  if (found < 0) {
    hs_buf b;
    hs_buf_init(&b);
    for (int64_t i = 0; i < s->n_children && b.len < 300; i++) {
      if (!hs_buf_printf(&b, "%s%s", i ? ", " : "",
                         s->children[i]->name != NULL ? s->children[i]->name : "")) {
        hs_buf_free(&b);
        return nomem(c);
      }
    }
    if (b.len >= 300 && !hs_buf_printf(&b, ", ...")) return hs_buf_free(&b), nomem(c);
    if (!hs_buf_append_byte(&b, 0)) return hs_buf_free(&b), nomem(c);
    hs_status st = fail(c, HS_ERR_INVALID_ARG, pos,
                        ci_count > 1 ? "ambiguous column '%s' (differs only in case); columns "
                                       "are: %s"
                                     : "unknown column '%s'; columns are: %s",
                        name, (const char *)b.data);
    hs_buf_free(&b);
    return st;
  }
  hs_expr_col *col = &c->e->cols[found];
  if (!col->bound) {
    char why[256];
    hs_status st = hs_expr_col_init(col, s->children[found], why, sizeof(why));
    if (st != HS_OK) return fail(c, st, pos, "%s", why);
  }
  *field = found;
  return HS_OK;
}

/* -------------------------------------------------------- predicates */

static hs_status bool_from_json(const ctx *c, json_t *n, hs_expr_node **out, int depth);

static hs_expr_node *const_node(const ctx *c, int tv, int32_t pos) {
  hs_expr_node *n = new_node(c, HS_N_CONST, pos);
  if (n != NULL) n->tv = tv;
  return n;
}

static const char *render_lit(const ctx *c, const hs_expr_lit *l) {
  char buf[96];
  switch (l->kind) {
  case HS_LIT_NUM: return hs_arena_strndup(&c->e->arena, l->text, l->len);
  case HS_LIT_STR: {
    hs_buf b;
    hs_buf_init(&b);
    bool ok = hs_buf_append_byte(&b, '\'');
    for (size_t i = 0; ok && i < l->len; i++) {
      ok = hs_buf_append_byte(&b, (uint8_t)l->text[i]);
      if (ok && l->text[i] == '\'') ok = hs_buf_append_byte(&b, '\'');
    }
    ok = ok && hs_buf_append_byte(&b, '\'');
    char *r = ok ? hs_arena_strndup(&c->e->arena, (const char *)b.data, b.len) : NULL;
    hs_buf_free(&b);
    return r;
  }
  case HS_LIT_BOOL: return l->b ? "TRUE" : "FALSE";
  case HS_LIT_DATE: snprintf(buf, sizeof(buf), "DATE(%lld)", (long long)(l->secs / 86400)); break;
  case HS_LIT_TS:
    snprintf(buf, sizeof(buf), "TIMESTAMP(%lld.%09d)", (long long)l->secs, (int)l->nanos);
    break;
  default: return "NULL";
  }
  return hs_arena_strndup(&c->e->arena, buf, strlen(buf));
}

/* column op literal (either side), to a CMP node or a constant. */
static hs_status compare(const ctx *c, json_t *lj, json_t *rj, hs_cmp_op op, int32_t pos,
                         hs_expr_node **out, int depth) {
  operand l, r;
  hs_status st = operand_from_json(c, lj, &l, depth + 1);
  if (st == HS_OK) st = operand_from_json(c, rj, &r, depth + 1);
  if (st != HS_OK) return st;
  if (l.is_col && r.is_col) {
    return fail(c, HS_ERR_UNSUPPORTED, pos, "comparing two columns is not supported yet");
  }
  if (!l.is_col && !r.is_col) {
    return fail(c, HS_ERR_UNSUPPORTED, pos, "a comparison needs a column on one side");
  }
  if (!l.is_col) {
    static const hs_cmp_op flip[] = {HS_CMP_EQ, HS_CMP_NE, HS_CMP_GT,
                                     HS_CMP_GE, HS_CMP_LT, HS_CMP_LE};
    operand t = l;
    l = r, r = t;
    op = flip[op];
  }
  hs_expr_node *n;
  if (r.lit.kind == HS_LIT_NULL) {
    n = const_node(c, -1, pos); /* anything compared with NULL is unknown */
  } else {
    n = new_node(c, HS_N_CMP, pos);
    if (n == NULL) return nomem(c);
    char why[256];
    st = hs_expr_bind_literal(&c->e->cols[l.field], &r.lit, &n->lit, why, sizeof(why));
    if (st != HS_OK) return fail(c, st, r.lit.pos > 0 ? r.lit.pos : pos, "%s", why);
    n->field = l.field, n->op = op;
    n->lit_text = render_lit(c, &r.lit);
  }
  if (n == NULL || (n->kind == HS_N_CMP && n->lit_text == NULL)) return nomem(c);
  *out = n;
  return HS_OK;
}

static hs_status parse_op(const ctx *c, const char *o, int32_t pos, hs_cmp_op *op) {
  static const struct {
    const char *s;
    hs_cmp_op op;
  } ops[] = {{"=", HS_CMP_EQ},  {"<>", HS_CMP_NE}, {"!=", HS_CMP_NE}, {"<", HS_CMP_LT},
             {"<=", HS_CMP_LE}, {">", HS_CMP_GT},  {">=", HS_CMP_GE}};
  for (size_t i = 0; o != NULL && i < sizeof(ops) / sizeof(ops[0]); i++) {
    if (strcmp(o, ops[i].s) == 0) return *op = ops[i].op, HS_OK;
  }
  return fail(c, HS_ERR_UNSUPPORTED, pos, "unsupported operator '%s'", o != NULL ? o : "?");
}

static hs_expr_node *combine(const ctx *c, hs_expr_node_kind k, int32_t pos, int n_kids) {
  hs_expr_node *n = new_node(c, k, pos);
  if (n == NULL) return NULL;
  n->kids = hs_arena_alloc(&c->e->arena, sizeof(hs_expr_node *) * (size_t)(n_kids ? n_kids : 1));
  if (n->kids == NULL) return NULL;
  n->n_kids = n_kids;
  return n;
}

static hs_status like_node(const ctx *c, json_t *body, int32_t pos, bool negated,
                           hs_expr_node **out, int depth) {
  operand l;
  hs_status st = operand_from_json(c, json_object_get(body, "lexpr"), &l, depth + 1);
  if (st != HS_OK) return st;
  if (!l.is_col) return fail(c, HS_ERR_UNSUPPORTED, pos, "LIKE needs a column on the left");
  json_t *rj = json_object_get(body, "rexpr"), *rb;
  const char *rt = node_type(rj, &rb);
  int escape = '\\';
  operand p;
  if (rt != NULL && strcmp(rt, "FuncCall") == 0) {
    /* x LIKE p ESCAPE e arrives as like_escape(p, e). */
    json_t *fname = json_object_get(rb, "funcname");
    const char *fn = str_node(json_array_get(fname, json_array_size(fname) - 1));
    json_t *args = json_object_get(rb, "args");
    if (fn == NULL || strcmp(fn, "like_escape") != 0 || json_array_size(args) != 2) {
      return fail(c, HS_ERR_UNSUPPORTED, pos_of(c, rb), "LIKE needs a literal pattern");
    }
    operand e;
    st = operand_from_json(c, json_array_get(args, 1), &e, depth + 1);
    if (st != HS_OK) return st;
    if (e.is_col || e.lit.kind != HS_LIT_STR || e.lit.len > 1) {
      return fail(c, HS_ERR_INVALID_ARG, e.pos, "invalid escape string (one character or '')");
    }
    escape = e.lit.len == 1 ? (uint8_t)e.lit.text[0] : -1;
    rj = json_array_get(args, 0);
  }
  st = operand_from_json(c, rj, &p, depth + 1);
  if (st != HS_OK) return st;
  if (p.is_col) return fail(c, HS_ERR_UNSUPPORTED, p.pos, "LIKE needs a literal pattern");
  if (p.lit.kind == HS_LIT_NULL) return (*out = const_node(c, -1, pos)) ? HS_OK : nomem(c);
  const hs_expr_col *col = &c->e->cols[l.field];
  if (col->dom != HS_DOM_BYTES) {
    return fail(c, HS_ERR_INVALID_ARG, l.pos, "LIKE needs a string column; '%s' is not one",
                col->name);
  }
  if (p.lit.kind != HS_LIT_STR) {
    return fail(c, HS_ERR_INVALID_ARG, p.pos, "type mismatch: a LIKE pattern must be a string");
  }
  for (size_t i = 0; i < p.lit.len; i++) {
    if (escape >= 0 && (uint8_t)p.lit.text[i] == escape) {
      if (i + 1 == p.lit.len) {
        return fail(c, HS_ERR_INVALID_ARG, p.pos,
                    "LIKE pattern must not end with escape character");
      }
      i++;
    }
  }
  hs_expr_node *n = new_node(c, HS_N_LIKE, pos);
  if (n == NULL) return nomem(c);
  n->field = l.field, n->negated = negated, n->escape = escape;
  n->pat = (const uint8_t *)p.lit.text, n->pat_len = p.lit.len;
  *out = n;
  return HS_OK;
}

/* column IN (items): one node, the literals bound once, sorted and
 * deduplicated (hs_expr_inlist_finish); a NULL item sets has_null. */
static hs_status in_node(const ctx *c, const operand *l, json_t *items, int32_t pos,
                         hs_expr_node **out, int depth) {
  size_t k = json_array_size(items);
  const hs_expr_col *col = &c->e->cols[l->field];
  hs_expr_node *n = new_node(c, HS_N_IN, pos);
  hs_expr_inlist *in = n != NULL ? hs_arena_alloc(&c->e->arena, sizeof *in) : NULL;
  if (in != NULL) in->vals = hs_arena_alloc(&c->e->arena, sizeof(hs_expr_inval) * k);
  if (in == NULL || in->vals == NULL) return nomem(c);
  n->field = l->field;
  n->in = in;
  for (size_t i = 0; i < k; i++) {
    operand r;
    hs_status st = operand_from_json(c, json_array_get(items, i), &r, depth + 1);
    if (st != HS_OK) return st;
    if (r.is_col) {
      return fail(c, HS_ERR_UNSUPPORTED, r.pos, "comparing two columns is not supported yet");
    }
    if (r.lit.kind == HS_LIT_NULL) {
      in->has_null = true;
      continue;
    }
    hs_expr_inval *v = &in->vals[in->n];
    char why[256];
    st = hs_expr_bind_literal(col, &r.lit, &v->b, why, sizeof(why));
    if (st != HS_OK) return fail(c, st, r.lit.pos > 0 ? r.lit.pos : pos, "%s", why);
    if (!hs_expr_lit_can_equal(col, &v->b)) continue;
    if ((v->text = render_lit(c, &r.lit)) == NULL) return nomem(c);
    in->n++;
  }
  if (!hs_expr_inlist_finish(&c->e->arena, col, in)) return nomem(c);
  *out = n;
  return HS_OK;
}

/* An OR whose every kid is `x = literal` or `x IN (...)` on one column x,
 * folded into one IN node (the same answer in three-valued logic: TRUE
 * where a kid is TRUE; else UNKNOWN where x is NULL or a kid's list had a
 * NULL; else FALSE). NULL when the OR is not of that shape. */
static hs_expr_node *fold_or(const ctx *c, hs_expr_node * or, bool *oom) {
  *oom = false;
  if (or->kind != HS_N_OR || or->n_kids < 2) return NULL;
  int64_t field = -1, total = 0;
  for (int i = 0; i < or->n_kids; i++) {
    const hs_expr_node *k = or->kids[i];
    bool eq = k->kind == HS_N_CMP && k->op == HS_CMP_EQ;
    if (!eq && k->kind != HS_N_IN) return NULL;
    if (field >= 0 && k->field != field) return NULL;
    field = k->field;
    total += eq ? 1 : k->in->n;
  }
  const hs_expr_col *col = &c->e->cols[field];
  hs_expr_node *n = new_node(c, HS_N_IN, or->pos);
  hs_expr_inlist *in = n != NULL ? hs_arena_alloc(&c->e->arena, sizeof *in) : NULL;
  if (in != NULL)
    in->vals = hs_arena_alloc(&c->e->arena, sizeof(hs_expr_inval) * (size_t)(total + 1));
  if (in == NULL || in->vals == NULL) return *oom = true, NULL;
  n->field = field;
  n->in = in;
  for (int i = 0; i < or->n_kids; i++) {
    const hs_expr_node *k = or->kids[i];
    if (k->kind == HS_N_IN) {
      memcpy(in->vals + in->n, k->in->vals, sizeof(hs_expr_inval) * (size_t)k->in->n);
      in->n += k->in->n;
      in->has_null |= k->in->has_null;
    } else if (hs_expr_lit_can_equal(col, &k->lit)) {
      in->vals[in->n++] = (hs_expr_inval){k->lit, k->lit_text};
    }
  }
  if (!hs_expr_inlist_finish(&c->e->arena, col, in)) return *oom = true, NULL;
  return n;
}

static hs_status a_expr(const ctx *c, json_t *body, int32_t pos, hs_expr_node **out, int depth) {
  const char *kind = json_string_value(json_object_get(body, "kind"));
  json_t *nm = json_object_get(body, "name");
  const char *o = json_array_size(nm) == 1 ? str_node(json_array_get(nm, 0)) : NULL;
  json_t *lj = json_object_get(body, "lexpr"), *rj = json_object_get(body, "rexpr");
  if (kind == NULL) return fail(c, HS_ERR_INTERNAL, pos, "malformed parse tree");
  hs_cmp_op op = HS_CMP_EQ;
  hs_status st;
  if (strcmp(kind, "AEXPR_OP") == 0) {
    if (lj == NULL || rj == NULL) {
      return fail(c, HS_ERR_UNSUPPORTED, pos, "unsupported operator '%s'", o ? o : "?");
    }
    if ((st = parse_op(c, o, pos, &op)) != HS_OK) return st;
    return compare(c, lj, rj, op, pos, out, depth);
  }
  if (strcmp(kind, "AEXPR_IN") == 0) {
    json_t *items = json_object_get(json_object_get(rj, "List"), "items");
    size_t k = json_array_size(items);
    if (k == 0) return fail(c, HS_ERR_UNSUPPORTED, pos, "unsupported IN list");
    if (k > HS_EXPR_IN_MAX) {
      return fail(c, HS_ERR_UNSUPPORTED, pos, "IN list of %zu values (limit %d)", k,
                  HS_EXPR_IN_MAX);
    }
    bool not_in = o != NULL && strcmp(o, "<>") == 0;
    operand l;
    if ((st = operand_from_json(c, lj, &l, depth + 1)) != HS_OK) return st;
    hs_expr_node *in = NULL;
    if (l.is_col) {
      st = in_node(c, &l, items, pos, &in, depth);
      if (st != HS_OK) return st;
    } else {
      /* literal IN (a, b): x = a OR x = b, exactly, in three-valued logic. */
      in = combine(c, HS_N_OR, pos, (int)k);
      if (in == NULL) return nomem(c);
      for (size_t i = 0; i < k; i++) {
        st = compare(c, lj, json_array_get(items, i), HS_CMP_EQ, pos, &in->kids[i], depth + 1);
        if (st != HS_OK) return st;
      }
    }
    if (not_in) { /* NOT IN is the negation of IN */
      hs_expr_node *not = combine(c, HS_N_NOT, pos, 1);
      if (not == NULL) return nomem(c);
      not ->kids[0] = in;
      in = not ;
    }
    *out = in;
    return HS_OK;
  }
  if (strcmp(kind, "AEXPR_BETWEEN") == 0 || strcmp(kind, "AEXPR_NOT_BETWEEN") == 0) {
    /* x BETWEEN a AND b == (x >= a AND x <= b); NOT BETWEEN negates. */
    json_t *items = json_object_get(json_object_get(rj, "List"), "items");
    if (json_array_size(items) != 2) return fail(c, HS_ERR_INTERNAL, pos, "malformed BETWEEN");
    hs_expr_node *and = combine(c, HS_N_AND, pos, 2);
    if (and == NULL) return nomem(c);
    st = compare(c, lj, json_array_get(items, 0), HS_CMP_GE, pos, &and->kids[0], depth + 1);
    if (st == HS_OK) {
      st = compare(c, lj, json_array_get(items, 1), HS_CMP_LE, pos, &and->kids[1], depth + 1);
    }
    if (st != HS_OK) return st;
    if (strcmp(kind, "AEXPR_NOT_BETWEEN") == 0) {
      hs_expr_node *not = combine(c, HS_N_NOT, pos, 1);
      if (not == NULL) return nomem(c);
      not ->kids[0] = and;
      and = not ;
    }
    *out = and;
    return HS_OK;
  }
  if (strcmp(kind, "AEXPR_LIKE") == 0) {
    return like_node(c, body, pos, o != NULL && strcmp(o, "!~~") == 0, out, depth);
  }
  if (strcmp(kind, "AEXPR_ILIKE") == 0) {
    return fail(c, HS_ERR_UNSUPPORTED, pos, "ILIKE is not supported yet");
  }
  if (strncmp(kind, "AEXPR_BETWEEN_SYM", 17) == 0 || strcmp(kind, "AEXPR_NOT_BETWEEN_SYM") == 0) {
    return fail(c, HS_ERR_UNSUPPORTED, pos, "BETWEEN SYMMETRIC is not supported");
  }
  return fail(c, HS_ERR_UNSUPPORTED, pos, "unsupported operator '%s'", o != NULL ? o : kind);
}

static hs_status bool_from_json(const ctx *c, json_t *n, hs_expr_node **out, int depth) {
  json_t *body;
  const char *t = node_type(n, &body);
  if (t == NULL) return fail(c, HS_ERR_INTERNAL, 0, "malformed parse tree");
  int32_t pos = pos_of(c, body);
  if (depth > HS_EXPR_DEPTH_MAX) return too_deep(c, pos);
  if (strcmp(t, "BoolExpr") == 0) {
    const char *bop = json_string_value(json_object_get(body, "boolop"));
    json_t *args = json_object_get(body, "args");
    size_t k = json_array_size(args);
    hs_expr_node_kind kind = HS_N_NOT;
    if (bop != NULL && strcmp(bop, "AND_EXPR") == 0)
      kind = HS_N_AND;
    else if (bop != NULL && strcmp(bop, "OR_EXPR") == 0)
      kind = HS_N_OR;
    else if (bop == NULL || strcmp(bop, "NOT_EXPR") != 0 || k != 1) {
      return fail(c, HS_ERR_INTERNAL, pos, "malformed boolean expression");
    }
    if (k == 0 || k > 1000000) return fail(c, HS_ERR_INTERNAL, pos, "malformed boolean expression");
    hs_expr_node *b = combine(c, kind, pos, (int)k);
    if (b == NULL) return nomem(c);
    for (size_t i = 0; i < k; i++) {
      hs_status st = bool_from_json(c, json_array_get(args, i), &b->kids[i], depth + 1);
      if (st != HS_OK) return st;
    }
    bool oom;
    hs_expr_node *folded = fold_or(c, b, &oom);
    if (oom) return nomem(c);
    *out = folded != NULL ? folded : b;
    return HS_OK;
  }
  if (strcmp(t, "A_Expr") == 0) return a_expr(c, body, pos, out, depth);
  if (strcmp(t, "NullTest") == 0) {
    operand a;
    hs_status st = operand_from_json(c, json_object_get(body, "arg"), &a, depth + 1);
    if (st != HS_OK) return st;
    const char *tt = json_string_value(json_object_get(body, "nulltesttype"));
    bool neg = tt != NULL && strcmp(tt, "IS_NOT_NULL") == 0;
    if (!a.is_col) {
      bool isnull = a.lit.kind == HS_LIT_NULL;
      return (*out = const_node(c, isnull != neg, pos)) ? HS_OK : nomem(c);
    }
    hs_expr_node *x = new_node(c, HS_N_ISNULL, pos);
    if (x == NULL) return nomem(c);
    x->field = a.field, x->negated = neg;
    *out = x;
    return HS_OK;
  }
  if (strcmp(t, "BooleanTest") == 0) {
    const char *tt = json_string_value(json_object_get(body, "booltesttype"));
    if (tt == NULL || strncmp(tt, "IS_", 3) != 0) {
      return fail(c, HS_ERR_INTERNAL, pos, "malformed boolean test");
    }
    hs_expr_node *x = combine(c, HS_N_BOOLTEST, pos, 1);
    if (x == NULL) return nomem(c);
    x->negated = strncmp(tt, "IS_NOT_", 7) == 0;
    const char *w = tt + (x->negated ? 7 : 3);
    x->which = strcmp(w, "TRUE") == 0 ? 1 : strcmp(w, "FALSE") == 0 ? 0 : -1;
    return bool_from_json(c, json_object_get(body, "arg"), &x->kids[0], depth + 1) == HS_OK
               ? (*out = x, HS_OK)
           : c->err != NULL ? c->err->status
                            : HS_ERR_INVALID_ARG;
  }
  if (strcmp(t, "ColumnRef") == 0 || strcmp(t, "A_Const") == 0 || strcmp(t, "TypeCast") == 0) {
    operand a;
    hs_status st = operand_from_json(c, n, &a, depth + 1);
    if (st != HS_OK) return st;
    if (a.is_col) {
      if (c->e->cols[a.field].dom != HS_DOM_BOOL) {
        return fail(c, HS_ERR_INVALID_ARG, pos,
                    "column '%s' is not boolean; a filter needs a condition here",
                    c->e->cols[a.field].name);
      }
      hs_expr_node *x = new_node(c, HS_N_CMP, pos);
      if (x == NULL) return nomem(c);
      x->field = a.field, x->op = HS_CMP_EQ, x->lit.b = true, x->lit_text = "TRUE";
      *out = x;
      return HS_OK;
    }
    if (a.lit.kind == HS_LIT_NULL) return (*out = const_node(c, -1, pos)) ? HS_OK : nomem(c);
    bool b;
    if (a.lit.kind == HS_LIT_BOOL)
      b = a.lit.b;
    else if (a.lit.kind != HS_LIT_STR || !hs_expr_parse_bool(a.lit.text, a.lit.len, &b)) {
      return fail(c, HS_ERR_INVALID_ARG, pos, "a filter must be a boolean condition");
    }
    return (*out = const_node(c, b, pos)) ? HS_OK : nomem(c);
  }
  return operand_from_json(c, n, &(operand){0}, depth + 1) != HS_OK
             ? (c->err != NULL ? c->err->status : HS_ERR_UNSUPPORTED)
             : fail(c, HS_ERR_UNSUPPORTED, pos, "a filter must be a boolean condition");
}

/* ---------------------------------------------------------------- entry */

static bool select_is_plain(json_t *sel) {
  const char *key;
  json_t *val;
  json_object_foreach(sel, key, val) {
    if (strcmp(key, "targetList") == 0 || strcmp(key, "whereClause") == 0) continue;
    if (strcmp(key, "op") == 0 && json_is_string(val) &&
        strcmp(json_string_value(val), "SETOP_NONE") == 0) {
      continue;
    }
    if (strcmp(key, "limitOption") == 0 && json_is_string(val) &&
        strcmp(json_string_value(val), "LIMIT_OPTION_DEFAULT") == 0) {
      continue;
    }
    return false;
  }
  return json_array_size(json_object_get(sel, "targetList")) == 1;
}

/* ------------------------------------------------------- parse trees
 *
 * A scan binds its filter once for the table and once per data file (each
 * file's schema), and a repeated query does it all again: the PostgreSQL
 * parse and the parse tree's JSON cost ~10x the binding. The JSON trees of
 * the last TREES_MAX filters that parsed are kept per process (read-only,
 * shared by reference count: jansson's counts are atomic). */
#define TREES_MAX 16

typedef struct tree_entry {
  char *filter;
  json_t *root;
  uint64_t used_at;
} tree_entry;

static pthread_mutex_t trees_mu = PTHREAD_MUTEX_INITIALIZER;
static tree_entry trees[TREES_MAX];
static uint64_t trees_tick;

static json_t *tree_take(const char *filter) {
  json_t *root = NULL;
  pthread_mutex_lock(&trees_mu);
  for (int i = 0; i < TREES_MAX && root == NULL; i++) {
    if (trees[i].root != NULL && strcmp(trees[i].filter, filter) == 0) {
      root = json_incref(trees[i].root);
      trees[i].used_at = ++trees_tick;
    }
  }
  pthread_mutex_unlock(&trees_mu);
  return root;
}

static void tree_put(const char *filter, json_t *root) {
  char *key = hs_strdup(filter);
  if (key == NULL) return;
  tree_entry old = {0};
  pthread_mutex_lock(&trees_mu);
  int slot = 0;
  for (int i = 0; i < TREES_MAX; i++) {
    if (trees[i].root == NULL) {
      slot = i;
      break;
    }
    if (trees[i].used_at < trees[slot].used_at) slot = i;
  }
  old = trees[slot];
  trees[slot] = (tree_entry){key, json_incref(root), ++trees_tick};
  pthread_mutex_unlock(&trees_mu);
  hs_free(old.filter);
  if (old.root != NULL) json_decref(old.root);
}

static hs_status parse_tree(ctx *c, json_t *root) {
  hs_status st = HS_OK;
  json_t *stmts = json_object_get(root, "stmts"), *sel = NULL, *where = NULL;
  if (json_array_size(stmts) != 1) {
    json_t *second = json_array_get(stmts, 1);
    json_int_t l = json_integer_value(json_object_get(second, "stmt_location"));
    int32_t pos = l > PREFIX_LEN ? (int32_t)(l - PREFIX_LEN) : 0;
    st = fail(c, HS_ERR_INVALID_ARG, pos, "a filter is one expression, not several statements");
    goto done;
  }
  json_t *stmt = json_object_get(json_array_get(stmts, 0), "stmt");
  sel = json_object_get(stmt, "SelectStmt");
  if (sel == NULL || json_object_size(stmt) != 1 || !select_is_plain(sel) ||
      (where = json_object_get(sel, "whereClause")) == NULL) {
    st = fail(c, HS_ERR_INVALID_ARG, 0,
              "a filter is a boolean expression only (no FROM, GROUP BY, ORDER BY, LIMIT, UNION)");
    goto done;
  }
  st = bool_from_json(c, where, &c->e->root, 0);
done:
  return st;
}

/* Height of the tree (root = 1); bounded by HS_EXPR_DEPTH_MAX plus the
 * two levels IN/BETWEEN add. */
static int height(const hs_expr_node *n) {
  int h = 0;
  for (int i = 0; i < n->n_kids; i++) {
    int k = height(n->kids[i]);
    if (k > h) h = k;
  }
  return h + 1;
}

hs_status hs_expr_parse(const char *filter, const struct ArrowSchema *schema, hs_expr **out,
                        int32_t *error_pos, hs_error *err) {
  if (error_pos != NULL) *error_pos = 0;
  if (out == NULL || filter == NULL || schema == NULL || schema->n_children < 0 ||
      (schema->n_children > 0 && schema->children == NULL)) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "filter: NULL argument or malformed schema");
  }
  *out = NULL;
  size_t flen = strlen(filter);
  if (flen > FILTER_BYTES_MAX) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "filter: longer than %u bytes", FILTER_BYTES_MAX);
  }
  hs_expr *e = hs_calloc(1, sizeof(*e));
  char *sql = hs_malloc(PREFIX_LEN + flen + 1);
  if (e != NULL) e->cols = hs_calloc((size_t)schema->n_children + 1, sizeof(hs_expr_col));
  if (e == NULL || sql == NULL || e->cols == NULL) {
    if (e != NULL) hs_free(e->cols);
    hs_free(e);
    hs_free(sql);
    return hs_error_set(err, HS_ERR_NOMEM, "filter: out of memory");
  }
  hs_arena_init(&e->arena);
  e->n_fields = schema->n_children;
  memcpy(sql, PREFIX, PREFIX_LEN);
  memcpy(sql + PREFIX_LEN, filter, flen + 1);
  ctx c = {e, schema, filter, sql, PREFIX_LEN + flen, err, error_pos};
  hs_status st = HS_OK;
  json_t *root = tree_take(filter);
  int32_t deep_at = root == NULL ? hs_expr_nesting_overflow(filter, flen) : 0;
  if (deep_at > 0) {
    st = too_deep(&c, deep_at);
  } else if (root == NULL) {
    PgQueryParseResult r = pg_query_parse(sql);
    if (r.error != NULL) {
      int32_t pos = r.error->cursorpos > PREFIX_LEN ? r.error->cursorpos - PREFIX_LEN : 0;
      if (pos > (int32_t)flen + 1) pos = (int32_t)flen + 1;
      const char *m = r.error->message != NULL ? r.error->message : "syntax error";
      /* The grammar's stack limit, should the bound above ever miss. */
      if (strcmp(m, "memory exhausted") == 0 || strstr(m, "stack depth limit") != NULL)
        st = too_deep(&c, pos);
      else
        st = fail(&c, HS_ERR_INVALID_ARG, pos, "%s", m);
    } else if (r.parse_tree == NULL) {
      st = fail(&c, HS_ERR_INTERNAL, 0, "no parse tree");
    } else {
      json_error_t jerr;
      root = json_loads(r.parse_tree, 0, &jerr);
      if (root == NULL && strstr(jerr.text, "depth") != NULL)
        st = too_deep(&c, 0);
      else if (root == NULL)
        st = fail(&c, HS_ERR_INTERNAL, 0, "cannot read the parse tree: %s", jerr.text);
      else
        tree_put(filter, root);
    }
    pg_query_free_parse_result(r);
  }
  if (root != NULL) {
    st = parse_tree(&c, root);
    json_decref(root);
  }
  hs_free(sql);
  if (st == HS_OK && e->root == NULL) st = fail(&c, HS_ERR_INTERNAL, 0, "empty expression");
  if (st == HS_OK) e->depth = height(e->root);
  if (st != HS_OK) {
    hs_expr_free(e);
    return st;
  }
  *out = e;
  return HS_OK;
}

void hs_expr_free(hs_expr *e) {
  if (e == NULL) return;
  hs_arena_reset(&e->arena);
  hs_free(e->cols);
  hs_free(e);
}

bool hs_expr_uses_field(const hs_expr *e, int64_t field_index) {
  return e != NULL && field_index >= 0 && field_index < e->n_fields && e->cols[field_index].bound;
}

/* ------------------------------------------------------------ rendering */

static bool render(const hs_expr *e, const hs_expr_node *n, hs_buf *b) {
  static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
  const char *name =
      n->kind == HS_N_CMP || n->kind == HS_N_ISNULL || n->kind == HS_N_LIKE || n->kind == HS_N_IN
          ? e->cols[n->field].name
          : "";
  switch (n->kind) {
  case HS_N_AND:
  case HS_N_OR:
    if (!hs_buf_append_byte(b, '(')) return false;
    for (int i = 0; i < n->n_kids; i++) {
      if (i && !hs_buf_printf(b, n->kind == HS_N_AND ? " AND " : " OR ")) return false;
      if (!render(e, n->kids[i], b)) return false;
    }
    return hs_buf_append_byte(b, ')');
  case HS_N_NOT: return hs_buf_printf(b, "NOT ") && render(e, n->kids[0], b);
  case HS_N_CMP: return hs_buf_printf(b, "%s %s %s", name, ops[n->op], n->lit_text);
  case HS_N_ISNULL: return hs_buf_printf(b, "%s IS %sNULL", name, n->negated ? "NOT " : "");
  case HS_N_LIKE:
    return hs_buf_printf(b, "%s %sLIKE '%.*s'", name, n->negated ? "NOT " : "", (int)n->pat_len,
                         (const char *)n->pat);
  case HS_N_IN:
    if (!hs_buf_printf(b, "%s IN (", name)) return false;
    for (int64_t i = 0; i < n->in->n; i++) {
      if (!hs_buf_printf(b, "%s%s", i ? ", " : "", n->in->vals[i].text)) return false;
    }
    return hs_buf_printf(b, "%s%s)", n->in->has_null && n->in->n ? ", " : "",
                         n->in->has_null ? "NULL" : "");
  case HS_N_CONST:
    return hs_buf_printf(b, "%s", n->tv > 0 ? "TRUE" : n->tv == 0 ? "FALSE" : "NULL");
  case HS_N_BOOLTEST:
    return hs_buf_append_byte(b, '(') && render(e, n->kids[0], b) &&
           hs_buf_printf(b, " IS %s%s)", n->negated ? "NOT " : "",
                         n->which > 0    ? "TRUE"
                         : n->which == 0 ? "FALSE"
                                         : "UNKNOWN");
  }
  return false;
}

hs_status hs_expr_to_string(const hs_expr *e, char **out, hs_error *err) {
  if (e == NULL || out == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "filter: NULL");
  hs_buf b;
  hs_buf_init(&b);
  if (!render(e, e->root, &b) || !hs_buf_append_byte(&b, 0)) {
    hs_buf_free(&b);
    return hs_error_set(err, HS_ERR_NOMEM, "filter: out of memory");
  }
  *out = (char *)hs_buf_detach(&b);
  return HS_OK;
}

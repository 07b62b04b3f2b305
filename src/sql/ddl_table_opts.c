/*
 * ddl_table_opts.c — CREATE TABLE's PARTITION BY and WITH (...) clauses as
 * the table's first version (hs_table_options):
 *
 *   PARTITION BY LIST | RANGE (a, day(ts), bucket(16, id), truncate(4, s), ...)
 *       each element an Iceberg partition field: a plain column is
 *       identity; year / month / day / hour (col), bucket(N, col),
 *       truncate(W, col), identity(col) and void(col) are those transforms
 *       (LIST and RANGE mean the same here: Iceberg partitions by value).
 *       HASH is refused (write bucket(N, col)).
 *   WITH (format_version = 3, "write.delete.mode" = 'copy-on-write', ...)
 *       format_version (or "format-version") picks the Iceberg format; any
 *       other option is a table property, its value as written.
 *
 * Transforms that do not fit their column (day of an integer, ...) are the
 * table layer's errors when it creates the table.
 */
#include <stdio.h>
#include <string.h>

#include "ddl.h"

static const char *jstr(json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

/* A ColumnRef of one name; NULL otherwise. */
static const char *column_name(json_t *e) {
  json_t *f = json_object_get(json_object_get(e, "ColumnRef"), "fields");
  if (json_array_size(f) != 1) return NULL;
  return jstr(json_object_get(json_array_get(f, 0), "String"), "sval");
}

/* An integer constant's value; -1 when `e` is not a positive one. */
static long long int_const(json_t *e) {
  json_t *c = json_object_get(e, "A_Const");
  json_t *iv = json_object_get(json_object_get(c, "ival"), "ival");
  if (c == NULL || json_object_get(c, "ival") == NULL) return -1;
  long long v = iv != NULL ? json_integer_value(iv) : 0;
  return v > 0 && v <= 1000000000 ? v : -1;
}

static hs_status partition_field(json_t *pe, hs_arena *A, hs_table_partition_field *f, int32_t *pos,
                                 hs_error *err) {
  memset(f, 0, sizeof *f);
  *pos = hs_sql_ddl_pos(pe);
  const char *name = jstr(pe, "name");
  if (name != NULL) {
    f->source = name;
    f->transform = "identity";
    return HS_OK;
  }
  json_t *fc = json_object_get(json_object_get(pe, "expr"), "FuncCall");
  json_t *fn = json_object_get(fc, "funcname");
  const char *fname = jstr(json_object_get(json_array_get(fn, 0), "String"), "sval");
  json_t *args = json_object_get(fc, "args");
  size_t na = json_array_size(args);
  static const char *const unary[] = {"identity", "year", "month", "day", "hour", "void"};
  for (size_t i = 0; fname != NULL && json_array_size(fn) == 1 && na == 1 && i < 6; i++)
    if (strcmp(fname, unary[i]) == 0 && (f->source = column_name(json_array_get(args, 0)))) {
      f->transform = unary[i];
      return HS_OK;
    }
  if (fname != NULL && na == 2 &&
      (strcmp(fname, "bucket") == 0 || strcmp(fname, "truncate") == 0)) {
    long long n = int_const(json_array_get(args, 0));
    f->source = column_name(json_array_get(args, 1));
    char buf[48];
    snprintf(buf, sizeof buf, "%s[%lld]", fname, n);
    f->transform = n > 0 && f->source != NULL ? hs_arena_strndup(A, buf, strlen(buf)) : NULL;
    if (f->transform != NULL) return HS_OK;
  }
  return hs_error_set(err, HS_ERR_UNSUPPORTED,
                      "at position %d: a partition is a column or one of identity / year / month "
                      "/ day / hour / void (col), bucket(N, col), truncate(W, col)",
                      *pos);
}

/* An option's value as text (in A). */
static const char *option_text(json_t *arg, hs_arena *A) {
  const char *t = NULL;
  char buf[64];
  json_t *v;
  if ((v = json_object_get(arg, "String")) != NULL) t = jstr(v, "sval");
  if ((v = json_object_get(arg, "Float")) != NULL) t = jstr(v, "fval");
  if ((v = json_object_get(arg, "Boolean")) != NULL)
    t = json_is_true(json_object_get(v, "boolval")) ? "true" : "false";
  if ((v = json_object_get(arg, "Integer")) != NULL) {
    snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(json_object_get(v, "ival")));
    t = buf;
  }
  if ((v = json_object_get(arg, "TypeName")) != NULL) /* a bare word: WITH (x = yes) */
    t = jstr(json_object_get(json_array_get(json_object_get(v, "names"), 0), "String"), "sval");
  return t != NULL ? hs_arena_strndup(A, t, strlen(t)) : NULL;
}

hs_status hs_sql_ddl_table_options(json_t *body, hs_arena *A, hs_table_options *o, int32_t *pos,
                                   hs_error *err) {
  hs_table_options_init(o);
  json_t *spec = json_object_get(body, "partspec");
  if (spec != NULL) {
    const char *strategy = jstr(spec, "strategy");
    *pos = hs_sql_ddl_pos(spec);
    if (strategy != NULL && strcmp(strategy, "hash") == 0)
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "at position %d: PARTITION BY HASH is not supported; write PARTITION "
                          "BY LIST (bucket(N, col)) for Iceberg's bucket transform",
                          *pos);
    json_t *params = json_object_get(spec, "partParams");
    size_t n = json_array_size(params);
    hs_table_partition_field *f = hs_arena_alloc(A, sizeof(*f) * (n ? n : 1));
    if (f == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
      json_t *pe = json_object_get(json_array_get(params, i), "PartitionElem");
      hs_status st = partition_field(pe, A, &f[i], pos, err);
      if (st != HS_OK) return st;
    }
    o->partition_fields = f;
    o->n_partition_fields = n;
  }
  json_t *opts = json_object_get(body, "options");
  size_t n = json_array_size(opts);
  const char **keys = hs_arena_alloc(A, sizeof(char *) * (n ? n : 1));
  const char **vals = hs_arena_alloc(A, sizeof(char *) * (n ? n : 1));
  if (keys == NULL || vals == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  size_t np = 0;
  for (size_t i = 0; i < n; i++) {
    json_t *d = json_object_get(json_array_get(opts, i), "DefElem");
    const char *key = jstr(d, "defname");
    const char *val = option_text(json_object_get(d, "arg"), A);
    *pos = hs_sql_ddl_pos(d);
    if (key == NULL || val == NULL || json_object_get(d, "defnamespace") != NULL)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "at position %d: a table option is name = value (a number, a string "
                          "or a word)",
                          *pos);
    if (strcmp(key, "format_version") == 0 || strcmp(key, "format-version") == 0) {
      if (strcmp(val, "2") != 0 && strcmp(val, "3") != 0)
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "at position %d: format_version is 2 or 3, not %s", *pos, val);
      o->format_version = val[0] - '0';
      continue;
    }
    keys[np] = key;
    vals[np++] = val;
  }
  o->property_keys = keys;
  o->property_values = vals;
  o->n_properties = np;
  *pos = 0;
  return HS_OK;
}

/*
 * types.c — names of the SQL layer's logical types (PostgreSQL's spelling
 * both ways), their Arrow formats, and the implicit-cast lattice that
 * operator resolution and branch unification (CASE, COALESCE, UNION) use.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "types.h"

#define VECTOR_DIM_MAX 16000         /* pgvector's limit for vector and halfvec */
#define SPARSEVEC_DIM_MAX 1000000000 /* pgvector's limit for sparsevec */
#define BIT_LEN_MAX 83886080         /* PostgreSQL's VARBITMAXLEN */

const char *hs_sql_type_name(hs_sql_type t, char *buf, size_t cap) {
  if (buf == NULL || cap == 0) return buf;
  const char *base = NULL;
  switch (t.id) {
  case HS_SQL_NULLTYPE: base = "unknown"; break;
  case HS_SQL_BOOL: base = "boolean"; break;
  case HS_SQL_INT32: base = "integer"; break;
  case HS_SQL_INT64: base = "bigint"; break;
  case HS_SQL_FLOAT64: base = t.a == 4 ? "real" : "double precision"; break;
  case HS_SQL_NUMERIC:
    if (t.a > 0) {
      snprintf(buf, cap, "numeric(%d,%d)", (int)t.a, (int)t.b);
      return buf;
    }
    base = "numeric";
    break;
  case HS_SQL_TEXT: base = "text"; break;
  case HS_SQL_BYTEA: base = "bytea"; break;
  case HS_SQL_DATE: base = "date"; break;
  case HS_SQL_TIMESTAMP: base = "timestamp without time zone"; break;
  case HS_SQL_TIMESTAMPTZ: base = "timestamp with time zone"; break;
  case HS_SQL_INTERVAL: base = "interval"; break;
  case HS_SQL_VECTOR: base = "vector"; break;
  case HS_SQL_HALFVEC: base = "halfvec"; break;
  case HS_SQL_SPARSEVEC: base = "sparsevec"; break;
  case HS_SQL_BIT: base = t.a > 0 ? "bit" : "bit varying"; break;
  default: base = "invalid type"; break;
  }
  bool dims = t.id == HS_SQL_VECTOR || t.id == HS_SQL_HALFVEC || t.id == HS_SQL_SPARSEVEC ||
              t.id == HS_SQL_BIT;
  if (dims && t.a > 0) {
    snprintf(buf, cap, "%s(%d)", base, (int)t.a);
  } else {
    snprintf(buf, cap, "%s", base);
  }
  return buf;
}

static bool fail(char *why, size_t why_len, const char *fmt, ...) HS_PRINTF(3, 4);
static bool fail(char *why, size_t why_len, const char *fmt, ...) {
  if (why != NULL && why_len > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
  }
  return false;
}

static bool name_is(const char *name, const char *const *names) {
  for (; *names != NULL; names++) {
    if (strcmp(name, *names) == 0) return true;
  }
  return false;
}

/* A dimension typmod of a pgvector type: 1..max; messages as pgvector's. */
static bool dim_mod(const char *type, const int32_t *mods, int n_mods, int32_t max,
                    hs_sql_type *out, char *why, size_t why_len) {
  if (n_mods > 1) return fail(why, why_len, "invalid type modifier");
  if (n_mods == 0 || mods[0] < 0) {
    out->a = 0;
    return true;
  }
  if (mods[0] < 1) return fail(why, why_len, "dimensions for type %s must be at least 1", type);
  if (mods[0] > max) {
    return fail(why, why_len, "dimensions for type %s cannot exceed %d", type, (int)max);
  }
  out->a = mods[0];
  return true;
}

bool hs_sql_type_from_name(const char *name, const int32_t *mods, int n_mods, hs_sql_type *out,
                           char *why, size_t why_len) {
  static const char *const bools[] = {"bool", "boolean", NULL};
  static const char *const int32s[] = {"int4", "int2", "integer", "int", "smallint", NULL};
  static const char *const int64s[] = {"int8", "bigint", NULL};
  static const char *const float8s[] = {"float8", "double precision", "float", NULL};
  static const char *const float4s[] = {"float4", "real", NULL};
  static const char *const numerics[] = {"numeric", "decimal", NULL};
  static const char *const texts[] = {"text", "varchar",           "bpchar",    "char",
                                      "name", "character varying", "character", NULL};
  static const char *const timestamps[] = {"timestamp", "timestamp without time zone", NULL};
  static const char *const timestamptzs[] = {"timestamptz", "timestamp with time zone", NULL};
  if (name == NULL || out == NULL) return fail(why, why_len, "type name missing");
  if (n_mods < 0 || (n_mods > 0 && mods == NULL)) return fail(why, why_len, "bad type modifiers");
  hs_sql_type t = {HS_SQL_NULLTYPE, 0, 0};
  bool no_mods = true; /* types that take no modifier */
  if (name_is(name, bools)) {
    t.id = HS_SQL_BOOL;
  } else if (name_is(name, int32s)) {
    t.id = HS_SQL_INT32;
  } else if (name_is(name, int64s)) {
    t.id = HS_SQL_INT64;
  } else if (name_is(name, float8s)) {
    t.id = HS_SQL_FLOAT64;
  } else if (name_is(name, float4s)) {
    t.id = HS_SQL_FLOAT64;
    t.a = 4;
  } else if (name_is(name, numerics)) {
    t.id = HS_SQL_NUMERIC;
    no_mods = false;
    if (n_mods > 2) return fail(why, why_len, "invalid NUMERIC type modifier");
    if (n_mods >= 1 && mods[0] >= 0) {
      int32_t p = mods[0], s = n_mods == 2 && mods[1] >= 0 ? mods[1] : 0;
      if (p < 1 || p > 38) {
        return fail(why, why_len, "NUMERIC precision %d must be between 1 and 38", (int)p);
      }
      if (s < 0 || s > p) {
        return fail(why, why_len, "NUMERIC scale %d must be between 0 and precision %d", (int)s,
                    (int)p);
      }
      t.a = p;
      t.b = s;
    } else {
      /* unconstrained numeric: a fixed numeric(38,10) (every value of a column has
       * one scale here; PostgreSQL keeps each value's own; DuckDB takes (18,3)) */
      t.a = 38;
      t.b = 10;
    }
  } else if (name_is(name, texts)) {
    t.id = HS_SQL_TEXT; /* length limits of varchar(n)/char(n) are not kept */
    no_mods = false;
  } else if (strcmp(name, "bytea") == 0) {
    t.id = HS_SQL_BYTEA;
  } else if (strcmp(name, "date") == 0) {
    t.id = HS_SQL_DATE;
  } else if (name_is(name, timestamps)) {
    t.id = HS_SQL_TIMESTAMP; /* precision typmods are accepted and ignored */
    no_mods = false;
  } else if (name_is(name, timestamptzs)) {
    t.id = HS_SQL_TIMESTAMPTZ;
    no_mods = false;
  } else if (strcmp(name, "interval") == 0) {
    /* a: the fields mask (INTERVAL '90' DAY: 8; cast.c reads it); precision ignored */
    t.id = HS_SQL_INTERVAL;
    no_mods = false;
    if (n_mods >= 1 && mods[0] > 0 && mods[0] < 0x7FFF) t.a = mods[0];
  } else if (strcmp(name, "vector") == 0) {
    t.id = HS_SQL_VECTOR;
    if (!dim_mod("vector", mods, n_mods, VECTOR_DIM_MAX, &t, why, why_len)) return false;
    no_mods = false;
  } else if (strcmp(name, "halfvec") == 0) {
    t.id = HS_SQL_HALFVEC;
    if (!dim_mod("halfvec", mods, n_mods, VECTOR_DIM_MAX, &t, why, why_len)) return false;
    no_mods = false;
  } else if (strcmp(name, "sparsevec") == 0) {
    t.id = HS_SQL_SPARSEVEC;
    if (!dim_mod("sparsevec", mods, n_mods, SPARSEVEC_DIM_MAX, &t, why, why_len)) return false;
    no_mods = false;
  } else if (strcmp(name, "bit") == 0) {
    /* PostgreSQL: bit without a length is bit(1). */
    t.id = HS_SQL_BIT;
    t.a = 1;
    no_mods = false;
    if (n_mods > 1) return fail(why, why_len, "invalid type modifier");
    if (n_mods == 1 && mods[0] >= 0) {
      if (mods[0] < 1) return fail(why, why_len, "length for type bit must be at least 1");
      if (mods[0] > BIT_LEN_MAX) {
        return fail(why, why_len, "length for type bit cannot exceed %d", BIT_LEN_MAX);
      }
      t.a = mods[0];
    }
  } else if (name_is(name, (const char *const[]){"varbit", "bit varying", NULL})) {
    t.id = HS_SQL_BIT; /* the length limit of varbit(n) is not kept */
    no_mods = false;
  } else {
    return fail(why, why_len, "type \"%s\" does not exist", name);
  }
  if (no_mods) {
    for (int i = 0; i < n_mods; i++) {
      if (mods[i] >= 0)
        return fail(why, why_len, "type modifier is not allowed for type \"%s\"", name);
    }
  }
  *out = t;
  return true;
}

bool hs_sql_type_from_arrow(const struct ArrowSchema *field, hs_sql_type *out, char *why,
                            size_t why_len) {
  if (field == NULL || field->format == NULL || out == NULL) {
    return fail(why, why_len, "arrow field without a format");
  }
  const char *fname = field->name != NULL ? field->name : "";
  if (field->dictionary != NULL) {
    hs_arrow_type idx;
    hs_error e = {0};
    if (hs_arrow_type_parse(field->format, &idx, &e) != HS_OK || idx.id < HS_AT_INT8 ||
        idx.id > HS_AT_UINT64) {
      return fail(why, why_len, "column \"%s\": dictionary index type '%s' is not an integer",
                  fname, field->format);
    }
    struct ArrowSchema d = *field->dictionary;
    if (d.dictionary != NULL) {
      return fail(why, why_len, "column \"%s\": nested dictionaries are not supported", fname);
    }
    d.name = field->name;
    return hs_sql_type_from_arrow(&d, out, why, why_len);
  }
  const char *f = field->format;
  hs_sql_type t = {HS_SQL_NULLTYPE, 0, 0};
  /* Formats hs_arrow_type_parse does not model. */
  if (strcmp(f, "tin") == 0 || strcmp(f, "tiM") == 0 || strcmp(f, "tiD") == 0) {
    t.id = HS_SQL_INTERVAL;
    *out = t;
    return true;
  }
  if (strcmp(f, "vu") == 0 || strcmp(f, "vz") == 0) {
    t.id = f[1] == 'u' ? HS_SQL_TEXT : HS_SQL_BYTEA;
    *out = t;
    return true;
  }
  hs_arrow_type at;
  hs_error e = {0};
  if (hs_arrow_type_parse(f, &at, &e) != HS_OK) {
    return fail(why, why_len, "column \"%s\": %s", fname, e.message);
  }
  switch (at.id) {
  case HS_AT_NA: t.id = HS_SQL_NULLTYPE; break;
  case HS_AT_BOOL: t.id = HS_SQL_BOOL; break;
  case HS_AT_INT8:
  case HS_AT_UINT8:
  case HS_AT_INT16:
  case HS_AT_UINT16:
  case HS_AT_INT32: t.id = HS_SQL_INT32; break;
  case HS_AT_UINT32:
  case HS_AT_INT64: t.id = HS_SQL_INT64; break;
  case HS_AT_UINT64: /* PostgreSQL has no unsigned 64-bit type: exact as numeric(20,0) */
    t.id = HS_SQL_NUMERIC;
    t.a = 20;
    break;
  case HS_AT_FLOAT16:
  case HS_AT_FLOAT32:
    t.id = HS_SQL_FLOAT64;
    t.a = 4;
    break;
  case HS_AT_FLOAT64: t.id = HS_SQL_FLOAT64; break;
  case HS_AT_STRING:
  case HS_AT_LARGE_STRING: t.id = HS_SQL_TEXT; break;
  case HS_AT_BINARY:
  case HS_AT_LARGE_BINARY:
  case HS_AT_FIXED_BINARY: t.id = HS_SQL_BYTEA; break;
  case HS_AT_DECIMAL128:
    if (at.scale < 0 || at.scale > at.precision) {
      return fail(why, why_len, "column \"%s\": decimal128(%d, %d) has a scale outside 0..%d",
                  fname, (int)at.precision, (int)at.scale, (int)at.precision);
    }
    t.id = HS_SQL_NUMERIC;
    t.a = at.precision;
    t.b = at.scale;
    break;
  case HS_AT_DATE32:
  case HS_AT_DATE64: t.id = HS_SQL_DATE; break;
  case HS_AT_TIMESTAMP:
    t.id = at.timezone != NULL && at.timezone[0] != '\0' ? HS_SQL_TIMESTAMPTZ : HS_SQL_TIMESTAMP;
    break;
  case HS_AT_DURATION: t.id = HS_SQL_INTERVAL; break;
  case HS_AT_FIXED_LIST: {
    const char *cf = field->n_children == 1 && field->children != NULL &&
                             field->children[0] != NULL && field->children[0]->format != NULL
                         ? field->children[0]->format
                         : "";
    if (field->children != NULL && field->n_children == 1 && field->children[0] != NULL &&
        field->children[0]->dictionary == NULL && strcmp(cf, "f") == 0) {
      t.id = HS_SQL_VECTOR;
    } else if (strcmp(cf, "e") == 0 && field->children[0]->dictionary == NULL) {
      t.id = HS_SQL_HALFVEC;
    } else {
      return fail(why, why_len,
                  "column \"%s\": fixed_size_list of '%s' is not supported (only "
                  "fixed_size_list<float32> reads as vector, <float16> as halfvec)",
                  fname, cf);
    }
    if (at.width < 1 || at.width > VECTOR_DIM_MAX) {
      return fail(why, why_len, "column \"%s\": vector dimension %d is outside 1..%d", fname,
                  (int)at.width, VECTOR_DIM_MAX);
    }
    t.a = at.width;
    break;
  }
  case HS_AT_LIST:
  case HS_AT_LARGE_LIST:
    return fail(why, why_len,
                "column \"%s\": list columns are not supported (a vector column must be a "
                "fixed_size_list<float32>)",
                fname);
  case HS_AT_TIME32:
  case HS_AT_TIME64:
    return fail(why, why_len, "column \"%s\": time of day columns are not supported", fname);
  default: return fail(why, why_len, "column \"%s\": Arrow type '%s' is not supported", fname, f);
  }
  *out = t;
  return true;
}

/* Formats with parameters are interned: built once, kept for the life of
 * the process (a handful of distinct numeric and vector types). */
typedef struct interned {
  struct interned *next;
  char s[];
} interned;
static interned *g_interned;
static pthread_mutex_t g_intern_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *intern(const char *s) {
  pthread_mutex_lock(&g_intern_lock);
  interned *p = g_interned;
  for (; p != NULL; p = p->next) {
    if (strcmp(p->s, s) == 0) break;
  }
  if (p == NULL) {
    size_t n = strlen(s) + 1;
    p = hs_malloc(sizeof *p + n);
    if (p != NULL) {
      memcpy(p->s, s, n);
      p->next = g_interned;
      g_interned = p;
    }
  }
  pthread_mutex_unlock(&g_intern_lock);
  return p != NULL ? p->s : NULL;
}

const char *hs_sql_type_arrow_format(hs_sql_type t) {
  char buf[32];
  switch (t.id) {
  case HS_SQL_NULLTYPE: return "n";
  case HS_SQL_BOOL: return "b";
  case HS_SQL_INT32: return "i";
  case HS_SQL_INT64: return "l";
  case HS_SQL_FLOAT64: return t.a == 4 ? "f" : "g";
  case HS_SQL_NUMERIC:
    /* Unconstrained numeric (a = 0) goes out with the widest precision. */
    snprintf(buf, sizeof buf, "d:%d,%d", (int)(t.a > 0 ? t.a : 38), (int)t.b);
    return intern(buf);
  case HS_SQL_TEXT: return "u";
  case HS_SQL_BYTEA: return "z";
  case HS_SQL_DATE: return "tdD";
  case HS_SQL_TIMESTAMP: return "tsu:";
  case HS_SQL_TIMESTAMPTZ: return "tsu:UTC";
  case HS_SQL_INTERVAL: return "tin";
  case HS_SQL_VECTOR:
  case HS_SQL_HALFVEC:
    snprintf(buf, sizeof buf, "+w:%d", (int)(t.a > 0 ? t.a : 0));
    return intern(buf);
  case HS_SQL_SPARSEVEC:
  case HS_SQL_BIT: return "u";
  default: return NULL;
  }
}

/* Rank in the numeric promotion chain INT32 -> INT64 -> NUMERIC -> FLOAT64. */
static int numeric_rank(hs_sql_tid id) {
  switch (id) {
  case HS_SQL_INT32: return 1;
  case HS_SQL_INT64: return 2;
  case HS_SQL_NUMERIC: return 3;
  case HS_SQL_FLOAT64: return 4;
  default: return 0;
  }
}

static int time_rank(hs_sql_tid id) {
  switch (id) {
  case HS_SQL_DATE: return 1;
  case HS_SQL_TIMESTAMP: return 2;
  case HS_SQL_TIMESTAMPTZ: return 3;
  default: return 0;
  }
}

/* Same type id where a dimension/length must agree unless one side is 0. */
static bool dims_agree(hs_sql_type x, hs_sql_type y) {
  return x.a == 0 || y.a == 0 || x.a == y.a;
}

bool hs_sql_type_implicit(hs_sql_type from, hs_sql_type to) {
  if (from.id == HS_SQL_NULLTYPE) return true;
  if (from.id == to.id) {
    switch (from.id) {
    case HS_SQL_VECTOR:
    case HS_SQL_HALFVEC:
    case HS_SQL_SPARSEVEC:
    case HS_SQL_BIT: return dims_agree(from, to);
    default: return true; /* numeric typmods, real/double, ... */
    }
  }
  int nf = numeric_rank(from.id), nt = numeric_rank(to.id);
  if (nf > 0 && nt > 0) return nf < nt;
  int tf = time_rank(from.id), tt = time_rank(to.id);
  if (tf > 0 && tt > 0) return tf < tt;
  return false;
}

/* NUMERIC typmod wide enough for both (integers as numeric(10,0)/(19,0)). */
static hs_sql_type numeric_of(hs_sql_type t) {
  hs_sql_type n = {HS_SQL_NUMERIC, 0, 0};
  if (t.id == HS_SQL_INT32) n.a = 10;
  if (t.id == HS_SQL_INT64) n.a = 19;
  if (t.id == HS_SQL_NUMERIC) n = t;
  return n;
}

static hs_sql_type numeric_union(hs_sql_type x, hs_sql_type y) {
  x = numeric_of(x);
  y = numeric_of(y);
  hs_sql_type n = {HS_SQL_NUMERIC, 0, 0};
  if (x.a == 0 || y.a == 0) return n; /* unconstrained */
  int32_t s = x.b > y.b ? x.b : y.b;
  int32_t ix = x.a - x.b, iy = y.a - y.b;
  int32_t p = (ix > iy ? ix : iy) + s;
  if (p > 38) p = 38;
  if (s > p) s = p;
  n.a = p;
  n.b = s;
  return n;
}

bool hs_sql_type_common(hs_sql_type x, hs_sql_type y, hs_sql_type *out) {
  if (x.id == HS_SQL_NULLTYPE) {
    *out = y;
    return true;
  }
  if (y.id == HS_SQL_NULLTYPE) {
    *out = x;
    return true;
  }
  if (x.id == y.id) {
    hs_sql_type t = x;
    switch (x.id) {
    case HS_SQL_FLOAT64: t.a = x.a == 4 && y.a == 4 ? 4 : 0; break;
    case HS_SQL_NUMERIC: t = numeric_union(x, y); break;
    case HS_SQL_VECTOR:
    case HS_SQL_HALFVEC:
    case HS_SQL_SPARSEVEC:
    case HS_SQL_BIT:
      /* Vectors of different dimensions have no common fixed-width layout. */
      if (!dims_agree(x, y)) return false;
      t.a = x.a != 0 ? x.a : y.a;
      break;
    default: break;
    }
    *out = t;
    return true;
  }
  int nx = numeric_rank(x.id), ny = numeric_rank(y.id);
  if (nx > 0 && ny > 0) {
    hs_sql_type hi = nx > ny ? x : y;
    if (hi.id == HS_SQL_NUMERIC) hi = numeric_union(x, y);
    /* A real with an integer or numeric stays real (PostgreSQL: int4, int8
     * and numeric cast implicitly to float4). */
    *out = hi;
    return true;
  }
  int tx = time_rank(x.id), ty = time_rank(y.id);
  if (tx > 0 && ty > 0) {
    *out = tx > ty ? x : y;
    return true;
  }
  return false;
}

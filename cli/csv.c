/*
 * csv.c — the CSV input of `hyperstream write` (table.c): a small RFC 4180
 * reader typed by the table schema. A header row names the columns; an
 * empty unquoted field is null, a quoted "" an empty string. Batches of
 * HS_CLI_CSV_BATCH rows (or HS_CLI_CSV_BATCH_BYTES of field text) stream
 * into the append, so memory stays bounded whatever the file's size; a
 * record (a line, or lines joined by a quoted field) longer than
 * HS_CLI_CSV_RECORD_MAX bytes is an error, so is a malformed field, naming
 * its line and column.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow.h"
#include "cli.h"

enum {
  HS_CLI_CSV_BATCH = 65536,
  /* One record's field bytes at most (an unterminated quote would otherwise
   * read the rest of the file into memory). */
  HS_CLI_CSV_RECORD_MAX = 64 << 20,
  /* A batch ends early once its fields hold this many bytes: with one record
   * more, a string column's int32 offsets (< 2^31) never overflow. */
  HS_CLI_CSV_BATCH_BYTES = 64 << 20
};

typedef enum csv_kind {
  CK_BOOL,
  CK_I32,
  CK_I64,
  CK_F32,
  CK_F64,
  CK_BYTES,
  CK_DATE,
  CK_TS_US,
  CK_TIME_US
} csv_kind;

typedef struct csv_col {
  csv_kind kind;
  const char *name;
  hs_buf values;  /* fixed-width values, or string bytes */
  hs_buf offsets; /* int32 offsets (strings) */
  hs_buf valid;   /* one byte per row, packed at batch end */
  int64_t nulls;
} csv_col;

typedef struct csv_field {
  size_t start, len;
  bool quoted;
} csv_field;

typedef struct csv_state {
  FILE *f;
  char *path;
  int64_t line; /* 1-based line of the record being parsed */
  int64_t bytes, rows;
  struct ArrowSchema schema; /* the table's schema: the output */
  size_t n_cols;
  csv_col *cols;
  size_t *col_of_field; /* header position -> table column */
  size_t n_fields;
  hs_buf rec;        /* bytes of the current record's fields */
  csv_field *fields; /* n_fields + 1 slots */
  hs_cli_progress *prog;
  hs_error error;
} csv_state;

static void csv_free(csv_state *s) {
  if (s == NULL) return;
  if (s->f != NULL) fclose(s->f);
  for (size_t i = 0; s->cols != NULL && i < s->n_cols; i++) {
    hs_buf_free(&s->cols[i].values);
    hs_buf_free(&s->cols[i].offsets);
    hs_buf_free(&s->cols[i].valid);
  }
  hs_free(s->cols);
  hs_free(s->col_of_field);
  hs_free(s->fields);
  hs_buf_free(&s->rec);
  hs_arrow_schema_release(&s->schema);
  hs_free(s->path);
  hs_free(s);
}

/* Read one record into s->rec / s->fields (at most `max` fields; more is an
 * error). Returns 1 with *n set, 0 at end of file, -1 on error. */
static int csv_record(csv_state *s, size_t max, size_t *n) {
  int c = getc(s->f);
  if (c == EOF) return 0;
  s->rec.len = 0;
  *n = 0;
  s->line++;
  const int64_t first_line = s->line;
  for (;;) {
    if (*n == max) {
      hs_error_set(&s->error, HS_ERR_SCHEMA, "%s:%lld: more than %zu fields", s->path,
                   (long long)s->line, max);
      return -1;
    }
    csv_field *fd = &s->fields[(*n)++];
    fd->start = s->rec.len;
    fd->quoted = false;
    if (c == '"') {
      fd->quoted = true;
      s->bytes++;
      for (;;) {
        c = getc(s->f);
        if (c == EOF) {
          hs_error_set(&s->error, HS_ERR_CORRUPT, "%s:%lld: unterminated quoted field", s->path,
                       (long long)s->line);
          return -1;
        }
        s->bytes++;
        if (c == '"') {
          c = getc(s->f);
          if (c != '"') break;
          s->bytes++;
        }
        if (c == '\n') s->line++;
        if (s->rec.len >= HS_CLI_CSV_RECORD_MAX) goto too_long;
        if (!hs_buf_append_byte(&s->rec, (uint8_t)c)) goto nomem;
      }
    } else {
      while (c != EOF && c != ',' && c != '\n') {
        s->bytes++;
        if (s->rec.len >= HS_CLI_CSV_RECORD_MAX) goto too_long;
        if (!hs_buf_append_byte(&s->rec, (uint8_t)c)) goto nomem;
        c = getc(s->f);
      }
    }
    fd->len = s->rec.len - fd->start;
    if (!fd->quoted && fd->len > 0 && s->rec.data[s->rec.len - 1] == '\r') fd->len--;
    if (c == ',') {
      s->bytes++;
      c = getc(s->f);
      continue;
    }
    if (c == '\r') { /* after a quoted field */
      s->bytes++;
      c = getc(s->f);
    }
    if (c == '\n' || c == EOF) {
      s->bytes += c == '\n';
      return 1;
    }
    hs_error_set(&s->error, HS_ERR_CORRUPT, "%s:%lld: text after a closing quote", s->path,
                 (long long)s->line);
    return -1;
  }
nomem:
  hs_error_set(&s->error, HS_ERR_NOMEM, "%s: out of memory", s->path);
  return -1;
too_long:
  hs_error_set(&s->error, HS_ERR_CORRUPT,
               "%s:%lld: record longer than %d bytes (the CSV record limit; an unterminated "
               "quoted field?)",
               s->path, (long long)first_line, (int)HS_CLI_CSV_RECORD_MAX);
  return -1;
}

/* "HH:MM:SS[.ffffff]" at *p -> microseconds; advances *p. */
static bool parse_time_us(const char **p, int64_t *out) {
  int h, mi, sec, used = 0;
  if (sscanf(*p, "%2d:%2d:%2d%n", &h, &mi, &sec, &used) != 3 || h > 23 || mi > 59 || sec > 60)
    return false;
  const char *q = *p + used;
  int64_t frac = 0, scale = 100000;
  if (*q == '.') {
    q++;
    if (*q < '0' || *q > '9') return false;
    for (; *q >= '0' && *q <= '9'; q++, scale /= 10) frac += scale > 0 ? (*q - '0') * scale : 0;
  }
  *out = ((int64_t)h * 3600 + mi * 60 + sec) * 1000000 + frac;
  *p = q;
  return true;
}

static bool parse_date(const char **p, int64_t *days) {
  int y, m, d, used = 0;
  if (sscanf(*p, "%4d-%2d-%2d%n", &y, &m, &d, &used) != 3 || used != 10 || m < 1 || m > 12 ||
      d < 1 || d > hs_civil_days_in_month(y, m))
    return false;
  *days = hs_days_from_civil(y, m, d);
  *p += used;
  return true;
}

/* Append the text `v` (NUL-terminated copy of one field) to column `c`. */
static bool csv_parse_value(csv_col *c, const char *v, size_t len) {
  char *end = NULL;
  errno = 0;
  switch (c->kind) {
  case CK_BOOL: {
    uint8_t b;
    if (strcasecmp(v, "true") == 0 || strcasecmp(v, "t") == 0 || strcmp(v, "1") == 0 ||
        strcasecmp(v, "yes") == 0)
      b = 1;
    else if (strcasecmp(v, "false") == 0 || strcasecmp(v, "f") == 0 || strcmp(v, "0") == 0 ||
             strcasecmp(v, "no") == 0)
      b = 0;
    else
      return false;
    return hs_buf_append_byte(&c->values, b);
  }
  case CK_I32:
  case CK_I64: {
    long long x = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0') return false;
    if (c->kind == CK_I64) return hs_buf_append(&c->values, &(int64_t){x}, 8);
    if (x < INT32_MIN || x > INT32_MAX) return false;
    return hs_buf_append(&c->values, &(int32_t){(int32_t)x}, 4);
  }
  case CK_F32:
  case CK_F64: {
    double x = strtod(v, &end);
    if (end == v || *end != '\0') return false;
    if (c->kind == CK_F64) return hs_buf_append(&c->values, &x, 8);
    return hs_buf_append(&c->values, &(float){(float)x}, 4);
  }
  case CK_BYTES: {
    int32_t off;
    if (c->values.len + len > INT32_MAX) return false;
    if (!hs_buf_append(&c->values, v, len)) return false;
    off = (int32_t)c->values.len;
    return hs_buf_append(&c->offsets, &off, 4);
  }
  case CK_DATE: {
    int64_t days;
    const char *p = v;
    if (!parse_date(&p, &days) || *p != '\0') return false;
    return hs_buf_append(&c->values, &(int32_t){(int32_t)days}, 4);
  }
  case CK_TIME_US: {
    int64_t us;
    const char *p = v;
    if (!parse_time_us(&p, &us) || *p != '\0') return false;
    return hs_buf_append(&c->values, &us, 8);
  }
  case CK_TS_US: {
    int64_t days, us = 0;
    const char *p = v;
    if (!parse_date(&p, &days)) return false;
    if (*p == 'T' || *p == ' ') {
      p++;
      if (!parse_time_us(&p, &us)) return false;
    }
    if (*p == 'Z') p++;
    if (*p != '\0') return false;
    int64_t ts = days * 86400000000LL + us;
    return hs_buf_append(&c->values, &ts, 8);
  }
  }
  return false;
}

static bool csv_append_null(csv_col *c) {
  static const uint8_t zero[8];
  c->nulls++;
  switch (c->kind) {
  case CK_BOOL: return hs_buf_append_byte(&c->values, 0);
  case CK_I32:
  case CK_F32:
  case CK_DATE: return hs_buf_append(&c->values, zero, 4);
  case CK_BYTES: {
    int32_t off = (int32_t)c->values.len;
    return hs_buf_append(&c->offsets, &off, 4);
  }
  default: return hs_buf_append(&c->values, zero, 8);
  }
}

/* Pack one byte per row into an Arrow bitmap (hs_malloc'd). */
static uint8_t *pack_bits(const uint8_t *bytes, int64_t n) {
  uint8_t *bits = hs_calloc((size_t)(n + 7) / 8 + 1, 1);
  if (bits == NULL) return NULL;
  for (int64_t i = 0; i < n; i++) bits[i >> 3] |= (uint8_t)((bytes[i] != 0) << (i & 7));
  return bits;
}

/* Move column `c`'s buffered rows into array `out` and reset it. */
static hs_status csv_col_finish(csv_col *c, int64_t n, struct ArrowArray *out, hs_error *err) {
  uint8_t *validity = NULL;
  int64_t nulls = c->nulls;
  if (nulls > 0 && (validity = pack_bits(c->valid.data, n)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "csv: out of memory");
  c->valid.len = 0;
  c->nulls = 0;
  hs_status st;
  if (c->kind == CK_BYTES) {
    void *offsets = hs_buf_detach(&c->offsets);
    void *data = hs_buf_detach(&c->values);
    if (data == NULL) data = hs_calloc(1, 1);
    st = hs_arrow_array_make_binary(out, n, offsets, data, validity, nulls, err);
    int32_t zero = 0;
    if (!hs_buf_append(&c->offsets, &zero, 4) && st == HS_OK)
      st = hs_error_set(err, HS_ERR_NOMEM, "csv: out of memory");
    return st;
  }
  if (c->kind == CK_BOOL) {
    uint8_t *bits = pack_bits(c->values.data, n);
    c->values.len = 0;
    if (bits == NULL) {
      hs_free(validity);
      return hs_error_set(err, HS_ERR_NOMEM, "csv: out of memory");
    }
    return hs_arrow_array_make_primitive(out, n, bits, validity, nulls, err);
  }
  void *values = hs_buf_detach(&c->values);
  if (values == NULL) values = hs_calloc(1, 8);
  return hs_arrow_array_make_primitive(out, n, values, validity, nulls, err);
}

static int csv_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
  csv_state *s = st->private_data;
  return hs_arrow_schema_copy(&s->schema, out, &s->error) == HS_OK ? 0 : ENOMEM;
}

static int csv_get_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
  csv_state *s = st->private_data;
  memset(out, 0, sizeof *out);
  if (s->error.status != HS_OK) return EIO;
  int64_t n = 0;
  size_t text = 0; /* field bytes buffered in this batch */
  char small[256];
  while (n < HS_CLI_CSV_BATCH && text < HS_CLI_CSV_BATCH_BYTES) {
    size_t nf = 0;
    int r = csv_record(s, s->n_fields, &nf);
    if (r < 0) return EIO;
    if (r == 0) break;
    if (nf == 1 && s->fields[0].len == 0 && !s->fields[0].quoted) continue; /* blank line */
    if (nf != s->n_fields) {
      hs_error_set(&s->error, HS_ERR_SCHEMA, "%s:%lld: %zu fields, the header has %zu", s->path,
                   (long long)s->line, nf, s->n_fields);
      return EIO;
    }
    for (size_t k = 0; k < nf; k++) {
      csv_col *c = &s->cols[s->col_of_field[k]];
      const csv_field *fd = &s->fields[k];
      bool is_null = fd->len == 0 && !fd->quoted && c->kind != CK_BYTES;
      if (c->kind == CK_BYTES) is_null = fd->len == 0 && !fd->quoted;
      bool ok;
      if (is_null) {
        ok = csv_append_null(c) && hs_buf_append_byte(&c->valid, 0);
      } else {
        char *v = fd->len < sizeof small ? small : hs_malloc(fd->len + 1);
        if (v == NULL) {
          hs_error_set(&s->error, HS_ERR_NOMEM, "%s: out of memory", s->path);
          return ENOMEM;
        }
        if (fd->len > 0) memcpy(v, s->rec.data + fd->start, fd->len);
        v[fd->len] = '\0';
        ok = csv_parse_value(c, v, fd->len);
        if (!ok) {
          hs_error_set(&s->error, HS_ERR_SCHEMA, "%s:%lld: column '%s': cannot read '%.60s' as %s",
                       s->path, (long long)s->line, c->name, v,
                       s->schema.children[s->col_of_field[k]]->format);
        }
        if (v != small) hs_free(v);
        if (!ok) return EIO;
        ok = hs_buf_append_byte(&c->valid, 1);
      }
      if (!ok) {
        hs_error_set(&s->error, HS_ERR_NOMEM, "%s: out of memory", s->path);
        return ENOMEM;
      }
    }
    text += s->rec.len;
    n++;
  }
  if (n == 0) return 0; /* end */
  s->rows += n;
  hs_cli_progress_draw(s->prog, s->bytes, s->rows, false);
  struct ArrowArray *children = hs_calloc(s->n_cols, sizeof *children);
  if (children == NULL) {
    hs_error_set(&s->error, HS_ERR_NOMEM, "%s: out of memory", s->path);
    return ENOMEM;
  }
  hs_status stt = HS_OK;
  for (size_t i = 0; i < s->n_cols && stt == HS_OK; i++)
    stt = csv_col_finish(&s->cols[i], n, &children[i], &s->error);
  if (stt == HS_OK) {
    stt = hs_arrow_array_make_struct(out, n, children, (int64_t)s->n_cols, NULL, 0, &s->error);
  } else {
    for (size_t i = 0; i < s->n_cols; i++) hs_arrow_array_release(&children[i]);
  }
  hs_free(children);
  return stt == HS_OK ? 0 : ENOMEM;
}

static const char *csv_get_error(struct ArrowArrayStream *st) {
  csv_state *s = st->private_data;
  return s->error.status != HS_OK ? s->error.message : NULL;
}

static void csv_release(struct ArrowArrayStream *st) {
  csv_free(st->private_data);
  st->release = NULL;
}

/* Open `path` (or read the open `file`, named `path` in messages) as a
 * stream of batches in the table's `schema` (moved in). */
hs_status hs_cli_csv_open(const char *path, FILE *file, struct ArrowSchema *schema,
                          hs_cli_progress *prog, struct ArrowArrayStream *out, hs_error *err) {
  csv_state *s = hs_calloc(1, sizeof *s);
  if (s == NULL) {
    if (file != NULL) fclose(file);
    schema->release(schema);
    return hs_error_set(err, HS_ERR_NOMEM, "csv: out of memory");
  }
  s->f = file;
  s->schema = *schema;
  schema->release = NULL;
  s->prog = prog;
  hs_status st = HS_OK;
  s->n_cols = (size_t)s->schema.n_children;
  if ((s->path = hs_strdup(path)) == NULL ||
      (s->cols = hs_calloc(s->n_cols + 1, sizeof *s->cols)) == NULL ||
      (s->fields = hs_calloc(s->n_cols + 2, sizeof *s->fields)) == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "csv: out of memory");
    goto fail;
  }
  for (size_t i = 0; i < s->n_cols; i++) {
    const struct ArrowSchema *f = s->schema.children[i];
    csv_col *c = &s->cols[i];
    c->name = f->name;
    const char *fm = f->format;
    if (strcmp(fm, "b") == 0)
      c->kind = CK_BOOL;
    else if (strcmp(fm, "i") == 0)
      c->kind = CK_I32;
    else if (strcmp(fm, "l") == 0)
      c->kind = CK_I64;
    else if (strcmp(fm, "f") == 0)
      c->kind = CK_F32;
    else if (strcmp(fm, "g") == 0)
      c->kind = CK_F64;
    else if (strcmp(fm, "u") == 0 || strcmp(fm, "z") == 0)
      c->kind = CK_BYTES;
    else if (strcmp(fm, "tdD") == 0)
      c->kind = CK_DATE;
    else if (strcmp(fm, "ttu") == 0)
      c->kind = CK_TIME_US;
    else if (strncmp(fm, "tsu:", 4) == 0)
      c->kind = CK_TS_US;
    else {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: column '%s' has Arrow type '%s', which CSV input does not support "
                        "(write it from Parquet instead)",
                        path, f->name, fm);
      goto fail;
    }
    int32_t zero = 0;
    if (c->kind == CK_BYTES && !hs_buf_append(&c->offsets, &zero, 4)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "csv: out of memory");
      goto fail;
    }
  }
  if (s->f == NULL && (s->f = fopen(path, "rb")) == NULL) {
    st = hs_error_set(err, errno == ENOENT ? HS_ERR_NOT_FOUND : HS_ERR_IO, "%s: %s", path,
                      strerror(errno));
    goto fail;
  }
  size_t nh = 0;
  int r = csv_record(s, s->n_cols + 1, &nh);
  if (r <= 0) {
    st = r == 0 ? hs_error_set(err, HS_ERR_SCHEMA, "%s: empty file: no header row", path)
                : hs_error_set(err, s->error.status, "%s", s->error.message);
    goto fail;
  }
  s->n_fields = nh;
  if ((s->col_of_field = hs_calloc(nh + 1, sizeof *s->col_of_field)) == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "csv: out of memory");
    goto fail;
  }
  bool *seen = hs_calloc(s->n_cols + 1, sizeof *seen);
  if (seen == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "csv: out of memory");
    goto fail;
  }
  for (size_t k = 0; k < nh; k++) {
    size_t len = s->fields[k].len, i;
    const char *name = len > 0 ? (const char *)s->rec.data + s->fields[k].start : "";
    for (i = 0; i < s->n_cols; i++) {
      const char *cn = s->schema.children[i]->name;
      if (strlen(cn) == len && memcmp(cn, name, len) == 0) break;
    }
    if (i == s->n_cols || seen[i]) {
      hs_free(seen);
      st =
          hs_error_set(err, HS_ERR_SCHEMA, "%s: header column %zu '%.*s' is %s the table", path,
                       k + 1, (int)len, name, i == s->n_cols ? "not a column of" : "repeated; see");
      goto fail;
    }
    seen[i] = true;
    s->col_of_field[k] = i;
  }
  hs_free(seen);
  if (nh != s->n_cols) {
    st = hs_error_set(err, HS_ERR_SCHEMA, "%s: the header has %zu columns, the table %zu", path, nh,
                      s->n_cols);
    goto fail;
  }
  out->get_schema = csv_get_schema;
  out->get_next = csv_get_next;
  out->get_last_error = csv_get_error;
  out->release = csv_release;
  out->private_data = s;
  return HS_OK;
fail:
  csv_free(s);
  return st;
}

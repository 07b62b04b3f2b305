/*
 * read.c — `hyperstream read FILE [--columns a,b] [--limit N] [--count]`:
 * decode a Parquet file through the public reader and print its first rows
 * as an aligned table, or only the row count.
 *
 * Every batch of the file is decoded even when only a few rows are shown,
 * so `read --count` under ASan/UBSan exercises the whole reader on a file;
 * the test suite runs it over the conformance corpus.
 */
#include <string.h>

#include "arrow/arrow.h"
#include "cli.h"

enum { HS_CLI_CELL_WIDTH_MAX = 40, HS_CLI_DEFAULT_LIMIT = 20 };

typedef struct hs_cli_table {
  int64_t n_cols;
  char **cells; /* row-major, n_rows * n_cols owned strings */
  int64_t n_rows;
  int64_t cap_rows;
} hs_cli_table;

static void table_free(hs_cli_table *t) {
  for (int64_t k = 0; k < t->n_rows * t->n_cols; k++) hs_free(t->cells[k]);
  hs_free(t->cells);
}

/* Display width of UTF-8 text: one column per code point. */
static size_t display_width(const char *s) {
  size_t w = 0;
  for (; *s != '\0'; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
  return w;
}

/* Print `s` in `width` columns, truncating with "…" and padding (no
 * trailing padding in the last column). */
static void print_cell(const char *s, size_t width, bool right, bool last) {
  size_t w = display_width(s);
  if (w > width) {
    size_t cols = 0;
    const char *p = s;
    while (*p != '\0') {
      bool start = ((unsigned char)*p & 0xC0) != 0x80;
      if (start && cols == width - 1) break;
      cols += start;
      fputc(*p++, stdout);
    }
    fputs("…", stdout);
    return;
  }
  if (right) printf("%*s", (int)(width - w), "");
  fputs(s, stdout);
  if (!right && !last) printf("%*s", (int)(width - w), "");
}

static const char *type_label(const char *f, char *buf, size_t cap) {
  static const struct {
    const char *format;
    const char *label;
  } names[] = {{"n", "null"},       {"b", "bool"},       {"c", "int8"},      {"C", "uint8"},
               {"s", "int16"},      {"S", "uint16"},     {"i", "int32"},     {"I", "uint32"},
               {"l", "int64"},      {"L", "uint64"},     {"e", "float16"},   {"f", "float"},
               {"g", "double"},     {"z", "binary"},     {"Z", "lbinary"},   {"u", "string"},
               {"U", "lstring"},    {"tdD", "date32"},   {"tdm", "date64"},  {"+l", "list"},
               {"+L", "llist"},     {"+s", "struct"},    {"+m", "map"},      {"tts", "time[s]"},
               {"ttm", "time[ms]"}, {"ttu", "time[us]"}, {"ttn", "time[ns]"}};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    if (strcmp(f, names[k].format) == 0) return names[k].label;
  }
  if (strncmp(f, "ts", 2) == 0 && f[2] != '\0') {
    snprintf(buf, cap, "timestamp[%s]",
             f[2] == 's'   ? "s"
             : f[2] == 'm' ? "ms"
             : f[2] == 'u' ? "us"
                           : "ns");
    return buf;
  }
  if (strncmp(f, "+w:", 3) == 0) {
    snprintf(buf, cap, "list[%s]", f + 3);
    return buf;
  }
  if (strncmp(f, "d:", 2) == 0) {
    snprintf(buf, cap, "decimal(%s)", f + 2);
    return buf;
  }
  return f;
}

static bool is_numeric(const struct ArrowSchema *s) {
  const char *f = s->format;
  if (s->dictionary != NULL) return false;
  return (f[0] != '\0' && f[1] == '\0' && strchr("cCsSiIlLefg", f[0]) != NULL) ||
         strncmp(f, "d:", 2) == 0;
}

static void print_table(const struct ArrowSchema *schema, const hs_cli_table *t, int64_t total) {
  size_t *width = hs_calloc((size_t)t->n_cols + 1, sizeof(size_t));
  char tbuf[64];
  if (width == NULL) return;
  for (int64_t c = 0; c < t->n_cols; c++) {
    const struct ArrowSchema *f = schema->children[c];
    width[c] = display_width(f->name ? f->name : "");
    size_t tw = display_width(type_label(f->format, tbuf, sizeof tbuf));
    if (tw > width[c]) width[c] = tw;
    for (int64_t r = 0; r < t->n_rows; r++) {
      size_t w = display_width(t->cells[r * t->n_cols + c]);
      if (w > width[c]) width[c] = w;
    }
    if (width[c] > HS_CLI_CELL_WIDTH_MAX) width[c] = HS_CLI_CELL_WIDTH_MAX;
  }
  for (int line = 0; line < 2; line++) {
    for (int64_t c = 0; c < t->n_cols; c++) {
      const struct ArrowSchema *f = schema->children[c];
      fputs(c == 0 ? "" : " | ", stdout);
      print_cell(line == 0 ? (f->name ? f->name : "") : type_label(f->format, tbuf, sizeof tbuf),
                 width[c], false, c == t->n_cols - 1);
    }
    fputc('\n', stdout);
  }
  for (int64_t c = 0; c < t->n_cols; c++) {
    fputs(c == 0 ? "" : "-+-", stdout);
    for (size_t k = 0; k < width[c]; k++) fputc('-', stdout);
  }
  fputc('\n', stdout);
  for (int64_t r = 0; r < t->n_rows; r++) {
    for (int64_t c = 0; c < t->n_cols; c++) {
      fputs(c == 0 ? "" : " | ", stdout);
      bool last = c == t->n_cols - 1;
      print_cell(t->cells[r * t->n_cols + c], width[c], is_numeric(schema->children[c]), last);
    }
    fputc('\n', stdout);
  }
  char a[32], b[32];
  if (t->n_rows < total) {
    printf("(showing %s of %s rows)\n", hs_cli_group(t->n_rows, a, sizeof a),
           hs_cli_group(total, b, sizeof b));
  } else {
    printf("(%s row%s)\n", hs_cli_group(total, a, sizeof a), total == 1 ? "" : "s");
  }
  hs_free(width);
}

/* Format rows [0, n) of `batch` into the table. */
static bool collect_rows(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                         int64_t n, hs_cli_table *t) {
  if (t->n_rows + n > t->cap_rows) {
    int64_t cap = t->cap_rows ? t->cap_rows : 16;
    while (cap < t->n_rows + n) cap *= 2;
    size_t bytes;
    if (!hs_mul_size((size_t)cap * (size_t)(t->n_cols ? t->n_cols : 1), sizeof(char *), &bytes))
      return false;
    char **grown = hs_realloc(t->cells, bytes);
    if (grown == NULL) return false;
    t->cells = grown;
    t->cap_rows = cap;
  }
  for (int64_t r = 0; r < n; r++) {
    for (int64_t c = 0; c < t->n_cols; c++) {
      hs_buf b;
      hs_buf_init(&b);
      if (!hs_cli_format_value(schema->children[c], batch->children[c], r, &b) ||
          !hs_buf_append_byte(&b, 0)) {
        hs_buf_free(&b);
        for (int64_t k = 0; k < c; k++) hs_free(t->cells[t->n_rows * t->n_cols + k]);
        return false;
      }
      t->cells[t->n_rows * t->n_cols + c] = (char *)hs_buf_detach(&b);
    }
    t->n_rows++;
  }
  return true;
}

/* Split "a,b,c" into a NULL-terminated array of owned names. */
static char **split_columns(const char *list, size_t *n_out) {
  size_t n = 1;
  for (const char *p = list; *p; p++) n += *p == ',';
  char **cols = hs_calloc(n + 1, sizeof(char *));
  if (cols == NULL) return NULL;
  size_t k = 0;
  const char *start = list;
  for (const char *p = list;; p++) {
    if (*p == ',' || *p == '\0') {
      if (p > start && (cols[k] = hs_strndup(start, (size_t)(p - start))) != NULL) k++;
      if (*p == '\0') break;
      start = p + 1;
    }
  }
  *n_out = k;
  return cols;
}

static void free_columns(char **cols, size_t n) {
  for (size_t k = 0; k < n; k++) hs_free(cols[k]);
  hs_free(cols);
}

static int read_file(const char *path, char **cols, size_t n_cols, int64_t limit, bool count_only) {
  hs_parquet_reader *reader = NULL;
  hs_error err = {0};
  struct ArrowArrayStream stream = {0};
  struct ArrowSchema schema = {0};
  hs_cli_table table = {0};
  int rc = HS_CLI_FAILED;
  hs_parquet_read_options opts;
  hs_parquet_read_options_init(&opts);
  opts.columns = (const char *const *)cols;
  opts.n_columns = n_cols;
  if (hs_parquet_reader_open(path, &reader, &err) != HS_OK ||
      hs_parquet_reader_stream(reader, &opts, &stream, &err) != HS_OK) {
    rc = strstr(err.message, path) ? hs_cli_fail("%s", err.message)
                                   : hs_cli_fail("%s: %s", path, err.message);
    goto done;
  }
  int e = stream.get_schema(&stream, &schema);
  if (e != 0) {
    const char *msg = stream.get_last_error(&stream);
    rc = hs_cli_fail("%s: reading schema: %s", path, msg ? msg : strerror(e));
    goto done;
  }
  table.n_cols = schema.n_children;
  int64_t total = 0;
  for (;;) {
    struct ArrowArray batch = {0};
    e = stream.get_next(&stream, &batch);
    if (e != 0) {
      const char *msg = stream.get_last_error(&stream);
      rc = hs_cli_fail("%s: after %lld rows: %s", path, (long long)total, msg ? msg : strerror(e));
      goto done;
    }
    if (batch.release == NULL) break; /* end of stream */
    if (batch.n_children != schema.n_children || batch.length < 0) {
      batch.release(&batch);
      rc = hs_cli_fail("%s: the reader returned a batch that does not match its schema", path);
      goto done;
    }
    int64_t want = count_only ? 0 : limit - table.n_rows;
    if (want > batch.length) want = batch.length;
    if (want > 0 && !collect_rows(&schema, &batch, want, &table)) {
      batch.release(&batch);
      rc = hs_cli_fail("out of memory while formatting rows");
      goto done;
    }
    total += batch.length;
    batch.release(&batch);
  }
  if (count_only) {
    printf("%lld\n", (long long)total);
  } else {
    print_table(&schema, &table, total);
  }
  rc = fflush(stdout) == 0 ? HS_CLI_OK : hs_cli_fail("writing to stdout failed");
done:
  table_free(&table);
  if (schema.release != NULL) schema.release(&schema);
  if (stream.release != NULL) stream.release(&stream);
  hs_parquet_reader_free(reader);
  return rc;
}

int hs_cli_read(int argc, char **argv) {
  const char *path = NULL, *columns = NULL;
  int64_t limit = HS_CLI_DEFAULT_LIMIT;
  bool count_only = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--count") == 0) {
      count_only = true;
    } else if (strcmp(a, "--columns") == 0 || strcmp(a, "-c") == 0) {
      if (++i >= argc) return hs_cli_usage_error("read: %s needs a value (e.g. a,b)", a);
      columns = argv[i];
    } else if (strncmp(a, "--columns=", 10) == 0) {
      columns = a + 10;
    } else if (strcmp(a, "--limit") == 0 || strcmp(a, "-n") == 0) {
      if (++i >= argc || !hs_cli_parse_count(argv[i], &limit))
        return hs_cli_usage_error("read: %s needs a non-negative number", a);
    } else if (strncmp(a, "--limit=", 8) == 0) {
      if (!hs_cli_parse_count(a + 8, &limit))
        return hs_cli_usage_error("read: --limit needs a non-negative number");
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs("Usage: hyperstream read FILE.parquet [--columns a,b] [--limit N] [--count]\n", stdout);
      return HS_CLI_OK;
    } else if (a[0] == '-' && a[1] != '\0') {
      return hs_cli_usage_error("read: unknown option '%s'", a);
    } else if (path == NULL) {
      path = a;
    } else {
      return hs_cli_usage_error("read: expected one file, got '%s' and '%s'", path, a);
    }
  }
  if (path == NULL) return hs_cli_usage_error("read: missing FILE.parquet");
  char **cols = NULL;
  size_t n_cols = 0;
  if (columns != NULL) {
    cols = split_columns(columns, &n_cols);
    if (cols == NULL) return hs_cli_fail("out of memory");
    if (n_cols == 0) {
      free_columns(cols, n_cols);
      return hs_cli_usage_error("read: --columns needs at least one column name");
    }
  }
  int rc = read_file(path, cols, n_cols, limit, count_only);
  free_columns(cols, n_cols);
  return rc;
}

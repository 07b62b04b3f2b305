/*
 * table.c — the table subcommands of `hyperstream`:
 *
 *   create TABLE --schema 'id:int64,name:string' | --like FILE.parquet [--format-version 3]
 *   write TABLE FILE.parquet|FILE.csv     (one atomic append; progress bar on a terminal)
 *   scan TABLE [--filter SQL] [--columns a,b] [--limit N] [--snapshot ID] [--csv]
 *   snapshots TABLE
 *   inspect TABLE                         (a folder; `inspect FILE.parquet` stays in main.c)
 *
 * Everything goes through the public table API except `inspect`, which also
 * parses the loaded metadata file to show partition specs, sort orders and
 * properties. CSV input is parsed by csv.c (typed by the table schema,
 * streamed in bounded batches).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "cli.h"
#include "iceberg/iceberg.h"
#include "io/store.h"

int hs_cli_create(int argc, char **argv);
int hs_cli_write(int argc, char **argv);
int hs_cli_scan(int argc, char **argv);
int hs_cli_snapshots(int argc, char **argv);
int hs_cli_inspect_table(const char *path, int json);
bool hs_cli_is_table(const char *path);

enum { HS_CLI_SCAN_DEFAULT_LIMIT = 20 };

/* Print an error naming `what` unless the message already does. */
static int fail_err(const char *what, const hs_error *err) {
  if (strstr(err->message, what) != NULL) return hs_cli_fail("%s", err->message);
  return hs_cli_fail("%s: %s", what, err->message);
}

bool hs_cli_is_catalog_uri(const char *s);

/* A table folder, or a table URI (s3://, a REST catalog's rest://...#ns.t). */
bool hs_cli_is_table(const char *path) {
  if (strncmp(path, "s3://", 5) == 0 || (hs_cli_is_catalog_uri(path) && strchr(path, '#')))
    return true;
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ------------------------------------------------------------- create */

static const struct {
  const char *name;
  const char *format;
} hs_cli_types[] = {
    {"bool", "b"},    {"boolean", "b"}, {"int", "i"},          {"int32", "i"},
    {"integer", "i"}, {"long", "l"},    {"int64", "l"},        {"float", "f"},
    {"float32", "f"}, {"double", "g"},  {"float64", "g"},      {"string", "u"},
    {"binary", "z"},  {"date", "tdD"},  {"timestamp", "tsu:"}, {"timestamptz", "tsu:UTC"},
    {"time", "ttu"},  {"uuid", "w:16"},
};

/* Parse "name:type[!]" items separated by commas into a struct schema.
 * "!" marks a required (non-nullable) column. */
static hs_status parse_schema(const char *spec, struct ArrowSchema *out, hs_error *err) {
  size_t n = 1;
  for (const char *p = spec; *p; p++) n += *p == ',';
  hs_status st = hs_arrow_schema_init(out, "+s", "", 0, (int64_t)n, err);
  if (st != HS_OK) return st;
  const char *p = spec;
  for (size_t i = 0; i < n; i++) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char item[256];
    if (len == 0 || len >= sizeof item) {
      return hs_error_set(err, HS_ERR_INVALID_ARG, "--schema: item %zu is empty or too long",
                          i + 1);
    }
    memcpy(item, p, len);
    item[len] = '\0';
    char *colon = strchr(item, ':');
    if (colon == NULL || colon == item) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "--schema: '%s' is not name:type (e.g. id:int64)", item);
    }
    *colon = '\0';
    char *type = colon + 1;
    size_t tl = strlen(type);
    int64_t flags = ARROW_FLAG_NULLABLE;
    if (tl > 0 && type[tl - 1] == '!') {
      type[--tl] = '\0';
      flags = 0;
    }
    const char *format = NULL;
    char dec[64];
    int prec, scale;
    for (size_t k = 0; k < sizeof hs_cli_types / sizeof hs_cli_types[0]; k++) {
      if (strcmp(type, hs_cli_types[k].name) == 0) format = hs_cli_types[k].format;
    }
    if (format == NULL && sscanf(type, "decimal(%d,%d)", &prec, &scale) == 2 && prec > 0 &&
        prec <= 38 && scale >= 0 && scale <= prec) {
      snprintf(dec, sizeof dec, "d:%d,%d", prec, scale);
      format = dec;
    }
    if (format == NULL) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "--schema: column '%s': unknown type '%s' (bool, int32, int64, float, "
                          "double, string, binary, date, time, timestamp, timestamptz, uuid, "
                          "decimal(P,S); append '!' for NOT NULL)",
                          item, type);
    }
    hs_arrow_schema_release(out->children[i]);
    st = hs_arrow_schema_init(out->children[i], format, item, flags, 0, err);
    if (st != HS_OK) return st;
    p = end ? end + 1 : p + len;
  }
  return HS_OK;
}

int hs_cli_create(int argc, char **argv) {
  const char *table = NULL, *schema_spec = NULL, *like = NULL;
  int64_t fv = 2;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--schema") == 0 && i + 1 < argc) {
      schema_spec = argv[++i];
    } else if (strcmp(argv[i], "--like") == 0 && i + 1 < argc) {
      like = argv[++i];
    } else if (strcmp(argv[i], "--format-version") == 0 && i + 1 < argc) {
      if (!hs_cli_parse_count(argv[++i], &fv) || (fv != 2 && fv != 3))
        return hs_cli_usage_error("create: --format-version must be 2 or 3");
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(
          "Usage: hyperstream create TABLE (--schema 'id:int64,name:string' | --like "
          "FILE.parquet) [--format-version 2|3]\n",
          stdout);
      return HS_CLI_OK;
    } else if (argv[i][0] == '-') {
      return hs_cli_usage_error("create: unknown or incomplete option '%s'", argv[i]);
    } else if (table == NULL) {
      table = argv[i];
    } else {
      return hs_cli_usage_error("create: unexpected argument '%s'", argv[i]);
    }
  }
  if (table == NULL) return hs_cli_usage_error("create: missing TABLE");
  if ((schema_spec == NULL) == (like == NULL))
    return hs_cli_usage_error("create: give exactly one of --schema or --like");
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  hs_error err = {0};
  hs_status st;
  if (schema_spec != NULL) {
    st = parse_schema(schema_spec, &schema, &err);
    if (st != HS_OK) {
      hs_arrow_schema_release(&schema);
      return st == HS_ERR_INVALID_ARG ? hs_cli_usage_error("%s", err.message)
                                      : hs_cli_fail("%s", err.message);
    }
  } else {
    hs_parquet_reader *r = NULL;
    st = hs_parquet_reader_open(like, &r, &err);
    if (st == HS_OK) st = hs_parquet_reader_schema(r, &schema, &err);
    hs_parquet_reader_free(r);
    if (st != HS_OK) return fail_err(like, &err);
  }
  hs_table_options opts;
  hs_table_options_init(&opts);
  opts.format_version = (int)fv;
  hs_table *t = NULL;
  st = hs_table_create(table, &schema, &opts, &t, &err);
  hs_arrow_schema_release(&schema);
  if (st != HS_OK) return fail_err(table, &err);
  printf("created %s (Iceberg format v%d)\n", hs_table_metadata_location(t), (int)fv);
  hs_table_free(t);
  return HS_CLI_OK;
}

/* ----------------------------------------------------------- progress */

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Redraw "[#####     ]  42%  1,234,567 rows" at most 10 times a second. */
void hs_cli_progress_draw(hs_cli_progress *p, int64_t done, int64_t rows, bool final) {
  if (!p->on) return;
  int64_t t = now_ms();
  if (!final && t - p->last_drawn_ms < 100) return;
  p->last_drawn_ms = t;
  int pct = p->total > 0 ? (int)(done * 100 / p->total) : 100;
  if (pct > 100) pct = 100;
  char bar[41], rb[32];
  for (int i = 0; i < 40; i++) bar[i] = i < pct * 40 / 100 ? '#' : ' ';
  bar[40] = '\0';
  fprintf(stderr, "\r[%s] %3d%%  %s rows", bar, pct, hs_cli_group(rows, rb, sizeof rb));
  if (final) fputc('\n', stderr);
  fflush(stderr);
}

/* A stream wrapper counting rows of a Parquet file for the progress bar. */
typedef struct counted {
  struct ArrowArrayStream inner;
  hs_cli_progress *prog;
  int64_t rows;
} counted;

static int counted_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  counted *c = s->private_data;
  return c->inner.get_schema(&c->inner, out);
}
static int counted_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  counted *c = s->private_data;
  int rc = c->inner.get_next(&c->inner, out);
  if (rc == 0 && out->release != NULL) {
    c->rows += out->length;
    hs_cli_progress_draw(c->prog, c->rows, c->rows, false);
  }
  return rc;
}
static const char *counted_error(struct ArrowArrayStream *s) {
  counted *c = s->private_data;
  return c->inner.get_last_error(&c->inner);
}
static void counted_release(struct ArrowArrayStream *s) {
  counted *c = s->private_data;
  if (c->inner.release != NULL) c->inner.release(&c->inner);
  hs_free(c);
  s->release = NULL;
}

/* -------------------------------------------------------------- write */

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

int hs_cli_write(int argc, char **argv) {
  const char *table = NULL, *file = NULL, *format = NULL;
  bool quiet = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
      format = argv[++i];
    } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
      quiet = true;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(
          "Usage: hyperstream write TABLE FILE.parquet|FILE.csv [--format parquet|csv] "
          "[--quiet]\n",
          stdout);
      return HS_CLI_OK;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return hs_cli_usage_error("write: unknown or incomplete option '%s'", argv[i]);
    } else if (table == NULL) {
      table = argv[i];
    } else if (file == NULL) {
      file = argv[i];
    } else {
      return hs_cli_usage_error("write: unexpected argument '%s'", argv[i]);
    }
  }
  if (table == NULL || file == NULL) return hs_cli_usage_error("write: expected TABLE FILE");
  bool csv;
  if (format != NULL) {
    if (strcmp(format, "csv") != 0 && strcmp(format, "parquet") != 0)
      return hs_cli_usage_error("write: --format must be parquet or csv");
    csv = strcmp(format, "csv") == 0;
  } else {
    csv = ends_with(file, ".csv");
  }
  hs_error err = {0};
  hs_table *t = NULL;
  hs_status st = hs_table_open(table, &t, &err);
  if (st != HS_OK) return fail_err(table, &err);
  hs_cli_progress prog = {.on = !quiet && isatty(STDERR_FILENO), .total = 0, .last_drawn_ms = 0};
  struct ArrowArrayStream stream;
  memset(&stream, 0, sizeof stream);
  if (csv) {
    struct stat sb;
    if (stat(file, &sb) == 0) prog.total = (int64_t)sb.st_size;
    struct ArrowSchema schema;
    st = hs_table_schema(t, &schema, &err);
    if (st == HS_OK) st = hs_cli_csv_open(file, NULL, &schema, &prog, &stream, &err);
  } else {
    hs_parquet_reader *r = NULL;
    counted *c = hs_calloc(1, sizeof *c);
    st = c == NULL ? hs_error_set(&err, HS_ERR_NOMEM, "out of memory")
                   : hs_parquet_reader_open(file, &r, &err);
    if (st == HS_OK) {
      prog.total = hs_parquet_reader_num_rows(r);
      st = hs_parquet_reader_stream(r, NULL, &c->inner, &err);
    }
    hs_parquet_reader_free(r);
    if (st == HS_OK) {
      c->prog = &prog;
      stream.get_schema = counted_schema;
      stream.get_next = counted_next;
      stream.get_last_error = counted_error;
      stream.release = counted_release;
      stream.private_data = c;
      c = NULL;
    }
    hs_free(c);
  }
  if (st != HS_OK) {
    hs_table_free(t);
    return fail_err(file, &err);
  }
  int64_t sid = -1;
  st = hs_table_append(t, &stream, &sid, &err); /* consumes the stream */
  if (prog.on && prog.last_drawn_ms != 0) fputc('\n', stderr);
  if (st != HS_OK) {
    hs_table_free(t);
    return fail_err(file, &err);
  }
  hs_table_snapshot_info *snaps = NULL;
  size_t n = 0;
  int64_t added = 0;
  if (sid >= 0 && hs_table_snapshots(t, &snaps, &n, NULL) == HS_OK) {
    for (size_t i = 0; i < n; i++)
      if (snaps[i].snapshot_id == sid) added = snaps[i].added_records;
  }
  hs_free(snaps);
  char gb[32];
  if (sid >= 0) {
    printf("appended %s rows from %s: snapshot %lld\n", hs_cli_group(added, gb, sizeof gb), file,
           (long long)sid);
  } else {
    printf("no rows in %s: nothing committed\n", file);
  }
  hs_table_free(t);
  return HS_CLI_OK;
}

/* --------------------------------------------------------------- scan */

/* Split "a,b,c" into hs_strdup'd names. */
static char **split_names(const char *s, size_t *n_out) {
  size_t n = 1;
  for (const char *p = s; *p; p++) n += *p == ',';
  char **v = hs_calloc(n + 1, sizeof *v);
  if (v == NULL) return NULL;
  const char *p = s;
  for (size_t i = 0; i < n; i++) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if ((v[i] = hs_malloc(len + 1)) == NULL) {
      for (size_t k = 0; k < i; k++) hs_free(v[k]);
      hs_free(v);
      return NULL;
    }
    memcpy(v[i], p, len);
    v[i][len] = '\0';
    p = end ? end + 1 : p + len;
  }
  *n_out = n;
  return v;
}

/* One CSV cell: quoted when it holds a comma, quote or line break. */
static void put_csv_cell(const char *s, bool is_null) {
  if (is_null) return;
  if (strpbrk(s, ",\"\n\r") == NULL && s[0] != '\0') {
    fputs(s, stdout);
    return;
  }
  fputc('"', stdout);
  for (; *s; s++) {
    if (*s == '"') fputc('"', stdout);
    fputc(*s, stdout);
  }
  fputc('"', stdout);
}

int hs_cli_scan(int argc, char **argv) {
  const char *table = NULL, *columns = NULL, *filter = NULL;
  int64_t limit = HS_CLI_SCAN_DEFAULT_LIMIT, snapshot = -1;
  bool csv = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--columns") == 0 && i + 1 < argc) {
      columns = argv[++i];
    } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
      filter = argv[++i];
    } else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
      if (!hs_cli_parse_count(argv[++i], &limit))
        return hs_cli_usage_error("scan: --limit needs a count, got '%s'", argv[i]);
    } else if (strcmp(argv[i], "--snapshot") == 0 && i + 1 < argc) {
      if (!hs_cli_parse_count(argv[++i], &snapshot))
        return hs_cli_usage_error("scan: --snapshot needs a snapshot id, got '%s'", argv[i]);
    } else if (strcmp(argv[i], "--csv") == 0) {
      csv = true;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(
          "Usage: hyperstream scan TABLE [--filter SQL] [--columns a,b] [--limit N (0: all; "
          "default 20)] "
          "[--snapshot ID] [--csv]\n",
          stdout);
      return HS_CLI_OK;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return hs_cli_usage_error("scan: unknown or incomplete option '%s'", argv[i]);
    } else if (table == NULL) {
      table = argv[i];
    } else {
      return hs_cli_usage_error("scan: unexpected argument '%s'", argv[i]);
    }
  }
  if (table == NULL) return hs_cli_usage_error("scan: missing TABLE");
  hs_error err = {0};
  hs_table *t = NULL;
  char **cols = NULL;
  size_t n_cols = 0;
  if (columns != NULL && (cols = split_names(columns, &n_cols)) == NULL)
    return hs_cli_fail("out of memory");
  struct ArrowArrayStream stream;
  memset(&stream, 0, sizeof stream);
  hs_status st = hs_table_open(table, &t, &err);
  if (st == HS_OK) {
    hs_scan_options so;
    hs_scan_options_init(&so);
    so.snapshot_id = snapshot;
    so.columns = (const char *const *)cols;
    so.n_columns = n_cols;
    so.filter = filter;
    so.limit = limit > 0 ? limit : -1;
    st = hs_table_scan_query(t, &so, &stream, &err);
  }
  for (size_t i = 0; i < n_cols; i++) hs_free(cols[i]);
  hs_free(cols);
  hs_table_free(t);
  if (st != HS_OK) return fail_err(table, &err);
  struct ArrowSchema schema;
  int rc = stream.get_schema(&stream, &schema);
  if (rc != 0) {
    int out = hs_cli_fail("%s: %s", table, stream.get_last_error(&stream));
    stream.release(&stream);
    return out;
  }
  for (int64_t c = 0; c < schema.n_children; c++) {
    if (c > 0) fputs(csv ? "," : "\t", stdout);
    if (csv)
      put_csv_cell(schema.children[c]->name, false);
    else
      fputs(schema.children[c]->name, stdout);
  }
  fputc('\n', stdout);
  int64_t shown = 0;
  hs_buf cell;
  hs_buf_init(&cell);
  int result = HS_CLI_OK;
  while (limit == 0 || shown < limit) {
    struct ArrowArray batch;
    rc = stream.get_next(&stream, &batch);
    if (rc != 0) {
      const char *m = stream.get_last_error(&stream);
      result = hs_cli_fail("%s: %s", table, m ? m : "scan failed");
      break;
    }
    if (batch.release == NULL) break;
    for (int64_t r = 0; r < batch.length && (limit == 0 || shown < limit); r++, shown++) {
      for (int64_t c = 0; c < schema.n_children; c++) {
        const struct ArrowArray *col = batch.children[c];
        cell.len = 0;
        bool is_null = !hs_arrow_is_valid(col, r);
        if (!hs_cli_format_value(schema.children[c], col, r, &cell) ||
            !hs_buf_append_byte(&cell, 0)) {
          result = hs_cli_fail("out of memory");
          break;
        }
        if (c > 0) fputs(csv ? "," : "\t", stdout);
        if (csv)
          put_csv_cell((const char *)cell.data, is_null);
        else
          fputs((const char *)cell.data, stdout);
      }
      fputc('\n', stdout);
    }
    batch.release(&batch);
    if (result != HS_CLI_OK) break;
  }
  hs_buf_free(&cell);
  schema.release(&schema);
  stream.release(&stream);
  if (result == HS_CLI_OK && fflush(stdout) != 0) result = hs_cli_fail("writing to stdout failed");
  return result;
}

/* ---------------------------------------------------------- snapshots */

static void format_time(int64_t ms, char *buf, size_t cap) {
  time_t secs = (time_t)(ms / 1000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  size_t n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, cap - n, ".%03dZ", (int)(ms % 1000));
}

static void print_snapshots(const hs_table *t) {
  hs_table_snapshot_info *v = NULL;
  size_t n = 0;
  if (hs_table_snapshots(t, &v, &n, NULL) != HS_OK) return;
  int64_t cur = hs_table_current_snapshot_id(t);
  printf("  %-20s %-20s %4s  %-24s %-9s %12s %12s\n", "snapshot_id", "parent", "seq", "committed",
         "operation", "added_rows", "total_rows");
  for (size_t i = 0; i < n; i++) {
    char ts[48], parent[24];
    format_time(v[i].timestamp_ms, ts, sizeof ts);
    if (v[i].parent_snapshot_id >= 0)
      snprintf(parent, sizeof parent, "%lld", (long long)v[i].parent_snapshot_id);
    else
      snprintf(parent, sizeof parent, "-");
    printf("%c %-20lld %-20s %4lld  %-24s %-9s %12lld %12lld\n",
           v[i].snapshot_id == cur ? '*' : ' ', (long long)v[i].snapshot_id, parent,
           (long long)v[i].sequence_number, ts, v[i].operation[0] ? v[i].operation : "-",
           (long long)v[i].added_records, (long long)v[i].total_records);
  }
  hs_free(v);
}

int hs_cli_snapshots(int argc, char **argv) {
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs("Usage: hyperstream snapshots TABLE\n", stdout);
    return HS_CLI_OK;
  }
  if (argc != 2 || argv[1][0] == '-') return hs_cli_usage_error("snapshots: expected TABLE");
  hs_error err = {0};
  hs_table *t = NULL;
  if (hs_table_open(argv[1], &t, &err) != HS_OK) return fail_err(argv[1], &err);
  print_snapshots(t);
  hs_table_free(t);
  return fflush(stdout) == 0 ? HS_CLI_OK : hs_cli_fail("writing to stdout failed");
}

/* ------------------------------------------------------------ inspect */

static const char *field_name(const hs_iceberg_schema *s, int32_t id, char *buf, size_t cap) {
  for (size_t i = 0; s != NULL && i < s->root.n_fields; i++)
    if (s->root.fields[i].id == id) return s->root.fields[i].name;
  snprintf(buf, cap, "#%d", (int)id);
  return buf;
}

static void print_type(const hs_iceberg_type *t, hs_buf *b, int depth) {
  if (depth > 32) {
    hs_buf_printf(b, "...");
    return;
  }
  switch (t->id) {
  case HS_ICE_LIST:
    hs_buf_printf(b, "list<");
    print_type(t->element, b, depth + 1);
    hs_buf_printf(b, ">");
    break;
  case HS_ICE_MAP:
    hs_buf_printf(b, "map<");
    print_type(t->key, b, depth + 1);
    hs_buf_printf(b, ", ");
    print_type(t->value, b, depth + 1);
    hs_buf_printf(b, ">");
    break;
  case HS_ICE_STRUCT:
    hs_buf_printf(b, "struct<");
    for (size_t i = 0; i < t->n_fields; i++) {
      hs_buf_printf(b, "%s%s: ", i ? ", " : "", t->fields[i].name);
      print_type(&t->fields[i].type, b, depth + 1);
    }
    hs_buf_printf(b, ">");
    break;
  default: hs_iceberg_type_format_primitive(t, b);
  }
}

/* Read and parse the loaded metadata file into `arena`/`m`. */
static hs_status load_metadata(const char *path, hs_arena *arena, hs_iceberg_metadata *m,
                               hs_error *err) {
  if (strstr(path, "://") != NULL) { /* on object storage (an S3 or catalog table) */
    hs_buf b;
    hs_buf_init(&b);
    hs_status st = hs_store_get(path, (size_t)256 << 20, &b, NULL, err);
    if (st == HS_OK) st = hs_iceberg_metadata_parse((const char *)b.data, b.len, arena, m, err);
    hs_buf_free(&b);
    return st;
  }
  /* Non-blocking open, then the type: a FIFO put in its place must not
   * wait for a writer. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return hs_error_set(err, HS_ERR_IO, "%s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || fcntl(fd, F_SETFL, 0) != 0) {
    close(fd);
    return hs_error_set(err, HS_ERR_IO, "%s: not a regular file", path);
  }
  FILE *f = fdopen(fd, "rb");
  if (f == NULL) {
    close(fd);
    return hs_error_set(err, HS_ERR_IO, "%s: %s", path, strerror(errno));
  }
  hs_buf b;
  hs_buf_init(&b);
  char chunk[65536];
  size_t got;
  hs_status st = HS_OK;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (b.len + got > ((size_t)256 << 20) || !hs_buf_append(&b, chunk, got)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: too large", path);
      break;
    }
  }
  fclose(f);
  if (st == HS_OK) st = hs_iceberg_metadata_parse((const char *)b.data, b.len, arena, m, err);
  hs_buf_free(&b);
  return st;
}

int hs_cli_inspect_table(const char *path, int json) {
  hs_error err = {0};
  hs_table *t = NULL;
  if (json) return hs_cli_usage_error("inspect: --json is for Parquet files");
  if (hs_table_open(path, &t, &err) != HS_OK) return fail_err(path, &err);
  hs_arena arena;
  hs_arena_init(&arena);
  hs_iceberg_metadata m;
  memset(&m, 0, sizeof m);
  const char *loc = hs_table_metadata_location(t);
  if (load_metadata(loc, &arena, &m, &err) != HS_OK) {
    hs_arena_reset(&arena);
    hs_table_free(t);
    return fail_err(loc, &err);
  }
  const hs_iceberg_schema *s = hs_iceberg_metadata_schema(&m, m.current_schema_id);
  hs_buf b;
  hs_buf_init(&b);
  char nb[32], gb[32];
  printf("table      %s\nmetadata   %s\nformat     Iceberg v%d\nuuid       %s\n", path, loc,
         (int)m.format_version, m.table_uuid ? m.table_uuid : "-");
  printf("schema (id %d):\n", (int)m.current_schema_id);
  for (size_t i = 0; s != NULL && i < s->root.n_fields; i++) {
    const hs_iceberg_field *f = &s->root.fields[i];
    b.len = 0;
    print_type(&f->type, &b, 0);
    hs_buf_append_byte(&b, 0);
    printf("  %3d  %-24s %s%s\n", (int)f->id, f->name, b.data ? (const char *)b.data : "?",
           f->required ? " not null" : "");
  }
  for (size_t i = 0; i < m.n_specs; i++) {
    const hs_iceberg_partition_spec *sp = &m.specs[i];
    printf("partition spec %d%s:%s\n", (int)sp->spec_id,
           sp->spec_id == m.default_spec_id ? " (default)" : "",
           sp->n_fields == 0 ? " unpartitioned" : "");
    for (size_t k = 0; k < sp->n_fields; k++) {
      b.len = 0;
      hs_iceberg_transform_format(&sp->fields[k].transform, &b);
      hs_buf_append_byte(&b, 0);
      printf("  %-20s %s(%s)\n", sp->fields[k].name, b.data ? (const char *)b.data : "?",
             field_name(s, sp->fields[k].source_id, nb, sizeof nb));
    }
  }
  for (size_t i = 0; i < m.n_sort_orders; i++) {
    const hs_iceberg_sort_order *so = &m.sort_orders[i];
    printf(
        "sort order %d%s:%s\n", (int)so->order_id,
        m.has_default_sort_order_id && so->order_id == m.default_sort_order_id ? " (default)" : "",
        so->n_fields == 0 ? " unsorted" : "");
    for (size_t k = 0; k < so->n_fields; k++) {
      b.len = 0;
      hs_iceberg_transform_format(&so->fields[k].transform, &b);
      hs_buf_append_byte(&b, 0);
      printf("  %s(%s) %s nulls %s\n", b.data ? (const char *)b.data : "?",
             field_name(s, so->fields[k].source_id, nb, sizeof nb),
             so->fields[k].descending ? "desc" : "asc",
             so->fields[k].nulls_first ? "first" : "last");
    }
  }
  if (m.n_properties > 0) printf("properties:\n");
  for (size_t i = 0; i < m.n_properties; i++)
    printf("  %s = %s\n", m.properties[i].key, m.properties[i].value);
  for (size_t i = 0; i < m.n_refs; i++) {
    printf("%s %-12s -> %lld\n", m.refs[i].is_tag ? "tag   " : "branch", m.refs[i].name,
           (long long)m.refs[i].snapshot_id);
  }
  hs_table_snapshot_info *v = NULL;
  size_t n = 0;
  int64_t cur = hs_table_current_snapshot_id(t), files = 0, rows = 0;
  if (hs_table_snapshots(t, &v, &n, NULL) == HS_OK) {
    for (size_t i = 0; i < n; i++) {
      if (v[i].snapshot_id == cur) {
        files = v[i].total_data_files;
        rows = v[i].total_records;
      }
    }
  }
  hs_free(v);
  printf("snapshots: %zu (current %lld)\n", n, (long long)cur);
  if (n > 0) print_snapshots(t);
  printf("data files %s\nrows       %s\n", hs_cli_group(files, nb, sizeof nb),
         hs_cli_group(rows, gb, sizeof gb));
  hs_buf_free(&b);
  hs_arena_reset(&arena);
  hs_table_free(t);
  return fflush(stdout) == 0 ? HS_CLI_OK : hs_cli_fail("writing to stdout failed");
}

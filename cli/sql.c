/*
 * sql.c — `hyperstream sql [--root DIR] [--table NAME=PATH]... [--csv|--json]
 * [QUERY]`: run SQL statements (src/sql/, through hs_sql_*) and print their
 * rows as an aligned table like psql's, as CSV (RFC 4180, a header row,
 * NULL empty) or as JSON lines (one object per row).
 *
 * Statements come from QUERY (several may be separated by ';'), else from
 * stdin: a script when stdin is not a terminal, an interactive prompt
 * ("hs> ", statements end at ';', \q quits, \s lists the history kept in
 * memory) when it is. Values are printed as PostgreSQL prints them: each
 * column is cast to text by the engine's own casts (numeric scale,
 * intervals, vectors as '[1,2,3]', booleans as true/false).
 *
 * Errors print the engine's message, which carries the statement's line
 * and a caret under the position; the exit status is 1 when a statement
 * failed (the script stops there), 2 for a usage error. Ctrl-C cancels
 * the running statement (hs_sql_cancel from the signal handler: one
 * atomic store).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "cli.h"
#include "sql/func.h"
#include "sql/vec.h"

int hs_cli_sql(int argc, char **argv);

enum { OUT_TABLE = 0, OUT_CSV, OUT_JSON };
enum { HS_CLI_SQL_TABLES_MAX = 256, HS_CLI_SQL_HISTORY_MAX = 1000 };

static const char sql_usage[] =
    "Usage: hyperstream sql [--root DIR] [--table NAME=PATH]... [--csv | --json] [QUERY]\n"
    "\n"
    "Run SQL (PostgreSQL's language, pgvector's operators) over the tables\n"
    "under DIR (default: the current directory; every table folder is a table\n"
    "by its folder name) and the tables named with --table. Rows print as an\n"
    "aligned table, as CSV (--csv) or as JSON lines (--json).\n"
    "\n"
    "QUERY may hold several statements separated by ';'. Without QUERY the\n"
    "statements are read from stdin; on a terminal, an interactive prompt:\n"
    "statements end at ';', \\q quits, \\s shows the history, \\? helps.\n"
    "Exit status: 0 success, 1 a statement failed, 2 usage error.\n";

/* ------------------------------------------------------------ Ctrl-C */

static hs_sql_session *volatile g_session;
static volatile sig_atomic_t g_running, g_interrupted;

static void on_sigint(int sig) {
  (void)sig;
  g_interrupted = 1;
  hs_sql_session *s = g_session;
  if (g_running && s != NULL) hs_sql_cancel(s);
}

/* ------------------------------------------------------------ values */

static bool right_aligned(const char *format) {
  return strchr("cCsSiIlLefg", format[0]) != NULL && format[1] == '\0'
             ? true
             : strncmp(format, "d:", 2) == 0;
}

/* JSON writes these columns' text as is (numbers, booleans, vectors). */
static bool json_raw(hs_sql_tid id) {
  return id == HS_SQL_INT32 || id == HS_SQL_INT64 || id == HS_SQL_FLOAT64 || id == HS_SQL_NUMERIC ||
         id == HS_SQL_BOOL || id == HS_SQL_VECTOR || id == HS_SQL_HALFVEC;
}

typedef struct result {
  int32_t n_cols;
  char **names;
  bool *right;
  hs_sql_tid *types;
  /* cells: row-major, n_rows * n_cols strings (NULL = SQL NULL) */
  char **cells;
  int64_t n_rows, cap_rows;
} result;

static void result_free(result *r) {
  for (int64_t k = 0; k < r->n_rows * r->n_cols; k++) hs_free(r->cells[k]);
  for (int32_t c = 0; c < r->n_cols; c++) hs_free(r->names[c]);
  hs_free(r->cells);
  hs_free(r->names);
  hs_free(r->right);
  hs_free(r->types);
  memset(r, 0, sizeof *r);
}

static char *dup_n(const char *p, size_t n) {
  char *s = hs_malloc(n + 1);
  if (s != NULL) {
    memcpy(s, p, n);
    s[n] = '\0';
  }
  return s;
}

/* Add the rows of `batch` (consumed; `schema` is not) to r as text. */
static hs_status add_batch(result *r, const struct ArrowSchema *schema, struct ArrowArray *batch,
                           hs_error *err) {
  hs_sql_chunk ch = {0};
  hs_status st = hs_sql_chunk_from_arrow(schema, batch, NULL, 0, &ch, err);
  if (st != HS_OK) return st;
  if (ch.n_cols != r->n_cols) {
    hs_sql_chunk_release(&ch);
    return hs_error_set(err, HS_ERR_INTERNAL, "a batch has %d columns, the schema %d",
                        (int)ch.n_cols, (int)r->n_cols);
  }
  if (r->n_rows + ch.n > r->cap_rows) {
    int64_t cap = r->cap_rows ? r->cap_rows : 64;
    while (cap < r->n_rows + ch.n) cap *= 2;
    char **cells =
        hs_realloc(r->cells, sizeof(char *) * (size_t)(cap * (r->n_cols ? r->n_cols : 1)));
    if (cells == NULL) {
      hs_sql_chunk_release(&ch);
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory holding the rows");
    }
    r->cells = cells;
    r->cap_rows = cap;
  }
  for (int64_t k = r->n_rows * r->n_cols; k < (r->n_rows + ch.n) * r->n_cols; k++)
    r->cells[k] = NULL; /* SQL NULL, and what a failure leaves */
  for (int32_t c = 0; c < ch.n_cols && st == HS_OK; c++) {
    const hs_sql_vec *v = &ch.cols[c];
    r->types[c] = v->type.id;
    hs_sql_vec text = {0};
    if (v->type.id != HS_SQL_NULLTYPE) {
      st = hs_sql_cast_vec(v, hs_sql_type_of(HS_SQL_TEXT), 0, &text, err);
      if (st != HS_OK) break;
    }
    for (int64_t i = 0; i < ch.n; i++) {
      char **cell = &r->cells[(r->n_rows + i) * r->n_cols + c];
      if (v->type.id == HS_SQL_NULLTYPE || !hs_sql_vec_valid(v, i) || !hs_sql_vec_valid(&text, i))
        continue;
      const hs_sql_str *s = &((const hs_sql_str *)text.data)[i];
      *cell = dup_n(s->ptr, s->len);
      if (*cell == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "out of memory holding the rows");
        break;
      }
    }
    hs_sql_vec_release(&text);
  }
  r->n_rows += ch.n;
  hs_sql_chunk_release(&ch);
  return st;
}

/* Display width of UTF-8 text: one column per code point. */
static size_t width_of(const char *s) {
  size_t w = 0;
  for (; *s != '\0'; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
  return w;
}

/* A cell as one display line: control characters as \n, \t, \r or '?'. */
static void print_flat(FILE *out, const char *s) {
  for (; *s != '\0'; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '\n')
      fputs("\\n", out);
    else if (ch == '\t')
      fputs("\\t", out);
    else if (ch == '\r')
      fputs("\\r", out);
    else if (ch < 0x20 || ch == 0x7F)
      fputc('?', out);
    else
      fputc(ch, out);
  }
}

static size_t flat_width(const char *s) {
  size_t w = width_of(s);
  for (; *s != '\0'; s++)
    if (*s == '\n' || *s == '\t' || *s == '\r') w++;
  return w;
}

static void print_padded(FILE *out, const char *s, size_t width, bool right, bool last) {
  size_t w = flat_width(s);
  if (right && w < width) fprintf(out, "%*s", (int)(width - w), "");
  print_flat(out, s);
  if (!right && !last && w < width) fprintf(out, "%*s", (int)(width - w), "");
}

/* psql's aligned format: a header, a rule, the rows, "(N rows)". */
static void print_table(FILE *out, const result *r) {
  if (r->n_cols == 0) {
    fputs("OK\n", out);
    return;
  }
  size_t *w = hs_calloc((size_t)r->n_cols, sizeof *w);
  if (w == NULL) return;
  for (int32_t c = 0; c < r->n_cols; c++) w[c] = flat_width(r->names[c]);
  for (int64_t i = 0; i < r->n_rows; i++)
    for (int32_t c = 0; c < r->n_cols; c++) {
      const char *s = r->cells[i * r->n_cols + c];
      size_t cw = s != NULL ? flat_width(s) : 0;
      if (cw > w[c]) w[c] = cw;
    }
  for (int32_t c = 0; c < r->n_cols; c++) {
    fputs(c ? " | " : " ", out);
    size_t nw = flat_width(r->names[c]), left = (w[c] - nw) / 2; /* centred, as psql */
    fprintf(out, "%*s", (int)left, "");
    print_flat(out, r->names[c]);
    if (c + 1 < r->n_cols) fprintf(out, "%*s", (int)(w[c] - nw - left), "");
  }
  fputc('\n', out);
  for (int32_t c = 0; c < r->n_cols; c++) {
    fputs(c ? "-+-" : "-", out);
    for (size_t k = 0; k < w[c]; k++) fputc('-', out);
  }
  fputs("-\n", out);
  for (int64_t i = 0; i < r->n_rows; i++) {
    for (int32_t c = 0; c < r->n_cols; c++) {
      const char *s = r->cells[i * r->n_cols + c];
      fputs(c ? " | " : " ", out);
      print_padded(out, s != NULL ? s : "", w[c], r->right[c], c + 1 == r->n_cols);
    }
    fputc('\n', out);
  }
  fprintf(out, "(%lld row%s)\n\n", (long long)r->n_rows, r->n_rows == 1 ? "" : "s");
  hs_free(w);
}

static void print_csv_field(FILE *out, const char *s) {
  if (strpbrk(s, ",\"\r\n") == NULL && s[0] != '\0' && s[0] != ' ' && s[strlen(s) - 1] != ' ') {
    fputs(s, out);
    return;
  }
  if (s[0] == '\0') {
    fputs("\"\"", out); /* an empty string, told apart from NULL (nothing) */
    return;
  }
  fputc('"', out);
  for (; *s != '\0'; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

static void print_csv(FILE *out, const result *r) {
  if (r->n_cols == 0) return;
  for (int32_t c = 0; c < r->n_cols; c++) {
    if (c) fputc(',', out);
    print_csv_field(out, r->names[c]);
  }
  fputs("\r\n", out);
  for (int64_t i = 0; i < r->n_rows; i++) {
    for (int32_t c = 0; c < r->n_cols; c++) {
      if (c) fputc(',', out);
      const char *s = r->cells[i * r->n_cols + c];
      if (s != NULL) print_csv_field(out, s);
    }
    fputs("\r\n", out);
  }
}

static void print_json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s != '\0'; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(out, "\\%c", ch);
    else if (ch == '\n')
      fputs("\\n", out);
    else if (ch == '\t')
      fputs("\\t", out);
    else if (ch == '\r')
      fputs("\\r", out);
    else if (ch < 0x20 || ch == 0x7F)
      fprintf(out, "\\u%04x", ch);
    else
      fputc(ch, out);
  }
  fputc('"', out);
}

/* A number's text is a JSON number unless it is NaN or infinite. */
static bool json_number_ok(const char *s) {
  return strcmp(s, "NaN") != 0 && strstr(s, "Infinity") == NULL && strstr(s, "inf") == NULL;
}

static void print_json(FILE *out, const result *r) {
  if (r->n_cols == 0) return;
  for (int64_t i = 0; i < r->n_rows; i++) {
    fputc('{', out);
    for (int32_t c = 0; c < r->n_cols; c++) {
      if (c) fputs(", ", out);
      print_json_string(out, r->names[c]);
      fputs(": ", out);
      const char *s = r->cells[i * r->n_cols + c];
      if (s == NULL) {
        fputs("null", out);
      } else if (r->types[c] == HS_SQL_BOOL) {
        fputs(s[0] == 't' ? "true" : "false", out);
      } else if (json_raw(r->types[c]) && json_number_ok(s) && r->types[c] != HS_SQL_BOOL) {
        bool vec = r->types[c] == HS_SQL_VECTOR || r->types[c] == HS_SQL_HALFVEC;
        if (vec && (strstr(s, "NaN") != NULL || strstr(s, "nfinity") != NULL))
          print_json_string(out, s);
        else
          fputs(s, out);
      } else {
        print_json_string(out, s);
      }
    }
    fputs("}\n", out);
  }
}

/* --------------------------------------------------------- statements */

/* Run one statement and print its rows. Returns 0 or 1 (error printed). */
static int run_statement(hs_sql_session *s, const char *sql, int mode) {
  struct ArrowArrayStream stream;
  hs_error err = {0};
  int32_t pos = 0;
  result r = {0};
  g_running = 1;
  hs_status st = hs_sql_execute(s, sql, NULL, NULL, &stream, &pos, &err);
  if (st != HS_OK) {
    g_running = 0;
    return hs_cli_fail("%s", err.message);
  }
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  int rc = stream.get_schema(&stream, &schema);
  if (rc == 0) {
    r.n_cols = (int32_t)schema.n_children;
    r.names = hs_calloc((size_t)(r.n_cols ? r.n_cols : 1), sizeof(char *));
    r.right = hs_calloc((size_t)(r.n_cols ? r.n_cols : 1), sizeof(bool));
    r.types = hs_calloc((size_t)(r.n_cols ? r.n_cols : 1), sizeof(hs_sql_tid));
    if (r.names == NULL || r.right == NULL || r.types == NULL) {
      st = hs_error_set(&err, HS_ERR_NOMEM, "out of memory");
    }
    for (int32_t c = 0; c < r.n_cols && st == HS_OK; c++) {
      const struct ArrowSchema *f = schema.children[c];
      const char *nm = f->name != NULL ? f->name : "";
      r.names[c] = dup_n(nm, strlen(nm));
      r.right[c] = right_aligned(f->format);
      r.types[c] = HS_SQL_TEXT;
      if (r.names[c] == NULL) st = hs_error_set(&err, HS_ERR_NOMEM, "out of memory");
    }
    while (st == HS_OK) {
      struct ArrowArray batch;
      memset(&batch, 0, sizeof batch);
      rc = stream.get_next(&stream, &batch);
      if (rc != 0) break;
      if (batch.release == NULL) break;
      st = add_batch(&r, &schema, &batch, &err); /* the batch is consumed, the schema not */
    }
  }
  g_running = 0;
  if (st == HS_OK && rc != 0) {
    const char *msg = stream.get_last_error ? stream.get_last_error(&stream) : NULL;
    hs_error_set(&err, hs_status_of_errno(rc), "sql: %s",
                 msg != NULL ? msg : "reading the result failed");
    st = err.status != HS_OK ? err.status : HS_ERR_IO;
    if (st == HS_OK) st = HS_ERR_IO;
    /* the position of a runtime error: show the statement's line and a caret */
    const char *p = msg != NULL ? strstr(msg, "at position ") : NULL;
    long at = p != NULL ? strtol(p + 12, NULL, 10) : 0;
    if (at > 0 && strchr(err.message, '\n') == NULL) {
      size_t len = strlen(sql), i = 0;
      long ch = 1;
      while (i < len && ch < at) {
        i++;
        while (i < len && ((unsigned char)sql[i] & 0xC0) == 0x80) i++;
        ch++;
      }
      size_t b = i, e = i;
      while (b > 0 && sql[b - 1] != '\n') b--;
      while (e < len && sql[e] != '\n') e++;
      int col = 0;
      for (size_t k = b; k < i; k++) col += ((unsigned char)sql[k] & 0xC0) != 0x80;
      size_t cur = strlen(err.message);
      if (e - b < 300)
        snprintf(err.message + cur, sizeof err.message - cur, "\n  %.*s\n  %*s^", (int)(e - b),
                 sql + b, col, "");
    }
  }
  if (schema.release != NULL) schema.release(&schema);
  stream.release(&stream);
  if (st != HS_OK) {
    result_free(&r);
    return hs_cli_fail("%s", err.message);
  }
  if (mode == OUT_CSV)
    print_csv(stdout, &r);
  else if (mode == OUT_JSON)
    print_json(stdout, &r);
  else
    print_table(stdout, &r);
  result_free(&r);
  fflush(stdout);
  return HS_CLI_OK;
}

/* The statement splitter: the end of the statement starting at `p`
 * (the ';' or the end of text), outside quotes ('..', "..", $tag$..$tag$)
 * and comments (-- to the end of the line, nested slash-star). *open:
 * the text ended inside a quote or comment. *content: it has more than
 * blanks and comments. */
static const char *statement_end(const char *p, bool *open, bool *content) {
  *open = false;
  *content = false;
  while (*p != '\0') {
    if (*p == ';') return p;
    if (p[0] == '-' && p[1] == '-') {
      while (*p != '\0' && *p != '\n') p++;
      continue;
    }
    if (p[0] == '/' && p[1] == '*') {
      int depth = 1;
      p += 2;
      while (*p != '\0' && depth > 0) {
        if (p[0] == '/' && p[1] == '*')
          depth++, p++;
        else if (p[0] == '*' && p[1] == '/')
          depth--, p++;
        p++;
      }
      if (depth > 0) *open = true;
      continue;
    }
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
      p++;
      continue;
    }
    *content = true;
    if (*p == '\'' || *p == '"') {
      char q = *p++;
      for (;;) {
        if (*p == '\0') {
          *open = true;
          return p;
        }
        if (*p == q && p[1] == q)
          p += 2;
        else if (*p++ == q)
          break;
      }
      continue;
    }
    if (*p == '$') { /* $tag$ ... $tag$ (tag: letters, digits, _) */
      const char *t = p + 1;
      while ((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') ||
             *t == '_')
        t++;
      if (*t == '$' && !(p[1] >= '0' && p[1] <= '9')) {
        size_t tag = (size_t)(t - p + 1);
        const char *q = t + 1;
        for (;;) {
          q = strchr(q, '$');
          if (q == NULL) {
            *open = true;
            return p + strlen(p);
          }
          if (strncmp(q, p, tag) == 0) break;
          q++;
        }
        p = q + tag;
        continue;
      }
    }
    p++;
  }
  return p;
}

/* Run every statement of `text`; stops at the first failure (returns 1). */
static int run_script(hs_sql_session *s, const char *text, int mode) {
  const char *p = text;
  while (*p != '\0') {
    bool open, content;
    const char *e = statement_end(p, &open, &content);
    if (content) {
      char *one = dup_n(p, (size_t)(e - p));
      if (one == NULL) return hs_cli_fail("out of memory");
      int rc = run_statement(s, one, mode);
      hs_free(one);
      if (rc != HS_CLI_OK) return rc;
      if (g_interrupted) return HS_CLI_FAILED;
    }
    p = *e == ';' ? e + 1 : e;
  }
  return HS_CLI_OK;
}

static char *read_all(FILE *f) {
  hs_buf b;
  hs_buf_init(&b);
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (!hs_buf_append(&b, chunk, n)) {
      hs_buf_free(&b);
      return NULL;
    }
  }
  if (!hs_buf_append_byte(&b, '\0')) {
    hs_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

/* ------------------------------------------------------- interactive */

typedef struct history {
  char *items[HS_CLI_SQL_HISTORY_MAX];
  int n, first; /* a ring of the last HS_CLI_SQL_HISTORY_MAX statements */
} history;

static void history_add(history *h, const char *s) {
  char *c = dup_n(s, strlen(s));
  if (c == NULL) return;
  if (h->n < HS_CLI_SQL_HISTORY_MAX) {
    h->items[(h->first + h->n++) % HS_CLI_SQL_HISTORY_MAX] = c;
  } else {
    hs_free(h->items[h->first]);
    h->items[h->first] = c;
    h->first = (h->first + 1) % HS_CLI_SQL_HISTORY_MAX;
  }
}

static void history_free(history *h) {
  for (int i = 0; i < h->n; i++) hs_free(h->items[(h->first + i) % HS_CLI_SQL_HISTORY_MAX]);
}

static const char interactive_help[] =
    "Statements end with ';' and may span lines.\n"
    "  \\q        quit (also Ctrl-D)\n"
    "  \\s        show the statements run so far\n"
    "  \\csv, \\json, \\table   switch the output format\n"
    "  \\?        this help\n"
    "Ctrl-C cancels the running statement or clears the one being typed.\n";

/* Trim blanks at both ends in place. */
static char *trim(char *s) {
  while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
    s[--n] = '\0';
  return s;
}

static int interactive(hs_sql_session *s, int mode) {
  history h;
  memset(&h, 0, sizeof h);
  hs_buf pending;
  hs_buf_init(&pending);
  printf("hyperstream %s SQL. Statements end with ';'; \\? for help, \\q to quit.\n",
         HS_VERSION_STRING);
  char *line = NULL;
  size_t cap = 0;
  for (;;) {
    fputs(pending.len ? "..> " : "hs> ", stdout);
    fflush(stdout);
    g_interrupted = 0;
    errno = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
      if (errno == EINTR || g_interrupted) { /* Ctrl-C at the prompt: drop the typed text */
        clearerr(stdin);
        pending.len = 0;
        fputc('\n', stdout);
        continue;
      }
      fputc('\n', stdout);
      break;
    }
    if (pending.len == 0 && line[strspn(line, " \t\r\n")] == '\0') continue;
    if (pending.len == 0 &&
        (line[strspn(line, " \t")] == '\\' || strncmp(line + strspn(line, " \t"), "quit", 4) == 0 ||
         strncmp(line + strspn(line, " \t"), "exit", 4) == 0 ||
         strncmp(line + strspn(line, " \t"), "help", 4) == 0)) {
      char *cmd = trim(line); /* a command line, not SQL: trimmed in place */
      if (strcmp(cmd, "\\q") == 0 || strcmp(cmd, "quit") == 0 || strcmp(cmd, "exit") == 0) break;
      if (strcmp(cmd, "\\?") == 0 || strcmp(cmd, "help") == 0) {
        fputs(interactive_help, stdout);
        continue;
      }
      if (strcmp(cmd, "\\s") == 0) {
        for (int i = 0; i < h.n; i++)
          printf("%4d  %s;\n", i + 1, h.items[(h.first + i) % HS_CLI_SQL_HISTORY_MAX]);
        continue;
      }
      if (strcmp(cmd, "\\csv") == 0 || strcmp(cmd, "\\json") == 0 || strcmp(cmd, "\\table") == 0) {
        mode = cmd[1] == 'c' ? OUT_CSV : cmd[1] == 'j' ? OUT_JSON : OUT_TABLE;
        continue;
      }
      if (cmd[0] == '\\') {
        printf("unknown command %s (\\? for help)\n", cmd);
        continue;
      }
      /* "quitting" etc.: SQL after all */
      if (!hs_buf_append(&pending, cmd, strlen(cmd)) || !hs_buf_append_byte(&pending, '\n')) break;
    } else if (!hs_buf_append(&pending, line, (size_t)n)) {
      break;
    }
    /* run every complete statement in the text typed so far */
    for (;;) {
      if (!hs_buf_append_byte(&pending, '\0')) break;
      pending.len--;
      const char *text = (const char *)pending.data;
      bool open, content;
      const char *e = statement_end(text, &open, &content);
      if (*e != ';') {
        if (!content) pending.len = 0;
        break;
      }
      size_t used = (size_t)(e - text) + 1;
      if (content) {
        char *one = dup_n(text, (size_t)(e - text));
        if (one != NULL) {
          char *t = trim(one);
          history_add(&h, t);
          g_interrupted = 0;
          run_statement(s, t, mode);
          hs_free(one);
        }
      }
      memmove(pending.data, pending.data + used, pending.len - used);
      pending.len -= used;
    }
  }
  free(line); /* getline's buffer */
  hs_buf_free(&pending);
  history_free(&h);
  return HS_CLI_OK;
}

/* ----------------------------------------------------------- command */

int hs_cli_sql(int argc, char **argv) {
  const char *root = ".", *query = NULL;
  const char *tables[HS_CLI_SQL_TABLES_MAX];
  int n_tables = 0, mode = OUT_TABLE;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(sql_usage, stdout);
      return HS_CLI_OK;
    } else if (strcmp(a, "--csv") == 0) {
      mode = OUT_CSV;
    } else if (strcmp(a, "--json") == 0) {
      mode = OUT_JSON;
    } else if (strcmp(a, "--root") == 0 || strcmp(a, "--table") == 0) {
      if (i + 1 >= argc) return hs_cli_usage_error("sql: %s needs a value", a);
      if (a[2] == 'r') {
        root = argv[++i];
      } else {
        if (n_tables == HS_CLI_SQL_TABLES_MAX)
          return hs_cli_usage_error("sql: at most %d --table options", HS_CLI_SQL_TABLES_MAX);
        tables[n_tables++] = argv[++i];
      }
    } else if (strncmp(a, "--root=", 7) == 0) {
      root = a + 7;
    } else if (strncmp(a, "--table=", 8) == 0) {
      if (n_tables == HS_CLI_SQL_TABLES_MAX)
        return hs_cli_usage_error("sql: at most %d --table options", HS_CLI_SQL_TABLES_MAX);
      tables[n_tables++] = a + 8;
    } else if (a[0] == '-' && a[1] != '\0') {
      return hs_cli_usage_error("sql: unknown option '%s'", a);
    } else if (query == NULL) {
      query = a;
    } else {
      return hs_cli_usage_error("sql: expected one QUERY (quote it; separate statements with ';')");
    }
  }
  hs_error err = {0};
  hs_sql_session *s = NULL;
  hs_status st = hs_sql_session_new(root, &s, &err);
  if (st != HS_OK) return hs_cli_fail("%s", err.message);
  for (int k = 0; k < n_tables; k++) {
    const char *eq = strchr(tables[k], '=');
    if (eq == NULL || eq == tables[k] || eq[1] == '\0') {
      hs_sql_session_free(s);
      return hs_cli_usage_error("sql: --table wants NAME=PATH, not '%s'", tables[k]);
    }
    char name[256];
    size_t nl = (size_t)(eq - tables[k]);
    if (nl >= sizeof name) {
      hs_sql_session_free(s);
      return hs_cli_usage_error("sql: --table name too long");
    }
    memcpy(name, tables[k], nl);
    name[nl] = '\0';
    st = hs_sql_register_table(s, name, eq + 1, &err);
    if (st != HS_OK) {
      hs_sql_session_free(s);
      return hs_cli_fail("--table %s: %s", tables[k], err.message);
    }
  }
  g_session = s;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: Ctrl-C at the prompt ends getline */
  bool tty = query == NULL && isatty(STDIN_FILENO);
  sigaction(SIGINT, &sa, &old);
  int rc;
  if (query != NULL) {
    rc = run_script(s, query, mode);
  } else if (tty) {
    rc = interactive(s, mode);
  } else {
    char *text = read_all(stdin);
    rc = text == NULL ? hs_cli_fail("reading stdin failed") : run_script(s, text, mode);
    hs_free(text);
  }
  sigaction(SIGINT, &old, NULL);
  g_session = NULL;
  hs_sql_session_free(s);
  if (fflush(stdout) != 0) return hs_cli_fail("writing to stdout failed");
  return rc;
}

/*
 * index.c — `hyperstream index add|drop|list|build` and `hyperstream
 * explain`: the scalar index configuration of a table (the table property
 * "hyperstream.indexes", shared with the Python API), backfills with a
 * progress line on a terminal, and EXPLAIN ANALYZE of a filtered scan.
 * Every subcommand takes --json for machine-readable output.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int hs_cli_index(int argc, char **argv);
int hs_cli_explain(int argc, char **argv);

static const char index_usage[] =
    "Usage:\n"
    "  hyperstream index add TABLE COLUMN[:KIND]... [--kind KIND] [--param KEY=VALUE]...\n"
    "                        [--no-build] [--progress|--no-progress] [--json]\n"
    "      Record indexes (KIND: inverted (default), scalar, bitmap, btree, sorted;\n"
    "      vector: hnsw, ivf_hnsw, ivf_hnsw_sq8, ivf_pq) and build them for the\n"
    "      existing files.\n"
    "      --kind and --param (e.g. block_rows=1024) apply to the columns without :KIND.\n"
    "  hyperstream index drop TABLE COLUMN...\n"
    "      Stop indexing the columns (index files stay on disk as orphans).\n"
    "  hyperstream index list TABLE [--json]\n"
    "      Indexed columns, their kind and how many data files each covers.\n"
    "  hyperstream index build TABLE [COLUMN...] [--threads N] [--progress|--no-progress] "
    "[--json]\n"
    "      Build the configured indexes missing for the current snapshot's files.\n"
    "  hyperstream index validate TABLE [--json]\n"
    "      Check every index of the current snapshot's files: checksums, binding to its\n"
    "      data file, full format check. Exit status 1 when any fails (each is listed).\n";

static int index_fail(const char *what, const hs_error *err) {
  if (strstr(err->message, what) != NULL) return hs_cli_fail("%s", err->message);
  return hs_cli_fail("%s: %s", what, err->message);
}

/* A progress line on stderr: "indexing TABLE: 3/10 files (30%) 1.2s". */
typedef struct cli_progress {
  const char *table;
  struct timespec start, last;
} cli_progress;

static double since(const struct timespec *a, const struct timespec *b) {
  return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static int on_progress(void *ctx, int64_t done, int64_t total) {
  cli_progress *p = ctx;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (done != 0 && done != total && since(&p->last, &now) < 0.1) return 0;
  p->last = now;
  fprintf(stderr, "\rindexing %s: %lld/%lld files (%lld%%) %.1fs", p->table, (long long)done,
          (long long)total, total ? (long long)(100 * done / total) : 100LL,
          since(&p->start, &now));
  if (done == total) fputc('\n', stderr);
  fflush(stderr);
  return 0;
}

/* Build (columns NULL: every configured scalar column). */
static int run_build(hs_table *t, const char *path, const char *const *cols, size_t n,
                     uint32_t threads, int progress, int json) {
  cli_progress p = {path, {0, 0}, {0, 0}};
  clock_gettime(CLOCK_MONOTONIC, &p.start);
  p.last = p.start;
  hs_table_index_build_options bo;
  memset(&bo, 0, sizeof bo);
  bo.columns = cols;
  bo.n_columns = n;
  bo.threads = threads;
  if (progress) {
    bo.progress = on_progress;
    bo.progress_ctx = &p;
  }
  int64_t built = 0;
  hs_error err = {0};
  if (hs_table_build_configured_indexes(t, &bo, &built, &err) != HS_OK)
    return index_fail(path, &err);
  if (json)
    printf("{\"files_built\": %lld}\n", (long long)built);
  else
    printf("%s: %lld index file%s built\n", path, (long long)built, built == 1 ? "" : "s");
  return HS_CLI_OK;
}

/* --param KEY=VALUE into a JSON object (numbers and true/false as such). */
static int add_param(json_t *params, const char *kv) {
  const char *eq = strchr(kv, '=');
  if (eq == NULL || eq == kv) return hs_cli_usage_error("index: --param expects KEY=VALUE");
  char key[128];
  size_t kl = (size_t)(eq - kv);
  if (kl >= sizeof key) return hs_cli_usage_error("index: --param key too long");
  memcpy(key, kv, kl);
  key[kl] = '\0';
  json_t *v = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
  if (v == NULL) v = json_string(eq + 1);
  json_object_set_new(params, key, v);
  return HS_CLI_OK;
}

static int print_list(hs_table *t, const char *path, int json) {
  hs_table_index_info *v = NULL;
  size_t n = 0;
  hs_error err = {0};
  if (hs_table_list_indexes(t, &v, &n, &err) != HS_OK) return index_fail(path, &err);
  if (json) {
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
      json_t *params = json_loads(v[i].params, 0, NULL);
      json_array_append_new(
          arr,
          json_pack("{s:s,s:s,s:o,s:b,s:I,s:I}", "column", v[i].column, "kind", v[i].kind, "params",
                    params ? params : json_object(), "is_vector", v[i].is_vector, "files_indexed",
                    (json_int_t)v[i].files_indexed, "files_total", (json_int_t)v[i].files_total));
    }
    char *text = json_dumps(arr, JSON_INDENT(2));
    json_decref(arr);
    if (text != NULL) puts(text);
    free(text);
  } else if (n == 0) {
    printf("%s: no indexes\n", path);
  } else {
    printf("%-24s %-14s %-12s %s\n", "COLUMN", "KIND", "FILES", "PARAMS");
    for (size_t i = 0; i < n; i++) {
      char files[48];
      snprintf(files, sizeof files, "%lld/%lld", (long long)v[i].files_indexed,
               (long long)v[i].files_total);
      printf("%-24s %-14s %-12s %s\n", v[i].column, v[i].kind, files, v[i].params);
    }
  }
  hs_table_index_info_free(v, n);
  return HS_CLI_OK;
}

/* index validate: every problem on stdout (text or JSON); status 1 if any. */
static int run_validate(hs_table *t, const char *path, int json) {
  hs_table_index_problem *v = NULL;
  size_t n = 0;
  int64_t checked = 0;
  hs_error err = {0};
  if (hs_table_validate_indexes(t, -1, &v, &n, &checked, &err) != HS_OK)
    return index_fail(path, &err);
  if (json) {
    json_t *list = json_array();
    for (size_t i = 0; list != NULL && i < n; i++)
      json_array_append_new(
          list, json_pack("{s:s, s:s, s:s, s:s}", "data_file", v[i].data_file, "index_file",
                          v[i].index_file, "column", v[i].column, "problem", v[i].message));
    json_t *o = json_pack("{s:I, s:o}", "checked", (json_int_t)checked, "problems", list);
    char *text = o ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (text != NULL) puts(text);
    free(text);
  } else {
    for (size_t i = 0; i < n; i++)
      printf("%s: %s%s%s (for %s): %s\n", path, v[i].index_file, v[i].column[0] ? " column " : "",
             v[i].column, v[i].data_file, v[i].message);
    printf("%s: %lld indexes checked, %zu problem%s\n", path, (long long)checked, n,
           n == 1 ? "" : "s");
  }
  hs_table_index_problems_free(v, n);
  return n == 0 ? HS_CLI_OK : HS_CLI_FAILED;
}

int hs_cli_index(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    fputs(index_usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? HS_CLI_USAGE : HS_CLI_OK;
  }
  const char *sub = argv[1];
  bool add = strcmp(sub, "add") == 0, drop = strcmp(sub, "drop") == 0;
  bool list = strcmp(sub, "list") == 0, build = strcmp(sub, "build") == 0;
  bool validate = strcmp(sub, "validate") == 0;
  if (!add && !drop && !list && !build && !validate)
    return hs_cli_usage_error(
        "index: unknown subcommand '%s' (expected add, drop, list, build or validate)", sub);
  const char *path = NULL, *kind = "inverted";
  const char **cols = calloc((size_t)argc, sizeof *cols);
  size_t n = 0;
  int json = 0, progress = isatty(STDERR_FILENO), no_build = 0, rc = HS_CLI_OK;
  int64_t threads = 0;
  json_t *params = json_object();
  if (cols == NULL || params == NULL) {
    free(cols);
    json_decref(params);
    return hs_cli_fail("out of memory");
  }
  for (int i = 2; rc == HS_CLI_OK && i < argc; i++) {
    const char *a = argv[i];
    bool has_next = i + 1 < argc;
    if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--progress") == 0) {
      progress = 1;
    } else if (strcmp(a, "--no-progress") == 0) {
      progress = 0;
    } else if (strcmp(a, "--no-build") == 0 && add) {
      no_build = 1;
    } else if (strcmp(a, "--kind") == 0 && add && has_next) {
      kind = argv[++i];
    } else if (strcmp(a, "--param") == 0 && add && has_next) {
      rc = add_param(params, argv[++i]);
    } else if (strcmp(a, "--threads") == 0 && build && has_next) {
      if (!hs_cli_parse_count(argv[++i], &threads) || threads > 1024)
        rc = hs_cli_usage_error("index build: --threads expects a count up to 1024");
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(index_usage, stdout);
      free(cols);
      json_decref(params);
      return HS_CLI_OK;
    } else if (a[0] == '-' && a[1] != '\0') {
      rc = hs_cli_usage_error("index %s: unknown or incomplete option '%s'", sub, a);
    } else if (path == NULL) {
      path = a;
    } else {
      cols[n++] = a;
    }
  }
  if (rc == HS_CLI_OK && path == NULL) rc = hs_cli_usage_error("index %s: missing TABLE", sub);
  if (rc == HS_CLI_OK && (add || drop) && n == 0)
    rc = hs_cli_usage_error("index %s: name at least one COLUMN", sub);
  if (rc == HS_CLI_OK && (list || validate) && n > 0)
    rc = hs_cli_usage_error("index %s: takes only TABLE, got '%s'", sub, cols[0]);
  hs_table *t = NULL;
  hs_error err = {0};
  if (rc == HS_CLI_OK && hs_table_open(path, &t, &err) != HS_OK) rc = index_fail(path, &err);
  char *ptext = rc == HS_CLI_OK ? json_dumps(params, JSON_COMPACT) : NULL;
  char **bare = calloc(n + 1, sizeof *bare); /* add: COLUMN without :KIND */
  if (rc == HS_CLI_OK && bare == NULL) rc = hs_cli_fail("out of memory");
  for (size_t i = 0; rc == HS_CLI_OK && add && i < n; i++) {
    const char *colon = strrchr(cols[i], ':');
    bare[i] = colon ? strndup(cols[i], (size_t)(colon - cols[i])) : strdup(cols[i]);
    if (bare[i] == NULL) {
      rc = hs_cli_fail("out of memory");
      break;
    }
    /* --param goes with --kind: columns naming their own :KIND take none. */
    if (hs_table_add_index(t, bare[i], colon ? colon + 1 : kind, colon ? NULL : ptext, &err) !=
        HS_OK)
      rc = index_fail(path, &err);
    else if (!json)
      printf("%s: index on %s (%s)\n", path, bare[i], colon ? colon + 1 : kind);
  }
  for (size_t i = 0; rc == HS_CLI_OK && drop && i < n; i++) {
    if (hs_table_drop_index(t, cols[i], &err) != HS_OK)
      rc = index_fail(path, &err);
    else if (!json)
      printf("%s: dropped the index on %s\n", path, cols[i]);
  }
  if (rc == HS_CLI_OK && add && !no_build) {
    for (size_t i = 0; i < n; i++) cols[i] = bare[i]; /* borrowed names */
    rc = run_build(t, path, cols, n, 0, progress, json);
  } else if (rc == HS_CLI_OK && add && json) {
    printf("{\"files_built\": 0}\n");
  }
  if (rc == HS_CLI_OK && list) rc = print_list(t, path, json);
  if (rc == HS_CLI_OK && validate) rc = run_validate(t, path, json);
  if (rc == HS_CLI_OK && build)
    rc = run_build(t, path, n ? cols : NULL, n, (uint32_t)threads, progress, json);
  if (rc == HS_CLI_OK && drop && json) printf("{\"dropped\": %zu}\n", n);
  for (size_t i = 0; bare != NULL && i < n; i++) free(bare[i]);
  free(bare);
  free(ptext);
  hs_table_free(t);
  free(cols);
  json_decref(params);
  if (rc == HS_CLI_OK && fflush(stdout) != 0) rc = hs_cli_fail("writing to stdout failed");
  return rc;
}

/* ------------------------------------------------------------ explain */

/* What an explain cost the object store (Python's io_requests,
 * io_bytes_read, io_round_trips). */
typedef struct explain_io {
  uint64_t requests, bytes_read, round_trips;
} explain_io;

/* The same keys as Python's Table.explain(...).stats (python/src/indexes.c),
 * so the two can be compared key by key. */
static int print_explain_json(const char *filter, const hs_table_explain_info *ex,
                              const hs_scan_file_info *files, size_t n_files,
                              const explain_io *io) {
  const hs_scan_stats *s = &ex->scan;
  json_t *per_file = json_array();
  for (size_t i = 0; per_file != NULL && i < n_files; i++) {
    const hs_scan_file_info *f = &files[i];
    json_array_append_new(
        per_file,
        json_pack("{s:s, s:b, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s}", "path",
                  f->path, "indexed", f->indexed, "index_columns", f->index_columns, "rows",
                  (json_int_t)f->rows, "row_groups_read", (json_int_t)f->row_groups_read,
                  "row_groups_pruned", (json_int_t)f->row_groups_pruned, "pages",
                  (json_int_t)f->pages, "pages_pruned", (json_int_t)f->pages_pruned,
                  "index_rows_candidate", (json_int_t)f->rows_candidate, "index_rows_eliminated",
                  (json_int_t)f->rows_eliminated, "rows_scanned", (json_int_t)f->rows_scanned,
                  "rows_matched", (json_int_t)f->rows_matched, "rows_deleted",
                  (json_int_t)f->rows_deleted, "index_rejected", f->index_rejected));
  }
  json_t *o = json_pack(
      "{s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
      "s:I, s:I, s:I, s:s, s:o, s:I, s:I, s:I}",
      "filter", filter ? json_string(filter) : json_null(), "manifests_read",
      (json_int_t)s->manifests_read, "files_planned", (json_int_t)s->files_planned, "files_pruned",
      (json_int_t)s->files_pruned, "files_read", (json_int_t)s->files_read, "row_groups_read",
      (json_int_t)s->row_groups_read, "row_groups_pruned", (json_int_t)s->row_groups_pruned,
      "rows_scanned", (json_int_t)s->rows_scanned, "rows_matched", (json_int_t)s->rows_matched,
      "rows_returned", (json_int_t)s->rows_returned, "delete_files", (json_int_t)s->delete_files,
      "rows_deleted", (json_int_t)s->rows_deleted, "page_row_groups_indexed",
      (json_int_t)ex->pages.row_groups_indexed, "pages", (json_int_t)ex->pages.pages,
      "pages_pruned", (json_int_t)ex->pages.pages_pruned, "page_rows_pruned",
      (json_int_t)ex->pages.rows_pruned, "files_indexed", (json_int_t)ex->index.files_indexed,
      "index_rows_candidate", (json_int_t)ex->index.rows_candidate, "index_rows_eliminated",
      (json_int_t)ex->index.rows_eliminated, "files_index_rejected",
      (json_int_t)ex->index.files_index_rejected, "index_rejected", ex->index.index_rejected,
      "files", per_file, "io_requests", (json_int_t)io->requests, "io_bytes_read",
      (json_int_t)io->bytes_read, "io_round_trips", (json_int_t)io->round_trips);
  char *text = o ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
  json_decref(o);
  if (text == NULL) return hs_cli_fail("explain: out of memory formatting JSON");
  int ok = puts(text) >= 0 && fflush(stdout) == 0;
  free(text);
  return ok ? HS_CLI_OK : hs_cli_fail("writing to stdout failed");
}

enum { EXPLAIN_FILES_SHOWN = 20 }; /* per-file lines in the text; --json lists all */

static int print_explain_text(const char *path, const char *filter, const hs_table_explain_info *ex,
                              const hs_scan_file_info *files, size_t n_files,
                              const explain_io *io) {
  const hs_scan_stats *s = &ex->scan;
  char a[32], b[32], c[32], d[32], e[32], g[32];
  printf("Scan %s\n  filter:     %s\n", path, filter ? filter : "(none)");
  printf("  files:      %s planned, %s pruned by partition values / column bounds, %s read\n",
         hs_cli_group(s->files_planned, a, sizeof a), hs_cli_group(s->files_pruned, b, sizeof b),
         hs_cli_group(s->files_read, c, sizeof c));
  printf("  row groups: %s read, %s pruned by statistics\n",
         hs_cli_group(s->row_groups_read, a, sizeof a),
         hs_cli_group(s->row_groups_pruned, b, sizeof b));
  printf("  pages:      %s of %s pages pruned by page indexes (%s rows)\n",
         hs_cli_group(ex->pages.pages_pruned, a, sizeof a),
         hs_cli_group(ex->pages.pages, b, sizeof b),
         hs_cli_group(ex->pages.rows_pruned, c, sizeof c));
  if (ex->index.files_indexed > 0)
    printf(
        "  index:      %s of %s files read answered by a scalar index: %s candidate rows, "
        "%s eliminated\n",
        hs_cli_group(ex->index.files_indexed, a, sizeof a),
        hs_cli_group(s->files_read, b, sizeof b),
        hs_cli_group(ex->index.rows_candidate, c, sizeof c),
        hs_cli_group(ex->index.rows_eliminated, d, sizeof d));
  else
    printf("  index:      no scalar index used\n");
  if (ex->index.files_index_rejected > 0)
    printf(
        "  INDEX IGNORED: %s files' registered index did not match the data file (read "
        "exactly instead): %s\n",
        hs_cli_group(ex->index.files_index_rejected, a, sizeof a), ex->index.index_rejected);
  if (s->delete_files > 0)
    printf(
        "  deletes:    %s delete files in the snapshot; %s rows of the files read are deleted "
        "(never read)\n",
        hs_cli_group(s->delete_files, a, sizeof a), hs_cli_group(s->rows_deleted, b, sizeof b));
  printf("  rows:       %s scanned, %s matched\n", hs_cli_group(s->rows_scanned, a, sizeof a),
         hs_cli_group(s->rows_matched, b, sizeof b));
  if (n_files > 0) printf("  per file:\n");
  for (size_t i = 0; i < n_files && i < EXPLAIN_FILES_SHOWN; i++) {
    const hs_scan_file_info *f = &files[i];
    const char *base = strrchr(f->path, '/');
    printf("    %s: %s rows; ", base ? base + 1 : f->path, hs_cli_group(f->rows, a, sizeof a));
    if (f->indexed)
      printf("index on %s: %s candidates, %s eliminated; ", f->index_columns,
             hs_cli_group(f->rows_candidate, a, sizeof a),
             hs_cli_group(f->rows_eliminated, b, sizeof b));
    else
      printf("no index; ");
    if (f->index_rejected[0] != '\0') printf("index ignored: %s; ", f->index_rejected);
    printf("row groups %s read, %s pruned; pages %s of %s read; %s scanned, %s matched\n",
           hs_cli_group(f->row_groups_read, a, sizeof a),
           hs_cli_group(f->row_groups_pruned, b, sizeof b),
           hs_cli_group(f->pages - f->pages_pruned, c, sizeof c),
           hs_cli_group(f->pages, d, sizeof d), hs_cli_group(f->rows_scanned, e, sizeof e),
           hs_cli_group(f->rows_matched, g, sizeof g));
  }
  if (n_files > EXPLAIN_FILES_SHOWN)
    printf("    ... %s more files (--json lists all)\n",
           hs_cli_group((int64_t)(n_files - EXPLAIN_FILES_SHOWN), a, sizeof a));
  printf("  object store: %s requests, %s bytes read, %s dependent round trips\n",
         hs_cli_group((int64_t)io->requests, a, sizeof a),
         hs_cli_group((int64_t)io->bytes_read, b, sizeof b),
         hs_cli_group((int64_t)io->round_trips, c, sizeof c));
  return fflush(stdout) == 0 ? HS_CLI_OK : hs_cli_fail("writing to stdout failed");
}

int hs_cli_explain(int argc, char **argv) {
  const char *path = NULL, *filter = NULL;
  int json = 0;
  int64_t snapshot = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--filter") == 0 && i + 1 < argc) {
      filter = argv[++i];
    } else if (strcmp(a, "--snapshot") == 0 && i + 1 < argc) {
      if (!hs_cli_parse_count(argv[++i], &snapshot))
        return hs_cli_usage_error("explain: --snapshot expects a snapshot id");
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(
          "Usage: hyperstream explain TABLE [--filter SQL] [--snapshot ID] [--json]\n"
          "  Run the filtered scan and show what it did: files planned and pruned,\n"
          "  row groups and pages pruned, files answered by a scalar index, and the\n"
          "  object-store requests, bytes read and dependent round trips it took.\n",
          stdout);
      return HS_CLI_OK;
    } else if (a[0] == '-' && a[1] != '\0') {
      return hs_cli_usage_error("explain: unknown or incomplete option '%s'", a);
    } else if (path == NULL) {
      path = a;
    } else {
      return hs_cli_usage_error("explain: expected one TABLE, got '%s' and '%s'", path, a);
    }
  }
  if (path == NULL) return hs_cli_usage_error("explain: missing TABLE");
  /* Empty or blank: no filter, as the scan and every front end take it. */
  if (filter != NULL && filter[strspn(filter, " \t\r\n")] == '\0') filter = NULL;
  hs_table *t = NULL;
  hs_error err = {0};
  /* The object-store cost of the open and the scan (the process's
   * counters: this command makes no other requests meanwhile). */
  hs_io_stats io0, io1;
  hs_io_stats_get(&io0);
  if (hs_table_open(path, &t, &err) != HS_OK) return index_fail(path, &err);
  hs_scan_options o;
  hs_scan_options_init(&o);
  o.filter = filter;
  o.snapshot_id = snapshot;
  hs_table_explain_info ex;
  hs_scan_file_info *files = NULL;
  size_t n_files = 0;
  hs_status st = hs_table_explain_files(t, &o, &ex, &files, &n_files, &err);
  hs_table_free(t);
  if (st != HS_OK) return index_fail(path, &err);
  hs_io_stats_get(&io1);
  explain_io io = {io1.requests - io0.requests, io1.bytes_read - io0.bytes_read,
                   io1.round_trips - io0.round_trips};
  int rc = json ? print_explain_json(filter, &ex, files, n_files, &io)
                : print_explain_text(path, filter, &ex, files, n_files, &io);
  hs_free(files);
  return rc;
}

/*
 * main.c — the `hyperstream` command-line tool: argument dispatch, help,
 * version, shared helpers and the `inspect` subcommand. `read` lives in
 * read.c, `demo` in demo.c, value formatting in format.c.
 *
 * The CLI is a front end over include/hyperstream.h (plus src/ helpers for
 * building Arrow arrays in the demo). Every failure prints one line naming
 * the file and the reason and exits non-zero; usage mistakes exit 2.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Table subcommands (table.c). */
int hs_cli_create(int argc, char **argv);
int hs_cli_write(int argc, char **argv);
int hs_cli_scan(int argc, char **argv);
int hs_cli_snapshots(int argc, char **argv);
int hs_cli_inspect_table(const char *path, int json);
bool hs_cli_is_table(const char *path);
/* Index subcommands (index.c). */
int hs_cli_index(int argc, char **argv);
int hs_cli_explain(int argc, char **argv);
/* remove-orphans, expire-snapshots (maintenance.c). */
int hs_cli_remove_orphans(int argc, char **argv);
int hs_cli_expire_snapshots(int argc, char **argv);
/* REST catalogs (catalog.c): the `catalog` listing, and connecting the
 * catalogs that rest:// arguments name before any command runs. */
int hs_cli_catalog(int argc, char **argv);
int hs_cli_connect_catalogs(int argc, char **argv);
/* delete, compact (changes.c). */
int hs_cli_delete(int argc, char **argv);
int hs_cli_compact(int argc, char **argv);
/* sql (sql.c). */
int hs_cli_sql(int argc, char **argv);

static const char hs_cli_help[] =
    "hyperstream " HS_VERSION_STRING
    " — HyperStreamDB command-line tool\n"
    "\n"
    "Usage:\n"
    "  hyperstream inspect FILE.parquet [--json]\n"
    "      Describe a Parquet file: schema, row groups, column chunks with\n"
    "      encodings, codecs, sizes and statistics (--json: as JSON).\n"
    "  hyperstream read FILE.parquet [--columns a,b] [--limit N] [--count]\n"
    "      Decode the file and print its first N rows (default 20) as a table,\n"
    "      or with --count only the number of rows (decoding every value).\n"
    "  hyperstream demo [--rows N] [--dim D] [--dir PATH] [--keep]\n"
    "      Write a Parquet file of N rows (default 200,000) with mixed columns\n"
    "      and D-dimensional float32 vectors (default 768), read it back with a\n"
    "      row-group statistics predicate, and report sizes and speeds.\n"
    "  hyperstream create TABLE --schema 'id:int64,name:string' | --like FILE.parquet\n"
    "      Create an Iceberg table folder ([--format-version 3]; 'type!' = NOT NULL).\n"
    "  hyperstream write TABLE FILE.parquet|FILE.csv\n"
    "      Append the file as one snapshot (CSV: header row, typed by the table).\n"
    "  hyperstream scan TABLE [--filter SQL] [--columns a,b] [--limit N] [--snapshot ID] [--csv]\n"
    "      Print rows of the current (or given) snapshot, tab-separated or as CSV.\n"
    "  hyperstream snapshots TABLE\n"
    "      List snapshots (* marks the current one).\n"
    "  hyperstream index add|drop|list|build|validate TABLE [COLUMN[:KIND]...] [--json]\n"
    "      Scalar indexes: record, drop, list (files covered) or build them\n"
    "      ('hyperstream index --help' for options).\n"
    "  hyperstream explain TABLE [--filter SQL] [--snapshot ID] [--json]\n"
    "      Run a filtered scan and show files, row groups and pages pruned and\n"
    "      what scalar indexes answered.\n"
    "  hyperstream remove-orphans TABLE [--older-than 3d] [--force] [--dry-run] [--json]\n"
    "      Remove files no snapshot or index registry reaches (failed commits,\n"
    "      dropped indexes) that are older than the given age.\n"
    "  hyperstream expire-snapshots TABLE [--older-than 5d] [--retain-last N] [--dry-run]\n"
    "      Drop old snapshots (not the current one, tagged ones or the last N)\n"
    "      and delete the files only they used.\n"
    "  hyperstream delete TABLE --filter SQL | --all\n"
    "      Delete the matching rows in one commit (write.delete.mode) and print\n"
    "      how many.\n"
    "  hyperstream compact TABLE [--target-file-size BYTES] [--filter SQL]\n"
    "      Rewrite small files and files with deletes as one replace snapshot\n"
    "      ('hyperstream compact --help' for options).\n"
    "  hyperstream inspect TABLE\n"
    "      Schema, partition specs, sort orders, properties, refs, snapshots, rows.\n"
    "  hyperstream sql [--root DIR] [--table NAME=PATH]... [--csv|--json] [QUERY]\n"
    "      Run SQL over the tables under DIR (default: the current directory) and\n"
    "      print the rows as a table, CSV or JSON lines; without QUERY, read\n"
    "      statements from stdin (an interactive prompt on a terminal).\n"
    "  hyperstream catalog URI [NAMESPACE] [--json]\n"
    "      List the namespaces and tables of an Iceberg REST catalog\n"
    "      (rest://host:port[/path]); its tables are URI#namespace.table in\n"
    "      every command, with options from HS_CATALOG_WAREHOUSE, _TOKEN,\n"
    "      _CREDENTIAL, _SCOPE, _PREFIX, _TIMEOUT_MS.\n"
    "  hyperstream --io-stats COMMAND ...\n"
    "      Run COMMAND, then print the object-store requests it made (by kind,\n"
    "      retries, dependent round trips, bytes) on stderr.\n"
    "  hyperstream --help | --version\n"
    "\n"
    "Exit status: 0 success, 1 failure (the message names the file and why),\n"
    "2 usage error.\n";

int hs_cli_usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("hyperstream: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs("\nTry 'hyperstream --help' for usage.\n", stderr);
  va_end(ap);
  return HS_CLI_USAGE;
}

int hs_cli_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("hyperstream: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return HS_CLI_FAILED;
}

bool hs_cli_parse_count(const char *s, int64_t *out) {
  int64_t v = 0;
  bool any = false;
  if (s == NULL) return false;
  for (const char *p = s; *p != '\0'; p++) {
    if ((*p == '_' || *p == ',') && any) continue;
    if (*p < '0' || *p > '9') return false;
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (*p - '0');
    any = true;
  }
  if (!any) return false;
  *out = v;
  return true;
}

const char *hs_cli_group(int64_t n, char *buf, size_t cap) {
  char digits[32];
  snprintf(digits, sizeof digits, "%lld", (long long)(n < 0 ? -n : n));
  size_t len = strlen(digits), o = 0;
  if (n < 0 && o + 1 < cap) buf[o++] = '-';
  for (size_t k = 0; k < len && o + 1 < cap; k++) {
    if (k > 0 && (len - k) % 3 == 0 && o + 1 < cap) buf[o++] = ',';
    if (o + 1 < cap) buf[o++] = digits[k];
  }
  buf[o] = '\0';
  return buf;
}

int hs_cli_inspect(int argc, char **argv) {
  const char *path = NULL;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = 1;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs("Usage: hyperstream inspect FILE.parquet [--json]\n", stdout);
      return HS_CLI_OK;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return hs_cli_usage_error("inspect: unknown option '%s'", argv[i]);
    } else if (path == NULL) {
      path = argv[i];
    } else {
      return hs_cli_usage_error("inspect: expected one file, got '%s' and '%s'", path, argv[i]);
    }
  }
  if (path == NULL) return hs_cli_usage_error("inspect: missing FILE.parquet");
  if (hs_cli_is_table(path)) return hs_cli_inspect_table(path, json);
  char *text = NULL;
  hs_error err = {0};
  hs_status st = hs_parquet_inspect(path, json, &text, &err);
  if (st != HS_OK) {
    int rc = strstr(err.message, path) != NULL ? hs_cli_fail("%s", err.message)
                                               : hs_cli_fail("%s: %s", path, err.message);
    hs_free(text);
    return rc;
  }
  size_t len = strlen(text);
  fwrite(text, 1, len, stdout);
  if (len == 0 || text[len - 1] != '\n') fputc('\n', stdout);
  hs_free(text);
  return fflush(stdout) == 0 ? HS_CLI_OK : hs_cli_fail("writing to stdout failed");
}

static int run(int argc, char **argv);

/* `--io-stats` before the command: the object-store requests it made
 * (hs_io_stats), one line on stderr when it ends. */
int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--io-stats") == 0) {
    argv[1] = argv[0];
    int rc = run(argc - 1, argv + 1);
    hs_io_stats s;
    hs_io_stats_get(&s);
    fprintf(stderr,
            "io: %llu requests (%llu GET, %llu HEAD, %llu LIST, %llu PUT, %llu POST, %llu DELETE; "
            "%llu retries), %llu round trips, %llu bytes read, %llu bytes written\n",
            (unsigned long long)s.requests, (unsigned long long)s.gets, (unsigned long long)s.heads,
            (unsigned long long)s.lists, (unsigned long long)s.puts, (unsigned long long)s.posts,
            (unsigned long long)s.deletes, (unsigned long long)s.retries,
            (unsigned long long)s.round_trips, (unsigned long long)s.bytes_read,
            (unsigned long long)s.bytes_written);
    return rc;
  }
  return run(argc, argv);
}

static int run(int argc, char **argv) {
  if (argc < 2) {
    fputs(hs_cli_help, stderr);
    return HS_CLI_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    fputs(hs_cli_help, stdout);
    return HS_CLI_OK;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0 || strcmp(cmd, "version") == 0) {
    printf("hyperstream %s\n", HS_VERSION_STRING);
    return HS_CLI_OK;
  }
  int rc = hs_cli_connect_catalogs(argc, argv);
  if (rc != HS_CLI_OK) return rc;
  if (strcmp(cmd, "catalog") == 0) return hs_cli_catalog(argc - 1, argv + 1);
  if (strcmp(cmd, "inspect") == 0) return hs_cli_inspect(argc - 1, argv + 1);
  if (strcmp(cmd, "read") == 0) return hs_cli_read(argc - 1, argv + 1);
  if (strcmp(cmd, "demo") == 0) return hs_cli_demo(argc - 1, argv + 1);
  if (strcmp(cmd, "create") == 0) return hs_cli_create(argc - 1, argv + 1);
  if (strcmp(cmd, "write") == 0) return hs_cli_write(argc - 1, argv + 1);
  if (strcmp(cmd, "scan") == 0) return hs_cli_scan(argc - 1, argv + 1);
  if (strcmp(cmd, "snapshots") == 0) return hs_cli_snapshots(argc - 1, argv + 1);
  if (strcmp(cmd, "index") == 0) return hs_cli_index(argc - 1, argv + 1);
  if (strcmp(cmd, "explain") == 0) return hs_cli_explain(argc - 1, argv + 1);
  if (strcmp(cmd, "remove-orphans") == 0) return hs_cli_remove_orphans(argc - 1, argv + 1);
  if (strcmp(cmd, "expire-snapshots") == 0) return hs_cli_expire_snapshots(argc - 1, argv + 1);
  if (strcmp(cmd, "delete") == 0) return hs_cli_delete(argc - 1, argv + 1);
  if (strcmp(cmd, "compact") == 0) return hs_cli_compact(argc - 1, argv + 1);
  if (strcmp(cmd, "sql") == 0) return hs_cli_sql(argc - 1, argv + 1);
  if (cmd[0] == '-') return hs_cli_usage_error("unknown option '%s'", cmd);
  return hs_cli_usage_error(
      "unknown command '%s' (expected inspect, read, demo, create, write, scan, snapshots, index, "
      "explain, remove-orphans, expire-snapshots, delete, compact, sql or catalog)",
      cmd);
}

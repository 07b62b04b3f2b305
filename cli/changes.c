/*
 * changes.c — row changes and compaction from the command line:
 *   delete TABLE --filter SQL | --all
 *       delete the matching live rows in one commit (hs_table_change_rows,
 *       src/query/rowdelta.c; written as write.delete.mode says);
 *   compact TABLE [--target-file-size BYTES] [--filter SQL] [--min-input-files N]
 *       rewrite small files and files with deletes as one replace snapshot
 *       (hs_table_compact, src/query/compact.c), then build the configured
 *       indexes of the new files (from the written batches where it can).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hyperstream.h"

int hs_cli_delete(int argc, char **argv);
int hs_cli_compact(int argc, char **argv);

static const char delete_usage[] =
    "Usage: hyperstream delete TABLE --filter SQL | --all\n"
    "  Delete the live rows of TABLE's current snapshot matching the SQL boolean\n"
    "  filter (e.g. \"id < 100 AND name = 'x'\") in one commit, and print how many.\n"
    "  Written as the table property write.delete.mode says: merge-on-read (the\n"
    "  default: position delete files in format v2, deletion vectors in v3) or\n"
    "  copy-on-write (the touched data files are rewritten). --all deletes every\n"
    "  row; without --filter or --all nothing is deleted (usage error).\n";

static const char compact_usage[] =
    "Usage: hyperstream compact TABLE [--target-file-size BYTES] [--filter SQL]\n"
    "                                 [--min-input-files N] [--json]\n"
    "  Rewrite the current snapshot's small data files (under 3/4 of the target),\n"
    "  files with deletes and files of an older partition spec into files of\n"
    "  about BYTES (default: the table property write.target-file-size-bytes,\n"
    "  else 512 MiB), in the current partition spec and sort order, deleted rows\n"
    "  left out, as one 'replace' snapshot; delete files that then apply to no\n"
    "  data file are removed with it. --filter limits it to the files the filter\n"
    "  may match (partition values, column bounds). A partition without deletes is\n"
    "  rewritten only from N files (default 2). Rows read the same before and\n"
    "  after. The configured indexes of the new files are built afterwards.\n";

/* The message of `err`, prefixed by `path` unless it names it. */
static int fail_at(const char *path, const hs_error *err) {
  return strstr(err->message, path) != NULL ? hs_cli_fail("%s", err->message)
                                            : hs_cli_fail("%s: %s", path, err->message);
}

int hs_cli_delete(int argc, char **argv) {
  const char *path = NULL, *filter = NULL;
  int all = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--filter") == 0 && i + 1 < argc) {
      filter = argv[++i];
    } else if (strcmp(a, "--all") == 0) {
      all = 1;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(delete_usage, stdout);
      return HS_CLI_OK;
    } else if (a[0] == '-' && a[1] != '\0') {
      return hs_cli_usage_error("delete: unknown or incomplete option '%s'", a);
    } else if (path == NULL) {
      path = a;
    } else {
      return hs_cli_usage_error("delete: expected one TABLE, got '%s' and '%s'", path, a);
    }
  }
  if (path == NULL) return hs_cli_usage_error("delete: missing TABLE");
  if (filter != NULL && all) return hs_cli_usage_error("delete: give --filter or --all, not both");
  if (filter == NULL && !all)
    return hs_cli_usage_error("delete: no --filter given (use --all to delete every row)");
  if (filter != NULL && filter[strspn(filter, " \t\r\n")] == '\0')
    return hs_cli_usage_error("delete: --filter is empty (use --all to delete every row)");
  hs_table *t = NULL;
  hs_error err = {0};
  hs_status st = hs_table_open(path, &t, &err);
  hs_row_change_result res;
  memset(&res, 0, sizeof res);
  if (st == HS_OK) {
    const char *filters[1] = {filter};
    hs_row_change c;
    memset(&c, 0, sizeof c);
    c.snapshot_id = -1;
    c.deletes = filters;
    c.n_deletes = 1;
    c.mode_property = "write.delete.mode";
    c.what = "delete";
    st = hs_table_change_rows(t, &c, &res, &err);
  }
  hs_table_free(t);
  if (st != HS_OK) return fail_at(path, &err);
  char b[32];
  if (res.snapshot_id < 0)
    printf("deleted 0 rows (nothing committed)\n");
  else
    printf("deleted %s rows (snapshot %lld)\n", hs_cli_group(res.rows_deleted, b, sizeof b),
           (long long)res.snapshot_id);
  return fflush(stdout) == 0 ? HS_CLI_OK : hs_cli_fail("writing to stdout failed");
}

int hs_cli_compact(int argc, char **argv) {
  const char *path = NULL, *filter = NULL;
  int64_t target = 0, min_in = 0;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--filter") == 0 && i + 1 < argc) {
      filter = argv[++i];
    } else if (strcmp(a, "--target-file-size") == 0 && i + 1 < argc) {
      if (!hs_cli_parse_count(argv[++i], &target) || target <= 0)
        return hs_cli_usage_error(
            "compact: --target-file-size expects a positive number of bytes, got '%s'", argv[i]);
    } else if (strcmp(a, "--min-input-files") == 0 && i + 1 < argc) {
      if (!hs_cli_parse_count(argv[++i], &min_in) || min_in <= 0 || min_in > INT32_MAX)
        return hs_cli_usage_error(
            "compact: --min-input-files expects a positive whole number, got '%s'", argv[i]);
    } else if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(compact_usage, stdout);
      return HS_CLI_OK;
    } else if (a[0] == '-' && a[1] != '\0') {
      return hs_cli_usage_error("compact: unknown or incomplete option '%s'", a);
    } else if (path == NULL) {
      path = a;
    } else {
      return hs_cli_usage_error("compact: expected one TABLE, got '%s' and '%s'", path, a);
    }
  }
  if (path == NULL) return hs_cli_usage_error("compact: missing TABLE");
  hs_table *t = NULL;
  hs_error err = {0};
  hs_compact_options o = {
      .target_file_size_bytes = target, .filter = filter, .min_input_files = (int32_t)min_in};
  hs_compact_result res;
  memset(&res, 0, sizeof res);
  hs_table_appended **kept = NULL;
  size_t n_kept = 0;
  int64_t built = 0;
  hs_status st = hs_table_open(path, &t, &err);
  if (st == HS_OK) st = hs_table_compact(t, &o, &res, &kept, &n_kept, &err);
  if (st == HS_OK && res.files_added > 0) {
    hs_table_index_build_options bo;
    memset(&bo, 0, sizeof bo);
    /* Kept batches cover every new file only for unpartitioned, unsorted
     * tables; else the build finds the new files missing their indexes. */
    if (n_kept > 0 && (int64_t)n_kept == res.files_added) {
      bo.appended = (const hs_table_appended *const *)kept;
      bo.n_appended = n_kept;
    }
    st = hs_table_refresh(t, &err);
    if (st == HS_OK) st = hs_table_build_configured_indexes(t, &bo, &built, &err);
    if (st != HS_OK)
      hs_error_prefix(&err,
                      "compacted (snapshot %lld), then index build: ", (long long)res.snapshot_id);
  }
  hs_table_compacted_free(kept, n_kept);
  hs_table_free(t);
  if (st != HS_OK) return fail_at(path, &err);
  if (json) {
    printf(
        "{\"snapshot_id\": %lld, \"files_rewritten\": %lld, \"files_added\": %lld, "
        "\"delete_files_removed\": %lld, \"rows\": %lld, \"rows_dropped\": %lld, "
        "\"bytes_removed\": %lld, \"bytes_added\": %lld, \"index_files_built\": %lld}\n",
        (long long)res.snapshot_id, (long long)res.files_rewritten, (long long)res.files_added,
        (long long)res.delete_files_removed, (long long)res.rows, (long long)res.rows_dropped,
        (long long)res.bytes_removed, (long long)res.bytes_added, (long long)built);
  } else if (res.snapshot_id < 0) {
    printf("nothing to compact\n");
  } else {
    char b1[32], b2[32], b3[32], b4[32];
    printf(
        "compacted %lld data files into %lld (%s rows, %s deleted rows dropped, %lld delete "
        "files removed, %s -> %s bytes, %lld index files built; snapshot %lld)\n",
        (long long)res.files_rewritten, (long long)res.files_added,
        hs_cli_group(res.rows, b1, sizeof b1), hs_cli_group(res.rows_dropped, b2, sizeof b2),
        (long long)res.delete_files_removed, hs_cli_group(res.bytes_removed, b3, sizeof b3),
        hs_cli_group(res.bytes_added, b4, sizeof b4), (long long)built, (long long)res.snapshot_id);
  }
  return fflush(stdout) == 0 ? HS_CLI_OK : hs_cli_fail("writing to stdout failed");
}

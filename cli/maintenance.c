/*
 * maintenance.c — table upkeep:
 *   remove-orphans TABLE [--older-than AGE] [--force] [--dry-run] [--json]
 *       the files no metadata reaches (hs_table_remove_orphan_files,
 *       src/table/orphans.c); AGE default 3d as Iceberg's, never under the
 *       core's 1 h floor (HS_ORPHAN_MIN_AGE_MS) unless --force;
 *   expire-snapshots TABLE [--older-than AGE] [--retain-last N] [--dry-run] [--json]
 *       old snapshots and the files only they reached
 *       (hs_table_expire_snapshots, src/table/expire.c); AGE default 5d.
 * AGE is a number with a unit: s, m, h or d.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "hyperstream.h"

int hs_cli_remove_orphans(int argc, char **argv);
int hs_cli_expire_snapshots(int argc, char **argv);

static const char usage[] =
    "Usage: hyperstream remove-orphans TABLE [--older-than AGE] [--force] [--dry-run] [--json]\n"
    "  Remove files under TABLE's data/, index/ and metadata/ folders that no\n"
    "  snapshot, metadata-log entry or index registry reaches (left by failed\n"
    "  commits, dropped indexes, replaced registries), if last modified more\n"
    "  than AGE ago (default 3d; units s, m, h, d). An AGE under 1h is raised\n"
    "  to 1h, so writes still in flight keep their files; --force takes AGE as\n"
    "  given (a write in flight may then fail cleanly, nothing is lost).\n"
    "  --dry-run lists what the same command would remove, removing nothing.\n";

/* "90s", "15m", "12h", "3d" into milliseconds; false when malformed. */
static bool parse_age(const char *s, int64_t *ms) {
  char *end = NULL;
  long long n = strtoll(s, &end, 10);
  if (end == s || n < 0) return false;
  int64_t unit = 0;
  if (strcmp(end, "s") == 0) unit = 1000;
  if (strcmp(end, "m") == 0) unit = 60 * 1000;
  if (strcmp(end, "h") == 0) unit = 3600 * 1000;
  if (strcmp(end, "d") == 0) unit = 86400 * 1000;
  if (unit == 0 || n > 100LL * 365 * 86400 * 1000 / unit) return false; /* 100 years */
  *ms = (int64_t)n * unit;
  return true;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int hs_cli_remove_orphans(int argc, char **argv) {
  const char *path = NULL;
  int json = 0, dry_run = 0, force = 0;
  int64_t age_ms = 3LL * 86400 * 1000;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--dry-run") == 0) {
      dry_run = 1;
    } else if (strcmp(a, "--force") == 0) {
      force = 1;
    } else if (strcmp(a, "--older-than") == 0 && i + 1 < argc) {
      if (!parse_age(argv[++i], &age_ms))
        return hs_cli_usage_error(
            "remove-orphans: --older-than expects an age like 90s, 15m, 12h or 3d, got '%s'",
            argv[i]);
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return HS_CLI_OK;
    } else if (a[0] == '-' && a[1] != '\0') {
      return hs_cli_usage_error("remove-orphans: unknown or incomplete option '%s'", a);
    } else if (path == NULL) {
      path = a;
    } else {
      return hs_cli_usage_error("remove-orphans: expected one TABLE, got '%s' and '%s'", path, a);
    }
  }
  if (path == NULL) return hs_cli_usage_error("remove-orphans: missing TABLE");
  hs_table *t = NULL;
  hs_error err = {0};
  hs_table_orphan_file *files = NULL;
  size_t n = 0;
  hs_status st = hs_table_open(path, &t, &err);
  if (st == HS_OK)
    st = hs_table_remove_orphan_files(
        t, now_ms() - age_ms, (dry_run ? HS_ORPHAN_DRY_RUN : 0) | (force ? HS_ORPHAN_FORCE : 0),
        &files, &n, &err);
  hs_table_free(t);
  if (st != HS_OK)
    return strstr(err.message, path) ? hs_cli_fail("%s", err.message)
                                     : hs_cli_fail("%s: %s", path, err.message);
  int64_t bytes = 0;
  for (size_t i = 0; i < n; i++) bytes += files[i].size;
  int ok = 1;
  if (json) {
    json_t *list = json_array();
    for (size_t i = 0; list != NULL && i < n; i++)
      json_array_append_new(
          list, json_pack("{s:s, s:I, s:I}", "path", files[i].path, "size",
                          (json_int_t)files[i].size, "mtime_ms", (json_int_t)files[i].mtime_ms));
    json_t *o = json_pack("{s:b, s:I, s:I, s:o}", "dry_run", dry_run, "files_removed",
                          (json_int_t)(dry_run ? 0 : n), "bytes", (json_int_t)bytes, "files", list);
    char *text = o ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    ok = text != NULL && puts(text) >= 0;
    free(text);
  } else {
    char a[32], b[32];
    for (size_t i = 0; i < n; i++) printf("%s\n", files[i].path);
    printf("%s %s orphan files, %s bytes\n", dry_run ? "would remove" : "removed",
           hs_cli_group((int64_t)n, a, sizeof a), hs_cli_group(bytes, b, sizeof b));
  }
  hs_free(files);
  if (!ok) return hs_cli_fail("remove-orphans: out of memory formatting the output");
  return fflush(stdout) == 0 ? HS_CLI_OK : hs_cli_fail("writing to stdout failed");
}

static const char expire_usage[] =
    "Usage: hyperstream expire-snapshots TABLE [--older-than AGE] [--retain-last N] [--dry-run]\n"
    "                                    [--json]\n"
    "  Remove snapshots committed more than AGE ago (default 5d) from TABLE's\n"
    "  metadata, keeping the current one, those a tag or branch names and the\n"
    "  last N of the current history (default 1); then delete the manifest\n"
    "  lists, manifests, data and index files only they used. --dry-run\n"
    "  changes nothing and lists what would go.\n";

int hs_cli_expire_snapshots(int argc, char **argv) {
  const char *path = NULL;
  int json = 0, dry_run = 0;
  int64_t age_ms = 5LL * 86400 * 1000, retain = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--dry-run") == 0) {
      dry_run = 1;
    } else if (strcmp(a, "--older-than") == 0 && i + 1 < argc) {
      if (!parse_age(argv[++i], &age_ms))
        return hs_cli_usage_error(
            "expire-snapshots: --older-than expects an age like 90s, 15m, 12h or 5d, got '%s'",
            argv[i]);
    } else if (strcmp(a, "--retain-last") == 0 && i + 1 < argc) {
      if (!hs_cli_parse_count(argv[++i], &retain) || retain < 1 || retain > INT32_MAX)
        return hs_cli_usage_error("expire-snapshots: --retain-last expects a count >= 1, got '%s'",
                                  argv[i]);
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(expire_usage, stdout);
      return HS_CLI_OK;
    } else if (a[0] == '-' && a[1] != '\0') {
      return hs_cli_usage_error("expire-snapshots: unknown or incomplete option '%s'", a);
    } else if (path == NULL) {
      path = a;
    } else {
      return hs_cli_usage_error("expire-snapshots: expected one TABLE, got '%s' and '%s'", path, a);
    }
  }
  if (path == NULL) return hs_cli_usage_error("expire-snapshots: missing TABLE");
  hs_table *t = NULL;
  hs_error err = {0};
  int64_t *ids = NULL;
  size_t n_ids = 0, n = 0;
  hs_table_orphan_file *files = NULL;
  hs_status st = hs_table_open(path, &t, &err);
  if (st == HS_OK)
    st = hs_table_expire_snapshots(t, now_ms() - age_ms, (int32_t)retain, dry_run, &ids, &n_ids,
                                   &files, &n, &err);
  hs_table_free(t);
  if (st != HS_OK)
    return strstr(err.message, path) ? hs_cli_fail("%s", err.message)
                                     : hs_cli_fail("%s: %s", path, err.message);
  int64_t bytes = 0;
  for (size_t i = 0; i < n; i++) bytes += files[i].size;
  int ok = 1;
  if (json) {
    json_t *idl = json_array(), *fl = json_array();
    for (size_t i = 0; idl != NULL && i < n_ids; i++)
      json_array_append_new(idl, json_integer((json_int_t)ids[i]));
    for (size_t i = 0; fl != NULL && i < n; i++)
      json_array_append_new(fl, json_string(files[i].path));
    json_t *o = json_pack("{s:b, s:o, s:o, s:I}", "dry_run", dry_run, "snapshots_expired", idl,
                          "files_deleted", fl, "bytes", (json_int_t)bytes);
    char *text = o ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    ok = text != NULL && puts(text) >= 0;
    free(text);
  } else {
    char a[32], b[32], c[32];
    for (size_t i = 0; i < n_ids; i++) printf("snapshot %lld\n", (long long)ids[i]);
    for (size_t i = 0; i < n; i++) printf("%s\n", files[i].path);
    printf("%s %s snapshots; %s %s files, %s bytes\n", dry_run ? "would expire" : "expired",
           hs_cli_group((int64_t)n_ids, a, sizeof a), dry_run ? "would delete" : "deleted",
           hs_cli_group((int64_t)n, b, sizeof b), hs_cli_group(bytes, c, sizeof c));
  }
  hs_free(ids);
  hs_free(files);
  if (!ok) return hs_cli_fail("expire-snapshots: out of memory formatting the output");
  return fflush(stdout) == 0 ? HS_CLI_OK : hs_cli_fail("writing to stdout failed");
}

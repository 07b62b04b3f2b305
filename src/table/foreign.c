/*
 * foreign.c — opening tables other writers made. Java catalogs (Hive,
 * JDBC, REST) and pyiceberg's catalogs name metadata files
 * "NNNNN-<uuid>.metadata.json" (NNNNN counts versions from 00000) and keep
 * the pointer to the current one in the catalog, not in the folder; there
 * is no version hint. hs_table_open on such a folder (no vN.metadata.json)
 * loads the highest NNNNN. Two files with the same number can exist when
 * two writers raced and one lost at the catalog: the newer
 * last-updated-ms wins (then the greater name), and a caller who knows
 * better opens the exact file with hs_table_open_metadata.
 *
 * Such tables are read-only here: committing vN files beside them would
 * fork the table behind the catalog's back. hs_table_open_metadata opens
 * one metadata file as a static table (refresh keeps it; commits fail).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/fs.h"
#include "timetravel.h"

/* The NNNNN of "NNNNN-<anything>.metadata.json", of its gzip form
 * "NNNNN-<anything>.gz.metadata.json" (Java, pyiceberg) or the older
 * "NNNNN-<anything>.metadata.json.gz", or -1. */
static int64_t foreign_number(const char *name) {
  size_t digits = 0;
  while (name[digits] >= '0' && name[digits] <= '9') digits++;
  if (digits == 0 || digits > 18 || name[digits] != '-') return -1;
  size_t len = strlen(name);
  static const char *const suffixes[] = {".metadata.json", ".metadata.json.gz"};
  for (size_t i = 0; i < 2; i++) {
    size_t sl = strlen(suffixes[i]);
    if (len > digits + 1 + sl && strcmp(name + len - sl, suffixes[i]) == 0)
      return (int64_t)strtoll(name, NULL, 10);
  }
  return -1;
}

/* last-updated-ms of the metadata file at `path`, or -1 when unreadable. */
static int64_t last_updated(const char *path) {
  hs_buf text;
  hs_buf_init(&text);
  int64_t v = -1;
  if (hs_table_metadata_bytes(path, &text, NULL) == HS_OK) {
    hs_arena a;
    hs_arena_init(&a);
    hs_iceberg_metadata m;
    if (hs_iceberg_metadata_parse((const char *)text.data, text.len, &a, &m, NULL) == HS_OK) {
      v = m.last_updated_ms;
    }
    hs_arena_reset(&a);
  }
  hs_buf_free(&text);
  return v;
}

hs_status hs_table_load_foreign(hs_table *t, hs_error *err) {
  char dir[4200];
  if (snprintf(dir, sizeof dir, "%s/metadata", t->root) >= (int)sizeof dir) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: path too long", t->root);
  }
  char **names = NULL;
  size_t n = 0;
  hs_status st = hs_table_file_list(dir, &names, &n, err);
  if (st != HS_OK) {
    if (st == HS_ERR_NOT_FOUND || st == HS_ERR_IO) {
      hs_error_prefix(err, "%s: not a table: ", t->root);
    }
    return st;
  }
  int64_t best = -1;
  for (size_t i = 0; i < n; i++) {
    int64_t v = foreign_number(names[i]);
    if (v > best) best = v;
  }
  const char *pick = NULL;
  int64_t pick_ms = -1;
  char path[4200];
  for (size_t i = 0; best >= 0 && i < n; i++) {
    if (foreign_number(names[i]) != best) continue;
    if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path) continue;
    int64_t ms = last_updated(path);
    if (pick == NULL || ms > pick_ms || (ms == pick_ms && strcmp(names[i], pick) > 0)) {
      pick = names[i];
      pick_ms = ms;
    }
  }
  if (pick == NULL) {
    st = hs_error_set(err, HS_ERR_NOT_FOUND,
                      "%s: not a table: no v<N>.metadata.json or NNNNN-<uuid>.metadata.json", dir);
  } else if (snprintf(path, sizeof path, "%s/%s", dir, pick) >= (int)sizeof path) {
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: path too long", dir);
  } else if ((st = hs_table_load_file(t, path, best, err)) == HS_OK) {
    t->foreign_names = true;
  }
  hs_fs_names_free(names, n);
  return st;
}

hs_status hs_table_check_writable(const hs_table *t, const char *what, hs_error *err) {
  if (t->is_static) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: %s: the table was opened from this one metadata file (read-only)",
                        t->metadata_path, what);
  }
  if (t->foreign_names) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: %s: this metadata was written through a catalog (NNNNN-<uuid> "
                        "names); commit through that catalog (read-only here)",
                        t->metadata_path, what);
  }
  if (t->meta.format_version < 2) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: %s: format version %d tables are read-only (we write 2 and 3)",
                        t->metadata_path, what, (int)t->meta.format_version);
  }
  return HS_OK;
}

/* The N of ".../vN[.gz].metadata.json" or ".../NNNNN-x[.gz].metadata.json", else 0. */
static int64_t number_of_path(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  int64_t v = foreign_number(base);
  if (v >= 0) return v;
  v = hs_table_version_of_name(base);
  return v > 0 ? v : 0;
}

hs_status hs_table_open_metadata(const char *metadata_json_path, hs_table **out, hs_error *err) {
  *out = NULL;
  if (metadata_json_path == NULL || *metadata_json_path == '\0') {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "open metadata: no path");
  }
  const char *path = hs_table_strip_file_scheme(metadata_json_path);
  /* The folder is the metadata's location. */
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_metadata m;
  hs_status st = hs_table_metadata_read(path, &a, &m, err);
  hs_table *t = NULL;
  if (st == HS_OK) {
    const char *loc = hs_table_strip_file_scheme(m.location ? m.location : "");
    if (loc[0] != '/') {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: location '%s' is not a local folder (only local tables are read)",
                        path, m.location ? m.location : "");
    } else if ((st = hs_table_alloc(loc, &t, err)) == HS_OK) {
      st = hs_table_metadata_adopt(t, path, number_of_path(path), &a, &m, err);
    }
  }
  hs_arena_reset(&a);
  if (st != HS_OK) {
    hs_table_free(t);
    return st;
  }
  t->is_static = true;
  *out = t;
  return HS_OK;
}

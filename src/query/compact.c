/*
 * compact.c — compaction (hs_table_compact): the small data files of the
 * current snapshot, and every file with deletes or of an older partition
 * spec, rewritten into files of about the target size, as one `replace`
 * snapshot (Iceberg's rewrite_data_files, bin-pack strategy).
 *
 *  1. Begin a transaction (src/table/txn.h) and plan its snapshot (the one
 *     read plan: each data file's live-row set).
 *  2. Select: the files a filter may match (the scan's pruning by
 *     partition values and column bounds; every file without a filter),
 *     of those the candidates: smaller than 3/4 of the target, larger
 *     than 1.8 x the target (Iceberg's default max-file-size-bytes), or with
 *     delete files applied, or of a partition spec other than the default.
 *     Files whose rows are all deleted are always candidates (removed,
 *     nothing written).
 *  3. Group candidates by partition (spec and values); a group is
 *     rewritten when it has min_input_files files, a file with deletes, or
 *     an older spec. Each group is cut into bins of about the target size
 *     (live bytes estimated from the files' sizes); a bin of one clean file
 *     of the default spec is left alone.
 *  4. Each bin: a scan of the plan restricted to the bin (live rows only:
 *     position deletes, deletion vectors and equality deletes applied)
 *     streamed into the append's clustered writer with the table's
 *     current spec and sort order, so old-spec files are re-partitioned
 *     and rows sorted; each partition's rows are cut into files of about
 *     the target (rows per file from the bin's live bytes per row), so an
 *     oversized file is split. For unpartitioned, unsorted tables a bin of
 *     one output file keeps its batches (hs_table_appended) for index builds.
 *  5. Delete files that apply to no data file left (position deletes and
 *     equality deletes by the spec's sequence-number and partition-scope
 *     rules; deletion vectors of removed data files) are removed too.
 *  6. Commit once with operation "replace" and validateNoNewDeletes on: a
 *     delete committed meanwhile against a rewritten file is a conflict,
 *     and the whole compaction runs again on the new snapshot (at most
 *     HS_COMPACT_ATTEMPTS times); concurrent appends never conflict and
 *     are kept (the txn rebuilds the manifest list on the latest version).
 *
 * v3: rows keep their lineage as the spec says: the bins are read with
 * `_row_id` and `_last_updated_sequence_number` (hs_lineage_scan_columns)
 * and written with them as columns under their reserved field ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../table/lineage.h"
#include "../table/schema_map.h"
#include "../table/timetravel.h"
#include "../table/txn.h"
#include "scan.h"

#define HS_COMPACT_ATTEMPTS 4
#define HS_COMPACT_DEFAULT_TARGET (512LL * 1024 * 1024)

typedef struct compactor {
  hs_table *t;
  const hs_compact_options *o;
  hs_txn *txn;
  hs_table_plan plan;
  bool planned;
  int64_t target;
  bool *matched; /* per plan file: the filter may match it */
  bool *removed; /* per plan file: rewritten (removed by the commit) */
  uint32_t *bin; /* per plan file: bin number + 1 (0: none) */
  uint32_t cur_bin;
  hs_arena arena;
  char **written;
  size_t n_written;
  bool keep; /* keep the batches of unpartitioned, unsorted bins */
  hs_table_appended **kept;
  size_t n_kept;
  int32_t schema_id;
  hs_compact_result res;
} compactor;

static hs_status oom(hs_error *err) {
  return hs_error_set(err, HS_ERR_NOMEM, "compact: out of memory");
}

static hs_status remember(compactor *c, const char *path, hs_error *err) {
  char **nv = hs_realloc(c->written, (c->n_written + 1) * sizeof *nv);
  if (nv == NULL) return oom(err);
  c->written = nv;
  if ((nv[c->n_written] = hs_strdup(path)) == NULL) return oom(err);
  c->n_written++;
  return HS_OK;
}

/* ------------------------------------------------------------ selection */

static bool match_file(void *ctx, size_t plan_index, const char *path, int64_t size) {
  (void)path;
  (void)size;
  compactor *c = ctx;
  if (plan_index < c->plan.n_files) c->matched[plan_index] = true;
  return false; /* nothing is read */
}

/* matched[i]: the files `filter` may match by the scan's pruning. */
static hs_status select_matching(compactor *c, hs_error *err) {
  const char *filter = c->o != NULL ? c->o->filter : NULL;
  if (filter == NULL || filter[strspn(filter, " \t\r\n")] == '\0') {
    for (size_t i = 0; i < c->plan.n_files; i++) c->matched[i] = true;
    return HS_OK;
  }
  hs_scan_hooks hooks = {.keep_file = match_file, .ctx = c, .plan = &c->plan};
  hs_status st = hs_table_scan_rows(c->t, c->plan.snapshot_id, filter, &hooks, NULL, NULL, err);
  if (st != HS_OK) hs_error_prefix(err, "compact: filter: ");
  return st;
}

static bool has_deletes(const hs_table_plan_file *f) {
  return f->n_deleted > 0 || f->n_delete_files > 0;
}

static int64_t live_bytes(const hs_table_plan_file *f) {
  int64_t rows = f->data_file->record_count, size = f->data_file->file_size_in_bytes;
  if (rows <= 0) return 0;
  return (int64_t)((double)size * (double)hs_table_plan_file_live(f) / (double)rows);
}

/* Steps 2-3: bin[i] for every file to rewrite. */
static hs_status pack(compactor *c, hs_error *err) {
  size_t n = c->plan.n_files;
  int32_t def = c->t->meta.default_spec_id;
  int64_t small = c->target / 4 * 3;
  int64_t big = c->target > INT64_MAX / 2 ? INT64_MAX : c->target / 5 * 9; /* 1.8 x */
  int64_t min_in = c->o != NULL && c->o->min_input_files > 0 ? c->o->min_input_files : 2;
  bool *cand = hs_calloc(n + 1, 1), *done = hs_calloc(n + 1, 1);
  size_t *members = hs_malloc((n + 1) * sizeof *members);
  hs_status st = cand == NULL || done == NULL || members == NULL ? oom(err) : HS_OK;
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    const hs_table_plan_file *f = &c->plan.files[i];
    if (hs_table_plan_file_live(f) <= 0) {
      cand[i] = true; /* every row deleted: removed, nothing to write */
      continue;
    }
    cand[i] = c->matched[i] &&
              (has_deletes(f) || f->spec_id != def || f->data_file->file_size_in_bytes < small ||
               f->data_file->file_size_in_bytes > big);
  }
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    if (!cand[i] || done[i]) continue;
    size_t m = 0;
    bool dirty = false;
    for (size_t j = i; j < n; j++) {
      if (!cand[j] || done[j]) continue;
      if (j != i && !hs_table_plan_same_partition(&c->plan.files[i], &c->plan.files[j])) continue;
      done[j] = true;
      members[m++] = j;
      const hs_table_plan_file *f = &c->plan.files[j];
      dirty = dirty || has_deletes(f) || f->spec_id != def || hs_table_plan_file_live(f) <= 0 ||
              f->data_file->file_size_in_bytes > big;
    }
    if ((int64_t)m < min_in && !dirty) continue;
    /* Bins of about the target size, in manifest order. */
    size_t k = 0;
    while (k < m) {
      size_t first = k;
      int64_t acc = 0;
      bool bin_dirty = false;
      do {
        const hs_table_plan_file *f = &c->plan.files[members[k]];
        acc += live_bytes(f);
        bin_dirty = bin_dirty || has_deletes(f) || f->spec_id != def ||
                    hs_table_plan_file_live(f) <= 0 || f->data_file->file_size_in_bytes > big;
        k++;
      } while (k < m && acc + live_bytes(&c->plan.files[members[k]]) <= c->target);
      if (k - first == 1 && !bin_dirty) continue; /* one clean file: nothing gained */
      c->cur_bin++;
      for (size_t q = first; q < k; q++) c->bin[members[q]] = c->cur_bin;
    }
  }
  hs_free(cand);
  hs_free(done);
  hs_free(members);
  return st;
}

/* --------------------------------------------------------------- writing */

/* A stream passing the scan's batches on while keeping them: the writer
 * gets views (release only forgets them), the originals stay here. */
typedef struct tee {
  struct ArrowArrayStream *in;
  bool keep;
  struct ArrowArray *kept;
  size_t n, cap;
  char msg[128];
} tee;

static void view_release(struct ArrowArray *a) {
  a->release = NULL;
}

static int tee_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  tee *x = s->private_data;
  return x->in->get_schema(x->in, out);
}

static int tee_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  tee *x = s->private_data;
  struct ArrowArray b;
  memset(&b, 0, sizeof b);
  int rc = x->in->get_next(x->in, &b);
  if (rc != 0 || b.release == NULL || !x->keep || b.length == 0) {
    *out = b;
    return rc;
  }
  if (x->n == x->cap) {
    size_t nc = x->cap ? 2 * x->cap : 16;
    struct ArrowArray *nv = hs_realloc(x->kept, nc * sizeof *nv);
    if (nv == NULL) {
      b.release(&b);
      snprintf(x->msg, sizeof x->msg, "compact: out of memory keeping batches");
      return 12; /* ENOMEM */
    }
    x->kept = nv;
    x->cap = nc;
  }
  x->kept[x->n++] = b;
  *out = b;
  out->release = view_release;
  out->private_data = NULL;
  return 0;
}

static const char *tee_last_error(struct ArrowArrayStream *s) {
  tee *x = s->private_data;
  if (x->msg[0] != '\0') return x->msg;
  return x->in->get_last_error != NULL ? x->in->get_last_error(x->in) : NULL;
}

static void tee_release(struct ArrowArrayStream *s) {
  s->release = NULL;
}

static void tee_drop(tee *x) {
  for (size_t i = 0; i < x->n; i++)
    if (x->kept[i].release != NULL) x->kept[i].release(&x->kept[i]);
  hs_free(x->kept);
  x->kept = NULL;
  x->n = x->cap = 0;
}

static bool in_bin(void *ctx, size_t plan_index, const char *path, int64_t size) {
  (void)path;
  (void)size;
  const compactor *c = ctx;
  return plan_index < c->plan.n_files && c->bin[plan_index] == c->cur_bin;
}

static hs_status keep_file_batches(compactor *c, const hs_iceberg_data_file *df,
                                   struct ArrowSchema *schema, tee *x, hs_error *err) {
  hs_table_appended *a = hs_calloc(1, sizeof *a);
  hs_table_appended **nv = hs_realloc(c->kept, (c->n_kept + 1) * sizeof *nv);
  if (nv != NULL) c->kept = nv;
  if (a == NULL || nv == NULL || (a->data_path = hs_strdup(df->file_path)) == NULL) {
    hs_free(a);
    return oom(err);
  }
  a->file_size = df->file_size_in_bytes;
  a->records = df->record_count;
  a->schema = *schema; /* moved */
  memset(schema, 0, sizeof *schema);
  a->batches = x->kept;
  a->n_batches = x->n;
  a->cap = x->cap;
  x->kept = NULL;
  x->n = x->cap = 0;
  c->kept[c->n_kept++] = a;
  return HS_OK;
}

/* Step 4 for bin c->cur_bin. */
static hs_status write_bin(compactor *c, const hs_iceberg_schema *schema,
                           const hs_iceberg_partition_spec *spec,
                           const hs_iceberg_sort_order *order, hs_error *err) {
  hs_status st = HS_OK;
  int64_t live = 0, bytes = 0;
  for (size_t i = 0; st == HS_OK && i < c->plan.n_files; i++) {
    if (c->bin[i] != c->cur_bin) continue;
    const hs_table_plan_file *f = &c->plan.files[i];
    bytes += live_bytes(f);
    st = hs_txn_remove_file(c->txn, f->data_file->file_path, err);
    c->removed[i] = true;
    c->res.files_rewritten++;
    c->res.bytes_removed += f->data_file->file_size_in_bytes;
    c->res.rows_dropped += f->n_deleted;
    live += hs_table_plan_file_live(f);
  }
  if (st != HS_OK || live <= 0) return st;
  /* Rows per output file: the target at the bin's bytes per live row. */
  int64_t per_file = 0;
  if (bytes > c->target && bytes > 0)
    per_file = (int64_t)((double)c->target * (double)live / (double)bytes);
  if (bytes > c->target && per_file < 1) per_file = 1;
  /* v3: rows keep their _row_id and _last_updated_sequence_number (read
   * with the columns, written back under their reserved ids; lineage.h). */
  const char **cols = NULL;
  size_t n_cols = 0;
  st = hs_lineage_scan_columns(c->t, c->plan.snapshot_id, &cols, &n_cols, err);
  if (st != HS_OK) return st;
  hs_scan_options so;
  hs_scan_options_init(&so);
  so.snapshot_id = c->plan.snapshot_id;
  so.columns = cols;
  so.n_columns = n_cols;
  hs_scan_hooks hooks = {.keep_file = in_bin, .ctx = c, .plan = &c->plan};
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof s);
  st = hs_table_scan_query_hooked(c->t, &so, &hooks, &s, err);
  if (st != HS_OK) {
    hs_free(cols);
    return st;
  }
  bool plain = spec->n_fields == 0 && (order == NULL || order->n_fields == 0);
  tee x = {.in = &s, .keep = c->keep && plain};
  struct ArrowArrayStream ts = {.get_schema = tee_get_schema,
                                .get_next = tee_get_next,
                                .get_last_error = tee_last_error,
                                .release = tee_release,
                                .private_data = &x};
  struct ArrowSchema in, stamped;
  memset(&in, 0, sizeof in);
  memset(&stamped, 0, sizeof stamped);
  if (s.get_schema(&s, &in) != 0)
    st = hs_error_set(err, HS_ERR_INTERNAL, "compact: the scan has no schema");
  if (st == HS_OK) st = hs_table_append_schema(c->t, schema, &in, &stamped, err);
  hs_iceberg_data_file *files = NULL;
  size_t n = 0;
  if (st == HS_OK)
    st = hs_table_write_clustered_split(c->t, schema, spec, order, &stamped, &ts, per_file,
                                        &c->arena, &files, &n, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    st = remember(c, files[i].file_path, err);
    c->res.rows += files[i].record_count;
    c->res.bytes_added += files[i].file_size_in_bytes;
  }
  if (st == HS_OK && n > 0) st = hs_txn_add_files(c->txn, files, n, spec->spec_id, err);
  if (st == HS_OK) c->res.files_added += (int64_t)n;
  if (st == HS_OK && x.keep && n == 1 && files[0].record_count == live)
    st = keep_file_batches(c, &files[0], &in, &x, err);
  tee_drop(&x);
  hs_arrow_schema_release(&stamped);
  hs_arrow_schema_release(&in);
  s.release(&s);
  hs_free(cols);
  return st;
}

/* ----------------------------------------------------- dangling deletes */

/* Whether delete entry `e` (of spec `spec_id`) may still apply to a data
 * file left live: position deletes to files of its partition with a data
 * sequence number <= its own (and its referenced file only, when named),
 * equality deletes to files with a smaller one, in its partition or, for
 * an unpartitioned spec, anywhere. */
static bool still_applies(const compactor *c, const hs_iceberg_manifest_entry *e, int32_t spec_id) {
  const hs_iceberg_data_file *d = &e->data_file;
  int64_t seq = e->has_sequence_number ? e->sequence_number : 0;
  hs_table_plan_file as = {.data_file = d, .spec_id = spec_id};
  bool eq = d->content == HS_ICE_CONTENT_EQUALITY_DELETES;
  bool global = false;
  for (size_t k = 0; eq && k < c->t->meta.n_specs; k++)
    if (c->t->meta.specs[k].spec_id == spec_id) global = c->t->meta.specs[k].n_fields == 0;
  for (size_t i = 0; i < c->plan.n_files; i++) {
    if (c->removed[i]) continue;
    const hs_table_plan_file *f = &c->plan.files[i];
    if (eq) {
      if (f->data_seq >= seq) continue;
    } else {
      if (f->data_seq > seq) continue;
      if (d->referenced_data_file != NULL &&
          strcmp(d->referenced_data_file, f->data_file->file_path) != 0)
        continue;
    }
    if (!global && !hs_table_plan_same_partition(&as, f)) continue;
    return true;
  }
  return false;
}

/* Step 5: read the snapshot's delete manifests, remove what no longer
 * applies. */
static hs_status drop_dangling(compactor *c, hs_error *err) {
  const hs_iceberg_snapshot *snap = hs_iceberg_metadata_snapshot(&c->t->meta, c->plan.snapshot_id);
  if (snap == NULL || snap->manifest_list == NULL) return HS_OK;
  hs_buf buf;
  hs_buf_init(&buf);
  hs_iceberg_manifest_list list;
  memset(&list, 0, sizeof list);
  hs_status st = hs_table_read_avro(c->t, snap->manifest_list, "manifest list", &buf, err);
  if (st == HS_OK) {
    st = hs_iceberg_manifest_list_read(buf.data, buf.len, &c->arena, &list, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: ", snap->manifest_list);
  }
  /* Puffin files and position/equality delete files already removed (a
   * file is listed once per entry; remove it once). */
  const char **gone = NULL;
  size_t n_gone = 0;
  for (size_t i = 0; st == HS_OK && i < list.n_files; i++) {
    const hs_iceberg_manifest_file *mf = &list.files[i];
    if (mf->content != HS_ICE_MANIFEST_DELETES) continue;
    hs_iceberg_manifest man;
    buf.len = 0;
    st = hs_table_read_avro(c->t, mf->manifest_path, "manifest", &buf, err);
    if (st == HS_OK) {
      st = hs_iceberg_manifest_read(buf.data, buf.len, mf, &c->arena, &man, err);
      if (st != HS_OK) hs_error_prefix(err, "%s: ", mf->manifest_path);
    }
    for (size_t k = 0; st == HS_OK && k < man.n_entries; k++) {
      const hs_iceberg_manifest_entry *e = &man.entries[k];
      if (e->status == HS_ICE_ENTRY_DELETED) continue;
      const hs_iceberg_data_file *d = &e->data_file;
      if (still_applies(c, e, mf->partition_spec_id)) continue;
      if (hs_iceberg_data_file_is_dv(d) && d->referenced_data_file != NULL) {
        st = hs_txn_remove_dv(c->txn, d->file_path, d->referenced_data_file, err);
        if (st == HS_OK) c->res.delete_files_removed++;
        continue;
      }
      bool seen = false;
      for (size_t g = 0; !seen && g < n_gone; g++) seen = strcmp(gone[g], d->file_path) == 0;
      if (seen) continue;
      const char **nv = hs_realloc(gone, (n_gone + 1) * sizeof *nv);
      if (nv == NULL) {
        st = oom(err);
        break;
      }
      gone = nv;
      gone[n_gone++] = d->file_path;
      st = hs_txn_remove_file(c->txn, d->file_path, err);
      if (st == HS_OK) c->res.delete_files_removed++;
    }
  }
  hs_free(gone);
  hs_buf_free(&buf);
  return st;
}

/* ---------------------------------------------------------------- commit */

static hs_status schema_recheck(const hs_table *t, void *ctx, hs_error *err) {
  const compactor *c = ctx;
  if (t->meta.current_schema_id != c->schema_id)
    return hs_error_set(err, HS_ERR_CONFLICT,
                        "%s: compact: the table schema changed during the compaction (schema id "
                        "%d -> %d)",
                        t->metadata_path, (int)c->schema_id, (int)t->meta.current_schema_id);
  return HS_OK;
}

static void compactor_free(compactor *c, bool committed) {
  hs_free(c->matched);
  hs_free(c->removed);
  hs_free(c->bin);
  if (c->planned) hs_table_plan_free(&c->plan);
  for (size_t i = 0; i < c->n_written; i++) {
    if (!committed) (void)hs_table_file_remove(c->written[i], NULL); /* local or object */
    hs_free(c->written[i]);
  }
  hs_free(c->written);
  for (size_t i = 0; i < c->n_kept; i++) hs_table_appended_free(c->kept[i]);
  hs_free(c->kept);
  c->kept = NULL;
  c->n_kept = 0;
  hs_txn_free(c->txn);
  hs_arena_reset(&c->arena);
}

static int64_t target_of(const hs_table *t, const hs_compact_options *o) {
  if (o != NULL && o->target_file_size_bytes > 0) return o->target_file_size_bytes;
  const char *v = hs_iceberg_metadata_property(&t->meta, "write.target-file-size-bytes");
  if (v != NULL) {
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (end != v && *end == '\0' && n > 0) return (int64_t)n;
  }
  return HS_COMPACT_DEFAULT_TARGET;
}

/* One attempt; *committed tells whether it published. */
static hs_status attempt(compactor *c, bool *committed, hs_error *err) {
  hs_table *t = c->t;
  hs_status st = hs_txn_begin(t, "compact", &c->txn, err);
  if (st != HS_OK) return st;
  c->schema_id = t->meta.current_schema_id;
  c->target = target_of(t, c->o);
  int64_t sid = hs_txn_start_snapshot_id(c->txn);
  if (sid < 0) return HS_OK; /* no snapshot: nothing to compact */
  st = hs_table_plan_files(t, sid, &c->plan, err);
  c->planned = st == HS_OK;
  size_t n = c->planned ? c->plan.n_files : 0;
  if (st == HS_OK &&
      ((c->matched = hs_calloc(n + 1, 1)) == NULL || (c->removed = hs_calloc(n + 1, 1)) == NULL ||
       (c->bin = hs_calloc(n + 1, sizeof *c->bin)) == NULL))
    st = oom(err);
  if (st == HS_OK) st = select_matching(c, err);
  if (st == HS_OK) st = pack(c, err);
  const hs_iceberg_schema *schema = hs_iceberg_metadata_schema(&t->meta, c->schema_id);
  const hs_iceberg_partition_spec *spec = NULL;
  const hs_iceberg_sort_order *order = NULL;
  for (size_t i = 0; i < t->meta.n_specs; i++)
    if (t->meta.specs[i].spec_id == t->meta.default_spec_id) spec = &t->meta.specs[i];
  for (size_t i = 0; t->meta.has_default_sort_order_id && i < t->meta.n_sort_orders; i++)
    if (t->meta.sort_orders[i].order_id == t->meta.default_sort_order_id)
      order = &t->meta.sort_orders[i];
  if (st == HS_OK && (schema == NULL || spec == NULL))
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: no current schema or default partition spec",
                      t->metadata_path);
  uint32_t bins = c->cur_bin;
  for (uint32_t b = 1; st == HS_OK && b <= bins; b++) {
    c->cur_bin = b;
    st = write_bin(c, schema, spec, order, err);
  }
  if (st == HS_OK) st = drop_dangling(c, err);
  c->res.bins = bins;
  if (st != HS_OK || (c->res.files_rewritten == 0 && c->res.delete_files_removed == 0)) return st;
  hs_txn_set_operation(c->txn, HS_TXN_OP_REPLACE);
  hs_txn_validate_no_new_deletes(c->txn, true);
  hs_txn_set_schema_id(c->txn, c->schema_id);
  hs_txn_set_recheck(c->txn, schema_recheck, c);
  int64_t snap = -1;
  st = hs_txn_commit(c->txn, &snap, committed, err);
  if (*committed) c->res.snapshot_id = snap;
  return st;
}

hs_status hs_table_compact(hs_table *t, const hs_compact_options *o, hs_compact_result *out,
                           hs_table_appended ***kept, size_t *n_kept, hs_error *err) {
  memset(out, 0, sizeof *out);
  out->snapshot_id = -1;
  if (kept != NULL) *kept = NULL;
  if (n_kept != NULL) *n_kept = 0;
  if (o != NULL && o->target_file_size_bytes < 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: compact: target file size %lld bytes: must be positive", t->root,
                        (long long)o->target_file_size_bytes);
  hs_status st = hs_table_check_writable(t, "compact", err);
  for (int a = 1; st == HS_OK && a <= HS_COMPACT_ATTEMPTS; a++) {
    compactor c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.o = o;
    c.keep = kept != NULL;
    c.res.snapshot_id = -1;
    hs_arena_init(&c.arena);
    bool committed = false;
    st = attempt(&c, &committed, err);
    c.res.attempts = a;
    if (st == HS_OK) {
      *out = c.res;
      if (kept != NULL) {
        *kept = c.kept;
        *n_kept = c.n_kept;
      } else {
        for (size_t i = 0; i < c.n_kept; i++) hs_table_appended_free(c.kept[i]);
        hs_free(c.kept);
      }
      c.kept = NULL;
      c.n_kept = 0;
    }
    compactor_free(&c, committed);
    if (st != HS_ERR_CONFLICT) break;
    if (a < HS_COMPACT_ATTEMPTS) { /* run again on the new snapshot */
      memset(err, 0, sizeof *err);
      st = HS_OK;
    }
  }
  return st;
}

void hs_table_compacted_free(hs_table_appended **kept, size_t n) {
  for (size_t i = 0; kept != NULL && i < n; i++) hs_table_appended_free(kept[i]);
  hs_free(kept);
}

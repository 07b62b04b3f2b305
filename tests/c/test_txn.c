/*
 * test_txn.c — the one commit path (src/table/txn.c) and row-level commits
 * (hs_table_commit_row_delta): manifests, summaries and Iceberg's
 * validations for concurrent writers.
 *
 *  - row deltas in v2 (position-delete files) and v3 (deletion vectors):
 *    a delete manifest (content 1) with inherited sequence numbers; a
 *    removed data file's manifest rewritten (DELETED with the new snapshot
 *    id and the file's own sequence numbers, the others EXISTING with
 *    theirs), untouched manifests carried by path; a replace (compaction)
 *    that removes a data file and its delete file and adds the rewritten
 *    rows; every summary key checked against counts made here from the
 *    manifests (our Avro readers);
 *  - conflicts between two handles that read the same snapshot:
 *    delete-vs-delete of one file, replace-vs-delete both ways, two DVs for
 *    one data file, the conflict filter; delete-vs-append and two appends
 *    commit;
 *  - forked writers: 4 processes each try to remove every one of 12 data
 *    files (in their own random orders, each decided on the snapshot they
 *    read), a fifth appends: every file is removed by exactly one process,
 *    every append lands, the final live files are exactly the serial
 *    outcome.
 *
 * Driver mode (HS_TXN_DRIVER=<dir>, HS_TXN_FORMAT=2|3, HS_TXN_SEED=n): a
 * seeded random history of appends, position deletes / DVs, removals and
 * replaces; prints "snapshot <id> <ids>" (the model's live ids) per commit
 * and "metadata <path>" for tests/python/test_txn_conflicts.py, which
 * reads every snapshot with pyiceberg.
 */
#include <roaring/roaring.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "io/fs.h"
#include "table/deletes.h"
#include "table/table.h"
#include "table/txn.h"

/* ------------------------------------------------------------ helpers */

static void make_schema(struct ArrowSchema *s) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, 2, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[0], "l", "id", 0, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[1], "u", "name", ARROW_FLAG_NULLABLE, 0, &e), &e);
}

/* One batch of the given ids, name "r<id>" (null when id % 5 == 0). */
static hs_status append_ids(hs_table *t, const int64_t *ids, int64_t n, int64_t *snap,
                            hs_error *e) {
  /* the arrays take these buffers over */
  int64_t *own = hs_malloc((size_t)n * sizeof *own);
  memcpy(own, ids, (size_t)n * sizeof *own);
  int32_t *offs = hs_malloc((size_t)(n + 1) * sizeof *offs);
  uint8_t *valid = hs_calloc((size_t)n / 8 + 1, 1);
  char *data = hs_malloc((size_t)n * 24 + 1);
  int64_t nulls = 0;
  offs[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int len = 0;
    if (ids[i] % 5 == 0) {
      nulls++;
    } else {
      valid[i / 8] |= (uint8_t)(1u << (i % 8));
      len = snprintf(data + offs[i], 24, "r%lld", (long long)ids[i]);
    }
    offs[i + 1] = offs[i] + len;
  }
  struct ArrowArray cols[2], batch;
  memset(cols, 0, sizeof cols);
  hs_status st = hs_arrow_array_make_primitive(&cols[0], n, own, NULL, 0, e);
  if (st == HS_OK) st = hs_arrow_array_make_binary(&cols[1], n, offs, data, valid, nulls, e);
  if (st == HS_OK) st = hs_arrow_array_make_struct(&batch, n, cols, 2, NULL, 0, e);
  if (st != HS_OK) return st;
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArrayStream stream;
  if ((st = hs_arrow_stream_from_batches(&s, &batch, 1, &stream, e)) != HS_OK) return st;
  return hs_table_append(t, &stream, snap, e);
}

static hs_status append_range(hs_table *t, int64_t first, int64_t n, int64_t *snap, hs_error *e) {
  int64_t *ids = hs_malloc((size_t)n * sizeof *ids);
  for (int64_t i = 0; i < n; i++) ids[i] = first + i;
  hs_status st = append_ids(t, ids, n, snap, e);
  hs_free(ids);
  return st;
}

static hs_table *create_table(const char *root, int format) {
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options o;
  hs_table_options_init(&o);
  o.format_version = format;
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &o, &t, &e), &e);
  s.release(&s);
  return t;
}

static char *temp_dir(void) {
  char tmpl[] = "/tmp/hs_txn_XXXXXX";
  char *d = mkdtemp(tmpl);
  return d ? hs_strdup(d) : NULL;
}

static void rm_rf(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "rm -rf %s failed\n", dir);
}

/* `s` into out[cap] (truncated, NUL-terminated). */
static void copy_str(char *out, size_t cap, const char *s) {
  size_t n = strlen(s);
  if (n >= cap) n = cap - 1;
  memcpy(out, s, n);
  out[n] = '\0';
}

static bool has(const hs_error *e, const char *text) {
  bool ok = strstr(e->message, text) != NULL;
  if (!ok) fprintf(stderr, "message lacks '%s': %s\n", text, e->message);
  return ok;
}

/* One manifest entry of a snapshot, with its manifest's facts. */
typedef struct entry {
  char path[1024];
  char manifest[1024];
  int content;   /* file content */
  int m_content; /* manifest content */
  int status;    /* entry status */
  int64_t snap;  /* entry snapshot id */
  int64_t seq;   /* data sequence number */
  int64_t fseq;  /* file sequence number */
  int64_t m_added_snapshot, m_seq;
  int64_t records, size;
  bool has_first_row_id;
  int64_t first_row_id;
  char ref[1024];         /* referenced_data_file */
  int64_t offset, length; /* a DV's blob */
} entry;

/* Every entry of every manifest of snapshot `sid` (our Avro readers). */
static size_t entries_of(hs_table *t, int64_t sid, entry *out, size_t cap) {
  hs_error e = {0};
  const hs_iceberg_snapshot *s = hs_iceberg_metadata_snapshot(&t->meta, sid);
  if (s == NULL) return 0;
  hs_buf b;
  hs_buf_init(&b);
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_manifest_list l;
  size_t n = 0;
  CHECK_OK(hs_table_read_avro(t, s->manifest_list, "list", &b, &e), &e);
  CHECK_OK(hs_iceberg_manifest_list_read(b.data, b.len, &a, &l, &e), &e);
  for (size_t i = 0; i < l.n_files; i++) {
    const hs_iceberg_manifest_file *mf = &l.files[i];
    b.len = 0;
    hs_iceberg_manifest m;
    CHECK_OK(hs_table_read_avro(t, mf->manifest_path, "manifest", &b, &e), &e);
    CHECK_OK(hs_iceberg_manifest_read(b.data, b.len, mf, &a, &m, &e), &e);
    /* the list's counts are the manifest's */
    int32_t cnt[3] = {0, 0, 0};
    for (size_t k = 0; k < m.n_entries; k++) cnt[m.entries[k].status]++;
    CHECK_EQ_INT(cnt[HS_ICE_ENTRY_ADDED], mf->added_files_count);
    CHECK_EQ_INT(cnt[HS_ICE_ENTRY_EXISTING], mf->existing_files_count);
    CHECK_EQ_INT(cnt[HS_ICE_ENTRY_DELETED], mf->deleted_files_count);
    CHECK_EQ_INT(m.content, mf->content);
    for (size_t k = 0; k < m.n_entries && n < cap; k++) {
      const hs_iceberg_manifest_entry *en = &m.entries[k];
      entry *o = &out[n++];
      memset(o, 0, sizeof *o);
      copy_str(o->path, sizeof o->path, en->data_file.file_path);
      copy_str(o->manifest, sizeof o->manifest, mf->manifest_path);
      o->content = (int)en->data_file.content;
      o->m_content = (int)mf->content;
      o->status = (int)en->status;
      o->snap = en->snapshot_id;
      o->seq = en->sequence_number;
      o->fseq = en->file_sequence_number;
      o->m_added_snapshot = mf->added_snapshot_id;
      o->m_seq = mf->sequence_number;
      o->records = en->data_file.record_count;
      o->size = en->data_file.file_size_in_bytes;
      o->has_first_row_id = en->data_file.has_first_row_id;
      o->first_row_id = en->data_file.first_row_id;
      o->offset = en->data_file.content_offset;
      o->length = en->data_file.content_size_in_bytes;
      if (en->data_file.referenced_data_file)
        copy_str(o->ref, sizeof o->ref, en->data_file.referenced_data_file);
    }
  }
  hs_buf_free(&b);
  hs_arena_reset(&a);
  return n;
}

static const entry *find_entry(const entry *v, size_t n, const char *path) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i].path, path) == 0) return &v[i];
  return NULL;
}

static int64_t summary(const hs_table *t, int64_t sid, const char *key) {
  const hs_iceberg_snapshot *s = hs_iceberg_metadata_snapshot(&t->meta, sid);
  for (size_t i = 0; s && i < s->n_summary; i++)
    if (strcmp(s->summary[i].key, key) == 0) return strtoll(s->summary[i].value, NULL, 10);
  return -1; /* absent */
}

static const char *operation(const hs_table *t, int64_t sid) {
  const hs_iceberg_snapshot *s = hs_iceberg_metadata_snapshot(&t->meta, sid);
  for (size_t i = 0; s && i < s->n_summary; i++)
    if (strcmp(s->summary[i].key, "operation") == 0) return s->summary[i].value;
  return "";
}

/* The data file snapshot `sid` added (its one ADDED data entry). */
static void added_file(hs_table *t, int64_t sid, char *out, size_t cap) {
  entry v[64];
  size_t n = entries_of(t, sid, v, 64);
  out[0] = '\0';
  for (size_t i = 0; i < n; i++)
    if (v[i].status == HS_ICE_ENTRY_ADDED && v[i].snap == sid && v[i].content == 0)
      copy_str(out, cap, v[i].path);
  CHECK(out[0] != '\0');
}

/* Write a delete file for `data` (recorded path) deleting `pos`: a
 * position-delete Parquet file in v2, a deletion vector in v3. */
static void make_delete(hs_table *t, const char *data, const uint32_t *pos, size_t n,
                        hs_table_delete_file *out, char *path_buf, size_t cap) {
  hs_error e = {0};
  char uuid[37];
  CHECK_OK(hs_fs_uuid4(uuid, &e), &e);
  bool v3 = t->meta.format_version >= 3;
  snprintf(path_buf, cap, "%s/data/%s-deletes.%s", t->root, uuid, v3 ? "puffin" : "parquet");
  roaring_bitmap_t *bm = roaring_bitmap_of_ptr(n, pos);
  hs_table_delete_group g = {.data_file = data, .rows = bm};
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_data_file df;
  memset(&df, 0, sizeof df);
  if (v3)
    CHECK_OK(hs_table_dv_write(path_buf, path_buf, &g, 1, &a, &df, &e), &e);
  else
    CHECK_OK(hs_table_posdel_write(path_buf, path_buf, &g, 1, &a, &df, &e), &e);
  memset(out, 0, sizeof *out);
  out->path = path_buf;
  out->content = 1;
  out->file_format = v3 ? "PUFFIN" : NULL;
  out->record_count = df.record_count;
  out->file_size_in_bytes = df.file_size_in_bytes;
  out->referenced_data_file = data; /* caller's string */
  out->content_offset = df.content_offset;
  out->content_size_in_bytes = df.content_size_in_bytes;
  CHECK_EQ_INT(df.record_count, (int64_t)n);
  roaring_bitmap_free(bm);
  hs_arena_reset(&a);
}

/* A data file of `ids` written by appending to a side table of the same
 * schema, then copied into t's data/ (field ids are the same). */
static void make_data_file(hs_table *t, const char *dir, const int64_t *ids, int64_t n, char *out,
                           size_t cap) {
  hs_error e = {0};
  static int k;
  char side[4200];
  snprintf(side, sizeof side, "%s/side%d", dir, k++);
  hs_table *s = create_table(side, t->meta.format_version);
  int64_t sid = -1;
  CHECK_OK(append_ids(s, ids, n, &sid, &e), &e);
  char src[1024];
  added_file(s, sid, src, sizeof src);
  char uuid[37];
  CHECK_OK(hs_fs_uuid4(uuid, &e), &e);
  snprintf(out, cap, "%s/data/%s-compacted.parquet", t->root, uuid);
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, out);
  CHECK(system(cmd) == 0);
  hs_table_free(s);
}

/* Commit a delta of one removal / one delete file, based on `base`. */
static hs_status delta(hs_table *t, int64_t base, const char *remove,
                       const hs_table_delete_file *del, hs_table_operation op, int64_t *sid,
                       hs_error *e) {
  hs_table_row_delta d = {0};
  d.operation = op;
  d.validate_no_new_deletes = -1;
  d.has_base_snapshot_id = 1;
  d.base_snapshot_id = base;
  const char *rm[1] = {remove};
  if (remove) {
    d.remove_files = rm;
    d.n_remove_files = 1;
  }
  if (del) {
    d.add_delete_files = del;
    d.n_add_delete_files = 1;
  }
  return hs_table_commit_row_delta(t, &d, sid, e);
}

/* ------------------------------------------------------------- tests */

static void test_row_delta(int format) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_table *t = create_table(root, format);
  int64_t s[3];
  char files[3][1024];
  for (int i = 0; i < 3; i++) {
    CHECK_OK(append_range(t, i * 100, 10 + i, &s[i], &e), &e);
    added_file(t, s[i], files[i], sizeof files[i]);
  }
  entry before[64], v[64];
  size_t nb = entries_of(t, s[2], before, 64);
  CHECK_EQ_INT(nb, 3);

  /* 1. a delete file for file 0 (positions 1, 3, 5) */
  uint32_t pos[3] = {1, 3, 5};
  char dpath[4200];
  hs_table_delete_file del;
  make_delete(t, files[0], pos, 3, &del, dpath, sizeof dpath);
  int64_t d1 = -1;
  CHECK_OK(delta(t, s[2], NULL, &del, HS_TABLE_OP_AUTO, &d1, &e), &e);
  CHECK(d1 > 0 && hs_table_current_snapshot_id(t) == d1);
  CHECK(strcmp(operation(t, d1), "delete") == 0);
  CHECK_EQ_INT(summary(t, d1, "added-delete-files"), 1);
  CHECK_EQ_INT(summary(t, d1, "added-position-deletes"), 3);
  CHECK_EQ_INT(summary(t, d1, format >= 3 ? "added-dvs" : "added-position-delete-files"), 1);
  CHECK_EQ_INT(summary(t, d1, format >= 3 ? "added-position-delete-files" : "added-dvs"), -1);
  CHECK_EQ_INT(summary(t, d1, "total-delete-files"), 1);
  CHECK_EQ_INT(summary(t, d1, "total-position-deletes"), 3);
  CHECK_EQ_INT(summary(t, d1, "total-data-files"), 3);
  CHECK_EQ_INT(summary(t, d1, "total-records"), 33);
  int64_t seq1 = hs_iceberg_metadata_snapshot(&t->meta, d1)->sequence_number;
  size_t n = entries_of(t, d1, v, 64);
  CHECK_EQ_INT(n, 4);
  const entry *de = find_entry(v, n, dpath);
  CHECK(de != NULL);
  if (de) {
    CHECK_EQ_INT(de->m_content, 1);
    CHECK_EQ_INT(de->content, 1);
    CHECK_EQ_INT(de->status, HS_ICE_ENTRY_ADDED);
    CHECK_EQ_INT(de->seq, seq1);
    CHECK_EQ_INT(de->snap, d1);
    if (format >= 3) CHECK(strcmp(de->ref, files[0]) == 0); /* a v3 field */
  }
  for (size_t i = 0; i < nb; i++) { /* data manifests carried as they were */
    const entry *x = find_entry(v, n, before[i].path);
    CHECK(x != NULL && strcmp(x->manifest, before[i].manifest) == 0 && x->seq == before[i].seq &&
          x->status == before[i].status);
  }

  /* 2. remove data file 1 (copy-on-write delete of all its rows) */
  int64_t d2 = -1;
  CHECK_OK(delta(t, d1, files[1], NULL, HS_TABLE_OP_AUTO, &d2, &e), &e);
  CHECK(strcmp(operation(t, d2), "delete") == 0);
  CHECK_EQ_INT(summary(t, d2, "deleted-data-files"), 1);
  CHECK_EQ_INT(summary(t, d2, "deleted-records"), 11);
  CHECK_EQ_INT(summary(t, d2, "total-records"), 22);
  CHECK_EQ_INT(summary(t, d2, "total-data-files"), 2);
  CHECK_EQ_INT(summary(t, d2, "total-delete-files"), 1);
  CHECK_EQ_INT(summary(t, d2, "total-position-deletes"), 3);
  n = entries_of(t, d2, v, 64);
  CHECK_EQ_INT(n, 4);
  const entry *rm = find_entry(v, n, files[1]);
  const entry *was = find_entry(before, nb, files[1]);
  CHECK(rm != NULL && was != NULL);
  if (rm && was) {
    CHECK_EQ_INT(rm->status, HS_ICE_ENTRY_DELETED);
    CHECK_EQ_INT(rm->snap, d2);
    CHECK_EQ_INT(rm->seq, was->seq);
    CHECK_EQ_INT(rm->fseq, was->fseq);
    CHECK_EQ_INT(rm->m_added_snapshot, d2);
    CHECK(strcmp(rm->manifest, was->manifest) != 0);
    if (format >= 3) CHECK(rm->has_first_row_id == false || rm->first_row_id == was->first_row_id);
  }
  for (int i = 0; i < 3; i += 2) { /* files 0 and 2 untouched, carried by path */
    const entry *x = find_entry(v, n, files[i]), *y = find_entry(before, nb, files[i]);
    CHECK(x && y && strcmp(x->manifest, y->manifest) == 0 && x->status == y->status);
  }

  /* 3. replace: file 0 and its delete file by one file of its live rows */
  int64_t live[16];
  int64_t nl = 0;
  for (int64_t i = 0; i < 10; i++)
    if (i != 1 && i != 3 && i != 5) live[nl++] = i;
  char cpath[4200];
  make_data_file(t, dir, live, nl, cpath, sizeof cpath);
  const char *adds[1] = {cpath};
  const char *rms[2] = {files[0], dpath};
  hs_table_row_delta r = {0};
  r.operation = HS_TABLE_OP_REPLACE;
  r.validate_no_new_deletes = -1;
  r.add_data_files = adds;
  r.n_add_data_files = 1;
  r.remove_files = rms;
  r.n_remove_files = 2;
  int64_t d3 = -1;
  int64_t next_row_id = t->meta.next_row_id;
  CHECK_OK(hs_table_commit_row_delta(t, &r, &d3, &e), &e);
  CHECK(strcmp(operation(t, d3), "replace") == 0);
  CHECK_EQ_INT(summary(t, d3, "added-data-files"), 1);
  CHECK_EQ_INT(summary(t, d3, "added-records"), nl);
  CHECK_EQ_INT(summary(t, d3, "deleted-data-files"), 1);
  CHECK_EQ_INT(summary(t, d3, "deleted-records"), 10);
  CHECK_EQ_INT(summary(t, d3, "removed-delete-files"), 1);
  CHECK_EQ_INT(summary(t, d3, "removed-position-deletes"), 3);
  CHECK_EQ_INT(summary(t, d3, format >= 3 ? "removed-dvs" : "removed-position-delete-files"), 1);
  CHECK_EQ_INT(summary(t, d3, "total-delete-files"), 0);
  CHECK_EQ_INT(summary(t, d3, "total-position-deletes"), 0);
  CHECK_EQ_INT(summary(t, d3, "total-data-files"), 2);
  CHECK_EQ_INT(summary(t, d3, "total-records"), 12 + nl);
  n = entries_of(t, d3, v, 64);
  const entry *c = find_entry(v, n, cpath);
  CHECK(c != NULL && c->status == HS_ICE_ENTRY_ADDED && c->snap == d3);
  if (c && format >= 3) {
    CHECK(c->has_first_row_id);
    CHECK(c->first_row_id >= next_row_id); /* new row ids (TODO: lineage kept) */
  }
  const entry *dd = find_entry(v, n, dpath);
  CHECK(dd != NULL && dd->status == HS_ICE_ENTRY_DELETED && dd->snap == d3 && dd->seq == seq1);
  size_t live_entries = 0;
  for (size_t i = 0; i < n; i++) live_entries += v[i].status != HS_ICE_ENTRY_DELETED;
  CHECK_EQ_INT(live_entries, 2);

  /* 4. removing what is not live: a conflict naming it, nothing committed */
  int64_t ver = hs_table_version(t);
  hs_error e4 = {0};
  CHECK_EQ_INT(delta(t, d3, files[1], NULL, HS_TABLE_OP_DELETE, NULL, &e4), HS_ERR_CONFLICT);
  CHECK(has(&e4, "is not live"));
  CHECK(has(&e4, files[1]));
  CHECK_EQ_INT(hs_table_version(t), ver);

  /* static metadata (and catalog-named, v1: timetravel's tests) refuse */
  hs_table *st = NULL;
  CHECK_OK(hs_table_open_metadata(hs_table_metadata_location(t), &st, &e), &e);
  hs_error e5 = {0};
  CHECK_EQ_INT(delta(st, d3, files[2], NULL, HS_TABLE_OP_DELETE, NULL, &e5), HS_ERR_UNSUPPORTED);
  hs_table_free(st);

  /* 5. the adopted metadata is what a fresh open reads */
  hs_table *t2 = NULL;
  CHECK_OK(hs_table_open(root, &t2, &e), &e);
  CHECK_EQ_INT(hs_table_current_snapshot_id(t2), d3);
  CHECK_EQ_INT(t2->meta.n_snapshots, 6);
  hs_table_free(t2);
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

static bool conflict_any(void *ctx, const hs_iceberg_data_file *added) {
  (void)added;
  (*(int *)ctx)++;
  return true;
}

static void test_conflicts(int format) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_table *t = create_table(root, format);
  char files[4][1024];
  int64_t s = -1;
  for (int i = 0; i < 4; i++) {
    CHECK_OK(append_range(t, i * 100, 20, &s, &e), &e);
    added_file(t, s, files[i], sizeof files[i]);
  }
  hs_table *h1 = NULL, *h2 = NULL;
  CHECK_OK(hs_table_open(root, &h1, &e), &e);
  CHECK_OK(hs_table_open(root, &h2, &e), &e);
  int64_t base = hs_table_current_snapshot_id(h1);

  /* delete-vs-delete of file 0: the second fails, naming the winner */
  int64_t w = -1;
  CHECK_OK(delta(h1, base, files[0], NULL, HS_TABLE_OP_DELETE, &w, &e), &e);
  int64_t ver = hs_table_version(t);
  hs_table_refresh(t, &e);
  ver = hs_table_version(t);
  hs_error c1 = {0};
  CHECK_EQ_INT(delta(h2, base, files[0], NULL, HS_TABLE_OP_DELETE, NULL, &c1), HS_ERR_CONFLICT);
  char wid[32];
  snprintf(wid, sizeof wid, "%lld", (long long)w);
  CHECK(has(&c1, files[0]));
  CHECK(has(&c1, wid));
  CHECK(strcmp(hs_status_str(HS_ERR_CONFLICT), "commit conflict") == 0);
  hs_table_refresh(t, &e);
  CHECK_EQ_INT(hs_table_version(t), ver);

  /* delete (a delete file for file 1) vs replace of file 1: the replace
   * fails (validateNoNewDeletesForDataFiles) */
  base = hs_table_current_snapshot_id(h1);
  uint32_t p[2] = {0, 7};
  char dpath[4200];
  hs_table_delete_file del;
  make_delete(h1, files[1], p, 2, &del, dpath, sizeof dpath);
  CHECK_OK(delta(h1, base, NULL, &del, HS_TABLE_OP_DELETE, NULL, &e), &e);
  int64_t ids[20];
  for (int i = 0; i < 20; i++) ids[i] = 100 + i;
  char cpath[4200];
  make_data_file(h2, dir, ids, 20, cpath, sizeof cpath);
  const char *adds[1] = {cpath};
  const char *rms[1] = {files[1]};
  hs_table_row_delta r = {0};
  r.operation = HS_TABLE_OP_REPLACE;
  r.validate_no_new_deletes = -1;
  r.add_data_files = adds;
  r.n_add_data_files = 1;
  r.remove_files = rms;
  r.n_remove_files = 1;
  r.has_base_snapshot_id = 1;
  r.base_snapshot_id = base;
  hs_error c2 = {0};
  CHECK_EQ_INT(hs_table_commit_row_delta(h2, &r, NULL, &c2), HS_ERR_CONFLICT);
  CHECK(has(&c2, dpath));
  CHECK(has(&c2, "may apply"));
  /* with the check off (a caller that merged the deletes itself) it lands */
  r.validate_no_new_deletes = 0;
  r.base_snapshot_id = hs_table_current_snapshot_id(h1);
  const char *rms2[2] = {files[1], dpath};
  r.remove_files = rms2;
  r.n_remove_files = 2;
  CHECK_OK(hs_table_commit_row_delta(h2, &r, NULL, &e), &e);

  /* replace of file 2 vs a delete of rows of file 2 decided before it: the
   * delete fails (validateDataFilesExist) */
  base = hs_table_current_snapshot_id(h1);
  hs_table_refresh(h1, &e);
  base = hs_table_current_snapshot_id(h1);
  char d2path[4200];
  hs_table_delete_file del2;
  make_delete(h1, files[2], p, 2, &del2, d2path, sizeof d2path);
  for (int i = 0; i < 20; i++) ids[i] = 200 + i;
  char c2path[4200];
  make_data_file(h2, dir, ids, 20, c2path, sizeof c2path);
  adds[0] = c2path;
  rms[0] = files[2];
  r.remove_files = rms;
  r.n_remove_files = 1;
  r.validate_no_new_deletes = -1;
  r.base_snapshot_id = base;
  CHECK_OK(hs_table_commit_row_delta(h2, &r, NULL, &e), &e);
  hs_error c3 = {0};
  CHECK_EQ_INT(delta(h1, base, NULL, &del2, HS_TABLE_OP_DELETE, NULL, &c3), HS_ERR_CONFLICT);
  CHECK(has(&c3, files[2]));
  /* the txn's own rule, past the row-delta's lookup: a referenced data file
   * removed since the start */
  {
    hs_txn *x = NULL;
    CHECK_OK(hs_txn_begin(h1, "test delete", &x, &e), &e);
    hs_txn_set_start_snapshot(x, base);
    hs_iceberg_data_file f;
    memset(&f, 0, sizeof f);
    f.content = HS_ICE_CONTENT_POSITION_DELETES;
    f.file_path = d2path;
    f.file_format = del2.file_format ? del2.file_format : "PARQUET";
    f.record_count = 2;
    f.file_size_in_bytes = del2.file_size_in_bytes;
    f.referenced_data_file = files[2];
    f.has_content_offset = f.has_content_size_in_bytes = format >= 3;
    f.content_offset = del2.content_offset;
    f.content_size_in_bytes = del2.content_size_in_bytes;
    CHECK_OK(hs_txn_add_files(x, &f, 1, 0, &e), &e);
    hs_error c4 = {0};
    CHECK_EQ_INT(hs_txn_commit(x, NULL, NULL, &c4), HS_ERR_CONFLICT);
    CHECK(has(&c4, "which this commit's deletes reference"));
    hs_txn_free(x);
  }

  /* delete-vs-append: both land (appends never conflict, deletes of rows
   * of old files do not conflict with new files) */
  hs_table_refresh(h1, &e);
  base = hs_table_current_snapshot_id(h1);
  int64_t a1 = -1;
  CHECK_OK(append_range(h2, 1000, 5, &a1, &e), &e);
  char d3path[4200];
  hs_table_delete_file del3;
  make_delete(h1, files[3], p, 2, &del3, d3path, sizeof d3path);
  int64_t dsn = -1;
  CHECK_OK(delta(h1, base, NULL, &del3, HS_TABLE_OP_DELETE, &dsn, &e), &e);
  CHECK(hs_iceberg_metadata_snapshot(&h1->meta, dsn)->parent_snapshot_id == a1);
  /* two appends from two stale handles */
  int64_t a2 = -1, a3 = -1;
  CHECK_OK(append_range(h2, 2000, 5, &a2, &e), &e);
  CHECK_OK(append_range(h1, 3000, 5, &a3, &e), &e);
  CHECK(hs_iceberg_metadata_snapshot(&h1->meta, a3)->parent_snapshot_id == a2);

  /* v3: two deletion vectors for one data file */
  if (format >= 3) {
    int64_t a5 = -1;
    CHECK_OK(append_range(h1, 5000, 12, &a5, &e), &e);
    char f5[1024];
    added_file(h1, a5, f5, sizeof f5);
    hs_table_refresh(h2, &e);
    base = hs_table_current_snapshot_id(h2);
    uint32_t q1[1] = {9}, q2[1] = {4};
    char v1path[4200], v2path[4200];
    hs_table_delete_file dv1, dv2;
    make_delete(h1, f5, q1, 1, &dv1, v1path, sizeof v1path);
    make_delete(h2, f5, q2, 1, &dv2, v2path, sizeof v2path);
    CHECK_OK(delta(h1, base, NULL, &dv1, HS_TABLE_OP_DELETE, NULL, &e), &e);
    hs_error c5 = {0};
    CHECK_EQ_INT(delta(h2, base, NULL, &dv2, HS_TABLE_OP_DELETE, NULL, &c5), HS_ERR_CONFLICT);
    CHECK(has(&c5, "deletion vector"));
    CHECK(has(&c5, f5));
  }

  /* the conflict filter sees concurrently added data files only */
  {
    hs_table_refresh(h1, &e);
    base = hs_table_current_snapshot_id(h1);
    int64_t a4 = -1;
    CHECK_OK(append_range(h2, 4000, 5, &a4, &e), &e);
    int calls = 0;
    hs_txn *x = NULL;
    CHECK_OK(hs_txn_begin(h1, "test upsert", &x, &e), &e);
    hs_txn_set_start_snapshot(x, base);
    hs_txn_set_conflict_filter(x, conflict_any, &calls);
    CHECK_OK(hs_txn_remove_file(x, files[3], &e), &e);
    hs_error c6 = {0};
    CHECK_EQ_INT(hs_txn_commit(x, NULL, NULL, &c6), HS_ERR_CONFLICT);
    CHECK_EQ_INT(calls, 1);
    CHECK(has(&c6, "conflicts with this commit"));
    hs_txn_free(x);
  }
  /* a start that is not an ancestor (rolled back past it): a conflict */
  {
    hs_table_refresh(h1, &e);
    int64_t cur = hs_table_current_snapshot_id(h1);
    const hs_iceberg_snapshot *cs = hs_iceberg_metadata_snapshot(&h1->meta, cur);
    CHECK_OK(hs_table_rollback_to_snapshot(h1, cs->parent_snapshot_id, &e), &e);
    hs_error c7 = {0};
    CHECK_EQ_INT(delta(h2, cur, files[3], NULL, HS_TABLE_OP_DELETE, NULL, &c7), HS_ERR_CONFLICT);
    CHECK(has(&c7, "no longer an ancestor"));
  }
  hs_table_free(h1);
  hs_table_free(h2);
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

/* v3: one Puffin file holding the DVs of two data files; a second DV for
 * one of them is refused unless the first is removed with it; removing one
 * DV of the Puffin file keeps the other. */
static void test_dv_puffin(void) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_table *t = create_table(root, 3);
  char files[2][1024];
  for (int i = 0; i < 2; i++) {
    int64_t s = -1;
    CHECK_OK(append_range(t, i * 100, 10, &s, &e), &e);
    added_file(t, s, files[i], sizeof files[i]);
  }
  uint32_t p0[2] = {1, 2}, p1[1] = {7};
  roaring_bitmap_t *b0 = roaring_bitmap_of_ptr(2, p0), *b1 = roaring_bitmap_of_ptr(1, p1);
  hs_table_delete_group g[2] = {{.data_file = files[0], .rows = b0},
                                {.data_file = files[1], .rows = b1}};
  char puffin[4300];
  snprintf(puffin, sizeof puffin, "%s/data/two-dvs.puffin", root);
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_data_file dfs[2];
  CHECK_OK(hs_table_dv_write(puffin, puffin, g, 2, &a, dfs, &e), &e);
  hs_table_delete_file del[2];
  memset(del, 0, sizeof del);
  for (int i = 0; i < 2; i++) {
    del[i].path = puffin;
    del[i].content = 1;
    del[i].file_format = "PUFFIN";
    del[i].record_count = dfs[i].record_count;
    del[i].file_size_in_bytes = dfs[i].file_size_in_bytes;
    del[i].referenced_data_file = files[i];
    del[i].content_offset = dfs[i].content_offset;
    del[i].content_size_in_bytes = dfs[i].content_size_in_bytes;
  }
  hs_table_row_delta d = {0};
  d.validate_no_new_deletes = -1;
  d.add_delete_files = del;
  d.n_add_delete_files = 2;
  int64_t s1 = -1;
  CHECK_OK(hs_table_commit_row_delta(t, &d, &s1, &e), &e);
  CHECK_EQ_INT(summary(t, s1, "added-dvs"), 2);
  CHECK_EQ_INT(summary(t, s1, "total-position-deletes"), 3);
  /* a second DV for file 0 alone: refused, naming the live one */
  uint32_t q[3] = {1, 2, 5};
  char npath[4200];
  hs_table_delete_file nd;
  make_delete(t, files[0], q, 3, &nd, npath, sizeof npath);
  d.add_delete_files = &nd;
  d.n_add_delete_files = 1;
  int64_t ver = hs_table_version(t);
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_table_commit_row_delta(t, &d, NULL, &e2), HS_ERR_INVALID_ARG);
  CHECK(has(&e2, "already has deletion vector"));
  CHECK_EQ_INT(hs_table_version(t), ver);
  /* merged: the old DV of file 0 removed, file 1's stays */
  const char *rm[1] = {puffin}, *of[1] = {files[0]};
  d.remove_dvs = rm;
  d.remove_dv_of = of;
  d.n_remove_dvs = 1;
  int64_t s2 = -1;
  CHECK_OK(hs_table_commit_row_delta(t, &d, &s2, &e), &e);
  CHECK_EQ_INT(summary(t, s2, "added-dvs"), 1);
  CHECK_EQ_INT(summary(t, s2, "removed-dvs"), 1);
  CHECK_EQ_INT(summary(t, s2, "removed-position-deletes"), 2);
  CHECK_EQ_INT(summary(t, s2, "total-delete-files"), 2);
  CHECK_EQ_INT(summary(t, s2, "total-position-deletes"), 4);
  entry v[16];
  size_t n = entries_of(t, s2, v, 16);
  int live_puffin = 0, deleted_puffin = 0;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(v[i].path, puffin) != 0) continue;
    if (v[i].status == HS_ICE_ENTRY_DELETED) {
      deleted_puffin++;
      CHECK(strcmp(v[i].ref, files[0]) == 0);
      CHECK_EQ_INT(v[i].snap, s2);
    } else {
      live_puffin++;
      CHECK(strcmp(v[i].ref, files[1]) == 0);
      CHECK_EQ_INT(v[i].status, HS_ICE_ENTRY_EXISTING);
      CHECK_EQ_INT(v[i].snap, s1);
    }
  }
  CHECK_EQ_INT(live_puffin, 1);
  CHECK_EQ_INT(deleted_puffin, 1);
  roaring_bitmap_free(b0);
  roaring_bitmap_free(b1);
  hs_arena_reset(&a);
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

/* A writer SIGKILLed at every step of a row delta (hs_table_crash_point:
 * the delete file written, manifests, list, sync, publish, hint): the table
 * opens at the version before or the one after, never in between, and the
 * next commit lands. */
static void test_crash(int format) {
  hs_error e = {0};
  bool finished = false;
  int kills = 0;
  for (int step = 1; step < 64 && !finished; step++) {
    char *dir = temp_dir();
    char root[4200];
    snprintf(root, sizeof root, "%s/t", dir);
    hs_table *t = create_table(root, format);
    char files[2][1024];
    for (int i = 0; i < 2; i++) {
      int64_t s = -1;
      CHECK_OK(append_range(t, i * 100, 10, &s, &e), &e);
      added_file(t, s, files[i], sizeof files[i]);
    }
    int64_t base = hs_table_current_snapshot_id(t);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      char num[16];
      snprintf(num, sizeof num, "%d", step);
      setenv("HS_TABLE_CRASH_STEP", num, 1);
      hs_error ce = {0};
      uint32_t pos[2] = {2, 4};
      char dpath[4200];
      hs_table_delete_file del;
      make_delete(t, files[0], pos, 2, &del, dpath, sizeof dpath);
      hs_table_row_delta d = {0};
      const char *rm[1] = {files[1]};
      d.validate_no_new_deletes = -1;
      d.add_delete_files = &del;
      d.n_add_delete_files = 1;
      d.remove_files = rm;
      d.n_remove_files = 1;
      _exit(hs_table_commit_row_delta(t, &d, NULL, &ce) == HS_OK ? 0 : 2);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    CHECK(killed || (WIFEXITED(status) && WEXITSTATUS(status) == 0));
    finished = !killed;
    kills += killed;
    hs_table *h = NULL;
    CHECK_OK(hs_table_open(root, &h, &e), &e);
    int64_t cur = hs_table_current_snapshot_id(h);
    entry v[16];
    size_t n = entries_of(h, cur, v, 16);
    size_t live_data = 0, live_del = 0;
    for (size_t i = 0; i < n; i++) {
      if (v[i].status == HS_ICE_ENTRY_DELETED) continue;
      if (v[i].content == 0)
        live_data++;
      else
        live_del++;
    }
    if (cur == base) { /* before: both files, no deletes */
      CHECK_EQ_INT(live_data, 2);
      CHECK_EQ_INT(live_del, 0);
    } else { /* after: file 1 gone, one delete file */
      CHECK(hs_iceberg_metadata_snapshot(&h->meta, cur)->parent_snapshot_id == base);
      CHECK_EQ_INT(live_data, 1);
      CHECK_EQ_INT(live_del, 1);
      CHECK(find_entry(v, n, files[1]) && find_entry(v, n, files[1])->status == 2);
    }
    CHECK(!finished || cur != base); /* a run that was not killed committed */
    int64_t s2 = -1;
    CHECK_OK(append_range(h, 900, 3, &s2, &e), &e);
    hs_table_free(h);
    hs_table_free(t);
    rm_rf(dir);
    hs_free(dir);
  }
  CHECK(finished);
  CHECK(kills >= 6); /* delete file, manifests, list, sync, link, hint */
  printf("crash v%d: killed at %d steps, then committed\n", format, kills);
}

/* validateNoNewDeletesForDataFiles in a partitioned table (truncate[100]
 * on id): a delete committed in another partition does not conflict with
 * an overwrite that removes a file, one in the same partition does. v2
 * manifests do not record a position delete's referenced data file, so
 * only the partition tells them apart. */
/* Data files added to a partitioned table by a row delta get the tuple
 * their rows give under the current spec; a file of two partitions is
 * refused and nothing is committed. */
static void test_partitioned_data_files(int format) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_table *t = create_table(root, format);
  hs_table_partition_field pf = {.source = "id", .transform = "truncate[100]", .name = NULL};
  CHECK_OK(hs_table_set_partition_spec(t, &pf, 1, &e), &e);
  int64_t s0 = -1;
  CHECK_OK(append_range(t, 0, 20, &s0, &e), &e);
  int64_t ids[20];
  for (int i = 0; i < 20; i++) ids[i] = 300 + i * 3;
  char good[4200], mixed[4200];
  make_data_file(t, dir, ids, 20, good, sizeof good);
  ids[19] = 400; /* the last row in partition 400 */
  make_data_file(t, dir, ids, 20, mixed, sizeof mixed);

  const char *adds[1] = {mixed};
  hs_table_row_delta d = {0};
  d.operation = HS_TABLE_OP_APPEND;
  d.validate_no_new_deletes = -1;
  d.add_data_files = adds;
  d.n_add_data_files = 1;
  hs_error bad = {0};
  CHECK_EQ_INT(hs_table_commit_row_delta(t, &d, NULL, &bad), HS_ERR_INVALID_ARG);
  CHECK(has(&bad, "more than one partition") && has(&bad, "row 19") && has(&bad, mixed));
  CHECK(hs_table_current_snapshot_id(t) == s0);

  adds[0] = good;
  int64_t s1 = -1;
  CHECK_OK(hs_table_commit_row_delta(t, &d, &s1, &e), &e);
  CHECK(s1 > 0 && s1 != s0);
  hs_table_plan plan;
  CHECK_OK(hs_table_plan_files(t, -1, &plan, &e), &e);
  CHECK_EQ_INT(plan.n_files, 2);
  bool found = false;
  for (size_t i = 0; i < plan.n_files; i++) {
    const hs_iceberg_data_file *df = plan.files[i].data_file;
    if (strcmp(df->file_path, good) != 0) continue;
    found = true;
    CHECK_EQ_INT(plan.files[i].spec_id, t->meta.default_spec_id);
    CHECK_EQ_INT(df->n_partition, 1);
    if (df->n_partition == 1) {
      CHECK(!df->partition[0].is_null);
      CHECK_EQ_INT(df->partition[0].i64, 300);
    }
  }
  CHECK(found);
  hs_table_plan_free(&plan);
  /* Reads prune it by its partition like an appended file. */
  hs_scan_options so;
  hs_scan_options_init(&so);
  so.filter = "id < 100";
  struct ArrowArrayStream st;
  CHECK_OK(hs_table_scan_query(t, &so, &st, &e), &e);
  int64_t rows = 0;
  for (;;) {
    struct ArrowArray b;
    memset(&b, 0, sizeof b);
    if (st.get_next(&st, &b) != 0 || b.release == NULL) break;
    rows += b.length;
    b.release(&b);
  }
  hs_scan_stats ss;
  CHECK_OK(hs_scan_stats_get(&st, &ss, &e), &e);
  CHECK_EQ_INT(rows, 20);
  CHECK_EQ_INT(ss.files_pruned, 1);
  st.release(&st);
  int64_t live = 0;
  CHECK_OK(hs_table_count_rows(t, -1, &live, NULL, NULL, &e), &e);
  CHECK_EQ_INT(live, 40);
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

static void test_partition_deletes(void) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_table *t = create_table(root, 2);
  hs_table_partition_field pf = {.source = "id", .transform = "truncate[100]", .name = NULL};
  CHECK_OK(hs_table_set_partition_spec(t, &pf, 1, &e), &e);
  char files[3][1024];
  for (int i = 0; i < 3; i++) {
    int64_t s = -1;
    CHECK_OK(append_range(t, i < 2 ? i * 100 : 150, 20, &s, &e), &e);
    added_file(t, s, files[i], sizeof files[i]);
  }
  hs_table *h1 = NULL, *h2 = NULL;
  CHECK_OK(hs_table_open(root, &h1, &e), &e);
  CHECK_OK(hs_table_open(root, &h2, &e), &e);
  /* a delete in partition 100 (file 1) vs an overwrite removing file 0 */
  int64_t base = hs_table_current_snapshot_id(h1);
  uint32_t p[1] = {3};
  char dpath[4200];
  hs_table_delete_file del;
  make_delete(h1, files[1], p, 1, &del, dpath, sizeof dpath);
  CHECK_OK(delta(h1, base, NULL, &del, HS_TABLE_OP_DELETE, NULL, &e), &e);
  CHECK_OK(delta(h2, base, files[0], NULL, HS_TABLE_OP_OVERWRITE, NULL, &e), &e);
  /* a delete of file 1's rows vs an overwrite removing file 2, same partition */
  hs_table_refresh(h1, &e);
  base = hs_table_current_snapshot_id(h1);
  char d2path[4200];
  hs_table_delete_file del2;
  make_delete(h1, files[1], p, 1, &del2, d2path, sizeof d2path);
  CHECK_OK(delta(h1, base, NULL, &del2, HS_TABLE_OP_DELETE, NULL, &e), &e);
  hs_error c = {0};
  CHECK_EQ_INT(delta(h2, base, files[2], NULL, HS_TABLE_OP_OVERWRITE, NULL, &c), HS_ERR_CONFLICT);
  CHECK(has(&c, "may apply"));
  CHECK(has(&c, files[2]));
  /* files 1 and 2 and both delete files live; the manifest holding only
   * file 0's DELETED entry (the overwrite's) is not listed after that
   * snapshot (Iceberg keeps a manifest without live files only in the
   * snapshot that wrote it) */
  entry v[16];
  size_t n = entries_of(h1, hs_table_current_snapshot_id(h1), v, 16);
  CHECK_EQ_INT(n, 4);
  CHECK(find_entry(v, n, files[0]) == NULL);
  hs_table_free(h1);
  hs_table_free(h2);
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

/* ------------------------------------------------ forked concurrency */

#define RACE_FILES 12
#define RACE_WRITERS 4
#define RACE_APPENDS 10
#define RACE_ROWS 10

/* The live DV of data file `data` in snapshot `sid`: *out (entry) or false. */
static bool live_dv(hs_table *t, int64_t sid, const char *data, entry *out) {
  entry *v = hs_malloc(512 * sizeof *v);
  size_t n = entries_of(t, sid, v, 512);
  bool found = false;
  for (size_t i = 0; i < n && !found; i++)
    if (v[i].content == 1 && v[i].status != HS_ICE_ENTRY_DELETED && strcmp(v[i].ref, data) == 0) {
      *out = v[i];
      found = true;
    }
  hs_free(v);
  return found;
}

/* One writer of the race: every data file once, in its own random order,
 * either removed or its row `w` deleted (v2: a position-delete file; v3:
 * the live DV merged into a new one that replaces it), each decided on the
 * snapshot just read. Logs what committed to `log`. */
static int race_writer(const char *root, int format, int w, char files[][1024], FILE *log) {
  hs_error ce = {0};
  hs_table *h = NULL;
  if (hs_table_open(root, &h, &ce) != HS_OK) return 3;
  uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(w + 1);
  int order[RACE_FILES];
  for (int i = 0; i < RACE_FILES; i++) order[i] = i;
  for (int i = RACE_FILES - 1; i > 0; i--) {
    int j = (int)(hs_test_rand(&rng) % (uint64_t)(i + 1));
    int x = order[i];
    order[i] = order[j];
    order[j] = x;
  }
  for (int k = 0; k < RACE_FILES; k++) {
    int i = order[k];
    hs_error re = {0};
    if (hs_table_refresh(h, &re) != HS_OK) return 5;
    int64_t base = hs_table_current_snapshot_id(h);
    bool remove = hs_test_rand(&rng) % 2 == 0;
    hs_status st;
    if (remove) {
      st = delta(h, base, files[i], NULL, HS_TABLE_OP_DELETE, NULL, &re);
    } else {
      roaring_bitmap_t *bm = roaring_bitmap_create();
      entry old;
      bool merge = format >= 3 && live_dv(h, base, files[i], &old);
      if (merge) {
        roaring_bitmap_t *had = NULL;
        if (hs_table_dv_read(old.path, old.offset, old.length, old.records, &had, &re) != HS_OK) {
          fprintf(stderr, "writer %d: %s\n", w, re.message);
          return 7;
        }
        roaring_bitmap_or_inplace(bm, had);
        roaring_bitmap_free(had);
      }
      roaring_bitmap_add(bm, (uint32_t)w);
      uint32_t pos[RACE_ROWS];
      size_t np = roaring_bitmap_get_cardinality(bm);
      roaring_bitmap_to_uint32_array(bm, pos);
      roaring_bitmap_free(bm);
      hs_table_delete_file del;
      char dpath[4200];
      make_delete(h, files[i], pos, np, &del, dpath, sizeof dpath);
      hs_table_row_delta d = {0};
      d.validate_no_new_deletes = -1;
      d.has_base_snapshot_id = 1;
      d.base_snapshot_id = base;
      d.add_delete_files = &del;
      d.n_add_delete_files = 1;
      const char *rm[1] = {old.path}, *of[1] = {files[i]};
      if (merge) {
        d.remove_dvs = rm;
        d.remove_dv_of = of;
        d.n_remove_dvs = 1;
      }
      st = hs_table_commit_row_delta(h, &d, NULL, &re);
    }
    if (st == HS_OK) {
      fprintf(log, "%s %d %d\n", remove ? "removed" : "deleted", i, w);
    } else if (st != HS_ERR_CONFLICT) {
      fprintf(stderr, "writer %d: %s\n", w, re.message);
      return 6;
    }
  }
  hs_table_free(h);
  return 0;
}

typedef struct race_result {
  int removed[RACE_FILES];
  bool deleted[RACE_FILES][RACE_WRITERS];
  int n_deleted[RACE_FILES];
  int64_t appended[RACE_APPENDS];
  int appends;
  char files[RACE_FILES][1024];
} race_result;

/* The race: RACE_WRITERS forked writers over RACE_FILES files of
 * RACE_ROWS rows (ids 100 * i ..), and one more process appending
 * RACE_APPENDS files (ids 10000 + 10 * k ..). */
static bool race(const char *root, const char *dir, int format, race_result *r) {
  hs_error e = {0};
  memset(r, 0, sizeof *r);
  hs_table *t = create_table(root, format);
  if (t == NULL) return false;
  for (int i = 0; i < RACE_FILES; i++) {
    int64_t s = -1;
    CHECK_OK(append_range(t, i * 100, RACE_ROWS, &s, &e), &e);
    added_file(t, s, r->files[i], sizeof r->files[i]);
  }
  hs_table_free(t);
  fflush(stdout);
  pid_t pids[RACE_WRITERS + 1];
  for (int w = 0; w <= RACE_WRITERS; w++) {
    pid_t pid = fork();
    if (pid == 0) {
      char out[4300];
      snprintf(out, sizeof out, "%s/won-%d", dir, w);
      FILE *f = fopen(out, "w");
      if (f == NULL) _exit(3);
      int rc = 0;
      if (w == RACE_WRITERS) { /* the appender */
        hs_table *h = NULL;
        if (hs_table_open(root, &h, &e) != HS_OK) _exit(3);
        for (int i = 0; i < RACE_APPENDS && rc == 0; i++) {
          int64_t s = -1;
          hs_error ae = {0};
          if (append_range(h, 10000 + i * 10, 10, &s, &ae) != HS_OK) rc = 4;
          fprintf(f, "append %d %lld\n", i, (long long)s);
        }
        hs_table_free(h);
      } else {
        rc = race_writer(root, format, w, r->files, f);
      }
      fclose(f);
      _exit(rc);
    }
    pids[w] = pid;
  }
  bool ok = true;
  for (int w = 0; w <= RACE_WRITERS; w++) {
    int status = 0;
    waitpid(pids[w], &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  CHECK(ok);
  for (int w = 0; w <= RACE_WRITERS; w++) {
    char out[4300];
    snprintf(out, sizeof out, "%s/won-%d", dir, w);
    FILE *f = fopen(out, "r");
    CHECK(f != NULL);
    char kind[16];
    long long a, b;
    while (f && fscanf(f, "%15s %lld %lld", kind, &a, &b) == 3) {
      if (strcmp(kind, "append") == 0 && a >= 0 && a < RACE_APPENDS) {
        r->appended[a] = b;
        r->appends++;
      } else if (a >= 0 && a < RACE_FILES && b >= 0 && b < RACE_WRITERS) {
        if (strcmp(kind, "removed") == 0) r->removed[a]++;
        if (strcmp(kind, "deleted") == 0) {
          r->deleted[a][b] = true;
          r->n_deleted[a]++;
        }
      }
    }
    if (f) fclose(f);
  }
  return ok;
}

static void test_forked(int format) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  race_result *r = hs_malloc(sizeof *r);
  race(root, dir, format, r);
  int n_removed = 0, n_deleted = 0;
  for (int i = 0; i < RACE_FILES; i++) {
    CHECK(r->removed[i] <= 1); /* never two winners */
    n_removed += r->removed[i];
    n_deleted += r->n_deleted[i];
  }
  CHECK_EQ_INT(r->appends, RACE_APPENDS);
  hs_table *t = NULL;
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  int64_t cur = hs_table_current_snapshot_id(t);
  entry *v = hs_malloc(512 * sizeof *v);
  size_t n = entries_of(t, cur, v, 512);
  /* the serial outcome: the files nobody removed, the appended ones */
  size_t live_data = 0, live_deletes = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i].status == HS_ICE_ENTRY_DELETED) continue;
    if (v[i].content != 0) {
      live_deletes++;
      continue;
    }
    live_data++;
    for (int k = 0; k < RACE_FILES; k++)
      if (strcmp(v[i].path, r->files[k]) == 0) CHECK_EQ_INT(r->removed[k], 0);
  }
  CHECK_EQ_INT(live_data, RACE_FILES - n_removed + RACE_APPENDS);
  CHECK_EQ_INT(summary(t, cur, "total-records"),
               (RACE_FILES - n_removed) * RACE_ROWS + RACE_APPENDS * 10);
  CHECK_EQ_INT(t->meta.n_snapshots, RACE_FILES + n_removed + n_deleted + RACE_APPENDS);
  if (format < 3) { /* every delete that committed is there */
    CHECK_EQ_INT(live_deletes, n_deleted);
    CHECK_EQ_INT(summary(t, cur, "total-position-deletes"), n_deleted);
  } else { /* no merge lost: a live file's one DV holds every delete of it */
    for (int k = 0; k < RACE_FILES; k++) {
      entry dv;
      bool has_dv = live_dv(t, cur, r->files[k], &dv);
      CHECK(has_dv == (r->n_deleted[k] > 0));
      if (has_dv) {
        CHECK_EQ_INT(dv.records, r->n_deleted[k]);
        roaring_bitmap_t *bm = NULL;
        CHECK_OK(hs_table_dv_read(dv.path, dv.offset, dv.length, dv.records, &bm, &e), &e);
        for (int w = 0; bm && w < RACE_WRITERS; w++)
          CHECK(roaring_bitmap_contains(bm, (uint32_t)w) == r->deleted[k][w]);
        roaring_bitmap_free(bm);
      }
    }
  }
  hs_free(v);
  hs_free(r);
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

/* ------------------------------------------------------------ driver */

/* A seeded history printed for pyiceberg (see the header). Files are
 * tracked with their ids; a delete removes a random subset of a file's
 * live positions (merged with its earlier DV in v3: the old DV removed in
 * the same commit), a removal drops a whole file, a replace compacts two
 * files (their deletes applied) into one. */
typedef struct dfile {
  char path[1024];
  int64_t ids[64];
  int n;
  bool dead[64];
  char del[1024]; /* v3: its live DV's path */
  uint32_t dv[64];
  int n_dv;
  bool live;
} dfile;

static void print_snapshot(hs_table *t, const dfile *fs, int nf) {
  printf("snapshot %lld ", (long long)hs_table_current_snapshot_id(t));
  bool first = true;
  for (int i = 0; i < nf; i++)
    for (int k = 0; fs[i].live && k < fs[i].n; k++)
      if (!fs[i].dead[k]) {
        printf("%s%lld", first ? "" : ",", (long long)fs[i].ids[k]);
        first = false;
      }
  printf("\n");
}

static int driver(const char *root, int format, uint64_t seed) {
  hs_error e = {0};
  char dir[4200];
  snprintf(dir, sizeof dir, "%s.side", root);
  if (hs_fs_mkdirs(dir, &e) != HS_OK) return 1;
  hs_table *t = create_table(root, format);
  if (t == NULL) return 1;
  dfile *fs = hs_calloc(64, sizeof *fs);
  int nf = 0;
  int64_t next_id = 0;
  uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int step = 0; step < 14 && nf < 60; step++) {
    int op = step < 3 ? 0 : (int)(hs_test_rand(&rng) % 4);
    int live[64], nl = 0;
    for (int i = 0; i < nf; i++)
      if (fs[i].live) live[nl++] = i;
    if (op != 0 && nl < 2) op = 0;
    if (op == 0) {
      dfile *f = &fs[nf++];
      f->n = 5 + (int)(hs_test_rand(&rng) % 20);
      for (int k = 0; k < f->n; k++) f->ids[k] = next_id++;
      int64_t s = -1;
      if (append_ids(t, f->ids, f->n, &s, &e) != HS_OK) goto fail;
      added_file(t, s, f->path, sizeof f->path);
      f->live = true;
    } else if (op == 1) { /* delete rows of one file */
      dfile *f = &fs[live[hs_test_rand(&rng) % (uint64_t)nl]];
      uint32_t pos[64];
      int np = 0;
      for (int k = 0; k < f->n; k++)
        if (!f->dead[k] && hs_test_rand(&rng) % 3 == 0) pos[np++] = (uint32_t)k;
      if (np == 0) continue;
      for (int k = 0; k < np; k++) f->dead[pos[k]] = true;
      hs_table_delete_file del;
      char dpath[4200];
      const char *old = NULL;
      if (format >= 3) { /* one DV per data file: merge the old one */
        int nd = 0;
        for (int k = 0; k < f->n; k++)
          if (f->dead[k]) pos[nd++] = (uint32_t)k;
        np = nd;
        if (f->del[0]) old = f->del;
      }
      make_delete(t, f->path, pos, (size_t)np, &del, dpath, sizeof dpath);
      if (delta(t, hs_table_current_snapshot_id(t), old, &del, HS_TABLE_OP_DELETE, NULL, &e) !=
          HS_OK)
        goto fail;
      if (format >= 3) copy_str(f->del, sizeof f->del, dpath);
    } else if (op == 2) { /* remove one file */
      dfile *f = &fs[live[hs_test_rand(&rng) % (uint64_t)nl]];
      hs_table_row_delta d = {0};
      const char *rm[2] = {f->path, f->del};
      d.remove_files = rm;
      d.n_remove_files = f->del[0] ? 2 : 1;
      d.validate_no_new_deletes = -1;
      if (hs_table_commit_row_delta(t, &d, NULL, &e) != HS_OK) goto fail;
      f->live = false;
    } else { /* replace two files by one of their live rows */
      dfile *a = &fs[live[0]], *b = &fs[live[1]];
      dfile *c = &fs[nf];
      c->n = 0;
      for (int k = 0; k < a->n; k++)
        if (!a->dead[k]) c->ids[c->n++] = a->ids[k];
      for (int k = 0; k < b->n && c->n < 64; k++)
        if (!b->dead[k]) c->ids[c->n++] = b->ids[k];
      if (c->n == 0) continue;
      nf++;
      make_data_file(t, dir, c->ids, c->n, c->path, sizeof c->path);
      const char *adds[1] = {c->path};
      const char *rms[4];
      size_t nr = 0;
      rms[nr++] = a->path;
      rms[nr++] = b->path;
      if (a->del[0]) rms[nr++] = a->del;
      if (b->del[0]) rms[nr++] = b->del;
      hs_table_row_delta d = {0};
      d.operation = HS_TABLE_OP_REPLACE;
      d.validate_no_new_deletes = -1;
      d.add_data_files = adds;
      d.n_add_data_files = 1;
      d.remove_files = rms;
      d.n_remove_files = format >= 3 ? nr : 2; /* v2: position-delete files stay (dangling) */
      if (hs_table_commit_row_delta(t, &d, NULL, &e) != HS_OK) goto fail;
      a->live = b->live = false;
      c->live = true;
    }
    print_snapshot(t, fs, nf);
  }
  printf("metadata %s\n", hs_table_metadata_location(t));
  hs_free(fs);
  hs_table_free(t);
  return 0;
fail:
  fprintf(stderr, "driver: %s\n", e.message);
  return 1;
}

/* The race of test_forked, its outcome printed: "final <ids>" by the
 * successful commits' logs, and the metadata file. */
static int race_driver(const char *root, int format) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s.logs", root);
  hs_error e = {0};
  if (hs_fs_mkdirs(dir, &e) != HS_OK) return 1;
  race_result *r = hs_malloc(sizeof *r);
  if (!race(root, dir, format, r)) return 1;
  printf("final ");
  bool first = true;
  for (int i = 0; i < RACE_FILES; i++)
    for (int k = 0; r->removed[i] == 0 && k < RACE_ROWS; k++)
      if (k >= RACE_WRITERS || !r->deleted[i][k]) {
        printf("%s%d", first ? "" : ",", i * 100 + k);
        first = false;
      }
  for (int i = 0; i < RACE_APPENDS; i++)
    for (int k = 0; k < 10; k++) printf(",%d", 10000 + i * 10 + k);
  printf("\n");
  hs_table *t = NULL;
  if (hs_table_open(root, &t, &e) != HS_OK) return 1;
  printf("metadata %s\n", hs_table_metadata_location(t));
  hs_table_free(t);
  hs_free(r);
  return hs_test_failures ? 1 : 0;
}

int main(void) {
  const char *drv = getenv("HS_TXN_DRIVER");
  const char *mode = getenv("HS_TXN_MODE");
  if (drv != NULL && *drv && mode != NULL && strcmp(mode, "race") == 0) {
    const char *fmt = getenv("HS_TXN_FORMAT");
    return race_driver(drv, fmt ? atoi(fmt) : 2);
  }
  if (drv != NULL && *drv) {
    const char *fmt = getenv("HS_TXN_FORMAT");
    const char *seed = getenv("HS_TXN_SEED");
    return driver(drv, fmt ? atoi(fmt) : 2, seed ? strtoull(seed, NULL, 10) : 1);
  }
  for (int format = 2; format <= 3; format++) {
    test_row_delta(format);
    test_conflicts(format);
    test_forked(format);
    test_crash(format);
  }
  test_dv_puffin();
  test_partition_deletes();
  test_partitioned_data_files(2);
  test_partitioned_data_files(3);
  return hs_test_finish("test_txn");
}

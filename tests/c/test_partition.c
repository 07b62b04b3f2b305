/*
 * test_partition.c — partitioning and sorting on write: spec and sort
 * order evolution (ids, reuse, errors that commit nothing), appends split
 * into one data file per partition whose every row maps to the partition
 * tuple recorded in the manifest (recomputed here with the iceberg layer's
 * transforms from the file's own rows), files sorted by the sort order
 * (Iceberg's null and NaN placement), old files keeping their spec, scans
 * returning every row exactly once, and the take/sort primitives directly.
 *
 * Driver mode for tests/python/test_partition.py: with
 * HS_PARTITION_DRIVER=<dir> it reads commands from stdin, one per line:
 *   create <2|3> <file.parquet>      table at <dir> with the file's schema
 *   spec [<col>:<transform>[:<name>] ...]   set the partition spec
 *   sort [<col>:<asc|desc>:<first|last> ...] set the sort order
 *   append <file.parquet>            prints "snapshot <id>"
 * and finally prints "metadata <path of the latest metadata json>".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "io/fs.h"
#include "table/table.h"

/* ------------------------------------------------------------- data */

/* Schema {id: int64 not null, name: utf8, ts: timestamp[us], x: double,
 * tags: list<int32>}. */
static void make_schema(struct ArrowSchema *s) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, 5, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[0], "l", "id", 0, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[1], "u", "name", ARROW_FLAG_NULLABLE, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[2], "tsu:", "ts", ARROW_FLAG_NULLABLE, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[3], "g", "x", ARROW_FLAG_NULLABLE, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[4], "+l", "tags", ARROW_FLAG_NULLABLE, 1, &e), &e);
  CHECK_OK(
      hs_arrow_schema_init(s->children[4]->children[0], "i", "item", ARROW_FLAG_NULLABLE, 0, &e),
      &e);
}

static const char *const NAMES[] = {"alpha", "beta", "été", "ünï", "z", "é", "日本語", "ab"};

/* Column values as functions of the id. */
static bool name_null(int64_t id) {
  return id % 11 == 3;
}
static const char *name_of(int64_t id) {
  return NAMES[(id * 7 + 3) % 8];
}
static int64_t ts_of(int64_t id) {
  return (-3 * 86400 + id * 4111) * 1000000LL + id;
}
static bool x_null(int64_t id) {
  return id % 13 == 5;
}
static double x_of(int64_t id) {
  if (id % 17 == 0) return NAN;
  if (id % 17 == 1) return -NAN;
  return (double)((id * 37) % 23) - 11.5;
}
static int tags_len(int64_t id) {
  return (int)(id % 4);
} /* 0: null when id % 8 == 0 */

static void make_batch(struct ArrowArray *out, int64_t first, int64_t n) {
  hs_error e = {0};
  int64_t *ids = hs_malloc((size_t)n * 8), *ts = hs_malloc((size_t)n * 8);
  double *xs = hs_malloc((size_t)n * 8);
  int32_t *offs = hs_malloc((size_t)(n + 1) * 4), *toffs = hs_malloc((size_t)(n + 1) * 4);
  uint8_t *nvalid = hs_calloc((size_t)n / 8 + 1, 1), *xvalid = hs_calloc((size_t)n / 8 + 1, 1);
  uint8_t *tvalid = hs_calloc((size_t)n / 8 + 1, 1);
  char *data = hs_malloc((size_t)n * 16 + 1);
  int32_t *titems = hs_malloc((size_t)n * 12 + 4);
  int64_t nn = 0, xn = 0, tn = 0;
  offs[0] = toffs[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t id = first + i;
    ids[i] = id;
    ts[i] = ts_of(id);
    xs[i] = x_of(id);
    int len = 0;
    if (name_null(id)) {
      nn++;
    } else {
      nvalid[i / 8] |= (uint8_t)(1u << (i % 8));
      len = (int)strlen(name_of(id));
      memcpy(data + offs[i], name_of(id), (size_t)len);
    }
    offs[i + 1] = offs[i] + len;
    if (x_null(id)) {
      xn++;
    } else {
      xvalid[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    int tl = 0;
    if (id % 8 == 0) {
      tn++;
    } else {
      tvalid[i / 8] |= (uint8_t)(1u << (i % 8));
      tl = tags_len(id);
      for (int k = 0; k < tl; k++) titems[toffs[i] + k] = (int32_t)(id * 10 + k);
    }
    toffs[i + 1] = toffs[i] + tl;
  }
  struct ArrowArray cols[5];
  memset(cols, 0, sizeof cols);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[0], n, ids, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_binary(&cols[1], n, offs, data, nvalid, nn, &e), &e);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[2], n, ts, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[3], n, xs, xvalid, xn, &e), &e);
  CHECK_OK(hs_arrow_array_init(&cols[4], 2, 1, &e), &e);
  hs_arrow_array_set_buffer(&cols[4], 0, tvalid);
  hs_arrow_array_set_buffer(&cols[4], 1, toffs);
  cols[4].length = n;
  cols[4].null_count = tn;
  CHECK_OK(hs_arrow_array_make_primitive(cols[4].children[0], toffs[n], titems, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_struct(out, n, cols, 5, NULL, 0, &e), &e);
}

/* Append ids [first, first + rows) in `nb` batches. */
static hs_status append_rows(hs_table *t, int64_t first, int64_t rows, size_t nb, int64_t *snap,
                             hs_error *e) {
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArray *b = hs_calloc(nb, sizeof *b);
  int64_t per = rows / (int64_t)nb;
  for (size_t i = 0; i < nb; i++) {
    int64_t k = i + 1 == nb ? rows - per * (int64_t)i : per;
    make_batch(&b[i], first + per * (int64_t)i, k);
  }
  struct ArrowArrayStream st;
  CHECK_OK(hs_arrow_stream_from_batches(&s, b, nb, &st, e), e);
  hs_free(b);
  return hs_table_append(t, &st, snap, e);
}

/* Check every column of a batch against its id formula; collect ids. */
static void check_rows(const struct ArrowArray *b, int64_t *ids, size_t *n) {
  const struct ArrowArray *c0 = b->children[0], *c1 = b->children[1], *c2 = b->children[2];
  const struct ArrowArray *c3 = b->children[3], *c4 = b->children[4];
  for (int64_t r = 0; r < b->length; r++) {
    int64_t id = ((const int64_t *)c0->buffers[1])[c0->offset + r];
    ids[(*n)++] = id;
    bool nv = hs_arrow_is_valid(c1, r);
    CHECK(nv == !name_null(id));
    if (nv) {
      const int32_t *o = c1->buffers[1];
      int32_t a = o[c1->offset + r], z = o[c1->offset + r + 1];
      CHECK((size_t)(z - a) == strlen(name_of(id)) &&
            memcmp((const char *)c1->buffers[2] + a, name_of(id), (size_t)(z - a)) == 0);
    }
    CHECK(((const int64_t *)c2->buffers[1])[c2->offset + r] == ts_of(id));
    bool xv = hs_arrow_is_valid(c3, r);
    CHECK(xv == !x_null(id));
    if (xv) {
      double x = ((const double *)c3->buffers[1])[c3->offset + r], w = x_of(id);
      CHECK((isnan(x) && isnan(w) && signbit(x) == signbit(w)) || x == w);
    }
    bool tv = hs_arrow_is_valid(c4, r);
    CHECK(tv == (id % 8 != 0));
    if (tv) {
      const int32_t *o = c4->buffers[1];
      int32_t a = o[c4->offset + r], z = o[c4->offset + r + 1];
      CHECK(z - a == tags_len(id));
      const struct ArrowArray *it = c4->children[0];
      for (int32_t k = a; k < z && z - a == tags_len(id); k++)
        CHECK(((const int32_t *)it->buffers[1])[it->offset + k] == (int32_t)(id * 10 + k - a));
    }
  }
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Scan the current snapshot: every id in [0, n_expected) exactly once. */
static void check_scan(hs_table *t, int64_t n_expected) {
  hs_error e = {0};
  struct ArrowArrayStream st;
  CHECK_OK(hs_table_scan(t, -1, NULL, 0, &st, &e), &e);
  struct ArrowSchema schema;
  struct ArrowArray *batches = NULL;
  size_t nb = 0;
  CHECK_OK(hs_arrow_stream_collect(&st, &schema, &batches, &nb, &e), &e);
  st.release(&st);
  int64_t *ids = hs_malloc((size_t)n_expected * 2 * 8 + 8);
  size_t n = 0;
  for (size_t i = 0; i < nb; i++) {
    if (n + (size_t)batches[i].length > (size_t)n_expected * 2) break;
    check_rows(&batches[i], ids, &n);
  }
  CHECK_EQ_INT(n, n_expected);
  qsort(ids, n, 8, cmp_i64);
  for (size_t i = 0; i < n && (int64_t)n == n_expected; i++) CHECK_EQ_INT(ids[i], (int64_t)i);
  hs_free(ids);
  hs_arrow_batches_free(batches, nb);
  schema.release(&schema);
}

/* ------------------------------------------------ manifests and files */

typedef struct file_check {
  int32_t spec_id;
  size_t n_files;
  int64_t rows;
} file_check;

/* Check one data file against its manifest entry: every row's partition
 * tuple equals the entry's; rows sorted by the entry's sort order. */
static void check_file(hs_table *t, const hs_iceberg_manifest *m, const hs_iceberg_data_file *df) {
  hs_error e = {0};
  hs_parquet_reader *r = NULL;
  CHECK_OK(hs_parquet_reader_open(df->file_path, &r, &e), &e);
  if (r == NULL) return;
  struct ArrowArrayStream st;
  struct ArrowSchema schema;
  struct ArrowArray *batches = NULL;
  size_t nb = 0;
  CHECK_OK(hs_parquet_reader_stream(r, NULL, &st, &e), &e);
  CHECK_OK(hs_arrow_stream_collect(&st, &schema, &batches, &nb, &e), &e);
  st.release(&st);
  hs_parquet_reader_free(r);
  const hs_iceberg_schema *is = hs_iceberg_metadata_schema(&t->meta, t->meta.current_schema_id);
  hs_arena a;
  hs_arena_init(&a);
  hs_buf b1, b2;
  hs_buf_init(&b1);
  hs_buf_init(&b2);
  int64_t rows = 0;
  CHECK_EQ_INT(df->n_partition, m->spec.n_fields);
  for (size_t f = 0; f < m->spec.n_fields && f < df->n_partition; f++) {
    hs_table_column col;
    CHECK_OK(hs_table_column_bind(&schema, is, m->spec.fields[f].source_id, &col, &e), &e);
    for (size_t bi = 0; bi < nb; bi++) {
      for (int64_t i = 0; i < batches[bi].length; i++) {
        hs_iceberg_value v, out;
        hs_table_column_value(&col, &batches[bi], i, &v);
        CHECK_OK(hs_iceberg_transform_apply(&m->spec.fields[f].transform, col.it, &v, &out, &e),
                 &e);
        const hs_iceberg_value *want = &df->partition[f];
        CHECK(out.is_null == want->is_null);
        if (out.is_null || want->is_null) continue;
        b1.len = b2.len = 0;
        CHECK_OK(hs_iceberg_value_to_bytes(&m->partition_types[f], &out, &b1, &e), &e);
        CHECK_OK(hs_iceberg_value_to_bytes(&m->partition_types[f], want, &b2, &e), &e);
        CHECK(b1.len == b2.len && (b1.len == 0 || memcmp(b1.data, b2.data, b1.len) == 0));
      }
    }
  }
  for (size_t bi = 0; bi < nb; bi++) rows += batches[bi].length;
  CHECK_EQ_INT(rows, df->record_count);
  /* Sortedness: re-sorting (stable) must not move any row. */
  const hs_iceberg_sort_order *order = NULL;
  for (size_t i = 0; df->has_sort_order_id && i < t->meta.n_sort_orders; i++)
    if (t->meta.sort_orders[i].order_id == df->sort_order_id) order = &t->meta.sort_orders[i];
  hs_table_sort_key *keys = NULL;
  if (order != NULL && order->n_fields > 0 && rows > 0) {
    CHECK_OK(hs_table_sort_keys(order, &schema, is, &a, &keys, &e), &e);
    hs_table_row *rr = hs_malloc((size_t)rows * sizeof *rr);
    size_t k = 0;
    for (size_t bi = 0; bi < nb; bi++)
      for (int64_t i = 0; i < batches[bi].length; i++)
        rr[k++] = (hs_table_row){.row = i, .batch = (uint32_t)bi};
    CHECK_OK(hs_table_sort_rows(keys, order->n_fields, batches, rr, k, &e), &e);
    size_t moved = 0;
    k = 0;
    for (size_t bi = 0; bi < nb; bi++)
      for (int64_t i = 0; i < batches[bi].length; i++, k++)
        moved += rr[k].batch != bi || rr[k].row != i;
    CHECK_EQ_INT(moved, 0);
    hs_free(rr);
  }
  hs_buf_free(&b1);
  hs_buf_free(&b2);
  hs_arena_reset(&a);
  hs_arrow_batches_free(batches, nb);
  schema.release(&schema);
}

/* The manifests of the current snapshot, newest first: spec id, files
 * and rows of each; every data file checked with check_file. */
static size_t check_manifests(hs_table *t, file_check *out, size_t cap) {
  hs_error e = {0};
  const hs_iceberg_snapshot *cur = hs_table_current(t);
  if (cur == NULL) return 0;
  hs_arena a;
  hs_arena_init(&a);
  hs_buf buf;
  hs_buf_init(&buf);
  hs_iceberg_manifest_list list;
  CHECK_OK(hs_table_read_avro(t, cur->manifest_list, "list", &buf, &e), &e);
  CHECK_OK(hs_iceberg_manifest_list_read(buf.data, buf.len, &a, &list, &e), &e);
  size_t n = 0;
  for (size_t i = 0; i < list.n_files && n < cap; i++) {
    buf.len = 0;
    hs_iceberg_manifest m;
    CHECK_OK(hs_table_read_avro(t, list.files[i].manifest_path, "manifest", &buf, &e), &e);
    CHECK_OK(hs_iceberg_manifest_read(buf.data, buf.len, &list.files[i], &a, &m, &e), &e);
    CHECK_EQ_INT(m.partition_spec_id, list.files[i].partition_spec_id);
    CHECK_EQ_INT(list.files[i].n_partitions, m.spec.n_fields);
    out[n].spec_id = m.partition_spec_id;
    out[n].n_files = m.n_entries;
    out[n].rows = 0;
    for (size_t k = 0; k < m.n_entries; k++) {
      out[n].rows += m.entries[k].data_file.record_count;
      check_file(t, &m, &m.entries[k].data_file);
    }
    n++;
  }
  hs_buf_free(&buf);
  hs_arena_reset(&a);
  return n;
}

/* Distinct partition tuples of ids [first, first + n) under `spec`. */
static size_t count_partitions(hs_table *t, const hs_iceberg_partition_spec *spec, int64_t first,
                               int64_t n) {
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArray b;
  make_batch(&b, first, n);
  const hs_iceberg_schema *is = hs_iceberg_metadata_schema(&t->meta, t->meta.current_schema_id);
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_type *types = NULL;
  CHECK_OK(hs_iceberg_partition_types(is, spec, &a, &types, &e), &e);
  char **keys = hs_calloc((size_t)n, sizeof *keys);
  size_t distinct = 0;
  for (int64_t i = 0; i < n; i++) {
    hs_buf k;
    hs_buf_init(&k);
    for (size_t f = 0; f < spec->n_fields; f++) {
      hs_table_column col;
      CHECK_OK(hs_table_column_bind(&s, is, spec->fields[f].source_id, &col, &e), &e);
      hs_iceberg_value v, out;
      hs_table_column_value(&col, &b, i, &v);
      CHECK_OK(hs_iceberg_transform_apply(&spec->fields[f].transform, col.it, &v, &out, &e), &e);
      hs_buf_printf(&k, "|%d:", out.is_null);
      if (!out.is_null) {
        hs_buf raw;
        hs_buf_init(&raw);
        hs_iceberg_value_to_bytes(&types[f], &out, &raw, &e);
        for (size_t q = 0; q < raw.len; q++) hs_buf_printf(&k, "%02x", raw.data[q]);
        hs_buf_free(&raw);
      }
    }
    hs_buf_append_byte(&k, 0);
    bool seen = false;
    for (size_t q = 0; q < distinct && !seen; q++) seen = strcmp(keys[q], (char *)k.data) == 0;
    if (seen) {
      hs_buf_free(&k);
    } else {
      keys[distinct++] = (char *)hs_buf_detach(&k);
    }
  }
  for (size_t q = 0; q < distinct; q++) hs_free(keys[q]);
  hs_free(keys);
  hs_arena_reset(&a);
  b.release(&b);
  s.release(&s);
  return distinct;
}

static const hs_iceberg_partition_spec *default_spec(const hs_table *t) {
  for (size_t i = 0; i < t->meta.n_specs; i++)
    if (t->meta.specs[i].spec_id == t->meta.default_spec_id) return &t->meta.specs[i];
  return NULL;
}

static char *temp_dir(void) {
  char tmpl[] = "/tmp/hs_partition_XXXXXX";
  char *d = mkdtemp(tmpl);
  return d ? hs_strdup(d) : NULL;
}

static void rm_rf(const char *dir) {
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "rm -rf %s failed\n", dir);
}

/* ---------------------------------------------------------- round trip */

static void test_round_trip(int format) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options o;
  hs_table_options_init(&o);
  o.format_version = format;
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &o, &t, &e), &e);
  s.release(&s);
  if (t == NULL) return;
  int64_t snap = -1, total = 0;
  file_check fc[16];

  /* Unpartitioned first. */
  CHECK_OK(append_rows(t, 0, 100, 1, &snap, &e), &e);
  total += 100;

  /* Spec 1: bucket + truncate. */
  int64_t v0 = hs_table_version(t);
  hs_table_partition_field f1[] = {{"id", "bucket[4]", NULL}, {"name", "truncate[1]", NULL}};
  CHECK_OK(hs_table_set_partition_spec(t, f1, 2, &e), &e);
  CHECK_EQ_INT(hs_table_version(t), v0 + 1);
  CHECK_EQ_INT(t->meta.default_spec_id, 1);
  CHECK_EQ_INT(t->meta.last_partition_id, 1001);
  CHECK_EQ_INT(t->meta.n_snapshots, 1);
  const hs_iceberg_partition_spec *sp = default_spec(t);
  CHECK(sp != NULL && sp->n_fields == 2 && sp->fields[0].field_id == 1000 &&
        strcmp(sp->fields[0].name, "id_bucket_4") == 0 && sp->fields[1].field_id == 1001 &&
        strcmp(sp->fields[1].name, "name_trunc_1") == 0);
  size_t want = sp ? count_partitions(t, sp, 100, 300) : 0;
  CHECK_OK(append_rows(t, 100, 300, 3, &snap, &e), &e);
  total += 300;
  CHECK(want > 4);
  size_t nm = check_manifests(t, fc, 16);
  CHECK_EQ_INT(nm, 2);
  CHECK_EQ_INT(fc[0].spec_id, 1);
  CHECK_EQ_INT(fc[0].n_files, want);
  CHECK_EQ_INT(fc[0].rows, 300);
  CHECK_EQ_INT(fc[1].spec_id, 0);
  check_scan(t, total);

  /* Sort order: x descending nulls last, then id. */
  const char *cols[] = {"x", "id"};
  const int asc[] = {0, 1}, nf[] = {0, 1};
  CHECK_OK(hs_table_set_sort_order(t, cols, asc, nf, 2, &e), &e);
  CHECK_EQ_INT(t->meta.default_sort_order_id, 1);
  CHECK_OK(append_rows(t, 400, 500, 4, &snap, &e), &e);
  total += 500;
  nm = check_manifests(t, fc, 16); /* check_file verifies the sort */
  CHECK_EQ_INT(nm, 3);
  check_scan(t, total);

  /* Evolve: day(ts); older manifests keep spec 1 and 0. */
  hs_table_partition_field f2[] = {{"ts", "day", NULL}};
  CHECK_OK(hs_table_set_partition_spec(t, f2, 1, &e), &e);
  CHECK_EQ_INT(t->meta.default_spec_id, 2);
  CHECK_EQ_INT(default_spec(t)->fields[0].field_id, 1002);
  CHECK_OK(append_rows(t, 900, 200, 2, &snap, &e), &e);
  total += 200;
  nm = check_manifests(t, fc, 16);
  CHECK_EQ_INT(nm, 4);
  CHECK_EQ_INT(fc[0].spec_id, 2);
  CHECK_EQ_INT(fc[1].spec_id, 1);
  CHECK_EQ_INT(fc[3].spec_id, 0);
  check_scan(t, total);

  /* Field id reuse and spec re-selection. */
  hs_table_partition_field f3[] = {{"id", "bucket[4]", NULL}};
  CHECK_OK(hs_table_set_partition_spec(t, f3, 1, &e), &e);
  CHECK_EQ_INT(t->meta.default_spec_id, 3);
  CHECK_EQ_INT(default_spec(t)->fields[0].field_id, 1000);
  CHECK_EQ_INT(t->meta.last_partition_id, 1002);
  v0 = hs_table_version(t);
  CHECK_OK(hs_table_set_partition_spec(t, f3, 1, &e), &e); /* no change: no commit */
  CHECK_EQ_INT(hs_table_version(t), v0);
  CHECK_OK(hs_table_set_partition_spec(t, f1, 2, &e), &e);
  CHECK_EQ_INT(t->meta.default_spec_id, 1);
  CHECK_EQ_INT(t->meta.n_specs, 4);
  CHECK_OK(hs_table_set_partition_spec(t, NULL, 0, &e), &e);
  CHECK_EQ_INT(t->meta.default_spec_id, 0);
  /* Unpartitioned but sorted: one sorted file. */
  CHECK_OK(append_rows(t, 1100, 50, 2, &snap, &e), &e);
  total += 50;
  nm = check_manifests(t, fc, 16);
  CHECK_EQ_INT(fc[0].spec_id, 0);
  CHECK_EQ_INT(fc[0].n_files, 1);
  CHECK_OK(hs_table_set_sort_order(t, NULL, NULL, NULL, 0, &e), &e);
  CHECK_EQ_INT(t->meta.default_sort_order_id, 0);
  CHECK_OK(hs_table_set_sort_order(t, cols, asc, nf, 2, &e), &e);
  CHECK_EQ_INT(t->meta.default_sort_order_id, 1);
  CHECK_EQ_INT(t->meta.n_sort_orders, 2);

  /* Errors commit nothing. */
  v0 = hs_table_version(t);
  hs_table_partition_field bad[][2] = {
      {{"nope", "identity", NULL}, {0}},  {{"id", "bucket[0]", NULL}, {0}},
      {{"id", "truncate[x]", NULL}, {0}}, {{"name", "day", NULL}, {0}},
      {{"tags", "identity", NULL}, {0}},  {{"id", "identity", "name"}, {0}},
      {{"x", "bucket[2]", NULL}, {0}},    {{"id", "identity", NULL}, {"id", "identity", "id2"}},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t n = bad[i][1].source ? 2 : 1;
    hs_status st = hs_table_set_partition_spec(t, bad[i], n, &e);
    CHECK(st != HS_OK);
    if (st == HS_OK) fprintf(stderr, "bad spec %zu accepted\n", i);
  }
  const char *badcols[] = {"nope"};
  CHECK(hs_table_set_sort_order(t, badcols, NULL, NULL, 1, &e) == HS_ERR_SCHEMA);
  const char *tagcol[] = {"tags"};
  CHECK(hs_table_set_sort_order(t, tagcol, NULL, NULL, 1, &e) == HS_ERR_SCHEMA);
  CHECK_EQ_INT(hs_table_version(t), v0);

  /* A reopened handle sees it all. */
  hs_table *t2 = NULL;
  CHECK_OK(hs_table_open(root, &t2, &e), &e);
  if (t2) check_scan(t2, total);
  hs_table_free(t2);
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

/* ----------------------------------------------------- sort semantics */

static void test_sort_semantics(void) {
  hs_error e = {0};
  /* One double column: values in arrival order, then the expected order. */
  double vals[] = {1.0, NAN, -0.0, -INFINITY, 0.0, -NAN, INFINITY, -2.5, 0.0, NAN};
  bool null_at[] = {false, false, false, false, true, false, false, false, false, false};
  size_t n = sizeof vals / sizeof vals[0];
  struct ArrowSchema s;
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 1, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s.children[0], "g", "x", ARROW_FLAG_NULLABLE, 0, &e), &e);
  double *xs = hs_malloc(sizeof vals);
  memcpy(xs, vals, sizeof vals);
  uint8_t *valid = hs_calloc(2, 1);
  for (size_t i = 0; i < n; i++)
    if (!null_at[i]) valid[i / 8] |= (uint8_t)(1u << (i % 8));
  struct ArrowArray col, batch;
  CHECK_OK(hs_arrow_array_make_primitive(&col, (int64_t)n, xs, valid, 1, &e), &e);
  CHECK_OK(hs_arrow_array_make_struct(&batch, (int64_t)n, &col, 1, NULL, 0, &e), &e);
  hs_iceberg_schema is;
  memset(&is, 0, sizeof is);
  hs_iceberg_field fld = {.id = 1, .name = "x", .type = {.id = HS_ICE_DOUBLE}};
  is.root.id = HS_ICE_STRUCT;
  is.root.fields = &fld;
  is.root.n_fields = 1;
  hs_table_sort_key key;
  CHECK_OK(hs_table_column_bind(&s, &is, 1, &key.col, &e), &e);
  hs_table_row rows[16];
  /* Ascending, nulls first: null, -NaN, -inf, -2.5, -0, 0 (row 8), 1, inf, NaN (1), NaN (9). */
  key.descending = false;
  key.nulls_first = true;
  for (size_t i = 0; i < n; i++) rows[i] = (hs_table_row){.row = (int64_t)i, .batch = 0};
  CHECK_OK(hs_table_sort_rows(&key, 1, &batch, rows, n, &e), &e);
  int64_t want_asc[] = {4, 5, 3, 7, 2, 8, 0, 6, 1, 9};
  for (size_t i = 0; i < n; i++) CHECK_EQ_INT(rows[i].row, want_asc[i]);
  /* Descending, nulls last: stable among equal NaNs. */
  key.descending = true;
  key.nulls_first = false;
  for (size_t i = 0; i < n; i++) rows[i] = (hs_table_row){.row = (int64_t)i, .batch = 0};
  CHECK_OK(hs_table_sort_rows(&key, 1, &batch, rows, n, &e), &e);
  int64_t want_desc[] = {1, 9, 6, 0, 8, 2, 7, 3, 5, 4};
  for (size_t i = 0; i < n; i++) CHECK_EQ_INT(rows[i].row, want_desc[i]);

  /* Take: rows 9, 0, 1, 2 then 4 (null) from two "batches" (the same one). */
  struct ArrowArray two[2] = {batch, batch};
  hs_table_row pick[] = {{9, 1}, {0, 0}, {1, 0}, {2, 0}, {4, 1}};
  struct ArrowArray out;
  CHECK_OK(hs_table_take(&s, two, pick, 5, &out, &e), &e);
  CHECK_EQ_INT(out.length, 5);
  CHECK_EQ_INT(out.children[0]->null_count, 1);
  const double *ov = out.children[0]->buffers[1];
  CHECK(isnan(ov[0]) && ov[1] == 1.0 && isnan(ov[2]) && ov[3] == 0.0 && signbit(ov[3]));
  CHECK(!hs_arrow_is_valid(out.children[0], 4) && hs_arrow_is_valid(out.children[0], 3));
  CHECK_OK(hs_arrow_array_validate(&s, &out, &e), &e);
  out.release(&out);
  batch.release(&batch);
  s.release(&s);
}

/* Take over nested columns with offsets: slices of a batch. */
static void test_take_nested(void) {
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArray b[2];
  make_batch(&b[0], 0, 40);
  make_batch(&b[1], 40, 40);
  /* Slice batch 1 by 5 rows at the top. */
  b[1].offset = 5;
  b[1].length = 35;
  hs_table_row rows[60];
  size_t n = 0;
  for (int64_t i = 34; i >= 0; i -= 2) rows[n++] = (hs_table_row){i, 1};
  for (int64_t i = 0; i < 40; i += 3) rows[n++] = (hs_table_row){i, 0};
  struct ArrowArray out;
  CHECK_OK(hs_table_take(&s, b, rows, n, &out, &e), &e);
  CHECK_OK(hs_arrow_array_validate(&s, &out, &e), &e);
  int64_t ids[64];
  size_t k = 0;
  check_rows(&out, ids, &k); /* every column still matches its id */
  CHECK_EQ_INT(k, n);
  for (size_t i = 0; i < n && k == n; i++)
    CHECK_EQ_INT(ids[i], rows[i].batch ? 45 + rows[i].row : rows[i].row);
  out.release(&out);
  b[0].release(&b[0]);
  b[1].release(&b[1]);
  s.release(&s);
}

/* -------------------------------------------------------------- driver */

static hs_status open_parquet_stream(const char *path, struct ArrowArrayStream *st, hs_error *e) {
  hs_parquet_reader *r = NULL;
  hs_status rc = hs_parquet_reader_open(path, &r, e);
  if (rc != HS_OK) return rc;
  rc = hs_parquet_reader_stream(r, NULL, st, e);
  hs_parquet_reader_free(r);
  return rc;
}

static int driver(const char *root) {
  hs_error e = {0};
  hs_table *t = NULL;
  char line[8192];
  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\r\n")] = '\0';
    char *words[64];
    size_t nw = 0;
    for (char *tok = strtok(line, " "); tok && nw < 64; tok = strtok(NULL, " ")) words[nw++] = tok;
    if (nw == 0) continue;
    hs_status rc = HS_OK;
    if (strcmp(words[0], "create") == 0 && nw == 3) {
      hs_parquet_reader *r = NULL;
      struct ArrowSchema s;
      hs_table_options o;
      hs_table_options_init(&o);
      o.format_version = atoi(words[1]);
      rc = hs_parquet_reader_open(words[2], &r, &e);
      if (rc == HS_OK) rc = hs_parquet_reader_schema(r, &s, &e);
      hs_parquet_reader_free(r);
      if (rc == HS_OK) {
        rc = hs_table_create(root, &s, &o, &t, &e);
        s.release(&s);
      }
    } else if (strcmp(words[0], "spec") == 0 && t != NULL) {
      hs_table_partition_field f[63];
      for (size_t i = 1; i < nw; i++) {
        char *a = words[i], *b = strchr(a, ':');
        char *c = b ? strchr(b + 1, ':') : NULL;
        if (b) *b++ = '\0';
        if (c) *c++ = '\0';
        f[i - 1] = (hs_table_partition_field){a, b, c};
      }
      rc = hs_table_set_partition_spec(t, f, nw - 1, &e);
    } else if (strcmp(words[0], "sort") == 0 && t != NULL) {
      const char *cols[63];
      int asc[63], nf[63];
      for (size_t i = 1; i < nw; i++) {
        char *a = words[i], *b = strchr(a, ':');
        char *c = b ? strchr(b + 1, ':') : NULL;
        if (b) *b++ = '\0';
        if (c) *c++ = '\0';
        cols[i - 1] = a;
        asc[i - 1] = !(b && strcmp(b, "desc") == 0);
        nf[i - 1] = c ? strcmp(c, "first") == 0 : asc[i - 1];
      }
      rc = hs_table_set_sort_order(t, cols, asc, nf, nw - 1, &e);
    } else if (strcmp(words[0], "append") == 0 && nw == 2 && t != NULL) {
      struct ArrowArrayStream st;
      int64_t snap = -1;
      rc = open_parquet_stream(words[1], &st, &e);
      if (rc == HS_OK) rc = hs_table_append(t, &st, &snap, &e);
      if (rc == HS_OK) printf("snapshot %lld\n", (long long)snap);
    } else {
      fprintf(stderr, "driver: bad command '%s'\n", words[0]);
      hs_table_free(t);
      return 2;
    }
    if (rc != HS_OK) {
      fprintf(stderr, "driver: %s: %s\n", hs_status_str(rc), e.message);
      hs_table_free(t);
      return 1;
    }
    fflush(stdout);
  }
  if (t != NULL) printf("metadata %s\n", hs_table_metadata_location(t));
  hs_table_free(t);
  return 0;
}

int main(void) {
  const char *drv = getenv("HS_PARTITION_DRIVER");
  if (drv != NULL && *drv) return driver(drv);
  test_sort_semantics();
  test_take_nested();
  test_round_trip(2);
  test_round_trip(3);
  return hs_test_finish("test_partition");
}

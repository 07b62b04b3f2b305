/*
 * partition.c — partition spec evolution and clustered writes.
 *
 * hs_table_set_partition_spec adds (or re-selects) a partition spec and
 * makes it the default in a metadata-only commit: the next metadata
 * version goes through the same exclusive publish as appends, retried on a
 * lost race with the change re-applied to the winner's version
 * (hs_table_commit_metadata, also used by sort.c). Following the Iceberg
 * reference implementations in v2+: a field whose source and transform
 * already appeared in an earlier spec gets that field's id (and name, when
 * none is given) back; new fields get last-partition-id + 1 (ids 1000+); a
 * spec equal to an existing one re-selects it instead of adding a copy.
 * Files already written keep the spec they were written with: manifests
 * carry their spec id.
 *
 * hs_table_write_clustered is the append path for tables whose default
 * spec is partitioned or whose default sort order sorts: the whole write is
 * buffered (sorting needs it), each row's partition tuple is computed with
 * the iceberg layer's transforms and serialized into a key, rows are grouped
 * by key in arrival order (a counting sort by group), each group is stably
 * sorted by the sort order, and each group becomes one data file written in
 * chunks gathered by hs_table_take. The partition tuple recorded in the
 * manifest is decoded back from the key, so it is exactly what grouped the
 * rows.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../arrow/arrow.h"
#include "../io/fs.h"
#include "table.h"
#include "timetravel.h"

/* Rows gathered into one batch handed to the Parquet writer. */
#define TAKE_CHUNK_ROWS 65536

/* Metadata-only commits (hs_table_commit_metadata) are in txn.c. */

/* ------------------------------------------------- set_partition_spec */

typedef struct spec_req {
  const hs_table_partition_field *fields;
  size_t n;
} spec_req;

static bool transform_equal(const hs_iceberg_transform *a, const hs_iceberg_transform *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == HS_ICE_T_BUCKET || a->kind == HS_ICE_T_TRUNCATE) return a->param == b->param;
  return a->kind != HS_ICE_T_UNKNOWN;
}

static bool specs_equal(const hs_iceberg_partition_spec *a, const hs_iceberg_partition_spec *b) {
  if (a->n_fields != b->n_fields) return false;
  for (size_t i = 0; i < a->n_fields; i++) {
    const hs_iceberg_partition_field *x = &a->fields[i], *y = &b->fields[i];
    if (x->n_source_ids || y->n_source_ids || x->source_id != y->source_id ||
        x->field_id != y->field_id || strcmp(x->name, y->name) != 0 ||
        !transform_equal(&x->transform, &y->transform))
      return false;
  }
  return true;
}

/* Iceberg's generated partition field names (as its UpdatePartitionSpec). */
static const char *default_name(hs_arena *a, const char *src, const hs_iceberg_transform *t) {
  char buf[512];
  switch (t->kind) {
  case HS_ICE_T_IDENTITY: snprintf(buf, sizeof buf, "%s", src); break;
  case HS_ICE_T_BUCKET: snprintf(buf, sizeof buf, "%s_bucket_%d", src, (int)t->param); break;
  case HS_ICE_T_TRUNCATE: snprintf(buf, sizeof buf, "%s_trunc_%d", src, (int)t->param); break;
  case HS_ICE_T_YEAR: snprintf(buf, sizeof buf, "%s_year", src); break;
  case HS_ICE_T_MONTH: snprintf(buf, sizeof buf, "%s_month", src); break;
  case HS_ICE_T_DAY: snprintf(buf, sizeof buf, "%s_day", src); break;
  case HS_ICE_T_HOUR: snprintf(buf, sizeof buf, "%s_hour", src); break;
  default: snprintf(buf, sizeof buf, "%s_null", src); break;
  }
  return hs_arena_strndup(a, buf, strlen(buf));
}

static hs_status spec_edit(const hs_iceberg_metadata *old, hs_iceberg_metadata *m, hs_arena *a,
                           void *ctx, bool *changed, hs_error *err) {
  const spec_req *rq = ctx;
  const hs_iceberg_schema *schema = hs_iceberg_metadata_schema(old, old->current_schema_id);
  if (schema == NULL) return hs_error_set(err, HS_ERR_CORRUPT, "no current schema");
  hs_iceberg_partition_spec want = {0};
  want.n_fields = rq->n;
  if (rq->n && (want.fields = hs_arena_alloc(a, rq->n * sizeof *want.fields)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  int32_t last_pid = old->has_last_partition_id ? old->last_partition_id : 999;
  if (last_pid < 999) last_pid = 999;
  for (size_t s = 0; s < old->n_specs; s++)
    for (size_t k = 0; k < old->specs[s].n_fields; k++)
      if (old->specs[s].fields[k].field_id > last_pid) last_pid = old->specs[s].fields[k].field_id;
  for (size_t i = 0; i < rq->n; i++) {
    const hs_table_partition_field *in = &rq->fields[i];
    const char *col = in->source ? in->source : "(null)";
    const hs_iceberg_field *f = NULL;
    for (size_t k = 0; in->source && k < schema->root.n_fields; k++)
      if (strcmp(schema->root.fields[k].name, in->source) == 0) f = &schema->root.fields[k];
    if (f == NULL)
      return hs_error_set(err, HS_ERR_SCHEMA, "partition field %zu: no top-level column '%s'", i,
                          col);
    hs_iceberg_partition_field *pf = &want.fields[i];
    hs_status st = hs_iceberg_transform_parse(in->transform ? in->transform : "(null)", false, a,
                                              &pf->transform, err);
    hs_iceberg_type rt;
    if (st == HS_OK) st = hs_iceberg_transform_result_type(&pf->transform, &f->type, &rt, err);
    if (st == HS_OK &&
        (f->type.id == HS_ICE_STRUCT || f->type.id == HS_ICE_LIST || f->type.id == HS_ICE_MAP))
      st = hs_error_set(err, HS_ERR_SCHEMA, "a %s cannot be partitioned",
                        hs_iceberg_type_name(f->type.id));
    if (st != HS_OK) {
      hs_error_prefix(err, "partition field %zu (%s, %s): ", i, col,
                      in->transform ? in->transform : "(null)");
      return st;
    }
    pf->source_id = f->id;
    pf->has_field_id = true;
    /* Recycle a historical field with the same source and transform. */
    const hs_iceberg_partition_field *hist = NULL;
    for (size_t s = 0; s < old->n_specs && hist == NULL; s++)
      for (size_t k = 0; k < old->specs[s].n_fields && hist == NULL; k++) {
        const hs_iceberg_partition_field *h = &old->specs[s].fields[k];
        if (h->n_source_ids == 0 && h->source_id == f->id &&
            transform_equal(&h->transform, &pf->transform) &&
            (in->name == NULL || strcmp(in->name, h->name) == 0))
          hist = h;
      }
    if (hist != NULL) {
      pf->field_id = hist->field_id;
      pf->name = hist->name;
    } else {
      if (last_pid == INT32_MAX)
        return hs_error_set(err, HS_ERR_INVALID_ARG, "partition ids exhausted");
      pf->field_id = ++last_pid;
      pf->name = in->name ? hs_arena_strndup(a, in->name, strlen(in->name))
                          : default_name(a, f->name, &pf->transform);
      if (pf->name == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    }
    if (pf->name[0] == '\0')
      return hs_error_set(err, HS_ERR_INVALID_ARG, "partition field %zu: empty name", i);
    for (size_t k = 0; k < i; k++) {
      if (strcmp(want.fields[k].name, pf->name) == 0)
        return hs_error_set(err, HS_ERR_INVALID_ARG, "partition field name '%s' used twice",
                            pf->name);
      if (want.fields[k].source_id == pf->source_id &&
          transform_equal(&want.fields[k].transform, &pf->transform))
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "partition fields %zu and %zu are the same (%s, %s)", k, i, col,
                            in->transform);
    }
    /* A partition name may shadow a column only as that column's identity. */
    for (size_t k = 0; k < schema->root.n_fields; k++) {
      const hs_iceberg_field *c = &schema->root.fields[k];
      if (strcmp(c->name, pf->name) == 0 &&
          !(pf->transform.kind == HS_ICE_T_IDENTITY && c->id == pf->source_id))
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "partition field name '%s' conflicts with a column", pf->name);
    }
  }
  m->has_last_partition_id = true;
  m->last_partition_id = last_pid;
  int32_t max_id = -1;
  for (size_t s = 0; s < old->n_specs; s++) {
    if (old->specs[s].spec_id > max_id) max_id = old->specs[s].spec_id;
    if (specs_equal(&old->specs[s], &want)) {
      *changed = old->default_spec_id != old->specs[s].spec_id || !old->has_last_partition_id ||
                 old->last_partition_id != last_pid;
      m->default_spec_id = old->specs[s].spec_id;
      return HS_OK;
    }
  }
  want.spec_id = max_id + 1;
  hs_iceberg_partition_spec *specs = hs_arena_alloc(a, (old->n_specs + 1) * sizeof *specs);
  if (specs == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (old->n_specs) memcpy(specs, old->specs, old->n_specs * sizeof *specs);
  specs[old->n_specs] = want;
  m->specs = specs;
  m->n_specs = old->n_specs + 1;
  m->default_spec_id = want.spec_id;
  *changed = true;
  return HS_OK;
}

hs_status hs_table_set_partition_spec(hs_table *table, const hs_table_partition_field *fields,
                                      size_t n, hs_error *err) {
  if (table == NULL || (n > 0 && fields == NULL))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "set_partition_spec: no table or fields");
  spec_req rq = {fields, n};
  return hs_table_commit_metadata(table, "set_partition_spec", spec_edit, &rq, err);
}

/* --------------------------------------------------- clustered writes */

/* Groups of rows with equal partition keys. Keys are concatenated in
 * `keys`; `slots` is an open-addressing table of group index + 1. */
typedef struct grouping {
  hs_buf keys;
  size_t *key_off, *key_len;
  int64_t *count;
  size_t n_groups, cap_groups;
  uint32_t *slots;
  size_t n_slots; /* power of two */
} grouping;

static void grouping_free(grouping *g) {
  hs_buf_free(&g->keys);
  hs_free(g->key_off);
  hs_free(g->key_len);
  hs_free(g->count);
  hs_free(g->slots);
}

static uint32_t key_hash(const uint8_t *p, size_t n) {
  static const uint8_t empty[1];
  return hs_murmur3_x86_32(n ? p : empty, n, 0x9747b28cu);
}

static hs_status grouping_rehash(grouping *g, hs_error *err) {
  size_t ns = g->n_slots ? g->n_slots * 2 : 1024;
  uint32_t *slots = hs_calloc(ns, sizeof *slots);
  if (slots == NULL) return hs_error_set(err, HS_ERR_NOMEM, "partitions: out of memory");
  for (size_t i = 0; i < g->n_groups; i++) {
    size_t h = key_hash(g->keys.data + g->key_off[i], g->key_len[i]) & (ns - 1);
    while (slots[h] != 0) h = (h + 1) & (ns - 1);
    slots[h] = (uint32_t)(i + 1);
  }
  hs_free(g->slots);
  g->slots = slots;
  g->n_slots = ns;
  return HS_OK;
}

/* The group of key `k` (created when new). */
static hs_status grouping_find(grouping *g, const uint8_t *k, size_t n, uint32_t *out,
                               hs_error *err) {
  if ((g->n_groups + 1) * 2 > g->n_slots) {
    hs_status st = grouping_rehash(g, err);
    if (st != HS_OK) return st;
  }
  size_t h = key_hash(k, n) & (g->n_slots - 1);
  for (;;) {
    uint32_t s = g->slots[h];
    if (s == 0) break;
    size_t i = s - 1;
    if (g->key_len[i] == n && (n == 0 || memcmp(g->keys.data + g->key_off[i], k, n) == 0)) {
      g->count[i]++;
      *out = (uint32_t)i;
      return HS_OK;
    }
    h = (h + 1) & (g->n_slots - 1);
  }
  if (g->n_groups >= UINT32_MAX - 1)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "too many partitions in one write");
  if (g->n_groups == g->cap_groups) {
    size_t cap = g->cap_groups ? g->cap_groups * 2 : 64;
    size_t *ko = hs_realloc(g->key_off, cap * sizeof *ko);
    if (ko) g->key_off = ko;
    size_t *kl = ko ? hs_realloc(g->key_len, cap * sizeof *kl) : NULL;
    if (kl) g->key_len = kl;
    int64_t *c = kl ? hs_realloc(g->count, cap * sizeof *c) : NULL;
    if (c == NULL) return hs_error_set(err, HS_ERR_NOMEM, "partitions: out of memory");
    g->count = c;
    g->cap_groups = cap;
  }
  size_t i = g->n_groups++;
  g->key_off[i] = g->keys.len;
  g->key_len[i] = n;
  g->count[i] = 1;
  if (n && !hs_buf_append(&g->keys, k, n))
    return hs_error_set(err, HS_ERR_NOMEM, "partitions: out of memory");
  g->slots[h] = (uint32_t)(i + 1);
  *out = (uint32_t)i;
  return HS_OK;
}

typedef struct part_col {
  hs_table_column col;
  const hs_iceberg_transform *tr;
  const hs_iceberg_type *rt; /* result type */
} part_col;

/* Append the partition key of one row: per field a null flag, then the
 * value's single-value bytes with a 4-byte length. NaN is canonical so
 * that every NaN lands in one partition. */
static hs_status row_key(const part_col *pc, size_t n, const struct ArrowArray *batch, int64_t row,
                         hs_buf *key, hs_error *err) {
  for (size_t i = 0; i < n; i++) {
    hs_iceberg_value v, r;
    hs_table_column_value(&pc[i].col, batch, row, &v);
    hs_status st = hs_iceberg_transform_apply(pc[i].tr, pc[i].col.it, &v, &r, err);
    if (st != HS_OK) {
      hs_error_prefix(err, "column '%s' row %lld: ", pc[i].col.name, (long long)row);
      return st;
    }
    if (r.is_null) {
      if (!hs_buf_append_byte(key, 0)) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      continue;
    }
    if ((pc[i].rt->id == HS_ICE_FLOAT || pc[i].rt->id == HS_ICE_DOUBLE) && isnan(r.f64))
      r.f64 = NAN;
    size_t at = key->len;
    uint8_t hdr[5] = {1, 0, 0, 0, 0};
    if (!hs_buf_append(key, hdr, sizeof hdr))
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    if ((st = hs_iceberg_value_to_bytes(pc[i].rt, &r, key, err)) != HS_OK) return st;
    hs_store_u32le(key->data + at + 1, (uint32_t)(key->len - at - sizeof hdr));
  }
  return HS_OK;
}

/* Decode a key back into a partition tuple (bytes borrowed from the key). */
static hs_status key_decode(const part_col *pc, size_t n, const uint8_t *p, size_t len,
                            hs_iceberg_value *out, hs_error *err) {
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    memset(&out[i], 0, sizeof out[i]);
    if (at >= len) return hs_error_set(err, HS_ERR_INTERNAL, "partition key truncated");
    if (p[at++] == 0) {
      out[i].is_null = true;
      continue;
    }
    if (len - at < 4) return hs_error_set(err, HS_ERR_INTERNAL, "partition key truncated");
    size_t vl = hs_load_u32le(p + at);
    at += 4;
    if (len - at < vl) return hs_error_set(err, HS_ERR_INTERNAL, "partition key truncated");
    hs_status st = hs_iceberg_value_from_bytes(pc[i].rt, p + at, vl, &out[i], err);
    if (st != HS_OK) return st;
    at += vl;
  }
  return HS_OK;
}

/* Write rows[0..n) of `batches` as one Parquet file at `path`, its
 * manifest entry into *df (metrics from the footer written: no read back,
 * which on S3 is a HEAD and GETs). On failure nothing is left at `path`. */
static hs_status write_group(const hs_table *t, const char *path, const struct ArrowSchema *stamped,
                             const struct ArrowArray *batches, const hs_table_row *rows, size_t n,
                             const hs_iceberg_data_file_options *dfo, hs_arena *arena,
                             hs_iceberg_data_file *df, hs_error *err) {
  hs_parquet_write_options po;
  hs_parquet_write_options_init(&po);
  hs_table_parquet_options(t, &po); /* write.parquet.* table properties */
  hs_parquet_writer *w = NULL;
  hs_status st = hs_parquet_writer_open(path, stamped, &po, &w, err);
  if (st != HS_OK) return st;
  for (size_t at = 0; at < n && st == HS_OK; at += TAKE_CHUNK_ROWS) {
    size_t k = n - at < TAKE_CHUNK_ROWS ? n - at : TAKE_CHUNK_ROWS;
    struct ArrowArray part;
    st = hs_table_take(stamped, batches, rows + at, k, &part, err);
    if (st == HS_OK) {
      st = hs_parquet_writer_write(w, &part, err);
      part.release(&part);
    }
  }
  if (st == HS_OK) st = hs_parquet_writer_close(w, err);
  if (st == HS_OK &&
      (st = hs_iceberg_data_file_from_parquet_writer(w, dfo, arena, df, err)) != HS_OK)
    (void)hs_table_file_remove(path, NULL);
  hs_parquet_writer_free(w); /* removes the file unless closed */
  return st;
}

hs_status hs_table_write_clustered(const hs_table *t, const hs_iceberg_schema *schema,
                                   const hs_iceberg_partition_spec *spec,
                                   const hs_iceberg_sort_order *order,
                                   const struct ArrowSchema *stamped,
                                   struct ArrowArrayStream *stream, hs_arena *arena,
                                   hs_iceberg_data_file **files_out, size_t *n_files_out,
                                   hs_error *err) {
  return hs_table_write_clustered_split(t, schema, spec, order, stamped, stream, 0, arena,
                                        files_out, n_files_out, err);
}

hs_status hs_table_write_clustered_split(const hs_table *t, const hs_iceberg_schema *schema,
                                         const hs_iceberg_partition_spec *spec,
                                         const hs_iceberg_sort_order *order,
                                         const struct ArrowSchema *stamped,
                                         struct ArrowArrayStream *stream, int64_t rows_per_file,
                                         hs_arena *arena, hs_iceberg_data_file **files_out,
                                         size_t *n_files_out, hs_error *err) {
  *files_out = NULL;
  *n_files_out = 0;
  struct ArrowArray *batches = NULL;
  size_t n_batches = 0, cap = 0;
  int64_t total = 0;
  hs_status st = HS_OK;
  grouping g;
  memset(&g, 0, sizeof g);
  hs_buf key;
  hs_buf_init(&key);
  uint32_t *group_of = NULL;
  hs_table_row *rows = NULL;
  size_t *start = NULL;
  hs_iceberg_data_file *files = NULL;
  size_t n_written = 0, n_out = 0; /* files written, to write */
  char **paths = NULL;

  /* 1. Buffer the write. */
  for (;;) {
    struct ArrowArray b;
    memset(&b, 0, sizeof b);
    int rc = stream->get_next(stream, &b);
    if (rc != 0) {
      const char *msg = stream->get_last_error ? stream->get_last_error(stream) : NULL;
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "append: input stream failed (%d): %s", rc,
                        msg ? msg : "no message");
      break;
    }
    if (b.release == NULL) break;
    if ((st = hs_arrow_array_validate(stamped, &b, err)) != HS_OK) {
      b.release(&b);
      break;
    }
    if (b.length == 0) {
      b.release(&b);
      continue;
    }
    if (n_batches == cap) {
      size_t nc = cap ? cap * 2 : 16;
      struct ArrowArray *nb = hs_realloc(batches, nc * sizeof *nb);
      if (nb == NULL || nc > UINT32_MAX) {
        b.release(&b);
        if (nb) batches = nb;
        st = hs_error_set(err, HS_ERR_NOMEM, "append: out of memory (%zu batches)", nc);
        break;
      }
      batches = nb;
      cap = nc;
    }
    batches[n_batches++] = b;
    total += b.length;
  }
  if (st != HS_OK || total == 0) goto done;

  /* 2. Partition key of every row -> group. */
  size_t np = spec ? spec->n_fields : 0;
  hs_iceberg_type *ptypes = NULL;
  part_col *pc = np ? hs_arena_alloc(arena, np * sizeof *pc) : NULL;
  if (np && pc == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "append: out of memory");
    goto done;
  }
  if (np && (st = hs_iceberg_partition_types(schema, spec, arena, &ptypes, err)) != HS_OK)
    goto done;
  for (size_t i = 0; i < np; i++) {
    const hs_iceberg_partition_field *pf = &spec->fields[i];
    if ((st = hs_table_column_bind(stamped, schema, pf->source_id, &pc[i].col, err)) != HS_OK) {
      hs_error_prefix(err, "partition field '%s': ", pf->name);
      goto done;
    }
    pc[i].tr = &pf->transform;
    pc[i].rt = &ptypes[i];
  }
  if ((group_of = hs_malloc((size_t)total * sizeof *group_of)) == NULL ||
      (rows = hs_malloc((size_t)total * sizeof *rows)) == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "append: out of memory (%lld rows)", (long long)total);
    goto done;
  }
  size_t r = 0;
  for (size_t b = 0; b < n_batches; b++) {
    for (int64_t i = 0; i < batches[b].length; i++, r++) {
      key.len = 0;
      if ((st = row_key(pc, np, &batches[b], i, &key, err)) != HS_OK) goto done;
      if ((st = grouping_find(&g, key.data, key.len, &group_of[r], err)) != HS_OK) goto done;
    }
  }
  /* Counting sort by group keeps arrival order inside each group. */
  if ((start = hs_calloc(g.n_groups + 1, sizeof *start)) == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "append: out of memory");
    goto done;
  }
  for (size_t i = 0; i < g.n_groups; i++) start[i + 1] = start[i] + (size_t)g.count[i];
  r = 0;
  for (size_t b = 0; b < n_batches; b++) {
    for (int64_t i = 0; i < batches[b].length; i++, r++) {
      rows[start[group_of[r]]++] = (hs_table_row){.row = i, .batch = (uint32_t)b};
    }
  }
  for (size_t i = g.n_groups; i > 0; i--) start[i] = start[i - 1];
  start[0] = 0;

  /* 3. Sort each group. */
  hs_table_sort_key *keys = NULL;
  if ((st = hs_table_sort_keys(order, stamped, schema, arena, &keys, err)) != HS_OK) goto done;
  size_t nk = keys ? order->n_fields : 0;
  for (size_t i = 0; i < g.n_groups && nk; i++) {
    st = hs_table_sort_rows(keys, nk, batches, rows + start[i], start[i + 1] - start[i], err);
    if (st != HS_OK) goto done;
  }

  /* 4. One data file per group, or per rows_per_file consecutive rows of
   * it (sorted runs stay sorted in each). */
  char uuid[37];
  for (size_t i = 0; i < g.n_groups; i++) {
    size_t len = start[i + 1] - start[i];
    n_out += rows_per_file > 0 ? (len + (size_t)rows_per_file - 1) / (size_t)rows_per_file : 1;
  }
  files = hs_arena_alloc(arena, n_out * sizeof *files);
  paths = hs_calloc(n_out, sizeof *paths);
  hs_iceberg_value *tuple = np ? hs_arena_alloc(arena, np * sizeof *tuple) : NULL;
  if (files == NULL || paths == NULL || (np && tuple == NULL)) {
    st = hs_error_set(err, HS_ERR_NOMEM, "append: out of memory");
    goto done;
  }
  if ((st = hs_fs_uuid4(uuid, err)) != HS_OK) goto done;
  size_t f = 0;
  for (size_t i = 0; i < g.n_groups; i++) {
    st = key_decode(pc, np, g.keys.data ? g.keys.data + g.key_off[i] : NULL, g.key_len[i], tuple,
                    err);
    if (st != HS_OK) goto done;
    for (size_t at = start[i]; at < start[i + 1]; f++) {
      size_t len = start[i + 1] - at;
      if (rows_per_file > 0 && len > (size_t)rows_per_file) len = (size_t)rows_per_file;
      char path[4200];
      snprintf(path, sizeof path, "%s/data/%05zu-0-%s.parquet", t->root, f, uuid);
      if ((paths[f] = hs_strdup(path)) == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "append: out of memory");
        goto done;
      }
      hs_iceberg_data_file_options dfo = {.schema = schema,
                                          .file_path = path,
                                          .partition = tuple,
                                          .n_partition = np,
                                          .has_sort_order_id = order != NULL,
                                          .sort_order_id = order ? order->order_id : 0};
      st = write_group(t, path, stamped, batches, rows + at, len, &dfo, arena, &files[f], err);
      if (st != HS_OK) goto done;
      n_written = f + 1;
      at += len;
      hs_table_crash_point();
    }
  }
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/data", t->root);
  if (!t->remote && (st = hs_fs_fsync_dir(dir, err)) != HS_OK) goto done; /* objects: durable */
  *files_out = files;
  *n_files_out = n_out;

done:
  if (st != HS_OK)
    for (size_t i = 0; i < n_written; i++) (void)hs_table_file_remove(paths[i], NULL);
  for (size_t i = 0; paths && i < n_out; i++) hs_free(paths[i]);
  hs_free(paths);
  hs_arrow_batches_free(batches, n_batches);
  hs_free(group_of);
  hs_free(rows);
  hs_free(start);
  hs_buf_free(&key);
  grouping_free(&g);
  return st;
}

hs_status hs_table_spec_edit_apply(const hs_iceberg_metadata *old, hs_iceberg_metadata *m,
                                   hs_arena *a, const hs_table_partition_field *fields, size_t n,
                                   hs_error *err) {
  spec_req rq = {fields, n};
  bool changed = false;
  return spec_edit(old, m, a, &rq, &changed, err);
}

/* ------------------------------------------- a data file's partition */

hs_status hs_table_partition_of_file(const hs_iceberg_schema *schema,
                                     const hs_iceberg_partition_spec *spec, const char *path,
                                     hs_arena *arena, hs_iceberg_value **tuple_out, hs_error *err) {
  *tuple_out = NULL;
  size_t np = spec->n_fields;
  if (np == 0) return HS_OK;
  hs_iceberg_type *ptypes = NULL;
  part_col *pc = hs_arena_alloc(arena, np * sizeof *pc);
  hs_iceberg_value *tuple = hs_arena_alloc(arena, np * sizeof *tuple);
  const char **names = hs_arena_alloc(arena, np * sizeof *names);
  if (pc == NULL || tuple == NULL || names == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "row delta: out of memory");
  hs_status st = hs_iceberg_partition_types(schema, spec, arena, &ptypes, err);
  if (st != HS_OK) return st;
  hs_parquet_reader *r = NULL;
  struct ArrowSchema fs;
  memset(&fs, 0, sizeof fs);
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof s);
  hs_buf key, first;
  hs_buf_init(&key);
  hs_buf_init(&first);
  if ((st = hs_parquet_reader_open(path, &r, err)) != HS_OK) return st;
  if ((st = hs_parquet_reader_schema(r, &fs, err)) != HS_OK) goto done;
  /* Each source column by field id among the file's top-level columns
   * (absent: every row NULL, as a reader sees a column added later). */
  size_t n_read = 0;
  for (size_t i = 0; i < np; i++) {
    const hs_iceberg_partition_field *pf = &spec->fields[i];
    const hs_iceberg_type *it = NULL;
    for (size_t k = 0; k < schema->root.n_fields; k++)
      if (schema->root.fields[k].id == pf->source_id) {
        it = &schema->root.fields[k].type;
        pc[i].col.name = schema->root.fields[k].name;
      }
    if (it == NULL || pf->n_source_ids > 0) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "partition field '%s': only top-level single-source fields can be "
                        "derived from a data file",
                        pf->name);
      goto done;
    }
    pc[i].col.it = it;
    pc[i].tr = &pf->transform;
    pc[i].rt = &ptypes[i];
    pc[i].col.at.id = HS_AT_NA; /* absent */
    for (int64_t j = 0; j < fs.n_children; j++) {
      if (hs_arrow_field_id(fs.children[j]) != pf->source_id) continue;
      const char *nm = fs.children[j]->name ? fs.children[j]->name : "";
      size_t at = n_read;
      for (size_t q = 0; q < n_read; q++)
        if (strcmp(names[q], nm) == 0) at = q;
      if (at == n_read) names[n_read++] = nm;
      pc[i].col.index = at;
      if ((st = hs_arrow_type_parse(fs.children[j]->format, &pc[i].col.at, err)) != HS_OK)
        goto done;
    }
  }
  int64_t row = 0;
  if (n_read > 0) {
    hs_parquet_read_options ro;
    hs_parquet_read_options_init(&ro);
    ro.columns = names;
    ro.n_columns = n_read;
    if ((st = hs_parquet_reader_stream(r, &ro, &s, err)) != HS_OK) goto done;
  }
  for (int64_t total = hs_parquet_reader_num_rows(r); st == HS_OK && row < total;) {
    struct ArrowArray b;
    memset(&b, 0, sizeof b);
    if (n_read > 0) {
      if (s.get_next(&s, &b) != 0) {
        const char *m = s.get_last_error(&s);
        st = hs_error_set(err, HS_ERR_CORRUPT, "%s", m ? m : "read failed");
        break;
      }
      if (b.release == NULL) break;
    } else {
      b.length = 1; /* every source absent: one row stands for all */
    }
    for (int64_t i = 0; st == HS_OK && i < b.length; i++, row++) {
      key.len = 0;
      st = row_key(pc, np, &b, i, &key, err);
      if (st != HS_OK) break;
      if (row == 0) {
        if (!hs_buf_append(&first, key.data, key.len))
          st = hs_error_set(err, HS_ERR_NOMEM, "row delta: out of memory");
      } else if (key.len != first.len || memcmp(key.data, first.data, key.len) != 0) {
        st = hs_error_set(err, HS_ERR_INVALID_ARG,
                          "rows of more than one partition of spec %d (row %lld differs from "
                          "row 0): a data file holds one partition",
                          (int)spec->spec_id, (long long)row);
      }
    }
    if (b.release != NULL) b.release(&b);
    if (n_read == 0) break;
  }
  if (st == HS_OK && row == 0)
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "a data file without rows has no partition (spec %d)", (int)spec->spec_id);
  if (st == HS_OK) {
    uint8_t *k = hs_arena_memdup(arena, first.data, first.len); /* the tuple borrows its bytes */
    if (k == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "row delta: out of memory");
    if (st == HS_OK) st = key_decode(pc, np, k, first.len, tuple, err);
    if (st == HS_OK) *tuple_out = tuple;
  }
done:
  if (s.release != NULL) s.release(&s);
  if (fs.release != NULL) fs.release(&fs);
  hs_parquet_reader_free(r);
  hs_buf_free(&key);
  hs_buf_free(&first);
  if (st != HS_OK) hs_error_prefix(err, "%s: ", path);
  return st;
}

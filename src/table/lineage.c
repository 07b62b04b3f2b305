/*
 * lineage.c — v3 row lineage columns (lineage.h): the read schema's
 * metadata columns, their values per batch, and the write side's schema.
 */
#include "lineage.h"

#include <stdio.h>
#include <string.h>

#include "schema_map.h"

hs_lineage_kind hs_lineage_of_name(const char *name) {
  if (name == NULL) return HS_LINEAGE_NONE;
  if (strcmp(name, HS_LINEAGE_ROW_ID) == 0) return HS_LINEAGE_ROW_ID_COL;
  if (strcmp(name, HS_LINEAGE_SEQ) == 0) return HS_LINEAGE_SEQ_COL;
  return HS_LINEAGE_NONE;
}

hs_lineage_kind hs_lineage_of_field(int32_t field_id) {
  if (field_id == HS_LINEAGE_ROW_ID_FIELD) return HS_LINEAGE_ROW_ID_COL;
  if (field_id == HS_LINEAGE_SEQ_FIELD) return HS_LINEAGE_SEQ_COL;
  return HS_LINEAGE_NONE;
}

static const char *kind_name(hs_lineage_kind k) {
  return k == HS_LINEAGE_ROW_ID_COL ? HS_LINEAGE_ROW_ID : HS_LINEAGE_SEQ;
}

static int32_t kind_field(hs_lineage_kind k) {
  return k == HS_LINEAGE_ROW_ID_COL ? HS_LINEAGE_ROW_ID_FIELD : HS_LINEAGE_SEQ_FIELD;
}

static hs_status refuse_version(const hs_table *t, hs_lineage_kind k, hs_error *err) {
  return hs_error_set(err, HS_ERR_UNSUPPORTED,
                      "%s: column '%s' is a row-lineage column of Iceberg format 3; this table is "
                      "format version %d",
                      t->metadata_path, kind_name(k), (int)t->meta.format_version);
}

static hs_status field_init(struct ArrowSchema *s, hs_lineage_kind k, hs_error *err) {
  hs_status st = hs_arrow_schema_init(s, "l", kind_name(k), ARROW_FLAG_NULLABLE, 0, err);
  if (st != HS_OK) return st;
  char buf[16];
  snprintf(buf, sizeof buf, "%d", (int)kind_field(k));
  const char *key = "PARQUET:field_id", *val = buf;
  st = hs_arrow_schema_set_metadata(s, &key, &val, 1, err);
  if (st != HS_OK) hs_arrow_schema_release(s);
  return st;
}

/* `s` (owned struct) with one more child moved in from `child`. */
static hs_status append_child(struct ArrowSchema *s, struct ArrowSchema *child, hs_error *err) {
  struct ArrowSchema grown;
  hs_status st = hs_arrow_schema_init(&grown, s->format, s->name, s->flags, s->n_children + 1, err);
  for (int64_t i = 0; st == HS_OK && i < s->n_children; i++) {
    hs_arrow_schema_release(grown.children[i]);
    st = hs_arrow_schema_copy(s->children[i], grown.children[i], err);
  }
  if (st == HS_OK) {
    hs_arrow_schema_release(grown.children[s->n_children]);
    *grown.children[s->n_children] = *child;
    child->release = NULL;
  } else {
    hs_arrow_schema_release(child);
    if (grown.release != NULL) grown.release(&grown);
    return st;
  }
  s->release(s);
  *s = grown;
  return HS_OK;
}

static bool has_child(const struct ArrowSchema *s, const char *name) {
  for (int64_t i = 0; i < s->n_children; i++)
    if (s->children[i]->name != NULL && strcmp(s->children[i]->name, name) == 0) return true;
  return false;
}

hs_status hs_lineage_schema_add(const hs_table *t, const char *const *names, size_t n,
                                const char *filter, struct ArrowSchema *full, hs_error *err) {
  bool want[3] = {false, false, false};
  for (size_t i = 0; names != NULL && i < n; i++) want[hs_lineage_of_name(names[i])] = true;
  if (filter != NULL) {
    if (strstr(filter, HS_LINEAGE_ROW_ID) != NULL) want[HS_LINEAGE_ROW_ID_COL] = true;
    if (strstr(filter, HS_LINEAGE_SEQ) != NULL) want[HS_LINEAGE_SEQ_COL] = true;
  }
  for (int k = HS_LINEAGE_ROW_ID_COL; k <= HS_LINEAGE_SEQ_COL; k++) {
    if (!want[k] || has_child(full, kind_name((hs_lineage_kind)k))) continue;
    if (t->meta.format_version < 3) {
      /* A filter that only mentions the name (in a string) is left to the
       * filter parser's own error. */
      bool named = false;
      for (size_t i = 0; names != NULL && i < n; i++)
        if (hs_lineage_of_name(names[i]) == (hs_lineage_kind)k) named = true;
      if (!named) continue;
      return refuse_version(t, (hs_lineage_kind)k, err);
    }
    struct ArrowSchema f;
    hs_status st = field_init(&f, (hs_lineage_kind)k, err);
    if (st == HS_OK) st = append_child(full, &f, err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

static bool bit_get(const uint8_t *v, int64_t i) {
  return (v[i >> 3] >> (i & 7)) & 1;
}

hs_status hs_lineage_column(hs_lineage_kind kind, const struct ArrowArray *stored,
                            const hs_lineage_pos *pos, int64_t length, struct ArrowArray *out,
                            hs_error *err) {
  memset(out, 0, sizeof *out);
  size_t n = (size_t)length;
  if (stored != NULL && (stored->length != length || stored->n_buffers < 2 ||
                         (length > 0 && stored->buffers[1] == NULL)))
    return hs_error_set(err, HS_ERR_CORRUPT, "column '%s': a malformed stored column",
                        kind_name(kind));
  int64_t *vals = hs_malloc(n ? n * sizeof *vals : 8);
  if (vals == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  const int64_t *sv = stored != NULL ? (const int64_t *)stored->buffers[1] + stored->offset : NULL;
  const uint8_t *sb = stored != NULL && stored->null_count != 0 ? stored->buffers[0] : NULL;
  bool row_id = kind == HS_LINEAGE_ROW_ID_COL;
  bool inherit_null = row_id && pos->first_row_id < 0;
  uint8_t *valid = NULL;
  int64_t nulls = 0;
  for (size_t i = 0; i < n; i++) {
    bool have = sv != NULL && (sb == NULL || bit_get(sb, stored->offset + (int64_t)i));
    if (have) {
      vals[i] = sv[i];
    } else if (inherit_null) {
      if (valid == NULL) {
        if ((valid = hs_calloc((n + 7) / 8, 1)) == NULL) {
          hs_free(vals);
          return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
        }
        for (size_t q = 0; q < i; q++) valid[q >> 3] |= (uint8_t)(1u << (q & 7));
      }
      vals[i] = 0;
      nulls++;
      continue;
    } else if (row_id) {
      int64_t p = pos->rows != NULL ? pos->rows[i] : pos->first + (int64_t)i;
      vals[i] = pos->first_row_id + p;
    } else {
      vals[i] = pos->data_seq;
    }
    if (valid != NULL) valid[i >> 3] |= (uint8_t)(1u << (i & 7));
  }
  return hs_arrow_array_make_primitive(out, length, vals, valid, nulls, err);
}

static bool is_col(const struct ArrowSchema *in, int64_t i, hs_lineage_kind k) {
  const struct ArrowSchema *c = in->children[i];
  return hs_lineage_of_name(c->name) == k && c->format != NULL && strcmp(c->format, "l") == 0;
}

size_t hs_lineage_trailing(const struct ArrowSchema *in) {
  int64_t n = in->n_children;
  if (n >= 2 && is_col(in, n - 2, HS_LINEAGE_ROW_ID_COL) && is_col(in, n - 1, HS_LINEAGE_SEQ_COL))
    return 2;
  if (n >= 1 && (is_col(in, n - 1, HS_LINEAGE_ROW_ID_COL) || is_col(in, n - 1, HS_LINEAGE_SEQ_COL)))
    return 1;
  return 0;
}

hs_status hs_lineage_schema_core(const hs_table *t, const struct ArrowSchema *in, size_t k,
                                 struct ArrowSchema *core, hs_error *err) {
  if (k > 0 && t->meta.format_version < 3)
    return refuse_version(t, hs_lineage_of_name(in->children[in->n_children - 1]->name), err);
  int64_t m = in->n_children - (int64_t)k;
  hs_status st = hs_arrow_schema_init(core, in->format, in->name, in->flags, m, err);
  for (int64_t i = 0; st == HS_OK && i < m; i++) {
    hs_arrow_schema_release(core->children[i]);
    st = hs_arrow_schema_copy(in->children[i], core->children[i], err);
  }
  if (st != HS_OK) hs_arrow_schema_release(core);
  return st;
}

hs_status hs_lineage_schema_stamp(struct ArrowSchema *stamped_core, const struct ArrowSchema *in,
                                  size_t k, struct ArrowSchema *out, hs_error *err) {
  *out = *stamped_core;
  stamped_core->release = NULL;
  for (size_t j = 0; j < k; j++) {
    const struct ArrowSchema *c = in->children[in->n_children - (int64_t)k + (int64_t)j];
    struct ArrowSchema f;
    hs_status st = field_init(&f, hs_lineage_of_name(c->name), err);
    if (st == HS_OK) st = append_child(out, &f, err);
    if (st != HS_OK) {
      hs_arrow_schema_release(out);
      return st;
    }
  }
  return HS_OK;
}

hs_status hs_lineage_scan_columns(const hs_table *t, int64_t snapshot_id, const char ***names,
                                  size_t *n, hs_error *err) {
  *names = NULL;
  *n = 0;
  struct ArrowSchema rs;
  hs_status st = hs_table_read_schema_arrow(t, snapshot_id, &rs, err);
  if (st != HS_OK) return st;
  size_t extra = t->meta.format_version >= 3 ? 2 : 0;
  size_t m = (size_t)rs.n_children, bytes = 0;
  for (size_t i = 0; i < m; i++) bytes += strlen(rs.children[i]->name) + 1;
  const char **v = hs_malloc((m + extra) * sizeof *v + bytes + 1);
  if (v == NULL) {
    rs.release(&rs);
    return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  }
  char *p = (char *)(v + m + extra);
  for (size_t i = 0; i < m; i++) {
    size_t l = strlen(rs.children[i]->name) + 1;
    memcpy(p, rs.children[i]->name, l);
    v[i] = p;
    p += l;
  }
  if (extra) {
    v[m] = HS_LINEAGE_ROW_ID;
    v[m + 1] = HS_LINEAGE_SEQ;
  }
  rs.release(&rs);
  *names = v;
  *n = m + extra;
  return HS_OK;
}

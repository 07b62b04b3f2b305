/*
 * schema.c — owned ArrowSchema nodes: creation, Arrow's binary key/value
 * metadata, dictionaries and deep copies.
 *
 * Each node we produce has one private allocation holding its children
 * (pointer array and structs), its format and name strings, and inline
 * storage for its dictionary; the metadata blob is a separate allocation
 * because hs_arrow_schema_set_metadata may replace it. The release callback
 * follows the C Data Interface exactly: release every child and the
 * dictionary that has not been moved out (release != NULL), free our own
 * memory, then mark the node released (release = NULL). Moving a node is a
 * bitwise copy: nothing in the private data points back at the struct.
 */
#include <string.h>

#include "arrow.h"

/* Nesting deeper than this in a schema from outside is refused: it bounds
 * recursion (stack) on hostile or cyclic input. */
#define HS_ARROW_DEPTH_MAX 64
/* More children than this in one node is refused (sanity bound). */
#define HS_ARROW_CHILDREN_MAX ((int64_t)1 << 20)

typedef struct hs_schema_priv {
  char *metadata; /* own allocation, may be NULL */
  struct ArrowSchema dictionary;
  struct ArrowSchema **child_ptrs;
  struct ArrowSchema *children;
  int64_t n_children;
} hs_schema_priv;

static void schema_release(struct ArrowSchema *s) {
  if (s == NULL || s->release == NULL) return;
  hs_schema_priv *p = s->private_data;
  for (int64_t i = 0; i < p->n_children; i++) {
    struct ArrowSchema *c = p->child_ptrs[i];
    if (c->release != NULL) c->release(c);
  }
  if (p->dictionary.release != NULL) p->dictionary.release(&p->dictionary);
  hs_free(p->metadata);
  hs_free(p);
  s->release = NULL;
  s->private_data = NULL;
}

static bool schema_is_owned(const struct ArrowSchema *s) {
  return s != NULL && s->release == schema_release;
}

hs_status hs_arrow_schema_init(struct ArrowSchema *s, const char *format, const char *name,
                               int64_t flags, int64_t n_children, hs_error *err) {
  if (s == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "hs_arrow_schema_init: NULL schema");
  memset(s, 0, sizeof *s);
  if (format == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "hs_arrow_schema_init: NULL format");
  }
  if (n_children < 0 || n_children > HS_ARROW_CHILDREN_MAX) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "hs_arrow_schema_init: field '%s': bad child count %lld", name ? name : "",
                        (long long)n_children);
  }
  size_t flen = strlen(format) + 1, nlen = name ? strlen(name) + 1 : 0;
  size_t nc = (size_t)n_children;
  /* Layout: priv | children structs | child pointers | format | name. */
  size_t total =
      sizeof(hs_schema_priv) + nc * sizeof(struct ArrowSchema) + nc * sizeof(struct ArrowSchema *);
  if (!hs_add_size(total, flen, &total) || !hs_add_size(total, nlen, &total)) {
    return hs_error_set(err, HS_ERR_NOMEM, "hs_arrow_schema_init: size overflow");
  }
  uint8_t *mem = hs_calloc(1, total);
  if (mem == NULL) {
    return hs_error_set(err, HS_ERR_NOMEM, "hs_arrow_schema_init: out of memory (%zu bytes)",
                        total);
  }
  hs_schema_priv *p = (hs_schema_priv *)mem;
  uint8_t *cur = mem + sizeof *p;
  p->children = (struct ArrowSchema *)cur;
  cur += nc * sizeof(struct ArrowSchema);
  p->child_ptrs = (struct ArrowSchema **)cur;
  cur += nc * sizeof(struct ArrowSchema *);
  p->n_children = n_children;
  for (size_t i = 0; i < nc; i++) p->child_ptrs[i] = &p->children[i];
  memcpy(cur, format, flen);
  s->format = (const char *)cur;
  cur += flen;
  if (name != NULL) {
    memcpy(cur, name, nlen);
    s->name = (const char *)cur;
  }
  s->flags = flags;
  s->n_children = n_children;
  s->children = nc ? p->child_ptrs : NULL;
  s->private_data = p;
  s->release = schema_release;
  return HS_OK;
}

/* ------------------------------------------------------------ metadata */

static int32_t load_i32(const char *p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

int64_t hs_arrow_metadata_size(const char *metadata) {
  if (metadata == NULL) return 0;
  int32_t n = load_i32(metadata);
  if (n < 0) return -1;
  int64_t pos = 4;
  for (int32_t i = 0; i < 2 * n; i++) {
    int32_t len = load_i32(metadata + pos);
    if (len < 0) return -1;
    pos += 4 + (int64_t)len;
    if (pos > (int64_t)HS_ALLOC_BYTES_MAX) return -1;
  }
  return pos;
}

const char *hs_arrow_metadata_get(const char *metadata, const char *key, int32_t *value_len) {
  if (value_len != NULL) *value_len = 0;
  if (metadata == NULL || key == NULL) return NULL;
  size_t key_len = strlen(key);
  int32_t n = load_i32(metadata);
  if (n < 0) return NULL;
  const char *p = metadata + 4;
  for (int32_t i = 0; i < n; i++) {
    int32_t klen = load_i32(p);
    if (klen < 0) return NULL;
    const char *k = p + 4;
    p = k + klen;
    int32_t vlen = load_i32(p);
    if (vlen < 0) return NULL;
    const char *v = p + 4;
    p = v + vlen;
    if ((size_t)klen == key_len && memcmp(k, key, key_len) == 0) {
      if (value_len != NULL) *value_len = vlen;
      return v;
    }
  }
  return NULL;
}

int32_t hs_arrow_field_id(const struct ArrowSchema *s) {
  int32_t len = 0;
  const char *v = hs_arrow_metadata_get(s->metadata, "PARQUET:field_id", &len);
  if (v == NULL || len <= 0 || len > 10) return -1;
  int64_t x = 0;
  for (int32_t i = 0; i < len; i++) {
    if (v[i] < '0' || v[i] > '9') return -1;
    x = x * 10 + (v[i] - '0');
  }
  return x <= INT32_MAX ? (int32_t)x : -1;
}

static bool buf_append_i32(hs_buf *b, int32_t v) {
  return hs_buf_append(b, &v, sizeof v);
}

hs_status hs_arrow_schema_set_metadata(struct ArrowSchema *s, const char *const *keys,
                                       const char *const *values, size_t n, hs_error *err) {
  if (!schema_is_owned(s)) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "hs_arrow_schema_set_metadata: schema not created by hs_arrow_schema_init");
  }
  hs_schema_priv *p = s->private_data;
  if (n > (size_t)INT32_MAX) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "metadata of field '%s': too many pairs (%zu)",
                        s->name ? s->name : "", n);
  }
  char *blob = NULL;
  if (n > 0) {
    hs_buf b;
    hs_buf_init(&b);
    bool ok = buf_append_i32(&b, (int32_t)n);
    for (size_t i = 0; ok && i < n; i++) {
      if (keys[i] == NULL || values[i] == NULL) {
        hs_buf_free(&b);
        return hs_error_set(err, HS_ERR_INVALID_ARG, "metadata of field '%s': NULL key or value",
                            s->name ? s->name : "");
      }
      size_t kl = strlen(keys[i]), vl = strlen(values[i]);
      if (kl > INT32_MAX || vl > INT32_MAX) {
        hs_buf_free(&b);
        return hs_error_set(err, HS_ERR_INVALID_ARG, "metadata of field '%s': pair too long",
                            s->name ? s->name : "");
      }
      ok = buf_append_i32(&b, (int32_t)kl) && hs_buf_append(&b, keys[i], kl) &&
           buf_append_i32(&b, (int32_t)vl) && hs_buf_append(&b, values[i], vl);
    }
    if (!ok) {
      hs_buf_free(&b);
      return hs_error_set(err, HS_ERR_NOMEM, "metadata of field '%s': out of memory",
                          s->name ? s->name : "");
    }
    blob = (char *)hs_buf_detach(&b);
  }
  hs_free(p->metadata);
  p->metadata = blob;
  s->metadata = blob;
  return HS_OK;
}

hs_status hs_arrow_schema_set_dictionary(struct ArrowSchema *s, struct ArrowSchema *dict,
                                         hs_error *err) {
  if (!schema_is_owned(s)) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "hs_arrow_schema_set_dictionary: schema not created by us");
  }
  if (dict == NULL || dict->release == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "hs_arrow_schema_set_dictionary: field '%s': dictionary missing or "
                        "released",
                        s->name ? s->name : "");
  }
  hs_schema_priv *p = s->private_data;
  if (p->dictionary.release != NULL) p->dictionary.release(&p->dictionary);
  p->dictionary = *dict;
  dict->release = NULL;
  s->dictionary = &p->dictionary;
  return HS_OK;
}

/* ---------------------------------------------------------------- copy */

static hs_status copy_node(const struct ArrowSchema *src, struct ArrowSchema *dst, int depth,
                           hs_error *err) {
  memset(dst, 0, sizeof *dst);
  const char *name = src->name ? src->name : "";
  if (depth > HS_ARROW_DEPTH_MAX) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "schema copy: field '%s' nested deeper than %d",
                        name, HS_ARROW_DEPTH_MAX);
  }
  if (src->release == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "schema copy: field '%s' is released", name);
  }
  if (src->n_children > 0 && src->children == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "schema copy: field '%s' has NULL children", name);
  }
  int64_t md_size = hs_arrow_metadata_size(src->metadata);
  if (md_size < 0) {
    return hs_error_set(err, HS_ERR_SCHEMA, "schema copy: field '%s' has malformed metadata", name);
  }
  hs_status st =
      hs_arrow_schema_init(dst, src->format, src->name, src->flags, src->n_children, err);
  if (st != HS_OK) return st;
  hs_schema_priv *p = dst->private_data;
  if (md_size > 0) {
    p->metadata = hs_malloc((size_t)md_size);
    if (p->metadata == NULL) {
      dst->release(dst);
      return hs_error_set(err, HS_ERR_NOMEM, "schema copy: field '%s': out of memory", name);
    }
    memcpy(p->metadata, src->metadata, (size_t)md_size);
    dst->metadata = p->metadata;
  }
  for (int64_t i = 0; i < src->n_children && st == HS_OK; i++) {
    if (src->children[i] == NULL) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "schema copy: field '%s' child %lld is NULL", name,
                        (long long)i);
    } else {
      st = copy_node(src->children[i], dst->children[i], depth + 1, err);
    }
  }
  if (st == HS_OK && src->dictionary != NULL) {
    st = copy_node(src->dictionary, &p->dictionary, depth + 1, err);
    if (st == HS_OK) dst->dictionary = &p->dictionary;
  }
  if (st != HS_OK) dst->release(dst); /* children not yet copied have release == NULL */
  return st;
}

hs_status hs_arrow_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *dst,
                               hs_error *err) {
  if (src == NULL || dst == NULL) {
    if (dst != NULL) memset(dst, 0, sizeof *dst);
    return hs_error_set(err, HS_ERR_INVALID_ARG, "hs_arrow_schema_copy: NULL argument");
  }
  return copy_node(src, dst, 0, err);
}

static bool same_shape(const struct ArrowSchema *a, const struct ArrowSchema *b, bool names,
                       int depth) {
  if (depth > 64 || strcmp(a->format, b->format) != 0 || a->n_children != b->n_children)
    return false;
  if (names &&
      ((a->name == NULL) != (b->name == NULL) || (a->name && strcmp(a->name, b->name) != 0)))
    return false;
  for (int64_t i = 0; i < a->n_children; i++)
    if (!same_shape(a->children[i], b->children[i], names, depth + 1)) return false;
  return true;
}

bool hs_arrow_schema_same_shape(const struct ArrowSchema *a, const struct ArrowSchema *b) {
  return same_shape(a, b, true, 0);
}

bool hs_arrow_schema_same_layout(const struct ArrowSchema *a, const struct ArrowSchema *b) {
  return same_shape(a, b, false, 0);
}

hs_status hs_arrow_schema_project(const struct ArrowSchema *full, const char *const *names,
                                  size_t n, struct ArrowSchema *out, size_t *missing,
                                  hs_error *err) {
  hs_status st = hs_arrow_schema_init(out, "+s", "", 0, (int64_t)n, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    int64_t k = 0;
    while (k < full->n_children &&
           (full->children[k]->name == NULL || strcmp(full->children[k]->name, names[i]) != 0))
      k++;
    if (k == full->n_children) {
      *missing = i;
      st = HS_ERR_NOT_FOUND;
      break;
    }
    hs_arrow_schema_release(out->children[i]);
    st = hs_arrow_schema_copy(full->children[k], out->children[i], err);
  }
  if (st != HS_OK) hs_arrow_schema_release(out);
  return st;
}

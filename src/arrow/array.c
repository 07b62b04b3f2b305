/*
 * array.c — owned ArrowArray nodes: creation, owned and borrowed buffers,
 * dictionaries, and the small builders used by readers, tests and demos.
 *
 * Each node has exactly one private allocation: the buffer pointer array
 * handed to consumers, a parallel array of the buffers we own (hs_free'd on
 * release), the child pointer array and child structs, inline storage for
 * the dictionary and the first keepalive. Only a second keepalive on the
 * same node costs another allocation. Borrowed buffers (pages of a file a
 * reader lends out) are kept alive by their keepalive callbacks, which run
 * exactly once, on release.
 *
 * Release follows the C Data Interface: release children and the dictionary
 * not moved out (release != NULL), free our memory, then set release = NULL.
 * Nothing in the private data points at the ArrowArray struct itself, so a
 * node may be moved by bitwise copy.
 */
#include <assert.h>
#include <string.h>

#include "arrow.h"

#define HS_ARROW_BUFFERS_MAX ((int64_t)1 << 16)
#define HS_ARROW_CHILDREN_MAX ((int64_t)1 << 20)

typedef struct hs_keepalive {
  void (*fn)(void *);
  void *data;
  struct hs_keepalive *next;
} hs_keepalive;

typedef struct hs_array_priv {
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers; /* what consumers see */
  void **owned;         /* owned[i] != NULL: we hs_free it on release */
  struct ArrowArray **child_ptrs;
  struct ArrowArray *children;
  struct ArrowArray dictionary;
  hs_keepalive keepalive; /* first keepalive inline; .next chains the rest */
} hs_array_priv;

static void array_release(struct ArrowArray *a) {
  if (a == NULL || a->release == NULL) return;
  hs_array_priv *p = a->private_data;
  for (int64_t i = 0; i < p->n_children; i++) {
    struct ArrowArray *c = p->child_ptrs[i];
    if (c->release != NULL) c->release(c);
  }
  if (p->dictionary.release != NULL) p->dictionary.release(&p->dictionary);
  for (int64_t i = 0; i < p->n_buffers; i++) hs_free(p->owned[i]);
  if (p->keepalive.fn != NULL) p->keepalive.fn(p->keepalive.data);
  hs_keepalive *k = p->keepalive.next;
  while (k != NULL) {
    hs_keepalive *next = k->next;
    if (k->fn != NULL) k->fn(k->data);
    hs_free(k);
    k = next;
  }
  hs_free(p);
  a->release = NULL;
  a->private_data = NULL;
}

static bool array_is_owned(const struct ArrowArray *a) {
  return a != NULL && a->release == array_release;
}

hs_status hs_arrow_array_init(struct ArrowArray *a, int64_t n_buffers, int64_t n_children,
                              hs_error *err) {
  if (a == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "hs_arrow_array_init: NULL array");
  memset(a, 0, sizeof *a);
  if (n_buffers < 0 || n_buffers > HS_ARROW_BUFFERS_MAX || n_children < 0 ||
      n_children > HS_ARROW_CHILDREN_MAX) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "hs_arrow_array_init: bad counts (%lld buffers, %lld children)",
                        (long long)n_buffers, (long long)n_children);
  }
  size_t nb = (size_t)n_buffers, nc = (size_t)n_children;
  /* Layout: priv | children structs | buffers | owned | child pointers.
   * Sizes are bounded above, so the sum cannot overflow. */
  size_t total = sizeof(hs_array_priv) + nc * sizeof(struct ArrowArray) + nb * sizeof(void *) * 2 +
                 nc * sizeof(struct ArrowArray *);
  uint8_t *mem = hs_calloc(1, total);
  if (mem == NULL) {
    return hs_error_set(err, HS_ERR_NOMEM, "hs_arrow_array_init: out of memory (%zu bytes)", total);
  }
  hs_array_priv *p = (hs_array_priv *)mem;
  uint8_t *cur = mem + sizeof *p;
  p->children = (struct ArrowArray *)cur;
  cur += nc * sizeof(struct ArrowArray);
  p->buffers = (const void **)cur;
  cur += nb * sizeof(void *);
  p->owned = (void **)cur;
  cur += nb * sizeof(void *);
  p->child_ptrs = (struct ArrowArray **)cur;
  for (size_t i = 0; i < nc; i++) p->child_ptrs[i] = &p->children[i];
  p->n_buffers = n_buffers;
  p->n_children = n_children;
  a->n_buffers = n_buffers;
  a->n_children = n_children;
  a->buffers = p->buffers;
  a->children = p->child_ptrs;
  a->private_data = p;
  a->release = array_release;
  return HS_OK;
}

void hs_arrow_array_set_buffer(struct ArrowArray *a, int64_t i, void *owned) {
  bool ok = array_is_owned(a) && i >= 0 && i < a->n_buffers;
  assert(ok && "hs_arrow_array_set_buffer: not our array or slot out of range");
  if (!ok) {
    hs_free(owned);
    return;
  }
  hs_array_priv *p = a->private_data;
  if (p->owned[i] != owned) hs_free(p->owned[i]);
  p->owned[i] = owned;
  p->buffers[i] = owned;
}

hs_status hs_arrow_array_set_borrowed(struct ArrowArray *a, int64_t i, const void *borrowed,
                                      void (*keepalive_release)(void *), void *keepalive_data,
                                      hs_error *err) {
  hs_status st = HS_OK;
  if (!array_is_owned(a) || i < 0 || i >= a->n_buffers) {
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "hs_arrow_array_set_borrowed: not our array or buffer %lld out of range",
                      (long long)i);
  } else if (keepalive_release != NULL) {
    hs_array_priv *p = a->private_data;
    if (p->keepalive.fn == NULL) {
      p->keepalive.fn = keepalive_release;
      p->keepalive.data = keepalive_data;
    } else {
      hs_keepalive *k = hs_malloc(sizeof *k);
      if (k == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "hs_arrow_array_set_borrowed: out of memory");
      } else {
        k->fn = keepalive_release;
        k->data = keepalive_data;
        k->next = p->keepalive.next;
        p->keepalive.next = k;
      }
    }
  }
  if (st != HS_OK) {
    if (keepalive_release != NULL) keepalive_release(keepalive_data);
    return st;
  }
  hs_array_priv *p = a->private_data;
  hs_free(p->owned[i]);
  p->owned[i] = NULL;
  p->buffers[i] = borrowed;
  return HS_OK;
}

hs_status hs_arrow_array_set_dictionary(struct ArrowArray *a, struct ArrowArray *dict,
                                        hs_error *err) {
  if (!array_is_owned(a)) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "hs_arrow_array_set_dictionary: array not created by us");
  }
  if (dict == NULL || dict->release == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "hs_arrow_array_set_dictionary: dictionary missing or released");
  }
  hs_array_priv *p = a->private_data;
  if (p->dictionary.release != NULL) p->dictionary.release(&p->dictionary);
  p->dictionary = *dict;
  dict->release = NULL;
  a->dictionary = &p->dictionary;
  return HS_OK;
}

/* ------------------------------------------------------------ builders */

/* Checks shared by the builders; NULL message means fine. */
static const char *check_counts(int64_t length, int64_t *null_count, const void *validity) {
  if (length < 0) return "negative length";
  if (*null_count < -1 || *null_count > length) return "null_count out of range";
  if (validity == NULL) {
    if (*null_count > 0) return "null_count > 0 without a validity buffer";
    *null_count = 0;
  }
  return NULL;
}

static void *unconst(const void *p) {
  return (void *)(uintptr_t)p;
}

hs_status hs_arrow_array_make_primitive(struct ArrowArray *out, int64_t length,
                                        const void *values_owned, uint8_t *validity_owned_or_NULL,
                                        int64_t null_count, hs_error *err) {
  const char *why = check_counts(length, &null_count, validity_owned_or_NULL);
  if (why == NULL && length > 0 && values_owned == NULL) why = "NULL values";
  hs_status st = why ? hs_error_set(err, HS_ERR_INVALID_ARG, "make_primitive: %s", why)
                     : hs_arrow_array_init(out, 2, 0, err);
  if (st != HS_OK) {
    if (out != NULL) memset(out, 0, sizeof *out);
    hs_free(unconst(values_owned));
    hs_free(validity_owned_or_NULL);
    return st;
  }
  out->length = length;
  out->null_count = null_count;
  hs_arrow_array_set_buffer(out, 0, validity_owned_or_NULL);
  hs_arrow_array_set_buffer(out, 1, unconst(values_owned));
  return HS_OK;
}

hs_status hs_arrow_array_make_binary(struct ArrowArray *out, int64_t length, void *offsets_owned,
                                     void *data_owned, uint8_t *validity_owned_or_NULL,
                                     int64_t null_count, hs_error *err) {
  const char *why = check_counts(length, &null_count, validity_owned_or_NULL);
  if (why == NULL && offsets_owned == NULL) why = "NULL offsets";
  hs_status st = why ? hs_error_set(err, HS_ERR_INVALID_ARG, "make_binary: %s", why)
                     : hs_arrow_array_init(out, 3, 0, err);
  if (st != HS_OK) {
    if (out != NULL) memset(out, 0, sizeof *out);
    hs_free(offsets_owned);
    hs_free(data_owned);
    hs_free(validity_owned_or_NULL);
    return st;
  }
  out->length = length;
  out->null_count = null_count;
  hs_arrow_array_set_buffer(out, 0, validity_owned_or_NULL);
  hs_arrow_array_set_buffer(out, 1, offsets_owned);
  hs_arrow_array_set_buffer(out, 2, data_owned);
  return HS_OK;
}

hs_status hs_arrow_array_make_struct(struct ArrowArray *out, int64_t length,
                                     struct ArrowArray *children, int64_t n_children,
                                     uint8_t *validity_owned_or_NULL, int64_t null_count,
                                     hs_error *err) {
  const char *why = check_counts(length, &null_count, validity_owned_or_NULL);
  if (why == NULL && n_children > 0 && children == NULL) why = "NULL children";
  for (int64_t i = 0; why == NULL && i < n_children; i++) {
    if (children[i].release == NULL) why = "a child is already released";
  }
  hs_status st = why ? hs_error_set(err, HS_ERR_INVALID_ARG, "make_struct: %s", why)
                     : hs_arrow_array_init(out, 1, n_children, err);
  if (st != HS_OK) {
    if (out != NULL) memset(out, 0, sizeof *out);
    for (int64_t i = 0; children != NULL && i < n_children; i++) {
      hs_arrow_array_release(&children[i]);
    }
    hs_free(validity_owned_or_NULL);
    return st;
  }
  out->length = length;
  out->null_count = null_count;
  hs_arrow_array_set_buffer(out, 0, validity_owned_or_NULL);
  for (int64_t i = 0; i < n_children; i++) {
    *out->children[i] = children[i];
    children[i].release = NULL;
  }
  return HS_OK;
}

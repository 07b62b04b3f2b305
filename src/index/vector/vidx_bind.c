/*
 * vidx_bind.c — the data file a vector index belongs to (vidx.h,
 * ../binding.h): recorded in its Puffin blob by the table layer, kept
 * with the opened index so that a cached index is checked against the
 * data file a query plans to search with it.
 */
#include "vidx_internal.h"

hs_status hs_vidx_set_binding(hs_vidx *x, const hs_index_binding *b, hs_error *err) {
  char *p = NULL;
  if (b->data_file != NULL && (p = hs_strdup(b->data_file)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "vector index: out of memory");
  hs_free(x->bind_path);
  x->bind = *b;
  x->bind.data_file = x->bind_path = p;
  return HS_OK;
}

const hs_index_binding *hs_vidx_binding(const hs_vidx *x) {
  return &x->bind;
}

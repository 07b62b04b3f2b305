/*
 * stream.c — ArrowArrayStream over an in-memory list of batches, and the
 * consumer-side helper that drains any producer's stream.
 *
 * The producer follows the C Stream Interface: get_schema hands out a deep
 * copy each call (the consumer owns and releases it); get_next moves the
 * next batch out and, after the last, reports end of stream with a released
 * array (release == NULL); errors are errno codes with the message kept for
 * get_last_error, which stays valid until the next call or release. The
 * stream may be released at any point: batches not yet handed out are
 * released with it. Callbacks are not thread-safe, as the spec allows.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arrow.h"

typedef struct hs_stream_priv {
  struct ArrowSchema schema;
  size_t n;
  size_t next;
  bool has_error;
  char last_error[HS_ERROR_MESSAGE_MAX];
  struct ArrowArray batches[]; /* n batches; [next, n) not yet handed out */
} hs_stream_priv;

static int errno_of(hs_status st) {
  switch (st) {
  case HS_OK: return 0;
  case HS_ERR_NOMEM: return ENOMEM;
  case HS_ERR_INVALID_ARG:
  case HS_ERR_SCHEMA:
  case HS_ERR_UNSUPPORTED: return EINVAL;
  default: return EIO;
  }
}

static int stream_get_schema(struct ArrowArrayStream *stream, struct ArrowSchema *out) {
  hs_stream_priv *p = stream->private_data;
  hs_error e = {0};
  hs_status st = hs_arrow_schema_copy(&p->schema, out, &e);
  p->has_error = st != HS_OK;
  if (st != HS_OK) snprintf(p->last_error, sizeof p->last_error, "%s", e.message);
  return errno_of(st);
}

static int stream_get_next(struct ArrowArrayStream *stream, struct ArrowArray *out) {
  hs_stream_priv *p = stream->private_data;
  p->has_error = false;
  if (p->next < p->n) {
    *out = p->batches[p->next];
    p->batches[p->next].release = NULL; /* moved out */
    p->next++;
  } else {
    memset(out, 0, sizeof *out); /* end of stream */
  }
  return 0;
}

static const char *stream_get_last_error(struct ArrowArrayStream *stream) {
  hs_stream_priv *p = stream->private_data;
  return p->has_error ? p->last_error : NULL;
}

static void stream_release(struct ArrowArrayStream *stream) {
  if (stream == NULL || stream->release == NULL) return;
  hs_stream_priv *p = stream->private_data;
  for (size_t i = p->next; i < p->n; i++) hs_arrow_array_release(&p->batches[i]);
  hs_arrow_schema_release(&p->schema);
  hs_free(p);
  stream->release = NULL;
  stream->private_data = NULL;
}

hs_status hs_arrow_stream_from_batches(struct ArrowSchema *schema, struct ArrowArray *batches,
                                       size_t n, struct ArrowArrayStream *out, hs_error *err) {
  const char *why = NULL;
  if (out == NULL) why = "NULL out";
  if (why == NULL && (schema == NULL || schema->release == NULL))
    why = "schema missing or released";
  if (why == NULL && n > 0 && batches == NULL) why = "NULL batches";
  for (size_t i = 0; why == NULL && i < n; i++) {
    if (batches[i].release == NULL) why = "a batch is already released";
  }
  size_t bytes = 0;
  hs_stream_priv *p = NULL;
  hs_status st = HS_OK;
  if (why != NULL) {
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "hs_arrow_stream_from_batches: %s", why);
  } else if (!hs_mul_size(n, sizeof(struct ArrowArray), &bytes) ||
             !hs_add_size(bytes, sizeof *p, &bytes) || (p = hs_calloc(1, bytes)) == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM,
                      "hs_arrow_stream_from_batches: out of memory (%zu batches)", n);
  }
  if (st != HS_OK) {
    /* The inputs were moved in: release them so the caller never has to. */
    hs_arrow_schema_release(schema);
    for (size_t i = 0; batches != NULL && i < n; i++) hs_arrow_array_release(&batches[i]);
    if (out != NULL) memset(out, 0, sizeof *out);
    return st;
  }
  p->schema = *schema;
  schema->release = NULL;
  for (size_t i = 0; i < n; i++) {
    p->batches[i] = batches[i];
    batches[i].release = NULL;
  }
  p->n = n;
  out->get_schema = stream_get_schema;
  out->get_next = stream_get_next;
  out->get_last_error = stream_get_last_error;
  out->release = stream_release;
  out->private_data = p;
  return HS_OK;
}

/* ------------------------------------------------------------- consumer */

void hs_arrow_batches_free(struct ArrowArray *batches, size_t n) {
  if (batches == NULL) return;
  for (size_t i = 0; i < n; i++) hs_arrow_array_release(&batches[i]);
  hs_free(batches);
}

static hs_status producer_error(struct ArrowArrayStream *s, int rc, const char *what,
                                hs_error *err) {
  const char *msg = s->get_last_error ? s->get_last_error(s) : NULL;
  return hs_error_set(err, rc == ENOMEM ? HS_ERR_NOMEM : HS_ERR_IO, "arrow stream %s: %s (%s)",
                      what, msg ? msg : "no message", strerror(rc));
}

hs_status hs_arrow_stream_collect(struct ArrowArrayStream *s, struct ArrowSchema *schema_out,
                                  struct ArrowArray **batches_out, size_t *n_out, hs_error *err) {
  if (schema_out != NULL) memset(schema_out, 0, sizeof *schema_out);
  if (batches_out != NULL) *batches_out = NULL;
  if (n_out != NULL) *n_out = 0;
  if (s == NULL || s->release == NULL || schema_out == NULL || batches_out == NULL ||
      n_out == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "hs_arrow_stream_collect: bad argument");
  }
  int rc = s->get_schema(s, schema_out);
  if (rc != 0) {
    memset(schema_out, 0, sizeof *schema_out);
    return producer_error(s, rc, "get_schema", err);
  }
  struct ArrowArray *list = NULL;
  size_t n = 0, cap = 0;
  hs_status st = HS_OK;
  for (;;) {
    struct ArrowArray b;
    memset(&b, 0, sizeof b);
    rc = s->get_next(s, &b);
    if (rc != 0) {
      st = producer_error(s, rc, "get_next", err);
      break;
    }
    if (b.release == NULL) break; /* end of stream */
    if (n == cap) {
      size_t new_cap = cap ? cap * 2 : 8, bytes;
      struct ArrowArray *grown = NULL;
      if (hs_mul_size(new_cap, sizeof *list, &bytes)) grown = hs_realloc(list, bytes);
      if (grown == NULL) {
        b.release(&b);
        st = hs_error_set(err, HS_ERR_NOMEM, "arrow stream collect: out of memory at batch %zu", n);
        break;
      }
      list = grown;
      cap = new_cap;
    }
    list[n++] = b;
  }
  if (st != HS_OK) {
    hs_arrow_batches_free(list, n);
    schema_out->release(schema_out);
    return st;
  }
  *batches_out = list;
  *n_out = n;
  return HS_OK;
}

/*
 * stream.c — the life cycle shared by the extension's one-shot record-batch
 * stream types: ParquetStream (read.c, one file) and TableStream (table.c,
 * one table scan). Each wraps a C ArrowArrayStream that is either exported
 * once through `__arrow_c_stream__` (moved into a PyCapsule) or read batch
 * by batch with `_read_next`, which decodes without the GIL and raises the
 * HyperStreamError subclass of a failure (the C stream interface itself only
 * carries an errno). A second thread calling in while one decodes is
 * refused, not raced. Each type adds its own members and repr; the methods
 * and state getters here serve both.
 */
#include "core.h"

#include <string.h>

#include "arrow/arrow.h"
#include "common/common.h"

const char *const hs_py_stream_state_names[] = {"open", "exported", "exhausted", "failed",
                                                "closed"};

/* The type's own name ("ParquetStream") for messages. */
static const char *stream_kind(hs_py_stream *self) {
  const char *n = Py_TYPE(self)->tp_name, *dot = strrchr(n, '.');
  return dot ? dot + 1 : n;
}

/* What the stream reads (path or table) as UTF-8; never NULL. */
static const char *stream_what(hs_py_stream *self) {
  const char *p = self->what ? PyUnicode_AsUTF8(self->what) : NULL;
  if (p == NULL) {
    PyErr_Clear();
    p = "(unprintable name)";
  }
  return p;
}

void hs_py_stream_init(hs_py_stream *self, PyObject *what, const char *again) {
  memset(&self->stream, 0, sizeof self->stream);
  self->schema.release = NULL;
  Py_XINCREF(what);
  self->what = what;
  self->again = again;
  self->batches_read = 0;
  self->state = HS_PY_CLOSED; /* until the C stream is in place */
  self->busy = 0;
}

void hs_py_stream_take(hs_py_stream *self, struct ArrowArrayStream *stream) {
  self->stream = *stream;
  stream->release = NULL;
  self->state = HS_PY_OPEN;
}

/* Release the C stream (if still held) and enter `state`. */
static void stream_finish(hs_py_stream *self, hs_py_stream_state state) {
  if (self->stream.release != NULL) self->stream.release(&self->stream);
  self->state = state;
}

/* Raise the failure reported by a stream callback and enter FAILED. */
static PyObject *stream_raise(hs_py_stream *self, int rc) {
  const char *msg = self->stream.get_last_error ? self->stream.get_last_error(&self->stream) : NULL;
  hs_error err = {0};
  hs_status st = hs_status_of_errno(rc);
  hs_error_set(&err, st, "%s", msg != NULL ? msg : "reading the stream failed");
  stream_finish(self, HS_PY_FAILED); /* after the message was copied out */
  return hs_py_raise(st, &err, stream_what(self));
}

/* 0 when the stream may be read or exported now; else raises and -1. */
static int stream_check_open(hs_py_stream *self) {
  if (self->busy) {
    hs_py_raise_msg(hs_py_error, "%s: this %s is being read by another thread", stream_what(self),
                    stream_kind(self));
    return -1;
  }
  if (self->state == HS_PY_OPEN) return 0;
  if (self->state == HS_PY_EXPORTED || self->state == HS_PY_EXHAUSTED) {
    hs_py_raise_msg(hs_py_error, "%s: this %s was already consumed (%s); streams are one-shot, %s",
                    stream_what(self), stream_kind(self), hs_py_stream_state_names[self->state],
                    self->again);
  } else {
    hs_py_raise_msg(hs_py_error, "%s: this %s is %s", stream_what(self), stream_kind(self),
                    hs_py_stream_state_names[self->state]);
  }
  return -1;
}

void hs_py_stream_dealloc(PyObject *obj) {
  hs_py_stream *self = (hs_py_stream *)obj;
  if (self->stream.release != NULL) self->stream.release(&self->stream);
  if (self->schema.release != NULL) self->schema.release(&self->schema);
  Py_XDECREF(self->what);
  Py_TYPE(obj)->tp_free(obj);
}

void hs_py_stream_capsule_free(PyObject *capsule) {
  struct ArrowArrayStream *s = PyCapsule_GetPointer(capsule, "arrow_array_stream");
  if (s == NULL) {
    PyErr_WriteUnraisable(capsule);
    return;
  }
  if (s->release != NULL) s->release(s);
  hs_free(s);
}

void hs_py_schema_capsule_free(PyObject *capsule) {
  struct ArrowSchema *s = PyCapsule_GetPointer(capsule, "arrow_schema");
  if (s == NULL) {
    PyErr_WriteUnraisable(capsule);
    return;
  }
  if (s->release != NULL) s->release(s);
  hs_free(s);
}

void hs_py_array_capsule_free(PyObject *capsule) {
  struct ArrowArray *a = PyCapsule_GetPointer(capsule, "arrow_array");
  if (a == NULL) {
    PyErr_WriteUnraisable(capsule);
    return;
  }
  if (a->release != NULL) a->release(a);
  hs_free(a);
}

PyObject *hs_py_schema_capsule(const struct ArrowSchema *src) {
  struct ArrowSchema *heap = hs_calloc(1, sizeof *heap);
  if (heap == NULL) return PyErr_NoMemory();
  hs_error err = {0};
  hs_status st = hs_arrow_schema_copy(src, heap, &err);
  if (st != HS_OK) {
    hs_free(heap);
    return hs_py_raise(st, &err, NULL);
  }
  PyObject *capsule = PyCapsule_New(heap, "arrow_schema", hs_py_schema_capsule_free);
  if (capsule == NULL) {
    heap->release(heap);
    hs_free(heap);
  }
  return capsule;
}

/* Fetch and cache the stream's schema (once). */
static int stream_load_schema(hs_py_stream *self) {
  if (self->schema.release != NULL) return 0;
  int rc = self->stream.get_schema(&self->stream, &self->schema);
  if (rc != 0) {
    self->schema.release = NULL;
    stream_raise(self, rc);
    return -1;
  }
  return 0;
}

static PyObject *stream_export(hs_py_stream *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"requested_schema", NULL};
  PyObject *requested = Py_None;
  /* A requested schema is a request, not a demand (PyCapsule Interface): we
   * produce our own schema and let the consumer cast. */
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:__arrow_c_stream__", kwlist, &requested))
    return NULL;
  if (stream_check_open(self) < 0) return NULL;
  struct ArrowArrayStream *heap = hs_malloc(sizeof *heap);
  if (heap == NULL) return PyErr_NoMemory();
  PyObject *capsule = PyCapsule_New(heap, "arrow_array_stream", hs_py_stream_capsule_free);
  if (capsule == NULL) {
    hs_free(heap);
    return NULL;
  }
  *heap = self->stream; /* move */
  self->stream.release = NULL;
  self->state = HS_PY_EXPORTED;
  return capsule;
}

static PyObject *stream_schema_capsule(hs_py_stream *self, PyObject *unused) {
  (void)unused;
  if (self->schema.release == NULL) {
    if (stream_check_open(self) < 0 || stream_load_schema(self) < 0) return NULL;
  }
  return hs_py_schema_capsule(&self->schema);
}

/* One batch as (schema capsule, array capsule), or None at the end. */

PyObject *hs_py_batch_capsules(const struct ArrowSchema *schema, struct ArrowArray *arr) {
  PyObject *acap = PyCapsule_New(arr, "arrow_array", hs_py_array_capsule_free);
  if (acap == NULL) {
    arr->release(arr);
    hs_free(arr);
    return NULL;
  }
  PyObject *scap = hs_py_schema_capsule(schema);
  if (scap == NULL) {
    Py_DECREF(acap);
    return NULL;
  }
  PyObject *out = PyTuple_Pack(2, scap, acap);
  Py_DECREF(scap);
  Py_DECREF(acap);
  return out;
}

static PyObject *stream_read_next(hs_py_stream *self, PyObject *unused) {
  (void)unused;
  if (stream_check_open(self) < 0 || stream_load_schema(self) < 0) return NULL;
  struct ArrowArray *arr = hs_calloc(1, sizeof *arr);
  if (arr == NULL) return PyErr_NoMemory();
  self->busy = 1;
  PyThreadState *ts = PyEval_SaveThread();
  int rc = self->stream.get_next(&self->stream, arr);
  PyEval_RestoreThread(ts);
  self->busy = 0;
  if (rc != 0) {
    hs_free(arr);
    return stream_raise(self, rc);
  }
  if (arr->release == NULL) {
    hs_free(arr);
    stream_finish(self, HS_PY_EXHAUSTED); /* closes the files now, not at gc */
    Py_RETURN_NONE;
  }
  self->batches_read++;
  return hs_py_batch_capsules(&self->schema, arr);
}

static PyObject *stream_close(hs_py_stream *self, PyObject *unused) {
  (void)unused;
  if (self->busy)
    return hs_py_raise_msg(hs_py_error, "%s: cannot close a %s while another thread reads it",
                           stream_what(self), stream_kind(self));
  if (self->state == HS_PY_OPEN) stream_finish(self, HS_PY_CLOSED);
  Py_RETURN_NONE;
}

static PyObject *stream_consumed(hs_py_stream *self, void *unused) {
  (void)unused;
  return PyBool_FromLong(self->state != HS_PY_OPEN);
}

static PyObject *stream_state(hs_py_stream *self, void *unused) {
  (void)unused;
  return PyUnicode_FromString(hs_py_stream_state_names[self->state]);
}

PyMethodDef hs_py_stream_methods[] = {
    {"__arrow_c_stream__", (PyCFunction)(void (*)(void))stream_export, METH_VARARGS | METH_KEYWORDS,
     "__arrow_c_stream__(requested_schema=None) -> PyCapsule\n\n"
     "Export the rest of the stream as a PyCapsule 'arrow_array_stream' (once).\n"
     "Errors met later by the consumer are reported through the C stream\n"
     "interface (errno and message), so pyarrow raises OSError for them; read\n"
     "through hyperstreamdb to get HyperStreamError subclasses."},
    {"_schema_capsule", (PyCFunction)stream_schema_capsule, METH_NOARGS,
     "_schema_capsule() -> PyCapsule\n\nThe batches' struct schema as a PyCapsule 'arrow_schema'."},
    {"_read_next", (PyCFunction)stream_read_next, METH_NOARGS,
     "_read_next() -> (PyCapsule, PyCapsule) | None\n\n"
     "Decode the next batch: its 'arrow_schema' and 'arrow_array' capsules, or\n"
     "None at the end. Raises the HyperStreamError subclass of the failure."},
    {"close", (PyCFunction)stream_close, METH_NOARGS,
     "close() -> None\n\nRelease the stream and its files without reading the rest "
     "(idempotent)."},
    {NULL, NULL, 0, NULL}};

PyGetSetDef hs_py_stream_getset[] = {
    {"consumed", (getter)stream_consumed, NULL,
     "True once the stream was exported, read to the end, failed or closed.", NULL},
    {"state", (getter)stream_state, NULL, "'open', 'exported', 'exhausted', 'failed' or 'closed'.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

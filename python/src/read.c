/*
 * read.c — reading Parquet from Python: `read_parquet` returns a
 * ParquetStream, a one-shot producer of the Arrow PyCapsule Interface
 * (`__arrow_c_stream__`), and `parquet_schema` returns an object with
 * `__arrow_c_schema__`.
 *
 * Capsule protocol (Arrow PyCapsule Interface): the capsule is named
 * "arrow_array_stream" and points at a heap ArrowArrayStream. A consumer
 * moves the struct out and sets its `release` to NULL; the capsule's
 * destructor releases the stream only if it is still live, then frees the
 * heap struct. So a capsule dropped unconsumed frees everything, and a
 * consumed one frees only the empty shell.
 *
 * Lifetimes: the options arrays given to the reader (column names, row
 * positions, predicate strings) are copied into an "owned stream" that
 * wraps the reader's stream, so they stay valid for as long as any consumer
 * holds the stream, wherever the capsule travels.
 */
#include "core.h"

#include <errno.h>
#include <string.h>
#include <structmember.h>

#include "arrow/arrow.h"
#include "common/common.h"

/* ------------------------------------------------------ owned stream */

typedef struct hs_py_owned {
  struct ArrowArrayStream inner;
  char **columns;
  size_t n_columns;
  int64_t *rows;
  size_t n_rows;
  hs_stat_predicate *preds;
  size_t n_preds;
} hs_py_owned;

static void hs_py_owned_free(hs_py_owned *o) {
  if (o == NULL) return;
  if (o->inner.release != NULL) o->inner.release(&o->inner);
  for (size_t i = 0; i < o->n_columns; i++) hs_free(o->columns[i]);
  hs_free(o->columns);
  hs_free(o->rows);
  for (size_t i = 0; i < o->n_preds; i++) {
    hs_free((char *)o->preds[i].column);
    hs_free((char *)o->preds[i].value.str);
  }
  hs_free(o->preds);
  hs_free(o);
}

static int hs_py_owned_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  hs_py_owned *o = s->private_data;
  return o->inner.get_schema(&o->inner, out);
}
static int hs_py_owned_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  hs_py_owned *o = s->private_data;
  return o->inner.get_next(&o->inner, out);
}
static const char *hs_py_owned_get_last_error(struct ArrowArrayStream *s) {
  hs_py_owned *o = s->private_data;
  return o->inner.get_last_error(&o->inner);
}
static void hs_py_owned_release(struct ArrowArrayStream *s) {
  hs_py_owned_free(s->private_data);
  s->release = NULL;
  s->private_data = NULL;
}

/* ------------------------------------------------- argument parsing */

/* columns: None or a sequence of str. */
static int hs_py_parse_columns(PyObject *obj, hs_py_owned *o) {
  if (obj == Py_None) return 0;
  if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
    hs_py_raise_msg(hs_py_invalid_error, "columns must be a list of column names, not a string");
    return -1;
  }
  PyObject *seq = PySequence_Fast(obj, "columns must be a list of column names");
  if (seq == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  o->columns = hs_calloc((size_t)n + 1, sizeof(char *));
  if (o->columns == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyUnicode_Check(item)) {
      hs_py_raise_msg(hs_py_invalid_error, "columns[%zd] must be a str, not %s", i,
                      Py_TYPE(item)->tp_name);
      Py_DECREF(seq);
      return -1;
    }
    const char *name = PyUnicode_AsUTF8(item);
    if (name == NULL || (o->columns[i] = hs_strdup(name)) == NULL) {
      if (name != NULL) PyErr_NoMemory();
      Py_DECREF(seq);
      return -1;
    }
    o->n_columns = (size_t)i + 1;
  }
  Py_DECREF(seq);
  return 0;
}

/* rows: None or a sequence / buffer of non-negative, strictly increasing ints. */
static int hs_py_parse_rows(PyObject *obj, hs_py_owned *o) {
  if (obj == Py_None) return 0;
  Py_buffer view;
  if (PyObject_CheckBuffer(obj) &&
      PyObject_GetBuffer(obj, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) == 0) {
    int ok = view.itemsize == 8 && view.ndim <= 1 && view.format != NULL &&
             strchr("qlQL", view.format[view.format[0] == '<' || view.format[0] == '=']) != NULL;
    if (ok) {
      size_t n = (size_t)(view.len / 8);
      o->rows = hs_malloc((n + 1) * sizeof(int64_t)); /* +1: never NULL for an empty list */
      if (o->rows == NULL) {
        PyBuffer_Release(&view);
        PyErr_NoMemory();
        return -1;
      }
      memcpy(o->rows, view.buf, n * sizeof(int64_t));
      o->n_rows = n;
    }
    PyBuffer_Release(&view);
    if (!ok) goto as_sequence;
  } else {
    PyErr_Clear();
  as_sequence:;
    PyObject *seq = PySequence_Fast(obj, "rows must be a sequence of row positions");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    o->rows = hs_malloc(((size_t)n + 1) * sizeof(int64_t));
    if (o->rows == NULL) {
      Py_DECREF(seq);
      PyErr_NoMemory();
      return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
      long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
      if (v == -1 && PyErr_Occurred()) {
        Py_DECREF(seq);
        return -1;
      }
      o->rows[i] = (int64_t)v;
    }
    o->n_rows = (size_t)n;
    Py_DECREF(seq);
  }
  for (size_t i = 0; i < o->n_rows; i++) {
    if (o->rows[i] < 0) {
      hs_py_raise_msg(hs_py_invalid_error, "rows[%zu] = %lld is negative", i,
                      (long long)o->rows[i]);
      return -1;
    }
    if (i > 0 && o->rows[i] <= o->rows[i - 1]) {
      hs_py_raise_msg(hs_py_invalid_error,
                      "rows must be strictly increasing: rows[%zu] = %lld follows %lld", i,
                      (long long)o->rows[i], (long long)o->rows[i - 1]);
      return -1;
    }
  }
  return 0;
}

static int hs_py_parse_op(const char *op, hs_cmp_op *out) {
  static const struct {
    const char *name;
    hs_cmp_op op;
  } ops[] = {{"=", HS_CMP_EQ}, {"==", HS_CMP_EQ}, {"!=", HS_CMP_NE}, {"<>", HS_CMP_NE},
             {"<", HS_CMP_LT}, {"<=", HS_CMP_LE}, {">", HS_CMP_GT},  {">=", HS_CMP_GE}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    if (strcmp(op, ops[i].name) == 0) {
      *out = ops[i].op;
      return 0;
    }
  }
  return -1;
}

/* filters: None or a sequence of (column, op, value) tuples. */
static int hs_py_parse_filters(PyObject *obj, hs_py_owned *o) {
  if (obj == Py_None) return 0;
  PyObject *seq = PySequence_Fast(obj, "filters must be a list of (column, op, value) tuples");
  if (seq == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  o->preds = hs_calloc((size_t)n + 1, sizeof(hs_stat_predicate));
  if (o->preds == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *t = PySequence_Fast_GET_ITEM(seq, i);
    PyObject *col, *op, *val;
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3 ||
        !PyUnicode_Check(col = PyTuple_GET_ITEM(t, 0)) ||
        !PyUnicode_Check(op = PyTuple_GET_ITEM(t, 1))) {
      hs_py_raise_msg(hs_py_invalid_error, "filters[%zd] must be a (column, op, value) tuple", i);
      goto fail;
    }
    val = PyTuple_GET_ITEM(t, 2);
    hs_stat_predicate *p = &o->preds[i];
    o->n_preds = (size_t)i + 1;
    const char *op_s = PyUnicode_AsUTF8(op);
    if (op_s == NULL) goto fail;
    if (hs_py_parse_op(op_s, &p->op) < 0) {
      hs_py_raise_msg(hs_py_invalid_error,
                      "filters[%zd]: operator '%s' must be one of =, ==, !=, <, <=, >, >=", i,
                      op_s);
      goto fail;
    }
    const char *col_s = PyUnicode_AsUTF8(col);
    if (col_s == NULL) goto fail;
    if ((p->column = hs_strdup(col_s)) == NULL) goto nomem;
    if (PyLong_Check(val)) { /* bool is an int subclass */
      long long v = PyLong_AsLongLong(val);
      if (v == -1 && PyErr_Occurred()) goto fail;
      p->value.kind = HS_VALUE_INT64;
      p->value.i64 = (int64_t)v;
    } else if (PyFloat_Check(val)) {
      p->value.kind = HS_VALUE_DOUBLE;
      p->value.f64 = PyFloat_AS_DOUBLE(val);
    } else if (PyUnicode_Check(val) || PyBytes_Check(val)) {
      const char *s;
      Py_ssize_t len;
      if (PyUnicode_Check(val)) {
        s = PyUnicode_AsUTF8AndSize(val, &len);
        if (s == NULL) goto fail;
      } else {
        s = PyBytes_AS_STRING(val);
        len = PyBytes_GET_SIZE(val);
      }
      char *copy = hs_malloc((size_t)len + 1);
      if (copy == NULL) goto nomem;
      memcpy(copy, s, (size_t)len);
      copy[len] = '\0';
      p->value.kind = HS_VALUE_STRING;
      p->value.str = copy;
      p->value.str_len = (size_t)len;
    } else {
      hs_py_raise_msg(hs_py_invalid_error,
                      "filters[%zd]: value for column '%s' must be int, float, str or bytes, "
                      "not %s",
                      i, col_s, Py_TYPE(val)->tp_name);
      goto fail;
    }
  }
  Py_DECREF(seq);
  return 0;
nomem:
  PyErr_NoMemory();
fail:
  Py_DECREF(seq);
  return -1;
}

/* ------------------------------------------------------ ParquetStream */

/* Where a ParquetStream is in its life. Every state but OPEN has released
 * (or handed away) the C stream, so `stream.release == NULL` exactly when
 * state != HS_PY_OPEN. */
typedef enum hs_py_stream_state {
  HS_PY_OPEN = 0,
  HS_PY_EXPORTED, /* moved into a PyCapsule by __arrow_c_stream__ */
  HS_PY_EXHAUSTED,
  HS_PY_FAILED,
  HS_PY_CLOSED
} hs_py_stream_state;

static const char *const hs_py_state_names[] = {"open", "exported", "exhausted", "failed",
                                                "closed"};

typedef struct hs_py_stream {
  PyObject_HEAD struct ArrowArrayStream stream; /* release == NULL once not OPEN */
  struct ArrowSchema schema;                    /* cached by the first read; owned */
  PyObject *path;                               /* str, for messages */
  long long num_rows;
  long long num_row_groups;
  long long row_groups_selected;
  long long batches_read;
  hs_py_stream_state state;
  /* Set while get_next runs without the GIL: other threads calling in are
   * refused instead of racing on the C stream (which is single-threaded). */
  int busy;
} hs_py_stream;

/* The path as UTF-8 for messages; never NULL. */
static const char *hs_py_stream_path(hs_py_stream *self) {
  const char *p = PyUnicode_AsUTF8(self->path);
  if (p == NULL) {
    PyErr_Clear();
    p = "(unprintable path)";
  }
  return p;
}

/* Release the C stream (if still held) and enter `state`. */
static void hs_py_stream_finish(hs_py_stream *self, hs_py_stream_state state) {
  if (self->stream.release != NULL) self->stream.release(&self->stream);
  self->state = state;
}

/* Raise the failure reported by a stream callback and enter FAILED. */
static PyObject *hs_py_stream_raise(hs_py_stream *self, int rc) {
  const char *msg = self->stream.get_last_error ? self->stream.get_last_error(&self->stream) : NULL;
  hs_error err = {0};
  hs_status st = hs_status_of_errno(rc);
  hs_error_set(&err, st, "%s", msg != NULL ? msg : "reading the stream failed");
  hs_py_stream_finish(self, HS_PY_FAILED); /* after the message was copied out */
  return hs_py_raise(st, &err, hs_py_stream_path(self));
}

/* 0 when the stream may be read or exported now; else raises and -1. */
static int hs_py_stream_check_open(hs_py_stream *self) {
  if (self->busy) {
    hs_py_raise_msg(hs_py_error, "%s: this ParquetStream is being read by another thread",
                    hs_py_stream_path(self));
    return -1;
  }
  if (self->state == HS_PY_OPEN) return 0;
  if (self->state == HS_PY_EXPORTED || self->state == HS_PY_EXHAUSTED) {
    hs_py_raise_msg(hs_py_error,
                    "%s: this ParquetStream was already consumed (%s); streams are one-shot, "
                    "open the file again to read it again",
                    hs_py_stream_path(self), hs_py_state_names[self->state]);
  } else {
    hs_py_raise_msg(hs_py_error, "%s: this ParquetStream is %s", hs_py_stream_path(self),
                    hs_py_state_names[self->state]);
  }
  return -1;
}

static void hs_py_stream_dealloc(hs_py_stream *self) {
  if (self->stream.release != NULL) self->stream.release(&self->stream);
  if (self->schema.release != NULL) self->schema.release(&self->schema);
  Py_XDECREF(self->path);
  Py_TYPE(self)->tp_free((PyObject *)self);
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

/* A new "arrow_schema" capsule holding a deep copy of `src`. */
static PyObject *hs_py_schema_capsule(const struct ArrowSchema *src) {
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
static int hs_py_stream_load_schema(hs_py_stream *self) {
  if (self->schema.release != NULL) return 0;
  int rc = self->stream.get_schema(&self->stream, &self->schema);
  if (rc != 0) {
    self->schema.release = NULL;
    hs_py_stream_raise(self, rc);
    return -1;
  }
  return 0;
}

static PyObject *hs_py_stream_export(hs_py_stream *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"requested_schema", NULL};
  PyObject *requested = Py_None;
  /* A requested schema is a request, not a demand (PyCapsule Interface): we
   * produce the file's own schema and let the consumer cast. */
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:__arrow_c_stream__", kwlist, &requested)) {
    return NULL;
  }
  if (hs_py_stream_check_open(self) < 0) return NULL;
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

static PyObject *hs_py_stream_schema_capsule(hs_py_stream *self, PyObject *unused) {
  if (self->schema.release == NULL) {
    if (hs_py_stream_check_open(self) < 0 || hs_py_stream_load_schema(self) < 0) return NULL;
  }
  return hs_py_schema_capsule(&self->schema);
}

/* One batch as (schema capsule, array capsule), or None at the end. The
 * decoding runs without the GIL. A failure raises the HyperStreamError
 * subclass of the C status with the C message and leaves the stream FAILED. */
static PyObject *hs_py_stream_read_next(hs_py_stream *self, PyObject *unused) {
  if (hs_py_stream_check_open(self) < 0 || hs_py_stream_load_schema(self) < 0) return NULL;
  struct ArrowArray *arr = hs_calloc(1, sizeof *arr);
  if (arr == NULL) return PyErr_NoMemory();
  self->busy = 1;
  PyThreadState *ts = PyEval_SaveThread();
  int rc = self->stream.get_next(&self->stream, arr);
  PyEval_RestoreThread(ts);
  self->busy = 0;
  if (rc != 0) {
    hs_free(arr);
    return hs_py_stream_raise(self, rc);
  }
  if (arr->release == NULL) {
    hs_free(arr);
    hs_py_stream_finish(self, HS_PY_EXHAUSTED); /* closes the file now, not at gc */
    Py_RETURN_NONE;
  }
  PyObject *acap = PyCapsule_New(arr, "arrow_array", hs_py_array_capsule_free);
  if (acap == NULL) {
    arr->release(arr);
    hs_free(arr);
    return NULL;
  }
  PyObject *scap = hs_py_schema_capsule(&self->schema);
  if (scap == NULL) {
    Py_DECREF(acap);
    return NULL;
  }
  self->batches_read++;
  PyObject *out = PyTuple_Pack(2, scap, acap);
  Py_DECREF(scap);
  Py_DECREF(acap);
  return out;
}

static PyObject *hs_py_stream_close(hs_py_stream *self, PyObject *unused) {
  if (self->busy) {
    return hs_py_raise_msg(hs_py_error,
                           "%s: cannot close a ParquetStream while another thread "
                           "reads it",
                           hs_py_stream_path(self));
  }
  if (self->state == HS_PY_OPEN) hs_py_stream_finish(self, HS_PY_CLOSED);
  Py_RETURN_NONE;
}

static PyObject *hs_py_stream_consumed(hs_py_stream *self, void *unused) {
  return PyBool_FromLong(self->state != HS_PY_OPEN);
}

static PyObject *hs_py_stream_state_get(hs_py_stream *self, void *unused) {
  return PyUnicode_FromString(hs_py_state_names[self->state]);
}

static PyObject *hs_py_stream_repr(hs_py_stream *self) {
  return PyUnicode_FromFormat(
      "<ParquetStream %R num_rows=%lld row_groups=%lld/%lld "
      "batches_read=%lld %s>",
      self->path, self->num_rows, self->row_groups_selected, self->num_row_groups,
      self->batches_read, hs_py_state_names[self->state]);
}

static PyMethodDef hs_py_stream_methods[] = {
    {"__arrow_c_stream__", (PyCFunction)(void (*)(void))hs_py_stream_export,
     METH_VARARGS | METH_KEYWORDS,
     "__arrow_c_stream__(requested_schema=None) -> PyCapsule\n\n"
     "Export the rest of the stream as a PyCapsule 'arrow_array_stream' (once).\n"
     "Errors met later by the consumer are reported through the C stream\n"
     "interface (errno and message), so pyarrow raises OSError for them; read\n"
     "through hyperstreamdb.parquet to get HyperStreamError subclasses."},
    {"_schema_capsule", (PyCFunction)hs_py_stream_schema_capsule, METH_NOARGS,
     "_schema_capsule() -> PyCapsule\n\nThe batches' struct schema as a PyCapsule 'arrow_schema'."},
    {"_read_next", (PyCFunction)hs_py_stream_read_next, METH_NOARGS,
     "_read_next() -> (PyCapsule, PyCapsule) | None\n\n"
     "Decode the next batch: its 'arrow_schema' and 'arrow_array' capsules, or\n"
     "None at the end. Raises the HyperStreamError subclass of the failure."},
    {"close", (PyCFunction)hs_py_stream_close, METH_NOARGS,
     "close() -> None\n\nRelease the stream and its file without reading the rest (idempotent)."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef hs_py_stream_members[] = {
    {"path", T_OBJECT, offsetof(hs_py_stream, path), READONLY, "The file path."},
    {"num_rows", T_LONGLONG, offsetof(hs_py_stream, num_rows), READONLY, "Rows in the file."},
    {"num_row_groups", T_LONGLONG, offsetof(hs_py_stream, num_row_groups), READONLY,
     "Row groups in the file."},
    {"row_groups_selected", T_LONGLONG, offsetof(hs_py_stream, row_groups_selected), READONLY,
     "Row groups this stream reads after pruning by `filters`."},
    {"batches_read", T_LONGLONG, offsetof(hs_py_stream, batches_read), READONLY,
     "Batches decoded so far through hyperstreamdb (not counting an exported stream)."},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef hs_py_stream_getset[] = {
    {"consumed", (getter)hs_py_stream_consumed, NULL,
     "True once the stream was exported, read to the end, failed or closed.", NULL},
    {"state", (getter)hs_py_stream_state_get, NULL,
     "'open', 'exported', 'exhausted', 'failed' or 'closed'.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject hs_py_stream_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hyperstreamdb._core.ParquetStream",
    .tp_basicsize = sizeof(hs_py_stream),
    .tp_dealloc = (destructor)hs_py_stream_dealloc,
    .tp_repr = (reprfunc)hs_py_stream_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "A one-shot stream of record batches read from a Parquet file.\n\n"
        "Pass it to pyarrow.table(), pyarrow.RecordBatchReader.from_stream(),\n"
        "polars.from_arrow() or any consumer of the Arrow PyCapsule Interface,\n"
        "or read it with hyperstreamdb.parquet.stream_reader(), which raises\n"
        "HyperStreamError subclasses for failures met mid-stream.",
    .tp_methods = hs_py_stream_methods,
    .tp_members = hs_py_stream_members,
    .tp_getset = hs_py_stream_getset,
};

PyObject *hs_py_read_parquet(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"path", "columns", "rows", "batch_rows", "filters", NULL};
  PyObject *path_obj, *columns = Py_None, *rows = Py_None, *filters = Py_None;
  long long batch_rows = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOLO:read_parquet", kwlist, &path_obj, &columns,
                                   &rows, &batch_rows, &filters)) {
    return NULL;
  }
  if (batch_rows < 0) {
    return hs_py_raise_msg(hs_py_invalid_error, "batch_rows must be >= 0, got %lld", batch_rows);
  }
  PyObject *path = hs_py_path(path_obj);
  if (path == NULL) return NULL;
  const char *p = PyBytes_AS_STRING(path);
  hs_py_stream *obj = NULL;
  hs_parquet_reader *reader = NULL;
  hs_py_owned *o = hs_calloc(1, sizeof *o);
  if (o == NULL) {
    PyErr_NoMemory();
    goto fail;
  }
  if (hs_py_parse_columns(columns, o) < 0 || hs_py_parse_rows(rows, o) < 0 ||
      hs_py_parse_filters(filters, o) < 0) {
    goto fail;
  }
  obj = PyObject_New(hs_py_stream, &hs_py_stream_type);
  if (obj == NULL) goto fail;
  obj->stream.release = NULL;
  obj->schema.release = NULL;
  obj->state = HS_PY_CLOSED; /* until the C stream is in place */
  obj->busy = 0;
  obj->batches_read = 0;
  obj->path = NULL;
  obj->path = PyUnicode_DecodeFSDefault(p);
  if (obj->path == NULL) goto fail;

  hs_parquet_read_options opts;
  hs_parquet_read_options_init(&opts);
  opts.columns = o->columns != NULL ? (const char *const *)o->columns : NULL;
  opts.n_columns = o->n_columns;
  opts.rows = o->rows;
  opts.n_rows = o->n_rows;
  opts.predicates = o->preds;
  opts.n_predicates = o->n_preds;
  opts.batch_rows_max = (int64_t)batch_rows;

  hs_error err = {0};
  hs_status st;
  int64_t selected = 0;
  int64_t num_rows = 0;
  PyThreadState *ts = PyEval_SaveThread();
  st = hs_parquet_reader_open(p, &reader, &err);
  if (st == HS_OK) {
    num_rows = hs_parquet_reader_num_rows(reader);
    if (o->n_rows > 0 && o->rows[o->n_rows - 1] >= num_rows) {
      st = hs_error_set(&err, HS_ERR_INVALID_ARG, "%s: row %lld is out of range (%lld rows)", p,
                        (long long)o->rows[o->n_rows - 1], (long long)num_rows);
    }
  }
  if (st == HS_OK) st = hs_parquet_reader_count_row_groups(reader, &opts, &selected, &err);
  if (st == HS_OK) st = hs_parquet_reader_stream(reader, &opts, &o->inner, &err);
  PyEval_RestoreThread(ts);
  if (st != HS_OK) {
    hs_py_raise(st, &err, p);
    goto fail;
  }
  obj->num_rows = (long long)num_rows;
  obj->num_row_groups = (long long)hs_parquet_reader_num_row_groups(reader);
  obj->row_groups_selected = (long long)selected;
  hs_parquet_reader_free(reader); /* the stream keeps its own reference to the file */
  obj->stream.get_schema = hs_py_owned_get_schema;
  obj->stream.get_next = hs_py_owned_get_next;
  obj->stream.get_last_error = hs_py_owned_get_last_error;
  obj->stream.release = hs_py_owned_release;
  obj->stream.private_data = o;
  obj->state = HS_PY_OPEN;
  Py_DECREF(path);
  return (PyObject *)obj;
fail:
  hs_parquet_reader_free(reader);
  hs_py_owned_free(o);
  Py_XDECREF(obj);
  Py_DECREF(path);
  return NULL;
}

PyObject *hs_py_parquet_metadata(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"path", NULL};
  PyObject *path_obj;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:parquet_metadata", kwlist, &path_obj)) {
    return NULL;
  }
  PyObject *path = hs_py_path(path_obj);
  if (path == NULL) return NULL;
  const char *p = PyBytes_AS_STRING(path);
  hs_parquet_reader *reader = NULL;
  hs_error err = {0};
  PyThreadState *ts = PyEval_SaveThread();
  hs_status st = hs_parquet_reader_open(p, &reader, &err);
  PyEval_RestoreThread(ts);
  if (st != HS_OK) {
    hs_py_raise(st, &err, p);
    Py_DECREF(path);
    return NULL;
  }
  PyObject *out =
      Py_BuildValue("{s:L,s:L}", "num_rows", (long long)hs_parquet_reader_num_rows(reader),
                    "num_row_groups", (long long)hs_parquet_reader_num_row_groups(reader));
  hs_parquet_reader_free(reader);
  Py_DECREF(path);
  return out;
}

/* -------------------------------------------------- ArrowSchemaHolder */

typedef struct hs_py_schema {
  PyObject_HEAD struct ArrowSchema schema; /* owned; exported by deep copy */
} hs_py_schema;

static void hs_py_schema_dealloc(hs_py_schema *self) {
  if (self->schema.release != NULL) self->schema.release(&self->schema);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *hs_py_schema_export(hs_py_schema *self, PyObject *unused) {
  return hs_py_schema_capsule(&self->schema);
}

static PyMethodDef hs_py_schema_methods[] = {
    {"__arrow_c_schema__", (PyCFunction)hs_py_schema_export, METH_NOARGS,
     "Export the schema as a PyCapsule 'arrow_schema' (a fresh copy each call)."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject hs_py_schema_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hyperstreamdb._core.ArrowSchemaHolder",
    .tp_basicsize = sizeof(hs_py_schema),
    .tp_dealloc = (destructor)hs_py_schema_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An Arrow schema; pass it to pyarrow.schema().",
    .tp_methods = hs_py_schema_methods,
};

PyObject *hs_py_parquet_schema(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"path", NULL};
  PyObject *path_obj;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:parquet_schema", kwlist, &path_obj)) {
    return NULL;
  }
  PyObject *path = hs_py_path(path_obj);
  if (path == NULL) return NULL;
  const char *p = PyBytes_AS_STRING(path);
  hs_py_schema *obj = PyObject_New(hs_py_schema, &hs_py_schema_type);
  if (obj == NULL) {
    Py_DECREF(path);
    return NULL;
  }
  obj->schema.release = NULL;
  hs_parquet_reader *reader = NULL;
  hs_error err = {0};
  PyThreadState *ts = PyEval_SaveThread();
  hs_status st = hs_parquet_reader_open(p, &reader, &err);
  if (st == HS_OK) st = hs_parquet_reader_schema(reader, &obj->schema, &err);
  hs_parquet_reader_free(reader);
  PyEval_RestoreThread(ts);
  if (st != HS_OK) {
    hs_py_raise(st, &err, p);
    Py_DECREF(obj);
    Py_DECREF(path);
    return NULL;
  }
  Py_DECREF(path);
  return (PyObject *)obj;
}

int hs_py_read_init(PyObject *module) {
  if (PyType_Ready(&hs_py_stream_type) < 0) return -1;
  if (PyType_Ready(&hs_py_schema_type) < 0) return -1;
  Py_INCREF(&hs_py_stream_type);
  if (PyModule_AddObject(module, "ParquetStream", (PyObject *)&hs_py_stream_type) < 0) {
    Py_DECREF(&hs_py_stream_type);
    return -1;
  }
  Py_INCREF(&hs_py_schema_type);
  if (PyModule_AddObject(module, "ArrowSchemaHolder", (PyObject *)&hs_py_schema_type) < 0) {
    Py_DECREF(&hs_py_schema_type);
    return -1;
  }
  return 0;
}

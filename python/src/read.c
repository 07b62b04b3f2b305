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
#include "parquet/parquet.h"

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
    const char *name = hs_py_text(item, "columns");
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
    const char *op_s = hs_py_text(op, "filters: operator");
    if (op_s == NULL) goto fail;
    if (hs_py_parse_op(op_s, &p->op) < 0) {
      hs_py_raise_msg(hs_py_invalid_error,
                      "filters[%zd]: operator '%s' must be one of =, ==, !=, <, <=, >, >=", i,
                      op_s);
      goto fail;
    }
    const char *col_s = hs_py_text(col, "filters: column");
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

/* A ParquetStream: the shared stream (stream.c) plus what the file holds. */
typedef struct hs_py_pstream {
  hs_py_stream base; /* first: base.what is the path */
  long long num_rows;
  long long num_row_groups;
  long long row_groups_selected;
} hs_py_pstream;

static PyObject *hs_py_pstream_repr(hs_py_pstream *self) {
  return PyUnicode_FromFormat(
      "<ParquetStream %R num_rows=%lld row_groups=%lld/%lld "
      "batches_read=%lld %s>",
      self->base.what, self->num_rows, self->row_groups_selected, self->num_row_groups,
      self->base.batches_read, hs_py_stream_state_names[self->base.state]);
}

static PyMemberDef hs_py_pstream_members[] = {
    {"path", T_OBJECT, offsetof(hs_py_pstream, base.what), READONLY, "The file path."},
    {"num_rows", T_LONGLONG, offsetof(hs_py_pstream, num_rows), READONLY, "Rows in the file."},
    {"num_row_groups", T_LONGLONG, offsetof(hs_py_pstream, num_row_groups), READONLY,
     "Row groups in the file."},
    {"row_groups_selected", T_LONGLONG, offsetof(hs_py_pstream, row_groups_selected), READONLY,
     "Row groups this stream reads after pruning by `filters`."},
    {"batches_read", T_LONGLONG, offsetof(hs_py_pstream, base.batches_read), READONLY,
     "Batches decoded so far through hyperstreamdb (not counting an exported stream)."},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject hs_py_pstream_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hyperstreamdb._core.ParquetStream",
    .tp_basicsize = sizeof(hs_py_pstream),
    .tp_dealloc = hs_py_stream_dealloc,
    .tp_repr = (reprfunc)hs_py_pstream_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "A one-shot stream of record batches read from a Parquet file.\n\n"
        "Pass it to pyarrow.table(), pyarrow.RecordBatchReader.from_stream(),\n"
        "polars.from_arrow() or any consumer of the Arrow PyCapsule Interface,\n"
        "or read it with hyperstreamdb.parquet.stream_reader(), which raises\n"
        "HyperStreamError subclasses for failures met mid-stream.",
    .tp_methods = hs_py_stream_methods,
    .tp_members = hs_py_pstream_members,
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
  hs_py_pstream *obj = NULL;
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
  obj = PyObject_New(hs_py_pstream, &hs_py_pstream_type);
  if (obj == NULL) goto fail;
  hs_py_stream_init(&obj->base, NULL, "open the file again to read it again");
  obj->base.what = PyUnicode_DecodeFSDefault(p);
  if (obj->base.what == NULL) goto fail;

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
  struct ArrowArrayStream wrapped = {.get_schema = hs_py_owned_get_schema,
                                     .get_next = hs_py_owned_get_next,
                                     .get_last_error = hs_py_owned_get_last_error,
                                     .release = hs_py_owned_release,
                                     .private_data = o};
  hs_py_stream_take(&obj->base, &wrapped);
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

PyObject *hs_py_parquet_pages_gathered(PyObject *self, PyObject *unused) {
  return PyLong_FromLongLong(hs_parquet_pages_gathered());
}

int hs_py_read_init(PyObject *module) {
  if (PyType_Ready(&hs_py_pstream_type) < 0) return -1;
  if (PyType_Ready(&hs_py_schema_type) < 0) return -1;
  Py_INCREF(&hs_py_pstream_type);
  if (PyModule_AddObject(module, "ParquetStream", (PyObject *)&hs_py_pstream_type) < 0) {
    Py_DECREF(&hs_py_pstream_type);
    return -1;
  }
  Py_INCREF(&hs_py_schema_type);
  if (PyModule_AddObject(module, "ArrowSchemaHolder", (PyObject *)&hs_py_schema_type) < 0) {
    Py_DECREF(&hs_py_schema_type);
    return -1;
  }
  return 0;
}

/*
 * sql.c — the SqlSession type: a thin shell over hs_sql_* (the SQL layer,
 * src/sql/). Statements run with the GIL released; results come back as
 * SqlStream objects (the one-shot Arrow stream of stream.c). Errors in SQL
 * raise SqlError (an InvalidArgumentError, so also a ValueError) carrying
 * `.position`, the 1-based character position the message's caret marks.
 */
#include "core.h"

#include <string.h>
#include <structmember.h>

int hs_py_sql_init(PyObject *module);

PyObject *hs_py_sql_error; /* SqlError(InvalidArgumentError) */

/* ----------------------------------------------------------- SqlStream */

static PyObject *hs_py_sqlstream_repr(hs_py_stream *self) {
  return PyUnicode_FromFormat("<SqlStream batches_read=%lld %s>", self->batches_read,
                              hs_py_stream_state_names[self->state]);
}

static PyMemberDef hs_py_sqlstream_members[] = {
    {"batches_read", T_LONGLONG, offsetof(hs_py_stream, batches_read), READONLY,
     "Batches read so far through _read_next."},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject hs_py_sqlstream_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hyperstreamdb._core.SqlStream",
    .tp_basicsize = sizeof(hs_py_stream),
    .tp_dealloc = hs_py_stream_dealloc,
    .tp_repr = (reprfunc)hs_py_sqlstream_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A one-shot stream of the record batches of one SQL statement's result.",
    .tp_methods = hs_py_stream_methods,
    .tp_members = hs_py_sqlstream_members,
    .tp_getset = hs_py_stream_getset,
};

/* ---------------------------------------------------------- SqlSession */

typedef struct hs_py_sql {
  PyObject_HEAD hs_sql_session *s;
  int busy; /* a statement is running (another thread must not start one) */
} hs_py_sql;

static int hs_py_sql_init_obj(hs_py_sql *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"root", NULL};
  PyObject *root = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:SqlSession", kwlist, &root)) return -1;
  PyObject *path = NULL;
  const char *r = NULL;
  if (root != Py_None) {
    path = hs_py_path(root);
    if (path == NULL) return -1;
    r = PyBytes_AS_STRING(path);
  }
  hs_error err = {0};
  hs_sql_session *s = NULL;
  hs_status st;
  Py_BEGIN_ALLOW_THREADS st = hs_sql_session_new(r, &s, &err);
  Py_END_ALLOW_THREADS Py_XDECREF(path);
  if (st != HS_OK) {
    hs_py_raise(st, &err, NULL);
    return -1;
  }
  hs_sql_session_free(self->s);
  self->s = s;
  return 0;
}

static void hs_py_sql_dealloc(hs_py_sql *self) {
  hs_sql_session_free(self->s);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static hs_sql_session *session_of(hs_py_sql *self) {
  if (self->s == NULL) hs_py_raise_msg(hs_py_invalid_error, "the SqlSession is closed");
  return self->s;
}

static PyObject *hs_py_sql_register_table(hs_py_sql *self, PyObject *args) {
  PyObject *name_o, *uri_o;
  if (!PyArg_ParseTuple(args, "OO:register_table", &name_o, &uri_o)) return NULL;
  hs_sql_session *s = session_of(self);
  const char *name = hs_py_text(name_o, "name");
  if (s == NULL || name == NULL) return NULL;
  PyObject *path = hs_py_path(uri_o);
  if (path == NULL) return NULL;
  hs_error err = {0};
  hs_status st;
  Py_BEGIN_ALLOW_THREADS st = hs_sql_register_table(s, name, PyBytes_AS_STRING(path), &err);
  Py_END_ALLOW_THREADS Py_DECREF(path);
  if (st != HS_OK) return hs_py_raise(st, &err, NULL);
  Py_RETURN_NONE;
}

static PyObject *hs_py_sql_register_stream(hs_py_sql *self, PyObject *args) {
  PyObject *name_o, *data;
  if (!PyArg_ParseTuple(args, "OO:register_stream", &name_o, &data)) return NULL;
  hs_sql_session *s = session_of(self);
  const char *name = hs_py_text(name_o, "name");
  if (s == NULL || name == NULL) return NULL;
  PyObject *capsule = PyObject_CallMethod(data, "__arrow_c_stream__", NULL);
  if (capsule == NULL) return NULL;
  struct ArrowArrayStream *cs = PyCapsule_GetPointer(capsule, "arrow_array_stream");
  if (cs == NULL || cs->release == NULL) {
    Py_DECREF(capsule);
    if (!PyErr_Occurred())
      hs_py_raise_msg(hs_py_invalid_error, "the Arrow stream was already consumed");
    return NULL;
  }
  struct ArrowArrayStream stream = *cs;
  cs->release = NULL;
  Py_DECREF(capsule);
  hs_error err = {0};
  hs_status st;
  Py_BEGIN_ALLOW_THREADS st = hs_sql_register_stream(s, name, &stream, &err);
  Py_END_ALLOW_THREADS if (st != HS_OK) return hs_py_raise(st, &err, NULL);
  Py_RETURN_NONE;
}

static PyObject *hs_py_sql_unregister(hs_py_sql *self, PyObject *args) {
  PyObject *name_o;
  if (!PyArg_ParseTuple(args, "O:unregister", &name_o)) return NULL;
  hs_sql_session *s = session_of(self);
  const char *name = hs_py_text(name_o, "name");
  if (s == NULL || name == NULL) return NULL;
  hs_error err = {0};
  hs_status st = hs_sql_unregister(s, name, &err);
  if (st != HS_OK) return hs_py_raise(st, &err, NULL);
  Py_RETURN_NONE;
}

/* Raise SqlError (syntax and semantic errors) with .position, or the
 * status's usual class. */
static PyObject *raise_sql(hs_status st, const hs_error *err, int32_t pos) {
  if (st != HS_ERR_INVALID_ARG) {
    hs_py_raise(st, err, NULL);
  } else {
    PyObject *msg = PyUnicode_DecodeUTF8(err->message, (Py_ssize_t)strlen(err->message), "replace");
    if (msg == NULL) return NULL;
    PyErr_SetObject(hs_py_sql_error, msg);
    Py_DECREF(msg);
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value != NULL) {
    PyObject *p = PyLong_FromLong(pos);
    if (p != NULL) {
      PyObject_SetAttrString(value, "position", p);
      Py_DECREF(p);
    }
  }
  PyErr_Restore(type, value, tb);
  return NULL;
}

static PyObject *hs_py_sql_execute(hs_py_sql *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"sql", "params", NULL};
  PyObject *sql_o, *params = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:execute", kwlist, &sql_o, &params))
    return NULL;
  hs_sql_session *s = session_of(self);
  const char *sql = hs_py_text(sql_o, "sql");
  if (s == NULL || sql == NULL) return NULL;
  /* params: an object with __arrow_c_array__ giving a struct array of one row */
  struct ArrowSchema *ps = NULL;
  struct ArrowArray *pa = NULL;
  PyObject *caps = NULL;
  if (params != Py_None) {
    caps = PyObject_CallMethod(params, "__arrow_c_array__", NULL);
    if (caps == NULL) return NULL;
    if (!PyTuple_Check(caps) || PyTuple_GET_SIZE(caps) != 2) {
      Py_DECREF(caps);
      return hs_py_raise_msg(hs_py_invalid_error,
                             "params: __arrow_c_array__ must return two capsules");
    }
    ps = PyCapsule_GetPointer(PyTuple_GET_ITEM(caps, 0), "arrow_schema");
    pa = PyCapsule_GetPointer(PyTuple_GET_ITEM(caps, 1), "arrow_array");
    if (ps == NULL || pa == NULL) {
      Py_DECREF(caps);
      return NULL;
    }
  }
  if (self->busy) {
    Py_XDECREF(caps);
    return hs_py_raise_msg(hs_py_invalid_error,
                           "the SqlSession is running a statement in another thread; use one "
                           "session per thread");
  }
  self->busy = 1;
  struct ArrowArrayStream out;
  memset(&out, 0, sizeof out);
  hs_error err = {0};
  int32_t pos = 0;
  hs_status st;
  Py_BEGIN_ALLOW_THREADS st = hs_sql_execute(s, sql, ps, pa, &out, &pos, &err);
  Py_END_ALLOW_THREADS self->busy = 0;
  Py_XDECREF(caps);
  if (st != HS_OK) return raise_sql(st, &err, pos);
  hs_py_stream *obj = PyObject_New(hs_py_stream, &hs_py_sqlstream_type);
  if (obj == NULL) {
    out.release(&out);
    return NULL;
  }
  hs_py_stream_init(obj, NULL, "run the statement again to read it again");
  hs_py_stream_take(obj, &out);
  return (PyObject *)obj;
}

static PyObject *hs_py_sql_cancel(hs_py_sql *self, PyObject *unused) {
  (void)unused;
  if (self->s != NULL) hs_sql_cancel(self->s);
  Py_RETURN_NONE;
}

static PyObject *hs_py_sql_set_memory_limit(hs_py_sql *self, PyObject *args) {
  long long bytes;
  if (!PyArg_ParseTuple(args, "L:set_memory_limit", &bytes)) return NULL;
  hs_sql_session *s = session_of(self);
  if (s == NULL) return NULL;
  if (bytes < 0)
    return hs_py_raise_msg(hs_py_invalid_error, "memory limit must be >= 0 (0: the default)");
  hs_sql_set_memory_limit(s, (int64_t)bytes);
  Py_RETURN_NONE;
}

static PyObject *hs_py_sql_close(hs_py_sql *self, PyObject *unused) {
  (void)unused;
  if (self->busy) return hs_py_raise_msg(hs_py_invalid_error, "a statement is running");
  hs_sql_session_free(self->s);
  self->s = NULL;
  Py_RETURN_NONE;
}

static PyMethodDef hs_py_sql_methods[] = {
    {"register_table", (PyCFunction)hs_py_sql_register_table, METH_VARARGS,
     "register_table(name, uri)\n\nMake the table folder `uri` the relation `name`."},
    {"register_stream", (PyCFunction)hs_py_sql_register_stream, METH_VARARGS,
     "register_stream(name, data)\n\nRead `data` (any object with __arrow_c_stream__) whole and "
     "make it the relation `name`."},
    {"unregister", (PyCFunction)hs_py_sql_unregister, METH_VARARGS,
     "unregister(name)\n\nForget the relation `name`."},
    {"execute", (PyCFunction)(void (*)(void))hs_py_sql_execute, METH_VARARGS | METH_KEYWORDS,
     "execute(sql, params=None) -> SqlStream\n\nRun one statement. `params`: an object with "
     "__arrow_c_array__ giving a one-row struct array whose field i is $(i+1). SQL errors raise "
     "SqlError with .position."},
    {"cancel", (PyCFunction)hs_py_sql_cancel, METH_NOARGS,
     "cancel()\n\nAsk the running statement to stop (safe from any thread)."},
    {"set_memory_limit", (PyCFunction)hs_py_sql_set_memory_limit, METH_VARARGS,
     "set_memory_limit(bytes)\n\nThe per-statement memory limit (0: the default)."},
    {"close", (PyCFunction)hs_py_sql_close, METH_NOARGS, "close()\n\nFree the session."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject hs_py_sql_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hyperstreamdb._core.SqlSession",
    .tp_basicsize = sizeof(hs_py_sql),
    .tp_dealloc = (destructor)hs_py_sql_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "SqlSession(root=None): relations by name and SQL statements over them.",
    .tp_methods = hs_py_sql_methods,
    .tp_init = (initproc)hs_py_sql_init_obj,
    .tp_new = PyType_GenericNew,
};

int hs_py_sql_init(PyObject *module) {
  if (PyType_Ready(&hs_py_sql_type) < 0 || PyType_Ready(&hs_py_sqlstream_type) < 0) return -1;
  PyObject *bases = PyTuple_Pack(1, hs_py_invalid_error);
  if (bases == NULL) return -1;
  hs_py_sql_error = PyErr_NewExceptionWithDoc(
      "hyperstreamdb.SqlError",
      "An error in a SQL statement (syntax, unknown name, type mismatch, division by zero, "
      "overflow, ...). `.position` is the 1-based character position the message marks.",
      bases, NULL);
  Py_DECREF(bases);
  if (hs_py_sql_error == NULL) return -1;
  Py_INCREF(hs_py_sql_error);
  if (PyModule_AddObject(module, "SqlError", hs_py_sql_error) < 0) return -1;
  Py_INCREF(&hs_py_sql_type);
  if (PyModule_AddObject(module, "SqlSession", (PyObject *)&hs_py_sql_type) < 0) return -1;
  Py_INCREF(&hs_py_sqlstream_type);
  if (PyModule_AddObject(module, "SqlStream", (PyObject *)&hs_py_sqlstream_type) < 0) return -1;
  return 0;
}

/*
 * stats.c — `_core.compute_statistics(uri, columns=None) -> dict` over
 * hs_table_compute_statistics (src/query/stats.c): writes the current
 * snapshot's Puffin statistics file (one apache-datasketches-theta-v1 blob
 * per column) and lists it in the metadata's `statistics`. The dict:
 * snapshot_id, path, ndv ({column: estimate}), field_ids ({column: id}).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core.h"

int hs_py_stats_init(PyObject *module);

static PyObject *hs_py_compute_statistics(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "columns", NULL};
  PyObject *uri, *cols_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:compute_statistics", kwlist, &uri, &cols_obj))
    return NULL;
  const char **cols = NULL;
  Py_ssize_t n = 0;
  PyObject *seq = NULL;
  if (cols_obj != Py_None) {
    seq = PySequence_Fast(cols_obj, "columns must be a list of names");
    if (seq == NULL) return NULL;
    n = PySequence_Fast_GET_SIZE(seq);
    cols = PyMem_Calloc((size_t)n + 1, sizeof *cols);
    if (cols == NULL) {
      Py_DECREF(seq);
      return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
      if ((cols[i] = hs_py_text(PySequence_Fast_GET_ITEM(seq, i), "column")) == NULL) {
        PyMem_Free(cols);
        Py_DECREF(seq);
        return NULL;
      }
    }
  }
  PyObject *path = hs_py_path(uri);
  if (path == NULL) {
    PyMem_Free(cols);
    Py_XDECREF(seq);
    return NULL;
  }
  hs_table_statistics res;
  memset(&res, 0, sizeof res);
  hs_table *t = NULL;
  hs_error err = {0};
  PyThreadState *ts = PyEval_SaveThread();
  hs_status st = hs_table_open(PyBytes_AS_STRING(path), &t, &err);
  if (st == HS_OK) st = hs_table_compute_statistics(t, cols, (size_t)n, &res, &err);
  hs_table_free(t);
  PyEval_RestoreThread(ts);
  PyMem_Free(cols);
  Py_XDECREF(seq);
  if (st != HS_OK) {
    hs_py_raise(st, &err, PyBytes_AS_STRING(path));
    Py_DECREF(path);
    return NULL;
  }
  Py_DECREF(path);
  PyObject *ndv = PyDict_New(), *ids = PyDict_New();
  for (size_t i = 0; ndv != NULL && ids != NULL && i < res.n; i++) {
    PyObject *v = PyLong_FromLongLong((long long)res.ndv[i]);
    PyObject *f = PyLong_FromLong((long)res.field_ids[i]);
    if (v == NULL || f == NULL || PyDict_SetItemString(ndv, res.columns[i], v) < 0 ||
        PyDict_SetItemString(ids, res.columns[i], f) < 0) {
      Py_CLEAR(ndv);
    }
    Py_XDECREF(v);
    Py_XDECREF(f);
  }
  PyObject *d = ndv != NULL && ids != NULL
                    ? Py_BuildValue("{s:L,s:s,s:O,s:O}", "snapshot_id", (long long)res.snapshot_id,
                                    "path", res.path, "ndv", ndv, "field_ids", ids)
                    : NULL;
  Py_XDECREF(ndv);
  Py_XDECREF(ids);
  hs_table_statistics_free(&res);
  return d;
}

static PyMethodDef hs_py_stats_methods[] = {
    {"compute_statistics", (PyCFunction)(void (*)(void))hs_py_compute_statistics,
     METH_VARARGS | METH_KEYWORDS,
     "compute_statistics(uri, columns=None) -> dict\n\n"
     "Write the current snapshot's NDV statistics (Puffin theta sketches) and\n"
     "list them in the table metadata's 'statistics'."},
    {NULL, NULL, 0, NULL}};

int hs_py_stats_init(PyObject *module) {
  return PyModule_AddFunctions(module, hs_py_stats_methods);
}

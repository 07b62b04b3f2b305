/*
 * maintenance.c — table upkeep for the Python package:
 * `_core.remove_orphan_files(uri, older_than_ms, dry_run)` over
 * hs_table_remove_orphan_files (src/table/orphans.c). Table.remove_orphan_files
 * (python/hyperstreamdb/table.py) turns ages and datetimes into the cut-off.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core.h"

static PyObject *hs_py_remove_orphan_files(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "older_than_ms", "dry_run", NULL};
  PyObject *uri;
  long long older_than_ms;
  int dry_run = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OL|p:remove_orphan_files", kwlist, &uri,
                                   &older_than_ms, &dry_run))
    return NULL;
  PyObject *path = hs_py_path(uri);
  if (path == NULL) return NULL;
  hs_table *t = NULL;
  hs_error err = {0};
  hs_table_orphan_file *files = NULL;
  size_t n = 0;
  hs_status st;
  PyThreadState *ts_ = PyEval_SaveThread();
  st = hs_table_open(PyBytes_AS_STRING(path), &t, &err);
  if (st == HS_OK)
    st = hs_table_remove_orphan_files(t, (int64_t)older_than_ms, dry_run, &files, &n, &err);
  hs_table_free(t);
  PyEval_RestoreThread(ts_);
  if (st != HS_OK) {
    hs_py_raise(st, &err, PyBytes_AS_STRING(path));
    Py_DECREF(path);
    return NULL;
  }
  Py_DECREF(path);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list != NULL && i < n; i++) {
    PyObject *rec = Py_BuildValue("(sLL)", files[i].path, (long long)files[i].size,
                                  (long long)files[i].mtime_ms);
    if (rec == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, rec);
  }
  hs_free(files);
  return list;
}

static PyMethodDef hs_py_maintenance_methods[] = {
    {"remove_orphan_files", (PyCFunction)(void (*)(void))hs_py_remove_orphan_files,
     METH_VARARGS | METH_KEYWORDS,
     "remove_orphan_files(uri, older_than_ms, dry_run=False) -> list of (path, size, mtime_ms)\n\n"
     "Remove (or only list) files no metadata reaches, last modified before older_than_ms."},
    {NULL, NULL, 0, NULL}};

int hs_py_maintenance_init(PyObject *module) {
  return PyModule_AddFunctions(module, hs_py_maintenance_methods);
}

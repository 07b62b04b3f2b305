/*
 * maintenance.c — table upkeep for the Python package:
 * `_core.remove_orphan_files(uri, older_than_ms, dry_run, force)` (and the
 * floor `_core.ORPHAN_MIN_AGE_MS`, enforced by the C core) and
 * `_core.expire_snapshots(uri, older_than_ms, retain_last, dry_run)` over
 * src/table/orphans.c and expire.c. Table.remove_orphan_files and
 * Table.expire_snapshots (python/hyperstreamdb/table.py) turn ages and
 * datetimes into the cut-off.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core.h"

/* [(path, size, mtime_ms), ...] of `files`; NULL with an exception on failure. */
static PyObject *file_list(const hs_table_orphan_file *files, size_t n) {
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
  return list;
}

static PyObject *hs_py_remove_orphan_files(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "older_than_ms", "dry_run", "force", NULL};
  PyObject *uri;
  long long older_than_ms;
  int dry_run = 0, force = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OL|pp:remove_orphan_files", kwlist, &uri,
                                   &older_than_ms, &dry_run, &force))
    return NULL;
  int flags = (dry_run ? HS_ORPHAN_DRY_RUN : 0) | (force ? HS_ORPHAN_FORCE : 0);
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
    st = hs_table_remove_orphan_files(t, (int64_t)older_than_ms, flags, &files, &n, &err);
  hs_table_free(t);
  PyEval_RestoreThread(ts_);
  if (st != HS_OK) {
    hs_py_raise(st, &err, PyBytes_AS_STRING(path));
    Py_DECREF(path);
    return NULL;
  }
  Py_DECREF(path);
  PyObject *list = file_list(files, n);
  hs_free(files);
  return list;
}

static PyObject *hs_py_expire_snapshots(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "older_than_ms", "retain_last", "dry_run", NULL};
  PyObject *uri;
  long long older_than_ms;
  int retain_last = 1, dry_run = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OL|ip:expire_snapshots", kwlist, &uri,
                                   &older_than_ms, &retain_last, &dry_run))
    return NULL;
  PyObject *path = hs_py_path(uri);
  if (path == NULL) return NULL;
  hs_table *t = NULL;
  hs_error err = {0};
  int64_t *ids = NULL;
  size_t n_ids = 0, n_files = 0;
  hs_table_orphan_file *files = NULL;
  hs_status st;
  PyThreadState *ts_ = PyEval_SaveThread();
  st = hs_table_open(PyBytes_AS_STRING(path), &t, &err);
  if (st == HS_OK)
    st = hs_table_expire_snapshots(t, (int64_t)older_than_ms, (int32_t)retain_last, dry_run, &ids,
                                   &n_ids, &files, &n_files, &err);
  hs_table_free(t);
  PyEval_RestoreThread(ts_);
  if (st != HS_OK) {
    hs_py_raise(st, &err, PyBytes_AS_STRING(path));
    Py_DECREF(path);
    return NULL;
  }
  Py_DECREF(path);
  PyObject *id_list = PyList_New((Py_ssize_t)n_ids);
  for (size_t i = 0; id_list != NULL && i < n_ids; i++) {
    PyObject *v = PyLong_FromLongLong((long long)ids[i]);
    if (v == NULL) {
      Py_CLEAR(id_list);
      break;
    }
    PyList_SET_ITEM(id_list, (Py_ssize_t)i, v);
  }
  PyObject *flist = id_list ? file_list(files, n_files) : NULL;
  hs_free(ids);
  hs_free(files);
  if (flist == NULL) {
    Py_XDECREF(id_list);
    return NULL;
  }
  return Py_BuildValue("(NN)", id_list, flist);
}

static PyMethodDef hs_py_maintenance_methods[] = {
    {"expire_snapshots", (PyCFunction)(void (*)(void))hs_py_expire_snapshots,
     METH_VARARGS | METH_KEYWORDS,
     "expire_snapshots(uri, older_than_ms, retain_last=1, dry_run=False)\n"
     "    -> (list of snapshot ids, list of (path, size, mtime_ms))\n\n"
     "Expire snapshots older than older_than_ms (keeping the current one, refs and the last\n"
     "retain_last of the current ancestry) and delete the files only they reached."},
    {"remove_orphan_files", (PyCFunction)(void (*)(void))hs_py_remove_orphan_files,
     METH_VARARGS | METH_KEYWORDS,
     "remove_orphan_files(uri, older_than_ms, dry_run=False, force=False)\n"
     "    -> list of (path, size, mtime_ms)\n\n"
     "Remove (or only list) files no metadata reaches, last modified before older_than_ms\n"
     "(never within the last ORPHAN_MIN_AGE_MS unless force)."},
    {NULL, NULL, 0, NULL}};

int hs_py_maintenance_init(PyObject *module) {
  if (PyModule_AddIntConstant(module, "ORPHAN_MIN_AGE_MS", (long)HS_ORPHAN_MIN_AGE_MS) != 0)
    return -1;
  return PyModule_AddFunctions(module, hs_py_maintenance_methods);
}

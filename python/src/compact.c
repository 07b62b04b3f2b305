/*
 * compact.c — `_core.compact(uri, target_file_size_bytes=0, filter=None,
 * min_input_files=0, keep=False) -> (dict, list)` over hs_table_compact
 * (src/query/compact.c). The dict holds the result's counts; the list, with
 * keep=True, one capsule per new file of an unpartitioned, unsorted table
 * holding its written batches (the capsules TableHandle.append(keep=True)
 * gives), for `_core.index_build(appended=...)`. Table.compact
 * (python/hyperstreamdb/_compact.py) builds the new files' indexes with it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core.h"

int hs_py_compact_init(PyObject *module);

static void appended_free(PyObject *cap) {
  hs_table_appended_free(PyCapsule_GetPointer(cap, HS_PY_APPENDED_CAPSULE));
}

static PyObject *hs_py_compact(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "target_file_size_bytes", "filter", "min_input_files", "keep",
                           NULL};
  PyObject *uri, *filter_obj = Py_None;
  long long target = 0;
  int min_input = 0, keep = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|LOip:compact", kwlist, &uri, &target,
                                   &filter_obj, &min_input, &keep))
    return NULL;
  const char *filter = NULL;
  if (filter_obj != Py_None && (filter = hs_py_text(filter_obj, "filter")) == NULL) return NULL;
  PyObject *path = hs_py_path(uri);
  if (path == NULL) return NULL;
  hs_compact_options o = {.target_file_size_bytes = (int64_t)target,
                          .filter = filter,
                          .min_input_files = (int32_t)min_input};
  hs_compact_result res;
  memset(&res, 0, sizeof res);
  hs_table_appended **kept = NULL;
  size_t n_kept = 0;
  hs_table *t = NULL;
  hs_error err = {0};
  hs_status st;
  PyThreadState *ts = PyEval_SaveThread();
  st = hs_table_open(PyBytes_AS_STRING(path), &t, &err);
  if (st == HS_OK)
    st = hs_table_compact(t, &o, &res, keep ? &kept : NULL, keep ? &n_kept : NULL, &err);
  hs_table_free(t);
  PyEval_RestoreThread(ts);
  if (st != HS_OK) {
    hs_py_raise(st, &err, PyBytes_AS_STRING(path));
    Py_DECREF(path);
    return NULL;
  }
  Py_DECREF(path);
  PyObject *list = PyList_New(0);
  for (size_t i = 0; i < n_kept; i++) {
    PyObject *cap =
        list != NULL ? PyCapsule_New(kept[i], HS_PY_APPENDED_CAPSULE, appended_free) : NULL;
    if (cap == NULL) {
      for (size_t j = i; j < n_kept; j++) hs_table_appended_free(kept[j]);
      Py_CLEAR(list);
      break;
    }
    kept[i] = NULL;
    if (PyList_Append(list, cap) < 0) Py_CLEAR(list);
    Py_DECREF(cap);
    if (list == NULL) {
      for (size_t j = i + 1; j < n_kept; j++) hs_table_appended_free(kept[j]);
      break;
    }
  }
  hs_free(kept);
  if (list == NULL) return NULL;
  PyObject *sid = res.snapshot_id < 0 ? (Py_INCREF(Py_None), Py_None)
                                      : PyLong_FromLongLong((long long)res.snapshot_id);
  PyObject *d = Py_BuildValue(
      "{s:N,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:i}", "snapshot_id", sid, "files_rewritten",
      (long long)res.files_rewritten, "files_added", (long long)res.files_added,
      "delete_files_removed", (long long)res.delete_files_removed, "rows", (long long)res.rows,
      "rows_dropped", (long long)res.rows_dropped, "bytes_removed", (long long)res.bytes_removed,
      "bytes_added", (long long)res.bytes_added, "bins", (long long)res.bins, "attempts",
      (int)res.attempts);
  if (d == NULL) {
    Py_DECREF(list);
    return NULL;
  }
  return Py_BuildValue("(NN)", d, list);
}

static PyMethodDef hs_py_compact_methods[] = {
    {"compact", (PyCFunction)(void (*)(void))hs_py_compact, METH_VARARGS | METH_KEYWORDS,
     "compact(uri, target_file_size_bytes=0, filter=None, min_input_files=0, keep=False)\n"
     "-> (dict, list)\n\n"
     "Rewrite small files and files with deletes as one 'replace' snapshot\n"
     "(hs_table_compact). keep=True: the new files' written batches as capsules\n"
     "for index_build(appended=...) (unpartitioned, unsorted tables)."},
    {NULL, NULL, 0, NULL}};

int hs_py_compact_init(PyObject *module) {
  return PyModule_AddFunctions(module, hs_py_compact_methods);
}

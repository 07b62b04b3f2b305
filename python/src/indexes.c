/*
 * indexes.c — scalar index configuration, builds and explain from Python:
 * module functions index_add, index_drop, index_list, index_build and
 * explain over the "Tables: scalar index registry" section of
 * include/hyperstream.h. The friendly API (Table.add_index, background
 * builds, wait_for_indexes, explain text) is python/hyperstreamdb/_indexes.py.
 *
 * Each call opens its own hs_table on the folder (a metadata read), works
 * with the GIL released and frees it: a background build on a worker
 * thread never contends with the TableHandle the user's thread writes
 * through, and every call sees the latest committed version.
 */
#include "core.h"

#include <string.h>

#include "common/common.h"

int hs_py_indexes_init(PyObject *module);

/* Open the table at `uri_obj` without the GIL; NULL + exception on failure. */
static hs_table *hs_py_ix_open(PyObject *uri_obj, PyObject **path_out) {
  PyObject *path = hs_py_path(uri_obj);
  if (path == NULL) return NULL;
  hs_table *t = NULL;
  hs_error err = {0};
  hs_status st;
  PyThreadState *ts_ = PyEval_SaveThread();
  st = hs_table_open(PyBytes_AS_STRING(path), &t, &err);
  PyEval_RestoreThread(ts_);
  if (st != HS_OK) {
    hs_py_raise(st, &err, PyBytes_AS_STRING(path));
    Py_DECREF(path);
    return NULL;
  }
  *path_out = path;
  return t;
}

static PyObject *hs_py_index_add(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "column", "kind", "params", NULL};
  PyObject *uri;
  const char *column, *kind, *params = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oss|z:index_add", kwlist, &uri, &column, &kind,
                                   &params))
    return NULL;
  PyObject *path = NULL;
  hs_table *t = hs_py_ix_open(uri, &path);
  if (t == NULL) return NULL;
  hs_error err = {0};
  hs_status st;
  PyThreadState *ts_ = PyEval_SaveThread();
  st = hs_table_add_index(t, column, kind, params, &err);
  hs_table_free(t);
  PyEval_RestoreThread(ts_);
  PyObject *r = st == HS_OK ? Py_None : NULL;
  if (st != HS_OK) hs_py_raise(st, &err, PyBytes_AS_STRING(path));
  Py_DECREF(path);
  Py_XINCREF(r);
  return r;
}

/* index_add_many(uri, columns, kind, params=None): one commit for all. */
static PyObject *hs_py_index_add_many(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "columns", "kind", "params", NULL};
  PyObject *uri, *cols_obj;
  const char *kind, *params = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOs|z:index_add_many", kwlist, &uri, &cols_obj,
                                   &kind, &params))
    return NULL;
  PyObject *seq = PySequence_Fast(cols_obj, "columns must be a list of str");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  const char **cols = PyMem_Calloc((size_t)n + 1, sizeof *cols);
  const char **kinds = PyMem_Calloc((size_t)n + 1, sizeof *kinds);
  const char **ps = PyMem_Calloc((size_t)n + 1, sizeof *ps);
  if (cols == NULL || kinds == NULL || ps == NULL) {
    PyErr_NoMemory();
    goto fail;
  }
  for (Py_ssize_t i = 0; i < n; i++) { /* borrowed from seq's items, held below */
    PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
    cols[i] = hs_py_text(o, "columns");
    if (cols[i] == NULL) goto fail;
    kinds[i] = kind;
    ps[i] = params;
  }
  PyObject *path = NULL;
  hs_table *t = hs_py_ix_open(uri, &path);
  if (t == NULL) goto fail;
  hs_error err = {0};
  PyThreadState *ts_ = PyEval_SaveThread();
  hs_status st = hs_table_add_indexes(t, cols, kinds, ps, (size_t)n, &err);
  hs_table_free(t);
  PyEval_RestoreThread(ts_);
  if (st != HS_OK) hs_py_raise(st, &err, PyBytes_AS_STRING(path));
  Py_DECREF(path);
  PyMem_Free(cols);
  PyMem_Free(kinds);
  PyMem_Free(ps);
  Py_DECREF(seq);
  if (st != HS_OK) return NULL;
  Py_RETURN_NONE;
fail:
  PyMem_Free(cols);
  PyMem_Free(kinds);
  PyMem_Free(ps);
  Py_DECREF(seq);
  return NULL;
}

static PyObject *hs_py_index_drop(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "column", NULL};
  PyObject *uri;
  const char *column;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Os:index_drop", kwlist, &uri, &column))
    return NULL;
  PyObject *path = NULL;
  hs_table *t = hs_py_ix_open(uri, &path);
  if (t == NULL) return NULL;
  hs_error err = {0};
  hs_status st;
  PyThreadState *ts_ = PyEval_SaveThread();
  st = hs_table_drop_index(t, column, &err);
  hs_table_free(t);
  PyEval_RestoreThread(ts_);
  PyObject *r = st == HS_OK ? Py_None : NULL;
  if (st != HS_OK) hs_py_raise(st, &err, PyBytes_AS_STRING(path));
  Py_DECREF(path);
  Py_XINCREF(r);
  return r;
}

static PyObject *hs_py_index_list(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", NULL};
  PyObject *uri;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:index_list", kwlist, &uri)) return NULL;
  PyObject *path = NULL;
  hs_table *t = hs_py_ix_open(uri, &path);
  if (t == NULL) return NULL;
  hs_error err = {0};
  hs_status st;
  hs_table_index_info *v = NULL;
  size_t n = 0;
  PyThreadState *ts_ = PyEval_SaveThread();
  st = hs_table_list_indexes(t, &v, &n, &err);
  hs_table_free(t);
  PyEval_RestoreThread(ts_);
  if (st != HS_OK) {
    hs_py_raise(st, &err, PyBytes_AS_STRING(path));
    Py_DECREF(path);
    return NULL;
  }
  Py_DECREF(path);
  PyObject *list = PyList_New(0);
  for (size_t i = 0; list != NULL && i < n; i++) {
    PyObject *d = Py_BuildValue(
        "{s:s,s:s,s:s,s:O,s:L,s:L}", "column", v[i].column, "kind", v[i].kind, "params",
        v[i].params, "is_vector", v[i].is_vector ? Py_True : Py_False, "files_indexed",
        (long long)v[i].files_indexed, "files_total", (long long)v[i].files_total);
    if (d == NULL || PyList_Append(list, d) < 0) Py_CLEAR(list);
    Py_XDECREF(d);
  }
  hs_table_index_info_free(v, n);
  return list;
}

/* Progress calls into Python from the build's worker threads. */
typedef struct hs_py_ix_progress {
  PyObject *callback; /* callable(done, total) -> truthy to cancel */
  int failed;         /* the callback raised: its exception is kept */
  PyObject *exc_type, *exc_value, *exc_tb;
} hs_py_ix_progress;

static int hs_py_ix_on_progress(void *ctx, int64_t done, int64_t total) {
  hs_py_ix_progress *p = ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  int cancel = 0;
  if (!p->failed) {
    PyObject *r = PyObject_CallFunction(p->callback, "LL", (long long)done, (long long)total);
    if (r == NULL) {
      p->failed = 1;
      PyErr_Fetch(&p->exc_type, &p->exc_value, &p->exc_tb);
    } else {
      cancel = PyObject_IsTrue(r) == 1;
      Py_DECREF(r);
    }
    if (!p->failed && PyErr_CheckSignals() < 0) { /* Ctrl-C during a long backfill */
      p->failed = 1;
      PyErr_Fetch(&p->exc_type, &p->exc_value, &p->exc_tb);
    }
  }
  PyGILState_Release(g);
  return cancel || p->failed;
}

static PyObject *hs_py_index_build(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "columns", "progress", "threads", "appended", NULL};
  PyObject *uri, *cols_obj = Py_None, *progress = Py_None, *app_obj = Py_None;
  unsigned int threads = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOIO:index_build", kwlist, &uri, &cols_obj,
                                   &progress, &threads, &app_obj))
    return NULL;
  if (progress != Py_None && !PyCallable_Check(progress))
    return hs_py_raise_msg(hs_py_invalid_error, "progress must be callable(done, total)");
  /* appended: capsules of TableHandle.append(keep=True), held (app_seq)
   * while the build runs without the GIL. */
  PyObject *app_seq = NULL;
  const hs_table_appended **app = NULL;
  Py_ssize_t n_app = 0;
  if (app_obj != Py_None) {
    app_seq = PySequence_Fast(app_obj, "appended must be a list of kept appends");
    if (app_seq == NULL) return NULL;
    n_app = PySequence_Fast_GET_SIZE(app_seq);
    app = PyMem_Calloc((size_t)n_app + 1, sizeof *app);
    if (app == NULL) {
      Py_DECREF(app_seq);
      return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n_app; i++) {
      app[i] = PyCapsule_GetPointer(PySequence_Fast_GET_ITEM(app_seq, i), HS_PY_APPENDED_CAPSULE);
      if (app[i] == NULL) {
        PyMem_Free(app);
        Py_DECREF(app_seq);
        return NULL;
      }
    }
  }
  char **cols = NULL;
  Py_ssize_t n_cols = 0;
  if (cols_obj != Py_None) {
    PyObject *seq = PySequence_Fast(cols_obj, "columns must be a list of str");
    if (seq == NULL) {
      PyMem_Free(app);
      Py_XDECREF(app_seq);
      return NULL;
    }
    n_cols = PySequence_Fast_GET_SIZE(seq);
    cols = PyMem_Calloc((size_t)n_cols + 1, sizeof *cols);
    for (Py_ssize_t i = 0; cols != NULL && i < n_cols; i++) {
      const char *s = hs_py_text(PySequence_Fast_GET_ITEM(seq, i), "columns");
      if (s == NULL || (cols[i] = hs_strdup(s)) == NULL) {
        for (Py_ssize_t k = 0; k < i; k++) hs_free(cols[k]);
        PyMem_Free(cols);
        cols = NULL;
        if (!PyErr_Occurred()) hs_py_raise_msg(hs_py_invalid_error, "columns must be str");
      }
    }
    Py_DECREF(seq);
    if (cols == NULL) {
      PyMem_Free(app);
      Py_XDECREF(app_seq);
      return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
  }
  PyObject *path = NULL;
  hs_table *t = hs_py_ix_open(uri, &path);
  hs_py_ix_progress pg = {progress, 0, NULL, NULL, NULL};
  hs_table_index_build_options bo;
  memset(&bo, 0, sizeof bo);
  bo.columns = (const char *const *)cols;
  bo.n_columns = (size_t)n_cols;
  bo.threads = threads;
  bo.skip_vector = 1; /* hyperstreamdb builds vector kinds through Table._build_vector_index */
  bo.appended = app;
  bo.n_appended = (size_t)n_app;
  if (progress != Py_None) {
    bo.progress = hs_py_ix_on_progress;
    bo.progress_ctx = &pg;
  }
  int64_t built = 0;
  hs_error err = {0};
  hs_status st = HS_OK;
  if (t != NULL) {
    PyThreadState *ts_ = PyEval_SaveThread();
    st = hs_table_build_configured_indexes(t, &bo, &built, &err);
    hs_table_free(t);
    PyEval_RestoreThread(ts_);
  }
  for (Py_ssize_t i = 0; cols != NULL && i < n_cols; i++) hs_free(cols[i]);
  PyMem_Free(cols);
  PyMem_Free(app);
  Py_XDECREF(app_seq);
  if (t == NULL) return NULL;
  PyObject *r = NULL;
  if (pg.failed) {
    PyErr_Restore(pg.exc_type, pg.exc_value, pg.exc_tb);
  } else if (st != HS_OK) {
    hs_py_raise(st, &err, PyBytes_AS_STRING(path));
  } else {
    r = PyLong_FromLongLong((long long)built);
  }
  Py_DECREF(path);
  return r;
}

/* explain's per-file records as a list of dicts (new reference). */
static PyObject *explain_files(const hs_scan_file_info *f, size_t n) {
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list != NULL && i < n; i++) {
    PyObject *d = Py_BuildValue(
        "{s:s,s:s,s:O,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:s}", "path", f[i].path,
        "index_columns", f[i].index_columns, "indexed", f[i].indexed ? Py_True : Py_False, "rows",
        (long long)f[i].rows, "row_groups_read", (long long)f[i].row_groups_read,
        "row_groups_pruned", (long long)f[i].row_groups_pruned, "pages", (long long)f[i].pages,
        "pages_pruned", (long long)f[i].pages_pruned, "index_rows_candidate",
        (long long)f[i].rows_candidate, "index_rows_eliminated", (long long)f[i].rows_eliminated,
        "rows_scanned", (long long)f[i].rows_scanned, "rows_matched", (long long)f[i].rows_matched,
        "rows_deleted", (long long)f[i].rows_deleted, "index_rejected", f[i].index_rejected);
    if (d == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, d);
  }
  return list;
}

static PyObject *hs_py_explain(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "filter", "snapshot_id", NULL};
  PyObject *uri, *sid_obj = Py_None, *filter_obj = Py_None;
  const char *filter = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:explain", kwlist, &uri, &filter_obj,
                                   &sid_obj))
    return NULL;
  if (filter_obj != Py_None && (filter = hs_py_text(filter_obj, "filter")) == NULL) return NULL;
  hs_scan_options o;
  hs_scan_options_init(&o);
  if (sid_obj != Py_None) {
    o.snapshot_id = PyLong_AsLongLong(sid_obj);
    if (o.snapshot_id == -1 && PyErr_Occurred()) return NULL;
  }
  char *f = NULL;
  if (filter != NULL && (f = hs_strdup(filter)) == NULL) return PyErr_NoMemory();
  o.filter = f;
  PyObject *path = NULL;
  hs_table *t = hs_py_ix_open(uri, &path);
  if (t == NULL) {
    hs_free(f);
    return NULL;
  }
  hs_table_explain_info ex;
  hs_scan_file_info *files = NULL;
  size_t n_files = 0;
  hs_error err = {0};
  hs_status st;
  PyThreadState *ts_ = PyEval_SaveThread();
  st = hs_table_explain_files(t, &o, &ex, &files, &n_files, &err);
  hs_table_free(t);
  PyEval_RestoreThread(ts_);
  hs_free(f);
  if (st != HS_OK) {
    hs_py_raise(st, &err, PyBytes_AS_STRING(path));
    Py_DECREF(path);
    return NULL;
  }
  Py_DECREF(path);
  PyObject *per_file = explain_files(files, n_files);
  hs_free(files);
  if (per_file == NULL) return NULL;
  return Py_BuildValue(
      "{s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:s,s:N}",
      "manifests_read", (long long)ex.scan.manifests_read, "files_planned",
      (long long)ex.scan.files_planned, "files_pruned", (long long)ex.scan.files_pruned,
      "files_read", (long long)ex.scan.files_read, "row_groups_read",
      (long long)ex.scan.row_groups_read, "row_groups_pruned", (long long)ex.scan.row_groups_pruned,
      "rows_scanned", (long long)ex.scan.rows_scanned, "rows_matched",
      (long long)ex.scan.rows_matched, "rows_returned", (long long)ex.scan.rows_returned,
      "delete_files", (long long)ex.scan.delete_files, "rows_deleted",
      (long long)ex.scan.rows_deleted, "page_row_groups_indexed",
      (long long)ex.pages.row_groups_indexed, "pages", (long long)ex.pages.pages, "pages_pruned",
      (long long)ex.pages.pages_pruned, "page_rows_pruned", (long long)ex.pages.rows_pruned,
      "files_indexed", (long long)ex.index.files_indexed, "index_rows_candidate",
      (long long)ex.index.rows_candidate, "index_rows_eliminated",
      (long long)ex.index.rows_eliminated, "files_index_rejected",
      (long long)ex.index.files_index_rejected, "index_rejected", ex.index.index_rejected, "files",
      per_file);
}

/* validate_indexes(uri, snapshot_id=None) -> (list of dict, int) */
static PyObject *hs_py_validate_indexes(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "snapshot_id", NULL};
  PyObject *uri, *sid_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:validate_indexes", kwlist, &uri, &sid_obj))
    return NULL;
  long long sid = -1;
  if (sid_obj != Py_None && (sid = PyLong_AsLongLong(sid_obj)) == -1 && PyErr_Occurred())
    return NULL;
  PyObject *path = NULL;
  hs_table *t = hs_py_ix_open(uri, &path);
  if (t == NULL) return NULL;
  hs_table_index_problem *v = NULL;
  size_t n = 0;
  int64_t checked = 0;
  hs_error err = {0};
  PyThreadState *ts_ = PyEval_SaveThread();
  hs_status st = hs_table_validate_indexes(t, (int64_t)sid, &v, &n, &checked, &err);
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
    PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:s}", "data_file", v[i].data_file, "index_file",
                                v[i].index_file, "column", v[i].column, "problem", v[i].message);
    if (d == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, d);
  }
  hs_table_index_problems_free(v, n);
  if (list == NULL) return NULL;
  return Py_BuildValue("(NL)", list, (long long)checked);
}

/* _index_rejections() -> (count, last reason) */
static PyObject *hs_py_index_rejections(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  char last[320];
  uint64_t n = hs_index_rejections(last, sizeof last);
  return Py_BuildValue("(Ks)", (unsigned long long)n, last);
}

static PyMethodDef hs_py_indexes_methods[] = {
    {"validate_indexes", (PyCFunction)(void (*)(void))hs_py_validate_indexes,
     METH_VARARGS | METH_KEYWORDS,
     "validate_indexes(uri, snapshot_id=None) -> (list of dict, int)\n\n"
     "Check every registered index of the snapshot's data files (checksums,\n"
     "binding to the data file, full format check): the problems found\n"
     "(data_file, index_file, column, problem) and how many indexes were checked."},
    {"_index_rejections", hs_py_index_rejections, METH_NOARGS,
     "_index_rejections() -> (int, str)\n\n"
     "Registered indexes readers of this process left unused because they did\n"
     "not match their data file, and the latest reason."},
    {"index_add", (PyCFunction)(void (*)(void))hs_py_index_add, METH_VARARGS | METH_KEYWORDS,
     "index_add(uri, column, kind, params=None) -> None\n\n"
     "Record an index of `kind` on `column` (params: JSON object text)."},
    {"index_add_many", (PyCFunction)(void (*)(void))hs_py_index_add_many,
     METH_VARARGS | METH_KEYWORDS,
     "index_add_many(uri, columns, kind, params=None) -> None\n\n"
     "index_add for each of `columns` (same kind and params) in one metadata commit."},
    {"index_drop", (PyCFunction)(void (*)(void))hs_py_index_drop, METH_VARARGS | METH_KEYWORDS,
     "index_drop(uri, column) -> None\n\nRemove the column's index configuration and use."},
    {"index_list", (PyCFunction)(void (*)(void))hs_py_index_list, METH_VARARGS | METH_KEYWORDS,
     "index_list(uri) -> list of dict\n\n"
     "Configured (and registry-only) indexes with files_indexed / files_total."},
    {"index_build", (PyCFunction)(void (*)(void))hs_py_index_build, METH_VARARGS | METH_KEYWORDS,
     "index_build(uri, columns=None, progress=None, threads=0, appended=None) -> int\n\n"
     "Build missing configured scalar indexes; returns index files written.\n"
     "progress(done, total) is called from worker threads; truthy cancels.\n"
     "appended: kept appends (TableHandle.append(keep=True)): only their files, built\n"
     "from the kept batches where the types fit (no progress calls then)."},
    {"explain", (PyCFunction)(void (*)(void))hs_py_explain, METH_VARARGS | METH_KEYWORDS,
     "explain(uri, filter=None, snapshot_id=None) -> dict\n\n"
     "Run the filtered scan and return its scan, page and index counters."},
    {NULL, NULL, 0, NULL}};

int hs_py_indexes_init(PyObject *module) {
  return PyModule_AddFunctions(module, hs_py_indexes_methods);
}

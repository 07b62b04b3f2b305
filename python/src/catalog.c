/*
 * catalog.c — Iceberg REST catalogs for the Python package (src/catalog/,
 * the "Catalogs" section of include/hyperstream.h): `_core.catalog_connect`,
 * `catalog_list_namespaces`, `catalog_list_tables`,
 * `catalog_create_namespace`, `catalog_drop_namespace`,
 * `catalog_drop_table`. Tables of a catalog are opened and created by
 * `_core.table_open` / `table_create` with "rest://...#ns.table" URIs
 * (python/hyperstreamdb/_catalog.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>

#include "core.h"

int hs_py_catalog_init(PyObject *module);

static PyObject *names_list(char **names, size_t n) {
  PyObject *out = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; out != NULL && i < n; i++) {
    PyObject *s = PyUnicode_FromString(names[i]);
    if (s == NULL) {
      Py_CLEAR(out);
      break;
    }
    PyList_SET_ITEM(out, (Py_ssize_t)i, s);
  }
  hs_catalog_names_free(names, n);
  return out;
}

static PyObject *hs_py_catalog_connect(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "options", NULL};
  PyObject *uri_obj = NULL, *opts = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!", kwlist, &uri_obj, &PyDict_Type, &opts))
    return NULL;
  const char *uri = hs_py_text(uri_obj, "uri");
  if (uri == NULL) return NULL;
  Py_ssize_t n = PyDict_Size(opts);
  hs_catalog_option *v = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof *v);
  if (v == NULL) return PyErr_NoMemory();
  PyObject *key, *value;
  Py_ssize_t pos = 0, i = 0;
  while (PyDict_Next(opts, &pos, &key, &value)) {
    const char *k = hs_py_text(key, "catalog option name");
    const char *val = k != NULL ? hs_py_text(value, k) : NULL;
    if (val == NULL) {
      PyMem_Free(v);
      return NULL;
    }
    v[i].key = k;
    v[i++].value = val;
  }
  hs_error err = {0};
  PyThreadState *ts = PyEval_SaveThread();
  hs_status st = hs_catalog_connect(uri, v, (size_t)i, &err);
  PyEval_RestoreThread(ts);
  PyMem_Free(v);
  if (st != HS_OK) return hs_py_raise(st, &err, uri);
  Py_RETURN_NONE;
}

static PyObject *hs_py_catalog_list(PyObject *args, PyObject *kwargs, bool tables) {
  static char *kwlist[] = {"uri", "namespace", NULL};
  const char *uri = NULL, *ns = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|z", kwlist, &uri, &ns)) return NULL;
  char **names = NULL;
  size_t n = 0;
  hs_error err = {0};
  PyThreadState *ts = PyEval_SaveThread();
  hs_status st = tables ? hs_catalog_list_tables(uri, ns, &names, &n, &err)
                        : hs_catalog_list_namespaces(uri, ns, &names, &n, &err);
  PyEval_RestoreThread(ts);
  if (st != HS_OK) return hs_py_raise(st, &err, uri);
  return names_list(names, n);
}

static PyObject *hs_py_catalog_list_namespaces(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  return hs_py_catalog_list(args, kwargs, false);
}

static PyObject *hs_py_catalog_list_tables(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  return hs_py_catalog_list(args, kwargs, true);
}

/* kind 0: create namespace, 1: drop namespace, 2: drop table, 3: purge table */
static PyObject *hs_py_catalog_change(PyObject *args, int kind) {
  const char *uri = NULL, *name = NULL;
  if (!PyArg_ParseTuple(args, "ss", &uri, &name)) return NULL;
  hs_error err = {0};
  PyThreadState *ts = PyEval_SaveThread();
  hs_status st = kind == 0   ? hs_catalog_create_namespace(uri, name, &err)
                 : kind == 1 ? hs_catalog_drop_namespace(uri, name, &err)
                             : hs_catalog_drop_table(uri, name, kind == 3, &err);
  PyEval_RestoreThread(ts);
  if (st != HS_OK) return hs_py_raise(st, &err, uri);
  Py_RETURN_NONE;
}

static PyObject *hs_py_catalog_create_namespace(PyObject *self, PyObject *args) {
  (void)self;
  return hs_py_catalog_change(args, 0);
}
static PyObject *hs_py_catalog_drop_namespace(PyObject *self, PyObject *args) {
  (void)self;
  return hs_py_catalog_change(args, 1);
}
static PyObject *hs_py_catalog_drop_table(PyObject *self, PyObject *args) {
  (void)self;
  return hs_py_catalog_change(args, 2);
}
static PyObject *hs_py_catalog_purge_table(PyObject *self, PyObject *args) {
  (void)self;
  return hs_py_catalog_change(args, 3);
}

static PyMethodDef hs_py_catalog_methods[] = {
    {"catalog_connect", (PyCFunction)(void (*)(void))hs_py_catalog_connect,
     METH_VARARGS | METH_KEYWORDS,
     "catalog_connect(uri, options) -> None\n\n"
     "Connect the REST catalog at `uri` ('rest://host:port'): options warehouse, token,\n"
     "credential ('id:secret'), scope, prefix, oauth2-server-uri, timeout_ms."},
    {"catalog_list_namespaces", (PyCFunction)(void (*)(void))hs_py_catalog_list_namespaces,
     METH_VARARGS | METH_KEYWORDS, "catalog_list_namespaces(uri, namespace=None) -> list[str]"},
    {"catalog_list_tables", (PyCFunction)(void (*)(void))hs_py_catalog_list_tables,
     METH_VARARGS | METH_KEYWORDS, "catalog_list_tables(uri, namespace) -> list[str]"},
    {"catalog_create_namespace", hs_py_catalog_create_namespace, METH_VARARGS,
     "catalog_create_namespace(uri, namespace) -> None"},
    {"catalog_drop_namespace", hs_py_catalog_drop_namespace, METH_VARARGS,
     "catalog_drop_namespace(uri, namespace) -> None"},
    {"catalog_drop_table", hs_py_catalog_drop_table, METH_VARARGS,
     "catalog_drop_table(uri, 'ns.table') -> None"},
    {"catalog_purge_table", hs_py_catalog_purge_table, METH_VARARGS,
     "catalog_purge_table(uri, 'ns.table') -> None (drop, asking the catalog to delete files)"},
    {NULL, NULL, 0, NULL}};

int hs_py_catalog_init(PyObject *module) {
  return PyModule_AddFunctions(module, hs_py_catalog_methods);
}

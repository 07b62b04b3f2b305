/*
 * store.c — object-store options for the Python package:
 * `_core.store_configure(prefix, options)` over hs_store_configure and
 * `_core.store_get(uri)` over hs_store_get, `_core.io_stats(reset)` over
 * hs_io_stats_get/reset
 * (src/io/store.h). hdb.Table(uri, storage_options={...}) registers its
 * options for the table's URI; every later call on a location below that
 * prefix uses them (the longest registered prefix wins, then the AWS
 * environment).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "io/store.h"
#include "table/table.h"
#include "core.h"

int hs_py_store_init(PyObject *module);

/* The text of an option value: str as is, bool as "true"/"false", int as
 * its digits; anything else is InvalidArgumentError naming the key. New
 * reference to a str, or NULL with an exception. */
static PyObject *option_text(const char *key, PyObject *v) {
  if (PyUnicode_Check(v)) {
    Py_INCREF(v);
    return v;
  }
  if (PyBool_Check(v)) return PyUnicode_FromString(v == Py_True ? "true" : "false");
  if (PyLong_Check(v)) return PyObject_Str(v);
  return hs_py_raise_msg(hs_py_invalid_error,
                         "storage option '%s': a str, bool or int value is needed, not %s", key,
                         Py_TYPE(v)->tp_name);
}

static PyObject *hs_py_store_configure(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"prefix", "options", NULL};
  PyObject *prefix_obj = NULL, *opts = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!", kwlist, &prefix_obj, &PyDict_Type, &opts))
    return NULL;
  const char *prefix = hs_py_text(prefix_obj, "prefix");
  if (prefix == NULL) return NULL;
  Py_ssize_t n = PyDict_Size(opts);
  hs_store_option *v = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof *v);
  PyObject *texts = PyList_New(0); /* keeps the value strings alive */
  if (v == NULL || texts == NULL) {
    PyMem_Free(v);
    Py_XDECREF(texts);
    return PyErr_NoMemory();
  }
  PyObject *key, *value;
  Py_ssize_t pos = 0, i = 0;
  PyObject *result = NULL;
  while (PyDict_Next(opts, &pos, &key, &value)) {
    const char *k = hs_py_text(key, "storage option name");
    if (k == NULL) goto done;
    PyObject *t = option_text(k, value);
    if (t == NULL || PyList_Append(texts, t) != 0) {
      Py_XDECREF(t);
      goto done;
    }
    Py_DECREF(t);
    const char *val = hs_py_text(t, k);
    if (val == NULL) goto done;
    v[i].key = k;
    v[i++].value = val;
  }
  hs_error err = {0};
  hs_status st = hs_store_configure(prefix, v, (size_t)i, &err);
  if (st != HS_OK) {
    hs_py_raise(st, &err, prefix);
    goto done;
  }
  result = Py_None;
  Py_INCREF(result);
done:
  PyMem_Free(v);
  Py_DECREF(texts);
  return result;
}

/* The bytes of one object, at most 256 MiB (metadata files, for the
 * Python side's readers of table metadata). */
static PyObject *hs_py_store_get(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", NULL};
  PyObject *uri_obj = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", kwlist, &uri_obj)) return NULL;
  const char *uri = hs_py_text(uri_obj, "uri");
  if (uri == NULL) return NULL;
  hs_buf buf;
  hs_buf_init(&buf);
  hs_error err = {0};
  hs_status st;
  PyThreadState *ts = PyEval_SaveThread();
  st = hs_store_get(uri, (size_t)256 << 20, &buf, NULL, &err);
  PyEval_RestoreThread(ts);
  if (st != HS_OK) {
    hs_buf_free(&buf);
    return hs_py_raise(st, &err, uri);
  }
  PyObject *out = PyBytes_FromStringAndSize((const char *)buf.data, (Py_ssize_t)buf.len);
  hs_buf_free(&buf);
  return out;
}

static PyObject *hs_py_io_stats(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"reset", NULL};
  int reset = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p", kwlist, &reset)) return NULL;
  hs_io_stats s;
  hs_io_stats_get(&s);
  if (reset) hs_io_stats_reset();
  hs_table_stream_stats ss;
  hs_table_stream_stats_get(&ss, reset != 0);
  PyObject *d = Py_BuildValue(
      "{sKsKsKsKsKsKsKsKsKsKsK}", "requests", (unsigned long long)s.requests, "round_trips",
      (unsigned long long)s.round_trips, "gets", (unsigned long long)s.gets, "heads",
      (unsigned long long)s.heads, "puts", (unsigned long long)s.puts, "posts",
      (unsigned long long)s.posts, "deletes", (unsigned long long)s.deletes, "lists",
      (unsigned long long)s.lists, "retries", (unsigned long long)s.retries, "bytes_read",
      (unsigned long long)s.bytes_read, "bytes_written", (unsigned long long)s.bytes_written);
  /* The index streams (src/table/stream.c) this process loaded, found
   * missing, or refused (stale or damaged: the last reason). */
  PyObject *streams =
      d == NULL ? NULL
                : Py_BuildValue("{sLsLsLsLsLss}", "loaded", (long long)ss.loaded, "missing",
                                (long long)ss.missing, "refused", (long long)ss.refused, "segments",
                                (long long)ss.segments, "bytes", (long long)ss.bytes,
                                "last_refusal", ss.last_refusal);
  if (streams == NULL || PyDict_SetItemString(d, "index_streams", streams) != 0) {
    Py_XDECREF(streams);
    Py_XDECREF(d);
    return NULL;
  }
  Py_DECREF(streams);
  return d;
}

static PyMethodDef hs_py_store_methods[] = {
    {"io_stats", (PyCFunction)(void (*)(void))hs_py_io_stats, METH_VARARGS | METH_KEYWORDS,
     "io_stats(reset=False) -> dict\n\n"
     "Object-store requests of this process so far (hs_io_stats): requests,\n"
     "round_trips, gets, heads, puts, posts, deletes, lists, retries, bytes_read,\n"
     "bytes_written, and index_streams (a dict: loaded, missing, refused, segments,\n"
     "bytes, last_refusal: the tables' index streams read); reset=True zeroes them\n"
     "after reading."},
    {"store_get", (PyCFunction)(void (*)(void))hs_py_store_get, METH_VARARGS | METH_KEYWORDS,
     "store_get(uri) -> bytes\n\nThe whole object at `uri` (a local path or s3:// URI)."},
    {"store_configure", (PyCFunction)(void (*)(void))hs_py_store_configure,
     METH_VARARGS | METH_KEYWORDS,
     "store_configure(prefix, options) -> None\n\n"
     "Register object-store options (a dict: aws_access_key_id / s3.access-key-id,\n"
     "aws_secret_access_key / s3.secret-access-key, region / s3.region, endpoint /\n"
     "s3.endpoint, allow_http, ... as src/io/store.h lists) for every location\n"
     "starting with `prefix` (e.g. 's3://bucket/t'), replacing what that prefix had."},
    {NULL, NULL, 0, NULL}};

int hs_py_store_init(PyObject *module) {
  return PyModule_AddFunctions(module, hs_py_store_methods);
}

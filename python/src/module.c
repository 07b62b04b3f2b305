/*
 * module.c — the module object of hyperstreamdb._core: its exception
 * hierarchy, the mapping from hs_status to those exceptions, `inspect`, and
 * the method table. Reading lives in read.c, writing in write.c.
 *
 * Exception design: every error raised by the C core derives from
 * HyperStreamError, and where Python has a natural built-in class it also
 * derives from that (NotFoundError is a FileNotFoundError, HSIOError an
 * OSError, InvalidArgumentError a ValueError), so callers can catch either.
 */
#include "core.h"

#include <stdarg.h>
#include <string.h>

PyObject *hs_py_error;
PyObject *hs_py_corrupt_error;
PyObject *hs_py_unsupported_error;
PyObject *hs_py_schema_error;
PyObject *hs_py_not_found_error;
PyObject *hs_py_io_error;
PyObject *hs_py_invalid_error;
PyObject *hs_py_memory_error;
PyObject *hs_py_internal_error;
PyObject *hs_py_conflict_error;

static PyObject *hs_py_exception_for(hs_status status) {
  switch (status) {
  case HS_ERR_INVALID_ARG: return hs_py_invalid_error;
  case HS_ERR_IO: return hs_py_io_error;
  case HS_ERR_CORRUPT: return hs_py_corrupt_error;
  case HS_ERR_UNSUPPORTED: return hs_py_unsupported_error;
  case HS_ERR_NOMEM: return hs_py_memory_error;
  case HS_ERR_SCHEMA: return hs_py_schema_error;
  case HS_ERR_NOT_FOUND: return hs_py_not_found_error;
  case HS_ERR_INTERNAL: return hs_py_internal_error;
  case HS_ERR_CONFLICT: return hs_py_conflict_error;
  case HS_OK: break;
  }
  return hs_py_error;
}

/* Instantiate `type(message)`, attach `.status`, and raise it. */
static void hs_py_raise_instance(PyObject *type, const char *message, hs_status status) {
  PyObject *msg = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace");
  if (msg == NULL) return;
  PyObject *exc = PyObject_CallFunctionObjArgs(type, msg, NULL);
  Py_DECREF(msg);
  if (exc == NULL) return;
  PyObject *st = PyUnicode_FromString(hs_status_str(status));
  if (st != NULL) {
    /* Best effort: the message matters more than the attribute. */
    if (PyObject_SetAttrString(exc, "status", st) < 0) PyErr_Clear();
    Py_DECREF(st);
  } else {
    PyErr_Clear();
  }
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
}

PyObject *hs_py_raise(hs_status status, const hs_error *err, const char *path) {
  const char *detail = (err != NULL && err->message[0] != '\0') ? err->message : NULL;
  char buf[HS_ERROR_MESSAGE_MAX + 512];
  if (detail == NULL) detail = hs_status_str(status);
  size_t plen = path != NULL ? strlen(path) : 0;
  if (plen > 400 && strstr(detail, path) == NULL) { /* keep the reason: abbreviate the path */
    snprintf(buf, sizeof buf, "%.200s...%s: %s", path, path + plen - 80, detail);
  } else if (path != NULL && strstr(detail, path) == NULL) {
    snprintf(buf, sizeof buf, "%s: %s", path, detail);
  } else {
    snprintf(buf, sizeof buf, "%s", detail);
  }
  hs_py_raise_instance(hs_py_exception_for(status), buf, status);
  return NULL;
}

PyObject *hs_py_raise_msg(PyObject *type, const char *fmt, ...) {
  char buf[HS_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  hs_status status = HS_ERR_INTERNAL;
  if (type == hs_py_invalid_error) status = HS_ERR_INVALID_ARG;
  if (type == hs_py_schema_error) status = HS_ERR_SCHEMA;
  hs_py_raise_instance(type, buf, status);
  return NULL;
}

const char *hs_py_text(PyObject *obj, const char *what) {
  if (!PyUnicode_Check(obj)) {
    hs_py_raise_msg(hs_py_invalid_error, "%s must be a str, not %.80s", what,
                    Py_TYPE(obj)->tp_name);
    return NULL;
  }
  Py_ssize_t len = 0;
  const char *s = PyUnicode_AsUTF8AndSize(obj, &len);
  if (s == NULL) return NULL;
  const char *nul = memchr(s, '\0', (size_t)len);
  if (nul != NULL) {
    /* The offset in characters, as Python indexes the str. */
    PyObject *head = PyUnicode_DecodeUTF8(s, nul - s, "strict");
    Py_ssize_t at = head != NULL ? PyUnicode_GET_LENGTH(head) : (Py_ssize_t)(nul - s);
    Py_XDECREF(head);
    PyErr_Clear();
    hs_py_raise_msg(hs_py_invalid_error, "%s: NUL character at offset %zd (text without NULs)",
                    what, at);
    return NULL;
  }
  return s;
}

PyObject *hs_py_path(PyObject *obj) {
  PyObject *out = NULL;
  if (!PyUnicode_FSConverter(obj, &out)) return NULL;
  if (PyBytes_GET_SIZE(out) == 0) {
    Py_DECREF(out);
    return hs_py_raise_msg(hs_py_invalid_error, "path must not be empty");
  }
  return out;
}

/* ------------------------------------------------------------- inspect */

static PyObject *hs_py_inspect(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"path", "json", NULL};
  PyObject *path_obj = NULL;
  int json = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p:inspect", kwlist, &path_obj, &json)) {
    return NULL;
  }
  PyObject *path = hs_py_path(path_obj);
  if (path == NULL) return NULL;
  const char *p = PyBytes_AS_STRING(path);
  char *text = NULL;
  hs_error err = {0};
  hs_status st;
  PyThreadState *ts = PyEval_SaveThread();
  st = hs_parquet_inspect(p, json, &text, &err);
  PyEval_RestoreThread(ts);
  if (st != HS_OK) {
    hs_py_raise(st, &err, p);
    Py_DECREF(path);
    hs_free(text);
    return NULL;
  }
  Py_DECREF(path);
  PyObject *out = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
  hs_free(text);
  return out;
}

/* -------------------------------------------------------------- module */

/* table.c (Iceberg tables): registers its functions and types. */
int hs_py_table_init(PyObject *module);
/* vector.c (distance kernels): registers its functions. */
int hs_py_vector_init(PyObject *module);
/* vsearch.c (vector search over tables): registers its functions. */
int hs_py_vsearch_init(PyObject *module);
/* indexes.c (scalar index configuration, builds, explain): registers its functions. */
int hs_py_indexes_init(PyObject *module);
/* maintenance.c (remove_orphan_files): registers its functions. */
int hs_py_maintenance_init(PyObject *module);
/* schema.c (schema evolution): registers its functions. */
int hs_py_schema_init(PyObject *module);
/* compact.c (compaction): registers its functions. */
int hs_py_compact_init(PyObject *module);
/* stats.c (column statistics): registers its functions. */
int hs_py_stats_init(PyObject *module);
int hs_py_sql_init(PyObject *module);
/* store.c (object-store options): registers store_configure. */
int hs_py_store_init(PyObject *module);
/* catalog.c: Iceberg REST catalogs */
int hs_py_catalog_init(PyObject *module);

/* vindex.c (the raw per-data-file vector index): registers _VectorIndex. */
int hs_py_vindex_init(PyObject *module);

static PyMethodDef hs_py_methods[] = {
    {"read_parquet", (PyCFunction)(void (*)(void))hs_py_read_parquet, METH_VARARGS | METH_KEYWORDS,
     "read_parquet(path, columns=None, rows=None, batch_rows=0, filters=None) -> ParquetStream\n\n"
     "Open a Parquet file and return a one-shot stream of record batches that\n"
     "implements __arrow_c_stream__. `filters` is a list of (column, op, value)\n"
     "tuples used to skip row groups by statistics (rows are not re-checked)."},
    {"parquet_schema", (PyCFunction)(void (*)(void))hs_py_parquet_schema,
     METH_VARARGS | METH_KEYWORDS,
     "parquet_schema(path) -> ArrowSchemaHolder\n\n"
     "The file's schema as an object implementing __arrow_c_schema__."},
    {"parquet_metadata", (PyCFunction)(void (*)(void))hs_py_parquet_metadata,
     METH_VARARGS | METH_KEYWORDS,
     "parquet_metadata(path) -> dict\n\nnum_rows and num_row_groups of a Parquet file."},
    {"write_parquet", (PyCFunction)(void (*)(void))hs_py_write_parquet,
     METH_VARARGS | METH_KEYWORDS,
     "write_parquet(path, data, **options) -> None\n\n"
     "Write every batch of `data` (any object with __arrow_c_stream__) to `path`."},
    {"_parquet_pages_gathered", hs_py_parquet_pages_gathered, METH_NOARGS,
     "_parquet_pages_gathered() -> int\n\n"
     "Data pages read by row gather (selected rows only, in place) in this\n"
     "process so far; for tests and benchmarks."},
    {"inspect", (PyCFunction)(void (*)(void))hs_py_inspect, METH_VARARGS | METH_KEYWORDS,
     "inspect(path, json=False) -> str\n\n"
     "Describe a Parquet file: schema, row groups, column chunks, encodings,\n"
     "codecs, sizes and statistics, as text or as JSON."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef hs_py_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_core",
    .m_doc = "C core of hyperstreamdb: Parquet reading and writing over Arrow C streams.",
    .m_size = -1,
    .m_methods = hs_py_methods,
};

/* Create `name` deriving from `bases` and add it to the module. */
static PyObject *hs_py_add_exception(PyObject *module, const char *name, PyObject *bases,
                                     const char *doc) {
  char qualified[128];
  snprintf(qualified, sizeof qualified, "hyperstreamdb.%s", name);
  PyObject *type = PyErr_NewExceptionWithDoc(qualified, doc, bases, NULL);
  if (type == NULL) return NULL;
  Py_INCREF(type);
  if (PyModule_AddObject(module, name, type) < 0) {
    Py_DECREF(type);
    Py_DECREF(type);
    return NULL;
  }
  return type; /* one reference kept by the static pointer for the process */
}

static PyObject *hs_py_add_exception2(PyObject *module, const char *name, PyObject *builtin,
                                      const char *doc) {
  PyObject *bases = PyTuple_Pack(2, hs_py_error, builtin);
  if (bases == NULL) return NULL;
  PyObject *type = hs_py_add_exception(module, name, bases, doc);
  Py_DECREF(bases);
  return type;
}

PyMODINIT_FUNC PyInit__core(void) {
  PyObject *m = PyModule_Create(&hs_py_module);
  if (m == NULL) return NULL;
  hs_py_error = hs_py_add_exception(m, "HyperStreamError", PyExc_Exception,
                                    "Base class of every error raised by HyperStreamDB.");
  if (hs_py_error == NULL) goto fail;
  if (!(hs_py_corrupt_error = hs_py_add_exception(m, "CorruptFileError", hs_py_error,
                                                  "The bytes of a file violate its format.")))
    goto fail;
  if (!(hs_py_unsupported_error = hs_py_add_exception(
            m, "UnsupportedError", hs_py_error, "Valid input using a feature not implemented.")))
    goto fail;
  if (!(hs_py_schema_error = hs_py_add_exception(m, "SchemaError", hs_py_error,
                                                 "Data does not fit the expected schema.")))
    goto fail;
  if (!(hs_py_internal_error = hs_py_add_exception(m, "InternalError", hs_py_error,
                                                   "An invariant did not hold: a bug.")))
    goto fail;
  if (!(hs_py_conflict_error = hs_py_add_exception(
            m, "CommitConflictError", hs_py_error,
            "A concurrent commit changed what this commit changes (the files it removes, "
            "or the data files its deletes reference); nothing was committed.")))
    goto fail;
  if (!(hs_py_not_found_error = hs_py_add_exception2(m, "NotFoundError", PyExc_FileNotFoundError,
                                                     "A named file or column does not exist.")))
    goto fail;
  if (!(hs_py_io_error = hs_py_add_exception2(m, "HSIOError", PyExc_OSError,
                                              "The operating system refused a read or write.")))
    goto fail;
  if (!(hs_py_invalid_error = hs_py_add_exception2(m, "InvalidArgumentError", PyExc_ValueError,
                                                   "An argument is unusable.")))
    goto fail;
  if (!(hs_py_memory_error =
            hs_py_add_exception2(m, "ResourceError", PyExc_MemoryError,
                                 "Allocation failed or a size limit was exceeded.")))
    goto fail;
  if (PyModule_AddStringConstant(m, "__version__", HS_VERSION_STRING) < 0) goto fail;
  if (hs_py_read_init(m) < 0) goto fail;
  if (hs_py_table_init(m) < 0) goto fail;
  if (hs_py_vector_init(m) < 0) goto fail;
  if (hs_py_vsearch_init(m) < 0) goto fail;
  if (hs_py_vindex_init(m) < 0) goto fail;
  if (hs_py_indexes_init(m) < 0) goto fail;
  if (hs_py_maintenance_init(m) < 0) goto fail;
  if (hs_py_schema_init(m) < 0) goto fail;
  if (hs_py_compact_init(m) < 0) goto fail;
  if (hs_py_stats_init(m) < 0) goto fail;
  if (hs_py_sql_init(m) < 0) goto fail;
  if (hs_py_store_init(m) < 0) goto fail;
  if (hs_py_catalog_init(m) < 0) goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}

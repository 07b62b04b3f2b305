/*
 * write.c — writing Parquet from Python: `write_parquet(path, data, **opts)`
 * takes any object implementing the Arrow PyCapsule Interface
 * (`__arrow_c_stream__`), moves the ArrowArrayStream out of its capsule and
 * hands it to hs_parquet_write_stream with the GIL released.
 *
 * Options are validated here, before any file is created, with messages
 * that list the accepted values. Every string handed to C is copied, so no
 * Python object has to stay alive while the GIL is released.
 */
#include "core.h"

#include <string.h>
#include <strings.h>

#include "common/common.h"

/* Copies of option strings, freed together. */
typedef struct hs_py_write_opts {
  hs_parquet_write_options o;
  char **enc_cols;
  hs_encoding *encs;
  size_t n_enc;
  char **kv_keys;
  char **kv_values;
  size_t n_kv;
  char *created_by;
} hs_py_write_opts;

static void hs_py_write_opts_free(hs_py_write_opts *w) {
  for (size_t i = 0; i < w->n_enc; i++) hs_free(w->enc_cols[i]);
  hs_free(w->enc_cols);
  hs_free(w->encs);
  for (size_t i = 0; i < w->n_kv; i++) {
    hs_free(w->kv_keys[i]);
    hs_free(w->kv_values[i]);
  }
  hs_free(w->kv_keys);
  hs_free(w->kv_values);
  hs_free(w->created_by);
}

static const struct {
  const char *name;
  hs_codec codec;
} hs_py_codecs[] = {{"zstd", HS_CODEC_ZSTD},         {"snappy", HS_CODEC_SNAPPY},
                    {"gzip", HS_CODEC_GZIP},         {"brotli", HS_CODEC_BROTLI},
                    {"lz4", HS_CODEC_LZ4_RAW},       {"lz4_raw", HS_CODEC_LZ4_RAW},
                    {"none", HS_CODEC_UNCOMPRESSED}, {"uncompressed", HS_CODEC_UNCOMPRESSED}};

static const struct {
  const char *name;
  hs_encoding enc;
} hs_py_encodings[] = {{"PLAIN", HS_ENCODING_PLAIN},
                       {"DELTA_BINARY_PACKED", HS_ENCODING_DELTA_BINARY_PACKED},
                       {"DELTA_LENGTH_BYTE_ARRAY", HS_ENCODING_DELTA_LENGTH_BYTE_ARRAY},
                       {"DELTA_BYTE_ARRAY", HS_ENCODING_DELTA_BYTE_ARRAY},
                       {"BYTE_STREAM_SPLIT", HS_ENCODING_BYTE_STREAM_SPLIT},
                       {"RLE_DICTIONARY", HS_ENCODING_RLE_DICTIONARY},
                       {"DICTIONARY", HS_ENCODING_RLE_DICTIONARY}};

static int hs_py_parse_codec(PyObject *obj, hs_codec *out) {
  if (obj == Py_None) {
    *out = HS_CODEC_UNCOMPRESSED;
    return 0;
  }
  const char *s = PyUnicode_Check(obj) ? hs_py_text(obj, "compression") : NULL;
  if (s != NULL) {
    for (size_t i = 0; i < sizeof hs_py_codecs / sizeof hs_py_codecs[0]; i++) {
      if (strcasecmp(s, hs_py_codecs[i].name) == 0) {
        *out = hs_py_codecs[i].codec;
        return 0;
      }
    }
  }
  if (PyErr_Occurred()) return -1;
  PyObject *r = PyObject_Repr(obj);
  hs_py_raise_msg(hs_py_invalid_error,
                  "compression must be one of 'zstd', 'snappy', 'gzip', 'brotli', 'lz4' "
                  "(lz4_raw), 'none' or None, got %s",
                  r != NULL ? PyUnicode_AsUTF8(r) : "?");
  Py_XDECREF(r);
  return -1;
}

static int hs_py_parse_page_version(PyObject *obj, int *out) {
  const char *s = PyUnicode_Check(obj) ? hs_py_text(obj, "data_page_version") : NULL;
  if (s != NULL && (strcmp(s, "1.0") == 0 || strcmp(s, "1") == 0))
    *out = 1;
  else if (s != NULL && (strcmp(s, "2.0") == 0 || strcmp(s, "2") == 0))
    *out = 2;
  else if (PyLong_Check(obj) && PyLong_AsLong(obj) == 1)
    *out = 1;
  else if (PyLong_Check(obj) && PyLong_AsLong(obj) == 2)
    *out = 2;
  else {
    PyErr_Clear();
    PyObject *r = PyObject_Repr(obj);
    hs_py_raise_msg(hs_py_invalid_error, "data_page_version must be '1.0' or '2.0', got %s",
                    r != NULL ? PyUnicode_AsUTF8(r) : "?");
    Py_XDECREF(r);
    return -1;
  }
  return 0;
}

/* Copy a str or bytes into a new NUL-terminated string; `what` names it in
 * errors. Embedded NULs are refused because the C API takes C strings. */
static char *hs_py_copy_str(PyObject *obj, const char *what) {
  const char *s;
  Py_ssize_t len;
  if (PyUnicode_Check(obj)) {
    s = PyUnicode_AsUTF8AndSize(obj, &len);
    if (s == NULL) return NULL;
  } else if (PyBytes_Check(obj)) {
    s = PyBytes_AS_STRING(obj);
    len = PyBytes_GET_SIZE(obj);
  } else {
    hs_py_raise_msg(hs_py_invalid_error, "%s must be str or bytes, not %s", what,
                    Py_TYPE(obj)->tp_name);
    return NULL;
  }
  if (memchr(s, '\0', (size_t)len) != NULL) {
    hs_py_raise_msg(hs_py_invalid_error, "%s must not contain NUL characters", what);
    return NULL;
  }
  char *copy = hs_strndup(s, (size_t)len);
  if (copy == NULL) PyErr_NoMemory();
  return copy;
}

static int hs_py_parse_encodings(PyObject *obj, hs_py_write_opts *w) {
  if (obj == Py_None) return 0;
  if (!PyDict_Check(obj)) {
    hs_py_raise_msg(hs_py_invalid_error,
                    "column_encoding must be a dict of column name -> encoding name, not %s",
                    Py_TYPE(obj)->tp_name);
    return -1;
  }
  size_t n = (size_t)PyDict_Size(obj);
  w->enc_cols = hs_calloc(n + 1, sizeof(char *));
  w->encs = hs_calloc(n + 1, sizeof(hs_encoding));
  if (w->enc_cols == NULL || w->encs == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(obj, &pos, &k, &v)) {
    char *col = hs_py_copy_str(k, "column_encoding key");
    if (col == NULL) return -1;
    w->enc_cols[w->n_enc++] = col;
    const char *name = PyUnicode_Check(v) ? hs_py_text(v, "column_encoding value") : NULL;
    size_t i = 0, n_known = sizeof hs_py_encodings / sizeof hs_py_encodings[0];
    for (; name != NULL && i < n_known; i++) {
      if (strcasecmp(name, hs_py_encodings[i].name) == 0) break;
    }
    if (name == NULL || i == n_known) {
      if (PyErr_Occurred()) return -1;
      hs_py_raise_msg(hs_py_invalid_error,
                      "column_encoding['%s'] must be one of PLAIN, DELTA_BINARY_PACKED, "
                      "DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT, "
                      "RLE_DICTIONARY",
                      col);
      return -1;
    }
    w->encs[w->n_enc - 1] = hs_py_encodings[i].enc;
  }
  return 0;
}

static int hs_py_parse_metadata(PyObject *obj, hs_py_write_opts *w) {
  if (obj == Py_None) return 0;
  if (!PyDict_Check(obj)) {
    hs_py_raise_msg(hs_py_invalid_error, "metadata must be a dict of str -> str, not %s",
                    Py_TYPE(obj)->tp_name);
    return -1;
  }
  size_t n = (size_t)PyDict_Size(obj);
  w->kv_keys = hs_calloc(n + 1, sizeof(char *));
  w->kv_values = hs_calloc(n + 1, sizeof(char *));
  if (w->kv_keys == NULL || w->kv_values == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(obj, &pos, &k, &v)) {
    char *key = hs_py_copy_str(k, "metadata key");
    if (key == NULL) return -1;
    char *value = hs_py_copy_str(v, "metadata value");
    if (value == NULL) {
      hs_free(key);
      return -1;
    }
    w->kv_keys[w->n_kv] = key;
    w->kv_values[w->n_kv] = value;
    w->n_kv++;
  }
  return 0;
}

static int hs_py_check_positive(long long v, const char *what) {
  if (v > 0) return 0;
  hs_py_raise_msg(hs_py_invalid_error, "%s must be a positive integer, got %lld", what, v);
  return -1;
}

/* Take the ArrowArrayStream out of `data.__arrow_c_stream__()` into *out. */
static int hs_py_take_stream(PyObject *data, struct ArrowArrayStream *out) {
  PyObject *method = PyObject_GetAttrString(data, "__arrow_c_stream__");
  if (method == NULL) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "data must implement the Arrow PyCapsule Interface (__arrow_c_stream__), e.g. a "
                 "pyarrow.Table or RecordBatchReader or a polars.DataFrame; got %s",
                 Py_TYPE(data)->tp_name);
    return -1;
  }
  PyObject *capsule = PyObject_CallNoArgs(method);
  Py_DECREF(method);
  if (capsule == NULL) return -1;
  if (!PyCapsule_IsValid(capsule, "arrow_array_stream")) {
    Py_DECREF(capsule);
    PyErr_SetString(PyExc_TypeError,
                    "__arrow_c_stream__() did not return a PyCapsule named 'arrow_array_stream'");
    return -1;
  }
  struct ArrowArrayStream *s = PyCapsule_GetPointer(capsule, "arrow_array_stream");
  if (s == NULL || s->release == NULL) {
    Py_DECREF(capsule);
    if (!PyErr_Occurred()) {
      hs_py_raise_msg(hs_py_invalid_error, "the Arrow stream capsule was already consumed");
    }
    return -1;
  }
  *out = *s; /* move: the capsule's destructor now sees a released stream */
  s->release = NULL;
  Py_DECREF(capsule);
  return 0;
}

PyObject *hs_py_write_parquet(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"path",
                           "data",
                           "compression",
                           "compression_level",
                           "row_group_size",
                           "data_page_size",
                           "data_page_version",
                           "use_dictionary",
                           "dictionary_pagesize_limit",
                           "column_encoding",
                           "write_statistics",
                           "write_page_index",
                           "write_page_checksum",
                           "metadata",
                           "created_by",
                           "delta_fallback",
                           "compress_min_saving_pct",
                           NULL};
  PyObject *path_obj, *data, *compression = NULL, *level = Py_None, *page_version = NULL;
  PyObject *column_encoding = Py_None, *metadata = Py_None, *created_by = Py_None;
  long long row_group_size = 1048576, data_page_size = 1 << 20, dict_limit = 1 << 20;
  int use_dictionary = 1, write_statistics = 1, write_page_index = 1, write_crc = 0;
  int delta_fallback = 0, min_saving = 0;
  if (!PyArg_ParseTupleAndKeywords(
          args, kwargs, "OO|$OOLLOpLOpppOOpi:write_parquet", kwlist, &path_obj, &data, &compression,
          &level, &row_group_size, &data_page_size, &page_version, &use_dictionary, &dict_limit,
          &column_encoding, &write_statistics, &write_page_index, &write_crc, &metadata,
          &created_by, &delta_fallback, &min_saving)) {
    return NULL;
  }
  hs_py_write_opts w;
  memset(&w, 0, sizeof w);
  hs_parquet_write_options_init(&w.o);
  PyObject *path = NULL;
  if (compression != NULL && hs_py_parse_codec(compression, &w.o.compression) < 0) goto fail;
  if (level != Py_None) {
    long v = PyLong_AsLong(level);
    if (v == -1 && PyErr_Occurred()) goto fail;
    if (v < -131072 || v > 22) {
      hs_py_raise_msg(hs_py_invalid_error, "compression_level %ld is out of range", v);
      goto fail;
    }
    w.o.compression_level = (int)v;
  }
  if (hs_py_check_positive(row_group_size, "row_group_size") < 0 ||
      hs_py_check_positive(data_page_size, "data_page_size") < 0 ||
      hs_py_check_positive(dict_limit, "dictionary_pagesize_limit") < 0) {
    goto fail;
  }
  w.o.row_group_rows_max = (int64_t)row_group_size;
  w.o.page_bytes_max = (int64_t)data_page_size;
  w.o.dictionary_bytes_max = (int64_t)dict_limit;
  if (page_version != NULL && hs_py_parse_page_version(page_version, &w.o.data_page_version) < 0)
    goto fail;
  w.o.use_dictionary = use_dictionary;
  w.o.write_statistics = write_statistics;
  w.o.write_page_index = write_page_index;
  w.o.write_page_crc = write_crc;
  w.o.delta_fallback = delta_fallback;
  if (min_saving < 0 || min_saving > 100) {
    hs_py_raise_msg(hs_py_invalid_error, "compress_min_saving_pct must be in 0..100, got %d",
                    min_saving);
    goto fail;
  }
  w.o.compress_min_saving_pct = min_saving;
  if (hs_py_parse_encodings(column_encoding, &w) < 0) goto fail;
  w.o.encoding_columns = (const char *const *)w.enc_cols;
  w.o.encodings = w.encs;
  w.o.n_encodings = w.n_enc;
  if (hs_py_parse_metadata(metadata, &w) < 0) goto fail;
  w.o.kv_keys = (const char *const *)w.kv_keys;
  w.o.kv_values = (const char *const *)w.kv_values;
  w.o.n_kv = w.n_kv;
  if (created_by != Py_None) {
    if ((w.created_by = hs_py_copy_str(created_by, "created_by")) == NULL) goto fail;
    w.o.created_by = w.created_by;
  }
  path = hs_py_path(path_obj);
  if (path == NULL) goto fail;

  struct ArrowArrayStream stream;
  if (hs_py_take_stream(data, &stream) < 0) goto fail;
  const char *p = PyBytes_AS_STRING(path);
  hs_error err = {0};
  /* pyarrow's exported streams take the GIL themselves when they must call
   * back into Python (e.g. a generator-backed RecordBatchReader). */
  PyThreadState *ts = PyEval_SaveThread();
  hs_status st = hs_parquet_write_stream(p, &stream, &w.o, &err);
  PyEval_RestoreThread(ts);
  if (st != HS_OK) {
    hs_py_raise(st, &err, p);
    goto fail;
  }
  hs_py_write_opts_free(&w);
  Py_DECREF(path);
  Py_RETURN_NONE;
fail:
  hs_py_write_opts_free(&w);
  Py_XDECREF(path);
  return NULL;
}

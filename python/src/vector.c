/*
 * vector.c — the distance kernels of src/index/vector/distance.h for
 * Python. hyperstreamdb/vector.py shapes and converts numpy arrays; these
 * functions take any C-contiguous buffer (the buffer protocol, so the
 * extension needs no numpy headers), check every length against the shapes
 * given before touching memory, and release the GIL for the computation.
 * Metric names are parsed by hs_metric_parse, so Python and C accept the
 * same names.
 */
#include <string.h>

#include "core.h"
#include "index/vector/distance.h"

/* A C-contiguous buffer whose items are `itemsize` bytes of format `fmt`
 * ("f" float32, "e" float16, "b" int8, "B" uint8, "I" uint32); byte order
 * prefixes '<', '=' and '@' are accepted (the build is little-endian). */
static int get_buf(PyObject *obj, Py_buffer *view, char fmt, Py_ssize_t itemsize, int writable,
                   const char *what) {
  int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
  const char *f = view->format != NULL ? view->format : "B";
  if (*f == '<' || *f == '=' || *f == '@') f++;
  int ok = view->itemsize == itemsize && f[1] == '\0' &&
           (f[0] == fmt || (fmt == 'I' && f[0] == 'L') || (fmt == 'b' && f[0] == 'c'));
  if (!ok) {
    PyErr_Format(PyExc_TypeError, "%s: expected a C-contiguous buffer of format '%c', got '%s'",
                 what, fmt, view->format != NULL ? view->format : "B");
    PyBuffer_Release(view);
    return -1;
  }
  return 0;
}

static int parse_metric(const char *name, hs_metric *out) {
  hs_error err = {0};
  hs_status st = hs_metric_parse(name, out, &err);
  if (st != HS_OK) {
    hs_py_raise(st, &err, NULL);
    return -1;
  }
  return 0;
}

/* The buffer holds exactly n * dim items (checked products). */
static int check_len(const Py_buffer *view, Py_ssize_t n, Py_ssize_t dim, const char *what) {
  size_t items;
  if (n < 0 || dim < 0 || __builtin_mul_overflow((size_t)n, (size_t)dim, &items) ||
      items != (size_t)(view->len / view->itemsize)) {
    PyErr_Format(PyExc_ValueError, "%s: %zd items do not make %zd x %zd", what,
                 view->len / view->itemsize, n, dim);
    return -1;
  }
  return 0;
}

/* _distance_batch(metric, kind, query, rows, n, dim, out): out[i] = the
 * distance from query to row i. kind "f32", "f16" or "i8": query float32 of
 * dim, rows of that storage type, n x dim; kind "bits": query and rows
 * uint8, dim bytes each. out: writable float32 of n. */
static PyObject *hs_py_distance_batch(PyObject *self, PyObject *args) {
  const char *metric_name, *kind;
  PyObject *qo, *ro, *oo;
  Py_ssize_t n, dim;
  if (!PyArg_ParseTuple(args, "ssOOnnO:_distance_batch", &metric_name, &kind, &qo, &ro, &n, &dim,
                        &oo)) {
    return NULL;
  }
  hs_metric metric;
  if (parse_metric(metric_name, &metric) < 0) return NULL;
  int bits = strcmp(kind, "bits") == 0;
  char row_fmt;
  Py_ssize_t row_size;
  if (strcmp(kind, "f32") == 0) {
    row_fmt = 'f', row_size = 4;
  } else if (strcmp(kind, "f16") == 0) {
    row_fmt = 'e', row_size = 2;
  } else if (strcmp(kind, "i8") == 0) {
    row_fmt = 'b', row_size = 1;
  } else if (bits) {
    row_fmt = 'B', row_size = 1;
  } else {
    return hs_py_raise_msg(hs_py_invalid_error, "unknown vector kind '%s'", kind);
  }
  Py_buffer q, r, o;
  if (get_buf(qo, &q, bits ? 'B' : 'f', bits ? 1 : 4, 0, "query") < 0) return NULL;
  if (get_buf(ro, &r, row_fmt, row_size, 0, "rows") < 0) {
    PyBuffer_Release(&q);
    return NULL;
  }
  if (get_buf(oo, &o, 'f', 4, 1, "out") < 0) {
    PyBuffer_Release(&q);
    PyBuffer_Release(&r);
    return NULL;
  }
  PyObject *result = NULL;
  if (check_len(&q, 1, dim, "query") < 0 || check_len(&r, n, dim, "rows") < 0 ||
      check_len(&o, n, 1, "out") < 0) {
    goto done;
  }
  hs_error err = {0};
  hs_status st;
  Py_BEGIN_ALLOW_THREADS;
  if (bits) {
    st = hs_distance_bits_batch(metric, q.buf, r.buf, (size_t)n, (size_t)dim, o.buf, &err);
  } else if (row_fmt == 'f') {
    st = hs_distance_f32_batch(metric, q.buf, r.buf, (size_t)n, (size_t)dim, o.buf, &err);
  } else if (row_fmt == 'e') {
    st = hs_distance_f16_batch(metric, q.buf, r.buf, (size_t)n, (size_t)dim, o.buf, &err);
  } else {
    st = hs_distance_i8_batch(metric, q.buf, r.buf, (size_t)n, (size_t)dim, o.buf, &err);
  }
  Py_END_ALLOW_THREADS;
  if (st != HS_OK) {
    hs_py_raise(st, &err, NULL);
    goto done;
  }
  Py_INCREF(Py_None); /* Py_NewRef is 3.10+; the package supports 3.9 */
  result = Py_None;
done:
  PyBuffer_Release(&q);
  PyBuffer_Release(&r);
  PyBuffer_Release(&o);
  return result;
}

/* _distance_sparse(metric, a_idx, a_val, a_dim, b_idx, b_val, b_dim) -> float.
 * Indices uint32, values float32; validation (sorted, in range, equal
 * dims) is hs_distance_sparse's. */
static PyObject *hs_py_distance_sparse(PyObject *self, PyObject *args) {
  const char *metric_name;
  PyObject *ai, *av, *bi, *bv;
  unsigned int adim, bdim;
  if (!PyArg_ParseTuple(args, "sOOIOOI:_distance_sparse", &metric_name, &ai, &av, &adim, &bi, &bv,
                        &bdim)) {
    return NULL;
  }
  hs_metric metric;
  if (parse_metric(metric_name, &metric) < 0) return NULL;
  Py_buffer v[4];
  PyObject *objs[4] = {ai, av, bi, bv};
  int got = 0;
  PyObject *result = NULL;
  for (; got < 4; got++) {
    if (get_buf(objs[got], &v[got], got % 2 ? 'f' : 'I', 4, 0,
                got % 2 ? "sparse values" : "sparse indices") < 0) {
      goto done;
    }
  }
  if (v[0].len != v[1].len || v[2].len != v[3].len) {
    PyErr_SetString(PyExc_ValueError, "sparse vector: indices and values differ in length");
    goto done;
  }
  hs_sparse_vec a = {v[0].buf, v[1].buf, (size_t)(v[0].len / 4), adim};
  hs_sparse_vec b = {v[2].buf, v[3].buf, (size_t)(v[2].len / 4), bdim};
  hs_error err = {0};
  float out = 0.0f;
  hs_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = hs_distance_sparse(metric, &a, &b, &out, &err);
  Py_END_ALLOW_THREADS;
  if (st != HS_OK) {
    hs_py_raise(st, &err, NULL);
    goto done;
  }
  result = PyFloat_FromDouble((double)out);
done:
  for (int i = 0; i < got; i++) PyBuffer_Release(&v[i]);
  return result;
}

static PyObject *hs_py_simd_level(PyObject *self, PyObject *noargs) {
  return PyUnicode_FromString(hs_simd_level_name(hs_distance_kernels_active()->level));
}

static PyMethodDef hs_py_vector_methods[] = {
    {"_distance_batch", hs_py_distance_batch, METH_VARARGS,
     "_distance_batch(metric, kind, query, rows, n, dim, out) -> None\n\n"
     "Distances from query to each of n rows, written into out (float32[n])."},
    {"_distance_sparse", hs_py_distance_sparse, METH_VARARGS,
     "_distance_sparse(metric, a_idx, a_val, a_dim, b_idx, b_val, b_dim) -> float"},
    {"simd_level", hs_py_simd_level, METH_NOARGS,
     "simd_level() -> str\n\nThe SIMD level the distance kernels run at: scalar, avx2 or avx512\n"
     "(capped by the HS_SIMD environment variable, read once)."},
    {NULL, NULL, 0, NULL}};

int hs_py_vector_init(PyObject *module);
int hs_py_vector_init(PyObject *module) {
  return PyModule_AddFunctions(module, hs_py_vector_methods);
}

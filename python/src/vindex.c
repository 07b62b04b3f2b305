/*
 * vindex.c — the raw per-data-file vector index (src/index/vector/vidx.h)
 * for Python: _vindex_build(...) -> bytes and the _VectorIndex type over
 * those bytes (hyperstreamdb/vector.py's VectorIndex shapes the numpy
 * arrays). Buffers come through the buffer protocol (no numpy headers);
 * every length is checked against the shapes before memory is touched.
 * Builds and searches release the GIL; a batch of queries runs in parallel
 * (hs_parallel_for), each query writing its own rows of the outputs.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "common/parallel.h"
#include "core.h"
#include "index/vector/vidx.h"

typedef struct {
  PyObject_HEAD hs_vidx *x;
  PyObject *bytes; /* owns the memory the index reads (opened from bytes), or NULL: */
  hs_buf buf;      /* built here (_vindex_build_open): owns it, no bytes copy */
} hs_py_vindex;

static PyTypeObject hs_py_vindex_type;

static int get_f32(PyObject *obj, Py_buffer *view, const char *what, int fmt_char) {
  if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
  const char *f = view->format != NULL ? view->format : "B";
  if (*f == '<' || *f == '=' || *f == '@') f++;
  int ok =
      f[1] == '\0' && (f[0] == fmt_char || (fmt_char == 'I' && f[0] == 'L' && view->itemsize == 4));
  if (!ok || view->itemsize != 4) {
    PyErr_Format(PyExc_TypeError, "%s: expected a C-contiguous buffer of format '%c', got '%s'",
                 what, fmt_char, view->format != NULL ? view->format : "B");
    PyBuffer_Release(view);
    return -1;
  }
  return 0;
}

/* The index bytes of _vindex_build's arguments into *out (GIL released
 * while building); -1 with an exception set otherwise. */
static int build_buf(PyObject *args, hs_buf *out) {
  PyObject *vo;
  Py_ssize_t n, dim;
  const char *metric_name;
  unsigned int m, efc, parts, threads, pq_m;
  unsigned long long seed;
  const char *quant_name;
  if (!PyArg_ParseTuple(args, "OnnsIIIKIsI:_vindex_build", &vo, &n, &dim, &metric_name, &m, &efc,
                        &parts, &seed, &threads, &quant_name, &pq_m))
    return -1;
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  hs_error err = {0};
  hs_status st = hs_metric_parse(metric_name, &p.metric, &err);
  if (st != HS_OK) {
    hs_py_raise(st, &err, NULL);
    return -1;
  }
  if (m) p.m = m;
  if (efc) p.ef_construction = efc;
  p.partitions = parts;
  p.seed = seed;
  p.threads = threads;
  if (strcmp(quant_name, "none") == 0) {
    p.quant.kind = HS_QUANT_NONE;
  } else if (strcmp(quant_name, "sq8") == 0) {
    p.quant.kind = HS_QUANT_SQ8;
  } else if (strcmp(quant_name, "pq") == 0) {
    p.quant.kind = HS_QUANT_PQ;
    p.quant.pq_m = pq_m;
  } else {
    hs_py_raise_msg(hs_py_invalid_error, "quantizer '%s': expected none, sq8 or pq", quant_name);
    return -1;
  }
  Py_buffer v;
  if (get_f32(vo, &v, "vectors", 'f') < 0) return -1;
  size_t items;
  if (n < 0 || dim <= 0 || __builtin_mul_overflow((size_t)n, (size_t)dim, &items) ||
      items != (size_t)(v.len / 4)) {
    PyBuffer_Release(&v);
    hs_py_raise_msg(hs_py_invalid_error, "vectors: %zd floats do not make %zd x %zd", v.len / 4, n,
                    dim);
    return -1;
  }
  hs_buf_init(out);
  Py_BEGIN_ALLOW_THREADS;
  st = hs_vidx_build(v.buf, (size_t)n, (size_t)dim, NULL, &p, out, &err);
  Py_END_ALLOW_THREADS;
  PyBuffer_Release(&v);
  if (st != HS_OK) {
    hs_buf_free(out);
    hs_py_raise(st, &err, NULL);
    return -1;
  }
  return 0;
}

/* _vindex_build(vectors, n, dim, metric, m, ef_construction, partitions,
 *               seed, threads, quantizer "none"|"sq8"|"pq", pq_m) -> bytes */
static PyObject *hs_py_vindex_build(PyObject *self, PyObject *args) {
  hs_buf out;
  if (build_buf(args, &out) < 0) return NULL;
  PyObject *res = PyBytes_FromStringAndSize((const char *)out.data, (Py_ssize_t)out.len);
  hs_buf_free(&out);
  return res;
}

/* _vindex_build_open(the same arguments) -> _VectorIndex over the built
 * bytes, which it owns: no bytes object, so the index exists once in memory
 * (a bytes copy would double the peak at the end of a build; to_bytes()
 * copies on demand). */
static PyObject *hs_py_vindex_build_open(PyObject *self, PyObject *args) {
  hs_buf out;
  if (build_buf(args, &out) < 0) return NULL;
  hs_py_vindex *obj = (hs_py_vindex *)hs_py_vindex_type.tp_alloc(&hs_py_vindex_type, 0);
  if (obj == NULL) {
    hs_buf_free(&out);
    return NULL;
  }
  obj->buf = out; /* owned from here: freed by dealloc */
  hs_source *src;
  hs_error err = {0};
  hs_status st = hs_source_open_memory(obj->buf.data, obj->buf.len, "vector index", &src, &err);
  if (st == HS_OK) {
    Py_BEGIN_ALLOW_THREADS;
    st = hs_vidx_open(src, 0, (uint64_t)obj->buf.len, &obj->x, &err);
    Py_END_ALLOW_THREADS;
    hs_source_unref(src);
  }
  if (st != HS_OK) {
    Py_DECREF(obj);
    return hs_py_raise(st, &err, NULL);
  }
  return (PyObject *)obj;
}

static int vindex_init(hs_py_vindex *self, PyObject *args, PyObject *kwargs) {
  PyObject *bytes;
  static char *kw[] = {"data", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!:_VectorIndex", kw, &PyBytes_Type, &bytes))
    return -1;
  if (self->x != NULL) {
    PyErr_SetString(PyExc_RuntimeError, "_VectorIndex is already open");
    return -1;
  }
  hs_source *src;
  hs_error err = {0};
  hs_status st = hs_source_open_memory((const uint8_t *)PyBytes_AS_STRING(bytes),
                                       (size_t)PyBytes_GET_SIZE(bytes), "vector index", &src, &err);
  if (st == HS_OK) {
    Py_BEGIN_ALLOW_THREADS;
    st = hs_vidx_open(src, 0, (uint64_t)PyBytes_GET_SIZE(bytes), &self->x, &err);
    Py_END_ALLOW_THREADS;
    hs_source_unref(src);
  }
  if (st != HS_OK) {
    hs_py_raise(st, &err, NULL);
    return -1;
  }
  Py_INCREF(bytes);
  self->bytes = bytes;
  return 0;
}

static void vindex_dealloc(hs_py_vindex *self) {
  hs_vidx_free(self->x);
  Py_XDECREF(self->bytes);
  hs_buf_free(&self->buf);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static hs_vidx *opened(hs_py_vindex *self) {
  if (self->x == NULL) PyErr_SetString(PyExc_RuntimeError, "_VectorIndex is not open");
  return self->x;
}

typedef struct batch_ctx {
  const hs_vidx *x;
  const float *q;
  uint32_t k, dim, n_indexed;
  hs_vidx_search_params sp;
  const roaring_bitmap_t *allowed;
  const uint64_t *words; /* the allow-set as a row bitset (used when allowed is NULL) */
  size_t nwords;
  bool use_words;
  int64_t *ids;
  float *dist;
  hs_status *st; /* per query */
  hs_error *err; /* first error per worker */
} batch_ctx;

static void search_range(void *ctx, size_t begin, size_t end, uint32_t worker) {
  batch_ctx *c = ctx;
  hs_vidx_hit hits_local[64];
  /* hs_vidx_search returns at most min(k, indexed rows) hits */
  uint32_t room = c->k < c->n_indexed ? c->k : c->n_indexed;
  hs_vidx_hit *hits = room <= 64 ? hits_local : hs_malloc((size_t)room * sizeof *hits);
  for (size_t i = begin; i < end; i++) {
    uint32_t nh = 0;
    hs_error e = {0};
    if (hits == NULL) {
      c->st[i] = hs_error_set(&c->err[worker], HS_ERR_NOMEM, "out of memory for %u hits", room);
      continue;
    }
    c->st[i] = c->use_words ? hs_vidx_search_bits(c->x, c->q + i * c->dim, c->k, &c->sp, c->words,
                                                  c->nwords, hits, &nh, &e)
                            : hs_vidx_search(c->x, c->q + i * c->dim, c->k, &c->sp, c->allowed,
                                             hits, &nh, &e);
    if (c->st[i] != HS_OK) {
      if (c->err[worker].status == HS_OK) {
        c->err[worker] = e;
        hs_error_prefix(&c->err[worker], "query %zu: ", i);
      }
      nh = 0;
    }
    for (uint32_t j = 0; j < c->k; j++) {
      c->ids[i * c->k + j] = j < nh ? (int64_t)hits[j].row : -1;
      c->dist[i * c->k + j] = j < nh ? hits[j].distance : __builtin_inff();
    }
  }
  if (hits != hits_local) hs_free(hits);
}

/* The allow-set `obj` (a buffer of int64 row ids, or of bools, one per
 * row) as a row bitset of the index's row_count rows in *words (PyMem_Raw,
 * the caller frees): one pass, no per-id container lookup. Ids at or past
 * row_count, and mask entries past it, allow nothing; a negative id is an
 * error naming its position. -1 with an exception set otherwise. */
static int allow_words(const hs_vidx *x, PyObject *obj, uint64_t **words, size_t *nwords) {
  Py_buffer v;
  if (PyObject_GetBuffer(obj, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
  const char *f = v.format != NULL ? v.format : "B";
  if (*f == '<' || *f == '=' || *f == '@') f++;
  bool ids = f[1] == '\0' && (f[0] == 'q' || f[0] == 'l') && v.itemsize == 8;
  bool mask = f[1] == '\0' && f[0] == '?' && v.itemsize == 1;
  if (!ids && !mask) {
    PyErr_Format(PyExc_TypeError, "filter: expected int64 row ids or a bool mask, got format '%s'",
                 v.format != NULL ? v.format : "B");
    PyBuffer_Release(&v);
    return -1;
  }
  const uint32_t rows = hs_vidx_row_count(x);
  const size_t nw = ((size_t)rows + 63) / 64;
  uint64_t *w = PyMem_RawCalloc(nw ? nw : 1, sizeof *w);
  if (w == NULL) {
    PyBuffer_Release(&v);
    PyErr_NoMemory();
    return -1;
  }
  size_t bad = SIZE_MAX; /* the first negative id */
  Py_BEGIN_ALLOW_THREADS;
  if (ids) {
    const int64_t *p = v.buf;
    size_t n = (size_t)v.len / 8;
    uint64_t any = 0; /* the sign bit of any id: a negative one is found after the pass */
    for (size_t i = 0; i < n; i++) {
      uint64_t r = (uint64_t)p[i];
      any |= r;
      if (r < rows) w[r >> 6] |= 1ull << (r & 63);
    }
    for (size_t i = 0; (any >> 63) && i < n; i++) {
      if (p[i] < 0) {
        bad = i;
        break;
      }
    }
  } else { /* 8 mask bytes (each 0 or 1) folded into one byte per step */
    const uint8_t *p = v.buf;
    size_t n = (size_t)v.len < rows ? (size_t)v.len : rows, i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t b;
      memcpy(&b, p + i, 8);
      b = ((b & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56;
      w[i >> 6] |= b << (i & 63);
    }
    for (; i < n; i++)
      if (p[i]) w[i >> 6] |= 1ull << (i & 63);
  }
  Py_END_ALLOW_THREADS;
  long long bad_id = bad != SIZE_MAX ? (long long)((const int64_t *)v.buf)[bad] : 0;
  PyBuffer_Release(&v);
  if (bad != SIZE_MAX) {
    PyMem_RawFree(w);
    hs_py_raise_msg(hs_py_invalid_error, "filter: negative row id %lld at position %zu", bad_id,
                    bad);
    return -1;
  }
  *words = w;
  *nwords = nw;
  return 0;
}

/* search(queries, nq, k, ef_search, nprobe, allowed or None, ids, distances,
 *        threads[, words]) -> None. queries float32 nq x dim; allowed: uint32
 * or int64 row ids, or a bool mask over the rows; words: a prepared row
 * bitset (uint64, AllowedRows in vector.py), used when allowed is None;
 * ids int64 and distances float32, nq x k, written (-1 / inf past the
 * hits). The outputs are the caller's (vector.py sizes them with k clamped
 * to the indexed rows); what is allocated here is bounded by the index:
 * hits for min(k, indexed rows), the row bitset, per-query status, threads
 * <= 256. */
static PyObject *vindex_search(hs_py_vindex *self, PyObject *args) {
  hs_vidx *x = opened(self);
  if (x == NULL) return NULL;
  PyObject *qo, *ao, *io, *doo, *wo = Py_None;
  Py_ssize_t nq, k;
  unsigned int ef, nprobe, threads;
  if (!PyArg_ParseTuple(args, "OnnIIOOOI|O:search", &qo, &nq, &k, &ef, &nprobe, &ao, &io, &doo,
                        &threads, &wo))
    return NULL;
  if (k <= 0 || k > (Py_ssize_t)UINT32_MAX)
    return hs_py_raise_msg(hs_py_invalid_error, "k = %zd outside [1, %u]", k, UINT32_MAX);
  if (threads > HS_VIDX_THREADS_MAX)
    return hs_py_raise_msg(hs_py_invalid_error, "threads = %u outside [0, %u] (0: all cores)",
                           threads, HS_VIDX_THREADS_MAX);
  uint32_t dim = hs_vidx_dim(x);
  Py_buffer q, a = {0}, ids, dist, wv = {0};
  int have_a = 0, have_w = 0;
  uint64_t *words = NULL; /* built here from ids or a mask */
  size_t nwords = 0;
  if (get_f32(qo, &q, "queries", 'f') < 0) return NULL;
  PyObject *res = NULL;
  roaring_bitmap_t *allowed = NULL;
  if (PyObject_GetBuffer(io, &ids, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
    PyBuffer_Release(&q);
    return NULL;
  }
  if (PyObject_GetBuffer(doo, &dist, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
    PyBuffer_Release(&q);
    PyBuffer_Release(&ids);
    return NULL;
  }
  size_t qitems, oitems;
  if (nq < 0 || __builtin_mul_overflow((size_t)nq, (size_t)dim, &qitems) ||
      qitems != (size_t)(q.len / 4)) {
    hs_py_raise_msg(hs_py_invalid_error, "queries: %zd floats do not make %zd x %u", q.len / 4, nq,
                    dim);
    goto done;
  }
  if (__builtin_mul_overflow((size_t)nq, (size_t)k, &oitems) || (size_t)ids.len != oitems * 8 ||
      (size_t)dist.len != oitems * 4) {
    hs_py_raise_msg(hs_py_invalid_error, "outputs do not hold %zd x %zd results", nq, k);
    goto done;
  }
  {
    const float *qf = q.buf; /* refused before any work, as in pgvector */
    for (size_t i = 0; i < qitems; i++) {
      if (!isfinite(qf[i])) {
        hs_py_raise_msg(hs_py_invalid_error,
                        "query: NaN or infinite value at position (%zu, %zu) (not allowed in "
                        "vectors, as in pgvector)",
                        dim ? i / dim : 0, dim ? i % dim : 0);
        goto done;
      }
    }
  }
  if (ao != Py_None) {
    Py_buffer probe;
    if (PyObject_GetBuffer(ao, &probe, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) goto done;
    bool u32 = probe.itemsize == 4;
    PyBuffer_Release(&probe);
    if (u32) {
      if (get_f32(ao, &a, "allowed", 'I') < 0) goto done;
      have_a = 1;
      allowed = roaring_bitmap_of_ptr((size_t)(a.len / 4), a.buf);
      if (allowed == NULL) {
        PyErr_NoMemory();
        goto done;
      }
    } else if (allow_words(x, ao, &words, &nwords) < 0) {
      goto done;
    }
  } else if (wo != Py_None) {
    if (PyObject_GetBuffer(wo, &wv, PyBUF_C_CONTIGUOUS) < 0) goto done;
    have_w = 1;
    if (wv.len % 8 != 0) {
      hs_py_raise_msg(hs_py_invalid_error, "allowed rows: %zd bytes are not whole 64-bit words",
                      wv.len);
      goto done;
    }
  }
  {
    /* Fewer than 32 queries run inline: no thread count probe, no pool,
     * no heap bookkeeping (the fixed cost of a single query). */
    uint32_t t = nq < 32 ? 1 : (threads ? threads : hs_parallel_cores());
    hs_status st_local[32];
    hs_error err_local[1];
    batch_ctx c = {.x = x,
                   .q = q.buf,
                   .k = (uint32_t)k,
                   .dim = dim,
                   .n_indexed = hs_vidx_indexed_count(x),
                   .allowed = allowed,
                   .words = words != NULL ? words : (const uint64_t *)wv.buf,
                   .nwords = words != NULL ? nwords : (size_t)wv.len / 8,
                   .use_words = words != NULL || have_w,
                   .ids = ids.buf,
                   .dist = dist.buf};
    c.sp.ef_search = ef;
    c.sp.nprobe = nprobe;
    bool small = nq < 32;
    if (small) {
      memset(st_local, 0, sizeof st_local);
      memset(err_local, 0, sizeof err_local);
      c.st = st_local;
      c.err = err_local;
    } else {
      c.st = PyMem_RawCalloc((size_t)nq, sizeof *c.st);
      c.err = PyMem_RawCalloc(t, sizeof *c.err);
      if (c.st == NULL || c.err == NULL) {
        PyMem_RawFree(c.st);
        PyMem_RawFree(c.err);
        PyErr_NoMemory();
        goto done;
      }
    }
    Py_BEGIN_ALLOW_THREADS;
    if (small)
      search_range(&c, 0, (size_t)nq, 0);
    else
      hs_parallel_for((size_t)nq, 16, t, search_range, &c);
    Py_END_ALLOW_THREADS;
    hs_status st = HS_OK;
    for (Py_ssize_t i = 0; i < nq && st == HS_OK; i++) st = c.st[i];
    if (st != HS_OK) {
      const hs_error *e = NULL;
      for (uint32_t w = 0; w < t && e == NULL; w++)
        if (c.err[w].status != HS_OK) e = &c.err[w];
      hs_py_raise(st, e, NULL);
    } else {
      res = Py_None;
      Py_INCREF(res);
    }
    if (!small) {
      PyMem_RawFree(c.st);
      PyMem_RawFree(c.err);
    }
  }
done:
  if (allowed) roaring_bitmap_free(allowed);
  if (have_a) PyBuffer_Release(&a);
  if (have_w) PyBuffer_Release(&wv);
  PyMem_RawFree(words);
  PyBuffer_Release(&q);
  PyBuffer_Release(&ids);
  PyBuffer_Release(&dist);
  return res;
}

static PyObject *vindex_validate(hs_py_vindex *self, PyObject *noargs) {
  hs_vidx *x = opened(self);
  if (x == NULL) return NULL;
  hs_error err = {0};
  hs_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = hs_vidx_validate(x, &err);
  Py_END_ALLOW_THREADS;
  if (st != HS_OK) return hs_py_raise(st, &err, NULL);
  Py_RETURN_NONE;
}

static PyObject *vindex_info(hs_py_vindex *self, PyObject *noargs) {
  hs_vidx *x = opened(self);
  if (x == NULL) return NULL;
  static const char *quant[] = {"none", "sq8", "pq"};
  hs_quant_kind qk = hs_vidx_quant_kind(x);
  return Py_BuildValue("{s:I,s:s,s:I,s:I,s:I,s:s,s:n}", "dim", hs_vidx_dim(x), "metric",
                       hs_metric_name(hs_vidx_metric(x)), "row_count", hs_vidx_row_count(x),
                       "indexed_count", hs_vidx_indexed_count(x), "partitions",
                       hs_vidx_partition_count(x), "quantizer", (unsigned)qk < 3 ? quant[qk] : "?",
                       "nbytes",
                       self->bytes ? PyBytes_GET_SIZE(self->bytes) : (Py_ssize_t)self->buf.len);
}

static PyObject *vindex_bytes(hs_py_vindex *self, PyObject *noargs) {
  if (opened(self) == NULL) return NULL;
  if (self->bytes == NULL) /* built here: a copy, made on demand */
    return PyBytes_FromStringAndSize((const char *)self->buf.data, (Py_ssize_t)self->buf.len);
  Py_INCREF(self->bytes);
  return self->bytes;
}

static PyMethodDef vindex_methods[] = {
    {"search", (PyCFunction)vindex_search, METH_VARARGS,
     "search(queries, nq, k, ef_search, nprobe, allowed, ids, distances, threads[, words]) -> "
     "None"},
    {"validate", (PyCFunction)vindex_validate, METH_NOARGS, "validate() -> None (deep check)"},
    {"info", (PyCFunction)vindex_info, METH_NOARGS, "info() -> dict"},
    {"to_bytes", (PyCFunction)vindex_bytes, METH_NOARGS, "to_bytes() -> bytes"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject hs_py_vindex_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hyperstreamdb._core._VectorIndex",
    .tp_basicsize = sizeof(hs_py_vindex),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "_VectorIndex(data: bytes): an opened vector index (use hyperstreamdb.VectorIndex).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)vindex_init,
    .tp_dealloc = (destructor)vindex_dealloc,
    .tp_methods = vindex_methods,
};

static PyMethodDef hs_py_vindex_functions[] = {
    {"_vindex_build", hs_py_vindex_build, METH_VARARGS,
     "_vindex_build(vectors, n, dim, metric, m, ef_construction, partitions, seed, threads,"
     " quantizer, pq_m) -> bytes"},
    {"_vindex_build_open", hs_py_vindex_build_open, METH_VARARGS,
     "_vindex_build_open(the arguments of _vindex_build) -> _VectorIndex owning the index bytes"},
    {NULL, NULL, 0, NULL}};

int hs_py_vindex_init(PyObject *module);
int hs_py_vindex_init(PyObject *module) {
  if (PyType_Ready(&hs_py_vindex_type) < 0) return -1;
  Py_INCREF(&hs_py_vindex_type);
  if (PyModule_AddObject(module, "_VectorIndex", (PyObject *)&hs_py_vindex_type) < 0) {
    Py_DECREF(&hs_py_vindex_type);
    return -1;
  }
  return PyModule_AddFunctions(module, hs_py_vindex_functions);
}

/*
 * vsearch.c — _core.vector_search: top-k vector search over a table
 * (hs_table_vector_search / hs_table_vector_search_batch), and
 * _core.build_vector_indexes (hs_table_build_vector_indexes).
 *
 * A search borrows the open table of the TableHandle it is given (`handle`)
 * when that handle's lock is free (taken without waiting, with the GIL
 * released, held for the search; hs_py_table_try_borrow), so a first
 * search does not open the table again (on S3 a second open is the hint,
 * the version probes and the metadata once more). Else the table is opened
 * from its folder once per search cache (a capsule from
 * _core.search_cache(), one per hyperstreamdb.Table). Either is refreshed
 * per call: a refresh of an unchanged table is a version probe and one
 * stat, where an open reads and parses the metadata JSON (most of a small
 * search's fixed cost). A newer version, by this process or another
 * writer, is loaded by the refresh as a fresh open would. A search never
 * waits for a TableHandle's lock; concurrent searches on one cache each get a table (the one that
 * finds the cache busy opens its own). The query vectors come through
 * the buffer protocol (a C-contiguous float32 array of one or two
 * dimensions, no copy); the GIL is released while C opens, scores and
 * fetches. The result is an "arrow_array_stream" PyCapsule and a dict of
 * counters.
 */
#include <stdbool.h>
#include <string.h>

#include "core.h"
#include "arrow/arrow.h"
#include "common/common.h"

/* ------------------------------------------------------ search cache */

#define HS_PY_SEARCH_CACHE "hyperstreamdb.search_cache"

/* The open table of one hyperstreamdb.Table's searches; `lock` guards
 * `table` and `path` (held for a whole search). */
typedef struct hs_py_search_cache {
  PyThread_type_lock lock;
  hs_table *table;      /* NULL until the first search */
  char *path;           /* the folder it was opened from */
  int64_t staleness_ms; /* hs_table_set_staleness_ms of the table */
  /* The result schema of the last as_batch search and the pyarrow Schema
   * imported from it (a new reference): a search whose result has the same
   * schema hands that Schema out again instead of importing one per query.
   * Guarded by `lock`, and the GIL for memo.pa_schema. */
  hs_py_schema_memo memo;
} hs_py_search_cache;

static void search_cache_free(PyObject *capsule) {
  hs_py_search_cache *c = PyCapsule_GetPointer(capsule, HS_PY_SEARCH_CACHE);
  if (c == NULL) {
    PyErr_Clear();
    return;
  }
  hs_table_free(c->table);
  hs_free(c->path);
  hs_py_schema_memo_clear(&c->memo);
  if (c->lock != NULL) PyThread_free_lock(c->lock);
  hs_free(c);
}

static PyObject *vs_search_cache(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"staleness_ms", NULL};
  long long staleness_ms = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|L:search_cache", kwlist, &staleness_ms))
    return NULL;
  hs_py_search_cache *c = hs_calloc(1, sizeof *c);
  if (c == NULL) return PyErr_NoMemory();
  c->staleness_ms = (int64_t)staleness_ms;
  if ((c->lock = PyThread_allocate_lock()) == NULL) {
    hs_free(c);
    return PyErr_NoMemory();
  }
  PyObject *cap = PyCapsule_New(c, HS_PY_SEARCH_CACHE, search_cache_free);
  if (cap == NULL) {
    PyThread_free_lock(c->lock);
    hs_free(c);
  }
  return cap;
}

/* The table at `path` for one search, without the GIL: the TableHandle's
 * (`lender`, refreshed; *lent: hand it back when done) when it is free, so
 * a first search reads nothing the handle's open already read (the
 * refresh fetches its first index reads in the freshness LIST's round
 * trip: hs_table_vector_search_refresh); else the
 * cache's (refreshed; *held: release the cache's lock when done) when `c`
 * is free and was opened from `path`, else a table of the caller's own
 * (*own). */
static hs_status search_table(void *lender, hs_py_search_cache *c, const char *path,
                              const hs_vector_search_options *o, const float *qs, size_t nq,
                              size_t dim, hs_table **out, bool *lent, bool *held, bool *own,
                              hs_error *err) {
  *out = NULL;
  *lent = *held = *own = false;
  hs_table *ht = hs_py_table_try_borrow(lender);
  if (ht != NULL) {
    if (hs_table_vector_search_refresh_queries(ht, o, qs, nq, dim, err) == HS_OK) {
      *out = ht;
      *lent = true;
      return HS_OK;
    }
    hs_py_table_return(lender);
    if (err != NULL) memset(err, 0, sizeof *err); /* the table of our own words the error */
  }
  if (c != NULL && PyThread_acquire_lock(c->lock, NOWAIT_LOCK)) {
    hs_status st = HS_ERR_INTERNAL;
    if (c->table != NULL && c->path != NULL && strcmp(c->path, path) == 0) {
      st = hs_table_vector_search_refresh_queries(c->table, o, qs, nq, dim, err);
      if (st == HS_OK) {
        *out = c->table;
        *held = true;
        return HS_OK;
      }
      if (err != NULL) memset(err, 0, sizeof *err); /* reopen: the open words the error */
    }
    hs_table_free(c->table);
    hs_free(c->path);
    c->table = NULL;
    c->path = hs_strdup(path);
    if (c->path != NULL && (st = hs_table_open(path, &c->table, err)) == HS_OK) {
      hs_table_set_staleness_ms(c->table, c->staleness_ms);
      *out = c->table;
      *held = true;
      return HS_OK;
    }
    PyThread_release_lock(c->lock);
    return c->path == NULL ? hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path) : st;
  }
  *own = true;
  return hs_table_open(path, out, err);
}

/* The byte length of Arrow C metadata (NULL: 0). */
static size_t metadata_len(const char *m) {
  if (m == NULL) return 0;
  int32_t n, len;
  size_t at = sizeof n;
  memcpy(&n, m, sizeof n);
  for (int32_t i = 0; i < 2 * n; i++) {
    memcpy(&len, m + at, sizeof len);
    at += sizeof len + (size_t)len;
  }
  return at;
}

static bool same_text(const char *a, const char *b) {
  return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

/* Whether two exported schemas are the same (formats, names, flags,
 * metadata, children): the result schema of one search and the next. */
bool hs_py_schema_same(const struct ArrowSchema *a, const struct ArrowSchema *b) {
  if (!same_text(a->format, b->format) || !same_text(a->name, b->name) || a->flags != b->flags ||
      a->n_children != b->n_children || (a->dictionary == NULL) != (b->dictionary == NULL))
    return false;
  size_t la = metadata_len(a->metadata), lb = metadata_len(b->metadata);
  if (la != lb || (la > 0 && memcmp(a->metadata, b->metadata, la) != 0)) return false;
  for (int64_t i = 0; i < a->n_children; i++)
    if (!hs_py_schema_same(a->children[i], b->children[i])) return false;
  return a->dictionary == NULL || hs_py_schema_same(a->dictionary, b->dictionary);
}

/* pyarrow.Schema._import_from_c_capsule(capsule of `sch`, moved). */
PyObject *hs_py_import_pa_schema(struct ArrowSchema *sch) {
  struct ArrowSchema *heap = hs_malloc(sizeof *heap);
  if (heap == NULL) {
    sch->release(sch);
    return PyErr_NoMemory();
  }
  *heap = *sch;
  sch->release = NULL;
  PyObject *cap = PyCapsule_New(heap, "arrow_schema", hs_py_schema_capsule_free);
  if (cap == NULL) {
    heap->release(heap);
    hs_free(heap);
    return NULL;
  }
  PyObject *pa = PyImport_ImportModule("pyarrow"), *cls = NULL, *out = NULL;
  if (pa != NULL) cls = PyObject_GetAttrString(pa, "Schema");
  if (cls != NULL) out = PyObject_CallMethod(cls, "_import_from_c_capsule", "O", cap);
  Py_XDECREF(cls);
  Py_XDECREF(pa);
  Py_DECREF(cap);
  return out;
}

/* The result of an as_batch search: (array capsule, its address, pyarrow
 * Schema) from the one-batch stream `s` (not released here); Python
 * imports it with pyarrow.RecordBatch._import_from_c(address, schema).
 * The Schema is the cache's when the result schema is the last one's. NULL
 * with an exception set on failure; NULL and *empty when the stream has
 * no batch (the caller then returns the stream). Called with the GIL and
 * c->lock held. */
static PyObject *as_batch(hs_py_search_cache *c, struct ArrowArrayStream *s, bool *empty) {
  *empty = false;
  struct ArrowSchema sch;
  memset(&sch, 0, sizeof sch);
  struct ArrowArray *arr = hs_calloc(1, sizeof *arr);
  if (arr == NULL) return PyErr_NoMemory();
  if (s->get_schema(s, &sch) != 0 || s->get_next(s, arr) != 0) {
    const char *m = s->get_last_error(s);
    if (sch.release != NULL) sch.release(&sch);
    hs_free(arr);
    return hs_py_raise_msg(hs_py_invalid_error, "vector search result: %s", m ? m : "?");
  }
  if (arr->release == NULL) { /* no rows: the caller returns the stream */
    sch.release(&sch);
    hs_free(arr);
    *empty = true;
    return NULL;
  }
  return hs_py_batch_result(&c->memo, &sch, arr);
}

void hs_py_schema_memo_clear(hs_py_schema_memo *m) {
  if (m->schema.release != NULL) m->schema.release(&m->schema);
  Py_CLEAR(m->pa_schema);
}

PyObject *hs_py_batch_result(hs_py_schema_memo *m, struct ArrowSchema *sch,
                             struct ArrowArray *heap) {
  if (m->pa_schema != NULL && m->schema.release != NULL && hs_py_schema_same(sch, &m->schema)) {
    sch->release(sch);
  } else {
    struct ArrowSchema copy;
    hs_error err = {0};
    PyObject *ps = NULL;
    if (hs_arrow_schema_copy(sch, &copy, &err) != HS_OK) {
      sch->release(sch);
      PyErr_NoMemory();
    } else if ((ps = hs_py_import_pa_schema(sch)) == NULL) {
      copy.release(&copy);
    }
    if (ps == NULL) {
      heap->release(heap);
      hs_free(heap);
      return NULL;
    }
    if (m->schema.release != NULL) m->schema.release(&m->schema);
    m->schema = copy;
    PyObject *old = m->pa_schema;
    m->pa_schema = ps;
    Py_XDECREF(old);
  }
  PyObject *cap = PyCapsule_New(heap, "arrow_array", hs_py_array_capsule_free);
  if (cap == NULL) {
    heap->release(heap);
    hs_free(heap);
    return NULL;
  }
  return Py_BuildValue("(NKO)", cap, (unsigned long long)(uintptr_t)heap, m->pa_schema);
}

/* Optional str argument: None -> NULL; else a borrowed UTF-8 pointer. */
static int vs_str(PyObject *obj, const char *what, const char **out) {
  *out = NULL;
  if (obj == Py_None) return 0;
  if (!PyUnicode_Check(obj)) {
    hs_py_raise_msg(hs_py_invalid_error, "%s must be a str, not %s", what, Py_TYPE(obj)->tp_name);
    return -1;
  }
  *out = hs_py_text(obj, what);
  return *out == NULL ? -1 : 0;
}

/* Column names: None -> NULL list; else borrowed UTF-8 pointers kept alive
 * by *keep (a new list reference). */
static int vs_names(PyObject *obj, const char ***out, size_t *n, PyObject **keep) {
  *out = NULL;
  *n = 0;
  *keep = NULL;
  if (obj == Py_None) return 0;
  if (PyUnicode_Check(obj)) {
    hs_py_raise_msg(hs_py_invalid_error, "columns must be a list of column names, not a string");
    return -1;
  }
  PyObject *list = PySequence_List(obj);
  if (list == NULL) return -1;
  Py_ssize_t len = PyList_GET_SIZE(list);
  const char **v = PyMem_Calloc((size_t)len + 1, sizeof *v);
  if (v == NULL) {
    Py_DECREF(list);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    PyObject *item = PyList_GET_ITEM(list, i);
    v[i] = PyUnicode_Check(item) ? hs_py_text(item, "columns") : NULL;
    if (v[i] == NULL) {
      if (!PyErr_Occurred()) hs_py_raise_msg(hs_py_invalid_error, "columns[%zd] must be a str", i);
      PyMem_Free(v);
      Py_DECREF(list);
      return -1;
    }
  }
  *out = v;
  *n = (size_t)len;
  *keep = list;
  return 0;
}

static PyObject *vs_stats_dict(const hs_vector_search_stats *s) {
  return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:s}", "files_planned",
                       (long long)s->files_planned, "files_searched", (long long)s->files_searched,
                       "files_indexed", (long long)s->files_indexed, "rows_scored",
                       (long long)s->rows_scored, "rows_matched", (long long)s->rows_matched,
                       "rows_returned", (long long)s->rows_returned, "files_index_rejected",
                       (long long)s->files_index_rejected, "index_rejected", s->index_rejected);
}

static PyObject *vs_search(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri",     "column",      "queries",   "k",      "metric", "filter",
                           "columns", "snapshot_id", "ef_search", "nprobe", "batch",  "exact",
                           "cache",   "as_batch",    "handle",    NULL};
  PyObject *uri_obj, *column_obj, *queries, *metric_obj = Py_None, *filter_obj = Py_None;
  PyObject *cols_obj = Py_None, *cache_obj = Py_None, *handle_obj = Py_None;
  long long k = 10, snapshot_id = -1;
  unsigned int ef_search = 0, nprobe = 0;
  int batch = 0, exact = 0, want_batch = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|LOOOLIIppOpO:vector_search", kwlist, &uri_obj,
                                   &column_obj, &queries, &k, &metric_obj, &filter_obj, &cols_obj,
                                   &snapshot_id, &ef_search, &nprobe, &batch, &exact, &cache_obj,
                                   &want_batch, &handle_obj)) {
    return NULL;
  }
  /* Kept alive by the caller's argument for the whole call. */
  void *lender = hs_py_table_lender(handle_obj);
  hs_py_search_cache *cache = NULL;
  if (cache_obj != Py_None && (cache = PyCapsule_GetPointer(cache_obj, HS_PY_SEARCH_CACHE)) == NULL)
    return NULL;
  hs_vector_search_options o;
  hs_vector_search_options_init(&o);
  o.k = (int64_t)k;
  o.snapshot_id = (int64_t)snapshot_id;
  o.ef_search = ef_search;
  o.nprobe = nprobe;
  o.exact = exact;
  if (vs_str(column_obj, "column", &o.column) < 0 || vs_str(metric_obj, "metric", &o.metric) < 0 ||
      vs_str(filter_obj, "filter", &o.filter) < 0) {
    return NULL;
  }
  if (o.column == NULL) return hs_py_raise_msg(hs_py_invalid_error, "column must be a str");
  PyObject *path = hs_py_path(uri_obj);
  if (path == NULL) return NULL;
  PyObject *keep = NULL;
  const char **cols = NULL;
  size_t n_cols = 0;
  if (vs_names(cols_obj, &cols, &n_cols, &keep) < 0) {
    Py_DECREF(path);
    return NULL;
  }
  o.columns = cols;
  o.n_columns = n_cols;
  Py_buffer view;
  if (PyObject_GetBuffer(queries, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
    Py_DECREF(path);
    Py_XDECREF(keep);
    PyMem_Free(cols);
    return NULL;
  }
  PyObject *result = NULL;
  const char *fmt = view.format ? view.format : "B";
  if ((fmt[0] == '<' || fmt[0] == '=' || fmt[0] == '@') && fmt[1] != 0) fmt++;
  if (strcmp(fmt, "f") != 0 || view.itemsize != 4 || (view.ndim != 1 && view.ndim != 2) ||
      view.shape == NULL) {
    hs_py_raise_msg(hs_py_invalid_error,
                    "queries must be a C-contiguous float32 array of 1 or 2 dimensions");
    goto done;
  }
  size_t nq = view.ndim == 1 ? 1 : (size_t)view.shape[0];
  size_t dim = (size_t)view.shape[view.ndim - 1];
  struct ArrowArrayStream *heap = hs_malloc(sizeof *heap);
  if (heap == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  memset(heap, 0, sizeof *heap);
  const char *p = PyBytes_AS_STRING(path);
  hs_vector_search_stats stats;
  memset(&stats, 0, sizeof stats);
  hs_error err = {0};
  hs_status st;
  Py_BEGIN_ALLOW_THREADS;
  hs_table *t = NULL;
  bool lent = false, held = false, own = false;
  st = search_table(lender, cache, p, &o, (const float *)view.buf, nq, dim, &t, &lent, &held, &own,
                    &err);
  if (st == HS_OK && batch)
    st = hs_table_vector_search_batch(t, &o, (const float *)view.buf, nq, dim, heap, &stats, &err);
  else if (st == HS_OK && nq != 1)
    st = hs_error_set(&err, HS_ERR_INVALID_ARG, "one query vector expected, got %zu", nq);
  else if (st == HS_OK)
    st = hs_table_vector_search(t, &o, (const float *)view.buf, dim, heap, &stats, &err);
  if (own) hs_table_free(t);
  if (lent) hs_py_table_return(lender);
  if (held) PyThread_release_lock(cache->lock);
  Py_END_ALLOW_THREADS;
  if (st != HS_OK) {
    hs_free(heap);
    hs_py_raise(st, &err, p);
    goto done;
  }
  if (want_batch && cache != NULL) {
    /* The schema cache is the search cache's: taken like its table. */
    PyObject *r = NULL;
    bool empty = false;
    Py_BEGIN_ALLOW_THREADS;
    PyThread_acquire_lock(cache->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS;
    r = as_batch(cache, heap, &empty);
    PyThread_release_lock(cache->lock);
    if (r == NULL && !empty) {
      heap->release(heap);
      hs_free(heap);
      goto done;
    }
    if (r != NULL) {
      heap->release(heap);
      hs_free(heap);
      PyObject *sd = vs_stats_dict(&stats);
      if (sd == NULL) {
        Py_DECREF(r);
        goto done;
      }
      result = Py_BuildValue("(NN)", r, sd);
      goto done;
    }
  }
  PyObject *capsule = PyCapsule_New(heap, "arrow_array_stream", hs_py_stream_capsule_free);
  if (capsule == NULL) {
    heap->release(heap);
    hs_free(heap);
    goto done;
  }
  PyObject *sd = vs_stats_dict(&stats);
  if (sd == NULL) {
    Py_DECREF(capsule);
    goto done;
  }
  result = PyTuple_Pack(2, capsule, sd);
  Py_DECREF(capsule);
  Py_DECREF(sd);
done:
  PyBuffer_Release(&view);
  Py_DECREF(path);
  Py_XDECREF(keep);
  PyMem_Free(cols);
  return result;
}

static PyObject *vs_build(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri",        "column",    "metric", "m",       "ef_construction",
                           "partitions", "quantizer", "pq_m",   "threads", NULL};
  PyObject *uri_obj, *column_obj, *metric_obj = Py_None, *quant_obj = Py_None;
  unsigned int m = 0, efc = 0, parts = 0, pq_m = 0, threads = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OIIIOII:build_vector_indexes", kwlist,
                                   &uri_obj, &column_obj, &metric_obj, &m, &efc, &parts, &quant_obj,
                                   &pq_m, &threads)) {
    return NULL;
  }
  hs_vector_index_options o;
  hs_vector_index_options_init(&o);
  const char *column = NULL;
  if (vs_str(column_obj, "column", &column) < 0 || vs_str(metric_obj, "metric", &o.metric) < 0 ||
      vs_str(quant_obj, "quantizer", &o.quantizer) < 0)
    return NULL;
  if (column == NULL) return hs_py_raise_msg(hs_py_invalid_error, "column must be a str");
  o.m = m;
  o.ef_construction = efc;
  o.partitions = parts;
  o.pq_m = pq_m;
  o.threads = threads;
  PyObject *path = hs_py_path(uri_obj);
  if (path == NULL) return NULL;
  const char *p = PyBytes_AS_STRING(path);
  hs_error err = {0};
  hs_status st;
  int64_t built = 0;
  Py_BEGIN_ALLOW_THREADS;
  hs_table *t = NULL;
  st = hs_table_open(p, &t, &err);
  if (st == HS_OK) st = hs_table_build_vector_indexes(t, column, &o, &built, &err);
  hs_table_free(t);
  Py_END_ALLOW_THREADS;
  if (st != HS_OK) {
    hs_py_raise(st, &err, p);
    Py_DECREF(path);
    return NULL;
  }
  Py_DECREF(path);
  return PyLong_FromLongLong((long long)built);
}

static PyMethodDef hs_py_vsearch_methods[] = {
    {"vector_search", (PyCFunction)(void (*)(void))vs_search, METH_VARARGS | METH_KEYWORDS,
     "vector_search(uri, column, queries, k=10, metric=None, filter=None, columns=None,\n"
     "              snapshot_id=-1, ef_search=0, nprobe=0, batch=False, exact=False,\n"
     "              cache=None, as_batch=False)\n"
     "    -> (arrow_array_stream capsule, stats dict)\n\n"
     "Top-k rows of the table at `uri` nearest to `queries` (float32, 1-d for one query;\n"
     "2-d with batch=True: a leading int32 'query_index' column); cache: a search_cache()\n"
     "whose open table is refreshed and reused. as_batch=True (with a cache): the result's\n"
     "one batch as ((array capsule, address, pyarrow Schema), stats) for\n"
     "pyarrow.RecordBatch._import_from_c (an empty result: the stream capsule). Use Table.search."},
    {"search_cache", (PyCFunction)(void (*)(void))vs_search_cache, METH_VARARGS | METH_KEYWORDS,
     "search_cache(staleness_ms=0) -> capsule\n\n"
     "The open table that vector_search(cache=...) keeps between calls (one per Table);\n"
     "staleness_ms: hs_table_set_staleness_ms of that table."},
    {"build_vector_indexes", (PyCFunction)(void (*)(void))vs_build, METH_VARARGS | METH_KEYWORDS,
     "build_vector_indexes(uri, column, metric=None, m=0, ef_construction=0, partitions=0,\n"
     "                     quantizer=None, pq_m=0, threads=0) -> files built\n\n"
     "Build the vector index of every data file lacking one (hs_table_build_vector_indexes).\n"
     "Use Table.add_index(column, 'hnsw' | 'ivf_hnsw' | 'ivf_hnsw_sq8' | 'ivf_pq')."},
    {NULL, NULL, 0, NULL}};

int hs_py_vsearch_init(PyObject *module);
int hs_py_vsearch_init(PyObject *module) {
  return PyModule_AddFunctions(module, hs_py_vsearch_methods);
}

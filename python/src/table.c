/*
 * table.c — Iceberg tables from Python: the TableHandle type (one open
 * hs_table) and the TableStream type (one scan's record batches), plus the
 * module functions `table_open` and `table_create`. The friendly API
 * (hyperstreamdb.Table, input conversion, query builder) is Python, in
 * python/hyperstreamdb/table.py; this file is the thin, GIL-free shell.
 *
 * Concurrency: an hs_table is single-threaded, so every call on a handle
 * holds the handle's lock, taken with the GIL released (a second Python
 * thread waits instead of racing). The C work itself (file I/O, Parquet
 * encoding and decoding, commits) always runs without the GIL.
 *
 * Streams: a scan's ArrowArrayStream keeps no reference to the table, so a
 * TableStream outlives its handle. It is one-shot (the life cycle it shares
 * with ParquetStream is in stream.c): exported once through
 * `__arrow_c_stream__` or read batch by batch with `_read_next`, which
 * raises the HyperStreamError subclass of a failure (the C stream
 * interface itself only carries an errno).
 */
#include "core.h"

#include <errno.h>
#include <pythread.h>
#include <string.h>
#include <structmember.h>

#include "arrow/arrow.h"
#include "common/common.h"

int hs_py_table_init(PyObject *module);

/* ------------------------------------------------------------ helpers */

/* A capsule "arrow_schema" that takes ownership of *schema (moved out). */
static PyObject *hs_py_table_schema_capsule_take(struct ArrowSchema *schema) {
  struct ArrowSchema *heap = hs_malloc(sizeof *heap);
  if (heap == NULL) {
    schema->release(schema);
    return PyErr_NoMemory();
  }
  *heap = *schema;
  schema->release = NULL;
  PyObject *capsule = PyCapsule_New(heap, "arrow_schema", hs_py_schema_capsule_free);
  if (capsule == NULL) {
    heap->release(heap);
    hs_free(heap);
  }
  return capsule;
}

/* Call obj.<method>() and move the C struct out of the returned capsule
 * `name` into *out (`size` bytes; the struct's release pointer is at
 * `release_offset` and is cleared in the capsule so only *out owns it). */
static int hs_py_table_take(PyObject *obj, const char *method, const char *name, void *out,
                            size_t size, size_t release_offset) {
  PyObject *m = PyObject_GetAttrString(obj, method);
  if (m == NULL) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "expected an object implementing %s (Arrow PyCapsule "
                 "Interface), got %s",
                 method, Py_TYPE(obj)->tp_name);
    return -1;
  }
  PyObject *capsule = PyObject_CallNoArgs(m);
  Py_DECREF(m);
  if (capsule == NULL) return -1;
  if (!PyCapsule_IsValid(capsule, name)) {
    Py_DECREF(capsule);
    PyErr_Format(PyExc_TypeError, "%s() did not return a PyCapsule named '%s'", method, name);
    return -1;
  }
  char *p = PyCapsule_GetPointer(capsule, name);
  void **release = (void **)(p + release_offset);
  if (*release == NULL) {
    Py_DECREF(capsule);
    hs_py_raise_msg(hs_py_invalid_error, "the Arrow capsule '%s' was already consumed", name);
    return -1;
  }
  memcpy(out, p, size);
  *release = NULL;
  Py_DECREF(capsule);
  return 0;
}

/* ------------------------------------------------------- TableStream */

/* One scan's batches: the shared stream (stream.c); `what` names the table. */
static PyObject *hs_py_tstream_repr(hs_py_stream *self) {
  return PyUnicode_FromFormat("<TableStream %R batches_read=%lld %s>", self->what,
                              self->batches_read, hs_py_stream_state_names[self->state]);
}

static PyMemberDef hs_py_tstream_members[] = {
    {"batches_read", T_LONGLONG, offsetof(hs_py_stream, batches_read), READONLY,
     "Batches decoded so far through _read_next."},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject hs_py_tstream_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hyperstreamdb._core.TableStream",
    .tp_basicsize = sizeof(hs_py_stream),
    .tp_dealloc = hs_py_stream_dealloc,
    .tp_repr = (reprfunc)hs_py_tstream_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A one-shot stream of the record batches of one table scan.",
    .tp_methods = hs_py_stream_methods,
    .tp_members = hs_py_tstream_members,
    .tp_getset = hs_py_stream_getset,
};

/* Wrap a live scan stream (moved in) as a TableStream. */
static PyObject *hs_py_tstream_new(struct ArrowArrayStream *stream, PyObject *what) {
  hs_py_stream *obj = PyObject_New(hs_py_stream, &hs_py_tstream_type);
  if (obj == NULL) {
    stream->release(stream);
    return NULL;
  }
  hs_py_stream_init(obj, what, "scan again to read it again");
  hs_py_stream_take(obj, stream);
  return (PyObject *)obj;
}

/* -------------------------------------------------------- TableHandle */

typedef struct hs_py_table {
  PyObject_HEAD hs_table *table; /* owned */
  PyThread_type_lock lock;       /* serializes every use of `table` */
  PyObject *uri;                 /* str, as given */
} hs_py_table;

/* Release the GIL, then take the handle's lock (never the other way round,
 * so a thread waiting here cannot block one that needs the GIL). */
static PyThreadState *hs_py_table_enter(hs_py_table *self) {
  PyThreadState *ts = PyEval_SaveThread();
  PyThread_acquire_lock(self->lock, WAIT_LOCK);
  return ts;
}

static void hs_py_table_leave(hs_py_table *self, PyThreadState *ts) {
  PyThread_release_lock(self->lock);
  PyEval_RestoreThread(ts);
}

static PyTypeObject hs_py_table_type;

void *hs_py_table_lender(PyObject *obj) {
  return obj != NULL && Py_TYPE(obj) == &hs_py_table_type ? obj : NULL;
}

hs_table *hs_py_table_try_borrow(void *lender) {
  hs_py_table *self = lender;
  if (self == NULL || !PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) return NULL;
  if (self->table == NULL) {
    PyThread_release_lock(self->lock);
    return NULL;
  }
  return self->table;
}

void hs_py_table_return(void *lender) {
  PyThread_release_lock(((hs_py_table *)lender)->lock);
}

static const char *hs_py_table_uri(hs_py_table *self) {
  const char *p = PyUnicode_AsUTF8(self->uri);
  if (p == NULL) {
    PyErr_Clear();
    p = "table";
  }
  return p;
}

static void hs_py_table_dealloc(hs_py_table *self) {
  hs_table_free(self->table);
  if (self->lock != NULL) PyThread_free_lock(self->lock);
  Py_XDECREF(self->uri);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Column names: None -> *out NULL; else a list of str copied into an
 * hs_malloc'd array of hs_strdup'd names (free with hs_py_table_names_free). */
static void hs_py_table_names_free(char **v, size_t n) {
  for (size_t i = 0; v != NULL && i < n; i++) hs_free(v[i]);
  hs_free(v);
}

static int hs_py_table_names(PyObject *obj, const char *what, char ***out, size_t *n_out) {
  *out = NULL;
  *n_out = 0;
  if (obj == Py_None) return 0;
  if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
    hs_py_raise_msg(hs_py_invalid_error, "%s must be a list of column names, not a string", what);
    return -1;
  }
  PyObject *seq = PySequence_Fast(obj, "expected a list of column names");
  if (seq == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  char **v = hs_calloc((size_t)n + 1, sizeof *v);
  if (v == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    const char *s = PyUnicode_Check(item) ? hs_py_text(item, what) : NULL;
    if (s == NULL) {
      if (!PyErr_Occurred()) {
        hs_py_raise_msg(hs_py_invalid_error, "%s[%zd] must be a str, not %s", what, i,
                        Py_TYPE(item)->tp_name);
      }
      hs_py_table_names_free(v, (size_t)i);
      Py_DECREF(seq);
      return -1;
    }
    if ((v[i] = hs_strdup(s)) == NULL) {
      hs_py_table_names_free(v, (size_t)i);
      Py_DECREF(seq);
      PyErr_NoMemory();
      return -1;
    }
  }
  Py_DECREF(seq);
  *out = v;
  *n_out = (size_t)n;
  return 0;
}

/* snapshot_id argument: None -> -1 (current), else a non-negative int. */
static int hs_py_table_snapshot_arg(PyObject *obj, int64_t *out) {
  *out = -1;
  if (obj == Py_None) return 0;
  long long v = PyLong_AsLongLong(obj);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (v < 0) {
    hs_py_raise_msg(hs_py_invalid_error, "snapshot_id must be a non-negative int, got %lld", v);
    return -1;
  }
  *out = (int64_t)v;
  return 0;
}

/* -1 (absent) as None. */
static PyObject *hs_py_table_opt(int64_t v) {
  if (v < 0) Py_RETURN_NONE;
  return PyLong_FromLongLong((long long)v);
}

static void hs_py_appended_free(PyObject *cap) {
  hs_table_appended_free(PyCapsule_GetPointer(cap, HS_PY_APPENDED_CAPSULE));
}

static PyObject *hs_py_table_append(hs_py_table *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"data", "keep", NULL};
  PyObject *data;
  int keep = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p:append", kwlist, &data, &keep)) return NULL;
  struct ArrowArrayStream stream;
  if (hs_py_table_take(data, "__arrow_c_stream__", "arrow_array_stream", &stream, sizeof stream,
                       offsetof(struct ArrowArrayStream, release)) < 0) {
    return NULL;
  }
  int64_t sid = -1;
  hs_error err = {0};
  hs_table_appended *kept = NULL;
  PyThreadState *ts = hs_py_table_enter(self);
  /* consumes the stream */
  hs_status st = hs_table_append_keep(self->table, &stream, &sid, keep ? &kept : NULL, &err);
  hs_py_table_leave(self, ts);
  if (st != HS_OK) return hs_py_raise(st, &err, hs_py_table_uri(self));
  PyObject *sid_obj = sid < 0 ? (Py_INCREF(Py_None), Py_None) : PyLong_FromLongLong((long long)sid);
  if (!keep || sid_obj == NULL) {
    hs_table_appended_free(kept);
    return sid_obj;
  }
  PyObject *cap = Py_None;
  if (kept != NULL) {
    cap = PyCapsule_New(kept, HS_PY_APPENDED_CAPSULE, hs_py_appended_free);
    if (cap == NULL) {
      hs_table_appended_free(kept);
      Py_DECREF(sid_obj);
      return NULL;
    }
  } else {
    Py_INCREF(cap);
  }
  PyObject *r = PyTuple_Pack(2, sid_obj, cap);
  Py_DECREF(sid_obj);
  Py_DECREF(cap);
  return r;
}

static PyObject *hs_py_table_scan(hs_py_table *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"snapshot_id", "columns", "filter", "limit", "batch_rows", NULL};
  PyObject *sid_obj = Py_None, *cols_obj = Py_None, *filter_obj = Py_None;
  long long limit = -1, batch_rows = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOOLL:scan", kwlist, &sid_obj, &cols_obj,
                                   &filter_obj, &limit, &batch_rows)) {
    return NULL;
  }
  if (batch_rows < 0) return hs_py_raise_msg(hs_py_invalid_error, "batch_rows must be >= 0");
  if (limit < -1) return hs_py_raise_msg(hs_py_invalid_error, "limit must be >= 0");
  hs_scan_options opts;
  hs_scan_options_init(&opts);
  char **cols = NULL;
  size_t n_cols = 0;
  char *filter = NULL;
  if (hs_py_table_snapshot_arg(sid_obj, &opts.snapshot_id) < 0) return NULL;
  if (filter_obj != Py_None) {
    const char *f = PyUnicode_Check(filter_obj) ? hs_py_text(filter_obj, "filter") : NULL;
    if (f == NULL) {
      if (!PyErr_Occurred()) hs_py_raise_msg(hs_py_invalid_error, "filter must be a str");
      return NULL;
    }
    if ((filter = hs_strdup(f)) == NULL) return PyErr_NoMemory();
  }
  if (hs_py_table_names(cols_obj, "columns", &cols, &n_cols) < 0) {
    hs_free(filter);
    return NULL;
  }
  opts.columns = (const char *const *)cols;
  opts.n_columns = n_cols;
  opts.filter = filter;
  opts.limit = (int64_t)limit;
  opts.batch_rows_max = (int64_t)batch_rows;
  struct ArrowArrayStream stream;
  memset(&stream, 0, sizeof stream);
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_scan_query(self->table, &opts, &stream, &err);
  hs_py_table_leave(self, ts);
  hs_py_table_names_free(cols, n_cols);
  hs_free(filter);
  if (st != HS_OK) return hs_py_raise(st, &err, hs_py_table_uri(self));
  return hs_py_tstream_new(&stream, self->uri);
}

/* Time travel: resolve a time (ms) or a ref name to a snapshot id. */
static PyObject *hs_py_table_snapshot_at(hs_py_table *self, PyObject *arg) {
  long long ms = PyLong_AsLongLong(arg);
  if (ms == -1 && PyErr_Occurred()) return NULL;
  int64_t sid = -1;
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_snapshot_at(self->table, (int64_t)ms, &sid, &err);
  hs_py_table_leave(self, ts);
  if (st != HS_OK) return hs_py_raise(st, &err, hs_py_table_uri(self));
  return PyLong_FromLongLong((long long)sid);
}

static PyObject *hs_py_table_count_rows(hs_py_table *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"snapshot_id", NULL};
  PyObject *sid_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &sid_obj)) return NULL;
  long long sid = -1;
  if (sid_obj != Py_None && (sid = PyLong_AsLongLong(sid_obj)) == -1 && PyErr_Occurred())
    return NULL;
  int64_t rows = 0, deleted = 0, files = 0;
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_count_rows(self->table, (int64_t)sid, &rows, &deleted, &files, &err);
  hs_py_table_leave(self, ts);
  if (st != HS_OK) return hs_py_raise(st, &err, hs_py_table_uri(self));
  return Py_BuildValue("{s:L,s:L,s:L}", "rows", (long long)rows, "deleted", (long long)deleted,
                       "delete_files", (long long)files);
}

/* change_rows(snapshot_id=None, deletes=(), appends=(), mode_property=None,
 * what="change", keys=None, key_columns=None, keep_matched=False,
 * key_where=None, delete_unmatched=False, unmatched_filter=None,
 * append_select=0) -> dict: hs_table_change_rows. `deletes` are filter
 * strings (None: every row); `appends` objects with __arrow_c_stream__. */
static PyObject *hs_py_table_change_rows(hs_py_table *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"snapshot_id",
                           "deletes",
                           "appends",
                           "mode_property",
                           "what",
                           "keys",
                           "key_columns",
                           "keep_matched",
                           "key_where",
                           "delete_unmatched",
                           "unmatched_filter",
                           "append_select",
                           "merge_position_deletes",
                           NULL};
  PyObject *sid_obj = Py_None, *dels = NULL, *apps = NULL, *keys_obj = Py_None, *kcols = Py_None;
  const char *mode = NULL, *what = "change", *key_where = NULL, *unmatched_filter = NULL;
  int keep_matched = 0, delete_unmatched = 0, merge_posdel = 0;
  unsigned int append_select = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOzsOOpzpzIp:change_rows", kwlist, &sid_obj, &dels,
                                   &apps, &mode, &what, &keys_obj, &kcols, &keep_matched,
                                   &key_where, &delete_unmatched, &unmatched_filter, &append_select,
                                   &merge_posdel))
    return NULL;
  hs_row_change c;
  memset(&c, 0, sizeof c);
  c.keep_matched = keep_matched != 0;
  c.key_where = key_where;
  c.delete_unmatched = delete_unmatched != 0;
  c.unmatched_filter = unmatched_filter;
  c.append_select = append_select;
  c.merge_position_deletes = merge_posdel;
  if (hs_py_table_snapshot_arg(sid_obj, &c.snapshot_id) < 0) return NULL;
  PyObject *dl = dels != NULL ? PySequence_Fast(dels, "deletes must be a sequence") : NULL;
  PyObject *al = apps != NULL ? PySequence_Fast(apps, "appends must be a sequence") : NULL;
  if ((dels != NULL && dl == NULL) || (apps != NULL && al == NULL)) {
    Py_XDECREF(dl);
    Py_XDECREF(al);
    return NULL;
  }
  size_t nd = dl != NULL ? (size_t)PySequence_Fast_GET_SIZE(dl) : 0;
  size_t na = al != NULL ? (size_t)PySequence_Fast_GET_SIZE(al) : 0;
  char **filters = hs_calloc(nd + 1, sizeof *filters);
  struct ArrowArrayStream *streams = hs_calloc(na + 1, sizeof *streams);
  int bad = filters == NULL || streams == NULL;
  if (bad) PyErr_NoMemory();
  for (size_t i = 0; !bad && i < nd; i++) {
    PyObject *f = PySequence_Fast_GET_ITEM(dl, (Py_ssize_t)i);
    if (f == Py_None) continue;
    const char *s = PyUnicode_Check(f) ? hs_py_text(f, "filter") : NULL;
    if (s == NULL) {
      if (!PyErr_Occurred()) hs_py_raise_msg(hs_py_invalid_error, "a delete filter must be a str");
      bad = 1;
    } else if ((filters[i] = hs_strdup(s)) == NULL) {
      PyErr_NoMemory();
      bad = 1;
    }
  }
  size_t taken = 0;
  for (; !bad && taken < na; taken++)
    if (hs_py_table_take(PySequence_Fast_GET_ITEM(al, (Py_ssize_t)taken), "__arrow_c_stream__",
                         "arrow_array_stream", &streams[taken], sizeof streams[taken],
                         offsetof(struct ArrowArrayStream, release)) < 0)
      bad = 1;
  Py_XDECREF(dl);
  Py_XDECREF(al);
  /* Keys: a stream of the key columns, collected into batches here. */
  char **kc = NULL;
  size_t n_kc = 0;
  struct ArrowSchema kschema;
  memset(&kschema, 0, sizeof kschema);
  struct ArrowArray *kb = NULL;
  size_t n_kb = 0, n_keys = 0;
  uint8_t *matched = NULL, *matched_where = NULL;
  if (!bad && keys_obj != Py_None) {
    struct ArrowArrayStream ks;
    hs_error kerr = {0};
    if (hs_py_table_names(kcols, "key_columns", &kc, &n_kc) < 0 ||
        hs_py_table_take(keys_obj, "__arrow_c_stream__", "arrow_array_stream", &ks, sizeof ks,
                         offsetof(struct ArrowArrayStream, release)) < 0) {
      bad = 1;
    } else {
      hs_status kst = hs_arrow_stream_collect(&ks, &kschema, &kb, &n_kb, &kerr);
      ks.release(&ks);
      if (kst != HS_OK) {
        hs_py_raise(kst, &kerr, hs_py_table_uri(self));
        bad = 1;
      }
      for (size_t i = 0; !bad && i < n_kb; i++) n_keys += (size_t)kb[i].length;
      if (!bad && ((matched = hs_calloc(n_keys + 1, 1)) == NULL ||
                   (matched_where = hs_calloc(n_keys + 1, 1)) == NULL)) {
        PyErr_NoMemory();
        bad = 1;
      }
    }
  }
  PyObject *r = NULL;
  if (!bad) {
    c.key_columns = (const char *const *)kc;
    c.n_key_columns = keys_obj != Py_None ? n_kc : 0;
    c.keys_schema = &kschema;
    c.keys = kb;
    c.n_keys_batches = n_kb;
    c.key_matched = matched;
    c.key_matched_where = matched_where;
    c.what = what;
    c.deletes = (const char *const *)filters;
    c.n_deletes = nd;
    c.appends = streams;
    c.n_appends = na;
    c.mode_property = mode;
    hs_row_change_result res;
    hs_error err = {0};
    PyThreadState *ts = hs_py_table_enter(self);
    hs_status st = hs_table_change_rows(self->table, &c, &res, &err); /* consumes the streams */
    hs_py_table_leave(self, ts);
    if (st != HS_OK) {
      hs_py_raise(st, &err, hs_py_table_uri(self));
    } else {
      PyObject *sid = res.snapshot_id < 0 ? (Py_INCREF(Py_None), Py_None)
                                          : PyLong_FromLongLong((long long)res.snapshot_id);
      PyObject *km = matched != NULL
                         ? PyBytes_FromStringAndSize((const char *)matched, (Py_ssize_t)n_keys)
                         : (Py_INCREF(Py_None), Py_None);
      PyObject *kmw = matched_where != NULL ? PyBytes_FromStringAndSize((const char *)matched_where,
                                                                        (Py_ssize_t)n_keys)
                                            : (Py_INCREF(Py_None), Py_None);
      r = Py_BuildValue(
          "{s:N,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:N,s:N}", "snapshot_id", sid, "rows_deleted",
          (long long)res.rows_deleted, "rows_added", (long long)res.rows_added, "files_added",
          (long long)res.files_added, "files_removed", (long long)res.files_removed,
          "delete_files_added", (long long)res.delete_files_added, "delete_files_removed",
          (long long)res.delete_files_removed, "rows_matched_deleted",
          (long long)res.rows_matched_deleted, "key_matched", km, "key_matched_where", kmw);
    }
  } else {
    for (size_t i = 0; i < taken; i++)
      if (streams[i].release != NULL) streams[i].release(&streams[i]);
  }
  for (size_t i = 0; filters != NULL && i < nd; i++) hs_free(filters[i]);
  hs_free(filters);
  hs_free(streams);
  hs_py_table_names_free(kc, n_kc);
  hs_arrow_batches_free(kb, n_kb);
  hs_arrow_schema_release(&kschema);
  hs_free(matched);
  hs_free(matched_where);
  return r;
}

static PyObject *hs_py_table_ref_snapshot(hs_py_table *self, PyObject *arg) {
  const char *name = PyUnicode_Check(arg) ? hs_py_text(arg, "ref name") : NULL;
  if (name == NULL) {
    if (!PyErr_Occurred()) hs_py_raise_msg(hs_py_invalid_error, "a ref name must be a str");
    return NULL;
  }
  int64_t sid = -1;
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_ref_snapshot(self->table, name, &sid, &err);
  hs_py_table_leave(self, ts);
  if (st != HS_OK) return hs_py_raise(st, &err, hs_py_table_uri(self));
  return PyLong_FromLongLong((long long)sid);
}

static PyObject *hs_py_table_refs(hs_py_table *self, PyObject *unused) {
  (void)unused;
  hs_table_ref_info *v = NULL;
  size_t n = 0;
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_refs(self->table, &v, &n, &err);
  /* Names are borrowed from the table: build the list still holding the
   * lock (waiters hold no GIL, so taking it back here cannot deadlock). */
  PyEval_RestoreThread(ts);
  if (st != HS_OK) {
    PyThread_release_lock(self->lock);
    hs_free(v);
    return hs_py_raise(st, &err, hs_py_table_uri(self));
  }
  PyObject *list;
  list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list != NULL && i < n; i++) {
    PyObject *d =
        Py_BuildValue("{s:s,s:L,s:s,s:N,s:N,s:N}", "name", v[i].name, "snapshot_id",
                      (long long)v[i].snapshot_id, "type", v[i].is_tag ? "tag" : "branch",
                      "max_ref_age_ms", hs_py_table_opt(v[i].max_ref_age_ms), "max_snapshot_age_ms",
                      hs_py_table_opt(v[i].max_snapshot_age_ms), "min_snapshots_to_keep",
                      hs_py_table_opt(v[i].min_snapshots_to_keep));
    if (d == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, d);
  }
  PyThread_release_lock(self->lock);
  hs_free(v);
  return list;
}

static PyObject *hs_py_table_history(hs_py_table *self, PyObject *unused) {
  (void)unused;
  hs_table_history_entry *v = NULL;
  size_t n = 0;
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_history(self->table, &v, &n, &err);
  hs_py_table_leave(self, ts);
  if (st != HS_OK) return hs_py_raise(st, &err, hs_py_table_uri(self));
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list != NULL && i < n; i++) {
    PyObject *d =
        Py_BuildValue("{s:L,s:L,s:N,s:O}", "made_current_at_ms", (long long)v[i].made_current_at_ms,
                      "snapshot_id", (long long)v[i].snapshot_id, "parent_snapshot_id",
                      hs_py_table_opt(v[i].parent_snapshot_id), "is_current_ancestor",
                      v[i].is_current_ancestor ? Py_True : Py_False);
    if (d == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, d);
  }
  hs_free(v);
  return list;
}

static PyObject *hs_py_table_rollback(hs_py_table *self, PyObject *arg) {
  long long sid = PyLong_AsLongLong(arg);
  if (sid == -1 && PyErr_Occurred()) return NULL;
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_rollback_to_snapshot(self->table, (int64_t)sid, &err);
  hs_py_table_leave(self, ts);
  if (st != HS_OK) return hs_py_raise(st, &err, hs_py_table_uri(self));
  Py_RETURN_NONE;
}

static PyObject *hs_py_table_create_ref(hs_py_table *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"name", "snapshot_id", "branch", "max_ref_age_ms", NULL};
  const char *name;
  PyObject *sid_obj = Py_None;
  int branch = 0;
  long long max_age = -1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|OpL:create_ref", kwlist, &name, &sid_obj,
                                   &branch, &max_age)) {
    return NULL;
  }
  int64_t sid;
  if (hs_py_table_snapshot_arg(sid_obj, &sid) < 0) return NULL;
  char *copy = hs_strdup(name);
  if (copy == NULL) return PyErr_NoMemory();
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = branch ? hs_table_create_branch(self->table, copy, sid, &err)
                        : hs_table_create_tag(self->table, copy, sid, (int64_t)max_age, &err);
  hs_py_table_leave(self, ts);
  hs_free(copy);
  if (st != HS_OK) return hs_py_raise(st, &err, hs_py_table_uri(self));
  Py_RETURN_NONE;
}

/* set_partition_spec([(source, transform, name or None), ...]) */
static PyObject *hs_py_table_set_spec(hs_py_table *self, PyObject *arg) {
  PyObject *seq = PySequence_Fast(arg, "fields must be a list of (source, transform, name)");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  hs_table_partition_field *f = hs_calloc((size_t)n + 1, sizeof *f);
  char **strs = hs_calloc((size_t)n * 3 + 1, sizeof *strs);
  PyObject *result = NULL;
  if (f == NULL || strs == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *t = PySequence_Fast_GET_ITEM(seq, i);
    const char *src, *tr, *nm = NULL;
    if (!PyArg_ParseTuple(t, "ss|z", &src, &tr, &nm)) goto done;
    strs[3 * i] = hs_strdup(src);
    strs[3 * i + 1] = hs_strdup(tr);
    strs[3 * i + 2] = nm ? hs_strdup(nm) : NULL;
    if (strs[3 * i] == NULL || strs[3 * i + 1] == NULL || (nm && strs[3 * i + 2] == NULL)) {
      PyErr_NoMemory();
      goto done;
    }
    f[i].source = strs[3 * i];
    f[i].transform = strs[3 * i + 1];
    f[i].name = strs[3 * i + 2];
  }
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_set_partition_spec(self->table, f, (size_t)n, &err);
  hs_py_table_leave(self, ts);
  if (st != HS_OK) {
    hs_py_raise(st, &err, hs_py_table_uri(self));
    goto done;
  }
  result = Py_None;
  Py_INCREF(result);
done:
  for (Py_ssize_t i = 0; strs != NULL && i < 3 * n; i++) hs_free(strs[i]);
  hs_free(strs);
  hs_free(f);
  Py_DECREF(seq);
  return result;
}

/* set_sort_order(columns, ascending=None, nulls_first=None) */
static PyObject *hs_py_table_set_order(hs_py_table *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"columns", "ascending", "nulls_first", NULL};
  PyObject *cols_obj, *asc_obj = Py_None, *nf_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:set_sort_order", kwlist, &cols_obj, &asc_obj,
                                   &nf_obj)) {
    return NULL;
  }
  char **cols = NULL;
  size_t n = 0;
  if (hs_py_table_names(cols_obj, "columns", &cols, &n) < 0) return NULL;
  int *asc = NULL, *nf = NULL;
  PyObject *flags[2] = {asc_obj, nf_obj};
  int **outs[2] = {&asc, &nf};
  const char *names[2] = {"ascending", "nulls_first"};
  PyObject *result = NULL;
  for (int k = 0; k < 2; k++) {
    if (flags[k] == Py_None) continue;
    PyObject *seq = PySequence_Fast(flags[k], "expected a list of bools");
    if (seq == NULL) goto done;
    if ((size_t)PySequence_Fast_GET_SIZE(seq) != n) {
      Py_DECREF(seq);
      hs_py_raise_msg(hs_py_invalid_error, "%s has %zd entries for %zu columns", names[k],
                      PySequence_Fast_GET_SIZE(flags[k]), n);
      goto done;
    }
    *outs[k] = hs_calloc(n + 1, sizeof(int));
    if (*outs[k] == NULL) {
      Py_DECREF(seq);
      PyErr_NoMemory();
      goto done;
    }
    for (size_t i = 0; i < n; i++) {
      int b = PyObject_IsTrue(PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i));
      if (b < 0) {
        Py_DECREF(seq);
        goto done;
      }
      (*outs[k])[i] = b;
    }
    Py_DECREF(seq);
  }
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_set_sort_order(self->table, (const char *const *)cols, asc, nf, n, &err);
  hs_py_table_leave(self, ts);
  if (st != HS_OK) {
    hs_py_raise(st, &err, hs_py_table_uri(self));
    goto done;
  }
  result = Py_None;
  Py_INCREF(result);
done:
  hs_py_table_names_free(cols, n);
  hs_free(asc);
  hs_free(nf);
  return result;
}

static PyObject *hs_py_table_schema(hs_py_table *self, PyObject *unused) {
  (void)unused;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_schema(self->table, &schema, &err);
  hs_py_table_leave(self, ts);
  if (st != HS_OK) return hs_py_raise(st, &err, hs_py_table_uri(self));
  return hs_py_table_schema_capsule_take(&schema);
}

static PyObject *hs_py_table_snapshots(hs_py_table *self, PyObject *unused) {
  (void)unused;
  hs_table_snapshot_info *v = NULL;
  size_t n = 0;
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_snapshots(self->table, &v, &n, &err);
  hs_py_table_leave(self, ts);
  if (st != HS_OK) return hs_py_raise(st, &err, hs_py_table_uri(self));
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list != NULL && i < n; i++) {
    const hs_table_snapshot_info *s = &v[i];
    PyObject *d = Py_BuildValue(
        "{s:L,s:N,s:L,s:L,s:s,s:N,s:N,s:N,s:N}", "snapshot_id", (long long)s->snapshot_id,
        "parent_snapshot_id", hs_py_table_opt(s->parent_snapshot_id), "sequence_number",
        (long long)s->sequence_number, "timestamp_ms", (long long)s->timestamp_ms, "operation",
        s->operation, "added_records", hs_py_table_opt(s->added_records), "total_records",
        hs_py_table_opt(s->total_records), "added_data_files", hs_py_table_opt(s->added_data_files),
        "total_data_files", hs_py_table_opt(s->total_data_files));
    if (d == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, d);
  }
  hs_free(v);
  return list;
}

static PyObject *hs_py_table_refresh(hs_py_table *self, PyObject *unused) {
  (void)unused;
  hs_error err = {0};
  PyThreadState *ts = hs_py_table_enter(self);
  hs_status st = hs_table_refresh(self->table, &err);
  hs_py_table_leave(self, ts);
  if (st != HS_OK) return hs_py_raise(st, &err, hs_py_table_uri(self));
  Py_RETURN_NONE;
}

static PyObject *hs_py_table_set_staleness(hs_py_table *self, PyObject *arg) {
  long long ms = PyLong_AsLongLong(arg);
  if (ms == -1 && PyErr_Occurred()) return NULL;
  PyThreadState *ts = hs_py_table_enter(self);
  hs_table_set_staleness_ms(self->table, (int64_t)ms);
  hs_py_table_leave(self, ts);
  Py_RETURN_NONE;
}

static PyObject *hs_py_table_current_get(hs_py_table *self, void *unused) {
  (void)unused;
  PyThreadState *ts = hs_py_table_enter(self);
  int64_t id = hs_table_current_snapshot_id(self->table);
  hs_py_table_leave(self, ts);
  return hs_py_table_opt(id);
}

static PyObject *hs_py_table_location_get(hs_py_table *self, void *unused) {
  (void)unused;
  PyThreadState *ts = hs_py_table_enter(self);
  char *loc = hs_strdup(hs_table_metadata_location(self->table));
  hs_py_table_leave(self, ts);
  if (loc == NULL) return PyErr_NoMemory();
  PyObject *out = PyUnicode_DecodeFSDefault(loc);
  hs_free(loc);
  return out;
}

static PyObject *hs_py_table_version_get(hs_py_table *self, void *unused) {
  (void)unused;
  PyThreadState *ts = hs_py_table_enter(self);
  int64_t v = hs_table_version(self->table);
  hs_py_table_leave(self, ts);
  return PyLong_FromLongLong((long long)v);
}

static PyObject *hs_py_table_repr(hs_py_table *self) {
  return PyUnicode_FromFormat("<TableHandle %R>", self->uri);
}

static PyMethodDef hs_py_table_methods[] = {
    {"append", (PyCFunction)(void (*)(void))hs_py_table_append, METH_VARARGS | METH_KEYWORDS,
     "append(data, keep=False) -> int | None\n\n"
     "Append every batch of `data` (an object with __arrow_c_stream__, consumed) as one\n"
     "snapshot; its id, or None when the data had no rows. A schema that differs from\n"
     "the table's raises SchemaError and writes nothing. keep=True returns (id, kept):\n"
     "kept holds the written batches and data file for index_build(appended=[...])\n"
     "(None for partitioned or sorted tables and empty data)."},
    {"scan", (PyCFunction)(void (*)(void))hs_py_table_scan, METH_VARARGS | METH_KEYWORDS,
     "scan(snapshot_id=None, columns=None, filter=None, limit=-1, batch_rows=0) -> TableStream\n\n"
     "Stream the rows of a snapshot (None: the current one) matching the SQL boolean\n"
     "`filter`, projected to `columns`, at most `limit` rows (-1: all)."},
    {"snapshot_at", (PyCFunction)hs_py_table_snapshot_at, METH_O,
     "snapshot_at(ms) -> int\n\nThe snapshot that was current at `ms` since the epoch."},
    {"count_rows", (PyCFunction)(void (*)(void))hs_py_table_count_rows,
     METH_VARARGS | METH_KEYWORDS,
     "count_rows(snapshot_id=None) -> dict\n\nLive rows (deletes applied), rows deleted and "
     "live delete files of a snapshot, from the scan plan (no data read)."},
    {"change_rows", (PyCFunction)(void (*)(void))hs_py_table_change_rows,
     METH_VARARGS | METH_KEYWORDS,
     "change_rows(snapshot_id=None, deletes=(), appends=(), mode_property=None, what='change', "
     "keys=None, key_columns=None, keep_matched=False, key_where=None, delete_unmatched=False, "
     "unmatched_filter=None, append_select=0, merge_position_deletes=False) -> dict\n\nDelete the "
     "live rows matching each "
     "filter (and whose key_columns equal a row of `keys`, unless keep_matched; only those "
     "satisfying key_where when given; with delete_unmatched also the rows matching no key "
     "that satisfy unmatched_filter) and append each stream (append_select: 1 matched, 2 "
     "unmatched key rows' source rows only), in one commit (hs_table_change_rows); "
     "'key_matched' / 'key_matched_where' have a byte per key row."},
    {"ref_snapshot", (PyCFunction)hs_py_table_ref_snapshot, METH_O,
     "ref_snapshot(name) -> int\n\nThe snapshot a tag or branch points at."},
    {"refs", (PyCFunction)hs_py_table_refs, METH_NOARGS,
     "refs() -> list[dict]\n\nEvery tag and branch (main included)."},
    {"history", (PyCFunction)hs_py_table_history, METH_NOARGS,
     "history() -> list[dict]\n\nThe snapshot log, oldest first."},
    {"rollback_to_snapshot", (PyCFunction)hs_py_table_rollback, METH_O,
     "rollback_to_snapshot(snapshot_id) -> None\n\nMake an ancestor snapshot current again."},
    {"create_ref", (PyCFunction)(void (*)(void))hs_py_table_create_ref,
     METH_VARARGS | METH_KEYWORDS,
     "create_ref(name, snapshot_id=None, branch=False, max_ref_age_ms=-1) -> None\n\n"
     "Name a snapshot (None: the current one) with a new tag or branch."},
    {"set_partition_spec", (PyCFunction)hs_py_table_set_spec, METH_O,
     "set_partition_spec([(source, transform, name or None), ...]) -> None\n\n"
     "Make this spec the default for later writes (metadata-only commit)."},
    {"set_sort_order", (PyCFunction)(void (*)(void))hs_py_table_set_order,
     METH_VARARGS | METH_KEYWORDS,
     "set_sort_order(columns, ascending=None, nulls_first=None) -> None\n\n"
     "Make this sort order the default for later writes (metadata-only commit)."},
    {"schema", (PyCFunction)hs_py_table_schema, METH_NOARGS,
     "schema() -> PyCapsule\n\nThe table schema as a PyCapsule 'arrow_schema'."},
    {"snapshots", (PyCFunction)hs_py_table_snapshots, METH_NOARGS,
     "snapshots() -> list[dict]\n\nEvery snapshot of the loaded version, in commit order."},
    {"refresh", (PyCFunction)hs_py_table_refresh, METH_NOARGS,
     "refresh() -> None\n\nLoad the latest committed version."},
    {"set_staleness_ms", (PyCFunction)hs_py_table_set_staleness, METH_O,
     "set_staleness_ms(ms) -> None\n\nRefreshes within ms of the last check trust the loaded\n"
     "version (hs_table_set_staleness_ms; 0: every refresh checks)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef hs_py_table_getset[] = {
    {"current_snapshot_id", (getter)hs_py_table_current_get, NULL,
     "Current snapshot id of the loaded version, or None.", NULL},
    {"metadata_location", (getter)hs_py_table_location_get, NULL,
     "Path of the loaded metadata/vN.metadata.json.", NULL},
    {"version", (getter)hs_py_table_version_get, NULL, "N of the loaded vN.metadata.json.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef hs_py_table_members[] = {
    {"uri", T_OBJECT, offsetof(hs_py_table, uri), READONLY, "The table folder as given."},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject hs_py_table_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hyperstreamdb._core.TableHandle",
    .tp_basicsize = sizeof(hs_py_table),
    .tp_dealloc = (destructor)hs_py_table_dealloc,
    .tp_repr = (reprfunc)hs_py_table_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An open Iceberg table (use hyperstreamdb.Table).",
    .tp_methods = hs_py_table_methods,
    .tp_members = hs_py_table_members,
    .tp_getset = hs_py_table_getset,
};

/* A handle object around nothing yet; NULL + exception on failure. */
static hs_py_table *hs_py_table_alloc(PyObject *uri_obj) {
  hs_py_table *obj = PyObject_New(hs_py_table, &hs_py_table_type);
  if (obj == NULL) return NULL;
  obj->table = NULL;
  obj->uri = NULL;
  obj->lock = PyThread_allocate_lock();
  if (obj->lock == NULL) {
    Py_DECREF(obj);
    PyErr_NoMemory();
    return NULL;
  }
  if (PyUnicode_Check(uri_obj)) Py_INCREF(uri_obj);
  obj->uri = PyUnicode_Check(uri_obj) ? uri_obj : PyObject_Str(uri_obj);
  if (obj->uri == NULL) {
    Py_DECREF(obj);
    return NULL;
  }
  return obj;
}

static PyObject *hs_py_table_open(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", NULL};
  PyObject *uri_obj;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:table_open", kwlist, &uri_obj)) return NULL;
  PyObject *path = hs_py_path(uri_obj);
  if (path == NULL) return NULL;
  hs_py_table *obj = hs_py_table_alloc(uri_obj);
  if (obj == NULL) {
    Py_DECREF(path);
    return NULL;
  }
  const char *p = PyBytes_AS_STRING(path);
  hs_error err = {0};
  PyThreadState *ts = PyEval_SaveThread();
  hs_status st = hs_table_open(p, &obj->table, &err);
  PyEval_RestoreThread(ts);
  if (st != HS_OK) {
    hs_py_raise(st, &err, p);
    Py_DECREF(path);
    Py_DECREF(obj);
    return NULL;
  }
  Py_DECREF(path);
  return (PyObject *)obj;
}

/* properties: None or a mapping of str to str, copied into `keys`/`values`. */
static int hs_py_table_properties(PyObject *obj, char ***keys, char ***values, size_t *n) {
  *keys = *values = NULL;
  *n = 0;
  if (obj == Py_None) return 0;
  if (!PyDict_Check(obj)) {
    hs_py_raise_msg(hs_py_invalid_error, "properties must be a dict of str to str");
    return -1;
  }
  Py_ssize_t count = PyDict_Size(obj), pos = 0, i = 0;
  *keys = hs_calloc((size_t)count + 1, sizeof(char *));
  *values = hs_calloc((size_t)count + 1, sizeof(char *));
  if (*keys == NULL || *values == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  PyObject *k, *v;
  while (PyDict_Next(obj, &pos, &k, &v)) {
    const char *ks = PyUnicode_Check(k) ? hs_py_text(k, "properties: key") : NULL;
    const char *vs = ks != NULL && PyUnicode_Check(v) ? hs_py_text(v, "properties: value") : NULL;
    if (ks == NULL || vs == NULL) {
      if (!PyErr_Occurred()) hs_py_raise_msg(hs_py_invalid_error, "properties must map str to str");
      return -1;
    }
    (*keys)[i] = hs_strdup(ks);
    (*values)[i] = hs_strdup(vs);
    *n = (size_t)++i;
    if ((*keys)[i - 1] == NULL || (*values)[i - 1] == NULL) {
      PyErr_NoMemory();
      return -1;
    }
  }
  return 0;
}

static PyObject *hs_py_table_create(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kwlist[] = {"uri", "schema", "format_version", "properties", NULL};
  PyObject *uri_obj, *schema_obj, *props = Py_None;
  int format_version = 2;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|iO:table_create", kwlist, &uri_obj,
                                   &schema_obj, &format_version, &props)) {
    return NULL;
  }
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  char **keys = NULL, **values = NULL;
  size_t n_props = 0;
  PyObject *path = NULL;
  hs_py_table *obj = NULL;
  if (hs_py_table_properties(props, &keys, &values, &n_props) < 0) goto fail;
  if (hs_py_table_take(schema_obj, "__arrow_c_schema__", "arrow_schema", &schema, sizeof schema,
                       offsetof(struct ArrowSchema, release)) < 0) {
    goto fail;
  }
  if ((path = hs_py_path(uri_obj)) == NULL) goto fail;
  if ((obj = hs_py_table_alloc(uri_obj)) == NULL) goto fail;
  const char *p = PyBytes_AS_STRING(path);
  hs_table_options opts;
  hs_table_options_init(&opts);
  opts.format_version = format_version;
  opts.property_keys = (const char *const *)keys;
  opts.property_values = (const char *const *)values;
  opts.n_properties = n_props;
  hs_error err = {0};
  PyThreadState *ts = PyEval_SaveThread();
  hs_status st = hs_table_create(p, &schema, &opts, &obj->table, &err);
  PyEval_RestoreThread(ts);
  if (st != HS_OK) {
    hs_py_raise(st, &err, p);
    goto fail;
  }
  schema.release(&schema);
  hs_py_table_names_free(keys, n_props);
  hs_py_table_names_free(values, n_props);
  Py_DECREF(path);
  return (PyObject *)obj;
fail:
  if (schema.release != NULL) schema.release(&schema);
  hs_py_table_names_free(keys, n_props);
  hs_py_table_names_free(values, n_props);
  Py_XDECREF(path);
  Py_XDECREF(obj);
  return NULL;
}

/* -------------------------------------------------------------- init */

static PyMethodDef hs_py_table_functions[] = {
    {"table_open", (PyCFunction)(void (*)(void))hs_py_table_open, METH_VARARGS | METH_KEYWORDS,
     "table_open(uri) -> TableHandle\n\n"
     "Open the Iceberg table in folder `uri` at its latest committed version\n"
     "(NotFoundError when the folder holds no table)."},
    {"table_create", (PyCFunction)(void (*)(void))hs_py_table_create, METH_VARARGS | METH_KEYWORDS,
     "table_create(uri, schema, format_version=2, properties=None) -> TableHandle\n\n"
     "Create an empty table with the Arrow `schema` (any object with __arrow_c_schema__)."},
    {NULL, NULL, 0, NULL}};

int hs_py_table_init(PyObject *module) {
  if (PyType_Ready(&hs_py_table_type) < 0 || PyType_Ready(&hs_py_tstream_type) < 0) return -1;
  if (PyModule_AddFunctions(module, hs_py_table_functions) < 0) return -1;
  Py_INCREF(&hs_py_table_type);
  if (PyModule_AddObject(module, "TableHandle", (PyObject *)&hs_py_table_type) < 0) {
    Py_DECREF(&hs_py_table_type);
    return -1;
  }
  Py_INCREF(&hs_py_tstream_type);
  if (PyModule_AddObject(module, "TableStream", (PyObject *)&hs_py_tstream_type) < 0) {
    Py_DECREF(&hs_py_tstream_type);
    return -1;
  }
  return 0;
}

/*
 * sql.c — the SqlSession type: a thin shell over hs_sql_* (the SQL layer,
 * src/sql/). Statements run with the GIL released; results come back as
 * SqlStream objects (the one-shot Arrow stream of stream.c). Errors in SQL
 * raise SqlError (an InvalidArgumentError, so also a ValueError) carrying
 * `.position`, the 1-based character position the message's caret marks.
 *
 * Ctrl-C: while a statement runs on the main thread (hs_sql_execute, or a
 * batch of its result read through SqlStream or by any Arrow consumer of
 * its C stream), SIGINT is caught by a handler of ours that only stores
 * the session's cancel flag (async-signal-safe); once the C call returns,
 * Python's handler is put back and the signal raised again, so Python
 * raises KeyboardInterrupt (or runs the program's own handler) as usual.
 *
 * Lifetime: a result stream may outlive SqlSession.close() and the object
 * itself; the C session is freed when the last of them lets go (sql_ref).
 */
#include "core.h"

#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <structmember.h>

#include "arrow/arrow.h"
#include "common/common.h"

int hs_py_sql_init(PyObject *module);

PyObject *hs_py_sql_error; /* SqlError(InvalidArgumentError) */

/* ------------------------------------------------ session ref, SIGINT */

/* The C session, shared by the SqlSession object and every result stream
 * it handed out; freed when the last reference goes (any thread). */
typedef struct sql_ref {
  hs_sql_session *s;
  long refs;
} sql_ref;

static void ref_drop(sql_ref *r) {
  if (r != NULL && __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    hs_sql_session_free(r->s);
    hs_free(r);
  }
}

static pthread_t g_main_thread;            /* the interpreter's main thread */
static hs_sql_session *volatile g_running; /* what our SIGINT handler cancels */
static volatile sig_atomic_t g_tripped;    /* SIGINT seen while installed */
static struct sigaction g_old_sigint;      /* the handler we replaced */
static int g_guard_depth;                  /* nested guards on the main thread */

static void on_sigint(int sig) {
  (void)sig;
  g_tripped = 1;
  hs_sql_session *s = g_running;
  if (s != NULL) hs_sql_cancel(s); /* an atomic store */
}

/* Around a C call that may run long (no GIL needed): on the main thread,
 * SIGINT cancels `s` instead of only tripping Python's flag, which nobody
 * would look at until the query ends. Returns whether the guard is on. */
static bool guard_begin(hs_sql_session *s) {
  if (!pthread_equal(pthread_self(), g_main_thread)) return false;
  if (g_guard_depth++ > 0) return false;
  g_tripped = 0;
  g_running = s;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGINT, &sa, &g_old_sigint) != 0 || g_old_sigint.sa_handler == SIG_IGN) {
    if (g_old_sigint.sa_handler == SIG_IGN) sigaction(SIGINT, &g_old_sigint, NULL);
    g_running = NULL;
    return false; /* guard_end still counts the depth down */
  }
  return true;
}

/* Put the old handler back; when SIGINT came meanwhile, raise it again for
 * that handler (Python's trips its flag: PyErr_CheckSignals raises
 * KeyboardInterrupt later). Returns whether SIGINT came. */
static bool guard_end(bool on) {
  if (!pthread_equal(pthread_self(), g_main_thread)) return false;
  g_guard_depth--;
  if (!on) return false;
  sigaction(SIGINT, &g_old_sigint, NULL);
  g_running = NULL;
  if (!g_tripped) return false;
  g_tripped = 0;
  raise(SIGINT);
  return true;
}

/* The result stream handed to Python: the session's, with the guard
 * around get_next, a session reference, and the SQL text (for the caret
 * under a runtime error's position). */
typedef struct sql_wrap {
  struct ArrowArrayStream inner;
  sql_ref *ref;
  char *sql;
  int interrupted; /* the last get_next saw SIGINT */
} sql_wrap;

static int wrap_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
  sql_wrap *w = st->private_data;
  return w->inner.get_schema(&w->inner, out);
}

static int wrap_get_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
  sql_wrap *w = st->private_data;
  bool on = guard_begin(w->ref->s);
  int rc = w->inner.get_next(&w->inner, out);
  w->interrupted = guard_end(on);
  return rc;
}

static const char *wrap_get_last_error(struct ArrowArrayStream *st) {
  sql_wrap *w = st->private_data;
  return w->inner.get_last_error ? w->inner.get_last_error(&w->inner) : NULL;
}

static void wrap_release(struct ArrowArrayStream *st) {
  sql_wrap *w = st->private_data;
  if (w->inner.release != NULL) w->inner.release(&w->inner);
  ref_drop(w->ref);
  hs_free(w->sql);
  hs_free(w);
  st->release = NULL;
}

/* Move `inner` into a wrapper stream `out` (takes a reference on `ref`).
 * On failure `inner` is released and -1 returned with MemoryError. */
static int wrap_stream(struct ArrowArrayStream *inner, sql_ref *ref, const char *sql,
                       struct ArrowArrayStream *out) {
  sql_wrap *w = hs_calloc(1, sizeof *w);
  size_t n = strlen(sql);
  char *copy = hs_malloc(n + 1);
  if (w == NULL || copy == NULL) {
    hs_free(w);
    hs_free(copy);
    inner->release(inner);
    PyErr_NoMemory();
    return -1;
  }
  memcpy(copy, sql, n + 1);
  w->inner = *inner;
  inner->release = NULL;
  w->sql = copy;
  w->ref = ref;
  __atomic_add_fetch(&ref->refs, 1, __ATOMIC_ACQ_REL);
  memset(out, 0, sizeof *out);
  out->get_schema = wrap_get_schema;
  out->get_next = wrap_get_next;
  out->get_last_error = wrap_get_last_error;
  out->release = wrap_release;
  out->private_data = w;
  return 0;
}

/* The 1-based position in "at position N: ..." (0 when none). */
static int32_t message_position(const char *msg) {
  const char *p = msg != NULL ? strstr(msg, "at position ") : NULL;
  if (p == NULL) return 0;
  long v = strtol(p + 12, NULL, 10);
  return v > 0 && v < INT32_MAX ? (int32_t)v : 0;
}

/* Append the statement's line holding `pos` and a caret under it to `err`
 * (as session.c does for bind errors), unless the message has lines. */
static void add_caret(hs_error *err, const char *sql, int32_t pos) {
  if (pos <= 0 || sql == NULL || strchr(err->message, '\n') != NULL) return;
  size_t len = strlen(sql), at = 0;
  int32_t ch = 1;
  while (at < len && ch < pos) { /* characters, not bytes */
    at++;
    while (at < len && ((unsigned char)sql[at] & 0xC0) == 0x80) at++;
    ch++;
  }
  size_t start = at;
  while (start > 0 && sql[start - 1] != '\n') start--;
  size_t end = at;
  while (end < len && sql[end] != '\n') end++;
  int col = 0;
  for (size_t k = start; k < at; k++) col += ((unsigned char)sql[k] & 0xC0) != 0x80;
  size_t cur = strlen(err->message);
  if (cur + 8 >= sizeof err->message || end - start > 200) return;
  snprintf(err->message + cur, sizeof err->message - cur, "\n  %.*s\n  %*s^", (int)(end - start),
           sql + start, col, "");
}

/* ----------------------------------------------------------- SqlStream */

static PyObject *hs_py_sqlstream_repr(hs_py_stream *self) {
  return PyUnicode_FromFormat("<SqlStream batches_read=%lld %s>", self->batches_read,
                              hs_py_stream_state_names[self->state]);
}

static PyObject *raise_sql(hs_status st, const hs_error *err, int32_t pos);

/* Fail the stream (release it) and raise `st`/`msg` as raise_sql does,
 * with the caret under the message's position. */
static PyObject *sqlstream_fail(hs_py_stream *self, int rc) {
  sql_wrap *w = self->stream.private_data;
  const char *msg = self->stream.get_last_error ? self->stream.get_last_error(&self->stream) : NULL;
  hs_error err = {0};
  hs_status st = hs_status_of_errno(rc);
  hs_error_set(&err, st, "%s", msg != NULL ? msg : "reading the result failed");
  int32_t pos = message_position(err.message);
  add_caret(&err, w->sql, pos);
  self->stream.release(&self->stream);
  self->state = HS_PY_FAILED;
  return raise_sql(st, &err, pos);
}

static int sqlstream_check(hs_py_stream *self) {
  if (self->busy) {
    hs_py_raise_msg(hs_py_error, "this SqlStream is being read by another thread");
    return -1;
  }
  if (self->state != HS_PY_OPEN) {
    hs_py_raise_msg(hs_py_error,
                    "this SqlStream is %s; results are one-shot, run the statement again to "
                    "read it again",
                    hs_py_stream_state_names[self->state]);
    return -1;
  }
  return 0;
}

static PyObject *sqlstream_schema(hs_py_stream *self, PyObject *unused) {
  (void)unused;
  if (self->schema.release == NULL) {
    if (sqlstream_check(self) < 0) return NULL;
    int rc = self->stream.get_schema(&self->stream, &self->schema);
    if (rc != 0) {
      self->schema.release = NULL;
      return sqlstream_fail(self, rc);
    }
  }
  return hs_py_schema_capsule(&self->schema);
}

/* One batch as (schema capsule, array capsule), or None at the end; SQL
 * errors met while running raise SqlError with .position and the caret,
 * Ctrl-C cancels the statement and raises KeyboardInterrupt. */
static PyObject *sqlstream_next(hs_py_stream *self, PyObject *unused) {
  (void)unused;
  if (sqlstream_check(self) < 0) return NULL;
  if (self->schema.release == NULL) {
    PyObject *sc = sqlstream_schema(self, NULL);
    if (sc == NULL) return NULL;
    Py_DECREF(sc);
  }
  struct ArrowArray *arr = hs_calloc(1, sizeof *arr);
  if (arr == NULL) return PyErr_NoMemory();
  sql_wrap *w = self->stream.private_data;
  self->busy = 1;
  PyThreadState *ts = PyEval_SaveThread();
  int rc = self->stream.get_next(&self->stream, arr);
  PyEval_RestoreThread(ts);
  self->busy = 0;
  if (w->interrupted) {
    w->interrupted = 0;
    if (PyErr_CheckSignals() < 0) {
      if (rc == 0 && arr->release != NULL) arr->release(arr);
      hs_free(arr);
      self->stream.release(&self->stream);
      self->state = HS_PY_FAILED;
      return NULL;
    }
  }
  if (rc != 0) {
    hs_free(arr);
    return sqlstream_fail(self, rc);
  }
  if (arr->release == NULL) {
    hs_free(arr);
    self->stream.release(&self->stream);
    self->state = HS_PY_EXHAUSTED;
    Py_RETURN_NONE;
  }
  self->batches_read++;
  return hs_py_batch_capsules(&self->schema, arr);
}

/* A session's result schema cache (_core.sql_schema_cache(), one per
 * hyperstreamdb.Session): the schema of the last one-batch result read
 * through _read_all(cache) and the pyarrow Schema imported from it. A
 * result of the same schema (a statement run again) hands that Schema out
 * again instead of importing one (pyarrow's schema import was a fifth of a
 * small kNN statement's Python time). Read and written with the GIL held. */
#define HS_PY_SQL_SCHEMA_CACHE "hyperstreamdb.sql_schema_cache"

typedef struct sql_schema_cache {
  hs_py_schema_memo memo;
} sql_schema_cache;

static void schema_cache_free(PyObject *capsule) {
  sql_schema_cache *c = PyCapsule_GetPointer(capsule, HS_PY_SQL_SCHEMA_CACHE);
  if (c == NULL) {
    PyErr_Clear();
    return;
  }
  hs_py_schema_memo_clear(&c->memo);
  hs_free(c);
}

static PyObject *hs_py_sql_schema_cache(PyObject *module, PyObject *unused) {
  (void)module, (void)unused;
  sql_schema_cache *c = hs_calloc(1, sizeof *c);
  if (c == NULL) return PyErr_NoMemory();
  PyObject *cap = PyCapsule_New(c, HS_PY_SQL_SCHEMA_CACHE, schema_cache_free);
  if (cap == NULL) hs_free(c);
  return cap;
}

/* (array capsule, its address, pyarrow Schema) for the one batch `arr`
 * (taken) of schema `sc` (released): pyarrow.RecordBatch._import_from_c
 * (address, schema) imports it. NULL with a Python error on failure. */
static PyObject *one_batch(sql_schema_cache *c, struct ArrowSchema *sc, struct ArrowArray *arr) {
  struct ArrowArray *heap = hs_malloc(sizeof *heap);
  if (heap == NULL) {
    arr->release(arr);
    sc->release(sc);
    return PyErr_NoMemory();
  }
  *heap = *arr;
  arr->release = NULL;
  return hs_py_batch_result(&c->memo, sc, heap);
}

/* The statement run to its end in one call (the GIL released once): every
 * batch collected into an 'arrow_array_stream' capsule that a consumer
 * reads at once (pyarrow's RecordBatchReader.read_all: no Python work per
 * batch); with a schema cache and exactly one batch, that batch as
 * one_batch gives it. Errors and Ctrl-C as _next_batch. */
static PyObject *sqlstream_read_all(hs_py_stream *self, PyObject *args) {
  PyObject *cache_o = Py_None;
  if (!PyArg_ParseTuple(args, "|O:_read_all", &cache_o)) return NULL;
  sql_schema_cache *cache = NULL;
  if (cache_o != Py_None && (cache = PyCapsule_GetPointer(cache_o, HS_PY_SQL_SCHEMA_CACHE)) == NULL)
    return NULL;
  if (sqlstream_check(self) < 0) return NULL;
  sql_wrap *w = self->stream.private_data;
  struct ArrowSchema sc;
  memset(&sc, 0, sizeof sc);
  struct ArrowArray *batches = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  bool nomem = false;
  self->busy = 1;
  PyThreadState *ts = PyEval_SaveThread();
  /* one Ctrl-C guard for the whole read (the get_next calls' own guards
   * nest inside it and install nothing: two sigaction calls a batch saved) */
  bool on = guard_begin(w->ref->s);
  rc = self->stream.get_schema(&self->stream, &sc);
  while (rc == 0) {
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 8;
      struct ArrowArray *g = hs_realloc(batches, nc * sizeof *g);
      if (g == NULL) {
        nomem = true;
        break;
      }
      batches = g, cap = nc;
    }
    memset(&batches[n], 0, sizeof batches[n]);
    rc = self->stream.get_next(&self->stream, &batches[n]);
    if (rc != 0 || batches[n].release == NULL || w->interrupted) {
      if (rc == 0 && batches[n].release != NULL) n++;
      break;
    }
    n++;
  }
  if (guard_end(on)) w->interrupted = 1;
  PyEval_RestoreThread(ts);
  self->busy = 0;
  bool failed = rc != 0 || nomem;
  if (w->interrupted) {
    w->interrupted = 0;
    if (PyErr_CheckSignals() < 0) failed = true;
  }
  if (failed) {
    hs_arrow_batches_free(batches, n);
    if (sc.release != NULL) sc.release(&sc);
    if (PyErr_Occurred()) { /* KeyboardInterrupt */
      self->stream.release(&self->stream);
      self->state = HS_PY_FAILED;
      return NULL;
    }
    if (nomem) return PyErr_NoMemory();
    return sqlstream_fail(self, rc);
  }
  self->stream.release(&self->stream);
  self->state = HS_PY_EXHAUSTED;
  if (cache != NULL && n == 1) {
    PyObject *r = one_batch(cache, &sc, &batches[0]);
    hs_free(batches);
    return r;
  }
  struct ArrowArrayStream *heap = hs_malloc(sizeof *heap);
  hs_error err = {0};
  if (heap == NULL) {
    hs_arrow_batches_free(batches, n);
    sc.release(&sc);
    return PyErr_NoMemory();
  }
  hs_status st = hs_arrow_stream_from_batches(&sc, batches, n, heap, &err); /* moves them */
  hs_free(batches);                                                         /* the container */
  if (st != HS_OK) {
    hs_free(heap);
    return PyErr_NoMemory();
  }
  PyObject *capsule = PyCapsule_New(heap, "arrow_array_stream", hs_py_stream_capsule_free);
  if (capsule == NULL) {
    heap->release(heap);
    hs_free(heap);
  }
  return capsule;
}

/* stream.c's methods plus the three above; filled in hs_py_sql_init. */
static PyMethodDef hs_py_sqlstream_methods[20];

static PyMemberDef hs_py_sqlstream_members[] = {
    {"batches_read", T_LONGLONG, offsetof(hs_py_stream, batches_read), READONLY,
     "Batches read so far through _read_next."},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject hs_py_sqlstream_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hyperstreamdb._core.SqlStream",
    .tp_basicsize = sizeof(hs_py_stream),
    .tp_dealloc = hs_py_stream_dealloc,
    .tp_repr = (reprfunc)hs_py_sqlstream_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A one-shot stream of the record batches of one SQL statement's result.",
    .tp_methods = hs_py_sqlstream_methods,
    .tp_members = hs_py_sqlstream_members,
    .tp_getset = hs_py_stream_getset,
};

/* ---------------------------------------------------------- SqlSession */

typedef struct hs_py_sql {
  PyObject_HEAD sql_ref *ref; /* NULL once closed */
  int busy;                   /* a statement is running (another thread must not start one) */
} hs_py_sql;

static int hs_py_sql_init_obj(hs_py_sql *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"root", NULL};
  PyObject *root = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:SqlSession", kwlist, &root)) return -1;
  PyObject *path = NULL;
  const char *r = NULL;
  if (root != Py_None) {
    path = hs_py_path(root);
    if (path == NULL) return -1;
    r = PyBytes_AS_STRING(path);
  }
  hs_error err = {0};
  hs_sql_session *s = NULL;
  hs_status st;
  Py_BEGIN_ALLOW_THREADS st = hs_sql_session_new(r, &s, &err);
  Py_END_ALLOW_THREADS Py_XDECREF(path);
  if (st != HS_OK) {
    hs_py_raise(st, &err, NULL);
    return -1;
  }
  sql_ref *ref = hs_malloc(sizeof *ref);
  if (ref == NULL) {
    hs_sql_session_free(s);
    PyErr_NoMemory();
    return -1;
  }
  ref->s = s;
  ref->refs = 1;
  ref_drop(self->ref);
  self->ref = ref;
  return 0;
}

static void hs_py_sql_dealloc(hs_py_sql *self) {
  ref_drop(self->ref);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static hs_sql_session *session_of(hs_py_sql *self) {
  if (self->ref == NULL) {
    hs_py_raise_msg(hs_py_invalid_error, "the SqlSession is closed");
    return NULL;
  }
  return self->ref->s;
}

static PyObject *hs_py_sql_register_table(hs_py_sql *self, PyObject *args) {
  PyObject *name_o, *uri_o;
  if (!PyArg_ParseTuple(args, "OO:register_table", &name_o, &uri_o)) return NULL;
  hs_sql_session *s = session_of(self);
  const char *name = hs_py_text(name_o, "name");
  if (s == NULL || name == NULL) return NULL;
  PyObject *path = hs_py_path(uri_o);
  if (path == NULL) return NULL;
  hs_error err = {0};
  hs_status st;
  Py_BEGIN_ALLOW_THREADS st = hs_sql_register_table(s, name, PyBytes_AS_STRING(path), &err);
  Py_END_ALLOW_THREADS Py_DECREF(path);
  if (st != HS_OK) return hs_py_raise(st, &err, NULL);
  Py_RETURN_NONE;
}

static PyObject *hs_py_sql_register_stream(hs_py_sql *self, PyObject *args) {
  PyObject *name_o, *data;
  if (!PyArg_ParseTuple(args, "OO:register_stream", &name_o, &data)) return NULL;
  hs_sql_session *s = session_of(self);
  const char *name = hs_py_text(name_o, "name");
  if (s == NULL || name == NULL) return NULL;
  PyObject *capsule; /* an 'arrow_array_stream' capsule, or what exports one */
  if (PyCapsule_CheckExact(data)) {
    Py_INCREF(data);
    capsule = data;
  } else {
    capsule = PyObject_CallMethod(data, "__arrow_c_stream__", NULL);
  }
  if (capsule == NULL) return NULL;
  struct ArrowArrayStream *cs = PyCapsule_GetPointer(capsule, "arrow_array_stream");
  if (cs == NULL || cs->release == NULL) {
    Py_DECREF(capsule);
    if (!PyErr_Occurred())
      hs_py_raise_msg(hs_py_invalid_error, "the Arrow stream was already consumed");
    return NULL;
  }
  struct ArrowArrayStream stream = *cs;
  cs->release = NULL;
  Py_DECREF(capsule);
  hs_error err = {0};
  hs_status st;
  Py_BEGIN_ALLOW_THREADS st = hs_sql_register_stream(s, name, &stream, &err);
  Py_END_ALLOW_THREADS if (st != HS_OK) return hs_py_raise(st, &err, NULL);
  Py_RETURN_NONE;
}

static PyObject *hs_py_sql_unregister(hs_py_sql *self, PyObject *args) {
  PyObject *name_o;
  if (!PyArg_ParseTuple(args, "O:unregister", &name_o)) return NULL;
  hs_sql_session *s = session_of(self);
  const char *name = hs_py_text(name_o, "name");
  if (s == NULL || name == NULL) return NULL;
  hs_error err = {0};
  hs_status st = hs_sql_unregister(s, name, &err);
  if (st != HS_OK) return hs_py_raise(st, &err, NULL);
  Py_RETURN_NONE;
}

/* Raise SqlError (syntax and semantic errors, unknown relations) with
 * .position, or the status's usual class (UnsupportedError, MemoryError, ...)
 * with .position set too. */
static PyObject *raise_sql(hs_status st, const hs_error *err, int32_t pos) {
  /* an unknown relation named in the statement is an error in the SQL too */
  if (st != HS_ERR_INVALID_ARG && !(st == HS_ERR_NOT_FOUND && pos > 0)) {
    hs_py_raise(st, err, NULL);
  } else {
    PyObject *msg = PyUnicode_DecodeUTF8(err->message, (Py_ssize_t)strlen(err->message), "replace");
    if (msg == NULL) return NULL;
    PyErr_SetObject(hs_py_sql_error, msg);
    Py_DECREF(msg);
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value != NULL) {
    PyObject *p = PyLong_FromLong(pos);
    if (p != NULL) {
      PyObject_SetAttrString(value, "position", p);
      Py_DECREF(p);
    }
  }
  PyErr_Restore(type, value, tb);
  return NULL;
}

static PyObject *hs_py_sql_execute(hs_py_sql *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"sql", "params", NULL};
  PyObject *sql_o, *params = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:execute", kwlist, &sql_o, &params))
    return NULL;
  hs_sql_session *s = session_of(self);
  const char *sql = hs_py_text(sql_o, "sql");
  if (s == NULL || sql == NULL) return NULL;
  /* params: a list of plain values (_sql.py checked their kinds), or an object with
   * __arrow_c_array__ giving a struct array of one row */
  struct ArrowSchema *ps = NULL;
  struct ArrowArray *pa = NULL;
  PyObject *caps = NULL;
  hs_py_sql_params *pp = NULL;
  if (PyList_Check(params)) { /* plain values, built here (sql_params.c) */
    int rc = hs_py_sql_params_build(params, &pp);
    if (rc < 0) return NULL;
    if (rc == 0)
      return hs_py_raise_msg(hs_py_invalid_error,
                             "params: a list holds only None, bool, int, float, str and 1-D "
                             "float32 arrays (others through pyarrow)");
    ps = (struct ArrowSchema *)hs_py_sql_params_schema(pp);
    pa = (struct ArrowArray *)hs_py_sql_params_array(pp);
  } else if (params != Py_None) {
    caps = PyObject_CallMethod(params, "__arrow_c_array__", NULL);
    if (caps == NULL) return NULL;
    if (!PyTuple_Check(caps) || PyTuple_GET_SIZE(caps) != 2) {
      Py_DECREF(caps);
      return hs_py_raise_msg(hs_py_invalid_error,
                             "params: __arrow_c_array__ must return two capsules");
    }
    ps = PyCapsule_GetPointer(PyTuple_GET_ITEM(caps, 0), "arrow_schema");
    pa = PyCapsule_GetPointer(PyTuple_GET_ITEM(caps, 1), "arrow_array");
    if (ps == NULL || pa == NULL) {
      Py_DECREF(caps);
      return NULL;
    }
  }
  if (self->busy) {
    Py_XDECREF(caps);
    hs_py_sql_params_free(pp);
    return hs_py_raise_msg(hs_py_invalid_error,
                           "the SqlSession is running a statement in another thread; use one "
                           "session per thread");
  }
  self->busy = 1;
  struct ArrowArrayStream out;
  memset(&out, 0, sizeof out);
  hs_error err = {0};
  int32_t pos = 0;
  hs_status st;
  bool interrupted;
  Py_BEGIN_ALLOW_THREADS bool on = guard_begin(s);
  st = hs_sql_execute(s, sql, ps, pa, &out, &pos, &err);
  interrupted = guard_end(on);
  Py_END_ALLOW_THREADS self->busy = 0;
  Py_XDECREF(caps);
  hs_py_sql_params_free(pp);
  if (interrupted && PyErr_CheckSignals() < 0) {
    if (st == HS_OK) out.release(&out);
    return NULL;
  }
  if (st != HS_OK) return raise_sql(st, &err, pos);
  struct ArrowArrayStream wrapped;
  if (wrap_stream(&out, self->ref, sql, &wrapped) < 0) return NULL;
  out = wrapped;
  hs_py_stream *obj = PyObject_New(hs_py_stream, &hs_py_sqlstream_type);
  if (obj == NULL) {
    out.release(&out);
    return NULL;
  }
  hs_py_stream_init(obj, NULL, "run the statement again to read it again");
  hs_py_stream_take(obj, &out);
  return (PyObject *)obj;
}

static PyObject *hs_py_sql_cancel(hs_py_sql *self, PyObject *unused) {
  (void)unused;
  if (self->ref != NULL) hs_sql_cancel(self->ref->s);
  Py_RETURN_NONE;
}

static PyObject *hs_py_sql_set_memory_limit(hs_py_sql *self, PyObject *args) {
  long long bytes;
  if (!PyArg_ParseTuple(args, "L:set_memory_limit", &bytes)) return NULL;
  hs_sql_session *s = session_of(self);
  if (s == NULL) return NULL;
  if (bytes < 0)
    return hs_py_raise_msg(hs_py_invalid_error, "memory limit must be >= 0 (0: the default)");
  hs_sql_set_memory_limit(s, (int64_t)bytes);
  Py_RETURN_NONE;
}

static PyObject *hs_py_sql_close(hs_py_sql *self, PyObject *unused) {
  (void)unused;
  if (self->busy) return hs_py_raise_msg(hs_py_invalid_error, "a statement is running");
  ref_drop(self->ref); /* streams still open keep the C session */
  self->ref = NULL;
  Py_RETURN_NONE;
}

static PyMethodDef hs_py_sql_methods[] = {
    {"register_table", (PyCFunction)hs_py_sql_register_table, METH_VARARGS,
     "register_table(name, uri)\n\nMake the table folder `uri` the relation `name`."},
    {"register_stream", (PyCFunction)hs_py_sql_register_stream, METH_VARARGS,
     "register_stream(name, data)\n\nRead `data` (an 'arrow_array_stream' PyCapsule or any object "
     "with __arrow_c_stream__) whole and "
     "make it the relation `name`."},
    {"unregister", (PyCFunction)hs_py_sql_unregister, METH_VARARGS,
     "unregister(name)\n\nForget the relation `name`."},
    {"execute", (PyCFunction)(void (*)(void))hs_py_sql_execute, METH_VARARGS | METH_KEYWORDS,
     "execute(sql, params=None) -> SqlStream\n\nRun one statement. `params`: an object with "
     "__arrow_c_array__ giving a one-row struct array whose field i is $(i+1). SQL errors raise "
     "SqlError with .position."},
    {"cancel", (PyCFunction)hs_py_sql_cancel, METH_NOARGS,
     "cancel()\n\nAsk the running statement to stop (safe from any thread)."},
    {"set_memory_limit", (PyCFunction)hs_py_sql_set_memory_limit, METH_VARARGS,
     "set_memory_limit(bytes)\n\nThe per-statement memory limit (0: the default)."},
    {"close", (PyCFunction)hs_py_sql_close, METH_NOARGS, "close()\n\nFree the session."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject hs_py_sql_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hyperstreamdb._core.SqlSession",
    .tp_basicsize = sizeof(hs_py_sql),
    .tp_dealloc = (destructor)hs_py_sql_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "SqlSession(root=None): relations by name and SQL statements over them.",
    .tp_methods = hs_py_sql_methods,
    .tp_init = (initproc)hs_py_sql_init_obj,
    .tp_new = PyType_GenericNew,
};

int hs_py_sql_init(PyObject *module) {
  g_main_thread = pthread_self(); /* modules are imported on the main thread */
  size_t n = 0;
  for (const PyMethodDef *m = hs_py_stream_methods; m->ml_name != NULL; m++) {
    if (n + 4 >= sizeof hs_py_sqlstream_methods / sizeof hs_py_sqlstream_methods[0]) break;
    hs_py_sqlstream_methods[n++] = *m;
  }
  hs_py_sqlstream_methods[n++] = (PyMethodDef){
      "_next_batch", (PyCFunction)sqlstream_next, METH_NOARGS,
      "_next_batch() -> (PyCapsule, PyCapsule) | None\n\nRun the statement to its next batch: "
      "its 'arrow_schema' and 'arrow_array' capsules, or None at the end. Errors raise SqlError "
      "(with .position and the caret) or the HyperStreamError of the failure; Ctrl-C cancels "
      "the statement and raises KeyboardInterrupt."};
  hs_py_sqlstream_methods[n++] = (PyMethodDef){
      "_result_schema", (PyCFunction)sqlstream_schema, METH_NOARGS,
      "_result_schema() -> PyCapsule\n\nThe result's struct schema ('arrow_schema'); SQL "
      "errors raise SqlError."};
  hs_py_sqlstream_methods[n++] =
      (PyMethodDef){"_read_all", (PyCFunction)sqlstream_read_all, METH_VARARGS,
                    "_read_all(cache=None) -> PyCapsule | (PyCapsule, int, pyarrow.Schema)\n\n"
                    "Run the statement to its end: every batch in one 'arrow_array_stream' "
                    "capsule; with a _core.sql_schema_cache() and exactly one batch, (its "
                    "'arrow_array' capsule, the array's address, its pyarrow Schema) for "
                    "pyarrow.RecordBatch._import_from_c(address, schema). Errors as "
                    "_next_batch."};
  hs_py_sqlstream_methods[n] = (PyMethodDef){NULL, NULL, 0, NULL};
  if (PyType_Ready(&hs_py_sql_type) < 0 || PyType_Ready(&hs_py_sqlstream_type) < 0) return -1;
  PyObject *bases = PyTuple_Pack(1, hs_py_invalid_error);
  if (bases == NULL) return -1;
  hs_py_sql_error = PyErr_NewExceptionWithDoc(
      "hyperstreamdb.SqlError",
      "An error in a SQL statement (syntax, unknown name, type mismatch, division by zero, "
      "overflow, ...). `.position` is the 1-based character position the message marks.",
      bases, NULL);
  Py_DECREF(bases);
  if (hs_py_sql_error == NULL) return -1;
  Py_INCREF(hs_py_sql_error);
  if (PyModule_AddObject(module, "SqlError", hs_py_sql_error) < 0) return -1;
  Py_INCREF(&hs_py_sql_type);
  if (PyModule_AddObject(module, "SqlSession", (PyObject *)&hs_py_sql_type) < 0) return -1;
  Py_INCREF(&hs_py_sqlstream_type);
  if (PyModule_AddObject(module, "SqlStream", (PyObject *)&hs_py_sqlstream_type) < 0) return -1;
  static PyMethodDef cache_def = {
      "sql_schema_cache", (PyCFunction)hs_py_sql_schema_cache, METH_NOARGS,
      "sql_schema_cache() -> PyCapsule\n\nA result schema cache for SqlStream._read_all(cache) "
      "(one per Session)."};
  PyObject *f = PyCFunction_NewEx(&cache_def, NULL, NULL);
  if (f == NULL || PyModule_AddObject(module, "sql_schema_cache", f) < 0) {
    Py_XDECREF(f);
    return -1;
  }
  return 0;
}

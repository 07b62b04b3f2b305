/*
 * sql_params.c — a statement's `$n` parameters from a Python list, as the
 * one-row Arrow struct array hs_sql_execute takes, built in C over the
 * Python objects' own memory (no pyarrow arrays: building and freeing them
 * was a third of a small parameterized statement's time).
 *
 * Takes only what maps one way: None (null), bool, int (int64), float
 * (float64), str (large_string), and 1-D C-contiguous float32 buffers
 * (numpy; a vector, fixed_size_list<float>). _sql.py sends anything else
 * through pyarrow as before. The arrays point into the list's objects and
 * the buffer views held here (the objects referenced): valid until
 * hs_py_sql_params_free, which the caller runs after hs_sql_execute (that
 * copies what it keeps), with the GIL held.
 */
#include "core.h"

#include <string.h>

#include "common/common.h"

typedef struct one_param {
  struct ArrowSchema s, cs;
  struct ArrowArray a, ca;
  const void *bufs[3], *cbufs[2];
  struct ArrowSchema *sch[1];
  struct ArrowArray *ach[1];
  int64_t off[2];
  int64_t i64;
  double f64;
  uint8_t bit;
  char fmt[24], name[16];
  Py_buffer view;
  bool has_view;
} one_param;

struct hs_py_sql_params {
  struct ArrowSchema s;
  struct ArrowArray a;
  struct ArrowSchema **sch;
  struct ArrowArray **ach;
  const void *bufs[1];
  one_param *p;
  Py_ssize_t n;
  PyObject *items; /* PySequence_Fast of the list: keeps every object alive */
};

/* The arrays belong to hs_py_sql_params; release only marks them released. */
static void release_schema(struct ArrowSchema *s) {
  s->release = NULL;
}
static void release_array(struct ArrowArray *a) {
  a->release = NULL;
}

static void leaf(struct ArrowSchema *s, struct ArrowArray *a, const char *fmt, const char *name,
                 int64_t length, const void **bufs, int64_t n_buffers) {
  s->format = fmt;
  s->name = name;
  s->flags = ARROW_FLAG_NULLABLE;
  s->release = release_schema;
  a->length = length;
  a->n_buffers = n_buffers;
  a->buffers = bufs;
  a->release = release_array;
}

void hs_py_sql_params_free(hs_py_sql_params *pp) {
  if (pp == NULL) return;
  for (Py_ssize_t i = 0; i < pp->n; i++)
    if (pp->p[i].has_view) PyBuffer_Release(&pp->p[i].view);
  hs_free(pp->p);
  hs_free(pp->sch);
  hs_free(pp->ach);
  Py_XDECREF(pp->items);
  hs_free(pp);
}

/* One parameter; 1 taken, 0 not of a kind taken here, -1 error raised. */
static int one(one_param *q, PyObject *v, Py_ssize_t i) {
  snprintf(q->name, sizeof q->name, "p%zd", i + 1);
  if (v == Py_None) {
    leaf(&q->s, &q->a, "n", q->name, 1, NULL, 0);
    q->a.null_count = 1;
    return 1;
  }
  if (PyBool_Check(v)) {
    q->bit = v == Py_True ? 1 : 0;
    q->bufs[0] = NULL, q->bufs[1] = &q->bit;
    leaf(&q->s, &q->a, "b", q->name, 1, q->bufs, 2);
    return 1;
  }
  if (PyLong_CheckExact(v)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow != 0) return 0; /* pyarrow says what is wrong with it */
    if (x == -1 && PyErr_Occurred()) return -1;
    q->i64 = x;
    q->bufs[0] = NULL, q->bufs[1] = &q->i64;
    leaf(&q->s, &q->a, "l", q->name, 1, q->bufs, 2);
    return 1;
  }
  if (PyFloat_CheckExact(v)) {
    q->f64 = PyFloat_AS_DOUBLE(v);
    q->bufs[0] = NULL, q->bufs[1] = &q->f64;
    leaf(&q->s, &q->a, "g", q->name, 1, q->bufs, 2);
    return 1;
  }
  if (PyUnicode_CheckExact(v)) {
    Py_ssize_t len = 0;
    const char *u = PyUnicode_AsUTF8AndSize(v, &len);
    if (u == NULL) return -1;
    q->off[0] = 0, q->off[1] = (int64_t)len;
    q->bufs[0] = NULL, q->bufs[1] = q->off, q->bufs[2] = u;
    leaf(&q->s, &q->a, "U", q->name, 1, q->bufs, 3);
    return 1;
  }
  if (!PyObject_CheckBuffer(v)) return 0;
  if (PyObject_GetBuffer(v, &q->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
    PyErr_Clear();
    return 0;
  }
  q->has_view = true;
  const char *f = q->view.format != NULL ? q->view.format : "B";
  if (*f == '<' || *f == '=' || *f == '@') f++;
  if (q->view.ndim != 1 || q->view.itemsize != 4 || strcmp(f, "f") != 0 ||
      q->view.shape[0] > INT32_MAX)
    return 0;
  int64_t dim = q->view.shape[0];
  snprintf(q->fmt, sizeof q->fmt, "+w:%lld", (long long)dim);
  q->cbufs[0] = NULL, q->cbufs[1] = q->view.buf;
  leaf(&q->cs, &q->ca, "f", "item", dim, q->cbufs, 2);
  q->bufs[0] = NULL;
  leaf(&q->s, &q->a, q->fmt, q->name, 1, q->bufs, 1);
  q->sch[0] = &q->cs, q->ach[0] = &q->ca;
  q->s.n_children = 1, q->s.children = q->sch;
  q->a.n_children = 1, q->a.children = q->ach;
  return 1;
}

int hs_py_sql_params_build(PyObject *seq, hs_py_sql_params **out) {
  *out = NULL;
  PyObject *fast = PySequence_Fast(seq, "params must be a sequence");
  if (fast == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  hs_py_sql_params *pp = hs_calloc(1, sizeof *pp);
  if (pp != NULL && n > 0) {
    pp->p = hs_calloc((size_t)n, sizeof *pp->p);
    pp->sch = hs_calloc((size_t)n, sizeof *pp->sch);
    pp->ach = hs_calloc((size_t)n, sizeof *pp->ach);
  }
  if (pp == NULL || (n > 0 && (pp->p == NULL || pp->sch == NULL || pp->ach == NULL))) {
    hs_py_sql_params_free(pp);
    Py_DECREF(fast);
    PyErr_NoMemory();
    return -1;
  }
  int rc = 1;
  for (Py_ssize_t i = 0; i < n && rc == 1; i++) {
    pp->n = i + 1;
    rc = one(&pp->p[i], PySequence_Fast_GET_ITEM(fast, i), i);
    pp->sch[i] = &pp->p[i].s;
    pp->ach[i] = &pp->p[i].a;
  }
  pp->items = fast; /* the objects (and their memory) live as long as pp */
  if (rc != 1) {
    hs_py_sql_params_free(pp);
    return rc;
  }
  pp->bufs[0] = NULL;
  leaf(&pp->s, &pp->a, "+s", "", 1, pp->bufs, 1);
  pp->s.flags = 0;
  pp->s.n_children = n, pp->s.children = pp->sch;
  pp->a.n_children = n, pp->a.children = pp->ach;
  *out = pp;
  return 1;
}

const struct ArrowSchema *hs_py_sql_params_schema(const hs_py_sql_params *pp) {
  return &pp->s;
}

const struct ArrowArray *hs_py_sql_params_array(const hs_py_sql_params *pp) {
  return &pp->a;
}

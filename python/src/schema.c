/*
 * schema.c — schema evolution for the Python package:
 * `_core.table_update_schema(uri, changes)` over hs_table_update_schema
 * (src/table/schema_evolve.c): every change of the list in ONE metadata-only
 * commit. Each change is a tuple
 *   (op, column, new_name, type, default_json, doc, required)
 * with op 1 add, 2 rename, 3 drop, 4 update (hs_table_schema_op), type an
 * "arrow_schema" PyCapsule of a struct of one field (or None) and
 * default_json a JSON single value (or None). Table.update_schema and its
 * one-change methods (python/hyperstreamdb/table.py) build the list.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core.h"

#include "common/common.h"

int hs_py_schema_init(PyObject *module);

/* The text of an optional str argument (NULL for None), borrowed. */
static int opt_text(PyObject *o, const char *what, const char **out) {
  *out = NULL;
  if (o == Py_None) return 0;
  return (*out = hs_py_text(o, what)) == NULL ? -1 : 0;
}

static PyObject *hs_py_table_update_schema(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *uri, *list;
  if (!PyArg_ParseTuple(args, "OO:table_update_schema", &uri, &list)) return NULL;
  PyObject *seq = PySequence_Fast(list, "changes must be a list of tuples");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  hs_table_schema_change *ch = hs_calloc((size_t)n + 1, sizeof *ch);
  PyObject *path = NULL, *result = NULL;
  if (ch == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *t = PySequence_Fast_GET_ITEM(seq, i);
    int op = 0, required = 0;
    PyObject *col, *nn, *type, *def, *doc;
    if (!PyArg_ParseTuple(t, "iOOOOOp", &op, &col, &nn, &type, &def, &doc, &required)) goto done;
    ch[i].op = (hs_table_schema_op)op;
    ch[i].required = required;
    if ((ch[i].column = hs_py_text(col, "column")) == NULL) goto done;
    if (opt_text(nn, "new name", &ch[i].new_name) < 0 ||
        opt_text(def, "default", &ch[i].default_json) < 0 || opt_text(doc, "doc", &ch[i].doc) < 0)
      goto done;
    if (type != Py_None) {
      if (!PyCapsule_IsValid(type, "arrow_schema")) {
        PyErr_SetString(PyExc_TypeError, "type must be an 'arrow_schema' PyCapsule");
        goto done;
      }
      ch[i].type = PyCapsule_GetPointer(type, "arrow_schema"); /* kept alive by `seq` */
    }
  }
  if ((path = hs_py_path(uri)) == NULL) goto done;
  hs_error err = {0};
  hs_status st;
  Py_BEGIN_ALLOW_THREADS;
  hs_table *tbl = NULL;
  st = hs_table_open(PyBytes_AS_STRING(path), &tbl, &err);
  if (st == HS_OK) st = hs_table_update_schema(tbl, ch, (size_t)n, &err);
  hs_table_free(tbl);
  Py_END_ALLOW_THREADS;
  if (st != HS_OK) {
    hs_py_raise(st, &err, PyBytes_AS_STRING(path));
    goto done;
  }
  result = Py_None;
  Py_INCREF(result);
done:
  Py_XDECREF(path);
  hs_free(ch);
  Py_DECREF(seq);
  return result;
}

/* Borrowed texts of a sequence of str (kept alive by the caller's `seq`). */
static int texts(PyObject *seq, const char *what, const char ***out, size_t *n) {
  *out = NULL;
  *n = (size_t)PySequence_Fast_GET_SIZE(seq);
  *out = hs_calloc(*n + 1, sizeof **out);
  if (*out == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  for (size_t i = 0; i < *n; i++)
    if (((*out)[i] = hs_py_text(PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i), what)) == NULL)
      return -1;
  return 0;
}

/* table_create_defined(uri, schema capsule, format_version, {props}, [(source, transform,
 * name or None)], [sort columns], [ascending], [nulls_first]): a new table whose
 * version 1 already has the spec and the sort order. */
static PyObject *hs_py_table_create_defined(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *uri, *capsule, *props, *spec, *cols, *asc, *nf;
  int fv = 2;
  if (!PyArg_ParseTuple(args, "OOiOOOOO:table_create_defined", &uri, &capsule, &fv, &props, &spec,
                        &cols, &asc, &nf))
    return NULL;
  if (!PyCapsule_IsValid(capsule, "arrow_schema")) {
    PyErr_SetString(PyExc_TypeError, "schema must be an 'arrow_schema' PyCapsule");
    return NULL;
  }
  PyObject *spec_seq = PySequence_Fast(spec, "partition fields must be a list");
  PyObject *cols_seq = spec_seq ? PySequence_Fast(cols, "sort columns must be a list") : NULL;
  PyObject *keys = NULL, *vals = NULL, *path = NULL, *result = NULL;
  hs_table_partition_field *pf = NULL;
  const char **kt = NULL, **vt = NULL, **ct = NULL;
  int *av = NULL, *nv = NULL;
  size_t n_props = 0, n_cols = 0;
  if (cols_seq == NULL) goto done;
  if (!PyDict_Check(props)) {
    PyErr_SetString(PyExc_TypeError, "properties must be a dict");
    goto done;
  }
  PyObject *kl = PyDict_Keys(props), *vl = PyDict_Values(props);
  keys = kl ? PySequence_Fast(kl, "keys") : NULL;
  vals = vl ? PySequence_Fast(vl, "values") : NULL;
  Py_XDECREF(kl);
  Py_XDECREF(vl);
  if (keys == NULL || vals == NULL) goto done;
  if (texts(keys, "property key", &kt, &n_props) < 0 ||
      texts(vals, "property value", &vt, &n_props) < 0 ||
      texts(cols_seq, "sort column", &ct, &n_cols) < 0)
    goto done;
  Py_ssize_t n_spec = PySequence_Fast_GET_SIZE(spec_seq);
  if ((pf = hs_calloc((size_t)n_spec + 1, sizeof *pf)) == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n_spec; i++)
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(spec_seq, i), "ss|z", &pf[i].source,
                          &pf[i].transform, &pf[i].name))
      goto done;
  PyObject *flags[2] = {asc, nf};
  int **outs[2] = {&av, &nv};
  for (int k = 0; k < 2; k++) {
    PyObject *fs = PySequence_Fast(flags[k], "sort flags must be a list");
    if (fs == NULL) goto done;
    size_t n = (size_t)PySequence_Fast_GET_SIZE(fs);
    *outs[k] = n == n_cols ? hs_calloc(n + 1, sizeof(int)) : NULL;
    for (size_t i = 0; *outs[k] != NULL && i < n; i++)
      (*outs[k])[i] = PyObject_IsTrue(PySequence_Fast_GET_ITEM(fs, (Py_ssize_t)i)) > 0;
    Py_DECREF(fs);
    if (*outs[k] == NULL) {
      hs_py_raise_msg(hs_py_invalid_error, "sort flags: %zu for %zu columns", n, n_cols);
      goto done;
    }
  }
  if ((path = hs_py_path(uri)) == NULL) goto done;
  hs_table_options o;
  hs_table_options_init(&o);
  o.format_version = fv;
  o.property_keys = kt;
  o.property_values = vt;
  o.n_properties = n_props;
  o.partition_fields = pf;
  o.n_partition_fields = (size_t)n_spec;
  o.sort_columns = ct;
  o.sort_ascending = av;
  o.sort_nulls_first = nv;
  o.n_sort_columns = n_cols;
  const struct ArrowSchema *schema = PyCapsule_GetPointer(capsule, "arrow_schema");
  hs_error err = {0};
  hs_status st;
  Py_BEGIN_ALLOW_THREADS;
  hs_table *t = NULL;
  st = hs_table_create(PyBytes_AS_STRING(path), schema, &o, &t, &err);
  hs_table_free(t);
  Py_END_ALLOW_THREADS;
  if (st != HS_OK) {
    hs_py_raise(st, &err, PyBytes_AS_STRING(path));
    goto done;
  }
  result = Py_None;
  Py_INCREF(result);
done:
  hs_free(kt);
  hs_free(vt);
  hs_free(ct);
  hs_free(pf);
  hs_free(av);
  hs_free(nv);
  Py_XDECREF(path);
  Py_XDECREF(keys);
  Py_XDECREF(vals);
  Py_XDECREF(spec_seq);
  Py_XDECREF(cols_seq);
  return result;
}

static PyMethodDef hs_py_schema_methods[] = {
    {"table_create_defined", (PyCFunction)hs_py_table_create_defined, METH_VARARGS,
     "table_create_defined(uri, schema capsule, format_version, properties, spec, sort_columns,\n"
     "                     ascending, nulls_first) -> None\n\n"
     "Create a table whose v1 metadata already holds the partition spec and sort order."},
    {"table_update_schema", (PyCFunction)hs_py_table_update_schema, METH_VARARGS,
     "table_update_schema(uri, changes) -> None\n\n"
     "Apply [(op, column, new_name, type capsule, default_json, doc, required), ...] (op 1 add,\n"
     "2 rename, 3 drop, 4 update) to the table's schema in one metadata-only commit."},
    {NULL, NULL, 0, NULL}};

int hs_py_schema_init(PyObject *module) {
  return PyModule_AddFunctions(module, hs_py_schema_methods);
}

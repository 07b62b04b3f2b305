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

static PyMethodDef hs_py_schema_methods[] = {
    {"table_update_schema", (PyCFunction)hs_py_table_update_schema, METH_VARARGS,
     "table_update_schema(uri, changes) -> None\n\n"
     "Apply [(op, column, new_name, type capsule, default_json, doc, required), ...] (op 1 add,\n"
     "2 rename, 3 drop, 4 update) to the table's schema in one metadata-only commit."},
    {NULL, NULL, 0, NULL}};

int hs_py_schema_init(PyObject *module) {
  return PyModule_AddFunctions(module, hs_py_schema_methods);
}

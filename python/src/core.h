/*
 * core.h — private declarations shared by the files of the extension module
 * hyperstreamdb._core: the exception classes, the status-to-exception
 * mapping, path conversion and the entry points each file defines.
 *
 * The module is a thin shell over include/hyperstream.h. It never holds the
 * GIL while C code reads or writes files, and it moves data to and from
 * Python only as Arrow C streams through PyCapsules (the Arrow PyCapsule
 * Interface), so no values are copied on the way.
 */
#ifndef HS_PY_CORE_H
#define HS_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>

#include "hyperstream.h"

/* Capsule name of what TableHandle.append(keep=True) keeps (an
 * hs_table_appended *) for index_build(appended=...). */
#define HS_PY_APPENDED_CAPSULE "hyperstreamdb.appended"

/* Exception classes, created at module init and owned by the module. */
extern PyObject *hs_py_error;         /* HyperStreamError(Exception) */
extern PyObject *hs_py_corrupt_error; /* CorruptFileError */
extern PyObject *hs_py_unsupported_error;
extern PyObject *hs_py_schema_error;
extern PyObject *hs_py_not_found_error; /* also FileNotFoundError */
extern PyObject *hs_py_io_error;        /* HSIOError, also OSError */
extern PyObject *hs_py_invalid_error;   /* InvalidArgumentError, also ValueError */
extern PyObject *hs_py_memory_error;    /* ResourceError, also MemoryError */
extern PyObject *hs_py_internal_error;
extern PyObject *hs_py_conflict_error;

/* Raise the exception class for `status` with the message in `err`. When
 * `path` is not NULL and the message does not already name it, the message
 * is prefixed with "path: " so every error says which file it concerns.
 * The exception carries `.status` (hs_status_str) for programs. Returns
 * NULL so callers can `return hs_py_raise(...)`. */
PyObject *hs_py_raise(hs_status status, const hs_error *err, const char *path);

/* Raise HyperStreamError-derived `type` with a formatted message. */
PyObject *hs_py_raise_msg(PyObject *type, const char *fmt, ...);

/* The UTF-8 text of str `obj` (borrowed from it), or NULL with
 * InvalidArgumentError (a ValueError) when it is not a str or contains a
 * NUL character: the C core takes NUL-terminated text, so an embedded NUL
 * would silently cut it. `what` names the argument in the message, which
 * gives the NUL's offset. Use instead of PyUnicode_AsUTF8. */
const char *hs_py_text(PyObject *obj, const char *what);

/* Convert str / bytes / os.PathLike to a new bytes object (NULL + exception
 * on failure). The caller owns the reference; PyBytes_AS_STRING gives the
 * NUL-terminated path. */
PyObject *hs_py_path(PyObject *obj);

/* PyCapsule destructors of the Arrow PyCapsule Interface (stream.c): release
 * the structure if the consumer did not take it, then free its heap block. */
void hs_py_stream_capsule_free(PyObject *capsule); /* "arrow_array_stream" */
void hs_py_schema_capsule_free(PyObject *capsule); /* "arrow_schema" */
void hs_py_array_capsule_free(PyObject *capsule);  /* "arrow_array" */

/* A new "arrow_schema" capsule holding a deep copy of `src` (stream.c). */
PyObject *hs_py_schema_capsule(const struct ArrowSchema *src);
/* A batch as the tuple (schema capsule copied from `schema`, array
 * capsule taking `arr`, hs_malloc'd, whose release it calls when freed);
 * NULL with a Python error, `arr` released, on failure. */
PyObject *hs_py_batch_capsules(const struct ArrowSchema *schema, struct ArrowArray *arr);

/* Whether two exported schemas are the same (formats, names, flags,
 * metadata, children), and pyarrow.Schema._import_from_c_capsule of `sch`
 * (moved; a new reference, NULL with a Python error): a result of the same
 * schema as the last one is imported with the pyarrow Schema kept for it
 * (vsearch.c; the search cache and sql.c's result schema cache). */
bool hs_py_schema_same(const struct ArrowSchema *a, const struct ArrowSchema *b);
PyObject *hs_py_import_pa_schema(struct ArrowSchema *sch);

/* The last one-batch result's schema and the pyarrow Schema imported from
 * it (a new reference), kept by its owner across calls (zeroed to start;
 * hs_py_schema_memo_clear frees both). */
typedef struct hs_py_schema_memo {
  struct ArrowSchema schema;
  PyObject *pa_schema;
} hs_py_schema_memo;
void hs_py_schema_memo_clear(hs_py_schema_memo *m);
/* (array capsule, its address, pyarrow Schema) for the batch `heap`
 * (hs_malloc'd, taken) of schema `sch` (released): Python imports it with
 * pyarrow.RecordBatch._import_from_c(address, schema); the Schema is the
 * memo's when `sch` is the memo's schema, else imported and memoized. NULL
 * with a Python error on failure (both released). With the GIL. */
PyObject *hs_py_batch_result(hs_py_schema_memo *m, struct ArrowSchema *sch,
                             struct ArrowArray *heap);

/* ------------------------------------------------ one-shot streams (stream.c)
 * The part ParquetStream (read.c) and TableStream (table.c) share: a type
 * puts hs_py_stream first in its object struct, uses hs_py_stream_dealloc,
 * hs_py_stream_methods and hs_py_stream_getset, and adds its own members
 * and repr. Every state but OPEN has released (or handed away) the C
 * stream, so `stream.release == NULL` exactly when state != HS_PY_OPEN. */
typedef enum hs_py_stream_state {
  HS_PY_OPEN = 0,
  HS_PY_EXPORTED, /* moved into a PyCapsule by __arrow_c_stream__ */
  HS_PY_EXHAUSTED,
  HS_PY_FAILED,
  HS_PY_CLOSED
} hs_py_stream_state;

extern const char *const hs_py_stream_state_names[]; /* "open", "exported", ... */

typedef struct hs_py_stream {
  PyObject_HEAD struct ArrowArrayStream stream; /* release == NULL once not OPEN */
  struct ArrowSchema schema;                    /* cached by the first read; owned */
  PyObject *what;    /* str: the file or table read, for messages (owned) */
  const char *again; /* how to read again, for "already consumed" (static) */
  long long batches_read;
  hs_py_stream_state state;
  /* Set while get_next runs without the GIL: other threads calling in are
   * refused instead of racing on the C stream (which is single-threaded). */
  int busy;
} hs_py_stream;

/* Fill a freshly allocated object's shared part (CLOSED, no C stream yet;
 * `what` is referenced, may be NULL), then hand it the C stream (moved in;
 * the state becomes OPEN). */
void hs_py_stream_init(hs_py_stream *self, PyObject *what, const char *again);
void hs_py_stream_take(hs_py_stream *self, struct ArrowArrayStream *stream);
void hs_py_stream_dealloc(PyObject *self);
extern PyMethodDef hs_py_stream_methods[]; /* __arrow_c_stream__, _read_next, ... */
extern PyGetSetDef hs_py_stream_getset[];  /* consumed, state */

/* read.c: the ParquetStream and ArrowSchemaHolder types and read entry points. */
int hs_py_read_init(PyObject *module);
PyObject *hs_py_read_parquet(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *hs_py_parquet_schema(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *hs_py_parquet_metadata(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *hs_py_parquet_pages_gathered(PyObject *self, PyObject *unused);

/* write.c */
PyObject *hs_py_write_parquet(PyObject *self, PyObject *args, PyObject *kwargs);

/* table.c: lending a TableHandle's open table to another call (a vector
 * search), so that a first search does not open the table a second time.
 * hs_py_table_lender (with the GIL): the handle behind `obj`, or NULL when
 * it is not a TableHandle. hs_py_table_try_borrow (without the GIL): its
 * hs_table with the handle's lock taken, or NULL when another thread holds
 * the lock or the handle has no table (the caller opens its own); the
 * caller keeps `obj` alive and hands the table back with
 * hs_py_table_return (which releases the lock) before it takes the GIL. */
struct hs_table;
void *hs_py_table_lender(PyObject *obj);
struct hs_table *hs_py_table_try_borrow(void *lender);
void hs_py_table_return(void *lender);

/* sql_params.c: `$n` parameters from a Python list as the one-row Arrow
 * struct array hs_sql_execute takes, over the objects' own memory (None,
 * bool, int, float, str, 1-D float32 buffers). 1: built (*out, freed with
 * hs_py_sql_params_free, with the GIL); 0: a value of another kind (the
 * caller converts through pyarrow); -1: a Python error is set. */
typedef struct hs_py_sql_params hs_py_sql_params;
int hs_py_sql_params_build(PyObject *seq, hs_py_sql_params **out);
const struct ArrowSchema *hs_py_sql_params_schema(const hs_py_sql_params *pp);
const struct ArrowArray *hs_py_sql_params_array(const hs_py_sql_params *pp);
void hs_py_sql_params_free(hs_py_sql_params *pp); /* accepts NULL */

#endif /* HS_PY_CORE_H */

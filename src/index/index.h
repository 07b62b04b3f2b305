/*
 * index.h — the index layer's interface. For now: per-data-file scalar
 * inverted indexes ("sidx"), stored as blobs of an Iceberg Puffin file, one
 * blob per indexed column (format and reasons: src/index/scalar/README.md).
 *
 * A query answers with a CRoaring bitmap of row positions in the data file
 * (32-bit: a data file holds fewer than 2^32 rows). Answers are exact: the
 * bitmap equals the set of rows for which the SQL predicate is TRUE, so a
 * NULL row is never in an equals/range/prefix answer. Floats follow the
 * project's comparison rules (query/expr_literal.c): -0.0 equals 0.0, NaN
 * equals NaN and sorts above every number (+inf included), so `x > 1`
 * contains NaN rows and `x < NaN` contains every non-NaN, non-NULL row.
 *
 * Bitmaps returned to the caller are allocated by CRoaring (its allocator,
 * not hs_malloc: libroaring 0.2.66 has no memory hooks) and are owned by
 * the caller: free with roaring_bitmap_free.
 */
#ifndef HS_INDEX_H
#define HS_INDEX_H

#include <roaring/roaring.h>

#include "../arrow/arrow.h"
#include "../io/io.h"
#include "binding.h"

/* ------------------------------------------------------------- values */

/* A query value. Comparisons across kinds are exact: an INT against a
 * float column, a DOUBLE against an integer column (2.5 bounds `x > 2.5`
 * as `x >= 3`; out-of-range bounds select all or nothing), an INT against
 * a decimal column (scaled by 10^scale). DECIMAL values are unscaled at the
 * column's scale. BYTES compare bytewise (memcmp, then length), which for
 * UTF-8 is code point order, as DuckDB and our filters compare strings. */
typedef enum hs_sidx_value_kind {
  HS_SIDX_BOOL,
  HS_SIDX_INT,     /* i */
  HS_SIDX_UINT,    /* u */
  HS_SIDX_DOUBLE,  /* d */
  HS_SIDX_BYTES,   /* bytes, n_bytes */
  HS_SIDX_DECIMAL, /* dec_hi:dec_lo, a two's complement 128-bit integer */
} hs_sidx_value_kind;

typedef struct hs_sidx_value {
  hs_sidx_value_kind kind;
  bool b;
  int64_t i;
  uint64_t u;
  double d;
  const uint8_t *bytes;
  size_t n_bytes;
  int64_t dec_hi;
  uint64_t dec_lo;
} hs_sidx_value;

/* ------------------------------------------------------------ builder */

/* How the values of a column are laid out (README: "Two layouts"). */
typedef enum hs_sidx_layout {
  HS_SIDX_LAYOUT_AUTO = 0,   /* DICT when values repeat enough, else SORTED */
  HS_SIDX_LAYOUT_DICT = 1,   /* distinct values, one bitmap each */
  HS_SIDX_LAYOUT_SORTED = 2, /* (value, row) pairs sorted, in blocks */
} hs_sidx_layout;

typedef struct hs_sidx_column_options {
  hs_sidx_layout layout;
  uint32_t block_rows; /* SORTED: pairs per block; 0 means 4096 */
  bool plain_blocks;   /* SORTED: write blocks unpacked (the original layout; tests) */
  /* SORTED: lossy blocks, only each block's (min, max) and its row bitmap
   * (~2 B/row whatever the keys; README "Lossy blocks"). Range, equality,
   * IN and prefix answers are then supersets: a block partly inside the
   * range gives all its rows (hs_sidx_column_exact is false). */
  bool lossy;
} hs_sidx_column_options;

typedef struct hs_sidx_builder hs_sidx_builder;

hs_status hs_sidx_builder_create(hs_sidx_builder **out, hs_error *err);
void hs_sidx_builder_free(hs_sidx_builder *b); /* accepts NULL */

/* Index one column of a data file. `field` is the column's Arrow schema
 * (its name names the column in the index; field_id is its Iceberg field id,
 * or -1), `chunks` its arrays in row order (borrowed; row positions count
 * across chunks from 0). Supported: bool, int8..64, uint8..64, float16 is
 * not, float32/64, string/binary (and large), fixed-size binary,
 * decimal128, date32/64, time32/64, timestamp, duration. Others give
 * HS_ERR_UNSUPPORTED. opts may be NULL. */
hs_status hs_sidx_builder_add_column(hs_sidx_builder *b, const struct ArrowSchema *field,
                                     int32_t field_id, const struct ArrowArray *chunks,
                                     size_t n_chunks, const hs_sidx_column_options *opts,
                                     hs_error *err);

/* Index n columns of the same data file at once, each as by
 * hs_sidx_builder_add_column with fields[i], field_ids[i] (field_ids NULL:
 * all -1), chunks[i][0..n_chunks) and opts[i] (opts NULL: defaults), on up
 * to `threads` threads (0: hs_parallel_cores()). The file is the same as
 * after n add_column calls in order; on an error the columns before the
 * failing one (in order) stay added. */
hs_status hs_sidx_builder_add_columns(hs_sidx_builder *b, size_t n,
                                      const struct ArrowSchema *const *fields,
                                      const int32_t *field_ids,
                                      const struct ArrowArray *const *chunks, size_t n_chunks,
                                      const hs_sidx_column_options *opts, uint32_t threads,
                                      hs_error *err);

/* Bind every blob of the file to its data file (binding.h): the blobs
 * then carry data-file, data-file-size and data-file-footer-crc32c; every
 * blob carries its crc32c in any case. bind->data_file is copied. */
hs_status hs_sidx_builder_bind(hs_sidx_builder *b, const hs_index_binding *bind, hs_error *err);

/* The whole Puffin file, appended to `out`. The builder can be freed
 * afterwards; adding more columns after finish is HS_ERR_INVALID_ARG. */
hs_status hs_sidx_builder_finish(hs_sidx_builder *b, hs_buf *out, hs_error *err);

/* ------------------------------------------------------------- reader */

typedef struct hs_sidx_file hs_sidx_file;
typedef struct hs_sidx_column hs_sidx_column;

/* Open an index file over `src` (a reference is taken): reads and checks
 * the Puffin footer only. *out is owned (hs_sidx_file_free). */
hs_status hs_sidx_file_open(hs_source *src, hs_sidx_file **out, hs_error *err);
void hs_sidx_file_free(hs_sidx_file *f); /* accepts NULL; columns stay valid */

size_t hs_sidx_file_column_count(const hs_sidx_file *f);
/* Blob i's extent in the file and what it records of its data file and
 * checksum (borrowed from f); NULL when i is out of range. */
const hs_index_binding *hs_sidx_file_blob(const hs_sidx_file *f, size_t i, uint64_t *offset,
                                          uint64_t *length);
/* Column name of blob i (borrowed from f), or NULL when i is out of range. */
const char *hs_sidx_file_column_name(const hs_sidx_file *f, size_t i);

/* Open the index of column `name` (HS_ERR_NOT_FOUND when absent): reads the
 * blob's header and value directory (not its bitmaps). *out is owned
 * (hs_sidx_column_free) and keeps its own reference to the source. */
hs_status hs_sidx_column_open(hs_sidx_file *f, const char *name, hs_sidx_column **out,
                              hs_error *err);
void hs_sidx_column_free(hs_sidx_column *c); /* accepts NULL */

/* What the column's blob records of its data file and checksum (borrowed
 * from c). A blob with a crc32c was verified when the column opened. */
const hs_index_binding *hs_sidx_column_binding(const hs_sidx_column *c);

uint32_t hs_sidx_column_row_count(const hs_sidx_column *c);
hs_sidx_layout hs_sidx_column_layout(const hs_sidx_column *c);
/* Whether equals/in/range/prefix answers are exact (true) or supersets of
 * the matching rows that the caller must re-check (lossy SORTED blocks).
 * is_null / is_not_null are always exact. */
bool hs_sidx_column_exact(const hs_sidx_column *c);
/* DICT: distinct non-null values; SORTED: blocks. */
uint32_t hs_sidx_column_entry_count(const hs_sidx_column *c);

/* Queries. Each sets *out to a new bitmap (caller frees) on HS_OK: exact, or
 * a superset for a column that is not hs_sidx_column_exact. A value
 * whose kind cannot be compared with the column (BYTES against an int
 * column, DOUBLE against a decimal) gives HS_ERR_UNSUPPORTED: the caller
 * then evaluates the predicate on the data. */
hs_status hs_sidx_column_equals(hs_sidx_column *c, const hs_sidx_value *v, roaring_bitmap_t **out,
                                hs_error *err);
/* The rows equal to any of vs[0..n) (IN lists): one union, the values taken
 * in key order so a SORTED column unpacks each block once, not per value. */
hs_status hs_sidx_column_in(hs_sidx_column *c, const hs_sidx_value *vs, size_t n,
                            roaring_bitmap_t **out, hs_error *err);
/* lo/hi NULL: unbounded on that side. */
hs_status hs_sidx_column_range(hs_sidx_column *c, const hs_sidx_value *lo, bool lo_inclusive,
                               const hs_sidx_value *hi, bool hi_inclusive, roaring_bitmap_t **out,
                               hs_error *err);
hs_status hs_sidx_column_is_null(hs_sidx_column *c, roaring_bitmap_t **out, hs_error *err);
hs_status hs_sidx_column_is_not_null(hs_sidx_column *c, roaring_bitmap_t **out, hs_error *err);
/* Rows whose string/binary value starts with prefix[0..n) (LIKE 'p%'). */
hs_status hs_sidx_column_prefix(hs_sidx_column *c, const uint8_t *prefix, size_t n,
                                roaring_bitmap_t **out, hs_error *err);

/* Check the whole file: footer, every blob's header, sorted directory,
 * offsets in range, every bitmap well formed (checked byte by byte before
 * CRoaring sees it), and every row accounted for exactly once across
 * values and NULL. HS_ERR_CORRUPT names the column and byte offset. */
hs_status hs_sidx_file_validate(hs_sidx_file *f, hs_error *err);

#endif /* HS_INDEX_H */

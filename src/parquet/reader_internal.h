/*
 * reader_internal.h — private to the Parquet reader (reader.c, schema_read.c,
 * assemble.c, prune.c): the schema tree that maps Parquet's flat,
 * depth-first schema onto Arrow's nested types, and the entry points that
 * turn decoded leaf data into Arrow arrays.
 *
 * Level model (Dremel). Every Arrow node has
 *   slot_rep / slot_def: a level position i of any leaf below the node opens
 *     a new slot (array element) of the node when rep[i] <= slot_rep and
 *     def[i] >= slot_def. They are the rep and def level of the nearest
 *     enclosing repeated field (0 / 0 at the top level);
 *   valid_def: the slot holds a non-null value when def[i] >= valid_def.
 * A list node additionally names elem_rep / elem_def, the levels of its
 * repeated field, which are its child's slot_rep / slot_def.
 * All leaves below a node agree on that node's slots, so a node is sized
 * from its first leaf; each child is then built from its own leaves.
 */
#ifndef HS_PARQUET_READER_INTERNAL_H
#define HS_PARQUET_READER_INTERNAL_H

#include "column.h"
#include "parquet.h"
#include "../arrow/arrow.h"

/* Deepest schema nesting we accept; levels must also fit in int16. */
#define HS_PQ_SCHEMA_DEPTH_MAX 64

typedef enum hs_pq_node_kind {
  HS_PQ_NODE_LEAF,
  HS_PQ_NODE_STRUCT,
  HS_PQ_NODE_LIST,       /* "+l": one child, the element */
  HS_PQ_NODE_MAP,        /* "+m": one child, the "entries" struct (key, value) */
  HS_PQ_NODE_FIXED_LIST, /* "+w:N": one child, a leaf element */
  HS_PQ_NODE_NULL        /* "n" leaf (UNKNOWN logical type) */
} hs_pq_node_kind;

typedef struct hs_pq_node hs_pq_node;
struct hs_pq_node {
  hs_pq_node_kind kind;
  const char *name;                 /* Arrow field name (arena) */
  const hs_pq_schema_element *elem; /* source element; NULL for synthetic nodes */
  char format[48];                  /* Arrow format string */
  bool nullable;
  bool has_field_id;
  int32_t field_id;
  int16_t slot_rep, slot_def, valid_def;
  int16_t elem_rep, elem_def; /* LIST / MAP / FIXED_LIST */
  int32_t fixed_size;         /* FIXED_LIST */
  hs_arrow_type atype;        /* parsed from format, for leaves */
  int32_t leaf;               /* LEAF / NULL: index into hs_pq_schema.leaves */
  int32_t first_leaf;         /* first leaf below (for sizing) */
  int32_t leaf_end;           /* one past the last leaf below */
  int32_t n_children;
  hs_pq_node **children;
};

typedef struct hs_pq_schema {
  hs_pq_node *root; /* STRUCT: the top-level columns */
  hs_pq_leaf_desc *leaves;
  int32_t n_leaves;
} hs_pq_schema;

/* Build and validate the schema tree of `md` into `arena`: element counts,
 * depth, leaf count against every row group, column chunk types.
 * `fixed_lists` is the JSON value of "hyperstream:fixed_size_list" (may be
 * NULL). Errors are not yet prefixed with the file name. */
hs_status hs_pq_schema_build(const hs_pq_file_metadata *md, hs_arena *arena, hs_pq_schema *out,
                             hs_error *err);

/* Export `node` (and below) as an owned ArrowSchema. */
hs_status hs_pq_node_export_schema(const hs_pq_node *node, struct ArrowSchema *out, hs_error *err);

/* Levels a chunk read may leave implicit instead of storing two bytes per
 * level (the common cases of columns without nulls and of fixed-size lists,
 * where levels would cost more memory than the values):
 *  - def_all_max: hs_pq_leaf_data.def is NULL although max_def > 0, because
 *    every definition level is max_def (assembly already reads a NULL def as
 *    all max_def);
 *  - rep_period > 0: hs_pq_leaf_data.rep is NULL although max_rep == 1,
 *    because every record holds exactly rep_period levels: level i has
 *    rep (i % rep_period != 0), and n_levels is a multiple of rep_period. */
typedef struct hs_pq_lazy_levels {
  bool def_all_max;
  int64_t rep_period;
} hs_pq_lazy_levels;

struct hs_pq_chunk_memo;

/* hs_pq_column_read (column.h) that may leave levels implicit as above;
 * only whole-chunk reads (rows == NULL) do. With a row selection and
 * `oi` the offset index of `memo` (chunk_memo.h: the file's memo of the
 * chunk), what the read derives from the chunk's bytes is kept there for
 * later reads and taken from there. Implemented in column_read.c. */
hs_status hs_pq_column_read_lazy(hs_source *src, const hs_pq_column_chunk *cc,
                                 const hs_pq_leaf_desc *desc, int64_t rg_rows,
                                 const hs_pq_offset_index *oi, struct hs_pq_chunk_memo *memo,
                                 const int64_t *rows, size_t n_rows, hs_pq_leaf_data *out,
                                 hs_pq_lazy_levels *lazy, hs_error *err);

/* Store the levels that `lazy` left implicit (def and/or rep arrays), so
 * that `d` is in the plain form column.h describes; clears `lazy`. */
hs_status hs_pq_lazy_levels_materialize(hs_pq_leaf_data *d, const hs_pq_leaf_desc *desc,
                                        hs_pq_lazy_levels *lazy, hs_error *err);

/* A window onto one leaf's decoded data: levels [lo, hi) whose first
 * non-null value is values[vlo]. `whole` lets assembly take the value
 * buffers instead of copying when the window spans the whole leaf.
 * rep_period: as in hs_pq_lazy_levels (the leaf data has no rep array);
 * only a fixed-size list of that size directly above the leaf accepts it. */
typedef struct hs_pq_leaf_window {
  hs_pq_leaf_data *data;
  const hs_pq_leaf_desc *desc;
  int64_t lo, hi, vlo;
  bool whole;
  int64_t rep_period;
} hs_pq_leaf_window;

/* Advance a window start by `n_rows` records: from (lo, vlo) to the level
 * where record n_rows begins. Fails when fewer records remain.
 * `rep_period` as in the window. */
hs_status hs_pq_window_advance(const hs_pq_leaf_data *d, const hs_pq_leaf_desc *desc,
                               int64_t rep_period, int64_t *lo, int64_t *vlo, int64_t n_rows,
                               hs_error *err);

/* Build the Arrow array for `node` from the leaf windows (indexed by leaf
 * number; only leaves below node are used). */
hs_status hs_pq_assemble(const hs_pq_node *node, hs_pq_leaf_window *windows, struct ArrowArray *out,
                         hs_error *err);

/* Row-group pruning: does the conjunction of `preds` possibly hold in row
 * group `rg`? *keep is false only when the statistics prove no row can
 * match. Unknown columns are HS_ERR_NOT_FOUND. */
hs_status hs_pq_prune_row_group(const hs_pq_schema *schema, const hs_pq_row_group *rg,
                                const hs_stat_predicate *preds, size_t n_preds, bool *keep,
                                hs_error *err);

/* Find a top-level column by name; NULL when absent. */
const hs_pq_node *hs_pq_schema_find(const hs_pq_schema *schema, const char *name);

#endif /* HS_PARQUET_READER_INTERNAL_H */

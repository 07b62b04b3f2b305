/*
 * column.h — private to src/parquet/: reading one column chunk into flat
 * leaf data (levels + densely packed non-null values), and the descriptor
 * of a leaf column derived from the schema.
 *
 * Division of labour: column_read.c turns pages into hs_pq_leaf_data
 * (decompression, CRC checks, level and value decoding, dictionary
 * materialisation, page skipping for row selection). assemble.c turns leaf
 * data into Arrow arrays (logical types, nulls, lists, structs, maps).
 */
#ifndef HS_PARQUET_COLUMN_H
#define HS_PARQUET_COLUMN_H

#include "../io/io.h"
#include "metadata.h"

/* A leaf column of the file schema. */
typedef struct hs_pq_leaf_desc {
  int32_t leaf_index;               /* position among leaves = column chunk index */
  int32_t schema_index;             /* index in hs_pq_file_metadata.schema */
  const hs_pq_schema_element *elem; /* the leaf's schema element */
  hs_pq_type type;
  int32_t type_length; /* FIXED_LEN_BYTE_ARRAY width; 12 for INT96 */
  int16_t max_def;
  int16_t max_rep;
  const char *path; /* dotted path, e.g. "a.list.element" (arena) */
} hs_pq_leaf_desc;

/* Bytes per value in leaf storage for fixed-width physical types:
 * BOOLEAN 1 (one byte per value, 0/1), INT32 4, INT64 8, INT96 12, FLOAT 4,
 * DOUBLE 8, FIXED_LEN_BYTE_ARRAY type_length; BYTE_ARRAY -1. */
int hs_pq_leaf_value_width(const hs_pq_leaf_desc *d);

/* Decoded contents of (part of) one column chunk.
 *  - def/rep: one entry per level (n_levels); NULL when max_def / max_rep
 *    is 0 (then every level is implicitly max).
 *  - values: the n_values non-null values, densely packed, in physical
 *    representation (little-endian), for fixed-width types.
 *  - offsets/data: for BYTE_ARRAY, n_values + 1 int32 offsets into data.
 * Every buffer is owned by the struct (hs_pq_leaf_data_free). */
typedef struct hs_pq_leaf_data {
  int64_t n_levels;
  int16_t *def;
  int16_t *rep;
  int64_t n_values;
  hs_buf values;    /* fixed width */
  int32_t *offsets; /* BYTE_ARRAY: n_values + 1 entries */
  hs_buf data;      /* BYTE_ARRAY bytes */
  int64_t n_rows;   /* records (rep == 0 starts) covered */
  /* Statistics about the work done, for explain() and benchmarks. */
  int64_t pages_read;
  int64_t pages_skipped;
  int64_t pages_gathered; /* of pages_read: only the selected rows read, in place */
} hs_pq_leaf_data;

void hs_pq_leaf_data_free(hs_pq_leaf_data *d); /* accepts zeroed structs */

/* Read column chunk `cc` of a row group with `rg_rows` rows.
 * `rows`/`n_rows` (optional, NULL = all): strictly increasing row
 * positions relative to the row group's first row; only those records are
 * returned, and pages holding none of them are skipped without being
 * decompressed (through `oi`, the chunk's offset index, when not NULL;
 * otherwise by page headers' row counts where they are known).
 * Errors name the column path and the byte offset; the caller prefixes
 * the file name. */
hs_status hs_pq_column_read(hs_source *src, const hs_pq_column_chunk *cc,
                            const hs_pq_leaf_desc *desc, int64_t rg_rows,
                            const hs_pq_offset_index *oi, const int64_t *rows, size_t n_rows,
                            hs_pq_leaf_data *out, hs_error *err);

#endif /* HS_PARQUET_COLUMN_H */

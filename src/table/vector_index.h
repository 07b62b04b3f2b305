/*
 * vector_index.h — vector indexes attached to a table's data files
 * (vector_index.c): hs_table_build_vector_indexes (public) writes one
 * Puffin file per data file holding one blob of type
 * HS_VIDX_BLOB_TYPE (the file's src/index/vector/vidx index), registered
 * through the index registry (keyed by data file, like scalar indexes);
 * readers (src/query/vector_search.c) open it with
 * hs_table_vector_index_open.
 */
#ifndef HS_TABLE_VECTOR_INDEX_H
#define HS_TABLE_VECTOR_INDEX_H

#include "../index/vector/vidx.h"
#include "table.h"

#define HS_VIDX_BLOB_TYPE "hyperstream-vidx-v1"

/* Open the vector index of `column` stored in Puffin file `index_path`:
 * the footer is read and checked (bounded), the blob of type
 * HS_VIDX_BLOB_TYPE whose "column" property is `column` is opened with
 * hs_vidx_open. HS_ERR_NOT_FOUND when the file holds no such blob;
 * HS_ERR_CORRUPT for a malformed footer. *out is owned (hs_vidx_free). */
hs_status hs_table_vector_index_open(const char *index_path, const char *column, hs_vidx **out,
                                     hs_error *err);
/* The same over an open source (`name` in messages; the source stays the
 * caller's, the index keeps its own reference): fuzz/fuzz_puffin.c. */
hs_status hs_table_vector_index_open_source(hs_source *src, const char *name, const char *column,
                                            hs_vidx **out, hs_error *err);

/* Where the blob of `column` lies in the Puffin file behind `src`, and
 * what it records of its data file (bind->data_file is *bind_path, the
 * caller's to hs_free). HS_ERR_NOT_FOUND when there is none. */
hs_status hs_table_vector_index_locate(hs_source *src, const char *name, const char *column,
                                       uint64_t *off, uint64_t *len, hs_index_binding *bind,
                                       char **bind_path, hs_error *err);

/* The byte ranges hs_table_vector_index_open(index_path, column) will
 * read past the Puffin footer and the index's head (hs_vidx_open_reads),
 * appended to *out (offsets into index_path's object). Reads the footer
 * and the head through the object cache: a caller on an object store
 * fetches those first, and then every file's ranges in one wave. */
hs_status hs_table_vector_index_open_reads(const char *index_path, const char *column,
                                           hs_vidx_reads *out, hs_error *err);

#endif /* HS_TABLE_VECTOR_INDEX_H */

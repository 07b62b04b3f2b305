/*
 * parquet.h — what other layers may use of the Parquet layer: the public
 * reader/writer API (hyperstream.h) plus read access to parsed metadata.
 * Everything else in src/parquet/ is private to the layer.
 */
#ifndef HS_PARQUET_H
#define HS_PARQUET_H

#include "hyperstream.h"
#include "metadata.h"

/* The parsed footer of an open reader; borrowed, valid while it is open. */
const hs_pq_file_metadata *hs_parquet_reader_metadata(const hs_parquet_reader *reader);

#endif /* HS_PARQUET_H */

/*
 * binding.h — what ties an index blob to the one data file it describes,
 * and the checksum that ties it to its own bytes (binding.c).
 *
 * Every blob we write (scalar and vector) records, as Puffin blob
 * properties (string to string, apache/iceberg format/puffin-spec.md):
 *   "data-file"               the data file's path relative to the table
 *                             root ("data/00000-0-<uuid>.parquet")
 *   "data-file-size"          its size in bytes (decimal)
 *   "data-file-footer-crc32c" CRC-32C of its Parquet FileMetaData bytes (8 hex)
 *   "crc32c"                  CRC-32C of the blob's own bytes (8 hex)
 * A reader uses a blob only when all four agree with what it has: the
 * registry's data file and size, the footer it opened, and the bytes it
 * read (verified once per file version per process, see
 * hs_index_blob_verify). Anything else is a mismatch: the index is ignored,
 * the file scanned exactly, and the reason reported (src/index/README.md).
 *
 * Ownership: a binding's strings belong to whoever filled it (the parsed
 * footer of an open index file, or the builder's caller).
 */
#ifndef HS_INDEX_BINDING_H
#define HS_INDEX_BINDING_H

#include <jansson.h>

#include "../io/io.h"

typedef struct hs_index_binding {
  const char *data_file; /* relative to the table root; NULL: none recorded (an older index) */
  uint64_t data_file_size;
  uint32_t footer_crc32c;
  bool has_crc; /* blob_crc32c recorded */
  uint32_t blob_crc32c;
} hs_index_binding;

/* Add b's data-file properties (not "crc32c") to the Puffin blob
 * properties object `props`. b->data_file NULL adds nothing. */
hs_status hs_index_binding_put(const hs_index_binding *b, json_t *props, hs_error *err);
/* Add "crc32c" = crc of blob[0..len) to `props`. */
hs_status hs_index_binding_put_crc(const uint8_t *blob, size_t len, json_t *props, hs_error *err);

/* Read the four properties from `props` (which must outlive *out: the
 * strings are borrowed from it, unless `copy` gives an arena-free strdup
 * that the caller frees with hs_free). Absent properties leave
 * data_file NULL / has_crc false; malformed ones are HS_ERR_CORRUPT
 * naming `what`. */
hs_status hs_index_binding_get(const json_t *props, const char *what, hs_index_binding *out,
                               char **data_file_copy, hs_error *err);

/* Whether `b` describes the data file at `data_path` (its resolved path:
 * the recorded relative name must be its tail after a '/') of `size`
 * bytes whose footer CRC is `footer_crc` (footer_known false: not
 * compared). On false, `why` (cap bytes) says which part differs. */
bool hs_index_binding_matches(const hs_index_binding *b, const char *data_path, uint64_t size,
                              bool footer_known, uint32_t footer_crc, char *why, size_t cap);

/* Verify that bytes [off, off + len) of `src` have CRC-32C `crc`: read in
 * 1 MiB pieces without mapping them (hs_source_read_unmapped). A file
 * source verified once is remembered per process by its stamp (device,
 * inode, size, mtime) and offset, so a later open of the same file
 * version costs a lookup. Mismatch: HS_ERR_CORRUPT naming the source,
 * the offset and both checksums. */
hs_status hs_index_blob_verify(hs_source *src, uint64_t off, uint64_t len, uint32_t crc,
                               hs_error *err);
/* hs_index_blob_verify, always reading the bytes when `force` (what
 * validation uses: a check never answered from memory). */
hs_status hs_index_blob_check(hs_source *src, uint64_t off, uint64_t len, uint32_t crc, bool force,
                              hs_error *err);

/* Record that a reader left a registered index unused (`why` names the
 * index and data file): counted per process, the last reason kept, for
 * hs_index_rejections (include/hyperstream.h). */
void hs_index_rejection_note(const char *why);

/* The last two components of `p` ("index/<uuid>.puffin", borrowed): how
 * messages name a table's file without its long root. */
const char *hs_index_short_path(const char *p);

/* Forget every remembered verification (tests). */
void hs_index_verified_clear(void);

#endif /* HS_INDEX_BINDING_H */

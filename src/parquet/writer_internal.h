/*
 * writer_internal.h — private to the Parquet writer: the leaf-column plan
 * derived from an Arrow schema (schema_write.c) and the column-chunk
 * writer that turns Arrow buffers into pages (column_write.c, statistics in
 * column_stats.c). writer.c
 * drives both: it slices batches into row groups, emits chunks to the sink,
 * keeps the page indexes until the end and writes the footer.
 *
 * Data flow for one leaf and one row group:
 *   Arrow rows --(levels, value gather, type conversion)--> page buffers
 *   --(dictionary or PLAIN/DELTA/BSS encoding, compression)--> chunk bytes
 *   (dictionary page first, then data pages) --> sink.
 */
#ifndef HS_PARQUET_WRITER_INTERNAL_H
#define HS_PARQUET_WRITER_INTERNAL_H

#include "../arrow/arrow.h"
#include "../io/io.h"
#include "metadata.h"

/* How an Arrow value becomes a Parquet physical value. */
typedef enum hs_wconv {
  HS_WCONV_COPY,        /* same bytes (int32/64, uint32/64, float, double, FLBA, float16) */
  HS_WCONV_I8,          /* int8 -> INT32 */
  HS_WCONV_U8,          /* uint8 -> INT32 */
  HS_WCONV_I16,         /* int16 -> INT32 */
  HS_WCONV_U16,         /* uint16 -> INT32 */
  HS_WCONV_DATE64,      /* int64 ms -> INT32 days (floor) */
  HS_WCONV_MUL1000_I32, /* time32[s] -> INT32 ms */
  HS_WCONV_MUL1000_I64, /* timestamp[s] -> INT64 ms */
  HS_WCONV_DECIMAL,     /* 16-byte little-endian -> FLBA big-endian, type_length bytes */
  HS_WCONV_BOOL,        /* bitmap -> BOOLEAN */
  HS_WCONV_BINARY,      /* int32 offsets + data -> BYTE_ARRAY */
  HS_WCONV_LARGE_BINARY /* int64 offsets + data -> BYTE_ARRAY */
} hs_wconv;

/* Sort order used for statistics (Parquet's TYPE_ORDER per logical type). */
typedef enum hs_wsort {
  HS_WSORT_I32,
  HS_WSORT_U32,
  HS_WSORT_I64,
  HS_WSORT_U64,
  HS_WSORT_FLOAT,
  HS_WSORT_DOUBLE,
  HS_WSORT_FLOAT16,    /* FLBA(2) IEEE half, little-endian */
  HS_WSORT_DECIMAL_BE, /* FLBA big-endian two's complement: signed */
  HS_WSORT_BYTES,      /* unsigned lexicographic (strings, binary, FLBA, bool) */
} hs_wsort;

enum { HS_WLIST_NONE = 0, HS_WLIST = 1, HS_WLIST_LARGE = 2, HS_WLIST_FIXED = 3 };

/* One leaf column of the file: where its data is in a batch and how it is
 * written. Strings point into the owning hs_wschema's arena. */
typedef struct hs_wleaf {
  int32_t field;     /* top-level field (child of the batch struct) */
  const char *name;  /* top-level field name */
  const char **path; /* path_in_schema */
  uint32_t n_path;
  const char *dotted; /* "a.list.element", for messages */
  hs_pq_type type;
  int32_t type_length; /* FLBA width */
  int16_t max_def, max_rep;
  hs_wconv conv;
  int src_width; /* bytes per Arrow value for fixed-width sources */
  hs_wsort sort;
  int list_kind;       /* HS_WLIST_* */
  int32_t list_size;   /* HS_WLIST_FIXED */
  bool field_nullable; /* the top-level field (the list itself for lists) */
  bool elem_nullable;  /* list element; a struct's leaf itself */
  /* Leaves inside structs: the struct levels above the leaf (the top-level
   * field is level 0), the child taken below each and whether each is
   * nullable. 0: not in a struct. */
  uint32_t n_struct;
  const int32_t *struct_child;
  const bool *struct_nullable;
  int encoding; /* HS_ENCODING_*; DEFAULT = dictionary with PLAIN fallback */
} hs_wleaf;

typedef struct hs_wschema {
  hs_arena arena;
  hs_pq_schema_element *elems; /* depth-first, elems[0] is the root */
  uint32_t n_elems;
  hs_wleaf *leaves;
  uint32_t n_leaves;
  int32_t n_fields;
  char *fixed_list_json; /* value of "hyperstream:fixed_size_list" or NULL (arena) */
} hs_wschema;

/* Struct nesting the writer takes (levels of structs in one column). */
#define HS_WSTRUCT_DEPTH_MAX 32

/* Build the Parquet schema and the leaf plan for a struct schema. Encoding
 * overrides and use_dictionary come from `opts`. Unsupported types give
 * HS_ERR_UNSUPPORTED naming the column and its Arrow format. */
hs_status hs_wschema_build(const struct ArrowSchema *schema, const hs_parquet_write_options *opts,
                           hs_wschema *out, hs_error *err);
void hs_wschema_free(hs_wschema *s); /* accepts a zeroed struct */

/* Compare two statistics values in physical form under `sort`. */
int hs_wstat_cmp(hs_wsort sort, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);
/* True for an IEEE half NaN (2 bytes, little-endian): excluded from stats. */
bool hs_wstat_half_is_nan(const uint8_t *p);

/* ------------------------------------------------------ column writer */

typedef struct hs_wopts {
  int32_t codec;
  int level;
  int64_t page_bytes_max;
  int64_t list_page_bytes_max; /* leaves with max_rep > 0 */
  int64_t dictionary_bytes_max;
  int page_version;
  int compress_min_saving_pct; /* v2: store pages saving less uncompressed */
  bool delta_fallback;         /* INT32/INT64 without dictionary: DELTA */
  bool statistics;
  bool page_index;
  bool crc;
} hs_wopts;

/* The dictionary is judged after the first HS_WDICT_PROBE values of a
 * chunk: when more than 15/16 of them are distinct (unique ids, timestamps,
 * random floats) it is dropped at once instead of after a full page. For
 * uniformly drawn values that fraction means more than ~8 x HS_WDICT_PROBE
 * distinct values, which a 1 MB page of 8-byte values would also reject. */
#define HS_WDICT_PROBE 16384

/* Smallest fixed list size whose repetition levels stay implicit: from 16
 * on, the RLE encoder writes every such row as the same bytes. */
#define HS_WREP_IMPLICIT_MIN 16

/* Per-page facts kept for the ColumnIndex and OffsetIndex. */
typedef struct hs_wpage {
  int64_t offset;    /* relative to the first data page of the chunk */
  int32_t size;      /* header + body as written */
  int64_t first_row; /* within the row group */
  int64_t null_count;
  bool null_page;
  bool has_minmax;
  uint32_t min_off, min_len, max_off, max_len; /* into hs_wcol.pi_bytes */
} hs_wpage;

/* A running min/max in physical form. */
typedef struct hs_wstat {
  bool has;
  hs_buf min, max;
} hs_wstat;

typedef struct hs_wbytes {
  const uint8_t *p;
  uint32_t len;
} hs_wbytes;

/* Running statistics (column_stats.c). The add/merge calls return false
 * only when out of memory. */
void hs_wstat_free(hs_wstat *s);
/* Merge a candidate [mn, mx] into `s`. */
bool hs_wstat_merge(hs_wstat *s, hs_wsort sort, const uint8_t *mn, size_t mnl, const uint8_t *mx,
                    size_t mxl);
/* Merge nv fixed-width values of w bytes (NaNs skipped). */
bool hs_wstat_add_fixed(hs_wstat *s, hs_wsort sort, const uint8_t *f, int64_t nv, size_t w);
/* Merge nv byte arrays (unsigned lexicographic order). */
bool hs_wstat_add_bytes(hs_wstat *s, const hs_wbytes *v, int64_t nv);
/* Parquet: a zero minimum is written -0.0 and a zero maximum +0.0. */
void hs_wstat_fix_zero(hs_wstat *s, hs_wsort sort);

typedef struct hs_wcol {
  const hs_wleaf *leaf;
  const hs_wopts *o;
  int phys_width; /* bytes per physical value for fixed-width types; 0 for BYTE_ARRAY */

  /* Current page. */
  hs_buf def, rep;     /* int16 levels */
  int64_t page_levels; /* levels (= num_values in the header) */
  int64_t page_values; /* non-null values */
  int64_t page_rows;
  int64_t page_bytes; /* plain-equivalent value bytes */
  hs_buf vals;        /* PLAIN layout (or 0/1 bytes for BOOLEAN) */
  hs_buf idx;         /* uint32 dictionary indices while the dictionary is active */
  hs_wstat page_stat;
  bool page_minmax_bad; /* values present but no ordering value (all NaN) */
  /* While true, `def` holds nothing and every level of the page is max_def
   * (columns without nulls skip the per-level work). */
  bool def_implicit;
  /* While true, `rep` holds nothing and every row of the page is one full
   * fixed-size list (levels 0, 1, 1, ...): vectors of HS_WREP_IMPLICIT_MIN
   * or more values, whose repetition levels are then emitted per row. */
  bool rep_implicit;
  uint32_t page_serial; /* increases with every page (stamps below) */

  /* Dictionary (open addressing on a power-of-two table of index + 1). */
  bool dict_on;          /* encoding data pages with the dictionary */
  bool dict_used;        /* at least one data page used it: a dictionary page is due */
  bool dict_hopeless;    /* a previous chunk abandoned it: start without */
  bool dict_probed;      /* this chunk's first HS_WDICT_PROBE values were judged */
  uint8_t byte_map[256]; /* 1-byte values (BOOLEAN): entry + 1, no hashing */
  uint32_t *table;
  uint32_t table_cap;
  uint32_t *hashes; /* per entry */
  uint32_t *offs;   /* BYTE_ARRAY: entry start in dict_vals (at its length prefix) */
  uint32_t *stamps; /* BYTE_ARRAY: page_serial of the last page whose stats saw the entry */
  uint32_t dict_n, dict_cap;
  hs_buf dict_vals; /* PLAIN-encoded entries: this is the dictionary page body */

  /* Scratch. */
  hs_buf gather; /* converted values of one mini-batch */
  hs_buf vidx;   /* int64 value positions of one mini-batch */
  hs_buf enc, body, hdr;
  hs_buf lv32; /* levels widened to uint32 for the RLE encoder */
  int64_t est_row_bytes;

  /* Chunk output. */
  hs_buf pages;          /* data pages (header + body), in order, not yet drained */
  int64_t pages_drained; /* bytes of data pages already handed to the sink */
  hs_buf dict_page;      /* dictionary page (header + body) once finished */
  int64_t chunk_rows, chunk_levels, chunk_nulls;
  int64_t uncompressed_bytes, compressed_bytes; /* incl. headers */
  hs_wstat chunk_stat;
  bool chunk_minmax_bad;
  bool used_plain, used_dict, used_other;
  int other_encoding;
  hs_wpage *page_list;
  uint32_t n_pages, pages_cap;
  hs_buf pi_bytes; /* page min/max values */
} hs_wcol;

/* Recycled scratch buffers (write_pool.c), by role. take: when *b is
 * empty, give it a pooled buffer of that role if one is free (len 0).
 * give: keep *b's memory for a later writer or free it; *b is zeroed. */
enum {
  HS_WBUF_PAGES,
  HS_WBUF_VALS,
  HS_WBUF_ENC,
  HS_WBUF_BODY,
  HS_WBUF_IDX,
  HS_WBUF_GATHER,
  HS_WBUF_DEF,
  HS_WBUF_REP,
  HS_WBUF_LV32,
  HS_WBUF_VIDX,
  HS_WBUF_DICT,
  HS_WBUF_ROLES
};
void hs_wpool_take(int role, hs_buf *b);
void hs_wpool_give(int role, hs_buf *b);

hs_status hs_wcol_init(hs_wcol *c, const hs_wleaf *leaf, const hs_wopts *o, hs_error *err);
void hs_wcol_free(hs_wcol *c);
/* Append rows [start, start + n) (logical indices, i.e. not counting
 * arr->offset) of the top-level field array `arr`. `arr` is borrowed for the
 * call only: everything kept is copied. */
hs_status hs_wcol_write(hs_wcol *c, const struct ArrowArray *arr, int64_t start, int64_t n,
                        hs_error *err);
/* Flush the last page and build the dictionary page. After this the chunk
 * is dict_page + pages. */
hs_status hs_wcol_finish(hs_wcol *c, hs_error *err);
/* Forget the chunk (after it was emitted), keep allocations for the next. */
void hs_wcol_reset(hs_wcol *c);

#endif /* HS_PARQUET_WRITER_INTERNAL_H */

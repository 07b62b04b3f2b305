/*
 * sidx_internal.h — private to src/index/scalar/: the blob layout of a
 * scalar inverted index (README.md, "Blob layout"), order-preserving key
 * encoding, the key-table view and the strict checker of CRoaring's
 * portable serialization that every bitmap passes before CRoaring sees it.
 */
#ifndef HS_INDEX_SIDX_INTERNAL_H
#define HS_INDEX_SIDX_INTERNAL_H

#include <inttypes.h>
#include <string.h>

#include "../index.h"

/* Puffin container (apache/iceberg format/puffin-spec.md). */
#define HS_PUFFIN_MAGIC "PFA1"
#define HS_PUFFIN_FOOTER_TAIL 12 /* payload size (4), flags (4), magic (4) */
#define HS_PUFFIN_FOOTER_MAX ((uint32_t)1 << 26)
#define HS_SIDX_COLUMNS_MAX 4096 /* index blobs per file: keeps checks quadratic-safe */
#define HS_SIDX_BLOB_TYPE "hyperstreamdb-inverted-index-v1"

/* Blob header: fixed 64 bytes, little endian. Sections follow in this
 * order, back to back, and end exactly at the blob's end:
 *   null bitmap | key table | directory | data. */
#define HS_SIDX_MAGIC "HSX1"
/* Format 2: blobs with lossy SORTED blocks (HS_SIDX_FLAG_LOSSY). A new magic,
 * so that readers of format 1 refuse them instead of taking their supersets
 * for exact answers. Every other blob is still written as format 1. */
#define HS_SIDX_MAGIC_LOSSY "HSX2"
#define HS_SIDX_HEADER_BYTES 64
#define HS_SIDX_BLOCK_ROWS_DEFAULT 4096u
#define HS_SIDX_BLOCK_ROWS_MAX (1u << 20)
#define HS_SIDX_DIR_SORTED_ENTRY 16 /* u64 block offset, u32 count, u32 bitmap bytes */
/* Header flags (u32 at offset 28; 0 in files written before they existed). */
#define HS_SIDX_FLAG_PACKED 1u /* SORTED blocks are packed (README "Packed blocks") */
/* SORTED blocks hold only their bitmap (README "Lossy blocks"): a block
 * partly inside a range answers with all its rows; magic HSX2, and only
 * this flag. */
#define HS_SIDX_FLAG_LOSSY 2u
/* Packed block key-bits byte: high bit set = sparse deltas (a mask bit per
 * pair, then the non-zero deltas only); the low 7 bits are the width. */
#define HS_SIDX_KEYS_SPARSE 0x80u

typedef enum hs_sidx_key_type {
  HS_SIDX_KT_BOOL = 1,    /* width 1: 0 or 1 */
  HS_SIDX_KT_INT = 2,     /* width 8: int64 big endian with the sign bit flipped */
  HS_SIDX_KT_UINT = 3,    /* width 8: uint64 big endian */
  HS_SIDX_KT_FLOAT = 4,   /* width 8: double mapped to an ordered uint64, big endian */
  HS_SIDX_KT_BYTES = 5,   /* width 0 (variable): the bytes themselves */
  HS_SIDX_KT_FIXED = 6,   /* width w: the bytes themselves */
  HS_SIDX_KT_DECIMAL = 7, /* width 16: int128 big endian with the sign bit flipped */
} hs_sidx_key_type;

typedef struct hs_sidx_header {
  uint8_t layout;   /* hs_sidx_layout: DICT or SORTED */
  uint8_t key_type; /* hs_sidx_key_type */
  uint16_t key_width;
  uint32_t row_count;
  uint32_t null_count;
  uint32_t n_entries; /* DICT: distinct values; SORTED: blocks */
  uint32_t block_rows;
  int32_t decimal_scale;
  uint32_t flags; /* HS_SIDX_FLAG_* */
  uint64_t null_len, keys_len, dir_len, data_len;
} hs_sidx_header;

void hs_sidx_header_write(const hs_sidx_header *h, uint8_t out[HS_SIDX_HEADER_BYTES]);
/* Parse and check a header against the blob length (sections in range,
 * widths consistent with the key type, counts plausible for the bytes). */
hs_status hs_sidx_header_parse(const uint8_t *p, uint64_t blob_len, hs_sidx_header *h,
                               const char *column, hs_error *err);

/* The key type and width for an Arrow type; HS_ERR_UNSUPPORTED otherwise. */
hs_status hs_sidx_key_type_of(const hs_arrow_type *t, hs_sidx_key_type *kt, uint16_t *width,
                              hs_error *err);

/* --------------------------------------------------------- key encoding */

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline void hs_sidx_store_u64be(uint8_t *p, uint64_t v) {
  v = __builtin_bswap64(v);
  memcpy(p, &v, 8);
}
static inline uint64_t hs_sidx_load_u64be(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}
#else
static inline void hs_sidx_store_u64be(uint8_t *p, uint64_t v) {
  for (int i = 7; i >= 0; i--) {
    p[i] = (uint8_t)v;
    v >>= 8;
  }
}
static inline uint64_t hs_sidx_load_u64be(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}
#endif
static inline uint64_t hs_sidx_int_bits(int64_t v) {
  return (uint64_t)v ^ ((uint64_t)1 << 63);
}
/* Doubles in SQL order: -0.0 is 0.0, every NaN is one NaN above +inf. */
static inline uint64_t hs_sidx_float_bits(double d) {
  if (d != d) return UINT64_MAX;
  if (d == 0) d = 0.0;
  uint64_t u;
  memcpy(&u, &d, 8);
  return (u >> 63) ? ~u : u | ((uint64_t)1 << 63);
}

/* A view over a key table of n keys: fixed width (n * width bytes) or, for
 * width 0, (n + 1) u32 offsets then the bytes. */
typedef struct hs_sidx_keys {
  const uint8_t *p;
  size_t len;
  uint32_t n;
  uint16_t width;
  const uint8_t *heap; /* variable: bytes after the offsets */
} hs_sidx_keys;

/* Bind a view, checking its size (and, for variable keys, that offsets
 * start at 0, never decrease and end at the heap's length). */
hs_status hs_sidx_keys_bind(hs_sidx_keys *k, const uint8_t *p, size_t len, uint32_t n,
                            uint16_t width, hs_error *err);
static inline const uint8_t *hs_sidx_keys_get(const hs_sidx_keys *k, uint32_t i, size_t *len) {
  if (k->width != 0) {
    *len = k->width;
    return k->p + (size_t)i * k->width;
  }
  uint32_t a = hs_load_u32le(k->p + (size_t)i * 4), b = hs_load_u32le(k->p + (size_t)i * 4 + 4);
  *len = b - a;
  return k->heap + a;
}
/* memcmp order, shorter first on a common prefix. */
int hs_sidx_key_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb);
/* First index in [0, n) whose key is >= (strict: >) the probe; n if none.
 * `stride`/`first` select every stride-th key from `first` (SORTED block
 * minima/maxima). */
uint32_t hs_sidx_keys_lower_bound(const hs_sidx_keys *k, uint32_t first, uint32_t stride,
                                  uint32_t n, const uint8_t *probe, size_t probe_len, bool strict);

/* ------------------------------------------------------ roaring bitmaps */

/* Check that p[0..len) is exactly one bitmap in CRoaring's portable format
 * whose values are all < row_count, with sorted keys, sorted array
 * containers, bitset cardinalities that match their bits and ordered,
 * non-overlapping runs. *card gets its cardinality. */
hs_status hs_sidx_roaring_check(const uint8_t *p, size_t len, uint32_t row_count, uint64_t *card,
                                hs_error *err);
/* Check, then deserialize (CRoaring allocates). */
hs_status hs_sidx_roaring_load(const uint8_t *p, size_t len, uint32_t row_count,
                               roaring_bitmap_t **out, hs_error *err);
/* Check, and OR the values into `words` ((row_count + 63) / 64 of them,
 * row r at bit r & 63 of word r >> 6): a union of many posting lists
 * without a bitmap per list (README.md "Range answers"). On an error the
 * words hold part of the bitmap. */
hs_status hs_sidx_roaring_or_words(const uint8_t *p, size_t len, uint32_t row_count,
                                   uint64_t *words, hs_error *err);
/* The rows set in words ((row_count + 63) / 64 words) as a new bitmap, built
 * through one portable serialization (*out owned by the caller). */
hs_status hs_sidx_roaring_from_words(const uint64_t *words, uint32_t row_count,
                                     roaring_bitmap_t **out, hs_error *err);
/* The container directory of a portable bitmap, for reading single values
 * in place (no copy, no allocation): the header parts are checked to fit,
 * the containers' bytes when a value is read from them. */
typedef struct hs_sidx_roaring_view {
  const uint8_t *p;
  size_t len;
  uint32_t n;               /* containers */
  const uint8_t *run_flags; /* NULL: no run containers */
  const uint8_t *desc;      /* n x (u16 key, u16 cardinality - 1) */
  const uint8_t *offs;      /* n u32 container offsets, or NULL */
  size_t data;              /* the first container's offset */
  uint64_t card;            /* the sum of the containers' cardinalities */
} hs_sidx_roaring_view;
hs_status hs_sidx_roaring_view_init(const uint8_t *p, size_t len, hs_sidx_roaring_view *v,
                                    hs_error *err);
/* The value of rank k (0-based) in the bitmap's order. Checks only that
 * what it reads lies inside the bytes (HS_ERR_CORRUPT otherwise), not the
 * bitmap's sortedness: callers bound the value (row < row_count). */
hs_status hs_sidx_roaring_select(const hs_sidx_roaring_view *v, uint64_t k, uint32_t *value,
                                 hs_error *err);
/* Append the portable serialization of r (after run optimization). */
hs_status hs_sidx_roaring_append(roaring_bitmap_t *r, hs_buf *out, hs_error *err);

/* ------------------------------------------------------ reader state */

typedef struct hs_sidx_blob_ref {
  char *column;
  uint64_t offset, length;
  hs_index_binding bind; /* data_file owned (bind_path) */
  char *bind_path;
} hs_sidx_blob_ref;

struct hs_sidx_file {
  hs_source *src;
  hs_sidx_blob_ref *blobs;
  size_t n_blobs;
};

struct hs_sidx_column {
  hs_source *src;
  char *name;
  hs_index_binding bind; /* data_file owned (bind_path) */
  char *bind_path;
  uint64_t blob_off, blob_len;
  hs_sidx_header h;
  uint8_t *meta; /* key table then directory, owned */
  hs_sidx_keys keys;
  const uint8_t *dir;
  uint64_t data_off; /* absolute */
  hs_buf scratch;
  hs_buf unpacked; /* a packed block's keys and rows, decoded */
};

/* A SORTED block: its extent in the data section and its parts
 * ([bitmap][key table][count u32 rows], or packed: [bitmap][u8 key bits]
 * [u8 rank bits][u16 0][keys][ranks]). Offsets were checked at open. */
typedef struct hs_sidx_block {
  uint64_t off, len;
  uint32_t count, bitmap_len;
  uint32_t index;
} hs_sidx_block;

hs_sidx_block hs_sidx_block_at(const hs_sidx_column *c, uint32_t i);
/* Bind a whole block read at p: its key table and row array (u32 little
 * endian). A packed block is decoded into c->unpacked (valid until the
 * next bind), checking every field against the block's extent. */
hs_status hs_sidx_block_bind(hs_sidx_column *c, const hs_sidx_block *r, const uint8_t *p,
                             hs_sidx_keys *keys, const uint8_t **rows, hs_error *err);

/* The parts of a packed block (README "Packed blocks") after its bitmap,
 * every width and length checked against the block's extent. */
typedef struct hs_sidx_packed {
  unsigned key_bits, rank_bits;
  bool sparse;          /* a mask bit per pair (delta != 0), then the non-zero deltas */
  const uint8_t *mask;  /* sparse: ceil(count / 8) bytes */
  const uint8_t *keys;  /* 8-byte keys: the bit-packed deltas; else a plain key table */
  size_t keys_len;      /* bytes at keys */
  const uint8_t *ranks; /* count ranks of rank_bits bits */
  size_t ranks_len;
} hs_sidx_packed;
hs_status hs_sidx_packed_parse(const hs_sidx_column *c, const hs_sidx_block *r, const uint8_t *p,
                               hs_sidx_packed *out, hs_error *err);

/* Little-endian bit streams of w-bit values (w <= 64). */
static inline uint64_t hs_sidx_bits_get(const uint8_t *p, uint64_t pos, unsigned w) {
  uint64_t v = 0;
  for (unsigned got = 0; got < w;) {
    unsigned off = (unsigned)(pos & 7), take = 8 - off;
    if (take > w - got) take = w - got;
    v |= (uint64_t)((p[pos >> 3] >> off) & ((1u << take) - 1)) << got;
    got += take;
    pos += take;
  }
  return v;
}
static inline void hs_sidx_bits_put(uint8_t *p, uint64_t pos, unsigned w, uint64_t v) {
  for (unsigned put = 0; put < w;) {
    unsigned off = (unsigned)(pos & 7), take = 8 - off;
    if (take > w - put) take = w - put;
    p[pos >> 3] |= (uint8_t)(((v >> put) & ((1u << take) - 1)) << off);
    put += take;
    pos += take;
  }
}
/* Value i of a stream of `len` bytes: one unaligned 8-byte load when it
 * fits (w <= 56), else the byte loop. */
static inline uint64_t hs_sidx_bits_at(const uint8_t *p, size_t len, uint64_t i, unsigned w) {
  uint64_t pos = i * w;
  if (w <= 56 && (pos >> 3) + 8 <= len) {
    uint64_t v = hs_load_u64le(p + (pos >> 3)) >> (pos & 7);
    return w == 0 ? 0 : v & (((uint64_t)1 << w) - 1);
  }
  return hs_sidx_bits_get(p, pos, w);
}
/* Bits needed for v (0 for 0). */
static inline unsigned hs_sidx_bit_width(uint64_t v) {
  unsigned w = 0;
  while (v) {
    w++;
    v >>= 1;
  }
  return w;
}
/* A key in the memcmp order of sidx keys (a view: not owned). */
typedef struct hs_sidx_kview {
  const uint8_t *p;
  size_t n;
} hs_sidx_kview;
/* OR into acc the rows of a SORTED column whose key is one of ks[0..n)
 * (sorted, distinct): a merge of the keys with the blocks' (min, max)
 * directory; in a block holding some of them only the pairs up to the last
 * one are decoded, and only matching pairs' rows read (inverted_probe.c). */
hs_status hs_sidx_sorted_points(hs_sidx_column *c, const hs_sidx_kview *ks, size_t n,
                                roaring_bitmap_t *acc, hs_error *err);
/* OR the bitmap at p[0..len) into acc (checked first). */
hs_status hs_sidx_load_or(hs_sidx_column *c, const uint8_t *p, size_t len, roaring_bitmap_t *acc,
                          hs_error *err);
/* Borrow len bytes at absolute offset off (valid until the next view). */
hs_status hs_sidx_column_view(hs_sidx_column *c, uint64_t off, uint64_t len, const uint8_t **p,
                              hs_error *err);

#endif /* HS_INDEX_SIDX_INTERNAL_H */

/*
 * vidx_internal.h — what vidx_build.c, vidx_read.c and vidx_search.c
 * share: the file layout constants (README.md in this directory documents
 * the format) and the opened index.
 */
#ifndef HS_INDEX_VECTOR_VIDX_INTERNAL_H
#define HS_INDEX_VECTOR_VIDX_INTERNAL_H

#include <pthread.h>

#include "hnsw.h"
#include "vidx.h"

#define HS_VIDX_MAGIC "HSVIDX\0\1"
/* Version 1: layer-0 links in fixed blocks. Version 2 (written only when
 * layer 0 is compact, so fixed-layout files stay version 1 and readable by
 * older builds): the LINKS0 section may be compact (HS_VIDX_H_LINK0_IDW). */
#define HS_VIDX_VERSION 2u
#define HS_VIDX_VERSION_FIXED 1u
#define HS_VIDX_HEADER_LEN 128u
#define HS_VIDX_SECTION_ENTRY_LEN 32u
#define HS_VIDX_ALIGN 64u
#define HS_VIDX_MAX_DIM 65536u

/* Header fields (byte offsets, all little-endian). */
enum {
  HS_VIDX_H_MAGIC = 0,       /* 8 bytes */
  HS_VIDX_H_VERSION = 8,     /* u32 */
  HS_VIDX_H_HEADER_LEN = 12, /* u32, 128 */
  HS_VIDX_H_DIM = 16,
  HS_VIDX_H_METRIC = 20,
  HS_VIDX_H_ROW_COUNT = 24,
  HS_VIDX_H_INDEXED = 28,
  HS_VIDX_H_M = 32,
  HS_VIDX_H_M0 = 36,
  HS_VIDX_H_EF_CONSTRUCTION = 40,
  HS_VIDX_H_PARTITIONS = 44,
  HS_VIDX_H_QUANT = 48,
  HS_VIDX_H_CODE_SIZE = 52,
  HS_VIDX_H_SECTIONS = 56,
  HS_VIDX_H_TABLE_CRC = 60,    /* crc32 of the section table */
  HS_VIDX_H_UPPER_BLOCKS = 64, /* u64 */
  HS_VIDX_H_VDIM = 72,         /* u32: floats per stored vector (IP: dim + 1) */
  HS_VIDX_H_LINK0_IDW = 76,    /* u32, version 2: 0 fixed layer 0, 3 or 4 compact (id bytes) */
  HS_VIDX_H_LINK0_IDS = 80,    /* u64, version 2: neighbour ids in a compact layer 0 */
  HS_VIDX_H_WALK_FLOAT = 88,   /* u32: 1 = SQ8 codes for exact scans only, walks on float32 */
  HS_VIDX_H_CRC = 124,         /* crc32 of bytes [0, 124) */
};

/* Section ids; each appears at most once, in this order. */
enum {
  HS_VIDX_S_ROWS = 1,      /* n u32: local id -> data file row */
  HS_VIDX_S_VECTORS = 2,   /* n * vdim f32 (cosine: normalised; IP: augmented) */
  HS_VIDX_S_LEVELS = 3,    /* n u8 */
  HS_VIDX_S_LINKS0 = 4,    /* n * (1 + m0) u32; compact: (n + 1) u32 offsets, ids * idw bytes */
  HS_VIDX_S_UPPER = 5,     /* upper_blocks * (1 + m) u32 */
  HS_VIDX_S_PARTS = 6,     /* partitions * 4 u32: start, count, entry, max_level */
  HS_VIDX_S_CENTROIDS = 7, /* partitions * vdim f32 (only when partitions > 1) */
  HS_VIDX_S_QUANT = 8,     /* hs_quant_serialize blob (only when quantized) */
  HS_VIDX_S_CODES = 9,     /* n * code_size bytes (only when quantized) */
  HS_VIDX_S_MAX = 9
};

/* Per-query scratch, pooled in the index (no allocation per query once
 * warm). */
typedef struct hs_vidx_scratch {
  hs_hnsw_scratch hs;
  float *q;          /* the query, normalised for cosine */
  hs_hnsw_cand *all; /* merged candidates */
  size_t all_cap;
  hs_vidx_hit *hits; /* reported (distance, row) */
  size_t hits_cap;
  float *vbuf;     /* lean indexes: fetch_batch vectors read from the file */
  uint32_t *ids;   /* lean indexes: their local ids */
  uint32_t *probe; /* IVF partitions to visit */
  float *probe_d;
  uint64_t *bits; /* vidx_allow.c: the allow-set as row_words words (allocated on first use) */
  uint8_t *ser;   /* its roaring serialization */
  size_t ser_cap;
  hs_vidx_reads *collect; /* hs_vidx_search_reads: ranges go here, nothing is read */
  /* hs_vidx_search_parts_reads: the probed lists' unloaded ranges go here */
  hs_vidx_reads *collect_parts;
  hs_vidx_cands *cands; /* hs_vidx_search_cands: the candidates go here */
  hs_hnsw_cand *flat;   /* a flat list scan's best ef */
  size_t flat_cap;
  uint32_t *cids; /* a coarse scan's candidates (local ids) */
  size_t cids_cap;
  struct hs_vidx_scratch *next;
} hs_vidx_scratch;

struct hs_vidx {
  hs_source *src;
  uint32_t dim, vdim, row_count, n, m, m0, ef_construction, n_parts, code_size;
  hs_metric metric;
  hs_quant_kind quant_kind;
  hs_hnsw_graph g;
  hs_hnsw_part *parts;  /* owned */
  const uint32_t *rows; /* local -> row */
  const float *centroids;
  const uint8_t *codes;
  hs_quant *quant; /* owned; NULL when there are no codes */
  /* The codes are scan codes (HS_VIDX_H_WALK_FLOAT): quant_kind is NONE,
   * the walks are on float32, exact scans read the SQ8 codes. */
  bool walk_float;
  size_t sec_quant_len;            /* bytes of the QUANT section */
  uint32_t *sorted_rows;           /* owned: rows ascending */
  uint32_t *sorted_local;          /* owned: their local ids */
  bool rows_identity;              /* rows[i] == i for all i: lookups are trivial */
  roaring_bitmap_t *indexed;       /* owned (CRoaring allocator) */
  uint64_t *indexed_bits;          /* owned: the same as row_words words (vidx_allow.c) */
  uint32_t bit_rows;               /* rows the bitsets cover: last indexed row + 1 (0 when none) */
  uint32_t row_words;              /* (bit_rows + 63) / 64 */
  hs_buf owned[HS_VIDX_S_MAX + 1]; /* sections copied out of the source */
  /* Lean (quantized index in a file, README.md "Memory of a quantized
   * index"): the VECTORS section is neither mapped nor checksummed at open
   * (g.vectors is NULL); search reads the rows it re-ranks or scans with
   * pread, hs_vidx_validate checks the checksum. */
  bool lean;
  uint64_t vec_off; /* the section's offset in the source */
  uint32_t vec_crc;
  uint32_t fetch_batch; /* vectors per read buffer (vbuf) */
  /* Partial (a lean PQ index with IVF lists on an object store: README.md
   * "IVF-PQ lists"): the CODES, LINKS0 and UPPER sections are not read at
   * open. A search loads the codes of the lists it probes into codes_buf
   * (part_loaded[p] set once list p's are there, under mu) and the graph
   * sections whole the first time it walks a list (links_loaded); a list
   * scanned flat (hs_vidx_part_flat) needs no links. hs_vidx_validate loads
   * everything, so it checks the sections' checksums. */
  bool partial;
  uint8_t *part_loaded; /* owned: n_parts flags (atomic loads, set under mu) */
  uint8_t *codes_buf;   /* owned: n * code_size */
  uint8_t links_loaded; /* atomic */
  uint64_t sec_off[HS_VIDX_S_MAX + 1], sec_len[HS_VIDX_S_MAX + 1]; /* in the source */
  uint32_t sec_crc[HS_VIDX_S_MAX + 1];
  uint32_t idw;      /* the header's layer-0 id width */
  uint64_t link_ids; /* and id count */
  /* SQ8: worst-case reconstruction error |x - x'| of an indexed row, in L2
   * (sqrt(sum (step/2)^2)) and L1 (sum step/2), with slack; the default
   * re-rank stops once no remaining candidate can enter the top-k. */
  float sq8_err_l2, sq8_err_l1;
  /* 4-bit scan codes (hs_quant_sq4_derive of the SQ8 codes), made on the
   * first coarse scan (vidx_search.c, README.md "Coarse code scan"):
   * n * code4_size bytes at codes4, 64-byte aligned inside codes4_mem;
   * codes4_state 0 not made, 1 ready, 2 failed (atomic loads, set under mu). */
  uint8_t *codes4_mem, *codes4;
  size_t code4_size;
  int codes4_state;
  hs_index_binding bind; /* vidx_bind.c: bind.data_file is bind_path (owned) */
  char *bind_path;
  pthread_mutex_t mu;
  hs_vidx_scratch *pool;
};

/* The graph's distance for a metric. IP is searched as L2 over vectors
 * augmented with one component sqrt(M^2 - |x|^2) (M the largest norm; the
 * query's extra component is 0): |q - x'|^2 = |q|^2 + M^2 - 2 q.x, so the
 * order is the inner product's, and the graph is built on a true metric
 * (README.md, "Inner product"). */
static inline hs_hnsw_space hs_vidx_space(hs_metric m) {
  if (m == HS_METRIC_L2 || m == HS_METRIC_L2SQ || m == HS_METRIC_IP) return HS_HNSW_L2SQ;
  if (m == HS_METRIC_L1) return HS_HNSW_L1;
  return HS_HNSW_NEGDOT;
}

static inline uint32_t hs_vidx_vdim(hs_metric m, uint32_t dim) {
  return dim + (m == HS_METRIC_IP ? 1u : 0u);
}

/* vidx_allow.c: allow-sets as flat bitsets over the data file's rows. */
hs_status hs_vidx_indexed_bits_init(hs_vidx *x, hs_error *err);
/* |words ∩ indexed| over the first nwords words. */
uint64_t hs_vidx_bits_count(const hs_vidx *x, const uint64_t *words, size_t nwords);
/* `words` itself when it covers row_words, else a zero-padded copy in the
 * scratch; NULL when out of memory. */
const uint64_t *hs_vidx_bits_pad(const hs_vidx *x, hs_vidx_scratch *s, const uint64_t *words,
                                 size_t nwords);
/* The rows of `r` (below bit_rows) as row_words words in the scratch;
 * NULL when out of memory or the serialization is not one it knows. */
const uint64_t *hs_vidx_bits_from_roaring(const hs_vidx *x, hs_vidx_scratch *s,
                                          const roaring_bitmap_t *r);

/* vidx_read.c, partial indexes: whether list p's codes (and, with walk,
 * the graph) are loaded; the ranges that are not appended to r (false when
 * out of memory); load them from the source (prefetched by the caller:
 * from the object cache), checking the graph as the open checks it. */
bool hs_vidx_part_ready(const hs_vidx *x, uint32_t p, bool walk);
bool hs_vidx_part_missing(const hs_vidx *x, uint32_t p, bool walk, hs_vidx_reads *r);
hs_status hs_vidx_part_load(hs_vidx *x, uint32_t p, bool walk, hs_error *err);

/* vidx_search.c: append (off, len) to r (grown as needed); false when out
 * of memory (r is left as it was). */
bool hs_vidx_reads_add(hs_vidx_reads *r, uint64_t off, size_t len);

/* The reported (pgvector) distance from the internal one (not IP: its
 * distance is recomputed from the vectors). */
float hs_vidx_report(hs_metric m, float internal);

#endif /* HS_INDEX_VECTOR_VIDX_INTERNAL_H */

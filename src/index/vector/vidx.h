/*
 * vidx.h — the vector index of one data file ("vidx"): IVF partitions with
 * an HNSW graph per partition (one partition when the file is small), with
 * optional SQ8 or PQ codes for traversal and exact re-ranking on the
 * float32 vectors, which the index file keeps too (so a search never
 * decodes Parquet). Rows are the data file's row positions (uint32);
 * null or non-finite vectors are left out of the index.
 *
 * The index file is one byte string (stored as a blob of an Iceberg Puffin
 * file beside the data file, like the scalar indexes). Its layout and the
 * reasons are in README.md in this directory.
 *
 * Refinements of the first contract (all documented in README.md):
 * inner product is searched as L2 over augmented vectors (exact -q.x
 * reported); cosine rows are normalised copies and a zero query is
 * HS_ERR_INVALID_ARG; hs_vidx_search_params.exact_rows sets the filtered
 * exact-scan bound; hs_vidx_default_partitions says what partitions = 0
 * means; a quantized index re-ranks the best `rerank` candidates (default:
 * SQ8 the whole beam, but IP stopping once its error bound shows no further
 * candidate can enter the top-k: the same answers; PQ the best few times k
 * by code distance, as IVF-PQ refines). A quantized index
 * opened from a file source is "lean": its float32 section is neither
 * mapped nor checksummed at open, search reads the rows it re-ranks or
 * scans with pread (resident memory: graph + codes), and hs_vidx_validate
 * checks that section's checksum.
 * HS_VIDX_RESIDENT=1 in the environment restores the mapped behaviour.
 * A lean PQ index with IVF lists on an object store opens "partial": its
 * codes and links are loaded by the searches that need them, a probed
 * list's codes by range (README.md "IVF-PQ lists"; HS_VIDX_PARTIAL=0: off).
 *
 * Ownership: hs_vidx_build appends to a caller-owned hs_buf (reserving room
 * for the whole file once and building its large sections there in place:
 * README.md "Build memory"; a failed build leaves out->len as it was). An opened
 * index keeps a reference to its source (hs_source_unref on free) and
 * is read-only after open: any number of threads may search one index at
 * once. Filters are borrowed for the duration of a call.
 */
#ifndef HS_INDEX_VECTOR_VIDX_H
#define HS_INDEX_VECTOR_VIDX_H

#include <roaring/roaring.h>
#include <stddef.h>
#include <stdint.h>

#include "../../io/io.h"
#include "../binding.h"
#include "distance.h"
#include "quant.h"

/* Layer-0 link layout (README.md "File format"). AUTO: compact for
 * quantized indexes (their resident memory is graph + codes), fixed blocks
 * for float32 ones (the fastest walk). */
typedef enum hs_vidx_links {
  HS_VIDX_LINKS_AUTO = 0,
  HS_VIDX_LINKS_FIXED = 1,   /* (1 + 2m) u32 per node; a version-1 file */
  HS_VIDX_LINKS_COMPACT = 2, /* only the used ids, 3 bytes each below 2^24 nodes */
} hs_vidx_links;

/* Bounds on caller-given sizes (README.md "Limits"). A build refuses m,
 * ef_construction and partitions above these (HS_ERR_INVALID_ARG naming the
 * parameter); threads above HS_VIDX_THREADS_MAX are clamped to it (the
 * worker pool never runs more, so the work is the same). */
#define HS_VIDX_M_MAX 256u /* = HS_HNSW_MAX_M */
#define HS_VIDX_EF_CONSTRUCTION_MAX 65536u
#define HS_VIDX_PARTITIONS_MAX 65536u
#define HS_VIDX_THREADS_MAX 256u

/* SQ8 codes a float32 index keeps beside its vectors for the exact scans of
 * filtered searches only (README.md "Scan codes"): the walks stay on float32,
 * an exact scan reads dim bytes per allowed row instead of 4 dim and
 * re-ranks its best rows on float32, stopping on the codes' error bound (the
 * same answers). AUTO: kept for every metric but inner product (no bound);
 * NONE: not kept. Quantized indexes scan their own SQ8 codes either way. */
typedef enum hs_vidx_scan_codes {
  HS_VIDX_SCAN_CODES_AUTO = 0,
  HS_VIDX_SCAN_CODES_NONE = 1,
} hs_vidx_scan_codes;

typedef struct hs_vidx_params {
  hs_metric metric;         /* L2, L2SQ, IP, COSINE or L1 */
  uint32_t m;               /* graph degree (layer 0 has 2m); 0: default */
  uint32_t ef_construction; /* 0: default */
  uint32_t partitions;      /* IVF lists; 0: chosen from the row count */
  hs_quant_params quant;    /* kind HS_QUANT_NONE: traverse on float32 */
  uint64_t seed;
  uint32_t threads;    /* 0: the machine's cores */
  hs_vidx_links links; /* layer-0 layout */
  hs_vidx_scan_codes scan_codes;
} hs_vidx_params;

/* Defaults chosen by measurement (README.md says which numbers). */
void hs_vidx_params_default(hs_vidx_params *p);

/* The partition count chosen when hs_vidx_params.partitions is 0; and
 * the smaller lists a PQ index on an object store is read by range with
 * (README.md "IVF-PQ lists"), for a caller to pass as partitions. */
uint32_t hs_vidx_default_partitions(size_t n_indexed);
uint32_t hs_vidx_default_partitions_pq(size_t n_indexed);

/* Build the index of `n` vectors of `dim` floats (row-major; row i is data
 * file row i). `valid` is an Arrow validity bitmap (NULL: all valid); rows
 * that are null or hold a NaN/inf component are not indexed. The index
 * bytes are appended to `out`. */
hs_status hs_vidx_build(const float *vectors, size_t n, size_t dim, const uint8_t *valid,
                        const hs_vidx_params *p, hs_buf *out, hs_error *err);

typedef struct hs_vidx hs_vidx;

/* Open an index stored at [offset, offset + len) of `src` (a reference is
 * taken). Checks the header and every section's bounds; HS_ERR_CORRUPT
 * naming the section otherwise. *out is owned (hs_vidx_free). */
hs_status hs_vidx_open(hs_source *src, uint64_t offset, uint64_t len, hs_vidx **out, hs_error *err);
void hs_vidx_free(hs_vidx *x); /* accepts NULL */

/* The data file the index was built for, as its Puffin blob records it
 * (../binding.h), set by whoever opened it from a Puffin file (a copy is
 * kept); unset: data_file NULL. */
hs_status hs_vidx_set_binding(hs_vidx *x, const hs_index_binding *b, hs_error *err);
const hs_index_binding *hs_vidx_binding(const hs_vidx *x);

/* Deep check: every neighbour id in range, no self loops, partition lists
 * disjoint and covering the indexed rows, codes and vectors present (a
 * lean index streams its float32 section from the file: checksum too). */
hs_status hs_vidx_validate(const hs_vidx *x, hs_error *err);

uint32_t hs_vidx_dim(const hs_vidx *x);
hs_metric hs_vidx_metric(const hs_vidx *x);
uint32_t hs_vidx_row_count(const hs_vidx *x);     /* rows of the data file */
uint32_t hs_vidx_indexed_count(const hs_vidx *x); /* rows in the index */
uint32_t hs_vidx_partition_count(const hs_vidx *x);
hs_quant_kind hs_vidx_quant_kind(const hs_vidx *x);

/* PQ's default re-rank (README.md "Quantized traversal"): the best
 * max(HS_VIDX_PQ_RERANK_K * k, HS_VIDX_PQ_RERANK_MIN) candidates by code
 * distance, of a beam of nprobe * ef. */
#define HS_VIDX_PQ_RERANK_K 16u
#define HS_VIDX_PQ_RERANK_MIN 128u

typedef struct hs_vidx_search_params {
  uint32_t ef_search; /* 0: default (max(k, 64)) */
  uint32_t nprobe;    /* partitions visited; 0: default */
  /* Quantized indexes: candidates re-ranked exactly, best approximate
   * distance first; 0: the default (SQ8: the whole beam, stopping at its
   * error bound; PQ: max(HS_VIDX_PQ_RERANK_K * k, HS_VIDX_PQ_RERANK_MIN)). */
  uint32_t rerank;
  /* Filters allowing at most this many indexed rows are answered by an
   * exact scan of those rows, others by the walk; 0: the planner's cost
   * model decides (README.md, "Filtered search"). 1 forces the traversal
   * for every filter allowing two rows or more (tests use it); UINT32_MAX
   * always scans exactly. */
  uint32_t exact_rows;
  /* PQ: a share of a re-rank budget spread over several indexes
   * (hs_vidx_search_cands): re-rank exactly this many best candidates,
   * even fewer than k (so fewer hits); 0: `rerank` as above. */
  uint32_t rerank_share;
  /* A partial index's filtered PQ scan (README.md "Filtered PQ scan"):
   * the allowed rows' codes in at most this many ranged reads; 0: 24. A
   * caller fetching several files' in one wave divides its wave among
   * them. Which bytes are read, never which rows are answered. */
  uint32_t scan_ranges;
} hs_vidx_search_params;

typedef struct hs_vidx_hit {
  uint32_t row;   /* data file row position */
  float distance; /* the exact distance in the index's metric (pgvector's value) */
} hs_vidx_hit;

/* The (approximately) k nearest indexed rows to `query` (dim floats),
 * sorted by (distance, row) ascending, with exact distances. `allowed`
 * (NULL: every row) restricts the answer to its rows: the search adapts
 * (exact scan of the allowed rows when few, filter-aware traversal when
 * many) and never returns fewer than min(k, allowed indexed rows) hits.
 * `hits` has room for min(k, hs_vidx_indexed_count(x)); *n_hits is set.
 * `sp` may be NULL. Sizes are bounded by the index, not by the arguments:
 * k is clamped to the indexed rows, ef_search (and its filtered widening)
 * to the rows of the partition searched, nprobe to the partitions, rerank
 * to the beam: the same answers as the larger values, with memory and work
 * bounded by the index whatever the caller passes. */
hs_status hs_vidx_search(const hs_vidx *x, const float *query, uint32_t k,
                         const hs_vidx_search_params *sp, const roaring_bitmap_t *allowed,
                         hs_vidx_hit *hits, uint32_t *n_hits, hs_error *err);

/* Byte ranges of an index's source, as (off[i], len[i]) pairs (owned;
 * hs_vidx_reads_free). */
typedef struct hs_vidx_reads {
  uint64_t *off;
  size_t *len;
  size_t n, cap;
} hs_vidx_reads;
void hs_vidx_reads_free(hs_vidx_reads *r);

/* What hs_vidx_open(src, offset, len) will read beyond the header and
 * section table, appended to *out: every section but a lean index's
 * float32 vectors (the small structures: row ids, levels, links, IVF
 * lists and centroids, the quantizer and its codes). Reads the header and
 * the section table (a caller on an object store has them fetched with the
 * file's head) and checks their checksums; nothing else. A caller opening
 * several indexes on an object store fetches every file's ranges in one
 * parallel wave (store.h prefetch), and then each open reads from the
 * object cache instead of one round trip per file. */
hs_status hs_vidx_open_reads(hs_source *src, uint64_t offset, uint64_t len, hs_vidx_reads *out,
                             hs_error *err);

/* What hs_vidx_search(x, query, k, sp, allowed) will read from x's source
 * beyond what the open read, appended to *out: a lean index's float32 rows
 * that its re-rank or exact scan scores (nothing for other indexes). The
 * traversal runs (on the codes and links, in memory) but nothing is read
 * or scored, so a caller searching several indexes on an object store
 * fetches every file's rows in one parallel wave (store.h prefetch), and
 * then the searches read from the object cache. */
hs_status hs_vidx_search_reads(const hs_vidx *x, const float *query, uint32_t k,
                               const hs_vidx_search_params *sp, const roaring_bitmap_t *allowed,
                               hs_vidx_reads *out, hs_error *err);

/* What hs_vidx_search(x, ...) will load of a partial index (a lean PQ
 * index with IVF lists on an object store: README.md "IVF-PQ lists") that
 * it has not loaded yet, appended to *out: the codes of the lists it
 * probes (and the graph sections when it walks one). Nothing for other
 * indexes. A caller searching several indexes fetches every file's ranges
 * in one wave before hs_vidx_search_reads (whose walk needs the codes). */
hs_status hs_vidx_search_parts_reads(const hs_vidx *x, const float *query, uint32_t k,
                                     const hs_vidx_search_params *sp,
                                     const roaring_bitmap_t *allowed, hs_vidx_reads *out,
                                     hs_error *err);

/* A PQ search's re-rank candidates: the approximate (code) distances of
 * the rows hs_vidx_search would re-rank exactly, ascending (owned:
 * hs_vidx_cands_free). `applies` false when the search would not re-rank
 * PQ candidates (another quantizer, an exact scan of float32 rows):
 * nothing to share; a filter's PQ scan (README.md "Filtered PQ scan") has
 * candidates too. A caller searching several PQ indexes merges their
 * candidates, keeps the best 1.5 x the largest `rerank` over all of them (1 x
 * for PQ scans: `scan`), and
 * searches each index with rerank_share = its count among those (one
 * re-rank budget per query, not one per file; README.md "IVF-PQ lists"). */
typedef struct hs_vidx_cands {
  float *approx;
  size_t n, cap;
  bool applies;
  /* what the search would re-rank on its own (a budget shared over
   * indexes is sized from it): hs_vidx_pq_rerank(k) for a walk or list
   * scan, fewer for a filter's PQ scan (README.md "Filtered PQ scan") */
  uint32_t rerank;
  /* a filter's PQ scan: every allowed row scored, so a shared budget keeps
   * the best `rerank` over all indexes (what one index holding every row
   * would re-rank), not 1.5 x it */
  bool scan;
} hs_vidx_cands;
void hs_vidx_cands_free(hs_vidx_cands *c);
hs_status hs_vidx_search_cands(const hs_vidx *x, const float *query, uint32_t k,
                               const hs_vidx_search_params *sp, const roaring_bitmap_t *allowed,
                               hs_vidx_cands *out, hs_error *err);
/* PQ's default re-rank count for k (HS_VIDX_PQ_RERANK_K, _MIN above;
 * HS_VIDX_PQ_RERANK=N overrides). */
uint32_t hs_vidx_pq_rerank(uint32_t k);

/* The same with the allow-set given as a flat bitset over the data file's
 * rows: row r is allowed when bit r % 64 of words[r / 64] is set (rows at
 * or past nwords * 64 are not). No conversion per call: the walk tests
 * these words (README.md "Filtered search"). words NULL: nwords must be 0,
 * and nothing is allowed. */
hs_status hs_vidx_search_bits(const hs_vidx *x, const float *query, uint32_t k,
                              const hs_vidx_search_params *sp, const uint64_t *words, size_t nwords,
                              hs_vidx_hit *hits, uint32_t *n_hits, hs_error *err);

#endif /* HS_INDEX_VECTOR_VIDX_H */

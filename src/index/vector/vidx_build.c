/*
 * vidx_build.c — building a vector index file: choose the indexed rows
 * (valid, finite; cosine: non-zero), copy them (normalised for cosine),
 * build one HNSW graph per partition, and write the sections with their
 * CRC32s (layout: README.md).
 */
#include <math.h>
#include <string.h>
#include <zlib.h>

#include "kmeans.h"
#include "vidx_internal.h"

/* Measured on clustered data (README.md, "Defaults"). */
#define HS_VIDX_DEFAULT_M 16u
#define HS_VIDX_DEFAULT_EF_CONSTRUCTION 100u
/* Default IVF partitioning (hs_vidx_default_partitions; README.md). */
#define HS_VIDX_ONE_GRAPH_ROWS 4000000u
#define HS_VIDX_PARTITION_ROWS 2000000u
/* PQ indexes on object stores: IVF lists of about sqrt(2 n) rows from
 * HS_VIDX_PQ_IVF_ROWS indexed rows, for a caller to pass as partitions
 * (hs_vidx_default_partitions_pq; README.md "IVF-PQ lists"). */
#define HS_VIDX_PQ_IVF_ROWS 8192u

void hs_vidx_params_default(hs_vidx_params *p) {
  memset(p, 0, sizeof *p);
  p->metric = HS_METRIC_L2;
  p->m = HS_VIDX_DEFAULT_M;
  p->ef_construction = HS_VIDX_DEFAULT_EF_CONSTRUCTION;
  p->partitions = 0;
  p->quant.kind = HS_QUANT_NONE;
  p->seed = 42;
  p->threads = 0;
}

static bool row_indexable(const float *v, size_t dim, hs_metric metric) {
  double norm = 0;
  for (size_t j = 0; j < dim; j++) {
    if (!isfinite(v[j])) return false;
    norm += (double)v[j] * v[j];
  }
  return metric != HS_METRIC_COSINE || (norm > 0 && isfinite(norm));
}

typedef struct section {
  uint32_t id;
  const void *data; /* copied as is (unless already in place), or (NULL) filled from the graph */
  uint64_t len;
} section;

/* The file: its sections, each one's offset, and the layer-0 layout. */
typedef struct layout {
  section s[HS_VIDX_S_MAX];
  uint64_t offs[HS_VIDX_S_MAX], len;
  uint32_t ns, idw;
  uint64_t link_ids;
  bool compact;
} layout;

static uint64_t align_up(uint64_t v) {
  return (v + HS_VIDX_ALIGN - 1) / HS_VIDX_ALIGN * HS_VIDX_ALIGN;
}

/* The offset of section `id` (0 when absent). */
static uint64_t layout_off(const layout *L, uint32_t id) {
  for (uint32_t i = 0; i < L->ns; i++)
    if (L->s[i].id == id) return L->offs[i];
  return 0;
}

/* Lays the file out. Layer 0 is compact (version 2) for quantized indexes by
 * default, when its offsets fit in u32; fixed blocks (version 1) otherwise.
 * Before the graph is built (g->links0 NULL) the offsets up to LINKS0 are
 * already final: ROWS, VECTORS and a fixed LINKS0 can be filled in place. */
static void plan(layout *L, const hs_vidx_params *p, uint32_t n, uint32_t vdim, uint32_t m0,
                 const hs_hnsw_graph *g, uint32_t n_parts, const float *centroids,
                 const uint32_t *rows, const float *vecs, const uint32_t *pw, bool quantized,
                 bool has_codes, const hs_buf *quant_blob, const uint8_t *codes, size_t code_size) {
  L->link_ids = 0;
  for (uint32_t i = 0; g->links0 != NULL && i < n; i++) L->link_ids += hs_hnsw_links(g, i, 0)[0];
  L->compact = p->links == HS_VIDX_LINKS_COMPACT || (p->links == HS_VIDX_LINKS_AUTO && quantized);
  if (L->link_ids > UINT32_MAX) L->compact = false;
  L->idw = L->compact ? (n <= (1u << 24) ? 3u : 4u) : 0u;
  /* Sections are written from host memory: little-endian hosts only (the
   * build refuses others). */
  uint32_t ns = 0;
  section *s = L->s;
  s[ns++] = (section){HS_VIDX_S_ROWS, rows, (uint64_t)n * 4};
  s[ns++] = (section){HS_VIDX_S_VECTORS, vecs, (uint64_t)n * vdim * 4};
  s[ns++] = (section){HS_VIDX_S_LEVELS, g->levels, n};
  if (L->compact)
    s[ns++] = (section){HS_VIDX_S_LINKS0, NULL, ((uint64_t)n + 1) * 4 + L->link_ids * L->idw};
  else
    s[ns++] = (section){HS_VIDX_S_LINKS0, g->links0, (uint64_t)n * (1 + m0) * 4};
  s[ns++] = (section){HS_VIDX_S_UPPER, g->upper, g->upper_blocks * (1 + p->m) * 4};
  s[ns++] = (section){HS_VIDX_S_PARTS, pw, (uint64_t)n_parts * 16};
  if (n_parts > 1)
    s[ns++] = (section){HS_VIDX_S_CENTROIDS, centroids, (uint64_t)n_parts * vdim * 4};
  if (has_codes) {
    s[ns++] = (section){HS_VIDX_S_QUANT, quant_blob ? quant_blob->data : NULL,
                        quant_blob ? quant_blob->len : 0};
    s[ns++] = (section){HS_VIDX_S_CODES, codes, (uint64_t)n * code_size};
  }
  L->ns = ns;
  uint64_t off = HS_VIDX_HEADER_LEN + (uint64_t)ns * HS_VIDX_SECTION_ENTRY_LEN;
  for (uint32_t i = 0; i < ns; i++) {
    off = align_up(off);
    L->offs[i] = off;
    off += s[i].len;
  }
  L->len = off;
}

/* The compact layer 0 (LINKS0 of a version-2 file) from the builder's
 * fixed blocks: (n + 1) u32 offsets, then every node's used ids, idw bytes
 * each, little-endian. */
static void fill_links0_compact(const hs_hnsw_graph *g, uint32_t idw, uint8_t *dst) {
  uint8_t *ids = dst + ((size_t)g->n + 1) * 4;
  uint32_t at = 0;
  for (uint32_t i = 0; i < g->n; i++) {
    const uint32_t *blk = hs_hnsw_links(g, i, 0);
    hs_store_u32le(dst + (size_t)i * 4, at);
    for (uint32_t j = 0; j < blk[0]; j++) {
      uint8_t *o = ids + (size_t)(at + j) * idw;
      uint32_t v = blk[1 + j];
      o[0] = (uint8_t)v;
      o[1] = (uint8_t)(v >> 8);
      o[2] = (uint8_t)(v >> 16);
      if (idw == 4) o[3] = (uint8_t)(v >> 24);
    }
    at += blk[0];
  }
  hs_store_u32le(dst + (size_t)g->n * 4, at);
}

static uint32_t crc_of(const uint8_t *d, uint64_t len) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (uint64_t done = 0; done < len;) { /* zlib takes uInt lengths */
    uint64_t chunk = len - done > (1u << 30) ? (1u << 30) : len - done;
    crc = crc32(crc, d + done, (uInt)chunk);
    done += chunk;
  }
  return (uint32_t)crc;
}

/* Writes the file laid out by L at out->data + out->len, section by section
 * at its final place: sections built there already (ROWS, VECTORS, a fixed
 * LINKS0, CODES: `in_place`, room reserved by the caller) are only
 * checksummed, the others copied once. No second copy of the index. */
static hs_status write_file(const layout *L, const hs_vidx_params *p, uint32_t dim, uint32_t vdim,
                            uint32_t row_count, uint32_t n, uint32_t m0, uint32_t n_parts,
                            size_t code_size, hs_quant_kind code_kind, bool walk_float,
                            const hs_hnsw_graph *g, bool in_place, hs_buf *out, hs_error *err) {
  if (L->len > SIZE_MAX / 2)
    return hs_error_set(err, HS_ERR_NOMEM, "vidx: a %llu-byte index", (unsigned long long)L->len);
  if (in_place ? L->len > out->cap - out->len : !hs_buf_reserve(out, (size_t)L->len))
    return hs_error_set(err, in_place ? HS_ERR_INTERNAL : HS_ERR_NOMEM,
                        "vidx: no room for a %llu-byte index", (unsigned long long)L->len);
  uint8_t *f = out->data + out->len;
  memset(f, 0, (size_t)L->offs[0]);
  uint8_t *table = f + HS_VIDX_HEADER_LEN;
  for (uint32_t i = 0; i < L->ns; i++) {
    const section *sec = &L->s[i];
    uint64_t end = i + 1 < L->ns ? L->offs[i + 1] : L->len;
    uint8_t *d = f + L->offs[i];
    if (sec->data == NULL && sec->id == HS_VIDX_S_LINKS0) {
      fill_links0_compact(g, L->idw, d);
    } else if ((const uint8_t *)sec->data != d && sec->len > 0) {
      if ((const uint8_t *)sec->data >= out->data &&
          (const uint8_t *)sec->data < out->data + out->cap) /* in place, but elsewhere */
        return hs_error_set(err, HS_ERR_INTERNAL, "vidx: section %u built at the wrong place",
                            sec->id);
      memcpy(d, sec->data, (size_t)sec->len);
    }
    memset(d + sec->len, 0, (size_t)(end - L->offs[i] - sec->len)); /* alignment padding */
    uint8_t *e = table + i * HS_VIDX_SECTION_ENTRY_LEN;
    hs_store_u32le(e, sec->id);
    hs_store_u32le(e + 4, crc_of(d, sec->len));
    hs_store_u64le(e + 8, L->offs[i]);
    hs_store_u64le(e + 16, sec->len);
  }
  uint8_t *h = f;
  memcpy(h, HS_VIDX_MAGIC, 8);
  hs_store_u32le(h + HS_VIDX_H_VERSION, L->compact ? HS_VIDX_VERSION : HS_VIDX_VERSION_FIXED);
  hs_store_u32le(h + HS_VIDX_H_HEADER_LEN, HS_VIDX_HEADER_LEN);
  hs_store_u32le(h + HS_VIDX_H_DIM, dim);
  hs_store_u32le(h + HS_VIDX_H_METRIC, (uint32_t)p->metric);
  hs_store_u32le(h + HS_VIDX_H_ROW_COUNT, row_count);
  hs_store_u32le(h + HS_VIDX_H_INDEXED, n);
  hs_store_u32le(h + HS_VIDX_H_M, p->m);
  hs_store_u32le(h + HS_VIDX_H_M0, m0);
  hs_store_u32le(h + HS_VIDX_H_EF_CONSTRUCTION, p->ef_construction);
  hs_store_u32le(h + HS_VIDX_H_PARTITIONS, n_parts);
  hs_store_u32le(h + HS_VIDX_H_QUANT, code_size > 0 ? (uint32_t)code_kind : HS_QUANT_NONE);
  hs_store_u32le(h + HS_VIDX_H_CODE_SIZE, (uint32_t)code_size);
  hs_store_u32le(h + HS_VIDX_H_SECTIONS, L->ns);
  hs_store_u32le(h + HS_VIDX_H_TABLE_CRC, crc_of(table, L->ns * HS_VIDX_SECTION_ENTRY_LEN));
  hs_store_u64le(h + HS_VIDX_H_UPPER_BLOCKS, g->upper_blocks);
  hs_store_u32le(h + HS_VIDX_H_VDIM, vdim);
  hs_store_u32le(h + HS_VIDX_H_LINK0_IDW, L->idw);
  hs_store_u64le(h + HS_VIDX_H_LINK0_IDS, L->compact ? L->link_ids : 0);
  hs_store_u32le(h + HS_VIDX_H_WALK_FLOAT, walk_float ? 1u : 0u);
  hs_store_u32le(h + HS_VIDX_H_CRC, crc_of(h, HS_VIDX_H_CRC));
  out->len += (size_t)L->len;
  return HS_OK;
}

_Static_assert(HS_VIDX_M_MAX == HS_HNSW_MAX_M, "vidx and hnsw agree on the largest m");

uint32_t hs_vidx_default_partitions(size_t n_indexed) {
  /* One graph below HS_VIDX_ONE_GRAPH_ROWS: partitions are built one after
   * the other (no parallelism gained) and all probed, so at equal recall
   * one graph answers faster (1M x 128: 1.29x the single-query QPS of two
   * 500K graphs at recall 0.95, README.md "Defaults"); the split only
   * shortened the build (0.86x). Beyond, partitions of at most
   * HS_VIDX_PARTITION_ROWS bound a graph's build time and its per-thread
   * visited tags. */
  if (n_indexed < HS_VIDX_ONE_GRAPH_ROWS) return 1;
  return (uint32_t)((n_indexed + HS_VIDX_PARTITION_ROWS - 1) / HS_VIDX_PARTITION_ROWS);
}

uint32_t hs_vidx_default_partitions_pq(size_t n_indexed) {
  /* A PQ index is for vectors that do not stay in memory (an object
   * store): its search reads the codes of the probed lists only (lean
   * partial open, README.md "IVF-PQ lists"), so the lists are small: about
   * sqrt(n / 2) of them, which balances the centroids every query reads
   * (P x dim floats) against the probed lists' codes (nprobe / P of n). */
  uint32_t p = hs_vidx_default_partitions(n_indexed);
  if (n_indexed < HS_VIDX_PQ_IVF_ROWS) return p;
  uint32_t q = (uint32_t)(sqrt((double)n_indexed / 2.0) + 0.5);
  if (q > HS_VIDX_PARTITIONS_MAX) q = HS_VIDX_PARTITIONS_MAX;
  return q > p ? q : p;
}

static hs_status partition_rows(const hs_vidx_params *p, size_t dim, size_t n, uint32_t *n_parts,
                                uint32_t *rows, float *vecs, float **centroids,
                                hs_hnsw_part **parts_out, hs_error *err) {
  hs_kmeans_params kp;
  memset(&kp, 0, sizeof kp);
  kp.k = *n_parts;
  kp.seed = p->seed;
  kp.threads = p->threads;
  /* IP rows are augmented (vidx_internal.h): Euclidean clusters of them */
  kp.metric = (p->metric == HS_METRIC_L2SQ || p->metric == HS_METRIC_IP) ? HS_METRIC_L2 : p->metric;
  uint32_t k = 0;
  hs_status st = hs_kmeans_train(vecs, n, dim, &kp, centroids, &k, err);
  if (st != HS_OK) return st;
  uint32_t *assign = hs_malloc(n * sizeof *assign);
  uint32_t *rows2 = hs_malloc(n * sizeof *rows2);
  float *vecs2 = hs_malloc(n * dim * sizeof *vecs2);
  hs_hnsw_part *parts = hs_calloc(k, sizeof *parts);
  if (assign == NULL || rows2 == NULL || vecs2 == NULL || parts == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory partitioning %zu rows", n);
    goto done;
  }
  st = hs_kmeans_assign(vecs, n, dim, *centroids, k, kp.metric, p->threads, assign, NULL, err);
  if (st != HS_OK) goto done;
  for (size_t i = 0; i < n; i++) parts[assign[i]].count++;
  uint32_t at = 0;
  for (uint32_t c = 0; c < k; c++) {
    parts[c].start = parts[c].entry = at;
    at += parts[c].count;
  }
  for (size_t i = 0; i < n; i++) {
    uint32_t dst = parts[assign[i]].entry++; /* entry: a cursor until the build */
    rows2[dst] = rows[i];
    memcpy(vecs2 + (size_t)dst * dim, vecs + i * dim, dim * sizeof *vecs);
  }
  memcpy(rows, rows2, n * sizeof *rows);
  memcpy(vecs, vecs2, n * dim * sizeof *vecs);
  *n_parts = k;
  *parts_out = parts;
  parts = NULL;
done:
  hs_free(assign);
  hs_free(rows2);
  hs_free(vecs2);
  hs_free(parts);
  if (st != HS_OK) {
    hs_free(*centroids);
    *centroids = NULL;
  }
  return st;
}

hs_status hs_vidx_build(const float *vectors, size_t n, size_t dim, const uint8_t *valid,
                        const hs_vidx_params *p_in, hs_buf *out, hs_error *err) {
  const uint16_t probe = 1;
  if (*(const uint8_t *)&probe != 1)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "vidx: big-endian hosts are not supported");
  hs_vidx_params p;
  if (p_in != NULL) {
    p = *p_in;
  } else {
    hs_vidx_params_default(&p);
  }
  hs_vidx_params def;
  hs_vidx_params_default(&def);
  if (p.m == 0) p.m = def.m;
  if (p.ef_construction == 0) p.ef_construction = def.ef_construction;
  if (out == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx build: no output buffer");
  if (dim == 0 || dim > HS_VIDX_MAX_DIM)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx build: dimension %zu outside [1, %u]", dim,
                        HS_VIDX_MAX_DIM);
  if (n >= UINT32_MAX)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx build: %zu rows (a data file holds < 2^32)",
                        n);
  if (n > 0 && vectors == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx build: no vectors for %zu rows", n);
  if (p.metric != HS_METRIC_L2 && p.metric != HS_METRIC_L2SQ && p.metric != HS_METRIC_IP &&
      p.metric != HS_METRIC_COSINE && p.metric != HS_METRIC_L1)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "vidx build: metric %d is not L2, L2SQ, IP, COSINE or L1", (int)p.metric);
  if (p.m < 2 || p.m > HS_VIDX_M_MAX)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "vidx build: m = %u outside [2, %u] (0: the default)", p.m, HS_VIDX_M_MAX);
  if (p.ef_construction > HS_VIDX_EF_CONSTRUCTION_MAX)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "vidx build: ef_construction = %u outside [1, %u] (0: the default)",
                        p.ef_construction, HS_VIDX_EF_CONSTRUCTION_MAX);
  if (p.partitions > HS_VIDX_PARTITIONS_MAX)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "vidx build: partitions = %u outside [0, %u] (0: chosen from the rows)",
                        p.partitions, HS_VIDX_PARTITIONS_MAX);
  /* More threads than the pool runs would only allocate per-thread scratch
   * (visited tags, beams) nobody uses: the same build. */
  if (p.threads > HS_VIDX_THREADS_MAX) p.threads = HS_VIDX_THREADS_MAX;
  if (p.quant.threads > HS_VIDX_THREADS_MAX) p.quant.threads = HS_VIDX_THREADS_MAX;
  if (p.links != HS_VIDX_LINKS_AUTO && p.links != HS_VIDX_LINKS_FIXED &&
      p.links != HS_VIDX_LINKS_COMPACT)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx build: link layout %d", (int)p.links);
  if (p.quant.kind != HS_QUANT_NONE && p.quant.kind != HS_QUANT_SQ8 && p.quant.kind != HS_QUANT_PQ)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx build: quantizer kind %d",
                        (int)p.quant.kind);
  uint32_t m0 = 2 * p.m;
  size_t nidx = 0;
  for (size_t i = 0; i < n; i++) {
    bool ok = valid == NULL || (valid[i >> 3] >> (i & 7) & 1);
    if (ok && row_indexable(vectors + i * dim, dim, p.metric)) nidx++;
  }
  const size_t vdim = hs_vidx_vdim(p.metric, (uint32_t)dim);
  size_t vec_bytes;
  if (!hs_mul_size(nidx, vdim * sizeof(float), &vec_bytes))
    return hs_error_set(err, HS_ERR_NOMEM, "vidx build: %zu x %zu vectors overflow", nidx, dim);
  /* PQ's small lists (hs_vidx_default_partitions_pq) are asked for, not
   * the default: with nprobe 8 of them recall@10 on uniform random vectors
   * fell to 0.39-0.48 (20K x 64, 50K x 32; 0.97-0.996 with one graph). */
  uint32_t n_parts = p.partitions ? p.partitions : hs_vidx_default_partitions(nidx);
  if (n_parts > nidx) n_parts = nidx ? (uint32_t)nidx : 1;
  if (p.scan_codes != HS_VIDX_SCAN_CODES_AUTO && p.scan_codes != HS_VIDX_SCAN_CODES_NONE)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx build: scan codes %d", (int)p.scan_codes);
  const bool quantized = p.quant.kind != HS_QUANT_NONE && nidx > 0;
  /* a float32 index keeps SQ8 codes for its exact scans (vidx.h) */
  const bool scan_codes =
      !quantized && nidx > 0 && p.scan_codes == HS_VIDX_SCAN_CODES_AUTO && p.metric != HS_METRIC_IP;
  const bool has_codes = quantized || scan_codes;
  const hs_quant_kind code_kind = quantized ? p.quant.kind : HS_QUANT_SQ8;

  /* Build in place (README.md "Build memory"): the file's offsets up to
   * LINKS0 depend only on counts known now, so ROWS, VECTORS, a fixed
   * LINKS0 (float32 indexes) and later CODES are built directly in `out`,
   * reserved once for an upper bound of the file (untouched pages cost no
   * memory). Only when out->len is not 4-byte aligned are they separate. */
  hs_hnsw_graph g;
  memset(&g, 0, sizeof g);
  layout L;
  plan(&L, &p, (uint32_t)nidx, (uint32_t)vdim, m0, &g, n_parts, NULL, NULL, NULL, NULL, quantized,
       has_codes, NULL, NULL, 0);
  const bool in_place = out->len % 4 == 0;
  uint8_t *base = NULL;
  if (in_place) {
    uint64_t upper = hs_hnsw_upper_blocks((uint32_t)nidx, p.m, p.seed);
    uint64_t ub = layout_off(&L, HS_VIDX_S_LINKS0) + (uint64_t)nidx * (1 + m0) * 4 +
                  upper * (1 + p.m) * 4 + (uint64_t)n_parts * (16 + vdim * 4) +
                  (has_codes ? 64 + (2 + 256 * (uint64_t)dim) * 4 + (uint64_t)nidx * dim : 0) +
                  8 * HS_VIDX_ALIGN;
    if (ub > SIZE_MAX / 2 || !hs_buf_reserve(out, (size_t)ub))
      return hs_error_set(err, HS_ERR_NOMEM, "vidx build: out of memory for a %llu-byte index",
                          (unsigned long long)ub);
    base = out->data + out->len;
    /* huge pages for the vectors and links searched at random (README.md
     * "Huge pages"): advised before the build touches them */
    hs_mem_advise_huge(base, (size_t)ub);
  }
  uint32_t *rows = in_place ? (uint32_t *)(base + layout_off(&L, HS_VIDX_S_ROWS))
                            : hs_malloc((nidx ? nidx : 1) * sizeof *rows);
  float *vecs = in_place ? (float *)(base + layout_off(&L, HS_VIDX_S_VECTORS))
                         : hs_malloc(vec_bytes ? vec_bytes : 1);
  uint32_t *links0 =
      in_place && !L.compact ? (uint32_t *)(base + layout_off(&L, HS_VIDX_S_LINKS0)) : NULL;
  if (rows == NULL || vecs == NULL) {
    if (!in_place) {
      hs_free(rows);
      hs_free(vecs);
    }
    return hs_error_set(err, HS_ERR_NOMEM, "vidx build: out of memory for %zu vectors", nidx);
  }
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    const float *v = vectors + i * dim;
    bool ok = valid == NULL || (valid[i >> 3] >> (i & 7) & 1);
    if (!ok || !row_indexable(v, dim, p.metric)) continue;
    rows[w] = (uint32_t)i;
    float *dst = vecs + w * vdim;
    if (p.metric == HS_METRIC_COSINE) {
      double norm = 0;
      for (size_t j = 0; j < dim; j++) norm += (double)v[j] * v[j];
      double inv = 1.0 / sqrt(norm);
      for (size_t j = 0; j < dim; j++) dst[j] = (float)(v[j] * inv);
    } else {
      memcpy(dst, v, dim * sizeof(float));
    }
    w++;
  }
  if (p.metric == HS_METRIC_IP) { /* the augmenting component */
    double max_sq = 0;
    for (size_t i = 0; i < nidx; i++) {
      double sq = 0;
      for (size_t j = 0; j < dim; j++) sq += (double)vecs[i * vdim + j] * vecs[i * vdim + j];
      vecs[i * vdim + dim] = (float)sq; /* the norm, for now */
      if (sq > max_sq) max_sq = sq;
    }
    for (size_t i = 0; i < nidx; i++) {
      double rest = max_sq - vecs[i * vdim + dim];
      vecs[i * vdim + dim] = (float)sqrt(rest > 0 ? rest : 0);
    }
  }

  /* IVF: cluster, then order the rows by partition (stable: rows stay
   * ascending inside one). */
  hs_hnsw_part one = {0, (uint32_t)nidx, 0, 0}, *parts = &one;
  float *centroids = NULL;
  hs_status st = HS_OK;
  if (n_parts > 1) {
    uint32_t want = n_parts;
    st = partition_rows(&p, vdim, nidx, &n_parts, rows, vecs, &centroids, &parts, err);
    if (st == HS_OK && n_parts != want) /* k-means gives min(k, n) = want */
      st = hs_error_set(err, HS_ERR_INTERNAL, "%u partitions of %u", n_parts, want);
  }

  g.n = (uint32_t)nidx;
  g.dim = (uint32_t)vdim;
  g.m = p.m;
  g.m0 = m0;
  g.space = hs_vidx_space(p.metric);
  g.vectors = vecs;
  hs_hnsw_build_params bp = {p.m, p.ef_construction, p.threads, p.seed, links0};
  if (st == HS_OK) st = hs_hnsw_build(&g, parts, n_parts, &bp, err);
  /* Quantized codes for traversal (or exact scans), trained on the indexed
   * rows. */
  hs_quant *quant = NULL;
  uint8_t *codes = NULL;
  size_t code_size = 0;
  hs_buf blob;
  hs_buf_init(&blob);
  uint32_t part_words[4 * 1]; /* only used when n_parts == 1 */
  uint32_t *pw = n_parts == 1 ? part_words : hs_malloc((size_t)n_parts * 4 * sizeof *pw);
  if (st == HS_OK && pw == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (uint32_t i = 0; st == HS_OK && i < n_parts; i++) {
    uint32_t v[4] = {parts[i].start, parts[i].count, parts[i].entry, parts[i].max_level};
    for (int j = 0; j < 4; j++) hs_store_u32le((uint8_t *)&pw[4 * i + (uint32_t)j], v[j]);
  }
  float *plain = vecs;
  if (st == HS_OK && has_codes) {
    /* Codes of the user's dimensions (IP: without the augmenting
     * component; -q.x orders as the augmented L2 does). */
    hs_metric qm = p.metric == HS_METRIC_IP  ? HS_METRIC_IP
                   : g.space == HS_HNSW_L2SQ ? HS_METRIC_L2SQ
                   : g.space == HS_HNSW_L1   ? HS_METRIC_L1
                                             : HS_METRIC_IP;
    hs_quant_params qp = p.quant;
    qp.kind = code_kind;
    if (qp.kind == HS_QUANT_PQ && qp.pq_m == 0) {
      /* 4-d sub-spaces from 32 dimensions, 2-d below (README.md: coarser
       * codes mislead the walk) */
      size_t sub = dim >= 32 && dim % 4 == 0 ? 4 : dim % 2 == 0 ? 2 : 1;
      qp.pq_m = (uint32_t)(dim / sub);
    }
    if (qp.seed == 0) qp.seed = p.seed;
    if (qp.threads == 0) qp.threads = p.threads;
    if (vdim != dim) {
      plain = hs_malloc(nidx * dim * sizeof *plain);
      if (plain == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory for %zu rows", nidx);
      for (size_t i = 0; plain != NULL && i < nidx; i++)
        memcpy(plain + i * dim, vecs + i * vdim, dim * sizeof *plain);
    }
    if (st == HS_OK) st = hs_quant_train(plain, nidx, dim, qm, &qp, &quant, err);
    if (st == HS_OK) {
      code_size = hs_quant_code_size(quant);
      st = hs_quant_serialize(quant, &blob, err);
    }
  }
  if (st == HS_OK) { /* the final layout: where CODES go */
    plan(&L, &p, (uint32_t)nidx, (uint32_t)vdim, m0, &g, n_parts, centroids, rows, vecs, pw,
         quantized, has_codes, &blob, NULL, code_size);
    if (has_codes) {
      codes = in_place ? base + layout_off(&L, HS_VIDX_S_CODES) : hs_malloc(nidx * code_size + 1);
      if (codes == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory for %zu codes", nidx);
      if (in_place && layout_off(&L, HS_VIDX_S_CODES) + nidx * code_size > out->cap - out->len)
        st = hs_error_set(err, HS_ERR_INTERNAL, "codes past the reserved index");
      if (st == HS_OK) {
        hs_quant_encode(quant, plain, nidx, codes);
        L.s[L.ns - 1].data = codes;
      }
    }
  }
  if (plain != vecs) hs_free(plain);
  if (st == HS_OK)
    st = write_file(&L, &p, (uint32_t)dim, (uint32_t)vdim, (uint32_t)n, (uint32_t)nidx, m0, n_parts,
                    code_size, code_kind, scan_codes, &g, in_place, out, err);
  hs_quant_free(quant);
  hs_buf_free(&blob);
  if (pw != part_words) hs_free(pw);
  if (parts != &one) hs_free(parts);
  hs_free(centroids);
  if (links0 != NULL && g.links0 == links0) g.links0 = NULL; /* in `out` */
  hs_hnsw_build_free(&g);
  if (!in_place) {
    hs_free(codes);
    hs_free(rows);
    hs_free(vecs);
  }
  if (st != HS_OK) hs_error_prefix(err, "vidx build: ");
  return st;
}

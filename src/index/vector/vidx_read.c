/*
 * vidx_read.c — opening a vector index file: header and section table
 * checks (CRC32 of each), zero-copy views of aligned sections, and the
 * structural checks that make every later search memory-safe (link counts
 * and ids inside their partition, levels consistent with the upper
 * blocks). hs_vidx_validate adds the semantic checks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "vidx_internal.h"

#define CORRUPT(...) hs_error_set(err, HS_ERR_CORRUPT, __VA_ARGS__)

static uint32_t crc_of(const uint8_t *d, uint64_t len) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (uint64_t done = 0; done < len;) {
    uint64_t chunk = len - done > (1u << 30) ? (1u << 30) : len - done;
    crc = crc32(crc, d + done, (uInt)chunk);
    done += chunk;
  }
  return (uint32_t)crc;
}

/* A section's bytes: borrowed from the source when it is memory and the
 * pointer is 4-byte aligned, else copied into x->owned[id]. */
static hs_status section_view(hs_vidx *x, uint32_t id, uint64_t base, uint64_t off, uint64_t len,
                              uint32_t crc, const uint8_t **out, hs_error *err) {
  hs_buf *own = &x->owned[id];
  const uint8_t *p = NULL;
  if (len > SIZE_MAX / 2) return CORRUPT("section %u length %llu", id, (unsigned long long)len);
  if (len == 0) {
    static const uint32_t empty[1];
    *out = (const uint8_t *)empty;
    return HS_OK;
  }
  hs_status st = hs_source_view(x->src, base + off, (size_t)len, own, &p, err);
  if (st != HS_OK) return st;
  if (p != own->data && ((uintptr_t)p & 3u) != 0) {
    own->len = 0;
    if (!hs_buf_append(own, p, (size_t)len))
      return hs_error_set(err, HS_ERR_NOMEM, "section %u: out of memory", id);
    p = own->data;
  }
  if (crc_of(p, len) != crc) return CORRUPT("section %u: checksum mismatch", id);
  *out = p;
  return HS_OK;
}

static int cmp_row_local(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The header at `base` of `src` into h: read, magic, checksum, version. */
static hs_status read_header(hs_source *src, uint64_t base, uint64_t len,
                             uint8_t h[HS_VIDX_HEADER_LEN], hs_error *err) {
  if (len < HS_VIDX_HEADER_LEN)
    return CORRUPT("%llu bytes, shorter than the header", (unsigned long long)len);
  hs_status st = hs_source_read(src, base, HS_VIDX_HEADER_LEN, h, err);
  if (st != HS_OK) return st;
  if (memcmp(h, HS_VIDX_MAGIC, 8) != 0) return CORRUPT("bad magic (not a vector index)");
  if (hs_load_u32le(h + HS_VIDX_H_CRC) != crc_of(h, HS_VIDX_H_CRC))
    return CORRUPT("header checksum mismatch");
  uint32_t version = hs_load_u32le(h + HS_VIDX_H_VERSION);
  if (version != HS_VIDX_VERSION_FIXED && version != HS_VIDX_VERSION)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "format version %u (this build reads %u and %u)",
                        version, HS_VIDX_VERSION_FIXED, HS_VIDX_VERSION);
  if (hs_load_u32le(h + HS_VIDX_H_HEADER_LEN) != HS_VIDX_HEADER_LEN)
    return CORRUPT("header length %u", hs_load_u32le(h + HS_VIDX_H_HEADER_LEN));
  return HS_OK;
}

/* The section table after header h into table (room for HS_VIDX_S_MAX
 * entries), checked against the header's checksum; *ns its entries. */
static hs_status read_table(hs_source *src, uint64_t base, uint64_t len,
                            const uint8_t h[HS_VIDX_HEADER_LEN], uint8_t *table, uint32_t *ns,
                            hs_error *err) {
  *ns = hs_load_u32le(h + HS_VIDX_H_SECTIONS);
  if (*ns < 6 || *ns > HS_VIDX_S_MAX) return CORRUPT("%u sections", *ns);
  uint64_t table_len = (uint64_t)*ns * HS_VIDX_SECTION_ENTRY_LEN;
  if (len < HS_VIDX_HEADER_LEN + table_len) return CORRUPT("section table past the end");
  hs_status st = hs_source_read(src, base + HS_VIDX_HEADER_LEN, (size_t)table_len, table, err);
  if (st != HS_OK) return st;
  if (crc_of(table, table_len) != hs_load_u32le(h + HS_VIDX_H_TABLE_CRC))
    return CORRUPT("section table checksum mismatch");
  return HS_OK;
}

/* Whether an index of quantizer kind `qk` (as searched: scan codes are
 * NONE) opened from `src` is lean (vidx.h): its float32 section neither
 * mapped nor read at open. On an object store too: that section is most
 * of the file, and a query re-ranks a few dozen of its rows (read
 * together, by range). */
static bool lean_for(const hs_source *src, hs_quant_kind qk) {
  const char *resident = getenv("HS_VIDX_RESIDENT");
  return qk != HS_QUANT_NONE && (hs_source_is_file(src) || hs_source_is_remote(src)) &&
         !(resident != NULL && resident[0] == '1');
}

/* Whether a lean index opens partial (vidx_internal.h): PQ with IVF lists
 * on an object store, where each query reads a few lists' codes by range
 * instead of all of them (README.md "IVF-PQ lists"). HS_VIDX_PARTIAL=0
 * turns it off (A/B in one binary). */
static bool partial_for(const hs_source *src, bool lean, uint32_t quant, bool walk_float,
                        uint32_t n_parts) {
  const char *e = getenv("HS_VIDX_PARTIAL");
  return lean && hs_source_is_remote(src) && quant == HS_QUANT_PQ && !walk_float && n_parts > 1 &&
         !(e != NULL && e[0] == '0');
}

/* The sections a partial open leaves to the search. */
static inline bool partial_section(uint32_t id) {
  return id == HS_VIDX_S_LINKS0 || id == HS_VIDX_S_UPPER || id == HS_VIDX_S_CODES;
}

/* Link counts within capacity (search reads only [1, 1 + count)); a
 * compact layer 0's offsets ascend from 0 to its id count by at most m0. */
static hs_status check_links(const hs_vidx *x, hs_error *err) {
  const hs_hnsw_graph *g = &x->g;
  const uint64_t n = x->n;
  if (g->off0 != NULL && (g->off0[0] != 0 || g->off0[n] != x->link_ids))
    return CORRUPT("compact layer 0: offsets span [%u, %u), expected [0, %llu)", g->off0[0],
                   g->off0[n], (unsigned long long)x->link_ids);
  for (uint32_t i = 0; i < x->n; i++) {
    if (g->off0 != NULL) {
      if (g->off0[i + 1] < g->off0[i] || g->off0[i + 1] - g->off0[i] > x->m0)
        return CORRUPT("compact layer 0: node %u has offsets [%u, %u) (degree at most %u)", i,
                       g->off0[i], g->off0[i + 1], x->m0);
    } else if (hs_hnsw_links(g, i, 0)[0] > x->m0) {
      return CORRUPT("node %u: %u links on layer 0", i, hs_hnsw_links(g, i, 0)[0]);
    }
    for (uint32_t l = 1; l <= g->levels[i]; l++)
      if (hs_hnsw_links(g, i, l)[0] > x->m)
        return CORRUPT("node %u: %u links on layer %u", i, hs_hnsw_links(g, i, l)[0], l);
  }
  return HS_OK;
}

/* The graph's layer-0 and upper sections into g (sec: their bytes). */
static void set_links(hs_vidx *x, const uint8_t *links0, const uint8_t *upper) {
  hs_hnsw_graph *g = &x->g;
  if (x->idw == 0) {
    g->links0 = (uint32_t *)links0;
  } else { /* offsets, then the ids (read only through hs_hnsw_neighbours_ro) */
    g->off0 = (const uint32_t *)links0;
    g->ids0 = links0 + ((uint64_t)x->n + 1) * 4;
    g->idw = x->idw;
  }
  g->upper = (uint32_t *)upper;
}

static hs_status open_checked(hs_vidx *x, uint64_t base, uint64_t len, hs_error *err) {
  uint8_t h[HS_VIDX_HEADER_LEN];
  hs_status st = read_header(x->src, base, len, h, err);
  if (st != HS_OK) return st;
  uint32_t version = hs_load_u32le(h + HS_VIDX_H_VERSION);
  x->dim = hs_load_u32le(h + HS_VIDX_H_DIM);
  uint32_t metric = hs_load_u32le(h + HS_VIDX_H_METRIC);
  x->row_count = hs_load_u32le(h + HS_VIDX_H_ROW_COUNT);
  x->n = hs_load_u32le(h + HS_VIDX_H_INDEXED);
  x->m = hs_load_u32le(h + HS_VIDX_H_M);
  x->m0 = hs_load_u32le(h + HS_VIDX_H_M0);
  x->ef_construction = hs_load_u32le(h + HS_VIDX_H_EF_CONSTRUCTION);
  x->n_parts = hs_load_u32le(h + HS_VIDX_H_PARTITIONS);
  uint32_t quant = hs_load_u32le(h + HS_VIDX_H_QUANT);
  x->code_size = hs_load_u32le(h + HS_VIDX_H_CODE_SIZE);
  uint64_t upper_blocks = hs_load_u64le(h + HS_VIDX_H_UPPER_BLOCKS);
  /* Version 2: layer 0 compact when idw is 3 or 4 (version 1: both 0). */
  uint32_t idw = hs_load_u32le(h + HS_VIDX_H_LINK0_IDW);
  uint64_t link_ids = hs_load_u64le(h + HS_VIDX_H_LINK0_IDS);
  if (x->dim == 0 || x->dim > HS_VIDX_MAX_DIM) return CORRUPT("dimension %u", x->dim);
  if (metric != HS_METRIC_L2 && metric != HS_METRIC_L2SQ && metric != HS_METRIC_IP &&
      metric != HS_METRIC_COSINE && metric != HS_METRIC_L1)
    return CORRUPT("metric %u", metric);
  x->metric = (hs_metric)metric;
  x->vdim = hs_load_u32le(h + HS_VIDX_H_VDIM);
  if (x->vdim != hs_vidx_vdim(x->metric, x->dim))
    return CORRUPT("stored vectors of %u floats for dimension %u, metric %s", x->vdim, x->dim,
                   hs_metric_name(x->metric));
  if (x->n > x->row_count) return CORRUPT("%u indexed rows of %u", x->n, x->row_count);
  if (x->m < 2 || x->m > HS_HNSW_MAX_M || x->m0 < x->m || x->m0 > 2 * HS_HNSW_MAX_M)
    return CORRUPT("degrees m = %u, m0 = %u", x->m, x->m0);
  if (x->n_parts == 0 || (x->n_parts > x->n && x->n_parts > 1))
    return CORRUPT("%u partitions for %u rows", x->n_parts, x->n);
  if (quant != HS_QUANT_NONE && quant != HS_QUANT_SQ8 && quant != HS_QUANT_PQ)
    return CORRUPT("quantizer kind %u", quant);
  /* Scan codes (vidx.h): SQ8 codes beside a float32 walk; the index reports
   * itself as not quantized. */
  uint32_t walk_float = hs_load_u32le(h + HS_VIDX_H_WALK_FLOAT);
  if (walk_float > 1 || (walk_float == 1 && quant != HS_QUANT_SQ8))
    return CORRUPT("scan codes flag %u with quantizer kind %u", walk_float, quant);
  x->walk_float = walk_float == 1;
  x->quant_kind = x->walk_float ? HS_QUANT_NONE : (hs_quant_kind)quant;
  if ((quant == HS_QUANT_NONE) != (x->code_size == 0) || x->code_size > 4 * HS_VIDX_MAX_DIM + 4)
    return CORRUPT("code size %u for quantizer kind %u", x->code_size, quant);
  if (version == HS_VIDX_VERSION_FIXED ? (idw != 0 || link_ids != 0)
                                       : (idw != 0 && idw != 3 && idw != 4))
    return CORRUPT("layer-0 id width %u (%llu ids) in a version %u file", idw,
                   (unsigned long long)link_ids, version);
  if (idw != 0 && (link_ids > (uint64_t)x->n * x->m0 || (idw == 3 && x->n > (1u << 24))))
    return CORRUPT("compact layer 0: %llu ids of %u bytes for %u nodes of degree %u",
                   (unsigned long long)link_ids, idw, x->n, x->m0);
  if (idw == 0 && link_ids != 0)
    return CORRUPT("%llu layer-0 ids without a compact layer 0", (unsigned long long)link_ids);
  uint8_t table[HS_VIDX_S_MAX * HS_VIDX_SECTION_ENTRY_LEN];
  uint32_t ns = 0;
  st = read_table(x->src, base, len, h, table, &ns, err);
  if (st != HS_OK) return st;
  uint64_t table_len = (uint64_t)ns * HS_VIDX_SECTION_ENTRY_LEN;

  /* Expected lengths, all bounded by the file length before any use. */
  uint64_t n = x->n, dim = x->vdim;
  if (upper_blocks > n * HS_HNSW_MAX_LEVEL)
    return CORRUPT("%llu upper blocks", (unsigned long long)upper_blocks);
  uint64_t want[HS_VIDX_S_MAX + 1] = {0};
  want[HS_VIDX_S_ROWS] = n * 4;
  want[HS_VIDX_S_VECTORS] = n * dim * 4;
  want[HS_VIDX_S_LEVELS] = n;
  want[HS_VIDX_S_LINKS0] = idw ? (n + 1) * 4 + link_ids * idw : n * (1 + (uint64_t)x->m0) * 4;
  want[HS_VIDX_S_UPPER] = upper_blocks * (1 + (uint64_t)x->m) * 4;
  want[HS_VIDX_S_PARTS] = (uint64_t)x->n_parts * 16;
  want[HS_VIDX_S_CENTROIDS] = x->n_parts > 1 ? (uint64_t)x->n_parts * dim * 4 : 0;
  want[HS_VIDX_S_CODES] = n * x->code_size;
  const uint8_t *sec[HS_VIDX_S_MAX + 1] = {0};
  bool vec_seen = false;
  x->lean = lean_for(x->src, x->quant_kind);
  x->partial = partial_for(x->src, x->lean, quant, x->walk_float, x->n_parts);
  x->idw = idw;
  x->link_ids = link_ids;
  bool seen[HS_VIDX_S_MAX + 1] = {false};
  uint32_t prev_id = 0;
  uint64_t prev_end = HS_VIDX_HEADER_LEN + table_len;
  for (uint32_t i = 0; i < ns; i++) {
    const uint8_t *e = table + i * HS_VIDX_SECTION_ENTRY_LEN;
    uint32_t id = hs_load_u32le(e), crc = hs_load_u32le(e + 4);
    uint64_t off = hs_load_u64le(e + 8), slen = hs_load_u64le(e + 16);
    if (id <= prev_id || id > HS_VIDX_S_MAX)
      return CORRUPT("section %u: id %u out of order", i, id);
    prev_id = id;
    if (off < prev_end || off > len || slen > len - off)
      return CORRUPT("section %u: [%llu, +%llu) outside the index or overlapping", id,
                     (unsigned long long)off, (unsigned long long)slen);
    prev_end = off + slen;
    if (slen != want[id] && id != HS_VIDX_S_QUANT)
      return CORRUPT("section %u: %llu bytes, expected %llu", id, (unsigned long long)slen,
                     (unsigned long long)want[id]);
    if (id == HS_VIDX_S_QUANT) x->sec_quant_len = (size_t)slen;
    if (id == HS_VIDX_S_VECTORS) vec_seen = true;
    seen[id] = true;
    x->sec_off[id] = base + off;
    x->sec_len[id] = slen;
    x->sec_crc[id] = crc;
    if (x->partial && partial_section(id)) continue; /* loaded by the search */
    if (id == HS_VIDX_S_VECTORS && x->lean) {        /* read on demand, checked by validate */
      x->vec_off = base + off;
      x->vec_crc = crc;
      continue;
    }
    st = section_view(x, id, base, off, slen, crc, &sec[id], err);
    if (st != HS_OK) return st;
  }
  for (uint32_t id = HS_VIDX_S_ROWS; id <= HS_VIDX_S_PARTS; id++)
    if (sec[id] == NULL && !(id == HS_VIDX_S_VECTORS && vec_seen) &&
        !(x->partial && partial_section(id) && seen[id]))
      return CORRUPT("section %u missing", id);
  /* Read buffers of at most 256 vectors or 256 KiB (at least one vector). */
  uint64_t batch = (256u << 10) / ((uint64_t)x->vdim * 4);
  x->fetch_batch = batch < 1 ? 1 : (batch > 256 ? 256 : (uint32_t)batch);
  if (x->n_parts > 1 && sec[HS_VIDX_S_CENTROIDS] == NULL) return CORRUPT("centroids missing");
  if (quant != HS_QUANT_NONE) {
    if (sec[HS_VIDX_S_QUANT] == NULL ||
        (sec[HS_VIDX_S_CODES] == NULL && !(x->partial && seen[HS_VIDX_S_CODES])))
      return CORRUPT("quantizer or codes missing");
    st = hs_quant_parse(sec[HS_VIDX_S_QUANT], x->sec_quant_len, &x->quant, err);
    if (st != HS_OK) return st;
    if (hs_quant_kind_of(x->quant) != (hs_quant_kind)quant ||
        hs_quant_code_size(x->quant) != x->code_size || hs_quant_dim(x->quant) != x->dim)
      return CORRUPT("quantizer (kind %d, %zu-byte codes, dimension %zu) does not fit the header",
                     (int)hs_quant_kind_of(x->quant), hs_quant_code_size(x->quant),
                     hs_quant_dim(x->quant));
    x->codes = sec[HS_VIDX_S_CODES];
    if (x->partial) { /* the lists' codes come as searches probe them */
      x->codes_buf = hs_calloc((size_t)n * x->code_size + 1, 1);
      x->part_loaded = hs_calloc(x->n_parts, 1);
      if (x->codes_buf == NULL || x->part_loaded == NULL)
        return hs_error_set(err, HS_ERR_NOMEM, "out of memory for %u codes", x->n);
      x->codes = x->codes_buf;
    }
    if (quant == HS_QUANT_SQ8) { /* steps: after "HSQ1", 4 u32 and dim mins */
      const uint8_t *steps = sec[HS_VIDX_S_QUANT] + 20 + 4 * (size_t)x->dim;
      double e2 = 0, e1 = 0;
      for (uint32_t d = 0; d < x->dim; d++) {
        uint32_t bits = hs_load_u32le(steps + 4 * (size_t)d);
        float step;
        memcpy(&step, &bits, sizeof step);
        e2 += 0.25 * (double)step * step;
        e1 += 0.5 * (double)step;
      }
      x->sq8_err_l2 = (float)(sqrt(e2) * 1.001);
      x->sq8_err_l1 = (float)(e1 * 1.001);
    }
  } else if (sec[HS_VIDX_S_QUANT] != NULL || sec[HS_VIDX_S_CODES] != NULL) {
    return CORRUPT("codes in an index without a quantizer");
  }

  x->rows = (const uint32_t *)sec[HS_VIDX_S_ROWS];
  x->centroids = x->n_parts > 1 ? (const float *)sec[HS_VIDX_S_CENTROIDS] : NULL;
  hs_hnsw_graph *g = &x->g;
  g->n = x->n;
  g->dim = x->vdim;
  g->m = x->m;
  g->m0 = x->m0;
  g->space = hs_vidx_space(x->metric);
  g->vectors = x->lean ? NULL : (const float *)sec[HS_VIDX_S_VECTORS];
  g->levels = sec[HS_VIDX_S_LEVELS];
  if (!x->partial) set_links(x, sec[HS_VIDX_S_LINKS0], sec[HS_VIDX_S_UPPER]);
  g->upper_blocks = upper_blocks;
  g->codes = x->codes;
  g->code_size = x->code_size;

  /* Partitions: contiguous, covering [0, n). */
  x->parts = hs_malloc((size_t)x->n_parts * sizeof *x->parts);
  if (x->parts == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory for partitions");
  const uint8_t *pw = sec[HS_VIDX_S_PARTS];
  uint64_t next = 0;
  for (uint32_t i = 0; i < x->n_parts; i++) {
    hs_hnsw_part *p = &x->parts[i];
    p->start = hs_load_u32le(pw + 16 * i);
    p->count = hs_load_u32le(pw + 16 * i + 4);
    p->entry = hs_load_u32le(pw + 16 * i + 8);
    p->max_level = hs_load_u32le(pw + 16 * i + 12);
    if (p->start != next || p->count > n - next)
      return CORRUPT("partition %u: rows [%u, +%u) not contiguous in [0, %u)", i, p->start,
                     p->count, x->n);
    next += p->count;
    if (p->count > 0 && (p->entry < p->start || p->entry - p->start >= p->count))
      return CORRUPT("partition %u: entry %u outside it", i, p->entry);
  }
  if (next != n) return CORRUPT("partitions cover %llu of %u rows", (unsigned long long)next, x->n);

  /* Levels -> upper block offsets (recomputed, never read). */
  uint32_t *uoff = hs_malloc((size_t)(n ? n : 1) * sizeof *uoff);
  if (uoff == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory for %u nodes", x->n);
  g->upper_off = uoff;
  uint64_t blocks = 0;
  for (uint32_t i = 0; i < x->n; i++) {
    if (g->levels[i] > HS_HNSW_MAX_LEVEL) return CORRUPT("node %u: level %u", i, g->levels[i]);
    uoff[i] = (uint32_t)blocks;
    blocks += g->levels[i];
  }
  if (blocks != upper_blocks)
    return CORRUPT("levels need %llu upper blocks, the file has %llu", (unsigned long long)blocks,
                   (unsigned long long)upper_blocks);
  if (!x->partial) {
    st = check_links(x, err);
    if (st != HS_OK) return st;
  }

  /* Row lookups. */
  x->rows_identity = true;
  for (uint32_t i = 0; i < x->n; i++) {
    if (x->rows[i] >= x->row_count)
      return CORRUPT("local %u: row %u of %u", i, x->rows[i], x->row_count);
    if (x->rows[i] != i) x->rows_identity = false;
  }
  x->indexed = roaring_bitmap_create();
  if (x->indexed == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (!x->rows_identity) {
    uint64_t *pairs = hs_malloc((size_t)(n ? n : 1) * sizeof *pairs);
    x->sorted_rows = hs_malloc((size_t)(n ? n : 1) * sizeof *x->sorted_rows);
    x->sorted_local = hs_malloc((size_t)(n ? n : 1) * sizeof *x->sorted_local);
    if (pairs == NULL || x->sorted_rows == NULL || x->sorted_local == NULL) {
      hs_free(pairs);
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory for %u row ids", x->n);
    }
    for (uint32_t i = 0; i < x->n; i++) pairs[i] = (uint64_t)x->rows[i] << 32 | i;
    qsort(pairs, n, sizeof *pairs, cmp_row_local);
    for (uint32_t i = 0; i < x->n; i++) {
      x->sorted_rows[i] = (uint32_t)(pairs[i] >> 32);
      x->sorted_local[i] = (uint32_t)pairs[i];
    }
    hs_free(pairs);
    roaring_bitmap_add_many(x->indexed, n, x->sorted_rows);
  } else if (n > 0) {
    roaring_bitmap_add_range(x->indexed, 0, n);
  }
  /* Duplicate rows would make a row answer twice. */
  if (roaring_bitmap_get_cardinality(x->indexed) != n) return CORRUPT("row ids repeat");
  return hs_vidx_indexed_bits_init(x, err);
}

hs_status hs_vidx_open(hs_source *src, uint64_t offset, uint64_t len, hs_vidx **out,
                       hs_error *err) {
  *out = NULL;
  if (src == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx open: no source");
  uint64_t size = hs_source_size(src);
  if (offset > size || len > size - offset)
    return hs_error_set(err, HS_ERR_CORRUPT, "vector index %s: [%llu, +%llu) past its %llu bytes",
                        hs_source_name(src), (unsigned long long)offset, (unsigned long long)len,
                        (unsigned long long)size);
  hs_vidx *x = hs_calloc(1, sizeof *x);
  if (x == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vidx open: out of memory");
  for (int i = 0; i <= HS_VIDX_S_MAX; i++) hs_buf_init(&x->owned[i]);
  hs_source_ref(src);
  x->src = src;
  pthread_mutex_init(&x->mu, NULL);
  hs_status st = open_checked(x, offset, len, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "vector index %s at %llu: ", hs_source_name(src),
                    (unsigned long long)offset);
    hs_vidx_free(x);
    return st;
  }
  *out = x;
  return HS_OK;
}

hs_status hs_vidx_open_reads(hs_source *src, uint64_t offset, uint64_t len, hs_vidx_reads *out,
                             hs_error *err) {
  if (src == NULL || out == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx open reads: no source or output");
  uint64_t size = hs_source_size(src);
  if (offset > size || len > size - offset)
    return hs_error_set(err, HS_ERR_CORRUPT, "vector index %s: [%llu, +%llu) past its %llu bytes",
                        hs_source_name(src), (unsigned long long)offset, (unsigned long long)len,
                        (unsigned long long)size);
  uint8_t h[HS_VIDX_HEADER_LEN], table[HS_VIDX_S_MAX * HS_VIDX_SECTION_ENTRY_LEN];
  uint32_t ns = 0;
  hs_status st = read_header(src, offset, len, h, err);
  if (st == HS_OK) st = read_table(src, offset, len, h, table, &ns, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "vector index %s at %llu: ", hs_source_name(src),
                    (unsigned long long)offset);
    return st;
  }
  /* Only the sections the open will read; their checks are the open's
   * (a range out of bounds here is left out, and the open words it). */
  uint32_t quant = hs_load_u32le(h + HS_VIDX_H_QUANT);
  bool walk_float = hs_load_u32le(h + HS_VIDX_H_WALK_FLOAT) == 1;
  bool lean =
      quant <= HS_QUANT_PQ && lean_for(src, walk_float ? HS_QUANT_NONE : (hs_quant_kind)quant);
  bool partial = partial_for(src, lean, quant, walk_float, hs_load_u32le(h + HS_VIDX_H_PARTITIONS));
  for (uint32_t i = 0; i < ns; i++) {
    const uint8_t *e = table + i * HS_VIDX_SECTION_ENTRY_LEN;
    uint32_t id = hs_load_u32le(e);
    uint64_t off = hs_load_u64le(e + 8), slen = hs_load_u64le(e + 16);
    if ((id == HS_VIDX_S_VECTORS && lean) || (partial && partial_section(id)) || slen == 0 ||
        off > len || slen > len - off || slen > SIZE_MAX / 2)
      continue;
    if (!hs_vidx_reads_add(out, offset + off, (size_t)slen))
      return hs_error_set(err, HS_ERR_NOMEM, "vidx open reads: out of memory");
  }
  return HS_OK;
}

/* ------------------------------------------- partial indexes (lists) */

bool hs_vidx_part_ready(const hs_vidx *x, uint32_t p, bool walk) {
  if (!x->partial) return true;
  if (walk && !__atomic_load_n(&x->links_loaded, __ATOMIC_ACQUIRE)) return false;
  return __atomic_load_n(&x->part_loaded[p], __ATOMIC_ACQUIRE) != 0;
}

bool hs_vidx_part_missing(const hs_vidx *x, uint32_t p, bool walk, hs_vidx_reads *r) {
  if (!x->partial) return true;
  const hs_hnsw_part *pt = &x->parts[p];
  if (!__atomic_load_n(&x->part_loaded[p], __ATOMIC_ACQUIRE) && pt->count > 0 &&
      !hs_vidx_reads_add(r, x->sec_off[HS_VIDX_S_CODES] + (uint64_t)pt->start * x->code_size,
                         (size_t)pt->count * x->code_size))
    return false;
  if (walk && !__atomic_load_n(&x->links_loaded, __ATOMIC_ACQUIRE)) {
    if (x->sec_len[HS_VIDX_S_LINKS0] > 0 &&
        !hs_vidx_reads_add(r, x->sec_off[HS_VIDX_S_LINKS0], (size_t)x->sec_len[HS_VIDX_S_LINKS0]))
      return false;
    if (x->sec_len[HS_VIDX_S_UPPER] > 0 &&
        !hs_vidx_reads_add(r, x->sec_off[HS_VIDX_S_UPPER], (size_t)x->sec_len[HS_VIDX_S_UPPER]))
      return false;
  }
  return true;
}

/* The graph sections whole, checked as a full open checks them; x->mu held. */
static hs_status links_load(hs_vidx *x, hs_error *err) {
  const uint8_t *l0 = NULL, *up = NULL;
  hs_status st = section_view(x, HS_VIDX_S_LINKS0, 0, x->sec_off[HS_VIDX_S_LINKS0],
                              x->sec_len[HS_VIDX_S_LINKS0], x->sec_crc[HS_VIDX_S_LINKS0], &l0, err);
  if (st == HS_OK)
    st = section_view(x, HS_VIDX_S_UPPER, 0, x->sec_off[HS_VIDX_S_UPPER],
                      x->sec_len[HS_VIDX_S_UPPER], x->sec_crc[HS_VIDX_S_UPPER], &up, err);
  if (st != HS_OK) return st;
  set_links(x, l0, up);
  st = check_links(x, err);
  if (st != HS_OK) { /* never walked */
    x->g.links0 = NULL;
    x->g.off0 = NULL;
    x->g.ids0 = NULL;
    x->g.upper = NULL;
    return st;
  }
  __atomic_store_n(&x->links_loaded, 1, __ATOMIC_RELEASE);
  return HS_OK;
}

hs_status hs_vidx_part_load(hs_vidx *x, uint32_t p, bool walk, hs_error *err) {
  if (hs_vidx_part_ready(x, p, walk)) return HS_OK;
  pthread_mutex_lock(&x->mu);
  hs_status st = HS_OK;
  const hs_hnsw_part *pt = &x->parts[p];
  if (!x->part_loaded[p]) {
    if (pt->count > 0)
      st = hs_source_read(x->src, x->sec_off[HS_VIDX_S_CODES] + (uint64_t)pt->start * x->code_size,
                          (size_t)pt->count * x->code_size,
                          x->codes_buf + (size_t)pt->start * x->code_size, err);
    if (st == HS_OK) __atomic_store_n(&x->part_loaded[p], 1, __ATOMIC_RELEASE);
  }
  if (st == HS_OK && walk && !x->links_loaded) st = links_load(x, err);
  pthread_mutex_unlock(&x->mu);
  if (st != HS_OK)
    hs_error_prefix(err, "vector index %s: list %u: ", hs_source_name(x->src), (unsigned)p);
  return st;
}

/* Everything a partial open left out, and the codes' checksum (validate). */
static hs_status load_all(hs_vidx *x, hs_error *err) {
  if (!x->partial) return HS_OK;
  for (uint32_t p = 0; p < x->n_parts; p++) {
    hs_status st = hs_vidx_part_load(x, p, p == 0, err);
    if (st != HS_OK) return st;
  }
  if (crc_of(x->codes_buf, (uint64_t)x->n * x->code_size) != x->sec_crc[HS_VIDX_S_CODES])
    return CORRUPT("section %u: checksum mismatch", HS_VIDX_S_CODES);
  return HS_OK;
}

void hs_vidx_free(hs_vidx *x) {
  if (x == NULL) return;
  while (x->pool != NULL) {
    hs_vidx_scratch *s = x->pool;
    x->pool = s->next;
    hs_hnsw_scratch_free(&s->hs);
    hs_free(s->q);
    hs_free(s->all);
    hs_free(s->hits);
    hs_free(s->probe);
    hs_free(s->probe_d);
    hs_free(s->vbuf);
    hs_free(s->ids);
    hs_free(s->bits);
    hs_free(s->ser);
    hs_free(s->flat);
    hs_free(s->cids);
    hs_free(s);
  }
  pthread_mutex_destroy(&x->mu);
  hs_free(x->bind_path);
  hs_free(x->parts);
  hs_free((void *)x->g.upper_off);
  hs_free(x->sorted_rows);
  hs_free(x->sorted_local);
  hs_quant_free(x->quant);
  if (x->indexed) roaring_bitmap_free(x->indexed);
  hs_free(x->indexed_bits);
  hs_free(x->codes_buf);
  hs_free(x->codes4_mem);
  hs_free(x->part_loaded);
  for (int i = 0; i <= HS_VIDX_S_MAX; i++) hs_buf_free(&x->owned[i]);
  hs_source_unref(x->src);
  hs_free(x);
}

/* Rows [first, first + cnt) of the stored vectors, at v: finite, and unit
 * length for cosine. */
static hs_status check_vectors(const hs_vidx *x, const float *v, uint32_t first, uint32_t cnt,
                               hs_error *err) {
  for (uint32_t i = 0; i < cnt; i++, v += x->vdim) {
    double norm = 0;
    for (uint32_t j = 0; j < x->vdim; j++) {
      if (!isfinite(v[j]))
        return CORRUPT("row %u: component %u is not finite", x->rows[first + i], j);
      norm += (double)v[j] * v[j];
    }
    if (x->metric == HS_METRIC_COSINE && fabs(norm - 1.0) > 1e-3)
      return CORRUPT("row %u: cosine vector with norm^2 %g, expected 1", x->rows[first + i], norm);
  }
  return HS_OK;
}

hs_status hs_vidx_validate(const hs_vidx *x, hs_error *err) {
  const hs_hnsw_graph *g = &x->g;
  hs_status lst = load_all((hs_vidx *)x, err); /* a partial index: what its searches load */
  if (lst != HS_OK) return lst;
  for (uint32_t pi = 0; pi < x->n_parts; pi++) {
    const hs_hnsw_part *p = &x->parts[pi];
    if (p->count == 0) continue;
    if (g->levels[p->entry] != p->max_level)
      return CORRUPT("partition %u: entry level %u, max level %u", pi, g->levels[p->entry],
                     p->max_level);
    for (uint32_t i = p->start; i < p->start + p->count; i++) {
      if (g->levels[i] > p->max_level)
        return CORRUPT("node %u: level %u above its partition's %u", i, g->levels[i], p->max_level);
      for (uint32_t l = 0; l <= g->levels[i]; l++) {
        uint32_t buf[2 * HS_HNSW_MAX_M], cnt;
        const uint32_t *blk = hs_hnsw_neighbours_ro(g, i, l, buf, &cnt);
        for (uint32_t j = 0; j < cnt; j++) {
          uint32_t nb = blk[j];
          if (nb == i) return CORRUPT("node %u links to itself on layer %u", i, l);
          if (nb < p->start || nb - p->start >= p->count)
            return CORRUPT("node %u: neighbour %u outside partition %u", i, nb, pi);
          if (g->levels[nb] < l)
            return CORRUPT("node %u: neighbour %u on layer %u has level %u", i, nb, l,
                           g->levels[nb]);
          for (uint32_t t = 0; t < j; t++)
            if (blk[t] == nb) return CORRUPT("node %u: neighbour %u twice", i, nb);
        }
      }
    }
  }
  if (!x->lean) {
    hs_status st = check_vectors(x, g->vectors, 0, x->n, err);
    if (st != HS_OK) return st;
  } else { /* stream the section: its checksum, then the same checks */
    size_t per = (size_t)x->vdim * 4, batch = (1u << 20) / per;
    if (batch == 0) batch = 1;
    float *buf = hs_malloc(batch * per);
    if (buf == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vidx validate: out of memory");
    uLong crc = crc32(0L, Z_NULL, 0);
    hs_status st = HS_OK;
    for (uint32_t i = 0; i < x->n && st == HS_OK; i += (uint32_t)batch) {
      uint32_t cnt = x->n - i < batch ? x->n - i : (uint32_t)batch;
      st = hs_source_read_unmapped(x->src, x->vec_off + (uint64_t)i * per, cnt * per, buf, err);
      if (st != HS_OK) break;
      crc = crc32(crc, (const Bytef *)buf, (uInt)(cnt * per));
      st = check_vectors(x, buf, i, cnt, err);
    }
    hs_free(buf);
    if (st != HS_OK) return st;
    if ((uint32_t)crc != x->vec_crc)
      return CORRUPT("section %u: checksum mismatch", HS_VIDX_S_VECTORS);
  }
  for (uint32_t pi = 0; x->centroids != NULL && pi < x->n_parts; pi++)
    for (uint32_t j = 0; j < x->vdim; j++)
      if (!isfinite(x->centroids[(size_t)pi * x->vdim + j]))
        return CORRUPT("centroid %u is not finite", pi);
  return HS_OK;
}

uint32_t hs_vidx_dim(const hs_vidx *x) {
  return x->dim;
}
hs_metric hs_vidx_metric(const hs_vidx *x) {
  return x->metric;
}
uint32_t hs_vidx_row_count(const hs_vidx *x) {
  return x->row_count;
}
uint32_t hs_vidx_indexed_count(const hs_vidx *x) {
  return x->n;
}
uint32_t hs_vidx_partition_count(const hs_vidx *x) {
  return x->n_parts;
}
hs_quant_kind hs_vidx_quant_kind(const hs_vidx *x) {
  return x->quant_kind;
}

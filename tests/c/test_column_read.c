/*
 * test_column_read.c — tests of hs_pq_column_read (column.h).
 *
 * Three shapes:
 *  1. Round trip on hand-built chunks: random columns (flat required, flat
 *     optional, nested list) of every physical type are encoded with the
 *     encoders of encoding.h in every encoding that type allows, as data
 *     page v1 and v2, uncompressed and compressed, with CRCs and a
 *     dictionary where the encoding needs one; reading must give back
 *     exactly the levels and values. Row selection is checked against a
 *     simple filter of the full result, with and without an offset index,
 *     and must skip the pages that hold no selected row.
 *  2. Corruption: CRC mismatches, dictionary indices out of range, chunks
 *     outside the file, encrypted chunks, unsupported codecs, and random
 *     byte flips (which must fail cleanly or succeed, never crash).
 *  3. The conformance corpus: every column chunk of every file in data/
 *     reads with structural invariants (and the selection differential);
 *     the corrupt-checksum files fail; bad_data/ files never crash.
 */
#include <dirent.h>
#include <zlib.h>

#include "hs_test.h"
#include "io/io.h"
#include "parquet/column.h"
#include "parquet/compress.h"
#include "parquet/encoding.h"

/* ------------------------------------------------------ column content */

/* The logical content of a column: what a reader must return. */
typedef struct col_data {
  hs_pq_leaf_desc desc;
  int width; /* value width, -1 for BYTE_ARRAY */
  int64_t n_levels;
  int16_t *def, *rep;
  int64_t n_values;
  hs_buf values;  /* fixed width */
  hs_buf offsets; /* int32, n_values + 1 */
  hs_buf data;    /* byte array bytes */
  int64_t n_rows;
  int64_t *row_lv;  /* level index where row r starts; n_rows + 1 entries */
  int64_t *row_val; /* value index where row r starts; n_rows + 1 entries */
} col_data;

static void col_free(col_data *c) {
  hs_free(c->def);
  hs_free(c->rep);
  hs_buf_free(&c->values);
  hs_buf_free(&c->offsets);
  hs_buf_free(&c->data);
  hs_free(c->row_lv);
  hs_free(c->row_val);
  memset(c, 0, sizeof *c);
}

/* Append one random value (from a small domain, so dictionaries stay small). */
static void col_add_value(col_data *c, uint64_t *rng) {
  uint64_t r = hs_test_rand(rng) % 23;
  switch (c->desc.type) {
  case HS_PQ_BOOLEAN: hs_buf_append_byte(&c->values, (uint8_t)(r & 1)); break;
  case HS_PQ_INT32: {
    int32_t v = (int32_t)r * 1000 - 7000;
    hs_buf_append(&c->values, &v, 4);
    break;
  }
  case HS_PQ_INT64: {
    int64_t v = (int64_t)r * 100000000007LL - 5;
    hs_buf_append(&c->values, &v, 8);
    break;
  }
  case HS_PQ_FLOAT: {
    float v = (float)r * 0.5f - 3.0f;
    hs_buf_append(&c->values, &v, 4);
    break;
  }
  case HS_PQ_DOUBLE: {
    double v = (double)r * 1.25 - 9.0;
    hs_buf_append(&c->values, &v, 8);
    break;
  }
  case HS_PQ_INT96:
  case HS_PQ_FIXED_LEN_BYTE_ARRAY:
    for (int i = 0; i < c->width; i++) hs_buf_append_byte(&c->values, (uint8_t)(r * 7 + i));
    break;
  case HS_PQ_BYTE_ARRAY: {
    char s[32];
    int len = snprintf(s, sizeof s, "v%llu%.*s", (unsigned long long)r, (int)(r % 9), "xxxxxxxxx");
    hs_buf_append(&c->data, s, (size_t)len);
    int32_t end = (int32_t)c->data.len;
    hs_buf_append(&c->offsets, &end, 4);
    break;
  }
  }
  c->n_values++;
}

enum { SHAPE_REQUIRED, SHAPE_OPTIONAL, SHAPE_LIST };

/* Random column of `n_rows` rows. SHAPE_LIST is an optional list of
 * optional values: max_rep 1, max_def 3 (0 null list, 1 empty list,
 * 2 null element, 3 value). */
static void col_make(col_data *c, hs_pq_type type, int flba_width, int shape, int64_t n_rows,
                     uint64_t seed) {
  memset(c, 0, sizeof *c);
  c->desc.type = type;
  c->desc.type_length = type == HS_PQ_INT96 ? 12 : flba_width;
  c->desc.path = "t.col";
  c->desc.max_def = shape == SHAPE_REQUIRED ? 0 : shape == SHAPE_OPTIONAL ? 1 : 3;
  c->desc.max_rep = shape == SHAPE_LIST ? 1 : 0;
  c->width = hs_pq_leaf_value_width(&c->desc);
  int32_t zero = 0;
  hs_buf_append(&c->offsets, &zero, 4);
  uint64_t rng = seed;
  size_t cap = (size_t)n_rows * 4 + 4;
  c->def = hs_calloc(cap, sizeof(int16_t));
  c->rep = hs_calloc(cap, sizeof(int16_t));
  c->row_lv = hs_calloc((size_t)n_rows + 1, sizeof(int64_t));
  c->row_val = hs_calloc((size_t)n_rows + 1, sizeof(int64_t));
  for (int64_t r = 0; r < n_rows; r++) {
    c->row_lv[r] = c->n_levels;
    c->row_val[r] = c->n_values;
    uint64_t x = hs_test_rand(&rng);
    if (shape == SHAPE_LIST) {
      int k = (int)(x % 5); /* 0: null list, 1: empty, else k-1 elements */
      if (k < 2) {
        c->def[c->n_levels] = (int16_t)k;
        c->rep[c->n_levels++] = 0;
        continue;
      }
      for (int e = 0; e < k - 1; e++) {
        bool null = (hs_test_rand(&rng) % 4) == 0;
        c->def[c->n_levels] = null ? 2 : 3;
        c->rep[c->n_levels++] = e == 0 ? 0 : 1;
        if (!null) col_add_value(c, &rng);
      }
    } else {
      bool null = shape == SHAPE_OPTIONAL && x % 3 == 0;
      c->def[c->n_levels++] = null ? 0 : (int16_t)c->desc.max_def;
      if (!null) col_add_value(c, &rng);
    }
  }
  c->row_lv[n_rows] = c->n_levels;
  c->row_val[n_rows] = c->n_values;
  c->n_rows = n_rows;
}

/* Whether value i of c equals value j of leaf data d. */
static bool value_eq(const col_data *c, int64_t i, const hs_pq_leaf_data *d, int64_t j) {
  if (c->width > 0) {
    return memcmp(c->values.data + i * c->width, d->values.data + j * c->width, (size_t)c->width) ==
           0;
  }
  const int32_t *co = (const int32_t *)(void *)c->offsets.data;
  int32_t cl = co[i + 1] - co[i], dl = d->offsets[j + 1] - d->offsets[j];
  return cl == dl && memcmp(c->data.data + co[i], d->data.data + d->offsets[j], (size_t)cl) == 0;
}

/* Compare d with the rows `sel` (NULL: all) of c. */
static int check_against(const col_data *c, const hs_pq_leaf_data *d, const int64_t *sel,
                         size_t n_sel, const char *label) {
  int bad = 0;
  int64_t nr = sel ? (int64_t)n_sel : c->n_rows;
  int64_t lv = 0, val = 0;
  if (d->n_rows != nr) bad++;
  for (int64_t k = 0; k < nr && !bad; k++) {
    int64_t r = sel ? sel[k] : k;
    for (int64_t i = c->row_lv[r]; i < c->row_lv[r + 1] && !bad; i++, lv++) {
      if (lv >= d->n_levels) {
        bad++;
        break;
      }
      if (c->desc.max_def > 0 && d->def[lv] != c->def[i]) bad++;
      if (c->desc.max_rep > 0 && d->rep[lv] != c->rep[i]) bad++;
    }
    for (int64_t i = c->row_val[r]; i < c->row_val[r + 1] && !bad; i++, val++) {
      if (val >= d->n_values || !value_eq(c, i, d, val)) bad++;
    }
  }
  if (!bad && (lv != d->n_levels || val != d->n_values)) bad++;
  if (c->desc.max_def == 0 && d->def != NULL) bad++;
  if (c->desc.max_rep == 0 && d->rep != NULL) bad++;
  if (bad) {
    fprintf(stderr, "%s: mismatch (rows %lld/%lld, levels %lld/%lld, values %lld/%lld)\n", label,
            (long long)d->n_rows, (long long)nr, (long long)d->n_levels, (long long)lv,
            (long long)d->n_values, (long long)val);
  }
  return bad;
}

/* --------------------------------------------------------- chunk build */

typedef struct build_opts {
  int version; /* 1 or 2 */
  int32_t encoding;
  int32_t codec;
  bool crc;
  int rows_per_page;
  bool dict_truncate; /* write half the dictionary: indices go out of range */
  bool legacy;        /* v1: BIT_PACKED levels, PLAIN_DICTIONARY ids; v2: values stored
                         uncompressed (is_compressed false) */
  bool empty_pages;   /* an empty data page (no values) before every page */
} build_opts;

typedef struct built_chunk {
  hs_buf file; /* "PAR1" + pages */
  hs_pq_column_chunk cc;
  hs_pq_page_location locs[4096];
  hs_pq_offset_index oi;
  int n_data_pages;
} built_chunk;

/* Encode values [v0, v1) of c in `enc` into out. `dict_idx` (when not NULL)
 * maps value index to dictionary index. */
static hs_status encode_values(const col_data *c, int32_t enc, int64_t v0, int64_t v1,
                               const uint32_t *dict_idx, uint32_t dict_n, hs_buf *out) {
  size_t n = (size_t)(v1 - v0);
  const int32_t *co = (const int32_t *)(void *)c->offsets.data;
  const uint8_t *fv = c->width > 0 ? c->values.data + v0 * c->width : NULL;
  hs_status st = HS_OK;
  int32_t *rebased = NULL;
  if (c->width < 0) { /* offsets of this slice, starting at 0 */
    rebased = hs_malloc((n + 1) * sizeof(int32_t));
    for (size_t i = 0; i <= n; i++) rebased[i] = co[v0 + (int64_t)i] - co[v0];
  }
  const uint8_t *bytes = c->width < 0 ? c->data.data + co[v0] : NULL;
  switch (enc) {
  case HS_PQ_ENC_PLAIN:
    if (c->desc.type == HS_PQ_BOOLEAN) {
      uint8_t *bits = hs_calloc(n / 8 + 1, 1);
      for (size_t i = 0; i < n; i++) bits[i / 8] |= (uint8_t)(fv[i] << (i % 8));
      st = hs_plain_encode_bool_bits(bits, 0, n, out, NULL);
      hs_free(bits);
    } else if (c->width < 0) {
      st = hs_plain_encode_byte_array(rebased, bytes, n, out, NULL);
    } else {
      hs_buf_append(out, fv, n * (size_t)c->width);
    }
    break;
  case HS_PQ_ENC_RLE_DICTIONARY:
    st = hs_dict_indices_encode(dict_idx + v0, n, dict_n, out, NULL);
    break;
  case HS_PQ_ENC_RLE: {
    uint32_t *u = hs_malloc(n * 4 + 4);
    for (size_t i = 0; i < n; i++) u[i] = fv[i];
    hs_buf tmp;
    hs_buf_init(&tmp);
    st = hs_rle_encode_u32(u, n, 1, &tmp, NULL);
    uint8_t pre[4];
    hs_store_u32le(pre, (uint32_t)tmp.len);
    hs_buf_append(out, pre, 4);
    hs_buf_append(out, tmp.data, tmp.len);
    hs_buf_free(&tmp);
    hs_free(u);
    break;
  }
  case HS_PQ_ENC_DELTA_BINARY_PACKED:
    st = c->desc.type == HS_PQ_INT32
             ? hs_delta_binary_encode_i32((const int32_t *)(const void *)fv, n, out, NULL)
             : hs_delta_binary_encode_i64((const int64_t *)(const void *)fv, n, out, NULL);
    break;
  case HS_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    st = hs_delta_length_encode(rebased, bytes, n, out, NULL);
    break;
  case HS_PQ_ENC_DELTA_BYTE_ARRAY:
    if (c->width < 0) {
      st = hs_delta_byte_array_encode(rebased, bytes, n, out, NULL);
    } else {
      int32_t *fo = hs_malloc((n + 1) * sizeof(int32_t));
      for (size_t i = 0; i <= n; i++) fo[i] = (int32_t)i * c->width;
      st = hs_delta_byte_array_encode(fo, fv, n, out, NULL);
      hs_free(fo);
    }
    break;
  case HS_PQ_ENC_BYTE_STREAM_SPLIT:
    st = hs_byte_stream_split_encode(fv, n, c->width, out, NULL);
    break;
  default: st = HS_ERR_UNSUPPORTED;
  }
  hs_free(rebased);
  return st;
}

static void put_levels(const int16_t *lv, size_t n, int16_t max, bool prefix, hs_buf *out) {
  hs_buf tmp;
  hs_buf_init(&tmp);
  hs_rle_encode_levels(lv, n, hs_bit_width((uint64_t)max), &tmp, NULL);
  if (prefix) {
    uint8_t pre[4];
    hs_store_u32le(pre, (uint32_t)tmp.len);
    hs_buf_append(out, pre, 4);
  }
  hs_buf_append(out, tmp.data, tmp.len);
  hs_buf_free(&tmp);
}

/* Deprecated BIT_PACKED levels: MSB first, no length prefix. */
static void put_levels_legacy(const int16_t *lv, size_t n, int16_t max, hs_buf *out) {
  int bw = hs_bit_width((uint64_t)max);
  size_t bytes = (n * (size_t)bw + 7) / 8, base = out->len;
  hs_buf_reserve(out, bytes);
  memset(out->data + base, 0, bytes);
  size_t pos = 0;
  for (size_t i = 0; i < n; i++) {
    for (int b = bw - 1; b >= 0; b--, pos++) {
      if ((lv[i] >> b) & 1) out->data[base + pos / 8] |= (uint8_t)(0x80 >> (pos % 8));
    }
  }
  out->len += bytes;
}

/* Compress `body` if the codec asks; write header and body to the file. */
static void put_page(built_chunk *b, hs_pq_page_header *ph, const hs_buf *raw, size_t plain_prefix,
                     int32_t codec, bool crc) {
  static const uint8_t none[1];
  const uint8_t *src = raw->data != NULL ? raw->data : none;
  hs_buf body;
  hs_buf_init(&body);
  hs_buf_append(&body, src, plain_prefix);
  if (codec != HS_PQ_CODEC_UNCOMPRESSED) {
    hs_pq_compress(codec, 0, src + plain_prefix, raw->len - plain_prefix, &body, NULL);
  } else {
    hs_buf_append(&body, src + plain_prefix, raw->len - plain_prefix);
  }
  ph->uncompressed_page_size = (int32_t)raw->len;
  ph->compressed_page_size = (int32_t)body.len;
  if (crc) {
    ph->has_crc = true;
    ph->crc = (int32_t)crc32(0, body.data, (uInt)body.len);
  }
  hs_pq_page_header_write(ph, &b->file, NULL);
  hs_buf_append(&b->file, body.data, body.len);
  hs_buf_free(&body);
}

static void build_chunk(const col_data *c, const build_opts *o, built_chunk *b) {
  memset(b, 0, sizeof *b);
  hs_buf_append(&b->file, "PAR1", 4);
  bool dict = o->encoding == HS_PQ_ENC_RLE_DICTIONARY;
  uint32_t *idx = NULL, dict_n = 0;
  int64_t dict_off = -1;
  if (dict) { /* distinct values in order of first appearance */
    idx = hs_calloc((size_t)c->n_values + 1, sizeof(uint32_t));
    int64_t *first = hs_calloc((size_t)c->n_values + 1, sizeof(int64_t));
    for (int64_t i = 0; i < c->n_values; i++) {
      hs_pq_leaf_data probe = {0};
      uint32_t k;
      for (k = 0; k < dict_n; k++) {
        /* compare value i with value first[k] of c itself */
        probe.values = c->values;
        probe.offsets = (int32_t *)(void *)c->offsets.data;
        probe.data = c->data;
        if (value_eq(c, i, &probe, first[k])) break;
      }
      if (k == dict_n) first[dict_n++] = i;
      idx[i] = k;
    }
    hs_buf raw;
    hs_buf_init(&raw);
    uint32_t written = o->dict_truncate ? dict_n / 2 : dict_n;
    for (uint32_t k = 0; k < written; k++) {
      encode_values(c, HS_PQ_ENC_PLAIN, first[k], first[k] + 1, NULL, 0, &raw);
    }
    hs_pq_page_header ph = {0};
    ph.type = HS_PQ_DICTIONARY_PAGE;
    ph.has_dictionary_page = true;
    ph.dictionary_page.num_values = (int32_t)written;
    ph.dictionary_page.encoding = o->legacy ? HS_PQ_ENC_PLAIN_DICTIONARY : HS_PQ_ENC_PLAIN;
    dict_off = (int64_t)b->file.len;
    put_page(b, &ph, &raw, 0, o->codec, o->crc);
    hs_buf_free(&raw);
    hs_free(first);
  }
  int64_t data_off = (int64_t)b->file.len;
  for (int64_t r0 = 0; r0 < c->n_rows || (r0 == 0 && c->n_rows == 0); r0 += o->rows_per_page) {
    int64_t r1 = r0 + o->rows_per_page < c->n_rows ? r0 + o->rows_per_page : c->n_rows;
    int64_t l0 = c->row_lv[r0], l1 = c->row_lv[r1], v0 = c->row_val[r0], v1 = c->row_val[r1];
    size_t n = (size_t)(l1 - l0);
    hs_buf raw, vals;
    hs_buf_init(&raw);
    hs_buf_init(&vals);
    hs_pq_page_header ph = {0};
    int32_t rl = 0, dl = 0;
    bool bitpacked = o->legacy && o->version == 1;
    if (o->empty_pages) { /* an empty page first: no levels, no values */
      hs_pq_page_header eh = {0};
      hs_buf none;
      hs_buf_init(&none);
      eh.type = o->version == 1 ? HS_PQ_DATA_PAGE : HS_PQ_DATA_PAGE_V2;
      eh.has_data_page = o->version == 1;
      eh.has_data_page_v2 = o->version == 2;
      eh.data_page.encoding = eh.data_page_v2.encoding = HS_PQ_ENC_PLAIN;
      eh.data_page.definition_level_encoding = HS_PQ_ENC_RLE;
      eh.data_page.repetition_level_encoding = HS_PQ_ENC_RLE;
      eh.data_page_v2.is_compressed = o->codec != HS_PQ_CODEC_UNCOMPRESSED;
      put_page(b, &eh, &none, 0, eh.data_page_v2.is_compressed ? o->codec : 0, o->crc);
    }
    if (c->desc.max_rep > 0) {
      if (bitpacked) {
        put_levels_legacy(c->rep + l0, n, c->desc.max_rep, &raw);
      } else {
        put_levels(c->rep + l0, n, c->desc.max_rep, o->version == 1, &raw);
      }
    }
    rl = (int32_t)raw.len;
    if (c->desc.max_def > 0) {
      if (bitpacked) {
        put_levels_legacy(c->def + l0, n, c->desc.max_def, &raw);
      } else {
        put_levels(c->def + l0, n, c->desc.max_def, o->version == 1, &raw);
      }
    }
    dl = (int32_t)raw.len - rl;
    CHECK_EQ_INT(encode_values(c, o->encoding, v0, v1, idx, dict_n, &vals), HS_OK);
    hs_buf_append(&raw, vals.data, vals.len);
    b->locs[b->n_data_pages].offset = (int64_t)b->file.len;
    b->locs[b->n_data_pages].first_row_index = r0;
    size_t before = b->file.len;
    if (o->version == 1) {
      ph.type = HS_PQ_DATA_PAGE;
      ph.has_data_page = true;
      ph.data_page.num_values = (int32_t)n;
      ph.data_page.encoding = o->encoding;
      if (bitpacked && dict) ph.data_page.encoding = HS_PQ_ENC_PLAIN_DICTIONARY;
      ph.data_page.definition_level_encoding = bitpacked ? HS_PQ_ENC_BIT_PACKED : HS_PQ_ENC_RLE;
      ph.data_page.repetition_level_encoding = bitpacked ? HS_PQ_ENC_BIT_PACKED : HS_PQ_ENC_RLE;
      put_page(b, &ph, &raw, 0, o->codec, o->crc);
    } else {
      ph.type = HS_PQ_DATA_PAGE_V2;
      ph.has_data_page_v2 = true;
      ph.data_page_v2.num_values = (int32_t)n;
      ph.data_page_v2.num_nulls = (int32_t)(n - (size_t)(v1 - v0));
      ph.data_page_v2.num_rows = (int32_t)(r1 - r0);
      ph.data_page_v2.encoding = o->encoding;
      ph.data_page_v2.repetition_levels_byte_length = rl;
      ph.data_page_v2.definition_levels_byte_length = dl;
      ph.data_page_v2.is_compressed = o->codec != HS_PQ_CODEC_UNCOMPRESSED && !o->legacy;
      put_page(b, &ph, &raw, (size_t)(rl + dl), ph.data_page_v2.is_compressed ? o->codec : 0,
               o->crc);
    }
    b->locs[b->n_data_pages].compressed_page_size = (int32_t)(b->file.len - before);
    b->n_data_pages++;
    hs_buf_free(&raw);
    hs_buf_free(&vals);
    if (c->n_rows == 0) break;
  }
  hs_free(idx);
  hs_pq_column_meta *m = &b->cc.meta_data;
  b->cc.has_meta_data = true;
  m->type = c->desc.type;
  m->codec = o->codec;
  m->num_values = c->n_levels;
  m->data_page_offset = data_off;
  if (dict_off >= 0) {
    m->has_dictionary_page_offset = true;
    m->dictionary_page_offset = dict_off;
  }
  int64_t start = dict_off >= 0 ? dict_off : data_off;
  m->total_compressed_size = (int64_t)b->file.len - start;
  m->total_uncompressed_size = m->total_compressed_size;
  b->oi.page_locations = b->locs;
  b->oi.n_pages = (uint32_t)b->n_data_pages;
  hs_buf_append(&b->file, "PAR1", 4);
}

static hs_status read_built(const built_chunk *b, const col_data *c, bool use_oi,
                            const int64_t *sel, size_t n_sel, hs_pq_leaf_data *out, hs_error *err) {
  hs_source *src;
  hs_status st = hs_source_open_memory(b->file.data, b->file.len, "mem", &src, err);
  if (st != HS_OK) return st;
  st = hs_pq_column_read(src, &b->cc, &c->desc, c->n_rows, use_oi ? &b->oi : NULL, sel, n_sel, out,
                         err);
  hs_source_unref(src);
  return st;
}

/* Selection of about one row in `every` (clustered so whole pages go unselected). */
static size_t make_selection(int64_t n_rows, uint64_t seed, int64_t *sel) {
  size_t n = 0;
  uint64_t rng = seed;
  for (int64_t r = 0; r < n_rows; r++) {
    bool zone = (r / 50) % 3 == 1; /* rows 50..99, 200..249, ... */
    if (zone && hs_test_rand(&rng) % 3 == 0) sel[n++] = r;
  }
  return n;
}

static void roundtrip_one(hs_pq_type type, int flba, int shape, const build_opts *o,
                          uint64_t seed) {
  char label[160];
  snprintf(label, sizeof label, "type %s shape %d enc %s v%d codec %s crc %d legacy %d empty %d",
           hs_pq_type_name(type), shape, hs_pq_encoding_name(o->encoding), o->version,
           hs_pq_codec_name(o->codec), o->crc, o->legacy, o->empty_pages);
  col_data c;
  int64_t n_rows = 400;
  col_make(&c, type, flba, shape, n_rows, seed);
  built_chunk *b = hs_calloc(1, sizeof *b);
  build_chunk(&c, o, b);
  hs_error err = {0};
  hs_pq_leaf_data d = {0};
  hs_status st = read_built(b, &c, false, NULL, 0, &d, &err);
  CHECK_EQ_INT(st, HS_OK);
  if (st != HS_OK) fprintf(stderr, "%s: %s\n", label, err.message);
  if (st == HS_OK) {
    CHECK_EQ_INT(check_against(&c, &d, NULL, 0, label), 0);
    CHECK_EQ_INT(d.pages_read, b->n_data_pages * (o->empty_pages ? 2 : 1) +
                                   (o->encoding == HS_PQ_ENC_RLE_DICTIONARY));
  }
  hs_pq_leaf_data_free(&d);

  int64_t *sel = hs_malloc((size_t)n_rows * sizeof(int64_t));
  size_t n_sel = make_selection(n_rows, seed ^ 0x55, sel);
  for (int use_oi = 0; use_oi < 2; use_oi++) {
    hs_error e2 = {0};
    st = read_built(b, &c, use_oi, sel, n_sel, &d, &e2);
    CHECK_EQ_INT(st, HS_OK);
    if (st != HS_OK) fprintf(stderr, "%s oi %d: %s\n", label, use_oi, e2.message);
    if (st == HS_OK) {
      CHECK_EQ_INT(check_against(&c, &d, sel, n_sel, label), 0);
      /* Pages are 37 rows; rows 0..49 hold no selected row, so page 0 is
       * skipped whenever page row counts are known. */
      if (use_oi || o->version == 2 || shape != SHAPE_LIST) CHECK(d.pages_skipped > 0);
    }
    hs_pq_leaf_data_free(&d);
  }
  /* An empty selection reads no data page. */
  hs_error e3 = {0};
  st = read_built(b, &c, true, sel, 0, &d, &e3);
  CHECK_EQ_INT(st, HS_OK);
  CHECK_EQ_INT(d.n_levels, 0);
  CHECK_EQ_INT(d.pages_skipped, b->n_data_pages);
  hs_pq_leaf_data_free(&d);
  /* Without an index, an empty selection still walks every header. */
  st = read_built(b, &c, false, sel, 0, &d, &e3);
  CHECK_EQ_INT(st, HS_OK);
  CHECK_EQ_INT(d.n_levels, 0);
  if (o->version == 2 || shape != SHAPE_LIST) CHECK_EQ_INT(d.pages_read, 0);
  hs_pq_leaf_data_free(&d);
  hs_free(sel);
  hs_buf_free(&b->file);
  hs_free(b);
  col_free(&c);
}

static void test_roundtrip(void) {
  static const struct {
    hs_pq_type type;
    int flba;
    int32_t encs[4];
  } types[] = {
      {HS_PQ_BOOLEAN, 0, {HS_PQ_ENC_PLAIN, HS_PQ_ENC_RLE, -1}},
      {HS_PQ_INT32,
       0,
       {HS_PQ_ENC_PLAIN, HS_PQ_ENC_RLE_DICTIONARY, HS_PQ_ENC_DELTA_BINARY_PACKED,
        HS_PQ_ENC_BYTE_STREAM_SPLIT}},
      {HS_PQ_INT64,
       0,
       {HS_PQ_ENC_PLAIN, HS_PQ_ENC_RLE_DICTIONARY, HS_PQ_ENC_DELTA_BINARY_PACKED,
        HS_PQ_ENC_BYTE_STREAM_SPLIT}},
      {HS_PQ_INT96, 0, {HS_PQ_ENC_PLAIN, HS_PQ_ENC_RLE_DICTIONARY, -1}},
      {HS_PQ_FLOAT,
       0,
       {HS_PQ_ENC_PLAIN, HS_PQ_ENC_RLE_DICTIONARY, HS_PQ_ENC_BYTE_STREAM_SPLIT, -1}},
      {HS_PQ_DOUBLE,
       0,
       {HS_PQ_ENC_PLAIN, HS_PQ_ENC_RLE_DICTIONARY, HS_PQ_ENC_BYTE_STREAM_SPLIT, -1}},
      {HS_PQ_BYTE_ARRAY,
       0,
       {HS_PQ_ENC_PLAIN, HS_PQ_ENC_RLE_DICTIONARY, HS_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY,
        HS_PQ_ENC_DELTA_BYTE_ARRAY}},
      {HS_PQ_FIXED_LEN_BYTE_ARRAY,
       5,
       {HS_PQ_ENC_PLAIN, HS_PQ_ENC_RLE_DICTIONARY, HS_PQ_ENC_DELTA_BYTE_ARRAY,
        HS_PQ_ENC_BYTE_STREAM_SPLIT}},
  };
  static const int32_t codecs[] = {HS_PQ_CODEC_UNCOMPRESSED, HS_PQ_CODEC_SNAPPY, HS_PQ_CODEC_ZSTD,
                                   HS_PQ_CODEC_GZIP, HS_PQ_CODEC_LZ4_RAW};
  uint64_t seed = 1;
  int k = 0;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    for (int e = 0; e < 4 && types[t].encs[e] >= 0; e++) {
      if (e > 0 && types[t].encs[e] == 0) break;
      for (int shape = 0; shape < 3; shape++) {
        for (int version = 1; version <= 2; version++) {
          build_opts o = {0};
          o.version = version;
          o.encoding = types[t].encs[e];
          o.codec = codecs[k++ % 5];
          o.crc = (k % 2) == 0;
          o.legacy = (k % 3) == 0;
          o.empty_pages = (k % 7) == 0;
          o.rows_per_page = 37;
          roundtrip_one(types[t].type, types[t].flba, shape, &o, seed++);
        }
      }
    }
  }
}

/* ----------------------------------------------------------- row gather */

/* Read `sel` with the in-place gather path (page_gather.c) allowed or not
 * (HS_PQ_GATHER=0). */
static hs_status read_gather(const built_chunk *b, const col_data *c, bool use_oi, bool gather,
                             const int64_t *sel, size_t n_sel, hs_pq_leaf_data *out,
                             hs_error *err) {
  if (!gather) setenv("HS_PQ_GATHER", "0", 1);
  hs_status st = read_built(b, c, use_oi, sel, n_sel, out, err);
  unsetenv("HS_PQ_GATHER");
  return st;
}

/* Selection reads of uncompressed pages gather their rows in place: every
 * type, PLAIN, dictionary and (INT32/INT64) DELTA_BINARY_PACKED pages,
 * required and optional (NULLs in mixed RLE / bit-packed level runs), v1
 * and v2, random page sizes and selections of every density give the
 * column's rows, as the decoding
 * path does, and count their pages as gathered. Damaged copies of the same
 * chunks are then read both ways: an error or a result, never a crash. */
static void test_gather(void) {
  static const struct {
    hs_pq_type type;
    int flba;
  } types[] = {{HS_PQ_BOOLEAN, 0},    {HS_PQ_INT32, 0},
               {HS_PQ_INT64, 0},      {HS_PQ_INT96, 0},
               {HS_PQ_FLOAT, 0},      {HS_PQ_DOUBLE, 0},
               {HS_PQ_BYTE_ARRAY, 0}, {HS_PQ_FIXED_LEN_BYTE_ARRAY, 3}};
  static const int32_t encs[] = {HS_PQ_ENC_PLAIN, HS_PQ_ENC_RLE_DICTIONARY,
                                 HS_PQ_ENC_DELTA_BINARY_PACKED};
  static const int64_t every[] = {1, 2, 7, 100, 100000};
  uint64_t rng = 2026;
  int gathered_chunks = 0;
  /* Gather every page however many of its rows are selected (by default a
   * page with more than 1/8 of its rows selected is decoded whole: the
   * third pass below checks that choice). */
  setenv("HS_PQ_GATHER_DENSE_DIV", "0", 1);
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    for (int e = 0; e < 3; e++) {
      /* (The chunk builder writes no boolean dictionaries; nor does anyone.) */
      if (types[t].type == HS_PQ_BOOLEAN && encs[e] != HS_PQ_ENC_PLAIN) continue;
      if (encs[e] == HS_PQ_ENC_DELTA_BINARY_PACKED && types[t].type != HS_PQ_INT32 &&
          types[t].type != HS_PQ_INT64) {
        continue;
      }
      for (int shape = SHAPE_REQUIRED; shape <= SHAPE_OPTIONAL; shape++) {
        for (int version = 1; version <= 2; version++) {
          build_opts o = {0};
          o.version = version;
          o.encoding = encs[e];
          o.codec = HS_PQ_CODEC_UNCOMPRESSED;
          o.crc = hs_test_rand(&rng) % 2 == 0;
          o.legacy = hs_test_rand(&rng) % 4 == 0;
          o.rows_per_page = 1 + (int)(hs_test_rand(&rng) % 300);
          int64_t n_rows = 1 + (int64_t)(hs_test_rand(&rng) % 2000);
          bool eligible = (encs[e] != HS_PQ_ENC_PLAIN || types[t].type != HS_PQ_BYTE_ARRAY) &&
                          !(o.legacy && version == 1 && shape == SHAPE_OPTIONAL);
          char label[160];
          snprintf(label, sizeof label, "gather: type %s shape %d enc %s v%d legacy %d page %d",
                   hs_pq_type_name(types[t].type), shape, hs_pq_encoding_name(encs[e]), version,
                   o.legacy, o.rows_per_page);
          col_data c;
          col_make(&c, types[t].type, types[t].flba, shape, n_rows, hs_test_rand(&rng));
          built_chunk *b = hs_calloc(1, sizeof *b);
          build_chunk(&c, &o, b);
          int64_t *sel = hs_malloc((size_t)n_rows * sizeof(int64_t));
          for (size_t k = 0; k < sizeof every / sizeof every[0]; k++) {
            size_t n_sel = 0;
            for (int64_t r = 0; r < n_rows; r++) {
              if (hs_test_rand(&rng) % (uint64_t)every[k] == 0) sel[n_sel++] = r;
            }
            for (int use_oi = 0; use_oi < 2; use_oi++) {
              for (int g = 0; g < 2; g++) {
                hs_error err = {0};
                hs_pq_leaf_data d = {0};
                hs_status st = read_gather(b, &c, use_oi, g == 1, sel, n_sel, &d, &err);
                CHECK_EQ_INT(st, HS_OK);
                if (st != HS_OK) fprintf(stderr, "%s: %s\n", label, err.message);
                if (st == HS_OK) {
                  CHECK_EQ_INT(check_against(&c, &d, sel, n_sel, label), 0);
                  if (g == 0) CHECK_EQ_INT(d.pages_gathered, 0);
                  if (g == 1 && eligible && n_sel > 0) CHECK(d.pages_gathered > 0);
                  if (g == 1 && !eligible) CHECK_EQ_INT(d.pages_gathered, 0);
                  gathered_chunks += d.pages_gathered > 0;
                }
                hs_pq_leaf_data_free(&d);
              }
              /* The default: every row selected decodes each page whole. */
              unsetenv("HS_PQ_GATHER_DENSE_DIV");
              hs_error err = {0};
              hs_pq_leaf_data d = {0};
              hs_status st = read_gather(b, &c, use_oi, true, sel, n_sel, &d, &err);
              CHECK_EQ_INT(st, HS_OK);
              if (st == HS_OK) {
                CHECK_EQ_INT(check_against(&c, &d, sel, n_sel, label), 0);
                if (every[k] == 1) CHECK_EQ_INT(d.pages_gathered, 0);
              }
              hs_pq_leaf_data_free(&d);
              setenv("HS_PQ_GATHER_DENSE_DIV", "0", 1);
            }
          }
          /* Damaged copies: a few bytes changed anywhere in the pages. */
          hs_buf orig;
          hs_buf_init(&orig);
          hs_buf_append(&orig, b->file.data, b->file.len);
          size_t n_sel = 0;
          for (int64_t r = 0; r < n_rows; r += 1 + (int64_t)(hs_test_rand(&rng) % 5)) {
            sel[n_sel++] = r;
          }
          for (int trial = 0; trial < 24 && b->file.len > 8; trial++) {
            memcpy(b->file.data, orig.data, orig.len);
            int flips = 1 + (int)(hs_test_rand(&rng) % 3);
            for (int f = 0; f < flips; f++) {
              size_t at = 4 + (size_t)(hs_test_rand(&rng) % (b->file.len - 8));
              b->file.data[at] = (uint8_t)hs_test_rand(&rng);
            }
            for (int g = 0; g < 2; g++) {
              hs_error err = {0};
              hs_pq_leaf_data d = {0};
              (void)read_gather(b, &c, trial % 2 == 0, g == 1, sel, n_sel, &d, &err);
              hs_pq_leaf_data_free(&d);
            }
          }
          hs_buf_free(&orig);
          hs_free(sel);
          hs_buf_free(&b->file);
          hs_free(b);
          col_free(&c);
        }
      }
    }
  }
  CHECK(gathered_chunks > 100);
  unsetenv("HS_PQ_GATHER_DENSE_DIV");
}

/* ----------------------------------------------------------- corruption */

static void test_corruption(void) {
  col_data c;
  col_make(&c, HS_PQ_INT32, 0, SHAPE_OPTIONAL, 200, 99);
  build_opts o = {1,    HS_PQ_ENC_RLE_DICTIONARY, HS_PQ_CODEC_UNCOMPRESSED, true, 50, false, false,
                  false};
  built_chunk *b = hs_calloc(1, sizeof *b);
  hs_pq_leaf_data d = {0};
  hs_error err = {0};

  /* CRC mismatch names the column and says so. */
  build_chunk(&c, &o, b);
  b->file.data[b->file.len - 6] ^= 0x40;
  CHECK_EQ_INT(read_built(b, &c, false, NULL, 0, &d, &err), HS_ERR_CORRUPT);
  CHECK(strstr(err.message, "CRC mismatch") != NULL && strstr(err.message, "t.col") != NULL);
  hs_buf_free(&b->file);

  /* Dictionary index out of range. */
  o.dict_truncate = true;
  o.crc = false;
  build_chunk(&c, &o, b);
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(read_built(b, &c, false, NULL, 0, &d, &err), HS_ERR_CORRUPT);
  CHECK(strstr(err.message, "out of range") != NULL);
  o.dict_truncate = false;
  hs_buf_free(&b->file);

  build_chunk(&c, &o, b);
  /* Chunk past the end of the file. */
  b->cc.meta_data.total_compressed_size += 100;
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(read_built(b, &c, false, NULL, 0, &d, &err), HS_ERR_CORRUPT);
  b->cc.meta_data.total_compressed_size -= 100;
  /* A chunk starting with a dictionary page may be short by the
   * dictionary page header (old parquet-mr, PARQUET-816)... */
  b->cc.meta_data.total_compressed_size -= 10;
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(read_built(b, &c, false, NULL, 0, &d, &err), HS_OK);
  CHECK_EQ_INT(check_against(&c, &d, NULL, 0, "short dictionary chunk"), 0);
  hs_pq_leaf_data_free(&d);
  b->cc.meta_data.total_compressed_size += 10;
  /* ...other chunks may not be shorter than their pages. */
  {
    build_opts po = o;
    po.encoding = HS_PQ_ENC_PLAIN;
    built_chunk *pb = hs_calloc(1, sizeof *pb);
    build_chunk(&c, &po, pb);
    pb->cc.meta_data.total_compressed_size -= 10;
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(read_built(pb, &c, false, NULL, 0, &d, &err), HS_ERR_CORRUPT);
    CHECK(strstr(err.message, "overrun") != NULL);
    hs_buf_free(&pb->file);
    hs_free(pb);
  }
  /* More values claimed than the pages hold; fewer. */
  b->cc.meta_data.num_values += 1;
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(read_built(b, &c, false, NULL, 0, &d, &err), HS_ERR_CORRUPT);
  b->cc.meta_data.num_values -= 2;
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(read_built(b, &c, false, NULL, 0, &d, &err), HS_ERR_CORRUPT);
  b->cc.meta_data.num_values += 1;
  /* dictionary_page_offset 0 (a writer bug) still finds the dictionary. */
  b->cc.meta_data.dictionary_page_offset = 0;
  b->cc.meta_data.data_page_offset = 4;
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(read_built(b, &c, false, NULL, 0, &d, &err), HS_OK);
  CHECK_EQ_INT(check_against(&c, &d, NULL, 0, "dict offset 0"), 0);
  hs_pq_leaf_data_free(&d);
  /* Encrypted and unsupported codecs are refused with a reason. */
  b->cc.is_encrypted = true;
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(read_built(b, &c, false, NULL, 0, &d, &err), HS_ERR_UNSUPPORTED);
  CHECK(strstr(err.message, "t.col is encrypted") != NULL);
  b->cc.is_encrypted = false;
  b->cc.meta_data.codec = HS_PQ_CODEC_LZO;
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(read_built(b, &c, false, NULL, 0, &d, &err), HS_ERR_UNSUPPORTED);
  CHECK(strstr(err.message, "LZO") != NULL);
  b->cc.meta_data.codec = HS_PQ_CODEC_UNCOMPRESSED;
  /* Bad selections are the caller's error. */
  int64_t bad_sel[2] = {5, 5};
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(read_built(b, &c, false, bad_sel, 2, &d, &err), HS_ERR_INVALID_ARG);
  /* A broken offset index is corrupt, not a crash. */
  b->locs[1].offset = b->locs[0].offset;
  memset(&err, 0, sizeof err);
  int64_t one = 120;
  CHECK_EQ_INT(read_built(b, &c, true, &one, 1, &d, &err), HS_ERR_CORRUPT);
  hs_buf_free(&b->file);

  /* Random byte flips: any status, no crash (run under ASan/UBSan). */
  uint64_t rng = 7;
  int ok = 0, failed = 0;
  const char *iters_env = getenv("HS_TEST_FLIP_ITERS"); /* longer runs by hand */
  int iters = iters_env ? atoi(iters_env) : 3000;
  for (int iter = 0; iter < iters; iter++) {
    build_opts fo = {1 + (int)(iter % 2),
                     iter % 3 ? HS_PQ_ENC_RLE_DICTIONARY : HS_PQ_ENC_PLAIN,
                     iter % 4 ? HS_PQ_CODEC_UNCOMPRESSED : HS_PQ_CODEC_SNAPPY,
                     false,
                     50,
                     false,
                     iter % 5 == 1,
                     iter % 11 == 3};
    col_data fc;
    col_make(&fc, iter % 5 ? HS_PQ_INT64 : HS_PQ_BYTE_ARRAY, 0, (int)(iter % 3), 120, iter);
    build_chunk(&fc, &fo, b);
    int flips = 1 + (int)(hs_test_rand(&rng) % 4);
    for (int f = 0; f < flips; f++) {
      size_t pos = 4 + hs_test_rand(&rng) % (b->file.len - 8);
      b->file.data[pos] ^= (uint8_t)(1u << (hs_test_rand(&rng) % 8));
    }
    memset(&err, 0, sizeof err);
    int64_t sel[3] = {3, 60, 119};
    hs_status st = read_built(b, &fc, iter % 2, iter % 7 ? NULL : sel, 3, &d, &err);
    if (st == HS_OK) {
      ok++;
      CHECK(d.n_values <= d.n_levels);
    } else {
      failed++;
      CHECK(err.message[0] != '\0');
    }
    hs_pq_leaf_data_free(&d);
    hs_buf_free(&b->file);
    col_free(&fc);
  }
  printf("byte flips: %d read, %d refused\n", ok, failed);
  hs_free(b);
  col_free(&c);
}

/* ---------------------------------------------------- conformance files */

typedef struct leaf_list {
  hs_pq_leaf_desc *v;
  int n, cap;
  char (*paths)[256];
} leaf_list;

/* Depth-first walk of the flat schema computing each leaf's levels. */
static bool walk_schema(const hs_pq_file_metadata *md, uint32_t *i, int depth, int16_t def,
                        int16_t rep, const char *prefix, leaf_list *out) {
  if (*i >= md->n_schema || depth > 64) return false;
  uint32_t me = (*i)++;
  const hs_pq_schema_element *e = &md->schema[me];
  char path[256];
  if (me == 0) {
    path[0] = '\0';
  } else {
    snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", e->name ? e->name : "?");
    if (e->has_repetition && e->repetition == HS_PQ_OPTIONAL) def++;
    if (e->has_repetition && e->repetition == HS_PQ_REPEATED) def++, rep++;
  }
  if (me != 0 && e->num_children <= 0) {
    if (out->n == out->cap) return false;
    hs_pq_leaf_desc *d = &out->v[out->n];
    memset(d, 0, sizeof *d);
    d->leaf_index = out->n;
    d->schema_index = (int32_t)me;
    d->elem = e;
    d->type = e->type;
    d->type_length = e->type == HS_PQ_INT96 ? 12 : e->type_length;
    d->max_def = def;
    d->max_rep = rep;
    snprintf(out->paths[out->n], 256, "%s", path);
    d->path = out->paths[out->n];
    out->n++;
    return true;
  }
  for (int32_t k = 0; k < e->num_children; k++) {
    if (!walk_schema(md, i, depth + 1, def, rep, path, out)) return false;
  }
  return true;
}

/* Structural checks of one full read. */
static void check_structure(const hs_pq_leaf_data *d, const hs_pq_leaf_desc *desc,
                            const hs_pq_column_chunk *cc, int64_t rg_rows, const char *label) {
  int bad = 0;
  if (d->n_levels != cc->meta_data.num_values) bad |= 1;
  if (d->n_values > d->n_levels) bad |= 2;
  if (d->n_rows != rg_rows) bad |= 4;
  int64_t nn = 0;
  for (int64_t i = 0; i < d->n_levels; i++) {
    int16_t dl = desc->max_def > 0 ? d->def[i] : 0;
    if (dl < 0 || dl > desc->max_def) bad |= 8;
    if (desc->max_rep > 0 && (d->rep[i] < 0 || d->rep[i] > desc->max_rep)) bad |= 8;
    nn += dl == desc->max_def;
  }
  if (nn != d->n_values) bad |= 16;
  if (desc->type == HS_PQ_BYTE_ARRAY) {
    if (d->offsets == NULL || d->offsets[0] != 0) bad |= 32;
    for (int64_t i = 0; d->offsets && i < d->n_values; i++) {
      if (d->offsets[i + 1] < d->offsets[i]) bad |= 32;
    }
    if (d->offsets && (size_t)d->offsets[d->n_values] != d->data.len) bad |= 32;
  } else if (d->values.len != (size_t)d->n_values * (size_t)hs_pq_leaf_value_width(desc)) {
    bad |= 64;
  }
  CHECK_EQ_INT(bad, 0);
  if (bad) fprintf(stderr, "%s: structure check failed (mask %d)\n", label, bad);
}

/* Expected result of a selection, computed from the full read: keep the
 * levels and values of the selected rows. Compared field by field. */
static void check_selection(const hs_pq_leaf_data *full, const hs_pq_leaf_data *part,
                            const hs_pq_leaf_desc *desc, const int64_t *sel, size_t n_sel,
                            const char *label) {
  int64_t row = -1, lw = 0, vr = 0, vw = 0, rows = 0;
  size_t si = 0;
  int bad = 0;
  int w = hs_pq_leaf_value_width(desc);
  bool keep = false;
  for (int64_t i = 0; i < full->n_levels && !bad; i++) {
    if (desc->max_rep == 0 || full->rep[i] == 0) {
      row++;
      while (si < n_sel && sel[si] < row) si++;
      keep = si < n_sel && sel[si] == row;
      rows += keep;
    }
    bool is_val = desc->max_def == 0 || full->def[i] == desc->max_def;
    if (keep) {
      if (lw >= part->n_levels) {
        bad = 1;
        break;
      }
      if (desc->max_def > 0 && part->def[lw] != full->def[i]) bad = 2;
      if (desc->max_rep > 0 && part->rep[lw] != full->rep[i]) bad = 3;
      lw++;
      if (is_val) {
        if (vw >= part->n_values) {
          bad = 4;
        } else if (w > 0) {
          if (memcmp(full->values.data + vr * w, part->values.data + vw * w, (size_t)w)) bad = 5;
        } else {
          int32_t fl = full->offsets[vr + 1] - full->offsets[vr];
          int32_t pl = part->offsets[vw + 1] - part->offsets[vw];
          if (fl != pl || memcmp(full->data.data + full->offsets[vr],
                                 part->data.data + part->offsets[vw], (size_t)fl)) {
            bad = 6;
          }
        }
        vw++;
      }
    }
    vr += is_val;
  }
  if (!bad && (lw != part->n_levels || vw != part->n_values || rows != part->n_rows)) bad = 7;
  CHECK_EQ_INT(bad, 0);
  if (bad) fprintf(stderr, "%s: selection differs from the filtered full read (%d)\n", label, bad);
}

static const char *const expected_failures[] = {
    "datapage_v1-corrupt-checksum.parquet", "rle-dict-uncompressed-corrupt-checksum.parquet",
    "large_string_map.brotli.parquet", /* over 2 GiB of strings in one chunk: int32 offsets */
};

static bool expect_failure(const char *name) {
  for (size_t i = 0; i < sizeof expected_failures / sizeof expected_failures[0]; i++) {
    if (strcmp(name, expected_failures[i]) == 0) return true;
  }
  return false;
}

/* Read every chunk of one file. Returns the number of chunks that failed. */
static int read_file(const char *dir, const char *name, bool sweep_selection, int *chunks_ok) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  hs_source *src = NULL;
  hs_error err = {0};
  if (hs_source_open_file(path, &src, &err) != HS_OK) return -1;
  hs_arena arena;
  hs_arena_init(&arena);
  hs_pq_file_metadata md;
  int failures = 0;
  if (hs_pq_footer_read(src, &arena, &md, &err) != HS_OK) {
    hs_arena_reset(&arena);
    hs_source_unref(src);
    return -1; /* footer problems are metadata's tests */
  }
  leaf_list leaves = {0};
  leaves.cap = 4096;
  leaves.v = hs_calloc((size_t)leaves.cap, sizeof *leaves.v);
  leaves.paths = hs_calloc((size_t)leaves.cap, sizeof *leaves.paths);
  uint32_t si = 0;
  bool schema_ok = walk_schema(&md, &si, 0, 0, 0, "", &leaves);
  for (uint32_t g = 0; schema_ok && g < md.n_row_groups; g++) {
    const hs_pq_row_group *rg = &md.row_groups[g];
    for (uint32_t k = 0; k < rg->n_columns && (int)k < leaves.n; k++) {
      const hs_pq_column_chunk *cc = &rg->columns[k];
      const hs_pq_leaf_desc *desc = &leaves.v[k];
      char label[1400];
      snprintf(label, sizeof label, "%s rg %u column %s", name, g, desc->path);
      hs_pq_leaf_data full = {0};
      memset(&err, 0, sizeof err);
      hs_status st = hs_pq_column_read(src, cc, desc, rg->num_rows, NULL, NULL, 0, &full, &err);
      if (st != HS_OK) {
        failures++;
        if (getenv("HS_TEST_VERBOSE")) printf("%s: refused: %s\n", label, err.message);
        if (!sweep_selection) continue;
        if (!expect_failure(name) && !cc->is_encrypted) {
          fprintf(stderr, "%s: %s\n", label, err.message);
          CHECK_EQ_INT(st, HS_OK);
        }
        continue;
      }
      (*chunks_ok)++;
      if (!sweep_selection) {
        hs_pq_leaf_data_free(&full);
        continue;
      }
      check_structure(&full, desc, cc, rg->num_rows, label);
      /* Selection: every 7th row, from the sequential walk and, where the
       * file has one, through the offset index. */
      size_t n_sel = 0;
      int64_t *sel = hs_malloc((size_t)(rg->num_rows / 7 + 1) * sizeof(int64_t));
      for (int64_t r = 3; r < rg->num_rows; r += 7) sel[n_sel++] = r;
      hs_pq_leaf_data part = {0};
      memset(&err, 0, sizeof err);
      st = hs_pq_column_read(src, cc, desc, rg->num_rows, NULL, sel, n_sel, &part, &err);
      CHECK_EQ_INT(st, HS_OK);
      if (st == HS_OK) check_selection(&full, &part, desc, sel, n_sel, label);
      if (st != HS_OK) fprintf(stderr, "%s: selection: %s\n", label, err.message);
      hs_pq_leaf_data_free(&part);
      if (cc->has_offset_index && cc->offset_index_length > 0) {
        const uint8_t *p;
        hs_buf scratch;
        hs_buf_init(&scratch);
        hs_pq_offset_index oi;
        memset(&err, 0, sizeof err);
        if (hs_source_view(src, (uint64_t)cc->offset_index_offset, (size_t)cc->offset_index_length,
                           &scratch, &p, &err) == HS_OK &&
            hs_pq_offset_index_parse(p, (size_t)cc->offset_index_length, &arena, &oi, &err) ==
                HS_OK) {
          /* Only the last row selected: every page but the last is skipped. */
          int64_t last = rg->num_rows - 1;
          st = hs_pq_column_read(src, cc, desc, rg->num_rows, &oi, &last, 1, &part, &err);
          CHECK_EQ_INT(st, HS_OK);
          if (st == HS_OK) {
            check_selection(&full, &part, desc, &last, 1, label);
            CHECK_EQ_INT(part.pages_skipped, (int64_t)oi.n_pages - 1);
          }
          hs_pq_leaf_data_free(&part);
          st = hs_pq_column_read(src, cc, desc, rg->num_rows, &oi, sel, n_sel, &part, &err);
          CHECK_EQ_INT(st, HS_OK);
          if (st == HS_OK) check_selection(&full, &part, desc, sel, n_sel, label);
          if (st != HS_OK) fprintf(stderr, "%s: offset index: %s\n", label, err.message);
          hs_pq_leaf_data_free(&part);
        }
        hs_buf_free(&scratch);
      }
      hs_free(sel);
      hs_pq_leaf_data_free(&full);
    }
  }
  hs_free(leaves.v);
  hs_free(leaves.paths);
  hs_arena_reset(&arena);
  hs_source_unref(src);
  return failures;
}

static const char *corpus_dir(void) {
  const char *env = getenv("HS_CONFORMANCE_DIR");
  return env && env[0] ? env : "../shared/conformance/parquet-testing";
}

static void test_conformance_data(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/data", corpus_dir());
  DIR *dp = opendir(dir);
  if (dp == NULL) {
    printf("conformance corpus not found at %s; skipped\n", dir);
    return;
  }
  int files = 0, chunks = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    const char *name = de->d_name;
    size_t len = strlen(name);
    if (len < 8 || strcmp(name + len - 8, ".parquet") != 0) continue;
    int failures = read_file(dir, name, true, &chunks);
    if (failures < 0) continue;
    files++;
    if (strstr(name, "corrupt-checksum") != NULL) CHECK(failures > 0);
  }
  closedir(dp);
  printf("conformance data: %d files, %d column chunks read\n", files, chunks);
  CHECK(files > 40);
}

static void test_conformance_bad(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/bad_data", corpus_dir());
  DIR *dp = opendir(dir);
  if (dp == NULL) return;
  struct dirent *de;
  int files = 0, chunks = 0;
  while ((de = readdir(dp)) != NULL) {
    if (strstr(de->d_name, ".parquet") == NULL) continue;
    read_file(dir, de->d_name, false, &chunks);
    files++;
  }
  closedir(dp);
  printf("bad_data: %d files survived, %d chunks read\n", files, chunks);
}

int main(void) {
  test_roundtrip();
  test_gather();
  test_corruption();
  test_conformance_data();
  test_conformance_bad();
  return hs_test_finish("test_column_read");
}

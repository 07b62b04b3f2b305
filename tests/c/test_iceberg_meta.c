/*
 * test_iceberg_meta.c — tests of the Iceberg metadata layer: murmur3 and
 * bucket hashes against the spec's appendix B reference values, transforms,
 * single-value binary serialization, metadata JSON round trips (v2, v3,
 * nested types, defaults, refs, kept unknown keys), errors that name the
 * JSON path, hostile inputs (every truncation, byte flips), and the Arrow
 * type mapping.
 *
 * Filter mode (used by tests/python/test_iceberg_meta.py against pyiceberg):
 * with HS_ICEBERG_ROUNDTRIP=1 the program reads metadata JSON on stdin,
 * parses it, writes it back to stdout, or prints "ERROR: message" and exits
 * 1. With HS_ICEBERG_HASH=1 it reads lines "TYPE HEXBYTES N" (the value's
 * single-value binary form) and prints "HASH BUCKET" per line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs_test.h"
#include "iceberg/iceberg.h"

static const char *V3_DOC =
    "{\n"
    "  \"format-version\": 3,\n"
    "  \"table-uuid\": \"9c12d441-03fe-4693-9a96-a0705ddf69c1\",\n"
    "  \"location\": \"/tmp/lake/t\",\n"
    "  \"last-sequence-number\": 2,\n"
    "  \"last-updated-ms\": 1700000000123,\n"
    "  \"last-column-id\": 12,\n"
    "  \"schemas\": [\n"
    "    {\"type\": \"struct\", \"schema-id\": 0, \"fields\": [\n"
    "      {\"id\": 1, \"name\": \"id\", \"required\": true, \"type\": \"long\"}]},\n"
    "    {\"type\": \"struct\", \"schema-id\": 1, \"identifier-field-ids\": [1], \"fields\": [\n"
    "      {\"id\": 1, \"name\": \"id\", \"required\": true, \"type\": \"long\", \"doc\": "
    "\"key\"},\n"
    "      {\"id\": 2, \"name\": \"price\", \"required\": false, \"type\": \"decimal(9, 2)\",\n"
    "       \"initial-default\": \"1.50\", \"write-default\": \"2.00\"},\n"
    "      {\"id\": 3, \"name\": \"tags\", \"required\": false, \"type\": {\"type\": \"list\",\n"
    "       \"element-id\": 4, \"element-required\": true, \"element\": \"string\"}},\n"
    "      {\"id\": 5, \"name\": \"attrs\", \"required\": false, \"type\": {\"type\": \"map\",\n"
    "       \"key-id\": 6, \"key\": \"string\", \"value-id\": 7, \"value-required\": false,\n"
    "       \"value\": {\"type\": \"struct\", \"fields\": [\n"
    "         {\"id\": 8, \"name\": \"x\", \"required\": false, \"type\": \"fixed[16]\"}]}}},\n"
    "      {\"id\": 9, \"name\": \"ts\", \"required\": false, \"type\": \"timestamptz_ns\"},\n"
    "      {\"id\": 10, \"name\": \"vec\", \"required\": false, \"type\": {\"type\": \"list\",\n"
    "       \"element-id\": 11, \"element-required\": true, \"element\": \"float\"}},\n"
    "      {\"id\": 12, \"name\": \"g\", \"required\": false, \"type\": \"geometry(srid:4326)\",\n"
    "       \"x-custom\": {\"a\": [1, 2]}}\n"
    "    ]}\n"
    "  ],\n"
    "  \"current-schema-id\": 1,\n"
    "  \"partition-specs\": [\n"
    "    {\"spec-id\": 0, \"fields\": []},\n"
    "    {\"spec-id\": 1, \"fields\": [\n"
    "      {\"source-id\": 1, \"field-id\": 1000, \"name\": \"id_bucket\", \"transform\": "
    "\"bucket[16]\"},\n"
    "      {\"source-id\": 9, \"field-id\": 1001, \"name\": \"ts_day\", \"transform\": \"day\"},\n"
    "      {\"source-ids\": [1, 9], \"field-id\": 1002, \"name\": \"z\", \"transform\": "
    "\"zorder\"}]}\n"
    "  ],\n"
    "  \"default-spec-id\": 1,\n"
    "  \"last-partition-id\": 1002,\n"
    "  \"properties\": {\"owner\": \"me\", \"hyperstream.vector.10.dimension\": \"4\"},\n"
    "  \"current-snapshot-id\": 3051729675574597004,\n"
    "  \"snapshots\": [\n"
    "    {\"snapshot-id\": 3051729675574597003, \"sequence-number\": 1, \"timestamp-ms\": "
    "1700000000000,\n"
    "     \"manifest-list\": \"/tmp/lake/t/metadata/snap-1.avro\", \"summary\": {\"operation\": "
    "\"append\"},\n"
    "     \"schema-id\": 0, \"first-row-id\": 0, \"added-rows\": 10},\n"
    "    {\"snapshot-id\": 3051729675574597004, \"parent-snapshot-id\": 3051729675574597003,\n"
    "     \"sequence-number\": 2, \"timestamp-ms\": 1700000000100,\n"
    "     \"manifest-list\": \"/tmp/lake/t/metadata/snap-2.avro\",\n"
    "     \"summary\": {\"operation\": \"append\", \"added-records\": \"5\"}, \"schema-id\": 1,\n"
    "     \"first-row-id\": 10, \"added-rows\": 5, \"key-id\": \"k1\"}\n"
    "  ],\n"
    "  \"snapshot-log\": [{\"timestamp-ms\": 1700000000000, \"snapshot-id\": "
    "3051729675574597003},\n"
    "                   {\"timestamp-ms\": 1700000000100, \"snapshot-id\": "
    "3051729675574597004}],\n"
    "  \"metadata-log\": [{\"timestamp-ms\": 1699999999999, \"metadata-file\": "
    "\"/tmp/lake/t/metadata/v1.metadata.json\"}],\n"
    "  \"sort-orders\": [{\"order-id\": 0, \"fields\": []},\n"
    "    {\"order-id\": 1, \"fields\": [{\"transform\": \"identity\", \"source-id\": 1, "
    "\"direction\": \"desc\", \"null-order\": \"nulls-last\"},\n"
    "      {\"transform\": \"truncate[4]\", \"source-id\": 3, \"direction\": \"asc\", "
    "\"null-order\": \"nulls-first\"}]}],\n"
    "  \"default-sort-order-id\": 1,\n"
    "  \"refs\": {\"main\": {\"snapshot-id\": 3051729675574597004, \"type\": \"branch\",\n"
    "                    \"min-snapshots-to-keep\": 3, \"max-snapshot-age-ms\": 1000},\n"
    "           \"v1\": {\"snapshot-id\": 3051729675574597003, \"type\": \"tag\", "
    "\"max-ref-age-ms\": 5}},\n"
    "  \"statistics\": [{\"snapshot-id\": 3051729675574597004, \"statistics-path\": \"s.puffin\",\n"
    "                  \"file-size-in-bytes\": 10, \"file-footer-size-in-bytes\": 5, "
    "\"blob-metadata\": []}],\n"
    "  \"partition-statistics\": [],\n"
    "  \"next-row-id\": 15,\n"
    "  \"x-future-key\": {\"nested\": [true, null, 1.5]}\n"
    "}\n";

/* ------------------------------------------------------------ helpers */

static char *round_trip(const char *json, size_t len, hs_error *err) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_iceberg_metadata m;
  hs_buf out;
  hs_buf_init(&out);
  char *s = NULL;
  if (hs_iceberg_metadata_parse(json, len, &arena, &m, err) == HS_OK &&
      hs_iceberg_metadata_write(&m, &out, err) == HS_OK && hs_buf_append_byte(&out, 0))
    s = (char *)hs_buf_detach(&out);
  hs_buf_free(&out);
  hs_arena_reset(&arena);
  return s;
}

static int filter_round_trip(void) {
  hs_buf in;
  hs_buf_init(&in);
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0) hs_buf_append(&in, chunk, n);
  hs_error err = {0};
  char *s = round_trip((const char *)in.data, in.len, &err);
  hs_buf_free(&in);
  if (s == NULL) {
    printf("ERROR: %s\n", err.message);
    return 1;
  }
  fputs(s, stdout);
  hs_free(s);
  return 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Lines "TYPE HEX N": hash the value whose single-value bytes are HEX
 * ("-" for empty) and print "hash bucket_N". */
static int filter_hash(void) {
  char line[70000], type_s[64], hex[65536];
  int rc = 0;
  while (fgets(line, sizeof line, stdin) != NULL) {
    int nb;
    if (sscanf(line, "%63s %65535s %d", type_s, hex, &nb) != 3) continue;
    hs_arena arena;
    hs_arena_init(&arena);
    hs_iceberg_type t;
    hs_error err = {0};
    uint8_t bytes[32768];
    size_t len = 0;
    for (size_t i = 0; hex[0] != '-' && hex[i] && hex[i + 1] && len < sizeof bytes; i += 2)
      bytes[len++] = (uint8_t)(hexval(hex[i]) * 16 + hexval(hex[i + 1]));
    hs_iceberg_value v;
    hs_iceberg_transform tr = {.kind = HS_ICE_T_BUCKET, .param = nb};
    hs_iceberg_value b;
    int32_t h;
    if (hs_iceberg_type_parse_primitive(type_s, false, &arena, &t, &err) != HS_OK ||
        hs_iceberg_value_from_bytes(&t, bytes, len, &v, &err) != HS_OK ||
        hs_iceberg_value_hash(&t, &v, &h, &err) != HS_OK ||
        hs_iceberg_transform_apply(&tr, &t, &v, &b, &err) != HS_OK) {
      printf("ERROR: %s\n", err.message);
      rc = 1;
    } else {
      printf("%d %lld\n", h, (long long)b.i64);
    }
    hs_arena_reset(&arena);
  }
  return rc;
}

/* ------------------------------------------------------------- murmur3 */

static int32_t hash_of(const char *type, hs_iceberg_value v) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_iceberg_type t;
  hs_error err = {0};
  int32_t h = 0;
  CHECK_OK(hs_iceberg_type_parse_primitive(type, false, &arena, &t, &err), &err);
  CHECK_OK(hs_iceberg_value_hash(&t, &v, &h, &err), &err);
  hs_arena_reset(&arena);
  return h;
}

static void test_murmur3(void) {
  /* Appendix B reference values. */
  CHECK_EQ_INT(hash_of("int", (hs_iceberg_value){.i64 = 34}), 2017239379);
  CHECK_EQ_INT(hash_of("long", (hs_iceberg_value){.i64 = 34}), 2017239379);
  CHECK_EQ_INT(hash_of("decimal(4,2)", (hs_iceberg_value){.dec_lo = 1420}), -500754589);
  CHECK_EQ_INT(hash_of("date", (hs_iceberg_value){.i64 = 17486}), -653330422);
  CHECK_EQ_INT(hash_of("time", (hs_iceberg_value){.i64 = 81068000000LL}), -662762989);
  CHECK_EQ_INT(hash_of("timestamp", (hs_iceberg_value){.i64 = 1510871468000000LL}), -2047944441);
  CHECK_EQ_INT(hash_of("timestamp", (hs_iceberg_value){.i64 = 1510871468000001LL}), -1207196810);
  CHECK_EQ_INT(hash_of("timestamptz", (hs_iceberg_value){.i64 = 1510871468000001LL}), -1207196810);
  CHECK_EQ_INT(hash_of("timestamp_ns", (hs_iceberg_value){.i64 = 1510871468000000000LL}),
               -2047944441);
  CHECK_EQ_INT(hash_of("timestamptz_ns", (hs_iceberg_value){.i64 = 1510871468000001001LL}),
               -1207196810);
  CHECK_EQ_INT(hash_of("string", (hs_iceberg_value){.bytes = (const uint8_t *)"iceberg", .len = 7}),
               1210000089);
  CHECK_EQ_INT(hash_of("string", (hs_iceberg_value){.bytes = (const uint8_t *)"34", .len = 2}),
               -427558391);
  static const uint8_t uuid[16] = {0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD,
                                   0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7};
  CHECK_EQ_INT(hash_of("uuid", (hs_iceberg_value){.bytes = uuid, .len = 16}), 1488055340);
  static const uint8_t b4[4] = {0, 1, 2, 3};
  CHECK_EQ_INT(hash_of("fixed[4]", (hs_iceberg_value){.bytes = b4, .len = 4}), -188683207);
  CHECK_EQ_INT(hash_of("binary", (hs_iceberg_value){.bytes = b4, .len = 4}), -188683207);
  CHECK_EQ_INT(hash_of("boolean", (hs_iceberg_value){.b = true}), 1392991556);
  CHECK_EQ_INT(hash_of("float", (hs_iceberg_value){.f64 = 1.0}), -142385009);
  CHECK_EQ_INT(hash_of("float", (hs_iceberg_value){.f64 = 0.0}), 1669671676);
  CHECK_EQ_INT(hash_of("float", (hs_iceberg_value){.f64 = -0.0}), 1669671676);
  CHECK_EQ_INT(hash_of("double", (hs_iceberg_value){.f64 = 1.0}), -142385009);
  CHECK_EQ_INT(hash_of("double", (hs_iceberg_value){.f64 = -0.0}), 1669671676);
  CHECK_EQ_INT(hash_of("double", (hs_iceberg_value){.f64 = NAN}),
               hash_of("double", (hs_iceberg_value){.f64 = -NAN}));
  /* Raw murmur3: empty input with seed 0 is 0; tails of 1..3 bytes. */
  CHECK_EQ_INT(hs_murmur3_x86_32("", 0, 0), 0);
  CHECK_EQ_INT((int32_t)hs_murmur3_x86_32("ice", 3, 0),
               hash_of("string", (hs_iceberg_value){.bytes = (const uint8_t *)"ice", .len = 3}));
}

/* ----------------------------------------------------------- transforms */

static hs_iceberg_value apply(const char *transform, const char *type, hs_iceberg_value v,
                              hs_status want) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_iceberg_type t;
  hs_iceberg_transform tr;
  hs_iceberg_value out = {0};
  hs_error err = {0};
  CHECK_OK(hs_iceberg_type_parse_primitive(type, false, &arena, &t, &err), &err);
  CHECK_OK(hs_iceberg_transform_parse(transform, false, &arena, &tr, &err), &err);
  hs_status st = hs_iceberg_transform_apply(&tr, &t, &v, &out, &err);
  CHECK_EQ_INT(st, want);
  if (st != want) fprintf(stderr, "  %s(%s): %s\n", transform, type, err.message);
  hs_arena_reset(&arena);
  return out;
}

static void test_transforms(void) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_error err = {0};
  /* Strings: parse and format back. */
  const char *good[] = {"identity", "bucket[16]", "truncate[4]", "year",
                        "month",    "day",        "hour",        "void"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    hs_iceberg_transform t;
    hs_buf b;
    hs_buf_init(&b);
    CHECK_OK(hs_iceberg_transform_parse(good[i], false, &arena, &t, &err), &err);
    CHECK(hs_iceberg_transform_format(&t, &b) && hs_buf_append_byte(&b, 0));
    CHECK(strcmp((const char *)b.data, good[i]) == 0);
    hs_buf_free(&b);
  }
  const char *bad[] = {"bucket[0]",  "bucket[]",    "bucket[-1]", "bucket[16",
                       "bucket[01]", "truncate[x]", "Day",        "bucket[2147483648]"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hs_iceberg_transform t;
    hs_error e = {0};
    CHECK_EQ_INT(hs_iceberg_transform_parse(bad[i], false, &arena, &t, &e), HS_ERR_SCHEMA);
    CHECK_OK(hs_iceberg_transform_parse(bad[i], true, &arena, &t, &e), &e);
    CHECK(t.kind == HS_ICE_T_UNKNOWN && strcmp(t.text, bad[i]) == 0);
  }
  /* Bucket: (hash & INT_MAX) % N. */
  CHECK_EQ_INT(apply("bucket[16]", "int", (hs_iceberg_value){.i64 = 34}, HS_OK).i64,
               (2017239379 & 0x7fffffff) % 16);
  CHECK_EQ_INT(apply("bucket[100]", "string",
                     (hs_iceberg_value){.bytes = (const uint8_t *)"iceberg", .len = 7}, HS_OK)
                   .i64,
               1210000089 % 100);
  CHECK_EQ_INT(
      apply("bucket[7]", "timestamp", (hs_iceberg_value){.i64 = 1510871468000000LL}, HS_OK).i64,
      ((uint32_t)-2047944441 & 0x7fffffffu) % 7);
  CHECK(apply("bucket[7]", "int", (hs_iceberg_value){.is_null = true}, HS_OK).is_null);
  apply("bucket[7]", "float", (hs_iceberg_value){.f64 = 1}, HS_ERR_SCHEMA);
  apply("bucket[7]", "boolean", (hs_iceberg_value){.b = true}, HS_ERR_SCHEMA);
  /* Truncate: positive remainders. */
  CHECK_EQ_INT(apply("truncate[10]", "int", (hs_iceberg_value){.i64 = 1}, HS_OK).i64, 0);
  CHECK_EQ_INT(apply("truncate[10]", "int", (hs_iceberg_value){.i64 = -1}, HS_OK).i64, -10);
  CHECK_EQ_INT(apply("truncate[10]", "long", (hs_iceberg_value){.i64 = 1234}, HS_OK).i64, 1230);
  apply("truncate[10]", "long", (hs_iceberg_value){.i64 = INT64_MIN}, HS_ERR_INVALID_ARG);
  apply("truncate[10]", "int", (hs_iceberg_value){.i64 = INT32_MIN}, HS_ERR_INVALID_ARG);
  CHECK_EQ_INT(
      apply("truncate[50]", "decimal(9,2)", (hs_iceberg_value){.dec_lo = 1065}, HS_OK).dec_lo,
      1050);
  hs_iceberg_value neg = apply("truncate[50]", "decimal(9,2)",
                               (hs_iceberg_value){.dec_hi = -1, .dec_lo = (uint64_t)-1065}, HS_OK);
  CHECK(neg.dec_hi == -1 && neg.dec_lo == (uint64_t)-1100);
  hs_iceberg_value s =
      apply("truncate[3]", "string",
            (hs_iceberg_value){.bytes = (const uint8_t *)"iceberg", .len = 7}, HS_OK);
  CHECK(s.len == 3 && memcmp(s.bytes, "ice", 3) == 0);
  /* Code points, not bytes: "żółw" is 2+2+2+1 bytes. */
  s = apply("truncate[2]", "string",
            (hs_iceberg_value){.bytes = (const uint8_t *)"\xc5\xbc\xc3\xb3\xc5\x82w", .len = 7},
            HS_OK);
  CHECK_EQ_INT(s.len, 4);
  s = apply("truncate[9]", "string", (hs_iceberg_value){.bytes = (const uint8_t *)"ab", .len = 2},
            HS_OK);
  CHECK_EQ_INT(s.len, 2);
  static const uint8_t b5[5] = {1, 2, 3, 4, 5};
  CHECK_EQ_INT(apply("truncate[3]", "binary", (hs_iceberg_value){.bytes = b5, .len = 5}, HS_OK).len,
               3);
  /* Dates and times. 2017-11-16 = day 17486. */
  CHECK_EQ_INT(apply("year", "date", (hs_iceberg_value){.i64 = 17486}, HS_OK).i64, 47);
  CHECK_EQ_INT(apply("month", "date", (hs_iceberg_value){.i64 = 17486}, HS_OK).i64, 47 * 12 + 10);
  CHECK_EQ_INT(apply("day", "date", (hs_iceberg_value){.i64 = 17486}, HS_OK).i64, 17486);
  CHECK_EQ_INT(apply("hour", "timestamp", (hs_iceberg_value){.i64 = 1510871468000000LL}, HS_OK).i64,
               1510871468 / 3600);
  CHECK_EQ_INT(
      apply("day", "timestamptz_ns", (hs_iceberg_value){.i64 = 1510871468000000000LL}, HS_OK).i64,
      17486);
  CHECK_EQ_INT(apply("year", "timestamp", (hs_iceberg_value){.i64 = -1}, HS_OK).i64, -1);
  CHECK_EQ_INT(apply("month", "timestamp", (hs_iceberg_value){.i64 = -1}, HS_OK).i64, -1);
  CHECK_EQ_INT(apply("day", "timestamp", (hs_iceberg_value){.i64 = -1}, HS_OK).i64, -1);
  CHECK_EQ_INT(apply("hour", "timestamp", (hs_iceberg_value){.i64 = -1}, HS_OK).i64, -1);
  CHECK_EQ_INT(apply("month", "date", (hs_iceberg_value){.i64 = -365 - 31}, HS_OK).i64, -13);
  CHECK_EQ_INT(apply("year", "date", (hs_iceberg_value){.i64 = 11016}, HS_OK).i64,
               30); /* 2000-02-29 */
  CHECK_EQ_INT(apply("month", "date", (hs_iceberg_value){.i64 = 11016}, HS_OK).i64, 30 * 12 + 1);
  apply("hour", "date", (hs_iceberg_value){.i64 = 1}, HS_ERR_SCHEMA);
  apply("hour", "timestamp", (hs_iceberg_value){.i64 = INT64_MAX}, HS_ERR_INVALID_ARG);
  CHECK(apply("void", "string", (hs_iceberg_value){.len = 0}, HS_OK).is_null);
  CHECK_EQ_INT(apply("identity", "long", (hs_iceberg_value){.i64 = 77}, HS_OK).i64, 77);
  apply("identity", "variant", (hs_iceberg_value){0}, HS_ERR_SCHEMA);
  /* Result types. */
  hs_iceberg_type src = {.id = HS_ICE_TIMESTAMP}, rt;
  hs_iceberg_transform day = {.kind = HS_ICE_T_DAY}, bucket = {.kind = HS_ICE_T_BUCKET, .param = 4};
  CHECK_OK(hs_iceberg_transform_result_type(&day, &src, &rt, &err), &err);
  CHECK_EQ_INT(rt.id, HS_ICE_DATE);
  src.id = HS_ICE_STRING;
  CHECK_OK(hs_iceberg_transform_result_type(&bucket, &src, &rt, &err), &err);
  CHECK_EQ_INT(rt.id, HS_ICE_INT);
  hs_arena_reset(&arena);
}

/* ----------------------------------------------------- single values */

static void bytes_case(const char *type, hs_iceberg_value v, const char *want_hex) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_iceberg_type t;
  hs_error err = {0};
  hs_buf b;
  hs_buf_init(&b);
  CHECK_OK(hs_iceberg_type_parse_primitive(type, false, &arena, &t, &err), &err);
  CHECK_OK(hs_iceberg_value_to_bytes(&t, &v, &b, &err), &err);
  char hex[80] = {0};
  for (size_t i = 0; i < b.len && i < 39; i++) snprintf(hex + 2 * i, 3, "%02x", b.data[i]);
  CHECK(strcmp(hex, want_hex) == 0);
  if (strcmp(hex, want_hex) != 0) fprintf(stderr, "  %s: got %s want %s\n", type, hex, want_hex);
  hs_iceberg_value back;
  CHECK_OK(hs_iceberg_value_from_bytes(&t, b.data, b.len, &back, &err), &err);
  CHECK(back.i64 == v.i64 && back.b == v.b && back.dec_hi == v.dec_hi && back.dec_lo == v.dec_lo &&
        back.len == v.len && (isnan(v.f64) ? isnan(back.f64) : back.f64 == v.f64));
  hs_buf_free(&b);
  hs_arena_reset(&arena);
}

static void test_single_values(void) {
  bytes_case("boolean", (hs_iceberg_value){.b = true}, "01");
  bytes_case("int", (hs_iceberg_value){.i64 = -2}, "feffffff");
  bytes_case("date", (hs_iceberg_value){.i64 = 17486}, "4e440000");
  bytes_case("long", (hs_iceberg_value){.i64 = 34}, "2200000000000000");
  bytes_case("timestamp_ns", (hs_iceberg_value){.i64 = 1}, "0100000000000000");
  bytes_case("float", (hs_iceberg_value){.f64 = 1.0}, "0000803f");
  bytes_case("double", (hs_iceberg_value){.f64 = -2.0}, "00000000000000c0");
  bytes_case("decimal(4,2)", (hs_iceberg_value){.dec_lo = 1420}, "058c");
  bytes_case("decimal(4,2)", (hs_iceberg_value){.dec_lo = 0}, "00");
  bytes_case("decimal(4,2)", (hs_iceberg_value){.dec_lo = 128}, "0080");
  bytes_case("decimal(4,2)", (hs_iceberg_value){.dec_hi = -1, .dec_lo = (uint64_t)-1}, "ff");
  bytes_case("decimal(4,2)", (hs_iceberg_value){.dec_hi = -1, .dec_lo = (uint64_t)-129}, "ff7f");
  bytes_case("decimal(38,0)", (hs_iceberg_value){.dec_hi = INT64_MIN, .dec_lo = 0},
             "80000000000000000000000000000000");
  bytes_case("string", (hs_iceberg_value){.bytes = (const uint8_t *)"ab", .len = 2}, "6162");
  bytes_case("binary", (hs_iceberg_value){.len = 0}, "");
  /* Wrong lengths are refused; promoted widths are read. */
  hs_iceberg_type t = {.id = HS_ICE_INT};
  hs_iceberg_value v;
  hs_error err = {0};
  static const uint8_t eight[8] = {1, 0, 0, 0, 0, 0, 0, 0};
  CHECK_EQ_INT(hs_iceberg_value_from_bytes(&t, eight, 8, &v, &err), HS_ERR_CORRUPT);
  t.id = HS_ICE_LONG;
  CHECK_OK(hs_iceberg_value_from_bytes(&t, eight, 4, &v, &err), &err);
  CHECK_EQ_INT(v.i64, 1);
  t.id = HS_ICE_TIMESTAMP;
  CHECK_OK(hs_iceberg_value_from_bytes(&t, eight, 4, &v, &err), &err);
  CHECK_EQ_INT(v.i64, 86400000000LL);
  t.id = HS_ICE_UUID;
  CHECK_EQ_INT(hs_iceberg_value_from_bytes(&t, eight, 8, &v, &err), HS_ERR_CORRUPT);
  t = (hs_iceberg_type){.id = HS_ICE_FIXED, .length = 3};
  CHECK_EQ_INT(hs_iceberg_value_from_bytes(&t, eight, 8, &v, &err), HS_ERR_CORRUPT);
  t.id = HS_ICE_DECIMAL;
  CHECK_EQ_INT(hs_iceberg_value_from_bytes(&t, eight, 0, &v, &err), HS_ERR_CORRUPT);
}

/* -------------------------------------------------------------- types */

static void test_types(void) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_error err = {0};
  hs_iceberg_type t;
  CHECK_OK(hs_iceberg_type_parse_primitive("decimal( 38 , 0 )", false, &arena, &t, &err), &err);
  CHECK(t.id == HS_ICE_DECIMAL && t.precision == 38 && t.scale == 0);
  const char *bad[] = {
      "decimal(39,0)",     "decimal(5,6)", "decimal(0,0)", "decimal(5)", "fixed[0]",
      "fixed[]",           "fixed[16]x",   "Int",          "",           "decimal(1,1",
      "fixed[99999999999]"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hs_error e = {0};
    CHECK_EQ_INT(hs_iceberg_type_parse_primitive(bad[i], false, &arena, &t, &e), HS_ERR_SCHEMA);
  }
  CHECK_OK(
      hs_iceberg_type_parse_primitive("geography(srid:4326,spherical)", false, &arena, &t, &err),
      &err);
  CHECK(t.id == HS_ICE_GEOGRAPHY && strcmp(t.text, "geography(srid:4326,spherical)") == 0);
  CHECK_OK(hs_iceberg_type_parse_primitive("interval", true, &arena, &t, &err), &err);
  CHECK(t.id == HS_ICE_OTHER && strcmp(t.text, "interval") == 0);
  hs_arena_reset(&arena);
}

/* ----------------------------------------------------------- metadata */

static void test_metadata_round_trip(void) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_error err = {0};
  hs_iceberg_metadata m;
  CHECK_OK(hs_iceberg_metadata_parse(V3_DOC, strlen(V3_DOC), &arena, &m, &err), &err);
  CHECK_EQ_INT(m.format_version, 3);
  CHECK_EQ_INT(m.n_schemas, 2);
  CHECK_EQ_INT(m.current_schema_id, 1);
  const hs_iceberg_schema *s = hs_iceberg_metadata_schema(&m, 1);
  CHECK(s != NULL && s->root.n_fields == 7 && s->n_identifier_field_ids == 1);
  if (s != NULL && s->root.n_fields == 7) {
    CHECK(strcmp(s->root.fields[0].doc, "key") == 0);
    CHECK(s->root.fields[1].type.id == HS_ICE_DECIMAL && s->root.fields[1].type.precision == 9);
    CHECK(strcmp(s->root.fields[1].initial_default, "\"1.50\"") == 0);
    CHECK(s->root.fields[2].type.id == HS_ICE_LIST && s->root.fields[2].type.element_id == 4);
    CHECK(s->root.fields[3].type.id == HS_ICE_MAP &&
          s->root.fields[3].type.value->id == HS_ICE_STRUCT);
    CHECK(s->root.fields[4].type.id == HS_ICE_TIMESTAMPTZ_NS);
    CHECK(s->root.fields[6].type.id == HS_ICE_GEOMETRY && s->root.fields[6].extra.n == 1);
    const hs_iceberg_field *f = NULL;
    const hs_iceberg_type *ft = hs_iceberg_schema_find(s, 8, &f);
    CHECK(ft != NULL && ft->id == HS_ICE_FIXED && ft->length == 16 && f != NULL && f->id == 8);
    ft = hs_iceberg_schema_find(s, 7, &f);
    CHECK(ft != NULL && ft->id == HS_ICE_STRUCT && f == NULL);
    CHECK(hs_iceberg_schema_find(s, 99, NULL) == NULL);
    CHECK_EQ_INT(hs_iceberg_type_max_id(&s->root), 12);
  }
  CHECK(m.n_specs == 2 && m.specs[1].n_fields == 3);
  if (m.n_specs == 2 && m.specs[1].n_fields == 3) {
    CHECK(m.specs[1].fields[0].transform.kind == HS_ICE_T_BUCKET);
    CHECK(m.specs[1].fields[2].transform.kind == HS_ICE_T_UNKNOWN &&
          m.specs[1].fields[2].n_source_ids == 2);
  }
  CHECK(m.n_sort_orders == 2 && m.sort_orders[1].fields[0].descending &&
        !m.sort_orders[1].fields[0].nulls_first && m.sort_orders[1].fields[1].nulls_first);
  CHECK(m.has_current_snapshot_id && m.current_snapshot_id == 3051729675574597004LL);
  CHECK(m.n_snapshots == 2 && m.snapshots[1].has_parent_snapshot_id &&
        m.snapshots[1].first_row_id == 10 && m.snapshots[1].extra.n == 1);
  CHECK(m.n_refs == 2 && m.refs[1].is_tag && m.refs[0].min_snapshots_to_keep == 3);
  CHECK(m.has_next_row_id && m.next_row_id == 15);
  CHECK(m.statistics != NULL && m.extra.n == 1);
  CHECK(strcmp(hs_iceberg_metadata_property(&m, "owner"), "me") == 0);

  /* Write, parse, write again: identical text (a fixed point). */
  hs_buf a, b;
  hs_buf_init(&a);
  hs_buf_init(&b);
  CHECK_OK(hs_iceberg_metadata_write(&m, &a, &err), &err);
  hs_iceberg_metadata m2;
  CHECK_OK(hs_iceberg_metadata_parse((const char *)a.data, a.len, &arena, &m2, &err), &err);
  CHECK_OK(hs_iceberg_metadata_write(&m2, &b, &err), &err);
  CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
  hs_buf_append_byte(&a, 0);
  CHECK(strstr((const char *)a.data, "\"decimal(9,2)\"") != NULL);
  CHECK(strstr((const char *)a.data, "\"x-future-key\"") != NULL);
  CHECK(strstr((const char *)a.data, "\"zorder\"") != NULL);
  CHECK(strstr((const char *)a.data, "\"key-id\": \"k1\"") != NULL);
  hs_buf_free(&a);
  hs_buf_free(&b);

  /* Arrow mapping of the current schema: the vector and the uuid. */
  struct ArrowSchema as;
  CHECK_EQ_INT(hs_iceberg_schema_to_arrow(s, &m, &as, &err), HS_ERR_UNSUPPORTED); /* geometry */
  CHECK(strstr(err.message, "'g'") != NULL);
  hs_arena_reset(&arena);
}

typedef struct bad_case {
  const char *find, *replace, *want;
} bad_case;

static void test_metadata_errors(void) {
  static const bad_case cases[] = {
      {"\"type\": \"timestamptz_ns\"", "\"type\": \"strin\"",
       "schemas[1].fields[4].type: unknown type 'strin'"},
      {"\"element-id\": 4, ", "",
       "schemas[1].fields[2].type.element-id: required field is missing"},
      {"\"key\": \"string\"", "\"key\": 7", "schemas[1].fields[3].type.key: a type must be"},
      {"\"format-version\": 3", "\"format-version\": 9", "format-version: unsupported"},
      {"\"current-schema-id\": 1", "\"current-schema-id\": 5", "current-schema-id: no schema"},
      {"\"default-spec-id\": 1", "\"default-spec-id\": \"1\"",
       "default-spec-id: expected an integer"},
      {"\"last-column-id\": 12", "\"last-column-id\": 1.0", "last-column-id: expected an integer"},
      {"\"last-column-id\": 12", "\"last-column-id\": 4294967296", "out of 32-bit range"},
      {"\"direction\": \"desc\"", "\"direction\": \"down\"",
       "sort-orders[1].fields[0].direction: 'down' is not asc or desc"},
      {"\"type\": \"tag\"", "\"type\": \"leaf\"", "refs.v1.type: 'leaf' is not branch or tag"},
      {"\"type\": \"tag\"", "\"type\": \"tag\", \"min-snapshots-to-keep\": 1",
       "refs.v1: tags cannot have snapshot retention"},
      {"\"snapshot-id\": 3051729675574597003, \"type\"", "\"snapshot-id\": 1, \"type\"",
       "refs: 'v1' points at missing snapshot 1"},
      {"\"next-row-id\": 15,", "", "next-row-id: required field is missing"},
      {"\"owner\": \"me\"", "\"owner\": 1", "properties.owner: expected a string value"},
      {"{\"operation\": \"append\"}", "{\"op\": \"append\"}",
       "snapshots[0].summary.operation: required field is missing"},
      {"\"location\": \"/tmp/lake/t\",", "\"location\": \"/tmp/lake/t\", \"location\": \"x\",",
       "duplicate object key"},
      {"\"fields\": []}", "\"fields\": {}}", "partition-specs[0].fields: expected an array"},
      {"\"manifest-list\": \"/tmp/lake/t/metadata/snap-1.avro\",", "",
       "snapshots[0].manifest-list: required field is missing"},
      {"\"type\": \"map\"", "\"type\": \"mapp\"", "schemas[1].fields[3].type.type: unknown nested"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *at = strstr(V3_DOC, cases[i].find);
    CHECK(at != NULL);
    if (at == NULL) continue;
    hs_buf b;
    hs_buf_init(&b);
    hs_buf_append(&b, V3_DOC, (size_t)(at - V3_DOC));
    hs_buf_append(&b, cases[i].replace, strlen(cases[i].replace));
    hs_buf_append(&b, at + strlen(cases[i].find), strlen(at + strlen(cases[i].find)));
    hs_error err = {0};
    char *s = round_trip((const char *)b.data, b.len, &err);
    CHECK(s == NULL && err.status != HS_OK);
    CHECK(strstr(err.message, cases[i].want) != NULL);
    if (s != NULL || strstr(err.message, cases[i].want) == NULL)
      fprintf(stderr, "  case %zu: got '%s', want '%s'\n", i, err.message, cases[i].want);
    hs_free(s);
    hs_buf_free(&b);
  }
  /* Not JSON at all, and an empty input. */
  hs_error err = {0};
  CHECK(round_trip("{\"a\":", 5, &err) == NULL && err.status == HS_ERR_CORRUPT);
  err = (hs_error){0};
  CHECK(round_trip(NULL, 0, &err) == NULL && err.status == HS_ERR_CORRUPT);
  err = (hs_error){0};
  CHECK(round_trip("[]", 2, &err) == NULL && strstr(err.message, "(root)") != NULL);
}

static void test_metadata_hostile(void) {
  /* Every prefix and a few thousand byte flips: errors, never crashes. */
  size_t len = strlen(V3_DOC);
  int ok = 0;
  for (size_t n = 0; n < len; n++) {
    hs_error err = {0};
    char *s = round_trip(V3_DOC, n, &err);
    ok += s != NULL;
    hs_free(s);
  }
  CHECK_EQ_INT(ok, 1); /* only the prefix that drops the final newline */
  uint64_t seed = 42;
  char *copy = hs_malloc(len);
  for (int it = 0; it < 3000; it++) {
    memcpy(copy, V3_DOC, len);
    for (int k = 0; k < 3; k++)
      copy[hs_test_rand(&seed) % len] = (char)(hs_test_rand(&seed) & 0xff);
    hs_error err = {0};
    char *s = round_trip(copy, len, &err);
    if (s != NULL) { /* whatever parses must round-trip to a fixed point */
      hs_error e2 = {0};
      char *t = round_trip(s, strlen(s), &e2);
      CHECK(t != NULL && strcmp(s, t) == 0);
      hs_free(t);
    }
    hs_free(s);
  }
  hs_free(copy);
  /* Deep nesting is refused, not recursed without bound. */
  hs_buf b;
  hs_buf_init(&b);
  const char *head = strstr(V3_DOC, "\"type\": \"timestamptz_ns\"");
  hs_buf_append(&b, V3_DOC, (size_t)(head - V3_DOC));
  hs_buf_printf(&b, "\"type\": ");
  for (int i = 0; i < 200; i++)
    hs_buf_printf(&b,
                  "{\"type\": \"list\", \"element-id\": %d, \"element-required\": true, "
                  "\"element\": ",
                  100 + i);
  hs_buf_printf(&b, "\"int\"");
  for (int i = 0; i < 200; i++) hs_buf_printf(&b, "}");
  const char *rest = head + strlen("\"type\": \"timestamptz_ns\"");
  hs_buf_append(&b, rest, strlen(rest));
  hs_error err = {0};
  char *s = round_trip((const char *)b.data, b.len, &err);
  CHECK(s == NULL && strstr(err.message, "nested deeper") != NULL);
  hs_free(s);
  hs_buf_free(&b);
}

/* ---------------------------------------------------------- Arrow map */

static void test_arrow_mapping(void) {
  hs_error err = {0};
  struct ArrowSchema root;
  const char *fmts[] = {"c",
                        "I",
                        "L",
                        "e",
                        "g",
                        "U",
                        "Z",
                        "w:16",
                        "w:16",
                        "d:20,4",
                        "tdD",
                        "ttm",
                        "tsu:Europe/Paris",
                        "tsn:",
                        "+w:4",
                        "+m",
                        "+l"};
  size_t n = sizeof fmts / sizeof fmts[0];
  CHECK_OK(hs_arrow_schema_init(&root, "+s", "", 0, (int64_t)n, &err), &err);
  for (size_t i = 0; i < n; i++) {
    char name[8];
    snprintf(name, sizeof name, "c%zu", i);
    int64_t nch = strcmp(fmts[i], "+w:4") == 0 || !strcmp(fmts[i], "+m") || !strcmp(fmts[i], "+l");
    CHECK_OK(hs_arrow_schema_init(root.children[i], fmts[i], name, i % 2 ? ARROW_FLAG_NULLABLE : 0,
                                  nch, &err),
             &err);
  }
  const char *k[] = {"ARROW:extension:name"}, *v[] = {"arrow.uuid"};
  CHECK_OK(hs_arrow_schema_set_metadata(root.children[8], k, v, 1, &err), &err);
  CHECK_OK(hs_arrow_schema_init(root.children[14]->children[0], "f", "item", 0, 0, &err), &err);
  struct ArrowSchema *entries = root.children[15]->children[0];
  CHECK_OK(hs_arrow_schema_init(entries, "+s", "entries", 0, 2, &err), &err);
  CHECK_OK(hs_arrow_schema_init(entries->children[0], "u", "key", 0, 0, &err), &err);
  CHECK_OK(hs_arrow_schema_init(entries->children[1], "+s", "value", ARROW_FLAG_NULLABLE, 1, &err),
           &err);
  CHECK_OK(hs_arrow_schema_init(entries->children[1]->children[0], "b", "flag", 0, 0, &err), &err);
  CHECK_OK(hs_arrow_schema_init(root.children[16]->children[0], "i", "item", ARROW_FLAG_NULLABLE, 0,
                                &err),
           &err);

  hs_arena arena;
  hs_arena_init(&arena);
  hs_iceberg_schema s;
  int32_t last = 0;
  hs_iceberg_vector_dim *vec = NULL;
  size_t nvec = 0;
  hs_iceberg_from_arrow_options o2 = {.format_version = 2, .next_id = 1};
  hs_error e = {0};
  /* uint64 is lossy; timestamp[ns] needs v3. */
  CHECK_EQ_INT(hs_iceberg_schema_from_arrow(&root, &o2, &arena, &s, &last, &vec, &nvec, &e),
               HS_ERR_SCHEMA);
  CHECK(strstr(e.message, "'c2'") != NULL);
  hs_iceberg_from_arrow_options o3 = {.format_version = 3, .next_id = 1, .allow_lossy = true};
  CHECK_OK(hs_iceberg_schema_from_arrow(&root, &o3, &arena, &s, &last, &vec, &nvec, &err), &err);
  static const hs_iceberg_type_id want[] = {
      HS_ICE_INT,    HS_ICE_LONG,   HS_ICE_LONG,        HS_ICE_FLOAT,        HS_ICE_DOUBLE,
      HS_ICE_STRING, HS_ICE_BINARY, HS_ICE_FIXED,       HS_ICE_UUID,         HS_ICE_DECIMAL,
      HS_ICE_DATE,   HS_ICE_TIME,   HS_ICE_TIMESTAMPTZ, HS_ICE_TIMESTAMP_NS, HS_ICE_LIST,
      HS_ICE_MAP,    HS_ICE_LIST};
  CHECK_EQ_INT(s.root.n_fields, n);
  for (size_t i = 0; i < n && i < s.root.n_fields; i++) {
    CHECK_EQ_INT(s.root.fields[i].type.id, want[i]);
    CHECK_EQ_INT(s.root.fields[i].id, (int64_t)i + 1); /* top level first: 1..n */
    CHECK_EQ_INT(s.root.fields[i].required, i % 2 == 0);
  }
  CHECK_EQ_INT(last, n + 5); /* vec element, key, value, flag, list element */
  CHECK(nvec == 1 && vec[0].field_id == 15 && vec[0].dimension == 4);

  /* Back to Arrow with the vector property set. */
  hs_iceberg_metadata m = {0};
  char key[64];
  hs_iceberg_vector_dim_property(15, key);
  CHECK(strcmp(key, "hyperstream.vector.15.dimension") == 0);
  hs_iceberg_kv prop = {key, "4"};
  m.properties = &prop;
  m.n_properties = 1;
  struct ArrowSchema back;
  CHECK_OK(hs_iceberg_schema_to_arrow(&s, &m, &back, &err), &err);
  if (back.release != NULL) {
    CHECK(strcmp(back.children[14]->format, "+w:4") == 0);
    CHECK(strcmp(back.children[8]->format, "w:16") == 0);
    int32_t len;
    const char *ext =
        hs_arrow_metadata_get(back.children[8]->metadata, "ARROW:extension:name", &len);
    CHECK(ext != NULL && len == 10);
    const char *fid = hs_arrow_metadata_get(back.children[3]->metadata, "PARQUET:field_id", &len);
    CHECK(fid != NULL && len == 1 && fid[0] == '4');
    CHECK(strcmp(back.children[12]->format, "tsu:UTC") == 0);
    CHECK(strcmp(back.children[15]->children[0]->children[1]->format, "+s") == 0);
    CHECK(back.children[1]->flags & ARROW_FLAG_NULLABLE);
    /* Field ids carried by Arrow metadata are reused as they are. */
    hs_iceberg_schema s2;
    int32_t last2;
    CHECK_OK(hs_iceberg_schema_from_arrow(&back, &o3, &arena, &s2, &last2, NULL, NULL, &err), &err);
    CHECK_EQ_INT(last2, last);
    CHECK(s2.root.n_fields == n &&
          s2.root.fields[15].type.value_id == s.root.fields[15].type.value_id);
    hs_arrow_schema_release(&back);
  }
  hs_arrow_schema_release(&root);
  hs_arena_reset(&arena);
}

int main(void) {
  const char *mode = getenv("HS_ICEBERG_ROUNDTRIP");
  if (mode != NULL && strcmp(mode, "1") == 0) return filter_round_trip();
  mode = getenv("HS_ICEBERG_HASH");
  if (mode != NULL && strcmp(mode, "1") == 0) return filter_hash();
  test_murmur3();
  test_transforms();
  test_single_values();
  test_types();
  test_metadata_round_trip();
  test_metadata_errors();
  test_metadata_hostile();
  test_arrow_mapping();
  return hs_test_finish("test_iceberg_meta");
}

/*
 * test_avro.c — tests of src/avro/: schema JSON round trips that keep
 * Iceberg's field-id attributes, spec byte vectors of the binary encoding,
 * negative block counts, schema resolution by field name, container files
 * with both codecs and many blocks, and truncation/corruption of a small
 * file at every byte (an error, never a crash; run it under ASan).
 *
 * Two env-driven modes serve tests/python/test_avro_interop.py:
 *   HS_AVRO_WRITE=path [HS_AVRO_CODEC=null|deflate] [HS_AVRO_ROWS=n]
 *                       write the sample file (100 rows by default)
 *   HS_AVRO_READ=path   print {"schema":..., "meta":{...}} then one JSON
 *                       line per datum (hs_avro_value_to_json's view)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "avro/avro.h"
#include "hs_test.h"

/* An Iceberg-style schema touching every type, with ids on everything. */
static const char *sample_schema =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"namespace\":\"hs.test\",\"fields\":["
    "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
    "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},"
    "{\"name\":\"flag\",\"type\":\"boolean\",\"field-id\":2},"
    "{\"name\":\"ratio\",\"type\":\"float\",\"field-id\":3},"
    "{\"name\":\"score\",\"type\":\"double\",\"field-id\":4},"
    "{\"name\":\"payload\",\"type\":\"bytes\",\"field-id\":5},"
    "{\"name\":\"path\",\"type\":\"string\",\"doc\":\"file path\",\"field-id\":6},"
    "{\"name\":\"kind\",\"type\":{\"type\":\"enum\",\"name\":\"kind_t\",\"symbols\":[\"DATA\","
    "\"POSITION_DELETES\",\"EQUALITY_DELETES\"]},\"field-id\":7},"
    "{\"name\":\"ids\",\"type\":{\"type\":\"array\",\"items\":\"int\",\"element-id\":9},"
    "\"field-id\":8},"
    "{\"name\":\"counts\",\"type\":{\"type\":\"map\",\"values\":\"long\",\"key-id\":11,"
    "\"value-id\":12},\"field-id\":10},"
    "{\"name\":\"digest\",\"type\":{\"type\":\"fixed\",\"name\":\"md5\",\"size\":16},"
    "\"field-id\":13},"
    "{\"name\":\"day\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"},\"field-id\":14},"
    "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\","
    "\"adjust-to-utc\":true},\"field-id\":15},"
    "{\"name\":\"amount\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\","
    "\"precision\":9,\"scale\":2},\"field-id\":16},"
    "{\"name\":\"uid\",\"type\":{\"type\":\"string\",\"logicalType\":\"uuid\"},\"field-id\":17},"
    "{\"name\":\"t\",\"type\":{\"type\":\"long\",\"logicalType\":\"time-micros\"},"
    "\"field-id\":18},"
    "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":["
    "{\"name\":\"bucket\",\"type\":[\"null\",\"int\"],\"default\":null,\"field-id\":1000}]},"
    "\"field-id\":102},"
    "{\"name\":\"bounds\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\","
    "\"name\":\"k126_v127\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":126},"
    "{\"name\":\"value\",\"type\":\"bytes\",\"field-id\":127}]},\"logicalType\":\"map\"}],"
    "\"default\":null,\"field-id\":125},"
    "{\"name\":\"prev\",\"type\":[\"null\",\"md5\"],\"default\":null,\"field-id\":19}"
    "]}";

/* Datum i of the sample, as JSON for hs_avro_value_from_json (bytes are
 * code points 0..255; unions take the first branch the JSON fits). */
static json_t *sample_json(int i) {
  char buf[2048];
  snprintf(buf, sizeof buf,
           "{\"status\":%d,\"snapshot_id\":%s,\"flag\":%s,\"ratio\":%d.25,\"score\":%d.0e-3,"
           "\"payload\":\"p\\u00ff\\u0000%d\",\"path\":\"s3://b/data/%05d.parquet \\u00e9\","
           "\"kind\":\"%s\",\"ids\":[%d,%d,-%d],\"counts\":{\"a\":%d,\"b%d\":-9000000000000},"
           "\"digest\":\"0123456789abcde%c\",\"day\":%d,\"ts\":%lld,\"amount\":\"\\u0001%c\","
           "\"uid\":\"8f2e%04d-0000-4000-8000-000000000000\",\"t\":%d,"
           "\"partition\":{\"bucket\":%s},\"bounds\":%s,\"prev\":%s}",
           i % 3, i % 4 ? "null" : "1234567890123", i % 2 ? "true" : "false", i, i * 7, i, i,
           i % 3 == 0   ? "DATA"
           : i % 3 == 1 ? "POSITION_DELETES"
                        : "EQUALITY_DELETES",
           i, i * 2, i, i, i, 'a' + i % 26, 19000 + i, 1700000000000000LL + i, 'A' + i % 26, i,
           i * 1000, i % 5 ? "7" : "null",
           i % 2 ? "[{\"key\":1,\"value\":\"lo\"},{\"key\":2,\"value\":\"\\u0080\"}]" : "null",
           i % 6 ? "null" : "\"ffffffffffffffff\"");
  json_error_t jerr;
  json_t *j = json_loads(buf, JSON_ALLOW_NUL, &jerr);
  if (j == NULL) fprintf(stderr, "sample_json: %s\n", jerr.text);
  return j;
}

static char *dump(json_t *j) {
  char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
  return s;
}

/* ------------------------------------------------------------- schema */

static void test_schema_roundtrip(void) {
  hs_error err = {0};
  hs_avro_schema *s = NULL;
  CHECK_OK(hs_avro_schema_parse(sample_schema, strlen(sample_schema), &s, &err), &err);
  if (s == NULL) return;
  const hs_avro_node *root = hs_avro_schema_root(s);
  CHECK_EQ_INT(root->type, HS_AVRO_RECORD);
  CHECK(strcmp(root->fullname, "hs.test.manifest_entry") == 0);
  CHECK_EQ_INT(root->n_fields, 19);
  int64_t id = -1;
  CHECK_OK(hs_avro_field_attr_int(&root->fields[6], "field-id", &id), &err);
  CHECK_EQ_INT(id, 6);
  CHECK(strcmp(root->fields[6].doc, "file path") == 0);
  const hs_avro_node *ids = root->fields[8].type;
  CHECK_EQ_INT(ids->type, HS_AVRO_ARRAY);
  CHECK_OK(hs_avro_node_attr_int(ids, "element-id", &id), &err);
  CHECK_EQ_INT(id, 9);
  CHECK_OK(hs_avro_node_attr_int(root->fields[9].type, "value-id", &id), &err);
  CHECK_EQ_INT(id, 12);
  CHECK_EQ_INT(hs_avro_node_attr_int(root->fields[9].type, "nope", &id), HS_ERR_NOT_FOUND);
  CHECK_EQ_INT(root->fields[11].type->logical, HS_AVRO_LOGICAL_DATE);
  CHECK_EQ_INT(root->fields[13].type->logical, HS_AVRO_LOGICAL_DECIMAL);
  CHECK_EQ_INT(root->fields[13].type->precision, 9);
  CHECK_EQ_INT(root->fields[13].type->scale, 2);
  CHECK_EQ_INT(root->fields[14].type->logical, HS_AVRO_LOGICAL_UUID);
  CHECK(strcmp(root->fields[10].type->fullname, "hs.test.md5") == 0);
  /* The named reference resolves to the same node as the definition. */
  CHECK(root->fields[18].type->branches[1] == root->fields[10].type);
  CHECK_EQ_INT(hs_avro_node_field_index(root, "bounds"), 17);

  /* Serialized and re-parsed, the schema is the same JSON (named types
   * become references by full name, which parse to the same thing). */
  char *out = NULL;
  CHECK_OK(hs_avro_schema_to_json(s, &out, &err), &err);
  hs_avro_schema *s2 = NULL;
  CHECK_OK(hs_avro_schema_parse(out, strlen(out), &s2, &err), &err);
  char *out2 = NULL;
  if (s2) CHECK_OK(hs_avro_schema_to_json(s2, &out2, &err), &err);
  CHECK(out2 && strcmp(out, out2) == 0);
  json_t *a = json_loads(sample_schema, 0, NULL), *b = json_loads(out, 0, NULL);
  /* The one expected difference: the reference "md5" is written by full
   * name. Patch it in the original before comparing. */
  json_t *prev = json_object_get(json_array_get(json_object_get(a, "fields"), 18), "type");
  json_array_set_new(prev, 1, json_string("hs.test.md5"));
  CHECK(json_equal(a, b));
  if (!json_equal(a, b)) fprintf(stderr, "re-serialized: %s\n", out);
  json_decref(a);
  json_decref(b);
  hs_free(out);
  hs_free(out2);
  hs_avro_schema_free(s2);
  hs_avro_schema_free(s);
}

static void test_schema_recursive_and_namespaces(void) {
  const char *j =
      "{\"type\":\"record\",\"name\":\"Node\",\"namespace\":\"a.b\",\"fields\":["
      "{\"name\":\"v\",\"type\":\"long\"},"
      "{\"name\":\"next\",\"type\":[\"null\",\"Node\"],\"default\":null},"
      "{\"name\":\"other\",\"type\":{\"type\":\"record\",\"name\":\"x.Other\",\"fields\":["
      "{\"name\":\"n\",\"type\":[\"null\",\"a.b.Node\"]}]}},"
      "{\"name\":\"inner\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"],"
      "\"default\":\"A\"}}]}";
  hs_error err = {0};
  hs_avro_schema *s = NULL;
  CHECK_OK(hs_avro_schema_parse(j, strlen(j), &s, &err), &err);
  if (s == NULL) return;
  const hs_avro_node *root = hs_avro_schema_root(s);
  CHECK(root->fields[1].type->branches[1] == root);
  CHECK(strcmp(root->fields[2].type->fullname, "x.Other") == 0);
  CHECK(root->fields[2].type->fields[0].type->branches[1] == root);
  CHECK(strcmp(root->fields[3].type->fullname, "a.b.E") == 0);
  char *out = NULL;
  CHECK_OK(hs_avro_schema_to_json(s, &out, &err), &err);
  json_t *a = json_loads(j, 0, NULL), *b = out ? json_loads(out, 0, NULL) : NULL;
  json_t *nf = json_object_get(json_array_get(json_object_get(a, "fields"), 1), "type");
  json_array_set_new(nf, 1, json_string("a.b.Node"));
  CHECK(json_equal(a, b));
  json_decref(a);
  json_decref(b);

  /* A linked list of 3 through encode/decode. */
  hs_arena arena;
  hs_arena_init(&arena);
  json_t *dj = json_loads(
      "{\"v\":1,\"next\":{\"v\":2,\"next\":{\"v\":3,\"next\":null,\"other\":{\"n\":null},"
      "\"inner\":\"A\"},\"other\":{\"n\":null},\"inner\":\"A\"},\"other\":{\"n\":null},"
      "\"inner\":\"A\"}",
      0, NULL);
  hs_avro_value v, back;
  CHECK_OK(hs_avro_value_from_json(root, dj, &arena, &v, &err), &err);
  hs_buf buf;
  hs_buf_init(&buf);
  CHECK_OK(hs_avro_encode(root, &v, &buf, &err), &err);
  size_t pos = 0;
  CHECK_OK(hs_avro_decode(root, NULL, buf.data, buf.len, &pos, &arena, &back, &err), &err);
  CHECK_EQ_INT(pos, buf.len);
  json_t *bj = NULL;
  CHECK_OK(hs_avro_value_to_json(root, &back, &bj, &err), &err);
  CHECK(json_equal(dj, bj));
  json_decref(bj);
  json_decref(dj);
  hs_buf_free(&buf);
  hs_arena_reset(&arena);
  hs_free(out);
  hs_avro_schema_free(s);
}

static void expect_schema_error(const char *json, const char *needle) {
  hs_error err = {0};
  hs_avro_schema *s = NULL;
  hs_status st = hs_avro_schema_parse(json, strlen(json), &s, &err);
  CHECK(st != HS_OK);
  CHECK(s == NULL);
  CHECK(strstr(err.message, needle) != NULL);
  if (strstr(err.message, needle) == NULL)
    fprintf(stderr, "  schema %s: message \"%s\" lacks \"%s\"\n", json, err.message, needle);
  hs_avro_schema_free(s);
}

static void test_schema_errors(void) {
  expect_schema_error("{\"type\":", "invalid JSON");
  expect_schema_error("\"nosuch\"", "unknown type name \"nosuch\"");
  expect_schema_error(
      "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
      "{\"name\":\"b\",\"type\":{\"type\":\"array\",\"items\":\"Missing\"}}]}",
      "$.fields[1].type.items");
  expect_schema_error(
      "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
      "{\"name\":\"a\",\"type\":\"int\"}]}",
      "duplicate field");
  expect_schema_error("[\"int\",\"int\"]", "same type twice");
  expect_schema_error("[\"int\",[\"null\"]]", "union may not contain a union");
  expect_schema_error("{\"type\":\"fixed\",\"name\":\"f\",\"size\":-1}", "size");
  expect_schema_error("{\"type\":\"enum\",\"name\":\"e\",\"symbols\":[\"A\"],\"default\":\"B\"}",
                      "default");
  expect_schema_error("{\"type\":\"record\",\"name\":\"int\",\"fields\":[]}", "primitive");
  expect_schema_error("{\"type\":\"record\",\"name\":\"9r\",\"fields\":[]}", "invalid type name");
  /* Nesting deeper than the limit. */
  char deep[4096];
  size_t n = 0;
  for (int i = 0; i < 100; i++)
    n += (size_t)snprintf(deep + n, sizeof deep - n, "{\"type\":\"array\",\"items\":");
  n += (size_t)snprintf(deep + n, sizeof deep - n, "\"int\"");
  for (int i = 0; i < 100; i++) deep[n++] = '}';
  deep[n] = '\0';
  expect_schema_error(deep, "nested too deeply");
}

/* ------------------------------------------------------------- binary */

static void test_varint_vectors(void) {
  /* Avro spec table: zigzag varints. */
  struct {
    int64_t v;
    const char *hex;
  } cases[] = {{0, "00"},
               {-1, "01"},
               {1, "02"},
               {-2, "03"},
               {2, "04"},
               {-64, "7f"},
               {64, "8001"},
               {8191, "fe7f"},
               {INT64_MAX, "feffffffffffffffff01"},
               {INT64_MIN, "ffffffffffffffffff01"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hs_buf b;
    hs_buf_init(&b);
    CHECK(hs_avro_write_long(&b, cases[i].v));
    char hex[64] = {0};
    for (size_t k = 0; k < b.len; k++) snprintf(hex + 2 * k, 3, "%02x", b.data[k]);
    CHECK(strcmp(hex, cases[i].hex) == 0);
    int64_t back = 0;
    size_t pos = 0;
    hs_error err = {0};
    CHECK_OK(hs_avro_read_long(b.data, b.len, &pos, &back, &err), &err);
    CHECK(back == cases[i].v);
    CHECK_EQ_INT(pos, b.len);
    /* Every prefix is a truncation error. */
    for (size_t cut = 0; cut < b.len; cut++) {
      pos = 0;
      CHECK_EQ_INT(hs_avro_read_long(b.data, cut, &pos, &back, NULL), HS_ERR_CORRUPT);
    }
    hs_buf_free(&b);
  }
  const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
  size_t pos = 0;
  int64_t v;
  CHECK_EQ_INT(hs_avro_read_long(over, sizeof over, &pos, &v, NULL), HS_ERR_CORRUPT);
}

static hs_avro_schema *parse(const char *json) {
  hs_error err = {0};
  hs_avro_schema *s = NULL;
  CHECK_OK(hs_avro_schema_parse(json, strlen(json), &s, &err), &err);
  return s;
}

static void test_binary_vectors(void) {
  /* A record {a: long = 27, b: string = "foo"}: the spec's example bytes
   * 36 06 66 6f 6f. */
  hs_avro_schema *s = parse(
      "{\"type\":\"record\",\"name\":\"test\",\"fields\":[{\"name\":\"a\",\"type\":\"long\"},"
      "{\"name\":\"b\",\"type\":\"string\"}]}");
  if (s == NULL) return;
  const hs_avro_node *root = hs_avro_schema_root(s);
  const uint8_t bytes[] = {0x36, 0x06, 'f', 'o', 'o'};
  hs_arena arena;
  hs_arena_init(&arena);
  hs_avro_value v;
  hs_error err = {0};
  size_t pos = 0;
  CHECK_OK(hs_avro_decode(root, NULL, bytes, sizeof bytes, &pos, &arena, &v, &err), &err);
  CHECK_EQ_INT(v.u.list.items[0].u.i64, 27);
  CHECK(strcmp((const char *)v.u.list.items[1].u.bytes.data, "foo") == 0);
  hs_buf b;
  hs_buf_init(&b);
  CHECK_OK(hs_avro_encode(root, &v, &b, &err), &err);
  CHECK(b.len == sizeof bytes && memcmp(b.data, bytes, sizeof bytes) == 0);
  for (size_t cut = 0; cut < sizeof bytes; cut++) {
    pos = 0;
    CHECK_EQ_INT(hs_avro_decode(root, NULL, bytes, cut, &pos, &arena, &v, NULL), HS_ERR_CORRUPT);
  }
  hs_buf_free(&b);
  hs_avro_schema_free(s);

  /* Arrays: the spec's {3, 27} is 04 06 36 00; a negative count carries the
   * block's byte size: -2, 2 bytes, 3, 27, then a second block of one. */
  s = parse("{\"type\":\"array\",\"items\":\"long\"}");
  if (s == NULL) return;
  root = hs_avro_schema_root(s);
  const uint8_t arr[] = {0x04, 0x06, 0x36, 0x00};
  const uint8_t neg[] = {0x03, 0x04, 0x06, 0x36, 0x02, 0x02, 0x00};
  pos = 0;
  CHECK_OK(hs_avro_decode(root, NULL, arr, sizeof arr, &pos, &arena, &v, &err), &err);
  CHECK(v.u.list.count == 2 && v.u.list.items[0].u.i64 == 3 && v.u.list.items[1].u.i64 == 27);
  pos = 0;
  CHECK_OK(hs_avro_decode(root, NULL, neg, sizeof neg, &pos, &arena, &v, &err), &err);
  CHECK(v.u.list.count == 3 && v.u.list.items[2].u.i64 == 1);
  CHECK_EQ_INT(pos, sizeof neg);
  pos = 0;
  CHECK_OK(hs_avro_skip(root, neg, sizeof neg, &pos, &err), &err);
  CHECK_EQ_INT(pos, sizeof neg);
  /* A byte size that lies about its items. */
  const uint8_t lie[] = {0x03, 0x02, 0x06, 0x36, 0x00};
  pos = 0;
  CHECK_EQ_INT(hs_avro_decode(root, NULL, lie, sizeof lie, &pos, &arena, &v, NULL), HS_ERR_CORRUPT);
  /* A count far beyond the bytes left fails before allocating. */
  const uint8_t huge[] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  pos = 0;
  err = (hs_error){0};
  CHECK_EQ_INT(hs_avro_decode(root, NULL, huge, sizeof huge, &pos, &arena, &v, &err),
               HS_ERR_CORRUPT);
  CHECK(strstr(err.message, "exceeds") != NULL);
  hs_avro_schema_free(s);

  /* Arrays of null cost no bytes per item: capped. */
  s = parse("{\"type\":\"array\",\"items\":\"null\"}");
  if (s == NULL) return;
  pos = 0;
  CHECK_EQ_INT(
      hs_avro_decode(hs_avro_schema_root(s), NULL, huge, sizeof huge, &pos, &arena, &v, NULL),
      HS_ERR_CORRUPT);
  const uint8_t few[] = {0x08, 0x00};
  pos = 0;
  CHECK_OK(hs_avro_decode(hs_avro_schema_root(s), NULL, few, sizeof few, &pos, &arena, &v, &err),
           &err);
  CHECK_EQ_INT(v.u.list.count, 4);
  hs_avro_schema_free(s);

  /* Union index out of range; boolean byte 2; int out of range. */
  s = parse("[\"null\",\"boolean\",\"int\"]");
  if (s == NULL) return;
  root = hs_avro_schema_root(s);
  const uint8_t bad_union[] = {0x06};
  const uint8_t bad_bool[] = {0x02, 0x02};
  const uint8_t big_int[] = {0x04, 0xfe, 0xff, 0xff, 0xff, 0x1f};
  pos = 0;
  CHECK_EQ_INT(hs_avro_decode(root, NULL, bad_union, 1, &pos, &arena, &v, NULL), HS_ERR_CORRUPT);
  pos = 0;
  CHECK_EQ_INT(hs_avro_decode(root, NULL, bad_bool, 2, &pos, &arena, &v, NULL), HS_ERR_CORRUPT);
  pos = 0;
  CHECK_EQ_INT(hs_avro_decode(root, NULL, big_int, sizeof big_int, &pos, &arena, &v, NULL),
               HS_ERR_CORRUPT);
  hs_avro_schema_free(s);
  hs_arena_reset(&arena);
}

static void test_sample_roundtrip(void) {
  hs_avro_schema *s = parse(sample_schema);
  if (s == NULL) return;
  const hs_avro_node *root = hs_avro_schema_root(s);
  hs_arena arena;
  hs_arena_init(&arena);
  hs_error err = {0};
  for (int i = 0; i < 50; i++) {
    json_t *j = sample_json(i);
    hs_avro_value v, back;
    err = (hs_error){0};
    CHECK_OK(hs_avro_value_from_json(root, j, &arena, &v, &err), &err);
    hs_buf b;
    hs_buf_init(&b);
    CHECK_OK(hs_avro_encode(root, &v, &b, &err), &err);
    size_t pos = 0;
    CHECK_OK(hs_avro_decode(root, NULL, b.data, b.len, &pos, &arena, &back, &err), &err);
    CHECK_EQ_INT(pos, b.len);
    pos = 0;
    CHECK_OK(hs_avro_skip(root, b.data, b.len, &pos, &err), &err);
    CHECK_EQ_INT(pos, b.len);
    json_t *x = NULL, *y = NULL;
    CHECK_OK(hs_avro_value_to_json(root, &v, &x, &err), &err);
    CHECK_OK(hs_avro_value_to_json(root, &back, &y, &err), &err);
    CHECK(x && y && json_equal(x, y));
    json_decref(x);
    json_decref(y);
    json_decref(j);
    hs_buf_free(&b);
  }
  /* A value that does not fit the schema is refused by the encoder. */
  hs_avro_value bad = {.type = HS_AVRO_LONG};
  hs_buf b;
  hs_buf_init(&b);
  CHECK_EQ_INT(hs_avro_encode(root, &bad, &b, NULL), HS_ERR_SCHEMA);
  CHECK_EQ_INT(b.len, 0);
  hs_buf_free(&b);
  hs_arena_reset(&arena);
  hs_avro_schema_free(s);
}

/* --------------------------------------------------------- resolution */

static void test_resolution(void) {
  hs_avro_schema *w = parse(
      "{\"type\":\"record\",\"name\":\"r1\",\"fields\":["
      "{\"name\":\"a\",\"type\":\"int\",\"field-id\":1},"
      "{\"name\":\"gone\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
      "{\"name\":\"b\",\"type\":\"string\"},"
      "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"X\",\"Y\",\"Z\"]}}"
      ","
      "{\"name\":\"c\",\"type\":[\"null\",\"float\"]},"
      "{\"name\":\"n\",\"type\":{\"type\":\"record\",\"name\":\"in\",\"fields\":["
      "{\"name\":\"p\",\"type\":\"int\"}]}}]}");
  hs_avro_schema *r = parse(
      "{\"type\":\"record\",\"name\":\"renamed\",\"fields\":["
      "{\"name\":\"c\",\"type\":[\"null\",\"double\"]},"
      "{\"name\":\"a\",\"type\":\"long\"},"
      "{\"name\":\"b\",\"type\":\"bytes\"},"
      "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"Z\",\"Y\",\"U\"],"
      "\"default\":\"U\"}},"
      "{\"name\":\"d\",\"type\":\"string\",\"default\":\"dflt\"},"
      "{\"name\":\"o\",\"type\":[\"null\",\"int\"],\"default\":null},"
      "{\"name\":\"n\",\"type\":{\"type\":\"record\",\"name\":\"in2\",\"fields\":["
      "{\"name\":\"p\",\"type\":\"double\"},"
      "{\"name\":\"q\",\"type\":{\"type\":\"map\",\"values\":\"int\"},\"default\":{\"k\":5}}]}}]}");
  if (w == NULL || r == NULL) return;
  const hs_avro_node *wn = hs_avro_schema_root(w), *rn = hs_avro_schema_root(r);
  hs_error err = {0};
  CHECK_OK(hs_avro_resolve_check(wn, rn, &err), &err);
  hs_arena arena;
  hs_arena_init(&arena);
  const char *rows[] = {
      "{\"a\":7,\"gone\":[\"x\",\"y\"],\"b\":\"hi\",\"e\":\"X\",\"c\":1.5,\"n\":{\"p\":3}}",
      "{\"a\":-8,\"gone\":[],\"b\":\"\",\"e\":\"Z\",\"c\":null,\"n\":{\"p\":-1}}"};
  const char *want[] = {
      "{\"a\":7,\"b\":\"6869\",\"c\":1.5,\"d\":\"dflt\",\"e\":\"U\",\"n\":{\"p\":3.0,\"q\":{\"k\":"
      "5}},"
      "\"o\":null}",
      "{\"a\":-8,\"b\":\"\",\"c\":null,\"d\":\"dflt\",\"e\":\"Z\",\"n\":{\"p\":-1.0,\"q\":{\"k\":5}"
      "},"
      "\"o\":null}"};
  for (int i = 0; i < 2; i++) {
    json_t *j = json_loads(rows[i], 0, NULL);
    hs_avro_value v, back;
    CHECK_OK(hs_avro_value_from_json(wn, j, &arena, &v, &err), &err);
    hs_buf b;
    hs_buf_init(&b);
    CHECK_OK(hs_avro_encode(wn, &v, &b, &err), &err);
    size_t pos = 0;
    CHECK_OK(hs_avro_decode(wn, rn, b.data, b.len, &pos, &arena, &back, &err), &err);
    CHECK_EQ_INT(pos, b.len);
    json_t *got = NULL;
    CHECK_OK(hs_avro_value_to_json(rn, &back, &got, &err), &err);
    char *gs = got ? dump(got) : NULL;
    CHECK(gs && strcmp(gs, want[i]) == 0);
    if (gs && strcmp(gs, want[i]) != 0)
      fprintf(stderr, "  resolved %s\n  wanted   %s\n", gs, want[i]);
    free(gs);
    json_decref(got);
    json_decref(j);
    hs_buf_free(&b);
  }
  /* A reader field with no default and no writer field cannot resolve. */
  hs_avro_schema *r2 =
      parse("{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"zz\",\"type\":\"int\"}]}");
  err = (hs_error){0};
  if (r2) CHECK_EQ_INT(hs_avro_resolve_check(wn, hs_avro_schema_root(r2), &err), HS_ERR_SCHEMA);
  CHECK(strstr(err.message, "zz") != NULL);
  /* Nor can a string be read as an int. */
  hs_avro_schema *r3 =
      parse("{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"b\",\"type\":\"int\"}]}");
  if (r3) CHECK_EQ_INT(hs_avro_resolve_check(wn, hs_avro_schema_root(r3), NULL), HS_ERR_SCHEMA);
  hs_avro_schema_free(r2);
  hs_avro_schema_free(r3);
  hs_arena_reset(&arena);
  hs_avro_schema_free(w);
  hs_avro_schema_free(r);
}

/* ---------------------------------------------------------- container */

static const uint8_t fixed_sync[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static hs_status write_sample(const hs_avro_schema *s, hs_avro_codec codec, int n_rows,
                              size_t per_block, hs_buf *out, hs_error *err) {
  static const char spec[] = "[{\"name\":\"bucket\",\"transform\":\"bucket[4]\"}]";
  hs_avro_meta_entry meta[] = {
      {"schema", (const uint8_t *)"{\"type\":\"struct\"}", 17},
      {"partition-spec", (const uint8_t *)spec, sizeof spec - 1},
      {"format-version", (const uint8_t *)"2", 1},
      {"content", (const uint8_t *)"data", 4},
  };
  hs_avro_writer_options opts = {
      .codec = codec, .meta = meta, .n_meta = 4, .block_count_max = per_block, .sync = fixed_sync};
  hs_avro_writer *w = NULL;
  hs_status st = hs_avro_writer_open(s, &opts, out, NULL, &w, err);
  if (st != HS_OK) return st;
  hs_arena arena;
  hs_arena_init(&arena);
  const hs_avro_node *root = hs_avro_schema_root(s);
  for (int i = 0; i < n_rows && st == HS_OK; i++) {
    json_t *j = sample_json(i);
    hs_avro_value v;
    st = hs_avro_value_from_json(root, j, &arena, &v, err);
    if (st == HS_OK) st = hs_avro_writer_append(w, &v, err);
    json_decref(j);
    hs_arena_reset(&arena);
  }
  if (st == HS_OK) return hs_avro_writer_close(w, err);
  hs_avro_writer_free(w);
  return st;
}

/* Read every datum; returns the status and the number read. */
static hs_status read_all(const uint8_t *data, size_t len, const hs_avro_schema *reader, int *n_out,
                          hs_error *err) {
  hs_avro_reader *r = NULL;
  *n_out = 0;
  hs_status st = hs_avro_reader_open(data, len, reader, &r, err);
  hs_arena arena;
  hs_arena_init(&arena);
  bool has = st == HS_OK;
  while (st == HS_OK && has) {
    hs_avro_value v;
    st = hs_avro_reader_next(r, &arena, &v, &has, err);
    if (st == HS_OK && has) (*n_out)++;
    hs_arena_reset(&arena);
  }
  hs_avro_reader_free(r);
  return st;
}

static void test_container(hs_avro_codec codec) {
  hs_avro_schema *s = parse(sample_schema);
  if (s == NULL) return;
  hs_error err = {0};
  hs_buf file;
  hs_buf_init(&file);
  const int n_rows = 500;
  CHECK_OK(write_sample(s, codec, n_rows, 7, &file, &err), &err);

  hs_avro_reader *r = NULL;
  CHECK_OK(hs_avro_reader_open(file.data, file.len, NULL, &r, &err), &err);
  if (r == NULL) return;
  CHECK_EQ_INT(hs_avro_reader_codec(r), codec);
  size_t n;
  const uint8_t *fv = hs_avro_reader_meta_get(r, "format-version", &n);
  CHECK(fv && n == 1 && fv[0] == '2');
  CHECK(hs_avro_reader_meta_get(r, "nope", &n) == NULL && n == 0);
  CHECK_EQ_INT(hs_avro_reader_meta_count(r), 6);
  const hs_avro_node *wroot = hs_avro_schema_root(hs_avro_reader_writer_schema(r));
  int64_t id = -1;
  CHECK_OK(hs_avro_field_attr_int(&wroot->fields[16], "field-id", &id), &err);
  CHECK_EQ_INT(id, 102);
  CHECK_OK(hs_avro_field_attr_int(&wroot->fields[16].type->fields[0], "field-id", &id), &err);
  CHECK_EQ_INT(id, 1000);
  hs_arena arena;
  hs_arena_init(&arena);
  int count = 0;
  bool has = true;
  while (has) {
    hs_avro_value v;
    hs_status st = hs_avro_reader_next(r, &arena, &v, &has, &err);
    CHECK_OK(st, &err);
    if (st != HS_OK || !has) break;
    json_t *want = sample_json(count), *got = NULL, *want_v = NULL;
    hs_avro_value wv;
    CHECK_OK(hs_avro_value_from_json(wroot, want, &arena, &wv, &err), &err);
    CHECK_OK(hs_avro_value_to_json(wroot, &wv, &want_v, &err), &err);
    CHECK_OK(hs_avro_value_to_json(wroot, &v, &got, &err), &err);
    CHECK(want_v && got && json_equal(want_v, got));
    json_decref(want);
    json_decref(want_v);
    json_decref(got);
    hs_arena_reset(&arena);
    count++;
  }
  CHECK_EQ_INT(count, n_rows);
  hs_avro_reader_free(r);

  /* The same file read through a reader schema that drops most fields. */
  hs_avro_schema *narrow = parse(
      "{\"type\":\"record\",\"name\":\"x\",\"fields\":[{\"name\":\"path\",\"type\":\"string\"},"
      "{\"name\":\"extra\",\"type\":\"long\",\"default\":-1}]}");
  int got_n = 0;
  if (narrow) CHECK_OK(read_all(file.data, file.len, narrow, &got_n, &err), &err);
  CHECK_EQ_INT(got_n, n_rows);
  hs_avro_schema_free(narrow);

  /* Sync-marker damage is reported with its offset. */
  uint8_t *copy = hs_malloc(file.len);
  memcpy(copy, file.data, file.len);
  copy[file.len - 3] ^= 0xff;
  err = (hs_error){0};
  CHECK_EQ_INT(read_all(copy, file.len, NULL, &got_n, &err), HS_ERR_CORRUPT);
  CHECK(strstr(err.message, "sync marker mismatch at byte") != NULL);
  hs_free(copy);
  hs_buf_free(&file);
  hs_avro_schema_free(s);
}

/* Truncate a small file at every byte and flip every byte: errors or
 * clean reads, never a crash (this is the ASan test). */
static void test_truncation_and_flips(hs_avro_codec codec) {
  hs_avro_schema *s = parse(sample_schema);
  if (s == NULL) return;
  hs_error err = {0};
  hs_buf file;
  hs_buf_init(&file);
  CHECK_OK(write_sample(s, codec, 6, 2, &file, &err), &err);
  int n = 0, boundaries = 0;
  for (size_t cut = 0; cut < file.len; cut++) {
    /* A cut exactly after a block's sync marker is a valid, shorter file. */
    hs_status st = read_all(file.data, cut, NULL, &n, NULL);
    CHECK(st != HS_OK || n < 6);
    if (st == HS_OK) boundaries++;
  }
  CHECK_EQ_INT(boundaries, 3); /* after the header and after blocks 1 and 2 */
  CHECK_OK(read_all(file.data, file.len, NULL, &n, &err), &err);
  CHECK_EQ_INT(n, 6);
  uint8_t *copy = hs_malloc(file.len);
  for (size_t at = 0; at < file.len; at++) {
    for (int bit = 0; bit < 8; bit += 3) {
      memcpy(copy, file.data, file.len);
      copy[at] ^= (uint8_t)(1u << bit);
      (void)read_all(copy, file.len, NULL, &n, NULL);
    }
  }
  hs_free(copy);
  hs_buf_free(&file);
  hs_avro_schema_free(s);
}

static void test_writer_errors(void) {
  hs_avro_schema *s = parse("\"long\"");
  if (s == NULL) return;
  hs_buf out;
  hs_buf_init(&out);
  hs_avro_writer *w = NULL;
  hs_avro_meta_entry bad = {"avro.codec", (const uint8_t *)"x", 1};
  hs_avro_writer_options opts = {.meta = &bad, .n_meta = 1};
  CHECK_EQ_INT(hs_avro_writer_open(s, &opts, &out, NULL, &w, NULL), HS_ERR_INVALID_ARG);
  CHECK_EQ_INT(hs_avro_writer_open(s, NULL, NULL, NULL, &w, NULL), HS_ERR_INVALID_ARG);
  hs_error err = {0};
  CHECK_OK(hs_avro_writer_open(s, NULL, &out, NULL, &w, &err), &err);
  hs_avro_value v = {.type = HS_AVRO_STRING};
  CHECK_EQ_INT(hs_avro_writer_append(w, &v, NULL), HS_ERR_SCHEMA);
  v = (hs_avro_value){.type = HS_AVRO_LONG, .u.i64 = -5};
  CHECK_OK(hs_avro_writer_append(w, &v, &err), &err);
  CHECK_OK(hs_avro_writer_close(w, &err), &err);
  int n = 0;
  CHECK_OK(read_all(out.data, out.len, NULL, &n, &err), &err);
  CHECK_EQ_INT(n, 1);
  /* An empty file (header only) has no datums; an unknown codec fails. */
  hs_buf_free(&out);
  CHECK_OK(hs_avro_writer_open(s, NULL, &out, NULL, &w, &err), &err);
  CHECK_OK(hs_avro_writer_close(w, &err), &err);
  CHECK_OK(read_all(out.data, out.len, NULL, &n, &err), &err);
  CHECK_EQ_INT(n, 0);
  hs_buf_free(&out);
  hs_avro_schema_free(s);
}

/* The writer over a file sink writes the same bytes as over a buffer. */
static void test_writer_sink(void) {
  hs_avro_schema *s = parse(sample_schema);
  if (s == NULL) return;
  hs_error err = {0};
  char path[] = "/tmp/hs_test_avro_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  close(fd);
  hs_sink *sink = NULL;
  CHECK_OK(hs_sink_open_file(path, &sink, &err), &err);
  hs_avro_writer *w = NULL;
  hs_avro_writer_options opts = {.codec = HS_AVRO_CODEC_DEFLATE, .sync = fixed_sync};
  if (sink) CHECK_OK(hs_avro_writer_open(s, &opts, NULL, sink, &w, &err), &err);
  hs_buf mem;
  hs_buf_init(&mem);
  hs_avro_writer *wm = NULL;
  CHECK_OK(hs_avro_writer_open(s, &opts, &mem, NULL, &wm, &err), &err);
  hs_arena arena;
  hs_arena_init(&arena);
  for (int i = 0; w && wm && i < 40; i++) {
    json_t *j = sample_json(i);
    hs_avro_value v;
    CHECK_OK(hs_avro_value_from_json(hs_avro_schema_root(s), j, &arena, &v, &err), &err);
    CHECK_OK(hs_avro_writer_append(w, &v, &err), &err);
    CHECK_OK(hs_avro_writer_append(wm, &v, &err), &err);
    json_decref(j);
  }
  CHECK_OK(hs_avro_writer_close(w, &err), &err);
  CHECK_OK(hs_avro_writer_close(wm, &err), &err);
  if (sink) CHECK_OK(hs_sink_close(sink, &err), &err);
  hs_source *src = NULL;
  CHECK_OK(hs_source_open_file(path, &src, &err), &err);
  if (src) {
    CHECK_EQ_INT(hs_source_size(src), mem.len);
    uint8_t *data = hs_malloc(mem.len);
    CHECK_OK(hs_source_read(src, 0, mem.len, data, &err), &err);
    CHECK(memcmp(data, mem.data, mem.len) == 0);
    hs_free(data);
  }
  hs_source_unref(src);
  unlink(path);
  hs_arena_reset(&arena);
  hs_buf_free(&mem);
  hs_avro_schema_free(s);
}

/* Replay the fuzz seeds and saved crash inputs (ctest runs from the repo
 * root): each must read without a crash; seeds must read cleanly. */
static void replay_dir(const char *dir, bool must_succeed) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) continue;
    hs_buf file;
    hs_buf_init(&file);
    uint8_t chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) hs_buf_append(&file, chunk, got);
    fclose(f);
    int n = 0;
    hs_error err = {0};
    hs_status st = read_all(file.data, file.len, NULL, &n, &err);
    if (must_succeed) {
      CHECK_OK(st, &err);
      CHECK(n > 0);
    }
    hs_buf_free(&file);
  }
  closedir(d);
}

/* ---------------------------------------------------- interop modes */

static int mode_write(const char *path) {
  const char *c = getenv("HS_AVRO_CODEC");
  hs_avro_codec codec = c && strcmp(c, "deflate") == 0 ? HS_AVRO_CODEC_DEFLATE : HS_AVRO_CODEC_NULL;
  hs_avro_schema *s = NULL;
  hs_error err = {0};
  hs_buf file;
  hs_buf_init(&file);
  hs_status st = hs_avro_schema_parse(sample_schema, strlen(sample_schema), &s, &err);
  const char *rows = getenv("HS_AVRO_ROWS");
  int n_rows = rows ? atoi(rows) : 100;
  if (st == HS_OK) st = write_sample(s, codec, n_rows, 9, &file, &err);
  if (st == HS_OK) {
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(file.data, 1, file.len, f) != file.len) st = HS_ERR_IO;
    if (f) fclose(f);
  }
  hs_buf_free(&file);
  hs_avro_schema_free(s);
  if (st != HS_OK) fprintf(stderr, "write %s: %s: %s\n", path, hs_status_str(st), err.message);
  return st == HS_OK ? 0 : 1;
}

static int mode_read(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return 1;
  hs_buf file;
  hs_buf_init(&file);
  uint8_t chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) hs_buf_append(&file, chunk, got);
  fclose(f);
  hs_error err = {0};
  hs_avro_reader *r = NULL;
  hs_status st = hs_avro_reader_open(file.data, file.len, NULL, &r, &err);
  if (st == HS_OK) {
    char *schema = NULL;
    st = hs_avro_schema_to_json(hs_avro_reader_writer_schema(r), &schema, &err);
    json_t *head = json_object(), *meta = json_object();
    for (size_t i = 0; i < hs_avro_reader_meta_count(r); i++) {
      const hs_avro_meta_entry *e = hs_avro_reader_meta_at(r, i);
      json_object_set_new(meta, e->key, json_stringn((const char *)e->value, e->len));
    }
    json_object_set_new(head, "schema", json_string(schema ? schema : ""));
    json_object_set_new(head, "meta", meta);
    char *line = json_dumps(head, JSON_COMPACT);
    printf("%s\n", line);
    free(line);
    json_decref(head);
    hs_free(schema);
  }
  hs_arena arena;
  hs_arena_init(&arena);
  bool has = st == HS_OK;
  while (st == HS_OK && has) {
    hs_avro_value v;
    st = hs_avro_reader_next(r, &arena, &v, &has, &err);
    if (st != HS_OK || !has) break;
    json_t *j = NULL;
    st = hs_avro_value_to_json(hs_avro_reader_datum_schema(r), &v, &j, &err);
    if (st == HS_OK) {
      char *line = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
      printf("%s\n", line);
      free(line);
    }
    json_decref(j);
    hs_arena_reset(&arena);
  }
  hs_avro_reader_free(r);
  hs_buf_free(&file);
  if (st != HS_OK) fprintf(stderr, "read %s: %s: %s\n", path, hs_status_str(st), err.message);
  return st == HS_OK ? 0 : 1;
}

int main(void) {
  const char *wpath = getenv("HS_AVRO_WRITE"), *rpath = getenv("HS_AVRO_READ");
  if (wpath) return mode_write(wpath);
  if (rpath) return mode_read(rpath);
  test_schema_roundtrip();
  test_schema_recursive_and_namespaces();
  test_schema_errors();
  test_varint_vectors();
  test_binary_vectors();
  test_sample_roundtrip();
  test_resolution();
  test_container(HS_AVRO_CODEC_NULL);
  test_container(HS_AVRO_CODEC_DEFLATE);
  test_truncation_and_flips(HS_AVRO_CODEC_NULL);
  test_truncation_and_flips(HS_AVRO_CODEC_DEFLATE);
  test_writer_errors();
  test_writer_sink();
  replay_dir("fuzz/corpus/avro", true);
  replay_dir("fuzz/regress/avro", false);
  return hs_test_finish("test_avro");
}

/*
 * test_ipc_schema.c — Arrow IPC Schema messages and base64.
 *
 * Round trips of schemas covering every hs_arrow_type_id (nested, with
 * dictionaries and metadata), golden messages written by pyarrow, clear
 * errors for types we do not model, and hostile bytes: every truncation,
 * random bit flips, and a hand-built message whose shared sub-objects would
 * expand to billions of fields without the decoder's budget. Run it under
 * -DHS_SANITIZE=address,undefined.
 *
 * Filter mode (used by tests/python/test_ipc_schema.py with pyarrow as the
 * oracle): with HS_IPC_ROUNDTRIP=1 the program reads base64 messages, one
 * per line, on stdin; decodes each, re-encodes it and prints the base64 of
 * the result, or "ERROR: <status>: <message>", one line per input.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "arrow/ipc.h"
#include "hs_test.h"

/* ------------------------------------------------------------ helpers */

static bool metadata_equal(const char *a, const char *b) {
  int64_t na = hs_arrow_metadata_size(a), nb = hs_arrow_metadata_size(b);
  /* An empty metadata list and no metadata mean the same. */
  if (na == 4 && b == NULL) return memcmp(a, "\0\0\0\0", 4) == 0;
  if (nb == 4 && a == NULL) return memcmp(b, "\0\0\0\0", 4) == 0;
  return na == nb && (na == 0 || memcmp(a, b, (size_t)na) == 0);
}

/* Structural equality as IPC can carry it: names, formats, the flags IPC
 * stores, metadata, children, dictionaries (whose own name/flags/metadata
 * IPC does not carry). */
static bool schema_equal(const struct ArrowSchema *a, const struct ArrowSchema *b, int role) {
  const int64_t kept =
      ARROW_FLAG_NULLABLE | ARROW_FLAG_DICTIONARY_ORDERED | ARROW_FLAG_MAP_KEYS_SORTED;
  if (strcmp(a->format, b->format) != 0) {
    fprintf(stderr, "format %s != %s\n", a->format, b->format);
    return false;
  }
  if (role == 1) { /* a field */
    const char *na = a->name ? a->name : "", *nb = b->name ? b->name : "";
    if (strcmp(na, nb) != 0 || (a->flags & kept) != (b->flags & kept)) {
      fprintf(stderr, "field %s/%s flags %lld/%lld\n", na, nb, (long long)a->flags,
              (long long)b->flags);
      return false;
    }
  }
  if (role != 2 && !metadata_equal(a->metadata, b->metadata)) {
    fprintf(stderr, "metadata differs on '%s'\n", a->name ? a->name : "");
    return false;
  }
  if (a->n_children != b->n_children || (a->dictionary == NULL) != (b->dictionary == NULL)) {
    return false;
  }
  for (int64_t i = 0; i < a->n_children; i++) {
    if (!schema_equal(a->children[i], b->children[i], 1)) return false;
  }
  return a->dictionary == NULL || schema_equal(a->dictionary, b->dictionary, 2);
}

static hs_status encode(const struct ArrowSchema *s, hs_buf *out, hs_error *err) {
  hs_buf_init(out);
  return hs_arrow_ipc_schema_encode(s, out, err);
}

/* Decode the base64 text of a message. */
static hs_status decode_b64(const char *text, struct ArrowSchema *out, hs_error *err) {
  return hs_arrow_ipc_schema_decode_base64(text, strlen(text), out, err);
}

/* encode → decode → equal; encode again → the same bytes. */
static void check_roundtrip(const struct ArrowSchema *s) {
  hs_error err = {0};
  hs_buf a, b;
  struct ArrowSchema back = {0};
  CHECK_OK(encode(s, &a, &err), &err);
  CHECK(a.len % 8 == 0 && a.len >= 8);
  CHECK_OK(hs_arrow_ipc_schema_decode(a.data, a.len, &back, &err), &err);
  if (back.release != NULL) {
    CHECK(schema_equal(s, &back, 0));
    CHECK_OK(encode(&back, &b, &err), &err);
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    hs_buf_free(&b);
  }
  hs_arrow_schema_release(&back);
  hs_buf_free(&a);
}

static void set_meta(struct ArrowSchema *s, const char *k, const char *v) {
  const char *keys[] = {k}, *values[] = {v};
  hs_error err = {0};
  CHECK_OK(hs_arrow_schema_set_metadata(s, keys, values, 1, &err), &err);
}

static void init(struct ArrowSchema *s, const char *format, const char *name, int64_t flags,
                 int64_t n) {
  hs_error err = {0};
  CHECK_OK(hs_arrow_schema_init(s, format, name, flags, n, &err), &err);
}

/* ------------------------------------------------------------- base64 */

static void test_base64(void) {
  static const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  static const char *coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (int i = 0; i < 7; i++) {
    hs_buf b;
    hs_buf_init(&b);
    CHECK(hs_base64_encode((const uint8_t *)plain[i], strlen(plain[i]), &b));
    CHECK(b.len == strlen(coded[i]) && (b.len == 0 || memcmp(b.data, coded[i], b.len) == 0));
    hs_buf_free(&b);
    hs_error err = {0};
    CHECK_OK(hs_base64_decode(coded[i], strlen(coded[i]), &b, &err), &err);
    CHECK(b.len == strlen(plain[i]) && (b.len == 0 || memcmp(b.data, plain[i], b.len) == 0));
    hs_buf_free(&b);
  }
  static const char *bad[] = {"Zg=",    "Zh==", "Zm9=", "Z===", "====", "Zg==Zg==",
                              "Zm9v\n", "Zm 9", "Zm-9", "Zm_9", "=Zm9", "Zm=v"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hs_buf b;
    hs_buf_init(&b);
    hs_buf_append(&b, "x", 1);
    hs_error err = {0};
    CHECK_EQ_INT(hs_base64_decode(bad[i], strlen(bad[i]), &b, &err), HS_ERR_CORRUPT);
    CHECK(strstr(err.message, "base64") != NULL);
    CHECK(b.len == 1); /* unchanged on failure */
    hs_buf_free(&b);
  }
  uint64_t seed = 7;
  for (int round = 0; round < 500; round++) {
    uint8_t src[100];
    size_t n = hs_test_rand(&seed) % sizeof src;
    for (size_t i = 0; i < n; i++) src[i] = (uint8_t)hs_test_rand(&seed);
    hs_buf text, back;
    hs_buf_init(&text);
    hs_buf_init(&back);
    CHECK(hs_base64_encode(src, n, &text));
    hs_error err = {0};
    CHECK_OK(hs_base64_decode((const char *)text.data, text.len, &back, &err), &err);
    CHECK(back.len == n && (n == 0 || memcmp(back.data, src, n) == 0));
    hs_buf_free(&text);
    hs_buf_free(&back);
  }
}

/* ------------------------------------------------------------ schemas */

static const char *const flat_formats[] = {
    "n",          "b",       "c",      "C",    "s",       "S",
    "i",          "I",       "l",      "L",    "e",       "f",
    "g",          "z",       "Z",      "u",    "U",       "w:16",
    "w:1",        "d:38,10", "d:5,-2", "tdD",  "tdm",     "tts",
    "ttm",        "ttu",     "ttn",    "tss:", "tsm:UTC", "tsu:America/New_York",
    "tsn:+05:30", "tDs",     "tDm",    "tDu",  "tDn"};
#define N_FLAT (sizeof flat_formats / sizeof flat_formats[0])

/* A schema with every flat type plus every nested one. */
static void build_all_types(struct ArrowSchema *s) {
  const int64_t nul = ARROW_FLAG_NULLABLE;
  init(s, "+s", "", 0, (int64_t)N_FLAT + 8);
  set_meta(s, "pandas", "{\"x\": 1}");
  for (size_t i = 0; i < N_FLAT; i++) {
    char name[16];
    snprintf(name, sizeof name, "f%zu", i);
    init(s->children[i], flat_formats[i], name, i % 2 ? nul : 0, 0);
  }
  struct ArrowSchema **c = s->children + N_FLAT;
  init(c[0], "+w:768", "embedding", 0, 1); /* our vectors */
  init(c[0]->children[0], "f", "item", 0, 0);
  set_meta(c[0], "hs:metric", "cosine");
  init(c[1], "+l", "tags", nul, 1);
  init(c[1]->children[0], "u", "element", nul, 0);
  init(c[2], "+L", "big", nul, 1);
  init(c[2]->children[0], "+s", "item", nul, 2);
  init(c[2]->children[0]->children[0], "Z", "blob", nul, 0);
  init(c[2]->children[0]->children[1], "+w:0", "none", 0, 1);
  init(c[2]->children[0]->children[1]->children[0], "c", "item", nul, 0);
  init(c[3], "+m", "attrs", nul | ARROW_FLAG_MAP_KEYS_SORTED, 1);
  init(c[3]->children[0], "+s", "entries", 0, 2);
  init(c[3]->children[0]->children[0], "u", "key", 0, 0);
  init(c[3]->children[0]->children[1], "tsu:UTC", "value", nul, 0);
  init(c[4], "+s", "empty_struct", nul, 0);
  /* Dictionaries: ordered int8 → string, and uint32 → list<int64>. */
  hs_error err = {0};
  struct ArrowSchema dict;
  init(c[5], "c", "category", nul | ARROW_FLAG_DICTIONARY_ORDERED, 0);
  init(&dict, "u", NULL, nul, 0);
  CHECK_OK(hs_arrow_schema_set_dictionary(c[5], &dict, &err), &err);
  init(c[6], "I", "lists", 0, 0);
  init(&dict, "+l", NULL, nul, 1);
  init(dict.children[0], "l", "item", nul, 0);
  CHECK_OK(hs_arrow_schema_set_dictionary(c[6], &dict, &err), &err);
  /* Metadata with several pairs, empty strings and a NUL byte. */
  init(c[7], "g", "", nul, 0);
  const char *keys[] = {"a", "", "bin"}, *values[] = {"1", "", "x"};
  CHECK_OK(hs_arrow_schema_set_metadata(c[7], keys, values, 3, &err), &err);
  char *blob = (char *)c[7]->metadata; /* owned by c[7]; patch "x" into a NUL byte */
  blob[hs_arrow_metadata_size(blob) - 1] = '\0';
}

static void test_roundtrip(void) {
  struct ArrowSchema s;
  build_all_types(&s);
  check_roundtrip(&s);
  hs_arrow_schema_release(&s);

  init(&s, "+s", NULL, 0, 0); /* no fields, no metadata */
  check_roundtrip(&s);
  hs_arrow_schema_release(&s);

  /* 63 levels of struct nesting round trip; 65 is refused. */
  for (int levels = 63; levels <= 65; levels += 2) {
    init(&s, "+s", "", 0, 1);
    struct ArrowSchema *cur = s.children[0];
    for (int i = 0; i < levels; i++) {
      init(cur, i + 1 < levels ? "+s" : "i", "n", 0, i + 1 < levels ? 1 : 0);
      if (i + 1 < levels) cur = cur->children[0];
    }
    if (levels == 63) {
      check_roundtrip(&s);
    } else {
      hs_buf b;
      hs_error err = {0};
      CHECK_EQ_INT(encode(&s, &b, &err), HS_ERR_UNSUPPORTED);
      CHECK(strstr(err.message, "deeper") != NULL);
      hs_buf_free(&b);
    }
    hs_arrow_schema_release(&s);
  }
}

/* pyarrow 26: schema.serialize() of
 *   id int64 not null {k: v}, vec fixed_size_list<item: float>[4],
 *   ts timestamp[s, tz=Europe/Paris], d dictionary<int16, string, ordered>,
 *   m map<string, int32, keys_sorted>, dec decimal128(10, 3),
 *   s struct<a: large_string, b: time32[s]>;  schema metadata {schema-level: yes} */
static const char golden[] =
    "/////3gDAAAQAAAAAAAKAA4ABgAFAAgACgAAAAABBAAQAAAAAAAKAAwAAAAEAAgACgAAADgAAAAEAAAAAQAAAAQAAAD8"
    "/P//EAAAAAQAAAADAAAAeWVzAAwAAABzY2hlbWEtbGV2ZWwAAAAABwAAAKwCAAAkAgAA3AEAAIwBAAC0AAAAhAAAAAQA"
    "AADA/f//AAABDRgAAAAcAAAABAAAAAIAAABAAAAAEAAAAAEAAABzAAAAaP7//+z9//8AAAEJEAAAABgAAAAEAAAAAAAA"
    "AAEAAABiAAYACAAGAAYAAAAAAAAAGP7//wAAARQQAAAAFAAAAAQAAAAAAAAAAQAAAGEAAAC4/v//PP7//wAAAQcQAAAA"
    "FAAAAAQAAAAAAAAAAwAAAGRlYwDg/f//CgAAAAMAAABo/v//AAABERQAAAAcAAAABAAAAAEAAAAYAAAAAQAAAG0ABgAI"
    "AAcABgAAAAAAAAGg////AAAADRgAAAAgAAAABAAAAAIAAABYAAAAFAAAAAcAAABlbnRyaWVzAET////I/v//AAABAhAA"
    "AAAYAAAABAAAAAAAAAAFAAAAdmFsdWUAAABM/v//AAAAASAAAAAQABQACAAAAAcADAAAABAAEAAAAAAAAAUQAAAAFAAA"
    "AAQAAAAAAAAAAwAAAGtleQCo////EAAYAAgABgAHAAwAEAAUABAAAAAAAAEFFAAAADwAAAAcAAAABAAAAAAAAAABAAAA"
    "ZAAKAAwAAAAIAAcACgAAAAAAAAEEAAAA1P7//wAAAAEQAAAABAAEAAQAAACI////AAABChAAAAAcAAAABAAAAAAAAAAC"
    "AAAAdHMAAAgACAAAAAQACAAAAAQAAAAMAAAARXVyb3BlL1BhcmlzAAAAAMz///8AAAEQFAAAACAAAAAEAAAAAQAAACwA"
    "AAADAAAAdmVjAAAABgAIAAQABgAAAAQAAAAQABQACAAGAAcADAAAABAAEAAAAAAAAQMQAAAAHAAAAAQAAAAAAAAABAAA"
    "AGl0ZW0AAAYABgAEAAYAAAABABIAGAAIAAAABwAMAAAAEAAUABIAAAAAAAACFAAAAEwAAAAIAAAAEAAAAAAAAAACAAAA"
    "aWQAAAEAAAAMAAAACAAMAAQACAAIAAAAEAAAAAQAAAABAAAAdgAAAAEAAABrAAAACAAMAAgABwAIAAAAAAAAAUAAAAA=";

/* pyarrow: a int8, u dense_union<x: int32>. */
static const char golden_union[] =
    "/////+gAAAAQAAAAAAAKAAwABgAFAAgACgAAAAABBAAMAAAACAAIAAAABAAIAAAABAAAAAIAAACEAAAABAAAAJT///8A"
    "AAEOFAAAACAAAAAEAAAAAQAAACgAAAABAAAAdQAAAAgADAAGAAgACAAAAAAAAQAEAAAAAQAAAAAAAADU////AAABAhAA"
    "AAAUAAAABAAAAAAAAAABAAAAeAAAAMT///8AAAABIAAAABAAFAAIAAYABwAMAAAAEAAQAAAAAAABAhAAAAAcAAAABAAA"
    "AAAAAAABAAAAYQAAAAgADAAIAAcACAAAAAAAAAEIAAAA";
/* pyarrow: s struct<iv: month_day_nano_interval>. */
static const char golden_interval[] =
    "/////6AAAAAQAAAAAAAKAAwABgAFAAgACgAAAAABBAAMAAAACAAIAAAABAAIAAAABAAAAAEAAAAEAAAA1P///wAAAQ0U"
    "AAAAHAAAAAQAAAABAAAAJAAAAAEAAABzAAAABAAEAAQAAAAQABQACAAGAAcADAAAABAAEAAAAAAAAQsQAAAAHAAAAAQA"
    "AAAAAAAAAgAAAGl2AAAAAAYACAAGAAYAAAAAAAIA";

static void test_golden(void) {
  hs_error err = {0};
  struct ArrowSchema s = {0};
  CHECK_OK(decode_b64(golden, &s, &err), &err);
  if (s.release == NULL) return;
  CHECK_EQ_INT(s.n_children, 7);
  int32_t len;
  const char *v = hs_arrow_metadata_get(s.metadata, "schema-level", &len);
  CHECK(v != NULL && len == 3 && memcmp(v, "yes", 3) == 0);
  struct ArrowSchema **f = s.children;
  CHECK(strcmp(f[0]->name, "id") == 0 && strcmp(f[0]->format, "l") == 0);
  CHECK(!(f[0]->flags & ARROW_FLAG_NULLABLE));
  v = hs_arrow_metadata_get(f[0]->metadata, "k", &len);
  CHECK(v != NULL && len == 1 && v[0] == 'v');
  CHECK(strcmp(f[1]->format, "+w:4") == 0 && strcmp(f[1]->children[0]->format, "f") == 0);
  CHECK(strcmp(f[1]->children[0]->name, "item") == 0 && (f[1]->flags & ARROW_FLAG_NULLABLE));
  CHECK(strcmp(f[2]->format, "tss:Europe/Paris") == 0);
  CHECK(strcmp(f[3]->format, "s") == 0 && f[3]->dictionary != NULL);
  CHECK(f[3]->dictionary != NULL && strcmp(f[3]->dictionary->format, "u") == 0);
  CHECK(f[3]->flags & ARROW_FLAG_DICTIONARY_ORDERED);
  CHECK(strcmp(f[4]->format, "+m") == 0 && (f[4]->flags & ARROW_FLAG_MAP_KEYS_SORTED));
  CHECK(f[4]->n_children == 1 && strcmp(f[4]->children[0]->format, "+s") == 0);
  CHECK(strcmp(f[4]->children[0]->children[0]->format, "u") == 0);
  CHECK(strcmp(f[4]->children[0]->children[1]->format, "i") == 0);
  CHECK(strcmp(f[5]->format, "d:10,3") == 0);
  CHECK(strcmp(f[6]->format, "+s") == 0 && f[6]->n_children == 2);
  CHECK(strcmp(f[6]->children[0]->format, "U") == 0);
  CHECK(strcmp(f[6]->children[1]->format, "tts") == 0);
  check_roundtrip(&s);
  hs_arrow_schema_release(&s);

  hs_error e1 = {0}, e2 = {0};
  CHECK_EQ_INT(decode_b64(golden_union, &s, &e1), HS_ERR_UNSUPPORTED);
  CHECK(strstr(e1.message, "'u'") != NULL);
  CHECK(s.release == NULL);
  CHECK_EQ_INT(decode_b64(golden_interval, &s, &e2), HS_ERR_UNSUPPORTED);
  CHECK(strstr(e2.message, "'s.iv'") != NULL);
}

static void test_encode_errors(void) {
  struct ArrowSchema s;
  hs_buf b;
  hs_error err = {0};
  init(&s, "+s", "", 0, 1);
  init(s.children[0], "+s", "outer", 0, 1);
  init(s.children[0]->children[0], "vu", "view", 0, 0);
  hs_buf_init(&b);
  hs_buf_append(&b, "keep", 4);
  CHECK_EQ_INT(hs_arrow_ipc_schema_encode(&s, &b, &err), HS_ERR_UNSUPPORTED);
  CHECK(strstr(err.message, "outer.view") != NULL);
  CHECK(b.len == 4); /* out left at its length */
  hs_buf_free(&b);
  hs_arrow_schema_release(&s);

  hs_error e2 = {0};
  init(&s, "i", "", 0, 0);
  CHECK_EQ_INT(encode(&s, &b, &e2), HS_ERR_INVALID_ARG);
  hs_buf_free(&b);
  hs_arrow_schema_release(&s);

  hs_error e3 = {0};
  init(&s, "+s", "", 0, 1);
  init(s.children[0], "+m", "m", 0, 1);
  init(s.children[0]->children[0], "+s", "entries", 0, 1);
  init(s.children[0]->children[0]->children[0], "u", "key", 0, 0);
  CHECK_EQ_INT(encode(&s, &b, &e3), HS_ERR_SCHEMA);
  hs_buf_free(&b);
  hs_arrow_schema_release(&s);

  hs_error e4 = {0};
  init(&s, "+s", "", 0, 1);
  init(s.children[0], "+l", "list_without_child", 0, 0);
  CHECK_EQ_INT(encode(&s, &b, &e4), HS_ERR_SCHEMA);
  CHECK(strstr(e4.message, "list_without_child") != NULL);
  hs_buf_free(&b);
  hs_arrow_schema_release(&s);
}

/* ------------------------------------------------------------ hostile */

static void decode_must_not_crash(const uint8_t *p, size_t n) {
  struct ArrowSchema s;
  hs_error err = {0};
  hs_status st = hs_arrow_ipc_schema_decode(p, n, &s, &err);
  if (st == HS_OK) {
    hs_buf b; /* whatever decodes must encode */
    CHECK_OK(encode(&s, &b, &err), &err);
    hs_buf_free(&b);
    hs_arrow_schema_release(&s);
  } else {
    CHECK(s.release == NULL && err.message[0] != '\0');
  }
}

static void test_hostile(void) {
  struct ArrowSchema s;
  build_all_types(&s);
  hs_buf msg, gold;
  hs_error err = {0};
  CHECK_OK(encode(&s, &msg, &err), &err);
  hs_arrow_schema_release(&s);
  hs_buf_init(&gold);
  CHECK_OK(hs_base64_decode(golden, strlen(golden), &gold, &err), &err);
  hs_buf *inputs[] = {&msg, &gold};
  uint64_t seed = 42;
  const char *env = getenv("HS_TEST_FLIP_ITERS");
  long iters = env != NULL ? atol(env) : 3000;
  for (int k = 0; k < 2; k++) {
    hs_buf *in = inputs[k];
    /* Every truncation (a copy of exactly that size, so ASan sees overreads). */
    for (size_t n = 0; n < in->len; n++) {
      uint8_t *copy = hs_malloc(n ? n : 1);
      memcpy(copy, in->data, n);
      decode_must_not_crash(copy, n);
      hs_free(copy);
    }
    uint8_t *copy = hs_malloc(in->len);
    for (long it = 0; it < iters; it++) {
      memcpy(copy, in->data, in->len);
      int flips = 1 + (int)(hs_test_rand(&seed) % 4);
      for (int f = 0; f < flips; f++) {
        size_t at = hs_test_rand(&seed) % in->len;
        if (hs_test_rand(&seed) % 3 == 0) {
          copy[at] = (uint8_t)hs_test_rand(&seed);
        } else {
          copy[at] ^= (uint8_t)(1u << (hs_test_rand(&seed) % 8));
        }
      }
      decode_must_not_crash(copy, in->len);
    }
    hs_free(copy);
  }
  /* Framing errors. */
  hs_error e1 = {0}, e2 = {0}, e3 = {0};
  CHECK_EQ_INT(hs_arrow_ipc_schema_decode(msg.data, 3, &s, &e1), HS_ERR_CORRUPT);
  uint8_t bad_len[16] = {0xFF, 0xFF, 0xFF, 0xFF, 0x40, 0, 0, 0};
  CHECK_EQ_INT(hs_arrow_ipc_schema_decode(bad_len, sizeof bad_len, &s, &e2), HS_ERR_CORRUPT);
  CHECK(strstr(e2.message, "metadata length") != NULL);
  /* Legacy framing (no continuation marker) decodes too. */
  CHECK_OK(hs_arrow_ipc_schema_decode(msg.data + 4, msg.len - 4, &s, &e3), &e3);
  hs_arrow_schema_release(&s);
  hs_buf_free(&msg);
  hs_buf_free(&gold);
}

static size_t put16(uint8_t *b, size_t at, uint16_t v) {
  b[at] = (uint8_t)v;
  b[at + 1] = (uint8_t)(v >> 8);
  return at + 2;
}

/* A valid-looking message whose fields are shared: each of `levels` struct
 * levels holds `n` references to the same next-level field, so the tree it
 * describes has n^levels leaves. The decoder must refuse it quickly. */
static size_t build_dag(uint8_t *b, int levels, uint32_t n) {
  memset(b, 0, 4096);
  hs_store_u32le(b, 44); /* root → Message table */
  size_t at = 4;         /* Field vtable at 4 */
  uint16_t field_vt[] = {16, 16, 0, 0, 4, 8, 0, 12};
  for (int i = 0; i < 8; i++) at = put16(b, at, field_vt[i]);
  at = put16(b, 20, 4); /* empty vtable at 20 */
  at = put16(b, at, 4);
  uint16_t msg_vt[] = {10, 12, 0, 4, 8}; /* Message vtable at 24 */
  for (int i = 0; i < 5; i++) at = put16(b, at, msg_vt[i]);
  uint16_t sch_vt[] = {8, 8, 0, 4}; /* Schema vtable at 36 */
  at = 36;
  for (int i = 0; i < 4; i++) at = put16(b, at, sch_vt[i]);
  hs_store_u32le(b + 44, 20);      /* Message table at 44 */
  b[48] = 1;                       /* header type Schema */
  hs_store_u32le(b + 52, 56 - 52); /* → Schema table */
  hs_store_u32le(b + 56, 56 - 36); /* Schema table at 56 */
  hs_store_u32le(b + 60, 64 - 60); /* fields → vector at 64 */
  size_t vec = 64;
  for (int level = 0; level < levels; level++) {
    size_t field = vec + 4 + 4 * n, type = field + 16, next = type + 4;
    hs_store_u32le(b + vec, n);
    for (uint32_t i = 0; i < n; i++) {
      size_t slot = vec + 4 + 4 * i;
      hs_store_u32le(b + slot, (uint32_t)(field - slot));
    }
    hs_store_u32le(b + field, (uint32_t)(field - 4));
    b[field + 4] = level + 1 < levels ? 13 : 1; /* Struct_, or Null at the bottom */
    hs_store_u32le(b + field + 8, (uint32_t)(type - (field + 8)));
    hs_store_u32le(b + field + 12, (uint32_t)(next - (field + 12)));
    hs_store_u32le(b + type, (uint32_t)(type - 20));
    vec = next;
  }
  hs_store_u32le(b + vec, 0); /* the bottom level's empty children vector */
  return vec + 4;
}

static void test_shared_objects(void) {
  uint8_t *fb = hs_malloc(4096), *msg = hs_malloc(4096 + 8);
  /* A small DAG is a legitimate (if odd) encoding: 2 x 2 x 1 fields. */
  size_t n = build_dag(fb, 3, 2);
  hs_store_u32le(msg, 0xFFFFFFFFu);
  hs_store_u32le(msg + 4, (uint32_t)n);
  memcpy(msg + 8, fb, n);
  struct ArrowSchema s;
  hs_error err = {0};
  CHECK_OK(hs_arrow_ipc_schema_decode(msg, n + 8, &s, &err), &err);
  if (s.release != NULL) {
    CHECK(s.n_children == 2 && s.children[1]->n_children == 2);
    CHECK(strcmp(s.children[1]->children[1]->children[0]->format, "n") == 0);
    hs_arrow_schema_release(&s);
  }
  /* 12 levels of 8 would be 8^12 fields. */
  n = build_dag(fb, 12, 8);
  hs_store_u32le(msg + 4, (uint32_t)n);
  memcpy(msg + 8, fb, n);
  hs_error e2 = {0};
  int64_t t0 = hs_now_ns();
  CHECK_EQ_INT(hs_arrow_ipc_schema_decode(msg, n + 8, &s, &e2), HS_ERR_CORRUPT);
  CHECK(strstr(e2.message, "shared") != NULL);
  CHECK(hs_now_ns() - t0 < 1000000000);
  hs_free(fb);
  hs_free(msg);
}

/* Replay the fuzz seeds and every crash the fuzzer found (run from the
 * repository root, as ctest does). */
static void test_fuzz_files(void) {
  static const char *dirs[] = {"fuzz/corpus/ipc_schema", "fuzz/regress/ipc_schema"};
  int files = 0;
  for (int d = 0; d < 2; d++) {
    DIR *dir = opendir(dirs[d]);
    if (dir == NULL) continue;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char path[512];
      snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
      FILE *f = fopen(path, "rb");
      if (f == NULL) continue;
      hs_buf b;
      hs_buf_init(&b);
      uint8_t chunk[4096];
      size_t n;
      while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) hs_buf_append(&b, chunk, n);
      fclose(f);
      uint8_t *exact = hs_malloc(b.len ? b.len : 1); /* exact size: ASan sees overreads */
      if (b.len) memcpy(exact, b.data, b.len);
      decode_must_not_crash(exact, b.len);
      hs_free(exact);
      hs_buf_free(&b);
      files++;
    }
    closedir(dir);
  }
  if (files == 0) fprintf(stderr, "note: no fuzz files found (not run from the repo root?)\n");
}

/* ------------------------------------------------------------- filter */

static int filter_mode(void) {
  hs_buf line;
  hs_buf_init(&line);
  int c = 0;
  while (c != EOF) {
    line.len = 0;
    while ((c = getchar()) != EOF && c != '\n') hs_buf_append_byte(&line, (uint8_t)c);
    if (line.len == 0 && c == EOF) break;
    hs_error err = {0};
    hs_buf raw, text;
    hs_buf_init(&raw);
    hs_buf_init(&text);
    struct ArrowSchema s = {0};
    hs_status st = hs_base64_decode((const char *)line.data, line.len, &raw, &err);
    if (st == HS_OK) st = hs_arrow_ipc_schema_decode(raw.data, raw.len, &s, &err);
    if (st == HS_OK) st = hs_arrow_ipc_schema_encode_base64(&s, &text, &err);
    if (st == HS_OK) {
      printf("%.*s\n", (int)text.len, (const char *)text.data);
    } else {
      printf("ERROR: %s: %s\n", hs_status_str(st), err.message);
    }
    fflush(stdout);
    hs_arrow_schema_release(&s);
    hs_buf_free(&raw);
    hs_buf_free(&text);
  }
  hs_buf_free(&line);
  return 0;
}

int main(void) {
  const char *mode = getenv("HS_IPC_ROUNDTRIP");
  if (mode != NULL && strcmp(mode, "1") == 0) return filter_mode();
  test_base64();
  test_roundtrip();
  test_golden();
  test_encode_errors();
  test_hostile();
  test_shared_objects();
  test_fuzz_files();
  return hs_test_finish("test_ipc_schema");
}

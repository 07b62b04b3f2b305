/*
 * test_metadata_fast.c — the metadata JSON writer's direct path
 * (src/iceberg/metadata_fast.c: snapshots, snapshot-log and metadata-log
 * written as text) against the jansson-only writer it replaces, on
 * randomized metadata: every output must be byte-identical to jansson's
 * dump and read (json_loadb) as the same JSON. Strings mix
 * quotes, backslashes, slashes, every control byte, DEL and valid UTF-8
 * of 2-4 bytes; some are not UTF-8 (both writers must then fail alike).
 * Snapshots with unknown keys, duplicate summary keys, empty and absent
 * summaries, empty lists and optional fields in every combination cover
 * the fall-backs to the tree. Runs under ASan too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hs_test.h"
#include "iceberg/iceberg.h"
#include "iceberg/iceberg_internal.h"

static const char *BASE =
    "{\"format-version\": 2, \"table-uuid\": \"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    " \"location\": \"/tmp/t\", \"last-sequence-number\": 0, \"last-updated-ms\": 1,"
    " \"last-column-id\": 1, \"schemas\": [{\"type\": \"struct\", \"schema-id\": 0, \"fields\":"
    " [{\"id\": 1, \"name\": \"id\", \"required\": true, \"type\": \"long\"}]}],"
    " \"current-schema-id\": 0, \"partition-specs\": [{\"spec-id\": 0, \"fields\": []}],"
    " \"default-spec-id\": 0, \"last-partition-id\": 999, \"properties\": {\"a/b\": \"c\\\"d\"},"
    " \"sort-orders\": [{\"order-id\": 0, \"fields\": []}], \"default-sort-order-id\": 0,"
    " \"refs\": {}, \"x-unknown\": {\"k\": [1, 2]}}";

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(uint64_t n) {
  return hs_test_rand(&rng) % n;
}

/* A random string; with `bad`, possibly not UTF-8. */
static const char *rnd_str(hs_arena *a, bool bad) {
  static const char *const pieces[] = {"a",
                                       "Z",
                                       "/",
                                       "\"",
                                       "\\",
                                       "\t",
                                       "\n",
                                       " ",
                                       "\xc3\xa9",
                                       "\x7f",
                                       "\xe2\x82\xac",
                                       "9",
                                       "\xf0\x9f\x98\x80",
                                       "metadata/snap-1.avro",
                                       "-"};
  size_t n = (size_t)rnd(12);
  char buf[256];
  size_t len = 0;
  for (size_t i = 0; i < n; i++) {
    if (rnd(6) == 0) {
      buf[len++] = (char)(1 + rnd(31)); /* a control byte */
    } else {
      const char *p = pieces[rnd(sizeof pieces / sizeof *pieces)];
      memcpy(buf + len, p, strlen(p));
      len += strlen(p);
    }
  }
  if (bad) {
    static const char *const invalid[] = {"\xc0\xaf", "\xed\xa0\x80", "\xff", "\xe2\x82",
                                          "\xf4\x90\x80\x80"};
    const char *p = invalid[rnd(5)];
    memcpy(buf + len, p, strlen(p));
    len += strlen(p);
  }
  buf[len] = '\0';
  return hs_arena_strndup(a, buf, len);
}

static int64_t rnd_i64(void) {
  switch (rnd(4)) {
  case 0: return (int64_t)rnd(100);
  case 1: return -(int64_t)rnd(1000);
  case 2: return (int64_t)(hs_test_rand(&rng) >> 1);
  default: return INT64_MIN + (int64_t)rnd(3);
  }
}

static void fill(hs_iceberg_metadata *m, hs_arena *a, bool bad) {
  size_t ns = (size_t)rnd(8), nl = (size_t)rnd(8), nm = (size_t)rnd(8);
  m->snapshots = hs_arena_alloc(a, (ns + 1) * sizeof *m->snapshots);
  m->snapshot_log = hs_arena_alloc(a, (nl + 1) * sizeof *m->snapshot_log);
  m->metadata_log = hs_arena_alloc(a, (nm + 1) * sizeof *m->metadata_log);
  m->n_snapshots = ns;
  m->n_snapshot_log = nl;
  m->n_metadata_log = nm;
  /* Every string of the lists may be the bad one. */
  size_t bad_at = bad ? (size_t)rnd(ns * 8 + nm + 1) : (size_t)-1, at = 0;
  for (size_t i = 0; i < ns; i++) {
    hs_iceberg_snapshot *s = &m->snapshots[i];
    memset(s, 0, sizeof *s);
    s->snapshot_id = rnd_i64();
    s->has_parent_snapshot_id = rnd(2);
    s->parent_snapshot_id = rnd_i64();
    s->has_sequence_number = rnd(2);
    s->sequence_number = rnd_i64();
    s->timestamp_ms = rnd_i64();
    s->manifest_list = rnd(5) ? rnd_str(a, at++ == bad_at) : NULL;
    size_t nsum = (size_t)rnd(5);
    if (nsum > 0 || rnd(2)) {
      s->summary = hs_arena_alloc(a, (nsum + 1) * sizeof *s->summary);
      s->n_summary = nsum;
      for (size_t k = 0; k < nsum; k++) {
        s->summary[k].key = k == 0 && rnd(2) ? "operation" : rnd_str(a, at++ == bad_at);
        s->summary[k].value = rnd_str(a, at++ == bad_at);
      }
    }
    s->has_schema_id = rnd(2);
    s->schema_id = (int32_t)rnd(5);
    s->has_first_row_id = rnd(2);
    s->first_row_id = rnd_i64();
    s->has_added_rows = rnd(2);
    s->added_rows = rnd_i64();
    if (nsum > 1 && rnd(20) == 0) s->summary[1].key = s->summary[0].key; /* duplicate */
    if (rnd(30) == 0) {
      s->extra.items = hs_arena_alloc(a, sizeof *s->extra.items);
      s->extra.items[0].key = "key-id";
      s->extra.items[0].value = "\"k1\"";
      s->extra.n = 1;
    }
  }
  for (size_t i = 0; i < nl; i++)
    m->snapshot_log[i] = (hs_iceberg_snapshot_log_entry){rnd_i64(), rnd_i64()};
  for (size_t i = 0; i < nm; i++)
    m->metadata_log[i] = (hs_iceberg_metadata_log_entry){rnd_i64(), rnd_str(a, at++ == bad_at)};
}

int main(void) {
  hs_error e = {0};
  hs_arena base_arena;
  hs_arena_init(&base_arena);
  hs_iceberg_metadata base;
  CHECK_OK(hs_iceberg_metadata_parse(BASE, strlen(BASE), &base_arena, &base, &e), &e);
  int rounds = getenv("HS_TEST_ROUNDS") ? atoi(getenv("HS_TEST_ROUNDS")) : 3000;
  int n_bad = 0, n_fallback = 0;
  for (int r = 0; r < rounds; r++) {
    hs_arena a;
    hs_arena_init(&a);
    hs_iceberg_metadata m = base;
    bool bad = rnd(10) == 0;
    fill(&m, &a, bad);
    if (!hs_ice_fast_snapshots_ok(&m)) n_fallback++;
    hs_buf fast, tree;
    hs_buf_init(&fast);
    hs_buf_init(&tree);
    hs_error ef = {0}, et = {0};
    hs_status sf = hs_iceberg_metadata_write(&m, &fast, &ef);
    hs_status stt = hs_ice_metadata_write_tree(&m, &tree, &et);
    CHECK_EQ_INT(sf, stt);
    if (sf != HS_OK) {
      n_bad++;
      CHECK(bad);
      CHECK(strcmp(ef.message, et.message) == 0);
    } else {
      CHECK_EQ_INT((long long)fast.len, (long long)tree.len);
      bool same = fast.len == tree.len && memcmp(fast.data, tree.data, fast.len) == 0;
      CHECK(same);
      if (!same && fast.len < 4000) {
        fprintf(stderr, "fast:\n%.*s\ntree:\n%.*s\n", (int)fast.len, (char *)fast.data,
                (int)tree.len, (char *)tree.data);
        rounds = r; /* stop after the first difference */
      }
      /* An independent parser reads it as the same JSON as the tree. */
      json_error_t je;
      json_t *jf = json_loadb((const char *)fast.data, fast.len, 0, &je);
      json_t *jt = json_loadb((const char *)tree.data, tree.len, 0, &je);
      CHECK(jf != NULL && jt != NULL && json_equal(jf, jt));
      json_decref(jf);
      json_decref(jt);
    }
    hs_buf_free(&fast);
    hs_buf_free(&tree);
    hs_arena_reset(&a);
  }
  /* The randomization reached the error and fall-back paths. */
  CHECK(rounds < 1000 || (n_bad > 0 && n_fallback > 0));
  printf("rounds %d: %d not UTF-8, %d through the tree\n", rounds, n_bad, n_fallback);
  hs_arena_reset(&base_arena);
  return hs_test_finish("test_metadata_fast");
}

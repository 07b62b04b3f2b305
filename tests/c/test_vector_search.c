/*
 * test_vector_search.c — hs_table_vector_search(_batch): exact top-k over
 * multi-file tables against a brute-force reference (every metric, ties
 * between duplicate vectors, null and NaN vectors, filters, k beyond the
 * matches, projections, batches, time travel) and the error cases. The
 * reference orders rows as the contract says: (distance, data file order,
 * row position), taken from a plain scan (which reads files in plan order).
 * Vectors have small integer components, so L2sq, IP and L1 distances are
 * exact in float32 and ties are real ties. HS_VS_ROWS scales the size
 * (default 600 rows per append; ASan runs may lower it).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "index/vector/distance.h"
#include "query/vector_search.h"
#include "table/table.h"

#define DIM 8
#define APPENDS 4

typedef struct row {
  int64_t id;
  int32_t grp;
  bool null_vec;
  float v[DIM];
} row;

static row *g_rows;
static size_t g_n;
static bool g_clustered; /* float rows around 8 centres instead of small integers */

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define VS_ASAN 1
#endif

static double urand(uint64_t *rng) {
  return (double)(hs_test_rand(rng) >> 11) / 9007199254740992.0;
}

/* Schema {id: int64 not null, grp: int32, emb: fixed_size_list<float32>[DIM]}. */
static void make_schema(struct ArrowSchema *s) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, 3, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[0], "l", "id", 0, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[1], "i", "grp", ARROW_FLAG_NULLABLE, 0, &e), &e);
  char fmt[16];
  snprintf(fmt, sizeof fmt, "+w:%d", DIM);
  CHECK_OK(hs_arrow_schema_init(s->children[2], fmt, "emb", ARROW_FLAG_NULLABLE, 1, &e), &e);
  CHECK_OK(
      hs_arrow_schema_init(s->children[2]->children[0], "f", "item", ARROW_FLAG_NULLABLE, 0, &e),
      &e);
}

/* Append n random rows (ids continue g_rows) as one snapshot. */
static int64_t append_rows(hs_table *t, size_t n, uint64_t *rng) {
  hs_error e = {0};
  g_rows = hs_realloc(g_rows, (g_n + n) * sizeof *g_rows);
  int64_t *ids = hs_malloc(n * sizeof *ids);
  int32_t *grp = hs_malloc(n * sizeof *grp);
  float *vals = hs_malloc(n * DIM * sizeof *vals);
  uint8_t *valid = hs_calloc((n + 7) / 8 + 1, 1);
  int64_t nulls = 0;
  for (size_t i = 0; i < n; i++) {
    row *r = &g_rows[g_n + i];
    r->id = (int64_t)(g_n + i);
    r->grp = (int32_t)(hs_test_rand(rng) % 100);
    r->null_vec = hs_test_rand(rng) % 17 == 0;
    bool dup = i > 0 && hs_test_rand(rng) % 5 == 0; /* a tie with the previous row */
    int c = (int)(hs_test_rand(rng) % 8);
    for (int d = 0; d < DIM; d++) {
      float centre = (float)(((c * 7 + d * 3) % 11) - 5);
      float x = g_clustered ? centre + (float)(urand(rng) * 2 - 1)
                            : (float)((int)(hs_test_rand(rng) % 7) - 3);
      r->v[d] = dup ? g_rows[g_n + i - 1].v[d] : x;
    }
    if (hs_test_rand(rng) % 41 == 0) r->v[hs_test_rand(rng) % DIM] = NAN;
    if (hs_test_rand(rng) % 53 == 0) memset(r->v, 0, sizeof r->v); /* cosine: NaN */
    ids[i] = r->id;
    grp[i] = r->grp;
    memcpy(vals + i * DIM, r->v, sizeof r->v);
    if (r->null_vec)
      nulls++;
    else
      valid[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  struct ArrowArray cols[3], item;
  memset(cols, 0, sizeof cols);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[0], (int64_t)n, ids, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[1], (int64_t)n, grp, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_primitive(&item, (int64_t)(n * DIM), vals, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_init(&cols[2], 1, 1, &e), &e);
  hs_arrow_array_set_buffer(&cols[2], 0, valid);
  cols[2].length = (int64_t)n;
  cols[2].null_count = nulls;
  *cols[2].children[0] = item;
  struct ArrowArray b;
  CHECK_OK(hs_arrow_array_make_struct(&b, (int64_t)n, cols, 3, NULL, 0, &e), &e);
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArrayStream st;
  CHECK_OK(hs_arrow_stream_from_batches(&s, &b, 1, &st, &e), &e);
  int64_t snap = -1;
  CHECK_OK(hs_table_append(t, &st, &snap, &e), &e);
  g_n += n;
  return snap;
}

/* rank[id]: the row's place in a plain scan of `snapshot` (plan order). */
static int64_t *scan_ranks(hs_table *t, int64_t snapshot) {
  hs_error e = {0};
  int64_t *rank = hs_malloc((g_n ? g_n : 1) * sizeof *rank);
  for (size_t i = 0; i < g_n; i++) rank[i] = -1;
  const char *cols[] = {"id"};
  struct ArrowArrayStream st;
  CHECK_OK(hs_table_scan(t, snapshot, cols, 1, &st, &e), &e);
  int64_t at = 0;
  for (;;) {
    struct ArrowArray b;
    if (st.get_next(&st, &b) != 0 || b.release == NULL) break;
    const int64_t *ids = b.children[0]->buffers[1];
    for (int64_t i = 0; i < b.length; i++) rank[ids[b.children[0]->offset + i]] = at++;
    b.release(&b);
  }
  st.release(&st);
  return rank;
}

typedef struct ref_hit {
  float d;
  int64_t rank, id;
} ref_hit;

static int ref_cmp(const void *a, const void *b) {
  const ref_hit *x = a, *y = b;
  if (x->d != y->d) return x->d < y->d ? -1 : 1;
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Brute force over rows with rank >= 0 (in the snapshot) and grp < max_grp. */
static size_t reference(hs_metric m, const float *q, int32_t max_grp, const int64_t *rank, size_t k,
                        ref_hit *out) {
  ref_hit *all = hs_malloc((g_n ? g_n : 1) * sizeof *all);
  size_t n = 0;
  for (size_t i = 0; i < g_n; i++) {
    if (rank[i] < 0 || g_rows[i].null_vec || g_rows[i].grp >= max_grp) continue;
    hs_error e = {0};
    float d;
    CHECK_OK(hs_distance_f32(m, q, g_rows[i].v, DIM, &d, &e), &e);
    if (!isfinite(d)) continue;
    all[n++] = (ref_hit){d, rank[i], g_rows[i].id};
  }
  qsort(all, n, sizeof *all, ref_cmp);
  if (n > k) n = k;
  memcpy(out, all, n * sizeof *out);
  hs_free(all);
  return n;
}

/* Run a search; ids and distances of the result (caller frees). */
typedef struct got {
  hs_status st;
  hs_error err;
  int64_t *ids;
  int32_t *qi;
  float *d;
  size_t n;
  int64_t n_cols;
  hs_vector_search_stats stats;
} got;

static void run(hs_table *t, const hs_vector_search_options *o, const float *q, size_t nq,
                bool batch, got *g) {
  memset(g, 0, sizeof *g);
  struct ArrowArrayStream st;
  g->st = batch ? hs_table_vector_search_batch(t, o, q, nq, DIM, &st, &g->stats, &g->err)
                : hs_table_vector_search(t, o, q, DIM, &st, &g->stats, &g->err);
  if (g->st != HS_OK) return;
  struct ArrowSchema s;
  CHECK(st.get_schema(&st, &s) == 0);
  g->n_cols = s.n_children;
  int64_t idc = -1, dc = s.n_children - 1, qc = batch ? 0 : -1;
  for (int64_t i = 0; i < s.n_children; i++)
    if (strcmp(s.children[i]->name, "id") == 0) idc = i;
  CHECK(strcmp(s.children[dc]->name, "distance") == 0 && strcmp(s.children[dc]->format, "f") == 0);
  if (batch) CHECK(strcmp(s.children[0]->name, "query_index") == 0);
  s.release(&s);
  for (;;) {
    struct ArrowArray b;
    if (st.get_next(&st, &b) != 0 || b.release == NULL) break;
    struct ArrowArray bb;
    memset(&bb, 0, sizeof bb);
    CHECK(b.length > 0);
    g->ids = hs_realloc(g->ids, (g->n + (size_t)b.length) * sizeof *g->ids);
    g->d = hs_realloc(g->d, (g->n + (size_t)b.length) * sizeof *g->d);
    g->qi = hs_realloc(g->qi, (g->n + (size_t)b.length) * sizeof *g->qi);
    for (int64_t i = 0; i < b.length; i++) {
      g->ids[g->n + i] = idc >= 0 ? ((const int64_t *)b.children[idc]->buffers[1])[i] : -1;
      g->d[g->n + i] = ((const float *)b.children[dc]->buffers[1])[i];
      g->qi[g->n + i] = qc >= 0 ? ((const int32_t *)b.children[qc]->buffers[1])[i] : 0;
    }
    g->n += (size_t)b.length;
    b.release(&b);
  }
  st.release(&st);
}

static void got_free(got *g) {
  hs_free(g->ids);
  hs_free(g->d);
  hs_free(g->qi);
}

static void random_query(uint64_t *rng, float *q) {
  for (int d = 0; d < DIM; d++) q[d] = (float)((int)(hs_test_rand(rng) % 7) - 3);
}

/* Every metric, several k and filters, single and batched, vs the reference. */
static void check_against_reference(hs_table *t, int64_t snapshot, uint64_t *rng) {
  int64_t *rank = scan_ranks(t, snapshot);
  const char *metrics[] = {"l2", "ip", "cosine", "l1", "<->"};
  const int64_t ks[] = {1, 7, 50, 100000};
  const int32_t grps[] = {100, 50, 3, 0};
  ref_hit *ref = hs_malloc((g_n + 1) * sizeof *ref);
  for (size_t mi = 0; mi < sizeof metrics / sizeof *metrics; mi++) {
    hs_metric m;
    hs_error e = {0};
    CHECK_OK(hs_metric_parse(metrics[mi], &m, &e), &e);
    for (size_t ki = 0; ki < 4; ki++)
      for (size_t gi = 0; gi < 4; gi++) {
        float q[3 * DIM];
        for (int j = 0; j < 3; j++) random_query(rng, q + j * DIM);
        char filter[64];
        snprintf(filter, sizeof filter, "grp < %d", grps[gi]);
        hs_vector_search_options o;
        hs_vector_search_options_init(&o);
        o.column = "emb";
        o.metric = metrics[mi];
        o.k = ks[ki];
        o.snapshot_id = snapshot;
        o.filter = grps[gi] == 100 ? NULL : filter;
        const char *cols[] = {"id", "grp"};
        o.columns = cols;
        o.n_columns = 2;
        got g, gb;
        run(t, &o, q, 1, false, &g);
        CHECK_OK(g.st, &g.err);
        size_t n = reference(m, q, grps[gi], rank, (size_t)ks[ki], ref);
        CHECK_EQ_INT(g.n, n);
        bool same = g.n == n;
        for (size_t i = 0; same && i < n; i++) same = g.ids[i] == ref[i].id && g.d[i] == ref[i].d;
        if (!same)
          fprintf(stderr, "  metric %s k %lld filter grp < %d\n", metrics[mi], (long long)ks[ki],
                  grps[gi]);
        CHECK(same);
        CHECK_EQ_INT(g.stats.rows_returned, n);
        got_free(&g);
        /* The batch gives each query's answer, grouped in query order. */
        run(t, &o, q, 3, true, &gb);
        CHECK_OK(gb.st, &gb.err);
        size_t at = 0;
        for (int j = 0; j < 3; j++) {
          size_t nj = reference(m, q + j * DIM, grps[gi], rank, (size_t)ks[ki], ref);
          bool ok = at + nj <= gb.n;
          for (size_t i = 0; ok && i < nj; i++)
            ok = gb.qi[at + i] == j && gb.ids[at + i] == ref[i].id && gb.d[at + i] == ref[i].d;
          CHECK(ok);
          at += nj;
        }
        CHECK_EQ_INT(gb.n, at);
        got_free(&gb);
      }
  }
  hs_free(ref);
  hs_free(rank);
}

static hs_error *reset(hs_error *e) {
  memset(e, 0, sizeof *e);
  return e;
}

static void check_errors(hs_table *t) {
  float q[DIM + 1] = {0};
  q[0] = 1;
  hs_vector_search_options o;
  hs_vector_search_options_init(&o);
  got g;
  o.column = "emb";
  struct ArrowArrayStream st;
  hs_error e = {0};
  CHECK_EQ_INT(hs_table_vector_search(t, &o, q, DIM + 1, &st, NULL, reset(&e)), HS_ERR_INVALID_ARG);
  CHECK(strstr(e.message, "'emb'") && strstr(e.message, "dimension 8") &&
        strstr(e.message, "dimension 9"));
  o.column = "grp";
  CHECK_EQ_INT(hs_table_vector_search(t, &o, q, DIM, &st, NULL, reset(&e)), HS_ERR_SCHEMA);
  CHECK(strstr(e.message, "'grp'") != NULL);
  o.column = "nope";
  CHECK_EQ_INT(hs_table_vector_search(t, &o, q, DIM, &st, NULL, reset(&e)), HS_ERR_INVALID_ARG);
  o.column = "emb";
  o.k = 0;
  CHECK_EQ_INT(hs_table_vector_search(t, &o, q, DIM, &st, NULL, reset(&e)), HS_ERR_INVALID_ARG);
  o.k = 5;
  o.metric = "hamming";
  CHECK_EQ_INT(hs_table_vector_search(t, &o, q, DIM, &st, NULL, reset(&e)), HS_ERR_INVALID_ARG);
  o.metric = "nonsense";
  CHECK_EQ_INT(hs_table_vector_search(t, &o, q, DIM, &st, NULL, reset(&e)), HS_ERR_INVALID_ARG);
  o.metric = NULL;
  o.filter = "grp >";
  CHECK_EQ_INT(hs_table_vector_search(t, &o, q, DIM, &st, NULL, reset(&e)), HS_ERR_INVALID_ARG);
  o.filter = NULL;
  q[2] = NAN;
  CHECK_EQ_INT(hs_table_vector_search(t, &o, q, DIM, &st, NULL, reset(&e)), HS_ERR_INVALID_ARG);
  q[2] = 0;
  const char *clash[] = {"id", "distance"};
  o.columns = clash;
  o.n_columns = 2;
  CHECK_EQ_INT(hs_table_vector_search(t, &o, q, DIM, &st, NULL, reset(&e)), HS_ERR_INVALID_ARG);
  /* An empty projection: distance only. */
  o.n_columns = 0;
  run(t, &o, q, 1, false, &g);
  CHECK_OK(g.st, &g.err);
  CHECK(g.n == 5 && g.n_cols == 1);
  for (size_t i = 1; i < g.n; i++) CHECK(g.d[i - 1] <= g.d[i]);
  got_free(&g);
}

static void test_heap(void) {
  uint64_t rng = 7;
  for (int round = 0; round < 50; round++) {
    size_t k = 1 + hs_test_rand(&rng) % 40, n = hs_test_rand(&rng) % 200;
    hs_vs_topk t;
    hs_vs_topk_init(&t, k);
    hs_vs_hit *all = hs_malloc((n + 1) * sizeof *all);
    for (size_t i = 0; i < n; i++) {
      all[i] = (hs_vs_hit){(float)(hs_test_rand(&rng) % 10), (uint32_t)(hs_test_rand(&rng) % 3),
                           (int64_t)i};
      CHECK(hs_vs_topk_push(&t, &all[i]));
    }
    hs_vs_topk_sort(&t);
    /* Reference: selection by repeated minimum. */
    size_t want = n < k ? n : k;
    CHECK_EQ_INT(t.n, want);
    for (size_t j = 0; j < want && j < t.n; j++) {
      size_t best = j;
      for (size_t i = j + 1; i < n; i++)
        if (hs_vs_hit_less(&all[i], &all[best])) best = i;
      hs_vs_hit x = all[j];
      all[j] = all[best];
      all[best] = x;
      CHECK(all[j].distance == t.h[j].distance && all[j].file == t.h[j].file &&
            all[j].row == t.h[j].row);
    }
    hs_vs_topk_free(&t);
    hs_free(all);
  }
}

/* Search through per-file indexes on a table whose files are partly
 * indexed (clustered float rows, duplicates, nulls, NaN and zero vectors): recall@10 against exact,
 * min(k, matches) rows at every selectivity, exact distances, and ef_search honoured. */
static void test_indexed(const char *dir) {
  char root[300];
  snprintf(root, sizeof root, "%s/ix", dir);
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, NULL, &t, &e), &e);
  s.release(&s);
  if (t == NULL) return;
  hs_free(g_rows);
  g_rows = NULL;
  g_n = 0;
  uint64_t rng = 99;
  g_clustered = true;
#ifdef VS_ASAN
  size_t per = 500;
#else
  size_t per = 1500;
#endif
  const char *env = getenv("HS_VS_ROWS");
  if (env != NULL && atoi(env) > 0) per = (size_t)atoi(env) * 2;
  append_rows(t, per, &rng);
  append_rows(t, per, &rng);
  hs_vector_index_options io;
  hs_vector_index_options_init(&io);
  io.metric = "l2";
  int64_t built = -1;
  CHECK_OK(hs_table_build_vector_indexes(t, "emb", &io, &built, &e), &e);
  CHECK_EQ_INT(built, 2);
  CHECK_OK(hs_table_build_vector_indexes(t, "emb", &io, &built, &e), &e); /* idempotent */
  CHECK_EQ_INT(built, 0);
  append_rows(t, per, &rng); /* a third, unindexed file */
  const char *filters[] = {NULL, "grp < 500", "grp < 100", "grp < 10", "grp < 1"};
  const char *cols[] = {"id"};
  double hit = 0, want = 0;
  for (size_t fi = 0; fi < 5; fi++)
    for (int qn = 0; qn < 20; qn++) {
      float q[DIM];
      for (int d = 0; d < DIM; d++) q[d] = (float)(urand(&rng) * 6 - 3);
      hs_vector_search_options o;
      hs_vector_search_options_init(&o);
      o.column = "emb";
      o.k = 10;
      o.filter = filters[fi];
      o.columns = cols;
      o.n_columns = 1;
      got gi, gx;
      run(t, &o, q, 1, false, &gi);
      CHECK_OK(gi.st, &gi.err);
      o.exact = 1;
      run(t, &o, q, 1, false, &gx);
      CHECK_OK(gx.st, &gx.err);
      CHECK_EQ_INT(gi.n, gx.n); /* min(k, matches) either way */
      CHECK(gi.stats.files_indexed == 2 || (fi > 0 && gi.stats.files_indexed <= 2));
      CHECK(gx.stats.files_indexed == 0);
      for (size_t i = 1; i < gi.n; i++) CHECK(gi.d[i - 1] <= gi.d[i]);
      /* Recall with tolerance for ties at the k-th distance. */
      float kth = gx.n ? gx.d[gx.n - 1] : 0;
      for (size_t i = 0; i < gi.n; i++) {
        bool in = false;
        for (size_t j = 0; j < gx.n && !in; j++) in = gx.ids[j] == gi.ids[i];
        hit += in || gi.d[i] <= kth;
        /* The distance reported is the row's true distance. */
        const row *r = &g_rows[gi.ids[i]];
        float d;
        hs_error de = {0};
        CHECK_OK(hs_distance_f32(HS_METRIC_L2, q, r->v, DIM, &d, &de), &de);
        CHECK(fabsf(d - gi.d[i]) <= 1e-4f * (1 + d));
      }
      want += (double)gx.n;
      got_free(&gi);
      got_free(&gx);
    }
  printf("indexed search: recall@10 %.4f over %.0f expected hits\n", hit / want, want);
  CHECK(hit / want >= 0.95);
  /* The scalar planner treats a vector index file as no index: register
   * one for the scalar column "grp" and filter on it. */
  hs_table_index_registry reg;
  CHECK_OK(hs_table_index_registry_load(t, NULL, &reg, &e), &e);
  CHECK(reg.n_entries == 2);
  if (reg.n_entries > 0) {
    char *gcol[] = {"grp"};
    hs_table_index_entry ent = reg.entries[0];
    ent.columns = gcol;
    ent.n_columns = 1;
    ent.field_ids = NULL; /* by name */
    CHECK_OK(hs_table_index_register(t, &ent, 1, &e), &e);
    hs_scan_options so;
    hs_scan_options_init(&so);
    so.filter = "grp < 100";
    so.columns = cols;
    so.n_columns = 1;
    struct ArrowArrayStream st;
    CHECK_OK(hs_table_scan_query(t, &so, &st, &e), &e);
    int64_t n = 0;
    for (;;) {
      struct ArrowArray b;
      if (st.get_next(&st, &b) != 0 || b.release == NULL) break;
      n += b.length;
      b.release(&b);
    }
    hs_scan_index_stats is;
    CHECK_OK(hs_scan_index_stats_get(&st, &is, &e), &e);
    CHECK_EQ_INT(is.files_indexed, 0);
    st.release(&st);
    int64_t want_n = 0;
    for (size_t i = 0; i < g_n; i++) want_n += g_rows[i].grp < 100;
    CHECK_EQ_INT(n, want_n);
  }
  /* A damaged index file (even one opened and cached before) only costs
   * speed: that file is scored exactly and the answer is exact. */
  if (reg.n_entries > 0) {
    FILE *f = fopen(reg.entries[0].index_file, "r+b");
    CHECK(f != NULL);
    if (f != NULL) {
      fseek(f, 200, SEEK_SET);
      for (int i = 0; i < 64; i++) fputc(0x5A, f);
      fclose(f);
    }
    for (int qn = 0; qn < 5; qn++) {
      float q[DIM];
      for (int d = 0; d < DIM; d++) q[d] = (float)(urand(&rng) * 6 - 3);
      hs_vector_search_options o;
      hs_vector_search_options_init(&o);
      o.column = "emb";
      o.k = 10;
      o.columns = cols;
      o.n_columns = 1;
      got gi, gx;
      run(t, &o, q, 1, false, &gi);
      CHECK_OK(gi.st, &gi.err);
      CHECK_EQ_INT(gi.stats.files_indexed, 1);
      o.exact = 1;
      run(t, &o, q, 1, false, &gx);
      CHECK_EQ_INT(gi.n, gx.n);
      CHECK(gx.stats.files_indexed == 0 && gx.n == 10);
      got_free(&gi);
      got_free(&gx);
    }
  }
  hs_table_index_registry_free(&reg);
  hs_table_free(t);
}

int main(void) {
  test_heap();
#ifdef VS_ASAN
  size_t per = 250;
#else
  size_t per = 600;
#endif
  const char *env = getenv("HS_VS_ROWS");
  if (env != NULL && atoi(env) > 0) per = (size_t)atoi(env);
  char tmpl[] = "/tmp/hs_test_vs_XXXXXX";
  char *dir = mkdtemp(tmpl);
  CHECK(dir != NULL);
  if (dir == NULL) return hs_test_finish("test_vector_search");
  char root[256];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options to;
  hs_table_options_init(&to);
  const char *pk[] = {"write.parquet.row-group-limit"};
  const char *pv[] = {"128"};
  to.property_keys = pk;
  to.property_values = pv;
  to.n_properties = 1;
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &to, &t, &e), &e);
  s.release(&s);
  if (t == NULL) return hs_test_finish("test_vector_search");
  uint64_t rng = 42;
  /* An empty table: no rows, the projected schema. */
  {
    float q[DIM] = {1};
    hs_vector_search_options o;
    hs_vector_search_options_init(&o);
    o.column = "emb";
    got g;
    run(t, &o, q, 1, false, &g);
    CHECK_OK(g.st, &g.err);
    CHECK(g.n == 0 && g.n_cols == 4);
    got_free(&g);
  }
  int64_t snaps[APPENDS];
  size_t rows_at[APPENDS];
  for (int a = 0; a < APPENDS; a++) {
    snaps[a] = append_rows(t, per + (size_t)a * 37, &rng);
    rows_at[a] = g_n;
  }
  check_against_reference(t, -1, &rng);
  /* Time travel: the second snapshot sees only its rows. */
  size_t all = g_n;
  g_n = rows_at[1];
  check_against_reference(t, snaps[1], &rng);
  g_n = all;
  check_errors(t);
  hs_table_free(t);
  test_indexed(dir);
  hs_free(g_rows);
  return hs_test_finish("test_vector_search");
}

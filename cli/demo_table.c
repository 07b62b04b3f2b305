/*
 * demo_table.c — the table half of `hyperstream demo`: the demo's rows
 * (demo.c's generator) as an Iceberg table in <dir>/table, written in four
 * appends (four snapshots), then a scalar index on `category` and an HNSW
 * index on `embedding`, and the queries the product exists for, each checked
 * against an answer computed here without the library:
 *   - a filtered scan answered through the bitmap index (count vs the
 *     generator),
 *   - vector top-10 (the query is a stored row's own vector: it must come
 *     first, at distance 0),
 *   - hybrid filter + top-10 through the index vs the exact search (recall),
 *   - time travel to the first snapshot (its row count).
 * The data stream is generated batch by batch, so memory stays bounded.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow.h"
#include "cli.h"

enum { TOUR_APPENDS = 4, TOUR_K = 10 };

/* A stream of demo rows [next, end) in batches of HS_CLI_DEMO_BATCH_ROWS. */
typedef struct tour_stream {
  int64_t next, end;
  int dim;
  hs_error err;
} tour_stream;

static int tour_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  tour_stream *ts = s->private_data;
  return hs_cli_demo_schema(ts->dim, out, &ts->err) == HS_OK ? 0 : hs_status_errno(ts->err.status);
}

static int tour_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  tour_stream *ts = s->private_data;
  if (ts->next >= ts->end) {
    memset(out, 0, sizeof *out); /* end of stream */
    return 0;
  }
  int64_t n = ts->end - ts->next;
  if (n > HS_CLI_DEMO_BATCH_ROWS) n = HS_CLI_DEMO_BATCH_ROWS;
  size_t raw = 0;
  hs_status st = hs_cli_demo_batch(ts->next, n, ts->dim, out, &raw, &ts->err);
  if (st != HS_OK) return hs_status_errno(st);
  ts->next += n;
  return 0;
}

static const char *tour_error(struct ArrowArrayStream *s) {
  tour_stream *ts = s->private_data;
  return ts->err.status != HS_OK ? ts->err.message : NULL;
}

static void tour_release(struct ArrowArrayStream *s) {
  hs_free(s->private_data);
  s->release = NULL;
}

static hs_status tour_append(hs_table *t, int64_t first, int64_t end, int dim, int64_t *snap,
                             hs_error *err) {
  tour_stream *ts = hs_calloc(1, sizeof *ts);
  if (ts == NULL) return hs_error_set(err, HS_ERR_NOMEM, "demo: out of memory");
  *ts = (tour_stream){.next = first, .end = end, .dim = dim};
  struct ArrowArrayStream s = {.get_schema = tour_schema,
                               .get_next = tour_next,
                               .get_last_error = tour_error,
                               .release = tour_release,
                               .private_data = ts};
  return hs_table_append(t, &s, snap, err); /* consumes the stream */
}

/* Rows of a stream, and (when ids != NULL, room for `cap`) the int64 first
 * column of each, and (when dist != NULL) the float32 last column. */
static hs_status drain(struct ArrowArrayStream *s, int64_t *rows, int64_t *ids, float *dist,
                       size_t cap, const char **cats, hs_error *err) {
  *rows = 0;
  hs_status st = HS_OK;
  for (;;) {
    struct ArrowArray b;
    if (s->get_next(s, &b) != 0) {
      const char *m = s->get_last_error(s);
      st = hs_error_set(err, HS_ERR_IO, "%s", m ? m : "the stream failed");
      break;
    }
    if (b.release == NULL) break;
    for (int64_t r = 0; r < b.length; r++) {
      size_t at = (size_t)(*rows + r);
      if (at >= cap) break;
      if (ids != NULL)
        ids[at] = ((const int64_t *)b.children[0]->buffers[1])[b.children[0]->offset + r];
      if (dist != NULL) {
        const struct ArrowArray *d = b.children[b.n_children - 1];
        dist[at] = ((const float *)d->buffers[1])[d->offset + r];
      }
      if (cats != NULL) { /* category is column 1; keep a pointer into a static name */
        const struct ArrowArray *c = b.children[1];
        const int32_t *off = c->buffers[1];
        const char *txt = c->buffers[2];
        int32_t a = off[c->offset + r], z = off[c->offset + r + 1];
        cats[at] = NULL;
        for (size_t k = 0; k < HS_CLI_DEMO_CATEGORIES; k++)
          if (strlen(hs_cli_demo_categories[k]) == (size_t)(z - a) &&
              memcmp(hs_cli_demo_categories[k], txt + a, (size_t)(z - a)) == 0)
            cats[at] = hs_cli_demo_categories[k];
      }
    }
    *rows += b.length;
    b.release(&b);
  }
  s->release(s);
  return st;
}

static double since_ms(int64_t t0) {
  return (double)(hs_now_ns() - t0) / 1e6;
}

/* Expected matches of `category = 'science' AND price < 100` among rows [0, n). */
static int64_t expected_filtered(int64_t n) {
  int64_t c = 0;
  for (int64_t row = 0; row < n; row++) {
    uint64_t h = hs_cli_demo_hash((uint64_t)row);
    double price = (double)((h >> 8) % 100000) / 100.0;
    c += h % HS_CLI_DEMO_CATEGORIES == 0 && row % 97 != 96 && price < 100.0;
  }
  return c;
}

static hs_status search(hs_table *t, const float *q, int dim, const char *filter, int exact,
                        int64_t *ids, float *dist, const char **cats, int64_t *n,
                        hs_vector_search_stats *stats, hs_error *err) {
  static const char *const cols[] = {"id", "category"};
  hs_vector_search_options o;
  hs_vector_search_options_init(&o);
  o.column = "embedding";
  o.k = TOUR_K;
  o.filter = filter;
  o.columns = cols;
  o.n_columns = 2;
  o.exact = exact;
  struct ArrowArrayStream s;
  hs_status st = hs_table_vector_search(t, &o, q, (size_t)dim, &s, stats, err);
  if (st == HS_OK) st = drain(&s, n, ids, dist, TOUR_K, cats, err);
  return st;
}

int hs_cli_demo_table(const char *dir, int64_t rows, int dim) {
  char root[4200], n1[32], n2[32], n3[32];
  snprintf(root, sizeof root, "%s/table", dir);
  hs_error err = {0};
  struct ArrowSchema schema;
  hs_table *t = NULL;
  hs_status st = hs_cli_demo_schema(dim, &schema, &err);
  if (st == HS_OK) {
    st = hs_table_create(root, &schema, NULL, &t, &err);
    schema.release(&schema);
  }
  if (st != HS_OK) return hs_cli_fail("demo: creating table %s: %s", root, err.message);
  printf("\nTable tour: %s rows as an Apache Iceberg table (Parquet data + our indexes)\n",
         hs_cli_group(rows, n1, sizeof n1));
  printf("  %-16s %s\n", "table", root);
  int rc = HS_CLI_OK;
  int64_t snaps[TOUR_APPENDS] = {-1, -1, -1, -1}, first_rows = 0;
  int64_t t0 = hs_now_ns();
  for (int i = 0; st == HS_OK && i < TOUR_APPENDS; i++) {
    int64_t a = rows * i / TOUR_APPENDS, z = rows * (i + 1) / TOUR_APPENDS;
    if (i == 0) first_rows = z;
    st = tour_append(t, a, z, dim, &snaps[i], &err);
  }
  if (st != HS_OK) {
    rc = hs_cli_fail("demo: append: %s", err.message);
    goto done;
  }
  printf("  %-16s %d appends (4 snapshots, each durable on return) in %.0f ms\n", "write",
         TOUR_APPENDS, since_ms(t0));
  t0 = hs_now_ns();
  int64_t built = 0;
  if ((st = hs_table_add_index(t, "category", "bitmap", NULL, &err)) != HS_OK ||
      (st = hs_table_add_index(t, "embedding", "hnsw", NULL, &err)) != HS_OK ||
      (st = hs_table_build_configured_indexes(t, NULL, &built, &err)) != HS_OK) {
    rc = hs_cli_fail("demo: indexes: %s", err.message);
    goto done;
  }
  printf("  %-16s bitmap on category, HNSW on embedding: %lld index files in %.0f ms\n", "indexes",
         (long long)built, since_ms(t0));

  /* 1. a filtered scan answered through the bitmap index */
  const char *filter = "category = 'science' AND price < 100";
  hs_scan_options so;
  hs_scan_options_init(&so);
  so.filter = filter;
  hs_table_explain_info ex;
  t0 = hs_now_ns();
  if ((st = hs_table_explain(t, &so, &ex, &err)) != HS_OK) {
    rc = hs_cli_fail("demo: filtered scan: %s", err.message);
    goto done;
  }
  double scan_ms = since_ms(t0);
  int64_t want = expected_filtered(rows);
  printf(
      "  %-16s %s: %s rows (expected %s) in %.1f ms;\n  %-16s the bitmap index "
      "answered %lld of %lld files\n",
      "filter", filter, hs_cli_group(ex.scan.rows_matched, n1, sizeof n1),
      hs_cli_group(want, n2, sizeof n2), scan_ms, "", (long long)ex.index.files_indexed,
      (long long)ex.scan.files_read);
  if (ex.scan.rows_matched != want) rc = hs_cli_fail("demo: the filtered scan disagrees");

  /* 2. vector top-10: a stored row's own vector comes back first, at distance 0 */
  int64_t q_row = rows / 2;
  float *q = hs_malloc((size_t)dim * sizeof *q);
  if (q == NULL) {
    rc = hs_cli_fail("demo: out of memory");
    goto done;
  }
  hs_cli_demo_vector(q_row, dim, q);
  int64_t ids[TOUR_K], exact_ids[TOUR_K], n = 0, n_exact = 0;
  float dist[TOUR_K];
  const char *cats[TOUR_K];
  hs_vector_search_stats vs = {0};
  t0 = hs_now_ns();
  st = search(t, q, dim, NULL, 0, ids, dist, NULL, &n, &vs, &err);
  double cold_ms = since_ms(t0);
  t0 = hs_now_ns();
  if (st == HS_OK) st = search(t, q, dim, NULL, 0, ids, dist, NULL, &n, &vs, &err);
  double v_ms = since_ms(t0);
  if (st == HS_OK)
    printf(
        "  %-16s top-%d of row %s's own vector: first id %lld at distance %.3g, through %lld "
        "HNSW indexes\n  %-16s in %.1f ms (%.1f ms the first time, opening the indexes)\n",
        "vector search", TOUR_K, hs_cli_group(q_row, n1, sizeof n1), n ? (long long)ids[0] : -1LL,
        n ? dist[0] : NAN, (long long)vs.files_indexed, "", v_ms, cold_ms);
  if (st == HS_OK && (n != TOUR_K || ids[0] != q_row || dist[0] != 0.0f))
    rc = hs_cli_fail("demo: vector search did not return the query's own row first");

  /* 3. hybrid: a filter plus top-10, through the index vs exact */
  const char *hfilter = "category = 'sports'";
  if (st == HS_OK) {
    t0 = hs_now_ns();
    st = search(t, q, dim, hfilter, 0, ids, dist, cats, &n, &vs, &err);
    v_ms = since_ms(t0);
  }
  if (st == HS_OK) st = search(t, q, dim, hfilter, 1, exact_ids, dist, NULL, &n_exact, NULL, &err);
  if (st == HS_OK) {
    int hits = 0, wrong = 0;
    for (int64_t i = 0; i < n; i++) {
      wrong += cats[i] == NULL || strcmp(cats[i], "sports") != 0;
      for (int64_t j = 0; j < n_exact; j++) hits += ids[i] == exact_ids[j];
    }
    printf("  %-16s %s + top-%d: %lld rows, all 'sports': %s, recall@%d vs exact %.2f, %.1f ms\n",
           "hybrid", hfilter, TOUR_K, (long long)n, wrong ? "NO" : "yes", TOUR_K,
           n_exact ? (double)hits / (double)n_exact : 1.0, v_ms);
    if (wrong || n != n_exact) rc = hs_cli_fail("demo: the hybrid search disagrees");
  }
  hs_free(q);
  if (st != HS_OK) {
    rc = hs_cli_fail("demo: vector search: %s", err.message);
    goto done;
  }

  /* 4. time travel */
  hs_scan_options_init(&so);
  so.snapshot_id = snaps[0];
  static const char *const idcol[] = {"id"};
  so.columns = idcol;
  so.n_columns = 1;
  struct ArrowArrayStream s;
  int64_t got = 0;
  if ((st = hs_table_scan_query(t, &so, &s, &err)) == HS_OK)
    st = drain(&s, &got, NULL, NULL, 0, NULL, &err);
  if (st != HS_OK) {
    rc = hs_cli_fail("demo: time travel: %s", err.message);
    goto done;
  }
  printf("  %-16s snapshot %lld (the first append) holds %s rows (expected %s)\n", "time travel",
         (long long)snaps[0], hs_cli_group(got, n1, sizeof n1),
         hs_cli_group(first_rows, n3, sizeof n3));
  if (got != first_rows) rc = hs_cli_fail("demo: time travel disagrees");
  printf("  %-16s %s\n  %-16s (pyiceberg, DuckDB, Spark and Trino read it as any Iceberg table)\n",
         "Iceberg", hs_table_metadata_location(t), "");
done:
  hs_table_free(t);
  fflush(stdout);
  return rc;
}

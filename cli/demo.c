/*
 * demo.c — `hyperstream demo [--rows N] [--dim D] [--dir PATH] [--keep]`:
 * a self-contained tour of the Parquet layer. It generates N rows of mixed
 * columns (int64 id, string category, float64 price with some nulls, UTC
 * timestamp, bool) plus a D-dimensional float32 embedding, streams them
 * batch by batch through the writer API (so memory stays bounded for any
 * N), then reads the file back twice: a full scan, and a scan pruned by the
 * row-group statistics predicate `id >= 0.9 * N`, whose surviving rows are
 * re-checked (pruning only narrows). It reports sizes, row groups read and
 * throughput.
 *
 * Data is deterministic (a splitmix64 sequence keyed by row id), so two
 * runs produce the same file.
 */
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "cli.h"

enum {
  DEMO_COLUMNS = 6,
  DEMO_BATCH_ROWS = HS_CLI_DEMO_BATCH_ROWS,
  DEMO_ROW_GROUPS = 10,
  DEMO_TABLE_ROWS = 20000
};

const char *const hs_cli_demo_categories[HS_CLI_DEMO_CATEGORIES] = {
    "science", "sports", "politics", "arts", "travel", "finance", "health", "food"};

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static double ms_since(int64_t t0) {
  return (double)(hs_now_ns() - t0) / 1e6;
}

static double mb(double bytes) {
  return bytes / (1024.0 * 1024.0);
}

static void progress(const char *label, int64_t done, int64_t total) {
  if (!isatty(STDERR_FILENO) || total <= 0) return;
  int pct = (int)(done * 100 / total);
  int bar = pct / 5;
  fprintf(stderr, "\r  %-14s [%.*s%*s] %3d%%", label, bar, "####################", 20 - bar, "",
          pct);
  if (done >= total) fputs("\r\033[K", stderr);
  fflush(stderr);
}

uint64_t hs_cli_demo_hash(uint64_t row) {
  return splitmix64(row);
}

hs_status hs_cli_demo_schema(int dim, struct ArrowSchema *s, hs_error *err) {
  char vec_format[32];
  snprintf(vec_format, sizeof vec_format, "+w:%d", dim);
  static const struct {
    const char *format, *name;
    int64_t flags;
  } cols[DEMO_COLUMNS] = {
      {"l", "id", 0},       {"u", "category", 0}, {"g", "price", ARROW_FLAG_NULLABLE},
      {"tsu:UTC", "ts", 0}, {"b", "flag", 0},     {NULL, "embedding", 0}};
  hs_status st = hs_arrow_schema_init(s, "+s", "", 0, DEMO_COLUMNS, err);
  for (int c = 0; st == HS_OK && c < DEMO_COLUMNS; c++) {
    const char *f = cols[c].format ? cols[c].format : vec_format;
    st = hs_arrow_schema_init(s->children[c], f, cols[c].name, cols[c].flags,
                              cols[c].format ? 0 : 1, err);
  }
  if (st == HS_OK) st = hs_arrow_schema_init(s->children[5]->children[0], "f", "item", 0, 0, err);
  return st;
}

void hs_cli_demo_vector(int64_t row, int dim, float *out) {
  uint64_t x = splitmix64((uint64_t)row);
  for (size_t k = 0; k < (size_t)dim; k++) {
    x = splitmix64(x);
    out[k] = (float)((double)(x >> 40) / (double)(1u << 24) * 2.0 - 1.0);
  }
}

hs_status hs_cli_demo_batch(int64_t base, int64_t n, int dim, struct ArrowArray *out,
                            size_t *raw_bytes, hs_error *err) {
  struct ArrowArray cols[DEMO_COLUMNS];
  memset(cols, 0, sizeof cols);
  size_t nn = (size_t)n, nd = (size_t)n * (size_t)dim;
  int64_t *id = hs_malloc(nn * 8), *ts = hs_malloc(nn * 8);
  int32_t *offs = hs_malloc((nn + 1) * 4);
  char *text = hs_malloc(nn * 8 + 1);
  double *price = hs_malloc(nn * 8);
  uint8_t *price_valid = hs_calloc((nn + 7) / 8, 1), *flag = hs_calloc((nn + 7) / 8, 1);
  float *vec = hs_malloc(nd * 4 + 1);
  hs_status st = HS_OK;
  if (!id || !ts || !offs || !text || !price || !price_valid || !flag || !vec) {
    hs_free(id), hs_free(ts), hs_free(offs), hs_free(text), hs_free(price);
    hs_free(price_valid), hs_free(flag), hs_free(vec);
    return hs_error_set(err, HS_ERR_NOMEM, "demo: out of memory for a batch of %lld rows",
                        (long long)n);
  }
  int64_t nulls = 0;
  int32_t pos = 0;
  const int64_t ts0 = 1704067200000000; /* 2024-01-01T00:00:00Z in microseconds */
  for (size_t r = 0; r < nn; r++) {
    int64_t row = base + (int64_t)r;
    uint64_t h = splitmix64((uint64_t)row);
    id[r] = row;
    ts[r] = ts0 + row * 1000000;
    const char *cat = hs_cli_demo_categories[h % HS_CLI_DEMO_CATEGORIES];
    size_t len = strlen(cat);
    offs[r] = pos;
    memcpy(text + pos, cat, len);
    pos += (int32_t)len;
    price[r] = (double)((h >> 8) % 100000) / 100.0;
    if (row % 97 == 96) {
      nulls++;
    } else {
      price_valid[r >> 3] |= (uint8_t)(1u << (r & 7));
    }
    if (row % 3 == 0) flag[r >> 3] |= (uint8_t)(1u << (r & 7));
    hs_cli_demo_vector(row, dim, vec + r * (size_t)dim);
  }
  offs[nn] = pos;
  *raw_bytes = nn * (8 + 8 + 8 + 4 + 1) + (size_t)pos + nd * 4;
  /* Each builder owns its inputs from here on, success or failure. */
  st = hs_arrow_array_make_primitive(&cols[0], n, id, NULL, 0, err);
  if (st == HS_OK)
    st = hs_arrow_array_make_binary(&cols[1], n, offs, text, NULL, 0, err);
  else
    hs_free(offs), hs_free(text);
  if (st == HS_OK)
    st = hs_arrow_array_make_primitive(&cols[2], n, price, price_valid, nulls, err);
  else
    hs_free(price), hs_free(price_valid);
  if (st == HS_OK)
    st = hs_arrow_array_make_primitive(&cols[3], n, ts, NULL, 0, err);
  else
    hs_free(ts);
  if (st == HS_OK)
    st = hs_arrow_array_make_primitive(&cols[4], n, flag, NULL, 0, err);
  else
    hs_free(flag);
  if (st == HS_OK) st = hs_arrow_array_init(&cols[5], 1, 1, err);
  if (st == HS_OK) {
    cols[5].length = n;
    st = hs_arrow_array_make_primitive(cols[5].children[0], n * dim, vec, NULL, 0, err);
  } else {
    hs_free(vec);
  }
  if (st == HS_OK) return hs_arrow_array_make_struct(out, n, cols, DEMO_COLUMNS, NULL, 0, err);
  for (int c = 0; c < DEMO_COLUMNS; c++) hs_arrow_array_release(&cols[c]);
  return st;
}

typedef struct demo_args {
  int64_t rows;
  int64_t dim;
  int64_t table_rows; /* rows of the table tour (0: skip it) */
  const char *dir;
  bool keep;
} demo_args;

static int demo_parse(int argc, char **argv, demo_args *a) {
  a->rows = 200000;
  a->dim = 768;
  a->table_rows = -1; /* min(rows, DEMO_TABLE_ROWS) */
  a->dir = NULL;
  a->keep = false;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (strcmp(o, "--rows") == 0 || strcmp(o, "--dim") == 0) {
      int64_t *dst = o[2] == 'r' ? &a->rows : &a->dim;
      if (++i >= argc || !hs_cli_parse_count(argv[i], dst) || *dst == 0)
        return hs_cli_usage_error("demo: %s needs a positive number", o);
    } else if (strcmp(o, "--table-rows") == 0) {
      if (++i >= argc || !hs_cli_parse_count(argv[i], &a->table_rows))
        return hs_cli_usage_error("demo: --table-rows needs a number (0 skips the table tour)");
    } else if (strcmp(o, "--dir") == 0) {
      if (++i >= argc) return hs_cli_usage_error("demo: --dir needs a path");
      a->dir = argv[i];
    } else if (strcmp(o, "--keep") == 0) {
      a->keep = true;
    } else if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
      fputs(
          "Usage: hyperstream demo [--rows N] [--dim D] [--table-rows T] [--dir PATH] [--keep]\n"
          "  Parquet: write N rows (default 200,000) of mixed columns and D-dimensional\n"
          "  vectors (default 768), read them back in full and filtered.\n"
          "  Table: the first T rows (default min(N, 20,000); 0 skips it) as an Iceberg\n"
          "  table in 4 appends, with a bitmap and an HNSW index, then a filtered scan,\n"
          "  vector and hybrid search and time travel, each checked.\n",
          stdout);
      return -1;
    } else {
      return hs_cli_usage_error("demo: unexpected argument '%s'", o);
    }
  }
  if (a->dim > 65536) return hs_cli_usage_error("demo: --dim must be at most 65536");
  if (a->rows > ((int64_t)1 << 40) / a->dim)
    return hs_cli_usage_error("demo: --rows x --dim is too large");
  return 0;
}

/* Write the demo file; fills *raw_bytes (Arrow bytes written) and *ms. */
static int demo_write(const char *path, const demo_args *a, int64_t rg_rows, size_t *raw_bytes,
                      double *ms) {
  struct ArrowSchema schema = {0};
  hs_parquet_writer *w = NULL;
  hs_error err = {0};
  hs_parquet_write_options opts;
  hs_parquet_write_options_init(&opts);
  opts.row_group_rows_max = rg_rows;
  static const char *const enc_cols[] = {"embedding"};
  static const hs_encoding encs[] = {HS_ENCODING_PLAIN}; /* random floats do not dictionary */
  opts.encoding_columns = enc_cols;
  opts.encodings = encs;
  opts.n_encodings = 1;
  double write_ms = 0;
  int64_t t0;
  hs_status st = hs_cli_demo_schema((int)a->dim, &schema, &err);
  if (st == HS_OK) {
    t0 = hs_now_ns();
    st = hs_parquet_writer_open(path, &schema, &opts, &w, &err);
    write_ms += ms_since(t0);
  }
  *raw_bytes = 0;
  for (int64_t base = 0; st == HS_OK && base < a->rows; base += DEMO_BATCH_ROWS) {
    int64_t n = a->rows - base < DEMO_BATCH_ROWS ? a->rows - base : DEMO_BATCH_ROWS;
    struct ArrowArray batch = {0};
    size_t bytes = 0;
    st = hs_cli_demo_batch(base, n, (int)a->dim, &batch, &bytes, &err);
    if (st != HS_OK) break;
    t0 = hs_now_ns();
    st = hs_parquet_writer_write(w, &batch, &err);
    write_ms += ms_since(t0);
    batch.release(&batch);
    *raw_bytes += bytes;
    progress("writing", base + n, a->rows);
  }
  if (st == HS_OK) {
    t0 = hs_now_ns();
    st = hs_parquet_writer_close(w, &err);
    write_ms += ms_since(t0);
  }
  hs_parquet_writer_free(w);
  if (schema.release != NULL) schema.release(&schema);
  *ms = write_ms;
  if (st != HS_OK) return hs_cli_fail("demo: writing %s: %s", path, err.message);
  return HS_CLI_OK;
}

/* Scan `path` (optionally pruned by id >= threshold); counts rows read and
 * rows whose id passes the threshold. */
static int demo_scan(const char *path, int64_t threshold, bool pruned, int64_t *rg_read,
                     int64_t *rg_total, int64_t *rows_read, int64_t *rows_match, double *ms) {
  hs_parquet_reader *r = NULL;
  struct ArrowArrayStream s = {0};
  hs_error err = {0};
  hs_stat_predicate pred = {.column = "id", .op = HS_CMP_GE};
  pred.value.kind = HS_VALUE_INT64;
  pred.value.i64 = threshold;
  hs_parquet_read_options opts;
  hs_parquet_read_options_init(&opts);
  if (pruned) {
    opts.predicates = &pred;
    opts.n_predicates = 1;
  }
  int64_t t0 = hs_now_ns();
  *rows_read = *rows_match = 0;
  hs_status st = hs_parquet_reader_open(path, &r, &err);
  if (st == HS_OK) st = hs_parquet_reader_count_row_groups(r, &opts, rg_read, &err);
  if (st == HS_OK) {
    *rg_total = hs_parquet_reader_num_row_groups(r);
    st = hs_parquet_reader_stream(r, &opts, &s, &err);
  }
  int64_t total = st == HS_OK ? hs_parquet_reader_num_rows(r) : 0;
  while (st == HS_OK) {
    struct ArrowArray b = {0};
    if (s.get_next(&s, &b) != 0) {
      const char *m = s.get_last_error(&s);
      st = hs_error_set(&err, HS_ERR_CORRUPT, "%s", m ? m : "stream failed");
      break;
    }
    if (b.release == NULL) break;
    const struct ArrowArray *ids = b.n_children > 0 ? b.children[0] : NULL;
    const int64_t *v = ids && ids->n_buffers > 1 ? ids->buffers[1] : NULL;
    for (int64_t k = 0; v != NULL && k < ids->length; k++) {
      *rows_match += v[ids->offset + k] >= threshold; /* re-check: pruning only narrows */
    }
    *rows_read += b.length;
    b.release(&b);
    progress(pruned ? "filtered scan" : "full scan", *rows_read, pruned ? *rows_read : total);
  }
  *ms = ms_since(t0);
  if (s.release != NULL) s.release(&s);
  hs_parquet_reader_free(r);
  if (st != HS_OK) return hs_cli_fail("demo: reading %s: %s", path, err.message);
  return HS_CLI_OK;
}

static int remove_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(p) == 0 ? 0 : 0; /* best effort: keep going */
}

/* Remove the demo's temporary folder and everything in it. */
static void remove_tree(const char *dir) {
  nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int hs_cli_demo(int argc, char **argv) {
  demo_args a;
  int rc = demo_parse(argc, argv, &a);
  if (rc != 0) return rc < 0 ? HS_CLI_OK : rc;
  char dir[4096], path[4200];
  bool temp = a.dir == NULL;
  if (temp) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/hyperstream-demo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
      return hs_cli_fail("demo: cannot create %s: %s", dir, strerror(errno));
  } else {
    snprintf(dir, sizeof dir, "%s", a.dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
      return hs_cli_fail("demo: cannot create directory %s: %s", dir, strerror(errno));
  }
  snprintf(path, sizeof path, "%s/demo.parquet", dir);
  int64_t rg_rows = (a.rows + DEMO_ROW_GROUPS - 1) / DEMO_ROW_GROUPS;
  int64_t threshold = a.rows - a.rows / DEMO_ROW_GROUPS;
  char n1[32], n2[32], n3[32];
  int64_t t_start = hs_now_ns();
  printf("HyperStreamDB %s demo\n", HS_VERSION_STRING);
  printf("  %-16s %s\n", "file", path);
  printf(
      "  %-16s %s rows x (id int64, category string, price double, ts timestamp[us, UTC],\n"
      "  %-16s flag bool, embedding float32[%lld])\n",
      "data", hs_cli_group(a.rows, n1, sizeof n1), "", (long long)a.dim);
  fflush(stdout);

  size_t raw = 0;
  double w_ms = 0, full_ms = 0, f_ms = 0;
  int64_t rg_read = 0, rg_total = 0, rows_read = 0, rows_match = 0;
  int64_t f_rg = 0, f_rows = 0, f_match = 0;
  rc = demo_write(path, &a, rg_rows, &raw, &w_ms);
  struct stat sb;
  if (rc == HS_CLI_OK && stat(path, &sb) != 0)
    rc = hs_cli_fail("demo: %s: %s", path, strerror(errno));
  if (rc == HS_CLI_OK) {
    printf("  %-16s %.1f MB of Arrow data in %.0f ms (%.1f MB/s), zstd\n", "write", mb((double)raw),
           w_ms, mb((double)raw) / (w_ms / 1000.0 + 1e-9));
    printf("  %-16s %.1f MB (%.2fx of the in-memory size)\n", "file size", mb((double)sb.st_size),
           (double)sb.st_size / ((double)raw + 1e-9));
    fflush(stdout);
    rc = demo_scan(path, threshold, false, &rg_read, &rg_total, &rows_read, &rows_match, &full_ms);
  }
  if (rc == HS_CLI_OK) {
    printf("  %-16s %s rows, %lld of %lld row groups in %.0f ms (%.1f MB/s)\n", "full scan",
           hs_cli_group(rows_read, n1, sizeof n1), (long long)rg_read, (long long)rg_total, full_ms,
           mb((double)raw) / (full_ms / 1000.0 + 1e-9));
    fflush(stdout);
    rc = demo_scan(path, threshold, true, &f_rg, &rg_total, &f_rows, &f_match, &f_ms);
  }
  if (rc == HS_CLI_OK) {
    printf(
        "  %-16s id >= %s: read %lld of %lld row groups (%s rows), %s rows match, "
        "in %.0f ms\n",
        "filtered scan", hs_cli_group(threshold, n1, sizeof n1), (long long)f_rg,
        (long long)rg_total, hs_cli_group(f_rows, n2, sizeof n2),
        hs_cli_group(f_match, n3, sizeof n3), f_ms);
    if (f_match != a.rows - threshold || rows_read != a.rows) {
      rc = hs_cli_fail("demo: expected %lld rows and %lld matches, read %lld and %lld",
                       (long long)a.rows, (long long)(a.rows - threshold), (long long)rows_read,
                       (long long)f_match);
    }
  }
  int64_t table_rows = a.table_rows >= 0          ? a.table_rows
                       : a.rows < DEMO_TABLE_ROWS ? a.rows
                                                  : DEMO_TABLE_ROWS;
  if (rc == HS_CLI_OK && table_rows > 0) rc = hs_cli_demo_table(dir, table_rows, (int)a.dim);
  printf("  %-16s %.0f ms\n", "total", ms_since(t_start));
  if (temp && !a.keep) {
    remove_tree(dir);
    printf("  (temporary files removed; use --keep or --dir to keep them)\n");
  } else {
    printf("  inspect them with: hyperstream inspect %s", path);
    if (table_rows > 0) printf("; hyperstream inspect %s/table", dir);
    printf("\n");
  }
  fflush(stdout);
  return rc;
}

/*
 * cli.h — private declarations shared by the files of the `hyperstream`
 * command-line tool: one entry point per subcommand, exit codes and small
 * output helpers.
 *
 * Exit codes: 0 success, 1 the operation failed (bad file, I/O error), 2 the
 * command line was wrong (a usage message goes to stderr).
 */
#ifndef HS_CLI_H
#define HS_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "common/common.h"

enum { HS_CLI_OK = 0, HS_CLI_FAILED = 1, HS_CLI_USAGE = 2 };

/* Print "hyperstream: <message>" and the --help hint to stderr; returns 2. */
int hs_cli_usage_error(const char *fmt, ...) HS_PRINTF(1, 2);
/* Print "hyperstream: error: <message>" to stderr; returns 1. */
int hs_cli_fail(const char *fmt, ...) HS_PRINTF(1, 2);
/* Parse a non-negative decimal integer (digits, optional '_' or ','
 * separators). Returns false when `s` is not one. */
bool hs_cli_parse_count(const char *s, int64_t *out);
/* Format n with thousands separators into buf. Returns buf. */
const char *hs_cli_group(int64_t n, char *buf, size_t cap);

/* The progress bar of `write` on stderr (table.c): "[####    ]  42%  1,234
 * rows", redrawn at most 10 times a second; `done` against `total` (rows or
 * bytes), nothing when `on` is false (stderr not a terminal, --quiet). */
typedef struct hs_cli_progress {
  bool on;
  int64_t total, last_drawn_ms;
} hs_cli_progress;
void hs_cli_progress_draw(hs_cli_progress *p, int64_t done, int64_t rows, bool final);

/* Open CSV file `path` (or read `file` when not NULL, named `path` in
 * messages; closed by the stream) as a stream of batches in the table's
 * `schema` (moved in; both released on failure too), feeding `prog`
 * (csv.c; fuzzed by fuzz/fuzz_csv.c). */
hs_status hs_cli_csv_open(const char *path, FILE *file, struct ArrowSchema *schema,
                          hs_cli_progress *prog, struct ArrowArrayStream *out, hs_error *err);

/* The demo's deterministic rows (demo.c), shared with its table tour
 * (demo_table.c): schema {id, category, price, ts, flag, embedding[dim]};
 * rows [base, base + n) as one struct batch; one row's embedding; the
 * per-row hash behind category (hash % HS_CLI_DEMO_CATEGORIES) and price. */
enum { HS_CLI_DEMO_BATCH_ROWS = 8192, HS_CLI_DEMO_CATEGORIES = 8 };
extern const char *const hs_cli_demo_categories[HS_CLI_DEMO_CATEGORIES];
hs_status hs_cli_demo_schema(int dim, struct ArrowSchema *s, hs_error *err);
hs_status hs_cli_demo_batch(int64_t base, int64_t n, int dim, struct ArrowArray *out,
                            size_t *raw_bytes, hs_error *err);
void hs_cli_demo_vector(int64_t row, int dim, float *out);
uint64_t hs_cli_demo_hash(uint64_t row);
/* The table tour: `rows` demo rows as <dir>/table, indexed and queried. */
int hs_cli_demo_table(const char *dir, int64_t rows, int dim);

/* Subcommands: argv[0] is the subcommand name. */
int hs_cli_inspect(int argc, char **argv);
int hs_cli_read(int argc, char **argv);
int hs_cli_demo(int argc, char **argv);

/* Append the display text of row i of array `a` (schema `s`) to `out`;
 * nested values are abbreviated. Values are bounds-checked against the
 * array's declared lengths; anything inconsistent prints as "<invalid>".
 * Returns false on OOM. */
bool hs_cli_format_value(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                         hs_buf *out);

#endif /* HS_CLI_H */

/*
 * fuzz_csv.c — libFuzzer target: the CSV reader of `hyperstream write`
 * (cli/csv.c) over arbitrary bytes, typed by a fixed table schema with every
 * column kind CSV input supports: open (header row), stream every batch,
 * check each batch's shape, release. Schema and parse errors are expected;
 * any crash, leak, hang or sanitizer report is a bug.
 */
#include <stdio.h>
#include <string.h>

#include "arrow/arrow.h"
#include "cli.h"

/* The progress bar lives in cli/table.c; this target never draws one. */
void hs_cli_progress_draw(hs_cli_progress *p, int64_t done, int64_t rows, bool final) {
  (void)p;
  (void)done;
  (void)rows;
  (void) final;
}

static void make_schema(struct ArrowSchema *s) {
  static const char *const fmts[] = {"b", "i", "l", "f", "g", "u", "tdD", "tsu:UTC", "ttu"};
  static const char *const names[] = {"b", "i", "l", "f", "g", "s", "d", "ts", "t"};
  hs_arrow_schema_init(s, "+s", "", 0, 9, NULL);
  for (int i = 0; i < 9; i++)
    hs_arrow_schema_init(s->children[i], fmts[i], names[i], ARROW_FLAG_NULLABLE, 0, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0; /* fmemopen refuses an empty buffer */
  FILE *f = fmemopen((void *)data, size, "rb");
  if (f == NULL) return 0;
  struct ArrowSchema schema;
  make_schema(&schema);
  hs_cli_progress prog = {.on = false, .total = 0, .last_drawn_ms = 0};
  struct ArrowArrayStream st;
  hs_error err = {0};
  if (hs_cli_csv_open("fuzz.csv", f, &schema, &prog, &st, &err) != HS_OK) return 0;
  for (;;) {
    struct ArrowArray b;
    if (st.get_next(&st, &b) != 0) {
      const char *msg = st.get_last_error(&st);
      if (msg == NULL) __builtin_trap(); /* an error must say what */
      break;
    }
    if (b.release == NULL) break;
    if (b.n_children != 9) __builtin_trap();
    for (int i = 0; i < 9; i++)
      if (b.children[i]->length != b.length) __builtin_trap();
    b.release(&b);
  }
  st.release(&st);
  return 0;
}

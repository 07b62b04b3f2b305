/*
 * fuzz_eqdel.c — libFuzzer target: an equality-delete file as the table
 * layer reads it (src/table/deletes_eq.h). The input is a whole Parquet
 * file; it is loaded as an equality delete file on one or two field ids
 * of a fixed schema of every key type (the file's own first ids when the
 * schema has them, else picked from the input's length), and then applied
 * to itself as a data file: every row must then be deleted. Seeds: delete files written
 * by Iceberg's Java library and by hs_table_eqdel_write. Errors are
 * expected but must say what; a crash, leak, hang or sanitizer report is a
 * bug, and so is a deleted position past the file's rows.
 */
#include <string.h>

#include "arrow/arrow.h"
#include "parquet/parquet.h"
#include "table/deletes_eq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Field ids 1..13: the types of tests/java/EqDeleteTables.java's types
 * table, plus a string. */
static const char *const NAMES[] = {"id", "dt",  "ts", "tstz", "tm",   "dec", "dec20",
                                    "u",  "bin", "fx", "f32",  "flag", "name"};
static const hs_iceberg_type_id TYPES[] = {
    HS_ICE_LONG,    HS_ICE_DATE,    HS_ICE_TIMESTAMP, HS_ICE_TIMESTAMPTZ, HS_ICE_TIME,
    HS_ICE_DECIMAL, HS_ICE_DECIMAL, HS_ICE_UUID,      HS_ICE_BINARY,      HS_ICE_FIXED,
    HS_ICE_FLOAT,   HS_ICE_BOOLEAN, HS_ICE_STRING};
#define N_FIELDS 13

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hs_iceberg_field fields[N_FIELDS];
  memset(fields, 0, sizeof fields);
  for (int i = 0; i < N_FIELDS; i++) {
    fields[i].id = i + 1;
    fields[i].name = NAMES[i];
    fields[i].type.id = TYPES[i];
  }
  fields[5].type.precision = 9, fields[5].type.scale = 2;
  fields[6].type.precision = 20, fields[6].type.scale = 4;
  fields[9].type.length = 4;
  hs_iceberg_schema schema;
  memset(&schema, 0, sizeof schema);
  schema.root.id = HS_ICE_STRUCT;
  schema.root.fields = fields;
  schema.root.n_fields = N_FIELDS;
  /* Key ids: the file's first one or two top-level field ids that the schema
   * has (so seeds load), else two picked by the input's length. */
  int32_t ids[2] = {(int32_t)(size % N_FIELDS) + 1, (int32_t)((size / N_FIELDS) % N_FIELDS) + 1};
  size_t n = 0;
  hs_parquet_reader *r = NULL;
  hs_error e0 = {0};
  if (hs_parquet_reader_open_buffer(data, size, "fuzz.parquet", &r, &e0) == HS_OK) {
    struct ArrowSchema fs;
    if (hs_parquet_reader_schema(r, &fs, &e0) == HS_OK) {
      for (int64_t i = 0; i < fs.n_children && n < 2; i++) {
        int32_t id = hs_arrow_field_id(fs.children[i]);
        if (id >= 1 && id <= N_FIELDS && (n == 0 || ids[0] != id)) ids[n++] = id;
      }
      fs.release(&fs);
    }
  }
  if (n == 0) n = ids[1] != ids[0] ? 2 : 1;
  if (n == 2 && (size & 2)) n = 1;
  hs_error err = {0};
  hs_table_eqdel *d = NULL;
  if (hs_table_eqdel_load_buffer("fuzz.parquet", data, size, ids, n, &schema, &d, &err) != HS_OK) {
    if (err.message[0] == '\0') __builtin_trap(); /* an error must say what */
    hs_parquet_reader_free(r);
    return 0;
  }
  roaring_bitmap_t *bm = roaring_bitmap_create();
  memset(&err, 0, sizeof err);
  const hs_table_eqdel *sets[1] = {d};
  if (hs_table_eqdel_apply_buffer(sets, 1, "fuzz.parquet", data, size, &schema, bm, &err) ==
      HS_OK) {
    /* Every key came from a row of this file, read the same way: every row
     * the reader streams is deleted, and none past them (the footer's
     * num_rows may disagree with its row groups, so rows are counted). */
    uint64_t rows = 0;
    struct ArrowArrayStream st;
    memset(&st, 0, sizeof st);
    bool counted = r != NULL && hs_parquet_reader_stream(r, NULL, &st, &e0) == HS_OK;
    while (counted) {
      struct ArrowArray b;
      memset(&b, 0, sizeof b);
      if (st.get_next(&st, &b) != 0) counted = false;
      if (!counted || b.release == NULL) break;
      rows += (uint64_t)b.length;
      b.release(&b);
    }
    if (st.release != NULL) st.release(&st);
    if (counted && roaring_bitmap_get_cardinality(bm) != rows) __builtin_trap();
  } else if (err.message[0] == '\0') {
    __builtin_trap();
  }
  roaring_bitmap_free(bm);
  hs_table_eqdel_free(d);
  hs_parquet_reader_free(r);
  return 0;
}

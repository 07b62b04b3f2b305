/*
 * test_schema_evolve.c — hs_table_update_schema (src/table/schema_evolve.c)
 * and hs_table_create with a spec and sort order in version 1, at the C
 * level (also under ASan/UBSan): the new schema's ids, names, types,
 * defaults, last-column-id and current-schema-id after each change set;
 * one version per call; every refusal commits nothing; a reopened table
 * sees the same. (tests/python/test_table_define.py compares with
 * pyiceberg.)
 */
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "table/table.h"

static void node(struct ArrowSchema *s, const char *fmt, const char *name, int64_t nch) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, fmt, name, ARROW_FLAG_NULLABLE, nch, &e), &e);
}

/* A struct of one field of format `fmt` (list formats get a float child). */
static void one(struct ArrowSchema *s, const char *fmt) {
  node(s, "+s", "", 1);
  hs_arrow_schema_release(s->children[0]);
  node(s->children[0], fmt, "c", fmt[0] == '+' ? 1 : 0);
  if (fmt[0] == '+') {
    hs_arrow_schema_release(s->children[0]->children[0]);
    node(s->children[0]->children[0], "f", "element", 0);
  }
}

static const hs_iceberg_schema *cur(const hs_table *t) {
  return hs_iceberg_metadata_schema(&t->meta, t->meta.current_schema_id);
}

static const hs_iceberg_field *field(const hs_table *t, const char *name) {
  const hs_iceberg_schema *s = cur(t);
  for (size_t i = 0; s && i < s->root.n_fields; i++)
    if (strcmp(s->root.fields[i].name, name) == 0) return &s->root.fields[i];
  return NULL;
}

static void refused(hs_table *t, hs_table_schema_change c, hs_status want, const char *words) {
  hs_error e = {0};
  int64_t v = hs_table_version(t);
  CHECK_EQ_INT(hs_table_update_schema(t, &c, 1, &e), want);
  if (words != NULL && strstr(e.message, words) == NULL)
    fprintf(stderr, "message without '%s': %s\n", words, e.message);
  CHECK(words == NULL || strstr(e.message, words) != NULL);
  CHECK_OK(hs_table_refresh(t, &e), &e);
  CHECK_EQ_INT(hs_table_version(t), v);
}

int main(void) {
  char tmpl[] = "/tmp/hs_evolve_XXXXXX";
  char *dir = mkdtemp(tmpl);
  CHECK(dir != NULL);
  if (dir == NULL) return hs_test_finish("test_schema_evolve");
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_error e = {0};
  struct ArrowSchema s;
  node(&s, "+s", "", 3);
  hs_arrow_schema_release(s.children[0]);
  hs_arrow_schema_release(s.children[1]);
  hs_arrow_schema_release(s.children[2]);
  node(s.children[0], "i", "id", 0);
  node(s.children[1], "u", "name", 0);
  node(s.children[2], "f", "x", 0);
  hs_table_options o;
  hs_table_options_init(&o);
  o.format_version = 3;
  hs_table_partition_field pf = {.source = "name", .transform = "truncate[2]", .name = "nm"};
  o.partition_fields = &pf;
  o.n_partition_fields = 1;
  const char *scol[] = {"x"};
  int asc[] = {0};
  o.sort_columns = scol;
  o.sort_ascending = asc;
  o.n_sort_columns = 1;
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &o, &t, &e), &e);
  s.release(&s);
  if (t == NULL) return hs_test_finish("test_schema_evolve");
  /* v1 holds spec 0 and order 1 */
  CHECK_EQ_INT(hs_table_version(t), 1);
  CHECK_EQ_INT(t->meta.n_specs, 1);
  CHECK_EQ_INT(t->meta.default_spec_id, 0);
  CHECK_EQ_INT(t->meta.specs[0].n_fields, 1);
  CHECK_EQ_INT(t->meta.specs[0].fields[0].field_id, 1000);
  CHECK_EQ_INT(t->meta.specs[0].fields[0].source_id, 2);
  CHECK_EQ_INT(t->meta.default_sort_order_id, 1);

  /* add (default, vector), rename, widen: one commit */
  struct ArrowSchema t_long, t_str, t_vec, t_double, t_int;
  one(&t_long, "l");
  one(&t_str, "u");
  one(&t_vec, "+w:3");
  one(&t_double, "g");
  one(&t_int, "i");
  hs_table_schema_change c1[] = {
      {.op = HS_SCHEMA_ADD_COLUMN,
       .column = "score",
       .type = &t_double,
       .default_json = "1.5",
       .doc = "d"},
      {.op = HS_SCHEMA_ADD_COLUMN, .column = "emb", .type = &t_vec},
      {.op = HS_SCHEMA_RENAME_COLUMN, .column = "x", .new_name = "y"},
      {.op = HS_SCHEMA_UPDATE_COLUMN, .column = "id", .type = &t_long},
  };
  CHECK_OK(hs_table_update_schema(t, c1, 4, &e), &e);
  CHECK_EQ_INT(hs_table_version(t), 2);
  CHECK_EQ_INT(t->meta.current_schema_id, 1);
  CHECK_EQ_INT(t->meta.n_schemas, 2);
  CHECK_EQ_INT(t->meta.last_column_id, 6); /* score 4, emb 5 + element 6 */
  const hs_iceberg_field *f = field(t, "score");
  CHECK(f != NULL && f->id == 4 && f->type.id == HS_ICE_DOUBLE && f->initial_default != NULL &&
        strcmp(f->initial_default, "1.5") == 0 && f->write_default != NULL && f->doc != NULL);
  f = field(t, "emb");
  CHECK(f != NULL && f->id == 5 && f->type.id == HS_ICE_LIST);
  CHECK(hs_iceberg_metadata_property(&t->meta, "hyperstream.vector.5.dimension") != NULL);
  CHECK(field(t, "x") == NULL && field(t, "y") != NULL && field(t, "y")->id == 3);
  CHECK(field(t, "id")->type.id == HS_ICE_LONG);

  /* refusals commit nothing */
  refused(t, (hs_table_schema_change){.op = HS_SCHEMA_DROP_COLUMN, .column = "name"},
          HS_ERR_INVALID_ARG, "partition spec");
  refused(t, (hs_table_schema_change){.op = HS_SCHEMA_DROP_COLUMN, .column = "y"},
          HS_ERR_INVALID_ARG, "sort order");
  refused(t,
          (hs_table_schema_change){.op = HS_SCHEMA_UPDATE_COLUMN, .column = "id", .type = &t_int},
          HS_ERR_SCHEMA, "from long to int");
  refused(
      t, (hs_table_schema_change){.op = HS_SCHEMA_UPDATE_COLUMN, .column = "name", .type = &t_long},
      HS_ERR_SCHEMA, "from string to long");
  refused(t, (hs_table_schema_change){.op = HS_SCHEMA_ADD_COLUMN, .column = "id", .type = &t_str},
          HS_ERR_INVALID_ARG, "already exists");
  refused(
      t,
      (hs_table_schema_change){
          .op = HS_SCHEMA_ADD_COLUMN, .column = "z", .type = &t_long, .default_json = "\"text\""},
      HS_ERR_CORRUPT, "default");
  refused(t,
          (hs_table_schema_change){
              .op = HS_SCHEMA_ADD_COLUMN, .column = "r", .type = &t_long, .required = 1},
          HS_ERR_INVALID_ARG, "needs a default");
  refused(
      t, (hs_table_schema_change){.op = HS_SCHEMA_RENAME_COLUMN, .column = "nope", .new_name = "q"},
      HS_ERR_INVALID_ARG, "no column 'nope'");
  refused(t, (hs_table_schema_change){.op = (hs_table_schema_op)99, .column = "id"},
          HS_ERR_INVALID_ARG, "unknown schema change");
  /* drop, and a no-op set commits nothing */
  hs_table_schema_change d = {.op = HS_SCHEMA_DROP_COLUMN, .column = "score"};
  CHECK_OK(hs_table_update_schema(t, &d, 1, &e), &e);
  CHECK_EQ_INT(hs_table_version(t), 3);
  CHECK(field(t, "score") == NULL);
  CHECK_EQ_INT(t->meta.last_column_id, 6);
  hs_table_schema_change same = {.op = HS_SCHEMA_RENAME_COLUMN, .column = "y", .new_name = "y"};
  CHECK_OK(hs_table_update_schema(t, &same, 1, &e), &e);
  CHECK_EQ_INT(hs_table_version(t), 3);
  /* a re-added name is a new field */
  hs_table_schema_change re = {.op = HS_SCHEMA_ADD_COLUMN, .column = "score", .type = &t_str};
  CHECK_OK(hs_table_update_schema(t, &re, 1, &e), &e);
  CHECK(field(t, "score") != NULL && field(t, "score")->id == 7);
  /* a reopened handle sees the same */
  hs_table *t2 = NULL;
  CHECK_OK(hs_table_open(root, &t2, &e), &e);
  if (t2 != NULL) {
    CHECK_EQ_INT(t2->meta.current_schema_id, t->meta.current_schema_id);
    CHECK(field(t2, "score") != NULL && field(t2, "score")->type.id == HS_ICE_STRING);
    hs_table_free(t2);
  }
  /* v2 tables refuse defaults */
  char root2[4200];
  snprintf(root2, sizeof root2, "%s/t2", dir);
  struct ArrowSchema s2;
  one(&s2, "i");
  hs_table_options o2;
  hs_table_options_init(&o2);
  hs_table *v2 = NULL;
  CHECK_OK(hs_table_create(root2, &s2, &o2, &v2, &e), &e);
  s2.release(&s2);
  if (v2 != NULL) {
    refused(v2,
            (hs_table_schema_change){
                .op = HS_SCHEMA_ADD_COLUMN, .column = "q", .type = &t_long, .default_json = "3"},
            HS_ERR_UNSUPPORTED, "format version 3");
    hs_table_free(v2);
  }
  /* a refused spec at create leaves no folder */
  char root3[4200];
  snprintf(root3, sizeof root3, "%s/t3", dir);
  struct ArrowSchema s3;
  one(&s3, "i");
  hs_table_partition_field bad = {.source = "nope", .transform = "identity"};
  hs_table_options o3;
  hs_table_options_init(&o3);
  o3.partition_fields = &bad;
  o3.n_partition_fields = 1;
  hs_table *t3 = NULL;
  CHECK_EQ_INT(hs_table_create(root3, &s3, &o3, &t3, &e), HS_ERR_SCHEMA);
  e = (hs_error){0};
  s3.release(&s3);
  char md[4300];
  snprintf(md, sizeof md, "%s/metadata", root3);
  CHECK(!hs_fs_exists(md));
  t_long.release(&t_long);
  t_str.release(&t_str);
  t_vec.release(&t_vec);
  t_double.release(&t_double);
  t_int.release(&t_int);
  hs_table_free(t);
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return hs_test_finish("test_schema_evolve");
}

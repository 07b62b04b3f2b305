/*
 * test_rest.c — the REST catalog client's C parts that need no server
 * (src/catalog/): the answer parsers on good, bad and every truncated
 * input, path encoding, and the commit body's requirements and updates for
 * each kind of change (checked by parsing the body back with jansson).
 * Then, when build/jars/rest holds Apache Iceberg's RESTCatalogServer
 * (scripts/setup.sh test), the C path against it (also under ASan): connect,
 * namespaces, create, appends from two threads at once on their own handles
 * (the server's 409s retried: every row lands), reopen, list, drop. Exit
 * code 77 (a skip) only without the jars. pyiceberg as the oracle is
 * tests/python/test_rest_catalog.py.
 */
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "catalog/catalog.h"
#include "hs_test.h"
#include "hs_table_fixture.h"

static const char META[] =
    "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    "\"location\":\"/w/db/t\",\"last-sequence-number\":1,\"last-updated-ms\":1000,"
    "\"last-column-id\":2,\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\","
    "\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\",\"required\":false,\"type\":"
    "\"long\"},{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}],"
    "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
    "\"last-partition-id\":999,\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,"
    "\"fields\":[]}],\"properties\":{\"a\":\"1\",\"b\":\"2\"},\"current-snapshot-id\":11,"
    "\"refs\":{\"main\":{\"snapshot-id\":11,\"type\":\"branch\"}},\"snapshots\":[{"
    "\"snapshot-id\":11,\"sequence-number\":1,\"timestamp-ms\":1000,\"manifest-list\":"
    "\"/w/db/t/metadata/snap-11.avro\",\"summary\":{\"operation\":\"append\"},\"schema-id\":0}],"
    "\"snapshot-log\":[{\"timestamp-ms\":1000,\"snapshot-id\":11}],\"metadata-log\":[]}";

static json_t *body_of(const hs_iceberg_metadata *old, const hs_iceberg_metadata *m, size_t *n,
                       hs_status *st) {
  hs_buf b;
  hs_buf_init(&b);
  hs_error err = {0};
  *st = hs_rest_commit_body(old, m, &b, n, &err);
  json_t *j = *st == HS_OK ? json_loadb((const char *)b.data, b.len, 0, NULL) : NULL;
  if (*st != HS_OK) CHECK(err.message[0] != '\0');
  hs_buf_free(&b);
  return j;
}

/* The update (or requirement, by "type") of kind `name` in `arr`. */
static json_t *find(json_t *j, const char *arr, const char *key, const char *name) {
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(j, arr), i, e) {
    json_t *v = json_object_get(e, key);
    if (json_is_string(v) && strcmp(json_string_value(v), name) == 0) return e;
  }
  return NULL;
}

static void test_commit_body(void) {
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_metadata old;
  hs_error err = {0};
  CHECK_OK(hs_iceberg_metadata_parse(META, strlen(META), &a, &old, &err), &err);
  size_t n = 0;
  hs_status st;

  /* Nothing changed (but the time): no updates. */
  hs_iceberg_metadata m = old;
  m.last_updated_ms = 5000;
  json_t *j = body_of(&old, &m, &n, &st);
  CHECK(st == HS_OK && n == 0);
  json_decref(j);

  /* Properties: one changed, one added, one removed. */
  m = old;
  hs_iceberg_kv props[] = {{"a", "9"}, {"c", "3"}};
  m.properties = props;
  m.n_properties = 2;
  j = body_of(&old, &m, &n, &st);
  CHECK(st == HS_OK && n == 2);
  json_t *u = find(j, "updates", "action", "set-properties");
  CHECK(u != NULL && json_object_size(json_object_get(u, "updates")) == 2);
  CHECK(u != NULL &&
        strcmp(json_string_value(json_object_get(json_object_get(u, "updates"), "a")), "9") == 0);
  u = find(j, "updates", "action", "remove-properties");
  CHECK(u != NULL && json_array_size(json_object_get(u, "removals")) == 1);
  CHECK(json_array_size(json_object_get(j, "requirements")) == 1);
  CHECK(find(j, "requirements", "type", "assert-table-uuid") != NULL);
  json_decref(j);

  /* An append: a snapshot added, main moved (asserting the old one). */
  m = old;
  hs_iceberg_snapshot snaps[2];
  snaps[0] = old.snapshots[0];
  snaps[1] = old.snapshots[0];
  snaps[1].snapshot_id = 22;
  snaps[1].has_parent_snapshot_id = true;
  snaps[1].parent_snapshot_id = 11;
  snaps[1].sequence_number = 2;
  m.snapshots = snaps;
  m.n_snapshots = 2;
  hs_iceberg_ref refs[1];
  refs[0] = old.refs[0];
  refs[0].snapshot_id = 22;
  m.refs = refs;
  m.current_snapshot_id = 22;
  m.last_sequence_number = 2;
  j = body_of(&old, &m, &n, &st);
  CHECK(st == HS_OK && n == 2);
  u = find(j, "updates", "action", "add-snapshot");
  CHECK(u != NULL &&
        json_integer_value(json_object_get(json_object_get(u, "snapshot"), "snapshot-id")) == 22);
  u = find(j, "updates", "action", "set-snapshot-ref");
  CHECK(u != NULL && strcmp(json_string_value(json_object_get(u, "ref-name")), "main") == 0 &&
        json_integer_value(json_object_get(u, "snapshot-id")) == 22);
  json_t *r = find(j, "requirements", "type", "assert-ref-snapshot-id");
  CHECK(r != NULL && json_integer_value(json_object_get(r, "snapshot-id")) == 11);
  json_decref(j);

  /* Expiry: the old snapshot removed (as a later version's edit). */
  hs_iceberg_metadata m2 = m;
  m2.snapshots = &snaps[1];
  m2.n_snapshots = 1;
  j = body_of(&m, &m2, &n, &st);
  CHECK(st == HS_OK && n == 1);
  u = find(j, "updates", "action", "remove-snapshots");
  CHECK(u != NULL && json_array_size(json_object_get(u, "snapshot-ids")) == 1 &&
        json_integer_value(json_array_get(json_object_get(u, "snapshot-ids"), 0)) == 11);
  json_decref(j);

  /* A first snapshot: main did not exist (assert null). */
  hs_iceberg_metadata empty = old;
  empty.n_refs = 0;
  empty.n_snapshots = 0;
  empty.has_current_snapshot_id = false;
  m2 = old;
  j = body_of(&empty, &m2, &n, &st);
  CHECK(st == HS_OK);
  r = find(j, "requirements", "type", "assert-ref-snapshot-id");
  CHECK(r != NULL && json_is_null(json_object_get(r, "snapshot-id")));
  json_decref(j);

  /* A schema change: add-schema, set-current-schema and its requirements. */
  m = old;
  hs_iceberg_schema schemas[2];
  schemas[0] = old.schemas[0];
  schemas[1] = old.schemas[0];
  schemas[1].schema_id = 1;
  m.schemas = schemas;
  m.n_schemas = 2;
  m.current_schema_id = 1;
  m.last_column_id = 3;
  j = body_of(&old, &m, &n, &st);
  CHECK(st == HS_OK && n == 2);
  u = find(j, "updates", "action", "add-schema");
  CHECK(u != NULL && json_integer_value(json_object_get(u, "last-column-id")) == 3);
  u = find(j, "updates", "action", "set-current-schema");
  CHECK(u != NULL && json_integer_value(json_object_get(u, "schema-id")) == 1);
  r = find(j, "requirements", "type", "assert-current-schema-id");
  CHECK(r != NULL && json_integer_value(json_object_get(r, "current-schema-id")) == 0);
  r = find(j, "requirements", "type", "assert-last-assigned-field-id");
  CHECK(r != NULL && json_integer_value(json_object_get(r, "last-assigned-field-id")) == 2);
  json_decref(j);

  /* What no update expresses is refused by name. */
  m = old;
  m.location = "/elsewhere";
  j = body_of(&old, &m, &n, &st);
  CHECK(st == HS_ERR_UNSUPPORTED && j == NULL);
  hs_arena_reset(&a);
}

static void test_parsers(void) {
  hs_arena a;
  hs_arena_init(&a);
  hs_error err = {0};
  hs_rest_error e;
  const char *doc =
      "{\"error\":{\"message\":\"Table does not exist: db.t\","
      "\"type\":\"NoSuchTableException\",\"code\":404}}";
  CHECK(hs_rest_parse_error(doc, strlen(doc), &e));
  CHECK(e.code == 404 && strcmp(e.type, "NoSuchTableException") == 0);
  CHECK(!hs_rest_parse_error("{\"error\":1}", 11, &e));
  CHECK(!hs_rest_parse_error("<html>", 6, &e));

  hs_rest_config c;
  const char *cfg = "{\"defaults\":{\"x\":\"1\"},\"overrides\":{\"prefix\":\"p\"}}";
  CHECK_OK(hs_rest_parse_config(cfg, strlen(cfg), &a, &c, &err), &err);
  CHECK(c.n_defaults == 1 && c.n_overrides == 1 && strcmp(c.overrides[0].value, "p") == 0);
  const char *bad = "{\"defaults\":{\"x\":1}}";
  CHECK(hs_rest_parse_config(bad, strlen(bad), &a, &c, &err) == HS_ERR_CORRUPT);
  CHECK(strstr(err.message, "defaults.x") != NULL);

  const char *tok = NULL;
  memset(&err, 0, sizeof err);
  const char *t1 = "{\"access_token\":\"abc\",\"token_type\":\"bearer\"}";
  CHECK_OK(hs_rest_parse_token(t1, strlen(t1), &a, &tok, &err), &err);
  CHECK(tok != NULL && strcmp(tok, "abc") == 0);
  const char *t2 = "{\"access_token\":\"abc\",\"token_type\":\"mac\"}";
  CHECK(hs_rest_parse_token(t2, strlen(t2), &a, &tok, &err) == HS_ERR_UNSUPPORTED);
  memset(&err, 0, sizeof err);
  const char *t3 = "{\"access_token\":\"a\\nb\"}";
  CHECK(hs_rest_parse_token(t3, strlen(t3), &a, &tok, &err) == HS_ERR_CORRUPT);

  char **names = NULL;
  size_t n = 0;
  const char *next = NULL;
  memset(&err, 0, sizeof err);
  const char *ns = "{\"namespaces\":[[\"a\"],[\"a\",\"b\"]],\"next-page-token\":\"tok\"}";
  CHECK_OK(hs_rest_parse_namespaces(ns, strlen(ns), &a, &names, &n, &next, &err), &err);
  CHECK(n == 2 && strcmp(names[1], "a.b") == 0 && next != NULL && strcmp(next, "tok") == 0);
  const char *dotted = "{\"namespaces\":[[\"a.b\"]]}";
  CHECK(hs_rest_parse_namespaces(dotted, strlen(dotted), &a, &names, &n, &next, &err) ==
        HS_ERR_UNSUPPORTED);
  memset(&err, 0, sizeof err);
  const char *tl = "{\"identifiers\":[{\"namespace\":[\"a\",\"b\"],\"name\":\"t\"}]}";
  CHECK_OK(hs_rest_parse_tables(tl, strlen(tl), &a, &names, &n, &next, &err), &err);
  CHECK(n == 1 && strcmp(names[0], "a.b.t") == 0 && next == NULL);

  hs_buf load;
  hs_buf_init(&load);
  hs_buf_printf(&load,
                "{\"metadata-location\":\"/w/db/t/metadata/00001-x.metadata.json\","
                "\"metadata\":%s,\"config\":{\"s3.access-key-id\":\"AK\",\"x.y\":\"z\"}}",
                META);
  const char *loc = NULL;
  hs_iceberg_metadata m;
  hs_store_option *vended = NULL;
  size_t n_vended = 0;
  CHECK_OK(
      hs_rest_parse_load((const char *)load.data, load.len, &a, &loc, &m, &vended, &n_vended, &err),
      &err);
  CHECK(loc != NULL && m.n_snapshots == 1 && m.current_snapshot_id == 11);
  CHECK(n_vended == 2 && strcmp(vended[0].key, "s3.access-key-id") == 0 &&
        strcmp(vended[0].value, "AK") == 0 && strcmp(vended[1].key, "x.y") == 0);
  /* A config value that is not a string is an error naming the key. */
  hs_buf badcfg;
  hs_buf_init(&badcfg);
  hs_buf_printf(&badcfg,
                "{\"metadata-location\":\"/w/m.json\",\"metadata\":%s,"
                "\"config\":{\"s3.endpoint\":7}}",
                META);
  hs_error e3 = {0};
  CHECK(hs_rest_parse_load((const char *)badcfg.data, badcfg.len, &a, &loc, &m, &vended, &n_vended,
                           &e3) == HS_ERR_CORRUPT &&
        strstr(e3.message, "s3.endpoint") != NULL);
  hs_buf_free(&badcfg);

  /* Every prefix of every good answer: an error that says what, never a crash. */
  const char *goods[] = {doc, cfg, t1, ns, tl, (const char *)load.data};
  size_t lens[] = {strlen(doc), strlen(cfg), strlen(t1), strlen(ns), strlen(tl), load.len};
  for (size_t g = 0; g < 6; g++)
    for (size_t cut = 0; cut < lens[g]; cut++) {
      hs_error e2 = {0};
      hs_status s2 = HS_OK;
      switch (g) {
      case 0: (void)hs_rest_parse_error(goods[g], cut, &e); break;
      case 1: s2 = hs_rest_parse_config(goods[g], cut, &a, &c, &e2); break;
      case 2: s2 = hs_rest_parse_token(goods[g], cut, &a, &tok, &e2); break;
      case 3: s2 = hs_rest_parse_namespaces(goods[g], cut, &a, &names, &n, &next, &e2); break;
      case 4: s2 = hs_rest_parse_tables(goods[g], cut, &a, &names, &n, &next, &e2); break;
      default: s2 = hs_rest_parse_load(goods[g], cut, &a, &loc, &m, &vended, &n_vended, &e2); break;
      }
      if (g > 0) CHECK(s2 != HS_OK && e2.message[0] != '\0');
    }
  hs_buf_free(&load);
  hs_arena_reset(&a);
}

static void test_encoding(void) {
  hs_buf b;
  hs_buf_init(&b);
  CHECK(hs_rest_encode_namespace(&b, "a.b c.d/e"));
  CHECK(b.len == strlen("a%1Fb%20c%1Fd%2Fe") && memcmp(b.data, "a%1Fb%20c%1Fd%2Fe", b.len) == 0);
  hs_buf_free(&b);
}

static void test_not_connected(void) {
  hs_table *t = NULL;
  hs_error err = {0};
  CHECK(hs_table_open("rest://127.0.0.1:1#db.t", &t, &err) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "no catalog connected") != NULL);
  memset(&err, 0, sizeof err);
  hs_catalog_option o = {"color", "blue"};
  CHECK(hs_catalog_connect("rest://127.0.0.1:1", &o, 1, &err) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "unknown catalog option 'color'") != NULL);
  memset(&err, 0, sizeof err);
  CHECK(hs_catalog_connect("http://127.0.0.1:1", NULL, 0, &err) == HS_ERR_INVALID_ARG);
}

/* ------------------------------------------------- against the server */

#define SERVER_JAR "build/jars/rest/iceberg-open-api-1.10.0-test-fixtures.jar"

static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  int port = -1;
  if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
      getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

static pid_t start_server(const char *dir, int port) {
  char wh[300], db[320], ports[16], log[300];
  snprintf(wh, sizeof wh, "%s/warehouse", dir);
  snprintf(db, sizeof db, "jdbc:sqlite:%s/catalog.db", dir);
  snprintf(ports, sizeof ports, "%d", port);
  snprintf(log, sizeof log, "%s/server.log", dir);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    FILE *f = freopen(log, "a", stdout);
    (void)f;
    dup2(STDOUT_FILENO, STDERR_FILENO);
    setenv("CATALOG_WAREHOUSE", wh, 1);
    setenv("CATALOG_URI", db, 1);
    setenv("CATALOG_REST_PORT", ports, 1);
    execlp("java", "java", "-Xmx512m", "-cp", "build/jars/rest/*",
           "org.apache.iceberg.rest.RESTCatalogServer", (char *)NULL);
    _exit(127);
  }
  return pid;
}

typedef struct writer {
  const char *uri;
  int64_t first;
  hs_status st;
} writer;

static void *write_rows(void *p) {
  writer *w = p;
  hs_table *t = NULL;
  hs_error err = {0};
  w->st = hs_table_open(w->uri, &t, &err);
  for (int i = 0; w->st == HS_OK && i < 5; i++)
    if (append_rows(t, w->first + 50 * i, 50) < 0) w->st = HS_ERR_INTERNAL;
  hs_table_free(t);
  return NULL;
}

static int64_t live_rows(hs_table *t) {
  int64_t rows = -1;
  hs_error err = {0};
  CHECK_OK(hs_table_count_rows(t, -1, &rows, NULL, NULL, &err), &err);
  return rows;
}

static void test_server(const char *catalog) {
  hs_error err = {0};
  hs_catalog_option o = {"warehouse", "wh"};
  hs_status st = HS_ERR_IO;
  for (int i = 0; i < 600 && st != HS_OK; i++) { /* the JVM starts in seconds */
    memset(&err, 0, sizeof err);
    st = hs_catalog_connect(catalog, &o, 1, &err);
    if (st != HS_OK) nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
  }
  CHECK_OK(st, &err);
  if (st != HS_OK) return;
  CHECK_OK(hs_catalog_create_namespace(catalog, "c", &err), &err);
  CHECK(hs_catalog_create_namespace(catalog, "c", &err) == HS_ERR_CONFLICT);
  CHECK(strstr(err.message, "AlreadyExists") != NULL);
  char uri[128];
  snprintf(uri, sizeof uri, "%s#c.t", catalog);
  struct ArrowSchema schema;
  make_schema(&schema);
  hs_table *t = NULL;
  memset(&err, 0, sizeof err);
  CHECK_OK(hs_table_create(uri, &schema, NULL, &t, &err), &err);
  schema.release(&schema);
  if (t == NULL) return;
  CHECK(t->catalog != NULL);
  CHECK(append_rows(t, 0, 100) >= 0);
  writer w[2] = {{uri, 1000, HS_OK}, {uri, 2000, HS_OK}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, write_rows, &w[i]);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  CHECK(w[0].st == HS_OK && w[1].st == HS_OK);
  CHECK_OK(hs_table_refresh(t, &err), &err);
  CHECK_EQ_INT(live_rows(t), 600);
  hs_table_snapshot_info *snaps = NULL;
  size_t n = 0;
  CHECK_OK(hs_table_snapshots(t, &snaps, &n, &err), &err);
  CHECK_EQ_INT(n, 11);
  hs_free(snaps);
  hs_table_free(t);
  t = NULL;
  CHECK_OK(hs_table_open(uri, &t, &err), &err);
  if (t != NULL) CHECK_EQ_INT(live_rows(t), 600);
  hs_table_free(t);
  char **names = NULL;
  CHECK_OK(hs_catalog_list_tables(catalog, "c", &names, &n, &err), &err);
  CHECK(n == 1 && names != NULL && strcmp(names[0], "c.t") == 0);
  hs_catalog_names_free(names, n);
  CHECK_OK(hs_catalog_drop_table(catalog, "c.t", 0, &err), &err);
  t = NULL;
  CHECK(hs_table_open(uri, &t, &err) == HS_ERR_NOT_FOUND);
  CHECK(strstr(err.message, "load table c.t: HTTP 404") != NULL);
  CHECK(t == NULL);
  memset(&err, 0, sizeof err);
  CHECK_OK(hs_catalog_drop_namespace(catalog, "c", &err), &err);
}

/* The index configuration's three-way merge: entries keyed by field id
 * (the column name when an entry has none), compared as JSON values. */
static void test_conf_merge(void) {
  hs_arena a;
  hs_arena_init(&a);
  const char *base = "[{\"field-id\":1,\"column\":\"a\",\"kind\":\"bitmap\"}]";
  /* they added b, we renamed a's kind: both kept */
  const char *theirs =
      "[{\"field-id\":1,\"column\":\"a\",\"kind\":\"bitmap\"},"
      "{\"field-id\":2,\"column\":\"b\",\"kind\":\"bitmap\"}]";
  const char *ours = "[{\"field-id\":1,\"column\":\"a\",\"kind\":\"none\"}]";
  const char *m = hs_rest_conf_merge3(base, theirs, ours, &a);
  json_t *j = m ? json_loads(m, 0, NULL) : NULL;
  CHECK(json_is_array(j) && json_array_size(j) == 2);
  CHECK(j && strcmp(json_string_value(json_object_get(json_array_get(j, 0), "kind")), "none") == 0);
  CHECK(j && json_integer_value(json_object_get(json_array_get(j, 1), "field-id")) == 2);
  json_decref(j);
  /* a renamed column is the same entry by field id: theirs' rename kept */
  const char *ren = "[{\"field-id\":1,\"column\":\"a2\",\"kind\":\"bitmap\"}]";
  m = hs_rest_conf_merge3(base, ren, base, &a);
  CHECK(m != NULL && strstr(m, "\"a2\"") != NULL && strstr(m, "\"a\"") == NULL);
  /* entries without field ids are keyed by column */
  m = hs_rest_conf_merge3("[]", "[{\"column\":\"x\"}]", "[{\"column\":\"y\"}]", &a);
  CHECK(m != NULL && strstr(m, "\"x\"") != NULL && strstr(m, "\"y\"") != NULL);
  /* theirs removed what we kept: removed */
  m = hs_rest_conf_merge3(theirs, base, theirs, &a);
  CHECK(m != NULL && strstr(m, "\"b\"") == NULL);
  /* nothing of theirs to keep, or a text that does not parse: no change */
  CHECK(hs_rest_conf_merge3(base, base, ours, &a) == NULL);
  CHECK(hs_rest_conf_merge3(base, "{not json", ours, &a) == NULL);
  CHECK(hs_rest_conf_merge3(base, "{\"an\":\"object\"}", ours, &a) == NULL);
  /* NULL (no property yet) is an empty list */
  m = hs_rest_conf_merge3(NULL, base, NULL, &a);
  CHECK(m != NULL && strstr(m, "\"a\"") != NULL);
  hs_arena_reset(&a);
}

int main(void) {
  test_conf_merge();
  test_commit_body();
  test_parsers();
  test_encoding();
  test_not_connected();
  if (access(SERVER_JAR, R_OK) != 0) {
    fprintf(stderr, "SKIP: %s missing (scripts/setup.sh test fetches it)\n", SERVER_JAR);
    return hs_test_finish("test_rest") != 0 ? 1 : 77;
  }
  char dir[] = "/tmp/hs_test_rest_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  int port = free_port();
  pid_t pid = start_server(dir, port);
  CHECK(pid > 0);
  char catalog[64];
  snprintf(catalog, sizeof catalog, "rest://127.0.0.1:%d", port);
  if (pid > 0) test_server(catalog);
  if (pid > 0) {
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return hs_test_finish("test_rest");
}

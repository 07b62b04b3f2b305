/*
 * test_s3.c — the S3 backend (src/io/s3*.c) against a real S3 server:
 * versitygw (scripts/setup.sh installs it into build/tools), started here on
 * a free 127.0.0.1 port over a temporary directory. Locations and options
 * are built by hand and the calls go through hs_store_s3_backend directly.
 * Checks: put/get round trips of many sizes (0 bytes to 20 MiB, multipart
 * past 8 MiB), ranged reads vs the bytes put, 50 concurrent ranges vs brute
 * force, HEAD, conditional PUTs (one winner of eight threads), listing past
 * 1000 keys (continuation) both ways, put_many (and its cleanup on
 * failure), delete, missing keys and buckets, a wrong secret, keys with
 * spaces, unicode and '+', sources and sinks (stamped), and a table on S3
 * through table.c (create, appends, a second handle's reopen, refresh and
 * time travel, '..' refused), its delete files (position deletes, deletion
 * vectors, equality deletes) written as objects. Without a server, on a
 * canned HTTP server: retries, conditional PUTs whose answer was lost (read
 * back: our bytes → won), allow_http, HEADs for 0-byte ranges. Exit code 77 (a skip)
 * only when no versitygw binary exists. Runs under ASan too.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hs_test.h"
#include "hs_table_fixture.h"
#include "io/io.h"
#include "io/s3_internal.h"
#include "io/store_internal.h"
#include "table/deletes.h"
#include "table/deletes_eq.h"
#include "table/table.h"

static const hs_store_backend *B = &hs_store_s3_backend;
static hs_store_config cfg;
static pid_t server = -1;
static char server_dir[256];
static const char *bucket = "hs-test";

/* A location: bucket, key and URI held together. */
typedef struct tloc {
  hs_store_loc loc;
  char key[512];
  char uri[640];
} tloc;

static const hs_store_loc *at_cfg(tloc *t, const char *bkt, const char *key,
                                  const hs_store_config *c) {
  memset(t, 0, sizeof *t);
  snprintf(t->key, sizeof t->key, "%s", key);
  snprintf(t->uri, sizeof t->uri, "s3://%s/%s", bkt, key);
  t->loc.kind = HS_STORE_S3;
  t->loc.uri = t->uri;
  snprintf(t->loc.bucket, sizeof t->loc.bucket, "%s", bkt);
  t->loc.key = t->key;
  t->loc.cfg = c;
  return &t->loc;
}

static const hs_store_loc *at(tloc *t, const char *key) {
  return at_cfg(t, bucket, key, &cfg);
}

static uint8_t *random_bytes(size_t n, uint64_t seed) {
  uint8_t *p = malloc(n ? n : 1);
  uint64_t s = seed;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = hs_test_rand(&s);
    memcpy(p + i, &v, n - i < 8 ? n - i : 8);
  }
  return p;
}

/* ------------------------------------------------------------ server */

static const char *find_server(void) {
  static char path[512];
  const char *env = getenv("HS_VERSITYGW");
  if (env != NULL && access(env, X_OK) == 0) return env;
  if (access("build/tools/versitygw", X_OK) == 0) return "build/tools/versitygw";
  const char *p = getenv("PATH");
  while (p != NULL && *p) {
    const char *c = strchr(p, ':');
    size_t n = c ? (size_t)(c - p) : strlen(p);
    snprintf(path, sizeof path, "%.*s/versitygw", (int)n, p);
    if (n > 0 && access(path, X_OK) == 0) return path;
    p = c ? c + 1 : NULL;
  }
  return NULL;
}

static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  close(fd);
  return ntohs(a.sin_port);
}

static bool port_open(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

static void stop_server(void) {
  if (server > 0) {
    kill(server, SIGTERM);
    waitpid(server, NULL, 0);
    server = -1;
  }
  if (server_dir[0] != '\0') {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", server_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", server_dir);
    server_dir[0] = '\0';
  }
}

static bool start_server(const char *bin) {
  snprintf(server_dir, sizeof server_dir, "/tmp/hs_test_s3_XXXXXX");
  if (mkdtemp(server_dir) == NULL) return false;
  char data[300], log[300];
  snprintf(data, sizeof data, "%s/data", server_dir);
  snprintf(log, sizeof log, "%s/versitygw.log", server_dir);
  mkdir(data, 0755);
  for (int tries = 0; tries < 5; tries++) {
    int port = free_port();
    if (port <= 0) return false;
    char listen[64];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
    fflush(stdout); /* or the child's freopen writes our buffered lines again */
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
      FILE *f = freopen(log, "a", stdout);
      (void)f;
      dup2(STDOUT_FILENO, STDERR_FILENO);
      execl(bin, bin, "--access", cfg.access_key, "--secret", cfg.secret_key, "--port", listen,
            "--quiet", "--keep-alive", "posix", data, (char *)NULL);
      _exit(127);
    }
    if (pid < 0) return false;
    server = pid;
    for (int i = 0; i < 200; i++) { /* up to 10 s */
      if (port_open(port)) {
        snprintf(cfg.endpoint, sizeof cfg.endpoint, "http://127.0.0.1:%d", port);
        return true;
      }
      int status;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        server = -1;
        break; /* died (the port was taken?): try another */
      }
      struct timespec ts = {0, 50 * 1000000L};
      nanosleep(&ts, NULL);
    }
    if (server > 0) {
      kill(server, SIGTERM);
      waitpid(server, NULL, 0);
      server = -1;
    }
  }
  fprintf(stderr, "versitygw did not start; see %s\n", log);
  return false;
}

/* ------------------------------------------------------------- tests */

static void roundtrip(const char *key, size_t n, uint64_t seed) {
  hs_error e = {0};
  tloc t;
  uint8_t *data = random_bytes(n, seed);
  CHECK_OK(B->put(at(&t, key), data, n, &e), &e);
  hs_buf out;
  hs_buf_init(&out);
  hs_object_info gi = {0}, hi = {0};
  e = (hs_error){0};
  CHECK_OK(B->get(at(&t, key), n + 10, &out, &gi, &e), &e);
  CHECK(out.len == n && (n == 0 || memcmp(out.data, data, n) == 0));
  CHECK(gi.size == n && gi.etag[0] != '\0');
  e = (hs_error){0};
  CHECK_OK(B->head(at(&t, key), &hi, &e), &e);
  CHECK(hi.size == n && strcmp(hi.etag, gi.etag) == 0 && strchr(hi.etag, '"') == NULL);
  CHECK(hi.mtime_ms > 1600000000000LL);
  if (n > (8u << 20)) CHECK(strchr(hi.etag, '-') != NULL); /* multipart etag */
  if (n > 0) { /* a limit below the size is HS_ERR_CORRUPT, and `out` is untouched */
    e = (hs_error){0};
    out.len = 0;
    CHECK(B->get(at(&t, key), n - 1, &out, NULL, &e) == HS_ERR_CORRUPT);
    CHECK(out.len == 0 && strstr(e.message, key) != NULL);
  }
  hs_buf_free(&out);
  free(data);
}

static void test_roundtrips(void) {
  size_t sizes[] = {0, 1, 17, 4096, 65543, 1 << 20, (8u << 20), (8u << 20) + 1, 20u << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    char key[64];
    snprintf(key, sizeof key, "rt/size-%zu.bin", sizes[i]);
    roundtrip(key, sizes[i], 100 + i);
  }
  uint64_t s = 7;
  for (int i = 0; i < 6; i++) {
    char key[64];
    size_t n = (size_t)(hs_test_rand(&s) % (3u << 20));
    snprintf(key, sizeof key, "rt/random-%d.bin", i);
    roundtrip(key, n, 200 + (uint64_t)i);
  }
}

static void test_ranges(void) {
  hs_error e = {0};
  tloc t;
  size_t n = 20u << 20;
  uint8_t *data = random_bytes(n, 108); /* rt/size-20971520.bin, put by test_roundtrips */
  const char *key = "rt/size-20971520.bin";
  uint64_t s = 99;
  uint8_t *buf = malloc(2u << 20);
  for (int i = 0; i < 40; i++) {
    size_t len = 1 + (size_t)(hs_test_rand(&s) % (i < 20 ? 4096 : (2u << 20)));
    uint64_t off = hs_test_rand(&s) % (n - len + 1);
    if (i == 0) off = 0;
    if (i == 1) off = n - len;
    e = (hs_error){0};
    CHECK_OK(B->get_range(at(&t, key), off, len, buf, &e), &e);
    CHECK(memcmp(buf, data + off, len) == 0);
  }
  /* Past the end: short (206 with fewer bytes) and entirely past (416). */
  e = (hs_error){0};
  CHECK(B->get_range(at(&t, key), n - 10, 20, buf, &e) == HS_ERR_CORRUPT);
  CHECK(strstr(e.message, key) != NULL);
  e = (hs_error){0};
  CHECK(B->get_range(at(&t, key), n + 5, 20, buf, &e) == HS_ERR_CORRUPT);
  e = (hs_error){0};
  CHECK_OK(B->get_range(at(&t, key), n, 0, buf, &e), &e);
  e = (hs_error){0};
  CHECK(B->get_range(at(&t, key), n + 1, 0, buf, &e) == HS_ERR_CORRUPT);
  e = (hs_error){0};
  CHECK(B->get_range(at(&t, "rt/missing"), 0, 10, buf, &e) == HS_ERR_NOT_FOUND);

  /* 50 ranges over two objects, many close together (coalesced). */
  size_t m = 3u << 20;
  uint8_t *data2 = random_bytes(m, 777);
  e = (hs_error){0};
  CHECK_OK(B->put(at(&t, "rg/second.bin"), data2, m, &e), &e);
  enum { NR = 50 };
  tloc locs_t[NR];
  hs_store_loc locs[NR];
  hs_store_range rs[NR];
  uint8_t *dsts[NR];
  for (int i = 0; i < NR; i++) {
    bool first = i % 3 != 0;
    size_t size = first ? n : m;
    size_t len = (size_t)(hs_test_rand(&s) % (i % 5 == 0 ? 300000 : 5000));
    uint64_t off;
    if (i % 2 == 0 && i > 0) { /* near the previous one */
      off = rs[i - 1].offset + (hs_test_rand(&s) % 70000);
      if (off + len > size) off = size - len;
    } else {
      off = hs_test_rand(&s) % (size - len + 1);
    }
    locs[i] = *at(&locs_t[i], first ? key : "rg/second.bin");
    dsts[i] = malloc(len ? len : 1);
    rs[i] = (hs_store_range){locs[i].uri, off, len, dsts[i]};
  }
  e = (hs_error){0};
  CHECK_OK(B->get_ranges(locs, rs, NR, &e), &e);
  for (int i = 0; i < NR; i++) {
    const uint8_t *src = (i % 3 != 0 ? data : data2) + rs[i].offset;
    CHECK(rs[i].len == 0 || memcmp(dsts[i], src, rs[i].len) == 0);
  }
  /* Zero-length ranges: at the end is fine, past it is HS_ERR_CORRUPT naming the object. */
  rs[0] = (hs_store_range){locs[0].uri, m, 0, dsts[0]}; /* rg/second.bin */
  rs[1] = (hs_store_range){locs[1].uri, n, 0, dsts[1]};
  e = (hs_error){0};
  CHECK_OK(B->get_ranges(locs, rs, NR, &e), &e);
  tloc zt[2];
  hs_store_loc zl[2] = {*at(&zt[0], "rg/second.bin"), *at(&zt[1], key)};
  hs_store_range zr[2] = {{zl[0].uri, m + 1, 0, dsts[0]}, {zl[1].uri, 0, 10, dsts[1]}};
  e = (hs_error){0};
  CHECK(B->get_ranges(zl, zr, 2, &e) == HS_ERR_CORRUPT);
  CHECK(strstr(e.message, "s3://hs-test/rg/second.bin") != NULL);
  printf("0-byte range past the end: %s\n", e.message);
  zl[0] = *at(&zt[0], "rg/missing.bin");
  zr[0].offset = 0;
  e = (hs_error){0};
  CHECK(B->get_ranges(zl, zr, 2, &e) == HS_ERR_NOT_FOUND);
  /* One range past an end fails the whole call. */
  rs[NR - 1].offset = m + 100;
  rs[NR - 1].len = 10;
  locs[NR - 1] = *at(&locs_t[NR - 1], "rg/second.bin");
  e = (hs_error){0};
  CHECK(B->get_ranges(locs, rs, NR, &e) == HS_ERR_CORRUPT);
  for (int i = 0; i < NR; i++) free(dsts[i]);
  free(data2);
  free(buf);
  free(data);
}

static const char *race_key = "cond/race";
static int race_wins;
static pthread_mutex_t race_mu = PTHREAD_MUTEX_INITIALIZER;
static char race_winner[32];

static void *race(void *arg) {
  long id = (long)arg;
  char body[32];
  snprintf(body, sizeof body, "writer %ld", id);
  tloc t;
  hs_error e = {0};
  bool won = false;
  hs_status st = B->put_if_absent(at(&t, race_key), body, strlen(body), &won, &e);
  pthread_mutex_lock(&race_mu);
  CHECK_OK(st, &e);
  if (won) {
    race_wins++;
    snprintf(race_winner, sizeof race_winner, "%s", body);
  }
  pthread_mutex_unlock(&race_mu);
  return NULL;
}

static void test_conditional(void) {
  hs_error e = {0};
  tloc t;
  bool won = false;
  CHECK_OK(B->put_if_absent(at(&t, "cond/a"), "one", 3, &won, &e), &e);
  CHECK(won);
  e = (hs_error){0};
  CHECK_OK(B->put_if_absent(at(&t, "cond/a"), "two", 3, &won, &e), &e);
  CHECK(!won);
  hs_buf out;
  hs_buf_init(&out);
  hs_object_info info;
  e = (hs_error){0};
  CHECK_OK(B->get(at(&t, "cond/a"), 100, &out, &info, &e), &e);
  CHECK(out.len == 3 && memcmp(out.data, "one", 3) == 0);

  pthread_t th[8];
  for (long i = 0; i < 8; i++) pthread_create(&th[i], NULL, race, (void *)i);
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  CHECK_EQ_INT(race_wins, 1);
  out.len = 0;
  e = (hs_error){0};
  CHECK_OK(B->get(at(&t, race_key), 100, &out, NULL, &e), &e);
  CHECK(out.len == strlen(race_winner) && memcmp(out.data, race_winner, out.len) == 0);

  /* If-Match: the current etag wins, the old one then loses. */
  char old[96];
  snprintf(old, sizeof old, "%s", info.etag);
  e = (hs_error){0};
  CHECK_OK(B->put_if_match(at(&t, "cond/a"), "three", 5, old, &won, &e), &e);
  CHECK(won);
  e = (hs_error){0};
  CHECK_OK(B->put_if_match(at(&t, "cond/a"), "four", 4, old, &won, &e), &e);
  CHECK(!won);
  out.len = 0;
  e = (hs_error){0};
  CHECK_OK(B->get(at(&t, "cond/a"), 100, &out, NULL, &e), &e);
  CHECK(out.len == 5 && memcmp(out.data, "three", 5) == 0);
  e = (hs_error){0};
  CHECK_OK(B->put_if_match(at(&t, "cond/none"), "x", 1, old, &won, &e), &e);
  CHECK(!won);
  hs_buf_free(&out);
}

/* hs_store_entries_free is store.c's; the backend's arrays are freed the same way. */
static void entries_free(hs_store_entry *es, size_t n) {
  for (size_t i = 0; i < n; i++) hs_free(es[i].name);
  hs_free(es);
}

static bool has_name(const hs_store_entry *es, size_t n, const char *name, bool is_dir) {
  for (size_t i = 0; i < n; i++) {
    if (strcmp(es[i].name, name) == 0 && es[i].is_dir == is_dir) return true;
  }
  return false;
}

static void test_list_and_put_many(void) {
  enum { NK = 1150 };
  static tloc lt[NK];
  static hs_store_loc locs[NK];
  static hs_store_put_item items[NK];
  static char names[NK][64];
  for (int i = 0; i < NK; i++) {
    snprintf(names[i], sizeof names[i], "%s/k%05d", i % 2 ? "a" : "b/deep", i);
    char key[96];
    snprintf(key, sizeof key, "many/%.60s", names[i]);
    locs[i] = *at(&lt[i], key);
    items[i] = (hs_store_put_item){lt[i].uri, names[i], strlen(names[i])};
  }
  hs_error e = {0};
  CHECK_OK(B->put_many(locs, items, NK, &e), &e);
  tloc t;
  e = (hs_error){0};
  CHECK_OK(B->put(at(&t, "many/top.txt"), "top", 3, &e), &e);

  hs_store_entry *es = NULL;
  size_t n = 0;
  e = (hs_error){0};
  CHECK_OK(B->list(at(&t, "many"), true, &es, &n, &e), &e);
  CHECK_EQ_INT(n, NK + 1);
  bool all = true, sorted = true;
  for (int i = 0; i < NK; i++) all = all && has_name(es, n, names[i], false);
  for (size_t i = 1; i < n; i++) sorted = sorted && strcmp(es[i - 1].name, es[i].name) < 0;
  CHECK(all && sorted && has_name(es, n, "top.txt", false));
  for (size_t i = 0; i < n; i++) {
    if (strcmp(es[i].name, "top.txt") == 0) CHECK(es[i].info.size == 3 && es[i].info.etag[0]);
  }
  entries_free(es, n);

  e = (hs_error){0};
  CHECK_OK(B->list(at(&t, "many/"), false, &es, &n, &e), &e);
  CHECK_EQ_INT(n, 3);
  CHECK(has_name(es, n, "a", true) && has_name(es, n, "b", true) &&
        has_name(es, n, "top.txt", false));
  entries_free(es, n);

  e = (hs_error){0};
  CHECK_OK(B->list(at(&t, "many/a"), false, &es, &n, &e), &e);
  CHECK_EQ_INT(n, NK / 2);
  entries_free(es, n);

  e = (hs_error){0};
  CHECK_OK(B->list(at(&t, "nothing/here"), true, &es, &n, &e), &e);
  CHECK_EQ_INT(n, 0);
  entries_free(es, n);

  /* put_many that fails (one object in a missing bucket): the others are gone. */
  tloc ft[4];
  hs_store_loc flocs[4];
  hs_store_put_item fitems[4];
  for (int i = 0; i < 4; i++) {
    char key[32];
    snprintf(key, sizeof key, "pm/f%d", i);
    flocs[i] = *at_cfg(&ft[i], i == 2 ? "no-such-bucket-hs" : bucket, key, &cfg);
    fitems[i] = (hs_store_put_item){ft[i].uri, "x", 1};
  }
  e = (hs_error){0};
  CHECK(B->put_many(flocs, fitems, 4, &e) == HS_ERR_NOT_FOUND);
  e = (hs_error){0};
  CHECK_OK(B->list(at(&t, "pm"), true, &es, &n, &e), &e);
  CHECK_EQ_INT(n, 0);
  entries_free(es, n);
}

static void test_delete_and_errors(void) {
  hs_error e = {0};
  tloc t;
  hs_object_info info;
  CHECK_OK(B->put(at(&t, "del/x"), "x", 1, &e), &e);
  e = (hs_error){0};
  CHECK_OK(B->del(at(&t, "del/x"), &e), &e);
  e = (hs_error){0};
  CHECK(B->head(at(&t, "del/x"), &info, &e) == HS_ERR_NOT_FOUND);
  e = (hs_error){0};
  CHECK_OK(B->del(at(&t, "del/x"), &e), &e); /* missing is fine */
  CHECK_OK(B->mkdirs(at(&t, "del/dir"), &e), &e);

  hs_buf out;
  hs_buf_init(&out);
  e = (hs_error){0};
  CHECK(B->get(at(&t, "no/such/key"), 100, &out, NULL, &e) == HS_ERR_NOT_FOUND);
  CHECK(strstr(e.message, "s3://hs-test/no/such/key") != NULL && strstr(e.message, "GET"));
  printf("missing key: %s\n", e.message);
  e = (hs_error){0};
  CHECK(B->get(at_cfg(&t, "no-such-bucket-hs", "k", &cfg), 100, &out, NULL, &e) ==
        HS_ERR_NOT_FOUND);
  CHECK(strstr(e.message, "bucket no-such-bucket-hs does not exist") != NULL);
  printf("missing bucket: %s\n", e.message);

  hs_store_config bad = cfg;
  snprintf(bad.secret_key, sizeof bad.secret_key, "wrong-secret");
  e = (hs_error){0};
  CHECK(B->get(at_cfg(&t, bucket, "rt/size-17.bin", &bad), 100, &out, NULL, &e) == HS_ERR_IO);
  CHECK(strstr(e.message, "403 SignatureDoesNotMatch") != NULL);
  printf("wrong secret: %s\n", e.message);

  hs_store_config dead = cfg; /* nothing listens: connection refused, retried, then IO */
  snprintf(dead.endpoint, sizeof dead.endpoint, "http://127.0.0.1:1");
  dead.max_retries = 2;
  e = (hs_error){0};
  CHECK(B->get(at_cfg(&t, bucket, "k", &dead), 100, &out, NULL, &e) == HS_ERR_IO);
  CHECK(strstr(e.message, "after 3 tries") != NULL);
  printf("no server: %s\n", e.message);
  hs_buf_free(&out);
}

static void test_odd_keys(void) {
  const char *keys[] = {"odd/with space.txt", "odd/ünïcødé/日本語.bin", "odd/a+b=c&d.txt",
                        "odd/percent%20and~tilde", "odd/quote'\"<xml>&amp;"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    hs_error e = {0};
    tloc t;
    CHECK_OK(B->put(at(&t, keys[i]), keys[i], strlen(keys[i]), &e), &e);
    hs_buf out;
    hs_buf_init(&out);
    e = (hs_error){0};
    CHECK_OK(B->get(at(&t, keys[i]), 1000, &out, NULL, &e), &e);
    CHECK(out.len == strlen(keys[i]) && memcmp(out.data, keys[i], out.len) == 0);
    hs_buf_free(&out);
  }
  hs_store_entry *es = NULL;
  size_t n = 0;
  hs_error e = {0};
  tloc t;
  CHECK_OK(B->list(at(&t, "odd"), true, &es, &n, &e), &e);
  CHECK_EQ_INT(n, sizeof keys / sizeof keys[0]);
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    CHECK(has_name(es, n, keys[i] + 4, false));
  }
  entries_free(es, n);
}

static void test_source_sink(void) {
  hs_error e = {0};
  tloc t;
  size_t n = (10u << 20) + 12345;
  uint8_t *data = random_bytes(n, 4242);
  hs_sink *sink = NULL;
  CHECK_OK(B->sink_open(at(&t, "ss/big.bin"), &sink, &e), &e);
  for (size_t at_ = 0; sink != NULL && at_ < n;) {
    size_t k = 300000 < n - at_ ? 300000 : n - at_;
    CHECK_OK(hs_sink_write(sink, data + at_, k, &e), &e);
    at_ += k;
  }
  if (sink != NULL) {
    CHECK(hs_sink_offset(sink) == n);
    CHECK_OK(hs_sink_close(sink, &e), &e);
  }
  hs_source *src = NULL;
  e = (hs_error){0};
  CHECK_OK(B->source_open(at(&t, "ss/big.bin"), &src, &e), &e);
  if (src != NULL) {
    CHECK(hs_source_size(src) == n);
    uint8_t buf[1000];
    CHECK_OK(hs_source_read(src, n - 1000, 1000, buf, &e), &e);
    CHECK(memcmp(buf, data + n - 1000, 1000) == 0);
    hs_buf scratch;
    hs_buf_init(&scratch);
    const uint8_t *view = NULL;
    CHECK_OK(hs_source_view(src, 9u << 20, 4096, &scratch, &view, &e), &e);
    CHECK(view != NULL && memcmp(view, data + (9u << 20), 4096) == 0);
    e = (hs_error){0};
    CHECK(hs_source_read(src, n - 10, 20, buf, &e) == HS_ERR_CORRUPT);
    hs_buf_free(&scratch);
    hs_source_ref(src);
    hs_source_unref(src);
    hs_source_unref(src);
  }
  /* Many parts at once, out of order: a put of 6 parts and a sink fed
   * chunks from 1 byte to 20 MiB (split into 8 MiB parts), read back whole. */
  size_t nb = (45u << 20) + 777;
  uint8_t *big = random_bytes(nb, 999);
  hs_buf back;
  hs_buf_init(&back);
  hs_object_info bi;
  e = (hs_error){0};
  CHECK_OK(B->put(at(&t, "ss/put6.bin"), big, nb, &e), &e);
  CHECK_OK(B->get(at(&t, "ss/put6.bin"), nb, &back, &bi, &e), &e);
  CHECK(back.len == nb && memcmp(back.data, big, nb) == 0);
  CHECK_OK(B->head(at(&t, "ss/put6.bin"), &bi, &e), &e);
  CHECK(strlen(bi.etag) > 2 && strcmp(bi.etag + strlen(bi.etag) - 2, "-6") == 0);
  e = (hs_error){0};
  CHECK_OK(B->sink_open(at(&t, "ss/sink6.bin"), &sink, &e), &e);
  size_t chunks[] = {1, 1u << 20, 20u << 20, 3, (3u << 20) + 5, 12u << 20};
  size_t fed = 0;
  for (size_t i = 0; sink != NULL && fed < nb; i++) {
    size_t k = chunks[i % 6] < nb - fed ? chunks[i % 6] : nb - fed;
    CHECK_OK(hs_sink_write(sink, big + fed, k, &e), &e);
    fed += k;
  }
  if (sink != NULL) CHECK_OK(hs_sink_close(sink, &e), &e);
  back.len = 0;
  e = (hs_error){0};
  CHECK_OK(B->get(at(&t, "ss/sink6.bin"), nb, &back, NULL, &e), &e);
  CHECK(back.len == nb && memcmp(back.data, big, nb) == 0);
  CHECK_OK(B->head(at(&t, "ss/sink6.bin"), &bi, &e), &e);
  CHECK(strlen(bi.etag) > 2 && strcmp(bi.etag + strlen(bi.etag) - 2, "-6") == 0);
  /* Aborted with parts in flight: nothing is there. */
  e = (hs_error){0};
  CHECK_OK(B->sink_open(at(&t, "ss/aborted6.bin"), &sink, &e), &e);
  CHECK_OK(hs_sink_write(sink, big, 40u << 20, &e), &e);
  hs_sink_abort(sink);
  e = (hs_error){0};
  CHECK(B->head(at(&t, "ss/aborted6.bin"), &bi, &e) == HS_ERR_NOT_FOUND);
  hs_buf_free(&back);
  free(big);

  /* A small sink is one PUT; an aborted one leaves nothing. */
  e = (hs_error){0};
  CHECK_OK(B->sink_open(at(&t, "ss/small.txt"), &sink, &e), &e);
  CHECK_OK(hs_sink_write(sink, "small", 5, &e), &e);
  CHECK_OK(hs_sink_close(sink, &e), &e);
  hs_object_info info;
  CHECK_OK(B->head(at(&t, "ss/small.txt"), &info, &e), &e);
  CHECK(info.size == 5);
  CHECK_OK(B->sink_open(at(&t, "ss/aborted.bin"), &sink, &e), &e);
  CHECK_OK(hs_sink_write(sink, data, 9u << 20, &e), &e); /* starts a multipart upload */
  hs_sink_abort(sink);
  e = (hs_error){0};
  CHECK(B->head(at(&t, "ss/aborted.bin"), &info, &e) == HS_ERR_NOT_FOUND);
  e = (hs_error){0};
  CHECK(B->source_open(at(&t, "ss/missing"), &src, &e) == HS_ERR_NOT_FOUND);
  free(data);
}

/* The block cache (s3_cache.c; HS_S3_CACHE_MB=1 from main: 16 blocks):
 * random small reads through a source equal the bytes, with fewer GETs
 * than reads; a repeated read costs nothing; an object replaced while a
 * source over it is open is a clear HS_ERR_CONFLICT, and a new source
 * reads the new bytes. */
static void test_cache(void) {
  hs_error e = {0};
  tloc t;
  size_t n = (3u << 20) + 777;
  uint8_t *data = random_bytes(n, 77);
  CHECK_OK(B->put(at(&t, "cache/obj.bin"), data, n, &e), &e);
  hs_source *src = NULL;
  CHECK_OK(B->source_open(at(&t, "cache/obj.bin"), &src, &e), &e);
  if (src == NULL) {
    free(data);
    return;
  }
  hs_io_stats before, after;
  hs_io_stats_get(&before);
  uint64_t rng = 12345;
  uint8_t *buf = malloc(200000);
  int reads = 0;
  for (int i = 0; i < 400; i++) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    /* Near a few hot spots (block edges and the end) or anywhere. */
    uint64_t r = rng >> 11;
    size_t len = 1 + (size_t)(r % ((i % 7 == 0) ? 150000 : 3000));
    uint64_t off = (i % 3 == 0) ? (uint64_t)(r % (n - len + 1))
                                : (uint64_t)((r % 4) * 65536 + (r % 200)) % (n - len + 1);
    if (i % 11 == 0) off = n - len;
    e = (hs_error){0};
    CHECK_OK(hs_source_read(src, off, len, buf, &e), &e);
    CHECK(memcmp(buf, data + off, len) == 0);
    reads++;
  }
  hs_io_stats_get(&after);
  CHECK(after.gets - before.gets < (uint64_t)reads / 2);
  CHECK_OK(hs_source_read(src, 70000, 100, buf, &e), &e);
  hs_io_stats_get(&before);
  CHECK_OK(hs_source_read(src, 70000, 100, buf, &e), &e);
  hs_io_stats_get(&after);
  CHECK(after.requests == before.requests && memcmp(buf, data + 70000, 100) == 0);
  /* Replaced under the open source: a block it has not read is refused. */
  uint8_t *other = random_bytes(n, 78);
  CHECK_OK(B->put(at(&t, "cache/obj.bin"), other, n, &e), &e);
  e = (hs_error){0};
  CHECK(hs_source_read(src, n / 2 + 100000, 10, buf, &e) == HS_ERR_CONFLICT);
  CHECK(strstr(e.message, "changed while it was being read") != NULL);
  hs_source_unref(src);
  e = (hs_error){0};
  CHECK_OK(B->source_open(at(&t, "cache/obj.bin"), &src, &e), &e);
  if (src != NULL) {
    CHECK_OK(hs_source_read(src, 70000, 100, buf, &e), &e);
    CHECK(memcmp(buf, other + 70000, 100) == 0);
    hs_source_unref(src);
  }
  free(other);
  free(buf);
  free(data);
}

/* hs_store_prefetch on S3 (s3_prefetch.c): one wave of GETs brings the
 * ranges and tails asked for into the block cache (nearby ranges of an
 * object share a GET; a missing object is no error), so the reads that
 * follow make no request and return the objects' bytes; a second prefetch
 * of the same fetches nothing; an object replaced since is forgotten by
 * the If-Match refusal and read anew. And list_prefixes equals
 * list_prefix one by one, in one round trip. */
static void test_prefetch(void) {
  hs_error e = {0};
  tloc ta, tb, tc;
  size_t na = 300000, nb = 50000;
  uint8_t *a = random_bytes(na, 91), *b = random_bytes(nb, 92);
  CHECK_OK(B->put(at(&ta, "pf/a.bin"), a, na, &e), &e);
  CHECK_OK(B->put(at(&tb, "pf/b.bin"), b, nb, &e), &e);
  at(&tc, "pf/missing.bin");
  hs_s3_cache_forget(&ta.loc); /* small PUTs are kept: start cold */
  hs_s3_cache_forget(&tb.loc);
  hs_store_loc locs[5] = {ta.loc, ta.loc, tb.loc, ta.loc, tc.loc};
  hs_store_prefetch_item items[5] = {{ta.uri, 0, 100000, true, false},
                                     {ta.uri, 200000, 5000, false, false},
                                     {tb.uri, 0, nb, false, false},
                                     {ta.uri, 210000, 100, false, false},
                                     {tc.uri, 0, 10, false, false}};
  hs_io_stats before, after;
  hs_io_stats_get(&before);
  size_t gets = B->prefetch(locs, items, 5, HS_STORE_PREFETCH_MAX);
  hs_io_stats_get(&after);
  CHECK(gets == 4); /* a's tail, a's two near ranges as one, b, the missing one */
  CHECK(after.gets - before.gets == 4 && after.round_trips - before.round_trips == 1);
  uint8_t buf[6000];
  hs_io_stats_get(&before);
  hs_source *src = NULL;
  CHECK_OK(B->source_open(&ta.loc, &src, &e), &e);
  if (src != NULL) {
    CHECK_OK(hs_source_read(src, na - 5000, 5000, buf, &e), &e);
    CHECK(memcmp(buf, a + na - 5000, 5000) == 0);
    CHECK_OK(hs_source_read(src, 200000, 5000, buf, &e), &e);
    CHECK(memcmp(buf, a + 200000, 5000) == 0);
    CHECK_OK(hs_source_read(src, 210000, 100, buf, &e), &e);
    CHECK(memcmp(buf, a + 210000, 100) == 0);
    hs_source_unref(src);
  }
  hs_buf whole;
  hs_buf_init(&whole);
  hs_object_info info;
  CHECK_OK(B->get(&tb.loc, nb, &whole, &info, &e), &e);
  CHECK(whole.len == nb && memcmp(whole.data, b, nb) == 0);
  hs_io_stats_get(&after);
  CHECK(after.requests == before.requests);
  CHECK(B->prefetch(locs, items, 4, HS_STORE_PREFETCH_MAX) == 0); /* all held */
  /* Replaced: the prefetch's If-Match fails, the name is forgotten, and
   * the next read sees the new bytes. */
  uint8_t *b2 = random_bytes(nb, 93);
  CHECK_OK(hs_s3_put(&tb.loc, b2, nb, &e), &e);
  hs_s3_cache_head_put(&tb.loc, &info); /* as if another writer replaced it */
  CHECK(B->prefetch(&locs[2], &items[2], 1, HS_STORE_PREFETCH_MAX) == 1);
  whole.len = 0;
  CHECK_OK(B->get(&tb.loc, nb, &whole, NULL, &e), &e);
  CHECK(whole.len == nb && memcmp(whole.data, b2, nb) == 0);
  hs_buf_free(&whole);
  /* list_prefixes: the same entries as list_prefix, one wave. */
  tloc tp[3];
  hs_store_loc pl[3] = {*at(&tp[0], "many/a/k0"), *at(&tp[1], "many/b/deep/k01"),
                        *at(&tp[2], "many/none")};
  hs_store_entry *outs[3];
  size_t nouts[3];
  hs_io_stats_get(&before);
  CHECK_OK(B->list_prefixes(pl, 3, outs, nouts, NULL, NULL, 0, NULL, NULL, 0, 0, &e), &e);
  hs_io_stats_get(&after);
  CHECK(after.round_trips - before.round_trips == 1 && after.lists - before.lists == 3);
  for (int i = 0; i < 3; i++) {
    hs_store_entry *one = NULL;
    size_t n1 = 0;
    CHECK_OK(B->list_prefix(&pl[i], &one, &n1, &e), &e);
    CHECK(n1 == nouts[i]);
    for (size_t k = 0; k < n1 && k < nouts[i]; k++)
      CHECK(strcmp(one[k].name, outs[i][k].name) == 0 && one[k].info.size == outs[i][k].info.size);
    hs_store_entries_free(one, n1);
    hs_store_entries_free(outs[i], nouts[i]);
  }
  CHECK(nouts[0] > 0 && nouts[2] == 0);
  free(a);
  free(b);
  free(b2);
}

/* Exact prefetches (rows, pages): 60 scattered 3 KiB ranges of one
 * object (two of them 1 KiB apart: one GET) in one round trip of exactly
 * their bytes, not widened to 64 KiB blocks; reads inside them make no
 * request and return the object's bytes, a read outside them fetches. */
static void test_prefetch_exact(void) {
  hs_error e = {0};
  tloc ta;
  size_t na = 13u << 20, per = 3072, n = 60;
  uint8_t *a = random_bytes(na, 97);
  CHECK_OK(B->put(at(&ta, "pfx/a.bin"), a, na, &e), &e);
  hs_s3_cache_forget(&ta.loc);
  hs_store_loc *locs = calloc(n, sizeof *locs);
  hs_store_prefetch_item *items = calloc(n, sizeof *items);
  for (size_t i = 0; i < n; i++) {
    uint64_t off = i == 1 ? per + 1024 : (uint64_t)i * 13 * per;
    locs[i] = ta.loc;
    items[i] = (hs_store_prefetch_item){ta.uri, off, per, false, true};
  }
  hs_io_stats before, after;
  hs_io_stats_get(&before);
  size_t gets = B->prefetch(locs, items, n, HS_STORE_PREFETCH_MAX);
  hs_io_stats_get(&after);
  CHECK_EQ_INT(gets, n - 1);
  CHECK(after.round_trips - before.round_trips == 1);
  CHECK(after.bytes_read - before.bytes_read < (uint64_t)n * per + 2048);
  hs_source *src = NULL;
  CHECK_OK(B->source_open(&ta.loc, &src, &e), &e);
  uint8_t buf[4096];
  hs_io_stats_get(&before);
  for (size_t i = 0; src != NULL && i < n; i += 7) {
    CHECK_OK(hs_source_read(src, items[i].offset + 100, per - 200, buf, &e), &e);
    CHECK(memcmp(buf, a + items[i].offset + 100, per - 200) == 0);
  }
  hs_io_stats_get(&after);
  CHECK(after.requests == before.requests);
  if (src != NULL) { /* outside every range: fetched */
    CHECK_OK(hs_source_read(src, 5 * per, 100, buf, &e), &e);
    CHECK(memcmp(buf, a + 5 * per, 100) == 0);
    hs_source_unref(src);
  }
  hs_io_stats_get(&after);
  CHECK(after.requests == before.requests + 1);
  CHECK(B->prefetch(locs, items, n, HS_STORE_PREFETCH_MAX) == 0); /* all held */
  free(locs);
  free(items);
  free(a);
}

/* Packs of ranges (s3_pack.c): a pack holds the ranges asked for with
 * their objects' HEADs; loaded into a cold cache, reads of those ranges
 * make no request and return the objects' bytes, a read outside them is
 * fetched (If-Match on the packed ETag); a damaged pack is an error naming
 * it and loads nothing. And list_prefixes carries whole GETs in its wave:
 * one round trip, a missing object's GET is HS_ERR_NOT_FOUND, not the
 * call's error. */
static void test_pack(void) {
  hs_error e = {0};
  tloc ta, tb, tc;
  size_t na = 400000, nb = 3000;
  uint8_t *a = random_bytes(na, 71), *b = random_bytes(nb, 72);
  CHECK_OK(B->put(at(&ta, "pk/a.bin"), a, na, &e), &e);
  CHECK_OK(B->put(at(&tb, "pk/b.bin"), b, nb, &e), &e);
  at(&tc, "pk/missing.bin");
  /* Unpacking resolves the packed URIs: options for them, as a table's. */
  char port_host[sizeof cfg.endpoint], prefix[sizeof ta.uri];
  snprintf(port_host, sizeof port_host, "%s", cfg.endpoint);
  snprintf(prefix, sizeof prefix, "%s", ta.uri);
  char *slash = strstr(prefix, "/pk/");
  if (slash != NULL) slash[3] = '\0';
  hs_store_option opts[] = {{"aws_access_key_id", cfg.access_key},
                            {"aws_secret_access_key", cfg.secret_key},
                            {"region", "us-east-1"},
                            {"endpoint", port_host},
                            {"allow_http", "true"}};
  CHECK_OK(hs_store_configure(prefix, opts, 5, &e), &e);
  hs_s3_cache_forget(&ta.loc);
  hs_s3_cache_forget(&tb.loc);
  hs_store_loc locs[4] = {ta.loc, ta.loc, tb.loc, tc.loc};
  hs_store_prefetch_item items[4] = {{ta.uri, 0, 100000, true, false},
                                     {ta.uri, 1000, 10, false, false},
                                     {tb.uri, 0, 1 << 20, true, false},
                                     {tc.uri, 0, 10, false, false}};
  hs_buf pack;
  hs_buf_init(&pack);
  size_t n = 0;
  CHECK_OK(hs_s3_pack(locs, items, 4, (size_t)64 << 20, &pack, &n, &e), &e);
  CHECK_EQ_INT(n, 3); /* a's tail, a's first block, b whole; not the missing one */
  size_t checked = 0;
  CHECK_OK(hs_store_pack_check(pack.data, pack.len, "pack", &checked, &e), &e);
  CHECK_EQ_INT(checked, 3);
  hs_s3_cache_forget(&ta.loc);
  hs_s3_cache_forget(&tb.loc);
  size_t loaded = 0;
  CHECK_OK(hs_s3_unpack(pack.data, pack.len, "pack", &loaded, &e), &e);
  CHECK_EQ_INT(loaded, 3);
  hs_io_stats before, after;
  hs_io_stats_get(&before);
  uint8_t buf[5000];
  hs_source *src = NULL;
  CHECK_OK(B->source_open(&ta.loc, &src, &e), &e); /* the packed HEAD: no request */
  if (src != NULL) {
    CHECK_OK(hs_source_read(src, na - 5000, 5000, buf, &e), &e);
    CHECK(memcmp(buf, a + na - 5000, 5000) == 0);
    CHECK_OK(hs_source_read(src, 1000, 10, buf, &e), &e);
    CHECK(memcmp(buf, a + 1000, 10) == 0);
  }
  hs_buf whole;
  hs_buf_init(&whole);
  CHECK_OK(B->get(&tb.loc, nb, &whole, NULL, &e), &e);
  CHECK(whole.len == nb && memcmp(whole.data, b, nb) == 0);
  hs_io_stats_get(&after);
  CHECK(after.requests == before.requests);
  if (src != NULL) { /* outside the pack: fetched, the right bytes */
    CHECK_OK(hs_source_read(src, 200000, 100, buf, &e), &e);
    CHECK(memcmp(buf, a + 200000, 100) == 0);
    hs_source_unref(src);
  }
  hs_io_stats_get(&after);
  CHECK(after.requests == before.requests + 1);
  /* Damaged: an error naming it, nothing loaded. */
  pack.data[pack.len / 2] ^= 0x40;
  memset(&e, 0, sizeof e);
  CHECK(hs_s3_unpack(pack.data, pack.len, "the pack", &loaded, &e) == HS_ERR_CORRUPT);
  CHECK(strstr(e.message, "the pack") != NULL && loaded == 0);
  for (size_t cut = 0; cut < pack.len; cut += 997) { /* truncated anywhere */
    memset(&e, 0, sizeof e);
    CHECK(hs_store_pack_check(pack.data, cut, "cut", &checked, &e) != HS_OK);
    CHECK(e.message[0] != '\0');
  }
  hs_buf_free(&pack);
  /* A LIST wave with whole GETs. */
  tloc tdir, tmiss;
  hs_store_loc pl[1] = {*at(&tdir, "pk/")};
  hs_store_loc gl[2] = {tb.loc, *at(&tmiss, "pk/missing.bin")};
  whole.len = 0;
  hs_buf miss;
  hs_buf_init(&miss);
  hs_store_get_item gets[2] = {{.uri = tb.uri, .max_bytes = nb, .out = &whole},
                               {.uri = tmiss.uri, .max_bytes = 10, .out = &miss}};
  hs_s3_cache_forget(&tb.loc);
  hs_store_entry *outs[1];
  size_t nouts[1];
  hs_io_stats_get(&before);
  CHECK_OK(B->list_prefixes(pl, 1, outs, nouts, gl, gets, 2, NULL, NULL, 0, 0, &e), &e);
  hs_io_stats_get(&after);
  CHECK(after.round_trips - before.round_trips == 1 && after.requests - before.requests == 3);
  CHECK(gets[0].status == HS_OK && whole.len == nb && memcmp(whole.data, b, nb) == 0);
  CHECK(gets[0].info.size == nb && gets[0].info.etag[0] != '\0');
  CHECK(gets[1].status == HS_ERR_NOT_FOUND && miss.len == 0);
  CHECK(nouts[0] == 2);
  hs_store_entries_free(outs[0], nouts[0]);
  /* A LIST wave with ranges to prefetch (a freshness LIST and a query's
   * first reads): one round trip; the ranges are in the cache after it;
   * a second such wave fetches nothing again. */
  hs_s3_cache_forget(&ta.loc);
  hs_store_prefetch_item pits[2] = {{ta.uri, 70000, 5000, false, false},
                                    {ta.uri, 300000, 1000, false, true}};
  hs_store_loc plocs[2] = {ta.loc, ta.loc};
  for (int pass = 0; pass < 2; pass++) {
    hs_io_stats_get(&before);
    CHECK_OK(B->list_prefixes(pl, 1, outs, nouts, NULL, NULL, 0, plocs, pits, 2,
                              HS_STORE_PREFETCH_MAX, &e),
             &e);
    hs_io_stats_get(&after);
    CHECK(after.round_trips - before.round_trips == 1);
    CHECK(after.requests - before.requests == (pass == 0 ? 3u : 1u));
    CHECK(nouts[0] == 2);
    hs_store_entries_free(outs[0], nouts[0]);
    hs_object_info ai;
    CHECK(hs_s3_cache_head_get(&ta.loc, &ai) && ai.size == na);
    CHECK(hs_s3_cache_holds(&ta.loc, &ai, 70000, 5000) &&
          hs_s3_cache_holds(&ta.loc, &ai, 300000, 1000));
  }
  hs_buf_free(&whole);
  hs_buf_free(&miss);
  free(a);
  free(b);
}

/* The XML reading alone (no server): entities, attributes, empty
 * elements, folder markers, CommonPrefixes, truncation tokens, dates. */
static void test_xml(void) {
  const char *page =
      "<?xml version=\"1.0\"?><ListBucketResult xmlns=\"http://s3\"><Name>b</Name>"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>a+b/c=&amp;</NextContinuationToken>"
      "<Contents><Key>p/x &amp; y&lt;&#34;&#x65E5;&apos;</Key><Size>42</Size>"
      "<ETag>&quot;abc-2&quot;</ETag><LastModified>2024-01-02T03:04:05.678Z</LastModified>"
      "</Contents><Contents><Key>p/marker/</Key><Size>0</Size></Contents>"
      "<CommonPrefixes><Prefix>p/sub/</Prefix></CommonPrefixes><Delimiter/></ListBucketResult>";
  hs_s3_span doc = {page, strlen(page)};
  hs_s3_list_acc acc = {0};
  bool truncated = false;
  char token[64];
  hs_error e = {0};
  CHECK_OK(hs_s3_parse_list_page(doc, 2, &acc, &truncated, token, sizeof token, &e), &e);
  CHECK(truncated && strcmp(token, "a+b/c=&") == 0);
  CHECK_EQ_INT(acc.n, 2);
  if (acc.n == 2) {
    CHECK(strcmp(acc.entries[0].name, "x & y<\"\xe6\x97\xa5'") == 0 && !acc.entries[0].is_dir);
    CHECK(acc.entries[0].info.size == 42 && strcmp(acc.entries[0].info.etag, "abc-2") == 0);
    CHECK(acc.entries[0].info.mtime_ms == 1704164645678LL);
    CHECK(strcmp(acc.entries[1].name, "sub") == 0 && acc.entries[1].is_dir);
  }
  entries_free(acc.entries, acc.n);
  char small[4];
  CHECK(!hs_s3_xml_text(doc, "Name", small, 1)); /* does not fit */
  CHECK(hs_s3_xml_text(doc, "Name", small, sizeof small) && strcmp(small, "b") == 0);
  const char *bad[] = {
      "<ListBucketResult><Contents><Key>a&bogus;</Key></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>a</Key>", "<ListBucketResult",
      "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hs_s3_list_acc a2 = {0};
    e = (hs_error){0};
    hs_s3_span d = {bad[i], strlen(bad[i])};
    CHECK(hs_s3_parse_list_page(d, 0, &a2, &truncated, token, sizeof token, &e) != HS_OK);
    entries_free(a2.entries, a2.n);
  }
  CHECK(hs_s3_iso8601_ms("1970-01-01T00:00:01Z") == 1000 && hs_s3_iso8601_ms("junk") == 0);
}

/* ------------------------------------------------- retries (a fake server) */

/* A server thread answering each connection's one request with the next
 * canned answer (then closing), counting requests and noting their methods.
 * A request's body (Content-Length, up to 64 KiB) is read; the answer ""
 * stores it and closes without a word (the answer is lost), and "@STORED"
 * answers 200 with what was stored. */
typedef struct fake_server {
  int fd, port;
  const char *const *answers;
  int n_answers, served;
  char methods[16][8];
  char stored[65536];
  size_t stored_len;
} fake_server;

static void fake_read_body(int c, char *req, size_t got, char *body, size_t *body_len) {
  char *end = strstr(req, "\r\n\r\n");
  size_t want = 0;
  for (char *p = req; end != NULL && p < end; p++) {
    if ((p == req || p[-1] == '\n') && strncasecmp(p, "content-length:", 15) == 0) {
      want = (size_t)strtoull(p + 15, NULL, 10);
    }
  }
  size_t have = end != NULL ? got - (size_t)(end + 4 - req) : 0;
  if (want > 65536) want = 65536;
  if (have > want) have = want;
  if (have > 0) memcpy(body, end + 4, have);
  while (have < want) {
    ssize_t k = read(c, body + have, want - have);
    if (k <= 0) break;
    have += (size_t)k;
  }
  *body_len = have;
}

static void *fake_serve(void *arg) {
  fake_server *f = arg;
  static char body[65536];
  for (int i = 0; i < f->n_answers; i++) {
    int c = accept(f->fd, NULL, NULL);
    if (c < 0) break;
    char req[8192];
    size_t got = 0;
    while (got < sizeof req - 1) { /* the request head */
      ssize_t k = read(c, req + got, sizeof req - 1 - got);
      if (k <= 0) break;
      got += (size_t)k;
      req[got] = '\0';
      if (strstr(req, "\r\n\r\n") != NULL) break;
    }
    size_t body_len = 0;
    fake_read_body(c, req, got, body, &body_len);
    if (f->served < 16) sscanf(req, "%7s", f->methods[f->served]);
    f->served++;
    const char *a = f->answers[i];
    if (a[0] == '\0') {
      memcpy(f->stored, body, body_len);
      f->stored_len = body_len;
    } else if (strcmp(a, "@STORED") == 0) {
      char head[256];
      int hn = snprintf(head, sizeof head,
                        "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nETag: \"st\"\r\n"
                        "Connection: close\r\n\r\n",
                        f->stored_len);
      if (write(c, head, (size_t)hn) < 0 || write(c, f->stored, f->stored_len) < 0) {
      }
    } else if (write(c, a, strlen(a)) < 0) {
    }
    close(c);
  }
  return NULL;
}

static bool fake_start(fake_server *f, pthread_t *th, const char *const *answers, int n) {
  memset(f, 0, sizeof *f);
  f->answers = answers;
  f->n_answers = n;
  f->fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(f->fd, 8) != 0 ||
      getsockname(f->fd, (struct sockaddr *)&a, &len) != 0)
    return false;
  f->port = ntohs(a.sin_port);
  return pthread_create(th, NULL, fake_serve, f) == 0;
}

static void fake_stop(fake_server *f, pthread_t th) {
  shutdown(f->fd, SHUT_RDWR);
  pthread_join(th, NULL);
  close(f->fd);
}

#define SLOWDOWN                                                                                \
  "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/xml\r\nContent-Length: 71\r\n" \
  "Connection: close\r\n\r\n<Error><Code>SlowDown</Code><Message>Reduce your "                  \
  "rate</Message></Error>"
#define SHORT_BODY "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nhello"
#define GOOD_BODY \
  "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nETag: \"e1\"\r\nConnection: close\r\n\r\nhelloworld"
#define DENIED                                                   \
  "HTTP/1.1 403 Forbidden\r\nContent-Length: 72\r\nConnection: " \
  "close\r\n\r\n<Error><Code>AccessDenied</Code>"                \
  "<Message>Access Denied</Message></Error>"

static void test_retries(void) {
  hs_store_config fc = cfg;
  fc.max_retries = 3;
  tloc t;
  hs_buf out;
  hs_buf_init(&out);
  hs_error e = {0};
  fake_server f;
  pthread_t th;

  /* 503 SlowDown, a truncated body, then the object: three requests, HS_OK. */
  const char *const a1[] = {SLOWDOWN, SHORT_BODY, GOOD_BODY};
  CHECK(fake_start(&f, &th, a1, 3));
  snprintf(fc.endpoint, sizeof fc.endpoint, "http://127.0.0.1:%d", f.port);
  CHECK_OK(B->get(at_cfg(&t, "b-fake", "k", &fc), 100, &out, NULL, &e), &e);
  CHECK(out.len == 10 && memcmp(out.data, "helloworld", 10) == 0);
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 3);

  /* Retries run out: the last cause is reported. */
  const char *const a2[] = {SLOWDOWN, SLOWDOWN, SLOWDOWN, SLOWDOWN};
  CHECK(fake_start(&f, &th, a2, 4));
  snprintf(fc.endpoint, sizeof fc.endpoint, "http://127.0.0.1:%d", f.port);
  out.len = 0;
  e = (hs_error){0};
  CHECK(B->get(at_cfg(&t, "b-fake", "k", &fc), 100, &out, NULL, &e) == HS_ERR_IO);
  CHECK(strstr(e.message, "503 SlowDown: Reduce your rate") != NULL && out.len == 0);
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 4);

  /* A 4xx is never retried. */
  const char *const a3[] = {DENIED, GOOD_BODY};
  CHECK(fake_start(&f, &th, a3, 2));
  snprintf(fc.endpoint, sizeof fc.endpoint, "http://127.0.0.1:%d", f.port);
  e = (hs_error){0};
  CHECK(B->get(at_cfg(&t, "b-fake", "k", &fc), 100, &out, NULL, &e) == HS_ERR_IO);
  CHECK(strstr(e.message, "s3://b-fake/k: GET failed: 403 AccessDenied: Access Denied") != NULL);
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 1);

  /* Truncated every time: HS_ERR_CORRUPT. */
  const char *const a4[] = {SHORT_BODY, SHORT_BODY};
  fc.max_retries = 1;
  CHECK(fake_start(&f, &th, a4, 2));
  snprintf(fc.endpoint, sizeof fc.endpoint, "http://127.0.0.1:%d", f.port);
  e = (hs_error){0};
  hs_status st = B->get(at_cfg(&t, "b-fake", "k", &fc), 100, &out, NULL, &e);
  CHECK(st == HS_ERR_CORRUPT && strstr(e.message, "truncated") != NULL);
  printf("truncated twice: %s\n", e.message);
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 2);

  /* Zero-length ranges of one object: a single HEAD (Content-Length 10) checks them all. */
  const char *const a5[] = {GOOD_BODY, GOOD_BODY};
  CHECK(fake_start(&f, &th, a5, 2));
  snprintf(fc.endpoint, sizeof fc.endpoint, "http://127.0.0.1:%d", f.port);
  tloc zt[3];
  hs_store_loc zl[3];
  for (int i = 0; i < 3; i++) zl[i] = *at_cfg(&zt[i], "b-fake", "k", &fc);
  char dst[1];
  hs_store_range zr[3] = {{zl[0].uri, 3, 0, dst}, {zl[1].uri, 10, 0, dst}, {zl[2].uri, 0, 0, dst}};
  e = (hs_error){0};
  CHECK_OK(B->get_ranges(zl, zr, 3, &e), &e);
  CHECK_EQ_INT(f.served, 1);
  zr[2].offset = 11;
  e = (hs_error){0};
  CHECK(B->get_ranges(zl, zr, 3, &e) == HS_ERR_CORRUPT && strstr(e.message, "s3://b-fake/k"));
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 2);
  hs_buf_free(&out);
}

#define REFUSED                                                               \
  "HTTP/1.1 412 Precondition Failed\r\nContent-Length: 84\r\nConnection: "    \
  "close\r\n\r\n<Error><Code>PreconditionFailed</Code><Message>At least one " \
  "failed</Message></Error>"
#define CONFLICT "HTTP/1.1 409 Conflict\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
#define NOT_THERE "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

/* A conditional PUT whose first try lands but whose answer is lost, then
 * refused on the retry: our bytes are there, so it won. */
static void test_conditional_retry(void) {
  hs_store_config fc = cfg;
  fc.max_retries = 2;
  tloc t;
  hs_error e = {0};
  fake_server f;
  pthread_t th;
  const char *body = "{\"format-version\":2,\"snapshot\":42}";
  size_t blen = strlen(body);

  /* If-None-Match: the first try is stored and its answer dropped; 412; HEAD; GET. */
  const char *const a1[] = {"", REFUSED, "@STORED", "@STORED"};
  CHECK(fake_start(&f, &th, a1, 4));
  snprintf(fc.endpoint, sizeof fc.endpoint, "http://127.0.0.1:%d", f.port);
  bool won = false;
  CHECK_OK(B->put_if_absent(at_cfg(&t, "b-fake", "v3.metadata.json", &fc), body, blen, &won, &e),
           &e);
  CHECK(won);
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 4);
  CHECK(f.stored_len == blen && memcmp(f.stored, body, blen) == 0);
  CHECK(strcmp(f.methods[0], "PUT") == 0 && strcmp(f.methods[1], "PUT") == 0 &&
        strcmp(f.methods[2], "HEAD") == 0 && strcmp(f.methods[3], "GET") == 0);

  /* If-Match the same way (409 on the retry this time). */
  const char *const a2[] = {"", CONFLICT, "@STORED", "@STORED"};
  CHECK(fake_start(&f, &th, a2, 4));
  snprintf(fc.endpoint, sizeof fc.endpoint, "http://127.0.0.1:%d", f.port);
  won = false;
  e = (hs_error){0};
  CHECK_OK(B->put_if_match(at_cfg(&t, "b-fake", "k", &fc), body, blen, "e1", &won, &e), &e);
  CHECK(won);
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 4);

  /* Someone else's bytes are there (same size, other content): lost. */
  char other[256];
  snprintf(other, sizeof other,
           "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s", blen, body);
  other[strlen(other) - 3] ^= 1;
  const char *const a3[] = {"", REFUSED, other, other};
  CHECK(fake_start(&f, &th, a3, 4));
  snprintf(fc.endpoint, sizeof fc.endpoint, "http://127.0.0.1:%d", f.port);
  won = true;
  e = (hs_error){0};
  CHECK_OK(B->put_if_absent(at_cfg(&t, "b-fake", "k", &fc), body, blen, &won, &e), &e);
  CHECK(!won);
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 4);

  /* A different size is settled by the HEAD alone. */
  const char *const a4[] = {"", REFUSED, GOOD_BODY};
  CHECK(fake_start(&f, &th, a4, 3));
  snprintf(fc.endpoint, sizeof fc.endpoint, "http://127.0.0.1:%d", f.port);
  won = true;
  e = (hs_error){0};
  CHECK_OK(B->put_if_absent(at_cfg(&t, "b-fake", "k", &fc), body, blen, &won, &e), &e);
  CHECK(!won);
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 3);

  /* A first-try 412 is a plain loss: nothing is read back. */
  const char *const a5[] = {REFUSED, "@STORED"};
  CHECK(fake_start(&f, &th, a5, 2));
  snprintf(fc.endpoint, sizeof fc.endpoint, "http://127.0.0.1:%d", f.port);
  won = true;
  e = (hs_error){0};
  CHECK_OK(B->put_if_absent(at_cfg(&t, "b-fake", "k", &fc), body, blen, &won, &e), &e);
  CHECK(!won);
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 1);

  /* 409 after a lost answer and nothing there: unknown, an error (never a guess). */
  const char *const a6[] = {SLOWDOWN, CONFLICT, NOT_THERE};
  CHECK(fake_start(&f, &th, a6, 3));
  snprintf(fc.endpoint, sizeof fc.endpoint, "http://127.0.0.1:%d", f.port);
  won = true;
  e = (hs_error){0};
  CHECK(B->put_if_absent(at_cfg(&t, "b-fake", "k", &fc), body, blen, &won, &e) == HS_ERR_IO);
  CHECK(!won && strstr(e.message, "s3://b-fake/k") && strstr(e.message, "outcome unknown"));
  printf("409 after a lost answer: %s\n", e.message);
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 3);
}

/* An http:// endpoint without allow_http is refused before anything is sent. */
static void test_allow_http(void) {
  hs_store_config hc = cfg;
  hc.allow_http = false;
  hc.max_retries = 0;
  fake_server f;
  pthread_t th;
  const char *const a[] = {GOOD_BODY};
  CHECK(fake_start(&f, &th, a, 1));
  snprintf(hc.endpoint, sizeof hc.endpoint, "http://127.0.0.1:%d", f.port);
  tloc t;
  hs_buf out;
  hs_buf_init(&out);
  hs_error e = {0};
  CHECK(B->get(at_cfg(&t, "b-fake", "k", &hc), 100, &out, NULL, &e) == HS_ERR_INVALID_ARG);
  CHECK(strstr(e.message, "s3://b-fake/k") != NULL && strstr(e.message, "allow_http") != NULL &&
        strstr(e.message, "https://") != NULL);
  printf("allow_http: %s\n", e.message);
  bool won = true;
  e = (hs_error){0};
  CHECK(B->put_if_absent(at_cfg(&t, "b-fake", "k", &hc), "x", 1, &won, &e) == HS_ERR_INVALID_ARG);
  CHECK(!won);
  hc.allow_http = true; /* now the one canned answer is fetched */
  e = (hs_error){0};
  CHECK_OK(B->get(at_cfg(&t, "b-fake", "k", &hc), 100, &out, NULL, &e), &e);
  fake_stop(&f, th);
  CHECK_EQ_INT(f.served, 1);
  hs_buf_free(&out);
}

/* Rows of snapshot `snap` (-1: current) as a scan returns them. */
static int64_t table_rows(hs_table *t, int64_t snap) {
  hs_error e = {0};
  struct ArrowArrayStream st;
  if (hs_table_scan(t, snap, NULL, 0, &st, &e) != HS_OK) {
    CHECK_OK(e.status, &e);
    return -1;
  }
  struct ArrowSchema schema;
  struct ArrowArray *batches = NULL;
  size_t nb = 0;
  CHECK_OK(hs_arrow_stream_collect(&st, &schema, &batches, &nb, &e), &e);
  if (st.release) st.release(&st);
  int64_t rows = 0;
  for (size_t i = 0; i < nb; i++) rows += batches[i].length;
  hs_arrow_batches_free(batches, nb);
  hs_arrow_schema_release(&schema);
  return rows;
}

/* A table on S3 (table.c over store.h): created, appended to, reopened,
 * refreshed by a second handle, read at every snapshot; its store sources
 * carry stamps; '..' is refused. */
static void test_table(void) {
  hs_error e = {0};
  char port_host[sizeof cfg.endpoint];
  snprintf(port_host, sizeof port_host, "%s", cfg.endpoint);
  hs_store_option opts[] = {{"aws_access_key_id", cfg.access_key},
                            {"aws_secret_access_key", cfg.secret_key},
                            {"region", "us-east-1"},
                            {"endpoint", port_host},
                            {"allow_http", "true"}};
  CHECK_OK(hs_store_configure("s3://hs-test/tables", opts, 5, &e), &e);
  const char *uri = "s3://hs-test/tables/c1";
  struct ArrowSchema s;
  make_schema(&s);
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(uri, &s, NULL, &t, &e), &e);
  hs_arrow_schema_release(&s);
  if (t == NULL) return;
  CHECK(strcmp(t->root, uri) == 0 && t->remote);
  int64_t snaps[3], sizes[3] = {100, 1, 5000}, total = 0;
  for (int i = 0; i < 3; i++) {
    snaps[i] = append_rows(t, total, sizes[i]);
    total += sizes[i];
  }
  CHECK_EQ_INT(table_rows(t, -1), total);
  hs_table *u = NULL;
  CHECK_OK(hs_table_open("s3://hs-test//tables/./c1/", &u, &e), &e);
  if (u != NULL) {
    CHECK(strcmp(hs_table_metadata_location(u),
                 "s3://hs-test/tables/c1/metadata/v4.metadata.json") == 0);
    for (int i = 0, sum = 0; i < 3; i++) {
      sum += (int)sizes[i];
      CHECK_EQ_INT(table_rows(u, snaps[i]), sum);
    }
    append_rows(u, total, 7);
    CHECK_OK(hs_table_refresh(t, &e), &e);
    CHECK_EQ_INT(hs_table_version(t), 5);
    CHECK_EQ_INT(table_rows(t, -1), total + 7);
  }
  hs_table_free(u);
  /* A store source is stamped like a file; the stamp follows the object. */
  hs_source *src = NULL;
  hs_fs_stamp a, b;
  CHECK_OK(hs_store_source_open(hs_table_metadata_location(t), &src, &e), &e);
  CHECK(src != NULL && hs_source_stamp(src, &a));
  CHECK(hs_store_stamp_of(hs_table_metadata_location(t), &b) && hs_fs_stamp_equal(&a, &b));
  CHECK(hs_store_stamp_of("s3://hs-test/tables/c1/metadata/v1.metadata.json", &b) &&
        !hs_fs_stamp_equal(&a, &b));
  hs_source_unref(src);
  hs_table_free(t);
  e = (hs_error){0};
  CHECK(hs_table_open("s3://hs-test/tables/../c1", &u, &e) == HS_ERR_INVALID_ARG);
  CHECK(strstr(e.message, "'..'") != NULL);
  printf("s3 table: %lld rows in 5 versions\n", (long long)(total + 7));
}

/* Delete files on S3 (deletes_pos.c, deletes_dv.c and deletes_eq.c write
 * objects through the store): a position-delete file (v2) or a deletion
 * vector (v3) and an equality-delete file, committed by
 * hs_table_commit_row_delta (no refusal for tables on object storage) and
 * applied on read; a second write to an existing key is refused; no local
 * "s3:" folder appears. */
static void test_table_deletes(int format) {
  hs_error e = {0};
  char uri[128];
  snprintf(uri, sizeof uri, "s3://hs-test/tables/deletes-v%d", format);
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options o;
  hs_table_options_init(&o);
  o.format_version = format;
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(uri, &s, &o, &t, &e), &e);
  hs_arrow_schema_release(&s);
  if (t == NULL) return;
  append_rows(t, 0, 100);
  hs_table_plan p;
  CHECK_OK(hs_table_plan_files(t, -1, &p, &e), &e);
  CHECK_EQ_INT(p.n_files, 1);
  char data[1024];
  snprintf(data, sizeof data, "%s", p.n_files ? p.files[0].data_file->file_path : "");
  hs_table_plan_free(&p);
  CHECK(strncmp(data, uri, strlen(uri)) == 0);
  /* positions 0..9 */
  bool v3 = format >= 3;
  char path[4200];
  snprintf(path, sizeof path, "%s/data/c-deletes.%s", uri, v3 ? "puffin" : "parquet");
  roaring_bitmap_t *bm = roaring_bitmap_from_range(0, 10, 1);
  hs_table_delete_group g = {.data_file = data, .rows = bm};
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_data_file df;
  memset(&df, 0, sizeof df);
  CHECK_OK(v3 ? hs_table_dv_write(path, path, &g, 1, &a, &df, &e)
              : hs_table_posdel_write(path, path, &g, 1, &a, &df, &e),
           &e);
  hs_object_info info;
  CHECK_OK(hs_store_head(path, &info, &e), &e);
  CHECK_EQ_INT((int64_t)info.size, df.file_size_in_bytes);
  hs_table_delete_file del = {.path = path,
                              .content = 1,
                              .file_format = v3 ? "PUFFIN" : NULL,
                              .record_count = df.record_count,
                              .file_size_in_bytes = df.file_size_in_bytes,
                              .referenced_data_file = data,
                              .content_offset = df.content_offset,
                              .content_size_in_bytes = df.content_size_in_bytes};
  hs_table_row_delta d = {0};
  d.validate_no_new_deletes = -1;
  d.add_delete_files = &del;
  d.n_add_delete_files = 1;
  CHECK_OK(hs_table_commit_row_delta(t, &d, NULL, &e), &e);
  CHECK_EQ_INT(table_rows(t, -1), 90);
  /* the same key again: refused, the object unchanged */
  e = (hs_error){0};
  CHECK(HS_ERR_INVALID_ARG == (v3 ? hs_table_dv_write(path, path, &g, 1, &a, &df, &e)
                                  : hs_table_posdel_write(path, path, &g, 1, &a, &df, &e)));
  CHECK(strstr(e.message, "already exists") != NULL);
  roaring_bitmap_free(bm);
  /* an equality delete of ids 50..59 */
  int32_t id = hs_table_current_field_id(&t->meta, "id");
  const hs_iceberg_schema *schema = hs_iceberg_metadata_schema(&t->meta, t->meta.current_schema_id);
  struct ArrowSchema ks;
  e = (hs_error){0};
  CHECK_OK(hs_arrow_schema_init(&ks, "+s", "", 0, 1, &e), &e);
  CHECK_OK(hs_arrow_schema_init(ks.children[0], "l", "id", 0, 0, &e), &e);
  int64_t *keys = hs_malloc(10 * sizeof *keys); /* owned by the array */
  for (int i = 0; i < 10; i++) keys[i] = 50 + i;
  struct ArrowArray *kb = hs_calloc(1, sizeof *kb), col;
  memset(&col, 0, sizeof col);
  CHECK_OK(hs_arrow_array_make_primitive(&col, 10, keys, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_struct(kb, 10, &col, 1, NULL, 0, &e), &e);
  struct ArrowArrayStream rows;
  CHECK_OK(hs_arrow_stream_from_batches(&ks, kb, 1, &rows, &e), &e);
  hs_free(kb);
  hs_arrow_schema_release(&ks);
  char eq[4200];
  snprintf(eq, sizeof eq, "%s/data/c-eq-deletes.parquet", uri);
  memset(&df, 0, sizeof df);
  CHECK_OK(hs_table_eqdel_write(eq, eq, &id, 1, schema, &rows, &a, &df, &e), &e);
  CHECK_EQ_INT(df.record_count, 10);
  hs_table_delete_file edel = {.path = eq,
                               .content = 2,
                               .record_count = df.record_count,
                               .file_size_in_bytes = df.file_size_in_bytes,
                               .equality_ids = &id,
                               .n_equality_ids = 1};
  d.add_delete_files = &edel;
  CHECK_OK(hs_table_commit_row_delta(t, &d, NULL, &e), &e);
  CHECK_EQ_INT(table_rows(t, -1), 80);
  /* a fresh handle reads the same through its own requests */
  hs_table *u = NULL;
  CHECK_OK(hs_table_open(uri, &u, &e), &e);
  if (u != NULL) CHECK_EQ_INT(table_rows(u, -1), 80);
  hs_table_free(u);
  struct stat sb;
  CHECK(stat("s3:", &sb) != 0);
  hs_arena_reset(&a);
  hs_table_free(t);
  printf("s3 deletes v%d: position/DV and equality deletes applied\n", format);
}

int main(void) {
  setenv("HS_S3_CACHE_MB", "1", 1); /* test_cache: evictions */
  snprintf(cfg.access_key, sizeof cfg.access_key, "hsaccess%d", (int)getpid());
  snprintf(cfg.secret_key, sizeof cfg.secret_key, "hs/secret+%d", (int)getpid());
  snprintf(cfg.region, sizeof cfg.region, "us-east-1");
  cfg.allow_http = true;
  cfg.request_timeout_ms = 60000;
  cfg.connect_timeout_ms = 5000;
  cfg.max_retries = 3;
  test_xml();
  test_retries();
  test_allow_http();
  test_conditional_retry();
  const char *bin = find_server();
  if (bin == NULL) {
    printf(
        "SKIP: versitygw not installed (scripts/setup.sh test installs it into "
        "build/tools; or set HS_VERSITYGW)\n");
    return hs_test_finish("test_s3") != 0 ? 1 : 77; /* the checks above still count */
  }
  if (!start_server(bin)) {
    CHECK(!"versitygw started");
    stop_server();
    return hs_test_finish("test_s3");
  }
  hs_error e = {0};
  tloc t;
  CHECK_OK(hs_s3_create_bucket(at(&t, ""), &e), &e);
  test_roundtrips();
  test_ranges();
  test_conditional();
  test_list_and_put_many();
  test_delete_and_errors();
  test_odd_keys();
  test_source_sink();
  test_cache();
  test_prefetch();
  test_prefetch_exact();
  test_pack();
  test_table();
  test_table_deletes(2);
  test_table_deletes(3);
  stop_server();
  return hs_test_finish("test_s3");
}

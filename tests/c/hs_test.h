/*
 * hs_test.h — a minimal test harness for the C tests: CHECK macros that
 * count failures and keep going, and a summary line. Each tests/c/test_*.c
 * is one executable run by ctest; it returns non-zero when any check failed.
 */
#ifndef HS_TEST_H
#define HS_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hs_test_checks, hs_test_failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    hs_test_checks++;                                                          \
    if (!(cond)) {                                                             \
      hs_test_failures++;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                                        \
  do {                                                                                            \
    long long hs_a_ = (long long)(a), hs_b_ = (long long)(b);                                     \
    hs_test_checks++;                                                                             \
    if (hs_a_ != hs_b_) {                                                                         \
      hs_test_failures++;                                                                         \
      fprintf(stderr, "%s:%d: CHECK_EQ_INT failed: %s == %lld, %s == %lld\n", __FILE__, __LINE__, \
              #a, hs_a_, #b, hs_b_);                                                              \
    }                                                                                             \
  } while (0)

/* Check that a call returned HS_OK; print the error message otherwise. */
#define CHECK_OK(call, errp)                                                   \
  do {                                                                         \
    hs_test_checks++;                                                          \
    const hs_error *hs_e_ = (errp);                                            \
    hs_status hs_st_ = (call);                                                 \
    if (hs_st_ != HS_OK) {                                                     \
      hs_test_failures++;                                                      \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call, \
              hs_status_str(hs_st_), hs_e_ != NULL ? hs_e_->message : "");     \
    }                                                                          \
  } while (0)

static inline int hs_test_finish(const char *name) {
  printf("%s: %d checks, %d failed\n", name, hs_test_checks, hs_test_failures);
  return hs_test_failures ? 1 : 0;
}

/* Deterministic PRNG (splitmix64) for randomized tests. */
static inline uint64_t hs_test_rand(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* A fresh table root "<new temp dir>/t" (not created: the table makes it),
 * tag naming the test in the temp dir's name; malloc'd (free), or NULL. */
static inline char *hs_test_temp_root(const char *tag) {
  char tmpl[256];
  snprintf(tmpl, sizeof tmpl, "/tmp/hs_test_%s_XXXXXX", tag);
  char *d = mkdtemp(tmpl);
  if (d == NULL) return NULL;
  size_t n = strlen(d) + 8;
  char *root = malloc(n);
  if (root != NULL) snprintf(root, n, "%s/t", d);
  return root;
}

/* A whole file into a malloc'd buffer (*n bytes), or NULL. */
static inline char *hs_test_slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = len >= 0 ? malloc((size_t)len + 1) : NULL;
  *n = b != NULL ? fread(b, 1, (size_t)len, f) : 0;
  fclose(f);
  return b;
}

/* Overwrite path with n bytes of b (a CHECK failure when it cannot). */
static inline void hs_test_spill(const char *path, const char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f == NULL) return;
  CHECK(fwrite(b, 1, n, f) == n);
  fclose(f);
}

#endif /* HS_TEST_H */

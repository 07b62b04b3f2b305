/*
 * fuzz_theta.c — libFuzzer target: Theta sketches (src/index/theta_sketch.h).
 * An input starting with 0x00 is a list of values (each: a length byte,
 * then that many bytes) fed to a sketch of 16 nominal entries, so that
 * estimation mode is reached in a few hundred bytes; its serialization must
 * parse back with the same estimate and retained count. Any other input is
 * a compact sketch for hs_theta_parse (seeds: our apache-datasketches-
 * theta-v1 blobs); an accepted one must have a finite, non-negative
 * estimate. Errors are expected but must say what; any crash, leak or
 * sanitizer report is a bug.
 */
#include <math.h>
#include <string.h>

#include "index/theta_sketch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hs_error err = {0};
  double est = 0;
  int64_t n = 0, theta = 0;
  if (size > 0 && data[0] == 0x00) {
    hs_theta_sketch s;
    if (hs_theta_init(&s, 16, &err) != HS_OK) __builtin_trap();
    for (size_t i = 1; i < size;) {
      size_t len = data[i++];
      if (len > size - i) len = size - i;
      if (hs_theta_update(&s, data + i, len, &err) != HS_OK) __builtin_trap();
      i += len;
    }
    hs_buf b;
    hs_buf_init(&b);
    if (hs_theta_serialize(&s, &b, &err) != HS_OK) __builtin_trap();
    double want = hs_theta_estimate(&s);
    if (hs_theta_parse(b.data, b.len, &est, &n, &theta, &err) != HS_OK) __builtin_trap();
    if (est != want || (size_t)n != s.used || theta != s.theta) __builtin_trap();
    hs_buf_free(&b);
    hs_theta_free(&s);
    return 0;
  }
  if (hs_theta_parse(data, size, &est, &n, &theta, &err) == HS_OK) {
    if (!isfinite(est) || est < 0 || n < 0 || theta <= 0) __builtin_trap();
  } else if (err.message[0] == '\0') {
    __builtin_trap();
  }
  return 0;
}

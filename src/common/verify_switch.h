/*
 * verify_switch.h — a benchmark-only switch over the checks that repeat on
 * every use of something already verified once (verify_switch.c).
 *
 * A read checks, per use: each index column's binding to the data file it
 * narrows (hs_index_binding_matches), each data page's CRC against the
 * verified-page set (hs_pq_page_verified), and an index blob's checksum
 * against the verified-blob set when the column is opened
 * (hs_index_blob_verify). bench/bench_index_binding.py measures what those
 * cost a selective query by timing the same queries, in one process,
 * alternately with and without them; "without" is this switch, turned on
 * only by hs_bench_skip_repeat_verify() (no environment variable, no public
 * API: a program that never calls it never skips a check). It is meant to
 * be turned on after a warm-up that verified everything the timed queries
 * touch: while on, those checks are not made at all, so a file that was
 * never verified would be read unchecked.
 */
#ifndef HS_COMMON_VERIFY_SWITCH_H
#define HS_COMMON_VERIFY_SWITCH_H

#include <stdatomic.h>
#include <stdbool.h>

extern atomic_bool hs_verify_skip_repeat_flag;

/* Whether the repeated checks are turned off (a relaxed load). */
static inline bool hs_verify_skip_repeat(void) {
  return atomic_load_explicit(&hs_verify_skip_repeat_flag, memory_order_relaxed);
}

/* Turn the repeated checks off (on != 0) or back on; returns the previous
 * setting. Benchmarks only (bench/bench_index_binding.py calls it through
 * ctypes). */
int hs_bench_skip_repeat_verify(int on);

#endif /* HS_COMMON_VERIFY_SWITCH_H */

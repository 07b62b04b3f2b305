/*
 * verify_switch.c — the benchmark-only switch of verify_switch.h.
 */
#include "verify_switch.h"

atomic_bool hs_verify_skip_repeat_flag = false;

int hs_bench_skip_repeat_verify(int on) {
  return atomic_exchange_explicit(&hs_verify_skip_repeat_flag, on != 0, memory_order_relaxed) ? 1
                                                                                              : 0;
}

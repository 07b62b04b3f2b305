#!/usr/bin/env bash
# The NEON distance kernels (src/index/vector/distance_neon.c) checked
# against the scalar reference on AArch64, from any machine: test_distance
# and the few sources it needs are cross-compiled (static) and run under
# qemu-user on x86-64, natively on AArch64. scripts/setup.sh test installs
# the cross compiler and qemu. Fails, never skips, when the NEON level was
# not exercised.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/neon
mkdir -p "$out"
srcs=(tests/c/test_distance.c src/index/vector/distance.c src/index/vector/distance_neon.c
      src/index/vector/distance_avx2.c src/index/vector/distance_avx512.c
      src/common/status.c src/common/alloc.c src/common/block_cache.c src/common/large_arena.c)
flags=(-static -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter
       -Iinclude -Isrc)
if [ "$(uname -m)" = aarch64 ]; then
  cc=gcc
  run=()
else
  cc=aarch64-linux-gnu-gcc
  run=(qemu-aarch64)
fi
"$cc" "${flags[@]}" -o "$out/test_distance" "${srcs[@]}" -lm -lpthread
log=$("${run[@]}" "$out/test_distance")
echo "$log" | grep -E "^(active level|level neon|test_distance)"
if ! echo "$log" | grep -q "^level neon: checking"; then
  echo "test_neon: the NEON level was not exercised" >&2
  exit 1
fi

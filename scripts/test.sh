#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what is missing,
# builds (release, ASan+UBSan, fuzz), runs C tests, the layer check, the
# format check, the NEON kernels under qemu, bounded fuzzing and the Python
# suite.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash scripts/setup.sh test

echo "== layer rule"
python3 scripts/check_layers.py
echo "== format"
bash scripts/check_format.sh

echo "== build (release)"
bash scripts/build.sh release
echo "== build (java: JNI layer, Spark connector)"
bash scripts/build_java.sh build/release
echo "== C tests (release)"
ctest --test-dir build/release --output-on-failure -j "$(nproc)"

echo "== NEON kernels (AArch64, under qemu on x86-64)"
bash scripts/test_neon.sh

echo "== build (ASan+UBSan)"
bash scripts/build.sh asan
echo "== C tests (ASan+UBSan)"
# Sanitized runs are ~5x slower: fewer crash-injection rounds for the table test.
HS_TABLE_CRASH_RUNS=30 ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build/asan --output-on-failure -j "$(nproc)"

echo "== fuzz (bounded)"
bash scripts/build.sh fuzz
HS_FUZZ_SEED="${HS_FUZZ_SEED:-20261130}" bash fuzz/run.sh "${HS_FUZZ_SECONDS:-90}"

echo "== Python package"
bash scripts/build.sh python
echo "== Python tests"
HS_ASAN_CLI="$PWD/build/asan/hyperstream" python3 -m pytest -q tests/python "$@"
echo "== total $(( $(date +%s) - start ))s"

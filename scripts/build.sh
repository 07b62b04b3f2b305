#!/usr/bin/env bash
# Build the C core, CLI and C tests into build/<name> (default: release),
# and install the Python package (C extension) into the current Python.
#   scripts/build.sh            release build + Python package
#   scripts/build.sh asan       ASan+UBSan build of the C core and tests
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-release}"
jobs="$(nproc)"
case "$kind" in
  release)
    cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build build/release -j "$jobs"
    ;;
  asan)
    CC=clang cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DHS_SANITIZE=address,undefined >/dev/null
    cmake --build build/asan -j "$jobs"
    ;;
  fuzz)
    CC=clang cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHS_FUZZ=ON \
      -DHS_SANITIZE=address,undefined -DHS_BUILD_TESTS=OFF >/dev/null
    cmake --build build/fuzz -j "$jobs"
    ;;
  python)
    python3 -m pip install -q --disable-pip-version-check --no-build-isolation . 
    ;;
  *) echo "usage: $0 [release|asan|fuzz|python]" >&2; exit 2 ;;
esac

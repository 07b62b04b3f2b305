#!/usr/bin/env bash
# clang-format owns formatting: fail when any C file differs from .clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find src cli python tests fuzz bench -name '*.[ch]')
[ -z "$files" ] && { echo "check_format: no files"; exit 0; }
clang-format --dry-run -Werror $files
echo "check_format: ok ($(echo "$files" | wc -w) files)"

#!/usr/bin/env bash
# Creates bench/.venv-original: a separate virtual environment holding the
# ORIGINAL HyperStreamDB from PyPI (hyperstreamdb==0.9.0), which has the same
# import name as ours, so the two can never share one interpreter.
# bench/bench_table.py drives it through a subprocess running
# bench/.venv-original/bin/python. The venv is gitignored.
#
#   bash bench/original_env.sh            # create or reuse, then install
#   HS_ORIGINAL_VERSION=0.9.0 bash bench/original_env.sh
#
# Exit status is pip's: a failed install is reported, not hidden; the
# benchmark then records the failure instead of numbers.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${here}/.venv-original"
version="${HS_ORIGINAL_VERSION:-0.9.0}"
python="${PYTHON:-python3}"

if [ ! -x "${venv}/bin/python" ]; then
    "${python}" -m venv "${venv}"
fi
"${venv}/bin/python" -m pip install -q --upgrade pip
"${venv}/bin/python" -m pip install "hyperstreamdb==${version}" pyarrow pandas
"${venv}/bin/python" -c 'import importlib.metadata as m; print("original hyperstreamdb", m.version("hyperstreamdb"))'

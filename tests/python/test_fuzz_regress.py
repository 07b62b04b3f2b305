"""Replay the fuzzers' regression inputs (fuzz/regress/<target>/) and seed
corpora (fuzz/corpus/<target>/) through the Python reader.

fuzz/run.sh replays them through the libFuzzer harnesses, which call the C
parsers directly; this test sends the same bytes through the whole Python
path (open, footer, schema, stream, Arrow export), both as a file exactly as
stored and wrapped as a footer between PAR1 magics (the shape fuzz_footer
also tries). Each must give a valid table or a HyperStreamError naming the
file -- in a child process, so a crash fails only its input.
"""

import os
import struct
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest  # noqa: E402

# Targets whose inputs are (or contain) Parquet bytes.
TARGETS = ("reader", "footer", "decoders")


def _inputs():
    out = []
    for kind in ("regress", "corpus"):
        for target in TARGETS:
            d = os.path.join(conftest.REPO_ROOT, "fuzz", kind, target)
            if not os.path.isdir(d):
                continue
            for dirpath, _, names in os.walk(d):
                for n in sorted(names):
                    if n.startswith(".") or n.startswith("README"):
                        continue
                    out.append(os.path.relpath(os.path.join(dirpath, n), conftest.REPO_ROOT))
    return sorted(out)


INPUTS = _inputs()


def _as_footer(data):
    return b"PAR1" + data + struct.pack("<I", len(data)) + b"PAR1"


@pytest.fixture(scope="module")
def replayed(hdb, tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz_replay")
    ops, names = [], {}
    for i, rel in enumerate(INPUTS):
        with open(os.path.join(conftest.REPO_ROOT, rel), "rb") as f:
            data = f.read()
        for shape, blob in (("raw", data), ("footer", _as_footer(data))):
            p = str(d / f"in{i}_{shape}.parquet")
            with open(p, "wb") as f:
                f.write(blob)
            ops.append({"id": f"{rel}|{shape}", "op": "read", "path": p})
            names[f"{rel}|{shape}"] = p
    return conftest.run_isolated(ops, timeout_per_op=20), names


@pytest.mark.parametrize("shape", ["raw", "footer"])
@pytest.mark.parametrize("rel", INPUTS)
def test_replay(rel, shape, replayed):
    results, names = replayed
    res, path = results[f"{rel}|{shape}"], names[f"{rel}|{shape}"]
    assert not res.get("crash"), f"{rel} ({shape}): CRASH {res['crash']}\n{res.get('stderr', '')}"
    if res["ok"]:
        return  # the child validated the table (Table.validate(full=True))
    assert res["hs"], f"{rel} ({shape}): not a HyperStreamError: {res['type']}: {res['msg']}"
    assert os.path.basename(path) in res["msg"], (
        f"{rel} ({shape}): message does not name the file: {res['msg']!r}")


def test_regress_dirs_exist():
    """The layout fuzz/run.sh and this test rely on."""
    for target in TARGETS:
        assert os.path.isdir(os.path.join(conftest.REPO_ROOT, "fuzz", "corpus", target)) or \
            not os.path.exists(os.path.join(conftest.REPO_ROOT, "fuzz", f"fuzz_{target}.c")), (
            f"fuzz/fuzz_{target}.c exists but fuzz/corpus/{target}/ (its seeds) does not")

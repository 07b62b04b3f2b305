"""The benchmark-only switch of bench/bench_index_binding.py
(hs_bench_skip_repeat_verify, src/common/verify_switch.h).

The benchmark's "off" mode must really turn the repeated checks off (or its
ratio measures nothing), must be off unless a program turns it on, and
turning it back off must restore the checks for everything already cached.
Checked on a table whose data file b carries data file a's index (copied
over): with the checks on the index is refused (explain) and the answer is
pyarrow's; with the switch on nothing refuses it and all three files are
narrowed by an index; off again, refused and exact again. About 2 s.
"""

import ctypes
import json
import os
import random
import shutil
import subprocess
import sys
import warnings

import pytest

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pq = pytest.importorskip("pyarrow.parquet")
hdb = pytest.importorskip("hyperstreamdb")
from hyperstreamdb import _core  # noqa: E402

ROWS = 400


def _switch():
    fn = ctypes.CDLL(_core.__file__).hs_bench_skip_repeat_verify
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def _registry(t):
    meta = json.load(open(t.metadata_location))
    path = meta["properties"]["hyperstream.index-registry"]
    if path.startswith("file:"):
        path = path[len("file:"):]
    return json.load(open(path))["entries"]


def test_switch_is_off_unless_turned_on():
    code = ("import ctypes, hyperstreamdb, hyperstreamdb._core as c\n"
            "f = ctypes.CDLL(c.__file__).hs_bench_skip_repeat_verify\n"
            "f.argtypes = [ctypes.c_int]\n"
            "print(f(0), f(1), f(0))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    assert out == ["0", "0", "1"]  # off at start; each call returns the previous setting


def test_switch_turns_the_binding_check_off_and_back_on(tmp_path):
    rng = random.Random(5)
    t = hdb.Table(str(tmp_path / "t"))
    for i in range(3):
        t.write(pa.table({"id": list(range(i * 10000, i * 10000 + ROWS)),
                          "cat": [f"k{rng.randrange(10)}" for _ in range(ROWS)]}))
    t.add_index("cat", "bitmap")
    t.wait_for_indexes()
    m = {e["data-file"]: e["index-file"] for e in _registry(t) if "cat" in e["columns"]}
    files = sorted(m)
    truth = pa.concat_tables([pq.read_table(f) for f in files])
    a, b = files[:2]
    shutil.copyfile(m[a], m[b])  # b's index now describes a
    os.utime(m[b], ns=(1, 3 * 10**18 + 1))  # a distinct stamp for the rewritten file

    def answer(cat):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            got = sorted(t.to_arrow(filter=f"cat = '{cat}'", columns=["id"])
                         .column("id").to_pylist())
        warned = any(issubclass(w.category, hdb.IndexIgnoredWarning) for w in seen)
        return got, warned

    def use(cat):
        e = t.explain(filter=f"cat = '{cat}'", as_dict=True)
        return e["files_indexed"], e["files_index_rejected"]

    cats = [f"k{i}" for i in range(10)]
    want = {c: sorted(truth.filter(pc.equal(truth.column("cat"), c)).column("id").to_pylist())
            for c in cats}
    sw = _switch()
    assert sw(0) == 0
    try:
        for c in cats:
            assert answer(c) == (want[c], True), c  # refused, read exactly, warned
            assert use(c) == (2, 1), c
        sw(1)
        for c in cats:  # the foreign index is used: no check refuses it
            assert use(c) == (3, 0), c
    finally:
        sw(0)
    for c in cats:  # the cached (foreign) column is checked again
        assert use(c) == (2, 1), c
        assert answer(c) == (want[c], True), c

"""The Apache parquet-testing corpus, file by file.

Every Parquet file under data/ (recursively; encrypted ones included) either
decodes exactly as pyarrow decodes it, or is listed in EXPECTED_ERRORS with the
exception class, a message substring and the reason -- and then that exact
error is asserted. Files pyarrow itself cannot read are listed too; an
unlisted file that pyarrow cannot read fails the test, so the list stays
complete. Every file in bad_data/ must give a HyperStreamError whose message
names the file (BAD_DATA_READABLE lists the ones whose defect readers may
tolerate). *_expect.csv files are compared where present. Finally the ASan+UBSan
CLI ($HS_ASAN_CLI read FILE --count) runs over every file: no sanitizer report,
no signal, exit status matching the Python outcome.

Reads go through conftest.run_isolated, so a crash in the C core fails the one
file that caused it instead of killing pytest.

Corpus location: $HS_CONFORMANCE_DIR, else ../shared/conformance/parquet-testing
relative to the repository root.
"""

import csv
import os
import sys

import pyarrow.parquet as pq
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest  # noqa: E402

CORPUS = conftest.conformance_dir()

_ENC = ("UnsupportedError", "encrypt",
        "Parquet modular encryption is not implemented; the test has no keys either")

# relative path -> (exception class name in hyperstreamdb, message substring
# (case-insensitive), why)
EXPECTED_ERRORS = {
    # Encrypted files: a clear "unsupported" naming encryption, never garbage.
    "data/encrypt_columns_and_footer.parquet.encrypted": _ENC,
    "data/encrypt_columns_and_footer_aad.parquet.encrypted": _ENC,
    "data/encrypt_columns_and_footer_bloom_filter.parquet.encrypted": _ENC,
    "data/encrypt_columns_and_footer_ctr.parquet.encrypted": _ENC,
    "data/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted": _ENC,
    "data/encrypt_columns_plaintext_footer.parquet.encrypted": _ENC,
    "data/external_key_material_java.parquet.encrypted": _ENC,
    "data/uniform_encryption.parquet.encrypted": _ENC,
    "data/aes256/encrypt_columns_and_footer.parquet.encrypted": _ENC,
    "data/aes256/encrypt_columns_and_footer_ctr.parquet.encrypted": _ENC,
    "data/aes256/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted": _ENC,
    "data/aes256/encrypt_columns_plaintext_footer.parquet.encrypted": _ENC,
    "data/aes256/uniform_encryption.parquet.encrypted": _ENC,
    # Deliberately wrong page CRCs: we verify CRCs whenever a page carries one
    # (pyarrow only does with page_checksum_verification=True).
    "data/datapage_v1-corrupt-checksum.parquet": (
        "CorruptFileError", "page CRC mismatch", "a data page's CRC is deliberately wrong"),
    "data/rle-dict-uncompressed-corrupt-checksum.parquet": (
        "CorruptFileError", "page CRC mismatch", "the dictionary page's CRC is deliberately wrong"),
    # pyarrow cannot read these either.
    "data/incorrect_map_schema.parquet": (
        "HyperStreamError", "map",
        "MAP whose key field is optional; the spec requires keys to be required "
        "(pyarrow: 'Map keys must be annotated as required')"),
    "data/large_string_map.brotli.parquet": (
        "UnsupportedError", "2^31-1 bytes",
        "brotli decodes, but one column chunk holds over 2 GiB of strings, more than the "
        "int32 offsets of an Arrow string batch can address (large_string output is not "
        "implemented yet); pyarrow also fails on it: 'Nested data conversions not "
        "implemented for chunked array outputs'"),
}

# bad_data files whose defect a reader may tolerate: for these we accept either
# a HyperStreamError naming the file or exactly pyarrow's decode.
BAD_DATA_READABLE = {
    "bad_data/ARROW-GH-43605.parquet": (
        "column chunk says it has no dictionary page though its first page is one and it "
        "lists RLE_DICTIONARY; pyarrow and DuckDB read all 21186 rows"),
}


def _files(sub, pred):
    if CORPUS is None:
        return []
    root = os.path.join(CORPUS, sub)
    out = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            if pred(n):
                out.append(os.path.relpath(os.path.join(dirpath, n), CORPUS))
    return sorted(out)


DATA_FILES = _files("data", lambda n: n.endswith(".parquet") or n.endswith(".parquet.encrypted"))
BAD_FILES = _files("bad_data", lambda n: n.endswith(".parquet"))
CSV_FILES = _files("data", lambda n: n.endswith("_expect.csv"))
ALL_FILES = DATA_FILES + BAD_FILES


def test_corpus_present():
    assert CORPUS is not None, (
        "conformance corpus not found: set HS_CONFORMANCE_DIR or check out "
        "../shared/conformance/parquet-testing")
    assert len(DATA_FILES) > 50 and len(BAD_FILES) > 3, (DATA_FILES, BAD_FILES)


def test_expected_errors_are_real_files():
    """A stale entry (renamed or removed file) would silently skip nothing."""
    for rel in list(EXPECTED_ERRORS) + list(BAD_DATA_READABLE):
        assert rel in ALL_FILES, f"{rel} listed but not in the corpus"


@pytest.fixture(scope="session")
def our_reads(tmp_path_factory, hdb):
    """One isolated read of every corpus file through hdb.parquet.read_table;
    successful reads are saved as Arrow IPC for comparison."""
    out_dir = tmp_path_factory.mktemp("conformance")
    ops = []
    for i, rel in enumerate(ALL_FILES):
        ops.append({"id": rel, "op": "read", "path": os.path.join(CORPUS, rel),
                    "out": str(out_dir / f"{i}.arrow")})
    results = conftest.run_isolated(ops)
    for op in ops:
        results[op["id"]]["out"] = op["out"]
    return results


def _describe(res):
    if res.get("crash"):
        return f"CRASH ({res['crash']}): {res.get('stderr', '')[-2000:]}"
    if res["ok"]:
        return f"read OK ({res.get('num_rows')} rows)"
    return f"{res['type']}: {res['msg']}"


def _assert_expected_error(rel, res, cls_name, substring):
    base = os.path.basename(rel)
    assert not res.get("crash"), f"{rel}: {_describe(res)}"
    assert not res["ok"], f"{rel}: expected {cls_name} ({substring!r}), got {_describe(res)}"
    assert res["hs"], f"{rel}: not a HyperStreamError: {_describe(res)}"
    assert cls_name in res["mro"], f"{rel}: expected {cls_name}, got {_describe(res)}"
    assert substring.lower() in res["msg"].lower(), (
        f"{rel}: message lacks {substring!r}: {res['msg']!r}")
    assert base in res["msg"], f"{rel}: message does not name the file: {res['msg']!r}"


def _pyarrow_read(full):
    try:
        return pq.read_table(full), None
    except Exception as e:  # noqa: BLE001 -- recorded and asserted on
        return None, e


@pytest.mark.parametrize("rel", DATA_FILES)
def test_data_file(rel, our_reads):
    res = our_reads[rel]
    full = os.path.join(CORPUS, rel)
    if rel in EXPECTED_ERRORS:
        cls_name, substring, _why = EXPECTED_ERRORS[rel]
        _assert_expected_error(rel, res, cls_name, substring)
        return
    expected, pa_err = _pyarrow_read(full)
    assert pa_err is None, (
        f"{rel}: pyarrow cannot read it ({pa_err!r}); add it to EXPECTED_ERRORS with the "
        f"error we give ({_describe(res)})")
    assert res["ok"], f"{rel}: {_describe(res)}"
    got = conftest.read_ipc(res["out"])
    conftest.assert_tables_equal(got, expected, what=rel)


@pytest.mark.parametrize("rel", BAD_FILES)
def test_bad_file(rel, our_reads):
    res = our_reads[rel]
    assert not res.get("crash"), f"{rel}: {_describe(res)}"
    if res["ok"] and rel in BAD_DATA_READABLE:
        expected, pa_err = _pyarrow_read(os.path.join(CORPUS, rel))
        assert pa_err is None, f"{rel}: we read it but pyarrow cannot: {pa_err!r}"
        conftest.assert_tables_equal(conftest.read_ipc(res["out"]), expected, what=rel)
        return
    _assert_expected_error(rel, res, "HyperStreamError", "")


def _csv_cell(v):
    if v is None:
        return ""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


@pytest.mark.parametrize("csv_rel", CSV_FILES)
def test_expect_csv(csv_rel, our_reads):
    """Compare with the corpus' own expected values, positionally (CSV headers
    differ from the Parquet names in whitespace and punctuation). An empty
    cell matches null or ""."""
    rel = csv_rel[: -len("_expect.csv")] + ".parquet"
    res = our_reads[rel]
    assert res["ok"], f"{rel}: {_describe(res)}"
    got = conftest.read_ipc(res["out"])
    with open(os.path.join(CORPUS, csv_rel), newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    assert got.num_columns == len(header), (got.column_names, header)
    assert got.num_rows == len(body), (got.num_rows, len(body))
    cols = [got.column(i).to_pylist() for i in range(got.num_columns)]
    for r, line in enumerate(body):
        for c, cell in enumerate(line):
            v = cols[c][r]
            ok = (v is None or v == "") if cell == "" else _csv_cell(v) == cell
            assert ok, f"{rel}: row {r} column {header[c]!r}: ours {v!r}, expected {cell!r}"


@pytest.mark.parametrize("rel", ALL_FILES)
def test_asan_cli(rel):
    cli = conftest.asan_cli()
    if not cli:
        pytest.skip("HS_ASAN_CLI is not set (scripts/test.sh sets it to build/asan/hyperstream)")
    assert os.access(cli, os.X_OK), f"HS_ASAN_CLI={cli} is not an executable"
    full = os.path.join(CORPUS, rel)
    rc, out, err = conftest.run_asan_cli(full)
    conftest.assert_no_sanitizer_report(rc, err, f"{cli} read {rel} --count")
    must_fail = rel in EXPECTED_ERRORS or (rel in BAD_FILES and rel not in BAD_DATA_READABLE)
    if must_fail:
        assert rc != 0, f"{rel}: CLI exited 0 on a file that must fail; stdout {out[-500:]!r}"
        assert os.path.basename(rel) in err, f"{rel}: CLI error does not name the file: {err!r}"
    elif rel in DATA_FILES:
        assert rc == 0, f"{rel}: CLI failed (rc={rc}): {err[-2000:]}"
        # Rows as pyarrow decodes them: some footers say num_rows 0 while the
        # row groups hold rows (repeated_no_annotation.parquet).
        try:
            expected = pq.read_table(full).num_rows
        except Exception:  # pyarrow cannot decode it: fall back to the footer
            expected = pq.ParquetFile(full).metadata.num_rows
        assert str(expected) in out, f"{rel}: CLI count {out.strip()!r}, expected {expected}"

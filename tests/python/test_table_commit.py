"""Tables written by our C commit path, read by stock Iceberg readers.

The C test executable `test_table` has a driver mode (HS_TABLE_DRIVER=<dir>,
HS_TABLE_FORMAT=2|3, HS_TABLE_APPENDS=N): it creates a table, appends N
batches through hs_table_append and prints, for every snapshot, the ids our
own scan (hs_table_scan) returns, then the latest metadata file. Rows follow
a formula of their id (name "n<id>", null when id % 7 == 0; x = id / 2), so
every column can be checked.

Here pyiceberg's StaticTable.from_metadata opens that metadata file and must
return exactly our rows at every snapshot, in format v2 and v3; pyarrow and
DuckDB read each data file and find the Iceberg field ids on every column.
"""

import os
import subprocess

import pyarrow.parquet as pq
import pytest

pyiceberg_table = pytest.importorskip("pyiceberg.table")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _exe():
    exe = os.environ.get("HS_TABLE_EXE")
    if exe:
        return exe
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "test_table")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


def _drive(root, fmt, appends):
    env = {**os.environ, "HS_TABLE_DRIVER": str(root), "HS_TABLE_FORMAT": str(fmt),
           "HS_TABLE_APPENDS": str(appends)}
    r = subprocess.run([_exe()], capture_output=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    snaps, meta = [], None
    for line in r.stdout.decode().splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "snapshot":
            sid, _, ids = rest.partition(" ")
            snaps.append((int(sid), sorted(int(x) for x in ids.split(",") if x)))
        elif kind == "metadata":
            meta = rest
    assert meta is not None and snaps
    return snaps, meta


def _expected_rows(ids):
    return [{"id": i, "name": None if i % 7 == 0 else f"n{i}", "x": i * 0.5} for i in ids]


@pytest.mark.parametrize("fmt", [2, 3])
def test_pyiceberg_reads_every_snapshot(tmp_path, fmt):
    appends = 4
    snaps, meta = _drive(tmp_path / "t", fmt, appends)
    assert len(snaps) == appends
    table = pyiceberg_table.StaticTable.from_metadata(meta)
    md = table.metadata
    assert md.format_version == fmt
    assert [s.snapshot_id for s in md.snapshots] == [sid for sid, _ in snaps]
    assert md.current_snapshot_id == snaps[-1][0]
    assert md.refs["main"].snapshot_id == snaps[-1][0]
    assert len(md.snapshot_log) == appends
    assert [e.metadata_file for e in md.metadata_log] == [
        os.path.join(str(tmp_path / "t"), "metadata", f"v{v}.metadata.json") for v in range(1, appends + 1)
    ]

    total = 0
    for n, (sid, ours) in enumerate(snaps):
        snap = md.snapshot_by_id(sid)
        assert snap.sequence_number == n + 1
        added = 10 + 37 * n
        total += added
        # Our own scan: exactly the rows appended up to this snapshot.
        assert ours == list(range(total))
        summary = snap.summary
        assert summary.operation.value == "append"
        assert summary["added-records"] == str(added)
        assert summary["total-records"] == str(total)
        assert summary["added-data-files"] == "1"
        assert summary["total-data-files"] == str(n + 1)
        if fmt == 3:
            assert snap.first_row_id == total - added
            assert snap.added_rows == added
        got = table.scan(snapshot_id=sid).to_arrow().sort_by("id").to_pylist()
        assert got == _expected_rows(ours)
    if fmt == 3:
        assert md.next_row_id == total
    # The current snapshot is the last one.
    assert table.scan().to_arrow().num_rows == total


def test_data_files_carry_field_ids_and_read_in_duckdb(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    snaps, meta = _drive(tmp_path / "t", 2, 2)
    table = pyiceberg_table.StaticTable.from_metadata(meta)
    files = [t.file.file_path for t in table.scan().plan_files()]
    assert len(files) == 2
    want_ids = {f.name: f.field_id for f in table.schema().fields}
    rows = 0
    for path in files:
        assert path.startswith(str(tmp_path / "t" / "data") + "/")
        pf = pq.ParquetFile(path)
        schema = pf.schema_arrow
        for field in schema:
            assert int(field.metadata[b"PARQUET:field_id"]) == want_ids[field.name]
        n = duckdb.connect().execute(f"SELECT count(*), count(DISTINCT id) FROM read_parquet('{path}')").fetchone()
        assert n[0] == n[1] == pf.metadata.num_rows
        rows += n[0]
    assert rows == len(snaps[-1][1])


def test_manifests_name_only_files_inside_the_table(tmp_path):
    _, meta = _drive(tmp_path / "t", 2, 3)
    table = pyiceberg_table.StaticTable.from_metadata(meta)
    root = str(tmp_path / "t") + "/"
    snap = table.metadata.current_snapshot()
    assert snap.manifest_list.startswith(root + "metadata/")
    manifests = snap.manifests(table.io)
    assert len(manifests) == 3  # ours first, then the previous snapshot's
    assert manifests[0].added_snapshot_id == snap.snapshot_id
    for m in manifests:
        assert m.manifest_path.startswith(root + "metadata/")
        for e in m.fetch_manifest_entry(table.io):
            assert e.data_file.file_path.startswith(root + "data/")
            assert e.data_file.record_count > 0

"""Iceberg tables: transactional appends, snapshots and time travel.

A :class:`Table` is a folder of Parquet data files under genuine Apache
Iceberg metadata (``metadata/vN.metadata.json``, Avro manifests), written and
read by HyperStreamDB's C core. Any Iceberg reader (pyiceberg, Spark, Trino,
DuckDB's iceberg extension) opens it and sees the same rows.

    >>> import hyperstreamdb as hdb
    >>> t = hdb.Table("/tmp/events")            # created on the first write
    >>> t.write([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}])
    >>> t.write(pandas_df)                       # each write is one snapshot
    >>> t.to_arrow(columns=["name"], snapshot_id=t.snapshots()[0].snapshot_id)

Every write is one atomic append: it commits a new snapshot or nothing, also
when several processes append to the same table at once. Data whose schema
does not fit the table raises :class:`~hyperstreamdb.SchemaError` and writes
nothing.

Input kinds accepted by :meth:`Table.write`: ``pyarrow.Table``,
``RecordBatch``, ``RecordBatchReader``, anything implementing the Arrow
PyCapsule Interface (``__arrow_c_stream__``, e.g. polars data frames),
pandas data frames, dicts of columns and lists of row dicts. Arrow inputs
must have the table's column names and types; only representation variants
are adapted (column order, ``large_string``/``string_view`` to ``string``,
``large_binary`` to ``binary``, ``large_list`` to ``list``, and ``list`` rows
to a vector column's ``fixed_size_list<float, D>`` when every row has D values;
another dimension is a SchemaError naming the column). Inputs whose types
Python infers (pandas, dicts, lists of dicts) are converted to the table's
schema, with a :class:`~hyperstreamdb.SchemaError` when a value does not fit.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import _core
from . import _vector_search as _vs
from ._core import InvalidArgumentError, NotFoundError, SchemaError
from ._filters import columns_arg as _columns_arg
from ._filters import filter_arg as _filter_arg
from . import _binding
from ._indexes import IndexMethods
from ._changes import ChangeMethods
from ._compact import CompactMethods
from ._stats import StatsMethods

__all__ = ["Table", "Snapshot", "HistoryEntry", "Ref", "Query", "ExpiredSnapshots"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Snapshot:
    """One snapshot of a table (an entry of :meth:`Table.snapshots`).

    Counts come from the snapshot summary Iceberg writers record; they are
    ``None`` when the writer left them out.
    """

    snapshot_id: int
    parent_snapshot_id: Optional[int]
    sequence_number: int
    timestamp_ms: int
    operation: str
    added_records: Optional[int]
    total_records: Optional[int]
    added_data_files: Optional[int]
    total_data_files: Optional[int]

    @property
    def timestamp(self) -> _dt.datetime:
        """Commit time as an aware UTC datetime."""
        return _dt.datetime.fromtimestamp(self.timestamp_ms / 1000.0, tz=_dt.timezone.utc)


# ------------------------------------------------------------ input kinds


def _is_pandas(data: Any) -> bool:
    mod = type(data).__module__
    return mod.startswith("pandas") and hasattr(data, "columns") and hasattr(data, "dtypes")


def _schema_error(msg: str) -> SchemaError:
    err = SchemaError(msg)
    err.status = "schema mismatch"
    return err


def _inferred(data: Any, target: Optional[pa.Schema]) -> Optional[pa.Table]:
    """Convert inputs whose Arrow types Python infers (pandas, dict of
    columns, list of row dicts) to a pyarrow Table; with `target`, build it
    in the table's schema. None when `data` is not such an input."""
    if _is_pandas(data):
        cols = [str(c) for c in data.columns]
        if target is None:
            return pa.Table.from_pandas(data, preserve_index=False)
        _check_names(cols, target, exact=True)
        sub = data[list(data.columns)]
        sub.columns = cols
        return _convert(lambda: pa.Table.from_pandas(sub[target.names], schema=target,
                                                    preserve_index=False))
    if isinstance(data, dict):
        names = [str(k) for k in data]
        if target is None:
            return pa.table(data)
        _check_names(names, target, exact=True)
        by_name = {str(k): v for k, v in data.items()}
        return _convert(lambda: pa.table({n: by_name[n] for n in target.names}, schema=target))
    if isinstance(data, (list, tuple)) and all(isinstance(r, dict) for r in data):
        if target is None:
            if not data:
                raise InvalidArgumentError(
                    "an empty list of rows has no schema to create the table from")
            return pa.Table.from_pylist(list(data))
        keys = {str(k) for r in data for k in r}
        extra = sorted(keys - set(target.names))
        if extra:
            raise _schema_error(f"rows have columns the table lacks: {extra}; table columns: "
                                f"{target.names}")
        return _convert(lambda: pa.Table.from_pylist(list(data), schema=target))
    return None


def _convert(build) -> pa.Table:
    try:
        return build()
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError,
            ValueError, OverflowError) as e:
        raise _schema_error(f"data does not fit the table schema: {e}") from e


def _check_names(names: Sequence[str], target: pa.Schema, exact: bool) -> None:
    have, want = set(names), set(target.names)
    if len(have) != len(names):
        raise _schema_error(f"duplicate column names in the data: {list(names)}")
    if have != want:
        missing, extra = sorted(want - have), sorted(have - want)
        raise _schema_error(
            f"columns do not match the table: missing {missing}, unexpected {extra}")


def _canonical(t: pa.DataType) -> pa.DataType:
    """The type with representation variants folded (large/view strings,
    binaries and lists): what the table stores them as."""
    if pa.types.is_large_string(t) or getattr(pa.types, "is_string_view", lambda _: False)(t):
        return pa.string()
    if pa.types.is_large_binary(t) or getattr(pa.types, "is_binary_view", lambda _: False)(t):
        return pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        f = t.value_field
        return pa.list_(f.with_type(_canonical(f.type)))
    if pa.types.is_fixed_size_list(t):
        f = t.value_field
        return pa.list_(f.with_type(_canonical(f.type)), t.list_size)
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_canonical(t.field(i).type))
                          for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(_canonical(t.key_type), _canonical(t.item_type))
    return t


def _as_reader(data: Any) -> pa.RecordBatchReader:
    """Any supported Arrow input as a RecordBatchReader (not yet consumed)."""
    if isinstance(data, pa.RecordBatchReader):
        return data
    if isinstance(data, pa.Table):
        return pa.RecordBatchReader.from_batches(data.schema, data.to_batches())
    if isinstance(data, pa.RecordBatch):
        return pa.RecordBatchReader.from_batches(data.schema, [data])
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data)
    if hasattr(data, "__arrow_c_array__"):
        batch = pa.record_batch(data)
        return pa.RecordBatchReader.from_batches(batch.schema, [batch])
    raise TypeError(
        "write() accepts a pyarrow Table, RecordBatch or RecordBatchReader, an object with "
        "__arrow_c_stream__ (e.g. a polars DataFrame), a pandas DataFrame, a dict of columns "
        f"or a list of row dicts; got {type(data).__name__}")


def _as_vector(src: pa.DataType, want: pa.DataType) -> bool:
    """Is `src` a (large) list that a fixed_size_list column `want` takes
    once every row has the column's size (same element type)?"""
    return (pa.types.is_fixed_size_list(want) and
            (pa.types.is_list(src) or pa.types.is_large_list(src)) and
            _canonical(pa.list_(src.value_field)) == _canonical(pa.list_(want.value_field)))


def _vector_cast(col: pa.Array, f: pa.Field) -> pa.Array:
    """A list column cast to vector column `f`'s fixed size, or a
    SchemaError naming the column and the first row of another length
    (null rows are fine: a null vector)."""
    try:
        return col.cast(f.type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        import pyarrow.compute as pc
        lens = pc.list_value_length(col)
        bad = pc.fill_null(pc.not_equal(lens, f.type.list_size), False)
        row = pc.index(bad, True).as_py()
        what = (f"row {row} has {lens[row].as_py()} values" if row is not None and row >= 0
                else str(e))
        raise _schema_error(
            f"column '{f.name}': table has fixed_size_list<{f.type.value_type}, "
            f"{f.type.list_size}>, data has {col.type} whose {what} (vector dimensions "
            "differ)") from None


def _conform(reader: pa.RecordBatchReader, target: pa.Schema,
             failed: Optional[List[BaseException]] = None) -> pa.RecordBatchReader:
    """Adapt `reader` to `target` when they differ only in column order or
    representation variants, or give list rows to a vector column
    (fixed_size_list<float, D>: each row must have D values); otherwise
    return it unchanged and let the C core's schema check name the
    difference (it writes nothing then). A SchemaError raised while
    adapting a batch is appended to `failed` (the C core sees a failed
    stream and writes nothing)."""
    src = reader.schema
    if src.remove_metadata().equals(target, check_metadata=False):
        return reader
    names = src.names
    if set(names) != set(target.names) or len(names) != len(target.names):
        return reader
    vectors = set()
    for f in target:
        g = src.field(f.name)
        if _as_vector(g.type, f.type):
            vectors.add(f.name)
        elif (pa.types.is_fixed_size_list(g.type) and pa.types.is_list(f.type) and
              _canonical(pa.list_(g.type.value_field)) == _canonical(f.type)):
            pass  # fixed-size rows into a variable-list column: cast below
        elif _canonical(g.type) != _canonical(f.type):
            return reader
    # Same columns and storage types: cast batch by batch (no copy for
    # reordering; offsets widen or narrow for the variants).
    def batches() -> Iterator[pa.RecordBatch]:
        for b in reader:
            try:
                cols = [_vector_cast(b.column(b.schema.get_field_index(f.name)), f)
                        if f.name in vectors else
                        b.column(b.schema.get_field_index(f.name)).cast(f.type)
                        for f in target]
            except SchemaError as e:
                if failed is not None:
                    failed.append(e)
                raise
            yield pa.RecordBatch.from_arrays(cols, schema=target)

    return pa.RecordBatchReader.from_batches(target, batches())


def _as_of_ms(as_of: Union[_dt.datetime, _dt.date, int, float]) -> int:
    """A point in time as epoch milliseconds (naive datetimes are local time)."""
    if isinstance(as_of, bool):
        raise InvalidArgumentError("as_of must be a datetime or epoch milliseconds, not a bool")
    if isinstance(as_of, (int, float)):
        return int(as_of)
    if isinstance(as_of, _dt.datetime):
        return int(as_of.timestamp() * 1000)
    if isinstance(as_of, _dt.date):
        return int(_dt.datetime(as_of.year, as_of.month, as_of.day).timestamp() * 1000)
    raise InvalidArgumentError(
        f"as_of must be a datetime, date or epoch milliseconds, not {type(as_of).__name__}")


def _batches(stream: Any) -> Iterator[pa.RecordBatch]:
    while True:
        capsules = stream._read_next()
        if capsules is None:
            return
        yield pa.RecordBatch._import_from_c_capsule(*capsules)


# ------------------------------------------------------------------ Table



def _cutoff_ms(what: str, older_than: Union[_dt.timedelta, _dt.datetime]) -> int:
    """A cut-off in ms since the epoch: now minus a timedelta, or a datetime."""
    if isinstance(older_than, _dt.timedelta):
        if older_than < _dt.timedelta(0):
            raise InvalidArgumentError(f"{what}: older_than must not be negative, got {older_than}")
        cutoff = _dt.datetime.now(_dt.timezone.utc) - older_than
    elif isinstance(older_than, _dt.datetime):
        cutoff = older_than
    else:
        raise TypeError(f"{what}: older_than must be a datetime.timedelta or datetime.datetime, "
                        f"not {type(older_than).__name__}")
    return int(cutoff.timestamp() * 1000)


@dataclass(frozen=True)
class ExpiredSnapshots:
    """What :meth:`Table.expire_snapshots` removed (or would, with ``dry_run``)."""

    snapshot_ids: List[int]
    files_deleted: List[str]
    bytes_deleted: int
    dry_run: bool = False

    def __repr__(self) -> str:
        verb = "would expire" if self.dry_run else "expired"
        return (f"<ExpiredSnapshots {verb} {len(self.snapshot_ids)} snapshots, "
                f"{len(self.files_deleted)} files ({self.bytes_deleted:,} bytes)>")


_I64_MAX = (1 << 63) - 1


def _size_arg(name: str, v: Any, none: int) -> int:
    """A row count bound (limit, batch_rows): None gives `none`; negative is
    an error; above int64 it is clamped (it bounds nothing more)."""
    if v is None:
        return none
    if isinstance(v, bool):
        raise InvalidArgumentError(f"{name} must be an integer, got {v!r}")
    n = int(v)
    if n != v:
        raise InvalidArgumentError(f"{name} must be an integer, got {v!r}")
    if n < 0:
        raise InvalidArgumentError(f"{name} must be >= 0, got {n}")
    return n if n <= _I64_MAX else _I64_MAX


class Table(IndexMethods, ChangeMethods, CompactMethods, StatsMethods):
    """An Iceberg table in a local folder or under an S3 prefix, created on
    the first write.

    Args:
        uri: the table folder (created with its parents on the first write),
            or an ``s3://bucket/prefix`` URI.
        format_version: Iceberg format of a table this object creates, 2
            (default) or 3; an existing table keeps its own.
        properties: extra Iceberg table properties for a table this object
            creates.
        index_all: index every top-level scalar column (kind "inverted"),
            also columns of later writes; built in the background after each
            write, on one thread at the lowest CPU priority so that writes
            do not wait for it (see :meth:`add_index`,
            :meth:`wait_for_indexes`). Until a file's index is registered,
            queries scan that file; results are the same either way.
        storage_options: object-store options for a table on S3
            (``"s3://bucket/prefix/t"``): credentials, region, endpoint, as
            LanceDB (``aws_access_key_id``, ``aws_secret_access_key``,
            ``region``, ``endpoint``, ``allow_http``) or pyiceberg
            (``s3.access-key-id``, ``s3.secret-access-key``, ``s3.region``,
            ``s3.endpoint``) spell them. Unset ones come from the AWS
            environment (``AWS_ACCESS_KEY_ID``, ``AWS_PROFILE``, ...).
        staleness_s: how old (seconds) this object's view of the table may
            be before a read checks for newer versions (default ``None``: 0,
            every read checks). Within the bound a read does no I/O to find
            the latest version, so another process's commit may be seen up to
            ``staleness_s`` late; this object's own commits are seen at once.

    Every read sees the latest committed version (other processes may have
    committed since the last call; on a local table the check is two
    ``stat`` calls when nothing changed), unless ``staleness_s`` allows
    otherwise. Reads of a table that does not exist yet raise
    :class:`~hyperstreamdb.NotFoundError`; ``len()`` is then 0.
    """

    def __init__(self, uri: PathLike, format_version: int = 2,
                 properties: Optional[dict] = None, index_all: bool = False,
                 storage_options: Optional[dict] = None,
                 staleness_s: Optional[float] = None) -> None:
        if format_version not in (2, 3):
            raise InvalidArgumentError(f"format_version must be 2 or 3, got {format_version!r}")
        self._staleness_ms = 0
        if staleness_s is not None:
            if isinstance(staleness_s, bool) or not isinstance(staleness_s, (int, float)) \
                    or not staleness_s >= 0:
                raise InvalidArgumentError(
                    f"staleness_s must be a number of seconds >= 0, got {staleness_s!r}")
            self._staleness_ms = int(min(float(staleness_s), 9.2e15) * 1000)
        self._uri = os.fspath(uri)
        if isinstance(self._uri, bytes):
            self._uri = os.fsdecode(self._uri)
        if storage_options is not None:
            # For every location below the table's URI (the longest registered
            # prefix wins, then the AWS environment and ~/.aws files).
            _core.store_configure(self._uri, dict(storage_options))
        self._format_version = format_version
        self._properties = dict(properties or {})
        self._handle: Any = None
        self._vs_cache: Any = None  # vector searches' open table (_vector_search.run)
        self._index_all = bool(index_all)
        if self._load() and self._index_all:
            self._index_after_write()

    # ------------------------------------------------------------ state

    def _load(self) -> bool:
        """Open or refresh; False when there is no table (yet)."""
        if self._handle is not None:
            self._handle.refresh()
            return True
        try:
            self._handle = _core.table_open(self._uri)
            if self._staleness_ms:
                self._handle.set_staleness_ms(self._staleness_ms)
        except NotFoundError:
            if os.path.isdir(os.path.join(self._uri, "metadata")):
                raise
            return False
        return True

    def _require(self) -> Any:
        if not self._load():
            raise NotFoundError(f"{self._uri}: no table here yet (write data to create it)")
        return self._handle

    @property
    def uri(self) -> str:
        """The table folder, as given."""
        return self._uri

    def sql(self, query: str, params=None):
        """Run a SQL statement over this table, which is ``t`` and also its
        folder name: ``t.sql("SELECT id FROM t WHERE score > $1", [0.5])``.
        Returns a :class:`~hyperstreamdb.SqlResult`; see
        :class:`~hyperstreamdb.Session` for the language."""
        from ._sql import Session

        s = Session()
        s.register("t", self)
        name = os.path.basename(os.path.normpath(self._uri))
        if name and name != "t" and name.isidentifier():
            s.register(name, self)
        return s.sql(query, params)

    @property
    def exists(self) -> bool:
        """Whether the folder holds a table (it does after the first write)."""
        return self._load()

    @property
    def schema(self) -> pa.Schema:
        """The table's current schema (pyarrow)."""
        return pa.Schema._import_from_c_capsule(self._require().schema())

    @property
    def current_snapshot_id(self) -> Optional[int]:
        """Id of the current snapshot; None for a table without one."""
        return self._handle.current_snapshot_id if self._load() else None

    @property
    def metadata_location(self) -> str:
        """Path of the current ``metadata/vN.metadata.json`` (what Iceberg
        readers such as ``pyiceberg.table.StaticTable.from_metadata`` open)."""
        return self._require().metadata_location

    @property
    def format_version(self) -> int:
        """The Iceberg format version of the table (or of the one to create)."""
        if not self._load():
            return self._format_version
        from ._indexes import metadata_json

        return int(metadata_json(self._handle.metadata_location)["format-version"])

    def snapshots(self) -> List[Snapshot]:
        """Every snapshot, oldest first, as :class:`Snapshot` objects.

        A list rather than a pyarrow table: snapshots are few, and each one's
        id goes straight into ``snapshot_id=``. ``pa.Table.from_pylist(
        [dataclasses.asdict(s) for s in t.snapshots()])`` makes a table.
        """
        if not self._load():
            return []
        return [Snapshot(**d) for d in self._handle.snapshots()]

    def __len__(self) -> int:
        """Live rows in the current snapshot: every data file's record count
        minus its deleted rows (position deletes, deletion vectors, equality
        deletes), from the scan plan (manifests and delete files; no data
        file is read)."""
        if not self._load():
            return 0
        if self._handle.current_snapshot_id is None:
            return 0
        return int(self._handle.count_rows()["rows"])

    def __repr__(self) -> str:
        if not self._load():
            return f"<hyperstreamdb.Table {self._uri!r} (not created yet)>"
        schema = self.schema
        cols = ", ".join(f"{f.name}: {f.type}" for f in schema)
        sid = self._handle.current_snapshot_id
        return (f"<hyperstreamdb.Table {self._uri!r}\n"
                f"  location: {self._handle.metadata_location}\n"
                f"  schema: {cols}\n"
                f"  current snapshot: {sid if sid is not None else 'none'}\n"
                f"  rows: {len(self)}{self._index_repr()}>")

    # ----------------------------------------------------------- writing

    def write(self, data: Any) -> Optional[int]:
        """Append ``data`` as one new snapshot (atomically); return its id,
        or None when ``data`` has no rows (nothing is committed).

        The first write creates the table with the schema of ``data``. See the
        module documentation for accepted inputs and schema rules; a misfit
        raises :class:`~hyperstreamdb.SchemaError` and writes nothing.
        """
        exists = self._load()
        # The handle was just refreshed: its schema, without another check
        # (on S3 each is a request; the commit checks again anyway).
        target = pa.Schema._import_from_c_capsule(self._handle.schema()) if exists else None
        table = _inferred(data, target)
        reader = _as_reader(table if table is not None else data)
        if not exists:
            schema = reader.schema.remove_metadata()
            try:
                self._handle = _core.table_create(self._uri, schema,
                                                  format_version=self._format_version,
                                                  properties=self._properties or None)
            except InvalidArgumentError:
                if not self._load():  # another writer created it first: append to theirs
                    raise
            target = self.schema
        # Data already in memory (not a stream) is kept for the background
        # index build, which then need not re-read the file just written.
        keep = not isinstance(data, pa.RecordBatchReader) and (
            table is not None or isinstance(data, (pa.Table, pa.RecordBatch))) \
            and self._index_wanted()
        kept = None
        failed: List[BaseException] = []
        try:
            if keep:
                sid, kept = self._handle.append(_conform(reader, target, failed), keep=True)
            else:
                sid = self._handle.append(_conform(reader, target, failed))
        except InvalidArgumentError:
            if failed:  # adapting the data failed: that error, not the stream's
                raise failed[0] from None
            raise
        if sid is not None:
            self._index_after_write(kept)  # new files' indexes: built in the background
        return sid

    def write_arrow(self, data: Any) -> Optional[int]:
        """Alias of :meth:`write` for Arrow data (pyarrow, polars, C streams)."""
        return self.write(data)

    def write_pandas(self, df: Any) -> Optional[int]:
        """Alias of :meth:`write` for a pandas DataFrame (its index is not stored)."""
        return self.write(df)

    # ----------------------------------------------------------- reading

    def _snapshot(self, snapshot_id: Optional[int], as_of: Any,
                  ref: Optional[str] = None) -> Optional[int]:
        given = [x is not None for x in (snapshot_id, as_of, ref)]
        if sum(given) > 1:
            raise InvalidArgumentError("give at most one of snapshot_id, as_of and ref")
        if as_of is not None:
            return self._handle.snapshot_at(_as_of_ms(as_of))
        if ref is not None:
            return self._handle.ref_snapshot(ref)
        return snapshot_id

    def to_arrow_stream(self, filter: Optional[str] = None,
                        columns: Optional[Sequence[str]] = None,
                        snapshot_id: Optional[int] = None, as_of: Any = None,
                        ref: Optional[str] = None, limit: Optional[int] = None,
                        batch_rows: int = 0) -> pa.RecordBatchReader:
        """Stream the rows as a :class:`pyarrow.RecordBatchReader`.

        Data files are planned from the manifests, pruned by partition values
        and column bounds, row groups by Parquet statistics; the filter is
        evaluated vectorized on the rest and only matching rows of the
        projected columns are decoded. Batches come as they are pulled, so
        memory stays bounded whatever the table's size.

        Args:
            filter: a SQL boolean expression (``"age > 25 AND name LIKE 'a%'"``);
                a bad one (also one with a NUL character, or nested more than
                256 deep) raises :class:`~hyperstreamdb.InvalidArgumentError`
                naming the position. ``None``, ``""`` or only whitespace
                (spaces, tabs, CR, LF): no filter, every row, as everywhere
                a filter is taken (:meth:`Query.filter`, :meth:`search`,
                :meth:`explain`, the CLI's ``--filter``).
            columns: top-level columns to return, in output order (default all).
            snapshot_id: read this snapshot instead of the current one.
            as_of: read the snapshot that was current at this time (a
                ``datetime``, ``date`` or epoch milliseconds).
            ref: read the snapshot a tag or branch points at.
            limit: return at most this many rows.
            batch_rows: at most this many rows per batch (0: 65536).
        """
        handle = self._require()
        sid = self._snapshot(snapshot_id, as_of, ref)
        stream = handle.scan(snapshot_id=sid, columns=_columns_arg(columns),
                             filter=_filter_arg(filter), limit=_size_arg("limit", limit, -1),
                             batch_rows=_size_arg("batch_rows", batch_rows, 0))
        schema = pa.Schema._import_from_c_capsule(stream._schema_capsule())
        return pa.RecordBatchReader.from_batches(schema, _batches(stream))

    def to_arrow(self, filter: Optional[str] = None, columns: Optional[Sequence[str]] = None,
                 snapshot_id: Optional[int] = None, as_of: Any = None,
                 ref: Optional[str] = None, limit: Optional[int] = None,
                 vector_filter: Optional[dict] = None) -> pa.Table:
        """Read the rows into a :class:`pyarrow.Table` (arguments as
        :meth:`to_arrow_stream`). ``vector_filter={"embedding": q, "k": 10}``
        (or ``{"column": ..., "query": ..., "k": ..., "metric": ...}``) makes
        it a vector search inside ``filter`` (see :meth:`search`)."""
        filter = _filter_arg(filter)
        if vector_filter is not None:
            out, _ = _vs.run(self, _vs.parse_vector_filter(vector_filter), filter=filter,
                             columns=columns, snapshot_id=snapshot_id, as_of=as_of, ref=ref)
            return out if limit is None else out.slice(0, _size_arg("limit", limit, -1))
        before = _binding.rejections()
        out = self.to_arrow_stream(filter=filter, columns=columns, snapshot_id=snapshot_id,
                                   as_of=as_of, ref=ref, limit=limit).read_all()
        _binding.warn_since(before)
        return out

    def to_pandas(self, filter: Optional[str] = None, columns: Optional[Sequence[str]] = None,
                  snapshot_id: Optional[int] = None, as_of: Any = None,
                  ref: Optional[str] = None, limit: Optional[int] = None,
                  vector_filter: Optional[dict] = None) -> Any:
        """Read the rows into a pandas DataFrame (arguments as
        :meth:`to_arrow`)."""
        return self.to_arrow(filter=filter, columns=columns, snapshot_id=snapshot_id,
                             as_of=as_of, ref=ref, limit=limit,
                             vector_filter=vector_filter).to_pandas()

    def search(self, column: str, query: Any, k: int = 10, filter: Optional[str] = None,
               metric: str = "l2", columns: Optional[Sequence[str]] = None,
               ef_search: Optional[int] = None, nprobe: Optional[int] = None,
               snapshot_id: Optional[int] = None, as_of: Any = None, ref: Optional[str] = None,
               exact: bool = False) -> Any:
        """The ``k`` rows nearest to ``query`` in vector column ``column``.

        Exactly ``min(k, matching rows)`` rows, sorted by the true distance
        (a float32 ``distance`` column, last), ties broken by data file order
        in the snapshot and row position, across every data file; rows whose
        vector is null or gives a NaN distance never match.

        Args:
            column: a ``fixed_size_list`` or ``list`` of float32 (float64
                lists, as pandas writes them, are scored as float32).
            query: one vector (1-d) -> a :class:`pyarrow.Table`; a 2-d array
                of vectors -> a list of tables, one per query, scored in
                parallel in one pass over the data.
            k: rows per query.
            filter: a SQL boolean expression; only matching rows compete
                (``None``, ``""`` or whitespace: every row).
            metric: ``"l2"`` (``<->``), ``"ip"`` (``<#>``, negative inner
                product), ``"cosine"`` (``<=>``), ``"l1"`` (``<+>``), ``"l2sq"``.
            columns: columns to return (default all) besides ``distance``.
            ef_search, nprobe: search effort in files with a vector index.
            snapshot_id, as_of, ref: time travel, as :meth:`to_arrow_stream`.
            exact: ignore vector indexes (brute force everywhere).
        """
        out, _ = _vs.search(self, column, query, k, metric, ef_search, nprobe, exact,
                            _filter_arg(filter), columns, snapshot_id, as_of, ref, False)
        return out

    def _build_vector_index(self, column: str, kind: str, **params: Any) -> int:
        """Build a vector index of ``kind`` (``"hnsw"``: one graph per data
        file; ``"ivf_hnsw"``: IVF partitions with a graph each;
        ``"ivf_hnsw_sq8"``: the same traversed on SQ8 codes; ``"ivf_pq"``: PQ
        codes) for every data file lacking one, re-ranked exactly. Params:
        ``metric`` (``"l2"``, ``"ip"``, ``"cosine"``, ``"l1"``; searches with
        another metric score exactly), ``m``, ``ef_construction``,
        ``partitions``, ``pq_m``, ``threads``. Called by :meth:`add_index`;
        returns the number of files indexed."""
        return _vs.build(self, column, kind, params)

    def query(self) -> "Query":
        """A query builder over this table: ``t.query().filter("a > 1")
        .filter("b = 'x'").select(["a"]).limit(10).execute()``."""
        return Query(self)

    # ------------------------------------------------------- time travel

    def history(self) -> List[HistoryEntry]:
        """The snapshot log, oldest first: when each snapshot became current
        (appends and rollbacks), as pyiceberg's ``inspect.history()``."""
        if not self._load():
            return []
        return [HistoryEntry(**d) for d in self._handle.history()]

    def refs(self) -> List[Ref]:
        """Every tag and branch (``main`` included)."""
        if not self._load():
            return []
        return [Ref(**d) for d in self._handle.refs()]

    def rollback_to_snapshot(self, snapshot_id: int) -> None:
        """Make ancestor ``snapshot_id`` current again (a metadata-only
        commit: no data is written or removed; later snapshots stay readable
        by id, tag or time). A snapshot that is not an ancestor of the current
        one raises :class:`~hyperstreamdb.InvalidArgumentError`."""
        self._require().rollback_to_snapshot(int(snapshot_id))

    def create_tag(self, name: str, snapshot_id: Optional[int] = None,
                   max_ref_age_ms: Optional[int] = None) -> None:
        """Name ``snapshot_id`` (default: the current snapshot) with a new tag,
        readable later with ``ref=name``."""
        self._require().create_ref(name, snapshot_id, False,
                                   -1 if max_ref_age_ms is None else int(max_ref_age_ms))

    def create_branch(self, name: str, snapshot_id: Optional[int] = None) -> None:
        """Create branch ``name`` at ``snapshot_id`` (default: the current one)."""
        self._require().create_ref(name, snapshot_id, True)

    def remove_orphan_files(self, older_than: Union[_dt.timedelta, _dt.datetime, None] = None,
                            dry_run: bool = False, force: bool = False) -> List[str]:
        """Remove the files of this table's folder that no metadata reaches.

        Orphans are left by writes that failed or crashed before their commit,
        index builds that were never registered, dropped or re-configured
        indexes and replaced index registries; readers never see them, they
        only take disk space. Files under ``data/``, ``index/`` and
        ``metadata/`` that no snapshot, metadata-log entry, Iceberg statistics
        file or the index registry reaches, and that were last modified before
        ``older_than`` (a ``timedelta`` before now, default 3 days as in
        Iceberg; or a ``datetime``), are removed — or only listed with
        ``dry_run=True`` (the list is what the same call would remove).
        Returns their paths.

        Files younger than one hour (``_core.ORPHAN_MIN_AGE_MS``) are never
        removed: a shorter ``older_than`` (``timedelta(0)`` included) is
        raised to that floor, so writes, index builds and commits still in
        flight keep their files. ``force=True`` takes ``older_than`` as given;
        a commit in flight may then lose a file, and fails with a clear error
        (nothing committed) instead of publishing a table that names a
        missing file. Safe to run beside writers, readers and another
        maintainer (``expire_snapshots`` deleting files under the walk is no
        error). On S3 the candidates come from a LIST of the table's prefix
        and their ages from the objects' LastModified; no lock is taken there,
        so only the one-hour floor protects commits in flight (don't
        ``force`` a young cut-off while others write).
        """
        self._require()
        if older_than is None:
            older_than = _dt.timedelta(days=3)
        cutoff_ms = _cutoff_ms("remove_orphan_files", older_than)
        found = _core.remove_orphan_files(self._uri, cutoff_ms, bool(dry_run), bool(force))
        return [path for path, _size, _mtime in found]

    def expire_snapshots(self, older_than: Union[_dt.timedelta, _dt.datetime, None] = None,
                         retain_last: Optional[int] = None,
                         dry_run: bool = False) -> "ExpiredSnapshots":
        """Remove old snapshots from the table, then the files only they used.

        Snapshots committed before ``older_than`` (a ``timedelta`` before now or
        a ``datetime``) leave the metadata in one commit, except the current
        one, those a tag or branch names, and the ``retain_last`` most recent
        of the current snapshot's history. Defaults: with neither argument,
        Iceberg's (older than 5 days, keep the last 1); with only
        ``retain_last`` (``expire_snapshots(retain_last=10)``), every older
        snapshot beyond those goes whatever its age. The manifest lists,
        manifests, data files and index files that only expired snapshots
        reached are then deleted. Time travel to an expired snapshot raises
        ``NotFoundError`` afterwards. ``dry_run=True`` changes nothing and
        reports what would go.
        """
        self._require()
        if older_than is None:
            older_than = _dt.timedelta(0) if retain_last is not None else _dt.timedelta(days=5)
        if retain_last is None:
            retain_last = 1
        if int(retain_last) < 1:
            raise InvalidArgumentError(
                f"expire_snapshots: retain_last must be at least 1, got {retain_last}")
        cutoff_ms = _cutoff_ms("expire_snapshots", older_than)
        ids, files = _core.expire_snapshots(self._uri, cutoff_ms, int(retain_last), bool(dry_run))
        return ExpiredSnapshots(list(ids), [p for p, _s, _m in files], sum(s for _p, s, _m in files),
                                bool(dry_run))

    # ------------------------------------------------ partitions, sorting

    def set_partition_spec(self, fields: Sequence[Union[str, Tuple[str, str],
                                                        Tuple[str, str, str]]]) -> None:
        """Partition later writes by ``fields`` (old files keep their spec).

        Each field is ``"column"`` (identity), ``(column, transform)`` or
        ``(column, transform, name)``, or the seed's dict
        ``{"source_id": 1, "field_id": 1000, "name": "date", "transform": "day"}``
        (``source_id`` a field id; a ``field_id`` given must be the one the
        table assigns); transforms are ``identity``,
        ``bucket[N]``, ``truncate[W]``, ``year``, ``month``, ``day``, ``hour``,
        ``void``. ``[]`` makes later writes unpartitioned.
        """
        from . import _schema

        self._require().set_partition_spec(_schema.spec_fields(self, fields))
        _schema.check_field_ids(self, fields)

    def set_sort_order(self, columns: Sequence[str], ascending: Optional[Sequence[bool]] = None,
                       nulls_first: Optional[Sequence[bool]] = None) -> None:
        """Sort the rows of each later write by ``columns`` (ascending by
        default; nulls first when ascending, last when descending, as
        Iceberg). ``[]`` stops sorting."""
        if isinstance(columns, str):
            columns = [columns]
        self._require().set_sort_order(list(columns),
                                       None if ascending is None else list(ascending),
                                       None if nulls_first is None else list(nulls_first))

    # ------------------------------------------ defining and evolving tables

    @classmethod
    def from_catalog(cls, catalog_uri: str, identifier: str, **options: Any) -> "Table":
        """The table ``"namespace.table"`` of the Iceberg REST catalog at
        ``catalog_uri`` (``"rest://host:port"``), connecting it with
        ``options`` (``warehouse=``, ``token=`` or ``credential=``, ... as
        :class:`~hyperstreamdb.Catalog` takes them). Every commit of the table
        goes through the catalog."""
        from ._catalog import Catalog

        return Catalog(catalog_uri, **options).load_table(identifier)

    @classmethod
    def create(cls, uri: PathLike, schema: pa.Schema,
               partition_spec: Optional[Sequence[Any]] = None,
               sort_order: Optional[Sequence[Any]] = None, format_version: int = 2,
               properties: Optional[dict] = None, exist_ok: bool = False,
               index_all: bool = False) -> "Table":
        """Create an empty table (metadata, no snapshot) at ``uri`` before its
        first write. ``schema``'s ``fixed_size_list<float32>`` columns become
        vector columns, as a first write would make them. ``partition_spec``
        and ``sort_order`` take :meth:`set_partition_spec`'s and
        :meth:`set_sort_order`'s forms (also the dict forms, and sort fields
        ``(column, "asc"|"desc"[, "nulls-first"|"nulls-last"])``), recorded in
        ``v1`` itself (spec 0, sort order 1). An existing table raises
        :class:`InvalidArgumentError` unless ``exist_ok`` (then it is opened
        as it is)."""
        from . import _schema

        t = cls(uri, format_version=format_version, properties=properties, index_all=index_all)
        if t._load():
            if exist_ok:
                return t
            raise InvalidArgumentError(f"{t.uri}: a table already exists here "
                                       f"({t.metadata_location})")
        if not isinstance(schema, pa.Schema):
            raise InvalidArgumentError(f"schema must be a pyarrow.Schema, got "
                                       f"{type(schema).__name__}")
        if format_version not in (2, 3):
            raise InvalidArgumentError(f"format_version must be 2 or 3, got {format_version!r}")
        schema = schema.remove_metadata()
        spec = _schema.spec_fields(schema, partition_spec or [])
        cols, asc, nf = _schema.sort_fields(schema, sort_order or [])
        try:
            _core.table_create_defined(t._uri, schema.__arrow_c_schema__(), int(format_version),
                                       {str(k): str(v) for k, v in (properties or {}).items()},
                                       spec, cols, asc, nf)
        except InvalidArgumentError:
            if not (exist_ok and t._load()):
                raise
            return t
        t._load()
        _schema.check_field_ids(t, partition_spec or [])
        return t

    def update_schema(self) -> Any:
        """A builder of schema changes committed together on leaving its
        ``with`` block (nothing on an exception), pyiceberg's shape::

            with t.update_schema() as u:
                u.add_column("score", pa.float64(), default=0.0)  # v3 default
                u.rename_column("name", "title")
                u.update_column("n", pa.int64())                  # widening
                u.drop_column("old")
        """
        from . import _schema

        self._require()
        return _schema.UpdateSchema(self)

    def add_column(self, name: str, type: Any, default: Any = None, doc: Optional[str] = None,
                   required: bool = False) -> None:
        """Add top-level column ``name`` (a pyarrow type); in v3 tables
        ``default`` becomes its ``initial-default`` (what rows written before
        read) and ``write-default``; v2 tables refuse a default. One
        metadata-only commit."""
        with self.update_schema() as u:
            u.add_column(name, type, default=default, doc=doc, required=required)

    def rename_column(self, old: str, new: str) -> None:
        """Rename a top-level column (its field id, data and indexes stay)."""
        with self.update_schema() as u:
            u.rename_column(old, new)

    def drop_column(self, name: str) -> None:
        """Drop a top-level column (refused for a source of the current
        partition spec or sort order); its indexes are dropped with it."""
        with self.update_schema() as u:
            u.drop_column(name)

    def update_column(self, name: str, type: Any = None, doc: Optional[str] = None) -> None:
        """Widen a column's type (int -> long, float -> double, decimal
        precision: the spec's allowed promotions) and/or set its doc."""
        with self.update_schema() as u:
            u.update_column(name, type, doc=doc)

    def update_spec(self, fields: Optional[Sequence[Any]] = None) -> Any:
        """The seed's name: with ``fields``, :meth:`set_partition_spec`;
        without, a pyiceberg-style builder (``add_field``, ``add_identity``,
        ``remove_field``, ``rename_field``) committed once on leaving its
        ``with`` block."""
        from . import _schema

        if fields is not None:
            self.set_partition_spec(fields)
            return None
        self._require()
        return _schema.UpdateSpec(self)

    def replace_sort_order(self, columns: Optional[Sequence[Any]] = None,
                           ascending: Optional[Sequence[bool]] = None,
                           nulls_first: Optional[Sequence[bool]] = None) -> Any:
        """The seed's name: with ``columns`` (names, ``(column, "asc"|"desc")``
        or Iceberg's sort-field dicts), :meth:`set_sort_order`; without, a
        pyiceberg-style builder (``asc``, ``desc``) committed once."""
        from . import _schema

        if columns is None:
            self._require()
            return _schema.ReplaceSortOrder(self)
        if isinstance(columns, str):
            columns = [columns]
        if ascending is None and nulls_first is None and any(not isinstance(c, str)
                                                             for c in columns):
            cols, ascending, nulls_first = _schema.sort_fields(self, columns)
            columns = cols
        self.set_sort_order(columns, ascending=ascending, nulls_first=nulls_first)
        return None


@dataclass(frozen=True)
class HistoryEntry:
    """One snapshot-log entry (see :meth:`Table.history`)."""

    made_current_at_ms: int
    snapshot_id: int
    parent_snapshot_id: Optional[int]
    is_current_ancestor: bool


@dataclass(frozen=True)
class Ref:
    """A tag or branch (see :meth:`Table.refs`)."""

    name: str
    snapshot_id: int
    type: str
    max_ref_age_ms: Optional[int]
    max_snapshot_age_ms: Optional[int]
    min_snapshots_to_keep: Optional[int]


class Query:
    """An immutable query over a :class:`Table`: each method returns a new
    query. Filters AND together; ``execute()`` runs it.

        >>> t.query().filter("x > 1").filter("name LIKE 'a%'").select(["id"]).limit(5).execute()
    """

    __slots__ = ("_table", "_filters", "_columns", "_limit", "_snapshot_id", "_as_of", "_ref",
                 "_vector")

    def __init__(self, table: Table, filters: Tuple[str, ...] = (),
                 columns: Optional[Tuple[str, ...]] = None, limit: Optional[int] = None,
                 snapshot_id: Optional[int] = None, as_of: Any = None,
                 ref: Optional[str] = None, vector: Optional[_vs.VectorSearch] = None) -> None:
        self._table, self._filters, self._columns = table, filters, columns
        self._limit, self._snapshot_id, self._as_of, self._ref = limit, snapshot_id, as_of, ref
        self._vector = vector

    def _with(self, **kw: Any) -> "Query":
        args = dict(filters=self._filters, columns=self._columns, limit=self._limit,
                    snapshot_id=self._snapshot_id, as_of=self._as_of, ref=self._ref,
                    vector=self._vector)
        args.update(kw)
        return Query(self._table, **args)

    def filter(self, expr: str) -> "Query":
        """AND a SQL boolean expression into the query. ``""`` or only
        whitespace adds no condition (as ``to_arrow(filter="")`` reads every
        row); a NUL character in ``expr`` raises
        :class:`~hyperstreamdb.InvalidArgumentError` naming its position."""
        expr = _filter_arg(expr, "filter()")
        if expr is None:
            return self._with()
        return self._with(filters=self._filters + (expr,))

    def select(self, columns: Sequence[str]) -> "Query":
        """Return only ``columns``, in this order (each at most once)."""
        if isinstance(columns, str):
            columns = [columns]
        return self._with(columns=tuple(_columns_arg(columns)))

    def limit(self, n: int) -> "Query":
        """Return at most ``n`` rows (any n >= 0; above 2**63 - 1 it is that)."""
        if n is None:
            raise InvalidArgumentError("limit must be an integer, got None")
        return self._with(limit=_size_arg("limit", n, -1))

    def snapshot(self, snapshot_id: int) -> "Query":
        """Read snapshot ``snapshot_id``."""
        return self._with(snapshot_id=snapshot_id, as_of=None, ref=None)

    def as_of(self, when: Any) -> "Query":
        """Read the snapshot current at ``when`` (datetime or epoch ms)."""
        return self._with(as_of=when, snapshot_id=None, ref=None)

    @property
    def where(self) -> Optional[str]:
        """The combined filter: each filter parenthesized, joined by AND."""
        if not self._filters:
            return None
        if len(self._filters) == 1:
            return self._filters[0]
        return " AND ".join(f"({f})" for f in self._filters)

    def vector_search(self, query: Any, column: str, k: int = 10, metric: str = "l2",
                      ef_search: Optional[int] = None, nprobe: Optional[int] = None,
                      exact: bool = False) -> "Query":
        """Make the query a top-``k`` vector search inside its filters (see
        :meth:`Table.search`); ``execute()`` then returns the rows sorted by a
        ``distance`` column (a 2-d ``query``: a list of tables)."""
        return self._with(vector=_vs.VectorSearch(column=column, query=query, k=int(k),
                                                  metric=metric, ef_search=ef_search,
                                                  nprobe=nprobe, exact=exact))

    def _run_vector(self) -> Tuple[Any, dict]:
        assert self._vector is not None
        out, stats = _vs.run(self._table, self._vector, filter=self.where,
                             columns=None if self._columns is None else list(self._columns),
                             snapshot_id=self._snapshot_id, as_of=self._as_of, ref=self._ref)
        if self._limit is not None:
            out = ([t.slice(0, self._limit) for t in out] if isinstance(out, list)
                   else out.slice(0, self._limit))
        return out, stats

    def explain(self) -> str:
        """What the query does; a vector search is run and its counters
        (files searched, through an index or exactly; distances computed;
        the object-store requests, bytes read and dependent round trips it
        took, its freshness check included) are shown, as EXPLAIN ANALYZE."""
        if self._vector is None:  # a filtered scan: Table.explain (an ExplainPlan)
            self._table._require()
            sid = self._table._snapshot(self._snapshot_id, self._as_of, self._ref)
            return self._table.explain(filter=self.where, snapshot_id=sid)
        _, stats = self._run_vector()
        return _vs.explain(self._vector, self.where, stats)

    def to_arrow_stream(self) -> pa.RecordBatchReader:
        """Run the query, streaming."""
        if self._vector is not None:
            out, _ = self._run_vector()
            if isinstance(out, list):
                raise InvalidArgumentError("a batched vector search gives one table per query: "
                                           "use execute()")
            return pa.RecordBatchReader.from_batches(out.schema, out.to_batches())
        return self._table.to_arrow_stream(
            filter=self.where, columns=None if self._columns is None else list(self._columns),
            snapshot_id=self._snapshot_id, as_of=self._as_of, ref=self._ref, limit=self._limit)

    def execute(self) -> Any:
        """Run the query into a :class:`pyarrow.Table` (a list of them for
        a batched vector search)."""
        if self._vector is not None:
            return self._run_vector()[0]
        before = _binding.rejections()
        out = self.to_arrow_stream().read_all()
        _binding.warn_since(before)
        return out

    def to_pandas(self) -> Any:
        """Run the query into a pandas DataFrame."""
        return self.execute().to_pandas()

    def __repr__(self) -> str:
        parts = [f"Query({self._table.uri!r}"]
        if self._filters:
            parts.append(f"where {self.where}")
        if self._columns is not None:
            parts.append(f"select {list(self._columns)}")
        if self._vector is not None:
            parts.append(repr(self._vector))
        if self._limit is not None:
            parts.append(f"limit {self._limit}")
        for name in ("snapshot_id", "as_of", "ref"):
            v = getattr(self, "_" + name)
            if v is not None:
                parts.append(f"{name}={v!r}")
        return ", ".join(parts) + ")"

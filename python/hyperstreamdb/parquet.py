"""Read and write Parquet files with HyperStreamDB's own C implementation.

Data moves between Python and C as Arrow C streams (the Arrow PyCapsule
Interface), so pyarrow tables, record batch readers and polars data frames
are handed over without copying. pandas data frames and plain dicts are
converted through pyarrow first.

    >>> import hyperstreamdb as hdb
    >>> hdb.parquet.write_table({"id": [1, 2], "name": ["a", "b"]}, "t.parquet",
    ...                         compression="snappy")
    >>> hdb.parquet.read_table("t.parquet", columns=["name"]).to_pydict()
    {'name': ['a', 'b']}

Files written here are ordinary Parquet: pyarrow, DuckDB and Spark read them.
"""

from __future__ import annotations

import json as _json
import os
import sys
from typing import (
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import pyarrow as pa

from . import _core
from ._core import ParquetStream
from ._metadata import ColumnChunkMetadata, FileMetadata, RowGroupMetadata

__all__ = [
    "read_table",
    "write_table",
    "iter_batches",
    "open_stream",
    "stream_reader",
    "read_schema",
    "read_metadata",
    "inspect",
    "ParquetStream",
    "FileMetadata",
    "RowGroupMetadata",
    "ColumnChunkMetadata",
    "COMPRESSIONS",
    "ENCODINGS",
]

PathLike = Union[str, "os.PathLike[str]", bytes]
Filter = Tuple[str, str, Any]

#: Accepted values of ``write_table(compression=...)`` (``None`` also means none).
COMPRESSIONS = ("zstd", "snappy", "gzip", "brotli", "lz4", "lz4_raw", "none", "uncompressed")
#: Accepted values in ``write_table(column_encoding=...)``.
ENCODINGS = (
    "PLAIN",
    "DELTA_BINARY_PACKED",
    "DELTA_LENGTH_BYTE_ARRAY",
    "DELTA_BYTE_ARRAY",
    "BYTE_STREAM_SPLIT",
    "RLE_DICTIONARY",
)
_FIELD_ID_KEY = b"PARQUET:field_id"


# ----------------------------------------------------------------- reading


def open_stream(
    path: PathLike,
    columns: Optional[Sequence[str]] = None,
    rows: Optional[Sequence[int]] = None,
    *,
    filters: Optional[Sequence[Filter]] = None,
    batch_rows: int = 0,
) -> ParquetStream:
    """Open ``path`` and return a one-shot :class:`ParquetStream`.

    The stream implements ``__arrow_c_stream__``: hand it to
    ``pyarrow.RecordBatchReader.from_stream``, ``pyarrow.table``,
    ``polars.from_arrow``, DuckDB, ... It can be exported exactly once.
    Through that raw interface a failure while decoding is only an errno, which
    pyarrow raises as ``OSError``; read it with :func:`stream_reader` to get the
    :class:`HyperStreamError` subclass instead.

    Args:
        path: the Parquet file.
        columns: top-level column names to read, in output order (default all).
        rows: strictly increasing file-wide row positions to read (default all);
            only the pages holding them are decoded.
        filters: ``(column, op, value)`` tuples, op one of ``= == != < <= > >=``,
            combined with AND. Row groups whose statistics prove that no row can
            match are skipped; rows inside the remaining row groups are *not*
            re-checked, so filter the result yourself when you need exactness.
        batch_rows: upper bound on rows per record batch (0: one per row group).
    """
    return _core.read_parquet(
        path, columns=_opt_list(columns), rows=rows,
        batch_rows=_rows_bound("batch_rows", batch_rows),
        filters=_opt_list(filters),
    )


def iter_batches(
    path: PathLike,
    columns: Optional[Sequence[str]] = None,
    rows: Optional[Sequence[int]] = None,
    *,
    filters: Optional[Sequence[Filter]] = None,
    batch_rows: int = 65536,
) -> pa.RecordBatchReader:
    """Read ``path`` lazily as a :class:`pyarrow.RecordBatchReader`.

    Arguments are those of :func:`open_stream`; ``batch_rows`` bounds the rows
    per batch (0: one batch per row group). The file is opened and its footer
    checked now; pages are decoded as batches are pulled. A failure met while
    decoding raises the same :class:`HyperStreamError` subclass as
    :func:`read_table` from the reader's ``read_next_batch``/``read_all``/
    iteration.
    """
    stream = open_stream(path, columns, rows, filters=filters, batch_rows=batch_rows)
    return stream_reader(stream)


def stream_reader(stream: ParquetStream) -> pa.RecordBatchReader:
    """A :class:`pyarrow.RecordBatchReader` over an open :class:`ParquetStream`.

    Unlike ``pyarrow.RecordBatchReader.from_stream(stream)``, which goes
    through the Arrow C stream interface where a failure is only an errno
    (pyarrow raises ``OSError``), this reader raises the
    :class:`HyperStreamError` subclass of the failure with the C message.
    """
    schema = pa.Schema._import_from_c_capsule(stream._schema_capsule())
    return pa.RecordBatchReader.from_batches(schema, _batches(stream))


def _batches(stream: ParquetStream) -> Iterator[pa.RecordBatch]:
    while True:
        capsules = stream._read_next()
        if capsules is None:
            return
        yield pa.RecordBatch._import_from_c_capsule(*capsules)


def read_table(
    path: PathLike,
    columns: Optional[Sequence[str]] = None,
    rows: Optional[Sequence[int]] = None,
    *,
    filters: Optional[Sequence[Filter]] = None,
) -> pa.Table:
    """Read a Parquet file (or a projection / row selection of it) into a pyarrow Table.

    Args:
        path: the Parquet file.
        columns: top-level column names to read, in this order (default all).
        rows: strictly increasing row positions to read (default all).
        filters: row-group pruning predicates, see :func:`open_stream`.

    Raises:
        NotFoundError: the file or a requested column does not exist.
        CorruptFileError: the file is not valid Parquet; the message names the
            file and the byte offset or structure that is wrong.
        UnsupportedError: valid Parquet using a feature not implemented.
        InvalidArgumentError (a ValueError): ``rows`` is not strictly
            increasing or past the end, or a filter is malformed.
    """
    stream = open_stream(path, columns, rows, filters=filters)
    schema = pa.Schema._import_from_c_capsule(stream._schema_capsule())
    return pa.Table.from_batches(list(_batches(stream)), schema=schema)


def read_schema(path: PathLike) -> pa.Schema:
    """The Arrow schema a read of ``path`` produces (only the footer is read)."""
    return pa.schema(_core.parquet_schema(path))


def read_metadata(path: PathLike) -> FileMetadata:
    """The footer of ``path`` as a :class:`FileMetadata`: row and row-group
    counts, the writer, key-value metadata, the Arrow schema, and per row
    group the column chunks with codecs, encodings, sizes and statistics.
    Only the footer is read.
    """
    doc = _json.loads(_core.inspect(path, json=True))
    return FileMetadata._from_json(doc, read_schema(path))


def inspect(path: PathLike, json: bool = False) -> Union[str, Dict[str, Any]]:
    """Describe a Parquet file: schema, row groups, column chunks (encodings,
    codecs, sizes, statistics).

    Returns text by default; with ``json=True`` the parsed JSON document.
    """
    if json:
        return _json.loads(_core.inspect(path, json=True))
    return _core.inspect(path, json=False)


# ----------------------------------------------------------------- writing


def write_table(
    data: Any,
    path: PathLike,
    compression: Optional[str] = "zstd",
    compression_level: Optional[int] = None,
    row_group_size: int = 1048576,
    data_page_size: int = 1 << 20,
    data_page_version: str = "1.0",
    use_dictionary: Union[bool, Sequence[str]] = True,
    dictionary_pagesize_limit: int = 1 << 20,
    column_encoding: Union[None, str, Mapping[str, str]] = None,
    write_statistics: bool = True,
    write_page_index: bool = True,
    write_page_checksum: bool = False,
    metadata: Optional[Mapping[Union[str, bytes], Union[str, bytes]]] = None,
    field_ids: Optional[Mapping[str, int]] = None,
    delta_fallback: bool = False,
    compress_min_saving_pct: int = 0,
) -> None:
    """Write ``data`` to the Parquet file ``path``.

    Args:
        data: anything with ``__arrow_c_stream__`` (pyarrow Table or
            RecordBatchReader, polars DataFrame, a :class:`ParquetStream`), a
            pyarrow RecordBatch, a pandas DataFrame (its index is not written),
            or a dict of column name -> list / numpy array. Dictionary-typed
            columns (pandas categoricals, ``dictionary_encode()``) are written
            as their values, at any depth; string_view / binary_view as
            (large) string / binary.
        path: the file to create (replaced if it exists). On failure no file is
            left behind.
        compression: one of :data:`COMPRESSIONS` or None.
        compression_level: codec level (zstd 1..22, gzip 1..9); None = default.
        row_group_size: maximum rows per row group.
        data_page_size: target uncompressed bytes per data page.
        data_page_version: ``"1.0"`` or ``"2.0"``.
        use_dictionary: dictionary-encode columns (falling back to PLAIN past
            ``dictionary_pagesize_limit``); a list of column names restricts
            dictionary encoding to those columns.
        dictionary_pagesize_limit: dictionary size limit in bytes.
        column_encoding: an encoding from :data:`ENCODINGS` for all columns, or
            a dict of column name -> encoding.
        write_statistics: write min/max/null-count statistics per chunk and page.
        write_page_index: write the ColumnIndex and OffsetIndex.
        write_page_checksum: write CRC32 checksums into page headers.
        metadata: file key-value metadata.
        field_ids: column name -> Parquet field id (as used by Iceberg). By
            default field ids come from the fields' ``PARQUET:field_id`` metadata
            or are numbered 1..n depth-first.
        delta_fallback: integer columns (dates, timestamps too) whose
            dictionary is given up are written DELTA_BINARY_PACKED instead of
            PLAIN.
        compress_min_saving_pct: with ``data_page_version="2.0"``, a page the
            codec shrinks by less than this percentage is stored uncompressed
            (and booleans always), so that row selections read it in place.
            Tables write ``delta_fallback=True, compress_min_saving_pct=12``
            with v2 pages (src/table/README.md "Data page layout").

    Raises:
        InvalidArgumentError (a ValueError): an option is out of range; the
            message lists the accepted values.
        SchemaError: a column cannot be represented or does not match.
        HSIOError (an OSError): the file could not be written.
    """
    if compression is not None and not isinstance(compression, str):
        raise TypeError(f"compression must be a str or None, not {type(compression).__name__}")
    if compression is not None and compression.lower() not in COMPRESSIONS:
        raise _core.InvalidArgumentError(
            f"compression must be one of {', '.join(repr(c) for c in COMPRESSIONS)} or None, "
            f"got {compression!r}"
        )
    source = _as_stream_source(data)
    encodings: Dict[str, str] = {}
    need_schema = (
        field_ids is not None
        or isinstance(column_encoding, str)
        or not isinstance(use_dictionary, bool)
    )
    if need_schema:
        reader = pa.RecordBatchReader.from_stream(source)
        names = reader.schema.names
        if isinstance(column_encoding, str):
            encodings = {name: column_encoding for name in names}
        if not isinstance(use_dictionary, bool):
            wanted = set(_str_list(use_dictionary, "use_dictionary"))
            unknown = wanted.difference(names)
            if unknown:
                raise _core.SchemaError(
                    f"use_dictionary names columns not in the data: {sorted(unknown)}"
                )
            encodings.update({n: "PLAIN" for n in names if n not in wanted})
            use_dictionary = True
        if field_ids is not None:
            reader = _with_field_ids(reader, field_ids)
        source = reader
    if isinstance(column_encoding, Mapping):
        encodings.update(column_encoding)
    elif column_encoding is not None and not isinstance(column_encoding, str):
        raise TypeError("column_encoding must be None, an encoding name or a dict")
    for col, enc in encodings.items():
        if not isinstance(enc, str) or enc.upper() not in ENCODINGS + ("DICTIONARY",):
            raise _core.InvalidArgumentError(
                f"column_encoding[{col!r}] must be one of {', '.join(ENCODINGS)}, got {enc!r}"
            )
    _core.write_parquet(
        path,
        source,
        compression=compression,
        compression_level=compression_level,
        row_group_size=_rows_bound("row_group_size", row_group_size),
        data_page_size=_rows_bound("data_page_size", data_page_size),
        data_page_version=data_page_version,
        use_dictionary=bool(use_dictionary),
        dictionary_pagesize_limit=_rows_bound("dictionary_pagesize_limit",
                                              dictionary_pagesize_limit),
        column_encoding=encodings or None,
        write_statistics=write_statistics,
        write_page_index=write_page_index,
        write_page_checksum=write_page_checksum,
        metadata=dict(metadata) if metadata is not None else None,
        delta_fallback=bool(delta_fallback),
        compress_min_saving_pct=int(compress_min_saving_pct),
    )


# ---------------------------------------------------------------- helpers


_I64_MAX = (1 << 63) - 1


def _rows_bound(name: str, value: Any) -> int:
    """An upper bound in rows or bytes (batch_rows, row_group_size, page and
    dictionary sizes): an integer; one above int64 bounds nothing more than
    int64's maximum does (nothing is allocated from it: the C side sizes
    batches by the data), so it is clamped instead of overflowing. The C side
    refuses negative (and where required zero) values, naming the option."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            as_int = int(value)
        except (TypeError, ValueError, OverflowError):
            raise _core.InvalidArgumentError(f"{name} must be an integer, got {value!r}") from None
        if as_int != value:
            raise _core.InvalidArgumentError(f"{name} must be an integer, got {value!r}")
        value = as_int
    return value if value <= _I64_MAX else _I64_MAX


def _opt_list(value: Optional[Iterable[Any]]) -> Optional[List[Any]]:
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise _core.InvalidArgumentError("expected a list, not a single string")
    return list(value)


def _str_list(value: Iterable[Any], what: str) -> List[str]:
    if isinstance(value, (str, bytes)):
        raise _core.InvalidArgumentError(f"{what} must be a bool or a list of column names")
    out = list(value)
    for v in out:
        if not isinstance(v, str):
            raise _core.InvalidArgumentError(f"{what} must hold column names, got {v!r}")
    return out


def _as_stream_source(data: Any) -> Any:
    """Return an object implementing ``__arrow_c_stream__`` for ``data``, with
    every column in a type the C writer stores (see :func:`_storable_type`)."""
    if isinstance(data, pa.RecordBatch):
        return _storable(pa.Table.from_batches([data]))
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(data, pd.DataFrame):
        return _storable(pa.Table.from_pandas(data, preserve_index=False))
    if isinstance(data, (pa.Table, pa.RecordBatchReader)):
        return _storable(data)
    if hasattr(data, "__arrow_c_stream__"):
        return _storable(pa.RecordBatchReader.from_stream(data))
    if isinstance(data, Mapping):
        return _storable(pa.table(dict(data)))
    if hasattr(data, "__arrow_c_array__"):
        return _storable(pa.Table.from_batches([pa.record_batch(data)]))
    if hasattr(data, "to_arrow"):  # older polars and similar libraries
        return _as_stream_source(data.to_arrow())
    raise TypeError(
        "data must be a pyarrow Table / RecordBatch / RecordBatchReader, a polars or pandas "
        f"DataFrame, a dict of columns, or implement __arrow_c_stream__; got {type(data).__name__}"
    )


def _storable_type(t: pa.DataType) -> pa.DataType:
    """`t` with the types the C writer does not take replaced by the ones
    Parquet stores them as, at any depth:

    * dictionary arrays by their value type: Parquet dictionary-encodes by
      itself, and the C writer refuses dictionary arrays (it would otherwise
      see only the indices);
    * string_view / binary_view (which polars and others export) by large
      string / binary.
    """
    if pa.types.is_dictionary(t):
        return _storable_type(t.value_type)
    if hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t):
        return pa.large_string()
    if hasattr(pa.types, "is_binary_view") and pa.types.is_binary_view(t):
        return pa.large_binary()
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(_storable_type(t.key_type)),
            t.item_field.with_type(_storable_type(t.item_type)),
            keys_sorted=t.keys_sorted,
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        item = t.value_field.with_type(_storable_type(t.value_type))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(item, t.list_size)
        return pa.large_list(item) if pa.types.is_large_list(t) else pa.list_(item)
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_storable_type(f.type)) for f in t])
    return t


def _storable(source: Union[pa.Table, pa.RecordBatchReader]) -> Any:
    """`source` cast to :func:`_storable_type` column by column; unchanged
    (no copy, no wrapper) when nothing needs casting."""
    schema = source.schema
    target = pa.schema([f.with_type(_storable_type(f.type)) for f in schema],
                       metadata=schema.metadata)
    if target.equals(schema):
        return source
    if isinstance(source, pa.Table):
        return source.cast(target)

    def batches() -> Iterable[pa.RecordBatch]:
        for batch in source:
            yield _cast_batch(batch, target)

    return pa.RecordBatchReader.from_batches(target, batches())


def _cast_batch(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    if hasattr(batch, "cast"):  # pyarrow >= 16
        return batch.cast(target)
    cols = [col.cast(f.type) for col, f in zip(batch.columns, target)]
    return pa.RecordBatch.from_arrays(cols, schema=target)


def _with_field_ids(reader: pa.RecordBatchReader, field_ids: Mapping[str, int]) -> pa.RecordBatchReader:
    schema = reader.schema
    unknown = set(field_ids).difference(schema.names)
    if unknown:
        raise _core.SchemaError(f"field_ids names columns not in the data: {sorted(unknown)}")
    fields = []
    for field in schema:
        if field.name in field_ids:
            fid = field_ids[field.name]
            if not isinstance(fid, int) or isinstance(fid, bool) or fid < 0:
                raise _core.InvalidArgumentError(
                    f"field_ids[{field.name!r}] must be a non-negative int, got {fid!r}"
                )
            meta = dict(field.metadata or {})
            meta[_FIELD_ID_KEY] = str(fid).encode()
            field = field.with_metadata(meta)
        fields.append(field)
    new_schema = pa.schema(fields, metadata=schema.metadata)

    def batches() -> Iterable[pa.RecordBatch]:
        for batch in reader:
            yield pa.RecordBatch.from_arrays(batch.columns, schema=new_schema)

    return pa.RecordBatchReader.from_batches(new_schema, batches())

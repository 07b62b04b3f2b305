"""SQL over tables and in-memory data: :class:`Session`, :func:`connect`,
``Table.sql``.

The engine is the C library's (src/sql/): PostgreSQL's grammar (libpg_query),
pgvector's operators, our own vectorized executor, with filters pushed into
the table scans so the scalar indexes answer them::

    >>> s = hdb.connect("./lake")                       # every table folder is a table
    >>> s.sql("SELECT category, count(*) FROM docs GROUP BY 1").to_pandas()
    >>> t.sql("SELECT id FROM t ORDER BY embedding <-> $1 LIMIT 5", [q]).fetchall()
"""
from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, Any, Iterator, List, Optional, Sequence, Tuple

from . import _core
from ._core import SqlError

if TYPE_CHECKING:  # annotations only: pandas and polars are optional
    import pandas
    import polars
    import pyarrow

__all__ = ["Session", "SqlResult", "SqlError", "connect"]


def _params_batch(params: Optional[Sequence[Any]]):
    """$1.. as a one-row struct array (pyarrow), numpy float arrays as vectors."""
    if params is None:
        return None
    import pyarrow as pa

    if isinstance(params, (str, bytes)) or not hasattr(params, "__len__"):
        raise TypeError("params must be a sequence of values ($1, $2, ...)")
    arrays, names = [], []
    for i, v in enumerate(params):
        names.append(f"p{i + 1}")
        try:
            import numpy as np
        except ImportError:  # pragma: no cover
            np = None
        if np is not None and isinstance(v, np.ndarray):
            if v.ndim != 1:
                raise ValueError(f"parameter ${i + 1}: a vector must be 1-dimensional, not {v.ndim}")
            vals = pa.array(v.astype(np.float32))
            arrays.append(pa.FixedSizeListArray.from_arrays(vals, len(v)))
        else:
            arrays.append(pa.array([v]))
    return pa.StructArray.from_arrays(arrays, names=names) if arrays else None


_PLAIN = (type(None), bool, int, float, str)


def _params_plain(params: Optional[Sequence[Any]]):
    """$1.. as a list the engine reads in place (python/src/sql_params.c):
    None, bool, int in int64's range, float, str, and numpy vectors as
    contiguous float32; None when a value is of another kind (then
    :func:`_params_batch` converts through pyarrow)."""
    if params is None or isinstance(params, (str, bytes)) or not hasattr(params, "__len__"):
        return None
    out = []
    for i, v in enumerate(params):
        t = type(v)
        if t in _PLAIN:
            if t is int and not -(1 << 63) <= v < (1 << 63):
                return None
            out.append(v)
        elif t.__module__ == "numpy" and t.__name__ == "ndarray":
            if v.ndim != 1:
                raise ValueError(f"parameter ${i + 1}: a vector must be 1-dimensional, not {v.ndim}")
            np = sys.modules["numpy"]  # loaded: v is one of its arrays (an import costs more)
            out.append(np.ascontiguousarray(v, dtype=np.float32))
        else:
            return None
    return out


def _polars_arrow(df):
    """A polars DataFrame as pyarrow with plain (not view) strings."""
    try:
        import polars as pl

        if isinstance(df, pl.LazyFrame):
            df = df.collect()
        if isinstance(df, pl.DataFrame):
            try:
                return df.to_arrow(compat_level=pl.CompatLevel.oldest())
            except (AttributeError, TypeError):  # older polars: no compat levels
                return df.to_arrow()
    except ImportError:  # pragma: no cover
        pass
    return df


def _without_views(data):
    """A pyarrow Table/RecordBatch whose string_view/binary_view columns are
    cast to large_string/large_binary (the engine's Arrow import takes the
    offset layouts); anything else as it is."""
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover
        return data
    if not isinstance(data, (pa.Table, pa.RecordBatch)):
        return data
    views = {pa.string_view(): pa.large_string(), pa.binary_view(): pa.large_binary()} \
        if hasattr(pa, "string_view") else {}
    if not views or not any(f.type in views for f in data.schema):
        return data
    schema = pa.schema([f.with_type(views.get(f.type, f.type)) for f in data.schema])
    return data.cast(schema)


class SqlResult:
    """The rows of one statement. Read it once: ``to_arrow()``, ``to_pandas()``,
    ``to_polars()``, ``fetchall()``, ``reader()`` or any Arrow consumer through
    ``__arrow_c_stream__``."""

    def __init__(self, stream, sql: str, session: "Session"):
        self._stream = stream
        self._sql = sql
        self._session = session  # the stream reads through it: keep it alive
        self._table = None

    def _schema(self):
        import pyarrow as pa

        if self._table is not None:
            return self._table.schema
        return pa.Schema._import_from_c_capsule(self._stream._result_schema())

    def _batches(self):
        """The batches as they are computed (errors as SqlError, Ctrl-C
        cancels)."""
        import pyarrow as pa

        nxt = self._stream._next_batch
        while True:
            b = nxt()
            if b is None:
                return
            yield pa.RecordBatch._import_from_c_capsule(*b)

    def _arrow(self):
        if self._table is None:
            import pyarrow as pa

            # run to the end in C, then one read of the collected batches; one
            # batch comes with the session's pyarrow Schema for its schema
            out = self._stream._read_all(self._session._schema_cache)
            if type(out) is tuple:
                keep, address, schema = out
                batch = pa.RecordBatch._import_from_c(address, schema)
                del keep  # the emptied ArrowArray struct (pyarrow moved its contents)
                self._table = pa.Table.from_batches([batch])
            else:
                self._table = pa.RecordBatchReader._import_from_c_capsule(out).read_all()
        return self._table

    @property
    def schema(self) -> "pyarrow.Schema":
        """The result's ``pyarrow.Schema`` (known before any row is computed)."""
        return self._schema()

    def to_arrow(self) -> "pyarrow.Table":
        """The result as a ``pyarrow.Table``."""
        return self._arrow()

    def to_pandas(self) -> "pandas.DataFrame":
        """The result as a ``pandas.DataFrame``."""
        return self._arrow().to_pandas()

    def to_polars(self) -> "polars.DataFrame":
        """The result as a ``polars.DataFrame``."""
        import polars as pl

        return pl.from_arrow(self._arrow())

    def fetchall(self) -> List[Tuple[Any, ...]]:
        """The rows as a list of tuples (like a DB-API cursor)."""
        t = self._arrow()
        cols = [c.to_pylist() for c in t.columns]
        return list(zip(*cols)) if cols else []

    def reader(self) -> "pyarrow.RecordBatchReader":
        """A ``pyarrow.RecordBatchReader`` streaming the rows (one pass)."""
        import pyarrow as pa

        if self._table is not None:
            return pa.RecordBatchReader.from_batches(self._table.schema, self._table.to_batches())
        return pa.RecordBatchReader.from_batches(self._schema(), self._batches())

    def __arrow_c_stream__(self, requested_schema=None):
        if self._table is not None:
            return self._table.__arrow_c_stream__(requested_schema)
        return self._stream.__arrow_c_stream__(requested_schema)

    def __iter__(self) -> Iterator[Tuple[Any, ...]]:
        """The rows as tuples (``for row in s.sql(...)``); ``reader()`` streams
        batches instead."""
        return iter(self.fetchall())

    def __len__(self) -> int:
        return self._arrow().num_rows

    def __repr__(self) -> str:
        t = self._arrow()
        if t.num_columns == 0:
            return "<SqlResult: no columns (the statement ran)>"
        cols = ", ".join(f"{f.name}: {f.type}" for f in t.schema)
        head = t.slice(0, 10)
        rows = list(zip(*[c.to_pylist() for c in head.columns]))
        lines = [f"  {r!r}" for r in rows]
        if t.num_rows > 10:
            lines.append(f"  ... ({t.num_rows - 10} more rows)")
        n = f"{t.num_rows} row{'s' if t.num_rows != 1 else ''}"
        return "\n".join([f"<SqlResult {n} ({cols})"] + lines) + ">"


class Session:
    """Relations by name and SQL over them.

    ``Session(root)``: every table folder under ``root`` is a table by its
    folder name (``root`` may be ``s3://bucket/prefix``, with
    ``storage_options`` for it). ``register(name, obj)`` adds a :class:`~hyperstreamdb.Table`
    (read at its current snapshot by each statement) or in-memory data
    (pyarrow Table/RecordBatch/RecordBatchReader, pandas or polars
    DataFrame, anything with ``__arrow_c_stream__``).
    """

    def __init__(self, root: Optional[os.PathLike | str] = None,
                 storage_options: Optional[dict] = None):
        self._root = None if root is None else os.fspath(root)
        if storage_options is not None:
            if self._root is None:
                raise TypeError("storage_options needs a root (an s3://bucket/prefix)")
            _core.store_configure(self._root, dict(storage_options))
        self._s = _core.SqlSession(self._root)
        self._lock = threading.Lock()
        self._schema_cache = _core.sql_schema_cache()

    def register(self, name: str, obj: Any) -> "Session":
        """Make ``obj`` the relation ``name`` (replacing an earlier one)."""
        from .table import Table

        if isinstance(obj, Table):
            self._s.register_table(name, obj.uri)
            return self
        if isinstance(obj, (str, os.PathLike)):
            self._s.register_table(name, os.fspath(obj))
            return self
        data = obj
        if not hasattr(data, "__arrow_c_stream__"):
            try:
                import pandas as pd

                if isinstance(data, pd.DataFrame):
                    import pyarrow as pa

                    data = pa.Table.from_pandas(data, preserve_index=False)
            except ImportError:  # pragma: no cover
                pass
        if type(data).__module__.startswith("polars"):
            data = _polars_arrow(data)
        if not hasattr(data, "__arrow_c_stream__") and hasattr(data, "to_arrow"):
            data = data.to_arrow()
        data = _without_views(data)
        if not hasattr(data, "__arrow_c_stream__"):
            import pyarrow as pa

            if isinstance(data, pa.RecordBatch):
                data = pa.Table.from_batches([data])
            else:
                raise TypeError(
                    f"cannot register {type(obj).__name__}: give a hyperstreamdb.Table, a table "
                    "folder, or Arrow data (pyarrow, pandas, polars)")
        self._s.register_stream(name, data)
        return self

    def unregister(self, name: str) -> None:
        """Forget the relation ``name``."""
        self._s.unregister(name)

    def sql(self, query: str, params: Optional[Sequence[Any]] = None) -> SqlResult:
        """Run one statement; ``$1, $2, ...`` take ``params`` (numpy arrays bind
        as vectors). Errors in the SQL raise :class:`SqlError` with
        ``.position``."""
        batch = _params_plain(params)
        if batch is None:
            batch = _params_batch(params)
        with self._lock:
            stream = self._s.execute(query, batch)
        return SqlResult(stream, query, self)

    execute = sql

    def cancel(self) -> None:
        """Ask the running statement to stop (from another thread)."""
        self._s.cancel()

    def set_memory_limit(self, nbytes: int) -> None:
        """Per-statement memory limit in bytes (0: the default)."""
        self._s.set_memory_limit(int(nbytes))

    def close(self) -> None:
        self._s.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<hyperstreamdb.Session root={self._root!r}>"


def connect(root: os.PathLike | str = ".", storage_options: Optional[dict] = None,
            **catalog_options):
    """A :class:`Session` over the table folders under ``root`` (a local
    folder, or ``s3://bucket/prefix`` with ``storage_options`` as
    :class:`~hyperstreamdb.Table` takes them); or, for ``root``
    ``"rest://host:port"``, a :class:`~hyperstreamdb.Catalog` (an Iceberg
    REST catalog) with ``warehouse=``, ``token=`` or ``credential=`` and
    the other options it takes."""
    if isinstance(root, str) and (root.startswith("rest://") or root.startswith("rests://")):
        from ._catalog import Catalog

        return Catalog(root, storage_options=storage_options, **catalog_options)
    if catalog_options:
        raise TypeError(f"connect() got unexpected options {sorted(catalog_options)} "
                        f"(they are for rest:// catalogs)")
    return Session(root, storage_options=storage_options)

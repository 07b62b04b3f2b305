"""HyperStreamDB: an embeddable indexed data lake.

This release provides the foundation: a Parquet reader and writer written in
C (``hyperstreamdb.parquet``) that exchange data with pyarrow, polars and
pandas through the Arrow C Data Interface without copying.

    >>> import hyperstreamdb as hdb
    >>> hdb.parquet.write_table({"id": [1, 2, 3]}, "t.parquet")
    >>> hdb.parquet.read_table("t.parquet").num_rows
    3

Errors raised by the C core derive from :class:`HyperStreamError`; where a
built-in class fits they also derive from it (:class:`NotFoundError` is a
``FileNotFoundError``, :class:`HSIOError` an ``OSError``,
:class:`InvalidArgumentError` a ``ValueError``).
"""

from __future__ import annotations

from . import _core
from ._core import (
    CommitConflictError,
    CorruptFileError,
    HSIOError,
    HyperStreamError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    ResourceError,
    SchemaError,
    UnsupportedError,
)
from . import parquet
from . import table
from .table import ExpiredSnapshots, HistoryEntry, Query, Ref, Snapshot, Table
from ._indexes import ExplainPlan, IndexInfo
from ._binding import IndexIgnoredWarning, IndexProblem
from ._sql import Session, SqlError, SqlResult, connect
from ._catalog import Catalog
from . import vector
from .vector import *  # noqa: F401,F403 (distances, SparseVector, GPUContext)

__version__ = "0.1.0"

#: Version of the C library the extension was built from.
core_version: str = _core.__version__


def io_stats(reset: bool = False) -> dict:
    """Object-store requests this process made so far, all tables and threads
    together: ``requests`` (retries included), ``round_trips`` (dependent
    waits on the network: a request alone, or one wave of parallel requests),
    ``gets``/``heads``/``puts``/``posts``/``deletes``/``lists``, ``retries``,
    ``bytes_read`` and ``bytes_written``. Local tables make no requests.
    ``index_streams`` (a dict) says what the tables' index streams did: one
    per metadata version on object storage, packing what a cold query reads
    after the metadata into one GET: ``loaded``, ``missing``, ``refused``
    (stale or damaged; ``last_refusal`` says why), ``segments``, ``bytes``.
    ``reset=True`` zeroes the counters after reading them, so that::

        hdb.io_stats(reset=True)
        t.search("emb", q, k=10)
        print(hdb.io_stats())   # what that query cost
    """
    return _core.io_stats(reset)

__all__ = [
    "__version__",
    "core_version",
    "io_stats",
    "parquet",
    "table",
    "Table",
    "Snapshot",
    "HistoryEntry",
    "Ref",
    "Query",
    "ExpiredSnapshots",
    "IndexInfo",
    "ExplainPlan",
    "IndexIgnoredWarning",
    "IndexProblem",
    "HyperStreamError",
    "CorruptFileError",
    "UnsupportedError",
    "SchemaError",
    "NotFoundError",
    "HSIOError",
    "InvalidArgumentError",
    "ResourceError",
    "InternalError",
    "CommitConflictError",
    "Session",
    "SqlResult",
    "SqlError",
    "connect",
    "Catalog",
]
__all__ += ["vector"] + vector.__all__

"""Vector search over a table: the Python side of ``Table.search``,
``Query.vector_search`` and ``to_pandas(vector_filter=...)``.

The C core (``hs_table_vector_search``) does the work with the GIL released:
exact top-k across every data file of the snapshot (through a file's vector
index when it has one), inside an optional SQL filter, in global order by
(distance, data file order, row position), with the true distance. This
module only converts arguments and results.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa

from . import _core
from ._binding import IndexIgnoredWarning
from ._filters import columns_arg
from ._io_cost import io_delta, io_line
from ._core import InvalidArgumentError

_KNOWN = ("column", "query", "k", "metric", "ef_search", "nprobe", "exact")


def as_queries(query: Any) -> Tuple[np.ndarray, bool]:
    """The query vector(s) as a C-contiguous float32 array, and whether it
    is a batch (2-d: one query per row)."""
    if isinstance(query, (str, bytes)):
        raise InvalidArgumentError("the query must be a vector of numbers, not a string")
    try:
        q = np.ascontiguousarray(np.asarray(query, dtype=np.float32))
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"the query must be a vector of numbers: {e}") from e
    if q.ndim not in (1, 2) or q.size == 0:
        raise InvalidArgumentError(
            f"the query must be a non-empty vector (1-d) or a batch of vectors (2-d), "
            f"got shape {q.shape}")
    return q, q.ndim == 2


@dataclass(frozen=True)
class VectorSearch:
    """The vector part of a query (see ``Query.vector_search``)."""

    column: str
    query: Any
    k: int = 10
    metric: str = "l2"
    ef_search: Optional[int] = None
    nprobe: Optional[int] = None
    exact: bool = False

    def __repr__(self) -> str:
        q, batched = as_queries(self.query)
        what = f"{q.shape[0]} queries of dim {q.shape[1]}" if batched else f"dim {q.shape[0]}"
        parts = [f"column={self.column!r}", what, f"k={self.k}", f"metric={self.metric!r}"]
        for name in ("ef_search", "nprobe"):
            v = getattr(self, name)
            if v is not None:
                parts.append(f"{name}={v}")
        if self.exact:
            parts.append("exact")
        return "vector_search(" + ", ".join(parts) + ")"


def parse_vector_filter(vf: Dict[str, Any]) -> VectorSearch:
    """``{"embedding": q, "k": 10}`` or ``{"column": "embedding", "query": q,
    "k": 10, "metric": "cosine"}`` (plus ``ef_search``, ``nprobe``)."""
    if not isinstance(vf, dict):
        raise InvalidArgumentError("vector_filter must be a dict such as "
                                   "{'embedding': q, 'k': 10}")
    rest = [key for key in vf if key not in _KNOWN]
    if "column" in vf or "query" in vf:
        if rest:
            raise InvalidArgumentError(f"vector_filter: unknown keys {rest}")
        if "column" not in vf or "query" not in vf:
            raise InvalidArgumentError("vector_filter needs both 'column' and 'query'")
        column, query = vf["column"], vf["query"]
    else:
        if len(rest) != 1:
            raise InvalidArgumentError(
                "vector_filter needs exactly one column key ({'embedding': q, 'k': 10}), "
                f"got {rest}")
        column, query = rest[0], vf[rest[0]]
    return VectorSearch(column=column, query=query, k=int(vf.get("k", 10)),
                        metric=vf.get("metric", "l2"), ef_search=vf.get("ef_search"),
                        nprobe=vf.get("nprobe"), exact=bool(vf.get("exact", False)))


_U32_MAX = 0xFFFFFFFF
_I64_MAX = (1 << 63) - 1


def _count(name: str, v: Optional[int]) -> int:
    """ef_search / nprobe: None (the default) or 1 .. 2**32 - 1. The C core
    passes them as uint32, so a larger value would wrap around silently; in
    range, the search clamps them to the index (same answers, bounded work)."""
    if v is None:
        return 0
    n = int(v)
    if n < 1 or n > _U32_MAX:
        raise InvalidArgumentError(f"{name} = {v} outside [1, {_U32_MAX}] (None: the default)")
    return n


def _k(v: Any) -> int:
    """k >= 1; above int64 it means 'every row' as any k above the row count
    does (the C core clamps k to the matching rows)."""
    if isinstance(v, bool):
        raise InvalidArgumentError(f"k must be a positive integer, got {v!r}")
    k = int(v)
    if k < 1:
        raise InvalidArgumentError(f"k must be >= 1, got {k}")
    return k if k <= _I64_MAX else _I64_MAX


def _result(out: Any) -> pa.Table:
    """The search's pyarrow Table from what ``_core.vector_search(...,
    as_batch=True)`` returned: its one batch, imported with the pyarrow
    Schema the search cache keeps for its schema (no schema import per
    query), or, for an empty result, the stream."""
    if not isinstance(out, tuple):
        return pa.RecordBatchReader._import_from_c_capsule(out).read_all()
    keep, address, schema = out
    batch = pa.RecordBatch._import_from_c(address, schema)
    del keep  # the emptied ArrowArray struct (pyarrow moved its contents)
    return pa.Table.from_batches([batch])


def run(table: Any, vs: VectorSearch, filter: Optional[str] = None,
        columns: Optional[Sequence[str]] = None, snapshot_id: Optional[int] = None,
        as_of: Any = None, ref: Optional[str] = None
        ) -> Tuple[Union[pa.Table, List[pa.Table]], Dict[str, int]]:
    """Run `vs` on `table`: one pyarrow Table (a 1-d query) or a list of
    them (a 2-d batch, one per query), each sorted by ``distance``; and the
    search's counters."""
    return search(table, vs.column, vs.query, vs.k, vs.metric, vs.ef_search, vs.nprobe,
                  vs.exact, filter, columns, snapshot_id, as_of, ref, True)


def search(table: Any, column: Any, query: Any, k: Any, metric: Any, ef_search: Any,
           nprobe: Any, exact: bool, filter: Optional[str], columns: Optional[Sequence[str]],
           snapshot_id: Optional[int], as_of: Any, ref: Optional[str], want_io: bool
           ) -> Tuple[Union[pa.Table, List[pa.Table]], Dict[str, int]]:
    """:func:`run` with the search's fields as arguments (``Table.search``
    calls it directly: no VectorSearch to build); ``want_io``: add the
    object-store counters (two readings of the process's) to the stats."""
    # The C call refreshes its own open table to the latest version: refresh
    # the handle only to resolve a time or ref (or to open it the first time).
    handle = table._handle
    if handle is None or as_of is not None or ref is not None:
        handle = table._require()
    sid = snapshot_id
    if as_of is not None or ref is not None:
        sid = table._snapshot(snapshot_id, as_of, ref)
    if (type(query) is np.ndarray and query.dtype == np.float32 and query.ndim == 1
            and query.size and query.flags.c_contiguous):
        q, batched = query, False  # the common case, as as_queries returns it
    else:
        q, batched = as_queries(query)
    if not isinstance(column, str):
        raise InvalidArgumentError(f"column must be a str, not {type(column).__name__}")
    k = k if type(k) is int and 1 <= k <= _I64_MAX else _k(k)
    cols = None
    score = False  # the seed's name of the distance column: "score"
    if columns is not None:
        columns = columns_arg([columns] if isinstance(columns, str) else columns)
        # "distance" is always returned (last); selecting it is allowed. "score"
        # (the seed's spelling) is the distance again, under that name where it
        # was selected, unless the table has a column of that name.
        score = "score" in columns and "score" not in table.schema.names
        cols = [c for c in columns if c != "distance" and not (score and c == "score")]
    # The C side searches the handle's open table when it is free (a first
    # search opens nothing again), else the table it keeps open between
    # searches of this Table (refreshed per call: a new version is seen as
    # by a fresh open).
    cache = table._vs_cache
    if cache is None:
        cache = table._vs_cache = _core.search_cache(
            staleness_ms=getattr(table, "_staleness_ms", 0))
    io0 = _core.io_stats() if want_io else None
    out, stats = _core.vector_search(
        handle.uri, column, q, k=k, metric=metric, filter=filter or None, columns=cols,
        snapshot_id=-1 if sid is None else int(sid), ef_search=_count("ef_search", ef_search),
        nprobe=_count("nprobe", nprobe), batch=batched, exact=bool(exact), cache=cache,
        as_batch=True, handle=handle)
    if io0 is not None:
        stats.update(io_delta(io0, _core.io_stats()))
    result = _result(out)
    if score:
        result = result.append_column("score", result.column("distance"))
        order = [c for c in columns if c != "distance"]
        extra = [c for c in result.column_names if c not in order and c != "distance"]
        result = result.select(order + extra + ["distance"])
    if stats.get("files_index_rejected"):
        warnings.warn(IndexIgnoredWarning(
            f"{stats['files_index_rejected']} data file(s)' registered vector index did not "
            f"match the data file and was not used; they were scored exactly instead. "
            f"{stats['index_rejected']}. Table.validate() lists every such index."),
            stacklevel=3)
    if not batched:
        return result, stats
    qi = result.column("query_index").to_numpy()
    bounds = np.searchsorted(qi, np.arange(q.shape[0] + 1), side="left")
    body = result.drop_columns(["query_index"])
    return [body.slice(int(bounds[i]), int(bounds[i + 1] - bounds[i]))
            for i in range(q.shape[0])], stats


def explain(vs: VectorSearch, filter: Optional[str], stats: Dict[str, int]) -> str:
    """A plan-and-counters summary of one run (EXPLAIN ANALYZE style)."""
    lines = [repr(vs)]
    lines.append(f"  filter: {filter}" if filter else "  filter: none")
    lines.append(f"  data files: {stats['files_planned']} planned, {stats['files_searched']} "
                 f"searched ({stats['files_indexed']} through a vector index, the rest exactly)")
    lines.append(f"  rows: {stats['rows_matched']} matched the filter, {stats['rows_scored']} "
                 f"distances computed, {stats['rows_returned']} returned")
    lines.append(io_line(stats))
    return "\n".join(lines)


_KINDS = {
    "hnsw": dict(partitions=1),
    "ivf_hnsw": dict(),
    "ivf_hnsw_sq8": dict(quantizer="sq8"),
    "ivf_pq": dict(quantizer="pq"),
}
_ALIASES = {"num_partitions": "partitions", "nlist": "partitions", "num_sub_vectors": "pq_m",
            "M": "m", "efConstruction": "ef_construction", "ef": "ef_construction"}
_BUILD = ("metric", "m", "ef_construction", "partitions", "pq_m", "threads")
# The bounds of VectorIndex (vector.py, src/index/vector/README.md "Limits");
# pq_m must also divide the column's dimension (checked by the build).
_BUILD_RANGE = {"m": (2, 256), "ef_construction": (1, 65536), "partitions": (1, 65536),
                "pq_m": (1, 65536), "threads": (1, 256)}


def build(table: Any, column: str, kind: str, params: Dict[str, Any]) -> int:
    """Build the vector index of `kind` for every data file of the current
    snapshot lacking one; returns the number of files indexed."""
    k = kind.lower()
    if k not in _KINDS:
        raise InvalidArgumentError(
            f"vector index kind {kind!r}; expected one of {sorted(_KINDS)}")
    args: Dict[str, Any] = dict(_KINDS[k])
    for key, v in params.items():
        key = _ALIASES.get(key, key)
        if key not in _BUILD:
            raise InvalidArgumentError(
                f"vector index parameter {key!r}; expected {list(_BUILD)} "
                f"(or {sorted(_ALIASES)})")
        if key == "metric":
            args[key] = str(v)
            continue
        v = int(v)
        if v < 0 or (key == "partitions" and k == "hnsw" and v > 1):
            raise InvalidArgumentError(f"{key}={v} is not valid for a {k!r} index")
        lo, hi = _BUILD_RANGE[key]
        if v != 0 and not lo <= v <= hi:
            raise InvalidArgumentError(f"{key} = {v} outside [{lo}, {hi}] (0: the default)")
        args[key] = v
    handle = table._require()
    return _core.build_vector_indexes(handle.uri, column, **args)


__all__ = ["VectorSearch", "as_queries", "parse_vector_filter", "run", "explain", "build",
           "replace"]

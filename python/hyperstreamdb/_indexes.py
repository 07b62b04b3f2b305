"""Scalar indexes from Python: configuration, backfills, background builds, explain.

:class:`~hyperstreamdb.Table` inherits these methods (``IndexMethods``):

    >>> t.add_index("category", "bitmap")      # recorded in the table, built for existing files
    >>> t.add_index("price", "btree")
    >>> t.write(df)                            # returns once the data is durable; the new
    >>> t.wait_for_indexes()                   # files' indexes are built in the background
    >>> print(t.explain("category = 'x' AND price < 10"))

The configuration lives in the table metadata (property ``hyperstream.indexes``), so a
reopened table, another process and the ``hyperstream`` CLI all know which columns are
indexed. Queries never depend on build timing: a data file whose index is not built yet
is scanned, with the same result.

Background builds: each :class:`Table` object has at most one worker thread (started
by ``write()``, ending when nothing is left to build). It calls the C build of the
scalar indexes with the GIL released; the C build itself indexes the missing files in
parallel on all cores (``hs_parallel_for``), which is the worker pool DESIGN.md asks
for — one Python thread only sequences builds so that two never race over the same
files. Configured vector indexes are then built through ``_build_vector_index`` (the
vector search module), which builds only the files that lack one. Errors of background
builds are kept and raised by :meth:`IndexMethods.wait_for_indexes` (and shown in ``repr``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

import pyarrow as pa

from . import _core
from ._core import InvalidArgumentError
from ._binding import IndexProblem
from ._filters import filter_arg
from ._io_cost import io_delta, io_line

__all__ = ["IndexInfo", "ExplainPlan", "IndexMethods", "SCALAR_KINDS", "VECTOR_KINDS"]

SCALAR_KINDS = ("inverted", "scalar", "bitmap", "btree", "sorted")
VECTOR_KINDS = ("hnsw", "ivf_hnsw", "ivf_hnsw_sq8", "ivf_pq")

def metadata_json(path: str) -> dict:
    """A table metadata file parsed: plain JSON, or gzip-compressed as
    Iceberg writes it with write.metadata.compression-codec=gzip
    (``*.gz.metadata.json``, told by the gzip magic bytes)."""
    import gzip

    if "://" in path and not path.startswith("file://"):  # s3://: through the C store
        data = _core.store_get(path)
    else:
        with open(path, "rb") as f:
            data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)

_CONFIG_PROPERTY = "hyperstream.indexes"


@dataclass(frozen=True)
class IndexInfo:
    """One configured index (an entry of :meth:`IndexMethods.indexes`)."""

    column: str
    kind: str
    params: Dict[str, Any] = field(default_factory=dict)
    is_vector: bool = False
    files_indexed: int = 0  #: data files of the current snapshot with this index built
    files_total: int = 0  #: data files of the current snapshot

    @property
    def complete(self) -> bool:
        """Whether every data file of the current snapshot has this index."""
        return self.files_indexed == self.files_total


class ExplainPlan(str):
    """A readable plan (this string) with the counters behind it in :attr:`stats`."""

    stats: Dict[str, Any]

    def __new__(cls, text: str, stats: Dict[str, Any]) -> "ExplainPlan":
        obj = super().__new__(cls, text)
        obj.stats = stats
        return obj

    def to_dict(self) -> Dict[str, Any]:
        """The counters as a plain dict (a copy)."""
        return dict(self.stats)


class _Progress:
    """A small progress bar on stderr (our own, tqdm-like), fed from build threads."""

    def __init__(self, what: str) -> None:
        self.what, self.start, self.last = what, time.monotonic(), 0.0

    def __call__(self, done: int, total: int) -> bool:
        now = time.monotonic()
        if done not in (0, total) and now - self.last < 0.1:
            return False
        self.last = now
        width = 30
        filled = width * done // total if total else width
        pct = 100 * done // total if total else 100
        el = now - self.start
        eta = f", {el / done * (total - done):.1f}s left" if 0 < done < total else ""
        sys.stderr.write(f"\r{self.what}: {done}/{total} files |{'#' * filled}"
                         f"{'.' * (width - filled)}| {pct}% {el:.1f}s{eta}  ")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()
        return False


def _progress_for(progress: Any, what: str) -> Any:
    """None, a callable, or our bar (progress=True, or None with stderr a TTY)."""
    if callable(progress):
        return progress
    if progress is True or (progress is None and getattr(sys.stderr, "isatty", lambda: False)()):
        return _Progress(what)
    return None


def _is_scalar_type(t: pa.DataType) -> bool:
    return not (pa.types.is_nested(t) or pa.types.is_null(t) or pa.types.is_float16(t)
                or pa.types.is_dictionary(t))


def _resolve_config(conf: List[dict], meta: dict) -> List[dict]:
    """Entries under the current schema's names, as the C loader sees them
    (src/table/index_config.c): an entry with a "field-id" takes that
    field's current name (renamed columns keep their index) and is left out
    when the current schema no longer has the field (a dropped column)."""
    cur = next((s for s in meta.get("schemas") or []
                if s.get("schema-id") == meta.get("current-schema-id")), None)
    names = {f.get("id"): f.get("name") for f in (cur or {}).get("fields") or []}
    out = []
    for c in conf:
        if isinstance(c, dict) and isinstance(c.get("field-id"), int):
            name = names.get(c["field-id"])
            if name is None:
                continue
            c = {**c, "column": name}
        out.append(c)
    return out


def _build_all(uri: str, factory: Any, columns: Optional[Sequence[str]] = None,
               progress: Any = None, appended: Optional[List[Any]] = None,
               background: bool = False) -> int:
    """Build every configured index missing for the current snapshot's files
    (or those of `columns`): the scalar ones in one C build (files in
    parallel), then each vector one through ``_build_vector_index`` of a
    fresh ``factory(uri)`` table. All are attempted; the first error is
    raised after. Returns the number of index files written.

    `appended`: what ``TableHandle.append(keep=True)`` kept of the writes
    since the last build: the scalar build then covers only those files and
    indexes them from the written batches (no re-read of the Parquet data;
    the same index bytes).

    `background` (the builds after writes, on the niced thread of
    _BuildState): the scalar build runs on that one thread."""
    t = factory(uri)
    conf = t._ix_config()
    wanted = None if columns is None else set(columns)
    scalar = [c["column"] for c in conf if c.get("kind") in SCALAR_KINDS
              and (wanted is None or c["column"] in wanted)]
    vector = [c for c in conf if c.get("kind") in VECTOR_KINDS
              and (wanted is None or c["column"] in wanted)]
    if wanted is not None:
        unknown = sorted(wanted - {c["column"] for c in conf})
        if unknown:
            raise InvalidArgumentError(f"{uri}: no configured index on {unknown} (add one first)")
    built, first_error = 0, None
    if scalar:
        try:
            cols, threads = None if columns is None else scalar, 1 if background else 0
            if appended is not None:
                built += _core.index_build(uri, cols, None, threads=threads, appended=appended)
            else:
                built += _core.index_build(uri, cols, progress, threads=threads)
        except Exception as e:  # noqa: BLE001 - vector builds still run
            first_error = e
    builder = getattr(t, "_build_vector_index", None)
    for c in vector if builder is not None else []:
        try:
            built += int(builder(c["column"], c["kind"], **(c.get("params") or {})) or 0)
        except Exception as e:  # noqa: BLE001
            first_error = first_error or e
    if first_error is not None:
        raise first_error
    return built


# At most this many writes' batches wait in memory for a background build;
# beyond it the pending ones are dropped and the next pass re-reads files.
_KEPT_MAX = 8


class _BuildState:
    """The background worker of one Table object (shared by nothing else)."""

    def __init__(self, uri: str, factory: Any) -> None:
        self.uri = uri
        self.factory = factory  # the Table class: fresh handles for the worker
        self.cond = threading.Condition()
        self.pending = False
        self.running = False
        self.errors: List[BaseException] = []
        self.files_built = 0
        # Kept appends (batches in memory) to index, unless a pass over the
        # whole snapshot is due (`full`: a write that kept nothing, or init).
        self.kept: List[Any] = []
        self.full = False

    def schedule(self, kept: Any = None) -> None:
        """Request a build pass: over the kept append `kept` (from
        ``TableHandle.append(keep=True)``), or, with None, over every file."""
        with self.cond:
            if kept is None or self.full:
                self.full = True
            elif len(self.kept) >= _KEPT_MAX:
                # Writes outpace the builds: stop holding their data in
                # memory; the next pass re-reads the files instead.
                self.kept, self.full = [], True
            else:
                self.kept.append(kept)
            self.pending = True
            if self.running:
                return
            self.running = True
        # Not a daemon: an interpreter exiting right after write() finishes the build.
        threading.Thread(target=self._run, name=f"hyperstreamdb-index:{self.uri}").start()

    def _run(self) -> None:
        # Writes first ("instant flush, delayed indexing"): this thread runs
        # the builds at the lowest priority (Linux: nice is per thread, and
        # cannot be raised again: the thread ends with its work) and the
        # scalar build on this thread alone, so appends do not wait for
        # cores. A niced thread starts no pool threads (src/common/parallel.c).
        # bench/bench_ingest.py, 10M rows in 8 writes with index_all=True:
        # writes returned after 1.87x the unindexed ingest, now ~1.1x; every
        # index is registered ~0.5 s later than before.
        if sys.platform.startswith("linux"):
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
            except OSError:
                pass
        while True:
            with self.cond:
                if not self.pending:
                    self.running = False
                    self.cond.notify_all()
                    return
                self.pending = False
                kept, self.kept = self.kept, []
                full, self.full = self.full, False
            try:
                n = _build_all(self.uri, self.factory, appended=None if full else kept,
                               background=True)
                with self.cond:
                    self.files_built += n
            except BaseException as e:  # kept for wait_for_indexes()
                with self.cond:
                    self.errors.append(e)

    def wait(self, timeout: Optional[float]) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: not self.running and not self.pending, timeout)


_STATE_LOCK = threading.Lock()


class IndexMethods:
    """Index methods of :class:`~hyperstreamdb.Table` (a mixin; needs ``_uri``,
    ``_load``, ``_require`` and ``schema`` from it)."""

    _uri: str
    _index_all: bool = False

    def _ix_state(self) -> _BuildState:
        st = self.__dict__.get("_ix_build_state")
        if st is None:
            with _STATE_LOCK:
                st = self.__dict__.get("_ix_build_state")
                if st is None:
                    st = _BuildState(self._uri, type(self))
                    self.__dict__["_ix_build_state"] = st
        return st

    def _ix_config(self) -> List[dict]:
        """The configuration recorded in the loaded metadata (no index I/O)."""
        if not self._load():  # type: ignore[attr-defined]
            return []
        meta = metadata_json(self._handle.metadata_location)  # type: ignore[attr-defined]
        text = (meta.get("properties") or {}).get(_CONFIG_PROPERTY)
        return _resolve_config(json.loads(text) if text else [], meta)

    # ------------------------------------------------------- configuration

    def add_index(self, column: str, kind: str = "inverted", *, build: bool = True,
                  progress: Any = None, **params: Any) -> None:
        """Index ``column`` and record it in the table metadata.

        Kinds: ``"inverted"``/``"scalar"`` (layout chosen from the data),
        ``"bitmap"`` (one bitmap per distinct value: categories, flags, dates),
        ``"btree"``/``"sorted"`` (sorted values in blocks: ranges over
        high-cardinality numbers and timestamps; ``block_rows=N``;
        ``lossy=True`` keeps only each block's min/max and row bitmap, ~2
        bytes per row instead of 3.5-7 for unique numbers and timestamps,
        with block edges re-checked on the data; also for ``"inverted"``
        when it picks sorted blocks), and the
        vector kinds ``"hnsw"``, ``"ivf_hnsw"``, ``"ivf_hnsw_sq8"``, ``"ivf_pq"``
        (``params`` go to the vector index builder). Indexes for the files
        already in the table are built now (``build=False``: left to
        :meth:`index_all` / :meth:`wait_for_indexes` / the next write), with a
        progress bar on a terminal (``progress=True`` forces it, ``False``
        hides it, a callable ``f(done, total)`` receives it). Later writes
        index their new files in the background. Re-adding the same index is
        a no-op; another kind or params replaces it.

        Selective queries read only their candidate rows from pages stored
        uncompressed, which the table's default layout does wherever zstd
        saves less than 1/8 (ids, timestamps, prices, dictionary indices,
        booleans; src/table/README.md "Data page layout"). Pages that do
        compress (free text) still cost their decompression per query, and
        tables written with ``hyperstream.parquet.page-version = 1`` compress
        every page (BENCHMARKS.md, issue 4).
        """
        if not isinstance(column, str) or not isinstance(kind, str):
            raise InvalidArgumentError("add_index(column, kind): both must be str")
        self._require()  # type: ignore[attr-defined]
        k = kind.lower()
        if k in VECTOR_KINDS:
            builder = getattr(self, "_build_vector_index", None)
            if builder is None:
                raise NotImplementedError(
                    f"add_index({column!r}, {kind!r}): vector indexes are not available in this "
                    "build (Table._build_vector_index is missing)")
            # Record first: (re)configuring unregisters the column's old index files.
            _core.index_add(self._uri, column, k, json.dumps(params))
            if build:
                builder(column, k, **params)
            return
        _core.index_add(self._uri, column, kind, json.dumps(params) if params else None)
        self.__dict__["_ix_last_config"] = True
        if build:
            self._ix_backfill([column], progress)

    def index_all(self, kind: str = "inverted", *, build: bool = True,
                  progress: Any = None) -> List[str]:
        """Index every top-level scalar column not indexed yet (``kind`` for
        all) and build what is missing; returns the columns newly configured."""
        self._require()  # type: ignore[attr-defined]
        have = {c["column"] for c in self._ix_config()}
        added = [f.name for f in self.schema  # type: ignore[attr-defined]
                 if f.name not in have and _is_scalar_type(f.type)]
        if added:  # one metadata commit for all of them
            _core.index_add_many(self._uri, added, kind, None)
            self.__dict__["_ix_last_config"] = True
        if build:
            self._ix_backfill(None, progress)
        return added

    def index_all_columns(self, kind: str = "inverted", **kw: Any) -> List[str]:
        """Alias of :meth:`index_all` (the original's name)."""
        return self.index_all(kind, **kw)

    def drop_index(self, column: str) -> None:
        """Stop indexing ``column``: its configuration and registry entries go
        in one metadata-only commit, so scans stop using the index at once.
        The index files stay on disk (orphans, like replaced metadata
        versions). A column without an index raises
        :class:`~hyperstreamdb.NotFoundError`."""
        self._require()  # type: ignore[attr-defined]
        _core.index_drop(self._uri, column)

    def indexes(self) -> List[IndexInfo]:
        """Configured indexes with how many data files of the current snapshot
        each covers (columns indexed without configuration show kind
        ``"unconfigured"``)."""
        if not self._load():  # type: ignore[attr-defined]
            return []
        return [IndexInfo(column=d["column"], kind=d["kind"], params=json.loads(d["params"]),
                          is_vector=d["is_vector"], files_indexed=d["files_indexed"],
                          files_total=d["files_total"])
                for d in _core.index_list(self._uri)]

    def index_columns(self) -> List[str]:
        """Names of the indexed columns."""
        return [i.column for i in self.indexes()]

    # ------------------------------------------------------------- builds

    def _ix_backfill(self, columns: Optional[Sequence[str]], progress: Any) -> int:
        bar = _progress_for(progress, f"indexing {os.path.basename(self._uri) or self._uri}")
        return _core.index_build(self._uri, None if columns is None else list(columns), bar)

    def build_indexes(self, columns: Optional[Sequence[str]] = None,
                      progress: Any = None) -> int:
        """Build the configured indexes (scalar and vector) missing for the
        current snapshot's files now, in this thread; returns index files
        written."""
        self._require()  # type: ignore[attr-defined]
        bar = _progress_for(progress, f"indexing {os.path.basename(self._uri) or self._uri}")
        return _build_all(self._uri, type(self), columns, bar)

    def _index_wanted(self) -> bool:
        """Whether a write should keep its batches for the index build (a
        guess from the last known configuration; wrong guesses cost a re-read
        or a moment of extra memory, never a wrong index)."""
        return self._index_all or bool(self.__dict__.get("_ix_last_config"))

    def _index_after_write(self, kept: Any = None) -> None:
        """Called by ``write()`` after its commit: configure ``index_all``
        columns, then build the new files' indexes in the background (from
        `kept`, the written batches, when the write kept them)."""
        try:
            conf = self._ix_config()
        except (OSError, ValueError):
            return  # the scan path reads unindexed; wait_for_indexes() reports errors
        self.__dict__["_ix_last_config"] = bool(conf)
        if self._index_all:
            have = {c["column"] for c in conf}
            new = [f.name for f in self.schema  # type: ignore[attr-defined]
                   if f.name not in have and _is_scalar_type(f.type)]
            if new:  # one metadata commit for all of them
                _core.index_add_many(self._uri, new, "inverted", None)
                conf.extend({"kind": "inverted"} for _ in new)
        if conf:
            self._ix_state().schedule(kept)

    def wait_for_indexes(self, timeout: Optional[float] = None) -> None:
        """Block until every configured index covers every data file of the
        current snapshot: waits for this object's background builds,
        then builds anything still missing (files another process wrote).
        Raises the first error of a background build (others are chained in
        its notes) and :class:`TimeoutError` when ``timeout`` seconds pass
        first."""
        st = self._ix_state()
        if not st.wait(timeout):
            raise TimeoutError(f"{self._uri}: background index builds still running after "
                               f"{timeout} s")
        with st.cond:
            errors, st.errors = st.errors, []
        if errors:
            first = errors[0]
            if len(errors) > 1 and hasattr(first, "add_note"):
                first.add_note(f"{len(errors) - 1} more background build(s) failed too: "
                               + "; ".join(str(e) for e in errors[1:]))
            raise first
        if self._load() and self._ix_config():
            _build_all(self._uri, type(self))

    def _index_repr(self) -> str:
        """Lines for ``repr(table)``: indexes and background build state."""
        st = self.__dict__.get("_ix_build_state")
        lines = []
        try:
            infos = self.indexes()
        except Exception as e:  # repr must not raise
            infos, lines = [], [f"  indexes: unreadable ({e})"]
        if infos:
            lines.append("  indexes: " + ", ".join(
                f"{i.column} ({i.kind}, {i.files_indexed}/{i.files_total} files)" for i in infos))
        if st is not None:
            with st.cond:
                if st.running or st.pending:
                    lines.append("  background index build: running")
                if st.errors:
                    lines.append(f"  background index build FAILED: {st.errors[0]} "
                                 "(raised by wait_for_indexes())")
        return "".join("\n" + line for line in lines)

    # ----------------------------------------------------------- validate

    def validate(self, snapshot_id: Optional[int] = None) -> List["IndexProblem"]:
        """Check every registered index of the snapshot's data files (the
        current one by default) as strictly as possible, and list what fails.

        Each index file must open, each blob's bytes must match the CRC-32C
        recorded beside it (read again from disk), the blob must be bound to
        the data file the registry names (its path, size and the CRC-32C of
        its Parquet footer), and its contents must pass the format's full
        check (every bitmap and row of a scalar index; every section of a
        vector index). Returns a list of :class:`IndexProblem` — empty for a
        healthy table. Readers never use an index that fails the binding or
        checksum checks (they read the file exactly and warn with
        :class:`IndexIgnoredWarning`); rebuild one with ``drop_index`` then
        ``add_index``.
        """
        self._require()  # type: ignore[attr-defined]
        found, _checked = _core.validate_indexes(self._uri, snapshot_id)
        return [IndexProblem(**d) for d in found]

    # ------------------------------------------------------------ explain

    def explain(self, filter: Optional[str] = None, snapshot_id: Optional[int] = None,
                as_dict: bool = False) -> Any:
        """How a filtered scan runs, measured by running it (EXPLAIN ANALYZE).

        Returns an :class:`ExplainPlan`: a readable plan (``print`` it) whose
        ``stats`` (or ``to_dict()``, or ``as_dict=True``) hold the counters:
        files planned / pruned by partition values and column bounds / read,
        row groups read / pruned by statistics, pages pruned by page indexes,
        files answered by a scalar index and the rows it ruled out, rows
        scanned / matched, and the object-store cost of the run
        (``io_requests``, ``io_bytes_read``, ``io_round_trips``: dependent
        round trips, counted for the whole process); ``stats["files"]`` lists every data file read
        (path, ``indexed``, ``index_columns``, rows, index candidates /
        eliminated, row groups, pages read of ``pages``, rows scanned /
        matched), the first 20 of them also in the text. ``filter`` as in
        :meth:`to_arrow_stream` (``None``, ``""`` or whitespace: no filter).
        """
        filter = filter_arg(filter)
        self._require()  # type: ignore[attr-defined]
        io0 = _core.io_stats()
        stats = _core.explain(self._uri, filter, snapshot_id)
        stats = {"filter": filter, "snapshot_id": snapshot_id, **stats,
                 **io_delta(io0, _core.io_stats())}
        try:
            stats["indexes"] = {i.column: {"kind": i.kind, "files_indexed": i.files_indexed,
                                           "files_total": i.files_total}
                                for i in self.indexes()}
        except Exception:  # noqa: BLE001 - the plan stands without it
            stats["indexes"] = {}
        if as_dict:
            return stats
        return ExplainPlan(_explain_text(self._uri, stats), stats)


_FILES_SHOWN = 20  # per-file lines in the text; stats["files"] holds all


def _n(v: int) -> str:
    return f"{v:,}"


def _explain_text(uri: str, s: Dict[str, Any]) -> str:
    snap = f" at snapshot {s['snapshot_id']}" if s.get("snapshot_id") is not None else ""
    read = s["files_read"]
    out = [f"Scan {uri}{snap}",
           f"  filter:     {s['filter'] if s.get('filter') else '(none)'}",
           f"  files:      {_n(s['files_planned'])} planned ({_n(s['manifests_read'])} manifests), "
           f"{_n(s['files_pruned'])} pruned by partition values / column bounds, "
           f"{_n(read)} read",
           f"  row groups: {_n(s['row_groups_read'])} read, {_n(s['row_groups_pruned'])} pruned "
           "by statistics",
           f"  pages:      {_n(s['pages_pruned'])} of {_n(s['pages'])} pages pruned by page "
           f"indexes ({_n(s['page_rows_pruned'])} rows, in {_n(s['page_row_groups_indexed'])} "
           "row groups with page indexes)"]
    fi = s["files_indexed"]
    if fi:
        out.append(f"  index:      {_n(fi)} of {_n(read)} files read answered by a scalar index: "
                   f"{_n(s['index_rows_candidate'])} candidate rows, "
                   f"{_n(s['index_rows_eliminated'])} eliminated")
    else:
        out.append(f"  index:      no scalar index used ({_n(read)} files read unindexed)")
    if s.get("files_index_rejected"):
        out.append(f"  INDEX IGNORED: {_n(s['files_index_rejected'])} files' registered index "
                   "did not match the data file (read exactly instead): "
                   f"{s['index_rejected']}")
    if fi and fi < read:
        out.append(f"              {_n(read - fi)} files read without an index (not built yet, "
                   "or no index on the filter's columns)")
    if s.get("delete_files"):
        out.append(f"  deletes:    {_n(s['delete_files'])} delete files in the snapshot; "
                   f"{_n(s['rows_deleted'])} rows of the files read are deleted (never read)")
    out.append(f"  rows:       {_n(s['rows_scanned'])} scanned, {_n(s['rows_matched'])} matched")
    files = s.get("files") or []
    if files:
        out.append("  per file:")
    for f in files[:_FILES_SHOWN]:
        read = f["pages"] - f["pages_pruned"]
        how = (f"index on {f['index_columns']}: {_n(f['index_rows_candidate'])} candidates, "
               f"{_n(f['index_rows_eliminated'])} eliminated" if f["indexed"] else "no index")
        if f.get("index_rejected"):
            how += f" (index ignored: {f['index_rejected']})"
        out.append(f"    {os.path.basename(f['path'])}: {_n(f['rows'])} rows; {how}; "
                   f"row groups {_n(f['row_groups_read'])} read, {_n(f['row_groups_pruned'])} "
                   f"pruned; pages {_n(read)} of {_n(f['pages'])} read; "
                   f"{_n(f['rows_scanned'])} scanned, {_n(f['rows_matched'])} matched"
                   + (f"; {_n(f['rows_deleted'])} deleted" if f.get("rows_deleted") else ""))
    if len(files) > _FILES_SHOWN:
        out.append(f"    ... {_n(len(files) - _FILES_SHOWN)} more files (stats['files'])")
    out.append(io_line(s))
    idx = s.get("indexes") or {}
    if idx:
        out.append("  indexes:    " + ", ".join(
            f"{c} ({v['kind']}, {v['files_indexed']}/{v['files_total']} files)"
            for c, v in idx.items()))
    return "\n".join(out)

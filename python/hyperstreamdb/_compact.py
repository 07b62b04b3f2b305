"""Compaction: ``Table.compact`` and its Iceberg name ``rewrite_data_files``.

One ``replace`` snapshot made by the C core's ``hs_table_compact``
(src/query/compact.c): small data files, files with deletes and files of an
older partition spec are rewritten, bin-packed into files of about the
target size, into the table's current partition spec and sort order, with
deleted rows (position deletes, deletion vectors, equality deletes) left
out; delete files that then apply to nothing are removed in the same commit.
A concurrent delete against a file being rewritten makes the core run the
compaction again on the new snapshot (then
:class:`~hyperstreamdb.CommitConflictError`); concurrent appends are kept.

The new files' configured indexes are built right after the commit, from the
batches that were written when the table is unpartitioned and unsorted (no
re-read of the data files), else from the new files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from . import _core
from ._core import InvalidArgumentError
from ._filters import filter_arg

__all__ = ["CompactMethods", "CompactResult"]


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


@dataclass(frozen=True)
class CompactResult:
    """What :meth:`Table.compact` did."""
    snapshot_id: Optional[int]  #: the replace snapshot; None when nothing was rewritten
    files_rewritten: int  #: data files removed
    files_added: int  #: data files written
    delete_files_removed: int  #: delete files / deletion vectors that no longer applied
    rows: int  #: rows written
    rows_dropped: int  #: deleted rows not written again
    bytes_removed: int  #: size of the data files removed
    bytes_added: int  #: size of the data files written
    indexes_built: int = 0  #: index files written for the new files
    attempts: int = 1  #: runs (a conflicting concurrent delete re-runs it)

    # Iceberg's RewriteDataFiles.Result names
    @property
    def rewritten_data_files_count(self) -> int:
        return self.files_rewritten

    @property
    def added_data_files_count(self) -> int:
        return self.files_added

    @property
    def rewritten_bytes_count(self) -> int:
        return self.bytes_removed

    @property
    def removed_delete_files_count(self) -> int:
        return self.delete_files_removed

    def __repr__(self) -> str:
        if self.snapshot_id is None:
            return "CompactResult(nothing to compact)"
        return (f"CompactResult(snapshot {self.snapshot_id}: {self.files_rewritten} data files "
                f"({_size(self.bytes_removed)}) -> {self.files_added} "
                f"({_size(self.bytes_added)}), {self.rows} rows written, "
                f"{self.rows_dropped} deleted rows dropped, {self.delete_files_removed} delete "
                f"files removed, {self.indexes_built} index files built)")


class CompactMethods:
    """Mixin of :class:`~hyperstreamdb.Table`: compaction."""

    def compact(self, target_file_size_bytes: Optional[int] = None,
                filter: Optional[str] = None, min_input_files: int = 2) -> CompactResult:
        """Bin-pack the current snapshot's small data files (and every file
        with deletes, and files of an older partition spec) into files of
        about ``target_file_size_bytes`` (default: the table property
        ``write.target-file-size-bytes``, else 512 MiB), as one ``replace``
        snapshot. ``filter`` (SQL) limits it to the files the filter may
        match by partition values and column bounds. A partition whose files
        have no deletes is rewritten only from ``min_input_files`` files.
        Rows are not changed: every read returns the same rows before and
        after (v3 rows keep ``_row_id``). Configured indexes of the new
        files are built before this returns; a table with NDV statistics
        (:meth:`compute_statistics`) gets them for the new snapshot too.
        """
        filt = filter_arg(filter)
        target = 0
        if target_file_size_bytes is not None:
            if isinstance(target_file_size_bytes, bool) or not isinstance(
                    target_file_size_bytes, int) or target_file_size_bytes <= 0:
                raise InvalidArgumentError("target_file_size_bytes must be a positive integer, "
                                           f"got {target_file_size_bytes!r}")
            target = target_file_size_bytes
        if isinstance(min_input_files, bool) or not isinstance(min_input_files, int) \
                or min_input_files < 1:
            raise InvalidArgumentError(f"min_input_files must be an integer >= 1, "
                                       f"got {min_input_files!r}")
        if not self._load():  # type: ignore[attr-defined]
            return CompactResult(None, 0, 0, 0, 0, 0, 0, 0)
        conf = self._ix_config()  # type: ignore[attr-defined]
        r, kept = _core.compact(self._uri, target, filt,  # type: ignore[attr-defined]
                                min(min_input_files, 2**31 - 1), bool(conf))
        self._require().refresh()  # type: ignore[attr-defined]
        self._vs_cache = None
        if r["snapshot_id"] is not None and self._has_statistics():
            # The replace snapshot gets its own NDV statistics file (issue 14
            # item 6) when the table keeps statistics.
            self.compute_statistics()  # type: ignore[attr-defined]
        built = 0
        if conf and r["files_added"] > 0:
            from ._indexes import _build_all

            built = _build_all(self._uri, type(self),  # type: ignore[attr-defined]
                               appended=kept if len(kept) == r["files_added"] else None)
        return CompactResult(r["snapshot_id"], r["files_rewritten"], r["files_added"],
                             r["delete_files_removed"], r["rows"], r["rows_dropped"],
                             r["bytes_removed"], r["bytes_added"], built, r["attempts"])

    def _has_statistics(self) -> bool:
        from ._indexes import metadata_json

        meta = metadata_json(self._require().metadata_location)  # type: ignore[attr-defined]
        return bool(meta.get("statistics"))

    def rewrite_data_files(self, target_file_size_bytes: Optional[int] = None,
                           filter: Optional[str] = None,
                           min_input_files: int = 2) -> CompactResult:
        """Iceberg's name for :meth:`compact` (same arguments and result)."""
        return self.compact(target_file_size_bytes=target_file_size_bytes, filter=filter,
                            min_input_files=min_input_files)

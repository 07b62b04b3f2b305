"""Indexes bound to their data files: the warning readers give when a
registered index does not match its data file, and the report of
:meth:`Table.validate`.

Every index blob records the data file it was built for (path, size, the
CRC-32C of its Parquet footer) and the CRC-32C of its own bytes. A reader
that finds an index bound to another file, or damaged, does not use it: the
data file is read exactly (the answer stays right, only slower) and
:class:`IndexIgnoredWarning` says so. ``explain()`` shows it per file, and
``Table.validate()`` checks every index of a snapshot.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from . import _core

__all__ = ["IndexIgnoredWarning", "IndexProblem", "rejections", "warn_since"]


class IndexIgnoredWarning(UserWarning):
    """A registered index did not match its data file (built for another
    file, damaged, or missing) and was not used; the file was read
    exactly, so results are still correct. ``Table.validate()`` lists every
    such index; ``drop_index`` then ``add_index`` rebuilds it."""


@dataclass(frozen=True)
class IndexProblem:
    """One registered index that fails :meth:`Table.validate`."""

    data_file: str   #: the data file it is registered for
    index_file: str  #: the index (Puffin) file
    column: str      #: the indexed column ("" for the whole file)
    problem: str     #: what is wrong

    def __str__(self) -> str:
        col = f" column {self.column!r}" if self.column else ""
        return f"{self.index_file}{col} (for {self.data_file}): {self.problem}"


def rejections() -> int:
    """How many registered indexes readers of this process have refused."""
    return int(_core._index_rejections()[0])


def warn_since(before: int, stacklevel: int = 3) -> None:
    """Warn when readers refused indexes since `before` (a rejections() count)."""
    n, last = _core._index_rejections()
    if n > before:
        warnings.warn(IndexIgnoredWarning(
            f"{n - before} registered index(es) did not match their data file and were not "
            f"used; the data was read exactly instead. {last}. Table.validate() lists every "
            "such index; drop_index + add_index rebuilds it."), stacklevel=stacklevel)

"""Filter strings as every entry point takes them (to_arrow, to_pandas,
to_arrow_stream, search, Query.filter, explain).

One rule everywhere, the C core's and the CLI's too: ``None``, ``""`` and a
string of only spaces, tabs, CRs and LFs mean "no filter". A filter is text:
a NUL character anywhere in it is an
:class:`~hyperstreamdb.InvalidArgumentError` naming its position (1-based,
like the parser's positions), never a silent cut at the NUL.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ._core import InvalidArgumentError

__all__ = ["filter_arg", "BLANK"]

#: What counts as blank: the characters the C core skips (src/query/scan.c).
BLANK = " \t\r\n"


def filter_arg(filter: Any, what: str = "filter") -> Optional[str]:
    """``filter`` checked: None when there is no filter, else the text."""
    if filter is None:
        return None
    if not isinstance(filter, str):
        raise InvalidArgumentError(f"{what} must be a str (a SQL boolean expression), "
                                   f"not {type(filter).__name__}")
    nul = filter.find("\x00")
    if nul >= 0:
        raise InvalidArgumentError(f"{what}: NUL character at position {nul + 1} "
                                   "(a filter is text without NUL characters)")
    return filter if filter.strip(BLANK) else None


def columns_arg(columns: Optional[Sequence[str]]) -> Optional[List[str]]:
    """A projection: a list of names, each at most once (None: every column)."""
    if columns is None:
        return None
    cols = list(columns)
    seen: Dict[str, int] = {}
    for i, c in enumerate(cols):
        if isinstance(c, str) and c in seen:
            raise InvalidArgumentError(
                f"columns: {c!r} is selected twice (positions {seen[c]} and {i})")
        if isinstance(c, str):
            seen[c] = i
    return cols

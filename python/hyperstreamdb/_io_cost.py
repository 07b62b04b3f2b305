"""The object-store cost of one call, as explain() reports it (issue 16
item 4: requests, bytes and dependent round trips of the query explained),
from two readings of the process's counters (``hdb.io_stats()``)."""
from __future__ import annotations

from typing import Any, Dict


def io_delta(before: Dict[str, int], after: Dict[str, int]) -> Dict[str, int]:
    """The cost between two ``_core.io_stats()`` readings: ``io_requests``,
    ``io_bytes_read`` and ``io_round_trips`` (dependent round trips: a
    request alone, or one wave of parallel ones). The counters are the
    process's: object-store calls other threads make meanwhile count too."""
    return {"io_requests": after["requests"] - before["requests"],
            "io_bytes_read": after["bytes_read"] - before["bytes_read"],
            "io_round_trips": after["round_trips"] - before["round_trips"]}


def io_line(stats: Dict[str, Any]) -> str:
    """explain's text line for the io_delta keys of ``stats``."""
    return (f"  object store: {stats.get('io_requests', 0):,} requests, "
            f"{stats.get('io_bytes_read', 0):,} bytes read, "
            f"{stats.get('io_round_trips', 0):,} dependent round trips")


__all__ = ["io_delta", "io_line"]

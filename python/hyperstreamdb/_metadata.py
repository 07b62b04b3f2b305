"""The Parquet footer as Python objects: what :func:`hyperstreamdb.parquet.read_metadata`
returns.

The objects are built from the JSON document of the C core's ``inspect`` (one
parse of the footer, no page is read) plus the Arrow schema a read produces.
They are plain immutable values: nothing keeps the file open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

import pyarrow as pa

__all__ = ["FileMetadata", "RowGroupMetadata", "ColumnChunkMetadata"]


@dataclass(frozen=True)
class ColumnChunkMetadata:
    """One column chunk: a leaf column inside one row group.

    ``statistics`` holds ``null_count``, ``min``, ``max`` (decoded to int,
    float or str where the physical type allows) when the writer stored them,
    else is None. Sizes are in bytes.
    """

    path: str
    physical_type: str
    codec: str
    encodings: Tuple[str, ...]
    num_values: int
    compressed_size: int
    uncompressed_size: int
    statistics: Optional[Mapping[str, Any]]
    has_column_index: bool
    has_offset_index: bool

    @classmethod
    def _from_json(cls, doc: Mapping[str, Any]) -> "ColumnChunkMetadata":
        return cls(
            path=doc.get("path", ""),
            physical_type=doc.get("physical_type", ""),
            codec=doc.get("codec", ""),
            encodings=tuple(doc.get("encodings", ())),
            num_values=int(doc.get("num_values", 0)),
            compressed_size=int(doc.get("compressed_size", 0)),
            uncompressed_size=int(doc.get("uncompressed_size", 0)),
            statistics=doc.get("statistics"),
            has_column_index=bool(doc.get("has_column_index", False)),
            has_offset_index=bool(doc.get("has_offset_index", False)),
        )

    def __repr__(self) -> str:
        return (
            f"<ColumnChunkMetadata {self.path!r} {self.physical_type} {self.codec} "
            f"encodings={','.join(self.encodings)} values={self.num_values} "
            f"bytes={self.compressed_size}/{self.uncompressed_size}>"
        )


@dataclass(frozen=True)
class RowGroupMetadata:
    """One row group; iterate it (or use :attr:`columns`) for its column chunks."""

    index: int
    num_rows: int
    total_byte_size: int
    total_compressed_size: Optional[int]
    columns: Tuple[ColumnChunkMetadata, ...]

    @classmethod
    def _from_json(cls, doc: Mapping[str, Any]) -> "RowGroupMetadata":
        compressed = doc.get("total_compressed_size")
        return cls(
            index=int(doc.get("index", 0)),
            num_rows=int(doc.get("num_rows", 0)),
            total_byte_size=int(doc.get("total_byte_size", 0)),
            total_compressed_size=int(compressed) if compressed is not None else None,
            columns=tuple(ColumnChunkMetadata._from_json(c) for c in doc.get("columns", ())),
        )

    @property
    def num_columns(self) -> int:
        """Column chunks in this row group (one per leaf column)."""
        return len(self.columns)

    def column(self, i: int) -> ColumnChunkMetadata:
        """The ``i``-th column chunk (leaf order)."""
        return self.columns[i]

    def __iter__(self) -> Iterator[ColumnChunkMetadata]:
        """The column chunks, in leaf order."""
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    def __repr__(self) -> str:
        size = f"{self.total_byte_size} bytes"
        if self.total_compressed_size is not None:
            size += f" ({self.total_compressed_size} compressed)"
        return (
            f"<RowGroupMetadata #{self.index} num_rows={self.num_rows} "
            f"num_columns={self.num_columns} {size}>"
        )


@dataclass(frozen=True)
class FileMetadata:
    """The footer of a Parquet file.

    Attributes:
        path: the file.
        num_rows: rows in the file.
        num_row_groups: row groups in the file.
        num_columns: leaf columns (Parquet's notion: a list of structs counts
            each leaf).
        created_by: the writer's ``created_by`` string, or None.
        format_version: the footer's ``version`` field.
        schema: the Arrow schema :func:`read_table` produces.
        metadata: the file's key-value metadata (values that are not UTF-8
            have their bad bytes replaced by U+FFFD).
        row_groups: one :class:`RowGroupMetadata` per row group.
    """

    path: str
    num_rows: int
    num_row_groups: int
    num_columns: int
    created_by: Optional[str]
    format_version: int
    schema: pa.Schema = field(compare=False)
    metadata: Mapping[str, Optional[str]]
    row_groups: Tuple[RowGroupMetadata, ...]

    @classmethod
    def _from_json(cls, doc: Mapping[str, Any], schema: pa.Schema) -> "FileMetadata":
        kv: Dict[str, Optional[str]] = {}
        for item in doc.get("key_value_metadata", ()) or ():
            kv[item.get("key", "")] = item.get("value")
        row_groups = tuple(RowGroupMetadata._from_json(g) for g in doc.get("row_groups", ()))
        return cls(
            path=doc.get("file", ""),
            num_rows=int(doc.get("num_rows", 0)),
            num_row_groups=len(row_groups),
            num_columns=sum(_count_leaves(c) for c in (doc.get("schema") or {}).get("children") or ()),
            created_by=doc.get("created_by"),
            format_version=int(doc.get("version", 0)),
            schema=schema,
            metadata=kv,
            row_groups=row_groups,
        )

    def row_group(self, i: int) -> RowGroupMetadata:
        """The ``i``-th row group."""
        return self.row_groups[i]

    def to_dict(self) -> Dict[str, Any]:
        """The scalar fields as a dict (row groups as a list of dicts)."""
        return {
            "path": self.path,
            "num_rows": self.num_rows,
            "num_row_groups": self.num_row_groups,
            "num_columns": self.num_columns,
            "created_by": self.created_by,
            "format_version": self.format_version,
            "metadata": dict(self.metadata),
            "row_groups": [_row_group_dict(g) for g in self.row_groups],
        }

    def __repr__(self) -> str:
        return (
            f"<FileMetadata {self.path!r} num_rows={self.num_rows} "
            f"num_row_groups={self.num_row_groups} num_columns={self.num_columns} "
            f"created_by={self.created_by!r}>"
        )


def _count_leaves(node: Mapping[str, Any]) -> int:
    children: List[Mapping[str, Any]] = node.get("children") or []
    if not children:
        return 1
    return sum(_count_leaves(c) for c in children)


def _row_group_dict(g: RowGroupMetadata) -> Dict[str, Any]:
    return {
        "index": g.index,
        "num_rows": g.num_rows,
        "total_byte_size": g.total_byte_size,
        "total_compressed_size": g.total_compressed_size,
        "columns": [
            {
                "path": c.path,
                "physical_type": c.physical_type,
                "codec": c.codec,
                "encodings": list(c.encodings),
                "num_values": c.num_values,
                "compressed_size": c.compressed_size,
                "uncompressed_size": c.uncompressed_size,
                "statistics": dict(c.statistics) if c.statistics is not None else None,
                "has_column_index": c.has_column_index,
                "has_offset_index": c.has_offset_index,
            }
            for c in g.columns
        ],
    }

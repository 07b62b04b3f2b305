"""Defining and evolving tables: the builders behind ``Table.create``,
``Table.update_schema``, ``Table.update_spec`` and ``Table.replace_sort_order``
(pyiceberg's shapes), and the seed's dict spellings of partition fields and
sort fields. Each builder commits ONCE, on ``commit()`` or on leaving its
``with`` block without an exception (nothing is committed after one).
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
import json
import uuid as _uuid
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import _core
from ._core import InvalidArgumentError

ADD, RENAME, DROP, UPDATE = 1, 2, 3, 4


def _field_id(f: pa.Field) -> Optional[int]:
    md = f.metadata or {}
    v = md.get(b"PARQUET:field_id")
    return int(v) if v is not None else None


def _type_capsule(name: str, type_: Any) -> Any:
    if isinstance(type_, pa.Field):
        f = type_.with_name(name)
    elif isinstance(type_, pa.DataType):
        f = pa.field(name, type_)
    else:
        raise InvalidArgumentError(f"column {name!r}: type must be a pyarrow DataType or Field, "
                                   f"got {type(type_).__name__}")
    return pa.schema([f]).__arrow_c_schema__()


def default_json(value: Any, type_: pa.DataType) -> str:
    """The Iceberg JSON single-value serialization of ``value`` for ``type_``
    (spec appendix D): numbers, strings, booleans; dates as ISO strings,
    decimals as strings, binary as hex, uuids as strings."""
    if isinstance(type_, pa.Field):
        type_ = type_.type
    if value is None:
        raise InvalidArgumentError("a default of None is no default (omit it)")
    if pa.types.is_boolean(type_):
        if not isinstance(value, bool):
            raise InvalidArgumentError(f"default {value!r} is not a boolean")
        return "true" if value else "false"
    if pa.types.is_integer(type_):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
            raise InvalidArgumentError(f"default {value!r} is not an integer")
        return str(int(value))
    if pa.types.is_floating(type_):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidArgumentError(f"default {value!r} is not a number")
        return json.dumps(float(value))
    if pa.types.is_decimal(type_):
        try:
            d = _decimal.Decimal(str(value)).quantize(_decimal.Decimal(1).scaleb(-type_.scale))
        except _decimal.InvalidOperation:
            raise InvalidArgumentError(f"default {value!r} is not a decimal of scale "
                                       f"{type_.scale}") from None
        return json.dumps(str(d))
    if pa.types.is_string(type_) or pa.types.is_large_string(type_):
        if not isinstance(value, str):
            raise InvalidArgumentError(f"default {value!r} is not a string")
        return json.dumps(value)
    if pa.types.is_date(type_):
        if isinstance(value, _dt.datetime) or not isinstance(value, _dt.date):
            raise InvalidArgumentError(f"default {value!r} is not a date")
        return json.dumps(value.isoformat())
    if pa.types.is_binary(type_) or pa.types.is_large_binary(type_) or \
            pa.types.is_fixed_size_binary(type_):
        return json.dumps(bytes(value).hex().upper())
    if isinstance(value, _uuid.UUID):
        return json.dumps(str(value))
    raise InvalidArgumentError(f"defaults of type {type_} are not supported")


class UpdateSchema:
    """Schema changes committed together (pyiceberg's ``UpdateSchema``)::

        with t.update_schema() as u:
            u.add_column("score", pa.float64(), default=0.0)
            u.rename_column("name", "title")
            u.update_column("n", pa.int64())
            u.drop_column("old")
    """

    def __init__(self, table: Any) -> None:
        self._table = table
        self._changes: List[Tuple] = []
        self._done = False

    def add_column(self, name: str, type_: Any = None, default: Any = None,
                   doc: Optional[str] = None, required: bool = False, **kw: Any) -> "UpdateSchema":
        """Add top-level column ``name`` of pyarrow type ``type_`` (v3:
        ``default`` is its initial-default and write-default)."""
        if type_ is None:
            type_ = kw.pop("field_type", None)
        if kw:
            raise InvalidArgumentError(f"add_column: unknown arguments {sorted(kw)}")
        if isinstance(name, (tuple, list)):
            if len(name) != 1:
                raise InvalidArgumentError("only top-level columns can be added")
            name = name[0]
        if type_ is None:
            raise InvalidArgumentError(f"add_column {name!r}: no type")
        dj = default_json(default, type_) if default is not None else None
        self._changes.append((ADD, name, None, _type_capsule(name, type_), dj, doc,
                              bool(required)))
        return self

    def rename_column(self, old: str, new: str) -> "UpdateSchema":
        self._changes.append((RENAME, old, new, None, None, None, False))
        return self

    def drop_column(self, name: str) -> "UpdateSchema":
        self._changes.append((DROP, name, None, None, None, None, False))
        return self

    delete_column = drop_column  # pyiceberg's name

    def update_column(self, name: str, type_: Any = None, doc: Optional[str] = None,
                      **kw: Any) -> "UpdateSchema":
        """Widen ``name`` to ``type_`` (int -> long, float -> double, decimal
        precision) and/or set its ``doc``."""
        if type_ is None:
            type_ = kw.pop("field_type", None)
        if kw:
            raise InvalidArgumentError(f"update_column: unknown arguments {sorted(kw)}")
        cap = _type_capsule(name, type_) if type_ is not None else None
        self._changes.append((UPDATE, name, None, cap, None, doc, False))
        return self

    def commit(self) -> None:
        if self._done:
            raise InvalidArgumentError("this schema update was already committed")
        self._done = True
        if self._changes:
            self._table._require()
            _core.table_update_schema(self._table.uri, self._changes)
            self._table._load()

    def __enter__(self) -> "UpdateSchema":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()


# --------------------------------------------------------- partition specs

def _current_metadata(table: Any) -> dict:
    from ._indexes import metadata_json

    return metadata_json(table.metadata_location)


def _names_by_id(table: Any) -> Dict[int, str]:
    """Field id -> top-level name of a table (its current schema), or of a
    pyarrow schema about to be created (ids as creation assigns them: 1, 2,
    ... in order, counting nested fields depth-first after each level)."""
    if isinstance(table, pa.Schema):
        sch = pa.schema([f.remove_metadata() for f in table])
        out, nid = {}, 1
        for f in sch:
            out[nid] = f.name
            nid += 1
        # nested ids come after all top-level ones, so top-level ids are 1..n
        return out
    return {fid: f.name for f in table.schema if (fid := _field_id(f)) is not None}


def spec_fields(table: Any, fields: Sequence[Any]) -> List[Tuple[str, str, Optional[str]]]:
    """Our (source, transform, name) triples from every accepted spelling:
    ``"col"``, ``(col, transform)``, ``(col, transform, name)`` and the seed's
    dicts ``{"source_id": 1, "field_id": 1000, "name": "date", "transform":
    "day"}`` (``source_id`` a field id, or ``source``/``source_name``/
    ``column`` a name; ``field_id`` is assigned by the table, as Iceberg does:
    a given one must be the id the table assigns, checked after the commit)."""
    out = []
    by_id = None
    for f in fields:
        if isinstance(f, str):
            out.append((f, "identity", None))
        elif isinstance(f, dict):
            src = f.get("source") or f.get("source_name") or f.get("column")
            if src is None and "source_id" in f:
                by_id = by_id or _names_by_id(table)
                sid = f["source_id"]
                if sid not in by_id:
                    raise InvalidArgumentError(
                        f"partition field {f!r}: no column with field id {sid} "
                        f"(columns: {', '.join(f'{n} ({i})' for i, n in sorted(by_id.items()))})")
                src = by_id[sid]
            if src is None:
                raise InvalidArgumentError(f"partition field {f!r}: no source_id or source")
            out.append((src, str(f.get("transform", "identity")), f.get("name")))
        elif len(f) == 2:
            out.append((f[0], f[1], None))
        else:
            out.append((f[0], f[1], f[2]))
    return out


def check_field_ids(table: Any, fields: Sequence[Any]) -> None:
    """The dict form's ``field_id``s must be what the committed spec holds."""
    want = {f["name"]: f["field_id"] for f in fields
            if isinstance(f, dict) and "field_id" in f and f.get("name")}
    if not want:
        return
    m = _current_metadata(table)
    spec = next(s for s in m["partition-specs"] if s["spec-id"] == m["default-spec-id"])
    got = {f["name"]: f["field-id"] for f in spec["fields"]}
    bad = {n: (i, got.get(n)) for n, i in want.items() if got.get(n) != i}
    if bad:
        raise InvalidArgumentError(
            "partition field ids are assigned by the table (Iceberg: last-partition-id + 1, or "
            "the id an equal field had before); committed "
            + ", ".join(f"{n}: {g} (asked {w})" for n, (w, g) in bad.items()))


def current_spec(table: Any) -> List[Tuple[str, str, Optional[str]]]:
    m = _current_metadata(table)
    spec = next(s for s in m["partition-specs"] if s["spec-id"] == m["default-spec-id"])
    names = _names_by_id(table)
    return [(names.get(f["source-id"], str(f["source-id"])), f["transform"], f["name"])
            for f in spec["fields"]]


class UpdateSpec:
    """Partition spec changes committed together (pyiceberg's
    ``UpdateSpec``: ``add_field``, ``add_identity``, ``remove_field``,
    ``rename_field``), over :meth:`Table.set_partition_spec`."""

    def __init__(self, table: Any) -> None:
        self._table = table
        self._fields = current_spec(table)
        self._done = False

    def add_field(self, source_column_name: str, transform: Any = "identity",
                  partition_field_name: Optional[str] = None) -> "UpdateSpec":
        tr = transform if isinstance(transform, str) else _transform_text(transform)
        self._fields.append((source_column_name, tr, partition_field_name))
        return self

    def add_identity(self, source_column_name: str) -> "UpdateSpec":
        return self.add_field(source_column_name, "identity", source_column_name)

    def remove_field(self, name: str) -> "UpdateSpec":
        keep = [f for f in self._fields if (f[2] or "") != name]
        if len(keep) == len(self._fields):
            raise InvalidArgumentError(f"no partition field {name!r} "
                                       f"(fields: {', '.join(f[2] for f in self._fields)})")
        self._fields = keep
        return self

    def rename_field(self, name: str, new_name: str) -> "UpdateSpec":
        if not any(f[2] == name for f in self._fields):
            raise InvalidArgumentError(f"no partition field {name!r}")
        self._fields = [(s, t, new_name if n == name else n) for s, t, n in self._fields]
        return self

    def commit(self) -> None:
        if self._done:
            raise InvalidArgumentError("this spec update was already committed")
        self._done = True
        self._table.set_partition_spec(self._fields)

    def __enter__(self) -> "UpdateSpec":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()


def _transform_text(t: Any) -> str:
    """A pyiceberg Transform object as its spec string ("bucket[16]", "day")."""
    s = str(t)
    return {"IdentityTransform()": "identity"}.get(s, s)


# ------------------------------------------------------------- sort orders

def sort_fields(table: Any, fields: Sequence[Any]) -> Tuple[List[str], List[bool], List[bool]]:
    """(columns, ascending, nulls_first) from ``"col"``, ``(col, "asc"|"desc")``,
    ``(col, "asc"|"desc", "nulls-first"|"nulls-last")`` and Iceberg's JSON dicts
    ``{"source-id": 2, "direction": "desc", "null-order": "nulls-last"}`` (also
    ``source_id``, ``column``, ``null_order``; ``"transform"`` must be identity)."""
    cols, asc, nf = [], [], []
    by_id = None
    for f in fields:
        direction, nulls = "asc", None
        if isinstance(f, str):
            col = f
        elif isinstance(f, dict):
            col = f.get("column") or f.get("source") or f.get("name")
            sid = f.get("source-id", f.get("source_id"))
            if col is None and sid is not None:
                by_id = by_id or _names_by_id(table)
                if sid not in by_id:
                    raise InvalidArgumentError(f"sort field {f!r}: no column with field id {sid}")
                col = by_id[sid]
            if col is None:
                raise InvalidArgumentError(f"sort field {f!r}: no source-id or column")
            if f.get("transform", "identity") != "identity":
                raise InvalidArgumentError(f"sort field {f!r}: only identity transforms sort here")
            direction = f.get("direction", "asc")
            nulls = f.get("null-order", f.get("null_order"))
        else:
            col = f[0]
            direction = f[1] if len(f) > 1 else "asc"
            nulls = f[2] if len(f) > 2 else None
        if direction not in ("asc", "desc"):
            raise InvalidArgumentError(f"sort field {f!r}: direction must be 'asc' or 'desc'")
        a = direction == "asc"
        if nulls is None:
            n = a  # Iceberg's default: nulls first ascending, last descending
        elif nulls in ("nulls-first", "nulls_first", "first"):
            n = True
        elif nulls in ("nulls-last", "nulls_last", "last"):
            n = False
        else:
            raise InvalidArgumentError(f"sort field {f!r}: null order must be nulls-first or "
                                       "nulls-last")
        cols.append(col)
        asc.append(a)
        nf.append(n)
    return cols, asc, nf


class ReplaceSortOrder:
    """A new sort order committed once (pyiceberg's ``ReplaceSortOrder``):
    ``asc(column, transform=None, null_order=None)``, ``desc(...)``."""

    def __init__(self, table: Any) -> None:
        self._table = table
        self._fields: List[Tuple[str, str, Optional[str]]] = []
        self._done = False

    def _add(self, col: str, direction: str, transform: Any, null_order: Any) -> "ReplaceSortOrder":
        if transform is not None and _transform_text(transform) != "identity":
            raise InvalidArgumentError(f"sort field {col!r}: only identity transforms sort here")
        nulls = None
        if null_order is not None:
            s = str(getattr(null_order, "value", null_order)).lower().replace(" ", "-")
            nulls = "nulls-first" if "first" in s else "nulls-last"
        self._fields.append((col, direction, nulls))
        return self

    def asc(self, source_column_name: str, transform: Any = None,
            null_order: Any = None) -> "ReplaceSortOrder":
        return self._add(source_column_name, "asc", transform, null_order)

    def desc(self, source_column_name: str, transform: Any = None,
             null_order: Any = None) -> "ReplaceSortOrder":
        return self._add(source_column_name, "desc", transform, null_order)

    def commit(self) -> None:
        if self._done:
            raise InvalidArgumentError("this sort order was already committed")
        self._done = True
        cols, asc, nf = sort_fields(self._table, self._fields)
        self._table.set_sort_order(cols, ascending=asc, nulls_first=nf)

    def __enter__(self) -> "ReplaceSortOrder":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()

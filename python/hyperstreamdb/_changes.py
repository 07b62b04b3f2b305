"""Row-level changes: ``Table.delete``, ``update``, ``upsert`` and ``merge``.

Each is one atomic commit made by the C core's ``hs_table_change_rows``
(src/query/rowdelta.c): the live rows matching filters are deleted and new
rows appended, in one snapshot. How deletes are written follows the table's
Iceberg properties ``write.delete.mode`` / ``write.update.mode`` /
``write.merge.mode``: ``merge-on-read`` (the default: position delete files
in format v2 tables, deletion vectors in v3) or ``copy-on-write`` (the
touched data files are rewritten).

Rows are found by the same scan every read uses (scalar indexes narrow it,
the filter is always evaluated on the rows). An update or upsert reads the
rows it replaces from the snapshot it commits on; if another writer commits
in between, the change is run again on the new snapshot (up to
``_ATTEMPTS`` times), then :class:`~hyperstreamdb.CommitConflictError`.
Upserts and merges match keys in C in one pass (:meth:`MergeBuilder._by_key`);
only a v3 merge that updates with ``where`` or deletes by source reads the
matched rows here, to keep their ``_row_id``.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _core
from ._core import InvalidArgumentError, SchemaError
from ._filters import filter_arg

__all__ = ["ChangeMethods", "MergeBuilder", "MergeResult", "UpsertResult"]

_ATTEMPTS = 5
#: change_rows(append_select=): which key rows' source rows are appended
#: (HS_APPEND_MATCHED / HS_APPEND_UNMATCHED in include/hyperstream.h).
_APPEND_MATCHED, _APPEND_UNMATCHED = 1, 2
#: Keys per generated ``IN`` filter (a change takes several filters).
_KEYS_PER_FILTER = 1 << 20


@dataclass(frozen=True)
class UpsertResult:
    """What :meth:`Table.upsert` did (pyiceberg's names)."""
    rows_updated: int
    rows_inserted: int


@dataclass(frozen=True)
class MergeResult:
    """What :meth:`MergeBuilder.execute` did (LanceDB's names)."""
    num_updated_rows: int
    num_inserted_rows: int
    num_deleted_rows: int


# ------------------------------------------------------------ key filters


def _quote_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(v: Any, t: pa.DataType) -> str:
    """One key value as a filter literal of column type `t`."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InvalidArgumentError(f"a key value {v!r} (NaN or infinite) cannot be matched; "
                                       "use finite key values")
        return repr(v)
    if isinstance(v, _decimal.Decimal):
        return str(v)
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, _dt.datetime):
        return "TIMESTAMP '" + v.strftime("%Y-%m-%d %H:%M:%S.%f") + "'"
    if isinstance(v, _dt.date):
        return "DATE '" + v.isoformat() + "'"
    raise InvalidArgumentError(f"key values of type {t} cannot be matched yet (use integer, "
                               "string, boolean, decimal, date or timestamp keys)")


def _key_filters(keys: pa.Table, on: Sequence[str]) -> List[str]:
    """Filters matching the rows whose `on` columns equal a row of `keys`
    (rows with a NULL key match nothing, as in SQL)."""
    cols = [keys.column(c) for c in on]
    valid = None
    for c in cols:
        nn = pc.is_valid(c)
        valid = nn if valid is None else pc.and_(valid, nn)
    if valid is not None and keys.num_rows:
        keys = keys.filter(valid)
    out: List[str] = []
    n = keys.num_rows
    if len(on) == 1:
        name, t = _quote_name(on[0]), keys.schema.field(on[0]).type
        vals = keys.column(on[0]).to_pylist()
        for i in range(0, n, _KEYS_PER_FILTER):
            out.append(f"{name} IN (" + ", ".join(_literal(v, t) for v in vals[i:i + _KEYS_PER_FILTER])
                       + ")")
        return out
    names = [_quote_name(c) for c in on]
    types = [keys.schema.field(c).type for c in on]
    rows = list(zip(*(keys.column(c).to_pylist() for c in on)))
    for i in range(0, n, _KEYS_PER_FILTER):
        out.append(" OR ".join(
            "(" + " AND ".join(f"{nm} = {_literal(v, t)}" for nm, v, t in zip(names, r, types)) + ")"
            for r in rows[i:i + _KEYS_PER_FILTER]))
    return out


def _key_column(t: pa.Table, on: Sequence[str]) -> pa.Array:
    """One comparable value per row for the `on` columns."""
    if len(on) == 1:
        return t.column(on[0]).combine_chunks()
    return pa.array([repr(r) for r in zip(*(t.column(c).to_pylist() for c in on))],
                    type=pa.string())


_ROW_ID = "_row_id"
_LAST_SEQ = "_last_updated_sequence_number"


def _with_lineage(rows: pa.Table, row_ids: pa.Array) -> pa.Table:
    """v3 row lineage (Iceberg spec): rows an update rewrites keep their
    ``_row_id`` and get a NULL ``_last_updated_sequence_number``, so that
    they inherit the update's sequence number (src/table/lineage.h)."""
    rows = rows.append_column(pa.field(_ROW_ID, pa.int64()), row_ids.cast(pa.int64()))
    return rows.append_column(pa.field(_LAST_SEQ, pa.int64()), pa.nulls(rows.num_rows, pa.int64()))


def _check_on(table_schema: pa.Schema, source: pa.Table, on: Any) -> List[str]:
    cols = [on] if isinstance(on, str) else list(on or [])
    if not cols:
        raise InvalidArgumentError("on: name at least one key column")
    for c in cols:
        if c not in table_schema.names:
            raise SchemaError(f"on: the table has no column {c!r} (columns: "
                              f"{', '.join(table_schema.names)})")
        if c not in source.schema.names:
            raise SchemaError(f"on: the source data has no column {c!r} (columns: "
                              f"{', '.join(source.schema.names)})")
    return cols


def _distinct(col: pa.ChunkedArray) -> bool:
    """Whether the non-NULL values of one key column are all different.
    Integer-family keys (ints, dates, times, timestamps, durations) are
    sorted by numpy and neighbours compared: 100K int64 keys 0.5 ms, where
    pyarrow's ``unique`` hash kernel takes 15 ms. Others: ``unique``."""
    t = col.type
    if col.null_count == 0 and (pa.types.is_integer(t) or pa.types.is_date(t)
                                or pa.types.is_time(t) or pa.types.is_timestamp(t)
                                or pa.types.is_duration(t)):
        a = np.sort(col.to_numpy())
        return not bool((a[1:] == a[:-1]).any())
    return len(pc.unique(col)) == len(col)


def _check_unique(source: pa.Table, on: Sequence[str]) -> None:
    """Refuse a source whose non-NULL keys repeat (rows with a NULL in the
    key match nothing, as in SQL: any number of them is inserted)."""
    valid = None
    for c in on:
        nn = pc.is_valid(source.column(c))
        valid = nn if valid is None else pc.and_(valid, nn)
    if valid is not None and source.num_rows and not pc.all(valid).as_py():
        source = source.filter(valid)
    if source.num_rows == 0:
        return
    if len(on) == 1 and _distinct(source.column(on[0])):
        return  # much cheaper than the grouping below, needed for the message
    counts = source.select(list(on)).group_by(list(on)).aggregate([([], "count_all")])
    dup = counts.filter(pc.greater(counts.column("count_all"), 1))
    if dup.num_rows:
        first = {c: dup.column(c)[0].as_py() for c in on}
        raise InvalidArgumentError(
            f"the source has {dup.num_rows} key(s) on {list(on)} that occur more than once "
            f"(first: {first}, {dup.column('count_all')[0].as_py()} times); a key may match "
            "one source row only: deduplicate the source first")


# ------------------------------------------------------------ the methods


class _Latest:
    """change_rows kwargs decided on whatever snapshot the commit begins on
    (:meth:`ChangeMethods._change`)."""

    def __init__(self, kw: Dict[str, Any]) -> None:
        self.kw = kw


class ChangeMethods:
    """Mixed into :class:`hyperstreamdb.Table`."""

    def _change(self, what: str, mode: str,
                make: "Callable[[Optional[int]], Dict[str, Any]] | _Latest") -> Dict[str, Any]:
        """Run ``make(snapshot_id) -> change_rows kwargs`` and commit it,
        again on a newer snapshot when another writer got in between.

        ``make`` may be a :class:`_Latest` instead: change_rows kwargs that
        read nothing of the table (deletes by filter, upserts by key), so
        the change is decided inside the commit on the snapshot it begins
        on, without a refresh here first."""
        last: Optional[Exception] = None
        conflict = _core.CommitConflictError
        pinned = not isinstance(make, _Latest)
        for attempt in range(_ATTEMPTS):
            handle = self._handle  # type: ignore[attr-defined]
            if pinned or attempt or handle is None:
                handle = self._require()  # type: ignore[attr-defined]  # refreshes
            sid = handle.current_snapshot_id if pinned else None
            kw = make(sid) if pinned else make.kw  # type: ignore[union-attr,operator]
            try:
                r = handle.change_rows(snapshot_id=sid, mode_property=mode, what=what, **kw)
            except conflict as e:
                last = e
                continue
            self._vs_cache = None  # type: ignore[attr-defined]
            return r
        assert last is not None
        raise last

    def delete(self, filter: Optional[str] = None) -> int:
        """Delete the rows matching ``filter`` (a SQL boolean expression;
        ``None``: every row) in one commit; return how many were deleted.

        Scalar indexes find the rows, the filter is re-checked on each.
        Written as the table's ``write.delete.mode`` says (merge-on-read by
        default: position deletes in v2, deletion vectors in v3). Deleted
        rows disappear from every read path (scans, filters, vector search,
        ``len``); the snapshot before the delete still reads them.
        """
        filt = filter_arg(filter)
        if not self._load():  # type: ignore[attr-defined]
            return 0
        r = self._change("delete", "write.delete.mode", _Latest({"deletes": [filt]}))
        return int(r["rows_deleted"])

    def rewrite_position_deletes(self) -> int:
        """Merge, in one ``replace`` commit, the position delete files of
        every data file that has two or more applied into one file per
        partition (Iceberg's ``rewrite_position_delete_files``; a change
        past the table property ``hyperstream.delete.max-position-files``,
        default 4, does this for the files it deletes from). No row
        changes. Returns how many delete files were removed (0: nothing to
        merge, no commit). Format v2 tables only (a v3 table keeps one
        deletion vector per data file)."""
        if not self._load():  # type: ignore[attr-defined]
            return 0
        r = self._change("rewrite position deletes", "write.delete.mode",
                         _Latest({"merge_position_deletes": True}))
        return int(r["delete_files_removed"])

    def update(self, values: Optional[Mapping[str, Any]] = None, filter: Optional[str] = None,
               *, values_sql: Optional[Mapping[str, str]] = None) -> int:
        """Set columns of the rows matching ``filter`` (``None``: every row)
        in one commit; return how many rows were updated.

        ``values`` maps a column name to its new value: a Python value of
        the column's type (``None`` for NULL), or a callable given the
        matching rows as a :class:`pyarrow.Table` and returning the new
        column (an array of the same length), e.g.
        ``{"price": lambda rows: pc.multiply(rows["price"], 2)}``.
        ``values_sql`` (LanceDB's name) maps a column name to a SQL
        expression over the row's columns, evaluated by the SQL engine on
        the rows as they were before the update (as in SQL's ``UPDATE ...
        SET``): ``{"price": "price * 1.1", "name": "upper(name)"}``; the
        result is cast to the column's type. A column may appear in only
        one of the two. Written as ``write.update.mode`` says
        (merge-on-read by default: the old rows deleted, the new ones
        appended).
        """
        filt = filter_arg(filter)
        values = {} if values is None else values
        values_sql = {} if values_sql is None else values_sql
        if not isinstance(values, Mapping) or not isinstance(values_sql, Mapping) \
                or not (values or values_sql):
            raise InvalidArgumentError("update: values (column -> value) or values_sql "
                                       "(column -> SQL expression) must be a non-empty dict")
        both = sorted(set(values) & set(values_sql))
        if both:
            raise InvalidArgumentError(f"update: {both[0]!r} is in both values and values_sql")
        for c, e in values_sql.items():
            if not isinstance(e, str) or not e.strip():
                raise InvalidArgumentError(f"update: values_sql[{c!r}] must be a SQL expression "
                                           f"string, not {e!r}")
        schema = self.schema  # type: ignore[attr-defined]
        for c in list(values) + list(values_sql):
            if c not in schema.names:
                raise SchemaError(f"update: the table has no column {c!r} (columns: "
                                  f"{', '.join(schema.names)})")
        if values_sql:  # bad SQL fails before anything is read or written
            _sql_values(pa.schema(list(schema)).empty_table(), values_sql)

        def make(sid: Optional[int]) -> Dict[str, Any]:
            if sid is None:
                return {"deletes": [], "appends": []}
            lineage = self.format_version >= 3  # type: ignore[attr-defined]
            cols = list(schema.names) + [_ROW_ID] if lineage else None
            rows = self.to_arrow(filter=filt, snapshot_id=sid,  # type: ignore[attr-defined]
                                 columns=cols)
            if rows.num_rows == 0:
                return {"deletes": [], "appends": []}
            row_ids = None
            if lineage:
                row_ids = rows.column(_ROW_ID).combine_chunks()
                rows = rows.drop_columns([_ROW_ID])
            computed = _sql_values(rows, values_sql) if values_sql else {}
            for c, arr in computed.items():
                rows = rows.set_column(rows.schema.get_field_index(c), rows.schema.field(c), arr)
            for c, v in values.items():
                i = rows.schema.get_field_index(c)
                t = rows.schema.field(c).type
                if callable(v):
                    arr = v(rows)
                    if isinstance(arr, pa.ChunkedArray):
                        arr = arr.combine_chunks()
                    if not isinstance(arr, pa.Array):
                        arr = pa.array(arr)
                    if len(arr) != rows.num_rows:
                        raise InvalidArgumentError(
                            f"update: the callable for {c!r} returned {len(arr)} values for "
                            f"{rows.num_rows} rows")
                    arr = arr.cast(t)
                else:
                    if isinstance(v, float) and not (pa.types.is_floating(t)
                                                     or pa.types.is_decimal(t)):
                        # pyarrow truncates floats into integer and date columns
                        raise SchemaError(f"update: {v!r} is not a value of column {c!r} "
                                          f"({t}): a float for a {t} column")
                    try:
                        arr = pa.array([v] * rows.num_rows, type=t)
                    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
                        raise SchemaError(f"update: {v!r} is not a value of column {c!r} "
                                          f"({t}): {e}") from None
                rows = rows.set_column(i, rows.schema.field(c), arr)
            if row_ids is not None:
                rows = _with_lineage(rows, row_ids)
            return {"deletes": [filt], "appends": [rows]}

        r = self._change("update", "write.update.mode", make)
        return int(r["rows_deleted"])

    def upsert(self, data: Any, on: Any) -> UpsertResult:
        """Insert ``data``'s rows, replacing the table's rows whose ``on``
        columns (one name or a list) equal theirs, in one commit.

        Source keys must be unique (else :class:`InvalidArgumentError`,
        nothing written); source rows with a NULL key are inserted. Returns
        how many rows replaced existing ones and how many were new.
        """
        return self.merge(data, on).when_matched_update_all().when_not_matched_insert_all() \
            ._upsert()

    def merge(self, source: Any, on: Any) -> "MergeBuilder":
        """A merge of ``source`` into the table on key columns ``on``, in
        LanceDB's shape::

            t.merge(new, on=["id"]).when_matched_update_all() \\
                .when_not_matched_insert_all() \\
                .when_not_matched_by_source_delete("day < '2024-01-01'").execute()
        """
        return MergeBuilder(self, source, on)


def _sql_values(rows: pa.Table, exprs: Mapping[str, str]) -> Dict[str, pa.Array]:
    """``exprs`` (column -> SQL expression) evaluated over ``rows`` in one
    statement, each result cast to its column's type, in row order."""
    from ._sql import Session, SqlError

    pos = "__hs_update_row"
    while pos in rows.schema.names:
        pos += "_"
    data = rows.append_column(pos, pa.array(range(rows.num_rows), pa.int64()))
    starts = []
    q = "SELECT "
    for i, (c, e) in enumerate(exprs.items()):
        q += ", " if i else ""
        q += "("
        starts.append((len(q), c, e))
        q += e + f") AS c{i}"
    q += f' FROM "rows" ORDER BY "{pos}"'
    try:
        with Session() as s:
            s.register("rows", data)
            out = s.sql(q).to_arrow()
    except SqlError as err:
        p = getattr(err, "position", None)
        for start, c, e in reversed(starts):
            if p is not None and p - 1 >= start:
                raise SqlError(f"update: values_sql[{c!r}] = {e!r}: {err}") from None
        raise SqlError(f"update: values_sql: {err}") from None
    res: Dict[str, pa.Array] = {}
    for i, c in enumerate(exprs):
        t = rows.schema.field(c).type
        arr = out.column(i).combine_chunks()
        try:
            res[c] = arr.cast(t)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
            raise SchemaError(f"update: values_sql[{c!r}] = {exprs[c]!r} gives {arr.type}, which "
                              f"does not fit column {c!r} ({t}): {e}") from None
    return res


class MergeBuilder:
    """Built by :meth:`Table.merge`; nothing happens until :meth:`execute`."""

    def __init__(self, table: Any, source: Any, on: Any) -> None:
        from .table import _inferred, _as_reader  # the write path's conversions
        exists = table._load()
        target = table.schema if exists else None
        src = _inferred(source, target)
        if src is None:
            src = _as_reader(source).read_all()
        self._table = table
        self._source = src
        self._on = _check_on(table.schema if exists else src.schema, src, on)
        self._update = False
        self._update_where: Optional[str] = None
        self._insert = False
        self._delete = False
        self._delete_filter: Optional[str] = None

    def __repr__(self) -> str:
        parts = [f"on={self._on}", f"source_rows={self._source.num_rows}"]
        if self._update:
            parts.append("when_matched_update_all" +
                         (f"({self._update_where!r})" if self._update_where else ""))
        if self._insert:
            parts.append("when_not_matched_insert_all")
        if self._delete:
            parts.append("when_not_matched_by_source_delete" +
                         (f"({self._delete_filter!r})" if self._delete_filter else ""))
        return "<MergeBuilder " + " ".join(parts) + ">"

    def when_matched_update_all(self, where: Optional[str] = None) -> "MergeBuilder":
        """Replace each matched table row by its source row (only where the
        table row satisfies ``where``, when given)."""
        self._update, self._update_where = True, filter_arg(where, "where")
        return self

    def when_not_matched_insert_all(self) -> "MergeBuilder":
        """Insert the source rows whose key matches no table row."""
        self._insert = True
        return self

    def when_not_matched_by_source_delete(self, filter: Optional[str] = None) -> "MergeBuilder":
        """Delete the table rows whose key matches no source row (only those
        satisfying ``filter``, when given)."""
        self._delete, self._delete_filter = True, filter_arg(filter)
        return self

    def _plan(self, sid: Optional[int]) -> Dict[str, Any]:
        t, src, on = self._table, self._source, self._on
        if self._update:
            _check_unique(src, on)
        keyf = _key_filters(src, on)
        deletes: List[Optional[str]] = []
        appends: List[pa.Table] = []
        src_keys = _key_column(src, on)
        matched = pa.array([False] * src.num_rows)
        counts = {"updated": 0, "inserted": 0, "replaced": 0}
        if sid is not None and keyf:
            conds = keyf if not (self._update and self._update_where) else \
                [f"({k}) AND ({self._update_where})" for k in keyf]
            lineage = self._update and t.format_version >= 3
            hcols = list(on) + [_ROW_ID] if lineage else on
            hit = pa.concat_tables([t.to_arrow(filter=f, columns=hcols, snapshot_id=sid)
                                    for f in keyf])
            matched = pc.is_in(src_keys, value_set=_key_column(hit, on)) if hit.num_rows else \
                matched
            if self._update:
                if self._update_where:
                    hit_w = pa.concat_tables([t.to_arrow(filter=f, columns=on, snapshot_id=sid)
                                              for f in conds])
                    upd = pc.is_in(src_keys, value_set=_key_column(hit_w, on)) \
                        if hit_w.num_rows else pa.array([False] * src.num_rows)
                    counts["replaced"] = hit_w.num_rows
                else:
                    upd = matched
                    counts["replaced"] = hit.num_rows
                deletes.extend(conds)
                rows = src.filter(upd)
                counts["updated"] = rows.num_rows
                if rows.num_rows and lineage:
                    # Each replaced row's _row_id, found by its key (unique in
                    # the source; the first table row with the key).
                    idx = pc.index_in(_key_column(rows, on), value_set=_key_column(hit, on))
                    rows = _with_lineage(rows, pc.take(hit.column(_ROW_ID).combine_chunks(), idx))
                if rows.num_rows:
                    appends.append(rows)
        if self._insert:
            rows = src.filter(pc.invert(matched))
            counts["inserted"] = rows.num_rows
            if rows.num_rows:
                appends.append(rows)
        if self._delete and sid is not None:
            null_key = " OR ".join(f"{_quote_name(c)} IS NULL" for c in on)
            if keyf:
                nm = "NOT (" + " OR ".join(f"({k})" for k in keyf) + f") OR {null_key}"
            else:
                nm = "TRUE"
            deletes.append(f"({nm}) AND ({self._delete_filter})" if self._delete_filter else nm)
        self._counts = counts
        return {"deletes": deletes, "appends": appends}

    def execute(self) -> MergeResult:
        """Run the merge as one commit."""
        t = self._table
        if not t._load():
            if self._insert and self._source.num_rows:
                if self._update:  # an upsert: its keys must be unique even into no table
                    _check_unique(self._source, self._on)
                t.write(self._source)
                return MergeResult(0, self._source.num_rows, 0)
            return MergeResult(0, 0, 0)
        if self._update and t.format_version >= 3 and (self._update_where or self._delete):
            # Reads the matched rows to carry their _row_id (v3 row lineage)
            # into the updated rows; the key path replaces them under new ids.
            r = t._change("merge", "write.merge.mode", self._plan)
            c = self._counts
            return MergeResult(c["updated"], c["inserted"], int(r["rows_deleted"]) - c["replaced"])
        return self._by_key()

    def _by_key(self) -> MergeResult:
        """The merge in one pass in C (src/query/rowdelta.c): each data
        file's key columns are matched against a hash set of the source
        keys; matched rows are deleted (with ``where``: those satisfying it,
        found by a filter scan of the matched files), unmatched rows too
        when deleting by source (with its filter); the source rows to append
        (matched ones for the update, unmatched ones for the insert) are
        picked by the same pass's per-key answers."""
        t, src, on = self._table, self._source, self._on
        if self._update:
            _check_unique(src, on)
        schema = t.schema
        keys = src.select(on).cast(pa.schema([pa.field(c, schema.field(c).type) for c in on]))
        sel = (_APPEND_MATCHED if self._update else 0) | (_APPEND_UNMATCHED if self._insert else 0)
        kw: Dict[str, Any] = {"keys": keys, "key_columns": list(on),
                              "appends": [src] if src.num_rows and sel else []}
        if not self._update:
            kw["keep_matched"] = True
        if self._update_where:
            kw["key_where"] = self._update_where
        if self._delete:
            kw["delete_unmatched"] = True
            if self._delete_filter:
                kw["unmatched_filter"] = self._delete_filter
        if kw["appends"] and (sel != _APPEND_MATCHED | _APPEND_UNMATCHED or self._update_where):
            kw["append_select"] = sel
        r = t._change("merge", "write.merge.mode", _Latest(kw))
        hit = r.get("key_matched") or b""
        hit_w = (r.get("key_matched_where") or b"") if self._update_where else hit
        matched = hit.count(1)
        updated = hit_w.count(1) if self._update else 0
        inserted = src.num_rows - matched if self._insert else 0
        return MergeResult(updated, inserted,
                           int(r["rows_deleted"]) - int(r.get("rows_matched_deleted", 0)))

    def _upsert(self) -> UpsertResult:
        m = self.execute()
        return UpsertResult(m.num_updated_rows, m.num_inserted_rows)

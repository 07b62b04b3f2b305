"""Type stubs for hyperstreamdb._core, the C extension module.

Use :mod:`hyperstreamdb.parquet` rather than these functions directly: it
accepts more input kinds and raises HyperStreamError subclasses for failures
met while a stream is decoded.
"""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

_Path = Union[str, bytes, "os.PathLike[str]"]
_Scalar = Union[int, float, str, bytes]

__version__: str

class HyperStreamError(Exception):
    """Base class of every error raised by HyperStreamDB."""

    #: hs_status_str() of the C status, e.g. "corrupt data", "not found".
    status: str

class CorruptFileError(HyperStreamError):
    """The bytes of a file violate its format."""

class UnsupportedError(HyperStreamError):
    """Valid input using a feature not implemented."""

class SchemaError(HyperStreamError):
    """Data does not fit the expected schema."""

class InternalError(HyperStreamError):
    """An invariant did not hold: a bug."""

class CommitConflictError(HyperStreamError):
    """A concurrent commit changed what this commit changes; nothing was committed."""

class NotFoundError(HyperStreamError, FileNotFoundError):
    """A named file or column does not exist."""

class HSIOError(HyperStreamError, OSError):
    """The operating system refused a read or write."""

class InvalidArgumentError(HyperStreamError, ValueError):
    """An argument is unusable."""

class ResourceError(HyperStreamError, MemoryError):
    """Allocation failed or a size limit was exceeded."""

class ParquetStream:
    """A one-shot stream of record batches read from a Parquet file."""

    @property
    def path(self) -> str: ...
    @property
    def num_rows(self) -> int:
        """Rows in the file (not only those selected)."""
    @property
    def num_row_groups(self) -> int: ...
    @property
    def row_groups_selected(self) -> int:
        """Row groups this stream reads after pruning by filters."""
    @property
    def batches_read(self) -> int:
        """Batches decoded through _read_next (not through an exported capsule)."""
    @property
    def state(self) -> str:
        """'open', 'exported', 'exhausted', 'failed' or 'closed'."""
    @property
    def consumed(self) -> bool:
        """True in every state but 'open'."""
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object:
        """Move the rest of the stream into a PyCapsule 'arrow_array_stream' (once)."""
    def _schema_capsule(self) -> object:
        """The batches' struct schema as a PyCapsule 'arrow_schema' (a fresh copy)."""
    def _read_next(self) -> Optional[Tuple[object, object]]:
        """The next batch as ('arrow_schema', 'arrow_array') capsules; None at the end."""
    def close(self) -> None:
        """Release the stream and its file (idempotent)."""

class ArrowSchemaHolder:
    """An Arrow schema; pass it to pyarrow.schema()."""

    def __arrow_c_schema__(self) -> object: ...

def read_parquet(
    path: _Path,
    columns: Optional[Sequence[str]] = None,
    rows: Optional[Sequence[int]] = None,
    batch_rows: int = 0,
    filters: Optional[Sequence[Tuple[str, str, _Scalar]]] = None,
) -> ParquetStream: ...
def parquet_schema(path: _Path) -> ArrowSchemaHolder: ...
def parquet_metadata(path: _Path) -> Dict[str, int]:
    """{'num_rows': ..., 'num_row_groups': ...} from the footer."""
def inspect(path: _Path, json: bool = False) -> str: ...
def _parquet_pages_gathered() -> int: ...
def write_parquet(
    path: _Path,
    data: Any,
    *,
    compression: Optional[str] = "zstd",
    compression_level: Optional[int] = None,
    row_group_size: int = 1048576,
    data_page_size: int = 1048576,
    data_page_version: Union[str, int] = "1.0",
    use_dictionary: bool = True,
    dictionary_pagesize_limit: int = 1048576,
    column_encoding: Optional[Mapping[str, str]] = None,
    write_statistics: bool = True,
    write_page_index: bool = True,
    write_page_checksum: bool = False,
    metadata: Optional[Mapping[Union[str, bytes], Union[str, bytes]]] = None,
    created_by: Optional[str] = None,
    delta_fallback: bool = False,
    compress_min_saving_pct: int = 0,
) -> None: ...

# ------------------------------------------------ tables (python/src/table.c)

class TableStream:
    """A one-shot stream of the record batches of one table scan."""

    batches_read: int
    @property
    def consumed(self) -> bool: ...
    @property
    def state(self) -> str:
        """'open', 'exported', 'exhausted', 'failed' or 'closed'."""
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...
    def _schema_capsule(self) -> Any: ...
    def _read_next(self) -> Optional[Tuple[Any, Any]]: ...
    def close(self) -> None: ...

class TableHandle:
    """An open Iceberg table (use hyperstreamdb.Table). Calls are serialized
    by a per-handle lock taken with the GIL released."""

    uri: str
    @property
    def current_snapshot_id(self) -> Optional[int]: ...
    @property
    def metadata_location(self) -> str: ...
    @property
    def version(self) -> int: ...
    def append(self, data: Any, keep: bool = False) -> Any: ...
    def scan(
        self,
        snapshot_id: Optional[int] = None,
        columns: Optional[Sequence[str]] = None,
        filter: Optional[str] = None,
        limit: int = -1,
        batch_rows: int = 0,
    ) -> TableStream: ...
    def schema(self) -> Any: ...
    def snapshots(self) -> List[Dict[str, Any]]: ...
    def count_rows(self, snapshot_id: Optional[int] = ...) -> Dict[str, int]: ...
    def change_rows(self, snapshot_id: Optional[int] = ..., deletes: Sequence[Optional[str]] = ...,
                    appends: Sequence[Any] = ..., mode_property: Optional[str] = ...,
                    what: str = ..., keys: Any = ...,
                    key_columns: Optional[Sequence[str]] = ..., keep_matched: bool = ...,
                    key_where: Optional[str] = ..., delete_unmatched: bool = ...,
                    unmatched_filter: Optional[str] = ...,
                    append_select: int = ...,
                    merge_position_deletes: bool = ...) -> Dict[str, Any]: ...
    def refresh(self) -> None: ...
    def set_staleness_ms(self, ms: int) -> None: ...
    def snapshot_at(self, timestamp_ms: int) -> int: ...
    def ref_snapshot(self, name: str) -> int: ...
    def refs(self) -> List[Dict[str, Any]]: ...
    def history(self) -> List[Dict[str, Any]]: ...
    def rollback_to_snapshot(self, snapshot_id: int) -> None: ...
    def create_ref(
        self,
        name: str,
        snapshot_id: Optional[int] = None,
        branch: bool = False,
        max_ref_age_ms: int = -1,
    ) -> None: ...
    def set_partition_spec(self, fields: Sequence[Tuple[str, str, Optional[str]]]) -> None: ...
    def set_sort_order(
        self,
        columns: Sequence[str],
        ascending: Optional[Sequence[bool]] = None,
        nulls_first: Optional[Sequence[bool]] = None,
    ) -> None: ...

def table_open(uri: _Path) -> TableHandle: ...
def store_configure(prefix: str, options: Dict[str, Union[str, bool, int]]) -> None: ...
def store_get(uri: str) -> bytes: ...
def io_stats(reset: bool = False) -> Dict[str, Any]: ...
# catalog.c: Iceberg REST catalogs (use hyperstreamdb.Catalog / hdb.connect("rest://...")).
def catalog_connect(uri: str, options: Dict[str, str]) -> None: ...
def catalog_list_namespaces(uri: str, namespace: Optional[str] = None) -> List[str]: ...
def catalog_list_tables(uri: str, namespace: str) -> List[str]: ...
def catalog_create_namespace(uri: str, namespace: str) -> None: ...
def catalog_drop_namespace(uri: str, namespace: str) -> None: ...
def catalog_drop_table(uri: str, identifier: str) -> None: ...
def catalog_purge_table(uri: str, identifier: str) -> None: ...
def table_create(
    uri: _Path,
    schema: Any,
    format_version: int = 2,
    properties: Optional[Mapping[str, str]] = None,
) -> TableHandle: ...

# vector.c: distance kernels (use hyperstreamdb.vector, which shapes the arrays).
def simd_level() -> str: ...
def _distance_batch(
    metric: str, kind: str, query: Any, rows: Any, n: int, dim: int, out: Any
) -> None: ...
def _distance_sparse(
    metric: str, a_idx: Any, a_val: Any, a_dim: int, b_idx: Any, b_val: Any, b_dim: int
) -> float: ...

# vindex.c: the raw vector index (use hyperstreamdb.vector.VectorIndex).
def _vindex_build(
    vectors: Any, n: int, dim: int, metric: str, m: int, ef_construction: int,
    partitions: int, seed: int, threads: int, quantizer: str, pq_m: int) -> bytes: ...
def _vindex_build_open(
    vectors: Any, n: int, dim: int, metric: str, m: int, ef_construction: int,
    partitions: int, seed: int, threads: int, quantizer: str, pq_m: int) -> "_VectorIndex": ...

class _VectorIndex:
    def __init__(self, data: bytes) -> None: ...
    # allowed: None, uint32 / int64 row ids or a bool mask over the rows;
    # words: None or the row bitset as uint64 (AllowedRows), used when allowed is None.
    def search(self, queries: Any, nq: int, k: int, ef_search: int, nprobe: int,
               allowed: Any, ids: Any, distances: Any, threads: int,
               words: Any = None) -> None: ...
    def validate(self) -> None: ...
    def info(self) -> Dict[str, Any]: ...
    def to_bytes(self) -> bytes: ...

# indexes.c: scalar index configuration, builds and explain (use Table.add_index etc.).
def index_add(uri: _Path, column: str, kind: str, params: Optional[str] = None) -> None: ...
def index_drop(uri: _Path, column: str) -> None: ...
def index_list(uri: _Path) -> List[Dict[str, Any]]: ...
def index_add_many(uri: _Path, columns: List[str], kind: str, params: Optional[str] = None
                   ) -> None: ...
def index_build(
    uri: _Path,
    columns: Optional[List[str]] = None,
    progress: Any = None,
    threads: int = 0,
    appended: Optional[List[Any]] = None,
) -> int: ...
def expire_snapshots(uri: _Path, older_than_ms: int, retain_last: int = 1, dry_run: bool = False
                     ) -> Tuple[List[int], List[Tuple[str, int, int]]]: ...
ORPHAN_MIN_AGE_MS: int
def remove_orphan_files(uri: _Path, older_than_ms: int, dry_run: bool = False,
                        force: bool = False) -> List[Tuple[str, int, int]]: ...
def table_create_defined(
    uri: _Path, schema: Any, format_version: int, properties: Dict[str, str],
    spec: List[Tuple[str, str, Optional[str]]], sort_columns: List[str],
    ascending: List[bool], nulls_first: List[bool],
) -> None: ...
def table_update_schema(
    uri: _Path,
    changes: List[Tuple[int, str, Optional[str], Any, Optional[str], Optional[str], bool]],
) -> None: ...
def explain(uri: _Path, filter: Optional[str] = None, snapshot_id: Optional[int] = None) -> Dict[str, int]: ...
def validate_indexes(uri: _Path, snapshot_id: Optional[int] = None) -> Tuple[List[Dict[str, str]], int]: ...
def _index_rejections() -> Tuple[int, str]: ...

# vsearch.c: vector search over tables (use Table.search / Query.vector_search).
def vector_search(
    uri: _Path,
    column: str,
    queries: Any,
    k: int = 10,
    metric: Optional[str] = None,
    filter: Optional[str] = None,
    columns: Optional[List[str]] = None,
    snapshot_id: int = -1,
    ef_search: int = 0,
    nprobe: int = 0,
    batch: bool = False,
    exact: bool = False,
    cache: Any = None,
    as_batch: bool = False,
    handle: Any = None,  # a TableHandle whose open table is searched when free
) -> Tuple[Any, Dict[str, int]]: ...
def search_cache(staleness_ms: int = 0) -> Any: ...
def sql_schema_cache() -> Any: ...  # for SqlStream._read_all, one per Session
def build_vector_indexes(
    uri: _Path,
    column: str,
    metric: Optional[str] = None,
    m: int = 0,
    ef_construction: int = 0,
    partitions: int = 0,
    quantizer: Optional[str] = None,
    pq_m: int = 0,
    threads: int = 0,
) -> int: ...
def compute_statistics(uri: _Path, columns: Optional[List[str]] = None) -> Dict[str, Any]: ...
def compact(uri: _Path, target_file_size_bytes: int = 0, filter: Optional[str] = None,
            min_input_files: int = 0, keep: bool = False) -> Tuple[Dict[str, Any], List[Any]]: ...

class SqlError(InvalidArgumentError):
    """An error in a SQL statement; ``position`` is the 1-based character it marks."""

    position: int

class SqlStream:
    """A one-shot stream of the record batches of one SQL statement's result."""

    batches_read: int
    @property
    def consumed(self) -> bool: ...
    @property
    def state(self) -> str: ...
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...
    def _schema_capsule(self) -> Any: ...
    def _read_next(self) -> Optional[Tuple[Any, Any]]: ...
    def _next_batch(self) -> Optional[Tuple[Any, Any]]:
        """Run to the next batch: (schema, array) capsules or None at the end;
        SQL errors raise SqlError, Ctrl-C cancels and raises KeyboardInterrupt."""
    def _result_schema(self) -> Any:
        """The result's 'arrow_schema' capsule (SQL errors raise SqlError)."""
    def _read_all(self, cache: Any = None) -> Any:
        """Run to the end: an 'arrow_array_stream' capsule of every batch, or with
        a sql_schema_cache() and one batch (array capsule, address, pyarrow Schema)."""
    def close(self) -> None: ...

class SqlSession:
    """Relations by name and SQL statements over them (src/sql/)."""

    def __init__(self, root: Optional[str] = None) -> None: ...
    def register_table(self, name: str, uri: str) -> None: ...
    def register_stream(self, name: str, data: Any) -> None: ...
    def unregister(self, name: str) -> None: ...
    def execute(self, sql: str, params: Any = None) -> SqlStream: ...
    def cancel(self) -> None: ...
    def set_memory_limit(self, bytes: int) -> None: ...
    def close(self) -> None: ...

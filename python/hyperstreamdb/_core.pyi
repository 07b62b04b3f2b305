"""Type stubs for hyperstreamdb._core, the C extension module."""

import os
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

_Path = Union[str, bytes, "os.PathLike[str]"]

__version__: str

class HyperStreamError(Exception):
    status: str
class CorruptFileError(HyperStreamError): ...
class UnsupportedError(HyperStreamError): ...
class SchemaError(HyperStreamError): ...
class InternalError(HyperStreamError): ...
class NotFoundError(HyperStreamError, FileNotFoundError): ...
class HSIOError(HyperStreamError, OSError): ...
class InvalidArgumentError(HyperStreamError, ValueError): ...
class ResourceError(HyperStreamError, MemoryError): ...

class ParquetStream:
    """A one-shot stream of record batches read from a Parquet file."""

    path: str
    num_rows: int
    num_row_groups: int
    row_groups_selected: int
    consumed: bool
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...
    def close(self) -> None: ...

class ArrowSchemaHolder:
    def __arrow_c_schema__(self) -> object: ...

def read_parquet(
    path: _Path,
    columns: Optional[Sequence[str]] = None,
    rows: Optional[Sequence[int]] = None,
    batch_rows: int = 0,
    filters: Optional[Sequence[Tuple[str, str, Any]]] = None,
) -> ParquetStream: ...
def parquet_schema(path: _Path) -> ArrowSchemaHolder: ...
def parquet_metadata(path: _Path) -> Dict[str, int]: ...
def inspect(path: _Path, json: bool = False) -> str: ...
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
) -> None: ...

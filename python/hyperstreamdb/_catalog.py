"""Iceberg REST catalogs: :class:`Catalog` (``hdb.connect("rest://host:port", ...)``).

A catalog table is a :class:`~hyperstreamdb.Table` whose URI is
``"rest://host:port#namespace.table"``: it reads, appends, searches, builds
and registers indexes and changes rows exactly as a table opened by path,
but every commit goes to the catalog (``POST .../tables/{t}`` with the
spec's ``requirements`` and ``updates``; a concurrent commit by another
engine is a 409, retried on the reloaded metadata) and every refresh loads
the table from it. Data and manifest files are written under the table's
``location`` as the catalog gives it; the catalog writes the metadata files.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

from . import _core
from ._core import InvalidArgumentError


def _is_catalog_uri(uri: str) -> bool:
    return uri.startswith("rest://") or uri.startswith("rests://")


class Catalog:
    """A connected Iceberg REST catalog.

    Args:
        uri: ``"rest://host:port[/path]"`` (http) or ``"rests://..."`` (https).
        warehouse: the warehouse to ask ``GET /v1/config`` for.
        token: a bearer token.
        credential: ``"client_id:client_secret"``: a token is fetched with
            OAuth2 client credentials (``POST /v1/oauth/tokens``, or
            ``properties["oauth2-server-uri"]``) and renewed on a 401.
        storage_options: object-store options (as :class:`~hyperstreamdb.Table`
            takes them) for the catalog's table locations on S3: registered
            for each table's location as the catalog gives it, and checked at
            connect (on ``warehouse`` when it is an ``s3://`` location, else
            for every ``s3://`` location).
        properties: more catalog options: ``scope``, ``prefix``,
            ``oauth2_server_uri``, ``timeout_ms``, ``max_staleness_ms`` (reads
            within that many ms of the table object's last load or commit use
            what it holds instead of asking the catalog; default 0: every read
            asks; commits always start from the catalog's latest).

    Connecting fetches the token (with a credential) and the catalog's
    config, so a wrong credential or a server that is down fails here with
    the call, the HTTP status and the server's message.
    """

    def __init__(self, uri: str, warehouse: Optional[str] = None, token: Optional[str] = None,
                 credential: Optional[str] = None, storage_options: Optional[dict] = None,
                 **properties: Any) -> None:
        if not isinstance(uri, str) or not _is_catalog_uri(uri):
            raise InvalidArgumentError(f"{uri!r}: a catalog URI is rest://host:port or rests://...")
        if "#" in uri:
            raise InvalidArgumentError(f"{uri!r}: a catalog URI names no table ('#')")
        self._uri = uri.rstrip("/")
        opts = {str(k).replace("_", "-") if k == "oauth2_server_uri" else str(k): str(v)
                for k, v in properties.items()}
        if warehouse is not None:
            opts["warehouse"] = str(warehouse)
        if token is not None:
            opts["token"] = str(token)
        if credential is not None:
            opts["credential"] = str(credential)
        for k, v in (storage_options or {}).items():
            opts["storage." + str(k)] = str(v)
        _core.catalog_connect(self._uri, opts)

    @property
    def uri(self) -> str:
        """The catalog's URI, as connected."""
        return self._uri

    def table_uri(self, identifier: str) -> str:
        """The URI of table ``"namespace.table"`` (what :class:`Table` takes)."""
        if not isinstance(identifier, str) or "." not in identifier.strip("."):
            raise InvalidArgumentError(f"{identifier!r}: want \"namespace.table\"")
        return f"{self._uri}#{identifier}"

    # ---------------------------------------------------------- namespaces

    def list_namespaces(self, parent: Optional[str] = None) -> List[str]:
        """Namespaces (dotted names, ``"a.b"``) under ``parent`` (None: the top)."""
        return _core.catalog_list_namespaces(self._uri, parent)

    def create_namespace(self, namespace: str, exist_ok: bool = False) -> None:
        """Create ``namespace`` (:class:`~hyperstreamdb.CommitConflictError`
        when it exists, unless ``exist_ok``)."""
        try:
            _core.catalog_create_namespace(self._uri, namespace)
        except _core.CommitConflictError:
            if not exist_ok:
                raise

    def drop_namespace(self, namespace: str) -> None:
        """Drop an empty namespace."""
        _core.catalog_drop_namespace(self._uri, namespace)

    # -------------------------------------------------------------- tables

    def list_tables(self, namespace: str) -> List[str]:
        """The tables of ``namespace`` as ``"namespace.table"`` names."""
        return _core.catalog_list_tables(self._uri, namespace)

    def load_table(self, identifier: str, index_all: bool = False) -> Any:
        """The existing table ``"namespace.table"``
        (:class:`~hyperstreamdb.NotFoundError` naming the catalog's answer when
        there is none)."""
        from .table import Table

        uri = self.table_uri(identifier)
        t = Table(uri, index_all=index_all)
        t._handle = _core.table_open(uri) if t._handle is None else t._handle
        return t

    def create_table(self, identifier: str, schema: Any,
                     partition_spec: Optional[Sequence[Any]] = None,
                     sort_order: Optional[Sequence[Any]] = None, format_version: int = 2,
                     properties: Optional[dict] = None, exist_ok: bool = False,
                     index_all: bool = False) -> Any:
        """Create table ``"namespace.table"`` in the catalog with the pyarrow
        ``schema`` (and :meth:`Table.create`'s partition spec, sort order and
        properties); the catalog chooses its location."""
        from .table import Table

        return Table.create(self.table_uri(identifier), schema, partition_spec=partition_spec,
                            sort_order=sort_order, format_version=format_version,
                            properties=properties, exist_ok=exist_ok, index_all=index_all)

    def drop_table(self, identifier: str, purge: bool = False) -> None:
        """Drop ``"namespace.table"`` from the catalog (``purge``: ask it to
        delete the table's files too)."""
        if purge:
            _core.catalog_purge_table(self._uri, identifier)
        else:
            _core.catalog_drop_table(self._uri, identifier)

    def session(self, namespace: str) -> Any:
        """A SQL :class:`~hyperstreamdb.Session` with every table of
        ``namespace`` registered under its own name."""
        from ._sql import Session
        from .table import Table

        s = Session()
        for ident in self.list_tables(namespace):
            s.register(ident.rsplit(".", 1)[1], Table(self.table_uri(ident)))
        return s

    def sql(self, query: str, namespace: str, params: Any = None) -> Any:
        """Run SQL over the tables of ``namespace`` (see :meth:`session`)."""
        return self.session(namespace).sql(query, params)

    def __repr__(self) -> str:
        return f"<hyperstreamdb.Catalog {self._uri}>"

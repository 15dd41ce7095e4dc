"""The workspace store: collections, qrels and runs in DuckDB files.

Modules, lowest first: ``connection`` (the DuckDB connection's lifecycle, per-file writer lock,
one-line open errors), ``registry`` (a SQLite registry of token hashes that processes share),
``values`` (names, digests, findings and times: no cursor), ``tables`` (the schema and the SQL steps
run inside one transaction), ``ranked`` (the columnar cache of ranked runs: Arrow IPC files beside a
workspace file, memory-mapped, keyed by content digests), ``records`` (what a workspace lists and
raises), the parts of a workspace (``collections``, ``runs``, ``extras``, ``cached``, ``shared``),
``workspace`` (:class:`Workspace`, their facade: one file, every change one transaction), ``workspaces``
(:class:`WorkspaceRegistry`: private visitor workspaces behind tokens, shared read-only samples, TTL).
"""
from .connection import WorkspaceLocked
from .registry import Registry, token_hash
from .samples import Sample
from .workspace import (
    FILE_NAME,
    CollectionInfo,
    QrelsInfo,
    Quota,
    QuotaExceeded,
    ReadOnlyWorkspace,
    RunInfo,
    StoredInfo,
    Usage,
    Workspace,
    default_path,
)
from .workspaces import Access, Pristine, WorkspaceExpired, WorkspaceNotFound, WorkspaceRegistry, view_token_of

__all__ = ["FILE_NAME", "Access", "CollectionInfo", "Pristine", "QrelsInfo", "Quota", "QuotaExceeded",
           "ReadOnlyWorkspace", "Registry", "RunInfo", "Sample", "StoredInfo", "Usage", "Workspace", "WorkspaceExpired",
           "WorkspaceLocked", "WorkspaceNotFound", "WorkspaceRegistry", "default_path", "token_hash", "view_token_of"]

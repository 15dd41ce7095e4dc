"""The session's workspace and the operator's limits.

One :class:`metrics.store.WorkspaceRegistry` per server process opens the workspaces (``NDCG_LAB_MODE``):
in ``personal`` mode the one workspace of whoever runs the app; in ``shared`` mode every visitor's
own, reached by the token in the URL (``?ws=TOKEN``), with the sample collections shared read-only
beneath it; a visitor who only reads has none (:func:`pristine`): it is made at their first change.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import streamlit as st

import metrics
from metrics import settings as settings_module
from metrics import store
from ndcg_lab.ui.paths import SAMPLES

SAMPLE_COLLECTIONS = ("legal", "web")

SAMPLE_BASELINES = {"legal": "bm25"}
TOKEN_PARAM = "ws"


def app_arguments(argv=None) -> argparse.Namespace:
    """The app's own options, after ``--`` on the streamlit command line
    (``streamlit run app.py -- --workspace PATH``); anything else there is left alone."""
    parser = argparse.ArgumentParser(prog="app.py", add_help=False)
    parser.add_argument("--workspace", type=Path, default=None, help="the workspace file (DuckDB)")
    return parser.parse_known_args(sys.argv[1:] if argv is None else argv)[0]

def samples() -> list[store.Sample]:
    """The bundled sample collections, in the order the Data page offers them."""
    return [store.Sample(name, SAMPLES / name, SAMPLE_BASELINES.get(name)) for name in SAMPLE_COLLECTIONS]

def settings() -> settings_module.Settings:
    """The operator settings of this process (``metrics.settings.load``)."""
    return settings_module.load()

@st.cache_resource(show_spinner=False)
def _manager(config: settings_module.Settings) -> store.WorkspaceRegistry:
    return store.WorkspaceRegistry(config, samples=samples())

def manager() -> store.WorkspaceRegistry:
    """The one workspace manager of this process and these settings, shared by every session."""
    return _manager(settings())

def _session_access() -> store.Access | store.Pristine:
    """Shared mode: the workspace of this session's token (``?ws=`` in the URL). A first visit
    makes none: it reads the blank (:class:`metrics.store.Pristine`) until its first change, which
    creates the workspace and writes its token into the address. A token no workspace has, or an
    expired one, gets a page that says so and stops."""
    ss = st.session_state
    token = st.query_params.get(TOKEN_PARAM)
    pristine = ss.get("_pristine")
    if pristine is not None and pristine.access is not None and ss.get("_access") is not pristine.access:
        ss["_access"] = pristine.access      # created by a change in a rerun that did not finish
    access = ss.get("_access")
    if access is not None and token in (None, access.token):
        if token is None:               # a page switch drops the query: put the token back
            st.query_params[TOKEN_PARAM] = access.token
        return access
    if pristine is not None and pristine.access is None and not token:
        return pristine
    try:
        workspaces = manager()
    except metrics.MetricsError as exc:      # another server holds this home
        st.title("nDCG Lab")
        st.error(f"{exc.problem}.", icon=":material/lock:")
        st.write(exc.fix[0].upper() + exc.fix[1:] + ".")
        st.stop()
    ss.pop("_access", None)
    ss.pop("_pristine", None)
    ss.pop("collection", None)
    if not token:
        ss["_pristine"] = store.Pristine(workspaces.blank(), lambda: _created(workspaces))
        return ss["_pristine"]
    try:
        access = workspaces.open(token)
    except store.WorkspaceNotFound as exc:
        _no_workspace_page(exc)
    ss["_access"] = access
    st.query_params[TOKEN_PARAM] = access.token
    return access

def _created(workspaces: store.WorkspaceRegistry) -> store.Access:
    """The first change of a pristine session: its workspace, its token in the address and the
    session state (the session's collection and selection are kept)."""
    access = workspaces.create()
    st.session_state["_access"] = access
    st.query_params[TOKEN_PARAM] = access.token
    return access

def _no_workspace_page(exc: metrics.MetricsError) -> None:
    st.title("nDCG Lab")
    st.error(f"{exc.problem}. Nothing of any workspace is shown for this link.", icon=":material/lock:")
    if exc.fix:
        st.write(exc.fix[0].upper() + exc.fix[1:] + ".")
    st.link_button("Start a new workspace", base_url())
    st.stop()

def base_url() -> str:
    """The app's address in the browser, without the query."""
    url = st.context.url or ""
    return url.split("?", 1)[0] or "/"

def link(token: str) -> str:
    """The address that opens the workspace of ``token``."""
    return f"{base_url()}?{TOKEN_PARAM}={token}"

def access() -> store.Access | None:
    """The session's workspace access in shared mode (None in personal mode, and in shared mode
    before the visitor's first change: see :func:`pristine`)."""
    opened = _session_access() if settings().shared else None
    return opened if isinstance(opened, store.Access) else None

def pristine() -> bool:
    """Shared mode, before the visitor's first change: nothing of theirs is on the server, and the
    address holds no token yet."""
    return settings().shared and isinstance(_session_access(), store.Pristine)

def workspace() -> store.Workspace | store.Pristine:
    """The session's workspace: the visitor's own (shared mode; before their first change a
    :class:`metrics.store.Pristine` that creates it then), else the personal one."""
    if settings().shared:
        opened = _session_access()
        return opened.workspace if isinstance(opened, store.Access) else opened
    return manager().personal(app_arguments().workspace)

def read_only() -> bool:
    """Whether this session may only look (a read-only link): write controls are disabled."""
    return workspace().read_only

def reload_sample(name: str) -> list[store.RunInfo]:
    """Restore the sample ``name`` in the session's workspace in one transaction, keeping the runs
    added to it; the runs kept."""
    return manager().reload_sample(workspace(), name)

def scope_of(info: store.CollectionInfo) -> str:
    """Where a collection's content lives, for cache keys: the shared samples (one entry for all
    sessions) or this session's workspace (its file: a random id, never the token)."""
    if info.shared:
        return f"samples:{settings().home}"
    return f"workspace:{workspace().path}"

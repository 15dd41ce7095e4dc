"""The page address: query parameters a page writes, always keeping the workspace token and the
sidebar's selection.

In shared mode the token (``?ws=TOKEN``) is the visitor's workspace; a page that replaces its
query parameters must carry it along, or a reload opens a new, empty workspace. The sidebar
writes its selection (:data:`ndcg_lab.ui.selection.ADDRESS`) before the page runs; a page's own
parameters are written beside it.
"""
from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

KEEP = ("ws", "collection", "systems", "baseline")
"""Parameters every address the app writes keeps: the workspace token and the sidebar's selection
but its gain, which the Learn sandbox's own ``gain`` parameter sets on that page."""


def kept() -> dict[str, str | list[str]]:
    """The parameters of the current address that every address keeps (``systems`` may repeat)."""
    params = st.query_params
    return {key: values if len(values) > 1 else values[0]
            for key in KEEP if (values := [v for v in params.get_all(key) if v])}


def write(params: dict[str, str]) -> None:
    """Replace the page's query parameters by ``params``, keeping the workspace token (a write
    triggers no rerun; it is sent even when unchanged, since a link within the session may have
    left the browser's address behind)."""
    st.query_params.from_dict({**{k: str(v) for k, v in params.items() if v is not None and v != ""}, **kept()})


def query(params: dict[str, str]) -> str:
    """``?a=1&b=2`` for a link on the same page, with the workspace token kept."""
    return "?" + urlencode({**{k: str(v) for k, v in params.items() if v is not None and v != ""}, **kept()},
                           safe=",:?", doseq=True)


def page_url() -> str:
    """The current page's address without its query (for a link to copy)."""
    url = st.context.url or ""
    return url.split("?", 1)[0]

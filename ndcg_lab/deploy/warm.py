"""A new app process pays its first script run before any visitor does.

A Streamlit process's first run of the app imports everything the pages use (pandas, Plotly,
DuckDB, the library), compiles the pages and fills the process's caches (the lessons): 4 to 6 s
on a loaded 2-core machine, against 0.15 s for the next run of a lesson's first screen. Without a
warm-up the first students of a lecture wait those seconds, and the admission queue
(:mod:`ndcg_lab.ui.admission`) holds everyone behind them. :func:`warm_up` opens one session of
the process as a browser does (the health check for the XSRF cookie, the websocket, a request for
a run of a page) and waits for that run to end; the session closes, the imports and caches stay.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import requests
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect
from websockets.typing import Subprotocol

__all__ = ["PAGES", "warm_up"]

PAGES = ("", "learn?lesson=discount")
"""The landing page and a lesson: what a class opens first."""
XSRF_COOKIE = "_streamlit_xsrf"
FINISHED = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR)


def warm_up(base: str, pages: Sequence[str] = PAGES, timeout: float = 120.0) -> None:
    """Run each of ``pages`` (``path?query``) once on the app at ``base`` (``http://host:port``),
    one session each, waiting for each run to end; OSError or TimeoutError if it does not."""
    for page in pages:
        _run_once(base, page, timeout)


def _run_once(base: str, page: str, timeout: float) -> None:
    with requests.Session() as http:
        http.get(f"{base}/_stcore/health", timeout=timeout).raise_for_status()
        xsrf = http.cookies.get(XSRF_COOKIE, "")
        cookies = "; ".join(f"{name}={value}" for name, value in http.cookies.items())
    path, _, query = page.partition("?")
    protocols = [cast(Subprotocol, p) for p in ("streamlit", xsrf) if p]
    with connect(base.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=protocols, origin=base,
                 additional_headers={"Cookie": cookies} if cookies else None, open_timeout=timeout,
                 max_size=None) as socket:
        msg = BackMsg()
        msg.rerun_script.page_name = path
        msg.rerun_script.query_string = query
        msg.rerun_script.context_info.url = f"{base}/{page}"
        socket.send(msg.SerializeToString())
        while True:
            answer = ForwardMsg()
            answer.ParseFromString(socket.recv(timeout=timeout))
            if answer.WhichOneof("type") == "script_finished" and answer.script_finished in FINISHED:
                return

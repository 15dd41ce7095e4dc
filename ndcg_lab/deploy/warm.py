"""A new app process pays its first script run before any visitor does.

A Streamlit process's first run of the app imports everything the pages use (pandas, Plotly,
DuckDB, the library), compiles the pages and fills the process's caches (the lessons): 4 to 6 s
on a loaded 2-core machine, against 0.15 s for the next run of a lesson's first screen. Without a
warm-up the first students of a lecture wait those seconds, and the admission queue
(:mod:`ndcg_lab.ui.admission`) holds everyone behind them. :func:`warm_up` opens one session of
the process as a browser does (the health check for the XSRF cookie, the websocket, a request for
a run of a page) and waits for that run to end; the session closes, the imports and caches stay.

``ndcg-lab app --replicas`` warms each process itself. A process started otherwise (a systemd unit)
is warmed by ``python -m ndcg_lab.deploy.warm http://127.0.0.1:PORT`` once it answers, e.g. as the
unit's ``ExecStartPost``: it waits for the process's health check (90 s at most) first.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import cast

import requests
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect
from websockets.typing import Subprotocol

__all__ = ["PAGES", "main", "wait_then_warm_up", "warm_up"]

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


def wait_then_warm_up(base: str, timeout: float = 90.0) -> None:
    """:func:`warm_up` once the app at ``base`` answers its health check (within ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if requests.get(f"{base}/_stcore/health", timeout=2).ok:
                break
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{base} did not answer its health check in {timeout:g} s")
        time.sleep(0.5)
    warm_up(base)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ndcg_lab.deploy.warm BASE_URL``: warm the app process at that address; 1 if it fails."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or not args[0].startswith(("http://", "https://")):
        print("usage: python -m ndcg_lab.deploy.warm http://127.0.0.1:PORT", file=sys.stderr)
        return 2
    try:
        wait_then_warm_up(args[0].rstrip("/"))
    except (OSError, TimeoutError, requests.RequestException) as exc:
        print(f"not warmed up: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Links a teacher hands out: the short form ``/s/`` + 8 characters and a QR code drawn large, and
the server route that turns a short link back into its page.

A handout's target is an address relative to the app's root (``learn?live=ABC234``), kept in the
server's registry (:mod:`metrics.store.shortlinks`). The workspace token (``ws``) is never part
of a target: a link for a class must not open the teacher's workspace. The route ``/s/<code>``
answers with a redirect to ``../<target>`` (relative, so it stays on the address the class used)
or, for an unknown or malformed code, a short page that says so.
"""
from __future__ import annotations

import functools
import html
import os
from urllib.parse import urlencode

import segno
import streamlit as st
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

import metrics
from metrics import settings as settings_module
from metrics.store.shortlinks import ShortLinks, UnknownLink
from ndcg_lab.ui import address

PREFIX = "s"
"""Short links are ``<app root>/s/<code>``."""


@functools.cache
def _links(home: str) -> ShortLinks:
    return ShortLinks(home)


def links() -> ShortLinks:
    """The short links of this server (one SQLite file under NDCG_LAB_HOME), for the pages and
    the route alike (the route runs outside any Streamlit session)."""
    return _links(str(settings_module.load(os.environ).home))


def target(page: str, params: dict[str, str] | None = None) -> str:
    """The relative address of ``page`` with ``params`` (empty values and ``ws`` left out)."""
    kept = {k: str(v) for k, v in (params or {}).items() if v not in (None, "") and k != "ws"}
    return page + ("?" + urlencode(kept, safe=",:") if kept else "")


def root_url(page: str) -> str:
    """The app's root address as this browser sees it, from the current page ``page``'s address."""
    url = address.page_url().rstrip("/")
    return url[: -len(page) - 1] if page and url.endswith("/" + page) else url


def short_url(page: str, params: dict[str, str] | None = None, *, here: str) -> str:
    """The full short address of ``page?params`` (made on first use), seen from the page ``here``."""
    code = links().shorten(target(page, params))
    return f"{root_url(here)}/{PREFIX}/{code}"


def qr_html(url: str, *, width: str = "min(42vh, 100%)") -> str:
    """``url`` as a QR code (segno, medium error correction): an SVG image ``width`` wide, with the
    address as its text alternative."""
    uri = segno.make(url, error="m").svg_data_uri(scale=10, border=4, dark="#000", light="#fff")
    return (f'<img src="{uri}" alt="QR code of {html.escape(url)}" data-qr="{html.escape(url)}" '
            f'style="display:block;width:{width};height:auto;image-rendering:pixelated">')


def handout(title: str, page: str, params: dict[str, str] | None = None, *, here: str) -> str | None:
    """A handout in an expander: the short link to copy and its QR code, large; the short URL drawn
    (None with a message if the registry refused the target)."""
    try:
        url = short_url(page, params, here=here)
    except metrics.MetricsError as exc:
        st.warning(f"No short link for {title}: {exc}")
        return None
    with st.expander(f"Short link and QR code: {title}", icon=":material/qr_code_2:"):
        st.code(url, language=None)
        st.html(qr_html(url))
        st.caption(f"Scan it with a phone's camera, or type {url}.")
    return url


# -- the server route ----------------------------------------------------------------------------
_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>nDCG Lab: short link</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family:sans-serif;max-width:40em;margin:3em auto;padding:0 1em;color:#111">
<h1>Short link not found</h1><p>{message}</p><p><a href="../">Open nDCG Lab</a></p></body></html>"""


def resolve(request: Request) -> Response:
    """``/s/<code>``: a redirect to the code's page, or a page saying the code is unknown (404)."""
    code = str(request.path_params.get("code", ""))
    try:
        where = links().resolve(code)
    except UnknownLink as exc:
        return HTMLResponse(_PAGE.format(message=html.escape(str(exc))), status_code=404)
    return RedirectResponse("../" + where, status_code=303)


def routes() -> list[Route]:
    """The routes the app adds to Streamlit's server (``st.App(..., routes=routes())``)."""
    return [Route(f"/{PREFIX}/{{code}}", resolve, methods=["GET", "HEAD"])]

"""A client of a running Streamlit app that speaks the app's own protocol, with no browser.

Checked against Streamlit 1.67.0 (its Starlette server). What it speaks, as the browser's
frontend does:

- ``GET /_stcore/health`` for the ``_streamlit_xsrf`` cookie; the websocket
  ``/_stcore/stream`` opened with the subprotocols ``streamlit`` and that token, the cookie and
  the page's origin;
- ``BackMsg.rerun_script`` with a ``ClientState``: the page's URL path as ``page_name`` (then the
  page's ``page_script_hash``), the query string (updated from ``page_info_changed``, as the
  browser's address is), the address as ``context_info.url``, and widget states;
- ``ForwardMsg``: ``new_session`` (the session id and the page's hash), ``navigation`` (the
  page's hash in an ``st.navigation`` app), ``page_info_changed``, ``delta`` elements
  (widget ids, alerts, exceptions), ``script_finished``;
- a file_uploader's upload: ``BackMsg.file_urls_request``, its ``file_urls_response``, a
  multipart ``PUT`` to the upload URL with the XSRF header, and the widget state
  ``FileUploaderState`` holding an ``UploadedFileInfo`` (name, size, file id, URLs);
- a button press: the button's widget state with ``trigger_value`` true; a form's Submit is
  sent with the states of the form's widgets that were set (here only the file_uploader's).

Read from Streamlit's own server code: ``web/server/starlette/starlette_websocket.py`` (the
stream and its subprotocols), ``starlette_routes.py`` (``create_upload_routes``: the PUT and its
XSRF check; older releases had ``upload_file_request_handler.py``), ``runtime/app_session.py``
(``file_urls_request``) and ``elements/widgets/file_uploader.py`` (how the state is read).

What it does not do: render anything (no layout, no Arrow tables decoded, no scripts or styles
fetched); send the states of widgets it does not set (the server takes their defaults, as on a
fresh page); say a time zone or locale (``st.context.timezone`` is None); cache messages
(``cached_message_hashes`` is empty, so every message arrives whole); send heartbeats; reconnect.
Built on ``websockets`` (13 or later; Streamlit 1.67's server depends on it) and ``requests``
(a dependency of Streamlit).
"""
from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import requests
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Common_pb2 import UploadedFileInfo
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.RootContainer_pb2 import RootContainer
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

XSRF_COOKIE = "_streamlit_xsrf"
FINISHED = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR)


@dataclass
class Shown:
    """What one element of the main area says: its kind (``alert``, ``exception``, ...) and text."""

    kind: str
    text: str
    at: float = field(default_factory=time.perf_counter)


def shown_by(element: Element) -> Shown:
    kind = element.WhichOneof("type") or ""
    if kind == "alert":
        return Shown(kind, element.alert.body)
    if kind == "exception":
        return Shown(kind, f"{element.exception.type}: {element.exception.message}")
    if kind == "markdown":
        return Shown(kind, element.markdown.body)
    return Shown(kind, "")


class AppSession:
    """One visitor's session of the app at ``link`` (its page path and query string kept)."""

    def __init__(self, link: str, timeout: float = 300.0) -> None:
        parts = urlsplit(link)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path or "/"
        self.page_name = parts.path.strip("/")
        self.query_string = parts.query
        self.timeout = timeout
        self.http = requests.Session()
        # A connection per request: a kept-alive one that the server closes after its idle timeout
        # (uvicorn's 5 s) can be reset under the next request, which a browser retries unseen.
        self.http.headers["Connection"] = "close"
        self.xsrf = ""
        self.session_id = ""
        self.page_script_hash = ""
        self.widgets: dict[tuple[str, str], str] = {}   # (kind, label) -> widget id
        self.shown: list[Shown] = []                    # every main-area element of every run
        self.finished = asyncio.Event()
        self._shown = asyncio.Event()
        self._socket = None
        self._reader: asyncio.Task | None = None
        self._file_urls: dict[str, asyncio.Future] = {}
        self.gone = False   # the server closed the websocket (or it broke)

    async def open(self) -> AppSession:
        """Connect as a browser opening the link does, and wait for the first script run to end."""
        await self.connect()
        await self.rerun([])
        await self.idle()
        return self

    async def connect(self) -> AppSession:
        """The health check (its cookies) and the websocket, with no script run asked for yet."""
        response = await asyncio.to_thread(self.http.get, f"{self.base}/_stcore/health", timeout=self.timeout)
        response.raise_for_status()
        self.xsrf = self.http.cookies.get(XSRF_COOKIE, "")
        ws = self.base.replace("http", "ws", 1) + "/_stcore/stream"
        protocols = ["streamlit"] + ([self.xsrf] if self.xsrf else [])
        self._socket = await connect(ws, subprotocols=protocols, origin=self.base, max_size=None,
                                     ping_interval=None, open_timeout=self.timeout,
                                     additional_headers=self._cookies())
        self._reader = asyncio.create_task(self._read())
        return self

    def _cookies(self) -> dict[str, str] | None:
        """Every cookie the health check set (the XSRF token; a proxy's affinity cookie), as a browser sends them."""
        jar = "; ".join(f"{name}={value}" for name, value in self.http.cookies.items())
        return {"Cookie": jar} if jar else None

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        self.http.close()

    async def _read(self) -> None:
        try:
            async for frame in self._socket:
                msg = ForwardMsg()
                msg.ParseFromString(frame)
                self._dispatch(msg)
        except ConnectionClosed:   # an abnormal close (the server stopped) ends it as a normal one does
            pass
        finally:   # wake every waiter: they raise instead of waiting for their timeout
            self.gone = True
            self._shown.set()
            self.finished.set()
            for future in self._file_urls.values():
                if not future.done():
                    future.set_exception(ConnectionError("the websocket closed"))

    def _alive(self) -> None:
        if self.gone:
            raise ConnectionError("the websocket closed")

    async def _send(self, msg: BackMsg) -> None:
        self._alive()
        try:
            await self._socket.send(msg.SerializeToString())
        except ConnectionClosed as exc:
            raise ConnectionError(f"the websocket closed: {exc}") from exc

    def _dispatch(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.session_id = msg.new_session.initialize.session_id or self.session_id
            self.page_script_hash = msg.new_session.page_script_hash or self.page_script_hash
        elif kind == "navigation":   # st.navigation: the page run, not the entry script
            self.page_script_hash = msg.navigation.page_script_hash or self.page_script_hash
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            widget = element.WhichOneof("type")
            if widget in ("file_uploader", "button"):
                self.widgets[(widget, getattr(element, widget).label)] = getattr(element, widget).id
            path = msg.metadata.delta_path
            if path and path[0] == RootContainer.MAIN:
                self.shown.append(shown_by(element))
                self._shown.set()
        elif kind == "script_finished" and msg.script_finished in FINISHED:
            self.finished.set()
        elif kind == "file_urls_response":
            future = self._file_urls.pop(msg.file_urls_response.response_id, None)
            if future is not None and not future.done():
                future.set_result(msg.file_urls_response)

    async def rerun(self, widget_states: list[WidgetState]) -> None:
        """Ask for a script run of this page with these widget states."""
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = self.page_script_hash
        state.page_name = "" if self.page_script_hash else self.page_name
        state.widget_states.widgets.extend(widget_states)
        state.context_info.url = self.base + self.path + (f"?{self.query_string}" if self.query_string else "")
        self.finished.clear()
        await self._send(msg)

    async def idle(self) -> None:
        """Until the current script run has finished (a run that ends in a rerun does not count)."""
        await asyncio.wait_for(self.finished.wait(), self.timeout)
        self._alive()

    def mark(self) -> int:
        """A point in the session's stream of shown elements, for :meth:`until_shown`."""
        return len(self.shown)

    async def until_shown(self, since: int, kinds: tuple[str, ...] = ("alert",)) -> Shown:
        """The first element of one of these kinds shown in the main area after the mark ``since``."""
        while True:
            fresh = [s for s in self.shown[since:] if s.kind in kinds]
            if fresh:
                return fresh[0]
            self._alive()
            since = len(self.shown)
            self._shown.clear()
            await asyncio.wait_for(self._shown.wait(), self.timeout)

    async def upload(self, name: str, data: bytes, mime: str = "application/octet-stream") -> UploadedFileInfo:
        """Upload a file as a file_uploader does: ask the session for URLs, then PUT the file."""
        msg = BackMsg()
        request_id = str(uuid.uuid4())
        msg.file_urls_request.request_id = request_id
        msg.file_urls_request.file_names.append(name)
        msg.file_urls_request.session_id = self.session_id
        self._file_urls[request_id] = asyncio.get_running_loop().create_future()
        await self._send(msg)
        answer = await asyncio.wait_for(self._file_urls[request_id], self.timeout)
        if answer.error_msg:
            raise RuntimeError(f"file URLs refused: {answer.error_msg}")
        urls = answer.file_urls[0]
        response = await asyncio.to_thread(
            self.http.put, urljoin(self.base + "/", urls.upload_url.lstrip("/")),
            files={"file": (name, data, mime)}, headers={"X-Xsrftoken": self.xsrf} if self.xsrf else {},
            timeout=self.timeout)
        response.raise_for_status()
        info = UploadedFileInfo(name=name, size=len(data), file_id=urls.file_id)
        info.file_urls.CopyFrom(urls)
        return info

    async def remove(self, info: UploadedFileInfo) -> None:
        """Remove an uploaded file as a file_uploader's x does: DELETE its URL (the server drops it)."""
        response = await asyncio.to_thread(
            self.http.delete, urljoin(self.base + "/", info.file_urls.delete_url.lstrip("/")),
            headers={"X-Xsrftoken": self.xsrf} if self.xsrf else {}, timeout=self.timeout)
        response.raise_for_status()

    def widget_id(self, kind: str, label: str) -> str:
        """The id of the widget of this kind and label on the page (from the deltas seen)."""
        return self.widgets[(kind, label)]


def file_state(widget_id: str, files: list[UploadedFileInfo]) -> WidgetState:
    """A file_uploader's state holding these uploaded files."""
    state = WidgetState(id=widget_id)
    state.file_uploader_state_value.uploaded_file_info.extend(files)
    return state


def pressed(widget_id: str) -> WidgetState:
    """A button's state in the run its press triggers."""
    return WidgetState(id=widget_id, trigger_value=True)

"""Copy uploads into the workspace at once, keeping earlier data on errors.

An upload widget forgets its files after a page switch, and a click elsewhere stops the script
run that brings them at its next drawing call. So every file is parsed and stored by the
uploader's ``on_change`` callback (:func:`store_uploads`), which Streamlit calls at the start of
the next script run, whichever page that run shows, and which draws nothing, so that nothing can
stop it half-way. Its ``file_id`` is remembered so that later reruns do not store it again. A
file the callback never saw (a session that did not know the uploader yet) is stored by the page
(:func:`store_left`).
"""
from __future__ import annotations

import streamlit as st
from streamlit.runtime.uploaded_file_manager import DeletedFile

import metrics
from metrics import io
from metrics.io.memory import release_memory
from metrics.io.topics import default_field, query_text, read_topics, text_fields
from metrics.io.upload_limits import upload_refusals
from metrics.settings import human_bytes
from ndcg_lab.ui.text import md, visitor_text


def _seen() -> set:
    return st.session_state.setdefault("_ingested_files", set())


def new_files(files) -> list:
    """Uploaded files not yet handled in this session. A file this server process does not hold
    (Streamlit's ``DeletedFile``: uploaded to a process that died, before the browser reconnected
    to this one) is no upload here; it was handled, or lost with its process."""
    if files is None:
        return []
    files = files if isinstance(files, list) else [files]
    return [f for f in files if not isinstance(f, DeletedFile) and f.file_id not in _seen()]


def mark_done(file) -> None:
    _seen().add(file.file_id)


_MESSAGES, _SHOWN = "_data_messages", "_data_messages_shown"


def report(kind: str, text: str) -> None:
    """Queue a message shown at the top of the Data page (it survives the rerun that follows).

    ``text`` is markdown, except for errors: those are shown as plain text (they quote file
    lines verbatim), so callers pass ``str(exc)`` unescaped.
    """
    st.session_state.setdefault(_MESSAGES, []).append((kind, text))


def show_reports() -> None:
    """Draw the queued messages. They stay queued until the run that drew them ends
    (:func:`reports_drawn`): a run stopped half-way by a new rerun request (a click, a
    reconnection) ends before the browser has them, and the next run draws them again."""
    messages = st.session_state.get(_MESSAGES, [])
    st.session_state[_SHOWN] = len(messages)
    for kind, text in messages:
        if kind == "error":
            st.error(md(visitor_text(text)), icon=":material/block:")
        else:
            {"success": st.success, "warning": st.warning}.get(kind, st.info)(text)


def reports_drawn() -> None:
    """The end of a Data page run: the messages its :func:`show_reports` drew are dropped (those
    queued later in the run stay for the next)."""
    shown = st.session_state.pop(_SHOWN, 0)
    if shown:
        del st.session_state.get(_MESSAGES, [])[:shown]


def _read_one(file, reader):
    """(parsed, None) or (None, one-line error text naming the file)."""
    try:
        return reader(file), None
    except metrics.MetricsError as exc:
        text = str(exc)
        return None, text if exc.source else f"{file.name}: {text}"
    except Exception as exc:  # noqa: BLE001 - an upload must never break the page or loop on reruns
        return None, f"{file.name}: could not be read ({type(exc).__name__}: {exc})"


def parse_files(files, reader) -> list:
    """Parse each file without drawing anything; [(file, parsed or None, error text or None)].
    After a file is refused, what parsing it took goes back to the system (:func:`release_memory`)."""
    parsed = []
    for file in files or []:
        parsed.append((file, *_read_one(file, reader)))
        if parsed[-1][2] is not None:
            release_memory()
    return parsed


def bounded(files: list, settings) -> list:
    """``files`` when the upload keeps within the operator's bounds (``NDCG_LAB_UPLOAD_FILES`` files,
    ``NDCG_LAB_UPLOAD_BYTES`` in all), else ``[]``: nothing of an upload over a bound is stored;
    each of its files is marked handled and one message says why."""
    refused = next((r for r in upload_refusals(files, settings) if r is not None), None)
    if refused is None:
        return files
    for file in files:
        mark_done(file)
    size = human_bytes(sum(f.size for f in files))
    report("error", f"Nothing of this upload was stored ({len(files)} files, {size}): "
                    f"{refused.problem.removeprefix('not read: ')}. {refused.fix}")
    return []


def store_uploads(files, reader, save, settings, *, larger_than: int | None = None) -> None:
    """Bound, parse and store the files of one upload not handled yet, drawing nothing: the body
    of an uploader's ``on_change`` callback. ``save(file, parsed)`` stores one file and reports;
    a ``save`` with a ``many`` attribute (:func:`run_saver`) stores the good files of the upload
    together, ``many([(file, parsed), ...])``: all of them or none against the workspace's quotas.
    Every error goes to :func:`report`. Files over ``larger_than`` bytes are left for the page
    (the streaming engine scores them with a progress bar)."""
    fresh = bounded(new_files(files), settings)
    if larger_than is not None:
        fresh = [f for f in fresh if f.size <= larger_than]
    good = []
    for file, parsed, error in parse_files(fresh, reader):
        mark_done(file)
        if error:
            report("error", error)
        else:
            good.append((file, parsed))
    many = getattr(save, "many", None)
    if many is not None and len(good) > 1:
        try:
            many(good)
        except metrics.MetricsError as exc:
            report("error", f"Nothing of these {len(good)} files was stored: {exc}")
    else:
        for file, parsed in good:
            try:
                save(file, parsed)
            except metrics.MetricsError as exc:
                report("error", str(exc) if exc.source else f"{file.name}: {exc}")
    del good
    if fresh:
        release_memory()   # the server runs no full collection after every script run (.streamlit/config.toml)


def store_left(files, store, *args) -> None:
    """The page's half of an uploader's ``on_change``, ``store(*args)``: Streamlit calls no callback for
    a widget its session does not know yet. That happens when a browser's websocket comes back to
    another server process (ui/reconnect.py) and the upload's own rerun stops the new session's
    first run before it draws the uploader. Files the callback left are stored here, once, and the
    page runs again to show the messages at its top."""
    if new_files(files):
        store(*args)
        st.rerun()


def run_saver(ws, collection: str):
    """``save(file, run)`` for :func:`store_uploads`: the run added to ``collection``, with a message;
    its ``many`` adds the runs of one upload in one transaction (:meth:`metrics.store.Workspace.add_runs`)."""
    def tell(pairs, infos, stored: set) -> None:
        for (file, run), info in zip(pairs, infos):
            if run.digest in stored:
                report("info", f"{md(file.name)} is already in {md(collection)} as run **{md(info.name)}** "
                               f"(same content); nothing was added.")
            else:
                stored.add(run.digest)
                report("success", f"Added run **{md(info.name)}** from {md(file.name)}: {info.n_lines:,} lines, "
                                  f"{info.n_queries:,} queries.")

    def save(file, run) -> None:
        stored = {r.digest for r in ws.runs(collection)}
        tell([(file, run)], [ws.add_run(collection, run)], stored)

    def many(pairs) -> None:
        stored = {r.digest for r in ws.runs(collection)}
        tell(pairs, ws.add_runs(collection, [run for _, run in pairs]), stored)

    save.many = many
    return save


def run_reader(file):
    return io.read_run(file)


def qrels_reader(file):
    return io.read_qrels(file)


def topics_reader(file):
    """Topics in every format the library reads (TREC SGML and XML, TSV/CSV, JSONL, .gz of each):
    the whole frame, one column per field."""
    return read_topics(file.getvalue(), source=file.name)


def _topic_frames() -> dict:
    return st.session_state.setdefault("_topic_frames", {})


def store_topics(ws, collection: str, topics) -> None:
    """Store the default field as the collection's query text; keep every field for :func:`pick_topics_field`."""
    _topic_frames()[collection] = topics
    ws.set_topics(collection, query_text(topics))


def pick_topics_field(ws, collection: str) -> None:
    """A choice of the field used as query text (title, description, ...) for the topics last uploaded."""
    topics = _topic_frames().get(collection)
    if topics is None or len(text_fields(topics)) < 2:
        return
    fields = text_fields(topics)

    def store() -> None:
        field = st.session_state[f"topics_field::{collection}"]
        try:
            ws.set_topics(collection, query_text(topics, field))
            report("success", f"Query text is now the topics' **{md(field)}** field.")
        except metrics.MetricsError as exc:
            report("error", str(exc))

    st.selectbox(f"Query text field of {topics.attrs.get('source', 'the topics')}", fields,
                 index=fields.index(default_field(topics)), key=f"topics_field::{collection}", on_change=store,
                 help="Which field of the topics is the query: the title (short), the description, ...")

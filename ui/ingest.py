"""Copy uploads into the workspace at once, with progress, keeping earlier data on errors.

An upload widget forgets its files after a page switch, so every file is
parsed and stored on the rerun that brings it; its ``file_id`` is remembered
so that later reruns do not store it again.
"""
from __future__ import annotations

import gc
import time

import streamlit as st

import metrics
from metrics import io
from metrics.io.topics import default_field, query_text, read_topics, text_fields
from ui.text import md  # noqa: F401 - ingest.md is the pages' name for it


def _seen() -> set:
    return st.session_state.setdefault("_ingested_files", set())


def new_files(files) -> list:
    """Uploaded files not yet handled in this session."""
    if files is None:
        return []
    files = files if isinstance(files, list) else [files]
    return [f for f in files if f.file_id not in _seen()]


def mark_done(file) -> None:
    _seen().add(file.file_id)


def report(kind: str, text: str) -> None:
    """Queue a message shown at the top of the Data page (it survives the rerun that follows).

    ``text`` is markdown, except for errors: those are shown as plain text (they quote file
    lines verbatim), so callers pass ``str(exc)`` unescaped.
    """
    st.session_state.setdefault("_data_messages", []).append((kind, text))


def show_reports() -> None:
    for kind, text in st.session_state.pop("_data_messages", []):
        if kind == "error":
            st.error(md(text), icon="🚫")
        else:
            {"success": st.success, "warning": st.warning}.get(kind, st.info)(text)


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
    """Parse each file without drawing anything; [(file, parsed or None, error text or None)]."""
    return [(file, *_read_one(file, reader)) for file in files or []]


def parse_with_progress(files, reader, what: str):
    """Parse each file with a status box; returns [(file, parsed or None, error text or None)]."""
    results = []
    if not files:
        return results
    with st.status(f"Reading {len(files)} {what} file(s)…", expanded=True) as status:
        bar = st.progress(0.0)
        for i, file in enumerate(files):
            st.write(f"Parsing **{md(file.name)}** ({file.size / 1e6:.1f} MB)…")
            started = time.perf_counter()
            parsed, error = _read_one(file, reader)
            results.append((file, parsed, error))
            if error is None:
                st.write(f"{md(file.name)}: {len(parsed):,} lines in {time.perf_counter() - started:.2f} s")
            else:
                st.write(f"{md(file.name)}: rejected")
            bar.progress((i + 1) / len(files))
        failed = sum(1 for _, p, _ in results if p is None)
        status.update(label=f"Read {len(files) - failed} of {len(files)} {what} file(s)",
                      state="error" if failed else "complete", expanded=bool(failed))
    return results


def rerun_after_upload() -> None:
    """Collect garbage once after a batch of uploads is stored, then rerun: the server runs no full
    collection after every script run (.streamlit/config.toml), and parsing and storing a large run
    leaves the most behind, so its memory is returned here, on the write path, not on every read."""
    gc.collect()
    st.rerun()


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

"""Copy uploads into the workspace at once, with progress, keeping earlier data on errors.

An upload widget forgets its files after a page switch, so every file is
parsed and stored on the rerun that brings it; its ``file_id`` is remembered
so that later reruns do not store it again.
"""
from __future__ import annotations

import time

import pandas as pd
import streamlit as st

import metrics
from metrics import io


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
    """Queue a message shown at the top of the Data page (it survives the rerun that follows)."""
    st.session_state.setdefault("_data_messages", []).append((kind, text))


def show_reports() -> None:
    for kind, text in st.session_state.pop("_data_messages", []):
        {"error": st.error, "success": st.success, "warning": st.warning}.get(kind, st.info)(text)


def parse_with_progress(files, reader, what: str):
    """Parse each file with a status box; returns [(file, parsed or None, error text or None)]."""
    results = []
    if not files:
        return results
    with st.status(f"Reading {len(files)} {what} file(s)…", expanded=True) as status:
        bar = st.progress(0.0)
        for i, file in enumerate(files):
            st.write(f"Parsing **{file.name}** ({file.size / 1e6:.1f} MB)…")
            started = time.perf_counter()
            try:
                parsed = reader(file)
                results.append((file, parsed, None))
                st.write(f"{file.name}: {len(parsed):,} lines in {time.perf_counter() - started:.2f} s")
            except metrics.MetricsError as exc:
                results.append((file, None, str(exc)))
                st.write(f"{file.name}: rejected")
            bar.progress((i + 1) / len(files))
        failed = sum(1 for _, p, _ in results if p is None)
        status.update(label=f"Read {len(files) - failed} of {len(files)} {what} file(s)",
                      state="error" if failed else "complete", expanded=bool(failed))
    return results


def read_table(file, columns: tuple[str, str]) -> pd.DataFrame:
    """Topics (qid, text) or doc metadata (docno, title): TSV/CSV with a header, or two columns without."""
    raw = file.getvalue().decode("utf-8-sig", errors="strict")
    sep = "\t" if "\t" in raw.splitlines()[0] else ","
    frame = pd.read_csv(pd.io.common.StringIO(raw), sep=sep, dtype=str, keep_default_na=False)
    lowered = [c.strip().lower() for c in frame.columns]
    if not set(columns) <= set(lowered) and "query" not in lowered:
        frame = pd.read_csv(pd.io.common.StringIO(raw), sep=sep, dtype=str, keep_default_na=False, header=None)
        if frame.shape[1] < 2:
            raise metrics.MetricsError(f"expected two columns ({columns[0]}, {columns[1]})", source=file.name, line=1,
                                       fix=f"write a header line '{columns[0]}<TAB>{columns[1]}'")
        frame = frame.iloc[:, :2]
        frame.columns = list(columns)
    else:
        frame.columns = lowered
    return frame


def run_reader(file):
    return io.read_run(file)


def qrels_reader(file):
    return io.read_qrels(file)

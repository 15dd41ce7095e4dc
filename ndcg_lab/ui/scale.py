"""Large runs on the Data page: above a size threshold a run is scored by the streaming engine
(metrics.engines: buckets by query, one at a time) with a progress bar, instead of being loaded
into the workspace and the in-memory leaderboard cache.

The threshold is ``NDCG_LAB_STREAMING_BYTES`` (bytes) or, by default, the machine's RAM / 16.
Results stay in the session: engine, buckets, time, and the mean of every measure.
"""
from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

import pandas as pd
import streamlit as st

import metrics
from metrics import engines
from metrics.io.paths import expand, is_url, shard_name
from metrics.report.text import human_bytes
from metrics.settings import check_server_source
from ndcg_lab.ui import ingest, state
from ndcg_lab.ui.text import md, plain_frame

_RESULTS = "_scale_results"
# A quoted fragment of a message, as repr() writes it: 'text' or "text" (escapes included).
_QUOTED = re.compile(r"""\s*:?\s*(?:'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")""")


def server_error(exc: metrics.MetricsError) -> str:
    """The message of an error about a file on the server, without the file's text: the name, the
    line number and the problem stay, every quoted fragment (a line, a field) goes."""
    problem = _QUOTED.sub("", exc.problem).strip(" :") or "the file could not be read"
    fix = _QUOTED.sub("", exc.fix).strip(" :") if exc.fix else None
    return str(metrics.MetricsError(problem, source=exc.source, line=exc.line, fix=fix))


def threshold() -> int:
    """Bytes above which a run is streamed (NDCG_LAB_STREAMING_BYTES, default RAM / 16)."""
    try:
        return engines.streaming_threshold()
    except metrics.MetricsError:
        return engines.memory_threshold()     # a malformed setting falls back to the default


def measures(sel) -> list[str]:
    """The default suite, with nDCG written in the sidebar's gain."""
    return [metrics.with_gain(m, sel.gain) for m in metrics.DEFAULT_MEASURES]


def route_uploads(files: list, sel, ws) -> list:
    """Stream-evaluate the uploads above the threshold (marking them handled); return the others."""
    limit = threshold()
    small = [f for f in files if f.size <= limit]
    large = [f for f in files if f.size > limit]
    for file in large:
        ingest.mark_done(file)
        folder = Path(tempfile.mkdtemp(prefix="ndcg-lab-upload-"))
        path = folder / file.name
        try:
            path.write_bytes(file.getvalue())
            evaluate_large(str(path), sel, ws, name=Path(file.name).name, size=file.size)
        finally:
            for p in folder.iterdir():
                p.unlink()
            folder.rmdir()
    if large and not small:
        st.rerun()          # show the report at the top of the page (small uploads rerun by themselves)
    return small


def evaluate_server_source(text: str, sel, ws) -> dict | None:
    """Score a run a visitor named by its path, glob or URL on the server: only under the operator's
    roots and URL schemes (metrics.settings.check_server_source); errors never quote the file."""
    try:
        path = check_server_source(text, state.settings())
    except metrics.MetricsError as exc:
        ingest.report("error", str(exc))
        return None
    return evaluate_large(path, sel, ws, server=True)


def evaluate_large(path: str, sel, ws, *, name: str | None = None, size: int | None = None,
                   server: bool = False) -> dict | None:
    """Score the run at ``path`` (a file, glob or fsspec URL) with the streaming engine, showing progress.
    ``server``: the path was typed by a visitor, so an error message leaves out the file's text."""
    qrels = ws.load_qrels(sel.collection)
    label = name or Path(path).name
    bar = st.progress(0.0, text=f"{label}: starting the streaming engine…")

    def progress(done: int, total: int, message: str) -> None:
        # The partition phase fills the first half of the bar, the buckets the second; a run read
        # and scored in one pass (its queries one after another) fills it as it is read.
        share = done / total if total else 1.0
        fraction = share if message.startswith("read") else \
            (0.0 if message.startswith("partition") else 0.5) + 0.5 * share
        bar.progress(min(fraction, 1.0), text=f"{label}: {message}")

    started = time.perf_counter()
    buckets: list[int] = []

    def counting(done: int, total: int, message: str) -> None:
        if message.startswith("evaluated bucket"):
            buckets.append(total)
        progress(done, total, message)

    try:
        frame = metrics.evaluate(qrels, {shard_name(label): path}, measures(sel), engine="streaming",
                                 progress=counting, allowed=state.settings() if server else None)
    except metrics.MetricsError as exc:
        bar.empty()
        ingest.report("error", server_error(exc) if server else str(exc))
        return None
    seconds = time.perf_counter() - started
    bar.progress(1.0, text=f"{label}: done in {seconds:.1f} s")
    if size is None:
        try:
            size = sum(os.path.getsize(p) for p in expand(path, allowed=state.settings() if server else None)
                       if not is_url(p))
        except (OSError, metrics.MetricsError):
            size = 0
    result = {"name": str(frame["system"].iloc[0]) if len(frame) else label, "file": label, "size": size,
              "engine": "streaming", "buckets": buckets[-1] if buckets else 0, "seconds": seconds,
              "queries": int(frame["qid"].nunique()), "means": metrics.means(frame),
              "collection": sel.collection}
    st.session_state.setdefault(_RESULTS, []).append(result)
    ingest.report("success", f"Evaluated **{md(result['name'])}** from {md(label)} "
                             f"({human_bytes(size)}) with the "
                             f"**streaming** engine in {seconds:.1f} s ({_how(result['buckets'])}, "
                             f"{result['queries']:,} queries).")
    return result


def _how(buckets: int) -> str:
    """How the streaming engine went through a run: in buckets, or in one pass (its queries came
    one after another, see metrics.engines.contiguous)."""
    return f"{buckets} buckets" if buckets else "one pass"


def section(sel, ws) -> None:
    """Where large runs go: the threshold, a server path/URL form (only where the operator allows
    server files), and the results of this session."""
    limit = threshold()
    config = state.settings()
    with st.expander(f"Large runs (above {human_bytes(limit)}: streaming engine)", expanded=False):
        st.caption(f"Runs up to {human_bytes(limit)} are loaded into the workspace and evaluated in memory (local "
                   f"engine). Larger uploads{', or a path/URL given here,' if config.server_files else ''} are "
                   f"split into buckets by query and scored one bucket at a time (streaming engine); set "
                   f"NDCG_LAB_STREAMING_BYTES to change the threshold. See docs/scale.md for Dask clusters.")
        if config.server_files:
            allowed = [str(root) for root in config.data_roots] + [f"{s}://" for s in sorted(config.url_schemes)]
            with st.form("large_run_form"):
                path = st.text_input(f"Run file, glob or URL on the server (under {', '.join(allowed)})",
                                     key="large_run_path")
                if st.form_submit_button("Evaluate with the streaming engine"):
                    if path.strip():
                        evaluate_server_source(path.strip(), sel, ws)
                        st.rerun()
                    else:
                        st.error("Give a path, a glob or an fsspec URL.")
        else:
            st.caption("Files on the server are not offered here: the operator allows folders with "
                       "NDCG_LAB_DATA_ROOTS (and URL schemes with NDCG_LAB_URL_SCHEMES).")
    results = [r for r in st.session_state.get(_RESULTS, []) if r["collection"] == sel.collection]
    if results:
        st.markdown("**Large runs evaluated in this session**")
        st.table(plain_frame(pd.DataFrame([{
            "name": r["name"], "file": r["file"], "size": human_bytes(r["size"]), "engine": r["engine"],
            "buckets": _how(r["buckets"]), "time (s)": f"{r['seconds']:.1f}", "queries": f"{r['queries']:,}",
            **{m: f"{v:.4f}" for m, v in r["means"].iloc[0].items()}} for r in results])))

"""Data: sample collections, uploads with lint reports, rename/delete/baseline."""
import pandas as pd
import streamlit as st

import metrics
from ndcg_lab.ui import ingest, state
from ndcg_lab.ui import scale as scale_ui
from ndcg_lab.ui.text import md, plain_frame, visitor_text

# The sidebar's collection selectbox is drawn before this page runs, so a switch of collection
# is made in a button callback (state.open_collection), which runs before the next script run.


def _load_sample(name: str) -> None:
    """Restore the bundled sample ``name`` (one transaction), keeping runs and proxy judgments the
    user added to that collection, and open it."""
    try:
        kept = state.reload_sample(name)
    except metrics.MetricsError as exc:
        ingest.report("error", str(exc))
        return
    state.open_collection(name)
    note = f" (kept {len(kept)} run(s) you had added)" if kept else ""
    ingest.report("success", f"Loaded the {name} sample collection{note}.")


def _create_collection(upload_key: str) -> None:
    """Parse the uploaded qrels, create the collection and open it (errors go to the report)."""
    ss = st.session_state
    name = (ss.get("new_collection_name") or "").strip()
    upload = ss.get(upload_key)
    if not name:
        ingest.report("error", "Give the new collection a name.")
        return
    if state.workspace().has_collection(name):
        ingest.report("error", f"A collection named {name!r} exists already; choose another name.")
        return
    if upload is None:
        ingest.report("error", "Upload the qrels file of the new collection first.")
        return
    [(_, qrels, error)] = ingest.parse_files([upload], ingest.qrels_reader)
    if error:
        ingest.report("error", error)
        return
    try:
        state.workspace().create_collection(name, qrels)
    except metrics.MetricsError as exc:
        ingest.report("error", str(exc))
        return
    state.open_collection(name)
    ss["new_collection_name"] = ""
    ss["_new_collection_form"] = ss.get("_new_collection_form", 0) + 1  # a fresh, empty uploader
    ingest.report("success", f"Created collection **{md(name)}** with {len(qrels):,} judgments "
                             f"({md(upload.name)}); now add its runs below.")


def _store_runs(collection: str) -> None:
    """on_change of the runs uploader: store its new runs (all or none of one upload) before any page draws."""
    ingest.store_uploads(st.session_state.get("runs_upload"), ingest.run_reader,
                         ingest.run_saver(state.workspace(), collection), state.settings(),
                         larger_than=scale_ui.threshold())


def _store_upload(key: str, reader, save, what: str) -> None:
    """on_change of a qrels, proxy, topics or titles uploader: store the file before any page draws."""
    def saved(file, parsed) -> None:
        save(parsed)
        ingest.report("success", f"Stored {what} from {md(file.name)} ({len(parsed):,} rows).")

    ingest.store_uploads(st.session_state.get(key), reader, saved, state.settings())


def _read_titles(file):
    return metrics.io.read_two_columns(file, ("docno", "title"))


def _end() -> None:
    """End this run here, its messages drawn (ingest.reports_drawn)."""
    ingest.reports_drawn()
    st.stop()


st.header("Data")
ws = state.workspace()
locked = ws.read_only
ingest.show_reports()
if locked:
    st.info("This is a read-only link: you can look at every collection and run; uploads and changes are "
            "turned off.", icon=":material/visibility:")

st.subheader("Sample collections")
collections = [c.name for c in ws.collections()]
cols = st.columns(len(state.SAMPLE_COLLECTIONS))
for col, name in zip(cols, state.SAMPLE_COLLECTIONS):
    exists = name in collections
    col.button(f"{'Reload' if exists else 'Load'} the {name} sample", key=f"sample_{name}", width="stretch",
               on_click=_load_sample, args=(name,), disabled=locked,
               help=(f"Restores the bundled {name} files and opens the collection; runs you added to it are kept."
                     if exists else f"Adds the bundled {name} collection to the workspace and opens it."))

sel = state.selection()

with st.expander("New collection", expanded=not collections and not locked):
    upload_key = f"new_collection_qrels::{st.session_state.get('_new_collection_form', 0)}"
    st.text_input("Collection name", key="new_collection_name", disabled=locked)
    st.file_uploader("Qrels (qid iter docno rel)", key=upload_key, type=None, accept_multiple_files=False,
                     disabled=locked)
    st.button("Create collection", key="create_collection", on_click=_create_collection,
              args=(upload_key,), disabled=locked)

if sel is None:
    _end()
collection = sel.collection
st.subheader(f"Collection: {md(collection)}")

# One uploader for every collection: a file is stored in the collection this run shows, so an
# upload can never land in an uploader that the next run no longer draws. Its callback stores the
# files before any page draws (ui/ingest.py), so a click on another page at once loses nothing.
run_files = st.file_uploader("Runs (TREC format; .gz/.bz2/.xz, CSV, parquet or JSON also read) — drop several at once",
                             accept_multiple_files=True, key="runs_upload", disabled=locked,
                             on_change=_store_runs, args=(collection,))
# uploads above the streaming threshold are scored bucket by bucket (ui/scale.py), not stored
left = scale_ui.route_uploads(ingest.new_files(run_files), sel, ws)
if not locked:
    ingest.store_left(left, _store_runs, collection)
scale_ui.section(sel, ws)  # large runs: threshold, server path/URL form, results with engine and time

with st.expander("Qrels, proxy judgments, topics and document titles"):
    c1, c2 = st.columns(2)
    slots = [
        (c1, "Replace qrels", "qrels", ingest.qrels_reader, lambda q: state.workspace().set_qrels(collection, q)),
        (c2, "Proxy judgments (inferred labels, qrels format)", "proxy", ingest.qrels_reader,
         lambda q: state.workspace().set_proxy(collection, q)),
        (c1, "Topics (TREC SGML or XML, TSV/CSV, JSONL; .gz)", "topics", ingest.topics_reader,
         lambda t: ingest.store_topics(state.workspace(), collection, t)),
        (c2, "Document titles (docno, title)", "docs", _read_titles,
         lambda t: state.workspace().set_docs(collection, t)),
    ]
    for column, label, key, reader, save in slots:
        with column:
            args = (f"{key}_upload", reader, save, key)
            files = st.file_uploader(label, key=args[0], disabled=locked, on_change=_store_upload, args=args)
            if not locked:
                ingest.store_left(files, _store_upload, *args)
    ingest.pick_topics_field(ws, collection)
    info = state.collection_info(sel)
    st.caption(f"Qrels: {md(info.qrels.source)} ({info.qrels.n_lines:,} judgments, {info.qrels.n_queries:,} "
               f"queries) · proxy: {md(info.proxy.source) if info.proxy else 'none'} · topics: {info.n_topics:,} · "
               f"titles: {info.n_docs:,}")

runs = ws.runs(collection)
st.markdown(f"**Runs in {md(collection)}** ({len(runs)})")
if not runs:
    st.info("No runs yet: drop run files above.")
    _end()
baseline = sel.baseline if sel.baseline in {r.name for r in runs} else runs[0].name  # the sidebar's baseline
st.table(plain_frame(pd.DataFrame([{
    "name": r.name + (" (baseline)" if r.name == baseline else ""), "file": r.source,
    "uploaded (UTC)": r.uploaded.strftime("%Y-%m-%d %H:%M:%S"), "lines": f"{r.n_lines:,}",
    "queries": f"{r.n_queries:,}", "sha256": r.digest[:12]} for r in runs])))


def _change(action, message: str) -> None:
    """Run one change of the workspace; its message, or the error (read-only, quota, a name taken)."""
    try:
        action()
    except metrics.MetricsError as exc:
        st.error(md(visitor_text(str(exc))), icon=":material/block:")
        return
    ingest.report("success", message)
    st.rerun()


c1, c2, c3 = st.columns(3)
with c1.form("rename_run"):
    old = st.selectbox("Run", [r.name for r in runs], key="rename_old")
    new = st.text_input("New name", key="rename_new")
    if st.form_submit_button("Rename", disabled=locked):
        _change(lambda: ws.rename_run(collection, old, new.strip()),
                f"Renamed {md(repr(old))} to {md(repr(new.strip()))}.")
with c2.form("delete_run"):
    victim = st.selectbox("Run", [r.name for r in runs], key="delete_which")
    if st.form_submit_button("Delete", disabled=locked):
        _change(lambda: ws.delete_run(collection, victim), f"Deleted run {md(repr(victim))}.")
with c3.form("pick_baseline"):
    names = [r.name for r in runs]
    choice = st.selectbox("Baseline", names, index=names.index(baseline) if baseline in names else 0,
                          key="baseline_pick")
    if st.form_submit_button("Set baseline", disabled=locked):
        state.forget_baseline(collection)
        _change(lambda: ws.set_baseline(collection, choice), f"Baseline is now {md(repr(choice))}.")

st.markdown("**Lint report**")
for r in runs:
    findings = state.lint(sel, r.name, r.digest)
    problems = [f for f in findings if f.kind != "judged"]
    judged = next((f for f in findings if f.kind == "judged"), None)
    shown = f" · Judged@10 = {judged.value:.3f}" if judged and judged.value is not None else ""
    title = f"{md(r.name)}: {len(problems)} finding(s)" + shown
    with st.expander(title):
        if not findings:
            st.write("No findings.")
        for f in findings:
            examples = f" (e.g. {', '.join(md(e) for e in f.examples[:5])})" if f.examples else ""
            st.markdown(f"- **{f.kind}**: {md(f.message)}" + examples)

ingest.reports_drawn()   # the run ends: the messages it drew reached the browser

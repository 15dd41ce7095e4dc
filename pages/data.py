"""Data: sample collections, uploads with lint reports, rename/delete/baseline."""
import pandas as pd
import streamlit as st

import metrics
from ui import ingest, state

st.header("Data")
ws = state.workspace()
ingest.show_reports()

st.subheader("Sample collections")
cols = st.columns(len(state.SAMPLE_COLLECTIONS))
for col, name in zip(cols, state.SAMPLE_COLLECTIONS):
    if col.button(f"Load the {name} sample", key=f"sample_{name}", width="stretch"):
        with st.spinner(f"Loading {name}…"):
            state.load_sample(ws, name)
        st.session_state["collection"] = name
        ingest.report("success", f"Loaded the {name} sample collection.")
        st.rerun()

sel = state.selection()
collections = [c.name for c in ws.collections()]

with st.expander("New collection", expanded=not collections):
    new_name = st.text_input("Collection name", key="new_collection_name")
    new_qrels = st.file_uploader("Qrels (qid iter docno rel)", key="new_collection_qrels",
                                 type=None, accept_multiple_files=False)
    if st.button("Create collection", key="create_collection"):
        if not new_name.strip():
            st.error("Give the collection a name.")
        elif new_name.strip() in collections:
            st.error(f"A collection named {new_name.strip()!r} exists already; choose another name.")
        elif new_qrels is None:
            st.error("Upload the qrels file of the collection first.")
        else:
            [(file, qrels, error)] = ingest.parse_with_progress([new_qrels], ingest.qrels_reader, "qrels")
            if error:
                st.error(error)
            else:
                ws.create_collection(new_name.strip(), qrels)
                st.session_state["collection"] = new_name.strip()
                ingest.report("success", f"Created collection {new_name.strip()!r} with {len(qrels):,} judgments.")
                st.rerun()

if sel is None:
    st.stop()
collection = sel.collection
st.subheader(f"Collection: {collection}")

run_files = st.file_uploader("Runs (TREC format; .gz/.bz2/.xz, CSV, parquet or JSON also read) — drop several at once",
                             accept_multiple_files=True, key=f"runs_upload::{collection}")
fresh = ingest.new_files(run_files)
for file, run, error in ingest.parse_with_progress(fresh, ingest.run_reader, "run"):
    ingest.mark_done(file)
    if error:
        ingest.report("error", error)
        continue
    try:
        info = ws.add_run(collection, run)
        ingest.report("success", f"Added run **{info.name}** from {file.name}: {info.n_lines:,} lines, "
                                 f"{info.n_queries:,} queries.")
    except metrics.MetricsError as exc:
        ingest.report("error", str(exc))
if fresh:
    st.rerun()

with st.expander("Qrels, proxy judgments, topics and document titles"):
    c1, c2 = st.columns(2)
    slots = [
        (c1, "Replace qrels", "qrels", ingest.qrels_reader, lambda q: ws.set_qrels(collection, q)),
        (c2, "Proxy judgments (inferred labels, qrels format)", "proxy", ingest.qrels_reader,
         lambda q: ws.set_proxy(collection, q)),
        (c1, "Topics (qid, text)", "topics", lambda f: ingest.read_table(f, ("qid", "text")),
         lambda t: ws.set_topics(collection, t)),
        (c2, "Document titles (docno, title)", "docs", lambda f: ingest.read_table(f, ("docno", "title")),
         lambda t: ws.set_docs(collection, t)),
    ]
    changed = False
    for column, label, key, reader, save in slots:
        with column:
            upload = st.file_uploader(label, key=f"{key}_upload::{collection}")
            for file, parsed, error in ingest.parse_with_progress(ingest.new_files(upload), reader, key):
                ingest.mark_done(file)
                changed = True
                if error:
                    ingest.report("error", error)
                    continue
                try:
                    save(parsed)
                    ingest.report("success", f"Stored {key} from {file.name} ({len(parsed):,} rows).")
                except (metrics.MetricsError, ValueError) as exc:
                    ingest.report("error", f"{file.name}: {exc}")
    if changed:
        st.rerun()
    info = next(c for c in ws.collections() if c.name == collection)
    st.caption(f"Qrels: {info.qrels.source} ({info.qrels.n_lines:,} judgments, {info.qrels.n_queries:,} queries) · "
               f"proxy: {info.proxy.source if info.proxy else 'none'} · topics: {info.n_topics:,} · "
               f"titles: {info.n_docs:,}")

runs = ws.runs(collection)
st.markdown(f"**Runs in {collection}** ({len(runs)})")
if not runs:
    st.info("No runs yet: drop run files above.")
    st.stop()
baseline = ws.baseline(collection)
st.table(pd.DataFrame([{
    "name": r.name + (" (baseline)" if r.name == baseline else ""), "file": r.source,
    "uploaded (UTC)": r.uploaded.strftime("%Y-%m-%d %H:%M:%S"), "lines": f"{r.n_lines:,}",
    "queries": f"{r.n_queries:,}", "sha256": r.digest[:12]} for r in runs]))

c1, c2, c3 = st.columns(3)
with c1.form("rename_run"):
    old = st.selectbox("Run", [r.name for r in runs], key="rename_old")
    new = st.text_input("New name", key="rename_new")
    if st.form_submit_button("Rename"):
        try:
            ws.rename_run(collection, old, new.strip())
            ingest.report("success", f"Renamed {old!r} to {new.strip()!r}.")
            st.rerun()
        except metrics.MetricsError as exc:
            st.error(str(exc))
with c2.form("delete_run"):
    victim = st.selectbox("Run", [r.name for r in runs], key="delete_which")
    if st.form_submit_button("Delete"):
        ws.delete_run(collection, victim)
        ingest.report("success", f"Deleted run {victim!r}.")
        st.rerun()
with c3.form("pick_baseline"):
    names = [r.name for r in runs]
    choice = st.selectbox("Baseline", names, index=names.index(baseline) if baseline in names else 0,
                          key="baseline_pick")
    if st.form_submit_button("Set baseline"):
        ws.set_baseline(collection, choice)
        st.session_state.pop(f"baseline::{collection}", None)
        ingest.report("success", f"Baseline is now {choice!r}.")
        st.rerun()

st.markdown("**Lint report**")
for r in runs:
    findings = state.lint(sel, r.name, r.digest)
    problems = [f for f in findings if f.kind != "judged"]
    judged = next((f for f in findings if f.kind == "judged"), None)
    title = f"{r.name}: {len(problems)} finding(s)" + (f" · Judged@10 = {judged.value:.3f}" if judged and judged.value is not None else "")
    with st.expander(title):
        if not findings:
            st.write("No findings.")
        for f in findings:
            st.markdown(f"- **{f.kind}**: {f.message}" + (f" (e.g. {', '.join(map(str, f.examples[:5]))})" if f.examples else ""))

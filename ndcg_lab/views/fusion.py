"""Fusion: combine stored runs, see the fused run's leaderboard row and significance, store it, sweep."""
import streamlit as st

import metrics
from metrics import stats
from metrics.analysis import fusion as methods
from metrics.analysis import fusion_tuning
from metrics.report import methods as method_texts
from metrics.report.figures import fusion as fusion_figures
from ndcg_lab.ui import fusion, state
from ndcg_lab.ui.charts import plotly_chart
from ndcg_lab.ui.ingest import md
from ndcg_lab.ui.tables import leaderboard_html
from ndcg_lab.ui.text import visitor_text

st.header("Fusion")
sel = state.selection()
if sel is None:
    st.info("Add runs on the Data page first.")
    st.stop()
runs = state.workspace().runs(sel.collection)
if len(runs) < 2:
    st.info("Fusion needs at least two runs in the collection.")
    st.stop()
digests = {r.name: r.digest for r in runs}

names = st.multiselect("Runs to fuse", list(digests), default=list(digests)[:2], key=f"fuse_runs::{sel.collection}")
c1, c2, c3, c4 = st.columns(4)
method = c1.selectbox("Method", list(methods.METHODS), format_func=lambda m: f"{m}: {methods.METHODS[m].describe}",
                      key="fuse_method")
kind = methods.METHODS[method].kind
k = c2.number_input("RRF k", min_value=0.0, value=60.0, step=10.0, disabled=method != "rrf", key="fuse_k")
norm = c3.selectbox("Normalisation", list(methods.NORMS), index=list(methods.NORMS).index("minmax"),
                    format_func=lambda n: f"{n}: {methods.NORMS[n]}", disabled=kind == "rank", key="fuse_norm")
depth = c4.number_input("Depth (0 = every document)", min_value=0, value=0, step=10, key="fuse_depth")
if len(names) < 2:
    st.info("Pick at least two runs.")
    st.stop()
inputs = tuple((n, digests[n]) for n in names)
weights = None
if method == "wsum" or st.toggle("Weights", key="fuse_weighted"):
    cols = st.columns(len(names))
    weights = tuple(col.number_input(f"weight of {n}", min_value=0.0, value=1.0 / len(names), step=0.05,
                                     key=f"fuse_w::{n}") for col, n in zip(cols, names))
options = {"k": k, "norm": None if kind == "rank" else norm, "weights": weights, "depth": int(depth) or None}
measures = [metrics.with_gain(m, sel.gain) for m in metrics.DEFAULT_MEASURES]

try:
    result = fusion.fused(sel, inputs, method, **options)
    table, versus = fusion.comparison(sel, inputs, method, measures, **options)
except metrics.MetricsError as exc:
    st.error(str(exc))
    st.stop()

name = fusion.label(result.recipe)
markers = {(name, row.measure): row.marker for row in versus.itertuples() if row.against.startswith("baseline")}
st.caption(f"**{md(name)}** beside its inputs and the baseline · {state.TESTS[sel.test]}, "
           f"{md(stats.family_label(sel.correction, 'all'))} (per reference) · ▲/▼ against the baseline · "
           "bold: best in column")
st.html(leaderboard_html(table, markers))
st.markdown("**Significance of the fused run** (against the baseline and the best input)")
st.dataframe(versus[["against", "measure", "mean", "baseline_mean", "diff", "p_value", "p_adjusted", "marker",
                     "wins", "ties", "losses"]].rename(columns={"baseline_mean": "reference mean"}),
             hide_index=True, width="stretch")
stored = next((r for r in runs if r.digest == result.run.digest), None)
read_only = state.workspace().read_only
if stored is not None:
    if read_only:
        st.info(f"This collection already holds this fused run as **{md(stored.name)}**. This is a read-only "
                "link: you can fuse and compare here, but not store.")
    else:
        st.success(f"Stored in {md(sel.collection)} as **{md(stored.name)}**.")
elif st.button("Store the fused run in the workspace", type="primary", disabled=state.workspace().read_only,
               help="This is a read-only link: storing is turned off." if state.workspace().read_only else None):
    try:
        info = fusion.store(sel, result)
    except metrics.MetricsError as exc:
        st.error(md(visitor_text(str(exc))), icon=":material/block:")
    else:
        st.success(f"Stored **{md(info.name)}** with its recipe.")
        st.rerun()
with st.expander("Recipe"):
    st.json(result.recipe.to_dict())
with st.expander("Method"):
    st.markdown(method_texts.fusion_method(test=sel.test, correction=sel.correction, family="all"))

st.subheader("Sweep")
st.warning("Choosing k or the weights on the same queries that you report on overfits: the best setting "
           "looks better than it will on new queries. The table below tunes on one half of the queries "
           "(a seeded 2-fold split) and reports on the other.")
parameter = "k" if method == "rrf" else "weights"
measure = st.selectbox("Measure", measures, key="sweep_measure")
if parameter == "k":
    grid = [1, 5, 10, 20, 40, 60, 80, 100, 150, 200]
else:
    step = 0.1 if len(names) == 2 else 0.25
    grid = fusion_tuning.weight_grid(len(names), step)
if st.toggle(f"Sweep {'RRF k' if parameter == 'k' else 'the weights'} ({len(grid)} settings)", key="sweep_on"):
    try:
        curve, folds = fusion.sweep(sel, inputs, method, parameter, grid, measure, norm=options["norm"],
                                    depth=options["depth"])
    except metrics.MetricsError as exc:
        st.error(str(exc))
        st.stop()
    plotly_chart(fusion_figures.sweep_curve(curve, measure=measure, parameter=parameter), width="stretch")
    st.markdown("**Seeded 2-fold split** (seed 0): the setting chosen on one fold, reported on the other")
    st.dataframe(folds, hide_index=True, width="stretch")

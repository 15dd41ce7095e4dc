"""Curves: a measure at every cutoff k = 1..depth, or the interpolated precision-recall curve."""
import pandas as pd
import streamlit as st

import metrics
from metrics.report import export
from metrics.report.figures import curves as figures
from ndcg_lab.ui import curves, state
from ndcg_lab.ui.charts import plotly_chart
from ndcg_lab.ui.text import md, plain_frame

FAMILIES = {"nDCG": "nDCG", "P": "P", "R": "R", "AP": "AP", "IPrec": "IPrec (precision-recall)"}

st.header("Curves over k")
sel = state.selection()
if sel is None or not sel.systems:
    st.info("Select at least one system in the sidebar, or add runs on the Data page.")
    st.stop()

c1, c2, c3 = st.columns([2, 1, 1])
family = c1.radio("Measure", list(FAMILIES), format_func=FAMILIES.get, horizontal=True, key="curve_family")
with_band = c3.toggle("95% bootstrap band", key="curve_band",
                      help=f"Seeded percentile bootstrap over queries ({curves.N_BOOT:,} resamples, seed "
                           f"{curves.SEED}).")
band_note = (f" · band: 95% percentile bootstrap over queries ({curves.N_BOOT:,} resamples, seed {curves.SEED})"
             if with_band else "")
colors = figures.system_colors(state.all_system_names(sel))

if family == "IPrec":
    step = c2.selectbox("Recall levels", list(curves.STEPS), format_func=curves.STEPS.get, key="iprec_step")
    levels = curves.recall_levels(step)
    mean, n_queries = curves.precision_recall(sel, levels, with_band)
    fig = figures.precision_recall_curve(mean, colors=colors)
    plotly_chart(fig, width="stretch", config=figures.FIGURE_CONFIG, key="iprec_chart")
    st.caption(f"**IPrec@x** (trec_eval's iprec_at_recall) at {len(levels)} recall levels · {md(sel.collection)} · "
               f"mean over {n_queries} queries · IPrec@x = the best precision at or below the rank of the "
               "round(x R)-th relevant document (trec_eval 10's rounding)" + band_note + ".")
    recall = st.number_input("IPrec at recall level", min_value=0.0, max_value=1.0, value=0.3, step=0.05,
                             format="%.2f", key="iprec_recall")
    iprec = curves.iprec_table(sel, recall)
    st.table(iprec.set_axis(iprec.index.map(md).rename("system")))   # the run names as text, the measures as named
    stem = f"precision-recall-{sel.collection}"
    curve_measure, index = "IPrec@x", ["system", "recall"]
    curve_measures = [str(metrics.parse_measure(f"IPrec@{x!r}")) for x in levels]
else:
    log_x = c2.toggle("Log k", key="curve_log_x")
    measure = metrics.with_gain(family, sel.gain) if family == "nDCG" else family
    mean, n_queries = curves.mean_curves(sel, measure, with_band)
    changes = figures.order_changes(mean)
    label = f"{measure}@k"
    fig = figures.metric_curve(mean, measure_label=label, log_x=log_x, order_changes=changes, colors=colors)
    plotly_chart(fig, width="stretch", config=figures.FIGURE_CONFIG)
    depth = int(mean["k"].max()) if len(mean) else 0
    st.caption(f"**{label}** for k = 1..{depth} · {md(sel.collection)} · mean over {n_queries} queries · "
               "dotted lines: cutoffs where the systems' order changes" + band_note + ".")
    if changes:
        st.markdown("**Order changes across k**")
        st.table(plain_frame(pd.DataFrame([{"k": c["k"], "before (best first)": " > ".join(c["before"]),
                                            "after (best first)": " > ".join(c["after"])} for c in changes[:20]])))
    stem = f"{family}{'-' + sel.gain if family == 'nDCG' else ''}-curve-{sel.collection}"
    curve_measure, index = label, ["system", "k"]
    curve_measures = [label]

d1, d2 = st.columns(2)
d1.download_button("Download chart (HTML)", fig.to_html(include_plotlyjs="cdn"), file_name=f"{stem}.html",
                   mime="text/html")
stamp = {**state.stamp(sel, curve_measures), "measure": curve_measure}
if with_band:
    stamp["band"] = f"95% percentile bootstrap over queries, {curves.N_BOOT} resamples, seed {curves.SEED}"
d2.download_button("Download values (CSV)", export.to_csv(mean.set_index(index), stamp), file_name=f"{stem}.csv",
                   mime="text/csv")

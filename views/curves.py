"""Curves: a measure at every cutoff k = 1..depth, one line per system."""
import streamlit as st

import metrics
from metrics.report.figures import curves as figures
from ui import state
from ui.text import md

FAMILIES = {"nDCG": "nDCG", "P": "P", "R": "R", "AP": "AP"}
N_BOOT = 1000


@st.cache_data(show_spinner="Computing the curves…", max_entries=32)
def mean_curves(sel: state.Selection, measure: str, with_band: bool):
    """(mean curve per system with its seeded bootstrap band, number of queries), cached on the
    selection's digests: toggling log k only redraws."""
    per_query = state.curves(sel, measure)
    mean = figures.mean_curves(per_query, n_boot=N_BOOT if with_band else None, seed=0)
    return mean, max((len(c) for c in per_query.values()), default=0)


st.header("Curves over k")
sel = state.selection()
if sel is None or not sel.systems:
    st.info("Select at least one system in the sidebar, or add runs on the Data page.")
    st.stop()

c1, c2, c3 = st.columns([2, 1, 1])
family = c1.radio("Measure", list(FAMILIES), horizontal=True, key="curve_family")
log_x = c2.toggle("Log k", key="curve_log_x")
with_band = c3.toggle("95% bootstrap band", key="curve_band",
                      help=f"Seeded percentile bootstrap over queries ({N_BOOT:,} resamples, seed 0).")

measure = metrics.with_gain(family, sel.gain) if family == "nDCG" else family
mean, n_queries = mean_curves(sel, measure, with_band)
changes = figures.order_changes(mean)
label = f"{measure}@k"
fig = figures.metric_curve(mean, measure_label=label, log_x=log_x, order_changes=changes,
                           colors=figures.system_colors(state.all_system_names(sel)))
st.plotly_chart(fig, width="stretch", config=figures.FIGURE_CONFIG)

depth = int(mean["k"].max()) if len(mean) else 0
st.caption(f"**{label}** for k = 1..{depth} · {md(sel.collection)} · mean over {n_queries} queries · "
           "dotted lines: cutoffs where the systems' order changes"
           + (f" · band: 95% percentile bootstrap over queries ({N_BOOT:,} resamples, seed 0)" if with_band else "")
           + ".")
if changes:
    st.markdown("**Order changes across k**")
    st.table([{"k": c["k"], "before (best first)": " > ".join(c["before"]),
               "after (best first)": " > ".join(c["after"])} for c in changes[:20]])

d1, d2 = st.columns(2)
d1.download_button("Download chart (HTML)", fig.to_html(include_plotlyjs="cdn"),
                   file_name=f"{family}-curve-{sel.collection}.html", mime="text/html")
d2.download_button("Download values (CSV)", mean.to_csv(index=False),
                   file_name=f"{family}-curve-{sel.collection}.csv", mime="text/csv")

"""Leaderboard: systems x measures, best per column marked, significance against the baseline."""
import streamlit as st

import metrics
from metrics.report import export
from metrics.report import text as report_text
from ndcg_lab.ui import scores, state
from ndcg_lab.ui.compare import canonical_measures, significance, suggested_measures
from ndcg_lab.ui.tables import leaderboard_html, significance_details
from ndcg_lab.ui.text import md

st.header("Leaderboard")
sel = state.selection()
if sel is None or not sel.systems:
    st.info("Select at least one system in the sidebar, or add runs on the Data page.")
    st.stop()

extra = st.session_state.setdefault("extra_measures", [])
# Expanders that rerun when opened draw their contents only while open: the first screen loads
# none of their widgets' code.
adder = st.expander("Add a measure", key="add_measure_open", on_change="rerun")
if adder.open:
    with adder:
        with st.form("add_measure", clear_on_submit=True):
            c1, c2 = st.columns(2)
            known = c1.selectbox("Known measures", suggested_measures(sel.gain), index=None, accept_new_options=True,
                                 placeholder="pick or type: Bpref, infAP, IPrec@0.3, ndcg_cut.10, P.5,10 …",
                                 key="add_measure_known")
            text = c2.text_input("Measure (ir_measures syntax)", placeholder="or type: nDCG@100, P(rel=2)@5, bpref",
                                 help="ir_measures syntax or a trec_eval spelling (ndcg_cut.10, P.5,10, "
                                      "iprec_at_recall.0.3); one that stands for several adds them all. "
                                      "nDCG-like columns follow the sidebar's gain.")
            wanted = (text or "").strip() or (known or "").strip()
            if st.form_submit_button("Add") and wanted:
                names, errors = canonical_measures([wanted])
                for message in errors:
                    st.error(message)
                try:
                    added = [metrics.with_gain(name, sel.gain) for name in names]
                    if added:
                        state.means(sel, added)  # refuse what cannot be computed
                    extra.extend(name for name in dict.fromkeys(added) if name not in extra)
                except metrics.MetricsError as exc:
                    st.error(str(exc))
        if extra and st.button("Reset to the default columns"):
            extra.clear()
            st.rerun()

measures = [metrics.with_gain(m, sel.gain) for m in (*metrics.DEFAULT_MEASURES, *extra)]
measures = list(dict.fromkeys(measures))
kind = scores.choice()
table, n_queries = state.means(sel, measures)
if kind == "z":
    table = scores.means(sel, measures)

markers, tips = {}, {}
test_name = state.TESTS[sel.test]
corrected = (f"{state.CORRECTIONS[sel.correction]} correction over all cells" if sel.correction != "none"
             else "no multiple-testing correction")
if sel.baseline in table.index and len(table.index) > 1:
    tests = significance(sel, tuple(measures), sel.baseline, sel.test, sel.correction, kind=kind)
    for row in tests.itertuples():
        markers[(row.system, row.measure)] = row.marker
        adjusted = (f"{state.CORRECTIONS[sel.correction]}-corrected p = {row.p_adjusted:.4g} "
                    f"(over {len(tests)} comparisons)" if sel.correction != "none" else "no correction")
        tips[(row.system, row.measure)] = f"{test_name} vs {sel.baseline}: p = {row.p_value:.4g}; {adjusted}"

if markers:
    significance_note = (f"baseline: **{md(sel.baseline)}** · ▲/▼ significantly better/worse than the baseline "
                         f"({test_name}, p < 0.05, {corrected}"
                         + (", on the per-topic z-scores)" if kind == "z" else ")"))
else:
    significance_note = (f"no significance markers: select the baseline (**{md(sel.baseline)}**) and at least "
                         "one other system")
if kind == "z":
    st.markdown(f"**Standardised scores: {md(scores.header(sel))}** · each value is the mean over the topics of "
                "(score − the reference runs' mean) / their sample standard deviation, per topic and measure")
st.caption(f"Collection **{md(sel.collection)}** · {n_queries} queries · gain: {state.GAINS[sel.gain]} · "
           f"{significance_note} · bold: best in column")
st.html(leaderboard_html(table, markers, tips))

if markers:
    details = st.expander("Significance details", key="significance_details_open", on_change="rerun")
    if details.open:
        details.table(significance_details(tests))

stamp = state.stamp(sel, measures) | (scores.stamp(sel) if kind == "z" else {})
if markers:
    stamp |= export.significance_stamp(sel.baseline, sel.test, sel.correction)
latex_marks = report_text.latex_marks(markers)
marked = {"markers": {system: {measure: mark for (s, measure), mark in markers.items() if s == system and mark}
                      for system in table.index}} if markers else {}
c1, c2, c3 = st.columns(3)
# The files are written when a button is clicked (a callable), and a click reruns nothing.
c1.download_button("Export CSV", lambda: export.to_csv(table, stamp), file_name=f"leaderboard-{sel.collection}.csv",
                   mime="text/csv", on_click="ignore")
c2.download_button("Export LaTeX", lambda: export.to_latex(table, latex_marks, stamp),
                   file_name=f"leaderboard-{sel.collection}.tex", mime="text/x-tex", on_click="ignore")
c3.download_button("Export JSON", lambda: export.to_json(table, stamp, marked),
                   file_name=f"leaderboard-{sel.collection}.json", mime="application/json", on_click="ignore")

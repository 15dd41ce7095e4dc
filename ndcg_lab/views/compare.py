"""Compare: systems against a baseline, query by query, with the statistics to trust the difference."""
import json
from functools import partial

import streamlit as st

import metrics
from metrics import stats
from metrics.report import export, methods
from metrics.report import text as report_text
from metrics.report.figures import compare as figs
from metrics.report.figures.curves import FIGURE_CONFIG
from ndcg_lab.ui import compare as ui
from ndcg_lab.ui import scores, state
from ndcg_lab.ui.charts import plotly_chart
from ndcg_lab.ui.text import md, plain_frame

st.header("Compare systems")
sel = state.selection()
if sel is None:
    st.info("The workspace is empty: load a sample or upload runs on the Data page.")
    st.stop()
names = ui.run_names(sel)
if len(names) < 2:
    st.info("Comparing needs at least two runs in this collection: add one on the Data page.")
    st.stop()

# ---------------------------------------------------------------- what to compare
c1, c2 = st.columns([1, 3])
default_baseline = sel.baseline if sel.baseline in names else names[0]
baseline = c1.selectbox("Baseline", names, index=names.index(default_baseline),
                        key=f"cmp_baseline::{sel.collection}::{default_baseline}")
others = [n for n in names if n != baseline]
default_systems = [n for n in sel.system_names if n != baseline] or others[:1]
systems = c2.multiselect("Systems", others, default=default_systems, key=f"cmp_systems::{sel.collection}::{baseline}")

c1, c2, c3 = st.columns([2, 1, 1])
default_measure = metrics.with_gain("nDCG@10", sel.gain)
picked = ui.measure_picker(c1, sel.gain, default_measure)
test = c2.selectbox("Test", list(state.TESTS), index=list(state.TESTS).index(sel.test), format_func=state.TESTS.get,
                    key=f"cmp_test::{sel.test}")
correction = c3.selectbox("Correction", list(state.CORRECTIONS), index=list(state.CORRECTIONS).index(sel.correction),
                          format_func=state.CORRECTIONS.get, key=f"cmp_correction::{sel.correction}",
                          help="Multiple-testing correction.")
correction_family = st.radio(
    "Correction family", list(stats.FAMILIES), format_func=stats.FAMILIES.get, horizontal=True, key="cmp_family",
    help="The p-values corrected together. Every cell: all systems × measures of the table (the strictest). Each "
         "measure apart: as PyTerrier. Descriptive measures (Judged@k, NumRet, ...) are never tested.")
with st.expander("Test settings", expanded=False):
    s1, s2, s3, s4, s5 = st.columns(5)
    seed = int(s1.number_input("Seed", min_value=0, value=stats.DEFAULT_SEED, step=1, key="cmp_seed",
                               help="Seeds every random draw: the same seed gives the same p-values and CIs."))
    permutations = int(s2.number_input("Permutations", min_value=100, value=stats.DEFAULT_PERMUTATIONS, step=1000,
                                       key="cmp_permutations",
                                       help=f"Randomisation test; exact enumeration up to {stats.EXACT_MAX} "
                                            "non-zero differences."))
    resamples = int(s3.number_input("Bootstrap resamples", min_value=100, value=stats.DEFAULT_RESAMPLES, step=1000,
                                    key="cmp_resamples", help="Confidence intervals and the bootstrap test."))
    tolerance = float(s4.number_input("Tie tolerance", min_value=0.0, value=stats.TIE_TOLERANCE, format="%.1e",
                                      key="cmp_tolerance", help="|Δ| at or below this is a tie."))
    alpha = float(s5.number_input("α", min_value=0.0001, max_value=0.5, value=0.05, step=0.01, format="%.4f",
                                  key="cmp_alpha"))

kind = scores.choice()
measures, errors = ui.canonical_measures(picked)
for message in errors:
    st.error(message)
if not systems or not measures:
    st.info("Pick at least one system and one measure to compare with the baseline.")
    st.stop()

compared = ui.with_systems(sel, [baseline, *systems])
try:
    table = ui.comparison(compared, tuple(measures), baseline, tuple(systems), test, correction, seed, permutations,
                          resamples, tolerance, alpha, correction_family, kind)
except metrics.MetricsError as exc:
    st.error(md(str(exc)))
    st.stop()
n_queries = int(table["n_queries"].iloc[0])

# ---------------------------------------------------------------- one table per measure
if kind == "z":
    st.markdown(f"**Standardised scores: {md(scores.header(sel))}** · means, differences and the paired tests "
                "below are on the per-topic z-scores ((score − the reference runs' mean) / their sample standard "
                "deviation, per topic and measure)")
tested = int(table["p_value"].notna().sum())
st.caption(f"**{state.TESTS[test]}**, two-sided · "
           f"correction: **{md(stats.family_label(correction, correction_family))}**, "
           f"{tested} tested comparison(s)"
           + (f", {len(table) - tested} descriptive not tested" if tested < len(table) else "")
           + f" · ▲/▼: corrected p < {alpha:g} · "
           f"{n_queries} queries "
           f"(a query a run lacks scores 0) · Δ = system − {md(baseline)} · CI: percentile bootstrap, {resamples:,} "
           f"resamples · d: paired Cohen's d · seed {seed}")
with st.expander("Method"):
    st.markdown(methods.compare_method(test=test, correction=correction, family=correction_family, alpha=alpha,
                                       seed=seed, resamples=resamples, permutations=permutations, topics=n_queries))
for measure, rows in table.groupby("measure", sort=False):
    st.subheader(measure)
    st.caption(f"Baseline **{md(baseline)}**: mean {rows['baseline_mean'].iloc[0]:.4f} "
               f"[{rows['baseline_ci_low'].iloc[0]:.4f}, {rows['baseline_ci_high'].iloc[0]:.4f}]")
    st.table(plain_frame(ui.display_table(rows)))

stamp = {**state.stamp(compared, measures),
         **export.significance_stamp(baseline, test, correction, alpha, correction_family),
         "seed": seed, "permutations": permutations, "resamples": resamples, "tie_tolerance": tolerance,
         **(scores.stamp(sel) if kind == "z" else {})}
e1, e2, e3 = st.columns(3)
e1.download_button("Export table (CSV)", export.to_csv(table.set_index(["measure", "system"]), stamp),
                   file_name=f"compare-{sel.collection}.csv", mime="text/csv")
e2.download_button("Export means (LaTeX)",
                   export.to_latex(ui.means_table(table, baseline), report_text.comparison_marks(table), stamp),
                   file_name=f"compare-{sel.collection}.tex", mime="text/x-tex")
e3.download_button("Export table (JSON)",
                   json.dumps({"stamp": stamp, "comparisons": json.loads(table.to_json(orient="records"))}, indent=2),
                   file_name=f"compare-{sel.collection}.json", mime="application/json")

# ---------------------------------------------------------------- query by query
st.divider()
st.subheader("Query by query")
c1, c2 = st.columns(2)
system = c1.selectbox("System", systems, key="cmp_inspect_system") if len(systems) > 1 else systems[0]
measure = c2.selectbox("Measure", measures, key="cmp_inspect_measure") if len(measures) > 1 else measures[0]
frame = scores.frame(compared, measures, kind)
rows = ui.per_query(frame, measure, baseline, system, state.topics(sel))
row = table[(table["measure"] == measure) & (table["system"] == system)].iloc[0]
st.markdown(f"**{md(system)}** vs **{md(baseline)}** on **{md(measure)}**: {row['mean']:.4f} vs "
            f"{row['baseline_mean']:.4f}, "
            f"Δ = {row['diff']:+.4f} ({report_text.percent(row['rel_diff'])}); better on {row['wins']}, tied on "
            f"{row['ties']}, worse on {row['losses']} of {n_queries} queries.")

charts = {}
charts.update(ui.query_figures(rows, measure, baseline, system, tolerance))
st.caption("Per-query Δ, most helped first. " + (
    f"With more than {figs.MAX_MARKS:,} queries the bars are one filled line and the scatter a density: "
    "hover names a query; open it in the query explorer." if len(rows) > figs.MAX_MARKS
    else "Click a bar to open the query in the query explorer."))
event = plotly_chart(charts["Per-query difference"], width="stretch", config=FIGURE_CONFIG, on_select="rerun",
                        selection_mode="points", key="cmp_delta_chart")
ui.open_query("delta", ui.clicked_qid(event), [baseline, system])

left, right = st.columns(2)
with left:
    st.markdown("**Baseline against system, per query** (above the diagonal: improved)")
    scatter = plotly_chart(charts["Paired scatter"], width="stretch", config=FIGURE_CONFIG, on_select="rerun",
                              selection_mode="points", key="cmp_scatter_chart")
    ui.open_query("scatter", ui.clicked_qid(scatter), [baseline, system])
with right:
    st.markdown("**Distribution of the differences**")
    plotly_chart(charts["Distribution of differences"], width="stretch", config=FIGURE_CONFIG)

for column, helped, title, none in zip(st.columns(2), (True, False), ("Helped most", "Hurt most"),
                                       ("No query improved.", "No query got worse.")):
    with column:
        st.markdown(f"**{title}** by {md(system)}")
        queries = ui.extremes(rows, helped=helped, count=10, baseline=baseline, system=system, tolerance=tolerance)
        if len(queries):
            st.dataframe(queries, column_config=ui.extremes_config(baseline, system), width="stretch",
                         key=f"cmp_{'helped' if helped else 'hurt'}")
            ui.full_topics(rows, queries.index, ui.TOPIC_CHARS)
        else:
            st.caption(none)

# ---------------------------------------------------------------- over cutoffs
st.divider()
family = ui.profile_family(measure, sel.gain)
st.subheader(f"Difference over cutoffs: {family}@k")
depth = max(int(state.ranked(sel, n, d).lengths.max()) for n, d in ui.with_systems(sel, [baseline, system]).systems)
max_k = 1
if depth > 1:
    max_k = st.slider("Deepest cutoff K", min_value=1, max_value=depth, value=min(depth, 100), key="cmp_max_k")
prof = ui.profile(sel, family, baseline, system, max_k, seed, resamples)
charts[f"Difference over cutoffs ({family}@k)"] = figs.profile_figure(prof, measure_label=f"{family}@k",
                                                                      baseline=baseline, system=system)
plotly_chart(charts[f"Difference over cutoffs ({family}@k)"], width="stretch", config=FIGURE_CONFIG)
helps = prof.loc[prof["ci_low"] > 0, "k"].tolist()
hurts = prof.loc[prof["ci_high"] < 0, "k"].tolist()
st.caption(f"Mean Δ of {family}@k for k = 1..{max_k} with its {int(stats.DEFAULT_LEVEL * 100)}% percentile "
           f"bootstrap CI (seed {seed}, {resamples:,} resamples, the same resamples at every k; unadjusted). "
           f"CI above 0 at {len(helps)} cutoff(s), below 0 at {len(hurts)}."
           + (" Raw scores: the profile is not standardised." if kind == "z" else ""))

# ---------------------------------------------------------------- all systems at once
if len(systems) >= 2:
    with st.expander(f"All {len(systems) + 1} systems: Tukey HSD and ranking stability", expanded=False):
        everyone = (baseline, *systems)
        for m in measures:
            st.markdown(f"**Tukey HSD, {m}** (two-way: systems × queries, the query effect removed; "
                        f"{int(stats.DEFAULT_LEVEL * 100)}% simultaneous CIs)")
            hsd = ui.tukey(compared, m, everyone, kind)
            st.table(plain_frame(hsd.assign(**{c: hsd[c].map("{:+.4f}".format) for c in ("diff", "ci_low", "ci_high")},
                                p_value=hsd["p_value"].map(report_text.format_p))
                     .rename(columns={"system_a": "A", "system_b": "B", "diff": "Δ (B − A)", "ci_low": "CI low",
                                      "ci_high": "CI high", "p_value": "p"}).set_index(["A", "B"])))
        stability = stats.ranking_stability(ui.cutoff_means(compared, family, max_k))
        st.markdown(f"**Ranking stability**: Kendall's τ between the systems' orders by {family} at each cutoff")
        few = methods.few_systems_warning(len(everyone))
        if few:
            st.caption(few)
        st.table(stability.map("{:.3f}".format))

profile_stamp = {**stamp, "family": family, **({"scores": "raw"} if kind == "z" else {})}
d1, d2, d3 = st.columns(3)
# Made on a click (a callable): the charts' page and the per-query rows of thousands of queries are
# megabytes that a run would otherwise build and send each time.
d1.download_button("Download charts (HTML)",
                   partial(figs.figures_html, dict(charts), f"{system} vs {baseline} · {sel.collection}"),
                   file_name=f"compare-{system}-vs-{baseline}.html", mime="text/html")
per_query_export = rows.rename(columns={"baseline": baseline, "system": system}).set_index("qid")
d2.download_button("Per-query Δ (CSV)", partial(export.to_csv, per_query_export, {**stamp, "measure": measure}),
                   file_name=f"per-query-{system}-vs-{baseline}.csv", mime="text/csv")
d3.download_button("Cutoff profile (CSV)", partial(export.to_csv, prof.set_index("k"), profile_stamp),
                   file_name=f"profile-{system}-vs-{baseline}.csv", mime="text/csv")

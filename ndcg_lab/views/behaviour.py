"""Measure behaviour: do the measures agree, which tells systems apart, how many topics it takes,
and what incomplete or alternative judgments do to the conclusions."""
import pandas as pd
import streamlit as st

from metrics.report import methods
from metrics.report.figures import behaviour as figs
from metrics.report.figures.curves import FIGURE_CONFIG, system_colors
from metrics.stats import behaviour as B
from ndcg_lab.ui import behaviour as ui
from ndcg_lab.ui import compare as cmp
from ndcg_lab.ui import paths, state
from ndcg_lab.ui.charts import plotly_chart
from ndcg_lab.ui.text import md, plain_frame

st.header("Measure behaviour")
sel = state.selection()
if sel is None or len(sel.systems) < 2:
    st.info("Measure behaviour compares system orders: select at least two systems in the sidebar, or add runs "
            "on the Data page.")
    st.stop()

colors = system_colors(state.all_system_names(sel))
defaults = ui.default_measures(sel.gain)
offered = list(dict.fromkeys([*defaults, *cmp.suggested_measures(sel.gain)]))
st.caption(f"Collection **{md(sel.collection)}** · {len(sel.systems)} systems · every random draw is seeded "
           "(the seed is shown with each result).")
few = methods.few_systems_warning(len(sel.systems))
if few:
    st.warning(few)
with st.expander("Method"):
    st.markdown(methods.behaviour_method(seed=ui.SEED, resamples=ui.TAU_RESAMPLES, draws=ui.DRAWS,
                                         swap_method=st.session_state.get("beh_swap_method", "disjoint")))

# Only the open tab is computed and drawn (a switch reruns the page): each tab resamples or
# re-evaluates the runs, seconds of work on a collection of millions of lines.
tab_agree, tab_power, tab_size, tab_reduce, tab_judges = st.tabs(
    ["Agreement", "Discriminative power", "Topic-set size", "Incomplete judgments", "Two qrels"],
    key="behaviour_tab", on_change="rerun")

# ------------------------------------------------------------------ agreement of measures
with tab_agree:
    if tab_agree.open:
        measures = ui.measure_picker(st, offered, defaults, f"beh_measures::{sel.gain}")
        if len(measures) < 2:
            st.info("Pick two or more measures to compare their system orders.")
        else:
            result = ui.agreement(sel, tuple(measures))
            left, right = st.columns(2)
            with left:
                plotly_chart(figs.tau_heatmap(result["tau"]), config=FIGURE_CONFIG, key="beh_tau")
            with right:
                plotly_chart(figs.tau_heatmap(result["tau_ap"], title="τ_AP (symmetric)"), config=FIGURE_CONFIG,
                                key="beh_tau_ap")
            st.markdown("**Kendall's τ-b between the system orders**")
            st.table(plain_frame(ui.matrix_table(result["tau"])))
            st.caption(f"Over {len(sel.systems)} systems (the order of their means over all topics). "
                       "τ-b counts every discordant pair of systems alike (scipy.stats.kendalltau); τ_AP (Yilmaz, "
                       "Aslam & Robertson 2008) weighs a swap near the top more, symmetrised here as "
                       "(τ_AP(a, b) + τ_AP(b, a)) / 2. Means are rounded to 12 decimals before ordering.")
            st.markdown("**System order under each measure** (1 = best)")
            st.table(plain_frame(result["ranks"]))

            c1, c2 = st.columns(2)
            a = c1.selectbox("x measure", measures, index=0, key="beh_scatter_a")
            b = c2.selectbox("y measure", measures, index=1, key="beh_scatter_b")
            swaps = B.swapped_pairs(result["means"], a, b)
            plotly_chart(figs.means_scatter(result["means"], a, b, swaps, colors=colors), config=FIGURE_CONFIG,
                            key="beh_scatter")
            st.caption(f"Mean per system under {md(a)} and {md(b)}: τ-b = {result['tau'].loc[a, b]:.3f}, "
                       f"τ_AP = {result['tau_ap'].loc[a, b]:.3f}; {len(swaps)} pair(s) of systems swap "
                       "(joined by red dashed lines, the systems ringed in red).")
            if a != b:
                for interval in ui.tau_intervals(sel, a, b, ui.TAU_RESAMPLES, ui.SEED):
                    st.markdown(ui.interval_text(interval))
            if len(swaps):
                st.table(plain_frame(swaps.rename(columns={"a_diff": f"Δ {a}", "b_diff": f"Δ {b}"})))
            st.markdown("**Per-query agreement**")
            plotly_chart(ui.query_scatter(sel, a, b, tuple(colors.items())), config=FIGURE_CONFIG,
                         key="beh_query_scatter")
            st.table(plain_frame(ui.per_query(sel, a, b).set_index("system")))
            st.caption(f"Correlation of the per-query scores of {md(a)} and {md(b)}: per system over its queries, and "
                       "over all (system, query) pairs pooled. Pearson's r and Kendall's τ-b.")

# ------------------------------------------------------------------ discriminative power
with tab_power:
    if tab_power.open:
        c1, c2, c3 = st.columns([3, 1, 1])
        pm = ui.measure_picker(c1, offered, defaults[:3], f"beh_power_measures::{sel.gain}")
        resamples = int(c2.number_input("Resamples", min_value=100, max_value=20_000, value=ui.RESAMPLES, step=100,
                                        key="beh_resamples"))
        seed = int(c3.number_input("Seed", min_value=0, value=ui.SEED, step=1, key="beh_seed"))
        alpha = st.select_slider("α", options=[0.01, 0.05, 0.1], value=0.05, key="beh_alpha")
        if not pm:
            st.info("Pick at least one measure.")
        else:
            results = {m: ui.power(sel, m, resamples, seed, alpha) for m in pm}
            test = st.radio("ASL of", ["bootstrap", "tukey"], horizontal=True, key="beh_asl_test",
                            format_func={"bootstrap": "paired bootstrap (Sakai 2006)",
                                         "tukey": "randomised Tukey HSD"}.get)
            plotly_chart(figs.asl_curves({m: B.asl_curve(r["asl"], test) for m, r in results.items()}, alpha=alpha,
                                            test=test), config=FIGURE_CONFIG, key="beh_asl")
            share = [{"measure": m, "pairs": len(r["asl"]), "significant (bootstrap)": f"{r['share']['bootstrap']:.0%}",
                      "significant (Tukey HSD)": f"{r['share']['tukey']:.0%}"} for m, r in results.items()]
            st.table(plain_frame(pd.DataFrame(share).set_index("measure")))
            st.caption(f"ASL of every pair of systems, {resamples:,} resamples per pair, seed {seed}; share of pairs "
                       f"with ASL < α = {alpha:g}. The paired bootstrap tests each pair alone (studentised); the "
                       "randomised Tukey HSD permutes each topic's scores across all systems and compares with the "
                       "largest difference, so it holds the family-wise error over all pairs.")
            with st.expander("ASL per pair"):
                m = st.selectbox("Measure", pm, key="beh_asl_measure")
                st.dataframe(plain_frame(results[m]["asl"]), hide_index=True)

# ------------------------------------------------------------------ topic-set size and swap rates
with tab_size:
    if tab_size.open:
        c1, c2, c3, c4 = st.columns(4)
        sm = ui.measure_picker(c1, offered, defaults[:3], f"beh_size_measures::{sel.gain}")
        swap_method = st.radio("Swap method", list(B.SWAP_METHODS), horizontal=True, key="beh_swap_method",
                               format_func=B.SWAP_METHODS.get)
        delta = float(c2.number_input("Minimum difference δ", min_value=0.001, max_value=1.0, value=0.02, step=0.01,
                                      format="%.3f", key="beh_delta"))
        target = float(c3.number_input("Power 1 − β", min_value=0.5, max_value=0.99, value=0.8, step=0.05,
                                       key="beh_target"))
        size_alpha = float(c4.number_input("α", min_value=0.001, max_value=0.5, value=0.05, step=0.01, format="%.3f",
                                           key="beh_size_alpha"))
        if not sm:
            st.info("Pick at least one measure.")
        else:
            sized = {m: ui.topic_set_size(sel, m, ui.RESAMPLES, ui.SEED, size_alpha, delta, target, swap_method)
                     for m in sm}
            plotly_chart(figs.swap_curves({m: r["swap_summary"] for m, r in sized.items()}), config=FIGURE_CONFIG,
                            key="beh_swaps")
            n_topics = next(iter(sized.values()))["n_topics"]
            st.caption(f"Swap rate (Voorhees & Buckley 2002), method: {B.SWAP_METHODS[swap_method]}; "
                       f"{ui.RESAMPLES:,} seeded draws (seed {ui.SEED}) of two topic sets of each size from the "
                       f"{n_topics} topics; a pair of systems swaps when the two sets order it differently. "
                       + methods.swap_rise_note(swap_method))
            designs = pd.concat([r["topics"].assign(measure=m) for m, r in sized.items()])
            st.markdown("**Topics needed** (Sakai 2016)")
            st.table(plain_frame(designs.set_index(["measure", "design"])))
            st.caption(f"The fewest topics with power ≥ {target:g} to detect a difference of δ = {delta:g} at "
                       f"α = {size_alpha:g}. Paired t-test: σ_d² = 2 V_E, V_E the residual variance of the topics × "
                       "systems two-way ANOVA; one-way ANOVA: V_E the mean within-system variance, the least "
                       "favourable configuration (two systems δ apart). Exact noncentral t and F powers.")
            with st.expander("Swap rate by difference"):
                m = st.selectbox("Measure", sm, key="beh_swap_measure")
                st.dataframe(sized[m]["swaps"], hide_index=True)

# ------------------------------------------------------------------ incomplete judgments
with tab_reduce:
    if tab_reduce.open:
        c1, c2 = st.columns([1, 1])
        kind = c1.radio("Reduction", ["keep", "pool"], horizontal=True, key="beh_reduction",
                        format_func={"keep": "keep x% per query (random)", "pool": "pool to depth d"}.get)
        reduce_seed = int(c2.number_input("Seed", min_value=0, value=ui.SEED, step=1, key="beh_reduce_seed"))
        column = st.radio("Agreement", ["tau", "tau_ap"], horizontal=True, key="beh_reduce_column",
                          format_func={"tau": "Kendall's τ-b", "tau_ap": "τ_AP"}.get)
        levels = ui.KEEP_LEVELS if kind == "keep" else ui.POOL_DEPTHS
        reduced = ui.reduction(sel, tuple(ui.reduction_measures(sel.gain)), kind, levels, reduce_seed, ui.DRAWS)
        plotly_chart(figs.reduction_curves(reduced["tau"], column=column), config=FIGURE_CONFIG, key="beh_reduce")
        st.caption(("Each query keeps a seeded random x% of its judgments (at least one; nested across x)"
                    if kind == "keep" else "Only the judgments in the top d of any selected system are kept")
                   + (f" ({ui.DRAWS} draws, seeds {reduce_seed} to {reduce_seed + ui.DRAWS - 1}: the line is their "
                      "mean, the band spans the lowest to the highest draw)" if kind == "keep" else "")
                   + "; τ compares each measure's system order with its order under the full "
                     f"qrels ({reduced['settings']['judgments']:,} judgments). nDCG@10 scores unjudged documents 0; "
                     "condensed nDCG drops them; Bpref and infAP are built for incomplete judgments.")
        wide = reduced["means"].pivot_table(index=["level", "system"], columns="measure", values="mean", sort=False)
        st.dataframe(plain_frame(wide))

# ------------------------------------------------------------------ two qrels
with tab_judges:
    if tab_judges.open:
        if not sel.proxy_digest:
            st.info(f"Collection **{md(sel.collection)}** has a single qrels. To compare two judges, open the Data "
                    "page and add a second set of labels (model, crowd or corrected) as **Proxy judgments**: they are "
                    "judge B here, the qrels judge A.")
            st.page_link(paths.view("data"), label="Open the Data page", icon=":material/folder_open:")
        else:
            c1, c2, c3 = st.columns([2, 1, 1])
            judge_measure = c1.selectbox("Measure", offered, key=f"beh_judge_measure::{sel.gain}")
            threshold = int(c2.number_input("Relevant from grade", min_value=1, max_value=10, value=1, step=1,
                                            key="beh_threshold"))
            names = sel.system_names
            baseline = c3.selectbox("Baseline", names, index=names.index(sel.baseline) if sel.baseline in names else 0,
                                    key="beh_judge_baseline")
            out = ui.judges(sel, judge_measure, threshold, baseline, sel.test, ui.SEED)
            labels = out["labels"]
            m1, m2, m3, m4, m5 = st.columns(5)
            m1.metric("Pairs judged by both", f"{labels['shared']:,}")
            m2.metric("Only in the qrels (A)", f"{labels['only_a']:,}")
            m3.metric("Only in the proxy (B)", f"{labels['only_b']:,}")
            m4.metric("Weighted κ (linear)", f"{labels['kappa_linear']:.3f}")
            m5.metric("Krippendorff α (ordinal)", f"{labels['alpha_ordinal']:.3f}")
            left, right = st.columns([2, 3])
            with left:
                plotly_chart(figs.confusion_heatmap(labels["confusion"], a="qrels (A)", b="proxy (B)"),
                                config=FIGURE_CONFIG, key="beh_confusion")
                st.caption(f"Quadratic κ = {labels['kappa_quadratic']:.3f}. Binary (grade ≥ {threshold}): agreement "
                           f"{labels['binary_agreement']:.1%}, Cohen's κ = {labels['binary_kappa']:.3f}.")
            with right:
                shift = out["shift"]
                tau_row = shift["tau"].iloc[0]
                st.markdown(f"**{md(judge_measure)} under each qrels**: τ-b = {tau_row['tau']:.3f}, "
                            f"τ_AP = {tau_row['tau_ap']:.3f} (A the reference)")
                shown = shift["means"].drop(columns="measure").merge(
                    shift["significance"][["system", "marker_a", "marker_b", "changed"]], on="system", how="left")
                st.table(plain_frame(shown.set_index("system")))
                changed = shift["significance"].query("changed")["system"].tolist()
                st.caption(f"shift = mean under B − mean under A. ▲/▼: significantly better/worse than "
                           f"{md(baseline)} ({state.TESTS.get(sel.test, sel.test)}, Holm, α = 0.05) under each qrels; "
                           + (f"significance changes for {', '.join(md(s) for s in changed)}." if changed
                              else "no system's significance changes."))

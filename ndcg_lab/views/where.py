"""Where it differs: how much of the possible gain a re-ranker reached, how deep re-ranking pays,
and in which rank bands and grades two runs differ."""
import streamlit as st

import metrics
from metrics import stats
from metrics.analysis import bands as bands_analysis
from metrics.report import methods
from metrics.report.figures import where as figs
from metrics.report.figures.curves import FIGURE_CONFIG, system_colors
from ndcg_lab.ui import state, where
from ndcg_lab.ui.charts import plotly_chart
from ndcg_lab.ui.text import md, plain_frame

st.header("Where it differs")
sel = state.selection()
if sel is None:
    st.info("The workspace is empty: load a sample or upload runs on the Data page.")
    st.stop()
names = list(where.digests(sel))
if len(names) < 2:
    st.info("This page compares two runs: add another on the Data page.")
    st.stop()

# ---------------------------------------------------------------- the pair
default_a, default_b = where.default_pair(sel, names)
c1, c2 = st.columns(2)
a = c1.selectbox("First stage / baseline (A)", names, index=names.index(default_a),
                 key=f"where_a::{sel.collection}")
others = [n for n in names if n != a]
b = c2.selectbox("Re-ranked / other run (B)", others,
                 index=others.index(default_b) if default_b in others else 0, key=f"where_b::{sel.collection}::{a}")
detected = where.detected_depth(sel, a, b)
# the rank bands' widgets are read first, in their own place below the headroom, so that their
# computation runs beside the headroom's (where.bands_soon)
headroom_part, bands_part = st.container(), st.container()
with bands_part:
    st.divider()
    st.subheader("Gains by rank band")
    c1, c2 = st.columns(2)
    k = int(c1.number_input("Depth k (DCG@k)", min_value=1, max_value=10_000, value=100, key="where_k"))
    edges_text = c2.text_input("Band edges", value="3,10,20,100", key="where_edges",
                               help="Upper ranks of the bands: 3,10,20,100 gives 1-3, 4-10, 11-20, 21-100, and "
                                    "beyond 100 up to k.")
try:
    edges: list[int] | None = [int(x) for x in edges_text.replace(" ", ",").split(",") if x]
except ValueError:
    edges = None
soon = where.bands_soon(sel, a, b, k=k, edges=edges) if edges is not None else None

with headroom_part:
    c1, c2, c3 = st.columns(3)
    cutoff = int(c1.number_input("Measure cutoff k (nDCG@k)", min_value=1, max_value=1000, value=10,
                                 key="where_cutoff"))
    measure = metrics.with_gain(f"nDCG@{cutoff}", sel.gain)

    # ---------------------------------------------------------------- re-ranking headroom
    st.subheader("Re-ranking headroom")
    if detected is not None:
        st.caption(f"{md(b)} re-ranks {md(a)}'s top **{detected}** (detected: on every query its top {detected} "
                   f"documents are among {md(a)}'s top {detected}).")
        depth = int(c2.number_input("Re-ranking depth K", min_value=1, value=detected, key=f"where_depth::{a}::{b}",
                                    help="Detected from the runs; declare another K to compare with that ceiling."))
    else:
        st.caption(f"{md(b)}'s top documents are not all drawn from {md(a)}'s: it is no re-ranking of it.")
        declared = c2.toggle("Treat B as a re-ranking anyway", key=f"where_declare::{a}::{b}")
        depth = int(c3.number_input("Re-ranking depth K", min_value=1, value=100,
                                    key=f"where_declared::{a}::{b}")) if declared else None

    result = None
    if depth is not None:
        try:
            result = where.headroom(sel, a, b, depth=depth, measure=measure)
        except metrics.MetricsError as exc:
            st.error(md(str(exc)))
    if result is not None:
        s = result.summary
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("Share of the headroom reached", where.share_text(s["share"]),
                  help="1 − (oracle − re-ranked) / (oracle − first stage), of the means over queries.")
        m2.metric("First stage", f"{s['first']:.4f}", help=f"{measure} of A; its R@{depth} = {s['recall']:.4f}")
        m3.metric(f"Oracle of the top {depth}", f"{s['oracle']:.4f}",
                  help="The first stage's top K sorted by gain; IDCG over every judged document (trec_eval), so the "
                       "ceiling is below 1 where the first stage missed relevant documents.")
        m4.metric("Re-ranked", f"{s['reranked']:.4f}", help=f"{measure} of B",
                  delta=where.percent(s["relative"], sign=True) if s["relative"] == s["relative"] else None)
        low, high = s["share_ci"]
        st.markdown(where.verdict_sentence(result))
        st.caption(f"Share of the headroom: {where.share_text(s['share'])}, {int(100 * s['level'])}% percentile "
                   f"bootstrap interval {where.share_text(low)} to {where.share_text(high)} ({s['resamples']:,} "
                   f"resamples, seed {s['seed']}); the mean of the per-query shares is "
                   f"{where.share_text(s['query_share'])} over the {s['defined']} of {s['queries']} queries with "
                   f"headroom (undefined where the oracle equals the first stage)."
                   + (f" On {s['outside']} queries {md(b)}'s top {depth} holds documents from outside {md(a)}'s."
                      if s["outside"] else ""))
        plotly_chart(figs.headroom_bars(result.per_query, measure=measure, first=a, reranked=b), width="stretch",
                        config=FIGURE_CONFIG, key="where_headroom")

        st.markdown(f"**Depth sweep**: re-rank only {md(a)}'s top d ({md(b)}'s order for those d documents, "
                    f"{md(a)}'s order below)")
        plotly_chart(figs.sweep_curve(result.sweep, s, measure=measure), width="stretch", config=FIGURE_CONFIG,
                        key="where_sweep")
        sweep = result.sweep.assign(**{c: result.sweep[c].map(where.p_text) for c in ("p_value", "p_adjusted",
                                                                                         "p_previous")},
                                    share=result.sweep["share"].map(where.share_text))
        st.table(plain_frame(sweep.rename(columns={
            "depth": "d", "mean": measure, "diff": f"Δ vs {a}", "share": "share of headroom", "p_value": "p",
            "p_adjusted": f"p ({state.CORRECTIONS[sel.correction]})", "p_previous": "p vs the depth before"})
            .set_index("d")))
        st.caption(f"{state.TESTS[sel.test]} against the first stage per depth (filled markers: adjusted p < 0.05), "
                   f"{state.CORRECTIONS[sel.correction]} correction over the depths; 'p vs the depth before' tests d "
                   "against the previous depth: where it stops being small, deeper re-ranking stops paying.")
        with st.expander("Per query", expanded=False):
            st.dataframe(result.per_query, hide_index=True, width="stretch", placeholder=where.MISSING,
                         key="where_per_query")

    with st.expander("Method"):
        st.markdown(methods.where_method(level=stats.DEFAULT_LEVEL, resamples=stats.DEFAULT_RESAMPLES,
                                         seed=stats.DEFAULT_SEED))


# ---------------------------------------------------------------- rank bands
with bands_part:
    try:
        if soon is None:
            raise ValueError(edges_text)
        split = soon.result()
    except ValueError:
        st.error("Band edges are whole numbers separated by commas, e.g. 3,10,20,100.")
        st.stop()
    except metrics.MetricsError as exc:
        st.error(md(str(exc)))
        st.stop()

    n_queries = len(split.by_band)
    st.caption(f"{md(split.measure)} of {md(b)} minus {md(a)}, split by where each gain / log2(rank + 1) sits; per "
               "query the bands (and the grades) add up to the total. A re-ranker gains at the top with the same "
               "documents; an expansion gains low in the list with new ones.")
    st.markdown(f"**{md(split.measure)}: {md(b)} − {md(a)}**, mean over {n_queries} queries, by rank band and grade")
    plotly_chart(figs.band_bars(split.parts, split.labels, n_queries=n_queries, measure=split.measure, a=a, b=b),
                    width="stretch", config=FIGURE_CONFIG, key="where_bands")
    t1, t2 = st.columns(2)
    t1.markdown("**By rank band** (mean over queries)")
    t1.table(split.means("band").map("{:+.4f}".format).rename("B − A").to_frame())
    t2.markdown("**By grade** (mean over queries)")
    t2.table(split.means("grade").rename(lambda g: g if g == "total" else f"grade {g}").map("{:+.4f}".format)
             .rename("B − A").to_frame())
    with st.expander("Per query", expanded=False):
        st.dataframe(split.by_band, width="stretch", placeholder=where.MISSING, key="where_bands_per_query")

    st.markdown(f"**Relevant documents only one run retrieves** in its top {k}")
    counts = split.only_one.groupby("run", sort=False).size()
    st.caption(" · ".join(f"{md(n)}: {int(counts.get(n, 0))}" for n in (a, b)))
    if len(split.only_one):
        st.dataframe(split.only_one.rename(columns={"rank": "rank in its run", "other_rank": "rank in the other"}),
                     hide_index=True, width="stretch", placeholder=where.MISSING, key="where_only_one")

    st.markdown(f"**Recall@k** of both runs, k = 1..{k}")
    plotly_chart(figs.recall_curves(split.recall, colors=system_colors(names)), width="stretch",
                    config=FIGURE_CONFIG, key="where_recall")

    top = bands_analysis.TOP
    st.markdown(f"**Queries where {md(a)} found no relevant document in its top {top} and {md(b)} did**")
    if len(split.rescued):
        st.dataframe(split.rescued.rename(columns={"relevant": "relevant in the qrels", "found": f"found by {b}",
                                                   "first_rank": f"first relevant rank in {b}"}),
                     hide_index=True, width="stretch", placeholder=where.MISSING, key="where_rescued")
    else:
        st.caption(f"{where.MISSING} no such query ({len(split.lost)} the other way round).")

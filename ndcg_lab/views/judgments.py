"""Judgments: what the qrels miss (unjudged documents, pool depth) and hard negatives for training."""
import streamlit as st

import metrics
from metrics.analysis import judgments
from metrics.report import methods
from metrics.report.figures import curves as figures
from metrics.report.figures import judgments as jfig
from ndcg_lab.ui import curves, paths, state
from ndcg_lab.ui import judgments as ju
from ndcg_lab.ui.charts import plotly_chart
from ndcg_lab.ui.tables import first_rows
from ndcg_lab.ui.text import md, plain_frame

st.header("Judgments")
sel = state.selection()
if sel is None or not sel.systems:
    st.info("Select at least one system in the sidebar, or add runs on the Data page.")
    st.stop()

colors = figures.system_colors(state.all_system_names(sel))
docs, topics = state.docs(sel), state.topics(sel)
st.caption(f"Collection **{md(sel.collection)}** · {len(sel.systems)} systems · judged = in the qrels "
           "(any grade); proxy labels never count as judgments on this page.")

with st.expander("Method"):
    st.markdown(methods.judgments_method())

# Only the open tab is computed and drawn (a switch reruns the page): on a collection of millions of
# lines each tab is seconds of work that the others do not show.
tab_unjudged, tab_negatives, tab_pool = st.tabs(["Unjudged documents", "Hard negatives", "Pool depth"],
                                                key="judgments_tab", on_change="rerun")

# ------------------------------------------------------------------ unjudged documents
with tab_unjudged:
    if tab_unjudged.open:
        st.subheader("Judged@k")
        plotly_chart(jfig.judged_curve(curves.mean_curves(sel, "Judged", False)[0], colors=colors),
                     config=figures.FIGURE_CONFIG, key="judged_curve")
        k_warn = 10
        warnings = judgments.judged_warnings(ju.judged_means(sel, k_warn))
        for row in warnings.itertuples():
            st.warning(f"**{md(row.system)}**: Judged@{k_warn} = {row.judged:.3f}, {row.reason} "
                       f"(best {row.best:.3f}, median {row.median:.3f}). Many of its top documents were never "
                       "judged, so its scores with unjudged = 0 are lower bounds.")
        st.caption(f"A system is flagged when its Judged@{k_warn} is more than {judgments.BEST_GAP:g} below the best "
                   f"system's or more than {judgments.MEDIAN_GAP:g} below the median of the selected systems.")

        st.subheader("Leaderboard by treatment of unjudged documents")
        options = list(dict.fromkeys(metrics.with_gain(m, sel.gain)
                                     for m in ("nDCG@10", "nDCG@20", "nDCG@100", "AP", "P@10", "RR", "R@100")))
        measure = st.selectbox("Measure", options, key="judgments_measure")
        labels = ju.strategy_labels(sel)
        table = judgments.strategy_table(ju.strategy_frames(sel, measure))
        st.table(plain_frame(ju.strategy_display(table, labels)))
        st.caption(f"**{md(measure)}** per system under each treatment. unjudged = 0: unjudged documents gain nothing "
                   "(trec_eval's default). condensed: unjudged documents are removed before scoring (judged_only, "
                   "trec_eval -J). inferred: proxy labels fill the unjudged documents. ▲/▼: places gained or lost "
                   f"against unjudged = 0, on {md(measure)} alone.")
        full = ju.all_judged(sel, measure)
        if full is not None:
            st.info(f"Every selected system's top {full} is judged on every query (Judged@{full} = 1): the "
                    "treatments of unjudged documents cannot differ here. A difference between measures comes from "
                    "the measures, not from the judgments.")
        st.markdown("**Measures built for incomplete judgments**, each ranked on its own")
        st.table(plain_frame(ju.incomplete_display(sel)))
        st.caption("Bpref (Buckley & Voorhees 2004) counts only judged non-relevant documents above each relevant one; "
                   "infAP (Yilmaz & Aslam 2006) estimates AP from the judged documents as a sample. They are other "
                   f"measures than {md(measure)}, so their ranks are not set against its treatments.")
        if not sel.proxy_digest:
            st.info(f"Collection **{md(sel.collection)}** has no proxy judgments, so there is no *inferred* column. "
                    "To add one, open the Data page, expand **Qrels, proxy judgments, topics and document titles** "
                    "and drop a qrels file of model or click labels on **Proxy judgments (inferred labels, qrels "
                    "format)**.")
            st.page_link(paths.view("data"), label="Open the Data page", icon=":material/folder_open:")
        else:
            agreement = judgments.proxy_agreement(state.qrels(sel), state.proxy(sel))
            st.caption(f"Proxy: {agreement['labels']:,} labels, {agreement['fills']:,} of them fill unjudged pairs; "
                       f"on the {agreement['overlap']:,} pairs the qrels also judge, the proxy gives the same grade "
                       f"{agreement['exact']:.0%} of the time and is at most one grade off "
                       f"{agreement['within_one']:.0%}.")
        left, right = st.columns([3, 2])
        with left:
            plotly_chart(jfig.strategy_ranks(table, labels=labels, colors=colors, measure=measure),
                            config=figures.FIGURE_CONFIG, key="strategy_ranks")
        with right:
            st.table(plain_frame(ju.agreement_display(judgments.rank_agreement(table), labels)))
            st.caption(f"Kendall's τ-b between the orders of the {len(sel.systems)} systems (1: same order, -1: "
                       "reversed)." + (" " + methods.few_systems_warning(len(sel.systems))
                                       if methods.few_systems_warning(len(sel.systems)) else ""))

        st.subheader("Judging to-do list")
        c1, c2 = st.columns([2, 1])
        who = c1.selectbox("System", [ju.POOLED, *sel.system_names], key="todo_system")
        depth = int(c2.number_input("Top k", min_value=1, max_value=1000, value=10, step=1, key="todo_depth"))
        todo = ju.todo(sel, who, depth)
        shown_todo, more = first_rows(todo, "the highest ranked; the template below holds them all")
        st.caption(f"{len(todo):,} unjudged (query, document) pairs in the top {depth} of "
                   f"{'any selected system' if who == ju.POOLED else md(who)}, highest ranked first. {more}")
        st.dataframe(ju.with_titles(shown_todo, docs, topics), hide_index=True, width="stretch", placeholder="",
                     column_config=ju.RANKS_COLUMN)
        template = ju.todo_template(
            sel, who, depth, note=f"collection {sel.collection}; unjudged documents in the top {depth} of "
                                  f"{', '.join(sel.system_names) if who == ju.POOLED else who}")
        st.download_button("Download judging template (qrels)", template,
                           file_name=f"judging-{sel.collection}-top{depth}.qrels", mime="text/plain",
                           key="todo_download")
        st.caption(f"Template lines are `qid 0 docno {judgments.TEMPLATE_PLACEHOLDER}`: replace "
                   f"{judgments.TEMPLATE_PLACEHOLDER} with a grade. Lines starting with # are comments.")

# ------------------------------------------------------------------ hard negatives
with tab_negatives:
    if tab_negatives.open:
        c1, c2, c3, c4 = st.columns(4)
        neg_depth = int(c1.number_input("Top k", min_value=1, max_value=1000, value=20, step=1, key="neg_depth"))
        min_grade = int(c2.number_input("Minimum grade of a positive", min_value=1, max_value=100, value=1, step=1,
                                        key="neg_min_grade"))
        per_query = int(c3.number_input("Negatives per query (export)", min_value=1, max_value=1000, value=10, step=1,
                                        key="neg_per_query"))
        include_unjudged = c4.toggle("Unjudged negatives (unverified)", key="neg_unjudged",
                                     help="Also use unjudged documents that a system ranks in its top k above every "
                                          "relevant document it retrieves. They are probably, not certainly, "
                                          "non-relevant: nobody judged them.")
        negatives = ju.hard_negatives(sel, neg_depth, min_grade, include_unjudged)
        st.subheader("Near misses")
        st.caption(f"{len(negatives):,} documents judged non-relevant (grade ≤ 0) that at least one system ranks in "
                   f"its top {neg_depth}"
                   + (", plus unverified unjudged ones (judged = False)" if include_unjudged else "")
                   + ". Order: query, best rank across systems, number of systems (more first), docno.")
        shown = negatives if include_unjudged else negatives.drop(columns="judged")
        st.dataframe(ju.with_titles(shown, docs), hide_index=True, width="stretch", placeholder="",
                     column_config=ju.RANKS_COLUMN)

        failures = ju.recall_failures(sel, neg_depth, min_grade)
        st.subheader("Recall failures")
        st.caption(f"{len(failures):,} relevant documents (grade ≥ {min_grade}) that no system ranks in its top "
                   f"{neg_depth}; best_rank is the best rank at any depth (empty: never retrieved).")
        st.dataframe(ju.with_titles(failures, docs), hide_index=True, width="stretch", placeholder="")

        st.subheader("Training data")
        data = ju.training(sel, neg_depth, per_query, min_grade, include_unjudged)
        st.caption(f"{data['queries']:,} queries with both kinds · {data['positives']:,} positives "
                   f"(grade ≥ {min_grade}) · "
                   f"{data['negatives']:,} negatives (at most {per_query} per query) · {data['triples']:,} triples. "
                   "Same as `python -m metrics negatives QRELS RUN ... "
                   f"--depth {neg_depth} --per-query {per_query} --min-grade {min_grade}"
                   f"{' --include-unjudged' if include_unjudged else ''}`.")
        stem = (f"negatives-{sel.collection}-top{neg_depth}-n{per_query}-g{min_grade}"
                f"{'-unjudged' if include_unjudged else ''}")
        d1, d2 = st.columns(2)
        d1.download_button("Download triples (TSV)", data["tsv"], file_name=f"{stem}.tsv",
                           mime="text/tab-separated-values", key="neg_tsv")
        d2.download_button("Download per-query JSONL", data["jsonl"], file_name=f"{stem}.jsonl",
                           mime="application/jsonl", key="neg_jsonl")

# ------------------------------------------------------------------ pool depth
with tab_pool:
    if tab_pool.open:
        k = int(st.number_input("Top k for the overlap", min_value=1, max_value=1000, value=10, step=1, key="pool_k"))
        first, matrix, per_query_pool = ju.pool(sel, k)
        st.table(plain_frame(ju.pool_summary(first, matrix, k)))
        left, right = st.columns(2)
        with left:
            st.markdown("**How deep judgments reach**")
            plotly_chart(jfig.first_unjudged_box(first, colors=colors), config=figures.FIGURE_CONFIG,
                            key="first_unjudged")
            st.caption("Rank of the first unjudged document per query; queries judged throughout are left out.")
        with right:
            st.markdown(f"**Overlap of the top {k} lists**")
            plotly_chart(jfig.overlap_heatmap(matrix, k=k), config=figures.FIGURE_CONFIG, key="overlap")
            st.caption(f"Mean over queries of |A ∩ B| / |A ∪ B| of two systems' top {k}.")
        st.markdown("**Per query**: first unjudged rank per system (empty: judged throughout) and mean pairwise "
                    f"Jaccard@{k}")
        st.dataframe(ju.with_titles(per_query_pool, None, topics), hide_index=True, width="stretch", placeholder="")

"""Query explorer: one query's ranked lists side by side and the arithmetic behind its nDCG."""
import streamlit as st

import metrics
from metrics.analysis import explain
from metrics.report.figures import curves as figures
from metrics.report.figures import explain as fx
from metrics.report.text import shorten
from ndcg_lab.ui import query as view
from ndcg_lab.ui import state
from ndcg_lab.ui import where as where_view
from ndcg_lab.ui.charts import plotly_chart
from ndcg_lab.ui.text import md

st.header("Query explorer")
sel = state.selection()
if sel is None or not sel.systems:
    st.info("Select at least one system in the sidebar, or add runs on the Data page.")
    st.stop()

ss = st.session_state
names = sel.system_names
digests = dict(sel.systems)

# A link in: the compare page sets query_qid / query_systems and switches here; a URL may carry ?qid=.
wanted_qid = ss.pop("query_qid", None)
wanted_systems = ss.pop("query_systems", None)
if wanted_qid is None and "qe_qid" not in ss:
    wanted_qid = st.query_params.get("qid") or ss.get("_qe_last_qid")

# -- settings ----------------------------------------------------------------------------------
c1, c2, c3 = st.columns([2, 2, 1])
k = c1.slider("Cutoff k", 1, 100, 10, key="qe_k", help="nDCG@k: the per-rank table shows ranks 1..k.")
measure = metrics.with_gain(f"nDCG@{k}", sel.gain)
order_by = c2.radio("Order queries by", ["difficulty", "difference", "qid"], horizontal=True, key="qe_order",
                    format_func={"difficulty": "difficulty (mean over systems, hardest first)",
                                 "difference": "difference between two systems", "qid": "query id"}.get)
inferred = False
if sel.proxy_digest:
    inferred = c3.toggle("Inferred", key="qe_inferred",
                         help="Fill unjudged documents with the collection's proxy labels (shown as inferred).")

pair = None
if order_by == "difference":
    if len(names) < 2:
        st.warning("Ordering by difference needs two systems: select another in the sidebar.")
        order_by = "difficulty"
    else:
        d1, d2 = st.columns(2)
        a = d1.selectbox("System A", names, index=0, key="qe_pair_a")
        b = d2.selectbox("System B", names, index=1, key="qe_pair_b")
        pair = (a, b) if a != b else None
        if pair is None:
            st.warning("Pick two different systems to order by their difference.")
            order_by = "difficulty"

scores = state.evaluate(sel, [measure], inferred=inferred)
order = explain.order_queries(scores, measure, by=order_by, pair=pair)
topics = state.topics(sel)
topic_text = dict(zip(topics["qid"].astype(str), topics["text"].astype(str))) if len(topics) else {}

# -- query picker ------------------------------------------------------------------------------
if wanted_qid is not None and str(wanted_qid) in order.index:
    ss["qe_qid"] = str(wanted_qid)
    ss["qe_search"] = ""
search = st.text_input("Find a query by id or topic text", key="qe_search", placeholder="e.g. 12 or negligence")
options = view.find_queries(order.index.astype(str).tolist(), topic_text, search)
if not options:
    st.warning(f"No query id or topic contains {md(repr(search))}.")
    st.stop()
if ss.get("qe_qid") not in options or (search.strip() and ss.get("_qe_last_search") != search):
    ss["qe_qid"] = options[0]   # a new search opens its best match: the exact id first
ss["_qe_last_search"] = search


labels = view.query_labels(order, topic_text, options)
qid = st.selectbox(f"Query ({len(options)} shown, ordered by {order_by})", options, key="qe_qid",
                   format_func=labels.__getitem__)
ss["_qe_last_qid"] = qid
st.query_params["qid"] = qid

if wanted_systems:
    ss["qe_systems"] = [s for s in wanted_systems if s in names] or names[:2]
if "qe_systems" not in ss or not set(ss["qe_systems"]) <= set(names):
    default = list(pair) if pair else names[:4]
    ss["qe_systems"] = [s for s in ss.get("qe_systems", default) if s in names] or default
shown = st.multiselect("Systems side by side", names, key="qe_systems")
if not shown:
    st.info("Pick at least one system to show.")
    st.stop()

docs = state.docs(sel)
frames = {name: explain.explain(state.ranked(sel, name, digests[name], inferred=inferred), qid, measure, docs=docs)
          for name in shown}

# -- the lists side by side --------------------------------------------------------------------
st.subheader(f"Query {md(qid)}" + (f": {md(shorten(topic_text[qid]))}" if qid in topic_text else ""))
if shorten(topic_text.get(qid, "")) != topic_text.get(qid, ""):
    with st.expander("Full topic text"):
        st.markdown(md(topic_text[qid]))
values = {name: float(frame["ndcg"].iloc[-1]) for name, frame in frames.items()}
st.caption(f"**{measure}** · " + " · ".join(f"{md(name)} {v:.4f}" for name, v in values.items())
           + f" · {frames[shown[0]].attrs['relevant']} documents with gain > 0 in the qrels")
colors = figures.system_colors(state.all_system_names(sel))
plotly_chart(fx.ranked_lists(frames, colors=colors), width="stretch", config=figures.FIGURE_CONFIG,
                key="qe_lists_figure")
st.html(view.legend_html())
with st.expander("The lists as a table", expanded=False):
    st.html(view.lists_html(frames))

# -- the arithmetic of one system ----------------------------------------------------------------
st.subheader("The arithmetic, rank by rank")
if ss.get("qe_focus") not in shown:
    ss["qe_focus"] = shown[0]
focus = st.selectbox("System", shown, key="qe_focus")
frame = frames[focus]
last = frame.iloc[-1]
board = scores[(scores["system"] == focus) & (scores["qid"] == qid)]["value"]
board_value = float(board.iloc[0]) if len(board) else float("nan")
gain_text = "2^{rel_r}-1" if sel.gain == "exp" else "rel_r"
st.latex(rf"\mathrm{{nDCG}}@{k} = \frac{{\mathrm{{DCG}}@{k}}}{{\mathrm{{IDCG}}@{k}}}"
         rf" = \frac{{\sum_{{r=1}}^{{{k}}} \frac{{{gain_text}}}{{\log_2(r+1)}}}}{{\mathrm{{IDCG}}@{k}}}"
         rf" = \frac{{{last['dcg']:.4f}}}{{{last['idcg']:.4f}}} = {last['ndcg']:.4f}")
same = "identical to" if last["ndcg"] == board_value else "DIFFERENT from"
st.markdown(f"Last row: **{measure} = {last['ndcg']:.4f}**, {same} the leaderboard's value for {md(focus)} on "
            f"query {md(qid)} ({board_value:.4f}); both come from the same kernels.")
st.table(view.per_rank_styler(frame))
st.caption("gain: the grade under the sidebar's gain function (unjudged documents gain 0); contribution = "
           "gain / log2(rank + 1); DCG and IDCG are cumulative; the ideal columns are the qrels' documents "
           "sorted by gain. Same information as trec_eval's -D trace.")

w1, w2 = st.columns(2)
with w1:
    st.markdown(f"**Contributions to DCG@{k}**")
    plotly_chart(fx.contribution_waterfall(frame), width="stretch", config=figures.FIGURE_CONFIG,
                    key="qe_waterfall")
with w2:
    st.markdown("**Cumulative DCG against cumulative IDCG**")
    plotly_chart(fx.cumulative_gain(frame), width="stretch", config=figures.FIGURE_CONFIG, key="qe_cumulative")
where_view.waterfall_pair(frames, colors)

qrels = state.qrels(sel)
proxy = state.proxy(sel) if inferred else None
ranked = state.ranked(sel, focus, digests[focus], inferred=inferred)
i1, i2 = st.columns([5, 4])
with i1:
    ideal = explain.ideal_ranking(qrels, qid, measure, ranked=ranked, depth=k, inferred=proxy)
    st.markdown(f"**Ideal ranking** (top {k}; equal grades in any order give the same IDCG)")
    ideal_shown = ideal.drop(columns=["inferred"] if not inferred else []).rename(
        columns={"retrieved_rank": f"rank in {focus}", "idcg": "IDCG@rank", "discount": "1/log2(rank+1)"})
    st.table(view.simple_styler(ideal_shown, {"gain": "{:g}", "1/log2(rank+1)": "{:.4f}",
                                              "contribution": "{:.4f}", "IDCG@rank": "{:.4f}"}))
with i2:
    missed = explain.unretrieved(qrels, ranked, qid, depth=k, docs=docs, inferred=proxy)
    never = int(missed["retrieved_rank"].isna().sum())
    st.markdown(f"**Relevant documents missing from {md(focus)}'s top {k}** ({never} never retrieved)")
    if missed.empty:
        st.success(f"{md(focus)} retrieved every relevant document in its top {k}.")
    else:
        missed_shown = missed.drop(columns=["inferred"] if not inferred else []).rename(
            columns={"retrieved_rank": f"rank in {focus} (— = never)"})
        st.table(view.simple_styler(missed_shown))

# -- whole collection ----------------------------------------------------------------------------
HEATMAP_QUERIES = 300  # rows drawn at most; beyond that a heatmap is no longer readable
st.subheader("Whole collection: the grade at every rank")
rows = list(order.index[:HEATMAP_QUERIES])
more = f" (the first {len(rows)} of {len(order)})" if len(order) > len(rows) else ""
st.caption(f"Queries{more}, in the order above, × ranks 1..{k}, one column of ranks per system; unjudged "
           "documents in pink, empty ranks white.")
matrices = [explain.relevance_matrix(state.ranked(sel, name, digests[name], inferred=inferred), depth=k, qids=rows)
            for name in shown]
plotly_chart(fx.relevance_heatmap(matrices), width="stretch", config=figures.FIGURE_CONFIG, key="qe_heatmap")

# -- query text ----------------------------------------------------------------------------------
view.text_section(sel, scores, measure, shown, inferred=inferred)

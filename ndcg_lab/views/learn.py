"""Learn NDCG: lessons with exercises, exercise links, live checks in class, and the sandbox (edit
a ranked list and watch nDCG and its rivals move). Runs without any upload.

Addresses: ``?lesson=ID&step=N`` a lesson at its exercise N; ``?ex=TOKEN&step=N`` a teacher's set
of exercises; ``?live=CODE`` a live check (``&key=KEY``: the teacher's control, ``&view=projector``: the
projector's tally, see ndcg_lab.ui.live); anything
else the index of lessons followed by the sandbox (``?g=...`` restores one). Every number comes
from metrics.analysis (lessons, sandbox), which scores lists with the library's engine; the
lessons' pages are drawn by ndcg_lab.ui.lessons, the sandbox's state and editor live in ndcg_lab.ui.learn.
"""
import streamlit as st

from metrics.analysis import sandbox
from metrics.analysis.sandbox import PRESETS
from metrics.report.figures import curves as figures
from metrics.report.figures import explain as fx
from ndcg_lab.ui import address, projector, share
from ndcg_lab.ui import exercise as exview
from ndcg_lab.ui import learn as text
from ndcg_lab.ui import lessons as lessons_view
from ndcg_lab.ui import live as live_view
from ndcg_lab.ui import query as view
from ndcg_lab.ui.charts import plotly_chart
from ndcg_lab.ui.text import md, plain_frame

ss = st.session_state
LESSONS = lessons_view.all_lessons()

_params = st.query_params
if _params.get("live"):
    live_view.page(_params["live"], _params.get("key"), _params.get(projector.PARAM))
    st.stop()
if _params.get("ex"):
    lessons_view.set_page(_params["ex"])
    share.handout("this set of exercises", "learn", {"ex": _params["ex"]}, here="learn")
    st.stop()
if _params.get("lesson") and _params["lesson"] != "sandbox":
    if _params["lesson"] in LESSONS:
        lessons_view.lesson_page(LESSONS, LESSONS[_params["lesson"]])
        share.handout("this lesson", "learn", {"lesson": _params["lesson"]}, here="learn")
        st.stop()
    st.warning(f"No lesson is called {md(_params['lesson'])}: here are all of them.")
if _params.get("lesson") == "sandbox":
    lessons_view.page_link("← All lessons", {})
else:
    lessons_view.index(LESSONS)


sb = text.load()

st.header("The sandbox", anchor="sandbox")
st.markdown("Edit a ranked list of up to 20 documents and watch nDCG and its rivals move. Every number is "
            "computed by the same engine as the leaderboard, on a one-query run built from your list; each "
            "name links to the [glossary](#glossary).")
if ss.get("learn_error"):
    st.warning(ss["learn_error"])

p1, p2 = st.columns([2, 3])
p1.selectbox("Preset", list(PRESETS), key="learn_preset", format_func=lambda k: PRESETS[k].title,
             on_change=text.on_preset)
p1.button("Reload preset", key="learn_reload", on_click=text.on_preset)
p2.info(PRESETS[ss["learn_preset"]].lesson)

k = sb.cutoff
values = sandbox.scores(sb)
per_rank = sandbox.per_rank(sb)
gain_word = text.gain_word(sb)

# -- the editor and the live numbers ------------------------------------------------------------------
left, right = st.columns([6, 5], gap="large")
with left:
    text.editor(sb, per_rank)

with right:
    st.subheader("Live values")
    r1, r2 = st.columns(2)
    r1.slider("Cutoff k", 1, sandbox.MAX_DOCS, key="learn_k", on_change=text.on_cutoff)
    r2.radio("Gain", list(sandbox.GAIN_NAMES), key="learn_gain", format_func=sandbox.GAIN_NAMES.get,
             on_change=text.on_gain, horizontal=True)
    dcg, idcg, ndcg = values[f"DCG {gain_word}"], values[f"IDCG {gain_word}"], values[f"nDCG {gain_word}"]
    m1, m2, m3 = st.columns(3)
    m1.metric(f"DCG@{k}", text.fmt(dcg))
    m2.metric(f"IDCG@{k}", text.fmt(idcg))
    m3.metric(f"nDCG@{k}", text.fmt(ndcg))
    st.markdown(text.ndcg_line(sb, values))
    st.latex(text.dcg_latex(sb, per_rank, dcg))
    if sb.missed and ndcg < 1 and sb.ideal().grades == sb.grades:
        st.caption("This is the ideal order of your list, yet nDCG < 1: the missed documents belong in the "
                   "ideal ranking.")

st.markdown(f"**Rank by rank** ({gain_word} gain; the row of rank k = {k} is marked)")
st.table(view.per_rank_styler(per_rank, highlight=k))

# -- exponential against linear gain ----------------------------------------------------------------
st.subheader("Exponential and linear gain")
g1, g2 = st.columns([1, 1], gap="large")
with g1:
    both, verdict = text.both_gains(values, k)
    st.table(both.style.format("{:.4f}"))
    st.markdown(verdict)
    table = sandbox.gain_table()
    st.markdown(f"**{text.link('Gain', 'graded')} per grade**")
    st.table(view.simple_styler(table, {"linear gain": "{:g}", "exponential gain": "{:g}",
                                        "exponential / linear": "{:.2f}"}))
with g2:
    plotly_chart(fx.gain_bars(table), width="stretch", config=figures.FIGURE_CONFIG, key="learn_gain_bars")

# -- the discount -------------------------------------------------------------------------------------
st.subheader("The discount 1 / log2(rank + 1)")
d1, d2 = st.columns([3, 2])
plotly_chart(fx.discount_curve(sandbox.discount_curve()), where=d1, width="stretch", config=figures.FIGURE_CONFIG,
             key="learn_discount")
marks = sandbox.discount_table((1, 5, 10))
with d2:
    st.table(view.simple_styler(marks, {"log2(rank+1)": "{:.4f}", "discount": "{:.3f}",
                                        "less than rank 1": "{:.0%}"}))
    r5, r10 = marks.iloc[1], marks.iloc[2]
    st.markdown(f"A document at rank 5 counts {r5['discount']:.3f} of its gain, {r5['less than rank 1']:.0%} "
                f"less than at rank 1; at rank 10, {r10['discount']:.3f}, {r10['less than rank 1']:.0%} less. "
                "The discount falls fast at the top and slowly further down.")

# -- the rivals ---------------------------------------------------------------------------------------
st.subheader("Other measures on the same list")
rivals, rivals_line = text.rivals(values, k, ndcg)
st.table(view.simple_styler(rivals, {"value": "{:.4f}"}))
st.markdown(rivals_line)
st.markdown("**Two systems, same documents**: a second system ranks the same documents in another order.")
text.second_system(sb)

# -- unjudged documents -------------------------------------------------------------------------------
st.subheader("Unjudged documents: three strategies")
text.guesses(sb)
strategies = sandbox.strategies(sb)
st.table(strategies.style.format({"DCG": "{:.4f}", "IDCG": "{:.4f}", "nDCG": "{:.4f}"}))
st.markdown("*Treat as 0* counts an unjudged document as not relevant (trec_eval, ir_measures). The *condensed* "
            "list removes unjudged documents, moving the ones below up (trec_eval -J; Sakai's condensed lists). "
            "*Inferred* uses a guess (a model's or a click label) as if it were a judgment; it enters the ideal "
            "ranking too.")

# -- ties ---------------------------------------------------------------------------------------------
st.subheader("Ties: equal grades in any order")
ties = sandbox.tie_orderings(sb, n=2, seed=int(ss.get("learn_seed", 0)))
st.table(view.simple_styler(ties, {"DCG": "{:.4f}", "IDCG": "{:.4f}", "nDCG": "{:.4f}"}))
st.markdown(f"Every ideal ordering reaches the same DCG@{k}, which is IDCG@{k}: the ideal ranking is not unique, "
            "its DCG is. Permuting documents of equal grade in your list leaves DCG and nDCG unchanged too.")

# -- what if ------------------------------------------------------------------------------------------
st.subheader("What if?")
moves = sandbox.what_if(sb)
best = moves.iloc[0]
if best["delta"] > 0:
    st.markdown(f"The single move that raises nDCG@{k} most: **{md(best['description'])}**: "
                f"{best['before']:.4f} → {best['after']:.4f} ({best['delta']:+.4f}). "
                f"Tried: {len(moves)} moves (every swap and every grade change).")
    st.button("Apply this move", key="learn_apply", on_click=text.on_apply, args=(best.to_dict(),))
else:
    st.markdown(f"No single move raises nDCG@{k}: of {len(moves)} swaps and grade changes, none beats "
                f"{best['before']:.4f}.")
top = plain_frame(moves.head(8)[["description", "after", "delta"]].rename(columns={"after": f"nDCG@{k} after"}))
st.table(view.simple_styler(top, {f"nDCG@{k} after": "{:.4f}", "delta": "{:+.4f}"}))
st.caption("A grade change edits the judgments, so it moves IDCG as well: lowering the grade of a relevant "
           "document the list ranks badly can raise nDCG.")

# -- formulas and glossary ------------------------------------------------------------------------------
st.subheader("Formulas")
for _term, formula in text.FORMULAS:
    st.latex(formula)
st.subheader("Glossary", anchor="glossary")
for term, (title, body) in text.GLOSSARY.items():
    st.markdown(f"{text.anchor(term)}**{title}**: {body}", unsafe_allow_html=True)

# -- make an exercise -------------------------------------------------------------------------------
st.subheader("Make an exercise")
st.markdown("Turn this list into a question for your students. The link holds the list and the question, "
            "never the answer: the page computes it when a student checks.")
exview.maker(sb)

# -- share -------------------------------------------------------------------------------------------
params = sandbox.to_params(sb)
ss["learn_written"] = params
address.write({**params, **({"lesson": "sandbox"} if st.query_params.get("lesson") == "sandbox" else {})})
st.subheader("Share")
st.markdown("The page address holds this sandbox (grades, cutoff, gain, names): copy it to share. "
            "The query string alone:")
st.code(text.share_query(params), language=None)
share.handout("this sandbox", "learn", {**params, "lesson": "sandbox"}, here="learn")

"""Learn NDCG: lessons with exercises, exercise links, live checks in class, and the sandbox (edit
a ranked list and watch nDCG and its rivals move). Runs without any upload.

Addresses: ``?lesson=ID&step=N`` a lesson at its exercise N; ``?ex=TOKEN&step=N`` a teacher's set
of exercises; ``?live=CODE`` a live check (``&key=KEY``: the teacher's projector view); anything
else the index of lessons followed by the sandbox (``?g=...`` restores one). Every number comes
from metrics.analysis (lessons, sandbox), which scores lists with the library's engine.
"""
import pandas as pd
import streamlit as st

import metrics
from metrics import stats
from metrics.analysis import lessons, sandbox
from metrics.analysis.sandbox import PRESETS, Sandbox
from metrics.report.figures import curves as figures
from metrics.report.figures import explain as fx
from ui import address, state
from ui import exercise as exview
from ui import learn as text
from ui import query as view
from ui.text import md, plain_frame

ss = st.session_state
DEFAULT_PRESET = "legal"
LESSONS = lessons.load_all()
LIVE_KINDS = ("number", "choice", "higher")


# -- state: one Sandbox in session state; widgets write to it through callbacks -------------------
def _sb() -> Sandbox:
    return ss["learn_sb"]


def _set(sb: Sandbox) -> None:
    ss["learn_sb"] = sb
    ss.pop("learn_error", None)


def _on_preset() -> None:
    _set(PRESETS[ss["learn_preset"]].sandbox)


def _on_grade(i: int) -> None:
    _set(_sb().regraded(i, text.grade_value(ss[f"learn_grade_{i}"])))


def _on_cutoff() -> None:
    _set(_sb().replace(cutoff=int(ss["learn_k"])))


def _on_gain() -> None:
    _set(_sb().replace(gain=ss["learn_gain"]))


def _on_size() -> None:
    _set(_sb().resized(int(ss["learn_n"])))


def _on_missed() -> None:
    raw = ss.get("learn_missed", "").replace(" ", "")
    try:
        missed = tuple(int(g) for g in raw.split(",") if g)
        _set(_sb().replace(missed=missed))
    except (ValueError, metrics.MetricsError):
        ss["learn_error"] = f"Missed documents: {raw!r} is not a list of grades 1-4 such as 3,2."


def _on_versus() -> None:
    raw = ss.get("learn_vs", "")
    try:
        _set(_sb().replace(versus=tuple(n.strip() for n in raw.split(",") if n.strip())))
    except metrics.MetricsError as exc:
        ss["learn_error"] = f"Second system: {exc}"


def _on_guess(name: str) -> None:
    guesses = dict(_sb().guesses)
    guesses[name] = int(ss[f"learn_guess_{name}"])
    _set(_sb().replace(guesses=tuple(guesses.items())))


def _ideal() -> None:
    _set(_sb().ideal())


def _reverse() -> None:
    _set(_sb().reversed())


def _shuffle() -> None:
    _set(_sb().shuffled(int(ss.get("learn_seed", 0))))


def _move(i: int, step: int) -> None:
    _set(_sb().moved(i, step))


def _apply(move: dict) -> None:
    _set(sandbox.apply_move(_sb(), move))


# -- lessons, exercise sets and live checks ---------------------------------------------------------
def _step(n: int) -> int:
    try:
        return min(max(int(st.query_params.get("step", 0)), 0), n - 1)
    except ValueError:
        return 0


def _go(params: dict) -> None:
    address.write(params)


def _link(label: str, params: dict, **options) -> None:
    """A link to this page with ``params`` (the workspace token kept), within the session."""
    st.page_link("views/learn.py", label=label, query_params={**params, **address.kept()}, **options)


def _example(lesson: lessons.Lesson) -> None:
    """The lesson's interactive example: its list's numbers (or the collection's) and a way into the sandbox."""
    if lesson.collection is not None:
        c = lesson.collection
        table = c.per_query()
        summary = c.summary()
        m1, m2, m3 = st.columns(3)
        m1.metric(f"Mean nDCG@{c.cutoff} of A", text.fmt(summary["mean_a"]))
        m2.metric(f"Mean nDCG@{c.cutoff} of B", text.fmt(summary["mean_b"]))
        m3.metric("B wins / losses", f"{summary['wins_b']:.0f} / {summary['losses_b']:.0f}")
        st.table(table.style.format("{:.4f}"))
        diffs = table["B - A"].to_numpy()
        p_t = float(stats.ttest_pvalues(diffs))
        p_r = float(stats.randomization_pvalues(diffs, seed=stats.DEFAULT_SEED))
        st.markdown(f"Paired t-test p = **{p_t:.4f}** · randomisation test p = **{p_r:.4f}** (exact over the "
                    f"2^{len(diffs)} sign flips) · measure `{c.measure}`. A p-value under 0.05 is the usual bar; "
                    "with ten queries a difference must be large and consistent to pass it.")
        return
    sb = lesson.example
    values = sandbox.scores(sb)
    word = "exp" if sb.gain == "exp" else "linear"
    k = sb.cutoff
    m1, m2, m3 = st.columns(3)
    m1.metric(f"DCG@{k}", text.fmt(values[f"DCG {word}"]))
    m2.metric(f"IDCG@{k}", text.fmt(values[f"IDCG {word}"]))
    m3.metric(f"nDCG@{k}", text.fmt(values[f"nDCG {word}"]))
    st.caption(f"Gain {sandbox.GAIN_NAMES[sb.gain]}, measure `{sb.measure}`" +
               (f", missed relevant documents (grades): {', '.join(map(str, sb.missed))}" if sb.missed else ""))
    st.table(view.per_rank_styler(sandbox.per_rank(sb), highlight=k))
    _link("Open this example in the sandbox", {"lesson": "sandbox", **sandbox.to_params(sb)})


def _exercise_steps(items: list, base: dict, key: str) -> None:
    """Exercises one at a time (``step`` in the address), Back / Next, a score at the end."""
    n = len(items)
    i = _step(n)
    address.write({**base, **({"step": str(i)} if i else {})})
    done = sum(1 for j in range(n) if ss.get(f"{key}{j}_result") is not None)
    right = sum(1 for j in range(n) if getattr(ss.get(f"{key}{j}_result"), "correct", False))
    st.progress(done / n, text=f"Exercise {i + 1} of {n} · answered {done}, right {right}")
    ex = items[i]
    exview.show(ex, f"{key}{i}")
    b1, b2 = st.columns(2)
    b1.button("Back", key=f"{key}_back", disabled=i == 0, width="stretch",
              on_click=_go, args=({**base, "step": str(i - 1)},))
    b2.button("Next exercise", key=f"{key}_next", disabled=i == n - 1, width="stretch",
              on_click=_go, args=({**base, "step": str(i + 1)},))
    if done == n:
        st.success(f"All {n} exercises answered: {right} right.")
    if ex.kind in LIVE_KINDS:
        _offer_live(ex)


def _offer_live(ex: lessons.Exercise) -> None:
    with st.expander("Ask the class (live check)"):
        if not state.settings().shared:
            st.caption("A live check needs the shared server (NDCG_LAB_MODE=shared), which the students' phones "
                       "can reach.")
            return
        minutes = st.number_input("Open for (minutes)", 1, 120, 5, key="learn_live_minutes")

        def open_check():
            check, key = exview.live_checks().open(lessons.encode([ex]), minutes=float(minutes))
            _go({"live": check.code, "key": key})
        st.button("Open a live check of this question", key="learn_live_open", on_click=open_check)
        st.caption("Students open the code on their phones; only the counts of the answers are kept, and the "
                   "question closes by itself.")


def _lesson_page(lesson: lessons.Lesson) -> None:
    _link("← All lessons", {})
    position = list(LESSONS).index(lesson.id) + 1
    st.header(f"{position}. {lesson.title}")
    st.markdown(lessons.render(lesson, lesson.text))
    st.subheader("The example")
    _example(lesson)
    st.info(f"**What to try:** {lessons.render(lesson, lesson.try_text)}", icon="🧪")
    st.subheader("Exercises")
    _exercise_steps(list(lesson.exercises), {"lesson": lesson.id}, f"learn_ex_{lesson.id}_")
    ids = list(LESSONS)
    if position < len(ids):
        nxt = LESSONS[ids[position]]
        _link(f"Next lesson: {nxt.title}", {"lesson": nxt.id})


def _set_page(token: str) -> None:
    st.header("Exercises")
    try:
        items = lessons.decode(token)
    except metrics.MetricsError as exc:
        st.error(md(str(exc)))
        return
    st.caption("A set of exercises your teacher made. Answer each, then check: the page computes the answer "
               "with the same engine as the leaderboard.")
    _exercise_steps(items, {"ex": token}, f"learn_set_{abs(hash(token)) % 10**8}_")


def _live_page(code: str, key: str | None) -> None:
    address.write({"live": code, "key": key})
    live = exview.live_checks()
    try:
        check = live.get(code)
        [ex] = lessons.decode(check.token)
    except metrics.MetricsError as exc:
        st.error(md(str(exc)))
        return
    if key and live.is_teacher(code, key):
        _projector(live, check, ex)
    else:
        _student(live, check, ex)


def _student(live, check, ex) -> None:
    st.header(f"Live check {check.code}")
    if ss.get(f"learn_live_sent_{check.code}"):
        st.success("Answer sent. The result is on your teacher's screen.")
        return
    if not check.is_open():
        st.warning("This live check is closed.")
        return
    key = f"learn_live_{check.code}"
    st.markdown(f"**{md(ex.question)}**")
    exview.show_inputs(ex, key)
    read = exview.response_widgets(ex, key)

    def send():
        try:
            live.answer(check.code, exview.bucket(ex, read()))
            ss[f"learn_live_sent_{check.code}"] = True
            ss.pop(f"{key}_error", None)
        except metrics.MetricsError as exc:
            ss[f"{key}_error"] = str(exc)
    st.button("Send my answer", key=f"{key}_send", on_click=send, type="primary")
    if ss.get(f"{key}_error"):
        st.error(md(ss[f"{key}_error"]))


def _projector(live, check, ex) -> None:
    st.header(f"Live check · code {check.code}")
    student = f"{address.page_url()}?live={check.code}"
    st.markdown(f"Students open **{address.page_url() or '/learn'}** with the code, or this link:")
    st.code(student, language=None)
    st.markdown(f"**{md(ex.question)}**")
    exview.show_inputs(ex, "learn_projector")
    counts = live.counts(check.code)
    total = sum(counts.values())
    left = check.seconds_left()
    st.caption(f"{total} answers · " + (f"closes in {left // 60} min {left % 60} s" if left else "closed"))
    revealed = ss.get(f"learn_reveal_{check.code}", False)
    if counts:
        right = exview.right_bucket(ex) if revealed else None
        frame = pd.DataFrame({"answer": list(counts), "answers": list(counts.values())})
        if revealed:
            frame["right"] = ["✓" if a == right else "" for a in frame["answer"]]
        st.bar_chart(frame.set_index("answer")["answers"], horizontal=True)
        st.table(plain_frame(frame.set_index("answer")))
    b1, b2, b3 = st.columns(3)
    b1.button("Refresh", key="learn_live_refresh", width="stretch")
    b2.button("Reveal the answer", key="learn_live_reveal", width="stretch",
              on_click=lambda: ss.__setitem__(f"learn_reveal_{check.code}", True))
    b3.button("Close now", key="learn_live_close", width="stretch", disabled=not left,
              on_click=lambda: live.close_now(check.code))
    if revealed:
        exview.show_reveal(ex)


def _index() -> None:
    st.header("Learn NDCG")
    st.markdown("Short lessons, one idea each, with an example and exercises that the page checks. Every number "
                "is computed by the same engine as the leaderboard.")
    for i, lesson in enumerate(LESSONS.values(), 1):
        _link(f"{i}. {lesson.title}", {"lesson": lesson.id}, help=lesson.summary)
    _link(f"{len(LESSONS) + 1}. The sandbox", {"lesson": "sandbox"},
          help="Edit a list of up to 20 documents and watch every number move; make exercises from it.")


_params = st.query_params
if _params.get("live"):
    _live_page(_params["live"], _params.get("key"))
    st.stop()
if _params.get("ex"):
    _set_page(_params["ex"])
    st.stop()
if _params.get("lesson") and _params["lesson"] != "sandbox":
    if _params["lesson"] in LESSONS:
        _lesson_page(LESSONS[_params["lesson"]])
        st.stop()
    st.warning(f"No lesson is called {md(_params['lesson'])}: here are all of them.")
if _params.get("lesson") == "sandbox":
    _link("← All lessons", {})
else:
    _index()


_linked = {key: st.query_params[key] for key in ("g", "k", "gain", "names", "missed", "guess", "vs")
           if st.query_params.get(key)}
# a link (not this page's own address) that names another list: load it
if "learn_sb" not in ss or (_linked.get("g") and _linked != ss.get("learn_written", _linked)):
    ss["learn_sb"] = PRESETS[DEFAULT_PRESET].sandbox
    if "g" in st.query_params:
        try:
            ss["learn_sb"] = sandbox.from_params(st.query_params.to_dict())
            same = [key for key, preset in PRESETS.items() if preset.sandbox == ss["learn_sb"]]
            if same:
                ss["learn_preset"] = same[0]
        except metrics.MetricsError as exc:
            ss["learn_error"] = f"The link's sandbox could not be restored: {exc}"
ss.setdefault("learn_preset", DEFAULT_PRESET)
sb = _sb()
# widgets show the sandbox (set before they are drawn; no widget passes its own default)
for i, grade in enumerate(sb.grades):
    ss[f"learn_grade_{i}"] = text.grade_option(grade)
ss["learn_k"], ss["learn_gain"], ss["learn_n"] = sb.cutoff, sb.gain, len(sb)
ss["learn_missed"] = ",".join(map(str, sb.missed))
if "learn_error" not in ss or not ss["learn_error"].startswith("Second system"):
    ss["learn_vs"] = ", ".join(sb.versus)
for name in sb.unjudged:
    ss[f"learn_guess_{name}"] = sb.guess_of(name)

st.header("The sandbox", anchor="sandbox")
st.markdown("Edit a ranked list of up to 20 documents and watch nDCG and its rivals move. Every number is "
            "computed by the same engine as the leaderboard, on a one-query run built from your list; each "
            "name links to the [glossary](#glossary).")
if ss.get("learn_error"):
    st.warning(ss["learn_error"])

p1, p2 = st.columns([2, 3])
p1.selectbox("Preset", list(PRESETS), key="learn_preset", format_func=lambda k: PRESETS[k].title,
             on_change=_on_preset)
p1.button("Reload preset", key="learn_reload", on_click=_on_preset)
p2.info(PRESETS[ss["learn_preset"]].lesson)

k = sb.cutoff
names = sandbox.measure_names(sb)
values = sandbox.scores(sb)
per_rank = sandbox.per_rank(sb)
gain_word = "exp" if sb.gain == "exp" else "linear"

# -- the editor and the live numbers ------------------------------------------------------------------
left, right = st.columns([6, 5], gap="large")
with left:
    st.subheader("Your ranking")
    b1, b2, b3, b4 = st.columns([1.2, 1, 1, 1.2], vertical_alignment="bottom")
    b1.button("Ideal order", key="learn_ideal", on_click=_ideal, help="Sort by grade, best first (unjudged as 0).")
    b2.button("Reverse", key="learn_reverse", on_click=_reverse)
    b3.button("Shuffle", key="learn_shuffle", on_click=_shuffle, help="A permutation drawn with the seed.")
    b4.number_input("Seed", 0, 10_000, 0, key="learn_seed")
    for i, name in enumerate(sb.names):
        row = per_rank.iloc[i]
        c = st.columns([0.4, 0.8, 1.3, 0.75, 0.75, 2.4], vertical_alignment="center")
        c[0].markdown(f"**{i + 1}**")
        c[1].markdown(md(name))
        c[2].selectbox(f"Grade of {md(name)} at rank {i + 1}", text.GRADE_OPTIONS, key=f"learn_grade_{i}",
                       on_change=_on_grade, args=(i,), label_visibility="collapsed")
        c[3].button("↑", key=f"learn_up_{i}", on_click=_move, args=(i, -1), disabled=i == 0,
                    help=f"Move {md(name)} up", width="stretch")
        c[4].button("↓", key=f"learn_down_{i}", on_click=_move, args=(i, 1), disabled=i == len(sb) - 1,
                    help=f"Move {md(name)} down", width="stretch")
        cut = "" if i < k else " · below k"
        c[5].caption(f"{row['gain']:g} / log2({i + 2}) = {row['contribution']:.3f}{cut}")
    s1, s2 = st.columns(2)
    s1.number_input("Documents in the list", 1, sandbox.MAX_DOCS, key="learn_n", on_change=_on_size)
    s2.text_input("Relevant documents the list missed (grades)", key="learn_missed", on_change=_on_missed,
                  placeholder="e.g. 3,2", help="They count in IDCG and recall, as documents a system failed "
                                               "to retrieve do.")

with right:
    st.subheader("Live values")
    r1, r2 = st.columns(2)
    r1.slider("Cutoff k", 1, sandbox.MAX_DOCS, key="learn_k", on_change=_on_cutoff)
    r2.radio("Gain", list(sandbox.GAIN_NAMES), key="learn_gain", format_func=sandbox.GAIN_NAMES.get,
             on_change=_on_gain, horizontal=True)
    dcg, idcg, ndcg = values[f"DCG {gain_word}"], values[f"IDCG {gain_word}"], values[f"nDCG {gain_word}"]
    m1, m2, m3 = st.columns(3)
    m1.metric(f"DCG@{k}", text.fmt(dcg))
    m2.metric(f"IDCG@{k}", text.fmt(idcg))
    m3.metric(f"nDCG@{k}", text.fmt(ndcg))
    st.markdown(f"{text.link(f'nDCG@{k}', 'ndcg')} = **{text.fmt(ndcg)}** = "
                f"{text.link(f'DCG@{k}', 'dcg')} / {text.link(f'IDCG@{k}', 'idcg')} = "
                f"{text.fmt(dcg)} / {text.fmt(idcg)} · {text.link(f'CG@{k}', 'cg')} = "
                f"{values[f'CG {gain_word}']:g} · measure `{sb.measure}`")
    gain_formula = "2^{rel_r}-1" if sb.gain == "exp" else "rel_r"
    terms = [f"\\frac{{{g:g}}}{{\\log_2 {r + 1}}}" for r, g in zip(per_rank["rank"][:k], per_rank["gain"][:k])
             if g > 0] or ["0"]
    lines = [" + ".join(terms[i:i + 4]) for i in range(0, len(terms), 4)]
    st.latex(rf"\begin{{aligned}}\mathrm{{DCG}}@{k} &= \sum_{{r=1}}^{{{k}}} \frac{{{gain_formula}}}{{\log_2(r+1)}}"
             rf" \\ &= " + r" \\ &\quad + ".join(lines) + rf" \\ &= {dcg:.4f}\end{{aligned}}")
    if sb.missed and ndcg < 1 and sb.ideal().grades == sb.grades:
        st.caption("This is the ideal order of your list, yet nDCG < 1: the missed documents belong in the "
                   "ideal ranking.")

st.markdown(f"**Rank by rank** ({gain_word} gain; the row of rank k = {k} is marked)")
st.table(view.per_rank_styler(per_rank, highlight=k))

# -- exponential against linear gain ----------------------------------------------------------------
st.subheader("Exponential and linear gain")
g1, g2 = st.columns([1, 1], gap="large")
with g1:
    both = pd.DataFrame({
        "exponential (2^rel − 1)": [values["DCG exp"], values["IDCG exp"], values["nDCG exp"]],
        "linear (rel)": [values["DCG linear"], values["IDCG linear"], values["nDCG linear"]],
    }, index=[f"DCG@{k}", f"IDCG@{k}", f"nDCG@{k}"])
    st.table(both.style.format("{:.4f}"))
    diff = values["nDCG exp"] - values["nDCG linear"]
    direction = ("higher" if diff > 0 else "lower") if abs(diff) > 5e-5 else "the same"
    st.markdown(
        f"Here exponential nDCG is **{direction}** ({diff:+.4f}). Exponential gain makes a grade-4 document "
        "worth 15 grade-1 documents (linear: 4), so nDCG with 2^rel − 1 depends mostly on where the top grades "
        "sit: it rewards lists that put them first more and punishes lists that bury them more. With grades "
        "0/1 only, both gains are identical. trec_eval's ndcg_cut uses linear gain; many papers use exponential: "
        "say which.")
    table = sandbox.gain_table()
    st.markdown(f"**{text.link('Gain', 'graded')} per grade**")
    st.table(view.simple_styler(table, {"linear gain": "{:g}", "exponential gain": "{:g}",
                                        "exponential / linear": "{:.2f}"}))
with g2:
    st.plotly_chart(fx.gain_bars(table), width="stretch", config=figures.FIGURE_CONFIG, key="learn_gain_bars")

# -- the discount -------------------------------------------------------------------------------------
st.subheader("The discount 1 / log2(rank + 1)")
d1, d2 = st.columns([3, 2])
d1.plotly_chart(fx.discount_curve(sandbox.discount_curve()), width="stretch", config=figures.FIGURE_CONFIG,
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
rivals = pd.DataFrame({
    "measure": [f"{text.GLOSSARY['map'][0]}", "MRR (RR)", f"P@{k}", f"R@{k}"],
    "value": [values["AP"], values["RR"], values["P"], values["R"]],
    "why it differs from nDCG": [text.MEASURE_NOTES[m] for m in ("AP", "RR", "P", "R")],
})
st.table(view.simple_styler(rivals, {"value": "{:.4f}"}))
st.markdown(" · ".join(f"{text.link(label, term)} = {text.fmt(v)}" for label, term, v in (
    ("AP", "map", values["AP"]), ("RR", "mrr", values["RR"]), (f"P@{k}", "pk", values["P"]),
    (f"R@{k}", "rk", values["R"]))) + f" · {text.link(f'nDCG@{k}', 'ndcg')} = {text.fmt(ndcg)}. "
    "For one query, MAP is AP and MRR is RR; relevant means grade >= 1.")
st.markdown("**Two systems, same documents**: a second system ranks the same documents in another order.")
st.text_input("Second system's order (document names, best first, comma separated)", key="learn_vs",
              on_change=_on_versus, placeholder=", ".join(reversed(sb.names)),
              help="Leave empty for no second system. Every document of your list, once each.")
if sb.versus:
    both = text.systems_both_gains(sb)
    st.table(both.style.format({c: "{:.4f}" for c in both.columns if c != "ranking"}))
    st.markdown(text.flip_message(both, k))

# -- unjudged documents -------------------------------------------------------------------------------
st.subheader("Unjudged documents: three strategies")
if sb.unjudged:
    st.markdown("Guess a grade for each unjudged document (used by the *inferred* strategy):")
    cols = st.columns(min(len(sb.unjudged), 6))
    for i, name in enumerate(sb.unjudged):
        cols[i % len(cols)].selectbox(f"Guess for {md(name)}", list(sandbox.GRADES), key=f"learn_guess_{name}",
                                      on_change=_on_guess, args=(name,))
else:
    st.caption("No document is unjudged: set a grade to ? to see the strategies disagree.")
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
    st.button("Apply this move", key="learn_apply", on_click=_apply, args=(best.to_dict(),))
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
kinds = {"number": "Predict a number of this list", "reorder": f"Reorder the list to reach a target nDCG@{k}",
         "higher": "Which is higher, this list or the second system, under each gain"}
if not sb.versus:
    kinds.pop("higher")
e1, e2 = st.columns(2)
kind = e1.selectbox("Kind of exercise", list(kinds), format_func=kinds.get, key="learn_make_kind")
quantity_names = {"ndcg": f"nDCG@{k}", "dcg": f"DCG@{k}", "idcg": f"IDCG@{k}", "ap": "AP", "rr": "RR",
                  "p": f"P@{k}", "r": f"R@{k}"}
spec = {"kind": kind, "grades": ["?" if g is None else g for g in sb.grades], "cutoff": k, "gain": sb.gain,
        "names": list(sb.names)}
if sb.missed:
    spec["missed"] = list(sb.missed)
if kind == "number":
    quantity = e2.selectbox("Number", list(quantity_names), format_func=quantity_names.get, key="learn_make_q")
    tolerance = e2.number_input("Tolerance (±)", 0.0, 0.5, 0.005, step=0.001, format="%.3f", key="learn_make_tol")
    default = f"What is {quantity_names[quantity]} of this list ({sandbox.GAIN_NAMES[sb.gain]})?"
    spec.update(quantity=quantity, tolerance=tolerance)
elif kind == "reorder":
    target = e2.number_input(f"Target nDCG@{k}", 0.05, 1.0, 0.9, step=0.05, key="learn_make_target")
    default = f"Reorder the list so that nDCG@{k} reaches at least {target:g}."
    spec.update(target=target)
else:
    spec.update(b=["?" if sb.grade_of(n) is None else sb.grade_of(n) for n in sb.versus])
    default = f"Which list scores higher on nDCG@{k}, A or B, under exponential gain and under linear gain?"
question = st.text_input("Question", value=default, key=f"learn_make_question_{kind}")
hint = st.text_input("Hint (optional)", key="learn_make_hint")
spec.update(question=question or default)
if hint:
    spec["hint"] = hint
try:
    made = lessons.from_spec(spec)
    st.markdown(f"The answer the page will compute: **{md(exview.right_text(made))}**")
    st.button("Add to the set", key="learn_make_add",
              on_click=lambda: ss.setdefault("learn_set", []).append(made))
except metrics.MetricsError as exc:
    st.warning(f"This exercise cannot be made: {md(str(exc))}")
exercise_set = ss.get("learn_set", [])
if exercise_set:
    st.markdown(f"**Your set: {len(exercise_set)} exercise(s)**")
    st.table(plain_frame(pd.DataFrame({"question": [e.question for e in exercise_set],
                                       "answer (computed)": [exview.right_text(e) for e in exercise_set]},
                                      index=pd.RangeIndex(1, len(exercise_set) + 1, name="#"))))
    set_link = f"{address.page_url()}?ex={lessons.encode(exercise_set)}"
    st.markdown("The link for your students (it opens the set; the answers are not in it):")
    st.code(set_link, language=None, wrap_lines=True)
    st.link_button("Open the set", f"?ex={lessons.encode(exercise_set)}")
    st.button("Clear the set", key="learn_make_clear", on_click=lambda: ss.pop("learn_set", None))

# -- share -------------------------------------------------------------------------------------------
params = sandbox.to_params(sb)
ss["learn_written"] = params
address.write({**params, **({"lesson": "sandbox"} if st.query_params.get("lesson") == "sandbox" else {})})
st.subheader("Share")
st.markdown("The page address holds this sandbox (grades, cutoff, gain, names): copy it to share. "
            "The query string alone:")
st.code(text.share_query(params), language=None)

"""One exercise on the screen: the question, its list, the answer widgets, the hint, the check,
the reveal with the worked arithmetic and the usual mistake; the live check's student and
projector views; and the sandbox's form that makes an exercise of its list. Every value comes
from ``metrics.analysis.lessons`` (the library's engine).

Widget keys start with the caller's ``key`` so several exercises can share a page.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

import metrics
from metrics.analysis import lessons, sandbox
from metrics.analysis.lessons import Exercise
from ndcg_lab.ui import address
from ndcg_lab.ui import query as view
from ndcg_lab.ui.text import md, plain_frame

ss = st.session_state
SIDES = ["A", "B", "equal"]


def parse_number(text: str) -> float:
    """A typed number: ``0.61``, ``0,61`` or ``61%``."""
    raw = str(text).strip().replace(" ", "")
    percent = raw.endswith("%")
    raw = raw.rstrip("%").replace(",", ".")
    try:
        value = float(raw)
    except ValueError:
        raise metrics.MetricsError(f"{text!r} is not a number", fix="type e.g. 0.61 or 61%") from None
    return value / 100 if percent else value


def list_frame(sb: sandbox.Sandbox) -> pd.DataFrame:
    """The list as the student sees it: rank, document, grade (no gains: those are the exercise)."""
    return plain_frame(pd.DataFrame({"rank": range(1, len(sb) + 1), "document": sb.names,
                                     "grade": ["?" if g is None else str(g) for g in sb.grades]}).set_index("rank"))


def show_inputs(ex: Exercise, key: str) -> None:
    """The exercise's data (list, two lists, options) without anything computed from it."""
    if ex.kind == "higher":
        a, b = st.columns(2)
        a.markdown(f"**List A** (cutoff {ex.sandbox.cutoff})")
        a.table(list_frame(ex.sandbox))
        b.markdown(f"**List B** (cutoff {ex.other.cutoff})")
        b.table(list_frame(ex.other))
    elif ex.collection is not None and ex.quantity in ("mean_a", "mean_b", "wins_b"):
        st.caption(f"The collection of the lesson: {len(ex.collection.queries)} queries, measure "
                   f"`{ex.collection.measure}`.")
    elif ex.sandbox is not None and ex.quantity not in ("discount", "loss", "gain"):
        sb = ss.get(f"{key}_order_sb", ex.sandbox) if ex.kind == "reorder" else ex.sandbox
        missed = f", missed relevant documents (grades): {', '.join(map(str, sb.missed))}" if sb.missed else ""
        strategy = "" if ex.strategy == "zero" else f", unjudged documents: {sandbox.STRATEGIES[ex.strategy]}"
        st.caption(f"Cutoff k = {sb.cutoff}, gain {sandbox.GAIN_NAMES[sb.gain]}{missed}{strategy}.")
        st.table(list_frame(sb))


def _reorder_widgets(ex: Exercise, key: str) -> list[str]:
    sb = ss.setdefault(f"{key}_order_sb", ex.sandbox)

    def move():
        name = ss[f"{key}_move_doc"]
        target = int(ss[f"{key}_move_to"]) - 1
        current = ss[f"{key}_order_sb"]
        index = current.names.index(name)
        ss[f"{key}_order_sb"] = current.moved(index, target - index)
        ss.pop(f"{key}_result", None)

    c1, c2, c3 = st.columns([2, 1, 1], vertical_alignment="bottom")
    c1.selectbox("Document to move", list(sb.names), key=f"{key}_move_doc",
                 format_func=lambda n: f"{n} (grade {sb.grade_of(n) if sb.grade_of(n) is not None else '?'})")
    c2.number_input("To rank", 1, len(sb), 1, key=f"{key}_move_to")
    c3.button("Move", key=f"{key}_move", on_click=move)
    return list(sb.names)


def response_widgets(ex: Exercise, key: str):
    """The answer widgets; returns a callable that reads the response (or raises MetricsError)."""
    if ex.kind == "number":
        st.text_input("Your answer (a number, e.g. 0.61 or 61%)", key=f"{key}_number")
        return lambda: parse_number(ss.get(f"{key}_number", ""))
    if ex.kind == "choice":
        labels = lessons.option_labels(ex)
        st.radio("Your answer", range(len(labels)), key=f"{key}_choice", index=None,
                 format_func=lambda i: md(labels[i]))

        def read_choice():
            if ss.get(f"{key}_choice") is None:
                raise metrics.MetricsError("choose an option first")
            return int(ss[f"{key}_choice"])
        return read_choice
    if ex.kind == "reorder":
        _reorder_widgets(ex, key)
        return lambda: list(ss[f"{key}_order_sb"].names)
    c1, c2 = st.columns(2)
    c1.radio("Higher under exponential gain", SIDES, key=f"{key}_exp", index=None, horizontal=True)
    c2.radio("Higher under linear gain", SIDES, key=f"{key}_linear", index=None, horizontal=True)

    def read_higher():
        if ss.get(f"{key}_exp") is None or ss.get(f"{key}_linear") is None:
            raise metrics.MetricsError("answer for both gains first")
        return {"exp": ss[f"{key}_exp"], "linear": ss[f"{key}_linear"]}
    return read_higher


def right_text(ex: Exercise) -> str:
    """The right answer in words (computed)."""
    right = lessons.answer(ex)
    if ex.kind == "number":
        return f"{right:.4f}" if ex.quantity != "wins_b" else f"{right:.0f}"
    if ex.kind == "choice":
        return lessons.option_labels(ex)[right]
    if ex.kind == "reorder":
        return f"any order with nDCG@{ex.sandbox.cutoff} >= {ex.target:g}; the ideal order reaches {right:.4f}"
    return f"exponential gain: {right['exp']} · linear gain: {right['linear']}"


def bucket(ex: Exercise, response) -> str:
    """A response as one count of a live check: a number rounded to 2 decimals, an option's label,
    or the two sides."""
    if ex.kind == "number":
        return f"{float(response):.2f}" if ex.quantity != "wins_b" else f"{float(response):.0f}"
    if ex.kind == "choice":
        return lessons.option_labels(ex)[int(response)]
    return f"exp {response['exp']} · linear {response['linear']}"


def right_bucket(ex: Exercise) -> str:
    return bucket(ex, lessons.answer(ex))


def show_reveal(ex: Exercise, result: lessons.Result | None = None) -> None:
    """The value and the arithmetic behind it (the per-rank table and the formula with numbers)."""
    st.markdown(f"**The answer:** {md(right_text(ex))}")
    if result is not None and result.mistake:
        st.warning(f"Where it usually goes wrong: {result.mistake}.", icon=":material/search:")
    steps = result.steps if result is not None else lessons.worked(ex)
    st.code("\n".join(steps), language=None, wrap_lines=True)
    table = result.table if result is not None else None
    if table is None and result is None:
        table = lessons.check(ex, _any_response(ex)).table
    if table is not None:
        if "contribution" in table.columns:
            st.table(view.per_rank_styler(table, highlight=ex.sandbox.cutoff))
        else:
            st.table(plain_frame(table).style.format({c: "{:.4f}" for c in table.columns
                                                      if pd.api.types.is_float_dtype(table[c])}))


def _any_response(ex: Exercise):
    right = lessons.answer(ex)
    if ex.kind == "reorder":
        return list(ex.sandbox.ideal().names)
    return right


def show(ex: Exercise, key: str, *, live: bool = False) -> lessons.Result | None:
    """Draw the exercise; returns the checked result once the student has answered."""
    st.markdown(f"**{md(ex.question)}**")
    show_inputs(ex, key)
    read = response_widgets(ex, key)

    def submit():
        try:
            ss[f"{key}_result"] = lessons.check(ex, read())
            ss.pop(f"{key}_error", None)
        except metrics.MetricsError as exc:
            ss[f"{key}_error"] = str(exc)

    b1, b2 = st.columns(2)
    b1.button("Check my answer", key=f"{key}_check", on_click=submit, type="primary", width="stretch")
    if ex.hint:
        b2.button("Hint", key=f"{key}_hint_button", on_click=lambda: ss.__setitem__(f"{key}_hint", True),
                  width="stretch")
    if ss.get(f"{key}_hint") and ex.hint:
        st.info(f"Hint: {md(ex.hint)}", icon=":material/lightbulb:")
    if ss.get(f"{key}_error"):
        st.error(md(ss[f"{key}_error"]))
    result = ss.get(f"{key}_result")
    if result is not None:
        if result.correct:
            st.success("Right." if ex.kind != "reorder" else f"Right: your order reaches {result.value:.4f}.")
        else:
            st.error("Not quite." if ex.kind != "reorder" else
                     f"Not yet: your order reaches {result.value:.4f}, below {ex.target:g}.")
        show_reveal(ex, result)
    return result


# -- live checks -----------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _live_checks(home: str):
    from metrics.store.live import LiveChecks

    return LiveChecks(home)


def live_checks():
    """The live checks of this server (one DuckDB file under NDCG_LAB_HOME)."""
    from ndcg_lab.ui import state

    return _live_checks(str(state.settings().home))


def student(live, check, ex: Exercise) -> None:
    """The student's view of a live check: the question, the answer widgets, one answer sent."""
    st.header(f"Live check {check.code}")
    if ss.get(f"learn_live_sent_{check.code}"):
        st.success("Answer sent. The result is on your teacher's screen.")
        return
    if not check.is_open():
        st.warning("This live check is closed.")
        return
    key = f"learn_live_{check.code}"
    st.markdown(f"**{md(ex.question)}**")
    show_inputs(ex, key)
    read = response_widgets(ex, key)

    def send():
        try:
            live.answer(check.code, bucket(ex, read()))
            ss[f"learn_live_sent_{check.code}"] = True
            ss.pop(f"{key}_error", None)
        except metrics.MetricsError as exc:
            ss[f"{key}_error"] = str(exc)
    st.button("Send my answer", key=f"{key}_send", on_click=send, type="primary")
    if ss.get(f"{key}_error"):
        st.error(md(ss[f"{key}_error"]))


def projector(live, check, ex: Exercise) -> None:
    """The teacher's view of a live check: the link for the class, the counts, reveal and close."""
    st.header(f"Live check · code {check.code}")
    link = f"{address.page_url()}?live={check.code}"
    st.markdown(f"Students open **{address.page_url() or '/learn'}** with the code, or this link:")
    st.code(link, language=None)
    st.markdown(f"**{md(ex.question)}**")
    show_inputs(ex, "learn_projector")
    counts = live.counts(check.code)
    total = sum(counts.values())
    left = check.seconds_left()
    st.caption(f"{total} answers · " + (f"closes in {left // 60} min {left % 60} s" if left else "closed"))
    revealed = ss.get(f"learn_reveal_{check.code}", False)
    if counts:
        right = right_bucket(ex) if revealed else None
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
        show_reveal(ex)


# -- making an exercise of the sandbox's list ---------------------------------------------------------
def maker(sb: sandbox.Sandbox) -> None:
    """The form that turns the sandbox's list into an exercise, the set made so far and its link
    (the link holds the lists and questions, never the answers)."""
    k = sb.cutoff
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
        tolerance = e2.number_input("Tolerance (±)", 0.0, 0.5, 0.005, step=0.001, format="%.3f",
                                    key="learn_make_tol")
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
        st.markdown(f"The answer the page will compute: **{md(right_text(made))}**")
        st.button("Add to the set", key="learn_make_add",
                  on_click=lambda: ss.setdefault("learn_set", []).append(made))
    except metrics.MetricsError as exc:
        st.warning(f"This exercise cannot be made: {md(str(exc))}")
    exercise_set = ss.get("learn_set", [])
    if exercise_set:
        st.markdown(f"**Your set: {len(exercise_set)} exercise(s)**")
        st.table(plain_frame(pd.DataFrame({"question": [e.question for e in exercise_set],
                                           "answer (computed)": [right_text(e) for e in exercise_set]},
                                          index=pd.RangeIndex(1, len(exercise_set) + 1, name="#"))))
        set_link = f"{address.page_url()}?ex={lessons.encode(exercise_set)}"
        st.markdown("The link for your students (it opens the set; the answers are not in it):")
        st.code(set_link, language=None, wrap_lines=True)
        st.link_button("Open the set", f"?ex={lessons.encode(exercise_set)}")
        st.button("Clear the set", key="learn_make_clear", on_click=lambda: ss.pop("learn_set", None))

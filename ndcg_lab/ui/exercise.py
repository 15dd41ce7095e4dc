"""One exercise on the screen: the question, its list, the answer widgets, the hint, the check,
the reveal with the worked arithmetic and the usual mistake; and the sandbox's form that makes an
exercise of its list. Every value comes from ``metrics.analysis.lessons`` (the library's engine).

An exercise tests: nothing on it shows the answer before it is answered (the answer box's label
and placeholder hold no number); a wrong answer gets the usual mistake and the next step of the
arithmetic (:func:`metrics.analysis.lessons.leaks.hints`), never the value; the value shows
after ``tries`` wrong answers or on "Show the answer", and an exercise whose answer was shown is
never counted as right, whatever is typed afterwards.

Widget keys start with the caller's ``key`` so several exercises can share a page; its state is
``{key}_wrong`` (wrong answers so far), ``{key}_revealed`` and ``{key}_right`` (right before any
reveal: what the score counts).
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

import metrics
from metrics.analysis import lessons, sandbox
from metrics.analysis.lessons import Exercise, leaks
from ndcg_lab.ui import address
from ndcg_lab.ui import query as view
from ndcg_lab.ui.text import md, plain_frame

ss = st.session_state
SIDES = ["A", "B", "equal"]
NUMBER_LABEL = "Your answer (a number: a decimal, or a percentage with %)"
NUMBER_PLACEHOLDER = "type your number"
"""The answer box's label and placeholder: no number in them, since any number could be an answer."""
DEFAULT_TRIES, MAX_TRIES = 2, 10
"""Wrong answers before the answer shows by itself (an exercise link may set 1 to ``MAX_TRIES``)."""


def parse_number(text: str) -> float:
    """A typed number: ``0.61``, ``0,61`` or ``61%``."""
    raw = str(text).strip().replace(" ", "")
    percent = raw.endswith("%")
    raw = raw.rstrip("%").replace(",", ".")
    try:
        value = float(raw)
    except ValueError:
        raise metrics.MetricsError(f"{text!r} is not a number",
                                   fix="type a decimal (with a point or a comma) or a percentage (with %)") from None
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
        c = ex.collection
        st.caption(f"nDCG@{c.cutoff} of systems A and B on each of {len(c.queries)} queries (measure "
                   f"`{c.measure}`).")
        st.table(c.per_query()[["A", "B"]].style.format("{:.4f}"))
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
        st.text_input(NUMBER_LABEL, key=f"{key}_number", placeholder=NUMBER_PLACEHOLDER)
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


def right_so_far(key: str) -> bool:
    """Whether the exercise of ``key`` was answered right before its answer was shown (what counts)."""
    return bool(ss.get(f"{key}_right"))


def finished(key: str) -> bool:
    """Whether the exercise of ``key`` is over: answered right, or its answer shown."""
    return right_so_far(key) or bool(ss.get(f"{key}_revealed"))


def _feedback(ex: Exercise, key: str, result: lessons.Result, tries: int) -> None:
    """What a wrong answer gets before the reveal: the usual mistake and the arithmetic up to the
    step after the last one shown, never the value; and how many tries are left."""
    wrong = int(ss.get(f"{key}_wrong", 0))
    if result.mistake and leaks.leak(ex, result.mistake) is None:
        st.warning(f"Where it usually goes wrong: {result.mistake}.", icon=":material/search:")
    steps = leaks.hints(ex)
    if steps:
        st.markdown("**The next step:**")
        st.code("\n".join(steps[:wrong + 1]), language=None, wrap_lines=True)
    elif ex.hint:
        st.info(f"Hint: {md(ex.hint)}", icon=":material/lightbulb:")
    left = tries - wrong
    st.caption(f"{left} more {'try' if left == 1 else 'tries'} before the answer shows.")


def show(ex: Exercise, key: str, *, tries: int = DEFAULT_TRIES) -> bool:
    """Draw the exercise; True once it counts as answered right (never after its answer was shown).
    The answer shows after ``tries`` wrong answers or on "Show the answer"."""
    st.markdown(f"**{md(ex.question)}**")
    show_inputs(ex, key)
    read = response_widgets(ex, key)

    def submit():
        try:
            result = lessons.check(ex, read())
        except metrics.MetricsError as exc:
            ss[f"{key}_error"] = str(exc)
            return
        ss.pop(f"{key}_error", None)
        ss[f"{key}_result"] = result
        if finished(key):
            return                                  # a shown answer typed back, or a second right answer
        if result.correct:
            ss[f"{key}_right"] = True
        else:
            ss[f"{key}_wrong"] = int(ss.get(f"{key}_wrong", 0)) + 1
            if ss[f"{key}_wrong"] >= tries:
                ss[f"{key}_revealed"] = True

    revealed = bool(ss.get(f"{key}_revealed"))
    b1, b2, b3 = st.columns(3)
    b1.button("Check my answer", key=f"{key}_check", on_click=submit, type="primary", width="stretch")
    if ex.hint:
        b2.button("Hint", key=f"{key}_hint_button", on_click=lambda: ss.__setitem__(f"{key}_hint", True),
                  width="stretch")
    b3.button("Show the answer", key=f"{key}_reveal", width="stretch", disabled=finished(key),
              on_click=lambda: ss.__setitem__(f"{key}_revealed", True))
    if ss.get(f"{key}_hint") and ex.hint:
        st.info(f"Hint: {md(ex.hint)}", icon=":material/lightbulb:")
    if ss.get(f"{key}_error"):
        st.error(md(ss[f"{key}_error"]))
    result = ss.get(f"{key}_result")
    if result is not None:
        if result.correct and right_so_far(key):
            st.success("Right." if ex.kind != "reorder" else f"Right: your order reaches {result.value:.4f}.")
        elif result.correct:
            st.info("That is the answer shown: an exercise whose answer was shown does not count as right.",
                    icon=":material/visibility:")
        else:
            st.error("Not quite." if ex.kind != "reorder" else
                     f"Not yet: your order reaches {result.value:.4f}, below {ex.target:g}.")
            if not revealed:
                _feedback(ex, key, result, tries)
    if revealed:
        st.caption("The answer was shown: this exercise does not count as right.")
        show_reveal(ex, result if result is not None and not result.correct else None)
    elif right_so_far(key):
        show_reveal(ex, result)
    return right_so_far(key)


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
        allowed = st.number_input("Wrong tries before the answer shows", 1, MAX_TRIES, DEFAULT_TRIES,
                                  key="learn_make_tries")
        query = f"?ex={lessons.encode(exercise_set)}" + (f"&tries={allowed}" if allowed != DEFAULT_TRIES else "")
        st.markdown("The link for your students (it opens the set; the answers are not in it):")
        st.code(f"{address.page_url()}{query}", language=None, wrap_lines=True)
        st.link_button("Open the set", query)
        st.button("Clear the set", key="learn_make_clear", on_click=lambda: ss.pop("learn_set", None))

"""The Learn page's lessons, exercise sets and live checks: the index of lessons, a lesson with its
example and exercises one at a time, a teacher's set of exercises (``?ex=TOKEN``), and the way
to open a live check of an exercise (its pages: :mod:`ndcg_lab.ui.live`). Every number comes from
``metrics.analysis.lessons`` and ``metrics.stats``.

Addresses keep the workspace token and the sidebar's selection (:mod:`ndcg_lab.ui.address`); an exercise's
position is ``step`` (0-based, omitted for the first).
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd
import streamlit as st

import metrics
from metrics import stats
from metrics.analysis import lessons, sandbox
from ndcg_lab.ui import address, paths, state
from ndcg_lab.ui import exercise as exview
from ndcg_lab.ui import learn as text
from ndcg_lab.ui import live as live_view
from ndcg_lab.ui import query as view
from ndcg_lab.ui.text import md

ss = st.session_state
LIVE_KINDS = ("number", "choice", "higher")
"""Kinds of exercise a class can answer on their phones (a count per answer)."""


def all_lessons() -> Mapping[str, lessons.Lesson]:
    """Every lesson of the package, read and checked once per process (:func:`metrics.analysis.lessons.catalogue`)."""
    return lessons.catalogue()


@dataclass(frozen=True)
class Screen:
    """What a lesson's page computes before its first exercise: its texts with every placeholder
    filled, and its example's numbers (a list: the scores and the rank-by-rank frame; a collection:
    the per-query frame, the summary and the two p-values). Never changed once made."""

    text: str
    try_text: str
    values: dict[str, float] | None = None
    per_rank: pd.DataFrame | None = None
    per_query: pd.DataFrame | None = None
    summary: dict[str, float] | None = None
    p_t: float = float("nan")
    p_r: float = float("nan")


@functools.lru_cache(maxsize=64)
def screen(lesson: lessons.Lesson) -> Screen:
    """The lesson's :class:`Screen`, computed once per process and lesson (lessons are frozen, so
    equal lessons share one): filling the placeholders and scoring the example took 0.1 s of every
    run of a lesson's page, paid again by each of a lecture's students opening it."""
    texts = {"text": lessons.render(lesson, lesson.text), "try_text": lessons.render(lesson, lesson.try_text)}
    if lesson.collection is not None:
        table = lesson.collection.per_query()
        diffs = table["B - A"].to_numpy()
        return Screen(**texts, per_query=table, summary=dict(lesson.collection.summary()),
                      p_t=float(stats.ttest_pvalues(diffs)),
                      p_r=float(stats.randomization_pvalues(diffs, seed=stats.DEFAULT_SEED)))
    sb = lesson.example
    if sb is None:
        return Screen(**texts)
    return Screen(**texts, values=sandbox.scores(sb), per_rank=sandbox.per_rank(sb))


def page_link(label: str, params: dict, **options) -> None:
    """A link to the Learn page with ``params`` (the workspace token kept), within the session."""
    st.page_link(paths.view("learn"), label=label, query_params={**params, **address.kept()}, **options)


def step(n: int) -> int:
    """The exercise the address names (``step``), clamped to 0..n-1; 0 when it is not a number."""
    try:
        return min(max(int(st.query_params.get("step", 0)), 0), n - 1)
    except ValueError:
        return 0


def example(lesson: lessons.Lesson) -> None:
    """The lesson's interactive example: its list's numbers (or the collection's) and a way into the sandbox."""
    shown = screen(lesson)
    if lesson.collection is not None and shown.per_query is not None and shown.summary is not None:
        c, table, summary = lesson.collection, shown.per_query, shown.summary
        m1, m2, m3 = st.columns(3)
        m1.metric(f"Mean nDCG@{c.cutoff} of A", text.fmt(summary["mean_a"]))
        m2.metric(f"Mean nDCG@{c.cutoff} of B", text.fmt(summary["mean_b"]))
        m3.metric("B wins / losses", f"{summary['wins_b']:.0f} / {summary['losses_b']:.0f}")
        st.table(table.style.format("{:.4f}"))
        st.markdown(f"Paired t-test p = **{shown.p_t:.4f}** · randomisation test p = **{shown.p_r:.4f}** (exact "
                    f"over the 2^{len(table)} sign flips) · measure `{c.measure}`. A p-value under 0.05 is the "
                    "usual bar; with ten queries a difference must be large and consistent to pass it.")
        return
    sb = lesson.example
    if sb is None or shown.values is None or shown.per_rank is None:
        return
    values = shown.values
    word = "exp" if sb.gain == "exp" else "linear"
    k = sb.cutoff
    m1, m2, m3 = st.columns(3)
    m1.metric(f"DCG@{k}", text.fmt(values[f"DCG {word}"]))
    m2.metric(f"IDCG@{k}", text.fmt(values[f"IDCG {word}"]))
    m3.metric(f"nDCG@{k}", text.fmt(values[f"nDCG {word}"]))
    st.caption(f"Gain {sandbox.GAIN_NAMES[sb.gain]}, measure `{sb.measure}`" +
               (f", missed relevant documents (grades): {', '.join(map(str, sb.missed))}" if sb.missed else ""))
    st.table(view.per_rank_styler(shown.per_rank, highlight=k))
    page_link("Open this example in the sandbox", {"lesson": "sandbox", **sandbox.to_params(sb)})


def tries() -> dict[str, str]:
    """The address's ``tries`` (wrong answers before the answer shows) as a parameter to keep in the
    address; empty for the default or a value that is not a whole number 1-MAX_TRIES, which is said."""
    raw = st.query_params.get("tries")
    if raw is None:
        return {}
    if raw.strip().isdigit() and 1 <= int(raw) <= exview.MAX_TRIES:
        return {"tries": str(int(raw))}
    st.warning(f"The link's tries={md(raw)} is not a whole number from 1 to {exview.MAX_TRIES}: the answer "
               f"shows after {exview.DEFAULT_TRIES} wrong tries.")
    return {}


def exercise_steps(items: list, base: dict, key: str) -> None:
    """Exercises one at a time (``step`` in the address), Back / Next, a score at the end: answered
    counts the exercises answered right or whose answer was shown, right only the former."""
    n = len(items)
    i = step(n)
    base = {**base, **tries()}
    allowed = int(base.get("tries", exview.DEFAULT_TRIES))
    address.write({**base, **({"step": str(i)} if i else {})})
    done = sum(1 for j in range(n) if exview.finished(f"{key}{j}"))
    right = sum(1 for j in range(n) if exview.right_so_far(f"{key}{j}"))
    st.progress(done / n, text=f"Exercise {i + 1} of {n} · answered {done}, right {right}")
    ex = items[i]
    exview.show(ex, f"{key}{i}", tries=allowed)
    b1, b2 = st.columns(2)
    b1.button("Back", key=f"{key}_back", disabled=i == 0, width="stretch",
              on_click=address.write, args=({**base, "step": str(i - 1)},))
    b2.button("Next exercise", key=f"{key}_next", disabled=i == n - 1, width="stretch",
              on_click=address.write, args=({**base, "step": str(i + 1)},))
    if done == n:
        st.success(f"All {n} exercises answered: {right} right.")
    if ex.kind in LIVE_KINDS:
        offer_live(ex)


def offer_live(ex: lessons.Exercise) -> None:
    """The teacher's way to ask the class this question as a live check (shared server only)."""
    with st.expander("Ask the class (live check)"):
        if not state.settings().shared:
            st.caption("A live check needs the shared server (NDCG_LAB_MODE=shared), which the students' phones "
                       "can reach.")
            return
        minutes = st.number_input("Open for (minutes)", 1, 120, 5, key="learn_live_minutes")

        def open_check():
            check, key = live_view.live_checks().open(lessons.encode([ex]), minutes=float(minutes))
            address.write({"live": check.code, "key": key})
        st.button("Open a live check of this question", key="learn_live_open", on_click=open_check)
        st.caption("Students open the code on their phones; only the counts of the answers are kept, and the "
                   "question closes by itself.")


def lesson_page(all_lessons: Mapping[str, lessons.Lesson], lesson: lessons.Lesson) -> None:
    """A lesson: its text, its example, its exercises and the link to the next lesson."""
    page_link("← All lessons", {})
    ids = list(all_lessons)
    position = ids.index(lesson.id) + 1
    st.header(f"{position}. {lesson.title}")
    st.markdown(screen(lesson).text)
    st.subheader("The example")
    example(lesson)
    st.info(f"**What to try:** {screen(lesson).try_text}", icon=":material/science:")
    st.subheader("Exercises")
    exercise_steps(list(lesson.exercises), {"lesson": lesson.id}, f"learn_ex_{lesson.id}_")
    if position < len(ids):
        nxt = all_lessons[ids[position]]
        page_link(f"Next lesson: {nxt.title}", {"lesson": nxt.id})


def set_page(token: str) -> None:
    """A teacher's set of exercises from its link; a damaged link says so."""
    st.header("Exercises")
    try:
        items = lessons.decode(token)
    except metrics.MetricsError as exc:
        st.error(md(str(exc)))
        return
    st.caption("A set of exercises your teacher made. Answer each, then check: the page computes the answer "
               "with the same engine as the leaderboard.")
    exercise_steps(items, {"ex": token}, f"learn_set_{abs(hash(token)) % 10**8}_")


def index(all_lessons: Mapping[str, lessons.Lesson]) -> None:
    """The list of lessons, then the sandbox's entry."""
    st.header("Learn NDCG")
    st.markdown("Short lessons, one idea each, with an example and exercises that the page checks. Every number "
                "is computed by the same engine as the leaderboard.")
    for i, lesson in enumerate(all_lessons.values(), 1):
        page_link(f"{i}. {lesson.title}", {"lesson": lesson.id}, help=lesson.summary)
    page_link(f"{len(all_lessons) + 1}. The sandbox", {"lesson": "sandbox"},
              help="Edit a list of up to 20 documents and watch every number move; make exercises from it.")

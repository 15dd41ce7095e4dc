"""Streamlit glue of the class-task page: the task manager of this process, the link's access,
times in the visitor's zone, and the view's parts as tables of plain text.

Everything drawn comes from :func:`metrics.tasks.view` (what the link may see): these helpers
only reshape that data, so the page shows nothing the API did not return.
"""
from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pandas as pd
import streamlit as st

import metrics
from metrics import tasks as tasks_module
from metrics.tasks import views as task_views
from metrics.tasks.visible import Board, Finding, InstructorSubmission, Rules, TeamSubmission
from ndcg_lab.ui import state
from ndcg_lab.ui.text import md, plain_frame

PARAM = "task"
MESSAGES = "_task_messages"


@st.cache_resource(show_spinner=False)
def _manager(config) -> tasks_module.Tasks:
    return tasks_module.Tasks(config)


def manager() -> tasks_module.Tasks:
    """The task manager of this process and these settings (shared by every session)."""
    return _manager(state.settings())


def access(token: str) -> tasks_module.TaskAccess:
    """The task of the link's token; a link no task has gets a message and the page stops."""
    try:
        return manager().open(token)
    except metrics.MetricsError as exc:
        st.error(md(f"{exc.problem}. Nothing of any task is shown for this link."), icon=":material/lock:")
        if exc.fix:
            st.write(md(exc.fix[0].upper() + exc.fix[1:] + "."))
        st.stop()


def zone() -> ZoneInfo | None:
    """The visitor's time zone (the browser's, as Streamlit reports it), or None."""
    name = getattr(st.context, "timezone", None)
    try:
        return ZoneInfo(name) if name else None
    except (ZoneInfoNotFoundError, ValueError):
        return None


def local(text: str | None) -> str:
    """An ISO UTC time of the API in the visitor's zone (``2026-12-01 19:00 Europe/Paris``), or in
    UTC, labelled so, when the browser did not say its zone."""
    if not text:
        return "—"
    moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    where = zone()
    if where is None:
        return moment.strftime("%Y-%m-%d %H:%M UTC")
    return moment.astimezone(where).strftime("%Y-%m-%d %H:%M ") + str(where.key)


def duration(seconds: float) -> str:
    """A time left in words, to the minute: ``2 d 3 h 14 min``, ``5 min``, ``under a minute``."""
    minutes = int(max(seconds, 0) // 60)
    if minutes == 0:
        return "under a minute"
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [f"{days} d" if days else "", f"{hours} h" if days or hours else "", f"{minutes} min"]
    return " ".join(p for p in parts if p)


def countdown(task: Rules, now: float) -> str:
    """The line a team page counts down with: the time to the opening or the close (``now``:
    seconds, UTC), else when the task closed or was released."""
    def seconds(text: str | None) -> float:
        return datetime.strptime(str(text), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()

    if task.status == "not open yet" and task.opens:
        return f"Opens in {duration(seconds(task.opens) - now)} ({local(task.opens)})"
    if task.status == "open" and task.closes:
        left = seconds(task.closes) - now
        if left > 0:
            return f"Closes in {duration(left)} ({local(task.closes)})"
    if task.status == "released":
        return f"Released {local(task.released)}: the final standings are below"
    return f"Closed {local(task.closes)}: no more submissions"


def say(kind: str, text: str) -> None:
    """Queue a message (plain text: shown as written, no markdown) for the next rerun (a form's
    result survives the rerun that follows)."""
    st.session_state.setdefault(MESSAGES, []).append((kind, text))


def show_messages() -> None:
    for kind, text in st.session_state.pop(MESSAGES, []):
        {"error": st.error, "success": st.success, "warning": st.warning}.get(kind, st.info)(md(text))


def status_text(task: Rules) -> str:
    """The task's state in words, with its times: not open yet (opens, closes), open (closes),
    closed (at), released (at, and when it closed)."""
    if task.status == "released":
        return f"released {local(task.released)} (closed {local(task.closes)})"
    if task.status == "closed":
        return f"closed {local(task.closes)}"
    if task.status == "not open yet":
        return f"not open yet: opens {local(task.opens)}, closes {local(task.closes)}"
    return f"open until {local(task.closes)}"


def rules_caption(task: Rules) -> str:
    caps = [f"{task.per_day} a day" if task.per_day else None, f"{task.total} in all" if task.total else None]
    caps_text = " and ".join(c for c in caps if c) or "no cap"
    return (f"Status: **{status_text(task)}** · measures {md(', '.join(task.measures))} "
            f"(primary {md(task.primary)}) · {task.n_public} public and {task.n_hidden} hidden topics · "
            f"submissions per team: {caps_text}")


def board_frame(board: Board) -> pd.DataFrame:
    """A board of the view as a table to draw: local times, p-values to 4 digits, text escaped."""
    table = task_views.board_table(board)
    table["last submission"] = [local(x) if isinstance(x, str) else "—" for x in table.pop("last submission (UTC)")]
    for column in [c for c in table.columns if c.startswith("p vs")]:
        table[column] = [f"{p:.4f}" if p is not None and p == p else "—" for p in table[column]]
    for m in board.measures:
        table[m] = [f"{v:.4f}" if v == v else "—" for v in table[m]]
    table["submissions"] = [str(int(v)) if pd.notna(v) else "—" for v in table["submissions"]]
    if any(e.you for e in board.rows):
        table.insert(1, "you", ["◀ you" if e.you else "" for e in board.rows])
    return plain_frame(table.set_index("rank"))


def board_note(board: Board) -> str:
    what = "Final standings" if board.final else "Public board"
    return (f"{what} on the {board.topics} topics ({board.n_topics}) · ordered by {md(board.primary)} · "
            f"vs baseline: {state.TESTS.get(board.test, board.test)}, "
            f"{state.CORRECTIONS.get(board.correction, board.correction)} correction, "
            f"▲/▼ significantly better/worse at p < {board.alpha} · groups: rows not separated by a "
            "significant difference between neighbours share a letter")


def act(action, done: str) -> None:
    """Run an instructor's ``action``; say ``done`` or the refusal at the next run, and rerun."""
    try:
        action()
        say("success", done)
    except metrics.MetricsError as exc:
        say("error", str(exc))
    st.rerun()


def submissions_frame(submissions: Sequence[TeamSubmission], measures: Sequence[str]) -> pd.DataFrame:
    """A team's submissions with their means on the public topics."""
    rows = []
    for s in submissions:
        means = s.means_public
        rows.append({"#": s.id, "label": s.label, "file": s.file_name, "received": local(s.received),
                     **{m: (f"{means[m]:.4f}" if m in means else "—") for m in measures},
                     "final": "✓" if s.final else "", "method": s.method or ""})
    return plain_frame(pd.DataFrame(rows, columns=["#", "label", "file", "received", *measures, "final", "method"])
                       .set_index("#"))


def instructor_frame(submissions: Sequence[InstructorSubmission], primary: str) -> pd.DataFrame:
    """Every submission with its primary score on all, the public and the hidden topics."""
    rows = []
    for s in submissions:
        parts = {"all": s.means_all, "public": s.means_public, "hidden": s.means_hidden}
        means = {f"{primary} {part}": (f"{found[primary]:.4f}" if found is not None else "—")
                 for part, found in parts.items()}
        rows.append({"#": s.id, "team": s.team_name, "label": s.label, "received": local(s.received),
                     **means, "lint findings": len(s.lint), "method": s.method or "",
                     "removed": s.removed_reason or ""})
    return plain_frame(pd.DataFrame(rows).set_index("#"))


def per_query_frame(submission: TeamSubmission, measures: Sequence[str]) -> pd.DataFrame:
    rows = [{"topic": r.qid, **{m: f"{r.values[m]:.4f}" for m in measures}} for r in submission.per_query]
    return plain_frame(pd.DataFrame(rows, columns=["topic", *measures]).set_index("topic"))


def findings_text(findings: Sequence[Finding]) -> list[str]:
    return [md(f.message) for f in findings]

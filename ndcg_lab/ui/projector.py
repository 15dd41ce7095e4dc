"""Projector views: a page for a room's screen, read from the back of a lecture hall.

No sidebar, no toolbar, nothing of the workbench (the app skips the sidebar's selection for a
projector address: :func:`requested`); every text at least 32 px at 1920x1080 (the room's
screen, read at 10 m); the page redraws itself (a fragment run every few seconds). The content
is HTML drawn here with its own sizes, every name and answer escaped. Two views: a live check's
tally (``learn?live=CODE&view=projector``, no key: the teacher controls the check from another
link) and a class task's board (``task?task=<projector token>``).
"""
from __future__ import annotations

import html
from collections.abc import Sequence

import streamlit as st

PARAM, VALUE = "view", "projector"
"""A live check's projector address carries ``view=projector``."""
LIVE_REFRESH = 2  # seconds between two redraws of a live check's tally
BOARD_REFRESH = 5  # seconds between two redraws of a class task's board (a snapshot of the task)

_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stSidebarNav"],
[data-testid="stToolbar"], [data-testid="stHeader"], [data-testid="stDecoration"],
[data-testid="stStatusWidget"], [data-testid="stMainMenu"] { display: none !important; }
[data-testid="stMainBlockContainer"] { padding: 1.5vh 2vw !important; max-width: 100% !important; }
.pj { font-size: 40px; line-height: 1.25; color: #111; font-family: "Source Sans", sans-serif; }
.pj * { font-size: inherit; }
.pj .pj-title { font-size: 56px; font-weight: 700; margin: 0 0 .2em; }
.pj .pj-status { font-size: 40px; margin: 0 0 .4em; }
.pj .pj-grid { display: grid; grid-template-columns: 3fr 2fr; gap: 3vw; align-items: start; }
.pj .pj-tally { display: flex; flex-direction: column; gap: 1vh; height: 56vh; }
.pj .pj-list { margin: .3em 0; overflow-x: auto; }
.pj .pj-row { flex: 1; display: grid; grid-template-columns: 7em 1fr 3em; align-items: center; gap: .4em;
              font-size: 48px; max-height: 18vh; }
.pj .pj-bar { height: 80%; background: #0072B2; min-width: 4px; }
.pj .pj-row.pj-right .pj-bar { background: #009E73; }
.pj .pj-none { font-size: 48px; color: #333; height: 56vh; display: flex; align-items: center; }
.pj .pj-link { font-size: 48px; font-weight: 700; word-break: break-all; }
.pj table { border-collapse: collapse; font-size: 36px; }
.pj td, .pj th { border-bottom: 1px solid #999; padding: .1em .5em; text-align: left; }
.pj .pj-board .pj-entry { font-size: 56px; margin: .15em 0; }
</style>"""


def requested() -> bool:
    """Whether this address is a projector view (the app then draws no sidebar)."""
    params = st.query_params
    if params.get("live") and params.get(PARAM) == VALUE:
        return True
    token = params.get("task")
    if not token:
        return False
    from ndcg_lab.ui import tasks

    try:
        return tasks.access(token).role == "projector"
    except Exception:  # noqa: BLE001 - a bad task link is the task page's to report
        return False


def layout() -> None:
    """Hide the app's chrome (sidebar, toolbar, header) and set the projector's type sizes."""
    st.html(_CSS)


def tally_html(rows: Sequence[tuple[str, int, bool]], *, revealed: bool) -> str:
    """A live check's answers as bars filling 58% of the screen's height: each row the answer, a bar
    as long as its share of the most frequent, the count; once revealed the right answer is
    marked in words (and in green)."""
    if not rows:
        return '<div class="pj-none">No answer yet.</div>'
    top = max(n for _, n, _ in rows)
    out = []
    for answer, n, correct in rows:
        right = revealed and correct
        label = html.escape(answer) + (" ✓ right" if right else "")
        out.append(f'<div class="pj-row{" pj-right" if right else ""}" role="listitem"><span>{label}</span>'
                   f'<div class="pj-bar" aria-hidden="true" style="width:{100 * n / top:.1f}%"></div>'
                   f'<span>{n}</span></div>')
    return f'<div class="pj-tally" role="list" aria-label="answers">{"".join(out)}</div>'


def page_html(title: str, status: str, left: str, right: str = "") -> str:
    """One projector screen: the title, the status line, and two columns of HTML (already escaped)."""
    return (f'<div class="pj"><div class="pj-title">{html.escape(title)}</div>'
            f'<div class="pj-status">{html.escape(status)}</div>'
            f'<div class="pj-grid"><div>{left}</div><div>{right}</div></div></div>')


def board_html(lines: Sequence[tuple[int, str, str, str]]) -> str:
    """A class task's board: one large line a row (rank, name, score, marker), names escaped."""
    if not lines:
        return '<div class="pj-none">No submission yet.</div>'
    return '<div class="pj-board">' + "".join(
        f'<div class="pj-entry">{rank}. {html.escape(name)} · {html.escape(score)} {html.escape(marker)}</div>'
        for rank, name, score, marker in lines) + "</div>"


def task_board(access) -> None:
    """The projector of a class task: its title, status and board, redrawn every few seconds."""
    from metrics.tasks import views as task_views
    from ndcg_lab.ui import tasks

    layout()

    @st.fragment(run_every=BOARD_REFRESH)
    def redraw():
        view = task_views.view(access)
        task = view.task
        board = task_views.shown_board(view)
        if board is None:
            heading, rows = "No board yet", []
        else:
            heading = "Final standings" if board.final else f"Public leaderboard ({board.n_topics} topics)"
            rows = [(e.rank, e.name + (f" · group {e.group}" if e.group else ""),
                     f"{e.means[board.primary]:.4f}" if e.means[board.primary] == e.means[board.primary] else "—",
                     e.marker) for e in board.rows]
        measure = "" if board is None else f" · {board.primary}" + (f" · baseline: {board.baseline}" if board.baseline
                                                                    else "")
        closes = f" · closes {tasks.local(task.closes)}" if task.closes else ""
        st.html(page_html(task.title, f"{heading}{measure} · {task.status}{closes}",
                          board_html(rows)).replace('<div class="pj-grid">', '<div>'))

    redraw()

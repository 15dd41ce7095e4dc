"""A course: lessons (in the instructor's order), exercise sets and the class task behind one
link, with each listed student's progress kept in the task file.

The course belongs to a class task with a class list (:mod:`metrics.tasks.roster`): the
instructor's link opens it to edit it and to read the class's progress; a student's personal
link opens it to see what is done and what is next. Progress is stored per student: a lesson
read (the student says so), an exercise answered right (checked by
:func:`metrics.analysis.lessons.check`, only the fact kept), the task done once the student's
team has submitted. Exercise sets are the Learn page's exercise links (their token), which hold
no answer. Tables are created on first use; a task file without them has no course.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ..analysis import lessons
from ..errors import MetricsError
from ..report.export import neutralised
from . import roster
from .access import TaskAccess
from .task import Connection, Task

__all__ = ["Item", "ItemProgress", "Progress", "KINDS", "PAGE", "PARAM", "ANSWERABLE", "lesson_catalogue",
           "set_items", "items", "exercises_of", "mark_read", "answer", "progress", "class_progress",
           "class_csv"]

KINDS = ("lesson", "exercises", "task")
PAGE = "course"           # the page's address: <public url>course?course=TOKEN (an instructor or personal token)
PARAM = "course"
ANSWERABLE = lessons.KINDS  # exercise kinds the course page asks and checks: every kind a set may hold
TITLE_LIMIT = 80

_TABLES = """
CREATE TABLE IF NOT EXISTS course_items (pos INTEGER PRIMARY KEY, kind VARCHAR, ref VARCHAR, title VARCHAR);
CREATE TABLE IF NOT EXISTS course_progress (student INTEGER, pos INTEGER, part INTEGER, time DOUBLE,
                                            PRIMARY KEY (student, pos, part));
"""


@dataclass(frozen=True)
class Item:
    """One step of a course: a lesson (``ref`` its id), an exercise set (``ref`` its link token)
    or the class task (``ref`` empty)."""

    kind: str
    ref: str
    title: str


@dataclass(frozen=True)
class ItemProgress:
    pos: int
    item: Item
    done: int                     # parts done (a lesson or the task: 0 or 1; a set: exercises right)
    parts: int

    @property
    def complete(self) -> bool:
        return self.done >= self.parts


@dataclass(frozen=True)
class Progress:
    """One student's course: each item with its progress, and the first item not complete."""

    items: tuple[ItemProgress, ...]
    next: int | None              # pos of the next item to do (None: all done)


def lesson_catalogue() -> Mapping[str, lessons.Lesson]:
    return lessons.catalogue()


def exercises_of(item: Item) -> list[lessons.Exercise]:
    """The exercises of an exercise-set item that the course page asks (its answerable kinds)."""
    if item.kind != "exercises":
        return []
    return [ex for ex in lessons.decode(item.ref) if ex.kind in ANSWERABLE]


def _tables(con: Connection) -> None:
    for statement in filter(str.strip, _TABLES.split(";")):
        con.execute(statement)


def _has(con: Connection) -> bool:
    row = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'course_items'").fetchone()
    return bool(row and row[0])


def set_items(access: TaskAccess, chosen: list[Item]) -> None:
    """Set the course of the task of an instructor link (the order is the course's); progress of
    an item that stays at the same place is kept."""
    access.require("instructor")
    known = lesson_catalogue()
    clean = []
    for i, item in enumerate(chosen, start=1):
        if item.kind not in KINDS:
            raise MetricsError(f"item {i}: unknown kind {item.kind!r}", fix="use " + ", ".join(KINDS))
        title = " ".join(str(item.title).split())[:TITLE_LIMIT]
        if item.kind == "lesson":
            if item.ref not in known:
                raise MetricsError(f"item {i}: no lesson {item.ref!r}", fix="pick one of " + ", ".join(known))
            title = title or known[item.ref].title
        elif item.kind == "exercises":
            token = item.ref.rsplit("=", 1)[-1].strip()
            if not exercises_of(Item("exercises", token, "")):
                raise MetricsError(f"item {i}: the exercise set has no exercise the course page can ask",
                                   fix="make a set with exercises on the Learn page")
            item = Item("exercises", token, title)
            title = title or "Exercises"
        else:
            title = title or "Class task"
        clean.append(Item(item.kind, item.ref if item.kind != "task" else "", title))
    if not clean:
        raise MetricsError("a course needs at least one item", fix="pick lessons, an exercise set or the task")
    now = access.task.clock()

    def action(con: Connection) -> None:
        _tables(con)
        old = {int(p): (k, r) for p, k, r in con.execute("SELECT pos, kind, ref FROM course_items").fetchall()}
        con.execute("DELETE FROM course_items")
        for pos, item in enumerate(clean):
            con.execute("INSERT INTO course_items VALUES (?, ?, ?, ?)", [pos, item.kind, item.ref, item.title])
            if old.get(pos) != (item.kind, item.ref):
                con.execute("DELETE FROM course_progress WHERE pos = ?", [pos])
        con.execute("DELETE FROM course_progress WHERE pos >= ?", [len(clean)])
        con.execute("INSERT INTO audit VALUES (?, 'course', ?)", [now, f"{len(clean)} item(s)"])

    access.task.write(action)


def items(task: Task) -> list[Item]:
    with task.transaction() as con:
        if not _has(con):
            return []
        rows = con.execute("SELECT kind, ref, title FROM course_items ORDER BY pos").fetchall()
    return [Item(str(k), str(r), str(t)) for k, r, t in rows]


def _student(access: TaskAccess) -> int:
    if access.student is None:
        raise MetricsError("only a student's personal link keeps progress", fix="open your personal link")
    return access.student


def _item(task: Task, pos: int, kind: str) -> Item:
    chosen = items(task)
    if not 0 <= pos < len(chosen) or chosen[pos].kind != kind:
        raise MetricsError(f"the course has no {kind} at step {pos + 1}", fix="reload the course page")
    return chosen[pos]


def _done(access: TaskAccess, pos: int, part: int) -> None:
    number = _student(access)
    now = access.task.clock()

    def action(con: Connection) -> None:
        _tables(con)
        con.execute("INSERT OR IGNORE INTO course_progress VALUES (?, ?, ?, ?)", [number, pos, part, now])

    access.task.write(action)


def mark_read(access: TaskAccess, pos: int) -> None:
    """The student of a personal link has read the lesson at step ``pos``."""
    _item(access.task, pos, "lesson")
    _done(access, pos, 0)


def answer(access: TaskAccess, pos: int, index: int, response: object) -> lessons.Result:
    """Check the student's answer to exercise ``index`` of the set at step ``pos``; a right one is
    kept as done. The result (right or not, with the worked arithmetic)."""
    exercises = exercises_of(_item(access.task, pos, "exercises"))
    if not 0 <= index < len(exercises):
        raise MetricsError(f"the set has no exercise {index + 1}", fix="reload the course page")
    result = lessons.check(exercises[index], _response(exercises[index], response))
    if result.correct:
        _done(access, pos, index)
    return result


def _response(ex: lessons.Exercise, response: object) -> object:
    """A student's ``response`` in the form :func:`metrics.analysis.lessons.check` takes for the
    exercise's kind: a number, an option's index, the list's documents in the student's order
    (reorder), or the side that scores higher under each gain (higher); else an error that says
    what is expected."""
    if ex.kind == "reorder":
        if isinstance(response, str) or not isinstance(response, Sequence):
            raise MetricsError("a reorder answer is the list's documents in your order",
                               fix="move the documents, then check")
        return [str(name) for name in response]
    if ex.kind == "higher":
        if not isinstance(response, Mapping) or any(response.get(g) is None for g in ("exp", "linear")):
            raise MetricsError("say which list scores higher under both gains",
                               fix="pick A, B or equal for exponential and for linear gain")
        return {g: response[g] for g in ("exp", "linear")}
    typed = response if isinstance(response, (int, float, str)) else ""
    try:
        return int(typed) if ex.kind == "choice" else float(typed)
    except (TypeError, ValueError):
        if ex.kind == "choice":
            raise MetricsError("that answer is not one of the options", fix="choose an option") from None
        raise MetricsError("that answer is not a number", fix="type a number such as 0.75") from None


def _team_submitted(task: Task) -> set[int]:
    subs = task.snapshot().submissions
    live = subs[subs["removed"].isna() & subs["team"].notna()]
    return {int(t) for t in live["team"]}


def _progress_rows(task: Task) -> pd.DataFrame:
    with task.transaction() as con:
        if not _has(con):
            return pd.DataFrame(columns=["student", "pos", "part"])
        return con.execute("SELECT student, pos, part FROM course_progress").df()


def _of(chosen: list[Item], done: pd.DataFrame, team_done: bool) -> Progress:
    out = []
    for pos, item in enumerate(chosen):
        if item.kind == "task":
            count, parts = int(team_done), 1
        else:
            parts = len(exercises_of(item)) if item.kind == "exercises" else 1
            count = int((done["pos"] == pos).sum())
        out.append(ItemProgress(pos, item, min(count, parts), parts))
    following = next((p.pos for p in out if not p.complete), None)
    return Progress(tuple(out), following)


def progress(access: TaskAccess) -> Progress:
    """The course of the student of a personal link, with what is done and what is next."""
    number = _student(access)
    rows = _progress_rows(access.task)
    return _of(items(access.task), rows[rows["student"] == number],
               access.team is not None and access.team in _team_submitted(access.task))


def class_progress(access: TaskAccess) -> pd.DataFrame:
    """The class's progress (instructor only): a row per listed student, a column per course step
    (``done``, ``2/3`` or empty), and the steps complete."""
    access.require("instructor")
    chosen = items(access.task)
    rows = _progress_rows(access.task)
    submitted = _team_submitted(access.task)
    columns = [f"{pos + 1}. {item.title}" for pos, item in enumerate(chosen)]
    table = []
    for s in roster.students(access.task):
        mine = _of(chosen, rows[rows["student"] == s.number], s.team is not None and s.team in submitted)
        cells = {c: ("done" if p.complete else f"{p.done}/{p.parts}" if p.done else "")
                 for c, p in zip(columns, mine.items)}
        table.append({"student id": s.student_id, "name": s.name, **cells,
                      "complete": sum(p.complete for p in mine.items)})
    return pd.DataFrame(table, columns=["student id", "name", *columns, "complete"])


def class_csv(frame: pd.DataFrame) -> str:
    """The class's progress as CSV (formula-looking cells quoted)."""
    return str(neutralised(frame).to_csv(index=False, lineterminator="\r\n"))

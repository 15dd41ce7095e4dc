"""A task's class list: the students, their teams, their activity (tables of the task file).

A class list is a CSV the instructor uploads or pastes: a header naming the columns ``student
id`` and ``name`` (required), ``email`` and ``team`` (optional), in any order and case; comma,
semicolon or tab separated (what spreadsheets write). :func:`parse` checks every line and names
each problem with its line. Each student gets a personal link (:mod:`metrics.tasks.store` keeps
only its hash): the link is HMAC(instructor token, student number and issue), so the instructor's
page can show it again, and a re-issue (the issue number bumped, the old hash deleted) stops the
old one at once.

The tables are created when a class list is first loaded (``CREATE TABLE IF NOT EXISTS``): a task
file without them reads as a task without a class list, which works as it always did.
"""
from __future__ import annotations

import csv
import io as stdlib_io
import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..errors import MetricsError
from ..report.export import FORMULA_START
from .links import derived_token
from .task import TEAM_NAME_LIMIT, Connection, Task, one

__all__ = ["Entry", "Student", "ClassOptions", "COLUMNS", "NAME_LIMIT", "parse", "has_roster", "ensure_tables",
           "load", "students", "options", "set_options", "student_token", "reissue", "remove", "record",
           "activity", "form_team", "team_members"]

NAME_LIMIT = 100
ID_LIMIT = 64
ROWS_LIMIT = 2000
# accepted header spellings of each column (compared lower-case, spaces and underscores alike)
COLUMNS = {"student_id": ("student id", "student_id", "studentid", "id", "id number", "sis user id"),
           "name": ("name", "full name", "student", "student name"),
           "email": ("email", "e-mail", "email address", "mail"),
           "team": ("team", "group", "team name")}

_TABLES = """
CREATE TABLE IF NOT EXISTS students (number INTEGER PRIMARY KEY, student_id VARCHAR, name VARCHAR, email VARCHAR,
                                     team INTEGER, issue INTEGER, added DOUBLE, removed DOUBLE);
CREATE TABLE IF NOT EXISTS student_activity (time DOUBLE, student INTEGER, action VARCHAR, detail VARCHAR);
CREATE TABLE IF NOT EXISTS class_options (key VARCHAR PRIMARY KEY, value VARCHAR);
"""


@dataclass(frozen=True)
class Entry:
    """One line of a class list as parsed (``line``: its line in the file)."""

    line: int
    student_id: str
    name: str
    email: str | None
    team: str | None


@dataclass(frozen=True)
class Student:
    """A student of a task's class list: ``number`` is the task's own key (links, activity)."""

    number: int
    student_id: str
    name: str
    email: str | None
    team: int | None
    issue: int
    removed: bool


@dataclass(frozen=True)
class ClassOptions:
    """The instructor's choices: the largest team students may form (None: no bound), and whether
    students' names are shown to their teammates (display names)."""

    team_size: int | None = None
    display_names: bool = False


def _key(header: str) -> str | None:
    text = " ".join(str(header).replace("_", " ").strip().lower().split())
    for column, spellings in COLUMNS.items():
        if text in {s.replace("_", " ") for s in spellings}:
            return column
    return None


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def parse(data: bytes | str, source: str = "class list") -> list[Entry]:
    """The students of a class-list CSV; a MetricsError naming the line and the problem (every
    problem found, at most ten, in its message) for a file that is not one."""
    text = data.decode("utf-8-sig", "replace") if isinstance(data, (bytes, bytearray)) else str(data)
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise MetricsError("the class list is empty", source=source,
                           fix="give a header line (student id, name, email, team) and a line per student")
    first = text.splitlines()[0]
    delimiter = max(",;\t", key=first.count) if any(c in first for c in ",;\t") else ","
    rows = list(csv.reader(stdlib_io.StringIO(text), delimiter=delimiter))
    header = rows[0]
    keys = [_key(h) for h in header]
    for need in ("student_id", "name"):
        if need not in keys:
            raise MetricsError(f"the header has no {need.replace('_', ' ')} column (found: "
                               f"{', '.join(repr(_clean(h)) for h in header)})", source=source, line=1,
                               fix="name the columns: student id, name, and optionally email and team")
    doubled = sorted({k for k in keys if k and keys.count(k) > 1})
    if doubled:
        raise MetricsError(f"the header names the {doubled[0].replace('_', ' ')} column twice", source=source,
                           line=1, fix="keep one column of each")
    problems: list[tuple[int, str]] = []
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            problems.append((number, f"{len(row)} fields where the header has {len(header)}"))
            continue
        cells = {k: _clean(row[i]) if i < len(row) else "" for i, k in enumerate(keys) if k}
        sid, name = cells.get("student_id", ""), cells.get("name", "")
        email, team = cells.get("email") or None, cells.get("team") or None
        if not sid:
            problems.append((number, "the student id is empty"))
        elif len(sid) > ID_LIMIT:
            problems.append((number, f"the student id is longer than {ID_LIMIT} characters"))
        elif sid.startswith(FORMULA_START):
            problems.append((number, f"the student id {sid!r} begins with {sid[0]!r}, which a spreadsheet reads "
                                     "as a formula, so a gradebook export could not carry it unchanged"))
        elif sid.lower() in seen:
            problems.append((number, f"student id {sid!r} is also on line {seen[sid.lower()]}"))
        if not name:
            problems.append((number, "the name is empty"))
        elif len(name) > NAME_LIMIT:
            problems.append((number, f"the name is longer than {NAME_LIMIT} characters"))
        if email is not None and (email.startswith(FORMULA_START) or email.count("@") != 1 or " " in email
                                  or email.endswith("@")):
            problems.append((number, f"{email!r} is not an email address"))
        if team is not None and len(team) > TEAM_NAME_LIMIT:
            problems.append((number, f"the team name is longer than {TEAM_NAME_LIMIT} characters"))
        if sid:
            seen.setdefault(sid.lower(), number)
        entries.append(Entry(number, sid, name, email, team))
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        detail = "; ".join(f"line {line}: {problem}" for line, problem in problems[:10])
        raise MetricsError(f"{len(problems)} problem(s) in the class list: {detail}{more}", source=source,
                           line=problems[0][0], fix="correct those lines; nothing was loaded")
    if not entries:
        raise MetricsError("the class list has a header but no student", source=source,
                           fix="add a line per student")
    if len(entries) > ROWS_LIMIT:
        raise MetricsError(f"the class list has {len(entries)} students, more than {ROWS_LIMIT}", source=source,
                           fix="split the class into several tasks")
    return entries


def has_roster(con: Connection) -> bool:
    """Whether the task file open in ``con`` has a class list (its tables and a student)."""
    found = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'students'").fetchone()
    if not found or not found[0]:
        return False
    return bool(one(con, "SELECT count(*) FROM students")[0])


def ensure_tables(con: Connection) -> None:
    for statement in filter(str.strip, _TABLES.split(";")):
        con.execute(statement)


def _team_id(con: Connection, name: str, now: float) -> int:
    """The team named ``name`` (case aside), made if new, as :meth:`Task.add_team` makes one."""
    row = con.execute("SELECT id FROM teams WHERE lower(name) = lower(?)", [name]).fetchone()
    if row is not None:
        return int(row[0])
    team_id = int(one(con, "SELECT coalesce(max(id), 0) + 1 FROM teams")[0])
    con.execute("INSERT INTO teams VALUES (?, ?, ?, ?, 0)", [team_id, name, f"Team {team_id}", now])
    con.execute("INSERT INTO audit VALUES (?, 'join', ?)", [now, name])
    return team_id


def load(task: Task, entries: list[Entry], now: float, team_size: int | None = None) -> list[int]:
    """Add the students of ``entries`` to ``task`` (a student id already on the list is refused,
    naming its line); teams named in the list are made. The new students' numbers."""

    def action(con: Connection) -> list[int]:
        ensure_tables(con)
        known = {str(s).lower() for (s,) in con.execute("SELECT student_id FROM students WHERE removed IS NULL")
                 .fetchall()}
        again = [e for e in entries if e.student_id.lower() in known]
        if again:
            raise MetricsError(f"line {again[0].line}: student id {again[0].student_id!r} is on the class list "
                               "already", line=again[0].line, fix="leave out the students already loaded")
        start = int(one(con, "SELECT coalesce(max(number), 0) + 1 FROM students")[0])
        numbers = []
        for i, e in enumerate(entries):
            team = _team_id(con, e.team, now) if e.team else None
            con.execute("INSERT INTO students VALUES (?, ?, ?, ?, ?, 1, ?, NULL)",
                        [start + i, e.student_id, e.name, e.email, team, now])
            numbers.append(start + i)
        if team_size is not None:
            con.execute("INSERT OR REPLACE INTO class_options VALUES ('team_size', ?)", [json.dumps(team_size)])
        con.execute("INSERT INTO audit VALUES (?, 'class list', ?)", [now, f"{len(entries)} student(s) added"])
        return numbers

    return task.write(action)


def students(task: Task, *, removed: bool = False) -> list[Student]:
    """The students of the class list, in list order (none without one)."""
    with task.transaction() as con:
        if not has_roster(con):
            return []
        rows = con.execute("SELECT number, student_id, name, email, team, issue, removed IS NOT NULL FROM students "
                           + ("" if removed else "WHERE removed IS NULL ") + "ORDER BY number").fetchall()
    return [Student(int(n), str(s), str(name), email, None if team is None else int(team), int(issue), bool(r))
            for n, s, name, email, team, issue, r in rows]


def options(task: Task) -> ClassOptions:
    with task.transaction() as con:
        if not has_roster(con):
            return ClassOptions()
        values = {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM class_options").fetchall()}
    return ClassOptions(team_size=values.get("team_size"), display_names=bool(values.get("display_names", False)))


def set_options(task: Task, *, team_size: int | None | bool = False, display_names: bool | None = None) -> None:
    """Change the team size (``False``: unchanged, None: no bound) or the display-names choice."""
    if team_size is not False and team_size is not None and int(team_size) < 1:
        raise MetricsError("a team holds at least one student", fix="give a size of 1 or more")

    def action(con: Connection) -> None:
        ensure_tables(con)
        if team_size is not False:
            con.execute("INSERT OR REPLACE INTO class_options VALUES ('team_size', ?)", [json.dumps(team_size)])
        if display_names is not None:
            con.execute("INSERT OR REPLACE INTO class_options VALUES ('display_names', ?)",
                        [json.dumps(bool(display_names))])

    task.write(action)


def student_token(instructor_token: str, number: int, issue: int) -> str:
    """The personal token of student ``number`` at its ``issue``: HMAC of the instructor token."""
    return derived_token(instructor_token, f"student {number} issue {issue}")


def _live(con: Connection, number: int) -> tuple[Any, ...]:
    row = con.execute("SELECT issue, name FROM students WHERE number = ? AND removed IS NULL", [int(number)]).fetchone()
    if row is None:
        raise MetricsError(f"no student {number} on the class list", fix="pick one from the list")
    return row


def reissue(task: Task, number: int, now: float) -> int:
    """Bump the issue of student ``number`` (its link changes); the new issue."""

    def action(con: Connection) -> int:
        issue = int(_live(con, number)[0]) + 1
        con.execute("UPDATE students SET issue = ? WHERE number = ?", [issue, int(number)])
        con.execute("INSERT INTO student_activity VALUES (?, ?, 'link re-issued', '')", [now, int(number)])
        return issue

    return task.write(action)


def remove(task: Task, number: int, now: float) -> None:
    """Take student ``number`` off the class list (its submissions stay with its team)."""

    def action(con: Connection) -> None:
        _live(con, number)
        con.execute("UPDATE students SET removed = ? WHERE number = ?", [now, int(number)])
        con.execute("INSERT INTO student_activity VALUES (?, ?, 'removed', '')", [now, int(number)])
        con.execute("INSERT INTO audit VALUES (?, 'class list', ?)", [now, f"student {number} removed"])

    task.write(action)


def record(task: Task, number: int, action_name: str, detail: str, now: float) -> None:
    """One line of a student's activity."""
    task.write(lambda con: con.execute("INSERT INTO student_activity VALUES (?, ?, ?, ?)",
                                       [now, int(number), action_name, detail]))


def activity(task: Task) -> pd.DataFrame:
    """Every student's activity: time, student (number), action, detail."""
    with task.transaction() as con:
        if not has_roster(con):
            return pd.DataFrame(columns=["time", "student", "action", "detail"])
        return con.execute("SELECT time, student, action, detail FROM student_activity ORDER BY time, student").df()


def form_team(task: Task, number: int, team: str, now: float) -> int:
    """Student ``number`` (without a team) makes the team ``team`` or joins it, up to the team size
    the instructor set; the team's id."""
    clean = _clean(team)
    if not clean:
        raise MetricsError("the team needs a name", fix="type one")
    if len(clean) > TEAM_NAME_LIMIT:
        raise MetricsError(f"the team name is longer than {TEAM_NAME_LIMIT} characters", fix="shorten it")

    def action(con: Connection) -> int:
        row = con.execute("SELECT team FROM students WHERE number = ? AND removed IS NULL", [int(number)]).fetchone()
        if row is None:
            raise MetricsError("you are not on the class list", fix="ask the instructor")
        if row[0] is not None:
            raise MetricsError("you are in a team already", fix="reload the page")
        size = con.execute("SELECT value FROM class_options WHERE key = 'team_size'").fetchone()
        bound = json.loads(size[0]) if size else None
        team_id = _team_id(con, clean, now)
        members = int(one(con, "SELECT count(*) FROM students WHERE team = ? AND removed IS NULL", [team_id])[0])
        if bound is not None and members >= bound:
            raise MetricsError(f"the team {clean!r} is full ({bound} students)", fix="join or make another team")
        con.execute("UPDATE students SET team = ? WHERE number = ?", [team_id, int(number)])
        con.execute("INSERT INTO student_activity VALUES (?, ?, 'joined team', ?)", [now, int(number), clean])
        return team_id

    return task.write(action)


def team_members(task: Task, team: int) -> list[Student]:
    return [s for s in students(task) if s.team == team]

"""The class list of a task, as its links use it: the instructor loads it, re-issues and removes
personal links; a personal link opens as its student's team (or, before the student is in a
team, as a ``student`` link that may only make or join one).

The registry (:class:`metrics.store.Registry` of :class:`metrics.tasks.Tasks`) keeps
sha256(personal token) -> (task, ``student``, student number), as for every other link: no token
is stored. What the class list holds (names, ids, emails) is a secret of the instructor: a
student's page shows the student's own name, and teammates' names only when the instructor
chose display names (:func:`student_view`).
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..errors import MetricsError
from ..store import Registry, token_hash
from . import roster
from .access import TaskAccess
from .definition import iso
from .links import TaskNotFound, address
from .roster import ClassOptions, Student
from .task import Task

__all__ = ["StudentRow", "TeamRow", "ClassView", "StudentView", "student_access", "refuse_join", "load",
           "reissue", "remove", "links", "class_view", "student_view"]


@dataclass(frozen=True)
class StudentRow:
    """One student as the instructor sees them: identity, team, personal link, activity."""

    number: int
    student_id: str
    name: str
    email: str | None
    team: str | None
    link: str
    submitted: int                # submissions this student made
    team_submissions: int         # live submissions of the student's team
    last_active: str | None       # the latest activity (ISO UTC)


@dataclass(frozen=True)
class TeamRow:
    team: int
    name: str
    members: int
    submissions: int
    last_submission: str | None


@dataclass(frozen=True)
class ClassView:
    """The class list as the instructor sees it."""

    options: ClassOptions
    students: tuple[StudentRow, ...]
    teams: tuple[TeamRow, ...]
    activity: tuple[tuple[str, str, str, str], ...]   # (time, student id, action, detail)


@dataclass(frozen=True)
class StudentView:
    """What a personal link shows of the class list: the student's own name and team, and the
    teammates' names only when the instructor chose display names."""

    name: str
    team: str | None
    teammates: tuple[str, ...]
    team_size: int | None


def _student(task: Task, number: int) -> Student:
    found = [s for s in roster.students(task) if s.number == number]
    if not found:
        raise TaskNotFound("this personal link was withdrawn", fix="ask the instructor for your new link")
    return found[0]


def student_access(task: Task, number: int, token: str) -> TaskAccess:
    """The access of a personal link: its student's team link (``team`` role), or a ``student``
    link while the student has no team."""
    student = _student(task, number)
    if student.team is None:
        return TaskAccess(task, "student", None, token, student=number)
    return TaskAccess(task, "team", student.team, token, student=number)


def refuse_join(task: Task) -> None:
    """With a class list, the join link makes no team: each student uses a personal link."""
    with task.transaction() as con:
        listed = roster.has_roster(con)
    if listed:
        raise MetricsError("this task has a class list: teams are made on the students' personal links",
                           fix="open the personal link the instructor sent you")


def _register(registry: Registry, task: Task, pairs: list[tuple[int, str]]) -> None:
    with registry.write() as db:
        db.executemany("INSERT INTO tokens VALUES (?, ?, 'student', ?)",
                       [(token_hash(token), task.id, number) for number, token in pairs])


def load(registry: Registry, access: TaskAccess, data: bytes | str, source: str = "class list",
         team_size: int | None = None) -> list[int]:
    """Load a class list (a CSV, :func:`metrics.tasks.roster.parse`) into the task of an
    instructor link and register each new student's personal link; the new students' numbers.
    A list with any bad line loads nothing."""
    access.require("instructor")
    entries = roster.parse(data, source)
    if team_size is not None and team_size < 1:
        raise MetricsError("a team holds at least one student", fix="give a size of 1 or more")
    numbers = roster.load(access.task, entries, access.task.clock(), team_size)
    _register(registry, access.task, [(n, roster.student_token(access.token, n, 1)) for n in numbers])
    return numbers


def reissue(registry: Registry, access: TaskAccess, number: int) -> str:
    """A new personal link for student ``number``; the old one stops working at once. The new link."""
    access.require("instructor")
    issue = roster.reissue(access.task, number, access.task.clock())
    token = roster.student_token(access.token, number, issue)
    with registry.write() as db:
        db.execute("DELETE FROM tokens WHERE task = ? AND role = 'student' AND team = ?", [access.task.id, number])
        db.execute("INSERT INTO tokens VALUES (?, ?, 'student', ?)", [token_hash(token), access.task.id, number])
    return address(access.task.settings.public_url, token)


def remove(registry: Registry, access: TaskAccess, number: int) -> None:
    """Take student ``number`` off the class list; its link stops working (its team's runs stay)."""
    access.require("instructor")
    with registry.write() as db:
        db.execute("DELETE FROM tokens WHERE task = ? AND role = 'student' AND team = ?", [access.task.id, number])
    roster.remove(access.task, number, access.task.clock())


def links(access: TaskAccess) -> dict[int, str]:
    """Each listed student's personal link (instructor only): recomputed from the instructor token."""
    access.require("instructor")
    url = access.task.settings.public_url
    return {s.number: address(url, roster.student_token(access.token, s.number, s.issue))
            for s in roster.students(access.task)}


def class_view(access: TaskAccess) -> ClassView:
    """The class list with each student's and team's submissions and activity (instructor only)."""
    access.require("instructor")
    task = access.task
    snap = task.snapshot()
    listed = roster.students(task)
    personal = links(access)
    log = roster.activity(task)
    live = snap.submissions[snap.submissions["removed"].isna() & snap.submissions["team"].notna()]
    team_names = dict(zip(snap.teams["id"].astype(int), snap.teams["name"].astype(str)))
    by_number = {s.number: s for s in listed}
    rows = []
    for s in listed:
        mine = log[log["student"] == s.number]
        team_live = live[live["team"] == s.team] if s.team is not None else live.iloc[0:0]
        rows.append(StudentRow(
            number=s.number, student_id=s.student_id, name=s.name, email=s.email,
            team=team_names.get(s.team) if s.team is not None else None, link=personal[s.number],
            submitted=int((mine["action"] == "submitted").sum()), team_submissions=len(team_live),
            last_active=iso(float(mine["time"].max())) if len(mine) else None))
    teams = []
    for team_id, name in team_names.items():
        team_live = live[live["team"] == team_id]
        teams.append(TeamRow(team=team_id, name=name, members=sum(1 for s in listed if s.team == team_id),
                             submissions=len(team_live),
                             last_submission=iso(float(team_live["received"].max())) if len(team_live) else None))
    entries = tuple((iso(float(r.time)) or "", by_number[int(r.student)].student_id
                     if int(r.student) in by_number else f"removed #{int(r.student)}", str(r.action), str(r.detail))
                    for r in log.itertuples())
    return ClassView(options=roster.options(task), students=tuple(rows), teams=tuple(teams), activity=entries)


def student_view(access: TaskAccess) -> StudentView:
    """What a personal link shows of the class list (see :class:`StudentView`)."""
    if access.student is None:
        raise MetricsError("this is not a personal link", fix="open the link the instructor sent you")
    task = access.task
    me = _student(task, access.student)
    chosen = roster.options(task)
    team_name = None
    mates: tuple[str, ...] = ()
    if me.team is not None:
        teams = task.snapshot().teams
        names = dict(zip(teams["id"].astype(int), teams["name"].astype(str)))
        team_name = names.get(me.team)
        if chosen.display_names:
            mates = tuple(s.name for s in roster.team_members(task, me.team) if s.number != me.number)
    return StudentView(name=me.name, team=team_name, teammates=mates, team_size=chosen.team_size)


def class_frame(view: ClassView) -> pd.DataFrame:
    """The class list as a table (the instructor's page and its CSV)."""
    return pd.DataFrame([{"student id": s.student_id, "name": s.name, "email": s.email or "", "team": s.team or "",
                          "submitted": s.submitted, "team submissions": s.team_submissions,
                          "last active (UTC)": s.last_active or ""} for s in view.students],
                        columns=["student id", "name", "email", "team", "submitted", "team submissions",
                                 "last active (UTC)"])

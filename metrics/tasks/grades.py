"""Grades of a class task's students, by the instructor's rule, as the CSV files gradebooks import.

Rules (:class:`Rule`), applied to each student's team on the final standings (the preview before
the release) of the task's primary measure:

- ``rank``: ``points[i]`` for the team ranked ``i + 1`` among the teams (baselines do not take a
  rank; teams with equal means share the better rank), ``others`` below;
- ``thresholds``: the points of the highest ``(score, points)`` threshold the team's mean reaches,
  else ``others``;
- ``participation``: ``full`` if the team submitted at least once, else ``others``.

Files: Moodle's "Import grades from CSV" maps one identifier column (``ID number`` or ``Email
address``) to its users and a grade column to a grade item; Canvas's gradebook import reads the
columns ``Student, ID, SIS User ID, SIS Login ID, Section`` then one column per assignment, and a
second row ``Points Possible``. Text cells that a spreadsheet would run as formulas are prefixed
with a quote (:func:`metrics.report.export.neutralise`).
"""
from __future__ import annotations

import csv
import io as stdlib_io
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import MetricsError
from ..report.export import neutralise
from . import roster
from .access import TaskAccess
from .views import view
from .visible import InstructorView

__all__ = ["Rule", "Grade", "RULES", "grade", "moodle_csv", "canvas_csv", "MOODLE_COLUMNS", "CANVAS_COLUMNS"]

RULES = ("rank", "thresholds", "participation")
MOODLE_COLUMNS = ("ID number", "Email address", "Full name", "Team")
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


@dataclass(frozen=True)
class Rule:
    """The instructor's grading rule (see the module docstring)."""

    kind: str = "participation"
    points: tuple[float, ...] = ()                          # rank: points of rank 1, 2, ...
    thresholds: tuple[tuple[float, float], ...] = ()        # thresholds: (score at least, points)
    full: float = 100.0                                     # participation: points for a team that submitted
    others: float = 0.0
    max_points: float = field(default=100.0)

    def checked(self) -> Rule:
        if self.kind not in RULES:
            raise MetricsError(f"unknown grading rule {self.kind!r}", fix="use " + ", ".join(RULES))
        if self.kind == "rank" and not self.points:
            raise MetricsError("grading by rank needs the points of rank 1 (and 2, 3, ...)",
                               fix="give points such as 100, 90, 80")
        if self.kind == "thresholds" and not self.thresholds:
            raise MetricsError("grading by thresholds needs at least one threshold",
                               fix="give pairs such as 0.5: 100, 0.3: 70")
        return self


@dataclass(frozen=True)
class Grade:
    student_id: str
    name: str
    email: str | None
    team: str | None
    score: float | None           # the team's primary mean on the final standings (None: no submission)
    rank: int | None              # the team's rank among the teams
    points: float


def _team_results(data: InstructorView) -> tuple[dict[int, float], dict[int, int]]:
    board = data.final_board
    primary = data.task.primary
    scores: dict[int, float] = {}
    for row in board.rows:
        if row.kind == "team" and row.team is not None and row.team not in scores:
            scores[row.team] = float(row.means[primary])
    ranks: dict[int, int] = {}
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    for i, (team, value) in enumerate(ordered):
        better = [t for t, v in ordered[:i] if v > value]
        ranks[team] = len(better) + 1
    return scores, ranks


def grade(access: TaskAccess, rule: Rule) -> list[Grade]:
    """Each listed student's grade by ``rule`` (instructor only), in class-list order."""
    access.require("instructor")
    rule = rule.checked()
    data = view(access)
    assert isinstance(data, InstructorView)
    scores, ranks = _team_results(data)
    names = {t.id: t.name for t in data.teams}
    submitted = {s.team for s in data.submissions if s.team is not None and s.removed is None}
    out = []
    for s in roster.students(access.task):
        team = s.team
        score = scores.get(team) if team is not None else None
        rank = ranks.get(team) if team is not None else None
        if rule.kind == "participation":
            points = rule.full if team in submitted else rule.others
        elif rule.kind == "rank":
            points = rule.points[rank - 1] if rank is not None and rank <= len(rule.points) else rule.others
        else:
            reached = [p for t, p in sorted(rule.thresholds) if score is not None and score >= t]
            points = reached[-1] if reached else rule.others
        out.append(Grade(s.student_id, s.name, s.email, names.get(team) if team is not None else None,
                         score, rank, float(points)))
    return out


def _write(rows: Sequence[Sequence[object]]) -> str:
    buffer = stdlib_io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    for row in rows:
        writer.writerow(["" if v is None else _quoted(v) if isinstance(v, str) else _number(v) for v in row])
    return buffer.getvalue()


def _quoted(text: str) -> str:
    return str(neutralise(text))  # type: ignore[no-untyped-call]


def _number(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    return str(int(number)) if number == int(number) else f"{number:.2f}"


def moodle_csv(grades: Sequence[Grade], item: str) -> str:
    """Moodle's import form: ``ID number, Email address, Full name, Team, <item>``; map ``ID
    number`` (or ``Email address``) to the users and ``<item>`` to the grade item."""
    return _write([[*MOODLE_COLUMNS, item],
                   *[[g.student_id, g.email or "", g.name, g.team or "", g.points] for g in grades]])


def canvas_csv(grades: Sequence[Grade], assignment: str, points_possible: float) -> str:
    """Canvas's gradebook import: ``Student, ID, SIS User ID, SIS Login ID, Section, <assignment>``,
    a ``Points Possible`` row, then a row per student (the student id as the SIS User ID, the
    email as the SIS Login ID; Canvas's own ID left empty)."""
    return _write([[*CANVAS_COLUMNS, assignment], ["Points Possible", "", "", "", "", points_possible],
                   *[[g.name, "", g.student_id, g.email or "", g.team or "", g.points] for g in grades]])

"""What a link of a class task may see, as frozen dataclasses: the shapes
:func:`metrics.tasks.views.view` returns, one name per figure wherever it appears.

A view is one of :class:`JoinView`, :class:`ProjectorView`, :class:`TeamView` and
:class:`InstructorView` (its ``role`` says which). Times are ISO 8601 UTC strings
(``2026-12-01T18:00:00Z``) or None; means are {measure: mean} over the topics their name says:
``means_public`` (the public topics), ``means_hidden``, ``means_all`` (every judged topic) and
``means_final`` (the topics of the final standings: the hidden ones or all, as the task says).
Frozen, so that a board computed once per file generation and shared by every page of a process
cannot be changed by one of them; ``dataclasses.asdict`` gives the plain data (the JSON export).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = ["Rules", "BoardRow", "Board", "Finding", "QueryValues", "Submission", "TeamSubmission",
           "InstructorSubmission", "Allowance", "TeamName", "Topic", "InstructorTopic", "TaskLinks", "Duplicate",
           "TimelinePoint", "TopicSpread", "Wins", "Team", "AuditEntry", "QrelsVersion", "JoinView",
           "ProjectorView", "TeamView", "InstructorView", "View"]

Means = dict[str, float]  # {measure: mean value}, in the task's order of measures


@dataclass(frozen=True)
class Rules:
    """A task's rules and state, as every link sees them."""

    title: str
    description: str
    status: str                   # "not open yet", "open", "closed" or "released"
    opens: str | None
    closes: str | None
    released: str | None
    qrels_released: bool
    measures: tuple[str, ...]
    primary: str
    per_day: int | None           # the caps (None: no cap)
    total: int | None
    finals: int                   # final submissions a team may choose
    board_rule: str               # the public board ranks a team by its "best" or "latest"
    final_topics: str             # "hidden" or "all"
    dev_qrels: bool               # the public topics' judgments open to the teams
    anonymous: bool               # boards show Team 1, Team 2, ... not names
    n_public: int
    n_hidden: int
    test: str
    correction: str
    alpha: float
    now: str | None


@dataclass(frozen=True)
class BoardRow:
    """One row of a board: a team's submission or a baseline, its means and its significance."""

    rank: int
    key: str                      # "s<submission>"
    submission: int
    team: int | None              # None: a baseline
    name: str                     # as the board shows it (a label when the task is anonymous)
    kind: str                     # "team" or "baseline"
    label: str
    means: Means
    submissions: int | None       # the team's live submissions (None: a baseline)
    last: str | None              # the team's latest submission
    p_baseline: float | None      # against the first baseline, corrected over the rows
    marker: str                   # "▲", "▼" or ""
    p_next: float | None          # against the row below, corrected over the pairs
    group: str | None             # rows not separated by a significant neighbour difference share it
    you: bool = False             # a row of the team whose link sees the board
    method: str | None = None     # the team's method line of the run (the final standings only)


@dataclass(frozen=True)
class Board:
    """The public board (``final`` False) or the final standings, on ``n_topics`` topics."""

    final: bool
    topics: str                   # "public", "hidden" or "all"
    n_topics: int
    measures: tuple[str, ...]
    primary: str
    test: str
    correction: str
    alpha: float
    baseline: str | None          # the label of the baseline every row is tested against
    qrels_sha256: str
    rows: tuple[BoardRow, ...]


@dataclass(frozen=True)
class Finding:
    """A lint finding of a submission (:class:`metrics.io.validate.Finding`, as stored)."""

    kind: str
    message: str
    count: int
    examples: tuple[str, ...]
    value: float | None


@dataclass(frozen=True)
class QueryValues:
    """A submission's value of each measure on one topic."""

    qid: str
    values: dict[str, float]


@dataclass(frozen=True)
class Submission:
    """A stored run as its team (or the instructor) sees it."""

    id: int
    label: str
    file_name: str
    received: str | None
    bytes: int
    sha256: str
    final: bool                   # chosen as a final submission
    lint: tuple[Finding, ...]
    method: str | None            # the team's method line (what the run is), None if not given


@dataclass(frozen=True)
class TeamSubmission(Submission):
    """A team's own submission: means on the public topics, per-query values on the topics the
    team may see (the public ones; every judged one after a release with the qrels)."""

    means_public: Means
    per_query: tuple[QueryValues, ...]
    means_final: Means | None     # after the release


@dataclass(frozen=True)
class InstructorSubmission(Submission):
    """Any submission (a baseline: team None), removed ones too; means unless removed."""

    team: int | None
    team_name: str | None
    removed: str | None
    removed_reason: str | None
    means_all: Means | None
    means_public: Means | None
    means_hidden: Means | None


@dataclass(frozen=True)
class Allowance:
    """A team's submissions used and left (None: no cap)."""

    used: int
    used_today: int
    left: int | None
    left_today: int | None
    left_total: int | None


@dataclass(frozen=True)
class TeamName:
    """A team's name, the name boards show (its label when the task is anonymous), its link."""

    name: str | None
    shown_as: str | None
    link: str


@dataclass(frozen=True)
class Topic:
    """A topic as a team sees it: ``public`` is true for the judged public topics only."""

    qid: str
    text: str
    public: bool


@dataclass(frozen=True)
class InstructorTopic(Topic):
    judged: bool


@dataclass(frozen=True)
class TaskLinks:
    instructor: str
    join: str
    projector: str


@dataclass(frozen=True)
class Duplicate:
    """Two runs of different teams that are the same file or the same ranked lists."""

    kind: str                     # "same file" or "same ranked lists"
    first: int
    second: int
    first_team: str | None
    second_team: str | None


@dataclass(frozen=True)
class TimelinePoint:
    """A team's submission and its public mean of the primary measure."""

    team: str | None
    received: str | None
    submission: int
    value: float


@dataclass(frozen=True)
class TopicSpread:
    """The class on one topic: the primary measure over each team's latest submission."""

    qid: str
    public: bool
    min: float
    median: float
    max: float
    mean: float


@dataclass(frozen=True)
class Wins:
    """Topics where a team's latest submission beats, ties or trails the first baseline."""

    team: str | None
    submission: int
    wins: int
    ties: int
    losses: int


@dataclass(frozen=True)
class Team:
    id: int
    name: str
    label: str
    joined: str | None
    submissions: int


@dataclass(frozen=True)
class AuditEntry:
    time: str | None
    action: str
    detail: str


@dataclass(frozen=True)
class QrelsVersion:
    version: int
    created: str | None
    sha256: str
    file_name: str
    note: str
    current: bool


@dataclass(frozen=True)
class JoinView:
    """A join link: the rules only."""

    role: ClassVar[str] = "join"
    task: Rules


@dataclass(frozen=True)
class ProjectorView:
    """A projector link: the rules and the boards (the final one after the release)."""

    role: ClassVar[str] = "projector"
    task: Rules
    board: Board
    final_board: Board | None


@dataclass(frozen=True)
class TeamView:
    """A team link: the rules, the topics, its own submissions and allowance, the boards with its
    rows marked; ``can_copy`` after a release with the qrels."""

    role: ClassVar[str] = "team"
    task: Rules
    team: TeamName
    topics: tuple[Topic, ...]
    allowance: Allowance
    submissions: tuple[TeamSubmission, ...]
    board: Board
    final_board: Board | None
    can_copy: bool


@dataclass(frozen=True)
class InstructorView:
    """The instructor link: everything (the final standings as a preview before the release)."""

    role: ClassVar[str] = "instructor"
    task: Rules
    links: TaskLinks
    topics: tuple[InstructorTopic, ...]
    teams: tuple[Team, ...]
    submissions: tuple[InstructorSubmission, ...]
    duplicates: tuple[Duplicate, ...]
    timeline: tuple[TimelinePoint, ...]
    spread: tuple[TopicSpread, ...]
    wins: tuple[Wins, ...]
    audit: tuple[AuditEntry, ...]
    qrels_versions: tuple[QrelsVersion, ...]
    board: Board
    final_board: Board


View = JoinView | ProjectorView | TeamView | InstructorView

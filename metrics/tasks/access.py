"""A task as one link opens it: the role (instructor, join, projector, team) checked before
every action, which then runs on the task file (:class:`metrics.tasks.task.Task`) through
:mod:`~metrics.tasks.submissions` or :mod:`~metrics.tasks.instructor`. What the link may see is
:func:`metrics.tasks.views.view` of it; removing a task is :meth:`metrics.tasks.Tasks.delete`."""
from __future__ import annotations

from collections.abc import Sequence

from ..errors import MetricsError
from ..store import Workspace
from . import instructor, roster, submissions
from .definition import iso
from .links import Links, address, links_of
from .snapshot import Snapshot
from .submissions import Source
from .task import Task

__all__ = ["TaskAccess"]


class TaskAccess:
    """A task as one link opens it: ``role`` (instructor, join, projector, team) and, for a team
    link, ``team`` (its id). Every action checks the role first."""

    def __init__(self, task: Task, role: str, team: int | None, token: str, student: int | None = None) -> None:
        self.task = task
        self.role = role
        self.team = team
        self.token = token
        self.student = student    # a personal link's student (metrics.tasks.roster), else None

    def require(self, *roles: str) -> None:
        if self.role not in roles:
            raise MetricsError(f"a {self.role} link cannot do this", fix=f"use the {' or '.join(roles)} link")

    def _team(self) -> int:
        """The team of a team link (after :meth:`require` checked the role)."""
        self.require("team")
        if self.team is None:
            raise MetricsError("this team link has no team", fix="ask the instructor")
        return self.team

    @property
    def link(self) -> str:
        return address(self.task.settings.public_url, self.token)

    def links(self) -> Links:
        self.require("instructor")
        return links_of(self.task.settings.public_url, self.token)

    def snapshot(self) -> Snapshot:
        return self.task.snapshot()

    def submit(self, data: Source, label: str | None = None, file_name: str = "run.txt",
               method: str | None = None) -> int:
        """Check, score and store one run of this team with its method line (a sentence saying
        what the run is; other teams see it on the final standings after the release); its id.
        SubmissionRefused says why not."""
        sid = submissions.submit(self.task, self._team(), data, label, file_name, method)
        if self.student is not None:
            roster.record(self.task, self.student, "submitted", f"submission {sid}", self.task.clock())
        return sid

    def choose_finals(self, ids: Sequence[int]) -> None:
        team = self._team()
        snap = self.task.snapshot()
        if snap.status in ("closed", "released"):
            raise MetricsError("the task is closed: the finals can no longer change", fix="ask the instructor")
        instructor.choose_finals(self.task, team, ids, snap.definition.finals)

    def close(self) -> None:
        self.require("instructor")
        now = self.task.clock()
        instructor.set_meta(self.task, "close", f"closed at {iso(now)}", closes=now)

    def set_close(self, closes: float) -> None:
        """Extend (or move) the close; a time in the future reopens a closed task (not a released one)."""
        self.require("instructor")
        snap = self.task.snapshot()
        opens = snap.meta["opens"]
        if opens is not None and closes <= opens:
            raise MetricsError("the close must come after the opening", fix="pick a later time")
        values: dict[str, float | bool | None] = {"closes": float(closes)}
        if snap.meta["released"] is not None and closes > self.task.clock():
            values |= {"released": None, "released_qrels": False}
        instructor.set_meta(self.task, "close time", f"closes at {iso(closes)}", **values)

    def release(self, *, qrels: bool = False) -> None:
        self.require("instructor")
        snap = self.task.snapshot()
        if snap.status not in ("closed", "released"):
            raise MetricsError("the task is still open", fix="close it first (or wait for the close)")
        instructor.set_meta(self.task, "release", "with the qrels" if qrels else "standings only",
                            released=self.task.clock(), released_qrels=bool(qrels))

    def set_options(self, *, dev_qrels: bool | None = None, anonymous: bool | None = None) -> None:
        self.require("instructor")
        values = {k: bool(v) for k, v in (("dev_qrels", dev_qrels), ("anonymous", anonymous)) if v is not None}
        if values:
            instructor.set_meta(self.task, "options", ", ".join(f"{k}={v}" for k, v in values.items()), **values)

    def remove_submission(self, sid: int, reason: str) -> None:
        self.require("instructor")
        instructor.remove_submission(self.task, sid, reason)

    def replace_qrels(self, qrels: Source, file_name: str = "qrels", note: str = "") -> int:
        """A new qrels version (the old ones kept); every submission rescored on it. Its number."""
        self.require("instructor")
        return instructor.replace_qrels(self.task, qrels, file_name, note)

    def add_baseline(self, run: Source, name: str | None = None) -> int:
        self.require("instructor")
        return submissions.add_baseline(self.task, run, name)

    def archive(self) -> bytes:
        """Every submission as a zip of runs with a manifest (and the task's definition,
        topics and qrels versions): the instructor's export of the task."""
        self.require("instructor")
        return instructor.archive(self.task)

    def copy_to(self, workspace: Workspace, name: str | None = None) -> str:
        """After a release with the qrels: this team's runs and the released qrels (and the topics)
        as a new collection of ``workspace``; the collection's name."""
        return instructor.copy_to(self.task, self._team(), workspace, name)

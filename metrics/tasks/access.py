"""A task as one link opens it: the role (instructor, join, projector, team) checked before
every action, which then runs on the task file (:class:`metrics.tasks.store.Task`)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import MetricsError
from ..store import Workspace
from . import instructor
from .definition import iso
from .links import Links
from .snapshot import Snapshot

if TYPE_CHECKING:
    from .store import Task, Tasks

__all__ = ["TaskAccess"]


class TaskAccess:
    """A task as one link opens it: ``role`` (instructor, join, projector, team) and, for a team
    link, ``team`` (its id). Every action checks the role first."""

    def __init__(self, task: Task, role: str, team: int | None, token: str, tasks: Tasks) -> None:
        self.task = task
        self.role = role
        self.team = team
        self.token = token
        self.tasks = tasks

    def require(self, *roles: str) -> None:
        if self.role not in roles:
            raise MetricsError(f"a {self.role} link cannot do this", fix=f"use the {' or '.join(roles)} link")

    @property
    def link(self) -> str:
        return self.tasks.link(self.token)

    def links(self) -> Links:
        self.require("instructor")
        return self.tasks.links(self.token)

    def snapshot(self) -> Snapshot:
        return self.task.snapshot()

    def view(self) -> dict:
        """Exactly what this link may see (:func:`metrics.tasks.views.view`)."""
        from . import views

        return views.view(self)

    def submit(self, data, label: str | None = None, file_name: str = "run.txt") -> int:
        self.require("team")
        return self.task.submit(self.team, data, label, file_name)

    def choose_finals(self, ids: Sequence[int]) -> None:
        self.require("team")
        snap = self.task.snapshot()
        if snap.status in ("closed", "released"):
            raise MetricsError("the task is closed: the finals can no longer change", fix="ask the instructor")
        self.task.choose_finals(self.team, ids, snap.definition.finals)

    def close(self) -> None:
        self.require("instructor")
        now = self.tasks.clock()
        self.task.set_meta("close", f"closed at {iso(now)}", closes=now)

    def set_close(self, closes: float) -> None:
        """Extend (or move) the close; a time in the future reopens a closed task (not a released one)."""
        self.require("instructor")
        snap = self.task.snapshot()
        opens = snap.meta["opens"]
        if opens is not None and closes <= opens:
            raise MetricsError("the close must come after the opening", fix="pick a later time")
        values = {"closes": float(closes)}
        if snap.meta["released"] is not None and closes > self.tasks.clock():
            values |= {"released": None, "released_qrels": False}
        self.task.set_meta("close time", f"closes at {iso(closes)}", **values)

    def release(self, *, qrels: bool = False) -> None:
        self.require("instructor")
        snap = self.task.snapshot()
        if snap.status not in ("closed", "released"):
            raise MetricsError("the task is still open", fix="close it first (or wait for the close)")
        self.task.set_meta("release", "with the qrels" if qrels else "standings only",
                           released=self.tasks.clock(), released_qrels=bool(qrels))

    def set_options(self, *, dev_qrels: bool | None = None, anonymous: bool | None = None) -> None:
        self.require("instructor")
        values = {k: bool(v) for k, v in (("dev_qrels", dev_qrels), ("anonymous", anonymous)) if v is not None}
        if values:
            self.task.set_meta("options", ", ".join(f"{k}={v}" for k, v in values.items()), **values)

    def remove_submission(self, sid: int, reason: str) -> None:
        self.require("instructor")
        self.task.remove_submission(sid, reason)

    def replace_qrels(self, qrels, file_name: str = "qrels", note: str = "") -> int:
        self.require("instructor")
        return self.task.replace_qrels(qrels, file_name, note)

    def add_baseline(self, run, name: str | None = None) -> int:
        self.require("instructor")
        return self.task.add_baseline(run, name)

    def standings(self, fmt: str = "csv") -> str:
        """The board this link may see, as csv, tsv, json or latex (stamped)."""
        from . import views

        return views.export_board(self.view(), fmt)

    def archive(self) -> bytes:
        """Every submission as a zip of runs with a manifest (and the task's definition,
        topics and qrels versions): the instructor's export of the task."""
        self.require("instructor")
        return instructor.archive(self.task)

    def copy_to(self, workspace: Workspace, name: str | None = None) -> str:
        """After a release with the qrels: this team's runs and the released qrels (and the topics)
        as a new collection of ``workspace``; the collection's name."""
        self.require("team")
        return instructor.copy_to(self.task, self.team, workspace, name)

    def delete(self) -> None:
        self.tasks.delete(self)

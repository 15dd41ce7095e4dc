"""The leak detector of the class-task tests: what a team or projector link must never reach
before the release, and a search for it in any text (page text, hover titles, downloads, messages).

Secrets of a task (read with its instructor link):
- the judged document ids of hidden topics that no public topic also judges (a dev set may show
  the public topics' judgments, so a document judged on both says nothing by itself);
- the per-query values of hidden topics of every submission, as the pages and files could print
  them (4 and 6 decimals, Python's repr), leaving out values that a legitimate number on the
  page could also print (0, 1, and any value that equals, at that precision, a public per-query
  value or a mean that the link may see).
- the method lines of other teams' submissions (a team sees its own; the others only on the final
  standings, after the release);
Numbers are matched as whole numbers (no digit or point before, no digit after), so 0.6309 is
not found inside 0.63091.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from metrics import io
from metrics.tasks import views


@dataclass
class Secrets:
    docnos: set[str]
    numbers: set[str]
    methods: set[str] = field(default_factory=set)

    def find(self, text: str) -> list[str]:
        """What of the secrets ``text`` holds (empty: no leak)."""
        words = set(re.findall(r"[\w-]+", text))
        numbers = set(re.findall(r"(?<![\d.])\d+\.\d+(?:e-?\d+)?", text))
        return ([f"hidden judged document {d}" for d in sorted(self.docnos & words)]
                + [f"hidden per-query value {n}" for n in sorted(self.numbers & numbers)]
                + [f"another team's method line {m!r}" for m in sorted(self.methods) if m in text])


def _formats(value: float) -> set[str]:
    return {f"{value:.4f}", f"{value:.6f}", repr(float(value))}


def secrets_of(instructor, team: int | None = None) -> Secrets:
    """The secrets of the task of an instructor :class:`~metrics.tasks.TaskAccess`, before the
    release, for the link of ``team`` (None: a link of no team, the projector): the method lines
    of every other team."""
    snap = instructor.snapshot()
    raw, _ = instructor.task.raw_qrels()
    table = io.read_qrels(raw).table
    hidden, public = set(snap.hidden_qids), set(snap.public_qids)
    qids, docnos = table["qid"].to_pylist(), table["docno"].to_pylist()
    public_docs = {d for q, d in zip(qids, docnos) if q in public}
    hidden_docs = {d for q, d in zip(qids, docnos) if q in hidden} - public_docs
    scores = snap.scores
    allowed = {"0.0000", "1.0000", "0.000000", "1.000000", "0.0", "1.0"}
    for value in scores.loc[scores["qid"].isin(public), "value"]:
        allowed |= _formats(value)
    view = views.view(instructor)
    for board in (view.board, view.final_board):
        for row in board.rows:
            for value in row.means.values():
                allowed |= _formats(value)
            for p in (row.p_baseline, row.p_next):
                if p is not None:
                    allowed |= _formats(p)
    for sub in view.submissions:
        for means in (sub.means_public, sub.means_hidden, sub.means_all):
            for value in (means or {}).values():
                allowed |= _formats(value)
    numbers = set()
    for value in scores.loc[scores["qid"].isin(hidden), "value"]:
        numbers |= _formats(value) - allowed
    methods = {s.method for s in view.submissions if s.method and s.team is not None and s.team != team}
    return Secrets(hidden_docs, numbers, methods)

"""Receiving a run: the bounds, the checks, scoring, and the cap in one transaction.

A run is parsed and scored before the storing transaction, from the stored qrels; a refused or
malformed one writes nothing, so it does not count. The storing transaction (on the task file's
locks, :meth:`metrics.tasks.task.Task.write`) counts the team's submissions of the UTC day and
in all, refuses or inserts, and bumps the team's row: a concurrent transaction on the same row
conflicts and is retried, so no two can take the last slot. If the qrels were replaced between
scoring and storing, the run is scored again.
"""
from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import io
from ..errors import MetricsError
from ..evaluation import score_runs
from ..io import validate as io_validate
from ..io.keys import canonical_digest
from ..io.paths import stem
from ..io.validate import Finding
from ..linting import lint as lint_run
from ..report.text import human_bytes
from .definition import TaskDefinition, day_start, iso
from .snapshot import Meta, read_meta
from .task import Connection, Task, one

__all__ = ["SubmissionRefused", "LABEL_LIMIT", "METHOD_LIMIT", "method_line",
           "Source", "add_baseline", "read_bytes", "findings_json", "lists_digest",
           "allowance_refusal", "check_topics", "judged_subset", "score_frame", "scoring_context", "submit",
           "store", "QRELS_KEPT"]

LABEL_LIMIT = 80
METHOD_LIMIT = 200  # characters of a method line (a sentence: "BM25 + monoT5 rerank of the top 100")
# a file as the API takes it: its bytes, a path, or a file object (an upload widget's value)
Source = bytes | bytearray | memoryview | str | os.PathLike[str] | IO[bytes]
# what scoring a run needs (:func:`scoring_context`): the meta, the topics (qid, public), the qrels
# and their public topics' part
Context = tuple[Meta, list[tuple[str, bool]], io.Qrels, io.Qrels]


class SubmissionRefused(MetricsError):
    """A submission not stored: ``reason`` says why, ``next_allowed`` when the next one may come
    (seconds, UTC; None: no more submissions)."""

    def __init__(self, reason: str, *, next_allowed: float | None, now: float, source: str | None = None,
                 line: int | None = None, fix: str | None = None) -> None:
        self.reason = reason
        self.next_allowed = next_allowed
        when = ("the next one is allowed now" if next_allowed is not None and next_allowed <= now
                else f"the next one is allowed at {iso(next_allowed)}" if next_allowed is not None
                else "no further submission is allowed")
        super().__init__(f"submission refused: {reason}", source=source, line=line,
                         fix=f"{fix + '; ' if fix else ''}{when}")


class _Stale(Exception):
    """The qrels version changed between scoring and storing."""


def read_bytes(src: Source) -> bytes:
    """The bytes of a file given as bytes, a path or a file object (stored unchanged)."""
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src)
    if hasattr(src, "getvalue"):
        return bytes(src.getvalue())
    if hasattr(src, "read"):
        return bytes(src.read())
    path = Path(src).expanduser()
    try:
        return path.read_bytes()
    except OSError as exc:
        raise MetricsError(f"cannot read {str(path)!r} ({exc.strerror or exc})", source=path.name,
                           fix="check the path") from None


def findings_json(findings: Iterable[Finding]) -> str:
    """Lint findings as the JSON list a submission row keeps."""
    return json.dumps([{"kind": f.kind, "message": f.message, "count": f.count, "examples": list(f.examples),
                        "value": f.value} for f in findings])


def lists_digest(run: io.Run) -> str:
    """sha256 of a run's ranked lists (query ids and document ids in trec_eval order: score
    descending, docno descending), whatever its tag, scores or file layout."""
    table = run.table.select(["qid", "docno", "score"])
    order = pc.sort_indices(table, sort_keys=[("qid", "ascending"), ("score", "descending"),
                                              ("docno", "descending")])
    return canonical_digest(table.take(order).select(["qid", "docno"]), io_validate.RUN)


def method_line(text: str | None, now: float) -> str | None:
    """A team's description of a run as one line of plain text (whitespace collapsed; None when
    empty); longer than :data:`METHOD_LIMIT` characters, a refusal (nothing is cut silently)."""
    line = " ".join(str(text or "").split())
    if len(line) > METHOD_LIMIT:
        raise SubmissionRefused(f"the method line has {len(line)} characters, over the limit of {METHOD_LIMIT}",
                                next_allowed=now, now=now, fix="describe the run in one shorter sentence")
    return line or None


def allowance_refusal(con: Connection, team: int, now: float, meta: Meta,
                      definition: TaskDefinition) -> SubmissionRefused | None:
    """The refusal of a submission of ``team`` at ``now``, or None (counts of this transaction)."""
    opens, closes = meta["opens"], meta["closes"]
    if opens is not None and now < opens:
        return SubmissionRefused(f"the task opens at {iso(opens)}", next_allowed=opens, now=now)
    if now >= closes:
        return SubmissionRefused(f"the task closed at {iso(closes)}", next_allowed=None, now=now)
    total, today = one(con, "SELECT count(*), count(*) FILTER (WHERE received >= ?) FROM submissions "
                            "WHERE team = ? AND removed IS NULL", [day_start(now), team])
    if definition.total is not None and total >= definition.total:
        return SubmissionRefused(f"the team has used all {definition.total} submissions", next_allowed=None,
                                 now=now)
    if definition.per_day is not None and today >= definition.per_day:
        tomorrow = day_start(now) + 86400.0
        return SubmissionRefused(f"the team has used its {definition.per_day} submission(s) of today (UTC)",
                                 next_allowed=tomorrow if tomorrow < closes else None, now=now)
    return None


def check_topics(run: io.Run, topics: set[str], source: str, now: float, *, refuse: bool) -> None:
    """A run line naming a query that is no topic of the task: a line-numbered error."""
    qids = run.table["qid"]
    bad = pc.invert(pc.is_in(qids, value_set=pa.array(sorted(topics), type=pa.string())))
    if not pc.any(bad).as_py():
        return
    row = int(np.flatnonzero(bad.to_numpy(zero_copy_only=False))[0])
    line = run.line_of([row])
    qid = qids[row].as_py()
    problem = f"query {qid!r} is not a topic of this task"
    fix = "submit runs of the task's topics only"
    if refuse:
        raise SubmissionRefused(f"the file is not a valid run ({problem})", next_allowed=now, now=now, source=source,
                                line=None if line is None else int(line[0]), fix=fix)
    raise MetricsError(problem, source=source, line=None if line is None else int(line[0]), fix=fix)


def judged_subset(qrels: io.Qrels, qids: set[str]) -> io.Qrels:
    """The judgments of ``qids`` only."""
    table = qrels.table.filter(pc.is_in(qrels.table["qid"], value_set=pa.array(sorted(qids), type=pa.string())))
    return io.read_qrels(table, name=qrels.name, source=qrels.source)


def score_frame(qrels: io.Qrels, run: io.Run, measures: Sequence[str]) -> pd.DataFrame:
    """Per-query values of every measure on every judged topic (a topic the run lacks scores 0)."""
    [scores] = score_runs(qrels, run, list(measures))
    qids = [str(q) for q in scores.qids]
    return pd.DataFrame({"qid": [q for _ in scores.values for q in qids],
                         "measure": [m for m in scores.values for _ in qids],
                         "value": np.concatenate([np.asarray(v, dtype=np.float64) for v in scores.values.values()])
                         if scores.values else np.array([])})


QRELS_KEPT = 8  # parsed judgments kept in a process (a task has one current version)
_JUDGMENTS: dict[tuple[str, str, tuple[str, ...]], tuple[io.Qrels, io.Qrels]] = {}
_JUDGMENTS_LOCK = threading.Lock()


def scoring_context(con: Connection) -> Context:
    """What scoring a run needs: the meta, the topics (qid, public), the current qrels and their
    public topics' part. Parsed once per version (the version's digest and the public topics are
    the key) and kept, so a submission reads and parses the stored judgments only after a change."""
    meta = read_meta(con)
    topics = [(str(q), bool(p)) for q, p in con.execute("SELECT qid, public FROM topics").fetchall()]
    version = int(meta["qrels_version"])
    digest, qrels_name = one(con, "SELECT digest, file_name FROM qrels_versions WHERE version = ?", [version])
    key = (str(digest), str(qrels_name), tuple(sorted(q for q, p in topics if p)))
    with _JUDGMENTS_LOCK:
        judgments = _JUDGMENTS.get(key)
    if judgments is None:
        [raw] = one(con, "SELECT raw FROM qrels_versions WHERE version = ?", [version])
        qrels = io.read_qrels(bytes(raw), source=qrels_name)
        judgments = (qrels, judged_subset(qrels, set(key[2])))
        with _JUDGMENTS_LOCK:
            _JUDGMENTS[key] = judgments
            while len(_JUDGMENTS) > QRELS_KEPT:
                _JUDGMENTS.pop(next(iter(_JUDGMENTS)))
    return meta, topics, judgments[0], judgments[1]


def submit(task: Task, team: int, data: Source, label: str | None = None, file_name: str = "run.txt",
           method: str | None = None) -> int:
    """Check, score and store one run of ``team`` in ``task`` with its method line (what the run
    is, :func:`method_line`); its id. SubmissionRefused says why not."""
    now = task.clock()
    raw = read_bytes(data)
    method = method_line(method, now)
    with task.transaction() as con:
        context = scoring_context(con)
        meta = context[0]
        definition = TaskDefinition.from_json(meta["definition"])
        refusal = allowance_refusal(con, team, now, meta, definition)  # before parsing and scoring
    limit = definition.max_bytes or task.settings.upload_bytes
    if len(raw) > limit:
        raise SubmissionRefused(f"the file is {human_bytes(len(raw))}, over the bound of {human_bytes(limit)}",
                                next_allowed=now, now=now, source=file_name, fix="submit a smaller run")
    if refusal is not None:
        raise refusal
    label = " ".join(str(label or stem(file_name)).split())[:LABEL_LIMIT] or "run"

    def check(con: Connection, at: float) -> SubmissionRefused | None:
        return allowance_refusal(con, team, at, read_meta(con), definition)

    return store(task, team, raw, label, file_name, now, check=check, context=context, method=method)


def store(task: Task, team: int | None, raw: bytes, label: str, file_name: str, now: float,
          check: Callable[[Connection, float], SubmissionRefused | None] | None,
          context: Context | None = None, method: str | None = None) -> int:
    """Parse, check, score and insert one run (``team`` None: a baseline, errors not refusals)
    with its ``method`` line; ``check(con, now)`` is the refusal inside the storing transaction
    (None: no cap). Its id."""
    try:
        run = io.read_run(raw, name=label, source=file_name)
    except MetricsError as exc:
        if team is None:
            raise
        raise SubmissionRefused(f"the file is not a valid run ({exc.problem})", next_allowed=now, now=now,
                                source=exc.source, line=exc.line, fix=exc.fix) from None
    if context is None:
        with task.transaction() as con:
            context = scoring_context(con)
    meta, topics, qrels, public_qrels = context
    check_topics(run, {q for q, _ in topics}, file_name, now, refuse=team is not None)
    definition = TaskDefinition.from_json(meta["definition"])
    scores = score_frame(qrels, run, definition.measures)
    lint_all = findings_json(lint_run(qrels, run))
    # a team's lint: the run's own findings, and those against the public topics' judgments
    # (shown only while the public judgments are open to teams)
    lint_public = json.dumps({"own": json.loads(findings_json(run.findings)),
                              "public": json.loads(findings_json(lint_run(public_qrels, run)))})
    lists = lists_digest(run)
    version = int(meta["qrels_version"])

    def action(con: Connection) -> int:
        if check is not None:
            refusal = check(con, now)
            if refusal is not None:
                raise refusal
            quota = task.settings.quota_bytes
            if quota is not None:
                used = int(one(con, "SELECT coalesce(sum(size), 0) FROM submissions")[0])
                if used + len(raw) > quota:
                    raise SubmissionRefused(f"the task holds {human_bytes(used)} of runs and may hold "
                                            f"{human_bytes(quota)} (NDCG_LAB_QUOTA_BYTES)", next_allowed=None,
                                            now=now, fix="ask the instructor")
            con.execute("UPDATE teams SET counted = counted + 1 WHERE id = ?", [team])
        if int(json.loads(one(con, "SELECT value FROM meta WHERE key = 'qrels_version'")[0])) != version:
            raise _Stale()
        sid = int(one(con, "SELECT coalesce(max(id), 0) + 1 FROM submissions")[0])
        con.execute("INSERT INTO submissions (id, team, label, file_name, digest, lists_digest, size, received, raw, "
                    "lint, lint_public, final, method) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, false, ?)",
                    [sid, team, label, file_name, run.digest, lists, len(raw), now, raw, lint_all, lint_public,
                     method])
        frame = scores.assign(submission=sid, version=version)
        con.register("new_scores", frame)
        con.execute("INSERT INTO scores SELECT submission, version, qid, measure, value FROM new_scores")
        con.unregister("new_scores")
        return sid

    try:
        return task.write(action)
    except _Stale:  # the qrels were replaced while this run was scored: score it again
        return store(task, team, raw, label, file_name, now, check, method=method)  # context read anew


def add_baseline(task: Task, run: Source, name: str | None = None) -> int:
    """Store a baseline run (no team, no cap: a bad file is an error, not a refusal); its id."""
    raw = read_bytes(run)
    label = name or (stem(Path(run).name) if isinstance(run, (str, os.PathLike)) else "baseline")
    return store(task, None, raw, label, label, task.clock(), check=None)

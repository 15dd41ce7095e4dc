"""A task as one read transaction saw it, and this process's cache of the last snapshot per file.

The cache is keyed by the task file's path and holds its generation (the token in
``<file>.gen``, rewritten after every write commit): a snapshot is reused while the generation
is unchanged, else read again. At most :data:`SNAPSHOTS_KEPT` files are kept, oldest dropped first.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field, replace
from typing import Any

import duckdb
import pandas as pd

from .definition import TaskDefinition, canonical_measure

__all__ = ["Snapshot", "read_meta", "read_snapshot", "cached_snapshot", "keep_snapshot", "forget_snapshot",
           "SNAPSHOTS_KEPT"]

SNAPSHOTS_KEPT = 64
Meta = dict[str, Any]    # the meta table: {key: its JSON value}
Values = dict[tuple[int, str], dict[str, float]]  # {(submission, measure): {qid: value}}
_SNAPSHOTS: dict[str, tuple[str, Snapshot]] = {}
_SNAPSHOTS_LOCK = threading.Lock()


@dataclass
class Snapshot:
    """A task as one read transaction saw it (no stored file bytes)."""

    id: str
    definition: TaskDefinition
    meta: Meta
    topics: pd.DataFrame
    teams: pd.DataFrame
    submissions: pd.DataFrame
    scores: pd.DataFrame
    versions: pd.DataFrame
    audit: pd.DataFrame
    now: float
    # what is computed from this generation of the file (values, boards), shared by its copies
    computed: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def status(self) -> str:
        if self.meta["released"] is not None:
            return "released"
        if self.now >= self.meta["closes"]:
            return "closed"
        if self.meta["opens"] is not None and self.now < self.meta["opens"]:
            return "not open yet"
        return "open"

    @property
    def public_qids(self) -> list[str]:
        t = self.topics
        return list(map(str, t.loc[t["public"] & t["judged"], "qid"]))

    @property
    def hidden_qids(self) -> list[str]:
        t = self.topics
        return list(map(str, t.loc[~t["public"] & t["judged"], "qid"]))

    @property
    def judged_qids(self) -> list[str]:
        t = self.topics
        return list(map(str, t.loc[t["judged"], "qid"]))

    def values(self) -> Values:
        """{(submission, measure): {qid: value}} of the current qrels version (built once)."""
        found = self.computed.get("values")
        if found is None:
            s = self.scores
            found = {}
            for sid, measure, qid, value in zip(s["submission"].astype(int).tolist(), s["measure"].astype(str).tolist(),
                                                s["qid"].astype(str).tolist(), s["value"].astype(float).tolist()):
                found.setdefault((sid, canonical_measure(measure)), {})[qid] = value
            self.computed["values"] = found
        values: Values = found
        return values

    def final_qids(self) -> list[str]:
        return self.hidden_qids if self.definition.final_topics == "hidden" else self.judged_qids

    def qrels_digest(self) -> str:
        v = self.versions
        return str(v.loc[v["version"] == int(self.meta["qrels_version"]), "digest"].iloc[0])


def read_meta(con: duckdb.DuckDBPyConnection) -> Meta:
    """The task's meta table, as of transaction ``con``."""
    return {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM meta").fetchall()}


def read_snapshot(con: duckdb.DuckDBPyConnection, task_id: str, now: float) -> Snapshot:
    """The snapshot of the task file open in transaction ``con`` (every table but the file bytes)."""
    meta = read_meta(con)
    topics = con.execute("SELECT qid, text, judged, public FROM topics ORDER BY pos").df()
    teams = con.execute("SELECT id, name, label, created FROM teams ORDER BY id").df()
    subs = con.execute("SELECT id, team, label, file_name, digest, lists_digest, size, received, lint, "
                       "lint_public, final, removed, removed_reason, method FROM submissions ORDER BY id").df()
    version = int(meta["qrels_version"])
    scores = con.execute("SELECT s.submission, s.qid, s.measure, s.value FROM scores s "
                         "JOIN submissions b ON b.id = s.submission "
                         "WHERE s.version = ? AND b.removed IS NULL", [version]).df()
    versions = con.execute("SELECT version, created, digest, file_name, note FROM qrels_versions "
                           "ORDER BY version").df()
    audit = con.execute("SELECT time, action, detail FROM audit ORDER BY time").df()
    subs["team"] = subs["team"].astype("float64")
    subs["removed"] = subs["removed"].astype("float64")
    subs["final"] = subs["final"].fillna(False).astype(bool)
    definition = TaskDefinition.from_json(meta["definition"])
    definition = replace(definition, closes=meta["closes"], opens=meta["opens"],
                         dev_qrels=bool(meta["dev_qrels"]), anonymous=bool(meta["anonymous"]))
    return Snapshot(task_id, definition, meta, topics, teams, subs, scores, versions, audit, now)


def cached_snapshot(path: str, generation: str | None, now: float) -> Snapshot | None:
    """The kept snapshot of ``path`` if it has this ``generation`` (with ``now`` set), else None."""
    cached = _SNAPSHOTS.get(path)
    if cached is not None and generation is not None and cached[0] == generation:
        return replace(cached[1], now=now)
    return None


def keep_snapshot(path: str, generation: str | None, snap: Snapshot) -> None:
    """Keep ``snap`` as the snapshot of ``path`` at ``generation`` (nothing without a generation)."""
    if generation is None:
        return
    with _SNAPSHOTS_LOCK:
        _SNAPSHOTS[path] = (generation, snap)
        while len(_SNAPSHOTS) > SNAPSHOTS_KEPT:
            _SNAPSHOTS.pop(next(iter(_SNAPSHOTS)))


def forget_snapshot(path: str) -> None:
    _SNAPSHOTS.pop(path, None)

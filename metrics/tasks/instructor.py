"""The instructor's changes to a task file (close, reopen, release, options, remove a submission,
replace the qrels), a team's choice of finals, and the exports: the instructor's archive, a
team's copy into its own workspace after a release.

Each change is one write transaction with its line in the audit table. Replacing the qrels keeps
the old versions and rescores every submission on the new one, in the transaction that makes it
current.
"""
from __future__ import annotations

import io as stdlib_io
import json
import re
import zipfile
from collections.abc import Sequence

import pandas as pd

from .. import io
from ..errors import MetricsError
from ..store import Workspace
from .definition import TaskDefinition, iso
from .submissions import Source, read_bytes, score_frame
from .task import Connection, Task, one

__all__ = ["set_meta", "remove_submission", "choose_finals", "replace_qrels", "archive", "copy_to", "safe_name"]


def set_meta(task: Task, action_name: str, detail: str, **values: float | bool | None) -> None:
    """Set meta ``values`` of ``task``, audited."""
    now = task.clock()

    def action(con: Connection) -> None:
        for key, value in values.items():
            con.execute("UPDATE meta SET value = ? WHERE key = ?", [json.dumps(value), key])
        con.execute("INSERT INTO audit VALUES (?, ?, ?)", [now, action_name, detail])

    task.write(action)


def remove_submission(task: Task, sid: int, reason: str) -> None:
    reason = " ".join(str(reason).split())
    if not reason:
        raise MetricsError("removing a submission needs a reason", fix="say why, for the audit list")
    now = task.clock()

    def action(con: Connection) -> None:
        row = con.execute("SELECT team, label FROM submissions WHERE id = ? AND removed IS NULL",
                          [int(sid)]).fetchone()
        if row is None:
            raise MetricsError(f"no submission {sid} to remove", fix="pick one from the list")
        con.execute("UPDATE submissions SET removed = ?, removed_reason = ? WHERE id = ?", [now, reason, int(sid)])
        con.execute("INSERT INTO audit VALUES (?, 'remove', ?)", [now, f"submission {sid} ({row[1]}): {reason}"])

    task.write(action)


def choose_finals(task: Task, team: int, ids: Sequence[int], limit: int) -> None:
    ids = [int(i) for i in dict.fromkeys(ids)]
    if len(ids) > limit:
        raise MetricsError(f"a team may choose at most {limit} final submission(s)", fix="choose fewer")

    def action(con: Connection) -> None:
        own = {int(r[0]) for r in con.execute("SELECT id FROM submissions WHERE team = ? AND removed IS NULL",
                                               [team]).fetchall()}
        if not set(ids) <= own:
            raise MetricsError("a final submission must be one of the team's own", fix="pick from the list")
        con.execute("UPDATE submissions SET final = list_contains(?, id) WHERE team = ?", [ids, team])

    task.write(action)


def replace_qrels(task: Task, qrels: Source, file_name: str, note: str) -> int:
    """A new qrels version (the old ones kept); every submission rescored on it. Its number."""
    raw = read_bytes(qrels)
    parsed = io.read_qrels(raw, source=file_name)
    meta = task.meta()
    with task.transaction() as con:
        known = {q for (q,) in con.execute("SELECT qid FROM topics").fetchall()}
        subs = con.execute("SELECT id, label, file_name, raw FROM submissions").fetchall()
    judged = set(parsed.table["qid"].to_pylist())
    unknown = sorted(judged - known)
    if unknown:
        raise MetricsError(f"{len(unknown)} judged topic(s) are not topics of the task: "
                           f"{', '.join(map(repr, unknown[:5]))}", source=file_name,
                           fix="judge the task's topics only")
    definition = TaskDefinition.from_json(meta["definition"])
    rescored = [score_frame(parsed, io.read_run(bytes(r), name=label, source=name), definition.measures)
                .assign(submission=int(i)) for i, label, name, r in subs]
    now = task.clock()

    def action(con: Connection) -> int:
        version = int(one(con, "SELECT max(version) + 1 FROM qrels_versions")[0])
        con.execute("INSERT INTO qrels_versions VALUES (?, ?, ?, ?, ?, ?)",
                    [version, now, parsed.digest, file_name, note, raw])
        if rescored:
            frame = pd.concat(rescored, ignore_index=True).assign(version=version)
            con.register("new_scores", frame)
            con.execute("INSERT INTO scores SELECT submission, version, qid, measure, value FROM new_scores")
            con.unregister("new_scores")
        con.execute("UPDATE topics SET judged = list_contains(?, qid)", [sorted(judged)])
        con.execute("UPDATE meta SET value = ? WHERE key = 'qrels_version'", [json.dumps(version)])
        con.execute("INSERT INTO audit VALUES (?, 'qrels', ?)",
                    [now, f"version {version} from {file_name}: {note}".strip()])
        return version

    return task.write(action)


def archive(task: Task) -> bytes:
    """Every submission of ``task`` as a zip of runs with a manifest (and the task's definition,
    topics and qrels versions): the instructor's export of the task."""
    snap = task.snapshot()
    runs = task.raw_runs()
    names = dict(zip(snap.teams["id"].astype(int), snap.teams["name"].astype(str)))
    buffer = stdlib_io.BytesIO()
    manifest = []
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for row in snap.submissions.itertuples():
            team = "baseline" if pd.isna(row.team) else names.get(int(row.team), f"team {int(row.team)}")
            path = f"runs/{int(row.id):04d}-{safe_name(team)}-{safe_name(row.label)}.run"
            zf.writestr(path, runs[int(row.id)])
            manifest.append({"file": path, "submission": int(row.id), "team": team, "label": row.label,
                             "file_name": row.file_name, "sha256": row.digest, "bytes": int(row.size),
                             "received": iso(row.received), "final": bool(row.final),
                             "removed": iso(row.removed) if not pd.isna(row.removed) else None,
                             "removed_reason": None if pd.isna(row.removed) else row.removed_reason})
        for v in snap.versions.itertuples():
            raw, _ = task.raw_qrels(int(v.version))
            zf.writestr(f"qrels/v{int(v.version)}-{safe_name(v.file_name)}", raw)
        zf.writestr("topics.tsv", snap.topics[["qid", "text", "public", "judged"]].to_csv(sep="\t", index=False))
        zf.writestr("task.json", json.dumps({"definition": json.loads(snap.definition.to_json()),
                                             "closes": iso(snap.meta["closes"]),
                                             "released": iso(snap.meta["released"])}, indent=2))
        zf.writestr("manifest.json", json.dumps(manifest, indent=2))
    return buffer.getvalue()


def copy_to(task: Task, team: int, workspace: Workspace, name: str | None = None) -> str:
    """After a release with the qrels: ``team``'s runs and the released qrels (and the topics)
    as a new collection of ``workspace``; the collection's name."""
    snap = task.snapshot()
    if snap.meta["released"] is None or not snap.meta["released_qrels"]:
        raise MetricsError("the instructor has not released the qrels yet", fix="wait for the release")
    raw, qrels_name = task.raw_qrels()
    mine = snap.submissions[(snap.submissions["team"] == team) & snap.submissions["removed"].isna()]
    runs = task.raw_runs([int(i) for i in mine["id"]])
    base = " ".join((name or snap.definition.title).split())[:80] or "class task"
    collection, n = base, 1
    while workspace.has_collection(collection):
        n += 1
        collection = f"{base} ({n})"
    topics = snap.topics[["qid", "text"]].astype(str)
    workspace.create_collection(collection, io.read_qrels(raw, source=qrels_name), topics=topics)
    for row in mine.itertuples():
        workspace.add_run(collection, io.read_run(runs[int(row.id)], name=row.label, source=row.file_name),
                          row.label)
    return collection


def safe_name(text: str) -> str:
    """``text`` as a file-name part: letters, digits, ``_.-`` (others become ``_``), at most 60."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_")[:60] or "x"

"""What each link of a task may see, as plain data: the one leak surface of a class task.

:func:`view` returns, for a link, exactly what its pages, downloads and messages may show;
the task page draws this and nothing else, and the command line prints from it.

- ``team`` before the release: the task's rules, the topics (ids and text, never judgments),
  its own submissions with means and per-query values on the public topics only, its
  allowance, and the public board. Lint findings that need qrels are computed on the public
  topics' judgments, and only when those are open (a dev set); else only the run's own
  findings. After the release: the final standings too; after a release with the qrels,
  its per-query values on every topic and the qrels themselves.
- ``projector``: the rules and the boards (public, and final after the release).
- ``join``: the rules (title, description, times, measures, caps).
- ``instructor``: everything.

Boards: each row is a team's submission (public board: its best or latest on the public
topics; final: its best chosen final, else its latest, on the hidden or all topics) or a
baseline; ordered by the primary measure. Means are :func:`metrics.evaluation.mean_values` of
the per-query values (so they equal ``python -m metrics eval`` on the same qrels topics).
Significance on the primary measure, with the task's test and correction: every row
against the first baseline (:func:`metrics.stats.compare`, one correction over those rows),
and each row against the row below it (one correction over those pairs). Groups: a new
group starts below a row whose difference to the next is significant, so rows of one group
are not separated by a significant neighbour difference.
"""
from __future__ import annotations

import json
import string
import time

import numpy as np
import pandas as pd

from .. import __version__
from ..errors import MetricsError
from ..evaluation import Scores, mean_values
from ..report import export
from ..report import text as report_text
from ..stats import adjust, compare, paired_pvalues, wins_ties_losses
from .definition import iso
from .store import Snapshot, TaskAccess

__all__ = ["view", "board", "export_board", "team_view", "projector_view", "instructor_view", "join_view"]

FORMATS = ("csv", "tsv", "json", "latex")


def view(access: TaskAccess) -> dict:
    """The data ``access``'s link may see (see the module docstring)."""
    snap = access.snapshot()
    role = access.role
    if role == "team":
        return team_view(snap, access.team, access.link)
    if role == "projector":
        return projector_view(snap)
    if role == "join":
        return join_view(snap)
    if role == "instructor":
        return instructor_view(snap, access)
    raise MetricsError(f"unknown role {role!r}")


# -- pieces ----------------------------------------------------------------------------


def _rules(snap: Snapshot) -> dict:
    d = snap.definition
    return {"title": d.title, "description": d.description, "status": snap.status,
            "opens": iso(snap.meta["opens"]), "closes": iso(snap.meta["closes"]),
            "released": iso(snap.meta["released"]), "qrels_released": bool(snap.meta["released_qrels"]),
            "measures": list(d.measures), "primary": d.primary, "per_day": d.per_day, "total": d.total,
            "finals": d.finals, "board_rule": d.board, "final_topics": d.final_topics,
            "dev_qrels": bool(snap.definition.dev_qrels), "anonymous": bool(snap.definition.anonymous),
            "n_public": len(snap.public_qids), "n_hidden": len(snap.hidden_qids),
            "test": d.test, "correction": d.correction, "alpha": d.alpha, "now": iso(snap.now)}


def _names(snap: Snapshot, *, real: bool = False) -> dict[int, str]:
    teams = snap.teams
    column = "name" if real or not snap.definition.anonymous else "label"
    return dict(zip(teams["id"].astype(int), teams[column].astype(str)))


def _live(snap: Snapshot) -> pd.DataFrame:
    subs = snap.submissions
    return subs[subs["removed"].isna()]


def _per_query(snap: Snapshot, sid: int, qids: list[str], measures) -> dict[str, np.ndarray]:
    """{measure: values on ``qids`` (in that order)} of one submission."""
    values = snap.values()
    out = {}
    for m in measures:
        found = values.get((sid, m), {})
        out[m] = np.array([found.get(q, 0.0) for q in qids], dtype=np.float64)
    return out


def _means(snap: Snapshot, sid: int, qids: list[str]) -> dict[str, float]:
    if not qids:
        return {m: float("nan") for m in snap.definition.measures}
    values = _per_query(snap, sid, qids, snap.definition.measures)
    return mean_values([Scores(str(sid), np.array(qids, dtype=object), values)])[str(sid)]


def _findings(text) -> list[dict]:
    return json.loads(text) if isinstance(text, str) and text else []


def _letter(n: int) -> str:
    letters = string.ascii_uppercase
    return letters[n] if n < len(letters) else f"G{n + 1}"


# -- boards ----------------------------------------------------------------------------


def board(snap: Snapshot, *, final: bool, names: dict[int, str] | None = None) -> dict:
    """The public board (``final=False``) or the final standings, with significance and groups.
    Computed once per file generation and names (the snapshot keeps it): every team page and the
    projector of a process share it; do not change what it returns."""
    names = _names(snap) if names is None else names
    key = ("board", final, tuple(sorted(names.items())))
    found = snap.computed.get(key)
    if found is None:
        found = snap.computed[key] = _board(snap, final, names)
    return found


def _marked(data: dict, team: int) -> dict:
    """A copy of a board with the rows of ``team`` marked ``you``."""
    return data | {"rows": [e | {"you": e["team"] == team} for e in data["rows"]]}


def _board(snap: Snapshot, final: bool, names: dict[int, str]) -> dict:
    d = snap.definition
    qids = sorted(snap.final_qids() if final else snap.public_qids)
    rows = _live(snap).sort_values("id")[["id", "team", "label", "received", "final"]].to_dict("records")
    by_team: dict[int, list[dict]] = {}
    for r in rows:
        if not pd.isna(r["team"]):
            by_team.setdefault(int(r["team"]), []).append(r)
    entries = []
    for team_id, subs in sorted(by_team.items()):
        latest = max(subs, key=lambda r: (r["received"], r["id"]))
        if final:
            chosen = [r for r in subs if r["final"]] or [latest]
        else:
            chosen = [latest] if d.board == "latest" else subs
        scored = [(r, _means(snap, int(r["id"]), qids)) for r in chosen]
        # best on the primary measure; ties go to the earlier submission
        row, means = max(scored, key=lambda item: (np.nan_to_num(item[1][d.primary], nan=-np.inf),
                                                   -item[0]["received"]))
        entries.append({"key": f"s{int(row['id'])}", "submission": int(row["id"]), "team": team_id,
                        "name": names.get(team_id, f"Team {team_id}"), "kind": "team", "label": row["label"],
                        "means": means, "submissions": len(subs), "last": iso(float(latest["received"]))})
    baselines = [r for r in rows if pd.isna(r["team"])]
    for row in baselines:
        entries.append({"key": f"s{int(row['id'])}", "submission": int(row["id"]), "team": None,
                        "name": f"baseline: {row['label']}", "kind": "baseline", "label": row["label"],
                        "means": _means(snap, int(row["id"]), qids), "submissions": None, "last": None})
    entries.sort(key=lambda e: (-np.nan_to_num(e["means"][d.primary], nan=-np.inf), e["kind"] != "team", e["name"]))
    out = {"final": final, "topics": (d.final_topics if final else "public"), "n_topics": len(qids),
           "measures": list(d.measures), "primary": d.primary, "test": d.test, "correction": d.correction,
           "alpha": d.alpha, "baseline": baselines[0]["label"] if baselines else None,
           "qrels_sha256": snap.qrels_digest(), "rows": entries}
    _significance(snap, out, qids)
    for i, e in enumerate(entries):
        e["rank"] = i + 1
    return out


def _significance(snap: Snapshot, out: dict, qids: list[str]) -> None:
    rows = out["rows"]
    primary, d = out["primary"], snap.definition
    for e in rows:
        e.update(p_baseline=None, marker="", p_next=None, group=None)
    if len(qids) < 2 or not rows:
        return
    matrix = np.column_stack([_per_query(snap, e["submission"], qids, [primary])[primary] for e in rows])
    base = next((i for i, e in enumerate(rows) if e["kind"] == "baseline"
                 and e["label"] == out["baseline"]), None)
    if base is not None and len(rows) > 1:
        frame = pd.DataFrame({"system": np.repeat([e["key"] for e in rows], len(qids)),
                              "qid": np.tile(qids, len(rows)), "measure": primary,
                              "value": matrix.T.reshape(-1)})
        table = compare(frame, rows[base]["key"], [e["key"] for i, e in enumerate(rows) if i != base], [primary],
                        test=d.test, correction=d.correction, alpha=d.alpha, intervals=False)
        by_key = {r.system: r for r in table.itertuples()}
        for e in rows:
            r = by_key.get(e["key"])
            if r is not None:
                e["p_baseline"], e["marker"] = float(r.p_adjusted), str(r.marker)
    if len(rows) > 1:
        diffs = matrix[:, 1:] - matrix[:, :-1]
        p = adjust(np.atleast_1d(paired_pvalues(diffs, d.test)), d.correction)
        group = 0
        for i, e in enumerate(rows):
            e["group"] = _letter(group)
            if i < len(rows) - 1:
                e["p_next"] = float(p[i])
                if p[i] < d.alpha:
                    group += 1


def board_table(data: dict) -> pd.DataFrame:
    """A board as a table: one row per entry, the means, counts and significance columns."""
    rows = []
    for e in data["rows"]:
        rows.append({"rank": e["rank"], "name": e["name"], "kind": e["kind"], "run": e["label"],
                     **{m: e["means"][m] for m in data["measures"]},
                     "submissions": e["submissions"], "last submission (UTC)": e["last"],
                     f"p vs baseline ({data['correction']})": e["p_baseline"], "vs baseline": e["marker"],
                     "p vs next": e["p_next"], "group": e["group"]})
    columns = ["rank", "name", "kind", "run", *data["measures"], "submissions", "last submission (UTC)",
               f"p vs baseline ({data['correction']})", "vs baseline", "p vs next", "group"]
    table = pd.DataFrame(rows, columns=columns)
    table["submissions"] = table["submissions"].astype("Int64")
    return table


def export_board(data: dict, fmt: str = "csv") -> str:
    """The board of a view (the final standings once released, else the public board) as csv,
    tsv, json or latex, stamped with the tool, time, task, topics, qrels digest and tests."""
    if fmt not in FORMATS:
        raise MetricsError(f"unknown format {fmt!r}", fix="use " + ", ".join(FORMATS))
    chosen = data.get("final_board") or data.get("board")
    if chosen is None:
        raise MetricsError("this link sees no board", fix="use a team, projector or instructor link")
    rules = data["task"]
    stamp = {"tool": f"nDCG Lab {__version__}", "exported": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "task": rules["title"], "board": "final standings" if chosen["final"] else "public board",
             "topics": f"{chosen['topics']} ({chosen['n_topics']})", "qrels_sha256": chosen["qrels_sha256"],
             "measures": chosen["measures"], "primary": chosen["primary"],
             "significance": f"{chosen['test']}, {chosen['correction']}, alpha {chosen['alpha']}",
             "order": "score desc, ties docno desc (trec_eval)", "missing_queries": "scored 0 (trec_eval -c)"}
    table = board_table(chosen).set_index("name")
    if fmt == "latex":
        marks = report_text.latex_marks({(e["name"], chosen["primary"]): e["marker"] for e in chosen["rows"]})
        stamp["markers"] = report_text.markers_note(chosen["test"], chosen["correction"], chosen["alpha"])
        return export.to_latex(table[chosen["measures"]], marks, stamp)
    if fmt == "json":
        return export.to_json(table[chosen["measures"]], stamp, {"rows": chosen["rows"]})
    return export.to_csv(table, stamp, sep="\t" if fmt == "tsv" else ",")


# -- per role --------------------------------------------------------------------------


def join_view(snap: Snapshot) -> dict:
    return {"role": "join", "task": _rules(snap)}


def projector_view(snap: Snapshot) -> dict:
    out = {"role": "projector", "task": _rules(snap), "board": board(snap, final=False)}
    if snap.meta["released"] is not None:
        out["final_board"] = board(snap, final=True)
    return out


def _allowance(snap: Snapshot, team: int) -> dict:
    from .definition import day_start

    d = snap.definition
    live = _live(snap)
    mine = live[live["team"] == team]
    today = int((mine["received"] >= day_start(snap.now)).sum())
    left = [x for x in ((d.total - len(mine)) if d.total else None,
                        (d.per_day - today) if d.per_day else None) if x is not None]
    return {"used": len(mine), "used_today": today, "left": min(left) if left else None,
            "left_today": (d.per_day - today) if d.per_day else None, "left_total": (d.total - len(mine))
            if d.total else None}


def team_view(snap: Snapshot, team: int, link: str) -> dict:
    d = snap.definition
    released = snap.meta["released"] is not None
    with_qrels = released and bool(snap.meta["released_qrels"])
    public = snap.public_qids
    shown = snap.judged_qids if with_qrels else public
    names = _names(snap)
    real = _names(snap, real=True)
    live = _live(snap)
    mine = live[live["team"] == team].sort_values("received")
    subs = []
    for row in mine.itertuples():
        per_query = _per_query(snap, int(row.id), shown, d.measures)
        subs.append({"id": int(row.id), "label": row.label, "file_name": row.file_name, "received": iso(row.received),
                     "bytes": int(row.size), "sha256": row.digest, "final": bool(row.final),
                     "public_means": _means(snap, int(row.id), public),
                     "per_query": [{"qid": q, **{m: float(per_query[m][i]) for m in d.measures}}
                                   for i, q in enumerate(shown)],
                     "lint": _findings(row.lint) if with_qrels else
                     json.loads(row.lint_public)["public" if d.dev_qrels else "own"]})
        if released:
            subs[-1]["final_means"] = _means(snap, int(row.id), snap.final_qids())
    topics = snap.topics
    out = {"role": "team", "task": _rules(snap), "team": {"name": real.get(team), "shown_as": names.get(team),
                                                          "link": link},
           "topics": [{"qid": str(q), "text": str(t), "public": bool(p)}
                      for q, t, p in zip(topics["qid"], topics["text"], topics["public"] & topics["judged"])],
           "allowance": _allowance(snap, team), "submissions": subs,
           "board": _marked(board(snap, final=False), team)}
    if released:
        out["final_board"] = _marked(board(snap, final=True), team)
    out["can_copy"] = with_qrels
    return out


def team_qrels(access: TaskAccess) -> bytes | None:
    """The judgments a team link may download: every line after a release with the qrels, the
    public topics' lines of a dev set, else None."""
    snap = access.snapshot()
    if access.role != "team":
        return None
    released = snap.meta["released"] is not None and bool(snap.meta["released_qrels"])
    if not released and not snap.definition.dev_qrels:
        return None
    raw, _ = access.task.raw_qrels()
    if released:
        return raw
    public = set(snap.public_qids)
    lines = [line for line in raw.decode("utf-8", "replace").splitlines(keepends=True)
             if line.split() and line.split()[0] in public]
    return "".join(lines).encode()


def instructor_view(snap: Snapshot, access: TaskAccess) -> dict:
    d = snap.definition
    names = _names(snap, real=True)
    live = _live(snap)
    public, hidden, judged = snap.public_qids, snap.hidden_qids, snap.judged_qids
    subs = []
    for row in snap.submissions.sort_values(["received", "id"]).itertuples():
        removed = not pd.isna(row.removed)
        team = None if pd.isna(row.team) else int(row.team)
        entry = {"id": int(row.id), "team": team, "team_name": "baseline" if team is None else names.get(team),
                 "label": row.label, "file_name": row.file_name, "received": iso(row.received),
                 "bytes": int(row.size), "sha256": row.digest, "final": bool(row.final),
                 "removed": iso(row.removed) if removed else None,
                 "removed_reason": row.removed_reason if removed else None, "lint": _findings(row.lint)}
        if not removed:
            entry |= {"means_all": _means(snap, int(row.id), judged), "means_public": _means(snap, int(row.id), public),
                      "means_hidden": _means(snap, int(row.id), hidden)}
        subs.append(entry)
    # identical runs: the same file, or the same ranked lists under another tag, from another team
    duplicates = []
    rows = list(live.itertuples())
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            if (pd.isna(a.team) and pd.isna(b.team)) or a.team == b.team:
                continue
            kind = "same file" if a.digest == b.digest else "same ranked lists" \
                if a.lists_digest == b.lists_digest else None
            if kind:
                duplicates.append({"kind": kind, "first": int(a.id), "second": int(b.id),
                                   "first_team": "baseline" if pd.isna(a.team) else names.get(int(a.team)),
                                   "second_team": "baseline" if pd.isna(b.team) else names.get(int(b.team))})
    # each team's public score over time
    timeline = [{"team": names.get(int(r.team)), "received": iso(r.received), "submission": int(r.id),
                 "value": _means(snap, int(r.id), public)[d.primary]}
                for r in live[live["team"].notna()].sort_values("received").itertuples()]
    # the class per query (the latest submission of each team), and wins over the first baseline
    latest = live[live["team"].notna()].sort_values("received").groupby("team").tail(1)
    spread, wins = [], []
    if len(latest) and judged:
        matrix = np.column_stack([_per_query(snap, int(i), judged, [d.primary])[d.primary] for i in latest["id"]])
        for q, values in zip(judged, matrix):
            spread.append({"qid": q, "public": q in set(public), "min": float(values.min()),
                           "median": float(np.median(values)), "max": float(values.max()),
                           "mean": float(values.mean())})
        baselines = live[live["team"].isna()].sort_values("id")
        if len(baselines):
            base = _per_query(snap, int(baselines.iloc[0]["id"]), judged, [d.primary])[d.primary]
            w, t, lo = wins_ties_losses(matrix - base[:, None])
            for k, r in enumerate(latest.itertuples()):
                wins.append({"team": names.get(int(r.team)), "submission": int(r.id), "wins": int(w[k]),
                             "ties": int(t[k]), "losses": int(lo[k])})
    teams = [{"id": int(r.id), "name": r.name, "label": r.label, "joined": iso(r.created),
              "submissions": int((live["team"] == r.id).sum())} for r in snap.teams.itertuples()]
    links = access.links()
    return {"role": "instructor", "task": _rules(snap),
            "links": {"instructor": links.instructor, "join": links.join, "projector": links.projector},
            "topics": [{"qid": str(q), "text": str(t), "public": bool(p), "judged": bool(j)}
                       for q, t, p, j in zip(snap.topics["qid"], snap.topics["text"], snap.topics["public"],
                                             snap.topics["judged"])],
            "teams": teams, "submissions": subs, "duplicates": duplicates, "timeline": timeline,
            "spread": spread, "wins": wins,
            "audit": [{"time": iso(r.time), "action": r.action, "detail": r.detail} for r in snap.audit.itertuples()],
            "qrels_versions": [{"version": int(r.version), "created": iso(r.created), "sha256": r.digest,
                                "file_name": r.file_name, "note": r.note,
                                "current": int(r.version) == int(snap.meta["qrels_version"])}
                               for r in snap.versions.itertuples()],
            "board": board(snap, final=False, names=names), "final_board": board(snap, final=True, names=names)}

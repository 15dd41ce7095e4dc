"""What each link of a task may see: the one leak surface of a class task.

:func:`view` returns, for a link, exactly what its pages, downloads and messages may show, as
the frozen dataclasses of :mod:`metrics.tasks.visible`; the task page draws this and nothing
else, and the command line prints from it.

- ``team`` before the release: the task's rules, the topics (ids and text, never judgments),
  its own submissions with means and per-query values on the public topics only, its
  allowance, and the public board. Lint findings that need qrels are computed on the public
  topics' judgments, and only when those are open (a dev set); else only the run's own
  findings. After the release: the final standings too; after a release with the qrels,
  its per-query values on every topic and the qrels themselves.
- ``projector``: the rules and the boards (public, and final after the release).
- ``join``: the rules (title, description, times, measures, caps).
- ``instructor``: everything.

Method lines (a team's sentence saying what a run is): a team sees its own; other teams and the
projector see them only on the final standings, so only after the release; the public board
carries none.

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
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from ..errors import MetricsError
from ..evaluation import Scores, mean_values
from ..report import export
from ..report import text as report_text
from ..stats import adjust, compare, paired_pvalues, wins_ties_losses
from .access import TaskAccess
from .definition import day_start, iso
from .snapshot import Snapshot
from .visible import (
    Allowance,
    AuditEntry,
    Board,
    BoardRow,
    Duplicate,
    Finding,
    InstructorSubmission,
    InstructorTopic,
    InstructorView,
    JoinView,
    Means,
    ProjectorView,
    QrelsVersion,
    QueryValues,
    Rules,
    TaskLinks,
    Team,
    TeamName,
    TeamSubmission,
    TeamView,
    TimelinePoint,
    Topic,
    TopicSpread,
    View,
    Wins,
)

__all__ = ["view", "board", "board_table", "export_board", "team_qrels", "team_view", "projector_view",
           "instructor_view", "join_view", "FORMATS"]

FORMATS = ("csv", "tsv", "json", "latex")


def view(access: TaskAccess) -> View:
    """The data ``access``'s link may see (see the module docstring)."""
    snap = access.snapshot()
    role = access.role
    if role == "team" and access.team is not None:
        return team_view(snap, access.team, access.link)
    if role == "projector":
        return projector_view(snap)
    if role == "join":
        return join_view(snap)
    if role == "instructor":
        return instructor_view(snap, access)
    raise MetricsError(f"unknown role {role!r}")


# -- pieces ----------------------------------------------------------------------------


def _rules(snap: Snapshot) -> Rules:
    d = snap.definition
    return Rules(title=d.title, description=d.description, status=snap.status,
                 opens=iso(snap.meta["opens"]), closes=iso(snap.meta["closes"]),
                 released=iso(snap.meta["released"]), qrels_released=bool(snap.meta["released_qrels"]),
                 measures=tuple(d.measures), primary=d.primary, per_day=d.per_day, total=d.total,
                 finals=d.finals, board_rule=d.board, final_topics=d.final_topics,
                 dev_qrels=bool(d.dev_qrels), anonymous=bool(d.anonymous),
                 n_public=len(snap.public_qids), n_hidden=len(snap.hidden_qids),
                 test=d.test, correction=d.correction, alpha=d.alpha, now=iso(snap.now))


def _names(snap: Snapshot, *, real: bool = False) -> dict[int, str]:
    teams = snap.teams
    column = "name" if real or not snap.definition.anonymous else "label"
    return dict(zip(teams["id"].astype(int), teams[column].astype(str)))


def _live(snap: Snapshot) -> pd.DataFrame:
    subs = snap.submissions
    return subs[subs["removed"].isna()]


def _per_query(snap: Snapshot, sid: int, qids: list[str], measures: Sequence[str]) -> dict[str, np.ndarray]:
    """{measure: values on ``qids`` (in that order)} of one submission."""
    values = snap.values()
    out: dict[str, np.ndarray] = {}
    for m in measures:
        found = values.get((sid, m), {})
        out[m] = np.array([found.get(q, 0.0) for q in qids], dtype=np.float64)
    return out


def _means(snap: Snapshot, sid: int, qids: list[str]) -> Means:
    if not qids:
        return {m: float("nan") for m in snap.definition.measures}
    values = _per_query(snap, sid, qids, snap.definition.measures)
    return mean_values([Scores(str(sid), np.array(qids, dtype=object), values)])[str(sid)]


def _findings(found: Any) -> tuple[Finding, ...]:
    """Stored lint findings (their JSON text, or the list it holds), as data."""
    items = json.loads(found) if isinstance(found, str) and found else found if isinstance(found, list) else []
    return tuple(Finding(kind=str(f["kind"]), message=str(f["message"]), count=int(f.get("count") or 0),
                         examples=tuple(map(str, f.get("examples") or ())), value=f.get("value"))
                 for f in items)


def _method(value: Any) -> str | None:
    """A stored method line (None when the team gave none, or the file predates method lines)."""
    return None if value is None or pd.isna(value) or not str(value) else str(value)


def _letter(n: int) -> str:
    letters = string.ascii_uppercase
    return letters[n] if n < len(letters) else f"G{n + 1}"


# -- boards ----------------------------------------------------------------------------


def board(snap: Snapshot, *, final: bool, names: dict[int, str] | None = None) -> Board:
    """The public board (``final=False``) or the final standings, with significance and groups.
    Computed once per file generation and names (the snapshot keeps it): every team page and the
    projector of a process share it (frozen: no page can change it)."""
    names = _names(snap) if names is None else names
    key = ("board", final, tuple(sorted(names.items())))
    found = snap.computed.get(key)
    if found is None:
        found = snap.computed[key] = _board(snap, final, names)
    assert isinstance(found, Board)
    return found


def _marked(data: Board, team: int) -> Board:
    """A copy of a board with the rows of ``team`` marked ``you``."""
    return replace(data, rows=tuple(replace(e, you=e.team == team) for e in data.rows))


def _unsigned(data: Board, qrels_out: bool) -> Board:
    """A board for the class: the qrels digest only once the qrels are released (before, a team
    could confirm that the hidden judgments are a file it has)."""
    return data if qrels_out else replace(data, qrels_sha256="")


def _board(snap: Snapshot, final: bool, names: dict[int, str]) -> Board:
    d = snap.definition
    qids = sorted(snap.final_qids() if final else snap.public_qids)
    rows = _live(snap).sort_values("id")[["id", "team", "label", "received", "final", "method"]].to_dict("records")
    by_team: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        if not pd.isna(r["team"]):
            by_team.setdefault(int(r["team"]), []).append(r)
    # (submission, team, name, kind, label, means, submissions, last), before ranks and significance
    entries: list[tuple[int, int | None, str, str, str, Means, int | None, str | None]] = []
    methods = {int(r["id"]): _method(r["method"]) for r in rows} if final else {}
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
        entries.append((int(row["id"]), team_id, names.get(team_id, f"Team {team_id}"), "team", str(row["label"]),
                        means, len(subs), iso(float(latest["received"]))))
    baselines = [r for r in rows if pd.isna(r["team"])]
    for row in baselines:
        entries.append((int(row["id"]), None, f"baseline: {row['label']}", "baseline", str(row["label"]),
                        _means(snap, int(row["id"]), qids), None, None))
    entries.sort(key=lambda e: (-np.nan_to_num(e[5][d.primary], nan=-np.inf), e[3] != "team", e[2]))
    baseline = str(baselines[0]["label"]) if baselines else None
    base = next((i for i, e in enumerate(entries) if e[3] == "baseline" and e[4] == baseline), None)
    p_baseline, markers, p_next, groups = _significance(snap, [e[0] for e in entries], base, qids)
    return Board(final=final, topics=(d.final_topics if final else "public"), n_topics=len(qids),
                 measures=tuple(d.measures), primary=d.primary, test=d.test, correction=d.correction, alpha=d.alpha,
                 baseline=baseline, qrels_sha256=snap.qrels_digest(),
                 rows=tuple(BoardRow(rank=i + 1, key=f"s{sid}", submission=sid, team=team, name=name, kind=kind,
                                     label=label, means=means, submissions=count, last=last,
                                     p_baseline=p_baseline[i], marker=markers[i], p_next=p_next[i], group=groups[i],
                                     method=methods.get(sid))
                            for i, (sid, team, name, kind, label, means, count, last) in enumerate(entries)))


def _significance(snap: Snapshot, sids: list[int], base: int | None, qids: list[str],
                  ) -> tuple[list[float | None], list[str], list[float | None], list[str | None]]:
    """Per row of a board (submissions ``sids``, in board order): the p-value against the baseline
    row ``base`` and its marker, the p-value against the next row, and the group letter."""
    n = len(sids)
    p_baseline: list[float | None] = [None] * n
    markers = [""] * n
    p_next: list[float | None] = [None] * n
    groups: list[str | None] = [None] * n
    d = snap.definition
    primary = d.primary
    if len(qids) < 2 or not sids:
        return p_baseline, markers, p_next, groups
    matrix = np.column_stack([_per_query(snap, sid, qids, [primary])[primary] for sid in sids])
    keys = [f"s{sid}" for sid in sids]
    if base is not None and n > 1:
        frame = pd.DataFrame({"system": np.repeat(keys, len(qids)), "qid": np.tile(qids, n), "measure": primary,
                              "value": matrix.T.reshape(-1)})
        table = compare(frame, keys[base], [k for i, k in enumerate(keys) if i != base], [primary],
                        test=d.test, correction=d.correction, alpha=d.alpha, intervals=False)
        by_key = {r.system: r for r in table.itertuples()}
        for i, k in enumerate(keys):
            r = by_key.get(k)
            if r is not None:
                p_baseline[i], markers[i] = float(r.p_adjusted), str(r.marker)
    if n > 1:
        diffs = matrix[:, 1:] - matrix[:, :-1]
        p = adjust(np.atleast_1d(paired_pvalues(diffs, d.test)), d.correction)
        group = 0
        for i in range(n):
            groups[i] = _letter(group)
            if i < n - 1:
                p_next[i] = float(p[i])
                if p[i] < d.alpha:
                    group += 1
    return p_baseline, markers, p_next, groups


def board_table(data: Board) -> pd.DataFrame:
    """A board as a table: one row per entry, the means, counts and significance columns (and the
    teams' method lines on the final standings)."""
    p_baseline = f"p vs baseline ({data.correction})"
    rows = [{"rank": e.rank, "name": e.name, "kind": e.kind, "run": e.label,
             **{m: e.means[m] for m in data.measures},
             "submissions": e.submissions, "last submission (UTC)": e.last,
             p_baseline: e.p_baseline, "vs baseline": e.marker, "p vs next": e.p_next, "group": e.group,
             "method": e.method or ""}
            for e in data.rows]
    columns = ["rank", "name", "kind", "run", *data.measures, "submissions", "last submission (UTC)",
               p_baseline, "vs baseline", "p vs next", "group", *(["method"] if data.final else [])]
    table = pd.DataFrame(rows, columns=columns)
    table["submissions"] = table["submissions"].astype("Int64")
    return table


def shown_board(data: View) -> Board | None:
    """The board a view leads with: the final standings once there are any, else the public board
    (None for a join link)."""
    if isinstance(data, JoinView):
        return None
    return data.final_board or data.board


def export_board(data: View, fmt: str = "csv") -> str:
    """The board of a view (the final standings once released, else the public board) as csv,
    tsv, json or latex, stamped with the tool, time, task, topics, qrels digest and tests. Every
    format carries the significance as the Leaderboard's exports do (the markers against the
    baseline on the primary measure, :func:`metrics.report.export.significance_stamp`) and the
    groups: a column (csv, tsv), the rows (json), a letter in brackets after each name (latex)."""
    if fmt not in FORMATS:
        raise MetricsError(f"unknown format {fmt!r}", fix="use " + ", ".join(FORMATS))
    chosen = shown_board(data)
    if chosen is None:
        raise MetricsError("this link sees no board", fix="use a team, projector or instructor link")
    stamp: dict[str, Any] = {
        "tool": f"nDCG Lab {__version__}", "exported": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "task": data.task.title, "board": "final standings" if chosen.final else "public board",
        "topics": f"{chosen.topics} ({chosen.n_topics})", "qrels_sha256": chosen.qrels_sha256 or "withheld",
        "measures": list(chosen.measures), "primary": chosen.primary,
        "significance": f"{chosen.test}, {chosen.correction}, alpha {chosen.alpha}",
        "order": "score desc, ties docno desc (trec_eval)", "missing_queries": "scored 0 (trec_eval -c)"}
    if chosen.baseline is not None:
        stamp |= export.significance_stamp(chosen.baseline, chosen.test, chosen.correction,
                                           chosen.alpha, family="measure")
    stamp["groups"] = ("rows sharing a letter are not separated by a significant difference between neighbours "
                       f"({chosen.test}, {chosen.correction} correction over the neighbour pairs, "
                       f"p < {chosen.alpha:g}, on {chosen.primary})")
    table = board_table(chosen).set_index("name")
    measures = list(chosen.measures)
    markers = {(e.name, chosen.primary): e.marker for e in chosen.rows}
    if fmt == "latex":
        named = {e.name: f"{e.name} [{e.group}]" if e.group else e.name for e in chosen.rows}
        stamp["groups"] = "the letter in brackets after a name: " + stamp["groups"]
        return export.to_latex(table[measures].rename(index=named),
                               report_text.latex_marks({(named[n], m): v for (n, m), v in markers.items()}), stamp)
    if fmt == "json":
        return export.to_json(table[measures], stamp, {
            "markers": {e.name: {chosen.primary: e.marker} for e in chosen.rows if e.marker},
            "groups": {e.name: e.group for e in chosen.rows if e.group},
            "rows": [asdict(e) for e in chosen.rows]})
    return export.to_csv(table, stamp, sep="\t" if fmt == "tsv" else ",")


# -- per role --------------------------------------------------------------------------


def join_view(snap: Snapshot) -> JoinView:
    return JoinView(task=_rules(snap))


def projector_view(snap: Snapshot) -> ProjectorView:
    released = snap.meta["released"] is not None
    out = released and bool(snap.meta["released_qrels"])
    return ProjectorView(task=_rules(snap), board=_unsigned(board(snap, final=False), out),
                         final_board=_unsigned(board(snap, final=True), out) if released else None)


def _allowance(snap: Snapshot, team: int) -> Allowance:
    d = snap.definition
    live = _live(snap)
    mine = live[live["team"] == team]
    today = int((mine["received"] >= day_start(snap.now)).sum())
    left = [x for x in ((d.total - len(mine)) if d.total else None,
                        (d.per_day - today) if d.per_day else None) if x is not None]
    return Allowance(used=len(mine), used_today=today, left=min(left) if left else None,
                     left_today=(d.per_day - today) if d.per_day else None,
                     left_total=(d.total - len(mine)) if d.total else None)


def team_view(snap: Snapshot, team: int, link: str) -> TeamView:
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
        sid = int(row.id)
        per_query = _per_query(snap, sid, shown, d.measures)
        lint = _findings(row.lint) if with_qrels else \
            _findings(json.loads(str(row.lint_public))["public" if d.dev_qrels else "own"])
        subs.append(TeamSubmission(
            id=sid, label=str(row.label), file_name=str(row.file_name), received=iso(float(row.received)),
            bytes=int(row.size), sha256=str(row.digest), final=bool(row.final), lint=lint,
            method=_method(row.method), means_public=_means(snap, sid, public),
            per_query=tuple(QueryValues(q, {m: float(per_query[m][i]) for m in d.measures})
                            for i, q in enumerate(shown)),
            means_final=_means(snap, sid, snap.final_qids()) if released else None))
    topics = snap.topics
    return TeamView(
        task=_rules(snap), team=TeamName(name=real.get(team), shown_as=names.get(team), link=link),
        topics=tuple(Topic(qid=str(q), text=str(t), public=bool(p))
                     for q, t, p in zip(topics["qid"], topics["text"], topics["public"] & topics["judged"])),
        allowance=_allowance(snap, team), submissions=tuple(subs),
        board=_unsigned(_marked(board(snap, final=False), team), with_qrels),
        final_board=_unsigned(_marked(board(snap, final=True), team), with_qrels) if released else None,
        can_copy=with_qrels)


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


def _team_name(names: dict[int, str], team: Any) -> str | None:
    """The name of the team of a submission row ("baseline" for none)."""
    return "baseline" if pd.isna(team) else names.get(int(team))


def instructor_view(snap: Snapshot, access: TaskAccess) -> InstructorView:
    d = snap.definition
    names = _names(snap, real=True)
    live = _live(snap)
    public, hidden, judged = snap.public_qids, snap.hidden_qids, snap.judged_qids
    subs = []
    for row in snap.submissions.sort_values(["received", "id"]).itertuples():
        removed = not pd.isna(row.removed)
        sid = int(row.id)
        subs.append(InstructorSubmission(
            id=sid, label=str(row.label), file_name=str(row.file_name), received=iso(float(row.received)),
            bytes=int(row.size), sha256=str(row.digest), final=bool(row.final), lint=_findings(row.lint),
            method=_method(row.method), team=None if pd.isna(row.team) else int(row.team),
            team_name=_team_name(names, row.team),
            removed=iso(float(row.removed)) if removed else None,
            removed_reason=str(row.removed_reason) if removed else None,
            means_all=None if removed else _means(snap, sid, judged),
            means_public=None if removed else _means(snap, sid, public),
            means_hidden=None if removed else _means(snap, sid, hidden)))
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
                duplicates.append(Duplicate(kind=kind, first=int(a.id), second=int(b.id),
                                            first_team=_team_name(names, a.team),
                                            second_team=_team_name(names, b.team)))
    # each team's public score over time
    timeline = tuple(TimelinePoint(team=names.get(int(r.team)), received=iso(float(r.received)),
                                   submission=int(r.id), value=_means(snap, int(r.id), public)[d.primary])
                     for r in live[live["team"].notna()].sort_values("received").itertuples())
    # the class per query (the latest submission of each team), and wins over the first baseline
    latest = live[live["team"].notna()].sort_values("received").groupby("team").tail(1)
    spread: list[TopicSpread] = []
    wins: list[Wins] = []
    if len(latest) and judged:
        matrix = np.column_stack([_per_query(snap, int(i), judged, [d.primary])[d.primary] for i in latest["id"]])
        public_set = set(public)
        for q, values in zip(judged, matrix):
            spread.append(TopicSpread(qid=q, public=q in public_set, min=float(values.min()),
                                      median=float(np.median(values)), max=float(values.max()),
                                      mean=float(values.mean())))
        baselines = live[live["team"].isna()].sort_values("id")
        if len(baselines):
            base = _per_query(snap, int(baselines.iloc[0]["id"]), judged, [d.primary])[d.primary]
            w, t, lo = wins_ties_losses(matrix - base[:, None])
            for k, r in enumerate(latest.itertuples()):
                wins.append(Wins(team=names.get(int(r.team)), submission=int(r.id), wins=int(w[k]),
                                 ties=int(t[k]), losses=int(lo[k])))
    teams = tuple(Team(id=int(r.id), name=str(r.name), label=str(r.label), joined=iso(float(r.created)),
                       submissions=int((live["team"] == r.id).sum())) for r in snap.teams.itertuples())
    links = access.links()
    current = int(snap.meta["qrels_version"])
    return InstructorView(
        task=_rules(snap), links=TaskLinks(instructor=links.instructor, join=links.join, projector=links.projector),
        topics=tuple(InstructorTopic(qid=str(q), text=str(t), public=bool(p), judged=bool(j))
                     for q, t, p, j in zip(snap.topics["qid"], snap.topics["text"], snap.topics["public"],
                                           snap.topics["judged"])),
        teams=teams, submissions=tuple(subs), duplicates=tuple(duplicates), timeline=timeline,
        spread=tuple(spread), wins=tuple(wins),
        audit=tuple(AuditEntry(time=iso(float(r.time)), action=str(r.action), detail=str(r.detail))
                    for r in snap.audit.itertuples()),
        qrels_versions=tuple(QrelsVersion(version=int(r.version), created=iso(float(r.created)), sha256=str(r.digest),
                                          file_name=str(r.file_name), note=str(r.note),
                                          current=int(r.version) == current)
                             for r in snap.versions.itertuples()),
        board=board(snap, final=False, names=names), final_board=board(snap, final=True, names=names))

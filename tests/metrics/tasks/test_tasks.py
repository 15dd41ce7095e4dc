"""Class tasks: the split, the refusals, the boards against `python -m metrics eval` and SciPy,
duplicates, the instructor's changes, the release and the copy into a workspace, and tokens."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from dataclasses import fields

import numpy as np
import pytest
from scipy import stats as scipy_stats

from metrics import MetricsError, io, settings
from metrics.store import Workspace
from metrics.tasks import JoinView, SubmissionRefused, TaskDefinition, TaskNotFound, Tasks, iso, parse_time, views
from metrics.tasks.definition import day_start, public_split
from tests.metrics.tasks.conftest import LEGAL, ROOT, make_task

RUNS = {name: (LEGAL / f"{name}.run").read_bytes() for name in ("dense", "bm25_ce", "bm25_qe", "bm25")}


def test_public_split_is_the_seeded_draw_and_an_explicit_list_is_kept(tasks, legal):
    snap = tasks.open(legal.instructor).snapshot()
    judged = sorted({line.split()[0] for line in (LEGAL / "qrels.txt").read_text().splitlines()})
    assert len(judged) == 50 and len(snap.public_qids) == 15 == round(0.3 * 50)
    # by hand: numpy's generator, seed 3, 15 of the 50 ids sorted as strings
    expected = {judged[i] for i in np.random.default_rng(3).choice(50, size=15, replace=False)}
    assert set(snap.public_qids) == expected
    assert set(snap.hidden_qids) == set(judged) - expected
    explicit = TaskDefinition(title="t", closes=1.0, public_topics=("1", "2")).checked()
    assert public_split(judged, explicit) == {"1", "2"}
    with pytest.raises(MetricsError, match="no judgments"):
        public_split(judged, TaskDefinition(title="t", closes=1.0, public_topics=("nope",)).checked())


def test_times_are_utc():
    assert parse_time("2026-12-01T18:00") == parse_time("2026-12-01T18:00Z") == parse_time("2026-12-01T19:00+01:00")
    assert iso(parse_time("2026-12-01T18:00:05Z")) == "2026-12-01T18:00:05Z"
    with pytest.raises(MetricsError, match="ISO 8601"):
        parse_time("tomorrow")


def test_refusals_say_why_and_when_and_do_not_count(tasks, legal, clock):
    team = tasks.open(tasks.join(legal.join, "Alpha"))
    # malformed: the line, the problem, and "now"
    with pytest.raises(SubmissionRefused) as bad:
        team.submit(b"1 Q0 LEG-1 1 1.5 t\n1 Q0 LEG-2 2 high t\n", "bad", "bad.run")
    assert bad.value.line == 2 and bad.value.next_allowed == clock.now and "allowed now" in str(bad.value)
    with pytest.raises(SubmissionRefused, match="not a topic of this task") as unknown:
        team.submit(b"1 Q0 LEG-1 1 1.5 t\n999 Q0 LEG-2 2 1.0 t\n", "x", "x.run")
    assert unknown.value.line == 2
    with pytest.raises(SubmissionRefused, match="over the bound"):
        small = make_task(tasks, title="small", max_bytes=100)
        tasks.open(tasks.join(small.join, "A")).submit(RUNS["dense"], "d", "dense.run")
    assert views.view(team).allowance.used == 0
    # per day: two, then refused until the next UTC midnight; then the third; then the total
    team.submit(RUNS["dense"], "d1", "dense.run")
    team.submit(RUNS["bm25_ce"], "d2", "ce.run")
    with pytest.raises(SubmissionRefused, match="of today") as day:
        team.submit(RUNS["bm25_qe"], "d3", "qe.run")
    assert day.value.next_allowed == day_start(clock.now) + 86400
    clock.now = day_start(clock.now) + 86400 + 5
    team.submit(RUNS["bm25_qe"], "d3", "qe.run")
    clock.now += 86400
    with pytest.raises(SubmissionRefused, match="all 3 submissions") as total:
        team.submit(RUNS["dense"], "d4", "dense.run")
    assert total.value.next_allowed is None and "no further submission" in str(total.value)
    assert [s.label for s in views.view(team).submissions] == ["d1", "d2", "d3"]


def test_before_the_opening_and_after_the_close(tasks, clock):
    links = make_task(tasks, opens=clock.now + 3600, closes=clock.now + 7200)
    team = tasks.open(tasks.join(links.join, "A"))
    with pytest.raises(SubmissionRefused, match="opens at") as early:
        team.submit(RUNS["dense"], "d", "dense.run")
    assert early.value.next_allowed == clock.now + 3600
    clock.now += 7200
    with pytest.raises(SubmissionRefused, match="closed at") as late:
        team.submit(RUNS["dense"], "d", "dense.run")
    assert late.value.next_allowed is None


def _eval(qrels_lines, runs: dict, tmp_path, name: str) -> dict:
    """`python -m metrics eval` (a subprocess) on the qrels lines given and runs {name: bytes}:
    {name: {measure: mean}}."""
    qrels = tmp_path / f"{name}.qrels"
    qrels.write_text("".join(qrels_lines))
    paths = []
    for run, data in runs.items():
        paths.append(tmp_path / f"{name}-{run}.run")
        paths[-1].write_bytes(data)
    done = subprocess.run([sys.executable, "-m", "metrics", "eval", str(qrels), *map(str, paths), "-m", "nDCG@10",
                           "-m", "AP", "--format", "json"], cwd=ROOT, capture_output=True, text=True, check=True)
    means = json.loads(done.stdout)["means"]
    return {run: means[f"{name}-{run}"] for run in runs}


def test_boards_equal_metrics_eval_and_significance_equals_scipy(tasks, legal, tmp_path):
    a = tasks.open(tasks.join(legal.join, "Alpha"))
    b = tasks.open(tasks.join(legal.join, "Beta"))
    a.submit(RUNS["dense"], "dense", "dense.run")
    a.submit(RUNS["bm25_ce"], "ce", "ce.run")
    b.submit(RUNS["bm25_qe"], "qe", "qe.run")
    instructor = tasks.open(legal.instructor)
    snap = instructor.snapshot()
    lines = (LEGAL / "qrels.txt").read_text().splitlines(keepends=True)
    public, hidden = set(snap.public_qids), set(snap.hidden_qids)
    view = views.view(a)
    rows = {r.name: r for r in view.board.rows}
    on_public = _eval([x for x in lines if x.split()[0] in public], RUNS, tmp_path, "public")
    # Alpha's best public submission on nDCG@10 is on the board
    best = max(("dense", "bm25_ce"), key=lambda k: on_public[k]["nDCG@10"])
    assert rows["Alpha"].label == {"dense": "dense", "bm25_ce": "ce"}[best]
    for name, run in {"Alpha": best, "Beta": "bm25_qe", "baseline: bm25": "bm25"}.items():
        for m in ("nDCG@10", "AP"):
            assert rows[name].means[m] == pytest.approx(on_public[run][m], abs=1e-12)
    # final standings (instructor's preview): each team's latest, on the hidden topics
    final = {r.name: r for r in views.view(instructor).final_board.rows}
    latest = {"Alpha": RUNS["bm25_ce"], "Beta": RUNS["bm25_qe"], "baseline: bm25": RUNS["bm25"]}
    on_hidden = _eval([x for x in lines if x.split()[0] in hidden], RUNS, tmp_path, "hidden")
    for name, run in {"Alpha": "bm25_ce", "Beta": "bm25_qe", "baseline: bm25": "bm25"}.items():
        assert final[name].means["nDCG@10"] == pytest.approx(on_hidden[run]["nDCG@10"], abs=1e-12)
    # significance: t-test of each row against bm25, Holm over those rows; neighbours likewise
    order = [r.name for r in views.view(instructor).final_board.rows]
    per_query = {name: _per_query(latest[name], hidden) for name in latest}
    others = [n for n in order if n != "baseline: bm25"]
    raw = [scipy_stats.ttest_rel(per_query[n], per_query["baseline: bm25"]).pvalue for n in others]
    holm = _holm(raw)
    for n, p in zip(others, holm):
        assert final[n].p_baseline == pytest.approx(p, rel=1e-9)
    neighbours = _holm([scipy_stats.ttest_rel(per_query[order[i + 1]], per_query[order[i]]).pvalue
                        for i in range(len(order) - 1)])
    for i, p in enumerate(neighbours):
        assert final[order[i]].p_next == pytest.approx(p, rel=1e-9)
    groups = [final[n].group for n in order]
    expected_groups, g = [], 0
    for i in range(len(order)):
        expected_groups.append("ABCDEFG"[g])
        if i < len(neighbours) and neighbours[i] < 0.05:
            g += 1
    assert groups == expected_groups


def _per_query(run: bytes, qids: set) -> np.ndarray:
    """nDCG@10 per query by metrics.evaluate on the qrels (one independent call per run)."""
    import metrics

    qrels = io.read_qrels(LEGAL / "qrels.txt")
    frame = metrics.evaluate(qrels, io.read_run(run), ["nDCG@10"])
    frame = frame[frame["qid"].isin(qids)].sort_values("qid")
    return frame["value"].to_numpy()


def _holm(p):
    """Holm's step-down by hand: sorted p times (m - i), running maximum, capped at 1."""
    p = np.asarray(p)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for i, k in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[k]))
        adjusted[k] = running
    return adjusted


def test_identical_runs_are_flagged_to_the_instructor_only(tasks, legal):
    a = tasks.open(tasks.join(legal.join, "Alpha"))
    b = tasks.open(tasks.join(legal.join, "Beta"))
    a.submit(RUNS["dense"], "dense", "dense.run")
    b.submit(RUNS["dense"], "copy", "copy.run")
    # the same ranked lists under another tag, scores halved (the order is unchanged)
    renamed = "".join(f"{q} Q0 {d} {r} {float(s) / 2} other\n" for q, _, d, r, s, _ in
                      (line.split() for line in RUNS["bm25_ce"].decode().splitlines()))
    a.submit(RUNS["bm25_ce"], "ce", "ce.run")
    b.submit(renamed.encode(), "renamed", "renamed.run")
    duplicates = views.view(tasks.open(legal.instructor)).duplicates
    flagged = {(d.kind, d.first_team, d.second_team) for d in duplicates}
    assert flagged == {("same file", "Alpha", "Beta"), ("same ranked lists", "Alpha", "Beta")}
    assert not hasattr(views.view(a), "duplicates")


def test_instructor_changes_remove_rescore_extend_reopen(tasks, legal, clock, tmp_path):
    a = tasks.open(tasks.join(legal.join, "Alpha"))
    instructor = tasks.open(legal.instructor)
    sid = a.submit(RUNS["dense"], "dense", "dense.run")
    with pytest.raises(MetricsError, match="needs a reason"):
        instructor.remove_submission(sid, " ")
    instructor.remove_submission(sid, "wrong topics file")
    view = views.view(instructor)
    assert view.submissions[-1].removed_reason == "wrong topics file"
    assert any(e.action == "remove" and "wrong topics file" in e.detail for e in view.audit)
    assert views.view(a).submissions == () and views.view(a).allowance.used == 0
    # a corrected qrels (every grade of topic 1 set to 0): version 2, every submission rescored
    sid = a.submit(RUNS["dense"], "dense", "dense.run")
    lines = (LEGAL / "qrels.txt").read_text().splitlines()
    fixed = "".join((f"{q} {i} {d} 0\n" if q == "1" else f"{q} {i} {d} {r}\n")
                    for q, i, d, r in (x.split() for x in lines))
    assert instructor.replace_qrels(fixed.encode(), "qrels-v2.txt", "topic 1 regraded") == 2
    view = views.view(instructor)
    assert [v.version for v in view.qrels_versions] == [1, 2] and view.qrels_versions[1].current
    path = tmp_path / "fixed.qrels"
    path.write_text(fixed)
    expected = _eval(fixed.splitlines(keepends=True), {"dense": RUNS["dense"]}, tmp_path, "v2")["dense"]
    mine = next(s for s in view.submissions if s.id == sid)
    assert mine.means_all["nDCG@10"] == pytest.approx(expected["nDCG@10"], abs=1e-12)
    # close, extend (reopens), close again
    instructor.close()
    assert views.view(a).task.status == "closed"
    instructor.set_close(clock.now + 3600)
    assert views.view(a).task.status == "open"
    a.submit(RUNS["bm25_ce"], "ce", "ce.run")


def test_release_copy_into_a_workspace(tasks, legal, clock):
    a = tasks.open(tasks.join(legal.join, "Alpha"))
    a.submit(RUNS["dense"], "dense", "dense.run")
    a.submit(RUNS["bm25_ce"], "ce", "ce.run")
    a.choose_finals([1 + 1])  # submission 2 is dense (1 is the baseline)
    instructor = tasks.open(legal.instructor)
    with pytest.raises(MetricsError, match="still open"):
        instructor.release()
    instructor.close()
    with pytest.raises(MetricsError, match="closed"):
        a.choose_finals([3])
    instructor.release()
    view = views.view(a)
    assert [r.label for r in view.final_board.rows if r.kind == "team"] == ["dense"]
    assert not view.can_copy
    ws = Workspace(":memory:")
    with pytest.raises(MetricsError, match="not released the qrels"):
        a.copy_to(ws)
    instructor.release(qrels=True)
    name = a.copy_to(ws)
    assert name == "Legal retrieval" and {r.name for r in ws.runs(name)} == {"dense", "ce"}
    assert ws.load_qrels(name).digest == io.read_qrels(LEGAL / "qrels.txt").digest
    assert a.copy_to(ws) == "Legal retrieval (2)"


def test_links_are_hashes_only_and_roles_are_checked(tasks, legal, tmp_path):
    team_link = tasks.join(legal.join, "Alpha")
    tokens = [legal.tokens[r] for r in ("instructor", "join", "projector")] + [team_link.split("=")[-1]]
    assert legal.instructor.startswith("http://localhost:8501/task?task=")
    registry = sqlite3.connect(tmp_path / "tasks" / "registry.sqlite3")
    dump = "\n".join(registry.iterdump())
    files = " ".join(p.name for p in (tmp_path / "tasks").iterdir())
    data = b"".join(p.read_bytes() for p in (tmp_path / "tasks").glob("*.duckdb"))
    for token in tokens:
        assert token not in dump and token not in files and token.encode() not in data
    with pytest.raises(TaskNotFound):
        tasks.open(legal.instructor[:-1] + ("A" if legal.instructor[-1] != "A" else "B"))
    with pytest.raises(MetricsError, match="projector link cannot"):
        tasks.open(legal.projector).close()
    with pytest.raises(MetricsError, match="team link cannot"):
        tasks.open(team_link).release()
    with pytest.raises(MetricsError, match="not a join link"):
        tasks.join(legal.instructor, "Beta")
    with pytest.raises(MetricsError, match="has joined already"):
        tasks.join(legal.join, "alpha")
    join = views.view(tasks.open(legal.join))
    assert isinstance(join, JoinView) and [f.name for f in fields(join)] == ["task"]


def test_creating_needs_the_key_when_the_operator_says_so(tmp_path):
    keyed = Tasks(settings.load({"NDCG_LAB_HOME": str(tmp_path), "NDCG_LAB_TASKS": "key",
                                 "NDCG_LAB_INSTRUCTOR_KEY": "s3cret"}))
    with pytest.raises(MetricsError, match="instructor key"):
        make_task(keyed)
    assert keyed.may_create("s3cret") and not keyed.may_create("wrong") and not keyed.may_create(None)
    with pytest.raises(MetricsError, match="NDCG_LAB_TASKS"):
        settings.load({"NDCG_LAB_TASKS": "everyone"})
    assert settings.load({"NDCG_LAB_MODE": "shared"}).tasks == "key"
    assert "s3cret" not in repr(keyed.settings)
    assert settings.load({"NDCG_LAB_PUBLIC_URL": "https://lab.org/ir"}).public_url == "https://lab.org/ir/"
    with pytest.raises(MetricsError, match="NDCG_LAB_PUBLIC_URL"):
        settings.load({"NDCG_LAB_PUBLIC_URL": "lab.org?x=1"})


def test_export_archive_and_delete(tasks, legal):
    import io as stdlib_io
    import zipfile

    a = tasks.open(tasks.join(legal.join, "Alpha"))
    a.submit(RUNS["dense"], "dense", "dense.run")
    instructor = tasks.open(legal.instructor)
    with zipfile.ZipFile(stdlib_io.BytesIO(instructor.archive())) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        assert [m["team"] for m in manifest] == ["baseline", "Alpha"]
        assert zf.read(manifest[1]["file"]) == RUNS["dense"]
        assert manifest[1]["sha256"] == io.read_run(RUNS["dense"]).digest
    with pytest.raises(MetricsError, match="team link cannot"):
        a.archive()
    tasks.delete(instructor)
    with pytest.raises(TaskNotFound):
        tasks.open(legal.instructor)
    assert not list((tasks.folder).glob("*.duckdb"))


def test_idle_tasks_are_swept_and_the_quota_bounds_a_task(tmp_path, clock):
    dense, baseline = len(RUNS["dense"]), len(RUNS["bm25"])
    tasks = Tasks(settings.load({"NDCG_LAB_HOME": str(tmp_path), "NDCG_LAB_QUOTA_BYTES": str(dense + baseline + 10),
                                 "NDCG_LAB_TTL": "1d"}), clock=clock)
    links = make_task(tasks)
    team = tasks.open(tasks.join(links.join, "A"))
    team.submit(RUNS["dense"], "d", "dense.run")
    with pytest.raises(SubmissionRefused, match="NDCG_LAB_QUOTA_BYTES"):
        team.submit(RUNS["bm25_ce"], "ce", "ce.run")
    task_id = tasks.open(links.instructor).task.id
    clock.now += 86400 + 61
    assert tasks.sweep() == [task_id]
    with pytest.raises(TaskNotFound):
        tasks.open(links.instructor)


def test_a_teams_lint_needs_open_public_judgments_and_never_covers_hidden_topics(tasks, legal):
    team = tasks.open(tasks.join(legal.join, "A"))
    team.submit(RUNS["dense"], "d", "dense.run")
    instructor = tasks.open(legal.instructor)
    assert "judged" not in {f.kind for f in views.view(team).submissions[0].lint}
    instructor.set_options(dev_qrels=True)
    findings = views.view(team).submissions[0].lint
    judged = next(f for f in findings if f.kind == "judged")
    assert judged.count == 15  # Judged@10 over the 15 public topics, not the 50
    assert next(f for f in views.view(instructor).submissions if f.team is not None).lint != findings


def test_a_task_stored_with_the_older_measure_spelling_still_matches_its_new_scores(tasks, clock):
    """Tasks stored before measure strings printed ir_measures' quoted form keep their boards."""
    made = make_task(tasks, measures=("nDCG(dcg='exp-log2')@10", "AP"))
    instructor = tasks.open(made.instructor)
    old, new = "nDCG(dcg=exp-log2)@10", "nDCG(dcg='exp-log2')@10"

    def respell(con):
        (text,) = con.execute("SELECT value FROM meta WHERE key = 'definition'").fetchone()
        definition = json.loads(json.loads(text))
        definition["measures"] = [old, "AP"]
        con.execute("UPDATE meta SET value = ? WHERE key = 'definition'", [json.dumps(json.dumps(definition))])
        con.execute("UPDATE scores SET measure = ? WHERE measure = ?", [old, new])

    instructor.task.write(respell)
    team = tasks.open(tasks.join(made.join, "Alpha"))
    team.submit(RUNS["dense"], "d1", "dense.run")  # scored under the printed spelling
    board = views.view(instructor).board
    assert board.primary == new
    means = {row.label: row.means[new] for row in board.rows}
    assert set(means) == {"bm25", "d1"} and all(0 < value < 1 for value in means.values())

"""Nothing hidden reaches a team or the projector through the API (every page draws this API):
views, board exports in every format, the judgments download and every refusal message, before
and after the close and after a release without the qrels. A planted leak is caught."""
from __future__ import annotations

import json
from dataclasses import asdict, replace

import pytest

from metrics import MetricsError
from metrics.tasks import team_qrels, views
from metrics.tasks.visible import QueryValues
from tests.metrics.tasks.conftest import LEGAL, make_task
from tests.metrics.tasks.leaks import secrets_of

RUNS = {name: (LEGAL / f"{name}.run").read_bytes() for name in ("dense", "bm25_ce", "bm25_qe")}


def crawl(access) -> list[str]:
    """Every text a link reaches through the library: its view, its exports, its judgments, and
    the messages of what it may try."""
    texts = [json.dumps(asdict(views.view(access)))]
    for fmt in views.FORMATS:
        try:
            texts.append(views.export_board(views.view(access), fmt))
        except MetricsError as exc:
            texts.append(str(exc))
    qrels = team_qrels(access)
    if qrels is not None:
        texts.append(qrels.decode())
    for attempt in (lambda: access.submit(RUNS["dense"], "again", "again.run"),
                    lambda: access.submit(b"1 Q0 X 1 nan t\n", "bad", "bad.run"), access.close, access.archive,
                    lambda: access.replace_qrels(b"", "q"), lambda: access.choose_finals([1])):
        try:
            attempt()
        except MetricsError as exc:
            texts.append(str(exc))
    return texts


@pytest.fixture
def running(tasks, clock):
    links = make_task(tasks, total=2, dev_qrels=True)
    teams = [tasks.open(tasks.join(links.join, name)) for name in ("Alpha", "Beta")]
    teams[0].submit(RUNS["dense"], "dense", "dense.run", "Alphamethod dense retrieval")
    teams[1].submit(RUNS["bm25_ce"], "ce", "ce.run", "Betamethod cross-encoder rerank")
    return tasks, links, teams


def _leaks(tasks, links, teams) -> list[str]:
    instructor = tasks.open(links.instructor)
    found = []
    for access in [*teams, tasks.open(links.projector)]:
        secret = secrets_of(instructor, access.team)
        # there is something to find: a team sees its own method line, never the other's
        assert secret.docnos and secret.numbers and len(secret.methods) == (1 if access.team else 2)
        for text in crawl(access):
            found += secret.find(text)
    return found


def test_no_hidden_judgment_or_per_query_score_before_or_after_the_close(running, clock):
    tasks, links, teams = running
    assert _leaks(tasks, links, teams) == []
    clock.now += 8 * 86400
    assert _leaks(tasks, links, teams) == []
    tasks.open(links.instructor).release()  # standings only: final means, still no per-query value
    assert _leaks(tasks, links, teams) == []


def test_no_fingerprint_of_the_hidden_judgments_before_they_are_released(running, clock):
    tasks, links, teams = running
    digests = {v.sha256 for v in views.view(tasks.open(links.instructor)).qrels_versions}
    assert digests and all(len(d) == 64 for d in digests)

    def seen() -> list[str]:
        return [d for access in [*teams, tasks.open(links.projector)] for text in crawl(access)
                for d in digests if d in text]
    assert seen() == []
    clock.now += 8 * 86400
    tasks.open(links.instructor).release()           # standings only: the judgments stay hidden
    assert seen() == []
    assert json.dumps(asdict(views.view(tasks.open(links.instructor)))).count(next(iter(digests))) >= 1


def test_the_crawl_catches_a_planted_leak(running, monkeypatch):
    tasks, links, teams = running
    honest = views.team_view

    def leaky(snap, team, link):
        out = honest(snap, team, link)
        hidden = snap.hidden_qids[:1]
        planted = [replace(sub, per_query=sub.per_query + tuple(
            QueryValues(q, {"nDCG@10": float(v)})
            for q, v in zip(hidden, views._per_query(snap, sub.id, hidden, ["nDCG@10"])["nDCG@10"])))
            for sub in out.submissions]
        return replace(out, submissions=tuple(planted))

    monkeypatch.setattr(views, "team_view", leaky)
    assert any("hidden per-query value" in f for f in _leaks(tasks, links, teams))


def test_the_crawl_catches_a_planted_method_line(running, monkeypatch):
    tasks, links, teams = running
    honest = views.team_view

    def leaky(snap, team, link):  # the public board carries each team's first method line
        out = honest(snap, team, link)
        subs = snap.submissions.dropna(subset=["team", "method"])
        methods = dict(zip(subs["team"].astype(int)[::-1], subs["method"][::-1]))
        return replace(out, board=replace(out.board, rows=tuple(replace(e, method=methods.get(e.team))
                                                                 for e in out.board.rows)))

    assert _leaks(tasks, links, teams) == []
    monkeypatch.setattr(views, "team_view", leaky)
    assert any("another team's method line" in f for f in _leaks(tasks, links, teams))


def test_method_lines_reach_the_other_teams_only_on_the_final_standings_after_the_release(running, clock):
    tasks, links, teams = running
    alpha, beta = teams
    clock.now += 8 * 86400
    tasks.open(links.instructor).release()
    for access in (alpha, tasks.open(links.projector)):
        seen = views.view(access)
        assert {e.name: e.method for e in seen.final_board.rows} == {
            "Alpha": "Alphamethod dense retrieval", "Beta": "Betamethod cross-encoder rerank", "baseline: bm25": None}
        assert {e.method for e in seen.board.rows} == {None}   # the public board carries none
        assert "Betamethod cross-encoder rerank" in views.export_board(seen, "csv")


def test_the_crawl_catches_planted_judgments(running, monkeypatch):
    tasks, links, teams = running
    snap = tasks.open(links.instructor).snapshot()
    hidden = snap.hidden_qids[0]
    everything = (LEGAL / "qrels.txt").read_bytes()
    planted = [line for line in everything.decode().splitlines(keepends=True) if line.split()[0] == hidden]
    honest = views.team_qrels
    monkeypatch.setattr(views, "team_qrels", lambda access: (honest(access) or b"") + "".join(planted).encode())
    import tests.metrics.tasks.test_leaks as me

    monkeypatch.setattr(me, "team_qrels", views.team_qrels)
    assert any("hidden judged document" in f for f in _leaks(tasks, links, teams))

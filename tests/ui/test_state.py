"""ndcg_lab.ui.state: caches keyed on content, so changing the test, correction or baseline evaluates nothing, a
second session computes, reads and writes nothing again, and a visitor's private results stay theirs;
the app's own arguments."""
from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st

import metrics
from metrics import store
from ndcg_lab.ui import caches, state
from tests.conftest import baseline_box, html_tables

LEGAL = Path(__file__).resolve().parents[2] / "ndcg_lab" / "sample_data" / "legal"


def test_test_correction_and_baseline_changes_evaluate_nothing(open_app, monkeypatch):
    st.cache_data.clear()
    st.cache_resource.clear()
    evaluated = []
    original = caches.evaluate_ranked

    def counting(ranked, measures, **options):
        evaluated.append((ranked.name, tuple(measures)))
        return original(ranked, measures, **options)

    monkeypatch.setattr(caches, "evaluate_ranked", counting)
    at = open_app()                                    # the leaderboard, with its significance markers
    first = len(evaluated)
    assert first >= 4                                  # the four legal runs
    at.radio(key="sig_test").set_value("wilcoxon").run()
    at.radio(key="sig_correction").set_value("bonferroni").run()
    baseline_box(at).set_value("dense").run()
    assert not at.exception
    assert len(evaluated) == first
    at.radio(key="gain").set_value("linear").run()     # the measure strings change: a new evaluation
    assert len(evaluated) > first


def test_app_arguments_after_the_double_dash():
    assert state.app_arguments(["--workspace", "/tmp/w.duckdb"]).workspace == Path("/tmp/w.duckdb")
    assert state.app_arguments(["--workspace=/a/b", "--other", "1"]).workspace == Path("/a/b")
    assert state.app_arguments([]).workspace is None


@pytest.fixture
def counted(monkeypatch):
    """Empty caches, then {what: [calls]} of evaluations, ranked loads, sample reads and workspace
    writes made from then on (by every session of this process: the caches are process-wide)."""
    st.cache_data.clear()
    st.cache_resource.clear()
    calls: dict[str, list] = {"evaluate": [], "rank": [], "sample": [], "write": []}

    def counting(what, function):
        def wrapper(*args, **kwargs):
            calls[what].append(args[:1])
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(caches, "evaluate_ranked", counting("evaluate", caches.evaluate_ranked))
    monkeypatch.setattr(store.Workspace, "load_ranked", counting("rank", store.Workspace.load_ranked))
    monkeypatch.setattr(store.Sample, "read", counting("sample", store.Sample.read))
    for name in WRITES:
        monkeypatch.setattr(store.Workspace, name, counting("write", getattr(store.Workspace, name)))
    yield calls
    st.cache_data.clear()
    st.cache_resource.clear()


WRITES = ("create_collection", "replace_collection", "restore_shared", "add_run", "set_baseline", "set_qrels",
          "set_topics", "set_docs", "rename_run", "delete_run")
NOTHING = {"evaluate": [], "rank": [], "sample": [], "write": []}


def forget(calls: dict) -> None:
    for made in calls.values():
        made.clear()


def test_a_second_session_evaluates_nothing_reads_no_sample_and_writes_nothing(open_app, counted, tmp_path):
    first = open_app(home=tmp_path / "home")
    assert len(counted["sample"]) == 2                 # legal and web, into the new workspace
    assert len(counted["rank"]) == len(counted["evaluate"]) == 4   # the four legal runs
    forget(counted)
    second = open_app(home=tmp_path / "home")          # a new session of the same server
    assert html_tables(second)[0].equals(html_tables(first)[0])
    assert counted == NOTHING


def test_a_second_visitor_of_a_shared_server_shares_the_samples_results_and_never_the_private_ones(
        open_app, counted, monkeypatch, tmp_path):
    monkeypatch.setenv("NDCG_LAB_MODE", "shared")
    home = tmp_path / "home"
    a = open_app(home=home)
    samples = list(html_tables(a)[0].index)
    assert len(counted["evaluate"]) == 4
    forget(counted)
    b = open_app(home=home)                            # another visitor
    assert counted == NOTHING                          # the shared samples' results, computed once
    assert list(html_tables(b)[0].index) == samples
    token, b_token = state.manager().create().token, state.manager().create().token  # their first changes
    mine = tmp_path / "mine.run"                       # dense with other scores: a run of its own
    mine.write_text("".join(f"{q} Q0 {d} {r} {float(score) + 0.5} mine\n" for q, _, d, r, score, *_ in
                            (line.split() for line in (LEGAL / "dense.run").read_text().splitlines())))
    state.manager().open(token).workspace.add_run("legal", metrics.read_run(mine), name="mine")  # A's own legal
    forget(counted)
    a_again = open_app(home=home, query_params={"ws": token})
    assert "mine" in list(html_tables(a_again)[0].index)
    assert len(counted["evaluate"]) == 1               # A's own run; the copied sample runs hold the samples' content
    forget(counted)
    b_again = open_app(home=home, query_params={"ws": b_token})
    assert list(html_tables(b_again)[0].index) == samples
    assert counted == NOTHING


def test_a_rerun_with_cached_results_builds_no_per_query_frame(open_app, monkeypatch):
    st.cache_data.clear()
    st.cache_resource.clear()
    summed = []
    original = metrics.means
    monkeypatch.setattr(metrics, "means", lambda frame: summed.append(len(frame)) or original(frame))
    at = open_app()
    at.radio(key="gain").set_value("linear").run()
    at.radio(key="gain").set_value("exp").run()        # back: everything of both gains is cached
    assert summed
    summed.clear()
    at.radio(key="gain").set_value("linear").run()
    at.radio(key="gain").set_value("exp").run()
    assert not at.exception
    assert summed == []                                # no metrics.means over the per-query frame


def test_a_ranking_cache_miss_collects_garbage_once_and_a_hit_never(open_app, counted, monkeypatch, tmp_path):
    """The server runs no full collection after every script run; the scratch of a ranking (the one
    heavy step on a read path) is collected on the cache miss that made it."""
    collections = []
    monkeypatch.setattr(caches.gc, "collect", lambda *args: collections.append(args) or 0)
    open_app(home=tmp_path / "home")
    assert len(collections) == len(counted["rank"]) == 4    # the four legal runs, ranked once each
    collections.clear()
    open_app(home=tmp_path / "home")
    assert collections == []

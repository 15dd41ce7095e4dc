"""ui.state: caches keyed on content, so changing the test, correction or baseline evaluates nothing;
the app's own arguments."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import state


def test_test_correction_and_baseline_changes_evaluate_nothing(open_app, monkeypatch):
    st.cache_data.clear()
    st.cache_resource.clear()
    evaluated = []
    original = state.evaluate_ranked

    def counting(ranked, measures, **options):
        evaluated.append((ranked.name, tuple(measures)))
        return original(ranked, measures, **options)

    monkeypatch.setattr(state, "evaluate_ranked", counting)
    at = open_app()                                    # the leaderboard, with its significance markers
    first = len(evaluated)
    assert first >= 4                                  # the four legal runs
    at.radio(key="sig_test").set_value("wilcoxon").run()
    at.radio(key="sig_correction").set_value("bonferroni").run()
    at.selectbox(key="baseline::legal").set_value("dense").run()
    assert not at.exception
    assert len(evaluated) == first
    at.radio(key="gain").set_value("linear").run()     # the measure strings change: a new evaluation
    assert len(evaluated) > first


def test_app_arguments_after_the_double_dash():
    assert state.app_arguments(["--workspace", "/tmp/w.duckdb"]).workspace == Path("/tmp/w.duckdb")
    assert state.app_arguments(["--workspace=/a/b", "--other", "1"]).workspace == Path("/a/b")
    assert state.app_arguments([]).workspace is None

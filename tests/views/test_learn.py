"""Learn NDCG page (AppTest): presets, grade edits, buttons, what-if and the shareable URL."""
from __future__ import annotations

from math import log2
from pathlib import Path

import pytest

from metrics.analysis import sandbox
from metrics.analysis.sandbox import PRESETS

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def learn(open_app, shared_home):
    return lambda query_params=None: open_app("views/learn.py", home=shared_home, query_params=query_params)


def ndcg(at) -> float:
    [value] = [m.value for m in at.metric if m.label.startswith("nDCG@")]
    return float(value)


def test_preset_then_grade_change_moves_ndcg(learn):
    at = learn()
    at.selectbox(key="learn_preset").select("late").run()
    assert not at.exception, at.exception
    assert ndcg(at) == pytest.approx(1 / log2(11), abs=5e-5)          # 0.2891: grade 4 at rank 10
    at.selectbox(key="learn_grade_0").select("4").run()             # a second grade-4 document at rank 1
    assert not at.exception, at.exception
    dcg = 15 / log2(2) + 15 / log2(11)
    idcg = 15 / log2(2) + 15 / log2(3)
    assert ndcg(at) == pytest.approx(dcg / idcg, abs=5e-5)
    assert at.query_params["g"].startswith("4,0,0")


def test_ideal_order_reaches_one_and_what_if_applies(learn):
    at = learn()
    assert ndcg(at) < 1
    at.button(key="learn_ideal").click().run()
    assert ndcg(at) == 1.0
    assert any("= **1.0000**" in m.value for m in at.markdown)
    at.button(key="learn_reverse").click().run()
    reversed_value = ndcg(at)
    assert reversed_value < 1
    at.button(key="learn_apply").click().run()
    assert not at.exception, at.exception
    assert ndcg(at) > reversed_value


def test_unjudged_strategies_and_cutoff(learn):
    at = learn()
    at.selectbox(key="learn_grade_1").select("?").run()
    assert not at.exception, at.exception
    strategies = [t.value for t in at.table if "strategy" in (t.value.index.name or "")]
    assert strategies and len(strategies[0]) == 3
    at.selectbox(key="learn_guess_D2").select(4).run()
    assert not at.exception, at.exception
    at.slider(key="learn_k").set_value(3).run()
    assert [m.label for m in at.metric][-1] == "nDCG@3"
    at.radio(key="learn_gain").set_value("linear").run()
    assert not at.exception, at.exception


def test_url_restores_the_sandbox(learn):
    sb = PRESETS["wikipedia"].sandbox
    at = learn(sandbox.to_params(sb))
    assert [m.label for m in at.metric] == ["DCG@6", "IDCG@6", "nDCG@6"]
    assert ndcg(at) == pytest.approx(0.7850, abs=5e-5)
    assert at.radio(key="learn_gain").value == "linear"
    assert at.text_input(key="learn_missed").value == "3,2"
    assert at.selectbox(key="learn_preset").value == "wikipedia"  # the link matches a preset: its lesson shows

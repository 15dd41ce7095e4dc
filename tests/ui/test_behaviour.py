"""ndcg_lab.ui.behaviour on the legal sample: the cached glue returns the library's numbers for the selection."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import metrics
from metrics.stats import behaviour as B
from metrics.stats import paired_matrix
from ndcg_lab.ui import behaviour as ui

LEGAL = Path(__file__).resolve().parents[2] / "ndcg_lab" / "sample_data" / "legal"
RUNS = sorted(LEGAL.glob("*.run"))


def test_agreement_and_power_equal_the_library(legal):
    sel, _ = legal
    measures = tuple(ui.default_measures(sel.gain))
    assert measures[0] == "nDCG(dcg='exp-log2')@10"
    frame = metrics.evaluate(LEGAL / "qrels.txt", RUNS, list(measures))
    got = ui.agreement(sel, measures)
    pd.testing.assert_frame_equal(got["tau_ap"], B.measure_agreement(frame)["tau_ap"])
    assert ui.matrix_table(got["tau"]).loc["AP", "AP"] == "1.000"
    names = sel.system_names
    x = paired_matrix(frame, "AP", names).to_numpy()
    expected = B.discriminative_power(x, names, resamples=200, seed=3)
    power = ui.power(sel, "AP", 200, 3, 0.05)
    pd.testing.assert_frame_equal(power["asl"], expected["asl"])
    assert power["share"] == expected["share"]
    strict = ui.power(sel, "AP", 200, 3, 0.01)   # another level: the same resamples, another share
    assert strict["share"] == B.discriminative_power(x, names, resamples=200, seed=3, alpha=0.01)["share"]


def test_reduction_and_judges(legal):
    sel, _ = legal
    measures = tuple(ui.reduction_measures(sel.gain))
    assert measures[1] == "nDCG(dcg='exp-log2',judged_only=True)@10"
    got = ui.reduction(sel, measures, "keep", (30, 100), 0)
    expected = B.reduction_curves(LEGAL / "qrels.txt", {p.stem: p for p in RUNS}, list(measures), keep=(30, 100))
    np.testing.assert_allclose(got["tau"]["tau"], expected["tau"]["tau"])
    out = ui.judges(sel, "AP", 1, "bm25", "t", 0)
    assert out["labels"]["shared"] == B.label_agreement(LEGAL / "qrels.txt", LEGAL / "proxy.txt")["shared"]
    assert out["shift"]["baseline"] == "bm25" and len(out["shift"]["means"]) == len(RUNS)


def test_topic_set_size_equals_the_library(legal):
    sel, _ = legal
    frame = metrics.evaluate(LEGAL / "qrels.txt", RUNS, ["AP"])
    x = paired_matrix(frame, "AP", sel.system_names).to_numpy()
    got = ui.topic_set_size(sel, "AP", 100, 2, 0.05, 0.03, 0.8)
    pd.testing.assert_frame_equal(got["swaps"], B.swap_rates(x, trials=100, seed=2))
    pd.testing.assert_frame_equal(got["topics"], B.topics_needed(x, delta=0.03))
    assert got["n_topics"] == 50

"""ndcg_lab.ui.judgments: the strategy means equal ``metrics.evaluate`` of the sample files under each
treatment (a second route past the workspace and caches); the display helpers on hand-made frames."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics
from ndcg_lab.ui import judgments
from tests.ui.conftest import LEGAL

RUNS = {path.stem: path for path in sorted(LEGAL.glob("*.run"))}
QRELS = LEGAL / "qrels.txt"


def direct(measures, **options) -> pd.DataFrame:
    return metrics.means(metrics.evaluate(QRELS, RUNS, measures, **options))


def test_strategy_frames_are_the_measure_under_each_treatment(legal):
    sel, _ = legal
    frames = judgments.strategy_frames(sel, "AP")
    assert list(frames) == ["zero", "condensed", "inferred", "Bpref", "infAP"]
    assert frames["zero"].to_dict() == pytest.approx(direct(["AP"])["AP"].to_dict())
    assert frames["condensed"].to_dict() == pytest.approx(direct(["AP"], judged_only=True)["AP"].to_dict())
    inferred = direct(["AP"], inferred=metrics.read_qrels(LEGAL / "proxy.txt"))["AP"]
    assert frames["inferred"].to_dict() == pytest.approx(inferred.to_dict())
    incomplete = direct(["Bpref", "infAP"])
    assert frames["Bpref"].to_dict() == pytest.approx(incomplete["Bpref"].to_dict())
    assert frames["infAP"].to_dict() == pytest.approx(incomplete["infAP"].to_dict())


def test_judged_means_and_labels(legal):
    sel, _ = legal
    assert judgments.judged_means(sel, 10).to_dict() == pytest.approx(direct(["Judged@10"])["Judged@10"].to_dict())
    labels = judgments.strategy_labels(sel)
    assert labels["inferred"].startswith("inferred (proxy: ") and "proxy" in labels["inferred"]
    assert labels["Bpref"] == "Bpref (unjudged ignored)"


def test_strategy_display_values_ranks_and_moves():
    table = pd.DataFrame({
        "strategy": ["zero"] * 3 + ["condensed"] * 3,
        "system": ["a", "b", "c"] * 2,
        "value": [0.5, 0.3, np.nan, 0.2, 0.6, 0.1],
        "rank": [1, 2, np.nan, 2, 1, 3],
        "change": [0, 0, np.nan, -1, 1, 0],
    })
    shown = judgments.strategy_display(table, {"zero": "unjudged = 0"}, digits=2)
    assert list(shown.index) == ["a", "b", "c"]   # the reference's order, unranked last
    assert list(shown.columns) == ["unjudged = 0", "rank (0)", "condensed", "rank (condensed)"]
    assert shown["unjudged = 0"].tolist() == ["0.50", "0.30", "–"]
    assert shown["rank (0)"].tolist() == ["1", "2", "–"]
    assert shown["condensed"].tolist() == ["0.20", "0.60", "0.10"]
    assert shown["rank (condensed)"].tolist() == ["2 ▼1", "1 ▲1", "3"]


def test_agreement_display():
    agreement = pd.DataFrame({"strategy_a": ["zero"], "strategy_b": ["infAP"], "tau": [2 / 3],
                              "changed": [1], "systems": [4]})
    shown = judgments.agreement_display(agreement, {"infAP": "infAP (estimated)"})
    assert shown.index.tolist() == ["zero vs infAP (estimated)"]
    assert shown.iloc[0].tolist() == ["0.667", "1 of 4"]
    nan = judgments.agreement_display(agreement.assign(tau=np.nan), {})
    assert nan.iloc[0, 0] == "–"


def test_pool_summary():
    first = pd.DataFrame({"system": ["a", "a", "a", "b", "b"], "qid": ["1", "2", "3", "1", "2"],
                          "first_unjudged": pd.array([2, 7, None, None, None], dtype="Int64")})
    matrix = pd.DataFrame([[1.0, 0.25], [0.25, 1.0]], index=["a", "b"], columns=["a", "b"])
    shown = judgments.pool_summary(first, matrix, 5)
    assert shown.loc["a"].tolist() == ["1 of 3", f"{np.median([2, 7]):g}", "0.250"]
    assert shown.loc["b"].tolist() == ["0 of 2", "judged throughout", "0.250"]


def test_with_titles_inserts_columns_after_their_keys():
    frame = pd.DataFrame({"qid": ["1", "2"], "docno": ["d1", "d9"], "grade": [2, 0]})
    docs = pd.DataFrame({"docno": ["d1", "d1"], "title": ["First", "dup"]})
    topics = pd.DataFrame({"qid": ["2"], "text": ["black cat"]})
    out = judgments.with_titles(frame, docs, topics)
    assert list(out.columns) == ["qid", "query", "docno", "title", "grade"]
    assert out["title"].tolist() == ["First", ""] and out["query"].tolist() == ["", "black cat"]
    assert list(judgments.with_titles(frame, pd.DataFrame(), None).columns) == list(frame.columns)

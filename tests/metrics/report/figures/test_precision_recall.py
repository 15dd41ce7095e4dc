"""The precision-recall figure: per-query IPrec by hand, its mean over queries, and the traces."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.measures import iprec_curve
from metrics.ranking import rank
from metrics.report.figures.curves import iprec_frame, mean_curves, precision_recall_curve


def test_iprec_frame_and_mean_by_hand():
    # q1: grades down the ranking 1, 0, 1 with R = 2; q2: 0, 1 with R = 1
    qrels = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["a", "c", "e"], "rel": [1, 1, 1]})
    run = pd.DataFrame({"qid": ["q1"] * 3 + ["q2"] * 2, "docno": ["a", "b", "c", "d", "e"],
                        "score": [3.0, 2.0, 1.0, 2.0, 1.0]})
    ranked = rank(metrics.read_run(run), metrics.read_qrels(qrels))
    levels = (0.0, 0.5, 1.0)
    frame = iprec_frame(iprec_curve(ranked, levels), ranked.qids, levels)
    # q1: P@1 = 1, P@3 = 2/3; c = round(x R) = 0, 1, 2: best precision from rank 1, 1, 3 on
    # q2: P@2 = 1/2; c = 0, round(0.5) = 1, 1: 1/2 everywhere
    assert frame.loc["q1"].tolist() == pytest.approx([1.0, 1.0, 2 / 3])
    assert frame.loc["q2"].tolist() == pytest.approx([0.5, 0.5, 0.5])
    mean = mean_curves({"s": frame}, x="recall", n_boot=200, seed=1)
    assert list(mean.columns) == ["system", "recall", "value", "lower", "upper"]
    assert mean["value"].tolist() == pytest.approx([(1 + 0.5) / 2, (1 + 0.5) / 2, (2 / 3 + 0.5) / 2])
    assert (mean["lower"] <= mean["value"]).all() and (mean["value"] <= mean["upper"]).all()

    fig = precision_recall_curve(mean)
    band, line = fig.data
    assert band.fill == "toself" and band.name == "s 95% CI" and line.name == "s"
    assert list(line.x) == [0.0, 0.5, 1.0] and np.allclose(line.y, mean["value"])
    assert fig.layout.xaxis.title.text == "recall"


def test_mean_curves_refuses_an_unknown_axis():
    with pytest.raises(metrics.MetricsError, match="x='k' or x='recall'"):
        mean_curves({}, x="rank")

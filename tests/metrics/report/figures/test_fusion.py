"""The sweep figure: the measure against k or the weight, the best setting starred."""
from __future__ import annotations

import pandas as pd
import pytest

from metrics.errors import MetricsError
from metrics.report.figures.fusion import sweep_curve


def test_k_sweep_on_a_numeric_axis_with_the_first_best_marked():
    curve = pd.DataFrame({"setting": ["10", "60", "100"], "k": [10.0, 60.0, 100.0], "value": [0.4, 0.5, 0.5]})
    fig = sweep_curve(curve, measure="nDCG@10", parameter="k")
    line, best = fig.data
    assert list(line.x) == [10.0, 60.0, 100.0] and list(line.y) == [0.4, 0.5, 0.5]
    assert list(best.x) == [60.0] and list(best.y) == [0.5]   # ties go to the first in grid order
    assert fig.layout.xaxis.title.text == "RRF k"


def test_two_run_weights_use_the_first_weight_as_axis_and_more_runs_the_labels():
    two = pd.DataFrame({"setting": ["0.2,0.8", "0.8,0.2"], "w:a": [0.2, 0.8], "w:b": [0.8, 0.2], "value": [0.3, 0.1]})
    fig = sweep_curve(two, measure="AP", parameter="weights")
    assert list(fig.data[0].x) == [0.2, 0.8] and list(fig.data[1].x) == [0.2]
    three = two.assign(**{"w:c": [0.0, 0.0]})
    assert list(sweep_curve(three, measure="AP", parameter="weights").data[0].x) == ["0.2,0.8", "0.8,0.2"]


def test_an_empty_curve_is_refused():
    with pytest.raises(MetricsError, match="setting and value"):
        sweep_curve(pd.DataFrame({"setting": [], "value": []}), measure="AP", parameter="k")

"""The reduced-judgment curve: the mean over the draws as a line, the lowest-to-highest draw as a band."""
from __future__ import annotations

import pandas as pd

from metrics.report.figures import behaviour as figs


def test_reduction_curve_draws_the_mean_and_the_band_of_the_draws():
    tau = pd.DataFrame({"reduction": "keep", "level": [10, 50, 100], "measure": "AP",
                        "tau": [0.2, 0.6, 1.0], "tau_low": [-1.0, 0.2, 1.0], "tau_high": [1.0, 1.0, 1.0]})
    fig = figs.reduction_curves(tau)
    band, line = fig.data
    assert band.fill == "toself" and list(band.y) == [1.0, 1.0, 1.0, 1.0, 0.2, -1.0]   # upper, then lower reversed
    assert list(band.x) == [10, 50, 100, 100, 50, 10]
    assert list(line.y) == [0.2, 0.6, 1.0] and line.name == "AP"
    # a frame without a band (a single draw) draws the line alone
    assert len(figs.reduction_curves(tau.drop(columns=["tau_low", "tau_high"])).data) == 1

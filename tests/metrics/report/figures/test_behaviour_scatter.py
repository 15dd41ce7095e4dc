"""The per-query scatter of two measures: a point per (system, query), their density beyond MAX_POINTS."""
from __future__ import annotations

import numpy as np
import pandas as pd

from metrics.report.figures import behaviour as figs
from metrics.report.figures.density import DENSITY_BINS


def tidy(systems: dict[str, tuple[list[float], list[float]]]) -> pd.DataFrame:
    """A tidy frame (system, qid, measure, value) of AP and P@10 scores per system."""
    rows = []
    for system, (ap, p10) in systems.items():
        for i, (x, y) in enumerate(zip(ap, p10)):
            rows += [(system, f"q{i}", "AP", x), (system, f"q{i}", "P@10", y)]
    return pd.DataFrame(rows, columns=["system", "qid", "measure", "value"])


def test_up_to_max_points_each_system_is_its_own_trace_of_points():
    half = figs.MAX_POINTS // 2
    fig = figs.query_scatter(tidy({"a<b>": ([0.5] * half, [0.2] * half), "c": ([0.1] * half, [0.9] * half)}),
                             "AP", "P@10", colors={"c": "#123456"})
    first, second = fig.data
    assert (first.type, first.mode, first.name) == ("scatter", "markers", "a&lt;b&gt;")
    assert len(first.x) == len(second.x) == half and second.marker.color == "#123456"
    assert first.hovertext[0] == "a&lt;b&gt; · query q0"


def test_beyond_max_points_the_pairs_of_every_system_are_counted_in_cells():
    n = figs.MAX_POINTS // 2 + 1                          # two systems: one pair more than MAX_POINTS
    frame = tidy({"a": ([0.51] * n, [0.0] * n), "b<i>": ([1.0] * (n - 1) + [np.nan], [2.0] * n)})
    fig = figs.query_scatter(frame, "AP", "P@10")
    (density,) = fig.data
    assert density.type == "heatmap" and density.name == "pairs"
    z = np.asarray(density.z, dtype=float)
    assert z.shape == (DENSITY_BINS, DENSITY_BINS) and np.nansum(z) == 2 * n - 1       # the NaN left out
    # x: AP in [0, 1], 40 cells of 0.025: 0.51 in column 20, 1.0 in the last; y: P@10 widened to
    # [0, 2] (a value above 1), 40 cells of 0.05: 0.0 in row 0, 2.0 in the last
    cells = {(int(i), int(j)): int(z[i, j]) for i, j in zip(*np.nonzero(np.nan_to_num(z)))}
    assert cells == {(0, 20): n, (39, 39): n - 1}
    assert density.text[0][20] == "AP in [0.500, 0.525)<br>P@10 in [0.000, 0.050)"
    assert density.text[39][39] == "AP in [0.975, 1.000]<br>P@10 in [1.950, 2.000]"
    assert density.hovertemplate == "%{text}<br>%{z} pairs<extra></extra>"
    assert fig.layout.title.text == f"{2 * n - 1:,} (system, query) pairs of 2 systems, drawn as their density"


def test_the_density_escapes_the_measure_names_in_its_hover():
    n = figs.MAX_POINTS + 1
    frame = tidy({"a": ([0.5] * n, [0.5] * n)}).replace({"measure": {"AP": "<b>AP", "P@10": "%{x}"}})
    density = figs.query_scatter(frame, "<b>AP", "%{x}").data[0]
    assert density.text[20][20] == "&lt;b&gt;AP in [0.500, 0.525)<br>%\u200b{x} in [0.500, 0.525)"

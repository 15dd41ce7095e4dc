"""Where the figures put their legends and labels: never in the top band of a chart, where plotly's
mode bar and Streamlit's chart toolbar sit (the charts named by a user: Judged@k, the Query
explorer's ranked lists, Learn's gain bars; every figure shares the layout)."""
from __future__ import annotations

import pandas as pd

from metrics.analysis import sandbox
from metrics.report.figures import curves, explain, judgments
from metrics.report.figures.curves import TOOLBAR_MARGIN
from tests.metrics.report.figures.test_curves import per_query


def legend_below(fig) -> bool:
    legend = fig.layout.legend
    return legend.orientation == "h" and legend.yref == "container" and legend.y == 0 and legend.yanchor == "bottom"


def test_legends_sit_below_the_plot_and_the_top_band_is_clear():
    judged = judgments.judged_curve({"A": per_query({"q1": [1.0, 0.5]}), "B": per_query({"q1": [0.0, 0.5]})})
    gains = explain.gain_bars(sandbox.gain_table())
    for fig in (judged, gains):
        assert fig.layout.showlegend is not False and legend_below(fig)
        assert fig.layout.margin.t >= TOOLBAR_MARGIN >= 40


def test_the_ranked_lists_head_their_columns_below_the_toolbar_band():
    frame = pd.DataFrame({"rank": [1, 2], "docno": ["d1", "d2"], "grade": [1, 0], "status": ["judged", "judged"]})
    fig = explain.ranked_lists({"bm25": frame, "dense": frame})
    assert fig.layout.xaxis.side == "top"                      # the system names are on top ...
    assert fig.layout.margin.t >= TOOLBAR_MARGIN + 30          # ... below the toolbars' band
    assert curves.LAYOUT["margin"]["t"] == TOOLBAR_MARGIN

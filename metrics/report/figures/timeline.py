"""A class task's submissions over time: each team's public score of each submission, at the time
it was received (the instructor's chart).

Every submission is a marker (a team with one submission is one visible point) joined to the
team's next by a line; the time axis holds real datetimes (UTC), labelled to the minute, so that
submissions seconds apart do not turn the ticks into fractions of a second.
"""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go

from .curves import new_figure, plain, system_colors

__all__ = ["submissions_over_time"]

TIME_FORMAT = "%Y-%m-%d %H:%M"
"""Tick labels of the time axis (to the minute; the hover label has the seconds)."""
LEAST_SPAN = pd.Timedelta(minutes=10)
"""The least time the axis spans (centred on the submissions), so that its ticks stay minutes apart."""


def submissions_over_time(points: pd.DataFrame, measure: str, *,
                          colors: Mapping[str, str] | None = None) -> go.Figure:
    """``points``: columns ``team``, ``received`` (datetimes, or ISO 8601 text), ``value`` and
    ``submission``; one trace per team, in the order teams first appear, markers and lines."""
    frame = points.assign(received=pd.to_datetime(points["received"], utc=True).dt.tz_localize(None))
    frame = frame.sort_values(["received", "submission"], kind="stable")
    teams = list(dict.fromkeys(frame["team"].astype(str)))
    colors = dict(colors or system_colors(teams))
    first, last = frame["received"].min(), frame["received"].max()
    pad = max(LEAST_SPAN - (last - first), pd.Timedelta(0)) / 2 + (last - first) * 0.05
    fig = new_figure(xaxis={"title": {"text": "received (UTC)"}, "type": "date", "tickformat": TIME_FORMAT,
                            "range": [first - pad, last + pad]},
                     yaxis={"title": {"text": plain(measure)}}, hovermode="closest")
    for team in teams:
        mine = frame[frame["team"].astype(str) == team]
        fig.add_trace(go.Scatter(
            x=mine["received"], y=mine["value"], mode="lines+markers", name=plain(team),
            marker={"size": 9, "color": colors.get(team)}, line={"color": colors.get(team)},
            customdata=mine["submission"].to_numpy(),
            hovertemplate=(f"{plain(team)}<br>submission %{{customdata}}<br>%{{x|%Y-%m-%d %H:%M:%S}} UTC"
                           f"<br>{plain(measure)} %{{y:.4f}}<extra></extra>")))
    return fig

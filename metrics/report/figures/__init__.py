"""Plotly figure builders: curves and leaderboards, comparisons, per-rank explanations, judgments."""

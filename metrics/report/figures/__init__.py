"""Plotly figure builders: curves and leaderboards, comparisons, per-rank explanations, judgments.

:func:`save` writes any of them as SVG, PDF or PNG (by the file's suffix), :func:`save_all` many
with one browser (:mod:`.files`).
"""
from .files import FORMATS, browser_path, save, save_all

__all__ = ["FORMATS", "browser_path", "save", "save_all"]

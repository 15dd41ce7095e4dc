"""metrics.report.text: the strings people read, checked literally."""
from __future__ import annotations

import io

import pandas as pd

from metrics.report.text import (
    comparison_marks,
    format_p,
    human_bytes,
    latex_marks,
    markers_note,
    percent,
    terminal_progress,
)


def test_p_values_and_percentages():
    assert format_p(0.0123456) == "0.01235" and format_p(1.0) == "1" and format_p(3.2e-7) == "3.2e-07"
    assert percent(0.125) == "+12.5%" and percent(-0.5) == "-50.0%" and percent(float("inf")) == "n/a"


def test_latex_marks_of_markers_and_of_a_comparison_table():
    assert latex_marks({("a", "AP"): "▲", ("b", "AP"): "▼", ("c", "AP"): ""}) == {
        ("a", "AP"): r"\blacktriangle", ("b", "AP"): r"\blacktriangledown"}
    table = pd.DataFrame({"system": ["a", "b"], "measure": ["AP", "AP"], "marker": ["", "▲"]})
    assert comparison_marks(table) == {("b", "AP"): r"\blacktriangle"}


def test_markers_note_and_sizes():
    assert markers_note("paired t-test", "Holm", 0.05) == (
        "paired t-test, Holm correction, p < 0.05: blacktriangle = better, blacktriangledown = worse than the baseline")
    assert [human_bytes(n) for n in (12, 1500, 2_500_000, 3_200_000_000)] == ["12 B", "1.5 KB", "2.5 MB", "3.2 GB"]


def test_terminal_progress_lines_for_bytes_and_for_buckets():
    out = io.StringIO()
    report = terminal_progress(out, min_interval=0)
    report(500_000, 2_000_000, "partitioning run.txt")
    report(2, 2, "evaluated bucket 2 of 2")
    assert out.getvalue().splitlines() == ["partitioning run.txt:  25.0% (500.0 KB of 2.0 MB)",
                                           "evaluated bucket 2 of 2 [2/2]"]

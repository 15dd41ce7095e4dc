"""ui.tables: the leaderboard Styler (values to ``digits`` decimals, markers, the best cell of each
column bold, escaped names, tooltips), the best-value mask behind it, and the significance details."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ui.tables import BEST_STYLE, MISSING, best_mask, leaderboard_styler, significance_details
from ui.text import md


def test_best_mask_marks_ties_and_skips_missing_values():
    table = pd.DataFrame({"nDCG@10": [0.5, 0.7, 0.7], "AP": [np.nan] * 3, "RR": [0.1, np.nan, 0.05]},
                         index=pd.Index(["a", "b", "c"], name="system"))

    mask = best_mask(table)

    assert mask["nDCG@10"].tolist() == [False, True, True]
    assert mask["AP"].tolist() == [False, False, False]
    assert mask["RR"].tolist() == [True, False, False]
    shown = leaderboard_styler(table, {("b", "nDCG@10"): "▲"}).data
    assert shown.at["b", "nDCG@10"] == "0.7000 ▲"
    assert shown.at["a", "AP"] == "–"


def test_values_are_rounded_to_the_requested_digits():
    table = pd.DataFrame({"AP": [1 / 3, 2 / 3]}, index=["a", "b"])
    shown = leaderboard_styler(table, digits=2).data
    assert shown["AP"].tolist() == ["0.33", "0.67"]
    assert leaderboard_styler(table).data["AP"].tolist() == ["0.3333", "0.6667"]
    assert MISSING == "–"


def test_only_the_best_cells_are_bold():
    table = pd.DataFrame({"AP": [0.2, 0.4], "RR": [0.9, 0.1]}, index=["a", "b"])
    html = leaderboard_styler(table).to_html()
    styles = leaderboard_styler(table)._compute().ctx   # (row, col) -> [(property, value)]
    bold = {cell for cell, props in styles.items() if ("font-weight", "700") in props}
    assert bold == {(1, 0), (0, 1)}   # b's AP (0.4 > 0.2), a's RR (0.9 > 0.1)
    assert "font-weight: 700" in html and BEST_STYLE.startswith("font-weight: 700")


def test_system_and_measure_names_are_escaped():
    table = pd.DataFrame({"[m](http://x)": [0.5]}, index=pd.Index(["<img src=x onerror=alert(1)>"], name="system"))
    shown = leaderboard_styler(table, {("<img src=x onerror=alert(1)>", "[m](http://x)"): "▲"}).data
    assert list(shown.index) == [md("<img src=x onerror=alert(1)>")] and shown.index.name == "system"
    assert list(shown.columns) == [md("[m](http://x)")]
    assert shown.iloc[0, 0] == "0.5000 ▲"   # markers are looked up by the raw names


def test_tooltips_follow_the_escaped_labels_and_ignore_unknown_cells():
    table = pd.DataFrame({"AP": [0.2, 0.4]}, index=["*a*", "b"])
    styler = leaderboard_styler(table, tooltips={("*a*", "AP"): "p = 0.03", ("zz", "AP"): "lost"})
    tips = styler.tooltips.tt_data
    assert list(tips.index) == [md("*a*"), "b"]
    assert tips.iloc[0, 0] == "p = 0.03" and tips.iloc[1, 0] == ""
    assert "p = 0.03" in styler.to_html() and "lost" not in styler.to_html()


def test_best_mask_of_an_empty_table():
    empty = pd.DataFrame(index=pd.Index([], name="system"), columns=["AP"], dtype=float)
    assert best_mask(empty).shape == (0, 1)
    assert not best_mask(pd.DataFrame({"AP": [-np.inf, np.nan]})).iloc[1, 0]


def test_significance_details_are_text_cells_with_escaped_names():
    tests = pd.DataFrame({"system": ["<img src=x onerror=alert(1)>", "b"], "measure": ["[m](http://x)", "AP"],
                          "baseline_mean": [0.25, 0.5], "mean": [1 / 3, 0.5], "p_value": [0.012345678, np.nan],
                          "p_adjusted": [0.02469, 1.0], "marker": ["▲", ""]})
    shown = significance_details(tests)
    assert list(shown.index) == [md("<img src=x onerror=alert(1)>"), "b"] and shown.index.name == "System"
    assert shown.iloc[0].tolist() == [md("[m](http://x)"), "0.2500", "0.3333", "0.01235", "0.02469", "▲"]
    assert shown.iloc[1].tolist() == ["AP", "0.5000", "0.5000", "nan", "1", ""]
    assert "\\<img" in shown.index[0] and "\\[m\\]" in shown.iloc[0, 0]

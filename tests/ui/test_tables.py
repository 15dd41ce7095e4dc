"""ndcg_lab.ui.tables: the leaderboard's HTML table (values to ``digits`` decimals, markers, the best cell of
each column bold, escaped names and tooltips), the best-value mask behind it, and the significance details."""
from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ndcg_lab.ui.tables import BEST_STYLE, MISSING, TABLE_CSS, best_mask, leaderboard_html, significance_details
from ndcg_lab.ui.text import md
from tests.conftest import html_tables


def parsed(body: str, part: str = "text") -> pd.DataFrame:
    """The table of ``body`` as a browser reads it (tests.conftest.html_tables, on one st.html body)."""
    (table,) = html_tables(SimpleNamespace(html=[SimpleNamespace(value=body)]), part)
    return table


def test_best_mask_marks_ties_and_skips_missing_values():
    table = pd.DataFrame({"nDCG@10": [0.5, 0.7, 0.7], "AP": [np.nan] * 3, "RR": [0.1, np.nan, 0.05]},
                         index=pd.Index(["a", "b", "c"], name="system"))

    mask = best_mask(table)

    assert mask["nDCG@10"].tolist() == [False, True, True]
    assert mask["AP"].tolist() == [False, False, False]
    assert mask["RR"].tolist() == [True, False, False]
    shown = parsed(leaderboard_html(table, {("b", "nDCG@10"): "▲"}))
    assert shown.at["b", "nDCG@10"] == "0.7000 ▲"
    assert shown.at["a", "AP"] == "–"
    assert shown.index.name == "system"


def test_values_are_rounded_to_the_requested_digits():
    table = pd.DataFrame({"AP": [1 / 3, 2 / 3]}, index=["a", "b"])
    assert parsed(leaderboard_html(table, digits=2))["AP"].tolist() == ["0.33", "0.67"]
    assert parsed(leaderboard_html(table))["AP"].tolist() == ["0.3333", "0.6667"]
    assert MISSING == "–"


def test_only_the_best_cells_are_bold():
    table = pd.DataFrame({"AP": [0.2, 0.4], "RR": [0.9, 0.1]}, index=["a", "b"])
    classes = parsed(leaderboard_html(table), "class")
    assert classes.to_numpy().tolist() == [["", "best"], ["best", ""]]   # b's AP (0.4 > 0.2), a's RR (0.9 > 0.1)
    assert f"td.best {{{BEST_STYLE}}}" in TABLE_CSS and BEST_STYLE.startswith("font-weight: 700")


HOSTILE_SYSTEM = '<img src=x onerror=alert(1)>'
HOSTILE_MEASURE = '[m](http://x)"><script>alert(2)</script>'


def test_system_and_measure_names_are_escaped():
    table = pd.DataFrame({HOSTILE_MEASURE: [0.5], "=HYPERLINK(\"http://x\")": [0.25]},
                         index=pd.Index([HOSTILE_SYSTEM], name="<b>system</b>"))
    body = leaderboard_html(table, {(HOSTILE_SYSTEM, HOSTILE_MEASURE): "▲"},
                            {(HOSTILE_SYSTEM, HOSTILE_MEASURE): 'p = 0.03 " onmouseover="alert(3)" <i> & \'more\''})
    shown = parsed(body)
    assert list(shown.index) == [HOSTILE_SYSTEM] and shown.index.name == "<b>system</b>"   # text, letter for letter
    assert list(shown.columns) == [HOSTILE_MEASURE, "=HYPERLINK(\"http://x\")"]
    assert shown.iloc[0].tolist() == ["0.5000 ▲", "0.2500"]   # markers are looked up by the raw names
    assert parsed(body, "title").iloc[0, 0] == 'p = 0.03 " onmouseover="alert(3)" <i> & \'more\''
    assert set(re.findall(r"<(\w+)", body)) == {"style", "table", "thead", "tbody", "tr", "th", "td"}


def test_tooltips_go_to_their_cells_and_unknown_cells_are_ignored():
    table = pd.DataFrame({"AP": [0.2, 0.4]}, index=["*a*", "b"])
    body = leaderboard_html(table, tooltips={("*a*", "AP"): "p = 0.03", ("zz", "AP"): "lost"})
    assert parsed(body, "title")["AP"].tolist() == ["p = 0.03", None]
    assert parsed(body).index.tolist() == ["*a*", "b"] and "lost" not in body


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

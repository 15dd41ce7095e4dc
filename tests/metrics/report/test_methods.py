"""The Method texts: each names its formula's source, states its assumptions, and cites only works
listed in REFERENCES."""
from __future__ import annotations

import re

import pytest

from metrics.report import methods as M

TEXTS = {
    "compare": M.compare_method(test="randomization", correction="bh", family="measure", alpha=0.01, seed=7,
                                resamples=2000, permutations=5000, topics=50),
    "where": M.where_method(level=0.95, resamples=1000, seed=3),
    "judgments": M.judgments_method(),
    "behaviour": M.behaviour_method(seed=4, resamples=1000, draws=10),
    "fusion": M.fusion_method(test="t", correction="holm", family="all"),
}


@pytest.mark.parametrize("page", list(TEXTS))
def test_every_text_has_a_formula_and_assumptions_and_cites_listed_works(page):
    text = TEXTS[page]
    assert "**Formula.**" in text and "**Assumptions.**" in text
    cited = re.findall(r"([A-Z][a-zäöüé]+(?:(?:, | & )[A-Z][a-zäöüé]+)* (?:19|20)\d\d)", text)
    assert cited, page
    for work in cited:
        assert any(work.endswith(ref) or ref.endswith(work) for ref in M.REFERENCES), work


def test_compare_states_the_settings_and_the_family():
    text = TEXTS["compare"]
    assert "Benjamini-Hochberg over each measure apart" in text and "Benjamini & Hochberg 1995" in text
    assert "seed 7" in text.lower() and "5,000 sign flips" in text and "2,000 resamples" in text
    assert "n = 50 topics" in text and "never tested" in text and "p < 0.01" in text
    assert "Smucker, Allan & Carterette 2007" in text


def test_behaviour_cites_tau_sources_and_explains_the_swap_rise():
    text = TEXTS["behaviour"]
    for source in ("Kendall 1938", "Yilmaz, Aslam & Robertson 2008", "Voorhees & Buckley 2002",
                   "Efron & Tibshirani 1993", "Sakai 2006"):
        assert source in text
    assert "near-complements" in text and "10 times" in text


def test_few_systems_warning_counts_the_values():
    assert "2 values (-1, 1)" in M.few_systems_warning(2)
    assert "4 values (-1, -1/3, 1/3, 1)" in M.few_systems_warning(3)
    assert "7 values" in M.few_systems_warning(4)
    assert M.few_systems_warning(5) is None and M.few_systems_warning(10) is None


def test_the_headroom_text_claims_no_band():
    assert "band" not in TEXTS["where"].split("Rank bands")[0].replace("benchmark band", "")
    assert "relative" in TEXTS["where"] and "first stage's own mean" in TEXTS["where"]

"""Every value of every all_trec measure equals trec_eval 10's own output.

tests/data/trec_eval10 holds trec_eval 10's output with 10 decimals for
``-q -c -m all_trec`` (and -J, -M50, -l2) on graded random cases: per query
and in the summary, values must agree to 1e-9 (NaN where trec_eval prints
-nan), and relstring character for character. tests/data/trec_eval holds
trec_eval's own test outputs with 4 decimals, including measure parameters
(``P.5,7,3``, ``ndcg.1=3,2=9,4=4.5``, ``utility.2,-1,0,0``): those agree to
half a unit in the last place.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.measures import trec_plan
from tests.conftest import TREC_EVAL10_DATA, TREC_EVAL_DATA
from tests.metrics.measures.trec_oracle import (
    as_number,
    library_values,
    read_trec_output,
    trec_eval10_cases,
    trec_eval_readme_cases,
    trec_options,
)

CASES = trec_eval10_cases()


def test_every_reference_case_is_in_the_repository():
    """The 14 cases of tests/data/trec_eval10/INDEX.md and the 7 of trec_eval's own README table,
    each with its expected output: none of the conformance tests is left out on a fresh clone."""
    assert len(CASES) == 14 and len(trec_eval_readme_cases()) == 7
    for out, args in CASES:
        assert (TREC_EVAL10_DATA / out).is_file() and (TREC_EVAL10_DATA / args[-1]).is_file(), out
    for out, _ in trec_eval_readme_cases():
        assert (TREC_EVAL_DATA / out).is_file(), out


def compare(expected: dict, got: dict, tolerance: float) -> int:
    missing = sorted(set(expected) - set(got))[:5]
    assert not missing, f"values trec_eval prints that we do not: {missing}"
    extra = sorted(set(got) - set(expected))[:5]
    assert not extra, f"values we print that trec_eval does not: {extra}"
    for key, want in expected.items():
        have = got[key]
        if isinstance(have, str):
            assert have == want, key
            continue
        want = as_number(want)
        if math.isnan(want):
            assert math.isnan(have), f"{key}: trec_eval gives -nan, we give {have}"
        else:
            assert abs(have - want) <= tolerance, f"{key}: trec_eval {want}, ours {have}"
    return len(expected)


@pytest.mark.parametrize("out, args", CASES, ids=[c[0] for c in CASES])
def test_every_value_matches_trec_eval_10(out, args):
    expected = read_trec_output((TREC_EVAL10_DATA / out).read_text())
    compared = compare(expected, library_values(trec_options(args), TREC_EVAL10_DATA), 1e-9)
    assert compared > 1000  # every measure of every query, not a sample


def test_the_cases_cover_the_flags(trec_eval10_data):
    flags = {a for _, args in CASES for a in args if a.startswith("-") and a not in ("-q", "-c", "-m")}
    assert {"-J", "-M50", "-l2"} <= flags
    names = {name for name, _ in read_trec_output((trec_eval10_data / "case100.out").read_text())}
    assert names == {v.printed for v in trec_plan(["all_trec"])}  # every all_trec measure is printed there
    assert len(names) == 100


def test_evaluate_gives_the_same_per_query_values(trec_eval10_data):
    """metrics.evaluate (the tidy frame) and evaluate_ranked agree for trec_eval spellings too."""
    qrels, run = trec_eval10_data / "case101.qrels", trec_eval10_data / "case101.run"
    frame = metrics.evaluate(qrels, {"sys101": run}, ["all_trec"], missing="zero", max_depth=50)
    want = read_trec_output((trec_eval10_data / "case101.M50.out").read_text())
    table = frame.set_index(["measure", "qid"])["value"]
    for name, ours in (("ndcg_cut_10", "nDCG@10"), ("iprec_at_recall_0.10", "IPrec@0.1"), ("bpref", "Bpref"),
                       ("infAP", "infAP"), ("rbp", "RBP(p=0.9)"), ("Rprec_mult_0.20", "Rprec_mult(mult=0.2)"),
                       ("G", "G"), ("Rndcg", "Rndcg"), ("set_F", "SetF"), ("utility", "utility")):
        for (printed, qid), value in want.items():
            if printed == name and qid != "all":
                assert table[(ours, qid)] == pytest.approx(float(value), abs=1e-9), (name, qid)
    summary = metrics.means(frame)
    assert summary.loc["sys101", "gm_map"] == pytest.approx(float(want[("gm_map", "all")]), abs=1e-9)
    assert summary.loc["sys101", "NumRet"] == float(want[("num_ret", "all")])


# ---------------------------------------------------------------- trec_eval's own tests, 4 decimals

README_CASES = trec_eval_readme_cases()


@pytest.mark.parametrize("out, args", README_CASES, ids=[c[0] for c in README_CASES])
def test_trec_eval_test_outputs_still_match(out, args):
    expected = read_trec_output((TREC_EVAL_DATA / out).read_text())
    got = library_values(trec_options(args), TREC_EVAL_DATA)
    assert compare(expected, got, 5.1e-5) >= 20


def test_geometric_mean_floor_and_sums():
    """gm_map: exp(mean(log(max(AP, 1e-5)))); counts are summed."""
    from metrics.measures import aggregate

    aps = np.array([0.5, 0.0, 0.25])
    want = math.exp((math.log(0.5) + math.log(1e-5) + math.log(0.25)) / 3)
    assert aggregate("gm_map", aps) == pytest.approx(want, rel=1e-12)
    assert aggregate("num_ret", np.array([3.0, 4.0])) == 7.0
    assert aggregate("AP", aps) == pytest.approx(0.75 / 3)
    assert pd.isna(aggregate("IPrec@0", np.array([0.5, float("nan")])))  # trec_eval's sum keeps a NaN


def test_every_all_trec_measure_is_the_same_on_any_partition(trec_eval10_data):
    """The kernels never mix queries: scoring the run in query buckets gives identical floats."""
    qrels, run = trec_eval10_data / "case100.qrels", trec_eval10_data / "case100.run"
    local = metrics.evaluate(qrels, run, ["all_trec"], judged_only=True)
    buckets = metrics.evaluate(qrels, run, ["all_trec"], judged_only=True, engine="streaming", buckets=3)
    local, buckets = (f.sort_values(["measure", "qid"]).reset_index(drop=True) for f in (local, buckets))
    assert local["measure"].tolist() == buckets["measure"].tolist() and local["qid"].tolist() == buckets["qid"].tolist()
    assert np.array_equal(local["value"].to_numpy(), buckets["value"].to_numpy(), equal_nan=True)

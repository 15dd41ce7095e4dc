"""Conformance with trec_eval 10's own expected outputs (tests/data/trec_eval).

trec_eval prints 4 decimals, so values must agree to within half a unit in
the last place (5e-5).
"""
from __future__ import annotations

import re
from collections import defaultdict

import pytest

import metrics

# trec_eval name -> our measure string (None: not a measure we define)
_SIMPLE = {"map": "AP", "recip_rank": "RR", "Rprec": "Rprec", "ndcg": "nDCG", "num_ret": "NumRet",
           "num_rel": "NumRel", "num_rel_ret": "NumRelRet"}
_CUT = {"ndcg_cut": "nDCG", "map_cut": "AP", "P": "P", "recall": "R", "success": "Success"}


def ours(trec_name: str) -> str | None:
    if trec_name in _SIMPLE:
        return _SIMPLE[trec_name]
    if trec_name.startswith("ndcg_") and "=" in trec_name:  # ndcg_1=3,2=9,4=4.5: custom gains
        gains = ",".join(f"{k}:{v}" for k, v in (p.split("=") for p in trec_name[5:].split(",")))
        return f"nDCG(gains={{{gains}}})"
    match = re.fullmatch(r"(ndcg_cut|map_cut|P|recall|success)_(\d+)", trec_name)
    if match:
        return f"{_CUT[match.group(1)]}@{match.group(2)}"
    return None


def expected(path):
    table = defaultdict(dict)
    for line in path.read_text().splitlines():
        name, qid, value = (part.strip() for part in line.split("\t"))
        measure = ours(name)
        if measure is not None:
            table[measure][qid] = float(value)
    return table


CASES = [
    # (expected output, qrels, run, options, per-query output present)
    ("out.test", "qrels.test", "results.test", {"missing": "skip"}),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", {"missing": "skip"}),
    ("out.test.aq", "qrels.test", "results.test", {"missing": "skip"}),
    ("out.test.aqc", "qrels.test", "results.trunc", {"missing": "zero"}),
    ("out.test.aqcM", "qrels.test", "results.trunc", {"missing": "zero", "max_depth": 100}),
    ("out.test.aql", "qrels.rel_level", "results.test", {"missing": "skip", "rel_level": 2}),
    ("out.test.meas_params", "qrels.test", "results.test", {"missing": "skip"}),
]


@pytest.mark.parametrize("out_name, qrels_name, run_name, options", CASES, ids=[c[0] for c in CASES])
def test_matches_trec_eval(trec_eval_data, out_name, qrels_name, run_name, options):
    want = expected(trec_eval_data / out_name)
    assert len(want) >= 5, f"{out_name}: too few comparable measures parsed"
    frame = metrics.evaluate(trec_eval_data / qrels_name, trec_eval_data / run_name, list(want), **options)
    table = metrics.means(frame)
    compared = 0
    for measure, per_qid in want.items():
        got = frame[frame["measure"] == measure].set_index("qid")["value"]
        for qid, value in per_qid.items():
            actual = table.iloc[0][measure] if qid == "all" else got[qid]
            assert actual == pytest.approx(value, abs=5.1e-5), f"{out_name} {measure} {qid}"
            compared += 1
        per_query = [q for q in per_qid if q != "all"]
        if per_query:
            assert sorted(per_query) == sorted(got.index), f"{out_name} {measure}: query set differs"
    assert compared >= len(want)


def test_custom_fractional_gain_is_not_truncated(trec_eval_data):
    """trec_eval sorts ideal gains as integers; with binary qrels 4=4.5 never occurs, so both agree here,
    and a grade mapped to 4.5 must keep the .5 (checked by hand in test_measures)."""
    frame = metrics.evaluate(trec_eval_data / "qrels.test", trec_eval_data / "results.test",
                             ["nDCG(gains={1:3,2:9,4:4.5})", "nDCG"], missing="skip")
    table = metrics.means(frame)
    # binary qrels: every relevant doc gets gain 3, so the normalised value equals plain nDCG
    assert table.iloc[0, 0] == pytest.approx(table.iloc[0, 1], abs=1e-12)

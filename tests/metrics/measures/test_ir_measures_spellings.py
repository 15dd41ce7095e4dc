"""ir_measures' spellings of our measures: ir_measures' own parser is the oracle for what a
string means, and its pytrec_eval provider for the values where pytrec_eval is exact.

For each spelling, ``metrics.parse_measure`` must give the family ir_measures gives (ir_measures'
``NumRet(rel=r)`` is our ``NumRelRet(rel=r)``: trec_eval's num_rel_ret), the same value of every
parameter ir_measures sets, and the cutoff (or recall level) ir_measures puts after ``@``, whether
it was written after ``@`` or as a keyword (``P(cutoff=10)``, ``IPrec(recall=0.3)``).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import metrics

ir_measures = pytest.importorskip("ir_measures")

SPELLINGS = [
    "AP", "AP@100", "AP(rel=2)", "AP(cutoff=100)", "AP(judged_only=True)", "MAP", "MAP@10",
    "RR", "RR@10", "MRR@10", "RR(rel=2)",
    "P@5", "P(cutoff=10)", "P(rel=2)@5", "P(rel=2,judged_only=True)@5", "Precision@5",
    "R@100", "R(cutoff=20)", "Recall@10", "R(rel=2)@10",
    "Success@1", "Success(rel=2)@5",
    "nDCG", "nDCG@10", "NDCG@10", "nDCG(cutoff=10)", "nDCG(dcg='exp-log2')@10", 'nDCG(dcg="log2")@10',
    "nDCG(judged_only=True)@10", "nDCG(gains={0:0,1:1,2:3})@10",
    "Rprec", "RPrec", "Rprec(rel=2)",
    "NumQ", "NumRet", "NumRet(rel=1)", "NumRet(rel=2)", "NumRelRet", "NumRel", "NumRel(rel=2)",
    "SetP", "SetP(rel=2)", "SetRelP", "SetP(relative=True)", "SetR", "SetF", "SetF(beta=0.5)", "SetAP",
    "IPrec@0.3", "IPrec(recall=0.3)", "IPrec(rel=2)@0.5",
    "Bpref", "BPref", "Bpref(rel=2)", "infAP",
    "Judged@10", "Judged(cutoff=5)",
    "RBP", "RBP(p=0.9)", "RBP(p=0.5)@10",
    "ERR@20",
]

# Our family for an ir_measures measure, when the names differ.
OUR_FAMILY = {("NumRet", True): "NumRelRet"}


def _expected_family(irm) -> str:
    return OUR_FAMILY.get((irm.NAME, "rel" in irm.params), irm.NAME)


def _our_value(measure, key):
    value = measure.param(key)
    if key == "rel" and value is None:
        return 1  # our rel=None is the -l level, 1 by default: ir_measures' rel=1
    return value


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_our_parse_means_what_ir_measures_parse_means(spelling):
    irm = ir_measures.parse_measure(spelling)
    ours = metrics.parse_measure(spelling)
    assert ours.name == _expected_family(irm)
    at = irm.AT_PARAM
    assert ours.cutoff == irm.params.get(at)
    for key, value in irm.params.items():
        if key != at:
            assert _our_value(ours, key) == value, (spelling, key)
    # and the string we print reads back as the same measure
    assert metrics.parse_measure(str(ours)) == ours


def test_num_ret_with_rel_is_trec_evals_num_rel_ret():
    """The reported spelling: ``-m "NumRet(rel=1)"`` in ir_measures is num_rel_ret."""
    assert str(metrics.parse_measure("NumRet(rel=1)")) == "NumRelRet(rel=1)"
    with pytest.raises(metrics.MetricsError, match="twice"):
        metrics.parse_measure("P(cutoff=10)@5")


def _collection(seed: int = 11):
    """Six queries, graded 0-3 judgments and one run whose scores are distinct multiples of 1/8
    (exact in pytrec_eval's float32); every query of the qrels is in the run, so trec_eval -c and
    pytrec_eval average over the same queries."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(1, 7):
        docs = [f"d{i}" for i in range(40)]
        judged = rng.choice(40, size=20, replace=False)
        grades = rng.integers(0, 4, size=20)
        grades[0] = 2  # at least one relevant at every level used
        qrels += [(f"q{q}", docs[j], int(g)) for j, g in zip(judged, grades)]
        retrieved = rng.choice(40, size=25, replace=False)
        scores = rng.permutation(np.arange(1, 26))[: len(retrieved)] / 8
        run += [(f"q{q}", docs[j], float(s)) for j, s in zip(retrieved, scores)]
    return (pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
            pd.DataFrame(run, columns=["query_id", "doc_id", "score"]))


# Spellings whose values pytrec_eval computes exactly as trec_eval 10 does (not IPrec: its 9.0.8
# recall cut-offs round differently; not Judged, ERR, RBP: other providers).
EXACT = ["AP", "AP(rel=2)", "AP(cutoff=10)", "RR", "P(cutoff=5)", "P(rel=2)@5", "R(cutoff=20)",
         "nDCG", "nDCG(cutoff=10)", "Rprec", "Rprec(rel=2)", "NumRet", "NumRet(rel=1)", "NumRet(rel=2)",
         "NumRel(rel=2)", "SetP", "SetR", "SetF", "Success@5", "Bpref", "infAP"]


def test_values_equal_ir_measures_pytrec_eval_provider():
    qrels, run = _collection()
    theirs = {}
    provider = ir_measures.pytrec_eval
    for m in provider.iter_calc([ir_measures.parse_measure(s) for s in EXACT], qrels, run):
        theirs[(str(m.measure), m.query_id)] = m.value
    ours = metrics.evaluate(
        qrels.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "rel"}),
        {"sys": run.rename(columns={"query_id": "qid", "doc_id": "docno"})},
        EXACT)
    by_spelling = dict(zip(EXACT, (str(metrics.parse_measure(s)) for s in EXACT)))
    checked = 0
    for spelling in EXACT:
        name = str(ir_measures.parse_measure(spelling))
        rows = ours[ours["measure"] == by_spelling[spelling]]
        assert len(rows) == 6, spelling
        for qid, value in zip(rows["qid"], rows["value"]):
            assert math.isclose(value, theirs[(name, qid)], rel_tol=1e-9, abs_tol=1e-12), (spelling, qid)
            checked += 1
    assert checked == 6 * len(EXACT)


def test_eval_takes_the_reported_spelling(capsys, tmp_path):
    """``eval -m "NumRet(rel=1)"`` prints ir_measures' NumRet(rel=1) over all queries (its sum)."""
    from metrics.cli import main

    qrels, run = _collection()
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(index=False)))
    run_path.write_text("".join(f"{q} Q0 {d} 0 {s!r} sys\n" for q, d, s in run.itertuples(index=False)))
    assert main(["eval", str(qrels_path), str(run_path), "-m", "NumRet(rel=1)", "--format", "tsv"]) == 0
    out = capsys.readouterr().out
    row = next(line.split("\t") for line in out.splitlines() if "NumRelRet(rel=1)" in line and "all" in line)
    measure = ir_measures.parse_measure("NumRet(rel=1)")
    expected = ir_measures.pytrec_eval.calc_aggregate([measure], qrels, run)[measure]  # a sum over queries
    assert float(row[-1]) == expected

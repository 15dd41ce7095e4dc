"""Conformance with pytrec_eval (trec_eval's C code) on generated inputs.

Inputs have tied scores, unjudged documents, negative grades, queries missing
from the run and run queries missing from the qrels. Scores are multiples of
1/8, exact in float32, since pytrec_eval keeps scores as float32.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics

# ours -> pytrec_eval name
PAIRS = {
    "nDCG@5": "ndcg_cut_5", "nDCG@10": "ndcg_cut_10", "nDCG@100": "ndcg_cut_100", "nDCG": "ndcg",
    "AP": "map", "AP@10": "map_cut_10", "RR": "recip_rank", "P@5": "P_5", "P@10": "P_10",
    "R@10": "recall_10", "R@100": "recall_100", "Rprec": "Rprec", "Success@1": "success_1",
    "Success@10": "success_10", "NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret",
}
TREC_MEASURES = {"ndcg_cut.5,10,100", "ndcg", "map", "map_cut.10", "recip_rank", "P.5,10", "recall.10,100",
                 "Rprec", "success.1,10", "num_ret", "num_rel", "num_rel_ret"}


def generate(seed: int, n_queries: int = 25, depth: int = 60, n_docs: int = 120):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = str(100 + q)
        judged = rng.choice(n_docs, size=int(rng.integers(1, 40)), replace=False)
        qrels[qid] = {f"D{d}": int(g) for d, g in zip(judged, rng.integers(-1, 5, size=len(judged)))}
        if q % 9 == 4:
            continue  # missing from the run
        docs = rng.choice(n_docs, size=int(rng.integers(1, depth)), replace=False)
        scores = rng.integers(0, 40, size=len(docs)) / 8.0  # many ties
        run[qid] = {f"D{d}": float(s) for d, s in zip(docs, scores)}
    run["999"] = {"D1": 1.0, "D2": 0.5}  # not in the qrels
    return qrels, run


def frames(qrels: dict, run: dict):
    q = pd.DataFrame([(qid, d, r) for qid, m in qrels.items() for d, r in m.items()], columns=["qid", "docno", "label"])
    r = pd.DataFrame([(qid, d, s) for qid, m in run.items() for d, s in m.items()], columns=["qid", "docno", "score"])
    return q, r.sample(frac=1.0, random_state=0)  # file order must not matter


def check(qrels: dict, run: dict, rel_level: int = 1, judged_only: bool = False):
    q, r = frames(qrels, run)
    got = metrics.evaluate(q, {"sys": r}, list(PAIRS), missing="skip", rel_level=rel_level,
                           judged_only=judged_only)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES, relevance_level=rel_level,
                                               judged_docs_only_flag=judged_only)
    want = evaluator.evaluate(run)
    got_qids = set(got["qid"])
    assert got_qids == set(want), "query sets differ"
    table = got.set_index(["measure", "qid"])["value"]
    worst = 0.0
    for ours, theirs in PAIRS.items():
        for qid, values in want.items():
            diff = abs(table[(ours, qid)] - values[theirs])
            worst = max(worst, diff)
            assert diff <= 1e-9, f"{ours} on {qid}: ours {table[(ours, qid)]} vs pytrec_eval {values[theirs]}"
    return worst


@pytest.mark.parametrize("seed", range(6))
def test_seeded_random_inputs(seed):
    qrels, run = generate(seed)
    check(qrels, run)


@pytest.mark.parametrize("rel_level", [2, 3])
def test_relevance_level(rel_level):
    qrels, run = generate(11)
    check(qrels, run, rel_level=rel_level)


def test_judged_only_matches_dash_J():
    qrels, run = generate(12)
    check(qrels, run, judged_only=True)


def test_missing_query_scores_zero_with_c():
    qrels, run = generate(3)
    q, r = frames(qrels, run)
    frame = metrics.evaluate(q, r, ["nDCG@10", "AP"])
    missing = [qid for qid in qrels if qid not in run]
    assert missing
    assert (frame[frame["qid"].isin(missing)]["value"] == 0).all()
    assert set(frame["qid"]) == set(qrels)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    grades=st.lists(st.lists(st.integers(-1, 4) | st.none(), min_size=1, max_size=25), min_size=1, max_size=6),
    extra=st.lists(st.integers(-1, 4), max_size=5),
    scores=st.lists(st.integers(0, 6), min_size=25, max_size=25),
)
def test_hypothesis_edge_cases(grades, extra, scores):
    qrels, run = {}, {}
    for q, gs in enumerate(grades):
        qid = f"q{q}"
        run[qid] = {f"d{i}": scores[i] / 2.0 for i in range(len(gs))}
        qrels[qid] = {f"d{i}": g for i, g in enumerate(gs) if g is not None}
        qrels[qid].update({f"x{i}": g for i, g in enumerate(extra)})
        if not any(g >= 0 for g in qrels[qid].values()):
            # trec_eval (and so pytrec_eval) never returns when a query's judgments are all
            # negative; test_only_negative_judgments covers that case against hand values.
            qrels[qid]["never"] = 0
    check(qrels, run)


def test_only_negative_judgments():
    """A query judged only with negative grades has nothing relevant: every measure is 0."""
    q = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "label": [-1, -2]})
    r = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "c"], "score": [2.0, 1.0]})
    frame = metrics.evaluate(q, r, ["nDCG@10", "AP", "RR", "P@1", "NumRel", "Judged@2"])
    values = dict(zip(frame["measure"], frame["value"]))
    assert values == {"nDCG@10": 0.0, "AP": 0.0, "RR": 0.0, "P@1": 0.0, "NumRel": 0.0, "Judged@2": 0.5}

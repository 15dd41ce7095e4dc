"""The ``ndcglab`` ir_measures provider: the same per-query values as ir_measures' pytrec_eval
provider on generated inputs (scores exact in float32, ties, unjudged documents, negative grades,
missing queries), gdeval's values before its 5-decimal rounding, one engine call per run, and the
same pt.Experiment table as with pytrec_eval on the legal sample."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ir_measures = pytest.importorskip("ir_measures")

from metrics import engines  # noqa: E402
from metrics.interop import ir_measures_provider as ndcglab  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
LEGAL = next(p for p in (ROOT / "sample_data" / "legal", ROOT / "ndcg_lab" / "sample_data" / "legal") if p.exists())

EXACT = ["P@5", "P(rel=2)@5", "P(judged_only=True)@10", "RR", "RR(rel=2)", "Rprec", "Rprec(rel=2)", "AP", "AP@10",
         "AP(rel=2)", "AP(judged_only=True)", "nDCG", "nDCG@10", "nDCG(gains={0:0,1:1,2:5,3:10})@10",
         "nDCG(judged_only=True)@5", "R@10", "R@50", "Success@1", "Success(rel=3)@10", "Bpref", "infAP", "SetAP",
         "SetF(beta=0.5)", "SetP", "SetP(relative=True)", "SetR", "NumRet", "NumRet(rel=1)", "NumRel",
         "IPrec@0.5", "IPrec@1.0"]
"""Measures on which pytrec_eval (trec_eval 9.0.8, float32 scores) is exact on float32-exact inputs."""


def generated(seed: int, n_queries: int = 30):
    """qrels and a run as ir_measures dicts: grades -1..3 (at least one relevant per query, since
    trec_eval never returns on a query whose judgments are all negative), unjudged retrieved
    documents, scores in quarters (ties, exact in float32), queries the run lacks and one it adds."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        docs = [f"D{d}" for d in rng.choice(400, size=60, replace=False)]
        grades = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3], size=40)
        grades[rng.integers(40)] = rng.integers(1, 4)
        qrels[str(q)] = {d: int(g) for d, g in zip(docs[:40], grades)}
        if q % 7 == 3:
            continue   # a query the run lacks: 0 for every measure (trec_eval -c)
        depth = int(rng.integers(1, 45))
        picked = rng.choice(60, size=depth, replace=False)
        run[str(q)] = {docs[i]: float(rng.integers(0, 24)) / 4 for i in picked}
    run["extra"] = {"D1": 1.0}
    return qrels, run


def per_query(provider, measures, qrels, run) -> dict:
    return {(str(m.measure), m.query_id): m.value for m in provider.iter_calc(measures, qrels, run)}


def test_registered_under_its_name():
    assert ir_measures.providers.registry["ndcglab"] is ndcglab.PROVIDER
    assert ndcglab.PROVIDER.supports(ir_measures.parse_measure("nDCG(dcg='exp-log2')@10"))
    assert not ndcglab.PROVIDER.supports(ir_measures.parse_measure("alpha_nDCG@10"))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_query_equals_pytrec_eval_on_generated_inputs(seed):
    qrels, run = generated(seed)
    measures = [ir_measures.parse_measure(m) for m in EXACT]
    ours = per_query(ndcglab.PROVIDER, measures, qrels, run)
    theirs = per_query(ir_measures.pytrec_eval, measures, qrels, run)
    assert set(ours) == set(theirs)
    assert len({qid for _, qid in ours}) == len(qrels)
    # A query the run lacks: ir_measures fills pytrec_eval's gap with 0, nDCG Lab counts its
    # relevant documents as trec_eval -c does.
    lacking = set(qrels) - set(run)
    assert lacking
    for qid in lacking:
        assert ours["NumRel", qid] == sum(g >= 1 for g in qrels[qid].values()) > 0
    exact = [key for key in ours if not (key[0] == "NumRel" and key[1] in lacking)]
    assert max(abs(ours[key] - theirs[key]) for key in exact) <= 1e-12
    assert sum(v != 0 for v in ours.values()) > len(ours) / 2   # not all zeros on both sides


def test_gdeval_measures_are_gdeval_before_its_rounding():
    qrels = list(ir_measures.read_trec_qrels(str(LEGAL / "qrels.txt")))
    run = list(ir_measures.read_trec_run(str(LEGAL / "bm25_ce.run")))
    measures = [ir_measures.ERR @ 10, ir_measures.nDCG(dcg="exp-log2") @ 10, ir_measures.ERR @ 20]
    try:
        theirs = per_query(ir_measures.gdeval, measures, qrels, run)
    except Exception as error:   # perl or the script missing
        pytest.skip(f"gdeval does not run here: {error}")
    ours = per_query(ndcglab.PROVIDER, measures, qrels, run)
    assert set(ours) == set(theirs)
    assert all(abs(ours[key] - theirs[key]) <= 5e-6 + 1e-12 for key in ours)
    assert any(round(v, 5) != v for v in ours.values())   # ours are not rounded
    assert all(round(v, 5) == v for v in theirs.values())


def _counting(monkeypatch) -> list:
    calls = []
    real = engines.evaluate

    def evaluate(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(engines, "evaluate", evaluate)
    return calls


def test_one_engine_call_per_run_whatever_the_queries_and_measures(monkeypatch):
    qrels, run = generated(3)
    calls = _counting(monkeypatch)
    evaluator = ndcglab.PROVIDER.evaluator([ir_measures.parse_measure(m) for m in EXACT], qrels)
    first = evaluator.calc_aggregate(run)
    assert len(calls) == 1
    evaluator.calc_aggregate({q: {d: -s for d, s in docs.items()} for q, docs in run.items()})
    assert len(calls) == 2
    assert first[ir_measures.parse_measure("NumRel")] > 0


def test_default_pipeline_uses_it_only_while_it_is_the_default(monkeypatch):
    qrels, run = generated(4)
    calls = _counting(monkeypatch)
    with ndcglab.as_default():
        inside = ir_measures.calc_aggregate([ir_measures.AP, ir_measures.nDCG @ 10], qrels, run)
        assert ir_measures.DefaultPipeline.providers[0] is ndcglab.PROVIDER
    assert len(calls) == 1
    outside = ir_measures.calc_aggregate([ir_measures.AP, ir_measures.nDCG @ 10], qrels, run)
    assert len(calls) == 1 and ndcglab.PROVIDER not in ir_measures.DefaultPipeline.providers
    assert inside == pytest.approx(outside, abs=1e-12)


def test_a_measure_it_lacks_falls_through_to_the_next_provider():
    qrels, run = generated(5)
    with ndcglab.as_default():
        values = ir_measures.calc_aggregate([ir_measures.AP, ir_measures.Judged], qrels, run)   # no cutoff
    assert not ndcglab.PROVIDER.supports(ir_measures.Judged)
    assert set(map(str, values)) == {"AP", "Judged"} and 0 < values[ir_measures.Judged] < 1


def _legal():
    def run(name):
        frame = pd.read_csv(LEGAL / f"{name}.run", sep=r"\s+", header=None, dtype={0: str, 2: str},
                            names=["qid", "Q0", "docno", "rank", "score", "tag"])
        return frame[["qid", "docno", "score", "rank"]]

    qrels = pd.read_csv(LEGAL / "qrels.txt", sep=r"\s+", header=None, dtype={0: str, 2: str},
                        names=["qid", "iter", "docno", "label"])[["qid", "docno", "label"]]
    names = ["bm25", "bm25_ce", "bm25_qe", "dense"]
    return [run(n) for n in names], names, qrels


def test_pt_experiment_gives_the_pytrec_eval_table_on_the_legal_sample(monkeypatch):
    pt = pytest.importorskip("pyterrier")
    runs, names, qrels = _legal()
    topics = pd.DataFrame({"qid": sorted(qrels["qid"].unique()), "query": "unused"})
    measures = [ir_measures.parse_measure(m) for m in
                ["nDCG@10", "nDCG", "AP", "AP@100", "RR", "P@10", "P(rel=2)@5", "R@100", "Rprec", "Bpref",
                 "Success@1", "NumRet(rel=1)", "nDCG(judged_only=True)@10", "SetF(beta=0.5)", "infAP"]]
    kwargs = dict(eval_metrics=measures, names=names, baseline=0, verbose=False)
    theirs = pt.Experiment(runs, topics, qrels, **kwargs).set_index("name")
    calls = _counting(monkeypatch)
    with ndcglab.as_default():
        ours = pt.Experiment(runs, topics, qrels, **kwargs).set_index("name")
    assert len(calls) == len(runs)   # every value came from nDCG Lab, one call per run
    assert sorted(ours.columns) == sorted(theirs.columns) and list(ours.index) == names
    ours = ours[theirs.columns]
    assert np.allclose(ours.to_numpy(float), theirs.to_numpy(float), rtol=0, atol=1e-12, equal_nan=True)
    assert ours.loc["bm25_ce", "nDCG@10"] > ours.loc["bm25", "nDCG@10"] > 0.4

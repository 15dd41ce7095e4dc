"""One ordering, judged again: ``Rejudge(rank(run, full))(qrels)`` equals ``rank(run, qrels)`` array for
array, and reductions of the qrels evaluated through it equal ``metrics.evaluate`` on them."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.ranked_runs import rankings
from metrics.ranking import Rejudge, rank
from metrics.stats.behaviour import keep_share, pool_depth, reduction_curves

ARRAYS = ("qids", "offsets", "rel", "judged", "inferred", "score", "ideal_offsets", "ideal_rel", "missing")


def same(a, b) -> None:
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.docno.to_pylist() == b.docno.to_pylist()
    assert a.name == b.name and a.judged_only == b.judged_only


def test_by_hand_a_reduced_qrels_labels_the_same_order():
    run = metrics.read_run(pd.DataFrame({"qid": ["1", "1", "1", "2", "2"], "docno": ["a", "b", "c", "d", "e"],
                                         "score": [1.0, 2.0, 2.0, 5.0, 4.0]}), name="x")
    full = metrics.read_qrels(pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "c", "e"], "rel": [2, 1, 1]}))
    reduced = metrics.read_qrels(pd.DataFrame({"qid": ["1"], "docno": ["a"], "rel": [2]}))
    again = Rejudge(rank(run, full))(reduced)
    # query 1 only; order c, b (score 2 tied: docno descending), then a; only a is judged now
    assert list(again.qids) == ["1"] and again.docno.to_pylist() == ["c", "b", "a"]
    assert again.rel.tolist() == [0, 0, 2] and again.judged.tolist() == [False, False, True]
    assert again.ideal_rel.tolist() == [2] and again.offsets.tolist() == [0, 3]
    same(again, rank(metrics.read_run(run.df, name="x"), reduced))


def _generated(rng: np.random.Generator):
    """A run with ties, unjudged documents, queries the qrels lack and the qrels queries it lacks; qrels with
    negative grades; a proxy qrels judging other pairs."""
    docs = np.array([f"d{i}" for i in range(40)])
    rows = []
    for q in range(12):
        if q == 3:
            continue                                   # a qrels query the run lacks
        picked = rng.choice(docs, size=int(rng.integers(1, 15)), replace=False)
        scores = rng.integers(0, 4, size=len(picked)).astype(np.float64) / 2   # many ties
        rows += [(f"q{q}", d, s) for d, s in zip(picked, scores)]
    run = pd.DataFrame(rows, columns=["qid", "docno", "score"]).sample(frac=1.0, random_state=int(rng.integers(99)))
    judged = [(f"q{q}", d, int(rng.integers(-1, 4))) for q in range(11) for d in rng.choice(docs, 10, replace=False)]
    qrels = pd.DataFrame(judged, columns=["qid", "docno", "rel"])
    proxy = pd.DataFrame([(f"q{q}", d, int(rng.integers(0, 3))) for q in range(11)
                          for d in rng.choice(docs, 12, replace=False)], columns=["qid", "docno", "rel"])
    return run, qrels, proxy


@pytest.mark.parametrize("seed", range(6))
def test_every_reduction_equals_ranking_again(seed):
    rng = np.random.default_rng(seed)
    run, qrels, proxy = _generated(rng)
    full = metrics.read_qrels(qrels)
    proxy = metrics.read_qrels(proxy)
    judge = Rejudge(rank(metrics.read_run(run, name="r"), full))
    reduced = [keep_share(full, p, seed=seed) for p in (5, 30, 70, 100)]
    reduced.append(metrics.read_qrels(qrels[qrels["qid"].isin(["q1", "q5", "q3"])]))   # fewer queries
    for judgments in reduced:
        for missing in ("zero", "skip"):
            for inferred in (None, proxy):
                expected = rank(metrics.read_run(run, name="r"), judgments, missing=missing, inferred=inferred)
                same(judge(judgments, missing=missing, inferred=inferred), expected)


def test_judgments_of_another_query_are_refused():
    run = metrics.read_run(pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0]}))
    full = metrics.read_qrels(pd.DataFrame({"qid": ["1"], "docno": ["a"], "rel": [1]}))
    other = metrics.read_qrels(pd.DataFrame({"qid": ["2"], "docno": ["a"], "rel": [1]}))
    with pytest.raises(metrics.MetricsError, match="query 2"):
        Rejudge(rank(run, full))(other)


@pytest.mark.parametrize("seed", range(4))
def test_reduction_curves_equal_evaluating_each_reduced_qrels(seed):
    """The values of the ordered-once path against the formula it replaces: ``means(metrics.evaluate(reduced,
    runs, measures, **options))`` per reduced qrels, exactly."""
    rng = np.random.default_rng(100 + seed)
    base, qrels, proxy = _generated(rng)
    runs = {f"s{i}": base.assign(score=base["score"] + rng.integers(0, 3, len(base)) / 4) for i in range(3)}
    measures = ["nDCG@5", "nDCG(judged_only=True)@10", "AP", "Bpref", "infAP", "P@3"]
    options = [{}, {"missing": "skip"}, {"judged_only": True}, {"inferred": proxy, "rel_level": 2}]
    for opts in options:
        out = reduction_curves(qrels, runs, measures, keep=(20, 50, 100), seed=seed, draws=3, **opts)
        got = out["means"].set_index(["level", "system", "measure"])["mean"]
        for level, draws in ((20, range(seed, seed + 3)), (50, range(seed, seed + 3)), (100, [seed])):
            per_draw = [metrics.means(metrics.evaluate(keep_share(qrels, level, seed=s) if level < 100 else qrels,
                                                       runs, measures, **opts)) for s in draws]
            expected = pd.concat(per_draw).groupby(level=0, sort=False).mean()
            for system in runs:
                for m in expected.columns:
                    assert got[(level, system, m)] == expected.loc[system, m], (opts, level, system, m)
        pooled = reduction_curves(qrels, runs, measures, depths=(1, 3), **opts)
        got = pooled["means"].set_index(["level", "system", "measure"])["mean"]
        for depth in (1, 3):
            expected = metrics.means(metrics.evaluate(pool_depth(qrels, runs, depth), runs, measures, **opts))
            for system in runs:
                for m in expected.columns:
                    assert got[(depth, system, m)] == expected.loc[system, m], (opts, depth, system, m)


def test_rankings_keep_given_rankings_and_rank_runs_once():
    qrels = metrics.read_qrels(pd.DataFrame({"qid": ["1"], "docno": ["a"], "rel": [1]}))
    run = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    ranked = rankings(qrels, {"x": run})
    assert rankings(qrels, ranked)["x"] is ranked["x"]
    assert rankings(qrels, ranked, max_depth=1)["x"].docno.to_pylist() == ["b"]


def test_system_shift_of_rankings_equals_system_shift_of_runs():
    from metrics.stats.behaviour import system_shift

    rng = np.random.default_rng(7)
    base, qrels, proxy = _generated(rng)
    runs = {f"s{i}": base.assign(score=base["score"] + rng.integers(0, 3, len(base)) / 4) for i in range(3)}
    full = metrics.read_qrels(qrels)
    ranked = rankings(full, runs)
    expected = system_shift(full, proxy, runs, ["nDCG@5", "AP"], seed=3)
    got = system_shift(full, proxy, ranked, ["nDCG@5", "AP"], seed=3)
    for name in ("means", "tau", "significance"):
        pd.testing.assert_frame_equal(got[name], expected[name], check_exact=True, obj=name)
    # the means under B are the engine's on B
    under_b = metrics.means(metrics.evaluate(proxy, runs, ["nDCG@5"]))["nDCG@5"]
    means = got["means"].query("measure == 'nDCG@5'").set_index("system")["mean_b"]
    assert means.to_dict() == under_b.round(12).to_dict()   # system_shift rounds means to 12 decimals

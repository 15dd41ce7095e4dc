"""metrics.measures.context: what every measure shares, by hand: ties, missing queries, queries
without judgments, max_depth, proxy labels, condensed lists and curves."""
from __future__ import annotations

from math import log2
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest

from metrics.measures import Context, compute, compute_curve, parse, parse_family
from metrics.ranking import rank
from tests.metrics.measures.hand import ranked_from, tables, value


def test_judged_only_condenses_the_list():
    ranked = ranked_from({"q1": [None, 2, None, 1]})
    # condensed list is [2, 1]: perfect
    assert value(ranked, "nDCG(judged_only=True)@2") == pytest.approx(1.0)
    dcg = 2 / log2(3)
    idcg = 2 / log2(2) + 1 / log2(3)
    assert value(ranked, "nDCG@2") == pytest.approx(dcg / idcg)


def test_ties_broken_by_docno_descending_as_strings():
    # equal scores: "9" > "10" > "1" as strings, so the order is 9, 10, 1 (trec_eval strcmp)
    run, qrels = tables({"q": [("1", 1.0), ("10", 1.0), ("9", 1.0)]}, {"q": {"9": 1}})
    ranked = rank(run, qrels)
    assert ranked.docno.to_pylist() == ["9", "10", "1"]
    assert float(compute(Context(ranked), parse("RR"))[0]) == 1.0


def test_ties_rank_option_uses_rank_column():
    run, qrels = tables({"q": [("a", 1.0), ("b", 1.0), ("c", 1.0)]}, {"q": {"a": 1}})
    ranked = rank(run, qrels, ties="rank")
    assert ranked.docno.to_pylist() == ["a", "b", "c"]
    assert rank(run, qrels).docno.to_pylist() == ["c", "b", "a"]


def test_missing_queries_zero_or_skip():
    run, qrels = tables({"q1": [("a", 1.0)]}, {"q1": {"a": 1}, "q2": {"b": 1}})
    zero = rank(run, qrels)
    assert list(zero.qids) == ["q1", "q2"]
    assert compute(Context(zero), parse("nDCG@10")).tolist() == [1.0, 0.0]
    assert compute(Context(zero), parse("NumRel")).tolist() == [1.0, 1.0]
    skip = rank(run, qrels, missing="skip")
    assert list(skip.qids) == ["q1"]


def test_queries_not_in_qrels_are_ignored():
    run, qrels = tables({"q1": [("a", 1.0)], "zz": [("a", 1.0)]}, {"q1": {"a": 1}})
    assert list(rank(run, qrels).qids) == ["q1"]


def test_max_depth_truncates_after_ordering():
    run, qrels = tables({"q": [("a", 1.0), ("b", 3.0), ("c", 2.0)]}, {"q": {"a": 1}})
    ranked = rank(run, qrels, max_depth=2)
    assert ranked.docno.to_pylist() == ["b", "c"]
    assert float(compute(Context(ranked), parse("RR"))[0]) == 0.0


def test_inferred_labels_fill_unjudged_and_are_marked():
    run, qrels = tables({"q": [("a", 3.0), ("b", 2.0), ("c", 1.0)]}, {"q": {"b": 1}})
    _, proxy = tables({}, {"q": {"a": 2, "b": 0}, "other": {"a": 1}})
    ranked = rank(run, qrels, inferred=proxy)
    assert ranked.inferred.tolist() == [True, False, False]
    assert ranked.rel.tolist() == [2, 1, 0]  # the real judgment of b wins over the proxy's 0
    dcg = 2 / log2(2) + 1 / log2(3)
    assert float(compute(Context(ranked), parse("nDCG@3"))[0]) == pytest.approx(1.0)
    assert float(compute(Context(ranked), parse("DCG@3"))[0]) == pytest.approx(dcg)
    # Judged@k counts real judgments only
    assert float(compute(Context(ranked), parse("Judged@3"))[0]) == pytest.approx(1 / 3)


def test_curve_equals_point_values_exactly():
    rng = np.random.default_rng(7)
    grades = {f"q{i}": [int(g) if g >= 0 else None for g in rng.integers(-1, 4, size=30)] for i in range(20)}
    ranked = ranked_from(grades)
    ctx = Context(ranked)
    for family in ("nDCG", "nDCG(dcg='exp-log2')", "AP", "P", "R", "RR", "Success", "Judged", "DCG"):
        curve = compute_curve(ctx, parse_family(family), 30)
        for k in (1, 5, 10, 30):
            point = compute(ctx, parse(f"{family}@{k}"))
            np.testing.assert_array_equal(curve[:, k - 1], point, err_msg=f"{family}@{k}")


def test_join_keys_do_not_overflow_with_many_queries_and_judged_docs():
    """query code x judged docs passes 2**31 here (50,000 x 50,000): every hit must still be found."""
    n = 50_000
    qids = [f"q{i:05d}" for i in range(n)]
    docs = [f"d{i}" for i in range(n)]
    run = SimpleNamespace(name="run", table=pa.table({
        "qid": qids, "docno": docs, "score": pa.array(np.ones(n)), "rank": pa.array(np.ones(n, dtype=np.int64)),
        "tag": ["t"] * n}))
    qrels = SimpleNamespace(table=pa.table({"qid": qids, "docno": docs, "rel": pa.array(np.ones(n, dtype=np.int64))}))
    ranked = rank(run, qrels)
    assert ranked.judged.all()
    assert compute(Context(ranked), parse("nDCG@10")).min() == 1.0

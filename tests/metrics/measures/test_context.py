"""Hand-computed expectations for every measure family: the tests show their arithmetic."""
from __future__ import annotations

from math import log2
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest

from metrics.errors import MetricsError
from metrics.measures import Context, compute, compute_curve, parse, parse_family, with_gain
from metrics.ranking import rank


def tables(ranking: dict[str, list[tuple[str, float]]], judgments: dict[str, dict[str, int]]):
    run_rows = [(q, d, s) for q, docs in ranking.items() for d, s in docs]
    run = SimpleNamespace(name="run", table=pa.table({
        "qid": [r[0] for r in run_rows], "docno": [r[1] for r in run_rows],
        "score": pa.array([float(r[2]) for r in run_rows], pa.float64()),
        "rank": pa.array(range(1, len(run_rows) + 1), pa.int64()), "tag": ["t"] * len(run_rows)}))
    q_rows = [(q, d, r) for q, docs in judgments.items() for d, r in docs.items()]
    qrels = SimpleNamespace(table=pa.table({
        "qid": [r[0] for r in q_rows], "docno": [r[1] for r in q_rows],
        "rel": pa.array([r[2] for r in q_rows], pa.int64())}))
    return run, qrels


def ranked_from(grades: dict[str, list], ideal: dict[str, dict[str, int]] | None = None, **options):
    """Run whose docs d0, d1, ... come in the listed order; a grade of None means unjudged."""
    ranking = {q: [(f"d{i}", 100.0 - i) for i in range(len(gs))] for q, gs in grades.items()}
    judgments = {q: {f"d{i}": g for i, g in enumerate(gs) if g is not None} for q, gs in grades.items()}
    for q, extra in (ideal or {}).items():
        judgments.setdefault(q, {}).update(extra)
    run, qrels = tables(ranking, judgments)
    return rank(run, qrels, **options)


def value(ranked, measure: str, **ctx_options) -> float:
    values = compute(Context(ranked, **ctx_options), parse(measure))
    assert len(values) == 1
    return float(values[0])


def test_ndcg_at_3_linear_gain():
    ranked = ranked_from({"q1": [2, 0, 1]})
    dcg = 2 / log2(2) + 0 / log2(3) + 1 / log2(4)
    idcg = 2 / log2(2) + 1 / log2(3)
    assert value(ranked, "nDCG@3") == pytest.approx(dcg / idcg)
    assert value(ranked, "DCG@3") == pytest.approx(dcg)
    assert value(ranked, "IDCG@3") == pytest.approx(idcg)


def test_ndcg_exponential_gain():
    ranked = ranked_from({"q1": [1, 3, 0, 2]})
    dcg = 1 / log2(2) + 7 / log2(3) + 0 + 3 / log2(5)
    idcg = 7 / log2(2) + 3 / log2(3) + 1 / log2(4)
    assert value(ranked, "nDCG(dcg=exp-log2)@4") == pytest.approx(dcg / idcg)
    assert value(ranked, "nDCG(dcg=exp-log2)") == pytest.approx(dcg / idcg)


def test_ideal_counts_relevant_docs_not_retrieved():
    ranked = ranked_from({"q1": [1, 0]}, ideal={"q1": {"missing": 3}})
    dcg = 1 / log2(2)
    idcg = 3 / log2(2) + 1 / log2(3)
    assert value(ranked, "nDCG@2") == pytest.approx(dcg / idcg)


def test_custom_fractional_gains_are_kept():
    ranked = ranked_from({"q1": [1, 2]})
    # gains {1: 0.5, 2: 2.5}: the ideal puts grade 2 first; nothing is truncated to integers
    dcg = 0.5 / log2(2) + 2.5 / log2(3)
    idcg = 2.5 / log2(2) + 0.5 / log2(3)
    assert value(ranked, "nDCG(gains={1:0.5,2:2.5})@2") == pytest.approx(dcg / idcg)


def test_negative_grades_gain_nothing_and_are_not_relevant():
    ranked = ranked_from({"q1": [-1, 2, None, 1]})
    dcg = 2 / log2(3) + 1 / log2(5)
    idcg = 2 / log2(2) + 1 / log2(3)
    assert value(ranked, "nDCG@5") == pytest.approx(dcg / idcg)
    assert value(ranked, "P@2") == pytest.approx(1 / 2)
    assert value(ranked, "AP") == pytest.approx((1 / 2 + 2 / 4) / 2)


def test_judged_only_condenses_the_list():
    ranked = ranked_from({"q1": [None, 2, None, 1]})
    # condensed list is [2, 1]: perfect
    assert value(ranked, "nDCG(judged_only=True)@2") == pytest.approx(1.0)
    dcg = 2 / log2(3)
    idcg = 2 / log2(2) + 1 / log2(3)
    assert value(ranked, "nDCG@2") == pytest.approx(dcg / idcg)


def test_average_precision_and_cutoff_divide_by_all_relevant():
    ranked = ranked_from({"q1": [1, 0, 1, 0, 0]}, ideal={"q1": {"x": 1}})
    assert value(ranked, "AP") == pytest.approx((1 / 1 + 2 / 3) / 3)
    assert value(ranked, "AP@2") == pytest.approx((1 / 1) / 3)


def test_reciprocal_rank_with_and_without_cutoff():
    ranked = ranked_from({"q1": [0, 0, 2, 1]})
    assert value(ranked, "RR") == pytest.approx(1 / 3)
    assert value(ranked, "RR@2") == 0.0
    assert value(ranked, "RR(rel=2)") == pytest.approx(1 / 3)
    assert value(ranked, "RR(rel=3)") == 0.0


def test_precision_recall_success_rprec():
    ranked = ranked_from({"q1": [2, 0, 1, 0]}, ideal={"q1": {"x": 1, "y": 0}})
    assert value(ranked, "P@3") == pytest.approx(2 / 3)
    assert value(ranked, "P@10") == pytest.approx(2 / 10)  # divides by k even past the end
    assert value(ranked, "P(rel=2)@3") == pytest.approx(1 / 3)
    assert value(ranked, "R@3") == pytest.approx(2 / 3)
    assert value(ranked, "Rprec") == pytest.approx(2 / 3)  # R = 3: two hits in the top 3
    assert value(ranked, "Success@1") == 1.0
    assert value(ranked, "Success(rel=2)@1") == 1.0
    assert value(ranked, "Success(rel=3)@4") == 0.0


def test_rel_level_changes_binary_threshold():
    ranked = ranked_from({"q1": [1, 2, 0]})
    assert value(ranked, "P@2", rel_level=2) == pytest.approx(1 / 2)
    assert value(ranked, "P@2") == pytest.approx(2 / 2)


def test_judged_divides_by_retrieved_when_fewer_than_k():
    ranked = ranked_from({"q1": [1, None, 0]})
    assert value(ranked, "Judged@2") == pytest.approx(1 / 2)
    assert value(ranked, "Judged@10") == pytest.approx(2 / 3)


def test_counts():
    ranked = ranked_from({"q1": [1, None, 0, 2]}, ideal={"q1": {"x": 3}})
    assert value(ranked, "NumRet") == 4
    assert value(ranked, "NumRel") == 3
    assert value(ranked, "NumRelRet") == 2
    assert value(ranked, "NumRel(rel=2)") == 2


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
    for family in ("nDCG", "nDCG(dcg=exp-log2)", "AP", "P", "R", "RR", "Success", "Judged", "DCG"):
        curve = compute_curve(ctx, parse_family(family), 30)
        for k in (1, 5, 10, 30):
            point = compute(ctx, parse(f"{family}@{k}"))
            np.testing.assert_array_equal(curve[:, k - 1], point, err_msg=f"{family}@{k}")


def test_parse_round_trip_and_errors():
    assert str(parse("nDCG(dcg=exp-log2)@10")) == "nDCG(dcg=exp-log2)@10"
    assert str(parse("nDCG(dcg=log2)@10")) == "nDCG@10"  # the default parameter is dropped
    assert str(parse("P(rel=2)@5")) == "P(rel=2)@5"
    assert parse("MAP").name == "AP"
    with pytest.raises(MetricsError, match="unknown measure"):
        parse("Foo@3")
    with pytest.raises(MetricsError, match="needs a cutoff"):
        parse("P")
    with pytest.raises(MetricsError, match="takes no cutoff"):
        parse("Rprec@5")
    with pytest.raises(MetricsError, match="must be one of"):
        parse("nDCG(dcg=cubic)@5")
    with pytest.raises(MetricsError, match="cutoff"):
        parse("nDCG@0")


def test_with_gain():
    assert with_gain("nDCG@10", "exp") == "nDCG(dcg=exp-log2)@10"
    assert with_gain("nDCG(dcg=exp-log2)@10", "linear") == "nDCG@10"
    assert with_gain("AP", "exp") == "AP"
    assert with_gain("nDCG(judged_only=True)@5", "exp") == "nDCG(dcg=exp-log2,judged_only=True)@5"


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

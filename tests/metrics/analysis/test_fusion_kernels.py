"""The fusion kernels on one small hand-made pool: every method and normalisation against its
formula written out (metrics.analysis.fusion states them), the pool's bookkeeping, and the refusals.

Inputs: A ranks q1 a(3) > b(2) > c(1) and q2 x(1); B ranks q1 b(0.9) > d(0.5) and lacks q2.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy import stats

from metrics.analysis import fusion_kernels
from metrics.analysis.fusion_kernels import combine, positive_int, prepare
from metrics.errors import MetricsError
from metrics.io import read_qrels, read_run
from metrics.ranking import rank
from tests.metrics.threads import force_threads

A = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0}}
B = {"q1": {"b": 0.9, "d": 0.5}}


@pytest.fixture(scope="module")
def pool():
    return prepare({"A": A, "B": B})


def fused(pool, method, **options) -> dict:
    values = combine(pool, method, **options)
    qids = pool.qids.to_pylist()
    return {(qids[q], d): v for q, d, v in zip(pool.group_qcode, pool.group_docno.to_pylist(), values)}


def test_pool_groups_the_union_of_queries_and_documents(pool):
    assert pool.names == ["A", "B"]
    assert pool.qids.to_pylist() == ["q1", "q2"]
    keys = sorted(zip([pool.qids[int(q)].as_py() for q in pool.group_qcode], pool.group_docno.to_pylist()))
    assert keys == [("q1", "a"), ("q1", "b"), ("q1", "c"), ("q1", "d"), ("q2", "x")]
    assert pool.per_input.tolist() == [[3, 1], [2, 0]]
    assert pool.partial == ["q2"]
    assert pool.query_offsets.tolist() == [0, 4, 5]
    assert pool.n_inputs == 2 and pool.n_groups == 5


def test_depth_keeps_the_first_documents_of_every_input():
    cut = prepare({"A": A, "B": B}, depth=1)
    assert cut.per_input.tolist() == [[1, 1], [1, 0]]
    assert sorted(cut.group_docno.to_pylist()) == ["a", "b", "x"]


def test_rrf(pool):
    k = 60
    assert fused(pool, "rrf", k=k) == pytest.approx({
        ("q1", "a"): 1 / (k + 1), ("q1", "b"): 1 / (k + 2) + 1 / (k + 1), ("q1", "c"): 1 / (k + 3),
        ("q1", "d"): 1 / (k + 2), ("q2", "x"): 1 / (k + 1)})


def test_isr(pool):
    assert fused(pool, "isr") == pytest.approx({
        ("q1", "a"): 1 * (1 / 1**2), ("q1", "b"): 2 * (1 / 2**2 + 1 / 1**2), ("q1", "c"): 1 * (1 / 3**2),
        ("q1", "d"): 1 * (1 / 2**2), ("q2", "x"): 1 * (1 / 1**2)})


def test_bordafuse_points_and_unranked_share(pool):
    # q1 has C = 4 candidates; A ranked 3 of them (unranked share (4-3+1)/2 = 1), B 2 ((4-2+1)/2 = 1.5).
    values = fused(pool, "bordafuse")
    assert values[("q1", "a")] == pytest.approx((4 - 1 + 1) + 1.5)
    assert values[("q1", "b")] == pytest.approx((4 - 2 + 1) + (4 - 1 + 1))
    assert values[("q1", "c")] == pytest.approx((4 - 3 + 1) + 1.5)
    assert values[("q1", "d")] == pytest.approx(1 + (4 - 2 + 1))


def test_weighted_bordafuse(pool):
    values = fused(pool, "bordafuse", weights=np.array([2.0, 1.0]))
    assert values[("q1", "a")] == pytest.approx(2 * 4 + 1 * 1.5)
    assert values[("q1", "d")] == pytest.approx(2 * 1 + 1 * 3)


def test_condorcet_is_copeland_wins_minus_losses(pool):
    # pairs of q1 (A's vote, B's vote): a-b (+, -) tie; a-c (+, abstain) a; a-d (+, -) tie;
    # b-c (+, +) b; b-d (+, +) b; c-d (+, -) tie.
    assert fused(pool, "condorcet") == {("q1", "a"): 1 - 0, ("q1", "b"): 2 - 0, ("q1", "c"): 0 - 2,
                                        ("q1", "d"): 0 - 1, ("q2", "x"): 0}


def test_condorcet_weights_break_a_tie(pool):
    values = fused(pool, "condorcet", weights=np.array([1.0, 2.0]))
    # B now outvotes A: b over a, d over a, d over c; a still beats c, b beats c and d.
    assert values[("q1", "a")] == 1 - 2
    assert values[("q1", "b")] == 3
    assert values[("q1", "c")] == 0 - 3
    assert values[("q1", "d")] == 2 - 1


# minmax: A q1 (3, 2, 1) -> (1, 0.5, 0); B q1 (0.9, 0.5) -> (1, 0); a single document -> 1.
MINMAX = {"A": {"a": 1.0, "b": 0.5, "c": 0.0}, "B": {"b": 1.0, "d": 0.0}}


@pytest.mark.parametrize("method, expected", [
    ("combsum", {"a": 1.0, "b": 0.5 + 1.0, "c": 0.0, "d": 0.0}),
    ("combmnz", {"a": 1 * 1.0, "b": 2 * (0.5 + 1.0), "c": 0.0, "d": 0.0}),
    ("combanz", {"a": 1.0, "b": (0.5 + 1.0) / 2, "c": 0.0, "d": 0.0}),
    ("combmax", {"a": 1.0, "b": max(0.5, 1.0), "c": 0.0, "d": 0.0}),
    ("combmin", {"a": 1.0, "b": min(0.5, 1.0), "c": 0.0, "d": 0.0}),
    ("combmed", {"a": 1.0, "b": (0.5 + 1.0) / 2, "c": 0.0, "d": 0.0}),
])
def test_score_methods_under_minmax(pool, method, expected):
    values = fused(pool, method, norm="minmax")
    assert {d: values[("q1", d)] for d in "abcd"} == pytest.approx(expected)
    assert values[("q2", "x")] == 1.0


def test_wsum_weights_each_input(pool):
    values = fused(pool, "wsum", norm="minmax", weights=np.array([2.0, 1.0]))
    assert values[("q1", "b")] == pytest.approx(2 * MINMAX["A"]["b"] + 1 * MINMAX["B"]["b"])
    assert values[("q1", "d")] == pytest.approx(1 * MINMAX["B"]["d"])


@pytest.mark.parametrize("norm, a_scores, b_scores", [
    ("none", [3.0, 2.0, 1.0], [0.9, 0.5]),
    ("rank", [1 - 0 / 3, 1 - 1 / 3, 1 - 2 / 3], [1 - 0 / 2, 1 - 1 / 2]),
    ("sum", [2 / 3, 1 / 3, 0 / 3], [0.4 / 0.4, 0 / 0.4]),
    ("max", [3 / 3, 2 / 3, 1 / 3], [0.9 / 0.9, 0.5 / 0.9]),
    ("zscore", list(stats.zscore([3.0, 2.0, 1.0])), list(stats.zscore([0.9, 0.5]))),
])
def test_normalisations_per_input_and_query(pool, norm, a_scores, b_scores):
    values = fused(pool, "combsum", norm=norm)
    a, b, c = a_scores
    b_b, b_d = b_scores
    assert [values[("q1", d)] for d in "abcd"] == pytest.approx([a, b + b_b, c, b_d])


def test_degenerate_lists():
    equal = prepare({"A": {"q": {"a": 2.0, "b": 2.0}}, "B": {"q": {"a": 1.0}}})
    minmax = combine(equal, "combsum", norm="minmax")   # all equal -> 1
    sums = combine(equal, "combsum", norm="sum")        # all equal -> 1/n
    zscores = combine(equal, "combsum", norm="zscore")  # std 0 -> 0
    docs = equal.group_docno.to_pylist()
    assert dict(zip(docs, minmax)) == {"a": 1 + 1, "b": 1}
    assert dict(zip(docs, sums)) == pytest.approx({"a": 1 / 2 + 1 / 1, "b": 1 / 2})
    assert dict(zip(docs, zscores)) == {"a": 0.0, "b": 0.0}


def test_sums_depend_only_on_the_multiset_of_contributions():
    """0.1 + 0.2 + 0.3 is not 0.3 + 0.2 + 0.1 in floating point; the kernel sums ascending."""
    runs = [{"q": {"d": s}} for s in (0.3, 0.2, 0.1)]
    assert 0.3 + 0.2 + 0.1 != 0.1 + 0.2 + 0.3
    forward = combine(prepare(runs), "combsum", norm="none")
    backward = combine(prepare(runs[::-1]), "combsum", norm="none")
    assert forward.tolist() == backward.tolist() == [0.1 + 0.2 + 0.3]


def test_max_normalisation_refuses_a_non_positive_top_score():
    negative = prepare({"A": {"q": {"a": -1.0}}, "B": {"q": {"a": 1.0}}})
    with pytest.raises(MetricsError, match="run 'A' has top score -1 for query 'q'"):
        combine(negative, "combsum", norm="max")


@pytest.mark.parametrize("options, message", [
    ({"method": "combfoo"}, "unknown fusion method 'combfoo'"),
    ({"method": "combsum", "norm": "l2"}, "unknown normalisation 'l2'"),
])
def test_unknown_method_or_normalisation(pool, options, message):
    with pytest.raises(MetricsError, match=message):
        combine(pool, **options)


def test_fusion_needs_two_runs():
    with pytest.raises(MetricsError, match="at least two runs, got 1"):
        prepare({"A": A})


@pytest.mark.parametrize("value, expected", [(1, 1), (3.0, 3), ("7", None), (0, None), (2.5, None),
                                             (None, None), (-4, None)])
def test_positive_int(value, expected):
    if expected is None:
        with pytest.raises(MetricsError, match="depth must be a whole number >= 1"):
            positive_int(value, "depth")
    else:
        assert positive_int(value, "depth") == expected
        assert isinstance(positive_int(value, "depth"), int)


def test_rrf_matches_the_formula_on_a_seeded_pool():
    rng = np.random.default_rng(7)
    runs = [{f"q{q}": {f"d{d}": float(s) for d, s in zip(rng.choice(30, 10, replace=False), rng.random(10))}
             for q in range(4)} for _ in range(3)]
    values = fused(prepare(runs), "rrf", k=10)
    for (qid, doc), value in values.items():
        ranks = [1 + sorted(run[qid].values(), reverse=True).index(run[qid][doc])
                 for run in runs if doc in run[qid]]
        assert value == pytest.approx(math.fsum(1 / (10 + r) for r in ranks))


def test_narrow_codes_give_the_values_of_int64_codes():
    """The pool keeps codes, ranks and groups narrow (one byte for the input, four for the rest); every
    method and normalisation gives the same bits as the same pool with int64 codes. Three inputs and
    100 queries: an input index times the number of queries passes what one byte holds."""
    import dataclasses

    rng = np.random.default_rng(5)
    runs = {f"r{i}": {f"q{q:03d}": {f"d{d}": float(rng.integers(0, 20)) / 4 for d in rng.choice(90, 70, replace=False)}
                      for q in range(100)} for i in range(3)}
    narrow = prepare(runs)
    assert [getattr(narrow, f).dtype.name for f in ("source", "qcode", "rank", "group", "group_qcode", "score")] == \
        ["int8", "int32", "int32", "int32", "int32", "float64"]
    wide = dataclasses.replace(narrow, **{f: getattr(narrow, f).astype(np.int64)
                                          for f in ("source", "qcode", "rank", "group", "group_qcode")})
    cases = [(m, None) for m in ("rrf", "isr", "bordafuse", "condorcet")]
    cases += [(m, n) for m in ("combsum", "combmnz", "combmax", "combmin", "combanz", "combmed")
              for n in ("none", "minmax", "zscore", "sum", "rank")]
    for method, norm in cases:
        got, want = combine(narrow, method, k=7, norm=norm), combine(wide, method, k=7, norm=norm)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (method, norm)


@pytest.mark.parametrize("inputs", [2, 3])
def test_every_method_gives_the_same_bits_with_its_sums_on_two_threads(inputs, monkeypatch):
    """With two inputs a candidate's sum is one bincount, each input's rows on its own thread and
    the two sums added: the same bits as one bincount of every row, for every method and
    normalisation, with signed zeros and repeated values among the scores."""
    rng = np.random.default_rng(inputs)
    runs = {f"r{i}": {f"q{q:02d}": {f"d{d}": float(rng.integers(-4, 5)) / 4 or -0.0
                                    for d in rng.choice(60, 40, replace=False)} for q in range(30)}
            for i in range(inputs)}
    pool = prepare(runs)
    cases = [(m, None) for m in ("rrf", "isr", "bordafuse", "condorcet")]
    cases += [(m, n) for m in ("combsum", "combmnz", "combmax", "combmin", "combanz", "combmed")
              for n in ("none", "minmax", "zscore", "sum", "rank")]
    inline = {case: combine(pool, case[0], k=7, norm=case[1]) for case in cases}
    started = force_threads(monkeypatch)
    for method, norm in cases:
        assert combine(pool, method, k=7, norm=norm).tobytes() == inline[method, norm].tobytes(), (method, norm)
    assert ("bincount" in started) == (inputs == 2)


@pytest.mark.parametrize("n", [0, 1, 7, 5000])
@pytest.mark.parametrize("top", [50, 2**50 - 1, 2**62])   # keys and rows in 63 bits, up to 2**50 at 5000 rows
@pytest.mark.parametrize("threads", [False, True])
def test_unique_inverse_is_numpys(n, top, threads, monkeypatch):
    """With ``threads``, each half of the rows is packed and sorted on its own thread, and the
    halves merged. A scratch array of the rows' length (the pool's docno rows) holds the
    permutation; the sorted keys' memory their groups' numbers: the same answer."""
    started = force_threads(monkeypatch) if threads else []
    monkeypatch.setattr(fusion_kernels, "_ROW_BLOCK", 64)   # the row numbers in blocks, the last one short
    rng = np.random.default_rng(n)
    key = np.concatenate([np.sort(rng.integers(0, top, n // 2)), rng.integers(0, top, n - n // 2)]).astype(np.int64)
    key[: n // 4] = key[n // 4: 2 * (n // 4)]   # repeated keys either way
    unique, inverse = fusion_kernels._unique_inverse(key.copy())   # it sorts its argument in place
    want_unique, want_inverse = np.unique(key, return_inverse=True)
    assert np.array_equal(unique, want_unique) and np.array_equal(inverse, want_inverse)
    packed = n > 0 and int(key.max()) < 1 << (63 - max((n - 1).bit_length(), 1))   # keys and rows in 63 bits
    assert started == (["pack_and_sort"] if threads and packed else [])
    scratch = rng.integers(0, 9, n).astype(np.int32)
    unique, inverse = fusion_kernels._unique_inverse(key.copy(), scratch=scratch)
    assert np.array_equal(unique, want_unique) and np.array_equal(inverse, want_inverse)


def _pool_fields(pool) -> dict:
    out = {}
    for name, value in vars(pool).items():
        if isinstance(value, np.ndarray):
            out[name] = (value.dtype, value.tolist())
        elif isinstance(value, (pa.Array, pa.ChunkedArray)):
            out[name] = value.to_pylist()
        else:
            out[name] = value
    return out


@pytest.mark.parametrize("depth", [None, 3, 60])
@pytest.mark.parametrize("inputs", [2, 3])
def test_a_pool_filled_an_input_per_thread_is_the_same(depth, inputs, monkeypatch):
    """The inputs' rows are written into the pool's columns a half of the inputs per thread: field
    for field, types included, the pool of one thread (lists of any length, a query one input
    lacks, a depth that cuts some lists or none)."""
    rng = np.random.default_rng(inputs)
    runs = {f"r{i}": {f"q{q}": {f"d{d}": float(rng.integers(0, 9)) for d in rng.choice(80, int(rng.integers(1, 50)),
                                                                                      replace=False)}
                      for q in range(12) if (i, q) != (1, 4)} for i in range(inputs)}
    inline = _pool_fields(prepare(runs, depth=depth))
    started = force_threads(monkeypatch)
    assert _pool_fields(prepare(runs, depth=depth)) == inline
    assert "_fill_all" in started


@pytest.mark.parametrize("depth", [None, 3])
@pytest.mark.parametrize("docnos", ["d{}", "doc-{}x"])
def test_a_pool_from_rankings_is_the_pool_from_the_runs(depth, docnos):
    """Rankings that hold every line of their runs give the pool the runs give, field for field:
    tied scores, queries out of order in the file, a query of the qrels that one run lacks."""
    rng = np.random.default_rng(3)
    runs = []
    for name in ("a", "b"):
        rows = [(f"q{q}", docnos.format(d), float(np.round(rng.normal(), 1)))
                for q in rng.permutation(9)[:int(rng.integers(6, 9))] for d in rng.choice(40, 8, replace=False)]
        runs.append(read_run(pd.DataFrame(rows, columns=["qid", "docno", "score"]), name=name))
    qrels = read_qrels(pd.DataFrame([(f"q{q}", docnos.format(0), 1) for q in range(12)],
                                    columns=["qid", "docno", "label"]))
    given = [fusion_kernels.RankedInput(run.name, run.digest, rank(run, qrels)) for run in runs]
    assert [int(g.ranked.offsets[-1]) for g in given] == [run.table.num_rows for run in runs]
    assert _pool_fields(prepare(given, depth=depth)) == _pool_fields(prepare(runs, depth=depth))


def test_a_ranking_whose_queries_are_not_in_id_order_is_refused():
    runs = [read_run(pd.DataFrame([(q, d, 1.0) for q in ("q1", "q2") for d in ("a", "b")],
                                  columns=["qid", "docno", "score"]), name=n) for n in ("x", "y")]
    qrels = read_qrels(pd.DataFrame([("q1", "a", 1), ("q2", "a", 1)], columns=["qid", "docno", "label"]))
    given = [fusion_kernels.RankedInput(r.name, r.digest, rank(r, qrels)) for r in runs]
    backwards = dataclasses.replace(given[0].ranked, qids=given[0].ranked.qids[::-1].copy())
    with pytest.raises(MetricsError, match="not in the order of their ids"):
        prepare([dataclasses.replace(given[0], ranked=backwards), given[1]])

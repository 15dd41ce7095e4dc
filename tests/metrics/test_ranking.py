"""metrics.ranking: canonical order (trec_eval's) and the join with the qrels, checked by hand."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from metrics import io
from metrics.errors import MetricsError
from metrics.ordering import canonical_order, offsets_of, positions
from metrics.ranking import rank
from tests.metrics.threads import force_threads


def test_canonical_order_breaks_ties_by_docno_descending():
    qcode = np.array([1, 0, 0, 0, 1, 0])
    score = np.array([1.0, 2.0, 2.0, 3.0, 1.0, 2.0])
    docno = pa.array(["a", "9", "10", "x", "b", "b"])
    order = canonical_order(qcode, score, docno)
    # query 0: x (3.0), then the 2.0 tie as byte strings descending: "b" > "9" > "10"; query 1: "b" > "a"
    assert docno.take(pa.array(order)).to_pylist() == ["x", "b", "9", "10", "b", "a"]


def test_canonical_order_is_none_when_rows_are_in_order_already():
    qcode = np.array([0, 0, 1, 1])
    score = np.array([3.0, 2.0, 5.0, 1.0])
    assert canonical_order(qcode, score, pa.array(["a", "b", "c", "d"])) is None


def test_canonical_order_by_rank_column():
    qcode = np.array([0, 0, 0])
    score = np.array([1.0, 2.0, 3.0])
    order = canonical_order(qcode, score, pa.array(["a", "b", "c"]), rank=np.array([1, 2, 3]), ties="rank")
    assert order is None                      # ranks 1, 2, 3 already ascending: scores are ignored
    with pytest.raises(MetricsError, match="needs a rank column"):
        canonical_order(qcode, score, pa.array(["a", "b", "c"]), ties="rank")


def _canonical_by_hand(qcode, primary, docno, descending: bool) -> list[int]:
    """trec_eval's order from its definition: query, then the score descending (or the rank
    ascending), then the docno's bytes descending."""
    docs = docno.to_pylist()
    # descending bytes: sort ascending on the complement of each byte, longer strings before their prefixes
    flipped = [tuple(255 - b for b in d.encode()) + (256,) for d in docs]
    return sorted(range(len(docs)), key=lambda i: (qcode[i], -primary[i] if descending else primary[i], flipped[i]))


@pytest.mark.parametrize("layout", ["blocks out of order inside", "blocks shuffled", "rows shuffled", "small blocks"])
@pytest.mark.parametrize("ties", ["score", "rank"])
def test_canonical_order_of_every_layout_is_its_definition(layout, ties):
    """One contiguous block per query with its rows out of order takes the block-by-block sort;
    shuffled rows take np.lexsort; both give the definition's order, ties by docno included."""
    rng = np.random.default_rng(len(layout))
    sizes = rng.integers(1, 5 if layout == "small blocks" else 120, size=25)
    qcode = np.repeat(rng.permutation(25) if layout != "blocks out of order inside" else np.arange(25), sizes)
    if layout == "rows shuffled":
        qcode = rng.permutation(qcode)
    score = np.round(rng.normal(size=len(qcode)), 1)          # rounding makes ties
    rank = rng.integers(1, 40, size=len(qcode))
    docno = pa.array([f"d{rng.integers(0, 60)}" for _ in range(len(qcode))])
    order = canonical_order(qcode, score, docno, rank=rank, ties=ties)
    got = list(range(len(qcode))) if order is None else np.asarray(order).tolist()
    assert got == _canonical_by_hand(qcode, score if ties == "score" else rank, docno, ties == "score")


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("threads", [False, True])
def test_canonical_order_of_distinct_docnos_by_an_unstable_sort_is_the_same(nan, threads, monkeypatch):
    """``distinct`` (a fused run: one row per document) sorts each query's block by an unstable sort;
    with ties in the scores (broken by docno) and NaN scores (never ties: the stable sort then) the
    order is the definition's, as without it. With ``threads`` the first half of the blocks is
    sorted on a second thread."""
    started = force_threads(monkeypatch) if threads else []
    rng = np.random.default_rng(17 + nan)
    sizes = rng.integers(30, 120, size=25)
    qcode = np.repeat(np.arange(25), sizes)
    score = np.round(rng.normal(size=len(qcode)), 1)          # rounding makes ties
    if nan:
        score[rng.choice(len(score), 40, replace=False)] = np.nan
    docno = pa.array([f"d{i}" for i in rng.permutation(len(qcode))])   # distinct, so in every query too
    order = canonical_order(qcode, score, docno, distinct=True)
    assert np.asarray(order).tolist() == np.asarray(canonical_order(qcode, score, docno)).tolist()
    if not nan:
        assert np.asarray(order).tolist() == _canonical_by_hand(qcode, score, docno, True)
    assert started == ["sorted_blocks"] * 2 * threads   # with and without distinct


def test_positions_restart_in_every_segment():
    assert positions(np.array([0, 3, 3, 5])).tolist() == [0, 1, 2, 0, 1]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_positions_from_one_into_a_given_array_are_the_ranks(dtype):
    offsets = np.array([0, 0, 3, 4, 4, 9], dtype=np.int64)
    out = np.full(9, 99, dtype=dtype)
    got = positions(offsets, first=1, out=out)
    assert got is out and got.dtype == dtype and got.tolist() == [1, 2, 3, 1, 1, 2, 3, 4, 5]
    assert positions(offsets).tolist() == [0, 1, 2, 0, 0, 1, 2, 3, 4]


def test_positions_are_the_row_minus_its_segments_first_row():
    """Against the definition, with empty segments anywhere (first, last, several in a row)."""
    rng = np.random.default_rng(3)
    for _ in range(500):
        lengths = rng.integers(0, 5, int(rng.integers(0, 12))) * (rng.random(1)[0] < 0.8)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        want = [i - int(offsets[np.searchsorted(offsets, i, side="right") - 1]) for i in range(int(offsets[-1]))]
        got = positions(offsets)
        assert got.dtype == np.int64 and got.tolist() == want, offsets


def test_rank_joins_grades_and_keeps_judged_queries_the_run_lacks():
    qrels = io.read_qrels(b"q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 x 1\nq3 0 y 3\n")
    run = io.read_run(b"q1 Q0 a 1 1.0 t\nq1 Q0 c 2 3.0 t\nq1 Q0 u 3 2.0 t\nq2 Q0 x 1 1.0 t\nq9 Q0 z 1 1.0 t\n")
    ranked = rank(run, qrels)
    # queries of the qrels, sorted as strings; q9 (not judged) is ignored, q3 (not retrieved) kept empty
    assert ranked.qids.tolist() == ["q1", "q2", "q3"]
    assert ranked.offsets.tolist() == [0, 3, 4, 4]
    # q1 by score: c (3.0, grade 1), u (2.0, unjudged), a (1.0, grade 2)
    assert ranked.docno.to_pylist() == ["c", "u", "a", "x"]
    assert ranked.rel.tolist() == [1, 0, 2, 1]
    assert ranked.judged.tolist() == [True, False, True, True]
    assert ranked.missing.tolist() == [False, False, True]
    # ideal grades per query, every judged grade (unsorted): q1 {2, 0, 1}, q2 {1}, q3 {3}
    bounds = zip(ranked.ideal_offsets[:-1], ranked.ideal_offsets[1:])
    ideal = [sorted(ranked.ideal_rel[a:b].tolist()) for a, b in bounds]
    assert ideal == [[0, 1, 2], [1], [3]]


def test_rank_skip_missing_depth_and_condensed():
    qrels = io.read_qrels(b"q1 0 a 1\nq1 0 b -1\nq2 0 x 1\n")
    run = io.read_run(b"q1 Q0 a 1 3 t\nq1 Q0 u 2 2 t\nq1 Q0 b 3 1 t\n")
    skipped = rank(run, qrels, missing="skip")
    assert skipped.qids.tolist() == ["q1"]
    assert rank(run, qrels, max_depth=2).docno.to_pylist() == ["a", "u"]
    # condensed (trec_eval -J): unjudged u and negatively judged b are removed
    assert rank(run, qrels).condensed().docno.to_pylist() == ["a"]
    with pytest.raises(MetricsError, match="missing='zero'"):
        rank(run, qrels, missing="drop")


def test_offsets_of_counts_start_each_segment_where_the_last_ended():
    # sizes 2, 0, 3 -> segments [0, 2), [2, 2), [2, 5)
    offsets = offsets_of(np.array([2, 0, 3]))
    assert offsets.tolist() == [0, 2, 2, 5] and offsets.dtype == np.int64
    assert positions(offsets).tolist() == [0, 1, 0, 1, 2]
    assert offsets_of(np.array([], dtype=np.int64)).tolist() == [0]


def test_evaluating_never_takes_the_docno_strings():
    # Measures read grades and offsets only: the docno column stays rows of the run's column
    # until someone asks for it, and then reads as the eager take did.
    from metrics.evaluation import evaluate_ranked

    qrels = io.read_qrels(b"q1 0 a 1\nq1 0 b 2\nq2 0 x 1\n")
    run = io.read_run(b"q2 Q0 x 1 1 t\nq1 Q0 a 1 2 t\nq1 Q0 c 2 2 t\nq1 Q0 b 3 3 t\nq9 Q0 z 1 1 t\n")
    ranked = rank(run, qrels, max_depth=3)
    evaluate_ranked(ranked, ["nDCG@10", "AP", "RR", "P@2", "R@10", "nDCG(judged_only=True)@10"])
    ranked.condensed()
    assert "docno" not in vars(ranked)
    # q1: b (3), then the 2-2 tie by docno descending: c, a; q2: x
    assert ranked.docno.to_pylist() == ["b", "c", "a", "x"]
    assert ranked.condensed().docno.to_pylist() == ["b", "a", "x"]
    assert "docno" in vars(ranked)


def test_take_from_a_chunked_column_in_any_row_order():
    from metrics.ordering import take

    column = pa.chunked_array([pa.array(["a", "b"]), pa.array([], pa.string()), pa.array(["c", "d", "e"]),
                               pa.array(["f"] * 40)])
    flat = column.to_pylist()
    for rows in ([4, 0, 2], [0], [44, 3, 1, 2], [], list(range(45))):
        got = take(column, np.array(rows, dtype=np.int64))
        assert isinstance(got, pa.Array) and got.to_pylist() == [flat[r] for r in rows]
    assert take(column, None).to_pylist() == flat
    large = pa.chunked_array([pa.array(["x", "y"], pa.large_string())] * 20)
    assert take(large, np.array([39, 0])).type == pa.string()

"""metrics.analysis.judgments.negatives: hard negatives, recall failures and the training export,
by hand, on the hand-built case of case.py."""
from __future__ import annotations

import json

from metrics.analysis import judgments as J
from tests.metrics.analysis.judgments.case import records


def test_hard_negatives_at_depth_3(runs):
    frame = J.hard_negatives(runs, depth=3)
    assert records(frame, ["qid", "docno", "grade", "judged", "n_systems", "best_rank", "ranks"]) == [
        ("1", "d2", 0, True, 1, 1, "A@1"),
        ("1", "d4", 0, True, 1, 2, "B@2"),
        ("2", "a2", 0, True, 1, 1, "A@1"),
        ("2", "a3", -1, True, 1, 1, "B@1"),     # same best rank and count: docno decides
    ]


def test_hard_negatives_counts_every_system_in_the_top_k(runs):
    frame = J.hard_negatives(runs, depth=5)
    d2 = frame.set_index("docno").loc["d2"]
    assert (d2["n_systems"], d2["best_rank"], d2["ranks"]) == (2, 1, "A@1, B@4")


def test_unjudged_above_every_relevant_document(runs):
    frame = J.hard_negatives(runs, depth=3, include_unjudged=True)
    # A q1: first relevant d1 @2, so u1 @3 does not count; B q1: u1 @1 above d1 @3 counts.
    # A q2: u2 @2 above a1 @3 counts; B q2: u3 @3 below a1 @2 does not.
    assert records(frame, ["qid", "docno", "grade", "judged", "n_systems", "best_rank"]) == [
        ("1", "u1", None, False, 2, 1),          # best rank 1 like d2, but two systems: first
        ("1", "d2", 0, True, 1, 1),
        ("1", "d4", 0, True, 1, 2),
        ("2", "a2", 0, True, 1, 1),
        ("2", "a3", -1, True, 1, 1),
        ("2", "u2", None, False, 1, 2),
    ]


def test_recall_failures(qrels, runs):
    frame = J.recall_failures(qrels, runs, depth=3)
    # d9 is never retrieved; d3 only at A@4
    assert records(frame, ["qid", "docno", "grade", "best_rank"]) == [("1", "d9", 3, None), ("1", "d3", 1, 4)]
    assert records(J.recall_failures(qrels, runs, depth=3, min_grade=2), ["docno"]) == [("d9",)]


def test_training_triples_exactly(qrels, runs):
    data = J.training_set(qrels, runs, depth=3, per_query=10)
    assert records(data.triples(), ["qid", "positive_docno", "negative_docno"]) == [
        ("1", "d9", "d2"), ("1", "d9", "d4"),
        ("1", "d1", "d2"), ("1", "d1", "d4"),
        ("1", "d3", "d2"), ("1", "d3", "d4"),
        ("2", "a1", "a2"), ("2", "a1", "a3"),
    ]
    assert data.to_tsv() == ("qid\tpositive_docno\tnegative_docno\n"
                             "1\td9\td2\n1\td9\td4\n1\td1\td2\n1\td1\td4\n1\td3\td2\n1\td3\td4\n"
                             "2\ta1\ta2\n2\ta1\ta3\n")


def test_training_per_query_cap_and_min_grade(qrels, runs):
    one = J.training_set(qrels, runs, depth=3, per_query=1)
    assert records(one.triples(), ["qid", "positive_docno", "negative_docno"]) == [
        ("1", "d9", "d2"), ("1", "d1", "d2"), ("1", "d3", "d2"), ("2", "a1", "a2")]
    # grade >= 2: q2 has no positive left and is dropped; d3 (grade 1) is neither positive nor negative
    strict = J.training_set(qrels, runs, depth=3, per_query=10, min_grade=2)
    assert records(strict.triples(), ["qid", "positive_docno", "negative_docno"]) == [
        ("1", "d9", "d2"), ("1", "d9", "d4"), ("1", "d1", "d2"), ("1", "d1", "d4")]
    assert strict.queries == ["1"]


def test_training_with_unjudged_negatives(qrels, runs):
    data = J.training_set(qrels, runs, depth=3, per_query=2, include_unjudged=True)
    negatives = records(data.frames()[1], ["qid", "docno"])
    assert negatives == [("1", "u1"), ("1", "d2"), ("2", "a2"), ("2", "a3")]


def test_training_jsonl_carries_grades_and_ranks(qrels, runs):
    data = J.training_set(qrels, runs, depth=3, per_query=10, include_unjudged=True)
    lines = [json.loads(line) for line in data.to_jsonl().splitlines()]
    assert [line["qid"] for line in lines] == ["1", "2"]
    q1 = lines[0]
    assert q1["positives"] == [
        {"docno": "d9", "grade": 3, "best_rank": None, "ranks": {}},
        {"docno": "d1", "grade": 2, "best_rank": 2, "ranks": {"A": 2, "B": 3}},
        {"docno": "d3", "grade": 1, "best_rank": None, "ranks": {}},   # A@4 is below the depth
    ]
    assert q1["negatives"][0] == {"docno": "u1", "grade": None, "judged": False, "best_rank": 1, "n_systems": 2,
                                  "ranks": {"A": 3, "B": 1}}
    assert [n["docno"] for n in lines[1]["negatives"]] == ["a2", "a3", "u2"]
    assert lines[1]["negatives"][1]["grade"] == -1

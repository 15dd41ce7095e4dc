"""metrics.analysis.judgments.pools: to-do lists, the judging template, judgment depth and top-k
overlap, on the hand-built case of case.py."""
from __future__ import annotations

import pandas as pd
import pytest

import metrics
from metrics.analysis import judgments as J
from metrics.ranking import rank
from tests.metrics.analysis.judgments.case import RUNS, make_run, records


def test_unjudged_top_per_system(runs):
    todo = J.unjudged_top(runs, depth=3)
    assert records(todo, ["system", "qid", "rank", "docno"]) == [
        ("A", "2", 2, "u2"), ("A", "1", 3, "u1"), ("B", "1", 1, "u1"), ("B", "2", 3, "u3")]


def test_judging_pool_and_template(runs):
    pool = J.judging_pool(runs, depth=3)
    assert records(pool, ["qid", "docno", "best_rank", "n_systems", "ranks"]) == [
        ("1", "u1", 1, 2, "A@3, B@1"), ("2", "u2", 2, 1, "A@2"), ("2", "u3", 3, 1, "B@3")]
    text = J.qrels_template(pool, note="hand case")
    lines = text.splitlines()
    assert all(line.startswith("#") for line in lines[:5]) and lines[4] == "# hand case"
    assert lines[5:] == ["1 0 u1 -1", "2 0 u2 -1", "2 0 u3 -1"]
    back = metrics.read_qrels(text.encode())  # the comments are skipped by our reader
    assert back.table.num_rows == 3 and set(back.table["rel"].to_pylist()) == {-1}
    assert J.qrels_template(pool, header=False).splitlines() == lines[5:]


def test_unfilled_template_changes_no_score(qrels, runs):
    template = metrics.read_qrels(J.qrels_template(J.judging_pool(runs, 3)).encode())
    import pyarrow as pa
    merged = metrics.read_qrels(pa.concat_tables([qrels.table, template.table]))
    for measure in ("nDCG@5", "AP", "P@3", "nDCG(judged_only=True)@5"):
        before = metrics.means(metrics.evaluate(qrels, [make_run("A", RUNS["A"])], [measure]))
        after = metrics.means(metrics.evaluate(merged, [make_run("A", RUNS["A"])], [measure]))
        assert before.iloc[0, 0] == pytest.approx(after.iloc[0, 0])


def test_first_unjudged_rank(runs3):
    frame = J.first_unjudged(runs3)
    got = {(r.system, r.qid): (None if pd.isna(r.first_unjudged) else int(r.first_unjudged), int(r.retrieved))
           for r in frame.itertuples()}
    assert got == {("A", "1"): (3, 5), ("A", "2"): (2, 3), ("B", "1"): (1, 4), ("B", "2"): (3, 3),
                   ("C", "1"): (None, 2), ("C", "2"): (None, 0)}


def test_topk_jaccard_by_hand(runs3):
    matrix, per_query = J.topk_jaccard(runs3, k=3)
    pq = {(r.system_a, r.system_b, r.qid): r.jaccard for r in per_query.itertuples()}
    assert pq[("A", "B", "1")] == pytest.approx(2 / 4)     # {d1, u1} of {d2, d1, u1, d4}
    assert pq[("A", "B", "2")] == pytest.approx(1 / 5)     # {a1} of {a2, u2, a1, a3, u3}
    assert pq[("A", "C", "1")] == pytest.approx(2 / 3)
    assert pq[("A", "C", "2")] == 0.0                      # C retrieves nothing for q2
    assert pq[("B", "C", "1")] == pytest.approx(1 / 4)
    assert matrix.loc["A", "B"] == pytest.approx((1 / 2 + 1 / 5) / 2)
    assert matrix.loc["B", "A"] == matrix.loc["A", "B"] and matrix.loc["C", "C"] == 1.0


def test_jaccard_is_nan_when_both_lists_are_empty(qrels):
    runs = {n: rank(make_run(n, {"1": ["d1"]}), qrels) for n in ("X", "Y")}
    _, per_query = J.topk_jaccard(runs, 3)
    assert per_query.set_index("qid").loc["2", "jaccard"] != per_query.set_index("qid").loc["2", "jaccard"]


def test_pool_depth_table(runs3):
    table = J.pool_depth(runs3, k=3).set_index("qid")
    assert list(table.columns) == ["A", "B", "C", "jaccard@3"]
    assert table.loc["1", "A"] == 3 and pd.isna(table.loc["1", "C"])
    assert table.loc["1", "jaccard@3"] == pytest.approx((1 / 2 + 2 / 3 + 1 / 4) / 3)

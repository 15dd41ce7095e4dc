"""metrics.judgments: unjudged documents, strategies, pool depth, hard negatives and their export, by hand.

The hand-built case (ranks are 1-based, runs listed best first):

    qrels  q1: d1=2  d2=0  d3=1  d4=0  d9=3        q2: a1=1  a2=0  a3=-1
    A      q1: d2 d1 u1 d3 d4                      q2: a2 u2 a1
    B      q1: u1 d4 d1 d2                         q2: a3 a1 u3
    C      q1: d1 d2                               q2: (nothing)

u1, u2, u3 are unjudged. At depth 3 the judged non-relevant documents in some
top 3 are d2 (A@1), d4 (B@2), a2 (A@1) and a3 (B@1, grade -1).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.analysis import judgments as J
from metrics.errors import MetricsError
from metrics.ranking import rank
from metrics.report.figures import judgments as jfig

ROOT = Path(__file__).resolve().parents[3]
LEGAL = ROOT / "sample_data" / "legal"

QRELS_ROWS = [("1", "d1", 2), ("1", "d2", 0), ("1", "d3", 1), ("1", "d4", 0), ("1", "d9", 3),
              ("2", "a1", 1), ("2", "a2", 0), ("2", "a3", -1)]
RUNS = {
    "A": {"1": ["d2", "d1", "u1", "d3", "d4"], "2": ["a2", "u2", "a1"]},
    "B": {"1": ["u1", "d4", "d1", "d2"], "2": ["a3", "a1", "u3"]},
    "C": {"1": ["d1", "d2"]},
}


def make_qrels(rows=QRELS_ROWS) -> metrics.Qrels:
    return metrics.read_qrels(pd.DataFrame(rows, columns=["qid", "docno", "label"]))


def make_run(name: str, lists: dict[str, list[str]]) -> metrics.Run:
    rows = [(q, d, float(len(docs) - i)) for q, docs in lists.items() for i, d in enumerate(docs)]
    return metrics.read_run(pd.DataFrame(rows, columns=["qid", "docno", "score"]), name=name)


@pytest.fixture
def qrels():
    return make_qrels()


@pytest.fixture
def runs(qrels):
    return {name: rank(make_run(name, lists), qrels) for name, lists in RUNS.items() if name != "C"}


@pytest.fixture
def runs3(qrels):
    return {name: rank(make_run(name, lists), qrels) for name, lists in RUNS.items()}


def records(frame: pd.DataFrame, columns) -> list[tuple]:
    out = []
    for row in frame[list(columns)].itertuples(index=False):
        out.append(tuple(None if (not isinstance(v, (list, dict)) and pd.isna(v)) else
                         (int(v) if isinstance(v, (np.integer,)) else v) for v in row))
    return out


# ---------------------------------------------------------------- strategies

def test_strategy_table_ranks_and_changes():
    table = J.strategy_table({"zero": {"A": 0.5, "B": 0.4, "C": 0.3},
                              "condensed": {"A": 0.5, "B": 0.6, "C": 0.3}})
    got = {(r.strategy, r.system): (r.rank, r.change) for r in table.itertuples()}
    assert got[("zero", "A")] == (1, 0) and got[("zero", "B")] == (2, 0) and got[("zero", "C")] == (3, 0)
    # B overtakes A once unjudged documents are dropped: B up one place, A down one
    assert got[("condensed", "B")] == (1, 1) and got[("condensed", "A")] == (2, -1)
    assert got[("condensed", "C")] == (3, 0)
    assert list(table.columns) == ["system", "strategy", "value", "rank", "change"]


def test_strategy_table_ties_share_the_better_rank():
    table = J.strategy_table({"x": {"A": 0.5, "B": 0.5 + 1e-15, "C": 0.1}})
    assert list(table["rank"]) == [1, 1, 3]


def test_kendall_tau_between_strategies_by_hand():
    table = J.strategy_table({"zero": {"A": 0.5, "B": 0.4, "C": 0.3},
                              "condensed": {"A": 0.5, "B": 0.6, "C": 0.3}})
    agreement = J.rank_agreement(table)
    row = agreement.iloc[0]
    # pairs (A,C) and (B,C) agree, (A,B) swaps: tau = (2 - 1) / 3
    assert (row.strategy_a, row.strategy_b) == ("zero", "condensed")
    assert row.tau == pytest.approx(1 / 3)
    assert (row.systems, row.changed) == (3, 2)


def test_condensed_leaderboard_equals_the_engines_judged_only_measure():
    """The 'condensed' column is nDCG(judged_only=True)@10 of metrics.evaluate, exactly."""
    runs = sorted(str(p) for p in LEGAL.glob("*.run"))
    qrels = str(LEGAL / "qrels.txt")
    table = J.evaluate_strategies(qrels, runs, "nDCG@10")
    condensed = table[table["strategy"] == "condensed"].set_index("system")["value"]
    engine = metrics.means(metrics.evaluate(qrels, runs, ["nDCG(judged_only=True)@10"]))["nDCG(judged_only=True)@10"]
    assert condensed.to_dict() == engine.to_dict()
    zero = table[table["strategy"] == "zero"].set_index("system")["value"]
    assert zero.to_dict() == metrics.means(metrics.evaluate(qrels, runs, ["nDCG@10"]))["nDCG@10"].to_dict()


def test_legal_sample_changes_rank_between_strategies():
    runs = sorted(str(p) for p in LEGAL.glob("*.run"))
    proxy = LEGAL / "proxy.txt"
    table = J.evaluate_strategies(str(LEGAL / "qrels.txt"), runs, "nDCG(dcg=exp-log2)@10",
                                  proxy=str(proxy) if proxy.exists() else None)
    condensed = table[table["strategy"] == "condensed"].set_index("system")
    # dense retrieves the most unjudged documents: dropping them lifts it past bm25_qe
    assert condensed.loc["dense", "change"] == 1 and condensed.loc["bm25_qe", "change"] == -1
    if proxy.exists():
        inferred = table[table["strategy"] == "inferred"].set_index("system")
        assert inferred.loc["dense", "change"] == 1


def test_inferred_strategy_uses_proxy_labels(qrels):
    run = make_run("A", RUNS["A"])
    proxy = metrics.read_qrels(pd.DataFrame([("1", "u1", 3), ("1", "d1", 0)], columns=["qid", "docno", "label"]))
    table = J.evaluate_strategies(qrels, [run], "P@3", proxy=proxy)
    value = table.set_index("strategy")["value"]
    # q1 top 3 = d2 d1 u1: 1 relevant; the proxy adds u1 (its label for judged d1 is ignored)
    # q2 top 3 = a2 u2 a1: 1 relevant either way
    assert value["zero"] == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert value["inferred"] == pytest.approx((2 / 3 + 1 / 3) / 2)


def test_judged_warnings_best_gap_and_median_gap():
    by_best = J.judged_warnings({"A": 0.95, "B": 0.94, "C": 0.80})
    assert list(by_best["system"]) == ["C"]
    assert by_best.iloc[0]["reason"] == "more than 0.1 below the best"
    assert by_best.iloc[0]["below_best"] == pytest.approx(0.15)
    by_median = J.judged_warnings({"A": 0.95, "B": 0.95, "C": 0.95, "D": 0.88})
    assert list(by_median["system"]) == ["D"]
    assert by_median.iloc[0]["reason"] == "more than 0.05 below the median"
    assert J.judged_warnings({"A": 0.90, "B": 0.86}).empty          # gaps 0.04 and 0.02
    assert J.judged_warnings({"A": 0.10}).empty                      # nothing to compare with


def test_legal_sample_flags_dense():
    runs = sorted(str(p) for p in LEGAL.glob("*.run"))
    judged = metrics.means(metrics.evaluate(str(LEGAL / "qrels.txt"), runs, ["Judged@10"]))["Judged@10"]
    assert list(J.judged_warnings(judged)["system"]) == ["dense"]


# ---------------------------------------------------------------- unjudged documents

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


# ---------------------------------------------------------------- hard negatives

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


def test_bad_parameters_are_metrics_errors(qrels, runs):
    with pytest.raises(MetricsError, match="depth must be a whole number >= 1"):
        J.hard_negatives(runs, depth=0)
    with pytest.raises(MetricsError, match="min_grade"):
        J.training_set(qrels, runs, min_grade=0)
    with pytest.raises(MetricsError, match="per_query"):
        J.training_set(qrels, runs, per_query=0)
    with pytest.raises(MetricsError, match="not a Ranked"):
        J.hard_negatives({"A": "run.txt"})
    with pytest.raises(MetricsError, match="no systems"):
        J.first_unjudged({})


def test_proxy_agreement(qrels):
    proxy = metrics.read_qrels(pd.DataFrame(
        [("1", "u1", 2), ("1", "d1", 2), ("1", "d2", 1), ("1", "d4", 3), ("7", "x", 1)],
        columns=["qid", "docno", "label"]))
    got = J.proxy_agreement(qrels, proxy)
    # overlap d1 (same), d2 (one off), d4 (three off); u1 fills a gap; query 7 is not in the qrels
    assert got == {"labels": 5, "fills": 1, "overlap": 3, "exact": pytest.approx(1 / 3),
                   "within_one": pytest.approx(2 / 3)}


# ---------------------------------------------------------------- sample proxy

def test_proxy_sample_is_reproducible():
    path = LEGAL / "proxy.txt"
    if not path.exists():
        pytest.skip("sample_data/legal/proxy.txt is absent")
    import sys
    sys.path.insert(0, str(ROOT / "sample_data"))
    try:
        import make_proxy
    finally:
        sys.path.remove(str(ROOT / "sample_data"))
    assert "\n".join(make_proxy.build_proxy()) + "\n" == path.read_text(encoding="utf-8")
    proxy = metrics.read_qrels(path)
    assert set(proxy.table["rel"].to_pylist()) <= {0, 1, 2, 3}


# ---------------------------------------------------------------- figures

def test_figures_carry_the_numbers(runs3):
    curves = {name: metrics.curve_ranked(r, "Judged", max_k=3) for name, r in runs3.items()}
    fig = jfig.judged_curve(curves)
    assert [t.name for t in fig.data] == ["A", "B", "C"]
    assert list(fig.layout.yaxis.range) == [0, 1.02]

    table = J.strategy_table({"zero": {"A": 0.5, "B": 0.4}, "condensed": {"A": 0.3, "B": 0.6}})
    fig = jfig.strategy_ranks(table, labels=J.STRATEGIES, measure="nDCG@10")
    a = next(t for t in fig.data if t.name == "A")
    assert list(a.y) == [1, 2] and list(a.x) == ["unjudged = 0", "condensed (judged only)"]

    box = jfig.first_unjudged_box(J.first_unjudged(runs3))
    assert [list(t.y) for t in box.data] == [[3, 2], [1, 3], []]

    matrix, _ = J.topk_jaccard(runs3, 3)
    heat = jfig.overlap_heatmap(matrix, k=3)
    assert np.allclose(np.asarray(heat.data[0].z, dtype=float), matrix.to_numpy())

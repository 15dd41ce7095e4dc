"""Query-text analysis: lengths, trend lines (against scipy), buckets, disagreement, search, overlap."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

import metrics
from metrics import MetricsError
from metrics.analysis import querytext as qt
from metrics.io.topics import read_topics
from metrics.ranking import rank

TOPICS = read_topics(b"qid\ttitle\tdescription\n"
                     b"q1\tcovid-19 what's - vaccine\tVaccines against the virus\n"
                     b"q2\tcrimes\tOrganized crime abroad\n"
                     b"q3\tart crime in museums of europe\tStolen art\n"
                     b"q4\ttax law\t\n")


def tidy(values: dict, measure: str = "AP") -> pd.DataFrame:
    """{system: {qid: value}} -> the tidy frame metrics.evaluate returns."""
    rows = [(s, q, measure, v) for s, per in values.items() for q, v in per.items()]
    return pd.DataFrame(rows, columns=["system", "qid", "measure", "value"]).astype(
        {"system": "string", "qid": "string", "measure": "string"})


def test_query_lengths_count_terms():
    lengths = qt.query_lengths(TOPICS)
    # "covid-19", "what's", "vaccine" (the lone "-" is no term); "crimes"; six words; two
    assert lengths["length"].tolist() == [3, 1, 6, 2]
    assert qt.query_lengths(TOPICS, "description")["length"].tolist() == [4, 3, 2, 0]


def test_trend_line_equals_scipy_linregress():
    rng = np.random.default_rng(1)
    n = 40
    topics = pd.DataFrame({"qid": [f"q{i}" for i in range(n)],
                           "title": [" ".join(["w"] * int(rng.integers(1, 9))) for _ in range(n)]})
    values = {s: {f"q{i}": float(rng.random()) for i in range(n)} for s in ("a", "b")}
    points = qt.length_vs_score(tidy(values), topics, "AP")
    trend = qt.length_trend(points).set_index("system")
    for s in ("a", "b"):
        sub = points[points["system"] == s]
        ref = scipy_stats.linregress(sub["length"].to_numpy(float), sub["value"].to_numpy(float))
        assert trend.loc[s, "slope"] == pytest.approx(ref.slope, rel=1e-12)
        assert trend.loc[s, "intercept"] == pytest.approx(ref.intercept, rel=1e-12)
        assert trend.loc[s, "r"] == pytest.approx(ref.rvalue, rel=1e-12)
        assert trend.loc[s, "n"] == n


def test_trend_of_equal_lengths_is_undefined():
    topics = pd.DataFrame({"qid": ["q1", "q2"], "title": ["a b", "c d"]})
    trend = qt.length_trend(qt.length_vs_score(tidy({"s": {"q1": 0.1, "q2": 0.5}}), topics, "AP"))
    assert np.isnan(trend.loc[0, "slope"]) and np.isnan(trend.loc[0, "r"]) and np.isnan(trend.loc[0, "intercept"])


def test_queries_without_topics_are_left_out_of_the_points():
    points = qt.length_vs_score(tidy({"s": {"q1": 0.1, "q9": 0.5}}), TOPICS, "AP")
    assert points["qid"].tolist() == ["q1"]


def test_buckets_by_hand():
    topics = pd.DataFrame({"qid": ["a", "b", "c", "d", "e", "f"],
                           "title": ["w", "w w", "w " * 5, "w " * 6, "w " * 12, ""]})
    frame = tidy({"s": {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.5, "e": 0.9, "f": 0.0}})
    # lengths 0, 1, 2, 5, 6, 12; quintile positions floor(q * 5) = 0..4 of the sorted lengths: 0, 1, 2, 5, 6
    out = qt.by_length_bucket(frame, topics, "AP")
    assert out["bucket"].astype(str).tolist() == ["0", "1", "2-4", "5", "6+"]
    assert out["n_queries"].tolist() == [1, 1, 1, 1, 2]
    assert out["mean"].tolist() == pytest.approx([0.0, 0.1, 0.2, 0.3, (0.5 + 0.9) / 2])
    fixed = qt.by_length_bucket(frame, topics, "AP", edges=(1, 2, 3, 4, 5, 7, 10))
    assert fixed["bucket"].astype(str).tolist() == ["0", "1", "2", "5-6", "10+"]
    assert fixed["n_queries"].tolist() == [1, 1, 1, 2, 1]
    custom = qt.by_length_bucket(frame, topics, "AP", edges=(0, 3))
    assert custom["bucket"].astype(str).tolist() == ["0-2", "3+"]
    assert custom["mean"].tolist() == pytest.approx([(0.0 + 0.1 + 0.2) / 3, (0.3 + 0.5 + 0.9) / 3])
    with pytest.raises(MetricsError, match="bucket edges must be ascending"):
        qt.by_length_bucket(frame, topics, "AP", edges=(3, 2))


def test_length_edges_follow_the_distribution():
    """Long topics (clinical-trial patients of about 150 words) spread over the buckets instead of
    landing in one "10+"; short ones keep a bucket per length."""
    long = [120 + 2 * i for i in range(25)]                   # 120, 122, ..., 168
    # quantiles at 0, .2, .4, .6, .8: sorted positions floor(q * 24) = 0, 4, 9, 14, 19
    assert qt.length_edges(long) == (120, 128, 138, 148, 158)
    assert qt.length_edges([1, 1, 2, 2, 3]) == (1, 2)        # positions 0, 0, 1, 2, 3 -> 1, 1, 1, 2, 2
    assert qt.length_edges([1, 1, 2, 2, 3], buckets=2) == (1, 2)
    assert qt.length_edges([]) == (0,)
    topics = pd.DataFrame({"qid": [f"q{i}" for i in range(25)], "title": [" ".join(["w"] * n) for n in long]})
    frame = tidy({"s": {f"q{i}": i / 25 for i in range(25)}})
    out = qt.by_length_bucket(frame, topics, "AP")
    assert out["bucket"].astype(str).tolist() == ["120-127", "128-137", "138-147", "148-157", "158+"]
    assert out["n_queries"].tolist() == [4, 5, 5, 5, 6]
    assert out["mean"].iloc[0] == pytest.approx((0 + 1 + 2 + 3) / 4 / 25)


def test_disagreement_by_hand():
    frame = tidy({"a": {"q1": 0.9, "q2": 0.5, "q3": 0.2}, "b": {"q1": 0.1, "q2": 0.5, "q3": 0.6},
                  "c": {"q1": 0.5, "q2": 0.5, "q3": 1.0}})
    out = qt.disagreement(frame, TOPICS, "AP", top=None)
    assert out["qid"].tolist() == ["q1", "q3", "q2"]
    assert out["spread"].tolist() == pytest.approx([0.9 - 0.1, 1.0 - 0.2, 0.0])
    assert out.loc[0, "std"] == pytest.approx(np.sqrt(((0.9 - 0.5) ** 2 + (0.1 - 0.5) ** 2 + 0) / 3))
    assert (out.loc[0, "best"], out.loc[0, "worst"]) == ("a", "b")
    assert (out.loc[2, "best"], out.loc[2, "worst"]) == ("a", "a")       # all equal: the first system
    assert out.loc[0, "text"] == "covid-19 what's - vaccine"
    assert list(out.columns[-3:]) == ["a", "b", "c"]
    assert len(qt.disagreement(frame, None, "AP", top=1)) == 1
    with pytest.raises(MetricsError, match="two or more systems, got 1"):
        qt.disagreement(frame, TOPICS, "AP", systems=["a"])
    with pytest.raises(MetricsError, match="no system 'z'"):
        qt.disagreement(frame, TOPICS, "AP", systems=["a", "z"])
    with pytest.raises(MetricsError, match="the results have no measure 'nDCG@10'"):
        qt.disagreement(frame, TOPICS, "nDCG@10")


def test_search_whole_words_in_any_field():
    assert qt.search_topics(TOPICS, "crime")["qid"].tolist() == ["q2", "q3"]     # not "crimes" in q2's title
    hits = qt.search_topics(TOPICS, "CRIME art")
    assert hits["qid"].tolist() == ["q3"] and hits.loc[0, "matched"] == "title, description"
    assert qt.search_topics(TOPICS, "art tax", match="any")["qid"].tolist() == ["q3", "q4"]
    assert qt.search_topics(TOPICS, "crime", fields=["title"])["qid"].tolist() == ["q3"]
    assert qt.search_topics(TOPICS, "covid-19")["qid"].tolist() == ["q1"]
    assert qt.search_topics(TOPICS, "   ").empty
    with pytest.raises(MetricsError, match="no field 'narrative'"):
        qt.search_topics(TOPICS, "x", fields=["narrative"])


QRELS = metrics.read_qrels({"q1": {"d1": 1, "d2": 0, "d5": 2}, "q2": {"d9": 1}})
RUN_A = metrics.read_run({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}, name="A")
RUN_B = metrics.read_run({"q1": {"d3": 3.0, "d4": 2.0, "d1": 1.0}, "q2": {"d9": 1.0}}, name="B")


def test_unique_documents_by_hand():
    ranked = [rank(RUN_A, QRELS), rank(RUN_B, QRELS)]
    # top 2: A {d1, d2}, B {d3, d4} in q1, B {d9} in q2: nothing shared
    assert len(qt.unique_documents(ranked, 2)) == 5
    out = qt.unique_documents(ranked, 3)
    # top 3: A {d1, d2, d3}, B {d3, d4, d1}: d1 and d3 shared; d2 only A, d4 and q2's d9 only B
    assert out[["system", "qid", "docno", "rank"]].values.tolist() == [
        ["A", "q1", "d2", 2], ["B", "q1", "d4", 2], ["B", "q2", "d9", 1]]
    assert out["judged"].tolist() == [True, False, True]
    assert [None if pd.isna(v) else int(v) for v in out["rel"]] == [0, None, 1]
    assert out["relevant"].tolist() == [False, False, True]


def test_overlap_counts_by_hand():
    out = qt.overlap({"A": rank(RUN_A, QRELS), "B": rank(RUN_B, QRELS)}, 3)
    assert out.values.tolist() == [
        ["A", "q1", 3, 1, 0, 2], ["A", "q2", 0, 0, 0, 0],
        ["B", "q1", 3, 1, 0, 2], ["B", "q2", 1, 1, 1, 0]]


def test_overlap_equals_set_arithmetic_on_random_runs():
    rng = np.random.default_rng(4)
    qrels = metrics.read_qrels({f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(10)} for i in range(8)})
    runs = [metrics.read_run({f"q{i}": {f"d{j}": float(s) for j, s in
                                        zip(rng.choice(30, 12, replace=False), rng.permutation(12))}
                              for i in range(8)}, name=f"s{n}") for n in range(3)]
    k = 5
    # scores are a permutation per query: no ties, the top k is the k highest
    tops = [{q: set(g.nlargest(k, "score")["docno"]) for q, g in r.df.groupby("qid")} for r in runs]
    out = qt.overlap([rank(r, qrels) for r in runs], k).set_index(["system", "qid"])
    for n, top in enumerate(tops):
        for q, docs in top.items():
            others = set().union(*(t[q] for m, t in enumerate(tops) if m != n))
            assert out.loc[(f"s{n}", q), "unique"] == len(docs - others)
            assert out.loc[(f"s{n}", q), "shared_by_all"] == len(docs.intersection(*(t[q] for t in tops)))


def test_overlap_errors():
    other = metrics.read_qrels({"x": {"d1": 1}})
    with pytest.raises(MetricsError, match="different qrels"):
        qt.overlap([rank(RUN_A, QRELS), rank(RUN_B, other)])
    with pytest.raises(MetricsError, match="k must be a whole number >= 1"):
        qt.overlap([rank(RUN_A, QRELS)], 0)
    with pytest.raises(MetricsError, match="overlap needs rankings"):
        qt.unique_documents([RUN_A, RUN_B])

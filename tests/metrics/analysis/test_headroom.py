"""metrics.analysis.headroom: detection of a re-ranking, the oracle ceiling, the share of the headroom
reached and the depth sweep, by hand arithmetic, against pytrec_eval, and on the legal sample."""
from __future__ import annotations

import dataclasses
from math import log2
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import metrics
from metrics.analysis import codes as codes_module
from metrics.analysis import headroom as hr
from metrics.analysis import matching
from metrics.errors import MetricsError
from metrics.ranking import rank
from tests.metrics.analysis.lists import qrels_of, run_of
from tests.metrics.threads import force_threads

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"




def _lists(table) -> dict:
    """{qid: [docno, ...]} of a run table in its canonical order."""
    run = metrics.read_run(table, name="x")
    qids = sorted(set(table.column("qid").to_pylist()))
    ranked = rank(run, metrics.read_qrels(pd.DataFrame({"qid": qids, "docno": "-", "label": 1})))
    docnos = ranked.docno.to_pylist()
    return {str(q): docnos[ranked.offsets[i]:ranked.offsets[i + 1]] for i, q in enumerate(ranked.qids)}


@pytest.fixture(scope="module")
def hand():
    """q1: grades a=3 b=0 c=2 d=1 e=3 (e never retrieved); the first stage ranks b d a x c (x unjudged),
    the re-ranker reorders its top 4 as d a b x. q2: already in the best order (no headroom)."""
    qrels = qrels_of([("q1", "a", 3), ("q1", "b", 0), ("q1", "c", 2), ("q1", "d", 1), ("q1", "e", 3),
                    ("q2", "m", 2), ("q2", "n", 1)])
    first = run_of({"q1": ["b", "d", "a", "x", "c"], "q2": ["m", "n", "o"]}, "first")
    reranked = run_of({"q1": ["d", "a", "b", "x"], "q2": ["m", "n", "o"]}, "reranked")
    return qrels, first, reranked


def test_the_oracle_sorts_the_top_k_by_gain_and_leaves_the_rest(hand):
    qrels, first, _ = hand
    frame = hr.oracle_run(rank(first, qrels), 4, "nDCG@3")
    # top 4 = b(0) d(1) a(3) x(unjudged): by gain a, d, then b and x (gain 0) in first-stage order; c stays 5th
    assert _lists(frame) == {"q1": ["a", "d", "b", "x", "c"], "q2": ["m", "n", "o"]}


def test_oracle_first_and_share_by_hand(hand):
    qrels, first, reranked = hand
    result = hr.headroom(qrels, first, reranked, measure="nDCG@3", sweep=[2])
    idcg = 3 + 3 / log2(3) + 2 / log2(4)            # e(3) a(3) c(2): IDCG over every judged document
    dcg_first = 0 + 1 / log2(3) + 3 / log2(4)       # b d a
    dcg_oracle = 3 + 1 / log2(3) + 0                # a d b: c (grade 2) is below the top 4, out of reach
    dcg_reranked = 1 + 3 / log2(3) + 0              # d a b
    q1 = result.per_query.set_index("qid").loc["q1"]
    assert q1["first"] == pytest.approx(dcg_first / idcg)
    assert q1["oracle"] == pytest.approx(dcg_oracle / idcg) and q1["oracle"] < 1
    assert q1["reranked"] == pytest.approx(dcg_reranked / idcg)
    assert q1["share"] == pytest.approx((dcg_reranked - dcg_first) / (dcg_oracle - dcg_first))
    assert q1["relative"] == pytest.approx((dcg_reranked - dcg_first) / dcg_first)
    assert q1["recall"] == pytest.approx(2 / 4)      # R@4: a, d of a, c, d, e
    q2 = result.per_query.set_index("qid").loc["q2"]
    assert q2["headroom"] == 0 and np.isnan(q2["share"])
    s = result.summary
    assert result.depth == result.detected == 4 and s["outside"] == 0 and s["defined"] == 1
    mean = lambda column: result.per_query[column].mean()  # noqa: E731
    assert s["share"] == pytest.approx((mean("reranked") - mean("first")) / (mean("oracle") - mean("first")))
    assert s["query_share"] == pytest.approx(q1["share"])
    # every resample holds q1 (q2 adds no headroom and no gain) or only q2 (undefined, left out)
    assert s["share_ci"] == (pytest.approx(s["share"]), pytest.approx(s["share"]))


def test_exp_gain_orders_the_oracle_and_scores_it():
    qrels = qrels_of([("q", "a", 1), ("q", "b", 2)])
    first = run_of({"q": ["a", "b"]}, "first")
    result = hr.headroom(qrels, first, run_of({"q": ["a", "b"]}, "same"), measure="nDCG(dcg='exp-log2')@1", sweep=[1])
    assert result.per_query["oracle"].iloc[0] == 1.0                       # b first: (2^2-1) / (2^2-1)
    assert result.per_query["first"].iloc[0] == pytest.approx(1 / 3)       # (2^1-1) / (2^2-1)
    assert result.summary["share"] == 0.0 and result.summary["relative"] == 0.0


def test_detection():
    qrels = qrels_of([("q1", "a", 1), ("q2", "p", 1)])
    first = rank(run_of({"q1": list("abcde"), "q2": list("pqrs")}, "f"), qrels)
    # q1's re-ranked list reaches e (first-stage rank 5) at its 4th place: its top 3 come from the top 3 only
    assert hr.detect_depth(first, rank(run_of({"q1": list("cabe"), "q2": list("pq")}, "r"), qrels)) == 3
    # a re-ranked list shorter than k: q2 keeps s (first-stage rank 4), valid from k = 4 on
    shorter = rank(run_of({"q1": list("dabc"), "q2": ["s"]}, "r"), qrels)
    assert hr.detect_depth(first, shorter) == 4
    assert hr.outside_count(first, shorter, 4) == 0 and hr.outside_count(first, shorter, 2) == 2
    unrelated = rank(run_of({"q1": ["z", "a"], "q2": ["p"]}, "r"), qrels)
    assert hr.detect_depth(first, unrelated) is None
    # reach: the deepest first-stage position so far (a document the first stage lacks: 5 + 1);
    # the caller's rank_in is left as it was
    where = hr.rank_in(unrelated, first)
    assert where.tolist() == [-1, 0, 0]
    assert hr.reach(first, unrelated, where).tolist() == [6, 6, 0] and where.tolist() == [-1, 0, 0]
    kept = hr.reach(first, unrelated)
    assert kept.tolist() == [6, 6, 0] and not kept.flags.writeable
    assert hr.reach(first, unrelated) is kept   # kept for the pair: the page's detection, then its headroom
    again = rank(run_of({"q1": ["a", "z"], "q2": ["p"]}, "r"), qrels)   # another ranking: computed anew
    assert hr.reach(first, again).tolist() == [0, 6, 0]
    with pytest.raises(MetricsError, match="no re-ranking"):
        hr.headroom(qrels, run_of({"q1": ["a"]}, "f"), run_of({"q1": ["z"]}, "r"))


def test_declared_depth_counts_documents_from_outside():
    qrels = qrels_of([("q", "a", 1), ("q", "z", 2)])
    result = hr.headroom(qrels, run_of({"q": ["b", "a", "c"]}, "f"), run_of({"q": ["z", "a"]}, "r"), depth=2,
                         measure="nDCG@2", sweep=[1])
    assert result.detected is None and result.depth == 2 and result.summary["outside"] == 1
    assert result.per_query["share"].iloc[0] > 1   # z was never in the first stage's reach


def test_depth_sweep_of_a_known_permutation():
    """The re-ranker reverses the first stage's top 6 of d0..d9; re-ranking only the top d reverses d0..d(d-1)."""
    docs = [f"d{i}" for i in range(10)]
    grades = {"d1": 1, "d4": 3, "d5": 2, "d8": 2}
    qrels = qrels_of([("q", d, g) for d, g in grades.items()])
    first, reranked = run_of({"q": docs}, "first"), run_of({"q": docs[5::-1] + docs[6:]}, "reranked")
    fr, rr = rank(first, qrels), rank(reranked, qrels)
    assert hr.detect_depth(fr, rr) == 10
    for d in (1, 3, 6, 10):
        expected = docs[d - 1::-1] if d <= 6 else docs[5::-1] + docs[6:d]
        assert _lists(hr.sweep_run(fr, rr, d))["q"] == expected + docs[len(expected):]
    result = hr.headroom(qrels, first, reranked, depth=6, measure="nDCG@5", sweep=[3, 6], test="t")
    idcg = 3 + 2 / log2(3) + 2 / log2(4) + 1 / log2(5)
    at3 = (1 / log2(3) + 3 / log2(6)) / idcg           # d2 d1 d0 d3 d4 -> d1 rank 2, d4 rank 5
    at6 = (2 + 3 / log2(3) + 1 / log2(6)) / idcg       # d5 d4 d3 d2 d1 -> d5 1, d4 2, d1 5
    assert result.sweep["depth"].tolist() == [3, 6]        # 6 = the declared depth, once
    assert result.sweep["mean"].tolist() == pytest.approx([at3, at6])
    assert result.sweep["mean"].iloc[-1] == result.summary["reranked"]


def test_sweep_depths():
    assert hr.sweep_depths(100) == [10, 20, 50, 100]
    assert hr.sweep_depths(30, [20, 5, 20]) == [5, 20, 30] == hr.sweep_depths(30, [5, 20, 30])
    assert hr.sweep_depths(5) == [5]
    with pytest.raises(MetricsError, match="beyond the re-ranking depth 30"):
        hr.sweep_depths(30, [50])


@pytest.fixture(scope="module")
def legal():
    return hr.headroom(LEGAL / "qrels.txt", LEGAL / "bm25.run", LEGAL / "bm25_ce.run", measure="nDCG@10")


def test_legal_bm25_ce_reranks_bm25s_top_100(legal):
    s = legal.summary
    assert (legal.first, legal.reranked, legal.depth, legal.detected, s["outside"]) == ("bm25", "bm25_ce", 100,
                                                                                           100, 0)
    frame = metrics.evaluate(LEGAL / "qrels.txt", [LEGAL / "bm25.run", LEGAL / "bm25_ce.run"], ["nDCG@10", "R@100"])
    means = metrics.means(frame)
    assert s["first"] == means.loc["bm25", "nDCG@10"] and s["reranked"] == means.loc["bm25_ce", "nDCG@10"]
    assert s["recall"] == means.loc["bm25", "R@100"]
    assert s["relative"] == pytest.approx(0.5847 / 0.5319 - 1, abs=2e-3)
    assert "verdict" not in s and "band" not in s   # no benchmark band without a published source
    per_query = legal.per_query
    assert (per_query["oracle"] >= per_query["first"]).all() and (per_query["oracle"] < 1).any()
    assert 0 < s["share"] < 1 and s["share_ci"][0] < s["share"] < s["share_ci"][1]
    assert legal.sweep["depth"].tolist() == [10, 20, 50, 100]
    assert legal.sweep["mean"].iloc[-1] == s["reranked"]     # re-ranking all 100 is the re-ranked run


def test_legal_interval_is_seeded(legal):
    again = hr.headroom(LEGAL / "qrels.txt", LEGAL / "bm25.run", LEGAL / "bm25_ce.run", sweep=[10])
    assert again.summary["share_ci"] == legal.summary["share_ci"]
    other = hr.headroom(LEGAL / "qrels.txt", LEGAL / "bm25.run", LEGAL / "bm25_ce.run", sweep=[10], seed=1)
    assert other.summary["share_ci"] != legal.summary["share_ci"] and other.summary["seed"] == 1


def test_legal_summary_is_the_same_with_the_shares_interval_on_a_second_thread(legal, monkeypatch):
    """The per-query shares' interval draws its own resamples beside the means' (on a second thread
    for a large bootstrap, forced here): every value of the summary is the same, and that interval
    is the percentile bootstrap of the defined shares."""
    started = force_threads(monkeypatch)
    again = hr.headroom(LEGAL / "qrels.txt", LEGAL / "bm25.run", LEGAL / "bm25_ce.run", measure="nDCG@10")
    assert "bootstrap_ci" in started
    assert again.summary == legal.summary   # no NaN in the legal summary: == compares every value
    share = legal.per_query["share"].to_numpy()
    defined = share[np.isfinite(share)]
    assert legal.summary["query_share_ci"] == metrics.stats.bootstrap_ci(defined)


def test_legal_oracle_matches_pytrec_eval(legal):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = metrics.read_qrels(LEGAL / "qrels.txt")
    first = rank(metrics.read_run(LEGAL / "bm25.run"), qrels)
    oracle = hr.oracle_run(first, 100, "nDCG@10")
    run = {}
    for q, d, s in zip(*(oracle.column(c).to_pylist() for c in ("qid", "docno", "score"))):
        run.setdefault(str(q), {})[str(d)] = float(s)
    judged = {}
    for q, d, r in zip(*(qrels.table.column(c).to_pylist() for c in ("qid", "docno", "rel"))):
        judged.setdefault(str(q), {})[str(d)] = int(r)
    values = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10"}).evaluate(run)
    expected = pd.Series({q: v["ndcg_cut_10"] for q, v in values.items()})
    ours = legal.per_query.set_index("qid")["oracle"]
    assert ours.to_numpy() == pytest.approx(expected.loc[ours.index].to_numpy(), abs=1e-12)


def test_rank_in_both_ways_from_one_set_of_docno_codes():
    qrels = qrels_of([("q1", "a", 1), ("q2", "p", 1)])
    first = rank(run_of({"q1": list("abcde"), "q2": list("pqrs")}, "f"), qrels)
    other = rank(run_of({"q1": list("ecz"), "q2": list("sqp")}, "r"), qrels)
    code_f, code_o = hr.docno_codes(first, other)
    # equal codes exactly where the docno strings are equal, across both runs
    strings = first.docno.to_pylist() + other.docno.to_pylist()
    codes = np.concatenate([code_f, code_o]).tolist()
    assert all((codes[i] == codes[j]) == (strings[i] == strings[j])
               for i in range(len(codes)) for j in range(len(codes)))
    # q1: a b c d e against e c z; q2: p q r s against s q p (0-based positions, -1 where absent)
    assert hr.rank_in(first, other).tolist() == [-1, -1, 1, -1, 0, 2, 1, -1, 0]
    assert hr.rank_in(other, first).tolist() == [4, 2, -1, 3, 1, 0]
    assert hr.rank_in(other, first, (code_o, code_f)).tolist() == hr.rank_in(other, first).tolist()
    # a condensed list (rows of the run's column) keeps its codes row by row
    condensed = first.condensed()
    assert hr.rank_in(condensed, other).tolist() == [-1, 2]


def test_docno_codes_of_a_pair_are_kept_while_its_columns_live():
    qrels = qrels_of([("q1", "a", 1)])
    first_run, other_run = run_of({"q1": list("abc")}, "f"), run_of({"q1": list("cbz")}, "r")
    first, other = rank(first_run, qrels), rank(other_run, qrels)
    again_first, again_other = rank(first_run, qrels), rank(other_run, qrels)   # new rankings, same columns
    assert matching._identity(first.docnos().source) == matching._identity(again_first.docnos().source)
    kept = matching._source_codes(first.docnos().source, other.docnos().source)
    assert all(x is y for x, y in zip(kept, matching._source_codes(again_first.docnos().source,
                                                             again_other.docnos().source)))
    assert hr.rank_in(again_first, again_other).tolist() == [-1, 1, 0]
    # the reverse pair is served by the same codes, swapped (no second hash pass)
    reverse = matching._source_codes(again_other.docnos().source, again_first.docnos().source)
    assert reverse[0] is kept[1] and reverse[1] is kept[0]
    assert hr.rank_in(again_other, again_first).tolist() == [2, 1, -1]


def _where_by_hand(a, b) -> list[int]:
    """rank_in's answer from the docno strings: the 0-based position in b's list of the same query."""
    out = []
    for i in range(a.n_queries):
        listed = b.docno.to_pylist()[b.offsets[i]:b.offsets[i + 1]]
        out += [listed.index(d) if d in listed else -1 for d in a.docno.to_pylist()[a.offsets[i]:a.offsets[i + 1]]]
    return out


_PAIRED_MOVED = matching._paired_moved

NUMBERED = {
    "numbers": (["7", "70", "0", "123456", "8841821"], None),
    "one prefix": (["D7", "D70", "D0", "D123456", "D8841821"], None),
    # strings a cast reads as the same number must not share a code
    "leading zeros": (["7", "07", "007", "0", "00"], "dictionary"),
    "hex": (["7", "0x7", "16", "0x10", "1048575"], "dictionary"),
    "signs": (["7", "-7", "0", "-0", "12"], "dictionary"),
    "two prefixes": (["D7", "E7", "D70", "D0", "D12"], "dictionary"),
    "wider than a key": (["999999999999999999", "7", "123456789012345678", "0", "42"], None),
    "words": (["alpha", "beta", "gamma", "delta", "7"], "dictionary"),
}


@pytest.mark.parametrize("case", list(NUMBERED))
def test_docno_codes_read_as_numbers_only_where_the_numbers_are_the_strings(case):
    docs, way = NUMBERED[case]
    rng = np.random.default_rng(len(case))
    qids = ["q1", "q2", "q3"]
    qrels = qrels_of([(q, docs[0], 1) for q in qids])
    lists_a = {q: list(rng.permutation(docs)[:4]) for q in qids}
    lists_b = {q: list(rng.permutation(docs)[:3]) for q in qids}
    a, b = rank(run_of(lists_a, "a"), qrels), rank(run_of(lists_b, "b"), qrels)
    chunks = [*codes_module.chunks_of(a.docnos().source), *codes_module.chunks_of(b.docnos().source)]
    numbered = codes_module.numbered(chunks)
    assert (numbered is None) == (way == "dictionary")
    code_a, code_b = hr.docno_codes(a, b)
    strings = a.docno.to_pylist() + b.docno.to_pylist()
    codes = np.concatenate([code_a, code_b]).tolist()
    assert all((codes[i] == codes[j]) == (strings[i] == strings[j])
               for i in range(len(codes)) for j in range(len(codes)))
    assert hr.rank_in(a, b).tolist() == _where_by_hand(a, b)
    assert hr.rank_in(b, a).tolist() == _where_by_hand(b, a)


GROUPED = {**{case: docs for case, (docs, _) in NUMBERED.items()},
           "two prefixes, one per run": ["D7", "D70", "D0", "E7", "E12"],
           "a prefix in the second run only": ["7", "70", "0", "D7", "D12"]}


@pytest.mark.parametrize("case", [*GROUPED, "an empty run"])
@pytest.mark.parametrize("threads", [False, True])
def test_docno_codes_read_a_run_at_a_time_are_those_of_all_runs_at_once(case, threads, monkeypatch):
    """Two runs' docno numbers read apart (the first beside the second, with ``threads``) give the
    codes, prefix and dictionary of one reading of both: the first run three rows in two chunks,
    the second two rows, or none."""
    docs = GROUPED.get(case, GROUPED["one prefix"])
    started = force_threads(monkeypatch) if threads else []
    second = docs[3:] if case != "an empty run" else []
    chunks = [pa.array(docs[:2]), pa.array(docs[2:3]), pa.array(second, pa.string())]
    whole, apart = codes_module.encode(chunks), codes_module.encode(chunks, groups=[2, 1])
    assert apart.codes.tolist() == whole.codes.tolist() and apart.codes.dtype == whole.codes.dtype
    assert apart.prefix == whole.prefix
    assert (apart.dictionary is None) == (whole.dictionary is None)
    if whole.dictionary is not None:
        assert apart.dictionary.equals(whole.dictionary)
    assert started.count("first_half") == (threads and case != "an empty run")


@pytest.mark.parametrize("numbered", [True, False])
@pytest.mark.parametrize("threads", [False, True])
def test_rank_in_of_random_lists_matches_the_strings(numbered, threads, monkeypatch):
    started = force_threads(monkeypatch) if threads else []
    rng = np.random.default_rng(7)
    pool = [str(n) if numbered else f"doc-{n}x" for n in rng.choice(10**9, size=60, replace=False)]
    qids = [f"q{i}" for i in range(12)]
    qrels = qrels_of([(q, pool[0], 1) for q in qids])
    lists = [{q: list(rng.choice(pool, size=int(rng.integers(0, 40)), replace=False)) for q in qids} for _ in "ab"]
    a, b = (rank(run_of(lists_, name), qrels, missing="zero") for lists_, name in zip(lists, "ab"))
    assert hr.rank_in(a, b).tolist() == _where_by_hand(a, b)
    assert hr.rank_in(b, a).tolist() == _where_by_hand(b, a)
    assert started.count("first_half") == threads   # the first run's docnos read beside the second's


@pytest.mark.parametrize("numbered", [True, False])
def test_rank_in_of_lists_of_the_same_documents_pairs_both_ways(numbered):
    """A re-ranking of the whole of its first stage (every query the same documents, in another
    order) is matched by pairing the two sorted lists, both directions at once: each equals the
    strings' answer, and the other direction is kept for the pair."""
    rng = np.random.default_rng(11)
    pool = [str(n) if numbered else f"doc-{n}x" for n in rng.choice(10**9, size=80, replace=False)]
    qids = [f"q{i}" for i in range(15)]
    qrels = qrels_of([(q, pool[0], 1) for q in qids])
    first_lists = {q: list(rng.choice(pool, size=int(rng.integers(1, 60)), replace=False)) for q in qids}
    second_lists = {q: list(rng.permutation(docs)) for q, docs in first_lists.items()}
    a, b = (rank(run_of(lists, name), qrels, missing="zero")
            for lists, name in ((first_lists, "a"), (second_lists, "b")))
    assert hr.rank_in(a, b).tolist() == _where_by_hand(a, b)
    kept = matching._pair_where.get(b, a)
    assert kept is not None and kept[1]
    assert kept[0].tolist() == _where_by_hand(b, a) == hr.rank_in(b, a).tolist()


@pytest.mark.parametrize("numbered", [True, False])
@pytest.mark.parametrize("change", ["top", "outsider", "twice"])
@pytest.mark.parametrize("threads", [False, True])
def test_rank_in_of_a_re_ranked_top_pairs_only_the_rows_that_moved(numbered, change, threads, monkeypatch):
    """The top few of each list re-ranked, the rest kept in place (queries of any length, one empty):
    only the moved rows are sorted and paired, both directions at once, each equal to the strings'
    answer. A document from outside the first stage among the moved rows, or one listed twice in
    the first stage, is not a permutation: the answer comes from the search, as before. With
    ``threads``, the searched list's keys are sorted on a second thread while the moved rows are
    paired."""
    started = force_threads(monkeypatch) if threads else []
    calls = []
    monkeypatch.setattr(matching, "_paired_moved", lambda *args: calls.append(1) or _PAIRED_MOVED(*args))
    rng = np.random.default_rng({"top": 3, "outsider": 5, "twice": 9}[change])
    pool = [str(n) if numbered else f"doc-{n}x" for n in rng.choice(10**9, size=300, replace=False)]
    qids = [f"q{i}" for i in range(20)]
    qrels = qrels_of([(q, pool[0], 1) for q in qids])
    first_lists = {q: list(rng.choice(pool[1:], size=int(rng.integers(0, 40)), replace=False)) for q in qids}
    first_lists["q3"] = []
    second_lists = {q: list(rng.permutation(docs[:5])) + docs[5:] for q, docs in first_lists.items()}
    long = max(first_lists, key=lambda q: len(first_lists[q]))
    if change == "outsider":
        second_lists[long][0] = pool[0]   # a document the first stage lacks
    a, b = (rank(run_of(lists, name), qrels, missing="zero")
            for lists, name in ((first_lists, "a"), (second_lists, "b")))
    if change == "twice":   # the first stage lists its first document twice (a ranking built by hand)
        docs = a.docno.to_pylist()
        at = int(a.offsets[qids.index(long)])
        docs[at + 6] = docs[at]
        a = dataclasses.replace(a, docno=pa.array(docs))
    x, y = (a, b) if change == "twice" else (b, a)   # y, the list searched, lists each document once
    assert hr.rank_in(x, y).tolist() == _where_by_hand(x, y)
    assert calls == [1]
    assert started.count("sorted_b") == threads
    kept = matching._pair_where.get(y, x)   # the other direction, kept when paired
    assert (kept is not None) == (change == "top")
    assert hr.rank_in(y, x).tolist() == _where_by_hand(y, x)


def test_rank_in_of_lists_of_the_same_documents_one_listed_twice_answers_the_first_position():
    """The same multiset in both lists, with a document twice: never paired one to one."""
    qrels = qrels_of([("q1", "x", 1)])
    base = rank(run_of({"q1": ["x", "y", "w", "v"]}, "t"), qrels)
    one = dataclasses.replace(base, docno=pa.array(["x", "y", "x", "v"]))
    two = dataclasses.replace(rank(run_of({"q1": ["v", "u", "y", "t"]}, "s"), qrels),
                              docno=pa.array(["x", "v", "y", "x"]))
    assert hr.rank_in(one, two).tolist() == [0, 2, 0, 1]
    assert hr.rank_in(two, one).tolist() == [0, 3, 1, 0]


def test_rank_in_is_kept_for_the_same_rankings_while_they_live():
    qrels = qrels_of([("q1", "a", 1)])
    first, other = rank(run_of({"q1": list("abc")}, "f"), qrels), rank(run_of({"q1": list("cbz")}, "r"), qrels)
    assert hr.rank_in(first, other).tolist() == [-1, 1, 0]
    assert matching._pair_where.get(first, other) is not None
    assert hr.rank_in(first, other).tolist() == [-1, 1, 0]
    found = hr.rank_in(first, other)
    assert found.dtype == np.int32 and not found.flags.writeable   # the kept array itself
    # new rankings of other lists, even at a reused address, are never answered from the kept result
    del first
    again = rank(run_of({"q1": list("zyx")}, "f"), qrels)
    assert hr.rank_in(again, other).tolist() == [2, -1, -1]


@pytest.mark.parametrize("twice", ["first", "second"])
def test_rank_in_of_a_list_holding_a_document_twice_is_never_an_inverse(twice):
    """A ranking built by hand may list a docno twice; the answer is then the first position, and
    the other direction of the pair is computed, not inverted."""
    qrels = qrels_of([("q1", "x", 1)])
    base = rank(run_of({"q1": ["x", "y", "w"]}, "t"), qrels)
    doubled = dataclasses.replace(base, docno=pa.array(["x", "y", "x"]))
    single = rank(run_of({"q1": ["x", "z"]}, "s"), qrels)
    one, two = (doubled, single) if twice == "first" else (single, doubled)
    expected = {id(doubled): [0, -1, 0], id(single): [0, -1]}
    assert hr.rank_in(one, two).tolist() == expected[id(one)]
    assert hr.rank_in(two, one).tolist() == expected[id(two)]


@pytest.mark.parametrize("grades", [(-1, 4), (0, 4)])
@pytest.mark.parametrize("depth,keep", [(3, 2), (3, 5), (6, 6), (1, 4), (30, 2), (25, 3), (60, 5), (13, 3)])
def test_oracle_and_sweep_runs_cut_at_keep_are_the_whole_runs_first_keep(depth, keep, grades):
    """Cut at ``keep``, the oracle and sweep runs sort only the rows their first ``keep`` can come
    from (each query's first max(depth, keep) documents; for the oracle without a negative gain, the
    rows of positive gain and the first ``keep``; for a sweep, the rows found among the re-ranked
    run's first ``SWEEP_LOOK * keep``, else the query's head): they must equal the whole runs (sorted
    over every document) cut afterwards. The other run lacks some documents and adds others; some
    queries are shorter than ``keep``."""
    rng = np.random.default_rng(depth * 100 + keep)
    docs = [f"d{i}" for i in range(80)]
    lists = {f"q{q}": list(rng.permutation(docs)[: rng.integers(1, 80)]) for q in range(12)}
    qrels = qrels_of([(q, d, int(rng.integers(*grades))) for q, ds in lists.items() for d in ds[::3]])
    first = rank(run_of(lists, "first"), qrels)
    others = {q: list(rng.permutation(ds[: int(rng.integers(0, len(ds) + 1))] + ["new1", "new2"][: q.count("1")]))
              for q, ds in lists.items()}
    other = rank(run_of(others, "other"), qrels, missing="zero")

    def cut(table) -> dict:
        return {q: ds[:keep] for q, ds in _lists(table).items()}

    for measure in ("nDCG@3", "nDCG(dcg='exp-log2')@3", "P@3", "nDCG(gains={0: -1, 2: -3})@3"):
        assert _lists(hr.oracle_run(first, depth, measure, keep=keep)) == cut(hr.oracle_run(first, depth, measure))
    assert _lists(hr.sweep_run(first, other, depth, keep=keep)) == cut(hr.sweep_run(first, other, depth))
    near = hr.near_rows(hr.rank_in(first, other), keep)   # as headroom() finds it once for every depth
    assert _lists(hr.sweep_run(first, other, depth, keep=keep, near=near)) == cut(hr.sweep_run(first, other, depth))


def _oracle_by_sorting_gains(first, depth: int, measure: str) -> dict:
    """The oracle's lists from its definition: per query, the top ``depth`` by gain descending (the
    measure's gain, 0 unjudged), equal gains in first-stage order, then the rest in order."""
    m = metrics.parse_measure(measure)
    params = m.family.params
    out = {}
    for i, q in enumerate(first.qids):
        lo, hi = first.offsets[i], first.offsets[i + 1]
        rel, judged = first.rel[lo:hi], first.judged[lo:hi]
        gain = metrics.measures.gain_of(rel, m.param("dcg"), m.param("gains")) if "dcg" in params else \
            metrics.measures.gain_of(rel)
        gain = np.where(judged, gain, 0.0)
        top = sorted(range(min(depth, hi - lo)), key=lambda j: (-gain[j], j))
        docnos = first.docno.to_pylist()[lo:hi]
        out[str(q)] = [docnos[j] for j in top] + docnos[depth:]
    return out


@pytest.mark.parametrize("measure", ["nDCG@10", "nDCG(dcg='exp-log2')@10", "nDCG(gains={0: 5, 2: 1, 3: 1})@10",
                                     "P@10", "AP"])
@pytest.mark.parametrize("spread", [4, 200_000])
def test_the_oracle_orders_by_gain_as_its_definition_says(measure, spread):
    """Grades from -1 up (a gain map that is not monotone, an unjudged document gaining 0, equal
    gains); ``spread`` beyond the grade table gives the per-row path."""
    rng = np.random.default_rng(spread)
    docs = [f"d{i}" for i in range(30)]
    lists = {f"q{q}": list(rng.permutation(docs)[: rng.integers(1, 30)]) for q in range(8)}
    grades = [-1, 0, 1, 2, 3, spread]
    qrels = qrels_of([(q, d, int(rng.choice(grades))) for q, ds in lists.items() for d in ds[::2]])
    first = rank(run_of(lists, "first"), qrels)
    for depth in (1, 5, 30):
        assert _lists(hr.oracle_run(first, depth, measure)) == _oracle_by_sorting_gains(first, depth, measure)


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("kind", ["re-ranked top", "permutation", "search"])
def test_rank_in_and_reach_answer_alike_in_either_position_type(kind, wide, monkeypatch):
    """Positions are int32 below 2**31 rows and int64 beyond (:func:`matching.position_type`); both
    give the strings' answer, the same running maximum and the same detected depth."""
    if wide:
        monkeypatch.setattr(matching, "position_type", lambda rows: np.int64)
        monkeypatch.setattr(hr, "position_type", lambda rows: np.int64)
    rng = np.random.default_rng(21)
    pool = [f"d{n}" for n in range(200)]
    qids = [f"q{i}" for i in range(12)]
    qrels = qrels_of([(q, pool[0], 1) for q in qids])
    first_lists = {q: list(rng.choice(pool, size=int(rng.integers(1, 50)), replace=False)) for q in qids}
    if kind == "re-ranked top":
        second_lists = {q: list(rng.permutation(docs[:4])) + docs[4:] for q, docs in first_lists.items()}
    elif kind == "permutation":
        second_lists = {q: list(rng.permutation(docs)) for q, docs in first_lists.items()}
    else:
        second_lists = {q: list(rng.choice(pool, size=int(rng.integers(1, 50)), replace=False)) for q in qids}
    a, b = (rank(run_of(lists, name), qrels, missing="zero")
            for lists, name in ((first_lists, "a"), (second_lists, "b")))
    where = hr.rank_in(b, a)
    assert where.dtype == (np.int64 if wide else np.int32)
    assert where.tolist() == _where_by_hand(b, a) and hr.rank_in(a, b).tolist() == _where_by_hand(a, b)
    expected = []   # the deepest first-stage position (len(a's list) + 1 where a lacks it) so far
    for q in range(len(qids)):
        lo, hi = int(b.offsets[q]), int(b.offsets[q + 1])
        deepest = int(max(a.lengths.max(), b.lengths.max())) + 1
        expected += list(np.maximum.accumulate([w if w >= 0 else deepest for w in _where_by_hand(b, a)[lo:hi]]))
    assert hr.reach(a, b).tolist() == expected
    longest = max(len(docs) for docs in second_lists.values())
    by_hand = next((k for k in range(longest, 0, -1)
                    if all(set(second_lists[q][:k]) <= set(first_lists[q][:k]) for q in qids)), None)
    assert hr.detect_depth(a, b) == by_hand and (by_hand is None) == (kind == "search")

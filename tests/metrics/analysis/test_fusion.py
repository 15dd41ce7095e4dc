"""Fusion: every method against ranx's fuse on tie-free inputs, and hand-computed cases where
our rules differ from ranx's (ties, degenerate normalisations, Condorcet cycles, missing queries).
"""
from __future__ import annotations

import io as stdio
import json
import math

import numpy as np
import pytest

import metrics
from metrics import MetricsError, read_run
from metrics.analysis import codes as codes_module
from metrics.analysis import fusion, fusion_kernels
from metrics.analysis.fusion import Recipe, fuse

ranx = pytest.importorskip("ranx")


# --------------------------------------------------------------------------- inputs


def tie_free_runs(seed: int, n_runs: int = 2, n_queries: int = 6, docs: int = 40, depth=(3, 25)) -> list[dict]:
    """Runs as {qid: {docno: score}} with every query in every run, distinct positive scores
    per query (so canonical order and ranx's order agree), at least 3 documents per list."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(n_queries):
            n = int(rng.integers(*depth))
            chosen = rng.choice(docs, size=n, replace=False)
            scores = rng.choice(100_000, size=n, replace=False) / 1000 + 0.5
            run[f"q{q}"] = {f"d{d:02d}": float(s) for d, s in zip(chosen, scores)}
        runs.append(run)
    return runs


def complete_transitive_runs(seed: int, n_queries: int = 5, candidates: int = 8) -> list[dict]:
    """Three runs ranking the same candidates per query, whose pairwise majority is a strict
    order (Condorcet fusion is then unambiguous): base order plus noise, redrawn on a cycle."""
    rng = np.random.default_rng(seed)
    runs = [{}, {}, {}]
    for q in range(n_queries):
        while True:
            base = rng.permutation(candidates).astype(float)
            scores = [base + rng.normal(0, 1.5, candidates) for _ in range(3)]
            beats = sum((s[:, None] > s[None, :]).astype(int) for s in scores) >= 2
            if sorted(beats.sum(axis=1)) == list(range(candidates)):   # a strict total order
                break
        for run, s in zip(runs, scores):
            run[f"q{q}"] = {f"d{d}": float(v) + 100 for d, v in enumerate(s)}
    return runs


def ours(runs, method, **options) -> dict:
    fused, _ = fuse([read_run(r, name=f"r{i}") for i, r in enumerate(runs)], method, **options)
    out: dict = {}
    for q, d, s in zip(*(fused.table[c].to_pylist() for c in ("qid", "docno", "score"))):
        out.setdefault(q, {})[d] = s
    return out


def theirs(runs, method, norm=None, **params) -> dict:
    fused = ranx.fuse([ranx.Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)],
                      norm=norm, method=method, params=params)
    return {q: dict(docs) for q, docs in fused.to_dict().items()}


def assert_same_scores(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for q in expected:
        assert got[q].keys() == expected[q].keys(), q
        for d, value in expected[q].items():
            assert got[q][d] == pytest.approx(value, rel=1e-12, abs=1e-12), (q, d)


def fused_rows(fused) -> list[tuple]:
    return list(zip(*(fused.table[c].to_pylist() for c in ("qid", "docno", "score", "rank"))))


# --------------------------------------------------------------------------- ranx agreement


RANK_METHODS = [("rrf", "rrf", {"k": 60}), ("rrf", "rrf", {"k": 5}), ("isr", "isr", {}),
                ("bordafuse", "bordafuse", {})]


@pytest.mark.parametrize("ours_name, ranx_name, params", RANK_METHODS)
@pytest.mark.parametrize("n_runs", [2, 3])
def test_rank_methods_equal_ranx(ours_name, ranx_name, params, n_runs):
    runs = tie_free_runs(seed=n_runs, n_runs=n_runs)
    assert_same_scores(ours(runs, ours_name, **params), theirs(runs, ranx_name, **params))


SCORE_METHODS = [("combsum", "sum"), ("combmnz", "mnz"), ("combmax", "max"), ("combmin", "min"),
                 ("combanz", "anz"), ("combmed", "med")]
NORMS = [("none", None), ("minmax", "min-max"), ("zscore", "zmuv"), ("sum", "sum"), ("max", "max"),
         ("rank", "rank")]


@pytest.mark.parametrize("ours_name, ranx_name", SCORE_METHODS)
@pytest.mark.parametrize("ours_norm, ranx_norm", NORMS)
def test_score_methods_and_normalisations_equal_ranx(ours_name, ranx_name, ours_norm, ranx_norm):
    runs = tie_free_runs(seed=7, n_runs=3)
    assert_same_scores(ours(runs, ours_name, norm=ours_norm), theirs(runs, ranx_name, norm=ranx_norm))


@pytest.mark.parametrize("norm, ranx_norm", [("minmax", "min-max"), ("zscore", "zmuv")])
def test_weighted_sum_equals_ranx(norm, ranx_norm):
    runs = tie_free_runs(seed=11, n_runs=3)
    weights = [0.5, 0.3, 0.2]
    assert_same_scores(ours(runs, "wsum", norm=norm, weights=weights),
                       theirs(runs, "wsum", norm=ranx_norm, weights=weights))


def test_weighted_borda_equals_ranx():
    runs = tie_free_runs(seed=12, n_runs=3)
    weights = [0.6, 0.3, 0.1]
    assert_same_scores(ours(runs, "bordafuse", weights=weights), theirs(runs, "w_bordafuse", weights=weights))


@pytest.mark.parametrize("weights", [None, [0.45, 0.35, 0.2]])
def test_condorcet_equals_ranx_where_the_majority_is_a_strict_order(weights):
    """ranx scores C − position of its sorted order; ours is Copeland's wins − losses, which for a
    strict order of C candidates is (C − 1) − 2·position = 2·ranx − C − 1."""
    runs = complete_transitive_runs(seed=3 if weights is None else 4)
    got = ours(runs, "condorcet", weights=weights)
    expected = theirs(runs, "condorcet") if weights is None else theirs(runs, "w_condorcet", weights=weights)
    assert got.keys() == expected.keys()
    for q, docs in expected.items():
        c = len(docs)
        assert got[q] == {d: 2 * s - c - 1 for d, s in docs.items()}
        ranx_order = sorted(docs, key=docs.get, reverse=True)
        assert list(got[q]) == ranx_order


# --------------------------------------------------------------------------- hand-computed cases

A = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}
B = {"q1": {"c": 9.0, "b": 8.0, "e": 7.0}}


def test_rrf_by_hand_and_the_written_order():
    got = ours([A, B], "rrf", k=60)["q1"]
    assert got == {"c": pytest.approx(1 / 61 + 1 / 63), "b": pytest.approx(1 / 62 + 1 / 62),
                   "a": pytest.approx(1 / 61), "e": pytest.approx(1 / 63)}
    assert list(got) == ["c", "b", "a", "e"]        # 0.032266 > 0.032258 > 0.016393 > 0.015873


def test_weighted_rrf_by_hand():
    got = ours([A, B], "rrf", k=10, weights=[2, 1])["q1"]
    assert got["a"] == pytest.approx(2 / 11)
    assert got["b"] == pytest.approx(2 / 12 + 1 / 12)
    assert got["c"] == pytest.approx(2 / 13 + 1 / 11)
    assert got["e"] == pytest.approx(1 / 13)


def test_isr_by_hand():
    got = ours([A, B], "isr")["q1"]
    # n(d) · Σ 1/r²: c is 3rd in A and 1st in B, b 2nd in both
    assert got == {"c": pytest.approx(2 * (1 / 9 + 1)), "b": pytest.approx(2 * (1 / 4 + 1 / 4)),
                   "a": pytest.approx(1.0), "e": pytest.approx(1 / 9)}
    assert list(got) == ["c", "b", "a", "e"]        # b and a tie at 1.0: docno descending


def test_borda_by_hand_with_a_query_missing_from_one_input():
    a = {**A, "q2": {"x": 2.0, "y": 1.0}}
    got = ours([a, B], "bordafuse")
    # q1: C = 4 candidates. A: a 4, b 3, c 2, e unranked (4 − 3 + 1)/2 = 1.
    #                       B: c 4, b 3, e 2, a unranked 1.
    assert got["q1"] == {"c": 6.0, "b": 6.0, "a": 5.0, "e": 3.0}
    assert list(got["q1"]) == ["c", "b", "a", "e"]  # c and b tie: docno descending
    # q2: C = 2. A: x 2, y 1. B lacks q2 and gives no points to it.
    assert got["q2"] == {"x": 2.0, "y": 1.0}


def test_ties_are_broken_by_docno_descending_in_inputs_and_output():
    tied = {"q1": {"d1": 5.0, "d2": 5.0, "d3": 1.0}}     # canonical ranks: d2 1, d1 2, d3 3
    other = {"q1": {"d3": 2.0}}
    got = ours([tied, other], "rrf", k=0)["q1"]
    assert got == {"d3": pytest.approx(1 / 3 + 1 / 1), "d2": pytest.approx(1.0), "d1": pytest.approx(1 / 2)}
    swapped = ours([{"q1": {"x": 2.0, "y": 1.0}}, {"q1": {"y": 2.0, "x": 1.0}}], "rrf")["q1"]
    assert swapped["x"] == swapped["y"] and list(swapped) == ["y", "x"]


def test_equal_contributions_tie_exactly_with_three_inputs():
    """Ranks (1, 2, 7) of three inputs in rotation: summing in input order gives sums that differ
    in the last bit; summing each document's contributions in ascending order does not."""
    naive = {(1 / 61 + 1 / 62) + 1 / 67, (1 / 62 + 1 / 67) + 1 / 61, (1 / 67 + 1 / 61) + 1 / 62}
    assert len(naive) > 1

    def run(order):   # order[0] at rank 1, order[1] at rank 2, four fillers, order[2] at rank 7
        return {"q1": {order[0]: 100.0, order[1]: 99.0, **{f"f{i}": 50.0 - i for i in range(4)}, order[2]: 1.0}}

    got = ours([run("XYZ"), run("ZXY"), run("YZX")], "rrf")["q1"]
    assert got["X"] == got["Y"] == got["Z"]
    assert [d for d in got if d in "XYZ"] == ["Z", "Y", "X"]


def test_condorcet_cycle_and_abstention_by_hand():
    # x>y>z, y>z>x, z>x>y: x beats y 2-1, y beats z 2-1, z beats x 2-1; Copeland 0 for all.
    cyc = [{"q": {"x": 3.0, "y": 2.0, "z": 1.0}}, {"q": {"y": 3.0, "z": 2.0, "x": 1.0}},
           {"q": {"z": 3.0, "x": 2.0, "y": 1.0}}]
    got = ours(cyc, "condorcet")["q"]
    assert got == {"z": 0.0, "y": 0.0, "x": 0.0} and list(got) == ["z", "y", "x"]
    # A: x > y, B: z only. x–y: A for x, B abstains (both unranked) -> x wins.
    # x–z and y–z: one vote each -> ties. Copeland: x +1, z 0, y −1.
    got = ours([{"q": {"x": 2.0, "y": 1.0}}, {"q": {"z": 1.0}}], "condorcet")["q"]
    assert got == {"x": 1.0, "z": 0.0, "y": -1.0}


def test_condorcet_chunks_give_the_same_scores(monkeypatch):
    runs = tie_free_runs(seed=5, n_runs=3, n_queries=9)
    whole = ours(runs, "condorcet")
    monkeypatch.setattr(fusion_kernels, "PAIR_BUDGET", 7)   # a chunk per query, or less
    assert ours(runs, "condorcet") == whole


LIST = {"q1": {"p": 4.0, "r": 2.0, "s": 1.0}}
OTHER = {"q1": {"t": 5.0, "u": 3.0}}


@pytest.mark.parametrize("norm, expected", [
    ("none", {"p": 4.0, "r": 2.0, "s": 1.0}),
    ("minmax", {"p": (4 - 1) / 3, "r": (2 - 1) / 3, "s": 0.0}),
    # mean 7/3, population variance ((5/3)² + (1/3)² + (4/3)²)/3 = 14/9
    ("zscore", {"p": 5 / math.sqrt(14), "r": -1 / math.sqrt(14), "s": -4 / math.sqrt(14)}),
    ("sum", {"p": 3 / 4, "r": 1 / 4, "s": 0.0}),            # shifted 3, 1, 0; total 4
    ("max", {"p": 1.0, "r": 0.5, "s": 0.25}),
    ("rank", {"p": 1.0, "r": 1 - 1 / 3, "s": 1 - 2 / 3}),
])
def test_normalisations_by_hand(norm, expected):
    got = ours([LIST, OTHER], "combsum", norm=norm)["q1"]
    assert {d: got[d] for d in "prs"} == pytest.approx(expected)


@pytest.mark.parametrize("norm, value", [("minmax", 1.0), ("sum", 0.5), ("zscore", 0.0)])
def test_degenerate_lists_differ_from_ranx_on_purpose(norm, value):
    """All scores equal: ranx divides by max(denominator, 1e-9) and gives 0 under min-max and sum."""
    flat = {"q1": {"m": 2.0, "n": 2.0}}
    got = ours([flat, {"q1": {"o": 1.0, "v": 0.0}}], "combsum", norm=norm)["q1"]
    assert got["m"] == got["n"] == value


def test_max_norm_refuses_a_non_positive_top_score():
    with pytest.raises(MetricsError, match=r"run 'r1' has top score -1 for query 'q1'"):
        ours([LIST, {"q1": {"m": -1.0, "n": -2.0}}], "combsum", norm="max")


def test_median_min_max_anz_mnz_by_hand():
    runs = [{"q": {"x": 1.0, "y": 1.0, "z": 0.5}}, {"q": {"x": 5.0, "y": 4.0, "w": 9.0}}, {"q": {"x": 2.0, "w": 8.0}}]
    # raw scores (norm none); x in 3 inputs (1, 5, 2), y in 2 (1, 4), z and w as given
    assert ours(runs, "combmed", norm="none")["q"] == {"w": 8.5, "x": 2.0, "y": 2.5, "z": 0.5}
    assert ours(runs, "combmin", norm="none")["q"] == {"w": 8.0, "x": 1.0, "y": 1.0, "z": 0.5}
    assert ours(runs, "combmax", norm="none")["q"] == {"w": 9.0, "x": 5.0, "y": 4.0, "z": 0.5}
    assert ours(runs, "combanz", norm="none")["q"] == pytest.approx({"w": 8.5, "x": 8 / 3, "y": 2.5, "z": 0.5})
    assert ours(runs, "combmnz", norm="none")["q"] == {"w": 34.0, "x": 24.0, "y": 10.0, "z": 0.5}


def test_depth_cuts_before_normalising_and_keep_cuts_the_output():
    got = ours([LIST, OTHER], "combsum", norm="minmax", depth=2)["q1"]
    assert got == {"p": 1.0, "t": 1.0, "r": 0.0, "u": 0.0}      # min-max over p, r only
    kept = ours([LIST, OTHER], "rrf", keep=3)["q1"]
    assert list(kept) == ["t", "p", "u"]


def test_queries_are_the_union_and_the_partial_ones_are_reported():
    fused, _ = fuse([{"q1": {"a": 1.0}, "q2": {"b": 1.0}}, {"q1": {"c": 1.0}}], "rrf")
    assert sorted(set(fused.table["qid"].to_pylist())) == ["q1", "q2"]
    (finding,) = [f for f in fused.findings if f.kind == "fusion_partial_queries"]
    assert finding.count == 1 and finding.examples == ["q2"]


def test_recipe_names_inputs_by_digest_and_identifies_the_result():
    a, b = read_run(A, name="a"), read_run(B, name="b")
    fused, recipe = fuse([a, b], "combmnz", norm="zscore", depth=50)
    assert recipe.inputs == (("a", a.digest), ("b", b.digest))
    assert recipe.params == {"norm": "zscore", "depth": 50}
    assert fused.digest == recipe.digest and fused.name == "combmnz"
    assert Recipe.from_dict(json.loads(recipe.to_json())) == recipe
    assert fuse([a, b], "combmnz", norm="minmax", depth=50).recipe.digest != recipe.digest
    assert fuse([a, b], "rrf", k=60).recipe.label() == "rrf(k=60) of a, b"


def test_written_run_reads_back_exactly_and_evaluates_the_same(tmp_path):
    runs = tie_free_runs(seed=9, n_runs=3, n_queries=4)
    fused, _ = fuse([read_run(r, name=f"r{i}") for i, r in enumerate(runs)], "rrf", name="fused")
    buffer = stdio.BytesIO()
    metrics.io.to_trec(fused, buffer)
    assert buffer.getvalue().splitlines()[0].split()[1] == b"Q0"
    back = read_run(buffer.getvalue(), name="fused")
    assert back.table.equals(fused.table)
    qrels = {q: {d: int(i % 3 == 0) for i, d in enumerate(docs)} for q, docs in runs[0].items()}
    path = tmp_path / "fused.run"
    metrics.io.to_trec(fused, path)
    left = metrics.evaluate(qrels, [fused], ["nDCG@10", "AP"])
    right = metrics.evaluate(qrels, [str(path)], ["nDCG@10", "AP"])
    assert left["value"].tolist() == right["value"].tolist()


@pytest.mark.parametrize("call, message", [
    (lambda: fuse([A, B], "borda_count"), "unknown fusion method 'borda_count'"),
    (lambda: fuse([A, B], "combsum", norm="l2"), "unknown normalisation 'l2'"),
    (lambda: fuse([A, B], "rrf", norm="minmax"), "rrf is rank-based"),
    (lambda: fuse([A, B], "wsum"), "wsum needs weights"),
    (lambda: fuse([A, B], "rrf", weights=[1]), "1 weights for 2 runs"),
    (lambda: fuse([A, B], "rrf", weights=[1, -1]), "weights must be finite, >= 0"),
    (lambda: fuse([A], "rrf"), "fusion needs at least two runs, got 1"),
    (lambda: fuse([A, B], "rrf", k=-1), "k must be a number >= 0"),
    (lambda: fuse([A, B], "rrf", depth=0), "depth must be a whole number >= 1"),
    (lambda: fuse([A, B], "rrf", keep=2.5), "keep must be a whole number >= 1"),
])
def test_bad_options_are_one_line_errors(call, message):
    with pytest.raises(MetricsError, match=message.replace("(", r"\(")):
        call()


def test_ranx_names_are_accepted():
    assert fusion.method("comb_mnz").name == "combmnz"
    assert fusion.method("CombSUM").name == "combsum"
    assert fusion.norm_name("min-max") == "minmax" and fusion.norm_name("zmuv") == "zscore"


@pytest.mark.parametrize("names", ["numbers", "one prefix", "wider than a key"])
@pytest.mark.parametrize("method", ["rrf", "combmnz", "bordafuse", "condorcet"])
def test_numbered_docnos_fuse_as_a_dictionary_of_their_strings_does(monkeypatch, names, method):
    """Docnos read as their numbers (metrics.analysis.codes) give the fused run, table for table,
    that the dictionary's codes give; numbers too wide for one key fall back to the dictionary."""
    spell = {"numbers": str, "one prefix": lambda d: f"D{d}", "wider than a key": lambda d: str(9 * 10**18 + d)}[names]
    runs = [{q: {spell(int(d[1:])): s for d, s in docs.items()} for q, docs in run.items()}
            for run in tie_free_runs(seed=11, n_runs=3)]
    parsed = [read_run(r, name=f"r{i}") for i, r in enumerate(runs)]
    chunks = [c for run in parsed for c in run.table["docno"].chunks]
    assert codes_module.numbered(chunks) is not None
    numbered, _ = fuse(parsed, method)
    monkeypatch.setattr(fusion_kernels, "encode",
                        lambda chunks, numbers=True, groups=None: codes_module.encode(chunks, False))
    dictionary, _ = fuse(parsed, method)
    assert numbered.table.equals(dictionary.table)

"""metrics.analysis.sandbox.scoring: the teaching numbers, checked against hand formulas written with log2."""
from __future__ import annotations

import itertools
from math import log2

import numpy as np
import pytest

from metrics.analysis import sandbox as sx
from metrics.analysis.sandbox import PRESETS, Sandbox


def hand_ndcg(grades, k, gain="exp", missed=()):
    """nDCG@k by the textbook formula: unjudged (None) gains 0; IDCG from judged grades plus missed ones."""
    g = (lambda rel: 2 ** rel - 1) if gain == "exp" else (lambda rel: rel)
    dcg = sum(g(rel) / log2(r + 2) for r, rel in enumerate(grades[:k]) if rel is not None)
    ideal = sorted([rel for rel in grades if rel is not None] + list(missed), reverse=True)
    idcg = sum(g(rel) / log2(r + 2) for r, rel in enumerate(ideal[:k]))
    return dcg / idcg if idcg > 0 else 0.0


def test_wikipedia_worked_example():
    sb = PRESETS["wikipedia"].sandbox
    values = sx.scores(sb)
    dcg = 3 / log2(2) + 2 / log2(3) + 3 / log2(4) + 0 / log2(5) + 1 / log2(6) + 2 / log2(7)
    idcg = 3 / log2(2) + 3 / log2(3) + 3 / log2(4) + 2 / log2(5) + 2 / log2(6) + 2 / log2(7)
    assert values["DCG linear"] == pytest.approx(dcg) and round(dcg, 3) == 6.861
    assert values["IDCG linear"] == pytest.approx(idcg) and round(idcg, 3) == 8.740
    assert values["nDCG linear"] == pytest.approx(dcg / idcg) and round(dcg / idcg, 3) == 0.785
    assert values["CG linear"] == 3 + 2 + 3 + 0 + 1 + 2


def test_scores_of_the_other_measures():
    sb = Sandbox(grades=(0, 2, None, 1), cutoff=3, gain="linear", missed=(3,))
    values = sx.scores(sb)
    # relevant (grade >= 1): ranks 2 and 4, plus the missed document: R = 3
    assert values["AP"] == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert values["RR"] == pytest.approx(1 / 2)
    assert values["P"] == pytest.approx(1 / 3)
    assert values["R"] == pytest.approx(1 / 3)
    assert values["nDCG linear"] == pytest.approx(hand_ndcg(sb.grades, 3, "linear", (3,)))
    assert values["nDCG exp"] == pytest.approx(hand_ndcg(sb.grades, 3, "exp", (3,)))


@pytest.mark.parametrize("key", list(PRESETS))
def test_presets_match_the_hand_formula(key):
    sb = PRESETS[key].sandbox
    values = sx.scores(sb)
    for gain in ("exp", "linear"):
        assert values[f"nDCG {gain}"] == pytest.approx(hand_ndcg(sb.grades, sb.cutoff, gain, sb.missed))


def test_preset_lessons_hold():
    assert sx.scores(PRESETS["perfect"].sandbox)["nDCG exp"] == 1.0
    assert sx.scores(PRESETS["reverse"].sandbox)["nDCG exp"] < 0.5
    late = sx.scores(PRESETS["late"].sandbox)
    assert late["nDCG exp"] == pytest.approx(1 / log2(11)) and round(late["nDCG exp"], 3) == 0.289
    mrr = sx.scores(PRESETS["mrr"].sandbox)
    assert mrr["RR"] == 1.0 and mrr["nDCG exp"] < 0.5
    pair = sx.compare_systems(PRESETS["equal_map"].sandbox)
    a, b = pair.iloc[0], pair.iloc[1]
    assert a["AP"] == b["AP"] and a["RR"] == b["RR"]
    measure = PRESETS["equal_map"].sandbox.measure
    assert a[measure] > b[measure]


def test_discount_and_gain_tables():
    marks = sx.discount_table((1, 5, 10))
    assert marks["discount"].tolist() == pytest.approx([1.0, 1 / log2(6), 1 / log2(11)])
    assert [round(v, 3) for v in marks["discount"]] == [1.000, 0.387, 0.289]
    assert [round(v, 2) for v in marks["less than rank 1"]] == [0.0, 0.61, 0.71]
    gains = sx.gain_table()
    assert gains["linear gain"].tolist() == [0, 1, 2, 3, 4]
    assert gains["exponential gain"].tolist() == [0, 1, 3, 7, 15]


def test_per_rank_is_the_explain_frame():
    sb = Sandbox(grades=(2, 0, 1), cutoff=5, gain="linear")
    frame = sx.per_rank(sb)
    assert len(frame) == 5  # ranks past the list are shown up to k
    assert frame["contribution"].tolist()[:3] == pytest.approx([2 / log2(2), 0, 1 / log2(4)])
    assert frame["ndcg"].iloc[-1] == pytest.approx(hand_ndcg(sb.grades, 5, "linear"))


def test_numbers_computed_once_are_given_as_copies():
    """scores and per_rank remember each list's numbers: what a caller changes in its copy is not
    what the next caller gets."""
    sb = Sandbox(grades=(2, 0, 1), cutoff=5, gain="linear")
    values, frame = sx.scores(sb), sx.per_rank(sb)
    values["nDCG linear"] = -1.0
    frame.loc[:, "ndcg"] = -1.0
    assert sx.scores(Sandbox(grades=(2, 0, 1), cutoff=5, gain="linear"))["nDCG linear"] == pytest.approx(
        hand_ndcg(sb.grades, 5, "linear"))
    assert sx.per_rank(sb)["ndcg"].iloc[-1] == pytest.approx(hand_ndcg(sb.grades, 5, "linear"))
    assert sx.per_rank(sb, "exp")["ndcg"].iloc[-1] == pytest.approx(hand_ndcg(sb.grades, 5, "exp"))


def test_unjudged_strategies():
    sb = Sandbox(grades=(0, None, 2), cutoff=3, gain="linear", guesses=(("D2", 3),))
    table = sx.strategies(sb)
    zero, condensed, inferred = table["nDCG"].tolist()
    assert zero == pytest.approx((2 / log2(4)) / (2 / log2(2)))
    assert condensed == pytest.approx((2 / log2(3)) / (2 / log2(2)))          # D2 removed, D3 moves up
    assert inferred == pytest.approx((3 / log2(3) + 2 / log2(4)) / (3 / log2(2) + 2 / log2(3)))
    assert table.loc[table.index[1], "list"] == "D1(0) D3(2)"


def test_tie_orderings_share_one_idcg():
    sb = Sandbox(grades=(2, 3, 2, 0, 3, 2, 1), cutoff=5)
    table = sx.tie_orderings(sb, n=3, seed=1)
    ideal = table[table["ordering"].str.startswith("ideal")]
    assert len(set(ideal["list"])) > 1                     # genuinely different orderings
    assert (ideal["DCG"] == ideal["IDCG"]).all()           # each reaches IDCG exactly
    assert table["IDCG"].nunique() == 1
    yours = table[table["ordering"].str.startswith("your")]
    assert yours["nDCG"].nunique() == 1


def _all_moves(grades):
    n = len(grades)
    for i, j in itertools.combinations(range(n), 2):
        moved = list(grades)
        moved[i], moved[j] = moved[j], moved[i]
        yield ("swap", i, j, None), moved
    for i in range(n):
        for g in (0, 1, 2, 3, 4, None):
            if g != grades[i]:
                regraded = list(grades)
                regraded[i] = g
                yield ("grade", i, None, g), regraded


@pytest.mark.parametrize("seed", range(6))
def test_what_if_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    grades = tuple(None if x == 5 else int(x) for x in rng.integers(0, 6, size=n))
    cutoff = int(rng.integers(1, n + 2))
    gain = ("exp", "linear")[seed % 2]
    missed = (3,) if seed % 3 == 0 else ()
    sb = Sandbox(grades=grades, cutoff=cutoff, gain=gain, missed=missed)
    moves = sx.what_if(sb)

    brute = {move: hand_ndcg(after, cutoff, gain, missed) for move, after in _all_moves(list(grades))}
    assert len(moves) == len(brute)
    before = hand_ndcg(list(grades), cutoff, gain, missed)
    assert moves["before"].to_numpy() == pytest.approx(before)
    for row in moves.itertuples():
        key = (row.move, row.i, None if row.move == "grade" else int(row.j),
               None if row.move == "swap" or row.unjudged else int(row.grade))
        assert row.after == pytest.approx(brute[key]), row.description
    assert moves["delta"].iloc[0] == pytest.approx(max(brute.values()) - before)
    assert moves["delta"].is_monotonic_decreasing


def test_apply_best_move():
    sb = Sandbox(grades=(0, 0, 0, 4), cutoff=4)
    best = sx.what_if(sb).iloc[0]
    after = sx.apply_move(sb, best.to_dict())
    assert best["move"] == "swap" and after.grades == (4, 0, 0, 0)
    assert sx.scores(after)["nDCG exp"] == pytest.approx(best["after"])
    assert best["after"] == 1.0


def test_what_if_on_a_perfect_list_finds_no_gain():
    moves = sx.what_if(Sandbox(grades=(3, 2, 1), cutoff=3))
    assert moves["delta"].iloc[0] <= 1e-12  # nothing beats an ideal list (a regrade may tie)


def test_sandbox_edge_lists_do_not_break():
    for sb in (sx.Sandbox(grades=(None, None)), sx.Sandbox(grades=(0,)), sx.Sandbox(grades=(None,), missed=(2,))):
        assert sx.scores(sb)["nDCG exp"] == 0.0
        assert len(sx.per_rank(sb, strategy="condensed")) == max(len(sb), sb.cutoff)
        assert len(sx.strategies(sb)) == 3

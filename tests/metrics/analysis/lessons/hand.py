"""An independent nDCG for the lessons' tests: the textbook formulas, written out by hand."""
from __future__ import annotations

from math import log2

from metrics.analysis.lessons import Exercise
from metrics.analysis.sandbox import Sandbox


def gain(g, kind):
    return (2 ** g - 1) if kind == "exp" else g


def dcg(grades, k, kind):
    return sum(gain(g, kind) / log2(r + 2) for r, g in enumerate(grades[:k]))


def hand(sb: Sandbox, quantity: str, strategy: str = "zero") -> float:
    """nDCG, DCG, IDCG, AP, RR, P@k, R@k of a sandbox by the textbook formulas (unjudged = 0, or
    removed when condensed), the ideal ranking holding the missed documents."""
    grades = [g for g in sb.grades if g is not None] if strategy == "condensed" else [g or 0 for g in sb.grades]
    judged = [g for g in sb.grades if g is not None] + list(sb.missed)
    k = sb.cutoff
    ideal = sorted(judged, reverse=True)
    d, i = dcg(grades, k, sb.gain), dcg(ideal, k, sb.gain)
    relevant = [r for r, g in enumerate(grades) if g >= 1]
    n_relevant = sum(1 for g in judged if g >= 1)
    return {"ndcg": d / i if i else 0.0, "dcg": d, "idcg": i,
            "ap": sum((j + 1) / (r + 1) for j, r in enumerate(relevant)) / n_relevant,
            "rr": 1 / (relevant[0] + 1) if relevant else 0.0,
            "p": sum(1 for r in relevant if r < k) / k, "r": sum(1 for r in relevant if r < k) / n_relevant}[quantity]


def hand_collection(c, quantity):
    per = []
    for grades, a, b in c.queries:
        ideal = sorted(grades, reverse=True)
        idcg = dcg(ideal, c.cutoff, c.gain)
        per.append(tuple(dcg([grades[d - 1] for d in order], c.cutoff, c.gain) / idcg for order in (a, b)))
    if quantity == "wins_b":
        return sum(1 for a, b in per if b > a + 1e-12)
    return sum(v[0 if quantity == "mean_a" else 1] for v in per) / len(per)


def hand_value(ex: Exercise, sb=None) -> float:
    sb = ex.sandbox if sb is None else sb
    if ex.quantity == "discount":
        return 1 / log2(ex.rank + 1)
    if ex.quantity == "loss":
        return 1 - 1 / log2(ex.rank + 1)
    if ex.quantity == "gain":
        return gain(ex.grade, sb.gain if sb else "exp")
    if ex.quantity in ("mean_a", "mean_b", "wins_b"):
        return hand_collection(ex.collection, ex.quantity)
    return hand(sb, ex.quantity, ex.strategy)

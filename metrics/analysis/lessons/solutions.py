"""The worked arithmetic behind an exercise's answer and the diagnosis of the usual mistakes.

A wrong number is matched against the values the usual mistakes give (:func:`mistakes`):
the other gain, a discount of 1/rank or none, IDCG from the retrieved list only, DCG not
normalised, the cutoff ignored, the kept share of a discount given for the loss.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import sandbox
from ..sandbox import Sandbox
from .kinds import SCORE_ROLE, Exercise, is_numeric, quantity_name, quantity_value


@dataclass(frozen=True)
class Mistake:
    """A wrong way to compute the quantity and the value it gives."""

    step: str
    value: float


def mistakes(ex: Exercise, sb: Sandbox | None = None) -> list[Mistake]:
    """The values the usual mistakes give for ``ex.quantity`` on ``sb``: each from the library's
    per-rank gains with one step done wrong."""
    sb = ex.sandbox if sb is None else sb
    q, out = ex.quantity, []
    if q in ("discount", "loss"):
        row = sandbox.discount_table((ex.rank,)).iloc[0]
        if q == "loss":
            out.append(Mistake(f"the share kept at rank {ex.rank}, 1/log2({ex.rank}+1), is not the share lost "
                               "(subtract it from 1)", float(row["discount"])))
        else:
            out.append(Mistake("that is the share lost; the discount is the share kept, 1/log2(rank+1)",
                               float(row["less than rank 1"])))
        out.append(Mistake(f"the discount uses log2(rank + 1), not log2(rank): rank {ex.rank} divides by "
                           f"log2({ex.rank + 1})", 1 / np.log2(ex.rank) if ex.rank > 1 else 1.0))
        if q == "loss" and ex.rank > 1:
            out[-1] = Mistake(out[-1].step, 1 - 1 / np.log2(ex.rank))
        return out
    if q == "gain":
        other = "linear" if sb is None or sb.gain == "exp" else "exp"
        return [Mistake(f"that is the {other} gain", quantity_value(ex, sb, gain=other))]
    if q not in ("ndcg", "dcg", "idcg"):
        return out
    sb = sb if sb is not None else ex.on_list()
    other = "linear" if sb.gain == "exp" else "exp"
    out.append(Mistake(f"the wrong gain: that is the value with {sandbox.GAIN_NAMES[other]}",
                       quantity_value(ex, sb, gain=other)))
    rows = sandbox.per_rank(sb, strategy=ex.strategy)
    k = sb.cutoff
    top = rows.iloc[:k]
    ranks = top["rank"].to_numpy(dtype=np.float64)
    dcg = float(top["dcg"].iloc[-1])
    idcg = float(top["idcg"].iloc[-1])
    wrong = {"dcg": (float((top["gain"] / ranks).sum()), float((top["ideal_gain"] / ranks).sum())),
             "none": (float(top["gain"].sum()), float(top["ideal_gain"].sum()))}
    for key, step in (("dcg", "the wrong discount: 1/rank instead of 1/log2(rank + 1)"),
                      ("none", "no discount at all: gains summed as in CG")):
        d, i = wrong[key]
        value = {"dcg": d, "idcg": i, "ndcg": d / i if i else 0.0}[q]
        out.append(Mistake(step, value))
    if q in ("ndcg", "idcg") and sb.missed:
        out.append(Mistake("IDCG from the retrieved list only: the ideal ranking holds every judged document, "
                           "also those the list missed", quantity_value(ex, sb.replace(missed=()))))
    if q == "ndcg":
        out.append(Mistake("DCG not normalised: divide by IDCG", dcg))
        if len(sb) > k:
            out.append(Mistake(f"the cutoff ignored: that is nDCG of the whole list, not @{k}",
                               quantity_value(ex, sb.replace(cutoff=len(sb)))))
    if q == "ndcg" and idcg == 0:
        return [m for m in out if m.value != 0]
    return out



def diagnose(ex: Exercise, value: float) -> str | None:
    """The usual mistake that gives ``value`` (within the exercise's tolerance), if any."""
    tolerance = max(ex.tolerance, 5e-4)
    for m in mistakes(ex):
        if abs(m.value - value) <= tolerance and abs(m.value - quantity_value(ex)) > tolerance:
            return m.step
    return None



def _terms(column_gain, ranks) -> str:
    terms = [f"{g:g}/log2({r + 1})" for g, r in zip(column_gain, ranks) if g > 0]
    return " + ".join(terms) or "0"


def worked(ex: Exercise, sb: Sandbox | None = None) -> list[str]:
    """The arithmetic behind the answer, one line per step, every number from the library."""
    sb = ex.sandbox if sb is None else sb
    q = ex.quantity
    if ex.kind == "higher":
        lines = []
        for gain in ("exp", "linear"):
            a = quantity_value(ex, ex.sandbox, gain=gain)
            b = quantity_value(ex, ex.other, gain=gain)
            word = sandbox.GAIN_NAMES[gain]
            lines.append(f"{word}: A = {a:.4f}, B = {b:.4f}: " +
                         ("equal" if abs(a - b) <= 1e-9 else f"{'A' if a > b else 'B'} scores higher"))
        return lines
    if ex.kind == "choice" and not is_numeric(ex):
        return [f"{label}: {quantity_name(ex, s)} = {quantity_value(ex, s, strategy=st):.4f}"
                for label, s, st in ex.options]
    if q in ("discount", "loss"):
        row = sandbox.discount_table((ex.rank,)).iloc[0]
        lines = [f"discount at rank {ex.rank} = 1/log2({ex.rank}+1) = 1/{row['log2(rank+1)']:.4f} = "
                 f"{row['discount']:.4f}"]
        if q == "loss":
            lines.append(f"share lost = 1 - {row['discount']:.4f} = {row['less than rank 1']:.4f} "
                         f"({row['less than rank 1']:.0%})")
        return lines
    if q == "gain":
        table = sandbox.gain_table((ex.grade,)).iloc[0]
        return [f"exponential: 2^{ex.grade} - 1 = {table['exponential gain']:g}",
                f"linear: rel = {table['linear gain']:g}"]
    if q in ("mean_a", "mean_b", "wins_b"):
        table = ex.on_collection().per_query()
        if q == "wins_b":
            return [f"B - A > 0 on {int((table['B - A'] > 1e-12).sum())} of {len(table)} queries"]
        col = "A" if q == "mean_a" else "B"
        return [f"mean = ({' + '.join(f'{v:.4f}' for v in table[col])}) / {len(table)} = {table[col].mean():.4f}"]
    if q in SCORE_ROLE:
        return [f"{quantity_name(ex, sb)} = {quantity_value(ex, sb):.4f} (relevant = grade >= 1)"]
    sb = sb if sb is not None else ex.on_list()
    rows = sandbox.per_rank(sb, strategy=ex.strategy)
    k = sb.cutoff
    top = rows.iloc[:k]
    dcg, idcg = float(top["dcg"].iloc[-1]), float(top["idcg"].iloc[-1])
    gain = "2^rel - 1" if sb.gain == "exp" else "rel"
    lines = [f"gain = {gain}; discount = 1/log2(rank + 1)",
             f"DCG@{k} = {_terms(top['gain'], top['rank'])} = {dcg:.4f}",
             f"IDCG@{k} = {_terms(top['ideal_gain'], top['rank'])} = {idcg:.4f} (the judged documents sorted "
             "by grade, also those the list missed)"]
    if q == "ndcg" or ex.kind == "reorder":
        ndcg = dcg / idcg if idcg else 0.0
        lines.append(f"nDCG@{k} = {dcg:.4f} / {idcg:.4f} = {ndcg:.4f}" if idcg else f"nDCG@{k} = 0 (IDCG = 0)")
    return lines


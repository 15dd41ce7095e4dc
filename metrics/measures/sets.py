"""Set measures over the whole retrieved list (trec_eval ``set_*`` and ``utility``).

With n documents retrieved, rr of them relevant and R relevant in the qrels:
SetP = rr / n; SetP(relative=True) = SetRelP = rr / min(n, R);
SetR = rr / R; SetAP = rr^2 / (n * R) (trec_eval ``set_map``);
SetF(beta=b) = (b + 1) * P * R' / (b * P + R') with P = rr / n, R' = rr / R
(trec_eval ``set_F``; b weighs recall against precision);
utility(a, b, c, d, docs) = a * rr + b * (n - rr) + c * (R - rr) + d * (docs + rr - n - R),
the contingency-table utility with docs documents in the collection (trec_eval -N),
0 for a query the run lacks (trec_eval's rule). Each is 0 when a divisor is 0.
"""
from __future__ import annotations

import numpy as np

from ..errors import MetricsError
from .base import Alias, Family, Param
from .context import Context, safe_divide
from .cutoff import BINARY_PARAMS
from .trec_names import TrecMeasure


def _set_p(ctx: Context, m):
    num_ret, rel_ret, num_rel = ctx.counts(ctx.level(m))
    if m.param("relative"):
        return safe_divide(rel_ret, np.where((num_ret > 0) & (num_rel > 0), np.minimum(num_ret, num_rel), 0.0))
    return safe_divide(rel_ret, num_ret)


def _set_r(ctx: Context, m):
    _, rel_ret, num_rel = ctx.counts(ctx.level(m))
    return safe_divide(rel_ret, num_rel)


def _set_ap(ctx: Context, m):
    num_ret, rel_ret, num_rel = ctx.counts(ctx.level(m))
    return safe_divide(rel_ret * rel_ret, num_ret * num_rel)


def _set_f(ctx: Context, m):
    num_ret, rel_ret, num_rel = ctx.counts(ctx.level(m))
    beta = m.param("beta")
    precision, recall = safe_divide(rel_ret, num_ret), safe_divide(rel_ret, num_rel)
    return np.where(rel_ret > 0, safe_divide((beta + 1.0) * precision * recall, beta * precision + recall), 0.0)


def _utility(ctx: Context, m):
    num_ret, rel_ret, num_rel = ctx.counts(ctx.level(m))
    a, b, c, d = (m.param(k) for k in ("a", "b", "c", "d"))
    value = (a * rel_ret + b * (num_ret - rel_ret) + c * (num_rel - rel_ret)
             + d * (m.param("docs") + rel_ret - num_ret - num_rel))
    return np.where(ctx.ranked.missing, 0.0, value)


SET_P = Family("SetP", "Set precision: relevant retrieved / retrieved (relative: / min(retrieved, R)).",
               {**BINARY_PARAMS, "relative": Param(bool, False, None, "divide by min(retrieved, R)")},
               _set_p, cutoff="none")
SET_R = Family("SetR", "Set recall: relevant retrieved / relevant.", BINARY_PARAMS, _set_r, cutoff="none")
SET_AP = Family("SetAP", "Unranked set AP: SetP * SetR.", BINARY_PARAMS, _set_ap, cutoff="none")
SET_F = Family("SetF", "Set F: weighted harmonic mean of SetP and SetR.",
               {**BINARY_PARAMS, "beta": Param(float, 1.0, None, "relative importance of recall to precision")},
               _set_f, cutoff="none")
UTILITY = Family("utility", "Contingency-table utility a*rel_ret + b*nonrel_ret + c*rel_missed + d*nonrel_missed.",
                 {**BINARY_PARAMS, "a": Param(float, 1.0), "b": Param(float, -1.0), "c": Param(float, 0.0),
                  "d": Param(float, 0.0), "docs": Param(int, 0, None, "documents in the collection (-N)")},
                 _utility, cutoff="none")

FAMILIES = (SET_P, SET_R, SET_AP, SET_F, UTILITY)
ALIASES = {"SetRelP": Alias(SET_P, (("relative", True),))}


def _utility_spelling(values, options) -> str:
    if len(values) != 4:
        raise MetricsError(f"utility needs 4 coefficients, got {len(values)}",
                           fix="for example utility.1,-1,0,0 (retrieved relevant, retrieved non-relevant, "
                               "missed relevant, missed non-relevant)")
    params = [f"{k}={v!r}" for k, v in zip("abcd", values)]
    docs = int(options.get("num_docs") or 0)
    if docs:
        params.append(f"docs={docs}")
    return f"utility({','.join(params)})"


TREC = (
    TrecMeasure("utility", "params", _utility_spelling, (1.0, -1.0, 0.0, 0.0)),
    TrecMeasure("set_P", "plain", lambda p, o: "SetP"),
    TrecMeasure("set_relative_P", "plain", lambda p, o: "SetRelP"),
    TrecMeasure("set_recall", "plain", lambda p, o: "SetR"),
    TrecMeasure("set_map", "plain", lambda p, o: "SetAP"),
    TrecMeasure("set_F", "params", lambda values, o: f"SetF(beta={values[0]!r})", (1.0,)),
)

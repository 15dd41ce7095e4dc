"""R-precision and precision at multiples of R (trec_eval ``Rprec``, ``Rprec_mult``).

Rprec = rel@R / R, R = the number of relevant documents in the qrels.
Rprec_mult(mult=x) = rel@c / c with c = floor(x * R + 0.9) (trec_eval's
rounding), i.e. P@c, filling with non-relevant documents past the end of the
list; 0 when c = 0. Rprec_mult(mult=1) equals Rprec.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Param
from .context import Context, safe_divide
from .cutoff import BINARY_PARAMS
from .trec_names import TrecMeasure


def _rprec(ctx: Context, m):
    level = ctx.level(m)
    num_rel = ctx.num_rel(level)
    return safe_divide(ctx.top_sum(ctx.relevant(level), 1.0, num_rel), num_rel)


def _rprec_mult(ctx: Context, m):
    level = ctx.level(m)
    cutoff = np.floor(m.param("mult") * ctx.num_rel(level) + 0.9)
    return safe_divide(ctx.top_sum(ctx.relevant(level), 1.0, cutoff), cutoff)


RPREC = Family("Rprec", "Precision at rank R, R = number of relevant documents.", BINARY_PARAMS, _rprec,
               cutoff="none")
RPREC_MULT = Family("Rprec_mult", "Precision at rank floor(mult * R + 0.9), R = number of relevant documents.",
                    {**BINARY_PARAMS, "mult": Param(float, None, None, "multiple of R", required=True)},
                    _rprec_mult, cutoff="none")

FAMILIES = (RPREC, RPREC_MULT)
ALIASES: dict[str, Family] = {}
TREC = (
    TrecMeasure("Rprec", "plain", lambda p, o: "Rprec"),
    TrecMeasure("Rprec_mult", "cut_double", lambda x, o: f"Rprec_mult(mult={x!r})",
                (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
)

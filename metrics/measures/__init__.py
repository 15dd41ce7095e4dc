"""Measure families (one module each) and the registry behind ``parse``.

Each family is a declarative spec (:class:`~metrics.measures.base.Family`)
with vectorised kernels over a :class:`~metrics.measures.context.Context`.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import ap, ndcg, rr, set_based
from .base import Family, Measure, Param
from .base import parse as _parse
from .context import Context, discount, gain_of

REGISTRY: dict[str, Family] = {f.name: f for mod in (ndcg, ap, rr, set_based) for f in mod.FAMILIES}
# aliases from trec_eval / ranx spellings
REGISTRY.update({"ndcg": ndcg.NDCG, "MAP": ap.AP, "MRR": rr.RR, "Recall": set_based.R,
                 "Precision": set_based.P, "num_ret": set_based.NUM_RET, "num_rel": set_based.NUM_REL,
                 "num_rel_ret": set_based.NUM_REL_RET})


@lru_cache(maxsize=4096)
def _parse_cached(text: str, family_only: bool = False) -> Measure:
    return _parse(text, REGISTRY, family_only)


def parse(text) -> Measure:
    """Parse an ir_measures-style measure name, e.g. ``nDCG(dcg=exp-log2)@10``."""
    return text if isinstance(text, Measure) else _parse_cached(str(text))


def parse_family(text) -> Measure:
    """Parse a measure family for a curve over k: ``P`` or ``nDCG(dcg=exp-log2)``, no cutoff."""
    from ..errors import MetricsError

    measure = text if isinstance(text, Measure) else _parse_cached(str(text), True)
    if measure.cutoff is not None:
        raise MetricsError(f"curve of {str(text)!r}: give the family without a cutoff",
                           fix=f"for example {measure.at(None)}")
    return measure


def compute(ctx: Context, measure: Measure) -> np.ndarray:
    """One value per query of ``ctx``'s run."""
    view = ctx.view(bool(measure.param("judged_only"))) if "judged_only" in measure.family.params else ctx
    return measure.family.kernel(view, measure)


def compute_curve(ctx: Context, measure: Measure, max_k: int) -> np.ndarray:
    """(queries x max_k) values of ``measure``'s family at every cutoff 1..max_k."""
    from ..errors import MetricsError

    if measure.family.curve is None:
        raise MetricsError(f"{measure.name} has no curve over k",
                           fix="curves exist for nDCG, DCG, IDCG, AP, RR, P, R, Success and Judged")
    view = ctx.view(bool(measure.param("judged_only"))) if "judged_only" in measure.family.params else ctx
    return measure.family.curve(view, measure, max_k)


def with_gain(text: str, gain: str) -> str:
    """Rewrite an nDCG/DCG/IDCG measure to the given gain ("exp" = 2^rel-1, "linear" = rel)."""
    m = parse(text)
    if "dcg" not in m.family.params or m.param("gains"):
        return str(m)
    params = dict(m.params)
    params.pop("dcg", None)
    if gain in ("exp", "exp-log2"):
        params["dcg"] = "exp-log2"
    elif gain not in ("linear", "log2"):
        from ..errors import MetricsError
        raise MetricsError(f"unknown gain {gain!r}", fix="use exp or linear")
    return str(Measure(m.family, m.name, tuple(sorted(params.items())), m.cutoff))


__all__ = ["REGISTRY", "Family", "Measure", "Param", "Context", "parse", "compute", "compute_curve",
           "with_gain", "parse_family", "gain_of", "discount"]

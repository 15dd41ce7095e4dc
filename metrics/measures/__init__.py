"""Measure families (one module each) and the registry behind ``parse``.

Each family is a declarative spec (:class:`~metrics.measures.base.Family`)
with vectorised kernels over a :class:`~metrics.measures.context.Context`.
Each module also lists its other names (``ALIASES``) and its trec_eval
measures (``TREC``, see :mod:`~metrics.measures.trec_names`), so a name
such as ``ndcg_cut.10`` or ``P.5,10`` means what it means in trec_eval 10.
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from ..errors import MetricsError
from . import (
    ap,
    bpref,
    counts,
    cutoff,
    err,
    g,
    iprec,
    judgment_groups,
    ndcg,
    ndcg_rel,
    prefs,
    rbp,
    rprec,
    rr,
    sets,
    text,
)
from .base import GEOMETRIC_FLOOR, Alias, Family, Measure, Param
from .base import parse as _parse
from .context import Context, discount, gain_of
from .iprec import interpolated_precision
from .text import TextMeasure, relstring
from .trec_names import ORDER, FormatMeasure, TrecMeasure, TrecValue, is_trec_spelling
from .trec_names import plan as _plan

_MODULES = (ndcg, ap, rr, cutoff, rprec, counts, sets, iprec, bpref, ndcg_rel, g, rbp, err)

REGISTRY: dict[str, Family | Alias] = {f.name: f for mod in _MODULES for f in mod.FAMILIES}
for _mod in _MODULES:
    REGISTRY.update(_mod.ALIASES)

TREC_MEASURES: dict[str, TrecMeasure] = {t.name: t for mod in (*_MODULES, text, prefs, judgment_groups)
                                          for t in mod.TREC}
assert set(TREC_MEASURES) == set(ORDER), sorted(set(TREC_MEASURES) ^ set(ORDER))


@lru_cache(maxsize=4096)
def _parse_cached(text: str, family_only: bool = False) -> Measure:
    return _parse(text, REGISTRY, family_only)


def _trec_first(text: str) -> bool:
    """True when ``text`` is read as trec_eval spells it: its name is a trec_eval measure or nickname
    and not spelled exactly as one of our names (``map``, ``rbp``, ``P.5``; but ``P``, ``ndcg``)."""
    match = re.match(r"\s*([A-Za-z0-9_]*)", text)
    name = match.group(1) if match else ""
    return is_trec_spelling(text, TREC_MEASURES) and (name not in REGISTRY or "." in text)


def parse(text) -> Measure:
    """Parse one measure: ``nDCG(dcg='exp-log2')@10``, or a trec_eval spelling of one (``ndcg_cut.10``).

    A trec_eval spelling that stands for several measures (``P.5,10``, ``P``)
    is refused here; :func:`expand` gives its list.
    """
    if isinstance(text, Measure):
        return text
    text = str(text)
    if not _trec_first(text):
        try:
            return _parse_cached(text)
        except MetricsError as error:
            if not is_trec_spelling(text, TREC_MEASURES):
                raise
            count = len(expand_trec(text, numeric_only=True))
            raise MetricsError(error.problem, fix=f"{error.fix} (trec_eval's {text!r} stands for {count} "
                                                  "measures: metrics.measures.expand gives them)") from None
    measures = expand_trec(text, numeric_only=True)
    if len(measures) != 1:
        raise MetricsError(f"{text!r} stands for {len(measures)} measures in trec_eval",
                           fix="pass it to metrics.evaluate, which expands it, or use metrics.measures.expand")
    return measures[0]


def expand(text) -> list[Measure]:
    """The measures a name stands for: one for an ir_measures-style name, several for trec_eval's
    ``P.5,10``, ``iprec_at_recall`` or a nickname (``official``, ``all_trec``, ``set``).

    A name that is ours and complete means that measure; a trec_eval name means trec_eval's
    measures (``P`` alone: P.5 to P.1000; ``Rprec_mult`` alone: its ten multiples). Text values
    (relstring, runid) are left out: they are not numbers.
    """
    if isinstance(text, Measure):
        return [text]
    text = str(text)
    if not _trec_first(text):
        try:
            return [_parse_cached(text)]
        except MetricsError:
            if not is_trec_spelling(text, TREC_MEASURES):
                raise
    return expand_trec(text, numeric_only=True)


def expand_trec(text: str, *, numeric_only: bool = False, num_docs: int = 0) -> list:
    """Our measures for one trec_eval ``-m`` argument, in trec_eval's order (see :func:`trec_plan`)."""
    values = trec_plan([text], num_docs=num_docs)
    other = next((v for v in values if isinstance(v.measure, FormatMeasure)), None)
    if other is not None:
        raise MetricsError(f"{other.printed} needs {' or '.join(other.measure.formats)} judgments, not qrels",
                           fix=f"python -m metrics trec_eval -R {other.measure.formats[0]} computes it")
    return [v.measure for v in values if not (numeric_only and isinstance(v.measure, TextMeasure))]


def trec_plan(args, *, num_docs: int = 0) -> list[TrecValue]:
    """What ``trec_eval -m ARG ...`` prints, in its order: printed name, our measure, trec_eval's spec.

    Measures are parsed here; text values (relstring, runid) stay :class:`TextMeasure`.
    """
    values = _plan(list(args), TREC_MEASURES, {"num_docs": num_docs})
    return [TrecValue(v.printed, parse(v.measure) if isinstance(v.measure, str) else v.measure, v.spec)
            for v in values]


def compute(ctx: Context, measure: Measure) -> np.ndarray:
    """One value per query of ``ctx``'s run."""
    view = ctx.view(bool(measure.param("judged_only"))) if "judged_only" in measure.family.params else ctx
    return measure.family.kernel(view, measure)


def compute_curve(ctx: Context, measure: Measure, max_k: int) -> np.ndarray:
    """(queries x max_k) values of ``measure``'s family at every cutoff 1..max_k."""
    if measure.family.curve is None:
        with_curves = ", ".join(sorted({f.name for f in REGISTRY.values() if isinstance(f, Family) and f.curve}))
        raise MetricsError(f"{measure.name} has no curve over k", fix=f"curves exist for {with_curves}")
    view = ctx.view(bool(measure.param("judged_only"))) if "judged_only" in measure.family.params else ctx
    return measure.family.curve(view, measure, max_k)


def aggregate(measure, values) -> float:
    """The summary of per-query values over queries, as trec_eval forms it.

    Mean (NaN if any value is NaN, as trec_eval's sum), sum for counts, or the
    geometric mean exp(mean(log(max(v, 1e-5)))) for gm_map and gm_bpref. Values
    are added one after another in query order, as trec_eval adds them, so a
    mean that falls on a rounding boundary prints as trec_eval prints it.
    """
    rule = parse(measure).family.aggregate
    values = np.asarray(values, dtype=np.float64)
    if rule == "gmean":
        values = np.log(np.maximum(values, GEOMETRIC_FLOOR))
    total = float(np.cumsum(values)[-1]) + 0.0 if len(values) else 0.0  # + 0.0: no -0.0, as trec_eval's 0 + ...
    if rule == "sum":
        return total
    if len(values) == 0:
        return float("nan")
    return float(np.exp(total / len(values))) if rule == "gmean" else total / len(values)


def iprec_curve(ranked, levels=iprec.ELEVEN_POINTS, *, rel_level: int = 1, rounding: str = "trec_eval10") -> np.ndarray:
    """(queries x levels) interpolated precision of ``ranked`` at any recall levels, all queries at once
    (``rounding="trec_eval9"``: the recall cut-offs of trec_eval 9.0.8, as pytrec_eval computes them)."""
    return interpolated_precision(Context(ranked, rel_level=rel_level), levels, rounding=rounding)


def parse_family(text) -> Measure:
    """Parse a measure family for a curve over k: ``P`` or ``nDCG(dcg='exp-log2')``, no cutoff."""
    measure = text if isinstance(text, Measure) else _parse_cached(str(text), True)
    if measure.cutoff is not None:
        raise MetricsError(f"curve of {str(text)!r}: give the family without a cutoff",
                           fix=f"for example {measure.at(None)}")
    return measure


def with_gain(text: str, gain: str) -> str:
    """Rewrite an nDCG-like measure to the given gain ("exp" = 2^rel-1, "linear" = rel)."""
    m = parse(text)
    if "dcg" not in m.family.params or m.param("gains"):
        return str(m)
    params = dict(m.params)
    params.pop("dcg", None)
    if gain in ("exp", "exp-log2"):
        params["dcg"] = "exp-log2"
    elif gain not in ("linear", "log2"):
        raise MetricsError(f"unknown gain {gain!r}", fix="use exp or linear")
    return str(Measure(m.family, m.name, tuple(sorted(params.items())), m.cutoff))


__all__ = ["REGISTRY", "TREC_MEASURES", "Family", "Alias", "Measure", "Param", "Context", "TrecMeasure",
           "TrecValue", "TextMeasure", "parse", "expand", "expand_trec", "trec_plan", "compute", "compute_curve",
           "aggregate", "iprec_curve", "interpolated_precision", "relstring", "with_gain", "parse_family",
           "gain_of", "discount"]

"""Measures over several judgment groups (trec_eval 10's ``-R qrels_jg``): ``map_avgjg``, ``P_avgjg``,
``Rprec_mult_avgjg``.

A ``qrels_jg`` file is a qrels whose second field names a judgment group (one judge, or one
user's need); a query may be judged by several. Each measure is its qrels measure (``map``,
``P``, ``Rprec_mult``) computed against each group's judgments alone, then averaged over the
groups that judged the query (added in group order, as strings, then divided by their number),
then over queries. The ranking is the qrels one (score descending, ties by docno descending).
:func:`metrics.engines.judgment_groups.evaluate_groups` computes them with the qrels kernels.
"""
from __future__ import annotations

from .trec_names import FormatMeasure, TrecMeasure

FORMATS = ("qrels_jg",)
DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
DEFAULT_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

TREC = (
    TrecMeasure("map_avgjg", "plain", lambda p, o: FormatMeasure("map_avgjg", FORMATS, "mean", "AP")),
    TrecMeasure("P_avgjg", "cut_long", lambda k, o: FormatMeasure("P_avgjg", FORMATS, "mean", f"P@{k}"),
                DEFAULT_CUTOFFS),
    TrecMeasure("Rprec_mult_avgjg", "cut_double",
                lambda x, o: FormatMeasure("Rprec_mult_avgjg", FORMATS, "mean", f"Rprec_mult(mult={x!r})"),
                DEFAULT_MULTIPLES),
)

FAMILIES = ()
ALIASES: dict = {}

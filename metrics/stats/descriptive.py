"""Descriptive measures: numbers that describe a run or a qrels (how many documents were retrieved,
judged or relevant) rather than how well a run ranks. They are reported beside the others but never
tested for significance nor marked: a difference in Judged@10 says the pools differ, not that a
system is better, and adding such cells to a correction family only weakens the real tests.
"""
from __future__ import annotations

import re

from ..errors import MetricsError
from ..measures import parse

DESCRIPTIVE_FAMILIES = frozenset({"Judged", "unj", "NumQ", "NumRet", "NumRel", "NumRelRet",
                                  "num_nonrel_judged_ret", "IDCG", "rbp_resid"})
"""Families whose values count or describe documents (trec_eval's num_*, Judged@k, unjudged share,
the ideal DCG of the qrels, RBP's residual) rather than score a ranking."""

_FAMILY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)")


def is_descriptive(measure) -> bool:
    """Whether ``measure`` (a name such as ``Judged@10`` or a parsed measure) is descriptive."""
    name = str(measure)
    try:
        family = parse(name).family.name
    except MetricsError:
        found = _FAMILY.match(name)
        family = found.group(1) if found else name
    return family in DESCRIPTIVE_FAMILIES

"""Exercises: the check of a student's answer, with the worked arithmetic and the usual mistake.

The parts live beside this module: ``collection`` (a tiny collection of queries), ``kinds``
(an exercise's inputs, their validation and the computed answer), ``worked`` (the arithmetic
and the diagnosis of mistakes), ``links`` (exercises as plain data and as a link that holds no
answer). Their public names are importable from here too.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ...errors import MetricsError
from .. import sandbox
from .collection import Collection
from .kinds import (
    DEFAULT_TOLERANCE,
    KINDS,
    LIST_QUANTITIES,
    QUANTITIES,
    QUANTITY_NAMES,
    SCORE_ROLE,
    Exercise,
    answer,
    is_numeric,
    option_labels,
    option_values,
    quantity_name,
    quantity_value,
)
from .links import LINK_VERSION, decode, encode, from_spec
from .solutions import Mistake, diagnose, mistakes, worked

__all__ = ["DEFAULT_TOLERANCE", "KINDS", "LINK_VERSION", "LIST_QUANTITIES", "QUANTITIES", "QUANTITY_NAMES",
           "SCORE_ROLE", "Collection", "Exercise", "Mistake", "Result", "answer", "check", "decode", "diagnose",
           "encode", "from_spec", "is_numeric", "mistakes", "option_labels", "option_values", "quantity_name",
           "quantity_value", "worked"]


@dataclass(frozen=True)
class Result:
    """A checked answer: right or not, the value, the mistake it matches, the worked steps."""

    correct: bool
    value: object
    mistake: str | None
    steps: list
    table: pd.DataFrame | None


def check(ex: Exercise, response) -> Result:
    """Check a student's ``response`` (a float, an option index, an order of the list's names,
    or {"exp": ..., "linear": ...}); the arithmetic is worked whether the answer is right or not."""
    right = answer(ex)
    mistake = None
    if ex.kind == "number":
        value = float(response)
        correct = abs(value - right) <= ex.tolerance + 1e-12
        if not correct:
            mistake = diagnose(ex, value)
    elif ex.kind == "choice":
        correct = int(response) == right
        if not correct and is_numeric(ex):
            mistake = diagnose(ex, float(ex.options[int(response)]))
    elif ex.kind == "reorder":
        order = list(response)
        listed = ex.on_list()
        if sorted(order) != sorted(listed.names):
            raise MetricsError("the order must hold every document of the list once")
        mine = listed.reordered([listed.names.index(n) for n in order])
        reached = quantity_value(ex, mine)
        correct = reached + 1e-12 >= ex.target
        return Result(correct, reached, None if correct else "move the highest grades to the top ranks",
                      worked(ex, mine), sandbox.per_rank(mine))
    else:
        correct = all(response.get(g) == right[g] for g in right)
    return Result(correct, right, mistake, worked(ex), _table(ex))



def _table(ex: Exercise) -> pd.DataFrame | None:
    if ex.quantity in ("mean_a", "mean_b", "wins_b"):
        return ex.on_collection().per_query()
    if ex.kind == "choice" and not is_numeric(ex):
        return pd.DataFrame({"option": option_labels(ex), quantity_name(ex, ex.sandbox): option_values(ex)})
    if ex.sandbox is not None and ex.quantity in LIST_QUANTITIES and ex.kind != "higher":
        return sandbox.per_rank(ex.sandbox, strategy=ex.strategy)
    return None


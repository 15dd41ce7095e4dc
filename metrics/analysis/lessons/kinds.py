"""Exercise kinds: an exercise's inputs, their validation, and the answer the engine computes.

An :class:`Exercise` holds only the question's inputs (a list, its grades, the cutoff, the
gain, the kind and its parameters), never its answer: :func:`answer` computes it with the
sandbox's engine every time, so an exercise link carries nothing the student could read the
answer from, and a lesson file holds no hand-typed result.

Kinds
    ``number``  predict a value (``quantity``) within ``tolerance``
    ``choice``  pick one of ``options``: numbers (the right one is nearest to ``quantity``) or
                labelled variants of the list (the right one scores highest, or lowest, on it)
    ``reorder`` put the list in an order whose nDCG@k reaches ``target``
    ``higher``  which of two lists (A, B) scores higher under exponential and under linear gain
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import MetricsError
from .. import sandbox
from ..sandbox import Sandbox
from .collection import Collection

KINDS = ("number", "choice", "reorder", "higher")
LIST_QUANTITIES = ("ndcg", "dcg", "idcg", "ap", "rr", "p", "r")
QUANTITIES = (*LIST_QUANTITIES, "discount", "loss", "gain", "mean_a", "mean_b", "wins_b")
QUANTITY_NAMES = {"ndcg": "nDCG@{k}", "dcg": "DCG@{k}", "idcg": "IDCG@{k}", "ap": "AP", "rr": "RR",
                  "p": "P@{k}", "r": "R@{k}", "discount": "the discount at rank {rank}",
                  "loss": "the share lost at rank {rank}", "gain": "the gain of grade {grade}",
                  "mean_a": "the mean nDCG@{k} of system A", "mean_b": "the mean nDCG@{k} of system B",
                  "wins_b": "the number of queries where B beats A"}
SCORE_ROLE = {"ap": "AP", "rr": "RR", "p": "P", "r": "R"}
DEFAULT_TOLERANCE = 0.005


# -- the exercise ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Exercise:
    """One question. ``sandbox`` is its list (list A for ``higher``), ``other`` list B."""

    kind: str
    question: str
    hint: str = ""
    sandbox: Sandbox | None = None
    other: Sandbox | None = None
    collection: Collection | None = None
    quantity: str = "ndcg"
    rank: int = 0
    grade: int = 0
    strategy: str = "zero"
    tolerance: float = DEFAULT_TOLERANCE
    options: tuple = ()
    pick: str = "highest"
    target: float = 0.0

    def __post_init__(self):
        _check(self)

    def on_list(self) -> Sandbox:
        """The exercise's list; MetricsError for an exercise without one (on a collection)."""
        if self.sandbox is None:
            raise MetricsError(f"a {self.quantity} exercise needs a list", fix="give grades = [...] or a preset")
        return self.sandbox

    def on_collection(self) -> Collection:
        """The exercise's collection; MetricsError for an exercise without one."""
        if self.collection is None:
            raise MetricsError(f"a {self.quantity} exercise needs a collection", fix="give [example.collection]")
        return self.collection

    def spec(self) -> dict:
        """The plain data of the exercise (what a lesson file or a link holds)."""
        out: dict[str, Any] = {"kind": self.kind, "question": self.question}
        if self.hint:
            out["hint"] = self.hint
        if self.sandbox is not None:
            out.update(_list_spec(self.sandbox))
        if self.other is not None:
            out["b"] = _grades_spec(self.other.grades)
        if self.collection is not None:
            out["collection"] = {"queries": [[list(g), list(a), list(b)] for g, a, b in self.collection.queries],
                                 "cutoff": self.collection.cutoff, "gain": self.collection.gain}
        defaults = {f.name: f.default for f in dataclasses.fields(Exercise)}
        for key in ("quantity", "rank", "grade", "strategy", "tolerance", "pick", "target"):
            if getattr(self, key) != defaults[key]:
                out[key] = getattr(self, key)
        if self.options:
            out["options"] = [o if isinstance(o, (int, float)) else
                              {"label": o[0], **_list_spec(o[1]), **({"strategy": o[2]} if o[2] else {})}
                              for o in self.options]
        return out


def _grades_spec(grades) -> list:
    return ["?" if g is None else g for g in grades]


def _list_spec(sb: Sandbox) -> dict:
    out = {"grades": _grades_spec(sb.grades), "cutoff": sb.cutoff, "gain": sb.gain}
    if sb.missed:
        out["missed"] = list(sb.missed)
    if sb.names != Sandbox(grades=sb.grades).names:
        out["names"] = list(sb.names)
    return out



def _check(ex: Exercise) -> None:
    if ex.kind not in KINDS:
        raise MetricsError(f"unknown kind {ex.kind!r}", fix=f"use one of {', '.join(KINDS)}")
    if ex.quantity not in QUANTITIES:
        raise MetricsError(f"unknown quantity {ex.quantity!r}", fix=f"use one of {', '.join(QUANTITIES)}")
    if ex.strategy not in sandbox.STRATEGIES:
        raise MetricsError(f"unknown strategy {ex.strategy!r}", fix=f"use one of {', '.join(sandbox.STRATEGIES)}")
    if ex.quantity in ("mean_a", "mean_b", "wins_b") and ex.collection is None:
        raise MetricsError(f"quantity {ex.quantity} needs a collection", fix="give the lesson a collection example")
    if ex.quantity in LIST_QUANTITIES and ex.kind != "higher" and ex.sandbox is None:
        raise MetricsError("the exercise has no list", fix="give grades = [3, 0, 2, ...]")
    if ex.quantity in ("discount", "loss") and ex.rank < 1:
        raise MetricsError(f"quantity {ex.quantity} needs rank >= 1", fix="add rank = 5")
    if ex.quantity == "gain" and ex.grade not in sandbox.GRADES:
        raise MetricsError("quantity gain needs grade 0-4", fix="add grade = 3")
    if not ex.tolerance >= 0:
        raise MetricsError("tolerance must be >= 0")
    if ex.kind == "choice":
        if len(ex.options) < 2:
            raise MetricsError("a choice needs at least 2 options")
        if ex.pick not in ("highest", "lowest"):
            raise MetricsError(f"pick must be highest or lowest, got {ex.pick!r}")
        values = option_values(ex)
        best = values.max() if ex.pick == "highest" or is_numeric(ex) else values.min()
        if is_numeric(ex):
            distance = np.abs(values - quantity_value(ex, ex.sandbox))
            if np.sum(distance <= distance.min() + 1e-9) > 1:
                raise MetricsError("two options are equally near the computed value", fix="make the options distinct")
        elif np.sum(np.abs(values - best) <= 1e-9) > 1:
            raise MetricsError("two options share the best value, so no single answer is right",
                               fix="change the lists so that one option wins")
    if ex.kind == "reorder":
        if ex.sandbox is None or not 0 < ex.target <= 1:
            raise MetricsError("a reorder exercise needs a list and a target between 0 and 1", fix="add target = 0.9")
        best = quantity_value(ex, ex.sandbox.ideal())
        if best + 1e-12 < ex.target:
            raise MetricsError(f"no order of this list reaches the target (the ideal order gives {best:.4f})",
                               fix="lower the target")
        if quantity_value(ex, ex.sandbox) + 1e-12 >= ex.target:
            raise MetricsError("the list already reaches the target", fix="start from a worse order")
    if ex.kind == "higher" and (ex.sandbox is None or ex.other is None):
        raise MetricsError("a higher exercise needs two lists: grades (A) and b (B)")


def is_numeric(ex: Exercise) -> bool:
    return all(isinstance(o, float) for o in ex.options)


# -- computing ----------------------------------------------------------------------------------------
def quantity_value(ex: Exercise, sb: Sandbox | None = None, *, gain: str | None = None,
                   strategy: str | None = None) -> float:
    """``ex.quantity`` computed by the library on ``sb`` (default: the exercise's list), under the
    unjudged ``strategy`` (default: the exercise's)."""
    sb = ex.sandbox if sb is None else sb
    q = ex.quantity
    if gain is not None and sb is not None:
        sb = sb.replace(gain=gain)
    if q in ("discount", "loss"):
        row = sandbox.discount_table((ex.rank,)).iloc[0]
        return float(row["discount"] if q == "discount" else row["less than rank 1"])
    if q == "gain":
        table = sandbox.gain_table((ex.grade,))
        return float(table["exponential gain" if (gain or (sb.gain if sb else "exp")) == "exp"
                           else "linear gain"].iloc[0])
    if q in ("mean_a", "mean_b", "wins_b"):
        return ex.on_collection().summary()[q]
    if sb is None:
        sb = ex.on_list()
    values = sandbox.scores(sb, strategy=strategy or ex.strategy)
    word = "exp" if sb.gain == "exp" else "linear"
    role = {"ndcg": f"nDCG {word}", "dcg": f"DCG {word}", "idcg": f"IDCG {word}"}.get(q) or SCORE_ROLE[q]
    return float(values[role])


def option_values(ex: Exercise) -> np.ndarray:
    if is_numeric(ex):
        return np.asarray(ex.options, dtype=np.float64)
    return np.array([quantity_value(ex, sb, strategy=strategy) for _, sb, strategy in ex.options])


def answer(ex: Exercise):
    """The right answer, computed: a float (number), an option index (choice), the best
    reachable nDCG@k (reorder, with the ideal order), or {"exp": "A"|"B"|"equal", "linear": ...}."""
    if ex.kind == "number":
        return quantity_value(ex)
    if ex.kind == "choice":
        values = option_values(ex)
        if is_numeric(ex):
            return int(np.argmin(np.abs(values - quantity_value(ex))))
        return int(np.argmax(values) if ex.pick == "highest" else np.argmin(values))
    if ex.kind == "reorder":
        return quantity_value(ex, ex.on_list().ideal())
    return {gain: _higher(ex, gain) for gain in ("exp", "linear")}


def _higher(ex: Exercise, gain: str) -> str:
    a = quantity_value(ex, ex.sandbox, gain=gain)
    b = quantity_value(ex, ex.other, gain=gain)
    return "equal" if abs(a - b) <= 1e-9 else ("A" if a > b else "B")


def option_labels(ex: Exercise) -> list[str]:
    return [f"{o:g}" if isinstance(o, float) else o[0] for o in ex.options]



def quantity_name(ex: Exercise, sb: Sandbox | None) -> str:
    k = sb.cutoff if sb is not None else (ex.collection.cutoff if ex.collection else 0)
    return QUANTITY_NAMES[ex.quantity].format(k=k, rank=ex.rank, grade=ex.grade)


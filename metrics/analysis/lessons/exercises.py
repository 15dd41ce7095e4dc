"""Exercises: the question, the answer the engine computes, the check of a student's answer,
the worked arithmetic and the diagnosis of the usual mistakes.

An :class:`Exercise` holds only the question's inputs (a list, its grades, the cutoff, the
gain, the kind and its parameters), never its answer: :func:`answer` computes it with the
sandbox's engine every time, so an exercise link (:func:`encode`) carries nothing the student
could read the answer from, and a lesson file holds no hand-typed result.

Kinds
    ``number``  predict a value (``quantity``) within ``tolerance``
    ``choice``  pick one of ``options``: numbers (the right one is nearest to ``quantity``) or
                labelled variants of the list (the right one scores highest, or lowest, on it)
    ``reorder`` put the list in an order whose nDCG@k reaches ``target``
    ``higher``  which of two lists (A, B) scores higher under exponential and under linear gain

A wrong number is matched against the values the usual mistakes give (:func:`mistakes`):
the other gain, a discount of 1/rank or none, IDCG from the retrieved list only, DCG not
normalised, the cutoff ignored, the kept share of a discount given for the loss.
"""
from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ... import io
from ...errors import MetricsError
from ...evaluate import evaluate
from ...measures import with_gain
from .. import sandbox
from ..sandbox import Sandbox

KINDS = ("number", "choice", "reorder", "higher")
LIST_QUANTITIES = ("ndcg", "dcg", "idcg", "ap", "rr", "p", "r")
QUANTITIES = (*LIST_QUANTITIES, "discount", "loss", "gain", "mean_a", "mean_b", "wins_b")
QUANTITY_NAMES = {"ndcg": "nDCG@{k}", "dcg": "DCG@{k}", "idcg": "IDCG@{k}", "ap": "AP", "rr": "RR",
                  "p": "P@{k}", "r": "R@{k}", "discount": "the discount at rank {rank}",
                  "loss": "the share lost at rank {rank}", "gain": "the gain of grade {grade}",
                  "mean_a": "the mean nDCG@{k} of system A", "mean_b": "the mean nDCG@{k} of system B",
                  "wins_b": "the number of queries where B beats A"}
_SCORE_ROLE = {"ap": "AP", "rr": "RR", "p": "P", "r": "R"}
DEFAULT_TOLERANCE = 0.005
LINK_VERSION = 1


# -- a tiny collection: several queries, two systems ranking the same judged documents -----------------
@dataclass(frozen=True)
class Collection:
    """Queries, each ``(grades, a, b)``: the grades of its judged documents d1..dn, and the order
    (1-based document numbers) in which systems A and B rank them. Scored with ``metrics.evaluate``."""

    queries: tuple
    cutoff: int = 5
    gain: str = "exp"

    def __post_init__(self):
        queries = []
        for i, query in enumerate(self.queries):
            grades, a, b = (tuple(int(v) for v in part) for part in query)
            n = len(grades)
            for name, order in (("a", a), ("b", b)):
                if not order or any(not 1 <= d <= n for d in order) or len(set(order)) != len(order):
                    raise MetricsError(f"query {i + 1}: {name} must list distinct document numbers 1-{n}",
                                       fix="e.g. a = [2, 1, 3]")
            if any(g not in sandbox.GRADES for g in grades):
                raise MetricsError(f"query {i + 1}: grades must be 0-4")
            queries.append((grades, a, b))
        if len(queries) < 2:
            raise MetricsError("a collection needs at least 2 queries")
        if self.gain not in sandbox.GAIN_NAMES:
            raise MetricsError(f"unknown gain {self.gain!r}", fix="use exp or linear")
        object.__setattr__(self, "queries", tuple(queries))
        object.__setattr__(self, "cutoff", int(self.cutoff))

    @property
    def measure(self) -> str:
        return with_gain(f"nDCG@{self.cutoff}", self.gain)

    def per_query(self) -> pd.DataFrame:
        """nDCG@k of A and B per query (index q1..qn), and ``B - A``."""
        rq, rd, rs, rsys, qq, qd, ql = ([] for _ in range(7))
        for i, (grades, a, b) in enumerate(self.queries):
            qid = f"q{i + 1:02d}"
            for system, order in (("A", a), ("B", b)):
                rq += [qid] * len(order)
                rd += [f"d{d}" for d in order]
                rs += list(range(len(order), 0, -1))
                rsys += [system] * len(order)
            qq += [qid] * len(grades)
            qd += [f"d{j + 1}" for j in range(len(grades))]
            ql += list(grades)
        qrels = io.read_qrels(pd.DataFrame({"qid": qq, "docno": qd, "label": np.asarray(ql, dtype=np.int64)}),
                              name="lesson qrels", source="<lesson>")
        frames = []
        for system in ("A", "B"):
            keep = [s == system for s in rsys]
            run = io.read_run(pd.DataFrame({"qid": np.asarray(rq)[keep], "docno": np.asarray(rd)[keep],
                                            "score": np.asarray(rs, dtype=np.float64)[keep]}),
                              name=system, source="<lesson>")
            frame = evaluate(qrels, run, [self.measure])
            frames.append(frame.set_index("qid")["value"].rename(system))
        table = pd.concat(frames, axis=1).sort_index()
        table.index.name = "query"
        table["B - A"] = table["B"] - table["A"]
        return table

    def summary(self) -> dict[str, float]:
        """Means, sample standard deviations (ddof 1) and the count of B's wins over A."""
        table = self.per_query()
        return {"mean_a": float(table["A"].mean()), "mean_b": float(table["B"].mean()),
                "sd_a": float(table["A"].std(ddof=1)), "sd_b": float(table["B"].std(ddof=1)),
                "wins_b": float((table["B - A"] > 1e-12).sum()), "losses_b": float((table["B - A"] < -1e-12).sum()),
                "queries": float(len(table))}


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

    def spec(self) -> dict:
        """The plain data of the exercise (what a lesson file or a link holds)."""
        out = {"kind": self.kind, "question": self.question}
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


def _sandbox_of(spec: dict, base: Sandbox | None) -> Sandbox | None:
    keys = ("grades", "cutoff", "gain", "missed", "names")
    if not any(k in spec for k in keys):
        return base
    grades = spec.get("grades", base.grades if base else None)
    if grades is None:
        raise MetricsError("the exercise has no list", fix="give grades = [3, 0, 2, ...]")
    if not isinstance(grades, (list, tuple)):
        raise MetricsError("grades must be a list such as [3, 0, 2, \"?\"]")
    grades = tuple(None if g in ("?", None) else _int(g, "a grade") for g in grades)
    names = tuple(spec["names"]) if "names" in spec else (base.names if base and len(base) == len(grades) else ())
    return Sandbox(grades=grades, names=names, cutoff=_int(spec.get("cutoff", base.cutoff if base else
                                                                      min(10, len(grades))), "cutoff"),
                   gain=spec.get("gain", base.gain if base else "exp"),
                   missed=tuple(spec.get("missed", base.missed if base and "grades" not in spec else ())))


def _int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise MetricsError(f"{what} must be a whole number, got {value!r}")
    return int(value)


_FIELDS = {"kind", "question", "hint", "grades", "cutoff", "gain", "missed", "names", "b", "collection",
           "quantity", "rank", "grade", "strategy", "tolerance", "options", "pick", "target"}


def from_spec(spec: dict, base: Sandbox | None = None, base_collection: Collection | None = None) -> Exercise:
    """The exercise a lesson file or a link describes; list fields missing fall back to ``base``
    (the lesson's example). Raises :class:`MetricsError` naming the problem."""
    if not isinstance(spec, dict):
        raise MetricsError("an exercise must be a table of fields")
    unknown = sorted(set(spec) - _FIELDS)
    if unknown:
        raise MetricsError(f"unknown field {unknown[0]!r}", fix=f"fields are {', '.join(sorted(_FIELDS))}")
    for key in ("kind", "question"):
        if not isinstance(spec.get(key), str) or not spec[key].strip():
            raise MetricsError(f"the exercise has no {key}", fix=f"add {key} = \"...\"")
    sb = _sandbox_of(spec, base)
    other = None
    if "b" in spec:
        other = _sandbox_of({"grades": spec["b"], "cutoff": sb.cutoff if sb else 10}, None)
    collection = base_collection
    if "collection" in spec:
        c = spec["collection"]
        collection = Collection(queries=tuple(tuple(q) for q in c["queries"]), cutoff=c.get("cutoff", 5),
                                gain=c.get("gain", "exp"))
    options = []
    for option in spec.get("options", ()):
        if isinstance(option, bool):
            raise MetricsError("an option is a number or a table with a label")
        if isinstance(option, (int, float)):
            options.append(float(option))
        elif isinstance(option, dict) and isinstance(option.get("label"), str):
            rest = {k: v for k, v in option.items() if k not in ("label", "strategy")}
            options.append((option["label"], _sandbox_of(rest, sb), option.get("strategy")))
        else:
            raise MetricsError(f"option {option!r} is neither a number nor a table with a label")
    return Exercise(kind=spec["kind"], question=spec["question"], hint=spec.get("hint", ""), sandbox=sb,
                    other=other, collection=collection, quantity=spec.get("quantity", "ndcg"),
                    rank=_int(spec.get("rank", 0), "rank"), grade=_int(spec.get("grade", 0), "grade"),
                    strategy=spec.get("strategy", "zero"), tolerance=float(spec.get("tolerance", DEFAULT_TOLERANCE)),
                    options=tuple(options), pick=spec.get("pick", "highest"), target=float(spec.get("target", 0.0)))


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
        values = _option_values(ex)
        best = values.max() if ex.pick == "highest" or _numeric(ex) else values.min()
        if _numeric(ex):
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


def _numeric(ex: Exercise) -> bool:
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
        return ex.collection.summary()[q]
    values = sandbox.scores(sb, strategy=strategy or ex.strategy)
    word = "exp" if sb.gain == "exp" else "linear"
    role = {"ndcg": f"nDCG {word}", "dcg": f"DCG {word}", "idcg": f"IDCG {word}"}.get(q) or _SCORE_ROLE[q]
    return float(values[role])


def _option_values(ex: Exercise) -> np.ndarray:
    if _numeric(ex):
        return np.asarray(ex.options, dtype=np.float64)
    return np.array([quantity_value(ex, sb, strategy=strategy) for _, sb, strategy in ex.options])


def answer(ex: Exercise):
    """The right answer, computed: a float (number), an option index (choice), the best
    reachable nDCG@k (reorder, with the ideal order), or {"exp": "A"|"B"|"equal", "linear": ...}."""
    if ex.kind == "number":
        return quantity_value(ex)
    if ex.kind == "choice":
        values = _option_values(ex)
        if _numeric(ex):
            return int(np.argmin(np.abs(values - quantity_value(ex))))
        return int(np.argmax(values) if ex.pick == "highest" else np.argmin(values))
    if ex.kind == "reorder":
        return quantity_value(ex, ex.sandbox.ideal())
    return {gain: _higher(ex, gain) for gain in ("exp", "linear")}


def _higher(ex: Exercise, gain: str) -> str:
    a = quantity_value(ex, ex.sandbox, gain=gain)
    b = quantity_value(ex, ex.other, gain=gain)
    return "equal" if abs(a - b) <= 1e-9 else ("A" if a > b else "B")


def option_labels(ex: Exercise) -> list[str]:
    return [f"{o:g}" if isinstance(o, float) else o[0] for o in ex.options]


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
        if not correct and _numeric(ex):
            mistake = diagnose(ex, float(ex.options[int(response)]))
    elif ex.kind == "reorder":
        order = list(response)
        if sorted(order) != sorted(ex.sandbox.names):
            raise MetricsError("the order must hold every document of the list once")
        mine = ex.sandbox.reordered([ex.sandbox.names.index(n) for n in order])
        reached = quantity_value(ex, mine)
        correct = reached + 1e-12 >= ex.target
        return Result(correct, reached, None if correct else "move the highest grades to the top ranks",
                      worked(ex, mine), sandbox.per_rank(mine))
    else:
        correct = all(response.get(g) == right[g] for g in right)
    return Result(correct, right, mistake, worked(ex), _table(ex))


def diagnose(ex: Exercise, value: float) -> str | None:
    """The usual mistake that gives ``value`` (within the exercise's tolerance), if any."""
    tolerance = max(ex.tolerance, 5e-4)
    for m in mistakes(ex):
        if abs(m.value - value) <= tolerance and abs(m.value - quantity_value(ex)) > tolerance:
            return m.step
    return None


def _table(ex: Exercise) -> pd.DataFrame | None:
    if ex.quantity in ("mean_a", "mean_b", "wins_b"):
        return ex.collection.per_query()
    if ex.kind == "choice" and not _numeric(ex):
        return pd.DataFrame({"option": option_labels(ex), _name(ex, ex.sandbox): _option_values(ex)})
    if ex.sandbox is not None and ex.quantity in LIST_QUANTITIES and ex.kind != "higher":
        return sandbox.per_rank(ex.sandbox, strategy=ex.strategy)
    return None


def _name(ex: Exercise, sb: Sandbox | None) -> str:
    k = sb.cutoff if sb is not None else (ex.collection.cutoff if ex.collection else 0)
    return QUANTITY_NAMES[ex.quantity].format(k=k, rank=ex.rank, grade=ex.grade)


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
    if ex.kind == "choice" and not _numeric(ex):
        return [f"{label}: {_name(ex, s)} = {quantity_value(ex, s, strategy=st):.4f}" for label, s, st in ex.options]
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
        table = ex.collection.per_query()
        if q == "wins_b":
            return [f"B - A > 0 on {int((table['B - A'] > 1e-12).sum())} of {len(table)} queries"]
        col = "A" if q == "mean_a" else "B"
        return [f"mean = ({' + '.join(f'{v:.4f}' for v in table[col])}) / {len(table)} = {table[col].mean():.4f}"]
    if q in _SCORE_ROLE:
        return [f"{_name(ex, sb)} = {quantity_value(ex, sb):.4f} (relevant = grade >= 1)"]
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


# -- links --------------------------------------------------------------------------------------------
def encode(exercises) -> str:
    """One URL-safe token for a set of exercises: their questions and lists, never their answers."""
    data = json.dumps({"v": LINK_VERSION, "x": [ex.spec() for ex in exercises]}, separators=(",", ":"))
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def decode(token: str) -> list[Exercise]:
    """The exercises of a link made by :func:`encode`; a damaged link raises one clear error."""
    try:
        raw = base64.urlsafe_b64decode(str(token) + "=" * (-len(str(token)) % 4))
        data = json.loads(raw.decode())
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise MetricsError("the exercise link is damaged", fix="copy the whole link again") from None
    if not isinstance(data, dict) or data.get("v") != LINK_VERSION or not isinstance(data.get("x"), list) \
            or not data["x"]:
        raise MetricsError("the exercise link holds no exercises", fix="copy the whole link again")
    out = []
    for i, spec in enumerate(data["x"]):
        try:
            out.append(from_spec(spec))
        except (MetricsError, KeyError, TypeError) as exc:
            raise MetricsError(f"exercise {i + 1} of the link: {exc}") from None
    return out

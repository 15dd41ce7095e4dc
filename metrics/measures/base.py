"""Declarative measure specs and the parser for ir_measures-style names.

A measure string such as ``nDCG(dcg='exp-log2')@10`` names a *family*
(``nDCG``), optional parameters and an optional cutoff. Families are data
(:class:`Family`) plus vectorised kernels: one value per query at a single
cutoff, and (for rank cutoffs) the whole curve for k = 1..K. ``IPrec@0.1``
takes a recall level after the ``@`` instead of a rank.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import MetricsError

AGGREGATES = ("mean", "sum", "gmean")
GEOMETRIC_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN: values below count as this in a geometric mean


@dataclass(frozen=True)
class Param:
    """One parameter of a measure family: its type, default and choices."""

    type: type
    default: Any = None
    choices: tuple | None = None
    describe: str = ""
    required: bool = False


@dataclass(frozen=True)
class Family:
    """A measure family: name, parameters, cutoff rule, kernels and summary rule.

    ``cutoff`` is "optional", "required" or "none"; ``cutoff_type`` is ``int``
    (a rank) or ``float`` (a recall level, IPrec). ``aggregate`` is how a
    summary over queries is formed: "mean", "sum" (counts) or "gmean" (the
    geometric mean with values floored at 1e-5, as trec_eval's gm_map).
    ``routes`` maps a parameter this family lacks to the family that has it, for
    ir_measures spellings that name one measure by another's name and a parameter:
    ir_measures' ``NumRet(rel=1)`` is our ``NumRelRet(rel=1)`` (trec_eval's num_rel_ret).
    """

    name: str
    describe: str
    params: dict[str, Param]
    kernel: Callable  # kernel(ctx, measure) -> ndarray (n_queries,)
    curve: Callable | None = None  # curve(ctx, measure, max_k) -> ndarray (n_queries, max_k)
    cutoff: str = "optional"
    aggregate: str = "mean"
    cutoff_type: type = int
    routes: dict[str, Family] = field(default_factory=dict)

    @property
    def at_param(self) -> str:
        """ir_measures' keyword for the value after ``@``: ``recall`` for a recall level, else ``cutoff``."""
        return "recall" if self.cutoff_type is float else "cutoff"

    def __post_init__(self):
        if self.aggregate not in AGGREGATES:
            raise ValueError(f"{self.name}: aggregate must be one of {AGGREGATES}")


@dataclass(frozen=True)
class Alias:
    """Another name of a family, possibly with parameters fixed (``SetRelP`` = ``SetP(relative=True)``)."""

    family: Family
    params: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Measure:
    """A parsed measure: family, parameters and cutoff. ``str()`` gives the name back."""

    family: Family = field(compare=False, hash=False, repr=False)
    name: str
    params: tuple[tuple[str, Any], ...] = ()
    cutoff: int | float | None = None

    def param(self, key: str) -> Any:
        for k, v in self.params:
            if k == key:
                return v
        return self.family.params[key].default

    def __str__(self) -> str:
        """The measure string, in ir_measures' syntax so that ``ir_measures.parse_measure`` reads it:
        text values quoted (``nDCG(dcg='exp-log2')@10``), parameters in name order. The parser also
        reads text values unquoted (``dcg=exp-log2``)."""
        text = self.name
        if self.params:
            text += "(" + ",".join(f"{k}={_format_value(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += f"@{_format_value(self.cutoff)}"
        return text

    def at(self, cutoff: int | float | None) -> "Measure":
        """The same measure at another cutoff (``None`` for no cutoff)."""
        return Measure(self.family, self.name, self.params, cutoff)


def _format_value(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)   # a Python literal, as ir_measures' parser (Python's ast) wants: 'exp-log2'
    if isinstance(value, dict):
        return "{" + ",".join(f"{_format_value(k)}:{_format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        return "(" + ",".join(_format_value(v) for v in value) + ")"
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


_NAME = re.compile(r"^\s*([A-Za-z0-9_]+)\s*(?:\((.*)\))?\s*(?:@\s*(\S+))?\s*$", re.S)


def _split_params(text: str) -> list[str]:
    """Split ``a=1,b={1:2,3:4}`` at top-level commas."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _convert(family: Family, key: str, raw: str, text: str) -> Any:
    spec = family.params.get(key)
    if spec is None:
        known = ", ".join(family.params) or "none"
        raise MetricsError(f"measure {text!r}: {family.name} has no parameter {key!r}",
                           fix=f"known parameters: {known}")
    value: Any
    try:
        if spec.type is bool:
            low = raw.strip().lower()
            if low not in ("true", "false", "1", "0"):
                raise ValueError(raw)
            value = low in ("true", "1")
        elif spec.type is dict:
            value = ast.literal_eval(raw)
            if not isinstance(value, dict):
                raise ValueError(raw)
            value = {int(k): float(v) for k, v in value.items()}
        elif spec.type is tuple:
            value = ast.literal_eval(raw)
            value = tuple(sorted(float(v) for v in (value if isinstance(value, (tuple, list)) else (value,))))
            if not value:
                raise ValueError(raw)
        elif spec.type is str:
            value = raw.strip().strip("'\"")
        else:
            value = spec.type(ast.literal_eval(raw))
    except (ValueError, SyntaxError, TypeError):
        raise MetricsError(f"measure {text!r}: cannot read {key}={raw!r} as {spec.type.__name__}",
                           fix="write it like nDCG(dcg='exp-log2')@10 or P(rel=2)@5") from None
    if spec.choices is not None and value not in spec.choices:
        raise MetricsError(f"measure {text!r}: {key} must be one of {', '.join(map(str, spec.choices))}",
                           fix=f"got {raw!r}")
    return value


def lookup(name: str, registry: dict) -> Family | Alias | None:
    """The family or alias called ``name``: exact spelling first, then ignoring case."""
    found = registry.get(name)
    if found is None:
        lowered = {k.lower(): k for k in registry}
        found = registry.get(lowered.get(name.lower(), ""))
    return found


def parse(text: str, registry: dict, family_only: bool = False) -> Measure:
    """Parse an ir_measures-style name (``P(rel=2)@5``) into a :class:`Measure`.

    ``registry`` maps names to families or aliases. ``family_only`` accepts a
    family without its required cutoff (for curves over k).
    """
    if isinstance(text, Measure):
        return text
    match = _NAME.match(str(text))
    if not match:
        raise MetricsError(f"cannot read measure {text!r}",
                           fix="use ir_measures syntax such as nDCG@10, AP, P(rel=2)@5")
    name, params_text, cutoff_text = match.groups()
    found = lookup(name, registry)
    if found is None:
        raise MetricsError(f"unknown measure {name!r} in {text!r}",
                           fix=f"known measures: {', '.join(sorted(set(registry)))}")
    family, fixed = (found.family, dict(found.params)) if isinstance(found, Alias) else (found, {})
    pairs = []
    for part in _split_params(params_text or ""):
        if "=" not in part:
            raise MetricsError(f"measure {text!r}: parameter {part!r} needs the form key=value",
                               fix="for example nDCG(dcg='exp-log2')@10")
        key, raw = part.split("=", 1)
        pairs.append((key.strip(), raw))
    for key, _ in pairs:
        if key in family.routes and key not in family.params:
            family = family.routes[key]
    params = dict(fixed)
    for key, raw in pairs:
        if key == family.at_param and key not in family.params and family.cutoff != "none":
            # ir_measures' keyword form of the cutoff: P(cutoff=10) is P@10, IPrec(recall=0.3) is IPrec@0.3
            if cutoff_text is not None:
                raise MetricsError(f"measure {text!r}: the {key} is given twice",
                                   fix=f"write it once, after @ ({family.name}@...)")
            cutoff_text = raw.strip()
            continue
        params[key] = _convert(family, key, raw, text)
    missing = [k for k, spec in family.params.items() if spec.required and k not in params]
    if missing:
        raise MetricsError(f"measure {text!r}: {family.name} needs the parameter {missing[0]!r}",
                           fix=f"for example {family.name}({missing[0]}=...)")
    # drop parameters equal to their default so that equal measures print equally
    params = {k: v for k, v in params.items() if v != family.params[k].default}
    cutoff = None
    if cutoff_text is not None:
        if family.cutoff == "none":
            raise MetricsError(f"measure {text!r}: {family.name} takes no cutoff", fix=f"write {family.name}")
        cutoff = _cutoff(family, cutoff_text, text)
    elif family.cutoff == "required" and not family_only:
        example = "0.1" if family.cutoff_type is float else "10"
        raise MetricsError(f"measure {text!r}: {family.name} needs a cutoff",
                           fix=f"for example {family.name}@{example}")
    return Measure(family, family.name, tuple(sorted(params.items())), cutoff)


def _cutoff(family: Family, raw: str, text: str) -> int | float:
    if family.cutoff_type is float:
        try:
            level = float(raw)
        except ValueError:
            level = -1.0
        if not level >= 0:
            raise MetricsError(f"measure {text!r}: the level after @ must be a number >= 0",
                               fix=f"for example {family.name}@0.1")
        return level
    try:
        cutoff = int(raw)
    except ValueError:
        cutoff = -1
    if cutoff < 1:
        raise MetricsError(f"measure {text!r}: the cutoff must be a whole number >= 1",
                           fix="for example nDCG@10")
    return cutoff

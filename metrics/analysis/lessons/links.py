"""Exercises as plain data: :func:`from_spec` reads the table a lesson file or a link holds, and
:func:`encode` / :func:`decode` pack a set of exercises into one URL-safe token that holds their
questions and lists, never their answers."""
from __future__ import annotations

import base64
import binascii
import json

from ...errors import MetricsError
from ..sandbox import Sandbox
from .collection import Collection
from .kinds import DEFAULT_TOLERANCE, Exercise

LINK_VERSION = 1


def sandbox_of(spec: dict, base: Sandbox | None) -> Sandbox | None:
    """The list a spec describes (grades, cutoff, gain, missed, names); fields missing fall back to
    ``base``, and a spec without any of them is ``base`` itself."""
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
    sb = sandbox_of(spec, base)
    other = None
    if "b" in spec:
        other = sandbox_of({"grades": spec["b"], "cutoff": sb.cutoff if sb else 10}, None)
    collection = base_collection
    if "collection" in spec:
        c = spec["collection"]
        collection = Collection(queries=tuple(tuple(q) for q in c["queries"]), cutoff=c.get("cutoff", 5),
                                gain=c.get("gain", "exp"))
    options: list[float | tuple[str, Sandbox | None, str | None]] = []
    for option in spec.get("options", ()):
        if isinstance(option, bool):
            raise MetricsError("an option is a number or a table with a label")
        if isinstance(option, (int, float)):
            options.append(float(option))
        elif isinstance(option, dict) and isinstance(option.get("label"), str):
            rest = {k: v for k, v in option.items() if k not in ("label", "strategy")}
            options.append((option["label"], sandbox_of(rest, sb), option.get("strategy")))
        else:
            raise MetricsError(f"option {option!r} is neither a number nor a table with a label")
    return Exercise(kind=spec["kind"], question=spec["question"], hint=spec.get("hint", ""), sandbox=sb,
                    other=other, collection=collection, quantity=spec.get("quantity", "ndcg"),
                    rank=_int(spec.get("rank", 0), "rank"), grade=_int(spec.get("grade", 0), "grade"),
                    strategy=spec.get("strategy", "zero"), tolerance=float(spec.get("tolerance", DEFAULT_TOLERANCE)),
                    options=tuple(options), pick=spec.get("pick", "highest"), target=float(spec.get("target", 0.0)))



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

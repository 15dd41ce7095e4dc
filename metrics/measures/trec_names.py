"""trec_eval's spellings of measures: ``ndcg_cut.10``, ``P.5,10``, ``iprec_at_recall.0.1``, nicknames.

Each family file declares its trec_eval measures as :class:`TrecMeasure`
data; this module reads trec_eval's ``-m name[.params]`` syntax the way
trec_eval 10 does (parameters after the first dot, separated by commas) and
lays the measures out in trec_eval's own order, with the names it prints
(``P_5``, ``iprec_at_recall_0.10``, ``utility_2,-1,0,0``).

Parameter kinds, as trec_eval's measure initialisers read them:

- ``plain``: no parameters (any given are ignored, as trec_eval does);
- ``cut_long``: rank cutoffs, read with C's atol, sorted, each > 0 and unique,
  printed ``name_10``;
- ``cut_double``: fractions, read with atof, sorted and unique, printed
  ``name_0.20`` (``%3.2f``);
- ``params``: a list of numbers (atof), printed ``name_<as typed>`` when given;
- ``pairs``: ``name=value`` pairs, printed ``name_<as typed>`` when given.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import MetricsError

KINDS = ("plain", "cut_long", "cut_double", "params", "pairs")


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure: its name, parameter kind and defaults, and our measure(s) for it.

    ``build(param, options)`` returns our measure string for one printed value:
    ``param`` is one cutoff (cut kinds), the tuple of numbers (``params``), the
    list of (name, value) pairs (``pairs``) or None (``plain``); ``options``
    holds command-line settings a measure needs (``num_docs``, trec_eval -N).
    ``value`` is how trec_eval prints it ("double", "long" or "text");
    ``per_query``/``summary`` say where it is printed. ``complete_summary``,
    when set, gives the summary under -c from all qrels grades instead.
    Measures with the same ``shared`` key share one parameter record in
    trec_eval (dcg, ideal_dcg and ndcg): see :func:`plan`.
    """

    name: str
    kind: str
    build: Callable[[Any, dict], Any]
    defaults: tuple = ()
    value: str = "double"
    per_query: bool = True
    summary: bool = True
    complete_summary: Callable | None = None
    shared: str | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {KINDS}")


@dataclass(frozen=True)
class FormatMeasure:
    """A trec_eval measure of another judgment format (``formats``: prefs, qrels_prefs, qrels_jg).

    The trec_eval command computes it from that format's judgments, not ``evaluate`` from qrels;
    ``aggregate`` is its summary over queries ("mean" or "sum"); ``param`` is what the measure
    needs per value (a cutoff, or the qrels measure averaged over judgment groups).
    """

    name: str
    formats: tuple
    aggregate: str = "mean"
    param: Any = None


@dataclass(frozen=True)
class TrecValue:
    """One printed trec_eval value: the name trec_eval prints, our measure, and its spec."""

    printed: str
    measure: Any
    spec: TrecMeasure


# trec_eval 10's measure table (measures.c): the order in which it computes and prints.
ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P",
    "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
    "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg", "P_avgjg",
    "Rprec_mult_avgjg", "rbp", "rbp_resid", "unj",
)

NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid",
                 "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
                 "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
                 "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
    "all_prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
                  "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
                  "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
                  "prefs_pair_imp", "prefs_avgjg_imp"),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_simp", "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}

_ATOF = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_ATOL = re.compile(r"\s*[+-]?\d+")
_INT = re.compile(r"[+-]?\d+$")


def atof(text: str) -> float:
    """C's atof: the longest leading number, 0.0 when there is none."""
    match = _ATOF.match(text)
    return float(match.group()) if match else 0.0


def atol(text: str) -> int:
    """C's atol: the leading integer, 0 when there is none."""
    match = _ATOL.match(text)
    return int(match.group()) if match else 0


def is_int(text: str) -> bool:
    """trec_eval's test for a gain level name: optional sign, then digits only."""
    return bool(_INT.match(text))


def split_arg(arg: str) -> tuple[str, str | None]:
    """``P.5,10`` -> ("P", "5,10"); ``map`` -> ("map", None). The parameters follow the first dot."""
    name, dot, params = arg.partition(".")
    if dot and not params:
        raise MetricsError(f"improper measure {arg!r}: nothing after the dot",
                           fix="give parameters after the dot, e.g. P.5,10, or drop the dot")
    return name, (params if dot else None)


def is_trec_spelling(arg: str, specs: dict) -> bool:
    name = str(arg).partition(".")[0]
    return name in specs or name in NICKNAMES


def _pairs(raw: str, arg: str) -> list[tuple[str, float]]:
    pairs = []
    for part in raw.split(","):
        pieces = part.split("=")
        if len(pieces) < 2 or not pieces[-2]:
            raise MetricsError(f"malformed pair parameters in {arg!r}",
                               fix="write name=value pairs, e.g. ndcg.1=3,2=9 or rbp.p=0.8")
        pairs.append((pieces[-2], atof(pieces[-1])))
    return pairs


_SAME = object()


def values_of(spec: TrecMeasure, raw: str | None, options: dict, printed_raw=_SAME) -> list[TrecValue]:
    """The printed values of one trec_eval measure, from its parameter text (None: defaults).

    ``printed_raw`` is the parameter text in the printed name when it differs from ``raw``.
    """
    printed_raw = raw if printed_raw is _SAME else printed_raw
    arg = spec.name if raw is None else f"{spec.name}.{raw}"
    if spec.kind == "plain":
        return [TrecValue(spec.name, spec.build(None, options), spec)]
    if spec.kind in ("cut_long", "cut_double"):
        if raw is None:
            cutoffs = list(spec.defaults)
        else:
            read = atol if spec.kind == "cut_long" else atof
            cutoffs = sorted(read(part) for part in raw.split(","))
        if spec.kind == "cut_long" and cutoffs[0] <= 0:
            raise MetricsError(f"measure {arg!r}: cutoffs must be positive", fix="for example P.5,10")
        if len(set(cutoffs)) != len(cutoffs):
            raise MetricsError(f"measure {arg!r}: duplicate cutoffs", fix="give each cutoff once")
        fmt = (lambda c: f"{spec.name}_{c}") if spec.kind == "cut_long" else (lambda c: f"{spec.name}_{c:3.2f}")
        return [TrecValue(fmt(c), spec.build(c, options), spec) for c in cutoffs]
    printed = spec.name if printed_raw is None else f"{spec.name}_{printed_raw}"
    param: Sequence[Any]
    if spec.kind == "params":
        param = spec.defaults if raw is None else tuple(atof(part) for part in raw.split(","))
    else:
        param = list(spec.defaults) if raw is None else _pairs(raw, arg)
    return [TrecValue(printed, spec.build(param, options), spec)]


def plan(args, specs: dict, options: dict | None = None) -> list[TrecValue]:
    """What ``trec_eval -m ARG -m ARG ...`` computes and prints, in trec_eval's order.

    As trec_eval: a nickname marks all its measures; parameters of a measure
    come from the first ``-m`` that names it with a dot; a measure marked twice
    is computed once. dcg, ideal_dcg and ndcg share one parameter record in
    trec_eval: each one given parameters overwrites it when trec_eval sets the
    measures up (in its order), a name shows the record as it is then, and all
    three compute with its final content (so ``-m dcg.1=2 -m ndcg`` prints
    ``ndcg_1=2``). trec_eval 10 frees that record once per measure, so some of
    these combinations crash it (a double free); here they are computed.
    """
    options = dict(options or {})
    marked: set[str] = set()
    params: dict[str, str] = {}
    for arg in args:
        name, raw = split_arg(str(arg))
        if raw is not None:
            params.setdefault(name, raw)
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in specs:
            marked.add(name)
        else:
            raise MetricsError(f"illegal measure {str(arg)!r}",
                               fix=f"trec_eval measures: {', '.join(ORDER)}; nicknames: {', '.join(NICKNAMES)}")
    record: dict[str, str | None] = {}
    shown: dict[str, str | None] = {}
    for name in ORDER:
        group = specs[name].shared if name in marked else None
        if group is not None:
            if name in params:
                record[group] = params[name]
            shown[name] = record.get(group)
    out: list[TrecValue] = []
    for name in ORDER:
        if name in marked:
            group = specs[name].shared
            if group is None:
                out.extend(values_of(specs[name], params.get(name), options))
            else:
                out.extend(values_of(specs[name], record.get(group), options, shown[name]))
    return out

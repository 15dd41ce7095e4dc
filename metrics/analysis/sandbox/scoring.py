"""The teaching sandbox: one editable ranked list, measured by the library's own engine.

A :class:`Sandbox` is a list of up to :data:`MAX_DOCS` documents with a grade
each (0-4, or ``None`` for unjudged), a cutoff k and a gain. Every number it
shows comes from :func:`metrics.evaluate` on a tiny run and qrels built from
the list (:func:`tables`); nothing here re-implements a formula. Many lists at
once (the what-if search, the tie check) become many queries of one run, so a
single vectorised evaluation scores them all.

The qrels of a sandbox hold the grades of the judged documents in the list
plus ``missed``: relevant documents the list does not contain (they raise IDCG
and lower recall, as documents a real system failed to retrieve do).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import io
from ..errors import MetricsError
from ..evaluate import evaluate
from ..measures import discount, gain_of, with_gain
from ..ranking import Ranked, rank
from .explain import explain

__all__ = ["Sandbox", "Preset", "PRESETS", "MAX_DOCS", "GRADES", "STRATEGIES", "tables", "ranked",
           "scores", "per_rank", "gain_table", "discount_table", "discount_curve", "strategies",
           "tie_orderings", "what_if", "apply_move", "compare_systems", "to_params", "from_params",
           "list_values"]

MAX_DOCS = 20
GRADES = (0, 1, 2, 3, 4)
GAIN_NAMES = {"exp": "exponential (2^rel - 1)", "linear": "linear (rel)"}
STRATEGIES = {
    "zero": "Treat as 0 (trec_eval default)",
    "condensed": "Condensed list (ignore unjudged)",
    "inferred": "Inferred (your guessed grades)",
}
QID = "sandbox"
_NO_JUDGMENT = "(no judged document)"  # keeps a list whose documents are all unjudged among the queries


def _default_names(n: int) -> tuple[str, ...]:
    return tuple(f"D{i + 1}" for i in range(n))


@dataclass(frozen=True)
class Sandbox:
    """One ranked list for teaching: ``grades[i]`` is the grade at rank i + 1 (None = unjudged).

    ``names`` identify the documents (default D1..Dn), so a document keeps its
    name when it moves. ``missed`` are grades of relevant documents the list
    lacks. ``guesses`` are (name, grade) pairs: the user's guess for unjudged
    documents, used by the "inferred" strategy. ``versus`` is another order of
    the same names (a second system) for side-by-side comparisons.
    """

    grades: tuple
    names: tuple = ()
    cutoff: int = 10
    gain: str = "exp"
    missed: tuple = ()
    guesses: tuple = ()
    versus: tuple = ()

    def __post_init__(self):
        grades = tuple(None if g is None else int(g) for g in self.grades)
        if not 1 <= len(grades) <= MAX_DOCS:
            raise MetricsError(f"a sandbox list holds 1 to {MAX_DOCS} documents, got {len(grades)}",
                               fix=f"keep at most {MAX_DOCS} documents")
        bad = [g for g in grades if g is not None and g not in GRADES]
        if bad:
            raise MetricsError(f"grade {bad[0]} is outside 0-4", fix="use grades 0, 1, 2, 3, 4 or ? (unjudged)")
        names = tuple(str(n) for n in self.names) or _default_names(len(grades))
        if len(names) != len(grades):
            raise MetricsError(f"{len(names)} names for {len(grades)} documents",
                               fix="give one name per document, or none")
        if len(set(names)) != len(names) or any(not n.strip() or "," in n for n in names):
            raise MetricsError("document names must be unique, non-empty and without commas",
                               fix="name them e.g. D1, D2, ...")
        if self.gain not in GAIN_NAMES:
            raise MetricsError(f"unknown gain {self.gain!r}", fix="use exp or linear")
        cutoff = int(self.cutoff)
        if not 1 <= cutoff <= MAX_DOCS:
            raise MetricsError(f"the cutoff must be between 1 and {MAX_DOCS}, got {cutoff}", fix="for example 10")
        missed = tuple(int(g) for g in self.missed)
        if any(g not in GRADES[1:] for g in missed):
            raise MetricsError("missed documents need a grade of 1-4", fix="for example missed=(3, 2)")
        guesses = tuple((str(n), int(g)) for n, g in (self.guesses.items() if isinstance(self.guesses, Mapping)
                                                      else self.guesses))
        if any(g not in GRADES for _, g in guesses):
            raise MetricsError("a guessed grade is outside 0-4", fix="guess 0, 1, 2, 3 or 4")
        versus = tuple(str(n) for n in self.versus)
        if versus and sorted(versus) != sorted(names):
            raise MetricsError("the second system must rank the same documents", fix="give a reordering of names")
        for key, value in (("grades", grades), ("names", names), ("cutoff", cutoff), ("missed", missed),
                           ("guesses", guesses), ("versus", versus)):
            object.__setattr__(self, key, value)

    # -- derived -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.grades)

    @property
    def measure(self) -> str:
        """The exact nDCG measure string of this sandbox (``nDCG(dcg=exp-log2)@10``)."""
        return with_gain(f"nDCG@{self.cutoff}", self.gain)

    def grade_of(self, name: str):
        return self.grades[self.names.index(name)]

    def guess_of(self, name: str, default: int = 1) -> int:
        return dict(self.guesses).get(name, default)

    @property
    def unjudged(self) -> tuple[str, ...]:
        return tuple(n for n, g in zip(self.names, self.grades) if g is None)

    # -- edits (each returns a new sandbox) --------------------------------------------------
    def replace(self, **changes) -> Sandbox:
        return dataclasses.replace(self, **changes)

    def _reordered(self, order) -> Sandbox:
        order = list(order)
        return self.replace(grades=tuple(self.grades[i] for i in order), names=tuple(self.names[i] for i in order))

    def ideal(self) -> Sandbox:
        """Grades descending (unjudged count as 0); equal grades keep their order."""
        key = np.array([-(g or 0) for g in self.grades])
        return self._reordered(np.argsort(key, kind="stable"))

    def reversed(self) -> Sandbox:
        return self._reordered(range(len(self) - 1, -1, -1))

    def shuffled(self, seed: int = 0) -> Sandbox:
        """A permutation drawn with ``numpy.random.default_rng(seed)``: the same seed, the same order."""
        return self._reordered(np.random.default_rng(int(seed)).permutation(len(self)))

    def swapped(self, i: int, j: int) -> Sandbox:
        order = list(range(len(self)))
        order[i], order[j] = order[j], order[i]
        return self._reordered(order)

    def moved(self, i: int, step: int) -> Sandbox:
        """The document at index ``i`` moved ``step`` places (-1 = up); clamped at the ends."""
        j = min(max(i + step, 0), len(self) - 1)
        return self.swapped(i, j) if abs(j - i) == 1 else self._reordered(_move(len(self), i, j))

    def regraded(self, i: int, grade) -> Sandbox:
        grades = list(self.grades)
        grades[i] = None if grade is None else int(grade)
        return self.replace(grades=tuple(grades))

    def resized(self, n: int) -> Sandbox:
        """Keep the first ``n`` documents, or add new ones (grade 0) named D<k> up to ``n``."""
        n = int(n)
        if n <= len(self):
            keep = self.replace(grades=self.grades[:n], names=self.names[:n], versus=())
            return keep.replace(cutoff=min(keep.cutoff, MAX_DOCS))
        names, grades, k = list(self.names), list(self.grades), 1
        while len(names) < n:
            if f"D{k}" not in names:
                names.append(f"D{k}")
                grades.append(0)
            k += 1
        return self.replace(grades=tuple(grades), names=tuple(names), versus=())


def _move(n: int, i: int, j: int) -> list[int]:
    order = list(range(n))
    order.insert(j, order.pop(i))
    return order


# --------------------------------------------------------------------------- the engine

def tables(lists: Sequence[tuple[str, Sequence[str], Sequence]], *, missed: Sequence[int] = (),
           guesses: Mapping[str, int] | None = None) -> tuple[io.Run, io.Qrels, io.Qrels | None]:
    """A run, qrels and proxy qrels (None without guesses for unjudged documents), each list one query.

    ``lists`` are (qid, names, grades) in rank order; scores decrease down each
    list, so the canonical order is the list's order. Every query's qrels hold
    its judged grades plus ``missed`` documents (named ``missed-1``, ...).
    """
    run_q, run_d, run_s, q_q, q_d, q_r, p_q, p_d, p_r = ([] for _ in range(9))
    for qid, names, grades in lists:
        n = len(names)
        run_q += [qid] * n
        run_d += list(names)
        run_s += list(range(n, 0, -1))
        judged = [(d, g) for d, g in zip(names, grades) if g is not None]
        judged += [(f"missed-{i + 1}", g) for i, g in enumerate(missed)]
        if not judged:
            judged = [(_NO_JUDGMENT, 0)]
        q_q += [qid] * len(judged)
        q_d += [d for d, _ in judged]
        q_r += [g for _, g in judged]
        if guesses:
            guessed = [(d, guesses[d]) for d, g in zip(names, grades) if g is None and d in guesses]
            p_q += [qid] * len(guessed)
            p_d += [d for d, _ in guessed]
            p_r += [g for _, g in guessed]
    run = io.read_run(pd.DataFrame({"qid": run_q, "docno": run_d, "score": np.asarray(run_s, dtype=np.float64)}),
                      name="sandbox", source="<sandbox>")
    qrels = io.read_qrels(pd.DataFrame({"qid": q_q, "docno": q_d, "label": np.asarray(q_r, dtype=np.int64)}),
                          name="sandbox qrels", source="<sandbox>")
    proxy = None
    if p_q:  # no proxy qrels at all when nothing was guessed (an empty qrels is an error)
        proxy = io.read_qrels(pd.DataFrame({"qid": p_q, "docno": p_d, "label": np.asarray(p_r, dtype=np.int64)}),
                              name="sandbox guesses", source="<sandbox>")
    return run, qrels, proxy


def _evaluate_lists(lists, measures: Sequence[str], *, missed=(), guesses=None,
                    judged_only: bool = False) -> pd.DataFrame:
    """Values of ``measures`` for every list: index qid (in the order given), one column per measure."""
    run, qrels, proxy = tables(lists, missed=missed, guesses=guesses)
    frame = evaluate(qrels, run, list(measures), inferred=proxy, judged_only=judged_only)
    table = frame.pivot(index="qid", columns="measure", values="value")
    return table.reindex(index=[q for q, _, _ in lists], columns=list(dict.fromkeys(measures)))


def _qids(n: int) -> list[str]:
    width = len(str(max(n - 1, 0)))
    return [f"c{i:0{width}d}" for i in range(n)]


def list_values(sb: Sandbox, measures: Sequence[str], *, strategy: str = "zero") -> pd.Series:
    """``measures`` on the sandbox's list under an unjudged ``strategy`` (see :data:`STRATEGIES`)."""
    if strategy not in STRATEGIES:
        raise MetricsError(f"unknown strategy {strategy!r}", fix=f"use one of {', '.join(STRATEGIES)}")
    guesses = {n: sb.guess_of(n) for n in sb.unjudged} if strategy == "inferred" else None
    table = _evaluate_lists([(QID, sb.names, sb.grades)], measures, missed=sb.missed, guesses=guesses,
                            judged_only=strategy == "condensed")
    return table.loc[QID]


def ranked(sb: Sandbox, *, strategy: str = "zero") -> Ranked:
    """The sandbox's list as a :class:`Ranked` (one query, id ``"sandbox"``)."""
    guesses = {n: sb.guess_of(n) for n in sb.unjudged} if strategy == "inferred" else None
    run, qrels, proxy = tables([(QID, sb.names, sb.grades)], missed=sb.missed, guesses=guesses)
    result = rank(run, qrels, inferred=proxy, name="sandbox")
    return result.condensed() if strategy == "condensed" else result


def measure_names(sb: Sandbox) -> dict[str, str]:
    """The exact measure strings the sandbox shows, by role."""
    k = sb.cutoff
    names = {}
    for gain in ("exp", "linear"):
        names[f"nDCG {gain}"] = with_gain(f"nDCG@{k}", gain)
        names[f"DCG {gain}"] = with_gain(f"DCG@{k}", gain)
        names[f"IDCG {gain}"] = with_gain(f"IDCG@{k}", gain)
    names.update({"AP": "AP", "RR": "RR", "P": f"P@{k}", "R": f"R@{k}"})
    return names


def scores(sb: Sandbox, *, strategy: str = "zero") -> dict[str, float]:
    """Every number of the sandbox panel, keyed as :func:`measure_names` (both gains, AP, RR, P@k, R@k).

    Also ``CG exp`` / ``CG linear``: cumulative gain, the undiscounted sum of
    the gains of the top k (the ``gain`` column of :func:`per_rank`).
    """
    names = measure_names(sb)
    values = list_values(sb, list(names.values()), strategy=strategy)
    out = {role: float(values[m]) for role, m in names.items()}
    for gain in ("exp", "linear"):
        out[f"CG {gain}"] = float(per_rank(sb, gain, strategy=strategy)["gain"].iloc[:sb.cutoff].sum())
    return out


def per_rank(sb: Sandbox, gain: str | None = None, *, strategy: str = "zero") -> pd.DataFrame:
    """:func:`metrics.explain.explain` of the sandbox list, ranks 1..max(len, k)."""
    measure = with_gain(f"nDCG@{sb.cutoff}", gain or sb.gain)
    return explain(ranked(sb, strategy=strategy), QID, measure, depth=max(len(sb), sb.cutoff))


def compare_systems(sb: Sandbox) -> pd.DataFrame:
    """The list (system A) against ``sb.versus`` (system B, same documents): AP, RR, P@k, nDCG@k."""
    if not sb.versus:
        raise MetricsError("this sandbox has no second system", fix="load the 'equal MAP' preset")
    grade = dict(zip(sb.names, sb.grades))
    measures = ["AP", "RR", f"P@{sb.cutoff}", sb.measure]
    lists = [("A", sb.names, sb.grades), ("B", sb.versus, tuple(grade[n] for n in sb.versus))]
    table = _evaluate_lists(lists, measures, missed=sb.missed)
    table.index = pd.Index(["A (your list)", "B (second system)"], name="system")
    table.insert(0, "ranking", [" ".join(_label(n, grade[n]) for n in order) for order in (sb.names, sb.versus)])
    return table


def _label(name: str, grade) -> str:
    return f"{name}({'?' if grade is None else grade})"


# --------------------------------------------------------------------------- teaching tables

def gain_table(grades: Sequence[int] = GRADES) -> pd.DataFrame:
    """Gain of each grade under linear (rel) and exponential (2^rel - 1) gain, via the kernels' gain_of."""
    grades = np.asarray(grades, dtype=np.int64)
    linear, exponential = gain_of(grades, "log2"), gain_of(grades, "exp-log2")
    return pd.DataFrame({"grade": grades, "linear gain": linear, "exponential gain": exponential,
                         "exponential / linear": np.divide(exponential, linear, out=np.full(len(grades), np.nan),
                                                           where=linear > 0)})


def discount_table(ranks: Sequence[int] = (1, 5, 10)) -> pd.DataFrame:
    """1/log2(rank + 1) at ``ranks`` and how much less it is than at rank 1 (rank 5: 61%, rank 10: 71%)."""
    ranks = np.asarray(ranks, dtype=np.int64)
    log = discount(ranks - 1)
    value = 1.0 / log
    return pd.DataFrame({"rank": ranks, "log2(rank+1)": log, "discount": value, "less than rank 1": 1.0 - value})


def discount_curve(max_rank: int = MAX_DOCS) -> pd.DataFrame:
    """The discount 1/log2(rank + 1) at ranks 1..max_rank."""
    return discount_table(np.arange(1, int(max_rank) + 1))


def strategies(sb: Sandbox) -> pd.DataFrame:
    """DCG@k, IDCG@k and nDCG@k under the three ways to treat unjudged documents, side by side.

    zero: gain 0 (trec_eval); condensed: unjudged documents removed before
    ranking (``judged_only``, trec_eval -J); inferred: the user's guessed grade
    counts as a judgment, in the list and in the ideal ranking.
    """
    measures = [with_gain(f"{f}@{sb.cutoff}", sb.gain) for f in ("DCG", "IDCG", "nDCG")]
    rows = []
    for key, label in STRATEGIES.items():
        values = list_values(sb, measures, strategy=key)
        if key == "condensed":
            shown = [n for n, g in zip(sb.names, sb.grades) if g is not None]
        else:
            shown = list(sb.names)
        grades = {n: (sb.guess_of(n) if key == "inferred" and g is None else g) for n, g in zip(sb.names, sb.grades)}
        rows.append({"strategy": label, "list": " ".join(_label(n, grades[n]) for n in shown[:sb.cutoff]),
                     "DCG": values[measures[0]], "IDCG": values[measures[1]], "nDCG": values[measures[2]]})
    frame = pd.DataFrame(rows).set_index("strategy")
    frame.attrs["measure"] = sb.measure
    return frame


def tie_orderings(sb: Sandbox, *, n: int = 3, seed: int = 0) -> pd.DataFrame:
    """Orderings that differ only among documents of equal grade, and their DCG@k.

    The ideal list with ties in several orders all reach the same DCG@k, which
    is IDCG@k: the ideal ranking is not unique, its DCG is. Likewise your list
    with equal-grade documents permuted keeps its DCG@k and nDCG@k. Permutations
    are drawn with ``numpy.random.default_rng(seed)``.
    """
    rng = np.random.default_rng(int(seed))
    ideal = sb.ideal()

    def tie_shuffled(s: Sandbox) -> Sandbox:
        key = np.array([-(g or 0) for g in s.grades], dtype=np.float64)
        return s._reordered(np.lexsort((rng.random(len(s)), key)))

    candidates = [("ideal order, ties by name", _by_name_within_ties(ideal))]
    candidates += [(f"ideal order, ties shuffled (draw {i + 1})", tie_shuffled(ideal)) for i in range(n)]
    candidates += [("your list", sb)]
    candidates += [(f"your list, equal grades permuted (draw {i + 1})", _permute_equal(sb, rng))
                   for i in range(n)]
    dcg, idcg, ndcg = (with_gain(f"{f}@{sb.cutoff}", sb.gain) for f in ("DCG", "IDCG", "nDCG"))
    qids = _qids(len(candidates))
    table = _evaluate_lists([(q, c.names, c.grades) for q, (_, c) in zip(qids, candidates)], [dcg, idcg, ndcg],
                            missed=sb.missed)
    return pd.DataFrame({
        "ordering": [label for label, _ in candidates],
        "list": [" ".join(_label(nm, g) for nm, g in zip(c.names[:sb.cutoff], c.grades[:sb.cutoff]))
                 for _, c in candidates],
        "DCG": table[dcg].to_numpy(), "IDCG": table[idcg].to_numpy(), "nDCG": table[ndcg].to_numpy(),
    })


def _by_name_within_ties(s: Sandbox) -> Sandbox:
    key = np.array([-(g or 0) for g in s.grades])
    return s._reordered(np.lexsort((np.array(s.names, dtype=object).astype(str), key)))


def _permute_equal(s: Sandbox, rng: np.random.Generator) -> Sandbox:
    """Permute documents among the positions held by documents of the same grade (unjudged = its own group)."""
    order = np.arange(len(s))
    groups: dict = {}
    for i, g in enumerate(s.grades):
        groups.setdefault(g, []).append(i)
    for idx in groups.values():
        idx = np.asarray(idx)
        order[idx] = idx[rng.permutation(len(idx))]
    return s._reordered(order)


# --------------------------------------------------------------------------- what-if

def what_if(sb: Sandbox, *, measure: str | None = None) -> pd.DataFrame:
    """Every single move and its nDCG@k, best first: all swaps of two documents and all grade changes.

    A swap exchanges the documents at ranks i and j (i < j); a grade change
    sets one document's grade to another value of 0-4 or to unjudged. All
    candidates are queries of one run, scored by one :func:`metrics.evaluate`.
    Columns: ``move`` ("swap"/"grade"), ``i``, ``j`` (swap: 0-based indices),
    ``grade`` (grade change: the new grade, <NA> = unjudged), ``description``,
    ``before``, ``after``, ``delta`` = after - before. Ties keep generation
    order (swaps by i then j, then grade changes by rank then grade).
    """
    measure = measure or sb.measure
    n = len(sb)
    moves: list[tuple] = []
    lists = [(None, sb)]
    i_idx, j_idx = np.triu_indices(n, k=1)
    for i, j in zip(i_idx.tolist(), j_idx.tolist()):
        moves.append(("swap", i, j, None))
        lists.append((None, sb.swapped(i, j)))
    for i, current in enumerate(sb.grades):
        for grade in (*GRADES, None):
            if grade != current:
                moves.append(("grade", i, None, grade))
                lists.append((None, sb.regraded(i, grade)))
    qids = _qids(len(lists))
    table = _evaluate_lists([(q, s.names, s.grades) for q, (_, s) in zip(qids, lists)], [measure],
                            missed=sb.missed)
    values = table[measure].to_numpy()
    before, after = values[0], values[1:]
    frame = pd.DataFrame({
        "move": [m[0] for m in moves],
        "i": np.array([m[1] for m in moves], dtype=np.int64),
        "j": pd.array([m[2] for m in moves], dtype="Int64"),
        "grade": pd.array([m[3] if m[0] == "grade" else None for m in moves], dtype="Int64"),
        "description": [_describe(sb, m) for m in moves],
        "before": np.full(len(moves), before),
        "after": after,
        "delta": after - before,
    })
    frame["unjudged"] = [m[0] == "grade" and m[3] is None for m in moves]
    frame = frame.iloc[np.argsort(-frame["delta"].to_numpy(), kind="stable")].reset_index(drop=True)
    frame.attrs["measure"] = measure
    return frame


def _describe(sb: Sandbox, move: tuple) -> str:
    kind, i, j, grade = move
    if kind == "swap":
        return (f"swap {_label(sb.names[i], sb.grades[i])} at rank {i + 1} with "
                f"{_label(sb.names[j], sb.grades[j])} at rank {j + 1}")
    old = "?" if sb.grades[i] is None else sb.grades[i]
    new = "?" if grade is None else grade
    return f"regrade {sb.names[i]} at rank {i + 1} from {old} to {new}"


def apply_move(sb: Sandbox, move: Mapping) -> Sandbox:
    """The sandbox after one row of :func:`what_if`."""
    if move["move"] == "swap":
        return sb.swapped(int(move["i"]), int(move["j"]))
    grade = move["grade"]
    return sb.regraded(int(move["i"]), None if (grade is None or pd.isna(grade) or move.get("unjudged"))
                       else int(grade))


# --------------------------------------------------------------------------- presets

@dataclass(frozen=True)
class Preset:
    title: str
    lesson: str
    sandbox: Sandbox


PRESETS: dict[str, Preset] = {
    "legal": Preset(
        "A legal search list, grades 3/2/1/0",
        "Ten case-law results for one research question, graded 3 (on point), 2 (relevant), 1 (related) and "
        "0 (off topic), as in the legal sample collection. Try the buttons: the ideal order reaches "
        "nDCG@10 = 1, the reverse falls far lower.",
        Sandbox(grades=(2, 3, 0, 1, 3, 0, 2, 0, 1, 0), cutoff=10),
    ),
    "wikipedia": Preset(
        "Wikipedia's worked example (two relevant documents missed)",
        "Six results graded 3, 2, 3, 0, 1, 2, and two relevant documents (grades 3 and 2) the system never "
        "retrieved: the example of Wikipedia's DCG article. With linear gain DCG@6 = 6.861, "
        "IDCG@6 = 8.740, nDCG@6 = 0.785. Even the ideal order of this list stays below 1: the missed "
        "documents belong in the ideal ranking.",
        Sandbox(grades=(3, 2, 3, 0, 1, 2), cutoff=6, gain="linear", missed=(3, 2)),
    ),
    "perfect": Preset(
        "A perfect list",
        "Grades already in descending order: DCG equals IDCG at every cutoff, so nDCG@k = 1.",
        Sandbox(grades=(4, 3, 3, 2, 2, 1, 1, 0, 0, 0), cutoff=10),
    ),
    "reverse": Preset(
        "The perfect list, reversed",
        "The same documents worst first. nDCG stays above 0 because the relevant documents are still in "
        "the top 10, only heavily discounted.",
        Sandbox(grades=(0, 0, 0, 1, 1, 2, 2, 3, 3, 4), cutoff=10),
    ),
    "late": Preset(
        "One highly relevant document at rank 10",
        "A single grade-4 document, found at rank 10. nDCG@10 = 1/log2(11) = 0.289: the discount alone "
        "costs 71% of its value. Move it up to see the curve of the discount.",
        Sandbox(grades=(0, 0, 0, 0, 0, 0, 0, 0, 0, 4), cutoff=10),
    ),
    "equal_map": Preset(
        "Two systems with equal MAP, different nDCG",
        "Systems A and B retrieve the same documents, with relevant ones at the same ranks (1, 3 and 5), "
        "so AP, RR and P@k are equal. A puts the grade-3 document first, B the grade-1 one: nDCG tells "
        "them apart, binary measures cannot.",
        Sandbox(grades=(3, 0, 2, 0, 1, 0), names=("A1", "N1", "A2", "N2", "A3", "N3"), cutoff=6,
                versus=("A3", "N1", "A2", "N2", "A1", "N3")),
    ),
    "mrr": Preset(
        "Perfect MRR, poor nDCG",
        "The first document is relevant (grade 1), so RR = 1; but the highly relevant documents sit at "
        "ranks 8-10 and nDCG@10 is low. RR only looks at the first hit.",
        Sandbox(grades=(1, 0, 0, 0, 0, 0, 0, 4, 4, 3), cutoff=10),
    ),
}


# --------------------------------------------------------------------------- shareable URL

def to_params(sb: Sandbox) -> dict[str, str]:
    """Query parameters that restore ``sb`` (for ``st.query_params``): g, k, gain, names, missed, guess, vs."""
    params = {"g": ",".join("?" if g is None else str(g) for g in sb.grades), "k": str(sb.cutoff), "gain": sb.gain}
    if sb.names != _default_names(len(sb)):
        params["names"] = ",".join(sb.names)
    if sb.missed:
        params["missed"] = ",".join(map(str, sb.missed))
    guesses = [(n, g) for n, g in sb.guesses if n in sb.unjudged]
    if guesses:
        params["guess"] = ",".join(f"{n}:{g}" for n, g in guesses)
    if sb.versus:
        params["vs"] = ",".join(sb.versus)
    return params


def from_params(params: Mapping[str, str]) -> Sandbox:
    """The sandbox a URL's query parameters describe (see :func:`to_params`)."""
    def split(key):
        text = str(params.get(key) or "").strip()
        return [part.strip() for part in text.split(",")] if text else []

    grades_text = split("g")
    if not grades_text:
        raise MetricsError("the link holds no grades (parameter g)", fix="share a link made by the Learn page")
    try:
        grades = tuple(None if g in ("?", "u", "") else int(g) for g in grades_text)
        cutoff = int(params.get("k") or min(10, len(grades)))
        missed = tuple(int(g) for g in split("missed"))
        guesses = tuple((n, int(g)) for n, g in (part.split(":", 1) for part in split("guess")))
    except ValueError:
        raise MetricsError("the link's grades or cutoff are not whole numbers",
                           fix="grades are 0-4 or ?, e.g. g=3,2,?,0&k=4") from None
    return Sandbox(grades=grades, names=tuple(split("names")), cutoff=cutoff, gain=params.get("gain") or "exp",
                   missed=missed, guesses=guesses, versus=tuple(split("vs")))

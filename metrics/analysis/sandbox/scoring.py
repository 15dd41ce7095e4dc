"""Scoring a sandbox with the library's own engine: the tiny run and qrels of one or many lists,
their measures, per-rank arithmetic, the teaching tables, strategies for unjudged documents, tie
orderings and the what-if search."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from ... import io
from ...errors import MetricsError
from ...evaluation import evaluate
from ...measures import discount, gain_of, with_gain
from ...ranking import Ranked, rank
from ..explain import explain
from .lists import GRADES, MAX_DOCS, STRATEGIES, Sandbox

QID = "sandbox"
_NO_JUDGMENT = "(no judged document)"  # keeps a list whose documents are all unjudged among the queries


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
    Computed once per list and strategy (:data:`REMEMBERED` of them): reading the lessons asks
    for the same list's numbers again for every placeholder and exercise.
    """
    return dict(_scores(sb, strategy))


def per_rank(sb: Sandbox, gain: str | None = None, *, strategy: str = "zero") -> pd.DataFrame:
    """:func:`metrics.explain.explain` of the sandbox list, ranks 1..max(len, k) (a copy of the
    frame computed once per list, gain and strategy)."""
    return _per_rank(sb, gain or sb.gain, strategy).copy()


REMEMBERED = 512
"""Sandboxes whose numbers are kept (a few kilobytes each, with the rank-by-rank frame): every list
of the package's lessons, and the lists a class is editing."""


@lru_cache(maxsize=REMEMBERED)
def _scores(sb: Sandbox, strategy: str) -> tuple[tuple[str, float], ...]:
    names = measure_names(sb)
    values = list_values(sb, list(names.values()), strategy=strategy)
    out = [(role, float(values[m])) for role, m in names.items()]
    for gain in ("exp", "linear"):
        out.append((f"CG {gain}", float(_per_rank(sb, gain, strategy)["gain"].iloc[:sb.cutoff].sum())))
    return tuple(out)


@lru_cache(maxsize=REMEMBERED)
def _per_rank(sb: Sandbox, gain: str, strategy: str) -> pd.DataFrame:
    measure = with_gain(f"nDCG@{sb.cutoff}", gain)
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


def gain_table(grades: Sequence[int] = GRADES) -> pd.DataFrame:
    """Gain of each grade under linear (rel) and exponential (2^rel - 1) gain, via the kernels' gain_of."""
    grade = np.asarray(grades, dtype=np.int64)
    linear, exponential = gain_of(grade, "log2"), gain_of(grade, "exp-log2")
    return pd.DataFrame({"grade": grade, "linear gain": linear, "exponential gain": exponential,
                         "exponential / linear": np.divide(exponential, linear, out=np.full(len(grade), np.nan),
                                                           where=linear > 0)})


def discount_table(ranks: Sequence[int] | np.ndarray = (1, 5, 10)) -> pd.DataFrame:
    """1/log2(rank + 1) at ``ranks`` and how much less it is than at rank 1 (rank 5: 61%, rank 10: 71%)."""
    rank = np.asarray(ranks, dtype=np.int64)
    log = discount(rank - 1)
    value = 1.0 / log
    return pd.DataFrame({"rank": rank, "log2(rank+1)": log, "discount": value, "less than rank 1": 1.0 - value})


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
        return s.reordered(np.lexsort((rng.random(len(s)), key)))

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
    return s.reordered(np.lexsort((np.array(s.names, dtype=object).astype(str), key)))


def _permute_equal(s: Sandbox, rng: np.random.Generator) -> Sandbox:
    """Permute documents among the positions held by documents of the same grade (unjudged = its own group)."""
    order = np.arange(len(s))
    groups: dict = {}
    for i, g in enumerate(s.grades):
        groups.setdefault(g, []).append(i)
    for idx in groups.values():
        idx = np.asarray(idx)
        order[idx] = idx[rng.permutation(len(idx))]
    return s.reordered(order)


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

"""Preference measures of trec_eval 10 (``-R prefs`` and ``-R qrels_prefs``): the ``all_prefs`` family.

Judgments are preferences between documents. A *judgment group* (JG, one user's need at one
time) holds *sub-groups* (JSG); within a sub-group a document with a higher level is preferred
to one with a lower level. In a qrels read as preferences (``qrels_prefs``) the qrels ``iter``
field names the group and each group has one sub-group. Every document judged anywhere for a
query gets an internal rank: its position among the judged documents the run retrieved (the run
ordered by score descending, ties by docno *ascending*, as trec_eval's preference code orders
it, cut to ``-M``), and the unretrieved judged documents follow in docno order.

A preference A > B is *fulfilled* when A's internal rank is smaller. Each is counted as
``ret`` (both retrieved), ``imp`` (one retrieved) or ``notoccur`` (neither); ``possible``
counts fulfilled and failed alike, a failed ``notoccur`` included. With one sub-group the
preferences are all pairs across levels (a document listed twice at one level counts twice);
with several they are the transitive closure of each sub-group's pairs (a preference matrix).

Measures per query (trec_eval's names): prefs_num_prefs_poss, prefs_num_prefs_ful,
prefs_num_prefs_ful_ret (counts; summed over queries), prefs_simp (fulfilled / possible),
prefs_pair (the mean over document pairs of the share of the pair's preferences fulfilled,
over all groups), prefs_avgjg (fulfilled / possible per group, averaged over groups),
prefs_avgjg_Rnonrel (the same with each group's non-relevant documents, level 0, cut or padded
to R, its relevant count), and the ``_ret`` (both retrieved only) and ``_imp`` (a pair neither
retrieved ignored) variants. Quirks of trec_eval 10 are kept, so the values are its values:
the average over groups is 0 unless its sum is positive; prefs_avgjg_Rnonrel pairs the last
level's documents with themselves when it cuts them, pads ``_ret`` possibles with the group's R,
not its retrieved R; pair counts are per pair of internal ranks.

Computation is per query (its judged documents only): pairs are generated and classified as
numpy arrays (50 queries of 1,000 graded judgments and 1,000 results read as qrels_prefs: 3.9 s
here, trec_eval 1.3 s); two steps loop in Python within a query because trec_eval's definition is
sequential there: the level bookkeeping of a sub-grouped group (a document may not be level 0
in one sub-group and above 0 in another, checked in judgment order) and the transitive
closure (Warshall's algorithm, one vectorised pass per judged document of the group).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError
from .trec_names import FormatMeasure, TrecMeasure, atof

COUNTS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")
RATIOS = ("prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
          "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp")
NAMES = COUNTS + RATIOS
FORMATS = ("prefs", "qrels_prefs")



def _spec(name: str) -> TrecMeasure:
    measure = FormatMeasure(name, FORMATS, "sum" if name in COUNTS else "mean")
    return TrecMeasure(name, "plain", lambda p, o: measure, value="long" if name in COUNTS else "double")


TREC = tuple(_spec(name) for name in NAMES)


@dataclass(frozen=True)
class PreferenceJudgments:
    """Preference judgments of one query: parallel arrays, one entry per judgment line."""

    qid: str
    jg: np.ndarray      # judgment group (str)
    jsg: np.ndarray     # sub-group (str)
    docno: np.ndarray   # str
    level: np.ndarray   # float64


def preference_judgments(lines, *, source: str = "prefs") -> dict[str, PreferenceJudgments]:
    """Per query (sorted as strings), the preference judgments of a ``prefs`` or ``qrels_prefs`` file
    read by :func:`metrics.io.judgment_files.read_judgment_lines`."""
    qid = lines.column("qid")
    jsg = lines.column("jsg") if "jsg" in lines.columns else np.full(len(qid), "0", dtype=object)
    level = np.array([atof(text) for text in lines.column("rel")], dtype=np.float64)
    order = np.argsort(qid, kind="stable")
    qid_sorted = qid[order]
    starts = np.flatnonzero(np.r_[True, qid_sorted[1:] != qid_sorted[:-1]])
    ends = np.r_[starts[1:], len(order)]
    out = {}
    for start, end in zip(starts, ends):
        rows = order[start:end]
        out[str(qid_sorted[start])] = PreferenceJudgments(str(qid_sorted[start]), lines.column("jg")[rows],
                                                           jsg[rows], lines.column("docno")[rows], level[rows])
    return out


def ranked_docnos(run_table: pa.Table, max_depth: int | None = None) -> dict[str, np.ndarray]:
    """Per query, the run's docnos in trec_eval's preference order: score descending, ties by
    docno ascending (byte order), cut to ``max_depth``."""
    order = pc.sort_indices(run_table, sort_keys=[("qid", "ascending"), ("score", "descending"),
                                                  ("docno", "ascending")])
    table = run_table.take(order)
    qid = np.asarray(table.column("qid").to_pylist(), dtype=object)
    docno = np.asarray(table.column("docno").to_pylist(), dtype=object)
    if len(qid) == 0:
        return {}
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    ends = np.r_[starts[1:], len(qid)]
    depth = len(qid) if max_depth is None else max_depth
    return {str(qid[s]): docno[s:min(e, s + depth)] for s, e in zip(starts, ends)}


def _partner_pairs(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All (a, b) with b in [starts[a], ends[a]): line indices of every preference a > b."""
    counts = np.maximum(ends - starts, 0)
    total = int(counts.sum())
    first = np.repeat(np.arange(len(starts)), counts)
    offset = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return first, np.repeat(starts, counts) + offset


def _classify(d1: np.ndarray, d2: np.ndarray, njr: int) -> dict[str, int]:
    """trec_eval's five counts for preferences d1 > d2 (internal ranks), possibles including fulfilled."""
    fwd = d1 < d2
    ful_ret = int(np.count_nonzero(fwd & (d2 < njr)))
    ful_imp = int(np.count_nonzero(fwd & (d2 >= njr) & (d1 < njr)))
    notoccur = int(np.count_nonzero((d1 >= njr) & (d2 >= njr)))
    failed_ret = int(np.count_nonzero(~fwd & (d1 < njr)))
    failed_imp = int(np.count_nonzero(~fwd & (d1 >= njr) & (d2 < njr)))
    return {"ful_ret": ful_ret, "poss_ret": failed_ret + ful_ret, "ful_imp": ful_imp,
            "poss_imp": failed_imp + ful_imp, "notoccur": notoccur}


def _recount(d1: np.ndarray, d2: np.ndarray, njr: int) -> tuple[int, int]:
    """(fulfilled, possible) as prefs_avgjg_Rnonrel recounts: fulfilled when d1 is retrieved and before d2."""
    ful = int(np.count_nonzero((d1 < d2) & (d1 < njr)))
    return ful, len(d1)


def _ratio(ful: float, poss: float) -> float:
    return ful / poss if poss else float("nan")


def _padded(counts: dict, R: int, N: int, num_rel_ret: int, num_rel: int, ret_only: bool) -> float:
    """A group's Rnonrel ratio when it has no more non-relevant documents than relevant ones (R >= N)."""
    if ret_only:
        ful, poss = counts["ful_ret"], counts["poss_ret"]
    else:
        ful = counts["ful_ret"] + counts["ful_imp"]
        poss = counts["poss_ret"] + counts["poss_imp"] + counts["notoccur"]
    return _ratio(ful + num_rel_ret * (R - N), poss + num_rel * (R - N))


class PreferenceError(MetricsError):
    """Inconsistent preference judgments (trec_eval stops on them)."""


def _level_group(jsg_code: np.ndarray, level: np.ndarray) -> np.ndarray:
    """An id per run of equal (sub-group, level) in judgment order."""
    change = np.r_[True, (jsg_code[1:] != jsg_code[:-1]) | (level[1:] != level[:-1])]
    return np.cumsum(change) - 1


def _group_pairs(jsg_code: np.ndarray, level: np.ndarray):
    """Line pairs (a, b): same sub-group, b at a lower level (lines sorted by sub-group, level descending)."""
    n = len(level)
    group = _level_group(jsg_code, level)
    group_end = np.searchsorted(group, group, side="right")             # first line of the next level
    sub_end = np.searchsorted(jsg_code, jsg_code, side="right")         # end of the sub-group
    return _partner_pairs(group_end, sub_end) if n else (np.empty(0, int), np.empty(0, int))


UNWRITTEN = np.iinfo(np.int64).max   # a rank past every document: what memory trec_eval never wrote reads as


class RankPool:
    """trec_eval's pool of the internal ranks of one-sub-group judgment groups, kept across queries.

    prefs_avgjg_Rnonrel takes the first R ranks of a group's lowest level; when that level holds
    fewer, trec_eval reads on through this pool: the ranks of the query's following groups, then
    what earlier queries left there. The pool is emulated so those values are trec_eval's too;
    memory trec_eval never wrote (a pool it has just enlarged) reads 0 here.
    """

    def __init__(self) -> None:
        self.data = np.zeros(0, dtype=np.int64)

    def load(self, ranks: np.ndarray, needed: int) -> None:
        """A query's ranks; the pool grows (as trec_eval's, by ``needed``) when they do not fit."""
        if needed > len(self.data):
            self.data = np.full(len(self.data) + needed, UNWRITTEN, dtype=np.int64)
        self.data[:len(ranks)] = ranks

    def read(self, start: int, count: int) -> np.ndarray:
        out = self.data[start:start + count]
        return np.r_[out, np.full(count - len(out), UNWRITTEN, dtype=np.int64)] if len(out) < count else out


def _ec_group(qid, jg, docno, level, rank, njr, lowest):
    """Counts of a group with one sub-group (equivalence classes of equal level); ``lowest(start, R)``
    gives R ranks from the group's line ``start`` on (its lowest level), as trec_eval reads them
    (see :class:`RankPool`)."""
    a, b = _group_pairs(np.zeros(len(level), dtype=np.int64), level)
    d1, d2 = rank[a], rank[b]
    same = np.flatnonzero(d1 == d2)
    if len(same):
        raise PreferenceError(f"query {qid!r}, judgment group {jg!r}: document {docno[a[same[0]]]!r} has two "
                              "different levels in one sub-group", fix="give each document one level per sub-group")
    relevant = level > 0.0
    retrieved = rank < njr
    num_rel, num_rel_ret = int(relevant.sum()), int((relevant & retrieved).sum())
    num_nonrel, num_nonrel_ret = int((~relevant).sum()), int((~relevant & retrieved).sum())
    counts = _classify(d1, d2, njr)

    group = _level_group(np.zeros(len(level), dtype=np.int64), level)
    last = group == group[-1]
    not_last_b = ~last[b]

    def recalc(R: int, ret_only: bool) -> float:
        new = lowest(int(np.argmax(last)), R)
        p1, p2 = d1[not_last_b], d2[not_last_b]
        if ret_only:                                # retrieved only: each list read up to its first unretrieved
            keep = (p1 < njr) & (p2 < njr)
            p1, p2 = p1[keep], p2[keep]
            new = new[:int(np.argmax(new >= njr))] if (new >= njr).any() else new
            mine = rank[rank < njr]
            q1, q2 = np.repeat(mine, len(new)), np.tile(new, len(mine))
        else:
            q1, q2 = np.repeat(rank, len(new)), np.tile(new, len(rank))
        if ret_only:
            ful = int(np.count_nonzero(p1 < p2)) + int(np.count_nonzero(q1 < q2))
            return _ratio(ful, len(p1) + len(q1))
        f1, n1 = _recount(p1, p2, njr)
        f2, n2 = _recount(q1, q2, njr)
        return _ratio(f1 + f2, n1 + n2)

    rnonrel = (_padded(counts, num_rel, num_nonrel, num_rel_ret, num_rel, False) if num_rel >= num_nonrel
               else recalc(num_rel, False))
    rnonrel_ret = (_padded(counts, num_rel_ret, num_nonrel_ret, num_rel_ret, num_rel, True)
                   if num_rel_ret >= num_nonrel_ret else recalc(num_rel_ret, True))
    return counts, d1, d2, rnonrel, rnonrel_ret


def _closure(matrix: np.ndarray) -> np.ndarray:
    """Reflexive transitive closure of a boolean matrix (Warshall: one vectorised pass per node)."""
    closed = matrix.copy()
    np.fill_diagonal(closed, True)
    for k in range(len(closed)):
        closed |= np.outer(closed[:, k], closed[k, :])
    return closed


def _pa_group(qid, jg, jsg, docno, level, rank, njr, nj):
    """Counts of a group with several sub-groups (a preference matrix with transitive preferences)."""
    levels: dict[int, float] = {}
    for r, lv, d in zip(rank.tolist(), level.tolist(), docno):  # in judgment order, as trec_eval checks
        before = levels.get(r, -1.0)
        if (before > 0.0 and lv == 0.0) or (before == 0.0 and lv > 0.0):
            raise PreferenceError(f"query {qid!r}, judgment group {jg!r}: document {d!r} has level 0 and a level "
                                  "above 0", fix="a non-relevant document (level 0) has level 0 in every sub-group")
        levels[r] = lv
    docs = np.unique(rank)
    local = np.searchsorted(docs, rank)
    _, jsg_code = np.unique(jsg, return_inverse=True)
    a, b = _group_pairs(jsg_code, level)
    matrix = np.zeros((len(docs), len(docs)), dtype=bool)
    matrix[local[a], local[b]] = True
    closed = _closure(matrix)
    np.fill_diagonal(closed, False)
    conflict = np.argwhere(closed & closed.T)
    if len(conflict):
        i, j = conflict[0]
        name = {r: d for r, d in zip(rank.tolist(), docno)}
        raise PreferenceError(f"query {qid!r}, judgment group {jg!r}: documents {name[int(docs[i])]!r} and "
                              f"{name[int(docs[j])]!r} are each preferred to the other",
                              fix="put contradicting preferences in different judgment groups")
    li, lj = np.nonzero(closed)
    d1, d2 = docs[li], docs[lj]
    counts = _classify(d1, d2, njr)
    doc_level = np.array([levels[int(r)] for r in docs], dtype=np.float64)
    retrieved = docs < njr
    num_rel, num_rel_ret = int((doc_level > 0).sum()), int(((doc_level > 0) & retrieved).sum())
    num_nonrel, num_nonrel_ret = int((doc_level == 0).sum()), int(((doc_level == 0) & retrieved).sum())

    def recalc(ret_only: bool) -> float:
        zeros = docs[doc_level == 0.0]
        if ret_only:
            zeros = zeros[zeros < njr]
        first_discarded = zeros[num_rel] if len(zeros) > num_rel else (njr if ret_only else nj)
        keep = ~((docs >= first_discarded) & (doc_level == 0.0))
        use = keep[li] & keep[lj]
        p1, p2 = d1[use], d2[use]
        if ret_only:
            both = (p1 < njr) & (p2 < njr)
            p1, p2 = p1[both], p2[both]
            return _ratio(int(np.count_nonzero(p1 < p2)), len(p1))
        return _ratio(*_recount(p1, p2, njr))

    rnonrel = (_padded(counts, num_rel, num_nonrel, num_rel_ret, num_rel, False) if num_rel >= num_nonrel
               else recalc(False))
    rnonrel_ret = (_padded(counts, num_rel_ret, num_nonrel_ret, num_rel_ret, num_rel, True)
                   if num_rel_ret >= num_nonrel_ret else recalc(True))
    return counts, d1, d2, rnonrel, rnonrel_ret


def _mean_over_groups(ratios: list[float], n_groups: int, skip_empty: bool = True) -> float:
    total = 0.0
    for value in ratios:                # in group order, as trec_eval adds them
        if skip_empty and value != value:
            continue
        total += value
    return total / n_groups if total > 0.0 else 0.0


DENSE_PAIRS = 1 << 22   # judged documents^2 up to which pair counts are kept in a dense array (32 MB)


def _pair_measures(d1: np.ndarray, d2: np.ndarray, njr: int, nj: int, distinct: bool = False
                   ) -> tuple[float, float, float]:
    """prefs_pair, prefs_pair_ret, prefs_pair_imp from every group's preferences (pairs of internal ranks);
    ``distinct``: no pair of documents occurs twice (one group whose documents are listed once)."""
    if len(d1) == 0:
        return 0.0, 0.0, 0.0
    if distinct:     # each pair once: its share is 0 or 1, and every sum a count (exact in any order)
        fwd = d1 < d2
        hi_ret, lo_ret = np.maximum(d1, d2) < njr, np.minimum(d1, d2) < njr
        n_both, n_one = int(np.count_nonzero(hi_ret)), int(np.count_nonzero(lo_ret & ~hi_ret))
        s_both = float(np.count_nonzero(fwd & hi_ret))
        s_imp = s_both + float(np.count_nonzero(fwd & lo_ret & ~hi_ret))
        return (s_imp / len(d1), s_both / n_both if n_both else 0.0,
                s_imp / (n_both + n_one) if n_both + n_one else 0.0)
    lo, hi = np.minimum(d1, d2), np.maximum(d1, d2)
    code = lo.astype(np.int64) * nj + hi
    if nj * nj <= DENSE_PAIRS:     # a count per cell of the nj x nj pair matrix: no sort
        total = np.bincount(code, minlength=nj * nj).astype(np.float64)
        forward = np.bincount(code, weights=(d1 < d2).astype(np.float64), minlength=nj * nj)
        keys = np.flatnonzero(total)
        total, forward = total[keys], forward[keys]
    else:
        keys, inverse = np.unique(code, return_inverse=True)
        forward = np.bincount(inverse, weights=(d1 < d2).astype(np.float64), minlength=len(keys))
        total = np.bincount(inverse, minlength=len(keys)).astype(np.float64)
    k_lo, k_hi = keys // nj, keys % nj
    share = forward / total
    both = k_hi < njr
    one = (k_lo < njr) & (k_hi >= njr)
    n_both, n_one, n_all = int(both.sum()), int(one.sum()), len(keys)
    sums = np.cumsum(np.r_[share[both], share[one]])     # trec_eval adds pairs in this order
    s_both = float(sums[n_both - 1]) if n_both else 0.0
    s_imp = float(sums[-1]) if len(sums) else 0.0
    pair = s_imp / n_all if n_all else 0.0
    pair_ret = s_both / n_both if n_both else 0.0
    pair_imp = s_imp / (n_both + n_one) if n_both + n_one else 0.0
    return pair, pair_ret, pair_imp


def query_preferences(judgments: PreferenceJudgments, ranked: np.ndarray, pool: RankPool | None = None
                      ) -> dict[str, float]:
    """The 14 preference values of one query, from its judgments and its ranked docnos (``pool``: the
    rank pool left by the queries before, see :class:`RankPool`)."""
    pool = RankPool() if pool is None else pool
    qid = judgments.qid
    judged = np.unique(judgments.docno)
    judged_set = set(judged.tolist())
    retrieved = ranked[np.fromiter((d in judged_set for d in ranked), dtype=bool, count=len(ranked))]
    njr, nj = len(retrieved), len(judged)
    internal = {d: i for i, d in enumerate(retrieved.tolist())}
    for d in judged.tolist():
        if d not in internal:
            internal[d] = len(internal)
    rank = np.fromiter((internal[d] for d in judgments.docno), dtype=np.int64, count=len(judgments.docno))
    jg_values, jg_code = np.unique(judgments.jg, return_inverse=True)
    _, jsg_code = np.unique(judgments.jsg, return_inverse=True)
    order = np.lexsort((rank, -judgments.level, jsg_code, jg_code))
    per_group = []
    all_d1, all_d2 = [], []
    bounds = np.searchsorted(jg_code[order], np.arange(len(jg_values) + 1))
    groups = [order[bounds[g]:bounds[g + 1]] for g in range(len(jg_values))]
    matrix_form = [len(np.unique(jsg_code[rows])) > 1 for rows in groups]
    in_pool = [rank[rows] for rows, pa_form in zip(groups, matrix_form) if not pa_form]
    pool.load(np.concatenate(in_pool) if in_pool else np.empty(0, dtype=np.int64), len(rank))
    offset = 0
    for jg, rows, pa_form in zip(jg_values.tolist(), groups, matrix_form):
        args = (judgments.docno[rows], judgments.level[rows], rank[rows])
        if pa_form:
            result = _pa_group(qid, jg, judgments.jsg[rows], *args, njr, nj)
        else:
            result = _ec_group(qid, jg, *args, njr, lambda start, count, at=offset: pool.read(at + start, count))
            offset += len(rows)
        per_group.append(result)
        all_d1.append(result[1])
        all_d2.append(result[2])
    counts = [r[0] for r in per_group]
    n = len(counts)

    def total(*keys):
        return sum(c[k] for c in counts for k in keys)

    ful, poss = total("ful_ret", "ful_imp"), total("poss_ret", "poss_imp", "notoccur")
    ful_ret, poss_ret = total("ful_ret"), total("poss_ret")
    ful_imp, poss_imp = ful, total("poss_ret", "poss_imp")
    distinct = len(per_group) == 1 and (matrix_form[0] or len(judged) == len(rank))
    pair, pair_ret, pair_imp = _pair_measures(np.concatenate(all_d1), np.concatenate(all_d2), njr, nj, distinct)
    return {
        "prefs_num_prefs_poss": float(poss),
        "prefs_num_prefs_ful": float(ful),
        "prefs_num_prefs_ful_ret": float(ful_ret),
        "prefs_simp": ful / poss if poss else 0.0,
        "prefs_pair": pair,
        "prefs_avgjg": _mean_over_groups(
            [_ratio(c["ful_ret"] + c["ful_imp"], c["poss_ret"] + c["poss_imp"] + c["notoccur"]) for c in counts], n),
        "prefs_avgjg_Rnonrel": _mean_over_groups([r[3] for r in per_group], n, skip_empty=False),
        "prefs_simp_ret": ful_ret / poss_ret if poss_ret else 0.0,
        "prefs_pair_ret": pair_ret,
        "prefs_avgjg_ret": _mean_over_groups([_ratio(c["ful_ret"], c["poss_ret"]) for c in counts], n),
        "prefs_avgjg_Rnonrel_ret": _mean_over_groups([r[4] for r in per_group], n, skip_empty=False),
        "prefs_simp_imp": ful_imp / poss_imp if poss_imp else 0.0,
        "prefs_pair_imp": pair_imp,
        "prefs_avgjg_imp": _mean_over_groups(
            [_ratio(c["ful_ret"] + c["ful_imp"], c["poss_ret"] + c["poss_imp"]) for c in counts], n),
    }


def preference_values(judgments: dict[str, PreferenceJudgments], rankings: dict[str, np.ndarray],
                      qids: list[str]) -> dict[str, np.ndarray]:
    """Per measure name, one value per query of ``qids`` (each must have judgments; a query without
    a ranking is scored on an empty one)."""
    empty = np.empty(0, dtype=object)
    pool = RankPool()
    rows = [query_preferences(judgments[q], rankings.get(q, empty), pool) for q in qids]
    return {name: np.array([row[name] for row in rows], dtype=np.float64) for name in NAMES}


FAMILIES = ()
ALIASES: dict = {}

__all__ = ["NAMES", "PreferenceJudgments", "PreferenceError", "preference_judgments", "ranked_docnos",
           "query_preferences", "preference_values"]

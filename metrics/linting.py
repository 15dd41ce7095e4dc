"""lint(qrels, run): everything doubtful about evaluating a run against qrels, as findings.

Judged@k comes from the measure itself (:mod:`metrics.measures`), so the number lint reports is
the number ``evaluate(..., ["Judged@k"])`` gives: a query of the qrels the run lacks counts 0.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import io
from .errors import MetricsError
from .evaluation import DEFAULT_MEASURES, evaluate_ranked, measure_list
from .io.validate import plural
from .measures import iprec_curve
from .ranking import Ranked, rank

RANX_STABLE_MAX = 15
"""ranx sorts a query's scores with numba's quicksort, which is an insertion sort (stable: ties
keep input order) for at most 15 documents and an unstable partition sort above."""
EXAMPLES = 5


def lint(qrels, run, *, k: int = 10) -> list[io.Finding]:
    """The run's own findings (the qrels' stay on ``qrels.findings``), queries of the run without
    judgments (ignored by evaluation), queries of the qrels the run lacks (scored 0), and Judged@k:
    the mean over the qrels' queries of the share of the top k (canonical order) that is judged,
    dividing by min(k, retrieved) as ir_measures does; a query the run lacks counts 0.
    """
    qrels = io.read_qrels(qrels)
    run = io.read_run(run)
    if int(k) < 1:
        raise MetricsError(f"k must be a whole number >= 1, got {k!r}", fix="for example k=10")
    k = int(k)
    findings = list(run.findings)
    run_queries = pc.unique(run.table["qid"])
    qrels_queries = pc.unique(qrels.table["qid"])
    extra = _sorted_strings(run_queries.filter(pc.invert(pc.is_in(run_queries, value_set=qrels_queries))))
    missing = _sorted_strings(qrels_queries.filter(pc.invert(pc.is_in(qrels_queries, value_set=run_queries))))
    if len(extra):
        findings.append(io.Finding(
            "queries_not_in_qrels",
            f"{len(extra)} of {plural(len(run_queries), 'query')} of {run.name} "
            f"{'has' if len(extra) == 1 else 'have'} no judgments; "
            "evaluation ignores them",
            len(extra), extra[:5]))
    if len(missing):
        findings.append(io.Finding(
            "queries_not_in_run",
            f"{len(missing)} of {plural(len(qrels_queries), 'judged query')} "
            f"{'is' if len(missing) == 1 else 'are'} missing from {run.name}; "
            "missing queries score 0 by default (trec_eval -c)",
            len(missing), missing[:5]))
    measure = f"Judged@{k}"
    ours = rank(run, qrels)             # trec_eval's order, once for Judged@k and the parity checks
    values = evaluate_ranked(ours, [measure])[measure]
    n = len(values)
    if n:
        value = float(values.mean())
        findings.append(io.Finding(
            "judged",
            f"{measure} = {value:.4f} over {plural(n, 'judged query')} of {run.name}: "
            f"{'all' if value == 1 else 'not all'} of the top {k} documents are judged"
            + ("" if value == 1 else "; unjudged documents count as non-relevant")
            + ("; a query the run lacks counts 0" if len(missing) else ""),
            n, [], value))
    findings.extend(parity(qrels, run, ranked=ours))
    return findings


def parity(qrels, run, *, examples: int = EXAMPLES, ranked: Ranked | None = None) -> list[io.Finding]:
    """Where ranx 0.3 or pytrec_eval (trec_eval 9.0.8) give another number than trec_eval 10, and why.

    The relevance measures (nDCG, AP, P, R, RR) depend only on the sequence of positive grades
    down the ranking, so a query differs exactly where another library's order changes that
    sequence (a swap of an unjudged and a judged non-relevant document, which only Bpref, infAP
    and Judged see, is not counted):

    - ``parity_ranx_ties``: ranx orders by score with ties in input order (numba's insertion sort)
      on queries of at most :data:`RANX_STABLE_MAX` documents, where trec_eval breaks ties by docno
      descending; above that its quicksort leaves ties in an order of its own, so a tie group that
      mixes labels may come out either way (``parity_ranx_unstable``).
    - ``parity_float32``: pytrec_eval stores scores as float32; distinct float64 scores of a query
      that round to one float32 tie there and fall back to docno order.
    - ``parity_iprec``: trec_eval 9.0.8 turns a recall level x into c = floor(x R + 0.9) relevant
      documents, trec_eval 10 into round(x R) (half away from zero); they differ when the
      fraction of x R lies in [0.1, 0.5), and so do IPrec@x and 11pt_avg when the interpolated
      precision at those two counts differs. Shown on the 11 standard levels.

    Each finding counts the queries and names the first ``examples`` of them (``query QID``).
    ``ranked`` is ``rank(run, qrels)`` when the caller has it.
    """
    qrels = io.read_qrels(qrels)
    run = io.read_run(run)
    table = run.table
    ours = rank(run, qrels) if ranked is None else ranked
    if not len(ours.rel):
        return []
    findings = []
    score = table.column("score").to_numpy().astype(np.float64)
    # ranx: global order by score descending, ties in input order; the rank column carries it
    in_ranx_order = np.empty(len(score), dtype=np.int64)
    in_ranx_order[np.lexsort((np.arange(len(score)), -score))] = np.arange(len(score))
    ranx = rank(_with(table, "rank", in_ranx_order, run.name), qrels, ties="rank")
    lengths = ours.lengths
    small = lengths <= RANX_STABLE_MAX
    moved = _changed_queries(ours, ranx)
    exact = moved & small
    unstable = _mixed_ties(ours) & ~small
    if exact.any():
        findings.append(io.Finding(
            "parity_ranx_ties",
            f"ranx would score {plural(int(exact.sum()), 'query')} of {run.name} differently from "
            "trec_eval 10: tied scores there keep the file's order, trec_eval orders them by docno "
            "descending, and the tie mixes relevance grades",
            int(exact.sum()), _examples(ours, exact, examples)))
    if unstable.any():
        findings.append(io.Finding(
            "parity_ranx_unstable",
            f"ranx may score {plural(int(unstable.sum()), 'query')} of {run.name} differently from "
            f"trec_eval 10: they hold more than {RANX_STABLE_MAX} documents, where ranx's sort leaves "
            "tied scores in no fixed order, and a tie mixes relevance grades",
            int(unstable.sum()), _examples(ours, unstable, examples)))
    single = score.astype(np.float32).astype(np.float64)
    if not np.array_equal(single, score):
        pytrec = rank(_with(table, "score", single, run.name), qrels)
        collapsed = _changed_queries(ours, pytrec)
        if collapsed.any():
            findings.append(io.Finding(
                "parity_float32",
                f"pytrec_eval (and ir_measures, PyTerrier) would score "
                f"{plural(int(collapsed.sum()), 'query')} of {run.name} differently from trec_eval 10: "
                "distinct scores there become equal in float32 and reorder by docno, moving "
                "relevant documents",
                int(collapsed.sum()), _examples(ours, collapsed, examples)))
    old, new = iprec_curve(ours, rounding="trec_eval9"), iprec_curve(ours)
    rounded = ~((old == new) | (np.isnan(old) & np.isnan(new))).all(axis=1)
    if rounded.any():
        findings.append(io.Finding(
            "parity_iprec",
            f"pytrec_eval (trec_eval 9.0.8) would give other iprec_at_recall and 11pt_avg values on "
            f"{plural(int(rounded.sum()), 'query')} of {run.name}: 9.0.8 counts floor(x R + 0.9) "
            "relevant documents for recall level x, trec_eval 10 round(x R)",
            int(rounded.sum()), _examples(ours, rounded, examples)))
    return findings


PEERS = ("ranx", "pytrec_eval", "ir_measures", "PyTerrier")

REASONS = {
    "ranx_ties": "ranx keeps tied scores in the file's order (queries of at most "
                 f"{RANX_STABLE_MAX} documents); trec_eval 10 and nDCG Lab order them by docno, descending",
    "ranx_unstable": f"ranx's sort leaves tied scores in no fixed order above {RANX_STABLE_MAX} documents, and a "
                     "tie here mixes relevance grades: its number may differ (which one cannot be told)",
    "float32": "pytrec_eval keeps scores as float32: distinct scores of the query become equal and are "
               "ordered by docno, moving relevant documents",
    "iprec_rounding": "pytrec_eval bundles trec_eval 9.0.8, which counts floor(x R + 0.9) relevant documents for "
                      "recall level x where trec_eval 10 counts round(x R)",
    "gdeval_rounding": "ir_measures computes nDCG with exponential gain and ERR through gdeval, which prints each "
                       "query rounded to 5 decimals",
    "correction_family": "p-values are corrected over different families: nDCG Lab over every run x measure cell "
                         "of a comparison, PyTerrier per measure over the runs, ranx not at all",
}
"""Why a peer prints another number: reason code -> explanation (``lint --format json``)."""

CORRECTIONS = {"nDCG Lab": "every run x measure cell (Holm by default)", "PyTerrier": "per measure, over the runs",
               "ranx": "none", "ir_measures": "no significance tests", "pytrec_eval": "no significance tests"}
"""The multiple-testing correction family of each tool's significance tests."""

RANX_FAMILIES = frozenset({"nDCG", "DCG", "AP", "P", "R", "RR", "Rprec", "Success", "Bpref", "NumRelRet", "RBP"})
"""nDCG Lab families that ranx computes too."""
GDEVAL_FAMILIES = frozenset({"nDCG", "ERR"})
"""Families ir_measures sends to gdeval: nDCG with exponential gain and a cutoff, ERR with a cutoff."""
_SAME = 1e-9   # values nearer than this are the same printed number


def _through_gdeval(measure) -> bool:
    if measure.family.name not in GDEVAL_FAMILIES or measure.cutoff is None:
        return False
    return measure.family.name == "ERR" or (measure.param("dcg") == "exp-log2" and not measure.param("gains")
                                            and not measure.param("judged_only"))


def peer_differences(qrels, run, measures=DEFAULT_MEASURES, *, ranked: Ranked | None = None) -> list[dict]:
    """Every query and measure where a peer would print another number than nDCG Lab (= trec_eval 10),
    and why: one record ``{run, peer, qid, measure, ndcglab, peer_value, reason}`` per difference
    (``peer_value`` None where it cannot be told: ranx's unstable ties); ``reason`` is a key of
    :data:`REASONS`.

    The peers' numbers are computed here by changing what differs: ranx's tie order (the file's, on
    queries of at most :data:`RANX_STABLE_MAX` documents), pytrec_eval's float32 scores and trec_eval
    9.0.8's IPrec cut-offs, and gdeval's 5-decimal rounding for the measures ir_measures sends there.
    ir_measures computes the rest with pytrec_eval; PyTerrier's per-query numbers are ir_measures'.
    Queries the run lacks score 0 for every tool and never differ.
    """
    qrels = io.read_qrels(qrels)
    run = io.read_run(run)
    ours = rank(run, qrels) if ranked is None else ranked
    parsed = [m for m in measure_list(measures) if not isinstance(m, str)]
    names = [str(m) for m in parsed]
    if not len(ours.rel) or not parsed:
        return []
    mine = evaluate_ranked(ours, names)
    table = run.table
    score = table.column("score").to_numpy().astype(np.float64)
    out: list[dict] = []

    def add(peer, flags, measure, theirs, reason):
        for i in np.flatnonzero(flags):
            out.append({"run": run.name, "peer": peer, "qid": str(ours.qids[i]), "measure": measure,
                        "ndcglab": float(mine[measure][i]),
                        "peer_value": None if theirs is None else float(theirs[i]), "reason": reason})

    # ranx
    in_ranx_order = np.empty(len(score), dtype=np.int64)
    in_ranx_order[np.lexsort((np.arange(len(score)), -score))] = np.arange(len(score))
    ranx = rank(_with(table, "rank", in_ranx_order, run.name), qrels, ties="rank")
    small = ours.lengths <= RANX_STABLE_MAX
    unstable = _mixed_ties(ours) & ~small
    ranx_names = [n for n, m in zip(names, parsed) if m.family.name in RANX_FAMILIES]
    theirs = evaluate_ranked(ranx, ranx_names) if ranx_names else {}
    for name in ranx_names:
        add("ranx", small & (np.abs(theirs[name] - mine[name]) > _SAME), name, theirs[name], "ranx_ties")
        add("ranx", unstable, name, None, "ranx_unstable")

    # pytrec_eval, and ir_measures and PyTerrier on it
    single = score.astype(np.float32).astype(np.float64)
    pytrec = mine if np.array_equal(single, score) else evaluate_ranked(
        rank(_with(table, "score", single, run.name), qrels), names)
    for name, m in zip(names, parsed):
        if m.family.name in ("IPrec", "11pt_avg"):
            levels = (m.cutoff,) if m.family.name == "IPrec" else None
            old = iprec_curve(ours, levels, rounding="trec_eval9") if levels else \
                iprec_curve(ours, rounding="trec_eval9")
            value = old[:, 0] if levels else old.mean(axis=1)
            moved = np.abs(value - mine[name]) > _SAME
            for peer in ("pytrec_eval", "ir_measures", "PyTerrier"):
                add(peer, moved, name, value, "iprec_rounding")
            continue
        moved = np.abs(pytrec[name] - mine[name]) > _SAME
        add("pytrec_eval", moved, name, pytrec[name], "float32")
        if _through_gdeval(m):
            rounded = np.round(mine[name], 5)
            for peer in ("ir_measures", "PyTerrier"):
                add(peer, np.abs(rounded - mine[name]) > 1e-12, name, rounded, "gdeval_rounding")
        else:
            for peer in ("ir_measures", "PyTerrier"):
                add(peer, moved, name, pytrec[name], "float32")
    order = {p: i for i, p in enumerate(PEERS)}
    return sorted(out, key=lambda r: (order[r["peer"]], names.index(r["measure"]), r["qid"]))


def _with(table: pa.Table, column: str, values: np.ndarray, name: str) -> SimpleNamespace:
    """The run with ``column`` replaced, as :func:`metrics.ranking.rank` takes it."""
    array = pa.array(values)
    if column in table.column_names:
        table = table.set_column(table.column_names.index(column), column, array)
    else:
        table = table.append_column(column, array)
    return SimpleNamespace(table=table, name=name)


def _labels(ranked: Ranked) -> np.ndarray:
    """Per retrieved document its gain label: the grade when judged positive, else 0. Two orders
    with the same label sequence give the same nDCG, AP, P, R, RR; two that differ give another
    nDCG (a strictly falling discount over other gains)."""
    return np.where(ranked.judged & (ranked.rel > 0), ranked.rel, 0)


def _query_of(ranked: Ranked, rows: np.ndarray) -> np.ndarray:
    return np.searchsorted(ranked.offsets, rows, side="right") - 1


def _changed_queries(a: Ranked, b: Ranked) -> np.ndarray:
    """Per query: True when the two orders of one run give different gain-label sequences."""
    changed = np.zeros(a.n_queries, dtype=bool)
    changed[_query_of(a, np.flatnonzero(_labels(a) != _labels(b)))] = True
    return changed


def _mixed_ties(ranked: Ranked) -> np.ndarray:
    """Per query: True when some group of equal scores holds documents of different gain labels."""
    labels = _labels(ranked)
    query = _query_of(ranked, np.arange(len(labels)))
    same = (query[1:] == query[:-1]) & (ranked.score[1:] == ranked.score[:-1])
    mixed = np.zeros(ranked.n_queries, dtype=bool)
    if not same.any():
        return mixed
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    lows, highs = np.minimum.reduceat(labels, starts), np.maximum.reduceat(labels, starts)
    mixed[query[starts[lows != highs]]] = True
    return mixed


def _examples(ranked: Ranked, flagged: np.ndarray, count: int) -> list[str]:
    return [f"query {q}" for q in ranked.qids[flagged][:count]]


def _sorted_strings(arr: pa.Array) -> list[str]:
    return arr.take(pc.sort_indices(arr)).to_pylist()

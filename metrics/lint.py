"""lint(qrels, run): everything doubtful about evaluating a run against qrels, as findings.

Judged@k comes from the measure itself (:mod:`metrics.measures`), so the number lint reports is
the number ``evaluate(..., ["Judged@k"])`` gives: a query of the qrels the run lacks counts 0.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from . import io
from .errors import MetricsError
from .evaluate import evaluate
from .io.validate import plural


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
    values = evaluate(qrels, run, [measure])["value"]
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
    return findings


def _sorted_strings(arr: pa.Array) -> list[str]:
    return arr.take(pc.sort_indices(arr)).to_pylist()

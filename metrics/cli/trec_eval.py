"""``python -m metrics trec_eval [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N] [-m measure[.params]]... QRELS RUN``.

A drop-in for trec_eval 10: the same flags and measure names (nicknames
``official``, ``all_trec``, ``set``), and its output line for line: the
measures in trec_eval's order under the names it prints (``ndcg_cut_10``,
``P_5``, ``iprec_at_recall_0.10``), per query with ``-q`` (queries sorted as
strings), then the summary under ``all`` with ``runid`` first; values with 4
decimals, or ``--decimals N`` (the layout of trec_eval built with 10-decimal
output). Where trec_eval refuses input (a docno twice in a query, an unknown
measure) this exits non-zero with a one-line message.

A query of the qrels that the run lacks is scored under -c as trec_eval
scores it: on a list of one placeholder document that no qrels judge, after
which the values named exactly num_ret, utility, relstring, rbp_resid and
unj* are reset to 0 (so ``utility.2,-1,0,0``, named otherwise, keeps the
placeholder's -1, as in trec_eval).

Without -c such a query stops trec_eval 10 with an error, and this command too.

Two flags are narrower than trec_eval's: ``-l`` must be >= 0 and ``-M`` >= 1
(trec_eval would then count unjudged documents as relevant, or score empty
lists).
"""
from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics import evaluate_ranked, rank_run, read_qrels, read_run
from metrics.errors import MetricsError
from metrics.measures import TextMeasure, aggregate, relstring, trec_plan

from . import defer_pandas


def register(sub) -> None:
    p = sub.add_parser(
        "trec_eval", help="trec_eval 10's command line: same flags, same measures, same output",
        description="Evaluate RUN against QRELS exactly as trec_eval 10 does, and print its output line for "
                    "line (see trec_eval -h for the measures; nicknames official, all_trec, set).")
    p.add_argument("-q", "--query_eval_wanted", dest="per_query", action="store_true",
                   help="give the evaluation of each query too")
    p.add_argument("-m", "--measure", dest="measures", action="append", metavar="measure[.params]",
                   help="measure or nickname to print (repeatable; default official)")
    p.add_argument("-c", "--complete_rel_info_wanted", dest="complete", action="store_true",
                   help="average over every query of the qrels; a query the run lacks scores 0")
    p.add_argument("-l", "--level_for_rel", dest="rel_level", type=int, default=1, metavar="num",
                   help="minimum grade counted relevant (default 1)")
    p.add_argument("-n", "--nosummary", dest="summary", action="store_false", help="print no summary")
    p.add_argument("-N", "--Number_docs_in_coll", dest="num_docs", type=int, default=0, metavar="num",
                   help="number of documents in the collection (utility's fourth coefficient)")
    p.add_argument("-M", "--Max_retrieved_per_topic", dest="max_depth", type=int, default=None, metavar="num",
                   help="use only the top num documents of each query")
    p.add_argument("-J", "--Judged_docs_only", dest="judged_only", action="store_true",
                   help="drop unjudged documents before computing anything")
    p.add_argument("--decimals", type=int, default=4, metavar="N",
                   help="decimals of the values (default 4, as trec_eval; 10 = trec_eval built with --wide)")
    p.add_argument("qrels", help="the qrels file")
    p.add_argument("run", help="the run file ('-' reads standard input)")
    p.set_defaults(handler=run)


def run(args) -> int:
    defer_pandas()
    run_source = sys.stdin.buffer.read() if args.run == "-" else args.run
    lines = trec_eval_lines(
        args.qrels, run_source, args.measures or ["official"], per_query=args.per_query, complete=args.complete,
        judged_only=args.judged_only, rel_level=args.rel_level, max_depth=args.max_depth,
        num_docs=args.num_docs, summary=args.summary, decimals=args.decimals)
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


def trec_eval_lines(qrels, run, measures=("official",), *, per_query: bool = False, complete: bool = False,
                    judged_only: bool = False, rel_level: int = 1, max_depth: int | None = None,
                    num_docs: int = 0, summary: bool = True, decimals: int = 4) -> list[str]:
    """trec_eval 10's output lines for ``run`` against ``qrels`` (paths, bytes or parsed objects)."""
    if rel_level < 0:
        raise MetricsError(f"-l {rel_level}: the relevance level must be >= 0",
                           fix="trec_eval would count unjudged documents as relevant below 0")
    if max_depth is not None and max_depth < 1:
        raise MetricsError(f"-M {max_depth}: keep at least 1 document per query", fix="for example -M 1000")
    if decimals < 0:
        raise MetricsError(f"--decimals {decimals}: must be >= 0", fix="for example --decimals 10")
    plan = trec_plan(list(measures), num_docs=num_docs)
    qrels = read_qrels(qrels)
    run = read_run(run)
    tag = runid(run)
    missing = _missing_queries(qrels, run)
    if missing and not complete:
        raise MetricsError(f"query {min(missing)!r} of the qrels has no results in the run "
                           f"({len(missing)} such queries); trec_eval 10 stops here", source=run.source,
                           fix="add -c to score them 0 (or evaluate with metrics eval, which skips them)")
    if missing:
        run = _with_placeholders(run, sorted(missing))
    ranked = rank_run(qrels, run, missing="zero" if complete else "skip", max_depth=max_depth,
                      judged_only=judged_only)
    if ranked.n_queries == 0:
        raise MetricsError("no query has both results and relevance judgments", source=run.source,
                           fix="check that the run's query ids match the qrels'")
    numeric = [v.measure for v in plan if not isinstance(v.measure, TextMeasure)]
    values = evaluate_ranked(ranked, numeric, rel_level=rel_level) if numeric else {}
    texts = {v.measure: relstring(ranked, v.measure.length) for v in plan
             if isinstance(v.measure, TextMeasure) and v.measure.name == "relstring"}
    grades = qrels.table.column("rel").to_numpy()
    was_missing = np.isin(ranked.qids, list(missing))
    for v in plan:
        if was_missing.any() and (v.printed in _RESET or v.printed.startswith("unj")):
            if isinstance(v.measure, TextMeasure):
                texts[v.measure] = np.where(was_missing, "", texts[v.measure])
            else:
                values[str(v.measure)] = np.where(was_missing, 0.0, values[str(v.measure)])
    lines: list[str] = []
    if per_query:
        columns = []  # (name column, one formatted value per query) for every per-query value
        for v in plan:
            if v.spec.per_query:
                if isinstance(v.measure, TextMeasure):
                    texts_of = [f"'{text}'" for text in texts[v.measure]]
                else:
                    texts_of = [format_value(x, v.spec.value, decimals) for x in values[str(v.measure)]]
                columns.append((f"{v.printed:<22}", texts_of))
        for i, qid in enumerate(ranked.qids):
            lines.extend(f"{name}\t{qid}\t{column[i]}" for name, column in columns)
    if summary:
        for v in plan:
            if not v.spec.summary:
                continue
            if isinstance(v.measure, TextMeasure):
                lines.append(trec_line("runid", "all", tag))
                continue
            if complete and v.spec.complete_summary is not None:
                total = v.spec.complete_summary(grades)
            else:
                total = aggregate(v.measure, values[str(v.measure)])
            lines.append(trec_line(v.printed, "all", format_value(total, v.spec.value, decimals)))
    return lines


PLACEHOLDER = "ceci_nest_pas_un_docno"  # trec_eval's document for a query the run lacks (-c)
_RESET = ("num_ret", "utility", "relstring", "rbp_resid")  # reset after the placeholder, as trec_eval


def _missing_queries(qrels, run) -> set[str]:
    queries = pc.unique(qrels.table.column("qid"))
    present = pc.is_in(queries, value_set=pc.unique(run.table.column("qid")))
    return set(queries.filter(pc.invert(present)).to_pylist())


def _with_placeholders(run, queries: list[str]):
    """The run plus one placeholder document (score 1) for each of ``queries``."""
    schema = run.table.schema
    columns = {"qid": queries, "docno": [PLACEHOLDER] * len(queries), "score": [1.0] * len(queries),
               "rank": [1] * len(queries), "tag": [runid(run)] * len(queries)}
    extra = pa.table({name: pa.array(columns[name], schema.field(name).type) for name in schema.names})
    return dataclasses.replace(run, table=pa.concat_tables([run.table, extra]))


def trec_line(name: str, qid: str, text: str) -> str:
    """One line as trec_eval prints it: the name left-aligned in 22 characters, then tabs."""
    return f"{name:<22}\t{qid}\t{text}"


def format_value(value: float, kind: str = "double", decimals: int = 4) -> str:
    """A value as trec_eval prints it: ``%6.4f`` (``%.Nf`` for other decimals), ``%ld`` for counts.

    A NaN prints as glibc does, ``-nan`` when its sign bit is set (trec_eval's 0/0).
    """
    value = float(value)
    if kind == "long":
        return str(int(value))
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return f"{text:>6}" if decimals == 4 else text
    return f"{value:6.4f}" if decimals == 4 else f"{value:.{decimals}f}"


def runid(run) -> str:
    """The run's tag as trec_eval reports it: the tag of the run file's last line."""
    table = run.table
    if "tag" in table.column_names and table.num_rows:
        tag = table.column("tag")[table.num_rows - 1].as_py()
        if tag:
            return str(tag)
    return str(run.name)


__all__ = ["register", "run", "trec_eval_lines", "format_value", "trec_line", "runid"]

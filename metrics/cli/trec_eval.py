"""``python -m metrics trec_eval [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N] [-m measure[.params]]... [-R format]
[-T format] [-Z file] [-D level] QRELS RUN``.

A drop-in for trec_eval 10: the same flags and measure names (nicknames
``official``, ``all_trec``, ``set``, ``all_prefs``, ``prefs``, ``qrels_jg``), and its output line for line: the
measures in trec_eval's order under the names it prints (``ndcg_cut_10``,
``P_5``, ``iprec_at_recall_0.10``), per query with ``-q`` (queries sorted as
strings), then the summary under ``all`` with ``runid`` first; values with 4
decimals, or ``--decimals N`` (the layout of trec_eval built with 10-decimal
output). Where trec_eval refuses input (a docno twice in a query, an unknown
measure) this exits non-zero with a one-line message.

``-R`` reads the judgments as ``qrels`` (the default), ``prefs`` (preference judgments),
``qrels_prefs`` (a qrels read as preferences) or ``qrels_jg`` (a qrels whose second field names a
judgment group); see :mod:`metrics.measures.prefs` and :mod:`metrics.measures.judgment_groups`.
``-Z FILE`` prints every numeric value as a z-score against the per-query means and deviations of
FILE (:mod:`metrics.measures.zscores`), each name prefixed with ``Z``. ``-D 0.QID`` evaluates query QID
alone; debug levels above 0 (trec_eval's trace output) are refused. ``-T`` accepts trec_results,
trec_eval's only results format.

A query of the judgments that the run lacks is scored under -c as trec_eval
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

import argparse
import dataclasses
import math
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics import evaluate_ranked, rank_run, read_qrels, read_run
from metrics.engines.judgment_groups import evaluate_groups, group_qrels
from metrics.errors import MetricsError
from metrics.io.judgment_files import read_judgment_lines
from metrics.measures import TextMeasure, parse, relstring, trec_plan
from metrics.measures.base import GEOMETRIC_FLOOR
from metrics.measures.prefs import preference_judgments, preference_values, ranked_docnos
from metrics.measures.trec_names import FormatMeasure, atol
from metrics.measures.zscores import MISSING, read_zscore_file, zscore

from . import defer_pandas

REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")
RESULTS_FORMATS = ("trec_results",)
VERSION = "10.0"   # the trec_eval whose output this command reproduces


class _Version(argparse.Action):
    """``-v``/``--version``: trec_eval's version line on standard error, exit 0 (as trec_eval)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the trec_eval version reproduced, and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from metrics import __version__
        sys.stderr.write(f"trec_eval version {VERSION} (nDCG Lab metrics {__version__})\n")
        parser.exit(0)


def register(sub) -> None:
    p = sub.add_parser(
        "trec_eval", help="trec_eval 10's command line: same flags, same measures, same output",
        description="Evaluate RUN against QRELS exactly as trec_eval 10 does, and print its output line for "
                    "line (see trec_eval -h for the measures; nicknames official, all_trec, set, all_prefs, "
                    "prefs, qrels_jg).")
    p.add_argument("-v", "--version", action=_Version)
    p.add_argument("-q", "--query_eval_wanted", dest="per_query", action="store_true",
                   help="give the evaluation of each query too")
    p.add_argument("-m", "--measure", dest="measures", action="append", metavar="measure[.params]",
                   help="measure or nickname to print (repeatable; default official)")
    p.add_argument("-c", "--complete_rel_info_wanted", dest="complete", action="store_true",
                   help="average over every query of the qrels; a query the run lacks scores 0")
    p.add_argument("-l", "--level_for_rel", dest="rel_level", type=int, default=1, metavar="num",
                   help="minimum grade counted relevant (default 1)")
    p.add_argument("-n", "--nosummary", dest="summary", action="store_false", help="print no summary")
    p.add_argument("-D", "--Debug_level", dest="debug", default=None, metavar="level[.qid]",
                   help="0.QID evaluates query QID only (debug output, levels above 0, is not reproduced)")
    p.add_argument("-N", "--Number_docs_in_coll", dest="num_docs", type=int, default=0, metavar="num",
                   help="number of documents in the collection (utility's fourth coefficient)")
    p.add_argument("-M", "--Max_retrieved_per_topic", dest="max_depth", type=int, default=None, metavar="num",
                   help="use only the top num documents of each query")
    p.add_argument("-J", "--Judged_docs_only", dest="judged_only", action="store_true",
                   help="drop unjudged documents before computing anything")
    p.add_argument("-R", "--Rel_info_format", dest="rel_format", default="qrels", metavar="format",
                   help="format of the judgments: qrels (default), prefs, qrels_prefs, qrels_jg")
    p.add_argument("-T", "--Results_format", dest="results_format", default="trec_results", metavar="format",
                   help="format of the run: trec_results (the only one)")
    p.add_argument("-Z", "--Zscore", dest="zscores", default=None, metavar="Zmean_file",
                   help="print z-scores against the per-query mean and deviation in this file "
                        "(lines: qid measure mean stddev)")
    p.add_argument("--decimals", type=int, default=4, metavar="N",
                   help="decimals of the values (default 4, as trec_eval; 10 = trec_eval built with --wide)")
    p.add_argument("qrels", help="the judgments file (format as -R says)")
    p.add_argument("run", help="the run file ('-' reads standard input)")
    p.set_defaults(handler=run)


def run(args) -> int:
    defer_pandas()
    run_source = sys.stdin.buffer.read() if args.run == "-" else args.run
    lines = trec_eval_lines(
        args.qrels, run_source, args.measures or ["official"], per_query=args.per_query, complete=args.complete,
        judged_only=args.judged_only, rel_level=args.rel_level, max_depth=args.max_depth,
        num_docs=args.num_docs, summary=args.summary, decimals=args.decimals, rel_format=args.rel_format,
        results_format=args.results_format, zscores=args.zscores, debug=args.debug)
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


def _debug_query(debug: str | None) -> str | None:
    """The query of ``-D level[.qid]``; levels above 0 are refused (their trace output is not reproduced)."""
    if debug is None:
        return None
    level, dot, qid = str(debug).partition(".")
    if atol(level) > 0:
        raise MetricsError(f"-D {debug}: trec_eval's debug output (levels above 0) is not reproduced",
                           fix="use -D 0.QID to evaluate query QID alone")
    return qid if dot and qid else None


def _check_formats(plan, rel_format: str, results_format: str) -> None:
    if rel_format not in REL_FORMATS:
        raise MetricsError(f"-R {rel_format}: illegal rel_format", fix=f"one of {', '.join(REL_FORMATS)}")
    if results_format not in RESULTS_FORMATS:
        raise MetricsError(f"-T {results_format}: illegal retrieval results format", fix="use -T trec_results")
    for v in plan:
        if v.spec.name in ("runid", "num_q"):
            continue
        needs = v.measure.formats if isinstance(v.measure, FormatMeasure) else ("qrels",)
        if rel_format not in needs:
            raise MetricsError(f"measure {v.spec.name!r} cannot be computed from -R {rel_format} judgments",
                               fix=f"it needs -R {' or -R '.join(needs)}")


def trec_eval_lines(qrels, run, measures=("official",), *, per_query: bool = False, complete: bool = False,
                    judged_only: bool = False, rel_level: int = 1, max_depth: int | None = None,
                    num_docs: int = 0, summary: bool = True, decimals: int = 4, rel_format: str = "qrels",
                    results_format: str = "trec_results", zscores=None, debug: str | None = None) -> list[str]:
    """trec_eval 10's output lines for ``run`` against ``qrels`` (paths, bytes or parsed objects), the
    judgments read as ``rel_format``; z-scores against the file ``zscores`` when given."""
    if rel_level < 0:
        raise MetricsError(f"-l {rel_level}: the relevance level must be >= 0",
                           fix="trec_eval would count unjudged documents as relevant below 0")
    if max_depth is not None and max_depth < 1:
        raise MetricsError(f"-M {max_depth}: keep at least 1 document per query", fix="for example -M 1000")
    if decimals < 0:
        raise MetricsError(f"--decimals {decimals}: must be >= 0", fix="for example --decimals 10")
    only = _debug_query(debug)
    plan = trec_plan(list(measures), num_docs=num_docs)
    _check_formats(plan, rel_format, results_format)
    reference = read_zscore_file(zscores) if zscores is not None else None
    run = read_run(run)
    tag = runid(run)
    options = dict(complete=complete, judged_only=judged_only, rel_level=rel_level, max_depth=max_depth, only=only)
    if rel_format == "qrels":
        scored = _qrels_scores(plan, read_qrels(qrels), run, **options)
    elif rel_format == "qrels_jg":
        scored = _group_scores(plan, read_judgment_lines(qrels, "qrels_jg"), run, **options)
    else:
        scored = _preference_scores(plan, read_judgment_lines(qrels, rel_format), run, **options)
    return _lines(plan, scored, tag, per_query=per_query, summary=summary, decimals=decimals, complete=complete,
                  reference=reference)


@dataclasses.dataclass
class _Scored:
    """Per plan value, one entry per evaluated query (floats, or text for relstring); the queries; the
    number of queries a mean divides by; the summaries that -c takes from all judgments."""

    qids: list
    values: list
    n_average: int
    fixed_summary: dict


def _queries(all_qids: list[str], run, complete: bool, only: str | None, source: str, what: str = "judgments"):
    """The queries trec_eval evaluates, and the run with placeholders for those it lacks (under -c)."""
    qids = [q for q in all_qids if only is None or q == only]
    present = set(pc.unique(run.table.column("qid")).to_pylist())
    missing = [q for q in qids if q not in present]
    if missing and not complete:
        raise MetricsError(f"query {missing[0]!r} of the {what} has no results in the run "
                           f"({len(missing)} such queries); trec_eval 10 stops here", source=run.source,
                           fix="add -c to score them 0 (or evaluate with metrics eval, which skips them)")
    if not qids:
        raise MetricsError("no query has both results and relevance judgments", source=source,
                           fix="check that the run's query ids match the judgments'")
    return qids, (_with_placeholders(run, missing) if missing else run), set(missing)


def _qrels_scores(plan, qrels, run, *, complete, judged_only, rel_level, max_depth, only) -> _Scored:
    all_qids = sorted(set(pc.unique(qrels.table.column("qid")).to_pylist()))
    grades = qrels.table.column("rel").to_numpy()   # -c summaries (num_rel) count every query's judgments
    if only is not None:
        qrels = dataclasses.replace(qrels, table=qrels.table.filter(pc.equal(qrels.table.column("qid"), only)))
    if only is not None and qrels.table.num_rows == 0:
        raise MetricsError("no query has both results and relevance judgments", source=qrels.source,
                           fix=f"query {only!r} of -D is not in the qrels")
    _, run, missing = _queries(sorted(set(pc.unique(qrels.table.column("qid")).to_pylist())), run, complete, None,
                               qrels.source, "qrels")
    ranked = rank_run(qrels, run, missing="zero" if complete else "skip", max_depth=max_depth,
                      judged_only=judged_only)
    if ranked.n_queries == 0:
        raise MetricsError("no query has both results and relevance judgments", source=run.source,
                           fix="check that the run's query ids match the qrels'")
    numeric = [v.measure for v in plan if not isinstance(v.measure, TextMeasure)]
    values = evaluate_ranked(ranked, numeric, rel_level=rel_level) if numeric else {}
    texts = {v.measure: relstring(ranked, v.measure.length) for v in plan
             if isinstance(v.measure, TextMeasure) and v.measure.name == "relstring"}
    was_missing = np.isin(ranked.qids, list(missing))
    for v in plan:
        if was_missing.any() and (v.printed in _RESET or v.printed.startswith("unj")):
            if isinstance(v.measure, TextMeasure):
                texts[v.measure] = np.where(was_missing, "", texts[v.measure])
            else:
                values[str(v.measure)] = np.where(was_missing, 0.0, values[str(v.measure)])
    per_value, fixed = [], {}
    for i, v in enumerate(plan):
        if isinstance(v.measure, TextMeasure):
            per_value.append(texts.get(v.measure))
        else:
            per_value.append(values[str(v.measure)])
        if complete and v.spec.complete_summary is not None:
            fixed[i] = v.spec.complete_summary(grades)
    n_average = len(all_qids) if complete else ranked.n_queries
    return _Scored([str(q) for q in ranked.qids], per_value, n_average, fixed)


def _group_scores(plan, lines, run, *, complete, judged_only, rel_level, max_depth, only) -> _Scored:
    groups = group_qrels(lines)
    all_qids = sorted(set(lines.column("qid").tolist()))
    qids, run, _ = _queries(all_qids, run, complete, only, lines.source)
    wanted = [v.measure.param for v in plan if isinstance(v.measure, FormatMeasure)]
    values = evaluate_groups(groups, run, list(dict.fromkeys(wanted)), qids, rel_level=rel_level,
                             max_depth=max_depth, judged_only=judged_only) if wanted else {}
    per_value = [values[v.measure.param] if isinstance(v.measure, FormatMeasure) else _plain(v, qids)
                 for v in plan]
    return _Scored(qids, per_value, len(all_qids) if complete else len(qids), {})


def _preference_scores(plan, lines, run, *, complete, judged_only, rel_level, max_depth, only) -> _Scored:
    judgments = preference_judgments(lines)
    qids, run, _ = _queries(sorted(judgments), run, complete, only, lines.source)
    try:
        values = preference_values(judgments, ranked_docnos(run.table, max_depth), qids) \
            if any(isinstance(v.measure, FormatMeasure) for v in plan) else {}
    except MetricsError as error:
        raise MetricsError(error.problem, source=lines.source, fix=error.fix) from None
    per_value = [values[v.measure.name] if isinstance(v.measure, FormatMeasure) else _plain(v, qids) for v in plan]
    return _Scored(qids, per_value, len(judgments) if complete else len(qids), {})


def _plain(v, qids):
    """runid (printed from the run) and num_q (1 per query) beside another format's measures."""
    if isinstance(v.measure, TextMeasure):
        return None
    return np.ones(len(qids))


def _summarise(values: np.ndarray, rule: str, n_average: int) -> float:
    """A summary as trec_eval forms it: values added in query order, then a sum, mean or geometric mean."""
    values = np.asarray(values, dtype=np.float64)
    total = float(np.cumsum(values)[-1]) + 0.0 if len(values) else 0.0
    if rule == "sum":
        return total
    if n_average == 0:
        return float("nan")
    if rule == "gmean":   # values are logs; a query -c adds without a value counts as the floor
        total += (n_average - len(values)) * math.log(GEOMETRIC_FLOOR)
        return float(np.exp(total / n_average))
    return total / n_average


def _rule(measure) -> str:
    return measure.aggregate if isinstance(measure, FormatMeasure) else parse(measure).family.aggregate


def _lines(plan, scored: _Scored, tag: str, *, per_query: bool, summary: bool, decimals: int, complete: bool,
           reference) -> list[str]:
    qids = scored.qids
    zmode = reference is not None
    values = list(scored.values)
    if zmode:
        stats = reference
        known = {q for q, _ in stats}
        for i, v in enumerate(plan):
            if values[i] is None or isinstance(v.measure, TextMeasure):
                continue
            x = np.asarray(values[i], dtype=np.float64)
            if _rule(v.measure) == "gmean":   # trec_eval keeps log(max(x, floor)) per query for these
                x = np.log(np.maximum(x, GEOMETRIC_FLOOR))
            mean = np.array([stats.get((q, v.printed), (np.nan, np.nan))[0] for q in qids])
            sd = np.array([stats.get((q, v.printed), (np.nan, np.nan))[1] for q in qids])
            z = zscore(x, mean, sd, missing=MISSING)
            values[i] = np.where([q in known for q in qids], z, MISSING)
    lines: list[str] = []
    if per_query:
        columns = []  # (name column, one formatted value per query) for every per-query value
        for i, v in enumerate(plan):
            if not v.spec.per_query:
                continue
            if isinstance(v.measure, TextMeasure):
                columns.append((f"{v.printed:<22}", [f"'{text}'" for text in values[i]]))
            elif zmode:
                columns.append((f"Z{v.printed:<22}", [format_value(x, "double", decimals) for x in values[i]]))
            else:
                columns.append((f"{v.printed:<22}", [format_value(x, v.spec.value, decimals) for x in values[i]]))
        for j, qid in enumerate(qids):
            lines.extend(f"{name}\t{qid}\t{column[j]}" for name, column in columns)
    if summary:
        for i, v in enumerate(plan):
            if not v.spec.summary:
                continue
            if isinstance(v.measure, TextMeasure):
                lines.append(trec_line("runid", "all", tag))
                continue
            if i in scored.fixed_summary:
                total = scored.fixed_summary[i]
            elif v.spec.name == "num_q":
                total = scored.n_average
            else:
                rule = _rule(v.measure)
                per_query_values = np.asarray(values[i], dtype=np.float64)
                if rule == "gmean" and not zmode:   # under -Z the values are already z-scores of the logs
                    per_query_values = np.log(np.maximum(per_query_values, GEOMETRIC_FLOOR))
                total = _summarise(per_query_values, rule, scored.n_average)
            name = f"Z{v.printed:<22}" if zmode else f"{v.printed:<22}"
            lines.append(f"{name}\tall\t{format_value(total, 'double' if zmode else v.spec.value, decimals)}")
    return lines


PLACEHOLDER = "ceci_nest_pas_un_docno"  # trec_eval's document for a query the run lacks (-c)
_RESET = ("num_ret", "utility", "relstring", "rbp_resid")  # reset after the placeholder, as trec_eval


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

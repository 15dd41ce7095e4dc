"""``python -m metrics headroom QRELS FIRST RERANKED``: how much of the possible gain a re-ranker reached.

Per query (``-q``) and in the mean: the first stage's value, the oracle value of its top K (its
top K sorted by gain; IDCG from the qrels, as trec_eval), the re-ranked value, the relative
improvement against the usual 5-15 % band, and the share of the headroom reached,
1 - (oracle - reranked) / (oracle - first) (undefined where the oracle equals the first stage),
with a seeded bootstrap interval; then the depth sweep (re-rank only the first stage's top d).
K is detected (the re-ranked top K drawn from the first stage's top K) unless ``--depth`` says it.
The numbers are :func:`metrics.analysis.headroom.headroom`'s, the same as on the page "Where it
differs".
"""
from __future__ import annotations

import json
import re

from .. import __version__, stats
from ..analysis import headroom as analysis
from ..errors import MetricsError
from ..report.text import format_p, percent
from . import named_run
from .eval import add_evaluation_options, evaluation_options, gained

FORMATS = ("table", "tsv", "json")
MISSING_NOTE = {"zero": "scored 0 (trec_eval -c)", "skip": "skipped: the queries every run has"}


def depth_list(text: str | None) -> list[int] | None:
    """``"10,20,50"`` (commas or spaces) -> [10, 20, 50]."""
    if text is None:
        return None
    parts = [x for x in re.split(r"[,\s]+", text.strip()) if x]
    try:
        values = [int(x) for x in parts]
    except ValueError:
        raise MetricsError(f"{text!r}: depths must be whole numbers", fix="e.g. 10,20,50,100") from None
    if not values or min(values) < 1:
        raise MetricsError(f"{text!r}: give whole numbers >= 1", fix="e.g. 10,20,50,100")
    return values


def register(sub) -> None:
    p = sub.add_parser(
        "headroom", help="how much of the oracle's gain a re-ranker reached, and how deep re-ranking pays",
        description="Two-stage analysis of a re-ranked run against its first stage: the first stage's value "
                    "and recall@K, the oracle re-ranking of its top K (the ceiling), the re-ranked value, "
                    "the relative improvement (against the usual 5-15% band) and the share of the headroom "
                    "reached, 1 - (oracle - reranked) / (oracle - first), with a bootstrap interval; then "
                    "the depth sweep: re-rank only the first stage's top d.")
    p.add_argument("qrels")
    p.add_argument("first", help="the first-stage run")
    p.add_argument("reranked", help="the re-ranked run")
    p.add_argument("--depth", type=int, default=None, metavar="K",
                   help="the re-ranking depth (default: detected: the largest K whose re-ranked top K is drawn "
                        "from the first stage's top K on every query)")
    p.add_argument("-m", "--measure", default="nDCG@10", help="the measure, in ir_measures syntax (default nDCG@10)")
    p.add_argument("--sweep", default=None, metavar="D1,D2,...",
                   help="depths of the sweep (default 10,20,50,100,200,500,1000 below K, then K)")
    p.add_argument("-q", "--per-query", action="store_true", help="print per-query values too")
    p.add_argument("--format", choices=FORMATS, default="table", help="default table")
    add_evaluation_options(p)
    p.add_argument("--test", choices=tuple(stats.TESTS), default="t", help="paired test of the sweep (default t)")
    p.add_argument("--correction", choices=tuple(stats.CORRECTIONS), default="holm",
                   help="multiple-testing correction over the sweep's depths (default holm)")
    p.add_argument("--seed", type=int, default=stats.DEFAULT_SEED,
                   help=f"seed of every random draw (default {stats.DEFAULT_SEED})")
    p.add_argument("--resamples", type=int, default=stats.DEFAULT_RESAMPLES,
                   help=f"bootstrap resamples (default {stats.DEFAULT_RESAMPLES})")
    p.set_defaults(handler=run)


def run(args) -> int:
    (measure,) = gained([args.measure], args)
    options = evaluation_options(args)
    first, reranked = named_run(args.first), named_run(args.reranked)
    result = analysis.headroom(args.qrels, first, reranked, depth=args.depth, measure=measure,
                               sweep=depth_list(args.sweep), test=args.test, correction=args.correction,
                               seed=args.seed, resamples=args.resamples, **options)
    print(render(result, args.format, args.per_query, options["missing"]))
    return 0


def render(result: analysis.Headroom, fmt: str, per_query: bool, missing: str = "zero") -> str:
    """The analysis in one of :data:`FORMATS`."""
    if fmt == "json":
        out = {"version": __version__, "missing_queries": MISSING_NOTE[missing], **result.to_dict()}
        if not per_query:
            out.pop("per_query")
        return json.dumps(out, indent=2)
    if fmt == "tsv":
        return _tsv(result, per_query)
    if fmt == "table":
        return _table(result, per_query)
    raise MetricsError(f"unknown format {fmt!r}", fix="use " + ", ".join(FORMATS))


def _number(value: float) -> str:
    return "" if value != value else f"{value:.6f}"


def _tsv(result: analysis.Headroom, per_query: bool) -> str:
    s = result.summary
    head = ["qid", "recall", "first", "oracle", "reranked", "headroom", "gained", "share", "relative"]
    lines = ["\t".join(head)]
    if per_query:
        for row in result.per_query.itertuples(index=False):
            lines.append("\t".join([row.qid, *(_number(getattr(row, c)) for c in head[1:])]))
    lines.append("\t".join(["all", *(_number(s[c]) for c in head[1:])]))
    lines += ["", "depth\tmean\tdiff\tshare\tp_value\tp_adjusted\tp_previous"]
    for row in result.sweep.itertuples(index=False):
        lines.append("\t".join([str(row.depth), *(_number(v) for v in row[1:])]))
    return "\n".join(lines)


def _share(value: float) -> str:
    return "n/a" if value != value else f"{100 * value:.1f}%"


def _table(result: analysis.Headroom, per_query: bool) -> str:
    s, m, k = result.summary, result.measure, result.depth
    how = "detected" if result.detected == k else (
        f"declared; detected {result.detected}" if result.detected else "declared; no re-ranking detected")
    level = f"{100 * s['level']:.0f}%"
    low, high = (f"{100 * b:.0f}" for b in s["band"])
    rows = [
        f"{result.reranked} re-ranking {result.first}'s top {k} ({how}) · {m} · {s['queries']} queries",
        f"  first stage  {result.first}: {m} {s['first']:.4f}, R@{k} {s['recall']:.4f}",
        f"  oracle       best order of its top {k}: {m} {s['oracle']:.4f} (the ceiling; IDCG from the qrels)",
        f"  re-ranked    {result.reranked}: {m} {s['reranked']:.4f}",
        f"  relative improvement {percent(s['relative'])} [{percent(s['relative_ci'][0])}, "
        f"{percent(s['relative_ci'][1])}]: {s['verdict']} the usual {low}-{high}% band",
        f"  share of the headroom reached {_share(s['share'])} [{_share(s['share_ci'][0])}, "
        f"{_share(s['share_ci'][1])}] (of the means; {level} bootstrap, {s['resamples']:,} resamples, "
        f"seed {s['seed']})",
        f"  mean of per-query shares {_share(s['query_share'])} [{_share(s['query_share_ci'][0])}, "
        f"{_share(s['query_share_ci'][1])}] over {s['defined']} queries with headroom",
    ]
    if s["outside"]:
        rows.append(f"  note: on {s['outside']} queries the re-ranked top {k} holds documents outside the first "
                    f"stage's top {k}")
    test, correction = stats.TESTS[s["test"]], stats.CORRECTIONS[s["correction"]]
    rows += ["", f"depth sweep: re-rank only {result.first}'s top d ({test} against the first stage, {correction} "
                 "correction over the depths; 'vs previous' tests d against the depth before)"]
    sweep = result.sweep
    rows.append(f"  {'d':>6}  {m:>10}  {'diff':>8}  {'share':>7}  {'p':>9}  {'p adj':>9}  {'vs previous':>11}")
    for row in sweep.itertuples(index=False):
        rows.append(f"  {row.depth:>6}  {row.mean:>10.4f}  {row.diff:>+8.4f}  {_share(row.share):>7}  "
                    f"{format_p(row.p_value):>9}  {format_p(row.p_adjusted):>9}  {format_p(row.p_previous):>11}")
    if per_query:
        rows += ["", f"  {'qid':>8}  {'R@' + str(k):>8}  {'first':>7}  {'oracle':>7}  {'reranked':>8}  "
                     f"{'share':>7}  {'relative':>8}"]
        for row in result.per_query.itertuples(index=False):
            rows.append(f"  {row.qid:>8}  {row.recall:>8.4f}  {row.first:>7.4f}  {row.oracle:>7.4f}  "
                        f"{row.reranked:>8.4f}  {_share(row.share):>7}  {percent(row.relative):>8}")
    return "\n".join(rows)

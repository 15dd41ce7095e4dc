"""``eval``: evaluate runs against qrels and print means and per-query values (flags mirror trec_eval).

The trec, tsv and json formats are written from the arrays of :class:`metrics.evaluation.Scores`
(means from :func:`metrics.evaluation.mean_values`), so that evaluating in memory imports no
pandas; table and latex go through the tidy frame and pandas.
"""
from __future__ import annotations

import json
import sys
import time

from .. import __version__
from ..engines import ENGINES, choose_engine
from ..engines import scores as engine_scores
from ..errors import MetricsError
from ..evaluation import DEFAULT_MEASURES, Scores, frame_of, mean_values, means
from ..measures import parse, with_gain
from . import add_figure_options, add_latex_options, defer_pandas, latex_options, named_runs, write_figures


def _count_like(measure: str) -> bool:
    return parse(measure).family.aggregate == "sum"


def _fmt(measure: str, value: float) -> str:
    if _count_like(measure) and float(value).is_integer():
        return str(int(value))
    return f"{value:.6f}"


def render(scores: list[Scores], fmt: str, per_query: bool, latex: dict | None = None) -> str:
    """Render the per-query values of runs (plus their means) in one of the CLI formats (``latex``:
    options of :func:`metrics.report.export.to_latex`)."""
    if fmt in ("latex", "table"):
        table = means(frame_of(scores))
        if fmt == "latex":
            from ..report.export import to_latex

            return to_latex(table, **(latex or {}))
        shown = table.copy()
        shown.index.name = "system"
        return shown.to_string(float_format=lambda v: f"{v:.4f}")
    if fmt not in ("trec", "tsv", "json"):
        raise MetricsError(f"unknown format {fmt!r}", fix="use trec, tsv, json, table or latex")
    table = mean_values(scores)
    shown = [s for s in scores if s.system in table and len(s.qids)]
    measures = list(shown[0].values) if shown else []
    if fmt == "json":
        out: dict = {"version": __version__,
                     "means": {s.system: {m: table[s.system][m] for m in measures} for s in shown}}
        if per_query:
            out["per_query"] = {s.system: {m: dict(zip(map(str, s.qids), s.values[m].tolist())) for m in measures}
                                for s in shown}
        return json.dumps(out, indent=2)
    multi = len(shown) > 1
    lines: list[str] = ["system\tqid\tmeasure\tvalue"] if fmt == "tsv" else []
    for s in shown:
        if per_query:
            for m in measures:
                lines.extend(_row(fmt, multi, s.system, m, qid, _fmt(m, value))
                             for qid, value in zip(map(str, s.qids), s.values[m].tolist()))
        for m in measures:
            lines.append(_row(fmt, multi, s.system, m, "all", _fmt(m, table[s.system][m])))
    return "\n".join(lines)


def _row(fmt: str, multi: bool, system: str, measure: str, qid: str, value: str) -> str:
    if fmt == "tsv":
        return f"{system}\t{qid}\t{measure}\t{value}"
    return (f"{system}\t" if multi else "") + f"{measure}\t{qid}\t{value}"


def add_evaluation_options(p) -> None:
    """The evaluation options every subcommand that evaluates shares: -c / --skip-missing, -J, -l,
    --gain and --inferred (read back with :func:`evaluation_options` and :func:`gained`)."""
    miss = p.add_mutually_exclusive_group()
    miss.add_argument("-c", dest="missing", action="store_const", const="zero",
                      help="score qrels queries missing from a run as 0 (default)")
    miss.add_argument("--skip-missing", dest="missing", action="store_const", const="skip",
                      help="leave out qrels queries that a run lacks")
    p.add_argument("-J", "--judged-only", action="store_true", help="drop unjudged documents (condensed lists)")
    p.add_argument("-l", "--rel-level", type=int, default=1, help="minimum grade counted relevant (default 1)")
    p.add_argument("--gain", choices=("exp", "linear"), default=None,
                   help="rewrite nDCG/DCG measures to this gain (exp = 2^rel-1, linear = rel as trec_eval)")
    p.add_argument("--inferred", default=None, help="proxy qrels whose labels fill unjudged documents")


def evaluation_options(args) -> dict:
    """The keyword options of :func:`metrics.evaluate` given by :func:`add_evaluation_options`."""
    return dict(missing=args.missing or "zero", judged_only=args.judged_only, inferred=args.inferred,
                rel_level=args.rel_level)


def gained(measures, args) -> list[str]:
    """The measures with ``--gain`` applied to the nDCG/DCG ones."""
    return [with_gain(m, args.gain) for m in measures] if args.gain else list(measures)


def register(sub) -> None:
    e = sub.add_parser("eval", help="evaluate runs against qrels")
    e.add_argument("qrels")
    e.add_argument("runs", nargs="+", help="run files; name=path names a run")
    e.add_argument("-m", "--measure", action="append", dest="measures",
                   help="measure in ir_measures syntax, e.g. nDCG@10, AP, P(rel=2)@5 (repeatable)")
    e.add_argument("-q", "--per-query", action="store_true", help="print per-query values too")
    add_evaluation_options(e)
    e.add_argument("-M", "--max-depth", type=int, default=None, help="use only the top N documents per query")
    e.add_argument("--ties", choices=("score", "rank"), default="score",
                   help="score: trec_eval order (score desc, docno desc); rank: use the rank column")
    e.add_argument("--on-duplicate", choices=("error", "first"), default="error")
    e.add_argument("--format", choices=("trec", "tsv", "json", "table", "latex"), default="trec")
    add_latex_options(e)
    add_figure_options(e)
    scale = e.add_argument_group("scale-out (runs larger than memory; see docs/scale.md)")
    scale.add_argument("--engine", choices=tuple(ENGINES), default=None,
                       help="local: in memory; streaming: split the run into buckets by query and score one "
                            "bucket at a time; dask: score the buckets on a Dask cluster (default: streaming "
                            "when the run files hold more text than RAM / 16 or NDCG_LAB_STREAMING_BYTES, "
                            "else local)")
    scale.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                       help="with --engine dask: the scheduler of an existing cluster (default: start a "
                            "LocalCluster on this machine and close it afterwards)")
    scale.add_argument("--workers", type=int, default=None,
                       help="with --engine dask and no --scheduler: worker processes of the LocalCluster")
    scale.add_argument("--buckets", type=int, default=None, metavar="N",
                       help="number of buckets (default: one per ~192 MB of run text)")
    scale.add_argument("--workdir", default=None, metavar="PATH_OR_URL",
                       help="where the buckets go (default: a temporary folder); a remote cluster needs "
                            "storage its workers read, e.g. a shared folder or s3://bucket/prefix")
    scale.add_argument("--no-progress", dest="progress", action="store_false",
                       help="do not report progress on stderr (streaming and dask engines)")
    e.set_defaults(handler=cmd_eval)


def cmd_eval(args) -> int:
    measures = gained(args.measures or list(DEFAULT_MEASURES), args)
    runs = named_runs(args.runs)
    engine = getattr(args, "engine", None) or choose_engine(runs)
    if engine != "dask" and getattr(args, "scheduler", None):
        raise MetricsError("--scheduler needs --engine dask", fix="add --engine dask, or drop --scheduler")
    options = {}
    if engine != "local":
        from ..report.text import terminal_progress

        options = {"buckets": args.buckets, "scheduler": args.scheduler,
                   "workers": args.workers, "workdir": args.workdir,
                   "progress": terminal_progress(sys.stderr) if args.progress else None}
    started = time.perf_counter()
    given = dict(**evaluation_options(args), max_depth=args.max_depth, ties=args.ties, on_duplicate=args.on_duplicate)
    if engine == "local" and args.format in ("trec", "tsv", "json") and not args.figures:
        defer_pandas()
    scores = engine_scores(args.qrels, runs, measures, engine=engine, **given, **options)
    if engine != "local" and args.progress:
        print(f"{engine} engine: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    print(render(scores, args.format, args.per_query, latex_options(args)))
    if args.figures:
        from ..report.figures.sets import evaluation_figures

        write_figures(evaluation_figures(means(frame_of(scores))), args)
    return 0

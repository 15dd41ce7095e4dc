"""``agreement QRELS RUN RUN [RUN ...] -m M -m M``: the system order under each measure and, for
every pair of measures, Kendall's tau-b and tau_ap between the orders (one evaluation of all runs)."""
from __future__ import annotations

from .. import __version__
from ..engines import evaluate
from ..errors import MetricsError
from ..evaluation import as_runs
from ..io import read_qrels
from ..report.behaviour import FORMATS, render
from ..stats.behaviour import DEFAULT_MEASURES, measure_agreement
from . import named_runs
from .eval import add_evaluation_options, evaluation_options, gained


def register(sub) -> None:
    p = sub.add_parser("agreement", help="system orders under several measures; Kendall's tau and tau_ap",
                       description="Per measure, the system means and order; for each pair of measures, "
                                   "Kendall's tau-b and tau_ap (symmetrised) between the system orders.")
    p.add_argument("qrels")
    p.add_argument("runs", nargs="+", help="two or more runs")
    p.add_argument("-m", "--measure", action="append", dest="measures",
                   help=f"measure (repeatable; default {', '.join(DEFAULT_MEASURES)})")
    add_evaluation_options(p)
    p.add_argument("--format", choices=FORMATS, default="table")
    p.set_defaults(handler=run)


def need_runs(runs) -> None:
    """Every behaviour command orders systems: two runs at least."""
    if len(runs) < 2:
        raise MetricsError(f"a system order needs two or more runs, got {len(runs)}", fix="give more runs")


def settings_of(args, qrels, runs, **more) -> dict:
    """The settings every behaviour command prints: the seed first, the inputs and evaluation options."""
    return {"seed": more.pop("seed", None), **more, "tool": f"nDCG Lab {__version__}", "qrels": str(args.qrels),
            "qrels_sha256": qrels.digest, "runs": [r.name for r in runs], **evaluation_options(args),
            "order": "score desc, ties docno desc (trec_eval)"}


def run(args) -> int:
    measures = gained(args.measures or list(DEFAULT_MEASURES), args)
    qrels, runs = read_qrels(args.qrels), as_runs(named_runs(args.runs))
    need_runs(runs)
    frame = evaluate(qrels, runs, measures, **evaluation_options(args))
    measures = list(dict.fromkeys(frame["measure"].astype(str)))
    out = measure_agreement(frame, measures)
    for key in ("means", "ranks"):
        out[key].index.name = "system"
    for key in ("tau", "tau_ap"):
        out[key].index.name = "measure"
    settings = settings_of(args, qrels, runs, seed="none (no random draw)",
                           tau_ap="symmetric: (tau_ap(a, b) + tau_ap(b, a)) / 2")
    print(render({"means": out["means"], "ranks (1 = best)": out["ranks"], "kendall_tau_b": out["tau"],
                  "tau_ap": out["tau_ap"]}, settings, args.format))
    return 0

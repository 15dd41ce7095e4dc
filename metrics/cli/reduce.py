"""``reduce QRELS RUN RUN [RUN ...] --keep 10,30,50,100 | --pool-depth 10,20,50``: seeded reductions
of the qrels and, for each, every measure's mean per system and Kendall's tau (and tau_ap) of the
system order against the full qrels."""
from __future__ import annotations

import argparse

from ..evaluation import as_runs
from ..io import read_qrels
from ..report.behaviour import FORMATS, render
from ..stats import DEFAULT_SEED
from ..stats.behaviour import reduction_curves
from ..stats.behaviour.reduction import DEFAULT_MEASURES
from . import named_runs
from .agreement import need_runs, settings_of
from .eval import add_evaluation_options, evaluation_options, gained


def _numbers(kind):
    def parse(text: str) -> list:
        try:
            values = [kind(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
        if not values or any(v <= 0 for v in values):
            raise argparse.ArgumentTypeError(f"expected positive numbers, got {text!r}")
        return [int(v) if float(v).is_integer() else v for v in values]
    return parse


def register(sub) -> None:
    p = sub.add_parser("reduce", help="incomplete judgments: means and tau under reduced qrels",
                       description="Reduce the qrels (keep a share of each query's judgments at random, or "
                                   "the judged part of the pool to a depth of the given runs) and report each "
                                   "measure's mean per system and the tau of the system order with the full qrels.")
    p.add_argument("qrels")
    p.add_argument("runs", nargs="+", help="two or more runs (the pool of --pool-depth is theirs)")
    p.add_argument("-m", "--measure", action="append", dest="measures",
                   help=f"measure (repeatable; default {', '.join(DEFAULT_MEASURES)})")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--keep", type=_numbers(float), help="percentages of judgments kept per query, e.g. 10,30,50,100")
    how.add_argument("--pool-depth", type=_numbers(int), help="pool depths, e.g. 10,20,50")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the random reductions (--keep)")
    add_evaluation_options(p)
    p.add_argument("--format", choices=FORMATS, default="table")
    p.set_defaults(handler=run)


def run(args) -> int:
    measures = gained(args.measures or list(DEFAULT_MEASURES), args)
    qrels, runs = read_qrels(args.qrels), as_runs(named_runs(args.runs))
    need_runs(runs)
    out = reduction_curves(qrels, runs, measures, keep=args.keep, depths=args.pool_depth, seed=args.seed,
                           **evaluation_options(args))
    wide = out["means"].pivot_table(index=["reduction", "level", "system"], columns="measure", values="mean",
                                    sort=False).reset_index()
    wide.columns.name = None
    settings = settings_of(args, qrels, runs, seed=args.seed, reduction=out["settings"]["reduction"],
                           levels=out["settings"]["levels"], judgments=out["settings"]["judgments"],
                           tau_ap="the full qrels' order is the reference")
    print(render({"tau against the full qrels": out["tau"], "means": wide}, settings, args.format))
    return 0

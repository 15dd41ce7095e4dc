"""``lint``: check a qrels file and runs, and print every finding."""
from __future__ import annotations

from .. import io
from ..evaluation import as_runs
from ..linting import lint
from . import defer_pandas


def register(sub) -> None:
    p = sub.add_parser("lint", help="check a qrels file and runs, and report findings")
    p.add_argument("qrels")
    p.add_argument("runs", nargs="+")
    p.add_argument("-k", type=int, default=10, help="depth for Judged@k (default 10)")
    p.set_defaults(handler=cmd_lint)


def cmd_lint(args) -> int:
    defer_pandas()
    qrels = io.read_qrels(args.qrels)
    status = 0
    for finding in qrels.findings:
        print(f"{qrels.source}\twarning\t{finding.kind}\t{finding.message}")
    for run in as_runs(list(args.runs)):
        findings = lint(qrels, run, k=args.k)
        for finding in findings:
            examples = f" (e.g. {', '.join(map(str, finding.examples[:5]))})" if finding.examples else ""
            print(f"{run.source}\twarning\t{finding.kind}\t{finding.message}{examples}")
        if all(f.kind == "judged" for f in findings):
            print(f"{run.source}\tok\t-\tno problems found")
    return status

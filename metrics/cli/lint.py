"""``lint``: check a qrels file and runs, and print every finding; ``--format json`` also lists
every query and measure where a peer (ranx, pytrec_eval, ir_measures, PyTerrier) would print
another number, and why (:func:`metrics.lint.peer_differences`)."""
from __future__ import annotations

import json

from .. import __version__, io
from ..evaluation import DEFAULT_MEASURES, as_runs
from ..linting import CORRECTIONS, PEERS, REASONS, lint, peer_differences
from . import defer_pandas, named_runs


def register(sub) -> None:
    p = sub.add_parser("lint", help="check a qrels file and runs, and report findings")
    p.add_argument("qrels")
    p.add_argument("runs", nargs="+", help="run files; name=path names a run")
    p.add_argument("-k", type=int, default=10, help="depth for Judged@k (default 10)")
    p.add_argument("-m", "--measure", action="append", dest="measures",
                   help="with --format json: a measure whose per-query numbers are checked against the peers "
                        "(repeatable; default the leaderboard's columns)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text: one tab-separated line per finding; json: the findings and every query and "
                        "measure where a peer would print another number")
    p.set_defaults(handler=cmd_lint)


def cmd_lint(args) -> int:
    defer_pandas()
    qrels = io.read_qrels(args.qrels)
    runs = as_runs(named_runs(args.runs))
    if args.format == "json":
        print(json.dumps(lint_json(qrels, runs, args), indent=2))
        return 0
    for finding in qrels.findings:
        print(f"{qrels.source}\twarning\t{finding.kind}\t{finding.message}")
    for run in runs:
        findings = lint(qrels, run, k=args.k)
        for finding in findings:
            examples = f" (e.g. {', '.join(map(str, finding.examples[:5]))})" if finding.examples else ""
            print(f"{run.source}\twarning\t{finding.kind}\t{finding.message}{examples}")
        if all(f.kind == "judged" for f in findings):
            print(f"{run.source}\tok\t-\tno problems found")
    return 0


def _finding(source: str, run: str | None, finding) -> dict:
    return {"source": source, "run": run, "kind": finding.kind, "message": finding.message,
            "count": finding.count, "examples": list(map(str, finding.examples)), "value": finding.value}


def lint_json(qrels, runs, args) -> dict:
    """Every finding of the qrels and runs, and :func:`metrics.lint.peer_differences` of each run."""
    measures = list(args.measures or DEFAULT_MEASURES)
    findings = [_finding(qrels.source, None, f) for f in qrels.findings]
    differences = []
    for run in runs:
        findings += [_finding(run.source, run.name, f) for f in lint(qrels, run, k=args.k)]
        differences += peer_differences(qrels, run, measures)
    return {"version": __version__, "qrels": str(args.qrels), "measures": measures, "peers": list(PEERS),
            "findings": findings, "differences": differences, "reasons": REASONS,
            "corrections": CORRECTIONS}

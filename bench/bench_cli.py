"""Time small evaluations from the command line as whole processes: start-up is most of their time.

    python bench/bench_cli.py               # 5 rounds, legal sample
    python bench/bench_cli.py --repeats 9

Each round runs every command once, in this order (interleaved, so that a busy moment of the
machine falls on all of them alike); the table shows each command's median wall-clock seconds
and its ratio to the floor:

- `floor`: `python -c "import numpy, pyarrow.csv, pyarrow.compute"`, the imports any pyarrow
  reader of text pays (the target: our eval at most 1.5x this);
- `eval 1 run`, `eval 4 runs`: `python -m metrics eval` on ndcg_lab/sample_data/legal, nDCG@10 and AP;
- `trec_eval (ours)`: `python -m metrics trec_eval -m ndcg_cut.10 -m map` on one run;
- `trec_eval 10`: the C binary on the same run, found as the tests and bench_trec_eval.py find it:
  built by ../shared/tools/build-trec-eval into $XDG_CACHE_HOME/ndcg-lab (or ~/.cache/ndcg-lab), and
  reused from there; left out, with the reason, when the script is absent or the build fails.

Commands run in this checkout (cwd = the repository root), output discarded.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from bench_trec_eval import BUILD, CACHE, trec_eval_binary  # noqa: E402

LEGAL = Path("ndcg_lab", "sample_data") / "legal"
QRELS = str(LEGAL / "qrels.txt")
RUNS = [str(LEGAL / f"{name}.run") for name in ("bm25", "bm25_ce", "bm25_qe", "dense")]
FLOOR = "floor"


def trec_eval_10() -> tuple[str | None, str]:
    """(trec_eval 10's path, "") or (None, why it is left out): the build script beside the
    repository is absent, or its build failed (no C compiler, say)."""
    if not BUILD.exists():
        return None, f"{BUILD} is absent"
    try:
        return str(trec_eval_binary()), ""
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = (getattr(exc, "stderr", None) or str(exc)).strip()[:200]
        return None, f"building it with {BUILD} failed: {detail}"


def commands(binary: str | None) -> dict[str, list[str]]:
    py = sys.executable
    out = {
        FLOOR: [py, "-c", "import numpy, pyarrow.csv, pyarrow.compute"],
        "eval 1 run": [py, "-m", "metrics", "eval", QRELS, RUNS[0], "-m", "nDCG@10", "-m", "AP"],
        "eval 4 runs": [py, "-m", "metrics", "eval", QRELS, *RUNS, "-m", "nDCG@10", "-m", "AP"],
        "trec_eval (ours)": [py, "-m", "metrics", "trec_eval", "-m", "ndcg_cut.10", "-m", "map", QRELS, RUNS[0]],
    }
    if binary:
        out["trec_eval 10"] = [binary, "-m", "ndcg_cut.10", "-m", "map", QRELS, RUNS[0]]
    return out


def shown(command: list[str]) -> str:
    text = " ".join(f'"{a}"' if " " in a else a for a in command)
    return text.replace(sys.executable, "python").replace(str(CACHE), "~/.cache/ndcg-lab")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5, help="rounds (default 5); the median is reported")
    args = p.parse_args(argv)
    binary, missing = trec_eval_10()
    cmds = commands(binary)
    times: dict[str, list[float]] = {name: [] for name in cmds}
    # .pyc files written, as an installed package has them (PYTHONDONTWRITEBYTECODE, set in some
    # environments, would have every timed run compile the modules of this checkout again)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "metrics")], check=True)
    for cmd in cmds.values():   # once before timing: files in the page cache
        subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL, check=True)
    for _ in range(args.repeats):
        for name, cmd in cmds.items():
            start = time.perf_counter()
            subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL, check=True)
            times[name].append(time.perf_counter() - start)
    floor = statistics.median(times[FLOOR])
    print(f"Whole processes on the legal sample, median of {args.repeats} interleaved rounds "
          f"(`python bench/bench_cli.py --repeats {args.repeats}`):\n")
    print("| command | median s | x floor | runs (s) | command line |")
    print("|---|---:|---:|---|---|")
    for name, values in times.items():
        median = statistics.median(values)
        runs = ", ".join(f"{v:.3f}" for v in values)
        print(f"| {name} | {median:.3f} | {median / floor:.2f} | {runs} | `{shown(cmds[name])}` |")
    if binary is None:
        print(f"\ntrec_eval 10 left out: {missing}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A long fuzz campaign over every reader: mutated and random bytes, only MetricsError accepted.

    python bench/bench_fuzz.py                       # 20,000 inputs per reader, seed 0
    python bench/bench_fuzz.py --examples 2000 --seed 3

The inputs come from tests/hostile_corpus.py (``fuzz_input``: mutated seeds, some random bytes),
drawn from a seeded ``random.Random``, so a failure is reproduced by its seed and index. Prints,
per reader, inputs per second, how many were read and refused, and every failure (exception
type, message, the input's first bytes). Nothing is asserted; the figures go to RESULTS_FUZZ.md.
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NDCG_LAB_INFLATE_LIMIT", "1MB")

from metrics.errors import MetricsError  # noqa: E402
from tests.hostile_corpus import fuzz_input  # noqa: E402
from tests.metrics.io.test_fuzz import READERS  # noqa: E402


def campaign(kind: str, examples: int, seed: int) -> dict:
    rnd = random.Random(f"{seed}-{kind}")
    counts = collections.Counter()
    failures: dict[str, tuple[int, bytes, str]] = {}
    start = time.perf_counter()
    for i in range(examples):
        data = fuzz_input(kind, rnd)
        try:
            READERS[kind](data)
            counts["read"] += 1
        except MetricsError as exc:
            counts["refused"] += 1
            if "\n" in exc.problem:
                failures.setdefault("multi-line MetricsError", (i, data, exc.problem[:200]))
                counts["failed"] += 1
        except Exception as exc:  # noqa: BLE001 - counting what should never happen
            counts["failed"] += 1
            key = f"{type(exc).__name__} at {exc.__traceback__.tb_next and _where(exc)}"
            failures.setdefault(key, (i, data, str(exc)[:200]))
    seconds = time.perf_counter() - start
    return {"kind": kind, "examples": examples, "seconds": seconds, **counts, "failures": failures}


def _where(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return f"{Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--readers", nargs="*", default=sorted(READERS))
    args = parser.parse_args()
    print(f"{'reader':8} {'inputs':>7} {'seconds':>8} {'inputs/s':>9} {'read':>6} {'refused':>8} {'failed':>7}")
    reports = [campaign(kind, args.examples, args.seed) for kind in args.readers]
    for r in reports:
        print(f"{r['kind']:8} {r['examples']:7d} {r['seconds']:8.1f} {r['examples'] / r['seconds']:9.0f} "
              f"{r.get('read', 0):6d} {r.get('refused', 0):8d} {r.get('failed', 0):7d}")
    for r in reports:
        for key, (i, data, message) in r["failures"].items():
            print(f"\n{r['kind']} input {i} (seed {args.seed}): {key}\n  {message}\n  {data[:120]!r}")


if __name__ == "__main__":
    main()

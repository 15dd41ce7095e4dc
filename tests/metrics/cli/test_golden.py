"""Per-query output of ``python -m metrics eval --per-query`` on the sample collections, pinned by sha256.

The digests in ``golden_outputs.sha256`` were recorded before the library was reorganised into
packages; a refactoring must leave every byte of this output unchanged. Recording them again is a
deliberate act (``--write``), done only when an output is meant to change.

    python tests/metrics/cli/test_golden.py                  # check this tree against the file
    python tests/metrics/cli/test_golden.py --write          # record this tree's digests
    python tests/metrics/cli/test_golden.py --root DIR       # run another checkout's CLI
    python tests/metrics/cli/test_golden.py --bench          # sha256 of the bench suite on bench/data/dev
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DIGESTS = HERE / "golden_outputs.sha256"

DEFAULT_SUITE = ("nDCG@5", "nDCG@10", "nDCG@20", "AP", "RR", "R@100", "P@10", "Judged@10")
BENCH_SUITE = ("nDCG@5", "nDCG@10", "nDCG@20", "nDCG@100", "nDCG@1000", "AP", "RR",
               "R@10", "R@100", "R@1000", "P@5", "P@10")
COLLECTIONS = ("legal", "web")


def cases() -> dict[str, list[str]]:
    """{case name: arguments after ``eval``}, paths relative to the repository root."""
    out: dict[str, list[str]] = {}
    for collection in COLLECTIONS:
        folder = Path("ndcg_lab", "sample_data") / collection
        runs = sorted(str(p.relative_to(REPO)) for p in (REPO / folder).glob("*.run"))
        qrels = str(folder / "qrels.txt")
        for suite_name, suite in (("default", DEFAULT_SUITE), ("bench", BENCH_SUITE)):
            for gain in ("linear", "exp"):
                args = [qrels, *runs, "--per-query", "--gain", gain]
                for m in suite:
                    args += ["-m", m]
                out[f"{collection}-{suite_name}-{gain}"] = args
    legal = Path("ndcg_lab", "sample_data") / "legal"
    out["legal-default-judged-only"] = [str(legal / "qrels.txt"), str(legal / "bm25.run"), "--per-query", "-J"]
    out["legal-default-inferred"] = [str(legal / "qrels.txt"), str(legal / "dense.run"), "--per-query",
                                     "--inferred", str(legal / "proxy.txt")]
    return out


def run_cli(root: Path, args: list[str]) -> bytes:
    done = subprocess.run([sys.executable, "-m", "metrics", "eval", *args], cwd=root, capture_output=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"python -m metrics eval {' '.join(args)} failed: {done.stderr.decode()}")
    return done.stdout


def digests(root: Path) -> dict[str, str]:
    return {name: hashlib.sha256(run_cli(root, args)).hexdigest() for name, args in cases().items()}


def recorded() -> dict[str, str]:
    pairs = (line.split() for line in DIGESTS.read_text().splitlines() if line.strip())
    return {name: digest for digest, name in pairs}


@pytest.mark.slow
def test_per_query_output_is_byte_identical_to_the_recorded_digests():
    assert digests(REPO) == recorded()


def bench_digest(root: Path) -> str:
    data = REPO / "bench" / "data"
    args = [str(data / "dev-qrels.txt"), str(data / "dev-run.txt"), "--per-query"]
    for m in BENCH_SUITE:
        args += ["-m", m]
    return hashlib.sha256(run_cli(root, args)).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=REPO, help="checkout whose CLI runs (default: this one)")
    parser.add_argument("--write", action="store_true", help="record the digests instead of checking them")
    parser.add_argument("--bench", action="store_true", help="print the sha256 of the bench suite on dev")
    args = parser.parse_args()
    if args.bench:
        print(bench_digest(args.root.resolve()))
        return 0
    found = digests(args.root.resolve())
    if args.write:
        DIGESTS.write_text("".join(f"{digest}  {name}\n" for name, digest in found.items()))
        print(f"wrote {len(found)} digests to {DIGESTS}")
        return 0
    expected = recorded()
    bad = [name for name in found if found[name] != expected.get(name)]
    for name in bad:
        print(f"differs: {name}")
    print(f"{len(found) - len(bad)} of {len(found)} outputs identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

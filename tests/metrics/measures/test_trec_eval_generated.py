"""Generated collections scored by trec_eval 10 itself and by us: every value equal to 1e-9.

Seeded numpy inputs hold tied scores (many), negative scores, graded judgments
-1..4, unjudged retrieved documents, judged documents never retrieved, queries
only in the qrels (scored under -c), a query only in the run, docnos whose
string order differs from their numeric order, and queries judged only 0 or
negative (at least one judgment >= 0 each: trec_eval never returns on a query
whose judgments are all negative). Each seed runs one set of flags (-c, -J,
-M, -l, -N) and, on some seeds, measure parameters. The binary is trec_eval 10
built with 10-decimal output (see conftest.py).
"""
from __future__ import annotations

import math
import subprocess

import numpy as np
import pytest

from metrics.cli.trec_eval import trec_eval_lines
from tests.metrics.measures.trec_oracle import as_number, library_values, read_trec_output, trec_options

FLAGS = [
    ["-c"], ["-c", "-J"], ["-c", "-M", "15"], ["-c", "-l", "2"], [], ["-J"], ["-c", "-l", "0"], ["-c", "-l3", "-J"],
    ["-M7"], ["-c", "-N", "1000"],
]
PARAMETERS = [
    "ndcg.0=-1,2=5,4=2", "G.1=3,3=1", "Rndcg.2=0,4=6", "ndcg_rel.1=2", "rbp.p=0.8,2=5", "rbp_resid.p=0.5",
    "relstring.15", "utility.2,-1,-0.5,0.25", "Rprec_mult.0.5,3,0.05", "iprec_at_recall.0.05,0.33,0.5,0.75",
    "11pt_avg.0.2,0.5,0.8", "set_F.0.5", "success.3,7", "P.1,3,1000", "map_cut.2,50", "unj.1,30",
    "relative_P.4,8", "recall.3,9", "ndcg_cut.2,4", "Rndcg.1=1,2=3,3=3", "G.0=1",
]
SEEDS = range(40)


def docno(rng) -> str:
    n = int(rng.integers(0, 160))
    return f"D{n}" if rng.random() < 0.8 else f"x{n % 13}-{n}"


def generate(seed: int, complete: bool = True) -> tuple[str, str]:
    """Qrels and run text; with ``complete`` (-c) some qrels queries are left out of the run."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    qids = rng.choice(np.arange(1, 400), size=int(rng.integers(4, 13)), replace=False)
    for q in qids:
        qid = str(q)
        pool = list(dict.fromkeys(docno(rng) for _ in range(int(rng.integers(2, 45)))))
        grades = rng.choice([-1, 0, 0, 1, 1, 2, 3, 4], size=len(pool))
        if rng.random() < 0.12:
            grades = np.where(rng.random(len(pool)) < 0.5, -1, 0)  # nothing relevant at any level
        grades[0] = max(grades[0], 0)
        qrels += [f"{qid} 0 {d} {g}" for d, g in zip(pool, grades)]
        if rng.random() < 0.15 and complete:
            continue  # only in the qrels
        retrieved = list(dict.fromkeys(
            [d for d in pool if rng.random() < 0.6] + [docno(rng) for _ in range(int(rng.integers(0, 40)))]))
        scores = rng.integers(-3, 10, size=len(retrieved)) / 4.0
        if rng.random() < 0.3:
            scores = np.round(rng.normal(size=len(retrieved)), 2)
        run += [f"{qid} Q0 {d} {i + 1} {float(s)!r} gen{seed}" for i, (d, s) in enumerate(zip(retrieved, scores))]
    run += [f"only-in-run Q0 D1 1 1.0 gen{seed}"]
    order = rng.permutation(len(run))  # file order must not matter
    return "\n".join(qrels) + "\n", "\n".join(run[i] for i in order) + "\n"


def arguments(seed: int) -> list[str]:
    args = ["-q", *FLAGS[seed % len(FLAGS)]]
    if seed % 3 == 2:
        chosen = np.random.default_rng(1000 + seed).choice(PARAMETERS, size=6, replace=False)
        args += [item for p in chosen for item in ("-m", str(p))]
    return args + ["-m", "all_trec"]


def assert_equal(expected: dict, got: dict, context: str) -> None:
    assert set(got) == set(expected), context
    for key, want in expected.items():
        have = got[key]
        if isinstance(have, str):
            assert have == want, f"{key} ({context})"
        elif math.isnan(as_number(want)):
            assert math.isnan(have), f"{key} ({context}): trec_eval -nan, ours {have}"
        else:
            assert abs(have - as_number(want)) <= 1e-9, f"{key} ({context}): trec_eval {want}, ours {have}"


# Under -c trec_eval scores a query the run lacks on one placeholder document and then resets only the
# values with these exact names; with parameters their names differ (utility_2,-1,0,0), so trec_eval
# keeps the placeholder's value. The library scores such a query as an empty list (0); the trec_eval
# command reproduces the placeholder (checked below on the whole output).
PLACEHOLDER_NAMES = ("utility_", "relstring_", "rbp_resid_")


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_collection_matches_trec_eval_10(seed, trec_eval_wide, tmp_path):
    args = arguments(seed) + ["qrels.txt", "run.txt"]
    qrels, run = generate(seed, complete="-c" in args)
    (tmp_path / "qrels.txt").write_text(qrels)
    (tmp_path / "run.txt").write_text(run)
    done = subprocess.run([str(trec_eval_wide), *args], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    expected = read_trec_output(done.stdout)
    context = " ".join(args)

    options = trec_options(args)
    got = library_values(options, tmp_path)
    if options["missing"] == "zero":
        got = {k: v for k, v in got.items() if not k[0].startswith(PLACEHOLDER_NAMES)}
        expected_library = {k: v for k, v in expected.items() if not k[0].startswith(PLACEHOLDER_NAMES)}
    else:
        expected_library = expected
    assert_equal(expected_library, got, context)

    lines = trec_eval_lines(tmp_path / options["qrels"], tmp_path / options["run"], options["measures"],
                            per_query=True, complete=options["missing"] == "zero",
                            judged_only=options["judged_only"], rel_level=options["rel_level"],
                            max_depth=options["max_depth"], num_docs=options["num_docs"], decimals=10)
    ours = read_trec_output("\n".join(lines))
    assert [line.split("\t")[:2] for line in lines] == [line.split("\t")[:2] for line in done.stdout.splitlines()]
    assert_equal(expected, {k: (v if v.startswith("'") or k[0] == "runid" else as_number(v))
                            for k, v in ours.items()}, context)


def test_generated_inputs_hold_the_hard_cases():
    """The generator does produce ties, unjudged documents, negative grades and missing queries."""
    qrels, run = zip(*(generate(seed) for seed in SEEDS))
    run_lines = [line.split() for text in run for line in text.splitlines()]
    qrels_lines = [line.split() for text in qrels for line in text.splitlines()]
    judged = {(q, d) for q, _, d, _ in qrels_lines}
    assert sum((q, d) not in judged for q, _, d, *_ in run_lines) > 100
    assert sum(g == "-1" for *_, g in qrels_lines) > 50
    assert len({(q, s) for q, _, _, _, s, _ in run_lines}) < 0.7 * len(run_lines)  # many tied scores
    assert len({q for q, *_ in qrels_lines} - {q for q, *_ in run_lines}) >= 5

"""The judgment formats beyond qrels against trec_eval 10 itself, on generated cases.

Seeded cases for ``-R prefs`` (several judgment groups and sub-groups, fractional and zero levels,
transitive preferences, a document listed twice), ``-R qrels_prefs`` (graded and negative grades,
several iter groups), ``-R qrels_jg`` (several judges per query) and ``-Z`` (a z-score file with
missing entries and zero deviations), each with tied scores, unjudged documents, numeric docnos
("9" above "10" as strings), queries the run lacks (-c) and queries the judgments lack. Every
value is compared with trec_eval 10 built with 10 decimals (within 1e-9) and the whole output
with the released 4-decimal build (byte for byte). Inputs never hold what trec_eval cannot
take: a docno twice in a run or in one group of a qrels, or preferences that contradict
within a group (trec_eval aborts).
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from metrics.cli.trec_eval import trec_eval_lines


def docnos(rng, n: int) -> list[str]:
    """Docnos that sort differently as strings and as numbers, plus a few with letters."""
    pool = [str(i) for i in range(1, 40)] + [f"D{i:02d}" for i in range(25)] + ["d-7", "D07x"]
    return list(rng.choice(pool, size=n, replace=False))


def write_run(rng, path, qids, judged: dict[str, list[str]]) -> None:
    lines = []
    for q in qids:
        docs = list(dict.fromkeys(list(rng.choice(judged.get(q, ["x1"]), size=min(8, len(judged.get(q, ["x1"]))),
                                                  replace=False)) + docnos(rng, 6)))
        scores = rng.choice([1.0, 2.0, 2.5, 3.0, 0.5], size=len(docs))       # few values: many ties
        for rank, (d, s) in enumerate(zip(docs, scores), start=1):
            lines.append(f"{q} Q0 {d} {rank} {s} tag{rng.integers(2)}")
    rng.shuffle(lines)
    path.write_text("\n".join(lines) + "\n")


def write_prefs(rng, path, qids) -> dict[str, list[str]]:
    """Preferences consistent within each group: levels follow a hidden order of the group's
    documents; the lowest are non-relevant (level 0 in every sub-group)."""
    lines, judged = [], {}
    for q in qids:
        docs = docnos(rng, 12)
        judged[q] = docs
        for g in range(int(rng.integers(1, 4))):
            order = list(rng.permutation(docs))                      # best first
            nonrel = set(order[len(order) - int(rng.integers(0, 5)):])
            for s in range(int(rng.integers(1, 4))):
                subset = [d for d in order if rng.random() < 0.6] or order[:2]
                coarse = int(rng.integers(1, 3))                     # 2: pairs of documents tie
                for position, d in enumerate(subset):
                    level = 0.0 if d in nonrel else (len(subset) - position) // coarse + 0.5
                    lines.append(f"{q}\tjg{g}\ts{s} {d}  {level}")
                    if rng.random() < 0.03:
                        lines.append(f"{q} jg{g} s{s} {d} {level}")  # listed twice
    rng.shuffle(lines)
    path.write_text("# preferences\n" + "\n".join(lines) + "\n")
    return judged


def write_grouped_qrels(rng, path, qids, min_grade: int) -> dict[str, list[str]]:
    lines, judged = [], {}
    for q in qids:
        docs = docnos(rng, 14)
        judged[q] = docs
        for g in range(int(rng.integers(1, 4))):
            chosen = rng.choice(docs, size=int(rng.integers(3, 12)), replace=False)
            grades = rng.integers(min_grade, 4, size=len(chosen))
            if (grades == -1).sum() < (grades > 0).sum():
                grades[grades == -1] = 0     # see NO_OVERREAD
            lines.extend(f"{q} {g} {d} {grade}" for d, grade in zip(chosen, grades))
    rng.shuffle(lines)
    path.write_text("\n".join(lines) + "\n")
    return judged


def case(rng, folder, kind: str, complete: bool):
    """Judgments and a run; under -c the run lacks the first query. The run has a query the judgments lack."""
    qids = [str(q) for q in rng.choice([3, 10, 9, 22, 101, 7], size=4, replace=False)]
    judgments, run = folder / "judgments", folder / "run"
    if kind == "prefs":
        judged = write_prefs(rng, judgments, qids)
    else:
        judged = write_grouped_qrels(rng, judgments, qids, min_grade=-1 if kind == "qrels_prefs" else 0)
    write_run(rng, run, (qids[1:] if complete else qids) + ["999"], judged)
    return judgments, run


# NO_OVERREAD: prefs_avgjg_Rnonrel takes R documents from a group's lowest level; when that level
# (-1 below the non-relevant 0) holds fewer, trec_eval reads past them into memory of its own,
# partly memory it never wrote. So the lowest level holds at least R documents here.
OPTIONS = [[], ["-c"], ["-M", "5"], ["-c", "-M", "3"]]
GROUP_OPTIONS = OPTIONS + [["-l", "2"], ["-J", "-c"]]
SEEDS = range(6)
MEASURES = {"prefs": ["all_prefs"], "qrels_prefs": ["all_prefs"],
            "qrels_jg": ["qrels_jg", "P_avgjg.1,3,8,20", "Rprec_mult_avgjg.0.5,1.0,3.5"]}


def ours(kind: str, opts: list[str], judgments, run, decimals: int = 4) -> list[str]:
    def option(flag, default):
        return int(opts[opts.index(flag) + 1]) if flag in opts else default
    return trec_eval_lines(judgments, run, MEASURES[kind], rel_format=kind, per_query=True, complete="-c" in opts,
                           max_depth=option("-M", None), rel_level=option("-l", 1), judged_only="-J" in opts,
                           decimals=decimals)


def theirs(binary, kind: str, opts: list[str], judgments, run) -> list[str]:
    measures = [a for m in MEASURES[kind] for a in ("-m", m)]
    done = subprocess.run([str(binary), "-q", *opts, "-R", kind, *measures, str(judgments), str(run)],
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.splitlines()


def assert_close(mine: list[str], reference: list[str]) -> None:
    assert len(mine) == len(reference), (len(mine), len(reference))
    for a, b in zip(mine, reference):
        name, qid, value = a.split("\t")
        ref_name, ref_qid, ref_value = b.split("\t")
        assert (name, qid) == (ref_name, ref_qid), (a, b)
        if name.strip() == "runid":
            assert value == ref_value
        else:
            assert float(value) == pytest.approx(float(ref_value), abs=1e-9), (a, b)


CASES = [(kind, seed, opts) for kind in ("prefs", "qrels_prefs") for seed in SEEDS for opts in OPTIONS] + \
        [("qrels_jg", seed, opts) for seed in SEEDS for opts in GROUP_OPTIONS]


@pytest.mark.parametrize("kind, seed, opts", CASES, ids=[f"{k}-{s}-{''.join(o) or 'plain'}" for k, s, o in CASES])
def test_generated_case_equals_trec_eval_10(kind, seed, opts, tmp_path, trec_eval_wide, trec_eval_4):
    rng = np.random.default_rng(seed * 7 + len(kind))
    judgments, run = case(rng, tmp_path, kind, complete="-c" in opts)
    assert_close(ours(kind, opts, judgments, run, decimals=10), theirs(trec_eval_wide, kind, opts, judgments, run))
    assert ours(kind, opts, judgments, run) == theirs(trec_eval_4, kind, opts, judgments, run)

"""Write ``ndcg_lab/sample_data/legal/proxy.txt``: model-inferred labels for the legal sample.

Run from the repository root (after ``make_samples.py``)::

    python ndcg_lab/sample_data/make_proxy.py            # rewrites ndcg_lab/sample_data/legal/proxy.txt
    python ndcg_lab/sample_data/make_proxy.py --out DIR  # writes DIR/proxy.txt instead

The file simulates an automatic assessor (an LLM judge, say) that was asked to
label what the pool missed: the documents that any legal run ranks in its top
``DEPTH`` and that ``qrels.txt`` does not judge, plus a random share of the
judged documents there (so the proxy's agreement with the assessors can be
measured). The simulated judge reads each document's true grade (the hidden
grade ``make_samples.py`` gives unjudged documents; 0 for documents of other
topics; the qrels grade for judged ones) and reports it with probability
``ACCURACY``; otherwise it is off by one grade (clipped to 0-3). Dissents fool
it more often (``DISSENT_FOOLED``), as they do rerankers.

Everything is drawn from ``numpy.random.default_rng(PROXY_SEED)`` in a fixed
order (queries as strings, docnos as strings), so two runs write identical
bytes. The format is qrels (``qid 0 docno rel``), sorted by qid then docno, so
``python -m metrics eval ... --inferred ndcg_lab/sample_data/legal/proxy.txt`` reads it.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
LEGAL = HERE / "legal"

PROXY_SEED = 20_240_801
DEPTH = 20                 # label the unjudged documents of every run's top 20
JUDGED_SHARE = 0.3         # ... and this share of the judged documents there
ACCURACY = 0.8             # probability that the judge reports the true grade
DISSENT_FOOLED = 0.35      # probability that it grades a dissent 2 instead of 0
MAX_GRADE = 3


def hidden_grades() -> dict[str, tuple[int, int]]:
    """{docno: (owning topic index, true grade for that topic)} from make_samples' simulation.

    ``build_legal`` keeps its documents local, so this records every ``Doc`` it
    creates (a subclass swapped in for the duration of the call).
    """
    sys.path.insert(0, str(HERE))
    import make_samples

    created: list = []

    class Recorded(make_samples.Doc):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            created.append(self)

    original = make_samples.Doc
    make_samples.Doc = Recorded
    try:
        make_samples.build_legal()
    finally:
        make_samples.Doc = original
    out = {}
    for doc in created:
        grade = doc.hidden_grade if doc.kind in ("unjudged", "secondary") else 0
        out[doc.docno] = (doc.topic, int(grade))
    return out


def read_qrels(path: Path) -> dict[tuple[str, str], int]:
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, _, docno, rel = line.split()
        rows[qid, docno] = int(rel)
    return rows


def read_top(folder: Path, depth: int) -> set[tuple[str, str]]:
    """(qid, docno) of every run's top ``depth`` (rank column; these runs have no ties there that matter)."""
    pairs = set()
    for path in sorted(folder.glob("*.run")):
        for line in path.read_text(encoding="utf-8").splitlines():
            qid, _, docno, rank, _score, _tag = line.split()
            if int(rank) <= depth:
                pairs.add((qid, docno))
    return pairs


def build_proxy(folder: Path = LEGAL, seed: int = PROXY_SEED) -> list[str]:
    qrels = read_qrels(folder / "qrels.txt")
    titles = dict(line.split("\t", 1) for line in (folder / "docs.tsv").read_text(encoding="utf-8").splitlines()[1:])
    truth = hidden_grades()
    missing = [docno for _q, docno in qrels if docno not in truth]
    if missing:
        raise SystemExit(f"make_proxy: {len(missing)} qrels docnos (e.g. {missing[0]}) are unknown to "
                         "make_samples.build_legal(); regenerate the samples first")
    rng = np.random.default_rng(seed)
    lines = []
    for qid, docno in sorted(read_top(folder, DEPTH)):
        judged = (qid, docno) in qrels
        if judged:
            if rng.random() >= JUDGED_SHARE:
                continue
            true = qrels[qid, docno]
        else:
            topic, grade = truth[docno]
            true = grade if topic == int(qid) - 1 else 0
        label = true
        if titles.get(docno, "").startswith("Dissent:") and rng.random() < DISSENT_FOOLED:
            label = 2
        elif rng.random() >= ACCURACY:
            label = true + (1 if true == 0 or (true < MAX_GRADE and rng.random() < 0.5) else -1)
        lines.append(f"{qid} 0 {docno} {label}")
    lines.sort(key=lambda line: (line.split()[0], line.split()[2]))
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=LEGAL, help="directory for proxy.txt (default: the legal sample)")
    args = parser.parse_args(argv)
    lines = build_proxy()
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "proxy.txt", "w", encoding="utf-8", newline="\n") as handle:
        handle.write("\n".join(lines) + "\n")
    print(f"wrote {args.out / 'proxy.txt'}: {len(lines)} labels")


if __name__ == "__main__":
    main()

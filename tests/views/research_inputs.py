"""CT-like collections made in the test: n systems over 30 topics of 40 documents each, graded 0-2,
either every document judged (so Judged@10 = 1 for every run) or a seeded 60% of them."""
from __future__ import annotations

import numpy as np
import pandas as pd

import metrics
from metrics import store

TOPICS = 30
DOCS = 40


def qrels_frame(*, all_judged: bool, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(1, TOPICS + 1):
        grades = rng.choice([0, 0, 0, 1, 1, 2], size=DOCS)
        judged = np.ones(DOCS, bool) if all_judged else rng.random(DOCS) < 0.6
        judged[:2] = True   # every topic keeps a judgment
        rows += [{"qid": str(q), "docno": f"d{q}_{j}", "rel": int(grades[j])} for j in range(DOCS) if judged[j]]
    return pd.DataFrame(rows)


def run_frame(system: int, *, seed: int = 1) -> pd.DataFrame:
    """Scores that follow the grades (drawn as in :func:`qrels_frame`) plus noise that grows with the system."""
    grades_rng = np.random.default_rng(seed)
    noise_rng = np.random.default_rng(100 + system)
    rows = []
    for q in range(1, TOPICS + 1):
        grades = grades_rng.choice([0, 0, 0, 1, 1, 2], size=DOCS)
        grades_rng.random(DOCS)   # keep step with qrels_frame's draw of the judged share
        scores = grades + noise_rng.normal(0, 0.6 + 0.15 * system, DOCS)
        rows += [{"qid": str(q), "docno": f"d{q}_{j}", "score": float(np.float32(scores[j]))} for j in range(DOCS)]
    return pd.DataFrame(rows)


def system_name(i: int) -> str:
    """Long names that share a long prefix, as TREC CT runs do."""
    return f"trec_21_IKR3_TT_M_run{i}"


def make_ct(systems: int, *, all_judged: bool = False, name: str = "ct") -> list[str]:
    """Store a CT-like collection ``name`` with ``systems`` runs in the workspace of NDCG_LAB_HOME; its run names."""
    names = [system_name(i) for i in range(systems)]
    with store.Workspace(store.default_path()) as ws:
        ws.create_collection(name, metrics.read_qrels(qrels_frame(all_judged=all_judged), name="qrels"))
        for i, run in enumerate(names):
            ws.add_run(name, metrics.read_run(run_frame(i), name=run), name=run)
        ws.set_baseline(name, names[0])
    return names


def open_ct(open_app, tmp_path, monkeypatch, page: str, systems: int, *, all_judged: bool = False):
    """An AppTest on ``page`` with the CT-like collection of ``systems`` runs selected."""
    home = tmp_path / f"ct{systems}"
    monkeypatch.setenv("NDCG_LAB_HOME", str(home))
    names = make_ct(systems, all_judged=all_judged)
    at = open_app(run=False, home=home)
    at.session_state["collection"] = "ct"
    at.run()
    at.switch_page(page).run()
    return at, names

"""Long topics (clinical-trial patient descriptions of about 150 words) in AppTest: the Compare
page's "Helped most / Hurt most" tables and the Query explorer's heading show a cut topic with the
full text on demand, and "Scores by length bucket" spreads the queries over buckets chosen from
their lengths instead of one "10+" bucket."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

import metrics
from metrics import store
from metrics.report.text import TOPIC_LIMIT
from tests.conftest import ROOT, assert_ok

LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
WORDS = ("patient", "presents", "with", "a", "history", "of", "type", "2", "diabetes", "and", "chronic",
         "kidney", "disease", "stage", "3", "mellitus", "hypertension", "reports", "fatigue", "for")


def long_topics(qids) -> pd.DataFrame:
    """One topic per query of 120 + (i mod 61) words (120 to 180), each opening with its qid."""
    rng = np.random.default_rng(3)
    rows = []
    for i, qid in enumerate(qids):
        n = 120 + i % 61
        rows.append({"qid": qid, "text": f"case {qid}: " + " ".join(rng.choice(WORDS, size=n - 2))})
    return pd.DataFrame(rows)


def make_trials(home) -> pd.DataFrame:
    qrels = metrics.read_qrels(LEGAL / "qrels.txt")
    qids = sorted(set(qrels.table["qid"].to_pylist()), key=lambda q: int(q))
    topics = long_topics(qids)
    with store.Workspace(store.default_path()) as ws:
        ws.create_collection("trials", qrels, topics=topics)
        for name in ("bm25", "bm25_ce"):
            ws.add_run("trials", metrics.read_run(LEGAL / f"{name}.run"), name=name)
        ws.set_baseline("trials", "bm25")
    return topics


def test_long_topics_are_cut_with_the_full_text_on_demand(open_app, tmp_path, monkeypatch):
    home = tmp_path / "ws"
    monkeypatch.setenv("NDCG_LAB_HOME", str(home))
    topics = make_trials(home)
    text = dict(zip(topics["qid"], topics["text"]))
    at = open_app("views/compare.py", home=home)
    assert_ok(at)
    helped = next(t.value for t in at.table if "Topic" in t.value.columns)
    assert len(helped)
    for qid, cell in helped["Topic"].items():
        cell = str(cell).replace("\\", "")
        assert len(cell) <= TOPIC_LIMIT and cell.endswith("…")
        assert text[qid].startswith(cell[:-1].rstrip())
    expanders = [e for e in at.expander if e.label.startswith("Full topic text")]
    assert expanders
    shown = " ".join(m.value.replace("\\", "") for m in expanders[0].markdown)
    assert text[helped.index[0]] in shown                      # the whole topic, on demand

    at.switch_page("views/query.py").run()
    assert_ok(at)
    heading = next(h.value for h in at.subheader if h.value.startswith("Query "))
    assert len(heading) < TOPIC_LIMIT + 20 and heading.endswith("…")
    full = next(e for e in at.expander if e.label == "Full topic text")
    qid = heading.split()[1].rstrip(":")
    assert full.markdown[0].value.replace("\\", "") == text[qid]

    chart = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                 if json.loads(c.proto.spec)["layout"].get("barmode") == "group"
                 and "length" in json.dumps(json.loads(c.proto.spec)["layout"].get("xaxis", {})))
    buckets = [str(b) for b in chart["data"][0]["x"]]
    assert len(buckets) == 5 and "10+" not in buckets           # quintiles of 120-180 terms, not one bucket
    assert buckets[0].startswith("120")

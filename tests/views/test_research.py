"""The research pages say how much a number means (AppTest on CT-like collections of 2, 3 and 10
systems made in the test): the few-systems warning, the tau interval, the Method parts."""
from __future__ import annotations

import pytest

from tests.conftest import assert_ok
from tests.views.research_inputs import open_ct

BEHAVIOUR = "views/behaviour.py"


@pytest.mark.parametrize("systems, values", [(2, "2 values (-1, 1)"), (3, "4 values (-1, -1/3, 1/3, 1)")])
def test_behaviour_warns_that_tau_over_few_systems_takes_few_values(open_app, tmp_path, monkeypatch, systems,
                                                                    values):
    at, _ = open_ct(open_app, tmp_path, monkeypatch, BEHAVIOUR, systems)
    assert_ok(at)
    warning = [w.value for w in at.warning if "can take only" in w.value]
    assert warning and values in warning[0] and f"Only {systems} systems" in warning[0]
    shown = [m.value for m in at.markdown if "interval [" in m.value]
    assert len(shown) == 2 and "over 30 topics" in shown[0]
    assert f"can take {2 if systems == 2 else 4} values" in shown[0]
    method = next(e for e in at.expander if e.label == "Method")
    assert "Kendall 1938" in method.markdown[0].value and "Voorhees & Buckley 2002" in method.markdown[0].value


def test_behaviour_over_ten_systems_has_no_warning_and_the_library_interval(open_app, tmp_path, monkeypatch):
    import metrics
    from metrics.stats import paired_matrix
    from metrics.stats.behaviour import tau_interval
    from tests.views.research_inputs import qrels_frame, run_frame, system_name

    at, names = open_ct(open_app, tmp_path, monkeypatch, BEHAVIOUR, 10)
    assert_ok(at)
    assert not [w for w in at.warning if "can take only" in w.value]
    measures = [metrics.with_gain("nDCG@10", "exp"), "AP"]
    frame = metrics.evaluate(metrics.read_qrels(qrels_frame(all_judged=False)),
                             {system_name(i): metrics.read_run(run_frame(i), name=system_name(i)) for i in range(10)},
                             measures)
    a, b = (paired_matrix(frame, m, names).to_numpy() for m in measures)
    expected = tau_interval(a, b, resamples=1000, seed=0)
    shown = next(m.value for m in at.markdown if m.value.startswith("Kendall's τ-b ="))
    assert f"[{expected['low']:.3f}, {expected['high']:.3f}]" in shown and f"= {expected['value']:.3f}" in shown


COMPARE = "views/compare.py"


def test_compare_states_the_family_skips_descriptive_measures_and_fits_the_extremes(open_app, tmp_path,
                                                                                  monkeypatch):
    import json

    at, names = open_ct(open_app, tmp_path, monkeypatch, COMPARE, 3, all_judged=True)
    assert_ok(at)
    import metrics

    at.session_state[f"cmp_measures::{at.session_state['gain']}"] = [metrics.with_gain("nDCG@10", "exp"), "AP",
                                                                       "Judged@10"]
    at.run()
    assert_ok(at)
    caption = next(c.value for c in at.caption if "correction:" in c.value)
    assert "Holm over every (system, measure) cell together" in caption and "4 tested" in caption
    assert "2 descriptive not tested" in caption
    judged = next(t.value for t in at.table if "Sig." in t.value.columns and (t.value["p"] == "not tested").all())
    assert (judged["Sig."] == "").all()
    method = next(e for e in at.expander if e.label == "Method").markdown[0].value
    assert "Holm 1979" in method and "Paired topics" in method and "seed 0" in method.lower()
    at.radio(key="cmp_family").set_value("measure").run()
    assert_ok(at)
    caption = next(c.value for c in at.caption if "correction:" in c.value)
    assert "Holm over each measure apart" in caption
    # the helped/hurt tables: numbers narrow and pinned, the topic takes the rest on one line
    frames = [d for d in at.dataframe if "Δ" in d.value.columns]
    assert frames
    config = json.loads(frames[0].proto.columns)
    assert config["Δ"]["width"] == 72 and config["Δ"]["pinned"] is True
    assert config["Topic"]["width"] == 160 and config["_index"]["pinned"] is True


JUDGMENTS = "views/judgments.py"


@pytest.mark.parametrize("all_judged", [True, False])
def test_judgments_compares_one_measure_and_ranks_bpref_and_infap_apart(open_app, tmp_path, monkeypatch,
                                                                      all_judged):
    import metrics
    from tests.views.research_inputs import qrels_frame, run_frame, system_name

    at, names = open_ct(open_app, tmp_path, monkeypatch, JUDGMENTS, 3, all_judged=all_judged)
    assert_ok(at)
    treatments = at.table[0].value
    assert list(treatments.columns) == ["unjudged = 0", "rank (0)", "condensed (judged only)", "rank (condensed)"]
    incomplete = next(t.value for t in at.table if "Bpref (unjudged ignored)" in t.value.columns)
    assert list(incomplete.columns) == ["Bpref (unjudged ignored)", "rank (Bpref)",
                                        "infAP (estimated from the judged)", "rank (infAP)"]
    assert not incomplete.map(lambda v: "▲" in v or "▼" in v).any().any()
    runs = {system_name(i): metrics.read_run(run_frame(i), name=system_name(i)) for i in range(3)}
    bpref = metrics.means(metrics.evaluate(metrics.read_qrels(qrels_frame(all_judged=all_judged)), runs,
                                           ["Bpref"]))["Bpref"]
    for system, value in bpref.items():
        assert incomplete.loc[system, "Bpref (unjudged ignored)"] == f"{value:.4f}"
    said = [i.value for i in at.info if "cannot differ" in i.value]
    assert bool(said) == all_judged
    if all_judged:   # every top-10 judged: the treatments give the same values
        assert (treatments["unjudged = 0"] == treatments["condensed (judged only)"]).all()
    assert any("orders of the 3 systems" in c.value and "4 values" in c.value for c in at.caption)
    method = next(e for e in at.expander if e.label == "Method").markdown[0].value
    assert "Buckley & Voorhees 2004" in method and "Yilmaz & Aslam 2006" in method


def test_where_it_differs_shows_a_dash_for_what_does_not_exist(open_app):
    at = open_app("views/where.py")
    assert_ok(at)
    frames = list(at.dataframe)
    assert frames and all(d.proto.placeholder == "—" for d in frames)
    texts = [e.value for e in (*at.caption, *at.markdown)] + [str(t.value.to_numpy().tolist()) for t in at.table]
    assert not any("None" in t for t in texts)
    method = next(e for e in at.expander if e.label == "Method").markdown[0].value
    assert "Efron & Tibshirani 1993" in method and "(R − F) / F" in method


def test_a_read_only_link_is_not_told_it_stored_the_fused_run(open_app, tmp_path, monkeypatch):
    from metrics import store
    from ndcg_lab.ui import state

    monkeypatch.setenv("NDCG_LAB_MODE", "shared")
    home = tmp_path / "home"
    open_app(None, home=home)
    token = state.manager().create().token
    owner = open_app("views/fusion.py", home=home, query_params={"ws": token})
    next(b for b in owner.button if b.label.startswith("Store the fused run")).click().run()
    assert_ok(owner)
    assert any("Stored in" in s.value for s in owner.success)
    visitor = open_app("views/fusion.py", home=home, query_params={"ws": store.view_token_of(token)})
    assert_ok(visitor)
    assert not any("Stored in" in s.value for s in visitor.success)
    said = [i.value for i in visitor.info if "already holds this fused run" in i.value]
    assert said and "read-only link" in said[0]
    method = next(e for e in visitor.expander if e.label == "Method").markdown[0].value
    assert "Cormack, Clarke & Büttcher 2009" in method and "Holm over every" in method


def test_query_search_opens_the_exact_id_before_a_topic_that_mentions_it(open_app, tmp_path, monkeypatch):
    import pandas as pd

    import metrics
    from metrics import store
    from ndcg_lab.ui.query import find_queries
    from tests.conftest import ROOT

    legal = ROOT / "ndcg_lab" / "sample_data" / "legal"
    qrels = metrics.read_qrels(legal / "qrels.txt")
    qids = sorted(set(qrels.table["qid"].to_pylist()), key=int)
    text = {q: f"topic number {q}" for q in qids}
    text["42"] = "a case that cites 32 twice"
    assert find_queries(["42", "132", "32", "7"], {**text, "7": "none"}, "32") == ["32", "132", "42"]
    home = tmp_path / "q"
    monkeypatch.setenv("NDCG_LAB_HOME", str(home))
    with store.Workspace(store.default_path()) as ws:
        ws.create_collection("q", qrels, topics=pd.DataFrame({"qid": list(text), "text": list(text.values())}))
        for name in ("bm25", "bm25_ce"):
            ws.add_run("q", metrics.read_run(legal / f"{name}.run"), name=name)
    at = open_app(run=False, home=home)
    at.session_state["collection"] = "q"
    at.run()
    at.switch_page("views/query.py").run()
    assert_ok(at)
    at.selectbox(key="qe_qid").set_value("42").run()
    at.text_input(key="qe_search").input("32").run()
    assert_ok(at)
    assert at.selectbox(key="qe_qid").value == "32"
    assert at.selectbox(key="qe_qid").options[0].startswith("32")


def test_sidebar_tells_runs_with_one_long_prefix_apart(open_app, tmp_path, monkeypatch):
    from metrics.report.text import NAME_LIMIT, distinct_labels
    from tests.conftest import systems_box

    labels = distinct_labels(["trec_21_IKR3_TT_M_run1", "trec_21_IKR3_TT_M_run2", "bm25"])
    assert labels == {"trec_21_IKR3_TT_M_run1": "trec_21_IKR3_…run1", "trec_21_IKR3_TT_M_run2": "trec_21_IKR3_…run2",
                      "bm25": "bm25"}
    middle = distinct_labels(["a" * 30 + "X" + "b" * 30, "a" * 30 + "Y" + "b" * 30])
    assert len(set(middle.values())) == 2 and all(len(v) <= NAME_LIMIT for v in middle.values())
    at, names = open_ct(open_app, tmp_path, monkeypatch, "views/leaderboard.py", 3)
    box = systems_box(at)
    assert box.value == names
    shown = box.options
    assert len(set(shown)) == 3 and all(len(label) <= NAME_LIMIT for label in shown)
    assert [label[:NAME_LIMIT - 1] for label in shown] != [names[0][:NAME_LIMIT - 1]] * 3

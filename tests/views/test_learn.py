"""Learn NDCG page (AppTest): presets, grade edits, buttons, what-if and the shareable URL."""
from __future__ import annotations

from math import log2
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from metrics.analysis import sandbox
from metrics.analysis.sandbox import PRESETS

APP = str(Path(__file__).resolve().parents[2] / "ndcg_lab" / "app.py")


@pytest.fixture
def learn(open_app, shared_home):
    return lambda query_params=None: open_app("views/learn.py", home=shared_home, query_params=query_params)


def ndcg(at) -> float:
    [value] = [m.value for m in at.metric if m.label.startswith("nDCG@")]
    return float(value)


def test_preset_then_grade_change_moves_ndcg(learn):
    at = learn()
    at.selectbox(key="learn_preset").select("late").run()
    assert not at.exception, at.exception
    assert ndcg(at) == pytest.approx(1 / log2(11), abs=5e-5)          # 0.2891: grade 4 at rank 10
    at.selectbox(key="learn_grade_0").select("4").run()             # a second grade-4 document at rank 1
    assert not at.exception, at.exception
    dcg = 15 / log2(2) + 15 / log2(11)
    idcg = 15 / log2(2) + 15 / log2(3)
    assert ndcg(at) == pytest.approx(dcg / idcg, abs=5e-5)
    assert at.query_params["g"].startswith("4,0,0")


def test_ideal_order_reaches_one_and_what_if_applies(learn):
    at = learn()
    assert ndcg(at) < 1
    at.button(key="learn_ideal").click().run()
    assert ndcg(at) == 1.0
    assert any("= **1.0000**" in m.value for m in at.markdown)
    at.button(key="learn_reverse").click().run()
    reversed_value = ndcg(at)
    assert reversed_value < 1
    at.button(key="learn_apply").click().run()
    assert not at.exception, at.exception
    assert ndcg(at) > reversed_value


def test_unjudged_strategies_and_cutoff(learn):
    at = learn()
    at.selectbox(key="learn_grade_1").select("?").run()
    assert not at.exception, at.exception
    strategies = [t.value for t in at.table if "strategy" in (t.value.index.name or "")]
    assert strategies and len(strategies[0]) == 3
    at.selectbox(key="learn_guess_D2").select(4).run()
    assert not at.exception, at.exception
    at.slider(key="learn_k").set_value(3).run()
    assert [m.label for m in at.metric][-1] == "nDCG@3"
    at.radio(key="learn_gain").set_value("linear").run()
    assert not at.exception, at.exception


def test_url_restores_the_sandbox(learn):
    sb = PRESETS["wikipedia"].sandbox
    at = learn(sandbox.to_params(sb))
    assert [m.label for m in at.metric] == ["DCG@6", "IDCG@6", "nDCG@6"]
    assert ndcg(at) == pytest.approx(0.7850, abs=5e-5)
    assert at.radio(key="learn_gain").value == "linear"
    assert at.text_input(key="learn_missed").value == "3,2"
    assert at.selectbox(key="learn_preset").value == "wikipedia"  # the link matches a preset: its lesson shows


# -- lessons, exercises, the second system, live checks, the workspace token -----------------------
from metrics.analysis import lessons  # noqa: E402
from metrics.store.live import LiveChecks  # noqa: E402
from tests.conftest import assert_ok  # noqa: E402

LESSONS = lessons.catalogue()


def only(value):
    return value[0] if isinstance(value, list) else value


def test_the_index_links_every_lesson_and_the_sandbox_follows(learn):
    at = learn()
    links = at.get("page_link")
    queries = [parse_qs(link.proto.query_string) for link in links]
    assert [q["lesson"] for q in queries] == [[i] for i in (*LESSONS, "sandbox")]
    assert all(q["collection"] == ["legal"] for q in queries)          # the sidebar's selection is kept
    assert links[2].proto.label == "3. The discount 1/log2(rank + 1)"
    assert [m.label for m in at.metric] == ["DCG@10", "IDCG@10", "nDCG@10"]      # the sandbox, as before


def test_every_lesson_shows_the_librarys_numbers(learn):
    at = learn({"lesson": "graded"})
    for lesson_id, lesson in LESSONS.items():
        at.query_params["lesson"] = lesson_id
        at.run()
        assert_ok(at)
        check_lesson(at, lesson)


def check_lesson(at, lesson):
    assert at.header[0].value.endswith(lesson.title)
    assert any(m.value == lessons.render(lesson, lesson.text) for m in at.markdown)
    shown = {m.label: m.value for m in at.metric}
    if lesson.collection is not None:
        summary = lesson.collection.summary()
        k = lesson.collection.cutoff
        assert shown[f"Mean nDCG@{k} of A"] == f"{summary['mean_a']:.4f}"
        assert shown[f"Mean nDCG@{k} of B"] == f"{summary['mean_b']:.4f}"
        table = at.table[0].value
        assert list(table["A"]) == pytest.approx(list(lesson.collection.per_query()["A"]))
        from scipy.stats import ttest_rel
        p = ttest_rel(table["B"], table["A"]).pvalue
        assert any(f"Paired t-test p = **{p:.4f}**" in m.value for m in at.markdown)
    else:
        sb, word = lesson.example, "exp" if lesson.example.gain == "exp" else "linear"
        values = sandbox.scores(sb)
        k = sb.cutoff
        assert shown == {f"DCG@{k}": f"{values[f'DCG {word}']:.4f}", f"IDCG@{k}": f"{values[f'IDCG {word}']:.4f}",
                         f"nDCG@{k}": f"{values[f'nDCG {word}']:.4f}"}


def test_a_lesson_answer_hint_reveal_and_next(learn):
    at = learn({"lesson": "discount"})
    key = "learn_ex_discount_0"
    assert not at.info or all("Hint" not in i.value for i in at.info)
    at.button(key=f"{key}_hint_button").click().run()
    assert any("Hint: The discount at rank 4 is 1/log2(5)" in i.value for i in at.info)
    at.text_input(key=f"{key}_number").input("43%").run()
    at.button(key=f"{key}_check").click().run()
    assert_ok(at)
    assert [e.value for e in at.error] == ["Not quite."]
    assert any("share kept at rank 4" in w.value for w in at.warning)
    assert not any("The answer:" in m.value for m in at.markdown)           # one wrong try: no value yet
    at.text_input(key=f"{key}_number").input("0.569").run()
    at.button(key=f"{key}_check").click().run()
    assert [s.value for s in at.success] == ["Right."]
    assert any("**The answer:** 0.5693" in m.value for m in at.markdown)
    worked = [c.value for c in at.code if "share lost" in c.value]                # not the short link's block
    assert worked and worked[-1].endswith("share lost = 1 - 0.4307 = 0.5693 (57%)")   # 1 - 1/log2(5)
    at.button(key="learn_ex_discount__next").click().run()
    assert only(at.query_params["step"]) == "1"
    assert any("keep?" in m.value for m in at.markdown)
    at.radio(key="learn_ex_discount_1_choice").set_value(1).run()                   # 0.25 = 1/log2(16)
    at.button(key="learn_ex_discount_1_check").click().run()
    assert [s.value for s in at.success] == ["Right."]
    assert "answered 2, right 2" in at.get("progress")[0].proto.text


def test_the_step_in_the_address_reopens_the_exercise(learn):
    at = learn({"lesson": "gain", "step": "1"})
    assert at.radio(key="learn_ex_gain_1_exp") is not None
    at.radio(key="learn_ex_gain_1_exp").set_value("A").run()
    at.radio(key="learn_ex_gain_1_linear").set_value("B").run()
    at.button(key="learn_ex_gain_1_check").click().run()
    assert [e.value for e in at.error] == ["Not quite."]
    assert not any("exponential gain: A · linear gain: A" in m.value for m in at.markdown)
    assert any("Under exponential gain a 4 is worth 15" in i.value for i in at.info)    # the hint, not the answer
    at.button(key="learn_ex_gain_1_check").click().run()                               # the second wrong try
    assert any("exponential gain: A · linear gain: A" in m.value for m in at.markdown)


def test_a_teacher_makes_an_exercise_and_a_student_opens_it(learn):
    at = learn({"g": "0,0,3,2", "k": "4", "gain": "linear"})
    at.selectbox(key="learn_make_kind").select("number").run()
    at.button(key="learn_make_add").click().run()
    at.selectbox(key="learn_make_kind").select("reorder").run()
    at.number_input(key="learn_make_target").set_value(0.95).run()
    at.button(key="learn_make_add").click().run()
    assert_ok(at)
    link = next(c.value for c in at.code if "?ex=" in c.value)
    token = link.split("?ex=")[1]
    dcg = 3 / log2(4) + 2 / log2(5)
    idcg = 3 / log2(2) + 2 / log2(3)
    assert f"{dcg / idcg:.4f}" in at.table[-1].value.iloc[0, 1]        # the teacher sees the computed answer
    student = learn({"ex": token})
    assert_ok(student)
    key = [t.key for t in student.text_input][0]
    student.text_input(key=key).input(f"{dcg / idcg:.3f}").run()
    student.button(key=key.replace("_number", "_check")).click().run()
    assert [s.value for s in student.success] == ["Right."]


def test_the_second_system_editor_and_the_flip(learn):
    at = learn({"g": "4,0,0,0,0", "names": "A1,A2,A3,A4,A5", "k": "5"})
    at.text_input(key="learn_vs").input("A3, A4, A5, A1, A2").run()
    assert_ok(at)
    at.text_input(key="learn_vs").input("A2, A1, A3, A4, A5").run()
    assert only(at.query_params["vs"]) == "A2,A1,A3,A4,A5"
    assert any("Same order under both gains: A (your list) is higher" in m.value for m in at.markdown)
    # A puts two grade-2 documents first and the grade-4 one at rank 4; B the grade-4 one at rank 2.
    at = learn({"g": "2,2,0,4,2", "names": "a,b,c,d,e", "k": "5", "vs": "c,d,a,b,e"})
    table = next(t.value for t in at.table if "nDCG@5 exp" in t.value.columns)
    ideal_exp = 15 + 3 / log2(3) + 3 / log2(4) + 3 / log2(5)
    a_exp = (3 + 3 / log2(3) + 15 / log2(5) + 3 / log2(6)) / ideal_exp
    b_exp = (15 / log2(3) + 3 / log2(4) + 3 / log2(5) + 3 / log2(6)) / ideal_exp
    ideal_lin = 4 + 2 / log2(3) + 2 / log2(4) + 2 / log2(5)
    a_lin = (2 + 2 / log2(3) + 4 / log2(5) + 2 / log2(6)) / ideal_lin
    b_lin = (4 / log2(3) + 2 / log2(4) + 2 / log2(5) + 2 / log2(6)) / ideal_lin
    assert list(table["nDCG@5 exp"]) == pytest.approx([a_exp, b_exp])
    assert list(table["nDCG@5 linear"]) == pytest.approx([a_lin, b_lin])
    assert (a_exp < b_exp) and (a_lin > b_lin)
    assert any("**The order flips**: under exponential gain B (second system) is higher, under linear gain "
               "A (your list) is higher" in m.value for m in at.markdown)
    at.text_input(key="learn_vs").input("c, d, a, b").run()
    assert any("Second system: the second system must rank the same documents" in w.value for w in at.warning)


@pytest.fixture
def shared(monkeypatch, tmp_path):
    monkeypatch.setenv("NDCG_LAB_MODE", "shared")
    return tmp_path / "home"


def test_shared_mode_keeps_the_workspace_token_and_runs_a_live_check(open_app, shared, monkeypatch):
    open_app(home=shared)
    from ndcg_lab.ui import live as live_view
    from ndcg_lab.ui import state

    token = state.manager().create().token              # a workspace (a first change makes it)
    at = open_app("views/learn.py", home=shared, query_params={"ws": token})
    at.button(key="learn_ideal").click().run()
    assert only(at.query_params["ws"]) == token and only(at.query_params["g"]).startswith("3,3,2")
    at = open_app("views/learn.py", home=shared, query_params={"ws": token, "lesson": "gain"})
    at.button(key="learn_live_open").click().run()
    assert_ok(at)
    code = only(at.query_params["live"])
    assert len(only(at.query_params["key"])) >= 16
    assert only(at.query_params["ws"]) == token
    # three phones (device ids as their browsers would send them), then the first one again;
    # the gain lesson's first exercise: 0.5465
    for device, answer, said in (("1" * 32, "0.55", "Answer sent"), ("2" * 32, "0.546", "Answer sent"),
                                 ("3" * 32, "0.75", "Answer sent"), ("1" * 32, None, "its first answer counts")):
        monkeypatch.setattr(live_view, "cookie_device", lambda device=device: device)
        student = open_app("views/learn.py", home=shared, query_params={"live": code})
        assert "key" not in student.query_params and not [b for b in student.button if b.key == "learn_live_reveal"]
        if answer is not None:
            student.text_input(key=f"learn_live_{code}_number").input(answer).run()
            student.button(key=f"learn_live_{code}_send").click().run()
        assert said in student.success[0].value
    at.button(key="learn_live_refresh").click().run()
    counts = at.table[-1].value
    assert dict(zip(counts["answer"], counts["answers"])) == {"0.55": 1, "0.546": 1, "0.75": 1}
    at.button(key="learn_live_reveal").click().run()
    assert any("**The answer:** 0.5465" in m.value for m in at.markdown)
    revealed = next(t.value for t in at.table if "right" in t.value.columns)
    assert dict(zip(revealed["answer"], revealed["right"])) == {"0.55": "yes", "0.546": "yes", "0.75": ""}
    assert LiveChecks(shared).counts(code) == {"0.55": 1, "0.546": 1, "0.75": 1}

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
    measures = ["nDCG(dcg=exp-log2)@10", "AP"]
    frame = metrics.evaluate(metrics.read_qrels(qrels_frame(all_judged=False)),
                             {system_name(i): metrics.read_run(run_frame(i), name=system_name(i)) for i in range(10)},
                             measures)
    a, b = (paired_matrix(frame, m, names).to_numpy() for m in measures)
    expected = tau_interval(a, b, resamples=1000, seed=0)
    shown = next(m.value for m in at.markdown if m.value.startswith("Kendall's τ-b ="))
    assert f"[{expected['low']:.3f}, {expected['high']:.3f}]" in shown and f"= {expected['value']:.3f}" in shown

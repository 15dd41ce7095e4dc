"""metrics.measures.iprec: interpolated precision and 11pt_avg on small lists, with the arithmetic
written out, and a query the run lacks.

(trec_eval 10 itself checks the trec_eval-only measures on many inputs in test_trec_eval10.py and
test_trec_eval_generated.py; these show what each one computes.)
"""
from __future__ import annotations

import numpy as np
import pytest

from metrics.measures import Context, compute, iprec_curve, parse
from tests.metrics.measures.hand import ranked_from, value


def test_interpolated_precision_and_eleven_points():
    # relevant at ranks 1, 3, 6 of R = 4: precisions 1/1, 2/3, 3/6
    ranked = ranked_from({"q": [1, 0, 1, 0, 0, 1]}, extra={"q": {"x": 1}})
    levels = [0.0, 0.25, 0.5, 0.6, 0.75, 1.0]
    # c = round(level * 4) = 0, 1, 2, 2, 3, 4: best precision from the c-th relevant on; 0 past the third
    want = [1.0, 1.0, 2 / 3, 2 / 3, 3 / 6, 0.0]
    assert iprec_curve(ranked, levels)[0] == pytest.approx(want)
    assert value(ranked, "IPrec@0.5") == pytest.approx(2 / 3)
    assert value(ranked, "iprec_at_recall.0.5") == pytest.approx(2 / 3)
    elevens = iprec_curve(ranked)[0]  # levels 0, 0.1, ..., 1: c = 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4
    assert elevens == pytest.approx([1, 1, 1, 1, 2 / 3, 2 / 3, 2 / 3, 0.5, 0.5, 0, 0])
    assert value(ranked, "11pt_avg") == pytest.approx(float(np.sum(elevens[::-1])) / 11)


def test_rounding_of_recall_levels_is_half_away_from_zero():
    # relevant at ranks 1 and 5 (precisions 1 and 2/5) of R = 4. Level 0.3: 0.3 * 4 = 1.2 relevant documents,
    # c = round(1.2) = 1 in trec_eval 10 (9.0.8: floor(1.2 + 0.9) = 2, giving 2/5); level 0.125: 0.5 -> c = 1
    ranked = ranked_from({"q": [1, 0, 0, 0, 1]}, extra={"q": {"x": 1, "y": 1}})
    # 0.375 * 4 = 1.5 -> c = 2; 0.625 * 4 = 2.5 -> c = 3 (half away from zero, not to even): only 2 retrieved
    assert iprec_curve(ranked, [0.3, 0.125, 0.375, 0.625])[0] == pytest.approx([1.0, 1.0, 2 / 5, 0.0])


def test_a_query_the_run_lacks():
    ranked = ranked_from({"q": [1]}, extra={"gone": {"a": 1}})  # "gone" is only in the qrels
    assert list(ranked.qids) == ["gone", "q"]
    assert compute(Context(ranked), parse("utility(c=-1)")).tolist() == [0.0, 1.0]  # as trec_eval: 0
    assert compute(Context(ranked), parse("IPrec@0")).tolist() == [0.0, 1.0]
    condensed = Context(ranked.condensed())
    assert np.isnan(compute(condensed, parse("IPrec@0"))[0])  # -J: trec_eval divides 0 by 0

"""metrics.measures.text: relstring, one character per retrieved document, by hand."""
from __future__ import annotations

from metrics.measures import TextMeasure, relstring, trec_plan
from tests.metrics.measures.hand import ranked_from


def test_relstring_digits_unjudged_negative_and_above_nine():
    # grades in rank order: 2, unjudged, -1 (pooled but unjudged), 12, 0
    ranked = ranked_from({"q": [2, None, -1, 12, 0]})
    assert relstring(ranked).tolist() == ["2-.>0"]
    assert relstring(ranked, 3).tolist() == ["2-."]
    assert relstring(ranked, 0).tolist() == [""]


def test_relstring_of_a_query_the_run_lacks_is_empty():
    ranked = ranked_from({"q": [1, 0]}, extra={"gone": {"a": 1}})   # "gone" is only in the qrels
    assert list(ranked.qids) == ["gone", "q"]
    assert relstring(ranked, 4).tolist() == ["", "10"]


def test_trec_eval_spellings_name_the_text_measures():
    measures = [item.measure for item in trec_plan(["relstring.5", "runid"])]
    assert TextMeasure("relstring", 5) in measures and TextMeasure("runid") in measures

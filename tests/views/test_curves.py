"""AppTest of the Curves page's precision-recall view: one line per system whose values are
trec_eval 10's IPrec@x (``metrics.evaluate`` on the legal sample's files), a bootstrap band from
metrics.stats, finer recall levels, and IPrec at any level beside 11pt_avg."""
from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.runtime import memory_media_file_storage
from streamlit.runtime.media_file_storage import MediaFileKind

import metrics
from metrics import store
from metrics.stats import bootstrap_ci

ROOT = Path(__file__).resolve().parents[2]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
RUNS = {path.stem: path for path in sorted(LEGAL.glob("*.run"))}
ELEVEN = [i / 10 for i in range(11)]


def array(value) -> np.ndarray:
    """A plotly JSON array: a list, or {"dtype", "bdata"} (base64, plotly >= 6)."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value)


def spec(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def per_query(levels) -> dict:
    """{system: queries x levels} of IPrec@x from metrics.evaluate."""
    names = [str(metrics.parse_measure(f"IPrec@{x!r}")) for x in levels]
    frame = metrics.evaluate(LEGAL / "qrels.txt", dict(RUNS), names)
    wide = frame.pivot_table(index=["system", "qid"], columns="measure", values="value")[names]
    return {system: wide.loc[system].to_numpy() for system in RUNS}


@pytest.fixture
def curves(open_app):
    at = open_app("views/curves.py")
    at.radio(key="curve_family").set_value("IPrec").run()
    assert not at.exception, at.exception
    return at


def test_eleven_point_curve_is_trec_eval_iprec_per_system(curves):
    figure = spec(curves)
    lines = [t for t in figure["data"] if t.get("fill") != "toself"]
    assert [t["name"] for t in lines] == list(RUNS)
    assert figure["layout"]["xaxis"]["title"]["text"] == "recall"
    values = per_query(ELEVEN)
    for trace in lines:
        assert array(trace["x"]).tolist() == pytest.approx(ELEVEN)
        assert array(trace["y"]) == pytest.approx(values[trace["name"]].mean(axis=0), abs=1e-12)
    assert "11 recall levels" in curves.caption[0].value


def test_band_is_the_seeded_bootstrap_of_metrics_stats(curves):
    curves.toggle(key="curve_band").set_value(True).run()
    figure = spec(curves)
    bands = {t["name"]: t for t in figure["data"] if t.get("fill") == "toself"}
    assert sorted(bands) == sorted(f"{name} 95% CI" for name in RUNS)
    values = per_query(ELEVEN)
    lower, upper = bootstrap_ci(values["bm25"], resamples=1000, seed=0)
    y = array(bands["bm25 95% CI"]["y"])
    assert y[:11] == pytest.approx(upper, abs=1e-12) and y[11:] == pytest.approx(lower[::-1], abs=1e-12)


def test_finer_levels_and_iprec_at_any_recall(curves):
    curves.selectbox(key="iprec_step").set_value(0.05).run()
    levels = [i / 20 for i in range(21)]
    lines = [t for t in spec(curves)["data"] if t.get("fill") != "toself"]
    assert array(lines[0]["x"]).tolist() == pytest.approx(levels)
    assert array(lines[0]["y"]) == pytest.approx(per_query(levels)[lines[0]["name"]].mean(axis=0), abs=1e-12)

    curves.number_input(key="iprec_recall").set_value(0.35).run()
    assert not curves.exception
    table = curves.table[0].value
    expected = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", dict(RUNS), ["IPrec@0.35", "11pt_avg"]))
    for system in RUNS:
        assert table.loc[system, "IPrec@0.35"] == f"{expected.at[system, 'IPrec@0.35']:.4f}"
        assert table.loc[system, "11pt_avg"] == f"{expected.at[system, '11pt_avg']:.4f}"


@pytest.fixture
def downloads(monkeypatch):
    """Every file handed to a download button: {file name: text}."""
    seen = {}
    original = memory_media_file_storage.MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        if kind != MediaFileKind.DOWNLOADABLE:   # the page's icon
            return original(self, path_or_data, mimetype, kind, filename)
        seen[filename] = path_or_data if isinstance(path_or_data, str) else bytes(path_or_data).decode()
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(memory_media_file_storage.MemoryMediaFileStorage, "load_and_get_id", record)
    return seen


def test_the_values_csv_carries_its_measure_a_name_per_gain_and_no_formula(open_app, downloads, tmp_path):
    """The Curves CSV is an export like the others: the measure string in its stamp, a file name
    that differs between exponential and linear gain, and a run named like a spreadsheet formula
    written as text (a leading quote), never as a formula."""
    at = open_app()
    formula = '=HYPERLINK("http://example.org","x")'
    with store.Workspace(store.default_path()) as ws:
        other = tmp_path / "other.run"  # other content than bm25's: the workspace keeps one copy of a run
        other.write_text("".join((LEGAL / "bm25.run").read_text().splitlines(keepends=True)[:-1]))
        ws.add_run("legal", metrics.read_run(other), name=formula)
    at.switch_page("views/curves.py").run()
    assert not at.exception, at.exception
    text = downloads["nDCG-exp-curve-legal.csv"]
    stamp = {line[2:].split(":", 1)[0]: json.loads(line.split(":", 1)[1]) for line in text.splitlines()
             if line.startswith("# ")}
    assert stamp["measure"] == "nDCG(dcg='exp-log2')@k" and stamp["gain"] == "exp"
    values = pd.read_csv(io.StringIO(text), comment="#")
    assert list(values.columns) == ["system", "k", "value"]
    assert "'" + formula in set(values["system"]) and formula not in set(values["system"])
    curve = values[values["system"] == "bm25"].set_index("k")["value"]
    expected = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", {"bm25": RUNS["bm25"]},
                                              ["nDCG(dcg='exp-log2')@5"]))
    assert curve[5] == pytest.approx(expected.at["bm25", "nDCG(dcg='exp-log2')@5"], abs=1e-12)

    at.radio(key="gain").set_value("linear").run()
    assert not at.exception, at.exception
    linear = downloads["nDCG-linear-curve-legal.csv"]
    assert '# measure: "nDCG@k"' in linear

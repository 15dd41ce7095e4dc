"""``python -m metrics trec_eval``: the options beyond qrels (-R, -T, -Z, -D, --version) and the refusals of
the other judgment formats: one line naming the file, line or query and the problem, exit non-zero,
where trec_eval 10 refuses too (checked against its binary where one is built)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from metrics.cli.trec_eval import trec_eval_lines
from metrics.errors import MetricsError

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
QRELS = DATA / "trec_eval" / "qrels.test"
RESULTS = DATA / "trec_eval" / "results.test"
QUICKTEST = DATA / "trec_eval_quicktest"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "metrics", "trec_eval", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def refused(done) -> str:
    assert done.returncode != 0, done.stdout[:300]
    message = done.stderr.strip()
    assert len(message.splitlines()) == 1, message
    return message


RUN = "1 Q0 a 1 3.0 t\n1 Q0 b 2 2.0 t\n1 Q0 c 3 1.0 t\n2 Q0 a 1 1.0 t\n"

BAD = {
    # name: (format, judgments, words of our message)
    "malformed prefs line": ("prefs", "1 g s a 2\n1 g s b\n", ["line 2", "expected 5 fields, found 4"]),
    "blank prefs line": ("prefs", "1 g s a 2\n\n1 g s b 1\n", ["line 2", "blank line"]),
    "two levels in one sub-group": ("prefs", "1 g s a 2\n1 g s a 1\n1 g s b 0\n2 g s a 1\n2 g s c 0\n",
                                    ["'a'", "two different levels"]),
    "contradicting sub-groups": ("prefs", "1 g s1 a 2\n1 g s1 b 1\n1 g s2 b 2\n1 g s2 a 1\n2 g s a 1\n2 g s c 0\n",
                                 ["'a'", "'b'", "each preferred to the other"]),
    "a docno twice in a group": ("qrels_jg", "1 0 a 1\n1 0 b 0\n1 0 a 0\n2 0 a 1\n", ["line 3", "'a'", "twice"]),
    "a query the run lacks": ("qrels_jg", "1 0 a 1\n3 0 a 1\n", ["'3'", "add -c"]),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_judgments_exit_with_one_line(name, tmp_path):
    fmt, text, words = BAD[name]
    judgments, run = tmp_path / "judgments", tmp_path / "run"
    judgments.write_text(text)
    run.write_text(RUN)
    measure = "all_prefs" if fmt == "prefs" else "qrels_jg"
    message = refused(cli("-R", fmt, "-m", measure, judgments, run))
    assert str(judgments) in message or "'3'" in message, message
    for word in words:
        assert word in message, message


@pytest.mark.parametrize("name", list(BAD))
def test_trec_eval_refuses_the_same_input(name, tmp_path, trec_eval_4):
    fmt, text, _ = BAD[name]
    judgments, run = tmp_path / "judgments", tmp_path / "run"
    judgments.write_text(text)
    run.write_text(RUN)
    measure = "all_prefs" if fmt == "prefs" else "qrels_jg"
    done = subprocess.run([str(trec_eval_4), "-R", fmt, "-m", measure, str(judgments), str(run)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0


def test_formats_and_measures_must_agree():
    assert "illegal rel_format" in refused(cli("-R", "trec", QRELS, RESULTS))
    assert "illegal retrieval results format" in refused(cli("-T", "json", QRELS, RESULTS))
    assert "needs -R prefs or -R qrels_prefs" in refused(cli("-m", "prefs_simp", QRELS, RESULTS))
    assert "needs -R qrels" in refused(cli("-R", "qrels_prefs", "-m", "map", QRELS, RESULTS))
    assert "needs -R qrels_jg" in refused(cli("-m", "map_avgjg", QRELS, RESULTS))
    with pytest.raises(MetricsError, match="needs prefs or qrels_prefs judgments"):
        import metrics.measures as measures
        measures.expand("prefs_simp")


def test_long_options_and_results_format():
    short = cli("-q", "-m", "all_prefs", "-R", "qrels_prefs", "-T", "trec_results", QRELS, RESULTS)
    long = cli("--query_eval_wanted", "--measure", "all_prefs", "--Rel_info_format", "qrels_prefs",
               "--Results_format", "trec_results", QRELS, RESULTS)
    assert short.returncode == 0 and short.stdout == long.stdout
    assert short.stdout == (QUICKTEST / "out.test.qrels_prefs").read_text()
    zscored = cli("--Zscore", QUICKTEST / "zscores_file", "-q", "-m", "all_trec", QRELS, RESULTS)
    assert zscored.stdout == (QUICKTEST / "out.test.aqZ").read_text()


def test_debug_query_evaluates_that_query_alone():
    lines = trec_eval_lines(QRELS, RESULTS, ["map", "num_q"], per_query=True, debug="0.302")
    full = trec_eval_lines(QRELS, RESULTS, ["map", "num_q"], per_query=True)
    line_302 = next(line for line in full if "\t302\t" in line)
    assert lines == [line_302, "num_q                 \tall\t1", line_302.replace("\t302\t", "\tall\t")]
    assert lines == cli("-D", "0.302", "-q", "-m", "map", "-m", "num_q", QRELS, RESULTS).stdout.splitlines()
    assert "debug output" in refused(cli("-D", "3", QRELS, RESULTS))


def test_debug_query_equals_trec_eval(trec_eval_4):
    for args in (["-D", "0.302", "-q", "-m", "all_trec"], ["--Debug_level", "0.301", "-m", "official", "-c"],
                 ["-D", "0.303", "-q", "-R", "qrels_prefs", "-m", "all_prefs"]):
        theirs = subprocess.run([str(trec_eval_4), *args, str(QRELS), str(RESULTS)], capture_output=True, text=True,
                                timeout=60, check=True).stdout
        assert cli(*args, QRELS, RESULTS).stdout == theirs, args


def test_version_is_trec_evals_line():
    done = cli("--version")
    assert done.returncode == 0
    assert done.stderr.startswith("trec_eval version 10.0")
    assert cli("-v").stderr == done.stderr


def test_zscores_of_judgment_group_measures_equal_trec_eval(tmp_path, trec_eval_wide):
    """-Z with -R qrels_jg: a deviation, a zero deviation at and off the mean, entries missing. Each query
    and the file end with a name after every other (trec_eval's lookup reads past the end otherwise)."""
    zfile = tmp_path / "z"
    zfile.write_text("301 map_avgjg 0.1 0.05\n302 map_avgjg 0.2 0\n302 P_avgjg_5 0.6667 0\n"
                     "302 P_avgjg_10 0.0 0\n303 P_avgjg_10 0.1 0.2\n"
                     "301 zz 0 1\n302 zz 0 1\n303 zz 0 1\n999 zz 0 1\n")
    args = ["-q", "-Z", str(zfile), "-R", "qrels_jg", "-m", "qrels_jg"]
    judgments = QUICKTEST / "qrels.123"
    theirs = subprocess.run([str(trec_eval_wide), *args, str(judgments), str(RESULTS)], capture_output=True,
                            text=True, timeout=60, check=True).stdout.splitlines()
    assert "ZP_avgjg_10            \t302\t-1000000.0000000000" in theirs
    ours = trec_eval_lines(judgments, RESULTS, ["qrels_jg"], per_query=True, rel_format="qrels_jg", zscores=zfile,
                           decimals=10)
    assert ours == theirs

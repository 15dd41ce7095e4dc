"""``python -m metrics trec_eval``: trec_eval 10's output line for line, and its refusals.

The layout checks read trec_eval 10's own outputs (tests/data/trec_eval10
with 10 decimals, tests/data/trec_eval with 4) and, where a C compiler is
present, the 4-decimal trec_eval 10 binary run on the same cases.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from metrics.cli.trec_eval import format_value, trec_eval_lines, trec_line
from metrics.errors import MetricsError
from tests.conftest import ROOT, TREC_EVAL10_DATA, TREC_EVAL_DATA
from tests.metrics.measures.trec_oracle import (
    trec_eval10_cases,
    trec_eval_readme_cases,
    trec_options,
)

CASES = trec_eval10_cases()


def lines_for(args: list[str], folder, decimals: int = 4) -> list[str]:
    options = trec_options(args)
    return trec_eval_lines(folder / options["qrels"], folder / options["run"], options["measures"],
                           per_query=options["per_query"], complete=options["missing"] == "zero",
                           judged_only=options["judged_only"], rel_level=options["rel_level"],
                           max_depth=options["max_depth"], num_docs=options["num_docs"], decimals=decimals)


@pytest.mark.parametrize("out, args", CASES, ids=[c[0] for c in CASES])
def test_ten_decimals_equal_trec_eval_10_line_for_line(out, args):
    assert lines_for(args, TREC_EVAL10_DATA, decimals=10) == (TREC_EVAL10_DATA / out).read_text().splitlines()


@pytest.mark.parametrize("out, args", CASES, ids=[c[0] for c in CASES])
def test_four_decimals_have_trec_eval_layout(out, args):
    """Same lines as the reference, each value the reference's rounded to 4 decimals."""
    ours = lines_for(args, TREC_EVAL10_DATA)
    wide = (TREC_EVAL10_DATA / out).read_text().splitlines()
    assert len(ours) == len(wide)
    for mine, theirs in zip(ours, wide):
        name, qid, value = mine.split("\t")
        ref_name, ref_qid, ref_value = theirs.split("\t")
        assert (name, qid) == (ref_name, ref_qid)
        if ref_value.startswith("'") or "." not in ref_value or ref_value.endswith("nan") or name.startswith("runid"):
            assert value.strip() == ref_value, mine
        else:
            assert len(value.split(".")[1]) == 4, mine
            assert abs(float(value) - float(ref_value)) <= 5e-5 + 1e-12, (mine, theirs)


def test_four_decimals_equal_the_trec_eval_binary(trec_eval_4):
    for out, args in CASES:
        binary = subprocess.run([str(trec_eval_4), *args], cwd=TREC_EVAL10_DATA, capture_output=True, text=True,
                                check=True).stdout.splitlines()
        assert lines_for(args, TREC_EVAL10_DATA) == binary, out


README_CASES = trec_eval_readme_cases()


@pytest.mark.parametrize("out, args", README_CASES, ids=[c[0] for c in README_CASES])
def test_trec_eval_test_outputs_line_for_line(out, args):
    """trec_eval's own tests: official measures, -q, -c, -M100, -l2 with relstring.20, parameters."""
    assert lines_for(args, TREC_EVAL_DATA) == (TREC_EVAL_DATA / out).read_text().splitlines()


def test_format_is_trec_evals():
    assert trec_line("P_5", "301", format_value(0.4)) == "P_5                   \t301\t0.4000"
    assert format_value(0.123456789, decimals=10) == "0.1234567890"
    assert format_value(-21.0) == "-21.0000"
    assert format_value(float("-nan")) == "  -nan"   # %6.4f of 0/0 under glibc
    assert format_value(float("-nan"), decimals=10) == "-nan"
    assert format_value(247.0, "long") == "247"


# ---------------------------------------------------------------- the command line itself

def write(tmp_path, qrels: str, run: str):
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    return tmp_path / "qrels", tmp_path / "run"


QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 1\n"
RUN = "1 Q0 a 1 3.0 tag\n1 Q0 x 2 2.0 tag\n1 Q0 c 3 1.0 tag\n2 Q0 b 1 1.0 other\n"


def cli(*args, stdin: str | None = None, cwd=None):
    return subprocess.run([sys.executable, "-m", "metrics", "trec_eval", *map(str, args)], cwd=cwd or ROOT,
                          capture_output=True, text=True, input=stdin, timeout=120, check=False)


def test_command_line_flags_and_stdin(tmp_path):
    qrels, run = write(tmp_path, QRELS, RUN)
    done = cli("-q", "-m", "P.1,2", "-m", "map", "-m", "relstring.3", qrels, "-", stdin=RUN)
    assert done.returncode == 0, done.stderr
    # query 1: a(1) x(not judged) c(2): AP = (1/1 + 2/3) / 2 with R = 2; query 2: b (not judged there): AP = 0
    assert done.stdout.splitlines() == [
        "map                   \t1\t0.8333", "P_1                   \t1\t1.0000", "P_2                   \t1\t0.5000",
        "relstring_3           \t1\t'1-2'",
        "map                   \t2\t0.0000", "P_1                   \t2\t0.0000", "P_2                   \t2\t0.0000",
        "relstring_3           \t2\t'-'",
        "map                   \tall\t0.4167", "P_1                   \tall\t0.5000",
        "P_2                   \tall\t0.2500",
    ]
    quiet = cli("--nosummary", "--query_eval_wanted", "--measure", "num_ret", qrels, run)
    assert quiet.stdout.splitlines() == ["num_ret               \t1\t3", "num_ret               \t2\t1"]
    official = cli(qrels, run).stdout.splitlines()
    assert official[0] == "runid                 \tall\tother"  # the tag of the run's last line
    assert official[1] == "num_q                 \tall\t2"


def test_duplicate_document_exits_with_one_line(tmp_path):
    qrels, run = write(tmp_path, QRELS, RUN + "1 Q0 a 9 0.5 tag\n")
    done = cli("-m", "map", qrels, run)
    assert done.returncode != 0
    message = done.stderr.strip()
    assert len(message.splitlines()) == 1 and "'a'" in message and "run" in message, message
    with pytest.raises(MetricsError, match="a"):
        trec_eval_lines(qrels, run, ["map"])


def test_unknown_measure_exits_with_one_line(tmp_path):
    qrels, run = write(tmp_path, QRELS, RUN)
    done = cli("-m", "ndcg_cutt.10", qrels, run)
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0 and "illegal measure 'ndcg_cutt.10'" in done.stderr
    for measure, words in (("P.0", "positive"), ("P.5,5", "duplicate"), ("utility.1,2", "4 coefficients"),
                           ("P.", "nothing after the dot"), ("ndcg.1=2,3", "malformed pair"),
                           ("prefs", "cannot be computed from -R qrels"),
                           ("ndcg.-1=3", "unjudged")):
        with pytest.raises(MetricsError, match=words) as caught:
            trec_eval_lines(qrels, run, [measure])
        assert "\n" not in str(caught.value), measure


def test_missing_query_needs_c_as_in_trec_eval(tmp_path):
    qrels, run = write(tmp_path, QRELS + "3 0 z 1\n", RUN)
    with pytest.raises(MetricsError, match="'3' of the qrels has no results.*add -c"):
        trec_eval_lines(qrels, run, ["map"])
    lines = trec_eval_lines(qrels, run, ["num_q", "num_ret", "utility.1,-2,0,0"], complete=True, per_query=True)
    assert "utility_1,-2,0,0      \t3\t-2.0000" in lines  # trec_eval scores its placeholder document
    assert "num_ret               \t3\t0" in lines        # ... and resets the values named num_ret,
    assert "num_q                 \tall\t3" in lines
    plain = trec_eval_lines(qrels, run, ["utility"], complete=True, per_query=True)
    assert "utility               \t3\t0.0000" in plain   # ... utility, relstring, rbp_resid, unj*


def test_missing_query_matches_the_binary(tmp_path, trec_eval_4):
    write(tmp_path, QRELS + "3 0 z 1\n", RUN)
    args = ["-q", "-c", "-m", "all_trec", "-m", "utility.1,-2,0,0", "-m", "relstring.4", "-m", "rbp_resid.p=0.5"]
    binary = subprocess.run([str(trec_eval_4), *args, "qrels", "run"], cwd=tmp_path, capture_output=True,
                            text=True, check=True).stdout.splitlines()
    assert lines_for(args + ["qrels", "run"], tmp_path) == binary
    no_c = subprocess.run([str(trec_eval_4), "qrels", "run"], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert no_c.returncode != 0  # trec_eval 10 refuses it too

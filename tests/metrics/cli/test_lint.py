"""metrics.cli.lint: ``python -m metrics lint`` prints one tab-separated line per finding."""
from __future__ import annotations

from metrics import cli

QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 d1 -1\n2 0 d3 2\n"
CLEAN = "1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n2 Q0 d3 1 1.0 t\n2 Q0 d1 2 0.5 t\n"
# d1 and d9 tie (d9 first: docno descending); query 3 has no judgments; query 2 is missing
ODD = "1 Q0 d1 1 2.0 t\n1 Q0 d9 2 2.0 t\n3 Q0 d1 1 1.0 t\n"


def lint_lines(tmp_path, capsys, *args) -> list[list[str]]:
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "clean.run").write_text(CLEAN)
    (tmp_path / "odd.run").write_text(ODD)
    paths = [str(tmp_path / name) if name.endswith((".txt", ".run")) else name for name in args]
    assert cli.main(["lint", *paths]) == 0
    return [line.split("\t") for line in capsys.readouterr().out.splitlines()]


def test_clean_run_is_ok_and_qrels_findings_come_first(tmp_path, capsys):
    lines = lint_lines(tmp_path, capsys, "q.txt", "clean.run")
    assert [line[:3] for line in lines] == [["q.txt", "warning", "negative_grades"],
                                            ["clean.run", "warning", "judged"],
                                            ["clean.run", "ok", "-"]]
    # every retrieved document is judged: Judged@10 = (2/2 + 2/2) / 2
    assert lines[1][3].startswith("Judged@10 = 1.0000 over 2 judged queries")
    assert lines[2][3] == "no problems found"


def test_findings_of_an_odd_run_and_the_judged_depth(tmp_path, capsys):
    lines = lint_lines(tmp_path, capsys, "q.txt", "odd.run")
    kinds = [line[2] for line in lines if line[0] == "odd.run"]
    # the tie also orders differently in ranx (input order) than in trec_eval (docno descending)
    assert kinds == ["ties", "queries_not_in_qrels", "queries_not_in_run", "judged", "parity_ranx_ties"]

    def judged(lines):
        return next(line[3] for line in lines if line[2] == "judged")
    # query 1: d9, d1 judged 1 of min(10, 2); query 2 missing counts 0: (1/2 + 0) / 2
    assert judged(lines).startswith("Judged@10 = 0.2500")
    deep1 = lint_lines(tmp_path, capsys, "-k", "1", "q.txt", "odd.run")
    # at depth 1 only d9 (unjudged) is seen: (0 + 0) / 2
    assert judged(deep1).startswith("Judged@1 = 0.0000")

"""Helpers of the trec_eval 10 conformance tests: its reference cases and its output format (and
``ranked_from`` of hand.py, for the tests that import it from here)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import metrics
from metrics.measures import TextMeasure, aggregate, relstring, trec_plan
from tests.conftest import TREC_EVAL10_DATA, TREC_EVAL_DATA
from tests.metrics.measures.hand import ranked_from as ranked_from


def trec_eval10_cases() -> list[tuple[str, list[str]]]:
    """(expected output file, trec_eval arguments) for every case of tests/data/trec_eval10/INDEX.md."""
    index = TREC_EVAL10_DATA / "INDEX.md"
    return [(out, args.split()) for out, args in re.findall(r"\| (\S+\.out) \| `trec_eval (.*?)`", index.read_text())]


def trec_eval_readme_cases() -> list[tuple[str, list[str]]]:
    """(expected output file, trec_eval arguments) of trec_eval's own tests (tests/data/trec_eval/README.md)."""
    readme = TREC_EVAL_DATA / "README.md"
    found = re.findall(r"\| (out\S*) \| `trec_eval (.*?)`", readme.read_text())
    return [(out, args.replace("test/", "").split()) for out, args in found]


def read_trec_output(text: str) -> dict[tuple[str, str], str]:
    """{(printed measure name, qid): value text} of trec_eval output lines."""
    table = {}
    for line in text.splitlines():
        name, qid, value = (part.strip() for part in line.split("\t"))
        table[(name, qid)] = value
    return table


def trec_options(args: list[str]) -> dict:
    """trec_eval's command-line arguments as the options of our library (files last, as trec_eval)."""
    options = {"measures": [], "missing": "skip", "judged_only": False, "max_depth": None, "rel_level": 1,
               "num_docs": 0, "per_query": False}
    files = []
    items = iter(args)
    for arg in items:
        if arg.startswith("-") and len(arg) > 1:
            flag, rest = arg[1], arg[2:]

            def value(rest=rest):
                return rest or next(items)
            if flag == "q":
                options["per_query"] = True
            elif flag == "c":
                options["missing"] = "zero"
            elif flag == "J":
                options["judged_only"] = True
            elif flag == "m":
                options["measures"].append(value())
            elif flag == "M":
                options["max_depth"] = int(value())
            elif flag == "l":
                options["rel_level"] = int(value())
            elif flag == "N":
                options["num_docs"] = int(value())
            else:
                raise ValueError(f"flag {arg} is not handled here")
        else:
            files.append(arg)
    options["qrels"], options["run"] = files
    options["measures"] = options["measures"] or ["official"]
    return options


def as_number(text: str) -> float:
    """A trec_eval value: a number, or -nan/nan."""
    return float("nan") if text.endswith("nan") else float(text)


def library_values(options: dict, folder: Path) -> dict[tuple[str, str], object]:
    """{(printed name, qid): value} from the library (rank_run, evaluate_ranked, aggregate), for every
    value trec_eval prints with these options; text values (relstring) as their quoted strings."""
    plan = trec_plan(options["measures"], num_docs=options["num_docs"])
    ranked = metrics.rank_run(folder / options["qrels"], folder / options["run"], missing=options["missing"],
                              max_depth=options["max_depth"], judged_only=options["judged_only"])
    numeric = [v.measure for v in plan if not isinstance(v.measure, TextMeasure)]
    values = metrics.evaluate_ranked(ranked, numeric, rel_level=options["rel_level"])
    grades = metrics.read_qrels(folder / options["qrels"]).table.column("rel").to_numpy()
    out: dict[tuple[str, str], object] = {}
    for v in plan:
        if isinstance(v.measure, TextMeasure):
            if v.measure.name == "runid":  # trec_eval keeps the tag of the run file's last line
                lines = [line for line in (folder / options["run"]).read_text().splitlines() if line.strip()]
                out[("runid", "all")] = lines[-1].split()[5]
            if v.measure.name == "relstring" and options["per_query"]:
                for qid, text in zip(ranked.qids, relstring(ranked, v.measure.length)):
                    out[(v.printed, qid)] = f"'{text}'"
            continue
        per_query = values[str(v.measure)]
        if v.spec.per_query and options["per_query"]:
            out.update({(v.printed, qid): float(x) for qid, x in zip(ranked.qids, per_query)})
        if v.spec.summary:
            complete = options["missing"] == "zero" and v.spec.complete_summary is not None
            out[(v.printed, "all")] = v.spec.complete_summary(grades) if complete else aggregate(v.measure,
                                                                                                    np.asarray(per_query))
    return out

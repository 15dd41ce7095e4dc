"""What the README and the documentation site quote must exist: repository paths (in code spans,
code blocks and links), dotted names of the library (`metrics.stats.compare`), `make` targets, and
command lines of `python -m metrics` / `ndcg-lab`, which must parse with the command's own argparse
parser (parsed only, never run). `mkdocs build --strict` (`make docs`) checks the links between
pages of the site; this checks what it cannot see."""
from __future__ import annotations

import argparse
import contextlib
import glob
import importlib
import io
import re
import shlex
from pathlib import Path

import pytest

from metrics.cli import command_names, parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

# First segments that make a word a repository path: the folders of the repository, the ones it
# had (so that a reference to a moved folder is caught, not skipped) and its top-level files.
TOP_FOLDERS = {"metrics", "ui", "views", "ndcg_lab", "tests", "bench", "docs", "sample_data", "scripts",
               ".streamlit", ".ci"}
TOP_FILES = {"app.py", "Makefile", "pyproject.toml", "requirements.txt", "requirements-dev.txt", "mkdocs.yml",
             "pytest.ini", "README.md", "LICENSE", "NOTICE", "CITATION.cff", "CHANGELOG.md"}
FOLDERS = "|".join(re.escape(t) for t in TOP_FOLDERS)
PATH_IN_CODE = re.compile(rf"(?<![\w/.$<>~-])((?:{FOLDERS})/[\w.*/-]*)")
FILE_IN_CODE = re.compile("^(?:{})$".format("|".join(re.escape(t) for t in TOP_FILES)))
# Dotted names quoted as what does not exist ("it is `metrics.lint`, not `metrics.io.lint`").
NAMED_AS_ABSENT = {"metrics.io.lint"}
# Dotted names of the library and the app's packages (views are Streamlit scripts: never imported),
# as in prose (`metrics.stats.compare`, `metrics.tasks.view(access)`) or an entry point (`ndcg_lab.ui.console:run`).
DOTTED = re.compile(r"^((?:metrics|ui|ndcg_lab)(?:\.\w+)+(?::\w+)?)(?:\(.*\))?$")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
FENCE = re.compile(r"^\s*(```|~~~)")
PROGRAMS = (("python", "-m", "metrics"), ("python3", "-m", "metrics"), ("ndcg-lab",))
MAKE = re.compile(r"^make\s+([\w-]+)")
SHELL_OPERATORS = {">", ">>", "2>", "&>", "<", "&&", "||", ";", "&"}   # what follows is another command or a file
FOREIGN_MAKE_TARGETS = {"quicktest"}   # trec_eval's own Makefile, quoted on the trec_eval page
ENV = re.compile(r"^[A-Z_][A-Z0-9_]*=")


def split_markdown(text: str) -> tuple[list[str], list[str], list[str]]:
    """(code block lines with continuations joined, code spans, link targets) of a Markdown text.
    Of a ``text`` block (output, a folder tree) only the command lines (``$ ...``) count."""
    blocks, spans, links = [], [], []
    fenced, pending, output = False, "", False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced, pending = not fenced, ""
            output = fenced and line.strip().lstrip("`~").strip() == "text"
            continue
        if fenced and output and not pending and not line.startswith("$ "):
            continue
        if fenced:
            pending += line.strip()
            if pending.endswith("\\"):
                pending = pending[:-1] + " "
            else:
                blocks.append(pending)
                pending = ""
            continue
        spans += SPAN.findall(line)
        links += LINK.findall(line)
    return blocks, spans, links


def path_problems(code: str) -> list[str]:
    """Repository paths named in a piece of code (a glob must match something) that do not exist."""
    found = []
    for match in PATH_IN_CODE.finditer(code):
        path = match.group(1)
        if code[match.end():match.end() + 1] in ("<", "{"):   # a pattern (test_<family>.py): its folder
            path = path.rsplit("/", 1)[0] + "/"
        found.append(path)
    if FILE_IN_CODE.match(code.strip()):
        found.append(code.strip())
    missing = []
    for path in found:
        path = path.rstrip(".")
        exists = glob.glob(str(ROOT / path)) if "*" in path else (ROOT / path).exists()
        if not exists:
            missing.append(f"path {path!r} does not exist")
    return missing


def dotted_problems(span: str) -> list[str]:
    """A dotted name of the library (``metrics.stats.compare``) that does not resolve."""
    match = DOTTED.match(span.strip())
    if not match or match.group(1) in NAMED_AS_ABSENT:
        return []
    parts = match.group(1).replace(":", ".").split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for name in parts[cut:]:
                obj = getattr(obj, name)
        except AttributeError:
            break
        return []
    return [f"name {match.group(1)!r} is not in the library"]


def command_words(code: str) -> list[str] | None:
    """The arguments after the program of a `python -m metrics` / `ndcg-lab` command line, or None
    when the code is no such command (environment assignments and a `$ ` prompt are skipped)."""
    code = code.strip().removeprefix("$ ")
    try:
        words = shlex.split(code, comments=True)
    except ValueError:
        return None
    while words and ENV.match(words[0]):
        words.pop(0)
    operators = [i for i, word in enumerate(words) if word in SHELL_OPERATORS]
    words = words[:operators[0]] if operators else words
    for program in PROGRAMS:
        if tuple(words[:len(program)]) == program:
            return words[len(program):]
    return None


def is_synopsis(words: list[str]) -> bool:
    """A usage line (`eval QRELS RUN [RUN ...] [--gain exp|linear]`) rather than a command to run."""
    return any(c in word for word in words for c in "[]|") or "..." in words


def option_strings(p: argparse.ArgumentParser) -> set[str]:
    return {o for action in p._actions for o in action.option_strings}


def subparser(p: argparse.ArgumentParser, words: list[str]) -> argparse.ArgumentParser:
    """The parser of the (sub)command that ``words`` name: subcommands, then verbs (``task submit``)."""
    for word in words:
        if word.startswith("-"):
            continue
        actions = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not actions or word not in actions[0].choices:
            break
        p = actions[0].choices[word]
    return p


def command_problems(code: str, *, full: bool) -> list[str]:
    """A command line that the command line's parser refuses. ``full``: a line of a code block,
    parsed whole unless it is a synopsis; a code span (a fragment in prose) and a synopsis have
    their subcommands and option names checked."""
    words = command_words(code)
    if words is None or not words or words[0].startswith("-"):
        return []
    commands = words[0].split("|")
    if commands == ["app"]:
        return []
    unknown = [c for c in commands if c not in command_names() and c != "app" and c != "..."]
    if unknown:
        return [f"command {code!r}: no subcommand {', '.join(unknown)}"]
    if full and not is_synopsis(words):
        errors = io.StringIO()
        try:
            with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
                parser(only=words[0]).parse_args(words)
        except SystemExit as exc:
            if exc.code:
                return [f"command {code!r} does not parse: {errors.getvalue().strip().splitlines()[-1]}"]
        return []
    problems = []
    for command in commands:
        if command in ("app", "..."):
            continue
        known = option_strings(subparser(parser(only=command), [command, *words[1:]]))
        for word in words[1:]:
            for option in word.strip("[]").split("|"):
                option = option.strip("[]").split("=")[0]
                if re.match(r"^--?[A-Za-z]", option) and option not in known:
                    problems.append(f"command {code!r}: {command} has no option {option}")
    return problems


def make_problems(code: str) -> list[str]:
    match = MAKE.match(code.strip().removeprefix("$ "))
    if not match or match.group(1) in FOREIGN_MAKE_TARGETS:
        return []
    targets = re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), flags=re.M)
    return [] if match.group(1) in targets else [f"make target {match.group(1)!r} is not in the Makefile"]


def link_problems(target: str, page: Path) -> list[str]:
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
        return []   # a URL (http:, mailto:) or an anchor of the same page
    path = (page.parent / target.split("#")[0]).resolve()
    return [] if path.exists() else [f"link {target!r} points at nothing (from {page.name})"]


def problems(text: str, page: Path) -> list[str]:
    """Everything a Markdown page quotes that does not exist or does not parse."""
    blocks, spans, links = split_markdown(text)
    found = []
    for code in blocks:
        found += path_problems(code) + command_problems(code, full=True) + make_problems(code)
    for code in spans:
        found += path_problems(code) + dotted_problems(code) + command_problems(code, full=False) + make_problems(code)
    for target in links:
        found += link_problems(target, page)
    return found


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_what_the_page_quotes_exists(page):
    assert problems(page.read_text(encoding="utf-8"), page) == []


def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


# Inputs of the self-tests: files that stay where they are.
QRELS, RUN = "tests/data/trec_eval/qrels.test", "tests/data/trec_eval/results.test"


def test_a_planted_mistake_of_each_kind_is_caught():
    page = ROOT / "docs" / "planted.md"
    text = "\n".join([
        "See `metrics/no_such_module.py`, `metrics.stats.no_such_function` and [a page](no-such-page.md).",
        "The command is `ui.console:no_such_entry`.",
        "Run `make no-such-target` or `python -m metrics evaluate QRELS RUN`.",
        "```bash",
        f"python -m metrics eval {QRELS} {RUN} --no-such-flag",
        "python -m metrics compare QRELS BASE RUN [--tset t|wilcoxon]",
        f"ndcg-lab eval {QRELS} tests/data/trec_eval/missing.run -m nDCG@10",
        "```",
        "```text",
        f"$ python -m metrics lint {QRELS} tests/data/trec_eval/gone.run",
        "output naming metrics/ui/ which is no path",
        "```",
    ])
    found = problems(text, page)
    for expected in ("'metrics/no_such_module.py'", "'metrics.stats.no_such_function'", "'no-such-page.md'",
                     "'no-such-target'", "no subcommand evaluate", "--no-such-flag", "no option --tset",
                     "'tests/data/trec_eval/missing.run'", "'ui.console:no_such_entry'",
                     "'tests/data/trec_eval/gone.run'"):
        assert any(expected in problem for problem in found), (expected, found)
    assert len(found) == 10


def test_good_quotes_pass():
    page = ROOT / "docs" / "good.md"
    text = "\n".join([
        "`metrics/cli/`, `tests/data/trec_eval/*.test`, `metrics.stats.compare`, `metrics.evaluate`, "
        "[measures](measures.md#semantics), `make test`, `python -m metrics lint`, `ndcg-lab app --mode shared`.",
        "```bash",
        f"$ NDCG_LAB_HOME=/tmp ndcg-lab eval {QRELS} {RUN} \\",
        "    -m nDCG@10 --format tsv   # a comment",
        "python -m metrics eval QRELS RUN [RUN ...] [-c | --skip-missing] [--format trec|tsv]",
        "ndcg-lab task submit TEAM_LINK run.txt --label x",
        "```",
        "```text",
        "tree/    not a path of this repository, metrics/none/ neither: output is not checked",
        "```",
    ])
    assert problems(text, page) == []

"""Command line: ``python -m metrics`` and ``ndcg-lab`` (eval, lint, compare, negatives, app).

Every module of this package with a ``register(subparsers)`` function is a subcommand: it adds
its parser and sets ``handler=`` (a function of the parsed arguments returning the exit code).
Only the module of the command given is imported (``eval`` needs neither pandas nor SciPy);
``--help``, a missing or an unknown command import them all, so that every command is listed.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.abc
import os
import pkgutil
import re
import sys

from .. import __version__
from ..errors import MetricsError

FIRST = ("eval", "lint")  # shown first in --help; the rest in name order


def command_names() -> list[str]:
    """Names of the modules of this package, in the order of ``--help`` (found without importing them)."""
    names = [info.name for info in pkgutil.iter_modules(__path__)]
    return [n for n in FIRST if n in names] + sorted(n for n in names if n not in FIRST)


def command_modules(only: str | None = None) -> list:
    """The subcommand modules: every one, or only the module of the command ``only`` (every one
    when that module is no subcommand)."""
    names = [only] if only is not None else command_names()
    modules = [m for m in (importlib.import_module(f"{__name__}.{name}") for name in names) if hasattr(m, "register")]
    return modules if modules or only is None else command_modules()


def chosen(argv: list[str]) -> str | None:
    """The subcommand named in ``argv``: its first word that is not an option, when it names a
    module of this package (the top level has no option that takes a value)."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in command_names() else None


def parser(prog: str = "python -m metrics", only: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="nDCG Lab: evaluate ranked retrieval runs.")
    p.add_argument("--version", action="version", version=f"nDCG Lab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for module in command_modules(only):
        module.register(sub)
    return p


class _NoPandas(importlib.abc.MetaPathFinder):
    """An import finder that refuses pandas (see :func:`defer_pandas`)."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"{name} is deferred", name=name)
        return None


def defer_pandas() -> None:
    """Let pyarrow convert between Arrow and numpy without importing pandas, in a command that
    needs no pandas (``eval`` printing trec, tsv or json).

    When pandas is installed, pyarrow imports it (about 0.35 s) on its first conversion from
    numpy (its lazy pandas shim asks whether the input is a pandas Series) and on its first
    conversion to numpy (the C++ converter's pandas data, for dates and missing values). Each
    tries once. Here both first tries are refused, so pyarrow records pandas as absent and
    converts numbers and strings as it always does; its pandas calls (``Table.from_pandas``,
    ``Table.to_pandas``) import pandas again when they run, so an input that needs pandas (a
    JSON list of records) still works. Nothing is done when pandas is imported already.
    """
    if "pandas" in sys.modules:
        return
    import numpy as np
    import pyarrow as pa

    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        pa.array(np.zeros(1, dtype=np.int64)).to_numpy()   # from numpy: a list would import dateutil
    finally:
        sys.meta_path.remove(finder)


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


FIGURE_FORMATS = ("svg", "pdf", "png", "jpeg", "webp")


def figure_formats(text: str) -> list[str]:
    """An argparse type: a comma-separated list of :data:`FIGURE_FORMATS` (``svg,pdf,png``)."""
    formats = [f.strip().lower().lstrip(".") for f in str(text).split(",") if f.strip()]
    unknown = [f for f in formats if f not in FIGURE_FORMATS]
    if unknown or not formats:
        raise argparse.ArgumentTypeError(f"unknown figure format {(unknown or [''])[0]!r}: "
                                         f"use a comma-separated list of {', '.join(FIGURE_FORMATS)}")
    return formats


_RUN_NAME = re.compile(r"[^=/\\:]+")


def split_named(token: str) -> tuple[str | None, str]:
    """``name=path`` on the command line: (name, path); any other token: (None, token).

    A token that is an existing path stays a path, '=' or not; so does one whose part before the
    first '=' holds a path separator or a colon (``s3://b/date=1/run``, ``runs/a=b.txt``)."""
    head, sep, tail = token.partition("=")
    if not sep or not tail or not _RUN_NAME.fullmatch(head) or os.path.exists(token):
        return None, token
    return head.strip(), tail


def named_runs(tokens) -> list | dict:
    """The runs of a command line for :func:`metrics.evaluate` and its kin: the paths as given when
    no token names its run; else ``{name: path}``, where an unnamed run keeps the name the library
    gives it (its file's stem: ``bm25.run.gz`` is ``bm25``) and a name given twice is numbered."""
    pairs = [split_named(str(t)) for t in tokens]
    if all(name is None for name, _ in pairs):
        return [path for _, path in pairs]
    from ..io.paths import stem

    names = [name if name is not None else stem(os.path.basename(path.rstrip("/")) or path) for name, path in pairs]
    names = [f"{n}#{names[:i + 1].count(n)}" if names.count(n) > 1 else n for i, n in enumerate(names)]
    return {name: path for name, (_, path) in zip(names, pairs)}


def named_run(token: str):
    """One run of a command line: its path, or, given as ``name=path``, the run read and so named."""
    name, path = split_named(str(token))
    if name is None:
        return path
    from ..io import read_run

    return read_run(path, name=name)


def add_latex_options(p) -> None:
    """``--latex-table`` and ``--caption``: ``--format latex`` as a complete ``table`` float (read back
    by :func:`latex_options`)."""
    p.add_argument("--latex-table", action="store_true",
                   help="with --format latex: a complete table environment with a caption, not a bare tabular")
    p.add_argument("--caption", default=None, help="with --latex-table: the caption (plain text, escaped)")
    p.add_argument("--label", default=None, help="with --latex-table: the \\label of the table")


def latex_options(args) -> dict:
    """The keyword options of :func:`metrics.report.export.to_latex` given by :func:`add_latex_options`."""
    return {"environment": bool(args.latex_table), "caption": args.caption, "label": args.label}


def add_figure_options(p) -> None:
    """``--figures DIR`` and ``--figure-formats``: the command's figures as files (read back by
    :func:`write_figures`)."""
    p.add_argument("--figures", metavar="DIR", default=None,
                   help="also write the figures into DIR, one file per figure and format (drawn by kaleido "
                        "in the Chromium on this machine, or BROWSER_PATH)")
    p.add_argument("--figure-formats", metavar="LIST", type=figure_formats, default=["svg", "pdf", "png"],
                   help=f"comma-separated formats of --figures: {', '.join(FIGURE_FORMATS)} (default svg,pdf,png)")


def write_figures(figures: dict, args) -> list:
    """Write ``{stem: figure}`` into ``args.figures`` in every format of ``args.figure_formats``
    (one browser for all); the paths written, also listed on stderr."""
    from pathlib import Path

    from ..report.figures import save_all

    folder = Path(args.figures)
    paths = save_all([(fig, folder / f"{stem}.{fmt}") for stem, fig in figures.items()
                      for fmt in args.figure_formats])
    for path in paths:
        print(f"figure: {path}", file=sys.stderr)
    return paths


CLI_SPELLINGS = {
    "on_duplicate='first'": ("on_duplicate", "--on-duplicate first"),
    "on_duplicate='error'": ("on_duplicate", "--on-duplicate error"),
    "missing='zero'": ("missing", "-c"),
    "missing='skip'": ("missing", "--skip-missing"),
    "ties='score'": ("ties", "--ties score"),
    "ties='rank'": ("ties", "--ties rank"),
    "workdir=": ("workdir", "--workdir "),
}
"""A library keyword as a hint writes it -> (the option's argparse dest, its command-line spelling)."""


def for_the_command_line(error: MetricsError, args) -> MetricsError:
    """``error`` with the library keywords of its hint (``on_duplicate='first'``) spelt as the flags
    of the command that raised it (``--on-duplicate first``); a keyword the command has no flag for
    stays as it is."""
    fix, problem = error.fix, error.problem
    for keyword, (dest, flag) in CLI_SPELLINGS.items():
        if hasattr(args, dest):
            fix = fix.replace(keyword, flag) if fix else fix
            problem = problem.replace(keyword, flag)
    if (fix, problem) == (error.fix, error.problem):
        return error
    return MetricsError(problem, source=error.source, line=error.line, fix=fix)


def main(argv=None, prog: str = "python -m metrics") -> int:
    from ..io.memory import no_huge_pages
    no_huge_pages()   # numpy's large arrays in small pages: a huge page's first touch is slow on our VMs
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser(prog, chosen(argv)).parse_args(argv)
    handler = args.handler
    try:
        return handler(args)
    except MetricsError as exc:
        print(f"error: {for_the_command_line(exc, args)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:
        name = getattr(exc, "filename", None) or ""
        print(f"error: {name}: {exc.strerror or exc}", file=sys.stderr)
        return 2


def leave(code: int):
    """End the command's process with ``code`` once its output is flushed, without finalising
    the interpreter (``os._exit``).

    Finalisation gains a command nothing (its files are closed and its clusters shut down by
    then) and risks an abort: a native worker thread (Arrow's pools) that takes the GIL while
    the interpreter finalises is ended by CPython with ``pthread_exit``, and its unwinding
    through C++ frames calls ``std::terminate`` (SIGABRT, exit 134, "terminate called without
    an active exception"), after the command had printed its result. Threads still running
    (the digest of an input that failed) end with the process.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):   # the reader left, or the stream is closed
            pass
    os._exit(code)

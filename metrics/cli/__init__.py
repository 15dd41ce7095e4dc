"""Command line: ``python -m metrics`` and ``ndcg-lab`` (eval, lint, compare, negatives, app).

Every module of this package with a ``register(subparsers)`` function is a subcommand: it adds
its parser and sets ``handler=`` (a function of the parsed arguments returning the exit code).
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from .. import __version__
from ..errors import MetricsError

FIRST = ("eval", "lint")  # shown first in --help; the rest in name order


def command_modules() -> list:
    names = [info.name for info in pkgutil.iter_modules(__path__)]
    ordered = [n for n in FIRST if n in names] + sorted(n for n in names if n not in FIRST)
    modules = [importlib.import_module(f"{__name__}.{name}") for name in ordered]
    return [m for m in modules if hasattr(m, "register")]


def parser(prog: str = "python -m metrics") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="nDCG Lab: evaluate ranked retrieval runs.")
    p.add_argument("--version", action="version", version=f"nDCG Lab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for module in command_modules():
        module.register(sub)
    return p


def main(argv=None, prog: str = "python -m metrics") -> int:
    args = parser(prog).parse_args(argv)
    handler = args.handler
    try:
        return handler(args)
    except MetricsError as exc:
        print(f"error: {exc}", file=sys.stderr)
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
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):   # the reader left, or the stream is closed
            pass
    os._exit(code)

"""The ``ndcg-lab`` console command: ``ndcg-lab app [streamlit options]`` starts the dashboard,
every other subcommand is the library's command line (``ndcg-lab eval|lint|compare|negatives``,
the same as ``python -m metrics``).

Streamlit runs in a child process on :func:`ui.paths.app_dir`'s ``app.py``, in that folder, so
that its ``.streamlit/config.toml`` applies.
"""
from __future__ import annotations

import subprocess
import sys

from metrics.cli import main as cli_main
from ui.paths import CHECKOUT, INSTALLED, app_dir

PROG = "ndcg-lab"


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["app"]:
        folder = app_dir()
        if not (folder / "app.py").is_file():
            print(f"{PROG}: app.py is missing (looked in {CHECKOUT} and {INSTALLED})", file=sys.stderr)
            return 2
        return subprocess.call([sys.executable, "-m", "streamlit", "run", str(folder / "app.py"), *argv[1:]],
                               cwd=folder)
    return cli_main(argv, prog=PROG)


if __name__ == "__main__":
    sys.exit(main())

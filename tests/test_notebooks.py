"""The example notebooks (docs/notebooks): stored without outputs, written against the public library
only, and each executed top to bottom in a fresh kernel on the bundled sample data, so that an
example cannot rot silently when the library changes."""
from __future__ import annotations

import ast
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "docs" / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
TIMEOUT = 240          # seconds per cell; the slowest cell takes a few seconds on the sample data
PRIVATE_TOP = ("ui", "views", "streamlit", "ndcg_lab")   # the app, never the library's API


def read(path: Path):
    return nbformat.read(path, as_version=4)


def stored_outputs(nb) -> list[str]:
    """Where a notebook holds results: code cells with outputs or an execution count."""
    return [f"cell {i}" for i, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)]


def private_imports(nb) -> list[str]:
    """Imports a notebook of the public API must not make: the app's packages, or a private name
    (``_x``) of the library, as ``cell N: name``."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            found += [f"cell {i}: {name}" for name in names
                      if name.split(".")[0] in PRIVATE_TOP
                      or (name.split(".")[0] == "metrics" and any(p.startswith("_") for p in name.split(".")))]
    return found


def test_there_are_notebooks():
    assert len(PATHS) >= 3, f"expected the example notebooks in {NOTEBOOKS}"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_stored_without_outputs(path):
    nb = read(path)
    nbformat.validate(nb)
    assert stored_outputs(nb) == [], f"{path.name}: clear the outputs before committing (jupyter nbconvert " \
                                     "--clear-output --inplace)"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_uses_only_the_public_library(path):
    assert private_imports(read(path)) == []


def test_the_checks_catch_a_planted_output_and_import():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("from metrics.evaluate import _private\nimport ui.state", execution_count=1,
                                  outputs=[nbformat.v4.new_output("stream", text="0.5")]),
        nbformat.v4.new_code_cell("import metrics")])
    assert stored_outputs(nb) == ["cell 0"]
    assert private_imports(nb) == ["cell 0: metrics.evaluate._private", "cell 0: ui.state"]


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_runs_in_a_fresh_kernel(path):
    """Executed from its own folder in a new kernel of this interpreter, importing this checkout's
    library (PYTHONPATH), not an installed copy; a failing cell fails the test with its traceback."""
    nb = read(path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    client = NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute(env=env)
    errors = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
              if out.output_type == "error"]
    assert errors == []
    assert sum(cell.cell_type == "code" and bool(cell.outputs) for cell in nb.cells) >= 3

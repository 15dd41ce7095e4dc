# nDCG Lab: `make run` opens the app on the sample data, `make test` runs every check and test.
PYTHON ?= python3
PYTEST_ARGS ?=
# Two pytest-xdist workers (tests/conftest.py groups the work); TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 2

export PYTHON

.PHONY: run test lint docs bench bench-data setup-run setup-test

run: setup-run
	$(PYTHON) -m streamlit run app.py

# The import layers (pyproject.toml, import-linter) and ruff's rules run before the tests.
lint: setup-test
	lint-imports
	$(PYTHON) -m ruff check .
	$(PYTHON) -m mypy

# The documentation site (mkdocs.yml), built strictly: a broken link, a missing page or a docstring
# mkdocstrings cannot read fails the build. Browse it with `mkdocs serve`.
docs: setup-test
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict --quiet --site-dir site

# The project's modules compiled once: PYTHONDONTWRITEBYTECODE=1 would make every server and command
# the tests start compile them again. The 40 slowest tests are listed at the end (the suite's budget
# is 25 minutes on a new machine: the list says where it goes).
test: lint docs
	$(PYTHON) -m compileall -q app.py metrics ndcg_lab
	$(PYTHON) -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=40 $(PYTEST_ARGS)

setup-run:
	bash scripts/setup.sh run

setup-test:
	bash scripts/setup.sh test

bench-data: setup-test
	$(PYTHON) bench/generate.py

bench: bench-data
	$(PYTHON) bench/run.py

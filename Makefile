# Ralph Site: `make run` serves it, `make test` checks it. See README.md.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RALPH_HOST ?= 127.0.0.1
RALPH_PORT ?= 8000
RALPH_WORKERS ?= 2
# A pip constraints file pinning the versions to install (CI: .ci/constraints-oldest.txt, -newest.txt).
CONSTRAINTS ?=
PIP_INSTALL := $(BIN)/python -m pip install --quiet $(if $(CONSTRAINTS),--constraint $(CONSTRAINTS))
export RALPH_HOST RALPH_PORT

.PHONY: run test lint migrations-check bench demo install-run install-dev claude-code claude-code-if-npm

# The stamp files re-install only when pyproject.toml (or the constraints) change, so a second run starts at once.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-run: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(PIP_INSTALL) -e '.[postgres]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(PIP_INSTALL) -e '.[dev]'
	touch $@ $(VENV)/.installed-run

install-run: $(VENV)/.installed-run
install-dev: $(VENV)/.installed-dev

# The Claude Code CLI the end-to-end tests run (tests/claude_code/), pinned with its integrity hashes by
# .ci/claude-code/package-lock.json and installed beside it (git-ignored), never globally.
CLAUDE_CODE_DIR := .ci/claude-code
$(CLAUDE_CODE_DIR)/node_modules/.installed: $(CLAUDE_CODE_DIR)/package.json $(CLAUDE_CODE_DIR)/package-lock.json
	npm ci --prefix $(CLAUDE_CODE_DIR) --no-audit --no-fund --loglevel=error
	touch $@
claude-code: $(CLAUDE_CODE_DIR)/node_modules/.installed

# `make test` runs the Claude Code tests when npm can install the CLI; without npm they skip, saying why.
claude-code-if-npm:
	@if command -v npm >/dev/null; then $(MAKE) -s --no-print-directory claude-code; \
	else echo "npm not found: the Claude Code tests (tests/claude_code/) will be skipped"; fi

run: install-run
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py bootstrap --show-when-ready
	$(BIN)/gunicorn ralphsite.wsgi:application --config python:ralphsite.server.gunicorn_conf

# A simulated Ralph loop driven over the API of the server `make run` started (its printed token).
demo: install-run
	$(BIN)/python -m ralphsite.agents.demo --url http://$(RALPH_HOST):$(RALPH_PORT) --token "$(DEMO_TOKEN)"

# ruff, then the import contract (pyproject.toml's [tool.importlinter]: which layer may import which).
lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

migrations-check: install-dev
	$(BIN)/python manage.py makemigrations --check --dry-run

# CI runs the checks once and the suite in several legs with TEST_CHECKS= (see .ci/run).
# The suite runs on one worker per core, each taking whole test files (PYTEST_WORKERS=0: one process), in
# the order tests/conftest.py gives them (long files first), not xdist's (files with the most tests first).
TEST_CHECKS ?= lint migrations-check
PYTEST_WORKERS ?= auto
test: install-dev claude-code-if-npm $(TEST_CHECKS)
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

bench: install-dev
	$(BIN)/python -m tests.benchmarks.run $(BENCH_ARGS)

# Two entry points: `make run` (demo server) and `make test` (the whole suite).
# With CI=true, `make test` uses the real services: PostgreSQL, Redis and a Celery worker.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
NODE_STAMP := node_modules/.installed-stamp

CI_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/rationale_workbench
CI_BROKER_URL ?= redis://127.0.0.1:6379/13
CI_CACHE_URL ?= redis://127.0.0.1:6379/12
# The suite runs in one process per core (pytest-xdist); each empties its own Redis cache
# database between tests, so each needs one (config/settings/test.py).
CI_CACHE_URL_PER_TEST_WORKER ?= redis://127.0.0.1:6379/12 redis://127.0.0.1:6379/15
TEST_PROCESSES ?= 2
# Tests that must not run side by side (fifty clients at PostgreSQL at once) run in one of
# the processes, one after the other: `--dist loadgroup` with the groups of
# tests/xdist_scheduling.py.
# Coverage's own cost: on Python 3.11 coverage's C trace function adds about 60 % to the CPU
# time of the tests it measures; on Python 3.12 and later its sys.monitoring core
# (COVERAGE_CORE=sysmon) measures the same lines for about 37 %. 125 crowd, review and
# metrics tests in one process, CPU seconds (user + sys, 2026-11-28): 3.11 35.1 without
# coverage, 55.9 with; 3.12 33.0 without, 45.1 with sysmon. CI's suite uses it whenever the
# virtualenv's Python has it (`PYTHON=python3.12 .ci/run` makes a 3.12 virtualenv).
# CI fails when the suite's coverage of the product code falls below this (95 % measured on
# 2026-11-27; the margin absorbs paths that depend on timing).
COVERAGE_FLOOR ?= 93
# Where CI's `make test` appends each step's wall time (.ci/run prints them); empty: nowhere.
CI_TIMINGS ?=
SUITE_LOG ?= /dev/null
# $(call timed,NAME,COMMAND): runs COMMAND, and notes its wall time under NAME in CI_TIMINGS.
timed = @started=$$(date +%s); $(2); status=$$?; \
	[ -z "$(CI_TIMINGS)" ] || printf '%-22s %5d s\n' '$(1)' $$(( $$(date +%s) - started )) >>"$(CI_TIMINGS)"; \
	exit $$status

.PHONY: install node-install run test lint check-migrations typecheck test-js bench-smoke messages vendor docs docs-screenshots dist

# Python caches the bytecode it compiles (the modules installed below are compiled when first
# imported), even where the environment says not to: every process of the suite and of
# `make run` would otherwise compile its imports again.
unexport PYTHONDONTWRITEBYTECODE

# --no-compile: pip would compile every module of every package to bytecode, thousands of
# files of torch and transformers that no process here imports; each module is compiled when
# first imported instead. Installing the models extra took 70 s of CPU with compiling and 16 s
# without (2026-11-28).
$(STAMP): pyproject.toml requirements/constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile \
		-c requirements/constraints.txt -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

run: install docs
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo_setup
	$(BIN)/python manage.py demo_quality
	$(BIN)/python manage.py demo_crowd
	$(BIN)/python manage.py demo_fine_grained
	@# A tiny Transformers model and its explainers' runs, only with the `models` extra (torch):
	@# without it the board offers the bag-of-words explainers, as before.
	@if $(BIN)/python -c "import torch, transformers" 2>/dev/null; then \
		$(BIN)/python manage.py demo_model; \
	else \
		echo "torch is not installed: the model explainers are off (pip install '.[models]' adds them)"; \
	fi
	@echo "Serving on http://127.0.0.1:8000, background jobs in a Celery worker on an embedded broker (.run/)"
	$(BIN)/python manage.py serve 127.0.0.1:8000

# The documentation site (mkdocs.yml): the reference pages generated from the OpenAPI schema
# and the command-line parsers, then the site built strictly into build/docs-site, which
# `make run` serves at /docs/. A broken link or a page left out of the navigation fails.
docs: install
	$(BIN)/python manage.py docs_reference
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The guides' screenshots (docs/images/), taken by the browser walk-through on the demo's
# data (tests/e2e/docs_screenshots.py names the pages). Needs Chromium at /usr/bin/chromium.
# The distributions that install without the platform, as wheels in dist/: the Python client
# (client/, `pip install dist/rationale_workbench_client-*.whl`) and the metrics package.
dist: install
	rm -rf dist client/build rationale_metrics/build
	$(BIN)/python -m pip wheel --quiet --disable-pip-version-check --no-deps \
		--wheel-dir dist ./client ./rationale_metrics
	@ls dist

docs-screenshots: install
	DOCS_SCREENSHOTS=$(CURDIR)/docs/images $(BIN)/python -m pytest -q -p no:cacheprovider \
		tests/e2e/test_walkthrough_a11y.py

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

check-migrations: install
	$(BIN)/python manage.py makemigrations --check --dry-run

# npm ci empties node_modules, so the stamp inside it goes too: a changed lockfile reinstalls.
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

node-install: $(NODE_STAMP)

# TypeScript checks the page scripts' JSDoc types (tsconfig.json) and writes nothing. Only CI's
# `make test` needs it, so that running the suite locally never needs node or npm.
typecheck: $(NODE_STAMP)
	node_modules/.bin/tsc --project tsconfig.json

# The page scripts' pure modules (the workspace's selection, sets, undo, submit retry and
# drafts) under Node's own test runner: node only, no npm packages. CI's `make test` runs it.
test-js:
	node --test tests/frontend/js/*.test.mjs

# The chart library's built file and licence, served from our own static files (no CDN), and
# axe-core's, which only the browser tests inject (never served): after changing a version in package.json, run this and commit the result.
vendor: $(NODE_STAMP)
	cp node_modules/chart.js/dist/chart.umd.min.js node_modules/chart.js/LICENSE.md \
		frontend/static/frontend/vendor/chartjs/
	cp node_modules/axe-core/axe.min.js node_modules/axe-core/LICENSE tests/e2e/vendor/axe-core/

# After changing an interface string: update the catalogs, translate what is new in
# locale/*/LC_MESSAGES/*.po, run it again (it compiles the .mo files) and commit both. Needs
# GNU gettext (Debian: apt-get install gettext); `run` and `test` use the committed .mo files.
messages: install
	$(BIN)/python manage.py translations_update

# Every benchmark script run to its end at a small size (not a timing); CI requires all.
# SMOKE_CHANGED_SINCE=REV (a pull request's base) runs only the scripts that exercise what
# changed since REV.
SMOKE_CHANGED_SINCE ?=
bench-smoke: install
	$(BIN)/python bench/smoke.py $(if $(filter true,$(CI)),--require-all) \
		$(if $(SMOKE_CHANGED_SINCE),--changed-since $(SMOKE_CHANGED_SINCE))

ifeq ($(CI),true)
# The checks, then the suite on the real services over both cores, with coverage measured
# (the figure closes pytest's report). A missing service fails its tests (RW_REQUIRE_SERVICES).
test: install $(NODE_STAMP)
	$(call timed,lint,$(BIN)/ruff check . && $(BIN)/ruff format --check .)
	$(call timed,types,node_modules/.bin/tsc --project tsconfig.json)
	$(call timed,page script tests,$(MAKE) --no-print-directory test-js)
	$(call timed,migrations check,$(BIN)/python manage.py makemigrations --check --dry-run)
	$(call timed,suite,if $(BIN)/python -c 'import sys; sys.exit(sys.hexversion < 0x030C0000)'; then \
		export COVERAGE_CORE=sysmon; fi; \
		export DATABASE_URL=$(CI_DATABASE_URL) CELERY_BROKER_URL=$(CI_BROKER_URL) \
		CACHE_URL=$(CI_CACHE_URL) CACHE_URL_PER_TEST_WORKER="$(CI_CACHE_URL_PER_TEST_WORKER)" \
		RW_REQUIRE_SERVICES=1 && $(BIN)/python -m pytest -p no:cacheprovider --durations=50 \
		-n $(TEST_PROCESSES) --dist loadgroup --cov --cov-report=term:skip-covered --cov-fail-under=$(COVERAGE_FLOOR) \
		| tee "$(SUITE_LOG)")
else
# The SQL fast path (annotate/services/hot_path_sql.py) serves "next" and "submit" with
# PostgreSQL's prepared statements; its differential test against the ORM services needs
# PostgreSQL. The suite runs on SQLite; those tests then run again on a PostgreSQL server
# when one answers at LOCAL_DATABASE_URL, and the output says so when none does.
LOCAL_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/rationale_workbench
SQL_FAST_PATH_TESTS := tests/annotate/test_hot_path_differential.py tests/annotate/test_hot_path_sql.py
test: install
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadgroup
	@if $(BIN)/python tests/postgres_answers.py "$(LOCAL_DATABASE_URL)"; then \
		echo "The SQL fast path's differential tests on PostgreSQL ($(LOCAL_DATABASE_URL)):"; \
		DATABASE_URL="$(LOCAL_DATABASE_URL)" $(BIN)/python -m pytest -q -p no:cacheprovider $(SQL_FAST_PATH_TESTS); \
	else \
		echo "No PostgreSQL answers at $(LOCAL_DATABASE_URL): the SQL fast path's differential tests did not run (set LOCAL_DATABASE_URL, or run CI=true make test)."; \
	fi
endif

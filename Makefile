# The two commands a fresh machine needs: `make run` and `make test` (see README.md).
SHELL := /bin/sh
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
MOTO_PORT ?= 5000

.PHONY: browser run demo test unit integration e2e lint lint-openapi bench bench-api bench-api-search bench-api-relevance install clean package contract compat
STAGE ?= prod

# Two install levels: `make run` needs only the runtime and the local stack (requirements-local.txt);
# the dev tools (requirements-dev.txt) come with the targets that use them. The installer is uv
# (Astral's resolver and installer, pinned here; pip installs it into the virtualenv): it resolves
# and installs every requirement in seconds where pip took about two minutes from a fresh clone,
# and, like `pip --no-compile`, leaves .pyc files to be written lazily for what runs
# (docs/testing.md, "What make test installs"). The virtualenv keeps the pip that `python -m venv`
# puts there: `chalice package` runs it (chalice 1.34 requires pip<26.3).
UV_VERSION := 0.13.9
$(VENV)/.run-installed: requirements.txt requirements-local.txt
	@PYTHON=$$(sh scripts/find-python.sh) || exit 1; \
	  test -x $(PY) || $$PYTHON -m venv $(VENV)
	$(PY) -m pip install --quiet --no-compile "uv==$(UV_VERSION)"
	$(VENV)/bin/uv pip install --quiet --python $(PY) -r requirements-local.txt
	@touch $@

$(VENV)/.installed: $(VENV)/.run-installed requirements-dev.txt
	$(VENV)/bin/uv pip install --quiet --python $(PY) -r requirements-dev.txt
	@touch $@

install: $(VENV)/.installed ## Create the virtualenv (Python 3.13) and install everything

run: $(VENV)/.run-installed ## Start the whole local stack on 127.0.0.1:$(PORT) (Ctrl-C stops it; VERBOSE=1 shows request logs)
	PORT=$(PORT) MOTO_PORT=$(MOTO_PORT) exec $(PY) -m local_stack $(if $(DEMO),--demo,)

demo: $(VENV)/.run-installed ## As `make run`, plus demo users and ~200 approved listings
	PORT=$(PORT) MOTO_PORT=$(MOTO_PORT) exec $(PY) -m local_stack --demo

# Bytecode caching on, whatever the shell says: some machines export PYTHONDONTWRITEBYTECODE=1,
# and then every Python process a target starts (pytest and its xdist workers, each local stack's
# API and moto processes, the benchmarks) compiles every module it imports from source again and
# pytest rewrites every test module again. The .pyc files land in __pycache__/ (git-ignored); `make
# package` builds the bundle with bytecode off and chalicelib/__pycache__ removed first (tests/package
# checks). Measured on such a machine: tests/unit 20.0 s -> 17.6 s.
unexport PYTHONDONTWRITEBYTECODE

# Parallelism of `make test`: unit, integration and end-to-end run side by side (end-to-end's time is
# mostly waiting: receivers, deadlines, the stack's processes; the unit run, one process, used to
# hold both cores' work back for its ~20 s while one core idled). End-to-end runs on E2E_WORKERS pytest-xdist
# workers (whole files per worker, each worker with a stack of its own; the schemathesis contract
# file first, on a worker of its own: tests/e2e/conftest.py). 0 runs a folder in one process.
# INTEGRATION_WORKERS spreads tests/integration the same way (default 2, whole files per worker,
# each worker with an in-process moto of its own; 0: one process). Four pytest processes on two
# cores: integration, CPU-bound, fills the time e2e spends waiting on its stacks and receivers, and
# both cores stay busy after e2e ends (docs/testing.md, "Wall time of make test").
E2E_WORKERS ?= 2
INTEGRATION_WORKERS ?= 2

#: Debian's chromium, driven by the Dashboard's browser tests (installed by apt-get when missing).
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM_PATH := $(CHROMIUM)

browser: ## Install Debian's chromium for the browser tests unless it is there (apt-get, sudo when not root)
	@CHROMIUM=$(CHROMIUM) sh scripts/install-chromium.sh

test: $(VENV)/.installed browser ## Installs what it needs (Python packages, chromium), then every test: unit, integration and end-to-end side by side, with progress and one summary
	@$(PY) scripts/test_tiers.py unit integration e2e

unit: $(VENV)/.installed ## Pure logic, no moto (seconds)
	$(PY) -m pytest -q tests/unit

integration: $(VENV)/.installed ## In-process moto: tables created once per session, emptied before each test
	$(PY) -m pytest -q -n $(INTEGRATION_WORKERS) --dist loadfile tests/integration

e2e: $(VENV)/.installed browser ## The real local stack driven over HTTP (E2E_WORKERS, default 2: files over two workers)
	$(PY) -m pytest -q -n $(E2E_WORKERS) --dist loadfile tests/e2e

# The previous minor release of moto (its latest patch): `make compat` runs the unit and
# integration tiers on it, in a virtualenv of its own under build/ (git-ignored), so a moto upgrade
# stays a version bump and a downgrade is known to work. Tests of the local stack's embedded AWS
# (marker embedded_aws: it replaces parts of the installed moto's internals) are deselected there
# (docs/testing.md, "moto as it ships").
COMPAT_MOTO ?= 5.1.22
COMPAT_VENV := build/compat-venv
COMPAT_PY := $(COMPAT_VENV)/bin/python

$(COMPAT_VENV)/.installed-$(COMPAT_MOTO): requirements.txt requirements-local.txt requirements-dev.txt
	@PYTHON=$$(sh scripts/find-python.sh) || exit 1; \
	  test -x $(COMPAT_PY) || $$PYTHON -m venv $(COMPAT_VENV)
	$(COMPAT_PY) -m pip install --quiet --no-compile "uv==$(UV_VERSION)"
	$(COMPAT_VENV)/bin/uv pip install --quiet --python $(COMPAT_PY) -r requirements-dev.txt
	$(COMPAT_VENV)/bin/uv pip install --quiet --python $(COMPAT_PY) "moto[dynamodb,sqs,dynamodbstreams]==$(COMPAT_MOTO)"
	rm -f $(COMPAT_VENV)/.installed-*
	@touch $@

compat: $(COMPAT_VENV)/.installed-$(COMPAT_MOTO) ## The unit and integration tiers on the previous minor release of moto (COMPAT_MOTO, in build/compat-venv)
	@$(COMPAT_PY) -c "import importlib.metadata as m; v = m.version('moto'); print('moto', v); assert v == '$(COMPAT_MOTO)', v"
	$(COMPAT_PY) -m pytest -q -m "not embedded_aws" tests/unit
	$(COMPAT_PY) -m pytest -q -m "not embedded_aws" -n $(INTEGRATION_WORKERS) --dist loadfile tests/integration

lint: $(VENV)/.installed ## ruff, mypy (strict for chalicelib/ and the rule tests' fakes), the import contracts, moto/botocore through their public API only, and dead code (pyproject.toml)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-logo
	$(PY) scripts/check_public_imports.py
	$(VENV)/bin/vulture  # every function, class, method and attribute has a user (vulture_whitelist.py: framework entry points)

package: $(VENV)/.installed ## SAM template + bundle of STAGE (default prod) in out/, checked by cfn-lint and tests/package
	@# app.py reads its event sources' ARNs at import: the template's placeholder names stand in for them
	env $$($(PY) -m local_stack.resources) $(PY) infra/build_template.py --check
	rm -rf out
	find chalicelib -name __pycache__ -type d -prune -exec rm -rf {} +  # chalice bundles chalicelib/ as it finds it
	env $$($(PY) -m local_stack.resources) PYTHONDONTWRITEBYTECODE=1 AWS_DEFAULT_REGION=$${AWS_DEFAULT_REGION:-us-east-1} \
	  $(VENV)/bin/chalice package --stage $(STAGE) --merge-template infra/resources.json out/
	PACKAGED_DIR=out $(PY) -m pytest -q tests/package  # cfn-lint, the merge and the bundle

#: Redocly CLI, pinned; npx fetches it from the npm registry on first use.
REDOCLY := @redocly/cli@2.77.0

lint-openapi: $(VENV)/.installed ## Redocly lint (recommended rules, every warning an error) of the generated OpenAPI document
	$(PY) scripts/write_openapi.py build/openapi.json
	npx --yes $(REDOCLY) lint build/openapi.json --config redocly.yaml

contract: $(VENV)/.installed ## Contract fuzzing, deeper than make test's: schemathesis against the local stack, 15 random cases per operation and phase
	SCHEMATHESIS_MAX_EXAMPLES=$${SCHEMATHESIS_MAX_EXAMPLES:-15} $(PY) -m pytest -q -s tests/e2e/test_contract.py

#: Sizes of the three search benchmarks in `make bench` (CI: 2 cores; search and relevance, side by
#: side, take about half an hour, most of CI's benchmark time); the full sizes are in docs/benchmarks.md.
BENCH_SEARCH_FLAGS ?= --sizes 80,240 --baseline ''
BENCH_RELEVANCE_FLAGS ?= --newer 100 --baseline ''
BENCH_FRESHNESS_FLAGS ?= --listings 100 --baseline '' --cap-seconds 120

#: The two benchmarks that load realistic listings through the API (most of their time waits on
#: their own one-request-at-a-time embedded AWS) run side by side, each on ports of its own; their
#: budgets are counts and scores, never times. `--output-sync` prints each one's output whole.
bench-api: bench-api-search bench-api-relevance

bench-api-search: $(VENV)/.installed
	BENCH_PORTS=8700-8749 $(PY) bench/search.py --check $(BENCH_SEARCH_FLAGS)

bench-api-relevance: $(VENV)/.installed
	BENCH_PORTS=8750-8799 $(PY) bench/relevance.py --check $(BENCH_RELEVANCE_FLAGS)

bench: $(VENV)/.installed ## Benchmarks with their budgets checked
	@# search, relevance, freshness: realistic listings through the API (CI: this tree only; the before/after
	@# runs against fe1e507 are docs/benchmarks.md's full-size commands);
	@# their PENDING budgets are printed, enforced with --pending (docs/benchmarks.md)
	$(MAKE) --no-print-directory -j2 --output-sync=target bench-api
	$(PY) bench/search_model.py --check
	$(PY) bench/relevance.py --check --in-memory --newer 100 --totals 20000
	$(PY) bench/freshness.py --check $(BENCH_FRESHNESS_FLAGS)
	$(PY) bench/requests.py --check
	$(PY) bench/webhooks.py --check
	$(PY) bench/saved_searches.py --check
	$(PY) bench/cold_start.py --check
	$(PY) bench/hot_keys.py --check
	$(PY) bench/records.py --check

clean:
	rm -rf $(VENV) $(COMPAT_VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache out

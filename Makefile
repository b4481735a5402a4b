# Two entry points (see README): `make demo` and `make test`. Both set up the venv when needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench bench-smoke setup fuzz compat

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/fakeapi demo

# import-linter builds its graph from the package tree on disk; in the editable install the
# mapped packages (fakeapi.scheduler, fakeapi.fixtures) are invisible there, so the contracts
# are checked against a real install of the package into build/.
LINT_INSTALL := build/lint-install

lint: $(STAMP)
	$(BIN)/ruff check .
	rm -rf $(LINT_INSTALL)
	$(BIN)/python -m pip install --quiet --no-deps --target $(LINT_INSTALL) . 2>/dev/null
	cd $(LINT_INSTALL) && $(abspath $(BIN))/lint-imports --config $(CURDIR)/pyproject.toml

# The suite runs on two xdist workers, then the benchmarks' smokes (bench-smoke) run; either
# failing fails `make test`, and the smokes run whatever the suite's outcome.  Beside the suite
# (niced) the smokes took ~20-27 s of the suite's wall time: on this project's 2-core machine
# (2026-12-03, 4,163 tests) the suite alone took 141-167 s and 167-187 s beside them, depending
# on the hour; after it, two at a time, they take ~50 s (most of it starting Python processes).
# --dist worksteal: xdist's default (load) sends each worker a first batch of an eighth of the
# suite in collection order and never takes back what it sent; the first batch held all of
# tests/e2e, the slowest files, and its worker ran on alone for up to 35 s.  With worksteal a
# worker that runs out takes half of what the other has queued.

# The checkout's bytecode is written first (compileall writes it even under PYTHONDONTWRITEBYTECODE):
# without it every Python process the tests and smokes start (each `fakeapi serve`, benchmark and
# benchmark child, ~80 in all) compiled fakeapi again, ~0.25 s of CPU each.  checked-hash: a .pyc
# is used only while its source's hash matches, whatever the file times say.
#
# Each xdist worker collects the whole suite, and pytest's assertion rewriting of the ~230 test
# modules was ~7 s of each worker's ~17 s of CPU there: one collection run beside lint (which
# leaves a core idle) writes the rewritten bytecode first, and the workers read it (pytest reads
# it whatever PYTHONDONTWRITEBYTECODE says, and writes it only where that is unset).
test: $(STAMP)
	@$(BIN)/python -m compileall -q --invalidation-mode checked-hash fakeapi scheduler fixtures bench
	@PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest --collect-only -q > /dev/null 2>&1 & primed=$$!; \
	$(MAKE) --no-print-directory lint; linted=$$?; wait $$primed; test $$linted -eq 0
	@$(BIN)/python -m pytest -q -n 2 --dist worksteal; tests=$$?; \
	$(MAKE) --no-print-directory bench-smoke; smoked=$$?; test $$tests -eq 0 -a $$smoked -eq 0

# The suite fuzzes every operation of the OpenAPI documents once (fixed seed); this runs 50
# generated requests per operation (over 20,000 in all, some 15 minutes on 2 busy cores),
# without the suite's 90 s per test: the core group alone takes minutes.
fuzz: $(STAMP)
	FAKEAPI_FUZZ_EXAMPLES=50 $(BIN)/python -m pytest -q --timeout=0 tests/integration/api/test_fuzz.py

# Every benchmark script, found by name so that a new one is included without editing this file.
BENCH_SCRIPTS = $(sort $(wildcard bench/bench_*.py))

# The `bench` extra brings matplotlib for bench_scaling's plot.
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	set -e; for script in $(BENCH_SCRIPTS); do $(BIN)/python $$script; done

# Each benchmark's --quick mode, so that none rots: two at a time (one per core; ~50 s where one
# after the other took ~90 s), every script runs even after a failure (-k), and any failure fails
# the target (and `make test`), printing that script's output.
SMOKES := $(BENCH_SCRIPTS:bench/%.py=smoke-%)
.PHONY: $(SMOKES)

bench-smoke: $(STAMP)
	@$(MAKE) --no-print-directory --output-sync=target -k -j 2 $(SMOKES) || { echo "bench smoke failed"; exit 1; }

$(SMOKES): smoke-%:
	@start=$$(date +%s%N); \
	if out=$$($(BIN)/python bench/$*.py --quick 2>&1); then \
	  echo "bench smoke: bench/$*.py --quick ok in $$(( ($$(date +%s%N) - start) / 1000000 )) ms"; \
	else echo "$$out"; echo "bench smoke: bench/$*.py --quick FAILED"; exit 1; fi

# kr8s's own test suite (the kr8s/tests its wheel ships) against `fakeapi serve --secure`, with
# tests/compat/kr8s/fakeapi_kr8s.py in place of the kind conftest the wheel lacks.  Not in `make test`
# (about three minutes); the README's compatibility section lists the result.
KR8S = $$($(abspath $(BIN))/python -c 'import kr8s, os; print(os.path.dirname(kr8s.__file__))')

compat: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,compat]'
	cd tests/compat/kr8s && PYTHONPATH=. $(abspath $(BIN))/python -m pytest -c pytest.ini --rootdir "$(KR8S)" "$(KR8S)/tests"

# Two entry points (see README): `make demo` and `make test`. Both set up the venv when needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench setup fuzz compat

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

test: lint
	$(BIN)/python -m pytest -q

# The suite fuzzes every operation of the OpenAPI documents once (fixed seed); this runs 50
# generated requests per operation (about 18,000 in all, some 15 minutes on 2 busy cores).
fuzz: $(STAMP)
	FAKEAPI_FUZZ_EXAMPLES=50 $(BIN)/python -m pytest -q tests/integration/api/test_fuzz.py

bench: $(STAMP)
	$(BIN)/python bench/bench_api.py
	$(BIN)/python bench/bench_allocator.py
	$(BIN)/python bench/bench_cel.py
	$(BIN)/python bench/bench_secure.py
	$(BIN)/python bench/bench_scheduler.py
	$(BIN)/python bench/bench_memory.py
	$(BIN)/python bench/bench_connections.py
	$(BIN)/python bench/bench_fixtures.py

# kr8s's own test suite (the kr8s/tests its wheel ships) against `fakeapi serve --secure`, with
# tests/compat/kr8s/fakeapi_kr8s.py in place of the kind conftest the wheel lacks.  Not in `make test`
# (about three minutes); the README's compatibility section lists the result.
KR8S = $$($(abspath $(BIN))/python -c 'import kr8s, os; print(os.path.dirname(kr8s.__file__))')

compat: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,compat]'
	cd tests/compat/kr8s && PYTHONPATH=. $(abspath $(BIN))/python -m pytest -c pytest.ini --rootdir "$(KR8S)" "$(KR8S)/tests"

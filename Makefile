# `make demo` and `make test` work on a fresh clone: they create .venv when missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.tfdiag-installed
export TF_CPP_MIN_LOG_LEVEL := 3

.PHONY: demo test test-fast test-corpus lint bench-overhead bench-accuracy bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[tf-keras,dev,plot]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m tfdiag demo

bench: $(STAMP)
	$(PY) -m tfdiag bench --quick

test: $(STAMP)
	$(PY) -m pytest -m "not slow"

test-fast: $(STAMP)
	$(PY) -m pytest -m "not tf"

test-corpus: $(STAMP)
	$(PY) -m pytest -m corpus

lint: $(STAMP)
	$(PY) -m ruff check tfdiag tests examples
	$(PY) -m ruff format --check tfdiag tests examples
	$(PY) -m mypy

bench-overhead: $(STAMP)
	$(PY) benchmarks/overhead.py

bench-accuracy: $(STAMP)
	$(PY) benchmarks/accuracy.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache

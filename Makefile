# `make demo` and `make test` work on a fresh clone: they create .venv when missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.tfdiag-installed
export TF_CPP_MIN_LOG_LEVEL := 3

.PHONY: demo test test-fast test-corpus lint bench-overhead bench-accuracy bench clean browser

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[tf-keras,dev,plot,jax]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m tfdiag demo

bench: $(STAMP)
	$(PY) -m tfdiag bench --quick

# tests/test_browser.py opens the HTML pages in headless Chromium (Debian's package): installed
# here when missing, so `make test` works as written on a fresh machine of this kind (root).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing chromium for the browser tests (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Keras picks its backend once per process: tests/on_jax/ runs in a second pytest process with
# KERAS_BACKEND=jax (the first one leaves tests/on_jax/ out). Both halves always run; make
# fails after both when either failed.
test: $(STAMP) browser
	@status=0; \
	$(PY) -m pytest -m "not slow" || status=1; \
	KERAS_BACKEND=jax $(PY) -m pytest -m "not slow" tests/on_jax || status=1; \
	exit $$status

test-fast: $(STAMP)
	$(PY) -m pytest -m "not tf"

test-corpus: $(STAMP)
	@status=0; \
	$(PY) -m pytest -m corpus || status=1; \
	KERAS_BACKEND=jax $(PY) -m pytest -m corpus tests/on_jax || status=1; \
	exit $$status

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

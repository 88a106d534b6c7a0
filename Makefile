# Two commands on a fresh machine: `make demo` and `make test`.
# Each creates .venv if missing and installs glyphbench with its dev extras first.
SHELL := bash
PYTHON ?= python3
space := $(subst ,, )
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.glyphbench-installed

.PHONY: install test quick lint demo bench gpu-carry gpu-check npm-tools clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# mypy and lint-imports find a package by its folders, and glyphbench's are apart: bench/ is the
# package and prompts/, vae_eval/ and human_eval/ are mounted in it (pyproject's package-dir).
# They read a tree of links laid out as the wheel is, rebuilt at each lint so new files count;
# mypy's paths are mapped back to the repository's.
LINT_TREE := build/lint-tree
MOUNTED := prompts vae_eval human_eval

## Style, types, and the layer contracts of pyproject.toml (rooms in order, no import cycle).
lint: $(STAMP)
	$(BIN)/ruff check .
	rm -rf $(LINT_TREE) && mkdir -p $(LINT_TREE)
	cp -rs $(CURDIR)/bench $(LINT_TREE)/glyphbench
	for room in $(MOUNTED); do cp -rs $(CURDIR)/$$room $(LINT_TREE)/glyphbench/$$room; done
	set -o pipefail; $(BIN)/mypy | sed -E 's#^$(LINT_TREE)/glyphbench/($(subst $(space),|,$(MOUNTED)))/#\1/#; s#^$(LINT_TREE)/glyphbench/#bench/#'
	PYTHONPATH=$(LINT_TREE) $(BIN)/lint-imports

# The page checkers the report tests run (tests/bench/report/test_report_a11y_tools.py): axe-core and
# html-validate at the exact versions of .ci/npm/package-lock.json, installed into build/npm
# (never the repository's root). Optional: without them those tests skip, saying why;
# .ci/run installs them where npm is found.
NPM_DIR := build/npm
NPM_STAMP := $(NPM_DIR)/node_modules/.package-lock.json

$(NPM_STAMP): .ci/npm/package.json .ci/npm/package-lock.json
	mkdir -p $(NPM_DIR)
	cp .ci/npm/package.json .ci/npm/package-lock.json $(NPM_DIR)/
	npm ci --prefix $(NPM_DIR) --no-audit --no-fund

## axe-core and html-validate for the report tests (needs npm and the npm registry, once).
npm-tools: $(NPM_STAMP)

# Tests run in two worker processes (pytest-xdist), one per core of the project's machine.
JOBS ?= 2

## Full suite: lint, type-check, then every test (slow ones included).
test: lint
	$(BIN)/python -m pytest -n $(JOBS)

## The quick loop: skips tests marked slow (about 2 minutes on 2 cores, 2026-11-28; target 3).
quick: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" -x -q -n $(JOBS)

## The main job on its embedded default, offline on CPU.
demo: $(STAMP)
	$(BIN)/glyphbench demo --out demo_out

## Performance benchmarks (run on demand; they print ratios, they do not fail).
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_scoring.py --baseline-pairs 20000
	$(BIN)/python benchmarks/bench_report.py
	$(BIN)/python benchmarks/bench_harness.py
	$(BIN)/python benchmarks/bench_ocr.py
	$(BIN)/python benchmarks/bench_pipeline.py
	$(BIN)/python benchmarks/bench_gpu_proxy.py
	$(BIN)/python benchmarks/bench_vae.py

## On a lent GPU machine: harness/bare at the two settings of the H200 figures and every GPU-only path,
## within a 7.5-minute budget (what does not fit is skipped, saying so), no hub (benchmarks/gpu_check.py; GPU_CHECK_ARGS=--reduced runs it on CPU).
## No dependency install: a GPU machine may have no network; the venv's Python if there is
## one. Where glyphbench itself is not importable, it is installed editable, offline, alone.
## The packages a bare CUDA image lacks travel as build/gpu-carry/site.tar.xz (`make gpu-carry`
## here, then carry build/gpu-carry): gpu-check unpacks it onto PYTHONPATH when it is there.
GPU_CHECK_JSON ?= gpu_check.json
GPU_PYTHON ?= $(if $(wildcard $(BIN)/python),$(CURDIR)/$(BIN)/python,$(PYTHON))
GPU_CARRY := build/gpu-carry/site.tar.xz
GPU_SITE := /tmp/glyphbench-gpu-site
GPU_ENV := $(if $(wildcard $(GPU_CARRY)),PYTHONPATH=$(GPU_SITE)$${PYTHONPATH:+:$$PYTHONPATH})
gpu-carry:
	bash benchmarks/gpu_carry.sh $(GPU_CARRY)

gpu-check:
	if [ -f $(GPU_CARRY) ]; then mkdir -p $(GPU_SITE) && tar -xJf $(GPU_CARRY) -C $(GPU_SITE); fi
	cd /tmp && $(GPU_ENV) $(GPU_PYTHON) -c 'import glyphbench' 2>/dev/null || \
	  $(GPU_PYTHON) -m pip install -q --no-deps --no-build-isolation --no-index -e $(CURDIR)
	$(GPU_ENV) $(GPU_PYTHON) benchmarks/gpu_check.py --json $(GPU_CHECK_JSON) $(GPU_CHECK_ARGS)

clean:
	rm -rf $(VENV) build demo_out .pytest_cache .mypy_cache .ruff_cache

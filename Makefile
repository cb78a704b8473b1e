# Set-up on a fresh machine: `make demo` and `make test` create .venv on first use and reuse it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# The stamp is rebuilt whenever pyproject.toml changes, so the venv follows the dependencies.
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow test-fuzz test-fuzz-models bench docs reproduce-synthetic reproduce-realistic clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m elcvx demo

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow

test-fuzz: $(STAMP)
	$(PY) -m pytest -q -m slow tests/test_fuzz.py -s

# Issue 24's random constrained models, helpers and differences on all three methods.
test-fuzz-models: $(STAMP)
	$(PY) -m pytest -q -m slow tests/test_fuzz_models.py -s

docs: $(STAMP)
	$(PY) -m mkdocs build --strict

reproduce-synthetic: $(STAMP)
	$(PY) -m elcvx reproduce synthetic --out docs/synthetic

.PHONY: reproduce-calibration
# The committed run: all 10,000 draws only where chi2 undercovers (the bootstrap's cost).
reproduce-calibration: $(STAMP)
	$(PY) -m elcvx reproduce calibration --replicates 10000 --replicates-at 10=300 20=300 50=300 \
	  100=300 200=300 500=300 1000=300 2000=300 5000=300 10000=300 20000=300 50000=1000 \
	  200000=1000 1000000=1000 --jobs 2 --out docs/synthetic

.PHONY: reproduce-constraints
reproduce-constraints: $(STAMP)
	$(PY) -m elcvx reproduce constraints --out docs/constraints

.PHONY: reproduce-sequences
reproduce-sequences: $(STAMP)
	$(PY) -m elcvx reproduce sequences --out docs/sequences

# The realistic study's datasets: ../shared/data/openml when present (an offline copy, checked
# against the manifest without the network), else data/openml, downloaded from openml.org.
DATA_DIR ?= $(if $(wildcard ../shared/data/openml/*.csv.gz),../shared/data/openml,data/openml)

reproduce-realistic: $(STAMP)
	$(PY) -m elcvx datasets fetch --dir $(DATA_DIR)
	$(PY) -m elcvx reproduce realistic --data-dir $(DATA_DIR) --tables ope,ci --jobs 1 --out docs/realistic

bench: $(STAMP)
	$(PY) benchmarks/bench_core.py

.PHONY: bench-stream
bench-stream: $(STAMP)
	$(PY) benchmarks/bench_stream.py --n 1e7

# 1e8 rows in Parquet under /work/scale-data (about 1 GB, written once), streamed and through Dask.
.PHONY: bench-scale
bench-scale: $(STAMP)
	$(PY) benchmarks/bench_scale.py

.PHONY: bench-cvxpy
bench-cvxpy: $(STAMP)
	$(PY) benchmarks/bench_cvxpy.py

# The tables of docs/performance.md, written again (about 15 minutes on 2 cores, most of it the
# cvxpy path at N = 1e5).
.PHONY: bench-docs
bench-docs: $(STAMP)
	$(PY) benchmarks/bench_core.py --write-docs
	$(PY) benchmarks/bench_cvxpy.py --write-docs
	$(PY) benchmarks/bench_formulations.py --samples 100 --write-docs

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .hypothesis

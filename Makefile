# Set-up on a fresh machine: `make demo` and `make test` create .venv on first use and reuse it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# What is installed into .venv, one stamp per set of extras, each rebuilt whenever pyproject.toml
# changes (so the venv follows the dependencies): .installed is elcvx alone (`make demo`),
# .installed-test what the default tests need (`make test`), .installed-X that plus extra X.
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow test-fuzz test-fuzz-models test-all test-spark test-dask test-vw test-docs \
	test-types test-notebook bench docs reproduce-synthetic reproduce-realistic clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

$(VENV)/.installed-%: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test,$*]'
	touch $@

demo: $(STAMP)
	$(PY) -m elcvx demo

test: $(VENV)/.installed-test
	$(PY) -m pytest -q -m "not slow"

test-slow: $(VENV)/.installed-dev
	$(PY) -m pytest -q -m slow

test-fuzz: $(VENV)/.installed-test
	$(PY) -m pytest -q -m slow tests/fast/test_fuzz.py -s

# Every test but the slow ones, with every extra installed (nothing skipped for a missing package).
test-all: $(VENV)/.installed-dev
	$(PY) -m pytest -q -m "not slow"

# The heavy stacks, each with the tests that need it.
test-spark: $(VENV)/.installed-spark
	$(PY) -m pytest -q -m "not slow" tests/docs/test_spark.py

test-dask: $(VENV)/.installed-dask
	$(PY) -m pytest -q -m "not slow" tests/io/test_dask.py "tests/docs/test_docs.py::test_page[docs/out-of-core.md]"

test-vw: $(VENV)/.installed-vw
	$(PY) -m pytest -q -m "not slow" tests/public/test_learning.py tests/studies/test_realistic.py \
	  tests/studies/test_rho_study.py tests/public/test_learn_example.py

test-docs: $(VENV)/.installed-docs
	$(PY) -m pytest -q -m "not slow" tests/docs/test_docs.py tests/docs/test_docs_site.py

# mypy, run from a temporary folder: a user's script against the installed elcvx (no PYTHONPATH),
# and elcvx itself with pyproject's [tool.mypy] (the flags of --strict on the public modules).
test-types: $(VENV)/.installed-typing
	$(PY) -m pytest -q tests/docs/test_types.py tests/docs/test_practitioner.py::test_a_users_script_type_checks

test-notebook: $(VENV)/.installed-notebook
	$(PY) -m pytest -q tests/docs/test_examples.py -k notebook

# Random moment-constrained models, helpers and differences on all three methods, against a
# reference written from the definitions (tests/public/test_fuzz_models.py).
test-fuzz-models: $(VENV)/.installed-test
	$(PY) -m pytest -q -m slow tests/public/test_fuzz_models.py -s

# The standing validity suite: every lower bound against laws with exact values, N = 20 ... 10,000,
# 1,000 logs per cell (docs/validity.md); exits 1 naming each cell where a bound breaks its
# promise. Resumes from docs/validity/cells.jsonl (delete it to start afresh).
.PHONY: test-validity
test-validity: $(STAMP)
	$(PY) -m elcvx reproduce validity --out docs/validity --logs 1000 --jobs 2

docs: $(VENV)/.installed-docs
	$(PY) -m mkdocs build --strict

reproduce-synthetic: $(VENV)/.installed-plot
	$(PY) -m elcvx reproduce synthetic --out docs/synthetic

.PHONY: reproduce-calibration
# The committed run: all 10,000 draws only where chi2 undercovers (the bootstrap's cost).
reproduce-calibration: $(VENV)/.installed-plot
	$(PY) -m elcvx reproduce calibration --replicates 10000 --replicates-at 10=300 20=300 50=300 \
	  100=300 200=300 500=300 1000=300 2000=300 5000=300 10000=300 20000=300 50000=1000 \
	  200000=1000 1000000=1000 --jobs 2 --out docs/synthetic

.PHONY: reproduce-constraints
reproduce-constraints: $(VENV)/.installed-plot
	$(PY) -m elcvx reproduce constraints --out docs/constraints

.PHONY: reproduce-sequences
reproduce-sequences: $(VENV)/.installed-plot
	$(PY) -m elcvx reproduce sequences --out docs/sequences

# The pessimism and selection studies' datasets: ../shared/data/pessimism when present (an
# offline copy, checked against the bundled manifest without the network), else data/pessimism,
# downloaded from openml.org by `elcvx datasets fetch --set pessimism` (the 'data' extra).
PESSIMISM_DIR ?= $(if $(wildcard ../shared/data/pessimism/*.csv.gz),../shared/data/pessimism,data/pessimism)
# Downloading needs scikit-learn (the 'data' extra); checking the offline copy does not.
PESSIMISM_DEPS := $(if $(filter data/pessimism,$(PESSIMISM_DIR)),$(VENV)/.installed-data)

.PHONY: reproduce-pessimism
# The LS paper's tightness protocol: 5 datasets x 45 configurations x 10 logs (docs/pessimism.md).
reproduce-pessimism: $(STAMP) $(PESSIMISM_DEPS)
	$(PY) -m elcvx datasets fetch --set pessimism --dir $(PESSIMISM_DIR)
	$(PY) -m elcvx reproduce pessimism --data-dir $(PESSIMISM_DIR) --jobs 2 --out docs/pessimism

.PHONY: reproduce-selection
# The LS paper's policy-selection protocol: 5 datasets x 10 trials, 50,000 gradient-ascent steps
# per trained candidate (docs/selection.md).
reproduce-selection: $(VENV)/.installed-plot $(PESSIMISM_DEPS)
	$(PY) -m elcvx datasets fetch --set pessimism --dir $(PESSIMISM_DIR)
	$(PY) -m elcvx reproduce selection --data-dir $(PESSIMISM_DIR) --jobs 1 --out docs/selection

# The realistic study's datasets: ../shared/data/openml when present (an offline copy, checked
# against the manifest without the network), else data/openml, downloaded from openml.org.
DATA_DIR ?= $(if $(wildcard ../shared/data/openml/*.csv.gz),../shared/data/openml,data/openml)

reproduce-realistic: $(VENV)/.installed-dev
	$(PY) -m elcvx datasets fetch --set openml --dir $(DATA_DIR)
	$(PY) -m elcvx reproduce realistic --data-dir $(DATA_DIR) --tables ope,ci --jobs 1 --out docs/realistic

bench: $(STAMP)
	$(PY) benchmarks/bench_core.py
	$(PY) benchmarks/bench_speed.py

.PHONY: bench-stream
bench-stream: $(VENV)/.installed-io
	$(PY) benchmarks/bench_stream.py --n 1e7

# 1e8 rows in Parquet under ~/.cache/elcvx/scale-data (about 1 GB, written once), streamed and
# through Dask.
.PHONY: bench-scale
bench-scale: $(VENV)/.installed-dask
	$(PY) benchmarks/bench_scale.py

# One hash of every bit of the answers on 60 random logs, on each kernel: a refactoring that
# claims "numbers unchanged" shows the same two lines before and after.
.PHONY: fingerprint
fingerprint: $(STAMP)
	ELCVX_KERNELS=numpy $(PY) benchmarks/fingerprint.py
	ELCVX_KERNELS=numba $(PY) benchmarks/fingerprint.py

.PHONY: bench-cvxpy
bench-cvxpy: $(STAMP)
	$(PY) benchmarks/bench_cvxpy.py

# The tables of docs/performance.md, written again (about 15 minutes on 2 cores, most of it the
# cvxpy path at N = 1e5).
.PHONY: bench-docs
bench-docs: $(STAMP)
	$(PY) benchmarks/bench_core.py --write-docs
	$(PY) benchmarks/bench_speed.py --write-docs
	$(PY) benchmarks/bench_cvxpy.py --write-docs
	$(PY) benchmarks/bench_formulations.py --samples 100 --write-docs

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .hypothesis

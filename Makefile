# dpclaims — two commands: `make test` and `make run`. Both install the system
# BLAS/LAPACK first when it is missing (Debian; needs root or sudo).
SHELL := /bin/bash
CARGO ?= cargo
# Tests run in parallel already; one BLAS thread each keeps them from oversubscribing.
TEST_ENV := OPENBLAS_NUM_THREADS=1 CI=true INSTA_UPDATE=no
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Where cargo builds (honours CARGO_TARGET_DIR, as cargo does).
TARGET := $(or $(CARGO_TARGET_DIR),target)
BIN := $(TARGET)/release/dpclaims
# Extra flags of `make run`, e.g. RUN_FLAGS="--junit target/dpclaims-junit.xml" in CI.
RUN_FLAGS ?=

.PHONY: deps build test run reproduce faults report fig2 bench lint fmt clean audit-report privacy-report fuzz stability schema opacus-example mutants mutants-report time-to-red

deps:
	@if dpkg -s libopenblas-dev liblapack-dev >/dev/null 2>&1; then \
	  echo "deps: libopenblas-dev and liblapack-dev present"; \
	else \
	  echo "deps: installing libopenblas-dev liblapack-dev"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq libopenblas-dev liblapack-dev; \
	fi
	@# The reference cores of examples/external/ run under `python3` (the first on PATH)
	@# and need numpy: Debian's python3-numpy when missing; if the PATH python3 is not
	@# Debian's (pyenv, conda) it still lacks numpy then, and pip installs it there.
	@if python3 -c 'import numpy' >/dev/null 2>&1; then \
	  echo "deps: numpy present for $$(command -v python3)"; \
	else \
	  echo "deps: installing python3-numpy"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-numpy; \
	  if ! python3 -c 'import numpy' >/dev/null 2>&1; then \
	    echo "deps: $$(command -v python3) is not Debian's python3: pip install numpy"; \
	    python3 -m pip install -q numpy; \
	  fi; \
	fi
	@# The tests of the Python adapter (python/, run by `make test`) need pytest: Debian's
	@# python3-pytest when missing, else pip for a python3 that is not Debian's.
	@if python3 -c 'import pytest' >/dev/null 2>&1; then \
	  echo "deps: pytest present for $$(command -v python3)"; \
	else \
	  echo "deps: installing python3-pytest"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-pytest; \
	  if ! python3 -c 'import pytest' >/dev/null 2>&1; then \
	    echo "deps: $$(command -v python3) is not Debian's python3: pip install pytest"; \
	    python3 -m pip install -q pytest; \
	  fi; \
	fi

build: deps
	$(CARGO) build --release --locked

# The tool's tests. The claim suite itself (verdicts and the regression baseline) is
# `make run`'s; CI (.ci/run) runs both, `make run` with --require-baseline.
test: deps
	$(TEST_ENV) $(CARGO) test --release --locked
	@# The reference external cores (numpy) at the quick profile: the correct cores hold,
	@# the faulty ones are caught (exit 1 otherwise); about 15 s.
	OPENBLAS_NUM_THREADS=1 $(BIN) run examples/external --no-reports --check-determinism
	@# The Python adapter's own tests (python/tests; a few seconds), end to end with the
	@# binary just built.
	DPCLAIMS_BIN=$(BIN) python3 -m pytest -q -rs python/tests
	@# The mutation-testing driver's own tests (scripts/tests: toy tree, stand-in sbatch).
	python3 -m pytest -q -rs scripts/tests

# The worked example on a real DP library (examples/opacus/README.md): Opacus 1.6 on
# PyTorch, CPU; about 1-2 minutes once installed. Never a dependency of `make test`.
# pip installs torch, opacus and numpy into its own venv (OPACUS_VENV) the first time:
# PyPI's torch wheel pulls its CUDA libraries, 3-4 GB to download (5.5 GB installed),
# though the example runs on CPU; PyTorch's CPU-only index (download.pytorch.org) was
# unreachable where this was written. OPACUS_PYTHON=/path/to/python uses a python that
# has them instead (e.g. a venv with torch from the CPU-only index).
OPACUS_VENV := $(or $(CARGO_TARGET_DIR),target)/opacus-venv
OPACUS_PYTHON ?=
OPACUS_PY = $(or $(OPACUS_PYTHON),$(OPACUS_VENV)/bin/python)
opacus-example: build
	@if [ -n "$(OPACUS_PYTHON)" ]; then \
	  $(OPACUS_PYTHON) -c 'import torch, opacus, numpy' || \
	    { echo "opacus-example: OPACUS_PYTHON=$(OPACUS_PYTHON) lacks torch, opacus or numpy"; exit 2; }; \
	elif ! $(OPACUS_VENV)/bin/python -c 'import torch, opacus, numpy' >/dev/null 2>&1; then \
	  echo "opacus-example: pip install torch opacus==1.6.0 numpy into $(OPACUS_VENV) (PyPI's torch: 3-4 GB with its CUDA libraries)"; \
	  python3 -m venv $(OPACUS_VENV) && \
	  $(OPACUS_VENV)/bin/python -m pip install -q torch opacus==1.6.0 numpy; \
	fi
	DPCLAIMS_OPACUS_PYTHON=$(if $(findstring /,$(OPACUS_PY)),$(abspath $(OPACUS_PY)),$(OPACUS_PY)) \
	  OPENBLAS_NUM_THREADS=1 $(BIN) run examples/opacus --no-baseline \
	  --out $(or $(CARGO_TARGET_DIR),target)/dpclaims/opacus

run: build
	$(BIN) run --profile quick --out reports $(RUN_FLAGS)

# The report bytes do not depend on the machine's BLAS kernels (issue 34, item 4;
# docs/user-guide.md, "Reports"). First the committed verdicts are judged again from the
# committed CSVs (tests/report_numbers.rs); then the quick suite run as `make run` runs it, but with
# OpenBLAS forced to its generic kernels (OPENBLAS_CORETYPE=Prescott, safe on every
# x86-64; the one place that sets it) and without the result cache (every unit computed
# again), into $(REPRO_DIR); then every file it wrote (raw/ aside: the raw f64, not
# committed) must be byte-identical to the committed one in reports/. About as long as a
# cold `make run`.
REPRO_DIR := $(or $(CARGO_TARGET_DIR),target)/reproduce
reproduce: build
	@# First: every committed verdict follows from the committed (rounded) CSVs.
	$(TEST_ENV) $(CARGO) test --release --locked --test tests -- --ignored every_verdict_recomputes_from_the_committed_csv
	rm -rf $(REPRO_DIR)
	OPENBLAS_CORETYPE=Prescott $(BIN) run --profile quick --out $(REPRO_DIR) --no-cache $(RUN_FLAGS)
	@cd $(REPRO_DIR) && files=0; differ=0; \
	for f in $$(find . -type f -not -path './raw/*' | sed 's|^\./||' | sort); do \
	  files=$$((files + 1)); \
	  if ! cmp -s "$$f" "$(CURDIR)/reports/$$f"; then \
	    differ=$$((differ + 1)); echo "reproduce: reports/$$f differs from $(REPRO_DIR)/$$f"; \
	  fi; \
	done; \
	echo "reproduce: $$files files written with OPENBLAS_CORETYPE=Prescott, $$differ differ from reports/"; \
	[ "$$files" -gt 0 ] && [ "$$differ" -eq 0 ]

# The fault matrix (reports/FAULTS.md): the suite once per injected fault of the core.
faults: build
	$(BIN) faults --profile quick --out reports

# reports/AUDIT.md: the null calibration of the audit's estimators (200 audits of an
# exactly calibrated rf-dpgd at 2 000 and at 20 000 trials; about a minute).
AUDIT_ARGS := audit --system rf-dpgd --epsilon 2 --delta 1e-5 --null-audits 200
audit-report: build
	@mkdir -p target
	$(BIN) $(AUDIT_ARGS) --trials 2000 --markdown target/audit-2000.md > /dev/null
	$(BIN) $(AUDIT_ARGS) --trials 20000 --markdown target/audit-20000.md > /dev/null
	$(BIN) $(AUDIT_ARGS) --trials 20000 --noise-scale 0.25 --markdown target/audit-quarter.md > /dev/null || true
	{ printf '# Audit: estimators and their null calibration\n\n*Generated by `make audit-report`. Do not edit.*\n\n'; \
	  printf 'Each audit reports three lower bounds on epsilon, each at confidence 1 - 0.05/3 so that the largest holds at 0.95: '; \
	  printf 'Clopper-Pearson on a held-out threshold test, the Gaussian-DP estimate (assumes Gaussian scores; KS normality p-value reported per audit) '; \
	  printf 'and the one-run audit of Steinke, Nasr & Jagielski (2023) with one canary per trial (src/privacy/audit/estimators.rs). '; \
	  printf 'For an exactly calibrated mechanism no estimator may exceed epsilon more often than its share of 0.05; '; \
	  printf 'the last section is the negative control (a quarter of the noise), where every bound should exceed epsilon.\n\n'; \
	  cat target/audit-2000.md target/audit-20000.md target/audit-quarter.md; } > reports/AUDIT.md.tmp
	mv reports/AUDIT.md.tmp reports/AUDIT.md

# reports/PRIVACY.md and reports/audit-roc.svg (about a minute; holds wall times).
privacy-report: build
	$(BIN) privacy-report --out reports

report: build
	$(BIN) run --profile full --out reports/full
	$(BIN) fig2 --profile full --out reports

# reports/STABILITY.md: the quick suite at 20 master seeds (about 15 min a seed on 2
# idle cores, measured 2026-12-02: 899 s; `stability --plan` prints the planner's upper
# bound). Each seed's rows go to reports/stability/seed-<k>.jsonl as it is judged, and
# seeds with a usable record are read, not run: stopped, the same command resumes; a
# changed claim spec runs that claim again, the other claims' rows are read. The
# planner's bound for all 20 seeds from nothing is 26.3 h (2026-12-03; it prices the
# validation-tuned rf_tuned units about 7x over), above run's default 24 h limit, hence
# the 48 h default here.
STABILITY_SEEDS ?= 20
STABILITY_FLAGS ?= --max-hours 48
stability: build
	$(BIN) stability --seeds $(STABILITY_SEEDS) --profile quick --out reports $(STABILITY_FLAGS)

# The time from `dpclaims init` to a red CI run on a slow core (issue 59; README, "Your
# own paper"): tests/time_to_red.rs at the trial's sizes, units of 0.5 s and workers
# that take 10 s to start (about 8 minutes, mostly sleeping). Writes the figure to
# $(TARGET)/time-to-red.txt.
time-to-red: deps
	mkdir -p $(TARGET)
	STANDIN_UNIT_S=0.5 STANDIN_START_S=10 DPCLAIMS_TIME_TO_RED_OUT=$(abspath $(TARGET))/time-to-red.txt \
		$(TEST_ENV) $(CARGO) test --release --locked --test tests time_to_red -- --nocapture
	@cat $(TARGET)/time-to-red.txt

# reports/MUTANTS.md: regression power measured by mutation testing (issue 57;
# docs/fault-matrix.md, "Mutation testing"). cargo-mutants (pinned, installed when
# missing) lists the mutants of the core and the verdict layer; the committed seeded
# sample (mutants/sample.json; `scripts/mutants.py sample --refresh` redraws only the
# mutants of files changed since) is judged one mutant at a time in a scratch copy
# (target/mutants/). Coverage first (mutants/coverage.json: which claims execute which
# lines, measured once per version of the sources with llvm-19's tools, installed when
# missing; resumable), then each mutant: the claims that reach it (to the first that
# fails), the tests for what they missed, each result appended to
# mutants/results/shard-<I>-of-<N>.jsonl as soon as it is known: stopped (or `touch
# target/mutants/shard-0-of-1/stop` to stop between mutants), the same command resumes.
# Hours on 2 cores; `scripts/mutants.py slurm --shards N` shards it on a cluster.
# MUTANTS_ARGS="--limit 5" judges five and stops; `make mutants-report` writes the
# report from the committed results alone; `scripts/mutants.py status` counts them.
MUTANTS_VERSION := 27.1.0
MUTANTS_LLVM := llvm-19
MUTANTS_ARGS ?=
mutants: deps
	@if [ "$$($(CARGO) mutants --version 2>/dev/null)" != "cargo-mutants $(MUTANTS_VERSION)" ]; then \
	  echo "mutants: installing cargo-mutants $(MUTANTS_VERSION)"; \
	  $(CARGO) install --locked cargo-mutants@$(MUTANTS_VERSION); \
	fi
	@if dpkg -s $(MUTANTS_LLVM) >/dev/null 2>&1; then :; else \
	  echo "mutants: installing $(MUTANTS_LLVM) (llvm-cov and llvm-profdata read the coverage)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(MUTANTS_LLVM); \
	fi
	@[ -f mutants/sample.json ] || python3 scripts/mutants.py sample
	python3 scripts/mutants.py coverage
	python3 scripts/mutants.py run $(MUTANTS_ARGS)
	python3 scripts/mutants.py report

mutants-report:
	python3 scripts/mutants.py report

# Privacy-for-free Fig. 2 at paper scale only (about half an hour on 2 cores).
fig2: build
	$(BIN) fig2 --profile full --out reports

# Criterion benches (benches/), then one `dpclaims perf` process that measures the DP-GD
# kernels side by side and writes reports/BENCH.md atomically, criterion's medians appended.
CRITERION_DIR := $(or $(CARGO_TARGET_DIR),target)/criterion
bench: deps
	$(CARGO) bench --locked --features bench
	$(CARGO) run --release --locked --quiet -- perf --markdown reports/BENCH.md --criterion $(CRITERION_DIR)

# Fuzz the spec loader (fuzz/fuzz_targets/spec_load.rs) for FUZZ_SECONDS with cargo-fuzz
# (`cargo install cargo-fuzz`). It needs nightly flags: RUSTC_BOOTSTRAP=1 lets the stable
# toolchain take them. No sanitizer (the loader is safe Rust). Inputs that add coverage
# are kept in fuzz/corpus/spec_load/, which `make test` replays (tests/fuzz_corpus.rs).
FUZZ_SECONDS ?= 60
fuzz: deps
	cd fuzz && RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run --sanitizer none spec_load corpus/spec_load -- -max_total_time=$(FUZZ_SECONDS)

lint: deps
	$(CARGO) fmt --check
	$(CARGO) clippy --release --locked --all-targets --features bench -- -D warnings
	@# The committed reports were written by this build's engine (CI's `git diff` of
	@# reports/ fails otherwise, after the whole suite): regenerate with `make run`.
	$(CARGO) build --release --locked
	@built=$$($(BIN) --version | sed -n 's/^engine //p'); \
	 committed=$$(sed -n 's/^  "engine": "\([0-9a-f]*\)",$$/\1/p' reports/verdicts.json); \
	 if [ "$$built" != "$$committed" ]; then \
	   echo "reports/verdicts.json was written by engine $$committed, this build is $$built: run \`make run\` and commit the reports" >&2; exit 1; \
	 fi

fmt:
	$(CARGO) fmt

clean:
	$(CARGO) clean

# docs/claim.schema.json: the JSON Schema of the spec format, generated from the loader's
# types (tests/schema.rs fails when the committed file is stale).
schema:
	$(CARGO) build --release --locked
	$(BIN) schema > docs/claim.schema.json

# dpclaims — two commands: `make test` and `make run`. Both install the system
# BLAS/LAPACK first when it is missing (Debian; needs root or sudo).
SHELL := /bin/bash
CARGO ?= cargo
# Tests run in parallel already; one BLAS thread each keeps them from oversubscribing.
TEST_ENV := OPENBLAS_NUM_THREADS=1 CI=true INSTA_UPDATE=no
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Where cargo builds (honours CARGO_TARGET_DIR, as cargo does).
BIN := $(or $(CARGO_TARGET_DIR),target)/release/dpclaims
# Extra flags of `make run`, e.g. RUN_FLAGS="--junit target/dpclaims-junit.xml" in CI.
RUN_FLAGS ?=

.PHONY: deps build test run faults report fig2 bench lint fmt clean

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

build: deps
	$(CARGO) build --release --locked

test: deps
	$(TEST_ENV) $(CARGO) test --release --locked
	@# The reference external cores (numpy) at the quick profile: the correct cores hold,
	@# the faulty ones are caught (exit 1 otherwise); about 15 s.
	OPENBLAS_NUM_THREADS=1 $(BIN) run examples/external --no-reports --check-determinism

run: build
	$(BIN) run --profile quick --out reports $(RUN_FLAGS)

# The fault matrix (reports/FAULTS.md): the suite once per injected fault of the core.
faults: build
	$(BIN) faults --profile quick --out reports

report: build
	$(BIN) run --profile full --out reports/full
	$(BIN) fig2 --profile full --out reports

# Privacy-for-free Fig. 2 at paper scale only (about half an hour on 2 cores).
fig2: build
	$(BIN) fig2 --profile full --out reports

# Criterion benches (benches/), then one `dpclaims perf` process that measures the DP-GD
# kernels side by side and writes reports/BENCH.md atomically, criterion's medians appended.
CRITERION_DIR := $(or $(CARGO_TARGET_DIR),target)/criterion
bench: deps
	$(CARGO) bench --locked --features bench
	$(CARGO) run --release --locked --quiet -- perf --markdown reports/BENCH.md --criterion $(CRITERION_DIR)

lint: deps
	$(CARGO) fmt --check
	$(CARGO) clippy --release --locked --all-targets --features bench -- -D warnings

fmt:
	$(CARGO) fmt

clean:
	$(CARGO) clean

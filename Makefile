# Thin wrapper over CMake: `make`, `make bench`, `make test`. Each first makes sure the Debian
# packages the build needs are present (scripts/setup_deps.sh), so any of them works as the very
# first command on a fresh machine.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

DEPS ?= build

.PHONY: all deps configure build bench test clean report

all: build

deps:
	@scripts/setup_deps.sh $(DEPS)

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

bench: build
	BENCH_PROGRAM=$(BUILD_DIR)/benches/bench ./bench $(BENCH_ARGS)

# The tests need more packages than the build (cmocka, python3): install them first.
test:
	@$(MAKE) --no-print-directory build DEPS=test
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# The profiling report: reports/profiling_results.md and reports/html/, regenerated from scratch
# (scripts/make_report.py; docs/profiling.md). Several minutes; REPORT_QUICK=1 is a fast, less
# precise run, REPORT_BASELINE=NAME compares with baselines/NAME.json, REPORT_VARIANCE_RUNS=N
# sets the variance check's processes (default 10).
report: build
	BENCH_PROGRAM=$(abspath $(BUILD_DIR))/benches/bench python3 scripts/make_report.py

clean:
	rm -rf $(BUILD_DIR)

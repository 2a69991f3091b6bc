# Thin wrapper over CMake: `make`, `make bench`, `make test`. Each first makes sure the Debian
# packages it needs are present (scripts/setup_deps.sh), so any of them works as the very first
# command on a fresh machine.
#
# `make` and `make bench` configure BUILD_DIR without the tests (-DHARNESS_BUILD_TESTS=OFF), so
# they never look for a package only the tests use (cmocka, Python); `make test` configures it
# with them. Each says which it wants every time, so the two can share BUILD_DIR and follow each
# other in any order. The build is quiet: its output goes to BUILD_DIR/build.log, printed only
# when the build fails, so `make bench` shows the report and not the compiler.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# ctest's jobs (TEST_JOBS=3 on 2 CPUs: ctest's total 288-306 s instead of 330-358 s, since much
# of a test's time is waiting on its own time budget, but the load of about 6 it makes spreads
# the timing tests' runs until some of them cannot tell a planted change: 2 of 3 clean CI runs
# failed one. The default stays one job a CPU.)
TEST_JOBS ?= $(JOBS)
BUILD_LOG = $(BUILD_DIR)/build.log

.PHONY: all build build-for-tests bench test clean report

all: build

# configure_and_build(DEPS, TESTS): the packages of set DEPS, then configure with the tests ON or
# OFF and build, quietly.
define configure_and_build
	@scripts/setup_deps.sh $(1)
	@mkdir -p "$(BUILD_DIR)"
	@echo "make: building in $(BUILD_DIR)/ ($(BUILD_TYPE), tests $(2)); log: $(BUILD_LOG)" >&2
	@{ cmake -S . -B "$(BUILD_DIR)" -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DHARNESS_BUILD_TESTS=$(2) \
	      $(CMAKE_FLAGS) && cmake --build "$(BUILD_DIR)" -j $(JOBS); } >"$(BUILD_LOG)" 2>&1 || \
	  { cat "$(BUILD_LOG)" >&2; echo "make: the build failed; its log: $(BUILD_LOG)" >&2; exit 1; }
endef

build:
	$(call configure_and_build,build,OFF)

build-for-tests:
	$(call configure_and_build,test,ON)

bench: build
	@BENCH_PROGRAM="$(BUILD_DIR)/benches/bench" ./bench $(BENCH_ARGS)

# The tests need more packages than the build (cmocka, python3): installed first.
test: build-for-tests
	@ctest --test-dir "$(BUILD_DIR)" --output-on-failure -j $(TEST_JOBS)

# The profiling report: reports/profiling_results.md and reports/html/, regenerated from scratch
# (scripts/make_report.py; docs/profiling.md). Several minutes; REPORT_QUICK=1 is a fast, less
# precise run, REPORT_BASELINE=NAME compares with baselines/NAME.json, REPORT_VARIANCE_RUNS=N
# sets the variance check's processes (default 10).
report: build
	BENCH_PROGRAM=$(abspath $(BUILD_DIR))/benches/bench python3 scripts/make_report.py

clean:
	rm -rf $(BUILD_DIR)

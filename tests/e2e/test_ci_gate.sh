#!/usr/bin/env bash
# End-to-end test of the CI gate (scripts/ci_gate.sh, installed as bench-ci-gate), used by a
# project other than this one.
#
# Usage: test_ci_gate.sh SCRIPT [BUILD_DIR [EXTRA_FLAGS]]
# (1) Checks SCRIPT's usage errors (exit 2, one message) and -h. (2) With BUILD_DIR: installs it
# into a temporary prefix, makes a temporary git repository holding a one-file CMake project whose
# benchmark finds the harness with find_package(harness), and runs the installed bench-ci-gate
# there: the committed code against itself must pass (with a 50% noise threshold passed on to
# the program, so a busy machine cannot fail it), a working tree whose chain is 3 times longer
# must fail naming the benchmark, the same through a custom build command (-c) with the filter
# from GATE_FILTERS, and a target that does not exist must be a build error. EXTRA_FLAGS (the
# sanitizer flags the library was built with) go to every compile and link. Temporary files are
# removed on exit.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 ]]; then
    echo "usage: $0 SCRIPT [BUILD_DIR [EXTRA_FLAGS]]" >&2
    exit 2
fi
script="$1"
build="${2:-}"
extra="${3:-}"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/harness-gate-test.XXXXXX")"
trap 'rm -rf -- "$tmp"' EXIT

fail() {
    echo "test_ci_gate: FAIL: $*" >&2
    exit 1
}

# expect RC WANT CMD...: CMD must exit RC with WANT somewhere in its output.
expect() {
    local want_rc="$1" want="$2" out rc=0
    shift 2
    out="$("$@" 2>&1)" || rc=$?
    [[ "$rc" -eq "$want_rc" ]] || fail "$* exited $rc, wanted $want_rc; output:
$out"
    [[ "$out" == *"$want"* ]] || fail "$* did not print '$want'; output:
$out"
}

# A git repository of a tiny outside project: one benchmark, a chain of STEPS multiply-adds.
repo="$tmp/project"
mkdir -p "$repo"
git -C "$repo" init -q
git -C "$repo" config user.name "gate test"
git -C "$repo" config user.email "gate-test@example.invalid"
cat > "$repo/CMakeLists.txt" << 'EOF'
cmake_minimum_required(VERSION 3.20)
project(outside LANGUAGES C)
find_package(harness REQUIRED)
add_executable(perf perf.c)
target_link_libraries(perf PRIVATE harness::harness)
EOF
cat > "$repo/steps.h" << 'EOF'
#define STEPS 1000u
EOF
cat > "$repo/perf.c" << 'EOF'
/* perf.c: a latency-bound chain of STEPS steps (steps.h), so a longer chain is exactly slower. */
#include <stdint.h>
#include <harness/bench.h>
#include "steps.h"

BENCH_FN(outside, chain)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        for (unsigned i = 0; i < STEPS; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            __asm__ volatile("" : "+r"(x));
        }
    }
    bench_black_box(x);
}
EOF
git -C "$repo" add -A
git -C "$repo" commit -q -m "a chain of 1000 steps"

# (1) usage errors: each is exit 2 before anything is built.
expect 0 "Exit: 0 no regression" "$script" -h
expect 2 "unknown option -x" "$script" -x
expect 2 "option -t needs a value" "$script" -t
expect 2 "-t wants seconds" "$script" -t soon
expect 2 "-p wants a whole number" "$script" -p 2.5
expect 2 "-b wants the program's path relative" "$script" -b /usr/bin/true
expect 2 "-C: '$tmp/missing' is not a directory" "$script" -C "$tmp/missing"
mkdir -p "$tmp/not-a-repo"
expect 2 "is not inside a git checkout" "$script" -C "$tmp/not-a-repo"
expect 2 "'no-such-ref' is not a revision" "$script" -C "$repo" no-such-ref

if [[ -z "$build" ]]; then
    echo "test_ci_gate: ok (usage errors; no build directory given, outside project not run)"
    exit 0
fi

# (2) the installed gate on the outside project.
prefix="$tmp/prefix"
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" ||
    fail "cmake --install failed: $(cat "$tmp/install.log")"
gate="$prefix/bin/bench-ci-gate"
[[ -x "$gate" ]] || fail "bench-ci-gate not installed in $prefix/bin"

export GATE_CMAKE_FLAGS="-DCMAKE_PREFIX_PATH=$prefix"
if [[ -n "$extra" ]]; then
    GATE_CMAKE_FLAGS+=" -DCMAKE_C_FLAGS=$extra -DCMAKE_EXE_LINKER_FLAGS=$extra"
fi
cd "$repo"

expect 0 "bench-ci-gate: no regression" \
    "$gate" -t 1 -p 3 -b perf HEAD --noise-threshold 0.5

echo '#define STEPS 3000u' > steps.h # the working tree: 3 times the work
expect 1 "outside/chain: Performance has regressed." "$gate" -t 1 -p 3 -b perf
# shellcheck disable=SC2016 # expanded by the gate's bash, not here
expect 1 "outside/chain: Performance has regressed." env GATE_FILTERS='^outside/' \
    "$gate" -t 1 -p 3 -b perf -c 'cmake -S "$GATE_SOURCE_DIR" -B "$GATE_BUILD_DIR" $GATE_CMAKE_FLAGS && cmake --build "$GATE_BUILD_DIR"'

expect 2 "building the base revision" "$gate" -t 1 -p 3 -b bin/no_such_target

echo "test_ci_gate: ok (usage errors; installed bench-ci-gate passes the same code, fails a" \
    "3x slower chain, builds with -c, reports a build error)"

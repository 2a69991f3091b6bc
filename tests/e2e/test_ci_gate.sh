#!/usr/bin/env bash
# End-to-end test of the CI gate (scripts/tools/bench_ci_gate.sh, installed as bench-ci-gate),
# used by a project other than this one.
#
# Usage: test_ci_gate.sh SCRIPT [BUILD_DIR [EXTRA_FLAGS]]
# (1) Checks SCRIPT's usage errors (exit 2, one message) and -h. (2) With BUILD_DIR: installs it
# into a temporary prefix and moves the prefix elsewhere (the installation alone, relocated, is
# what runs), makes a temporary git repository holding a one-file CMake project whose benchmark
# finds the harness with find_package(harness), with two commits, the second 3 times slower, and
# runs the installed bench-ci-gate there with no -b and no CMake flags (it finds the project's
# benchmark program and the installation it belongs to): the second commit against itself must
# pass (with a 50% noise threshold passed on to the program, so a busy machine cannot fail it),
# its summary counting the benchmarks compared and naming the one its budget left not compared,
# and against the first must fail naming the benchmark; the same through a custom build command
# (-c) with -b and the filter from GATE_FILTERS; a program whose report is worded otherwise
# (behind a wrapper) is judged the same, since the gate reads the program's JSON; a build with no benchmark program, one with two,
# and a target that does not exist are errors that say what to do. Its usage names it as
# invoked. EXTRA_FLAGS (the sanitizer flags the library was built with) go to every compile and
# link. Temporary files are removed on exit.
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

# A git repository of a tiny outside project: one benchmark, a chain of STEPS multiply-adds; the
# first commit 1000 steps, the second 3000 (3 times the work).
repo="$tmp/project"
mkdir -p "$repo"
git -C "$repo" init -q
git -C "$repo" config user.name "gate test"
git -C "$repo" config user.email "gate-test@example.invalid"
cat > "$repo/CMakeLists.txt" << 'END'
cmake_minimum_required(VERSION 3.20)
project(outside LANGUAGES C)
find_package(harness REQUIRED)
add_executable(perf perf.c)
target_link_libraries(perf PRIVATE harness::harness)
END
cat > "$repo/steps.h" << 'END'
#define STEPS 1000u
END
cat > "$repo/perf.c" << 'END'
/* perf.c: a latency-bound chain of STEPS steps (steps.h), so a longer chain is exactly slower;
 * and a benchmark too slow for a small budget. */
#include <stdint.h>
#include <time.h>
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

/* An iteration of 250 ms: a round of 8 samples takes 2 s, so a budget of 1 s a benchmark cannot
 * fit the 2 worker pairs a comparison needs, whatever the machine's load. */
BENCH_FN(outside, slow)
{
    BENCH_ITER(b) {
        struct timespec ts = {0, 250000000};
        nanosleep(&ts, NULL);
    }
}
END
git -C "$repo" add -A
git -C "$repo" commit -q -m "a chain of 1000 steps"
echo '#define STEPS 3000u' > "$repo/steps.h"
git -C "$repo" commit -q -a -m "a chain of 3000 steps"

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

# (2) the installed gate on the outside project, from the installation alone, moved after
# installing: nothing may point back at the build or the source tree.
cmake --install "$build" --prefix "$tmp/installed" > "$tmp/install.log" ||
    fail "cmake --install failed: $(cat "$tmp/install.log")"
prefix="$tmp/moved"
mv "$tmp/installed" "$prefix"
gate="$prefix/bin/bench-ci-gate"
[[ -x "$gate" ]] || fail "bench-ci-gate not installed in $prefix/bin"
cd "$repo"
export PATH="$prefix/bin:/usr/local/bin:/usr/bin:/bin"

out="$("$gate" -h)" || fail "bench-ci-gate -h exited $?"
[[ "$out" == "Usage: bench-ci-gate "* && "$out" != *bench_ci_gate.sh* ]] ||
    fail "bench-ci-gate -h does not name itself: $out"

# Without EXTRA_FLAGS the gate's own defaults are used: it must find the installation it runs
# from. With them, the flags must name it.
flags="-DCMAKE_PREFIX_PATH=$prefix"
if [[ -n "$extra" ]]; then
    flags+=" -DCMAKE_C_FLAGS=$extra -DCMAKE_EXE_LINKER_FLAGS=$extra"
    export GATE_CMAKE_FLAGS="$flags"
fi

# The same code against itself, with a budget (1 s a benchmark) too small for outside/slow: the
# gate passes, but says how many it compared and names the one it did not, with the reason.
rc=0
out="$("$gate" -t 1 -p 3 HEAD --noise-threshold 0.5 2>&1)" || rc=$?
[[ "$rc" -eq 0 ]] || fail "the gate of HEAD against itself exited $rc; output:
$out"
for want in "bench-ci-gate: benchmark program: perf (the build's one program" \
    "not compared, so not judged (they do not fail the gate" \
    "  outside/slow (not compared: fewer than 2 worker pairs measured a round"; do
    [[ "$out" == *"$want"* ]] || fail "the gate of HEAD against itself did not print '$want':
$out"
done
[[ "$out" =~ "bench-ci-gate: no regression; "[01]" of 2 benchmarks compared" ]] ||
    fail "the gate's summary does not count the benchmarks compared:
$out"
# 3 s for the 3 pairs a regression needs: at load 13, 1 s measured one pair and the planted
# slowdown went "not compared", which passes.
expect 1 "outside/chain: Performance has regressed." "$gate" -t 3 -p 3 -f '^outside/chain$' HEAD~1
# shellcheck disable=SC2016 # expanded by the gate's bash, not here
build_cmd='cmake -S "$GATE_SOURCE_DIR" -B "$GATE_BUILD_DIR" $GATE_CMAKE_FLAGS'
# shellcheck disable=SC2016
build_cmd+=' && cmake --build "$GATE_BUILD_DIR"'

# The gate decides from the program's JSON and exit code, never from its report's words: the
# program behind a wrapper that words its summary otherwise (its heading, "not compared") is
# judged as before, counting the benchmarks compared and naming the one not compared.
cat > "$tmp/reworded" << 'END'
#!/usr/bin/env bash
# perf.real, its report worded otherwise; a worker (BENCH_WORKER_JOB) is perf.real itself.
set -euo pipefail
real="$(dirname "$0")/perf.real"
if [[ -n "${BENCH_WORKER_JOB:-}" ]]; then
    exec "$real" "$@"
fi
"$real" "$@" | sed -e 's/^Comparison with A, the old build/Summary against A, the old build/' \
    -e 's/not compared/unmeasured/g' -e 's/regressed/slower/g'
END
chmod +x "$tmp/reworded"
# shellcheck disable=SC2016
reword_cmd="$build_cmd"' && mv "$GATE_BUILD_DIR/perf" "$GATE_BUILD_DIR/perf.real" &&
    cp '"$tmp/reworded"' "$GATE_BUILD_DIR/perf"'
rc=0
out="$(GATE_CMAKE_FLAGS="$flags" "$gate" -t 1 -p 3 -b perf -c "$reword_cmd" HEAD \
    --noise-threshold 0.5 2>&1)" || rc=$?
[[ "$rc" -eq 0 ]] || fail "the gate of the reworded program against itself exited $rc; output:
$out"
[[ "$out" == *"Summary against A, the old build"* ]] ||
    fail "the reworded program's report was not reworded:
$out"
for want in "not compared, so not judged (they do not fail the gate" \
    "  outside/slow (not compared: fewer than 2 worker pairs measured a round"; do
    [[ "$out" == *"$want"* ]] || fail "the gate of the reworded program did not print '$want':
$out"
done
[[ "$out" =~ "bench-ci-gate: no regression; "[01]" of 2 benchmarks compared" ]] ||
    fail "the gate's summary of the reworded program does not count the benchmarks compared:
$out"
# The custom build command (-c) with -b and the filter from GATE_FILTERS, on the reworded
# program: the planted slowdown fails the gate, counted from the JSON.
expect 1 "bench-ci-gate: REGRESSION (see above); 1 of 1 benchmarks compared" env \
    GATE_FILTERS='^outside/chain$' GATE_CMAKE_FLAGS="$flags" "$gate" -t 3 -p 3 -b perf \
    -c "$reword_cmd" HEAD~1

# A build with no benchmark program, or with two: the gate asks for -b.
# shellcheck disable=SC2016
expect 2 "the new build made no benchmark program" "$gate" -c 'mkdir -p "$GATE_BUILD_DIR"'
# shellcheck disable=SC2016
expect 2 "several benchmark programs (perf perf2): choose one with -b PROGRAM" \
    env GATE_CMAKE_FLAGS="$flags" "$gate" \
    -c "$build_cmd"' && cp "$GATE_BUILD_DIR/perf" "$GATE_BUILD_DIR/perf2"'
expect 2 "the project has no CMake target 'no_such_target'" \
    "$gate" -t 1 -p 3 -b bin/no_such_target

echo "test_ci_gate: ok (usage errors; the installed, moved bench-ci-gate finds the program and" \
    "the installation, passes the same code naming what it did not compare, fails a 3x slower" \
    "commit, builds with -c, asks for -b when a build has no program or two, names a missing" \
    "target)"

#!/usr/bin/env bash
# Every GPU check in one command, for a machine with an NVIDIA GPU, its driver and the CUDA
# toolkit (docs/gpu.md): builds the tree with CUDA into build-gpu/ (Release, -Werror), makes sure
# the build has the CUDA layer and the program sees the GPU, runs the GPU tests (ctest label
# `gpu`: the probe, the CUDA benchmarks end to end, the GPU similarity against the CPU on several
# seeds) and insists that none of them was skipped, then runs the suite's `gpu/` benchmarks and
# prints each kernel's effective bandwidth against the device's theoretical bandwidth
# (2 x memory clock x bus width) and against the read probe over the same buffer, the
# similarity's FP32 rate against the device's peak, each benchmark's mean SM clock and throttled
# samples (NVML), and last an A/A comparison (--ab of the program against a copy of itself),
# where every benchmark should come out "no change".
#
# Usage: scripts/gpu_check.sh [-q] [-a] [-p] [-n] [-b BUILD_DIR] [-o OUT_DIR] [-A SECONDS]
#                             [-F REGEX] [-- BENCH_ARGS...]
#   -q  quick benchmark run (--quick)       -a  run the whole ctest suite, not only `gpu`
#   -p  also profile with scripts/gpu_profile.sh when nsys/ncu are installed
#   -n  no build: use BUILD_DIR as it is    -b  build directory (default build-gpu)
#   -o  where logs and JSON go (default BUILD_DIR)
#   -A  seconds per benchmark of the A/A --ab run (default 10; 0 skips it)
#   -F  the benchmarks of the A/A run (default ^gpu/)
#   BENCH_ARGS go to the benchmark run.
# Results: OUT_DIR/gpu_check.json (the benchmark run's JSON), gpu_check.ctest.log,
# gpu_check.ab.log.
#
# Exit: 0 all passed; 1 a test failed or was skipped; 2 usage error, build error, no CUDA in the
# build or no usable GPU; 3 a benchmark failed.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=()
all_tests=false
profile=false
no_build=false
build="build-gpu"
out=""
ab_time=10
ab_filter='^gpu/'
while getopts ":qapnb:o:A:F:h" opt; do
    case "$opt" in
        q) quick=(--quick) ;;
        a) all_tests=true ;;
        p) profile=true ;;
        n) no_build=true ;;
        b) build="$OPTARG" ;;
        o) out="$OPTARG" ;;
        A) ab_time="$OPTARG" ;;
        F) ab_filter="$OPTARG" ;;
        h) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        :) echo "gpu_check: -$OPTARG needs a value" >&2; exit 2 ;;
        *) echo "gpu_check: unknown option -$OPTARG (try -h)" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [[ $# -gt 0 && "$1" == "--" ]]; then shift; fi
if ! [[ "$ab_time" =~ ^[0-9]+$ ]]; then
    echo "gpu_check: -A takes whole seconds, not '$ab_time'" >&2
    exit 2
fi
out="${out:-$build}"
mkdir -p "$out"

if command -v nvidia-smi >/dev/null 2>&1; then
    echo "== nvidia-smi"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
        --format=csv || true
fi

jobs="$(nproc 2>/dev/null || echo 2)"
if $no_build; then
    echo "== build: using $build as it is"
    if [[ ! -x "$build/benches/bench" ]]; then
        echo "gpu_check: -n: no $build/benches/bench" >&2
        exit 2
    fi
else
    echo "== build ($build, Release, CUDA)"
    start=$SECONDS
    mkdir -p "$build"
    if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DHARNESS_WERROR=ON \
        >"$out/gpu_check.configure.log" 2>&1 ||
        ! cmake --build "$build" -j "$jobs" >"$out/gpu_check.build.log" 2>&1; then
        echo "gpu_check: the build failed; see $out/gpu_check.configure.log and" \
            "$out/gpu_check.build.log" >&2
        tail -n 30 "$out/gpu_check.build.log" "$out/gpu_check.configure.log" 2>/dev/null >&2 ||
            true
        exit 2
    fi
    echo "built in $((SECONDS - start)) s"
fi
bench="$build/benches/bench"
version="$("$bench" --version)"
echo "$version"
if [[ "$version" != *"CUDA events: CUDA "* ]]; then
    echo "gpu_check: this build has no CUDA layer (CMake did not find nvcc and the CUDA toolkit;" \
        "set CUDACXX or put nvcc on PATH); see $out/gpu_check.configure.log" >&2
    exit 2
fi
"$bench" --context | grep -E '^(gpu|cuda) ' || true
if grep -q '^gpu          none: ' <<<"$("$bench" --context)"; then
    echo "gpu_check: no usable GPU: $("$bench" --context | sed -n 's/^gpu          none: //p')" >&2
    exit 2
fi

echo "== GPU tests (ctest$($all_tests || echo ' -L gpu'))"
label=(-L gpu)
if $all_tests; then label=(); fi
log="$out/gpu_check.ctest.log"
rc=0
ctest --test-dir "$build" "${label[@]}" --output-on-failure -j "$jobs" 2>&1 | tee "$log" || rc=$?
if [[ $rc -ne 0 ]]; then
    echo "gpu_check: tests failed (ctest exit $rc)" >&2
    exit 1
fi
# On a GPU machine nothing of the GPU tests may be skipped: a skip means the GPU path did not run.
if grep -E 'gpu.*(\*\*\*Skipped|Not Run)' "$log" >/dev/null; then
    echo "gpu_check: a GPU test was skipped on a machine with a GPU:" >&2
    grep -E '\*\*\*Skipped|Not Run' "$log" >&2
    exit 1
fi
gpu_out="$("$build/tests/workloads/test_wl_gpu_similarity" | tail -n 1)" || true
echo "GPU similarity vs CPU: $gpu_out"
e2e_out="$(E2E_GPU_FIXTURE="$build/tests/e2e/e2e_gpu_fixture" E2E_BENCH="$bench" E2E_HAVE_CUDA=1 \
    python3 tests/e2e/test_gpu.py RunTest 2>&1 | tail -n 1)" || true
if [[ "$e2e_out" != "OK" ]]; then
    echo "gpu_check: the end-to-end GPU run tests did not all run and pass: $e2e_out" >&2
    exit 1
fi

echo "== GPU benchmarks (^gpu/)"
json="$out/gpu_check.json"
brc=0
"$bench" "${quick[@]}" --json "$json" "$@" '^gpu/' || brc=$?
if [[ $brc -ne 0 && $brc -ne 1 ]]; then
    echo "gpu_check: the benchmark run exited $brc" >&2
    [[ -f "$json" ]] || exit 3
fi

echo "== bandwidth, compute and clocks against the device"
python3 scripts/gpu_report.py "$json"

arc=0
if [[ "$ab_time" -gt 0 ]]; then
    echo "== A/A: --ab of the program against a copy of itself (${ab_time} s per benchmark)"
    # A copy with a name of the same length: layout effects of the file name stay equal.
    copy="$(dirname "$bench")/bencA"
    cp "$bench" "$copy"
    "$bench" --ab "$copy" --ab-time "$ab_time" "$ab_filter" 2>&1 | tee "$out/gpu_check.ab.log" ||
        arc=$?
    rm -f "$copy"
    echo "(an A/A comparison should find \"no change\" for every benchmark; exit $arc)"
fi

if $profile; then
    echo "== profile"
    scripts/gpu_profile.sh || echo "gpu_check: profiling did not complete (see above)" >&2
fi
if [[ $brc -eq 3 || $arc -eq 3 ]]; then
    exit 3
fi
echo "gpu_check: all GPU checks passed"

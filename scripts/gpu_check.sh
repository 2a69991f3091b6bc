#!/usr/bin/env bash
# Every GPU check in one command, for a machine with an NVIDIA GPU, its driver and the CUDA
# toolkit (docs/gpu.md): builds the tree with CUDA into build-gpu/ (Release, -Werror), makes sure
# the build has the CUDA layer and the program sees the GPU, runs the GPU tests (ctest label
# `gpu`: the probe, the CUDA benchmarks end to end, the GPU similarity against the CPU on several
# seeds) and insists that none of them was skipped, then runs the suite's `gpu/` benchmarks and
# prints each kernel's effective bandwidth against the device's theoretical bandwidth
# (2 x memory clock x bus width) and against the read probe over the same buffer, and the
# similarity's FP32 rate against the device's peak.
#
# Usage: scripts/gpu_check.sh [-q] [-a] [-p] [-b BUILD_DIR] [-- BENCH_ARGS...]
#   -q  quick benchmark run (--quick)       -a  run the whole ctest suite, not only `gpu`
#   -p  also profile with scripts/gpu_profile.sh when nsys/ncu are installed
#   -b  build directory (default build-gpu) BENCH_ARGS go to the benchmark run
# Results: BUILD_DIR/gpu_check.json (the benchmark run's JSON).
#
# Exit: 0 all passed; 1 a test failed or was skipped; 2 usage error, build error, no CUDA in the
# build or no usable GPU; 3 a benchmark failed.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=()
all_tests=false
profile=false
build="build-gpu"
while getopts ":qapb:h" opt; do
    case "$opt" in
        q) quick=(--quick) ;;
        a) all_tests=true ;;
        p) profile=true ;;
        b) build="$OPTARG" ;;
        h) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        :) echo "gpu_check: -$OPTARG needs a value" >&2; exit 2 ;;
        *) echo "gpu_check: unknown option -$OPTARG (try -h)" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [[ $# -gt 0 && "$1" == "--" ]]; then shift; fi

if command -v nvidia-smi >/dev/null 2>&1; then
    echo "== nvidia-smi"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
        --format=csv || true
fi

echo "== build ($build, Release, CUDA)"
jobs="$(nproc 2>/dev/null || echo 2)"
start=$SECONDS
mkdir -p "$build"
if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DHARNESS_WERROR=ON \
    >"$build/gpu_check.configure.log" 2>&1 ||
    ! cmake --build "$build" -j "$jobs" >"$build/gpu_check.build.log" 2>&1; then
    echo "gpu_check: the build failed; see $build/gpu_check.configure.log and" \
        "$build/gpu_check.build.log" >&2
    tail -n 30 "$build/gpu_check.build.log" "$build/gpu_check.configure.log" 2>/dev/null >&2 || true
    exit 2
fi
echo "built in $((SECONDS - start)) s"
bench="$build/benches/bench"
version="$("$bench" --version)"
echo "$version"
if [[ "$version" != *"CUDA events: CUDA "* ]]; then
    echo "gpu_check: this build has no CUDA layer (CMake did not find nvcc and the CUDA toolkit;" \
        "set CUDACXX or put nvcc on PATH); see $build/gpu_check.configure.log" >&2
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
log="$build/gpu_check.ctest.log"
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
json="$build/gpu_check.json"
brc=0
"$bench" "${quick[@]}" --json "$json" "$@" '^gpu/' || brc=$?
if [[ $brc -ne 0 && $brc -ne 1 ]]; then
    echo "gpu_check: the benchmark run exited $brc" >&2
    [[ -f "$json" ]] || exit 3
fi

echo "== bandwidth and compute against the device"
python3 - "$json" <<'EOF'
import json, re, sys

doc = json.load(open(sys.argv[1]))
gpu = doc["context"]["gpu"]
theo = gpu["theoretical_bandwidth_bytes_per_s"]
cc = gpu["compute_capability"]
# FP32 lanes per SM: 64 on Volta, Turing and A100 (8.0), 128 on GA10x, Ada, Hopper, Blackwell.
lanes = 64 if cc in ("7.0", "7.2", "7.5", "8.0") else 128
peak = gpu["sm_count"] * lanes * 2 * gpu["clock_khz"] * 1e3 if gpu["sm_count"] > 0 else 0
print(f"device: {gpu['name']} (cc {cc}, {gpu['sm_count']} SMs), theoretical bandwidth "
      f"{theo / 1e9:.0f} GB/s, FP32 peak {peak / 1e12:.1f} TFLOP/s (boost clock)")
rows, probe = [], {}
for r in doc["benchmarks"]:
    if r["status"] != "ok":
        print(f"{r['id']}: {r['status']}: {r.get('message', '')}")
        continue
    t = r["estimates"]["median"]["point"]  # ns per iteration, GPU time
    host = r.get("metrics", {}).get("host_wall", {}).get("per_iteration", {}).get("median", {})
    bytes_ = r["throughput"].get("bytes_per_iteration", 0)
    bw = bytes_ / (t * 1e-9) if t > 0 else 0
    n = r["param"]
    if r["name"] == "read_probe":
        probe[n] = bw
    rows.append((r, t, host.get("point"), bw, n))
print(f"{'benchmark':42} {'GPU time':>11} {'host wall':>11} {'GB/s':>8} {'of theo':>8} "
      f"{'of probe':>8} {'TFLOP/s':>8} {'of peak':>8}")
for r, t, host, bw, n in rows:
    frac_probe = f"{bw / probe[n]:.2f}" if n in probe and probe[n] > 0 else "-"
    tf = peak_frac = "-"
    if r["name"].startswith("vector_similarity"):
        flops = 2.0 * 64 * n * 768  # 64 queries x N candidates x D = 768
        tf = f"{flops / (t * 1e-9) / 1e12:.2f}"
        if peak > 0:
            peak_frac = f"{flops / (t * 1e-9) / peak:.2f}"
    hw = f"{host / 1e3:.1f} us" if host is not None else "-"
    print(f"{r['id']:42} {t / 1e3:8.1f} us {hw:>11} {bw / 1e9:8.0f} "
          f"{(bw / theo if theo > 0 else 0):8.2f} {frac_probe:>8} {tf:>8} {peak_frac:>8}")
print("GB/s counts the inputs read once per iteration (docs/gpu.md); at 64 queries the search "
      "does 32 flop per candidate byte, so it is bound by FP32 compute before memory on most GPUs.")
EOF

if $profile; then
    echo "== profile"
    scripts/gpu_profile.sh || echo "gpu_check: profiling did not complete (see above)" >&2
fi
if [[ $brc -eq 3 ]]; then
    exit 3
fi
echo "gpu_check: all GPU checks passed"

#!/usr/bin/env bash
# The GPU checks for a machine borrowed for a few minutes (docs/gpu.md), in two steps: `prepare`
# builds on the development machine, whose packages the GPU machine lacks; `run` runs there,
# from the repository root, in well under 10 minutes, everything GPU-related that cannot run
# without a GPU, and writes its output under OUT_DIR.
#
# Usage: scripts/device_check.sh prepare [BUILD_DIR]
#        scripts/device_check.sh run OUT_DIR [BUILD_DIR]
#   BUILD_DIR defaults to build-device (ignored by git; carry it to the GPU machine).
#
# prepare: a Release build with CUDA (-Werror) into BUILD_DIR; the shared libraries the programs
#   need beyond a stock system (libcjson, libcpuid, libpfm, libcmocka) copied into
#   BUILD_DIR/devlibs with the source directory and the Python that CMake recorded (CTest files
#   hold absolute paths); object files removed, so that the folder travels small.
# run: links the recorded source directory and Python to this checkout and this python3 when
#   they differ, then: the machine's facts (nvidia-smi clocks, power and throttle reasons, the
#   CPU's caches); scripts/gpu_check.sh on the build as it is (ctest -L gpu, the end-to-end GPU
#   run, the gpu/ group with bandwidth, TFLOP/s, clocks and throttled samples, an A/A --ab of
#   6 s per benchmark of the read probes and the hot searches); PyTorch's FP32 and TF32 times of
#   the same searches (scripts/gpu_torch_compare.py) and the side-by-side table
#   (scripts/gpu_report.py --torch);
#   a saved baseline and a comparison of the same program with it seconds later (no verdict
#   allowed; the drift canaries' readings shown). With
#   DEVICE_CHECK_NCU=1 also Nsight Compute's speed of light and occupancy of the dots kernel
#   (--clock-control none: the clocks are never touched). Nothing here changes the GPU's
#   settings.
#   OUT_DIR gets device_check.log (everything), summary.txt (the tables), gpu_check.json,
#   gpu_check.ctest.log, gpu_check.ab.log, torch.json and canary.txt: seven files.
#
# Exit: 0 every step passed; 1 a step failed (the log says which); 2 usage error or no build.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

prepare() {
    local build="${1:-build-device}"
    local jobs
    jobs="$(nproc 2>/dev/null || echo 2)"
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DHARNESS_WERROR=ON >/dev/null
    cmake --build "$build" -j "$jobs" >/dev/null
    if [[ "$("$build/benches/bench" --version)" != *"CUDA events: CUDA "* ]]; then
        echo "device_check: the build has no CUDA layer (nvcc not found)" >&2
        exit 2
    fi
    mkdir -p "$build/devlibs"
    local lib
    while read -r lib; do
        cp -L "$lib" "$build/devlibs/"
    done < <(find "$build" -type f -perm -u+x ! -name '*.so' -print0 |
        xargs -0 ldd 2>/dev/null | awk '/=> \// { print $3 }' |
        grep -E 'lib(cjson|cpuid|pfm|cmocka)' | sort -u)
    pwd >"$build/devlibs/source_dir"
    sed -n 's/^_Python3_EXECUTABLE:INTERNAL=//p' "$build/CMakeCache.txt" >"$build/devlibs/python"
    find "$build" -name '*.o' -delete
    echo "device_check: $build is ready ($(du -sh "$build" | cut -f1)): carry it, and on the GPU" \
        "machine run: scripts/device_check.sh run OUT_DIR $build"
}

# Runs "$@" with a time limit of $1 seconds; the log says when a step failed or ran out of time.
step() {
    local limit="$1" name="$2"
    shift 2
    echo "== $name (limit ${limit} s)"
    local start=$SECONDS rc=0
    timeout --kill-after=10 "$limit" "$@" || rc=$?
    echo "-- $name: exit $rc after $((SECONDS - start)) s"
    if [[ $rc -ne 0 ]]; then
        failed+=("$name (exit $rc)")
    fi
    return 0
}

facts() {
    nvidia-smi || true
    nvidia-smi -q -d CLOCK,PERFORMANCE,TEMPERATURE,POWER || true
    lscpu || true
    echo "L3 per getconf: $(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo '?') bytes;" \
        "cpu0 index3: $(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo '?')"
    python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())' || true
}

# A baseline saved and compared with at once: the comparison of the very program the baseline
# measured must give no verdict (exit 0 under --fail-on-regression, no benchmark regressed or
# improved). The drift canaries' readings of both runs, five processes each, are shown; a
# canary warning is reported, not failed: a cloud host's clock moved 6-9% between runs seconds
# apart, every process of each run agreeing (docs/comparison.md#drift-canaries).
# Baselines go to a temporary folder (a baseline keeps a copy of the program).
canaries() {
    local bench="$1" out="$2" dir
    dir="$(mktemp -d)"
    # harness/empty too, so that the baseline has a measured benchmark whatever the GPU does.
    "$bench" --quick --exact gpu/read_probe/10000 harness/empty --baseline-dir "$dir" \
        --save-baseline dc --json "$dir/save.json" >/dev/null
    sleep 5
    local rc=0
    "$bench" --quick --exact gpu/read_probe/10000 harness/empty --baseline-dir "$dir" \
        --baseline dc --fail-on-regression --json "$dir/compare.json" >/dev/null \
        2>"$dir/compare.err" || rc=$?
    local readings='import json, sys
for path in sys.argv[1:]:
    c = json.load(open(path))["context"]
    print(path.rsplit("/", 1)[-1], {k: [round(x, 3) for x in v]
                                    for k, v in c.get("canary_samples", {}).items()})
    for b in json.load(open(path)).get("benchmarks", []):
        v = (b.get("change") or {}).get("verdict")
        if v in ("regressed", "improved"):
            print("FALSE VERDICT", b["id"], v)'
    {
        python3 -c "$readings" "$dir/save.json" "$dir/compare.json"
        echo "comparison exit $rc; its stderr:"
        cat "$dir/compare.err"
        local load
        load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
        if grep -q "drift canaries" "$dir/compare.err"; then
            echo "canary warning: the machine drifted in 5 s (load average $load on $(nproc) CPUs)"
        else
            echo "no canary warning (load average $load on $(nproc) CPUs)"
        fi
    } | tee "$out/canary.txt"
    rm -rf "$dir"
    [[ $rc -eq 0 ]] && ! grep -q "FALSE VERDICT" "$out/canary.txt"
}

run() {
    local out="$1" build="${2:-build-device}"
    if [[ ! -x "$build/benches/bench" || ! -f "$build/devlibs/source_dir" ]]; then
        echo "device_check: no prepared build in $build (scripts/device_check.sh prepare)" >&2
        exit 2
    fi
    mkdir -p "$out"
    out="$(cd "$out" && pwd)"
    exec > >(tee "$out/device_check.log") 2>&1
    export LD_LIBRARY_PATH="$PWD/$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # CTest files and the e2e tests name the source directory and Python of the build machine.
    local src py
    src="$(cat "$build/devlibs/source_dir")"
    if [[ "$src" != "$PWD" && ! -e "$src" ]]; then
        mkdir -p "$(dirname "$src")"
        ln -s "$PWD" "$src"
    fi
    py="$(cat "$build/devlibs/python")"
    if [[ -n "$py" && ! -x "$py" ]]; then
        mkdir -p "$(dirname "$py")"
        ln -sf "$(command -v python3)" "$py"
    fi
    failed=()
    local self="scripts/device_check.sh"
    step 20 "facts" "$self" _facts
    # From the source directory the build names (gpu_check.sh works from its own checkout), so
    # that ctest finds what it was built with.
    step 360 "gpu_check" "$src/scripts/gpu_check.sh" -n -b "$build" -o "$out" -A 6 \
        -F '^gpu/(read_probe|vector_similarity_batch)/'
    step 90 "PyTorch" python3 scripts/gpu_torch_compare.py --json "$out/torch.json"
    step 60 "drift canaries" "$self" _canaries "$build/benches/bench" "$out"
    if [[ "${DEVICE_CHECK_NCU:-0}" == 1 ]]; then
        step 60 "Nsight Compute" ncu --clock-control none --kernel-name regex:dots_kernel \
            --launch-count 2 --section SpeedOfLight --section Occupancy \
            "$build/benches/bench" --profile-time 1 --exact gpu/vector_similarity_batch/10000
    fi
    echo "== summary"
    local torch=()
    [[ -f "$out/torch.json" ]] && torch=(--torch "$out/torch.json")
    if [[ -f "$out/gpu_check.json" ]]; then
        python3 scripts/gpu_report.py "$out/gpu_check.json" "${torch[@]}" | tee "$out/summary.txt"
    fi
    grep -E "no change|ambiguous|regressed|improved|inconclusive" "$out/gpu_check.ab.log" \
        2>/dev/null | tail -n 12 | tee -a "$out/summary.txt" || true
    tail -n 2 "$out/canary.txt" 2>/dev/null | tee -a "$out/summary.txt" || true
    if [[ ${#failed[@]} -gt 0 ]]; then
        echo "device_check: failed: ${failed[*]}"
        exit 1
    fi
    echo "device_check: every step passed"
}

case "${1:-}" in
    prepare) shift; prepare "$@" ;;
    run)
        if [[ $# -lt 2 ]]; then usage >&2; exit 2; fi
        shift
        run "$@"
        ;;
    _facts) facts ;;                  # steps of `run`, each in its own process so that timeout
    _canaries) shift; canaries "$@" ;; # can stop it
    -h | --help) usage ;;
    *) usage >&2; exit 2 ;;
esac

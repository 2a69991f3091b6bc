#!/usr/bin/env bash
# Profiles one CUDA benchmark of the reference suite with NVIDIA's profilers (docs/gpu.md):
# Nsight Systems (nsys: a timeline of the run, kernels and the harness's NVTX range named after
# each benchmark) and Nsight Compute (ncu: per-kernel metrics of a few launches). The benchmark
# runs under `./bench --profile-time S FILTER`: iterations for S seconds, no statistics.
#
# Usage: scripts/gpu_profile.sh [-s SECONDS] [-t nsys|ncu|both] [-o DIR] [FILTER]
#   FILTER   benchmark id regex, as for ./bench (default '^gpu/vector_similarity_batch/10000$')
#   -s       seconds of profiled iterations (default 2 for nsys, 0.5 for ncu)
#   -t       which profiler (default: both that are installed; one named must be installed)
#   -o       output directory (default build-gpu-profile/ in the repository)
# NCU_ARGS in the environment replaces the ncu options chosen here (sections and launch counts).
#
# Exit: 0 profiled; 2 usage error, no profiler, bench not built, or no usable GPU (the message
# says which); 3 a profiler or the benchmark failed.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

seconds=""
tool="auto"
outdir="build-gpu-profile" # ignored by git (/build*/)
while getopts ":s:t:o:h" opt; do
    case "$opt" in
        s) seconds="$OPTARG" ;;
        t) tool="$OPTARG" ;;
        o) outdir="$OPTARG" ;;
        h) usage; exit 0 ;;
        :) echo "gpu_profile: -$OPTARG needs a value" >&2; exit 2 ;;
        *) echo "gpu_profile: unknown option -$OPTARG (try -h)" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [[ $# -gt 1 ]]; then
    echo "gpu_profile: at most one FILTER (try -h)" >&2
    exit 2
fi
filter="${1:-^gpu/vector_similarity_batch/10000\$}"
case "$tool" in auto | nsys | ncu | both) ;; *)
    echo "gpu_profile: -t must be nsys, ncu or both, not '$tool'" >&2
    exit 2
    ;;
esac
if [[ -n "$seconds" && ! "$seconds" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
    echo "gpu_profile: -s: '$seconds' is not a number of seconds" >&2
    exit 2
fi

# Nsight tools live outside PATH more often than not.
find_tool() {
    local name="$1" found
    if found="$(command -v "$name" 2>/dev/null)"; then
        echo "$found"
        return 0
    fi
    for found in /usr/local/cuda/bin/"$name" /opt/nvidia/nsight-systems/*/bin/"$name" \
        /opt/nvidia/nsight-compute/*/"$name" /usr/local/cuda/nsight-compute-*/"$name"; do
        if [[ -x "$found" ]]; then
            echo "$found"
            return 0
        fi
    done
    return 1
}
nsys_bin="$(find_tool nsys || true)"
ncu_bin="$(find_tool ncu || true)"
want_nsys=false
want_ncu=false
case "$tool" in
    nsys) want_nsys=true ;;
    ncu) want_ncu=true ;;
    both) want_nsys=true; want_ncu=true ;;
    auto)
        [[ -n "$nsys_bin" ]] && want_nsys=true
        [[ -n "$ncu_bin" ]] && want_ncu=true
        ;;
esac
missing=()
if [[ "$tool" == auto && -z "$nsys_bin" && -z "$ncu_bin" ]]; then
    missing=(nsys ncu)
fi
if $want_nsys && [[ -z "$nsys_bin" ]]; then missing+=(nsys); fi
if $want_ncu && [[ -z "$ncu_bin" ]]; then missing+=(ncu); fi
if [[ ${#missing[@]} -gt 0 ]]; then
    for m in "${missing[@]}"; do
        case "$m" in
            nsys) echo "gpu_profile: nsys (NVIDIA Nsight Systems) not found on PATH, in" \
                "/usr/local/cuda/bin or /opt/nvidia/nsight-systems/*/bin; install it" \
                "(package nsight-systems, or the CUDA toolkit's) or put it on PATH" >&2 ;;
            ncu) echo "gpu_profile: ncu (NVIDIA Nsight Compute) not found on PATH, in" \
                "/usr/local/cuda/bin or /opt/nvidia/nsight-compute/*; install it" \
                "(package nsight-compute, or the CUDA toolkit's) or put it on PATH" >&2 ;;
        esac
    done
    exit 2
fi

prog="${BENCH_PROGRAM:-build/benches/bench}"
if [[ ! -x "$prog" ]]; then
    echo "gpu_profile: $prog is not built yet: run 'make' (with the CUDA toolkit installed)" >&2
    exit 2
fi
gpu_line="$("$prog" --context | grep '^gpu ' || true)"
if [[ "$gpu_line" == *"none: "* ]]; then
    echo "gpu_profile: no usable GPU: ${gpu_line#*none: }" >&2
    exit 2
fi
if ! ids="$("$prog" --list "$filter")"; then
    exit 2 # bench said why (no match, bad regex)
fi
echo "gpu_profile: ${gpu_line#gpu }"
echo "gpu_profile: benchmarks: $(echo "$ids" | tr '\n' ' ')"

mkdir -p "$outdir"
name="$(echo "$ids" | head -n 1 | tr '/' '_')"
status=0
if $want_nsys; then
    out="$outdir/$name"
    echo "== nsys ($nsys_bin): $out.nsys-rep"
    if "$nsys_bin" profile --trace=cuda,nvtx,osrt --force-overwrite=true --output="$out" \
        "$prog" --profile-time "${seconds:-2}" "$filter"; then
        "$nsys_bin" stats --force-export=true --report cuda_gpu_kern_sum,nvtx_sum "$out.nsys-rep" ||
            status=3
    else
        status=3
    fi
fi
if $want_ncu; then
    out="$outdir/$name.ncu"
    echo "== ncu ($ncu_bin): $out.ncu-rep"
    read -r -a ncu_args <<< "${NCU_ARGS:---launch-skip 20 --launch-count 8 --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy}"
    if "$ncu_bin" "${ncu_args[@]}" --force-overwrite --export "$out" \
        "$prog" --profile-time "${seconds:-0.5}" "$filter"; then
        "$ncu_bin" --import "$out.ncu-rep" --page details --print-summary per-kernel || status=3
    else
        status=3
    fi
fi
exit "$status"

#!/usr/bin/env bash
# One entry point for the profilers: CPU hot spots (perf, flame graph), heap and leaks
# (heaptrack, valgrind), GPU (scripts/gpu_profile.sh, when present).
#
# Usage: scripts/profile.sh cpu|memory|gpu|all [FILTER]
#   cpu     scripts/profile_hotspots.sh [FILTER]
#   memory  scripts/profile_memory.sh [FILTER]
#   gpu     scripts/gpu_profile.sh [FILTER] (exit 2 when that script does not exist)
#   all     cpu, then memory, then gpu when scripts/gpu_profile.sh exists (said when skipped)
# FILTER and the environment variables go to the scripts (see their --help); outputs in tmp/.
# Exit: the first failing script's exit status; 2 for a usage error or a missing gpu script.
set -euo pipefail
cd "$(dirname "$0")/.."
me="profile.sh"
usage() {
    awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"
}
if [[ $# -lt 1 ]]; then
    echo "$me: which profile? cpu, memory, gpu or all (try --help)" >&2
    exit 2
fi
what="$1"
shift
if [[ $# -gt 1 ]]; then
    echo "$me: at most one FILTER after '$what'" >&2
    exit 2
fi
gpu_script=scripts/gpu_profile.sh

run_gpu() {
    if [[ ! -f "$gpu_script" ]]; then
        echo "$me: $gpu_script does not exist: there is no GPU profiler in this checkout" >&2
        return 2
    fi
    bash "$gpu_script" "$@"
}

case "$what" in
    -h | --help)
        usage
        exit 0
        ;;
    cpu) exec scripts/profile_hotspots.sh "$@" ;;
    memory) exec scripts/profile_memory.sh "$@" ;;
    gpu) run_gpu "$@" ;;
    all)
        scripts/profile_hotspots.sh "$@"
        scripts/profile_memory.sh "$@"
        if [[ -f "$gpu_script" ]]; then
            run_gpu "$@"
        else
            echo "$me: no $gpu_script in this checkout: GPU profile skipped" >&2
        fi
        ;;
    *)
        echo "$me: unknown profile '$what' (expected cpu, memory, gpu or all)" >&2
        exit 2
        ;;
esac

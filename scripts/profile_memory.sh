#!/usr/bin/env bash
# Heap profile and leak check: peak heap, allocation count and the top allocation sites (with
# heaptrack, or valgrind's DHAT where heaptrack cannot be had), then a leak check with valgrind
# memcheck, of the profiling build.
#
# Usage: scripts/profile_memory.sh [FILTER]
#   no FILTER   profiles build-prof/workloads/wl_profile (the reference profiling workload,
#               once: about 1 s natively); under valgrind (DHAT, memcheck) with 64 of its
#               1000 similarity queries, one batch (valgrind emulates the batch kernel's fused
#               multiply-adds slowly: all 1000 took 14 minutes under memcheck), so the same
#               code paths run in about a minute
#   FILTER      profiles the reference suite's benchmarks that FILTER selects, each run for
#               MEMORY_TIME seconds with --profile-time (their untimed setup runs too: under
#               valgrind, select small benchmarks)
# Environment:
#   MEMORY_TIME=S        seconds per benchmark with a FILTER (default 0.5)
#   MEMORY_TOOL=T        heaptrack or dhat (default heaptrack; dhat when heaptrack is missing,
#                        or sees no allocation)
#   MEMORY_LEAK_CHECK=0  skip the memcheck leak check
#   PROFILE_OUT=DIR      output directory (default tmp)
#   PROFILE_BUILD_DIR=DIR profiling build (default build-prof)
# Outputs in DIR: heaptrack.zst and heaptrack.txt (or dhat.json), heap.folded and
# heap_flamegraph.svg (bytes at the peak, by call stack; heaptrack only), memcheck.log,
# memory.json and memory.txt (the summary printed).
# Needs heaptrack (Debian: heaptrack) or valgrind, valgrind for the leak check, python3, cmake,
# a C compiler; as root, missing packages are installed with apt-get.
# Exit: 0 ok; 1 memcheck found memory errors or definitely/indirectly lost memory; 2 usage
# error, missing tool, build failure or a failed run.
set -euo pipefail
cd "$(dirname "$0")/.."
me="profile_memory.sh"

# shellcheck source=scripts/profile_lib.sh
. scripts/profile_lib.sh
parse_filter_arg "$@"
seconds="${MEMORY_TIME:-0.5}"
tool="${MEMORY_TOOL:-heaptrack}"
leak_check="${MEMORY_LEAK_CHECK:-1}"
out="${PROFILE_OUT:-tmp}"
build_dir="${PROFILE_BUILD_DIR:-build-prof}"
if ! [[ "$seconds" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
    die "MEMORY_TIME must be a number of seconds, got '$seconds'"
fi
case "$tool" in
    heaptrack | dhat) ;;
    *) die "MEMORY_TOOL must be heaptrack or dhat, got '$tool'" ;;
esac

need python3 python3
need cmake cmake
need cc gcc
if [[ "$tool" == heaptrack ]] && ! { try_install heaptrack heaptrack &&
    try_install heaptrack_print heaptrack; }; then
    echo "$me: heaptrack is not available: using valgrind's DHAT for the heap profile" >&2
    tool=dhat
fi
if [[ "$tool" == dhat || "$leak_check" != 0 || -n "$filter" ]]; then
    need valgrind valgrind
fi

mkdir -p "$out"
start=$(date +%s)
build_profiling "$build_dir" "$out/build.log"

choose_target "$build_dir" "$seconds" "$out/memory_target.out"
# What valgrind runs: the workload with fewer similarity queries (see Usage).
vg_cmd=("${cmd[@]}")
if [[ -z "$filter" ]]; then
    vg_cmd+=(--similarity-queries 64)
fi

summary=(--target "$target" -o "$out/memory.json")
rm -f "$out"/heaptrack.*.zst "$out"/heaptrack.*.gz "$out/heaptrack.zst" "$out/heaptrack.gz"
if [[ "$tool" == heaptrack ]]; then
    echo "$me: heap profile with heaptrack: $target" >&2
    if ! heaptrack -o "$out/heaptrack" "${cmd[@]}" >"$out/memory_target.out" \
        2>"$out/heaptrack.log"; then
        die "heaptrack or the profiled program failed (see $out/heaptrack.log)"
    fi
    data="$(find "$out" -maxdepth 1 -name 'heaptrack.*' \( -name '*.zst' -o -name '*.gz' \) |
        head -n 1)"
    [[ -n "$data" ]] || die "heaptrack wrote no data file (see $out/heaptrack.log)"
    heaptrack_print -f "$data" -n 10 >"$out/heaptrack.txt" 2>&1 ||
        die "heaptrack_print failed (see $out/heaptrack.txt)"
    if heaptrack_print -f "$data" -p 0 -a 0 -T 0 --flamegraph-cost-type peak \
        -F "$out/heap.folded" >/dev/null 2>&1 && [[ -s "$out/heap.folded" ]]; then
        python3 scripts/flamegraph.py "$out/heap.folded" -o "$out/heap_flamegraph.svg" \
            --countname bytes --title "Heap at its peak: ${filter:-wl_profile}" \
            --subtitle "heaptrack; width = bytes allocated and live at the peak" ||
            echo "$me: warning: the heap flame graph could not be rendered" >&2
    fi
    if [[ -n "$filter" ]] && grep -q '^calls to allocation functions: 0 ' "$out/heaptrack.txt"; then
        # A malloc defined in the benchmark program itself would bind before heaptrack's
        # preloaded hooks, and heaptrack would see nothing. Valgrind replaces the functions in
        # every object, so DHAT sees all.
        note="heaptrack saw no allocation in the benchmark program (does it define malloc"
        note+=" itself?): DHAT used instead"
        echo "$me: $note" >&2
        summary+=(--note "$note")
        tool=dhat
    else
        summary+=(--heaptrack "$out/heaptrack.txt")
    fi
fi
if [[ "$tool" == dhat ]]; then
    echo "$me: heap profile with valgrind DHAT (slow): $target" >&2
    rm -f "$out/heap.folded" "$out/heap_flamegraph.svg"
    if ! valgrind --tool=dhat --dhat-out-file="$out/dhat.json" "${vg_cmd[@]}" \
        >"$out/memory_target.out" 2>"$out/dhat.log"; then
        die "valgrind DHAT or the profiled program failed (see $out/dhat.log)"
    fi
    summary+=(--dhat "$out/dhat.json")
fi

if [[ "$leak_check" != 0 ]]; then
    echo "$me: leak check with valgrind memcheck (slow: about a minute for wl_profile)" >&2
    if ! valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible \
        --log-file="$out/memcheck.log" "${vg_cmd[@]}" >/dev/null 2>&1; then
        die "the program failed under memcheck (see $out/memcheck.log)"
    fi
    summary+=(--memcheck "$out/memcheck.log")
fi

rc=0
python3 scripts/memory_summary.py "${summary[@]}" >"$out/memory.txt" || rc=$?
cat "$out/memory.txt"
[[ "$rc" -le 1 ]] || die "summarising the profile failed"
echo "$me: done in $(($(date +%s) - start)) s: $out/memory.json, $out/memory.txt" >&2
exit "$rc"

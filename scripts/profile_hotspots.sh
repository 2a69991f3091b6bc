#!/usr/bin/env bash
# CPU hot spots: builds the profiling configuration, samples call stacks with perf, and renders
# a flame graph and the top functions. Everything runs offline with the scripts next to this one.
#
# Usage: scripts/profile_hotspots.sh [FILTER]
#   no FILTER   profiles build-prof/workloads/wl_profile: the reference profiling workload
#               (graph build, 1000 activation and 1000 similarity queries, decay), once
#   FILTER      profiles the benchmarks of the reference suite that FILTER selects (a regex, as
#               for ./bench), each run for PROFILE_TIME seconds with --profile-time
# Environment:
#   PROFILE_TIME=S        seconds per benchmark with a FILTER (default 5)
#   PROFILE_FREQ=HZ       sampling frequency (default 4000)
#   PROFILE_EVENT=E       perf event (default: cycles when this machine counts it, else cpu-clock)
#   PROFILE_OUT=DIR       output directory (default tmp)
#   PROFILE_BUILD_DIR=DIR profiling build (default build-prof)
# Outputs in DIR: perf.data, perf.script (perf script text), stacks.folded, flamegraph.svg,
# hotspots.json and hotspots.txt (top 10 by self and inclusive share, workload phases),
# target.out (the profiled program's output), build.log.
# Needs perf (Debian: linux-perf), python3, cmake and a C compiler; as root, missing packages
# are installed with apt-get. Exit: 0 ok, 2 usage error, missing tool, build or profiling failure.
set -euo pipefail
cd "$(dirname "$0")/.."
me="profile_hotspots.sh"

# shellcheck source=scripts/profile_lib.sh
. scripts/profile_lib.sh
parse_filter_arg "$@"
seconds="${PROFILE_TIME:-5}"
freq="${PROFILE_FREQ:-4000}"
out="${PROFILE_OUT:-tmp}"
build_dir="${PROFILE_BUILD_DIR:-build-prof}"
if ! [[ "$seconds" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
    die "PROFILE_TIME must be a number of seconds, got '$seconds'"
fi
if ! [[ "$freq" =~ ^[1-9][0-9]*$ ]]; then
    die "PROFILE_FREQ must be a positive integer, got '$freq'"
fi

need perf linux-perf
need python3 python3
need cmake cmake
need cc gcc

mkdir -p "$out"
start=$(date +%s)

# The event: a hardware cycle counter when the machine has one (perf stat then prints a count),
# else the cpu-clock software timer (virtual machines without a virtual PMU).
event="${PROFILE_EVENT:-}"
if [[ -z "$event" ]]; then
    event=cpu-clock
    if perf stat -x, -e cycles -- true 2>&1 >/dev/null | grep -Eq '^[0-9]+,'; then
        event=cycles
    fi
fi

# Permission: a tiny recording tells whether perf_event_open works here at all.
probe="$out/.perf-probe.data"
if ! perf record -q -e "$event" -g -o "$probe" -- true >/dev/null 2>&1; then
    rm -f "$probe"
    paranoid="$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)"
    if [[ "$(id -u)" -ne 0 ]]; then
        die "perf cannot record '$event' (kernel.perf_event_paranoid=$paranoid): run as root or 'sudo sysctl kernel.perf_event_paranoid=1'"
    fi
    die "perf cannot record '$event' even as root (kernel.perf_event_paranoid=$paranoid; a container may block perf_event_open: run it with --privileged or --cap-add PERFMON)"
fi
rm -f "$probe"

build_profiling "$build_dir" "$out/build.log"

phase_wall=()
choose_target "$build_dir" "$seconds" "$out/target.out"
[[ -n "$filter" ]] || phase_wall=(--phase-wall "$out/target.out")

echo "$me: recording $event at $freq Hz: $target" >&2
rm -f "$out/perf.data" "$out/perf.data.old"
if ! perf record -e "$event" -F "$freq" -g -o "$out/perf.data" -- "${cmd[@]}" \
    >"$out/target.out" 2>"$out/perf_record.log"; then
    die "perf record or the profiled program failed (see $out/perf_record.log and $out/target.out)"
fi
if ! perf script -i "$out/perf.data" >"$out/perf.script" 2>"$out/perf_script.log"; then
    die "perf script failed (see $out/perf_script.log)"
fi
python3 scripts/stackcollapse.py "$out/perf.script" -o "$out/stacks.folded" ||
    die "folding the stacks failed (no samples in $out/perf.script?)"
python3 scripts/flamegraph.py "$out/stacks.folded" -o "$out/flamegraph.svg" \
    --title "CPU flame graph: ${filter:-wl_profile}" \
    --subtitle "perf record -e $event -F $freq -g; $(date -u +%Y-%m-%dT%H:%M:%SZ)" ||
    die "rendering the flame graph failed"
python3 scripts/hotspots.py "$out/stacks.folded" -n 10 -o "$out/hotspots.json" \
    --event "$event" --frequency "$freq" --target "$target" "${phase_wall[@]}" \
    | tee "$out/hotspots.txt"
echo "$me: done in $(($(date +%s) - start)) s: $out/flamegraph.svg, $out/hotspots.json," \
    "$out/hotspots.txt, $out/stacks.folded" >&2

# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034  # `me` is set, `filter` read, `cmd`/`target` used by the sourcing script
# Shared by profile_hotspots.sh and profile_memory.sh (sourced, not run): errors, the one
# optional FILTER argument, installing missing tools, the profiling build and the program to
# profile. The sourcing
# script sets `me` (its name, for messages) first.

# die MESSAGE...: one line on stderr naming the script, exit 2.
die() {
    echo "$me: $*" >&2
    exit 2
}

# parse_filter_arg "$@": handles --help (prints the script's header comment) and unknown
# options; sets `filter` to the one optional FILTER argument ("" when none).
parse_filter_arg() {
    case "${1:-}" in
        -h | --help)
            awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"
            exit 0
            ;;
        -*) die "unknown option '$1' (try --help)" ;;
    esac
    [[ $# -le 1 ]] || die "at most one FILTER (a regex; use | to select several)"
    filter="${1:-}"
}

# try_install CMD PACKAGE: 0 when CMD is (now) available; installs PACKAGE with apt-get as root.
try_install() {
    command -v "$1" >/dev/null 2>&1 && return 0
    [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1 || return 1
    echo "$me: installing $2 (for $1)" >&2
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null 2>&1 || return 1
    fi
    command -v "$1" >/dev/null 2>&1
}

# need CMD PACKAGE: like try_install, but a tool that cannot be had ends the script.
need() {
    try_install "$1" "$2" || die "$1 not found: install it with: sudo apt-get install -y $2"
}

# build_profiling BUILD_DIR LOG: the profiling configuration (Release, -g, frame pointers) of
# wl_profile and the bench program; the build's output goes to LOG.
build_profiling() {
    echo "$me: building the profiling configuration in $1 (Release, -g, frame pointers)" >&2
    local cfg=(-DCMAKE_BUILD_TYPE=Release -DHARNESS_PROFILING=ON)
    [[ -f "$1/CMakeCache.txt" ]] || cfg+=(-DHARNESS_BUILD_TESTS=OFF)
    if ! { cmake -S . -B "$1" "${cfg[@]}" &&
        cmake --build "$1" -j "$(nproc)" --target wl_profile bench; } >"$2" 2>&1; then
        die "the profiling build failed (see $2)"
    fi
}

# choose_target BUILD_DIR SECONDS SCRATCH: sets `cmd` (the program to profile, as an array) and
# `target` (its description). No FILTER: the reference workload wl_profile, once. A FILTER: the
# bench program on the benchmarks it selects, for SECONDS each with --profile-time, or --quick
# where the build lacks that flag; a FILTER that selects nothing ends the script with bench's
# message (SCRATCH keeps its stderr).
choose_target() {
    if [[ -z "$filter" ]]; then
        cmd=("$1/workloads/wl_profile")
        target="wl_profile (the reference profiling workload, once)"
        return
    fi
    local bench_prog="$1/benches/bench"
    if ! "$bench_prog" --list "$filter" >/dev/null 2>"$3"; then
        die "$(head -n 1 "$3")"
    fi
    if grep -q -- '--profile-time' <<<"$("$bench_prog" --help)"; then
        cmd=("$bench_prog" --profile-time "$2" "$filter")
        target="bench --profile-time $2 '$filter'"
    else
        cmd=("$bench_prog" --quick --output-format csv "$filter")
        target="bench --quick '$filter' (this build has no --profile-time)"
    fi
}

#!/usr/bin/env bash
# The CI regression gate, for this repository or any project whose benchmark program links the
# harness: builds the working tree and the base revision (in a temporary git worktree),
# measures them against each other with the interleaved A/B mode on this machine (PROGRAM
# --ab), and fails on a regression with the report on stdout. Installed as bench-ci-gate; the
# usage below names the script as it was invoked.
#
# Which program: -b PROGRAM (or GATE_PROGRAM) names it. Without it, in this repository it is
# benches/bench; in any other project the gate builds the working tree's whole project and takes
# the one executable there that links the harness, or stops and asks for -b when there are none
# or several. Run from an installed copy (PREFIX/bin/bench-ci-gate), the default CMake flags
# point find_package(harness) at that installation (PREFIX).
set -euo pipefail
me="$(basename "$0")"
here="$(cd "$(dirname "$0")" && pwd)"

usage() {
    cat <<EOF
Usage: $me [-t SECONDS] [-p PAIRS] [-f FILTER]... [-C DIR] [-b PROGRAM] [-T TARGET]
       $(printf '%*s' "${#me}" '') [-c COMMAND] [BASE_REF [BENCH_ARG...]]
Builds BASE_REF and the working tree, measures the benchmark program of each against the
other (PROGRAM --ab, interleaved on this machine) and fails on a regression.
  BASE_REF     git revision to compare against (default HEAD: the last commit against the
               working tree's changes; in a pull request, the target branch, e.g. origin/main)
  BENCH_ARG    passed on to the benchmark program, e.g. --noise-threshold 0.02
  -t SECONDS   seconds per benchmark on average (--ab-time; default 10), spent on the
               benchmarks still undecided
  -p PAIRS     most worker pairs of one benchmark (--ab-pairs; default 32)
  -f FILTER    benchmarks to compare (FILTER syntax of the program; repeatable; default: all)
  -C DIR       the project's source directory, inside a git checkout (default: the top level
               of the checkout holding the current directory)
  -b PROGRAM   the benchmark program, relative to a build directory (default: the one
               executable of the build that links the harness; benches/bench in the harness's
               own repository)
  -T TARGET    the CMake target to build (default: PROGRAM's file name with -b, else all)
  -c COMMAND   build with COMMAND (run by bash in the source directory, with GATE_SOURCE_DIR,
               GATE_BUILD_DIR, GATE_SIDE=base|new and GATE_EXTRA_FLAGS set) instead of CMake
  -h           print this help
Environment (an option given wins): GATE_PROGRAM (-b), GATE_TARGET (-T), GATE_BUILD_COMMAND
(-c), GATE_FILTERS (whitespace-separated filters, used when no -f is given); GATE_CMAKE_FLAGS:
CMake arguments for both builds (default: -DCMAKE_PREFIX_PATH=PREFIX when run from an
installation PREFIX/bin, -DHARNESS_BUILD_TESTS=OFF in the harness's repository; set it empty
for none); GATE_CMAKE_FLAGS_BASE, GATE_CMAKE_FLAGS_NEW: extra arguments for one build
(whitespace-separated), e.g. to test the gate with an injected slowdown; with -c they are
GATE_EXTRA_FLAGS.
Exit: 0 no regression, 1 a regression, 2 usage or build error, 3 a benchmark failed.
The summary counts the benchmarks compared and names those not compared (a budget too small,
no usable estimate, skipped, new or removed), with the reason: they pass unjudged.
EOF
}

die() { # die MESSAGE...: a usage or build error (exit 2)
    echo "$me: $*" >&2
    exit 2
}

seconds=10
pairs=32
filters=()
dir=""
program="${GATE_PROGRAM:-}"
target="${GATE_TARGET:-}"
build_command="${GATE_BUILD_COMMAND:-}"
while getopts ":t:p:f:C:b:T:c:h" opt; do
    case "$opt" in
        t) seconds="$OPTARG" ;;
        p) pairs="$OPTARG" ;;
        f) filters+=("$OPTARG") ;;
        C) dir="$OPTARG" ;;
        b) program="$OPTARG" ;;
        T) target="$OPTARG" ;;
        c) build_command="$OPTARG" ;;
        h)
            usage
            exit 0
            ;;
        :) die "option -$OPTARG needs a value (see $me -h)" ;;
        *) die "unknown option -$OPTARG (see $me -h)" ;;
    esac
done
shift $((OPTIND - 1))
base_ref="${1:-HEAD}"
bench_args=("${@:2}")
if [[ ${#filters[@]} -eq 0 && -n "${GATE_FILTERS:-}" ]]; then
    read -r -a filters <<<"$GATE_FILTERS"
fi
[[ "$seconds" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "-t wants seconds (a number), not '$seconds'"
[[ "$pairs" =~ ^[0-9]+$ ]] || die "-p wants a whole number of pairs, not '$pairs'"
[[ -z "$program" || "$program" != /* ]] ||
    die "-b wants the program's path relative to a build directory, not '$program'"

# The project: its source directory, the checkout it belongs to, and where it sits in there.
if [[ -n "$dir" ]]; then
    [[ -d "$dir" ]] || die "-C: '$dir' is not a directory"
    src="$(cd "$dir" && pwd)"
else
    src="$(git rev-parse --show-toplevel 2>/dev/null)" ||
        die "the current directory is not inside a git checkout (use -C DIR)"
fi
top="$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" ||
    die "'$src' is not inside a git checkout"
rel="$(git -C "$src" rev-parse --show-prefix)"
if ! git -C "$top" rev-parse --verify --quiet "$base_ref^{commit}" >/dev/null; then
    die "'$base_ref' is not a revision of the repository at $top"
fi

# Defaults that depend on the project: the harness's own repository has its suite program and
# builds it without the tests; another project finds the harness this gate was installed with.
default_flags=""
if [[ -f "$src/harness/include/harness/bench.h" && -f "$src/benches/CMakeLists.txt" ]]; then
    program="${program:-benches/bench}"
    default_flags="-DHARNESS_BUILD_TESTS=OFF"
else
    prefix="$(dirname "$here")"
    if compgen -G "$prefix/lib*/cmake/harness/harnessConfig.cmake" >/dev/null ||
        compgen -G "$prefix/lib/*/cmake/harness/harnessConfig.cmake" >/dev/null; then
        default_flags="-DCMAKE_PREFIX_PATH=$prefix"
    fi
fi
if [[ -n "$program" ]]; then
    target="${target:-$(basename "$program")}"
fi
read -r -a cmake_flags <<<"${GATE_CMAKE_FLAGS-$default_flags}"
read -r -a flags_base <<<"${GATE_CMAKE_FLAGS_BASE:-}"
read -r -a flags_new <<<"${GATE_CMAKE_FLAGS_NEW:-}"

work="$(mktemp -d "${TMPDIR:-/tmp}/ci-gate-XXXXXX")"
# shellcheck disable=SC2317 # called by the trap
cleanup() {
    git -C "$top" worktree remove --force "$work/base" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# The executables of a build directory that link the harness (the worker protocol's variable
# name is in every such program), relative to it, one a line.
harness_programs() {
    local build_dir="$1" f
    while IFS= read -r -d '' f; do
        if grep -qaF BENCH_WORKER_JOB "$f" 2>/dev/null; then
            printf '%s\n' "${f#"$build_dir"/}"
        fi
    done < <(find "$build_dir" -name CMakeFiles -prune -o -type f -perm -u+x ! -name '*.so' \
        ! -name '*.so.*' -print0 | sort -z)
}

build() { # build SIDE SOURCE_DIR BUILD_DIR EXTRA_FLAGS...
    local side="$1" from="$2" to="$3"
    shift 3
    local status=0
    local -a target_args=()
    [[ -n "$target" ]] && target_args=(--target "$target")
    if [[ -n "$build_command" ]]; then
        (cd "$from" && GATE_SIDE="$side" GATE_SOURCE_DIR="$from" GATE_BUILD_DIR="$to" \
            GATE_EXTRA_FLAGS="$*" bash -c "$build_command") >"$to.log" 2>&1 || status=$?
    else
        { cmake -S "$from" -B "$to" -DCMAKE_BUILD_TYPE=Release \
            ${cmake_flags[@]+"${cmake_flags[@]}"} "$@" &&
            cmake --build "$to" -j "$(nproc)" ${target_args[@]+"${target_args[@]}"}; } \
            >"$to.log" 2>&1 || status=$?
    fi
    if [[ "$status" -ne 0 ]]; then
        echo "$me: building the $side revision ($from) failed; the log:" >&2
        tail -n 30 "$to.log" >&2
        if [[ -z "$build_command" && -n "$target" ]] &&
            grep -qE "No rule to make target '$target'|unknown target '$target'" "$to.log"; then
            echo "$me: the project has no CMake target '$target': name the benchmark program" \
                "with -b PROGRAM (its path in the build directory) and its target with -T" >&2
        fi
        exit 2
    fi
    if [[ -z "$program" ]]; then
        local found
        found="$(harness_programs "$to")"
        if [[ -z "$found" ]]; then
            die "the $side build made no benchmark program (an executable that links the" \
                "harness) in its build directory; build one (find_package(harness) and" \
                "harness::harness), or name it with -b PROGRAM"
        elif [[ "$found" == *$'\n'* ]]; then
            die "the $side build made several benchmark programs ($(tr '\n' ' ' <<<"$found" |
                sed 's/ $//')): choose one with -b PROGRAM"
        fi
        program="$found"
        echo "$me: benchmark program: $program (the build's one program that links the" \
            "harness; -b PROGRAM to choose another)"
    fi
    [[ -x "$to/$program" ]] ||
        die "the $side build made no program $program in its build directory (set -b PROGRAM)"
}

echo "$me: base $(git -C "$top" rev-parse --short "$base_ref") ($base_ref) against the working" \
    "tree of $src"
# The working tree first: without -b, its build decides which program is compared.
build new "$src" "$work/new-build" ${flags_new[@]+"${flags_new[@]}"}
git -C "$top" worktree add --detach "$work/base" "$base_ref" >/dev/null 2>&1 ||
    die "could not check out '$base_ref' into a temporary worktree"
if [[ -f "$work/base/.gitmodules" ]]; then
    git -C "$work/base" submodule update --init --recursive >/dev/null 2>&1 ||
        die "could not check out the submodules of '$base_ref'"
fi
build base "$work/base/$rel" "$work/base-build" ${flags_base[@]+"${flags_base[@]}"}

# What the comparison judged, read from the JSON the program writes with --json (its format in
# docs/results-format.md, "Paired A/B results"), never from the report's wording: a benchmark is
# compared when its verdict came from its pairs ("compared": true: regressed ... inconclusive),
# and not compared otherwise (not compared, skipped, new, removed), with the reason its report
# gave ("not compared: fewer than 2 worker pairs ..."; a removed one has none). Prints "COMPARED
# ALL" and then one "ID (REASON)" a line; "0 0" when the program wrote no file (it stopped
# before its summary: a usage error, a signal).
judged() {
    python3 - "$1" <<'PY'
import json, sys


def shown(text):
    """The text with control characters as \\xNN, as the program's report shows them."""
    return "".join(c if " " <= c <= "~" or c > "\x9f" else f"\\x{ord(c):02x}" for c in text)


try:
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    if doc.get("format") != "harness-ab" or doc.get("version") != 1:
        raise ValueError("not the paired comparison's results of version 1")
    rows = doc["benchmarks"]
    lines = [f"{sum(1 for b in rows if b['compared'])} {len(rows)}"]
    for b in rows:
        if not b["compared"]:
            why = f"{b['verdict']}: {b['why']}" if b["why"] is not None else b["verdict"]
            lines.append(f"{shown(b['id'])} ({shown(why)})")
except FileNotFoundError:
    lines = ["0 0"]
except (ValueError, KeyError, TypeError, AttributeError) as e:
    print(f"cannot read the comparison's results {sys.argv[1]}: {e}", file=sys.stderr)
    lines = ["0 0"]
print("\n".join(lines))
PY
}

set +e
"$work/new-build/$program" --ab "$work/base-build/$program" --ab-time "$seconds" \
    --ab-pairs "$pairs" --fail-on-regression --json "$work/results.json" \
    ${bench_args[@]+"${bench_args[@]}"} -- ${filters[@]+"${filters[@]}"}
rc=$?
set -e
# The gate's summary says how many benchmarks it judged and names those it did not: "no
# regression" is a claim about the compared ones only. A benchmark not compared passes, as a
# skipped one does (docs/ci.md): only a failed one (exit 3) or a regression (exit 1) fails.
{
    read -r compared all
    mapfile -t missed
} < <(judged "$work/results.json")
counted=""
if [[ "$all" -gt 0 ]]; then
    counted="; $compared of $all benchmarks compared"
fi
case "$rc" in
    0) echo "$me: no regression$counted" ;;
    1) echo "$me: REGRESSION (see above)$counted" ;;
    *) echo "$me: the comparison itself failed (exit $rc)$counted" ;;
esac
if [[ ${#missed[@]} -gt 0 ]]; then
    echo "$me: not compared, so not judged (they do not fail the gate; a budget too small" \
        "for them is raised with -t):"
    printf '  %s\n' "${missed[@]}"
fi
exit "$rc"

#!/usr/bin/env bash
# The CI regression gate: builds the base revision and the working tree, measures them against
# each other with the interleaved A/B mode on this machine (bench --ab), and fails on a
# regression with the report on stdout.
#
# Usage: scripts/ci_gate.sh [-t SECONDS] [-p PAIRS] [-f FILTER]... [BASE_REF]
#   BASE_REF     git revision to compare against (default HEAD: the last commit against the
#                working tree's changes; in a pull request, the target branch, e.g. origin/main)
#   -t SECONDS   measurement time per benchmark (default 20)
#   -p PAIRS     worker pairs per benchmark (default 8)
#   -f FILTER    benchmarks to compare (bench FILTER syntax; repeatable; default: all)
# Environment: GATE_CMAKE_FLAGS_BASE, GATE_CMAKE_FLAGS_NEW: extra CMake arguments for each build
# (whitespace-separated), e.g. to test the gate itself with an injected slowdown.
# Exit: 0 no regression, 1 a regression, 2 usage or build error, 3 a benchmark failed.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
cd "$top"
seconds=20
pairs=8
filters=()
while getopts "t:p:f:h" opt; do
    case "$opt" in
        t) seconds="$OPTARG" ;;
        p) pairs="$OPTARG" ;;
        f) filters+=("$OPTARG") ;;
        h)
            sed -n '2,16p' "$0"
            exit 0
            ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
base_ref="${1:-HEAD}"
if ! git rev-parse --verify --quiet "$base_ref^{commit}" >/dev/null; then
    echo "ci_gate.sh: '$base_ref' is not a revision of this repository" >&2
    exit 2
fi
read -r -a flags_base <<<"${GATE_CMAKE_FLAGS_BASE:-}"
read -r -a flags_new <<<"${GATE_CMAKE_FLAGS_NEW:-}"

work="$(mktemp -d "${TMPDIR:-/tmp}/ci-gate-XXXXXX")"
# shellcheck disable=SC2317 # called by the trap
cleanup() {
    git -C "$top" worktree remove --force "$work/base" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

build() { # build SOURCE_DIR BUILD_DIR EXTRA_FLAGS...
    local src="$1" dst="$2"
    shift 2
    if ! { cmake -S "$src" -B "$dst" -DCMAKE_BUILD_TYPE=Release -DHARNESS_BUILD_TESTS=OFF "$@" &&
        cmake --build "$dst" -j "$(nproc)" --target bench; } >"$dst.log" 2>&1; then
        echo "ci_gate.sh: building $src failed; the log:" >&2
        tail -n 30 "$dst.log" >&2
        exit 2
    fi
}

echo "ci_gate.sh: base $(git rev-parse --short "$base_ref") ($base_ref) against the working tree"
git worktree add --detach "$work/base" "$base_ref" >/dev/null 2>&1
build "$work/base" "$work/base-build" ${flags_base[@]+"${flags_base[@]}"}
build "$top" "$work/new-build" ${flags_new[@]+"${flags_new[@]}"}
set +e
"$work/new-build/benches/bench" --ab "$work/base-build/benches/bench" --ab-time "$seconds" \
    --ab-pairs "$pairs" --fail-on-regression ${filters[@]+"${filters[@]}"}
rc=$?
set -e
case "$rc" in
    0) echo "ci_gate.sh: no regression" ;;
    1) echo "ci_gate.sh: REGRESSION (see above)" ;;
    *) echo "ci_gate.sh: the comparison itself failed (exit $rc)" ;;
esac
exit "$rc"

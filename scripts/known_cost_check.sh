#!/usr/bin/env bash
# Checks that the harness reports what an independent stopwatch measures for the same machine
# code: harness/known_cost_chain_1000 (median, ns per iteration) against known_cost_ref (median
# of timed blocks, ns per call), alternated over several rounds so drift hits both alike.
#
# Usage: scripts/known_cost_check.sh [ROUNDS] [TOLERANCE_PERCENT]   (defaults 5 and 2)
# Exit: 0 within tolerance, 1 outside it, 2 usage or missing build.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
tol="${2:-2}"
ref=build/benches/known_cost_ref
if [[ ! -x "$ref" || ! -x build/benches/bench ]]; then
    echo "known_cost_check.sh: build first (make)" >&2
    exit 2
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for ((i = 1; i <= rounds; i++)); do
    "$ref" 11 0.2 2>/dev/null >>"$tmp/ref"
    ./bench --exact harness/known_cost_chain_1000 --json "$tmp/h.json" \
        --output-format csv >/dev/null
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["benchmarks"][0]["estimates"]["median"]["point"])' \
        "$tmp/h.json" >>"$tmp/harness"
done
python3 - "$tmp/ref" "$tmp/harness" "$tol" <<'PY'
import statistics, sys
ref = [float(x) for x in open(sys.argv[1])]
har = [float(x) for x in open(sys.argv[2])]
tol = float(sys.argv[3])
r, h = statistics.median(ref), statistics.median(har)
diff = 100.0 * (h - r) / r
print(f"independent stopwatch: {r:.2f} ns per call (rounds: {', '.join(f'{x:.2f}' for x in ref)})")
print(f"harness median:        {h:.2f} ns per iteration (rounds: {', '.join(f'{x:.2f}' for x in har)})")
print(f"difference: {diff:+.2f}% (tolerance {tol}%)")
sys.exit(0 if abs(diff) <= tol else 1)
PY

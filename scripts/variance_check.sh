#!/usr/bin/env bash
# Runs the suite (or the benchmarks FILTER selects) N times as separate processes and prints, for
# each benchmark, the coefficient of variation of its point estimate (median) across the runs.
# Separate processes matter: most of the variance on a shared machine is between processes.
#
# Usage: scripts/variance_check.sh [-n RUNS] [-t MAX_CV_PERCENT] [-- BENCH_ARGS...]
#   -n RUNS            number of processes (default 10)
#   -t MAX_CV_PERCENT  exit 1 if any benchmark's CV is above this (default: no limit)
# Extra arguments after -- go to ./bench (e.g. a filter, --quick).
# Exit: 0 ok, 1 a CV above the threshold, 2 usage error or a failed run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=10
max_cv=""
while getopts "n:t:h" opt; do
    case "$opt" in
        n) runs="$OPTARG" ;;
        t) max_cv="$OPTARG" ;;
        h)
            sed -n '2,12p' "$0"
            exit 0
            ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if ! [[ "$runs" =~ ^[0-9]+$ ]] || ((runs < 2)); then
    echo "variance_check.sh: -n needs an integer >= 2, got '$runs'" >&2
    exit 2
fi
if [[ -n "$max_cv" ]] && ! [[ "$max_cv" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
    echo "variance_check.sh: -t needs a number (percent), got '$max_cv'" >&2
    exit 2
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for ((i = 1; i <= runs; i++)); do
    echo "variance_check.sh: run $i of $runs" >&2
    if ! ./bench --output-format csv --color never --json "$tmp/run$i.json" "$@" >/dev/null; then
        echo "variance_check.sh: run $i failed" >&2
        exit 2
    fi
done
python3 - "$max_cv" "$tmp"/run*.json <<'PY'
import json, statistics, sys
max_cv = float(sys.argv[1]) if sys.argv[1] else None
runs = [json.load(open(p)) for p in sys.argv[2:]]
ids = [b["id"] for b in runs[0]["benchmarks"] if b["status"] == "ok"]
worst = 0.0
print(f"{'benchmark':<44} {'runs':>4} {'median of medians':>18} {'CV':>7}")
for bid in ids:
    vals = [b["estimates"]["median"]["point"] for r in runs for b in r["benchmarks"]
            if b["id"] == bid and b["status"] == "ok"]
    m = statistics.mean(vals)
    cv = 100.0 * statistics.stdev(vals) / m if len(vals) > 1 and m > 0 else 0.0
    worst = max(worst, cv)
    print(f"{bid:<44} {len(vals):>4} {statistics.median(vals):>15.4g} ns {cv:>6.2f}%")
print(f"largest CV: {worst:.2f}%")
if max_cv is not None and worst > max_cv:
    print(f"variance_check.sh: a CV is above {max_cv}%", file=sys.stderr)
    sys.exit(1)
PY

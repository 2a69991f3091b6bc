#!/usr/bin/env bash
# Runs the suite (or the benchmarks FILTER selects) N times as separate processes and prints, for
# each benchmark, the coefficient of variation of its point estimate (median) across the runs.
# Separate processes matter: most of the variance on a shared machine is between processes.
#
# It also separates what the runs share: each run's "machine factor" is the median, over all
# benchmarks, of that run's median relative to the benchmark's typical median. A machine
# that is slower in one run than another (frequency, neighbours) moves every benchmark alike;
# the "CV without it" column divides that factor out, leaving what is the benchmark's own.
#
# It prints the CV of two statistics: the median (the headline estimate) and the fastest sample
# (estimates.min), which on a machine whose speed swings with its neighbours' load is the one
# that repeats (docs/measurement.md).
#
# It also checks the intervals: for each benchmark, in how many runs the 95% interval of the
# median contains the median of all runs' medians (the coverage column), and over all
# (benchmark, run) pairs.
#
# Usage: scripts/variance_check.sh [-n RUNS] [-g SECONDS] [-t MAX_CV_PERCENT] [-s STAT] [-k DIR]
#                                  [-- BENCH_ARGS...]
#   -n RUNS            number of processes (default 10)
#   -g SECONDS         pause between runs (default 0), e.g. 60 to see the machine's drift
#   -t MAX_CV_PERCENT  exit 1 if any benchmark's CV of STAT is above this (default: no limit)
#   -s STAT            the statistic -t applies to: median or min (default median)
#   -k DIR             keep each run's JSON results in DIR (runN.json)
# Extra arguments after -- go to ./bench (e.g. a filter, --quick).
# Exit: 0 ok, 1 a CV above the threshold, 2 usage error or a failed run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=10
max_cv=""
keep=""
stat="median"
gap=0
while getopts "n:g:t:s:k:h" opt; do
    case "$opt" in
        n) runs="$OPTARG" ;;
        g) gap="$OPTARG" ;;
        t) max_cv="$OPTARG" ;;
        k) keep="$OPTARG" ;;
        s) stat="$OPTARG" ;;
        h)
            sed -n '2,28p' "$0"
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
if ! [[ "$gap" =~ ^[0-9]+$ ]]; then
    echo "variance_check.sh: -g needs a whole number of seconds, got '$gap'" >&2
    exit 2
fi
if [[ "$stat" != median && "$stat" != min ]]; then
    echo "variance_check.sh: -s needs median or min, got '$stat'" >&2
    exit 2
fi
if [[ -n "$max_cv" ]] && ! [[ "$max_cv" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
    echo "variance_check.sh: -t needs a number (percent), got '$max_cv'" >&2
    exit 2
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
out="$tmp"
if [[ -n "$keep" ]]; then
    mkdir -p "$keep"
    out="$keep"
fi
for ((i = 1; i <= runs; i++)); do
    if ((i > 1 && gap > 0)); then
        sleep "$gap"
    fi
    echo "variance_check.sh: run $i of $runs" >&2
    if ! ./bench --output-format csv --color never --json "$out/run$i.json" "$@" >/dev/null; then
        echo "variance_check.sh: run $i failed" >&2
        exit 2
    fi
done
files=()
for ((i = 1; i <= runs; i++)); do
    files+=("$out/run$i.json")
done
python3 - "$max_cv" "$stat" "${files[@]}" <<'PY'
import json, math, statistics, sys
max_cv = float(sys.argv[1]) if sys.argv[1] else None
stat = sys.argv[2]
runs = [json.load(open(p)) for p in sys.argv[3:]]
med = [{b["id"]: b["estimates"]["median"]["point"] for b in r["benchmarks"]
        if b["status"] == "ok" and b["estimates"]["median"]["point"] > 0} for r in runs]
fast = [{b["id"]: b["estimates"]["min"]["point"] for b in r["benchmarks"]
         if b["status"] == "ok" and "min" in b["estimates"]} for r in runs]
ids = [i for i in med[0] if all(i in m for m in med) and all(i in f for f in fast)]
bounds = [{b["id"]: (b["estimates"]["median"]["lower"], b["estimates"]["median"]["upper"])
           for b in r["benchmarks"] if b["status"] == "ok"} for r in runs]
typical = {i: statistics.median(m[i] for m in med) for i in ids}
# each run's machine factor: the median over benchmarks of median / typical
factor = [math.exp(statistics.median(math.log(m[i] / typical[i]) for i in ids)) if ids else 1.0
          for m in med]
def cv(vals):
    m = statistics.mean(vals)
    return 100.0 * statistics.stdev(vals) / m if len(vals) > 1 and m > 0 else 0.0
worst = {"median": 0.0, "min": 0.0}
limit = max_cv if max_cv is not None else 5.0
within = {"median": 0, "min": 0}
covered = 0
print(f"{'benchmark':<40} {'runs':>4} {'median of medians':>18} {'CV median':>10} "
      f"{'CV min':>7} {'CV median without it':>21} {'covers':>7}")
for bid in ids:
    vals = [m[bid] for m in med]
    own = [m[bid] / f for m, f in zip(med, factor)]
    c, cf = cv(vals), cv([f[bid] for f in fast])
    worst["median"] = max(worst["median"], c)
    worst["min"] = max(worst["min"], cf)
    within["median"] += c <= limit
    within["min"] += cf <= limit
    cov = sum(b[bid][0] <= typical[bid] <= b[bid][1] for b in bounds)
    covered += cov
    print(f"{bid:<40} {len(vals):>4} {typical[bid]:>15.4g} ns {c:>9.2f}% {cf:>6.2f}% "
          f"{cv(own):>20.2f}% {cov:>3}/{len(vals):<3}")
print("machine factor per run: " + " ".join(f"{f:.3f}" for f in factor) +
      f" (CV {cv(factor):.2f}%)")
print(f"largest CV: median {worst['median']:.2f}%, min {worst['min']:.2f}%")
pairs = len(ids) * len(runs)
if pairs:
    print(f"interval coverage: {covered} of {pairs} (benchmark, run) intervals contain the median "
          f"of all runs' medians ({100.0 * covered / pairs:.1f}%)")
print(f"CV at most {limit:g}%: median {within['median']} of {len(ids)}, "
      f"min {within['min']} of {len(ids)}")
if max_cv is not None and worst[stat] > max_cv:
    print(f"variance_check.sh: a CV of the {stat} is above {max_cv}%", file=sys.stderr)
    sys.exit(1)
PY

#!/usr/bin/env bash
# Times the reference suite's default run (no flags) of two builds, alternating A, B, A, B, ...
# so that both see the same minutes of the machine: each run's wall time, seconds a measured
# benchmark, the median over the suite of its interval's half-width (% of the median), and the
# 1-minute load average before and after it, as a Markdown table, then each build's mean: the
# method of docs/measurement.md's default run against main ("Worker processes"), to take those
# numbers again. Nothing else may run the suite meanwhile; other load is the machine's.
#
# Usage:
#   scripts/experiments/suite_time_ab.sh A_PROGRAM B_PROGRAM [N] [DIR]
#       A_PROGRAM, B_PROGRAM  the two builds' benches/bench (e.g. main's, built in a worktree)
#       N    runs of each (default 4)
#       DIR  where each run's results file and output go (default build-suite-time-ab/)
# Exit: 0 done, 2 usage error.
set -euo pipefail
if (($# < 2 || $# > 4)); then
    echo "usage: suite_time_ab.sh A_PROGRAM B_PROGRAM [N] [DIR]" >&2
    exit 2
fi
a="$1"
b="$2"
n="${3:-4}"
dir="${4:-build-suite-time-ab}"
for p in "$a" "$b"; do
    if [[ ! -x "$p" ]]; then
        echo "suite_time_ab.sh: '$p' is not an executable program" >&2
        exit 2
    fi
done
if ! [[ "$n" =~ ^[0-9]+$ ]] || ((n < 1 || n > 100)); then
    echo "suite_time_ab.sh: '$n' is not a number of runs in [1, 100]" >&2
    exit 2
fi
mkdir -p "$dir"
log="$dir/runs.log"
: >"$log"
for i in $(seq "$n"); do
    for v in A B; do
        prog="$a"
        [[ "$v" == B ]] && prog="$b"
        l0="$(cut -d' ' -f1 /proc/loadavg)"
        s="$(date +%s.%N)"
        "$prog" --json "$dir/run_${v}_$i.json" >"$dir/run_${v}_$i.out" 2>&1 || true
        e="$(date +%s.%N)"
        l1="$(cut -d' ' -f1 /proc/loadavg)"
        echo "$v $i $s $e $l0 $l1" >>"$log"
    done
done
python3 - "$dir" <<'EOF'
import json, statistics, sys
d = sys.argv[1]
rows = []
for line in open(f'{d}/runs.log'):
    v, i, s, e, l0, l1 = line.split()
    res = json.load(open(f'{d}/run_{v}_{i}.json'))
    ok = [x for x in res['benchmarks'] if x['status'] == 'ok']
    hw = [(x['estimates']['median']['upper'] - x['estimates']['median']['lower']) / 2
          / x['estimates']['median']['point'] * 100 for x in ok]
    wall = float(e) - float(s)
    rows.append((v, i, wall, wall / max(len(ok), 1), statistics.median(hw) if hw else float('nan'),
                 l0, l1))
print('| run | build | wall s | s a benchmark | median half-width | load before, after |')
print('|---|---|---|---|---|---|')
for v, i, wall, spb, hw, l0, l1 in rows:
    print(f'| {i} | {v} | {wall:.1f} | {spb:.2f} | {hw:.1f}% | {l0}, {l1} |')
for v in ('A', 'B'):
    r = [x for x in rows if x[0] == v]
    print(f'{v}: {statistics.mean(x[3] for x in r):.2f} s a benchmark '
          f'({min(x[3] for x in r):.2f}-{max(x[3] for x in r):.2f}), median half-width '
          f'{statistics.mean(x[4] for x in r):.1f}% ({min(x[4] for x in r):.1f}-'
          f'{max(x[4] for x in r):.1f}%), means over {len(r)} runs')
EOF

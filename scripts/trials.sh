#!/usr/bin/env bash
# Measures how often the comparison modes are right on this machine: repeated A/A comparisons
# (nothing changed: any flag is a false alarm) and comparisons with an exact slowdown or speed-up
# injected into harness/known_cost_chain_1000 (a latency-bound chain, so N% more steps is N% more
# time). Builds its own variants under build-trials/.
#
# Usage: scripts/trials.sh baseline [RUNS] [FILTER]   saved-baseline mode: calibrate a baseline
#                                                     (10 processes), then RUNS A/A comparisons
#                                                     and RUNS with a 10% slowdown (default 30)
#        scripts/trials.sh ab [RUNS] [SECONDS]        interleaved mode: RUNS each of A/A, +3%
#                                                     and -3% (default 30 runs, 10 s)
# Prints one line per comparison and a tally. Exit: 0 done, 2 usage or build error.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
runs="${2:-30}"
dir=build-trials
target=harness/known_cost_chain_1000

variant() { # variant NAME STEPS: builds the suite with KNOWN_COST_STEPS=STEPS
    if ! { cmake -S . -B "$dir/$1" -DCMAKE_BUILD_TYPE=Release -DHARNESS_BUILD_TESTS=OFF \
        -DKNOWN_COST_STEPS="$2" && cmake --build "$dir/$1" -j "$(nproc)" --target bench; } \
        >"$dir/$1.log" 2>&1; then
        echo "trials.sh: building $1 failed (see $dir/$1.log)" >&2
        exit 2
    fi
}

mkdir -p "$dir"
case "$mode" in
    baseline)
        filter="${3:-^(harness/|workload/(vector|spreading|decay))}"
        variant base 1000
        variant slow10 1100
        bdir="$dir/baselines"
        rm -rf "$bdir"
        echo "trials.sh: calibrating baseline 'trial' over 10 processes"
        "$dir/base/benches/bench" --baseline-dir "$bdir" --save-baseline trial --calibrate 10 \
            --output-format csv "$filter" >/dev/null
        for kind in aa slow10; do
            prog="$dir/base/benches/bench"
            [[ "$kind" == slow10 ]] && prog="$dir/slow10/benches/bench"
            flagged=0 found=0 wrong=0
            for ((i = 1; i <= runs; i++)); do
                start=$(date +%s%N)
                out="$("$prog" --baseline-dir "$bdir" --baseline trial --output-format csv \
                    "$filter" 2>&1 >/dev/null || true)"
                ms=$((($(date +%s%N) - start) / 1000000))
                names="$(grep -E '^  (regressed|improved) ' <<<"$out" | awk '{print $1":"$2}' |
                    tr '\n' ' ' || true)"
                [[ -n "$names" ]] && flagged=$((flagged + 1))
                grep -Eq "^  regressed +$target " <<<"$out" && found=$((found + 1))
                others="$(grep -E '^  (regressed|improved) ' <<<"$out" | grep -vc " $target " ||
                    true)"
                [[ "$others" -gt 0 ]] && wrong=$((wrong + 1))
                printf '%s %2d  %d.%d s  flagged: %s\n' "$kind" "$i" $((ms / 1000)) \
                    $((ms % 1000 / 100)) "${names:-none}"
            done
            echo "TALLY $kind: $flagged/$runs runs flagged something; $found/$runs flagged" \
                "$target as regressed; $wrong/$runs flagged another benchmark"
        done
        ;;
    ab)
        seconds="${3:-10}"
        variant base 1000
        variant base2 1000
        variant slow3 1030
        variant fast3 970
        for kind in base2 slow3 fast3; do
            reg=0 imp=0 other=0
            for ((i = 1; i <= runs; i++)); do
                out="$("$dir/$kind/benches/bench" --ab "$dir/base/benches/bench" \
                    --ab-time "$seconds" --color never "^$target\$" || true)"
                line="$(grep -E "^  [a-z ]+ +$target " <<<"$out" | sed 's/  */ /g')"
                case "$line" in
                    " regressed"*) reg=$((reg + 1)) ;;
                    " improved"*) imp=$((imp + 1)) ;;
                    *) other=$((other + 1)) ;;
                esac
                echo "$kind $i:$line"
            done
            echo "TALLY $kind: $reg/$runs regressed, $imp/$runs improved, $other/$runs neither"
        done
        ;;
    *)
        sed -n '2,14p' "$0"
        exit 2
        ;;
esac

#!/usr/bin/env bash
# Measures how often the comparison modes are right on this machine: repeated A/A comparisons
# (nothing changed: any flag is a false alarm) and comparisons with an exact slowdown or speed-up
# injected into harness/known_cost_chain_1000 (a latency-bound chain, so N% more steps is N% more
# time). Builds its own variants under build-trials/.
#
# Usage: scripts/trials.sh baseline [RUNS] [GAP] [AA_FILTER] [AB_FILTER]
#                                      saved-baseline mode: saves two baselines, then runs RUNS
#                                      comparisons (default 10) each, all at least GAP seconds
#                                      (default 300) after the save: A/A, a separately built
#                                      identical program against the whole suite (AA_FILTER,
#                                      default .); A/B, a 10% and a 5% slowdown against ten
#                                      benchmarks (AB_FILTER). Suspects are confirmed against the
#                                      baseline's program snapshot, as users get; TRIALS_ARGS adds
#                                      options to every comparison (e.g. --confirm-time 0);
#                                      TRIALS_KINDS picks kinds (default "base2 slow10 slow5")
#        scripts/trials.sh ab [RUNS] [SECONDS]        interleaved mode: RUNS each of A/A, +3%
#                                                     and -3% (default 30 runs, 10 s)
# Prints one line per comparison and a tally. Exit: 0 done, 2 usage or build error.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
runs="${2:-}"
dir=build-trials
target=harness/known_cost_chain_1000
# Ten benchmarks of the reference suite, the slowed one among them, for the A/B trials.
ten='^(harness/(black_box_x64|empty|known_cost_chain_1000|memset/4096|memset/262144|'
ten+='qsort_1k_batched)|workload/(vector_similarity_1000|spreading_activation_1000|'
ten+='decay_10k_memories)|scaling/activation/1000)$'

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
        runs="${runs:-10}"
        gap="${3:-300}"
        aa_filter="${4:-.}"
        ab_filter="${5:-$ten}"
        variant base 1000
        variant base2 1000
        variant slow10 1100
        variant slow5 1050
        bdir="$dir/baselines"
        rm -rf "$bdir"
        echo "trials.sh: saving baselines 'suite' ($aa_filter) and 'ten' ($ab_filter)"
        "$dir/base/benches/bench" --baseline-dir "$bdir" --save-baseline suite \
            --output-format csv "$aa_filter" >/dev/null
        saved=$(date +%s)
        "$dir/base/benches/bench" --baseline-dir "$bdir" --save-baseline ten \
            --output-format csv "$ab_filter" >/dev/null
        # shellcheck disable=SC2086 # TRIALS_KINDS is a list of words
        for kind in ${TRIALS_KINDS:-base2 slow10 slow5}; do
            prog="$dir/$kind/benches/bench"
            name=ten filter="$ab_filter"
            [[ $kind == base2 ]] && name=suite filter="$aa_filter"
            flagged=0 found=0 wrong=0 total_ms=0 max_ms=0
            for ((i = 1; i <= runs; i++)); do
                wait_s=$((saved + gap - $(date +%s)))
                if ((wait_s > 0)); then
                    echo "trials.sh: waiting ${wait_s} s, so the comparisons start ${gap} s" \
                        "after the save"
                    sleep "$wait_s"
                fi
                start=$(date +%s%N)
                # shellcheck disable=SC2086 # TRIALS_ARGS is a list of options
                out="$("$prog" --baseline-dir "$bdir" --baseline "$name" --output-format csv \
                    ${TRIALS_ARGS:-} "$filter" 2>&1 >/dev/null || true)"
                ms=$((($(date +%s%N) - start) / 1000000))
                total_ms=$((total_ms + ms))
                ((ms > max_ms)) && max_ms=$ms
                names="$(grep -E '^  (regressed|improved) ' <<<"$out" | awk '{print $1":"$2}' |
                    tr '\n' ' ' || true)"
                [[ -n "$names" ]] && flagged=$((flagged + 1))
                grep -Eq "^  regressed +$target " <<<"$out" && found=$((found + 1))
                others="$(grep -E '^  (regressed|improved) ' <<<"$out" | grep -vc " $target " ||
                    true)"
                [[ "$others" -gt 0 ]] && wrong=$((wrong + 1))
                confirmed="$(grep -c '^bench: confirmed ' <<<"$out" || true)"
                printf '%s %2d  %d.%d s  %d confirmed  flagged: %s\n' "$kind" "$i" \
                    $((ms / 1000)) $((ms % 1000 / 100)) "$confirmed" "${names:-none}"
            done
            echo "TALLY $kind vs '$name': $flagged/$runs runs flagged something; $found/$runs" \
                "flagged $target as regressed; $wrong/$runs flagged another benchmark;" \
                "mean $((total_ms / runs / 1000)) s, longest $((max_ms / 1000)) s a comparison"
        done
        ;;
    ab)
        runs="${runs:-30}"
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
        sed -n '2,/^set -e/{/^#/p}' "$0"
        exit 2
        ;;
esac

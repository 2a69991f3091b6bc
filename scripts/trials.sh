#!/usr/bin/env bash
# Measures how often the comparison modes are right on this machine: repeated comparisons of
# programs whose difference is known exactly, counting the verdicts that are wrong (a benchmark
# that did not change called regressed or improved), those that stay undecided (inconclusive), and
# the real changes found. Builds its own variants under build-trials/ and prints one line per
# comparison, then a tally.
#
# Usage:
#   scripts/trials.sh ab [RUNS] [SECONDS]
#       Paired mode (--ab) on the ten benchmarks of benches/trials/trials.c, RUNS comparisons
#       (default 10) of each kind, --ab-time SECONDS (default 10). Kinds (TRIALS_KINDS picks some):
#         same       a separately built identical program under a longer file name (A/A)
#         unrelated  the same, with 80 bytes more code before the benchmarks' (an unrelated
#                    function): every benchmark's code moves off its cache-line alignment and
#                    must not be flagged
#         chain2     trial/chain does 2% more steps (latency-bound: exactly 2% more time)
#         chain1     trial/chain does 1% more steps
#         mem2       trial/scan_mem reads 2% more bytes (bandwidth-bound)
#       TRIALS_ARGS adds options to every comparison (e.g. --ab-schedule duet).
#       TRIALS_CMAKE_ARGS configures every variant with more CMake arguments, in
#       build-trials-args/ instead (e.g. -DHARNESS_ALIGN_FUNCTIONS=OFF: code placement's effect).
#   scripts/trials.sh outside [RUNS] [SECONDS]
#       A/A paired comparisons (--ab) of an outside project (benches/trials/outside: a library
#       under test built as its own static library, twenty benchmarks) installed against the
#       harness as a user installs it: two builds whose library code is byte-identical, the second
#       with 128 bytes (0x80) of unrelated code before it. RUNS comparisons (default 10) of each
#       kind, --ab-time SECONDS (default 3), with a busy loop on every CPU (TRIALS_LOAD=0: none).
#       Kinds (TRIALS_KINDS picks some): unaligned (the library without the placement flag),
#       aligned (the library linked with harness::align). Counts wrong verdicts, and the
#       benchmarks whose code identity is the same in both builds (no verdict on them) that the
#       numbers alone measured apart (their interval excludes 0%), with the load average.
#   scripts/trials.sh schedules [RUNS] [SECONDS]
#       A/A paired comparisons of the ten benchmarks with each --ab-schedule in turn (pinned,
#       duet, unpinned; the order rotates), RUNS rounds: the pair-to-pair sd per benchmark and
#       schedule, the verdicts, and the time.
#   scripts/trials.sh drift [RUNS] [T]
#       Saved-baseline mode after the machine drifted: the baseline of the ten benchmarks is saved
#       while a busy loop runs on every CPU, then RUNS comparisons each (no load) of a separately
#       built identical program and of one whose trial/chain is 5% slower. Counts "no change"
#       verdicts whose interval reaches beyond +-T (default 0.02, the default threshold): there must
#       be none. Suspects are confirmed against the baseline's program snapshot, as users get.
#   scripts/trials.sh baseline [RUNS] [GAP] [AA_FILTER] [AB_FILTER]
#       Saved-baseline mode on the reference suite: saves two baselines, then runs RUNS
#       comparisons (default 10) each, all at least GAP seconds (default 300) after the save: A/A,
#       a separately built identical program against the whole suite (AA_FILTER, default .); A/B,
#       a 10% and a 5% slowdown of harness/known_cost_chain_1000 against ten benchmarks
#       (AB_FILTER). TRIALS_KINDS picks kinds (default "base2 slow10 slow5").
# Exit: 0 done, 2 usage or build error.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
runs="${2:-}"
dir=build-trials${TRIALS_CMAKE_ARGS:+-args}
target=harness/known_cost_chain_1000
# Ten benchmarks of the reference suite, the slowed one among them, for the baseline trials.
ten='^(harness/(black_box_x64|empty|known_cost_chain_1000|memset/4096|memset/262144|'
ten+='qsort_1k_batched)|workload/(vector_similarity_1000|spreading_activation_1000|'
ten+='decay_10k_memories)|scaling/activation/1000)$'

variant() { # variant NAME TARGET CMAKE_DEFINITIONS...: builds TARGET of a variant
    local name="$1" tgt="$2"
    shift 2
    local -a more
    read -r -a more <<<"${TRIALS_CMAKE_ARGS:-}"
    if ! { cmake -S . -B "$dir/$name" -DCMAKE_BUILD_TYPE=Release -DHARNESS_BUILD_TESTS=OFF \
        ${more[@]+"${more[@]}"} "$@" && cmake --build "$dir/$name" -j "$(nproc)" --target "$tgt"; } \
        >"$dir/$name.log" 2>&1; then
        echo "trials.sh: building $name failed (see $dir/$name.log)" >&2
        exit 2
    fi
}

# trial_variant NAME FILE DEFINITIONS...: the trial program of a variant, copied to
# $dir/bin/FILE (file names of different lengths, as two real builds have).
trial_variant() {
    local name="$1" file="$2"
    shift 2
    variant "$name" trial_bench "$@"
    mkdir -p "$dir/bin"
    cp "$dir/$name/benches/trials/trial_bench" "$dir/bin/$file"
}

# The summary rows of a comparison's output: "verdict id change [lo, hi]".
rows() {
    grep -E '^  (regressed|improved|no change|within noise|inconclusive) .*\[' <<<"$1" |
        sed -E 's/^  (no change|within noise|not compared|[a-z]+) +([^ ]+) +([^ ]+) \[([^,]+), ([^]]+)\].*/\1|\2|\3|\4|\5/' ||
        true
}

# The same-code rows (both builds' code identity equal: never a verdict) whose interval excludes
# 0%, that is what the numbers alone would have called a change: "id(+4.18%) ...", and a count.
same_code_moved() { # same_code_moved OUTPUT
    local lines
    lines="$(grep -F '(same code: measured' <<<"$1" || true)"
    rows "$lines" | awk -F'|' '{ lo = $4; hi = $5; sub("%", "", lo); sub("%", "", hi)
        if (lo + 0 > 0 || hi + 0 < 0) { n++; s = s $2 "(" $3 ") " } }
        END { printf "%d %s\n", n + 0, s }'
}

# Tally of one comparison's rows against the benchmark that really changed (or none):
# prints "wrong inconclusive found" and the flagged ids.
judge() { # judge OUTPUT CHANGED
    local out="$1" changed="$2" wrong=0 undecided=0 found=0 names=""
    while IFS='|' read -r verdict id _ _ _; do
        [[ -z "$verdict" ]] && continue
        if [[ "$id" == "$changed" ]]; then
            [[ "$verdict" == regressed ]] && found=1
            continue
        fi
        case "$verdict" in
            regressed | improved)
                wrong=$((wrong + 1))
                names+="$id($verdict) "
                ;;
            inconclusive)
                undecided=$((undecided + 1))
                names+="$id(inconclusive) "
                ;;
        esac
    done <<<"$(rows "$out")"
    echo "$wrong $undecided $found ${names:-}"
}

mkdir -p "$dir"
case "$mode" in
    ab)
        runs="${runs:-10}"
        seconds="${3:-10}"
        trial_variant base trial_a
        trial_variant same trial_b_built_again_with_a_longer_name
        trial_variant unrelated trial_b_unrelated -DTRIAL_UNRELATED_PAD=80
        trial_variant chain2 trial_b_chain2 -DTRIAL_CHAIN_PERMILLE=1020
        trial_variant chain1 trial_b_chain1 -DTRIAL_CHAIN_PERMILLE=1010
        trial_variant mem2 trial_b_mem2 -DTRIAL_SCAN_PERMILLE=1020
        # shellcheck disable=SC2086 # TRIALS_KINDS is a list of words
        for kind in ${TRIALS_KINDS:-same unrelated chain2 chain1 mem2}; do
            case "$kind" in
                same) prog=trial_b_built_again_with_a_longer_name changed="" ;;
                unrelated) prog=trial_b_unrelated changed="" ;;
                chain2 | chain1) prog="trial_b_$kind" changed=trial/chain ;;
                mem2) prog=trial_b_mem2 changed=trial/scan_mem ;;
                *)
                    echo "trials.sh: unknown kind '$kind'" >&2
                    exit 2
                    ;;
            esac
            wrong_total=0 undecided_total=0 found_total=0 wrong_runs=0 total_ms=0
            for ((i = 1; i <= runs; i++)); do
                start=$(date +%s%N)
                # shellcheck disable=SC2086 # TRIALS_ARGS is a list of options
                out="$("$dir/bin/$prog" --ab "$dir/bin/trial_a" --ab-time "$seconds" \
                    --color never ${TRIALS_ARGS:-} 2>/dev/null || true)"
                ms=$((($(date +%s%N) - start) / 1000000))
                total_ms=$((total_ms + ms))
                read -r wrong undecided found names <<<"$(judge "$out" "$changed")"
                wrong_total=$((wrong_total + wrong))
                undecided_total=$((undecided_total + undecided))
                found_total=$((found_total + found))
                ((wrong > 0)) && wrong_runs=$((wrong_runs + 1))
                target_row="$(rows "$out" | grep -F "|${changed:-none}|" || true)"
                printf '%s %2d  %d s  wrong %d  inconclusive %d  %s %s\n' "$kind" "$i" \
                    $((ms / 1000)) "$wrong" "$undecided" "${target_row:+$target_row }" \
                    "${names:-}"
            done
            others=$((runs * 9))
            [[ -z "$changed" ]] && others=$((runs * 10))
            echo "TALLY $kind: $wrong_total wrong verdicts of $others on unchanged benchmarks" \
                "($wrong_runs/$runs comparisons with one), $undecided_total/$others" \
                "inconclusive${changed:+, $changed found regressed in $found_total/$runs};" \
                "mean $((total_ms / runs / 1000)) s a comparison of 10 benchmarks"
        done
        ;;
    outside)
        runs="${runs:-10}"
        seconds="${3:-3}"
        prefix="$PWD/$dir/prefix"
        variant install all -DHARNESS_BUILD_SUITE=OFF -DHARNESS_CUDA=OFF
        cmake --install "$dir/install" --prefix "$prefix" >"$dir/install.log" 2>&1 || {
            echo "trials.sh: installing the harness failed (see $dir/install.log)" >&2
            exit 2
        }
        mkdir -p "$dir/bin"
        for align in OFF ON; do
            for pad in 0 128; do
                name="outside_align${align}_pad$pad"
                if ! { cmake -S benches/trials/outside -B "$dir/$name" -DCMAKE_BUILD_TYPE=Release \
                    -DCMAKE_PREFIX_PATH="$prefix" -DOUTSIDE_ALIGN="$align" -DOUTSIDE_PAD="$pad" &&
                    cmake --build "$dir/$name" -j "$(nproc)"; } >"$dir/$name.log" 2>&1; then
                    echo "trials.sh: building $name failed (see $dir/$name.log)" >&2
                    exit 2
                fi
                cp "$dir/$name/outside_bench" "$dir/bin/$name"
            done
        done
        hogs=()
        if [[ "${TRIALS_LOAD:-1}" != 0 ]]; then
            for ((c = 0; c < $(nproc); c++)); do
                (while :; do :; done) &
                hogs+=($!)
            done
            trap 'kill "${hogs[@]}" 2>/dev/null || true' EXIT
        fi
        # shellcheck disable=SC2086 # TRIALS_KINDS is a list of words
        for kind in ${TRIALS_KINDS:-unaligned aligned}; do
            case "$kind" in
                unaligned) align=OFF ;;
                aligned) align=ON ;;
                *)
                    echo "trials.sh: unknown kind '$kind'" >&2
                    exit 2
                    ;;
            esac
            a="$dir/bin/outside_align${align}_pad0" b="$dir/bin/outside_align${align}_pad128"
            wrong_total=0 undecided_total=0 wrong_runs=0 total_ms=0 moved_total=0
            for ((i = 1; i <= runs; i++)); do
                start=$(date +%s%N)
                # shellcheck disable=SC2086 # TRIALS_ARGS is a list of options
                out="$("$b" --ab "$a" --ab-time "$seconds" --color never ${TRIALS_ARGS:-} \
                    2>/dev/null || true)"
                ms=$((($(date +%s%N) - start) / 1000000))
                total_ms=$((total_ms + ms))
                read -r wrong undecided _ names <<<"$(judge "$out" "")"
                read -r moved moved_names <<<"$(same_code_moved "$out")"
                wrong_total=$((wrong_total + wrong))
                undecided_total=$((undecided_total + undecided))
                moved_total=$((moved_total + moved))
                ((wrong > 0)) && wrong_runs=$((wrong_runs + 1))
                printf '%s %2d  %d s  wrong %d  inconclusive %d  %s%s\n' "$kind" "$i" \
                    $((ms / 1000)) "$wrong" "$undecided" "${names:-}" \
                    "${moved_names:+ same code, measured apart: $moved_names}"
            done
            echo "TALLY $kind: $wrong_total wrong verdicts of $((runs * 20)) ($wrong_runs/$runs" \
                "comparisons with one), $undecided_total inconclusive, $moved_total same-code" \
                "benchmarks measured apart (no verdict); load $(cut -d' ' -f1-3 /proc/loadavg);" \
                "mean $((total_ms / runs / 1000)) s a comparison of 20 benchmarks"
        done
        ;;
    schedules)
        runs="${runs:-3}"
        seconds="${3:-10}"
        trial_variant base trial_a
        trial_variant same trial_b_built_again_with_a_longer_name
        schedules=(pinned duet unpinned)
        for ((i = 1; i <= runs; i++)); do
            for ((k = 0; k < 3; k++)); do
                s="${schedules[$(((i + k) % 3))]}"
                start=$(date +%s%N)
                out="$("$dir/bin/trial_b_built_again_with_a_longer_name" --ab "$dir/bin/trial_a" \
                    --ab-time "$seconds" --ab-schedule "$s" --color never 2>/dev/null || true)"
                ms=$((($(date +%s%N) - start) / 1000000))
                read -r wrong undecided _ names <<<"$(judge "$out" "")"
                # "id sd" per benchmark, from the lines under each id.
                sds="$(awk '/^trial\// {id=$1} /pair-to-pair sd/ {
                    for (j = 1; j <= NF; j++) if ($j == "sd") { v = $(j + 1); sub(",", "", v)
                    printf "%s=%s ", substr(id, 7), v } }' <<<"$out")"
                printf '%-8s %d  %d s  wrong %d  inconclusive %d  sd: %s\n' "$s" "$i" \
                    $((ms / 1000)) "$wrong" "$undecided" "$sds"
            done
        done
        ;;
    drift)
        runs="${runs:-5}"
        threshold="${3:-0.02}"
        trial_variant base trial_a
        trial_variant same trial_b_built_again_with_a_longer_name
        trial_variant chain5 trial_b_chain5 -DTRIAL_CHAIN_PERMILLE=1050
        bdir="$dir/baselines"
        rm -rf "$bdir"
        echo "trials.sh: saving baseline 'ten' while a busy loop runs on each of $(nproc) CPUs"
        hogs=()
        for ((c = 0; c < $(nproc); c++)); do
            (while :; do :; done) &
            hogs+=($!)
        done
        "$dir/bin/trial_a" --baseline-dir "$bdir" --save-baseline ten --output-format csv \
            >/dev/null 2>&1 || true
        kill "${hogs[@]}" 2>/dev/null || true
        wait "${hogs[@]}" 2>/dev/null || true
        for kind in same chain5; do
            prog=trial_b_built_again_with_a_longer_name changed=""
            [[ $kind == chain5 ]] && prog=trial_b_chain5 changed=trial/chain
            wrong_total=0 found=0 wide=0 total_ms=0
            for ((i = 1; i <= runs; i++)); do
                start=$(date +%s%N)
                out="$("$dir/bin/$prog" --baseline-dir "$bdir" --baseline ten --color never \
                    2>&1 || true)"
                ms=$((($(date +%s%N) - start) / 1000000))
                total_ms=$((total_ms + ms))
                read -r wrong undecided f names <<<"$(judge "$out" "$changed")"
                wrong_total=$((wrong_total + wrong))
                found=$((found + f))
                # "no change" with an interval wider than +-T: the claim this mode must not make
                bad="$(rows "$out" | awk -F'|' -v t="$threshold" '$1 == "no change" {
                    lo = $4; hi = $5; sub("%", "", lo); sub("%", "", hi)
                    if (lo / 100 < -t - 1e-9 || hi / 100 > t + 1e-9) n++ } END { print n + 0 }')"
                wide=$((wide + bad))
                confirmed="$(grep -c "^${prog##*/}: confirmed " <<<"$out" || true)"
                printf '%s %2d  %d s  %d confirmed  wrong %d  inconclusive %d  wide no-change %d' \
                    "$kind" "$i" $((ms / 1000)) "$confirmed" "$wrong" "$undecided" "$bad"
                printf '  %s\n' "$(rows "$out" | grep -F "|${changed:-none}|" || true) ${names:-}"
            done
            echo "TALLY drift $kind: $wrong_total wrong verdicts, $wide 'no change' wider than" \
                "+-$threshold${changed:+, $changed found regressed in $found/$runs}; mean" \
                "$((total_ms / runs / 1000)) s a comparison"
        done
        ;;
    baseline)
        runs="${runs:-10}"
        gap="${3:-300}"
        aa_filter="${4:-.}"
        ab_filter="${5:-$ten}"
        variant base bench -DKNOWN_COST_STEPS=1000
        variant base2 bench -DKNOWN_COST_STEPS=1000
        variant slow10 bench -DKNOWN_COST_STEPS=1100
        variant slow5 bench -DKNOWN_COST_STEPS=1050
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
            name=ten filter="$ab_filter" changed="$target"
            [[ $kind == base2 ]] && name=suite filter="$aa_filter" changed=""
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
                out="$("$prog" --baseline-dir "$bdir" --baseline "$name" --color never \
                    ${TRIALS_ARGS:-} "$filter" 2>&1 || true)"
                ms=$((($(date +%s%N) - start) / 1000000))
                total_ms=$((total_ms + ms))
                ((ms > max_ms)) && max_ms=$ms
                read -r w undecided f names <<<"$(judge "$out" "$changed")"
                ((w + f > 0)) && flagged=$((flagged + 1))
                found=$((found + f))
                ((w > 0)) && wrong=$((wrong + 1))
                confirmed="$(grep -c "^${prog##*/}: confirmed " <<<"$out" || true)"
                printf '%s %2d  %d.%d s  %d confirmed  inconclusive %d  flagged: %s\n' "$kind" \
                    "$i" $((ms / 1000)) $((ms % 1000 / 100)) "$confirmed" "$undecided" \
                    "${names:-none}"
            done
            echo "TALLY $kind vs '$name': $flagged/$runs runs flagged something; $found/$runs" \
                "flagged $target as regressed; $wrong/$runs flagged another benchmark;" \
                "mean $((total_ms / runs / 1000)) s, longest $((max_ms / 1000)) s a comparison"
        done
        ;;
    *)
        sed -n '2,/^set -e/{/^#/p}' "$0"
        exit 2
        ;;
esac

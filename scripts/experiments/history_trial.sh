#!/usr/bin/env bash
# Measures the run history on this machine with a change whose place and size are known: N1 runs
# of the ten benchmarks of benches/trials/trials.c, then N2 runs of a separately built program
# whose trial/chain does 5% more steps (exactly 5% more time, latency-bound), all into one new
# history. Each run is judged with --history-gate as it is recorded (its lines are printed);
# at the end --history-show --history-confirm prints every series with its change points and
# trends, then checks each change point by running the programs of the runs on both sides of it
# again, paired. The change point of trial/chain belongs at the first slow run and should be
# confirmed; one elsewhere (the machine's drift) should not be.
#
# Usage:
#   scripts/experiments/history_trial.sh [N1] [N2]
#       N1 runs of the base program (default 11), then N2 of the slowed one (default 9).
#   HISTORY_TRIAL_ARGS   options for every run (default: --measurement-time 1 --warm-up-time 0.2)
#   HISTORY_TRIAL_GATE   --history-gate's K (default 10; 0: no gate)
#   HISTORY_TRIAL_DB     the history file (default build-history-trial/history.db; it and the
#                        programs kept beside it are removed first)
#   HISTORY_TRIAL_CONFIRM  seconds of the paired run per change point (default 10)
# The variants are built under build-history-trial/. Exit: 0 done, 2 usage or build error.
set -euo pipefail
cd "$(dirname "$0")/../.."
n1="${1:-11}"
n2="${2:-9}"
gate="${HISTORY_TRIAL_GATE:-10}"
dir=build-history-trial
db="${HISTORY_TRIAL_DB:-$dir/history.db}"
for n in "$n1" "$n2" "$gate"; do
    if ! [[ "$n" =~ ^[0-9]+$ ]] || ((n > 1000)); then
        echo "history_trial.sh: '$n' is not a number of runs in [0, 1000]" >&2
        exit 2
    fi
done
if ((gate > 0 && gate < 5)); then
    echo "history_trial.sh: HISTORY_TRIAL_GATE '$gate' is not 0 or in [5, 1000]" >&2
    exit 2
fi
read -r -a args <<<"${HISTORY_TRIAL_ARGS:---measurement-time 1 --warm-up-time 0.2}"
if ((gate > 0)); then
    args+=(--history-gate "$gate")
fi

build() { # build NAME CMAKE_DEFINITIONS...: the trial program of a variant, in $dir/NAME
    local name="$1"
    shift
    if ! { cmake -S . -B "$dir/$name" -DCMAKE_BUILD_TYPE=Release -DHARNESS_BUILD_TESTS=OFF "$@" &&
        cmake --build "$dir/$name" -j "$(nproc)" --target trial_bench; } >"$dir/$name.log" 2>&1
    then
        echo "history_trial.sh: building $name failed (see $dir/$name.log)" >&2
        exit 2
    fi
}

# runs PROGRAM COUNT LABEL: COUNT runs of PROGRAM into the history, one line each.
done_runs=0
runs() {
    local prog="$1" count="$2" label="$3" i rc err
    for ((i = 0; i < count; i++)); do
        done_runs=$((done_runs + 1))
        err="$dir/run.err"
        rc=0
        "$prog" --history "$db" --output-format csv "${args[@]}" >/dev/null 2>"$err" || rc=$?
        echo "run $done_runs ($label): exit $rc"
        grep -E 'history gate:|regressed against|slowing trend|confirm|not reproduced|not a code change|inconclusive' "$err" | sed 's/^/    /' || true
        if ((rc == 2 || rc == 3)); then
            echo "history_trial.sh: run $done_runs failed:" >&2
            cat "$err" >&2
            exit 2
        fi
    done
}

mkdir -p "$dir"
build base
build chain5 -DTRIAL_CHAIN_PERMILLE=1050
rm -rf "$db" "$db-wal" "$db-shm" "$db.programs"
echo "history_trial.sh: $n1 runs of the base program, then $n2 with trial/chain 5% slower" \
    "(the first slow run is run $((n1 + 1))), into $db"
runs "$dir/base/benches/trials/trial_bench" "$n1" base
runs "$dir/chain5/benches/trials/trial_bench" "$n2" "trial/chain +5%"
echo
"$dir/base/benches/trials/trial_bench" --history-show "$db" --history-confirm \
    --confirm-time "${HISTORY_TRIAL_CONFIRM:-10}"

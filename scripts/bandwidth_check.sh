#!/usr/bin/env bash
# Puts the similarity kernel's effective bandwidth against the read probe's over a buffer of the
# same size, measured in the same run: scaling/similarity/N against scaling/read_probe/N.
#
# Usage: scripts/bandwidth_check.sh [MIN_FRACTION] [-- BENCH_ARGS...]   (default 0.70)
# Exit: 0 every size at or above MIN_FRACTION, 1 one below it, 2 usage error or a failed run.
set -euo pipefail
cd "$(dirname "$0")/.."
min="${1:-0.70}"
[[ $# -gt 0 ]] && shift
[[ "${1:-}" == "--" ]] && shift
if ! [[ "$min" =~ ^[0-9]*[.]?[0-9]+$ ]]; then
    echo "bandwidth_check.sh: MIN_FRACTION must be a number, got '$min'" >&2
    exit 2
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if ! ./bench --output-format csv --json "$tmp/run.json" "$@" '^scaling/(similarity|read_probe)/' \
    >/dev/null; then
    echo "bandwidth_check.sh: the benchmark run failed" >&2
    exit 2
fi
python3 - "$min" "$tmp/run.json" <<'PY'
import json, sys
minimum = float(sys.argv[1])
res = {b["id"]: b for b in json.load(open(sys.argv[2]))["benchmarks"] if b["status"] == "ok"}
def gbps(b):
    return b["throughput"]["bytes_per_iteration"] / b["estimates"]["median"]["point"]
worst = None
print(f"{'candidates':>10} {'MB':>8} {'similarity GB/s':>16} {'probe GB/s':>11} {'fraction':>9}")
for n in (1000, 10000, 100000):
    s, p = res.get(f"scaling/similarity/{n}"), res.get(f"scaling/read_probe/{n}")
    if not s or not p:
        print(f"bandwidth_check.sh: missing results for {n} candidates", file=sys.stderr)
        sys.exit(2)
    f = gbps(s) / gbps(p)
    worst = f if worst is None else min(worst, f)
    mb = s["throughput"]["bytes_per_iteration"] / 1e6
    print(f"{n:>10} {mb:>8.1f} {gbps(s):>16.2f} {gbps(p):>11.2f} {f:>9.2f}")
sys.exit(0 if worst >= minimum else 1)
PY

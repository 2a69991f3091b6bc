#!/usr/bin/env python3
"""Ranks the functions of a folded profile (scripts/stackcollapse.py) by self and inclusive
share of the samples, and splits the samples of the reference workload into its phases.

Usage: scripts/hotspots.py FOLDED [-n TOP] [-o JSON] [--event E] [--target T] [--frequency HZ]
                                  [--phase-wall FILE]
  FOLDED           folded stacks ("root;...;leaf COUNT" per line)
  -n TOP           how many functions to list (default 10)
  -o JSON          also write the figures as JSON (tmp/hotspots.json for make_report.py)
  --event, --target, --frequency   recorded in the JSON as they were given (what was sampled)
  --phase-wall FILE  the stdout of wl_profile, whose per-phase wall times are recorded beside
                   the sample shares as a cross-check
Prints two tables (self and inclusive) and the phase table. Exit: 0 ok, 2 bad input.

Self share: samples whose leaf (innermost frame) is the function, over all samples. Inclusive
share: samples with the function anywhere on the stack (counted once per sample, however often
it recurses), over all samples.

Phases (docs/profiling.md): a sample belongs to the phase of the outermost frame on its stack
(root first) that is one of the phase functions below. The `wl__profile_phase_*` functions are
out of line on purpose; the operation functions are listed too because the compiler may turn a
phase's call into a tail call, which removes the phase frame from the stack (wl_decay_apply
jumps to its SIMD kernel, so the kernels decay_avx2 and decay_scalar are listed too). Samples
with some other `wl_` frame (e.g. wl_graph_free, wl_profile_run_params itself) are "workload,
other"; samples with no `wl_` frame at all (process start, the harness, the kernel's exec) are
"outside the workload" and are not part of the phases' shares of the workload.
"""
import argparse
import collections
import json
import re
import sys

PHASES = [
    ("graph build", ("wl__profile_phase_build", "wl_graph_new")),
    ("activation", ("wl__profile_phase_activation", "wl_activation_spread")),
    ("similarity", ("wl__profile_phase_similarity", "wl_similarity_topk",
                    "wl_similarity_topk_batch")),
    ("decay", ("wl__profile_phase_decay", "wl_graph_decay", "wl_decay_apply", "decay_avx2",
               "decay_scalar")),
]
OTHER_WL = "workload, other"
OUTSIDE = "outside the workload"
PHASE_OF = {fn: phase for phase, fns in PHASES for fn in fns}
WALL_LINE = re.compile(r"^(build|activation|similarity|decay|total)\s+([0-9.]+) ms")
WALL_NAMES = {"build": "graph build", "activation": "activation", "similarity": "similarity",
              "decay": "decay", "total": "total"}


def read_folded(path):
    """[(frames, count)] of a folded file; raises ValueError naming the first bad line."""
    stacks = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                raise ValueError(f"{path}:{no}: not 'frame;frame;... COUNT'")
            stacks.append((stack.split(";"), int(count)))
    if not stacks:
        raise ValueError(f"{path}: no samples")
    return stacks


def phase_of(frames):
    for fr in frames:
        if fr in PHASE_OF:
            return PHASE_OF[fr]
    if any(fr.startswith("wl_") for fr in frames):
        return OTHER_WL
    return OUTSIDE


def analyse(stacks, top):
    total = sum(c for _, c in stacks)
    self_c, incl_c, phase_c = collections.Counter(), collections.Counter(), collections.Counter()
    leaf_phase = collections.defaultdict(collections.Counter)
    kernel = unknown = 0
    for frames, c in stacks:
        leaf = frames[-1]
        self_c[leaf] += c
        for fr in set(frames):
            incl_c[fr] += c
        ph = phase_of(frames)
        phase_c[ph] += c
        leaf_phase[leaf][ph] += c
        if leaf.endswith("_[k]"):
            kernel += c
        if leaf.startswith("["):
            unknown += c

    def ranked(counter, with_phase=False):
        rows = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        out = [{"function": k, "samples": v, "percent": 100.0 * v / total} for k, v in rows]
        if with_phase:
            for r in out:
                # the phase that holds most of the function's self samples
                r["phase"] = leaf_phase[r["function"]].most_common(1)[0][0]
        return out

    workload = total - phase_c[OUTSIDE]
    phases = []
    for name in [p for p, _ in PHASES] + [OTHER_WL, OUTSIDE]:
        n = phase_c[name]
        phases.append({
            "phase": name,
            "samples": n,
            "percent_of_all": 100.0 * n / total,
            "percent_of_workload": (100.0 * n / workload) if workload and name != OUTSIDE
            else None,
        })
    return {
        "total_samples": total,
        "kernel_leaf_samples": kernel,
        "unnamed_leaf_samples": unknown,
        "self": ranked(self_c, with_phase=True),
        "inclusive": ranked(incl_c),
        "phases": phases,
        "phase_mapping": {p: list(fns) for p, fns in PHASES},
    }


def read_wall(path):
    """Per-phase wall times (s) from wl_profile's output; {} when absent or unreadable."""
    out = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = WALL_LINE.match(line.strip())
                if m:
                    out[WALL_NAMES[m.group(1)]] = float(m.group(2)) / 1e3
    except OSError:
        return {}
    return out


def main():
    ap = argparse.ArgumentParser(description="Top functions and workload phases of a profile.")
    ap.add_argument("folded")
    ap.add_argument("-n", "--top", type=int, default=10)
    ap.add_argument("-o", "--output")
    ap.add_argument("--event", default="")
    ap.add_argument("--target", default="")
    ap.add_argument("--frequency", type=int, default=0)
    ap.add_argument("--phase-wall")
    a = ap.parse_args()
    if a.top < 1:
        print("hotspots.py: -n needs a positive integer", file=sys.stderr)
        return 2
    try:
        stacks = read_folded(a.folded)
    except (OSError, ValueError) as e:
        msg = f"{a.folded}: {e.strerror}" if isinstance(e, OSError) else str(e)
        print(f"hotspots.py: {msg}", file=sys.stderr)
        return 2
    res = analyse(stacks, a.top)
    res.update({"event": a.event, "target": a.target, "frequency_hz": a.frequency})
    if a.phase_wall:
        res["phase_wall_s"] = read_wall(a.phase_wall)
    total = res["total_samples"]
    print(f"{total} samples ({a.event or 'event not given'}) of {a.target or 'the target'}")
    for key, title in (("self", "self"), ("inclusive", "inclusive")):
        print(f"\ntop {len(res[key])} functions by {title} share")
        print(f"{'%':>7} {'samples':>9}  function")
        for row in res[key]:
            print(f"{row['percent']:6.2f}% {row['samples']:>9}  {row['function']}")
    print("\nworkload phases (outermost phase function on the stack)")
    print(f"{'phase':<22} {'samples':>9} {'% all':>7} {'% workload':>11}")
    for p in res["phases"]:
        pw = p["percent_of_workload"]
        pw_s = f"{pw:10.2f}%" if pw is not None else f"{'':>11}"
        print(f"{p['phase']:<22} {p['samples']:>9} {p['percent_of_all']:6.2f}% {pw_s}")
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

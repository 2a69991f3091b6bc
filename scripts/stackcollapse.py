#!/usr/bin/env python3
"""Folds the text of `perf script` into one line per distinct call stack: the frames from the
root to the leaf joined by ';', a space, and the number of samples with that stack. That is the
"folded" format flamegraph.py and hotspots.py read (and Brendan Gregg's FlameGraph tools too).

Usage: scripts/stackcollapse.py [PERF_SCRIPT_TEXT] [-o FOLDED] [--comm]
  PERF_SCRIPT_TEXT  the output of `perf script` (default: standard input)
  -o FOLDED         where to write (default: standard output)
  --comm            put the process name at the root of every stack

Frames are named by symbol, without the +0x offset. A frame perf could not name is
`[unknown]`, or `[DSO]` when the shared object is known (e.g. `[libc.so.6]`); kernel frames get
the suffix `_[k]`. The 0-address `[unknown]` that ends a frame-pointer chain is dropped: it is
the end of the walk, not a function. A sample with no frame at all becomes `[no stack]`. A ';'
in a name becomes ':' (it is the separator). Lines are sorted, so the output is deterministic.
Exit: 0 ok, 2 unreadable input or no sample in it.
"""
import argparse
import collections
import os
import re
import sys

HEADER = re.compile(r"^\S")           # a sample's header line starts in column 0
FRAME = re.compile(r"^\s+([0-9a-fA-F]+)\s+(.*)$")
OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")


def frame_name(addr, rest):
    """The folded name of one frame line of perf script: 'SYM+0xOFF (DSO)'."""
    sym, dso = rest, ""
    cut = rest.rfind(" (")
    if cut >= 0 and rest.endswith(")"):
        sym, dso = rest[:cut], rest[cut + 2:-1]
    sym = OFFSET.sub("", sym.strip())
    kernel = dso.startswith("[kernel") or dso.startswith("[guest.kernel")
    if not sym or sym == "[unknown]":
        if int(addr, 16) == 0 and dso in ("", "[unknown]"):
            return None  # the end of a frame-pointer chain
        base = os.path.basename(dso) if dso and dso != "[unknown]" else ""
        sym = f"[{base}]" if base else "[unknown]"
    sym = sym.replace(";", ":")
    return sym + "_[k]" if kernel else sym


def collapse(lines, with_comm=False):
    """Counts of folded stacks (root first) in perf script text."""
    counts = collections.Counter()
    comm, frames, in_sample = None, [], False

    def flush():
        stack = list(reversed(frames)) or ["[no stack]"]
        if with_comm and comm:
            stack.insert(0, comm.replace(";", ":"))
        counts[";".join(stack)] += 1

    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            if in_sample:
                flush()
            frames, in_sample = [], False
            continue
        if HEADER.match(line):
            if in_sample:
                flush()
            frames, in_sample = [], True
            # "comm pid [cpu] time: period event:": the name may contain spaces; the pid is
            # the first all-digit field (optionally pid/tid).
            parts = line.split()
            idx = next((i for i, p in enumerate(parts) if re.fullmatch(r"\d+(/\d+)?", p)), 1)
            comm = " ".join(parts[:idx]) or parts[0]
            continue
        m = FRAME.match(line)
        if m and in_sample:
            name = frame_name(m.group(1), m.group(2))
            if name is not None:
                frames.append(name)
    if in_sample:
        flush()
    return counts


def main():
    ap = argparse.ArgumentParser(description="Fold perf script output into stacks.")
    ap.add_argument("input", nargs="?", help="perf script text (default: stdin)")
    ap.add_argument("-o", "--output", help="folded output file (default: stdout)")
    ap.add_argument("--comm", action="store_true", help="process name as the root frame")
    a = ap.parse_args()
    try:
        if a.input:
            with open(a.input, encoding="utf-8", errors="replace") as f:
                counts = collapse(f, a.comm)
        else:
            counts = collapse(sys.stdin, a.comm)
    except OSError as e:
        print(f"stackcollapse.py: {a.input}: {e.strerror}", file=sys.stderr)
        return 2
    if not counts:
        print(f"stackcollapse.py: no samples in {a.input or 'standard input'}", file=sys.stderr)
        return 2
    text = "".join(f"{k} {v}\n" for k, v in sorted(counts.items()))
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

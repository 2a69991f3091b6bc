#!/usr/bin/env python3
"""Summarises a heap profile and a leak check for scripts/profile_memory.sh: prints a short
summary and writes it as JSON (tmp/memory.json, read by make_report.py).

Usage: scripts/memory_summary.py --target T [--heaptrack TEXT | --dhat JSON] [--memcheck LOG]
                                 [-n TOP] [-o JSON]
  --heaptrack TEXT  the output of `heaptrack_print -f FILE` (summary and peak consumers)
  --dhat JSON       valgrind's DHAT output file (dhat.out.*), used when heaptrack is absent
  --note TEXT       a remark on how the profile was taken (printed and kept in the JSON)
  --memcheck LOG    valgrind memcheck's --log-file with --leak-check=full
  -n TOP            allocation sites to list (default 5)
Exit: 0 ok; 1 memcheck found memory errors or definitely/indirectly lost bytes; 2 bad input.

Byte figures are in bytes. heaptrack prints sizes with decimal prefixes (K = 1000), which are
converted back, so they carry heaptrack's rounding (about 3 significant digits).
"""
import argparse
import json
import os
import re
import sys

UNITS = {"B": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def size_bytes(text):
    m = re.fullmatch(r"([0-9.]+)\s*([BKMGT])?", text.strip())
    if not m:
        raise ValueError(f"not a size: {text!r}")
    return float(m.group(1)) * UNITS[m.group(2) or "B"]


def parse_heaptrack(path, top):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    out = {"tool": "heaptrack"}
    patterns = {
        "allocation_calls": r"^calls to allocation functions: (\d+)",
        "temporary_allocations": r"^temporary memory allocations: (\d+)",
        "peak_heap_bytes": r"^peak heap memory consumption: (\S+)",
        "peak_rss_bytes": r"^peak RSS \(including heaptrack overhead\): (\S+)",
        "leaked_bytes": r"^total memory leaked: (\S+)",
        "runtime_s": r"^total runtime: ([0-9.]+)s",
    }
    for key, pat in patterns.items():
        for line in lines:
            m = re.match(pat, line)
            if m:
                v = m.group(1)
                if key.endswith("_bytes"):
                    out[key] = size_bytes(v)
                elif key == "runtime_s":
                    out[key] = float(v)
                else:
                    out[key] = int(v)
                break
    if "peak_heap_bytes" not in out:
        raise ValueError(f"{path}: no 'peak heap memory consumption' line (not heaptrack_print "
                         "output?)")
    # "PEAK MEMORY CONSUMERS": "31.28M peak memory consumed over 7 calls from", then the
    # allocating function (column 0) with "  at FILE:LINE" and its caller.
    sites, section = [], None
    for i, line in enumerate(lines):
        if line.startswith("PEAK MEMORY CONSUMERS"):
            section = "peak"
            continue
        if section == "peak" and re.match(r"^[A-Z ]{6,}$", line):
            break
        m = re.match(r"^(\S+) peak memory consumed over (\d+) calls from$", line)
        if section == "peak" and m:
            frames = []
            for nxt in lines[i + 1:i + 8]:
                if not nxt or re.match(r"^\s*\S+ consumed over", nxt) or \
                        re.match(r"^\S+ peak memory consumed", nxt):
                    break
                if not nxt.startswith(" "):
                    fn = nxt.strip()
                    if re.fullmatch(r"0x[0-9a-fA-F]+", fn):
                        fn = "[unknown]"  # no symbol (e.g. the dynamic loader's start-up)
                    frames.append({"function": fn, "at": ""})
                elif nxt.strip().startswith("at ") and frames:
                    where = nxt.strip()[3:]
                    root = os.getcwd() + os.sep
                    frames[-1]["at"] = where[len(root):] if where.startswith(root) else where
            site = " <- ".join(
                f"{fr['function']}" + (f" ({fr['at']})" if fr["at"] else "") for fr in frames[:2])
            sites.append({"site": site or "[unknown]", "peak_bytes": size_bytes(m.group(1)),
                          "calls": int(m.group(2))})
    out["top_sites"] = sorted(sites, key=lambda s: -s["peak_bytes"])[:top]
    return out


def parse_dhat(path, top):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    if d.get("mode") != "heap" or "pps" not in d or "ftbl" not in d:
        raise ValueError(f"{path}: not a DHAT heap profile")
    ftbl, pps = d["ftbl"], d["pps"]
    out = {
        "tool": "dhat",
        "allocation_calls": sum(p.get("tbk", 0) for p in pps),
        "allocated_bytes": sum(p.get("tb", 0) for p in pps),
        "peak_heap_bytes": sum(p.get("gb", 0) for p in pps),
        "leaked_bytes": sum(p.get("eb", 0) for p in pps),
    }

    def site(p):
        names = [ftbl[i] for i in p.get("fs", []) if 0 <= i < len(ftbl)]
        # valgrind's own malloc replacement (vgpreload_*) is the innermost frame: skip it
        names = [re.sub(r"^0x[0-9A-Fa-f]+: ", "", n) for n in names
                 if n != "[root]" and "vgpreload_" not in n]
        return " <- ".join(names[:2]) or "[unknown]"

    ranked = sorted(pps, key=lambda p: -p.get("gb", 0))[:top]
    out["top_sites"] = [{"site": site(p), "peak_bytes": p.get("gb", 0), "calls": p.get("tbk", 0)}
                        for p in ranked]
    return out


def parse_memcheck(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    out = {"tool": "memcheck"}
    m = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated",
                  text)
    if m:
        out["allocs"], out["frees"], out["allocated_bytes"] = (
            int(g.replace(",", "")) for g in m.groups())
    for kind in ("definitely lost", "indirectly lost", "possibly lost", "still reachable"):
        m = re.search(kind + r": ([\d,]+) bytes in ([\d,]+) blocks", text)
        key = kind.replace(" ", "_")
        out[key + "_bytes"] = int(m.group(1).replace(",", "")) if m else 0
        out[key + "_blocks"] = int(m.group(2).replace(",", "")) if m else 0
    m = re.search(r"ERROR SUMMARY: ([\d,]+) errors", text)
    if not m:
        raise ValueError(f"{path}: no 'ERROR SUMMARY' line (memcheck did not finish?)")
    out["errors"] = int(m.group(1).replace(",", ""))
    out["no_leaks_possible"] = "no leaks are possible" in text
    return out


def human(b):
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= f:
            return f"{b / f:.2f} {unit}"
    return f"{b:.0f} B"


def main():
    ap = argparse.ArgumentParser(description="Heap profile and leak check summary.")
    ap.add_argument("--target", required=True)
    ap.add_argument("--heaptrack")
    ap.add_argument("--dhat")
    ap.add_argument("--memcheck")
    ap.add_argument("-n", "--top", type=int, default=5)
    ap.add_argument("-o", "--output")
    ap.add_argument("--note", help="a remark on how the profile was taken, kept in the JSON")
    a = ap.parse_args()
    res = {"target": a.target}
    if a.note:
        res["note"] = a.note
    try:
        if a.heaptrack:
            res["heap"] = parse_heaptrack(a.heaptrack, a.top)
        elif a.dhat:
            res["heap"] = parse_dhat(a.dhat, a.top)
        if a.memcheck:
            res["leaks"] = parse_memcheck(a.memcheck)
    except (OSError, ValueError, json.JSONDecodeError) as e:
        print(f"memory_summary.py: {e}", file=sys.stderr)
        return 2
    print(f"memory profile of {a.target}")
    if a.note:
        print(f"  note: {a.note}")
    h = res.get("heap")
    if h:
        print(f"  peak heap:          {human(h['peak_heap_bytes'])} ({h['tool']})")
        if "allocation_calls" in h:
            print(f"  allocation calls:   {h['allocation_calls']}")
        if "temporary_allocations" in h:
            print(f"  temporary allocs:   {h['temporary_allocations']}")
        if "leaked_bytes" in h:
            print(f"  not freed at exit:  {human(h['leaked_bytes'])} ({h['tool']})")
        print("  top allocation sites by peak:")
        for s in h["top_sites"]:
            print(f"    {human(s['peak_bytes']):>10} in {s['calls']} calls: {s['site']}")
    lk = res.get("leaks")
    bad = False
    if lk:
        print(f"  memcheck: {lk['errors']} errors; definitely lost "
              f"{lk['definitely_lost_bytes']} B, "
              f"indirectly lost {lk['indirectly_lost_bytes']} B, possibly lost "
              f"{lk['possibly_lost_bytes']} B, still reachable {lk['still_reachable_bytes']} B")
        if "allocs" in lk:
            print(f"  memcheck heap usage: {lk['allocs']} allocs, {lk['frees']} frees, "
                  f"{human(lk['allocated_bytes'])} allocated")
        bad = lk["errors"] > 0 or lk["definitely_lost_bytes"] > 0 or \
            lk["indirectly_lost_bytes"] > 0
        res["leak_check_passed"] = not bad
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

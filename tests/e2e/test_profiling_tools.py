#!/usr/bin/env python3
"""Tests of the profiling tools (docs/profiling.md): the stack folder, the hot-spot and phase
tables, the flame graph's SVG, the memory summary, and `make report`'s fast path run for real.

The folder, the tables and the summary get crafted inputs whose right answers are known by
construction (perf script text with kernel, unnamed and truncated frames; folded stacks of the
workload's phases, tail calls included; heaptrack and memcheck output). The report test runs
scripts/make_report.py --quick against the real suite program (E2E_BENCH, through a script that
gives it shorter measurement times than --quick's) without the profilers
(they need perf and a profiling build: scripts/profile_hotspots.sh is checked by hand and by
`make report`), and recomputes its bandwidth fraction and run-to-run CVs from the JSON files the
report's own runs wrote, and checks its table of the workload's phases against the trace
(`wl_profile --trace`) it wrote. wl_profile --trace: one pass of the profiling workload as a Chrome
trace event file, read strictly and checked against the format (test_trace.py's checks), with
the pass and its four phases, in order, inside it; a FILE that cannot be written is one line
naming it and exit 2, before the workload runs. Standard library only.
"""
import argparse
import json
import math
import os
import re
import shlex
import statistics
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

import e2e_helpers
import test_trace as trace_test

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(ROOT, "scripts")
BENCH = os.environ.get("E2E_BENCH", "")
WL_PROFILE = os.environ.get("E2E_WL_PROFILE", "")
PHASES = ["build", "activation", "similarity", "decay"]  # the workload's phase hook's names


def script(name, *args, env=None, timeout=120):
    return e2e_helpers.run([sys.executable, os.path.join(SCRIPTS, name), *args], timeout=timeout,
                           env=e2e_helpers.environ(env), cwd=ROOT)


PERF_SCRIPT = """\
prog 123 [000]     1.000000:     250000 cpu-clock: 
\t            1000 leaf_fn+0x10 (/bin/prog)
\t            2000 mid;fn+0x20 (/bin/prog)
\t            3000 main+0x30 (/bin/prog)
\t               0 [unknown] ([unknown])

prog 123 [000]     1.000250:     250000 cpu-clock: 
\tffffffff81000000 clear_page_erms+0x5 ([kernel.kallsyms])
\t            1000 leaf_fn+0x10 (/bin/prog)
\t            3000 main+0x30 (/bin/prog)

prog 123 [000]     1.000500:     250000 cpu-clock: 
\t            1000 leaf_fn+0x11 (/bin/prog)
\t            2000 mid;fn+0x21 (/bin/prog)
\t            3000 main+0x31 (/bin/prog)

prog 123 [000]     1.000750:     250000 cpu-clock: 
\t    7f0000001234 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t            3000 main+0x30 (/bin/prog)

my prog 124/124 [001]     1.001000:     250000 cpu-clock: 

"""


class StackCollapseTest(unittest.TestCase):
    def collapse(self, *args):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(PERF_SCRIPT)
        try:
            r = script("stackcollapse.py", f.name, *args)
        finally:
            os.remove(f.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_folds(self):
        self.assertEqual(self.collapse(), (
            "[no stack] 1\n"
            "main;[libc.so.6] 1\n"
            "main;leaf_fn;clear_page_erms_[k] 1\n"
            "main;mid:fn;leaf_fn 2\n"))

    def test_comm(self):
        out = self.collapse("--comm")
        self.assertIn("my prog;[no stack] 1\n", out)
        self.assertIn("prog;main;mid:fn;leaf_fn 2\n", out)

    def test_no_samples(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write("\n")
            f.flush()
            r = script("stackcollapse.py", f.name)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no samples", r.stderr)


RUN = "main;wl_profile_run;wl_profile_run_params"
FOLDED = f"""\
{RUN};wl__profile_phase_similarity;wl_similarity_topk;dots_avx2 60
{RUN};wl__profile_phase_similarity;wl_similarity_topk 10
{RUN};wl_graph_new;wl_norms_compute;wl_dot 6
{RUN};wl_graph_new 4
{RUN};wl__profile_phase_activation;wl_activation_spread;spread 10
bench_main;bench__run_instance;bench__fn_workload__decay_10k_memories;decay_avx2 5
{RUN};wl_graph_free;free 3
_start;_dl_start;_dl_sysdep_start 2
"""


class HotspotsTest(unittest.TestCase):
    def test_tables_and_phases(self):
        with tempfile.TemporaryDirectory() as tmp:
            folded, out = os.path.join(tmp, "s.folded"), os.path.join(tmp, "h.json")
            with open(folded, "w", encoding="utf-8") as f:
                f.write(FOLDED)
            r = script("hotspots.py", folded, "-n", "3", "-o", out, "--event", "cpu-clock")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, encoding="utf-8") as f:
                h = json.load(f)
        self.assertEqual(h["total_samples"], 100)
        self.assertEqual([(x["function"], x["samples"]) for x in h["self"]],
                         [("dots_avx2", 60), ("spread", 10), ("wl_similarity_topk", 10)])
        self.assertEqual(h["self"][0]["phase"], "similarity")
        self.assertEqual([(x["function"], x["samples"]) for x in h["inclusive"]],
                         [("main", 93), ("wl_profile_run", 93), ("wl_profile_run_params", 93)])
        phases = {p["phase"]: p for p in h["phases"]}
        expect = {"similarity": 70, "graph build": 10, "activation": 10, "decay": 5,
                  "workload, other": 3, "outside the workload": 2}
        self.assertEqual({k: phases[k]["samples"] for k in expect}, expect)
        self.assertAlmostEqual(phases["similarity"]["percent_of_workload"], 100 * 70 / 98)
        self.assertAlmostEqual(phases["similarity"]["percent_of_all"], 70.0)
        self.assertIsNone(phases["outside the workload"]["percent_of_workload"])
        self.assertIn("similarity", r.stdout)

    def test_bad_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".folded") as f:
            f.write("a;b 3\nnot a count\n")
            f.flush()
            r = script("hotspots.py", f.name)
        self.assertEqual(r.returncode, 2)
        self.assertRegex(r.stderr, r"^hotspots.py: .*:2: not 'frame;frame;... COUNT'\n$")


class FlamegraphSvgTest(unittest.TestCase):
    NAMES = ["<script>alert(1)</script>", 'q"uote', "a&b", "]]>", "plain"]

    def test_escaped_and_proportional(self):
        with tempfile.TemporaryDirectory() as tmp:
            folded, svg = os.path.join(tmp, "s.folded"), os.path.join(tmp, "f.svg")
            with open(folded, "w", encoding="utf-8") as f:
                for k, name in enumerate(self.NAMES):
                    f.write(f"root;{name} {10 * (k + 1)}\n")
            r = script("flamegraph.py", folded, "-o", svg, "--title", "<b>t</b>")
            self.assertEqual(r.returncode, 0, r.stderr)
            tree = ET.parse(svg)   # well-formed XML, whatever the names
        ns = {"s": "http://www.w3.org/2000/svg"}
        svg_root = tree.getroot()
        self.assertEqual(len(svg_root.findall(".//s:script", ns)), 1)
        inner = float(svg_root.get("data-inner-width"))
        total = sum(10 * (k + 1) for k in range(len(self.NAMES)))
        frames = svg_root.findall(".//s:g[@class='frame']", ns)
        self.assertEqual(len(frames), len(self.NAMES) + 2)   # all, root and the leaves
        seen = {}
        for g in frames:
            title = g.find("s:title", ns).text
            name = re.sub(r" \([0-9,]+ samples?, [0-9.]+%\)$", "", title)
            samples = int(g.get("data-samples"))
            seen[name] = samples
            width = float(g.find("s:rect", ns).get("width"))
            self.assertAlmostEqual(width, inner * samples / total, delta=0.01)
            self.assertIn(f"{100 * samples / total:.2f}%", title)
        for k, name in enumerate(self.NAMES):
            self.assertEqual(seen.get(name), 10 * (k + 1), name)
        titles = [t.text for t in svg_root.findall("s:text", ns)]
        self.assertIn("<b>t</b>", titles)


HEAPTRACK = """\
reading file "x.zst" - please wait, this might take some time...
PEAK MEMORY CONSUMERS
31.28M peak memory consumed over 7 calls from
wl__alloc_aligned
  at /src/wl_graph.c:29
  in /bin/wl_profile
graph_alloc
  at /src/wl_graph.c:113
30.72M consumed over 1 calls from:
    wl_graph_new

600.00K peak memory consumed over 1 calls from
wl_graph_new
  at /src/wl_graph.c:182
  in /bin/wl_profile

MOST TEMPORARY ALLOCATIONS

total runtime: 1.99s.
calls to allocation functions: 22 (11/s)
temporary memory allocations: 3 (1/s)
peak heap memory consumption: 31.99M
peak RSS (including heaptrack overhead): 35.12M
total memory leaked: 4.10K
"""

MEMCHECK = """\
==1== HEAP SUMMARY:
==1==     in use at exit: 100 bytes in 1 blocks
==1==   total heap usage: 21 allocs, 20 frees, 32,138,700 bytes allocated
==1== LEAK SUMMARY:
==1==    definitely lost: 100 bytes in 1 blocks
==1==    indirectly lost: 0 bytes in 0 blocks
==1==      possibly lost: 0 bytes in 0 blocks
==1==    still reachable: 0 bytes in 0 blocks
==1== ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 0 from 0)
"""


class MemorySummaryTest(unittest.TestCase):
    def test_heaptrack_and_leak(self):
        with tempfile.TemporaryDirectory() as tmp:
            ht, mc, out = (os.path.join(tmp, n) for n in ("ht.txt", "mc.log", "m.json"))
            with open(ht, "w", encoding="utf-8") as f:
                f.write(HEAPTRACK)
            with open(mc, "w", encoding="utf-8") as f:
                f.write(MEMCHECK)
            r = script("memory_summary.py", "--target", "t", "--heaptrack", ht, "--memcheck", mc,
                       "-o", out)
            self.assertEqual(r.returncode, 1, r.stderr)   # a definite leak fails the check
            with open(out, encoding="utf-8") as f:
                m = json.load(f)
        h, lk = m["heap"], m["leaks"]
        self.assertEqual(h["peak_heap_bytes"], 31.99e6)
        self.assertEqual(h["allocation_calls"], 22)
        self.assertEqual(h["temporary_allocations"], 3)
        self.assertEqual(h["leaked_bytes"], 4100)
        self.assertEqual([s["peak_bytes"] for s in h["top_sites"]], [31.28e6, 0.6e6])
        self.assertEqual(h["top_sites"][0]["calls"], 7)
        self.assertTrue(h["top_sites"][0]["site"].startswith(
            "wl__alloc_aligned (/src/wl_graph.c:29) <- graph_alloc"))
        self.assertEqual((lk["allocs"], lk["frees"], lk["allocated_bytes"]), (21, 20, 32138700))
        self.assertEqual((lk["definitely_lost_bytes"], lk["errors"]), (100, 1))
        self.assertFalse(m["leak_check_passed"])

    def test_not_heaptrack_output(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write("hello\n")
            f.flush()
            r = script("memory_summary.py", "--target", "t", "--heaptrack", f.name)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no 'peak heap memory consumption' line", r.stderr)


class CandidateRankingTest(unittest.TestCase):
    """The candidates' order and bounds, from crafted numbers (no run needed)."""

    @staticmethod
    def bench(bid, median_ns, elements=None, cv_interval=0.01):
        b = {"id": bid, "status": "ok", "r2": 0.999,
             "estimates": {"median": {"point": median_ns, "lower": median_ns * (1 - cv_interval),
                                      "upper": median_ns * (1 + cv_interval)}}}
        if elements:
            b["throughput"] = {"elements_per_iteration": elements}
        return b

    def report(self, hot_function):
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        try:
            import make_report
        finally:
            sys.path.pop(0)
        rep = make_report.Report(argparse.Namespace(work="tmp/x", quick=True, baseline=None))
        benches = [
            self.bench("scaling/compute_probe", 1000.0, elements=100000),       # 100 GFLOP/s
            self.bench("scaling/similarity_batch/64", 20e6, elements=640000),  # 49 GFLOP/s
            self.bench("scaling/similarity/10000", 1.2e6, elements=10000),
            self.bench("harness/noisy", 50.0, cv_interval=0.2),                # R6: 20% wide
        ]
        rep.results = {"benchmarks": benches}
        rep.oks = make_report.ok_map(rep.results)
        rep.bw = []
        rep.comp = make_report.compute_fractions(rep.oks)
        rep.noisy = {"harness/other": {"cv": 30.0}}                            # R5
        hot = {"self": [{"function": hot_function, "percent": 80.0, "phase": "similarity"}],
               "phases": [{"phase": "similarity", "percent_of_workload": 80.0},
                          {"phase": "activation", "percent_of_workload": 20.0}],
               "phase_wall_s": {"similarity": 0.4, "activation": 0.1, "total": 0.5}}
        rep.phase_candidates(hot)
        rep.sec_candidates()
        return rep.parts[-1]

    def test_ranked_by_saving_with_bounds(self):
        md = self.report("dots_multi_avx2")
        hot, noisy = md.split("### Noisy: measure before optimising")
        items = re.findall(r"^\d+\. (.*)$", hot, re.M)
        self.assertEqual(len(items), 2, hot)
        # Similarity: 400 ms at 0.4915 of the compute probe (32 M candidates/s x 1536 flops
        # against 100 GFLOP/s) could save 0.5085 x 400 ms = 203.4 ms;
        # activation has no measured limit, so it comes after, with its time as the bound.
        self.assertIn("phase **similarity**", items[0])
        self.assertIn("compute, 0.49 of the compute probe", items[0])
        self.assertIn("Could save about 203.4 ms", items[0])
        self.assertIn("`dots_multi_avx2` (80.0% self)", items[0])
        self.assertIn("phase **activation**", items[1])
        self.assertIn("unknown part of 100 ms", items[1])
        # Noise: its own table, worst first, never in the hot list.
        rows = re.findall(r"^\| `([^`]+)` \|", noisy, re.M)
        self.assertEqual(rows, ["harness/other", "harness/noisy"])
        self.assertNotIn("harness/", hot)

    def test_single_query_profile_is_memory_bound(self):
        md = self.report("dots_avx2")
        self.assertIn("memory, the suite run has no `scaling/similarity/10000`", md)


def short_suite(tmp):
    """A suite program for make_report.py's four runs of it that measures for less time than
    --quick does (what the test checks is computed from the runs' own files, whatever their
    precision): a script running E2E_BENCH with its arguments and shorter times, in a build
    tree of its own whose workloads/wl_profile is the real one, so that the report still finds
    the profiling workload beside the program it was given."""
    build = os.path.join(tmp, "build")
    os.makedirs(os.path.join(build, "benches"))
    os.makedirs(os.path.join(build, "workloads"))
    os.symlink(os.path.join(os.path.dirname(os.path.dirname(BENCH)), "workloads", "wl_profile"),
               os.path.join(build, "workloads", "wl_profile"))
    return e2e_helpers.write_script(
        os.path.join(build, "benches", "bench"),
        f'#!/bin/sh\nexec {shlex.quote(BENCH)} "$@" --warm-up-time 0.02 '
        '--measurement-time 0.1 --processes 2\n')


@unittest.skipIf(not BENCH, "E2E_BENCH is not set (ctest sets it)")
class ReportQuickTest(unittest.TestCase):
    """make report's fast path, for real, without the profilers."""

    def test_quick_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            out, html, work = (os.path.join(tmp, n) for n in ("r.md", "html", "work"))
            r = script("make_report.py", "--quick", "--variance-runs", "2", "--out", out,
                       "--html-dir", html, "--work", work,
                       env={"BENCH_PROGRAM": short_suite(tmp), "REPORT_PROFILE": "0"},
                       timeout=280)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, encoding="utf-8") as f:
                md = f.read()
            suite = e2e_helpers.load_json(os.path.join(work, "suite.json"))
            wl_trace = trace_test.strict_load(os.path.join(work, "workload_trace.json"))
            runs = [e2e_helpers.load_json(os.path.join(work, "variance", f"run{i}.json"))
                    for i in (1, 2)]
            self.assertTrue(os.path.isfile(os.path.join(html, "index.html")))
        for sec in ("## System configuration", "## Reference suite",
                    "## Fraction of the machine limit", "## CPU hot spots",
                    "## Counters and allocations", "## Heap profile and leak check",
                    "## Run-to-run variation", "## Optimisation candidates"):
            self.assertIn(sec, md)
        self.assertIn("mode: quick", md)
        self.assertIn("skipped (REPORT_PROFILE=0)", md)
        # The workload's phases: the table is the trace's slices, each of the pass.
        self.assertIn("## Phases of one workload pass", md)
        whole = next(e for e in wl_trace["traceEvents"] if e.get("cat") == "workload")
        phases = [e for e in wl_trace["traceEvents"] if e.get("cat") == "phase"]
        self.assertEqual([e["name"] for e in phases], PHASES)
        for e in phases:
            self.assertIn(f"| {e['name']} | {e['dur'] / 1e3:.1f} ms | "
                          f"{100 * e['dur'] / whole['dur']:.1f}% |", md)
        ok = {b["id"]: b for b in suite["benchmarks"] if b["status"] == "ok"}
        self.assertGreaterEqual(len(ok), 5)
        for bid in ok:
            self.assertIn(f"| `{bid}` |", md)
        # The bandwidth fraction: probe time over similarity time, from the run's own JSON.
        f = (ok["scaling/read_probe/1000"]["estimates"]["median"]["point"] /
             ok["scaling/similarity/1000"]["estimates"]["median"]["point"])
        m = re.search(r"^\| 1,000 \| [0-9.]+ MB \| [^|]+ \| [^|]+ \| ([0-9.]+) \|", md, re.M)
        self.assertIsNotNone(m, "no fraction row for 1,000 candidates")
        self.assertEqual(m.group(1), f"{f:.2f}")
        # The batched similarity's flop rate against the compute probe, from the same JSON:
        # 2 x 768 flops per candidate scored, the probe's elements are flops.
        def rate(bid):
            b = ok[bid]
            return (b["throughput"]["elements_per_iteration"] * 1e9 /
                    b["estimates"]["median"]["point"])
        frac = rate("scaling/similarity_batch/64") * 2 * 768 / rate("scaling/compute_probe")
        speedup = (ok["scaling/similarity/10000"]["estimates"]["median"]["point"] * 64 /
                   ok["scaling/similarity_batch/64"]["estimates"]["median"]["point"])
        # (Any prefix: an unoptimised sanitizer build under load computes below 1 GFLOP/s.)
        m = re.search(r"^\| 64 \| [^|]+ \| [^|]+ [KMGT]?FLOP/s \| [^|]+ [KMGT]?FLOP/s \| "
                      r"([0-9.]+) \| [^|]+ \| ([0-9.]+)x ", md, re.M)
        self.assertIsNotNone(m, "no compute row for 64 queries")
        self.assertEqual(m.group(1), f"{frac:.2f}")
        self.assertEqual(m.group(2), f"{speedup:.2f}")
        # Candidates: the hot list comes before the noisy section, and noise stays out of it.
        hot = md.index("### Hot, and could be faster")
        noisy = md.index("### Noisy: measure before optimising")
        self.assertLess(hot, noisy)
        self.assertNotIn("varies", md[hot:noisy])
        # The CVs: recomputed from the two variance runs' medians.
        for bid in ("harness/known_cost_chain_1000", "workload/decay_10k_memories"):
            vals = [next(b for b in run["benchmarks"] if b["id"] == bid)["estimates"]["median"]
                    ["point"] for run in runs]
            cv = 100 * statistics.stdev(vals) / statistics.mean(vals)
            row = re.search(r"^\| `" + re.escape(bid) + r"` \| 2 \| [^|]+ \| ([0-9.]+)% \|", md,
                            re.M)
            self.assertIsNotNone(row, bid)
            self.assertTrue(math.isclose(float(row.group(1)), round(cv, 2), abs_tol=0.006))

    def test_missing_baseline(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = script("make_report.py", "--quick", "--baseline", "no-such-baseline-xyz",
                       "--out", os.path.join(tmp, "r.md"), "--html-dir", os.path.join(tmp, "h"),
                       "--work", os.path.join(tmp, "w"),
                       env={"BENCH_PROGRAM": BENCH, "REPORT_PROFILE": "0"})
            self.assertEqual(r.returncode, 2)
            self.assertFalse(os.path.exists(os.path.join(tmp, "r.md")))
        lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("make_report.py: step")]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("no-such-baseline-xyz", lines[0])


@unittest.skipIf(not WL_PROFILE, "E2E_WL_PROFILE is not set (ctest sets it)")
class WorkloadTraceTest(trace_test.TraceCase):
    """wl_profile --trace FILE: one pass of the profiling workload with its phases."""

    def test_pass_and_phases(self):
        d = self.temp_dir("wl-trace-")
        path = os.path.join(d, "wl.json")
        t0 = time.monotonic()
        p = e2e_helpers.run([WL_PROFILE, "--similarity-queries", "64", "--trace", path],
                            timeout=120)
        wall = time.monotonic() - t0
        self.assert_exit(p, 0)
        self.assertEqual(os.listdir(d), ["wl.json"])  # no temporary file left
        events = self.check_format(trace_test.strict_load(path), wall)
        names = [e["args"]["name"] for e in events if e["name"] == "process_name"]
        self.assertEqual(len(names), 1)
        self.assertRegex(names[0], r"^wl_profile \(seed 42, simd \w+\)$")
        whole = [e for e in events if e["ph"] == "X" and e["name"] == "workload pass"]
        self.assertEqual(len(whole), 1)
        w = whole[0]
        checksum = re.search(r"^checksum +(0x[0-9a-f]{16})$", p.stdout, re.M).group(1)
        self.assertEqual(w["args"]["checksum"], checksum)
        phases = [e for e in events if e["ph"] == "X" and e.get("cat") == "phase"]
        self.assertEqual([e["name"] for e in phases], PHASES)
        end = w["ts"]
        for e in phases:
            # In order, one after the other, inside the pass (µs, to the ns of the file).
            self.assertGreaterEqual(e["ts"], end - 0.001, e)
            end = e["ts"] + e["dur"]
            self.assertLessEqual(end, w["ts"] + w["dur"] + 0.001, e)

    def test_unwritable_file(self):
        d = self.temp_dir("wl-trace-")
        for bad in (os.path.join(d, "missing", "wl.json"), "/proc/wl.json"):
            p = e2e_helpers.run([WL_PROFILE, "--trace", bad], timeout=120)
            self.assert_exit(p, 2)
            self.assertEqual(p.stdout, "")  # refused before the workload ran
            lines = p.stderr.splitlines()
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertIn(f"--trace {bad}: cannot write it", lines[0])
        p = e2e_helpers.run([WL_PROFILE, "--trace", ""], timeout=120)
        self.assert_exit(p, 2)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)


if __name__ == "__main__":
    unittest.main()

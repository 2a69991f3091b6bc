#!/usr/bin/env python3
"""End-to-end tests of allocation statistics (--alloc-stats) on the real program.

e2e_work (tests/e2e/fixture_work.c) has benchmarks with known allocations per iteration:
alloc/three_blocks (3 blocks, 4300 bytes), alloc/none (nothing), alloc/libc_internal (2 blocks,
106 bytes, one allocated inside libc by strdup), alloc/realloc_chain (2 allocations, 300 bytes,
and a realloc to 0 that frees) and alloc/touch_8mb (one 8 MiB block, written). The counts must be
exact, not close: a sample of n iterations has exactly 3n allocations. In a sanitizer build
(E2E_SANITIZE) the layer is unavailable, and the tests check that it says so.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

WORK = os.environ.get("E2E_WORK", "")
SANITIZED = os.environ.get("E2E_SANITIZE", "0").lower() in ("1", "on", "true", "yes")
VALGRIND = shutil.which("valgrind")
FAST = ["--warm-up-time", "0.01", "--measurement-time", "0.05", "--nresamples", "100"]
KNOWN = {  # id: (allocations, bytes) per iteration
    "alloc/three_blocks": (3, 4300),
    "alloc/none": (0, 0),
    "alloc/libc_internal": (2, 106),
    "alloc/realloc_chain": (2, 300),
    "alloc/touch_8mb": (1, 8 << 20),
}


def run(*args, prog=None, timeout=240):
    return subprocess.run([prog or WORK, *args], capture_output=True, text=True, timeout=timeout)


def unsanitized(test):
    if SANITIZED:
        return unittest.skip("sanitizer build: allocation statistics are unavailable")(test)
    return test


class Base(unittest.TestCase):
    def assert_exit(self, proc, code):
        self.assertEqual(proc.returncode, code,
                         f"exit {proc.returncode}, wanted {code}\nstdout:\n{proc.stdout}\n"
                         f"stderr:\n{proc.stderr}")

    def results(self, *ids):
        proc = run("--alloc-stats", *FAST, "--output-format", "json", "--exact", *ids)
        self.assert_exit(proc, 0)
        return {b["id"]: b for b in json.loads(proc.stdout)["benchmarks"]}


class CountTest(Base):
    @unsanitized
    def test_counts_are_exact(self):
        res = self.results(*[i for i in KNOWN if i != "alloc/touch_8mb"])
        for bid, b in res.items():
            allocs, nbytes = KNOWN[bid]
            with self.subTest(id=bid):
                self.assertEqual(b["status"], "ok")
                iters = b["samples"]["iterations"]
                m = b["metrics"]
                # Every sample: exactly the known count times its iterations.
                self.assertEqual(m["allocations"]["totals"], [allocs * n for n in iters])
                self.assertEqual(m["allocated_bytes"]["totals"], [nbytes * n for n in iters])
                for name, per in (("allocations", allocs), ("allocated_bytes", nbytes)):
                    est = m[name]["per_iteration"]
                    for k in ("median", "mean", "slope"):
                        self.assertEqual(est[k]["point"], per, (name, k))
                # Allocation statistics are per stretch: one round, whatever was asked.
                # every worker process counts its own samples: the counts pool over the 10 processes
                self.assertEqual((b["settings"]["rounds"], b["processes"]), (10, 10))

    @unsanitized
    def test_metric_metadata(self):
        m = self.results("alloc/three_blocks")["alloc/three_blocks"]["metrics"]
        self.assertEqual(m["allocations"]["unit"], "allocs")
        self.assertEqual(m["allocated_bytes"]["unit"], "B")
        for name in ("allocations", "allocated_bytes"):
            self.assertEqual(m[name]["source"], "alloc")
            self.assertFalse(m[name]["scaled"])

    def test_nothing_without_the_flag(self):
        proc = run(*FAST, "--output-format", "json", "--exact", "alloc/three_blocks")
        self.assert_exit(proc, 0)
        b = json.loads(proc.stdout)["benchmarks"][0]
        self.assertNotIn("allocations", b.get("metrics", {}))
        self.assertNotIn("peak_heap_bytes", b.get("facts", {}))

    def test_sanitizer_build_says_unavailable(self):
        if not SANITIZED:
            self.skipTest("not a sanitizer build")
        proc = run("--alloc-stats", *FAST, "alloc/none")
        self.assert_exit(proc, 2)
        self.assertIn("not available in an AddressSanitizer build", proc.stderr)

    def memcheck(self, *args, synonyms=False):
        if not VALGRIND:
            self.skipTest("valgrind is not installed (apt-get install valgrind)")
        opts = ["--soname-synonyms=somalloc=nomatch"] if synonyms else []
        return subprocess.run(
            ["valgrind", *opts, "--leak-check=full", "--errors-for-leak-kinds=definite",
             "--error-exitcode=9", WORK, "--in-process", *FAST, *args], capture_output=True,
            text=True,
            timeout=240)

    @unsanitized
    def test_memcheck_runs_clean(self):
        """Plain memcheck replaces malloc everywhere: no errors, every block seen; the layer
        then says it cannot count rather than count zeros."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            proc = self.memcheck("--json", out, "--exact", "alloc/three_blocks")
            self.assert_exit(proc, 0)
            with open(out) as f:
                b = json.load(f)["benchmarks"][0]
        self.assertIn("ERROR SUMMARY: 0 errors", proc.stderr)
        heap = re.search(r"total heap usage: ([\d,]+) allocs", proc.stderr)
        self.assertTrue(heap, proc.stderr)
        ran = b["warm_up"]["iterations"] + sum(b["samples"]["iterations"])
        self.assertGreaterEqual(int(heap.group(1).replace(",", "")), 3 * ran)
        proc = self.memcheck("--alloc-stats", "--exact", "alloc/three_blocks")
        self.assert_exit(proc, 2)
        self.assertIn("--soname-synonyms=somalloc=nomatch", proc.stderr)

    @unsanitized
    def test_memcheck_sees_the_counted_allocations(self):
        """With valgrind replacing libc's malloc only, the wrappers count exactly and memcheck
        still sees every block they allocate (through the __libc_* aliases)."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            proc = self.memcheck("--alloc-stats", "--json", out, "--exact",
                                 "alloc/three_blocks", synonyms=True)
            self.assert_exit(proc, 0)
            with open(out) as f:
                b = json.load(f)["benchmarks"][0]
        self.assertIn("ERROR SUMMARY: 0 errors", proc.stderr)
        heap = re.search(r"total heap usage: ([\d,]+) allocs", proc.stderr)
        self.assertTrue(heap, proc.stderr)
        seen = int(heap.group(1).replace(",", ""))
        counted = sum(b["metrics"]["allocations"]["totals"])
        self.assertEqual(counted, 3 * sum(b["samples"]["iterations"]))
        self.assertGreaterEqual(seen, counted)


class FactTest(Base):
    @unsanitized
    def test_peak_heap_of_three_blocks(self):
        f = self.results("alloc/three_blocks")["alloc/three_blocks"]["facts"]
        self.assertEqual(f["peak_heap_bytes"]["unit"], "B")
        self.assertGreaterEqual(f["peak_heap_bytes"]["value"], 4300)
        self.assertLess(f["peak_heap_bytes"]["value"], 64 * 1024)
        for name in ("max_rss_bytes", "minor_faults", "major_faults"):
            self.assertIn(name, f)
            self.assertGreaterEqual(f[name]["value"], 0)

    @unsanitized
    def test_touching_8_mib(self):
        b = self.results("alloc/touch_8mb")["alloc/touch_8mb"]
        f = b["facts"]
        self.assertGreaterEqual(f["peak_heap_bytes"]["value"], 8 << 20)
        self.assertGreaterEqual(f["max_rss_bytes"]["value"], 8 << 20)
        self.assertEqual(f["max_rss_bytes"]["unit"], "B")
        self.assertGreaterEqual(f["minor_faults"]["value"], (8 << 20) // 4096)
        self.assertEqual(f["minor_faults"]["unit"], "faults")
        self.assertEqual(b["metrics"]["allocated_bytes"]["per_iteration"]["median"]["point"],
                         8 << 20)

    @unsanitized
    def test_rss_high_water_mark_is_per_benchmark(self):
        """Each benchmark's peak RSS is its own: the high-water mark is reset at attach."""
        res = self.results("alloc/none", "alloc/touch_8mb")
        # Run order is sorted: none first, then touch_8mb, whose peak is 8 MiB higher.
        small = res["alloc/none"]["facts"]["max_rss_bytes"]["value"]
        big = res["alloc/touch_8mb"]["facts"]["max_rss_bytes"]["value"]
        self.assertGreaterEqual(big - small, 7 << 20)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]])

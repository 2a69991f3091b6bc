#!/usr/bin/env python3
"""End-to-end tests of allocation statistics (--alloc-stats) on the real program.

e2e_work (tests/e2e/fixture_work.c) has benchmarks with known allocations per iteration:
alloc/three_blocks (3 blocks, 4300 bytes), alloc/none (nothing), alloc/libc_internal (2 blocks,
106 bytes, one allocated inside libc by strdup), alloc/realloc_chain (2 allocations, 300 bytes,
and a realloc to 0 that frees) and alloc/touch_8mb (one 8 MiB block, written). The counts must be
exact, not close: a sample of n iterations has exactly 3n allocations.

The counting is a preload library (libharness_alloc.so) that --alloc-stats loads by running the
program again with it in LD_PRELOAD; the library itself defines no malloc. So a program keeps
its own allocator: jemalloc preloaded, an AddressSanitizer build (E2E_WORK_ASAN; in a sanitizer
build of the project e2e_work is one), with and without --alloc-stats; a statically linked
program (E2E_ALLOC_STATIC) works, and --alloc-stats says it is unavailable there. Under
AddressSanitizer, allocations the sanitizer makes inside its own replacements of libc functions
(strdup) do not reach malloc and are not counted.
"""
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

import e2e_helpers

WORK = os.environ.get("E2E_WORK", "")
WORK_ASAN = os.environ.get("E2E_WORK_ASAN", "")
ALLOC_STATIC = os.environ.get("E2E_ALLOC_STATIC", "")
VALGRIND = shutil.which("valgrind")
SHIM = os.environ.get("E2E_ALLOC_SHIM", "")
FAST = ["--warm-up-time", "0.01", "--measurement-time", "0.05", "--nresamples", "100"]
KNOWN = {  # id: (allocations, bytes) per iteration
    "alloc/three_blocks": (3, 4300),
    "alloc/none": (0, 0),
    "alloc/libc_internal": (2, 106),
    "alloc/realloc_chain": (2, 300),
    "alloc/touch_8mb": (1, 8 << 20),
}
# AddressSanitizer's strdup allocates without calling malloc: only the calloc is counted.
KNOWN_ASAN = dict(KNOWN, **{"alloc/libc_internal": (1, 100)})
# ASan needs the shadow gap the CUDA driver uses, where there is one (as the GPU tests set).
ASAN_ENV = {"ASAN_OPTIONS": "protect_shadow_gap=0"}


def jemalloc():
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"):
        path = os.path.join(d, "libjemalloc.so.2")
        if os.path.exists(path):
            return path
    return None


def run(*args, prog=None, timeout=240, env_extra=None):
    env = e2e_helpers.environ(ASAN_ENV, env_extra)  # ASAN_ENV: ignored without AddressSanitizer
    return e2e_helpers.run([prog or WORK, *args], timeout=timeout, env=env)


def unsanitized(test):
    """Tests of exact numbers that a sanitizer's allocator changes (valgrind, RSS)."""
    if e2e_helpers.SANITIZED:
        return unittest.skip("sanitizer build: its allocator changes these numbers")(test)
    return test


class Base(e2e_helpers.Case):
    def results(self, *ids, prog=None, env_extra=None):
        proc = run("--alloc-stats", *FAST, "--output-format", "json", "--exact", *ids,
                   prog=prog, env_extra=env_extra)
        self.assert_exit(proc, 0)
        return e2e_helpers.by_id(json.loads(proc.stdout))

    def assert_exact(self, res, known):
        for bid, b in res.items():
            allocs, nbytes = known[bid]
            with self.subTest(id=bid):
                self.assertEqual(b["status"], "ok")
                iters = b["samples"]["iterations"]
                m = b["metrics"]
                self.assertEqual(m["allocations"]["totals"], [allocs * n for n in iters])
                self.assertEqual(m["allocated_bytes"]["totals"], [nbytes * n for n in iters])


class CountTest(Base):
    def test_counts_are_exact(self):
        res = self.results(*[i for i in KNOWN if i != "alloc/touch_8mb"])
        known = KNOWN_ASAN if e2e_helpers.SANITIZED else KNOWN
        for bid, b in res.items():
            allocs, nbytes = known[bid]
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

    def test_the_library_defines_no_malloc(self):
        """Without --alloc-stats a program keeps its own allocator: no malloc in it."""
        nm = shutil.which("nm")
        if not nm:
            self.skipTest("nm (binutils) is not installed")
        syms = e2e_helpers.run([nm, "--defined-only", WORK], timeout=None, check=True).stdout
        defined = {ln.split()[-1] for ln in syms.splitlines() if ln.split()[1:2] in (["T"], ["W"])}
        for name in ("malloc", "free", "calloc", "realloc", "posix_memalign", "memalign"):
            self.assertNotIn(name, defined)

    def memcheck(self, *args, synonyms=False, preload=False):
        if not VALGRIND:
            self.skipTest("valgrind is not installed (apt-get install valgrind)")
        if e2e_helpers.SANITIZED:
            self.skipTest("sanitizer build: valgrind cannot run it")
        opts = ["--soname-synonyms=somalloc=nomatch"] if synonyms else []
        env = e2e_helpers.environ({"LD_PRELOAD": SHIM} if preload else None)
        return e2e_helpers.run(
            ["valgrind", *opts, "--leak-check=full", "--errors-for-leak-kinds=definite",
             "--error-exitcode=9", WORK, "--in-process", *FAST, *args], timeout=240, env=env)

    def test_memcheck_runs_clean(self):
        """Plain memcheck replaces malloc everywhere: no errors, every block seen. With
        --alloc-stats the program cannot leave valgrind to load the shim: it says how to."""
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
        self.assertIn("LD_PRELOAD=", proc.stderr)
        self.assertIn("--soname-synonyms=somalloc=nomatch", proc.stderr)

    def test_memcheck_sees_the_counted_allocations(self):
        """With the shim preloaded and valgrind replacing libc's malloc only, the shim counts
        exactly and memcheck still sees every block (the shim forwards to libc's malloc)."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            proc = self.memcheck("--alloc-stats", "--json", out, "--exact",
                                 "alloc/three_blocks", synonyms=True, preload=True)
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


class AllocatorTest(Base):
    """The program's own allocator stays in charge, with and without --alloc-stats."""
    OWN = ["alloc/usable_size", "alloc/extension", "alloc/asan_owns"]

    def assert_own_allocator_works(self, proc):
        self.assert_exit(proc, 0)
        for b in json.loads(proc.stdout)["benchmarks"]:
            self.assertIn(b["status"], ("ok", "skipped"), b)

    def test_jemalloc_preloaded(self):
        lib = jemalloc()
        if not lib:
            self.skipTest("libjemalloc2 is not installed (apt-get install libjemalloc2)")
        if e2e_helpers.SANITIZED:
            self.skipTest("sanitizer build: the sanitizer's allocator comes first")
        env = {"LD_PRELOAD": lib}
        proc = run(*FAST, "--output-format", "json", "--exact", *self.OWN, env_extra=env)
        self.assert_own_allocator_works(proc)
        ext = [b for b in json.loads(proc.stdout)["benchmarks"] if b["id"] == "alloc/extension"]
        self.assertEqual(ext[0]["status"], "ok", "jemalloc's mallocx was not found")
        proc = run("--alloc-stats", *FAST, "--output-format", "json", "--exact", *self.OWN,
                   env_extra=env)
        self.assert_own_allocator_works(proc)
        self.assert_exact(self.results("alloc/three_blocks", "alloc/libc_internal",
                                       env_extra=env), KNOWN)

    def test_address_sanitizer_program(self):
        """A user's program built with -fsanitize=address against the library: the sanitizer's
        allocator is the one in use (alloc/asan_owns fails otherwise), with and without the
        flag, and the counts stay exact."""
        proc = run(*FAST, "--output-format", "json", "--exact", *self.OWN, prog=WORK_ASAN,
                   env_extra=ASAN_ENV)
        self.assert_own_allocator_works(proc)
        owns = [b for b in json.loads(proc.stdout)["benchmarks"] if b["id"] == "alloc/asan_owns"]
        self.assertEqual(owns[0]["status"], "ok", owns)
        proc = run("--alloc-stats", *FAST, "--output-format", "json", "--exact", *self.OWN,
                   prog=WORK_ASAN, env_extra=ASAN_ENV)
        self.assert_own_allocator_works(proc)
        self.assert_exact(self.results("alloc/three_blocks", "alloc/libc_internal",
                                       prog=WORK_ASAN, env_extra=ASAN_ENV), KNOWN_ASAN)

    def test_static_program(self):
        proc = run(prog=ALLOC_STATIC)
        self.assert_exit(proc, 0)
        self.assertIn("static: allocations work", proc.stdout)
        proc = run("--alloc-stats", prog=ALLOC_STATIC)
        self.assert_exit(proc, 2)
        self.assertIn("unavailable in a statically linked program", proc.stderr)

    def test_missing_shim_is_unavailable(self):
        proc = run("--alloc-stats", *FAST, "--exact", "alloc/none",
                   env_extra={"BENCH_ALLOC_SHIM": "/nonexistent/libharness_alloc.so"})
        self.assert_exit(proc, 2)
        self.assertIn("BENCH_ALLOC_SHIM names /nonexistent/libharness_alloc.so", proc.stderr)

    def test_reexecuted_environment(self):
        """The re-executed program has the shim in LD_PRELOAD and the marker that stops a second
        re-execution; processes it starts inherit both."""
        proc = run("--alloc-stats", *FAST, "--output-format", "json", "--exact", "alloc/env")
        self.assert_exit(proc, 0)
        msg = json.loads(proc.stdout)["benchmarks"][0]["message"]
        self.assertIn("libharness_alloc.so", msg)
        self.assertIn("BENCH_ALLOC_PRELOADED=1", msg)


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

#!/usr/bin/env python3
"""End-to-end tests of instruction counting (--instructions): the real programs under the real
valgrind.

Programs: e2e_work (tests/e2e/fixture_work.c: instr/nop4 and instr/nop5, inline-assembly loops
whose iterations differ by exactly 1000 instructions; work/loop, whose work is set by the
environment variable FIXTURE_WORK), the reference suite program `bench`, and e2e_fixture (for a
benchmark that crashes). Paths come from E2E_WORK, E2E_BENCH and E2E_FIXTURE (set by ctest).
Tests that need valgrind skip, saying why, when it is not installed or the build is sanitized
(E2E_SANITIZE: valgrind cannot run such a program).
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

import e2e_helpers

# The saves and comparisons here check what a run does, not how well the drift canaries read the
# machine: the canaries keep every step on 3 repetitions and the 64 MiB floor (0.5-8 s a run
# less; docs/comparison.md, "Drift canaries").
os.environ.setdefault("BENCH_CANARY_QUICK", "1")

WORK = os.environ.get("E2E_WORK", "")
FIXTURE = os.environ.get("E2E_FIXTURE", "")
BENCH = os.environ.get("E2E_BENCH", "")
VALGRIND = shutil.which("valgrind")
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                      "results.schema.json")


def run(prog, *args, env=None, cwd=None):
    full = e2e_helpers.environ(env, unset=["FIXTURE_WORK"])
    return e2e_helpers.run([prog, *args], timeout=240, env=full, cwd=cwd)


# --instructions with a fixed plan of 10 and 20 iterations (GateTest).
COUNTING = ["--instructions", "--instructions-iterations", "10"]


def needs_valgrind(test):
    if e2e_helpers.SANITIZED:
        return unittest.skip("sanitizer build: valgrind cannot run it")(test)
    if not VALGRIND:
        return unittest.skip("valgrind is not installed (apt-get install valgrind)")(test)
    return test


def check_schema(test, doc):
    """Validates the benchmarks and context.mode against docs/results.schema.json (the rest of
    the context is other layers' business)."""
    try:
        import jsonschema
    except ImportError:
        test.skipTest("python3-jsonschema is not installed: schema not checked")
    with open(SCHEMA) as f:
        schema = json.load(f)
    part = dict(schema)
    part["required"] = ["benchmarks"]
    part["properties"] = {"benchmarks": schema["properties"]["benchmarks"],
                          "context": {"type": "object", "properties": {
                              "mode": schema["$defs"]["context"]["properties"]["mode"]}}}
    part["additionalProperties"] = True
    jsonschema.validate(doc, part)


def per_iter(bench):
    return bench["metrics"]["instructions"]["per_iteration"]["median"]["point"]


class Base(e2e_helpers.Case):
    def counts(self, *args, env=None):
        """Runs e2e_work --instructions with JSON output; returns {id: benchmark}."""
        proc = run(WORK, "--instructions", "--output-format", "json", *args, env=env)
        self.assert_exit(proc, 0)
        doc = json.loads(proc.stdout)
        return doc, e2e_helpers.by_id(doc)


class UsageTest(Base):
    def test_help_lists_the_flags(self):
        proc = run(WORK, "--help")
        self.assert_exit(proc, 0)
        for flag in ("--instructions", "--instructions-iterations", "--instructions-cache-sim"):
            self.assertIn(flag, proc.stdout)
        self.assertNotIn("--instructions-worker", proc.stdout)

    def test_valgrind_missing(self):
        with tempfile.TemporaryDirectory() as empty:
            proc = run(WORK, "--instructions", "instr/", env={"PATH": empty})
        self.assert_exit(proc, 2)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        if e2e_helpers.SANITIZED:
            self.assertIn("not available in an AddressSanitizer build", lines[0])
        else:
            self.assertIn("valgrind", lines[0])
            self.assertIn("apt-get install valgrind", lines[0])
        self.assertEqual(proc.stdout, "")

    def test_bad_combinations(self):
        for args in (["--instructions", "--ab", WORK], ["--instructions", "--calibrate", "3",
                                                         "--save-baseline", "x"],
                     ["--instructions", "--alloc-stats"], ["--instructions", "--profile-time", "1"],
                     ["--instructions", "--output-format", "csv"],
                     ["--instructions", "--output-format", "bencher"],
                     ["--instructions-iterations", "8"], ["--instructions-cache-sim"],
                     ["--instructions", "--instructions-iterations", "0"]):
            with self.subTest(args=args):
                proc = run(WORK, *args, "instr/")
                self.assert_exit(proc, 2)
                self.assertTrue(proc.stderr.startswith(e2e_helpers.prog_prefix(WORK)),
                                proc.stderr)
                self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)

    @unittest.skipIf(e2e_helpers.SANITIZED, "sanitizer build: the mode is not available")
    def test_valgrind_that_fails_fails_each_benchmark_saying_so(self):
        # The workers start under valgrind (the plan's launcher); a valgrind that cannot run the
        # program fails each benchmark with the reason, and nothing is counted or saved.
        with tempfile.TemporaryDirectory() as tmp:
            e2e_helpers.write_script(os.path.join(tmp, "valgrind"),
                                     "#!/bin/sh\necho 'valgrind: cannot start' >&2\nexit 1\n")
            proc = run(WORK, "--instructions", "--output-format", "json", "--baseline-dir", tmp,
                       "--save-baseline", "x", "instr/",
                       env={"PATH": tmp + os.pathsep + os.environ.get("PATH", "")})
            self.assert_exit(proc, 3)
            self.assertFalse(os.path.exists(os.path.join(tmp, "x.json")), proc.stderr)
        benches = json.loads(proc.stdout)["benchmarks"]
        self.assertEqual(sorted(b["id"] for b in benches), ["instr/nop4", "instr/nop5"])
        for b in benches:
            self.assertEqual(b["status"], "failed")
            self.assertEqual(b["failure"]["kind"], "exited")
            self.assertIn("valgrind failed", b["message"])
        self.assertEqual(proc.stderr.count("valgrind: cannot start"), 2, proc.stderr)

    def test_worker_side_is_internal(self):
        # The workers of --instructions are this program under valgrind, started by bench with
        # a job; started outside valgrind (by this process, named as the job's parent, with
        # descriptor 3 a pipe as a manager gives it), one says so and measures nothing.
        r, w = os.pipe()
        self.addCleanup(os.close, r)
        proc = e2e_helpers.run([WORK, "--instructions", "instr/nop4"], timeout=240,
                               env=e2e_helpers.environ({
                                   "BENCH_WORKER_JOB": "0 1 0 0 0 1 instr/nop4",
                                   "BENCH_WORKER_PARENT": str(os.getpid())},
                                   unset=["FIXTURE_WORK"]),
                               preexec_fn=lambda: os.dup2(w, 3), close_fds=False)
        os.close(w)
        self.assert_exit(proc, 2)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertIn("not available in an AddressSanitizer build" if e2e_helpers.SANITIZED
                      else "outside valgrind", proc.stderr)
        self.assertEqual(proc.stdout, "")
        proc = run(WORK, "--instructions-worker", "/tmp", "instr/")
        self.assert_exit(proc, 2)
        self.assertIn("unknown option '--instructions-worker'", proc.stderr)


class CountTest(Base):
    # The counts of instr/ and work/ with no other option: run once for the class, by the first
    # test that asks, and read by the tests that need no run of their own (callgrind's counts
    # are exact, so which test made them does not matter).
    plain = None

    def plain_counts(self):
        """(document, {id: benchmark}) of `--instructions instr/ work/`."""
        if CountTest.plain is None:
            CountTest.plain = self.counts("instr/", "work/")
        return CountTest.plain

    @needs_valgrind
    def test_one_instruction_more_per_round_is_exactly_1000(self):
        _, b = self.plain_counts()
        four, five = b["instr/nop4"], b["instr/nop5"]
        self.assertEqual(per_iter(five) - per_iter(four), 1000.0)
        # The loop itself: 1 + 1000 * (4 + 2) instructions, plus the timed loop's own.
        self.assertGreaterEqual(per_iter(four), 6001.0)
        self.assertLess(per_iter(four), 6001.0 + 20)
        for x in (four, five):
            n = x["samples"]["iterations"]
            self.assertEqual(n[1], 2 * n[0])
            t = x["metrics"]["instructions"]["totals"]
            self.assertEqual((t[1] - t[0]) / n[0], per_iter(x))
            self.assertEqual(per_iter(x), int(per_iter(x)))

    @needs_valgrind
    def test_two_runs_give_identical_counts(self):
        _, first = self.plain_counts()
        _, second = self.counts("instr/", "work/")
        self.assertEqual(sorted(first), ["instr/nop4", "instr/nop5", "work/loop"])
        for i in first:
            self.assertEqual(first[i]["metrics"]["instructions"]["totals"],
                             second[i]["metrics"]["instructions"]["totals"], i)
            self.assertEqual(first[i]["samples"]["iterations"],
                             second[i]["samples"]["iterations"], i)

    @needs_valgrind
    def test_json_fields(self):
        doc, b = self.plain_counts()
        self.assertEqual(doc["context"]["mode"], "instructions")
        x = b["work/loop"]
        self.assertEqual(x["status"], "ok")
        self.assertEqual(x["stop_reason"], "fixed plan")
        self.assertEqual(x["warm_up"]["iterations"], 1)
        self.assertEqual(len(x["samples"]["totals_ns"]), 2)
        m = x["metrics"]["instructions"]
        self.assertEqual(m["source"], "callgrind")
        self.assertEqual(m["unit"], "instructions")
        for k in ("median", "mean", "slope"):
            e = m["per_iteration"][k]
            self.assertEqual(e["lower"], e["point"])
            self.assertEqual(e["upper"], e["point"])
        # 1000 rounds of nop, dec, jnz, and the timed loop's own few.
        self.assertGreaterEqual(per_iter(x), 3000.0)
        self.assertLess(per_iter(x), 3020.0)
        check_schema(self, doc)

    @needs_valgrind
    def test_iterations_flag_sets_n(self):
        _, auto = self.plain_counts()
        _, fixed = self.counts("--exact", "--instructions-iterations", "10", "instr/nop4")
        self.assertEqual(fixed["instr/nop4"]["samples"]["iterations"], [10, 20])
        self.assertEqual(per_iter(fixed["instr/nop4"]), per_iter(auto["instr/nop4"]))

    @needs_valgrind
    def test_cache_simulation(self):
        _, b = self.counts("--exact", "--instructions-cache-sim", "instr/nop4")
        m = b["instr/nop4"]["metrics"]
        self.assertEqual(sorted(m), ["d1_misses", "instructions", "ll_misses"])
        # Simulated misses are not exact per iteration (the cache's state at a sample's start
        # differs): only that they are there, as numbers.
        for k in ("d1_misses", "ll_misses"):
            self.assertEqual(m[k]["source"], "callgrind")
            self.assertIsInstance(m[k]["per_iteration"]["median"]["point"], (int, float))

    @needs_valgrind
    def test_pretty_line(self):
        proc = run(WORK, "--instructions", "--exact", "instr/nop4", "instr/nop5")
        self.assert_exit(proc, 0)
        lines = proc.stdout.strip().splitlines()
        self.assertEqual(len(lines), 2, proc.stdout)
        self.assertRegex(lines[0], r"^instr/nop4\s+instructions: 60\d\d\.0/iter")
        self.assertRegex(lines[1], r"^instr/nop5\s+instructions: 70\d\d\.0/iter")

    @needs_valgrind
    def test_crash_under_valgrind_is_reported(self):
        if not FIXTURE:
            self.skipTest("E2E_FIXTURE is not set")
        proc = run(FIXTURE, "--instructions", "--output-format", "json", "--exact", "fix/a",
                   "trouble/crash", "trouble/skip")
        self.assert_exit(proc, 3)
        # Each benchmark is counted in its own worker process under valgrind: the crash ends
        # that benchmark only, and the benchmarks after it run as usual.
        b = {x["id"]: x for x in json.loads(proc.stdout)["benchmarks"]}
        self.assertEqual(b["fix/a"]["status"], "ok")
        self.assertEqual(b["trouble/crash"]["status"], "failed")
        self.assertEqual(b["trouble/crash"]["failure"]["kind"], "crashed")
        self.assertIn("SIGSEGV", b["trouble/crash"]["message"])
        self.assertEqual(b["trouble/skip"]["status"], "skipped")
        self.assertIn("benchmark 'trouble/crash' failed", proc.stderr)

    @needs_valgrind
    def test_reference_workload_runs_under_valgrind(self):
        if not BENCH:
            self.skipTest("E2E_BENCH is not set")
        proc = run(BENCH, "--instructions", "--output-format", "json", "--exact",
                   "workload/vector_similarity_1000")
        self.assert_exit(proc, 0)
        b = json.loads(proc.stdout)["benchmarks"][0]
        self.assertEqual(b["status"], "ok")
        self.assertGreater(per_iter(b), 1000)


class GateTest(Base):
    # What these tests compare are counts per iteration, exact whatever the iterations: 10 and
    # 20 a sample, not the thousands the default plan takes (valgrind starts and counts less).
    # Baseline 'main' of work/loop at 1000 rounds, saved once for the tests that compare with
    # it (its files copied into each test's folder) instead of the same callgrind run in each.
    saved = None

    @classmethod
    def tearDownClass(cls):
        if cls.saved:
            cls.saved.cleanup()
            cls.saved = None

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def work(self, *args, work=None, instructions=True):
        env = {"FIXTURE_WORK": str(work)} if work is not None else None
        pre = COUNTING if instructions else ["--warm-up-time", "0.01", "--measurement-time",
                                             "0.05", "--nresamples", "100"]
        return run(WORK, *pre, "--baseline-dir", self.dir, *args, "--exact", "work/loop",
                   env=env)

    def save(self, name="main", work=1000):
        if (name, work) != ("main", 1000):
            self.assert_exit(self.work("--save-baseline", name, work=work), 0)
            return
        if GateTest.saved is None:
            saved = tempfile.TemporaryDirectory()
            proc = run(WORK, *COUNTING, "--baseline-dir", saved.name, "--save-baseline",
                       "main", "--exact", "work/loop", env={"FIXTURE_WORK": "1000"})
            if proc.returncode != 0:
                saved.cleanup()
            self.assert_exit(proc, 0)
            GateTest.saved = saved
        shutil.copytree(GateTest.saved.name, self.dir, dirs_exist_ok=True)

    @needs_valgrind
    def test_one_percent_more_work_is_a_regression_every_time(self):
        self.save()
        # The second run, without --fail-on-regression, reports it and exits 0; it writes the
        # JSON results too (one callgrind run fewer than a third run for them).
        path = os.path.join(self.dir, "r.json")
        for gate, code in ((["--fail-on-regression"], 1), (["--json", path], 0)):
            proc = self.work("--baseline", "main", *gate, work=1010)
            self.assert_exit(proc, code)
            self.assertIn("regressed", proc.stdout)
            self.assertIn("1 regressed, 0 improved, 0 no change", proc.stdout)
        ch = e2e_helpers.load_json(path)["benchmarks"][0]["metrics"]["instructions"]["change"]
        self.assertEqual(ch["verdict"], "regressed")
        self.assertGreater(ch["ratio"], 1.009)

    @needs_valgrind
    def test_unchanged_build_is_never_flagged(self):
        self.save()
        for _ in range(2):
            proc = self.work("--baseline", "main", "--fail-on-regression", work=1000)
            self.assert_exit(proc, 0)
            self.assertIn("0 regressed, 0 improved, 1 no change", proc.stdout)
            self.assertIn("+0.000%", proc.stdout)

    @needs_valgrind
    def test_less_work_is_an_improvement(self):
        self.save()
        proc = self.work("--baseline", "main", "--fail-on-regression", work=990)
        self.assert_exit(proc, 0)
        self.assertIn("0 regressed, 1 improved", proc.stdout)

    @needs_valgrind
    def test_threshold_is_settable(self):
        self.save()
        proc = self.work("--baseline", "main", "--fail-on-regression", "--noise-threshold",
                         "0.02", work=1010)
        self.assert_exit(proc, 0)
        self.assertIn("1 no change", proc.stdout)

    @needs_valgrind
    def test_modes_are_never_mixed(self):
        self.save("counts")
        proc = self.work("--save-baseline", "times", instructions=False)
        self.assert_exit(proc, 0)
        # A time run against a baseline of counts, and the other way round: exit 2, named.
        proc = self.work("--baseline", "counts", instructions=False)
        self.assert_exit(proc, 2)
        self.assertIn("baseline 'counts' holds instruction counts", proc.stderr)
        proc = self.work("--baseline", "times")
        self.assert_exit(proc, 2)
        self.assertIn("baseline 'times' holds times", proc.stderr)
        # Saving one mode into the other's file is refused and leaves it alone.
        with open(os.path.join(self.dir, "times.json")) as f:
            before = f.read()
        proc = self.work("--save-baseline", "times")
        self.assert_exit(proc, 2)
        self.assertIn("holds times", proc.stderr)
        with open(os.path.join(self.dir, "times.json")) as f:
            self.assertEqual(f.read(), before)
        proc = run(WORK, "--baseline-dir", self.dir, "--load-baseline", "counts", "--baseline",
                   "times")
        self.assert_exit(proc, 2)
        self.assertIn("cannot be compared", proc.stderr)

    @needs_valgrind
    def test_saved_files_compare_by_counts(self):
        self.save("old", work=1000)
        self.save("new", work=1010)
        proc = run(WORK, "--baseline-dir", self.dir, "--load-baseline", "new", "--baseline",
                   "old", "--fail-on-regression")
        self.assert_exit(proc, 1)
        self.assertIn("1 regressed", proc.stdout)
        proc = run(WORK, "--baseline-dir", self.dir, "--load-baseline", "old", "--baseline",
                   "old", "--fail-on-regression")
        self.assert_exit(proc, 0)
        self.assertIn("1 no change", proc.stdout)

    @needs_valgrind
    def test_user_counter_is_not_the_instruction_count(self):
        """counted/loop declares a counter (.counters = "probes") that grows when the work
        shrinks: the verdict, the lines and the JSON are the instruction count's."""
        def counted(*args, work):
            return run(WORK, *COUNTING, "--baseline-dir", self.dir, *args, "--exact",
                       "counted/loop", env={"FIXTURE_WORK": str(work)})
        proc = counted("--save-baseline", "main", work=1000)
        self.assert_exit(proc, 0)
        self.assertRegex(proc.stdout, r"counted/loop +instructions: 30\d\d\.0/iter  "
                                      r"probes: 1000\.00/iter")
        # The same run writes the JSON of the comparison and saves 'less' (two callgrind runs
        # fewer).
        path = os.path.join(self.dir, "r.json")
        proc = counted("--baseline", "main", "--fail-on-regression", "--json", path,
                       "--save-baseline", "less", work=990)
        self.assert_exit(proc, 0)
        self.assertIn("0 regressed, 1 improved", proc.stdout)
        self.assertRegex(proc.stdout, r"improved +counted/loop +-0\.98\d% \(30\d\d\.0 -> ")
        proc = counted("--baseline", "main", "--fail-on-regression", work=1010)
        self.assert_exit(proc, 1)
        (b,) = e2e_helpers.load_json(path)["benchmarks"]
        self.assertEqual(b["metrics"]["instructions"]["change"]["verdict"], "improved")
        self.assertEqual(b["metrics"]["instructions"]["source"], "callgrind")
        self.assertEqual(b["metrics"]["probes"]["source"], "counter")
        self.assertEqual(b["metrics"]["probes"]["change"]["verdict"], "regressed")
        # Two saved files compare by the count too.
        proc = run(WORK, "--baseline-dir", self.dir, "--load-baseline", "less", "--baseline",
                   "main", "--fail-on-regression")
        self.assert_exit(proc, 0)
        self.assertIn("0 regressed, 1 improved", proc.stdout)

    @needs_valgrind
    def test_counter_cannot_take_the_instruction_count_name(self):
        proc = run(WORK, "--instructions", "--output-format", "json", "--exact",
                   "counted/shadow")
        self.assert_exit(proc, 3)
        (b,) = json.loads(proc.stdout)["benchmarks"]
        self.assertEqual(b["status"], "failed")
        self.assertEqual(b["message"], "'instructions' names two metrics (of counter and of "
                         "callgrind): a name in BENCH_FN's .counters must not be one of the "
                         "harness's metrics")

    @needs_valgrind
    def test_benchmark_missing_from_baseline(self):
        """A benchmark the baseline lacks is "new", one the baseline has and the filters select
        but the run does not is "removed": reported, exit 0; an error with --baseline-strict."""
        self.save()
        # The same run saves 'nop', compared below (one callgrind run fewer).
        proc = run(WORK, *COUNTING, "--baseline-dir", self.dir, "--baseline", "main",
                   "--save-baseline", "nop", "--exact", "instr/nop4")
        self.assert_exit(proc, 0)
        self.assertRegex(proc.stdout, r"(?m)^  new +instr/nop4$")
        self.assertIn("1 new", proc.stdout)
        proc = run(WORK, *COUNTING, "--baseline-dir", self.dir, "--baseline", "main",
                   "--baseline-strict", "--exact", "instr/nop4")
        self.assert_exit(proc, 2)
        self.assertIn("'instr/nop4' is new: baseline 'main' has no measurement of it",
                      proc.stderr)
        # Two saved files: what only the old one has (among the selected) is removed. (Before
        # main.json is edited below: main is the class's work/loop at 1000 rounds as saved.)
        proc = run(WORK, "--baseline-dir", self.dir, "--load-baseline", "nop", "--baseline",
                   "main")
        self.assert_exit(proc, 0)
        self.assertRegex(proc.stdout, r"(?m)^  removed +work/loop$")
        self.assertRegex(proc.stdout, r"(?m)^  new +instr/nop4$")
        # The JSON says so too; a baseline entry this program lacks is removed, when selected.
        path = os.path.join(self.dir, "main.json")
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        data["benchmarks"].append(dict(data["benchmarks"][0], id="gone/x", group="gone",
                                       name="x"))
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f)
        proc = run(WORK, *COUNTING, "--baseline-dir", self.dir, "--baseline", "main",
                   "--output-format", "json", "--exact", "instr/nop4", "gone/x")
        self.assert_exit(proc, 0)
        doc = json.loads(proc.stdout)
        self.assertEqual(doc["benchmarks"][0]["change"], {"verdict": "new"})
        self.assertEqual(doc["comparison"], {"baseline": "main", "removed": ["gone/x"]})
        self.assertRegex(proc.stderr, r"(?m)^  removed +gone/x$")
        proc = run(WORK, "--instructions", "--baseline-dir", self.dir, "--baseline", "absent",
                   "instr/nop4")
        self.assert_exit(proc, 2)
        self.assertIn("baseline 'absent' not found", proc.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]])

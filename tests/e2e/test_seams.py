#!/usr/bin/env python3
"""The seam matrix: one program with every kind of benchmark (tests/e2e/fixture_seams.c: plain,
custom and rate counters, parameters, an argument grid, two threads, a batched loop, throughput,
skipped, failed) run through every mode and output, each checked against what is known without
the harness: the ids from the source, exact counter values, instruction counts from the assembly
loops (3 instructions a round), and two changes planted in a copy of the program (seam/plain N%
more rounds, seam/counted N% fewer rounds with one more probe per iteration).

- OutputsTest: pretty, JSON (with the published schema), CSV, Markdown, bencher, bmf and Google
  Benchmark's JSON each list every id with its status, the counters' exact values, the
  throughput and the thread count.
- CompareTest: a saved baseline, then the planted copy with --baseline (the suspects confirmed
  against the saved program): plain regressed, counted improved, nothing else changed; the gate
  fails on plain alone, in JSON, pretty and Markdown.
- AbTest: --ab of the planted copy against the original: the same verdicts.
- InstructionsTest: --instructions counts, saved and compared: exact counts, the counters kept
  apart from the instruction count, the improvement never called a regression.
- ExplainTest: --explain on the planted changes, by callgrind's counts (--ab) and by perf's
  profiles (--baseline): the changed ids explained, in the pretty output and in JSON (the
  machine's samples of each side within that side's samples).
- HistoryTest: a history of the original, then the copy: --history-gate fails on plain alone,
  --history-show places the steps, --history-confirm confirms them as code changes, no trend on
  the unchanged series; the change since the last run; bench-report renders every id.

A new benchmark feature or mode joins this matrix: a benchmark in the fixture, a row of checks
here.
"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import e2e_helpers
import test_explain
import test_trace

# The saves and comparisons here check what a run does, not how well the drift canaries read the
# machine: the canaries keep every step on 3 repetitions and the 64 MiB floor (0.5-3 s a run
# less; docs/comparison.md, "Drift canaries").
os.environ.setdefault("BENCH_CANARY_QUICK", "1")

SEAMS = os.environ.get("E2E_SEAMS", "")
REPORT = os.environ.get("E2E_REPORT", "")
SCHEMA = os.environ.get("E2E_SCHEMA", "")
PLANTED = 20  # percent: the copy's seam/plain runs 20% more rounds, seam/counted 20% fewer

OK_IDS = ["seam/batched", "seam/bytes", "seam/counted", "seam/grid/size=200/load=1",
          "seam/grid/size=200/load=2", "seam/grid/size=400/load=1", "seam/grid/size=400/load=2",
          "seam/param/500", "seam/param/1000", "seam/plain", "seam/threads"]
ALL_IDS = sorted(OK_IDS + ["seam/failed", "seam/skipped"])
UNCHANGED = [i for i in OK_IDS if i not in ("seam/plain", "seam/counted")]
# Rounds of each benchmark's chain per iteration (per thread), from fixture_seams.c.
ROUNDS = {"seam/plain": 3000, "seam/counted": 2000, "seam/param/500": 500,
          "seam/param/1000": 1000, "seam/grid/size=200/load=1": 200,
          "seam/grid/size=200/load=2": 400, "seam/grid/size=400/load=1": 400,
          "seam/grid/size=400/load=2": 800, "seam/threads": 400, "seam/batched": 400,
          "seam/bytes": 400}
# Short runs: behaviour is checked here, not precision.
FAST = ["--quick", "--color", "never", "--nresamples", "1000"]
# OutputsTest checks what each output shows of every kind of benchmark (ids, statuses, counts
# known from the source, intervals around their values), never how precise a time is: 0.02 s
# of measurement a benchmark, a run of all 13 ids in 0.4 s rather than --quick's 1.9 s.
SHORT = [*FAST, "--warm-up-time", "0.01", "--measurement-time", "0.02"]
# Comparisons: 20% changes against a 10% threshold leave room for a loaded machine.
CMP = ["--noise-threshold", "0.1", "--color", "never"]

KEY_HOME = tempfile.mkdtemp(prefix="bench-seams-key-")


def tearDownModule():  # pylint: disable=invalid-name
    shutil.rmtree(KEY_HOME, ignore_errors=True)


def run(program, *args, env_extra=None, timeout=240):
    env = e2e_helpers.environ({"XDG_CONFIG_HOME": KEY_HOME, "BENCH_LAST_DIR": "",
                               **(env_extra or {})},
                              unset=["BENCH_HISTORY", "BENCH_BASELINE_DIR"])
    return e2e_helpers.run([program, *args], timeout=timeout, env=env)


def instructions_expected(bid, planted=0.0):
    """Instructions per iteration of a benchmark's chain (one thread's), from the source: one
    mov, then 3 per round."""
    rounds = ROUNDS[bid]
    if bid == "seam/plain":
        rounds = int(rounds * (1 + planted / 100) + 0.5)
    elif bid == "seam/counted":
        rounds = int(rounds * (1 - planted / 100) + 0.5)
    return 1 + 3 * rounds


class SeamCase(e2e_helpers.Case):
    def setUp(self):
        if not SEAMS:
            self.skipTest("E2E_SEAMS is not set (ctest sets it)")
        self.dir = self.temp_dir("bench-seams-")
        self.planted = e2e_helpers.copy_program(SEAMS, os.path.join(self.dir, "planted"),
                                                f"E2ESLOW{PLANTED}\n".encode())
        self.original = e2e_helpers.copy_program(SEAMS, os.path.join(self.dir, "original"))

    def verdicts(self, path):
        """{id: verdict} of a results file's comparison."""
        doc = e2e_helpers.load_json(path)
        return {b["id"]: (b.get("change") or {}).get("verdict") for b in doc["benchmarks"]}

    def check_planted_verdicts(self, verdicts, what):
        self.assertEqual(verdicts.get("seam/plain"), "regressed", (what, verdicts))
        self.assertEqual(verdicts.get("seam/counted"), "improved", (what, verdicts))
        for bid in UNCHANGED:
            self.assertNotIn(verdicts.get(bid), ("regressed", "improved"), (what, bid, verdicts))


class OutputsTest(SeamCase, test_trace.TraceCase):
    """Every output format lists every kind of benchmark, with the values known from the
    source."""

    def test_trace_every_kind(self):
        """--trace on every kind of benchmark: a well-formed timeline whose sample slices are
        each measured id's samples exactly, a track per thread of the threaded one, the failed
        one's worker marked as it ended, no sample of the skipped one."""
        trace, results = os.path.join(self.dir, "t.json"), os.path.join(self.dir, "r.json")
        t0 = time.monotonic()
        p = run(self.original, *SHORT, "--trace", trace, "--json", results)
        wall = time.monotonic() - t0
        self.assert_exit(p, 3)  # seam/failed
        events = self.check_format(test_trace.strict_load(trace), wall)
        res = e2e_helpers.by_id(e2e_helpers.load_json(results))
        owner = self.process_ids(events)
        # Each measured sample a slice. The trace writes 17 digits; the results file's printer
        # (cJSON) keeps 15 or 16 where they read back within its epsilon, so a batched body's
        # fractional totals agree to 1e-15 of themselves, not bit for bit.
        traced = {}
        for e in events:
            if e["ph"] == "X" and e.get("cat") == "sample" and e["name"] == "measure sample":
                traced.setdefault(owner[e["pid"]], []).append(
                    (e["args"]["iterations"], e["args"]["total_ns"]))
        for bid in OK_IDS:
            saved = sorted(zip(res[bid]["samples"]["iterations"],
                               res[bid]["samples"]["totals_ns"]))
            got = sorted(traced.get(bid, []))
            self.assertEqual([i for i, _ in got], [i for i, _ in saved], bid)
            for (_, a), (_, b) in zip(got, saved):
                self.assertLessEqual(abs(a - b), 1e-15 * abs(b), (bid, a, b))
        self.assertNotIn("seam/skipped", traced, "a skipped body took samples")
        self.assertEqual(sorted(set(owner.values())), ALL_IDS)
        threads = {e["args"]["name"].split(" (")[0] for e in events
                   if e["name"] == "thread_name" and owner.get(e["pid"]) == "seam/threads"}
        self.assertEqual(len(threads), 2, threads)
        failed = [e for e in events if e["ph"] == "i" and e["name"].startswith("end: ")
                  and owner.get(e["pid"]) == "seam/failed"]
        self.assertTrue(failed, "the failed benchmark's worker has no end marker")

    def test_shards_cover_every_id_once(self):
        """--shard K/3 over every kind of benchmark: the three parts are disjoint and together
        the whole selection, and a part runs only its ids."""
        parts = []
        for k in (1, 2, 3):
            p = run(self.original, "--list", "--shard", f"{k}/3")
            self.assert_exit(p, 0)
            parts.append(p.stdout.split())
        ids = [i for part in parts for i in part]
        self.assertEqual(sorted(ids), ALL_IDS)
        self.assertEqual(len(ids), len(set(ids)), parts)
        path = os.path.join(self.dir, "s.json")
        k = next(j for j, part in enumerate(parts, 1) if "seam/failed" not in part and part)
        p = run(self.original, *SHORT, "--shard", f"{k}/3", "--json", path)
        self.assert_exit(p, 0)
        self.assertEqual(sorted(e2e_helpers.by_id(e2e_helpers.load_json(path))),
                         sorted(parts[k - 1]))

    def test_json_and_pretty(self):
        path = os.path.join(self.dir, "r.json")
        p = run(self.original, *SHORT, "--json", path)
        self.assert_exit(p, 3)  # seam/failed
        doc = e2e_helpers.load_json(path)
        if SCHEMA:
            e2e_helpers.check_schema(doc, SCHEMA)
        res = e2e_helpers.by_id(doc)
        self.assertEqual(sorted(res), ALL_IDS)
        self.assertEqual(res["seam/failed"]["status"], "failed")
        self.assertEqual(res["seam/skipped"]["status"], "skipped")
        for bid in OK_IDS:
            self.assertEqual(res[bid]["status"], "ok", bid)
            self.assertGreater(res[bid]["estimates"]["median"]["point"], 0, bid)
        counted = res["seam/counted"]["metrics"]
        self.assertEqual(counted["probes"]["per_iteration"]["median"]["point"], 7.0)
        self.assertEqual(counted["hits"]["per_iteration"]["median"]["point"], 3.0)
        self.assertNotIn("instructions", counted)
        self.assertEqual(res["seam/bytes"]["throughput"]["bytes_per_iteration"], 4096)
        self.assertEqual(res["seam/threads"]["threads"]["count"], 2)
        self.assertEqual(res["seam/param/500"]["param"], 500)
        self.assertEqual(res["seam/grid/size=400/load=2"]["args"], {"size": 400, "load": 2})
        # The code identity: every benchmark of every kind has one (objdump is binutils', beside
        # any C compiler), and the ids of one BENCH_FN (its parameters, its grid) share it.
        # (In a sanitizer build a body that calls a C library function the sanitizer intercepts
        # has none: the function is then the sanitizer's, unversioned; any it has is a hash.)
        if shutil.which("objdump"):
            for bid in ALL_IDS:
                if e2e_helpers.SANITIZED and res[bid].get("code_hash") is None:
                    continue
                self.assertRegex(res[bid].get("code_hash") or "", r"^[0-9a-f]{64}$", bid)
        if shutil.which("objdump") and not e2e_helpers.SANITIZED:
            grid = {res[b]["code_hash"] for b in ALL_IDS if b.startswith("seam/grid/")}
            self.assertEqual(len(grid), 1, grid)
            self.assertNotEqual(res["seam/plain"]["code_hash"], res["seam/counted"]["code_hash"])
        # The pretty output of the same run: a block per id, the reasons, the counters.
        out = p.stdout
        for bid in ALL_IDS:
            self.assertRegex(out, rf"(?m)^{re.escape(bid)}\b", bid)
        self.assertRegex(out, r"(?m)^seam/skipped +skipped: seam fixture: skipped on purpose$")
        self.assertRegex(out, r"(?m)^seam/failed +FAILED: seam fixture: failed on purpose$")
        self.assertRegex(out, r"(?m)^ +probes: +7\.000/iter \[7\.000 7\.000\]$")
        self.assertRegex(out, r"(?m)^ +hits: +3\.000/iter \[3\.000 3\.000\] = ")
        self.assertRegex(out, r"(?m)^ +thrpt: +\[")
        self.assertIn("2 threads: total", out)
        self.assertIn("13 benchmarks: 11 measured, 1 skipped, 1 failed", out)

    def test_probes_in_workers_and_in_process(self):
        """Software perf events and allocation statistics beside the counters, in worker
        processes and in one process: every id keeps its exact counters, and the chains
        allocate nothing."""
        ids = ["seam/counted", "seam/threads", "seam/batched", "seam/grid/size=200/load=1",
               "seam/skipped"]
        for mode in ([], ["--in-process"]):
            path = os.path.join(self.dir, "probes.json")
            p = run(self.original, *SHORT, *mode, "--alloc-stats", "--perf-events",
                    "task-clock,page-faults", "--json", path, "--exact", *ids)
            self.assert_exit(p, 0)
            res = e2e_helpers.by_id(e2e_helpers.load_json(path))
            self.assertEqual(sorted(res), sorted(ids), mode)
            self.assertEqual(res["seam/skipped"]["status"], "skipped")
            for bid in ids[:-1]:
                m = {k: v["per_iteration"]["median"]["point"]
                     for k, v in res[bid]["metrics"].items() if "per_iteration" in v}
                self.assertEqual(m.get("allocations"), 0, (mode, bid, m))
                self.assertEqual(m.get("allocated_bytes"), 0, (mode, bid, m))
                self.assertGreater(m.get("task-clock", 0), 0, (mode, bid, m))
                self.assertNotIn("instructions", m, (mode, bid))
            counted = res["seam/counted"]["metrics"]
            self.assertEqual(counted["probes"]["per_iteration"]["median"]["point"], 7.0, mode)
            self.assertEqual(counted["hits"]["per_iteration"]["median"]["point"], 3.0, mode)

    def test_csv(self):
        p = run(self.original, *SHORT, "--output-format", "csv")
        self.assert_exit(p, 3)
        rows = {r["id"]: r for r in csv.DictReader(io.StringIO(p.stdout))}
        self.assertEqual(sorted(rows), ALL_IDS)
        self.assertEqual(rows["seam/failed"]["status"], "failed")
        self.assertEqual(rows["seam/skipped"]["status"], "skipped")
        self.assertEqual(rows["seam/bytes"]["bytes_per_iteration"], "4096")
        self.assertEqual(rows["seam/param/500"]["param"], "500")
        # Each metric its own columns; a row without the metric leaves them empty.
        counted = rows["seam/counted"]
        for name, value in (("probes", 7.0), ("hits", 3.0)):
            self.assertEqual(float(counted[name]), value, counted)
            self.assertEqual(float(counted[f"{name}_lower"]), value, counted)
            self.assertEqual(counted[f"{name}_unit"], "events", counted)
            self.assertEqual(rows["seam/plain"][name], "", rows["seam/plain"])

    def test_markdown_bencher_gbench(self):
        gb = os.path.join(self.dir, "gb.json")
        p = run(self.original, *SHORT, "--output-format", "markdown", "--export-gbench", gb)
        self.assert_exit(p, 3)
        cells = {}
        for line in p.stdout.splitlines():
            if line.startswith("| seam/"):
                row = [c.strip() for c in line.strip("|").split("|")]
                cells[row[0]] = row
        self.assertEqual(sorted(cells), ALL_IDS)
        self.assertEqual(cells["seam/failed"][1], "failed")
        self.assertEqual(cells["seam/skipped"][1], "skipped")
        header = [c.strip() for c in p.stdout.splitlines()[0].strip("|").split("|")]
        self.assertEqual(cells["seam/counted"][header.index("probes /iter")], "7.000")
        self.assertEqual(cells["seam/counted"][header.index("hits /iter")], "3.000")
        self.assertIn("2 threads", cells["seam/threads"][header.index("Throughput")])
        # Google Benchmark's JSON: a run per measured id, its counters as fields.
        runs = {r["name"]: r for r in e2e_helpers.load_json(gb)["benchmarks"]}
        self.assertEqual(sorted(runs), ALL_IDS)
        self.assertEqual(runs["seam/counted"]["probes"], 7.0)
        self.assertEqual(runs["seam/counted"]["hits"], 3.0)
        self.assertEqual(runs["seam/threads"]["threads"], 2)
        self.assertGreater(runs["seam/bytes"]["bytes_per_second"], 0)
        self.assertTrue(runs["seam/failed"].get("error_occurred"), runs["seam/failed"])
        # bencher: a line per measured id, failed and ignored ones named.
        p = run(self.original, *SHORT, "--output-format", "bencher")
        self.assert_exit(p, 3)
        for bid in OK_IDS:
            self.assertRegex(p.stdout, rf"(?m)^test {re.escape(bid)} +\.\.\. bench: ", bid)
        self.assertRegex(p.stdout, r"(?m)^test seam/failed +\.\.\. FAILED$")
        self.assertRegex(p.stdout, r"(?m)^test seam/skipped +\.\.\. ignored$")
        # The bencher Metric Format: every measured id of every kind, the failed and skipped
        # ones left out; the rate is the time's inverse, each interval around its value.
        p = run(self.original, *SHORT, "--output-format", "bmf")
        self.assert_exit(p, 3)
        bmf = json.loads(p.stdout)
        self.assertEqual(sorted(bmf), sorted(OK_IDS))
        for bid, m in bmf.items():
            lat, thr = m["latency"], m["throughput"]
            self.assertGreater(lat["value"], 0, bid)
            self.assertLessEqual(lat["lower_value"], lat["value"], bid)
            self.assertGreaterEqual(lat["upper_value"], lat["value"], bid)
            self.assertAlmostEqual(thr["value"] * lat["value"] / 1e9, 1, places=9, msg=bid)
            self.assertAlmostEqual(thr["lower_value"] * lat["upper_value"] / 1e9, 1, places=9,
                                   msg=bid)


class CompareTest(SeamCase):
    """A saved baseline of the original, compared with the planted copy."""

    def test_baseline_with_planted_changes(self):
        base = os.path.join(self.dir, "baselines")
        env = {"BENCH_BASELINE_DIR": base}
        p = run(self.original, *FAST, "--save-baseline", "before", env_extra=env)
        self.assert_exit(p, 3)
        path = os.path.join(self.dir, "cmp.json")
        p = run(self.planted, *FAST, *CMP, "--baseline", "before", "--confirm-time", "2",
                "--fail-on-regression", "--json", path, "--output-format", "markdown",
                env_extra=env)
        self.assert_exit(p, 3)  # a failed benchmark outranks the regression
        verdicts = self.verdicts(path)
        self.check_planted_verdicts(verdicts, "--baseline")
        doc = e2e_helpers.by_id(e2e_helpers.load_json(path))
        plain = doc["seam/plain"]["change"]
        self.assertTrue(1.1 < plain["ratio"] < 1.35, plain)
        counted = doc["seam/counted"]["change"]
        self.assertTrue(0.7 < counted["ratio"] < 0.9, counted)
        # The counter's change is the counter's (7 -> 8), never the time's.
        self.assertEqual(doc["seam/counted"]["metrics"]["probes"]["per_iteration"]["median"]["point"], 8.0)
        self.assertRegex(p.stdout, r"(?m)^\| seam/plain \|.*regressed")
        self.assertRegex(p.stdout, r"(?m)^\| seam/counted \|.*improved")
        # Without the failed benchmark the gate's exit code is the regression's; pretty output.
        p = run(self.planted, *FAST, *CMP, "--baseline", "before", "--confirm-time", "2",
                "--fail-on-regression", "--exact", "seam/plain", "seam/counted", "seam/skipped",
                env_extra=env)
        self.assert_exit(p, 1)
        self.assertIn("seam/plain: Performance has regressed.", p.stdout)
        self.assertIn("seam/counted: Performance has improved.", p.stdout)
        # The planted copy's code is the original's, with its marker appended to the file: data
        # the program reads, part of its code identity, so its changes are still verdicts.
        self.assertNotIn("same code", p.stdout)
        self.assertNotIn("seam/counted: Performance has regressed.", p.stdout)
        # Two saved baselines compared without running anything: the planted changes, each
        # read from the times (counted's probes rose while its time fell).
        p = run(self.planted, *FAST, "--save-baseline", "after", "--exact", "seam/plain",
                "seam/counted", env_extra=env)
        self.assert_exit(p, 0)
        p = run(self.planted, *CMP, "--load-baseline", "after", "--baseline", "before",
                "--exact", "seam/plain", "seam/counted", env_extra=env)
        self.assert_exit(p, 0)
        # (Saved numbers of quick runs on a loaded machine may leave either inconclusive; what
        # they may never do is call a change the wrong way.)
        self.assertRegex(p.stdout, r"(?m)^  (regressed|inconclusive) +seam/plain +[-+]")
        self.assertRegex(p.stdout, r"(?m)^  (improved|inconclusive) +seam/counted +[-+]")
        # Its report is words only: a file or format it cannot write is refused, not ignored.
        for extra in (["--json", os.path.join(self.dir, "load.json")],
                      ["--output-format", "json"], ["--output-format", "markdown"]):
            p = run(self.planted, "--load-baseline", "after", "--baseline", "before", *extra,
                    env_extra=env)
            self.assert_exit(p, 2)
            self.assertIn("--load-baseline reports in the pretty format only", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "load.json")))


class AbTest(SeamCase):
    def test_ab_with_planted_changes(self):
        ids = ["seam/plain", "seam/counted", "seam/param/500", "seam/grid/size=200/load=2",
               "seam/threads", "seam/batched", "seam/bytes", "seam/skipped"]
        out = os.path.join(self.dir, "ab.json")
        p = run(self.planted, *CMP, "--ab", self.original, "--ab-time", "1", "--ab-pairs", "6",
                "--fail-on-regression", "--json", out, "--exact", *ids)
        self.assert_exit(p, 1)
        # The summary: a line per benchmark, its verdict first.
        summary = p.stdout.split("Comparison with A, the old build", 1)[1]
        rows = re.findall(
            r"(?m)^  (regressed|improved|no change|within noise|inconclusive|skipped) +(\S+)",
            summary)
        verdicts = {m[1]: m[0] for m in rows}
        self.assertEqual(sorted(verdicts), sorted(ids), summary)
        # --json: the same rows in the same order, for programs (docs/results-format.md).
        doc = e2e_helpers.load_json(out)
        self.assertEqual((doc["format"], doc["version"], doc["old"]),
                         ("harness-ab", 1, self.original))
        self.assertEqual([(b["verdict"], b["id"]) for b in doc["benchmarks"]], rows)
        for b in doc["benchmarks"]:
            self.assertEqual(b["compared"], b["verdict"] != "skipped", b)
            self.assertEqual(b["why"] is None, b["compared"], b)
            if b["compared"]:
                self.assertLessEqual(b["ratio_lower"], b["ratio"], b)
                self.assertLessEqual(b["ratio"], b["ratio_upper"], b)
                self.assertGreaterEqual(b["pairs"], 2, b)
            else:
                self.assertIsNone(b["ratio"], b)
        self.check_planted_verdicts(verdicts, "--ab")
        self.assertEqual(verdicts["seam/skipped"], "skipped")
        self.assertIn("seam/plain: Performance has regressed.", p.stdout)
        self.assertIn("seam/counted: Performance has improved.", p.stdout)
        # A paired report is words only: another format is refused, not answered with text.
        for extra in (["--output-format", "json"], ["--output-format", "csv"],
                      ["--export-gbench", os.path.join(self.dir, "gb.json")]):
            p = run(self.planted, "--ab", self.original, *extra, "--exact", "seam/plain")
            self.assert_exit(p, 2)
            self.assertIn("--ab reports in the pretty format only", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(self.dir, "gb.json")))


class ExplainTest(SeamCase):
    """--ab --explain on the planted changes, by callgrind's exact counts: the two changed ids
    are explained (3 instructions a round: seam/plain +600 rounds, seam/counted -400), the
    unchanged ones are not; --baseline --explain by time: the explanation in the JSON results
    and in the pretty output, the machine's samples of each side included."""

    def test_explain_instructions(self):
        if not valgrind_usable():
            self.skipTest("no valgrind, or a sanitizer build (valgrind cannot run it)")
        ids = ["seam/plain", "seam/counted", "seam/param/500", "seam/threads", "seam/bytes"]
        # 3 s a benchmark: 6 pairs take under 1 s on an idle machine, but at load 13 the
        # planted seam/plain got 2 pairs of 1 s and stayed inconclusive (nothing to explain).
        p = run(self.planted, *CMP, "--ab", self.original, "--ab-time", "3", "--ab-pairs", "6",
                "--explain", "--instructions", "--exact", *ids)
        self.assert_exit(p, 0)
        got = test_explain.explained(p.stdout)
        self.assertEqual(sorted(got), ["seam/counted", "seam/plain"], p.stdout)
        for bid, rounds in (("seam/plain", 600), ("seam/counted", -400)):
            text = " ".join(got[bid])
            name, share = test_explain.first_named(got[bid])
            self.assertIsNotNone(name, (bid, text))
            self.assertGreaterEqual(share, 70, (bid, text))
            self.assertLessEqual(share, 130, (bid, text))
            self.assertIn(f"{3 * rounds:+d}", text.replace(".0 ", " "), (bid, text))

    def test_explain_time_in_json_and_pretty(self):
        """--baseline --explain by perf's profiles: the JSON results carry the explanation of
        the planted seam/plain with the machine's samples (interrupts, context switches) of
        each side, whole numbers no more than that side's samples, and the pretty output's
        profiler line counts the same ones. (BENCH_EXPLAIN_ALL: a suspect is explained
        whatever its confirmation says, so a loaded machine cannot leave nothing to check.)"""
        if not test_explain.perf_usable() or e2e_helpers.SANITIZED:
            self.skipTest("perf cannot record here, or a sanitizer build")
        env = {"BENCH_BASELINE_DIR": os.path.join(self.dir, "baselines"),
               "BENCH_EXPLAIN_ALL": "1"}
        # Short runs: a suspect whatever the saved numbers say (regressed, or inconclusive on
        # their wide interval), and --explain has every suspect confirmed and profiled.
        p = run(self.original, *SHORT, "--save-baseline", "before", "--exact", "seam/plain",
                env_extra=env)
        self.assert_exit(p, 0)
        path = os.path.join(self.dir, "explained.json")
        p = run(self.planted, *SHORT, *CMP, "--baseline", "before", "--confirm-time", "1",
                "--explain", "--json", path, "--exact", "seam/plain", env_extra=env)
        self.assert_exit(p, 0)
        doc = e2e_helpers.load_json(path)
        if SCHEMA:
            e2e_helpers.check_schema(doc, SCHEMA)
        e = e2e_helpers.by_id(doc)["seam/plain"].get("explanation")
        self.assertIsNotNone(e, p.stdout + p.stderr)
        self.assertEqual((e["mode"], e["explained"]), ("time", True), e)
        for k in range(2):
            machine, samples = e["machine_samples"][k], e["samples"][k]
            self.assertIsInstance(machine, int, e)
            self.assertLessEqual(0, machine, e)
            self.assertLessEqual(machine, samples, e)
        m = re.search(r"(\d+) \(A\) \+ (\d+) \(B\) samples of the timed loop, (\d+) \+ (\d+) "
                      r"of them the machine's", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        self.assertEqual([int(g) for g in m.groups()], [*e["samples"], *e["machine_samples"]],
                         (p.stdout, e))


def valgrind_usable():
    return shutil.which("valgrind") is not None and not e2e_helpers.SANITIZED


class InstructionsTest(SeamCase):
    def setUp(self):
        super().setUp()
        if not valgrind_usable():
            self.skipTest("no valgrind, or a sanitizer build (valgrind cannot run it)")

    @staticmethod
    def counts(path):
        return e2e_helpers.by_id(e2e_helpers.load_json(path))

    def test_counts_and_comparison(self):
        base = os.path.join(self.dir, "baselines")
        env = {"BENCH_BASELINE_DIR": base}
        before = os.path.join(self.dir, "before.json")
        ids = ["seam/plain", "seam/counted", "seam/param/500", "seam/grid/size=400/load=2",
               "seam/batched", "seam/bytes", "seam/threads", "seam/skipped"]
        # 10 and 20 iterations a benchmark, not the thousands the default plan takes: the count
        # per iteration is the difference of the two samples' counts (exact whatever N), and
        # valgrind runs 2 s less each time. Both runs take the same N: a batched loop's count
        # per iteration moves with N (1208.08 at the default, 1206 at 10), as a build would.
        counting = ["--instructions", "--instructions-iterations", "10"]
        p = run(self.original, *counting, "--save-baseline", "i", "--json", before,
                "--exact", *ids, env_extra=env)
        self.assert_exit(p, 0)
        res = self.counts(before)
        for bid in ids[:-1]:
            got = res[bid]["metrics"]["instructions"]["per_iteration"]["median"]["point"]
            want = instructions_expected(bid)
            # The chain plus the loop's few instructions (the counters' calls in counted).
            slack = 400 if bid == "seam/counted" else 16
            self.assertTrue(want <= got <= want + slack, (bid, got, want))
        self.assertEqual(res["seam/counted"]["metrics"]["probes"]["per_iteration"]["median"]["point"], 7.0)
        self.assertEqual(res["seam/skipped"]["status"], "skipped")
        # One instruction count per line: a counter is never printed as instructions.
        line = [l for l in p.stdout.splitlines() if l.startswith("seam/counted ")][0]
        self.assertEqual(line.count("instructions:"), 1, line)
        self.assertRegex(line, r"probes: 7\.00?/iter")
        # A thread's time under valgrind is no count: never printed beside the instructions.
        line = [l for l in p.stdout.splitlines() if l.startswith("seam/threads ")][0]
        self.assertNotIn("thread_", line)
        # The planted copy: plain +20% instructions (regressed), counted -20% (improved) while
        # its probes went 7 -> 8; everything else exactly the same count.
        after = os.path.join(self.dir, "after.json")
        p = run(self.planted, *counting, "--baseline", "i", "--json", after,
                "--fail-on-regression", "--exact", *ids, env_extra=env)
        self.assert_exit(p, 1)
        res2 = self.counts(after)
        verdicts = {b: (res2[b].get("change") or {}).get("verdict") for b in res2}
        self.assertEqual(verdicts["seam/plain"], "regressed", verdicts)
        self.assertEqual(verdicts["seam/counted"], "improved", verdicts)
        for bid in ids[2:-1]:
            self.assertEqual(verdicts[bid], "no change", (bid, verdicts))
        for bid in ("seam/plain", "seam/counted"):
            old = res[bid]["metrics"]["instructions"]["per_iteration"]["median"]["point"]
            new = res2[bid]["metrics"]["instructions"]["per_iteration"]["median"]["point"]
            want = (instructions_expected(bid, PLANTED) - instructions_expected(bid))
            self.assertAlmostEqual(new - old, want, delta=2, msg=bid)
            # The verdict stands where a time's would, naming its metric; the numbers are the
            # metric's change.
            self.assertEqual(res2[bid]["change"]["metric"], "instructions")
            ratio = res2[bid]["metrics"]["instructions"]["change"]["ratio"]
            self.assertAlmostEqual(ratio, new / old, places=6)
        self.assertEqual(res2["seam/counted"]["metrics"]["probes"]["per_iteration"]["median"]["point"], 8.0)
        self.assertRegex(p.stdout, r"(?m)^ *regressed +seam/plain +\+19\.99\d%")
        self.assertRegex(p.stdout, r"(?m)^ *improved +seam/counted +-19\.\d{3}%")
        self.assertNotRegex(p.stdout, r"(?m)^ *regressed +seam/counted")


class HistoryTest(SeamCase):
    def setUp(self):
        super().setUp()
        if "history: SQLite" not in run(SEAMS, "--version").stdout:
            self.skipTest("this build has no SQLite (bench --version says so)")
        self.db = os.path.join(self.dir, "runs.db")

    IDS = ["seam/plain", "seam/counted", "seam/param/1000", "seam/threads", "seam/skipped"]
    RUN = ["--warm-up-time", "0.01", "--measurement-time", "0.08", "--nresamples", "500",
           "--processes", "3", "--color", "never", "--exact", *IDS]

    def test_gate_show_confirm_since_last_report(self):
        last = os.path.join(self.dir, "last")
        for i in range(5):
            p = run(self.original, *self.RUN, "--history", self.db)
            self.assert_exit(p, 0)
            if i > 0:  # the change since the run before, from the history
                self.assertIn("Since the last run", p.stdout)
                for bid in ("seam/plain", "seam/counted", "seam/param/1000", "seam/threads"):
                    self.assertRegex(p.stdout, rf"(?m)^  {re.escape(bid)} \(against run ", bid)
        # The planted copy with the gate: plain fails it (confirmed against run 5's program),
        # counted's improvement does not.
        path = os.path.join(self.dir, "gate.json")
        # (A 5% threshold against the 20% step: the gate wants the step's whole interval past
        # it, and five quick runs on a loaded machine leave wide intervals; a step of the noise
        # is settled by the paired confirmation, so unchanged benchmarks stay unflagged.)
        p = run(self.planted, *self.RUN, "--history", self.db, "--history-gate", "5",
                "--noise-threshold", "0.05", "--confirm-time", "2", "--json", path)
        if e2e_helpers.SANITIZED and p.returncode == 0:
            # An unoptimised sanitizer build of five quick runs on a loaded machine can leave
            # the step's interval inside the threshold: a miss the gate may make there, never
            # a wrong word (checked below); the optimised build must find it, or say that the
            # earlier runs spread too wide to tell (a load of 5-10 beside the test did that).
            self.assertNotRegex(p.stderr, r"(?m)^seam/plain: regression confirmed")
        elif p.returncode == 0:
            self.assertRegex(p.stderr, r"(?m)^seam/plain: cannot tell against the last 5 runs: "
                                       r"\+[\d.]+% \[-[\d.]+%, \+[\d.]+%\], the earlier runs "
                                       r"spread too wide")
            self.assertNotRegex(p.stderr, r"(?m)^seam/plain: regress")
        else:
            self.assert_exit(p, 1)
            self.assertRegex(p.stderr, r"(?m)^seam/plain: regressed against the last 5 runs")
            self.assertRegex(p.stderr, r"seam/plain: regression confirmed: .* it fails the gate")
        self.assertNotRegex(p.stderr, r"(?m)^seam/counted: regressed")
        for bid in ("seam/param/1000", "seam/threads"):
            self.assertNotRegex(p.stderr, rf"{re.escape(bid)}: regression confirmed")
        for _ in range(4):
            p = run(self.planted, *self.RUN, "--history", self.db)
            self.assert_exit(p, 0)
        # The series: ten runs, steps at run 6 on plain and counted, confirmed by the kept
        # programs as code changes; no trend on the unchanged series.
        show = os.path.join(self.dir, "show.json")
        p = run(self.original, "--history-show", self.db, "--history-confirm", "--confirm-time",
                "2", "--json", show, *CMP, timeout=300)
        self.assert_exit(p, 0)
        out = p.stdout + p.stderr
        if os.environ.get("E2E_SEAMS_VERBOSE"):
            print(out)
        where = r"(, within runs \d+ to \d+)?"
        self.assertRegex(out, rf"seam/plain: change point at run [56] \(\+[\d.]+%\){where}: "
                              r"confirmed: \+[\d.]+% .* programs of runs 5 and 6")
        # (One run disturbed tenfold, as a loaded test machine sometimes gives, widens its side
        # so far that a 20% step is not found: no change point is a miss, never a wrong word.)
        if not re.search(r"seam/counted: \d+ runs\n(.*\n)*?  change points: none", out):
            self.assertRegex(out, rf"seam/counted: change point at run [56] \(-[\d.]+%\)"
                                  rf"{where}: confirmed: -[\d.]+% .* programs of runs 5 and 6")
        self.assertNotIn("not a code change", out)
        for bid in ("seam/param/1000", "seam/threads"):
            self.assertNotRegex(out, rf"{re.escape(bid)}: .*trend", bid)
        # bench-report of the series and of a run's results: every id on the page.
        if REPORT:
            html = os.path.join(self.dir, "html")
            p = subprocess.run([sys.executable, REPORT, path, "--history", show, "--out", html],
                               capture_output=True, text=True, timeout=120, check=False)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(html, "index.html"), encoding="utf-8") as f:
                page = f.read()
            for bid in self.IDS:
                self.assertIn(bid, page, bid)
        # The change since the last run without a history: a program rebuilt in place, the
        # original then the planted copy at the same path.
        env = {"BENCH_LAST_DIR": last}
        prog = e2e_helpers.copy_program(SEAMS, os.path.join(self.dir, "prog"))
        p = run(prog, *self.RUN, env_extra=env)
        self.assert_exit(p, 0)
        self.assertNotIn("Since the last run", p.stdout)
        os.replace(e2e_helpers.copy_program(self.planted, os.path.join(self.dir, "prog.new")),
                   prog)
        p = run(prog, *self.RUN, env_extra=env)
        self.assert_exit(p, 0)
        self.assertIn("Since the last run", p.stdout)
        block = p.stdout.split("Since the last run", 1)[1]
        for bid in ("seam/plain", "seam/counted", "seam/param/1000", "seam/threads"):
            self.assertIn(bid, block)
        # Quick runs on a loaded machine may tell nothing (seen in CI: "-2.26%, inconclusive:
        # cannot tell changes below 388%"); when they tell, the planted slowdown is a rise.
        line = re.search(r"(?m)^ +seam/plain \(against the last run\): (.*)$", block)
        self.assertIsNotNone(line, block)
        if "cannot tell" not in line[1]:
            self.assertRegex(line[1], r"^\+\d+\.\d\d%", block)


if __name__ == "__main__":
    unittest.main()

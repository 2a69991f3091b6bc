#!/usr/bin/env python3
"""End-to-end tests of the interop formats (docs/interop.md): `--output-format bencher` (Rust
libtest bench lines, read by bencher.dev and github-action-benchmark) and `--export-gbench FILE`
(Google Benchmark JSON, read by google/benchmark's tools/compare.py and dashboards), and
`--output-format bmf` (the bencher Metric Format JSON that `bencher run --adapter json` reads).

The fixture program runs (E2E_FIXTURE; its clock/at_least_2us takes at least 2 µs an iteration
on any machine, so the thousands separator is exercised) with --json beside the interop output,
and every figure of the interop output is checked against the JSON of the same run. The bencher
lines are checked with the regular expression github-action-benchmark's `cargo` tool uses and with
a transcription of bencher.dev's `rust_bench` grammar. Standard library only.
"""
import json
import os
import re
import tempfile
import unittest

import e2e_helpers

FIXTURE = os.environ.get("E2E_FIXTURE", "")
FAST = ["--quick", "--warm-up-time", "0.02", "--measurement-time", "0.1", "--nresamples", "1000",
        "--color", "never"]

# github-action-benchmark, src/extract.ts, extractCargoResult (current v1 line).
GAB_CARGO = re.compile(
    r"^test (.+)\s+\.\.\. bench:\s+([0-9,.]+) (\w+\/\w+) \(\+\/- ([0-9,.]+)\)$")


def bencher_rust_bench(line):
    """bencher.dev's rust_bench adapter (nom parser), transcribed: name, value, +/- or None.

    "test" space1 take_until1(" ") space1 "..." space1 "bench:" space1 number space1 units "/iter"
    space1 "(" "+/-" space1 number ")" eof; numbers may have ',' separators and a fraction.
    """
    m = re.fullmatch(r"test +([^ ]+) +\.\.\. +bench: +([0-9][0-9,]*(?:\.[0-9]+)?) +"
                     r"(ps|ns|µs|us|ms|s)/iter +\(\+/- +([0-9][0-9,]*(?:\.[0-9]+)?)\)", line)
    if not m:
        return None
    return m.group(1), float(m.group(2).replace(",", "")), float(m.group(4).replace(",", ""))


def run(cmd):
    return e2e_helpers.run(cmd, timeout=120)


def by_id(path):
    return e2e_helpers.by_id(e2e_helpers.load_json(path))


@unittest.skipIf(not FIXTURE, "E2E_FIXTURE is not set (ctest sets it)")
class BencherFormatTest(unittest.TestCase):
    def check_lines(self, prog, args, expect_rc):
        with tempfile.TemporaryDirectory() as tmp:
            jpath = os.path.join(tmp, "r.json")
            r = run([prog, *FAST, "--output-format", "bencher", "--json", jpath, *args])
            self.assertEqual(r.returncode, expect_rc, r.stderr)
            results = by_id(jpath)
        lines = r.stdout.splitlines()
        bench_lines = [ln for ln in lines if " ... bench:" in ln]
        ok = {k: b for k, b in results.items() if b["status"] == "ok"}
        self.assertEqual(len(bench_lines), len(ok))
        for ln in bench_lines:
            m = GAB_CARGO.match(ln)
            self.assertIsNotNone(m, f"github-action-benchmark would not read: {ln!r}")
            parsed = bencher_rust_bench(ln)
            self.assertIsNotNone(parsed, f"bencher.dev would not read: {ln!r}")
            name, value, pm = parsed
            self.assertEqual(m.group(1).strip(), name)
            self.assertEqual(m.group(3), "ns/iter")
            med = ok[name]["estimates"]["median"]
            self.assertAlmostEqual(value, round(med["point"], 2), places=6)
            half = max(med["upper"] - med["point"], med["point"] - med["lower"])
            self.assertAlmostEqual(pm, round(half, 2), places=6)
            # libtest's layout: 'bench:' then the number right-aligned in 14 columns.
            num = ln.split("bench:")[1].split(" ns/iter")[0]
            self.assertEqual(len(num), 15, repr(num))
        return r, lines, results

    def test_fixture_lines_and_summary(self):
        r, lines, results = self.check_lines(
            FIXTURE, ["^(fix/a|fix/copy/.*|more/elements|trouble/skip)$"], 0)
        self.assertIn("test trouble/skip", "\n".join(lines))
        self.assertRegex(r.stdout, r"test trouble/skip +\.\.\. ignored\n")
        self.assertIn(f"running {len(results)} tests", lines)
        measured = sum(1 for b in results.values() if b["status"] == "ok")
        self.assertIn(f"test result: ok. 0 passed; 0 failed; 1 ignored; {measured} measured; "
                      "0 filtered out", lines)
        # Names are padded to one width, as libtest does.
        starts = {ln.index(" ... ") for ln in lines if ln.startswith("test ") and " ... " in ln}
        self.assertEqual(len(starts), 1)

    def test_failure(self):
        r, lines, _ = self.check_lines(FIXTURE, ["^(fix/a|trouble/fail)$"], 3)
        self.assertRegex(r.stdout, r"test trouble/fail +\.\.\. FAILED\n")
        self.assertIn("    trouble/fail: deliberate failure: checksum 1 != 2", lines)
        self.assertIn("test result: FAILED. 0 passed; 1 failed; 0 ignored; 1 measured; "
                      "0 filtered out", lines)

    def test_thousands_separator(self):
        """clock/at_least_2us waits 2 µs on the harness's own clock every iteration, so its
        median is at least 2000 ns on any machine: the line must group the thousands."""
        r, _, results = self.check_lines(FIXTURE, ["--exact", "clock/at_least_2us"], 0)
        med = results["clock/at_least_2us"]["estimates"]["median"]["point"]
        self.assertGreaterEqual(med, 2000)
        self.assertRegex(r.stdout, r"bench: +[0-9]{1,3}(,[0-9]{3})+\.[0-9]{2} ns/iter")


GB_CONTEXT_KEYS = {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
                   "cpu_scaling_enabled", "caches", "load_avg", "library_build_type"}
GB_RUN_KEYS = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads",
               "iterations", "real_time", "cpu_time", "time_unit"}


@unittest.skipIf(not FIXTURE, "E2E_FIXTURE is not set (ctest sets it)")
class BmfFormatTest(unittest.TestCase):
    def test_bmf_matches_results(self):
        """Every benchmark that ran ok, and only those, with its median and interval as the
        results JSON has them (latency, ns) and their inverse in iterations per second
        (throughput, the interval's ends swapped)."""
        with tempfile.TemporaryDirectory() as tmp:
            jpath = os.path.join(tmp, "r.json")
            r = run([FIXTURE, *FAST, "--output-format", "bmf", "--json", jpath,
                     "^(fix/a|fix/copy/64|trouble/skip|trouble/fail)$"])
            self.assertEqual(r.returncode, 3, r.stderr)  # trouble/fail
            results = by_id(jpath)
        bmf = json.loads(r.stdout)
        ok = {k: b for k, b in results.items() if b["status"] == "ok"}
        self.assertEqual(sorted(bmf), sorted(ok))
        self.assertEqual(sorted(ok), ["fix/a", "fix/copy/64"])
        for k, b in ok.items():
            m = b["estimates"]["median"]
            self.assertEqual(set(bmf[k]), {"latency", "throughput"})
            lat, thr = bmf[k]["latency"], bmf[k]["throughput"]
            for got, want in ((lat["value"], m["point"]), (lat["lower_value"], m["lower"]),
                              (lat["upper_value"], m["upper"]),
                              (thr["value"], 1e9 / m["point"]),
                              (thr["lower_value"], 1e9 / m["upper"]),
                              (thr["upper_value"], 1e9 / m["lower"])):
                # cJSON prints 15 significant digits where they read back within its
                # tolerance: equal to 12 digits.
                self.assertAlmostEqual(got / want, 1.0, delta=1e-12, msg=(k, got, want))


@unittest.skipIf(not FIXTURE, "E2E_FIXTURE is not set (ctest sets it)")
class GbenchExportTest(unittest.TestCase):
    def test_export_matches_results(self):
        with tempfile.TemporaryDirectory() as tmp:
            jpath, gpath = os.path.join(tmp, "r.json"), os.path.join(tmp, "gb.json")
            r = run([FIXTURE, *FAST, "--output-format", "csv", "--json", jpath,
                     "--export-gbench", gpath,
                     "^(fix/a|fix/copy/64|more/elements|trouble/skip|trouble/fail)$"])
            self.assertEqual(r.returncode, 3, r.stderr)  # trouble/fail
            results = by_id(jpath)
            with open(gpath, encoding="utf-8") as f:
                gb = json.load(f)
            self.assertEqual(oct(os.stat(gpath).st_mode & 0o777), "0o644")
            self.assertEqual([p for p in os.listdir(tmp) if ".tmp" in p], [])
        ctx = gb["context"]
        self.assertTrue(GB_CONTEXT_KEYS <= set(ctx), GB_CONTEXT_KEYS - set(ctx))
        self.assertIsInstance(ctx["num_cpus"], int)
        self.assertGreater(ctx["num_cpus"], 0)
        self.assertIsInstance(ctx["cpu_scaling_enabled"], bool)
        self.assertTrue(os.path.isabs(ctx["executable"]))
        self.assertEqual(os.path.basename(ctx["executable"]), os.path.basename(FIXTURE))
        for c in ctx["caches"]:
            self.assertEqual(set(c), {"type", "level", "size", "num_sharing"})
            self.assertGreater(c["size"], 0)
        self.assertIn(len(ctx["load_avg"]), (0, 3))
        runs = {b["name"]: b for b in gb["benchmarks"]}
        self.assertEqual(set(runs), set(results))
        for name, b in runs.items():
            self.assertTrue(GB_RUN_KEYS <= set(b), (name, GB_RUN_KEYS - set(b)))
            self.assertEqual(b["run_type"], "iteration")
            self.assertEqual(b["time_unit"], "ns")
            res = results[name]
            if res["status"] == "ok":
                med = res["estimates"]["median"]["point"]
                self.assertAlmostEqual(b["real_time"] / med, 1.0, places=12)
                self.assertEqual(b["iterations"], sum(res["samples"]["iterations"]))
                self.assertNotIn("error_occurred", b)
            elif res["status"] == "failed":
                self.assertIs(b["error_occurred"], True)
                self.assertEqual(b["error_message"], res["message"])
            else:
                self.assertIs(b["skipped"], True)
                self.assertEqual(b["skip_message"], res["message"])
        copy = runs["fix/copy/64"]
        med = results["fix/copy/64"]["estimates"]["median"]["point"]
        self.assertAlmostEqual(copy["bytes_per_second"] / (64 * 1e9 / med), 1.0, places=12)
        elems = runs["more/elements"]
        med = results["more/elements"]["estimates"]["median"]["point"]
        per = results["more/elements"]["throughput"]["elements_per_iteration"]
        self.assertAlmostEqual(elems["items_per_second"] / (per * 1e9 / med), 1.0, places=12)
        # One family per BENCH_FN, its parameter values numbered in id order.
        self.assertEqual(runs["fix/copy/64"]["per_family_instance_index"], 0)

    def test_unwritable_path(self):
        r = run([FIXTURE, *FAST, "--output-format", "csv", "--export-gbench",
                 "/nonexistent-dir/gb.json", "^fix/a$"])
        self.assertEqual(r.returncode, 2)
        self.assertIn(e2e_helpers.prog_prefix(FIXTURE) + "/nonexistent-dir/gb.json: cannot "
                      "create a temporary file: No such file or directory", r.stderr)


if __name__ == "__main__":
    unittest.main()

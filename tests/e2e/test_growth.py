#!/usr/bin/env python3
"""End-to-end test of the complexity fit and of the user's counters. The complexity fit: a
program whose benchmarks do exactly N, N log N and N^2 steps of a latency-bound chain per iteration (fixture_growth.c) is run once; the results file
names O(N), O(N log N) and O(N^2) for them, with the six fits each and the best one's coefficient
and residual, and the pretty output says the same under the results. A run of fewer than three
parameters of a series has no complexity entry. Counters (bench_counter, declared with
.counters): a body that counts 3 hits and 64 bytes per iteration reports exactly 3 and 64 per
iteration (interval and all) in the pretty output, the JSON, CSV and Google Benchmark's JSON, the
rate one also per second; a comparison with a baseline compares them; an undeclared name fails
the benchmark with a message naming it.
"""
import csv
import io
import json
import math
import os
import re
import tempfile
import unittest

import e2e_helpers

GROWTH = os.environ.get("E2E_GROWTH", "")
CLASSES = {"O(1)": lambda n: 1.0, "O(log N)": math.log2, "O(N)": lambda n: n,
           "O(N log N)": lambda n: n * math.log2(n), "O(N^2)": lambda n: n * n,
           "O(N^3)": lambda n: n ** 3}
SCHEMA = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "results.schema.json")
ARGS = ["--processes", "3", "--nresamples", "1000", "--color", "never"]


def run(*args):
    return e2e_helpers.run([GROWTH, *args], timeout=300,
                           env=e2e_helpers.environ(unset=["BENCH_HISTORY"]))


@unittest.skipIf(not GROWTH, "E2E_GROWTH is not set (ctest sets it)")
class GrowthTest(e2e_helpers.Case):
    def test_classes_recovered(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            p = run(*ARGS, "--json", out, "^growth/")
            self.assert_exit(p, 0)
            with open(out, encoding="utf-8") as f:
                res = json.load(f)
        got = {(c["group"], c["name"]): c for c in res["complexity"]}
        want = {("growth", "linear"): "O(N)", ("growth", "n_log_n"): "O(N log N)",
                ("growth", "quadratic"): "O(N^2)"}
        self.assertEqual(set(got), set(want))
        for key, cls in want.items():
            c = got[key]
            # Plain enough to be named (0.4-2% rms here, the next class 12% or more); a busy
            # machine's noise may push the rms over the rule's 5% or the next class near the
            # best, and then no class is named, which is what the rule is for (its thresholds
            # are tested in unit/stats), and the best fit may be the neighbouring class (at
            # load 2 per CPU linear read O(N log N) at rms 11.3%): the planted class is then
            # one of the two best.
            if c["class"] is None:
                print(f"{key}: no class named on this run: {c['no_class']}")
                self.assertRegex(c["no_class"], r"^(rms [\d.]+%, above 5%|O\([^)]*\) fits "
                                                r"nearly as well \(rms [\d.]+%, under "
                                                r"[\d.]+x\))$")
                ranked = sorted(c["fits"], key=lambda f: f["rms"])
                self.assertIn(cls, [f["class"] for f in ranked[:2]], c)
            else:
                self.assertEqual(c["best"], cls, c)
                self.assertEqual(c["class"], cls, c)
                self.assertNotIn("no_class", c)
            self.assertEqual(c["parameters"], 5)
            self.assertEqual([f["class"] for f in c["fits"]],
                             ["O(1)", "O(log N)", "O(N)", "O(N log N)", "O(N^2)", "O(N^3)"])
            # Every fit worked out again here from the medians in the file: t = c f(N) by least
            # squares of the relative residuals, c = sum(f/t) / sum((f/t)^2).
            pts = [(b["param"], b["estimates"]["median"]["point"]) for b in res["benchmarks"]
                   if (b["group"], b["name"]) == key]
            for fit in c["fits"]:
                q = [CLASSES[fit["class"]](n) / t for n, t in pts]
                coef = sum(q) / sum(v * v for v in q)
                rms = math.sqrt(sum((1 - coef * v) ** 2 for v in q) / len(q))
                self.assertAlmostEqual(fit["coefficient_ns"], coef, delta=1e-9 * coef)
                self.assertAlmostEqual(fit["rms"], rms, delta=1e-9)
            best = min(c["fits"], key=lambda f: f["rms"])
            self.assertEqual((best["class"], best["coefficient_ns"], best["rms"]),
                             (c["best"], c["coefficient_ns"], c["rms"]))
            name = "/".join(key)
            self.assertRegex(p.stdout, re.escape(f"{name}: complexity {cls}, ") +
                             r"[\d.]+ \S*s x f\(N\), rms [\d.]+% \(over 5 parameters"
                             if c["class"] else re.escape(f"{name}: no complexity class fits"))

    def test_three_parameters_name_no_class(self):
        """Three parameters are fitted but show too little to name a class: every output says
        no class fits, with the best one's rms."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            p = run(*ARGS, "--json", out, "^growth/linear/(512|1024|2048)$")
            self.assert_exit(p, 0)
            res = e2e_helpers.load_json(out)
            e2e_helpers.check_schema(res, SCHEMA)
        (c,) = res["complexity"]
        self.assertEqual(c["parameters"], 3)
        self.assertIsNone(c["class"])
        self.assertEqual(c["no_class"], "3 parameters, fewer than 4")
        self.assertRegex(p.stdout, r"growth/linear: no complexity class fits \(3 parameters, "
                                   r"fewer than 4; best O\(\S+\), rms [\d.]+% over 3 "
                                   r"parameters\)")
        self.assertNotRegex(p.stdout, r"complexity O\(")

    def test_too_few_parameters_fit_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            p = run(*ARGS, "--json", out, "--exact", "growth/linear/512", "growth/linear/1024")
            self.assert_exit(p, 0)
            with open(out, encoding="utf-8") as f:
                self.assertNotIn("complexity", json.load(f))
            self.assertNotIn("complexity", p.stdout)


@unittest.skipIf(not GROWTH, "E2E_GROWTH is not set (ctest sets it)")
class CounterTest(e2e_helpers.Case):
    def test_counts_in_every_output(self):
        with tempfile.TemporaryDirectory() as d:
            out, gb = os.path.join(d, "r.json"), os.path.join(d, "gb.json")
            p = run(*ARGS, "--json", out, "--export-gbench", gb, "--exact", "count/exact")
            self.assert_exit(p, 0)
            self.assertRegex(p.stdout, r"hits: +3\.000/iter \[3\.000 3\.000\]")
            self.assertRegex(p.stdout, r"bytes_seen: +64\.00/iter \[64\.00 64\.00\] = [\d.]+ \S+/s")
            with open(out, encoding="utf-8") as f:
                (b,) = json.load(f)["benchmarks"]
            hits = b["metrics"]["hits"]
            self.assertEqual(hits["per_iteration"]["median"]["point"], 3)
            self.assertEqual(b["metrics"]["bytes_seen"]["per_iteration"]["median"]["point"], 64)
            with open(gb, encoding="utf-8") as f:
                (g,) = json.load(f)["benchmarks"]
            self.assertEqual(g["hits"], 3)
            p = run(*ARGS, "--exact", "count/exact", "--output-format", "csv")
            self.assert_exit(p, 0)
            self.assertIn("hits", p.stdout)
            # A comparison compares them like the probes' metrics.
            base = ["--baseline-dir", d, "--exact", "count/exact", *ARGS]
            self.assert_exit(run(*base, "--save-baseline", "c"), 0)
            p = run(*base, "--baseline", "c")
            self.assert_exit(p, 0)
            self.assertRegex(p.stdout, r"hits: .*no change")

    def test_csv_gives_each_metric_its_columns(self):
        """CSV: each metric has its own columns (median, interval, unit, min_fraction) after the
        fixed ones, sorted by name, the same for every row; a row without the metric leaves
        them empty."""
        p = run(*ARGS, "--output-format", "csv", "--exact", "count/exact", "growth/linear/512",
                "count/undeclared")
        self.assert_exit(p, 3)
        rows = list(csv.reader(io.StringIO(p.stdout)))
        header, body = rows[0], rows[1:]
        fixed = header.index("facts") + 1
        want = [f"{m}{c}" for m in ("bytes_seen", "hits")
                for c in ("", "_lower", "_upper", "_unit", "_min_fraction")]
        self.assertEqual(header[fixed:], want)
        self.assertNotIn("metrics", header)
        recs = {r[0]: dict(zip(header, r)) for r in body}
        self.assertEqual(set(recs), {"count/exact", "growth/linear/512", "count/undeclared"})
        for r in body:
            self.assertEqual(len(r), len(header), r)
        exact = recs["count/exact"]
        self.assertEqual([float(exact[k]) for k in ("hits", "hits_lower", "hits_upper")],
                         [3, 3, 3])
        self.assertEqual(float(exact["bytes_seen"]), 64)
        self.assertEqual((exact["hits_unit"], exact["hits_min_fraction"]), ("events", "1"))
        for bid in ("growth/linear/512", "count/undeclared"):
            self.assertEqual([recs[bid][k] for k in want], [""] * len(want), bid)

    def test_undeclared_counter_fails(self):
        p = run(*ARGS, "--exact", "count/undeclared")
        self.assert_exit(p, 3)
        self.assertIn("bench_counter: 'misses' is not one of BENCH_FN's .counters (\"hits\")",
                      p.stdout + p.stderr)

    def test_counter_without_counters_fails(self):
        """A BENCH_FN without .counters that calls bench_counter fails, naming the counter,
        whether it runs in worker processes or in bench's own."""
        for mode in (ARGS, ["--in-process", "--nresamples", "1000"]):
            p = run(*mode, "--output-format", "json", "--exact", "count/no_counters")
            self.assert_exit(p, 3)
            (b,) = json.loads(p.stdout)["benchmarks"]
            self.assertEqual(b["status"], "failed", mode)
            self.assertEqual(b["message"], "bench_counter: 'hits' is not declared: BENCH_FN has "
                             "no .counters (declare it with .counters = \"hits\")", mode)


if __name__ == "__main__":
    unittest.main(verbosity=2)

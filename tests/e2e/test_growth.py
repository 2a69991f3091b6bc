#!/usr/bin/env python3
"""End-to-end test of the complexity fit: a program whose benchmarks do exactly N, N log N and
N^2 steps of a latency-bound chain per iteration (fixture_growth.c) is run once; the results file
names O(N), O(N log N) and O(N^2) for them, with the six fits each and the best one's coefficient
and residual, and the pretty output says the same under the results. A run of fewer than three
parameters of a series has no complexity entry.
"""
import json
import os
import re
import tempfile
import unittest

import e2e_helpers

GROWTH = os.environ.get("E2E_GROWTH", "")
ARGS = ["--processes", "3", "--nresamples", "1000", "--color", "never"]


def run(*args):
    return e2e_helpers.run([GROWTH, *args], timeout=300,
                           env=e2e_helpers.environ(unset=["BENCH_HISTORY"]))


@unittest.skipIf(not GROWTH, "E2E_GROWTH is not set (ctest sets it)")
class GrowthTest(e2e_helpers.Case):
    def test_classes_recovered(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            p = run(*ARGS, "--json", out)
            self.assert_exit(p, 0)
            with open(out, encoding="utf-8") as f:
                res = json.load(f)
        got = {(c["group"], c["name"]): c for c in res["complexity"]}
        want = {("growth", "linear"): "O(N)", ("growth", "n_log_n"): "O(N log N)",
                ("growth", "quadratic"): "O(N^2)"}
        self.assertEqual(set(got), set(want))
        for key, cls in want.items():
            c = got[key]
            self.assertEqual(c["best"], cls, c)
            self.assertEqual(c["parameters"], 5)
            self.assertEqual([f["class"] for f in c["fits"]],
                             ["O(1)", "O(log N)", "O(N)", "O(N log N)", "O(N^2)", "O(N^3)"])
            best = [f for f in c["fits"] if f["class"] == cls][0]
            self.assertEqual(best["rms"], c["rms"])
            self.assertEqual(min(f["rms"] for f in c["fits"]), c["rms"])
            self.assertGreater(c["coefficient_ns"], 0)
            name = "/".join(key)
            self.assertRegex(p.stdout, re.escape(f"{name}: complexity {cls}, ") +
                             r"[\d.]+ \S*s x f\(N\), rms [\d.]+% \(over 5 parameters")

    def test_too_few_parameters_fit_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            p = run(*ARGS, "--json", out, "--exact", "growth/linear/512", "growth/linear/1024")
            self.assert_exit(p, 0)
            with open(out, encoding="utf-8") as f:
                self.assertNotIn("complexity", json.load(f))
            self.assertNotIn("complexity", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)

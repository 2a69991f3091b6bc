#!/usr/bin/env python3
"""A user's counter that adds negative values (bench_counter), on tests/e2e/fixture_signed.c
(E2E_SIGNED): signed/balance adds -2.5 to its counter `balance` every iteration.

- A baseline saved with it loads again: --save-baseline, then --baseline exits 0 and compares
  the benchmark, in the pretty output (the counter itself said not compared: no ratio of values
  below 0) and through --output-format json, whose file holds the counter's estimates at exactly
  -2.5 and passes the schema.
- The schema's rule that an estimate is never below 0 still holds for every other metric: the
  same file with the counter's source changed to a probe's is refused (exit 2, naming the field).
- --ab, the run history (SQLite) and the HTML report (bench_report.py) take the counter too.
"""
import json
import os
import unittest

import e2e_helpers

# The saves and comparisons here check what a run does, not how well the drift canaries read the
# machine (docs/comparison.md, "Drift canaries").
os.environ.setdefault("BENCH_CANARY_QUICK", "1")

SIGNED = os.environ.get("E2E_SIGNED", "")
SCHEMA = os.environ.get("E2E_SCHEMA", "")
REPORT = os.environ.get("E2E_REPORT", "")
ID = "signed/balance"
FAST = ["--quick", "--color", "never"]


def run(*args, timeout=120):
    env = e2e_helpers.environ({"BENCH_LAST_DIR": ""}, unset=["BENCH_HISTORY"])
    return e2e_helpers.run([SIGNED, *args], timeout=timeout, env=env)


def balance(doc):
    """The counter's metric of signed/balance in a results document."""
    return e2e_helpers.by_id(doc)[ID]["metrics"]["balance"]


@unittest.skipUnless(SIGNED, "E2E_SIGNED not set (ctest sets it)")
class NegativeCounterTest(e2e_helpers.Case):
    def setUp(self):
        self.dir = self.temp_dir("bench-signed-")
        self.base = ["--baseline-dir", self.dir]
        p = run(*FAST, *self.base, "--save-baseline", "neg")
        self.assert_exit(p, 0)
        self.saved = os.path.join(self.dir, "neg.json")

    def test_saved_baseline_loads_and_compares(self):
        saved = e2e_helpers.load_json(self.saved)
        self.assertEqual(balance(saved)["per_iteration"]["median"],
                         {"point": -2.5, "lower": -2.5, "upper": -2.5})
        if SCHEMA:
            e2e_helpers.check_schema(saved, SCHEMA)
        p = run(*FAST, *self.base, "--baseline", "neg")
        self.assert_exit(p, 0)
        self.assertIn("balance: -2.500/iter [-2.500 -2.500]", p.stdout)
        # The counter itself is compared as a ratio, which a value below 0 does not have: it
        # says so under the time's change line rather than leaving the counter out unexplained.
        self.assertIn("  balance: not compared (-2.500/iter in the baseline, -2.500/iter now: a "
                      "ratio needs both above 0)", p.stdout)
        self.assertRegex(p.stdout, r"(?m)^Comparison with baseline 'neg' .*\n  "
                                   r"(no change|within noise|inconclusive|regressed|improved) +"
                                   r"signed/balance ")
        p = run(*FAST, *self.base, "--baseline", "neg", "--output-format", "json")
        self.assert_exit(p, 0)
        doc = json.loads(p.stdout)
        if SCHEMA:
            e2e_helpers.check_schema(doc, SCHEMA)
        bench = e2e_helpers.by_id(doc)[ID]
        self.assertIn(bench["change"]["verdict"],
                      ("no change", "within noise", "inconclusive", "regressed", "improved"))
        self.assertEqual(bench["metrics"]["balance"]["per_iteration"]["median"]["point"], -2.5)

    def test_other_metrics_stay_non_negative(self):
        doc = e2e_helpers.load_json(self.saved)
        balance(doc)["source"] = "perf"
        with open(os.path.join(self.dir, "probe.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f)
        p = run(*FAST, *self.base, "--baseline", "probe")
        self.assert_exit(p, 2)
        self.assertIn("metrics.balance.per_iteration.median.point: -2.5 is below the minimum 0",
                      p.stderr)

    def test_ab_history_and_report(self):
        p = run("--ab", SIGNED, "--ab-time", "1", "--color", "never")
        self.assert_exit(p, 0)
        self.assertIn("signed/balance", p.stdout)
        if "history: SQLite" in run("--version").stdout:
            db = os.path.join(self.dir, "runs.db")
            for _ in range(2):
                self.assert_exit(run(*FAST, "--history", db), 0)
            p = run("--history-show", db, "--color", "never")
            self.assert_exit(p, 0)
            self.assertIn("signed/balance: 2 runs", p.stdout)
        if REPORT:
            out = os.path.join(self.dir, "html")
            p = e2e_helpers.run(["python3", REPORT, "--baseline", self.saved, "--out", out,
                                 self.saved], timeout=120)
            self.assert_exit(p, 0)
            pages = [n for n in os.listdir(out) if n.startswith("b-signed_balance")]
            self.assertEqual(len(pages), 1, os.listdir(out))
            with open(os.path.join(out, pages[0]), encoding="utf-8") as f:
                self.assertIn('<td class="num">-2.5</td>', f.read())


if __name__ == "__main__":
    unittest.main()

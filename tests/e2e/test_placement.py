#!/usr/bin/env python3
"""The code identity of a benchmark (code_hash), on tests/e2e/fixture_placement.c built three
times: as is (ORIGINAL), with 128 bytes of unrelated code before the benchmarks' code (PADDED:
the same code at other addresses) and with a changed callee of place/isort (CHANGED).

- The results carry a code_hash per benchmark: the same for ORIGINAL and PADDED, another for
  place/isort of CHANGED and the same for its place/sum.
- --ab of PADDED against ORIGINAL at a noise threshold of 0 (where any measured difference, even
  of placement, is a claimed change or undecided: never "no change" by the numbers) calls no
  benchmark regressed or improved: each says "same code: measured ..." and
  --fail-on-regression passes. CHANGED against ORIGINAL: place/isort's verdict is the numbers'
  as before, place/sum is the same code.
- --ab's header says every benchmark is the same code when all are (no family of 0 benchmarks to
  correct over), and with CHANGED corrects over the one benchmark that may get a verdict.
- --ab of PADDED against ORIGINAL with a budget of many more pairs stops each benchmark at its
  first look (6 pairs): the same code gets no verdict, so more pairs would buy nothing.
- --baseline saved by ORIGINAL, compared by PADDED: the same, in the pretty summary, the
  Markdown table and the JSON results (settled_by "same code"); CHANGED: place/isort is not.
"""
import os
import re
import shutil
import tempfile
import unittest

import e2e_helpers

# The saves and comparisons here check what a run does, not how well the drift canaries read the
# machine: the canaries keep every step on 3 repetitions and the 64 MiB floor (0.5-8 s a run
# less; docs/comparison.md, "Drift canaries").
os.environ.setdefault("BENCH_CANARY_QUICK", "1")

ORIGINAL = os.environ.get("E2E_PLACEMENT", "")
PADDED = os.environ.get("E2E_PLACEMENT_PAD", "")
CHANGED = os.environ.get("E2E_PLACEMENT_CHANGED", "")
SCHEMA = os.environ.get("E2E_SCHEMA", "")
IDS = ["place/isort", "place/sum"]
FAST = ["--quick", "--color", "never", "--nresamples", "1000"]
AB = ["--ab-time", "1", "--ab-pairs", "6", "--noise-threshold", "0", "--color", "never",
      "--exact", *IDS]


def run(program, *args, timeout=300):
    env = e2e_helpers.environ({"BENCH_LAST_DIR": ""}, unset=["BENCH_HISTORY"])
    return e2e_helpers.run([program, *args], timeout=timeout, env=env)


def summary_rows(stdout, heading):
    """{id: the summary's row} after the heading of the comparison."""
    text = stdout.split(heading, 1)[1]
    return {m[2]: m[0] for m in re.finditer(
        r"(?m)^  (regressed|improved|no change|within noise|inconclusive) +(\S+).*$", text)}


@unittest.skipUnless(ORIGINAL and PADDED and CHANGED, "E2E_PLACEMENT* not set")
@unittest.skipUnless(shutil.which("objdump"), "no objdump (binutils): every identity is unknown")
class PlacementTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="bench-placement-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def assert_exit(self, p, code):
        self.assertEqual(p.returncode, code, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")

    def hashes(self, program):
        path = os.path.join(self.dir, os.path.basename(program) + ".json")
        p = run(program, *FAST, "--json", path, "--exact", *IDS)
        self.assert_exit(p, 0)
        doc = e2e_helpers.load_json(path)
        if SCHEMA:
            e2e_helpers.check_schema(doc, SCHEMA)
        return {bid: b.get("code_hash") for bid, b in e2e_helpers.by_id(doc).items()}

    def test_code_hash_ignores_placement_and_sees_a_changed_callee(self):
        original, padded, changed = (self.hashes(p) for p in (ORIGINAL, PADDED, CHANGED))
        for bid in IDS:
            self.assertRegex(original[bid] or "", r"^[0-9a-f]{64}$", bid)
        self.assertEqual(padded, original)
        self.assertNotEqual(changed["place/isort"], original["place/isort"])
        self.assertEqual(changed["place/sum"], original["place/sum"])

    def test_ab_same_code_is_no_verdict(self):
        p = run(PADDED, "--ab", ORIGINAL, "--fail-on-regression", *AB)
        self.assert_exit(p, 0)
        rows = summary_rows(p.stdout, "Comparison with A, the old build")
        self.assertEqual(sorted(rows), IDS, p.stdout)
        for bid, row in rows.items():
            self.assertRegex(row, r"^  no change .*\(same code: measured .*\(placement or "
                                  r"machine\)\)$", bid)
        self.assertIn("0 regressed, 0 improved", p.stdout)
        self.assertRegex(p.stdout, r"(?m)^ +same code: measured .*: not a change of the code\.$")
        # The header: no family of 0 benchmarks to correct over, but what happened.
        self.assertIn("; every benchmark the same code in both (2): no verdict, one look each; "
                      "intervals at 0.95\n", p.stdout)
        self.assertNotIn("Bonferroni over 0", p.stdout)

    def test_ab_same_code_takes_one_look(self):
        # No --ab-pairs: the budget (5 s each, 10 s in all) would give each benchmark many more
        # pairs, and at a threshold of 0 the numbers never decide; the same code needs only
        # the pairs of its first look for its number, so each stops there.
        p = run(PADDED, "--ab", ORIGINAL, "--ab-time", "5", "--noise-threshold", "0",
                "--color", "never", "--exact", *IDS)
        self.assert_exit(p, 0)
        pairs = re.findall(r"(?m)^ +(\d+) worker pairs, ", p.stdout)
        self.assertEqual(pairs, ["6", "6"], p.stdout)
        self.assertIn("every benchmark the same code in both (2): no verdict, one look each",
                      p.stdout)

    def test_ab_changed_callee_keeps_its_verdict(self):
        p = run(CHANGED, "--ab", ORIGINAL, *AB)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        rows = summary_rows(p.stdout, "Comparison with A, the old build")
        self.assertNotIn("same code", rows["place/isort"])
        self.assertNotRegex(rows["place/isort"], r"^  no change")  # threshold 0: never by numbers
        self.assertIn("(same code: measured", rows["place/sum"])
        # The header's family is the one benchmark that may get a verdict.
        self.assertRegex(p.stdout, r"; looks at 6 pairs; intervals at 0\.95 \(Bonferroni over 1 "
                                   r"benchmark x 1 look; 1 of the same code in both: no verdict, "
                                   r"one look\)\n")

    def test_baseline_same_code_in_every_format(self):
        base = ["--baseline-dir", self.dir]
        p = run(ORIGINAL, *FAST, *base, "--save-baseline", "orig", "--exact", *IDS)
        self.assert_exit(p, 0)
        cmp = [*base, "--baseline", "orig", "--noise-threshold", "0", "--confirm-time", "0"]
        out = os.path.join(self.dir, "padded.json")
        p = run(PADDED, *FAST, *cmp, "--fail-on-regression", "--json", out, "--exact", *IDS)
        self.assert_exit(p, 0)
        rows = summary_rows(p.stdout, "Comparison with baseline 'orig'")
        self.assertEqual(sorted(rows), IDS, p.stdout)
        for bid, row in rows.items():
            self.assertIn("(same code: measured", row, bid)
        res = e2e_helpers.by_id(e2e_helpers.load_json(out))
        for bid in IDS:
            change = res[bid]["change"]
            self.assertEqual((change["verdict"], change["settled_by"]),
                             ("no change", "same code"), bid)
        p = run(PADDED, *FAST, *cmp, "--output-format", "markdown", "--exact", *IDS)
        self.assert_exit(p, 0)
        self.assertEqual(len(re.findall(r"\(no change: same code: measured [^|]*\(placement or "
                                        r"machine\)\) \|", p.stdout)), 2, p.stdout)
        out = os.path.join(self.dir, "changed.json")
        p = run(CHANGED, *FAST, *cmp, "--json", out, "--exact", *IDS)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        res = e2e_helpers.by_id(e2e_helpers.load_json(out))
        self.assertNotEqual(res["place/isort"]["change"]["settled_by"], "same code")
        self.assertEqual(res["place/sum"]["change"]["settled_by"], "same code")


if __name__ == "__main__":
    unittest.main()

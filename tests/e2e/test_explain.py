#!/usr/bin/env python3
"""--explain: the functions behind a changed benchmark, checked on tests/e2e/fixture_explain.c
(three benchmarks sharing three helpers; a copy marked E2ESLOW<N> runs one helper, shared_mix,
N% longer, which changes explain/mixed and explain/both and leaves explain/hash alone).

- InstructionsTest: --ab --explain --instructions with shared_mix 5% slower: callgrind's exact
  counts name shared_mix first with at least 70% of the change in instructions; the unchanged
  benchmark is not explained; an A/A (BENCH_EXPLAIN_ALL) finds no function that changed.
- TimeTest: --ab --explain with shared_mix 40% slower (large enough that sampling noise on a
  loaded 2-vCPU machine cannot hide it): perf's profiles name shared_mix first with at least 70%
  of the measured change, and say how many samples were the machine's (interrupts, context
  switches); explain/hash is not explained; an A/A names no function, the kernel's scheduler
  included, however loaded the machine.
- BaselineTest: --baseline --explain against a saved baseline of the original: the confirmed
  regressions are explained against the baseline's program snapshot, in the pretty output and
  as `explanation` in the JSON results (checked against the published schema); the HTML report
  of those results shows the functions and a differential flame graph in which shared_mix grew,
  also as Chromium renders the page.
- HistoryTest: a run history of the original, then the copy: --history-gate --explain fails
  the gate and explains the confirmed step by shared_mix; --history-show --history-confirm
  --explain explains the change point found between the two programs the same way.
- UnavailableTest: without perf on PATH, one line says why and how to enable it, and the
  verdicts and the exit code are those of the run without --explain; misuse is exit 2.
"""
import os
import re
import shutil
import subprocess
import sys
import unittest

import e2e_helpers

# The saves and comparisons here check what a run does, not how well the drift canaries read the
# machine: the canaries keep every step on 3 repetitions and the 64 MiB floor (0.5-8 s a run
# less; docs/comparison.md, "Drift canaries").
os.environ.setdefault("BENCH_CANARY_QUICK", "1")

PROGRAM = os.environ.get("E2E_EXPLAIN", "")
SCHEMA = os.environ.get("E2E_SCHEMA", "")
REPORT = os.environ.get("E2E_REPORT", "")
CHANGED = ["explain/mixed", "explain/both"]
IDS = CHANGED + ["explain/hash"]
BASE = ["--color", "never", "--exact", *IDS]


def run(program, *args, env_extra=None, unset=(), timeout=400):
    env = e2e_helpers.environ({"BENCH_LAST_DIR": "", **(env_extra or {})},
                              unset=["BENCH_HISTORY", "BENCH_EXPLAIN_ALL", *unset])
    return e2e_helpers.run([program, *args], timeout=timeout, env=env)


def explained(stdout):
    """{id: the explanation's lines} of the Explained section."""
    if "\nExplained (--explain" not in stdout:
        return {}
    section = stdout.split("\nExplained (--explain", 1)[1].split("\n\n", 1)[0]
    out, cur = {}, None
    for line in section.splitlines()[1:]:
        m = re.match(r"^(\S+): (\S.*)$", line)
        if m:
            cur = m[1]
            out[cur] = []
        elif cur:
            out[cur].append(line.strip())
    return out


def first_named(lines):
    """(first function named, attributed %) of an explanation, or (None, None)."""
    for line in lines:
        m = re.search(r": `([^`]+)` [^;]*; (-?\d+)% of the change attributed", line)
        if m:
            return m[1], int(m[2])
    return None, None


def perf_usable():
    if not shutil.which("perf"):
        return False
    p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-o", os.devnull,
                        "--", "true"], capture_output=True, check=False)
    return p.returncode == 0


class ExplainCase(e2e_helpers.Case):
    PLANTED = 40

    def setUp(self):
        if not PROGRAM:
            self.skipTest("E2E_EXPLAIN is not set (ctest sets it)")
        self.dir = self.temp_dir("bench-explain-")
        self.original = e2e_helpers.copy_program(PROGRAM, os.path.join(self.dir, "original"))
        self.slow = e2e_helpers.copy_program(PROGRAM, os.path.join(self.dir, "slower"),
                                             f"E2ESLOW{self.PLANTED}\n".encode())
        # An A/A: the same program under another name of the same length.
        self.same = e2e_helpers.copy_program(PROGRAM, os.path.join(self.dir, "samecpy"))

    def check_changed(self, p, what):
        got = explained(p.stdout)
        self.assertEqual(sorted(got), sorted(CHANGED), (what, p.stdout))
        for bid in CHANGED:
            name, share = first_named(got[bid])
            self.assertEqual(name, "shared_mix", (what, bid, p.stdout))
            self.assertGreaterEqual(share, 70, (what, bid, p.stdout))
            self.assertLessEqual(share, 130, (what, bid, p.stdout))

    def check_aa(self, p, what, ids):
        got = explained(p.stdout)
        self.assertEqual(sorted(got), sorted(ids), (what, p.stdout))
        for bid in ids:
            self.assertIn("no function changed beyond noise", " ".join(got[bid]),
                          (what, bid, p.stdout))


class InstructionsTest(ExplainCase):
    PLANTED = 5

    def setUp(self):
        super().setUp()
        if shutil.which("valgrind") is None or e2e_helpers.SANITIZED:
            self.skipTest("no valgrind, or a sanitizer build (valgrind cannot run it)")

    def test_planted_helper_named_exactly(self):
        p = run(self.slow, "--ab", self.original, "--ab-time", "4", "--explain",
                "--instructions", *BASE)
        self.assert_exit(p, 0)
        self.check_changed(p, "--instructions")
        self.assertIn("callgrind: (Ir(2N) - Ir(N)) / N per function", p.stdout)

    def test_aa_changes_nothing(self):
        p = run(self.same, "--ab", self.original, "--ab-time", "1", "--explain",
                "--instructions", *BASE, env_extra={"BENCH_EXPLAIN_ALL": "1"})
        self.assert_exit(p, 0)
        self.check_aa(p, "A/A --instructions", IDS)


class TimeTest(ExplainCase):
    def setUp(self):
        super().setUp()
        if not perf_usable() or e2e_helpers.SANITIZED:
            self.skipTest("perf cannot record here, or a sanitizer build")

    def test_planted_helper_named_by_profiles(self):
        p = run(self.slow, "--ab", self.original, "--ab-time", "3", "--explain", *BASE)
        self.assert_exit(p, 0)
        self.check_changed(p, "time")
        self.assertRegex(p.stdout, r"perf record -e (cycles|cpu-clock) -F \d+ -g: 3 worker pairs, "
                                   r"\d+ \(A\) \+ \d+ \(B\) samples of the timed loop, \d+ \+ \d+ "
                                   r"of them the machine's \(interrupts, context switches: not "
                                   r"attributed\)")

    def test_aa_names_nothing(self):
        # One benchmark: the profiles take their time whatever the verdict.
        p = run(self.same, "--ab", self.original, "--ab-time", "2", "--explain", "--color",
                "never", "--exact", "explain/mixed", env_extra={"BENCH_EXPLAIN_ALL": "1"})
        self.assert_exit(p, 0)
        self.check_aa(p, "A/A time", ["explain/mixed"])


class BaselineTest(ExplainCase):
    def setUp(self):
        super().setUp()
        if not perf_usable() or e2e_helpers.SANITIZED:
            self.skipTest("perf cannot record here, or a sanitizer build")

    def test_confirmed_changes_explained_in_json(self):
        key = {"XDG_CONFIG_HOME": self.temp_dir("bench-explain-key-")}
        where = ["--baseline-dir", os.path.join(self.dir, "baselines")]
        p = run(self.original, "--quick", "--save-baseline", "old", *where, *BASE,
                env_extra=key)
        self.assert_exit(p, 0)
        out = os.path.join(self.dir, "new.json")
        p = run(self.slow, "--quick", "--baseline", "old", *where, "--explain",
                "--confirm-time", "2", "--json", out, *BASE, env_extra=key)
        self.assert_exit(p, 0)
        self.check_changed(p, "--baseline")
        doc = e2e_helpers.load_json(out)
        if SCHEMA:
            e2e_helpers.check_schema(doc, SCHEMA)
        got = {b["id"]: b.get("explanation") for b in e2e_helpers.by_id(doc).values()}
        self.assertIsNone(got["explain/hash"], doc)
        for bid in CHANGED:
            e = got[bid]
            self.assertTrue(e["explained"], e)
            self.assertEqual(e["mode"], "time")
            self.assertEqual(e["functions"][0]["name"], "shared_mix", e)
            self.assertGreaterEqual(e["attributed"], 0.7, e)
            for k in range(2):
                self.assertLessEqual(0, e["machine_samples"][k], e)
                self.assertLess(e["machine_samples"][k], e["samples"][k], e)
            self.assertAlmostEqual(e["change_per_iteration"],
                                   e["new_per_iteration"] - e["old_per_iteration"], places=6)
            self.assertTrue(any(st["frames"].endswith(";shared_mix") for st in e["stacks"]), e)
        if REPORT:
            self.check_report(out)

    def check_report(self, results):
        site = os.path.join(self.dir, "site")
        p = e2e_helpers.run([sys.executable, REPORT, results, "--out", site], timeout=120)
        self.assert_exit(p, 0)
        page = [f for f in os.listdir(site) if f.startswith("b-explain_mixed")][0]
        with open(os.path.join(site, page), encoding="utf-8") as f:
            text = f.read()
        # shared_mix first, then any other function beyond noise (the kernel's interrupts and
        # context switches are the machine's, never named: docs/cli.md).
        self.assertRegex(text, r'id="explain-text">shared_mix \+[0-9.]+ \S+(, [^<,]+ [-+][0-9.]+ '
                               r'\S+)* per iteration')
        grown = re.findall(r'data-change="(-?[0-9.]+)" data-name="shared_mix"', text)
        self.assertTrue(grown and all(float(g) > 0 for g in grown), text[-3000:])
        chromium = next((shutil.which(c) for c in ("chromium", "chromium-browser")
                         if shutil.which(c)), None)
        if not chromium:
            return
        dom = e2e_helpers.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                               "--disable-dev-shm-usage", "--no-first-run",
                               f"--user-data-dir={os.path.join(self.dir, 'chromium')}",
                               "--dump-dom", "file://" + os.path.join(site, page)],
                              timeout=120)
        self.assertEqual(dom.returncode, 0, dom.stderr[-2000:])
        self.assertIn('id="explain-flame"', dom.stdout)
        self.assertIn('data-name="shared_mix"', dom.stdout)


class HistoryTest(ExplainCase):
    RUN = ["--warm-up-time", "0.01", "--measurement-time", "0.08", "--nresamples", "500",
           "--processes", "3", "--color", "never", "--exact", "explain/mixed", "explain/hash"]

    def setUp(self):
        super().setUp()
        if not perf_usable() or e2e_helpers.SANITIZED:
            self.skipTest("perf cannot record here, or a sanitizer build")
        if "history: SQLite" not in run(PROGRAM, "--version").stdout:
            self.skipTest("this build has no SQLite (bench --version says so)")

    def check_mixed(self, text, what):
        got = explained(text)
        self.assertEqual(sorted(got), ["explain/mixed"], (what, text))
        name, share = first_named(got["explain/mixed"])
        self.assertEqual(name, "shared_mix", (what, text))
        self.assertGreaterEqual(share, 70, (what, text))

    def test_gate_and_confirm_explain_the_step(self):
        key = {"XDG_CONFIG_HOME": self.temp_dir("bench-explain-key-")}
        db = os.path.join(self.dir, "runs.db")
        for _ in range(5):
            self.assert_exit(run(self.original, *self.RUN, "--history", db, env_extra=key), 0)
        p = run(self.slow, *self.RUN, "--history", db, "--history-gate", "5",
                "--noise-threshold", "0.05", "--confirm-time", "2", "--explain", env_extra=key)
        if p.returncode == 0:
            # Five quick runs on a loaded machine (load 5.8 at make test's -j 3) can spread too
            # wide for the gate to tell the planted step: it must say so, and explain nothing.
            self.assertRegex(p.stderr, r"(?m)^explain/mixed: cannot tell against the last 5 "
                                       r"runs: .*: it does not fail the gate$")
            self.assertNotIn("regression confirmed", p.stderr)
        else:
            self.assert_exit(p, 1)
            self.assertRegex(p.stderr, r"explain/mixed: regression confirmed: .* it fails the "
                                       r"gate")
            self.check_mixed(p.stderr, "--history-gate")
        for _ in range(4):
            self.assert_exit(run(self.slow, *self.RUN, "--history", db, env_extra=key), 0)
        p = run(self.original, "--history-show", db, "--history-confirm", "--confirm-time", "2",
                "--explain", "--color", "never", env_extra=key)
        self.assert_exit(p, 0)
        self.assertRegex(p.stdout, r"explain/mixed: change point at run [56] .*: confirmed")
        self.check_mixed(p.stdout, "--history-confirm")


class UnavailableTest(ExplainCase):
    def test_without_perf_one_line_and_same_exit(self):
        empty = self.temp_dir("bench-explain-path-")
        # 3 s for the planted benchmark alone: at load 6 (make test beside a busy loop a CPU), 1 s
        # a benchmark measured 2 pairs, too few to call +27% a regression.
        args = ["--ab", self.original, "--ab-time", "3", "--fail-on-regression", "--color",
                "never", "--exact", "explain/mixed"]
        p = run(self.slow, *args, "--explain", env_extra={"PATH": empty})
        self.assert_exit(p, 1)
        lines = [l for l in p.stdout.splitlines() if l.startswith("--explain:")]
        self.assertEqual(len(lines), 1, p.stdout)
        self.assertIn("perf is not on PATH: install it (apt-get install linux-perf)", lines[0])
        self.assertNotIn("Explained (--explain", p.stdout)
        self.assertIn("explain/mixed: Performance has regressed.", p.stdout)

    def test_stripped_programs_say_so(self):
        if not perf_usable() or e2e_helpers.SANITIZED or not shutil.which("strip"):
            self.skipTest("perf cannot record here, a sanitizer build, or no strip")
        # Without the build id too: perf would otherwise find the symbols of the same build in
        # its cache (~/.debug).
        bare = os.path.join(self.dir, "bare")
        subprocess.run(["strip", "--remove-section=.note.gnu.build-id", "-o", bare, PROGRAM],
                       check=True)
        slow = e2e_helpers.copy_program(bare, os.path.join(self.dir, "bareslow"),
                                        f"E2ESLOW{self.PLANTED}\n".encode())
        p = run(slow, "--ab", bare, "--ab-time", "3", "--fail-on-regression", "--explain",
                "--color", "never", "--exact", "explain/mixed")
        self.assert_exit(p, 1)
        self.assertIn("Explained (--explain", p.stdout)
        self.assertRegex(p.stdout, r"not explained: \S+ has no symbols \(\d+% of its samples "
                                   r"fall in unnamed code\): do not strip it")

    def test_misuse(self):
        p = run(self.slow, "--explain", *BASE)
        self.assert_exit(p, 2)
        self.assertIn("--explain explains the verdicts of a comparison", p.stderr)
        p = run(self.slow, "--baseline", "old", "--instructions", "--explain", *BASE)
        self.assert_exit(p, 2)
        self.assertIn("--explain with --baseline explains times", p.stderr)
        p = run(self.slow, "--ab", self.original, "--instructions", *BASE)
        self.assert_exit(p, 2)
        self.assertIn("add --explain", p.stderr)


if __name__ == "__main__":
    unittest.main()

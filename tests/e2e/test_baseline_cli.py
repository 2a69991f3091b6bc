#!/usr/bin/env python3
"""End-to-end tests of baselines and comparison, driving the real fixture program.

Saving, merging, loading, refusing bad names and broken files, comparing a run with a
baseline and two baselines with each other, the CI gate's exit code, calibration and the
system context. The fixture's cmp/chain benchmark is a latency-bound chain whose length a marker
at the end of the program file stretches (build() makes such "new builds"), so a slowdown is
exact, not hoped for. Saved-baseline tests
inject 200% (3x): two separate runs on a shared test machine have been seen to differ by 25%
with nothing changed, and a test must not depend on the machine being quiet.
"""
import atexit
import json
import os
import re
import shutil
import tempfile
import unittest

import e2e_helpers

FIXTURE = os.environ.get("E2E_FIXTURE", "")
FIXTURES_DIR = os.environ.get("E2E_FIXTURES_DIR", "")
# The schema the documentation publishes.
SCHEMA = os.path.join(os.path.dirname(os.environ.get("E2E_BENCHES_DIR", "")), "docs",
                      "results.schema.json")


BUILDS = tempfile.mkdtemp(prefix="bench-e2e-builds-")
atexit.register(shutil.rmtree, BUILDS, True)


def build(slowdown):
    """The fixture as another build whose cmp/chain is `slowdown`% slower: a copy ending with the
    marker E2ESLOW<N> (fixture_more.c reads it from its own file), so its hash differs from the
    fixture's as a rebuilt program's would, and a baseline's snapshot of it stays slow."""
    if not slowdown:
        return FIXTURE
    path = os.path.join(BUILDS, f"fixture_slow{slowdown}")
    if not os.path.exists(path):
        e2e_helpers.copy_program(FIXTURE, path + ".tmp", f"E2ESLOW{slowdown}\n".encode())
        os.rename(path + ".tmp", path)
    return path


# The drift canaries of a save or comparison (0.5-3 s a run here, most of it the memory probe's
# buffer) on 3 repetitions and the 64 MiB floor, every step kept: these tests check what a
# comparison does, not how well the canaries read the machine (docs/comparison.md, "Drift
# canaries"; ContextTest and PreparedMachineTest read the product's canary plan).
QUICK_CANARIES = {"BENCH_CANARY_QUICK": "1"}


def run(args, slowdown=None, env_extra=None):
    env = e2e_helpers.environ(env_extra, unset=["BENCH_BASELINE_DIR"])
    return e2e_helpers.run([build(slowdown), "--color", "never"] + args, timeout=300, env=env)


def err_lines(stderr):
    """stderr without warnings and notes, which depend on the machine (its load, its drift),
    whichever copy of the fixture (its name begins them) said them."""
    return [ln for ln in stderr.splitlines() if not re.match(r"[^\s:]+: (warning|note):", ln)]


class BaselineCase(e2e_helpers.Case):
    """A temporary baseline directory per test, and the fixture run with it."""

    def setUp(self):
        self.dir = self.temp_dir("bench-e2e-baselines-")

    # Arguments every run of the class takes first (BaselineTest: --quick).
    FIRST = []

    def bench(self, *args, slowdown=None, env_extra=None):
        return run(["--baseline-dir", self.dir] + self.FIRST + list(args), slowdown,
                   {**QUICK_CANARIES, **(env_extra or {})})

    def load(self, name):
        return e2e_helpers.load_json(os.path.join(self.dir, name + ".json"))


class BaselineTest(BaselineCase):
    """Saving, merging and loading baselines by name, and what a comparison reports besides
    verdicts: new, skipped and removed benchmarks, refused names, options and files. Nothing
    here asserts a verdict that numbers decide: --quick."""
    FIRST = ["--quick"]

    def test_save_then_merge_filtered_run(self):
        p = self.bench("--save-baseline", "base", "^fix/(a|b)$")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("saved 2 benchmarks to baseline 'base'", p.stderr)
        first = self.load("base")
        self.assertEqual([b["id"] for b in first["benchmarks"]], ["fix/a", "fix/b"])
        p = self.bench("--save-baseline", "base", "--exact", "fix/b")
        self.assertEqual(p.returncode, 0, p.stderr)
        second = self.load("base")
        self.assertEqual([b["id"] for b in second["benchmarks"]], ["fix/a", "fix/b"])
        # fix/a kept byte for byte, fix/b replaced by the new measurement
        self.assertEqual(first["benchmarks"][0], second["benchmarks"][0])
        self.assertNotEqual(first["benchmarks"][1]["samples"], second["benchmarks"][1]["samples"])
        self.assertEqual([f for f in os.listdir(self.dir) if ".tmp" in f], [])

    def test_env_dir(self):
        p = run(["--quick", "--save-baseline", "viaenv", "--exact", "fix/a"],
                env_extra={"BENCH_BASELINE_DIR": self.dir, **QUICK_CANARIES})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "viaenv.json")))
        # BENCH_CANARY_QUICK keeps every canary step and says what it changed.
        ctx = self.load("viaenv")["context"]
        self.assertEqual(ctx["canary_memory"], {"bytes": 64 << 20, "why": "the 64 MiB floor, as "
                                                "BENCH_CANARY_QUICK asks (a testing aid)"})
        self.assertEqual({k: len(v) for k, v in ctx["canary_samples"].items()},
                         {"latency_chain": 5, "compute": 5, "l2_read": 5, "memory_read": 5})

    def test_bad_names_refused(self):
        for name in ["../escape", ".hidden", "a/b", "", "-x", "x" * 65, "a b", "nul\x01"]:
            for flag in ["--save-baseline", "--baseline", "--load-baseline"]:
                p = self.bench(flag, name, "--exact", "fix/a")
                self.assertEqual(p.returncode, 2, (flag, name, p.stderr))
                lines = err_lines(p.stderr)
                self.assertEqual(len(lines), 1, lines)
                self.assertIn(flag, lines[0])
        self.assertEqual(os.listdir(self.dir), [])

    def test_missing_baseline(self):
        p = self.bench("--baseline", "nope", "--exact", "fix/a")
        self.assertEqual(p.returncode, 2)
        self.assertRegex(err_lines(p.stderr)[0], r"baseline 'nope' not found: .*nope\.json")

    def test_new_and_skipped_are_reported_not_errors(self):
        """A benchmark the baseline lacks is "new", one skipped in either run "skipped": both in
        the summary and the JSON, neither changes the exit code, even with the gate."""
        self.assertEqual(self.bench("--save-baseline", "only_a", "--exact", "fix/a").returncode, 0)
        # Only statuses, no numbers: the gate cannot fail, whatever the machine does.
        p = self.bench("--baseline", "only_a", "--fail-on-regression",
                       "^(fix/b|trouble/skip)$")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"(?m)^0 regressed, .*, 1 skipped, 1 new$")
        # With fix/a compared too (its verdict is the machine's: not asserted).
        out = os.path.join(self.dir, "run.json")
        p = self.bench("--baseline", "only_a", "--json", out, "^(fix/(a|b)|trouble/skip)$")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"(?m)^  new +fix/b$")
        self.assertRegex(p.stdout, r"(?m)^  skipped +trouble/skip$")
        self.assertRegex(p.stdout, r"(?m)^ +change: new: the baseline has no measurement$")
        self.assertRegex(p.stdout, r"(?m)^[0-9]+ regressed, .*, 1 skipped, 1 new$")
        res = json.load(open(out, encoding="utf-8"))
        change = {b["id"]: b.get("change") for b in res["benchmarks"]}
        self.assertEqual(change["fix/b"], {"verdict": "new"})
        self.assertEqual(change["trouble/skip"], {"verdict": "skipped"})
        self.assertIn(change["fix/a"]["verdict"],
                      ["no change", "within noise", "inconclusive", "regressed", "improved"])
        self.assertEqual(res["comparison"], {"baseline": "only_a", "removed": []})
        e2e_helpers.check_schema(res, SCHEMA)
        # --baseline-strict: new is an error (exit 2, after the run), skipped never is.
        p = self.bench("--baseline", "only_a", "--baseline-strict", "^(fix/(a|b)|trouble/skip)$")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("time:", p.stdout)  # it ran and reported
        msg = e2e_helpers.prog_prefix(FIXTURE)
        self.assertEqual([ln for ln in err_lines(p.stderr) if ln.startswith(msg) and
                          not e2e_helpers.FIXTURE_COUNTER_LINE.match(ln)],
                         [msg + "--baseline-strict: 'fix/b' is new: baseline 'only_a' has no "
                          "measurement of it"])
        p = self.bench("--baseline", "only_a", "--baseline-strict", "^(fix/a|trouble/skip)$")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # The last of --baseline-strict and --baseline-lenient wins.
        p = self.bench("--baseline", "only_a", "--baseline-strict", "--baseline-lenient",
                       "^fix/(a|b)$")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_same_benchmarks_are_neither_new_nor_removed(self):
        """Parameterised ids sort by number (8, 64, 1024), not as strings: all are found."""
        self.assertEqual(self.bench("--save-baseline", "copy", "^fix/copy/").returncode, 0)
        p = self.bench("--baseline", "copy", "--baseline-strict", "^fix/copy/")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotRegex(p.stdout, r"(?m)^  (new|removed) ")

    def test_removed_only_among_selected(self):
        """A baseline entry this program lacks is "removed" when the filters select it, and not
        mentioned when they do not."""
        self.assertEqual(self.bench("--save-baseline", "base", "--exact", "fix/a").returncode, 0)
        data = self.load("base")
        gone = dict(data["benchmarks"][0], id="gone/x", group="gone", name="x")
        data["benchmarks"].append(gone)
        with open(os.path.join(self.dir, "base.json"), "w", encoding="utf-8") as f:
            json.dump(data, f)
        for fmt in ["pretty", "markdown", "json"]:
            with self.subTest(fmt=fmt):
                p = self.bench("--baseline", "base", "--output-format", fmt,
                               "^(fix/a|gone/x)$")
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                summary = p.stdout if fmt == "pretty" else p.stderr
                self.assertRegex(summary, r"(?m)^  removed +gone/x$")
                if fmt == "markdown":
                    self.assertRegex(p.stdout, r"(?m)^\| gone/x \|.* removed \|$")
                    self.assertRegex(p.stdout, r"(?m)^\| Benchmark \|.*\| Change vs base \|$")
                if fmt == "json":
                    doc = json.loads(p.stdout)
                    self.assertEqual(doc["comparison"]["removed"], ["gone/x"])
                    e2e_helpers.check_schema(doc, SCHEMA)
        p = self.bench("--baseline", "base", "--exact", "fix/a")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("gone/x", p.stdout + p.stderr)
        p = self.bench("--baseline", "base", "--baseline-strict", "^(fix/a|gone/x)$")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("'gone/x' was removed: only baseline 'base' has it", p.stderr)

    def test_gate_options_need_a_comparison(self):
        for args in (["--fail-on-regression"], ["--significance-level", "0.01"],
                     ["--noise-threshold", "0.05"], ["--baseline-strict"],
                     ["--baseline-lenient"], ["--fail-on-regression", "--save-baseline", "x"]):
            with self.subTest(args=args):
                p = self.bench(*args, "--exact", "fix/a")
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                lines = err_lines(p.stderr)
                self.assertEqual(len(lines), 1, lines)
                # The level and the threshold also serve the history gate, and say so.
                tail = (r" \(or --history-gate K, or --history-confirm\)"
                        if args[0] in ("--significance-level", "--noise-threshold") else "")
                self.assertRegex(lines[0], rf"^{re.escape(e2e_helpers.prog_prefix(FIXTURE))}"
                                           rf"{args[0]} needs a comparison: give "
                                           rf"--baseline NAME or --ab OTHER{tail}$")
                self.assertNotIn("time:", p.stdout)
        for flag in ["--ab-time", "--ab-pairs"]:
            p = self.bench(flag, "5", "--exact", "fix/a")
            self.assertEqual(p.returncode, 2)
            self.assertEqual(err_lines(p.stderr),
                             [f"{e2e_helpers.prog_prefix(FIXTURE)}{flag} needs --ab OTHER"])

    def test_hostile_files_as_baselines(self):
        for fixture in ["truncated.json", "nan_literal.json", "negative_count.json",
                        "binary_garbage.bin", "future_version.json", "missing_samples.json"]:
            shutil.copy(os.path.join(FIXTURES_DIR, fixture), os.path.join(self.dir, "bad.json"))
            p = self.bench("--baseline", "bad", "--exact", "fix/a")
            self.assertEqual(p.returncode, 2, (fixture, p.stderr))
            lines = err_lines(p.stderr)
            self.assertEqual(len(lines), 1, (fixture, lines))
            self.assertIn("bad.json", lines[0])
            # and saving over it is refused before anything runs, leaving it untouched
            before = open(os.path.join(self.dir, "bad.json"), "rb").read()
            p = self.bench("--save-baseline", "bad", "--exact", "fix/a")
            self.assertEqual(p.returncode, 2, (fixture, p.stderr))
            self.assertIn("refusing to replace", p.stderr)
            self.assertNotIn("time:", p.stdout, "it measured a run it could not save")
            self.assertEqual(open(os.path.join(self.dir, "bad.json"), "rb").read(), before)


class VerdictTest(BaselineCase):
    """Verdicts of saved-baseline comparisons: a planted slowdown and speedup, two saved
    baselines, calibrated noise, a changed context, intervals too wide to decide, benchmarks
    that moved together."""

    def test_slowdown_is_a_regression_and_fails_the_gate(self):
        self.assertEqual(self.bench("--save-baseline", "before", "^cmp/").returncode, 0)
        p = self.bench("--baseline", "before", "--fail-on-regression", "--json",
                       os.path.join(self.dir, "run.json"), "^cmp/", slowdown=900)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("cmp/chain: Performance has regressed.", p.stdout)
        # Worst first. (Whether cmp/steady stays unflagged depends on the machine staying
        # quiet between the two runs, which a test machine running other tests cannot promise:
        # the false-alarm rate is measured on a quiet machine, not asserted here.)
        self.assertRegex(p.stdout, r"Comparison with baseline 'before'.*\n  regressed +cmp/chain ")
        res = json.load(open(os.path.join(self.dir, "run.json"), encoding="utf-8"))
        change = {b["id"]: b["change"] for b in res["benchmarks"]}
        self.assertEqual(change["cmp/chain"]["verdict"], "regressed")
        self.assertGreater(change["cmp/chain"]["ratio"], 1.5)
        self.assertLess(change["cmp/chain"]["ratio_lower"], change["cmp/chain"]["ratio"])
        self.assertLess(change["cmp/chain"]["p_adjusted"], 0.05)
        # without the gate flag a regression is reported but the exit code stays 0
        p = self.bench("--baseline", "before", "^cmp/chain$", slowdown=900)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Performance has regressed.", p.stdout)

    def test_speedup_is_an_improvement(self):
        self.assertEqual(self.bench("--save-baseline", "slow", "^cmp/chain$",
                                    slowdown=900).returncode, 0)
        p = self.bench("--baseline", "slow", "--fail-on-regression", "^cmp/chain$")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("cmp/chain: Performance has improved.", p.stdout)

    def test_compare_two_saved_baselines(self):
        self.assertEqual(self.bench("--save-baseline", "old", "^cmp/").returncode, 0)
        self.assertEqual(self.bench("--save-baseline", "new", "^cmp/", slowdown=900).returncode, 0)
        p = self.bench("--load-baseline", "new", "--baseline", "old", "--fail-on-regression")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertNotIn("time:", p.stdout)  # nothing ran
        self.assertIn("cmp/chain: Performance has regressed.", p.stdout)
        p = self.bench("--load-baseline", "new")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--load-baseline needs --baseline", p.stderr)

    def test_calibration_saves_noise(self):
        p = self.bench("--save-baseline", "cal", "--calibrate", "3", "^cmp/steady$")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("calibration run 3 of 3", p.stderr)
        entry = self.load("cal")["benchmarks"][0]
        self.assertEqual(entry["noise"]["runs"], 3)
        self.assertGreaterEqual(entry["noise"]["log_median_sd"], 0)
        p = self.bench("--baseline", "cal", "^cmp/steady$")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("calibrated", p.stdout)
        p = self.bench("--calibrate", "3", "^cmp/steady$")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--calibrate needs --save-baseline", p.stderr)

    def test_context_difference_warned(self):
        self.assertEqual(self.bench("--save-baseline", "ctx", "--exact", "fix/a").returncode, 0)
        data = self.load("ctx")
        data["context"]["compiler"] = "some other compiler 1.0"
        with open(os.path.join(self.dir, "ctx.json"), "w", encoding="utf-8") as f:
            json.dump(data, f)
        p = self.bench("--baseline", "ctx", "--exact", "fix/a")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stderr, r"different build: .*compiler 'gcc.*' vs "
                                   r"'some other compiler 1.0'")
        self.assertNotIn("different machine", p.stderr)

    def write_moved_together(self, name, scale, **context):
        """A baseline of five benchmarks at 100 ns * scale per iteration, with context facts: a
        real saved file (every field the loader checks) with its context and samples replaced."""
        tmpl = os.path.join(self.dir, "tmpl.json")
        if not os.path.exists(tmpl):
            p = self.bench("--in-process", "--sample-size", "20", "--save-baseline", "tmpl",
                           "--exact", "fix/a")
            self.assertEqual(p.returncode, 0, p.stderr)
        with open(tmpl, encoding="utf-8") as f:
            data = json.load(f)
        ctx = data["context"]
        ctx.update({"hostname": "fixture", "kernel": "Linux 6.1.0", "governor": "performance",
                    "compiler": "gcc 12", "compiler_flags": "-O2", "build_type": "Release",
                    "git_revision": "abc"})
        ctx["cpu"].update({"brand": "Fixture CPU", "cores": 2, "threads": 2})
        ctx.update(context)
        entry = data["benchmarks"][0]
        benches = []
        for k in range(5):
            iters = [10 * (i + 1) for i in range(20)]
            totals = [100 * scale * n * (1 + 0.001 * ((i * 7 + k) % 5)) for i, n in
                      enumerate(iters)]
            b = json.loads(json.dumps(entry))
            b.update({"id": f"g/b{k}", "group": "g", "name": f"b{k}", "param": None})
            b["samples"] = {"iterations": iters, "totals_ns": totals}
            benches.append(b)
        data["benchmarks"] = benches
        with open(os.path.join(self.dir, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(data, f)

    def test_wide_intervals_are_inconclusive_and_can_fail_a_gate(self):
        """Two files of the same speeds whose entries were measured in one process: each
        interval carries the default 1.5% run-to-run noise of both runs and the family level over
        five benchmarks, so it reaches past the 2% threshold. That is "inconclusive", never
        "no change"; --fail-on-inconclusive makes it exit 1 and names each one."""
        self.write_moved_together("old", 1.0)
        self.write_moved_together("new", 1.0)
        p = self.bench("--load-baseline", "new", "--baseline", "old")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        rows = re.findall(r"(?m)^  (no change|inconclusive) +(g/b[0-9]) +([+-][0-9.]+)% "
                          r"\[([+-][0-9.]+)%, ([+-][0-9.]+)%\] p=[0-9.]+ detectable ([0-9.]+)%",
                          p.stdout)
        self.assertEqual(len(rows), 5, p.stdout)
        for verdict, bid, _, lo, hi, mde in rows:
            self.assertTrue(float(lo) < -2 and float(hi) > 2, (bid, lo, hi))
            self.assertEqual(verdict, "inconclusive", bid)
            self.assertGreater(float(mde), 2.0, bid)
        self.assertRegex(p.stdout, r"(?m)^0 regressed, 0 improved, 0 unchanged .*, 5 inconclusive$")
        p = self.bench("--load-baseline", "new", "--baseline", "old", "--fail-on-inconclusive")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        named = re.findall(rf"(?m)^{re.escape(e2e_helpers.prog_prefix(FIXTURE))}"
                           r"--fail-on-inconclusive: '(g/b[0-9])' is inconclusive", p.stderr)
        self.assertEqual(sorted(named), [f"g/b{k}" for k in range(5)], p.stderr)
        p = self.bench("--fail-on-inconclusive", "--exact", "fix/a")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--fail-on-inconclusive needs a comparison", p.stderr)

    def test_moved_together_blames_the_machine_only_when_it_changed(self):
        self.write_moved_together("old", 1.0)
        cases = [
            # (what changed in the new run's context, stdout wanted, words never printed)
            ({"git_revision": "def"}, "the recorded machine and build are the same",
             ["machine changed", "machine state", "warning"]),
            ({"compiler_flags": "-O3"}, "and the build changed between the runs (compiler "
             "flags '-O3' vs '-O2')", ["machine changed", "machine state", "warning"]),
            ({"kernel": "Linux 6.12.0"}, "warning: 5 of 5 benchmarks moved the same way (median "
             "change +50.00%) and the machine changed between the runs (kernel 'Linux 6.12.0' "
             "vs 'Linux 6.1.0')", []),
        ]
        for change, want, never in cases:
            with self.subTest(change=change):
                self.write_moved_together("new", 1.5, **change)
                p = self.bench("--load-baseline", "new", "--baseline", "old")
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn("5 of 5 benchmarks moved the same way", p.stdout)
                self.assertIn(want, p.stdout)
                for word in never:
                    self.assertNotIn(word, p.stdout)
                self.assertEqual("kernel" in change, "different machine" in p.stderr, p.stderr)


class AbTest(e2e_helpers.Case):
    """--ab against a wrapper that runs the same fixture with a stretched chain."""

    def setUp(self):
        self.dir = self.temp_dir("bench-e2e-ab-")

    def wrapper(self, slowdown):
        return e2e_helpers.write_script(
            os.path.join(self.dir, f"old_{slowdown}"),
            f"#!/bin/sh\nE2E_SLOWDOWN_PERCENT={slowdown} exec '{FIXTURE}' \"$@\"\n")

    # The chain doubles (100%) and at most 8 pairs share 4 s: under a sanitizer build on a loaded
    # two-core machine, 4 pairs and a 30% stretch once came out undecided (pair-to-pair sd near
    # 10%).
    def ab(self, old, *args, slowdown=0):
        return run(["--ab", old, "--ab-time", "4", "--ab-pairs", "8"] + list(args),
                   slowdown=slowdown)

    def test_new_build_slower_fails_the_gate(self):
        p = self.ab(self.wrapper(0), "--fail-on-regression", "^cmp/chain$", slowdown=100)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("cmp/chain: Performance has regressed.", p.stdout)
        self.assertRegex(p.stdout, r"[0-9]+ worker pairs, [0-9]+ rounds of ABBA\+BAAB, "
                                   r"pair-to-pair sd")

    def test_new_build_faster_is_an_improvement(self):
        p = self.ab(self.wrapper(100), "--fail-on-regression", "^cmp/chain$")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("cmp/chain: Performance has improved.", p.stdout)

    def test_benchmark_missing_in_old_build(self):
        """What the old build lacks is "new"; what it lists for the same FILTERs and this build
        lacks is "removed"; neither is an error."""
        bench = os.environ.get("E2E_BENCH", "")
        p = run(["--ab", bench, "--ab-time", "1", "^(fix/a|harness/empty)$"])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("new: ", p.stdout)
        self.assertIn("has no benchmark 'fix/a'", p.stdout)
        self.assertRegex(p.stdout, r"(?m)^  new +fix/a$")
        self.assertRegex(p.stdout, r"(?m)^  removed +harness/empty$")
        p = run(["--ab", bench, "--ab-time", "1", "--baseline-strict", "--exact", "fix/a"])
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("'fix/a' is new", p.stderr)

    def test_skipped_benchmark(self):
        p = self.ab(self.wrapper(0), "--fail-on-regression", "--exact", "trouble/skip")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"(?m)^ +skipped: skipped in .*needs a frobnicator")
        self.assertRegex(p.stdout, r"(?m)^  skipped +trouble/skip$")

    def test_old_build_without_the_protocol(self):
        """A program that does not take the worker job (a build of an older harness) is told to
        list nothing: it ends at once, and the comparison fails with the reason (exit 3)."""
        old = e2e_helpers.write_script(
            os.path.join(self.dir, "old_harness"),
            "#!/bin/sh\n[ \"$1 $2\" = '--list ^$' ] || echo \"ran the suite: $*\"\nexit 2\n")
        p = run(["--ab", old, "--ab-time", "1", "--exact", "fix/a"])
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("exited with code 2 before its setup was done", p.stdout)
        self.assertNotIn("ran the suite", p.stdout + p.stderr)
        # The worker's own flag of earlier versions is gone: the job travels in the environment.
        p = run(["--ab-worker", "fix/a"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("--ab-worker", p.stderr)

    def test_old_build_sending_malformed_times(self):
        """A build whose worker answers a sample with a time and junk after it ("T 5 junk",
        once taken as 5 ns) or a line cut from one too long for the channel: the pair fails
        with the reason (exit 3), nothing is compared, and nothing hangs."""
        for answer in ("echo 'T 5 junk' >&3",
                       "head -c 5000 /dev/zero | tr '\\0' 7 >&3; echo >&3"):
            old = e2e_helpers.write_script(
                os.path.join(self.dir, "hostile"),
                "#!/bin/sh\n"
                "[ -n \"$BENCH_WORKER_JOB\" ] || { echo fix/a; exit 0; }\n"
                "echo READY >&3\n"
                "while read -r cmd n; do\n"
                f"  case \"$cmd\" in R) {answer} ;; *) echo 'END ok ' >&3; exit 0 ;; esac\n"
                "done\n")
            p = run(["--ab", old, "--ab-time", "1", "--exact", "fix/a"])
            self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
            self.assertIn("a line that is not its time (a malformed line)", p.stdout)
            self.assertNotRegex(p.stdout, r"(?m)^  (regressed|improved|within noise|no change)")

    def test_bad_program_and_combinations(self):
        p = run(["--ab", os.path.join(self.dir, "missing"), "--exact", "fix/a"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("is not an executable program", p.stderr)
        p = run(["--ab", FIXTURE, "--baseline", "x", "--exact", "fix/a"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("--ab compares two programs", p.stderr)


class ContextTest(unittest.TestCase):
    def test_context_listing(self):
        p = run(["--context"])
        self.assertEqual(p.returncode, 0, p.stderr)
        for key in ["cpu", "caches", "simd", "os", "compiler", "flags", "library", "clock"]:
            self.assertRegex(p.stdout, rf"(?m)^{key} +\S", key)

    def test_context_in_json(self):
        p = run(["--output-format", "json", "--exact", "fix/a"])
        self.assertEqual(p.returncode, 0, p.stderr)
        ctx = json.loads(p.stdout)["context"]
        self.assertIsInstance(ctx["cpu"]["brand"], str)
        self.assertGreater(ctx["cpu"]["threads"], 0)
        self.assertGreater(ctx["memory_bytes"], 0)
        self.assertEqual(len(ctx["loadavg"]), 3)
        self.assertIsInstance(ctx["warnings"], list)
        # Where libcpuid and the OS disagree, the fields hold the OS's figure.
        for d in ctx["cpu"]["disagreements"]:
            self.assertEqual(ctx["cpu"][d["fact"]], d["os"], d)
            self.assertNotEqual(d["libcpuid"], d["os"], d)

    @unittest.skipIf(shutil.which("lscpu") is None, "lscpu (util-linux) is not installed")
    def test_context_matches_lscpu(self):
        """--context's cores, threads and caches are the OS's, as lscpu reads them. A cache lscpu
        knows no size of (a hypervisor that publishes no cache folders) skips its check."""
        p = run(["--context"])
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.search(r"(?m)^ +(-?\d+) cores, (-?\d+) threads; (\d+) CPUs online$", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        cores, threads = int(m.group(1)), int(m.group(2))
        caches = context_caches(p.stdout)

        # lscpu -p lists the online CPUs: one line each, with its core and socket.
        cpus = e2e_helpers.run(["lscpu", "-p=CPU,CORE,SOCKET"], timeout=None, check=True).stdout
        rows = [ln.split(",") for ln in cpus.splitlines() if ln and not ln.startswith("#")]
        self.assertEqual(threads, len(rows), f"threads vs lscpu's online CPUs:\n{cpus}")
        with self.subTest(fact="cores"):
            if not all(len(r) > 2 and r[1] and r[2] for r in rows):
                self.skipTest("lscpu knows no core or socket of some CPU here")
            self.assertEqual(cores, len({(r[2], r[1]) for r in rows}),
                             f"cores vs lscpu's (socket, core) pairs:\n{cpus}")
        out = e2e_helpers.run(["lscpu", "-C=NAME,ONE-SIZE", "-B", "-J"], timeout=None,
                              check=False).stdout
        try:
            known = {c["name"]: int(c["one-size"]) for c in json.loads(out).get("caches", [])
                     if c.get("one-size")}
        except ValueError:
            known = {}
        for name, (kib, source) in caches.items():
            with self.subTest(cache=name):
                if name not in known:
                    self.skipTest(f"lscpu knows no {name} cache size here")
                # What lscpu reads from sysfs, the context has from sysfs too.
                self.assertEqual(source, "sysfs", f"{name}: {p.stdout}")
                self.assertEqual(kib * 1024, known[name], f"{name} vs lscpu:\n{out}")


def context_caches(text):
    """{"L1d": (KiB or None, source), ...} from --context's caches line."""
    m = re.search(r"(?m)^caches +(.*)$", text)
    assert m, text
    found = re.findall(r"(L1d|L2|L3) (?:(\d+) KiB \((sysfs|libcpuid)\)|(unknown))", m.group(1))
    assert len(found) == 3, m.group(0)
    return {n: (int(kib) if kib else None, src or "unknown") for n, kib, src, _ in found}


def cpu_tree(root, *, online="0-1", siblings=None, caches=None, nodes=None, governor=None,
             cpuinfo=None, dmi=None, hypervisor=None):
    """A prepared sysfs (ROOT/sys) and procfs (ROOT/proc) tree for BENCH_SYSFS_ROOT and
    BENCH_PROCFS_ROOT: CPUs `online` with thread siblings {cpu: "list"} (each CPU its own core
    when not given), CPU 0's caches [(level, type, size)], NUMA `nodes` ("0-3"; None: no node
    folder), a cpufreq governor (None: no cpufreq), /proc/cpuinfo's text, the firmware's DMI
    strings {file: text} (class/dmi/id; None: no folder) and /sys/hypervisor/type's text. Returns
    the environment that points the program at it."""
    cpu = os.path.join(root, "sys", "devices", "system", "cpu")

    def put(path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")

    put(os.path.join(cpu, "online"), online)
    ids = []
    for part in online.split(","):
        lo, _, hi = part.partition("-")
        ids += range(int(lo), int(hi or lo) + 1)
    for c in ids:
        put(os.path.join(cpu, f"cpu{c}", "topology", "thread_siblings_list"),
            (siblings or {}).get(c, str(c)))
    for i, (level, kind, size) in enumerate(caches or []):
        d = os.path.join(cpu, "cpu0", "cache", f"index{i}")
        put(os.path.join(d, "level"), str(level))
        put(os.path.join(d, "type"), kind)
        put(os.path.join(d, "size"), size)
    if nodes is not None:
        put(os.path.join(root, "sys", "devices", "system", "node", "online"), nodes)
    if governor is not None:
        put(os.path.join(cpu, "cpu0", "cpufreq", "scaling_governor"), governor)
        put(os.path.join(cpu, "cpu0", "cpufreq", "cpuinfo_max_freq"), "3000000")
    put(os.path.join(root, "proc", "cpuinfo"), cpuinfo or "processor\t: 0\nflags\t\t: sse2\n")
    for name, text in (dmi or {}).items():
        put(os.path.join(root, "sys", "class", "dmi", "id", name), text)
    if hypervisor is not None:
        put(os.path.join(root, "sys", "hypervisor", "type"), hypervisor)
    return {"BENCH_SYSFS_ROOT": os.path.join(root, "sys"),
            "BENCH_PROCFS_ROOT": os.path.join(root, "proc")}


class PreparedMachineTest(e2e_helpers.Case):
    """The system context of machines this one is not, from prepared sysfs and procfs trees:
    no cache folders (a hypervisor that publishes none), one core, many NUMA nodes, no
    cpufreq."""

    def context(self, **tree):
        env = cpu_tree(self.temp_dir("tree-"), **tree)
        p = run(["--context"], env_extra=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout, env

    def test_virtualization(self):
        """The hypervisor as the firmware's DMI strings or /sys/hypervisor/type name it; DMI of
        a maker that is no hypervisor is bare metal; a tree without either says nothing."""
        for tree, want in (({"dmi": {"sys_vendor": "QEMU", "product_name": "Standard PC"}},
                            "qemu"),
                           ({"dmi": {"sys_vendor": "Microsoft Corporation",
                                     "product_name": "Virtual Machine"}}, "microsoft"),
                           ({"dmi": {"sys_vendor": "innotek GmbH"}}, "oracle"),
                           ({"hypervisor": "xen"}, "xen"),
                           ({"dmi": {"sys_vendor": "Dell Inc.",
                                     "product_name": "PowerEdge R650"}}, "none (bare metal)"),
                           ({}, "unknown")):
            with self.subTest(want=want):
                text, _ = self.context(**tree)
                self.assertRegex(text, rf"(?m)^virt +{re.escape(want)}$")

    def test_no_cache_folders(self):
        """Without the OS's cache sizes no figure is marked the OS's; libcpuid's are marked as
        its own and shown only within the plausibility bounds; the memory canary follows only
        a figure some source vouches for, and says so."""
        text, env = self.context()
        caches = context_caches(text)
        for name, (kib, source) in caches.items():
            self.assertIn(source, ("libcpuid", "unknown"), text)
        cores = int(re.search(r"(?m)^ +(\d+) cores, ", text).group(1))  # the tree's: 2
        bound = {"L1d": 1024, "L2": 64 * 1024, "L3": min(1024 * 1024, 64 * 1024 * cores)}
        for name, (kib, source) in caches.items():
            if source == "libcpuid":
                self.assertLessEqual(kib, bound[name], text)
        self.assertNotIn("the OS's figure", text.split("caches", 1)[1].split("\nsimd")[0]
                         .replace("where libcpuid differs the OS's figure is shown", ""))
        m = re.search(r"(?m)^canary +the memory probe reads (\d+) MiB: (.*)$", text)
        self.assertIsNotNone(m, text)
        l3 = caches["L3"]
        if l3[1] == "unknown":
            self.assertEqual((m.group(1), m.group(2)),
                             ("64", "the default, as no source vouches for a cache size"))
        else:
            self.assertIn(f"({l3[0]} KiB, from libcpuid)", m.group(2))
        # The results file says the same, source by source, and passes the schema.
        p = run(["--output-format", "json", "--exact", "fix/a", "--quick"], env_extra=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        e2e_helpers.check_schema(doc, SCHEMA)
        cpu = doc["context"]["cpu"]
        for name, key in (("L1d", "l1d_kib"), ("L2", "l2_kib"), ("L3", "l3_kib")):
            self.assertEqual(cpu["cache_sources"][key], caches[name][1])
            self.assertEqual(cpu[key], caches[name][0] or -1)
        for x in cpu["cache_rejected"]:  # libcpuid's figures not shown are unknown here
            self.assertEqual((cpu[x["fact"]], cpu["cache_sources"][x["fact"]]), (-1, "unknown"))
            self.assertRegex(text, rf"the OS gives none; libcpuid's .*\b{x['libcpuid']} KiB"
                                   rf".* not shown: {re.escape(x['why'])}\n")
        self.assertEqual(doc["context"]["canary_memory"]["why"], m.group(2))
        self.assertEqual(doc["context"]["canary_memory"]["bytes"], int(m.group(1)) << 20)
        self.assertEqual(doc["context"]["numa_nodes"], -1)

    def test_caches_from_sysfs_size_the_canary(self):
        text, _ = self.context(caches=[(1, "Data", "32K"), (1, "Instruction", "32K"),
                                       (2, "Unified", "1024K"), (3, "Unified", "65536K")])
        self.assertEqual(context_caches(text), {"L1d": (32, "sysfs"), "L2": (1024, "sysfs"),
                                                "L3": (65536, "sysfs")})
        self.assertRegex(text, r"(?m)^canary +the memory probe reads 256 MiB: 4x the largest "
                               r"cache \(65536 KiB, from sysfs\)$")
        text, _ = self.context(caches=[(3, "Unified", "8M")])
        self.assertRegex(text, r"(?m)^canary +the memory probe reads 64 MiB: .*raised to the "
                               r"64 MiB floor$")

    def test_one_core(self):
        text, _ = self.context(online="0")
        self.assertRegex(text, r"(?m)^ +1 cores, 1 threads; \d+ CPUs online$")

    def test_smt_and_many_numa_nodes(self):
        text, _ = self.context(online="0-7", siblings={c: f"{c & ~1}-{c | 1}" for c in range(8)},
                               nodes="0-3")
        self.assertRegex(text, r"(?m)^ +4 cores, 8 threads; \d+ CPUs online$")
        self.assertRegex(text, r"(?m)^numa +4 nodes$")
        text, _ = self.context(nodes="0")
        self.assertRegex(text, r"(?m)^numa +1 node$")

    def test_cpufreq_or_none(self):
        text, _ = self.context()
        self.assertRegex(text, r"(?m)^governor +unknown$")
        self.assertNotIn("governor is", text)
        text, _ = self.context(governor="powersave")
        self.assertRegex(text, r"(?m)^governor +powersave$")
        self.assertRegex(text, r"(?m)^warning +CPU frequency governor is 'powersave'")

    def test_simd_features_from_the_prepared_cpuinfo(self):
        text, _ = self.context(cpuinfo="processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\n")
        self.assertRegex(text, r"(?m)^simd +sse2 avx2 fma$")


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""End-to-end tests of the bench command line: they run real programs and check what they print.

Two programs are driven: e2e_fixture (tests/e2e/fixture_*.c, benchmarks of known behaviour:
fast good ones, a parameterised one with byte throughput, a batched one that counts its calls,
and a `trouble` group that skips, fails, crashes or misuses the timed loop) and the reference suite
program `bench` (benches/*.c). The paths come from the environment (E2E_FIXTURE, E2E_BENCH,
E2E_BENCHES_DIR, set by ctest) or from --fixture, --bench and --benches-dir before the usual
unittest arguments. Standard library only; the JSON schema check uses `jsonschema` when it is
importable and is skipped, saying so, when it is not. Every run uses tiny time settings so the
whole file runs in seconds.
"""
import argparse
import csv
import io
import json
import math
import os
import pty
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

import e2e_helpers

FIXTURE = os.environ.get("E2E_FIXTURE", "")
BENCH = os.environ.get("E2E_BENCH", "")
BENCHES_DIR = os.environ.get("E2E_BENCHES_DIR", "")

# Short runs: 20 ms warm-up, 100 ms of sampling, a small bootstrap.
FAST = ["--warm-up-time", "0.02", "--measurement-time", "0.1", "--nresamples", "1000"]

# Every id e2e_fixture registers, in the order the harness sorts them: group, name, then the
# parameter as a number (8 < 64 < 1024, unlike the strings).
FIXTURE_IDS = [
    "clock/at_least_2us", "cmp/chain", "cmp/steady",
    "fix/a", "fix/add", "fix/b", "fix/batched",
    "fix/copy/8", "fix/copy/64", "fix/copy/1024",
    "fix/counted", "heap/a_leaves_state", "heap/b_sensitive", "more/elements",
    "trouble/abort", "trouble/crash", "trouble/exits", "trouble/fail", "trouble/hang",
    "trouble/iter_twice", "trouble/no_iter",
    "trouble/skip", "trouble/stack_overflow",
]
GOOD_IDS = [i for i in FIXTURE_IDS if i.startswith(("fix/", "more/"))]
GOOD_FILTER = "^(fix|more)/"

VALUE_OPTIONS = [
    "--warm-up-time", "--measurement-time", "--sample-size", "--target-precision", "--sampling",
    "--nresamples", "--confidence-level", "--seed", "--output-format", "--json", "--color",
]
ALL_OPTIONS = VALUE_OPTIONS + ["--list", "--exact", "--quick", "--help", "--version", "-h", "-V"]

ESTIMATES_SCHEMA = {
    "type": "object",
    "required": ["point", "lower", "upper"],
    "properties": {k: {"type": "number"} for k in ("point", "lower", "upper")},
}
RESULTS_SCHEMA = {
    "type": "object",
    "required": ["schema_version", "harness_version", "context", "benchmarks"],
    "properties": {
        "schema_version": {"const": 1},
        "harness_version": {"type": "string", "pattern": r"^\d+\.\d+\.\d+$"},
        "context": {
            "type": "object",
            "required": ["timestamp", "hostname", "os", "ncpus", "compiler", "build_type",
                         "clock", "statistics", "quick"],
            "properties": {
                "ncpus": {"type": "integer", "minimum": 1},
                "quick": {"type": "boolean"},
                "clock": {
                    "type": "object",
                    "required": ["name", "cost_ns", "resolution_ns", "min_sample_ns"],
                    "properties": {"cost_ns": {"type": "number", "exclusiveMinimum": 0}},
                },
                "statistics": {
                    "type": "object",
                    "required": ["nresamples", "confidence_level", "seed"],
                    "properties": {"seed": {"type": "integer", "minimum": 0}},
                },
            },
        },
        "benchmarks": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "group", "name", "param", "status"],
                "properties": {
                    "id": {"type": "string"},
                    "param": {"type": ["integer", "null"]},
                    "status": {"enum": ["ok", "skipped", "failed"]},
                    "samples": {
                        "type": "object",
                        "required": ["iterations", "totals_ns"],
                        "properties": {
                            "iterations": {"type": "array", "minItems": 2,
                                           "items": {"type": "integer", "minimum": 1}},
                            "totals_ns": {"type": "array", "minItems": 2,
                                          "items": {"type": "number"}},
                        },
                    },
                    "estimates": {
                        "type": "object",
                        "required": ["median", "mean", "std_dev", "mad", "slope", "min"],
                        "properties": {"min": {"type": "object", "required": ["point"],
                                               "additionalProperties": False,
                                               "properties": {"point": {"type": "number"}}}},
                        "additionalProperties": ESTIMATES_SCHEMA,
                    },
                    "r2": {"type": "number", "minimum": 0, "maximum": 1},
                    "throughput": {"type": "object"},
                },
                "if": {"properties": {"status": {"const": "ok"}}},
                "then": {"required": ["settings", "samples", "estimates", "r2", "outliers",
                                      "throughput", "warm_up", "sampling", "stop_reason"]},
                "else": {"required": ["message"]},
            },
        },
    },
}


def run(prog, *args, env=None, preexec_fn=None, cwd=None):
    """Runs prog with args; returns the CompletedProcess with text stdout and stderr."""
    return e2e_helpers.run([prog, *args], timeout=90, env=env, encoding="utf-8",
                           preexec_fn=preexec_fn, cwd=cwd)


def fixture(*args, **kw):
    return run(FIXTURE, *args, **kw)


def run_on_tty(prog, *args, env):
    """Runs prog with stdout on a pseudo-terminal (stderr a pipe); returns (rc, stdout bytes)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([prog, *args], stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    with proc.stderr:
        proc.stderr.read()
    return proc.wait(timeout=90), out


def clean_env(**extra):
    """The current environment without variables that change colour decisions, plus extra."""
    return e2e_helpers.environ(extra, unset=["NO_COLOR", "TERM"])


def project_version():
    """The VERSION of project() in the top-level CMakeLists.txt."""
    top = os.path.join(os.path.dirname(os.path.abspath(BENCHES_DIR)), "CMakeLists.txt")
    with open(top, encoding="utf-8") as f:
        m = re.search(r"project\(\s*harness\s+VERSION\s+([0-9.]+)", f.read())
    return m.group(1) if m else None


def err_lines(stderr):
    """stderr lines without the machine-noise warnings ("e2e_fixture: warning: the machine is
    busy ..."), which depend on what else the machine is doing, not on the program."""
    noise = tuple(e2e_helpers.prog_prefix(p) + "warning:" for p in (FIXTURE, BENCH))
    return [ln for ln in stderr.splitlines() if not ln.startswith(noise)]


def counter_lines(stderr):
    """The fixture's `e2e_fixture: ID key=value ...` lines as {id: {key: int}}. A body prints one
    line per call, that is per round: counts add up over the lines, except the batch bounds
    (largest and smallest over them); `body_calls` is the number of lines."""
    found = {}
    for line in err_lines(stderr):
        m = e2e_helpers.FIXTURE_COUNTER_LINE.match(line)
        if not m:
            continue
        now = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))}
        have = found.setdefault(m.group(1), {"body_calls": 0})
        have["body_calls"] += 1
        for k, v in now.items():
            if k in ("largest_batch", "max_batch"):
                have[k] = max(have.get(k, v), v)
            elif k == "smallest_batch":
                have[k] = min(have.get(k, v), v)
            else:
                have[k] = have.get(k, 0) + v
    return found


def id_key(bench_id):
    """Sort key of an id as the harness sorts: group, name, then the parameter numerically."""
    parts = bench_id.split("/")
    return (parts[0], parts[1], int(parts[2]) if len(parts) > 2 else -math.inf)


class Case(e2e_helpers.Case):
    """Assertions shared by the test classes."""

    def assert_one_error_line(self, proc, *needles):
        """Exit 2, nothing on stdout, one stderr line `PROGRAM: ...` containing every needle."""
        self.assert_exit(proc, 2)
        self.assertEqual(proc.stdout, "")
        lines = err_lines(proc.stderr)
        self.assertEqual(len(lines), 1, f"want one stderr line, got: {proc.stderr!r}")
        self.assertTrue(lines[0].startswith(e2e_helpers.prog_prefix(proc.args[0])), lines[0])
        for needle in needles:
            self.assertIn(needle, lines[0])

    def load_json(self, text):
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            self.fail(f"not valid JSON ({e}):\n{text[:2000]}")

    def assert_interval(self, est, what):
        self.assertTrue(all(math.isfinite(est[k]) for k in ("point", "lower", "upper")), what)
        self.assertLessEqual(est["lower"], est["point"], what)
        self.assertLessEqual(est["point"], est["upper"], what)

    def assert_ok_result(self, r):
        """Checks what every successful result must satisfy."""
        bid = r["id"]
        self.assertEqual(r["status"], "ok", f"{bid}: {r.get('message')}")
        group, name = bid.split("/")[:2]
        self.assertEqual((r["group"], r["name"]), (group, name))
        parts = bid.split("/")
        self.assertEqual(r["param"], int(parts[2]) if len(parts) == 3 else None)
        it, tot = r["samples"]["iterations"], r["samples"]["totals_ns"]
        self.assertEqual(len(it), len(tot), bid)
        self.assertGreaterEqual(len(it), 2, bid)
        self.assertLessEqual(len(it), r["settings"]["sample_size"], bid)
        for n in it:
            self.assertIsInstance(n, int, bid)
            self.assertGreater(n, 0, bid)
        for t in tot:
            self.assertGreater(t, 0, bid)
        for k in ("median", "mean", "slope"):
            self.assert_interval(r["estimates"][k], f"{bid} {k}")
        self.assertGreater(r["estimates"]["median"]["point"], 0, bid)
        for k in ("std_dev", "mad"):
            self.assertGreaterEqual(r["estimates"][k]["point"], 0, f"{bid} {k}")
        self.assertGreaterEqual(r["r2"], 0, bid)
        self.assertLessEqual(r["r2"], 1, bid)
        self.assertIn(r["sampling"], ("linear", "flat"), bid)
        self.assertIn(r["stop_reason"], ("precision", "time budget", "sample size"), bid)
        self.assertGreater(r["warm_up"]["iterations"], 0, bid)
        self.assertEqual(r["unit"], "ns", bid)
        # The median of per-iteration times lies within the per-sample range.
        per = sorted(t / n for t, n in zip(tot, it))
        self.assertGreaterEqual(r["estimates"]["median"]["point"], per[0] * (1 - 1e-9), bid)
        self.assertLessEqual(r["estimates"]["median"]["point"], per[-1] * (1 + 1e-9), bid)
        # The fastest sample is exactly the smallest per-iteration time.
        self.assertAlmostEqual(r["estimates"]["min"]["point"], per[0], delta=per[0] * 1e-12,
                               msg=bid)

    def no_temp_files(self, directory):
        stray = [f for f in os.listdir(directory) if ".tmp" in f]
        self.assertEqual(stray, [], f"temporary files left in {directory}")


class UsageTest(Case):
    """--help, --version and every kind of usage error."""

    def test_help_lists_options_and_exit_codes(self):
        for flag in ("--help", "-h"):
            p = fixture(flag)
            self.assert_exit(p, 0)
            self.assertEqual(p.stderr, "")
            for opt in ALL_OPTIONS:
                self.assertRegex(p.stdout, rf"(^|[\s,]){re.escape(opt)}\b", f"{opt} not in help")
            self.assertRegex(p.stdout, r"Exit codes:.*0 ok.*1 a regression.*2 usage.*3 a bench",
                             "exit-code table missing from --help")
            self.assertTrue(p.stdout.startswith("Usage: "), p.stdout[:80])

    def test_usage_names_the_program_as_invoked(self):
        """The usage line names the program by the basename of argv[0], whatever it is."""
        self.assertTrue(fixture("--help").stdout.startswith(
            f"Usage: {os.path.basename(FIXTURE)} [OPTIONS] [FILTER...]\n"))
        with tempfile.TemporaryDirectory() as tmp:
            link = os.path.join(tmp, "my-benchmarks")
            os.symlink(os.path.abspath(FIXTURE), link)
            p = run(link, "--help")
            self.assert_exit(p, 0)
            self.assertTrue(p.stdout.startswith("Usage: my-benchmarks [OPTIONS] [FILTER...]\n"),
                            p.stdout[:80])

    def test_messages_name_the_program_as_invoked(self):
        """Errors, warnings and the crash line begin with the program's name as invoked (a copy
        named myperf says `myperf: ...`), not "bench"."""
        with tempfile.TemporaryDirectory() as tmp:
            prog = e2e_helpers.copy_program(FIXTURE, os.path.join(tmp, "myperf"))
            p = run(prog, "--frob")
            self.assert_exit(p, 2)
            self.assertEqual(p.stderr, "myperf: unknown option '--frob' (try --help)\n")
            # A warning: the last run cannot be kept in a folder under a file.
            blocker = os.path.join(tmp, "file")
            with open(blocker, "w", encoding="utf-8") as f:
                f.write("not a folder\n")
            p = run(prog, *FAST, "--exact", "fix/a",
                    env=e2e_helpers.environ({"BENCH_LAST_DIR": os.path.join(blocker, "last")}))
            self.assert_exit(p, 0)
            self.assertRegex(p.stderr, r"(?m)^myperf: warning: the last run is not kept for "
                                       r"the next: ")
            self.assertNotRegex(p.stderr, r"(?m)^bench: ")
            # The crash handler's line, made before the benchmark ran.
            p = run(prog, *FAST, "--in-process", "--exact", "trouble/crash")
            self.assert_exit(p, 3)
            self.assertIn("myperf: benchmark 'trouble/crash' crashed with signal SIGSEGV",
                          p.stderr.splitlines())

    @unittest.skipIf(e2e_helpers.SANITIZED, "sanitizer build: --instructions is not available")
    @unittest.skipUnless(shutil.which("valgrind"), "needs valgrind (--instructions)")
    def test_worker_messages_carry_the_managers_name(self):
        """A worker's message begins with the name the user invoked, not the worker's own
        argv[0]: under --instructions' launcher a worker is started as the executable's path
        (here e2e_fixture's, invoked through the symbolic link myperf). A stand-in valgrind that
        runs the worker outside valgrind makes the worker refuse its job on stderr."""
        with tempfile.TemporaryDirectory() as tmp:
            link = os.path.join(tmp, "myperf")
            os.symlink(os.path.abspath(FIXTURE), link)
            e2e_helpers.write_script(os.path.join(tmp, "valgrind"),
                                     '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; done\n'
                                     'exec "$@"\n')
            env = e2e_helpers.environ({"PATH": tmp + os.pathsep + os.environ.get("PATH", "")})
            p = run(link, "--instructions", "--exact", "fix/a", env=env)
            # (A sanitizer build refuses --instructions before any worker starts.)
            if p.returncode == 2 and ("unavailable" in p.stderr or "Sanitizer" in p.stderr):
                self.skipTest("this build counts no instructions: " + p.stderr)
            self.assert_exit(p, 3)
            self.assertRegex(p.stderr, r"(?m)^myperf: --instructions: this worker process runs "
                                       r"outside valgrind")
            self.assertNotRegex(p.stderr, r"(?m)^(bench|e2e_fixture): ")

    def test_help_wins_over_filters(self):
        p = fixture("--help", "no-such-benchmark")
        self.assert_exit(p, 0)
        self.assertIn("Usage: ", p.stdout)

    def test_version(self):
        want = project_version()
        self.assertIsNotNone(want, "cannot read the project version from CMakeLists.txt")
        for flag in ("--version", "-V"):
            p = fixture(flag)
            self.assert_exit(p, 0)
            lines = p.stdout.splitlines()
            self.assertEqual(lines[0], f"bench (harness) {want}")
            # the second line names the optional layers and whether each is in this program: the
            # fixture links the core alone, so libpfm4 is either compiled out or not linked
            self.assertRegex(lines[1], r"^built with: perf_event counters: generic events only "
                                       r"\(libpfm4 (compiled out|not linked: the harness-counters "
                                       r"component)\), CUDA events: (compiled out|not linked)")
            self.assertIn("CPU identification:", lines[1])
            self.assertEqual(len(lines), 2)
            self.assertEqual(p.stderr, "")

    def test_unknown_option(self):
        for arg in ("--bogus", "--bogus=1", "-x", "--lis", "---list"):
            with self.subTest(arg=arg):
                self.assert_one_error_line(fixture(arg), f"'{arg}'", "unknown option")

    def test_flag_given_a_value(self):
        self.assert_one_error_line(fixture("--list=yes"), "--list", "takes no value")

    def test_missing_value(self):
        for opt in VALUE_OPTIONS:
            with self.subTest(opt=opt):
                self.assert_one_error_line(fixture("fix/a", opt), f"'{opt}'", "needs a value")

    def test_bad_values(self):
        cases = [
            ("--sample-size", "1"), ("--sample-size", "abc"), ("--sample-size", "100001"),
            ("--sample-size", "-5"), ("--sample-size", "10x"), ("--sample-size", ""),
            ("--confidence-level", "1.5"), ("--confidence-level", "0"), ("--confidence-level", "1"),
            ("--nresamples", "5"), ("--nresamples", "1e4"),
            ("--output-format", "xml"), ("--output-format", "JSON"),
            ("--color", "maybe"), ("--seed", "-1"), ("--seed", "4294967296"),
            ("--seed", "+3"), ("--warm-up-time", "-1"), ("--warm-up-time", "nan"),
            ("--warm-up-time", "3601"), ("--measurement-time", "0"),
            ("--measurement-time", "inf"), ("--target-precision", "1"),
            ("--target-precision", "0"), ("--target-precision", "offf"),
            ("--sampling", "random"), ("--json", ""), ("--rounds", "0"),
            ("--rounds", "1001"), ("--rounds", "two"),
        ]
        for opt, value in cases:
            for argv in ([opt, value], [f"{opt}={value}"]):
                with self.subTest(argv=argv):
                    self.assert_one_error_line(fixture(*argv, "fix/a"), opt, f"'{value}'")

    def test_good_values_accepted(self):
        p = fixture("--in-process", "--sample-size", "2", "--confidence-level", "0.5",
                    "--nresamples", "10",
                    "--seed", "4294967295", "--warm-up-time", "0", "--target-precision",
                    "off", "--sampling", "flat", "--color", "never", "--output-format=csv",
                    "--measurement-time=0.05", "--list", "fix/a$")
        self.assert_exit(p, 0)
        self.assertEqual(p.stdout, "fix/a\n")

    def test_invalid_regex(self):
        for bad in ("(", "[a", "fix/a{2,1}"):
            with self.subTest(filter=bad):
                self.assert_one_error_line(fixture("--list", bad), f"'{bad}'",
                                           "not a valid regular expression")

    def test_no_match(self):
        self.assert_one_error_line(fixture("no-such-benchmark"), "no benchmark matches")
        self.assert_one_error_line(fixture("--list", "nope1", "nope2"), "no benchmark matches")
        self.assert_one_error_line(fixture("--exact", "fix/a.*"), "no benchmark matches")

    def test_usage_error_runs_nothing(self):
        """An error anywhere on the line is found before any benchmark runs."""
        p = fixture(*FAST, "fix/counted", "--sample-size", "0")
        self.assert_one_error_line(p, "--sample-size", "'0'")
        self.assertEqual(counter_lines(p.stderr), {}, p.stderr)


class ListTest(Case):
    """--list and the selection filters."""

    def list_ids(self, *args):
        p = fixture("--list", *args)
        self.assert_exit(p, 0)
        self.assertEqual(p.stderr, "")
        self.assertTrue(p.stdout.endswith("\n"), repr(p.stdout))
        return p.stdout.splitlines()

    def test_list_all(self):
        ids = self.list_ids()
        self.assertEqual(ids, FIXTURE_IDS)
        self.assertEqual(ids, sorted(ids, key=id_key))

    def test_both_files_contribute(self):
        ids = self.list_ids()
        for from_first in ("fix/a", "fix/copy/8", "fix/batched"):
            self.assertIn(from_first, ids)
        for from_second in ("fix/b", "more/elements", "trouble/skip", "trouble/crash"):
            self.assertIn(from_second, ids)

    def test_params_sort_numerically(self):
        self.assertEqual(self.list_ids("copy"), ["fix/copy/8", "fix/copy/64", "fix/copy/1024"])

    def test_substring(self):
        self.assertEqual(self.list_ids("count"), ["fix/counted"])
        self.assertEqual(self.list_ids("ix/b"), ["fix/b", "fix/batched"])

    def test_regex_unanchored_and_anchored(self):
        self.assertEqual(self.list_ids("^fix.*/a$"), ["fix/a"])
        self.assertEqual(self.list_ids("^fix/(a|b)$"), ["fix/a", "fix/b"])
        self.assertEqual(self.list_ids("copy/[0-9]{2}$"), ["fix/copy/64"])
        self.assertEqual(self.list_ids("a"), [i for i in FIXTURE_IDS if "a" in i])

    def test_several_filters_are_ored_and_sorted(self):
        self.assertEqual(self.list_ids("elements", "^fix/a$"), ["fix/a", "more/elements"])
        self.assertEqual(self.list_ids("fix/a$", "fix/a$", "^fix/a"), ["fix/a", "fix/add"])

    def test_exact(self):
        self.assertEqual(self.list_ids("--exact", "fix/a"), ["fix/a"])
        self.assertEqual(self.list_ids("--exact", "more/elements", "fix/copy/64"),
                         ["fix/copy/64", "more/elements"])
        self.assertEqual(self.list_ids("fix/a", "--exact"), ["fix/a"])

    def test_double_dash_ends_options(self):
        p = fixture("--list", "--", "--exact")
        self.assert_one_error_line(p, "no benchmark matches")


class JsonOutputTest(Case):
    """One --output-format json run of every good fixture benchmark, checked in detail."""

    @classmethod
    def setUpClass(cls):
        cls.proc = fixture(*FAST, "--output-format", "json", GOOD_FILTER)
        cls.doc = None
        if cls.proc.returncode == 0:
            try:
                cls.doc = json.loads(cls.proc.stdout)
            except json.JSONDecodeError:
                pass

    def setUp(self):
        self.assert_exit(self.proc, 0)
        self.assertIsNotNone(self.doc, f"stdout is not JSON:\n{self.proc.stdout[:2000]}")
        self.by_id = e2e_helpers.by_id(self.doc)

    def test_top_level(self):
        self.assertEqual(self.doc["schema_version"], 1)
        self.assertEqual(self.doc["harness_version"], project_version())

    def test_one_entry_per_selected_id_in_order(self):
        self.assertEqual([r["id"] for r in self.doc["benchmarks"]], GOOD_IDS)

    def test_results_are_sane(self):
        for r in self.doc["benchmarks"]:
            with self.subTest(id=r["id"]):
                self.assert_ok_result(r)

    def test_command_line_settings_apply(self):
        for r in self.doc["benchmarks"]:
            self.assertEqual(r["settings"]["warm_up_time_s"], 0.02, r["id"])
            self.assertEqual(r["settings"]["measurement_time_s"], 0.1, r["id"])
            # Sampling honours the budget (10% slack and one sample of overshoot); the bound is
            # loose for a loaded machine but far below the 3 s default.
            self.assertLess(r["measurement_wall_s"], 1.0, r["id"])

    def test_default_processes(self):
        """Ten worker processes by default (fewer when the samples do not fit); every one
        contributes samples, labelled with its index."""
        for r in self.doc["benchmarks"]:
            self.assertGreaterEqual(r["processes"], 1, r["id"])
            self.assertLessEqual(r["processes"], 10, r["id"])
            self.assertEqual(r["rounds"], r["processes"], r["id"])
            self.assertEqual(sorted(set(r["samples"]["process"])),
                             list(range(r["processes"])), r["id"])
        for bid in ("fix/a", "fix/counted"):
            self.assertEqual(self.by_id[bid]["processes"], 10, bid)

    def test_throughput(self):
        for r in self.doc["benchmarks"]:
            thr = r["throughput"]
            if r["name"] == "copy":
                self.assertEqual(thr, {"bytes_per_iteration": r["param"]}, r["id"])
            elif r["id"] == "more/elements":
                self.assertEqual(thr, {"elements_per_iteration": 10})
            else:
                self.assertEqual(thr, {}, r["id"])

    def test_context(self):
        ctx = self.doc["context"]
        self.assertGreater(ctx["clock"]["cost_ns"], 0)
        self.assertGreater(ctx["clock"]["resolution_ns"], 0)
        self.assertGreaterEqual(ctx["clock"]["min_sample_ns"], ctx["clock"]["resolution_ns"])
        self.assertEqual(ctx["statistics"],
                         {"nresamples": 1000, "confidence_level": 0.95, "seed": 1})
        self.assertIs(ctx["quick"], False)
        self.assertGreaterEqual(ctx["ncpus"], 1)
        self.assertRegex(ctx["timestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

    def test_plain_loop_iteration_count(self):
        counts = counter_lines(self.proc.stderr)
        self.assertIn("fix/counted", counts, self.proc.stderr)
        r = self.by_id["fix/counted"]
        ran = counts["fix/counted"]["iterations"]
        self.assertEqual(ran, r["warm_up"]["iterations"] + sum(r["samples"]["iterations"]))
        # one call of the body per round
        self.assertEqual(counts["fix/counted"]["body_calls"], r["rounds"])

    def test_batched_counts(self):
        counts = counter_lines(self.proc.stderr)
        self.assertIn("fix/batched", counts, self.proc.stderr)
        c = counts["fix/batched"]
        r = self.by_id["fix/batched"]
        recorded = r["warm_up"]["iterations"] + sum(r["samples"]["iterations"])
        self.assertEqual(c["routine_calls"], recorded, c)
        self.assertEqual(c["setups"], c["routine_calls"], c)
        self.assertGreaterEqual(c["smallest_batch"], 1, c)
        self.assertLessEqual(c["largest_batch"], c["max_batch"], c)
        self.assertGreaterEqual(c["batches"] * c["max_batch"], c["routine_calls"], c)
        # A sample of k iterations is split into ceil(k / max_batch) batches, no more.
        samples = r["samples"]["iterations"]
        min_batches = sum(-(-k // c["max_batch"]) for k in samples)
        self.assertGreaterEqual(c["batches"], min_batches, c)

    def test_stderr_has_only_fixture_lines(self):
        for line in err_lines(self.proc.stderr):
            self.assertRegex(line, e2e_helpers.FIXTURE_COUNTER_LINE)

    def test_schema(self):
        try:
            import jsonschema  # pylint: disable=import-outside-toplevel
        except ImportError:
            self.skipTest("python module jsonschema is not installed (Debian: python3-jsonschema)")
        jsonschema.validate(self.doc, RESULTS_SCHEMA)
        # ... and the schema the documentation publishes (docs/results.schema.json)
        docs = os.path.join(os.path.dirname(os.environ["E2E_BENCHES_DIR"]), "docs",
                            "results.schema.json")
        with open(docs, encoding="utf-8") as f:
            jsonschema.validate(self.doc, json.load(f))


class JsonFileTest(Case):
    """--json FILE: same content as stdout, written atomically, errors that name the path."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="e2e-json-")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_file_equals_stdout_json(self):
        path = os.path.join(self.dir, "out.json")
        p = fixture(*FAST, "--output-format", "json", "--json", path, "fix/a$", "copy/64")
        self.assert_exit(p, 0)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.endswith("\n"))
        self.assertEqual(self.load_json(text), self.load_json(p.stdout))
        self.assertEqual([r["id"] for r in self.load_json(text)["benchmarks"]],
                         ["fix/a", "fix/copy/64"])
        self.assertEqual(os.listdir(self.dir), ["out.json"])
        self.assertEqual(os.stat(path).st_mode & 0o644, 0o644, "results file is not readable")

    def test_file_with_pretty_stdout(self):
        path = os.path.join(self.dir, "r.json")
        p = fixture(*FAST, "--json", path, "fix/b$")
        self.assert_exit(p, 0)
        self.assertIn("time:   [", p.stdout)
        with open(path, encoding="utf-8") as f:
            doc = self.load_json(f.read())
        self.assertEqual([r["id"] for r in doc["benchmarks"]], ["fix/b"])
        self.assert_ok_result(doc["benchmarks"][0])
        self.no_temp_files(self.dir)

    def test_relative_path(self):
        p = fixture(*FAST, "--json", "rel.json", "--output-format", "csv", "fix/a$", cwd=self.dir)
        self.assert_exit(p, 0)
        with open(os.path.join(self.dir, "rel.json"), encoding="utf-8") as f:
            self.assertEqual(self.load_json(f.read())["benchmarks"][0]["id"], "fix/a")
        self.assertEqual(os.listdir(self.dir), ["rel.json"])

    def test_replaces_existing_file(self):
        path = os.path.join(self.dir, "out.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write("old content that is not JSON\n")
        p = fixture(*FAST, "--json", path, "--output-format", "csv", "fix/a$")
        self.assert_exit(p, 0)
        with open(path, encoding="utf-8") as f:
            self.assertEqual(self.load_json(f.read())["benchmarks"][0]["id"], "fix/a")
        self.assertEqual(os.listdir(self.dir), ["out.json"])

    def test_missing_directory(self):
        keep = os.path.join(self.dir, "keep.json")
        with open(keep, "w", encoding="utf-8") as f:
            f.write('{"keep": true}\n')
        path = os.path.join(self.dir, "no-such-dir", "x.json")
        p = fixture(*FAST, "--json", path, "fix/a$")
        self.assert_exit(p, 2)
        self.assertIn("time:   [", p.stdout, "the benchmark should still run and report")
        lines = err_lines(p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith(e2e_helpers.prog_prefix(FIXTURE)), lines[0])
        self.assertIn(path, lines[0])
        self.assertEqual(os.listdir(self.dir), ["keep.json"])
        with open(keep, encoding="utf-8") as f:
            self.assertEqual(f.read(), '{"keep": true}\n')

    def test_failed_write_keeps_previous_file(self):
        """A write that fails half-way (file size limit) leaves the old file as it was."""
        path = os.path.join(self.dir, "results.json")
        old = '{"previous": "results"}\n'
        with open(path, "w", encoding="utf-8") as f:
            f.write(old)

        def limit_file_size():
            # Writes past 256 bytes fail with EFBIG instead of killing the process (SIGXFSZ).
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (256, 256))

        p = fixture(*FAST, "--json", path, "fix/a$", preexec_fn=limit_file_size)
        self.assert_exit(p, 2)
        lines = err_lines(p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith(e2e_helpers.prog_prefix(FIXTURE)), lines[0])
        self.assertIn(path, lines[0])
        with open(path, encoding="utf-8") as f:
            self.assertEqual(f.read(), old)
        self.assertEqual(os.listdir(self.dir), ["results.json"])

    def test_path_is_a_directory(self):
        target = os.path.join(self.dir, "adir")
        os.mkdir(target)
        p = fixture(*FAST, "--json", target, "fix/a$")
        self.assert_exit(p, 2)
        self.assertIn(target, p.stderr)
        self.assertTrue(os.path.isdir(target))
        self.assertEqual(os.listdir(target), [])
        self.no_temp_files(self.dir)

    def test_benchmark_failure_outranks_and_file_is_written(self):
        path = os.path.join(self.dir, "out.json")
        p = fixture(*FAST, "--json", path, "--exact", "trouble/fail", "fix/a")
        self.assert_exit(p, 3)
        with open(path, encoding="utf-8") as f:
            doc = self.load_json(f.read())
        self.assertEqual([(r["id"], r["status"]) for r in doc["benchmarks"]],
                         [("fix/a", "ok"), ("trouble/fail", "failed")])


class FormatTest(Case):
    """CSV, Markdown and pretty output, and colour."""

    SELECT = ["--exact", "fix/a", "fix/copy/64", "more/elements"]

    def test_csv(self):
        p = fixture(*FAST, "--output-format", "csv", *self.SELECT)
        self.assert_exit(p, 0)
        rows = list(csv.reader(io.StringIO(p.stdout)))
        header, body = rows[0], rows[1:]
        for col in ("id", "group", "name", "param", "status", "samples", "median_ns",
                    "median_lower_ns", "median_upper_ns", "slope_ns", "r2",
                    "bytes_per_iteration", "elements_per_iteration", "message"):
            self.assertIn(col, header)
        self.assertEqual(len(body), 3, p.stdout)
        for row in body:
            self.assertEqual(len(row), len(header), row)
        recs = [dict(zip(header, row)) for row in body]
        self.assertEqual([r["id"] for r in recs], ["fix/a", "fix/copy/64", "more/elements"])
        for r in recs:
            self.assertEqual(r["status"], "ok")
            self.assertEqual(r["message"], "")
            lo, mid, hi = (float(r[k]) for k in ("median_lower_ns", "median_ns",
                                                 "median_upper_ns"))
            self.assertTrue(0 < lo <= mid <= hi, r)
            self.assertTrue(0 <= float(r["r2"]) <= 1, r)
            self.assertGreaterEqual(int(r["samples"]), 2)
        self.assertEqual((recs[0]["param"], recs[0]["bytes_per_iteration"]), ("", "0"))
        self.assertEqual((recs[1]["param"], recs[1]["bytes_per_iteration"]), ("64", "64"))
        self.assertEqual(recs[2]["elements_per_iteration"], "10")

    def test_csv_failed_row_keeps_columns(self):
        p = fixture(*FAST, "--output-format", "csv", "--exact", "trouble/fail", "trouble/skip",
                    "fix/a")
        self.assert_exit(p, 3)
        rows = list(csv.reader(io.StringIO(p.stdout)))
        self.assertEqual(len(rows), 4, p.stdout)
        for row in rows:
            self.assertEqual(len(row), len(rows[0]), row)
        recs = {row[0]: dict(zip(rows[0], row)) for row in rows[1:]}
        self.assertEqual(recs["trouble/fail"]["status"], "failed")
        self.assertIn("deliberate failure", recs["trouble/fail"]["message"])
        self.assertEqual(recs["trouble/skip"]["status"], "skipped")
        self.assertIn("frobnicator", recs["trouble/skip"]["message"])
        self.assertEqual(recs["fix/a"]["status"], "ok")

    def test_markdown(self):
        p = fixture(*FAST, "--output-format", "markdown", *self.SELECT, "trouble/skip")
        self.assert_exit(p, 0)
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith("|")]
        self.assertEqual(len(lines), 2 + 4, p.stdout)
        self.assertRegex(lines[1], r"^\|(\s*:?-+:?\s*\|)+$")
        ncells = lines[0].count("|")
        for ln in lines:
            self.assertEqual(ln.replace("\\|", "").count("|"), ncells, ln)
        ids = [ln.split("|")[1].strip().replace("\\_", "_") for ln in lines[2:]]
        self.assertEqual(ids, ["fix/a", "fix/copy/64", "more/elements", "trouble/skip"])
        self.assertIn("B/s", lines[3])
        self.assertIn("elem/s", lines[4])
        self.assertIn("skipped", lines[5])
        self.assertIn("95% CI", lines[0])

    def test_pretty(self):
        p = fixture(*FAST, "--color", "never", *self.SELECT)
        self.assert_exit(p, 0)
        out = p.stdout
        self.assertEqual(len(re.findall(r"time:   \[", out)), 3, out)
        for bid in ("fix/a", "fix/copy/64", "more/elements"):
            self.assertRegex(out, rf"(?m)^{re.escape(bid)}\s+time:   \[\S+ \S+ \S+ \S+ \S+ \S+\]$")
        thrpt = re.findall(r"(?m)^\s+thrpt:  \[(.*)\]$", out)
        self.assertEqual(len(thrpt), 2, out)
        self.assertRegex(thrpt[0], r"B/s")
        self.assertRegex(thrpt[1], r"elem/s")
        self.assertIn("3 benchmarks: 3 measured, 0 skipped, 0 failed", out)

    def test_color_never_always(self):
        never = fixture(*FAST, "--color", "never", "fix/a$")
        always = fixture(*FAST, "--color", "always", "fix/a$")
        self.assert_exit(never, 0)
        self.assert_exit(always, 0)
        self.assertNotIn("\x1b", never.stdout)
        self.assertIn("\x1b[", always.stdout)
        self.assertEqual(re.sub(r"\x1b\[[0-9;]*m", "", always.stdout).count("time:   ["), 1)

    def test_color_auto(self):
        # Not a terminal: no colour.
        p = fixture(*FAST, "fix/a$", env=clean_env(TERM="xterm"))
        self.assert_exit(p, 0)
        self.assertNotIn("\x1b", p.stdout)
        # A terminal: colour, unless NO_COLOR is set or TERM is dumb.
        rc, out = run_on_tty(FIXTURE, *FAST, "fix/a$", env=clean_env(TERM="xterm"))
        self.assertEqual(rc, 0, out)
        self.assertIn(b"\x1b[", out, "auto on a terminal should colour")
        self.assertIn(b"time:", out)
        for extra in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
            env = clean_env(TERM="xterm")
            env.update(extra)
            rc, out = run_on_tty(FIXTURE, *FAST, "fix/a$", env=env)
            self.assertEqual(rc, 0, out)
            self.assertIn(b"time:", out)
            self.assertNotIn(b"\x1b", out, f"colour despite {extra}")
        rc, out = run_on_tty(FIXTURE, *FAST, "--color", "always", "fix/a$",
                             env=clean_env(NO_COLOR="1"))
        self.assertEqual(rc, 0, out)
        self.assertIn(b"\x1b[", out, "--color always should win over NO_COLOR")


    @unittest.skipUnless(os.path.exists("/dev/full"), "no /dev/full on this system")
    def test_stdout_write_error(self):
        """Output that cannot be written is an error, whatever the format."""
        runs = [["--output-format", fmt, "fix/a$"] for fmt in ("pretty", "json", "csv",
                                                                "markdown")]
        runs.append(["--list"])
        for args in runs:
            with self.subTest(args=args), open("/dev/full", "w", encoding="utf-8") as full:
                p = subprocess.run([FIXTURE, *FAST, *args], stdout=full, stderr=subprocess.PIPE,
                                   text=True, timeout=90, check=False)
                self.assertEqual(p.returncode, 2, f"{args}: exit {p.returncode}: {p.stderr}")
                lines = err_lines(p.stderr)
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertTrue(lines[0].startswith(e2e_helpers.prog_prefix(FIXTURE)), lines[0])
                self.assertIn("stdout", lines[0])


class StatusTest(Case):
    """Skipped, failed and crashing benchmarks, and misuse of the timed loop."""

    def test_skip(self):
        p = fixture(*FAST, "--output-format", "json", "--exact", "trouble/skip", "fix/a")
        self.assert_exit(p, 0)
        doc = self.load_json(p.stdout)
        good, skip = doc["benchmarks"]
        self.assertEqual((skip["id"], skip["status"]), ("trouble/skip", "skipped"))
        self.assertEqual(skip["message"], "needs a frobnicator (e2e skip reason 42)")
        self.assertNotIn("samples", skip)
        self.assert_ok_result(good)
        self.assertEqual(counter_lines(p.stderr).get("trouble/skip"),
                         {"iterations": 0, "body_calls": 1},
                         "a skipped benchmark's timed loop must not run")

    def test_skip_pretty(self):
        p = fixture(*FAST, "--exact", "trouble/skip")
        self.assert_exit(p, 0)
        self.assertRegex(p.stdout, r"(?m)^trouble/skip\s+skipped: needs a frobnicator")
        self.assertIn("1 benchmark: 0 measured, 1 skipped, 0 failed", p.stdout)

    def test_fail_others_still_run(self):
        p = fixture(*FAST, "--output-format", "json", "--exact", "trouble/skip", "trouble/fail",
                    "fix/b")
        self.assert_exit(p, 3)
        doc = self.load_json(p.stdout)
        self.assertEqual([(r["id"], r["status"]) for r in doc["benchmarks"]],
                         [("fix/b", "ok"), ("trouble/fail", "failed"),
                          ("trouble/skip", "skipped")])
        self.assert_ok_result(doc["benchmarks"][0])
        self.assertEqual(doc["benchmarks"][1]["message"], "deliberate failure: checksum 1 != 2")
        self.assertIn("iterations", counter_lines(p.stderr).get("trouble/skip", {}),
                      "the benchmark after the failing one did not run")
        errors = [ln for ln in err_lines(p.stderr)
                  if not e2e_helpers.FIXTURE_COUNTER_LINE.match(ln)]
        self.assertEqual(errors, [e2e_helpers.prog_prefix(FIXTURE) + "benchmark 'trouble/fail' "
                                  "failed: deliberate failure: checksum 1 != 2"])

    def test_fail_pretty(self):
        p = fixture(*FAST, "--exact", "trouble/fail", "fix/a")
        self.assert_exit(p, 3)
        self.assertRegex(p.stdout, r"(?m)^trouble/fail\s+FAILED: deliberate failure")
        self.assertIn("2 benchmarks: 1 measured, 0 skipped, 1 failed", p.stdout)

    def test_crash(self):
        p = fixture(*FAST, "--in-process", "--exact", "trouble/crash")
        self.assert_exit(p, 3)
        self.assertEqual(err_lines(p.stderr),
                         [e2e_helpers.prog_prefix(FIXTURE) +
                          "benchmark 'trouble/crash' crashed with signal SIGSEGV"])

    def test_crash_after_good_benchmark(self):
        """In one stretch (--rounds 1), results finished before the crash are already out when
        it happens."""
        p = fixture(*FAST, "--in-process", "--rounds", "1", "--exact", "fix/a", "trouble/crash")
        self.assert_exit(p, 3)
        self.assertRegex(p.stdout, r"(?m)^fix/a\s+time:   \[")
        self.assertEqual(err_lines(p.stderr),
                         [e2e_helpers.prog_prefix(FIXTURE) +
                          "benchmark 'trouble/crash' crashed with signal SIGSEGV"])

    def test_crash_in_rounds(self):
        """With rounds, a crash in the first round still names the benchmark and exits 3;
        results not yet final are not printed. (The precision stop is off: fix/a must still
        be waiting for its later rounds when the crash comes.)"""
        p = fixture(*FAST, "--in-process", "--rounds", "3", "--target-precision", "off",
                    "--exact", "fix/a", "trouble/crash")
        self.assert_exit(p, 3)
        self.assertNotRegex(p.stdout, r"(?m)^fix/a\s+time:")
        self.assertEqual(err_lines(p.stderr),
                         [e2e_helpers.prog_prefix(FIXTURE) +
                          "benchmark 'trouble/crash' crashed with signal SIGSEGV"])

    def test_abort_and_stack_overflow(self):
        for bid, sig in (("trouble/abort", "SIGABRT"), ("trouble/stack_overflow", "SIGSEGV")):
            with self.subTest(id=bid):
                p = fixture(*FAST, "--in-process", "--exact", bid)
                self.assert_exit(p, 3)
                self.assertEqual(err_lines(p.stderr),
                                 [f"{e2e_helpers.prog_prefix(FIXTURE)}benchmark '{bid}' "
                                  f"crashed with signal {sig}"])

    def test_body_without_timed_loop(self):
        p = fixture(*FAST, "--output-format", "json", "--exact", "trouble/no_iter")
        self.assert_exit(p, 3)
        lines = err_lines(p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertRegex(lines[0],
                         rf"^{re.escape(e2e_helpers.prog_prefix(FIXTURE))}benchmark "
                         r"'trouble/no_iter' failed: .*no timed loop")
        r = self.load_json(p.stdout)["benchmarks"][0]
        self.assertEqual(r["status"], "failed")
        self.assertIn("BENCH_ITER", r["message"])

    def test_timed_loop_twice(self):
        p = fixture(*FAST, "--exact", "trouble/iter_twice")
        self.assert_exit(p, 3)
        lines = err_lines(p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertRegex(lines[0],
                         rf"^{re.escape(e2e_helpers.prog_prefix(FIXTURE))}benchmark "
                         r"'trouble/iter_twice' failed: .*more than once")


class SettingsTest(Case):
    """Command-line settings reach the run and the reported context."""

    def json_run(self, *args):
        p = fixture(*FAST, "--output-format", "json", *args)
        self.assert_exit(p, 0)
        return self.load_json(p.stdout)

    def test_seed_reported(self):
        for _ in range(2):
            doc = self.json_run("--seed", "7", "fix/a$")
            self.assertEqual(doc["context"]["statistics"]["seed"], 7)
            self.assert_ok_result(doc["benchmarks"][0])

    def test_statistics_options_reported(self):
        doc = self.json_run("--nresamples", "500", "--confidence-level", "0.9", "fix/a$")
        self.assertEqual(doc["context"]["statistics"],
                         {"nresamples": 500, "confidence_level": 0.9, "seed": 1})

    def test_sample_size(self):
        doc = self.json_run("--in-process", "--sample-size", "5", "--target-precision", "off",
                            "fix/a$")
        r = doc["benchmarks"][0]
        self.assert_ok_result(r)
        self.assertEqual(r["settings"]["sample_size"], 5)
        self.assertLess(r["settings"]["target_precision"], 0)
        self.assertLessEqual(len(r["samples"]["iterations"]), 5)
        self.assertNotEqual(r["stop_reason"], "precision")

    def test_smallest_sample_size(self):
        r = self.json_run("--in-process", "--sample-size", "2", "--target-precision", "off",
                          "fix/a$")
        r = r["benchmarks"][0]
        self.assert_ok_result(r)
        self.assertEqual(len(r["samples"]["iterations"]), 2)
        self.assertEqual(r["stop_reason"], "sample size")

    def test_sampling_flat_and_linear(self):
        flat = self.json_run("--sampling", "flat", "fix/a$")["benchmarks"][0]
        self.assertEqual((flat["settings"]["sampling"], flat["sampling"]), ("flat", "flat"))
        self.assertEqual(len(set(flat["samples"]["iterations"])), 1, flat["samples"])
        lin = self.json_run("--in-process", "--sampling", "linear", "--rounds", "1",
                            "fix/a$")["benchmarks"][0]
        self.assertEqual((lin["settings"]["sampling"], lin["sampling"]), ("linear", "linear"))
        it = lin["samples"]["iterations"]
        self.assertEqual(it, [(k + 1) * it[0] for k in range(len(it))])

    def test_rounds_take_every_rth_sample_of_the_plan(self):
        """Round j takes the linear plan's samples j, j + R, j + 2R, ...: in the order taken,
        the first round's are 1, R + 1, 2R + 1, ... times the step."""
        r = self.json_run("--in-process", "--sampling", "linear", "--rounds", "4",
                          "--target-precision", "off", "fix/a$")["benchmarks"][0]
        self.assertEqual((r["settings"]["rounds"], r["rounds"]), (4, 4))
        it = r["samples"]["iterations"]
        d = it[0]
        mult = [n // d for n in it]
        self.assertEqual([n % d for n in it], [0] * len(it))
        self.assertEqual(len(set(mult)), len(mult), "a plan index was used twice")
        self.assertLessEqual(max(mult), r["settings"]["sample_size"])
        self.assertEqual(mult[:2], [1, 5])
        # a new round starts where the multiples fall back; each round's residue is its index
        starts = [0] + [i for i in range(1, len(mult)) if mult[i] < mult[i - 1]]
        self.assertEqual(len(starts), 4, mult)
        for j, (a, b) in enumerate(zip(starts, starts[1:] + [len(mult)])):
            self.assertEqual({(m - 1) % 4 for m in mult[a:b]}, {j}, mult)

    def test_quick_is_one_round(self):
        r = self.json_run("--in-process", "--quick", "fix/a$")["benchmarks"][0]
        self.assertEqual((r["settings"]["rounds"], r["rounds"]), (1, 1))
        r = self.json_run("--in-process", "--quick", "--rounds", "3", "fix/a$")["benchmarks"][0]
        self.assertEqual(r["settings"]["rounds"], 3, "the command line beats --quick's cap")

    def test_quick(self):
        doc = self.json_run("--quick", "fix/a$")
        self.assertIs(doc["context"]["quick"], True)
        s = doc["benchmarks"][0]["settings"]
        self.assertEqual(s["sample_size"], 50)
        self.assertEqual(s["target_precision"], 0.02)
        self.assertEqual(s["measurement_time_s"], 0.1, "command line beats --quick's cap")

    def test_group_settings_apply_without_flags(self):
        p = fixture("--output-format", "json", "--nresamples", "100", "fix/a$")
        self.assert_exit(p, 0)
        s = self.load_json(p.stdout)["benchmarks"][0]["settings"]
        self.assertEqual((s["warm_up_time_s"], s["measurement_time_s"]), (0.02, 0.1))


def declared_ids(benches_dir):
    """Every id the BENCH_FNs in benches_dir/*.c declare, parameters expanded."""
    ids = []
    for fname in sorted(os.listdir(benches_dir)):
        if not fname.endswith(".c"):
            continue
        with open(os.path.join(benches_dir, fname), encoding="utf-8") as f:
            src = f.read()
        src = re.sub(r"/\*.*?\*/|//[^\n]*", " ", src, flags=re.S)
        for m in re.finditer(r"^\s*BENCH_(?:CUDA_)?FN\s*\(\s*(\w+)\s*,\s*(\w+)", src, flags=re.M):
            depth, i = 1, src.index("(", m.start()) + 1
            start = i
            while depth:
                depth += {"(": 1, ")": -1}.get(src[i], 0)
                i += 1
            args = src[start:i - 1]
            pm = re.search(r"BENCH_PARAMS\s*\(([^)]*)\)", args)
            base = f"{m.group(1)}/{m.group(2)}"
            if pm:
                ids += [f"{base}/{int(v.strip(), 0)}" for v in pm.group(1).split(",")]
            else:
                ids.append(base)
    return ids


class ReferenceSuiteTest(Case):
    """The real bench program lists every BENCH_FN of benches/*.c and runs one quickly."""

    def test_list_matches_sources(self):
        want = sorted(declared_ids(BENCHES_DIR), key=id_key)
        self.assertGreater(len(want), 0, f"no BENCH_FN found in {BENCHES_DIR}")
        p = run(BENCH, "--list")
        self.assert_exit(p, 0)
        self.assertEqual(p.stdout.splitlines(), want)

    def test_quick_black_box_x64(self):
        p = run(BENCH, "--quick", "--output-format", "json", "--exact", "harness/black_box_x64")
        self.assert_exit(p, 0)
        doc = self.load_json(p.stdout)
        self.assertIs(doc["context"]["quick"], True)
        self.assertEqual([r["id"] for r in doc["benchmarks"]], ["harness/black_box_x64"])
        r = doc["benchmarks"][0]
        self.assert_ok_result(r)
        self.assertLessEqual(r["settings"]["measurement_time_s"], 0.5)

    def test_empty_body_said_optimised_away(self):
        """harness/empty: the compiler removes its loop in a release build, and then every
        output says the body was optimised away (under 0.1 ns per iteration) with the remedy; a
        build that keeps the loop (a sanitizer build) measures it, and none says so."""
        d = self.temp_dir("empty-")
        out = os.path.join(d, "r.json")
        p = run(BENCH, "--quick", "--color", "never", "--json", out, "--exact", "harness/empty")
        self.assert_exit(p, 0)
        (r,) = e2e_helpers.load_json(out)["benchmarks"]
        gone = r["estimates"]["median"]["point"] < 0.1
        note = "the body was optimised away"
        self.assertEqual("optimised_away" in r, gone, r)
        if gone:
            self.assertIn("bench_black_box", r["optimised_away"])
        self.assertEqual(note in p.stdout, gone, p.stdout)
        for fmt in ("csv", "markdown"):
            q = run(BENCH, "--quick", "--output-format", fmt, "--exact", "harness/empty")
            self.assert_exit(q, 0)
            med = float(next(csv.DictReader(io.StringIO(q.stdout)))["median_ns"]) \
                if fmt == "csv" else None
            if fmt == "csv":
                self.assertEqual(note in q.stdout, med < 0.1, q.stdout)
            elif gone:  # a second run of a removed loop is removed too
                self.assertIn(f"> **Note:** harness/empty: {note}", q.stdout)

    def test_version_matches_fixture(self):
        """The same library: the same version and core layers. The suite links every component
        this build has, the fixture none: where the suite has one, the fixture says not linked."""
        suite = run(BENCH, "--version").stdout.splitlines()
        fix = fixture("--version").stdout.splitlines()
        self.assertEqual(suite[0], fix[0])
        layers = [dict(part.split(": ", 1) for part in lines[1][len("built with: "):].split(", ")
                       if ": " in part) for lines in (suite, fix)]
        self.assertEqual(layers[0]["CPU identification"], layers[1]["CPU identification"])
        for layer, have in (("perf_event counters", "libpfm4"), ("CUDA events", "CUDA ")):
            self.assertNotIn("not linked", layers[0][layer])
            self.assertFalse(layers[1][layer].startswith(have), layers[1][layer])
            if layers[0][layer].startswith(have):
                self.assertIn("not linked", layers[1][layer])
            else:
                self.assertEqual(layers[0][layer], layers[1][layer])


def main():
    global FIXTURE, BENCH, BENCHES_DIR  # pylint: disable=global-statement
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--fixture", default=FIXTURE)
    ap.add_argument("--bench", default=BENCH)
    ap.add_argument("--benches-dir", default=BENCHES_DIR)
    opts, rest = ap.parse_known_args()
    FIXTURE, BENCH, BENCHES_DIR = opts.fixture, opts.bench, opts.benches_dir
    missing = [name for name, val in (("E2E_FIXTURE/--fixture", FIXTURE),
                                      ("E2E_BENCH/--bench", BENCH),
                                      ("E2E_BENCHES_DIR/--benches-dir", BENCHES_DIR)) if not val]
    if missing:
        sys.exit(f"test_cli.py: set {', '.join(missing)}")
    unittest.main(argv=[sys.argv[0], *rest])


if __name__ == "__main__":
    main()

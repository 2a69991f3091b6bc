#!/usr/bin/env python3
"""End-to-end tests of measurement in worker processes (manager.c, worker.c, proc.c; docs/measurement.md).

Each test runs the real e2e_fixture program (E2E_FIXTURE) as a user would and reads its exit
code, stderr and JSON: the per-process samples and their labels, containment of a benchmark that
crashes, calls exit() or hangs, selection independence (a benchmark that leaves heap state behind
must not change the one measured after it), interrupts (nothing half-done is written), and a
closed stdout (`bench | head`) that must not cost the files asked for.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import e2e_helpers

# The saves and comparisons here check what a run does, not how well the drift canaries read the
# machine: the canaries keep every step on 3 repetitions and the 64 MiB floor (0.5-3 s a run
# less; docs/comparison.md, "Drift canaries").
os.environ.setdefault("BENCH_CANARY_QUICK", "1")

FIXTURE = os.environ.get("E2E_FIXTURE", "")
FAST = ["--warm-up-time", "0.02", "--measurement-time", "0.1", "--nresamples", "1000"]


def run(*args, env=None, timeout=120):
    return e2e_helpers.run([FIXTURE, *args], timeout=timeout, env=env)


def tagged_env():
    """An environment with a tag of its own: every process a run starts inherits it, so
    tagged_pids finds them and no process of a test running beside this one."""
    tag = f"{os.getpid()}-{time.monotonic_ns()}"
    return dict(os.environ, E2E_RUN_TAG=tag), tag


def tagged_pids(tag):
    """Pids of running processes whose environment carries the tag."""
    needle = f"E2E_RUN_TAG={tag}".encode()
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    pids.append(int(d))
        except OSError:
            pass
    return pids


class IsolationCase(e2e_helpers.Case):
    def json_run(self, *args, code=0):
        p = run(*FAST, "--output-format", "json", *args)
        self.assert_exit(p, code)
        return e2e_helpers.by_id(json.loads(p.stdout)), p


class ProcessesTest(IsolationCase):
    """Samples come from P processes, each taking every P-th sample of one shared plan."""

    def test_default_is_ten_processes(self):
        b, _ = self.json_run("--exact", "fix/a")
        r = b["fix/a"]
        self.assertEqual(r["processes"], 10)
        self.assertEqual(sorted(set(r["samples"]["process"])), list(range(10)))
        self.assertEqual(len(r["samples"]["process"]), len(r["samples"]["iterations"]))
        self.assertIsInstance(r["process_cv"], float)
        self.assertGreaterEqual(r["process_cv"], 0)

    def test_each_process_records_its_cpu_and_layout(self):
        """Every worker says where it ran and which layout it drew: offsets within a page in
        16-byte steps, drawn anew per process (eight processes cannot all agree by chance);
        --fixed-layout keeps the program's own (no offsets)."""
        b, _ = self.json_run("--processes", "8", "--exact", "fix/a")
        info = b["fix/a"]["process_info"]
        self.assertEqual(len(info), 8)
        for x in info:
            self.assertTrue(x["random_layout"])
            self.assertGreaterEqual(x["cpu"], 0)
            self.assertGreater(x["page_faults"], 0)
            for key in ("stack_offset", "heap_offset", "env_padding"):
                self.assertTrue(0 <= x[key] < 4096 and x[key] % 16 == 0, (key, x[key]))
        for key in ("stack_offset", "heap_offset", "env_padding"):
            self.assertGreater(len({x[key] for x in info}), 1, key)
        b, _ = self.json_run("--processes", "3", "--fixed-layout", "--exact", "fix/a")
        for x in b["fix/a"]["process_info"]:
            self.assertFalse(x["random_layout"])
            self.assertEqual((x["stack_offset"], x["heap_offset"], x["env_padding"]), (0, 0, 0))

    def test_quick_is_three_processes(self):
        b, _ = self.json_run("--quick", "--exact", "fix/a")
        self.assertEqual(b["fix/a"]["processes"], 3)

    def test_each_process_takes_every_pth_sample_of_one_plan(self):
        b, _ = self.json_run("--processes", "4", "--sampling", "linear", "--exact", "fix/a")
        r = b["fix/a"]
        self.assertEqual(r["processes"], 4)
        it, proc = r["samples"]["iterations"], r["samples"]["process"]
        d = min(it)
        mult = [n // d for n in it]
        self.assertEqual([n % d for n in it], [0] * len(it), "one step d for all processes")
        self.assertEqual(len(set(mult)), len(mult), "a plan index was used twice")
        for m, j in zip(mult, proc):
            self.assertEqual((m - 1) % 4, j, f"sample {m}d came from process {j}")

    def test_interval_over_processes(self):
        """The median's interval is the t interval over the logs of the per-process medians."""
        b, _ = self.json_run("--processes", "5", "--exact", "fix/a")
        r = b["fix/a"]
        import math
        import statistics
        per = {}
        for n, t, j in zip(r["samples"]["iterations"], r["samples"]["totals_ns"],
                           r["samples"]["process"]):
            per.setdefault(j, []).append(t / n)
        logs = [math.log(statistics.median(v)) for _, v in sorted(per.items())]
        mean, sd = statistics.mean(logs), statistics.stdev(logs)
        t4 = 2.7764451051977987  # Student t, 0.975 quantile, 4 degrees of freedom
        est = r["estimates"]["median"]
        self.assertAlmostEqual(est["point"], math.exp(mean), delta=1e-9 * est["point"])
        self.assertAlmostEqual(est["lower"], math.exp(mean - t4 * sd / math.sqrt(5)),
                               delta=1e-6 * est["point"])
        self.assertAlmostEqual(est["upper"], math.exp(mean + t4 * sd / math.sqrt(5)),
                               delta=1e-6 * est["point"])
        cv = statistics.stdev([math.exp(x) for x in logs]) / statistics.mean(
            [math.exp(x) for x in logs])
        self.assertAlmostEqual(r["process_cv"], cv, delta=1e-9)

    def test_later_processes_discard_one_sample(self):
        """A later process re-warms with one discarded sample of the plan's shortest size and
        no more, whatever the warm-up time (more bought no precision: docs/measurement.md,
        "Worker processes"); process 0 still warms up for its share of it."""
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "t.json")
            self.json_run("--processes", "4", "--warm-up-time", "0.4", "--trace", trace,
                          "--exact", "fix/a")
            with open(trace) as f:
                events = json.load(f)["traceEvents"]
        rewarm, warm = {}, {}
        for e in events:
            if e.get("ph") != "X":
                continue
            n = e.get("args", {}).get("samples_merged", 1)
            if e["name"] in ("re-warm-up sample", "re-warm-up samples"):
                rewarm[e["pid"]] = rewarm.get(e["pid"], 0) + n
            elif e["name"] in ("warm-up sample", "warm-up samples"):
                warm[e["pid"]] = warm.get(e["pid"], 0) + n
        self.assertEqual(sorted(rewarm.values()), [1, 1, 1], rewarm)
        self.assertEqual(len(warm), 1, warm)
        self.assertGreater(sum(warm.values()), 1, warm)

    def test_in_process_has_no_processes(self):
        b, _ = self.json_run("--in-process", "--exact", "fix/a")
        self.assertEqual(b["fix/a"]["processes"], 0)
        self.assertNotIn("process", b["fix/a"]["samples"])

    def test_pretty_names_the_processes(self):
        p = run(*FAST, "--processes", "3", "--exact", "fix/a")
        self.assert_exit(p, 0)
        self.assertIn("in 3 processes", p.stdout)

    def test_bad_combinations(self):
        for argv in (["--processes", "3", "--in-process"], ["--rounds", "3"],
                     ["--target-precision", "0.05"], ["--processes", "0"],
                     ["--timeout", "0"], ["--timeout", "-1"], ["--processes", "1001"]):
            with self.subTest(argv=argv):
                p = run(*argv, "fix/a")
                self.assert_exit(p, 2)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_job_variable_is_not_for_users(self):
        env = dict(os.environ, BENCH_WORKER_JOB="0 1 0 0 0 1 fix/a")
        p = run("fix/a", env=env)
        self.assert_exit(p, 2)
        self.assertIn("BENCH_WORKER_JOB", p.stderr)


class ContainmentTest(IsolationCase):
    """A crash, exit() or hang ends its worker only: the others still run and report."""

    def test_crash(self):
        b, p = self.json_run("--exact", "trouble/crash", "fix/a", code=3)
        self.assertEqual(b["fix/a"]["status"], "ok")
        c = b["trouble/crash"]
        self.assertEqual(c["status"], "failed")
        self.assertNotIn("samples", c)
        if e2e_helpers.SANITIZED:  # AddressSanitizer catches it, reports, and exits 1
            self.assertEqual(c["failure"], {"kind": "exited", "exit_code": 1})
            return
        self.assertEqual(c["failure"], {"kind": "crashed", "signal": signal.SIGSEGV,
                                        "signal_name": "SIGSEGV"})
        self.assertIn(e2e_helpers.prog_prefix(FIXTURE) + "benchmark 'trouble/crash' failed: "
                      "crashed with signal 11 (SIGSEGV)", p.stderr)

    def test_abort(self):
        b, _ = self.json_run("--exact", "trouble/abort", "fix/a", code=3)
        if not e2e_helpers.SANITIZED:
            self.assertEqual(b["trouble/abort"]["failure"]["signal_name"], "SIGABRT")
        self.assertEqual(b["trouble/abort"]["status"], "failed")
        self.assertEqual(b["fix/a"]["status"], "ok")

    def test_exit_inside_a_benchmark(self):
        b, p = self.json_run("--exact", "trouble/exits", "fix/a", code=3)
        self.assertEqual(b["fix/a"]["status"], "ok")
        e = b["trouble/exits"]
        self.assertEqual((e["status"], e["failure"]), ("failed", {"kind": "exited",
                                                                   "exit_code": 0}))
        self.assertIn("exited with code 0 before the benchmark finished", e["message"])

    def test_timeout(self):
        start = time.monotonic()
        b, p = self.json_run("--timeout", "1", "--exact", "trouble/hang", "fix/a", code=3)
        self.assertLess(time.monotonic() - start, 60)
        self.assertEqual(b["trouble/hang"]["failure"], {"kind": "timed out"})
        self.assertIn("timed out after 1 s", b["trouble/hang"]["message"])
        self.assertEqual(b["fix/a"]["status"], "ok")

    def test_failed_benchmark_is_not_saved(self):
        with tempfile.TemporaryDirectory() as d:
            p = run(*FAST, "--baseline-dir", d, "--save-baseline", "x", "--exact",
                    "trouble/crash", "fix/a")
            self.assert_exit(p, 3)
            with open(os.path.join(d, "x.json"), encoding="utf-8") as f:
                ids = [e["id"] for e in json.load(f)["benchmarks"]]
            self.assertEqual(ids, ["fix/a"])

    def test_pretty_shows_the_cause(self):
        p = run(*FAST, "--exact", "trouble/exits")
        self.assert_exit(p, 3)
        self.assertRegex(p.stdout, r"(?m)^trouble/exits\s+FAILED: exited with code 0")


@unittest.skipIf(e2e_helpers.SANITIZED,
                 "AddressSanitizer replaces glibc's allocator and its thresholds")
class SelectionTest(IsolationCase):
    """heap/a_leaves_state raises glibc's trim threshold for the rest of its process; measured in
    one process, heap/b_sensitive then stops faulting its pages in (fixture_more.c)."""

    def faults(self, *args):
        b, p = self.json_run("--perf-events", "page-faults", *args)
        r = b["heap/b_sensitive"]
        if "page-faults" not in r.get("metrics", {}):
            self.skipTest(f"page-faults cannot be counted here: {p.stderr.strip()}")
        return r["metrics"]["page-faults"]["per_iteration"]["median"]["point"], r

    def test_selection_does_not_change_a_result(self):
        alone, r_alone = self.faults("--exact", "heap/b_sensitive")
        after, r_after = self.faults("--exact", "heap/a_leaves_state", "heap/b_sensitive")
        # Its own 1024 pages (4 MiB) are faulted in every iteration, whoever ran before: a
        # count, not a time, so that a loaded machine cannot fail it (the two runs' times once
        # differed 4x at load 8; in one process the heap state changes them over 100x).
        self.assertGreater(alone, 900)
        self.assertLess(abs(after - alone), 0.05 * alone, (alone, after))
        self.assertEqual((r_alone["status"], r_after["status"]), ("ok", "ok"))

    def test_in_process_shows_the_effect(self):
        """The fixture does what it says: in one process the earlier benchmark changes it."""
        alone, _ = self.faults("--in-process", "--exact", "heap/b_sensitive")
        after, _ = self.faults("--in-process", "--exact", "heap/a_leaves_state",
                               "heap/b_sensitive")
        self.assertGreater(alone, 900)
        self.assertLess(after, 0.1 * alone)


class InterruptTest(IsolationCase):
    """SIGINT or SIGTERM stops the workers and writes nothing half-done."""

    def interrupt(self, sig):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            env, tag = tagged_env()
            p = subprocess.Popen([FIXTURE, "--warm-up-time", "0.05", "--measurement-time", "2",
                                  "--baseline-dir", d, "--save-baseline", "x", "--json", out,
                                  "fix/"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=env)
            time.sleep(1.5)
            self.assertIsNone(p.poll(), "the run ended before it could be interrupted")
            p.send_signal(sig)
            stdout, stderr = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 128 + sig, stderr)
            self.assertIn("interrupted", stderr)
            self.assertFalse(os.path.exists(out), "a results file was written")
            self.assertFalse(os.path.exists(os.path.join(d, "x.json")), "a baseline was saved")
            self.assertEqual(os.listdir(d), [], "something was left behind")
            time.sleep(0.2)
            self.assertEqual(tagged_pids(tag), [], "a worker outlived the run")

    def test_sigint(self):
        self.interrupt(signal.SIGINT)

    def test_calibration_leaves_no_orphan(self):
        """--calibrate runs the suite in worker processes before the run: SIGTERM stops them."""
        with tempfile.TemporaryDirectory() as d:
            env, tag = tagged_env()
            p = subprocess.Popen([FIXTURE, "--warm-up-time", "0.05", "--measurement-time", "1",
                                  "--baseline-dir", d, "--calibrate", "3", "--save-baseline",
                                  "x", "fix/"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=env)
            time.sleep(1.5)
            self.assertIsNone(p.poll(), "the run ended before it could be interrupted")
            p.send_signal(signal.SIGTERM)
            _, stderr = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 128 + signal.SIGTERM, stderr)
            time.sleep(0.2)
            self.assertEqual(tagged_pids(tag), [], "a calibration run or worker outlived the run")
            self.assertFalse(os.path.exists(os.path.join(d, "x.json")))

    def test_sigterm(self):
        self.interrupt(signal.SIGTERM)


class CalibrationArgsTest(IsolationCase):
    def test_filters_after_double_dash(self):
        """`--calibrate` with FILTERs after `--`: the calibration runs take the same FILTERs."""
        with tempfile.TemporaryDirectory() as d:
            p = run(*FAST, "--processes", "2", "--baseline-dir", d, "--calibrate", "2",
                    "--save-baseline", "x", "--", "fix/a$")
            self.assert_exit(p, 0)
            with open(os.path.join(d, "x.json"), encoding="utf-8") as f:
                (entry,) = json.load(f)["benchmarks"]
            self.assertEqual(entry["id"], "fix/a")
            self.assertEqual(entry["noise"]["runs"], 2)

    def test_in_process(self):
        """--in-process measures the run in this process; its calibration runs are still
        separate processes, and their medians count."""
        with tempfile.TemporaryDirectory() as d:
            p = run(*FAST, "--in-process", "--baseline-dir", d, "--calibrate", "3",
                    "--save-baseline", "x", "--exact", "fix/a")
            self.assert_exit(p, 0)
            self.assertIn("calibration run 2 of 3 (worker processes)", p.stderr)
            self.assertIn("calibration run 3 of 3 (this run)", p.stderr)
            with open(os.path.join(d, "x.json"), encoding="utf-8") as f:
                (entry,) = json.load(f)["benchmarks"]
            self.assertEqual(entry["noise"]["runs"], 3)
            self.assertGreater(entry["noise"]["log_median_sd"], 0)

    def test_failing_benchmark_ends_calibration(self):
        """A benchmark that fails in a calibration run ends the run with exit 3, named; nothing
        is saved."""
        with tempfile.TemporaryDirectory() as d:
            p = run(*FAST, "--baseline-dir", d, "--calibrate", "2", "--save-baseline", "x",
                    "--exact", "fix/a", "trouble/crash")
            self.assert_exit(p, 3)
            # (how it failed: a crash, or under a sanitizer its report and exit code 1)
            self.assertIn("calibration run 1: benchmark 'trouble/crash' failed: ", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "x.json")))


class ClosedStdoutTest(IsolationCase):
    def test_head_does_not_lose_files(self):
        """`bench | head -1`: stdout closes early; the JSON and baseline asked for are written."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            cmd = (f"'{FIXTURE}' --warm-up-time 0.02 --measurement-time 0.1 --baseline-dir "
                   f"'{d}' --save-baseline x --json '{out}' --exact fix/a fix/b fix/add | head -1")
            e2e_helpers.run(["bash", "-c", cmd], timeout=120, text=False)
            for path in (out, os.path.join(d, "x.json")):
                with open(path, encoding="utf-8") as f:
                    ids = sorted(b["id"] for b in json.load(f)["benchmarks"])
                self.assertEqual(ids, ["fix/a", "fix/add", "fix/b"], path)


def run_on_pty(args, timeout=120):
    """Runs the fixture with stderr (and stdin) on a pseudo-terminal and stdout into a pipe, as
    `bench > file` in a terminal; returns (exit code, what the terminal got, stdout)."""
    import pty
    import select
    master, slave = pty.openpty()
    p = subprocess.Popen([FIXTURE, *args], stdin=slave, stderr=slave, stdout=subprocess.PIPE)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's last writer is gone
                break
            if not chunk:
                break
            seen += chunk
        elif p.poll() is not None:
            break
    out = p.stdout.read()
    p.wait(timeout=10)
    os.close(master)
    return p.returncode, seen.decode(errors="replace"), out.decode(errors="replace")


class ProgressTest(IsolationCase):
    """A run longer than a few seconds shows "benchmark i of n, process j of P, ~T s left" on a
    terminal, rewritten in place and cleared at the end; into a pipe it writes none, and neither
    does a machine format. So does a paired comparison (--ab)."""

    # Four benchmarks of ~1 s in 3 processes: expected ~4 s, past the 3 s the line waits for.
    ARGS = ["--warm-up-time", "0.02", "--measurement-time", "0.9", "--processes", "3",
            "--nresamples", "1000", "^fix/(a|add|copy/8|copy/64)$"]

    def test_terminal_sees_the_line(self):
        code, term, out = run_on_pty(self.ARGS)
        self.assertEqual(code, 0, term)
        self.assertRegex(term, r"\rbenchmark [1-4] of 4, process [1-3] of 3, ~\d+ s left\x1b\[K")
        # cleared at the end: the last progress line is followed by an erased line
        last = term.rindex(" s left")
        self.assertIn("\r\x1b[K", term[last:])
        self.assertIn("fix/copy/64", out)  # the report went to stdout, untouched
        self.assertNotIn("s left", out)

    def test_pipe_and_machine_formats_see_none(self):
        p = run(*self.ARGS)
        self.assert_exit(p, 0)
        self.assertNotIn("s left", p.stderr)
        self.assertNotIn("\r", p.stderr)
        code, term, out = run_on_pty(["--output-format", "json", *self.ARGS])
        self.assertEqual(code, 0, term)
        self.assertNotIn("s left", term)
        json.loads(out)

    def test_ab_shows_it_too(self):
        # Two benchmarks of 1.6 s each: a budget of 3.2 s.
        code, term, _ = run_on_pty(["--ab", FIXTURE, "--ab-time", "1.6", "^fix/(a|add)$"])
        self.assertIn(code, (0, 1), term)
        self.assertRegex(term, r"\rbenchmark [12] of 2, pair \d+, [12] undecided, ~\d+ s left")


if __name__ == "__main__":
    if not FIXTURE:
        sys.exit("E2E_FIXTURE is not set (ctest sets it)")
    unittest.main()

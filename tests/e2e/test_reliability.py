#!/usr/bin/env python3
"""End-to-end tests of what a run does when its surroundings misbehave (docs/comparison.md#threat-
model, docs/cli.md): a baseline directory written by someone else must never get its code run
(a replaced snapshot, a symbolic link, a file swapped after the check, a script that speaks the
worker protocol); a baseline merged from two programs is compared entry by entry; a save never
writes a file the loader refuses; every child is under a deadline; a signal after the last
worker still stops the run; and the smaller cases: a file-size limit during the snapshot copy,
stale temporary files, a stray BENCH_WORKER_JOB, filters and numbers that would hang or mislead;
and a body whose first call is cold, planned from its warm iterations.

E2E_RELIABILITY is the fixture program (fixture_reliability.c): s/work is N% slower in a copy
whose file ends with "E2ESLOW<N>\\n", and never finishes its setup in a copy ending with
"E2EHANG\\n" while E2E_HANG_SETUP is set. Each test uses its own baseline directory and its own
key directory (XDG_CONFIG_HOME). The hashes a forged baseline carries are computed in the format
the baseline itself uses, so that the same tests show what older versions did.
"""
import hashlib
import json
import os
import resource
import shutil
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

FIXTURE = os.environ.get("E2E_RELIABILITY", "")
FIXTURES_DIR = os.environ.get("E2E_FIXTURES_DIR", "")
FAST = ["--warm-up-time", "0.02", "--measurement-time", "0.2", "--nresamples", "500",
        "--processes", "5"]
# Where no verdict has to be right, only a suspect to exist: shorter.
LIGHT = ["--warm-up-time", "0.02", "--measurement-time", "0.1", "--nresamples", "200",
         "--processes", "2"]


def program_hash(path, like):
    """The hash of a file, in the format of `like` (an existing hash)."""
    with open(path, "rb") as f:
        data = f.read()
    if like.startswith("fnv1a64:"):
        h = 0xcbf29ce484222325
        for byte in data:
            h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
        return f"fnv1a64:{h:016x}"
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Case(e2e_helpers.Case):
    def setUp(self):
        self.dir = self.temp_dir("bench-e2e-rel-")
        self.base = os.path.join(self.dir, "baselines")
        self.env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(self.dir, "config"))
        for var in ("E2E_HANG_SETUP", "E2E_BACKGROUND_SLEEP", "E2E_TERM_MANAGER",
                    "BENCH_WORKER_JOB", "BENCH_WORKER_PARENT"):
            self.env.pop(var, None)

    def copy(self, name, append=b""):
        return e2e_helpers.copy_program(FIXTURE, os.path.join(self.dir, name), append)

    def run_prog(self, prog, *args, env=None, timeout=120, **kw):
        return e2e_helpers.run([prog, "--baseline-dir", self.base, *args], timeout=timeout,
                               env=dict(self.env, **(env or {})), **kw)

    def save(self, prog, name, *filters, extra=(), fast=FAST):
        p = self.run_prog(prog, *fast, *extra, "--save-baseline", name, *filters)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def json_path(self, name):
        return os.path.join(self.base, name + ".json")

    def load(self, name):
        return e2e_helpers.load_json(self.json_path(name))

    def store(self, name, doc):
        with open(self.json_path(name), "w", encoding="utf-8") as f:
            json.dump(doc, f)

    def compare(self, prog, name, *args, env=None, timeout=120, fast=FAST):
        out = os.path.join(self.dir, "r.json")
        if os.path.exists(out):
            os.unlink(out)
        p = self.run_prog(prog, *fast, "--baseline", name, "--json", out, *args, env=env,
                          timeout=timeout)
        doc = None
        if os.path.exists(out):
            doc = e2e_helpers.by_id(e2e_helpers.load_json(out))
        return p, doc


class SnapshotTrustTest(Case):
    """A snapshot runs only when it is provably the program this user's harness saved."""

    @classmethod
    def setUpClass(cls):
        """One saved baseline (and the key that signed it) that every test copies."""
        cls.template = tempfile.mkdtemp(prefix="bench-e2e-rel-saved-")
        fast = e2e_helpers.copy_program(FIXTURE, os.path.join(cls.template, "fast"))
        env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(cls.template, "config"))
        p = e2e_helpers.run([fast, "--baseline-dir", os.path.join(cls.template, "baselines"),
                             *FAST, "--save-baseline", "m", "^s/work$"], timeout=120, env=env)
        if p.returncode != 0:
            raise RuntimeError(p.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.template, True)

    def setUp(self):
        super().setUp()
        self.marker = os.path.join(self.dir, "ran")
        # A change as clear as the ten times slower program's is settled by the saved numbers on
        # a still machine, without the snapshot these tests are about: confirm it all the same.
        self.env["BENCH_CONFIRM_ALL"] = "1"
        shutil.copytree(os.path.join(self.template, "baselines"), self.base)
        if os.path.isdir(os.path.join(self.template, "config")):
            shutil.copytree(os.path.join(self.template, "config"),
                            os.path.join(self.dir, "config"))
        # Ten times as slow: a verdict on the saved numbers alone must stay "regressed" however
        # much the machine drifts between the save and the comparison (the drift guard allows
        # the canaries' largest drift; at -j2 under a sanitizer one canary measured 92% slower).
        self.slow = self.copy("slow", b"E2ESLOW900\n")

    def script(self, name, body):
        return e2e_helpers.write_script(os.path.join(self.dir, name), body)

    def forge(self, src, link=False):
        """Puts src where the snapshot is (or a symbolic link to it) and edits every hash the
        baseline records to src's, as anyone who can write the directory can."""
        snap = os.path.join(self.base, "m.program")
        os.unlink(snap)
        if link:
            os.symlink(src, snap)
        else:
            e2e_helpers.copy_program(src, snap)
        doc = self.load("m")
        h = program_hash(src, doc["context"]["program"]["hash"])
        doc["context"]["program"]["hash"] = h
        for entry in doc["benchmarks"]:
            if "program" in entry:
                entry["program"]["hash"] = h
        self.store("m", doc)

    def assert_not_run(self, p):
        self.assertFalse(os.path.exists(self.marker), "the replaced snapshot ran:\n" + p.stderr)
        self.assertNotIn(e2e_helpers.prog_prefix(p.args[0]) + "confirmed", p.stderr)

    def test_a_replaced_by_a_script(self):
        self.forge(self.script("evil.sh", f"#!/bin/sh\ntouch '{self.marker}'\n"))
        p, doc = self.compare(self.slow, "m", "--fail-on-regression", "^s/work$")
        self.assert_not_run(p)
        self.assertIn("is not run", p.stderr)
        self.assertEqual(doc["s/work"]["change"]["settled_by"], "saved numbers")
        self.assertEqual(p.returncode, 1, p.stderr)

    def test_b_symbolic_link(self):
        self.forge(self.script("evil.sh", f"#!/bin/sh\ntouch '{self.marker}'\n"), link=True)
        p, _ = self.compare(self.slow, "m", "^s/work$", fast=LIGHT)
        self.assert_not_run(p)
        # Even when the signature is waived, a symbolic link is never followed.
        p, _ = self.compare(self.slow, "m", "--trust-snapshots", "^s/work$", fast=LIGHT)
        self.assert_not_run(p)
        self.assertIn("symbolic link", p.stderr)

    def test_c_swapped_after_the_check(self):
        """The real snapshot and baseline; the file is replaced while the confirmation runs:
        what runs is the copy that was checked, never the path read again."""
        evil = self.script("evil.sh", f"#!/bin/sh\ntouch '{self.marker}'\nsleep 1\n")
        proc = subprocess.Popen(
            [self.slow, "--baseline-dir", self.base, *LIGHT, "--baseline", "m",
             "--confirm-time", "1.5", "^s/work$"], stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, env=self.env)
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if e2e_helpers.prog_prefix(self.slow) + "confirming" in line:
                tmp = e2e_helpers.copy_program(evil, os.path.join(self.base, ".swap"))
                os.rename(tmp, os.path.join(self.base, "m.program"))
                break
        rest = proc.communicate(timeout=120)[1]
        stderr = "".join(seen) + rest
        self.assertTrue(any(e2e_helpers.prog_prefix(self.slow) + "confirming" in line
                            for line in seen), stderr)
        self.assertFalse(os.path.exists(self.marker), "the swapped file ran:\n" + stderr)
        self.assertIn(e2e_helpers.prog_prefix(self.slow) + "confirmed s/work", stderr)

    def test_d_script_speaking_the_worker_protocol(self):
        """A fake old build that answers every sample with a huge time would turn a 10x
        regression into an improvement: it must not run, and the gate must fail."""
        fake = self.script("fake.sh", "#!/bin/sh\n"
                           f"touch '{self.marker}'\n"
                           "echo READY\n"
                           "while read cmd n; do\n"
                           "  case \"$cmd\" in\n"
                           "    R) echo 'T 100000000000000' ;;\n"
                           "    *) echo 'END ok '; exit 0 ;;\n"
                           "  esac\n"
                           "done\n")
        self.forge(fake)
        p, doc = self.compare(self.slow, "m", "--fail-on-regression", "^s/work$")
        self.assert_not_run(p)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(doc["s/work"]["change"]["verdict"], "regressed")
        # Even with --trust-snapshots: only an ELF program this harness saved is ever run.
        p, doc = self.compare(self.slow, "m", "--fail-on-regression", "--trust-snapshots",
                              "^s/work$")
        self.assert_not_run(p)
        self.assertIn("not an ELF executable", p.stderr)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)

    def test_another_users_key_and_trust_snapshots(self):
        """A baseline signed with another key (a cache from another machine) is not run, unless
        --trust-snapshots says its writer is trusted (the checks of the file still apply:
        test_trust.c)."""
        other = {"XDG_CONFIG_HOME": os.path.join(self.dir, "other-config")}
        os.makedirs(os.path.join(other["XDG_CONFIG_HOME"], "harness"), mode=0o700)
        key = os.path.join(other["XDG_CONFIG_HOME"], "harness", "key")
        with open(os.open(key, os.O_WRONLY | os.O_CREAT, 0o600), "w", encoding="ascii") as f:
            f.write("ab" * 32 + "\n")
        p, doc = self.compare(self.slow, "m", "--confirm-time", "1", "^s/work$", env=other,
                              fast=LIGHT)
        self.assertIn("does not match this user's key", p.stderr)
        self.assertIn("--trust-snapshots", p.stderr)
        self.assertEqual(doc["s/work"]["change"]["settled_by"], "saved numbers")
        p, doc = self.compare(self.slow, "m", "--confirm-time", "1", "--trust-snapshots",
                              "^s/work$", env=other, fast=LIGHT)
        self.assertIn(e2e_helpers.prog_prefix(self.slow) + "confirmed s/work", p.stderr)
        self.assertEqual(doc["s/work"]["change"]["settled_by"], "interleaved run")


class MixedProgramTest(Case):
    """A baseline merged from saves of two programs: each entry is settled by its own program."""

    def test_update_by_another_build_is_not_the_same_program(self):
        fast, slow = self.copy("fast"), self.copy("slow", b"E2ESLOW900\n")
        self.save(fast, "m", "^s/")
        self.save(slow, "m", "^s/work2$")
        p, res = self.compare(slow, "m", "--fail-on-regression", "^s/")
        work = res["s/work"]["change"]
        self.assertEqual((work["verdict"], work["settled_by"]), ("regressed", "saved numbers"),
                         p.stderr)
        self.assertGreater(work["ratio"], 2.0)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("mixes programs: s/work was measured by another program", p.stderr)
        # The entry the slow build measured is settled by the rule of the same program.
        self.assertNotEqual(res["s/work2"]["change"]["verdict"], "regressed")
        hashes = {b["id"]: b["program"]["hash"] for b in self.load("m")["benchmarks"]}
        self.assertNotEqual(hashes["s/work"], hashes["s/work2"])


class SaveLimitTest(Case):
    """A save that would grow a baseline past what the loader reads is refused, and the old
    file is kept as it was."""

    def test_save_past_the_size_limit_is_refused(self):
        """A baseline just under the loader's 16 MiB (skipped entries with long messages keep
        it cheap to read and write); saving one more benchmark into it would pass the limit."""
        with open(os.path.join(FIXTURES_DIR, "good.json"), encoding="utf-8") as f:
            doc = json.load(f)
        limit = 16 * 1024 * 1024
        pad = limit - 2000 - len(json.dumps(doc, separators=(",", ":")))
        k = 0
        while pad > 200:
            size = min(pad - 100, 1 << 20)
            entry = {"id": f"pad/{k}", "group": "pad", "name": str(k), "param": None,
                     "status": "skipped", "message": "m" * size}
            doc["benchmarks"].append(entry)
            pad -= len(json.dumps(entry, separators=(",", ":"))) + 1
            k += 1
        text = json.dumps(doc, separators=(",", ":"))
        self.assertLess(len(text), limit)
        os.makedirs(self.base)
        with open(self.json_path("big"), "w", encoding="utf-8") as f:
            f.write(text)
        p = self.run_prog(self.copy("fast"), *FAST, "--save-baseline", "big", "--exact",
                          "s/work2")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("over the 16777216-byte limit", p.stderr)
        with open(self.json_path("big"), encoding="utf-8") as f:
            self.assertEqual(f.read(), text, "the previous baseline was replaced")
        self.assertEqual(sorted(os.listdir(self.base)), ["big.json", "big.json.lock"])


class DeadlineTest(Case):
    """Every child is under a deadline, and a process a benchmark leaves running holds up
    nothing."""

    def test_background_process_does_not_hold_the_worker(self):
        pids = os.path.join(self.dir, "pids")

        def stop_background():
            if not os.path.exists(pids):
                return
            with open(pids, encoding="utf-8") as f:
                for line in f:
                    try:
                        os.kill(int(line), signal.SIGKILL)
                    except (ValueError, ProcessLookupError):
                        pass
        self.addCleanup(stop_background)
        start = time.monotonic()
        p = self.run_prog(FIXTURE, "--processes", "2", "--timeout", "10", "--output-format",
                          "json", "--exact", "background/sleeper",
                          env={"E2E_BACKGROUND_SLEEP": "40", "E2E_BACKGROUND_PIDS": pids}, timeout=60)
        took = time.monotonic() - start
        self.assertEqual(p.returncode, 0, p.stderr)
        result = json.loads(p.stdout)["benchmarks"][0]
        self.assertEqual(result["status"], "ok", result.get("message"))
        self.assertTrue(os.path.exists(pids), "the background process never started")
        self.assertLess(took, 10, "the manager waited for the background process")

    def test_confirmation_of_a_blocking_old_build_times_out(self):
        self.save(self.copy("hang", b"E2EHANG\n"), "m", "^s/work$", fast=LIGHT)
        # A threefold slowdown on a still machine is clear from the saved numbers and would not
        # be confirmed at all: BENCH_CONFIRM_ALL makes the confirmation this test is about run.
        p, doc = self.compare(self.copy("slow", b"E2ESLOW200\n"), "m", "--timeout", "2",
                              "^s/work$", env={"E2E_HANG_SETUP": "1", "BENCH_CONFIRM_ALL": "1"},
                              timeout=90, fast=LIGHT)
        self.assertIn("could not be confirmed", p.stderr)
        self.assertIn("did not finish its setup within 2 s", p.stderr)
        self.assertEqual(doc["s/work"]["change"]["settled_by"], "saved numbers")

    def test_ab_with_a_blocking_old_build_times_out(self):
        hang = self.copy("hang", b"E2EHANG\n")
        p = self.run_prog(self.copy("new"), "--ab", hang, "--ab-time", "1", "--timeout", "2",
                          "--exact", "s/work", env={"E2E_HANG_SETUP": "1"}, timeout=90)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("did not finish its setup within 2 s", p.stdout)


    def test_ab_with_an_old_build_that_answers_zero(self):
        """A program whose every sample takes "T 0" gives no round a value: the pair used to
        round on without end (and overran its buffer); now the comparison ends with its budget,
        the benchmark not compared and the reason given."""
        zero = e2e_helpers.write_script(os.path.join(self.dir, "zero.sh"),
                                        "#!/bin/sh\n"
                                        "echo READY >&3\n"
                                        "while read cmd n; do\n"
                                        "  case \"$cmd\" in\n"
                                        "    R) echo 'T 0' >&3 ;;\n"
                                        "    *) echo 'END ok ' >&3; exit 0 ;;\n"
                                        "  esac\n"
                                        "done\n")
        p = self.run_prog(self.copy("new"), "--ab", zero, "--ab-time", "1", "--exact", "s/work",
                          timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("not compared: fewer than 2 worker pairs measured a round", p.stdout)
        # No family to correct over: the header claims no significance "over all 0 compared".
        self.assertRegex(p.stdout, r"(?m)^Comparison with .*\(no benchmark compared; noise "
                                   r"threshold [0-9.]+%\)$")
        self.assertNotIn("over all 0 compared", p.stdout)

    def test_ab_sample_log_that_would_block(self):
        """BENCH_AB_SAMPLES naming a FIFO blocked --ab until a signal: a FIFO, or a symbolic
        link, is a warning, and the comparison runs."""
        fifo = os.path.join(self.dir, "samples.fifo")
        os.mkfifo(fifo)
        link = os.path.join(self.dir, "samples.link")
        os.symlink(os.path.join(self.dir, "elsewhere"), link)
        new = self.copy("new")
        cases = [(fifo, "not a regular file (a FIFO)"), (link, "a symbolic link: refusing")]
        if os.geteuid() == 0:  # a file another user made in a shared folder is not written
            theirs = os.path.join(self.dir, "samples.theirs")
            with open(theirs, "w", encoding="utf-8"):
                pass
            os.chown(theirs, 54321, 54321)
            cases.append((theirs, "owned by another user (uid 54321): refusing"))
        for path, why in cases:
            p = self.run_prog(new, "--ab", new, "--ab-time", "1", "--exact", "s/work",
                              env={"BENCH_AB_SAMPLES": path}, timeout=60)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn(f"{e2e_helpers.prog_prefix(new)}warning: BENCH_AB_SAMPLES: {path}: "
                          f"{why}", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "elsewhere")))
        if os.geteuid() == 0:
            self.assertEqual(os.path.getsize(theirs), 0)


class SignalTest(Case):
    def test_signal_after_the_last_worker_stops_the_run(self):
        """SIGTERM while the manager analyses the last benchmark: exit 143, and neither the
        results nor the baseline (nor its program) are written."""
        out = os.path.join(self.dir, "out.json")
        p = self.run_prog(FIXTURE, "--processes", "1", "--sample-size", "50", "--nresamples",
                          "100000", "--json", out, "--save-baseline", "m", "--exact",
                          "sig/term_manager", env={"E2E_TERM_MANAGER": "1"}, timeout=60)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, p.stderr)
        self.assertIn("interrupted by SIGTERM", p.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertFalse(os.path.exists(self.json_path("m")))
        self.assertFalse(os.path.exists(os.path.join(self.base, "m.program")))


def limit_file_size(limit, ignore_xfsz):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        if ignore_xfsz:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return apply


class SmallTest(Case):
    def file_limit(self):
        size = os.path.getsize(FIXTURE)
        self.assertGreater(size, 200000)
        return 100000  # room for a baseline of one benchmark, not for the program

    def test_file_size_limit_during_the_snapshot_copy(self):
        prog = self.copy("fast")
        p = self.run_prog(prog, *FAST, "--save-baseline", "m", "--exact", "s/work2",
                          preexec_fn=limit_file_size(self.file_limit(), False))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("keeps no copy of this program", p.stderr)
        self.assertIn("File too large", p.stderr)
        self.assertEqual(sorted(os.listdir(self.base)), ["m.json", "m.json.lock"])
        self.assertNotIn("file", self.load("m")["context"]["program"])

    def test_snapshot_that_does_not_fit_leaves_no_stale_program(self):
        prog = self.copy("fast")
        self.save(prog, "m", "--exact", "s/work2")
        p = self.run_prog(self.copy("other", b"x"), *FAST, "--save-baseline", "m", "--exact",
                          "s/work2", preexec_fn=limit_file_size(self.file_limit(), True))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("keeps no copy of this program", p.stderr)
        names = sorted(os.listdir(self.base))
        self.assertEqual(names, ["m.json", "m.json.lock"], "a stale program was left")

    def test_stale_snapshot_copies_are_swept(self):
        os.makedirs(self.base)
        dead = 2147483640  # beyond any pid_max: no such process
        old = time.time() - 3600
        stale = [f".m.program.{dead}.tmp", f"m.program.tmp.{dead}.Ab12Cd"]
        keep = [f".m.program.{dead + 1}.tmp"]  # fresh: its writer may be on another machine
        for name in stale + keep:
            with open(os.path.join(self.base, name), "wb") as f:
                f.write(b"partial")
        for name in stale:
            os.utime(os.path.join(self.base, name), (old, old))
        os.symlink("/etc/hostname", os.path.join(self.base, f".n.program.{dead}.tmp"))
        os.utime(os.path.join(self.base, f".n.program.{dead}.tmp"), (old, old),
                 follow_symlinks=False)
        self.save(self.copy("fast"), "m", "--exact", "s/work2")
        names = set(os.listdir(self.base))
        for name in stale:
            self.assertNotIn(name, names)
        for name in keep + [f".n.program.{dead}.tmp"]:
            self.assertIn(name, names)

    def stray_job(self, job, fd3_file=None, parent=None):
        """The fixture run by hand with BENCH_WORKER_JOB=job and descriptor 3 open, as a test
        runner may leave it (a pipe, or fd3_file), BENCH_WORKER_PARENT=parent (None: unset).
        (the process, what it wrote to descriptor 3)."""
        r, w = os.pipe()
        target = w if fd3_file is None else os.open(fd3_file, os.O_WRONLY | os.O_CREAT, 0o600)

        def fd3():
            os.dup2(target, 3)
        env = dict(self.env, BENCH_WORKER_JOB=job)
        env.pop("BENCH_WORKER_PARENT", None)
        if parent is not None:
            env["BENCH_WORKER_PARENT"] = str(parent)
        # close_fds would close descriptor 3 after preexec_fn.
        p = e2e_helpers.run([FIXTURE, "--exact", "s/work2"], timeout=60, env=env,
                            preexec_fn=fd3, close_fds=False)
        os.close(w)
        if target != w:
            os.close(target)
        with os.fdopen(r, "rb") as f:
            written = f.read()
        if fd3_file is not None:
            with open(fd3_file, "rb") as f:
                written += f.read()
        return p, written

    def test_stray_worker_job_says_so_on_stderr(self):
        # As a manager's worker would be started (this process its parent): the job itself.
        p, _ = self.stray_job("garbage", parent=os.getpid())
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("BENCH_WORKER_JOB: malformed worker job", p.stderr)
        self.assertEqual(p.stderr.strip().count("\n"), 0, p.stderr)

    def test_worker_job_set_by_hand_is_refused(self):
        """A well-formed job set by hand with descriptor 3 open exited 0, printed nothing and
        wrote the worker protocol into descriptor 3: exit 2, one line, nothing written, unless
        the parent is the one the job names and descriptor 3 is a pipe."""
        job = "0 1 0 0 0 1 s/work2"
        for parent, fd3_file, why in ((None, None, "not set to its parent's process id"),
                                      (1, None, "is not its parent's process id"),
                                      (os.getpid(), os.path.join(self.dir, "fd3"),
                                       "descriptor 3 is not a pipe")):
            with self.subTest(parent=parent, fd3_file=fd3_file):
                p, written = self.stray_job(job, fd3_file, parent)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(why, p.stderr)
                self.assertIn("not for users", p.stderr)
                self.assertEqual(p.stderr.strip().count("\n"), 0, p.stderr)
                self.assertEqual(p.stdout, "")
                self.assertEqual(written, b"")
        # Its parent named and a pipe: the worker runs its job (as a manager's would).
        p, written = self.stray_job(job, parent=os.getpid())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(b"END ok", written)

    def test_filters_that_would_take_forever_are_refused(self):
        """A back-reference over ids of 255 characters ran for minutes; nested repetition counts
        exhaust memory. Both are refused at once, with one line."""
        with open(os.path.join(FIXTURES_DIR, "good.json"), encoding="utf-8") as f:
            doc = json.load(f)
        for i, entry in enumerate(doc["benchmarks"]):
            entry["group"], entry["name"] = "a" * 127, "a" * (127 - i) + "b" * i
            entry["id"] = entry["group"] + "/" + entry["name"]
        os.makedirs(self.base)
        self.store("long", doc)
        for pattern in ("(a*)*\\1x", "(a{1,100}){1,100}x"):
            p = self.run_prog(FIXTURE, "--load-baseline", "long", "--baseline", "long", pattern,
                              timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(f"filter '{pattern}' is refused", p.stderr)
            self.assertEqual(p.stderr.strip().count("\n"), 0, p.stderr)
        p = self.run_prog(FIXTURE, "--list", "(x{1,8}){1,8}y|s/work2")
        self.assertEqual((p.returncode, p.stdout), (0, "s/work2\n"), p.stderr)

    def test_bootstrap_work_is_bounded(self):
        p = self.run_prog(FIXTURE, "--sample-size", "100000", "--nresamples", "10000000",
                          "--exact", "s/work2", timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("bootstrap draws per benchmark are over the limit", p.stderr)

    def test_unreadable_baseline_directory_is_not_missing(self):
        os.makedirs(self.base)
        self.store("m", {"schema_version": 1})
        as_user = None
        if os.geteuid() == 0:
            os.chmod(self.dir, 0o755)
            os.chmod(self.base, 0o700)

            def as_user():
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
        else:
            os.chmod(self.base, 0)
            self.addCleanup(os.chmod, self.base, 0o755)
        p = self.run_prog(FIXTURE, "--load-baseline", "m", "--baseline", "m",
                          preexec_fn=as_user)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("Permission denied", p.stderr)
        self.assertNotIn("does not exist", p.stderr)

    def test_numbers_are_plain_decimals(self):
        for flag, value in (("--sample-size", "0x10"), ("--sample-size", " 10"),
                            ("--seed", "+5"), ("--measurement-time", "0x1p-2"),
                            ("--timeout", " 5"), ("--measurement-time", "1.5 "),
                            ("--noise-threshold", "inf")):
            p = self.run_prog(FIXTURE, flag, value, "--list")
            self.assertEqual(p.returncode, 2, f"{flag} {value!r}: {p.stdout}{p.stderr}")
            self.assertIn(f"{flag}: '{value}' is not", p.stderr)
        p = self.run_prog(FIXTURE, "--sample-size", "10", "--measurement-time", "1e-1",
                          "--list", "s/work2")
        self.assertEqual(p.returncode, 0, p.stderr)


class ColdFirstCallTest(Case):
    """The plan comes from warm iterations: a body whose first call in a process takes 200 times
    its steady time (cold/first with E2E_COLD_FIRST: 40 ms, then 0.2 ms) is planned from the
    iterations after it. Planned from the cold call, 10 samples in 0.2 s got 1 iteration each
    (the warm-up's time, 10 ms a process, ends with the cold call); planned from a warm one,
    they get 1 only if that one took 20 ms."""

    def assert_planned_warm(self, *args):
        out = os.path.join(self.dir, "cold.json")
        p = self.run_prog(FIXTURE, "--exact", "cold/first", "--warm-up-time", "0.02",
                          "--measurement-time", "0.2", "--sample-size", "10", "--nresamples",
                          "200", "--json", out, *args, env={"E2E_COLD_FIRST": "1"}, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        entry = e2e_helpers.by_id(e2e_helpers.load_json(out))["cold/first"]
        iters = entry["samples"]["iterations"]
        self.assertGreater(min(iters), 1, iters)
        # The warm-up went on past the cold call, whose time alone outlasted it.
        self.assertGreaterEqual(entry["warm_up"]["iterations"], 2)

    def test_worker_processes_plan_from_warm_iterations(self):
        self.assert_planned_warm("--processes", "2")

    def test_in_process_plans_from_warm_iterations(self):
        self.assert_planned_warm("--in-process")

    def test_ab_sizes_samples_from_warm_iterations(self):
        """--ab sizes its samples on B's fresh worker: with a first call of 40 ms and later ones
        of tens of ns (E2E_COLD_FIRST=fast), sizing from the first call gave samples of one
        iteration, some 100 ns (mostly the clock's own cost); sized from warm calls, a sample
        takes about the sample time, 0.5 ms (docs/comparison.md). Every sample in the log,
        both sides and every pair, lasts at least a fifth of it."""
        log = os.path.join(self.dir, "samples.log")
        new = self.copy("new")
        p = self.run_prog(new, "--ab", FIXTURE, "--ab-time", "1", "--exact", "cold/first",
                          env={"E2E_COLD_FIRST": "fast", "BENCH_AB_SAMPLES": log}, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(log, encoding="utf-8") as f:
            rows = [line.split() for line in f if line.strip()]
        self.assertGreaterEqual(len(rows), 6 * 8, rows[:3])  # three pairs' warm-up rounds at least
        for row in rows:
            self.assertEqual(row[0], "cold/first", row)
        shortest = min(float(row[4]) for row in rows)
        self.assertGreaterEqual(shortest, 0.1e6, f"shortest sample {shortest:.0f} ns")



class SpreadWarningTest(Case):
    """The pretty output's spread warning says a saved comparison cannot see a change of the
    run's --noise-threshold: it shows for a benchmark whose processes differ (spread/pid with
    E2E_SPREAD: up to 1.5x, a log sd near 0.12), not for a steady one (20 us spins), and not for
    the same spread compared at a threshold larger than the change it hides: with 100 processes,
    (t(0.975, 198) + t(0.8, 198)) sqrt(2/100) sd = 2.815 x 0.141 x 0.12 = 0.05 in the log, far
    below ln 1.99 = 0.69 (a busy machine's own noise would have to reach a log sd of 1.7: at a
    load of 11 on 2 CPUs it spread 20 processes of 20 us spins by 100-240%)."""

    def pretty(self, *args, env=None, processes="20"):
        p = self.run_prog(FIXTURE, "--exact", "spread/pid", "--processes", processes,
                          "--warm-up-time", "0.01", "--measurement-time", "0.2",
                          "--nresamples", "200", "--color", "never", *args, env=env,
                          timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_spread_warns_at_the_default_threshold(self):
        out = self.pretty(env={"E2E_SPREAD": "1"})
        self.assertRegex(out, r"Spread between processes [0-9.]+%.*:\n *a saved comparison sees "
                              r"changes above about [0-9]+%", out)

    def test_steady_benchmark_gets_no_warning(self):
        out_json = os.path.join(self.dir, "steady.json")
        out = self.pretty("--json", out_json)
        self.assertIn("spread/pid", out)
        cv = e2e_helpers.by_id(e2e_helpers.load_json(out_json))["spread/pid"]["process_cv"]
        if cv > 0.05:  # the warning is then right: the machine spread them
            self.skipTest(f"this machine's noise alone spread the processes by {100 * cv:.1f}%")
        self.assertNotIn("Spread between processes", out)

    def test_threshold_the_spread_does_not_hide_gets_no_warning(self):
        # A threshold is a comparison's: compared with a saved run, at 2% and at 99%.
        self.pretty("--save-baseline", "spread", env={"E2E_SPREAD": "1"})
        out = self.pretty("--baseline", "spread", env={"E2E_SPREAD": "1"})
        # A busy machine may split the processes into two speed groups (at load 2 per CPU: 17
        # at 25 us, 3 at 68 us), which its own line reports in place of the spread's.
        if "Two speed groups among its" not in out:
            self.assertIn("Spread between processes", out)
        out = self.pretty("--baseline", "spread", "--noise-threshold", "0.99",
                          env={"E2E_SPREAD": "1"}, processes="100")
        self.assertIn("spread/pid", out)
        self.assertNotIn("Spread between processes", out)

if __name__ == "__main__":
    if not FIXTURE:
        sys.exit("E2E_RELIABILITY is not set (ctest sets it)")
    unittest.main()

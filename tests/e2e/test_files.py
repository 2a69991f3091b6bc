#!/usr/bin/env python3
"""End-to-end tests of how bench treats the files it writes and reads.

- Output files (--json, --export-gbench, --save-baseline) that are not regular files are never
  renamed over: a character device (a private copy of /dev/null or /dev/full, made with mknod
  when the test runs as root, so the real ones are never at risk), a FIFO or this process's
  stdout is written directly; a directory is refused with exit 2; a symbolic link to a file
  keeps the link.
- A FIFO given as a baseline is refused at once (exit 2), never waited on.
- No temporary file survives a file-size limit (SIGXFSZ) or a kill; stale ones of dead processes
  are swept by the next save.
- Two runs saving one baseline take turns: the second says it waits for the lock, and gives up
  after BENCH_LOCK_TIMEOUT seconds with exit 2.
"""
import fcntl
import json
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
import time
import unittest

import e2e_helpers

# The saves and comparisons here check what a run does, not how well the drift canaries read the
# machine: the canaries keep every step on 3 repetitions and the 64 MiB floor (0.5-3 s a run
# less; docs/comparison.md, "Drift canaries").
os.environ.setdefault("BENCH_CANARY_QUICK", "1")

FIXTURE = os.environ.get("E2E_FIXTURE", "")
FAST = ["--warm-up-time", "0.01", "--measurement-time", "0.05", "--nresamples", "100",
        "--color", "never"]
ONE = ["--exact", "fix/a"]


def run(*args, env_extra=None, preexec_fn=None, timeout=60):
    env = e2e_helpers.environ(env_extra, unset=["BENCH_BASELINE_DIR"])
    return e2e_helpers.run([FIXTURE, *FAST, *args], timeout=timeout, env=env,
                           preexec_fn=preexec_fn)


def leftovers(directory):
    return sorted(f for f in os.listdir(directory) if ".tmp" in f)


class Base(e2e_helpers.Case):
    def setUp(self):
        self.dir = self.temp_dir("bench-e2e-files-")

    def path(self, name):
        return os.path.join(self.dir, name)

    def device(self, name, minor):
        """A private character device like /dev/null (minor 3) or /dev/full (minor 7)."""
        path = self.path(name)
        try:
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
        except (PermissionError, OSError) as e:
            self.skipTest(f"cannot make a device node here ({e}): needs root with CAP_MKNOD")
        return path


class OutputTest(Base):
    def test_character_device_stays_a_device(self):
        null = self.device("null", 3)
        for flag in ("--json", "--export-gbench"):
            with self.subTest(flag=flag):
                p = run(flag, null, *ONE)
                self.assert_exit(p, 0)
                self.assertTrue(stat.S_ISCHR(os.lstat(null).st_mode), "replaced by a file")
                self.assertEqual(leftovers(self.dir), [])

    def test_full_device_is_an_error(self):
        full = self.device("full", 7)
        p = run("--json", full, *ONE)
        self.assert_exit(p, 2)
        self.assertIn("No space left on device", p.stderr)
        self.assertTrue(stat.S_ISCHR(os.lstat(full).st_mode))
        self.assertEqual(leftovers(self.dir), [])

    def test_baseline_save_over_a_device_is_refused(self):
        os.symlink(self.device("null", 3), self.path("dev.json"))
        p = run("--baseline-dir", self.dir, "--save-baseline", "dev", *ONE)
        self.assert_exit(p, 2)
        self.assertIn("not a regular file", p.stderr)
        self.assertTrue(os.path.islink(self.path("dev.json")))
        self.assertTrue(stat.S_ISCHR(os.lstat(self.path("null")).st_mode))

    def test_stdout_through_a_link_is_appended_to(self):
        """A name for this process's own stdout (what /dev/stdout is) is written through it:
        after the report, whether stdout is a pipe or a regular file, and never replaced."""
        link = self.path("stdout")
        os.symlink("/proc/self/fd/1", link)
        p = run("--output-format", "csv", "--json", link, *ONE)  # stdout: a pipe
        self.assert_exit(p, 0)
        self.assertTrue(p.stdout.startswith("id,group,name"))
        doc = json.loads(p.stdout[p.stdout.index("{"):])
        self.assertEqual(doc["benchmarks"][0]["id"], "fix/a")
        out = self.path("out.txt")
        with open(out, "w", encoding="utf-8") as f:  # stdout: a regular file
            p = subprocess.run([FIXTURE, *FAST, "--output-format", "csv", "--json", link, *ONE],
                               stdout=f, stderr=subprocess.PIPE, text=True, timeout=60,
                               check=False)
        self.assert_exit(p, 0)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.startswith("id,group,name"), text[:200])
        self.assertEqual(json.loads(text[text.index("{"):])["benchmarks"][0]["id"], "fix/a")
        self.assertTrue(os.path.islink(link))
        self.assertEqual(leftovers(self.dir), [])

    def test_fifo_with_a_reader_gets_the_json(self):
        fifo = self.path("out.fifo")
        os.mkfifo(fifo)
        got = {}

        def reader():
            with open(fifo, encoding="utf-8") as f:
                got["text"] = f.read()

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        p = run("--json", fifo, *ONE)
        t.join(30)
        self.assert_exit(p, 0)
        self.assertEqual(json.loads(got["text"])["benchmarks"][0]["id"], "fix/a")
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))

    def test_directory_is_refused(self):
        os.mkdir(self.path("d.json"))
        p = run("--json", self.path("d.json"), *ONE)
        self.assert_exit(p, 2)
        self.assertIn("is a directory", p.stderr)

    def test_link_to_a_file_keeps_the_link(self):
        os.mkdir(self.path("real"))
        target = self.path("real/r.json")
        with open(target, "w", encoding="utf-8") as f:
            f.write("old")
        os.symlink(target, self.path("r.json"))
        p = run("--json", self.path("r.json"), *ONE)
        self.assert_exit(p, 0)
        self.assertTrue(os.path.islink(self.path("r.json")))
        with open(target, encoding="utf-8") as f:
            self.assertEqual(json.load(f)["benchmarks"][0]["id"], "fix/a")
        self.assertEqual(leftovers(self.path("real")), [])


class FifoBaselineTest(Base):
    def test_fifo_baseline_is_refused_without_waiting(self):
        os.mkfifo(self.path("f.json"))
        for args in (["--baseline", "f"], ["--save-baseline", "f"],
                     ["--load-baseline", "f", "--baseline", "f"]):
            with self.subTest(args=args):
                t0 = time.monotonic()
                p = run("--baseline-dir", self.dir, *args, *ONE, timeout=30)
                self.assert_exit(p, 2)
                self.assertIn("not a regular file (a FIFO)", p.stderr)
                self.assertLess(time.monotonic() - t0, 20)
                self.assertTrue(stat.S_ISFIFO(os.lstat(self.path("f.json")).st_mode))


class TempFileTest(Base):
    def test_file_size_limit_leaves_no_temporary_file(self):
        def small_files():
            resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))

        out = self.path("r.json")
        p = run("--json", out, *ONE, preexec_fn=small_files)
        self.assert_exit(p, 2)  # not killed by SIGXFSZ
        self.assertIn("File too large", p.stderr)
        self.assertEqual(leftovers(self.dir), [])
        self.assertFalse(os.path.exists(out))

    def test_stale_temporary_files_are_swept(self):
        dead_pid = e2e_helpers.dead_pid()
        old = time.time() - 3600
        stale = self.path(f"base.json.tmp.{dead_pid}.AbC123")
        fresh = self.path(f"base.json.tmp.{dead_pid}.XyZ789")  # dead, but recent
        alive = self.path(f"base.json.tmp.{os.getpid()}.QwE456")  # old, process alive
        other = self.path("notes.tmp.txt")
        for f in (stale, fresh, alive, other):
            with open(f, "w", encoding="utf-8") as fh:
                fh.write("x")
        for f in (stale, alive, other):
            os.utime(f, (old, old))
        p = run("--baseline-dir", self.dir, "--save-baseline", "base", *ONE)
        self.assert_exit(p, 0)
        self.assertFalse(os.path.exists(stale))
        for f in (fresh, alive, other):
            self.assertTrue(os.path.exists(f), f)


class LockTest(Base):
    def hold_lock(self):
        fd = os.open(self.path("base.json.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def test_waits_for_the_lock_then_saves(self):
        fd = self.hold_lock()
        env = dict(os.environ)
        env.pop("BENCH_BASELINE_DIR", None)
        proc = subprocess.Popen([FIXTURE, *FAST, "--baseline-dir", self.dir, "--save-baseline",
                                 "base", *ONE], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, env=env)
        line = proc.stderr.readline()
        while line and "waiting for lock" not in line:
            line = proc.stderr.readline()
        self.assertIn("waiting for lock held by another run", line)
        time.sleep(0.3)
        self.assertIsNone(proc.poll())  # still waiting
        self.assertFalse(os.path.exists(self.path("base.json")))
        os.close(fd)
        rest = proc.stderr.read()
        self.assertEqual(proc.wait(60), 0, rest)
        self.assertIn("saved 1 benchmark to baseline 'base'", rest)
        with open(self.path("base.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["benchmarks"][0]["id"], "fix/a")

    def test_gives_up_after_the_timeout(self):
        fd = self.hold_lock()
        self.addCleanup(os.close, fd)
        t0 = time.monotonic()
        p = run("--baseline-dir", self.dir, "--save-baseline", "base", *ONE,
                env_extra={"BENCH_LOCK_TIMEOUT": "1"})
        self.assert_exit(p, 2)
        self.assertIn("waiting for lock held by another run", p.stderr)
        self.assertIn("giving up", p.stderr)
        self.assertLess(time.monotonic() - t0, 30)
        self.assertFalse(os.path.exists(self.path("base.json")))

    def test_concurrent_saves_keep_every_entry(self):
        """Four runs saving different benchmarks into one baseline at once: all four kept."""
        ids = ["fix/a", "fix/b", "fix/add", "more/elements"]
        env = dict(os.environ)
        env.pop("BENCH_BASELINE_DIR", None)
        procs = [subprocess.Popen([FIXTURE, *FAST, "--baseline-dir", self.dir,
                                   "--save-baseline", "base", "--exact", i],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
                 for i in ids]
        for p in procs:
            self.assertEqual(p.wait(120), 0, p.stderr.read())
            p.stderr.close()
        with open(self.path("base.json"), encoding="utf-8") as f:
            saved = sorted(b["id"] for b in json.load(f)["benchmarks"])
        self.assertEqual(saved, sorted(ids))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]])

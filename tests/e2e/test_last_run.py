#!/usr/bin/env python3
"""End-to-end tests of the last-run store: the change since the last run without any setup
(docs/cli.md, since the last run).

- A first run of the fixture keeps its results in one file in BENCH_LAST_DIR (a results document
  of the published schema with the benchmarks it measured) and shows no block; a second run's
  pretty output ends with "Since the last run (WHEN, FILE; ...)" and one line per benchmark
  before the count line.
- --no-last, an empty BENCH_LAST_DIR and --list neither show the block nor touch the file; a JSON
  stdout has no block; a named baseline takes the block's place; with a history the history's
  block is the only one.
- A run of a subset keeps the other benchmarks' entries, each naming the run that measured it,
  and the next run compares those against "an earlier run" and its time; a copy of the program
  elsewhere keeps its own file.
- A comparison that cannot see a change of 50% prints no interval: the change, its verdict and
  the smallest change it could tell.
- A corrupt, huge or foreign file (none of this program's benchmarks), and a folder that cannot
  be made, give at most one line on stderr naming the file, exit 0, and no block; another user's
  file (as root: given to an unused uid) is neither read nor replaced.
- A shared BENCH_LAST_DIR (mode 1777): the file is kept in this user's folder inside it
  (BENCH_LAST_DIR/UID, 0700); a file another user planted under the program's name in the shared
  folder is neither read nor replaced, and a link another user swaps in there during the run
  never makes the run write through it (this user's own files stay as they were). As root, the
  same with two real users (setpriv with unused uids): a victim and an attacker.
"""
import glob
import json
import os
import shutil
import re
import subprocess
import threading
import time
import unittest

import e2e_helpers

# The saves and comparisons here check what a run does, not how well the drift canaries read the
# machine: the canaries keep every step on 3 repetitions and the 64 MiB floor (0.5-3 s a run
# less; docs/comparison.md, "Drift canaries").
os.environ.setdefault("BENCH_CANARY_QUICK", "1")

FIXTURE = os.environ.get("E2E_FIXTURE", "")
BENCHES_DIR = os.environ.get("E2E_BENCHES_DIR", "")
SCHEMA = os.path.join(os.path.dirname(BENCHES_DIR), "docs", "results.schema.json")
FAST = ["--warm-up-time", "0.01", "--measurement-time", "0.05", "--nresamples", "100",
        "--color", "never", "--processes", "2"]
PAIR = ["--exact", "cmp/chain", "cmp/steady"]
# A line: the change with its interval and verdict, or, when the comparison could not see a
# change of 50%, the change, the verdict and the smallest change it could tell.
LINE = (r"  {} \(against [^)]*\): [+-]\d+\.\d\d%(?: \[[+-]\d+\.\d\d%, [+-]\d+\.\d\d%\] \S|"
        r", \S[^:]*: cannot tell changes below \d+%)")


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def run(prog, *args, env):
    return e2e_helpers.run([prog, *args], timeout=90, env=env, encoding="utf-8")


class LastRunTest(e2e_helpers.Case):
    """Each run of times keeps its results; the next pretty run shows the change since them."""

    def setUp(self):
        self.dir = self.temp_dir("bench-last-")
        self.last = os.path.join(self.dir, "last")
        self.env = e2e_helpers.environ({"BENCH_LAST_DIR": self.last},
                                       unset=["BENCH_HISTORY", "NO_COLOR"])

    def files(self):
        return sorted(glob.glob(os.path.join(self.last, "*.json")))

    def the_file(self):
        files = self.files()
        self.assertEqual(len(files), 1, files)
        return files[0]

    def first_run(self):
        p = run(FIXTURE, *FAST, *PAIR, env=self.env)
        self.assert_exit(p, 0)
        self.assertNotIn("Since the last run", p.stdout, "nothing to compare with yet")
        return self.the_file()

    def test_first_run_keeps_then_second_shows(self):
        path = self.first_run()
        self.assertRegex(os.path.basename(path), r"^e2e_fixture-[0-9a-f]{16}\.json$")
        doc = e2e_helpers.load_json(path)
        self.assertEqual(doc["schema_version"], 1)
        self.assertEqual(sorted(e2e_helpers.by_id(doc)), ["cmp/chain", "cmp/steady"])
        for b in doc["benchmarks"]:
            self.assertEqual(b["status"], "ok")
            self.assertNotIn("change", b)
        e2e_helpers.check_schema(doc, SCHEMA)
        p = run(FIXTURE, *FAST, *PAIR, env=self.env)
        self.assert_exit(p, 0)
        self.assertEqual(p.stderr.count("last run"), 0, p.stderr)
        block = p.stdout[p.stdout.index("\nSince the last run ("):]
        self.assertIn(f", {path}; --no-last hides this):\n", block)
        for name in ("cmp/chain", "cmp/steady"):
            self.assertRegex(block, LINE.format(re.escape(name)))
        self.assertEqual(p.stdout.count("Since the last run"), 1)
        self.assertRegex(p.stdout, r"2 benchmarks: 2 measured, 0 skipped, 0 failed\n$")

    def test_off_and_other_outputs(self):
        path = self.first_run()
        before = read_bytes(path)
        for args, env in ((["--no-last"], self.env),
                          ([], e2e_helpers.environ(self.env, {"BENCH_LAST_DIR": ""})),
                          (["--list"], self.env)):
            p = run(FIXTURE, *FAST, *PAIR, *args, env=env)
            self.assert_exit(p, 0)
            self.assertNotIn("Since the last run", p.stdout, args)
            self.assertEqual(read_bytes(path), before, f"{args}: the file changed")
        p = run(FIXTURE, *FAST, *PAIR, "--output-format", "json", env=self.env)
        self.assert_exit(p, 0)
        json.loads(p.stdout)
        self.assertNotEqual(read_bytes(path), before, "a JSON run keeps its results too")
        p = run(FIXTURE, *FAST, *PAIR, "--baseline-dir", self.dir, "--save-baseline", "b",
                env=self.env)
        self.assert_exit(p, 0)
        p = run(FIXTURE, *FAST, *PAIR, "--baseline-dir", self.dir, "--baseline", "b",
                env=self.env)
        self.assertNotIn("Since the last run", p.stdout, "a named baseline takes its place")

    def test_history_block_is_the_only_one(self):
        p = e2e_helpers.run([FIXTURE, "--version"], timeout=60, encoding="utf-8")
        if "history: compiled out" in p.stdout:
            self.skipTest("this build has no SQLite")
        self.first_run()
        db = os.path.join(self.dir, "runs.db")
        for _ in range(2):
            p = run(FIXTURE, *FAST, *PAIR, "--history", db, "--history-programs", "0",
                    env=self.env)
            self.assert_exit(p, 0)
        self.assertIn("Since the last run in the history", p.stdout)
        self.assertEqual(p.stdout.count("Since the last run"), 1, p.stdout)

    def test_subset_keeps_the_others(self):
        path = self.first_run()
        p = run(FIXTURE, *FAST, "--exact", "fix/a", env=self.env)
        self.assert_exit(p, 0)
        ids = sorted(e2e_helpers.by_id(e2e_helpers.load_json(path)))
        self.assertEqual(ids, ["cmp/chain", "cmp/steady", "fix/a"])
        p = run(FIXTURE, *FAST, "--exact", "fix/a", "cmp/chain", env=self.env)
        self.assert_exit(p, 0)
        block = p.stdout[p.stdout.index("\nSince the last run ("):]
        for name in ("fix/a", "cmp/chain"):
            self.assertRegex(block, LINE.format(re.escape(name)))
        self.assertNotIn("cmp/steady", block)

    def test_entries_name_their_run(self):
        path = self.first_run()
        first = e2e_helpers.load_json(path)["context"]["timestamp"]
        time.sleep(1.1)  # timestamps are to the second
        p = run(FIXTURE, *FAST, "--exact", "cmp/chain", env=self.env)
        self.assert_exit(p, 0)
        doc = e2e_helpers.load_json(path)
        e2e_helpers.check_schema(doc, SCHEMA)
        second = doc["context"]["timestamp"]
        self.assertNotEqual(first, second)
        entries = e2e_helpers.by_id(doc)
        self.assertEqual(entries["cmp/chain"]["program"]["timestamp"], second)
        self.assertEqual(entries["cmp/steady"]["program"]["timestamp"], first)
        p = run(FIXTURE, *FAST, *PAIR, env=self.env)
        self.assert_exit(p, 0)
        block = p.stdout[p.stdout.index("\nSince the last run ("):]
        self.assertRegex(block, LINE.format(re.escape("cmp/steady")))
        self.assertIn(f"  cmp/steady (against an earlier run, {first}): ", block)
        self.assertRegex(block, r"\n  cmp/chain \(against (?!an earlier run)[^)]*\): ")

    def test_a_comparison_that_tells_nothing_says_so(self):
        path = self.first_run()
        doc = e2e_helpers.load_json(path)
        # The last run's second process of cmp/chain 20 times as slow as its first: the two
        # runs cannot tell any change of a size that matters.
        for b in doc["benchmarks"]:
            if b["id"] == "cmp/chain":
                s = b["samples"]
                s["totals_ns"] = [t * 20 if proc == 1 else t
                                  for t, proc in zip(s["totals_ns"], s["process"])]
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        p = run(FIXTURE, *FAST, *PAIR, env=self.env)
        self.assert_exit(p, 0)
        block = p.stdout[p.stdout.index("\nSince the last run ("):]
        line = re.search(r"\n  cmp/chain \(against [^)]*\): .*\n", block)
        self.assertIsNotNone(line, block)
        below = re.search(r": [+-]\d+\.\d\d%, inconclusive: cannot tell changes below (\d+)%",
                          line.group(0))
        self.assertIsNotNone(below, block)
        self.assertGreater(int(below.group(1)), 50)
        self.assertNotIn("[", line.group(0))
        self.assertRegex(block, LINE.format(re.escape("cmp/steady")))

    def test_copy_elsewhere_keeps_its_own_file(self):
        self.first_run()
        copy = e2e_helpers.copy_program(FIXTURE, os.path.join(self.dir, "e2e_fixture"))
        p = run(copy, *FAST, *PAIR, env=self.env)
        self.assert_exit(p, 0)
        self.assertNotIn("Since the last run", p.stdout)
        self.assertEqual(len(self.files()), 2, self.files())

    def assert_one_line(self, p, path, why):
        self.assert_exit(p, 0)
        self.assertNotIn("Since the last run", p.stdout)
        # (The machine's own warnings, a busy machine or a governor, may come too.)
        lines = [line for line in p.stderr.splitlines() if "last run" in line or path in line]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn(path, lines[0])
        self.assertIn(why, lines[0])

    def test_hostile_files(self):
        path = self.first_run()
        good = read_bytes(path)
        doc = json.loads(good)
        for b in doc["benchmarks"]:
            b["id"] = "other/" + b["id"].split("/")[1]
        wrong = dict(doc, schema_version=7)
        for content, why in ((good[:len(good) // 2], "not valid JSON"),
                             (b"\x00\xff garbage", "NUL byte"),
                             (json.dumps(wrong).encode(), "schema_version"),
                             (json.dumps(doc).encode(), "none of this program's benchmarks"),
                             (None, "limit")):
            with open(path, "wb") as f:
                if content is None:
                    f.truncate(17 * 1024 * 1024)
                else:
                    f.write(content)
            p = run(FIXTURE, *FAST, *PAIR, env=self.env)
            self.assert_one_line(p, path, why)
            # Replaced by this run's results: the next run compares again.
            kept = e2e_helpers.load_json(path)
            self.assertEqual(sorted(e2e_helpers.by_id(kept)), ["cmp/chain", "cmp/steady"], why)

    def test_folder_that_cannot_be_made(self):
        blocker = os.path.join(self.dir, "file")
        with open(blocker, "w", encoding="utf-8") as f:
            f.write("not a folder\n")
        env = e2e_helpers.environ(self.env, {"BENCH_LAST_DIR": os.path.join(blocker, "last")})
        for _ in range(2):
            # A folder the user named: said, once per run.
            p = run(FIXTURE, *FAST, *PAIR, env=env)
            self.assert_exit(p, 0)
            self.assertEqual(p.stderr.count("last run"), 1, p.stderr)
            self.assertIn("the last run is not kept for the next: ", p.stderr)
            self.assertNotIn("Since the last run", p.stdout)
        # The default folder under a home that cannot hold it (read-only, a container): no
        # store, and nothing said.
        env = e2e_helpers.environ({"HOME": blocker},
                                  unset=["BENCH_LAST_DIR", "XDG_CACHE_HOME", "BENCH_HISTORY"])
        p = run(FIXTURE, *FAST, *PAIR, env=env)
        self.assert_exit(p, 0)
        self.assertNotIn("last run", p.stderr)
        self.assertNotIn("Since the last run", p.stdout)
        if os.geteuid() != 0:
            os.makedirs(self.last, mode=0o500)
            p = run(FIXTURE, *FAST, *PAIR, env=self.env)
            self.assert_exit(p, 0)
            self.assertEqual(p.stderr.count("last run"), 1, p.stderr)
            self.assertIn(self.last, p.stderr)

    def test_symlink_is_neither_read_nor_replaced(self):
        self.first_run()
        path = self.the_file()
        target = os.path.join(self.dir, "elsewhere.json")
        shutil.copyfile(path, target)
        before = read_bytes(target)
        os.remove(path)
        os.symlink(target, path)
        p = run(FIXTURE, *FAST, *PAIR, env=self.env)
        self.assert_exit(p, 0)
        self.assertIn("not a regular file: not read", p.stderr)
        self.assertEqual(p.stderr.count("last run"), 1, p.stderr)
        self.assertNotIn("Since the last run", p.stdout)
        self.assertTrue(os.path.islink(path))
        self.assertEqual(read_bytes(target), before)

    def test_another_users_file_is_neither_read_nor_replaced(self):
        if os.geteuid() != 0:
            self.skipTest("only root can give a file to another user")
        path = self.first_run()
        before = read_bytes(path)
        os.chown(path, SharedFolderTest.OTHER_UID, SharedFolderTest.OTHER_UID)
        p = run(FIXTURE, *FAST, *PAIR, env=self.env)
        self.assert_exit(p, 0)
        self.assertNotIn("Since the last run", p.stdout)
        self.assertIn("owned by another user (uid 54321): not read", p.stderr)
        self.assertEqual(read_bytes(path), before)
        self.assertEqual(os.stat(path).st_uid, SharedFolderTest.OTHER_UID)

    def test_no_home(self):
        env = e2e_helpers.environ(unset=["BENCH_LAST_DIR", "HOME", "XDG_CACHE_HOME",
                                         "BENCH_HISTORY"])
        p = run(FIXTURE, *FAST, *PAIR, env=env)
        self.assert_exit(p, 0)
        self.assertNotIn("last run", p.stderr)
        self.assertNotIn("Since the last run", p.stdout)


class SharedFolderTest(e2e_helpers.Case):
    """A BENCH_LAST_DIR that other users may write (docs/comparison.md#threat-model)."""

    OTHER_UID = 54321  # an unused uid: owns the planted file when the test runs as root

    def setUp(self):
        self.dir = self.temp_dir("bench-shared-")
        self.shared = os.path.join(self.dir, "shared")
        os.mkdir(self.shared)
        os.chmod(self.shared, 0o1777)
        self.mine = os.path.join(self.shared, str(os.geteuid()))
        self.env = e2e_helpers.environ({"BENCH_LAST_DIR": self.shared},
                                       unset=["BENCH_HISTORY", "NO_COLOR"])
        # The file a run keeps, as it would be named in any folder, and its contents.
        private = os.path.join(self.dir, "private")
        p = run(FIXTURE, *FAST, *PAIR,
                env=e2e_helpers.environ(self.env, {"BENCH_LAST_DIR": private}))
        self.assert_exit(p, 0)
        (self.name,) = [n for n in os.listdir(private) if n.endswith(".json")]
        self.good = read_bytes(os.path.join(private, self.name))

    def test_planted_file_is_neither_read_nor_replaced(self):
        planted = os.path.join(self.shared, self.name)
        with open(planted, "wb") as f:
            f.write(self.good)
        if os.geteuid() == 0:
            os.chown(planted, self.OTHER_UID, self.OTHER_UID)
        p = run(FIXTURE, *FAST, *PAIR, env=self.env)
        self.assert_exit(p, 0)
        self.assertNotIn("Since the last run", p.stdout, "another user's numbers shown")
        self.assertNotIn("last run", p.stderr)
        self.assertEqual(read_bytes(planted), self.good)
        self.assertEqual(os.stat(self.mine).st_mode & 0o7777, 0o700)
        self.assertEqual(sorted(os.listdir(self.mine)), [self.name, self.name + ".lock"])
        p = run(FIXTURE, *FAST, *PAIR, env=self.env)
        self.assert_exit(p, 0)
        kept = os.path.join(self.mine, self.name)
        self.assertIn(f", {kept}; --no-last hides this):\n", p.stdout)

    def test_link_swapped_in_during_the_run_is_not_written_through(self):
        # This user's file elsewhere; an attacker keeps swapping the program's name in the shared
        # folder between a regular file (what a check by name sees) and a link to that file. The
        # attacker is a thread of this test: whose it is does not change whether the run writes
        # through the link, and another user could not swap the name again once the run (as
        # root) had replaced their file in the sticky folder, which would make the race a
        # one-shot.
        notes = os.path.join(self.dir, "notes.txt")
        with open(notes, "w", encoding="utf-8") as f:
            f.write("my notes\n")
        os.chmod(notes, 0o600)
        target = os.path.join(self.shared, self.name)
        stop = threading.Event()

        def swap():
            link, regular = target + ".l", target + ".r"
            while not stop.is_set():
                with open(regular, "wb") as f:
                    f.write(self.good)
                os.replace(regular, target)
                os.symlink(notes, link)
                os.replace(link, target)

        swapper = threading.Thread(target=swap)
        swapper.start()
        try:
            for _ in range(8):
                p = run(FIXTURE, *FAST, *PAIR, env=self.env)
                self.assert_exit(p, 0)
                self.assertEqual(read_bytes(notes), b"my notes\n", "written through the link")
                self.assertEqual(os.stat(notes).st_mode & 0o777, 0o600)
        finally:
            stop.set()
            swapper.join()
        self.assertTrue(os.path.isfile(os.path.join(self.mine, self.name)))


SWAP = """
import os, sys
target, notes, good = sys.argv[1:4]
data = open(good, "rb").read()
link, regular = target + ".l", target + ".r"
while True:
    with open(regular, "wb") as f:
        f.write(data)
    os.replace(regular, target)
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(notes, link)
    os.replace(link, target)
"""


class CrossUserTest(e2e_helpers.Case):
    """The shared-folder cases with two real users: as root, a victim and an attacker run under
    unused uids (setpriv), the victim's program and files its own."""

    VICTIM, ATTACKER = 54322, 54321

    def setUp(self):
        if os.geteuid() != 0 or not shutil.which("setpriv") or not os.path.exists(
                "/usr/bin/python3"):
            self.skipTest("needs root, setpriv and /usr/bin/python3 to act as two other users")
        self.dir = self.temp_dir("bench-users-")
        os.chmod(self.dir, 0o755)
        self.shared = os.path.join(self.dir, "shared")
        os.mkdir(self.shared)
        os.chmod(self.shared, 0o1777)
        self.home = os.path.join(self.dir, "victim")
        os.mkdir(self.home, 0o700)
        os.chown(self.home, self.VICTIM, self.VICTIM)
        self.env = e2e_helpers.environ({"BENCH_LAST_DIR": self.shared, "HOME": self.home},
                                       unset=["BENCH_HISTORY", "NO_COLOR", "XDG_CACHE_HOME",
                                              "XDG_CONFIG_HOME"])
        private = os.path.join(self.home, "private")
        p = self.victim(env=e2e_helpers.environ(self.env, {"BENCH_LAST_DIR": private}))
        self.assert_exit(p, 0)
        (self.name,) = [n for n in os.listdir(private) if n.endswith(".json")]
        self.good = os.path.join(self.dir, "good.json")
        shutil.copyfile(os.path.join(private, self.name), self.good)
        os.chmod(self.good, 0o644)

    @staticmethod
    def as_user(uid, argv):
        return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]

    def victim(self, env=None):
        return e2e_helpers.run(self.as_user(self.VICTIM, [FIXTURE, *FAST, *PAIR]), timeout=90,
                               env=env or self.env, encoding="utf-8")

    def test_planted_file_does_not_change_the_victims_output(self):
        planted = os.path.join(self.shared, self.name)
        shutil.copyfile(self.good, planted)
        os.chown(planted, self.ATTACKER, self.ATTACKER)
        before = read_bytes(planted)
        p = self.victim()
        self.assert_exit(p, 0)
        self.assertNotIn("Since the last run", p.stdout, "the attacker's numbers shown")
        self.assertNotIn("last run", p.stderr)
        self.assertEqual(read_bytes(planted), before)
        mine = os.path.join(self.shared, str(self.VICTIM))
        st = os.stat(mine)
        self.assertEqual((st.st_uid, st.st_mode & 0o7777), (self.VICTIM, 0o700))
        self.assertTrue(os.path.isfile(os.path.join(mine, self.name)))

    def test_link_swapped_in_by_another_user_is_not_written_through(self):
        notes = os.path.join(self.home, "notes.txt")
        with open(notes, "w", encoding="utf-8") as f:
            f.write("my notes\n")
        os.chown(notes, self.VICTIM, self.VICTIM)
        os.chmod(notes, 0o600)
        target = os.path.join(self.shared, self.name)
        attacker = subprocess.Popen(self.as_user(self.ATTACKER, ["/usr/bin/python3", "-c", SWAP,
                                                                 target, notes, self.good]))
        try:
            for _ in range(8):
                p = self.victim()
                self.assert_exit(p, 0)
                self.assertEqual(read_bytes(notes), b"my notes\n", "written through the link")
                st = os.stat(notes)
                self.assertEqual((st.st_uid, st.st_mode & 0o777), (self.VICTIM, 0o600))
            self.assertIsNone(attacker.poll(), "the attacker's loop stopped by itself")
        finally:
            attacker.terminate()
            attacker.wait()


if __name__ == "__main__":
    unittest.main()

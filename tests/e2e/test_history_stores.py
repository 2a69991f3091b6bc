"""The run history's readers on both stores: one test body, run against an SQLite file and
against a PostgreSQL database of a private server (e2e_helpers.PostgresServer), and the two
stores holding the same rows must print the same --history-show and write the same --json.

  SqliteReaders, PostgresReaders: the same ReaderTests on each store: two real runs, the runs
      and series shown, "since the last run", --history-show --json and bench-report's history
      page, a step and its confirmation, the gate, rows that are not medians.
  SameOutputTest: the same synthetic rows in both stores give the same output, byte for byte
      (the history's name aside).
  ConcurrentWritersTest: 16 writers x 10 runs into one PostgreSQL database while --history-show
      reads in a loop: 160 runs, none lost or doubled.
  PostgresFaultTest: a refused connection, a wrong password (never printed), a missing
      database, a schema newer than the program, a table altered by hand, a view, a trigger:
      one line naming the server, exit 2, nothing measured or written; the server stopped while
      the run measures: results JSON written, the run not in the history, exit 2.
  PostgresProgramsTest: the programs stored in the database for confirmation: once per hash,
      bounded (0 removes them all), run on another machine only with --history-trust-programs
      and a matching hash.
  OtavaQueryTest: the query docs/results-format.md gives for Apache Otava, run as printed.

The PostgreSQL classes skip, saying why, only when the server's programs are absent (Debian's
postgresql package; scripts/setup_deps.sh test installs it). The server is started once for the
module, as an unprivileged user when the tests run as root, and stopped at the end; each test has
a database of its own.
"""
import atexit
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import e2e_helpers

# The saves and comparisons here check what a run does, not how well the drift canaries read the
# machine: the canaries keep every step on 3 repetitions and the 64 MiB floor (0.5-8 s a run
# less; docs/comparison.md, "Drift canaries").
os.environ.setdefault("BENCH_CANARY_QUICK", "1")

BENCH = os.environ.get("E2E_BENCH", "")
FIXTURE = os.environ.get("E2E_FIXTURE", "")
REPORT = os.environ.get("E2E_REPORT", "")
FAST = ["--warm-up-time", "0.01", "--measurement-time", "0.05", "--nresamples", "100",
        "--color", "never", "--processes", "2"]

# The key that signs the programs kept lives here, and so does the cache of programs kept for a
# PostgreSQL history: not in the user's home.
HOME = tempfile.mkdtemp(prefix="bench-history-stores-")
atexit.register(lambda: subprocess.run(["rm", "-rf", HOME], check=False))


def run(program, *args, env_extra=None, timeout=120, **kw):
    env = e2e_helpers.environ({"XDG_CONFIG_HOME": os.path.join(HOME, "config"),
                               "XDG_CACHE_HOME": os.path.join(HOME, "cache"),
                               **(env_extra or {})},
                              unset=["BENCH_HISTORY", "BENCH_BASELINE_DIR"])
    return e2e_helpers.run([program, *args], timeout=timeout, env=env, **kw)


def version():
    return run(BENCH, "--version").stdout


_SERVER = None


def server():
    """The module's PostgreSQL server, started at its first use and stopped at exit."""
    global _SERVER  # pylint: disable=global-statement
    if _SERVER is None:
        _SERVER = e2e_helpers.PostgresServer().start()
        atexit.register(_SERVER.destroy)
        _SERVER.psql(f"CREATE ROLE {_SERVER.PASSWORD_ROLE} LOGIN PASSWORD "
                     f"'{_SERVER.PASSWORD}'")
    return _SERVER


def skip_without_postgres(case):
    why = e2e_helpers.postgres_missing()
    if why:
        case.skipTest(why)
    if "PostgreSQL history: libpq" not in version():
        case.skipTest("this build has no libpq (bench --version: PostgreSQL history: compiled "
                      "out)")


class SqliteStore:
    """A history file."""
    prefix = ""

    def __init__(self, case):
        if "history: SQLite" not in version():
            case.skipTest("this build has no SQLite (bench --version: history: compiled out)")
        self.target = os.path.join(case.temp_dir("bench-hs-sqlite-"), "runs.db")
        self.name = self.target

    def sql(self, *statements):
        db = sqlite3.connect(self.target)
        try:
            rows = []
            for s in statements:
                rows = db.execute(s).fetchall()
            db.commit()
            return [[str(v) for v in r] for r in rows]
        finally:
            db.close()

    def new_run(self, i, rev, program, facts=None):
        cols = ", ".join(["id", "time", "git_revision", "quick", "program_hash", "hostname",
                          *(facts or {})])
        vals = ", ".join([str(i), "'2026-11-01T00:00:00Z'", f"'{rev}'", "0", f"'{program}'",
                          "'host'", *(repr(v) for v in (facts or {}).values())])
        return f"INSERT INTO runs ({cols}) VALUES ({vals})"

    def after_runs(self):
        return []

    def kept(self):
        """The programs kept for --history-confirm: beside the file."""
        d = self.target + ".programs"
        return sorted(f for f in os.listdir(d) if f.endswith(".program")) \
            if os.path.isdir(d) else []


_DATABASES = [0]


class PostgresStore:
    """A database of its own on the module's server."""
    prefix = "bench_history."

    def __init__(self, case):
        skip_without_postgres(case)
        self.server = server()
        _DATABASES[0] += 1
        self.db = f"t{os.getpid()}_{_DATABASES[0]}"
        self.server.psql(f"CREATE DATABASE {self.db}")
        self.target = self.server.url(self.db)
        self.name = f"postgresql://{self.server.USER}@{self.server.dir}:5432/{self.db}"

    def sql(self, *statements):
        """The rows of the last statement. The ones before it go in one psql call, one
        transaction: a psql call costs 60-130 ms, and synthetic() gives hundreds."""
        if len(statements) > 1:
            self.server.psql(";\n".join(statements[:-1]), db=self.db)
        return self.server.psql(statements[-1], db=self.db) if statements else []

    def new_run(self, i, rev, program, facts=None):
        cols = ", ".join(["id", "uuid", "time", "git_revision", "quick", "program_hash",
                          "hostname", *(facts or {})])
        vals = ", ".join([str(i), "gen_random_uuid()", "'2026-11-01T00:00:00Z'", f"'{rev}'", "0",
                          f"'{program}'", "'host'", *(repr(v) for v in (facts or {}).values())])
        return f"INSERT INTO bench_history.runs ({cols}) VALUES ({vals})"

    def after_runs(self):
        return ["SELECT setval('bench_history.runs_id_seq', (SELECT max(id) FROM "
                "bench_history.runs))"]

    def kept(self):
        """The programs kept for --history-confirm: in this user's cache, never in the
        database; each with its signature."""
        key = hashlib.sha256(self.name.encode()).hexdigest()[:16]
        d = os.path.join(HOME, "cache", "harness", "history-programs", key)
        files = os.listdir(d) if os.path.isdir(d) else []
        progs = sorted(f for f in files if f.endswith(".program"))
        assert sorted(f[:-4] + ".program" for f in files if f.endswith(".mac")) == progs, files
        return progs


PROGRAM_A = "sha256:" + "a" * 64
PROGRAM_B = "sha256:" + "b" * 64


def synthetic(case, store, series, programs=None, facts=None, codes=None):
    """The store made by a real run, its rows then replaced by series: {benchmark: [median_ns,
    ...]}, run i at revision rev{i:02d} measured by programs[i] (PROGRAM_A by default), with
    facts[i] ({column: value} of runs; none by default) and benchmark b's code_hash codes[b][i]
    (None, and a benchmark codes does not name: unknown)."""
    p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", store.target)
    case.assert_exit(p, 0)
    t = store.prefix
    n = max(len(v) for v in series.values())
    stmts = [f"DELETE FROM {t}process_medians" for _ in [0] if not t] + \
        [f"DELETE FROM {t}results", f"DELETE FROM {t}runs"]
    stmts += [store.new_run(i + 1, f"rev{i:02d}", (programs or [PROGRAM_A] * n)[i],
                            (facts or [None] * n)[i]) for i in range(n)]
    stmts += store.after_runs()
    for name, values in series.items():
        code = [f"'{c}'" if c else "NULL" for c in (codes or {}).get(name, [None] * n)]
        stmts += [f"INSERT INTO {t}results (run_id, benchmark, status, median_ns, samples, "
                  f"processes, code_hash) VALUES ({i + 1}, '{name}', 'ok', {v!r}, 100, 10, "
                  f"{code[i]})" for i, v in enumerate(values)]
    store.sql(*stmts)


STEP = {"s/step": [100.0 + (i % 3) * 0.5 for i in range(6)] +
                  [150.0 + (i % 3) * 0.5 for i in range(6)],
        "s/flat": [200.0 + (i % 4) * 0.5 for i in range(12)]}


class ReaderTests:
    """The readers' tests; a subclass names the store (STORE)."""
    STORE = None

    def setUp(self):
        self.store = self.STORE(self)
        self.dir = self.temp_dir("bench-hs-")

    def show(self, *args, **kw):
        p = run(FIXTURE, "--history-show", self.store.target, *args, **kw)
        self.assert_exit(p, 0)
        return p

    def test_runs_then_show_json_and_since_last(self):
        for i in range(2):
            p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", self.store.target)
            self.assert_exit(p, 0)
        self.assertIn(f"Since the last run in the history ({self.store.name}; --no-last "
                      "hides this):", p.stdout)
        self.assertRegex(p.stdout, r"fix/a \(against run 1, ")
        out = os.path.join(self.dir, "series.json")
        p = self.show("--json", out)
        self.assertEqual(p.stderr, "")
        self.assertRegex(p.stdout, r"(?m)^\s+run\s+time\s+revision\s+dirty\s+program\s+host")
        self.assertRegex(p.stdout, r"(?m)^\s+1\s+\d{4}-\d\d-\d\dT")
        self.assertRegex(p.stdout, r"(?m)^\s+2\s+\d{4}-\d\d-\d\dT")
        self.assertIn("fix/a: 2 runs", p.stdout)
        self.assertIn("change points: none (too few runs to tell)", p.stdout)
        doc = e2e_helpers.load_json(out)
        self.assertEqual(doc["format"], "harness-history-series")
        self.assertEqual(doc["history"], self.store.name)
        self.assertEqual([s["id"] for s in doc["series"]], ["fix/a"])
        self.assertEqual(doc["series"][0]["runs"], [1, 2])
        self.assertTrue(all(m > 0 for m in doc["series"][0]["median_ns"]))
        if REPORT:
            html = os.path.join(self.dir, "html")
            p = subprocess.run([sys.executable, REPORT, "--history", out, "--out", html],
                               capture_output=True, text=True, timeout=120, check=False)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(html, "history.html"), encoding="utf-8") as f:
                self.assertIn("fix/a", f.read())

    def test_step_is_found_and_confirmation_reads_the_programs(self):
        synthetic(self, self.store, STEP, [PROGRAM_A] * 6 + [PROGRAM_B] * 6)
        out = os.path.join(self.dir, "series.json")
        p = self.show("--json", out, "--history-confirm", "--confirm-time", "2", "s/")
        self.assertRegex(p.stdout, r"s/step: 12 runs\n(.*\n)*  change point: at run 7 \(first "
                                   r"revision after it rev06\): \+49\.\d\d%")
        self.assertNotRegex(p.stdout, r"s/flat: \d+ runs\n(  .*\n)*  change point:")
        # The programs of runs 6 and 7 were never kept on this machine: not run.
        self.assertRegex(p.stdout, r"s/step: change point at run 7 \(\+49\.\d\d%\), within runs "
                                   r"\d+ to \d+: cannot confirm: the program of run [67] is "
                                   r"not kept")
        series = {s["id"]: s for s in e2e_helpers.load_json(out)["series"]}
        self.assertEqual([c["run"] for c in series["s/step"]["change_points"]], [7])
        self.assertEqual(series["s/step"]["programs"][6], PROGRAM_B)
        # The same program on both sides: the step is the machine's, and nothing runs.
        self.store.sql(f"UPDATE {self.store.prefix}runs SET program_hash = '{PROGRAM_A}'")
        p = self.show("--history-confirm", "--confirm-time", "2", "s/step")
        self.assertRegex(p.stdout, r"s/step: change point at run 7 \([^)]*\), within runs \d+ "
                                   r"to \d+: not a code change: runs \d+ to \d+ measured the "
                                   rf"same program \({PROGRAM_A}\)")

    def test_gate_reads_the_series(self):
        # Earlier runs ten times faster than fix/a measures now: a step the gate fails on its
        # numbers (--confirm-time 0); ten times slower: an improvement, which passes.
        real = run(FIXTURE, *FAST, "--exact", "fix/a", "--output-format", "json")
        self.assert_exit(real, 0)
        median = json.loads(real.stdout)["benchmarks"][0]["estimates"]["median"]["point"]
        for factor, code in ((0.1, 1), (10.0, 0)):
            synthetic(self, self.store, {"fix/a": [median * factor * (1 + i / 1000)
                                                   for i in range(8)]})
            p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", self.store.target,
                    "--history-gate", "10", "--confirm-time", "0")
            self.assert_exit(p, code)
            self.assertIn("history gate: 1 of 1 benchmark tested against up to 10 earlier runs",
                          p.stderr)
            if code:
                self.assertRegex(p.stderr, r"fix/a: regressed against the last 8 runs: \+")
                self.assertIn("fix/a: the step is not confirmed (--confirm-time 0): the numbers "
                              "alone fail the gate", p.stderr)

    def test_code_step_is_confirmed_by_the_programs_kept(self):
        old = e2e_helpers.copy_program(FIXTURE, os.path.join(self.dir, "old"))
        # Twice as slow in cmp/chain (fixture_benches.c reads the marker from its own file).
        new = e2e_helpers.copy_program(FIXTURE, os.path.join(self.dir, "new"), b"E2ESLOW100\n")
        for prog in [old] * 6 + [new] * 6:
            p = run(prog, *FAST, "--exact", "cmp/chain", "--history", self.store.target)
            self.assert_exit(p, 0)
        self.assertEqual(len(self.store.kept()), 2, "one copy of each program")
        # 6 s: at load 19 two pairs did not fit in 3 s ("cannot confirm: fewer than 2 worker
        # pairs"); a clear step stops at the first look whatever the budget.
        p = run(old, "--history-show", self.store.target, "--history-confirm", "--confirm-time",
                "6", "cmp/chain", timeout=300)
        self.assert_exit(p, 0)
        # Run 6 or 7: a run near the step disturbed by other work may tip the search's step by
        # one (a sanitizer run read run 5 at 30x and placed it at run 6); confirming names the
        # programs of runs 6 and 7 either way.
        self.assertRegex(p.stdout, r"cmp/chain: change point at run [67] \(\+\d+\.\d\d%\), "
                                   r"within runs \d+ to \d+: confirmed: \+\d+\.\d\d% .*paired, "
                                   r"programs of runs 6 and 7")
        # Only the newest program stays with --history-programs 1.
        p = run(old, *FAST, "--exact", "cmp/chain", "--history", self.store.target,
                "--history-programs", "1")
        self.assert_exit(p, 0)
        self.assertEqual(len(self.store.kept()), 1)

    def test_shards_of_one_run_are_one_run(self):
        """--shard 1/3, 2/3 and 3/3 with one --run-id: one run with every benchmark once; a part
        run twice is refused whole; the split of an id does not depend on the others."""
        sel = ["fix/|cmp/"]
        every = run(FIXTURE, "--list", *sel).stdout.split()
        parts = [run(FIXTURE, "--list", "--shard", f"{k}/3", *sel).stdout.split()
                 for k in (1, 2, 3)]
        self.assertEqual(sorted(sum(parts, [])), sorted(every))
        # Fewer benchmarks: each stays in its part.
        fewer = run(FIXTURE, "--list", "--shard", "1/3", "fix/").stdout.split()
        self.assertEqual(fewer, [b for b in parts[0] if b.startswith("fix/")])
        for k in (1, 2, 3):
            if not parts[k - 1]:
                continue
            p = run(FIXTURE, *TINY, "--shard", f"{k}/3", "--run-id", "ci-42", *sel,
                    "--history", self.store.target)
            self.assert_exit(p, 0)
        t = self.store.prefix
        rows = self.store.sql(f"SELECT run_id, benchmark FROM {t}results")
        self.assertEqual({r[0] for r in rows}, {"1"})
        self.assertEqual(sorted(r[1] for r in rows), sorted(every))
        out = self.show()
        self.assertRegex(out.stdout, rf"(?m)^\s+1\s.*\s{len(every)}\s+-$")
        # A part again: refused, nothing of it written.
        k = next(i for i in (1, 2, 3) if parts[i - 1])
        p = run(FIXTURE, *TINY, "--shard", f"{k}/3", "--run-id", "ci-42", *sel, "--history",
                self.store.target)
        self.assert_exit(p, 2)
        self.assertRegex(p.stderr, rf"history '{re.escape(self.store.name)}': the run was not "
                                   r"recorded: benchmark '[^']+' is already in run 1 \(--run-id "
                                   r"ci-42\)")
        self.assertEqual(len(self.store.sql(f"SELECT run_id FROM {t}results")), len(every))
        # Three parts at once, as a CI matrix runs them: still one run.
        env = e2e_helpers.environ({"XDG_CONFIG_HOME": os.path.join(HOME, "config"),
                                   "XDG_CACHE_HOME": os.path.join(HOME, "cache")},
                                  unset=["BENCH_HISTORY"])
        procs = [subprocess.Popen([FIXTURE, *TINY, "--shard", f"{k}/3", "--run-id", "ci-44",
                                   *sel, "--history", self.store.target], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for k in (1, 2, 3) if parts[k - 1]]
        for q in procs:
            _, err = q.communicate(timeout=120)
            self.assertEqual(q.returncode, 0, err)
        rows = self.store.sql(f"SELECT x.benchmark FROM {t}results x JOIN {t}runs r ON r.id = "
                              "x.run_id WHERE r.id = (SELECT max(id) FROM "
                              f"{t}runs)")
        self.assertEqual(sorted(r[0] for r in rows), sorted(every))
        self.assertEqual(len(self.store.sql(f"SELECT id FROM {t}runs")), 2)
        # Another run id is another run.
        p = run(FIXTURE, *TINY, "--shard", f"{k}/3", "--run-id", "ci-43", *sel, "--history",
                self.store.target)
        self.assert_exit(p, 0)
        self.assertEqual(len(self.store.sql(f"SELECT id FROM {t}runs")), 3)

    def test_the_gate_on_a_part_judges_its_own_benchmarks(self):
        """--history-gate on the second part of a sharded run judges that part's benchmarks,
        not the first part's, recorded before it (which judged itself)."""
        sel = "^fix/(a|b)$"
        parts = [run(FIXTURE, "--list", "--shard", f"{k}/2", sel).stdout.split() for k in (1, 2)]
        self.assertEqual(parts, [["fix/a"], ["fix/b"]])  # the split of an id never changes
        real = run(FIXTURE, *FAST, sel, "--output-format", "json")
        self.assert_exit(real, 0)
        median = {b["id"]: b["estimates"]["median"]["point"]
                  for b in json.loads(real.stdout)["benchmarks"]}
        # fix/a was ten times faster before (the first part regressed), fix/b ten times slower.
        synthetic(self, self.store, {b: [median[b] * f * (1 + i / 1000) for i in range(8)]
                                     for b, f in (("fix/a", 0.1), ("fix/b", 10.0))})
        gate = ["--history", self.store.target, "--run-id", "ci-7", "--history-gate", "10",
                "--confirm-time", "0"]
        p = run(FIXTURE, *FAST, "--shard", "1/2", sel, *gate)
        self.assert_exit(p, 1)
        self.assertRegex(p.stderr, r"fix/a: regressed against the last 8 runs: \+")
        p = run(FIXTURE, *FAST, "--shard", "2/2", sel, *gate)
        self.assert_exit(p, 0)
        self.assertIn("history gate: 1 of 1 benchmark tested against up to 10 earlier runs",
                      p.stderr)
        self.assertNotIn("fix/a", p.stderr)
        t = self.store.prefix
        self.assertEqual(self.store.sql(f"SELECT benchmark FROM {t}results WHERE run_id = 9 "
                                        "ORDER BY benchmark"), [["fix/a"], ["fix/b"]])

    def test_machines_are_series_and_environment_changes_are_shown(self):
        """Two machines in one history are two series; -O2 changed to -O3 is shown as that
        change, not as a change point; the gate judges the newest run against its machine's
        runs since its environment last changed."""
        a = {"cpu_brand": "CPU-A", "cores": 2, "threads": 2, "memory_bytes": 8 * 2**30,
             "kernel": "6.1", "compiler_flags": "-O2"}
        b = {**a, "cpu_brand": "CPU-B", "cores": 4, "memory_bytes": 16 * 2**30}
        o3 = {**a, "compiler_flags": "-O3"}
        facts = [a, b] * 6 + [o3] * 6
        noise = [1 + (i % 3) * 0.004 for i in range(18)]
        meds = [(100.0 if f is a else 300.0 if f is b else 150.0) * noise[i]
                for i, f in enumerate(facts)]
        synthetic(self, self.store, {"s/m": meds}, facts=facts)
        out = os.path.join(self.dir, "series.json")
        p = self.show("--json", out)
        self.assertIn("s/m on CPU-A, 2 cores, 8 GiB: 12 runs", p.stdout)
        self.assertIn("s/m on CPU-B, 4 cores, 16 GiB: 6 runs", p.stdout)
        self.assertIn("  changed at run 13: flags -O2 -> -O3 (the step there is this change's, "
                      "not a change point)", p.stdout)
        self.assertNotIn("change point:", p.stdout)
        series = e2e_helpers.load_json(out)["series"]
        self.assertEqual([(s["machine"], len(s["runs"])) for s in series],
                         [("CPU-A, 2 cores, 8 GiB", 12), ("CPU-B, 4 cores, 16 GiB", 6)])
        self.assertEqual(series[0]["changes"], [{"index": 6, "run": 13,
                                                 "what": "flags -O2 -> -O3",
                                                 "step_removed": True}])
        self.assertEqual(series[0]["change_points"], [])
        self.assertEqual(series[1]["changes"], [])
        # Eight runs on another machine: the gate has no earlier run of this one to judge by.
        synthetic(self, self.store, {"fix/a": [1.0] * 8}, facts=[b] * 8)
        p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", self.store.target,
                "--history-gate", "10", "--confirm-time", "0")
        self.assert_exit(p, 0)
        self.assertIn("fix/a: not gated: 0 earlier runs in the history, fewer than 5", p.stderr)

    def test_benchmark_code_changes_are_shown_beside_their_steps(self):
        """A benchmark whose code identity changed between two runs that know it is shown as
        "benchmark code changed" at the first run of the new code (a run that does not know it
        lies between them), and its step stays a change point: the code under test changing is
        what a history is for. A change of the environment at the same run removes the step.
        The gate does not restart its window at a code change: it fails the run that made the
        code slower."""
        h1, h2 = "1" * 64, "2" * 64
        noise = [1 + (i % 3) * 0.004 for i in range(13)]
        meds = [(100.0 if i < 7 else 150.0) * noise[i] for i in range(13)]
        synthetic(self, self.store, {"s/c": meds, "s/flat": [200.0 * x for x in noise]},
                  codes={"s/c": [h1] * 6 + [None] + [h2] * 6})
        out = os.path.join(self.dir, "series.json")
        p = self.show("--json", out)
        self.assertIn("s/c: 13 runs", p.stdout)
        self.assertIn("  benchmark code changed at run 8\n", p.stdout)
        self.assertRegex(p.stdout, r"change point: at run 8 \(first revision after it [^)]*\): "
                                   r"\+50\.\d\d%")
        series = {s["id"]: s for s in e2e_helpers.load_json(out)["series"]}
        self.assertEqual(series["s/c"]["changes"], [{"index": 7, "run": 8,
                                                     "what": "benchmark code changed",
                                                     "step_removed": False}])
        self.assertEqual([c["index"] for c in series["s/c"]["change_points"]], [7])
        self.assertEqual(series["s/flat"]["changes"], [])
        # With flags changed at the same run, both are said, and the step is the flags'.
        t = self.store.prefix
        self.store.sql(f"UPDATE {t}runs SET compiler_flags = CASE WHEN id < 8 THEN '-O2' "
                       "ELSE '-O3' END")
        p = self.show("s/c")
        self.assertIn("  changed at run 8: flags -O2 -> -O3, benchmark code changed (the step",
                      p.stdout)
        self.assertNotIn("change point:", p.stdout)
        # Ten times faster before, with a code change inside the window (runs 7 and 8): the gate
        # still judges the newest run against all eight and fails it (a window restarted at the
        # code change would have said "not gated: 2 earlier runs").
        real = run(FIXTURE, *FAST, "--exact", "fix/a", "--output-format", "json")
        self.assert_exit(real, 0)
        median = json.loads(real.stdout)["benchmarks"][0]["estimates"]["median"]["point"]
        synthetic(self, self.store, {"fix/a": [median * 0.1 * (1 + i / 1000) for i in range(8)]},
                  codes={"fix/a": [h1] * 6 + [h2] * 2})
        p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", self.store.target,
                "--history-gate", "10", "--confirm-time", "0")
        self.assert_exit(p, 1)
        self.assertRegex(p.stderr, r"fix/a: regressed against the last 8 runs: \+")

    def test_an_older_schema_is_brought_forward(self):
        """A history of schema 1 (no code_hash) is brought forward to 2, its rows kept with the
        code unknown: an SQLite file when it is opened, a PostgreSQL database by a run that
        writes (its readers are told to make one)."""
        p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", self.store.target)
        self.assert_exit(p, 0)
        t = self.store.prefix
        self.store.sql(f"ALTER TABLE {t}results DROP COLUMN code_hash",
                       f"ALTER TABLE {t}runs DROP COLUMN virtualization",
                       *[f"DROP TABLE {t}programs" for _ in [0] if t],
                       f"UPDATE {t}meta SET value = '1' WHERE key = 'schema_version'")
        p = run(FIXTURE, "--history-show", self.store.target)
        if t:
            self.assert_exit(p, 2)
            self.assertIn("is older than this program's (a run with --history migrates it)",
                          p.stderr)
            p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", self.store.target)
        self.assert_exit(p, 0)
        self.assertEqual(self.store.sql(f"SELECT value FROM {t}meta WHERE key = "
                                        "'schema_version'"), [["3" if t else "2"]])
        self.assertEqual(self.store.sql(f"SELECT run_id, code_hash FROM {t}results WHERE "
                                        "run_id = 1"), [["1", "None" if not t else ""]])
        p = self.show()
        self.assertIn("fix/a: ", p.stdout)

    def test_a_vm_is_never_pooled_with_bare_metal(self):
        """A run records the hypervisor it ran under (here a prepared sysfs tree's DMI says
        QEMU); the same CPU, cores and memory under a hypervisor and on bare metal are two
        series, named so."""
        tree = self.temp_dir("bench-hs-tree-")
        os.makedirs(os.path.join(tree, "class", "dmi", "id"))
        with open(os.path.join(tree, "class", "dmi", "id", "sys_vendor"), "w",
                  encoding="utf-8") as f:
            f.write("QEMU\n")
        p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", self.store.target,
                env_extra={"BENCH_SYSFS_ROOT": tree})
        self.assert_exit(p, 0)
        t = self.store.prefix
        self.assertEqual(self.store.sql(f"SELECT virtualization FROM {t}runs"), [["qemu"]])
        bare = {"cpu_brand": "CPU-A", "cores": 2, "threads": 2, "memory_bytes": 8 * 2**30,
                "virtualization": "none"}
        vm = {**bare, "virtualization": "kvm"}
        facts = [bare, vm] * 6
        meds = [(100.0 if f is bare else 130.0) * (1 + (i % 3) * 0.004)
                for i, f in enumerate(facts)]
        synthetic(self, self.store, {"s/v": meds}, facts=facts)
        out = os.path.join(self.dir, "series.json")
        p = self.show("--json", out)
        self.assertIn("s/v on CPU-A, 2 cores, 8 GiB, bare metal: 6 runs", p.stdout)
        self.assertIn("s/v on CPU-A, 2 cores, 8 GiB, VM (kvm): 6 runs", p.stdout)
        self.assertNotIn("change point:", p.stdout)
        series = e2e_helpers.load_json(out)["series"]
        self.assertEqual([(s["machine"], s["runs"]) for s in series],
                         [("CPU-A, 2 cores, 8 GiB, bare metal", [1, 3, 5, 7, 9, 11]),
                          ("CPU-A, 2 cores, 8 GiB, VM (kvm)", [2, 4, 6, 8, 10, 12])])

    def assert_bmf(self, got, want):
        """BMF documents equal in their keys, and in their numbers to 12 digits (cJSON prints
        15 significant digits where they read back within its tolerance)."""
        self.assertEqual({k: {m: sorted(v) for m, v in ms.items()} for k, ms in got.items()},
                         {k: {m: sorted(v) for m, v in ms.items()} for k, ms in want.items()})
        for k, ms in want.items():
            for m, v in ms.items():
                for f, x in v.items():
                    self.assertAlmostEqual(got[k][m][f] / x, 1.0, delta=1e-12, msg=(k, m, f))

    def test_newest_run_in_the_bencher_metric_format(self):
        """--history-show --output-format bmf: the newest run's ok benchmarks that the FILTERs
        pick, their medians and intervals as stored (latency, ns) and iterations per second
        (throughput, the interval's ends swapped); a benchmark without an interval has a value
        alone."""
        synthetic(self, self.store, {"s/a": [100.0, 110.0, 120.0], "s/b": [7.0, 8.0, 2.5],
                                     "s/c": [1.0, 1.0, 1.0]})
        t = self.store.prefix
        self.store.sql(f"UPDATE {t}results SET lower_ns = 115.5, upper_ns = 126.25 WHERE "
                       "run_id = 3 AND benchmark = 's/a'",
                       f"UPDATE {t}results SET status = 'failed', median_ns = NULL WHERE "
                       "run_id = 3 AND benchmark = 's/c'")
        p = self.show("--output-format", "bmf")
        self.assertEqual(p.stderr, "")
        self.assert_bmf(json.loads(p.stdout), {
            "s/a": {"latency": {"value": 120.0, "lower_value": 115.5, "upper_value": 126.25},
                    "throughput": {"value": 1e9 / 120.0, "lower_value": 1e9 / 126.25,
                                   "upper_value": 1e9 / 115.5}},
            "s/b": {"latency": {"value": 2.5}, "throughput": {"value": 1e9 / 2.5}}})
        p = self.show("--output-format", "bmf", "s/b")
        self.assertEqual(list(json.loads(p.stdout)), ["s/b"])
        p = run(FIXTURE, "--history-show", self.store.target, "--output-format", "csv")
        self.assert_exit(p, 2)
        self.assertIn("--history-show prints its report, or with --output-format bmf", p.stderr)

    def test_since_the_last_run_on_this_machine(self):
        for _ in range(2):
            p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", self.store.target)
            self.assert_exit(p, 0)
        self.assertRegex(p.stdout, r"fix/a \(against run 1, ")
        # The newest run came from another machine: the block compares with this one's.
        self.store.sql(f"UPDATE {self.store.prefix}runs SET cpu_brand = 'Another CPU' "
                       "WHERE id = 2")
        p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", self.store.target)
        self.assert_exit(p, 0)
        self.assertRegex(p.stdout, r"fix/a \(against run 1, ")

    def test_rows_that_are_not_medians(self):
        synthetic(self, self.store, {"s/a": [1000.0 + i for i in range(8)]})
        t = self.store.prefix
        self.store.sql(f"UPDATE {t}results SET median_ns = -1 WHERE run_id = 3",
                       f"UPDATE {t}results SET median_ns = 0 WHERE run_id = 5")
        p = self.show()
        warnings = p.stderr.splitlines()
        self.assertEqual(len(warnings), 2, p.stderr)
        self.assertRegex(warnings[0], rf"warning: history '{re.escape(self.store.name)}': run 3, "
                                      r"benchmark 's/a': median '-1(\.0)?' is not a positive "
                                      r"number; the row is skipped$")
        self.assertIn("s/a: 6 runs", p.stdout)


class SqliteReaders(ReaderTests, e2e_helpers.Case):
    STORE = SqliteStore


class PostgresReaders(ReaderTests, e2e_helpers.Case):
    STORE = PostgresStore


class SameOutputTest(e2e_helpers.Case):
    def test_same_rows_same_output(self):
        outputs = []
        for store in (SqliteStore(self), PostgresStore(self)):
            synthetic(self, store, STEP, [PROGRAM_A] * 6 + [PROGRAM_B] * 6)
            out = os.path.join(self.temp_dir("bench-hs-same-"), "series.json")
            p = run(FIXTURE, "--history-show", store.target, "--json", out)
            self.assert_exit(p, 0)
            doc = e2e_helpers.load_json(out)
            self.assertEqual(doc.pop("history"), store.name)
            outputs.append((p.stdout, p.stderr, doc))
        self.assertEqual(outputs[0], outputs[1])
        self.assertIn("change point: at run 7", outputs[0][0])


TEN = ["fix/a", "fix/add", "fix/b", "fix/batched", "fix/copy/8", "fix/copy/64", "fix/copy/1024",
       "fix/counted", "cmp/chain", "cmp/steady"]
TINY = ["--quick", "--warm-up-time", "0.001", "--measurement-time", "0.001", "--nresamples", "10",
        "--processes", "1", "--color", "never", "--no-last"]


class ConcurrentWritersTest(e2e_helpers.Case):
    WRITERS = 16
    RUNS = 10

    def test_many_writers_and_a_reader(self):
        # The 16 first runs also race to make the schema (an advisory lock makes it once); the
        # reader may start before there is one, and then says so.
        store = PostgresStore(self)
        failures, reads = [], []
        done = threading.Event()
        # The writers run with no objdump on PATH: what they write is the same rows with the
        # code identity unknown (code_hash NULL), which nothing here reads, and each run is
        # spared its disassembly of the program (two thirds of a run's CPU time; 160 runs on
        # 2 CPUs).
        no_tools = self.temp_dir("bench-hs-path-")

        def writer(k):
            for j in range(self.RUNS):
                q = run(FIXTURE, *TINY, "--exact", *TEN, "--history", store.target,
                        env_extra={"BENCH_GIT_REVISION": f"w{k:02d}-{j}", "PATH": no_tools},
                        timeout=300)
                if q.returncode != 0:
                    failures.append(f"writer {k} run {j}: exit {q.returncode}: {q.stderr}")

        def reader():
            while not done.is_set():
                q = run(FIXTURE, "--history-show", store.target, "fix/a", timeout=300)
                reads.append(q.returncode)
                if "holds no run history (no schema bench_history" in q.stderr:
                    continue
                if q.returncode != 0 or "warning" in q.stderr:
                    failures.append(f"reader: exit {q.returncode}: {q.stderr}")

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(self.WRITERS)]
        r = threading.Thread(target=reader)
        r.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        done.set()
        r.join()
        self.assertEqual(failures, [])
        self.assertGreater(len(reads), 0)
        revs = [row[0] for row in store.sql("SELECT git_revision FROM bench_history.runs")]
        want = sorted(f"w{k:02d}-{j}" for k in range(self.WRITERS) for j in range(self.RUNS))
        self.assertEqual(sorted(revs), want)  # none lost, none twice
        (uuids, ids, results, incomplete), = store.sql(
            "SELECT count(DISTINCT uuid), count(DISTINCT id), (SELECT count(*) FROM "
            "bench_history.results), (SELECT count(*) FROM bench_history.runs u WHERE (SELECT "
            "count(*) FROM bench_history.results x WHERE x.run_id = u.id) <> 10) FROM "
            "bench_history.runs")
        self.assertEqual((uuids, ids, results, incomplete), ("160", "160", "1600", "0"))


class PostgresProgramsTest(e2e_helpers.Case):
    """The programs a PostgreSQL history stores for confirmation: one row per hash, the newest
    --history-programs kept; another machine runs the database's copy only with
    --history-trust-programs (whoever writes the database could put any program there), and
    never one whose bytes do not hash to the hash it is stored under."""

    def setUp(self):
        self.store = PostgresStore(self)
        self.dir = self.temp_dir("bench-hs-programs-")

    @staticmethod
    def sha(path):
        with open(path, "rb") as f:
            return "sha256:" + hashlib.sha256(f.read()).hexdigest()

    def record(self, prog, *args, bench="fix/a"):
        p = run(prog, *FAST, "--exact", bench, "--history", self.store.target, *args)
        self.assert_exit(p, 0)
        self.assertNotIn("warning: history", p.stderr)

    def stored(self):
        return self.store.sql("SELECT hash FROM bench_history.programs ORDER BY kept, hash")

    def test_stored_once_then_the_oldest_removed_past_the_bound(self):
        self.record(FIXTURE)
        self.record(FIXTURE)
        h = self.sha(FIXTURE)
        # Its bytes as the program's file holds them, once, from the first run that had it.
        self.assertEqual(self.store.sql(
            "SELECT hash, size_bytes, first_run, encode(sha256(program), 'hex') FROM "
            "bench_history.programs"), [[h, str(os.path.getsize(FIXTURE)), "1", h[7:]]])
        a = e2e_helpers.copy_program(FIXTURE, os.path.join(self.dir, "a"), b"\0a")
        b = e2e_helpers.copy_program(FIXTURE, os.path.join(self.dir, "b"), b"\0b")
        self.record(a)
        self.record(b)
        self.assertEqual(self.stored(), [[h], [self.sha(a)], [self.sha(b)]])
        # Used again, the fixture is the newest: with room for 2, a (least recently used) goes.
        self.record(FIXTURE, "--history-programs", "2")
        self.assertEqual(self.stored(), [[self.sha(b)], [h]])

    def test_zero_removes_the_programs_kept(self):
        # "0 keeps none" (docs/cli.md): the copies earlier runs kept go from this machine's
        # cache and from the database.
        self.record(FIXTURE)
        self.record(e2e_helpers.copy_program(FIXTURE, os.path.join(self.dir, "a"), b"\0a"))
        self.assertEqual(len(self.stored()), 2)
        self.assertEqual(len(self.store.kept()), 2)
        self.record(FIXTURE, "--history-programs", "0")
        self.assertEqual(self.stored(), [])
        self.assertEqual(self.store.kept(), [])

    def test_a_program_too_large_is_kept_on_this_machine_only(self):
        big = e2e_helpers.copy_program(FIXTURE, os.path.join(self.dir, "big"),
                                       b"\0" * (64 * 1024 * 1024 + 1))
        p = run(big, *FAST, "--exact", "fix/a", "--history", self.store.target)
        self.assert_exit(p, 0)
        lines = [x for x in p.stderr.splitlines() if "not stored in the database" in x]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("larger than the 64 MiB stored in the database: it is kept on this "
                      "machine only", lines[0])
        self.assertEqual(self.store.sql("SELECT count(*) FROM bench_history.programs"), [["0"]])
        self.assertEqual(len(self.store.kept()), 1)

    def test_the_gate_on_another_machine(self):
        """The gate's confirmation follows the same rule: the previous run's program, stored by
        another machine, runs only with --history-trust-programs."""
        old = e2e_helpers.copy_program(FIXTURE, os.path.join(self.dir, "old"), b"\0old")
        self.record(old)
        real = run(FIXTURE, *FAST, "--exact", "fix/a", "--output-format", "json")
        self.assert_exit(real, 0)
        median = json.loads(real.stdout)["benchmarks"][0]["estimates"]["median"]["point"]
        # Earlier runs of old ten times faster: a step the gate confirms before it fails.
        synthetic(self, self.store, {"fix/a": [median * 0.1 * (1 + i / 1000) for i in range(8)]},
                  programs=[self.sha(old)] * 8)
        fresh = self.temp_dir("bench-hs-fresh-")
        env = {"XDG_CACHE_HOME": os.path.join(fresh, "cache"),
               "XDG_CONFIG_HOME": os.path.join(fresh, "config")}
        gate = [*FAST, "--exact", "fix/a", "--history", self.store.target, "--history-gate",
                "5", "--confirm-time", "1"]
        p = run(FIXTURE, *gate, env_extra=env, timeout=300)
        self.assert_exit(p, 1)
        self.assertIn("fix/a: the step is not confirmed (the program of run 8 is not run: no run "
                      "on this machine recorded it", p.stderr)
        self.assertIn("the numbers alone fail the gate", p.stderr)
        self.store.sql("DELETE FROM bench_history.results WHERE run_id > 8",
                       "DELETE FROM bench_history.runs WHERE id > 8")
        p = run(FIXTURE, *gate, "--history-trust-programs", env_extra=env, timeout=300)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        self.assertIn("fix/a: confirming the step: the program of run 8 against this one, paired",
                      p.stderr)
        self.assertRegex(p.stderr, r"fix/a: [a-z ]+: [-+]\d+\.\d\d% .* paired against run 8's "
                                   r"program")

    def test_another_machine_runs_the_database_copy_only_when_trusted(self):
        old = e2e_helpers.copy_program(FIXTURE, os.path.join(self.dir, "old"))
        new = e2e_helpers.copy_program(FIXTURE, os.path.join(self.dir, "new"), b"E2ESLOW100\n")
        self.record(old, bench="cmp/chain")
        self.record(new, bench="cmp/chain")
        ho, hn = self.sha(old), self.sha(new)
        synthetic(self, self.store, {"cmp/chain": STEP["s/step"]}, programs=[ho] * 6 + [hn] * 6)
        # Another machine: another user's cache and key, where none of these programs ran.
        fresh = self.temp_dir("bench-hs-fresh-")
        env = {"XDG_CACHE_HOME": os.path.join(fresh, "cache"),
               "XDG_CONFIG_HOME": os.path.join(fresh, "config")}
        confirm = ["--history-show", self.store.target, "--history-confirm", "--confirm-time",
                   "1", "cmp/chain"]
        p = run(FIXTURE, *confirm, env_extra=env, timeout=300)
        self.assert_exit(p, 0)
        self.assertIn("cmp/chain: change point at run 7", p.stdout)
        self.assertIn("cannot confirm: the program of run 6 is not run: no run on this machine "
                      "recorded it, and whoever may write the database may put any program "
                      "there (--history-trust-programs runs the database's copy)", p.stdout)
        self.assertNotIn("paired", p.stdout)
        p = run(FIXTURE, *confirm, "--history-trust-programs", env_extra=env, timeout=300)
        self.assert_exit(p, 0)
        self.assertRegex(p.stdout, r"cmp/chain: change point at run 7 .*: (confirmed|not "
                                   r"reproduced|inconclusive)[^\n]* paired, programs of runs 6 "
                                   r"and 7")
        # A byte of old's copy changed in the database: refused on its hash, in one line.
        self.store.sql("UPDATE bench_history.programs SET program = set_byte(program, 1000, "
                       f"255 - get_byte(program, 1000)) WHERE hash = '{ho}'")
        p = run(FIXTURE, *confirm, "--history-trust-programs", env_extra=env, timeout=300)
        self.assert_exit(p, 0)
        lines = [x for x in p.stdout.splitlines() if "cannot confirm" in x]
        self.assertEqual(len(lines), 1, p.stdout)
        self.assertIn("cannot confirm: the database's copy of the program of run 6 is not run: "
                      "it is not the one it measured", lines[0])
        self.assertNotIn("paired", p.stdout)
        # The flag is for a confirmation only.
        p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history-trust-programs")
        self.assert_exit(p, 2)
        self.assertIn("--history-trust-programs needs --history-confirm or --history-gate K",
                      p.stderr)


class PostgresFaultTest(e2e_helpers.Case):
    def setUp(self):
        self.store = PostgresStore(self)
        self.dir = self.temp_dir("bench-hs-fault-")
        self.json = os.path.join(self.dir, "out.json")

    def runs(self):
        return int(self.store.sql("SELECT count(*) FROM bench_history.runs")[0][0])

    def refused(self, target, *why):
        """A run with history target stops before measuring: exit 2, one line naming the
        history and each of why, no results file."""
        p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", target, "--json", self.json)
        self.assert_exit(p, 2)
        lines = [x for x in p.stderr.splitlines() if "warning: the machine is busy" not in x]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertRegex(lines[0], r"^e2e_fixture: history 'postgresql://[^']*': ")
        for w in why:
            self.assertIn(w, lines[0])
        self.assertNotIn("fix/a", p.stdout)
        self.assertFalse(os.path.exists(self.json))
        return lines[0]

    def made(self):
        p = run(FIXTURE, *TINY, "--exact", "fix/a", "--history", self.store.target)
        self.assert_exit(p, 0)
        self.assertEqual(self.runs(), 1)

    def test_libpq_is_loaded_only_for_a_postgresql_history(self):
        """The program does not link libpq (every start of it, a worker's included, would load
        libpq and the twenty libraries it brings): it is loaded when a history is opened on a
        URL. A libpq that cannot be loaded, or that lacks a function, refuses such a history in
        one line naming the library; a file history, or none, never looks for it."""
        needed = subprocess.run(["readelf", "-d", FIXTURE], capture_output=True, text=True,
                                check=True).stdout
        self.assertIn("(NEEDED)", needed)
        self.assertNotIn("libpq", needed)
        libs = os.path.join(self.dir, "libs")
        os.mkdir(libs)
        with open(os.path.join(libs, "libpq.so.5"), "w", encoding="utf-8") as f:
            f.write("not a shared library\n")
        broken = {"LD_LIBRARY_PATH": libs}
        line = self.refused_env(broken, "libpq.so.5 cannot be loaded (Debian package libpq5)")
        self.assertIn("postgresql://", line)
        # A library of that name without libpq's functions.
        src = os.path.join(self.dir, "fake.c")
        with open(src, "w", encoding="utf-8") as f:
            f.write("int bench_fake_libpq;\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", os.path.join(libs, "libpq.so.5"), src],
                       check=True)
        self.refused_env(broken, "libpq.so.5 has no function PQ")
        # A file history under the same environment: libpq is never looked for.
        p = run(FIXTURE, *TINY, "--exact", "fix/a", "--history",
                os.path.join(self.dir, "h.sqlite"), env_extra=broken)
        self.assert_exit(p, 0)
        self.assertNotIn("libpq", p.stderr)

    def refused_env(self, env, *why):
        """refused(), with env added to the program's environment."""
        p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", self.store.target, "--json",
                self.json, env_extra=env)
        self.assert_exit(p, 2)
        lines = [x for x in p.stderr.splitlines() if "warning: the machine is busy" not in x]
        self.assertEqual(len(lines), 1, p.stderr)
        for w in why:
            self.assertIn(w, lines[0])
        self.assertFalse(os.path.exists(self.json))
        return lines[0]

    def test_connection_faults(self):
        srv = self.store.server
        line = self.refused(srv.url(self.store.db).replace(srv.dir, srv.dir + "-absent"),
                            "cannot connect", "No such file or directory")
        self.assertIn(srv.dir + "-absent", line)
        line = self.refused(srv.url(self.store.db, user=srv.PASSWORD_ROLE, password="hunter2"),
                            "password authentication failed")
        self.assertNotIn("hunter2", line)
        self.refused(srv.url("nosuchdb"), 'database "nosuchdb" does not exist')
        # The right password: recorded, and named nowhere in what the run writes.
        p = run(FIXTURE, *TINY, "--exact", "fix/a", "--json", self.json, "--history",
                srv.url(self.store.db, user=srv.PASSWORD_ROLE, password=srv.PASSWORD))
        self.assertEqual(p.returncode, 2, p.stderr)  # pw may not make the schema: refused
        self.assertNotIn(srv.PASSWORD, p.stdout + p.stderr)
        self.store.sql(f"GRANT ALL ON DATABASE {self.store.db} TO {srv.PASSWORD_ROLE}")
        p = run(FIXTURE, *TINY, "--exact", "fix/a", "--json", self.json, "--history",
                srv.url(self.store.db, user=srv.PASSWORD_ROLE, password=srv.PASSWORD))
        self.assert_exit(p, 0)
        with open(self.json, encoding="utf-8") as f:
            self.assertNotIn(srv.PASSWORD, f.read())
        self.assertNotIn(srv.PASSWORD, p.stdout + p.stderr)

    def test_schema_faults(self):
        self.made()
        t = "bench_history."
        for fix, undo, why in (
                (f"UPDATE {t}meta SET value = '99' WHERE key = 'schema_version'",
                 f"UPDATE {t}meta SET value = '3' WHERE key = 'schema_version'",
                 "is version 99, newer than this program's 3"),
                (f"ALTER TABLE {t}results ALTER COLUMN median_ns TYPE text",
                 f"ALTER TABLE {t}results ALTER COLUMN median_ns TYPE double precision USING "
                 "median_ns::double precision", "were altered"),
                (f"ALTER TABLE {t}results RENAME TO x; CREATE VIEW {t}results AS SELECT * "
                 f"FROM {t}x",
                 f"DROP VIEW {t}results; ALTER TABLE {t}x RENAME TO results",
                 "is not a table"),
                (f"CREATE FUNCTION {t}f() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN "
                 f"NEW; END'; CREATE TRIGGER tr BEFORE INSERT ON {t}runs FOR EACH ROW EXECUTE "
                 f"FUNCTION {t}f()", f"DROP TRIGGER tr ON {t}runs", "has triggers or rules")):
            with self.subTest(why=why):
                self.store.sql(fix)
                self.refused(self.store.target, why)
                p = run(FIXTURE, "--history-show", self.store.target)
                self.assert_exit(p, 2)
                self.assertIn(why, p.stderr)
                self.store.sql(undo)
                self.assertEqual(self.runs(), 1)
        p = run(FIXTURE, "--history-show", self.store.target)
        self.assert_exit(p, 0)

    def test_hostile_rows_are_read_safely(self):
        synthetic(self, self.store, {"s/a": [1000.0 + i for i in range(8)]})
        t = "bench_history."
        self.store.sql(f"UPDATE {t}results SET median_ns = 'NaN' WHERE run_id = 2",
                       f"UPDATE {t}results SET median_ns = 'Infinity' WHERE run_id = 3",
                       f"UPDATE {t}runs SET git_revision = repeat('r', 20000000) WHERE id = 4",
                       f"UPDATE {t}runs SET hostname = E'\\x1b[31mred' WHERE id = 5",
                       f"INSERT INTO {t}results (run_id, benchmark, status, median_ns, samples,"
                       f" processes) VALUES (6, repeat('b', 2000), 'ok', 5, 1, 1)")
        p = run(FIXTURE, "--history-show", self.store.target, "s/")
        self.assert_exit(p, 0)
        self.assertIn("run 2, benchmark 's/a': median 'NaN' is not a positive number", p.stderr)
        self.assertIn("run 3, benchmark 's/a': median 'Infinity'", p.stderr)
        self.assertIn("s/a: 6 runs", p.stdout)
        self.assertNotIn("\x1b", p.stdout)
        self.assertLess(max(len(x) for x in p.stdout.splitlines()), 2000)

    def test_server_gone_while_measuring(self):
        self.made()
        srv = self.store.server
        proc = subprocess.Popen(
            [FIXTURE, "--warm-up-time", "0.01", "--measurement-time", "4", "--processes", "2",
             "--color", "never", "--exact", "fix/a", "--history", self.store.target, "--json",
             self.json],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=e2e_helpers.environ({"XDG_CONFIG_HOME": os.path.join(HOME, "config"),
                                     "XDG_CACHE_HOME": os.path.join(HOME, "cache")},
                                    unset=["BENCH_HISTORY"]))
        try:
            time.sleep(1.5)  # the history is open and checked within milliseconds
            self.assertIsNone(proc.poll(), "the run ended before the server was stopped")
            srv.stop("immediate")
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
            srv.start()
        self.assertEqual(proc.returncode, 2, err)
        self.assertRegex(err, r"history 'postgresql://[^']*': the run was not recorded: ")
        self.assertIn("fix/a", out)  # the terminal report
        self.assertEqual(e2e_helpers.load_json(self.json)["benchmarks"][0]["id"], "fix/a")
        self.assertEqual(self.runs(), 1)  # not at all


class OtavaQueryTest(e2e_helpers.Case):
    def test_the_documented_query_reads_a_series(self):
        """The query docs/results-format.md gives for tools that read a series from PostgreSQL
        (Apache Otava's PostgreSQL tests), run as printed there against a database the program
        wrote: one row per ok run of the benchmark, oldest first, with its time as a timestamp,
        run, revision, program and median as the history holds them."""
        store = PostgresStore(self)
        for _ in range(2):
            p = run(FIXTURE, *TINY, "--exact", "fix/a", "--exact", "fix/b", "--history",
                    store.target)
            self.assert_exit(p, 0)
        doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                           "results-format.md")
        with open(doc, encoding="utf-8") as f:
            text = f.read()
        section = text.split("#### Reading it from other tools", 1)[1]
        query = re.search(r"```sql\n(.*?)```", section, re.S).group(1)
        self.assertIn("'harness/memset/4096'", query)
        rows = store.sql(query.replace("'harness/memset/4096'", "'fix/a'"))
        want = store.sql("SELECT r.id, r.program_hash, x.median_ns FROM bench_history.results x "
                         "JOIN bench_history.runs r ON r.id = x.run_id WHERE x.benchmark = "
                         "'fix/a' ORDER BY r.id")
        self.assertEqual([(r[1], r[3], float(r[4])) for r in rows],
                         [(w[0], w[1], float(w[2])) for w in want])
        self.assertEqual([r[1] for r in rows], ["1", "2"])
        for r in rows:
            self.assertRegex(r[0], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00$")


class CopyTest(e2e_helpers.Case):
    def copy(self, src, dst, *expect):
        p = run(FIXTURE, "--history-copy", src.target, "--history", dst.target)
        self.assert_exit(p, 0)
        self.assertEqual(p.stdout, f"history copy: {expect[0]} runs copied, {expect[1]} already "
                                   f"there ({src.name} -> {dst.name})\n")

    def shown(self, store):
        out = os.path.join(self.temp_dir("bench-hs-copy-"), "series.json")
        p = run(FIXTURE, "--history-show", store.target, "--json", out)
        self.assert_exit(p, 0)
        doc = e2e_helpers.load_json(out)
        self.assertEqual(doc.pop("history"), store.name)
        return p.stdout, doc

    def test_sqlite_to_postgres_and_back(self):
        """A 200-run history (two of them real, with their process medians) copied from SQLite
        into PostgreSQL and back shows the same series, change points and JSON; a copy again
        copies nothing; a target that holds other runs is refused."""
        first, pg, back = SqliteStore(self), PostgresStore(self), SqliteStore(self)
        a = {"cpu_brand": "CPU-A", "cores": 2, "memory_bytes": 8 * 2**30, "kernel": "6.1"}
        synthetic(self, first, {"s/x": [100.0 + (i % 7) * 0.31 + (20 if i >= 120 else 0)
                                        for i in range(198)],
                                "s/y": [1e-3 * (1 + i % 5) for i in range(198)]},
                  facts=[a] * 100 + [{**a, "kernel": "6.8"}] * 98)
        for _ in range(2):
            p = run(FIXTURE, *FAST, "--exact", "fix/a", "--history", first.target)
            self.assert_exit(p, 0)
        self.copy(first, pg, 200, 0)
        self.copy(pg, back, 200, 0)
        self.copy(first, pg, 0, 200)
        want = self.shown(first)
        self.assertIn("s/x: 198 runs", want[0])
        self.assertIn("changed at run 101: kernel 6.1 -> 6.8", want[0])
        self.assertIn("change point: at run 121", want[0])
        self.assertEqual(self.shown(pg), want)
        self.assertEqual(self.shown(back), want)
        q = "SELECT run_id, benchmark, process, median_ns FROM process_medians ORDER BY 1, 2, 3"
        self.assertEqual(len(first.sql(q)), 4)
        self.assertEqual(back.sql(q), first.sql(q))
        # Runs recorded into the copy continue after the ids copied.
        p = run(FIXTURE, *TINY, "--exact", "fix/a", "--history", pg.target)
        self.assert_exit(p, 0)
        self.assertEqual(pg.sql("SELECT max(id) FROM bench_history.runs"), [["201"]])
        # Another history's run 1 is not ours: refused, nothing copied over it.
        other = SqliteStore(self)
        p = run(FIXTURE, *TINY, "--exact", "fix/b", "--history", other.target)
        self.assert_exit(p, 0)
        p = run(FIXTURE, "--history-copy", other.target, "--history", pg.target)
        self.assert_exit(p, 2)
        self.assertIn("holds another run 1 (another time or program): it is not a copy", p.stderr)


if __name__ == "__main__":
    unittest.main()

"""e2e_helpers.py: what the end-to-end tests share: running a program with what it prints
captured, the environment a run gets, what a program's messages begin with, executable copies of
a program and small scripts, results by benchmark id, the published schema check, and a TestCase
with the exit-code assertion and a temporary directory per test, and a private PostgreSQL server
for the tests of a shared run history (PostgresServer).

The tests run as scripts (ctest: python3 tests/e2e/test_X.py -v CLASS), so this directory is
first on sys.path and `import e2e_helpers` finds this file. Each test keeps its own timeouts, its
own programs and its own environment policy; these helpers only do the common part of each.
Standard library only (jsonschema is used when it is installed).
"""
import json
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import unittest

# A sanitizer build (E2E_SANITIZE, set by ctest from HARNESS_SANITIZE).
SANITIZED = os.environ.get("E2E_SANITIZE", "0").lower() in ("1", "on", "true", "yes")

# Every run of a test program keeps no last run (BENCH_LAST_DIR set and empty): its pretty output
# has no "Since the last run" block and nothing is written to the user's cache. ctest sets it too
# (tests/e2e/CMakeLists.txt); this covers a test file run by hand. The tests of the store itself
# name a temporary folder.
os.environ.setdefault("BENCH_LAST_DIR", "")


def environ(*extra, unset=()):
    """This process's environment without the variables named in unset, then each dict of extra
    (None for none) set on top, in order."""
    env = dict(os.environ)
    for name in unset:
        env.pop(name, None)
    for more in extra:
        env.update(more or {})
    return env


def run(cmd, *, timeout, env=None, text=True, check=False, **kw):
    """Runs cmd (the program and its arguments) with stdout and stderr captured, as text unless
    text is false; returns the CompletedProcess, whatever the exit status unless check. env None:
    this process's environment. kw: the rest of subprocess.run's (cwd, preexec_fn, encoding)."""
    return subprocess.run(cmd, capture_output=True, text=text, env=env, timeout=timeout,
                          check=check, **kw)


def prog_prefix(path):
    """What every error, warning and note of the program at path begins with on stderr: the
    program's name as invoked (the basename of argv[0]) and ": ", "bench: " for the reference
    suite."""
    return os.path.basename(path) + ": "


# A line e2e_fixture's bodies print on stderr (`e2e_fixture: ID key=value ...`,
# fixture_benches.c), told apart from the harness's messages, which begin with the same name.
FIXTURE_COUNTER_LINE = re.compile(r"^e2e_fixture: (\S+) (\w+=\d+(?: \w+=\d+)*)$")


def dead_pid():
    """A process id no process has, now or for the rest of the test: one above the kernel's
    pid_max. (The id of a child that has exited can be given to another process at once on a
    busy machine whose ids wrap: a file named by it would then look like a live writer's.)"""
    try:
        with open("/proc/sys/kernel/pid_max", encoding="ascii") as f:
            return int(f.read()) + 1
    except (OSError, ValueError):
        return 4194305  # the largest pid_max Linux allows, plus one


def copy_program(src, path, append=b""):
    """An executable copy of the program src at path, with append written after its bytes (a
    marker a fixture reads from its own file, or a byte that changes only its hash)."""
    shutil.copyfile(src, path)
    if append:
        with open(path, "ab") as f:
            f.write(append)
    os.chmod(path, 0o755)
    return path


def write_script(path, text):
    """An executable file at path holding text (a shell script that stands in for a program)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, 0o755)
    return path


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def plant_machine_change(baseline_path):
    """Edits a saved baseline so that its drift canaries say the machine changed since: the
    memory probe twenty times as fast then, every saved reading within 2% of it, so that every
    reading of a comparison lies beyond them (at three times, one reading of five processes at
    load 14 on 2 CPUs reached back into them). A clear change is then confirmed by a paired run
    all the same, since the saved numbers alone no longer decide it (docs/comparison.md)."""
    doc = load_json(baseline_path)
    ctx = doc["context"]
    v = ctx["canaries"]["memory_read"] / 20
    ctx["canaries"]["memory_read"] = v
    ctx["canary_samples"]["memory_read"] = [v / 1.02, v, v, v * 1.01, v * 1.02]
    with open(baseline_path, "w", encoding="utf-8") as f:
        json.dump(doc, f)


def by_id(doc):
    """The benchmarks of a results document by id."""
    return {b["id"]: b for b in doc["benchmarks"]}


def check_schema(doc, schema_path):
    """Validates a results document against the schema at schema_path when jsonschema is
    installed (Debian: python3-jsonschema); does nothing when it is not."""
    try:
        import jsonschema  # pylint: disable=import-outside-toplevel
    except ImportError:
        return
    with open(schema_path, encoding="utf-8") as f:
        jsonschema.validate(doc, json.load(f))


class Case(unittest.TestCase):
    """The assertions and fixtures the test classes share."""

    def assert_exit(self, proc, code):
        self.assertEqual(proc.returncode, code,
                         f"exit {proc.returncode}, wanted {code}\nstdout:\n{proc.stdout}\n"
                         f"stderr:\n{proc.stderr}")

    def temp_dir(self, prefix):
        """A new directory, removed (errors ignored) when the test ends."""
        path = tempfile.mkdtemp(prefix=prefix)
        self.addCleanup(shutil.rmtree, path, True)
        return path


# Debian's PostgreSQL 15 server programs (the postgresql package).
PG_BIN = os.environ.get("E2E_PG_BIN", "/usr/lib/postgresql/15/bin")


def postgres_missing():
    """Why no private PostgreSQL server can start here (None when one can): its programs are
    absent."""
    for prog in ("initdb", "pg_ctl", "postgres"):
        if not os.access(os.path.join(PG_BIN, prog), os.X_OK):
            return f"PostgreSQL's {prog} is not in {PG_BIN} (Debian: apt-get install postgresql)"
    if not shutil.which("psql") and not os.access(os.path.join(PG_BIN, "psql"), os.X_OK):
        return "psql is absent (Debian: apt-get install postgresql-client)"
    return None


class PostgresServer:
    """A PostgreSQL server of the test's own: a cluster in a temporary folder, listening only on
    a Unix socket in that folder (listen_addresses=''), run as an unprivileged user when the
    tests run as root (the server refuses root), its superuser `bench` trusted on the socket and
    a role `pw` that must give its password (`secret`). No server on the machine is assumed or
    touched. start() then url(); stop() (or the cleanup it was registered with) at the end."""

    USER = "bench"
    PASSWORD_ROLE = "pw"
    PASSWORD = "secret"

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="bench-pg-")
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "log")
        self.uid = self.gid = None
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            self.uid, self.gid = nobody.pw_uid, nobody.pw_gid
            os.chown(self.dir, self.uid, self.gid)
        os.chmod(self.dir, 0o700)
        self.running = False

    def _as_owner(self):
        if self.uid is not None:
            os.setgid(self.gid)
            os.setuid(self.uid)

    def _run(self, *cmd, timeout=120, check=True):
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=check,
                              preexec_fn=self._as_owner, cwd=self.dir,
                              env=environ(unset=[k for k in os.environ if k.startswith("PG")]))

    def start(self, *settings):
        """Starts the server (made first when new); settings: more "-c NAME=VALUE" options."""
        if not os.path.isdir(self.data):
            # --no-sync: a cluster that lives as long as the test needs no fsync of its files
            # (the server runs with fsync=off too); syncing took 3 of initdb's 5.5 s at load.
            self._run(os.path.join(PG_BIN, "initdb"), "-D", self.data, "-U", self.USER,
                      "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
            with open(os.path.join(self.data, "pg_hba.conf"), "w", encoding="utf-8") as f:
                f.write(f"local all {self.PASSWORD_ROLE} scram-sha-256\nlocal all all trust\n")
        self._run(os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-l", self.log, "-w", "-o",
                  " ".join([f"-k {self.dir} -c listen_addresses='' -c fsync=off "
                            "-c max_connections=60", *settings]), "start")
        self.running = True
        return self

    def stop(self, mode="fast"):
        if self.running:
            self._run(os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-m", mode, "-w", "stop",
                      check=False)
            self.running = False

    def destroy(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, db="postgres", user=USER, password=None):
        auth = f"{user}:{password}" if password else user
        return f"postgresql://{auth}@/{db}?host={self.dir}"

    def psql(self, sql, db="postgres"):
        """Runs sql (one or more statements) as the superuser; its rows as lists of strings."""
        p = subprocess.run([shutil.which("psql") or os.path.join(PG_BIN, "psql"), "-X", "-q",
                            "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-h", self.dir,
                            "-U", self.USER, "-d", db, "-c", sql],
                           capture_output=True, text=True, timeout=60, check=False,
                           env=environ(unset=[k for k in os.environ if k.startswith("PG")]))
        if p.returncode != 0:
            raise RuntimeError(f"psql: {p.stderr.strip()}")
        return [line.split("\t") for line in p.stdout.splitlines() if line]

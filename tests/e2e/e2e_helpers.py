"""e2e_helpers.py: what the end-to-end tests share: running a program with what it prints
captured, the environment a run gets, what a program's messages begin with, executable copies of
a program and small scripts, results by benchmark id, the published schema check, and a TestCase
with the exit-code assertion and a temporary directory per test.

The tests run as scripts (ctest: python3 tests/e2e/test_X.py -v CLASS), so this directory is
first on sys.path and `import e2e_helpers` finds this file. Each test keeps its own timeouts, its
own programs and its own environment policy; these helpers only do the common part of each.
Standard library only (jsonschema is used when it is installed).
"""
import json
import os
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

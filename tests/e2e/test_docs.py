#!/usr/bin/env python3
"""The documentation says what the code does: its C examples compile and its flags are the
program's.

CBlocksTest: every ```c block of README.md, CONTRIBUTING.md and docs/*.md is compiled exactly as
printed (C11 with GNU extensions, -Wall -Wextra -Werror) against the harness's and the workload
library's headers, and linked against this build's library when it has a main(). A block that
is not meant to compile must not be marked `c`.

FlagsTest: the flags `bench --help` lists and the flags docs/cli.md's tables document are the
same set (rows whose meaning starts "Internal:" document flags the help leaves out on purpose,
and those must not be in the help); the help printed in docs/cli.md is the program's, word for
word; every flag README.md names exists; and docs/cli.md's environment table names exactly the
BENCH_ variables the library reads or sets for its children.

DefaultsTest: every default and number the docs state about the options is the program's: the
defaults --help states are the ones a program built against this library records in its results
(a one-benchmark program is compiled and run, with and without --quick and --in-process); the
Default columns of docs/cli.md's flag tables, its Defaults table, its --quick table, README.md's
flag table and CONTRIBUTING.md's "runs once per worker process (N by default)" agree with --help;
the package lists docs/cli.md gives for scripts/setup_deps.sh are the script's; and every row of
README.md's measured numbers says when, on which CPU and with which command it was measured.

ApiDocTest: docs/api.md has an entry (a heading or a table row) for every name of the installed
header, bench.h (functions, macros, types, constants, descriptor fields and the macros it reads
from the build; api_names.py says how they are read), for every function exported for the
components, and for every BENCH_ variable the library reads; and none for a bench_, BENCH_ or
field name that is none of these.

ScriptsTest: scripts/README.md names every script and its kind (installed tool, developer,
experiment); each has its run bit and a #! line (but the one the profilers source); tools/ is
what the build installs; no test, CI step, Makefile or CMake file runs an experiment.

ResultsVersioningTest: docs/results-format.md states the results' versioning rule (a field added
within a schema_version is optional) with the version the schema pins, and every field its
table of added fields names is in results.schema.json and required by none of its objects;
explanation.machine_samples is among them.

Environment (ctest sets it): DOCS_ROOT (the source tree), DOCS_CC, DOCS_CFLAGS, DOCS_HARNESS (the
library file), DOCS_LIBS (what it needs after it), DOCS_CMOCKA (the cmocka library), E2E_BENCH.
Standard library only.
"""
import json
import os
import re
import shlex
import tempfile
import unittest

import api_names
import e2e_helpers

ROOT = os.environ.get("DOCS_ROOT", "")
CC = os.environ.get("DOCS_CC", "cc")
CFLAGS = shlex.split(os.environ.get("DOCS_CFLAGS", ""))
HARNESS = os.environ.get("DOCS_HARNESS", "")
LIBS = shlex.split(os.environ.get("DOCS_LIBS", ""))
CMOCKA = os.environ.get("DOCS_CMOCKA", "")
BENCH = os.environ.get("E2E_BENCH", "")

WARNINGS = ["-std=gnu11", "-Wall", "-Wextra", "-Werror"]
FENCE = re.compile(r"^( *)```c[ \t]*$")


def doc_files():
    files = ["README.md", "CONTRIBUTING.md"]
    files += sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
                    if f.endswith(".md"))
    return files


def c_blocks(rel):
    """[(line, code)] of the ```c blocks of one file, each dedented by its fence's indent."""
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, start, body = m.group(1), i + 1, []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        blocks.append((start, "\n".join(body) + "\n"))
        i += 1
    return blocks


@unittest.skipIf(not ROOT or not HARNESS,
                 "DOCS_ROOT and DOCS_HARNESS are not set (ctest sets them)")
class CBlocksTest(unittest.TestCase):
    def test_every_c_block_compiles(self):
        total = 0
        with tempfile.TemporaryDirectory() as tmp:
            for rel in doc_files():
                for line, code in c_blocks(rel):
                    total += 1
                    with self.subTest(block=f"{rel}:{line}"):
                        self.compile(tmp, f"{rel}:{line}", code)
        self.assertGreater(total, 0, "no ```c block found: is DOCS_ROOT right?")

    def compile(self, tmp, where, code):
        src = os.path.join(tmp, "block.c")
        with open(src, "w", encoding="utf-8") as f:
            f.write(code)
        has_main = re.search(r"^int main\s*\(", code, re.M) is not None
        if has_main:
            cmd = [CC, *WARNINGS, *CFLAGS, src, "-o", os.path.join(tmp, "block"), HARNESS]
            if "<cmocka.h>" in code:
                cmd.append(CMOCKA)
            cmd += LIBS
        else:
            cmd = [CC, *WARNINGS, *CFLAGS, "-c", src, "-o", os.path.join(tmp, "block.o")]
        p = e2e_helpers.run(cmd, timeout=120)
        self.assertEqual(p.returncode, 0,
                         f"{where} does not {'link' if has_main else 'compile'} as printed:\n"
                         f"{p.stderr}\n--- the block ---\n{code}")


def help_flags(text):
    """The flags the help defines: the first flag of each option line (`  -h, --help ...`)."""
    flags = set()
    for ln in text.splitlines():
        m = re.match(r"^ {2,6}(?:-[A-Za-z], )?(--[a-z][a-z0-9-]*)", ln)
        if m:
            flags.add(m.group(1))
    return flags


def documented_flags(text):
    """(documented, internal): the flags of docs/cli.md's flag table rows."""
    documented, internal = set(), set()
    for ln in text.splitlines():
        m = re.match(r"^\| (?:`-[A-Za-z]`, )?`(--[a-z][a-z0-9-]*)` \|", ln)
        if not m:
            continue
        meaning = ln.rstrip(" |").split(" | ")[-1]
        (internal if meaning.startswith("Internal:") else documented).add(m.group(1))
    return documented, internal


def library_env_vars():
    """The BENCH_ environment variables the library reads (getenv) or sets for its own children
    (a *_ENV macro), from the sources of harness/src."""
    used = set()
    for top, _, files in os.walk(os.path.join(ROOT, "harness", "src")):
        for name in files:
            if name.endswith((".c", ".h", ".cu")):
                with open(os.path.join(top, name), encoding="utf-8") as f:
                    text = f.read()
                used |= set(re.findall(r'getenv\("(BENCH_[A-Z0-9_]+)"\)', text))
                # read through a helper that takes the variable's name (sysinfo.c's fs_root)
                used |= set(re.findall(r'fs_root\("(BENCH_[A-Z0-9_]+)"', text))
                used |= set(re.findall(r'#define \w*ENV\w* +"(BENCH_[A-Z0-9_]+)"', text))
    return used


@unittest.skipIf(not ROOT or not BENCH, "DOCS_ROOT and E2E_BENCH are not set (ctest sets them)")
class FlagsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.help = e2e_helpers.run([BENCH, "--help"], timeout=60, check=True).stdout
        with open(os.path.join(ROOT, "docs", "cli.md"), encoding="utf-8") as f:
            cls.cli_md = f.read()

    def test_help_and_cli_md_name_the_same_flags(self):
        listed = help_flags(self.help)
        documented, internal = documented_flags(self.cli_md)
        self.assertGreater(len(listed), 20, "the help's option lines were not recognised")
        self.assertEqual(sorted(listed - documented), [],
                         "in --help but without a row in docs/cli.md's flag tables")
        self.assertEqual(sorted(documented - listed), [],
                         "documented in docs/cli.md but not in --help")
        self.assertEqual(sorted(internal & listed), [],
                         "documented as internal but listed by --help")

    def test_internal_flags_exist(self):
        _, internal = documented_flags(self.cli_md)
        self.assertEqual(sorted(internal), [])

    def test_cli_md_prints_the_help_as_it_is(self):
        m = re.search(r"`\./bench --help` prints the summary:\n\n```\n(.*?)```\n", self.cli_md,
                      re.S)
        self.assertIsNotNone(m, "docs/cli.md no longer quotes the help")
        self.assertEqual(m.group(1), self.help,
                         "docs/cli.md's copy of the help differs from `bench --help`")

    def test_cli_md_documents_every_environment_variable(self):
        """Every BENCH_ variable the library reads (getenv) or sets for its own children (a
        *_ENV macro) has a row in docs/cli.md's environment table, and every row names one."""
        used = library_env_vars()
        section = self.cli_md.split("## Environment variables", 1)[1]
        documented = set()
        for head, rows in md_tables(section)[:1]:
            self.assertEqual(head[0], "Variable")
            for row in rows:
                documented |= set(re.findall(r"`(BENCH_[A-Z0-9_]+)`", row[0]))
        self.assertGreater(len(used), 10, "the library's variables were not recognised")
        self.assertEqual(sorted(used - documented), [],
                         "read by the library but without a row in docs/cli.md's environment "
                         "table")
        self.assertEqual(sorted(documented - used - {"BENCH_PROGRAM"}), [],
                         "documented but not read by the library (BENCH_PROGRAM is the ./bench "
                         "wrapper's)")

    def test_readme_flags_exist(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", readme))
        # make, cmake and git options the README also names are not the program's, nor is
        # bench-report's --out
        others = {"--build", "--install", "--prefix", "--cflags", "--libs", "--whole-archive",
                  "--no-whole-archive", "--as-needed", "--no-as-needed", "--undefined", "--out",
                  "--short"}
        self.assertEqual(sorted(named - others - help_flags(self.help)), [],
                         "README.md names flags that --help does not list")


API_TOKEN = re.compile(r"`(\.?[A-Za-z_]\w*)")


def api_doc_entries(text):
    """{name: line} of the entries of docs/api.md: the names in backquotes of each heading and of
    the first cell of each table row (a call written out, `bench_arg(b, name)`, gives its name; a
    field keeps its dot)."""
    entries = {}
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("#"):
            where = line
        elif line.startswith("|") and not line.startswith("|---"):
            where = line.split("|")[1]
        else:
            continue
        for name in API_TOKEN.findall(where):
            entries.setdefault(name, number)
    return entries


@unittest.skipIf(not ROOT, "DOCS_ROOT is not set (ctest sets it)")
class ApiDocTest(unittest.TestCase):
    """docs/api.md has an entry for every name of the installed headers and of the component
    interface (api_names.py reads them) and for every BENCH_ variable the library reads, and no
    entry for a bench_, BENCH_ or field name that is none of these."""

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(ROOT, "docs", "api.md"), encoding="utf-8") as f:
            cls.text = f.read()
        cls.entries = api_doc_entries(cls.text)
        cls.names = api_names.header_names(api_names.installed_headers(ROOT))
        cls.names.update({n: "component" for n in api_names.component_api(ROOT)})

    def test_every_public_name_has_an_entry(self):
        self.assertGreater(len(self.names), 60, "the header's names were not recognised")
        missing = sorted(f"{n} ({kind})" for n, kind in self.names.items()
                         if n not in self.entries)
        self.assertEqual(missing, [], "named by the installed header but without an entry (a "
                                      "heading or a table row) in docs/api.md")

    def test_every_entry_names_the_api(self):
        env = library_env_vars()
        stale = sorted(f"{n} (line {line})" for n, line in self.entries.items()
                       if n.startswith(("bench_", "BENCH_", ".")) and n not in self.names
                       and n not in env)
        self.assertEqual(stale, [], "docs/api.md has entries for names the installed header does "
                                    "not have")

    def test_every_environment_variable_has_an_entry(self):
        section = self.text.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
        documented = set()
        for head, rows in md_tables(section)[:1]:
            self.assertEqual(head[0], "Variable")
            documented = {n for row in rows for n in re.findall(r"`(BENCH_[A-Z0-9_]+)`", row[0])}
        env = library_env_vars()
        self.assertEqual(sorted(env - documented), [],
                         "read by the library but without a row in docs/api.md's environment table")
        self.assertEqual(sorted(documented - env), [],
                         "in docs/api.md's environment table but not read by the library")


@unittest.skipIf(not ROOT, "DOCS_ROOT is not set (ctest sets it)")
class ScriptsTest(unittest.TestCase):
    """scripts/README.md's table names every file of scripts/ and its kind; each is executable
    and starts with #!, but a sourced one, which is neither; tools/ holds what
    harness/CMakeLists.txt installs, and nothing the build, CI or a test runs names
    experiments/."""

    @classmethod
    def setUpClass(cls):
        cls.dir = os.path.join(ROOT, "scripts")
        with open(os.path.join(cls.dir, "README.md"), encoding="utf-8") as f:
            tables = [t for t in md_tables(f.read()) if t[0][:2] == ["Script", "Kind"]]
        cls.kinds = {r[0].strip("`"): r[1] for t in tables for r in t[1]}
        cls.files = set()
        for top, dirs, files in os.walk(cls.dir):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            cls.files |= {os.path.relpath(os.path.join(top, n), cls.dir) for n in files
                          if n != "README.md" and not n.endswith(".pyc")}

    def test_readme_names_every_script(self):
        self.assertGreater(len(self.files), 10)
        self.assertEqual(sorted(self.files - set(self.kinds)), [],
                         "in scripts/ but not in scripts/README.md's table")
        self.assertEqual(sorted(set(self.kinds) - self.files),
                         [], "in scripts/README.md's table but not in scripts/")

    def test_run_bits_and_first_lines(self):
        for name in sorted(self.files):
            with self.subTest(script=name):
                path = os.path.join(self.dir, name)
                with open(path, encoding="utf-8") as f:
                    first = f.readline()
                sourced = "sourced" in self.kinds.get(name, "")
                self.assertEqual(os.access(path, os.X_OK), not sourced,
                                 "the run bit (git update-index --chmod=+x), unless sourced")
                self.assertEqual(first.startswith("#!"), not sourced)

    def test_tools_are_what_the_build_installs(self):
        with open(os.path.join(ROOT, "harness", "CMakeLists.txt"), encoding="utf-8") as f:
            installed = set(re.findall(r"scripts/(tools/[\w.]+)", f.read()))
        tools = {n for n in self.files if n.startswith("tools/")}
        self.assertEqual(sorted(installed), sorted(tools))
        self.assertEqual(sorted(tools), sorted(n for n, kind in self.kinds.items()
                                               if kind == "installed tool"))

    def test_experiments_are_run_by_nothing(self):
        users = [".ci/run", "Makefile", "CMakeLists.txt"]
        for top, _, files in os.walk(os.path.join(ROOT, "tests")):
            users += [os.path.relpath(os.path.join(top, n), ROOT) for n in files
                      if n.endswith((".py", ".sh", ".txt", ".c"))]
        for top, _, files in os.walk(os.path.join(ROOT, "harness")):
            users += [os.path.relpath(os.path.join(top, n), ROOT) for n in files
                      if n == "CMakeLists.txt"]
        this = os.path.relpath(os.path.realpath(__file__), os.path.realpath(ROOT))
        named = []
        for rel in users:
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                if rel != this and "scripts/experiments" in f.read():
                    named.append(rel)
        self.assertEqual(named, [], "these name an experiment: a script something runs is a "
                                    "developer script (scripts/README.md)")


def help_defaults(text):
    """{flag: the default its help states}: the text after "(default " up to ; , or ), over the
    flag's line and its continuation lines."""
    out, flag, words = {}, None, ""
    for ln in text.splitlines() + [""]:
        m = re.match(r"^ {2,6}(?:-[A-Za-z], )?(--[a-z][a-z0-9-]*)", ln)
        if m or not ln.startswith(" "):
            d = re.search(r"\(default ([^;),]+)", words) if flag else None
            if d:
                out[flag] = d.group(1).strip()
            flag, words = (m.group(1) if m else None), ln
        else:
            words += " " + ln.strip()
    return out


@unittest.skipIf(not ROOT, "DOCS_ROOT is not set (ctest sets it)")
class ResultsVersioningTest(unittest.TestCase):
    """A field added within a schema_version is optional: docs/results-format.md says so and
    lists the fields added, and the published schema requires none of them."""

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(ROOT, "docs", "results-format.md"), encoding="utf-8") as f:
            cls.doc = f.read()
        with open(os.path.join(ROOT, "docs", "results.schema.json"), encoding="utf-8") as f:
            cls.schema = json.load(f)

    def node(self, n):
        """n with its $ref followed, and a benchmark entry as the measured one (`then`)."""
        while "$ref" in n or "then" in n:
            n = n["then"] if "then" in n else \
                self.schema["$defs"][n["$ref"].removeprefix("#/$defs/")]
        return n

    def test_the_rule_is_stated_with_the_schemas_version(self):
        version = self.schema["properties"]["schema_version"]["const"]
        self.assertIn("### Versioning", self.doc)
        section = self.doc.split("### Versioning", 1)[1].split("\n### ", 1)[0]
        self.assertIn(f"`schema_version` ({version}) is raised only when", section)
        self.assertIn("A field **added**\ndoes not raise it: it is optional", section)

    def test_every_added_field_is_optional_in_the_schema(self):
        rows = [r for head, rows in md_tables(self.doc) if head == ["Field", "Added with"]
                for r in rows]
        fields = [r[0].strip("`") for r in rows]
        self.assertIn("benchmarks[].explanation.machine_samples", fields)
        for field in fields:
            n = self.schema
            parts = field.split(".")
            for part in parts:
                name = part.removesuffix("[]")
                n = self.node(n)
                self.assertIn(name, n.get("properties", {}), f"{field}: no '{name}' in the schema")
                if part is parts[-1]:  # the field itself; the objects holding it may be required
                    self.assertNotIn(name, n.get("required", []), f"{field}: it is required")
                n = n["properties"][name]
                if part.endswith("[]"):
                    n = self.node(n)["items"]


def md_tables(text):
    """Every Markdown table: (header cells, [row cells]); cells stripped, pipes inside a cell
    escaped as \\| kept."""
    tables = []
    for block in re.findall(r"(?m)^(\|.*\|\n\|[-:| ]+\|\n(?:\|.*\|\n?)+)", text):
        rows = [[c.strip() for c in re.split(r"(?<!\\)\|", ln.strip())[1:-1]]
                for ln in block.strip("\n").split("\n")]
        tables.append((rows[0], rows[2:]))
    return tables


def first_word(cell):
    """The value a cell starts with: backticks, a unit of seconds and punctuation dropped."""
    w = cell.replace("`", "").split()
    return w[0].rstrip(",;") if w else ""


@unittest.skipIf(not ROOT or not BENCH or not HARNESS,
                 "DOCS_ROOT, E2E_BENCH and DOCS_HARNESS are not set (ctest sets them)")
class DefaultsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.help = e2e_helpers.run([BENCH, "--help"], timeout=60, check=True).stdout
        cls.defaults = help_defaults(cls.help)
        m = re.search(r"--quick +fast, less precise run \(([0-9.]+) s warm-up, at most ([0-9.]+) "
                      r"s,\s+([0-9]+) processes\)", cls.help)
        if not m:
            raise AssertionError("--help no longer states --quick's warm-up, time and processes")
        cls.quick = {"warm-up": m.group(1), "time": m.group(2), "processes": m.group(3)}
        cls.docs = {}
        for rel in ("README.md", "CONTRIBUTING.md", os.path.join("docs", "cli.md")):
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                cls.docs[rel] = f.read()

    def test_help_states_the_defaults(self):
        for flag in ("--warm-up-time", "--measurement-time", "--sample-size", "--rounds",
                     "--target-precision", "--processes", "--timeout", "--noise-threshold"):
            self.assertIn(flag, self.defaults, f"--help states no default for {flag}")

    def run_program(self, *args):
        """The settings and processes a one-benchmark program records with args."""
        with tempfile.TemporaryDirectory() as tmp:
            src, prog = os.path.join(tmp, "one.c"), os.path.join(tmp, "one")
            with open(src, "w", encoding="utf-8") as f:
                f.write("#include <harness/bench.h>\nBENCH_FN(one, empty)\n{\n"
                        "    BENCH_ITER(b) {\n        bench_clobber();\n    }\n}\n")
            e2e_helpers.run([CC, *WARNINGS, *CFLAGS, src, "-o", prog, HARNESS, *LIBS],
                            timeout=120, text=False, check=True)
            out = os.path.join(tmp, "r.json")
            p = e2e_helpers.run([prog, "--json", out, "--output-format", "csv", *args],
                                timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, encoding="utf-8") as f:
                b = json.load(f)["benchmarks"][0]
        return b["settings"], b["processes"]

    def test_the_code_uses_the_defaults_help_states(self):
        d = self.defaults
        settings, processes = self.run_program()
        self.assertEqual(settings["warm_up_time_s"], float(d["--warm-up-time"]))
        self.assertEqual(settings["measurement_time_s"], float(d["--measurement-time"]))
        self.assertEqual(settings["sample_size"], int(d["--sample-size"]))
        self.assertEqual(settings["target_precision"], float(d["--target-precision"]))
        self.assertEqual(processes, int(d["--processes"]))
        settings, processes = self.run_program("--in-process")
        self.assertEqual(settings["rounds"], int(d["--rounds"]))
        self.assertEqual(processes, 0)

    def test_the_code_uses_the_quick_caps_help_and_cli_md_state(self):
        settings, processes = self.run_program("--quick")
        self.assertEqual(settings["warm_up_time_s"], float(self.quick["warm-up"]))
        self.assertEqual(settings["measurement_time_s"], float(self.quick["time"]))
        self.assertEqual(processes, int(self.quick["processes"]))
        caps = self.quick_table()
        self.assertEqual(caps["sample size"], f"at most {settings['sample_size']}")
        settings, _ = self.run_program("--quick", "--in-process")
        self.assertEqual(caps["rounds"].split()[0], str(settings["rounds"]))
        self.assertEqual(caps["target precision"].split()[2], str(settings["target_precision"]))

    def quick_table(self):
        for head, rows in md_tables(self.docs[os.path.join("docs", "cli.md")]):
            if head == ["Setting", "With `--quick`"]:
                return {r[0]: r[1] for r in rows}
        self.fail("docs/cli.md has no --quick table")

    def test_cli_md_quick_table_is_the_help(self):
        caps = self.quick_table()
        self.assertEqual(caps["warm-up"], f"at most {self.quick['warm-up']} s")
        self.assertEqual(caps["measurement time"], f"at most {self.quick['time']} s")
        self.assertEqual(first_word(caps["processes"]), self.quick["processes"])

    def test_cli_md_default_columns_are_the_help(self):
        checked = 0
        for head, rows in md_tables(self.docs[os.path.join("docs", "cli.md")]):
            if "Default" not in head:
                continue
            col = head.index("Default")
            if head[0] == "Flag":
                for r in rows:
                    m = re.match(r"^(?:`-[A-Za-z]`, )?`(--[a-z][a-z0-9-]*)`$", r[0])
                    if m and m.group(1) in self.defaults:
                        checked += 1
                        with self.subTest(flag=m.group(1)):
                            self.assertEqual(first_word(r[col]),
                                             first_word(self.defaults[m.group(1)]))
            elif head == ["Setting", "Default", "Flag"]:
                for r in rows:
                    flag = r[2].strip("`")
                    if flag in self.defaults and flag != "--baseline-dir":
                        checked += 1
                        with self.subTest(table="Defaults", flag=flag):
                            self.assertEqual(first_word(r[1]), first_word(self.defaults[flag]))
        self.assertGreater(checked, 25, "docs/cli.md's Default columns were not recognised")

    def test_readme_flag_table_is_the_help(self):
        rows = {}
        for head, body in md_tables(self.docs["README.md"]):
            if head == ["Flag", "Effect"]:
                rows = {r[0].split()[0].strip("`"): r[1] for r in body}
        self.assertIn("--quick", rows, "README.md's flag table was not found")
        q = rows["--quick"]
        for want in (f"{self.quick['warm-up']} s warm-up", f"at most {self.quick['time']} s",
                     f"{self.quick['processes']} processes"):
            self.assertIn(want, q, "README.md's --quick row disagrees with --help")
        checked = 0
        for flag, effect in rows.items():
            m = re.search(r"\(default ([^);]+)\)", effect)
            if m and flag in self.defaults:
                checked += 1
                with self.subTest(flag=flag):
                    self.assertEqual(first_word(m.group(1)), first_word(self.defaults[flag]))
        self.assertGreaterEqual(checked, 4)

    def test_contributing_numbers_are_the_help(self):
        text = self.docs["CONTRIBUTING.md"]
        m = re.search(r"runs once per worker process \((\d+) by default", text)
        self.assertIsNotNone(m, "CONTRIBUTING.md no longer says how often a body runs")
        self.assertEqual(m.group(1), self.defaults["--processes"])
        m = re.search(r"once per round instead \(`--rounds`, (\d+) by default", text)
        self.assertIsNotNone(m, "CONTRIBUTING.md no longer says how often a body runs in-process")
        self.assertEqual(m.group(1), self.defaults["--rounds"])

    def test_cli_md_lists_the_packages_setup_deps_installs(self):
        with open(os.path.join(ROOT, "scripts", "setup_deps.sh"), encoding="utf-8") as f:
            script = f.read()

        def array(name):
            m = re.search(rf"^{name}=\((.*?)\)", script, re.M | re.S)
            self.assertIsNotNone(m, f"setup_deps.sh has no {name}")
            return m.group(1).split()
        text = " ".join(self.docs[os.path.join("docs", "cli.md")].split())
        m = re.search(r"for `build` \(the default\) `([^`]*)`, for `test` also `([^`]*)`", text)
        self.assertIsNotNone(m, "docs/cli.md no longer lists setup_deps.sh's packages")
        self.assertEqual(m.group(1).split(), array("build_pkgs"))
        self.assertEqual(m.group(2).split(), array("test_pkgs"))

    def test_ci_md_gate_defaults_are_the_gates(self):
        """docs/ci.md's defaults of -t and -p are the ones the gate's usage states."""
        gate = os.path.join(ROOT, "scripts", "tools", "bench_ci_gate.sh")
        p = e2e_helpers.run(["bash", gate, "-h"], timeout=60, check=True)
        usage = dict(re.findall(r"^  (-[tp]) [A-Z]+ .*?default (\d+)\)", p.stdout, re.M))
        self.assertEqual(sorted(usage), ["-p", "-t"], p.stdout)
        with open(os.path.join(ROOT, "docs", "ci.md"), encoding="utf-8") as f:
            ci = f.read()
        rows = {}
        for head, body in md_tables(ci):
            if head == ["Argument", "Default", "Meaning"]:
                rows = {r[0].strip("`").split()[0]: r[1] for r in body}
        for opt, default in usage.items():
            with self.subTest(option=opt):
                self.assertEqual(rows.get(opt), default)

    def test_readme_measurements_say_when_where_and_how(self):
        text = self.docs["README.md"]
        section = text[text.index("## Measured on the development machine"):]
        section = section[:section.find("\n## ", 5) if "\n## " in section[5:] else None]
        tables = [t for t in md_tables(section) if t[0][:2] == ["What", "Measured"]]
        self.assertEqual(len(tables), 1, "README.md's table of measured numbers was not found")
        head, rows = tables[0]
        self.assertGreater(len(rows), 5)
        for r in rows:
            with self.subTest(row=r[0]):
                where = r[2]
                self.assertRegex(where, r"\b20\d\d-\d\d-\d\d\b", "no date")
                self.assertRegex(where, r"AMD|Intel|Arm|EPYC|Xeon", "no CPU")
                self.assertRegex(where, r"`(\./bench|scripts/|make |time )[^`]*`", "no command")


if __name__ == "__main__":
    unittest.main()

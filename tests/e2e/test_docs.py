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
word; and every flag README.md names exists.

Environment (ctest sets it): DOCS_ROOT (the source tree), DOCS_CC, DOCS_CFLAGS, DOCS_HARNESS (the
library file), DOCS_LIBS (what it needs after it), DOCS_CMOCKA (the cmocka library), E2E_BENCH.
Standard library only.
"""
import os
import re
import shlex
import subprocess
import tempfile
import unittest

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
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
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


@unittest.skipIf(not ROOT or not BENCH, "DOCS_ROOT and E2E_BENCH are not set (ctest sets them)")
class FlagsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        p = subprocess.run([BENCH, "--help"], capture_output=True, text=True, timeout=60,
                           check=True)
        cls.help = p.stdout
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
        self.assertEqual(sorted(internal), ["--ab-worker"])

    def test_cli_md_prints_the_help_as_it_is(self):
        m = re.search(r"`\./bench --help` prints the summary:\n\n```\n(.*?)```\n", self.cli_md,
                      re.S)
        self.assertIsNotNone(m, "docs/cli.md no longer quotes the help")
        self.assertEqual(m.group(1), self.help,
                         "docs/cli.md's copy of the help differs from `bench --help`")

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


if __name__ == "__main__":
    unittest.main()

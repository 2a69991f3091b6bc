#!/usr/bin/env python3
"""End-to-end tests of untrusted text in every text output.

e2e_hostile (tests/e2e/fixture_hostile.c) registers benchmarks whose names and messages hold
terminal escape sequences, bells, carriage returns and a bidirectional override, and names that
a spreadsheet would read as formulas. No output format may let a control character through:
each is shown escaped (ESC as \\x1b, U+202E as \\u202e). CSV text cells that start with =, +, -
or @ get a leading single quote unless they are plain numbers. JSON keeps the exact strings
(JSON escapes them itself).
"""
import csv
import io
import json
import os
import re
import sys
import unittest

import e2e_helpers

HOSTILE = os.environ.get("E2E_HOSTILE", "")
FAST = ["--warm-up-time", "0.01", "--measurement-time", "0.05", "--nresamples", "100",
        "--color", "never"]


def run(*args):
    return e2e_helpers.run([HOSTILE, *FAST, *args], timeout=120, text=False)


def control_chars(data):
    """The control characters in bytes of output, newline excepted."""
    text = data.decode("utf-8", errors="strict")
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f
            or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"]


class EscapeTest(unittest.TestCase):
    def check_clean(self, proc):
        self.assertEqual(control_chars(proc.stdout), [], proc.stdout)
        self.assertEqual(control_chars(proc.stderr), [], proc.stderr)

    def test_every_format_escapes(self):
        for fmt in ("pretty", "csv", "markdown", "bencher"):
            with self.subTest(fmt=fmt):
                p = run("--output-format", fmt, "^esc/")
                self.assertEqual(p.returncode, 3, p.stderr)  # esc/fail failed
                self.check_clean(p)
                out = p.stdout.decode()
                if fmt == "markdown":  # Markdown's own backslashes undone
                    out = re.sub(r"\\(.)", r"\1", out)
                self.assertIn("red\\x1b[31mname", out)
                if fmt != "bencher":  # bencher prints no skip reasons
                    self.assertIn("\\x1b]0;pwned\\x07 then\\x0dOVERWRITTEN", out)
                err = p.stderr.decode()
                self.assertIn("failed \\x1b[31mred\\x1b[0m \\u202e reversed", out + err)

    def test_list_escapes(self):
        p = run("--list", "^esc/")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_clean(p)
        self.assertIn("esc/bell\\x07cr\\x0dname\n", p.stdout.decode())

    def test_json_keeps_the_exact_strings(self):
        p = run("--output-format", "json", "--exact", "esc/red\x1b[31mname", "esc/skip")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        ids = [b["id"] for b in doc["benchmarks"]]
        self.assertIn("esc/red\x1b[31mname", ids)
        skip = [b for b in doc["benchmarks"] if b["id"] == "esc/skip"][0]
        self.assertIn("\x1b]0;pwned\x07", skip["message"])


class FileTextTest(e2e_helpers.Case):
    """Strings read from files, and paths, reach stderr escaped too."""

    def setUp(self):
        self.dir = self.temp_dir("bench-e2e-text-\x1b[31m")

    def test_baseline_context_and_path_are_escaped(self):
        p = run("--baseline-dir", self.dir, "--save-baseline", "b", "--exact", "csv/plain")
        self.assertEqual(p.returncode, 0, p.stderr)
        path = os.path.join(self.dir, "b.json")
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        doc["context"]["hostname"] = "evil\x1b]0;pwned\x07host"
        doc["context"]["compiler"] = "cc\r\x1b[2J 9"
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        p = run("--baseline-dir", self.dir, "--baseline", "b", "--exact", "csv/plain")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(control_chars(p.stderr), [], p.stderr)
        self.assertIn("'evil\\x1b]0;pwned\\x07host'", p.stderr.decode())
        doc["benchmarks"][0]["rounds"] = "many"  # now invalid: the message names the path
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        p = run("--baseline-dir", self.dir, "--baseline", "b", "--exact", "csv/plain")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(control_chars(p.stderr), [], p.stderr)
        self.assertIn("bench-e2e-text-\\x1b[31m", p.stderr.decode())


class CsvGuardTest(unittest.TestCase):
    def test_formula_cells_are_guarded_numbers_are_not(self):
        p = run("--output-format", "csv", "^csv/")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = {r["id"]: r for r in csv.DictReader(io.StringIO(p.stdout.decode()))}
        self.assertEqual(rows["csv/=HYPERLINK(\"http://x\")"]["name"], "'=HYPERLINK(\"http://x\")")
        self.assertEqual(rows["csv/@SUM(A1)"]["name"], "'@SUM(A1)")
        self.assertEqual(rows["csv/+cmd"]["name"], "'+cmd")
        self.assertEqual(rows["csv/-2"]["name"], "-2")  # a number, not a formula
        self.assertEqual(rows["csv/plain"]["name"], "plain")
        # numeric cells are never guarded
        for r in rows.values():
            float(r["median_ns"])
            self.assertFalse(r["median_ns"].startswith("'"))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]])

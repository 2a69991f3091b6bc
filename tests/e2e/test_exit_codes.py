#!/usr/bin/env python3
"""End-to-end tests: every invalid argument gives exit 2, also next to --help, --version,
--context, --list-events or --list, which used to answer (exit 0) before looking at the rest.
Each error is one line on stderr; the valid forms still exit 0.
"""
import os
import sys
import unittest

import e2e_helpers

FIXTURE = os.environ.get("E2E_FIXTURE", "")


def run(*args):
    return e2e_helpers.run([FIXTURE, *args], timeout=60)


class InvalidWithHelpTest(unittest.TestCase):
    def test_invalid_arguments_win_over_answers(self):
        cases = [
            (["--help", "("], "is not a valid regular expression"),
            (["(", "--help"], "is not a valid regular expression"),
            (["-h", "fix/[a"], "is not a valid regular expression"),
            (["--version", "("], "is not a valid regular expression"),
            (["--context", "("], "is not a valid regular expression"),
            (["--list-events", "("], "is not a valid regular expression"),
            (["--list", "("], "is not a valid regular expression"),
            (["--list", "--perf-events", "no_such_event_xyz"], "no_such_event_xyz"),
            (["--help", "--sample-size", "1"], "--sample-size"),
            (["--list", "--calibrate", "3"], "--calibrate needs --save-baseline"),
        ]
        for args, want in cases:
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual(p.returncode, 2, (p.stdout, p.stderr))
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 1, lines)
                self.assertIn(want, lines[0])
                self.assertNotIn("Usage:", p.stdout)

    def test_valid_forms_still_answer(self):
        for args in (["--help"], ["--version"], ["--list"], ["--list", "fix/a"],
                     ["--help", "fix/a"], ["--list", "--perf-events", "task-clock", "fix/a"]):
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]])

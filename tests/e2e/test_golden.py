#!/usr/bin/env python3
"""Golden-output tests: what --instructions prints and writes, and the shape of a time run's JSON,
pinned against files in tests/fixtures/golden/ so that a change of the code behind them cannot
change them unnoticed.

InstructionsGoldenTest runs e2e_work (tests/e2e/fixture_work.c) of a Release build (its exact
counts include the code the compiler generated: other build types skip it) under valgrind: saves a
baseline, compares with it (one benchmark regressed, one unchanged, one new, one removed), compares
two saved files, in pretty and JSON output. Instruction counts are exact under callgrind, so the
JSON is compared value for value, except the fields that depend on time or on the machine: times,
estimates of time and outliers keep their type only, the context its key names only (but its mode
and comparison are compared). Terminal output and the exit codes are compared line for line.

WallShapeTest pins the JSON of an ordinary time run of e2e_fixture (and of its comparison with a
saved baseline) as field names and types, never values.

After an intended change of the output, regenerate the files and review their diff:
    GOLDEN_REGENERATE=1 E2E_WORK=... E2E_FIXTURE=... python3 tests/e2e/test_golden.py
"""
import json
import os
import re
import sys
import tempfile
import unittest

WORK = os.environ.get("E2E_WORK", "")
FIXTURE = os.environ.get("E2E_FIXTURE", "")
REGENERATE = os.environ.get("GOLDEN_REGENERATE", "") == "1"
# The build the fixture comes from: exact counts include the code its compiler generated.
BUILD_TYPE = os.environ.get("E2E_BUILD_TYPE", "")
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "golden")

# Per-benchmark fields whose values depend on time: compared by type only.
TIMED = {"warm_up.time_ns", "measurement_wall_s", "samples.totals_ns", "estimates", "r2",
         "outliers", "process_cv", "process_info"}
# Per-benchmark fields present only when the processes happened to show them (two speed groups,
# a spread a CPU explains): left out of every comparison.
BY_CHANCE = {"modes", "spread_cause"}
# Per-benchmark fields that depend on the compiler that built the program (the code identity):
# their type only.
BUILT = {"code_hash"}
# Simulated cache misses are not exact per iteration (test_instructions.py says why).
INEXACT_METRICS = {"d1_misses", "ll_misses"}
# Context fields compared by value; the rest by name only (they describe the machine).
CONTEXT_VALUES = {"mode", "comparison"}


# The same way of running a program as the --instructions tests (this directory is on sys.path).
import e2e_helpers  # noqa: E402 pylint: disable=wrong-import-position
from test_instructions import (  # noqa: E402 pylint: disable=wrong-import-position
    needs_valgrind, run)


def type_of(v):
    if v is None:
        return "<null>"
    if isinstance(v, bool):
        return "<bool>"
    if isinstance(v, (int, float)):
        return "<number>"
    if isinstance(v, str):
        return "<string>"
    if isinstance(v, list):
        # Arrays by the types of their elements (their lengths depend on the run).
        kinds = {x if isinstance(x, str) else json.dumps(x, sort_keys=True)
                 for x in map(shape, v)}
        return "<array of " + " or ".join(sorted(kinds)) + ">"
    return shape(v)


def shape(v):
    """Field names and types, no values."""
    if isinstance(v, dict):
        return {k: shape(x) for k, x in v.items()}
    return type_of(v)


def names(v):
    """Field names only (nested objects too)."""
    if isinstance(v, dict):
        return {k: names(x) for k, x in v.items()}
    return "<value>"


def mask_benchmark(b):
    out = {}
    for k, v in b.items():
        if k in BY_CHANCE:
            continue
        if k in TIMED or k in BUILT:
            out[k] = shape(v)
        elif k == "warm_up":
            out[k] = {kk: (shape(vv) if f"warm_up.{kk}" in TIMED else vv) for kk, vv in v.items()}
        elif k == "samples":
            out[k] = {kk: (shape(vv) if f"samples.{kk}" in TIMED else vv) for kk, vv in v.items()}
        elif k == "metrics":
            out[k] = {name: (shape(m) if name in INEXACT_METRICS else m) for name, m in v.items()}
        else:
            out[k] = v
    return out


def without_code_hash(v):
    """v with every "code_hash" field left out, at any depth."""
    if isinstance(v, dict):
        return {k: without_code_hash(x) for k, x in v.items() if k != "code_hash"}
    if isinstance(v, list):
        return [without_code_hash(x) for x in v]
    return v


def mask_instructions(doc):
    """An instruction-mode document with what depends on time or the machine masked."""
    out = {}
    for k, v in doc.items():
        if k == "context":
            out[k] = {kk: (vv if kk in CONTEXT_VALUES else names(vv)) for kk, vv in v.items()}
        elif k == "benchmarks":
            out[k] = [mask_benchmark(b) for b in v]
        else:
            out[k] = v
    return out


def mask_time_doc(doc):
    """A time run's document: names and types only; the context's names only."""
    out = shape(doc)
    out["context"] = names(doc["context"])
    out["benchmarks"] = {b["id"]: shape({k: v for k, v in b.items() if k not in BY_CHANCE})
                         for b in doc["benchmarks"]}
    return out


class Golden(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def text(self, proc):
        """stdout, stderr and the exit code as one text, the temporary directory masked."""
        s = (f"exit {proc.returncode}\n--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}")
        return s.replace(self.dir, "<DIR>")

    def check(self, name, value):
        path = os.path.join(GOLDEN, name)
        if isinstance(value, str):
            got = value
        else:
            got = json.dumps(value, indent=1, sort_keys=True) + "\n"
        if REGENERATE:
            os.makedirs(GOLDEN, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(got)
            return
        with open(path, encoding="utf-8") as f:
            want = f.read()
        self.maxDiff = None
        if e2e_helpers.SANITIZED and not isinstance(value, str):
            # A sanitizer's runtime intercepts C library functions (their symbols are then its,
            # unversioned), so a body that calls one has no code identity there: code_hash is
            # left out on both sides; the optimised build compares it.
            got, want = (json.dumps(without_code_hash(json.loads(x)), indent=1, sort_keys=True)
                         for x in (got, want))
        self.assertEqual(got, want, f"{name} differs from the golden file {path}")


@needs_valgrind
@unittest.skipIf(BUILD_TYPE not in ("", "Release") and not REGENERATE,
                 f"the pinned counts are of a Release build's code (this is {BUILD_TYPE}); "
                 "test_instructions.py checks the counts of any build")
class InstructionsGoldenTest(Golden):
    BENCHES = ["instr/nop4", "instr/nop5", "work/loop", "gone/x"]

    def work(self, *args, work=1000):
        return run(WORK, "--instructions", "--baseline-dir", self.dir, *args,
                   env={"FIXTURE_WORK": str(work)})

    def json_of(self, proc):
        self.assertEqual(proc.returncode, 0, self.text(proc))
        return mask_instructions(json.loads(proc.stdout))

    def test_save_compare_and_report(self):
        # Save: two benchmarks, JSON on stdout; the cache simulation adds its metrics.
        proc = self.work("--save-baseline", "main", "--output-format", "json", "--exact",
                         "instr/nop4", "work/loop")
        self.check("instructions_save.json", self.json_of(proc))
        self.check("instructions_save.txt", re.sub(r"(?s)--- stdout\n.*--- stderr",
                                                   "--- stdout\n(JSON)\n--- stderr",
                                                   self.text(proc)))
        with open(os.path.join(self.dir, "main.json"), encoding="utf-8") as f:
            saved = json.load(f)
        self.check("instructions_baseline.json", mask_instructions(saved))
        # A benchmark only the baseline has: removed when selected.
        saved["benchmarks"].append(dict(saved["benchmarks"][0], id="gone/x", group="gone",
                                        name="x"))
        with open(os.path.join(self.dir, "main.json"), "w", encoding="utf-8") as f:
            json.dump(saved, f)

        # Compare: work/loop 1% more work (regressed), nop4 unchanged, nop5 new, gone/x removed.
        proc = self.work("--baseline", "main", "--exact", *self.BENCHES, work=1010)
        self.check("instructions_compare_pretty.txt", self.text(proc))
        proc = self.work("--baseline", "main", "--fail-on-regression", "--exact", *self.BENCHES,
                         work=1010)
        self.check("instructions_compare_gate.txt", self.text(proc))
        proc = self.work("--baseline", "main", "--baseline-strict", "--exact", *self.BENCHES,
                         work=1000)
        self.check("instructions_compare_strict.txt", self.text(proc))
        proc = self.work("--baseline", "main", "--output-format", "json", "--exact",
                         *self.BENCHES, work=1010)
        self.check("instructions_compare.json", self.json_of(proc))
        self.check("instructions_compare_json.txt", re.sub(r"(?s)--- stdout\n.*--- stderr",
                                                           "--- stdout\n(JSON)\n--- stderr",
                                                           self.text(proc)))

        # Two saved files: less work is an improvement; what only the old one has is removed.
        proc = self.work("--save-baseline", "less", "--exact", "instr/nop4", "instr/nop5",
                         "work/loop", work=990)
        self.assertEqual(proc.returncode, 0, self.text(proc))
        proc = run(WORK, "--baseline-dir", self.dir, "--load-baseline", "less", "--baseline",
                   "main")
        self.check("instructions_saved_files.txt", self.text(proc))
        proc = run(WORK, "--baseline-dir", self.dir, "--load-baseline", "less", "--baseline",
                   "main", "--fail-on-regression", "--baseline-strict", "instr/")
        self.check("instructions_saved_files_strict.txt", self.text(proc))

    def test_cache_simulation_fields(self):
        proc = self.work("--instructions-cache-sim", "--instructions-iterations", "10",
                         "--output-format", "json", "--exact", "instr/nop4")
        self.check("instructions_cache_sim.json", self.json_of(proc))


class WallShapeTest(Golden):
    FAST = ["--warm-up-time", "0.01", "--measurement-time", "0.05", "--nresamples", "100",
            "--processes", "2"]
    BENCHES = ["fix/a", "fix/copy/8", "trouble/skip"]

    def test_json_shape(self):
        if not FIXTURE:
            self.skipTest("E2E_FIXTURE is not set")
        proc = run(FIXTURE, *self.FAST, "--output-format", "json", "--baseline-dir", self.dir,
                   "--save-baseline", "main", "--exact", *self.BENCHES)
        self.assertEqual(proc.returncode, 0, self.text(proc))
        self.check("time_run_shape.json", mask_time_doc(json.loads(proc.stdout)))
        with open(os.path.join(self.dir, "main.json"), encoding="utf-8") as f:
            self.check("time_baseline_shape.json", mask_time_doc(json.load(f)))
        proc = run(FIXTURE, *self.FAST, "--output-format", "json", "--baseline-dir", self.dir,
                   "--baseline", "main", "--confirm-time", "0", "--exact", *self.BENCHES,
                   "fix/add")
        self.assertEqual(proc.returncode, 0, self.text(proc))
        self.check("time_compare_shape.json", mask_time_doc(json.loads(proc.stdout)))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]])

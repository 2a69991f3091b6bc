#!/usr/bin/env python3
"""The reference suite's parameterised workload benchmarks do work in proportion to their
parameter.

A series such as scaling/activation/1000, /10000, /100000 is read as "the same work on a bigger
input": its time per element is only comparable across the series when the elements an iteration
processes grow with the parameter. scaling/activation once spread from a single node, whose wave
reached 4099, 1234 and 35629 edges: the 10000-node graph did the least work.

The real suite program runs every parameterised benchmark of the workload groups (all but `harness`)
with a tiny budget and --json; no time is looked at. For each parameterised family, every measured
benchmark must declare its elements per iteration, and elements / parameter must agree across the
family within TOLERANCE (stated here: 2%). Families the machine skips (gpu/ without a GPU) are
reported and left out; the scaling/ families must be there, so the test cannot pass by checking
nothing. Standard library only.
"""
import json
import os
import re
import sys
import tempfile
import unittest

import e2e_helpers

BENCH = os.environ.get("E2E_BENCH", "")
TOLERANCE = 0.02
TINY = ["--warm-up-time", "0", "--measurement-time", "0.001", "--sample-size", "2",
        "--in-process", "--rounds", "1", "--nresamples", "10", "--output-format", "csv"]
MUST_HAVE = {"scaling/activation", "scaling/similarity", "scaling/read_probe",
             "scaling/similarity_batch"}


@unittest.skipIf(not BENCH, "E2E_BENCH is not set (ctest sets it)")
class ScalingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        listed = e2e_helpers.run([BENCH, "--list"], timeout=60, check=True).stdout.split()
        ids = [i for i in listed if re.search(r"/-?[0-9]+$", i) and not i.startswith("harness/")]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.json")
            p = e2e_helpers.run([BENCH, *TINY, "--json", path, "--exact", *ids], timeout=600)
            if p.returncode != 0:
                raise AssertionError(f"bench exited {p.returncode}: {p.stderr}")
            with open(path, encoding="utf-8") as f:
                cls.results = json.load(f)["benchmarks"]

    def families(self):
        """{family: [(param, result), ...]} of the parameterised benchmarks, by parameter."""
        fam = {}
        for b in self.results:
            if b["param"] is not None:
                fam.setdefault(re.sub(r"/-?[0-9]+$", "", b["id"]), []).append((b["param"], b))
        return {k: sorted(v, key=lambda x: x[0]) for k, v in fam.items()}

    def test_elements_grow_in_proportion_to_the_parameter(self):
        checked = set()
        for family, members in sorted(self.families().items()):
            measured = [(n, b) for n, b in members if b["status"] == "ok"]
            if len(measured) < 2:
                print(f"{family}: not checked ({len(members) - len(measured)} of "
                      f"{len(members)} skipped or failed here)", file=sys.stderr)
                continue
            with self.subTest(family=family):
                per = []
                for n, b in measured:
                    elements = b["throughput"].get("elements_per_iteration")
                    self.assertIsNotNone(elements, f"{b['id']} declares no elements per iteration")
                    per.append(elements / n)
                growth = [b["throughput"]["elements_per_iteration"] for _, b in measured]
                self.assertEqual(growth, sorted(set(growth)),
                                 f"{family}: elements do not grow with the parameter: {growth}")
                spread = max(per) / min(per) - 1
                print(f"{family}: elements per unit of parameter "
                      f"{', '.join(f'{x:.4g}' for x in per)} (spread {spread:.2%})",
                      file=sys.stderr)
                self.assertLessEqual(spread, TOLERANCE,
                                     f"{family}: elements / parameter {per} differ by more than "
                                     f"{TOLERANCE:.0%}")
                checked.add(family)
        self.assertTrue(MUST_HAVE <= checked, f"not checked: {MUST_HAVE - checked}")


if __name__ == "__main__":
    unittest.main()

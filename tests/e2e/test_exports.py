#!/usr/bin/env python3
"""The shared library exports the public API and nothing else, and the programs that link the
library itself use nothing else (docs/architecture.md, "Exported symbols and ABI"; docs/api.md).

ExportsTest: `nm -D --defined-only` of libharness.so (the one -DBUILD_SHARED_LIBS=ON builds, or
in a static build the same objects linked as a shared library in the build tree) names only
functions the installed headers declare, the weak main(), and the component interface
(api_names.py says how each is read); every function the headers declare is exported; an
internal function (bench__bootstrap) is in the library but not exported, so the check is not
vacuous.

ProgramsTest: the objects of every program of the build that links the harness itself (the
reference suite, the end-to-end fixtures, the man page's program; not the unit tests, which link
the internals on purpose) leave undefined no bench_ or bench__ symbol beyond those exports: each
would fail to link against the shared library.

Environment (ctest sets it): EXPORTS_ROOT (the source tree), EXPORTS_LIB (the shared library),
EXPORTS_OBJECTS (the programs' object files, separated by ':'), NM (default nm).
Standard library only.
"""
import os
import re
import unittest

import api_names
import e2e_helpers

ROOT = os.environ.get("EXPORTS_ROOT", "")
LIB = os.environ.get("EXPORTS_LIB", "")
OBJECTS = [p for p in os.environ.get("EXPORTS_OBJECTS", "").split(":") if p]
NM = os.environ.get("NM", "nm")


def symbols(*args):
    """[(type letter, name)] nm prints for args, a symbol version (name@V) cut off."""
    out = e2e_helpers.run([NM, *args], timeout=60, check=True).stdout
    found = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 2 and len(fields[-2]) == 1:
            found.append((fields[-2], re.sub(r"@.*", "", fields[-1])))
    return found


@unittest.skipIf(not ROOT or not LIB, "EXPORTS_ROOT and EXPORTS_LIB are not set (ctest sets them)")
class ExportsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.allowed = api_names.exportable(ROOT)
        # __odr_asan.NAME: AddressSanitizer's marker beside each global variable of the API
        # (bench__spans_on) in a sanitizer build, not a symbol of the library's own.
        cls.exported = {name for _, name in symbols("-D", "--defined-only", LIB)
                        if not name.startswith("__odr_asan.")}

    def test_exports_only_the_api(self):
        self.assertEqual(sorted(self.exported - self.allowed), [],
                         f"{LIB} exports symbols that are not the public API")

    def test_exports_every_function_of_the_headers(self):
        names = api_names.header_names(api_names.installed_headers(ROOT))
        functions = {n for n, kind in names.items() if kind == "function"}
        self.assertGreater(len(functions), 15, "the headers' functions were not recognised")
        self.assertEqual(sorted(functions - self.exported), [],
                         f"declared in the installed headers but not exported by {LIB}")
        self.assertIn("main", self.exported)

    def test_internals_are_present_but_hidden(self):
        local = {name for kind, name in symbols("--defined-only", LIB) if kind == "t"}
        self.assertIn("bench__bootstrap", local,
                      "no local bench__bootstrap: the library's own symbols were not read")
        self.assertNotIn("bench__bootstrap", self.exported)


@unittest.skipIf(not ROOT or not OBJECTS,
                 "EXPORTS_ROOT and EXPORTS_OBJECTS are not set (ctest sets them)")
class ProgramsTest(unittest.TestCase):
    def test_programs_use_only_the_exports(self):
        allowed = api_names.exportable(ROOT)
        beyond = {}
        for path in OBJECTS:
            for _, name in symbols("-u", path):
                if name.startswith("bench_") and name not in allowed:
                    beyond.setdefault(name, os.path.basename(path))
        self.assertGreater(len(OBJECTS), 10, "too few program objects were given")
        self.assertEqual(beyond, {}, "programs that link the harness call internals (symbol: "
                         "object); link them with harness_internal, or make the function public")


if __name__ == "__main__":
    unittest.main()

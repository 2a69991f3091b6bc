#!/usr/bin/env python3
"""Every test class of an e2e file registered with CLASSES runs in some ctest entry.

tests/e2e/CMakeLists.txt registers a file either whole (every class runs) or by CLASSES, one
entry per class or group of classes so that ctest -j can spread them. With CLASSES, a class
added to the file later and not to the list would never run, and nothing would say so. This
check reads the CMake file and the Python files: for each file registered by CLASSES (the union
of all its registrations), every class that has test methods and a base class (a runnable test
case, not a mixin of tests) must be listed, and every listed class must exist.
Exit 0 when they agree, 1 with one line per difference.
"""
import ast
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def registrations(cmake_text):
    """{script: set of listed classes} for the files registered with CLASSES."""
    listed = {}
    for m in re.finditer(r"e2e_python\(\s*\w+\s+(\S+\.py)(.*?)\)\s*\n", cmake_text, re.S):
        script, rest = m.groups()
        if "CLASSES" not in rest:
            continue
        args = re.split(r"\b(?:TIMEOUT|TIMING|LABELS|ENV)\b", rest.split("CLASSES", 1)[1])[0]
        names = listed.setdefault(script, set())
        for entry in args.split():
            names.update(entry.split("=", 1)[-1].split("+"))
    return listed


def runnable_classes(path):
    """The classes of the file that unittest runs: a class with a base and test methods of its
    own, or one made of two or more bases (a mixin of tests and a test case)."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    found = set()
    for n in tree.body:
        if not isinstance(n, ast.ClassDef) or not n.bases:
            continue
        own_tests = any(isinstance(f, ast.FunctionDef) and f.name.startswith("test")
                        for f in n.body)
        if own_tests or len(n.bases) > 1:
            found.add(n.name)
    return found


def main():
    cmake = open(os.path.join(HERE, "CMakeLists.txt"), encoding="utf-8").read()
    problems = []
    listed = registrations(cmake)
    if not listed:
        problems.append("CMakeLists.txt: no file registered with CLASSES was found")
    for script, names in sorted(listed.items()):
        defined = runnable_classes(os.path.join(HERE, script))
        for name in sorted(defined - names):
            problems.append(f"{script}: class {name} is in no ctest entry (add it to CLASSES)")
        for name in sorted(names - defined):
            problems.append(f"{script}: CLASSES names {name}, which the file does not define")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

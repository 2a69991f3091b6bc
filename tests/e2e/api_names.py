"""api_names.py: the names of the harness's public API, read from the installed headers
(harness/include/harness/*.h) and from the few declarations in harness/src that the components
call, so that the documentation test (test_docs.py, ApiDocTest) and the export test
(test_exports.py) judge docs/api.md and libharness.so against one reading of the same text.

A header is read as the compiler's preprocessor would see its declarations, without running it:
comments go, continued lines join. What it yields, by kind:
- "function": every function the header declares (bench_main, ..., and the bench__ functions
  its macros expand to, which compiled programs call: part of the ABI);
- "variable": every object the header declares extern (bench__spans_on, which the span macros
  test: part of the ABI too);
- "macro": every macro whose name has no double underscore (BENCH_FN, bench_black_box, ...);
  BENCH__ helpers exist for the other macros only;
- "type": every typedef name (bench_t, bench_desc, and the ABI's bench__node);
- "constant": every enumerator (BENCH_SAMPLING_AUTO, BENCH_KIND_CUDA, ...);
- "field": every field of the descriptors a program fills in, bench_desc and bench_group_desc,
  written ".name" (the settings of BENCH__SETTINGS_FIELDS included);
- "input": every BENCH_ macro the header tests but does not define, which the including file's
  build may define (BENCH_BUILD_REVISION).
Standard library only.
"""
import os
import re

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\([^)]*\))?[ \t]*(.*)$", re.M)
DIRECTIVE = re.compile(r"^[ \t]*#[^\n]*$", re.M)
TESTED = re.compile(r"^[ \t]*#[ \t]*(?:ifn?def[ \t]+|(?:el)?if[ \t]+defined[ \t]*\(?[ \t]*)(\w+)",
                    re.M)
FUNCTION = re.compile(r"\b(bench_\w+)\s*\([^;{}()]*(?:\([^;{}]*\))?[^;{}()]*\)\s*"
                      r"(?:__attribute__\s*\(\(.*?\)\)\s*)*;", re.S)
TYPEDEF_BLOCK = re.compile(r"typedef\s+(?:struct|enum|union)\s*(\w*)\s*\{(.*?)\}\s*(\w+)\s*;",
                           re.S)
TYPEDEF_PLAIN = re.compile(r"typedef\s+[^;{}]*?\b(\w+)\s*;")
ENUM = re.compile(r"\benum\s*\w*\s*\{(.*?)\}", re.S)
VARIABLE = re.compile(r"\bextern\s+[\w\s\*]*?\b(bench_\w+)\s*;")
DESCRIPTORS = ("bench_desc", "bench_group_desc")
# A declaration in harness/src exported for the components (core/base.h's BENCH__COMPONENT_API,
# or the visibility attribute written out where base.h is not included).
COMPONENT_DECL = re.compile(r"(?:BENCH__COMPONENT_API|"
                            r"__attribute__\(\(visibility\(\"default\"\)\)\))"
                            r"[^;{(]*?\b(bench_\w+)\s*\(")


def installed_headers(root):
    """The headers `cmake --install` installs (harness/include/harness/*.h), sorted."""
    folder = os.path.join(root, "harness", "include", "harness")
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".h"))


def _clean(text):
    """The text without comments, its continued lines joined."""
    return COMMENT.sub(" ", text).replace("\\\n", " ")


def _last_identifier(decl):
    """The name a member declaration declares: `void (*fn)(bench_t *b)` gives fn, `int line`
    gives line; None for an empty piece."""
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
    if m:
        return m.group(1)
    words = re.findall(r"\w+", decl)
    return words[-1] if words else None


def header_names(paths):
    """{name: kind} of the public names the headers at paths declare (the module's docstring says
    which). A field's name is written with its leading dot."""
    names = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = _clean(f.read())
        macros = {}
        for m in DEFINE.finditer(text):
            macros[m.group(1)] = m.group(3)
            if "__" not in m.group(1) and not m.group(1).endswith("_H"):
                names[m.group(1)] = "macro"
        for m in TESTED.finditer(text):
            if m.group(1).startswith("BENCH_") and m.group(1) not in macros:
                names[m.group(1)] = "input"
        code = DIRECTIVE.sub(" ", text)
        for m in TYPEDEF_BLOCK.finditer(code):
            names[m.group(3)] = "type"
            if m.group(3) in DESCRIPTORS:
                for piece in m.group(2).split(";"):
                    if piece.strip() in macros:  # BENCH__SETTINGS_FIELDS
                        piece = macros[piece.strip()]
                    for decl in piece.split(";"):
                        name = _last_identifier(decl)
                        if name:
                            names["." + name] = "field"
        for m in TYPEDEF_PLAIN.finditer(TYPEDEF_BLOCK.sub(" ", code)):
            names[m.group(1)] = "type"
        for m in ENUM.finditer(code):
            for entry in m.group(1).split(","):
                name = re.match(r"\s*(\w+)", entry)
                if name:
                    names[name.group(1)] = "constant"
        for m in FUNCTION.finditer(TYPEDEF_BLOCK.sub(" ", code)):
            names[m.group(1)] = "function"
        for m in VARIABLE.finditer(code):
            names[m.group(1)] = "variable"
    return names


def component_api(root):
    """The internal functions of harness/src exported for the components (sorted): the
    declarations marked BENCH__COMPONENT_API or with default visibility written out."""
    found = set()
    for top, _, files in os.walk(os.path.join(root, "harness", "src")):
        for name in files:
            if name.endswith(".h"):
                with open(os.path.join(top, name), encoding="utf-8") as f:
                    text = _clean(f.read())
                text = DEFINE.sub(" ", text)
                found |= set(COMPONENT_DECL.findall(text))
    return sorted(found)


def exportable(root):
    """Every symbol libharness may export: the functions and objects the installed headers
    declare, the weak main() a file of BENCH_FNs links with, and the component interface."""
    names = header_names(installed_headers(root))
    funcs = {n for n, kind in names.items() if kind in ("function", "variable")}
    return funcs | {"main"} | set(component_api(root))

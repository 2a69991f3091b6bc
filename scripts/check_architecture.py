#!/usr/bin/env python3
"""check_architecture.py: the rules that keep harness/src/ a house a newcomer can walk.

1. Calls go one way: no two source files of the library use each other's functions or data
   (read from the compiled objects with nm, so a declaration nobody calls does not count and a
   call through a header does). A longer circle is reported too.
2. Each folder of harness/src/ includes only the folders its README.md names on its
   "May include:" line (its own always); an entry FOLDER/FILE.h allows that header alone.
3. Calls go down the same layers: each object's undefined symbols are resolved to the object
   that defines them, and a call from folder F into another folder is allowed only when F's
   "May include:" line names that folder (or FOLDER/FILE.h, for the functions of FILE.c). A call
   that goes up the layers with no include to show it (a declaration on the wrong floor) is a
   breach. The public API of harness/include (bench_*, one underscore) is the body's interface
   and may be called from any folder, as a benchmark body calls it.
   Each function or variable a header of harness/src declares is defined in that header's folder
   (a declaration on a lower floor than its definition would let a call up the layers look like
   a call down).
4. The walk in docs/architecture.md (one sample from BENCH_ITER to the results file) names
   only files that exist, and each of them once (--walk).
5. Sizes: no source file over MAX_FILE_LINES lines and no function over MAX_FUNCTION_LINES
   (signature to closing brace), but for the exceptions named in SIZE_EXCEPTIONS.
6. Verdicts are worded in report/ only (docs/architecture.md, "Four questions, four answers"):
   no object outside VERDICT_WORDS_IN calls bench__verdict_name (store/ writes a verdict's name
   into files, compare/ owns it).

Usage: check_architecture.py SRC_DIR [--walk MARKDOWN] OBJECT...
           exit 0 clean, 1 with one line per breach
       check_architecture.py --self-test CC   (the checks must catch made-up breaches)
"""
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120
# Files (folder/file.c) and functions (folder/file.c:name) the size rule leaves alone, each with
# why. Remove an entry when its reason is gone.
SIZE_EXCEPTIONS = {}
# The folders whose objects may call bench__verdict_name: report/ prints a verdict, store/ writes
# its name into a file, compare/ defines it.
VERDICT_WORDS_IN = {"report", "store", "compare"}


def symbols(objects):
    """Maps each object to (defined, undefined) global symbol sets."""
    out = {}
    for obj in objects:
        text = subprocess.run(["nm", "-P", obj], check=True, capture_output=True,
                              text=True).stdout
        defined, undefined = set(), set()
        for line in text.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            name, kind = parts[0], parts[1]
            if kind == "U":
                undefined.add(name)
            elif kind.isupper() or kind in ("w", "v"):
                defined.add(name)
        out[source_name(obj)] = (defined, undefined)
    return out


def source_name(obj):
    """harness/CMakeFiles/harness.dir/src/run/ab.c.o -> run/ab.c"""
    path = obj.replace(os.sep, "/")
    if "/src/" in path:
        path = path.rsplit("/src/", 1)[1]
    return re.sub(r"\.o(bj)?$", "", path)


def call_graph(syms):
    owner = {}
    for src, (defined, _) in syms.items():
        for name in defined:
            owner.setdefault(name, src)
    graph = {src: set() for src in syms}
    for src, (_, undefined) in syms.items():
        for name in undefined:
            dst = owner.get(name)
            if dst and dst != src:
                graph[src].add(dst)
    return graph


def circles(graph):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def readme_allowed(src_dir):
    """Each folder's allowed entries (allowed_of), or None when its README lacks the line."""
    out = {}
    for folder in sorted(os.listdir(src_dir)):
        readme = os.path.join(src_dir, folder, "README.md")
        if not os.path.isfile(readme):
            continue
        m = re.search(r"^May include:\s*(.*)$", open(readme, encoding="utf-8").read(), re.M)
        out[folder] = allowed_of(folder, m.group(1)) if m else None
    return out


def is_public(name):
    """A function of the public API (bench.h): bench_ with one underscore."""
    return re.match(r"bench_(?!_)", name) is not None


def layer_calls(syms, allowed):
    """The calls between folders that the README's "May include:" lines do not allow: one line
    per (caller file, callee file), naming the symbols."""
    owner = {}
    for src, (defined, _) in syms.items():
        for name in defined:
            owner.setdefault(name, src)
    found = {}
    for src, (_, undefined) in sorted(syms.items()):
        folder = src.split("/", 1)[0]
        ok = allowed.get(folder)
        if ok is None:
            continue
        for name in sorted(undefined):
            dst = owner.get(name)
            target = dst.split("/", 1)[0] if dst else None
            if target not in allowed or is_public(name):
                continue  # not the library's, a generated file, or the public API
            header = re.sub(r"\.(c|cu)$", ".h", dst)
            if target == folder or target in ok or header in ok:
                continue
            found.setdefault((src, dst), []).append(name)
    breaches = []
    for (src, dst), names in sorted(found.items()):
        folder = src.split("/", 1)[0]
        others = ", ".join(sorted(allowed[folder] - {folder})) or "nothing"
        breaches.append(f"{src} calls {', '.join(names)} of {dst}, a folder {folder}/README.md "
                        f"does not allow ({others})")
    return breaches


def verdict_words(syms):
    """The objects outside VERDICT_WORDS_IN that word a verdict (call bench__verdict_name)."""
    return [f"{src} words a verdict (bench__verdict_name): print it with a function of report/"
            for src, (_, undefined) in sorted(syms.items())
            if "bench__verdict_name" in undefined and src.split("/", 1)[0] not in VERDICT_WORDS_IN]


def declarations(src_dir, syms):
    """The declarations in a folder's headers of what another folder's object defines."""
    owner = {}
    for src, (defined, _) in syms.items():
        for name in defined:
            owner.setdefault(name, src)
    breaches = []
    for folder in sorted(os.listdir(src_dir)):
        path = os.path.join(src_dir, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith(".h"):
                continue
            text = open(os.path.join(path, name), encoding="utf-8").read()
            text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
            found = re.findall(r"^(?!static\b|typedef\b|#)[A-Za-z_][^;{}()=]*?\b(\w+)\s*\(", text,
                               re.M)
            found += re.findall(r"^extern\b[^;(]*?\b(\w+)\s*[\[;=]", text, re.M)
            for decl in sorted(set(found)):
                dst = owner.get(decl, "")
                home = dst.split("/", 1)[0]
                if home and os.path.isdir(os.path.join(src_dir, home)) and home != folder:
                    breaches.append(f"{folder}/{name} declares {decl}, which {dst} defines: "
                                    f"declare it in a header of {home}/")
    return breaches


def functions(text):
    """(name, first line, lines) of each function definition: a signature starting at column 0
    whose body opens with "{" alone at column 0 and closes with "}" alone at column 0."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if line != "{":
            continue
        j = i - 1
        while j > 0 and lines[j][:1] in (" ", "\t") and lines[j - 1].strip():
            j -= 1
        k = i + 1
        while k < len(lines) and lines[k] != "}":
            k += 1
        m = re.search(r"(\w+)\s*\(", lines[j])
        out.append((m.group(1) if m else lines[j].strip(), j + 1, k - j + 1))
    return out


def size_rules(src_dir):
    breaches = []
    for folder in sorted(os.listdir(src_dir)):
        path = os.path.join(src_dir, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if not re.search(r"\.(c|cu)$", name):
                continue
            rel = f"{folder}/{name}"
            if rel in SIZE_EXCEPTIONS:
                continue
            text = open(os.path.join(path, name), encoding="utf-8").read()
            n = text.count("\n")
            if n > MAX_FILE_LINES:
                breaches.append(f"{rel}: {n} lines, more than {MAX_FILE_LINES}: split it by topic")
            for func, first, length in functions(text):
                if length > MAX_FUNCTION_LINES and f"{rel}:{func}" not in SIZE_EXCEPTIONS:
                    breaches.append(f"{rel}:{first}: {func} is {length} lines, more than "
                                    f"{MAX_FUNCTION_LINES}: split it")
    return breaches


def include_rules(src_dir):
    breaches = []
    for folder in sorted(os.listdir(src_dir)):
        path = os.path.join(src_dir, folder)
        if not os.path.isdir(path):
            continue
        readme = os.path.join(path, "README.md")
        if not os.path.exists(readme):
            breaches.append(f"{folder}/: no README.md saying what it owns and may include")
            continue
        m = re.search(r"^May include:\s*(.*)$", open(readme, encoding="utf-8").read(), re.M)
        if not m:
            breaches.append(f"{folder}/README.md: no 'May include:' line")
            continue
        allowed = allowed_of(folder, m.group(1))
        for name in sorted(os.listdir(path)):
            if not re.search(r"\.(c|h|cu|c\.in)$", name):
                continue
            text = open(os.path.join(path, name), encoding="utf-8").read()
            for inc in re.findall(r'^#include "([^"]+)"', text, re.M):
                top = inc.split("/", 1)[0] if "/" in inc else ""
                if top == "harness":
                    continue
                if not top:
                    breaches.append(f"{folder}/{name}: #include \"{inc}\" names no folder")
                elif top not in allowed and inc not in allowed:
                    breaches.append(f"{folder}/{name}: includes {inc}, but {folder}/README.md "
                                    f"allows {', '.join(sorted(allowed - {folder})) or 'nothing'}")
    return breaches


def allowed_of(folder, line):
    """The entries of a README's "May include:" line, and the folder itself: a folder name
    allows all of that folder, FOLDER/FILE.h that header alone."""
    allowed = {w.strip(" .`") for w in line.split(",") if w.strip(" .`")}
    allowed = {w if "/" in w.rstrip("/") else w.strip("/") for w in allowed}
    allowed.discard("nothing")
    allowed.add(folder)
    return allowed


def self_test(cc):
    """Builds a made-up tree with one breach of each rule and checks that each is reported."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")
        for folder, allowed in (("low", "nothing"), ("high", "low"), ("top", "high/b.h")):
            os.makedirs(os.path.join(src, folder))
            with open(os.path.join(src, folder, "README.md"), "w", encoding="utf-8") as f:
                f.write(f"# {folder}/\n\nMay include: {allowed}\n")
        files = {
            "low/a.c": '#include "high/b.h"\nint b(void);\nint a(void) { return b(); }\n',
            "high/b.c": "int a(void);\nint b(void) { return 1; }\nint c(void) { return a(); }\n",
            "high/b.h": "int b(void);\n",
            "high/d.c": "int a(void);\nint dv = 1;\nint d(void) { return a(); }\n",
            # up the layers with no include to show it, and no circle either
            "low/e.c": "int d(void);\nint e(void) { return d(); }\n",
            # a declaration on a floor below its definition
            "low/l.h": "int d(void);\nextern int dv;\n",
            # b.h's functions are allowed, d.c's are not
            "top/t.c": '#include "high/b.h"\nint d(void);\nint t(void) { return b() + d(); }\n',
            # a verdict worded outside report/
            "top/v.c": "const char *bench__verdict_name(int v);\n"
                       "const char *v(void) { return bench__verdict_name(1); }\n",
            # one file and one function too long
            "top/big.c": "int big(void)\n{\n" + "    ;\n" * (MAX_FILE_LINES + 1) +
                         "    return 0;\n}\n",
        }
        objects = []
        for name, text in files.items():
            with open(os.path.join(src, name), "w", encoding="utf-8") as f:
                f.write(text)
        for name in files:
            path = os.path.join(src, name)
            if name.endswith(".c"):
                obj = os.path.join(tmp, "obj", "src", name + ".o")
                os.makedirs(os.path.dirname(obj), exist_ok=True)
                subprocess.run([cc, "-c", "-I", src, path, "-o", obj], check=True)
                objects.append(obj)
        breaches = include_rules(src)
        syms = symbols(objects)
        found = circles(call_graph(syms))
        layers = layer_calls(syms, readme_allowed(src)) + declarations(src, syms)
        words = verdict_words(syms)
        sizes = size_rules(src)
    want_include = ["low/a.c: includes high/b.h, but low/README.md allows nothing"]
    want_circle = [["high/b.c", "low/a.c"]]
    want_layers = [
        "low/a.c calls b of high/b.c, a folder low/README.md does not allow (nothing)",
        "low/e.c calls d of high/d.c, a folder low/README.md does not allow (nothing)",
        "top/t.c calls d of high/d.c, a folder top/README.md does not allow (high/b.h)",
        "low/l.h declares d, which high/d.c defines: declare it in a header of high/",
        "low/l.h declares dv, which high/d.c defines: declare it in a header of high/",
    ]
    want_sizes = [f"top/big.c: {MAX_FILE_LINES + 5} lines, more than {MAX_FILE_LINES}: "
                  "split it by topic",
                  f"top/big.c:1: big is {MAX_FILE_LINES + 5} lines, more than "
                  f"{MAX_FUNCTION_LINES}: split it"]
    want_words = ["top/v.c words a verdict (bench__verdict_name): print it with a function of "
                  "report/"]
    if breaches != want_include or found != want_circle or layers != want_layers or \
            sizes != want_sizes or words != want_words:
        print(f"self-test failed: includes {breaches}, circles {found}, layers {layers}, "
              f"sizes {sizes}, verdict words {words}")
        return 1
    print("self-test: the made-up include breach, circle of calls, calls up the layers, "
          "declarations on the wrong floor, sizes and a verdict worded outside report/ were all "
          "reported")
    return 0


def walk_names(markdown, src_dir):
    """The breaches of the walk section of `markdown`: a file that does not exist, or one named
    twice."""
    text = open(markdown, encoding="utf-8").read()
    m = re.search(r"^## The walk.*?$(.*?)(?=^## )", text, re.M | re.S)
    if not m:
        return [f"{markdown}: no '## The walk' section"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(src_dir)))
    names = re.findall(r"`((?:harness/include/harness|[a-z]+)/[a-z_0-9]+\.[ch])`", m.group(1))
    breaches, seen = [], set()
    for name in names:
        path = os.path.join(root, name) if name.startswith("harness/") else \
            os.path.join(src_dir, name)
        if not os.path.exists(path):
            breaches.append(f"{markdown}: the walk names {name}, which does not exist")
        if name in seen:
            breaches.append(f"{markdown}: the walk visits {name} twice")
        seen.add(name)
    if len(seen) < 5:
        breaches.append(f"{markdown}: the walk names only {len(seen)} files")
    return breaches


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        return self_test(argv[2])
    if len(argv) < 3:
        print("\n".join(ln for ln in __doc__.splitlines() if "check_architecture.py " in ln),
              file=sys.stderr)
        return 2
    src_dir, objects = argv[1], argv[2:]
    breaches = include_rules(src_dir)
    if len(objects) >= 2 and objects[0] == "--walk":
        breaches += walk_names(objects[1], src_dir)
        objects = objects[2:]
    syms = symbols(objects)
    graph = call_graph(syms)
    breaches += layer_calls(syms, readme_allowed(src_dir))
    breaches += declarations(src_dir, syms)
    breaches += size_rules(src_dir)
    breaches += verdict_words(syms)
    for comp in circles(graph):
        pairs = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
        breaches.append(f"circle of calls between {', '.join(comp)}: {'; '.join(pairs)}")
    for line in breaches:
        print(line)
    if not breaches:
        print(f"architecture: {len(graph)} files, calls one way and down the layers, includes "
              f"as the READMEs say, no file over {MAX_FILE_LINES} lines, no function over "
              f"{MAX_FUNCTION_LINES}, verdicts worded in report/")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

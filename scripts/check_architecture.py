#!/usr/bin/env python3
"""check_architecture.py: the three rules that keep harness/src/ a house a newcomer can walk.

1. Calls go one way: no two source files of the library use each other's functions or data
   (read from the compiled objects with nm, so a declaration nobody calls does not count and a
   call through a header does). A longer circle is reported too.
2. Each folder of harness/src/ includes only the folders its README.md names on its
   "May include:" line (its own always).

3. The walk in docs/architecture.md (one sample from BENCH_ITER to the results file) names
   only files that exist, and each of them once (--walk).

Usage: check_architecture.py SRC_DIR [--walk MARKDOWN] OBJECT...
           exit 0 clean, 1 with one line per breach
       check_architecture.py --self-test CC   (the checks must catch made-up breaches)
"""
import os
import re
import subprocess
import sys


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
        for folder, allowed in (("low", "nothing"), ("high", "low")):
            os.makedirs(os.path.join(src, folder))
            with open(os.path.join(src, folder, "README.md"), "w", encoding="utf-8") as f:
                f.write(f"# {folder}/\n\nMay include: {allowed}\n")
        files = {
            "low/a.c": '#include "high/b.h"\nint b(void);\nint a(void) { return b(); }\n',
            "high/b.c": "int a(void);\nint b(void) { return 1; }\nint c(void) { return a(); }\n",
            "high/b.h": "int b(void);\n",
            "high/d.c": "int a(void);\nint d(void) { return a(); }\n",
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
        found = circles(call_graph(symbols(objects)))
    want_include = ["low/a.c: includes high/b.h, but low/README.md allows nothing"]
    want_circle = [["high/b.c", "low/a.c"]]
    if breaches != want_include or found != want_circle:
        print(f"self-test failed: includes {breaches}, circles {found}")
        return 1
    print("self-test: the made-up include breach and circle of calls were both reported")
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
    graph = call_graph(symbols(objects))
    for comp in circles(graph):
        pairs = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
        breaches.append(f"circle of calls between {', '.join(comp)}: {'; '.join(pairs)}")
    for line in breaches:
        print(line)
    if not breaches:
        print(f"architecture: {len(graph)} files, calls one way, includes as the READMEs say")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

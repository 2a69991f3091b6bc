#!/usr/bin/env bash
# End-to-end test of what the library installs beside itself, used from the installation alone.
#
# Usage: test_installed_tools.sh SOURCE_DIR BUILD_DIR [EXTRA_FLAGS]
# Installs BUILD_DIR into a temporary prefix and moves the prefix elsewhere, then, in a directory
# outside both trees and with only the prefix's bin/ and the system's on PATH: (1) the layout:
# bench-ci-gate, bench-report, the man page bench(1), the documentation under share/doc/harness
# (README.md and docs/, including the two files --help names); no installed text file names the
# source or build tree. (2) `man bench` through MANPATH renders the page, and every flag of
# `--help` of a program built against the installation appears in it as an option. (3)
# bench-report turns that program's --json results into an index page and a benchmark page, and
# names itself in its usage and errors; a field of the wrong type is named by its JSON path (the
# installed copy finds the schema where the documentation is installed) and the report stays.
# EXTRA_FLAGS (sanitizer flags of the library) go to the compile and link. Temporary files are
# removed on exit.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
    echo "usage: $0 SOURCE_DIR BUILD_DIR [EXTRA_FLAGS]" >&2
    exit 2
fi
source_dir="$(cd "$1" && pwd)"
build="$(cd "$2" && pwd)"
read -r -a extra <<< "${3:-}"
cc="${CC:-cc}"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/harness-tools-test.XXXXXX")"
trap 'rm -rf -- "$tmp"' EXIT

fail() {
    echo "test_installed_tools: FAIL: $*" >&2
    exit 1
}

cmake --install "$build" --prefix "$tmp/installed" > "$tmp/install.log" ||
    fail "cmake --install failed: $(cat "$tmp/install.log")"
prefix="$tmp/moved"
mv "$tmp/installed" "$prefix"
mkdir -p "$tmp/work"
cd "$tmp/work"
export PATH="$prefix/bin:/usr/local/bin:/usr/bin:/bin"

# (1) the layout, and nothing that points back at the trees it came from.
for f in bin/bench-ci-gate bin/bench-report share/man/man1/bench.1 share/doc/harness/README.md \
    share/doc/harness/docs/cli.md share/doc/harness/docs/results-format.md \
    share/doc/harness/docs/results.schema.json share/doc/harness/docs/ci.md; do
    [[ -e "$prefix/$f" ]] || fail "$f is not installed"
done
for f in bench-ci-gate bench-report; do
    [[ -x "$prefix/bin/$f" ]] || fail "bin/$f is not executable"
done
leaks="$(grep -rIlF -e "$source_dir" -e "$build" "$prefix" || true)"
[[ -z "$leaks" ]] || fail "installed files name the source or build tree: $leaks"

# A program built against the installation alone.
pcdir="$(dirname "$(find "$prefix" -name harness.pc -path '*/pkgconfig/*' | head -n 1)")"
[[ -d "$pcdir" ]] || fail "harness.pc not installed"
read -r -a pcflags <<< "$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs harness)"
cat > "$tmp/mine.c" << 'END'
/* mine.c: one benchmark that moves 4 KiB per iteration. */
#include <string.h>
#include <harness/bench.h>

BENCH_FN(mine, copy)
{
    static char from[4096], to[4096];
    bench_set_bytes(b, sizeof to);
    BENCH_ITER(b) {
        memcpy(to, bench_black_box((char *)from), sizeof to);
        bench_clobber();
    }
}
END
"$cc" -O2 ${extra[@]+"${extra[@]}"} "$tmp/mine.c" "${pcflags[@]}" -o "$tmp/work/mine" ||
    fail "building a program against the installation failed"
help="$(./mine --help)" || fail "mine --help exited $?"
[[ "$help" == *"man bench"* ]] || fail "--help does not point to the man page: $help"

# (2) man bench, found through MANPATH: every option of --help is an option of the page.
page="$(MANPATH="$prefix/share/man" MANWIDTH=200 MANPAGER=cat man --nh --nj bench \
    2> "$tmp/man.err")" ||
    fail "man bench failed: $(cat "$tmp/man.err")"
[[ "$page" == *"BENCH(1)"*"SYNOPSIS"*"bench [OPTIONS] [FILTER...]"* ]] ||
    fail "man bench did not render the page: $page"
local_page="$(MANWIDTH=200 MANPAGER=cat man --nh --nj -l "$prefix/share/man/man1/bench.1")" ||
    fail "man -l bench.1 failed"
[[ "$local_page" == "$page" ]] || fail "man bench and man -l bench.1 differ"
flags="$(sed -nE 's/^ {2,6}(-[A-Za-z], )?(--[a-z][a-z0-9-]*).*/\2/p' <<< "$help")"
[[ "$(wc -l <<< "$flags")" -gt 20 ]] || fail "the help's option lines were not recognised"
while read -r flag; do
    grep -Eq "^ {4,8}(-[A-Za-z], )?$flag( |$)" <<< "$page" ||
        fail "$flag is in --help but not an option of the man page"
done <<< "$flags"

# (3) bench-report on a real run's results, from anywhere.
./mine --quick --json results.json > /dev/null 2> "$tmp/run.err" ||
    fail "mine --quick --json failed: $(cat "$tmp/run.err")"
bench-report results.json --out html > "$tmp/report.out" 2>&1 ||
    fail "bench-report failed: $(cat "$tmp/report.out")"
[[ -f html/index.html ]] || fail "bench-report wrote no html/index.html"
pages=(html/b-*.html)
[[ ${#pages[@]} -eq 1 && -f "${pages[0]}" ]] || fail "bench-report wrote no benchmark page"
grep -q "mine/copy" html/index.html || fail "the index does not name mine/copy"
grep -Eq "<th>samples</th><td>[0-9]+ in [0-9]+ processes," "${pages[0]}" ||
    fail "the benchmark page does not say how many processes the samples came from"
grep -q "^usage: bench-report " <<< "$(bench-report --help)" ||
    fail "bench-report --help does not name itself"
rc=0
err="$(bench-report missing.json 2>&1 > /dev/null)" || rc=$?
[[ "$rc" -eq 2 && "$err" == "bench-report: missing.json: "* && "$err" != *$'\n'* ]] ||
    fail "bench-report on a missing file: exit $rc, wanted 2 and one line naming it: $err"
# A field of the wrong type: the installed copy finds the schema it checks against (DOCDIR).
sed 's/"quick":[[:space:]]*true/"quick": "yes"/' results.json > wrong.json
rc=0
err="$(bench-report wrong.json --out html 2>&1 > /dev/null)" || rc=$?
[[ "$rc" -eq 2 && "$err" == "bench-report: wrong.json: \$.context.quick: expected boolean"* &&
    "$err" != *$'\n'* ]] ||
    fail "bench-report on a string for a boolean: exit $rc, wanted 2 and the field's path: $err"
[[ -f html/index.html ]] || fail "bench-report on a wrong file removed the earlier report"

echo "test_installed_tools: ok (layout, no path into the trees, man bench with every --help" \
    "flag, bench-report from the installation)"

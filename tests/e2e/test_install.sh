#!/usr/bin/env bash
# End-to-end test of the installed harness, as an outside project would use it.
#
# Usage: test_install.sh BUILD_DIR [EXTRA_FLAGS]
# Installs BUILD_DIR into a temporary prefix, then builds a two-file benchmark program that has
# no main() in three ways and runs each: (1) plain `cc` with the flags from pkg-config, (2) a tiny
# CMake project with find_package(harness) and harness::harness, (3) with its own main() calling
# bench_main(), which must replace the library's weak main() (and which the worker processes of
# --instructions, under valgrind, go through too); the CMake program records the revision of its
# checkout, rebuilt after a commit and after an edit, and not the working directory's; then (4)
# checks the errors for a duplicate id and for a program with no benchmarks, (5) that
# --alloc-stats of an outside program counts with the installed preload library libharness_alloc.so, and (6) the components:
# the core alone links neither libpfm4 nor the CUDA runtime nor libstdc++ (and, in a build without
# EXTRA_FLAGS, makes a program under 640 KiB), each installed component (harness-counters,
# harness-cuda) takes effect through pkg-config and through find_package(harness COMPONENTS ...),
# a component that is not there is a clear CMake error; (7) a benchmark file built with -O0 is
# recorded so in context.benchmark_builds and warned about, and the same file built with -O2 is
# not; (8) the program's own compiler flags are reported from its executable's debug info (-O2
# with -g), unknown without it, and apart from the library's build in --context and the JSON.
# EXTRA_FLAGS (e.g. the sanitizer flags the library was built with) are added to every
# compile and link. The temporary prefix and build trees are removed on exit.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 BUILD_DIR [EXTRA_FLAGS]" >&2
    exit 2
fi
build="$1"
read -r -a extra <<< "${2:-}"
cc="${CC:-cc}"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/harness-install-test.XXXXXX")"
trap 'rm -rf -- "$tmp"' EXIT

fail() {
    echo "test_install: FAIL: $*" >&2
    exit 1
}

# check_list PROG: PROG --list must print exactly the ids of a.c and b.c below.
check_list() {
    local got want
    got="$("$1" --list)" || fail "$1 --list exited $?"
    want="$(printf '%s\n' outside/from_a outside/from_b/16 outside/from_b/256)"
    [[ "$got" == "$want" ]] || fail "$1 --list printed:
$got
wanted:
$want"
}

# check_run PROG: one short run of one benchmark must succeed and report it.
check_run() {
    local out
    out="$("$1" --warm-up-time 0.01 --measurement-time 0.05 --nresamples 100 \
        --color never --exact outside/from_b/16)" || fail "$1 run exited $?"
    [[ "$out" == *"outside/from_b/16"*"time:   ["* ]] || fail "$1 printed no result: $out"
    [[ "$out" == *"thrpt:"* ]] || fail "$1 printed no throughput: $out"
}

# expect_error PROG WANT: PROG --list must exit 2 with one stderr line containing WANT, which
# begins with the program's name.
expect_error() {
    local err rc=0 name
    name="$(basename "$1")"
    err="$("$1" --list 2>&1 > /dev/null)" || rc=$?
    [[ "$rc" -eq 2 ]] || fail "$1 --list exited $rc, wanted 2 (stderr: $err)"
    [[ "$err" == "$name: "*"$2"* && "$err" != *$'\n'* ]] ||
        fail "$1 --list: wanted one line '$name: ...$2...', got: $err"
}

# build_project NAME WHAT: configures the CMake project $tmp/NAME_src against the installation
# (Release, EXTRA_FLAGS) into $tmp/NAME_build and builds it, logs in $tmp/NAME.log and
# $tmp/NAME-build.log; a failure names WHAT.
build_project() {
    local name="$1" what="$2"
    cmake -S "$tmp/${name}_src" -B "$tmp/${name}_build" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="${extra[*]}" \
        -DCMAKE_EXE_LINKER_FLAGS="${extra[*]}" > "$tmp/$name.log" 2>&1 ||
        fail "configuring $what failed: $(cat "$tmp/$name.log")"
    cmake --build "$tmp/${name}_build" > "$tmp/$name-build.log" 2>&1 ||
        fail "building $what failed: $(cat "$tmp/$name-build.log")"
}

prefix="$tmp/prefix"
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" ||
    fail "cmake --install failed: $(cat "$tmp/install.log")"
[[ -f "$prefix/include/harness/bench.h" ]] || fail "bench.h not installed"

pc="$(find "$prefix" -name harness.pc -path '*/pkgconfig/*' | head -n 1)"
[[ -n "$pc" ]] || fail "harness.pc not installed under $prefix"
[[ -n "$(find "$prefix" -name libharness.a -o -name 'libharness.so*' | head -n 1)" ]] ||
    fail "libharness not installed under $prefix"
config="$(find "$prefix" -name harnessConfig.cmake | head -n 1)"
# A shared core (-DBUILD_SHARED_LIBS=ON): the programs built with pkg-config's flags carry no
# run path, so the loader is told where it is (the CMake-built ones carry one).
shared_core="$(find "$prefix" -name libharness.so | head -n 1)"
if [[ -n "$shared_core" ]]; then
    LD_LIBRARY_PATH="$(dirname "$shared_core")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
fi
shim="$(find "$prefix" -name libharness_alloc.so | head -n 1)"
[[ -n "$shim" ]] || fail "libharness_alloc.so (the --alloc-stats preload library) not installed"
[[ -n "$config" ]] || fail "harnessConfig.cmake not installed under $prefix"

# (0) The installed core exports its public API only: every global symbol it defines is named in
# an installed header (a function of bench.h, or a bench__ name its macros expand to), is main()
# (the weak one), or is one a component installed beside it calls. An internal is still in the
# archive, but local (the check is not vacuous).
core_lib="$(find "$prefix" -name libharness.a | head -n 1)"
if [[ -n "$core_lib" ]]; then
    allowed="$tmp/allowed.txt"
    {
        grep -ohE '\bbench_{1,2}[A-Za-z0-9_]+' "$prefix"/include/harness/*.h
        echo main
        find "$prefix" -name 'libharness-*.a' -exec nm -u {} + 2> /dev/null | awk '{print $NF}'
    } | sort -u > "$allowed"
    # (__odr_asan.NAME: AddressSanitizer's marker beside each global variable, such as the
    # API's bench__spans_on, in a sanitizer build)
    exported="$(nm -g --defined-only "$core_lib" | awk 'NF == 3 && $3 !~ /^__odr_asan\./ {print $3}' |
        sort -u)"
    [[ -n "$exported" ]] || fail "$core_lib defines no global symbol"
    extra_syms="$(comm -23 <(printf '%s\n' "$exported") "$allowed")"
    [[ -z "$extra_syms" ]] ||
        fail "$core_lib exports internals beyond the public API: $(echo "$extra_syms" | head -n 20)"
    # (read into a variable: grep -q would end nm's pipe early, which pipefail reports)
    all_syms="$(nm --defined-only "$core_lib")"
    grep -qE ' t bench__bootstrap$' <<< "$all_syms" ||
        fail "$core_lib lacks a local bench__bootstrap: the check above would prove nothing"
    for want in bench_main bench_fail bench__loop_next bench__register; do
        printf '%s\n' "$exported" | grep -qx "$want" || fail "$core_lib does not export $want"
    done
fi

src="$tmp/src"
mkdir -p "$src"
cat > "$src/a.c" << 'EOF'
/* a.c: first file of an outside benchmark program; no main(). */
#include <harness/bench.h>

BENCH_FN(outside, from_a)
{
    unsigned x = 1;
    BENCH_ITER(b) {
        x = bench_black_box(x * 3u + 1u);
    }
}
EOF
cat > "$src/b.c" << 'EOF'
/* b.c: second file of an outside benchmark program, parameterised, with throughput. */
#include <string.h>
#include <harness/bench.h>

BENCH_FN(outside, from_b, BENCH_PARAMS(16, 256))
{
    char buf[256];
    size_t n = (size_t)bench_param(b);
    bench_set_bytes(b, n);
    BENCH_ITER(b) {
        memset(buf, 1, n);
        bench_clobber();
    }
}
EOF
cat > "$src/own_main.c" << 'EOF'
/* own_main.c: a program's own main() replaces the library's weak one. */
#include <stdio.h>
#include <harness/bench.h>

int main(int argc, char **argv)
{
    fprintf(stderr, "own main ran\n");
    return bench_main(argc, argv);
}
EOF

cat > "$src/under_test.c" << 'EOF'
/* under_test.c: a user's library under test, two small functions. */
int under_test_first(int x);
int under_test_second(int x);
int under_test_first(int x) { return x + 1; }
int under_test_second(int x) { return x * 3; }
EOF
cat > "$src/frames.c" << 'EOF'
/* frames.c: a function that calls another, which keeps a frame pointer only when asked to. */
int frames_callee(int x);
int frames_caller(int x);
int frames_caller(int x) { return frames_callee(x) * 2 + 1; }
EOF
# check_frames OBJECT HOW: frames_caller sets up a frame pointer (at -O2 x86-64 omits it unless
# asked), so perf's frame-pointer walk finds its caller.
check_frames() {
    objdump -d "$1" | grep -q 'mov  *%rsp,%rbp' ||
        fail "$2: $1 keeps no frame pointer (no mov %rsp,%rbp)"
}
# check_aligned OBJECT HOW: the second function of under_test.c starts on a 64-byte boundary (a
# small first function ends far before it: without the flag it would start 16 bytes after).
check_aligned() {
    local addr
    addr="$(nm "$1" | awk '$3 == "under_test_second" {print $1}')"
    [[ -n "$addr" && $((16#$addr % 64)) -eq 0 && $((16#$addr)) -gt 0 ]] ||
        fail "$2: under_test_second starts at 0x${addr:-?}, not on a 64-byte boundary"
}

# (1) pkg-config, exactly as docs tell a user to build.
pcdir="$(dirname "$pc")"
flags="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs harness)" ||
    fail "pkg-config --cflags --libs harness failed"
read -r -a pcflags <<< "$flags"
found=""
for flag in "${pcflags[@]}"; do
    if [[ "$flag" == -I* && -f "${flag#-I}/harness/bench.h" ]]; then
        found="$flag"
    fi
done
[[ -n "$found" ]] || fail "pkg-config --cflags harness names no directory that holds harness/bench.h \
(flags: $flags; $(grep '^prefix=' "$pc")): harness.pc must follow cmake --install --prefix"
"$cc" "${extra[@]}" "$src/a.c" "$src/b.c" "${pcflags[@]}" -o "$tmp/prog_pc" ||
    fail "building with pkg-config flags failed (flags: $flags)"
check_list "$tmp/prog_pc"
check_run "$tmp/prog_pc"
# The placement flags alone for a library under test: no include path, no library.
align="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs harness-align)" ||
    fail "pkg-config --cflags --libs harness-align failed"
[[ "$(xargs <<< "$align")" == "-falign-functions=64" ]] ||
    fail "pkg-config harness-align gives '$align', wanted the placement flag alone"
read -r -a alignflags <<< "$align"
"$cc" -O2 "${alignflags[@]}" -c "$src/under_test.c" -o "$tmp/under_test_pc.o" ||
    fail "building a library with pkg-config harness-align failed"
check_aligned "$tmp/under_test_pc.o" "pkg-config harness-align"
# The frame-pointer flags alone, for whole call stacks in profiles; without them -O2 keeps none.
profile="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs harness-profile)" ||
    fail "pkg-config --cflags --libs harness-profile failed"
[[ "$(xargs <<< "$profile")" == "-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer" ]] ||
    fail "pkg-config harness-profile gives '$profile', wanted the frame-pointer flags alone"
read -r -a profileflags <<< "$profile"
if [[ "$(uname -m)" == x86_64 ]]; then
    "$cc" -O2 -c "$src/frames.c" -o "$tmp/frames_plain.o" || fail "building frames.c failed"
    if objdump -d "$tmp/frames_plain.o" | grep -q 'mov  *%rsp,%rbp'; then
        fail "frames.c keeps a frame pointer at -O2 without the flags: the check proves nothing"
    fi
    "$cc" -O2 "${profileflags[@]}" -c "$src/frames.c" -o "$tmp/frames_pc.o" ||
        fail "building with pkg-config harness-profile failed"
    check_frames "$tmp/frames_pc.o" "pkg-config harness-profile"
fi

# (2) find_package(harness) from a CMake project.
mkdir -p "$tmp/cmake_src"
cat > "$tmp/cmake_src/CMakeLists.txt" << EOF
cmake_minimum_required(VERSION 3.20)
project(outside LANGUAGES C)
find_package(harness REQUIRED)
add_executable(prog_cmake "$src/a.c" "$src/b.c")
target_link_libraries(prog_cmake PRIVATE harness::harness)
add_library(under_test OBJECT "$src/under_test.c")
target_compile_options(under_test PRIVATE -O2)
target_link_libraries(under_test PRIVATE harness::align)
add_library(frames OBJECT "$src/frames.c")
target_compile_options(frames PRIVATE -O2)
target_link_libraries(frames PRIVATE harness::profile)
EOF
build_project cmake "the find_package project"
check_aligned "$(find "$tmp/cmake_build" -name 'under_test.c.o' | head -n 1)" "harness::align"
if [[ "$(uname -m)" == x86_64 ]]; then
    check_frames "$(find "$tmp/cmake_build" -name 'frames.c.o' | head -n 1)" "harness::profile"
fi
check_list "$tmp/cmake_build/prog_cmake"
check_run "$tmp/cmake_build/prog_cmake"

# The revision the program was built from: the CMake package embeds the revision of the project's
# checkout at every build (no reconfigure), with -dirty for changed tracked files; the working
# directory's revision is recorded apart, under its own name. Run from $tmp/other, a checkout of
# another repository, whose revision must not be taken for the program's.
revisions() { # revisions PROG: "BUILT CWD" as --context prints them
    "$1" --context | sed -nE 's/^git +([^ ]+) \(the source.*/\1/p; s/^cwd git +([^ ]+) \(.*/\1/p' |
        tr '\n' ' ' | sed 's/ $//'
}
git_quiet() { git -c user.name=t -c user.email=t@example.invalid "$@" > /dev/null; }
git_quiet -C "$tmp/cmake_src" init
git_quiet -C "$tmp/cmake_src" add -A
git_quiet -C "$tmp/cmake_src" commit -m one
mkdir -p "$tmp/other"
git_quiet -C "$tmp/other" init
git_quiet -C "$tmp/other" commit --allow-empty -m other
other="$(git -C "$tmp/other" rev-parse --short=12 HEAD)"
for step in committed recommitted dirty; do
    case "$step" in
        recommitted)
            echo "notes" > "$tmp/cmake_src/NOTES"
            git_quiet -C "$tmp/cmake_src" add NOTES
            git_quiet -C "$tmp/cmake_src" commit -m two
            ;;
        dirty) echo "more notes" > "$tmp/cmake_src/NOTES" ;;
    esac
    want="$(git -C "$tmp/cmake_src" rev-parse --short=12 HEAD)"
    [[ "$step" == dirty ]] && want+="-dirty"
    cmake --build "$tmp/cmake_build" > "$tmp/cmake-build.log" 2>&1 ||
        fail "rebuilding the find_package project ($step) failed: $(cat "$tmp/cmake-build.log")"
    got="$(cd "$tmp/other" && revisions "$tmp/cmake_build/prog_cmake")"
    [[ "$got" == "$want $other" ]] ||
        fail "$step: --context revisions '$got', wanted '$want $other' (built from, working dir)"
done
(cd "$tmp/other" && "$tmp/cmake_build/prog_cmake" --warm-up-time 0.01 --measurement-time 0.05 \
    --nresamples 100 --exact outside/from_a --output-format json > "$tmp/rev.json") ||
    fail "prog_cmake --output-format json failed"
python3 - "$tmp/rev.json" "$want" "$other" << 'EOF' ||
import json
import sys

ctx = json.load(open(sys.argv[1], encoding="utf-8"))["context"]
assert ctx["git_revision"] == sys.argv[2], ctx["git_revision"]
assert ctx["cwd_git_revision"] == sys.argv[3], ctx["cwd_git_revision"]
assert [b["revision"] for b in ctx["benchmark_builds"]] == [sys.argv[2]], ctx["benchmark_builds"]
EOF
    fail "the results do not record the revisions: $(cat "$tmp/rev.json")"
# BENCH_GIT_REVISION overrides the embedded revision; pkg-config users define it themselves.
got="$(cd "$tmp/other" && BENCH_GIT_REVISION=v1.2 revisions "$tmp/cmake_build/prog_cmake")"
[[ "$got" == "v1.2 $other" ]] || fail "BENCH_GIT_REVISION: --context revisions '$got'"
"$cc" "${extra[@]}" -DBENCH_BUILD_REVISION='"pkg0123"' "$src/a.c" "$src/b.c" "${pcflags[@]}" \
    -o "$tmp/prog_rev" || fail "building with -DBENCH_BUILD_REVISION failed"
got="$(cd "$tmp" && revisions "$tmp/prog_rev")"
[[ "$got" == "pkg0123 none" ]] || fail "-DBENCH_BUILD_REVISION: --context revisions '$got'"
got="$(cd "$tmp" && revisions "$tmp/prog_pc")"
[[ "$got" == "unknown none" ]] || fail "no revision given: --context revisions '$got'"

# (3) the program's own main() wins over the library's weak main().
"$cc" "${extra[@]}" "$src/own_main.c" "$src/a.c" "$src/b.c" "${pcflags[@]}" -o "$tmp/prog_main" ||
    fail "building a program with its own main() failed"
check_list "$tmp/prog_main"
check_run "$tmp/prog_main"
err="$("$tmp/prog_main" --version 2>&1 > /dev/null)" || fail "prog_main --version failed"
[[ "$err" == "own main ran" ]] || fail "the program's own main() did not run (stderr: $err)"
# Its worker processes (started under valgrind by --instructions) go through its own main()
# too, and count exactly.
if command -v valgrind > /dev/null && [[ ${#extra[@]} -eq 0 ]]; then
    out="$("$tmp/prog_main" --instructions --output-format json --exact outside/from_a \
        2> "$tmp/instr.err")" || fail "prog_main --instructions failed: $(cat "$tmp/instr.err")"
    python3 -c '
import json, sys
b = json.loads(sys.stdin.read())["benchmarks"]
assert [x["id"] for x in b] == ["outside/from_a"], b
assert b[0]["status"] == "ok", b[0]
per = b[0]["metrics"]["instructions"]["per_iteration"]["median"]["point"]
assert per > 0 and per == int(per), per
' <<< "$out" || fail "prog_main --instructions counted wrongly: $out"
fi

# (4) registry errors seen from outside: the same file linked twice registers every id twice,
# and a program with no BENCH_FN at all has nothing to run. Both are usage errors (exit 2).
"$cc" "${extra[@]}" "$src/a.c" "$src/a.c" "${pcflags[@]}" -o "$tmp/prog_dup" ||
    fail "building a program with a file linked twice failed"
expect_error "$tmp/prog_dup" "'outside/from_a' is registered twice"
printf '/* none.c: no benchmarks. */\nint harness_outside_none;\n' > "$src/none.c"
"$cc" "${extra[@]}" "$src/none.c" "${pcflags[@]}" -o "$tmp/prog_none" ||
    fail "building a program with no benchmarks failed"
expect_error "$tmp/prog_none" "no benchmarks"

# (5) --alloc-stats with the installed shim (BENCH_ALLOC_SHIM: the prefix is not the configured
# install directory the library would otherwise look in).
out="$(BENCH_ALLOC_SHIM="$shim" "$tmp/prog_pc" --alloc-stats --warm-up-time 0.01 \
    --measurement-time 0.05 --nresamples 100 --color never --exact outside/from_b/16)" ||
    fail "--alloc-stats with the installed shim exited $?"
[[ "$out" == *"allocations:"* ]] || fail "--alloc-stats printed no allocation counts: $out"

# (6) components. The core: no CUDA runtime, no libpfm4, no libstdc++, and small.
cuda_syms() {
    nm "$1" | grep -E ' (cuda[A-Z]|__cuda|__cudart|nvtx)' || true
}
pfm_syms() {
    nm "$1" | grep -E ' pfm_' || true
}
needed() {
    readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}
for prog in "$tmp/prog_pc" "$tmp/cmake_build/prog_cmake"; do
    [[ -z "$(cuda_syms "$prog")" ]] ||
        fail "$prog links the core alone but has CUDA symbols: $(cuda_syms "$prog" | head -n 3)"
    [[ -z "$(pfm_syms "$prog")" ]] ||
        fail "$prog links the core alone but has libpfm4 symbols: $(pfm_syms "$prog" | head -n 3)"
    if needed "$prog" | grep -Eq '^lib(stdc\+\+|pfm|cudart)'; then
        fail "$prog links the core alone but needs: $(needed "$prog" | tr '\n' ' ')"
    fi
    # Code placement: each benchmark's function starts on a 64-byte boundary, the flag that
    # harness.pc and harnessConfig.cmake give the programs that link the harness.
    fns=0
    while read -r addr _ name; do
        fns=$((fns + 1))
        (((16#$addr) % 64 == 0)) || fail "$prog: $name at 0x$addr is not 64-byte aligned"
    done < <(nm "$prog" | grep -E ' [tT] bench__fn_')
    [[ "$fns" -gt 0 ]] || fail "$prog: no benchmark function (bench__fn_*) in its symbols"
    version="$("$prog" --version)" || fail "$prog --version exited $?"
    [[ "$version" != *"perf_event counters: libpfm4"* && "$version" != *"CUDA events: CUDA"* ]] ||
        fail "$prog links the core alone but says it has a component: $version"
done
# (480 KiB until the run history gained its PostgreSQL store, the shared readers and the copy,
# about 50 KiB of the core, 2026-11-28: the program measured 516 KiB. 560 KiB until --trace
# gained its recorder, the spans and the Perfetto encoder, about 23 KB: a plain program of one
# benchmark measured 560,592 bytes before them and 583,400 with them, 2026-11-28. 600 KiB until
# the code identity (the disassembly reader), the PostgreSQL store's program copies, the bencher
# Metric Format, the progress line and the clear-verdict rule, about 37 KB: 620,352 bytes with
# them, 2026-11-28.)
if [[ ${#extra[@]} -eq 0 ]]; then
    bytes="$(stat -c %s "$tmp/prog_pc")"
    [[ "$bytes" -lt 655360 ]] ||
        fail "a plain program built with pkg-config harness is $bytes bytes, not under 640 KiB"
fi

# check_pc_component NAME WANT: a program built with pkg-config harness-NAME has the component
# although nothing in it refers to the component (the anchor), and --version says WANT.
check_pc_component() {
    local name="$1" want="$2" flags version
    local -a cflags
    flags="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs "harness-$name")" ||
        fail "pkg-config --cflags --libs harness-$name failed"
    read -r -a cflags <<< "$flags"
    "$cc" "${extra[@]}" "$src/a.c" "$src/b.c" "${cflags[@]}" -o "$tmp/prog_$name" ||
        fail "building with pkg-config harness-$name failed (flags: $flags)"
    check_list "$tmp/prog_$name"
    version="$("$tmp/prog_$name" --version)" || fail "prog_$name --version exited $?"
    [[ "$version" == *"$want"* ]] ||
        fail "linked with harness-$name, --version does not say '$want': $version"
}
components=()
if [[ -f "$pcdir/harness-counters.pc" ]]; then
    components+=(counters)
    check_pc_component counters "perf_event counters: libpfm4"
    # (a shared component holds them itself: the program then needs it)
    [[ -n "$(pfm_syms "$tmp/prog_counters")" ||
        "$(needed "$tmp/prog_counters")" == *libharness-counters.so* ]] ||
        fail "prog_counters has no libpfm4 symbols"
fi
if [[ -f "$pcdir/harness-cuda.pc" ]]; then
    components+=(cuda)
    check_pc_component cuda "CUDA events: CUDA "
    [[ -n "$(cuda_syms "$tmp/prog_cuda")" ||
        "$(needed "$tmp/prog_cuda")" == *libharness-cuda.so* ]] ||
        fail "prog_cuda has no CUDA runtime symbols"
    check_run "$tmp/prog_cuda"
fi

# The same through find_package(harness COMPONENTS ...), each installed component a target.
if [[ ${#components[@]} -gt 0 ]]; then
    mkdir -p "$tmp/cmake_comp_src"
    cat > "$tmp/cmake_comp_src/CMakeLists.txt" << EOF
cmake_minimum_required(VERSION 3.20)
project(outside LANGUAGES C)
find_package(harness REQUIRED COMPONENTS ${components[*]})
add_executable(prog_comp "$src/a.c" "$src/b.c")
foreach(c ${components[*]})
    if(NOT harness_\${c}_FOUND)
        message(FATAL_ERROR "harness_\${c}_FOUND is not set")
    endif()
    target_link_libraries(prog_comp PRIVATE harness::\${c})
endforeach()
EOF
    build_project cmake_comp "the COMPONENTS project"
    check_list "$tmp/cmake_comp_build/prog_comp"
    version="$("$tmp/cmake_comp_build/prog_comp" --version)" || fail "prog_comp --version failed"
    for c in "${components[@]}"; do
        want="perf_event counters: libpfm4"
        [[ "$c" == cuda ]] && want="CUDA events: CUDA "
        [[ "$version" == *"$want"* ]] ||
            fail "find_package COMPONENTS $c: --version does not say '$want': $version"
    done
fi

# A component this installation lacks, or no component at all: find_package fails, naming it.
bad=(no_such_part)
[[ -f "$pcdir/harness-cuda.pc" ]] || bad+=(cuda)
mkdir -p "$tmp/cmake_bad_src"
for want in "${bad[@]}"; do
    printf '%s\n' "cmake_minimum_required(VERSION 3.20)" "project(outside LANGUAGES C)" \
        "find_package(harness REQUIRED COMPONENTS $want)" > "$tmp/cmake_bad_src/CMakeLists.txt"
    if cmake -S "$tmp/cmake_bad_src" -B "$tmp/cmake_bad_build_$want" \
        -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/cmake_bad.log" 2>&1; then
        fail "find_package(harness REQUIRED COMPONENTS $want) succeeded"
    fi
    grep -q "harness: required component '$want'" "$tmp/cmake_bad.log" ||
        fail "find_package(harness REQUIRED COMPONENTS $want) failed without naming it: \
$(cat "$tmp/cmake_bad.log")"
done

# (7) the build of the benchmarks' own file: one compiled with -O0 is recorded so in the JSON and
# warned about (stderr, context.warnings, Markdown); the same file with -O2 is not.
cat > "$src/opt.c" << 'EOF'
/* opt.c: one benchmark, built at -O0 and at -O2. */
#include <harness/bench.h>

BENCH_FN(outside, opt)
{
    unsigned x = 1;
    BENCH_ITER(b) {
        x = bench_black_box(x + 1u);
    }
}
EOF
run_opt() {
    "$1" --warm-up-time 0.01 --measurement-time 0.05 --nresamples 100 --output-format "$2" \
        --exact outside/opt
}
for level in -O0 -O2; do
    prog="$tmp/prog$level"
    "$cc" "${extra[@]}" "$level" "$src/opt.c" "${pcflags[@]}" -o "$prog" ||
        fail "building opt.c with $level failed"
    run_opt "$prog" json > "$tmp/opt.json" 2> "$tmp/opt.err" ||
        fail "$prog exited $?: $(cat "$tmp/opt.err")"
    python3 - "$tmp/opt.json" "$level" "$src/opt.c" "${extra[*]}" << 'EOF' ||
import json
import sys

path, level, file, extra = sys.argv[1:]
ctx = json.load(open(path, encoding="utf-8"))["context"]
builds = ctx["benchmark_builds"]
assert len(builds) == 1, builds
b = builds[0]
assert b["file"] == file, b
assert b["benchmarks"] == ["outside/opt"], b
assert b["compiler"].startswith(("gcc ", "clang ")), b
assert b["optimize"] is (level != "-O0"), b
assert b["no_inline"] is (level == "-O0"), b
assert b["optimize_size"] is False and b["ndebug"] is False, b
assert ("address" in b["sanitizers"]) is ("-fsanitize=address" in extra), b
warned = [w for w in ctx["warnings"] if w.startswith("benchmarks in ")]
assert len(warned) == (1 if level == "-O0" else 0), ctx["warnings"]
EOF
        fail "$level: context.benchmark_builds or context.warnings is wrong: $(cat "$tmp/opt.json")"
    want="prog$level: warning: benchmarks in $src/opt.c were compiled without optimisation (-O0): \
timings do not represent an optimised build; fix: compile with -O2"
    count="$(grep -cFx -- "$want" "$tmp/opt.err" || true)"
    if [[ "$level" == -O0 ]]; then
        [[ "$count" -eq 1 ]] || fail "-O0: wanted the warning once on stderr, got: $(cat "$tmp/opt.err")"
        md="$(run_opt "$prog" markdown 2> /dev/null)" || fail "$prog --output-format markdown failed"
        [[ "$md" == *"> **Warning:** benchmarks in "*"without optimisation (-O0)"* ]] ||
            fail "-O0: the Markdown report does not warn: $md"
    else
        [[ "$(grep -c "^prog$level: warning: benchmarks in " "$tmp/opt.err" || true)" -eq 0 ]] ||
            fail "-O2: warned about optimisation: $(cat "$tmp/opt.err")"
    fi
done

# (8) the program's own build, as its executable records it, apart from the library's: opt.c at
# -O2 with -g says -O2 (the library was built with other flags), without -g it says unknown.
"$cc" "${extra[@]}" -O2 -g "$src/opt.c" "${pcflags[@]}" -o "$tmp/prog-O2g" ||
    fail "building opt.c with -O2 -g failed"
for prog in "$tmp/prog-O2g" "$tmp/prog-O2"; do
    run_opt "$prog" json > "$tmp/opt.json" 2> "$tmp/opt.err" ||
        fail "$prog exited $?: $(cat "$tmp/opt.err")"
    "$prog" --context > "$tmp/opt.ctx" || fail "$prog --context exited $?"
    python3 - "$tmp/opt.json" "$tmp/opt.ctx" "$prog" << 'EOF' ||
import json
import sys

path, ctx_path, prog = sys.argv[1:]
ctx = json.load(open(path, encoding="utf-8"))["context"]
text = open(ctx_path, encoding="utf-8").read()
pb = ctx["program_build"]
lines = {line[:13].strip(): line[13:] for line in text.splitlines()}
library = lines["library"]
assert ctx["compiler_flags"] in library and ctx["build_type"] in library, (library, ctx)
if prog.endswith("-O2g"):
    assert pb["source"] == "debug info", pb
    assert pb["compiler"].startswith(("GNU C", "clang")), pb
    words = pb["flags"].split()
    assert "-O2" in words and "-g" in words, pb
    assert not [w for w in words if w.startswith("-O") and w != "-O2"], pb
    assert lines["flags"].startswith(pb["flags"] + " (the program's, from its debug info)"), text
else:
    assert pb == {"compiler": None, "flags": None, "source": "none"}, pb
    assert lines["flags"].startswith("unknown (the program records none"), text
EOF
        fail "$prog: context.program_build or --context is wrong: $(cat "$tmp/opt.ctx")"
done

echo "test_install: ok (prefix layout, pkg-config, find_package, own main, registry errors, \
--alloc-stats, components: ${components[*]:-none}, -O0 recorded and warned, program flags)"

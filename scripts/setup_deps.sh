#!/usr/bin/env bash
# Makes sure the Debian packages the build needs are installed, so `make`, `make bench` and
# `make test` work as the first command on a fresh Debian machine.
#
# Usage: scripts/setup_deps.sh [build|test]   (default: build; test adds what the tests use)
# As root, missing packages are installed with apt-get; otherwise the exact command to run is
# printed and the script fails. On a system without dpkg it only checks for the commands.
set -euo pipefail

what="${1:-build}"
# help2man: the man page bench(1), made from --help at build time. libsqlite3-dev: the run
# history (--history); like libpfm4 and libcpuid it is optional, and the build goes on without it.
build_pkgs=(cmake make gcc pkg-config libcjson-dev libcpuid-dev libpfm4-dev libsqlite3-dev help2man)
# man-db: e2e/installed_tools reads the installed man page with man.
# libjemalloc2: the --alloc-stats tests under a preloaded jemalloc; clang and its runtime
# libraries: the baseline loader's libFuzzer target (tests/fuzz). libpq-dev: the run history in
# PostgreSQL (optional for the build, like libsqlite3-dev; `make bench` needs none of it), and
# postgresql: the private server the history tests start (initdb, pg_ctl, psql).
# protobuf-compiler: e2e/trace decodes a --trace FILE.pftrace with protoc. npm (unless a Node.js
# install already brings it): e2e/trace opens a --trace file in speedscope, installed from npm.
test_pkgs=(libcmocka-dev python3 python3-jsonschema chromium valgrind libjemalloc2 clang
    libclang-rt-dev man-db libpq-dev postgresql protobuf-compiler)

# speedscope, the profile viewer e2e/trace opens a trace in, at the version and hashes its
# package-lock.json pins, into tests/e2e/speedscope/node_modules (git ignores it); again only
# when the installed version is not the pinned one. --ignore-scripts: only its files are used.
# Without the npm registry (offline) it warns and goes on: that one test then skips, saying so
# (CI checks that it was installed).
speedscope_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/e2e/speedscope"
install_speedscope() {
    [[ "$what" == test ]] || return 0
    local want have
    want="$(sed -n 's/^ *"speedscope": "\(.*\)"$/\1/p' "$speedscope_dir/package.json")"
    have="$(sed -n 's/^ *"version": "\(.*\)",$/\1/p' \
        "$speedscope_dir/node_modules/speedscope/package.json" 2>/dev/null | head -n 1 || true)"
    [[ -n "$want" && "$have" == "$want" ]] && return 0
    echo "setup_deps.sh: installing speedscope $want from npm into $speedscope_dir" >&2
    if ! npm ci --prefix "$speedscope_dir" --ignore-scripts --no-audit --no-fund \
        --loglevel=error >/dev/null; then
        echo "setup_deps.sh: warning: speedscope could not be installed from npm (above);" \
            "e2e/trace's speedscope check will skip" >&2
    fi
}

case "$what" in
    build) pkgs=("${build_pkgs[@]}") ;;
    test) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
    *)
        echo "setup_deps.sh: unknown set '$what' (expected build or test)" >&2
        exit 2
        ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
    for cmd in cmake make cc pkg-config; do
        if ! command -v "$cmd" >/dev/null 2>&1; then
            echo "setup_deps.sh: '$cmd' not found; install it and cJSON, cmocka with your package manager" >&2
            exit 2
        fi
    done
    if command -v npm >/dev/null 2>&1; then
        install_speedscope
    fi
    exit 0
fi

missing=()
if [[ "$what" == test ]] && ! command -v npm >/dev/null 2>&1; then
    pkgs+=(npm)
fi
for p in "${pkgs[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
    if [[ "$status" != "install ok installed" ]]; then
        missing+=("$p")
    fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
    install_speedscope
    exit 0
fi

if [[ "$(id -u)" -eq 0 ]]; then
    echo "setup_deps.sh: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -qq "${missing[@]}" >/dev/null; then
        apt-get update -qq
        apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    install_speedscope
else
    echo "setup_deps.sh: missing packages: ${missing[*]}" >&2
    echo "install them with: sudo apt-get install -y ${missing[*]}" >&2
    exit 2
fi

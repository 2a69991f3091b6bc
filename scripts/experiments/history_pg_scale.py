#!/usr/bin/env python3
"""Measures the run history in PostgreSQL: the time to write one run, the size of many runs, and
the time --history-show takes to read one long series.

A private PostgreSQL server is started for it (tests/e2e/e2e_helpers.py's PostgresServer:
Debian's PostgreSQL 15 in a temporary folder, a Unix socket, every statement logged with its
time), and stopped at the end.

1. Write: PROGRAM's whole suite is run TRIES times with tiny times in --processes 10 and
   --history URL; the time of each run's transaction is read from the server's log (from the
   end of its BEGIN to the end of its COMMIT: every statement and the round trips between them,
   not the measurement), and the median printed.
2. Size: the rows of one real run are copied, with the benchmark ids renamed and the medians
   jittered, into RUNS runs of BENCHMARKS benchmarks (10 per-process medians each, as the runs
   above record); the size is that of the three tables with their indexes and TOAST, after
   VACUUM.
3. Read: the same for SERIES runs; then `PROGRAM --history-show URL --exact ID` is timed TRIES
   times and the median printed.

Usage: scripts/experiments/history_pg_scale.py PROGRAM [--runs 1000] [--benchmarks 30] [--series 10000]
                                   [--tries 5]
Exit: 0, or 2 when PROGRAM cannot record a run or the server cannot start.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                "e2e"))
import e2e_helpers  # noqa: E402  pylint: disable=wrong-import-position

S = "bench_history."
TINY = ["--warm-up-time", "0.001", "--measurement-time", "0.001", "--processes", "10",
        "--nresamples", "10", "--no-last", "--output-format", "csv"]


def log_times(text):
    """(BEGIN end, COMMIT end) in seconds of the one transaction of a run in a log segment."""
    ends = {}
    for line in text.splitlines():
        m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) \S+ .*statement: (BEGIN|COMMIT)$",
                     line)
        if m:
            ends[m.group(2)] = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
    return ends.get("BEGIN"), ends.get("COMMIT")


def write_times(program, srv, tries):
    times = []
    url = srv.url()
    first = subprocess.run([program, *TINY, "--history", url, "--history-programs", "0"],
                           capture_output=True, text=True, check=False)
    if first.returncode not in (0, 3):
        print(f"history_pg_scale.py: {program} recorded no run: {first.stderr}", file=sys.stderr)
        sys.exit(2)
    n = srv.psql(f"SELECT count(*) FROM {S}results")[0][0]
    for _ in range(tries):
        offset = os.path.getsize(srv.log)
        subprocess.run([program, *TINY, "--history", url, "--history-programs", "0"],
                       capture_output=True, text=True, check=False)
        with open(srv.log, encoding="utf-8", errors="replace") as f:
            f.seek(offset)
            begin, commit = log_times(f.read())
        if begin and commit:
            times.append(commit - begin)
    return int(n), times


def grow(srv, runs, benchmarks):
    """The first run's rows copied into `runs` runs of `benchmarks` benchmarks."""
    cols = [r[0] for r in srv.psql("SELECT column_name FROM information_schema.columns WHERE "
                                   "table_schema = 'bench_history' AND table_name = 'runs' "
                                   "AND column_name NOT IN ('id', 'uuid') ORDER BY "
                                   "ordinal_position")]
    c = ", ".join(cols)
    srv.psql(f"""
        CREATE TEMP TABLE r0 AS SELECT * FROM {S}runs WHERE id = (SELECT min(id) FROM {S}runs);
        CREATE TEMP TABLE x0 AS SELECT * FROM {S}results WHERE run_id = (SELECT id FROM r0)
            AND status = 'ok' AND median_ns > 0 LIMIT 1;
        TRUNCATE {S}results, {S}runs;
        INSERT INTO {S}runs (id, uuid, {c}) SELECT g, gen_random_uuid(), {c}
            FROM generate_series(1, {runs}) g, r0;
        SELECT setval('{S}runs_id_seq', {runs});
        CREATE TEMP TABLE j AS SELECT g AS run_id, b, 1 + 0.0346 * (random() - 0.5) AS s
            FROM generate_series(1, {runs}) g, generate_series(0, {benchmarks - 1}) b;
        INSERT INTO {S}results SELECT j.run_id, 'scale/b' || lpad(j.b::text, 2, '0'), x.status,
            x.median_ns * j.s, x.lower_ns * j.s, x.upper_ns * j.s, x.samples, x.processes,
            x.process_cv, x.verdict, x.ratio, x.ratio_lower, x.ratio_upper,
            (SELECT array_agg(m * j.s ORDER BY i) FROM unnest(x.process_medians_ns)
             WITH ORDINALITY AS u(m, i)) FROM j, x0 x;
        """)
    srv.psql(f"VACUUM ANALYZE {S}runs, {S}results")
    size = int(srv.psql(
        "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON "
        "n.oid = c.relnamespace WHERE n.nspname = 'bench_history' AND c.relkind = 'r'")[0][0])
    procs = int(srv.psql(f"SELECT coalesce(cardinality(process_medians_ns), 0) FROM {S}results "
                         "WHERE run_id = 1 AND benchmark = 'scale/b00'")[0][0])
    return size, procs


def main():
    ap = argparse.ArgumentParser(description="Write time, size and read time of a PostgreSQL "
                                             "run history.")
    ap.add_argument("program")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--benchmarks", type=int, default=30)
    ap.add_argument("--series", type=int, default=10000)
    ap.add_argument("--tries", type=int, default=5)
    a = ap.parse_args()
    why = e2e_helpers.postgres_missing()
    if why:
        print(f"history_pg_scale.py: {why}", file=sys.stderr)
        return 2
    srv = e2e_helpers.PostgresServer()
    try:
        srv.start("-c log_min_duration_statement=0", "-c log_line_prefix='%m %p '")
        n, times = write_times(a.program, srv, a.tries)
        print(f"write: one run of {n} benchmarks (10 processes each): transaction median "
              f"{1000 * statistics.median(times):.1f} ms over {len(times)} runs "
              f"(min {1000 * min(times):.1f}, max {1000 * max(times):.1f})")
        srv.stop()
        srv.start()  # without the statement log for the rest
        size, procs = grow(srv, a.runs, a.benchmarks)
        print(f"size: {a.runs} runs x {a.benchmarks} benchmarks ({procs} per-process medians "
              f"each): {size / 1e6:.1f} MB, {size / a.runs / a.benchmarks:.0f} bytes per "
              "benchmark run")
        big, _ = grow(srv, a.series, a.benchmarks)
        one = f"scale/b{a.benchmarks // 2:02d}"
        reads = []
        for _ in range(a.tries):
            t0 = time.perf_counter()
            r = subprocess.run([a.program, "--history-show", srv.url(), "--exact", one],
                               capture_output=True, text=True, check=False)
            reads.append(time.perf_counter() - t0)
            if r.returncode != 0 or f"{one}: {a.series} runs" not in r.stdout:
                print(f"history_pg_scale.py: --history-show failed: {r.stderr}",
                      file=sys.stderr)
                return 2
        print(f"read: --history-show of one series of {a.series} runs (among {a.benchmarks} "
              f"benchmarks, {big / 1e6:.0f} MB): median {statistics.median(reads):.2f} s over "
              f"{a.tries} tries (min {min(reads):.2f}, max {max(reads):.2f})")
    finally:
        srv.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())

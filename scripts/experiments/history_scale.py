#!/usr/bin/env python3
"""Measures how the run history scales: the size of a history of many runs, and the time
--history-show takes to read and analyse one long series.

A real run of PROGRAM is recorded into a new history first (so every row has the shape the
program writes), then its rows are copied, with the benchmark ids renamed and the medians
jittered, into two histories: RUNS runs of BENCHMARKS benchmarks (the size), and SERIES runs of
BENCHMARKS benchmarks (the read time of one series among them). The copies go through Python's
sqlite3 into the program's own tables, read from the recorded file: only the run and benchmark
columns are rewritten, the others are copied as they are.
Then `PROGRAM --history-show FILE --exact ID` is timed TRIES times on the long history, and the
median is printed with the sizes.

Usage: scripts/experiments/history_scale.py PROGRAM [--runs 1000] [--benchmarks 30]
                                            [--series 10000] [--tries 5] [--dir DIR]
Exit: 0, or 2 when PROGRAM cannot record a run.
"""
import argparse
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time


def record_template(program, path):
    """One real run of one benchmark of PROGRAM (the first that runs ok) into a new history."""
    ids = subprocess.run([program, "--list"], capture_output=True, text=True, check=True)
    env = dict(os.environ, BENCH_HISTORY="")
    for bid in ids.stdout.split():
        for f in (path, path + "-wal", path + "-shm"):
            if os.path.exists(f):
                os.remove(f)
        r = subprocess.run([program, "--exact", bid, "--warm-up-time", "0.01",
                            "--measurement-time", "0.05", "--history", path,
                            "--history-programs", "0", "--output-format", "csv"],
                           capture_output=True, text=True, env=env)
        if r.returncode == 0:
            with sqlite3.connect(path) as db:
                if db.execute("SELECT count(*) FROM results WHERE status = 'ok' AND"
                              " median_ns > 0").fetchone()[0] == 1:
                    return bid
    print(f"history_scale.py: {program} recorded no benchmark that ran ok", file=sys.stderr)
    sys.exit(2)


def grow(template, path, runs, benchmarks, seed):
    """A copy of the template history with `runs` runs of `benchmarks` benchmarks."""
    shutil.copyfile(template, path)
    rng = random.Random(seed)
    db = sqlite3.connect(path)
    run_cols = [c[1] for c in db.execute("PRAGMA table_info(runs)")]
    res_cols = [c[1] for c in db.execute("PRAGMA table_info(results)")]
    pm_cols = [c[1] for c in db.execute("PRAGMA table_info(process_medians)")]
    run0 = db.execute("SELECT * FROM runs").fetchone()
    res0 = db.execute("SELECT * FROM results").fetchone()
    pms0 = db.execute("SELECT * FROM process_medians").fetchall()
    db.execute("DELETE FROM process_medians")
    db.execute("DELETE FROM results")
    db.execute("DELETE FROM runs")
    rid, rbench, rmed = run_cols.index("id"), res_cols.index("benchmark"), \
        res_cols.index("median_ns")
    prun, pbench, pmed = pm_cols.index("run_id"), pm_cols.index("benchmark"), \
        pm_cols.index("median_ns")
    rrun = res_cols.index("run_id")
    for r in range(1, runs + 1):
        row = list(run0)
        row[rid] = r
        db.execute(f"INSERT INTO runs VALUES ({','.join('?' * len(row))})", row)
        for b in range(benchmarks):
            scale = 1 + 0.01 * rng.gauss(0, 1)
            row = list(res0)
            row[rrun], row[rbench] = r, f"scale/b{b:02d}"
            row[rmed] = res0[rmed] * scale
            db.execute(f"INSERT INTO results VALUES ({','.join('?' * len(row))})", row)
            for pm in pms0:
                row = list(pm)
                row[prun], row[pbench] = r, f"scale/b{b:02d}"
                row[pmed] = pm[pmed] * scale
                db.execute(f"INSERT INTO process_medians VALUES ({','.join('?' * len(row))})",
                           row)
    db.commit()
    processes = len(pms0)
    db.close()
    return processes


def main():
    ap = argparse.ArgumentParser(description="Size and read time of large run histories.")
    ap.add_argument("program")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--benchmarks", type=int, default=30)
    ap.add_argument("--series", type=int, default=10000)
    ap.add_argument("--tries", type=int, default=5)
    ap.add_argument("--dir")
    a = ap.parse_args()
    tmp = a.dir or tempfile.mkdtemp(prefix="history-scale-")
    os.makedirs(tmp, exist_ok=True)
    try:
        template = os.path.join(tmp, "template.db")
        bid = record_template(a.program, template)
        print(f"template: one run of {bid}")
        size_db = os.path.join(tmp, "size.db")
        procs = grow(template, size_db, a.runs, a.benchmarks, 1)
        size = os.path.getsize(size_db)
        print(f"{a.runs} runs x {a.benchmarks} benchmarks ({procs} per-process medians each): "
              f"{size / 1e6:.1f} MB, {size / a.runs / a.benchmarks:.0f} bytes per benchmark run")
        long_db = os.path.join(tmp, "long.db")
        grow(template, long_db, a.series, a.benchmarks, 2)
        times = []
        one = f"scale/b{a.benchmarks // 2:02d}"  # a series in the middle of the file
        for _ in range(a.tries):
            t0 = time.perf_counter()
            r = subprocess.run([a.program, "--history-show", long_db, "--exact", one],
                               capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            if r.returncode != 0 or f"{one}: {a.series} runs" not in r.stdout:
                print(f"history_scale.py: --history-show failed: {r.stderr}", file=sys.stderr)
                return 2
        print(f"--history-show of one series of {a.series} runs (among {a.benchmarks} "
              f"benchmarks, {os.path.getsize(long_db) / 1e6:.0f} MB): median "
              f"{statistics.median(times):.2f} s over {a.tries} tries "
              f"(min {min(times):.2f}, max {max(times):.2f})")
    finally:
        if not a.dir:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Regenerates reports/profiling_results.md (and the HTML report in reports/html/) from scratch
on this machine: it runs the reference suite, the profilers and the variance check, and writes
only numbers it measured in this run. `make report` runs it; docs/profiling.md explains the
report and the rules for optimisation candidates. Standard library only.

Usage: scripts/make_report.py [--quick] [--baseline NAME] [--variance-runs N] [--out FILE]
                              [--html-dir DIR] [--work DIR]
Environment (the flags win): REPORT_QUICK=1 (--quick), REPORT_BASELINE=NAME (--baseline),
REPORT_VARIANCE_RUNS=N (--variance-runs), REPORT_MEMORY=0|1 (heap profile and leak check; default
on, off with --quick), REPORT_PROFILE=0 (skip the CPU profile), REPORT_PERF_EVENTS=LIST (for the
counters run; default "ipc,sw"), BENCH_PROGRAM (the suite program ./bench runs), WL_PROFILE_PROGRAM
(the profiling workload's program; default: workloads/wl_profile of BENCH_PROGRAM's build, else
build/workloads/wl_profile).

Steps: (1) the suite with default settings (--quick: a few fast benchmarks, --quick), compared
with baseline NAME when given (--baseline NAME); (2) a --quick counters run with
--alloc-stats and --perf-events when the program has them (kept apart so counting cannot disturb
the timings of step 1); (3) scripts/profile_hotspots.sh on the profiling workload; (4)
scripts/profile_memory.sh; (5) scripts/variance_check.sh -n N (default 10; 3 with --quick);
(6) scripts/tools/bench_report.py; (7) the Markdown report. Beside step 3, one pass of the
profiling workload with `wl_profile --trace`: its phases as a timeline (tmp/workload_trace.json)
and a table. Intermediate files go to tmp/report/.
Exit: 0 written; 2 usage error, or the suite run itself failed (one line says why). A profiler
that cannot run here (no perf, no valgrind) is reported as unavailable in the report, not fatal.
"""
import argparse
import datetime
import json
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The report page's own wording of the context, shared so the two reports agree (the installed
# tool bench-report, scripts/tools/).
sys.path.insert(0, os.path.join(ROOT, "scripts", "tools"))
from bench_report import caches_text  # pylint: disable=wrong-import-position
sys.path.pop(0)

# ---- the rules for optimisation candidates (docs/profiling.md) ----
BANDWIDTH_TARGET = 0.70     # a streaming kernel should reach this fraction of the read probe
PHASE_SHARE = 20.0          # % of the workload's samples that makes a phase a candidate
HOT_FUNCTION = 10.0         # % self samples that makes a function a candidate
CV_LIMIT = 5.0              # % run-to-run CV above which a benchmark is too noisy to gate on
CI_LIMIT = 5.0              # % CI half-width of the median above which an estimate is imprecise
R2_LIMIT = 0.95             # R² of the slope below which the samples do not fit a line

QUICK_FILTER = ("^(harness/(clock_monotonic|memset/4096|known_cost_chain_1000)|"
                "scaling/(similarity|read_probe)/1000|scaling/similarity/10000|"
                "scaling/similarity_batch/(1|64)|"
                "scaling/compute_probe|workload/(decay_10k_memories|"
                "spreading_activation_1000|vector_similarity_1000))$")
SIZES = (1000, 10000, 100000)
DIM = 768                   # the suite's embedding dimension (benches/suite_data.h)
BATCH_N = 10000             # candidates of scaling/similarity_batch/Q (benches/graph_suite.c)
PROFILE_BATCH = 64          # queries per call in the profiling workload (wl_profile_params_default)

# What bounds each phase of the profiling workload where the suite has no probe for it
# (docs/workloads.md, "What bounds them").
PHASE_BOUNDS = {
    "graph build": "page faults and random generation; no probe in the suite",
    "activation": "latency of scattered updates; no probe in the suite",
    "decay": "the floating-point divider; no probe in the suite",
}


class Fail(Exception):
    pass


def log(msg):
    print(f"make_report.py: {msg}", file=sys.stderr, flush=True)


def run(cmd, env=None, out=None, timeout=3600):
    """Runs cmd in the repository root; stdout to `out` (a path) or captured. Returns
    (returncode, stdout, stderr, seconds)."""
    t0 = time.monotonic()
    e = dict(os.environ)
    e.update(env or {})
    try:
        if out:
            with open(out, "w", encoding="utf-8") as f:
                p = subprocess.run(cmd, cwd=ROOT, env=e, stdout=f, stderr=subprocess.PIPE,
                                   text=True, timeout=timeout)
            so = ""
        else:
            p = subprocess.run(cmd, cwd=ROOT, env=e, capture_output=True, text=True,
                               timeout=timeout)
            so = p.stdout
    except FileNotFoundError as ex:
        return 127, "", f"{cmd[0]}: {ex.strerror}", time.monotonic() - t0
    except subprocess.TimeoutExpired:
        return 124, "", f"{cmd[0]}: timed out after {timeout} s", time.monotonic() - t0
    return p.returncode, so, p.stderr, time.monotonic() - t0


def shown(cmd):
    """A command line as a user would type it (shell-quoted)."""
    return " ".join(shlex.quote(c) for c in cmd)


def first_error(stderr):
    lines = [ln for ln in stderr.splitlines() if ln.strip() and "warning:" not in ln]
    return lines[-1] if lines else "no message"


# ---- formatting ----


def fmt_time(ns):
    if ns is None or not isinstance(ns, (int, float)) or not math.isfinite(ns):
        return "n/a"
    if ns == 0:
        return "0 ns"
    for div, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")):
        if abs(ns) >= div:
            return f"{ns / div:.4g} {unit}"
    return f"{ns * 1e3:.4g} ps"


def fmt_rate(per_s, unit):
    if per_s is None or not math.isfinite(per_s):
        return "n/a"
    for div, p in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if per_s >= div:
            return f"{per_s / div:.4g} {p}{unit}/s"
    return f"{per_s:.4g} {unit}/s"


def code(s):
    return "`" + str(s).replace("`", "'") + "`"


def cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def table(head, rows, align=None):
    align = align or ["---"] * len(head)
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def pct(x, digits=1):
    return "n/a" if x is None else f"{x:.{digits}f}%"


# ---- reading results ----


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def ok_map(results):
    return {b["id"]: b for b in results.get("benchmarks", []) if b.get("status") == "ok"}


def med(b):
    return b["estimates"]["median"]


def rate_bounds(b, key):
    """(point, low, high) per second of throughput amount `key`, from the median's interval."""
    amount = (b.get("throughput") or {}).get(key)
    m = med(b)
    if not amount or not m["point"]:
        return None
    lo = amount * 1e9 / m["upper"] if m["upper"] > 0 else float("nan")
    hi = amount * 1e9 / m["lower"] if m["lower"] > 0 else float("inf")
    return amount * 1e9 / m["point"], lo, hi


def bandwidth_fractions(oks):
    """Per size where both exist: similarity and read-probe bandwidth and their ratio."""
    rows = []
    for n in SIZES:
        s, p = oks.get(f"scaling/similarity/{n}"), oks.get(f"scaling/read_probe/{n}")
        if not s or not p:
            continue
        sb, pb = rate_bounds(s, "bytes_per_iteration"), rate_bounds(p, "bytes_per_iteration")
        if not sb or not pb:
            continue
        # Same bytes on both sides: the fraction is probe time / similarity time. Its range pairs
        # the ends of the two intervals (conservative: both at their worst, both at their best).
        f = med(p)["point"] / med(s)["point"]
        f_lo = med(p)["lower"] / med(s)["upper"]
        f_hi = med(p)["upper"] / med(s)["lower"] if med(s)["lower"] > 0 else float("inf")
        rows.append({"n": n, "mb": s["throughput"]["bytes_per_iteration"] / 1e6, "sim": sb,
                     "probe": pb, "fraction": f, "lo": f_lo, "hi": f_hi})
    return rows


def compute_fractions(oks):
    """Per scaling/similarity_batch/Q: its flop rate (2·D flops per candidate scored), the
    compute probe's, their ratio with the range from both intervals, and the per-query speed-up
    over scaling/similarity/BATCH_N (the single-query scan of the same candidates) when present."""
    probe = oks.get("scaling/compute_probe")
    pr = rate_bounds(probe, "elements_per_iteration") if probe else None
    single = oks.get(f"scaling/similarity/{BATCH_N}")
    rows = []
    for bid in sorted((i for i in oks if i.startswith("scaling/similarity_batch/")),
                      key=lambda i: int(i.rsplit("/", 1)[1])):
        b = oks[bid]
        q = int(bid.rsplit("/", 1)[1])
        er = rate_bounds(b, "elements_per_iteration")
        if not er or not pr:
            continue
        flops = tuple(2 * DIM * x for x in er)
        row = {"q": q, "id": bid, "flops": flops, "probe": pr,
               "fraction": flops[0] / pr[0], "lo": flops[1] / pr[2], "hi": flops[2] / pr[1],
               "per_query_ns": med(b)["point"] / q}
        if single and med(b)["point"] > 0:
            # The single query's time over the batch's time per query; range from both ends.
            row["speedup"] = med(single)["point"] * q / med(b)["point"]
            row["speedup_lo"] = med(single)["lower"] * q / med(b)["upper"]
            row["speedup_hi"] = med(single)["upper"] * q / med(b)["lower"]
            row["single_ns"] = med(single)["point"]
        rows.append(row)
    return rows


def variance(files):
    """Per benchmark: runs, median of medians, CV and CV without the machine factor (the same
    computation as scripts/variance_check.sh)."""
    runs = [load_json(p) for p in files]
    meds = [{b["id"]: b["estimates"]["median"]["point"] for b in r["benchmarks"]
             if b.get("status") == "ok" and b["estimates"]["median"]["point"] > 0} for r in runs]
    ids = [i for i in meds[0] if all(i in m for m in meds)]
    typical = {i: statistics.median(m[i] for m in meds) for i in ids}
    factor = [math.exp(statistics.median(math.log(m[i] / typical[i]) for i in ids)) if ids
              else 1.0 for m in meds]

    def cv(vals):
        mu = statistics.mean(vals)
        return 100.0 * statistics.stdev(vals) / mu if len(vals) > 1 and mu > 0 else 0.0

    rows = []
    for i in ids:
        vals = [m[i] for m in meds]
        rows.append({"id": i, "runs": len(vals), "typical": typical[i], "cv": cv(vals),
                     "cv_own": cv([m[i] / f for m, f in zip(meds, factor)])})
    return rows, factor, cv(factor)


# ---- the report ----


class Report:
    def __init__(self, args):
        self.a = args
        self.work = os.path.join(ROOT, args.work)
        self.parts = []
        self.steps = []      # (what, seconds, outcome)
        self.candidates = []  # dicts: rule, kind, saving_ns, upper_ns, what, bound, action
        self.noisy = {}       # id -> {"cv": %, "ci": % half-width, "r2": R²} (R5, R6)

    def add(self, text):
        self.parts.append(text)

    # step 1
    def suite(self):
        out = os.path.join(self.work, "suite.json")
        cmd = ["./bench", "--output-format", "csv", "--color", "never", "--json",
               os.path.relpath(out, ROOT)]
        if self.a.quick:
            cmd += ["--quick", QUICK_FILTER]
        if self.a.baseline:
            cmd += ["--baseline", self.a.baseline]
        log("step 1: the reference suite" + (" (quick)" if self.a.quick else
                                               " with default settings (a few minutes)"))
        rc, _, err, secs = run(cmd, out=os.path.join(self.work, "suite.csv"))
        with open(os.path.join(self.work, "suite.stderr"), "w", encoding="utf-8") as f:
            f.write(err)
        if rc not in (0, 1, 3) or not os.path.isfile(out):
            raise Fail(f"the suite run failed (exit {rc}): {first_error(err)}")
        self.steps.append(("suite run", secs, f"exit {rc}"))
        self.suite_cmd = shown(cmd)
        self.suite_stderr = err
        self.results = load_json(out)
        self.oks = ok_map(self.results)

    # step 2
    def counters(self):
        bench_help = run(["./bench", "--help"])[1]
        opts = []
        if "--alloc-stats" in bench_help:
            opts.append(["--alloc-stats"])
        if "--perf-events" in bench_help:
            opts.append(["--perf-events", os.environ.get("REPORT_PERF_EVENTS", "ipc,sw")])
        self.counters_note = None
        self.counters_results = None
        if not opts:
            self.counters_note = "this program has neither --alloc-stats nor --perf-events"
            return
        out = os.path.join(self.work, "counters.json")
        log("step 2: counters and allocations (--quick)")
        notes = []
        while opts:
            cmd = ["./bench", "--quick", "--output-format", "csv", "--color", "never",
                   "--json", os.path.relpath(out, ROOT)] + [x for o in opts for x in o]
            if self.a.quick:
                cmd.append(QUICK_FILTER)
            rc, _, err, secs = run(cmd, out=os.devnull)
            if rc in (0, 1, 3) and os.path.isfile(out):
                self.steps.append(("counters run", secs, f"exit {rc}"))
                self.counters_results = load_json(out)
                self.counters_cmd = shown(cmd)
                break
            # Drop the option the program refused (e.g. counters compiled out) and try again.
            msg = first_error(err)
            bad = next((o for o in opts if o[0] in msg), opts[-1])
            notes.append(f"{' '.join(bad)}: {msg}")
            opts.remove(bad)
        self.counters_note = "; ".join(notes) if notes else None

    # step 3
    def hotspots(self):
        self.hot = None
        self.hot_note = None
        if os.environ.get("REPORT_PROFILE", "1") == "0":
            self.hot_note = "skipped (REPORT_PROFILE=0)"
            return
        pdir = os.path.join(self.work, "profile")
        os.makedirs(pdir, exist_ok=True)
        log("step 3: CPU profile of the profiling workload (scripts/profile_hotspots.sh)")
        rc, _, err, secs = run(["scripts/profile_hotspots.sh"], env={"PROFILE_OUT": pdir})
        self.steps.append(("scripts/profile_hotspots.sh", secs, f"exit {rc}"))
        if rc != 0:
            self.hot_note = f"unavailable: {first_error(err)}"
            return
        self.hot = load_json(os.path.join(pdir, "hotspots.json"))
        self.flamegraph = os.path.join(pdir, "flamegraph.svg")
        shutil.copyfile(self.flamegraph, os.path.join(ROOT, "tmp", "flamegraph.svg"))
        shutil.copyfile(os.path.join(pdir, "hotspots.json"), os.path.join(ROOT, "tmp",
                                                                          "hotspots.json"))

    # beside step 3: one pass of the profiling workload, traced
    def workload_trace(self):
        self.wl_trace = None
        prog = os.environ.get("WL_PROFILE_PROGRAM") or os.path.join(
            os.path.dirname(os.path.dirname(os.environ["BENCH_PROGRAM"]))
            if os.environ.get("BENCH_PROGRAM") else os.path.join(ROOT, "build"),
            "workloads", "wl_profile")
        if not os.access(prog, os.X_OK):
            self.wl_trace_note = f"unavailable: no profiling workload program at `{prog}`"
            return
        path = os.path.join(self.work, "workload_trace.json")
        log("step 3b: one pass of the profiling workload with its phases (wl_profile --trace)")
        rc, _, err, secs = run([prog, "--trace", path])
        self.steps.append((f"wl_profile --trace {os.path.relpath(path, ROOT)}", secs,
                           f"exit {rc}"))
        if rc != 0:
            self.wl_trace_note = f"unavailable: {first_error(err)}"
            return
        self.wl_trace = load_json(path)
        shutil.copyfile(path, os.path.join(ROOT, "tmp", "workload_trace.json"))

    def sec_workload_trace(self):
        head = "## Phases of one workload pass\n\n"
        if not self.wl_trace:
            self.add(head + f"{self.wl_trace_note}.")
            return
        events = self.wl_trace["traceEvents"]
        whole = next(e for e in events if e.get("cat") == "workload")
        rows = [(e["name"], f"{e['dur'] / 1e3:.1f} ms", pct(100 * e["dur"] / whole["dur"]))
                for e in events if e.get("cat") == "phase"]
        self.add(head + "`wl_profile --trace` (the reference profiling workload, once, outside "
                 "perf): each phase of the pass as a slice of a timeline in the Chrome trace "
                 "event format, `tmp/workload_trace.json` (open it in ui.perfetto.dev, "
                 f"`chrome://tracing` or speedscope). The pass took {whole['dur'] / 1e3:.1f} ms."
                 "\n\n" + table(["phase", "time", "share of the pass"], rows,
                                  ["---", "---:", "---:"]))

    # step 4
    def memory(self):
        self.mem = None
        want = os.environ.get("REPORT_MEMORY", "0" if self.a.quick else "1") != "0"
        if not want:
            self.mem_note = "skipped (" + ("--quick" if self.a.quick else "REPORT_MEMORY=0") + \
                "; REPORT_MEMORY=1 runs it)"
            return
        mdir = os.path.join(self.work, "memory")
        os.makedirs(mdir, exist_ok=True)
        log("step 4: heap profile and leak check (scripts/profile_memory.sh, about a minute)")
        rc, _, err, secs = run(["scripts/profile_memory.sh"], env={"PROFILE_OUT": mdir})
        self.steps.append(("scripts/profile_memory.sh", secs, f"exit {rc}"))
        if rc not in (0, 1) or not os.path.isfile(os.path.join(mdir, "memory.json")):
            self.mem_note = f"unavailable: {first_error(err)}"
            return
        self.mem = load_json(os.path.join(mdir, "memory.json"))
        self.mem_note = None

    # step 5
    def variance(self):
        n = self.a.variance_runs
        vdir = os.path.join(self.work, "variance")
        shutil.rmtree(vdir, ignore_errors=True)
        cmd = ["scripts/variance_check.sh", "-n", str(n), "-k", os.path.relpath(vdir, ROOT)]
        if self.a.quick:
            cmd += ["--", "--quick", QUICK_FILTER]
        log(f"step 5: variance check over {n} processes" +
            ("" if self.a.quick else " (about 6 minutes for 10 runs of the whole suite)"))
        rc, so, err, secs = run(cmd)
        self.steps.append(("scripts/variance_check.sh", secs, f"exit {rc}"))
        self.var_cmd = shown(cmd)
        with open(os.path.join(self.work, "variance.txt"), "w", encoding="utf-8") as f:
            f.write(so)
        if rc != 0:
            self.var = None
            self.var_note = f"failed: {first_error(err)}"
            return
        self.var = variance([os.path.join(vdir, f"run{i}.json") for i in range(1, n + 1)])
        self.var_note = None

    # step 6
    def html(self):
        log("step 6: HTML report")
        bdir = os.environ.get("BENCH_BASELINE_DIR") or "baselines"
        cmd = [sys.executable, "scripts/tools/bench_report.py",
               os.path.join(self.work, "suite.json"), "--out", self.a.html_dir,
               "--title", "Reference suite", "--baselines-dir", bdir]
        if self.hot:
            cmd += ["--flamegraph", self.flamegraph]
        if self.a.baseline:
            cmd += ["--baseline", os.path.join(bdir, self.a.baseline + ".json")]
        rc, _, err, secs = run(cmd)
        self.steps.append(("scripts/tools/bench_report.py", secs, f"exit {rc}"))
        self.html_note = None if rc == 0 else f"failed: {first_error(err)}"

    # ---- sections ----

    def sec_system(self):
        c = self.results.get("context", {})
        cpu = c.get("cpu", {})
        clk = c.get("clock", {})
        mem = c.get("memory_bytes")
        rows = [
            ("CPU", f"{cpu.get('brand', '')} ({cpu.get('vendor', '')}, family "
                    f"{cpu.get('family')}, model {cpu.get('model')}, stepping "
                    f"{cpu.get('stepping')})"),
            ("cores / threads", f"{cpu.get('cores')} / {cpu.get('threads')} "
                                f"({c.get('ncpus')} online)"),
            ("caches", caches_text(cpu)),
            ("SIMD", cpu.get("features") or "unknown"),
            ("memory", f"{mem / 2**30:.1f} GiB" if isinstance(mem, (int, float)) and mem > 0
             else "unknown"),
            ("OS", f"{c.get('os_name')} ({c.get('kernel')})"),
            ("governor / boost", f"{c.get('governor') or 'unknown'} / "
                                 f"{c.get('boost') or 'unknown'}"),
            ("load average at start", ", ".join(f"{x:.2f}" for x in c.get("loadavg", []))),
            ("compiler", f"{c.get('compiler')}, flags `{c.get('compiler_flags')}`, "
                         f"{c.get('build_type')}"),
            ("clock", f"{clk.get('name')}: {clk.get('cost_ns', 0):.1f} ns per read, resolution "
                      f"{clk.get('resolution_ns', 0):.0f} ns"),
            ("harness / git", f"{self.results.get('harness_version')} / "
                              f"{c.get('git_revision') or 'unknown'}"),
            ("host", c.get("hostname")),
            ("run", c.get("timestamp")),
        ]
        self.add("## System configuration\n\nFrom the `context` of the suite run's JSON (CPU "
                 f"facts from: {cpu.get('source', 'unknown')}).\n\n" +
                 table(["", ""], [(k, v) for k, v in rows]))
        warns = c.get("warnings") or []
        if warns:
            self.add("Warnings the harness gave about this machine:\n\n" +
                     "\n".join(f"- {w}" for w in warns))

    def sec_suite(self):
        c = self.results.get("context", {})
        level = c.get("statistics", {}).get("confidence_level", 0.95)
        rows = []
        for b in self.results["benchmarks"]:
            if b.get("status") != "ok":
                rows.append((code(b["id"]), b.get("status"), b.get("message", ""), "", "", "", ""))
                continue
            m = med(b)
            thr = ""
            for key, unit in (("bytes_per_iteration", "B"), ("elements_per_iteration", "elem")):
                rb = rate_bounds(b, key)
                if rb:
                    thr = f"{fmt_rate(rb[0], unit)} [{fmt_rate(rb[1], unit)}, " \
                          f"{fmt_rate(rb[2], unit)}]"
                    break
            n = len(b["samples"]["iterations"])
            r2 = b.get("r2")
            rows.append((code(b["id"]), fmt_time(m["point"]),
                         f"[{fmt_time(m['lower'])}, {fmt_time(m['upper'])}]", thr,
                         f"{n} ({b.get('stop_reason')})",
                         f"{r2:.4f}" if isinstance(r2, (int, float)) else "n/a",
                         sum(v for k, v in b.get("outliers", {}).items() if k != "fences_ns")))
        self.add(f"## Reference suite\n\n`{self.suite_cmd}`"
                 + (" (quick mode: a subset, --quick settings)" if self.a.quick else "") +
                 f". Median time per iteration with its {level:.0%} bootstrap interval; "
                 "throughput is the declared amount per iteration over the median (its interval "
                 "from the median's). Full distributions: the HTML report "
                 f"(`{self.a.html_dir}/index.html`).\n\n" +
                 table(["benchmark", "median", f"{level:.0%} CI", "throughput [CI]",
                        "samples (stop)", "R²", "outliers"], rows,
                       ["---", "---:", "---", "---", "---:", "---:", "---:"]))

    def sec_bandwidth(self):
        rows = bandwidth_fractions(self.oks)
        self.bw = rows
        head = ("## Fraction of the machine limit\n\nThe similarity kernel streams "
                "4·N·D + 4·N bytes per query; `scaling/read_probe/N` reads a buffer of the same "
                "size in the same run with the simplest loop that can (docs/workloads.md). Their "
                "ratio is the fraction of the single-core read bandwidth this machine delivers "
                "that similarity reaches. The range pairs the ends of both confidence intervals "
                "(conservative). The probe is itself a measurement, not a datasheet peak; "
                "activation and decay have no such limit in the suite (activation is bound by "
                "scattered updates, decay by the divider: docs/workloads.md).\n\n")
        if not rows:
            text = head + ("Not measured in this run: the suite JSON has no pair of "
                           "`scaling/similarity/N` and `scaling/read_probe/N`.")
        else:
            text = head + table(
                ["candidates N", "buffer", "similarity", "read probe", "fraction", "range"],
                [(f"{r['n']:,}", f"{r['mb']:.1f} MB", fmt_rate(r["sim"][0], "B"),
                  fmt_rate(r["probe"][0], "B"), f"{r['fraction']:.2f}",
                  f"[{r['lo']:.2f}, {r['hi']:.2f}]") for r in rows],
                ["---:", "---:", "---:", "---:", "---:", "---"])
        comp = compute_fractions(self.oks)
        self.comp = comp
        text += ("\n\nThe batched similarity (`scaling/similarity_batch/Q`: Q queries at once "
                 f"against the same {BATCH_N:,} x {DIM} candidates, blocked so each row is read "
                 "once per block of 64 queries) does 2·D flops per candidate scored and is bound "
                 "by arithmetic, not memory. Its flop rate is held against "
                 "`scaling/compute_probe`, independent FMA chains at the same vector width "
                 "(8 floats) measured in the same run: the core's peak, counting an FMA as 2 "
                 "flops. The speed-up is the single query's time "
                 f"(`scaling/similarity/{BATCH_N}`) over the batch's time per query.\n\n")
        if not comp:
            text += ("Not measured in this run: the suite JSON lacks "
                     "`scaling/similarity_batch/Q` or `scaling/compute_probe`.")
        else:
            text += table(
                ["queries Q", "time per query", "flop rate", "compute probe", "fraction",
                 "range", "speed-up per query [range]"],
                [(r["q"], fmt_time(r["per_query_ns"]), fmt_rate(r["flops"][0], "FLOP"),
                  fmt_rate(r["probe"][0], "FLOP"), f"{r['fraction']:.2f}",
                  f"[{r['lo']:.2f}, {r['hi']:.2f}]",
                  f"{r['speedup']:.2f}x [{r['speedup_lo']:.2f}, {r['speedup_hi']:.2f}]"
                  if "speedup" in r else "n/a") for r in comp],
                ["---:", "---:", "---:", "---:", "---:", "---", "---"])
        self.add(text)

    def sec_baseline(self):
        if not self.a.baseline:
            self.add("## Comparison with a baseline\n\nNone requested (`make report "
                     "REPORT_BASELINE=NAME` compares this run with `baselines/NAME.json`).")
            return
        rows, missing = [], []
        for b in self.results["benchmarks"]:
            ch = b.get("change")
            if b.get("status") != "ok":
                continue
            if not ch or "ratio" not in ch:  # "new": the baseline has no measurement of it
                missing.append(b["id"])
                continue
            rows.append((code(b["id"]), ch["verdict"],
                         f"{(ch['ratio'] - 1) * 100:+.2f}% [{(ch['ratio_lower'] - 1) * 100:+.2f}%, "
                         f"{(ch['ratio_upper'] - 1) * 100:+.2f}%]", f"{ch['p_adjusted']:.4f}",
                         fmt_time(ch["baseline_median_ns"]), fmt_time(med(b)["point"])))
        summary = [ln for ln in self.suite_stderr.splitlines()
                   if re.match(r"^\d+ regressed, ", ln) or "Comparison with baseline" in ln]
        text = (f"## Comparison with baseline `{self.a.baseline}`\n\n`--baseline "
                f"{self.a.baseline}`: change of the median, new over old, with "
                "its interval (run-to-run noise included) and Holm-adjusted p "
                "(docs/comparison.md).\n\n")
        if summary:
            text += "\n".join(f"> {s.strip()}" for s in summary) + "\n\n"
        text += table(["benchmark", "verdict", "change [interval]", "p (adj.)", "baseline median",
                       "this run"], rows)
        if missing:
            text += "\n\nNot in the baseline: " + ", ".join(code(m) for m in missing) + "."
        self.add(text)
        for b in self.results["benchmarks"]:
            ch = b.get("change") or {}
            if ch.get("verdict") == "regressed":
                self.candidates.append({
                    "rule": "R1", "kind": "regression", "saving_ns": None,
                    "what": f"{code(b['id'])} regressed by {(ch['ratio'] - 1) * 100:+.1f}% "
                            f"against `{self.a.baseline}` (p adj. {ch['p_adjusted']:.4f})",
                    "action": "find the change that caused it before optimising anything else"})

    def sec_hotspots(self):
        h = self.hot
        if not h:
            self.add(f"## CPU hot spots\n\n{self.hot_note}.")
            return
        total = h["total_samples"]

        def rows(key):
            return [(f"{r['percent']:.2f}%", r["samples"], code(r["function"])) for r in h[key]]
        ph_rows = []
        wall = h.get("phase_wall_s") or {}
        wall_total = sum(v for k, v in wall.items() if k != "total")
        for p in h["phases"]:
            w = wall.get(p["phase"])
            ph_rows.append((p["phase"], p["samples"], pct(p["percent_of_all"], 2),
                            pct(p["percent_of_workload"], 2) if p["percent_of_workload"] is not None
                            else "",
                            f"{w * 1e3:.1f} ms ({100 * w / wall_total:.1f}%)" if w is not None and
                            wall_total > 0 else ""))
        mapping = "; ".join(f"{phase}: " + ", ".join(code(f) for f in fns)
                            for phase, fns in h["phase_mapping"].items())
        self.add(
            "## CPU hot spots\n\n"
            f"`scripts/profile_hotspots.sh`: {h['target']}, sampled with `perf record -e "
            f"{h['event']} -F {h['frequency_hz']} -g` (frame pointers; the profiling build "
            f"`build-prof`): {total:,} samples, {h['kernel_leaf_samples']:,} of them in the "
            f"kernel, {h['unnamed_leaf_samples']:,} in frames perf could not name. Flame graph: "
            "`tmp/flamegraph.svg` (also embedded in the HTML report); docs/profiling.md says how "
            "to read it.\n\n"
            "Top 10 functions by self share (samples whose innermost frame is the function):"
            "\n\n" + table(["self", "samples", "function"], rows("self"), ["---:", "---:", "---"])
            + "\n\nTop 10 by inclusive share (samples with the function anywhere on the stack):"
            "\n\n" + table(["inclusive", "samples", "function"], rows("inclusive"),
                           ["---:", "---:", "---"])
            + "\n\nShare of compute time of each phase of the profiling workload, from the "
            "samples: a sample belongs to the phase of the outermost phase function on its "
            f"stack ({mapping}); other `wl_` frames are \"workload, other\"; samples with no "
            "`wl_` frame (process start, exit) are outside the workload. The last column is "
            "wl_profile's own wall clock per phase in the same run, as a cross-check.\n\n"
            + table(["phase", "samples", "% of all", "% of workload", "wall time (wl_profile)"],
                    ph_rows, ["---", "---:", "---:", "---:", "---:"]))
        self.phase_candidates(h)

    def similarity_bound(self, h):
        """(bound, fraction, probe text) of the profile's similarity phase: compute-bound when
        the profile's hottest code is the batched kernel, memory-bound when it is the scan."""
        batched = any("dots_multi" in r["function"] for r in h["self"][:3])
        if batched:
            row = next((r for r in getattr(self, "comp", []) if r["q"] == PROFILE_BATCH), None)
            if row:
                return ("compute", row["fraction"], f"{row['fraction']:.2f} of the compute "
                        f"probe (`{row['id']}` against `scaling/compute_probe`)")
            return ("compute", None, "the suite run has no `scaling/similarity_batch/"
                    f"{PROFILE_BATCH}` and `scaling/compute_probe` to measure the fraction")
        bw = {r["n"]: r for r in getattr(self, "bw", [])}
        if 10000 in bw:
            f = bw[10000]["fraction"]
            return ("memory", f, f"{f:.2f} of the read probe (`scaling/similarity/10000` "
                    "against `scaling/read_probe/10000`)")
        return ("memory", None, "the suite run has no `scaling/similarity/10000` and "
                "`scaling/read_probe/10000` to measure the fraction")

    def phase_candidates(self, h):
        """R3 (a phase with PHASE_SHARE% of the samples), with its bound and the time reaching
        that bound would save, and R4 (a function with HOT_FUNCTION% self samples), folded into
        its phase's candidate when there is one."""
        wall = h.get("phase_wall_s") or {}
        total_s = wall.get("total") or sum(v for k, v in wall.items() if k != "total")
        prof = self.oks.get("workload/profiling_workload")
        if not total_s and prof:
            total_s = med(prof)["point"] / 1e9
        hot_fns = [r for r in h["self"] if r["percent"] >= HOT_FUNCTION]
        phases_listed = set()
        for p in h["phases"]:
            share = p["percent_of_workload"]
            if share is None or p["phase"] == "workload, other" or share < PHASE_SHARE:
                continue
            phases_listed.add(p["phase"])
            t = wall.get(p["phase"])
            if t is None and total_s:
                t = share / 100 * total_s
            fns = [r for r in hot_fns if r.get("phase") == p["phase"]]
            fn_text = ("; its hottest function" + ("s" if len(fns) > 1 else "") + ": " +
                       ", ".join(f"{code(r['function'])} ({r['percent']:.1f}% self)" for r in fns)
                       if fns else "")
            what = (f"phase **{p['phase']}**: {share:.1f}% of the profiling workload's samples"
                    + (f" (about {fmt_time(t * 1e9)} of a {fmt_time(total_s * 1e9)} run)"
                       if t and total_s else "") + fn_text)
            if p["phase"] == "similarity":
                bound, f, ftext = self.similarity_bound(h)
                saving = t * 1e9 * (1 - f) if t and f is not None and f < 1 else None
                action = ("profile the kernel's instruction mix (perf annotate): at this fraction "
                          "the multiply and add units idle on loads, the per-pair reduction and "
                          "the top-k check" if bound == "compute" else
                          "answer many queries per pass over the embeddings (the batched, "
                          "blocked kernel turns this bandwidth-bound scan into a compute-bound "
                          "one), or move fewer bytes (narrower embeddings, an index)")
                self.candidates.append({
                    "rule": "R3", "kind": "hot", "saving_ns": saving, "upper_ns": t and t * 1e9,
                    "what": what, "bound": f"{bound}, {ftext}", "action": action})
            else:
                self.candidates.append({
                    "rule": "R3", "kind": "hot", "saving_ns": None, "upper_ns": t and t * 1e9,
                    "what": what, "bound": PHASE_BOUNDS.get(p["phase"], "not measured"),
                    "action": "profile inside the phase (flame graph) for its own hot spots"})
        for r in hot_fns:
            if r.get("phase") in phases_listed:
                continue
            where = f" (its samples are in phase {r['phase']})" if r.get("phase") else ""
            self.candidates.append({
                "rule": "R4", "kind": "hot", "saving_ns": None,
                "upper_ns": (r["percent"] / 100 * total_s * 1e9) if total_s else None,
                "what": f"function {code(r['function'])} has {r['percent']:.1f}% of all samples "
                        f"as self time{where}",
                "bound": "not measured",
                "action": "look at its instructions (perf annotate) and at the bytes it moves "
                          "per call"})

    def sec_counters(self):
        sources = [(self.results, "the suite run")]
        if self.counters_results:
            sources.append((self.counters_results, f"`{self.counters_cmd}`"))
        text = "## Counters and allocations\n\n"
        if self.counters_note:
            text += f"Counters run: {self.counters_note}.\n\n"
        found = False
        for res, label in sources:
            names, facts, rows = [], [], []
            for b in res.get("benchmarks", []):
                for name, m in (b.get("metrics") or {}).items():
                    if name not in names:
                        names.append(name)
                for name in (b.get("facts") or {}):
                    if name not in facts:
                        facts.append(name)
            if not names and not facts:
                continue
            found = True
            units = {}
            for b in res.get("benchmarks", []):
                if b.get("status") != "ok":
                    continue
                row = [code(b["id"])]
                for name in names:
                    m = (b.get("metrics") or {}).get(name) or {}
                    units.setdefault(name, m.get("unit", ""))
                    pm = ((m.get("per_iteration") or {}).get("median") or {}).get("point")
                    row.append("" if pm is None else f"{pm:.4g}" + (" (scaled)" if m.get("scaled")
                                                                    else ""))
                for name in facts:
                    f = (b.get("facts") or {}).get(name) or {}
                    units.setdefault(name, f.get("unit", ""))
                    row.append("" if f.get("value") is None else f"{f['value']:.4g}")
                rows.append(row)
            head = ["benchmark"] + [f"{n} ({units.get(n, '')}/iter)" for n in names] + \
                [f"{n} ({units.get(n, '')})" for n in facts]
            text += (f"From {label}: metrics are medians per iteration (their intervals are in "
                     "the run's JSON and the HTML report); facts are per benchmark.\n\n" +
                     table(head, rows, ["---"] + ["---:"] * (len(head) - 1)) + "\n\n")
        if not found:
            text += ("No benchmark in this run's JSON has `metrics` or `facts` (the program "
                     "records them only with --alloc-stats or --perf-events, when built with "
                     "them).")
        self.add(text.rstrip())

    def sec_memory(self):
        text = "## Heap profile and leak check\n\n"
        if not self.mem:
            self.add(text + f"{self.mem_note}.")
            return
        m = self.mem
        h, lk = m.get("heap") or {}, m.get("leaks") or {}
        text += f"`scripts/profile_memory.sh`: {m['target']}.\n\n"
        rows = []
        if h:
            rows += [("peak heap", f"{h['peak_heap_bytes'] / 1e6:.2f} MB ({h['tool']})")]
            if "allocation_calls" in h:
                rows.append(("allocation calls", h["allocation_calls"]))
            if "temporary_allocations" in h:
                rows.append(("temporary allocations", h["temporary_allocations"]))
            if "leaked_bytes" in h:
                rows.append(("not freed at exit", f"{h['leaked_bytes']:.0f} B ({h['tool']})"))
        if lk:
            rows.append(("memcheck errors", lk["errors"]))
            rows.append(("definitely / indirectly / possibly lost",
                         f"{lk['definitely_lost_bytes']} / {lk['indirectly_lost_bytes']} / "
                         f"{lk['possibly_lost_bytes']} B"))
            rows.append(("still reachable at exit", f"{lk['still_reachable_bytes']} B"))
            if "allocs" in lk:
                rows.append(("heap usage (memcheck)", f"{lk['allocs']} allocs, {lk['frees']} "
                                                      f"frees, {lk['allocated_bytes']:,} B"))
        text += table(["", ""], rows)
        if h.get("top_sites"):
            text += "\n\nTop allocation sites by bytes live at the peak:\n\n" + table(
                ["bytes at peak", "calls", "site"],
                [(f"{s['peak_bytes'] / 1e6:.3f} MB", s["calls"], code(s["site"]))
                 for s in h["top_sites"]], ["---:", "---:", "---"])
        self.add(text)

    def sec_variance(self):
        text = (f"## Run-to-run variation\n\n`{self.var_cmd}`: the benchmarks in "
                f"{self.a.variance_runs} separate processes; CV is the coefficient of variation "
                "of each benchmark's median across them, \"without machine\" divides out each "
                "run's machine factor (the median over benchmarks of that run's median relative "
                "to the typical one), as scripts/variance_check.sh does.\n\n")
        if not self.var:
            self.add(text + f"{self.var_note}.")
            return
        rows, factor, fcv = self.var
        text += table(["benchmark", "runs", "median of medians", "CV", "CV without machine"],
                      [(code(r["id"]), r["runs"], fmt_time(r["typical"]), pct(r["cv"], 2),
                        pct(r["cv_own"], 2)) for r in rows],
                      ["---", "---:", "---:", "---:", "---:"])
        under = sum(1 for r in rows if r["cv"] <= CV_LIMIT)
        text += (f"\n\nMachine factor per run: {' '.join(f'{f:.3f}' for f in factor)} (CV "
                 f"{fcv:.2f}%). {under} of {len(rows)} benchmarks are at or under "
                 f"{CV_LIMIT:.0f}%.")
        self.add(text)
        for r in rows:
            if r["cv"] > CV_LIMIT:
                self.noisy.setdefault(r["id"], {})["cv"] = r["cv"]

    def rules_precision(self):
        for b in self.results["benchmarks"]:
            if b.get("status") != "ok":
                continue
            m = med(b)
            half = max(m["upper"] - m["point"], m["point"] - m["lower"])
            rel = 100 * half / m["point"] if m["point"] > 0 else float("inf")
            r2 = b.get("r2")
            if rel > CI_LIMIT:
                self.noisy.setdefault(b["id"], {})["ci"] = rel
            if isinstance(r2, (int, float)) and r2 < R2_LIMIT:
                self.noisy.setdefault(b["id"], {})["r2"] = r2
        for r in getattr(self, "bw", []):
            if r["fraction"] < BANDWIDTH_TARGET:
                sure = "clearly" if r["hi"] < BANDWIDTH_TARGET else "possibly"
                sb = self.oks[f"scaling/similarity/{r['n']}"]
                self.candidates.append({
                    "rule": "R2", "kind": "hot",
                    "saving_ns": med(sb)["point"] * (1 - r["fraction"]),
                    "what": f"`scaling/similarity/{r['n']}` (one call) reaches "
                            f"{r['fraction']:.2f} of the read probe ({sure} below "
                            f"{BANDWIDTH_TARGET:.2f})",
                    "bound": f"memory, {r['fraction']:.2f} of the read probe at this size",
                    "action": "per-candidate work keeps it from the memory bound at this size "
                              "(the 32-lane reduction, the norm division, the top-k check, loop "
                              "overhead)"})

    def sec_candidates(self):
        self.rules_precision()
        rules = table(["rule", "condition", "listed"], [
            ("R1", "a benchmark regressed against the requested baseline", "first"),
            ("R3", f"a phase takes at least {PHASE_SHARE:.0f}% of the profiling workload's "
                   "samples; similarity's saving is its time x (1 - its fraction of the probe "
                   "that bounds it: the compute probe when the profile runs the batched kernel, "
                   "the read probe when it runs the single-query scan)", "by time saved"),
            ("R2", f"single-query similarity below {BANDWIDTH_TARGET:.2f} of the read probe at "
                   "some size (\"clearly\" when the whole range is below); saving: one call's "
                   "time x (1 - fraction)", "by time saved"),
            ("R4", f"a function with at least {HOT_FUNCTION:.0f}% of all samples as self time, "
                   "outside the phases of R3 (inside, it is named in the phase's entry)",
             "by time saved"),
            ("R5", f"run-to-run CV above {CV_LIMIT:.0f}%", "noisy section"),
            ("R6", f"CI half-width above {CI_LIMIT:.0f}% of the median, or R² below "
                   f"{R2_LIMIT}", "noisy section"),
        ])

        def order(c):
            # Regressions first; then the known savings, largest first; then those with only an
            # upper bound (no limit measured), by that bound.
            if c["kind"] == "regression":
                return (0, 0.0)
            if c.get("saving_ns") is not None:
                return (1, -c["saving_ns"])
            return (2, -(c.get("upper_ns") or 0.0))

        items = []
        for i, c in enumerate(sorted(self.candidates, key=order), 1):
            if c["kind"] == "regression":
                items.append(f"{i}. [{c['rule']}] {c['what']}: {c['action']}.")
                continue
            if c.get("saving_ns") is not None:
                save = f"could save about {fmt_time(c['saving_ns'])}"
            elif c.get("upper_ns"):
                save = f"could save an unknown part of {fmt_time(c['upper_ns'])}"
            else:
                save = "could save an unknown amount"
            items.append(f"{i}. [{c['rule']}] {c['what']}. **Bound**: {c['bound']}. "
                         f"**{save[0].upper() + save[1:]}**. {c['action'][0].upper()}"
                         f"{c['action'][1:]}.")
        text = ("## Optimisation candidates\n\nDerived from the numbers above by these rules "
                "(thresholds at the top of scripts/make_report.py; docs/profiling.md). Hot "
                "candidates are ranked by the time reaching their bound would save (per run of "
                "the profiling workload, or per call of the benchmark named); each states what "
                "bounds it and how close it is.\n\n" + rules + "\n\n### Hot, and could be "
                "faster\n\n" + ("\n".join(items) if items else
                                 "No rule fired on this run's numbers."))
        noisy = sorted(self.noisy.items(), key=lambda kv: -max(kv[1].get("cv", 0),
                                                                kv[1].get("ci", 0)))
        text += ("\n\n### Noisy: measure before optimising\n\n")
        if noisy:
            text += (f"{len(noisy)} benchmarks vary too much to show a change of a few percent "
                     f"(R5: CV between processes above {CV_LIMIT:.0f}%; R6: interval half-width "
                     f"above {CI_LIMIT:.0f}% or R² below {R2_LIMIT}). Quiet the machine, measure "
                     "longer or calibrate their baselines (`--calibrate`) before optimising "
                     "them.\n\n" + table(
                         ["benchmark", "CV between processes", "CI half-width", "R²"],
                         [(code(i), pct(n["cv"]) if "cv" in n else "",
                           pct(n["ci"]) if "ci" in n else "",
                           f"{n['r2']:.3f}" if "r2" in n else "") for i, n in noisy],
                         ["---", "---:", "---:", "---:"]))
        else:
            text += "None in this run."
        self.add(text)

    def write(self):
        started = self.started
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        mode = "quick (REPORT_QUICK=1: a subset with --quick settings, fewer variance runs; "\
            "not for drawing conclusions)" if self.a.quick else "full"
        head = ("# Profiling results\n\n"
                f"Generated by `make report` (scripts/make_report.py) on this machine, "
                f"{started} to {now}, mode: {mode}. Every number below was measured by the "
                "commands listed in this run; regenerate with `make report` rather than editing. "
                "What each section means and the rules for the candidates: "
                "[docs/profiling.md](../docs/profiling.md).\n")
        steps = table(["step", "time", "outcome"],
                      [(code(s), f"{t:.0f} s", o) for s, t, o in self.steps])
        body = "\n\n".join([head] + self.parts + ["## How this report was made\n\n" + steps +
                                                  f"\n\nHTML report: `{self.a.html_dir}/"
                                                  "index.html`" + (f" ({self.html_note})"
                                                                   if self.html_note else "") +
                                                  ". Intermediate files: `" + self.a.work + "/`."])
        out = os.path.join(ROOT, self.a.out)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        tmp = out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(body.rstrip() + "\n")
        os.replace(tmp, out)
        return out

    def make(self):
        self.started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work, exist_ok=True)
        os.makedirs(os.path.join(ROOT, "tmp"), exist_ok=True)
        self.suite()
        self.counters()
        self.hotspots()
        self.workload_trace()
        self.memory()
        self.variance()
        self.html()
        self.sec_system()
        self.sec_suite()
        self.sec_bandwidth()
        self.sec_baseline()
        self.sec_hotspots()
        self.sec_workload_trace()
        self.sec_counters()
        self.sec_memory()
        self.sec_variance()
        self.sec_candidates()
        return self.write()


def env_int(name, default):
    v = os.environ.get(name, "")
    if not v:
        return default
    if not re.fullmatch(r"[0-9]+", v):
        raise Fail(f"{name} must be an integer, got '{v}'")
    return int(v)


def main():
    ap = argparse.ArgumentParser(description="Regenerate reports/profiling_results.md.")
    ap.add_argument("--quick", action="store_true", default=os.environ.get("REPORT_QUICK", "")
                    not in ("", "0"))
    ap.add_argument("--baseline", default=os.environ.get("REPORT_BASELINE") or None)
    ap.add_argument("--variance-runs", type=int, default=None)
    ap.add_argument("--out", default=os.path.join("reports", "profiling_results.md"))
    ap.add_argument("--html-dir", default=os.path.join("reports", "html"))
    ap.add_argument("--work", default=os.path.join("tmp", "report"))
    a = ap.parse_args()
    try:
        if a.variance_runs is None:
            a.variance_runs = env_int("REPORT_VARIANCE_RUNS", 3 if a.quick else 10)
        if a.variance_runs < 2:
            raise Fail("the variance check needs at least 2 runs (REPORT_VARIANCE_RUNS)")
        if a.baseline and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}", a.baseline):
            raise Fail(f"'{a.baseline}' is not a baseline name (REPORT_BASELINE)")
        t0 = time.monotonic()
        out = Report(a).make()
    except Fail as e:
        log(str(e))
        return 2
    log(f"wrote {os.path.relpath(out, ROOT)} and {a.html_dir}/index.html in "
        f"{time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

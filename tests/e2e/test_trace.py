#!/usr/bin/env python3
"""End-to-end test of --trace FILE (docs/cli.md) and of the spans of a body, on e2e_trace
(fixture_trace.c) and the reference suite.

The trace is read with a strict JSON reader (no NaN or Infinity, no repeated key) and checked
against the Chrome trace event format: every event has a known phase, integer pids and tids,
timestamps in microseconds since the run began (the last event ends within the run's wall time,
and not a hundred times before it), complete slices with a duration, every begin closed, a name
for every process. Its samples add up: per benchmark, the measured sample slices' iterations and
times are the results file's samples exactly. A body of two phases of 1,000 and 3,000 chain steps
reports shares of 25% and 75% within 2 points; spans used wrongly fail their benchmark with one
line naming the span; a worker that crashes after some samples leaves a trace that parses, with
its slices and its end marked; an unwritable FILE (a missing folder, a directory, a file-size
limit as a full disk) is one line naming it and exit 2, the results file written all the same;
--ab's pairs are slices; --trace where nothing is measured is refused; a bound below the trace's
size coarsens it, in the file and on stderr. A .pftrace decodes with protoc against
perfetto_trace.proto, with the same samples. The JSON of a reference-suite run loads in
speedscope (npm, installed by scripts/setup_deps.sh test) in headless Chromium: every process
is a profile there, with no script error, alert or error page; a broken trace fails that check.
"""
import base64
import collections
import json
import os
import re
import resource
import shutil
import signal
import time
import unittest

import e2e_helpers
import test_html_report as html_test

TRACE = os.environ.get("E2E_TRACE", "")
BENCH = os.environ.get("E2E_BENCH", "")
ARGS = ["--nresamples", "1000", "--color", "never"]
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                      "results.schema.json")
PHASES = {"X", "B", "E", "i", "I", "C", "M"}
PROTO_DIR = os.path.dirname(os.path.abspath(__file__))  # perfetto_trace.proto
# speedscope's page, from npm at the version tests/e2e/speedscope/package-lock.json pins.
WL_PROFILE = os.environ.get("E2E_WL_PROFILE", "")
SPEEDSCOPE = os.environ.get("E2E_SPEEDSCOPE") or os.path.join(
    PROTO_DIR, "speedscope", "node_modules", "speedscope", "dist", "release", "index.html")


def parse_text_format(text):
    """protoc --decode's text format as nested dicts: every field a list of values, a message a
    dict, a scalar the string protoc printed (strings unquoted)."""
    root, stack = {}, []
    cur = root
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.endswith("{"):
            child = {}
            cur.setdefault(line[:-1].strip(), []).append(child)
            stack.append(cur)
            cur = child
        elif line == "}":
            cur = stack.pop()
        else:
            key, value = line.split(": ", 1)
            if value.startswith('"'):
                value = json.loads(value)
            cur.setdefault(key, []).append(value)
    return root


def run(prog, *args, env=None):
    return e2e_helpers.run([prog, *args], timeout=250,
                           env=e2e_helpers.environ(env, unset=["BENCH_HISTORY"]))


def strict_load(path):
    """The document at path, read as strict JSON: NaN, Infinity and repeated keys refused."""
    def no_constant(name):
        raise ValueError(f"{path}: {name} is not JSON")

    def pairs(items):
        keys = [k for k, _ in items]
        if len(keys) != len(set(keys)):
            raise ValueError(f"{path}: a repeated key in {keys}")
        return dict(items)

    with open(path, "rb") as f:
        raw = f.read()
    return json.loads(raw.decode("utf-8"), parse_constant=no_constant, object_pairs_hook=pairs)


class TraceCase(e2e_helpers.Case):
    def check_format(self, doc, wall_s):
        """The Chrome trace event format, as the viewers read it; returns the events."""
        self.assertIsInstance(doc, dict)
        events = doc["traceEvents"]
        self.assertIsInstance(events, list)
        self.assertGreater(len(events), 0)
        named = set()
        open_slices = collections.defaultdict(list)
        last_us = 0.0
        for e in events:
            self.assertIn(e["ph"], PHASES, e)
            self.assertIsInstance(e["name"], str)
            self.assertIsInstance(e["pid"], int)
            self.assertIsInstance(e["tid"], int)
            if e["ph"] == "M":
                if e["name"] == "process_name":
                    named.add(e["pid"])
                self.assertIsInstance(e["args"]["name" if "name" in e["name"] else "sort_index"],
                                      (str, int))
                continue
            ts = e["ts"]
            self.assertIsInstance(ts, (int, float))
            self.assertGreaterEqual(ts, 0, e)
            if e["ph"] == "X":
                self.assertGreaterEqual(e["dur"], 0, e)
                last_us = max(last_us, ts + e["dur"])
            elif e["ph"] == "B":
                open_slices[(e["pid"], e["tid"])].append(e["name"])
            elif e["ph"] == "E":
                self.assertTrue(open_slices[(e["pid"], e["tid"])], f"an end with no begin: {e}")
                open_slices[(e["pid"], e["tid"])].pop()
            elif e["ph"] == "C":
                self.assertTrue(all(isinstance(v, (int, float)) for v in e["args"].values()))
            elif e["ph"] in "iI":
                self.assertIn(e.get("s", "t"), ("g", "p", "t"))
            last_us = max(last_us, ts)
        self.assertEqual({k: v for k, v in open_slices.items() if v}, {}, "begins not closed")
        pids = {e["pid"] for e in events}
        self.assertEqual(pids - named, set(), "processes without a name")
        # Microseconds since the run began: the run's wall time bounds the last event, and a
        # trace in another unit (ns: 1000x more; ms or s: 1000x less) falls outside.
        self.assertLess(last_us, wall_s * 1e6 * 1.05 + 1e5)
        self.assertGreater(last_us, wall_s * 1e6 / 100)
        return events

    def measure(self, prog, *args, env=None, code=0):
        d = self.temp_dir("trace-")
        trace, results = os.path.join(d, "t.json"), os.path.join(d, "r.json")
        t0 = time.monotonic()
        p = run(prog, *ARGS, "--trace", trace, "--json", results, *args, env=env)
        wall = time.monotonic() - t0
        self.assert_exit(p, code)
        doc = strict_load(trace)
        events = self.check_format(doc, wall)
        res = e2e_helpers.load_json(results)
        e2e_helpers.check_schema(res, SCHEMA)
        return p, doc, events, e2e_helpers.by_id(res)

    def process_ids(self, events):
        """{trace pid: benchmark id} from the processes' names ("ID #j/n pid P (cpu C)")."""
        return {e["pid"]: e["args"]["name"].split(" #")[0] for e in events
                if e["ph"] == "M" and e["name"] == "process_name" and e["pid"] != 1}

    def assert_samples_add_up(self, events, res):
        """Per benchmark, the measured sample slices are the results file's samples exactly."""
        owner = self.process_ids(events)
        traced = collections.defaultdict(list)
        for e in events:
            if e["ph"] == "X" and e.get("cat") == "sample" and e["name"] == "measure sample":
                traced[owner[e["pid"]]].append((e["args"]["iterations"], e["args"]["total_ns"]))
        measured = {i: b for i, b in res.items() if b["status"] == "ok"}
        self.assertGreater(len(measured), 0)
        for bid, b in measured.items():
            saved = sorted(zip(b["samples"]["iterations"], b["samples"]["totals_ns"]))
            self.assertEqual(sorted(traced[bid]), saved, bid)


@unittest.skipIf(not TRACE, "E2E_TRACE is not set (ctest sets it)")
class TimelineTest(TraceCase):
    def test_format_tracks_and_samples(self):
        p, doc, events, res = self.measure(TRACE, "--processes", "2", "^spans/")
        self.assert_samples_add_up(events, res)
        names = [e["args"]["name"] for e in events if e["name"] == "process_name"]
        self.assertIn("bench (manager)", names)
        # A track per worker process, named by its benchmark, process number and CPU.
        for bid in ("spans/two_phases", "spans/scoped", "spans/threads"):
            for j in (1, 2):
                self.assertTrue(any(n.startswith(f"{bid} #{j}/2 pid ") and "(cpu " in n
                                    for n in names), (bid, j, names))
        # A track per thread of the threaded body, with its CPUs.
        threads = {(e["pid"], e["args"]["name"].split(" (")[0]) for e in events
                   if e["name"] == "thread_name"}
        self.assertEqual(len({n for _, n in threads}), 2, threads)
        slices = collections.Counter(e["name"] for e in events if e["ph"] == "X")
        for name in ("warm-up", "planning", "clock calibration", "analysis", "light", "heavy",
                     "outer", "inner", "step", "re-warm-up"):
            self.assertGreater(slices[name], 0, (name, slices))
        self.assertGreater(sum(n for k, n in slices.items() if k.startswith("wait: ")), 0)
        # The followers' spans are on their own track.
        self.assertTrue(any(e["name"] == "step" and e["tid"] == 1 for e in events))
        # Each benchmark's estimate, with its interval.
        for bid, b in res.items():
            est = [e for e in events if e["ph"] == "i" and e["name"] == f"estimate {bid}"]
            self.assertEqual(len(est), 1, bid)
            med = b["estimates"]["median"]
            self.assertAlmostEqual(est[0]["args"]["median_ns"], med["point"],
                                   delta=1e-5 * med["point"])
            self.assertLessEqual(est[0]["args"]["lower_ns"], est[0]["args"]["upper_ns"])
        self.assertEqual(doc["otherData"]["coarsened"], 1)
        self.assertEqual(doc["otherData"]["max_bytes"], 5000000)

    def test_probe_metrics_are_counters(self):
        _, _, events, res = self.measure(TRACE, "--processes", "2", "--probe", "rusage",
                                         "^spans/two_phases$")
        counters = [e for e in events if e["ph"] == "C"]
        names = {e["name"] for e in counters}
        self.assertIn("voluntary_switches", names)
        n = len(res["spans/two_phases"]["samples"]["iterations"])
        self.assertEqual(sum(1 for e in counters if e["name"] == "voluntary_switches"), n)

    def test_in_process(self):
        _, _, events, res = self.measure(TRACE, "--in-process", "^spans/two_phases$")
        self.assert_samples_add_up(events, res)
        self.assertIn("spans", res["spans/two_phases"])

    def test_size_bound_coarsens(self):
        bound = 30000
        p, doc, events, res = self.measure(TRACE, "--processes", "2", "^spans/",
                                           env={"BENCH_TRACE_MAX_BYTES": str(bound)})
        self.assertGreater(doc["otherData"]["coarsened"], 1)
        self.assertEqual(doc["otherData"]["max_bytes"], bound)
        lines = [ln for ln in p.stderr.splitlines() if "coarsened" in ln]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("--trace", lines[0])
        # Merged samples keep their sums.
        owner = self.process_ids(events)
        iters = collections.Counter()
        for e in events:
            if e.get("cat") == "sample" and e["name"].startswith("measure sample"):
                iters[owner[e["pid"]]] += e["args"]["iterations"]
        for bid, b in res.items():
            self.assertEqual(iters[bid], sum(b["samples"]["iterations"]), bid)

    def test_reference_suite_run(self):
        if not BENCH:
            self.skipTest("E2E_BENCH is not set")
        _, doc, events, res = self.measure(BENCH, "--quick", "^scaling/activation/1000$",
                                           "^workload/decay_10k_memories$",
                                           "^harness/known_cost_chain_1000$")
        self.assertEqual(sorted(res), ["harness/known_cost_chain_1000", "scaling/activation/1000",
                                       "workload/decay_10k_memories"])
        self.assert_samples_add_up(events, res)
        self.assertEqual(doc["otherData"]["coarsened"], 1)


@unittest.skipIf(not TRACE, "E2E_TRACE is not set (ctest sets it)")
@unittest.skipIf(not shutil.which("protoc"), "protoc is not installed (Debian protobuf-compiler; "
                                            "scripts/setup_deps.sh test installs it)")
class PerfettoTest(TraceCase):
    """--trace FILE.pftrace: Perfetto's protobuf, decoded by protoc against
    tests/e2e/perfetto_trace.proto: the same samples as the results file, every slice begun
    and ended on its track, in time order."""

    def decode(self, path):
        with open(path, "rb") as f:
            p = e2e_helpers.run(["protoc", f"--proto_path={PROTO_DIR}", "--decode",
                                 "perfetto.protos.Trace", "perfetto_trace.proto"], timeout=60,
                                stdin=f, text=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        return parse_text_format(p.stdout.decode("utf-8"))["packet"]

    def test_decodes_and_adds_up(self):
        for suffix in (".pftrace", ".perfetto-trace"):
            d = self.temp_dir("trace-")
            trace, results = os.path.join(d, "t" + suffix), os.path.join(d, "r.json")
            p = run(TRACE, *ARGS, "--quick", "--processes", "2", "--probe", "rusage", "--trace",
                    trace, "--json", results, "^spans/(two_phases|threads)$")
            self.assert_exit(p, 0)
            packets = self.decode(trace)
            res = e2e_helpers.by_id(e2e_helpers.load_json(results))
            tracks, procs, last_ts = {}, {}, -1
            open_slices = collections.defaultdict(list)
            traced = collections.defaultdict(list)
            for pk in packets:
                self.assertEqual(pk["trusted_packet_sequence_id"], ["1"])
                if "track_descriptor" in pk:
                    td = pk["track_descriptor"][0]
                    uuid = td["uuid"][0]
                    self.assertNotIn(uuid, tracks, "a track described twice")
                    tracks[uuid] = td
                    if "process" in td:
                        procs[uuid] = td["process"][0]["process_name"][0]
                    continue
                ev = pk["track_event"][0]
                ts = int(pk["timestamp"][0])
                self.assertGreaterEqual(ts, last_ts, "events out of time order")
                last_ts = ts
                track = ev["track_uuid"][0]
                self.assertIn(track, tracks, "an event on a track not described before it")
                kind = ev["type"][0]
                if kind == "TYPE_SLICE_BEGIN":
                    open_slices[track].append(ev["name"][0])
                    if ev["name"][0] == "measure sample":
                        notes = {a["name"][0]: float(a["double_value"][0])
                                 for a in ev["debug_annotations"]}
                        owner = procs[tracks[track]["parent_uuid"][0]].split(" #")[0]
                        traced[owner].append((notes["iterations"], notes["total_ns"]))
                elif kind == "TYPE_SLICE_END":
                    self.assertTrue(open_slices[track], f"an end with no begin on {track}")
                    open_slices[track].pop()
                elif kind == "TYPE_COUNTER":
                    self.assertIn("counter", tracks[track])
                    float(ev["double_counter_value"][0])
            self.assertEqual({k: v for k, v in open_slices.items() if v}, {})
            self.assertIn("bench (manager)", procs.values())
            for bid, b in res.items():
                saved = sorted(zip(b["samples"]["iterations"], b["samples"]["totals_ns"]))
                self.assertEqual(sorted(traced[bid]), saved, bid)
            self.assertTrue(any("spans of thread 1" in t.get("name", [""])[0]
                                for t in tracks.values()))


@unittest.skipIf(not TRACE, "E2E_TRACE is not set (ctest sets it)")
class SpansTest(TraceCase):
    def test_known_shares(self):
        _, _, _, res = self.measure(TRACE, "--processes", "3", "^spans/two_phases$")
        spans = {s["name"]: s for s in res["spans/two_phases"]["spans"]}
        light, heavy = spans["light"]["share"], spans["heavy"]["share"]
        print(f"\nmeasured shares: light {100 * light:.2f}%, heavy {100 * heavy:.2f}%")
        # A sanitizer slows the code between the spans too (seen: heavy 72.2%).
        delta = 0.06 if e2e_helpers.SANITIZED else 0.02
        self.assertAlmostEqual(light, 0.25, delta=delta)
        self.assertAlmostEqual(heavy, 0.75, delta=delta)
        self.assertEqual(spans["light"]["count"], spans["heavy"]["count"])

    def test_pretty_line(self):
        d = self.temp_dir("trace-")
        p = run(TRACE, *ARGS, "--quick", "--trace", os.path.join(d, "t.json"),
                "^spans/two_phases$")
        self.assert_exit(p, 0)
        line = [ln for ln in p.stdout.splitlines() if "spans:" in ln]
        self.assertEqual(len(line), 1, p.stdout)
        self.assertRegex(line[0], r"spans: light \d+\.\d% \(.*\), heavy \d+\.\d% \(.*\) of the "
                                  r"time per iteration")

    def test_off_without_trace(self):
        d = self.temp_dir("trace-")
        out = os.path.join(d, "r.json")
        p = run(TRACE, *ARGS, "--quick", "--json", out, "^spans/two_phases$")
        self.assert_exit(p, 0)
        self.assertNotIn("spans", e2e_helpers.load_json(out)["benchmarks"][0])
        self.assertNotIn("spans:", p.stdout)

    def test_unbalanced_spans_fail_naming_the_span(self):
        p, _, _, res = self.measure(TRACE, "--quick", "^unbalanced/", code=3)
        want = {"unbalanced/end_without_begin": "span 'orphan' ended but not begun",
                "unbalanced/begin_without_end": "span 'forgotten' begun but not ended",
                "unbalanced/misnested": "span 'first' ended inside span 'second'"}
        for bid, text in want.items():
            self.assertEqual(res[bid]["status"], "failed")
            self.assertIn(text, res[bid]["message"])
            self.assertNotIn("\n", res[bid]["message"])
            self.assertEqual(sum(1 for ln in p.stderr.splitlines() if text in ln), 1, p.stderr)


@unittest.skipIf(not TRACE, "E2E_TRACE is not set (ctest sets it)")
class FaultTest(TraceCase):
    def test_crashed_worker_is_marked(self):
        _, _, events, res = self.measure(TRACE, "--processes", "2", "^crash/later$", code=3)
        self.assertEqual(res["crash/later"]["status"], "failed")
        ends = [e for e in events if e["ph"] == "i" and e["name"].startswith("end: ")]
        self.assertTrue(ends)
        # A sanitizer's own SIGSEGV handler ends the process with its exit code instead.
        how = "exited with code 1" if e2e_helpers.SANITIZED else "signal 11"
        crashed = [e for e in ends if how in e["name"]]
        self.assertEqual(len(crashed), 1, ends)
        pid = crashed[0]["pid"]
        mine = [e for e in events if e["pid"] == pid and e["ph"] == "X"]
        self.assertTrue(any(e.get("cat") == "sample" for e in mine), "no sample before the crash")
        whole = [e for e in mine if e["name"].startswith("process ")]
        self.assertEqual(len(whole), 1)
        self.assertIn(how, whole[0]["args"]["end"])

    def test_full_disk(self):
        """A file-size limit (SIGXFSZ ignored: the write fails with EFBIG, as on a full disk)
        that the results file fits under and the trace does not."""
        # At most 20 samples: the results file then takes 5.2-5.6 KB, the trace 15.7 KB (2
        # samples) to 25.5 KB. The limit was 40000 with up to 100 samples, and at load 13 a
        # run of 12 samples wrote a trace that fitted.
        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (12000, 12000))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

        d = self.temp_dir("trace-")
        trace, results = os.path.join(d, "t.json"), os.path.join(d, "r.json")
        p = e2e_helpers.run([TRACE, *ARGS, "--quick", "--sample-size", "20", "--trace", trace,
                             "--json", results, "^spans/two_phases$"], timeout=250,
                            preexec_fn=limit,
                            env=e2e_helpers.environ(unset=["BENCH_HISTORY"]))
        self.assert_exit(p, 2)
        lines = [ln for ln in p.stderr.splitlines() if trace in ln]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("File too large", lines[0])
        self.assertEqual(e2e_helpers.load_json(results)["benchmarks"][0]["status"], "ok")
        self.assertEqual(sorted(os.listdir(d)), ["r.json"])  # no partial trace left

    def test_ab_pairs_are_slices(self):
        d = self.temp_dir("trace-")
        trace = os.path.join(d, "t.json")
        t0 = time.monotonic()
        p = run(TRACE, "--ab", TRACE, "--ab-time", "1", "--trace", trace, "^spans/two_phases$")
        wall = time.monotonic() - t0
        self.assertIn(p.returncode, (0, 1), p.stderr)
        events = self.check_format(strict_load(trace), wall)
        pairs = [e for e in events if e["ph"] == "X" and e["pid"] == 1
                 and e["name"].startswith("A/B pair ")]
        self.assertGreater(len(pairs), 0)
        self.assertEqual(pairs[0]["name"], "A/B pair 1: spans/two_phases")

    def test_refused_where_nothing_is_measured(self):
        d = self.temp_dir("trace-")
        for extra in (["--list"], ["--profile-time", "0.1"]):
            p = run(TRACE, "--trace", os.path.join(d, "t.json"), *extra)
            self.assert_exit(p, 2)
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
            self.assertIn("--trace", p.stderr)
        self.assertEqual(os.listdir(d), [])

    def test_unwritable_file(self):
        d = self.temp_dir("trace-")
        results = os.path.join(d, "r.json")
        for bad in (os.path.join(d, "missing", "t.json"), d):
            p = run(TRACE, *ARGS, "--quick", "--trace", bad, "--json", results,
                    "^spans/two_phases$")
            self.assert_exit(p, 2)
            lines = [ln for ln in p.stderr.splitlines() if bad in ln]
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertIn("--trace", lines[0])
            res = e2e_helpers.load_json(results)
            self.assertEqual(res["benchmarks"][0]["status"], "ok")
            os.unlink(results)
        self.assertFalse(os.path.exists(os.path.join(d, "missing")))


@unittest.skipIf(not BENCH, "E2E_BENCH is not set (ctest sets it)")
@unittest.skipIf(not os.path.exists(SPEEDSCOPE),
                 f"speedscope is not installed at {SPEEDSCOPE} (scripts/setup_deps.sh test "
                 "installs it from npm)")
class SpeedscopeTest(html_test.BrowserTest, TraceCase):
    """The Chrome JSON of a reference-suite run, opened in speedscope in headless Chromium.

    speedscope takes a file through its #localProfilePath= hash parameter, as its own command
    line does: a script at that path, added to the page as <script src="file://...">, calls
    speedscope.loadFileFromBase64(name, data). That works from file:// with no server. Its other
    way in, #profileURL=, fetches the file; from a file:// page that fetch never completes in
    headless Chromium (seen: --dump-dom still waiting after 30 s, nothing on the console). A file
    speedscope cannot read makes it call alert(), which also holds a headless Chromium until it
    is killed: the script first puts the browser probe of the HTML report tests in place (script
    errors, console.error and alert recorded on <html>). wl_profile's trace of one workload pass
    (E2E_WL_PROFILE) is opened too."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.trace = os.path.join(cls.tmp, "reference-suite.json")
        p = run(BENCH, *ARGS, "--quick", "--trace", cls.trace,
                "^(harness/known_cost_chain_1000|scaling/(activation|similarity)/1000)$")
        if p.returncode != 0:
            raise RuntimeError(f"the traced run failed: {p.stderr}")

    def view(self, path):
        """Opens the trace at path in speedscope; returns (the page's title, its text, the errors
        the probe recorded, whether the probe ran)."""
        with open(path, "rb") as f:
            data = base64.b64encode(f.read()).decode("ascii")
        loader = os.path.join(self.temp_dir("speedscope-"), "load.js")
        with open(loader, "w", encoding="utf-8") as f:
            f.write(html_test.PROBE_JS)
            f.write("document.documentElement.setAttribute('data-probe-loaded', '1');\n")
            f.write(f"speedscope.loadFileFromBase64({json.dumps(os.path.basename(path))}, "
                    f"{json.dumps(data)});\n")
        dom = html_test.Dom(self.chromium("--virtual-time-budget=10000", "--dump-dom",
                                          f"file://{SPEEDSCOPE}#localProfilePath={loader}"))
        root = dom.root_attrs() or {}
        title = re.search(r"<title>(.*?)</title>", dom.raw, re.S)
        return (title.group(1) if title else "", " ".join(dom.texts),
                json.loads(root.get("data-probe-errors", "null") or "null"),
                root.get("data-probe-loaded") == "1")

    def assert_shown(self, path, processes):
        """speedscope shows the trace at path: its name as the title, each process's name as a
        profile, no script error, alert or error page."""
        title, text, errors, loaded = self.view(path)
        self.assertTrue(loaded, f"speedscope did not run the loader of {path}")
        self.assertEqual(errors, [], f"{path}: errors in speedscope")
        self.assertNotIn("Something went wrong", text)
        self.assertEqual(title.strip(), f"{os.path.basename(path)} - speedscope")
        for name in processes:
            self.assertIn(name, text, f"{path}: no profile for {name!r} in speedscope")

    def process_names(self, path):
        return [e["args"]["name"] for e in strict_load(path)["traceEvents"]
                if e["ph"] == "M" and e["name"] == "process_name"]

    def test_reference_suite_trace_loads(self):
        names = self.process_names(self.trace)
        self.assertIn("bench (manager)", names)
        for bid in ("harness/known_cost_chain_1000", "scaling/activation/1000",
                    "scaling/similarity/1000"):
            self.assertTrue(any(n.startswith(bid + " #") for n in names), (bid, names))
        self.assert_shown(self.trace, names)

    @unittest.skipIf(not WL_PROFILE, "E2E_WL_PROFILE is not set (ctest sets it)")
    def test_workload_pass_trace_loads(self):
        path = os.path.join(self.temp_dir("speedscope-"), "workload-pass.json")
        p = e2e_helpers.run([WL_PROFILE, "--similarity-queries", "64", "--trace", path],
                            timeout=120)
        self.assert_exit(p, 0)
        names = self.process_names(path)
        self.assertEqual(len(names), 1)
        self.assert_shown(path, names)

    def test_broken_trace_fails_the_check(self):
        """The check can fail: a trace cut short (speedscope: alert, "Unrecognized format") and
        one whose events lost their phases (no profile to show) are not shown."""
        names = self.process_names(self.trace)
        with open(self.trace, "rb") as f:
            raw = f.read()
        d = self.temp_dir("speedscope-")
        cut = os.path.join(d, "cut.json")
        with open(cut, "wb") as f:
            f.write(raw[:len(raw) // 2])
        doc = json.loads(raw)
        for e in doc["traceEvents"]:
            del e["ph"]
        phaseless = os.path.join(d, "phaseless.json")
        with open(phaseless, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        for bad in (cut, phaseless):
            with self.assertRaises(AssertionError, msg=bad):
                self.assert_shown(bad, names)


if __name__ == "__main__":
    unittest.main()

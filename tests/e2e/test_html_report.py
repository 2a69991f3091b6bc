#!/usr/bin/env python3
"""End-to-end test of the HTML report (scripts/html_report.py) and the flame graph
(scripts/flamegraph.py) in a real browser: headless Chromium.

The report is generated from real runs of the fixture program (E2E_FIXTURE: --quick runs of a few
fast benchmarks, a saved baseline and a run compared with it), and from a crafted results file
whose ids, messages and context hold markup and quotes. Each page is opened in Chromium with an
error collector injected first in its <head> (a copy of the page next to it, so its relative
links still work): window errors, unhandled rejections, console.error and alert() calls are
recorded into an attribute of <html>, and the DOM is read back with --dump-dom. The tests check
that no script failed, that the plots are there (SVG elements with known ids and classes, one
point per sample), that the pages' own scripts work (sorting, hover read-out, flame graph zoom),
and that hostile strings come out as text, never as elements. The run history's page
(--history): twelve real runs of two benchmarks into a history, one of them made twice as slow
from the seventh on, give one trend plot each with a point per run, and every change point the
analysis found drawn and labelled, the slowed one's at run 7 among them. Screenshots are saved under
E2E_ARTIFACTS (set by ctest to a folder of the build directory).

Skipped, saying so, only when no Chromium is installed (Debian package `chromium`; CI installs
it). Standard library only.
"""
import html
import html.parser
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

import e2e_helpers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HTML_REPORT = os.path.join(ROOT, "scripts", "html_report.py")
FLAMEGRAPH = os.path.join(ROOT, "scripts", "flamegraph.py")
FIXTURE = os.environ.get("E2E_FIXTURE", "")
ARTIFACTS = os.environ.get("E2E_ARTIFACTS", "")
FAST = ["--quick", "--warm-up-time", "0.02", "--measurement-time", "0.1", "--nresamples", "1000",
        "--color", "never", "--output-format", "csv"]
FILTER = "^(fix/a|fix/copy/(8|64|1024)|more/elements)$"


def find_chromium():
    for name in (os.environ.get("CHROMIUM", ""), "chromium", "chromium-browser",
                 "google-chrome", "google-chrome-stable"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


CHROMIUM = find_chromium()

PROBE_JS = """
(function () {
  var errs = [];
  var root = document.documentElement;
  function rec(m) {
    errs.push(String(m));
    root.setAttribute("data-probe-errors", JSON.stringify(errs));
  }
  root.setAttribute("data-probe-errors", "[]");
  window.addEventListener("error", function (e) {
    var t = e.target || {};
    rec("error: " + (e.message || t.src || t.data || t.href || "resource"));
  }, true);
  window.addEventListener("unhandledrejection", function (e) { rec("rejection: " + e.reason); });
  var ce = console.error;
  console.error = function () {
    rec("console.error: " + Array.prototype.join.call(arguments, " "));
    return ce.apply(console, arguments);
  };
  window.alert = function (m) { rec("alert: " + m); };
  window.addEventListener("load", function () {
    try { if (window.__probeActions) { window.__probeActions(); } }
    catch (e) { rec("probe action: " + e); }
    root.setAttribute("data-probe-loaded", "1");
  });
})();
"""


class Dom(html.parser.HTMLParser):
    """Elements of a dumped DOM: (tag, attrs dict), and the text under each id."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.elements = []
        self.stack = []
        self.text_by_id = {}
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag not in ("br", "meta", "img", "input", "link", "hr"):
            self.stack.append((tag, a.get("id")))
            if a.get("id"):
                self.text_by_id.setdefault(a["id"], "")

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        for _, ident in self.stack:
            if ident:
                self.text_by_id[ident] += data

    def find(self, tag=None, **attrs):
        out = []
        for t, a in self.elements:
            if tag and t != tag:
                continue
            ok = True
            for k, v in attrs.items():
                k = k.rstrip("_")
                if k == "cls":
                    if v not in (a.get("class") or "").split():
                        ok = False
                elif a.get(k) != v:
                    ok = False
            if ok:
                out.append(a)
        return out

    def root_attrs(self):
        for t, a in self.elements:
            if t in ("html", "svg"):
                return a
        return {}


def run(cmd, **kw):
    return e2e_helpers.run(cmd, timeout=120, **kw)


@unittest.skipIf(CHROMIUM is None, "Chromium is not installed (Debian: apt-get install chromium); "
                 "the browser tests need it")
class BrowserTest(unittest.TestCase):
    """Shared helpers: generating reports and opening pages in Chromium."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="html-report-test-")
        cls.profile = os.path.join(cls.tmp, "chromium-profile")
        cls.artifacts = ARTIFACTS or os.path.join(cls.tmp, "artifacts")
        os.makedirs(cls.artifacts, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def chromium(self, *args):
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--disable-extensions", f"--user-data-dir={self.profile}",
               *args]
        r = run(cmd)
        self.assertEqual(r.returncode, 0, f"chromium failed: {r.stderr[-2000:]}")
        return r.stdout

    def open_page(self, path, actions="", screenshot=None):
        """Opens a copy of page `path` with the probe injected; returns its dumped DOM."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        code = PROBE_JS
        if actions:
            code += f"window.__probeActions = function () {{ {actions} }};"
        if path.endswith(".svg"):
            # An SVG document: the probe goes in as an SVG script, first thing in <svg>.
            probe = f'<script type="text/ecmascript"><![CDATA[{code}]]></script>'
            text, n = re.subn(r"(<svg\b[^>]*>)", lambda m: m.group(1) + probe, text, count=1)
        else:
            probe = f"<script>{code}</script>"
            text, n = re.subn(r"<head>", lambda m: "<head>" + probe, text, count=1)
        self.assertEqual(n, 1, f"{path}: no place to inject the probe")
        probe_path = os.path.join(os.path.dirname(path), "_probe_" + os.path.basename(path))
        with open(probe_path, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            dom = self.chromium("--virtual-time-budget=5000", "--dump-dom",
                                "file://" + probe_path)
            d = Dom(dom)
            root = d.root_attrs()
            self.assertEqual(root.get("data-probe-loaded"), "1",
                             f"{path}: the page did not finish loading in the browser")
            errors = json.loads(root.get("data-probe-errors", "null"))
            self.assertEqual(errors, [], f"{path}: script errors in the browser")
            if screenshot:
                # The probed copy: were anything to call alert(), the probe stops it blocking.
                shot = os.path.join(self.artifacts, screenshot)
                self.chromium("--virtual-time-budget=5000", "--window-size=1000,2400",
                              "--hide-scrollbars", f"--screenshot={shot}", "file://" + probe_path)
                self.assertTrue(os.path.getsize(shot) > 0)
        finally:
            os.remove(probe_path)
        return d

    def html_report(self, results, out, *extra):
        r = run([sys.executable, HTML_REPORT, results, "--out", out, *extra])
        self.assertEqual(r.returncode, 0, r.stderr)
        return r


class ProbeSanityTest(BrowserTest):
    """The error collector must catch a failing script, else a clean result means nothing."""

    def test_detects_script_error(self):
        page = os.path.join(self.tmp, "broken.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write("<!DOCTYPE html><html><head><title>x</title></head><body>"
                    "<script>null.boom();</script></body></html>")
        with self.assertRaises(AssertionError) as cm:
            self.open_page(page)
        self.assertIn("script errors", str(cm.exception))

    def test_detects_alert(self):
        page = os.path.join(self.tmp, "alert.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write("<!DOCTYPE html><html><head><title>x</title></head><body>"
                    "<img src=x onerror=\"alert('xss')\"></body></html>")
        with self.assertRaises(AssertionError) as cm:
            self.open_page(page)
        self.assertIn("alert", str(cm.exception))


@unittest.skipIf(not FIXTURE, "E2E_FIXTURE is not set (ctest sets it)")
class FixtureReportTest(BrowserTest):
    """A report of real runs of the fixture program, with a saved baseline and a comparison."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bdir = os.path.join(cls.tmp, "baselines")
        for name in ("first", "second"):
            r = run([FIXTURE, *FAST, "--baseline-dir", cls.bdir, "--save-baseline", name,
                     FILTER])
            if r.returncode != 0:
                raise RuntimeError(f"saving baseline {name} failed: {r.stderr}")
        cls.results = os.path.join(cls.tmp, "results.json")
        r = run([FIXTURE, *FAST, "--baseline-dir", cls.bdir, "--baseline", "first",
                 "--json", cls.results, FILTER])
        if r.returncode != 0:
            raise RuntimeError(f"the compared run failed: {r.stderr}")
        with open(cls.results, encoding="utf-8") as f:
            cls.data = json.load(f)
        cls.flame = os.path.join(cls.tmp, "flame.svg")
        folded = os.path.join(cls.tmp, "stacks.folded")
        with open(folded, "w", encoding="utf-8") as f:
            f.write("main;run;wl_similarity_topk;dots_avx2 90\nmain;run;wl_graph_new 10\n")
        r = run([sys.executable, FLAMEGRAPH, folded, "-o", cls.flame])
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        cls.out = os.path.join(cls.tmp, "html")

    def setUp(self):
        self.html_report(self.results, self.out, "--baselines-dir", self.bdir, "--baseline",
                         os.path.join(self.bdir, "second.json"), "--flamegraph", self.flame)

    def page_of(self, bid):
        with open(os.path.join(self.out, "index.html"), encoding="utf-8") as f:
            index = f.read()
        m = re.search(r'<a href="(b-[^"]+\.html)">' + re.escape(bid) + "</a>", index)
        self.assertIsNotNone(m, f"index.html has no link to {bid}")
        return os.path.join(self.out, m.group(1))

    def test_index(self):
        actions = """
          var th = document.querySelectorAll('#summary thead th')[2];
          th.click();
          var ids = Array.prototype.map.call(document.querySelectorAll('#summary tbody tr'),
            function (r) { return r.cells[2].getAttribute('data-sort'); });
          document.documentElement.setAttribute('data-sorted', JSON.stringify(ids));"""
        d = self.open_page(os.path.join(self.out, "index.html"), actions, "index.png")
        ids = [b["id"] for b in self.data["benchmarks"]]
        self.assertEqual(len(ids), 5)
        self.assertEqual(len(d.find("table", id="summary")), 1)
        # The summary plot: one row per benchmark, each a link to an existing page.
        self.assertEqual(len(d.find("svg", id="plot-summary", cls="summary")), 1)
        rows = d.find("a", cls="row")
        self.assertEqual(len(rows), 5 + 4, "5 summary rows and 4 in group fix's plot")
        for a in rows:
            self.assertTrue(os.path.isfile(os.path.join(self.out, a["href"])), a["href"])
        # Group comparison: fix has 4 measured benchmarks (a plot), more only 1 (none).
        self.assertEqual(len(d.find("svg", cls="group")), 1)
        self.assertEqual(len(d.find("svg", id="plot-group-0")), 1)
        self.assertEqual(len(d.find("rect", cls="gbar")), 4)
        self.assertIn("fix/copy/1024", d.text_by_id["plot-group-0"])
        self.assertNotIn("more/elements", d.text_by_id["plot-group-0"])
        # The parameter plots of fix/copy: time and throughput, one point per parameter.
        self.assertEqual(len(d.find("svg", id="plot-param-time-0")), 1)
        self.assertEqual(len(d.find("svg", id="plot-param-thrpt-0")), 1)
        self.assertEqual(len(d.find("circle", cls="ppt")), 3 + 3)
        self.assertIn("fix/copy", d.text_by_id["plot-param-time-0"])
        # fix/copy's three parameters name no complexity class: none is drawn, and the plot
        # says no class fits (docs/measurement.md#complexity).
        (fit,) = [c for c in self.data["complexity"] if (c["group"], c["name"]) ==
                  ("fix", "copy")]
        self.assertIsNone(fit["class"])
        self.assertEqual(len(d.find("path", cls="fitted")), 0)
        with open(os.path.join(self.out, "index.html"), encoding="utf-8") as f:
            self.assertIn("No complexity class fits (3 parameters, fewer than 4)", f.read())
        # A class that is named is drawn on the time plot only: the same file, the class named.
        named = dict(self.data, complexity=[dict(c, **{"class": c["best"]})
                                            for c in self.data["complexity"]])
        path, out = os.path.join(self.tmp, "named.json"), os.path.join(self.tmp, "named")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(named, f)
        self.html_report(path, out)
        with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
            index = f.read()
        self.assertEqual(index.count('class="fitted"'), 1)
        self.assertIn(f"{fit['best']}: ", index)
        for bid in ids:
            self.assertIn(bid, d.text_by_id["summary"])
        sorted_medians = [float(x) for x in json.loads(d.root_attrs()["data-sorted"])]
        self.assertEqual(sorted_medians, sorted(sorted_medians), "sorting by median failed")
        self.assertEqual(len(d.find("object", id="flamegraph")), 1)
        self.assertIn("gcc", d.text_by_id["context"])

    def test_benchmark_page(self):
        b = next(x for x in self.data["benchmarks"] if x["id"] == "fix/copy/8")
        n = len(b["samples"]["iterations"])
        actions = """
          var c = document.querySelector('circle.pt');
          c.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
          var same = document.getElementById('readout').textContent === c.getAttribute('data-tip');
          document.documentElement.setAttribute('data-readout', same ? 'ok' : 'bad');"""
        d = self.open_page(self.page_of("fix/copy/8"), actions, "benchmark.png")
        for pid, cls in (("plot-kde", "kde"), ("plot-scatter", "scatter"),
                         ("plot-baseline", "overlay"), ("plot-history", "history")):
            self.assertEqual(len(d.find("svg", id=pid, cls=cls)), 1, f"no svg#{pid}.{cls}")
        self.assertEqual(len(d.find("circle", cls="pt")), n, "one scatter point per sample")
        self.assertEqual(len(d.find("line", cls="fit")), 1)
        self.assertEqual(len(d.find("path", cls="density")), 1 + 2)  # kde, current + baseline
        # History: the two saved baselines and this run.
        self.assertEqual(len(d.find("circle", cls="hpt")), 3)
        # Across worker processes: every sample once, one median per process.
        procs = b["samples"]["process"]
        self.assertGreaterEqual(b["processes"], 2)
        self.assertEqual(len(d.find("svg", id="plot-processes", cls="processes")), 1)
        self.assertEqual(len(d.find("circle", cls="spt")), n)
        self.assertEqual(len(d.find("line", cls="pmed")), len(set(procs)))
        # The parameter series this benchmark belongs to (fix/copy/8, 64, 1024).
        self.assertEqual(len(d.find("svg", id="plot-param-time")), 1)
        self.assertEqual(len(d.find("svg", id="plot-param-thrpt")), 1)
        self.assertEqual(len(d.find("circle", cls="ppt")), 3 + 3)
        self.assertEqual(d.root_attrs().get("data-readout"), "ok", "hover read-out failed")
        self.assertEqual(d.text_by_id["bench-id"], "fix/copy/8")
        # The fitted slope shown is the least-squares slope through the origin of the samples.
        xs, ys = b["samples"]["iterations"], b["samples"]["totals_ns"]
        slope = sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs)
        with open(self.page_of("fix/copy/8"), encoding="utf-8") as f:
            cap = f.read()
        shown = re.search(r"through the origin, ([0-9.]+) (ps|ns)", cap)
        self.assertIsNotNone(shown)
        scale = 1e-3 if shown.group(2) == "ps" else 1.0
        self.assertAlmostEqual(float(shown.group(1)) * scale / slope, 1.0, delta=1e-3)

    def test_flamegraph_zoom(self):
        shutil.copyfile(self.flame, os.path.join(self.tmp, "fg.svg"))
        actions = """
          var svg = document.documentElement;
          var g = Array.prototype.filter.call(document.querySelectorAll('g.frame'), function (x) {
            return x.querySelector('title').textContent.indexOf('wl_graph_new') === 0; })[0];
          g.dispatchEvent(new MouseEvent('click', {bubbles: true}));
          svg.setAttribute('data-zoom-w', g.querySelector('rect').getAttribute('width'));
          document.getElementById('reset').dispatchEvent(new MouseEvent('click', {bubbles: true}));
          svg.setAttribute('data-reset-w', g.querySelector('rect').getAttribute('width'));"""
        d = self.open_page(os.path.join(self.tmp, "fg.svg"), actions, "flamegraph.png")
        root = d.root_attrs()
        inner = float(root["data-inner-width"])
        self.assertAlmostEqual(float(root["data-zoom-w"]), inner, delta=0.5)
        self.assertAlmostEqual(float(root["data-reset-w"]), inner * 10 / 100, delta=0.5)
        titles = [t for t, _ in d.elements if t == "title"]
        self.assertEqual(len(titles), len(d.find("g", cls="frame")))


HOSTILE_IDS = [
    "<script>alert(1)</script>",
    'x" onmouseover="alert(2)" y="',
    "a'b&c</title><img src=x onerror=alert(3)>",
    "../../etc/passwd",
]


def hostile_results():
    def entry(bid, k):
        its = [10 * (i + 1) for i in range(12)]
        tot = [i * (100.0 + k) * (1 + 0.01 * (j % 3)) for j, i in enumerate(its)]
        return {
            "id": bid, "group": "<g>", "name": "n\"", "param": None, "status": "ok",
            "settings": {}, "sampling": "linear", "stop_reason": "<b>precision</b>",
            "unit": "ns", "samples": {"iterations": its, "totals_ns": tot},
            "estimates": {"median": {"point": 101.0 + k, "lower": 100.0 + k, "upper": 102.0 + k},
                          "slope": {"point": 101.0 + k, "lower": 100.0 + k, "upper": 102.0 + k}},
            "r2": 0.99, "throughput": {"bytes_per_iteration": 64},
            "change": {"verdict": "<i>regressed</i>", "baseline_median_ns": 90.0, "ratio": 1.12,
                       "ratio_lower": 1.05, "ratio_upper": 1.2, "p": 0.01, "p_adjusted": 0.02},
            "metrics": {"<svg onload=alert(4)>": {
                "unit": "\"><script>alert(5)</script>", "source": "alloc", "scaled": False,
                "totals": [1] * 12,
                "per_iteration": {"median": {"point": 1, "lower": 1, "upper": 1}}}},
            "facts": {"peak<b>heap</b>": {"value": 4096, "unit": "B"}},
        }
    return {
        "schema_version": 1, "harness_version": "0.1.0",
        "context": {"timestamp": "2026-01-01T00:00:00Z", "hostname": "<i>host</i>",
                    "compiler": "gcc </td><script>alert(6)</script>",
                    "warnings": ["<marquee>warn</marquee>"], "cpu": {"brand": "<u>cpu</u>"},
                    "statistics": {"confidence_level": 0.95}},
        "benchmarks": [entry(bid, k) for k, bid in enumerate(HOSTILE_IDS)] + [
            {"id": "fail/<script>x</script>", "group": "f", "name": "x", "param": None,
             "status": "failed", "message": "<img src=y onerror=alert(7)>"}],
    }


def history_available():
    r = run([FIXTURE, "--version"]) if FIXTURE else None
    return bool(r and "history: SQLite" in r.stdout)


@unittest.skipIf(not FIXTURE, "E2E_FIXTURE is not set (ctest sets it)")
class HistoryPageTest(BrowserTest):
    """The trend page of a run history with a known step."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not history_available():
            raise unittest.SkipTest("this build has no SQLite: no run history")
        cls.db = os.path.join(cls.tmp, "runs.db")
        env = e2e_helpers.environ({"XDG_CONFIG_HOME": os.path.join(cls.tmp, "config")},
                                  unset=["BENCH_HISTORY"])
        for i in range(12):
            slow = {"E2E_SLOWDOWN_PERCENT": "100"} if i >= 6 else {}
            r = run([FIXTURE, "--warm-up-time", "0.01", "--measurement-time", "0.05",
                     "--nresamples", "100", "--processes", "2", "--exact", "cmp/chain",
                     "cmp/steady", "--history", cls.db, "--history-programs", "0"],
                    env={**env, **slow})
            if r.returncode != 0:
                raise RuntimeError(f"run {i + 1} failed: {r.stderr}")
        cls.series = os.path.join(cls.tmp, "series.json")
        r = run([FIXTURE, "--history-show", cls.db, "--json", cls.series], env=env)
        if r.returncode != 0:
            raise RuntimeError(f"--history-show failed: {r.stderr}")
        cls.out = os.path.join(cls.tmp, "history-html")

    def test_trend_page(self):
        r = run([sys.executable, HTML_REPORT, "--history", self.series, "--out", self.out])
        self.assertEqual(r.returncode, 0, r.stderr)
        d = self.open_page(os.path.join(self.out, "history.html"), screenshot="history.png")
        with open(self.series, encoding="utf-8") as f:
            series = json.load(f)["series"]
        self.assertEqual([s["id"] for s in series], ["cmp/chain", "cmp/steady"])
        for k in range(2):
            self.assertEqual(len(d.find("svg", id=f"plot-trend-{k}")), 1)
        self.assertEqual(len(d.find("circle", cls="tpt")), 2 * 12, "a point per run")
        # The page draws every change point the analysis found, each labelled where it is; the
        # doubling of cmp/chain from the seventh run is one of them (on a busy machine the
        # analysis may also find a small one on cmp/steady: then that is drawn too).
        found = [len(s["change_points"]) for s in series]
        self.assertEqual(len(d.find("line", cls="cp")), sum(found))
        self.assertRegex(d.text_by_id["plot-trend-0"],
                         r"\+\d+\.\d\d% \[\+\d+\.\d\d%, \+\d+\.\d\d%\] at run 7")
        for k, s in enumerate(series):
            text = d.text_by_id[f"plot-trend-{k}"]
            self.assertEqual(text.count(" at run "), 2 * found[k], "a title and a label each")
            for cp in s["change_points"]:
                self.assertIn(f" at run {cp['run']}", text)

    def test_linked_from_the_index_and_bad_series_refused(self):
        results = os.path.join(self.tmp, "r.json")
        r = run([FIXTURE, "--warm-up-time", "0.01", "--measurement-time", "0.05", "--exact",
                 "cmp/steady", "--json", results, "--output-format", "csv"])
        self.assertEqual(r.returncode, 0, r.stderr)
        out = os.path.join(self.tmp, "both")
        r = run([sys.executable, HTML_REPORT, results, "--history", self.series, "--out", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        d = self.open_page(os.path.join(out, "index.html"))
        (link,) = d.find("a", id="history-link")
        self.assertEqual(link["href"], "history.html")
        self.assertTrue(os.path.isfile(os.path.join(out, "history.html")))
        bad = os.path.join(self.tmp, "bad.json")
        with open(bad, "w", encoding="utf-8") as f:
            json.dump({"format": "harness-history-series", "version": 1,
                       "series": [{"id": "x", "runs": [1, 2], "revisions": ["a"],
                                   "median_ns": [1, 2], "change_points": []}]}, f)
        r = run([sys.executable, HTML_REPORT, "--history", bad, "--out", out])
        self.assertEqual(r.returncode, 2)
        self.assertIn("a series is malformed", r.stderr)
        r = run([sys.executable, HTML_REPORT, "--history", results, "--out", out])
        self.assertEqual(r.returncode, 2)
        self.assertIn("not the series of a run history", r.stderr)


class HostileReportTest(BrowserTest):
    """Ids, messages and context with markup must come out as text."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.results = os.path.join(cls.tmp, "hostile.json")
        with open(cls.results, "w", encoding="utf-8") as f:
            json.dump(hostile_results(), f)
        cls.bdir = os.path.join(cls.tmp, "hbaselines")
        os.makedirs(cls.bdir)
        old = hostile_results()
        old["context"]["timestamp"] = "2025-01-01T00:00:00Z"
        with open(os.path.join(cls.bdir, "<old>.json"), "w", encoding="utf-8") as f:
            json.dump(old, f)
        cls.out = os.path.join(cls.tmp, "hostile-html")

    def setUp(self):
        self.html_report(self.results, self.out, "--baselines-dir", self.bdir,
                         "--title", "<script>alert(8)</script>")

    def assert_inert(self, d, expected_scripts):
        self.assertEqual(d.find("img"), [], "an <img> from the data became an element")
        self.assertEqual(d.find("marquee"), [])
        self.assertEqual(d.find("i"), [])
        self.assertEqual(d.find("u"), [])
        for tag, attrs in d.elements:
            for k in attrs:
                self.assertFalse(k.startswith("on"), f"<{tag}> got an event attribute {k}")
        self.assertEqual(len(d.find("script")), expected_scripts, "unexpected <script> elements")

    def test_pages_are_inert(self):
        files = sorted(os.listdir(self.out))
        for fn in files:
            self.assertRegex(fn, r"^(index\.html|b-[A-Za-z0-9._-]+\.html)$")
        d = self.open_page(os.path.join(self.out, "index.html"), screenshot="hostile-index.png")
        self.assert_inert(d, 2)  # the probe and the page's own script
        self.assertEqual(d.text_by_id["report-title"], "<script>alert(8)</script>")
        for bid in HOSTILE_IDS:
            self.assertIn(bid, d.text_by_id["summary"])
        self.assertIn("<i>host</i>", d.text_by_id["context"])
        self.assertIn("gcc </td><script>alert(6)</script>", d.text_by_id["context"])
        pages = [fn for fn in files if fn.startswith("b-")]
        self.assertEqual(len(pages), len(HOSTILE_IDS) + 1)
        for k, fn in enumerate(pages):
            d = self.open_page(os.path.join(self.out, fn),
                               screenshot="hostile-benchmark.png" if k == 0 else None)
            self.assert_inert(d, 2)
            self.assertIn(d.text_by_id["bench-id"], HOSTILE_IDS + ["fail/<script>x</script>"])
            if d.text_by_id["bench-id"] in HOSTILE_IDS:
                self.assertEqual(len(d.find("svg", id="plot-kde")), 1)
                self.assertEqual(len(d.find("svg", id="plot-history")), 1)
                self.assertEqual(len(d.find("table", id="metrics")), 1)
                self.assertIn("<svg onload=alert(4)>", d.text_by_id["metrics"])
                self.assertIn("peak<b>heap</b>", d.text_by_id["facts"])


@unittest.skipIf(not FIXTURE, "E2E_FIXTURE is not set (ctest sets it)")
class WordingTest(unittest.TestCase):
    """The pages' words and tick labels, read from the HTML itself (no browser needed): the
    samples line names worker processes as processes and rounds of one process as rounds, and
    every tick of a throughput axis is a rate ("1 GB/s", never "1 GB")."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="html-report-words-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def report(self, name, *args):
        """Runs the fixture with args, writes the report; returns (results, the out dir)."""
        results = os.path.join(self.tmp, f"{name}.json")
        r = run([FIXTURE, *FAST, "--json", results, *args, "^fix/copy/(8|64|1024)$"])
        self.assertEqual(r.returncode, 0, r.stderr)
        out = os.path.join(self.tmp, name)
        r = run([sys.executable, HTML_REPORT, results, "--out", out,
                 "--baselines-dir", os.path.join(self.tmp, "none")])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(results, encoding="utf-8") as f:
            return json.load(f), out

    def samples_row(self, out, bid):
        with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
            index = f.read()
        m = re.search(r'<a href="(b-[^"]+\.html)">' + re.escape(bid) + "</a>", index)
        self.assertIsNotNone(m, f"index.html has no link to {bid}")
        with open(os.path.join(out, m.group(1)), encoding="utf-8") as f:
            page = f.read()
        row = re.search(r"<tr><th>samples</th><td>([^<]*)</td></tr>", page)
        self.assertIsNotNone(row, f"{bid}: no samples row")
        return html.unescape(row.group(1)), page

    def test_worker_processes_are_called_processes(self):
        data, out = self.report("workers")
        b = next(x for x in data["benchmarks"] if x["id"] == "fix/copy/8")
        self.assertGreaterEqual(b["processes"], 2)
        row, _ = self.samples_row(out, "fix/copy/8")
        n = len(b["samples"]["iterations"])
        self.assertTrue(row.startswith(f"{n} in {b['processes']} processes, "), row)
        self.assertNotIn("round", row)

    def test_rounds_of_one_process_are_called_rounds(self):
        data, out = self.report("rounds", "--in-process", "--rounds", "2")
        b = next(x for x in data["benchmarks"] if x["id"] == "fix/copy/8")
        self.assertEqual(b["processes"], 0)
        row, _ = self.samples_row(out, "fix/copy/8")
        if b["rounds"] > 1:
            self.assertIn(f" in {b['rounds']} rounds, ", row)
        self.assertNotIn("process", row)

    def test_throughput_ticks_are_rates(self):
        _, out = self.report("ticks")
        _, page = self.samples_row(out, "fix/copy/8")
        svg = re.search(r'<svg id="plot-param-thrpt".*?</svg>', page, re.S)
        self.assertIsNotNone(svg, "no throughput plot against the parameter")
        ticks = [html.unescape(t) for t in
                 re.findall(r'<text class="tl"[^>]*text-anchor="end">([^<]*)</text>', svg.group(0))]
        self.assertGreater(len(ticks), 0, "the throughput axis has no tick labels")
        for t in ticks:
            self.assertRegex(t, r"^[0-9.e+-]+ [KMGT]?B/s$", f"tick {t!r} is not a rate")


    def test_speed_groups_are_said(self):
        """A result whose processes fell into two speed groups (JSON `modes`) and whose spread
        the CPUs explain (`spread_cause`) says both under its process plot."""
        data, _ = self.report("modes-src")
        b = next(x for x in data["benchmarks"] if x["id"] == "fix/copy/8")
        b["modes"] = [{"processes": 6, "median_ns": 712.4}, {"processes": 4, "median_ns": 1281.0}]
        b["spread_cause"] = {"kind": "cpu", "cpu_fast": 0, "cpu_slow": 1, "ratio": 1.12}
        results = os.path.join(self.tmp, "modes.json")
        with open(results, "w", encoding="utf-8") as f:
            json.dump(data, f)
        out = os.path.join(self.tmp, "modes")
        r = run([sys.executable, HTML_REPORT, results, "--out", out,
                 "--baselines-dir", os.path.join(self.tmp, "none")])
        self.assertEqual(r.returncode, 0, r.stderr)
        _, page = self.samples_row(out, "fix/copy/8")
        text = html.unescape(page)
        self.assertIn("Two speed groups: 6 processes at 712.4 ns, 4 at 1.281 µs", text)
        self.assertIn("Processes on CPU 1 were 12.0% slower than on CPU 0", text)


class BadInputTest(unittest.TestCase):
    """Bad input: exit 2 with one line naming the file."""

    def test_missing_and_invalid(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w", encoding="utf-8") as f:
                f.write('{"benchmarks": [{"status": "ok"}]}')
            for path, what in ((os.path.join(tmp, "none.json"), "No such file"),
                               (bad, "benchmarks[0]: no 'id' string")):
                r = run([sys.executable, HTML_REPORT, path, "--out", os.path.join(tmp, "o")])
                self.assertEqual(r.returncode, 2)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(what, r.stderr)
                self.assertIn(path, r.stderr)


if __name__ == "__main__":
    unittest.main()

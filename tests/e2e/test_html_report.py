#!/usr/bin/env python3
"""End-to-end test of the HTML report (scripts/tools/bench_report.py) and the flame graph
(scripts/flamegraph.py) in a real browser: headless Chromium.

The report is generated from real runs of the fixture program (E2E_FIXTURE: --quick runs of a few
fast benchmarks, a saved baseline and a run compared with it), and from a crafted results file
whose ids, messages and context hold markup and quotes. Each page is opened in Chromium with an
error collector injected first in its <head> (a copy of the page next to it, so its relative
links still work): window errors, unhandled rejections, console.error and alert() calls are
recorded into an attribute of <html>, and the DOM is read back as --dump-dom gives it (one
Chromium for the whole file, driven through its DevTools pipe: each page in a browser context of
its own, read after its load and 5 s of its virtual time, as --virtual-time-budget=5000 reads it).
The tests check that no script failed, that the plots are there (SVG elements with known ids
and classes, one point per sample), that the pages' own scripts work (sorting, hover read-out,
flame graph zoom), and that hostile strings come out as text, never as elements. The run
history's page (--history): twelve real runs of two benchmarks into a history, one of them made
twice as slow from the seventh on, give one trend plot each with a point per run, and every change
point the analysis found drawn and labelled, the slowed one's at run 7 among them; a drift of 1%
per run gives its trend line, a vertex a run. Screenshots are saved under E2E_ARTIFACTS (set by
ctest to a folder of the build directory).

Hostile and malformed files are generated from docs/results.schema.json itself (every field it
has, optional ones too): an XSS payload naming its field in every string field and map key, and
in a history series, must stay text in the browser (the page title unchanged, no element or event
attribute from the data); every field replaced by each wrong type must give exit 2 with one line
naming the file and a JSON path, never a traceback, with the earlier report folder left as it
was (jsonschema, when installed, says which replacements are wrong). The output folder is
replaced whole, kept on a failure, and never written through a symbolic link.

Skipped, saying so, only when no Chromium is installed (Debian package `chromium`; CI installs
it). Standard library only.
"""
import ast
import atexit
import base64
import contextlib
import copy
import fcntl
import html
import html.parser
import io
import json
import os
import re
import select
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import e2e_helpers

# The saves and comparisons here check what a run does, not how well the drift canaries read the
# machine: the canaries keep every step on 3 repetitions and the 64 MiB floor (0.5-8 s a run
# less; docs/comparison.md, "Drift canaries").
os.environ.setdefault("BENCH_CANARY_QUICK", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HTML_REPORT = os.path.join(ROOT, "scripts", "tools", "bench_report.py")
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
        self.texts = []
        self.raw = text
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
        self.texts.append(data)
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


class Browser:
    """One headless Chromium driven through its DevTools pipe (--remote-debugging-pipe: it reads
    commands on fd 3 and writes answers and events on fd 4, each a JSON text ending in a NUL).
    dump() opens a page as `chromium --headless --dump-dom --virtual-time-budget=5000` would, in
    a browser context of its own (nothing kept from one page to the next), without starting a
    browser for it: a start costs 2 s of a page's 2.3 s."""

    def __init__(self, profile):
        to_browser, self.w = os.pipe()
        self.r, from_browser = os.pipe()
        # Moved above 4 first, so that the shell that puts them at 3 and 4 never overwrites one
        # with the other.
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser, from_browser)]
        os.close(to_browser)
        os.close(from_browser)
        self.log = tempfile.TemporaryFile()
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}",
               "--hide-scrollbars", "--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(["bash", "-c", f'exec "$0" "$@" 3<&{ends[0]} 4>&{ends[1]}',
                                      *cmd], pass_fds=ends, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log)
        for fd in ends:
            os.close(fd)
        self.buf, self.last, self.events = b"", 0, []

    def _message(self, timeout):
        while b"\0" not in self.buf:
            if not select.select([self.r], [], [], timeout)[0]:
                raise TimeoutError(f"Chromium said nothing for {timeout} s")
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                self.log.seek(0)
                raise RuntimeError("Chromium closed its pipe: "
                                   f"{self.log.read().decode(errors='replace')[-2000:]}")
            self.buf += chunk
        text, self.buf = self.buf.split(b"\0", 1)
        return json.loads(text)

    def send(self, method, params=None, session=None, timeout=60):
        """The result of one command (of the page of session, else of the browser)."""
        self.last += 1
        msg = {"id": self.last, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        while True:
            got = self._message(timeout)
            if got.get("id") == self.last:
                if "error" in got:
                    raise RuntimeError(f"Chromium: {method}: {got['error']}")
                return got["result"]
            self.events.append(got)

    def event(self, method, session, timeout):
        """Waits for the page's event method: True when it came within timeout seconds."""
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method and e.get("sessionId") == session:
                    del self.events[i]
                    return True
            try:
                self.events.append(self._message(timeout))
            except TimeoutError:
                return False

    def dump(self, url, screenshot=None):
        """The DOM of the page at url as --dump-dom prints it, after its load and 5 s of its
        virtual time; with a PNG of a 1000x2400 window at screenshot (--window-size), else in
        headless Chromium's 800x600 one."""
        ctx = self.send("Target.createBrowserContext")["browserContextId"]
        target = self.send("Target.createTarget", {"url": "about:blank",
                                                   "browserContextId": ctx})["targetId"]
        try:
            s = self.send("Target.attachToTarget", {"targetId": target,
                                                    "flatten": True})["sessionId"]
            self.send("Page.enable", session=s)
            width, height = (1000, 2400) if screenshot else (800, 600)
            self.send("Emulation.setDeviceMetricsOverride", {
                "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                session=s)
            self.send("Page.navigate", {"url": url}, session=s)
            # A page that never finishes loading is read as it is (the probe then says so).
            self.event("Page.loadEventFired", s, 60)
            self.send("Emulation.setVirtualTimePolicy", {
                "policy": "pauseIfNetworkFetchesPending", "budget": 5000}, session=s)
            self.event("Emulation.virtualTimeBudgetExpired", s, 60)
            got = self.send("Runtime.evaluate", {
                "expression": "document.documentElement ? document.documentElement.outerHTML "
                              ": ''", "returnByValue": True}, session=s)
            if screenshot:
                png = self.send("Page.captureScreenshot", {"format": "png"}, session=s)
                with open(screenshot, "wb") as f:
                    f.write(base64.b64decode(png["data"]))
            return got["result"].get("value", "")
        finally:
            self.send("Target.closeTarget", {"targetId": target})
            self.send("Target.disposeBrowserContext", {"browserContextId": ctx})
            self.events = []

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.w)
        os.close(self.r)
        self.log.close()


_BROWSER = []  # the file's Browser: started by the first page a test opens, closed at exit


def browser():
    if not _BROWSER:
        profile = tempfile.mkdtemp(prefix="html-report-chromium-")
        _BROWSER.append(Browser(profile))
        atexit.register(shutil.rmtree, profile, True)
        atexit.register(_BROWSER[0].close)  # first: atexit runs the last registered first
    return _BROWSER[0]


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
            # The screenshot is taken of the probed copy by the same browser that dumps its DOM:
            # were anything to call alert(), the probe stops it blocking.
            shot = os.path.join(self.artifacts, screenshot) if screenshot else None
            if shot and os.path.exists(shot):
                os.remove(shot)  # one left by an earlier run must not pass for this one's
            dom = browser().dump("file://" + probe_path, shot)
            d = Dom(dom)
            root = d.root_attrs()
            self.assertEqual(root.get("data-probe-loaded"), "1",
                             f"{path}: the page did not finish loading in the browser")
            errors = json.loads(root.get("data-probe-errors", "null"))
            self.assertEqual(errors, [], f"{path}: script errors in the browser")
            if shot:
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
        # The program's build as its executable records it, and the library's on its own row.
        ctx, pb = self.data["context"], self.data["context"]["program_build"]
        compiler = pb["compiler"] or ctx["benchmark_builds"][0]["compiler"]
        self.assertIn(f"program build{compiler} {pb['flags'] or 'flags unknown'}",
                      d.text_by_id["context"])
        self.assertIn(f"harness library build{ctx['compiler']} {ctx['compiler_flags']}",
                      d.text_by_id["context"])

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


# Ids as the schema allows them (GROUP/NAME, one slash) holding markup and quotes.
HOSTILE_IDS = [
    "g/<img src=x onerror=alert(1)>",
    'g/x" onmouseover="alert(2)" y="',
    "a'b&c/<svg onload=alert(3)>",
    "../..",
]


def hostile_results():
    """A valid results file (every field the schema has) whose ids, messages, context, metric
    and fact names and units hold markup."""
    d = valid_results(plain_text)
    ok, failed = d["benchmarks"]

    def entry(bid, k):
        b = copy.deepcopy(ok)
        its = [10 * (i + 1) for i in range(12)]
        tot = [i * (100.0 + k) * (1 + 0.01 * (j % 3)) for j, i in enumerate(its)]
        metric = next(iter(ok["metrics"].values()))
        fact = next(iter(ok["facts"].values()))
        b.update({
            "id": bid, "group": "<g>", "name": "n\"", "param": None,
            "samples": {"iterations": its, "totals_ns": tot},
            "metrics": {"<svg onload=alert(4)>": dict(metric, unit="\"><script>alert(5)</script>",
                                                      totals=[1.0] * 12)},
            "facts": {"peak<b>heap</b>": dict(fact, value=4096)}})
        b.pop("args")
        b["estimates"].update({
            "median": {"point": 101.0 + k, "lower": 100.0 + k, "upper": 102.0 + k},
            "slope": {"point": 101.0 + k, "lower": 100.0 + k, "upper": 102.0 + k}})
        return b
    d["context"].update({"timestamp": "2026-01-01T00:00:00Z", "hostname": "<i>host</i>",
                         "compiler": "gcc </td><script>alert(6)</script>",
                         "warnings": ["<marquee>warn</marquee>"]})
    d["context"]["cpu"]["brand"] = "<u>cpu</u>"
    failed.update({"id": "fail/<script>x", "status": "failed",
                   "message": "<img src=y onerror=alert(7)>"})
    d["benchmarks"] = [entry(bid, k) for k, bid in enumerate(HOSTILE_IDS)] + [failed]
    d.pop("complexity")
    d["comparison"]["removed"] = []
    return d


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

    def test_trend_line_drawn(self):
        """A drift of 1% per run over 20 runs (its medians written into a history in the
        program's schema): --history-show finds the trend, and the page draws its line over the
        runs it was estimated on, one vertex a run, rising, titled with its slope."""
        db = os.path.join(self.tmp, "drift.db")
        env = e2e_helpers.environ({"XDG_CONFIG_HOME": os.path.join(self.tmp, "config")},
                                  unset=["BENCH_HISTORY"])
        r = run([FIXTURE, "--quick", "--processes", "2", "--exact", "fix/a", "--history", db,
                 "--history-programs", "0"], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with sqlite3.connect(db) as con:
            con.execute("DELETE FROM process_medians")
            con.execute("DELETE FROM results")
            con.execute("DELETE FROM runs")
            for i in range(20):
                con.execute("INSERT INTO runs (id, time, quick) VALUES (?, '2026-11-01T00:00:00Z',"
                            " 0)", (i + 1,))
                con.execute("INSERT INTO results (run_id, benchmark, status, median_ns, samples, "
                            "processes) VALUES (?, 'd/drift', 'ok', ?, 100, 10)",
                            (i + 1, 1000 * 1.01 ** i * (1 + 0.002 * (-1) ** i)))
        series = os.path.join(self.tmp, "drift.json")
        r = run([FIXTURE, "--history-show", db, "--json", series], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(series, encoding="utf-8") as f:
            trend = json.load(f)["series"][0]["trend"]
        self.assertEqual(trend["runs"], 20)
        out = os.path.join(self.tmp, "drift-html")
        r = run([sys.executable, HTML_REPORT, "--history", series, "--out", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        d = self.open_page(os.path.join(out, "history.html"), screenshot="history-trend.png")
        (line,) = d.find("polyline", cls="trendline")
        ys = [float(pt.split(",")[1]) for pt in line["points"].split()]
        self.assertEqual(len(ys), 20, "a vertex a run")
        self.assertTrue(all(b < a for a, b in zip(ys, ys[1:])), "rising: y grows downwards")
        self.assertIn(f"Trend: {100 * trend['per_run']:+.2f}% per run",
                      d.text_by_id["plot-trend-0"])

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


@unittest.skipIf(not FIXTURE, "E2E_FIXTURE is not set (ctest sets it)")
class TimelinePageTest(BrowserTest):
    """--trace TRACE.json: timeline.html, the run's processes against time (bench --trace of the
    same run), linked from the index; its names escaped; a file that is no trace refused."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.results = os.path.join(cls.tmp, "r.json")
        cls.trace = os.path.join(cls.tmp, "t.json")
        r = run([FIXTURE, *FAST, "--trace", cls.trace, "--json", cls.results, FILTER])
        if r.returncode != 0:
            raise RuntimeError(f"the traced run failed: {r.stderr}")

    def test_timeline_drawn_and_linked(self):
        out = os.path.join(self.tmp, "html")
        self.html_report(self.results, out, "--trace", self.trace)
        d = self.open_page(os.path.join(out, "index.html"))
        (link,) = d.find("a", id="timeline-link")
        self.assertEqual(link["href"], "timeline.html")
        d = self.open_page(os.path.join(out, "timeline.html"), screenshot="timeline.png")
        self.assertEqual(len(d.find("svg", id="plot-timeline")), 1)
        with open(self.results, encoding="utf-8") as f:
            res = json.load(f)
        measured = sum(len(b["samples"]["iterations"]) for b in res["benchmarks"]
                       if b["status"] == "ok")
        self.assertGreaterEqual(len(d.find("rect", cls="sample")), measured)
        lanes = d.find("rect", cls="lane")
        with open(self.trace, encoding="utf-8") as f:
            procs = [e for e in json.load(f)["traceEvents"] if e["name"] == "process_name"]
        self.assertEqual(len(lanes), len(procs))

    def test_hostile_names_inert_and_bad_trace_refused(self):
        hostile = os.path.join(self.tmp, "hostile.json")
        payload = "<img src=x onerror=alert(1)><script>alert(2)</script>"
        with open(hostile, "w", encoding="utf-8") as f:
            json.dump({"traceEvents": [
                {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": payload}},
                {"name": "process_name", "ph": "M", "pid": 2, "tid": 0,
                 "args": {"name": payload + " #1/1 pid 9"}},
                {"name": payload, "ph": "X", "pid": 2, "tid": 0, "ts": 1, "dur": 5,
                 "cat": "sample"}]}, f)
        out = os.path.join(self.tmp, "hostile-html")
        self.html_report(self.results, out, "--trace", hostile)
        self.open_page(os.path.join(out, "timeline.html"))  # fails on an alert or an error
        r = run([sys.executable, HTML_REPORT, self.results, "--trace", self.results, "--out",
                 out])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("not a trace of bench --trace", r.stderr)
        self.assertTrue(os.path.isfile(os.path.join(out, "timeline.html")))  # the old report


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
            self.assertIn(d.text_by_id["bench-id"], HOSTILE_IDS + ["fail/<script>x"])
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


# ---- hostile and malformed files, made from the schema ----
#
# A results file is generated from docs/results.schema.json itself: every property the schema
# knows, optional ones included, with a string from text(path) in every string field that can
# hold one (a pattern's field gets the text cut to fit, else an example of the pattern), a key
# from text(path) in every map (metrics, facts, args), and numbers that satisfy the bounds. A
# field the schema grows is in the next run's file without a change here.

SCHEMA_PATH = os.path.join(ROOT, "docs", "results.schema.json")
PATTERN_EXAMPLES = ["1.2.3", "2026-01-01T00:00:00Z", "sha256:" + "0" * 64, "prog",
                    "hmac-sha256:" + "0" * 64, "0123456789abcdef" * 4]


def load_schema():
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


def deref(s, root):
    while "$ref" in s:
        node = root
        for part in s["$ref"].lstrip("#/").split("/"):
            node = node[part]
        s = node
    return s


def number_for(s, k, integer):
    """A number inside s's bounds, a different one for each index k where the bounds allow."""
    cands = [1 + k, 2 + k, 0.5, 1, 0, 10, 100, -1]
    for v in cands:
        v = int(v) if integer else float(v) + (0.25 if k and not integer else 0)
        if ("minimum" in s and v < s["minimum"]) or ("maximum" in s and v > s["maximum"]) or \
                ("exclusiveMinimum" in s and v <= s["exclusiveMinimum"]) or \
                ("exclusiveMaximum" in s and v >= s["exclusiveMaximum"]):
            continue
        return v
    return s.get("minimum", 0)


def string_for(s, path, text):
    """text(path), or the nearest string to it that s's pattern and lengths allow."""
    t = text(path)
    cands = [t, t.replace("/", ""), "g/" + t.replace("/", "")] + PATTERN_EXAMPLES
    for c in cands:
        c = c[:s.get("maxLength", len(c))]
        if len(c) >= s.get("minLength", 0) and re.search(s.get("pattern", ""), c):
            return c
    raise AssertionError(f"{path}: no example for pattern {s.get('pattern')}")


def instance(s, root, path, text, k=0):
    """A valid value of schema s with every optional field present."""
    s = deref(s, root)
    if "const" in s:
        return s["const"]
    if "enum" in s:
        return s["enum"][0]
    if "oneOf" in s:
        return instance(s["oneOf"][0], root, path, text, k)
    t = s.get("type")
    if isinstance(t, list):
        t = "string" if "string" in t else next(x for x in t if x != "null")
    if t is None and "properties" in s:
        t = "object"
    if t == "object":
        out = {}
        for name, ps in s.get("properties", {}).items():
            out[name] = instance(ps, root, f"{path}.{name}", text, k)
        extra = s.get("additionalProperties")
        if isinstance(extra, dict):
            key = text(f"{path}[key]").replace("/", "")
            out[key] = instance(extra, root, f"{path}[key]", text, k)
        return out
    if t == "array":
        items = deref(s.get("items", {}), root)
        if "if" in items:  # benchmarks: one of each kind
            return [instance(items["then"], root, f"{path}[0]", text, 0),
                    instance(items["else"], root, f"{path}[1]", text, 1)]
        n = min(max(s.get("minItems", 0), 3), s.get("maxItems", 3))
        return [instance(items, root, f"{path}[{j}]", text, j) for j in range(n)]
    if t == "string":
        return string_for(s, path, text)
    if t in ("number", "integer"):
        return number_for(s, k, t == "integer")
    if t == "boolean":
        return True
    return None


def valid_results(text):
    """A results file with every field the schema has, strings from text(path)."""
    schema = load_schema()
    d = instance(schema, schema, "$", text)
    ids = [b["id"] for b in d["benchmarks"]]
    d["comparison"]["removed"] = [i + "x" for i in ids]
    return d


def plain_text(path):
    """text(path) for instance(): a harmless string that names its field."""
    return "t" + path


def inlined(schema):
    """schema with each $ref replaced by the definition it names (beside other keywords, in an
    allOf, which draft 2020-12 reads the same), so that jsonschema looks no reference up while it
    validates: a fifth less of its time over WrongTypeTest's two thousand documents, the same
    verdict on each. A schema whose definitions refer to themselves is returned as it is."""
    def walk(v, stack):
        if isinstance(v, list):
            return [walk(x, stack) for x in v]
        if not isinstance(v, dict):
            return v
        rest = {k: walk(x, stack) for k, x in v.items() if k not in ("$ref", "$defs")}
        if "$ref" not in v:
            return rest
        if v["$ref"] in stack:
            raise RecursionError(v["$ref"])
        body = walk(deref({"$ref": v["$ref"]}, schema), stack + (v["$ref"],))
        return dict(rest, allOf=[*rest.get("allOf", []), body]) if rest else body
    try:
        return walk(schema, ())
    except RecursionError:
        return schema


def schema_errors(doc, schema):
    """jsonschema's verdict on doc (an oracle independent of the tool), or None without it."""
    try:
        import jsonschema  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    key = id(schema)
    if key not in VALIDATORS:
        VALIDATORS[key] = (schema, jsonschema.Draft202012Validator(inlined(schema)))
    v = VALIDATORS[key][1]
    return [] if v.is_valid(doc) else [e.message for e in v.iter_errors(doc)]


VALIDATORS = {}  # id(schema): (the schema, kept alive, its validator)


PAYLOADS = [
    lambda p: f"<script>document.title='PWNED-{p}'</script>",
    lambda p: f"\"><img src=x onerror=\"document.title='PWNED-{p}'\">",
    lambda p: f"</title><script>document.title='PWNED-{p}'</script>",
    lambda p: f"'><svg onload=\"document.title='PWNED-{p}'\"></svg>",
]


def payload_text(kind):
    """text(path) for instance(): payload kinds in turn, each naming its field."""
    counter = [0]

    def text(path):
        counter[0] += 1
        return PAYLOADS[(counter[0] + kind) % len(PAYLOADS)](path)
    return text


def history_series(text):
    """A history series (docs/results-format.md, history series) with every field, strings from
    text(path): two benchmarks, three runs, a change point and a trend."""
    def one(k):
        at = f"$.series[{k}]"
        return {"id": text(f"{at}.id"), "runs": [1, 2, 3],
                "revisions": [text(f"{at}.revisions[{j}]") for j in range(3)],
                "programs": [text(f"{at}.programs[{j}]") for j in range(3)],
                "median_ns": [100.0, 110.0, 200.0],
                "change_points": [{"index": 2, "run": 3, "run_before": 2, "step": 0.8,
                                   "step_lower": 0.7, "step_upper": 0.9, "p_adjusted": 0.01}],
                "trend": {"per_run": 0.4, "lower": 0.3, "upper": 0.5, "p": 0.02, "runs": 3,
                          "start_ns": 100.0}}
    return {"format": "harness-history-series", "version": 1, "history": text("$.history"),
            "alpha": 0.05, "series": [one(0), one(1)]}


def import_report():
    sys.path.insert(0, os.path.dirname(HTML_REPORT))
    try:
        import bench_report  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    return bench_report


class PayloadReportTest(BrowserTest):
    """An XSS payload in every string field and map key of the schema (and of a history
    series): the pages load in Chromium with no payload run (title as given, no script error,
    no element or event attribute from the data) and the payload texts shown literally."""

    def assert_inert(self, path, title, scripts):
        """Opens path: no payload ran, no element from the data; returns its text."""
        d = self.open_page(path)
        self.assertEqual(d.find("img"), [], f"{path}: an <img> from the data became an element")
        for tag, attrs in d.elements:
            for k in attrs:
                self.assertFalse(k.startswith("on"), f"{path}: <{tag}> got an event attribute")
        self.assertEqual(len(d.find("script")), scripts, f"{path}: a <script> from the data")
        m = re.search(r"<title>(.*?)</title>", d.raw, re.S)
        self.assertEqual(html.unescape(m.group(1)), title, f"{path}: the page's title changed")
        return "".join(d.texts)

    def render(self, kind):
        results = valid_results(payload_text(kind))
        errors = schema_errors(results, load_schema())
        self.assertFalse(errors, f"the generated file is not valid: {errors}")
        series = history_series(payload_text(kind))
        paths = {}
        for name, doc in (("results", results), ("series", series)):
            paths[name] = os.path.join(self.tmp, f"payload-{kind}-{name}.json")
            with open(paths[name], "w", encoding="utf-8") as f:
                json.dump(doc, f)
        out = os.path.join(self.tmp, f"payload-{kind}")
        self.html_report(paths["results"], out, "--history", paths["series"], "--baseline",
                         paths["results"], "--baselines-dir", os.path.dirname(paths["results"]),
                         "--title", "report")
        return results, series, out

    def test_every_string_field(self):
        for kind in range(2):   # each field gets two of the four payloads
            results, series, out = self.render(kind)
            shown = ""
            names = {import_report().page_name(b["id"]): b["id"] for b in results["benchmarks"]}
            for fn in sorted(os.listdir(out)):
                if fn.endswith(".html"):
                    title = names.get(fn) or ("report: run history" if fn == "history.html"
                                              else "report")
                    shown += self.assert_inert(os.path.join(out, fn), title,
                                               1 if fn == "history.html" else 2)
            # What the pages show of the data, literally: ids, messages, the context, metric
            # and fact names and units, the history's ids and revisions.
            b0, b1 = results["benchmarks"]
            ctx = results["context"]
            for v in ([b0["id"], b1["id"], b1["message"], ctx["hostname"], ctx["kernel"],
                       ctx["git_revision"], ctx["warnings"][0], ctx["cpu"]["brand"],
                       ctx["cpu"]["features"]] +
                      [k for k in b0.get("metrics", {})] +
                      [m["unit"] for m in b0.get("metrics", {}).values()] +
                      [k for k in b0.get("facts", {})] +
                      [s["id"] for s in series["series"]] + series["series"][0]["revisions"]):
                self.assertIn(v, shown, f"{v!r} is not shown as text")

    def test_number_fields_hold_no_markup(self):
        """A script in fields the schema makes numbers (modes[].processes, spread_cause.cpu_slow
        and cpu_fast, processes): the tool refuses the file; drawn anyway by its page functions,
        the script stays text in the caption."""
        d = valid_results(plain_text)
        b = d["benchmarks"][0]
        pay = PAYLOADS[0]
        b["modes"] = [{"processes": pay("modes[0].processes"), "median_ns": 712.4},
                      {"processes": pay("modes[1].processes"), "median_ns": 1281.0}]
        b["spread_cause"] = {"kind": "cpu", "cpu_fast": pay("cpu_fast"),
                             "cpu_slow": pay("cpu_slow"), "ratio": 1.12}
        b["processes"] = pay("processes")
        results = os.path.join(self.tmp, "numbers.json")
        with open(results, "w", encoding="utf-8") as f:
            json.dump(d, f)
        out = os.path.join(self.tmp, "numbers")
        r = run([sys.executable, HTML_REPORT, results, "--out", out])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(f"{results}: $.benchmarks[0].", r.stderr)
        self.assertFalse(os.path.exists(out))
        mod = import_report()
        page = mod.bench_page(b, d["context"], 0.95, None, "", [], False)
        path = os.path.join(self.tmp, "numbers.html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
        text = self.assert_inert(path, b["id"], 2)
        for field in ("modes[0].processes", "modes[1].processes", "cpu_fast", "cpu_slow"):
            self.assertIn(pay(field), text)


def paths_of(v, at=()):
    """Every place in a JSON value: the keys and indexes that lead to it (arrays: their first
    item only, the others are alike)."""
    yield at
    if isinstance(v, dict):
        for k, item in v.items():
            yield from paths_of(item, at + (k,))
    elif isinstance(v, list) and v:
        yield from paths_of(v[0], at + (0,))


def replaced(doc, at, value):
    doc = copy.deepcopy(doc)
    node = doc
    for k in at[:-1]:
        node = node[k]
    node[at[-1]] = value
    return doc


@contextlib.contextmanager
def swapped(doc, at, value):
    """doc itself with the place at holding value while the block runs, as it was after: what
    replaced() gives, without copying the whole document for each of a thousand fields."""
    node = doc
    for k in at[:-1]:
        node = node[k]
    old = node[at[-1]]
    node[at[-1]] = value
    try:
        yield doc
    finally:
        node[at[-1]] = old


def rewrite(path, text):
    """Writes text (UTF-8) over the file at path in place, then cuts it to that length: what
    open(path, "w") leaves, without first truncating the file to nothing, which ext4 follows by
    flushing it (auto_da_alloc): 2 ms a file, 4 s of WrongTypeTest's two thousand."""
    data = text.encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        done = 0
        while done < len(data):
            done += os.write(fd, data[done:])
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def folder_state(path):
    """{name: bytes} of the files under path (symbolic links as their target's name)."""
    out = {}
    for dirpath, dirs, files in os.walk(path):
        for fn in files + [x for x in dirs if os.path.islink(os.path.join(dirpath, x))]:
            full = os.path.join(dirpath, fn)
            if os.path.islink(full):
                out[os.path.relpath(full, path)] = "-> " + os.readlink(full)
            else:
                with open(full, "rb") as f:
                    out[os.path.relpath(full, path)] = f.read()
    return out


class WrongTypeTest(unittest.TestCase):
    """Every field of a results file that has them all, replaced by each wrong type: exit 2 with
    one line naming the file and a JSON path, never a traceback, and the earlier report folder
    as it was. jsonschema is the oracle of what is wrong; the tool must agree with it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="html-report-types-")
        cls.doc = valid_results(plain_text)
        cls.schema = load_schema()
        if schema_errors(cls.doc, cls.schema) is None:
            raise unittest.SkipTest("python module jsonschema is not installed (Debian: "
                                    "python3-jsonschema): no oracle for the wrong types")
        cls.mod = import_report()
        cls.out = os.path.join(cls.tmp, "out")
        cls.good = os.path.join(cls.tmp, "good.json")
        with open(cls.good, "w", encoding="utf-8") as f:
            json.dump(cls.doc, f)
        r = run([sys.executable, HTML_REPORT, cls.good, "--out", cls.out])
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        cls.before = folder_state(cls.out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def main(self, *args):
        """Runs the tool's main() in this process with args: (exit status, stderr)."""
        err = io.StringIO()
        argv = sys.argv
        sys.argv = ["bench_report.py", *args]
        try:
            with contextlib.redirect_stderr(err):
                rc = self.mod.main()
        finally:
            sys.argv = argv
        return rc, err.getvalue()

    def report(self, doc, out):
        """Runs the tool's main() in this process on doc: (exit status, stderr, its file)."""
        path = os.path.join(self.tmp, "bad.json")
        # json.dumps, not json.dump: the same text, but dump encodes in Python (only dumps uses
        # the C encoder), a tenth of this test's time over its two thousand files.
        rewrite(path, json.dumps(doc))
        return (*self.main(path, "--out", out, "--baselines-dir", self.tmp), path)

    def test_every_field_every_wrong_type(self):
        wrong = ["text", 2.5, True, [1], {"k": 1}, None]
        checked = refused = 0
        for at in list(paths_of(self.doc))[1:]:
            for value in wrong:
                where = "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in at)
                with self.subTest(field=where, value=value), \
                        swapped(self.doc, at, value) as doc:
                    valid = VALIDATORS[id(self.schema)][1].is_valid(doc)
                    out = os.path.join(self.tmp, "scratch") if valid else self.out
                    rc, err, path = self.report(doc, out)
                    checked += 1
                    if valid:
                        self.assertEqual(rc, 0, err)
                        continue
                    refused += 1
                    self.assertEqual(rc, 2, err)
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertIn(f": {path}: $", err)
                    self.assertEqual(folder_state(self.out), self.before)
        self.assertGreater(refused, 500, f"{checked} files, {refused} refused")

    def test_named_fields_in_a_process(self):
        """The fields that crashed the tool, run as a program: exit 2 and one line."""
        b = ("benchmarks", 0)
        for at, value in (((*b, "estimates", "median", "lower"), "1"),
                          ((*b, "change", "verdict"), 3), ((*b, "modes"), "two"),
                          ((*b, "metrics"), [1]), (("benchmarks",), {}), ((*b, "samples"), None)):
            path = os.path.join(self.tmp, "named.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(replaced(self.doc, at, value), f)
            r = run([sys.executable, HTML_REPORT, path, "--out", self.out])
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertNotIn("Traceback", r.stderr)
            self.assertIn(f"{path}: $", r.stderr)
            self.assertEqual(folder_state(self.out), self.before)

    def test_history_series_fields(self):
        """The same for a history series (its data come from an SQLite file anyone can
        write): every field, every wrong type, against the tool's own series schema."""
        series = history_series(plain_text)
        for at in list(paths_of(series))[1:]:
            for value in ("text", 7, True, [1], {"k": 1}, None):
                doc = replaced(series, at, value)
                path = os.path.join(self.tmp, "series.json")
                rewrite(path, json.dumps(doc))
                rc, err = self.main("--history", path, "--out", self.out)
                with self.subTest(field=at, value=value):
                    self.assertIn(rc, (0, 2), err)
                    self.assertEqual(len(err.strip().splitlines()), 1)
                    if rc == 2:
                        self.assertEqual(folder_state(self.out), self.before)
                    else:  # a type the series allows: history.html replaced, the rest kept
                        # (the folder made again as it was, by the tool in this process)
                        rc, err = self.main(self.good, "--out", self.out)
                        self.assertEqual(rc, 0, err)


class OutputFolderTest(unittest.TestCase):
    """The report folder is written whole or not at all, never through a symbolic link."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="html-report-out-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.doc = valid_results(plain_text)
        self.results = os.path.join(self.tmp, "r.json")
        with open(self.results, "w", encoding="utf-8") as f:
            json.dump(self.doc, f)
        self.out = os.path.join(self.tmp, "html")

    def report(self, *extra):
        return run([sys.executable, HTML_REPORT, self.results, "--out", self.out,
                    "--baselines-dir", self.tmp, *extra])

    def test_replaces_its_pages_keeps_the_rest(self):
        """A folder of the report's own files is replaced whole (a stale page goes); in a folder
        with other files too, those and the folder itself stay, the report's files are
        replaced one by one."""
        r = self.report()
        self.assertEqual(r.returncode, 0, r.stderr)
        stale = os.path.join(self.out, "b-gone-00000000.html")
        with open(stale, "w", encoding="utf-8") as f:
            f.write("a page of a benchmark no longer there")
        inode = os.stat(self.out).st_ino
        r = self.report()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(stale))
        self.assertNotEqual(os.stat(self.out).st_ino, inode, "not replaced as a whole")
        with open(os.path.join(self.out, "notes.txt"), "w", encoding="utf-8") as f:
            f.write("mine")
        stale = os.path.join(self.out, "b-gone-00000000.html")
        with open(stale, "w", encoding="utf-8") as f:
            f.write("a page of a benchmark no longer there")
        os.symlink("/nonexistent", os.path.join(self.out, "link"))
        outside = os.path.join(self.tmp, "outside.html")
        with open(outside, "w", encoding="utf-8") as f:
            f.write("not the report's")
        os.remove(os.path.join(self.out, "index.html"))
        os.symlink(outside, os.path.join(self.out, "index.html"))
        inode = os.stat(self.out).st_ino
        r = self.report()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.stat(self.out).st_ino, inode, "a folder with other files moved")
        self.assertFalse(os.path.islink(os.path.join(self.out, "index.html")))
        with open(outside, encoding="utf-8") as f:
            self.assertEqual(f.read(), "not the report's", "written through a link")
        names = sorted(os.listdir(self.out))
        self.assertIn("notes.txt", names)
        self.assertEqual(os.readlink(os.path.join(self.out, "link")), "/nonexistent")
        self.assertNotIn(os.path.basename(stale), names)
        self.assertEqual(len([n for n in names if n.startswith("b-")]), 2)
        self.assertEqual([n for n in os.listdir(self.tmp) if n.startswith(".html.")], [],
                         "a temporary folder was left beside the report")

    def test_failure_leaves_the_old_folder(self):
        """A failure while the pages are made (here: the disk full when the index is made)
        leaves the earlier report as it was, and no temporary folder."""
        r = self.report()
        self.assertEqual(r.returncode, 0, r.stderr)
        before = folder_state(self.out)
        mod = import_report()

        def full(*_args, **_kw):
            raise OSError(28, "No space left on device", "index.html")
        real = mod.index_page
        mod.index_page = full
        argv = sys.argv
        sys.argv = ["bench_report.py", self.results, "--out", self.out, "--baselines-dir",
                    self.tmp]
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                rc = mod.main()
        finally:
            mod.index_page = real
            sys.argv = argv
        self.assertEqual(rc, 2, err.getvalue())
        self.assertIn("No space left on device", err.getvalue())
        self.assertEqual(folder_state(self.out), before)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["html", "r.json"])
        # The same with other files in the folder (pages replaced one by one there).
        with open(os.path.join(self.out, "notes.txt"), "w", encoding="utf-8") as f:
            f.write("mine")
        before = folder_state(self.out)
        mod.index_page = full
        sys.argv = ["bench_report.py", self.results, "--out", self.out, "--baselines-dir",
                    self.tmp]
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(mod.main(), 2)
        finally:
            mod.index_page = real
            sys.argv = argv
        self.assertEqual(folder_state(self.out), before)

    def test_never_through_a_symbolic_link(self):
        target = os.path.join(self.tmp, "elsewhere")
        os.mkdir(target)
        os.symlink(target, self.out)
        r = self.report()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("symbolic link", r.stderr)
        self.assertEqual(os.listdir(target), [])
        self.assertTrue(os.path.islink(self.out))

class BuilderTest(unittest.TestCase):
    """The one way markup is made (el): text and attribute values always escaped, whatever
    their type; only what el made passes through as markup."""

    def test_escapes_text_and_attributes(self):
        mod = import_report()
        bad = "\"'><script>x</script>&"
        out = mod.el("p", {"class": bad, "data-n": 3, "hidden": None}, bad, 7, [bad, None],
                     mod.el("b", None, "ok"))
        self.assertEqual(out, '<p class="&quot;&#x27;&gt;&lt;script&gt;x&lt;/script&gt;&amp;" '
                              'data-n="3">&quot;&#x27;&gt;&lt;script&gt;x&lt;/script&gt;&amp;7'
                              '&quot;&#x27;&gt;&lt;script&gt;x&lt;/script&gt;&amp;<b>ok</b></p>')
        self.assertEqual(mod.frag(bad, {"k": "<i>"}), html.escape(bad + str({"k": "<i>"})))
        for tag, attrs in (("p onload", None), ("p", {"x onload": 1}), ("p", {"x=\"": 1})):
            with self.assertRaises(ValueError):
                mod.el(tag, attrs)

    def test_no_markup_outside_the_builder(self):
        """No string of the tool but the builder's own (el, and page's doctype) holds a tag:
        docstrings and the style sheet and scripts aside, markup written by hand anywhere else,
        an f-string with a value in it included, fails here."""
        with open(HTML_REPORT, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        skip = set()
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                    isinstance(body[0].value, ast.Constant):
                skip.add(id(body[0].value))   # docstrings
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                skip.add(id(node.value))      # CSS, INDEX_JS, BENCH_JS
        owner = {}
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef):
                for sub in ast.walk(fn):
                    owner.setdefault(id(sub), fn.name)
        found = [(node.lineno, node.value[:40]) for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str) and
                 id(node) not in skip and owner.get(id(node)) not in ("el", "page") and
                 re.search(r"<[A-Za-z/!?]", node.value)]
        self.assertEqual(found, [], "markup written outside el()")


class BadInputTest(unittest.TestCase):
    """Bad input: exit 2 with one line naming the file."""

    def test_missing_and_invalid(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w", encoding="utf-8") as f:
                f.write('{"benchmarks": [{"status": "ok"}]}')
            for path, what in ((os.path.join(tmp, "none.json"), "No such file"),
                               (bad, "$: no 'schema_version'")):
                r = run([sys.executable, HTML_REPORT, path, "--out", os.path.join(tmp, "o")])
                self.assertEqual(r.returncode, 2)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(what, r.stderr)
                self.assertIn(path, r.stderr)


if __name__ == "__main__":
    unittest.main()

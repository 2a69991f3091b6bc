#!/usr/bin/env python3
"""End-to-end test of argument grids (.args, fixture_grid.c). A 3x2 grid (size x load) lists 6
ids in the grid's order, size=256/load=0.5 to size=4096/load=0.9, and its measured times follow
the work each combination does (size x load steps); string values, explicit tuples and a ranged
sweep (whose complexity fit says O(N)) run as written; filters select by an axis's value; the
results file carries each benchmark's values as numbers or strings (and passes the schema); a
baseline saved and compared matches the grid's ids; reading an axis that is not there, or a
string as an integer, fails that benchmark with a message naming the axis; a malformed grid
stops the program before anything runs, exit 2, naming the benchmark and its file. The HTML
report draws one plot per numeric axis with the other axes fixed (checked in Chromium).
"""
import json
import os
import re
import tempfile
import unittest

import e2e_helpers
import test_html_report as html_test

# The saves and comparisons here check what a run does, not how well the drift canaries read the
# machine: the canaries keep every step on 3 repetitions and the 64 MiB floor (0.5-8 s a run
# less; docs/comparison.md, "Drift canaries").
os.environ.setdefault("BENCH_CANARY_QUICK", "1")

GRID = os.environ.get("E2E_GRID", "")
GRID_BAD = os.environ.get("E2E_GRID_BAD", "")
ARGS = ["--processes", "2", "--nresamples", "1000", "--color", "never"]
SCHEMA = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "results.schema.json")
MAP_IDS = [f"grid/map/size={s}/load={lf}" for s in (256, 1024, 4096) for lf in ("0.5", "0.9")]


def run(prog, *args, cwd=None):
    return e2e_helpers.run([prog, *args], timeout=300, cwd=cwd,
                           env=e2e_helpers.environ(unset=["BENCH_HISTORY"]))


@unittest.skipIf(not GRID, "E2E_GRID is not set (ctest sets it)")
class GridTest(e2e_helpers.Case):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="grid-test-")
        cls.results = os.path.join(cls.tmp.name, "r.json")
        cls.proc = run(GRID, *ARGS, "--json", cls.results)
        with open(cls.results, encoding="utf-8") as f:
            cls.doc = json.load(f)
        cls.by_id = e2e_helpers.by_id(cls.doc)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_ids_in_grid_order(self):
        p = run(GRID, "--list")
        self.assert_exit(p, 0)
        ids = p.stdout.split()
        self.assertEqual([i for i in ids if i.startswith("grid/map/")], MAP_IDS)
        self.assertEqual([i for i in ids if i.startswith("grid/sweep/")],
                         [f"grid/sweep/n={n}" for n in (512, 1024, 2048, 4096, 8192)])
        self.assertEqual([i for i in ids if i.startswith("grid/tuples/")],
                         ["grid/tuples/n=100/m=2", "grid/tuples/n=300/m=1"])
        self.assertEqual([i for i in ids if i.startswith("grid/mode/")],
                         ["grid/mode/mode=short", "grid/mode/mode=long"])

    def test_values_reach_the_body(self):
        """Each combination's values reach its body: the steps it counts (bench_counter) are
        exactly size x load, the mode's and n x m, in every sample. (Times followed the steps
        too, but their ratios are the machine's to keep: at load 11 a 1.8x ratio read 1.17.)"""
        self.assert_exit(self.proc, 3)  # wrong_axis and not_a_number fail, the rest are measured
        want = {f"grid/map/size={s}/load={lf}": int(s * float(lf))
                for s in (256, 1024, 4096) for lf in ("0.5", "0.9")}
        want.update({"grid/mode/mode=short": 400, "grid/mode/mode=long": 4000,
                     "grid/tuples/n=100/m=2": 200, "grid/tuples/n=300/m=1": 300})
        for bid, steps in want.items():
            b = self.by_id[bid]
            self.assertEqual(b["status"], "ok", bid)
            m = b["metrics"]["steps"]
            self.assertEqual(m["source"], "counter", bid)
            iters = b["samples"]["iterations"]
            self.assertEqual(len(m["totals"]), len(iters), bid)
            for total, n in zip(m["totals"], iters):
                self.assertEqual(total, steps * n, bid)
            self.assertEqual(m["per_iteration"]["median"]["point"], steps, bid)

    def test_results_file_has_the_values(self):
        e2e_helpers.check_schema(self.doc, SCHEMA)
        b = self.by_id["grid/map/size=1024/load=0.9"]
        self.assertEqual(b["args"], {"size": 1024, "load": 0.9})
        self.assertEqual(list(b["args"]), ["size", "load"])  # the grid's order
        self.assertIsNone(b["param"])
        self.assertEqual(self.by_id["grid/mode/mode=long"]["args"], {"mode": "long"})
        self.assertEqual(self.by_id["grid/tuples/n=300/m=1"]["args"], {"n": 300, "m": 1})
        # A failed benchmark still says which combination it was.
        self.assertEqual(self.by_id["grid/not_a_number/kind=fast"]["args"], {"kind": "fast"})

    def test_wrong_reads_fail_named(self):
        b = self.by_id["grid/wrong_axis/n=1"]
        self.assertEqual(b["status"], "failed")
        self.assertIn("'size' is not an axis", b["message"])
        b = self.by_id["grid/not_a_number/kind=fast"]
        self.assertEqual(b["status"], "failed")
        self.assertIn("axis 'kind' is 'fast' here, not an integer", b["message"])
        self.assertIn("benchmark 'grid/wrong_axis/n=1' failed", self.proc.stderr)

    def test_complexity_along_each_axis(self):
        # The planted growth is linear (time = size x load steps); the fit's best class is a
        # timing, which a disturbed process can tip to the neighbouring O(N log N) (seen once
        # on an idle machine along size at load 0.9, three values): named classes must be
        # O(N), the best of an unnamed fit O(N) or its neighbour.
        linear = ("O(N)", "O(N log N)")
        (c,) = [c for c in self.doc["complexity"] if (c["group"], c["name"]) ==
                ("grid", "sweep")]
        self.assertEqual((c["axis"], c["fixed"], c["parameters"]), ("n", {}, 5))
        # Named, unless a busy machine's noise took its rms over the rule's 5% or the next
        # class near the best (test_growth).
        self.assertIn(c["class"], ("O(N)", None), c)
        if c["class"]:
            self.assertEqual(c["best"], "O(N)", c)
            self.assertRegex(self.proc.stdout, r"grid/sweep along n: complexity O\(N\), [\d.]+ "
                                               r"\S*s x f\(n\), rms [\d.]+% \(over 5 values; "
                                               r"next best ")
        else:
            self.assertIn(c["best"], linear, c)
            self.assertRegex(c["no_class"], r"^(rms [\d.]+%, above 5%|O\([^)]*\) fits nearly "
                                            r"as well \(rms [\d.]+%, under [\d.]+x\))$")
        # map: along size at each load (3 values each): fitted, but three values name no class
        # (docs/measurement.md#complexity); along load only 2 values, too few to fit.
        got = sorted((c["axis"], c["fixed"]["load"], c["class"], c["parameters"])
                     for c in self.doc["complexity"] if c["name"] == "map")
        self.assertEqual(got, [("size", 0.5, None, 3), ("size", 0.9, None, 3)])
        for c in self.doc["complexity"]:
            if c["name"] == "map":
                self.assertIn(c["best"], linear, c)
        for lf in ("0.5", "0.9"):
            self.assertRegex(self.proc.stdout, re.escape(
                f"grid/map along size (load={lf}): no complexity class fits (3 parameters, "
                "fewer than 4; best ") + r"O\(N( log N)?\), rms [\d.]+% over 3 values\)")
        # Strings and tuples of two instances have no growth.
        self.assertEqual({c["name"] for c in self.doc["complexity"]}, {"map", "sweep"})

    def test_filters_match_axis_values(self):
        p = run(GRID, "--list", "size=1024/")
        self.assertEqual(p.stdout.split(), MAP_IDS[2:4])
        p = run(GRID, "--list", "load=0.9$")
        self.assertEqual(p.stdout.split(), MAP_IDS[1::2])
        p = run(GRID, "--list", "--exact", "grid/map/size=256/load=0.5")
        self.assertEqual(p.stdout.split(), MAP_IDS[:1])

    def test_baseline_compares_by_grid_id(self):
        with tempfile.TemporaryDirectory() as d:
            sel = ["size=(256|4096)/load=0.5"]
            p = run(GRID, *ARGS, "--save-baseline", "before", *sel, cwd=d)
            self.assert_exit(p, 0)
            out = os.path.join(d, "after.json")
            p = run(GRID, *ARGS, "--baseline", "before", "--json", out, *sel, cwd=d)
            self.assert_exit(p, 0)
            with open(out, encoding="utf-8") as f:
                after = e2e_helpers.by_id(json.load(f))
        self.assertEqual(set(after), {MAP_IDS[0], MAP_IDS[4]})
        for b in after.values():
            self.assertIn("ratio", b["change"], b["id"])

    @unittest.skipIf(not GRID_BAD, "E2E_GRID_BAD is not set")
    def test_malformed_grid_stops_the_program(self):
        for args in ([], ["--list"]):
            p = run(GRID_BAD, *args)
            self.assert_exit(p, 2)
            self.assertEqual(p.stdout, "")
            lines = p.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertRegex(lines[0], r"benchmark 'bad/grid' \(.*fixture_grid_bad\.c:7\): "
                             r"\.args: axis 'size': range '1\.\.64' is not LO\.\.HI\*M")


# Run in the page: the y tick labels (text-anchor end) of every plot that start left of the
# plot or of the right edge of its rotated axis label, as "plot id: label"; then the ids of
# the summary table once sorted by its benchmark column.
OVERLAP_JS = """
var bad = [];
Array.prototype.forEach.call(document.querySelectorAll("svg.plot"), function (svg) {
  var box = svg.getBoundingClientRect();
  var axis = svg.querySelector("text.al[transform]");
  var edge = axis ? axis.getBoundingClientRect().right : box.left;
  Array.prototype.forEach.call(svg.querySelectorAll('text.tl[text-anchor="end"]'),
    function (t) {
      var r = t.getBoundingClientRect();
      if (t.textContent && (r.left < box.left || r.left < edge)) {
        bad.push(svg.id + ": " + t.textContent);
      }
    });
});
document.documentElement.setAttribute("data-overlaps", JSON.stringify(bad));
document.querySelectorAll("#summary thead th")[0].click();
var ids = Array.prototype.map.call(document.querySelectorAll("#summary tbody tr"),
  function (r) { return r.cells[0].textContent; });
document.documentElement.setAttribute("data-sorted", JSON.stringify(ids));
"""


@unittest.skipIf(not GRID, "E2E_GRID is not set (ctest sets it)")
@unittest.skipIf(html_test.CHROMIUM is None, "Chromium is not installed")
class GridReportTest(html_test.BrowserTest):
    def test_one_plot_per_axis_with_the_others_fixed(self):
        results = os.path.join(self.tmp, "grid.json")
        p = run(GRID, *ARGS, "--json", results, "grid/(map|sweep)")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = os.path.join(self.tmp, "html")
        self.html_report(results, out)
        d = self.open_page(os.path.join(out, "index.html"))
        with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
            index = f.read()
        titles = [h3 for h3 in re.findall(r'<h3 class="group-name">([^<]*)</h3>', index)
                  if ":" in h3]
        # 3x2 grid: along load at each of 3 sizes, along size at each of 2 loads; the sweep. In
        # this order on the page: the sizes as numbers (256 before 1024), not as text.
        self.assertEqual(titles, ["grid/map: load (size=256)", "grid/map: load (size=1024)",
                                  "grid/map: load (size=4096)", "grid/map: size (load=0.5)",
                                  "grid/map: size (load=0.9)", "grid/sweep: n"])
        # Every swept value is a tick label of its axis: both loads (0.5 and 0.9, one decade
        # apart at most, so decade ticks would label one), the three sizes, the sweep's five.
        for k, want in enumerate([["0.5", "0.9"]] * 3 + [["256", "1024", "4096"]] * 2 +
                                 [["512", "1024", "2048", "4096", "8192"]]):
            svg = re.search(rf'<svg id="plot-param-time-{k}".*?</svg>', index, re.S).group(0)
            ticks = re.findall(r'<text class="tl"[^>]*text-anchor="middle">([^<]*)</text>', svg)
            self.assertEqual(ticks, want, titles[k])
        # In the browser: no y tick label runs into the rotated axis label or off the plot
        # (a "2 Gelem/s" or "200 Melem/s" did, at a fixed 70 px margin).
        d = self.open_page(os.path.join(out, "index.html"), actions=OVERLAP_JS)
        self.assertEqual(json.loads(d.root_attrs().get("data-overlaps", "null")), [])
        # Sorted by benchmark, the table compares the numbers in the ids as numbers.
        self.assertEqual(json.loads(d.root_attrs().get("data-sorted", "null")),
                         [f"grid/map/size={s}/load={x}" for s in (256, 1024, 4096)
                          for x in ("0.5", "0.9")] +
                         [f"grid/sweep/n={n}" for n in (512, 1024, 2048, 4096, 8192)])
        times = [a for a in d.find("svg") if (a.get("id") or "").startswith("plot-param-time")]
        self.assertEqual(len(times), 6)
        # map declares elements (its throughput plots); the sweep does not.
        thrpts = [a for a in d.find("svg") if (a.get("id") or "").startswith("plot-param-thrpt")]
        self.assertEqual(len(thrpts), 5)
        # Points: 2 per load series (x3), 3 per size series (x2), 5 in the sweep; and again in
        # the throughput plots of map.
        self.assertEqual(len(d.find("circle", cls="ppt")), 2 * (3 * 2 + 2 * 3) + 5)
        # A benchmark's page: its two series, the other axis at its value.
        page = [f for f in os.listdir(out) if "size_1024_load_0.5" in f]
        self.assertEqual(len(page), 1)
        d = self.open_page(os.path.join(out, page[0]))
        self.assertEqual(len(d.find("svg", id="plot-param-time")), 1)
        self.assertEqual(len(d.find("svg", id="plot-param-time-1")), 1)
        # Along load: this size's two points; along size: this load's three.
        along_load, along_size = d.text_by_id["plot-param-time"], d.text_by_id["plot-param-time-1"]
        self.assertIn("load of grid/map", along_load)
        self.assertEqual(re.findall(r"grid/map/(\S+):", along_load),
                         ["size=1024/load=0.5", "size=1024/load=0.9"])
        self.assertIn("size of grid/map", along_size)
        self.assertEqual(re.findall(r"grid/map/(\S+):", along_size),
                         [f"size={s}/load=0.5" for s in (256, 1024, 4096)])
        # Along size (this load) three values name no class: none is drawn, the page says no
        # class fits; along load there is no fit at all.
        self.assertEqual(len(d.find("path", cls="fitted")), 0)
        with open(os.path.join(out, page[0]), encoding="utf-8") as f:
            self.assertEqual(f.read().count("No complexity class fits (3 parameters"), 1)
        # The sweep's fitted class is drawn on its plot.
        page = [f for f in os.listdir(out) if "sweep_n_1024" in f]
        d = self.open_page(os.path.join(out, page[0]))
        named = any(c["class"] for c in e2e_helpers.load_json(results)["complexity"]
                    if c["name"] == "sweep")
        self.assertEqual(len(d.find("path", cls="fitted")), 1 if named else 0)


if __name__ == "__main__":
    unittest.main()

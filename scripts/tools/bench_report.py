#!/usr/bin/env python3
"""Writes an HTML report of a results file: an index page and one page per benchmark with its
plots, as SVG generated here. Standard library only; the pages load nothing from the network
(no external script, style sheet, font or image), so they work from file:// offline.

Usage: scripts/tools/bench_report.py [RESULTS.json] [--history SERIES.json] [--baselines-dir DIR]
                                     [--baseline FILE] [--flamegraph SVG] [--out DIR] [--title TEXT]
(installed with the library as bench-report, with the same arguments)
  RESULTS.json     results of a run (`bench --json FILE`; docs/results-format.md)
  --history SERIES the series of a run history with their change points and trends
                   (`bench --history-show DB --json SERIES`): a page history.html with one trend
                   plot per benchmark (plot-trend-N), linked from the index when RESULTS.json is
                   given too; one of the two is needed
  --baselines-dir  saved baselines (default baselines): each benchmark's history across them
  --baseline FILE  a results or baseline file to overlay on the current samples
  --flamegraph SVG a flame graph (scripts/profile_hotspots.sh) to copy in and embed
  --out DIR        output directory (default reports/html); the pages it wrote before
                   (index.html, b-*.html, flamegraph.svg) are replaced
  --title TEXT     title of the index page
Exit: 0 ok, 2 unreadable or invalid input, or an output folder that cannot be written (one line
on stderr names the file, and the JSON path of the first problem).

Input is checked before anything is drawn: a results or baseline file against the published
schema (docs/results.schema.json, found beside this script in the source tree or, installed, at
INSTALLED_SCHEMA_DIR, which the build sets from CMAKE_INSTALL_DOCDIR; checked by a small validator
of the keywords it uses, so no package is needed), a history series against SERIES_SCHEMA below.
Baselines of --baselines-dir that fail the check are skipped with a warning. The pages are made
in a new folder beside --out, so a failure leaves the earlier report as it was; then that folder
replaces --out by rename, or, where --out holds files that are not the report's, the pages are
renamed into it one by one (publish()). An --out that is a symbolic link is refused, never written
through.

Each benchmark page has, when the data allow:
  - plot-kde: the distribution of per-iteration times (totals_ns / iterations) as a Gaussian
    kernel density estimate (Silverman's bandwidth), the samples as a rug, the median and its
    confidence interval;
  - plot-scatter: iterations against sample total time, with the least-squares line through
    the origin (slope = sum(x*y) / sum(x^2), as the harness fits it);
  - plot-baseline: the baseline's distribution over the current one (--baseline FILE), or the
    baseline's median against the current distribution when the results carry a comparison;
  - plot-history: the median and interval of this benchmark in every saved baseline of the
    directory that has it, ordered by the baseline's context.timestamp, with this run marked;
  - plot-processes: with worker processes (samples.process), each process's samples' time per
    iteration and its median, so a benchmark that depends on per-process luck shows it;
  - plot-param-time and plot-param-thrpt, for a benchmark with a numeric parameter: the series
    of its siblings (same group and name), time and throughput against the parameter, log axes;
    for a benchmark of an argument grid, a pair per numeric axis (suffixed -1, -2, ... after the
    first), its siblings with the other axes at this benchmark's values;
    the time plot also draws the complexity class (path.fitted) when the results name one for
    the series (the file's "complexity", its "class"; files without "class" draw "best"), and
    says no class fits where "class" is null.
The index page has plot-summary (every benchmark's median and interval on one log axis, each
row linking to its page), one plot-group-N per group of two or more measured benchmarks (bars
of their medians with intervals) and the parameter plots of every parameterised series.
  - the metrics and facts the probes recorded (counters, allocations), when present;
  - the flame graph, when one was given.
The history page (--history) has, per benchmark, its median in every run where it ran (x: the
runs in the order recorded, labelled with their ids), the segments between change points as
dashed lines at their geometric means, each change point as a vertical line (class cp) with its
step and interval, and the trend when one was found: its Theil-Sen line over the runs it was
estimated on (class trendline, one vertex per run), labelled with its slope and interval.
All markup is made by el() (see "markup" below): text and attribute values from the files are
escaped by construction, whatever their type, and nothing from a file is pasted into markup. File
names of pages are made from the id with unsafe characters replaced and a hash added, so any id
gives a safe, unique name.
"""
import argparse
import hashlib
import html
import json
import math
import os
import re
import shutil
import statistics
import sys
import tempfile

# The name this tool was run as: bench_report.py in the source tree, bench-report installed.
ME = os.path.basename(sys.argv[0]) or "bench_report.py"

# ---- markup: every piece of HTML and SVG on the pages is made here ----
#
# Text from the files never becomes markup by being pasted into it: el() escapes every child that
# is not already Markup and every attribute value, and Markup is made only by el(), frag() and
# the constants of this file (the style sheet and the scripts). A value of any type (a string
# where a number belongs, a list, a dict) comes out as its escaped text.

class Markup(str):
    """HTML made by el() or frag() (or a constant of this file): put into a page as it is."""
    __slots__ = ()


NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9:-]*")


def text_of(child):
    """The HTML of a child: Markup as it is, None and False as nothing, lists item by item,
    anything else as its text, escaped."""
    if child is None or child is False:
        return ""
    if isinstance(child, Markup):
        return child
    if isinstance(child, (list, tuple)):
        return "".join(text_of(c) for c in child)
    return html.escape(str(child), quote=True)


def el(tag, attrs=None, *children, void=False):
    """<tag attrs>children</tag> (void: no content, no end tag). Attribute values are escaped
    (None or False leaves the attribute out); names are this file's constants, checked."""
    if not NAME_RE.fullmatch(tag):
        raise ValueError(f"bad element name {tag!r}")
    out = ["<", tag]
    for k, v in (attrs or {}).items():
        if not NAME_RE.fullmatch(k):
            raise ValueError(f"bad attribute name {k!r}")
        if v is None or v is False:
            continue
        out.append(f' {k}="{html.escape(str(v), quote=True)}"')
    out.append(">")
    if void:
        return Markup("".join(out))
    out.append(text_of(children))
    out.append(f"</{tag}>")
    return Markup("".join(out))


def frag(*children):
    """Children side by side, escaped as el() escapes them."""
    return Markup(text_of(children))


def px(v):
    """A coordinate as the plots write it: one decimal."""
    return f"{v:.1f}"


# ---- formatting ----


def time_unit(ns):
    """(divisor, unit) for showing times of about this size."""
    a = abs(ns) if ns and math.isfinite(ns) else 0
    for div, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")):
        if a >= div:
            return div, unit
    return 1e-3, "ps"


def fmt_time(ns):
    if ns is None or not math.isfinite(ns):
        return "n/a"
    if ns == 0:
        return "0 ns"
    div, unit = time_unit(ns)
    return f"{ns / div:.4g} {unit}"


def fmt_rate(per_s, unit):
    for div, p in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if per_s >= div:
            return f"{per_s / div:.4g} {p}{unit}/s"
    return f"{per_s:.4g} {unit}/s"


def fmt_num(v):
    if v is None:
        return "n/a"
    if isinstance(v, (int, float)) and math.isfinite(v):
        return f"{v:.4g}"
    return str(v)


def page_name(bid):
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", bid)[:80]
    return f"b-{safe}-{hashlib.sha1(bid.encode('utf-8', 'replace')).hexdigest()[:8]}.html"


def nice_ticks(lo, hi, n=5):
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=10 * mag)
    start = math.ceil(lo / step) * step
    ticks, t = [], start
    while t <= hi + step * 1e-9 and len(ticks) < 50:
        ticks.append(round(t, 12))
        t += step
    return ticks


# ---- statistics on the samples ----


def per_iter(b):
    s = b.get("samples") or {}
    its, tot = s.get("iterations") or [], s.get("totals_ns") or []
    return [t / i for i, t in zip(its, tot) if isinstance(i, (int, float)) and i > 0
            and isinstance(t, (int, float)) and math.isfinite(t)]


def kde(xs, lo, hi, points=200):
    """Gaussian KDE on a grid; Silverman's rule of thumb for the bandwidth."""
    n = len(xs)
    sd = statistics.pstdev(xs) if n > 1 else 0.0
    q = sorted(xs)
    iqr = (q[(3 * n) // 4] - q[n // 4]) if n > 3 else 0.0
    spread = min(sd, iqr / 1.34) if iqr > 0 else sd
    h = 0.9 * spread * n ** -0.2 if spread > 0 else max(abs(q[n // 2]) * 1e-3, 1e-12)
    if n > 2000:   # bin first: the grid sum stays cheap for large sample counts
        bins = 1000
        width = (q[-1] - q[0]) / bins or 1.0
        counts = {}
        for x in xs:
            k = min(int((x - q[0]) / width), bins - 1)
            counts[k] = counts.get(k, 0) + 1
        centres = [(q[0] + (k + 0.5) * width, c) for k, c in counts.items()]
    else:
        centres = [(x, 1) for x in xs]
    grid = [lo + (hi - lo) * i / (points - 1) for i in range(points)]
    norm = 1.0 / (n * h * math.sqrt(2 * math.pi))
    ys = []
    for g in grid:
        s = 0.0
        for c, w in centres:
            z = (g - c) / h
            if z * z < 60:
                s += w * math.exp(-0.5 * z * z)
        ys.append(s * norm)
    return grid, ys, h


def ols_origin(xs, ys):
    sxx = sum(x * x for x in xs)
    return sum(x * y for x, y in zip(xs, ys)) / sxx if sxx > 0 else float("nan")


def median_of(b):
    est = ((b.get("estimates") or {}).get("median") or {})
    p = est.get("point")
    if isinstance(p, (int, float)):
        return p, est.get("lower"), est.get("upper")
    vals = per_iter(b)
    return (statistics.median(vals), None, None) if vals else (None, None, None)


# ---- SVG plots ----

W, H = 720, 300
ML, MR, MT, MB = 70, 20, 20, 50


def svg_figure(pid, cls, height, parts, caption):
    """A plot: <figure><svg id=pid class="plot cls">parts</svg><figcaption>caption</figcaption>."""
    return el("figure", None,
              el("svg", {"id": pid, "class": f"plot {cls}", "xmlns": "http://www.w3.org/2000/svg",
                         "width": W, "height": height, "viewBox": f"0 0 {W} {height}",
                         "role": "img"}, parts),
              el("figcaption", None, caption))


def titled(tag, attrs, tip):
    """An SVG element with a tooltip (<title>)."""
    return el(tag, attrs, el("title", None, tip))


def left_margin(labels):
    """The left margin that keeps the longest of these y tick labels (11 px sans-serif, at most
    about 7 px a character) clear of the rotated axis label at x = 8..20: ML or more."""
    return max(ML, 30 + 7 * max((len(t) for t in labels), default=0))


class Plot:
    def __init__(self, pid, cls, xlo, xhi, ylo, yhi, xlabel, ylabel, height=H, ml=ML):
        self.pid, self.cls = pid, cls
        self.h = height
        self.ml = ml
        self.xlo, self.xhi = xlo, xhi if xhi > xlo else xlo + 1
        self.ylo, self.yhi = ylo, yhi if yhi > ylo else ylo + 1
        self.xlabel, self.ylabel = xlabel, ylabel
        self.parts = []

    def x(self, v):
        return self.ml + (v - self.xlo) / (self.xhi - self.xlo) * (W - self.ml - MR)

    def y(self, v):
        return self.h - MB - (v - self.ylo) / (self.yhi - self.ylo) * (self.h - MT - MB)

    def axes(self, xfmt, yfmt, xticks=None, yticks=None):
        p = self.parts
        x0, y0, x1, y1 = self.ml, self.h - MB, W - MR, MT
        p.append(el("line", {"class": "axis", "x1": x0, "y1": y0, "x2": x1, "y2": y0}))
        p.append(el("line", {"class": "axis", "x1": x0, "y1": y0, "x2": x0, "y2": y1}))
        for t in (nice_ticks(self.xlo, self.xhi) if xticks is None else xticks):
            if self.xlo - 1e-12 <= t <= self.xhi + 1e-12:
                tx = px(self.x(t))
                p.append(el("line", {"class": "tick", "x1": tx, "y1": y0, "x2": tx,
                                     "y2": y0 + 4}))
                p.append(el("text", {"class": "tl", "x": tx, "y": y0 + 16,
                                     "text-anchor": "middle"}, xfmt(t)))
        for t in (nice_ticks(self.ylo, self.yhi) if yticks is None else yticks):
            if self.ylo - 1e-12 <= t <= self.yhi + 1e-12:
                py = self.y(t)
                p.append(el("line", {"class": "grid", "x1": x0, "y1": px(py), "x2": x1,
                                     "y2": px(py)}))
                p.append(el("text", {"class": "tl", "x": x0 - 6, "y": px(py + 4),
                                     "text-anchor": "end"}, yfmt(t)))
        p.append(el("text", {"class": "al", "x": (x0 + x1) / 2, "y": self.h - 12,
                             "text-anchor": "middle"}, self.xlabel))
        p.append(el("text", {"class": "al", "x": 14, "y": (y0 + y1) / 2, "text-anchor": "middle",
                             "transform": f"rotate(-90 14 {(y0 + y1) / 2})"}, self.ylabel))

    def svg(self, *caption):
        return svg_figure(self.pid, self.cls, self.h, self.parts, caption)


def path_of(plot, xs, ys, close=False):
    pts = " ".join(f"{plot.x(a):.1f},{plot.y(b):.1f}" for a, b in zip(xs, ys))
    if close:
        x0, x1, y0 = plot.x(xs[0]), plot.x(xs[-1]), plot.y(0)
        return f"M{x0:.1f},{y0:.1f} L{pts} L{x1:.1f},{y0:.1f} Z"
    return "M" + pts.replace(" ", " L")


def kde_plot(b, level):
    vals = per_iter(b)
    if len(vals) < 2:
        return ""
    med, lo, hi = median_of(b)
    vmin, vmax = min(vals), max(vals)
    pad = (vmax - vmin) * 0.08 or abs(vmin) * 0.05 or 1.0
    xlo, xhi = max(0.0, vmin - pad), vmax + pad
    gx, gy, h = kde(vals, xlo, xhi)
    div, unit = time_unit(med or vmax)
    p = Plot("plot-kde", "kde", xlo, xhi, 0, max(gy) * 1.1 or 1, f"time per iteration ({unit})",
             "density")
    p.axes(lambda t: f"{t / div:.4g}", lambda t: "")
    if lo is not None and hi is not None:
        tip = f"{level:.0%} CI of the median: [{fmt_time(lo)}, {fmt_time(hi)}]"
        p.parts.append(titled("rect", {"class": "ci", "x": px(p.x(lo)), "y": MT,
                                       "width": px(max(p.x(hi) - p.x(lo), 1)),
                                       "height": H - MT - MB}, tip))
    p.parts.append(el("path", {"class": "density", "d": path_of(p, gx, gy, close=True)}))
    for v in vals[:5000]:
        x = px(p.x(v))
        p.parts.append(el("line", {"class": "rug", "x1": x, "y1": H - MB, "x2": x,
                                   "y2": H - MB - 6}))
    if med is not None:
        x = px(p.x(med))
        p.parts.append(titled("line", {"class": "median", "x1": x, "y1": MT, "x2": x,
                                       "y2": H - MB}, "median " + fmt_time(med)))
    return p.svg(f"Distribution of the {len(vals)} samples' time per iteration: kernel density "
                 f"(bandwidth {fmt_time(h)}), samples as ticks, median (line) and its "
                 f"{level:.0%} confidence interval (band).")


def scatter_plot(b):
    s = b.get("samples") or {}
    its, tot = s.get("iterations") or [], s.get("totals_ns") or []
    pairs = [(i, t) for i, t in zip(its, tot) if isinstance(i, (int, float)) and i > 0
             and isinstance(t, (int, float)) and math.isfinite(t)]
    if len(pairs) < 2:
        return ""
    xs, ys = [a for a, _ in pairs], [c for _, c in pairs]
    slope = ols_origin(xs, ys)
    xmax, ymax = max(xs) * 1.05, max(max(ys), slope * max(xs) if math.isfinite(slope) else 0) * 1.05
    div, unit = time_unit(ymax)
    p = Plot("plot-scatter", "scatter", 0, xmax, 0, ymax, "iterations in the sample",
             f"sample total time ({unit})")
    p.axes(lambda t: f"{t:.4g}", lambda t: f"{t / div:.4g}")
    if math.isfinite(slope):
        tip = f"least squares through the origin: {fmt_time(slope)} per iteration"
        p.parts.append(titled("line", {"class": "fit", "x1": px(p.x(0)), "y1": px(p.y(0)),
                                       "x2": px(p.x(xmax)), "y2": px(p.y(slope * xmax))}, tip))
    for k, (a, c) in enumerate(pairs):
        tip = f"sample {k + 1}: {a:g} iterations, {fmt_time(c)} total, {fmt_time(c / a)} each"
        p.parts.append(titled("circle", {"class": "pt", "cx": px(p.x(a)), "cy": px(p.y(c)),
                                         "r": 3, "data-tip": tip}, tip))
    harness = ((b.get("estimates") or {}).get("slope") or {}).get("point")
    return frag(p.svg(f"Iterations against the sample's total time. Line: least squares through "
                      f"the origin, {fmt_time(slope)} per iteration (the harness reported "
                      f"{fmt_time(harness)})."),
                el("p", {"class": "readout", "id": "readout"}, "\u00a0"))


FLAME_H = 16  # px, one frame of the differential flame graph


def diff_tree(stacks):
    """The frames of --explain's folded stacks as a tree: per node, the samples of the old and
    the new program in which it was on the stack."""
    root = {"name": "all", "old": 0.0, "new": 0.0, "kids": {}}
    for st in stacks:
        frames = [f for f in st["frames"].split(";") if f]
        node = root
        for node_name in [None] + frames:
            if node_name is not None:
                node = node["kids"].setdefault(node_name, {"name": node_name, "old": 0.0,
                                                           "new": 0.0, "kids": {}})
            node["old"] += st["old"]
            node["new"] += st["new"]
    return root


def diff_flame(e):
    """--explain's differential flame graph: each box a function on the stack, its width the new
    program's share of samples with it there, its colour the change of that share since the old
    program (red: grew, blue: shrank, white: unchanged; the strongest colour is the largest
    change); hover for the numbers. None without stacks."""
    root = diff_tree(e.get("stacks") or [])
    if root["new"] <= 0 or root["old"] <= 0:
        return None
    boxes = []

    def walk(node, depth, x):
        w = (W - 20) * node["new"] / root["new"]
        if w < 0.5:
            return
        d = node["new"] / root["new"] - node["old"] / root["old"]
        boxes.append((depth, x, w, node, d))
        for name in sorted(node["kids"]):
            kid = node["kids"][name]
            walk(kid, depth + 1, x)
            x += (W - 20) * kid["new"] / root["new"]

    walk(root, 0, 10.0)
    top = max(b[0] for b in boxes)
    height = (top + 1) * FLAME_H + 10
    big = max([abs(b[4]) for b in boxes[1:]] + [0.01])
    parts = []
    for depth, x, w, node, d in boxes:
        t = max(-1.0, min(1.0, d / big))
        pale = int(255 * (1 - 0.7 * abs(t)))  # the labels stay readable on the strongest
        fill = f"rgb(255,{pale},{pale})" if t >= 0 else f"rgb({pale},{pale},255)"
        y = height - 5 - (depth + 1) * FLAME_H
        tip = (f"{node['name']}: {100 * node['new'] / root['new']:.2f}% of the new program's "
               f"samples, {100 * node['old'] / root['old']:.2f}% of the old's "
               f"({100 * d:+.2f} points)")
        label = node["name"] if len(node["name"]) * 6.6 + 6 <= w else (
            node["name"][:max(0, int((w - 6) / 6.6) - 2)] + ".." if w >= 26 else "")
        parts.append(el("g", {"class": "frame", "data-change": f"{d:.6f}",
                              "data-name": node["name"]},
                        el("title", None, tip),
                        el("rect", {"x": px(x), "y": y, "width": px(w), "height": FLAME_H - 1,
                                    "fill": fill, "stroke": "#fff", "stroke-width": 0.5},
                           void=False),
                        el("text", {"x": px(x + 3), "y": y + FLAME_H - 4,
                                    "class": "flame-label"}, label)))
    return svg_figure("explain-flame", "diff-flame", height, parts,
                      "Differential flame graph of the two profiles: width, the new program's "
                      "share of samples with the function on the stack; colour, the change of "
                      "that share since the old program (red grew, blue shrank).")


def explanation_section(b):
    """--explain's finding on a benchmark page: the functions its change went into, and the
    differential flame graph of the two profiles."""
    e = b.get("explanation")
    if not e:
        return []
    parts = [el("h2", None, "Why it changed (--explain)")]
    if not e["explained"]:
        return parts + [el("p", {"id": "explain-text"}, f"Not explained: {e['message']}")]
    time_mode = e.get("unit") == "ns"

    def amount(v):
        return ("+" if v >= 0 else "\u2212") + (fmt_time(abs(v)) if time_mode
                                                 else f"{abs(v):.0f} instructions")

    fns = e.get("functions") or []
    if fns:
        named = ", ".join(f"{f['name']} {amount(f['self_change'])}" for f in fns)
        text = f"{named} per iteration (self)"
        if isinstance(e.get("attributed"), (int, float)):
            text += f"; {100 * e['attributed']:.0f}% of the change attributed"
    else:
        text = "No function changed beyond noise."
    parts.append(el("p", {"id": "explain-text"}, text))
    if e["message"]:
        parts.append(el("p", {"class": "note"}, e["message"]))
    flame = diff_flame(e)
    if flame:
        parts.append(flame)
    return parts


def baseline_plot(b, base_entry, base_label):
    vals = per_iter(b)
    change = b.get("change")
    if len(vals) < 2 or (base_entry is None and not change):
        return ""
    bvals = per_iter(base_entry) if base_entry else []
    allv = vals + bvals
    bmed = change.get("baseline_median_ns") if change else None
    if bmed is not None and math.isfinite(bmed):
        allv = allv + [bmed]
    vmin, vmax = min(allv), max(allv)
    pad = (vmax - vmin) * 0.08 or abs(vmin) * 0.05 or 1.0
    xlo, xhi = max(0.0, vmin - pad), vmax + pad
    gx, gy, _ = kde(vals, xlo, xhi)
    by = kde(bvals, xlo, xhi)[1] if len(bvals) >= 2 else []
    div, unit = time_unit(statistics.median(vals))
    p = Plot("plot-baseline", "overlay", xlo, xhi, 0, max(gy + by) * 1.1 or 1,
             f"time per iteration ({unit})", "density")
    p.axes(lambda t: f"{t / div:.4g}", lambda t: "")
    if by:
        p.parts.append(titled("path", {"class": "density base",
                                       "d": path_of(p, gx, by, close=True)},
                              "baseline: " + base_label))
    p.parts.append(titled("path", {"class": "density", "d": path_of(p, gx, gy, close=True)},
                          "this run"))
    if bmed is not None and math.isfinite(bmed):
        x = px(p.x(bmed))
        p.parts.append(titled("line", {"class": "median base", "x1": x, "y1": MT, "x2": x,
                                       "y2": H - MB}, "baseline median " + fmt_time(bmed)))
    p.parts.append(el("text", {"class": "legend", "x": W - MR - 4, "y": MT + 12,
                               "text-anchor": "end"},
                      el("tspan", {"class": "cur"}, "\u25a0 this run"),
                      (" ", el("tspan", {"class": "bas"}, "\u25a0 " + base_label))
                      if by or bmed else None))
    cap = "Baseline against this run"
    if change and "ratio" not in change:  # a status: "new" (the baseline lacks it), "skipped"
        cap += f": {change.get('verdict', '')}"
    elif change:
        cap += (f": {change.get('verdict', '')}, ratio new/old "
                f"{fmt_num(change.get('ratio'))} [{fmt_num(change.get('ratio_lower'))}, "
                f"{fmt_num(change.get('ratio_upper'))}], p (adjusted) "
                f"{fmt_num(change.get('p_adjusted'))}")
    return p.svg(cap + ".")


def history_plot(bid, history, level):
    """history: [(label, timestamp, median, lower, upper, is_current)] sorted by timestamp."""
    if not any(not h[5] for h in history):
        return el("p", {"id": "history-none", "class": "note"},
                  "No saved baseline in the directory has this benchmark: no history.")
    meds = [h[2] for h in history]
    his = [h[4] if h[4] is not None else h[2] for h in history]
    los = [h[3] if h[3] is not None else h[2] for h in history]
    ymax, ymin = max(his) * 1.1, max(0.0, min(los) * 0.9)
    div, unit = time_unit(max(meds))
    n = len(history)
    p = Plot("plot-history", "history", -0.5, n - 0.5, ymin, ymax, "baseline, by timestamp",
             f"median per iteration ({unit})", height=H + 40)
    p.axes(lambda t: "", lambda t: f"{t / div:.4g}", xticks=[])
    prev = None
    for k, (label, ts, med, lo, hi, cur) in enumerate(history):
        x = px(p.x(k))
        if lo is not None and hi is not None:
            p.parts.append(el("line", {"class": "err", "x1": x, "y1": px(p.y(lo)), "x2": x,
                                       "y2": px(p.y(hi))}))
        if prev:
            p.parts.append(el("line", {"class": "trend", "x1": prev[0], "y1": prev[1], "x2": x,
                                       "y2": px(p.y(med))}))
        prev = (x, px(p.y(med)))
        tip = f"{label} ({ts or 'no timestamp'}): median {fmt_time(med)}"
        if lo is not None and hi is not None:
            tip += f", {level:.0%} CI [{fmt_time(lo)}, {fmt_time(hi)}]"
        p.parts.append(titled("circle", {"class": "hpt current" if cur else "hpt", "cx": x,
                                         "cy": px(p.y(med)), "r": 4}, tip))
        ly = p.h - MB + 14
        short = label if len(label) <= 18 else label[:16] + ".."
        p.parts.append(el("text", {"class": "tl", "x": x, "y": ly, "text-anchor": "end",
                                   "transform": f"rotate(-30 {x} {ly})"}, short))
    return p.svg(f"Median of {bid} in each saved baseline that has it (intervals where the file "
                 "has them), ordered by the baseline's context.timestamp; the filled point is "
                 "this run. A baseline's timestamp is that of the run that saved it last.")


# ---- log-axis plots: summary, groups, parameters, processes ----

LW = 250  # label column of the row plots, px


def log_ticks(lo, hi):
    """Ticks in log10 units for [lo, hi] (also log10): decades, or 1-2-5 steps when the range
    is narrow, or every other decade when it is wide."""
    k0, k1 = math.floor(lo), math.ceil(hi)
    mults = (1, 2, 5) if k1 - k0 <= 3 else (1,)
    ticks = [k + math.log10(m) for k in range(k0, k1 + 1) for m in mults]
    ticks = [t for t in ticks if lo - 1e-9 <= t <= hi + 1e-9]
    if len(ticks) > 8:
        ticks = ticks[::2]
    return ticks or [lo]


def value_ticks(vals, lo, hi, min_px=40):
    """Ticks at the values themselves (log10 units, as log_ticks): every swept parameter
    labelled, when they are few and at least min_px apart on the plot's width; else
    log_ticks(lo, hi)."""
    vs = sorted(set(vals))
    span = (W - ML - MR) / (hi - lo) if hi > lo else 0
    if 2 <= len(vs) <= 12 and all((b - a) * span >= min_px for a, b in zip(vs, vs[1:])):
        return vs
    return log_ticks(lo, hi)


def natural_key(text):
    """Sort key of a text with numbers in it: the numbers compare as numbers, the rest as text,
    so "size=256" comes before "size=1024" and "load=0.5" before "load=0.9"."""
    return [(0, float(t), "") if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", t) else (1, 0.0, t)
            for t in re.split(r"([0-9]+(?:\.[0-9]+)?)", text) if t]


def series_order(item):
    """Sort key of a (series key, points) item: group, name, axis and the fixed values in
    natural order (natural_key)."""
    return [natural_key(part) for part in item[0]]


def log_range(vals):
    vals = [v for v in vals if isinstance(v, (int, float)) and v > 0 and math.isfinite(v)]
    if not vals:
        return None
    lo, hi = math.log10(min(vals)), math.log10(max(vals))
    pad = max((hi - lo) * 0.06, 0.05)
    return lo - pad, hi + pad


def row_plot(pid, cls, rows, xlabel, caption, bars=False):
    """One row per benchmark on a log time axis: [(label, href, median, lower, upper, tip)].
    Each row is a link to the benchmark's page; bars=True draws a bar up to the median."""
    rng = log_range([r[2] for r in rows] + [r[3] for r in rows] + [r[4] for r in rows])
    if rng is None:
        return ""
    lo, hi = rng
    rh = 22
    h = MT + MB + rh * len(rows)

    def x(v):
        return LW + (math.log10(v) - lo) / (hi - lo) * (W - LW - MR)
    p = [el("line", {"class": "axis", "x1": LW, "y1": h - MB, "x2": W - MR, "y2": h - MB})]
    for t in log_ticks(lo, hi):
        tx = px(LW + (t - lo) / (hi - lo) * (W - LW - MR))
        p.append(el("line", {"class": "grid", "x1": tx, "y1": MT, "x2": tx, "y2": h - MB}))
        p.append(el("text", {"class": "tl", "x": tx, "y": h - MB + 16, "text-anchor": "middle"},
                    fmt_time(10 ** t)))
    p.append(el("text", {"class": "al", "x": (LW + W - MR) / 2, "y": h - 12,
                         "text-anchor": "middle"}, xlabel))
    for k, (label, href, med, rlo, rhi, tip) in enumerate(rows):
        cy = MT + rh * k + rh / 2
        short = label if len(label) <= 38 else label[:36] + ".."
        items = [el("text", {"class": "tl", "x": LW - 6, "y": px(cy + 4), "text-anchor": "end"},
                    short)]
        if bars:
            items.append(el("rect", {"class": "gbar", "x": LW, "y": px(cy - 7),
                                     "width": px(max(x(med) - LW, 1)), "height": 14}))
        if rlo and rhi and rlo > 0 and rhi > 0:
            items.append(el("line", {"class": "err", "x1": px(x(rlo)), "y1": px(cy),
                                     "x2": px(x(rhi)), "y2": px(cy)}))
        items.append(el("circle", {"class": "rpt", "cx": px(x(med)), "cy": px(cy), "r": 4}))
        items.append(el("title", None, tip))
        p.append(el("a", {"class": "row", "href": href}, items))
    return svg_figure(pid, cls, h, p, caption)


def row_of(b, pages, level):
    med, lo, hi = median_of(b)
    if med is None or med <= 0:
        return None
    tip = f"{b['id']}: median {fmt_time(med)}"
    if lo is not None and hi is not None:
        tip += f", {level:.0%} CI [{fmt_time(lo)}, {fmt_time(hi)}]"
    thr = throughput_text(b, med)
    if thr:
        tip += f", {thr}"
    return (b["id"], pages[b["id"]], med, lo, hi, tip)


def summary_plot(d, pages, level):
    rows = [r for r in (row_of(b, pages, level) for b in d["benchmarks"]
                        if b.get("status") == "ok") if r]
    if not rows:
        return ""
    return row_plot("plot-summary", "summary", rows, "median time per iteration (log scale)",
                    f"Every measured benchmark: median time per iteration (point) and its "
                    f"{level:.0%} confidence interval (line), on one log axis; click a row for "
                    "its page.")


def group_of(b):
    g = b.get("group")
    return g if isinstance(g, str) and g else b["id"].split("/", 1)[0]


def group_plots(d, pages, level):
    groups = {}
    for b in d["benchmarks"]:
        if b.get("status") == "ok":
            groups.setdefault(group_of(b), []).append(b)
    out = []
    for k, (g, members) in enumerate(sorted(groups.items())):
        rows = [r for r in (row_of(b, pages, level) for b in members) if r]
        if len(rows) < 2:
            continue
        out.append(el("h3", {"class": "group-name"}, g))
        out.append(row_plot(
            f"plot-group-{k}", "group", rows, "median time per iteration (log scale)",
            f"Group {g}: the median of each of its {len(rows)} benchmarks (bar and point) "
            f"with its {level:.0%} confidence interval (line), log axis.", bars=True))
    return frag(out)


def positive_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def param_series(d):
    """{key: [(x, bench)]} of the parameter series, sorted by x, two or more points each. A
    benchmark with a numeric parameter is in the series (group, name, "", ""); one with an
    argument grid ("args") is in one series per numeric axis, the others held fixed:
    (group, name, axis, "other=value/...")."""
    series = {}
    for b in d["benchmarks"]:
        if b.get("status") != "ok":
            continue
        name = b.get("name") if isinstance(b.get("name"), str) else ""
        prm, args = b.get("param"), b.get("args")
        if positive_number(prm):
            series.setdefault((group_of(b), name, "", ""), []).append((prm, b))
        if not isinstance(args, dict):
            continue
        for axis, v in args.items():
            if positive_number(v):
                fixed = fixed_text(args, axis)
                series.setdefault((group_of(b), name, axis, fixed), []).append((v, b))
    return {k: sorted(v, key=lambda t: t[0]) for k, v in series.items() if len(v) >= 2}


def series_title(key):
    """"g/n" for a parameter, "g/n: size (load=0.5)" for a grid's axis."""
    g, n, axis, fixed = key
    return f"{g}/{n}" + (f": {axis}" if axis else "") + (f" ({fixed})" if fixed else "")


BIG_O = {"O(1)": lambda n: 1.0, "O(log N)": lambda n: math.log2(n), "O(N)": lambda n: n,
         "O(N log N)": lambda n: n * math.log2(n), "O(N^2)": lambda n: n * n,
         "O(N^3)": lambda n: n * n * n}


def fixed_text(args, axis):
    """The values of the axes other than axis, "k=v/k=v", as a series key spells them."""
    return "/".join(f"{k}={w}" for k, w in args.items() if k != axis)


def fits_of(d):
    """{series key (param_series): complexity entry} of a results file's "complexity" array
    (well formed entries only)."""
    out = {}
    for c in d.get("complexity") or []:
        if isinstance(c, dict) and c.get("best") in BIG_O and \
                isinstance(c.get("coefficient_ns"), (int, float)) and \
                isinstance(c.get("rms"), (int, float)) and \
                isinstance(c.get("group"), str) and isinstance(c.get("name"), str):
            axis, fixed = c.get("axis"), c.get("fixed")
            if axis is None:
                out[(c["group"], c["name"], "", "")] = c
            elif isinstance(axis, str) and isinstance(fixed, dict):
                out[(c["group"], c["name"], axis, fixed_text(fixed, axis))] = c
    return out


def param_plot(pid, key, points, level, what, fit=None):
    """Time (what="time") or throughput (what="thrpt") against the parameter, log-log."""
    xs, ys, los, his, tips = [], [], [], [], []
    unit = None
    for prm, b in points:
        med, lo, hi = median_of(b)
        if med is None or med <= 0:
            continue
        if what == "time":
            y, ylo, yhi = med, lo, hi
        else:
            thr = b.get("throughput") or {}
            amount, u = ((thr.get("bytes_per_iteration"), "B") if thr.get("bytes_per_iteration")
                         else (thr.get("elements_per_iteration"), "elem"))
            if not amount or (unit and u != unit):
                continue
            unit = u
            y = amount * 1e9 / med
            ylo = amount * 1e9 / hi if hi else None
            yhi = amount * 1e9 / lo if lo else None
        xs.append(math.log10(prm))
        ys.append(math.log10(y))
        los.append(math.log10(ylo) if ylo and ylo > 0 else None)
        his.append(math.log10(yhi) if yhi and yhi > 0 else None)
        tips.append(f"{b['id']}: " + (fmt_time(y) if what == "time" else fmt_rate(y, unit)))
    if len(xs) < 2:
        return ""
    allys = ys + [v for v in los + his if v is not None]
    ypad = max((max(allys) - min(allys)) * 0.08, 0.05)
    xpad = (max(xs) - min(xs)) * 0.06
    g, n, axis, _ = key
    ylabel = "time per iteration" if what == "time" else "throughput"
    # A rate's tick keeps its "/s": "1 GB" alone reads as an amount of data, not a rate.
    yfmt = (lambda t: fmt_time(10 ** t)) if what == "time" else \
        (lambda t: fmt_rate(10 ** t, unit))
    ylo, yhi = min(allys) - ypad, max(allys) + ypad
    yticks = log_ticks(ylo, yhi)
    p = Plot(pid, f"param {what}", min(xs) - xpad, max(xs) + xpad, ylo, yhi,
             f"{axis or 'parameter'} of {g}/{n} (log scale)", ylabel + " (log scale)",
             ml=left_margin([yfmt(t) for t in yticks]))
    # Log axes: Plot places values linearly, so it gets log10 values and labels them back.
    # Each swept value is labelled where they fit (a two-value axis, 0.5 and 0.9, is within
    # one decade: its decade ticks would label one of them).
    p.axes(lambda t: f"{10 ** t:.4g}", yfmt, xticks=value_ticks(xs, p.xlo, p.xhi),
           yticks=yticks)
    p.parts.append(el("path", {"class": "trend", "d": path_of(p, xs, ys), "fill": "none"}))
    fit_text = ""
    if fit and what == "time" and "class" in fit and fit["class"] is None:
        # No class fits (docs/measurement.md#complexity): none is drawn or named as if it did.
        fit_text = (f" No complexity class fits ({fit.get('no_class', '')}); the "
                    f"best, {fit['best']}, leaves residuals of {100 * fit['rms']:.1f}%.")
    elif fit and what == "time":
        # The fitted class, c f(N), drawn over the swept range (log axes: many points).
        f = BIG_O[fit["best"]]
        lo10, hi10 = min(xs), max(xs)
        fx = [lo10 + (hi10 - lo10) * i / 40 for i in range(41)]
        fy = [math.log10(fit["coefficient_ns"] * f(10 ** v)) if
              fit["coefficient_ns"] * f(10 ** v) > 0 else None for v in fx]
        pts_ = [(a, c) for a, c in zip(fx, fy) if c is not None]
        if len(pts_) >= 2:
            dpath = path_of(p, [a for a, _ in pts_], [c for _, c in pts_])
            label = (f"{fit['best']}: {fmt_time(fit['coefficient_ns'])} x f(N), "
                     f"rms {100 * fit['rms']:.1f}%")
            p.parts.append(titled("path", {"class": "fitted", "d": dpath, "fill": "none"},
                                  label))
            fit_text = (f" Dashed: the best fitting class, {fit['best']} "
                        f"({fmt_time(fit['coefficient_ns'])} x f(N), residuals "
                        f"{100 * fit['rms']:.1f}% of the mean).")
    for a, c, lo_, hi_, tip in zip(xs, ys, los, his, tips):
        if lo_ is not None and hi_ is not None:
            p.parts.append(el("line", {"class": "err", "x1": px(p.x(a)), "y1": px(p.y(lo_)),
                                       "x2": px(p.x(a)), "y2": px(p.y(hi_))}))
        p.parts.append(titled("circle", {"class": "ppt", "cx": px(p.x(a)), "cy": px(p.y(c)),
                                         "r": 4}, tip))
    what_text = "time per iteration" if what == "time" else "throughput"
    return p.svg(f"{series_title(key)}: {what_text} against "
                 f"{'the parameter' if not axis else axis}, both axes log scale; "
                 f"points are medians, lines their {level:.0%} intervals.{fit_text}")


def param_plots(key, points, level, suffix="", fit=None):
    return frag(param_plot(f"plot-param-time{suffix}", key, points, level, "time", fit),
                param_plot(f"plot-param-thrpt{suffix}", key, points, level, "thrpt"))


def process_plot(b):
    """Per worker process: its samples' time per iteration (points) and its median (bar)."""
    s = b.get("samples") or {}
    procs = s.get("process")
    its, tot = s.get("iterations") or [], s.get("totals_ns") or []
    if not isinstance(procs, list) or len(procs) != len(its) or len(set(procs)) < 2:
        return ""
    by = {}
    for pr, i, t in zip(procs, its, tot):
        if isinstance(i, (int, float)) and i > 0 and isinstance(t, (int, float)) and \
                math.isfinite(t) and isinstance(pr, int):
            by.setdefault(pr, []).append(t / i)
    if len(by) < 2:
        return ""
    order = sorted(by)
    allv = [v for vs in by.values() for v in vs]
    vmin, vmax = min(allv), max(allv)
    pad = (vmax - vmin) * 0.08 or abs(vmax) * 0.05 or 1.0
    div, unit = time_unit(vmax)
    p = Plot("plot-processes", "processes", -0.5, len(order) - 0.5, max(0.0, vmin - pad),
             vmax + pad, "worker process", f"time per iteration ({unit})")
    p.axes(lambda t: "", lambda t: f"{t / div:.4g}", xticks=[])
    for k, pr in enumerate(order):
        vals = by[pr]
        x = p.x(k)
        for j, v in enumerate(vals):
            jitter = ((j * 37) % 11 - 5) * 1.2
            p.parts.append(el("circle", {"class": "spt", "cx": px(x + jitter), "cy": px(p.y(v)),
                                         "r": 2.5}))
        m = statistics.median(vals)
        tip = f"process {pr}: {len(vals)} samples, median {fmt_time(m)}"
        p.parts.append(titled("line", {"class": "pmed", "x1": px(x - 12), "y1": px(p.y(m)),
                                       "x2": px(x + 12), "y2": px(p.y(m))}, tip))
        p.parts.append(el("text", {"class": "tl", "x": px(x), "y": p.h - MB + 16,
                                   "text-anchor": "middle"}, pr))
    cv = b.get("process_cv")
    cvt = f" The per-process medians vary by {cv * 100:.1f}% (process_cv)." if \
        isinstance(cv, (int, float)) else ""
    return p.svg(f"Samples by worker process: each point is a sample's time per iteration, each "
                 f"bar a process's median ({len(order)} processes).{cvt}{modes_text(b)}")


def modes_text(b):
    """The speed groups of the processes, as the terminal says them (docs/measurement.md):
    " Two speed groups: 6 processes at 712.4 ns, 4 at 1.281 µs." and what the processes' own
    records blame the spread on; "" when the result has neither."""
    out = ""
    modes = b.get("modes")
    if isinstance(modes, list) and len(modes) == 2 and all(isinstance(m, dict) for m in modes):
        a, z = modes
        out += (f" Two speed groups: {a.get('processes')} processes at "
                f"{fmt_time(a.get('median_ns', 0))}, {z.get('processes')} at "
                f"{fmt_time(z.get('median_ns', 0))}; the median above lies between them, and "
                f"comparisons take them group by group.")
    cause = b.get("spread_cause")
    if isinstance(cause, dict) and cause.get("kind") == "cpu":
        out += (f" Processes on CPU {cause.get('cpu_slow')} were "
                f"{(cause.get('ratio', 1) - 1) * 100:.1f}% slower than on CPU "
                f"{cause.get('cpu_fast')}.")
    elif isinstance(cause, dict) and cause.get("kind") == "page faults":
        out += " The processes with more page faults were slower."
    return out


# ---- input: read, then checked against the schema before anything is drawn ----


class InputError(Exception):
    pass


def no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def finite(text):
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"{text} is out of the range of a number")
    return v


def read_json(path):
    """The parsed JSON of path; InputError naming the file when it cannot be read or parsed
    (NaN, Infinity and 1e999, which Python's parser would take, are refused)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f, parse_constant=no_constant, parse_float=finite)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from e
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise InputError(f"{path}: not valid JSON ({e})") from e


# The JSON Schema keywords the results schema uses (docs/results.schema.json), checked by
# schema_error(); any other keyword is an error in the schema, so a schema that grows one is
# not half checked.
SCHEMA_KEYWORDS = {"$schema", "$defs", "title", "description", "$ref", "type", "const", "enum",
                   "properties", "required", "additionalProperties", "items", "minItems",
                   "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
                   "exclusiveMinimum", "exclusiveMaximum", "if", "then", "else", "oneOf"}

JSON_TYPES = {"object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
              "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "null": lambda v: v is None,
              "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or
              (isinstance(v, float) and v.is_integer())}


def json_type(v):
    """The JSON name of v's type, for messages."""
    return next(t for t in ("null", "boolean", "integer", "number", "string", "array", "object")
                if JSON_TYPES[t](v))


def same_json(a, b):
    """a == b as JSON compares them (true is not 1)."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def schema_error(v, s, root, where):
    """The first way v breaks schema s ("WHERE: what"), or None. root holds the $defs."""
    unknown = set(s) - SCHEMA_KEYWORDS
    if unknown:
        raise ValueError(f"schema keyword {sorted(unknown)[0]} is not supported")
    if "$ref" in s:
        node = root
        for part in s["$ref"].lstrip("#/").split("/"):
            node = node[part]
        err = schema_error(v, node, root, where)
        if err:
            return err
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(JSON_TYPES[t](v) for t in types):
            return f"{where}: expected {' or '.join(types)}, got {json_type(v)}"
    if "const" in s and not same_json(v, s["const"]):
        return f"{where}: expected {json.dumps(s['const'])}"
    if "enum" in s and not any(same_json(v, e) for e in s["enum"]):
        return f"{where}: expected one of {', '.join(json.dumps(e) for e in s['enum'])}"
    if "if" in s:
        branch = s.get("then" if schema_error(v, s["if"], root, where) is None else "else")
        err = schema_error(v, branch, root, where) if branch else None
        if err:
            return err
    if "oneOf" in s:
        ok = [b for b in s["oneOf"] if schema_error(v, b, root, where) is None]
        if len(ok) != 1:
            errs = [schema_error(v, b, root, where) for b in s["oneOf"]]
            return next((e for e in errs if e), f"{where}: matches more than one form")
    if isinstance(v, dict):
        for k in s.get("required", []):
            if k not in v:
                return f"{where}: no '{k}'"
        props, extra = s.get("properties", {}), s.get("additionalProperties", True)
        for k, item in v.items():
            at = f"{where}.{k}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) else \
                f"{where}[{json.dumps(k)}]"
            if k in props:
                err = schema_error(item, props[k], root, at)
            elif extra is False:
                err = f"{at}: not a field of this format"
            else:
                err = schema_error(item, extra, root, at) if isinstance(extra, dict) else None
            if err:
                return err
    if isinstance(v, list):
        if len(v) < s.get("minItems", 0) or len(v) > s.get("maxItems", len(v)):
            return f"{where}: {len(v)} items, out of range"
        if "items" in s:
            for k, item in enumerate(v):
                err = schema_error(item, s["items"], root, f"{where}[{k}]")
                if err:
                    return err
    if isinstance(v, str):
        if len(v) < s.get("minLength", 0) or len(v) > s.get("maxLength", len(v)):
            return f"{where}: {len(v)} characters, out of range"
        if "pattern" in s and not re.search(s["pattern"], v):
            return f"{where}: does not match {s['pattern']}"
    if JSON_TYPES["number"](v):
        if ("minimum" in s and v < s["minimum"]) or ("maximum" in s and v > s["maximum"]) or \
                ("exclusiveMinimum" in s and v <= s["exclusiveMinimum"]) or \
                ("exclusiveMaximum" in s and v >= s["exclusiveMaximum"]):
            return f"{where}: {v} is out of range"
    return None


# Where an installation keeps the documentation's docs/, relative to the folder of this file
# (bin/): the build writes the installed copy with the place CMAKE_INSTALL_DOCDIR gives.
INSTALLED_SCHEMA_DIR = "../share/doc/harness/docs"


def find_schema():
    """docs/results.schema.json: in the source tree (scripts/tools/../../docs/), or as installed
    (bin/ + INSTALLED_SCHEMA_DIR)."""
    here = os.path.dirname(os.path.realpath(__file__))
    for rel in (os.path.join("..", "..", "docs"), INSTALLED_SCHEMA_DIR):
        path = os.path.join(here, rel, "results.schema.json")
        if os.path.isfile(path):
            return path
    raise InputError("results.schema.json: not found beside this tool (docs/ of the source "
                     "tree, share/doc/harness/docs/ of an installation); it checks files with it")


RESULTS_SCHEMA = []  # loaded once, on first use


def load_results(path):
    """A results or baseline file, checked against docs/results.schema.json; InputError naming
    the file and the JSON path of the first problem."""
    if not RESULTS_SCHEMA:
        RESULTS_SCHEMA.append(read_json(find_schema()))
    d = read_json(path)
    err = schema_error(d, RESULTS_SCHEMA[0], RESULTS_SCHEMA[0], "$")
    if err:
        raise InputError(f"{path}: {err} (docs/results.schema.json)")
    ids = [b["id"] for b in d["benchmarks"]]
    if len(set(ids)) != len(ids):
        raise InputError(f"{path}: duplicate benchmark ids")
    return d


def load_history(bdir, skip_path):
    """[(name, timestamp, {id: entry})] of the readable baseline files in bdir."""
    out = []
    if not bdir or not os.path.isdir(bdir):
        return out
    for fn in sorted(os.listdir(bdir)):
        if not fn.endswith(".json"):
            continue
        path = os.path.join(bdir, fn)
        if skip_path and os.path.abspath(path) == os.path.abspath(skip_path):
            continue
        try:
            d = load_results(path)
        except InputError as e:
            print(f"{ME}: warning: skipping baseline {e}", file=sys.stderr)
            continue
        out.append((fn[:-5], d["context"]["timestamp"],
                    {b["id"]: b for b in d["benchmarks"] if b.get("status") == "ok"}))
    return out


# ---- pages ----

CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 980px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #eee; } th.sortable { cursor: pointer; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.status-failed { color: #b00; } .status-skipped { color: #777; }
.verdict-regressed { color: #b00; font-weight: bold; } .verdict-improved { color: #070; }
figure { margin: 1em 0; } figcaption { font-size: 0.85em; color: #444; max-width: 720px; }
svg.plot { background: #fcfcfc; border: 1px solid #ddd; }
svg.plot text { font-size: 11px; fill: #333; }
.axis { stroke: #333; } .tick { stroke: #333; } .grid { stroke: #e4e4e4; }
.density { fill: rgba(31,119,180,0.35); stroke: #1f77b4; stroke-width: 1.5; }
.density.base { fill: rgba(214,39,40,0.25); stroke: #d62728; }
.median { stroke: #1f4e79; stroke-width: 2; }
.median.base { stroke: #d62728; stroke-dasharray: 5 3; }
.ci { fill: rgba(31,119,180,0.15); } .rug { stroke: #1f77b4; stroke-opacity: 0.5; }
.pt { fill: #1f77b4; fill-opacity: 0.7; } .pt.hover { fill: #ff7f0e; }
.fit { stroke: #d62728; stroke-width: 1.5; }
.err { stroke: #555; } .trend { stroke: #999; stroke-dasharray: 3 3; }
.hpt { fill: #fff; stroke: #1f77b4; stroke-width: 2; } .hpt.current { fill: #1f77b4; }
.cur { fill: #1f77b4; } .bas { fill: #d62728; }
.note, .readout { color: #555; font-size: 0.9em; }
object.flamegraph { width: 100%; border: 1px solid #ddd; }
.gbar { fill: rgba(31,119,180,0.35); } .rpt, .ppt { fill: #1f77b4; }
a.row:hover text, a.row:hover .rpt { fill: #ff7f0e; }
.spt { fill: #1f77b4; fill-opacity: 0.55; } .pmed { stroke: #d62728; stroke-width: 2.5; }
h3.group-name, h3.series-name { font-size: 1em; margin: 1.2em 0 0.2em; }
.series { fill: none; stroke: #1f77b4; stroke-width: 1.2; } .tpt { fill: #1f77b4; }
.segment { stroke: #2ca02c; stroke-width: 2; stroke-dasharray: 6 3; }
.cp { stroke: #d62728; stroke-width: 1.5; } text.cpl { fill: #d62728; font-size: 10px; }
.trendline { fill: none; stroke: #ff7f0e; stroke-width: 2; stroke-dasharray: 2 2; }
.fitted { stroke: #d62728; stroke-width: 1.5; stroke-dasharray: 6 4; }
.lane { fill: #f2f2f2; } .wait { fill: #bbb; } ul.legend { list-style: none; padding: 0; }
.swatch { display: inline-block; width: 12px; height: 12px; vertical-align: middle; }
"""

INDEX_JS = """
(function () {
  "use strict";
  var table = document.getElementById("summary");
  if (!table) { return; }
  var body = table.tBodies[0];
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
    th.classList.add("sortable");
    th.title = "sort by this column";
    th.addEventListener("click", function () {
      var rows = Array.prototype.slice.call(body.rows);
      var dir = th.getAttribute("data-dir") === "asc" ? -1 : 1;
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute("data-sort") || a.cells[col].textContent;
        var y = b.cells[col].getAttribute("data-sort") || b.cells[col].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        if (!isNaN(nx) && !isNaN(ny)) { return (nx - ny) * dir; }
        return x.localeCompare(y, undefined, {numeric: true}) * dir;
      });
      rows.forEach(function (r) { body.appendChild(r); });
      th.setAttribute("data-dir", dir === 1 ? "asc" : "desc");
    });
  });
})();
"""

BENCH_JS = """
(function () {
  "use strict";
  var out = document.getElementById("readout");
  if (!out) { return; }
  Array.prototype.forEach.call(document.querySelectorAll("circle.pt"), function (c) {
    c.addEventListener("mouseover", function () {
      c.classList.add("hover");
      out.textContent = c.getAttribute("data-tip");
    });
    c.addEventListener("mouseout", function () { c.classList.remove("hover"); });
  });
})();
"""


STYLE, INDEX_SCRIPT, BENCH_SCRIPT = Markup(CSS), Markup(INDEX_JS), Markup(BENCH_JS)


def page(title, body, script):
    """A whole page: body is what el() made; script one of this file's scripts (or None)."""
    return ("<!DOCTYPE html>\n" +
            el("html", {"lang": "en"},
               el("head", None, el("meta", {"charset": "utf-8"}, void=True),
                  el("title", None, title), el("style", None, STYLE)),
               "\n", el("body", None, "\n", body, "\n",
                        el("script", None, script) if script else None, "\n")) + "\n")


def table_rows(rows, head=False):
    """<tr> rows of cells, the first a <th> when head is true."""
    return [el("tr", None, [el("th" if head and k == 0 else "td", None, c)
                            for k, c in enumerate(r)]) for r in rows]


def program_build_text(ctx):
    """The benchmark program's compiler and flags as its executable records them (never the
    library's); "unknown" where it records none, and for files written before they were kept."""
    pb = ctx.get("program_build") if isinstance(ctx.get("program_build"), dict) else {}
    compiler = pb.get("compiler")
    if not compiler:
        builds = ctx.get("benchmark_builds")
        if isinstance(builds, list) and builds and isinstance(builds[0], dict):
            compiler = builds[0].get("compiler")
    flags = pb.get("flags") or "flags unknown"
    return f"{compiler or 'unknown compiler'} {flags}"


def caches_text(cpu):
    """The context's cache sizes as --context prints them: each with its source (cache_sources:
    sysfs or libcpuid), "unknown" where no source vouches for one (-1)."""
    parts = []
    for name, key in (("L1d", "l1d_kib"), ("L2", "l2_kib"), ("L3", "l3_kib")):
        kib, src = cpu.get(key), (cpu.get("cache_sources") or {}).get(key)
        known = isinstance(kib, int) and kib > 0
        parts.append(f"{name} {kib} KiB" + (f" ({src})" if src else "") if known
                     else f"{name} unknown")
    return ", ".join(parts)


def context_table(ctx):
    cpu = ctx.get("cpu") if isinstance(ctx.get("cpu"), dict) else {}
    rows = [
        ("timestamp", ctx.get("timestamp")), ("host", ctx.get("hostname")),
        ("CPU", f"{cpu.get('brand', '')} ({cpu.get('vendor', '')}), {cpu.get('cores', '?')} "
                f"cores, {cpu.get('threads', '?')} threads"),
        ("caches", caches_text(cpu)),
        ("SIMD", cpu.get("features")), ("OS", ctx.get("os_name") or ctx.get("os")),
        ("kernel", ctx.get("kernel")), ("governor", ctx.get("governor") or "unknown"),
        ("program build", program_build_text(ctx)),
        ("harness library build", f"{ctx.get('compiler', '')} {ctx.get('compiler_flags', '')} "
                                  f"({ctx.get('build_type', '')})"),
        ("git revision", ctx.get("git_revision") or "unknown"),
        ("quick run", {True: "yes", False: "no"}.get(ctx.get("quick"), ctx.get("quick"))),
    ]
    body = table_rows([r for r in rows if r[1] not in (None, "")], head=True)
    warns = ctx.get("warnings") or []
    if isinstance(warns, list) and warns:
        lines = []
        for k, w in enumerate(warns):
            lines += [el("br", None, void=True) if k else None, w]
        body.append(el("tr", None, el("th", None, "warnings"), el("td", None, lines)))
    return el("table", {"id": "context"}, body)


def throughput_text(b, med):
    thr = b.get("throughput") or {}
    if not med or not isinstance(thr, dict):
        return ""
    if thr.get("bytes_per_iteration"):
        return fmt_rate(thr["bytes_per_iteration"] * 1e9 / med, "B")
    if thr.get("elements_per_iteration"):
        return fmt_rate(thr["elements_per_iteration"] * 1e9 / med, "elem")
    return ""


def num_cell(text):
    return el("td", {"class": "num"}, text)


def metrics_html(b):
    parts = []
    metrics = b.get("metrics")
    if isinstance(metrics, dict) and metrics:
        rows = []
        for name, m in metrics.items():
            if not isinstance(m, dict):
                continue
            med = ((m.get("per_iteration") or {}).get("median") or {})
            ch = m.get("change") or {}
            rows.append(el("tr", None, el("td", None, name), el("td", None, m.get("unit", "")),
                           num_cell(fmt_num(med.get("point"))),
                           num_cell(f"[{fmt_num(med.get('lower'))}, {fmt_num(med.get('upper'))}]"),
                           el("td", None, m.get("source", ""),
                              " (scaled)" if m.get("scaled") else None),
                           el("td", None, ch.get("verdict", ""))))
        parts += [el("h2", None, "Counters and allocations per iteration"),
                  el("table", {"id": "metrics"},
                     el("thead", None, table_rows([("metric", "unit", "median", "interval",
                                                    "source", "change")], head=True)[0]),
                     el("tbody", None, rows))]
    facts = b.get("facts")
    if isinstance(facts, dict) and facts:
        rows = [el("tr", None, el("td", None, k), num_cell(fmt_num(v.get("value"))),
                   el("td", None, v.get("unit", "")))
                for k, v in facts.items() if isinstance(v, dict)]
        parts += [el("h2", None, "Facts"),
                  el("table", {"id": "facts"},
                     el("thead", None, el("tr", None, [el("th", None, h) for h in
                                                       ("fact", "value", "unit")])),
                     el("tbody", None, rows))]
    return frag(parts)


def samples_origin(b):
    """Where a benchmark's samples came from, as the terminal report says it: " in N processes"
    (worker processes, `processes`), " in N rounds" (one process, `--in-process --rounds`), or ""
    for one stretch of one process. In worker processes `rounds` counts the processes too, so
    `processes` decides which word is right."""
    procs = b.get("processes")
    if isinstance(procs, int) and procs >= 1:
        return f" in {procs} process{'es' if procs != 1 else ''}"
    rounds = b.get("rounds")
    if isinstance(rounds, int) and rounds > 1:
        return f" in {rounds} rounds"
    return ""


def flame_link(text):
    return el("a", {"id": "flamegraph-link", "href": "flamegraph.svg"}, text)


def bench_page(b, ctx, level, base_entry, base_label, history, flame, series=None):
    """series: [(key, [(x, bench)], fit)] of the parameter series b is in (param_series)."""
    bid = b["id"]
    parts = [el("p", None, el("a", {"href": "index.html"}, "\u2190 all benchmarks")),
             el("h1", {"id": "bench-id"}, bid)]
    status = b.get("status")
    if status != "ok":
        parts.append(el("p", {"class": f"status-{status}"},
                        f"{status}: {b.get('message', '')}"))
        return page(bid, parts, BENCH_SCRIPT)
    med, lo, hi = median_of(b)
    est = b.get("estimates") or {}
    rows = [("median", f"{fmt_time(med)} [{fmt_time(lo)}, {fmt_time(hi)}] ({level:.0%} CI)")]
    for k in ("mean", "slope", "std_dev", "mad"):
        e = est.get(k) or {}
        if "point" in e:
            rows.append((k, f"{fmt_time(e.get('point'))} [{fmt_time(e.get('lower'))}, "
                            f"{fmt_time(e.get('upper'))}]"))
    rows.append(("R² of the slope", fmt_num(b.get("r2"))))
    thr = throughput_text(b, med)
    if thr:
        rows.append(("throughput (from the median)", thr))
    n = len((b.get("samples") or {}).get("iterations") or [])
    rows.append(("samples", f"{n}{samples_origin(b)}, {b.get('sampling', '')}, "
                            f"stopped at {b.get('stop_reason', '')}"))
    parts.append(el("table", {"id": "estimates"}, table_rows(rows, head=True)))
    parts += [el("h2", None, "Distribution"), kde_plot(b, level)]
    parts += [el("h2", None, "Iterations and time"), scatter_plot(b)]
    pp = process_plot(b)
    if pp:
        parts += [el("h2", None, "Across worker processes"), pp]
    if series:
        parts.append(el("h2", None, "Against the parameter"))
        for k, (key, pts, fit) in enumerate(series):
            if key[2]:
                parts.append(el("h3", {"class": "series-name"}, series_title(key)))
            parts.append(param_plots(key, pts, level, f"-{k}" if k else "", fit=fit))
    bp = baseline_plot(b, base_entry, base_label)
    if bp:
        parts += [el("h2", None, "Against the baseline"), bp]
    parts += explanation_section(b)
    parts += [el("h2", None, "History across saved baselines"),
              history_plot(bid, history, level)]
    parts.append(metrics_html(b))
    if flame:
        parts += [el("h2", None, "Flame graph"),
                  el("p", None, flame_link("CPU flame graph of the profiling run"),
                     " (interactive: click to zoom).")]
    return page(bid, parts, BENCH_SCRIPT)


def index_page(d, title, level, flame, pages, history_link=False, timeline_link=False):
    ctx = d.get("context") or {}
    rows = []
    for b in d["benchmarks"]:
        bid, status = b["id"], b.get("status")
        link = el("a", {"href": pages[bid]}, bid)
        if status != "ok":
            rows.append(el("tr", {"class": f"status-{status}"}, el("td", None, link),
                           el("td", None, status),
                           el("td", {"colspan": 4}, b.get("message", ""))))
            continue
        med, lo, hi = median_of(b)
        ch = b.get("change") or {}
        verdict = ch.get("verdict", "")
        change = (f"{(ch['ratio'] - 1) * 100:+.2f}% ({verdict})"
                  if isinstance(ch.get("ratio"), (int, float)) else verdict)
        rows.append(el("tr", None, el("td", None, link), el("td", None, "ok"),
                       el("td", {"class": "num", "data-sort": med if med is not None else ""},
                          fmt_time(med)),
                       el("td", None, f"[{fmt_time(lo)}, {fmt_time(hi)}]"),
                       el("td", None, throughput_text(b, med)),
                       el("td", {"class": f"verdict-{str(verdict).replace(' ', '-')}"},
                          change)))
    body = [el("h1", {"id": "report-title"}, title)]
    if history_link:
        body += ["\n", el("p", None, el("a", {"id": "history-link", "href": "history.html"},
                                        "Run history: trends and change points"))]
    if timeline_link:
        body += ["\n", el("p", None, el("a", {"id": "timeline-link", "href": "timeline.html"},
                                        "Timeline: the run's processes against time"))]
    body += [el("h2", None, "System"), context_table(ctx)]
    summary = summary_plot(d, pages, level)
    if summary:
        body += [el("h2", None, "Summary"), summary]
    body += [el("h2", None, "Benchmarks"),
             el("table", {"id": "summary"},
                el("thead", None, el("tr", None, [el("th", None, h) for h in (
                    "benchmark", "status", "median", f"{level:.0%} CI", "throughput",
                    "change")])),
                el("tbody", None, rows))]
    groups = group_plots(d, pages, level)
    if groups:
        body += [el("h2", None, "Groups"), groups]
    series = param_series(d)
    fits = fits_of(d)
    if series:
        body.append(el("h2", None, "Parameters"))
        for k, (key, pts) in enumerate(sorted(series.items(), key=series_order)):
            body += [el("h3", {"class": "group-name"}, series_title(key)),
                     param_plots(key, pts, level, f"-{k}", fits.get(key))]
    if flame:
        body += [el("h2", None, "Flame graph"),
                 el("p", None, "CPU profile (scripts/profile_hotspots.sh); hover for a function's "
                    "share, click to zoom. ", flame_link("Open it alone"), "."),
                 el("object", {"id": "flamegraph", "class": "flamegraph",
                               "type": "image/svg+xml", "data": "flamegraph.svg"},
                    "flame graph")]
    return page(title, body, INDEX_SCRIPT)


# ---- the run history's series (--history) ----

NUMBER_OR_NULL = {"type": ["number", "null"]}

# The series file as this page reads it (docs/results-format.md, history series), checked with
# the same schema_error() as results; fields it does not read may be added freely.
SERIES_SCHEMA = {
    "type": "object",
    "required": ["format", "version", "series"],
    "properties": {
        "format": {"const": "harness-history-series"},
        "version": {"const": 1},
        "history": {"type": "string"},
        "alpha": NUMBER_OR_NULL,
        "series": {"type": "array", "items": {
            "type": "object",
            "required": ["id", "runs", "revisions", "median_ns", "change_points"],
            "properties": {
                "id": {"type": "string"},
                "runs": {"type": "array", "items": {"type": "integer"}},
                "revisions": {"type": "array", "items": {"type": "string"}},
                "programs": {"type": "array", "items": {"type": ["string", "null"]}},
                "median_ns": {"type": "array", "items": {"type": "number",
                                                         "exclusiveMinimum": 0}},
                "change_points": {"type": "array", "items": {
                    "type": "object",
                    "required": ["index", "step", "step_lower", "step_upper"],
                    "properties": {"index": {"type": "integer", "minimum": 1},
                                   "run": NUMBER_OR_NULL, "run_before": NUMBER_OR_NULL,
                                   "step": {"type": "number"}, "step_lower": {"type": "number"},
                                   "step_upper": {"type": "number"},
                                   "p_adjusted": NUMBER_OR_NULL}}},
                "trend": {"type": ["object", "null"],
                          "properties": {k: NUMBER_OR_NULL for k in
                                         ("per_run", "lower", "upper", "p", "runs",
                                          "start_ns")}}}}}}}


def load_series(path):
    """The series of `bench --history-show DB --json FILE`, checked; InputError when wrong."""
    d = read_json(path)
    if not isinstance(d, dict) or d.get("format") != "harness-history-series":
        raise InputError(f"{path}: not the series of a run history (format is not "
                         "harness-history-series; made by bench --history-show DB --json FILE)")
    if not same_json(d.get("version"), 1):
        raise InputError(f"{path}: version {json.dumps(d.get('version'))}, this tool reads 1")
    err = schema_error(d, SERIES_SCHEMA, SERIES_SCHEMA, "$")
    if err:
        raise InputError(f"{path}: {err}")
    for k, s in enumerate(d["series"]):
        n = len(s["runs"])
        if len(s["revisions"]) != n or len(s["median_ns"]) != n or \
                any(c["index"] >= n for c in s["change_points"]):
            raise InputError(f"{path}: $.series[{k}]: a series is malformed (runs, revisions, "
                             "median_ns and change_points must agree)")
    return d


def trend_plot(k, s):
    """One benchmark's medians by run, its segments, change points and trend."""
    meds, runs, n = s["median_ns"], s["runs"], len(s["runs"])
    cps = sorted(s["change_points"], key=lambda c: c["index"])
    div, unit = time_unit(max(meds))
    lo, hi = min(meds), max(meds)
    pad = (hi - lo) * 0.15 or hi * 0.02
    p = Plot(f"plot-trend-{k}", "runs", -0.5, n - 0.5, max(0.0, lo - pad), hi + pad,
             "run (in the order recorded)", f"median per iteration ({unit})", height=H + 30)
    step = max(1, n // 10)
    p.axes(lambda t: str(runs[int(t)]) if 0 <= int(t) < n else "", lambda t: f"{t / div:.4g}",
           xticks=list(range(0, n, step)))
    # the segments between change points, each at its geometric mean
    bounds = [0] + [c["index"] for c in cps] + [n]
    for a, b in zip(bounds, bounds[1:]):
        if b > a:
            g = px(p.y(math.exp(sum(math.log(v) for v in meds[a:b]) / (b - a))))
            p.parts.append(el("line", {"class": "segment", "x1": px(p.x(a - 0.4)), "y1": g,
                                       "x2": px(p.x(b - 0.6)), "y2": g}))
    pts = " ".join(f"{p.x(i):.1f},{p.y(v):.1f}" for i, v in enumerate(meds))
    p.parts.append(el("polyline", {"class": "series", "points": pts}))
    progs = s.get("programs") or []
    for i, v in enumerate(meds):
        prog = progs[i] if i < len(progs) else None
        build = f", program {prog.removeprefix('sha256:')[:12]}" if prog else ""
        tip = f"run {runs[i]} ({s['revisions'][i]}{build}): median {fmt_time(v)}"
        p.parts.append(titled("circle", {"class": "tpt", "cx": px(p.x(i)), "cy": px(p.y(v)),
                                         "r": 3}, tip))
    for c in cps:
        x = p.x(c["index"] - 0.5)
        label = (f"{100 * c['step']:+.2f}% [{100 * c['step_lower']:+.2f}%, "
                 f"{100 * c['step_upper']:+.2f}%] at run {runs[c['index']]}")
        p.parts.append(titled("line", {"class": "cp", "x1": px(x), "y1": MT, "x2": px(x),
                                       "y2": p.h - MB}, label))
        p.parts.append(el("text", {"class": "cpl", "x": px(x + 4), "y": MT + 12}, label))
    t = s.get("trend")
    has_trend = isinstance(t, dict) and all(isinstance(t.get(x), (int, float))
                                            for x in ("per_run", "lower", "upper", "runs"))
    trend = (f" Trend: {100 * t['per_run']:+.2f}% per run [{100 * t['lower']:+.2f}%, "
             f"{100 * t['upper']:+.2f}%] over the last {t['runs']} runs."
             if has_trend else " No trend.")
    if has_trend and isinstance(t.get("start_ns"), (int, float)) and t["start_ns"] > 0 and \
            1 <= t["runs"] <= n:
        # The line the trend test fitted (Theil-Sen), from the first run it was estimated on:
        # start_ns there, times (1 + per_run) a run; a vertex a run, so it bends as the fit does.
        first = n - int(t["runs"])
        line = " ".join(f"{p.x(i):.1f},{p.y(t['start_ns'] * (1 + t['per_run']) ** (i - first)):.1f}"
                        for i in range(first, n))
        p.parts.append(titled("polyline", {"class": "trendline", "points": line}, trend.strip()))
    found = (f"{len(cps)} change point{'s' if len(cps) != 1 else ''}" if cps
             else "no change point")
    return p.svg(f"Median of {s['id']} in each run of the history where it ran; dashed: the mean "
                 f"of each segment between change points; {found}.{trend}")


def history_page(d, title):
    body = [el("h1", None, f"{title}: run history"), "\n",
            el("p", {"class": "note"}, f"From {d.get('history', '')}: each benchmark's median "
               "per run, with the change points and trend ", el("code", None, "bench "
               "--history-show"), " found (", el("code", None, "--history-confirm"),
               " checks a change point by running the programs around it again).")]
    if not d["series"]:
        body += ["\n", el("p", {"id": "history-empty", "class": "note"}, "No series selected.")]
    for k, s in enumerate(d["series"]):
        body += ["\n", el("h2", {"id": f"series-{k}"}, s["id"]), "\n"]
        if len(s["runs"]) < 2:
            body.append(el("p", {"class": "note"}, "Fewer than two runs: nothing to plot."))
        else:
            body.append(trend_plot(k, s))
    return page(f"{title}: run history", body, None)


# ---- the timeline page (bench --trace FILE) ----

# Colours of the benchmarks' samples on the timeline, in turn.
TIMELINE_COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                    "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")
ROW_H = 16  # px per process on the timeline


def load_trace(path):
    """The processes and slices of a `bench --trace FILE` (Chrome trace event format JSON),
    checked; InputError naming the file and what is wrong."""
    d = read_json(path)
    events = d.get("traceEvents") if isinstance(d, dict) else None
    if not isinstance(events, list):
        raise InputError(f"{path}: not a trace of bench --trace (no traceEvents list; a "
                         ".pftrace is for the Perfetto UI)")
    names, slices = {}, []
    for k, e in enumerate(events):
        if not isinstance(e, dict) or not isinstance(e.get("pid"), int) or \
                isinstance(e.get("pid"), bool) or not isinstance(e.get("name"), str):
            raise InputError(f"{path}: $.traceEvents[{k}]: not an event (an object with an "
                             "integer pid and a string name)")
        if e.get("ph") == "M" and e["name"] == "process_name":
            label = (e.get("args") or {}).get("name") if isinstance(e.get("args"), dict) \
                else None
            if not isinstance(label, str):
                raise InputError(f"{path}: $.traceEvents[{k}]: a process name that is not a "
                                 "string")
            names[e["pid"]] = label
        elif e.get("ph") == "X":
            ts, dur = e.get("ts"), e.get("dur")
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                       for v in (ts, dur)):
                raise InputError(f"{path}: $.traceEvents[{k}]: a slice whose ts or dur is not "
                                 "a number >= 0")
            slices.append((e["pid"], float(ts), float(dur), e["name"], e.get("cat")))
    return names, slices


def timeline_page(path, title):
    """Processes against time: each worker process a row, named by its benchmark and process
    number, its samples as boxes coloured by benchmark; the manager's row has its waits."""
    names, slices = load_trace(path)
    pids = sorted(names)
    bench_of = {pid: names[pid].split(" #")[0] for pid in pids if pid != 1}
    colour = {bid: TIMELINE_COLOURS[k % len(TIMELINE_COLOURS)]
              for k, bid in enumerate(sorted(set(bench_of.values())))}
    end = max((ts + dur for _, ts, dur, _, _ in slices), default=0.0) or 1.0
    short = {pid: (names[pid] if pid == 1 else names[pid].split(" pid ")[0]) for pid in pids}
    short = {pid: t if len(t) <= 30 else t[:29] + "\u2026" for pid, t in short.items()}
    ml = min(260, 12 + 6 * max((len(t) for t in short.values()), default=0))
    height = 30 + ROW_H * len(pids)
    row = {pid: k for k, pid in enumerate(pids)}

    def x(us):
        return px(ml + (W - ml - 10) * us / end)

    parts = []
    for pid in pids:
        y = 20 + ROW_H * row[pid]
        parts.append(titled("rect", {"class": "lane", "x": ml, "y": y, "width": W - ml - 10,
                                     "height": ROW_H - 2}, names[pid]))
        parts.append(el("text", {"x": 4, "y": y + ROW_H - 5, "class": "lane-name"}, short[pid]))
    drawn = 0
    for pid, ts, dur, name, cat in slices:
        if pid not in row or (pid != 1 and cat != "sample"):
            continue
        y = 20 + ROW_H * row[pid]
        fill = colour.get(bench_of.get(pid), "#999") if pid != 1 else "#ccc"
        parts.append(titled("rect", {"class": "sample" if pid != 1 else "wait", "x": x(ts),
                                     "y": y + 1, "width": px(max(0.5, float(x(ts + dur)) -
                                                                float(x(ts)))),
                                     "height": ROW_H - 4, "fill": fill},
                            f"{names[pid]}: {name}, {fmt_time(dur * 1000)}"))
        drawn += 1
    parts.append(el("text", {"x": ml, "y": 14}, "0"))
    parts.append(el("text", {"x": W - 10, "y": 14, "text-anchor": "end"}, fmt_time(end * 1000)))
    legend = [el("li", None, el("span", {"class": "swatch", "style": f"background:{c}"}), " ",
                 bid) for bid, c in colour.items()]
    body = [el("h1", None, f"{title}: timeline"), "\n",
            el("p", {"class": "note"}, f"From {os.path.basename(path)} (",
               el("code", None, "bench --trace"), f"): {len(pids)} processes, {drawn} slices "
               "drawn. Each row is a process (the manager first, with its waits for each "
               "worker), each box a sample coloured by its benchmark; hover for its name and "
               "time. The whole trace opens in the Perfetto UI."), "\n",
            svg_figure("plot-timeline", "timeline", height, parts, "Processes against time."),
            "\n", el("ul", {"class": "legend"}, legend)]
    return page(f"{title}: timeline", body, None)


# ---- output: the whole folder at once ----


def report_page(fn):
    """A file a report with results writes (and replaces): the others in the folder stay."""
    return fn in ("index.html", "flamegraph.svg", "history.html", "timeline.html") or \
        (fn.startswith("b-") and fn.endswith(".html"))


def publish(out, pages, copies, replaces):
    """Writes the report into the folder out: pages ({name: text}) and copies ({name: source
    file}) are made in a new folder beside it first, so bad input or a failure while writing
    leaves out as it was. Then, when out is absent or holds nothing but the report's own files
    (replaces(name)), the new folder takes its place in one rename; when out holds other files
    too, those stay: each new page is renamed into it and the report's files the new report
    lacks are removed. out may not be a symbolic link: nothing is written through one (a link in
    out named as a page is replaced, its target untouched). Raises InputError or OSError."""
    out = os.path.normpath(out)
    if os.path.islink(out):
        raise InputError(f"{out}: is a symbolic link; give the folder itself as --out")
    if os.path.lexists(out) and not os.path.isdir(out):
        raise InputError(f"{out}: exists and is not a folder")
    parent, base = os.path.split(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    new = tempfile.mkdtemp(prefix=f".{base}.new-", dir=parent)
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(new, 0o777 & ~mask)
        for name, src in copies.items():
            shutil.copyfile(src, os.path.join(new, name))
        for name, text in pages.items():
            with open(os.path.join(new, name), "x", encoding="utf-8") as f:
                f.write(text)
        if not os.path.isdir(out):
            os.rename(new, out)
            return
        old = os.listdir(out)
        if all(replaces(fn) for fn in old):
            aside = tempfile.mkdtemp(prefix=f".{base}.old-", dir=parent)
            os.rename(out, aside)  # onto the empty folder just made: out moves aside whole
            try:
                os.rename(new, out)
            except OSError:
                os.rename(aside, out)
                raise
            shutil.rmtree(aside, ignore_errors=True)
            return
        for name in sorted(os.listdir(new)):
            os.replace(os.path.join(new, name), os.path.join(out, name))
        for fn in old:
            if replaces(fn) and fn not in pages and fn not in copies:
                os.remove(os.path.join(out, fn))
    finally:
        shutil.rmtree(new, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(prog=ME, description="HTML report of a results file.")
    ap.add_argument("results", metavar="RESULTS.json", nargs="?",
                    help="results of a run (bench --json FILE)")
    ap.add_argument("--history", metavar="SERIES.json",
                    help="series of a run history (bench --history-show DB --json FILE): "
                         "history.html with a trend plot per benchmark")
    ap.add_argument("--trace", metavar="TRACE.json",
                    help="the timeline of the same run (bench --trace FILE): timeline.html, "
                         "processes against time, samples coloured by benchmark")
    ap.add_argument("--baselines-dir", default="baselines", metavar="DIR",
                    help="saved baselines, for each benchmark's history (default: baselines)")
    ap.add_argument("--baseline", metavar="FILE",
                    help="a results or baseline file to overlay on the current samples")
    ap.add_argument("--flamegraph", metavar="SVG", help="a flame graph to copy in and embed")
    ap.add_argument("--out", default=os.path.join("reports", "html"), metavar="DIR",
                    help="output directory (default: reports/html); its earlier pages are "
                         "replaced")
    ap.add_argument("--title", default="Benchmark report", metavar="TEXT",
                    help="title of the index page")
    a = ap.parse_args()
    if not a.results and not a.history:
        print(f"{ME}: give RESULTS.json, --history SERIES.json, or both", file=sys.stderr)
        return 2
    try:
        series = load_series(a.history) if a.history else None
        d = load_results(a.results) if a.results else None
        base = load_results(a.baseline) if a.baseline else None
        if a.flamegraph and not os.path.isfile(a.flamegraph):
            raise InputError(f"{a.flamegraph}: no such flame graph file")
        if not d:
            publish(a.out, {"history.html": history_page(series, a.title)}, {},
                    lambda fn: fn == "history.html")
            print(f"{ME}: wrote {os.path.join(a.out, 'history.html')} "
                  f"({len(series['series'])} series)", file=sys.stderr)
            return 0
        pages = make_pages(a, d, base, series)
        publish(a.out, pages, {"flamegraph.svg": a.flamegraph} if a.flamegraph else {},
                report_page)
    except InputError as e:
        print(f"{ME}: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{ME}: {e.filename or a.out}: {e.strerror}", file=sys.stderr)
        return 2
    print(f"{ME}: wrote {os.path.join(a.out, 'index.html')} and {len(d['benchmarks'])} benchmark "
          "pages", file=sys.stderr)
    return 0


def make_pages(a, d, base, series):
    """{file name: text} of the report of results d (and the history page with series)."""
    ids = [b["id"] for b in d["benchmarks"]]
    level = d["context"]["statistics"]["confidence_level"]
    base_entries = {b["id"]: b for b in base["benchmarks"] if b.get("status") == "ok"} if base \
        else {}
    base_label = os.path.basename(a.baseline)[:-5] if a.baseline and \
        a.baseline.endswith(".json") else (a.baseline or "baseline")
    hist_files = load_history(a.baselines_dir, None)
    now_ts = d["context"]["timestamp"]
    flame = bool(a.flamegraph)
    names = {bid: page_name(bid) for bid in ids}
    pages = {}
    series_of = {}
    fits = fits_of(d)
    for key, pts in sorted(param_series(d).items(), key=series_order):
        for _, sb in pts:
            series_of.setdefault(sb["id"], []).append((key, pts, fits.get(key)))
    for b in d["benchmarks"]:
        bid = b["id"]
        history = []
        for name, ts, entries in hist_files:
            e = entries.get(bid)
            if e:
                m, lo, hi = median_of(e)
                if m is not None:
                    history.append((name, ts, m, lo, hi, False))
        if b.get("status") == "ok":
            m, lo, hi = median_of(b)
            if m is not None:
                history.append(("this run", now_ts, m, lo, hi, True))
        history.sort(key=lambda h: (h[1] == "", h[1], h[0]))
        pages[names[bid]] = bench_page(b, d["context"], level, base_entries.get(bid), base_label,
                                       history, flame, series_of.get(bid))
    if series:
        pages["history.html"] = history_page(series, a.title)
    if a.trace:
        pages["timeline.html"] = timeline_page(a.trace, a.title)
    pages["index.html"] = index_page(d, a.title, level, flame, names, history_link=bool(series),
                                     timeline_link=bool(a.trace))
    return pages


if __name__ == "__main__":
    sys.exit(main())

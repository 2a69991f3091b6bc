#!/usr/bin/env python3
"""Renders folded stacks (scripts/stackcollapse.py) as a self-contained, interactive flame graph
in SVG: no external script, style sheet or font, so it works from file:// and offline.

Usage: scripts/flamegraph.py FOLDED [-o SVG] [--title T] [--subtitle S] [--width PX]
  FOLDED       folded stacks ("root;...;leaf COUNT" per line)
  -o SVG       output (default: standard output)
  --title      heading (default "Flame graph")
  --subtitle   second line, e.g. what was sampled
  --width      image width in pixels (default 1200)
  --countname  what the counts are, for the hover text (default "samples"; "bytes" for heap)
Exit: 0 ok, 2 unreadable or empty input (one line on stderr says which).

Reading it: each box is a function; its width is the share of samples in which it was on the
stack, the box above it is what it called, the top edge is where the CPU was. The x order is
alphabetical, not time. Hover a box: its name, samples and share (its <title>, and the line at
the bottom). Click a box to zoom into it (it fills the width; its callers stay as a faded path
below); "Reset zoom" or a click on the root goes back. Colours: warm hues for named user-space
functions, orange for the kernel (`_[k]`), grey for frames perf could not name (`[...]`), blue
for the workload's `wl_` functions.

Every name is XML-escaped; the script reads names only through textContent, never as markup.
"""
import argparse
import hashlib
import sys
from xml.sax.saxutils import escape

FRAME_H = 16
FONT_SIZE = 11
CHAR_W = 6.6          # width of one character of the monospace font at FONT_SIZE, px
XPAD = 10
MIN_W = 0.1           # boxes narrower than this (px) are not drawn

SCRIPT = r"""
(function () {
  "use strict";
  var svg = document.documentElement;
  var W = parseFloat(svg.getAttribute("data-inner-width"));
  var XPAD = parseFloat(svg.getAttribute("data-xpad"));
  var CHAR_W = parseFloat(svg.getAttribute("data-char-w"));
  var frames = Array.prototype.slice.call(document.querySelectorAll("g.frame"));
  var details = document.getElementById("details");
  var reset = document.getElementById("reset");
  function num(g, k) { return parseFloat(g.getAttribute(k)); }
  function label(g, w) {
    var t = g.querySelector("text");
    var name = g.querySelector("title").textContent.replace(/ \([0-9,]+ [^(]*, [0-9.]+%\)$/, "");
    var fit = Math.floor((w - 6) / CHAR_W);
    if (fit < 3) { t.textContent = ""; return; }
    t.textContent = name.length <= fit ? name : name.slice(0, fit - 2) + "..";
  }
  function place(g, x, w) {
    var r = g.querySelector("rect"), t = g.querySelector("text");
    r.setAttribute("x", x.toFixed(2));
    r.setAttribute("width", Math.max(w, 0).toFixed(2));
    t.setAttribute("x", (x + 3).toFixed(2));
    label(g, w);
  }
  function zoom(target) {
    var x0 = num(target, "data-x"), w0 = num(target, "data-w"), d0 = num(target, "data-depth");
    var scale = W / w0;
    frames.forEach(function (g) {
      var x = num(g, "data-x"), w = num(g, "data-w"), d = num(g, "data-depth");
      var inside = x >= x0 - 1e-9 && x + w <= x0 + w0 + 1e-9;
      var ancestor = d < d0 && x <= x0 + 1e-9 && x + w >= x0 + w0 - 1e-9;
      g.classList.remove("parent");
      if (inside && d >= d0) {
        g.style.display = "";
        place(g, XPAD + (x - x0) * scale, w * scale);
      } else if (ancestor) {
        g.style.display = "";
        g.classList.add("parent");
        place(g, XPAD, W);
      } else {
        g.style.display = "none";
      }
    });
    svg.setAttribute("data-zoomed", target.getAttribute("id"));
    reset.style.display = "";
  }
  function unzoom() {
    frames.forEach(function (g) {
      g.style.display = "";
      g.classList.remove("parent");
      place(g, XPAD + num(g, "data-x"), num(g, "data-w"));
    });
    svg.removeAttribute("data-zoomed");
    reset.style.display = "none";
  }
  frames.forEach(function (g) {
    g.addEventListener("click", function () {
      if (num(g, "data-depth") === 0) { unzoom(); } else { zoom(g); }
    });
    g.addEventListener("mouseover", function () {
      details.textContent = g.querySelector("title").textContent;
    });
    g.addEventListener("mouseout", function () { details.textContent = " "; });
  });
  reset.addEventListener("click", unzoom);
  svg.flamegraph = { zoom: zoom, unzoom: unzoom };
})();
"""


class Node:
    __slots__ = ("name", "value", "children")

    def __init__(self, name):
        self.name = name
        self.value = 0
        self.children = {}


def read_folded(path):
    root = Node("all")
    bad = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                bad += 1
                continue
            n = int(count)
            frames = [fr for fr in stack.split(";") if fr]
            if not frames:
                bad += 1
                continue
            root.value += n
            node = root
            for fr in frames:
                child = node.children.get(fr)
                if child is None:
                    child = node.children[fr] = Node(fr)
                child.value += n
                node = child
    return root, bad


def colour(name):
    h = int(hashlib.md5(name.encode("utf-8", "replace")).hexdigest()[:8], 16)
    v1, v2 = (h & 0xFF) / 255.0, ((h >> 8) & 0xFF) / 255.0
    if name == "all":
        return "rgb(200,200,200)"
    if name.startswith("["):
        return f"rgb({150 + int(40 * v1)},{150 + int(40 * v1)},{150 + int(40 * v1)})"
    if name.endswith("_[k]"):
        return f"rgb({220 + int(35 * v1)},{130 + int(50 * v2)},40)"
    if name.startswith("wl_"):
        return f"rgb({60 + int(50 * v1)},{140 + int(60 * v2)},{210 + int(40 * v1)})"
    return f"rgb({205 + int(50 * v1)},{int(200 * v2)},{int(55 * v1)})"


def fit_label(name, width):
    fit = int((width - 6) // CHAR_W)
    if fit < 3:
        return ""
    return name if len(name) <= fit else name[:fit - 2] + ".."


def render(root, title, subtitle, width, countname="samples"):
    inner = width - 2 * XPAD
    scale = inner / root.value
    boxes = []   # (depth, x, w, node)
    max_depth = 0

    def walk(node, depth, x):
        nonlocal max_depth
        w = node.value * scale
        if w < MIN_W:
            return
        boxes.append((depth, x, w, node))
        max_depth = max(max_depth, depth)
        cx = x
        for name in sorted(node.children):
            child = node.children[name]
            walk(child, depth + 1, cx)
            cx += child.value * scale

    walk(root, 0, 0.0)
    top = 60
    height = top + (max_depth + 1) * FRAME_H + 40
    total = root.value
    out = [
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
        f'<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" class="flamegraph" '
        f'data-inner-width="{inner:.2f}" data-xpad="{XPAD}" data-char-w="{CHAR_W}" '
        f'data-total-samples="{total}">',
        "<style>"
        f"text {{ font-family: monospace; font-size: {FONT_SIZE}px; fill: #000; }}"
        " g.frame { cursor: pointer; } g.frame:hover rect { stroke: #000; stroke-width: 0.5; }"
        " g.parent rect { opacity: 0.5; } #reset { cursor: pointer; fill: #06c; }"
        " .title { font-size: 16px; } .subtitle { fill: #555; }"
        "</style>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#f8f8f0"/>',
        f'<text class="title" x="{width / 2:.0f}" y="20" text-anchor="middle">'
        f"{escape(title)}</text>",
        f'<text class="subtitle" x="{width / 2:.0f}" y="38" text-anchor="middle">'
        f"{escape(subtitle)}</text>",
        f'<text id="reset" x="{XPAD}" y="20" style="display:none">Reset zoom</text>',
        f'<text id="details" x="{XPAD}" y="{height - 12}"> </text>',
        '<g id="frames">',
    ]
    for i, (depth, x, w, node) in enumerate(boxes):
        y = height - 40 - (depth + 1) * FRAME_H
        pct = 100.0 * node.value / total
        unit = countname[:-1] if node.value == 1 and countname.endswith("s") else countname
        samples = f"{node.value:,} {unit}"
        tip = f"{node.name} ({samples}, {pct:.2f}%)"
        out.append(
            f'<g class="frame" id="f{i}" data-x="{x:.4f}" data-w="{w:.4f}" '
            f'data-depth="{depth}" data-samples="{node.value}">'
            f"<title>{escape(tip)}</title>"
            f'<rect x="{XPAD + x:.2f}" y="{y}" width="{w:.2f}" height="{FRAME_H - 1}" '
            f'fill="{colour(node.name)}" rx="2" ry="2"/>'
            f'<text x="{XPAD + x + 3:.2f}" y="{y + FRAME_H - 4}">'
            f"{escape(fit_label(node.name, w))}</text></g>")
    out.append("</g>")
    out.append(f'<script type="text/ecmascript"><![CDATA[{SCRIPT}]]></script>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description="Folded stacks to an interactive SVG flame graph.")
    ap.add_argument("folded")
    ap.add_argument("-o", "--output")
    ap.add_argument("--title", default="Flame graph")
    ap.add_argument("--subtitle", default="")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--countname", default="samples", help="what the counts are (default samples)")
    a = ap.parse_args()
    if a.width < 200:
        print("flamegraph.py: --width must be at least 200", file=sys.stderr)
        return 2
    try:
        root, bad = read_folded(a.folded)
    except OSError as e:
        print(f"flamegraph.py: {a.folded}: {e.strerror}", file=sys.stderr)
        return 2
    if root.value == 0:
        print(f"flamegraph.py: {a.folded}: no samples (expected 'frame;frame COUNT' lines)",
              file=sys.stderr)
        return 2
    if bad:
        print(f"flamegraph.py: warning: {bad} malformed lines skipped", file=sys.stderr)
    svg = render(root, a.title, a.subtitle, a.width, a.countname)
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(svg)
    else:
        sys.stdout.write(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())

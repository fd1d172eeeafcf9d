#!/usr/bin/env python3
"""Plot peak memory against object count from a people-scale.sh result, as a hand-written SVG.

    Benchmarks/scripts/plot-memory.py [RESULTS.tsv] [-o Benchmarks/results/peak-memory.svg]

RESULTS.tsv defaults to the newest Benchmarks/results/*-people-scale.tsv. One panel per scenario; in
each, one colour per tool (moult-lmdb, moult-memory, sql-floor), a solid line for peak RssAnon (the
figure Moult bounds) and a dashed one for peak total RSS (RssAnon + file-backed pages of the LMDB and
SQLite maps, which the kernel can reclaim). The x axis is the source's object count, logarithmic; the
dotted line is the 100 MiB bound on RssAnon. No plotting library: plain SVG text.
"""
import csv, glob, math, os, sys
from xml.sax.saxutils import escape

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
COLOURS = {"moult-lmdb": "#1f77b4", "moult-memory": "#d62728", "sql-floor": "#2ca02c"}
TITLES = {"v1-v3": "People v1 → v3", "v2-v3": "People v2 → v3 (address split)",
          "v3-v4": "People v3 → v4 (Adult/Child split)"}
PANEL_W, PANEL_H = 560, 340
MARGIN_L, MARGIN_R, MARGIN_T, MARGIN_B = 70, 20, 40, 50
BOUND_MIB = 100


def nice_ceiling(value):
    """The next 'round' number above value (1, 2, 5 × 10^k)."""
    if value <= 0:
        return 1
    exponent = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if value <= step * exponent:
            return step * exponent
    return 10 * exponent


def fmt_count(n):
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if n >= size:
            v = n / size
            return f"{v:g}{unit}"
    return str(int(n))


def panel(scenario, rows, x0, y0):
    out = []
    sizes = sorted({int(r["size"]) for r in rows})
    objects = {int(r["size"]): int(r["objects"]) for r in rows}
    xs = [objects[s] for s in sizes]
    lo, hi = math.log10(min(xs)), math.log10(max(xs))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    lo, hi = math.floor(lo), math.ceil(hi)
    ymax = nice_ceiling(max([BOUND_MIB * 1.1] + [float(r["peak_total_mib"]) for r in rows]))
    plot_w = PANEL_W - MARGIN_L - MARGIN_R
    plot_h = PANEL_H - MARGIN_T - MARGIN_B

    def px(count):
        return x0 + MARGIN_L + (math.log10(count) - lo) / (hi - lo) * plot_w

    def py(mib):
        return y0 + MARGIN_T + plot_h - mib / ymax * plot_h

    left, right, top, bottom = x0 + MARGIN_L, x0 + MARGIN_L + plot_w, y0 + MARGIN_T, y0 + MARGIN_T + plot_h
    out.append(f'<text x="{x0 + PANEL_W / 2}" y="{y0 + 22}" text-anchor="middle" font-size="15" '
               f'font-weight="bold">{escape(TITLES.get(scenario, scenario))}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')
    # x axis: decades, with the measured sizes labelled.
    for decade in range(lo, hi + 1):
        x = px(10 ** decade)
        out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="#ddd"/>')
        out.append(f'<text x="{x}" y="{bottom + 18}" text-anchor="middle" font-size="12">{fmt_count(10 ** decade)}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{bottom + 38}" text-anchor="middle" font-size="12">'
               f'objects in the source (log scale)</text>')
    # y axis: five ticks.
    for i in range(6):
        mib = ymax * i / 5
        y = py(mib)
        out.append(f'<line x1="{left}" y1="{y}" x2="{right}" y2="{y}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4}" text-anchor="end" font-size="12">{mib:g}</text>')
    out.append(f'<text x="{x0 + 18}" y="{top + plot_h / 2}" text-anchor="middle" font-size="12" '
               f'transform="rotate(-90 {x0 + 18} {top + plot_h / 2})">peak memory (MiB)</text>')
    y = py(BOUND_MIB)
    out.append(f'<line x1="{left}" y1="{y}" x2="{right}" y2="{y}" stroke="#888" stroke-dasharray="2,3"/>')
    out.append(f'<text x="{right - 4}" y="{y - 4}" text-anchor="end" font-size="11" fill="#666">'
               f'{BOUND_MIB} MiB bound on RssAnon</text>')
    # One solid (RssAnon) and one dashed (total RSS) polyline per tool.
    for tool in [t for t in COLOURS if any(r["tool"] == t for r in rows)]:
        colour = COLOURS[tool]
        series = sorted((int(r["objects"]), float(r["peak_anon_mib"]), float(r["peak_total_mib"]))
                        for r in rows if r["tool"] == tool)
        for index, dash in ((1, ""), (2, ' stroke-dasharray="6,4"')):
            points = " ".join(f"{px(s[0]):.1f},{py(s[index]):.1f}" for s in series)
            out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
            for s in series:
                out.append(f'<circle cx="{px(s[0]):.1f}" cy="{py(s[index]):.1f}" r="3" fill="{colour}"/>')
    return out


def legend(x, y, tools):
    out = []
    for i, tool in enumerate(tools):
        ly = y + i * 18
        out.append(f'<line x1="{x}" y1="{ly}" x2="{x + 24}" y2="{ly}" stroke="{COLOURS[tool]}" stroke-width="2"/>')
        out.append(f'<text x="{x + 30}" y="{ly + 4}" font-size="12">{tool}</text>')
    ly = y + len(tools) * 18 + 6
    out.append(f'<line x1="{x}" y1="{ly}" x2="{x + 24}" y2="{ly}" stroke="#333" stroke-width="2"/>')
    out.append(f'<text x="{x + 30}" y="{ly + 4}" font-size="12">peak RssAnon (heap)</text>')
    out.append(f'<line x1="{x}" y1="{ly + 18}" x2="{x + 24}" y2="{ly + 18}" stroke="#333" stroke-width="2" stroke-dasharray="6,4"/>')
    out.append(f'<text x="{x + 30}" y="{ly + 22}" font-size="12">peak total RSS (with file-backed pages)</text>')
    return out


def main():
    args = sys.argv[1:]
    output = os.path.join(ROOT, "Benchmarks", "results", "peak-memory.svg")
    if "-o" in args:
        i = args.index("-o")
        output = args[i + 1]
        del args[i:i + 2]
    if args:
        source = args[0]
    else:
        found = sorted(glob.glob(os.path.join(ROOT, "Benchmarks", "results", "*-people-scale.tsv")))
        if not found:
            sys.exit("plot-memory: no Benchmarks/results/*-people-scale.tsv; run people-scale.sh first")
        source = found[-1]
    with open(source) as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t")]
    if not rows:
        sys.exit(f"plot-memory: {source} holds no result")
    scenarios = []
    for r in rows:
        if r["scenario"] not in scenarios:
            scenarios.append(r["scenario"])
    tools = [t for t in COLOURS if any(r["tool"] == t for r in rows)]
    legend_w = 300
    width = PANEL_W * len(scenarios) + legend_w
    height = PANEL_H + 40
    body = []
    for i, scenario in enumerate(scenarios):
        body += panel(scenario, [r for r in rows if r["scenario"] == scenario], i * PANEL_W, 20)
    body += legend(PANEL_W * len(scenarios) + 10, 80, tools)
    body.append(f'<text x="10" y="16" font-size="12" fill="#555">{escape(os.path.relpath(source, ROOT))}: '
                f'peak memory against object count (people-scale.sh, chunk size 10,000)</text>')
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif">\n'
           f'<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n")
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    with open(output, "w") as f:
        f.write(svg)
    print(f"plot-memory: wrote {os.path.relpath(os.path.abspath(output), ROOT)} from {os.path.relpath(source, ROOT)}")


main()

"""strperf_report -- everything strperf writes: CSV, JSON, Markdown tables,
charts, report.md, report.html and summary.md.

How this works

  The runner hands over the raw points (one dict per strperf-point run)
  and a description of the machine and the run (meta).  write_all() derives
  the aggregates and fits (strperf_stats), then writes:

    results.csv / results.json     every point, nothing dropped
    tables/raw_<test>.md           the papers' raw-data layout
    charts/<test>_{perf,delay,thrput,comp,paper}.{png,svg}
    report.md, report.html         the same document twice; the HTML
                                   embeds its images (base64), so it is
                                   one self-contained file
    summary.md                     a table small enough for a README

  The report is built once as a list of blocks (Doc) and rendered to both
  Markdown and HTML, so the two never disagree.  Published numbers come
  from the papers' raw tables in paper-data/ (each CSV's first line cites
  its source).  matplotlib is imported only when charts are drawn; without
  it make_charts() raises ChartsUnavailable with a message saying how to
  install it.
"""

import base64
import csv
import glob
import html
import json
import os
import re

import strperf_stats as st

HERE = os.path.dirname(os.path.abspath(__file__))
PAPER_DIR = os.path.join(HERE, "paper-data")

CITE_UDP = ("B. Bidulock, \"STREAMS versus Sockets Performance Comparison "
            "for User Datagram Protocol: Experimental Test Results for "
            "Linux\", OpenSS7 Corporation, 2007 (seeds/001, seeds/003)")
CITE_SCTP = ("B. Bidulock, \"STREAMS vs. Sockets Performance Comparison for "
             "SCTP\" (strsctp paper), OpenSS7 Corporation, June 2007 "
             "(seeds/000)")
CITE_TIPC = ("\"TIPC 1.7.3 throughput\" write-size sweep over Gigabit "
             "Ethernet, 2007 (seeds/004)")

# Published curves: which paper CSVs belong to which of our tests, the
# column that is their sockets baseline, and the columns to compare.
PAPER_SETS = {
    "UDP_STREAM": {
        "glob": "udp_*.csv", "base": "sockets_rx", "cite": CITE_UDP,
        "curves": {"tpi_rx": "STREAMS TPI UDP (XTI)",
                   "xtios_rx": "STREAMS XTI over sockets UDP"},
    },
    "TCP_STREAM": {
        "glob": "tcp_sctp_*.csv", "base": "tcp_sockets_normal_rx",
        "cite": CITE_SCTP,
        "curves": {"tcp_xtios_rx": "STREAMS XTI over sockets TCP",
                   "sctp_xti_rx": "STREAMS SCTP (XTI)",
                   "tcp_sockets_artificial_rx":
                       "TCP sockets, sender nice -20, receiver +19"},
    },
}

# Our implementation that measures the same thing as a published column.
PAPER_MATCH = {
    ("TCP_STREAM", "sockets-nice"): "tcp_sockets_artificial_rx",
    ("UDP_STREAM", "xti"): "tpi_rx",
    ("UDP_STREAM", "tpi"): "tpi_rx",
    ("UDP_STREAM", "xtios"): "xtios_rx",
    ("TCP_STREAM", "xtios"): "tcp_xtios_rx",
    ("TCP_STREAM", "sctp"): "sctp_xti_rx",
}

# What the papers call our rows.
PAPER_TERMS = {
    "sockets": "Sockets, normal priorities",
    "sockets-nice": "Sockets, artificial priorities (netperf_nice2)",
    "xtios": "STREAMS XTI over Sockets (XTIoS)",
    "tpi": "STREAMS XTI/TPI",
}

# Implementations that are not STREAMS: the baselines.
NON_STREAMS = {"sockets", "sockets-nice", "pipe", "socketpair"}

BASELINE = {"udp": "sockets", "tcp": "sockets", "pipe": "pipe"}

TEST_TEXT = {
    "UDP_STREAM": "datagrams one way as fast as the sender can send "
                  "(netperf UDP_STREAM; papers seeds/001, seeds/003)",
    "TCP_STREAM": "a byte stream one way, one write per message "
                  "(netperf TCP_STREAM; paper seeds/000)",
    "UDP_RR": "request/response round trips of one datagram each way "
              "(netperf UDP_RR)",
    "TCP_RR": "request/response round trips over one connection "
              "(netperf TCP_RR)",
    "PIPE_STREAM": "bytes one way between two processes over a local "
                   "channel (the STREAMS-pipes experiment)",
}

CSV_FIELDS = ["test", "impl", "bufsize", "msg_size", "rep", "status",
              "tx_msgs", "rx_msgs", "tx_per_s", "rx_per_s", "tx_bytes",
              "rx_bytes", "elapsed", "loss_pct", "tx_fail", "rx_waitall",
              "load1", "note"]
AGG_FIELDS = ["tx_min", "tx_median", "tx_max", "rx_min", "rx_median",
              "rx_max"]


class ChartsUnavailable(RuntimeError):
    pass


# ---------------------------------------------------------------- helpers

def fmt_int(v):
    return "{:,}".format(int(round(v))) if st.is_finite(v) else "-"


def fmt_m(v):
    """Messages per second in millions, for small tables."""
    if not st.is_finite(v):
        return "-"
    return "%.2f M" % (v / 1e6) if v >= 1e5 else "{:,}".format(int(round(v)))


def fmt_pct(v):
    return ("%+.1f%%" % v) if st.is_finite(v) else "-"


def _cap(text):
    return text[:1].upper() + text[1:]


def fmt_size(n):
    return "%d" % n


def file_suffix(bufsize, multi):
    return "_b%d" % bufsize if multi else ""


def baseline_of(test, impls, families):
    fam = families.get(test, "")
    b = BASELINE.get(fam)
    if b in impls:
        return b
    return impls[0] if impls else None


def loss_pct(p):
    t = float(p.get("tx_msgs") or 0)
    r = float(p.get("rx_msgs") or 0)
    return 100.0 * (t - r) / t if t > 0 else 0.0


# ------------------------------------------------------------- paper data

def load_paper_csv(path):
    """(citation line, list of row dicts with numbers) of one paper CSV."""
    with open(path, newline="") as f:
        first = f.readline()
        if not first.startswith("#"):
            raise ValueError("%s: first line must cite the source" % path)
        rows = []
        for r in csv.DictReader(f):
            rows.append({k: float(v) for k, v in r.items()})
    return first[1:].strip(), rows


def distro_of(citation, path):
    m = re.search(r'table "([^"]*)"', citation)
    name = m.group(1) if m else os.path.basename(path)
    name = name.replace(" Raw Data", "").replace("\\_", "_")
    return name


def published_curves(test, paper_dir=PAPER_DIR):
    """Published improvement curves for a test: list of dicts with column,
    desc, distro, sizes, pct, file, citation."""
    ps = PAPER_SETS.get(test)
    if not ps:
        return []
    out = []
    for path in sorted(glob.glob(os.path.join(paper_dir, ps["glob"]))):
        cite, rows = load_paper_csv(path)
        for col, desc in ps["curves"].items():
            sizes, pct = [], []
            for r in rows:
                v = st.improvement_pct(r.get(col), r.get(ps["base"]))
                if v is not None:
                    sizes.append(int(r["msg_size"]))
                    pct.append(v)
            if sizes:
                out.append({"column": col, "desc": desc,
                            "distro": distro_of(cite, path),
                            "sizes": sizes, "pct": pct,
                            "file": os.path.basename(path),
                            "citation": cite})
    return out


def published_summary(curves):
    """Per published column: (min, median, max) over distros of the mean
    improvement below 1024 bytes."""
    by = {}
    for c in curves:
        lo, _ = st.split_mean(list(zip(c["sizes"], c["pct"])))
        if lo is not None:
            by.setdefault(c["column"], (c["desc"], []))[1].append(lo)
    out = {}
    for col, (desc, vals) in by.items():
        s = st.summarize(vals)
        out[col] = {"desc": desc, "min": s["min"], "median": s["median"],
                    "max": s["max"], "n": s["n"]}
    return out


# ----------------------------------------------------------------- writers

def write_results_csv(path, points, aggs, repeat):
    """One row per measured point; with repeat > 1 each row also carries
    its group's min/median/max."""
    by_key = {(a["test"], a["impl"], a["bufsize"], a["msg_size"]): a
              for a in aggs}
    fields = list(CSV_FIELDS) + (AGG_FIELDS if repeat > 1 else [])
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for p in points:
            row = {k: p.get(k, "") for k in CSV_FIELDS}
            row["loss_pct"] = ("%.4f" % loss_pct(p)
                               if p.get("status") == "ok" else "")
            if isinstance(row["rx_waitall"], bool):
                row["rx_waitall"] = int(row["rx_waitall"])
            if repeat > 1:
                a = by_key.get(st.key_of(p), {})
                for k in AGG_FIELDS:
                    v = a.get(k, "")
                    row[k] = round(v, 1) if isinstance(v, float) else v
            w.writerow(row)


def write_results_json(path, meta, points, aggs, fits):
    doc = {"meta": meta, "points": points, "aggregates": aggs,
           "delay_fits": fits}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


def raw_table(aggs, test, bufsize, impls, max_size=None, sizes=None):
    """Header and rows of the papers' raw-data table (message size, then
    Tx and Rx of each implementation; medians when repeated)."""
    header = ["Message size"]
    for i in impls:
        header += ["%s Tx" % i, "%s Rx" % i]
    by = {(a["impl"], a["msg_size"]): a for a in aggs
          if a["test"] == test and a["bufsize"] == bufsize}
    sizes = sorted(set(sizes or []) |
                   {a["msg_size"] for a in aggs
                    if a["test"] == test and a["bufsize"] == bufsize})
    rows = []
    for s in sizes:
        row = [fmt_size(s)]
        for i in impls:
            a = by.get((i, s))
            if a is None:
                cell = ["n/a"] * 2 if max_size and s > max_size else ["-"] * 2
            elif a["n_ok"] == 0:
                cell = ["skipped" if a["n_skipped"] else "error"] * 2
            else:
                mark = ""
                sp = st.spread_pct(a)
                if sp is not None and sp > 10:
                    mark = " *"
                if a["n_error"] or a["n_skipped"]:
                    mark += " !"
                cell = [fmt_int(a["tx_median"]) + mark,
                        fmt_int(a["rx_median"]) + mark]
            row += cell
        rows.append(row)
    return header, rows


def rep_table(aggs, test, bufsize, impls):
    """Per size and implementation: Rx min / median / max and how many
    repetitions measured (n ok of n)."""
    by = {(a["impl"], a["msg_size"]): a for a in aggs
          if a["test"] == test and a["bufsize"] == bufsize}
    header = ["Message size"] + ["%s (min / median / max, ok)" % i
                                 for i in impls]
    rows = []
    for s in sorted({a["msg_size"] for a in by.values()}):
        row = [fmt_size(s)]
        for i in impls:
            a = by.get((i, s))
            if a is None:
                row.append("-")
            elif not a["n_ok"]:
                row.append("skipped" if a["n_skipped"] and not a["n_error"]
                           else "error")
            else:
                sp = st.spread_pct(a)
                row.append("%s / %s / %s (%d/%d)%s" % (
                    fmt_int(a["rx_min"]), fmt_int(a["rx_median"]),
                    fmt_int(a["rx_max"]), a["n_ok"], a["n"],
                    " spread %.0f%%" % sp if sp is not None else ""))
        rows.append(row)
    return header, rows


def buffer_table(points, test, bufsize, impls):
    """What each implementation's ends were granted for --bufsizes (from
    the measured points): header, rows."""
    def say(vals):
        vals = sorted({v for v in vals if isinstance(v, int)})
        if not vals:
            return "-"
        if vals == [-1]:
            return "not settable / not reported"
        return ", ".join("%d" % v if v >= 0 else "not reported"
                         for v in vals)
    rows = []
    for i in impls:
        ok = [p for p in points if p.get("test") == test and
              p.get("impl") == i and p.get("bufsize") == bufsize and
              p.get("status") == "ok"]
        if not ok:
            continue
        rows.append([i, "%d" % bufsize if bufsize else "system default",
                     say(p.get("tx_sndbuf") for p in ok),
                     say(p.get("rx_rcvbuf") for p in ok)])
    return (["impl", "asked", "sender's send buffer granted",
             "receiver's receive buffer granted"], rows)


def grouped_notes(aggs, test, bufsize, impls):
    """The runs' notes, one line per (implementation, note) with the sizes
    it came from, so a row skipped at every size says so once."""
    order = {i: n for n, i in enumerate(impls)}
    groups = {}
    for a in aggs:
        if a["test"] == test and a["bufsize"] == bufsize:
            for n in a["notes"]:
                groups.setdefault((a["impl"], n), []).append(a["msg_size"])
    planned = {}
    for a in aggs:
        if a["test"] == test and a["bufsize"] == bufsize:
            planned.setdefault(a["impl"], set()).add(a["msg_size"])
    out = []
    for (i, n), sizes in sorted(groups.items(), key=lambda kv: (
            order.get(kv[0][0], 99), min(kv[1]))):
        where = ("every size" if set(sizes) == planned.get(i) and
                 len(sizes) > 1 else fmt_sizes(sorted(sizes)))
        out.append("%s, %s: %s" % (i, where, n))
    return out


def md_table(header, rows, align=None):
    align = align or (["r"] * len(header))
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---:" if a == "r" else ":---" for a in align) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ charts

def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ChartsUnavailable(
            "matplotlib is needed for the charts (%s); install it with "
            "'python3 -m pip install matplotlib', or pass --no-charts" % e)
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "strperf",
                         "figure.dpi": 100})
    return plt


def charts_available():
    try:
        _pyplot()
        return True
    except ChartsUnavailable:
        return False


def _save(plt, fig, outdir, name):
    png = os.path.join(outdir, name + ".png")
    svg = os.path.join(outdir, name + ".svg")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    fig.savefig(svg, metadata={"Date": None})
    plt.close(fig)
    return png, svg


def _log2_axis(ax):
    ax.set_xscale("log", base=2)
    ax.set_xlabel("Message size (bytes)")
    ax.grid(True, which="major", alpha=0.3)


def make_charts(outdir, aggs, test, bufsize, impls, baseline, fits,
                suffix="", paper=None, machine=""):
    """The papers' four charts (and the published comparison when there
    are published curves); returns {kind: (png, svg)}."""
    plt = _pyplot()
    os.makedirs(outdir, exist_ok=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color = {i: colors[n % len(colors)] for n, i in enumerate(impls)}
    base = test.lower() + suffix
    sub = "%s, buffers %s" % (machine, bufsize or "default")
    files = {}

    def agg_of(i):
        return sorted((a for a in aggs if a["test"] == test and
                       a["impl"] == i and a["bufsize"] == bufsize and
                       a["n_ok"] > 0), key=lambda a: a["msg_size"])

    # performance: messages per second against log size, Tx dashed
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for i in impls:
        a = agg_of(i)
        if not a:
            continue
        x = [r["msg_size"] for r in a]
        ax.plot(x, [r["rx_median"] for r in a], "o-", color=color[i],
                label="%s Rx" % i)
        ax.plot(x, [r["tx_median"] for r in a], "x--", color=color[i],
                alpha=0.7, label="%s Tx" % i)
        if any(r["n_ok"] > 1 for r in a):
            ax.fill_between(x, [r["rx_min"] for r in a],
                            [r["rx_max"] for r in a], color=color[i],
                            alpha=0.15, linewidth=0)
    _log2_axis(ax)
    ax.set_ylabel("Messages per second")
    ax.set_ylim(bottom=0)
    ax.set_title("%s performance\n%s" % (test, sub), fontsize=10)
    ax.legend(fontsize=8)
    files["perf"] = _save(plt, fig, outdir, base + "_perf")

    # delay: seconds per message against size, with the fitted line; a
    # point far above the rest (a row that delivered almost nothing) is
    # drawn at the top edge with its value, so the others stay readable
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    ally = [1e6 / r["rx_median"] for i in impls for r in agg_of(i)
            if r["rx_median"] > 0]
    top = delay_axis_top(ally)
    for i in impls:
        a = agg_of(i)
        if not a:
            continue
        x = [r["msg_size"] for r in a]
        y = [1e6 / r["rx_median"] if r["rx_median"] > 0 else float("nan")
             for r in a]
        ax.plot([u for u, v in zip(x, y) if v <= top],
                [v for v in y if v <= top], "o", color=color[i],
                label="%s" % i)
        for u, v in zip(x, y):
            if v > top:
                ax.plot([u], [top], "^", color=color[i], clip_on=False)
                ax.annotate("%s: %.0f us (off scale)" % (i, v), (u, top),
                            textcoords="offset points", xytext=(-4, -12),
                            ha="right", fontsize=7, color=color[i])
        f = fits.get(i)
        if f:
            xs = [0, max(x)]
            ax.plot(xs, [1e6 * (f["intercept"] + f["slope"] * v) for v in xs],
                    "-", color=color[i], alpha=0.7,
                    label="%s fit: %.3f us + %.4f ns/B" %
                    (i, f["intercept"] * 1e6, f["slope"] * 1e9))
    ax.set_xlabel("Message size (bytes)")
    ax.set_ylabel("Delay per message (microseconds)")
    ax.set_ylim(0, top * 1.02)
    ax.grid(True, alpha=0.3)
    ax.set_title("%s delay\n%s" % (test, sub), fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    files["delay"] = _save(plt, fig, outdir, base + "_delay")

    # throughput: log bytes per second against log size
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for i in impls:
        a = agg_of(i)
        if not a:
            continue
        x = [r["msg_size"] for r in a]
        ax.plot(x, [r["rx_median"] * r["msg_size"] for r in a], "o-",
                color=color[i], label="%s Rx" % i)
    _log2_axis(ax)
    ax.set_yscale("log")
    ax.set_ylabel("Bytes per second delivered")
    ax.set_title("%s throughput\n%s" % (test, sub), fontsize=10)
    ax.legend(fontsize=8)
    files["thrput"] = _save(plt, fig, outdir, base + "_thrput")

    # improvement over the baseline
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    ax.axhline(0, color="black", linewidth=0.8)
    drawn = 0
    for i in impls:
        if i == baseline:
            continue
        s = st.improvement_series(aggs, test, i, baseline, bufsize)
        if s:
            ax.plot([p[0] for p in s], [p[1] for p in s], "o-",
                    color=color[i], label="%s over %s" % (i, baseline))
            drawn += 1
    if not drawn:
        ax.text(0.5, 0.5, "only %s was measured:\nnothing to compare" %
                baseline, transform=ax.transAxes, ha="center", va="center")
    else:
        ax.legend(fontsize=8)
    _log2_axis(ax)
    ax.set_ylabel("Improvement over %s (%%)" % baseline)
    ax.set_title("%s improvement (Rx)\n%s" % (test, sub), fontsize=10)
    files["comp"] = _save(plt, fig, outdir, base + "_comp")

    # this machine's improvement beside the published curves
    if paper:
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
        ax.axhline(0, color="black", linewidth=0.8)
        cols = sorted({c["column"] for c in paper})
        # a published column in the colour of our row that measures the
        # same thing (PAPER_MATCH), dashed and lighter
        ours = {PAPER_MATCH[(test, i)]: i for i in impls
                if (test, i) in PAPER_MATCH}
        pcol = {c: color[ours[c]] if c in ours else
                colors[(n + len(impls)) % len(colors)]
                for n, c in enumerate(cols)}
        seen = set()
        for c in paper:
            lab = None
            if c["column"] not in seen:
                seen.add(c["column"])
                lab = "paper: %s (%d machines)" % (
                    c["desc"], sum(1 for d in paper
                                   if d["column"] == c["column"]))
            ax.plot(c["sizes"], c["pct"], "--", color=pcol[c["column"]],
                    alpha=0.45, linewidth=1, label=lab)
        for i in impls:
            if i == baseline:
                continue
            s = st.improvement_series(aggs, test, i, baseline, bufsize)
            if s:
                ax.plot([p[0] for p in s], [p[1] for p in s], "o-",
                        color=color[i], linewidth=2.5,
                        label="this machine: %s over %s" % (i, baseline))
        _log2_axis(ax)
        ax.set_ylabel("Improvement over sockets (%)")
        ax.set_title("%s: this machine against the published results\n%s"
                     % (test, sub), fontsize=10)
        ax.legend(fontsize=7)
        files["paper"] = _save(plt, fig, outdir, base + "_paper")
    return files


def delay_axis_top(values, factor=4.0):
    """Top of the delay axis: the largest value, unless it is more than
    factor times the 75th percentile of all of them (then that)."""
    v = sorted(x for x in values if st.is_finite(x))
    if not v:
        return 1.0
    q3 = v[min(len(v) - 1, int(0.75 * len(v)))]
    return v[-1] if v[-1] <= factor * q3 or q3 <= 0 else factor * q3


def boundary_clusters(boundaries, sizes, gap=64):
    """Group nearby boundaries; each cluster: (boundaries, sizes near)."""
    out = []
    for b in sorted(boundaries):
        if out and b - out[-1][0][-1] <= gap:
            out[-1][0].append(b)
        else:
            out.append([[b], []])
    for c in out:
        lo, hi = c[0][0] - gap, c[0][-1] + gap
        c[1] = sorted(x for x in sizes if lo <= x <= hi)
    return [(c[0], c[1]) for c in out if c[1]]


def make_sweep_chart(outdir, aggs, test, bufsize, impls, boundaries,
                     suffix="", machine=""):
    """Rx messages/s on a linear size axis around each boundary."""
    plt = _pyplot()
    os.makedirs(outdir, exist_ok=True)
    sizes = sorted({a["msg_size"] for a in aggs if a["test"] == test and
                    a["bufsize"] == bufsize and a["n_ok"] > 0})
    clusters = boundary_clusters(boundaries, sizes)
    if not clusters:
        return None
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = plt.subplots(1, len(clusters), squeeze=False,
                             figsize=(max(6.5, 3.2 * len(clusters) + 1),
                                      4.4))
    for ax, (bs, near) in zip(axes[0], clusters):
        for n, i in enumerate(impls):
            ser = [(x, v) for x, v in st.series(aggs, test, i, bufsize)
                   if x in near]
            if ser:
                ax.plot([p[0] for p in ser], [p[1] for p in ser], "o-",
                        color=colors[n % len(colors)], markersize=3,
                        label=i)
        for b in bs:
            ax.axvline(b, color="grey", linestyle=":", linewidth=1)
        ax.set_title("around %s" % "/".join(str(b) for b in bs),
                     fontsize=9)
        ax.set_xlabel("Message size (bytes)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("Rx messages per second")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("%s around MTU boundaries\n%s, buffers %s" %
                 (test, machine, bufsize or "default"), fontsize=10)
    return _save(plt, fig, outdir, test.lower() + suffix + "_sweep")


# ------------------------------------------------------------- the document

class Doc:
    """A report as blocks, rendered to Markdown and to HTML."""

    def __init__(self):
        self.blocks = []

    def h(self, level, text):
        self.blocks.append(("h", level, text))

    def p(self, text):
        self.blocks.append(("p", text))

    def ul(self, items):
        self.blocks.append(("ul", list(items)))

    def table(self, header, rows, align=None):
        self.blocks.append(("table", header, rows, align))

    def img(self, path, alt):
        self.blocks.append(("img", path, alt))

    def pre(self, text):
        self.blocks.append(("pre", text))

    def markdown(self, relto):
        out = []
        for b in self.blocks:
            if b[0] == "h":
                out.append("#" * b[1] + " " + b[2] + "\n")
            elif b[0] == "p":
                out.append(b[1] + "\n")
            elif b[0] == "ul":
                out.append("".join("- %s\n" % i for i in b[1]))
            elif b[0] == "table":
                out.append(md_table(b[1], b[2], b[3]))
            elif b[0] == "img":
                out.append("![%s](%s)\n" %
                           (b[2], os.path.relpath(b[1], relto)))
            elif b[0] == "pre":
                out.append("```\n%s\n```\n" % b[1])
        return "\n".join(out)

    @staticmethod
    def _inline(text):
        t = html.escape(text, quote=False)
        t = re.sub(r"`([^`]+)`", r"<code>\1</code>", t)
        t = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", t)
        return t

    def html(self, title):
        out = ["<!DOCTYPE html>", "<html lang=\"en\"><head>",
               "<meta charset=\"utf-8\">",
               "<title>%s</title>" % html.escape(title),
               "<style>body{font-family:sans-serif;max-width:72em;margin:2em "
               "auto;padding:0 1em;line-height:1.4}table{border-collapse:"
               "collapse;margin:1em 0;font-size:90%}td,th{border:1px solid "
               "#bbb;padding:2px 6px}td{text-align:right}td.l{text-align:"
               "left}th{background:#eee}img{max-width:100%;border:1px solid "
               "#ddd;margin:.5em 0}code,pre{background:#f4f4f4}pre{padding:"
               ".5em;overflow-x:auto}figure{margin:0}</style>",
               "</head><body>"]
        for b in self.blocks:
            if b[0] == "h":
                out.append("<h%d>%s</h%d>" % (b[1], self._inline(b[2]), b[1]))
            elif b[0] == "p":
                out.append("<p>%s</p>" % self._inline(b[1]))
            elif b[0] == "ul":
                out.append("<ul>%s</ul>" % "".join(
                    "<li>%s</li>" % self._inline(i) for i in b[1]))
            elif b[0] == "table":
                align = b[3] or ["r"] * len(b[1])
                rows = ["<tr>%s</tr>" % "".join(
                    "<th>%s</th>" % self._inline(str(c)) for c in b[1])]
                for r in b[2]:
                    rows.append("<tr>%s</tr>" % "".join(
                        "<td%s>%s</td>" % (' class="l"' if a == "l" else "",
                                           self._inline(str(c)))
                        for a, c in zip(align, r)))
                out.append("<table>%s</table>" % "".join(rows))
            elif b[0] == "img":
                with open(b[1], "rb") as f:
                    data = base64.b64encode(f.read()).decode("ascii")
                out.append("<figure><img alt=\"%s\" src=\"data:image/png;"
                           "base64,%s\"><figcaption>%s</figcaption></figure>"
                           % (html.escape(b[2]), data, self._inline(b[2])))
            elif b[0] == "pre":
                out.append("<pre>%s</pre>" % html.escape(b[1]))
        out.append("</body></html>")
        return "\n".join(out) + "\n"


# ---------------------------------------------------------------- analysis

def analyse(points, meta):
    """Aggregates, fits and per-test facts shared by every output."""
    aggs = st.aggregate(points)
    tests = []
    for t in meta["tests"]:
        for b in meta["bufsizes"]:
            impls = [i for i in meta["impls"].get(t, [])
                     if any(a["test"] == t and a["impl"] == i and
                            a["bufsize"] == b for a in aggs)]
            if not impls:
                continue
            base = baseline_of(t, impls, meta.get("families", {}))
            fits = {}
            for i in impls:
                f = st.delay_fit(aggs, t, i, b)
                if f:
                    fits[i] = f
            tests.append({"test": t, "bufsize": b, "impls": impls,
                          "baseline": base, "fits": fits})
    return aggs, tests


def improvement_facts(aggs, t):
    """[(impl, mean % below 1024, mean % at >= 1024, n sizes)]."""
    out = []
    for i in t["impls"]:
        if i == t["baseline"]:
            continue
        s = st.improvement_series(aggs, t["test"], i, t["baseline"],
                                  t["bufsize"])
        lo, hi = st.split_mean(s)
        out.append((i, lo, hi, len(s)))
    return out


# A single measurement closer than this to the baseline is not a win or a
# loss: run-to-run noise on a shared machine is of this order.
TIE_PCT = 5.0


def streams_impls(t):
    """The STREAMS rows of a test, in the report's order."""
    return [i for i in t["impls"] if i not in NON_STREAMS]


def comparators(t):
    """What STREAMS is judged against: sockets for the network tests; a
    Linux pipe and a UNIX-domain socketpair for PIPE_STREAM."""
    out = [t["baseline"]] if t["baseline"] not in streams_impls(t) else []
    if (t["test"] == "PIPE_STREAM" and "socketpair" in t["impls"] and
            "socketpair" not in out):
        out.append("socketpair")
    return out


def _why_not(a):
    """Why a point has no number: the first note, or the status."""
    if a is None:
        return "not run"
    what = "skipped" if a["n_skipped"] and not a["n_error"] else "failed"
    return "%s (%s)" % (what, a["notes"][0]) if a["notes"] else what


def compare_sizes(aggs, t, impl, base):
    """impl against base at every size either was planned for: a list of
    dicts (size, state, pct, why).  state is "faster", "slower" or "even"
    (within TIE_PCT, or with repetitions: min..max ranges that overlap),
    or "no-data" (impl has no number at that size: why says why) or
    "no-base" (the baseline has none)."""
    by = {}
    for a in aggs:
        if a["test"] == t["test"] and a["bufsize"] == t["bufsize"]:
            by[(a["impl"], a["msg_size"])] = a
    sizes = sorted({s for (i, s) in by if i in (impl, base)})
    out = []
    for s in sizes:
        a, b = by.get((impl, s)), by.get((base, s))
        row = {"size": s, "pct": None, "why": None}
        if a is None or a["n_ok"] == 0:
            row.update(state="no-data", why=_why_not(a))
        elif b is None or b["n_ok"] == 0:
            row.update(state="no-base", why=_why_not(b))
        else:
            pct = st.improvement_pct(a["rx_median"], b["rx_median"])
            row["pct"] = pct
            if pct is None:
                row["state"] = "no-base"
                row["why"] = "baseline delivered nothing"
            elif a["n_ok"] >= 2 and b["n_ok"] >= 2:
                overlap = (a["rx_min"] <= b["rx_max"] and
                           b["rx_min"] <= a["rx_max"])
                row["state"] = ("even" if overlap else
                                "faster" if pct > 0 else "slower")
            else:
                row["state"] = ("even" if abs(pct) < TIE_PCT else
                                "faster" if pct > 0 else "slower")
        out.append(row)
    return out


def fmt_sizes(sizes):
    return ", ".join("%d" % s for s in sizes) + " B"


def _pct_range(rows):
    v = sorted(r["pct"] for r in rows)
    if len(v) == 1 or abs(v[0] - v[-1]) < 0.5:
        return "%.0f%%" % abs(v[0])
    return "%.0f%% to %.0f%%" % (abs(v[0]), abs(v[-1])) if v[0] >= 0 \
        else "%.0f%% to %.0f%%" % (abs(v[-1]), abs(v[0]))


def comparison_sentence(name, impl, base, rows):
    """One plain sentence: did impl beat base, at which sizes, by how
    much; or why it could not be judged."""
    have = [r for r in rows if r["pct"] is not None]
    if not have:
        whys = sorted({r["why"] for r in rows if r["why"]})
        return ("%s: %s was not measured at any size, so this run cannot "
                "say whether it beats %s: %s." %
                (name, impl, base, "; ".join(whys) or "no points"))
    parts = []
    fast = [r for r in have if r["state"] == "faster"]
    slow = [r for r in have if r["state"] == "slower"]
    even = [r for r in have if r["state"] == "even"]
    if fast:
        parts.append("faster at %s (by %s)" %
                     (fmt_sizes(r["size"] for r in fast), _pct_range(fast)))
    if slow:
        parts.append("slower at %s (by %s)" %
                     (fmt_sizes(r["size"] for r in slow), _pct_range(slow)))
    if even:
        parts.append("even at %s (%s)" %
                     (fmt_sizes(r["size"] for r in even),
                      ", ".join(fmt_pct(r["pct"]) for r in even)))
    if not slow and not even:
        head = "YES, %s beat %s at every measured size" % (impl, base)
    elif not fast:
        head = "NO, %s did not beat %s at any size" % (impl, base)
    else:
        head = "PARTLY, %s beat %s at %d of %d sizes" % (
            impl, base, len(fast), len(have))
    tail = ""
    missing = [r for r in rows if r["pct"] is None]
    if missing:
        tail = " Not compared at %s: %s." % (
            fmt_sizes(r["size"] for r in missing),
            "; ".join(sorted({r["why"] for r in missing})))
    return "%s: %s: %s.%s" % (name, head, "; ".join(parts), tail)


def why_sentence(name, fi, impl, fb, base):
    """The delay model's reading of a difference: cost per message (the
    fit's intercept) and per byte (its slope) of impl against base."""
    if not fi or not fb:
        return None
    loose = [x for x, f in ((impl, fi), (base, fb)) if f["r2"] < 0.5]
    return ("%s: why, by the delay model (seconds per message = per-message "
            "cost + per-byte cost x size): a message costs %.3f us on %s "
            "against %.3f us on %s, a byte %.4f ns against %.4f ns.%s" %
            (name, fi["intercept"] * 1e6, impl, fb["intercept"] * 1e6, base,
             fi["slope"] * 1e9, fb["slope"] * 1e9,
             (" The fit is loose for %s (r^2 below 0.5): read it as a "
              "rough guide." % " and ".join(loose)) if loose else ""))


def comparison_table(aggs, t):
    """Per size, each STREAMS row against each comparator: header, rows."""
    pairs = [(i, b) for i in streams_impls(t) for b in comparators(t)]
    if not pairs:
        return None, None
    cmp = {p: {r["size"]: r for r in compare_sizes(aggs, t, *p)}
           for p in pairs}
    sizes = sorted({s for c in cmp.values() for s in c})
    header = ["Message size"] + ["%s vs %s" % p for p in pairs]
    rows = []
    for s in sizes:
        row = [fmt_size(s)]
        for p in pairs:
            r = cmp[p].get(s)
            if r is None:
                row.append("-")
            elif r["state"] == "no-data":
                row.append(r["why"].split(" (")[0])
            elif r["state"] == "no-base":
                row.append("no %s number" % p[1])
            else:
                row.append("%s %s" % (fmt_pct(r["pct"]), r["state"]))
        rows.append(row)
    return header, rows


def headline(aggs, tests, meta):
    """One sentence: per test, at how many sizes each STREAMS row beat
    the baseline."""
    parts = []
    for t in tests:
        rows = []
        for i in streams_impls(t):
            c = [r for r in compare_sizes(aggs, t, i, t["baseline"])
                 if r["pct"] is not None]
            rows.append("%s %s" % (i, "%d/%d" % (
                sum(1 for r in c if r["state"] == "faster"), len(c))
                if c else "not measured"))
        if rows:
            parts.append("%s%s (vs %s): %s" % (
                t["test"], "" if len(meta["bufsizes"]) == 1 else
                " b%d" % t["bufsize"], t["baseline"], ", ".join(rows)))
    if not parts:
        return None
    return ("In short, sizes at which STREAMS was faster: %s." %
            "; ".join(parts))


def verdict(aggs, tests, meta, paper_summ):
    """Plain-language sentences generated from the numbers."""
    out = []
    h = headline(aggs, tests, meta)
    if h:
        out.append(h)
    measured = {(a["test"], a["impl"], a["bufsize"]) for a in aggs
                if a["n_ok"] > 0}

    def rows_where(want):
        """'TEST impl, impl; TEST impl' over the STREAMS rows."""
        parts = []
        for t in tests:
            got = [i for i in streams_impls(t)
                   if ((t["test"], i, t["bufsize"]) in measured) == want]
            if got:
                parts.append("%s%s %s" % (
                    t["test"], "" if len(meta["bufsizes"]) == 1 else
                    " (buffers %d)" % t["bufsize"], ", ".join(got)))
        return "; ".join(parts)
    streams = rows_where(True)
    unmeasured = rows_where(False)
    for t in tests:
        name = t["test"] + (" (buffers %d)" % t["bufsize"]
                            if len(meta["bufsizes"]) > 1 else "")
        for i in streams_impls(t):
            for b in comparators(t):
                out.append(comparison_sentence(
                    name, i, b, compare_sizes(aggs, t, i, b)))
                why = why_sentence(name, t["fits"].get(i), i,
                                   t["fits"].get(b), b)
                if why:
                    out.append(why)
        for i, lo, hi, n in improvement_facts(aggs, t):
            if lo is None and hi is None:
                if i not in streams_impls(t):
                    out.append("%s: %s has no size measured in common "
                               "with %s." % (name, i, t["baseline"]))
                continue
            parts = []
            if lo is not None:
                parts.append("delivers %.0f%% %s messages/s than %s below "
                             "1024 bytes" % (abs(lo),
                                             "more" if lo >= 0 else "fewer",
                                             t["baseline"]))
            if hi is not None:
                parts.append("%.0f%% %s at 1024 bytes and above" %
                             (abs(hi), "more" if hi >= 0 else "fewer"))
            o, n = overlap_count(aggs, t, i)
            tail = ""
            if n and o * 2 >= n:
                tail = (" The repetitions' ranges overlap at %d of %d sizes:"
                        " not a clear difference." % (o, n))
            elif n:
                tail = (" The repetitions' ranges overlap at %d of %d sizes."
                        % (o, n))
            out.append("%s: on this machine %s %s.%s" %
                       (name, i, "; ".join(parts), tail))
        # loss: what was sent but never delivered
        worst = max((a for a in aggs if a["test"] == t["test"] and
                     a["bufsize"] == t["bufsize"] and a["n_ok"] > 0),
                    key=lambda a: a.get("loss_pct_max", 0), default=None)
        if worst and worst.get("loss_pct_max", 0) > 0.001:
            out.append("%s: not everything sent was delivered; the worst "
                       "point lost %.2f%% (%s, %d bytes). Rx, what the "
                       "receiver got, is what every chart reports." %
                       (name, worst["loss_pct_max"], worst["impl"],
                        worst["msg_size"]))
        bad = [a for a in aggs if a["test"] == t["test"] and
               a["bufsize"] == t["bufsize"] and (a["n_error"] or
                                                  a["n_skipped"])]
        if bad:
            out.append("%s: %d point(s) were skipped or failed (%s); see "
                       "the notes under the table." %
                       (name, len(bad), ", ".join(sorted(
                           {a["impl"] for a in bad}))))
    for col, ours in (("tcp_sockets_artificial_rx",
                       ("TCP_STREAM", "sockets-nice")),):
        ps = paper_summ.get("TCP_STREAM", {}).get(col)
        t = next((x for x in tests if x["test"] == ours[0] and
                  ours[1] in x["impls"]), None)
        if ps and t:
            lo = dict((i, l) for i, l, h, n in improvement_facts(aggs, t)) \
                .get(ours[1])
            if lo is not None:
                out.append("The papers' artificial priorities (sender nice "
                           "-20, receiver +19) gave TCP sockets %.0f%% to "
                           "%.0f%% more messages/s below 1024 bytes on their "
                           "mostly uniprocessor machines (median %.0f%%); "
                           "here, with %s "
                           "cores, the same trick gives %.0f%%." %
                           (ps["min"], ps["max"], ps["median"],
                            meta["machine"].get("cores", "?"), lo))
    if (meta.get("placement", "free") == "free" and
            any(t["test"].endswith("_RR") for t in tests) and
            (meta["machine"].get("cores_usable") or
             meta["machine"].get("cores") or 1) > 1):
        out.append("The round-trip tests ran with sender and receiver "
                   "wherever Linux put them; on a multi-core machine "
                   "their rates change several-fold with whether the two "
                   "share a CPU. --placement same (or split) holds that "
                   "fixed.")
    if meta.get("repeat", 1) < 2:
        out.append("Each point was measured once. On a shared machine "
                   "differences of 10-20%% between single runs can be noise "
                   "(1-minute load before the points, about 2 of it "
                   "strperf's own: %s); run with "
                   "--repeat 3 or more before drawing conclusions." %
                   load_range(meta.get("_points", [])))
    if streams:
        out.append("STREAMS rows measured: %s." % streams)
    if unmeasured:
        out.append("STREAMS rows with no measured point (skipped or failed "
                   "at every size; no number is shown for them): %s." %
                   unmeasured)
    if not streams:
        out.append("No STREAMS implementation was measured in this run, so "
                   "it does not answer whether STREAMS is faster here. The "
                   "papers' claims (STREAMS TPI UDP 30-40% above sockets "
                   "below 1024 bytes; STREAMS TCP and SCTP 200-300% above "
                   "TCP sockets) are not tested by this report; the rows "
                   "above are the baseline the STREAMS rows must beat on "
                   "this machine.")
    return out


# ----------------------------------------------------------------- outputs

def load_range(points):
    v = [p["load1"] for p in points if st.is_finite(p.get("load1"))]
    if not v:
        return "?"
    return "%.2f .. %.2f (median %.2f)" % (min(v), max(v), st.median(v))


def overlap_count(aggs, t, impl):
    """(sizes where impl's and the baseline's min..max ranges overlap,
    sizes compared), over sizes with at least two good repetitions."""
    by = {}
    for a in aggs:
        if (a["test"] == t["test"] and a["bufsize"] == t["bufsize"] and
                a["n_ok"] >= 2):
            by[(a["impl"], a["msg_size"])] = a
    n = o = 0
    for (i, s), a in by.items():
        b = by.get((t["baseline"], s))
        if i != impl or b is None:
            continue
        n += 1
        if a["rx_min"] <= b["rx_max"] and b["rx_min"] <= a["rx_max"]:
            o += 1
    return o, n


def placement_text(meta):
    cpus = meta.get("cpus")
    if meta.get("placement") == "same" and cpus:
        return "same: sender and receiver both on CPU %s" % cpus[0]
    if meta.get("placement") == "split" and cpus:
        return "split: sender on CPU %s, receiver on CPU %s" % tuple(cpus)
    return "free: wherever Linux puts them (as netperf)"


def machine_line(m):
    return "%s, %s cores, Linux %s" % (m.get("cpu", "?"), m.get("cores", "?"),
                                       m.get("kernel", "?"))


def summary_md(aggs, tests, meta):
    lines = ["# strperf summary", "",
             "Messages per second delivered (Rx, median), %s; %s." %
             (machine_line(meta["machine"]), meta["date"]), "",
             "Command: `%s`" % meta["command"], ""]
    header = ["test", "impl"]
    cols = []
    allsizes = sorted({a["msg_size"] for a in aggs})
    if allsizes:
        cols = [allsizes[0]]
        mid = min(allsizes, key=lambda s: abs(s - 1024))
        if mid not in cols:
            cols.append(mid)
        if allsizes[-1] not in cols:
            cols.append(allsizes[-1])
    header += ["%d B" % s for s in cols] + ["vs baseline < 1024 B",
                                            "STREAMS faster than baseline"]
    rows = []
    for t in tests:
        facts = {i: lo for i, lo, hi, n in improvement_facts(aggs, t)}
        for i in t["impls"]:
            by = {a["msg_size"]: a for a in aggs if a["test"] == t["test"]
                  and a["impl"] == i and a["bufsize"] == t["bufsize"]}
            row = [t["test"] + ("" if len(meta["bufsizes"]) == 1 else
                                " b%d" % t["bufsize"]), i]
            for s in cols:
                a = by.get(s)
                row.append(fmt_m(a["rx_median"]) if a and a["n_ok"] else
                           ("skipped" if a and a["n_skipped"] and
                            not a["n_error"] else "error" if a else "-"))
            measured = any(a["n_ok"] for a in by.values())
            row.append("baseline" if i == t["baseline"] else
                       fmt_pct(facts.get(i)) if measured else
                       "not measured")
            won = ""
            if i in streams_impls(t) and t["baseline"] != i:
                c = [r for r in compare_sizes(aggs, t, i, t["baseline"])
                     if r["pct"] is not None]
                won = ("at %d of %d sizes" % (
                    sum(1 for r in c if r["state"] == "faster"), len(c))
                    if c else "not measured")
            row.append(won)
            rows.append(row)
    lines.append(md_table(header, rows,
                          ["l", "l"] + ["r"] * (len(header) - 2)))
    h = headline(aggs, tests, meta)
    if h:
        lines += [h, ""]
    return "\n".join(lines)


def build_report(outdir, points, meta, aggs, tests, charts, paper,
                 paper_summ):
    d = Doc()
    m = meta["machine"]
    d.h(1, "strperf: STREAMS vs sockets on this machine")
    d.p("Reproduces the netperf experiments of the OpenSS7 papers on this "
        "machine (loopback, 127.0.0.1 only). Generated %s." % meta["date"])
    if meta.get("partial"):
        d.p("**Partial run**: %d of %d planned points were measured (the "
            "run was interrupted or a point failed)." %
            (meta.get("measured_points", len(points)),
             meta.get("planned_points", 0)))
    d.h(2, "Machine and run")
    d.table(["", ""], [
        ["CPU", m.get("cpu", "?")], ["cores", m.get("cores", "?")],
        ["kernel", m.get("kernel", "?")], ["memory", m.get("memory", "?")],
        ["load before / after", "%s / %s" % (m.get("load_before", "?"),
                                             m.get("load_after", "?"))],
        ["1-min load before each point (strperf's own two busy "
         "processes count about 2)", load_range(points)],
        ["command", "`%s`" % meta["command"]],
        ["tests", ", ".join(meta["tests"])],
        ["message sizes", ", ".join(str(s) for s in meta["sizes"])],
        ["seconds per point", meta["testtime"]],
        ["socket/pipe buffers", ", ".join(str(b) for b in meta["bufsizes"])],
        ["repetitions", meta["repeat"]],
        ["receiver reads", "whole messages (MSG_WAITALL or a read loop: "
         "the receiver-side throughput mode; datagrams are whole anyway)"
         if meta.get("rx_waitall") else
         "one call of up to the message size"],
        ["placement", placement_text(meta)],
        ["wall time", "%.0f s" % meta.get("wall_s", 0)],
    ], ["l", "l"])
    d.h(2, "Verdict")
    d.p("Is STREAMS faster than sockets on this machine? Per test, each "
        "STREAMS row against the baseline (Rx, median over repetitions): "
        "faster or slower means more than %.0f%% apart (with repetitions: "
        "min..max ranges that do not overlap), even means closer than "
        "that. A skipped or failed point is never counted as a number." %
        TIE_PCT)
    d.ul(verdict(aggs, tests, dict(meta, _points=points), paper_summ))
    d.h(2, "Method")
    d.p("Each point is one run of `strperf-point`: a sender process sends "
        "messages of one size to a receiver process as fast as it can for "
        "the test time; then the receiver drains what is left and reports. "
        "Tx is messages sent per second, Rx messages received per second, "
        "both over the sender's measured time. Every implementation gets "
        "the same sizes, time and buffer size (SO_SNDBUF and SO_RCVBUF on both "
        "ends; XTI_SNDBUF and XTI_RCVBUF for XTI; F_SETPIPE_SZ for pipes; "
        "the STREAMS pipe's shared ring is fixed: each test's Buffers table "
        "shows what was granted). Byte streams count bytes received "
        "divided by the message size. Nothing is retried or filtered: every "
        "run is in results.csv, and with repetitions the tables show the "
        "median while the charts shade min..max. `n/a` marks a size "
        "beyond what the test allows (UDP: 65507 bytes). A `*` marks a "
        "point whose repetitions spread more than 10% around the median; "
        "`!` marks a point with a skipped or failed repetition.")
    d.p("Charts, as in the papers: performance (messages/s against log "
        "size, Tx dashed), delay (seconds per message against size, with a "
        "least-squares line: the intercept is the per-message cost, the "
        "slope the per-byte cost), throughput (log bytes/s against log "
        "size) and improvement (percent more Rx messages/s than the "
        "baseline at the same size).")
    if meta.get("sweep_mtu"):
        d.p("Sizes step finely around link-MTU boundaries (1472/1500 "
            "Ethernet, 4096 page and PIPE_BUF, 8972/9000 jumbo, 65483 TCP "
            "MSS on loopback, 65507 the UDP limit, 65536 the loopback MTU), "
            "after the write-size sweep of %s. Loopback's MTU is 65536, so "
            "on this path only the last boundaries can fragment; the others "
            "show what the kernel's per-packet and per-page costs do without "
            "a wire." % CITE_TIPC)

    for t in tests:
        name, b = t["test"], t["bufsize"]
        title = name + ("" if len(meta["bufsizes"]) == 1 else
                        ", buffers %d" % b)
        d.h(2, title)
        d.p("%s. Implementations: %s. Baseline for improvement: `%s`." %
            (_cap(TEST_TEXT.get(name, name)),
             "; ".join("`%s`%s (%s)" % (
                 i, " = the papers' \"%s\"" % PAPER_TERMS[i]
                 if i in PAPER_TERMS else "",
                 meta.get("impl_desc", {}).get(name, {}).get(i, ""))
                 for i in t["impls"]), t["baseline"]))
        key = (name, b)
        if key in charts:
            for kind, cap in (("perf", "performance"), ("delay", "delay"),
                              ("thrput", "throughput"),
                              ("comp", "improvement"),
                              ("sweep", "around MTU boundaries")):
                if kind in charts[key]:
                    d.img(charts[key][kind][0], "%s %s" % (title, cap))
        d.h(3, "Raw data (messages per second)")
        header, rows = raw_table(aggs, name, b, t["impls"],
                                 meta.get("max_size", {}).get(name),
                                 meta.get("sizes"))
        d.table(header, rows)
        ch, cr = comparison_table(aggs, t)
        if ch:
            d.h(3, "STREAMS against %s, size by size" %
                " and ".join(comparators(t)))
            d.p("Percent more Rx messages per second than the baseline at "
                "the same size; faster/slower/even as in the verdict.")
            d.table(ch, cr, ["r"] + ["l"] * (len(ch) - 1))
        bh, br = buffer_table(points, name, b, t["impls"])
        if br:
            d.h(3, "Buffers")
            d.p("What each implementation's ends were granted when asked "
                "for the same size (Linux doubles SO_SNDBUF/SO_RCVBUF; "
                "pipes round up to pages; a STREAMS pipe has a fixed ring).")
            d.table(bh, br, ["l", "r", "r", "r"])
        if meta.get("repeat", 1) > 1:
            d.h(3, "Repetitions (Rx messages per second: min / median / "
                "max)")
            d.table(*rep_table(aggs, name, b, t["impls"]))
        if t["fits"]:
            d.h(3, "Delay model")
            d.p("Least-squares fit of seconds per delivered message against "
                "message size: delay = intercept + slope x size.")
            d.table(["impl", "per message (us)", "per byte (ns)", "r^2",
                     "sizes"],
                    [[i, "%.4f" % (f["intercept"] * 1e6),
                      "%.5f" % (f["slope"] * 1e9), "%.3f" % f["r2"], f["n"]]
                     for i, f in t["fits"].items()], ["l", "r", "r", "r", "r"])
        facts = improvement_facts(aggs, t)
        if facts:
            d.h(3, "Improvement over %s (Rx, mean over sizes)" %
                t["baseline"])
            d.table(["impl", "over %s, < 1024 B" % t["baseline"],
                     ">= 1024 B", "sizes"],
                    [[i, fmt_pct(lo), fmt_pct(hi), n]
                     for i, lo, hi, n in facts], ["l", "r", "r", "r"])
        notes = grouped_notes(aggs, name, b, t["impls"])
        if notes:
            d.h(3, "Notes from the runs")
            d.ul(notes[:40] + (["... %d more in results.csv" %
                                (len(notes) - 40)] if len(notes) > 40 else []))
        if name in paper and paper[name]:
            d.h(3, "Against the published results")
            if key in charts and "paper" in charts[key]:
                d.img(charts[key]["paper"][0], "%s against the papers" % title)
            summ = paper_summ.get(name, {})
            rows = [["paper: " + v["desc"], fmt_pct(v["min"]),
                     fmt_pct(v["median"]), fmt_pct(v["max"]), v["n"]]
                    for v in summ.values()]
            for i, lo, hi, n in facts:
                rows.append(["this machine: %s over %s" % (i, t["baseline"]),
                             "", fmt_pct(lo), "", 1])
            d.table(["improvement over sockets below 1024 B (mean over "
                     "sizes)", "min", "median", "max", "machines"],
                    rows, ["l", "r", "r", "r", "r"])
            d.p("Published: %s. Data: %s (copied to `paper-data/` with the "
                "citation line of each table)." %
                (PAPER_SETS[name]["cite"], ", ".join(
                    sorted({c["file"] for c in paper[name]}))))

    d.h(2, "References")
    d.ul([CITE_UDP, CITE_SCTP, CITE_TIPC,
          "netperf by Rick Jones, Hewlett-Packard; the papers ran OpenSS7's "
          "version with the scripts netperf_benchmark and netperf_nice2 "
          "(--testtime=10 --bufsizes=131071 --end=16384 --mult=2)."])
    return d


def write_all(outdir, points, meta, charts=True):
    """Write every output; returns (list of files, error message or None).
    Data files come first, so a chart failure still leaves them."""
    os.makedirs(outdir, exist_ok=True)
    aggs, tests = analyse(points, meta)
    fits = [f for t in tests for f in t["fits"].values()]
    written = []
    p = os.path.join(outdir, "results.csv")
    write_results_csv(p, points, aggs, meta["repeat"])
    written.append(p)
    p = os.path.join(outdir, "results.json")
    write_results_json(p, meta, points, aggs, fits)
    written.append(p)
    tdir = os.path.join(outdir, "tables")
    os.makedirs(tdir, exist_ok=True)
    multi = len(meta["bufsizes"]) > 1
    for t in tests:
        header, rows = raw_table(aggs, t["test"], t["bufsize"], t["impls"],
                                 meta.get("max_size", {}).get(t["test"]),
                                 meta.get("sizes"))
        p = os.path.join(tdir, "raw_%s%s.md" % (
            t["test"].lower(), file_suffix(t["bufsize"], multi)))
        with open(p, "w") as f:
            f.write("# %s raw data, messages per second%s\n\n" % (
                t["test"], ", buffers %d" % t["bufsize"]))
            f.write("%s; %s.\n\n" % (machine_line(meta["machine"]),
                                     meta["date"]))
            f.write(md_table(header, rows))
        written.append(p)
    p = os.path.join(outdir, "summary.md")
    with open(p, "w") as f:
        f.write(summary_md(aggs, tests, meta))
    written.append(p)

    paper = {t["test"]: published_curves(t["test"]) for t in tests}
    paper_summ = {k: published_summary(v) for k, v in paper.items() if v}
    chart_files = {}
    error = None
    if charts:
        try:
            cdir = os.path.join(outdir, "charts")
            for t in tests:
                chart_files[(t["test"], t["bufsize"])] = make_charts(
                    cdir, aggs, t["test"], t["bufsize"], t["impls"],
                    t["baseline"], t["fits"],
                    file_suffix(t["bufsize"], multi), paper.get(t["test"]),
                    machine_line(meta["machine"]))
                if meta.get("sweep_mtu"):
                    f = make_sweep_chart(
                        cdir, aggs, t["test"], t["bufsize"], t["impls"],
                        st.MTU_BOUNDARIES, file_suffix(t["bufsize"], multi),
                        machine_line(meta["machine"]))
                    if f:
                        chart_files[(t["test"], t["bufsize"])]["sweep"] = f
        except ChartsUnavailable as e:
            error = str(e)
            chart_files = {}
        for v in chart_files.values():
            for png, svg in v.values():
                written += [png, svg]
    doc = build_report(outdir, points, meta, aggs, tests, chart_files, paper,
                       paper_summ)
    p = os.path.join(outdir, "report.md")
    with open(p, "w") as f:
        f.write(doc.markdown(outdir))
    written.append(p)
    p = os.path.join(outdir, "report.html")
    with open(p, "w") as f:
        f.write(doc.html("strperf report"))
    written.append(p)
    return written, error

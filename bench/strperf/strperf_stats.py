"""strperf_stats -- the arithmetic of the strperf report, kept free of I/O.

How this works

  Points are dicts as printed by strperf-point (one JSON line each) plus
  a "rep" number.  aggregate() groups the repetitions of one
  (test, impl, bufsize, msg_size) and gives min/median/max of the Tx and Rx
  rates; only points with status "ok" enter the numbers, the others are
  counted so the report can show them.  The papers' derived views are:

    delay        seconds per message = 1 / (messages per second), fitted
                 by least squares to  delay = intercept + slope * size
                 (intercept: per-message cost, slope: per-byte cost)
    throughput   bytes per second = messages per second * size
    improvement  percent more than the baseline at the same size,
                 100 * (rate / baseline_rate - 1)

  Message-size lists: size_range() is the papers' start..end by a factor;
  mtu_sweep() steps finely around link-MTU and protocol boundaries
  (the write-size sweep of the TIPC page, seeds/004).
"""

import math

# Boundaries where a message starts to need another packet, page or
# fragment on Linux: Ethernet MTU 1500 (UDP payload 1472), page size and
# PIPE_BUF 4096, jumbo MTU 9000 (UDP payload 8972), TCP MSS on loopback
# (MTU 65536 - 53 bytes of headers with timestamps: 65483), the IPv4 UDP
# payload limit 65507 and the loopback MTU 65536.
MTU_BOUNDARIES = (1472, 1500, 4096, 8972, 9000, 65483, 65507, 65536)
MTU_OFFSETS = (-32, -8, -1, 0, 1, 8, 32)
MTU_CONTEXT = (64, 512, 1024, 2048, 16384, 32768)


def size_range(start, end, mult):
    """start, start*mult, ... up to end (inclusive), as whole bytes."""
    if start < 1 or end < start:
        raise ValueError("want 1 <= start <= end, got %r..%r" % (start, end))
    if not mult > 1:
        raise ValueError("want mult > 1, got %r" % (mult,))
    sizes, s = [], float(start)
    while round(s) <= end:
        n = int(round(s))
        if not sizes or n != sizes[-1]:
            sizes.append(n)
        s *= mult
    return sizes


def mtu_sweep(lo=1, hi=65536):
    """Sizes stepped finely around MTU_BOUNDARIES, within lo..hi."""
    out = set(MTU_CONTEXT)
    for b in MTU_BOUNDARIES:
        for d in MTU_OFFSETS:
            out.add(b + d)
    return sorted(s for s in out if lo <= s <= hi)


def median(values):
    v = sorted(values)
    if not v:
        raise ValueError("median of nothing")
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


def summarize(values):
    """min, median, max and count of a non-empty list of numbers."""
    v = [float(x) for x in values]
    if not v:
        raise ValueError("summary of nothing")
    return {"min": min(v), "median": median(v), "max": max(v), "n": len(v)}


def improvement_pct(value, base):
    """Percent by which value exceeds base; None when base is not > 0."""
    if base is None or value is None or not base > 0:
        return None
    return 100.0 * (float(value) / float(base) - 1.0)


def fit_line(xs, ys):
    """Least-squares y = intercept + slope * x.

    Returns dict(intercept, slope, r2, n).  Needs at least two distinct x.
    """
    if len(xs) != len(ys):
        raise ValueError("x and y differ in length")
    n = len(xs)
    if n < 2 or len(set(xs)) < 2:
        raise ValueError("need two distinct x values to fit a line")
    mx = sum(xs) / float(n)
    my = sum(ys) / float(n)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return {"intercept": intercept, "slope": slope, "r2": r2, "n": n}


def key_of(p):
    return (p["test"], p["impl"], int(p["bufsize"]), int(p["msg_size"]))


def aggregate(points):
    """Group repetitions; returns a list of dicts sorted by key.

    Each has test, impl, bufsize, msg_size, n_ok, n_skipped, n_error,
    notes, and when n_ok > 0: tx/rx min/median/max (messages per second),
    loss_pct_max (percent of sent messages never received, worst rep).
    """
    groups = {}
    order = []
    for p in points:
        k = key_of(p)
        if k not in groups:
            groups[k] = []
            order.append(k)
        groups[k].append(p)
    out = []
    for k in order:
        ps = groups[k]
        ok = [p for p in ps if p.get("status") == "ok"]
        a = {"test": k[0], "impl": k[1], "bufsize": k[2], "msg_size": k[3],
             "n": len(ps), "n_ok": len(ok),
             "n_skipped": sum(1 for p in ps if p.get("status") == "skipped"),
             "n_error": sum(1 for p in ps
                            if p.get("status") not in ("ok", "skipped")),
             "notes": sorted({p.get("note", "") for p in ps
                              if p.get("note")})}
        if ok:
            tx = summarize([p["tx_per_s"] for p in ok])
            rx = summarize([p["rx_per_s"] for p in ok])
            for name, s in (("tx", tx), ("rx", rx)):
                for stat in ("min", "median", "max"):
                    a["%s_%s" % (name, stat)] = s[stat]
            losses = []
            for p in ok:
                t = float(p.get("tx_msgs", 0))
                r = float(p.get("rx_msgs", 0))
                losses.append(100.0 * (t - r) / t if t > 0 else 0.0)
            a["loss_pct_max"] = max(losses)
        out.append(a)
    out.sort(key=lambda a: (a["test"], a["bufsize"], a["msg_size"]))
    return out


def series(aggs, test, impl, bufsize, stat="rx_median"):
    """[(size, value)] of one implementation, sizes ascending."""
    return sorted((a["msg_size"], a[stat]) for a in aggs
                  if a["test"] == test and a["impl"] == impl and
                  a["bufsize"] == bufsize and a["n_ok"] > 0)


def delay_fit(aggs, test, impl, bufsize):
    """Fit seconds per message against size; None if under two sizes."""
    pts = [(s, 1.0 / v) for s, v in series(aggs, test, impl, bufsize)
           if v and v > 0]
    if len(pts) < 2:
        return None
    f = fit_line([p[0] for p in pts], [p[1] for p in pts])
    f.update(test=test, impl=impl, bufsize=bufsize)
    return f


def improvement_series(aggs, test, impl, base, bufsize, stat="rx_median"):
    """[(size, percent)] of impl over base at the sizes both have."""
    b = dict(series(aggs, test, base, bufsize, stat))
    out = []
    for s, v in series(aggs, test, impl, bufsize, stat):
        pct = improvement_pct(v, b.get(s))
        if pct is not None:
            out.append((s, pct))
    return out


def mean_or_none(values):
    v = list(values)
    return sum(v) / len(v) if v else None


def split_mean(pairs, limit=1024):
    """Mean of the percents below limit and at or above it."""
    lo = mean_or_none(p for s, p in pairs if s < limit)
    hi = mean_or_none(p for s, p in pairs if s >= limit)
    return lo, hi


def spread_pct(a):
    """(max - min) / median of the Rx rate, percent; None if not known."""
    if a.get("n_ok", 0) < 2 or not a.get("rx_median"):
        return None
    return 100.0 * (a["rx_max"] - a["rx_min"]) / a["rx_median"]


def is_finite(x):
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)

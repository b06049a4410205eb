"""strperf_cli -- the strperf command: run the matrix of points, then write
the report.

How this works

  parse_args() checks the options and works out the message sizes.
  strperf-point --list says which tests exist and which implementations
  serve each; make_plan() crosses them with the sizes, buffer sizes and
  repetitions.  The plan is ordered size by size with the implementations
  interleaved (test, size, repetition, implementation), so a slow drift of
  a noisy machine touches every implementation alike.  Each point is one
  strperf-point process; its JSON line is kept as it is, failures
  included.  Progress and an estimate of the time left go to stderr.

  Ctrl-C, SIGTERM or SIGHUP stop the run: the running strperf-point is
  interrupted (it kills and reaps its own children), and whatever was
  measured is still written.  A point that fails is recorded as an error
  and the rest of its row (test, implementation, buffer size) is recorded
  as "skipped: not run", while the other rows go on; --keep-going runs
  the row anyway, --stop-on-error stops the whole run.  The exit status
  is then 1.
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import time

import strperf_stats as st
import strperf_report as rp

ALL_TESTS = ["UDP_STREAM", "TCP_STREAM", "UDP_RR", "TCP_RR", "PIPE_STREAM"]
SWEEP_TESTS = ["UDP_STREAM", "TCP_STREAM"]
QUICK = {"start": 1, "end": 16384, "mult": 4.0, "testtime": 1.5,
         "bufsizes": [131071]}
PAPER = {"start": 1, "end": 16384, "mult": 2.0, "testtime": 10.0,
         "bufsizes": [131071]}
PLACEMENTS = ("free", "same", "split")
POINT_OVERHEAD_S = 0.35		# set-up and drain of one point, for the ETA
EXEC_TRIES = 3			# attempts to start strperf-point (not a point)

DESCRIPTION = """\
Run the STREAMS-vs-sockets experiments of the OpenSS7 papers on this machine
(127.0.0.1 only) and write a report: results.csv, results.json, tables/,
charts/ (PNG and SVG), report.md, report.html (self-contained), summary.md.

The default is a quick run: message sizes 1..16384 by a factor of 4 (8 sizes),
1.5 s per point, buffers 131071, every implementation of every test: 152
points (4 network tests x 4 implementations + PIPE_STREAM x 3, x 8 sizes),
about 5 minutes on a 2-core machine (rows whose provider is missing are
skipped in a moment).  --paper uses exactly the papers' settings (sizes
1..16384 by 2, 10 s per point, buffers 131071: 285 points, about 50 minutes).
--sweep-mtu steps sizes finely around MTU boundaries (default
tests UDP_STREAM,TCP_STREAM: 428 points, about 13 minutes at 1.5 s each)."""

EPILOG = """\
examples:
  strperf                                   quick run into ./report
  strperf --paper --out paper-run           the papers' settings
  strperf --tests UDP_STREAM --impls sockets --start 64 --end 1024 --repeat 5
  strperf --sweep-mtu --testtime 2

Every implementation gets the same sizes, time and buffers; Rx (what the
receiver got) is what the charts report; nothing is retried or filtered."""


class UsageError(Exception):
    pass


class Interrupted(Exception):
    pass


def _csv_list(text, conv=str, what="value"):
    items = [x.strip() for x in text.split(",")]
    if not items or any(not x for x in items):
        raise argparse.ArgumentTypeError("empty item in %r" % text)
    try:
        return [conv(x) for x in items]
    except ValueError:
        raise argparse.ArgumentTypeError("bad %s in %r" % (what, text))


def _tests(text):
    return [t.upper() for t in _csv_list(text)]


def _impls(text):
    return _csv_list(text)


def _bufsizes(text):
    return _csv_list(text, int, "buffer size")


def build_parser():
    ap = argparse.ArgumentParser(
        prog="strperf", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tests", type=_tests, default=None,
                    help="comma list (default %s; with --sweep-mtu %s)" %
                    (",".join(ALL_TESTS), ",".join(SWEEP_TESTS)))
    ap.add_argument("--impls", type=_impls, default=None,
                    help="comma list (default: every implementation that "
                    "serves each test; strperf-point --list shows them)")
    ap.add_argument("--start", type=int, default=None,
                    help="smallest message size (default 1)")
    ap.add_argument("--end", type=int, default=None,
                    help="largest message size (default 16384)")
    ap.add_argument("--mult", type=float, default=None,
                    help="factor between sizes (default 4; papers 2)")
    ap.add_argument("--testtime", type=float, default=None,
                    help="seconds per point (default 1.5; papers 10)")
    ap.add_argument("--bufsizes", type=_bufsizes, default=None,
                    help="comma list of socket/pipe buffer sizes, 0 for the "
                    "system default (default 131071)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="measure each point N times; report min/median/max")
    ap.add_argument("--out", default="report",
                    help="output folder (default ./report)")
    ap.add_argument("--paper", action="store_true",
                    help="the papers' settings: --start 1 --end 16384 "
                    "--mult 2 --testtime 10 --bufsizes 131071")
    ap.add_argument("--sweep-mtu", action="store_true",
                    help="sizes stepped finely around 1472/1500, 4096, "
                    "8972/9000, 65483, 65507, 65536 (within --start..--end)")
    ap.add_argument("--rx-waitall", action="store_true",
                    help="byte streams: the receiver reads whole messages "
                    "(MSG_WAITALL), the receiver-side throughput mode")
    ap.add_argument("--placement", choices=PLACEMENTS, default="free",
                    help="where sender and receiver run: free (wherever "
                    "Linux puts them, as netperf; default), same (both on "
                    "one CPU, like the papers' uniprocessors), split (one "
                    "CPU each)")
    ap.add_argument("--point-binary", default=None, metavar="PATH",
                    help="strperf-point to run (default: $STRPERF_POINT, "
                    "next to this script, the build folder, or $PATH)")
    ap.add_argument("--keep-going", action="store_true",
                    help="after a failing point, still run every other "
                    "point of its row (default: the rest of that row is "
                    "recorded as not run; the other rows go on)")
    ap.add_argument("--stop-on-error", action="store_true",
                    help="stop the whole run at the first failing point "
                    "and write what was measured")
    ap.add_argument("--no-charts", action="store_true",
                    help="write data and report without charts (no "
                    "matplotlib needed)")
    return ap


def parse_args(argv):
    """Parse and check; exits with status 2 and a message on bad input."""
    ap = build_parser()
    a = ap.parse_args(argv)
    if a.paper:
        clash = [o for o in ("start", "end", "mult", "testtime", "bufsizes")
                 if getattr(a, o) is not None]
        if clash:
            ap.error("--paper fixes the settings; drop --%s" %
                     ", --".join(clash))
        if a.sweep_mtu:
            ap.error("--paper and --sweep-mtu choose different sizes")
        base = PAPER
    else:
        base = QUICK
    if a.sweep_mtu and a.mult is not None:
        ap.error("--sweep-mtu chooses the sizes; drop --mult")
    if a.sweep_mtu and a.end is None:
        a.end = 65536
    for k, v in base.items():
        if getattr(a, k) is None:
            setattr(a, k, list(v) if isinstance(v, list) else v)
    if not (0 < a.testtime <= 3600):
        ap.error("--testtime must be more than 0 and at most 3600 seconds")
    if a.start < 1:
        ap.error("--start must be at least 1")
    if a.end < a.start:
        ap.error("--end must be at least --start")
    if a.end > 16 << 20:
        ap.error("--end must be at most %d" % (16 << 20))
    if not a.mult > 1:
        ap.error("--mult must be more than 1")
    if not 1 <= a.repeat <= 100:
        ap.error("--repeat must be 1 .. 100")
    for b in a.bufsizes:
        if not 0 <= b <= 1 << 30:
            ap.error("--bufsizes: %d is not 0 .. %d" % (b, 1 << 30))
    if a.sweep_mtu:
        a.sizes = st.mtu_sweep(a.start, a.end)
        if not a.sizes:
            ap.error("--sweep-mtu: no boundary between --start and --end")
    else:
        a.sizes = st.size_range(a.start, a.end, a.mult)
    try:
        a.cpus = placement_cpus(a.placement, sorted(os.sched_getaffinity(0)))
    except ValueError as e:
        ap.error(str(e))
    if a.tests is None:
        a.tests = list(SWEEP_TESTS if a.sweep_mtu else ALL_TESTS)
    if a.keep_going and a.stop_on_error:
        ap.error("--keep-going and --stop-on-error contradict each other")
    if len(set(a.tests)) != len(a.tests):
        ap.error("--tests names a test twice")
    if a.impls is not None and len(set(a.impls)) != len(a.impls):
        ap.error("--impls names an implementation twice")
    return a


# ------------------------------------------------------------------ running

def find_point_binary(explicit=None, launcher_dir=None):
    """Where strperf-point is; raises UsageError when it is nowhere."""
    cands = []
    if explicit:
        cands.append(explicit)
    elif os.environ.get("STRPERF_POINT"):
        cands.append(os.environ["STRPERF_POINT"])
    else:
        for d in filter(None, (launcher_dir, rp.HERE)):
            cands.append(os.path.join(d, "strperf-point"))
            root = os.path.normpath(os.path.join(d, "..", ".."))
            cands.append(os.path.join(root, "build", "bench",
                                      "strperf-point"))
        w = shutil.which("strperf-point")
        if w:
            cands.append(w)
    for c in cands:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise UsageError("cannot find strperf-point (looked at: %s); build it "
                     "(make build) or pass --point-binary" %
                     ", ".join(cands) if cands else "nowhere")


def query_list(binary):
    try:
        out = subprocess.run([binary, "--list"], capture_output=True,
                             text=True, timeout=30)
    except OSError as e:
        raise UsageError("cannot run %s: %s" % (binary, e))
    if out.returncode != 0:
        raise UsageError("%s --list failed: %s" % (binary,
                                                   out.stderr.strip()))
    try:
        return json.loads(out.stdout)
    except ValueError:
        raise UsageError("%s --list printed no JSON" % binary)


def make_plan(args, listing):
    """The points to run and what the report needs to know about them."""
    tests = {t["name"]: t for t in listing["tests"]}
    for t in args.tests:
        if t not in tests:
            raise UsageError("unknown test %s (known: %s)" %
                             (t, ", ".join(tests)))
    if args.impls is not None:
        known = {i["name"] for t in args.tests for i in tests[t]["impls"]}
        for i in args.impls:
            if i not in known:
                raise UsageError(
                    "implementation %s serves none of %s (available: %s)" %
                    (i, ",".join(args.tests), ", ".join(sorted(known))))
    impls, desc, fam, maxs, sizes = {}, {}, {}, {}, {}
    for t in args.tests:
        avail = [i["name"] for i in tests[t]["impls"]]
        impls[t] = [i for i in avail
                    if args.impls is None or i in args.impls]
        desc[t] = {i["name"]: i["desc"] for i in tests[t]["impls"]}
        fam[t] = tests[t]["family"]
        # every implementation of a test gets the same sizes: the smallest
        # limit among them decides
        lim = min([i["max_size"] for i in tests[t]["impls"]
                   if i["name"] in impls[t]] or [tests[t]["max_size"]])
        maxs[t] = lim
        sizes[t] = [s for s in args.sizes if s <= lim]
    points = []
    for b in args.bufsizes:
        for t in args.tests:
            for s in sizes[t]:
                for r in range(1, args.repeat + 1):
                    for i in impls[t]:
                        points.append({"test": t, "impl": i, "msg_size": s,
                                       "bufsize": b, "rep": r})
    if not points:
        raise UsageError("nothing to run: no implementation of %s matches "
                         "--impls, or no size fits" % ",".join(args.tests))
    info = {"impls": impls, "impl_desc": desc, "families": fam,
            "max_size": maxs, "sizes_per_test": sizes}
    return points, info


def placement_cpus(placement, allowed):
    """(sender CPU, receiver CPU) for a placement, None for free; the
    CPUs are the first this process may use."""
    if placement == "free":
        return None
    if placement == "same":
        return (allowed[0], allowed[0])
    if len(allowed) < 2:
        raise ValueError("--placement split needs two CPUs; this process "
                         "may use %d" % len(allowed))
    return (allowed[0], allowed[1])


def point_command(binary, pt, args):
    cmd = [binary, "--test", pt["test"], "--impl", pt["impl"],
           "--size", str(pt["msg_size"]), "--time", "%g" % args.testtime,
           "--bufsize", str(pt["bufsize"])]
    if args.rx_waitall:
        cmd.append("--rx-waitall")
    if getattr(args, "cpus", None):
        cmd += ["--cpu-tx", str(args.cpus[0]), "--cpu-rx",
                str(args.cpus[1])]
    return cmd


def run_point(binary, pt, args):
    """Run one point; returns its record (the JSON line plus rep)."""
    cmd = point_command(binary, pt, args)
    load1 = os.getloadavg()[0]
    t0 = time.monotonic()
    proc = None
    # strperf-point not runnable at this instant (being relinked by a
    # build, say: EACCES, ETXTBSY): the point has not started, so trying
    # to start it again is not a retry of a measurement
    for attempt in range(EXEC_TRIES):
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            break
        except OSError as e:
            why = e
            if attempt + 1 < EXEC_TRIES:
                time.sleep(1.0)
    if proc is None:
        return {"test": pt["test"], "impl": pt["impl"],
                "msg_size": pt["msg_size"], "bufsize": pt["bufsize"],
                "rep": pt["rep"], "status": "error",
                "note": "cannot run %s: %s" % (binary, why.strerror or why),
                "wall_s": round(time.monotonic() - t0, 3),
                "load1": round(load1, 2)}
    try:
        out, err = proc.communicate(timeout=args.testtime + 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err = "strperf-point did not finish in time; killed. " + err
    except (KeyboardInterrupt, Interrupted):
        # strperf-point kills and reaps its own children on SIGINT
        try:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        except OSError:
            pass
        raise Interrupted()
    rec = None
    for line in reversed(out.strip().splitlines()):
        try:
            rec = json.loads(line)
            break
        except ValueError:
            continue
    if not isinstance(rec, dict):
        rec = {"test": pt["test"], "impl": pt["impl"],
               "msg_size": pt["msg_size"], "bufsize": pt["bufsize"],
               "status": "error",
               "note": "exit %s: %s" % (proc.returncode,
                                        err.strip()[-300:] or "no output")}
    elif rec.get("status") == "ok" and proc.returncode != 0:
        rec["status"] = "error"
        rec["note"] = "exit %s: %s" % (proc.returncode, err.strip()[-300:])
    rec["rep"] = pt["rep"]
    rec["wall_s"] = round(time.monotonic() - t0, 3)
    rec["load1"] = round(load1, 2)	# 1-minute load average before it
    rec.setdefault("bufsize", pt["bufsize"])
    return rec


def not_run_record(pt, failed):
    """A point not run because an earlier point of its row failed."""
    return {"test": pt["test"], "impl": pt["impl"],
            "msg_size": pt["msg_size"], "bufsize": pt["bufsize"],
            "rep": pt["rep"], "status": "skipped", "wall_s": 0.0,
            "note": "not run: this row failed at %s B (%s)" %
                    (failed.get("msg_size"), failed.get("note", ""))}


class Eta:
    """Time left: each remaining point costs what points of its kind cost
    so far -- a row seen skipped (no provider, no CAP_SYS_NICE) about
    nothing, any other the mean wall time of the measured points, or the
    test time plus POINT_OVERHEAD_S before any was measured."""

    def __init__(self, testtime):
        self.testtime = testtime
        self.skipped = set()
        self.walls, self.skip_walls = [], []

    def add(self, pt, rec):
        w = float(rec.get("wall_s") or 0.0)
        if rec.get("status") == "skipped":
            self.skipped.add((pt["test"], pt["impl"], pt["bufsize"]))
            self.skip_walls.append(w)
        else:
            self.walls.append(w)

    def left(self, plan, n):
        run = (sum(self.walls) / len(self.walls) if self.walls else
               self.testtime + POINT_OVERHEAD_S)
        skip = (sum(self.skip_walls) / len(self.skip_walls)
                if self.skip_walls else 0.05)
        return sum(skip if (p["test"], p["impl"], p["bufsize"]) in
                   self.skipped else run for p in plan[n:])


def fmt_dur(s):
    s = int(round(max(0, s)))
    if s >= 3600:
        return "%dh%02dm" % (s // 3600, s % 3600 // 60)
    if s >= 60:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%ds" % s


def read_first(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def machine_info():
    u = os.uname()
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count()
    m = {"kernel": u.release, "kernel_version": u.version,
         "arch": u.machine, "cpu": read_first("/proc/cpuinfo", "model name"),
         "cores": os.cpu_count(), "cores_usable": cpus,
         "memory": read_first("/proc/meminfo", "MemTotal"),
         "python": platform.python_version(),
         "load_before": "%.2f %.2f %.2f" % os.getloadavg()}
    try:
        import matplotlib
        m["matplotlib"] = matplotlib.__version__
    except ImportError:
        m["matplotlib"] = None
    return m


def _on_signal(sig, frame):
    raise Interrupted()


def main(argv=None, launcher_dir=None, argv0="strperf"):
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    try:
        binary = find_point_binary(args.point_binary, launcher_dir)
        listing = query_list(binary)
        plan, info = make_plan(args, listing)
    except UsageError as e:
        print("strperf: error: %s" % e, file=sys.stderr)
        return 2
    if not args.no_charts and not rp.charts_available():
        try:
            rp._pyplot()
        except rp.ChartsUnavailable as e:
            print("strperf: error: %s" % e, file=sys.stderr)
        return 2
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        print("strperf: error: --out %s: %s" % (args.out, e), file=sys.stderr)
        return 2

    meta = {"command": shlex.join([argv0] + argv),
            "date": datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine_info(), "point_binary": binary,
            "point_version": listing.get("version"),
            "tests": args.tests, "sizes": args.sizes,
            "testtime": args.testtime, "bufsizes": args.bufsizes,
            "repeat": args.repeat, "rx_waitall": args.rx_waitall,
            "placement": args.placement, "cpus": args.cpus,
            "sweep_mtu": args.sweep_mtu, "paper_settings": args.paper,
            "planned_points": len(plan)}
    meta.update(info)

    old = {s: signal.signal(s, _on_signal)
           for s in (signal.SIGTERM, signal.SIGHUP)}
    points, status, t_start = [], 0, time.monotonic()
    total = len(plan)
    eta = Eta(args.testtime)
    print("strperf: %d points, %g s each, about %s (strperf-point: %s)" %
          (total, args.testtime, fmt_dur(eta.left(plan, 0)), binary),
          file=sys.stderr)
    failed_rows = {}	# (test, impl, bufsize) -> the failed point
    try:
        for n, pt in enumerate(plan, 1):
            sys.stderr.write("[%*d/%d] %-11s %-12s %6d B  " %
                             (len(str(total)), n, total, pt["test"],
                              pt["impl"], pt["msg_size"]))
            sys.stderr.flush()
            row = (pt["test"], pt["impl"], pt["bufsize"])
            if row in failed_rows:
                rec = not_run_record(pt, failed_rows[row])
            else:
                rec = run_point(binary, pt, args)
            points.append(rec)
            eta.add(pt, rec)
            done = time.monotonic() - t_start
            if rec.get("status") == "ok":
                res = "tx %12s rx %12s /s" % (rp.fmt_int(rec["tx_per_s"]),
                                              rp.fmt_int(rec["rx_per_s"]))
            else:
                res = "%s: %s" % (rec.get("status"), rec.get("note", ""))
            sys.stderr.write("%s  (%s done, %s left)\n" %
                             (res, fmt_dur(done),
                              fmt_dur(eta.left(plan, n))))
            if rec.get("status") == "error":
                status = 1
                if args.stop_on_error:
                    print("strperf: error: %s %s %d B failed: %s; stopping "
                          "(without --stop-on-error only this row stops)" %
                          (pt["test"], pt["impl"], pt["msg_size"],
                           rec.get("note")), file=sys.stderr)
                    break
                if not args.keep_going:
                    failed_rows[row] = rec
                    print("strperf: error: %s %s %d B failed: %s; the "
                          "rest of this row is not run (--keep-going runs "
                          "it, --stop-on-error stops everything)" %
                          (pt["test"], pt["impl"], pt["msg_size"],
                           rec.get("note")), file=sys.stderr)
    except (KeyboardInterrupt, Interrupted):
        sys.stderr.write("\n")
        print("strperf: interrupted after %d of %d points" %
              (len(points), total), file=sys.stderr)
        status = 130
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if not points:
        print("strperf: nothing measured, nothing written", file=sys.stderr)
        return status or 1
    meta["wall_s"] = time.monotonic() - t_start
    meta["measured_points"] = len(points)
    meta["partial"] = len(points) < total
    meta["machine"]["load_after"] = "%.2f %.2f %.2f" % os.getloadavg()
    try:
        files, err = rp.write_all(args.out, points, meta,
                                  charts=not args.no_charts)
    except (KeyboardInterrupt, Interrupted):
        print("strperf: interrupted while writing the report",
              file=sys.stderr)
        return 130
    if err:
        print("strperf: error: %s" % err, file=sys.stderr)
        status = status or 2
    print("strperf: %d points in %s; wrote %s (report.html, summary.md, "
          "results.csv)%s" % (len(points), fmt_dur(meta["wall_s"]), args.out,
                              " -- PARTIAL" if meta["partial"] else ""),
          file=sys.stderr)
    return status

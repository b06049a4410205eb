#!/usr/bin/env python3
"""The strperf command end to end: a tiny run writes every output, well
formed; Ctrl-C and a failing point leave partial results and no process."""
import csv
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

import _common

BIN = _common.point_binary()
CHARTS = _common.have_matplotlib()


def strperf(out, *args, **kw):
    cmd = [sys.executable, _common.LAUNCHER, "--point-binary", BIN,
           "--out", out] + [str(a) for a in args]
    if not CHARTS:
        cmd.append("--no-charts")
    return subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


class TestEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="strperf-e2e-")
        cls.out = os.path.join(cls.dir, "report")
        p = strperf(cls.out, "--tests", "UDP_STREAM,PIPE_STREAM", "--impls",
                    "sockets,pipe", "--start", "64", "--end", "1024",
                    "--mult", "16", "--testtime", "0.2")
        cls.stdout, cls.stderr = p.communicate(timeout=90)
        cls.rc = p.returncode

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.out, *parts)

    def test_run_succeeded(self):
        self.assertEqual(self.rc, 0, self.stderr)
        self.assertIn("[4/4] PIPE_STREAM", self.stderr)
        self.assertIn("left", self.stderr)

    def test_results_csv(self):
        with open(self.path("results.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 4)
        self.assertEqual({(r["test"], r["impl"], r["msg_size"])
                          for r in rows},
                         {("UDP_STREAM", "sockets", "64"),
                          ("UDP_STREAM", "sockets", "1024"),
                          ("PIPE_STREAM", "pipe", "64"),
                          ("PIPE_STREAM", "pipe", "1024")})
        for r in rows:
            self.assertEqual(r["status"], "ok", r["note"])
            self.assertGreater(float(r["rx_per_s"]), 0)
            self.assertGreaterEqual(float(r["tx_per_s"]),
                                    float(r["rx_per_s"]))

    def test_results_json(self):
        with open(self.path("results.json")) as f:
            doc = json.load(f)
        m = doc["meta"]
        for k in ("kernel", "cpu", "cores"):
            self.assertIn(k, m["machine"])
        self.assertIn("--testtime 0.2", m["command"])
        self.assertRegex(m["date"], r"^\d{4}-\d\d-\d\d")
        self.assertEqual(len(doc["points"]), 4)
        self.assertFalse(m["partial"])

    def test_tables_and_summary(self):
        for t in ("udp_stream", "pipe_stream"):
            with open(self.path("tables", "raw_%s.md" % t)) as f:
                rows = [ln for ln in f if ln.startswith("|")]
            self.assertEqual(len(rows), 4)
        with open(self.path("summary.md")) as f:
            s = f.read()
        self.assertIn("--point-binary", s)
        self.assertIn("| PIPE_STREAM | pipe |", s)

    def test_report(self):
        with open(self.path("report.md")) as f:
            md = f.read()
        self.assertIn("## Verdict", md)
        self.assertIn("No STREAMS implementation was measured", md)
        with open(self.path("report.html")) as f:
            h = f.read()
        self.assertTrue(h.startswith("<!DOCTYPE html>"))
        self.assertTrue(h.rstrip().endswith("</html>"))
        self.assertNotIn('src="charts/', h)

    @unittest.skipUnless(CHARTS, "matplotlib is not installed: charts not "
                         "tested (python3 -m pip install matplotlib)")
    def test_charts(self):
        want = ["%s_%s" % (t, k) for t in ("udp_stream", "pipe_stream")
                for k in ("perf", "delay", "thrput", "comp")]
        want.append("udp_stream_paper")
        for name in want:
            with open(self.path("charts", name + ".png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            ET.parse(self.path("charts", name + ".svg"))
        with open(self.path("report.html")) as f:
            self.assertEqual(f.read().count("data:image/png;base64,"), 9)


class TestStreamsRows(unittest.TestCase):
    """The XTI rows end to end: each point measured or honestly skipped
    (no provider yet, or a ThreadSanitizer build), and the report says
    which, never a number for a skipped point."""

    def test_xti_rows(self):
        d = tempfile.mkdtemp(prefix="strperf-xti-")
        self.addCleanup(shutil.rmtree, d, True)
        out = os.path.join(d, "r")
        p = strperf(out, "--tests", "UDP_STREAM,TCP_RR", "--impls",
                    "sockets,xtios,tpi", "--start", "64", "--end", "1024",
                    "--mult", "16", "--testtime", "0.2013", "--keep-going")
        so, se = p.communicate(timeout=120)
        with open(os.path.join(out, "results.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 12, se)
        with open(os.path.join(out, "report.md")) as f:
            md = f.read()
        verdict = md.split("## Verdict")[1].split("## Method")[0]
        for r in rows:
            if r["status"] == "ok":
                self.assertGreater(float(r["rx_per_s"]), 0)
                continue
            self.assertEqual((r["tx_per_s"], r["rx_per_s"]), ("", ""), r)
            if r["status"] == "skipped":
                self.assertTrue(r["note"].startswith(
                    "provider not available") or "ThreadSanitizer" in
                    r["note"], r["note"])
        for test in ("UDP_STREAM", "TCP_RR"):
            for impl in ("xtios", "tpi"):
                mine = [r for r in rows if r["test"] == test and
                        r["impl"] == impl]
                if all(r["status"] != "ok" for r in mine):
                    self.assertIn("%s: %s was not measured at any size" %
                                  (test, impl), verdict)
                else:
                    self.assertRegex(verdict, r"%s: (YES|NO|PARTLY), %s "
                                     % (test, impl))
        self.assertEqual(p.returncode, 1 if any(
            r["status"] == "error" for r in rows) else 0, se)
        self.assertEqual(_common.wait_gone([BIN, "0.2013"]), [])


class TestRepeat(unittest.TestCase):
    def test_repeat_min_median_max(self):
        d = tempfile.mkdtemp(prefix="strperf-rep-")
        self.addCleanup(shutil.rmtree, d, True)
        out = os.path.join(d, "r")
        p = strperf(out, "--tests", "PIPE_STREAM", "--impls", "pipe",
                    "--start", "512", "--end", "512", "--testtime", "0.1",
                    "--repeat", "3", "--rx-waitall")
        so, se = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, se)
        with open(os.path.join(out, "results.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([r["rep"] for r in rows], ["1", "2", "3"])
        rx = sorted(float(r["rx_per_s"]) for r in rows)
        for r in rows:
            self.assertEqual(r["rx_waitall"], "1")
            self.assertAlmostEqual(float(r["rx_min"]), rx[0], delta=0.1)
            self.assertAlmostEqual(float(r["rx_median"]), rx[1], delta=0.1)
            self.assertAlmostEqual(float(r["rx_max"]), rx[2], delta=0.1)
        with open(os.path.join(out, "report.md")) as f:
            md = f.read()
        self.assertIn("Repetitions (Rx messages per second: min / median / "
                      "max)", md)
        self.assertIn("(3/3)", md)
        self.assertIn("receiver-side throughput mode", md)


class TestStopping(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="strperf-stop-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_ctrl_c_keeps_partial_results(self):
        out = os.path.join(self.dir, "r")
        p = strperf(out, "--tests", "TCP_STREAM", "--impls", "sockets",
                    "--start", "1", "--end", "1024", "--mult", "2",
                    "--testtime", "0.4123")
        # interrupt once two points are done, while the third runs
        lines = []
        while len([ln for ln in lines if ln.startswith("[")]) < 2:
            ln = p.stderr.readline()
            if not ln:
                break
            lines.append(ln)
        time.sleep(0.2)
        p.send_signal(signal.SIGINT)
        so, se = p.communicate(timeout=30)
        se = "".join(lines) + se
        self.assertEqual(p.returncode, 130, se)
        self.assertIn("interrupted after", se)
        with open(os.path.join(out, "results.json")) as f:
            doc = json.load(f)
        self.assertTrue(doc["meta"]["partial"])
        self.assertEqual(len(doc["points"]), 2)
        self.assertEqual(doc["meta"]["planned_points"], 11)
        self.assertTrue(os.path.exists(os.path.join(out, "report.html")))
        self.assertEqual(_common.wait_gone([BIN, "0.4123"]), [])

    def test_failing_point_stops_its_row(self):
        # a strperf-point whose sender always dies
        fake = os.path.join(self.dir, "failing-point")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\nexec '%s' \"$@\" --fault die-tx\n" % BIN)
        os.chmod(fake, stat.S_IRWXU)
        out = os.path.join(self.dir, "r")
        cmd = [sys.executable, _common.LAUNCHER, "--point-binary", fake,
               "--out", out, "--tests", "PIPE_STREAM", "--start", "1",
               "--end", "16", "--mult", "4", "--testtime", "0.2",
               "--no-charts"]

        def rows():
            with open(os.path.join(out, "results.csv"), newline="") as f:
                return list(csv.DictReader(f))

        # default: each row fails once, the rest of it is not run
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("the rest of this row is not run", p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        r = rows()
        self.assertEqual(len(r), 9)     # sizes 1, 4, 16 x 3 impls
        # a ThreadSanitizer build skips the STREAMS pipe before it runs
        tsan = {x["impl"] for x in r if "ThreadSanitizer" in x["note"]}
        self.assertLessEqual(tsan, {"streams"})
        bad = [x for x in r if x["status"] == "error"]
        self.assertEqual(sorted((x["impl"], x["msg_size"]) for x in bad),
                         [(i, "1") for i in ("pipe", "socketpair",
                                             "streams") if i not in tsan])
        for x in bad:
            self.assertIn("died", x["note"])
        for x in r:
            if x["status"] != "error":
                self.assertEqual(x["status"], "skipped")
                if x["impl"] not in tsan:
                    self.assertIn("not run: this row failed at 1 B",
                                  x["note"])
            self.assertEqual((x["tx_per_s"], x["rx_per_s"]), ("", ""))
        with open(os.path.join(out, "report.md")) as f:
            md = f.read()
        self.assertIn("streams was not measured at any size", md)
        # --stop-on-error: the first failure ends the run
        p = subprocess.run(cmd + ["--stop-on-error"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("stopping", p.stderr)
        self.assertEqual(len(rows()), 1)
        self.assertEqual(rows()[0]["status"], "error")
        # --keep-going: every point is run, and fails
        p = subprocess.run(cmd + ["--keep-going"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertEqual([x["status"] for x in rows()
                          if x["impl"] not in tsan],
                         ["error"] * (9 - 3 * len(tsan)))
        self.assertEqual(_common.wait_gone([BIN, "die-tx"]), [])

    def test_unrunnable_point_binary(self):
        # strperf-point there but not executable at run time (a build
        # relinking it, say): a clean error per point, no traceback
        fake = os.path.join(self.dir, "vanishing-point")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\nif [ \"$1\" = --list ]; then exec '%s' "
                    "--list; fi\nexit 9\n" % BIN)
        os.chmod(fake, stat.S_IRWXU)
        cmd = [sys.executable, _common.LAUNCHER, "--point-binary", fake,
               "--out", os.path.join(self.dir, "r"), "--tests",
               "PIPE_STREAM", "--impls", "pipe", "--start", "1", "--end",
               "1", "--testtime", "0.1", "--no-charts"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("exit 9", p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        import strperf_cli as cli
        a = cli.parse_args(["--testtime", "0.1"])
        rec = cli.run_point(os.path.join(self.dir, "no-such-binary"),
                            {"test": "PIPE_STREAM", "impl": "pipe",
                             "msg_size": 1, "bufsize": 0, "rep": 1}, a)
        self.assertEqual(rec["status"], "error")
        self.assertIn("cannot run", rec["note"])

    def test_without_matplotlib(self):
        # a matplotlib that cannot be imported, found first on the path
        fake = os.path.join(self.dir, "fake", "matplotlib")
        os.makedirs(fake)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write("raise ImportError('hidden for this test')\n")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(fake))
        cmd = [sys.executable, _common.LAUNCHER, "--point-binary", BIN,
               "--tests", "PIPE_STREAM", "--start", "8", "--end", "8",
               "--testtime", "0.1", "--out", os.path.join(self.dir, "r")]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                           env=env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("matplotlib is needed", p.stderr)
        self.assertIn("pip install matplotlib", p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        p = subprocess.run(cmd + ["--no-charts"], capture_output=True,
                           text=True, timeout=30, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "r",
                                                    "report.html")))

    def test_bad_arguments(self):
        p = subprocess.run([sys.executable, _common.LAUNCHER, "--testtime",
                            "-3"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--testtime", p.stderr)
        p = subprocess.run([sys.executable, _common.LAUNCHER,
                            "--point-binary", BIN, "--tests", "UDP_STREAM",
                            "--impls", "pipe", "--out", self.dir],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("serves none of UDP_STREAM", p.stderr)


if __name__ == "__main__":
    unittest.main()

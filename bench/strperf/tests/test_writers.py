#!/usr/bin/env python3
"""strperf_report: results.csv/json, the raw tables, summary, report.md and
report.html, charts, the published data and the verdict."""
import csv
import html.parser
import json
import os
import shutil
import tempfile
import unittest
import xml.etree.ElementTree as ET

import _common
import strperf_report as rp

SIZES = [1, 64, 1024, 4096]


def point(test, impl, size, rep, rx, tx=None, status="ok"):
    tx = rx if tx is None else tx
    return {"test": test, "impl": impl, "family": "udp", "msg_size": size,
            "bufsize": 131071, "rep": rep, "status": status,
            "testtime": 1, "elapsed": 1.0, "tx_msgs": int(tx),
            "rx_msgs": int(rx), "tx_per_s": float(tx), "rx_per_s": float(rx),
            "tx_bytes": int(tx) * size, "rx_bytes": int(rx) * size,
            "tx_fail": 0, "rx_waitall": False,
            "note": "" if status == "ok" else "it broke"}


def dataset(repeat=1, streams_gain=None):
    pts = []
    for r in range(1, repeat + 1):
        for s in SIZES:
            base = 800000.0 - 20 * s + 1000 * r
            pts.append(point("UDP_STREAM", "sockets", s, r, base * 0.98,
                             base))
            pts.append(point("UDP_STREAM", "sockets-nice", s, r, base * 0.9))
            if streams_gain is not None:
                pts.append(point("UDP_STREAM", "xti", s, r,
                                 base * 0.98 * (1 + streams_gain)))
            pts.append(point("PIPE_STREAM", "pipe", s, r, 2e6 - 100 * s))
    pts.append(point("PIPE_STREAM", "pipe", 8192, 1, 0, status="error"))
    impls = {"UDP_STREAM": ["sockets", "sockets-nice"] +
             (["xti"] if streams_gain is not None else []),
             "PIPE_STREAM": ["pipe"]}
    meta = {"command": "strperf --test 'x y'", "date": "2026-01-01 00:00 UTC",
            "machine": {"cpu": "Test CPU", "cores": 2, "kernel": "6.0",
                        "memory": "1 kB", "load_before": "0",
                        "load_after": "0"},
            "tests": ["UDP_STREAM", "PIPE_STREAM"], "sizes": SIZES + [8192],
            "testtime": 1, "bufsizes": [131071], "repeat": repeat,
            "rx_waitall": False, "impls": impls,
            "impl_desc": {"UDP_STREAM": {"sockets": "d"}},
            "families": {"UDP_STREAM": "udp", "PIPE_STREAM": "pipe"},
            "max_size": {"UDP_STREAM": 4096, "PIPE_STREAM": 1 << 24},
            "wall_s": 1.0}
    return pts, meta


class HTMLCheck(html.parser.HTMLParser):
    """Counts tags and checks that every non-void tag is closed in order."""
    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.imgs, self.tags = [], [], [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "img":
            self.imgs.append(dict(attrs).get("src", ""))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("unexpected </%s>" % tag)
        else:
            self.stack.pop()


class TestWriters(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="strperf-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def check_common(self, pts, meta):
        with open(os.path.join(self.dir, "results.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), len(pts))
        for col in ("test", "impl", "msg_size", "tx_per_s", "rx_per_s",
                    "rep", "status"):
            self.assertIn(col, rows[0])
        self.assertEqual(rows[0]["test"], pts[0]["test"])
        self.assertEqual(float(rows[0]["rx_per_s"]), pts[0]["rx_per_s"])
        self.assertEqual(rows[-1]["status"], "error")
        with open(os.path.join(self.dir, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(len(doc["points"]), len(pts))
        self.assertEqual(doc["meta"]["machine"]["cpu"], "Test CPU")
        self.assertEqual(doc["meta"]["command"], meta["command"])
        self.assertTrue(doc["aggregates"])
        self.assertTrue(doc["delay_fits"])
        with open(os.path.join(self.dir, "tables",
                               "raw_udp_stream.md")) as f:
            lines = [ln for ln in f.read().splitlines() if ln.startswith("|")]
        self.assertTrue(lines[0].startswith(
            "| Message size | sockets Tx | sockets Rx | sockets-nice Tx | "
            "sockets-nice Rx |"), lines[0])
        self.assertEqual(len(lines), 3 + len(SIZES))
        self.assertTrue(lines[2].startswith("| 1 | "))
        # 8192 was planned (for pipes) but is beyond this test's limit
        self.assertTrue(lines[-1].startswith("| 8192 | n/a | n/a |"),
                        lines[-1])
        with open(os.path.join(self.dir, "tables",
                               "raw_pipe_stream.md")) as f:
            self.assertIn("| 8192 | error | error |", f.read())
        with open(os.path.join(self.dir, "summary.md")) as f:
            summ = f.read()
        self.assertIn("`%s`" % meta["command"], summ)
        self.assertIn("| UDP_STREAM | sockets |", summ)
        self.assertLess(len(summ.splitlines()), 30)
        with open(os.path.join(self.dir, "report.md")) as f:
            md = f.read()
        self.assertIn("## Verdict", md)
        self.assertIn("Delay model", md)
        self.assertIn("STREAMS versus Sockets Performance Comparison", md)
        with open(os.path.join(self.dir, "report.html")) as f:
            text = f.read()
        self.assertTrue(text.startswith("<!DOCTYPE html>"))
        chk = HTMLCheck()
        chk.feed(text)
        chk.close()
        self.assertEqual(chk.errors, [])
        self.assertEqual(chk.stack, [])
        self.assertIn("table", chk.tags)
        return rows, doc, md, chk

    def test_without_charts(self):
        pts, meta = dataset()
        files, err = rp.write_all(self.dir, pts, meta, charts=False)
        self.assertIsNone(err)
        rows, doc, md, chk = self.check_common(pts, meta)
        self.assertNotIn("tx_median", rows[0])
        self.assertEqual(chk.imgs, [])
        self.assertIn("No STREAMS implementation was measured", md)
        self.assertIn("Each point was measured once", md)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "charts")))

    def test_repeat_columns(self):
        pts, meta = dataset(repeat=3)
        rp.write_all(self.dir, pts, meta, charts=False)
        rows, doc, md, chk = self.check_common(pts, meta)
        r = [x for x in rows if x["impl"] == "sockets" and
             x["msg_size"] == "64"]
        self.assertEqual(len(r), 3)
        self.assertEqual({x["rep"] for x in r}, {"1", "2", "3"})
        self.assertIn("sockets-nice delivers 8% fewer messages/s than "
                      "sockets below 1024 bytes", md)
        self.assertIn("ranges overlap at 0 of 4 sizes", md)
        self.assertNotIn("Each point was measured once", md)
        vals = sorted(float(x["rx_per_s"]) for x in r)
        for x in r:
            self.assertAlmostEqual(float(x["rx_min"]), vals[0], places=0)
            self.assertAlmostEqual(float(x["rx_median"]), vals[1], places=0)
            self.assertAlmostEqual(float(x["rx_max"]), vals[2], places=0)

    @unittest.skipUnless(_common.have_matplotlib(),
                         "matplotlib is not installed: charts not tested "
                         "(python3 -m pip install matplotlib)")
    def test_with_charts(self):
        pts, meta = dataset(repeat=2, streams_gain=0.3)
        files, err = rp.write_all(self.dir, pts, meta, charts=True)
        self.assertIsNone(err)
        rows, doc, md, chk = self.check_common(pts, meta)
        for t in ("udp_stream", "pipe_stream"):
            for kind in ("perf", "delay", "thrput", "comp"):
                base = os.path.join(self.dir, "charts", "%s_%s" % (t, kind))
                with open(base + ".png", "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
                root = ET.parse(base + ".svg").getroot()
                self.assertTrue(root.tag.endswith("svg"))
                self.assertIn("charts/%s_%s.png" % (t, kind), md)
        self.assertTrue(os.path.exists(os.path.join(
            self.dir, "charts", "udp_stream_paper.png")))
        self.assertFalse(os.path.exists(os.path.join(
            self.dir, "charts", "pipe_stream_paper.png")))
        self.assertGreaterEqual(len(chk.imgs), 9)
        for src in chk.imgs:
            self.assertTrue(src.startswith("data:image/png;base64,"), src)
        self.assertIn("STREAMS rows measured: UDP_STREAM xti.", md)
        self.assertIn("xti delivers 30% more messages/s than sockets below "
                      "1024 bytes", md)


    @unittest.skipUnless(_common.have_matplotlib(),
                         "matplotlib is not installed: charts not tested "
                         "(python3 -m pip install matplotlib)")
    def test_sweep_chart(self):
        pts = [point("UDP_STREAM", "sockets", s, 1, 5e5 - s)
               for s in (1440, 1471, 1472, 1473, 1500, 4096, 8972)]
        pts.append(point("PIPE_STREAM", "pipe", 4096, 1, 1e6))
        meta = dataset()[1]
        meta.update(sweep_mtu=True, sizes=[p["msg_size"] for p in pts],
                    impls={"UDP_STREAM": ["sockets"],
                           "PIPE_STREAM": ["pipe"]})
        files, err = rp.write_all(self.dir, pts, meta, charts=True)
        self.assertIsNone(err)
        with open(os.path.join(self.dir, "charts", "udp_stream_sweep.png"),
                  "rb") as f:
            self.assertEqual(f.read(4), b"\x89PNG")
        with open(os.path.join(self.dir, "report.md")) as f:
            self.assertIn("charts/udp_stream_sweep.png", f.read())
        self.assertEqual(
            rp.boundary_clusters([1472, 1500, 4096, 9000], [1440, 1500,
                                                            4096, 7000]),
            [([1472, 1500], [1440, 1500]), ([4096], [4096])])


class TestPieces(unittest.TestCase):
    def test_load_range(self):
        self.assertEqual(rp.load_range([{"load1": 1}, {"load1": 3.5},
                                        {"load1": 2}, {}]),
                         "1.00 .. 3.50 (median 2.00)")
        self.assertEqual(rp.load_range([]), "?")

    def test_md_table(self):
        self.assertEqual(rp.md_table(["a", "b"], [[1, 2]], ["l", "r"]),
                         "| a | b |\n|:---|---:|\n| 1 | 2 |\n")

    def test_paper_data(self):
        files = sorted(os.listdir(rp.PAPER_DIR))
        self.assertGreaterEqual(len(files), 14)
        for name in files:
            cite, rows = rp.load_paper_csv(os.path.join(rp.PAPER_DIR, name))
            self.assertIn("source:", cite)
            self.assertEqual(len(rows), 15)
            self.assertEqual([r["msg_size"] for r in rows],
                             [2 ** i for i in range(15)])
        udp = rp.published_curves("UDP_STREAM")
        fc6 = [c for c in udp if c["file"] == "udp_fc6_on_porky.csv" and
               c["column"] == "tpi_rx"][0]
        self.assertAlmostEqual(fc6["pct"][0], 100 * (947085 / 728170 - 1))
        self.assertEqual(fc6["distro"], "FC6 on Porky")
        self.assertEqual(len(rp.published_curves("TCP_STREAM")), 21)
        self.assertEqual(rp.published_curves("PIPE_STREAM"), [])
        summ = rp.published_summary(udp)
        self.assertLess(summ["tpi_rx"]["min"], summ["tpi_rx"]["max"])
        self.assertEqual(summ["tpi_rx"]["n"], 7)

    def test_verdict_losing_streams(self):
        pts, meta = dataset(streams_gain=-0.25)
        aggs, tests = rp.analyse(pts, meta)
        text = " ".join(rp.verdict(aggs, tests, meta, {}))
        self.assertIn("xti delivers 25% fewer messages/s than sockets", text)
        self.assertIn("sockets-nice delivers 8% fewer", text)
        self.assertIn("not everything sent was delivered", text)
        self.assertIn("skipped or failed", text)
        self.assertNotIn("No STREAMS implementation", text)

    def test_skipped_streams_row_is_never_a_number(self):
        # xtios skipped at every size (no provider), tpi measured at some
        # sizes: the verdict says so plainly, tables say "skipped"
        pts, meta = dataset()
        for s in SIZES:
            p = point("UDP_STREAM", "xtios", s, 1, 0, status="skipped")
            for f in ("tx_msgs", "rx_msgs", "tx_per_s", "rx_per_s"):
                p[f] = None
            p["note"] = "provider not available (t_open /dev/inet/udp)"
            pts.append(p)
        gains = {1: 0.5, 64: 0.02, 1024: -0.3}
        for s, g in gains.items():
            base = 800000.0 - 20 * s + 1000
            pts.append(point("UDP_STREAM", "tpi", s, 1,
                             base * 0.98 * (1 + g)))
        pts.append(point("UDP_STREAM", "tpi", 4096, 1, 0, status="error"))
        meta["impls"]["UDP_STREAM"] += ["xtios", "tpi"]
        d = tempfile.mkdtemp(prefix="strperf-test-")
        self.addCleanup(shutil.rmtree, d, True)
        rp.write_all(d, pts, meta, charts=False)
        with open(os.path.join(d, "report.md")) as f:
            md = f.read()
        self.assertIn("UDP_STREAM: xtios was not measured at any size, so "
                      "this run cannot say whether it beats sockets: "
                      "skipped (provider not available", md)
        self.assertIn("UDP_STREAM: PARTLY, tpi beat sockets at 1 of 3 "
                      "sizes: faster at 1 B (by 50%); slower at 1024 B "
                      "(by 30%); even at 64 B (+2.0%). Not compared at "
                      "4096 B: failed (it broke).", md)
        self.assertIn("In short, sizes at which STREAMS was faster: "
                      "UDP_STREAM (vs sockets): xtios not measured, tpi "
                      "1/3.", md)
        self.assertIn("STREAMS rows measured: UDP_STREAM tpi.", md)
        self.assertIn("STREAMS rows with no measured point (skipped or "
                      "failed at every size; no number is shown for them): "
                      "UDP_STREAM xtios.", md)
        self.assertNotIn("xtios, tpi", md.split("## Method")[0])
        self.assertIn("xtios, every size: provider not available", md)
        self.assertIn("`xtios` = the papers' \"STREAMS XTI over Sockets "
                      "(XTIoS)\"", md)
        self.assertIn("`sockets` = the papers' \"Sockets, normal "
                      "priorities\"", md)
        self.assertIn("| 1 | skipped | +50.0% faster |", md)
        # the verdict comes before the method and the tests
        self.assertLess(md.index("## Verdict"), md.index("## Method"))
        with open(os.path.join(d, "tables", "raw_udp_stream.md")) as f:
            raw = f.read()
        for line in raw.splitlines():
            if line.startswith("| 64 "):
                self.assertIn("| skipped | skipped |", line)
        with open(os.path.join(d, "results.csv"), newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["impl"] == "xtios"]
        self.assertEqual(len(rows), len(SIZES))
        for r in rows:
            self.assertEqual((r["status"], r["rx_per_s"], r["tx_per_s"]),
                             ("skipped", "", ""))
        with open(os.path.join(d, "summary.md")) as f:
            summ = f.read()
        self.assertIn("| UDP_STREAM | xtios | skipped | skipped | - "
                      "| not measured | not measured |", summ)
        self.assertIn("| UDP_STREAM | tpi |", summ)
        self.assertIn("| at 1 of 3 sizes |", summ)

    def test_compare_sizes(self):
        pts, meta = dataset(repeat=3, streams_gain=0.001)
        aggs, tests = rp.analyse(pts, meta)
        t = [x for x in tests if x["test"] == "UDP_STREAM"][0]
        self.assertEqual(rp.streams_impls(t), ["xti"])
        self.assertEqual(rp.comparators(t), ["sockets"])
        rows = rp.compare_sizes(aggs, t, "xti", "sockets")
        # +0.1% with overlapping ranges (reps differ by 1000/s each)
        self.assertEqual([r["state"] for r in rows], ["even"] * 4)
        pts, meta = dataset(repeat=3, streams_gain=0.5)
        aggs, tests = rp.analyse(pts, meta)
        t = [x for x in tests if x["test"] == "UDP_STREAM"][0]
        rows = rp.compare_sizes(aggs, t, "xti", "sockets")
        self.assertEqual([r["state"] for r in rows], ["faster"] * 4)
        text = " ".join(rp.verdict(aggs, tests, meta, {}))
        self.assertIn("UDP_STREAM: YES, xti beat sockets at every measured "
                      "size: faster at 1, 64, 1024, 4096 B (by 50%)", text)
        self.assertIn("UDP_STREAM: why, by the delay model", text)
        self.assertRegex(text, r"a message costs [0-9.]+ us on xti against "
                         r"[0-9.]+ us on sockets, a byte [-0-9.]+ ns "
                         r"against [-0-9.]+ ns")
        pts, meta = dataset(streams_gain=-0.1)
        aggs, tests = rp.analyse(pts, meta)
        text = " ".join(rp.verdict(aggs, tests, meta, {}))
        self.assertIn("UDP_STREAM: NO, xti did not beat sockets at any "
                      "size: slower at 1, 64, 1024, 4096 B (by 10%)", text)
        pipe = {"test": "PIPE_STREAM", "baseline": "pipe",
                "impls": ["pipe", "socketpair", "streams"]}
        self.assertEqual(rp.comparators(pipe), ["pipe", "socketpair"])

    def test_delay_axis_top(self):
        self.assertEqual(rp.delay_axis_top([1, 2, 3, 4]), 4)
        self.assertEqual(rp.delay_axis_top([1, 2, 2, 2, 2, 2, 2, 500]), 8)
        self.assertEqual(rp.delay_axis_top([]), 1.0)

    def test_buffer_table(self):
        pts = [dict(point("PIPE_STREAM", i, 64, 1, 100), tx_sndbuf=a,
                    rx_rcvbuf=b)
               for i, a, b in (("pipe", 131072, 131072),
                               ("streams", -1, -1))]
        pts.append(point("PIPE_STREAM", "gone", 64, 1, 0, status="skipped"))
        h, rows = rp.buffer_table(pts, "PIPE_STREAM", 131071,
                                  ["pipe", "streams", "gone"])
        self.assertEqual(rows, [
            ["pipe", "131071", "131072", "131072"],
            ["streams", "131071", "not settable / not reported",
             "not settable / not reported"]])

    def test_charts_unavailable_message(self):
        e = rp.ChartsUnavailable("x")
        self.assertIsInstance(e, RuntimeError)
        if not _common.have_matplotlib():
            with self.assertRaises(rp.ChartsUnavailable) as cm:
                rp._pyplot()
            self.assertIn("pip install matplotlib", str(cm.exception))


if __name__ == "__main__":
    unittest.main()

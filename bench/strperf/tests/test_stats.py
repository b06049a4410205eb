#!/usr/bin/env python3
"""strperf_stats: the line fit, improvement, min/median/max, sizes and the
aggregation of repetitions."""
import random
import unittest

import _common  # noqa: F401
import strperf_stats as st


def pt(test, impl, size, rep, tx, rx, status="ok", bufsize=131071, el=1.0):
    return {"test": test, "impl": impl, "msg_size": size, "rep": rep,
            "bufsize": bufsize, "status": status, "tx_per_s": tx,
            "rx_per_s": rx, "tx_msgs": int(tx * el), "rx_msgs": int(rx * el),
            "note": "" if status == "ok" else "boom"}


class TestFit(unittest.TestCase):
    def test_exact_line(self):
        xs = [1, 2, 4, 8, 16, 1024, 16384]
        ys = [2e-6 + 3e-9 * x for x in xs]
        f = st.fit_line(xs, ys)
        self.assertAlmostEqual(f["intercept"], 2e-6, delta=1e-15)
        self.assertAlmostEqual(f["slope"], 3e-9, delta=1e-18)
        self.assertAlmostEqual(f["r2"], 1.0, places=9)
        self.assertEqual(f["n"], len(xs))

    def test_noisy_line(self):
        rnd = random.Random(42)
        xs = list(range(0, 20000, 100))
        ys = [5.0 + 0.25 * x + rnd.uniform(-1, 1) for x in xs]
        f = st.fit_line(xs, ys)
        self.assertAlmostEqual(f["intercept"], 5.0, delta=0.3)
        self.assertAlmostEqual(f["slope"], 0.25, delta=1e-4)
        self.assertGreater(f["r2"], 0.999)

    def test_needs_two_x(self):
        with self.assertRaises(ValueError):
            st.fit_line([4], [1.0])
        with self.assertRaises(ValueError):
            st.fit_line([4, 4], [1.0, 2.0])
        with self.assertRaises(ValueError):
            st.fit_line([1, 2], [1.0])

    def test_delay_fit_from_rates(self):
        a, b = 1.5e-6, 0.4e-9
        pts = [pt("UDP_STREAM", "sockets", s, 1, 1 / (a + b * s),
                  1 / (a + b * s)) for s in (1, 64, 1024, 8192, 16384)]
        f = st.delay_fit(st.aggregate(pts), "UDP_STREAM", "sockets", 131071)
        self.assertAlmostEqual(f["intercept"], a, delta=a * 1e-6)
        self.assertAlmostEqual(f["slope"], b, delta=b * 1e-6)
        self.assertIsNone(st.delay_fit(st.aggregate(pts[:1]), "UDP_STREAM",
                                       "sockets", 131071))


class TestImprovement(unittest.TestCase):
    def test_pct(self):
        self.assertAlmostEqual(st.improvement_pct(130, 100), 30.0)
        self.assertAlmostEqual(st.improvement_pct(50, 100), -50.0)
        self.assertAlmostEqual(st.improvement_pct(100, 100), 0.0)
        self.assertIsNone(st.improvement_pct(100, 0))
        self.assertIsNone(st.improvement_pct(100, None))

    def test_series_and_split(self):
        pts = []
        for s in (1, 64, 512, 1024, 4096):
            pts.append(pt("T", "sockets", s, 1, 100.0, 100.0))
            pts.append(pt("T", "x", s, 1, 140.0, 140.0 if s < 1024 else 90.0))
        pts.append(pt("T", "x", 8192, 1, 5.0, 5.0))   # no baseline there
        ser = st.improvement_series(st.aggregate(pts), "T", "x", "sockets",
                                    131071)
        self.assertEqual([s for s, _ in ser], [1, 64, 512, 1024, 4096])
        lo, hi = st.split_mean(ser)
        self.assertAlmostEqual(lo, 40.0)
        self.assertAlmostEqual(hi, -10.0)
        self.assertEqual(st.split_mean([]), (None, None))


class TestSummaries(unittest.TestCase):
    def test_summarize(self):
        s = st.summarize([3, 1, 2])
        self.assertEqual((s["min"], s["median"], s["max"], s["n"]),
                         (1, 2, 3, 3))
        self.assertEqual(st.summarize([4, 1, 2, 3])["median"], 2.5)
        with self.assertRaises(ValueError):
            st.summarize([])

    def test_aggregate(self):
        pts = [pt("T", "a", 8, 1, 110, 100), pt("T", "a", 8, 2, 120, 90),
               pt("T", "a", 8, 3, 100, 80), pt("T", "a", 8, 4, 0, 0, "error"),
               pt("T", "b", 8, 1, 0, 0, "skipped"),
               pt("T", "a", 16, 1, 50, 50)]
        ag = st.aggregate(pts)
        self.assertEqual(len(ag), 3)
        a8 = [x for x in ag if x["impl"] == "a" and x["msg_size"] == 8][0]
        self.assertEqual((a8["n"], a8["n_ok"], a8["n_error"]), (4, 3, 1))
        self.assertEqual((a8["rx_min"], a8["rx_median"], a8["rx_max"]),
                         (80, 90, 100))
        self.assertEqual(a8["tx_median"], 110)
        self.assertAlmostEqual(a8["loss_pct_max"], 25.0)
        self.assertEqual(a8["notes"], ["boom"])
        self.assertAlmostEqual(st.spread_pct(a8), 100.0 * 20 / 90)
        b8 = [x for x in ag if x["impl"] == "b"][0]
        self.assertEqual((b8["n_ok"], b8["n_skipped"]), (0, 1))
        self.assertNotIn("rx_median", b8)
        self.assertEqual(st.series(ag, "T", "a", 131071), [(8, 90), (16, 50)])


class TestSizes(unittest.TestCase):
    def test_range(self):
        self.assertEqual(st.size_range(1, 16384, 2),
                         [2 ** i for i in range(15)])
        self.assertEqual(st.size_range(1, 16384, 4),
                         [1, 4, 16, 64, 256, 1024, 4096, 16384])
        self.assertEqual(st.size_range(1, 10, 1.5), [1, 2, 3, 5, 8])
        self.assertEqual(st.size_range(7, 7, 2), [7])
        for bad in ((0, 10, 2), (5, 4, 2), (1, 10, 1)):
            with self.assertRaises(ValueError):
                st.size_range(*bad)

    def test_mtu_sweep(self):
        s = st.mtu_sweep()
        self.assertEqual(s, sorted(set(s)))
        for b in st.MTU_BOUNDARIES:
            for d in (-1, 0, 1):
                self.assertIn(b + d, s) if b + d <= 65536 else None
        self.assertTrue(all(1 <= x <= 65536 for x in s))
        self.assertEqual(st.mtu_sweep(1400, 1510),
                         [x for x in s if 1400 <= x <= 1510])


if __name__ == "__main__":
    unittest.main()

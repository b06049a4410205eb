#!/usr/bin/env python3
"""strperf's command line: defaults, --paper, --sweep-mtu, bad input, and
the plan built from strperf-point --list."""
import contextlib
import io
import unittest

import _common  # noqa: F401  (sets sys.path)
import strperf_cli as cli

LISTING = {
    "version": "1",
    "tests": [
        {"name": "UDP_STREAM", "family": "udp", "mode": "stream",
         "max_size": 65507, "impls": [
             {"name": "sockets", "max_size": 65507, "desc": "udp"},
             {"name": "sockets-nice", "max_size": 65507, "desc": "udp n"}]},
        {"name": "TCP_STREAM", "family": "tcp", "mode": "stream",
         "max_size": 16777216, "impls": [
             {"name": "sockets", "max_size": 16777216, "desc": "tcp"}]},
        {"name": "PIPE_STREAM", "family": "pipe", "mode": "stream",
         "max_size": 16777216, "impls": [
             {"name": "pipe", "max_size": 16777216, "desc": "pipe"},
             {"name": "socketpair", "max_size": 16777216, "desc": "sp"}]},
    ],
}


def parse(*argv):
    return cli.parse_args(list(argv))


def parse_fails(*argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            cli.parse_args(list(argv))
        except SystemExit as e:
            return e.code, err.getvalue()
    raise AssertionError("parse_args accepted %r" % (argv,))


class TestDefaults(unittest.TestCase):
    def test_quick_default(self):
        a = parse()
        self.assertEqual(a.tests, cli.ALL_TESTS)
        self.assertEqual(a.sizes, [1, 4, 16, 64, 256, 1024, 4096, 16384])
        self.assertEqual(a.testtime, 1.5)
        self.assertEqual(a.bufsizes, [131071])
        self.assertEqual(a.repeat, 1)
        self.assertEqual(a.out, "report")
        self.assertIsNone(a.impls)
        self.assertFalse(a.rx_waitall)

    def test_paper(self):
        a = parse("--paper")
        self.assertEqual(a.sizes, [2 ** i for i in range(15)])
        self.assertEqual(a.testtime, 10.0)
        self.assertEqual(a.bufsizes, [131071])

    def test_explicit(self):
        a = parse("--tests", "udp_stream,TCP_RR", "--impls", "sockets",
                  "--start", "8", "--end", "100", "--mult", "3",
                  "--testtime", "0.5", "--bufsizes", "0,65536",
                  "--repeat", "3", "--rx-waitall", "--out", "x")
        self.assertEqual(a.tests, ["UDP_STREAM", "TCP_RR"])
        self.assertEqual(a.impls, ["sockets"])
        self.assertEqual(a.sizes, [8, 24, 72])
        self.assertEqual(a.bufsizes, [0, 65536])
        self.assertEqual(a.repeat, 3)
        self.assertTrue(a.rx_waitall)

    def test_sweep(self):
        a = parse("--sweep-mtu")
        self.assertEqual(a.tests, cli.SWEEP_TESTS)
        for s in (1471, 1472, 1473, 1500, 8972, 9000, 65483, 65507, 65536):
            self.assertIn(s, a.sizes)
        self.assertEqual(a.sizes, sorted(set(a.sizes)))
        b = parse("--sweep-mtu", "--start", "1400", "--end", "1600")
        self.assertTrue(all(1400 <= s <= 1600 for s in b.sizes))
        self.assertIn(1472, b.sizes)
        self.assertNotIn(4096, b.sizes)


class TestBadInput(unittest.TestCase):
    def test_rejected(self):
        for argv in (["--mult", "1"], ["--start", "0"],
                     ["--start", "10", "--end", "5"], ["--testtime", "0"],
                     ["--testtime", "-1"], ["--repeat", "0"],
                     ["--bufsizes", "-5"], ["--bufsizes", "1,,2"],
                     ["--bufsizes", "abc"], ["--tests", "UDP_RR,udp_rr"],
                     ["--paper", "--testtime", "5"], ["--paper", "--end", "8"],
                     ["--paper", "--sweep-mtu"],
                     ["--sweep-mtu", "--mult", "2"],
                     ["--sweep-mtu", "--start", "100", "--end", "200"],
                     ["--end", "999999999"], ["--bogus"],
                     ["--keep-going", "--stop-on-error"]):
            code, msg = parse_fails(*argv)
            self.assertEqual(code, 2, argv)
            self.assertIn("error", msg, argv)

    def test_missing_binary(self):
        with self.assertRaises(cli.UsageError):
            cli.find_point_binary("/nonexistent/strperf-point")


class TestEta(unittest.TestCase):
    def test_skipped_rows_cost_nothing(self):
        plan = [{"test": "UDP_STREAM", "impl": i, "msg_size": s,
                 "bufsize": 131071, "rep": 1}
                for s in (1, 4) for i in ("sockets", "xtios")]
        eta = cli.Eta(2.0)
        self.assertAlmostEqual(eta.left(plan, 0),
                               4 * (2.0 + cli.POINT_OVERHEAD_S))
        eta.add(plan[0], {"status": "ok", "wall_s": 2.5})
        eta.add(plan[1], {"status": "skipped", "wall_s": 0.01})
        # one sockets point at 2.5 s, one xtios point at 0.01 s
        self.assertAlmostEqual(eta.left(plan, 2), 2.51)
        self.assertEqual(eta.left(plan, 4), 0)

    def test_not_run_record(self):
        r = cli.not_run_record({"test": "TCP_RR", "impl": "tpi",
                                "msg_size": 64, "bufsize": 0, "rep": 2},
                               {"msg_size": 1, "note": "t_bind: boom"})
        self.assertEqual(r["status"], "skipped")
        self.assertEqual(r["note"], "not run: this row failed at 1 B "
                         "(t_bind: boom)")
        self.assertNotIn("rx_per_s", r)


class TestPlan(unittest.TestCase):
    def test_all_impls_interleaved(self):
        a = parse("--tests", "UDP_STREAM,PIPE_STREAM", "--start", "1",
                  "--end", "4", "--mult", "4", "--repeat", "2")
        pts, info = cli.make_plan(a, LISTING)
        self.assertEqual(info["impls"]["UDP_STREAM"],
                         ["sockets", "sockets-nice"])
        self.assertEqual(len(pts), 2 * 2 * 2 * 2)
        first = [(p["test"], p["msg_size"], p["rep"], p["impl"])
                 for p in pts[:4]]
        self.assertEqual(first, [("UDP_STREAM", 1, 1, "sockets"),
                                 ("UDP_STREAM", 1, 1, "sockets-nice"),
                                 ("UDP_STREAM", 1, 2, "sockets"),
                                 ("UDP_STREAM", 1, 2, "sockets-nice")])

    def test_impl_filter_and_limits(self):
        a = parse("--tests", "UDP_STREAM,TCP_STREAM", "--impls", "sockets",
                  "--sweep-mtu", "--start", "65400")
        pts, info = cli.make_plan(a, LISTING)
        self.assertEqual({p["impl"] for p in pts}, {"sockets"})
        udp = [p["msg_size"] for p in pts if p["test"] == "UDP_STREAM"]
        tcp = [p["msg_size"] for p in pts if p["test"] == "TCP_STREAM"]
        self.assertEqual(max(udp), 65507)
        self.assertIn(65536, tcp)
        self.assertEqual(info["max_size"]["UDP_STREAM"], 65507)

    def test_plan_errors(self):
        with self.assertRaises(cli.UsageError):
            cli.make_plan(parse("--tests", "UDP_STREAM", "--impls", "pipe"),
                          LISTING)
        with self.assertRaises(cli.UsageError):
            cli.make_plan(parse("--tests", "SCTP_STREAM"), LISTING)
        with self.assertRaises(cli.UsageError):
            cli.make_plan(parse("--tests", "UDP_STREAM", "--impls", "xti"),
                          LISTING)

    def test_placement(self):
        self.assertIsNone(cli.placement_cpus("free", [0, 1]))
        self.assertEqual(cli.placement_cpus("same", [2, 5]), (2, 2))
        self.assertEqual(cli.placement_cpus("split", [2, 5]), (2, 5))
        with self.assertRaises(ValueError):
            cli.placement_cpus("split", [3])
        self.assertEqual(parse().placement, "free")
        code, msg = parse_fails("--placement", "nowhere")
        self.assertEqual(code, 2)
        a = parse("--placement", "same", "--testtime", "1")
        cmd = cli.point_command("/bin/x", {"test": "UDP_RR",
                                           "impl": "sockets",
                                           "msg_size": 1, "bufsize": 0,
                                           "rep": 1}, a)
        c = a.cpus[0]
        self.assertEqual(cmd[-4:], ["--cpu-tx", str(c), "--cpu-rx", str(c)])

    def test_point_command(self):
        a = parse("--testtime", "0.25", "--rx-waitall")
        cmd = cli.point_command("/bin/x", {"test": "TCP_STREAM",
                                           "impl": "sockets",
                                           "msg_size": 64, "bufsize": 0,
                                           "rep": 1}, a)
        self.assertEqual(cmd, ["/bin/x", "--test", "TCP_STREAM", "--impl",
                               "sockets", "--size", "64", "--time", "0.25",
                               "--bufsize", "0", "--rx-waitall"])


if __name__ == "__main__":
    unittest.main()

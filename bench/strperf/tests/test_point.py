#!/usr/bin/env python3
"""strperf-point: --list, argument checking, the JSON line of each test,
and the watchdog (a child that dies or hangs, SIGINT): always a clean
error and no process left behind."""
import json
import signal
import subprocess
import sys
import time
import unittest

import _common

BIN = _common.point_binary()
FIELDS = ("test", "impl", "msg_size", "testtime", "bufsize", "tx_msgs",
          "rx_msgs", "tx_per_s", "rx_per_s", "tx_bytes", "rx_bytes",
          "status", "note", "elapsed")


def run(*args, timeout=60):
    p = subprocess.run([BIN] + [str(a) for a in args], capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def point(test, impl, size, t=0.2, *extra):
    rc, out, err = run("--test", test, "--impl", impl, "--size", size,
                       "--time", t, *extra)
    lines = out.strip().splitlines()
    if len(lines) != 1:
        raise AssertionError("want one JSON line, got %r (stderr %r)" %
                             (out, err))
    return rc, json.loads(lines[0]), err


class TestList(unittest.TestCase):
    def test_list(self):
        rc, out, err = run("--list")
        self.assertEqual(rc, 0)
        doc = json.loads(out)
        tests = {t["name"]: t for t in doc["tests"]}
        self.assertEqual(set(tests), {"UDP_STREAM", "TCP_STREAM", "UDP_RR",
                                      "TCP_RR", "PIPE_STREAM"})
        names = lambda t: [i["name"] for i in tests[t]["impls"]]  # noqa
        for t in ("UDP_STREAM", "TCP_STREAM", "UDP_RR", "TCP_RR"):
            self.assertEqual(names(t), ["sockets", "sockets-nice", "xtios",
                                        "tpi"], t)
        self.assertEqual(names("PIPE_STREAM"), ["pipe", "socketpair", "streams"])
        self.assertEqual(tests["UDP_STREAM"]["max_size"], 65507)
        rc, out, err = run("--help")
        self.assertEqual(rc, 0)
        self.assertIn("--rx-waitall", out)


class TestArguments(unittest.TestCase):
    def test_rejected(self):
        base = ["--test", "UDP_STREAM", "--impl", "sockets"]
        cases = [
            (base + ["--size", "0"], "--size"),
            (base + ["--size", "65508"], "at most 65507"),
            (base + ["--size", "-1"], "--size"),
            (base + ["--size", "12abc"], "--size"),
            (base, "--size is required"),
            (base + ["--size", "1", "--time", "-1"], "--time"),
            (base + ["--size", "1", "--time", "0"], "--time"),
            (base + ["--size", "1", "--time", "nan"], "--time"),
            (base + ["--size", "1", "--bufsize", "-5"], "--bufsize"),
            (base + ["--size", "1", "--time"], "--time"),
            (["--test", "UDP_FOO", "--impl", "sockets", "--size", "1"],
             "unknown test"),
            (["--test", "UDP_STREAM", "--impl", "pipe", "--size", "1"],
             "does not serve"),
            (["--test", "PIPE_STREAM", "--impl", "nope", "--size", "1"],
             "does not serve"),
            (["--impl", "sockets", "--size", "1"], "--test is required"),
            (base + ["--size", "1", "--fault", "x"], "--fault"),
            (base + ["--size", "1", "--cpu-tx", "-1"], "--cpu-tx"),
            (base + ["--size", "1", "--cpu-rx", "1024"], "--cpu-rx"),
            (base + ["--size", "1", "extra"], "unexpected argument"),
            (["--bogus"], "unknown option"),
        ]
        for args, want in cases:
            rc, out, err = run(*args)
            self.assertEqual(rc, 2, args)
            self.assertEqual(out, "", args)
            self.assertIn("error", err, args)
            self.assertIn(want, err, args)


class TestPoints(unittest.TestCase):
    def check(self, j, test, impl, size):
        for f in FIELDS:
            self.assertIn(f, j)
        self.assertEqual((j["test"], j["impl"], j["msg_size"]),
                         (test, impl, size))
        self.assertEqual(j["status"], "ok", j["note"])
        self.assertGreater(j["tx_msgs"], 0)
        self.assertGreater(j["rx_msgs"], 0)
        self.assertLessEqual(j["rx_msgs"], j["tx_msgs"])
        self.assertGreater(j["elapsed"], 0.15)
        self.assertLess(j["elapsed"], 1.5)
        self.assertAlmostEqual(j["tx_per_s"], j["tx_msgs"] / j["elapsed"],
                               delta=1 + j["tx_per_s"] * 1e-3)
        self.assertAlmostEqual(j["rx_per_s"], j["rx_msgs"] / j["elapsed"],
                               delta=1 + j["rx_per_s"] * 1e-3)

    def test_udp_stream(self):
        rc, j, err = point("UDP_STREAM", "sockets", 64)
        self.assertEqual(rc, 0)
        self.check(j, "UDP_STREAM", "sockets", 64)
        self.assertEqual(j["rx_bytes"], 64 * j["rx_msgs"])
        self.assertEqual(j["bufsize"], 131071)
        self.assertGreaterEqual(j["rx_rcvbuf"], 131071)
        rc, j, err = point("UDP_STREAM", "sockets", 65507)
        self.check(j, "UDP_STREAM", "sockets", 65507)

    def test_byte_streams_lose_nothing(self):
        for test, impl, extra in (("TCP_STREAM", "sockets", ()),
                                  ("TCP_STREAM", "sockets", ("--rx-waitall",)),
                                  ("PIPE_STREAM", "pipe", ()),
                                  ("PIPE_STREAM", "pipe", ("--rx-waitall",)),
                                  ("PIPE_STREAM", "socketpair", ()),
                                  ("PIPE_STREAM", "streams", ()),
                                  ("PIPE_STREAM", "streams", ("--rx-waitall",))):
            rc, j, err = point(test, impl, 100, 0.2, *extra)
            self.assertEqual(rc, 0, err)
            if j["status"] == "skipped":    # streams, in a TSan build
                self.assertEqual(impl, "streams")
                continue
            self.check(j, test, impl, 100)
            self.assertEqual(j["tx_bytes"], j["rx_bytes"], (test, impl))
            self.assertEqual(j["rx_msgs"], j["rx_bytes"] // 100)
            self.assertEqual(j["rx_waitall"], bool(extra))

    def test_pipe_bufsize(self):
        rc, j, err = point("PIPE_STREAM", "pipe", 10, 0.2, "--bufsize",
                           "65536")
        self.check(j, "PIPE_STREAM", "pipe", 10)
        self.assertEqual(j["rx_rcvbuf"], 65536)

    def test_request_response(self):
        for test in ("UDP_RR", "TCP_RR"):
            rc, j, err = point(test, "sockets", 200)
            self.assertEqual(rc, 0, err)
            self.check(j, test, "sockets", 200)
            self.assertEqual(j["tx_msgs"], j["rx_msgs"])
            self.assertIn(j["server_msgs"] - j["tx_msgs"], (0, 1))

    def test_byte_stream_shortfall_is_an_error(self):
        # a byte stream that does not deliver what it took is broken: the
        # point is an error with the counts, no rate
        for test, impl in (("TCP_STREAM", "sockets"),
                           ("PIPE_STREAM", "pipe")):
            rc, j, err = point(test, impl, 64, 0.3, "--fault", "stop-rx")
            self.assertEqual(rc, 1, (test, j))
            self.assertEqual(j["status"], "error")
            self.assertIn("the byte stream delivered 64 of the", j["note"])
            self.assertIsNone(j["rx_per_s"])

    def test_stalled_round_trip_is_named(self):
        # the server answers one request and then no more, as when a
        # datagram is lost: the point is ok (1 round trip) and says so
        rc, j, err = point("UDP_RR", "sockets", 64, 0.3, "--fault",
                           "mute-rx")
        self.assertEqual(rc, 0, err)
        self.assertEqual(j["status"], "ok", j["note"])
        self.assertEqual(j["tx_msgs"], 1)
        self.assertIn("the client once waited", j["note"])
        self.assertIn("not resent", j["note"])
        rc, j, err = point("UDP_RR", "sockets", 64, 0.3)
        self.assertNotIn("waited", j["note"])

    def test_pinned(self):
        import os
        cpu = sorted(os.sched_getaffinity(0))[0]
        rc, j, err = point("UDP_RR", "sockets", 16, 0.2, "--cpu-tx",
                           cpu, "--cpu-rx", cpu)
        self.assertEqual(rc, 0, err)
        self.check(j, "UDP_RR", "sockets", 16)
        self.assertEqual((j["cpu_tx"], j["cpu_rx"]), (cpu, cpu))
        rc, j, err = point("UDP_RR", "sockets", 16, 0.2)
        self.assertEqual((j["cpu_tx"], j["cpu_rx"]), (-1, -1))
        # a CPU this process may not use: a clean error, no number
        bad = max(os.sched_getaffinity(0)) + 1
        if bad < 1024:
            rc, j, err = point("UDP_RR", "sockets", 16, 0.2, "--cpu-tx",
                               bad)
            self.assertEqual(rc, 1)
            self.assertEqual(j["status"], "error")
            self.assertIn("sched_setaffinity", j["note"])
            self.assertIsNone(j["rx_per_s"])

    def test_nice(self):
        rc, j, err = point("TCP_STREAM", "sockets-nice", 64)
        self.assertEqual(rc, 0)
        if j["status"] == "skipped":
            self.assertIn("setpriority", j["note"])
        else:
            self.check(j, "TCP_STREAM", "sockets-nice", 64)
            self.assertEqual((j["nice_tx"], j["nice_rx"]), (-20, 19))


class TestNiceRefused(unittest.TestCase):
    """sockets-nice where lowering the nice value is not allowed: every
    point "skipped" with the reason, no number (setpriv drops
    CAP_SYS_NICE; an unprivileged user has none to drop)."""

    def test_skipped_with_note(self):
        import shutil
        setpriv = shutil.which("setpriv")
        if not setpriv:
            self.skipTest("setpriv (util-linux) not installed")
        p = subprocess.run([setpriv, "--inh-caps=-sys_nice",
                            "--bounding-set=-sys_nice", BIN, "--test",
                            "TCP_RR", "--impl", "sockets-nice", "--size",
                            "64", "--time", "0.2"],
                           capture_output=True, text=True, timeout=60)
        if "setpriv:" in p.stderr:
            self.skipTest("setpriv cannot drop capabilities here: %s" %
                          p.stderr.strip())
        self.assertEqual(p.returncode, 0, p.stderr)
        j = json.loads(p.stdout)
        self.assertEqual(j["status"], "skipped")
        self.assertIn("setpriority(-20) refused", j["note"])
        self.assertIn("CAP_SYS_NICE", j["note"])
        for f in ("tx_per_s", "rx_per_s", "tx_msgs", "rx_msgs"):
            self.assertIsNone(j[f])


class TestXTI(unittest.TestCase):
    """xtios (/dev/inet/*) and tpi (/dev/udp, /dev/tcp): a point measures,
    or, while the provider is not there, is "skipped" with the reason and
    null in every measured field -- never a zero.  A provider that fails
    (its bugs are its own tests' business) gives a clean error with its
    reason and no number."""
    MEASURED = ("tx_msgs", "rx_msgs", "tx_per_s", "rx_per_s", "elapsed",
                "tx_bytes", "rx_bytes")

    def test_ok_or_skipped(self):
        for test in ("UDP_STREAM", "TCP_STREAM", "UDP_RR", "TCP_RR"):
            for impl in ("xtios", "tpi"):
                rc, j, err = point(test, impl, 64, "0.2031")
                self.assertIn(j["status"], ("ok", "skipped", "error"), j)
                self.assertEqual(rc, 1 if j["status"] == "error" else 0,
                                 (test, impl, err, j))
                if j["status"] == "error":
                    # the provider's fault, not the tool's (their own
                    # tests cover them): a clean error, no number
                    sys.stderr.write("note: %s %s: %s\n" %
                                     (test, impl, j["note"]))
                    self.assertTrue(j["note"])
                    for f in self.MEASURED:
                        self.assertIsNone(j[f], (test, impl, f))
                elif j["status"] == "skipped":
                    self.assertTrue(j["note"].startswith(
                        "provider not available") or
                        "ThreadSanitizer" in j["note"], j["note"])
                    for f in self.MEASURED:
                        self.assertIsNone(j[f], (test, impl, f))
                else:
                    self.check_ok(j, test, impl)
        self.assertEqual(_common.wait_gone([BIN, "0.2031"]), [])

    def check_ok(self, j, test, impl):
        TestPoints.check(self, j, test, impl, 64)
        if test.endswith("_RR"):
            self.assertEqual(j["tx_msgs"], j["rx_msgs"])
        elif test == "TCP_STREAM":
            # orderly release both ways: t_close discards nothing
            self.assertEqual(j["tx_bytes"], j["rx_bytes"], j["note"])
        self.assertNotIn("no T_ORDREL", j["note"])


class TestWatchdog(unittest.TestCase):
    def no_strays(self, tag):
        left = _common.wait_gone([BIN, tag])
        self.assertEqual(left, [], "processes left behind: %s" % left)

    def test_child_dies(self):
        for fault in ("die-tx", "die-rx"):
            tag = "0.2%d1" % len(fault)
            t0 = time.monotonic()
            rc, j, err = point("TCP_STREAM", "sockets", 64, tag, "--fault",
                               fault)
            self.assertEqual(rc, 1)
            self.assertEqual(j["status"], "error")
            self.assertIn("died without a result", j["note"])
            self.assertIn("strperf-point: error:", err)
            self.assertLess(time.monotonic() - t0, 5)
            self.no_strays(tag)

    def test_child_hangs(self):
        for fault, test in (("hang-rx", "TCP_STREAM"),
                            ("hang-tx", "UDP_STREAM")):
            tag = "0.3%d7" % len(test)
            t0 = time.monotonic()
            rc, j, err = point(test, "sockets", 64, tag, "--fault", fault,
                               "--grace", "1")
            took = time.monotonic() - t0
            self.assertEqual(rc, 1, j)
            self.assertEqual(j["status"], "error")
            self.assertTrue("deadline" in j["note"], j["note"])
            self.assertLess(took, 4)
            self.no_strays(tag)

    def test_sigint(self):
        tag = "7.0123"
        p = subprocess.Popen([BIN, "--test", "UDP_STREAM", "--impl",
                              "sockets", "--size", "64", "--time", tag],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        end = time.monotonic() + 10
        while (len(_common.processes_with(BIN, tag)) < 3 and
               time.monotonic() < end):
            time.sleep(0.05)
        self.assertEqual(len(_common.processes_with(BIN, tag)), 3)
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=10)
        self.assertEqual(p.returncode, 128 + signal.SIGINT)
        self.assertEqual(json.loads(out)["status"], "error")
        self.assertIn("interrupted", err)
        self.no_strays(tag)

    def test_parent_killed(self):
        tag = "7.0456"
        p = subprocess.Popen([BIN, "--test", "TCP_STREAM", "--impl",
                              "sockets", "--size", "64", "--time", tag],
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        p.kill()
        p.wait()
        self.no_strays(tag)


if __name__ == "__main__":
    unittest.main()

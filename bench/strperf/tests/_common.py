"""Shared by the strperf tests: where the code and strperf-point are, and a
check that no strperf-point process is left behind.

Run one file:  STRPERF_POINT=build/bench/strperf-point python3 test_x.py
(meson test sets STRPERF_POINT itself.)
"""
import os
import sys
import time

TESTS = os.path.dirname(os.path.abspath(__file__))
STRPERF_DIR = os.path.dirname(TESTS)
LAUNCHER = os.path.join(STRPERF_DIR, "strperf")
sys.path.insert(0, STRPERF_DIR)


def point_binary():
    """The strperf-point under test; fails loudly when there is none."""
    p = os.environ.get("STRPERF_POINT")
    if not p:
        root = os.path.dirname(os.path.dirname(STRPERF_DIR))
        p = os.path.join(root, "build", "bench", "strperf-point")
    if not (os.path.isfile(p) and os.access(p, os.X_OK)):
        raise RuntimeError("strperf-point not found at %s: build it and set "
                           "STRPERF_POINT" % p)
    return os.path.abspath(p)


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def processes_with(*words):
    """PIDs whose command line holds every one of words."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        text = [a.decode(errors="replace") for a in args]
        if all(any(w in a for a in text) for w in words):
            out.append(int(d))
    return out


def wait_gone(words, timeout=3.0):
    """Wait until no process matches words; return those still there."""
    end = time.monotonic() + timeout
    while True:
        left = processes_with(*words)
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)

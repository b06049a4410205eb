#!/usr/bin/env python3
"""tests/fuzz/mkcorpus.py -- write the seed corpora of the fuzz targets.

The seeds are small valid inputs in each target's input format (see the
comment at the top of fuzz_topt.c and fuzz_script.h): option buffers for
every action, and scripts of TPI primitives that take the loopback
providers through binding, connection, data transfer and release.
Run it from anywhere; it rewrites tests/fuzz/corpus/<target>/seed-*.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# <xti.h>, <xti_inet.h>, <sys/tihdr.h>
T_NEGOTIATE, T_CHECK, T_DEFAULT, T_CURRENT = 0x4, 0x8, 0x10, 0x80
T_YES, T_NO, T_UNSPEC, T_INFINITE = 1, 0, -3, -1
XTI_GENERIC = 0xffff
XTI_DEBUG, XTI_LINGER = 0x0001, 0x0080
XTI_RCVBUF, XTI_RCVLOWAT, XTI_SNDBUF, XTI_SNDLOWAT = 0x1002, 0x1004, 0x1001, 0x1003
INET_IP, INET_TCP, INET_UDP = 0x0, 0x6, 0x11
T_TCP_NODELAY, T_TCP_MAXSEG, T_TCP_KEEPALIVE = 0x1, 0x2, 0x8
T_UDP_CHECKSUM = 0x0600
T_IP_OPTIONS, T_IP_TOS, T_IP_TTL = 0x100, 0x101, 0x102
IP_TOS_OLD = 1
T_ALLOPT = 0

(T_CONN_REQ, T_CONN_RES, T_DISCON_REQ, T_DATA_REQ, T_EXDATA_REQ,
 T_INFO_REQ, T_BIND_REQ, T_UNBIND_REQ, T_UNITDATA_REQ, T_OPTMGMT_REQ,
 T_ORDREL_REQ) = range(11)
T_OPTDATA_REQ, T_ADDR_REQ, T_CAPABILITY_REQ = 24, 25, 28
TC1_INFO, TC1_ACCEPTOR_ID = 1, 2


def opt(level, name, value=b""):
    """One option: t_opthdr and value, padded to a multiple of 4."""
    b = struct.pack("<IIII", 16 + len(value), level, name, 0) + value
    return b + b"\0" * (-len(b) % 4)


def i32(*v):
    return struct.pack("<" + "i" * len(v), *v)


# ---- fuzz_topt: [mode][flags x4][options] ----

def topt(action, options, priv=False, assoc=False, knobs=0):
    acts = {T_NEGOTIATE: 0, T_CHECK: 1, T_DEFAULT: 2, T_CURRENT: 3}
    mode = (1 if priv else 0) | acts[action] << 1 | (0x10 if assoc else 0)
    mode |= knobs << 5
    return bytes([mode]) + i32(action) + options


TOPT_SEEDS = {
    "negotiate-generic": topt(T_NEGOTIATE,
                              opt(XTI_GENERIC, XTI_SNDBUF, i32(8192)) +
                              opt(XTI_GENERIC, XTI_RCVBUF, i32(0)) +
                              opt(XTI_GENERIC, XTI_LINGER, i32(T_YES, 5))),
    "negotiate-tcp": topt(T_NEGOTIATE,
                          opt(INET_TCP, T_TCP_NODELAY, i32(T_YES)) +
                          opt(INET_TCP, T_TCP_KEEPALIVE, i32(T_YES, 10)) +
                          opt(INET_TCP, T_TCP_MAXSEG, i32(1000)), knobs=4),
    "negotiate-debug-priv": topt(T_NEGOTIATE,
                                 opt(XTI_GENERIC, XTI_DEBUG, i32(1)) +
                                 opt(XTI_GENERIC, XTI_DEBUG), priv=True),
    "check": topt(T_CHECK,
                  opt(XTI_GENERIC, XTI_SNDBUF) +
                  opt(INET_IP, T_IP_TTL, i32(300)) +
                  opt(INET_IP, IP_TOS_OLD, b"\x10") +
                  opt(0x5151, 7, b"abc")),
    "default-allopt": topt(T_DEFAULT, opt(XTI_GENERIC, T_ALLOPT)),
    "current-allopt-ip": topt(T_CURRENT, opt(INET_IP, T_ALLOPT), knobs=2),
    "negotiate-allopt-tcp": topt(T_NEGOTIATE,
                                 opt(XTI_GENERIC, XTI_SNDBUF, i32(99999)) +
                                 opt(INET_TCP, T_ALLOPT), knobs=1),
    "assoc-ip": topt(T_NEGOTIATE,
                     opt(INET_IP, T_IP_TOS, i32(0x20)) +
                     opt(INET_IP, T_IP_OPTIONS, bytes(range(1, 13))) +
                     opt(INET_UDP, T_UDP_CHECKSUM, i32(T_NO)), assoc=True),
}


# ---- fuzz_tpi: [provider] then records ----

def rec(ep, ctl, data=None, hipri=False, op=0, self_peer=False):
    hdr = ep | (4 if hipri else 0) | (8 if data is not None else 0)
    hdr |= op << 4 | (0x40 if self_peer else 0)
    b = bytes([hdr]) + struct.pack("<H", len(ctl)) + ctl
    if data is not None:
        b += struct.pack("<H", len(data)) + data
    return b


def bind(ep, conind=0):
    return rec(ep, i32(T_BIND_REQ, 0, 0, conind))


def cap(ep):
    return rec(ep, i32(T_CAPABILITY_REQ, TC1_INFO | TC1_ACCEPTOR_ID),
               hipri=True)


def optmgmt(ep, flags, options):
    return rec(ep, i32(T_OPTMGMT_REQ, len(options), 16, flags) + options)


def conn_req(ep, options=b""):
    # the fix-up appends the next endpoint's address as DEST
    return rec(ep, i32(T_CONN_REQ, 0, 0, len(options), 20 if options else 0)
               + options, op=1)


def conn_res(ep, self_peer=False):
    # the fix-up fills ACCEPTOR_id (next endpoint, or itself) and SEQ
    return rec(ep, i32(T_CONN_RES, 0, 0, 0, 0), op=1, self_peer=self_peer)


def connected(prov, release, bnd=None, copt=None, level=XTI_GENERIC,
              info=True):
    """ep0 listens, ep1 accepts, ep2 connects to ep0 (binding with bnd,
    connecting with the options copt, asking for T_ALLOPT of level)."""
    bnd = bnd or bind
    s = bytes([prov])
    if info:
        s += rec(0, i32(T_INFO_REQ), hipri=True)
    s += bnd(0, conind=2) + bnd(2) + cap(1) + cap(0)
    s += conn_req(2, copt if copt is not None
                  else opt(XTI_GENERIC, XTI_SNDBUF, i32(4096)))
    s += conn_res(0)
    s += rec(2, i32(T_DATA_REQ, 0), b"hello, world")
    s += rec(1, i32(T_DATA_REQ, 1), b"more")
    s += rec(1, i32(T_DATA_REQ, 0), b"end")
    s += rec(2, i32(T_EXDATA_REQ, 0), b"!")
    s += rec(2, i32(T_OPTDATA_REQ, 0, 0, 0), b"od")
    s += rec(1, b"", b"plain write", op=3)
    s += rec(2, i32(T_ADDR_REQ))
    s += optmgmt(1, T_CURRENT, opt(level, T_ALLOPT))
    if release:
        s += rec(2, i32(T_ORDREL_REQ)) + rec(1, i32(T_ORDREL_REQ))
    else:
        s += rec(1, i32(T_DISCON_REQ, -1))
    s += rec(2, i32(T_UNBIND_REQ))
    return s


def accept_on_listener(prov):
    s = bytes([prov])
    s += bind(0, conind=1) + bind(2) + cap(0)
    s += conn_req(2) + conn_res(0, self_peer=True)
    s += rec(0, i32(T_DATA_REQ, 0), b"on the listener")
    s += rec(2, i32(T_DISCON_REQ, -1))
    return s


def refused(prov):
    s = bytes([prov])
    s += bind(0, conind=1) + bind(2) + conn_req(2)
    s += rec(0, i32(T_DISCON_REQ, 0), op=1)     # SEQ of the T_CONN_IND
    s += rec(0, i32(T_DISCON_REQ, 12345))       # no such indication
    s += rec(2, i32(T_UNBIND_REQ))
    return s


def clts():
    s = bytes([0])
    s += rec(0, i32(T_INFO_REQ), hipri=True)
    s += bind(0) + bind(1)
    s += rec(0, i32(T_UNITDATA_REQ, 0, 0, 0, 0), b"datagram", op=1)
    opts = opt(XTI_GENERIC, XTI_DEBUG, i32(0))
    s += rec(1, i32(T_UNITDATA_REQ, 0, 0, len(opts), 20) + opts, b"back",
             op=1, self_peer=False)
    s += optmgmt(0, T_NEGOTIATE, opt(XTI_GENERIC, XTI_SNDBUF, i32(1 << 16)))
    s += optmgmt(0, T_DEFAULT, opt(XTI_GENERIC, T_ALLOPT))
    s += rec(2, i32(T_UNITDATA_REQ, 0, 0, 0, 0), b"unbound", op=1)
    s += rec(0, i32(T_UNBIND_REQ)) + rec(0, i32(T_UNBIND_REQ))
    return s


TPI_SEEDS = {
    "clts": clts(),
    "cots-discon": connected(1, False),
    "cotsord-release": connected(2, True),
    "cots-accept-self": accept_on_listener(1),
    "cotsord-refused": refused(2),
    # errors acknowledged (T_ERROR_ACK), then fatal ones (M_ERROR)
    "bad-primitives": bytes([1]) +
    rec(0, i32(T_BIND_REQ, 100, 4, 0)) + rec(0, i32(T_BIND_REQ)) +
    rec(0, i32(T_UNBIND_REQ)) +
    optmgmt(0, 0x999, opt(XTI_GENERIC, XTI_SNDBUF, i32(1))) +
    optmgmt(0, T_NEGOTIATE, b"\x10\0\0") +
    rec(1, i32(T_DATA_REQ, 0), b"x") + rec(2, i32(99)) + rec(0, b"\x09\0"),
}


# ---- fuzz_inet: the same records; provider 0 udp, 1 inet/udp, 2 tcp,
# 3 inet/tcp, +4 for IPv6 fix-ups; a fixed-up bind is to loopback ----

def ibind(ep, conind=0):
    return rec(ep, i32(T_BIND_REQ, 0, 0, conind), op=1)


def inet_clts(prov):
    s = bytes([prov])
    s += rec(0, i32(T_INFO_REQ), hipri=True)
    s += ibind(0) + ibind(1)
    s += rec(0, i32(T_UNITDATA_REQ, 0, 0, 0, 0), b"datagram", op=1)
    s += optmgmt(0, T_NEGOTIATE, opt(INET_IP, T_IP_TTL, i32(9)))
    opts = opt(INET_IP, T_IP_TOS, i32(16))
    s += rec(1, i32(T_UNITDATA_REQ, 0, 0, len(opts), 20) + opts, b"back",
             op=1)
    s += rec(1, i32(T_UNITDATA_REQ, 0, 0, 0, 0), b"", op=1)
    s += optmgmt(0, T_CURRENT, opt(INET_IP, T_ALLOPT))
    s += optmgmt(1, T_DEFAULT, opt(INET_UDP, T_ALLOPT))
    s += rec(2, i32(T_UNITDATA_REQ, 0, 0, 0, 0), b"unbound", op=1)
    s += rec(0, i32(T_ADDR_REQ))
    s += rec(0, i32(T_UNBIND_REQ)) + rec(0, i32(T_UNBIND_REQ))
    return s


def inet_cots(prov, release):
    return connected(prov, release, bnd=ibind,
                     copt=opt(INET_TCP, T_TCP_NODELAY, i32(T_YES)),
                     level=INET_TCP, info=False)


INET_SEEDS = {
    "udp": inet_clts(0),
    "inet-udp6": inet_clts(1 | 4),
    "tcp-release": inet_cots(2, True),
    "inet-tcp-discon": inet_cots(3, False),
    "tcp6-release": inet_cots(2 | 4, True),
    "tcp-refused": bytes([2]) + ibind(0, conind=1) + ibind(2) +
    conn_req(2) + rec(0, i32(T_DISCON_REQ, 0), op=1) +
    rec(0, i32(T_DISCON_REQ, 12345)) + rec(2, i32(T_UNBIND_REQ)),
    "bad-primitives": bytes([3]) +
    rec(0, i32(T_BIND_REQ, 100, 4, 0)) + rec(0, i32(T_BIND_REQ, 3, 16)) +
    rec(0, i32(T_UNBIND_REQ)) +
    optmgmt(0, 0x999, opt(XTI_GENERIC, XTI_SNDBUF, i32(1))) +
    optmgmt(0, T_NEGOTIATE, b"\x10\0\0") +
    rec(1, i32(T_DATA_REQ, 0), b"x") + rec(2, i32(99)) + rec(0, b"\x09\0"),
}

# fuzz_shmring: ring records (src/drivers/shmring.c): a 16-byte header
# (length, blocks, band, pad, b_flag, pad), then per block type, pad,
# length and the bytes, each part padded to 8.
M_DATA, M_PROTO, M_PASSFP, M_PCPROTO, M_FLUSH = 0x00, 0x01, 0x09, 0x83, 0x86


def ring_rec(blocks, band=0, flag=0):
    """One record of (type, bytes) blocks."""
    body = b""
    for t, b in blocks:
        body += struct.pack("<B3xI", t, len(b)) + b + b"\0" * (-len(b) % 8)
    return struct.pack("<IHBBII", 16 + len(body), len(blocks), band, 0,
                       flag, 0) + body


SHMRING_SEEDS = {
    "data": ring_rec([(M_DATA, b"hello")]),
    "proto-data": ring_rec([(M_PROTO, b"\1\0\0\0"), (M_DATA, b"x" * 20),
                            (M_DATA, b"")], band=3, flag=5),
    "several": ring_rec([(M_PCPROTO, b"hi")]) +
    ring_rec([(M_FLUSH, b"\x07\x02")]) + ring_rec([(M_FLUSH, b"\x01")]) +
    ring_rec([(M_DATA, b"")]) + ring_rec([(M_PASSFP, b"\0" * 24)]),
}


# fuzz_lfc: a record of /dev/udp's local flow control (inet_lfc.c's
# struct lfc_rec, 4096 bytes): magic "LFC1", version, state (1 live),
# family, port (network order), address, rcvbuf, then sent and sent_at
# at 64 and consumed at 128.
def lfc_rec(state=1, family=2, port=7, rcvbuf=212992, sent=0, consumed=0):
    b = bytearray(4096)
    struct.pack_into("<IIII", b, 0, 0x3143464C, 1, state, family)
    struct.pack_into(">H", b, 16, port)
    struct.pack_into("<q", b, 40, rcvbuf)
    struct.pack_into("<QQ", b, 64, sent, 0)
    struct.pack_into("<Q", b, 128, consumed)
    return bytes(b)


LFC_SEEDS = {
    "empty": lfc_rec(),
    "full": lfc_rec(sent=300000, consumed=1000),
    "closed": lfc_rec(state=2),
    "short": lfc_rec()[:100],
}


def write(target, seeds):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if f.startswith("seed-"):
            os.remove(os.path.join(d, f))
    for name, data in seeds.items():
        with open(os.path.join(d, "seed-" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write("fuzz_topt", TOPT_SEEDS)
    write("fuzz_tpi", TPI_SEEDS)
    write("fuzz_inet", INET_SEEDS)
    write("fuzz_shmring", SHMRING_SEEDS)
    write("fuzz_lfc", LFC_SEEDS)

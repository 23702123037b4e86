# SPDX-License-Identifier: BSD-3-Clause
"""The fair start's formulas in Python, written from docs/fairness.md and docs/tokens.md, for the
end-to-end tests (tests/e2e/fair_start.py, page_scenarios.py): the challenge's check and
solver, the entrants' digest and the draw's order; and a way to watch a draw in Redis and hold
the control plane at chosen points of it (SIGSTOP), so that a test sees the places in line that
a large draw would show for longer.
"""

import hashlib
import hmac
import socket
import time


def solves(prefix, nonce, bits):
    """Whether SHA-256(prefix || decimal nonce) starts with bits zero bits."""
    d = hashlib.sha256((prefix + str(nonce)).encode()).digest()
    return bits == 0 or int.from_bytes(d, "big") >> (256 - bits) == 0


def solve(challenge):
    """The smallest decimal nonce solving the token answer's challenge {prefix, bits}."""
    n = 0
    while not solves(challenge["prefix"], n, challenge["bits"]):
        n += 1
    return str(n)


def entrants_digest(event, users):
    """SHA-256("flashgate-entrants-v1" || be32 event || be64 n || sorted be64 users)."""
    h = hashlib.sha256(b"flashgate-entrants-v1")
    h.update(event.to_bytes(4, "big"))
    h.update(len(users).to_bytes(8, "big"))
    for u in sorted(users):
        h.update(u.to_bytes(8, "big"))
    return h.digest()


def draw_order(seed, event, users):
    """The entrants in the draw's order: ascending first 8 bytes (big-endian) of
    HMAC-SHA256(seed, "flashgate-draw-v1" || be32 event || digest || be64 user), ties by user."""
    digest = entrants_digest(event, users)

    def key(u):
        m = hmac.new(seed, b"flashgate-draw-v1" + event.to_bytes(4, "big") + digest +
                     u.to_bytes(8, "big"), hashlib.sha256).digest()
        return (int.from_bytes(m[:8], "big"), u)

    return sorted(users, key=key)


class RedisWatch:
    """One kept connection to Redis over its Unix socket (RESP), for commands in a tight loop."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.f = self.s.makefile("rb")

    def _reply(self):
        line = self.f.readline().rstrip(b"\r\n")
        kind, rest = line[:1], line[1:]
        if kind == b"$":
            return None if rest == b"-1" else self.f.readline().rstrip(b"\r\n").decode()
        if kind == b"*":
            return None if rest == b"-1" else [self._reply() for _ in range(int(rest))]
        if kind == b"-":
            raise RuntimeError("redis: " + rest.decode())
        return rest.decode()

    def cmd(self, *args):
        args = [str(a).encode() for a in args]
        self.s.sendall(b"*%d\r\n" % len(args) +
                       b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
        return self._reply()

    def close(self):
        self.s.close()


def hold_draw(redis_sock, event, timeout, every=None, hold_s=0.8, on_hold=None, pause_s=8):
    """Holds event's draw at chosen points, as a draw of many entrants takes its time: watches
    its key fg:{event}:draw and, once the entrants' digest is there (the control plane has
    ordered the entrants and goes on to write them to PostgreSQL and publish their ranks),
    pauses Redis's writes (CLIENT PAUSE WRITE) so that the draw's decisions (reserve.lua) wait,
    while everything that is read keeps being answered; then on_hold(next) runs (or hold_s
    seconds pass) and Redis goes on (CLIENT UNPAUSE; at most pause_s later by itself). With
    every, it holds again each time the cursor ("next": the entrants decided) has moved on by
    every, until the draw is done or timeout seconds pass. The control plane's redis.timeout
    must be longer than the holds. Returns the cursor at each hold (empty: none happened)."""
    w = RedisWatch(redis_sock)
    key = "fg:{%d}:draw" % event
    stops = []
    end = time.time() + timeout
    mark = None
    try:
        while time.time() < end:
            state, nxt, digest = w.cmd("HMGET", key, "state", "next", "digest")
            if state == "done":
                break
            n = int(nxt) if nxt and nxt.isdigit() else 0
            if (digest and mark is None) or (mark is not None and n >= mark):
                w.cmd("CLIENT", "PAUSE", int(pause_s * 1000), "WRITE")
                try:
                    stops.append(n)
                    if on_hold:
                        on_hold(n)
                    else:
                        time.sleep(hold_s)
                finally:
                    w.cmd("CLIENT", "UNPAUSE")
                if not every:
                    break
                mark = n + every
            time.sleep(0.0002)
    finally:
        w.close()
    return stops

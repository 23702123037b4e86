# SPDX-License-Identifier: BSD-3-Clause
"""The tests' Python library: every Python test and helper script of tests/ imports it (with
tests/lib on sys.path) rather than writing its own.

TAP           ok(cond, name[, diag]), skip(name, reason), diag(text), count(), failed(), done()
Tokens        session, purchase, receipt, reserve_path, b64url, mac16, siphash24, parse_key,
              parse_time, tokens_self_test: flashgate's signed tokens from docs/tokens.md alone
              (the command line is tests/e2e/mint_token.py)
The draw      fairness(): the names of docs/fairness.md's own Python verifier (commitment,
              entrants_digest, rank_key, draw, verify), run from the page, never a copy;
              entrants_digest(event, users) and draw_order(seed, event, users) are the page's
The challenge solves(prefix, nonce, bits), solve(challenge): the proof of work of docs/fairness.md
Waiting       until(fn, timeout[, step]), find(doc, *keys)
Redis         RedisWatch(socket path).cmd(...), hold_draw(...): hold a draw at chosen points
"""

import base64
import hashlib
import hmac
import os
import re
import socket
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# ---- TAP ----------------------------------------------------------------------------------------

_n = 0
_failed = 0


def ok(cond, name, diag=None):
    """Prints one test's line "ok N - name" or "not ok N - name" (then diag as "# " lines,
    at most 40 of them, when it failed); returns bool(cond)."""
    global _n, _failed
    _n += 1
    if not cond:
        _failed += 1
    print(("ok" if cond else "not ok"), _n, "-", name, flush=True)
    if not cond and diag is not None:
        for line in str(diag).splitlines()[:40]:
            print("#", line)
    sys.stdout.flush()
    return bool(cond)


def skip(name, reason):
    """One test not run: "ok N - name # SKIP reason" (counted as passed by TAP)."""
    global _n
    _n += 1
    print("ok %d - %s # SKIP %s" % (_n, name, reason), flush=True)


def diag(text):
    """Each line of text as a TAP comment."""
    for line in str(text).splitlines():
        print("# " + line)
    sys.stdout.flush()


def count():
    """The tests run so far."""
    return _n


def failed():
    """The tests failed so far."""
    return _failed


def done():
    """Prints the plan and exits: 0 when every test passed (and there was one), else 1."""
    print("1..%d" % _n, flush=True)
    sys.exit(1 if _failed or not _n else 0)


# ---- tokens (docs/tokens.md) --------------------------------------------------------------------

def b64url(raw: bytes) -> str:
    """RFC 4648 section 5, without padding."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def mac16(key: bytes, text: str) -> str:
    """base64url of the first 16 bytes of HMAC-SHA256(key, text)."""
    return b64url(hmac.new(key, text.encode("ascii"), hashlib.sha256).digest()[:16])


def signed(key: bytes, text: str) -> str:
    return text + "." + mac16(key, text)


def session(key: bytes, kid: int, user: int, expires_s: int) -> str:
    return signed(key, f"s1.{user}.{expires_s}.{kid}")


def purchase(key: bytes, kid: int, event: int, user: int, expires_s: int) -> str:
    return signed(key, f"p1.{event}.{user}.{expires_s}.{kid}")


MASK64 = (1 << 64) - 1


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & MASK64


def siphash24(key16: bytes, msg: bytes) -> int:
    """SipHash-2-4 (Aumasson and Bernstein), k0 and k1 read little-endian from key16."""
    k0, k1 = int.from_bytes(key16[:8], "little"), int.from_bytes(key16[8:16], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(n):
        for _ in range(n):
            v[0] = (v[0] + v[1]) & MASK64
            v[1] = _rotl(v[1], 13) ^ v[0]
            v[0] = _rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & MASK64
            v[3] = _rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & MASK64
            v[3] = _rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & MASK64
            v[1] = _rotl(v[1], 17) ^ v[2]
            v[2] = _rotl(v[2], 32)

    tail = len(msg) % 8
    for i in range(0, len(msg) - tail, 8):
        m = int.from_bytes(msg[i:i + 8], "little")
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    m = int.from_bytes(msg[len(msg) - tail:], "little") | ((len(msg) & 0xFF) << 56)
    v[3] ^= m
    rounds(2)
    v[0] ^= m
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def receipt(key: bytes, kid: int, event: int, user: int, admitted_ms: int) -> str:
    """r1.<event>.<user>.<admitted_ms>.<kid>.<rmac>: SipHash-2-4 under a key derived from the
    sale key, 8 bytes little-endian, base64url (11 characters)."""
    rkey = hmac.new(key, b"flashgate receipt key", hashlib.sha256).digest()[:16]
    text = f"r1.{event}.{user}.{admitted_ms}.{kid}"
    return text + "." + b64url(siphash24(rkey, text.encode("ascii")).to_bytes(8, "little"))


def reserve_path(key: bytes, kid: int, event: int) -> str:
    pathkey = b64url(hmac.new(key, f"path.{event}".encode("ascii"), hashlib.sha256).digest()[:12])
    return f"/api/v1/events/{event}/reserve/{kid}-{pathkey}"


def parse_key(spec: str) -> bytes:
    kind, _, value = spec.partition(":")
    if kind == "hex":
        return bytes.fromhex(value)
    if kind == "text":
        return value.encode("ascii")
    raise ValueError(f"key '{spec}' must start with hex: or text:")


def parse_time(spec: str) -> int:
    """Unix seconds, or +N / -N seconds from now."""
    if spec[:1] in "+-":
        return int(time.time()) + int(spec)
    return int(spec)


def tokens_self_test() -> int:
    """Checks the worked examples of docs/tokens.md; 0 when all match (mismatches printed as
    comments), 1 otherwise."""
    auth = bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0")
    sale = b"sale key 3 for the demo, 32 byte"
    cases = [
        ("session", session(auth, 1, 1234567, 1767225600),
         "s1.1234567.1767225600.1.F6euVysiiGpbYd3q4eW72g"),
        ("purchase", purchase(sale, 3, 42, 1234567, 1767225900),
         "p1.42.1234567.1767225900.3.V-OnkLWYCKB6pfwVMXAkvQ"),
        ("receipt", receipt(sale, 3, 42, 1234567, 1767225601234),
         "r1.42.1234567.1767225601234.3.-CJhRdWUgyQ"),
        ("path", reserve_path(sale, 3, 42), "/api/v1/events/42/reserve/3-8adNU1Sny37zYiTo"),
    ]
    # The reference vector of the SipHash paper (key 00..0f, message 00..0e).
    sip = siphash24(bytes(range(16)), bytes(range(15)))
    cases.append(("siphash", f"{sip:016x}", "a129ca6149be45e5"))
    bad = 0
    for name, got, want in cases:
        if got != want:
            print(f"# {name}: got {got}, docs/tokens.md says {want}")
            bad += 1
    return 1 if bad else 0



# ---- the draw (docs/fairness.md's own verifier) -------------------------------------------------

_FAIRNESS = {}


def fairness(doc=os.path.join(ROOT, "docs", "fairness.md")):
    """The namespace of the page's first ```python block (commitment, entrants_digest, rank_key,
    draw, verify), run from the page itself so that tests use the documented code, not a copy.
    Raises ValueError when the page has no such block."""
    if doc not in _FAIRNESS:
        with open(doc, encoding="utf-8") as f:
            m = re.search(r"^```python\n(.*?)^```$", f.read(), re.S | re.M)
        if m is None:
            raise ValueError("%s has no ```python block" % doc)
        ns = {}
        exec(compile(m.group(1), doc, "exec"), ns)  # noqa: S102 (our own documentation)
        _FAIRNESS[doc] = ns
    return _FAIRNESS[doc]


def entrants_digest(event, users):
    """docs/fairness.md's digest of the entrants (bytes)."""
    return fairness()["entrants_digest"](event, users)


def draw_order(seed, event, users):
    """docs/fairness.md's draw: the entrants in rank order (element 0 has rank 1)."""
    return fairness()["draw"](seed, event, users)


# ---- the challenge (proof of work) --------------------------------------------------------------

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



# ---- waiting ------------------------------------------------------------------------------------


def until(fn, timeout, step=0.1):
    """Calls fn until it returns a true value or timeout seconds passed; returns the last value."""
    end = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() >= end:
            return v
        time.sleep(step)


def find(d, *keys):
    """d[k1][k2]... or None."""
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


# ---- Redis --------------------------------------------------------------------------------------


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

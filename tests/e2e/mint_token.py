#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Mint flashgate's signed tokens in Python, from docs/tokens.md alone.

usage: mint_token.py session  KEY KID USER EXPIRES_S
       mint_token.py purchase KEY KID EVENT USER EXPIRES_S
       mint_token.py receipt  KEY KID EVENT USER ADMITTED_MS
       mint_token.py path     KEY KID EVENT
       mint_token.py --self-test

KEY is the secret as hex ("hex:0f1e...") or as text ("text:authkey-..."; the
ASCII bytes themselves, as fg_testpeer's --key takes it). EXPIRES_S may be
written "+N" or "-N": N seconds from now (or ago). Prints the token (for
"path": the whole reserve path) on one line. Session and purchase tokens and
paths are HMAC-SHA256; receipts are SipHash-2-4 under a key derived from the
sale key, as docs/tokens.md says.

A shop's login service mints session tokens this way in whatever language it
uses; this file is written from the page, not from the C code, so that the
end-to-end test proves the page is enough. --self-test checks the worked
examples of docs/tokens.md and exits 0 when all of them match.
"""

import base64
import hashlib
import hmac
import sys
import time


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


def self_test() -> int:
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


def main(argv) -> int:
    try:
        if argv[1:] == ["--self-test"]:
            return self_test()
        kind, args = argv[1], argv[2:]
        key, kid = parse_key(args[0]), int(args[1])
        if kind == "session" and len(args) == 4:
            print(session(key, kid, int(args[2]), parse_time(args[3])))
        elif kind == "purchase" and len(args) == 5:
            print(purchase(key, kid, int(args[2]), int(args[3]), parse_time(args[4])))
        elif kind == "receipt" and len(args) == 5:
            print(receipt(key, kid, int(args[2]), int(args[3]), int(args[4])))
        elif kind == "path" and len(args) == 3:
            print(reserve_path(key, kid, int(args[2])))
        else:
            raise IndexError
    except ValueError as e:
        print(f"mint_token.py: {e}", file=sys.stderr)
        return 2
    except IndexError:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

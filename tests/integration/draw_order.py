#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The draw's order recomputed from its formulas (common/draw.h, docs/fairness.md), written
independently of the C code: a test's check that the control plane drew what anyone can
recompute from the seed and the entrants.

    draw_order.py EVENT SEED_HEX < users (one a line)
prints the digest (hex) on the first line, then the users in rank order, one a line.
"""
import hashlib
import hmac
import struct
import sys


def main():
    event = int(sys.argv[1])
    seed = bytes.fromhex(sys.argv[2])
    users = sorted(int(line) for line in sys.stdin if line.strip())
    h = hashlib.sha256(b"flashgate-entrants-v1" + struct.pack(">IQ", event, len(users)))
    h.update(b"".join(struct.pack(">Q", u) for u in users))
    digest = h.digest()
    pre = b"flashgate-draw-v1" + struct.pack(">I", event) + digest

    def key(u):
        mac = hmac.new(seed, pre + struct.pack(">Q", u), hashlib.sha256).digest()
        return (int.from_bytes(mac[:8], "big"), u)

    print(digest.hex())
    for u in sorted(users, key=key):
        print(u)


if __name__ == "__main__":
    main()

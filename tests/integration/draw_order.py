#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The draw's order recomputed from the seed and the entrants with docs/fairness.md's own Python
verifier (tests/lib/fgtest.py fairness()), not with common/draw: a test's check that the control
plane drew what anyone can recompute from the seed and the entrants.

    draw_order.py EVENT SEED_HEX < users (one a line)
prints the digest (hex) on the first line, then the users in rank order, one a line.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fgtest  # noqa: E402


def main():
    event = int(sys.argv[1])
    seed = bytes.fromhex(sys.argv[2])
    users = sorted(int(line) for line in sys.stdin if line.strip())
    print(fgtest.entrants_digest(event, users).hex())
    for u in fgtest.draw_order(seed, event, users):
        print(u)


if __name__ == "__main__":
    main()

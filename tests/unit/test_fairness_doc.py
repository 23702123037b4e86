#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
#
# docs/fairness.md's Python verifier is the draw of common/draw.h: run from the page itself
# (tests/lib/fgtest.py fairness()), it gives the commitment, digest, rank key and order that the C code
# gives for the vectors of tests/unit/test_draw.c (read from that file, so both stay one set),
# and its verify() accepts that draw and refuses a tampered one.
#
# usage: test_fairness_doc.py [TEST_DRAW_C]
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import fgtest  # noqa: E402

src = open(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "test_draw.c")).read()


def c_vector(pattern, what):
    m = re.search(pattern, src, re.S)
    fgtest.ok(m is not None, "test_draw.c has the %s" % what)
    return m.group(1) if m else ""


want_commitment = c_vector(r'"(\w{64})"\) == 0,\s*"commitment', "commitment vector")
want_digest = c_vector(r'"(\w{64})"\) == 0,\s*"digest as documented', "digest vector")
want_key = int(c_vector(r"draw_rank_key\(seed, 7, d, 42\) == UINT64_C\((0x[0-9a-f]+)\)",
    "rank key vector") or "0", 16)
users_c = c_vector(r"uint64_t users\[\] = \{([^}]*)\}", "entrants")
want_c = c_vector(r"uint64_t want\[\] = \{([^}]*)\}", "rank order")


def c_list(text):
    return [int(re.sub(r"UINT64_C\((\d+)\)", r"\1", x).strip()) for x in text.split(",") if x.strip()]


try:
    ns = fgtest.fairness()
    fgtest.ok(True, "docs/fairness.md has a Python block that runs")
except Exception as e:  # noqa: BLE001
    fgtest.ok(False, "docs/fairness.md has a Python block that runs", repr(e))
    fgtest.done()

seed = bytes(range(32))
users = c_list(users_c)
want = c_list(want_c)
digest = ns["entrants_digest"](7, users)
fgtest.ok(ns["commitment"](seed).hex() == want_commitment, "commitment = SHA-256(seed), as in C")
fgtest.ok(digest.hex() == want_digest, "entrants' digest as in C: " + digest.hex())
fgtest.ok(ns["rank_key"](seed, 7, digest, 42) == want_key, "rank key of user 42 as in C")
order = ns["draw"](seed, 7, users)
fgtest.ok(order == want and len(want) == 5, "rank order as in C: %s" % order)
fgtest.ok(ns["draw"](seed, 7, list(reversed(users))) == order,
    "the order does not depend on the order the entrants are given in")
fgtest.ok(ns["entrants_digest"](8, users) != digest, "another event gives another digest")
msg = ns["verify"](seed.hex(), want_commitment, 7, want_digest, order, 2, order[:2])
fgtest.ok(msg.startswith("ok: 5 entrants"), "verify() accepts the draw: " + msg)


def refused(args, what):
    try:
        ns["verify"](*args)
        fgtest.ok(False, "verify() refuses " + what)
    except AssertionError as e:
        fgtest.ok(True, "verify() refuses %s: %s" % (what, e))


swapped = [order[1], order[0]] + order[2:]
refused((seed.hex(), want_commitment, 7, want_digest, swapped, 2, swapped[:2]), "two ranks swapped")
refused((seed.hex(), want_commitment, 7, want_digest, order, 2, [order[0], order[2]]),
    "an item given to rank 3 of stock 2")
refused((bytes(32).hex(), want_commitment, 7, want_digest, order, 2, order[:2]), "another seed")
refused((seed.hex(), want_commitment, 7, want_digest, order[:4], 2, order[:2]),
    "an entrant left out")
fgtest.done()

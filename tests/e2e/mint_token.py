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
uses; the tests' library (tests/lib/fgtest.py) is written from the page, not
from the C code, so that the end-to-end test proves the page is enough; this is
its command line. --self-test checks the worked
examples of docs/tokens.md and exits 0 when all of them match.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fgtest import (parse_key, parse_time, purchase, receipt, reserve_path,  # noqa: E402
                    session, tokens_self_test)


def main(argv) -> int:
    try:
        if argv[1:] == ["--self-test"]:
            return tokens_self_test()
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

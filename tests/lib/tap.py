# SPDX-License-Identifier: BSD-3-Clause
"""TAP for the Python tests: tap.ok(cond, name[, diag]) prints "ok N - name" or "not ok N - name"
(with diag as "# " lines), tap.done() prints the plan and exits 1 when a test failed."""
import sys

_n = 0
_failed = 0


def ok(cond, name, diag=None):
    """Prints one test's line; returns cond."""
    global _n, _failed
    _n += 1
    if not cond:
        _failed += 1
    print(("ok" if cond else "not ok"), _n, "-", name, flush=True)
    if not cond and diag:
        for line in str(diag).splitlines():
            print("#", line)
    return cond


def count():
    """The tests run so far."""
    return _n


def done():
    """Prints the plan and exits: 0 when every test passed, else 1."""
    print("1..%d" % _n)
    sys.exit(1 if _failed else 0)

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compare two telemetry replies of /flashgate/stats.

usage: counters_grew.py BEFORE.json AFTER.json MIN

Each file holds one reply of dpdk-telemetry.py: {"/flashgate/stats": {...}}.
Integer leaves (nested objects and lists are walked) are the counters; names
that look like clocks (time, uptime, tsc, hz, *_ms, *_us, *_ns) are left out,
since they grow without traffic. Prints, as TAP diagnostics, the counters that
changed, and exits 0 when at least one counter grew by MIN or more, 1 when none
did, 2 when a reply is not a JSON object with integer counters.
"""

import json
import re
import sys

CLOCK = re.compile(r"(time|uptime|tsc|hz|_ms$|_us$|_ns$|^now)", re.IGNORECASE)


def leaves(node, path, out):
    if isinstance(node, dict):
        for k, v in node.items():
            leaves(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            leaves(v, f"{path}[{i}]", out)
    elif isinstance(node, int) and not isinstance(node, bool):
        if not CLOCK.search(path.rsplit(".", 1)[-1]):
            out[path] = node
    return out


def load(path):
    with open(path, encoding="utf-8") as f:
        reply = json.load(f)
    if not isinstance(reply, dict) or "/flashgate/stats" not in reply:
        raise ValueError(f"{path}: no /flashgate/stats in the reply")
    counters = leaves(reply["/flashgate/stats"], "", {})
    if not counters:
        raise ValueError(f"{path}: /flashgate/stats has no integer counter")
    return counters


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        before, after = load(sys.argv[1]), load(sys.argv[2])
    except (OSError, ValueError) as e:
        print(f"# {e}")
        return 2
    want = int(sys.argv[3])
    grown = []
    for name, value in sorted(after.items()):
        delta = value - before.get(name, 0)
        if delta:
            print(f"# {name}: {before.get(name, 0)} -> {value} ({delta:+d})")
        if delta >= want:
            grown.append(name)
    print(f"# {len(after)} counters; grew by >= {want}: {', '.join(grown) or 'none'}")
    return 0 if grown else 1


if __name__ == "__main__":
    sys.exit(main())

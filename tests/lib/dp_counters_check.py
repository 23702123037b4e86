# SPDX-License-Identifier: BSD-3-Clause
"""flashgate-dataplane's final counters as text (its log) and as JSON (--counters-json) agree.

usage: python3 dp_counters_check.py LOG COUNTERS.json
Reads the last "final counters (N worker(s), TSC F Hz):" block of LOG (counters_print()'s lines, the
"bridge:" line, and with several workers a "worker lcore N:" block each) and checks that the
JSON has the same figures: every counter the text shows with its value, every other one 0, the
TSC frequency, the bridge's seven figures, each worker's counters. Prints what differs and exits 1,
or exits 0 silently.
"""
import json
import re
import sys

BRIDGE = [("submitted", "reservations handed over"), ("ring_full", "refused (ring full)"),
          ("batches_sent", "batches sent"), ("unsent_at_stop", "unsent at stop"),
          ("unconfirmed_at_stop", "unconfirmed at stop"),
          ("snapshots_applied", "snapshots applied"), ("results_stored", "results stored")]


def parse_counters(lines):
    """counters_print()'s lines into the JSON's shape (only what the text shows): a single
    counter as "name value", a family's member that is not 0 as "name member value"."""
    c = {}
    for line in lines:
        m = re.match(r"([a-z_]+) +(\d+)$", line)
        if m:
            c[m.group(1)] = int(m.group(2))
            continue
        m = re.match(r"([a-z_]+) +(\S+) +(\d+)$", line)
        if m:
            c.setdefault(m.group(1), {})[m.group(2)] = int(m.group(3))
            continue
        raise ValueError("unknown counters line: %r" % line)
    return c


def parse_log(text):
    lines = text.splitlines()
    head = re.compile(r"final counters \((\d+) worker\(s\), TSC (\d+) Hz\)")
    starts = [i for i, l in enumerate(lines) if head.search(l)]
    if not starts:
        raise ValueError("no 'final counters' in the log")
    i = starts[-1]
    n, tsc_hz = map(int, head.search(lines[i]).groups())
    blocks, bridge, cur = [("total", [])], None, None
    for line in lines[i + 1:]:
        m = re.match(r"worker lcore (\d+):$", line)
        if m:
            blocks.append((int(m.group(1)), []))
        elif line.startswith("  bridge: "):
            parts = line[len("  bridge: "):].split(", ")
            bridge = {}
            for (key, words), part in zip(BRIDGE, parts):
                num, _, rest = part.partition(" ")
                if rest != words:
                    raise ValueError("bridge line: %r" % part)
                bridge[key] = int(num)
        elif line.startswith("  "):
            blocks[-1][1].append(line.strip())
        else:
            break
    return n, tsc_hz, [(name, parse_counters(ls)) for name, ls in blocks], bridge


def compare(name, text, doc, errors):
    for k, v in text.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                if doc.get(k, {}).get(kk) != vv:
                    errors.append("%s.%s.%s: text %s, JSON %s" %
                                  (name, k, kk, vv, doc.get(k, {}).get(kk)))
        elif doc.get(k) != v:
            errors.append("%s.%s: text %s, JSON %s" % (name, k, v, doc.get(k)))
    for k, v in doc.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                if kk not in text.get(k, {}) and vv != 0:
                    errors.append("%s.%s.%s: JSON %s, not in the text" % (name, k, kk, vv))
        elif k not in text and k != "lcore":
            errors.append("%s.%s: JSON only" % (name, k))


def main():
    with open(sys.argv[1], errors="replace") as f:
        n, tsc_hz, blocks, bridge = parse_log(f.read())
    with open(sys.argv[2]) as f:
        doc = json.load(f)
    errors = []
    if doc.get("workers") != n:
        errors.append("workers: text %s, JSON %s" % (n, doc.get("workers")))
    total = blocks[0][1]
    if tsc_hz != doc.get("tsc_hz"):
        errors.append("tsc_hz: text %s, JSON %s" % (tsc_hz, doc.get("tsc_hz")))
    compare("total", total, doc.get("total", {}), errors)
    if bridge != doc.get("bridge"):
        errors.append("bridge: text %s, JSON %s" % (bridge, doc.get("bridge")))
    per = doc.get("per_worker", [])
    if len(per) != n:
        errors.append("per_worker: %d entries for %d workers" % (len(per), n))
    # The text shows each worker apart only when there are several.
    for (lcore, c), w in zip(blocks[1:], per):
        if w.get("lcore") != lcore:
            errors.append("per_worker: lcore %s, JSON %s" % (lcore, w.get("lcore")))
        compare("worker %s" % lcore, c, w, errors)
    if n == 1 and per:
        compare("worker", total, per[0], errors)
    for e in errors:
        print(e)
    sys.exit(1 if errors else 0)


main()

# SPDX-License-Identifier: BSD-3-Clause
"""flashgate-dataplane's final counters as text (its log) and as JSON (--counters-json) agree.

usage: python3 dp_counters_check.py LOG COUNTERS.json
Reads the last "final counters (N worker(s)):" block of LOG (dp_counters_print()'s lines, the
"bridge:" line, and with several workers a "worker lcore N:" block each) and checks that the
JSON has the same figures: every counter the text shows with its value, every other one 0, the
TSC frequency, the bridge's seven figures, each worker's counters. Prints what differs and exits 1,
or exits 0 silently.
"""
import json
import re
import sys

# Figures the text shows only when they are not 0 (dp_counters_print()).
SHOWN_IF_NONZERO = {"tx_held"}
# Members of a group the text never shows (dp_counters_print(): the packet's own address is
# the usual source of a client address, so only the others are printed).
NEVER_SHOWN = {("client_address", "packet")}
BRIDGE = [("submitted", "reservations handed over"), ("ring_full", "refused (ring full)"),
          ("batches_sent", "batches sent"), ("unsent_at_stop", "unsent at stop"),
          ("unconfirmed_at_stop", "unconfirmed at stop"),
          ("snapshots_applied", "snapshots applied"), ("results_stored", "results stored")]


def parse_counters(lines):
    """dp_counters_print()'s lines into the JSON's shape (only what the text shows)."""
    c = {}
    for line in lines:
        m = re.match(r"rx (\d+) packets (\d+) bytes, tx (\d+) packets (\d+) bytes, "
                     r"(\d+) HTTP requests$", line)
        if m:
            for k, v in zip(("rx_packets", "rx_bytes", "tx_packets", "tx_bytes",
                             "http_requests"), m.groups()):
                c[k] = int(v)
            continue
        m = re.match(r"busy (\d+) cycles \(TSC (\d+) Hz\) in (\d+) bursts$", line)
        if m:
            c["busy_cycles"], c["tsc_hz"], c["rx_bursts"] = map(int, m.groups())
            continue
        m = re.match(r"tx held (\d+) frames \(TX queue full; sent later\)$", line)
        if m:
            c["tx_held"] = int(m.group(1))
            continue
        m = re.match(r"(answer|http|admit|reject|drop|ratelimit|client_address|kept) +(\S+) +(\d+)$", line)
        if m:
            c.setdefault(m.group(1), {})[m.group(2)] = int(m.group(3))
            continue
        raise ValueError("unknown counters line: %r" % line)
    return c


def parse_log(text):
    lines = text.splitlines()
    starts = [i for i, l in enumerate(lines) if re.search(r"final counters \((\d+) worker", l)]
    if not starts:
        raise ValueError("no 'final counters' in the log")
    i = starts[-1]
    n = int(re.search(r"final counters \((\d+) worker", lines[i]).group(1))
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
    return n, [(name, parse_counters(ls)) for name, ls in blocks], bridge


def compare(name, text, doc, errors):
    for k, v in text.items():
        if k == "tsc_hz":
            continue
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
                if kk not in text.get(k, {}) and vv != 0 and (k, kk) not in NEVER_SHOWN:
                    errors.append("%s.%s.%s: JSON %s, not in the text" % (name, k, kk, vv))
        elif k not in text and k != "lcore" and not (k in SHOWN_IF_NONZERO and v == 0):
            errors.append("%s.%s: JSON only" % (name, k))


def main():
    with open(sys.argv[1], errors="replace") as f:
        n, blocks, bridge = parse_log(f.read())
    with open(sys.argv[2]) as f:
        doc = json.load(f)
    errors = []
    if doc.get("workers") != n:
        errors.append("workers: text %s, JSON %s" % (n, doc.get("workers")))
    total = blocks[0][1]
    if total.get("tsc_hz") != doc.get("tsc_hz"):
        errors.append("tsc_hz: text %s, JSON %s" % (total.get("tsc_hz"), doc.get("tsc_hz")))
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

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
#
# flashgate.conf agrees with the programs' own key tables: every key that a program's
# --help-config lists (common/config_doc.c prints the loader's table) is in flashgate.conf
# under its section, its commented-out line shows the same default, the comment above it
# states the same range, and flashgate.conf has no key that no program knows. Each program's
# --help lists its own options (the data plane's before "--" too).
#
# A key's range, as its comment must state it: "MIN..MAX" for integers, text lengths and
# bounded durations, exactly as --help-config prints it (e.g. 1..2048, 100ms..10s);
# "at most N" for a port list; "N hex digits" for a hex key. Addresses, booleans, times and
# log levels have no range.
#
# usage: test_flashgate_conf.py FLASHGATE_CONF DATAPLANE CONTROLPLANE ORDER_WRITER
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fgtest  # noqa: E402 (tests/lib/fgtest.py)

CONF, DP, CP, OW = sys.argv[1:5]


def help_config(argv):
    """{section: {key: (describe, default or None when required)}} from --help-config."""
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    fgtest.ok(p.returncode == 0 and "[" in p.stdout, "%s prints its keys" % " ".join(argv[-2:]),
        p.stderr[-2000:])
    out = {}
    sec = None
    key = None
    for line in p.stdout.splitlines():
        m = re.match(r"^\[([a-z_]+)(\.ID)?\]", line)
        if m:
            sec = m.group(1) + (".ID" if m.group(2) else "")
            out[sec] = {}
            continue
        m = re.match(r"^  ([a-z_0-9]+) = <(.*)>$", line)
        if m and sec is not None:
            key = m.group(1)
            out[sec][key] = [m.group(2), None]
            continue
        m = re.match(r"^      default: (.*)$", line)
        if m and key is not None:
            d = m.group(1)
            out[sec][key][1] = "" if d == "(empty)" else d
            key = None
    return out


def range_text(describe):
    """What the comment must say of a key's range, or None when its type has none."""
    m = re.match(r"^(?:integer|duration|text, ) ?(\S+\.\.[^\s,]+)", describe)
    if m:
        return m.group(1)
    m = re.match(r"^\d+ to (\d+) TCP ports", describe)
    if m:
        return "at most " + m.group(1)
    m = re.match(r"^(\d+) hex digits", describe)
    if m:
        return m.group(1) + " hex digits"
    if re.match(r"^(IPv4|true or false|time:|log level:|duration (in|such))", describe):
        return None
    return "?"  # a type this test does not know: fail rather than pass unchecked


def unquote(v):
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] == '"':
        return v[1:-1]
    return v


# flashgate.conf: {section: {key: (value, commented, comment text)}}; [event.N] -> event.ID,
# whose keys are checked in every [event.N] and documented in the comment before the first.
conf = {}
conf_event_doc = ""
lines = open(CONF).read().splitlines()
sec = None
block = []  # the comment lines above the current key (keys right after one another share it)
after_key = False
for i, line in enumerate(lines):
    m = re.match(r"^\[([a-z_]+)(\.\d+)?\]\s*$", line)
    if m:
        sec = m.group(1) + (".ID" if m.group(2) else "")
        if m.group(2) and not conf_event_doc:
            conf_event_doc = "\n".join(lines[:i])
        conf.setdefault(sec, {})
        block = []
        continue
    if not line.strip():
        block = []
        after_key = False
        continue
    m = re.match(r"^(#?)([a-z_0-9]+) =(.*)$", line)
    if m and sec is not None:
        value = unquote(re.sub(r"\s;.*$", "", m.group(3)))
        comment = "\n".join(block)
        if sec.endswith(".ID"):
            comment = conf_event_doc
        conf[sec].setdefault(m.group(2), []).append((value, m.group(1) == "#", comment))
        after_key = True
        continue
    if line.startswith("#"):
        if after_key:
            block = []
        block.append(line)
    after_key = False

programs = {
    "flashgate-dataplane": help_config([DP, "--", "--help-config"]),
    "flashgate-controlplane": help_config([CP, "--help-config"]),
    "flashgate-order-writer": help_config([OW, "--help-config"]),
}

known = {}
for prog, secs in programs.items():
    for sec, keys in secs.items():
        for key, (describe, default) in keys.items():
            known.setdefault((sec, key), []).append(prog)
            where = "%s: [%s] %s" % (prog, sec, key)
            got = conf.get(sec, {}).get(key)
            if not got:
                fgtest.ok(False, where + " is in flashgate.conf", "missing under [%s]" % sec)
                continue
            value, commented, comment = got[0]
            if default is not None:
                # A commented-out line shows the default; a set line is an example value
                # whose comment says the default.
                # A key without a default ("none") may show an example when its comment
                # says "Default: none".
                ok = value == default or ("Default: " + default) in comment and \
                    (not commented or default == "none")
                fgtest.ok(ok, where + " shows the default " + repr(default),
                    "flashgate.conf has %r%s" % (value, " (commented out)" if commented else ""))
            else:
                fgtest.ok(all(not c for _, c, _ in got), where + " (required) is set in every [%s]"
                    % sec.replace(".ID", ".N"))
            r = range_text(describe)
            if r is not None:
                flat = re.sub(r"\s*\n#\s*", " ", comment)
                fgtest.ok(r in flat, "%s: its comment states the range %s" % (where, r),
                    "--help-config: <%s>; the comment above it:\n%s" % (describe, comment))

for sec, keys in conf.items():
    for key in keys:
        fgtest.ok((sec, key) in known, "flashgate.conf: [%s] %s is a key a program knows" % (sec, key))
fgtest.ok(fgtest.count() > 60, "the programs know %d keys" % len(known))

# --help, typed first as an operator does, names how the settings are given, for every program;
# the data plane's also where DPDK's options stop ("--") whichever side of it the option is.
for argv in ([CP, "--help"], [OW, "--help"], [DP, "--help"], [DP, "--", "--help"]):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    name = os.path.basename(argv[0]) + " " + " ".join(argv[1:])
    fgtest.ok(p.returncode == 0 and "-c, --config FILE" in p.stdout and
        "--help-config" in p.stdout and (argv[0] != DP or "[EAL options] --" in p.stdout),
        "%s: exit 0, its own options on stdout" % name,
        "exit %d; stdout:\n%s" % (p.returncode, p.stdout[:600]))

fgtest.done()

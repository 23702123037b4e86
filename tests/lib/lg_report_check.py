# SPDX-License-Identifier: BSD-3-Clause
"""flashgate-loadgen's text report and its JSON report hold the same figures under the same names.

usage: python3 lg_report_check.py REPORT.txt REPORT.json
Reads the text report as docs/loadgen.md describes it (one "key: values" line each: a value,
"word N" pairs, "STATUS=N" lists, "answers" before a list), and checks that the JSON object
has exactly those members with equal values, plus "duration_reached" for the "elapsed_s" line's
remark. Prints what differs and exits 1, or exits 0 silently.
"""
import json
import re
import sys


def number(s):
    return float(s)


def parse_words(tokens):
    """'word N ...', 'K=N ...' and 'answers K=N ...' into a dict."""
    d, i, cur = {}, 0, None
    while i < len(tokens):
        t = tokens[i]
        if "=" in t:
            k, v = t.split("=", 1)
            (cur if cur is not None else d)[k] = number(v)
            i += 1
        elif t == "answers":
            cur = d.setdefault("answers", {})
            i += 1
        else:
            d[t] = number(tokens[i + 1])
            i += 2
    return d


def parse_text(text):
    """The report's lines: from "mode:" on, "key: ..." lines only (the program's other output,
    such as log lines or "lingering:" after the report, is not part of it)."""
    out = {}
    lines = text.splitlines()
    first = next((i for i, l in enumerate(lines) if l.startswith("mode: ")), len(lines))
    for line in lines[first:]:
        if line.startswith("lingering:"):
            break
        if not re.match(r"[a-z0-9_]+:( |$)", line):
            continue
        key, _, rest = line.partition(": ")
        if not rest and line.endswith(":"):
            key, rest = line[:-1], ""
        tokens = rest.split()
        if key == "mode":
            out[key] = rest
        elif key == "elapsed_s":
            out[key] = number(tokens[0])
            out["duration_reached"] = "(duration reached)" in rest
        elif key == "pcap":
            out[key] = {"path": tokens[0], **parse_words(tokens[1:])}
        elif len(tokens) == 1 and "=" not in tokens[0]:
            out[key] = number(tokens[0])
        else:
            out[key] = parse_words(tokens)
    return out


def same(a, b, path, errors):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                errors.append("%s.%s: only in the %s" % (path, k, "text" if k in a else "JSON"))
            else:
                same(a[k], b[k], path + "." + k, errors)
    elif isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        if a != b:
            errors.append("%s: text %r, JSON %r" % (path, a, b))
    elif not isinstance(b, (int, float)) or float(a) != float(b):
        errors.append("%s: text %r, JSON %r" % (path, a, b))


def main():
    with open(sys.argv[1]) as f:
        text = parse_text(f.read())
    with open(sys.argv[2]) as f:
        doc = json.load(f)
    errors = []
    same(text, doc, "report", errors)
    for e in errors:
        print(e)
    sys.exit(1 if errors else 0)


main()

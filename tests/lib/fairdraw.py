# SPDX-License-Identifier: BSD-3-Clause
"""The draw's verifier as docs/fairness.md gives it: load() runs the first ```python block of
that page and returns its names (commitment, entrants_digest, rank_key, draw, verify), so that
tests use the documented code itself, not a copy."""
import os
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def load(doc=os.path.join(ROOT, "docs", "fairness.md")):
    """The namespace of the page's first Python code block."""
    with open(doc, encoding="utf-8") as f:
        m = re.search(r"^```python\n(.*?)^```$", f.read(), re.S | re.M)
    if m is None:
        raise ValueError("%s has no ```python block" % doc)
    ns = {}
    exec(compile(m.group(1), doc, "exec"), ns)  # noqa: S102 (our own documentation)
    return ns

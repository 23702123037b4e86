#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The sale page's buyers in headless Chromium, for tests/e2e/test_page.sh (which sets the
sales up and passes everything in PAGE_* variables). Runs in the client namespace. Prints one
line per check: "ok DESC", "not ok DESC", "skip DESC # SKIP REASON", and "# ..." comments.

Sale A (2 items) starts PAGE_STARTS_A: buyer 201 sees the countdown and a disabled button,
clicks once at the start (a second click does nothing: one token and one reserve request at the
edge, one reservation in Redis), is ordered and does not pay: expired. Buyer 202 buys too and
is paid with flashgate_pay(). Buyer 203 comes after the sell-out and is shown sold out without
clicking. Sale B (open): buyer 301 clicks while the control plane is stopped (SIGSTOP), is
queued, reloads: the page resumes the same receipt, and no second reserve is sent.
"""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mint_token  # noqa: E402 (docs/tokens.md in Python)
from fg_browser import Browser  # noqa: E402

E = os.environ
BASE = E["PAGE_BASE"]
SPKI = open(E["PAGE_SPKI_FILE"]).read().strip()
ACCESS_LOG = E["PAGE_ACCESS_LOG"]
SHOTS = E["PAGE_SHOTS"]
AUTH = bytes.fromhex(E["PAGE_AUTH_HEX"])
EV_A, EV_B = int(E["PAGE_EV_A"]), int(E["PAGE_EV_B"])
STARTS_A = int(E["PAGE_STARTS_A"])
PAY_WINDOW = int(E["PAGE_PAY_WINDOW"])
CP_PID = int(E["PAGE_CP_PID"])
REDIS = ["redis-cli", "-s", E["PAGE_REDIS_SOCK"]]
PSQL = E["PAGE_PSQL"].split()
HOLDS = {"reserved", "ordered", "duplicate"}


def check(cond, desc, diag=None):
    print(("ok " if cond else "not ok ") + desc, flush=True)
    if not cond and diag is not None:
        for line in str(diag).splitlines():
            print("# " + line, flush=True)
    return cond


def skip(desc, reason):
    print("skip %s # SKIP %s" % (desc, reason), flush=True)


def diag(text):
    print("# " + text, flush=True)


def session(user):
    return mint_token.session(AUTH, 1, user, int(time.time()) + 3600)


def url(event, extra=""):
    return "%s/?event=%d%s" % (BASE, event, extra)


def edge_requests(user, what):
    """Requests the edge passed for user: what is "token", "reserve" or "result"."""
    n = 0
    with open(ACCESS_LOG) as f:
        for line in f:
            w = line.split()
            if len(w) >= 5 and w[4] == str(user) and "/" + what in w[2]:
                n += 1
    return n


def redis(*args):
    return subprocess.run(REDIS + list(args), capture_output=True, text=True,
                          timeout=10).stdout


def outbox_count(event, user):
    """Reservations of user in the event's outbox stream (fields u, r, t repeated)."""
    words = redis("xrange", "fg:{%d}:outbox" % event, "-", "+").split("\n")
    return sum(1 for a, b in zip(words, words[1:]) if a == "u" and b == str(user))


def sql(q):
    return subprocess.run(PSQL + ["-c", q], capture_output=True, text=True,
                          timeout=10).stdout.strip()


def fresh(name):
    return Browser(name, SHOTS, spki=SPKI)


def sale_a_before_start(b1):
    b1.open(url(EV_A), session=session(201))
    st = b1.wait_state({"upcoming", "open"}, 20)
    if not check(st == "upcoming", "before the start the page shows the sale upcoming",
                 "state %s, status %r" % (st, b1.status())):
        return False
    t1 = b1.text("countdown-time")
    time.sleep(1.3)
    t2 = b1.text("countdown-time")
    check(b1.shown("countdown") and t1 != t2 and len(t2) == 8 and t2.count(":") == 2,
          "the countdown runs (%s, then %s)" % (t1, t2))
    check(not b1.button_enabled(), "the button is disabled before the start")
    b1.click_buy()  # nothing may happen
    check(b1.state() == "upcoming" and edge_requests(201, "token") == 0,
          "a click before the start sends nothing")
    off = b1.js("return window.flashgateSale.clockOffset();")
    diag("the page's clock offset from the server: %.0f ms" % off)
    b1.shot("countdown")
    return True


def sale_a_start(b1, b2):
    # Poll the button: it must not be enabled before the start by the server's clock.
    seen = b1.wait(lambda: b1.button_enabled() and time.time() * 1000,
                   STARTS_A / 1000 - time.time() + 15, step=0.05)
    check(bool(seen), "the button is enabled at the start")
    if not seen:
        return False
    check(seen >= STARTS_A - 1000, "... not before it (seen %d ms after the start)"
          % (seen - STARTS_A))
    b1.shot("open")
    check(b1.click_buy(), "buyer 201 clicks the enabled button")
    cls = b1.js("return document.getElementById('buy').className;")
    clicked = b1.shot("clicked")
    check(not b1.button_enabled(), "after one click the button is disabled (greyed)")
    check("clicked" in cls, "... and marked clicked (%s)" % clicked)
    b1.click_buy()  # the second click does nothing (the button is disabled, or hidden by now)
    b1.js("document.getElementById('buy').click();")
    st = b1.wait_state({"ordered", "paid", "expired"}, 30)
    check(st == "ordered", "buyer 201 is shown ordered",
          "state %s, status %r" % (st, b1.status()))
    check(b1.shown("deadline") and ":" in b1.text("deadline-time"),
          "the pay deadline counts down (%s)" % b1.text("deadline-time"))
    check(b1.record().get("order_id") and b1.shown("order"),
          "the order number is shown (%s)" % b1.text("order"))
    b1.shot("ordered")
    check(edge_requests(201, "token") == 1 and edge_requests(201, "reserve") == 1,
          "three clicks sent one token request and one reserve (edge log)",
          "token %d, reserve %d" % (edge_requests(201, "token"), edge_requests(201, "reserve")))
    check(outbox_count(EV_A, 201) == 1, "one reservation of buyer 201 in Redis")
    # Buyer 202 takes the second item.
    b2.wait(b2.button_enabled, 10)
    b2.click_buy()
    st = b2.wait_state({"ordered", "paid"}, 30)
    check(st == "ordered", "buyer 202 is shown ordered", "state %s" % st)
    return True


def sale_a_sold_out():
    b3 = fresh("buyer203")
    try:
        b3.open(url(EV_A), session=session(203))
        st = b3.wait_state({"sold_out", "open"}, 20)
        check(st == "sold_out", "a buyer arriving after the sell-out is shown sold out",
              "state %s, status %r" % (st, b3.status()))
        check(not b3.button_enabled(), "... with the button disabled, without a click")
        check(edge_requests(203, "token") == 0, "... and nothing sent for the buyer")
        b3.shot("sold-out")
    finally:
        b3.quit()


def sale_a_paid(b2):
    order = b2.record().get("order_id")
    r = sql("select flashgate_pay(%d)" % int(order or 0))
    check(r == "paid", "flashgate_pay(%s) pays buyer 202's order" % order, r)
    st = b2.wait_state({"paid"}, 15)
    if st == "paid":
        check(True, "buyer 202 is shown paid")
        b2.shot("paid")
        return
    # "paid" reaches the data plane's result table only with the results work (issue 15 item
    # 3 / issue 16 item 8). Never a pass: a skip, and only when the API itself does not say it.
    api = b2.driver.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "fetch('/api/v1/events/%d/result', {headers: {'X-Flash-Token': arguments[0]}})"
        ".then(r => r.json()).then(j => done(j.status), () => done('error'));" % EV_A,
        b2.record().get("receipt"))
    if api == "paid":
        check(False, "buyer 202 is shown paid", "the API says paid, the page shows %s" % st)
    else:
        skip("buyer 202 is shown paid",
             "the API still answers %s after flashgate_pay(): paid does not reach the data "
             "plane in this build (results work, issue 15 item 3)" % api)
    b2.shot("after-pay")


def sale_b_reload_queued():
    b = fresh("buyer301")
    try:
        b.open(url(EV_B), session=session(301))
        if not check(b.wait_state({"open"}, 20) == "open", "sale B: the page shows it open"):
            return
        os.kill(CP_PID, signal.SIGSTOP)  # no verdicts for a while: the buyer waits in line
        try:
            check(b.press_buy(), "the keyboard reaches the button (Tab) and buys (Enter)")
            st = b.wait_state({"queued"}, 15)
            check(st == "queued", "with the control plane stopped, the buyer is shown queued",
                  "state %s, status %r" % (st, b.status()))
            receipt = (b.record() or {}).get("receipt")
            b.shot("queued")
            b.reload()
            st = b.wait_state({"queued"}, 15)
            check(st == "queued", "after a reload the page shows queued again")
            check((b.record() or {}).get("receipt") == receipt and receipt,
                  "... from the same stored receipt")
            b.shot("queued-reloaded")
            time.sleep(1.5)  # a poll or two with the receipt
            check(edge_requests(301, "reserve") == 1 and edge_requests(301, "token") == 1,
                  "the reload sent no second token request or reserve (edge log)",
                  "token %d, reserve %d" % (edge_requests(301, "token"),
                                            edge_requests(301, "reserve")))
        finally:
            os.kill(CP_PID, signal.SIGCONT)
        st = b.wait_state({"ordered", "reserved"}, 30)
        check(st in HOLDS, "once the control plane runs again the buyer holds an item (%s)" % st)
        check(outbox_count(EV_B, 301) == 1, "one reservation of buyer 301 in Redis")
        b.shot(st or "after")
    finally:
        b.quit()


def sale_b_chinese():
    b = fresh("buyer302-zh")
    try:
        b.open(url(EV_B, "&lang=zh"), session=session(302))
        b.wait_state({"open"}, 20)
        check(b.js("return document.documentElement.lang;") == "zh" and
              b.text("buy") == "立即抢购", "?lang=zh shows the Chinese texts (%s)" % b.text("buy"))
        label = b.js("return document.getElementById('buy').getAttribute('aria-label');")
        live = b.js("return document.getElementById('status').getAttribute('aria-live');")
        check(label and live == "polite", "the button has a label and the status is a live region")
        b.shot("zh")
    finally:
        b.quit()


def sale_a_expired(b1):
    st = b1.wait_state({"expired"}, PAY_WINDOW + 40)
    check(st == "expired", "buyer 201, who did not pay, is shown expired after the deadline",
          "state %s, status %r" % (st, b1.status()))
    b1.shot("expired")


def main():
    b1 = b2 = None
    try:
        b1 = fresh("buyer201")
        if not sale_a_before_start(b1):
            return
        b2 = fresh("buyer202")
        b2.open(url(EV_A), session=session(202))
        b2.wait_state({"upcoming", "open"}, 20)
        if not sale_a_start(b1, b2):
            return
        sale_a_sold_out()
        sale_a_paid(b2)
        b2.quit()
        b2 = None
        sale_b_reload_queued()
        sale_b_chinese()
        sale_a_expired(b1)
    finally:
        for b in (b1, b2):
            if b:
                b.quit()


if __name__ == "__main__":
    main()

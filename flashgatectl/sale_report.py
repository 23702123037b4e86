#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The report of a sale (docs/operations.md "The report of a sale"), from PostgreSQL alone:
an HTML page with PNG plots (python3-matplotlib) for any sale, during it or after, whichever
control plane sampled it. flashgatectl report EVENT --out DIR runs it.

usage: sale_report.py --event ID --out DIR   (conninfo in FG_PG_CONNINFO)

Reads the event, its samples (sale_samples: one a second while it was open), its orders, its
order feed (order_feed) and the admin commands that touched it (admin_audit); checks the
invariants as they stand now; writes DIR/index.html, DIR/requests.png, DIR/decisions.png,
DIR/stock.png, DIR/orders.png and prints the page's path. Exit status 0, 1 when an invariant
fails (the report is written all the same), 2 on a usage or database error.
"""

import argparse
import datetime
import html
import os
import sys

import psycopg2

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot as plt  # noqa: E402

# Each answer its own colour, far from the others' (issue 19 saw 202 and 401 both blue, 401
# falling to matplotlib's default first colour); statuses not named here take the next of SPARE
# no other line uses, never the default cycle.
COLORS = {"200": "#2b8a3e", "202": "#1c7ed6", "410": "#868e96", "429": "#f59f00",
          "503": "#e8590c", "403": "#c92a2a", "425": "#ae3ec9", "401": "#212529",
          "400": "#e64980", "404": "#0b7285"}
SPARE = ["#74b816", "#99e9f2", "#ffa8a8", "#5f3dc4", "#d9480f"]


def color_of(status, taken):
    """The colour of status: its own, else the first spare colour no other line uses."""
    if status in COLORS:
        return COLORS[status]
    for c in SPARE:
        if c not in taken:
            return c
    return SPARE[sum(map(ord, status)) % len(SPARE)]


def rates(samples, key):
    """Per-second rates of each member of the running totals samples[i][key] (a dict), as
    (times, {member: [rate, ...]}), from the differences of consecutive samples of one control
    plane (a restart, a new cp_id or totals going down, starts again from there)."""
    times, out = [], {}
    for prev, cur in zip(samples, samples[1:]):
        dt = (cur["at"] - prev["at"]).total_seconds()
        if dt <= 0:
            continue
        times.append(cur["at"])
        for m, v in cur[key].items():
            p = prev[key].get(m, 0)
            same = cur["cp_id"] == prev["cp_id"] and v >= p
            out.setdefault(m, [0.0] * (len(times) - 1)).append((v - p) / dt if same else 0.0)
        for m in out:
            if len(out[m]) < len(times):
                out[m].append(0.0)
    return times, out


def plot(path, heading, ylabel, series, colors=None, bars=False):
    """One line plot of series {label: (xs, ys)} (bars: one bar a second); the PNG written."""
    fig, ax = plt.subplots(figsize=(9, 3.4))
    for label, (xs, ys) in series.items():
        if xs and bars:
            ax.bar(xs, ys, width=0.8 / 86400, align="edge", label=label,
                   color=(colors or {}).get(label, "#2b8a3e"))
        elif xs:
            ax.plot(xs, ys, label=label, color=(colors or {}).get(label), linewidth=1.4)
    ax.set_title(heading)
    ax.set_ylabel(ylabel)
    if any(xs for xs, _ in series.values()):
        ax.legend(fontsize=8, loc="upper right")
    else:
        ax.text(0.5, 0.5, "no samples", transform=ax.transAxes, ha="center")
        ax.set_xticks([])
        ax.set_yticks([])
    ax.grid(alpha=0.3)
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_requests(path, samples):
    """Answers a second by HTTP status, each status its own colour (color_of)."""
    t_ans, ans = rates(samples, "answers")
    series = {k: (t_ans, v) for k, v in sorted(ans.items()) if any(v)}
    taken = {COLORS[s] for s in series if s in COLORS}
    colors = {}
    for s in series:
        colors[s] = color_of(s, taken)
        taken.add(colors[s])
    plot(path, "Requests by answer (all data planes, per s)", "answers/s", series, colors)


def when(t):
    """A time as a reader reads it: to the second, in UTC ("2026-12-01 10:00:07Z")."""
    if not isinstance(t, datetime.datetime):
        return "-" if t is None else str(t)
    return t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def query(cur, sql, *args):
    cur.execute(sql, args)
    return cur.fetchall()


def invariants(cur, ev):
    """The invariants as they stand now: (name, ok, detail) for each."""
    out = []
    (stock, available, n, pending, paid, expired, cancelled), = query(cur, """
        SELECT s.initial, s.available, count(o.id),
               count(o.id) FILTER (WHERE o.status = 'pending'),
               count(o.id) FILTER (WHERE o.status = 'paid'),
               count(o.id) FILTER (WHERE o.status = 'expired'),
               count(o.id) FILTER (WHERE o.status = 'cancelled')
        FROM events e LEFT JOIN stock s ON s.event_id = e.id
        LEFT JOIN orders o ON o.event_id = e.id
        WHERE e.id = %s GROUP BY s.initial, s.available""", ev)
    out.append(("no item sold twice: orders holding an item <= stock",
                pending + paid <= stock, f"{pending + paid} pending or paid, stock {stock}"))
    if available is not None:
        out.append(("the stock adds up: left + pending + paid = stock",
                    available + pending + paid == stock,
                    f"{available} + {pending} + {paid} = {available + pending + paid}, "
                    f"stock {stock}"))
    (dups,), = query(cur, """SELECT count(*) FROM (SELECT user_id FROM orders WHERE event_id = %s
        GROUP BY user_id HAVING count(*) > 1) d""", ev)
    out.append(("one order per buyer", dups == 0, f"{dups} buyers with more than one"))
    # The event's feed rows counted once per order (order_feed has no index by order: a
    # subquery per order read the whole feed for each, hours at 100,000 orders).
    (bad,), = query(cur, """SELECT count(*) FROM orders o LEFT JOIN (
        SELECT order_id, count(*) FILTER (WHERE old_status IS NULL) AS created,
            count(*) FILTER (WHERE old_status IS NOT NULL) AS ended
        FROM order_feed WHERE event_id = %s GROUP BY order_id) f ON f.order_id = o.id
        WHERE o.event_id = %s AND (coalesce(f.created, 0) <> 1
            OR coalesce(f.ended, 0) <> (o.status <> 'pending')::int)""", ev, ev)
    out.append(("the order feed has each order's creation and its end, once",
                bad == 0, f"{bad} orders whose feed rows do not match"))
    (late,), = query(cur, """SELECT count(*) FROM orders WHERE event_id = %s AND status = 'paid'
        AND paid_at > pay_deadline""", ev)
    out.append(("no payment after its deadline", late == 0, f"{late} paid late"))
    return out, dict(stock=stock, available=available, orders=n, pending=pending, paid=paid,
                     expired=expired, cancelled=cancelled)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--event", type=int, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    try:
        conn = psycopg2.connect(os.environ.get("FG_PG_CONNINFO", ""))
    except psycopg2.Error as e:
        print(f"report: cannot connect to PostgreSQL: {e}".strip(), file=sys.stderr)
        return 2
    conn.set_session(readonly=True)
    cur = conn.cursor()
    row = query(cur, "SELECT e.name, e.state, coalesce(s.initial, 0), e.starts_at, e.ends_at, "
                "e.draw_window_s, e.draw_entrants, e.draw_done_at FROM events e "
                "LEFT JOIN stock s ON s.event_id = e.id WHERE e.id = %s", a.event)
    if not row:
        print(f"report: there is no event {a.event}", file=sys.stderr)
        return 2
    name, state, stock, starts, ends, draw_s, entrants, drawn = row[0]
    samples = [dict(at=r[0], cp_id=r[1], decisions=r[2], answers=r[3], admitted=r[4],
                    budget=r[5], dps=r[6], pow=r[7], left=r[8], orders=r[9], paid=r[10],
                    expired=r[11], cancelled=r[12])
               for r in query(cur, """SELECT at, cp_id, decisions, answers, admitted,
                   budget_refused, data_planes, pow_bits, items_left, orders, paid, expired,
                   cancelled FROM sale_samples WHERE event_id = %s ORDER BY at""", a.event)]
    per_s = query(cur, """SELECT date_trunc('second', created_at), count(*) FROM orders
        WHERE event_id = %s GROUP BY 1 ORDER BY 1""", a.event)
    audit = query(cur, """SELECT at, coalesce(user_name, uid::text, '?'), pid, request, ok,
        answer FROM admin_audit WHERE event_id = %s ORDER BY id""", a.event)
    checks, fig = invariants(cur, a.event)
    conn.close()

    os.makedirs(a.out, exist_ok=True)
    plot_requests(os.path.join(a.out, "requests.png"), samples)
    t_dec, dec = rates(samples, "decisions")
    plot(os.path.join(a.out, "decisions.png"), "Decisions by verdict (the control plane, per s)",
         "decisions/s", {k: (t_dec, v) for k, v in sorted(dec.items())
                         if k != "received" and any(v)})
    ts = [s["at"] for s in samples]
    plot(os.path.join(a.out, "stock.png"), "Items left and orders", "items",
         {"items left (not ordered)": (ts, [s["left"] for s in samples]),
          "orders": (ts, [s["orders"] for s in samples]),
          "paid": (ts, [s["paid"] for s in samples]),
          "expired": (ts, [s["expired"] for s in samples]),
          "cancelled": (ts, [s["cancelled"] for s in samples])})
    plot(os.path.join(a.out, "orders.png"), "Orders written per second (PostgreSQL)", "orders/s",
         {"orders": ([r[0] for r in per_s], [r[1] for r in per_s])}, bars=True)

    e = html.escape
    ok_all = all(c[1] for c in checks)
    rows = "".join(f"<tr><td>{e(n)}</td><td class={'pass' if ok else 'fail'}>"
                   f"{'PASS' if ok else 'FAIL'}</td><td>{e(d)}</td></tr>" for n, ok, d in checks)
    arows = "".join(f"<tr><td class=when>{e(when(t))}</td><td>{e(u)}</td><td>{p or ''}</td>"
                    f"<td><code>{e(r)}</code></td><td>{'done' if ok else 'refused'}</td>"
                    f"<td><code>{e(ans if len(ans) <= 120 else ans[:117] + '...')}</code></td></tr>"
                    for t, u, p, r, ok, ans in audit) or "<tr><td colspan=6>none</td></tr>"
    last = samples[-1] if samples else None
    share = ""
    if last and (last["admitted"] + last["budget"]):
        share = (f"<li>reservations refused over the forward budget: {last['budget']} of "
                 f"{last['admitted'] + last['budget']}</li>")
    draw = (f"<li>draw: window {draw_s} s, {entrants if entrants is not None else '?'} "
            f"entrants, done at {e(when(drawn))}</li>" if draw_s else "")
    page = f"""<!doctype html><html lang=en><meta charset=utf-8>
<meta name=viewport content="width=device-width, initial-scale=1">
<title>Sale {a.event}: {e(name)}</title>
<style>body{{font-family:sans-serif;max-width:980px;margin:auto;padding:0 1rem}}
table{{border-collapse:collapse;width:100%}}td,th{{padding:2px 8px;text-align:left;
vertical-align:top;border-bottom:1px solid #eee}}img{{max-width:100%}}.when{{white-space:nowrap}}
code{{font-size:12px;overflow-wrap:anywhere}}.audit td:nth-child(4){{width:30%}}
.audit td:nth-child(6){{width:40%}}
.pass{{color:#2b8a3e}}.fail{{color:#c92a2a;font-weight:bold}}</style>
<h1>Sale {a.event}: {e(name)}</h1>
<p>{e(state)}; {e(when(starts))} to {e(when(ends))}; stock {stock}.
Invariants now: <b class={'pass' if ok_all else 'fail'}>{'PASS' if ok_all else 'FAIL'}</b></p>
<ul><li>orders {fig['orders']}: paid {fig['paid']}, pending {fig['pending']}, expired
{fig['expired']}, cancelled {fig['cancelled']}; items left {fig['available']}</li>
<li>samples: {len(samples)}{f", {e(when(samples[0]['at']))} to {e(when(last['at']))}" if last
else " (the sale was never open while a control plane sampled it)"}</li>{share}{draw}</ul>
<h2>Invariants</h2><table>{rows}</table>
<h2>Requests by answer</h2><img src=requests.png alt="requests by answer per second">
<h2>Decisions</h2><img src=decisions.png alt="decisions by verdict per second">
<h2>Items left and orders</h2><img src=stock.png alt="items left and orders">
<h2>Orders written</h2><img src=orders.png alt="orders written per second">
<p>The bots' share is not known from PostgreSQL (scripts/demo's page adds it for its sales).</p>
<h2>Admin commands of the sale</h2><table class=audit><tr><th>when</th><th>who</th><th>pid</th>
<th>command</th><th></th><th>answer</th></tr>{arows}</table>
"""
    path = os.path.join(a.out, "index.html")
    with open(path, "w") as f:
        f.write(page)
    print(path)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())

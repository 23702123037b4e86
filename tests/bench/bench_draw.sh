#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The draw of 10^6 entrants (issue 18 §6; FG_BENCH_QUICK=1: 10^5) by the real control plane,
# with real Redis and PostgreSQL (scripts/services): the entrants hash and log are filled directly, as enter.lua fills them (the
# entering path is the decider's, measured elsewhere), one item per entrant (every entrant is
# reserved: the most work a draw can have), then the control plane draws at draw_at. Prints,
# from its log's timestamps, the seconds from draw_at to the freeze, for the freeze + read +
# order + PostgreSQL write, for the ranks and decisions, and in all; and Redis's used_memory
# before the entrants, with them, and after the draw. The TAP checks assert only that the draw
# was complete and right (n rows, n buyers), never a time.
#
# Meanwhile another sale (event 2, first come, first served) is decided all along: a stand-in data
# plane (tests/peer/fg_feed) sends it 10 reservations every 10 ms, and `stats` is read every
# half second for the loop's longest turn (loop.longest_turn_10s_us): the longest gap between two
# rounds of that sale's decisions, printed against the 10 ms target, as the draw's time from
# draw_at is against 10 s; and the most CPU time of one turn (longest_turn_cpu_10s_us: the loop's
# own work, without the time slices other processes take on a loaded host). The decision rounds'
# count and time (on the deciding thread) come from the log.
#
# FG_BENCH_AOF_REWRITE=1 leaves Redis's automatic AOF rewrites on through the draw (by default
# one is made before it and none during it, as docs/install.md advises for a sale).
# FG_BENCH_SLOWLOG=0 leaves Redis's SLOWLOG as it is (its per-command log costs Redis time of its
# own: the run then gives no per-batch times); FG_BENCH_DRAW_BATCH=N sets [controlplane] draw_batch.
#
# usage: bench_draw.sh CONTROLPLANE FLASHGATECTL FG_FEED   (under flock /tmp/fg-bench.lock)
set -uo pipefail

CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin bdraw
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL T_CTL_OUT=$TMP/ctl.out
N=1000000
[ "${FG_BENCH_QUICK:-0}" = 1 ] && N=100000
SLOWLOG=${FG_BENCH_SLOWLOG:-1}
if [ -n "${FG_BENCH_DRAW_BATCH:-}" ]; then
	t_cp_up -s "controlplane.draw_batch=$FG_BENCH_DRAW_BATCH"
else
	t_cp_up
fi
tap_ok $? "the control plane is ready"
R="redis-cli -s $FG_REDIS_SOCK"
mem() { $R info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p'; }
ms_of() { # the log line's timestamp (ms since the epoch) of the first line matching $1
	grep -m1 "$1" "$TMP/cp.log" | cut -d' ' -f1 | python3 -c 'import sys, datetime
t = sys.stdin.read().strip().rstrip("Z")
print(int(datetime.datetime.fromisoformat(t).replace(tzinfo=datetime.timezone.utc).timestamp() * 1000))'
}

now=$(date +%s)
# Filling 10^6 entrants takes a few seconds: the draw is far enough ahead.
q=$((now + 3)) w=$((N / 25000 + 10))
ctl event create 1 --name "bench draw" --stock "$N" --queue-opens-at $q --starts-at $((q + 1)) \
	--draw-window "${w}s" --ends-at $((now + 7200)) --pay-window 15m &&
	ctl event preheat 1 && ctl event open 1
tap_ok $? "event 1 created with a draw $((w + 1)) s after its pre-queue opens, $N items"
ctl event create 2 --name "bench other sale" --stock 10000000 --starts-at $((now + 1)) \
	--ends-at $((now + 7200)) --pay-window 15m && ctl event preheat 2 && ctl event open 2
tap_ok $? "event 2 (first come, first served) open beside it"
m0=$(mem)
python3 -c 'import sys
n = int(sys.argv[1])
out = sys.stdout
out.write("HSET fg:{1}:draw state open\n")
for at in range(1, n + 1, 1000):
    users = range(at, min(at + 1000, n + 1))
    out.write("HSET fg:{1}:entrants " + " ".join("%d %d" % (u, (5 << 54) | u) for u in users) + "\n")
    # enter.lua appends the same records to the entrants log in the same script
    log = "".join("%d:%d\n" % (u, (5 << 54) | u) for u in users)
    out.write("*3\r\n$6\r\nAPPEND\r\n$13\r\nfg:{1}:entlog\r\n$%d\r\n%s\r\n" % (len(log), log))
' "$N" | $R --pipe >/dev/null
tap_is "$($R hlen 'fg:{1}:entrants')/$($R strlen 'fg:{1}:entlog')" \
	"$N/$(python3 -c 'import sys; n = int(sys.argv[1]); print(sum(len("%d:%d\n" % (u, (5 << 54) | u)) for u in range(1, n + 1)))' "$N")" \
	"$N entrants in Redis, in their hash and their log"
m1=$(mem)
# Redis's append-only file rewritten once the entrants are in, and no automatic rewrite during
# the draw (docs/install.md: a rewrite forks Redis and its child competes with it for a core
# through the sale); FG_BENCH_AOF_REWRITE=1 leaves Redis's automatic rewrites as they are.
aof_rewrite_over() { # waits (60 s at most) until Redis rewrites no AOF
	for _ in $(seq 600); do
		[ "$($R info persistence | sed -n 's/^aof_rewrite_in_progress:\([0-9]\).*/\1/p')" = 0 ] &&
			return 0
		sleep 0.1
	done
}
if [ "${FG_BENCH_AOF_REWRITE:-0}" != 1 ]; then
	$R config set auto-aof-rewrite-percentage 0 >/dev/null
	aof_rewrite_over
	$R bgrewriteaof >/dev/null
	sleep 0.2
	aof_rewrite_over
fi
info_of() { $R info all | sed -n "s/^$1:\([0-9]*\).*/\1/p"; }
draw_at=$(((q + 1 + w) * 1000))
# Redis's own time for each command from now on (its SLOWLOG, every command): the draw batches'
# time in Redis, which other sales' batches wait on, apart from the round trips.
# Without it, the commands over 5 ms only (few: what held Redis, by name).
$R config set slowlog-log-slower-than $([ "$SLOWLOG" = 1 ] && echo 0 || echo 5000) >/dev/null &&
	$R config set slowlog-max-len 200000 >/dev/null && $R slowlog reset >/dev/null
forks0=$(info_of total_forks)
# Redis's own stalls over 5 ms (its latency monitor: commands, forks, AOF writes), by kind.
$R config set latency-monitor-threshold 5 >/dev/null && $R latency reset >/dev/null
# The other sale from a few seconds before draw_at until well after the draw (bounded).
while [ "$(date +%s%3N)" -lt $((draw_at - 3000)) ]; do sleep 0.1; done
"$FEED" --push "$T_PULL" --sub "$T_PUB" --event 2 --users 1-$((N < 300000 ? 60000 : 120000)) \
	--dp 9 --batch 10 --pace-us 10000 --timeout-ms 600000 >"$TMP/feed.out" 2>&1 &
FEED_PID=$!
T_PIDS+=("$FEED_PID")
turn_max=0 cpu_max=0
sample_turns() { # the loop's longest turn of the last 10 s, by the clock and by its CPU time
	local t c
	read -r t c < <(ctlj stats | jget loop.longest_turn_10s_us loop.longest_turn_cpu_10s_us |
		tr / ' ')
	[ "${t:-0}" -gt "$turn_max" ] && turn_max=$t
	[ "${c:-0}" -gt "$cpu_max" ] && cpu_max=$c
}
for _ in $(seq $((w * 10 + 1200))); do
	[ "$(t_sql "SELECT draw_done_at IS NOT NULL FROM events WHERE id = 1")" = t ] && break
	[ "$(date +%s%3N)" -ge "$draw_at" ] && sample_turns
	sleep 0.5
done
sample_turns
tap_is "$(t_sql "SELECT draw_done_at IS NOT NULL FROM events WHERE id = 1")" t "the draw is done"
# The control plane logs the end a moment after PostgreSQL has it (its loop looks every 2 ms).
for _ in $(seq 100); do
	grep -q 'draw of event 1: [0-9]* decision rounds' "$TMP/cp.log" && break
	sleep 0.05
done
m2=$(mem)
$R --json slowlog get 200000 >"$TMP/slowlog.json"
$R config set slowlog-log-slower-than 10000 >/dev/null
tap_is "$(t_sql "SELECT count(*) FROM draw_entrants WHERE event_id = 1")/$($R hlen 'fg:{1}:result')" \
	"$N/$N" "draw_entrants holds $N rows, Redis $N buyers"
t_frozen=$(ms_of 'entrants frozen') t_written=$(ms_of 'ordered and written') t_done=$(ms_of ': done,')
python3 - "$N" "$draw_at" "$t_frozen" "$t_written" "$t_done" "$m0" "$m1" "$m2" <<'PY' | while read -r l; do tap_diag "$l"; done
import sys
n, at, fr, wr, dn, m0, m1, m2 = map(int, sys.argv[1:])
print("draw of %d entrants (one item each):" % n)
print("  draw_at -> frozen            %7.3f s" % ((fr - at) / 1000))
print("  freeze+read+order+PG write   %7.3f s" % ((wr - fr) / 1000))
print("  ranks published + decided    %7.3f s  (%.0f entrants/s)" % ((dn - wr) / 1000, n * 1000 / max(1, dn - wr)))
print("  freeze to done               %7.3f s" % ((dn - fr) / 1000))
print("  Redis used_memory: %.1f MB before, %.1f MB with the entrants (%.0f B each), %.1f MB after the draw" %
      (m0 / 1e6, m1 / 1e6, (m1 - m0) / n, m2 / 1e6))
PY
grep -o 'draw of event 1: [a-z]* took [0-9]* ms' "$TMP/cp.log" | while read -r l; do tap_diag "  $l"; done
grep -o 'draw of event 1: [0-9]* decision rounds.*' "$TMP/cp.log" | while read -r l; do tap_diag "  $l"; done
tap_diag "$(python3 -c 'import sys; n, at, dn = map(int, sys.argv[1:]); print("draw_at -> done: %.3f s (target: under 10 s)" % ((dn - at) / 1000))' "$N" "$draw_at" "$t_done")"
python3 - "$TMP/slowlog.json" "$N" "$SLOWLOG" <<'PY' | while read -r l; do tap_diag "$l"; done
import json, sys
log = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
def us(e):
    return e[2]
draw = sorted(us(e) for e in log if e[3] and e[3][0].lower() == "evalsha" and
              any("{1}:draw" in a for a in e[3]))
other = sorted(us(e) for e in log if e[3] and e[3][0].lower() == "evalsha" and
               any("{2}:" in a for a in e[3]))
def q(v, f):
    return v[min(len(v) - 1, int(f * len(v)))] if v else 0
if sys.argv[3] != "1":
    slow = sorted(log, key=lambda e: -e[2])
    print("Redis's commands over 5 ms during the draw (SLOWLOG): %d; the longest: %s" % (len(slow),
          ", ".join("%s %d us" % (" ".join(a[:40] for a in e[3][:3]), e[2]) for e in slow[:6]) or "none"))
    sys.exit(0)
print("Redis's own time per reserve.lua (SLOWLOG, us): the draw's %d batches (%.0f entrants each "
      "on average): median %d, 99th percentile %d, longest %d; the other sale's %d batches: "
      "median %d, longest %d" % (len(draw), n / max(1, len(draw)), q(draw, .5), q(draw, .99),
      q(draw, 1), len(other), q(other, .5), q(other, 1)))
PY
# The loop's turns over 10 ms (the control plane logs them, four a second at most), each with the
# draw's phase it fell in: what held the other sale's decisions.
python3 - "$TMP/cp.log" "$draw_at" <<'PY' | while read -r l; do tap_diag "$l"; done
import datetime, re, sys
def ms(line):
    t = line.split(" ", 1)[0].rstrip("Z")
    return int(datetime.datetime.fromisoformat(t).replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
at = int(sys.argv[2])
ends, turns = [], []
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"draw of event 1: ([a-z]+) took", line)
    if m:
        ends.append((ms(line), m.group(1)))
    m = re.search(r"a turn of the loop took (\d+) us \((\d+) us", line)
    if m and ms(line) >= at - 1000:
        turns.append((int(m.group(1)), int(m.group(2)), ms(line)))
def phase(t):
    for e, name in ends:
        if t <= e:
            return name
    return "deciding" if any(n == "ranking" for _, n in ends) else "?"
print("the loop's turns over 10 ms from draw_at on (logged four a second at most): %d" % len(turns))
for took, cpu, t in sorted(turns, reverse=True)[:6]:
    print("  %6d us (%5d us CPU) at draw_at + %.3f s, while %s" % (took, cpu, (t - at) / 1000, phase(t)))
PY
$R latency latest | paste -sd' ' | python3 -c 'import sys
v = sys.stdin.read().split()
print("Redis stalls over 5 ms (LATENCY LATEST: event, the latest, the longest): " + ("; ".join("%s %s/%s ms" % (v[i], v[i + 2], v[i + 3]) for i in range(0, len(v) - 3, 4)) or "none"))' |
	while read -r l; do tap_diag "$l"; done
$R config set latency-monitor-threshold 0 >/dev/null
tap_diag "Redis forked $(($(info_of total_forks) - forks0)) times during the draw (its AOF rewrites: $(info_of aof_rewrites) in all; the last fork held Redis $(info_of latest_fork_usec) us)"
tap_diag "the other sale's longest gap between two rounds of decisions during the draw (the loop's longest turn): $turn_max us (target: under 10000 us; the host: $(cut -d' ' -f1-3 /proc/loadavg) load)"
tap_diag "  of which the loop's own work (the most CPU time of one turn): $cpu_max us; the rest is other processes' time slices"
wait "$FEED_PID"
tap_ok $? "the other sale's reservations were all decided: $(head -n 1 "$TMP/feed.out" | cut -d' ' -f1-6)"
fg_stop_pid "$CP_PID" 10
tap_ok $? "the control plane stops"
CP_PID=
FEED_PID=
tap_done

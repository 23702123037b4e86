/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bridge against the test peer (tests/peer/fg_testpeer.c) over real ZeroMQ TCP sockets on
 * 127.0.0.1: the snapshot makes it ready, every reservation reaches the peer exactly once,
 * results land in the result table, sold-out and rule changes reach the shared state, a
 * stuck peer makes the rings fill (-ENOBUFS) without losing anything, malformed
 * messages are counted by reason and ignored, and the data plane's counters (stats_fn) and
 * the bridge's own reach the peer as DP_STATS every stats_ms; a HELLO goes with them, the clock
 * skew against the peer's heartbeats is reported (the clock shifted by the test-only offset),
 * a DP_REFUSED for this data plane makes it not ready until the refusals stop, and a stop's
 * drain mark is sent again while unanswered, not once answered.
 *
 *   test_bridge PATH_TO_FG_TESTPEER
 *
 * This thread plays two workers (one producer per ring) and reports to the RCU variable as
 * worker 0. Every wait is bounded; the peer is killed by its pid at exit, also on failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>

#include "dataplane/bridge/bridge.h"
#include "dataplane/bridge/bridge_int.h" /* BRIDGE_RESEND_MS */
#include "dataplane/counters.h"
#include "common/zlink.h"
#include "dataplane/rules.h"
#include "tests/lib/eal_rundir.h"
#include "tests/lib/child_proc.h"
#include "tests/tap.h"

#define DP_ID 5

#define CLOCK_SHIFT_MS 90000 /* FG_TEST_CLOCK_OFFSET_MS: this "data plane" runs 90 s ahead */

static struct clock_sync clk;
static pid_t peer_pid = -1;
static int peer_in = -1, peer_out = -1;
static struct bridge *br;
static struct rte_rcu_qsbr *qsbr;

static void
kill_peer(void)
{
	child_stop(peer_pid, SIGKILL, 0);
	peer_pid = -1;
}

/* On a fatal signal (async-signal-safe): the peer dies with the test. */
static void
kill_peer_now(void)
{
	if (peer_pid > 0)
		kill(peer_pid, SIGKILL);
}

/* Reads one line from the peer within timeout_ms. Returns 0, or -1. */
static int
peer_read_line(char *buf, size_t cap, unsigned timeout_ms)
{
	size_t n = 0;
	uint64_t deadline = now_mono_ms() + timeout_ms;

	while (n + 1 < cap) {
		struct pollfd p = {.fd = peer_out, .events = POLLIN};
		uint64_t now = now_mono_ms();

		if (now >= deadline || poll(&p, 1, (int)(deadline - now)) <= 0)
			return -1;
		if (read(peer_out, buf + n, 1) != 1)
			return -1;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return 0;
		}
		n++;
	}
	return -1;
}

/* Sends one command; returns 0 when the peer answered "ok...", the answer in reply. */
static int __attribute__((format(printf, 3, 4)))
peer_cmd(char *reply, size_t cap, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);

	va_end(ap);
	line[n++] = '\n';
	if (write(peer_in, line, (size_t)n) != n || peer_read_line(reply, cap, 5000) != 0)
		return -1;
	return strncmp(reply, "ok", 2) == 0 ? 0 : -1;
}

/* What the data plane's stats_fn reports: the test writes it, the bridge thread reads it. */
static struct dp_counters dp_ctr;
static unsigned stats_fn_calls;

static void
stats_fn(void *arg, struct wire_stat *out, unsigned cap, unsigned *n)
{
	struct dp_counters copy;
	const uint64_t *src = (const uint64_t *)arg;
	uint64_t *dst = (uint64_t *)&copy;

	for (size_t i = 0; i < sizeof(copy) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	__atomic_fetch_add(&stats_fn_calls, 1, __ATOMIC_RELAXED);
	*n = bridge_stats_from_counters(&copy, out, cap);
}

/* A counter of the latest DP_STATS the peer received, or -1 when it has none of that name. */
static long long
peer_dpstat(const char *name)
{
	char reply[512];

	if (peer_cmd(reply, sizeof(reply), "dpstats %s", name) != 0)
		return -1;
	const char *p = strstr(reply, " value=");

	return p != NULL ? atoll(p + 7) : -1;
}

/* A counter from the peer's "stats" answer, or -1. */
static long long
peer_stat(const char *name)
{
	char reply[512], key[64];

	if (peer_cmd(reply, sizeof(reply), "stats") != 0)
		return -1;
	snprintf(key, sizeof(key), " %s=", name);
	const char *p = strstr(reply, key);

	return p != NULL ? atoll(p + strlen(key)) : -1;
}

static int
start_peer_id(const char *exe, const char *pull_ep, const char *pub_ep, const char *id)
{
	int to_peer[2], from_peer[2];

	if (pipe(to_peer) != 0 || pipe(from_peer) != 0)
		return -1;
	peer_pid = fork();
	if (peer_pid < 0)
		return -1;
	if (peer_pid == 0) {
		char *args[] = {(char *)exe, "--pull", (char *)pull_ep, "--pub", (char *)pub_ep,
			"--id", (char *)id, "--event", "1:1000000:Big sale", "--event",
			"2:1000:Small sale", "--key", "auth:1:auth-secret-0123456789:current",
			"--key", "sale:7:sale-secret-0123456789abcdef:current", "--rule", "user 13",
			"--rule", "ip 10.1.0.0/16", "--limits", "10,20,5,6,7,8,1000,250",
			"--heartbeat-ms", "200", "--rcvhwm", "2", "--rcvbuf", "4096", NULL};

		dup2(to_peer[0], STDIN_FILENO);
		dup2(from_peer[1], STDOUT_FILENO);
		close(to_peer[1]);
		close(from_peer[0]);
		execv(exe, args);
		_exit(127);
	}
	close(to_peer[0]);
	close(from_peer[1]);
	peer_in = to_peer[1];
	peer_out = from_peer[0];

	char line[64];

	return peer_read_line(line, sizeof(line), 10000) == 0 && strcmp(line, "ready") == 0 ? 0
											    : -1;
}

static int
start_peer(const char *exe, const char *pull_ep, const char *pub_ep)
{
	return start_peer_id(exe, pull_ep, pub_ep, "42");
}

/* Waits up to ms for cond, reporting quiescent states like a worker meanwhile. */
#define WAIT_FOR(cond, ms)                                        \
	({                                                        \
		uint64_t dl_ = now_mono_ms() + (ms);             \
		bool ok_;                                         \
		while (!(ok_ = (cond)) && now_mono_ms() < dl_) { \
			rte_rcu_qsbr_quiescent(qsbr, 0);          \
			usleep(2000);                             \
		}                                                 \
		ok_;                                              \
	})

static struct bridge_counters
counters(void)
{
	struct bridge_counters c;

	bridge_counters_read(br, &c);
	return c;
}

static uint64_t rid_seq = 1;

static struct wire_reserve
reservation(unsigned port, uint32_t event, uint64_t user)
{
	struct wire_reserve r = {
		.reservation_id = wire_reservation_id(DP_ID, port, rid_seq++),
		.user = user,
		.admitted_ms = 1700000000000,
		.event = event,
		.client_ipv4 = 0x0a000001,
	};

	return r;
}

/* bridge_drain_wait() on a thread of its own, so that this thread goes on playing the workers'
 * RCU reports and checking the peer meanwhile. */
struct drain_arg {
	unsigned max_ms;
	int result;
	bool done;
};

static void *
drain_thread(void *arg)
{
	struct drain_arg *a = arg;

	a->result = bridge_drain_wait(br, a->max_ms, NULL);
	__atomic_store_n(&a->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* What a worker does with one record in a burst of its own: stage it, flush at the end. */
static int
submit(struct bridge_port *p, const struct wire_reserve *r)
{
	int rc = bridge_submit(p, r);

	bridge_flush(p);
	return rc;
}

/* How many records ring holds, and whether their users are first, first + 1, ... in order. */
static bool
ring_holds(struct rte_ring *ring, unsigned n, uint64_t first)
{
	struct wire_reserve got[BRIDGE_STAGE_MAX + 16];
	unsigned k = rte_ring_sc_dequeue_burst_elem(ring, got, sizeof(got[0]), RTE_DIM(got), NULL);

	if (k != n)
		return false;
	for (unsigned i = 0; i < k; i++)
		if (got[i].user != first + i)
			return false;
	return true;
}

/*
 * Staging, against a bare ring of 8 slots (7 usable) that this thread also drains: a record
 * reaches the ring at bridge_flush(), in order; one is accepted only with a slot free for it,
 * also while earlier ones are still staged; room freed by the consumer is seen; more than
 * BRIDGE_STAGE_MAX in one go are flushed on the way, none lost.
 */
static void
test_staging(void)
{
	struct rte_ring *small = rte_ring_create_elem("stage_small", sizeof(struct wire_reserve), 8,
		SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *big = rte_ring_create_elem("stage_big", sizeof(struct wire_reserve), 256,
		SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	static struct bridge_port p; /* zeroed, as the bridge's are */
	int rc = 0;

	if (!tap_ok(small != NULL && big != NULL, "staging: rings of 8 and 256 slots"))
		return;
	p.ring = small;
	for (uint64_t u = 1; u <= 3; u++)
		rc |= bridge_submit(&p, &(struct wire_reserve){.reservation_id = u, .user = u});
	tap_ok(rc == 0 && rte_ring_count(small) == 0 && p.n_staged == 3,
		"staging: 3 records accepted, none in the ring before the flush");
	bridge_flush(&p);
	tap_ok(p.n_staged == 0 && ring_holds(small, 3, 1),
		"staging: the flush puts all 3 in, in order");

	/* The ring is empty again: 7 slots. */
	unsigned ok = 0, refused = 0;

	for (uint64_t u = 10; u < 20; u++) {
		if (bridge_submit(&p, &(struct wire_reserve){.reservation_id = u, .user = u}) == 0)
			ok++;
		else
			refused++;
	}
	tap_ok(ok == 7 && refused == 3 && p.ring_full == 3 && p.submitted == 10,
		"staging: 7 of 10 accepted into 7 free slots while none was flushed (%u, %u)", ok,
		refused);
	bridge_flush(&p);
	tap_ok(rte_ring_count(small) == 7 && p.n_staged == 0, "staging: the flush fits all 7");
	tap_ok(bridge_submit(&p, &(struct wire_reserve){.reservation_id = 30, .user = 30}) ==
			-ENOBUFS,
		"staging: a full ring refuses reservations");

	struct wire_reserve two[2];

	rte_ring_sc_dequeue_bulk_elem(small, two, sizeof(two[0]), 2, NULL);
	tap_ok(two[0].user == 10 && two[1].user == 11 &&
			bridge_submit(&p,
				&(struct wire_reserve){.reservation_id = 40, .user = 40}) == 0 &&
			bridge_submit(&p,
				&(struct wire_reserve){.reservation_id = 41, .user = 41}) == 0 &&
			bridge_submit(&p, &(struct wire_reserve){.reservation_id = 42,
						  .user = 42}) == -ENOBUFS,
		"staging: the 2 slots the consumer freed are seen, a third record is refused");
	bridge_flush(&p);
	struct wire_reserve all[8];
	unsigned k = rte_ring_sc_dequeue_burst_elem(small, all, sizeof(all[0]), 8, NULL);

	tap_ok(k == 7 && all[0].user == 12 && all[4].user == 16 && all[5].user == 40 &&
			all[6].user == 41 && all[6].reservation_id == 41,
		"staging: the ring holds the 5 left, then the two new ones, in order");

	/* More than a stage in one go. */
	p = (struct bridge_port){.ring = big};
	for (uint64_t u = 100; u < 100 + BRIDGE_STAGE_MAX + 6; u++)
		rc |= bridge_submit(&p, &(struct wire_reserve){.reservation_id = u, .user = u});
	bridge_flush(&p);
	tap_ok(rc == 0 && ring_holds(big, BRIDGE_STAGE_MAX + 6, 100),
		"staging: %u records at once all reach the ring, in order", BRIDGE_STAGE_MAX + 6);
	rte_ring_free(small);
	rte_ring_free(big);
}

/*
 * Result queries travel in their own ring: a full reservation ring does not refuse them, a full
 * query ring does not refuse reservations, and (event, user) is asked once per cooldown.
 */
static void
test_query_ring(void)
{
	struct rte_ring *r = rte_ring_create_elem("q_res", sizeof(struct wire_reserve), 8,
		SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *qr = rte_ring_create_elem("q_q", sizeof(struct wire_result_query), 8,
		SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	static struct bridge_cool cool[BRIDGE_COOL_ENTRIES];
	static struct bridge_port p;
	unsigned ok = 0, cooled = 0, refused = 0;

	if (!tap_ok(r != NULL && qr != NULL, "queries: a reservation ring and a query ring of 8"))
		return;
	p = (struct bridge_port){.ring = r, .qring = qr, .cool = cool, .cooldown_ms = 1000};
	for (uint64_t u = 1; u <= 7; u++)
		bridge_submit(&p, &(struct wire_reserve){.reservation_id = u, .user = u});
	bridge_flush(&p);
	tap_ok(bridge_submit(&p, &(struct wire_reserve){.reservation_id = 8, .user = 8}) ==
				-ENOBUFS &&
			bridge_query(&p, 1, 100, 5000) == 0 && rte_ring_count(qr) == 1,
		"queries: the reservation ring is full, a query still goes (its own ring)");
	tap_ok(bridge_query(&p, 1, 100, 5999) == -EALREADY && p.queries_cooled == 1 &&
			rte_ring_count(qr) == 1,
		"queries: the same (event, user) within the cooldown is not asked again, counted");
	tap_ok(bridge_query(&p, 2, 100, 5999) == 0 && bridge_query(&p, 1, 101, 5999) == 0,
		"queries: another event or another user is asked");
	tap_ok(bridge_query(&p, 1, 100, 6000) == 0 && rte_ring_count(qr) == 4,
		"queries: after the cooldown it is asked again");
	for (uint64_t u = 200; u < 210; u++) {
		int rc = bridge_query(&p, 1, u, 7000);

		ok += rc == 0;
		cooled += rc == -EALREADY;
		refused += rc == -ENOBUFS;
	}
	tap_ok(ok == 3 && refused == 7 && cooled == 0 && p.queries_refused == 7,
		"queries: a full query ring refuses the rest, counted (%u sent, %u refused)", ok,
		refused);
	struct wire_reserve drained[8];

	rte_ring_sc_dequeue_burst_elem(r, drained, sizeof(drained[0]), 8, NULL);
	tap_ok(bridge_submit(&p, &(struct wire_reserve){.reservation_id = 9, .user = 9}) == 0 &&
			p.queries == 7,
		"queries: with the query ring full a reservation is still taken");
	rte_ring_free(r);
	rte_ring_free(qr);
}

static const struct event_entry *
cur_event(uint32_t id)
{
	const struct dp_shared *sh = shared_get(bridge_shared(br));

	return sh != NULL ? event_lookup(sh->events, id) : NULL;
}

static bool
event_sold_out(uint32_t id)
{
	const struct event_entry *e = cur_event(id);

	return e != NULL && e->sold_out;
}

static bool
results_all(uint32_t event, uint64_t first_user, unsigned n, uint8_t verdict)
{
	for (unsigned i = 0; i < n; i++) {
		struct rt_result r;

		if (result_table_lookup(bridge_results(br), event, first_user + i, &r) != 0 ||
			r.verdict != verdict)
			return false;
	}
	return true;
}

static void
test_all(const char *peer_exe)
{
	char pull_ep[64], pub_ep[64], reply[512], err[512] = "";
	unsigned p1 = child_free_port(), p2 = child_free_port();

	snprintf(pull_ep, sizeof(pull_ep), "tcp://127.0.0.1:%u", p1);
	snprintf(pub_ep, sizeof(pub_ep), "tcp://127.0.0.1:%u", p2);
	if (!tap_ok(p1 != 0 && p2 != 0 && p1 != p2 && start_peer(peer_exe, pull_ep, pub_ep) == 0,
		    "the test peer runs on %s and %s", pull_ep, pub_ep))
		return;

	struct bridge_config c;

	bridge_config_defaults(&c);
	/* CURVE with the local keys, as the data plane and the test peer have them by default. */
	struct zlink_settings zs = {0};

	if (!tap_ok(zlink_keys_load(&zs, false, "bridge", NULL, 0, &c.keys, err, sizeof(err)) == 0,
		    "the local link keys: %s", err[0] ? err : "ok"))
		return;
	c.dp_id = DP_ID;
	snprintf(c.push_endpoint, sizeof(c.push_endpoint), "%s", pull_ep);
	snprintf(c.sub_endpoint, sizeof(c.sub_endpoint), "%s", pub_ep);
	c.n_workers = 2;
	c.ring_size = 1024;
	c.batch_max = 64;
	c.result_capacity = 1u << 17;
	c.snapshot_retry_ms = 100;
	c.push_hwm = 2;
	c.push_sndbuf = 4096;
	c.stats_ms = 200;
	c.stats_fn = stats_fn;
	c.stats_arg = &dp_ctr;
	setenv(DP_CLOCK_TEST_OFFSET_ENV, "90000", 1);
	tap_eq_int(clock_sync_init(&clk), CLOCK_SHIFT_MS,
		"the clock takes the test-only offset from " DP_CLOCK_TEST_OFFSET_ENV);
	unsetenv(DP_CLOCK_TEST_OFFSET_ENV);
	c.clock = &clk;
	c.clock_skew_max_ms = 1000;
	br = bridge_create(&c, err, sizeof(err));
	if (!tap_ok(br != NULL, "bridge_create: %s", br != NULL ? "ok" : err))
		return;
	qsbr = bridge_qsbr(br);
	rte_rcu_qsbr_thread_register(qsbr, 0);
	rte_rcu_qsbr_thread_online(qsbr, 0);
	struct bridge_port *port[2] = {bridge_port(br, 0), bridge_port(br, 1)};

	tap_ok(!bridge_ready(br) && !bridge_port_ready(port[0]), "not ready before a snapshot");
	if (!tap_ok(bridge_start(br, err, sizeof(err)) == 0, "bridge_start: %s", err))
		return;

	/* 1. The snapshot arrives. */
	tap_ok(WAIT_FOR(bridge_ready(br), 10000), "the first snapshot makes the bridge ready");
	const struct dp_shared *sh = shared_get(bridge_shared(br));

	if (!tap_ok(sh != NULL, "shared state published"))
		return;
	const struct event_entry *e1 = event_lookup(sh->events, 1);

	tap_ok(sh->events->n == 2 && e1 != NULL && e1->stock == 1000000 &&
			strcmp(e1->name_json, "\"Big sale\"") == 0,
		"snapshot: both events, with stock and name");
	tap_ok(tok_keyring_count(&sh->auth) == 1 && tok_keyring_count(&sh->sale) == 1 &&
			tok_keyring_has(&sh->sale, 7),
		"snapshot: one auth key and sale key 7");
	tap_ok(rules_block_user(sh->rules, 13) && rules_block_ip(sh->rules, htonl(0x0a010203)) &&
			!rules_block_user(sh->rules, 14),
		"snapshot: rules block user 13 and 10.1.0.0/16, not user 14");
	tap_ok(sh->limits.ip.rate == 10 && sh->limits.ip.burst == 20 &&
			sh->limits.user.burst == 6 && sh->limits.device.rate == 7 &&
			sh->limits.event_forward.rate == 1000 &&
			sh->limits.event_forward.burst == 250,
		"snapshot: limits, the forward budget's burst too");
	rte_rcu_qsbr_quiescent(qsbr, 0);

	/* 2. Reservations: all of them reach the peer, once. */
	unsigned refused = 0;

	for (uint64_t u = 1; u <= 1000; u++) {
		struct wire_reserve r = reservation((unsigned)(u % 2), 1, u);

		refused += submit(port[u % 2], &r) != 0;
	}
	tap_eq_int(refused, 0, "1000 reservations accepted by the rings");
	tap_ok(WAIT_FOR(peer_stat("reserves") == 1000, 10000),
		"the peer received 1000 reservations");
	tap_eq_int(peer_stat("dups"), 0, "no reservation arrived twice");
	struct bridge_counters k = counters();

	/* The bridge counts a batch after zmq_send() returns, so the peer may hold the last one
	 * a moment before the counters show it. */
	tap_ok(WAIT_FOR((k = counters()).records_out[WIRE_T_RESERVE] == 1000, 5000) &&
			k.batches_sent >= 1000 / 64 && k.submitted == 1000,
		"counters: 1000 records out in %llu batches", (unsigned long long)k.batches_sent);

	/* 3. Results land in the result table. */
	tap_ok(WAIT_FOR(results_all(1, 1, 1000, WIRE_V_RESERVED), 10000),
		"1000 'reserved' results in the result table");
	/* Issue 16 item 7: the results' stock_left is the event's stock, in place. */
	tap_ok(WAIT_FOR(cur_event(1) != NULL && __atomic_load_n(&cur_event(1)->stock,
						      __ATOMIC_RELAXED) == 1000000 - 1000,
		       5000),
		"the event's stock follows the results: 1000000 - 1000 (got %u)",
		cur_event(1) != NULL ? cur_event(1)->stock : 0);
	rte_rcu_qsbr_quiescent(qsbr, 0);

	/* 3b. Counters: the data plane's (stats_fn) and the bridge's own reach the peer. */
	__atomic_store_n(&dp_ctr.rx_packets, 12345, __ATOMIC_RELAXED);
	__atomic_store_n(&dp_ctr.drops[DP_DROP_IP_CKSUM], 7, __ATOMIC_RELAXED);
	__atomic_store_n(&dp_ctr.http[DP_HTTP_503], 3, __ATOMIC_RELAXED);
	__atomic_store_n(&dp_ctr.reject[DP_REJ_SOLD_OUT], 2, __ATOMIC_RELAXED);
	__atomic_store_n(&dp_ctr.limit[DP_LIM_IP][DP_LIM_EV_EVICTIONS], 9, __ATOMIC_RELAXED);
	__atomic_store_n(&dp_ctr.kept[DP_KEPT_CAPACITY], 64, __ATOMIC_RELAXED);
	__atomic_store_n(&dp_ctr.kept[DP_KEPT_OPENED], 5, __ATOMIC_RELAXED);
	__atomic_store_n(&dp_ctr.busy_cycles, 4242, __ATOMIC_RELAXED);
	__atomic_store_n(&dp_ctr.rx_bursts, 21, __ATOMIC_RELAXED);
	__atomic_store_n(&dp_ctr.tx_held, 6, __ATOMIC_RELAXED);
	tap_ok(WAIT_FOR(peer_dpstat("rx_packets") == 12345, 5000),
		"DP_STATS reach the peer with the data plane's rx_packets");
	tap_ok(peer_dpstat("drops.reason=ip_checksum") == 7 &&
			peer_dpstat("http_responses.status=503") == 3 &&
			peer_dpstat("rejects.reason=sold_out") == 2 &&
			peer_dpstat("admits.kind=token_issued") == 0 &&
			peer_dpstat("ratelimit_evictions.table=ip") == 9 &&
			peer_dpstat("ratelimit_moved.table=device") == 0,
		"drops, HTTP statuses, rejects, admits and rate-limit tables travel by reason");
	tap_ok(peer_dpstat("kept_connections_capacity") == 64 &&
			peer_dpstat("kept_connections.event=opened") == 5,
		"the kept-connection table's size and events travel too");
	tap_ok(peer_dpstat("busy_cycles") == 4242 && peer_dpstat("rx_bursts") == 21 &&
			peer_dpstat("tx_held") == 6,
		"so do busy_cycles, rx_bursts and tx_held");
	tap_ok(WAIT_FOR(peer_dpstat("bridge_submitted") == 1000, 5000) &&
			peer_dpstat("bridge_reservations_sent") == 1000 &&
			peer_dpstat("bridge_ready") == 1 &&
			peer_dpstat("bridge_messages_in.type=result") >= 1 &&
			peer_dpstat("bridge_decode_errors.reason=bad_magic") == 0,
		"the bridge's own counters follow: 1000 submitted and sent, ready");
	{
		static char line[16384];
		struct wire_stat recs[WIRE_STATS_MAX];
		struct dp_counters zero = {0};
		unsigned n_dp = bridge_stats_from_counters(&zero, recs, WIRE_STATS_MAX);
		/* 10 single counters: rx/tx packets and bytes, http_requests, busy_cycles,
		 * cpu_ns, wall_ns, rx_bursts, tx_held. */
		unsigned want =
			10 + DP_DROP_MAX + DP_ANS_MAX + DP_HTTP_MAX + DP_REJ_MAX + DP_ADM_MAX +
			DP_LIM_MAX * DP_LIM_EV_MAX + DP_CLIENT_MAX + DP_KEPT_MAX;
		const char *rp;

		tap_eq_int(n_dp, want, "every dp_counters field is one record (no name refused)");
		tap_eq_int(bridge_stats_from_counters(&zero, recs, 10), 10,
			"bridge_stats_from_counters stops at cap");
		tap_ok(peer_cmd(line, sizeof(line), "dpstats") == 0 &&
				strstr(line, " sender=5 ") != NULL &&
				(rp = strstr(line, " records=")) != NULL &&
				(unsigned)atoi(rp + 9) > n_dp,
			"one message from sender 5 holds the data plane's %u and the bridge's",
			n_dp);
	}
	tap_ok(WAIT_FOR(peer_cmd(reply, sizeof(reply), "hello") == 0 &&
				       strstr(reply, " sender=5 ") != NULL &&
				       strstr(reply, " instance=0") == NULL && atoll(reply + 10) >= 2,
		       5000),
		"a HELLO with this data plane's instance goes with the counters (%s)", reply);
	int64_t skew = 0;

	tap_ok(WAIT_FOR(peer_dpstat("clock_ahead_ms") >= CLOCK_SHIFT_MS - 1000, 5000) &&
			peer_dpstat("clock_ahead_ms") <= CLOCK_SHIFT_MS + 1000 &&
			peer_dpstat("clock_behind_ms") == 0,
		"DP_STATS show the clock %d s ahead of the control plane's heartbeats (%lld ms)",
		CLOCK_SHIFT_MS / 1000, peer_dpstat("clock_ahead_ms"));
	tap_ok(bridge_clock_skew(br, &skew) && skew >= CLOCK_SHIFT_MS - 1000 &&
			skew <= CLOCK_SHIFT_MS + 1000 && counters().clock_skew_over == 1 &&
			peer_dpstat("bridge_clock_skew_over") == 1,
		"bridge_clock_skew() says so, and the skew over clock_skew_max was noted once");
	uint64_t s0 = counters().msgs_out[WIRE_T_DP_STATS];
	unsigned calls0 = __atomic_load_n(&stats_fn_calls, __ATOMIC_RELAXED);

	tap_ok(WAIT_FOR(counters().msgs_out[WIRE_T_DP_STATS] >= s0 + 3, 5000) &&
			__atomic_load_n(&stats_fn_calls, __ATOMIC_RELAXED) >= calls0 + 3,
		"DP_STATS keep coming, one per stats_ms, each asking stats_fn");

	/* 4. A sold-out reaches the shared state; the peer then says sold out. */
	uint64_t v0 = shared_get(bridge_shared(br))->version;

	tap_ok(peer_cmd(reply, sizeof(reply), "sold_out 2") == 0 &&
			WAIT_FOR(event_sold_out(2), 5000),
		"SOLD_OUT reaches the shared event table");
	tap_ok(shared_get(bridge_shared(br))->version > v0 &&
			event_state_at(cur_event(2), (uint64_t)time(NULL) * 1000) == EVENT_SOLD_OUT,
		"a new version, and event 2 is sold out");
	struct wire_reserve late = reservation(0, 2, 5000);

	submit(port[0], &late);
	tap_ok(WAIT_FOR(results_all(2, 5000, 1, WIRE_V_SOLD_OUT), 5000),
		"a reservation after the sell-out gets 'sold_out'");

	/* 4b. FAIR (issue 18): an event's draw and challenge into the event table; progress in
	 * place, state changes as a new version; a malformed or unknown one refused, counted. */
	uint64_t fv0 = shared_get(bridge_shared(br))->version;

	tap_ok(cur_event(1) != NULL && !cur_event(1)->has_fair &&
			cur_event(1)->draw_state == WIRE_DRAW_NONE,
		"FAIR: an event without a FAIR record has no draw");
	tap_ok(peer_cmd(reply, sizeof(reply), "fair 1 1 0 3 0 0") == 0 &&
			WAIT_FOR(cur_event(1)->has_fair, 5000) &&
			shared_get(bridge_shared(br))->version > fv0,
		"FAIR: a record makes a new version with the event's draw");
	const struct event_entry *fe = cur_event(1);

	tap_ok(fe->draw_state == WIRE_DRAW_QUEUEING && fe->entrants == 3 && fe->pow_bits == 0 &&
			fe->draw_at_ms > fe->queue_opens_at_ms && fe->seed_sha256[0] == 0xc5 &&
			fe->seed_sha256[31] == 0xc5 &&
			event_state_at(fe, (uint64_t)time(NULL) * 1000) == EVENT_QUEUEING,
		"FAIR: queueing, 3 entrants, the times and the seed's commitment");
	fv0 = shared_get(bridge_shared(br))->version;
	uint64_t inplace0 = counters().fair_in_place;

	tap_ok(peer_cmd(reply, sizeof(reply), "fair 1 1 9 40 0 0") == 0 &&
			WAIT_FOR(__atomic_load_n(&fe->entrants, __ATOMIC_RELAXED) == 40, 5000) &&
			__atomic_load_n(&fe->pow_bits, __ATOMIC_RELAXED) == 9 &&
			shared_get(bridge_shared(br))->version == fv0 &&
			counters().fair_in_place == inplace0 + 1,
		"FAIR: entrants and pow bits change in place, without a new version");
	tap_ok(peer_cmd(reply, sizeof(reply), "fair 1 2 9 40 5 25") == 0 &&
			WAIT_FOR(shared_get(bridge_shared(br))->version > fv0, 5000) &&
			(fe = cur_event(1))->draw_state == WIRE_DRAW_DRAWING &&
			fe->entrants_digest[0] == 0xd6 && fe->decided == 5 && fe->rate == 25,
		"FAIR: the draw's state changes: a new version, with the entrants' digest");
	fv0 = shared_get(bridge_shared(br))->version;
	tap_ok(peer_cmd(reply, sizeof(reply), "fair 1 2 9 40 17 30") == 0 &&
			WAIT_FOR(__atomic_load_n(&fe->decided, __ATOMIC_RELAXED) == 17, 5000) &&
			__atomic_load_n(&fe->rate, __ATOMIC_RELAXED) == 30 &&
			shared_get(bridge_shared(br))->version == fv0,
		"FAIR: the draw's progress (decided, rate) in place");
	tap_ok(peer_cmd(reply, sizeof(reply), "fair 1 2 9 40 12 31") == 0 &&
			WAIT_FOR(__atomic_load_n(&fe->rate, __ATOMIC_RELAXED) == 31, 5000) &&
			__atomic_load_n(&fe->decided, __ATOMIC_RELAXED) == 17 &&
			peer_cmd(reply, sizeof(reply), "fair 1 2 9 40 18 30") == 0 &&
			WAIT_FOR(__atomic_load_n(&fe->decided, __ATOMIC_RELAXED) == 18, 5000),
		"FAIR: a decided count a moment old (12 after 17) never takes it back");
	uint64_t field0 = counters().decode_errors[WIRE_ERRI_FIELD];
	uint64_t unk0 = counters().fair_unknown_event;

	tap_ok(peer_cmd(reply, sizeof(reply), "fair_bad 1") == 0 &&
			WAIT_FOR(counters().decode_errors[WIRE_ERRI_FIELD] == field0 + 1, 5000) &&
			cur_event(1)->draw_state == WIRE_DRAW_DRAWING &&
			__atomic_load_n(&cur_event(1)->decided, __ATOMIC_RELAXED) == 18,
		"FAIR: a malformed record (decided > entrants) is refused, counted bad_field, "
		"nothing changed");
	tap_ok(peer_cmd(reply, sizeof(reply), "fair 77 1 0 0 0 0") == 0 &&
			WAIT_FOR(counters().fair_unknown_event == unk0 + 1, 5000) &&
			cur_event(77) == NULL,
		"FAIR: a record for an event no EVENT announced is refused, counted");
	uint64_t snaps0 = counters().snapshots_applied;

	tap_ok(peer_cmd(reply, sizeof(reply), "snapshot") == 0 &&
			WAIT_FOR(counters().snapshots_applied > snaps0, 5000) &&
			(fe = cur_event(1))->has_fair && fe->draw_state == WIRE_DRAW_DRAWING &&
			fe->decided == 18 && !cur_event(2)->has_fair,
		"FAIR: a snapshot carries it after the EVENTs; the other event still has none");
	tap_ok(peer_cmd(reply, sizeof(reply), "queued 1 4242 12") == 0 &&
			WAIT_FOR(results_all(1, 4242, 1, WIRE_V_QUEUED), 5000),
		"a QUEUED result lands in the result table");
	struct rt_result qr;

	tap_ok(result_table_lookup(bridge_results(br), 1, 4242, &qr) == 0 && qr.rank == 12,
		"  with its rank (12)");
	tap_ok(peer_cmd(reply, sizeof(reply), "fair 1 3 0 40 40 0") == 0 &&
			WAIT_FOR(cur_event(1)->draw_state == WIRE_DRAW_DONE, 5000) &&
			cur_event(1)->seed[0] == 0x5e &&
			event_state_at(cur_event(1), (uint64_t)time(NULL) * 1000) == EVENT_OPEN,
		"FAIR: done, the seed revealed; the event is open (first come) again");
	rte_rcu_qsbr_quiescent(qsbr, 0);

	/* 5. A rules replacement swaps the pointer. */
	const struct rules *old_rules = shared_get(bridge_shared(br))->rules;

	rte_rcu_qsbr_quiescent(qsbr, 0);
	tap_ok(peer_cmd(reply, sizeof(reply), "rules user 77;ip 10.0.0.0/8") == 0 &&
			WAIT_FOR(shared_get(bridge_shared(br))->rules != old_rules, 5000),
		"RULES swap the rules pointer");
	sh = shared_get(bridge_shared(br));
	tap_ok(rules_block_user(sh->rules, 77) && !rules_block_user(sh->rules, 13) &&
			rules_block_ip(sh->rules, htonl(0x0a090909)),
		"the new rules replace the old ones");
	rte_rcu_qsbr_quiescent(qsbr, 0);

	/* 6. Malformed messages are counted by reason and ignored. */
	static const struct {
		const char *kind;
		int err;
	} bad[] = {
		{"short", WIRE_ERR_SHORT},
		{"magic", WIRE_ERR_MAGIC},
		{"version", WIRE_ERR_VERSION},
		{"type", WIRE_ERR_TYPE},
		{"recsize", WIRE_ERR_RECSIZE},
		{"length", WIRE_ERR_LENGTH},
		{"count", WIRE_ERR_COUNT},
		{"field", WIRE_ERR_FIELD},
	};
	k = counters();
	uint64_t gaps0 = k.seq_gaps;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned idx = wire_err_index(bad[i].err);
		uint64_t before = counters().decode_errors[idx];

		tap_ok(peer_cmd(reply, sizeof(reply), "garbage %s", bad[i].kind) == 0 &&
				WAIT_FOR(counters().decode_errors[idx] == before + 1, 5000),
			"malformed (%s) counted as %s", bad[i].kind, wire_err_name(bad[i].err));
	}
	uint64_t mp0 = counters().multipart;

	tap_ok(peer_cmd(reply, sizeof(reply), "garbage multipart") == 0 &&
			WAIT_FOR(counters().multipart == mp0 + 1, 5000),
		"a two-frame message is counted and dropped");
	tap_ok(peer_cmd(reply, sizeof(reply), "restock 2 50") == 0 &&
			WAIT_FOR(!event_sold_out(2), 5000),
		"after the garbage, updates still apply (RESTOCK)");
	tap_eq_int(counters().seq_gaps, gaps0, "malformed messages cause no sequence gap");

	/* 7. A lost message (sequence gap) makes the bridge ask for a new snapshot. */
	k = counters();
	tap_ok(peer_cmd(reply, sizeof(reply), "skip_seq") == 0 &&
			peer_cmd(reply, sizeof(reply), "sold_out 2") == 0 &&
			WAIT_FOR(counters().seq_gaps == k.seq_gaps + 1 &&
					 counters().snapshots_applied > k.snapshots_applied,
				5000),
		"a sequence gap is detected and a new snapshot applied");

	/* 8. The peer stops reading: the bridge backs up, rings fill, submit refuses, and nothing
	 * is lost. "Full" means refused for 20 rounds of 10 ms in a row, so the bridge had time
	 * to push what the network buffers take. */
	long long before = peer_stat("reserves");
	uint64_t accepted = 0, t_end = now_mono_ms() + 30000;
	unsigned refusals = 0;
	struct bridge_counters k0 = counters();

	tap_ok(peer_cmd(reply, sizeof(reply), "pause") == 0, "peer paused");
	for (uint64_t u = 1; refusals < 20 && now_mono_ms() < t_end;) {
		struct wire_reserve r = reservation((unsigned)(u % 2), 1, 100000 + u);

		if (submit(port[u % 2], &r) == -ENOBUFS) {
			rid_seq--; /* the same reservation is offered again */
			refusals++;
			WAIT_FOR(false, 10);
			continue;
		}
		refusals = 0;
		accepted++;
		u++;
	}
	k = counters();
	tap_ok(refusals == 20,
		"with the peer stuck, bridge_submit keeps returning -ENOBUFS "
		"(after %llu accepted, %llu of them pushed into the network buffers)",
		(unsigned long long)accepted,
		(unsigned long long)(k.records_out[WIRE_T_RESERVE] -
				     k0.records_out[WIRE_T_RESERVE]));
	/* The bridge thread retries its blocked message every millisecond; on a loaded host it may
	 * not have run in the 200 ms the refusals took (seen once in CI), so it gets a while. */
	tap_ok(k.ring_full > k0.ring_full &&
			WAIT_FOR(counters().send_retries > k0.send_retries, 5000),
		"ring_full and send_retries are counted (ring_full +%llu, send_retries +%llu)",
		(unsigned long long)(k.ring_full - k0.ring_full),
		(unsigned long long)(counters().send_retries - k0.send_retries));
	tap_ok(peer_cmd(reply, sizeof(reply), "resume") == 0 &&
			WAIT_FOR(peer_stat("reserves") == before + (long long)accepted, 30000),
		"after the peer resumes, all %llu accepted reservations arrive",
		(unsigned long long)accepted);
	tap_eq_int(peer_stat("dups"), 0, "and each exactly once");

	/* 9. A result query reaches the peer, which publishes the result again. */
	long long q0 = peer_stat("queries");

	int qrc = bridge_query(port[1], 1, 1, now_mono_ms());

	tap_ok(qrc == 0 && WAIT_FOR(peer_stat("queries") == q0 + 1, 5000),
		"a result query reaches the control plane");

	/* 10. The control plane refuses this data plane (its dp id is another's). */
	tap_ok(bridge_port_ready(port[0]) && !bridge_refused(br), "ready before any refusal");
	tap_ok(peer_cmd(reply, sizeof(reply), "refuse") == 0 &&
			WAIT_FOR(!bridge_port_ready(port[0]) && !bridge_port_ready(port[1]), 5000),
		"a DP_REFUSED for this instance: the workers are not ready (they answer 503)");
	tap_ok(bridge_refused(br) && !bridge_ready(br) && counters().refusals == 1 &&
			WAIT_FOR(peer_dpstat("bridge_refused") == 1, 5000),
		"refused, counted, and shown in the counters (bridge_refused 1)");
	tap_ok(WAIT_FOR(bridge_port_ready(port[0]), 3 * BRIDGE_REFUSED_HOLD_MS) &&
			!bridge_refused(br),
		"without more refusals it is ready again after %u ms", BRIDGE_REFUSED_HOLD_MS);
	tap_ok(peer_cmd(reply, sizeof(reply), "refuse any") == 0 &&
			WAIT_FOR(bridge_refused(br), 5000) && counters().refusals == 2,
		"a DP_REFUSED for every instance of this (dp id, epoch) refuses it too");
	tap_ok(WAIT_FOR(bridge_port_ready(port[0]), 3 * BRIDGE_REFUSED_HOLD_MS),
		"and it lifts the same way");

	/* 10b. A stop's drain: the last reservation sent (the mark) proves the handover once its
	 * result is back. The peer answers nothing: the bridge sends the mark again every
	 * BRIDGE_RESEND_MS while it waits (the peer sees its id again); once the peer answers, the
	 * drain is done and the mark is not sent again. */
	tap_ok(peer_cmd(reply, sizeof(reply), "mute") == 0, "drain: the peer answers nothing");
	long long r0 = peer_stat("reserves"), d0 = peer_stat("dups");
	struct drain_arg da = {.max_ms = 20000};
	pthread_t dt;

	for (unsigned i = 0; i < 3; i++) {
		struct wire_reserve r = reservation(i % 2, 1, 300000 + i);

		submit(port[i % 2], &r);
	}
	tap_ok(WAIT_FOR(peer_stat("reserves") == r0 + 3, 5000) && peer_stat("dups") == d0,
		"drain: 3 reservations reach the peer, unanswered");
	k = counters();
	bridge_drain_begin(br);
	if (!tap_ok(pthread_create(&dt, NULL, drain_thread, &da) == 0,
		    "drain: bridge_drain_wait() runs (%u ms at most)", da.max_ms))
		return;
	bool ok = WAIT_FOR(
		peer_stat("dups") >= d0 + 1 && counters().stop_resends >= k.stop_resends + 1,
		3 * BRIDGE_RESEND_MS + 2000);

	tap_ok(ok,
		"drain: the unanswered mark is sent again (the peer has it twice, stop_resends "
		"+%llu)",
		(unsigned long long)(counters().stop_resends - k.stop_resends));
	ok = WAIT_FOR(peer_stat("dups") >= d0 + 2 && counters().stop_resends >= k.stop_resends + 2,
		3 * BRIDGE_RESEND_MS + 2000);
	tap_ok(ok && !__atomic_load_n(&da.done, __ATOMIC_ACQUIRE),
		"drain: and again while it stays unanswered; the drain is not over");
	long long a0 = peer_stat("results");

	tap_ok(peer_cmd(reply, sizeof(reply), "unmute") == 0 &&
			WAIT_FOR(peer_stat("results") > a0, 3 * BRIDGE_RESEND_MS + 2000),
		"drain: the peer answers the next one");
	/* Looked at while the drain could still go on (max_ms is far): no mark after the answer. */
	long long rd = peer_stat("reserves");
	uint64_t sr = counters().stop_resends;

	WAIT_FOR(false, 3 * BRIDGE_RESEND_MS);
	long long rd2 = peer_stat("reserves");
	uint64_t sr2 = counters().stop_resends;

	tap_ok(rd2 == rd && sr2 == sr,
		"drain: the answered mark is not sent again (%u ms later: +%lld received, "
		"stop_resends +%llu)",
		3 * BRIDGE_RESEND_MS, rd2 - rd, (unsigned long long)(sr2 - sr));
	ok = __atomic_load_n(&da.done, __ATOMIC_ACQUIRE);
	tap_ok(ok && da.result == BRIDGE_DRAIN_DONE,
		"drain: the answer made the drain done (result %d, %d wanted)", ok ? da.result : -1,
		BRIDGE_DRAIN_DONE);
	/* Joined once over (at most max_ms), this thread reporting quiescent states meanwhile. */
	WAIT_FOR(__atomic_load_n(&da.done, __ATOMIC_ACQUIRE), da.max_ms + 5000);
	pthread_join(dt, NULL);

	/* 11. Clean stop. */
	rte_rcu_qsbr_thread_offline(qsbr, 0);
	rte_rcu_qsbr_thread_unregister(qsbr, 0);
	uint64_t t0 = now_mono_ms();

	bridge_stop(br, 2000);
	k = counters();
	tap_ok(now_mono_ms() - t0 < 10000 && k.unsent_at_stop == 0,
		"bridge_stop returns with nothing left unsent");
	tap_ok(k.decode_errors[WIRE_ERRI_FIELD] == 2 && k.wrong_direction == 0,
		"no other message was refused (the garbage's and the malformed FAIR's)");
	bridge_destroy(br);
	br = NULL;
	tap_ok(peer_cmd(reply, sizeof(reply), "quit") == 0, "the peer quits");

	/* 12. The clock follows the wall clock it is resynchronised with. */
	uint64_t tsc = rte_rdtsc(), wall = now_wall_ms();
	int64_t ahead = (int64_t)(clock_ms(&clk.ref, tsc) - wall);
	int64_t step = clock_resync(&clk, wall + 5000, tsc);

	tap_ok(ahead >= CLOCK_SHIFT_MS - 1000 && ahead <= CLOCK_SHIFT_MS + 1000 &&
			step >= 4000 && step <= 6000 &&
			(int64_t)(clock_ms(&clk.ref, tsc) - wall) == CLOCK_SHIFT_MS + 5000 &&
			clk.resyncs == 1,
		"a resync against a wall clock 5 s later moves the clock 5 s (step %lld ms)",
		(long long)step);
	struct clock w;

	clock_attach(&w, &clk);
	clock_resync(&clk, wall, tsc);
	tap_ok(clock_ms(&w, tsc) == wall + CLOCK_SHIFT_MS,
		"a worker's clock attached before a resync follows it (the shared offset)");
}


/* One test peer's process and pipes; the harness's commands go to the one in peer_pid. */
struct peer_proc {
	pid_t pid;
	int in, out;
};

static void
peer_use(const struct peer_proc *p)
{
	peer_pid = p->pid;
	peer_in = p->in;
	peer_out = p->out;
}

static void
peer_save(struct peer_proc *p)
{
	*p = (struct peer_proc){.pid = peer_pid, .in = peer_in, .out = peer_out};
}

/* Submits n reservations of event 1 of data plane DP_ID + 1: ids seq.., users user... */
static int
submit_users(struct bridge_port *port, uint64_t seq, uint64_t user, unsigned n)
{
	int rc = 0;

	for (unsigned i = 0; i < n; i++) {
		struct wire_reserve r = {
			.reservation_id = wire_reservation_id(DP_ID + 1, 0, seq + i),
			.user = user + i,
			.admitted_ms = 1700000000000,
			.event = 1,
		};

		rc |= submit(port, &r);
	}
	return rc;
}

/*
 * Several control planes (docs/ha.md): the endpoint lists must match; the bridge talks to the
 * first, and when that one dies (SIGKILL: silent, not even a heartbeat) it moves to the second
 * after resync_ms, asks it for a snapshot, sends it the reservations from then on, and counts
 * the switch in its DP_STATS.
 */
static void
test_failover(const char *peer_exe)
{
	char pull[2][64], pub[2][64], err[512] = "";
	struct peer_proc pa, pb;
	struct bridge_config c;
	struct zlink_settings zs = {0};

	bridge_config_defaults(&c);
	snprintf(c.push_endpoint, sizeof(c.push_endpoint), "tcp://127.0.0.1:1,tcp://127.0.0.1:2");
	tap_ok(bridge_config_check(&c, err, sizeof(err)) == -EINVAL &&
			strstr(err, "as many control planes") != NULL,
		"two PUSH endpoints and one SUB: refused (%s)", err);
	snprintf(c.sub_endpoint, sizeof(c.sub_endpoint), "tcp://127.0.0.1:3,,tcp://127.0.0.1:4");
	tap_ok(bridge_config_check(&c, err, sizeof(err)) == -EINVAL,
		"an empty endpoint in a list: refused");
	snprintf(c.sub_endpoint, sizeof(c.sub_endpoint), "tcp://127.0.0.1:3,tcp://127.0.0.1:4");
	tap_ok(bridge_config_check(&c, err, sizeof(err)) == 0, "two of each: accepted");
	err[0] = '\0';

	for (unsigned i = 0; i < 2; i++) {
		snprintf(pull[i], sizeof(pull[i]), "tcp://127.0.0.1:%u", child_free_port());
		snprintf(pub[i], sizeof(pub[i]), "tcp://127.0.0.1:%u", child_free_port());
	}
	if (!tap_ok(start_peer_id(peer_exe, pull[0], pub[0], "51") == 0,
		    "control plane A (a test peer) runs"))
		return;
	peer_save(&pa);
	if (!tap_ok(start_peer_id(peer_exe, pull[1], pub[1], "52") == 0,
		    "control plane B (a test peer) runs")) {
		peer_use(&pa);
		return;
	}
	peer_save(&pb);
	if (!tap_ok(zlink_keys_load(&zs, false, "bridge", NULL, 0, &c.keys, err, sizeof(err)) == 0,
		    "the local link keys: %s", err[0] ? err : "ok"))
		return;
	c.dp_id = DP_ID + 1;
	snprintf(c.push_endpoint, sizeof(c.push_endpoint), "%s,%s", pull[0], pull[1]);
	snprintf(c.sub_endpoint, sizeof(c.sub_endpoint), "%s,%s", pub[0], pub[1]);
	c.n_workers = 1;
	c.ring_size = 1024;
	c.batch_max = 64;
	c.result_capacity = 1u << 12;
	c.resync_ms = 3000; /* heartbeats every 200 ms: room for a loaded host's stall */
	c.snapshot_retry_ms = 100;
	c.stats_ms = 200;
	br = bridge_create(&c, err, sizeof(err));
	if (!tap_ok(br != NULL, "bridge_create with two control planes: %s", br ? "ok" : err))
		return;
	qsbr = bridge_qsbr(br);
	rte_rcu_qsbr_thread_register(qsbr, 0);
	rte_rcu_qsbr_thread_online(qsbr, 0);
	struct bridge_port *port = bridge_port(br, 0);

	if (!tap_ok(bridge_start(br, err, sizeof(err)) == 0, "bridge_start: %s", err))
		return;
	peer_use(&pa);
	tap_ok(WAIT_FOR(bridge_ready(br), 10000) && peer_stat("snapshot_requests") >= 1,
		"ready with the first control plane's snapshot");
	int rc = submit_users(port, 1000, 5000, 10);

	tap_ok(rc == 0 && WAIT_FOR(peer_stat("reserves") == 10, 5000),
		"10 reservations reach control plane A");
	tap_eq_int((long long)counters().cp_switches, 0, "no switch while it answers");

	/* A dies: the bridge hears nothing more (heartbeats every 200 ms, resync 3 s). */
	child_stop(pa.pid, SIGKILL, 0);
	close(pa.in);
	close(pa.out);
	peer_use(&pb);
	tap_ok(WAIT_FOR(counters().cp_switches == 1, 10000),
		"silent for resync: the bridge moves to control plane B (cp_switches 1)");
	tap_ok(WAIT_FOR(peer_stat("snapshot_requests") >= 1, 5000) &&
			WAIT_FOR(bridge_ready(br), 5000),
		"it asked B for a snapshot and is ready");
	rc = submit_users(port, 2000, 6000, 10);
	tap_ok(rc == 0 && WAIT_FOR(peer_stat("reserves") == 10, 5000),
		"the next 10 reservations reach B, each once");
	tap_ok(WAIT_FOR(peer_dpstat("bridge_cp_switches") == 1, 5000),
		"B sees the switch in the data plane's counters (bridge_cp_switches 1)");
	tap_ok(WAIT_FOR(counters().cp_switches == 1, 1500) && counters().cp_switches == 1,
		"and it stays with B while B answers");
	rte_rcu_qsbr_thread_offline(qsbr, 0);
	rte_rcu_qsbr_thread_unregister(qsbr, 0);
	bridge_stop(br, 1000);
	bridge_destroy(br);
	br = NULL;
	char reply[512];

	tap_ok(peer_cmd(reply, sizeof(reply), "quit") == 0, "control plane B quits");
}

int
main(int argc, char **argv)
{
	char *eal_argv[] = {argv[0], "--no-huge", "-m", "512", "--no-pci", "--no-shconf",
		"--no-telemetry", "--log-level", "lib.*:error", "-l", "0", NULL};

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH_TO_FG_TESTPEER\n", argv[0]);
		return 2;
	}
	atexit(kill_peer);
	child_at_fatal(kill_peer_now);
	signal(SIGPIPE, SIG_IGN);
	alarm(170); /* a last bound under meson's timeout: the peer dies with us */
	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 2;
	}
	test_eal_rundir_cleanup_at_exit();
	test_staging();
	test_query_ring();
	test_all(argv[1]);
	if (br == NULL) {
		kill_peer();
		test_failover(argv[1]);
	}
	if (br != NULL) { /* a check failed half way: this thread must not hold up the stop */
		rte_rcu_qsbr_thread_offline(qsbr, 0);
		bridge_stop(br, 0);
		bridge_destroy(br);
	}
	kill_peer();
	rte_eal_cleanup();
	return tap_done();
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The bridge's set-up and its thread (dataplane/bridge_int.h says where the rest is). */
#include "dataplane/bridge/bridge.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <zmq.h>

#include "common/log.h"
#include "common/now.h"
#include "dataplane/bridge/bridge_int.h"

void
bridge_config_defaults(struct bridge_config *c)
{
	memset(c, 0, sizeof(*c));
	c->dp_id = 1;
	snprintf(c->push_endpoint, sizeof(c->push_endpoint), "tcp://127.0.0.1:5601");
	snprintf(c->sub_endpoint, sizeof(c->sub_endpoint), "tcp://127.0.0.1:5602");
	c->n_workers = 1;
	c->ring_size = 16384;
	c->batch_max = 256;
	c->batch_wait_us = 1000;
	c->result_capacity = 1u << 20;
	c->query_cooldown_ms = 1000;
	c->resync_ms = 5000;
	c->snapshot_retry_ms = 500;
	c->push_hwm = 1000;
	c->push_sndbuf = 0;
	c->socket_id = SOCKET_ID_ANY;
	c->stats_ms = 1000;
}

/*
 * Splits list, endpoints separated by commas, into out[0..BRIDGE_CP_MAX). Returns how many, or
 * 0 when one is empty or there are more than BRIDGE_CP_MAX.
 */
static unsigned
bridge_split_endpoints(const char *list, char out[][BRIDGE_ENDPOINT_MAX])
{
	unsigned n = 0;

	for (const char *p = list;; n++) {
		size_t len = strcspn(p, ",");

		if (len == 0 || n == BRIDGE_CP_MAX)
			return 0;
		snprintf(out[n], BRIDGE_ENDPOINT_MAX, "%.*s", (int)len, p);
		if (p[len] == '\0')
			return n + 1;
		p += len + 1;
	}
}

int
bridge_config_check(const struct bridge_config *c, char *err, size_t errlen)
{
	char push[BRIDGE_CP_MAX][BRIDGE_ENDPOINT_MAX], sub[BRIDGE_CP_MAX][BRIDGE_ENDPOINT_MAX];
	const char *what = NULL;

	if (c->dp_id < 1 || c->dp_id > WIRE_DP_ID_MAX)
		what = "the data plane id must be 1..1023 (it is part of every reservation id)";
	else if (c->push_endpoint[0] == '\0' || c->sub_endpoint[0] == '\0')
		what = "both control plane endpoints must be set (e.g. tcp://127.0.0.1:5601)";
	else if (bridge_split_endpoints(c->push_endpoint, push) == 0 ||
		 bridge_split_endpoints(c->push_endpoint, push) !=
			 bridge_split_endpoints(c->sub_endpoint, sub))
		what = "push_endpoint and sub_endpoint must list as many control planes, 1..4, "
		       "separated by commas, none empty (the i-th of each is one control plane)";
	else if (c->n_workers < 1 || c->n_workers > WIRE_WORKERS_MAX)
		what = "the number of workers must be 1..64 (6 bits of the reservation id)";
	else if (c->ring_size < 2 || (c->ring_size & (c->ring_size - 1)) != 0 ||
		 c->ring_size > RTE_RING_SZ_MASK)
		what = "the ring size must be a power of two, at least 2";
	else if (c->batch_max < 1 || c->batch_max > BRIDGE_BATCH_MAX)
		what = "the batch size must be 1..4096 records";
	else if (c->batch_wait_us > 1000000)
		what = "the batch wait must be at most 1000000 us";
	else if (c->result_capacity < 1 || c->result_capacity > (1u << 28))
		what = "the result table capacity must be 1..268435456";
	else if (c->query_cooldown_ms < 100 || c->query_cooldown_ms > 60000)
		what = "the result query cooldown must be 100..60000 ms";
	else if (c->resync_ms < 100 || c->snapshot_retry_ms < 10)
		what = "resync must be at least 100 ms and the snapshot retry at least 10 ms";
	else if (c->push_hwm < 1)
		what = "the PUSH high-water mark must be at least 1 message";
	else if (c->stats_ms != 0 && (c->stats_ms < 10 || c->stats_ms > 3600000))
		what = "the counters interval must be 10..3600000 ms, or 0 to send none";
	if (what == NULL)
		return 0;
	snprintf(err, errlen, "bridge: %s", what);
	return -EINVAL;
}

struct bridge *
bridge_create(const struct bridge_config *c, char *err, size_t errlen)
{
	struct bridge *b;
	char name[RTE_RING_NAMESIZE];

	if (bridge_config_check(c, err, errlen) != 0)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		goto nomem;
	b->cfg = *c;
	b->ports = rte_zmalloc_socket("bridge_ports", sizeof(*b->ports) * c->n_workers,
		RTE_CACHE_LINE_SIZE, c->socket_id);
	b->qsbr = rte_zmalloc_socket("bridge_qsbr", rte_rcu_qsbr_get_memsize(c->n_workers),
		RTE_CACHE_LINE_SIZE, c->socket_id);
	b->staged = malloc(sizeof(*b->staged) * c->batch_max);
	b->qstaged = malloc(sizeof(*b->qstaged) * c->batch_max);
	b->msg_cap = wire_msg_size(WIRE_T_RESERVE, c->batch_max);
	/* The one message buffer also carries a full DP_STATS. */
	if (b->msg_cap < wire_msg_size(WIRE_T_DP_STATS, WIRE_STATS_MAX))
		b->msg_cap = wire_msg_size(WIRE_T_DP_STATS, WIRE_STATS_MAX);
	b->msg = malloc(b->msg_cap);
	b->stats = calloc(WIRE_STATS_MAX, sizeof(*b->stats));
	if (b->ports == NULL || b->qsbr == NULL || b->staged == NULL || b->qstaged == NULL ||
		b->msg == NULL || b->stats == NULL || rte_rcu_qsbr_init(b->qsbr, c->n_workers) != 0)
		goto nomem;
	snprintf(name, sizeof(name), "fg_results_%u", c->dp_id);
	b->results = result_table_create(name, c->result_capacity, c->socket_id, b->qsbr);
	if (b->results == NULL) {
		snprintf(err, errlen,
			"bridge: cannot create a result table of %u entries: %s "
			"(lower the capacity or give DPDK more memory)",
			c->result_capacity, rte_strerror(rte_errno));
		bridge_destroy(b);
		return NULL;
	}
	shared_init(&b->shared, b->qsbr);
	b->shared.silence_ms = c->resync_ms; /* /readyz: the control plane gone after it */
	for (unsigned i = 0; i < c->n_workers; i++) {
		snprintf(name, sizeof(name), "fg_bridge_%u_%u", c->dp_id, i);
		b->ports[i].ring = rte_ring_create_elem(name, sizeof(struct wire_reserve),
			c->ring_size, c->socket_id, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (b->ports[i].ring == NULL) {
			snprintf(err, errlen, "bridge: cannot create ring %s of %u: %s", name,
				c->ring_size, rte_strerror(rte_errno));
			bridge_destroy(b);
			return NULL;
		}
		snprintf(name, sizeof(name), "fg_query_%u_%u", c->dp_id, i);
		b->ports[i].qring = rte_ring_create_elem(name, sizeof(struct wire_result_query),
			c->ring_size, c->socket_id, RING_F_SP_ENQ | RING_F_SC_DEQ);
		b->ports[i].cool = rte_zmalloc_socket("bridge_cool",
			sizeof(struct bridge_cool) * BRIDGE_COOL_ENTRIES, RTE_CACHE_LINE_SIZE,
			c->socket_id);
		if (b->ports[i].qring == NULL || b->ports[i].cool == NULL) {
			snprintf(err, errlen, "bridge: cannot create the query ring %s of %u: %s",
				name, c->ring_size, rte_strerror(rte_errno));
			bridge_destroy(b);
			return NULL;
		}
		b->ports[i].cooldown_ms = c->query_cooldown_ms;
		b->ports[i].shared = &b->shared;
		b->ports[i].results = b->results;
		b->ports[i].stopping = &b->stopping;
	}
	b->tx.id = c->dp_id;
	b->tx.epoch = (uint32_t)(now_wall_ms() / 1000);
	b->tx.seq = 0;
	/* The instance tells this data plane from another started with the same dp id in the same
	 * second (the same epoch): random, never 0. */
	if (getrandom(&b->instance, sizeof(b->instance), 0) != (ssize_t)sizeof(b->instance))
		b->instance = now_wall_ms() ^ ((uint64_t)getpid() << 32);
	b->instance |= 1;
	return b;
nomem:
	snprintf(err, errlen, "bridge: out of memory");
	bridge_destroy(b);
	return NULL;
}

void
bridge_destroy(struct bridge *b)
{
	if (b == NULL)
		return;
	if (b->started && !b->stopped)
		bridge_stop(b, 0);
	if (b->ports != NULL)
		for (unsigned i = 0; i < b->cfg.n_workers; i++) {
			rte_ring_free(b->ports[i].ring);
			rte_ring_free(b->ports[i].qring);
			rte_free(b->ports[i].cool);
		}
	shared_fini(&b->shared);
	result_table_free(b->results);
	rte_free(b->ports);
	rte_free(b->qsbr);
	free(b->cur.rules);
	free(b->snap.m.rules);
	free(b->staged);
	free(b->qstaged);
	free(b->msg);
	free(b->stats);
	zlink_keys_wipe(&b->cfg.keys);
	free(b);
}

struct bridge_port *
bridge_port(struct bridge *b, unsigned worker)
{
	return worker < b->cfg.n_workers ? &b->ports[worker] : NULL;
}

struct rte_rcu_qsbr *
bridge_qsbr(struct bridge *b)
{
	return b->qsbr;
}

const struct shared_state *
bridge_shared(const struct bridge *b)
{
	return &b->shared;
}

const struct result_table *
bridge_results(const struct bridge *b)
{
	return b->results;
}

bool
bridge_ready(const struct bridge *b)
{
	return bridge_is_ready(b);
}

bool
bridge_refused(const struct bridge *b)
{
	return bridge_is_refused(b);
}

bool
bridge_clock_skew(const struct bridge *b, int64_t *skew_ms)
{
	return bridge_skew_read(b, skew_ms);
}

/*
 * With CURVE, a handshake the control plane refuses is said in the log (at most every 10 s):
 * the data plane otherwise only sees silence. Read every 100 ms on the bridge thread.
 */
static void
bridge_read_monitors(struct bridge *b, uint64_t now_ms)
{
	struct zlink_events ev = {0};

	b->last_mon_ms = now_ms;
	zlink_monitor_read(b->mon[0], &ev);
	zlink_monitor_read(b->mon[1], &ev);
	if (ev.handshake_failed > 0)
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"bridge: the control plane refused the CURVE handshake: is this data plane's "
			"public key in its curve_clients_file (as dataplane), and "
			"curve_server_key_file its public key? (docs/operations.md, \"Link keys\")");
}

/* Accepted reservations still in this data plane: the rings, the batch, the pending message. */
static uint64_t
bridge_unsent(const struct bridge *b)
{
	uint64_t n = b->n_staged +
		     (b->pending && b->pending_type == WIRE_T_RESERVE ? b->pending_records : 0);

	for (unsigned i = 0; i < b->cfg.n_workers; i++)
		n += rte_ring_count(b->ports[i].ring);
	return n;
}

/* During a stop's drain (the workers accept nothing more): is it over, and why? */
static void
drain_check(struct bridge *b, uint64_t now_ms)
{
	int r = 0;
	bool all_sent = bridge_unsent(b) == 0;

	if (all_sent && b->confirmed == b->sent)
		r = BRIDGE_DRAIN_DONE;
	else if (bridge_silent_ms(b, now_ms) >= b->cfg.resync_ms)
		r = BRIDGE_DRAIN_CP_GONE;
	else if (now_ms >= b->drain_deadline_ms)
		r = BRIDGE_DRAIN_TIMEOUT;
	if (r != 0) {
		__atomic_store_n(&b->drain_result, r, __ATOMIC_RELEASE);
		return;
	}
	if (all_sent && !b->pending &&
		bridge_ms_since(now_ms, b->mark_sent_ms) >= BRIDGE_RESEND_MS) {
		int len = wire_encode_reservations(&b->tx, &b->mark, 1, b->msg, b->msg_cap);

		if (len > 0) {
			b->msg_len = (size_t)len;
			b->pending = true;
			b->pending_type = WIRE_T_RESERVE;
			b->pending_records = 1;
			b->pending_resend = true;
			CTR_INC(b->ctr.stop_resends);
		}
	}
}

/*
 * Moves to the next control plane of the lists when the one talked to has been silent for
 * resync_ms (not even a heartbeat: known gone, as a stop's drain judges it). What ZeroMQ still
 * queued for the silent one is dropped with its connection: those reservations are the ones in
 * flight when a control plane dies (docs/wire.md, "Delivery"); the message not yet handed to
 * ZeroMQ goes to the next. The next one is asked for a snapshot and gets this data plane's
 * counters and hello at once.
 */
static void
bridge_cp_failover(struct bridge *b, uint64_t now_ms)
{
	unsigned from = b->cp_cur, to;

	if (b->n_cp < 2 || bridge_silent_ms(b, now_ms) < b->cfg.resync_ms)
		return;
	to = (from + 1) % b->n_cp;
	zmq_disconnect(b->push, b->cp_push[from]);
	zmq_disconnect(b->sub, b->cp_sub[from]);
	if (zmq_connect(b->push, b->cp_push[to]) != 0 || zmq_connect(b->sub, b->cp_sub[to]) != 0)
		LOG_RL(LOG_LEVEL_ERR, 10000, "bridge: cannot connect to %s / %s: %s",
			b->cp_push[to], b->cp_sub[to], zmq_strerror(zmq_errno()));
	/* The ordered stream's proof (a result for the last one sent proves the rest arrived)
	 * holds for one control plane only: what the silent one got no proof for is told here,
	 * and the proof starts again with the next (a stop's hand-over then waits for it). */
	if (b->sent != b->confirmed)
		LOG_WARN("bridge: %" PRIu64 " reservation(s) sent to %s since its last result may be "
			 "lost with it (decided if they reached Redis; otherwise their receipts age "
			 "into \"retry\")",
			b->sent - b->confirmed, b->cp_push[from]);
	b->confirmed = b->sent;
	b->cp_cur = to;
	b->last_rx_ms = now_ms;
	b->last_request_ms = now_ms - (uint64_t)b->cfg.resync_ms - 1;
	b->want_snapshot = true;
	/* Counters and a hello at once: the new one counts this data plane (its forward share)
	 * and checks its dp id now, not a stats_ms later. */
	b->last_stats_ms = now_ms - (uint64_t)b->cfg.stats_ms;
	CTR_INC(b->ctr.cp_switches);
	LOG_WARN("bridge: control plane %s silent for %u ms; moving to %s", b->cp_push[from],
		b->cfg.resync_ms, b->cp_push[to]);
}

static void *
bridge_main(void *arg)
{
	struct bridge *b = arg;
	uint64_t start_ms = now_mono_us() / 1000;

	/* The first request goes out at once; silence is measured from the start. */
	b->last_rx_ms = start_ms;
	b->last_request_ms = start_ms - (uint64_t)b->cfg.resync_ms - 1;
	/* The first counters go out at once, so the control plane knows this data plane. */
	b->last_stats_ms = start_ms - (uint64_t)b->cfg.stats_ms;
	for (;;) {
		uint64_t now_us = now_mono_us(), now_ms = now_us / 1000;
		bool stopping = __atomic_load_n(&b->stop, __ATOMIC_ACQUIRE);
		/* A stopping data plane sends what it holds at once, batch age aside. */
		bool flushing = stopping || __atomic_load_n(&b->stopping, __ATOMIC_ACQUIRE);
		unsigned got = bridge_in_receive(b);

		shared_reclaim(&b->shared);
		result_table_reclaim(b->results);
		if (!stopping) {
			bridge_cp_failover(b, now_ms);
			bridge_in_schedule_snapshot(b, now_ms);
		}
		if (!stopping && b->cfg.stats_ms != 0 &&
			now_ms - b->last_stats_ms >= b->cfg.stats_ms) {
			/* Collected now, sent by bridge_out_prepare() when nothing goes before. */
			b->n_stats = bridge_stats_collect(b);
			b->stats_due = true;
			b->hello_due = true;
			b->last_stats_ms = now_ms;
		}
		if (b->mon[0] != NULL && now_ms - b->last_mon_ms >= 100)
			bridge_read_monitors(b, now_ms);
		bridge_in_check_refusal(b, now_ms);
		unsigned drained = bridge_out_drain(b, now_us);

		bridge_out_prepare(b, now_us, flushing);
		bool sent = bridge_out_send(b);

		if (sent)
			bridge_out_prepare(b, now_us, flushing);
		if (b->sealed && b->drain_result == 0)
			drain_check(b, now_ms);
		if (stopping) {
			bool done = !b->pending && b->n_staged == 0 && b->n_qstaged == 0 &&
				    bridge_out_rings_empty(b);

			if (done || now_ms >= b->flush_deadline_ms)
				break;
		}
		if (got == 0 && drained == 0 && !sent) {
			/* Idle, or blocked on the PUSH: sleep until a message, room to send, or
			 * the next millisecond (when batches are checked for age). */
			zmq_pollitem_t items[2] = {
				{.socket = b->sub, .events = ZMQ_POLLIN},
				{.socket = b->push, .events = ZMQ_POLLOUT},
			};

			zmq_poll(items, b->pending ? 2 : 1, 1);
		}
	}
	uint64_t unsent = bridge_unsent(b);
	uint64_t unconfirmed = b->sent - b->confirmed;

	CTR_ADD(b->ctr.unsent_at_stop, unsent);
	CTR_ADD(b->ctr.unconfirmed_at_stop, unconfirmed);
	if (unsent > 0)
		LOG_WARN("bridge: %" PRIu64 " accepted reservation(s) were never sent: lost with "
			 "this stop (their buyers' receipts age into \"retry\")",
			unsent);
	if (unconfirmed > 0)
		LOG_WARN("bridge: %" PRIu64 " reservation(s) were sent but no result proved that "
			 "the control plane received them (decided if they reach it; otherwise "
			 "their receipts age into \"retry\")",
			unconfirmed);
	return NULL;
}

/* Sets an integer socket option; logs and returns -1 on failure. */
static int
set_int(void *sock, int opt, int value, const char *name, char *err, size_t errlen)
{
	if (zmq_setsockopt(sock, opt, &value, sizeof(value)) == 0)
		return 0;
	snprintf(err, errlen, "bridge: ZeroMQ option %s=%d: %s", name, value,
		zmq_strerror(zmq_errno()));
	return -1;
}

/* Closes the sockets that are open and ends the context. */
static void
bridge_close_sockets(struct bridge *b)
{
	void **s[] = {&b->mon[0], &b->mon[1], &b->push, &b->sub};

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (*s[i] != NULL) {
			zmq_close(*s[i]);
			*s[i] = NULL;
		}
	if (b->zctx != NULL)
		zmq_ctx_term(b->zctx);
	b->zctx = NULL;
}

int
bridge_start(struct bridge *b, char *err, size_t errlen)
{
	const struct bridge_config *c = &b->cfg;

	if (b->started) {
		snprintf(err, errlen, "bridge: already started");
		return -1;
	}
	b->zctx = zmq_ctx_new();
	if (b->zctx == NULL) {
		snprintf(err, errlen, "bridge: no ZeroMQ context: %s", zmq_strerror(zmq_errno()));
		return -1;
	}
	b->push = zmq_socket(b->zctx, ZMQ_PUSH);
	b->sub = zmq_socket(b->zctx, ZMQ_SUB);
	if (b->push == NULL || b->sub == NULL) {
		snprintf(err, errlen, "bridge: no ZeroMQ socket: %s", zmq_strerror(zmq_errno()));
		goto fail;
	}
	/* Nothing waits in the context at close beyond what bridge_stop() allows. */
	if (set_int(b->push, ZMQ_SNDHWM, c->push_hwm, "ZMQ_SNDHWM", err, errlen) != 0 ||
		set_int(b->push, ZMQ_LINGER, 0, "ZMQ_LINGER", err, errlen) != 0 ||
		set_int(b->sub, ZMQ_LINGER, 0, "ZMQ_LINGER", err, errlen) != 0 ||
		/* Results must not be dropped by a full receive queue while we catch up. */
		set_int(b->sub, ZMQ_RCVHWM, 0, "ZMQ_RCVHWM", err, errlen) != 0 ||
		(c->push_sndbuf > 0 && set_int(b->push, ZMQ_SNDBUF, c->push_sndbuf, "ZMQ_SNDBUF",
					       err, errlen) != 0))
		goto fail;
	/* Nothing but the handshake comes back on the PUSH socket: the smallest limit. */
	if (zlink_socket_setup(b->push, &c->keys, NULL, 0, err, errlen) != 0 ||
		zlink_socket_setup(b->sub, &c->keys, NULL, WIRE_MSG_MAX_FROM_CP, err, errlen) != 0)
		goto fail;
	if (c->keys.curve && ((b->mon[0] = zlink_monitor(b->zctx, b->push, "push")) == NULL ||
				     (b->mon[1] = zlink_monitor(b->zctx, b->sub, "sub")) == NULL)) {
		snprintf(err, errlen, "bridge: cannot monitor the sockets: %s",
			zmq_strerror(zmq_errno()));
		goto fail;
	}
	if (zmq_setsockopt(b->sub, ZMQ_SUBSCRIBE, "", 0) != 0) {
		snprintf(err, errlen, "bridge: subscribe: %s", zmq_strerror(zmq_errno()));
		goto fail;
	}
	b->n_cp = bridge_split_endpoints(c->push_endpoint, b->cp_push);
	if (b->n_cp == 0 || bridge_split_endpoints(c->sub_endpoint, b->cp_sub) != b->n_cp) {
		snprintf(err, errlen,
			"bridge: the endpoint lists do not match (bridge_config_check)");
		goto fail;
	}
	b->cp_cur = 0;
	if (zmq_connect(b->push, b->cp_push[0]) != 0) {
		snprintf(err, errlen,
			"bridge: cannot use the PUSH endpoint \"%s\": %s (expected "
			"e.g. tcp://127.0.0.1:5601)",
			b->cp_push[0], zmq_strerror(zmq_errno()));
		goto fail;
	}
	if (zmq_connect(b->sub, b->cp_sub[0]) != 0) {
		snprintf(err, errlen,
			"bridge: cannot use the SUB endpoint \"%s\": %s (expected "
			"e.g. tcp://127.0.0.1:5602)",
			b->cp_sub[0], zmq_strerror(zmq_errno()));
		goto fail;
	}
	/* pthread_create() is a full barrier: the sockets move to the new thread safely. */
	if (pthread_create(&b->thread, NULL, bridge_main, b) != 0) {
		snprintf(err, errlen, "bridge: cannot start the thread");
		goto fail;
	}
	pthread_setname_np(b->thread, "fg-bridge");
	b->started = true;
	return 0;
fail:
	bridge_close_sockets(b);
	return -1;
}

void
bridge_drain_begin(struct bridge *b)
{
	__atomic_store_n(&b->stopping, true, __ATOMIC_RELEASE);
}

enum bridge_drain_result
bridge_drain_wait(struct bridge *b, unsigned max_ms, const volatile bool *abort)
{
	int r;

	if (!b->started || b->stopped)
		return BRIDGE_DRAIN_DONE;
	b->drain_deadline_ms = now_mono_us() / 1000 + max_ms;
	__atomic_store_n(&b->sealed, true, __ATOMIC_RELEASE);
	while ((r = __atomic_load_n(&b->drain_result, __ATOMIC_ACQUIRE)) == 0) {
		if (abort != NULL && *abort)
			return BRIDGE_DRAIN_ABORTED;
		usleep(1000);
	}
	return (enum bridge_drain_result)r;
}

void
bridge_stop(struct bridge *b, unsigned flush_ms)
{
	if (!b->started || b->stopped)
		return;
	b->flush_deadline_ms = now_mono_us() / 1000 + flush_ms;
	__atomic_store_n(&b->stop, true, __ATOMIC_RELEASE);
	pthread_join(b->thread, NULL);
	/* What ZeroMQ still queues gets the rest of the flush time to reach the peer. */
	uint64_t now_ms = now_mono_us() / 1000;
	int linger = now_ms < b->flush_deadline_ms ? (int)(b->flush_deadline_ms - now_ms) : 0;

	zmq_setsockopt(b->push, ZMQ_LINGER, &linger, sizeof(linger));
	bridge_close_sockets(b);
	b->stopped = true;
}

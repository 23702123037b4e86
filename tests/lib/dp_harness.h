/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_DP_HARNESS_H
#define FG_TESTS_DP_HARNESS_H
/*
 * A worker without a port, for calling pipeline_burst() directly: EAL in
 * memory without hugepages or PCI, a mempool, and a worker set up the way
 * main() sets one up, with three events (open, upcoming, closed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "common/token.h"
#include "dataplane/bridge/bridge.h"
#include "dataplane/events.h"
#include "dataplane/pipeline.h"
#include "dataplane/result_table.h"
#include "dataplane/rules.h"
#include "dataplane/shared_state.h"
#include "dataplane/worker.h"
#include "tests/lib/eal_rundir.h"
#include "tests/lib/pktbuild.h"

#define DPH_EVENT_OPEN     1
#define DPH_EVENT_UPCOMING 2
#define DPH_EVENT_CLOSED   3

struct dp_harness {
	struct rte_mempool *pool;
	struct worker *w;
	struct event_table events;
	bool stop;
	/* Admission without a bridge thread: the test plays the bridge's part. */
	struct shared_state shared;
	struct bridge_port port;
	bool stopping; /* what port.stopping points to: the bridge's bridge_drain_begin() */
	struct result_table *results; /* the writer's view of port.results */
};

#define DPH_AUTH_KID 1
#define DPH_SALE_KID 7
static const char dph_auth_key[] = "auth-key-of-the-test-shop-0123456789";
static const char dph_sale_key[] = "sale-key-of-the-test-control-plane-01";

static const uint8_t dph_secret[16] = { 0x66, 0x6c, 0x61, 0x73, 0x68, 0x67, 0x61, 0x74, 0x65,
	0x2d, 0x74, 0x65, 0x73, 0x74, 0x21, 0x21 };

/* Starts EAL and builds the worker; exits the process on failure (tests only). */
static inline void
dph_init(struct dp_harness *h, const char *prog)
{
	char *eal_argv[] = { (char *)prog, "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
		"--no-telemetry", "--log-level", "lib.*:error", "-l", "0", NULL };

	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		exit(2);
	}
	test_eal_rundir_cleanup_at_exit();
	h->pool = rte_pktmbuf_pool_create("dph_pool", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
		SOCKET_ID_ANY);
	h->w = rte_zmalloc("worker", sizeof(*h->w), RTE_CACHE_LINE_SIZE);
	if (h->pool == NULL || h->w == NULL) {
		fprintf(stderr, "pool/worker allocation failed\n");
		exit(2);
	}
	struct worker *w = h->w;
	static const uint8_t mac[6] = PB_DP_MAC;

	w->ipv4_addr = rte_cpu_to_be_32(PB_DP_IP);
	w->mss = 1460;
	w->ip_ttl = 64;
	w->burst = 32;
	w->pool = h->pool;
	w->stop = &h->stop;
	worker_listen_add(w, 80);
	worker_listen_add(w, 8080);
	memcpy(&w->ports[0].mac, mac, 6);
	if (worker_init(w, dph_secret, 64, "sale.shop.example") != 0) {
		fprintf(stderr, "worker_init failed\n");
		exit(2);
	}
	uint64_t now = w->now_ms;
	struct dp_event_cfg ev[3] = {
		{ .id = DPH_EVENT_OPEN, .name = "Open \"sale\"", .starts_at_ms = now - 3600000,
			.ends_at_ms = now + 3600000, .stock = 1000 },
		{ .id = DPH_EVENT_UPCOMING, .name = "Later", .starts_at_ms = now + 3600000,
			.ends_at_ms = now + 7200000, .stock = 10 },
		{ .id = DPH_EVENT_CLOSED, .name = "Past", .starts_at_ms = now - 7200000,
			.ends_at_ms = now - 3600000, .stock = 5 },
	};

	if (event_table_build(&h->events, ev, 3) != 0)
		exit(2);
	w->events = &h->events;
}

/*
 * Gives the worker what the bridge would: a ring of ring_size records, a result
 * table, rate-limit tables and a shared state, still empty (nothing published:
 * admission answers 503 until dph_publish()).
 */
static inline void
dph_admission_init(struct dp_harness *h, unsigned ring_size)
{
	struct worker *w = h->w;

	shared_init(&h->shared, NULL);
	h->port.ring = rte_ring_create_elem("dph_ring", sizeof(struct wire_reserve), ring_size,
		SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	h->port.qring = rte_ring_create_elem("dph_qring", sizeof(struct wire_result_query),
		ring_size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	h->port.cool = rte_zmalloc("dph_cool", sizeof(struct bridge_cool) * BRIDGE_COOL_ENTRIES,
		RTE_CACHE_LINE_SIZE);
	h->port.cooldown_ms = 1000;
	h->results = result_table_create("dph_results", 4096, SOCKET_ID_ANY, NULL);
	h->port.results = h->results;
	h->port.shared = &h->shared;
	h->port.stopping = &h->stopping;
	w->rl_ip = rl_table_create(12, SOCKET_ID_ANY);
	w->rl_user = rl_table_create(12, SOCKET_ID_ANY);
	w->rl_device = rl_table_create(12, SOCKET_ID_ANY);
	/* The data plane's default poll limit: 2 a second, 10 at once. */
	w->rl_poll = rl_table_create(12, SOCKET_ID_ANY);
	w->poll_limit = (struct rl_params){2, 10};
	if (h->port.ring == NULL || h->port.qring == NULL || h->port.cool == NULL ||
		h->results == NULL || w->rl_ip == NULL || w->rl_user == NULL ||
		w->rl_device == NULL || w->rl_poll == NULL) {
		fprintf(stderr, "admission set-up failed\n");
		exit(2);
	}
	w->bridge = &h->port;
	w->n_workers = 1;
	w->dp_id = 3;
	w->purchase_ttl_s = 300;
	w->receipt_young_ms = 10000;
	w->receipt_retry_ms = 30000;
}

/*
 * Publishes a new shared state as the bridge would after a snapshot: the
 * events (sold_out flags as given), the test keys, rules from text specs
 * ("ip 198.18.0.1", "user 42", ...; NULL-terminated, may be NULL) and
 * limits. The worker sees it from its next burst (w->sh is refreshed here).
 */
static inline void
dph_publish(struct dp_harness *h, const struct dp_event_cfg *ev, const uint8_t *sold_out,
	unsigned n_ev, const char *const *rules, const struct dp_limits *limits)
{
	struct dp_shared *d = shared_alloc(&h->shared);
	struct event_table *t = malloc(sizeof(*t));
	struct rule_spec specs[16];
	unsigned n_rules = 0;
	char err[256];

	if (d == NULL || t == NULL || event_table_build(t, ev, n_ev) != 0)
		exit(2);
	for (unsigned i = 0; i < t->n; i++)
		for (unsigned k = 0; k < n_ev; k++)
			if (sold_out != NULL && ev[k].id == t->e[i].id)
				t->e[i].sold_out = sold_out[k];
	event_table_count_selling(t);
	d->events = t;
	for (; rules != NULL && rules[n_rules] != NULL; n_rules++)
		if (rule_spec_parse(rules[n_rules], &specs[n_rules], err, sizeof(err)) != 0) {
			fprintf(stderr, "rule %s: %s\n", rules[n_rules], err);
			exit(2);
		}
	d->rules = rules_build(specs, n_rules, SOCKET_ID_ANY, err, sizeof(err));
	if (d->rules == NULL) {
		fprintf(stderr, "rules: %s\n", err);
		exit(2);
	}
	d->limits = *limits;
	tok_keyring_init(&d->auth);
	tok_keyring_init(&d->sale);
	if (tok_keyring_set(&d->auth, DPH_AUTH_KID, (const uint8_t *)dph_auth_key,
		    sizeof(dph_auth_key) - 1, true) != 0 ||
		tok_keyring_set(&d->sale, DPH_SALE_KID, (const uint8_t *)dph_sale_key,
			sizeof(dph_sale_key) - 1, true) != 0)
		exit(2);
	shared_publish(&h->shared, d);
	h->w->sh = shared_get(&h->shared);
}

/*
 * An mbuf of the harness's pool to build a frame in (tests/lib/pktbuild.h); exits when the
 * pool is empty (tests only).
 */
static inline struct rte_mbuf *
dph_mbuf(struct dp_harness *h)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h->pool);

	if (m == NULL)
		abort();
	return m;
}

/* Runs one frame through the pipeline: returns the answer, or NULL when it was dropped. */
static inline struct rte_mbuf *
dph_one(struct dp_harness *h, struct rte_mbuf *m)
{
	struct rte_mbuf *tx[PIPELINE_TX_PER_RX];

	return pipeline_burst(h->w, 0, &m, 1, tx) == 1 ? tx[0] : NULL;
}

/* The worker's answer to one request (dph_ask(), dph_send()). */
struct dph_answer {
	unsigned status;  /* the status line's code; 0: no answer, or not HTTP/1.1 */
	bool rst;	  /* the answer was a reset */
	char text[1500];  /* headers and body, NUL-terminated (a first segment's worth) */
	const char *body; /* into text, past the blank line; "" without one */
};

/*
 * Sends payload[0..len) (one segment) on a fresh connection from src_ip:sport (host byte
 * order) through the worker: the SYN, then the cookie's ACK carrying it; the answer's first
 * segment into a (status 0 and text "" when either was dropped). Use a new sport per call.
 */
static inline void
dph_send(struct dp_harness *h, uint32_t src_ip, uint16_t sport, const void *payload, size_t len,
	struct dph_answer *a)
{
	uint32_t isn = 77u * sport;
	struct pb_tcp syn = { .src_ip = src_ip, .sport = sport, .seq = isn,
		.flags = RTE_TCP_SYN_FLAG, .mss = 1460 };
	struct rte_mbuf *r = dph_one(h, pb_tcp_frame(dph_mbuf(h), &syn));

	memset(a, 0, sizeof(*a));
	a->body = "";
	if (r == NULL)
		return;
	uint32_t cookie = rte_be_to_cpu_32(pb_th(r)->sent_seq);

	rte_pktmbuf_free(r);
	struct pb_tcp t = { .src_ip = src_ip, .sport = sport, .seq = isn + 1, .ack = cookie + 1,
		.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, .payload = payload,
		.payload_len = (uint16_t)len };

	r = dph_one(h, pb_tcp_frame(dph_mbuf(h), &t));
	if (r == NULL)
		return;
	a->rst = (pb_th(r)->tcp_flags & RTE_TCP_RST_FLAG) != 0;

	uint16_t n;
	const char *p = pb_payload(r, &n);

	if (n >= sizeof(a->text))
		n = sizeof(a->text) - 1;
	memcpy(a->text, p, n);
	a->text[n] = '\0';
	if (n > 12 && memcmp(p, "HTTP/1.1 ", 9) == 0)
		a->status = (unsigned)atoi(a->text + 9);
	a->body = strstr(a->text, "\r\n\r\n");
	a->body = a->body ? a->body + 4 : "";
	rte_pktmbuf_free(r);
}

/* dph_send() of the request text req. */
static inline void
dph_ask(struct dp_harness *h, uint32_t src_ip, uint16_t sport, const char *req,
	struct dph_answer *a)
{
	dph_send(h, src_ip, sport, req, strlen(req), a);
}

#endif

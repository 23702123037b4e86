/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark of the per-burst pipeline on one core with pre-built mbufs:
 * cycles per packet and packets per second for each path. Prints figures;
 * the TAP checks only assert that every answer was the right one, never a time.
 * FG_BENCH_QUICK=1 runs a short pass (used by scripts/test), FG_BENCH_ITERS=N one of N bursts.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <time.h>

#include <rte_cycles.h>

#include "common/pow.h"
#include "tests/lib/dp_harness.h"
#include "tests/tap.h"

#define BURST 32

static struct dp_harness H;

struct bench_case {
	const char *name;
	unsigned target_cycles; /* the target on this machine; 0: none */
	uint8_t expect_flags;   /* TCP flags of the answer */
	struct rte_mbuf *tmpl;  /* the frame as received */
	unsigned expect_status; /* HTTP status of the answer; 0: not HTTP */
	void (*setup)(void);    /* publishes the shared state this case needs; NULL: none */
	/* A burst of different frames instead of tmpl: BURST frames of FRAME_ROOM bytes each at
	 * frames, their lengths in frame_len, and when users is set, the user each one's token
	 * names, whose rate-limit bucket is flushed from the caches before every burst; when
	 * devices is set too, each one's X-Device-Id, whose bucket is flushed as well. */
	const uint8_t *frames;
	const uint16_t *frame_len;
	const uint64_t *users;
	const char *const *devices;
	void (*before)(void); /* puts state back before each burst (kept connections); NULL: none */
};

#define FRAME_ROOM 512

static struct dp_event_cfg bench_events[2];
static uint8_t bench_sold_out[2];
static struct dp_limits bench_limits;

static void
publish(void)
{
	dph_publish(&H, bench_events, bench_sold_out, 2, NULL, &bench_limits);
}

/* Everything unlimited: a reserve goes through every check and into the ring. */
static void
setup_open(void)
{
	bench_sold_out[0] = 0;
	bench_limits = (struct dp_limits){ { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
	publish();
}

static void
setup_sold_out(void)
{
	bench_sold_out[0] = 1;
	publish();
}

/* One request per second per IP: every measured request is over the limit. */
static void
setup_ip_limited(void)
{
	bench_sold_out[0] = 0;
	bench_limits.ip = (struct rl_params){ 1, 1 };
	publish();
}

/* The address may, the user may not: the token is verified, then the user's bucket refuses. */
static void
setup_user_limited(void)
{
	bench_limits.ip = (struct rl_params){ 0, 0 };
	bench_limits.user = (struct rl_params){ 1, 1 };
	publish();
}

/*
 * The many-users case: every limit on, as in a sale, but far above what one core sends (the
 * same 32 users come back every burst here; what is measured is the lookup of a cold bucket),
 * the user table at the data plane's default size (limit_table_log2 = 18). Last in the list:
 * the other cases keep the small table.
 */
static void
setup_many_users(void)
{
	bench_sold_out[0] = 0;
	bench_limits = (struct dp_limits){
		.ip = {100000000, RL_BURST_MAX},
		.user = {100000000, RL_BURST_MAX},
		.device = {100000000, RL_BURST_MAX},
		.event_forward = {100000000, RL_BURST_MAX},
	};
	publish();
	/* A second later: the buckets the cases before emptied are full again. */
	H.w->now_ms += 1000;
	rl_table_free(H.w->rl_user);
	rl_table_free(H.w->rl_device);
	H.w->rl_user = rl_table_create(18, SOCKET_ID_ANY);
	H.w->rl_device = rl_table_create(18, SOCKET_ID_ANY);
	if (H.w->rl_user == NULL || H.w->rl_device == NULL)
		abort();
}

/*
 * Kept connections from a trusted edge (dataplane/pipeline/kept.h): BURST connections of
 * 198.18.0.1, each with its entry, each frame of a burst the next request on its connection.
 * Before every burst the entries go back to their state before that request (kept_before()),
 * so the same frames are in order again: what is measured is a request on a kept connection
 * (lookup, sequence and ACK checks, parse, route, the answer kept), not a handshake.
 */
static struct edge_trust kept_trust;
static struct conn *kept_c[BURST];
static struct conn kept_snap[BURST];

static void
kept_before(void)
{
	for (int i = 0; i < BURST; i++)
		memcpy(kept_c[i], &kept_snap[i], offsetof(struct conn, ans));
}

/* Opens BURST kept connections with frames[i] (one request each) and keeps their entries. */
static void
kept_open(const uint8_t *frames, const uint16_t *len)
{
	struct rte_mbuf *b[BURST], *tx[BURST * PIPELINE_TX_PER_RX];
	char err[128];

	if (H.w->conns == NULL) {
		if (edge_trust_parse("198.18.0.1", &kept_trust, err, sizeof(err)) != 0)
			abort();
		H.w->edge = &kept_trust;
		H.w->conns = conn_table_create(1024, SOCKET_ID_ANY);
		H.w->kept_idle_ms = 3600000;
		if (H.w->conns == NULL)
			abort();
	}
	for (int i = 0; i < BURST; i++) {
		b[i] = dph_mbuf(&H);
		rte_memcpy(rte_pktmbuf_append(b[i], len[i]), frames + (size_t)i * FRAME_ROOM, len[i]);
	}
	uint16_t n = pipeline_burst(H.w, 0, b, BURST, tx);

	rte_pktmbuf_free_bulk(tx, n);
	rte_ring_reset(H.port.ring);
	for (int i = 0; i < BURST; i++) {
		const uint8_t *f = frames + (size_t)i * FRAME_ROOM;
		const struct rte_ipv4_hdr *ip = (const void *)(f + sizeof(struct rte_ether_hdr));
		const struct rte_tcp_hdr *th = (const void *)(ip + 1);

		kept_c[i] = conn_lookup(H.w->conns, ip->src_addr, th->src_port, th->dst_port);
		if (kept_c[i] == NULL)
			abort();
		/* Back to the state before the request: nothing received or sent yet. */
		kept_c[i]->rcv_nxt = rte_be_to_cpu_32(th->sent_seq);
		kept_c[i]->snd_una = kept_c[i]->snd_nxt = kept_c[i]->ans_seq =
			rte_be_to_cpu_32(th->recv_ack);
		kept_c[i]->ans_len = 0;
		kept_c[i]->has_request = false;
		kept_c[i]->pending = false;
		kept_c[i]->state = CONN_ESTABLISHED;
		memcpy(&kept_snap[i], kept_c[i], offsetof(struct conn, ans));
	}
}

static uint8_t kept_hz[BURST * FRAME_ROOM], kept_rs[BURST * FRAME_ROOM];
static uint16_t kept_hz_len[BURST], kept_rs_len[BURST];

static void
setup_kept_healthz(void)
{
	setup_open();
	kept_open(kept_hz, kept_hz_len);
}

static void
setup_kept_reserve(void)
{
	setup_open();
	kept_open(kept_rs, kept_rs_len);
}

static unsigned
answer_status(struct rte_mbuf *m)
{
	uint16_t len;
	const char *p = pb_payload(m, &len);

	return len > 12 ? (unsigned)atoi(p + 9) : 0;
}

/*
 * For a case of many users, sends their buckets out of the caches, as a crowd's are: each of
 * half a million buyers comes back too seldom for its bucket to stay cached; and moves the
 * worker's clock on by a millisecond, so that buckets refill as they would (nothing else runs
 * the worker's clock here). Not timed.
 */
static inline void
chill(const struct bench_case *c)
{
	if (c->users == NULL)
		return;
	H.w->now_ms++;
	for (int i = 0; i < BURST; i++) {
		uint64_t s1, s2;

		rl_sets_of(H.w->rl_user, c->users[i], &s1, &s2);
		__builtin_ia32_clflush(&H.w->rl_user->sets[s1]);
		__builtin_ia32_clflush(&H.w->rl_user->sets[s2]);
		if (c->devices == NULL)
			continue;
		rl_sets_of(H.w->rl_device,
			rl_key_bytes(H.w->rl_device, c->devices[i], strlen(c->devices[i])), &s1,
			&s2);
		__builtin_ia32_clflush(&H.w->rl_device->sets[s1]);
		__builtin_ia32_clflush(&H.w->rl_device->sets[s2]);
	}
}

/* Restores every mbuf of the burst to the case's frame(s) (the pipeline answers in place). */
static inline void
restore(struct rte_mbuf **b, const struct bench_case *c)
{
	if (c->before != NULL)
		c->before();
	for (int i = 0; i < BURST; i++) {
		const void *src = c->frames != NULL ? c->frames + (size_t)i * FRAME_ROOM
						    : rte_pktmbuf_mtod(c->tmpl, const void *);
		uint16_t len = c->frames != NULL ? c->frame_len[i] : rte_pktmbuf_data_len(c->tmpl);

		b[i]->data_off = RTE_PKTMBUF_HEADROOM;
		b[i]->data_len = len;
		b[i]->pkt_len = len;
		b[i]->ol_flags = 0;
		rte_memcpy(rte_pktmbuf_mtod(b[i], void *), src, len);
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Times the case in chunks of CHUNK bursts, each chunk measured twice side by side: restoring
 * the frames alone, then restoring them and running the pipeline. A chunk's figure is the
 * difference per packet. The median chunk is the headline: on a shared virtual machine a
 * chunk in which the vCPU was preempted is far slower, and the mean (printed too) carries it.
 */
#define CHUNK 50

/* Nanoseconds of clock id. */
static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The timed chunks' time, all cases: this thread's CPU clock and the wall clock. A share under
 * 1 is time others had the CPU, which the TSC figures count too (the median of chunks leaves
 * most of it out). */
static uint64_t timed_cpu_ns, timed_wall_ns;

static void
run_case(struct bench_case *c, unsigned iters)
{
	struct rte_mbuf *b[BURST], *tx[BURST * PIPELINE_TX_PER_RX];
	unsigned chunks = iters / CHUNK ? iters / CHUNK : 1;
	double *per_chunk = calloc(chunks, sizeof(*per_chunk));
	uint64_t t0, t_restore_all = 0, t_total_all = 0;
	bool all_right = true;

	if (per_chunk == NULL)
		abort();
	for (int i = 0; i < BURST; i++)
		b[i] = dph_mbuf(&H);
	if (c->setup)
		c->setup();
	/* Warm up (a limited case spends its bucket here), then check the answers once. */
	chill(c);
	restore(b, c);
	uint16_t n = pipeline_burst(H.w, 0, b, BURST, tx);

	rte_ring_reset(H.port.ring);
	chill(c);
	restore(b, c);
	n = pipeline_burst(H.w, 0, b, BURST, tx);

	all_right = n == BURST;
	for (int i = 0; i < n; i++) {
		all_right &= pb_th(tx[i])->tcp_flags == c->expect_flags;
		if (c->expect_status)
			all_right &= answer_status(tx[i]) == c->expect_status;
	}
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall0 = clock_ns(CLOCK_MONOTONIC);

	for (unsigned ch = 0; ch < chunks; ch++) {
		uint64_t t_restore = 0, t_total = 0;

		for (unsigned it = 0; it < CHUNK; it++) {
			chill(c);
			t0 = rte_rdtsc_precise();
			restore(b, c);
			t_restore += rte_rdtsc_precise() - t0;
		}
		for (unsigned it = 0; it < CHUNK; it++) {
			chill(c);
			t0 = rte_rdtsc_precise();
			restore(b, c);
			n = pipeline_burst(H.w, 0, b, BURST, tx);
			t_total += rte_rdtsc_precise() - t0;
			all_right &= n == BURST;
			/* The bridge's side, not measured: empty the ring. */
			rte_ring_reset(H.port.ring);
		}
		per_chunk[ch] = (double)(t_total > t_restore ? t_total - t_restore : 0) /
			(CHUNK * BURST);
		t_restore_all += t_restore;
		t_total_all += t_total;
	}
	uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	uint64_t wall = clock_ns(CLOCK_MONOTONIC) - wall0;

	timed_cpu_ns += cpu;
	timed_wall_ns += wall;
	for (int i = 0; i < BURST; i++)
		rte_pktmbuf_free(b[i]);

	qsort(per_chunk, chunks, sizeof(*per_chunk), cmp_double);
	double cyc = per_chunk[chunks / 2];
	double mean = (double)(t_total_all > t_restore_all ? t_total_all - t_restore_all : 0) /
		((double)chunks * CHUNK * BURST);
	double mpps = (double)rte_get_tsc_hz() / cyc / 1e6;

	free(per_chunk);

	char target[40] = "";

	if (c->target_cycles)
		snprintf(target, sizeof(target), " (target <= %u)", c->target_cycles);
	/* scripts/bench reads the words before "cycles/packet" and "Mpps/core". */
	tap_ok(all_right,
		"%-34s %7.1f cycles/packet %6.2f Mpps/core (mean %.1f; on its CPU %.0f %%)%s",
		c->name, cyc, mpps, mean, wall != 0 ? 100.0 * (double)cpu / (double)wall : 0.0,
		target);
}

int
main(int argc, char **argv)
{
	(void)argc;
	dph_init(&H, argv[0]);
	/* FG_BENCH_ITERS=N: N bursts per case (scripts/bench-compare's shorter runs). */
	unsigned iters = getenv("FG_BENCH_ITERS")	  ? (unsigned)atoi(getenv("FG_BENCH_ITERS"))
			 : getenv("FG_BENCH_QUICK") ? 2000
						    : 200000;

	dph_admission_init(&H, 1024);
	/* The poll limit on, as in a sale, far above what one core sends: its bucket is read. */
	H.w->poll_limit = (struct rl_params){100000000, RL_BURST_MAX};
	uint64_t now = H.w->now_ms;

	bench_events[0] = (struct dp_event_cfg){ .id = 1, .name = "bench", .starts_at_ms = now - 1000,
		.ends_at_ms = now + 86400000, .stock = 1000 };
	bench_events[1] = (struct dp_event_cfg){ .id = 2, .name = "later",
		.starts_at_ms = now + 86400000, .ends_at_ms = now + 2 * 86400000, .stock = 1000 };
	setup_open();
	uint32_t isn = 123456;
	struct pb_tcp syn = { .sport = 50000, .seq = isn, .flags = RTE_TCP_SYN_FLAG, .mss = 1460,
		.linux_opts = true };
	struct rte_mbuf *sa = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &syn));
	uint32_t cookie = rte_be_to_cpu_32(pb_th(sa)->sent_seq);

	rte_pktmbuf_free(sa);
	/* What curl sends. */
	const char *healthz = "GET /healthz HTTP/1.1\r\nHost: 198.18.0.2\r\nUser-Agent: curl/7.88.1\r\n"
			      "Accept: */*\r\n\r\n";
	const char *event = "GET /api/v1/events/1 HTTP/1.1\r\nHost: 198.18.0.2\r\n"
			    "User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n";
	/* A purchase token and the hidden path, as a client holds them after POST .../token. */
	char tok[TOK_BUF_SIZE], seg[TOK_BUF_SIZE], receipt[TOK_BUF_SIZE], reserve[512], bad[512],
		poll[512];

	tok_purchase_mint(&H.w->sh->sale, 1, 42, now / 1000 + 3600, tok, sizeof(tok));
	tok_path_mint(&H.w->sh->sale, 1, seg, sizeof(seg));
	/* The poll is user 43's, who holds a result; user 42 reserves (no result: not a known
	 * buyer, so the reserve goes through after the result table's look-up). */
	tok_receipt_mint(&H.w->sh->sale, 1, 43, now, receipt, sizeof(receipt));
	snprintf(reserve, sizeof(reserve),
		"POST /api/v1/events/1/reserve/%s HTTP/1.1\r\nHost: 198.18.0.2\r\n"
		"User-Agent: Mozilla/5.0\r\nX-Flash-Token: %s\r\nX-Device-Id: dev-42\r\n"
		"Content-Length: 0\r\n\r\n",
		seg, tok);
	snprintf(bad, sizeof(bad),
		"POST /api/v1/events/1/reserve/%s HTTP/1.1\r\nHost: 198.18.0.2\r\n"
		"User-Agent: Mozilla/5.0\r\nX-Flash-Token: %.*sAAAAAAAAAAAAAAAAAAAAAA\r\n"
		"X-Device-Id: dev-42\r\nContent-Length: 0\r\n\r\n",
		seg, (int)(strlen(tok) - 22), tok);
	snprintf(poll, sizeof(poll),
		"GET /api/v1/events/1/result HTTP/1.1\r\nHost: 198.18.0.2\r\n"
		"User-Agent: Mozilla/5.0\r\nX-Flash-Token: %s\r\n\r\n",
		receipt);
	/* Issue 18: the same reserve with a challenge (a p2 token of 8 bits, user 44, and its
	 * solution), and refused at the solution (a wrong one, or none): the difference of the
	 * last two is the solution's check in the pipeline, one SHA-256 block. */
	char ptok[TOK_BUF_SIZE], psol[POW_SOLUTION_MAX + 1], pres[640], pwrong[640], pnone[640];
	unsigned pbits;
	const char *pprefix;
	uint64_t ptries;

	if (tok_purchase_mint_pow(&H.w->sh->sale, 1, 44, now / 1000 + 3600, 8, ptok,
		    sizeof(ptok)) < 0 ||
		!tok_purchase_challenge(ptok, strlen(ptok), &pbits, &pprefix) ||
		pow_solve(pprefix, TOK_MAC_CHARS, pbits, UINT64_C(1) << 24, psol, &ptries) != 0)
		abort();
	/* A wrong solution: the first number from 10^9 on that does not solve it. */
	char wsol[24];

	for (uint64_t v = 1000000000;; v++) {
		snprintf(wsol, sizeof(wsol), "%" PRIu64, v);
		if (!pow_check(pprefix, TOK_MAC_CHARS, wsol, strlen(wsol), pbits))
			break;
	}
	const char *sols[3] = {psol, wsol, ""};
	char *reqs[3] = {pres, pwrong, pnone};

	for (int i = 0; i < 3; i++)
		snprintf(reqs[i], sizeof(pres),
			"POST /api/v1/events/1/reserve/%s HTTP/1.1\r\nHost: 198.18.0.2\r\n"
			"User-Agent: Mozilla/5.0\r\nX-Flash-Token: %s\r\nX-Flash-Solution: %s\r\n"
			"X-Device-Id: dev-42\r\nContent-Length: 0\r\n\r\n",
			seg, ptok, sols[i]);
	struct rt_result res = { .reservation_id = 1, .verdict = WIRE_V_RESERVED };
	/* A burst of reserves of 32 users, each with its own purchase token. */
	static uint8_t many[BURST * FRAME_ROOM];
	static uint16_t many_len[BURST];
	static uint64_t many_users[BURST];
	/* The same users, each with a device of its own. */
	static uint8_t many_dev[BURST * FRAME_ROOM];
	static uint16_t many_dev_len[BURST];
	static char dev_ids[BURST][16];
	static const char *devs[BURST];

	for (unsigned u = 0; u < BURST; u++) {
		char t[TOK_BUF_SIZE], rq[512];

		many_users[u] = 1000000 + u;
		tok_purchase_mint(
			&H.w->sh->sale, 1, many_users[u], now / 1000 + 3600, t, sizeof(t));
		snprintf(rq, sizeof(rq),
			"POST /api/v1/events/1/reserve/%s HTTP/1.1\r\nHost: 198.18.0.2\r\n"
			"User-Agent: Mozilla/5.0\r\nX-Flash-Token: %s\r\nX-Device-Id: dev-42\r\n"
			"Content-Length: 0\r\n\r\n",
			seg, t);
		struct rte_mbuf *f = pb_request(dph_mbuf(&H), isn, cookie, rq, 50000);

		many_len[u] = rte_pktmbuf_data_len(f);
		if (many_len[u] > FRAME_ROOM)
			abort();
		memcpy(many + (size_t)u * FRAME_ROOM, rte_pktmbuf_mtod(f, void *), many_len[u]);
		rte_pktmbuf_free(f);

		snprintf(dev_ids[u], sizeof(dev_ids[u]), "dev-%u", 1000 + u);
		devs[u] = dev_ids[u];
		snprintf(rq, sizeof(rq),
			"POST /api/v1/events/1/reserve/%s HTTP/1.1\r\nHost: 198.18.0.2\r\n"
			"User-Agent: Mozilla/5.0\r\nX-Flash-Token: %s\r\nX-Device-Id: %s\r\n"
			"Content-Length: 0\r\n\r\n",
			seg, t, dev_ids[u]);
		f = pb_request(dph_mbuf(&H), isn, cookie, rq, 50000);
		many_dev_len[u] = rte_pktmbuf_data_len(f);
		if (many_dev_len[u] > FRAME_ROOM)
			abort();
		memcpy(many_dev + (size_t)u * FRAME_ROOM, rte_pktmbuf_mtod(f, void *),
			many_dev_len[u]);
		rte_pktmbuf_free(f);
	}

	/* Kept connections: BURST of them, from 198.18.0.1 (the trusted edge), one request each
	 * a burst (healthz, or a reserve of its own user). */
	for (unsigned u = 0; u < BURST; u++) {
		uint16_t sport = (uint16_t)(51000 + u);
		struct pb_tcp ks = { .sport = sport, .seq = isn, .flags = RTE_TCP_SYN_FLAG,
			.mss = 1460 };
		struct rte_mbuf *r = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &ks));
		uint32_t kc = rte_be_to_cpu_32(pb_th(r)->sent_seq);
		char t[TOK_BUF_SIZE], rq[512];

		rte_pktmbuf_free(r);
		struct rte_mbuf *f = pb_request(dph_mbuf(&H), isn, kc, healthz, sport);

		kept_hz_len[u] = rte_pktmbuf_data_len(f);
		memcpy(kept_hz + (size_t)u * FRAME_ROOM, rte_pktmbuf_mtod(f, void *), kept_hz_len[u]);
		rte_pktmbuf_free(f);
		tok_purchase_mint(&H.w->sh->sale, 1, 2000000 + u, now / 1000 + 3600, t, sizeof(t));
		snprintf(rq, sizeof(rq),
			"POST /api/v1/events/1/reserve/%s HTTP/1.1\r\nHost: 198.18.0.2\r\n"
			"User-Agent: Mozilla/5.0\r\nX-Flash-Token: %s\r\nX-Device-Id: dev-42\r\n"
			"Content-Length: 0\r\n\r\n",
			seg, t);
		f = pb_request(dph_mbuf(&H), isn, kc, rq, sport);
		kept_rs_len[u] = rte_pktmbuf_data_len(f);
		if (kept_rs_len[u] > FRAME_ROOM)
			abort();
		memcpy(kept_rs + (size_t)u * FRAME_ROOM, rte_pktmbuf_mtod(f, void *), kept_rs_len[u]);
		rte_pktmbuf_free(f);
	}

	result_table_put(H.results, 1, 43, &res);
	uint8_t data_flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG;
	struct bench_case cases[] = {
		{ "SYN -> SYN-ACK", 200, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
			pb_tcp_frame(dph_mbuf(&H), &syn) },
		{ "GET /healthz -> 200 + FIN", 600,
			RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG,
			pb_request(dph_mbuf(&H), isn, cookie, healthz, 50000) },
		{ "GET /api/v1/events/1 -> 200 + FIN", 0,
			RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG,
			pb_request(dph_mbuf(&H), isn, cookie, event, 50000) },
		{ "request with a bad cookie -> RST", 0, RTE_TCP_RST_FLAG,
			pb_request(dph_mbuf(&H), isn, cookie + 7, healthz, 50000) },
		{ "reserve admitted -> 202 + receipt", 1000, data_flags,
			pb_request(dph_mbuf(&H), isn, cookie, reserve, 50000), 202, setup_open },
		{ "reserve admitted, challenge solved (p2) -> 202", 0, data_flags,
			pb_request(dph_mbuf(&H), isn, cookie, pres, 50000), 202, NULL },
		{ "reserve, wrong solution -> 403", 0, data_flags,
			pb_request(dph_mbuf(&H), isn, cookie, pwrong, 50000), 403, NULL },
		{ "reserve, empty solution -> 403", 0, data_flags,
			pb_request(dph_mbuf(&H), isn, cookie, pnone, 50000), 403, NULL },
		{ "result poll (receipt) -> 200", 0, data_flags,
			pb_request(dph_mbuf(&H), isn, cookie, poll, 50000), 200, NULL },
		{ "reserve with a forged token -> 403", 800, data_flags,
			pb_request(dph_mbuf(&H), isn, cookie, bad, 50000), 403, NULL },
		{ "reserve after sell-out -> 410", 800, data_flags,
			pb_request(dph_mbuf(&H), isn, cookie, reserve, 50000), 410, setup_sold_out },
		{ "reserve over the IP limit -> 429", 800, data_flags,
			pb_request(dph_mbuf(&H), isn, cookie, reserve, 50000), 429, setup_ip_limited },
		{ "reserve over the user limit -> 429", 800, data_flags,
			pb_request(dph_mbuf(&H), isn, cookie, reserve, 50000), 429, setup_user_limited },
		{ "reserve admitted, users' buckets cold, limits on -> 202", 0, data_flags, NULL,
			202, setup_many_users, many, many_len, many_users },
		{ "reserve admitted, users' and devices' buckets cold, limits on -> 202", 0,
			data_flags, NULL, 202, setup_many_users, many_dev, many_dev_len, many_users,
			devs },
		/* Last: they give the worker a trusted edge and its table. */
		{ "kept connection: GET /healthz -> 200, kept", 0,
			RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, NULL, 200, setup_kept_healthz, kept_hz,
			kept_hz_len, NULL, NULL, kept_before },
		{ "kept connection: reserve admitted -> 202, kept", 0,
			RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, NULL, 202, setup_kept_reserve, kept_rs,
			kept_rs_len, NULL, NULL, kept_before },
	};

	tap_diag("pipeline benchmark: %u bursts of %d per case, TSC %" PRIu64 " Hz; "
		 "cycles exclude restoring the frame; median of chunks of %d bursts",
		iters, BURST, rte_get_tsc_hz(), CHUNK);
	/* FG_BENCH_ONLY=text runs only the cases whose name contains text (e.g. for perf). */
	const char *only = getenv("FG_BENCH_ONLY");

	for (size_t i = 0; i < RTE_DIM(cases); i++)
		if (only == NULL || strstr(cases[i].name, only) != NULL)
			run_case(&cases[i], iters);
	/* scripts/bench-compare reads the number before "%". */
	tap_diag("on its CPU %.1f %% of the wall time its cases were timed",
		timed_wall_ns != 0 ? 100.0 * (double)timed_cpu_ns / (double)timed_wall_ns : 0.0);
	return tap_done();
}

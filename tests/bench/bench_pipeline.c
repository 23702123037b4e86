/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark of the per-burst pipeline on one core with pre-built mbufs:
 * cycles per packet and packets per second for each path. Prints figures;
 * the TAP checks only assert that every answer was the right one, never a time.
 * FG_BENCH_QUICK=1 runs a short pass (used by scripts/test).
 */
#include <inttypes.h>
#include <stdlib.h>

#include <rte_cycles.h>

#include "tests/lib/dp_harness.h"
#include "tests/tap.h"

#define BURST 32

static struct dp_harness H;

struct bench_case {
	const char *name;
	unsigned target_cycles; /* the target on this machine; 0: none */
	uint8_t expect_flags;   /* TCP flags of the answer */
	struct rte_mbuf *tmpl;  /* the frame as received */
};

static struct rte_mbuf *
mb(void)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(H.pool);

	if (m == NULL)
		abort();
	return m;
}

/* Restores every mbuf of the burst to the template frame (the pipeline answers in place). */
static inline void
restore(struct rte_mbuf **b, const struct rte_mbuf *tmpl)
{
	const void *src = rte_pktmbuf_mtod(tmpl, const void *);
	uint16_t len = rte_pktmbuf_data_len(tmpl);

	for (int i = 0; i < BURST; i++) {
		b[i]->data_off = RTE_PKTMBUF_HEADROOM;
		b[i]->data_len = len;
		b[i]->pkt_len = len;
		b[i]->ol_flags = 0;
		rte_memcpy(rte_pktmbuf_mtod(b[i], void *), src, len);
	}
}

static void
run_case(struct bench_case *c, unsigned iters)
{
	struct rte_mbuf *b[BURST], *tx[BURST];
	uint64_t t0, t_restore = 0, t_total = 0;
	bool all_right = true;

	for (int i = 0; i < BURST; i++)
		b[i] = mb();
	/* Warm up, and check the answers once. */
	restore(b, c->tmpl);
	uint16_t n = pipeline_burst(H.w, 0, b, BURST, tx);

	all_right = n == BURST;
	for (int i = 0; i < n; i++)
		all_right &= pb_th(tx[i])->tcp_flags == c->expect_flags;
	for (unsigned it = 0; it < iters; it++) {
		t0 = rte_rdtsc_precise();
		restore(b, c->tmpl);
		t_restore += rte_rdtsc_precise() - t0;
	}
	for (unsigned it = 0; it < iters; it++) {
		t0 = rte_rdtsc_precise();
		restore(b, c->tmpl);
		n = pipeline_burst(H.w, 0, b, BURST, tx);
		t_total += rte_rdtsc_precise() - t0;
		all_right &= n == BURST;
	}
	for (int i = 0; i < BURST; i++)
		rte_pktmbuf_free(b[i]);

	double pkts = (double)iters * BURST;
	double cyc = (double)(t_total > t_restore ? t_total - t_restore : 0) / pkts;
	double mpps = (double)rte_get_tsc_hz() / cyc / 1e6;

	char target[40] = "";

	if (c->target_cycles)
		snprintf(target, sizeof(target), " (target <= %u)", c->target_cycles);
	tap_ok(all_right, "%-34s %7.1f cycles/packet %6.2f Mpps/core%s", c->name, cyc, mpps,
		target);
}

int
main(int argc, char **argv)
{
	(void)argc;
	dph_init(&H, argv[0]);
	unsigned iters = getenv("FG_BENCH_QUICK") ? 2000 : 200000;
	uint32_t isn = 123456;
	struct pb_tcp syn = { .sport = 50000, .seq = isn, .flags = RTE_TCP_SYN_FLAG, .mss = 1460,
		.linux_opts = true };
	struct rte_mbuf *sa = dph_one(&H, pb_tcp_frame(mb(), &syn));
	uint32_t cookie = rte_be_to_cpu_32(pb_th(sa)->sent_seq);

	rte_pktmbuf_free(sa);
	/* What curl sends. */
	const char *healthz = "GET /healthz HTTP/1.1\r\nHost: 198.18.0.2\r\nUser-Agent: curl/7.88.1\r\n"
			      "Accept: */*\r\n\r\n";
	const char *event = "GET /api/v1/events/1 HTTP/1.1\r\nHost: 198.18.0.2\r\n"
			    "User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n";
	struct bench_case cases[] = {
		{ "SYN -> SYN-ACK", 200, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
			pb_tcp_frame(mb(), &syn) },
		{ "GET /healthz -> 200 + FIN", 600,
			RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG,
			pb_request(mb(), isn, cookie, healthz, 50000) },
		{ "GET /api/v1/events/1 -> 200 + FIN", 0,
			RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG,
			pb_request(mb(), isn, cookie, event, 50000) },
		{ "request with a bad cookie -> RST", 0, RTE_TCP_RST_FLAG,
			pb_request(mb(), isn, cookie + 7, healthz, 50000) },
	};

	tap_diag("pipeline benchmark: %u bursts of %d per case, TSC %" PRIu64 " Hz; "
		 "cycles exclude restoring the frame",
		iters, BURST, rte_get_tsc_hz());
	for (size_t i = 0; i < RTE_DIM(cases); i++)
		run_case(&cases[i], iters);
	return tap_done();
}

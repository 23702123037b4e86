/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker loop (lcore_loop_run()) over a net_ring port whose TX ring holds only 3 frames:
 * what the TX queue refuses is held, sent before anything new is received, and nothing is
 * dropped. The loop runs on a thread of its own; the test plays the wire at both ends.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "dataplane/lcore_loop.h"
#include "tests/lib/dp_harness.h"
#include "tests/tap.h"

static struct dp_harness H;
static struct rte_ring *rx_ring, *tx_ring;

static void
bail(const char *why)
{
	printf("Bail out! %s\n", why);
	exit(1);
}

/* Waits up to 10 s for cond; a bound on waiting, not a time the test asserts. */
/* CLOCK_MONOTONIC in nanoseconds. */
static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define WAIT_FOR(cond)                                                       \
	({                                                                   \
		unsigned w_ = 0;                                             \
		while (!(cond) && w_++ < 10000)                              \
			rte_delay_us_sleep(1000);                            \
		(cond);                                                      \
	})

static void *
loop_thread(void *arg)
{
	lcore_loop_run(arg);
	return NULL;
}

/* Puts SYNs from source ports first..first+n-1 on the wire to the worker. */
static bool
send_syns(uint16_t first, unsigned n)
{
	struct rte_mbuf *m[16];

	if (n > RTE_DIM(m))
		return false;
	for (unsigned i = 0; i < n; i++) {
		struct pb_tcp t = { .sport = (uint16_t)(first + i), .seq = 1000 + i,
			.flags = RTE_TCP_SYN_FLAG, .mss = 1460 };

		m[i] = pb_tcp_frame(dph_mbuf(&H), &t);
	}
	/* All at once: a loop already running must see them in one burst, not a first few. */
	return rte_ring_enqueue_bulk(rx_ring, (void **)m, n, NULL) == n;
}

/* Takes what the worker sent; counts SYN-ACKs in order of source port into *next. */
static unsigned
take_answers(uint16_t *next, bool *in_order)
{
	struct rte_mbuf *m[8];
	unsigned n = rte_ring_dequeue_burst(tx_ring, (void **)m, RTE_DIM(m), NULL);

	for (unsigned i = 0; i < n; i++) {
		*in_order &= pb_th(m[i])->tcp_flags == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) &&
			     rte_be_to_cpu_16(pb_th(m[i])->dst_port) == *next;
		(*next)++;
	}
	rte_pktmbuf_free_bulk(m, n);
	return n;
}

int
main(int argc, char **argv)
{
	(void)argc;
	dph_init(&H, argv[0]);
	unsigned avail = rte_mempool_avail_count(H.pool);

	rx_ring = rte_ring_create("lt_rx", 64, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	/* 4 slots, 3 usable: a burst of 8 answers does not fit. */
	tx_ring = rte_ring_create("lt_tx", 4, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (rx_ring == NULL || tx_ring == NULL)
		bail("cannot create the rings");
	int port = rte_eth_from_rings("lt_port", &rx_ring, 1, &tx_ring, 1, SOCKET_ID_ANY);

	struct rte_eth_conf conf = { 0 };

	/* A port of rte_eth_from_rings() has its queues; ethdev wants them set up to start. */
	if (port < 0 || rte_eth_dev_configure((uint16_t)port, 1, 1, &conf) != 0 ||
		rte_eth_rx_queue_setup((uint16_t)port, 0, 64, SOCKET_ID_ANY, NULL, H.pool) != 0 ||
		rte_eth_tx_queue_setup((uint16_t)port, 0, 64, SOCKET_ID_ANY, NULL) != 0 ||
		rte_eth_dev_start((uint16_t)port) != 0)
		bail("cannot make a net_ring port");
	H.w->ports[port] = H.w->ports[0];
	H.w->rxq[0] = (struct worker_rxq){ .port = (uint16_t)port, .queue = 0 };
	H.w->n_rxq = 1;

	pthread_t th;
	uint64_t t_start = mono_ns();

	if (!send_syns(30000, 8) || pthread_create(&th, NULL, loop_thread, H.w) != 0)
		bail("cannot start");
	tap_ok(WAIT_FOR(__atomic_load_n(&H.w->ctr.tx_held, __ATOMIC_RELAXED) == 5),
		"8 answers, a TX queue with room for 3: 5 held (got %llu)",
		(unsigned long long)H.w->ctr.tx_held);
	/* While the queue holds them, nothing new is received. */
	send_syns(30008, 8);
	rte_delay_us_sleep(20000);
	tap_eq_int(rte_ring_count(rx_ring), 8, "nothing more is received while answers are held");
	tap_eq_int(H.w->ctr.rx_packets, 8, "  rx_packets: the first 8 only");

	uint16_t next = 30000;
	bool in_order = true;
	unsigned got = 0;

	for (unsigned i = 0; i < 10000 && got < 16; i++) {
		unsigned n = take_answers(&next, &in_order);

		got += n;
		if (n == 0)
			rte_delay_us_sleep(1000);
	}
	tap_eq_int(got, 16, "all 16 answers came out as the wire took them");
	tap_ok(in_order, "  each a SYN-ACK, in the order the SYNs came");
	tap_eq_int(H.w->ctr.drops[DP_DROP_TX_FULL], 0, "  none dropped (tx_full 0)");
	tap_ok(H.w->ctr.tx_packets == 16 && H.w->ctr.rx_packets == 16,
		"  tx_packets counts each once they went (%llu)",
		(unsigned long long)H.w->ctr.tx_packets);

	/* Stopping with answers held: they are freed and counted as tx_full. */
	uint64_t held_before = H.w->ctr.tx_held;

	send_syns(30016, 8);
	tap_ok(WAIT_FOR(__atomic_load_n(&H.w->ctr.rx_packets, __ATOMIC_RELAXED) == 24 &&
			   rte_ring_count(tx_ring) == 3),
		"8 more: 3 sent, the rest held");
	/* The worker's own time, beside the TSC: brought up to date while it runs (once a
	 * millisecond), and at stop. */
	tap_ok(WAIT_FOR(__atomic_load_n(&H.w->ctr.wall_ns, __ATOMIC_RELAXED) > 0 &&
			   __atomic_load_n(&H.w->ctr.cpu_ns, __ATOMIC_RELAXED) > 0),
		"the worker's cpu_ns and wall_ns grow while it runs");
	__atomic_store_n(&H.stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);

	uint64_t t_loop = mono_ns() - t_start, cpu = H.w->ctr.cpu_ns, wall = H.w->ctr.wall_ns;

	/* Its loop ran for nearly all the time the thread lived (at least the 20 ms slept above),
	 * and a thread cannot run longer than its wall time (1 ms: the two clocks are read one
	 * after the other). */
	tap_ok(wall >= 20000000 && wall <= t_loop && cpu > 0 && cpu <= wall + 1000000,
		"at stop: wall_ns %llu (the thread lived %llu), cpu_ns %llu <= wall_ns",
		(unsigned long long)wall, (unsigned long long)t_loop, (unsigned long long)cpu);
	tap_eq_int(H.w->ctr.drops[DP_DROP_TX_FULL], 5, "at stop the 5 held are dropped, counted");
	tap_eq_int(H.w->ctr.tx_held - held_before, 5,
		"  tx_held counted each of them once, however often the queue refused it");
	got = 0;
	next = 30016;
	while (take_answers(&next, &in_order) != 0)
		;
	tap_eq_int(rte_mempool_avail_count(H.pool), avail, "no mbuf is leaked");
	rte_eth_dev_stop((uint16_t)port);
	return tap_done();
}

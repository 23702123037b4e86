/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flashgate-loadgen: many HTTP clients at packet level on one DPDK port, to load and check a
 * flashgate data plane (docs/loadgen.md). Usage:
 *   flashgate-loadgen [EAL options] -- --mode healthz|syn-flood|sale|reserve|result|kept-healthz|
 *                                            kept-reserve|healthz-blast|reserve-blast [options]
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "tools/loadgen/lg_cli.h"
#include "tools/loadgen/lg_client.h"
#include "tools/loadgen/lg_http.h"
#include "tools/loadgen/lg_report.h"

#define PROG	    "flashgate-loadgen"
#define NB_MBUFS    16383
#define NB_DESC	    1024
#define LINK_WAIT_S 10

static volatile bool stop_requested;

static void
on_signal(int sig __rte_unused)
{
	stop_requested = true;
}

#define START_TRIES   30  /* a port's start, tried this many times ... */
#define START_WAIT_MS 100 /* ... this far apart */

static int
port_setup(uint16_t port, struct rte_mempool *pool, struct rte_ether_addr *mac)
{
	struct rte_eth_conf conf = {0};
	uint16_t rxd = NB_DESC, txd = NB_DESC;
	int rc;

	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(
			port, 0, rxd, (unsigned)rte_eth_dev_socket_id(port) & 0xff, NULL, pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(
			port, 0, txd, (unsigned)rte_eth_dev_socket_id(port) & 0xff, NULL);
	/* A memif client's start connects to the server's socket, which a data plane that is
	 * still starting (or a loaded machine) may not accept yet: try again for up to 3 s. */
	for (unsigned tries = 0; rc == 0; tries++) {
		int start = rte_eth_dev_start(port);

		if (start == 0 || tries == START_TRIES - 1) {
			rc = start;
			break;
		}
		if (tries == 0)
			fprintf(stderr,
				PROG ": port %u did not start (%s); trying again for %u ms\n", port,
				rte_strerror(-start), START_TRIES * START_WAIT_MS);
		rte_delay_us_sleep(START_WAIT_MS * 1000u);
	}
	if (rc == 0)
		rc = rte_eth_macaddr_get(port, mac);
	if (rc != 0)
		fprintf(stderr, PROG ": port %u set-up failed: %s\n", port, rte_strerror(-rc));
	return rc;
}

/* Whether the run is a success for the exit status (see lg_cli_usage()). */
static bool
run_ok(const struct lg_opts *o, const struct lg_client *cl, bool timed_out)
{
	const struct lg_stats *s = &cl->st;

	if (s->malformed_tcp || s->malformed_http || s->unexpected_status)
		return false;
	for (unsigned k = 0; k < LG_FLOOD_N; k++)
		if (s->flood[k].malformed || s->flood[k].unexpected)
			return false;
	if (o->mode == LG_MODE_SYN_FLOOD)
		return s->syn_sent == o->count;
	/* A blast loses what a full ring drops (counted, not an error); a reset is one. */
	if (lg_mode_blast(o->mode))
		return s->blast_sent == o->count && s->conns_rst == 0;
	if (timed_out || !lg_client_honest_done(cl) || s->conns_rst || s->conns_timeout)
		return false;
	/* A kept client whose connection was answered with Connection: close goes on with a
	 * new one: it completes more connections than were asked, but as many answers. */
	if (lg_mode_kept(o->mode))
		return s->responses == o->count * o->per_conn;
	if (lg_mode_single(o->mode))
		return s->conns_completed == o->count;
	return s->users_done == o->count && s->outcome[LG_OUT_CONN_FAILED] == 0;
}

/*
 * With --linger-s: keeps the port open, without polling it, until the peer's link goes down, a
 * signal, or the bound. DPDK 22.11's memif PMD unmaps the shared regions on a disconnect with no
 * barrier against a peer inside rx_burst, so the side that disconnects first can crash a side
 * still polling; a script stops the data plane (which stops polling before it closes its port)
 * while the loadgen lingers here, polling nothing.
 */
static void
linger(const struct lg_opts *o, uint16_t port)
{
	struct rte_eth_link link;
	uint64_t hz = rte_get_tsc_hz();
	uint64_t end = rte_get_tsc_cycles() + (uint64_t)(o->linger_s * (double)hz);

	if (o->linger_s <= 0)
		return;
	printf("lingering: until the peer's link goes down (at most %.0f s)\n", o->linger_s);
	fflush(stdout);
	while (!stop_requested && rte_get_tsc_cycles() < end) {
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
			link.link_status == RTE_ETH_LINK_DOWN) {
			/* memif marks the link down as the first step of its disconnect, on EAL's
			 * interrupt thread, then closes the channel and unmaps the regions; the port's
			 * stop runs that disconnect again, so a stop while the first one is still under
			 * way crashed the loadgen (once in CI: exit 139 after a complete run). The
			 * disconnect takes microseconds; half a second covers a loaded host. */
			rte_delay_us_sleep(500000);
			break;
		}
		rte_delay_us_sleep(20000);
	}
}

/*
 * EAL, the command line, the port and the client. Returns -1 when the run may begin (o, cl and
 * *port set), else the exit status: 0 after --help, 2 after saying what was wrong.
 */
static int
start(int argc, char **argv, struct lg_opts *o, struct lg_client *cl, uint16_t *port)
{
	struct rte_mempool *pool;
	struct rte_ether_addr mac;
	char err[512];
	int rc = rte_eal_init(argc, argv);

	if (rc < 0) {
		fprintf(stderr,
			PROG ": EAL initialisation failed: %s (check the EAL options "
			     "before --)\n",
			rte_strerror(rte_errno));
		return 2;
	}
	argc -= rc;
	argv += rc;
	argv[0] = (char *)PROG;
	rc = lg_cli_parse(argc, argv, o, err, sizeof(err));
	if (rc > 0)
		lg_cli_usage(stdout);
	else if (rc < 0 && err[0] != '\0')
		fprintf(stderr, PROG ": %s\n", err);
	else if (rc < 0)
		lg_cli_usage(stderr); /* after getopt_long()'s own message */
	if (rc != 0)
		goto fail;
	rc = -1;
	if (rte_eth_dev_count_avail() == 0) {
		fprintf(stderr, PROG ": no DPDK port; give one with -a PCI or --vdev "
				     "net_memif0,role=client,socket=PATH\n");
		goto fail;
	}
	RTE_ETH_FOREACH_DEV(*port)
	break;
	pool = rte_pktmbuf_pool_create(
		"lg_pool", NB_MBUFS, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (pool == NULL) {
		fprintf(stderr, PROG ": no memory for %u mbufs: %s (give EAL more with -m)\n",
			NB_MBUFS, rte_strerror(rte_errno));
		goto fail;
	}
	if (port_setup(*port, pool, &mac) != 0 || lg_client_init(cl, o, *port, pool, &mac) != 0)
		goto fail;
	return -1;
fail:
	rte_eal_cleanup();
	return rc > 0 ? 0 : 2;
}

/* Polls the port for what comes in and sends what the client has to send. */
static uint16_t
poll_port(struct lg_client *cl, uint16_t port, uint64_t now)
{
	struct rte_mbuf *rx[LG_BURST];
	uint16_t n = rte_eth_rx_burst(port, 0, rx, LG_BURST);

	lg_client_rx(cl, rx, n, now);
	lg_client_flush(cl);
	return n;
}

/*
 * The link (a memif peer may connect a little later) and the data plane's MAC, by ARP, until
 * deadline or LINK_WAIT_S. Returns the time it is known at, or 0 when it is not (said).
 */
static uint64_t
find_peer(struct lg_client *cl, uint16_t port, uint64_t deadline)
{
	uint64_t hz = rte_get_tsc_hz(), now = rte_get_tsc_cycles();
	uint64_t next_probe = now, link_deadline = now + LINK_WAIT_S * hz;
	struct rte_eth_link link;

	while (!stop_requested && !cl->have_peer_mac && now < deadline && now < link_deadline) {
		if (now >= next_probe && rte_eth_link_get_nowait(port, &link) == 0 &&
			link.link_status == RTE_ETH_LINK_UP) {
			lg_client_arp_probe(cl, now);
			next_probe = now + hz / 5;
		}
		if (poll_port(cl, port, now) == 0)
			rte_delay_us_sleep(1000);
		now = rte_get_tsc_cycles();
	}
	if (cl->have_peer_mac)
		return now;
	fprintf(stderr,
		PROG ": no ARP answer for the --dst address from port %u (link %s); "
		     "is the data plane running with that address on this link?\n",
		port,
		rte_eth_link_get_nowait(port, &link) == 0 && link.link_status ? "up" : "down");
	return 0;
}

/* Seconds from now to Unix time t. */
static double
until_unix(double t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return t - ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/*
 * With --start-at: waits, answering ARP, for the first arrivals (a pre-queue's --arrive-before
 * seconds ahead), within the deadline, then sets the sale's start. Returns the time after it.
 */
static uint64_t
wait_start(struct lg_client *cl, const struct lg_opts *o, uint16_t port, uint64_t now,
	uint64_t deadline)
{
	uint64_t hz = rte_get_tsc_hz();
	double lead = 0; /* seconds from the run's first loop to --start-at */

	if (o->start_at > 0) {
		double wait = until_unix(o->start_at - o->arrive_before);
		uint64_t start = wait > 0 ? now + (uint64_t)(wait * (double)hz) : 0;

		while (!stop_requested && now < start && now < deadline) {
			poll_port(cl, port, now);
			rte_delay_us_sleep(500);
			now = rte_get_tsc_cycles();
		}
		lead = until_unix(o->start_at);
	}
	lg_client_set_start(cl,
		lead >= 0 ? now + (uint64_t)(lead * (double)hz)
			  : now - (uint64_t)(-lead * (double)hz < (double)now ? -lead * (double)hz
									      : (double)now));
	return now;
}

/* The run: until every client has ended, the deadline, or a signal. Returns when it ended. */
static uint64_t
run(struct lg_client *cl, uint16_t port, uint64_t now, uint64_t deadline)
{
	struct rte_mbuf *rx[LG_BURST];

	cl->t_credit = now;
	cl->t_flood_credit = now;
	while (!stop_requested && now < deadline && !lg_client_done(cl)) {
		uint16_t n = rte_eth_rx_burst(port, 0, rx, LG_BURST);

		lg_client_rx(cl, rx, n, now);
		lg_client_launch(cl, now);
		lg_client_timers(cl, now);
		lg_client_solve(cl, now);
		lg_client_flush(cl);
		now = rte_get_tsc_cycles();
	}
	return now;
}

/* A syn-flood (or a syn or bad-ack flood) ends when its segments are out; the last answers
 * are still on the way: 100 ms more of them. Returns the time after. */
static uint64_t
drain(struct lg_client *cl, const struct lg_opts *o, uint16_t port, uint64_t now)
{
	uint64_t end = now + rte_get_tsc_hz() / 10;

	if (o->mode != LG_MODE_SYN_FLOOD && !lg_mode_blast(o->mode) &&
		!lg_opts_flood(o, LG_FLOOD_SYN) && !lg_opts_flood(o, LG_FLOOD_BAD_ACK))
		return now;
	while (!stop_requested && now < end) {
		poll_port(cl, port, now);
		now = rte_get_tsc_cycles();
	}
	return now;
}

/* The report, as text and as JSON; the end of the client. Returns the exit status. */
static int
report(struct lg_client *cl, const struct lg_opts *o, uint64_t cycles, bool timed_out)
{
	struct lg_report rep;
	int ret;

	lg_report_fill(&rep, o, cl, lg_cli_mode_name(o->mode), cycles, timed_out);
	lg_report_text(stdout, &rep);
	ret = run_ok(o, cl, timed_out) ? 0 : 1;
	if (o->report_json != NULL && lg_report_json_write(&rep, o->report_json) != 0)
		ret = 1;
	if (lg_client_fini(cl) != 0) {
		fprintf(stderr, PROG ": writing %s failed\n", o->pcap_path);
		ret = 1;
	}
	return ret;
}

int
main(int argc, char **argv)
{
	struct lg_opts o;
	struct lg_client cl;
	uint16_t port = 0;
	int ret = start(argc, argv, &o, &cl, &port);

	if (ret >= 0)
		return ret;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	uint64_t now = rte_get_tsc_cycles();
	uint64_t deadline = now + (uint64_t)(o.duration_s * (double)rte_get_tsc_hz());

	/* Scripts that start the peer after the loadgen (a memif client, which connects at its
	 * start and is refused by a server whose port has not started) wait for this line. */
	printf("waiting: port %u started, for its link and an ARP answer from the --dst address "
	       "(at most %u s)\n",
		port, LINK_WAIT_S);
	fflush(stdout);
	now = find_peer(&cl, port, deadline);
	if (now == 0) {
		lg_client_fini(&cl);
		linger(&o, port);
		rte_eth_dev_stop(port);
		rte_eal_cleanup();
		return stop_requested ? 1 : 2;
	}
	now = wait_start(&cl, &o, port, now, deadline);

	uint64_t t_run = now, t_end = run(&cl, port, now, deadline);
	bool timed_out = !lg_client_honest_done(&cl) && !stop_requested;

	now = drain(&cl, &o, port, t_end);
	/* --mode syn-flood's rate counts the SYN-ACKs' drain in, as it always did. */
	ret = report(&cl, &o,
		(o.mode == LG_MODE_SYN_FLOOD || lg_mode_blast(o.mode) ? now : t_end) - t_run,
		timed_out);
	tok_keyring_wipe(&o.auth);
	tok_keyring_wipe(&o.sale);
	fflush(stdout);
	linger(&o, port);
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
	rte_eal_cleanup();
	return ret;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loadgen's client (lg_client.h), the top of its parts (lg_parts.h): its set-up and
 * end, the challenge solver, and what main.c's run loop calls, each passed down to the part
 * whose job it is (lg_rx.c, lg_launch.c, lg_connect.c; the TX buffer is lg_state.c's).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_random.h>

#include "common/now.h"
#include "tools/loadgen/lg_client.h"
#include "tools/loadgen/lg_parts.h"
#include "tools/loadgen/lg_sched.h"

void
lg_client_rx(struct lg_client *cl, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	lg_rx_frames(cl, pkts, n, now);
}

void
lg_client_launch(struct lg_client *cl, uint64_t now)
{
	lg_launch_due(cl, now);
}

void
lg_client_timers(struct lg_client *cl, uint64_t now)
{
	lg_connect_timers(cl, now);
}

void
lg_client_flush(struct lg_client *cl)
{
	lg_state_flush(cl);
}

void
lg_client_arp_probe(struct lg_client *cl, uint64_t now)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(cl->pool);

	if (m == NULL || lg_pkt_arp(m, &cl->link, RTE_ARP_OP_REQUEST, cl->o->src_base, NULL,
				 cl->o->dst_ip)) {
		rte_pktmbuf_free(m);
		return;
	}
	lg_state_emit(cl, m, now);
	lg_state_flush(cl);
}

void
lg_client_set_start(struct lg_client *cl, uint64_t start)
{
	cl->t_start = start;
	cl->n_pre =
		cl->o->arrive_before > 0 ? lg_sched_pre_count(cl->o->count, cl->o->burst_pct) : 0;
}

/* The next user in line for a solution who still waits for one, taken off the line; false if none.
 */
static bool
solve_next(struct lg_client *cl)
{
	while (cl->solve_n != 0) {
		struct lg_solve_wait w = cl->solve_q[cl->solve_head];
		const struct lg_conn *c = &cl->tab->c[w.slot];

		if (++cl->solve_head == cl->solve_cap)
			cl->solve_head = 0;
		cl->solve_n--;
		if (c->state != LG_CS_FREE && c->user == w.user && c->pow == LG_POW_WAITING) {
			struct lg_pow_challenge ch;

			/* The token's claim, which take_challenge() found equal to the answer's. */
			if (!lg_pow_of_token(c->token, strlen(c->token), &ch))
				continue;
			cl->solving_for = w;
			cl->solving_cycles = 0;
			lg_pow_start(&cl->solver, &ch);
			return true;
		}
	}
	return false;
}

void
lg_client_solve(struct lg_client *cl, uint64_t now)
{
	const struct lg_opts *o = cl->o;

	if (!cl->solving && !(cl->solving = solve_next(cl)))
		return;
	struct lg_conn *c = &cl->tab->c[cl->solving_for.slot];

	if (c->state == LG_CS_FREE || c->user != cl->solving_for.user || c->pow != LG_POW_WAITING) {
		cl->solving = false; /* the user ended meanwhile (a failed connection) */
		return;
	}
	uint64_t before = cl->solver.tries, left = o->pow_max_tries - before;
	uint64_t t0 = rte_get_tsc_cycles();
	bool found;

	if (o->pow_tries_per_loop == 0) {
		/* Whole, with pow_solve() (the run loop waits for it): the solver's own speed. */
		found = pow_solve(cl->solver.ch.prefix, cl->solver.ch.plen, cl->solver.ch.bits,
				left, cl->solver.nonce, &cl->solver.tries) == 0;
		cl->solver.nlen = (uint8_t)strlen(cl->solver.nonce);
		cl->solver.tries += before;
	} else {
		found = lg_pow_step(
			&cl->solver, left < o->pow_tries_per_loop ? left : o->pow_tries_per_loop);
	}
	uint64_t t1 = rte_get_tsc_cycles();

	cl->solving_cycles += t1 - t0;
	cl->st.pow_tries += cl->solver.tries - before;
	cl->st.pow_cycles += t1 - t0;
	if (!found && cl->solver.tries < o->pow_max_tries)
		return;
	cl->solving = false;
	if (!found) {
		cl->st.pow_unsolved++;
		c->pow = LG_POW_FAILED;
		if (c->state == LG_CS_IDLE)
			lg_connect_end(cl, c, LG_OUT_GAVE_UP);
		return;
	}
	memcpy(c->sol, cl->solver.nonce, (size_t)cl->solver.nlen + 1);
	c->pow = LG_POW_SOLVED;
	cl->st.pow_solved++;
	lg_hist_add(&cl->st.pow_cpu, cl->solving_cycles);
	lg_hist_add(&cl->st.pow_wait, t1 - c->t_chal);
	/* Its reserve goes when its think time is over too (lg_connect_closed() when its token's
	 * connection is still closing). */
	if (c->state == LG_CS_IDLE)
		lg_connect_idle_until(cl, c, c->t_next > now ? c->t_next : t1, t1);
}

bool
lg_client_honest_done(const struct lg_client *cl)
{
	return lg_state_honest_done(cl);
}

bool
lg_client_done(const struct lg_client *cl)
{
	return lg_client_honest_done(cl) && (cl->ftab == NULL || cl->ftab->active == 0);
}

/*
 * The floods' fixed texts: a session token, a purchase token and a reserve path of the right
 * form made under a random key (so their MACs are wrong), and the bad-ack flood's request; the
 * flood connection table. Returns 0, -EINVAL when a text does not fit, or -ENOMEM.
 */
static int
flood_init(struct lg_client *cl)
{
	const struct lg_opts *o = cl->o;
	struct tok_keyring forge;
	uint8_t secret[32];
	char seg[TOK_BUF_SIZE];
	uint64_t exp = (uint64_t)time(NULL) + 3600;
	int rc = 0, n;

	for (size_t i = 0; i < sizeof(secret); i += 8) {
		uint64_t r = rte_rand();

		memcpy(secret + i, &r, 8);
	}
	tok_keyring_init(&forge);
	if (tok_keyring_set(&forge, o->kid, secret, sizeof(secret), true) != 0 ||
		tok_session_mint(&forge, LG_FLOOD_USER_BASE, exp, cl->forged_session,
			sizeof(cl->forged_session)) < 0 ||
		tok_purchase_mint(&forge, o->event, LG_FLOOD_USER_BASE, exp, cl->forged_purchase,
			sizeof(cl->forged_purchase)) < 0 ||
		tok_path_mint(&forge, o->event, seg, sizeof(seg)) < 0)
		rc = -EINVAL;
	tok_keyring_wipe(&forge);
	if (rc != 0)
		return rc;
	n = snprintf(cl->reserve_path, sizeof(cl->reserve_path),
		"/api/v1/events/%" PRIu32 "/reserve/%s", o->event, seg);
	if (n < 0 || (size_t)n >= sizeof(cl->reserve_path))
		return -EINVAL;

	struct lg_flood_req x = {
		.event = o->event,
		.host = o->host,
		.forged_session = cl->forged_session,
	};

	n = lg_flood_request(
		cl->bad_ack_req, sizeof(cl->bad_ack_req), LG_STEP_FLOOD_SESSION_FORGED, &x);
	if (n < 0)
		return -EINVAL;
	cl->bad_ack_len = (uint16_t)n;
	cl->one_ip_user = LG_FLOOD_USER_BASE + 1;
	for (unsigned k = 0; k < LG_FLOOD_N; k++)
		cl->flood_credit[k] =
			1; /* each flood's first segment goes with the first clients */
	if (lg_opts_flood(o, LG_FLOOD_UNSIGNED) || lg_opts_flood(o, LG_FLOOD_ONE_IP)) {
		cl->ftab = lg_table_create(o->flood_concurrency, LG_PORT_BASE);
		if (cl->ftab == NULL)
			return -ENOMEM;
	}
	cl->stateless_port_lo = (uint16_t)(LG_PORT_BASE + (cl->ftab ? cl->ftab->n : 0));
	return 0;
}

/*
 * The blasts: their request, of one length for the whole run, and the data plane's cookies.
 * Returns 0, or -EINVAL after saying what was wrong.
 */
static int
blast_init(struct lg_client *cl)
{
	const struct lg_opts *o = cl->o;
	const char *why = NULL;
	int n;

	cl->blast_exp = (uint64_t)time(NULL) + 3600;
	/* Each cause its own message: the key, the request's size, the cookies. */
	if (o->mode == LG_MODE_RESERVE_BLAST)
		n = lg_request_reserve(
			cl->blast_req, sizeof(cl->blast_req), o, o->user_base, cl->blast_exp);
	else
		n = lg_request_healthz(cl->blast_req, sizeof(cl->blast_req), o->host);
	if (n == -ENOKEY)
		why = "cannot mint the purchase tokens (is --sale-key-hex set?)";
	else if (n < 0 || (size_t)n >= sizeof(cl->blast_req))
		why = "the blast's request does not fit one frame (--host too long?)";
	if (why == NULL && syncookie_init(&cl->cookies, o->cookie_secret, o->cookie_slot_s,
				   now_wall_ms() / 1000) != 0)
		why = "cannot compute the data plane's cookies (--cookie-secret-hex, "
		      "--cookie-slot-s)";
	if (why != NULL) {
		fprintf(stderr, "loadgen: %s\n", why);
		return -EINVAL;
	}
	cl->blast_req_len = (uint16_t)n;
	return 0;
}

/* The clients' connection table and the solver's line. Returns 0, or -ENOMEM (said). */
static int
tables_init(struct lg_client *cl)
{
	const struct lg_opts *o = cl->o;

	cl->tab = lg_table_create(o->concurrency, LG_PORT_BASE);
	cl->solve_cap = o->concurrency * LG_WAKE_PER_SLOT;
	cl->solve_q = calloc(cl->solve_cap, sizeof(*cl->solve_q));
	if (cl->tab == NULL || cl->solve_q == NULL) {
		fprintf(stderr, "loadgen: no memory for %u connection slots; lower --concurrency\n",
			o->concurrency);
		return -ENOMEM;
	}
	return 0;
}

int
lg_client_init(struct lg_client *cl, const struct lg_opts *o, uint16_t port_id,
	struct rte_mempool *pool, const struct rte_ether_addr *mac)
{
	int rc = 0;

	memset(cl, 0, sizeof(*cl));
	cl->take_answers = lg_rx_blast_take_answers;
	cl->o = o;
	cl->port_id = port_id;
	cl->pool = pool;
	rte_ether_addr_copy(mac, &cl->link.our_mac);
	cl->hz = rte_get_tsc_hz();
	cl->rto = cl->hz / 1000 * o->rto_ms;
	cl->poll = cl->hz / 1000 * o->poll_ms;
	cl->t_credit = rte_get_tsc_cycles();
	cl->flood_salt = rte_rand();
	cl->ack_salt = rte_rand();
	cl->t_flood_credit = cl->t_credit;
	lg_client_set_start(cl, cl->t_credit);
	for (unsigned k = 0; k < LG_FLOOD_N; k++)
		cl->any_flood |= lg_opts_flood(o, (enum lg_flood_kind)k);
	if (cl->any_flood && (rc = flood_init(cl)) != 0) {
		fprintf(stderr,
			rc == -ENOMEM ? "loadgen: no memory for %u flood connection slots; "
					"lower --flood-concurrency\n"
				      : "loadgen: the floods' requests do not fit (--host "
					"too long?)\n",
			o->flood_concurrency);
		goto fail;
	}
	if (lg_mode_blast(o->mode))
		rc = blast_init(cl);
	else if (o->mode != LG_MODE_SYN_FLOOD)
		rc = tables_init(cl);
	if (rc != 0)
		goto fail;
	if (o->pcap_path != NULL) {
		rc = lg_pcap_open(
			&cl->pcap, o->pcap_path, o->pcap_max, rte_get_tsc_cycles(), cl->hz);
		if (rc < 0) {
			fprintf(stderr, "loadgen: cannot create %s: %s\n", o->pcap_path,
				strerror(-rc));
			goto fail;
		}
		cl->capturing = true;
	}
	return 0;
fail:
	lg_client_fini(cl); /* nothing sent yet, nothing captured */
	return rc;
}

int
lg_client_fini(struct lg_client *cl)
{
	int rc = 0;

	if (cl->n_tx)
		lg_state_flush(cl);
	if (cl->capturing)
		rc = lg_pcap_close(&cl->pcap);
	cl->capturing = false;
	lg_table_free(cl->tab);
	cl->tab = NULL;
	lg_table_free(cl->ftab);
	cl->ftab = NULL;
	free(cl->solve_q);
	cl->solve_q = NULL;
	return rc;
}

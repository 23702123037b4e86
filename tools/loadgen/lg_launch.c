/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loadgen client's launches (lg_parts.h): clients and floods begun at their rates,
 * within their concurrency.
 */
#include <stdint.h>

#include <rte_random.h>

#include "common/now.h"
#include "tools/loadgen/lg_parts.h"
#include "tools/loadgen/lg_sched.h"

/* --mode syn-flood: one SYN from a random --src-net address and port. */
static void
launch_syn_flood_mode(struct lg_client *cl, uint64_t now)
{
	const struct lg_opts *o = cl->o;
	uint64_t r = rte_rand();
	struct lg_seg s = {
		.src_ip = o->src_base + (uint32_t)(r % o->n_src),
		.dst_ip = o->dst_ip,
		/* Any port above the well-known ones, as a flood tool picks them. */
		.sport = (uint16_t)(1024 + (r >> 32) % 64512),
		.dport = o->dport,
		.flags = RTE_TCP_SYN_FLAG,
		.mss_opt = true,
	};

	s.seq = lg_flood_syn_isn(cl->flood_salt, s.src_ip, s.sport);
	cl->st.syn_sent++;
	lg_state_send_seg(cl, &s, now);
}

/*
 * The blasts: one whole connection sent at once, as a client that knows the data plane's
 * cookie secret: the SYN, the request acking the SYN-ACK's cookie (computed here as the data
 * plane's workers compute it), and our FIN. The request is GET /healthz (healthz-blast) or a
 * reserve of user --user-base + i with its purchase token (reserve-blast). The data plane keeps
 * no state, so it answers each as it would a client that waited for the SYN-ACK; nothing waits
 * here, so one core can offer more connections than the handshaking modes.
 */
static void
launch_blast_mode(struct lg_client *cl, uint64_t now)
{
	const struct lg_opts *o = cl->o;
	uint64_t i = cl->launched;

	/* The same length for every request: the set-up (lg_client.c) and the option checks see
	 * to it (users of as many digits, one expiry); one that differed would be answered
	 * unchecked. */
	if (o->mode == LG_MODE_RESERVE_BLAST &&
		unlikely(lg_request_reserve(cl->blast_req, sizeof(cl->blast_req), o,
				 o->user_base + i, cl->blast_exp) != cl->blast_req_len)) {
		cl->st.unexpected_status++;
		return;
	}
	struct lg_seg s = {
		.src_ip = o->src_base + (uint32_t)(i % o->n_src),
		.dst_ip = o->dst_ip,
		.sport = (uint16_t)(LG_PORT_BASE + (i / o->n_src) % (65536 - LG_PORT_BASE)),
		.dport = o->dport,
		.flags = RTE_TCP_SYN_FLAG,
		.mss_opt = true,
	};
	uint32_t isn = lg_flood_syn_isn(cl->flood_salt, s.src_ip, s.sport);
	uint32_t cookie = syncookie_make(&cl->cookies, rte_cpu_to_be_32(s.src_ip),
		rte_cpu_to_be_32(s.dst_ip), rte_cpu_to_be_16(s.sport), rte_cpu_to_be_16(s.dport),
		isn, syncookie_mss_index(LG_MSS));

	s.seq = isn;
	lg_state_send_seg(cl, &s, now);
	s.seq = isn + 1;
	s.ack = cookie + 1;
	s.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
	s.mss_opt = false;
	s.payload = cl->blast_req;
	s.payload_len = cl->blast_req_len;
	lg_state_send_seg(cl, &s, now);
	s.seq = isn + 1 + cl->blast_req_len;
	s.flags = RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG;
	s.payload = NULL;
	s.payload_len = 0;
	lg_state_send_seg(cl, &s, now);
	cl->st.blast_sent++;
	cl->st.requests++;
}

/* A flood address other than the one-ip flood's. */
static inline uint32_t
flood_addr(const struct lg_client *cl)
{
	return cl->o->flood_base + 1 + (uint32_t)rte_rand_max(cl->o->n_flood - 1);
}

/* One SYN, or one bad-cookie ACK with its request, from a random flood address and port. */
static void
launch_stateless(struct lg_client *cl, enum lg_flood_kind k, uint64_t now)
{
	const struct lg_opts *o = cl->o;
	struct lg_seg s = {
		.src_ip = flood_addr(cl),
		.dst_ip = o->dst_ip,
		.sport = (uint16_t)(cl->stateless_port_lo +
				    rte_rand_max(65536u - cl->stateless_port_lo)),
		.dport = o->dport,
	};

	if (k == LG_FLOOD_SYN) {
		s.flags = RTE_TCP_SYN_FLAG;
		s.mss_opt = true;
		s.seq = lg_flood_syn_isn(cl->flood_salt, s.src_ip, s.sport);
	} else {
		s.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
		lg_flood_bad_ack_nums(cl->ack_salt, s.src_ip, s.sport, &s.seq, &s.ack);
		s.payload = cl->bad_ack_req;
		s.payload_len = cl->bad_ack_len;
	}
	cl->st.flood[k].sent++;
	lg_state_send_seg(cl, &s, now);
}

/* Opens one unsigned or one-ip flood connection. Returns 0, or -1 when every slot is busy. */
static int
launch_flood_conn(struct lg_client *cl, enum lg_flood_kind k, uint64_t now)
{
	struct lg_conn *c = lg_table_take(cl->ftab);

	if (c == NULL)
		return -1;
	if (k == LG_FLOOD_ONE_IP) {
		c->cip = cl->o->flood_base;
		c->step = LG_STEP_FLOOD_ONE_IP;
		c->user = cl->one_ip_user++;
	} else {
		c->cip = flood_addr(cl);
		c->step = (uint8_t)(LG_STEP_FLOOD_FIRST +
				    cl->st.flood[k].conns % LG_UNSIGNED_VARIANTS);
		c->user = LG_FLOOD_USER_BASE;
	}
	c->attempts = 0;
	c->polls = 0;
	c->checking = 0;
	lg_connect_open(cl, c, now);
	return 0;
}

/* Begins flood segments and connections, each kind at its rate (at most a burst a call), until
 * --flood-max of them were begun. */
static void
launch_floods(struct lg_client *cl, uint64_t now)
{
	const struct lg_opts *o = cl->o;
	double dt = (double)(now - cl->t_flood_credit) / (double)cl->hz;

	cl->t_flood_credit = now;
	for (unsigned k = 0; k < LG_FLOOD_N; k++) {
		double rate = o->flood_rate[k];
		double cap = rate / 1000.0 < 1 ? 1 : rate / 1000.0; /* 1 ms, as --rate */

		if (rate <= 0)
			continue;
		cl->flood_credit[k] += dt * rate;
		if (cl->flood_credit[k] > cap)
			cl->flood_credit[k] = cap;
		for (unsigned n = 0; n < LG_BURST && cl->flood_credit[k] >= 1; n++) {
			if (o->flood_max > 0 && cl->flood_begun >= o->flood_max)
				return;
			if (k == LG_FLOOD_SYN || k == LG_FLOOD_BAD_ACK)
				launch_stateless(cl, (enum lg_flood_kind)k, now);
			else if (launch_flood_conn(cl, (enum lg_flood_kind)k, now) != 0)
				break;
			cl->flood_credit[k] -= 1;
			cl->flood_begun++;
		}
	}
}

/* The TSC at which the k-th sale user arrives (lg_sched_arrival_s(): at the start but for a
 * pre-queue's). */
static uint64_t
arrival_tsc(const struct lg_client *cl, uint64_t k)
{
	const struct lg_opts *o = cl->o;
	double s = lg_sched_arrival_s(
		k, cl->n_pre, o->arrive_before, lg_sched_unit(o->user_base + k, ~o->seed));
	double d = s * (double)cl->hz;

	return d >= 0 ? cl->t_start + (uint64_t)d
		      : cl->t_start -
				(uint64_t)(-d < (double)cl->t_start ? -d : (double)cl->t_start);
}

/*
 * Sale user c (the launched-th) arrives now: counted in its population (and, with a pre-queue,
 * in the arrivals before or at the start); its first request, the token, goes after its think
 * time.
 */
static void
sale_arrive(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	const struct lg_opts *o = cl->o;
	uint64_t k = cl->launched;
	double at = ((double)now - (double)cl->t_start) / (double)cl->hz;

	c->bot = lg_sched_is_bot(k, o->count, o->bots);
	cl->st.users_started++;
	cl->st.pop_users[c->bot ? LG_POP_BOTS : LG_POP_PEOPLE]++;
	if (o->arrive_before > 0 && k < cl->n_pre) {
		if (cl->st.arrived_pre++ == 0)
			cl->arr_first_pre = at;
		cl->arr_last_pre = at;
	} else if (o->arrive_before > 0) {
		if (cl->st.arrived_burst++ == 0)
			cl->arr_first_burst = at;
	}
	c->state = LG_CS_IDLE;
	lg_connect_idle_until(cl, c, now + lg_state_think_cycles(cl, c), now);
}

/* Slot c for the launched-th honest client: its user, address, first step, and a clean slate. */
static void
honest_slot(struct lg_client *cl, struct lg_conn *c)
{
	const struct lg_opts *o = cl->o;

	/* A user keeps its address across its connections, as a browser does. A kept
	 * client's requests are --per-conn users in a row (kept-reserve). */
	c->left = lg_mode_kept(o->mode) ? o->per_conn : 1;
	c->user = o->mode == LG_MODE_HEALTHZ || o->mode == LG_MODE_KEPT_HEALTHZ ? cl->launched
		  : o->mode == LG_MODE_KEPT_RESERVE ? o->user_base + cl->launched * o->per_conn
						    : o->user_base + cl->launched;
	c->cip = o->src_base + (uint32_t)(cl->launched % o->n_src);
	c->step = o->mode == LG_MODE_SALE ? LG_STEP_TOKEN : LG_STEP_HEALTHZ;
	c->attempts = 0;
	c->polls = 0;
	c->checking = 0;
	c->clicks = 0;
	c->bot = 0;
	c->plain_poll = 0;
	c->pow = LG_POW_NONE;
	c->last_pos = LG_POS_NONE;
}

static void
launch_honest(struct lg_client *cl, uint64_t now)
{
	const struct lg_opts *o = cl->o;

	if (o->rate > 0) {
		/* Token bucket refilled from the TSC, holding at most 1 ms of launches (at least
		 * one), so a stall is not followed by a burst. */
		double cap = o->rate / 1000.0 < 1 ? 1 : o->rate / 1000.0;

		cl->credit += (double)(now - cl->t_credit) * o->rate / (double)cl->hz;
		cl->t_credit = now;
		if (cl->credit > cap)
			cl->credit = cap;
	}
	for (unsigned k = 0; k < LG_BURST && cl->launched < o->count; k++) {
		/* Sale users arrive in order, each at its time: a pre-queue's over the span before
		 * the start, the others at the start (lg_sched.h). */
		if (o->mode == LG_MODE_SALE && now < arrival_tsc(cl, cl->launched))
			return;
		if (o->rate > 0) {
			if (cl->credit < 1)
				return;
			cl->credit -= 1;
		}
		if (o->mode == LG_MODE_SYN_FLOOD) {
			launch_syn_flood_mode(cl, now);
			cl->launched++;
			continue;
		}
		if (lg_mode_blast(o->mode)) {
			/* A second behind the data plane's clock: its worker may not have
			 * moved to a new slot yet, and accepts the one before as well. */
			if (k == 0)
				syncookie_tick(&cl->cookies, now_wall_ms() / 1000 - 1);
			launch_blast_mode(cl, now);
			cl->launched++;
			continue;
		}
		struct lg_conn *c = lg_table_take(cl->tab);

		if (c == NULL) {
			if (o->rate > 0)
				cl->credit += 1;
			return;
		}
		honest_slot(cl, c);
		if (o->mode != LG_MODE_SALE) {
			cl->launched++;
			lg_connect_open(cl, c, now);
			continue;
		}
		sale_arrive(cl, c, now);
		cl->launched++;
	}
}

void
lg_launch_due(struct lg_client *cl, uint64_t now)
{
	if (!cl->have_peer_mac)
		return;
	launch_honest(cl, now);
	/* Floods go on while the honest clients do, and stop with them. */
	if (cl->any_flood && !lg_state_honest_done(cl))
		launch_floods(cl, now);
}

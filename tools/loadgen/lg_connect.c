/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loadgen client's connections (lg_parts.h): opened, sent on, retransmitted and
 * closed; a client ended with its last one.
 */
#include <stdint.h>

#include <rte_random.h>

#include "tools/loadgen/lg_parts.h"

/* Sends a segment of connection c with our sequence number seq. */
void
lg_connect_send(struct lg_client *cl, const struct lg_conn *c, uint8_t flags, uint32_t seq,
	const void *payload, uint16_t len, uint64_t now)
{
	struct lg_seg s = {
		.src_ip = c->cip,
		.dst_ip = cl->o->dst_ip,
		.sport = c->sport,
		.dport = cl->o->dport,
		.seq = seq,
		.ack = (flags & RTE_TCP_ACK_FLAG) ? c->rcv_nxt : 0,
		.flags = flags,
		.mss_opt = (flags & RTE_TCP_SYN_FLAG) != 0,
		.payload = payload,
		.payload_len = len,
	};

	lg_state_send_seg(cl, &s, now);
}

void
lg_connect_syn(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	lg_connect_send(cl, c, RTE_TCP_SYN_FLAG, c->isn, NULL, 0, now);
}

/* The handshake's third segment carries the request, as the data plane expects. */
void
lg_connect_req(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	lg_connect_send(
		cl, c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c->seq0, c->req, c->req_len, now);
}

void
lg_connect_fin(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	lg_connect_send(
		cl, c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, c->seq0 + c->req_len, NULL, 0, now);
}

/* Opens a new TCP connection for slot c (its step, user and address already set). */
void
lg_connect_open(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	struct lg_flood_stats *fs = lg_state_flood_stats(cl, c);

	if (lg_request_build(cl, c) != 0 || (cl->o->proxy_v2 && lg_request_proxy_v2(cl, c) != 0)) {
		/* Only a --host too long for the request buffer gets here; lg_cli bounds it. */
		if (fs != NULL) {
			fs->unexpected++;
			lg_table_put(cl->ftab, c);
			return;
		}
		cl->st.outcome[LG_OUT_REFUSED]++;
		cl->st.users_done++;
		lg_table_put(cl->tab, c);
		return;
	}
	c->isn = (uint32_t)rte_rand();
	c->seq0 = c->isn + 1;
	c->rcv_nxt = 0;
	c->rtx = 0;
	c->verdict = 0;
	c->resp_len = 0;
	c->t_syn = now;
	c->t_req = 0;
	c->t_due = now + cl->rto;
	c->state = LG_CS_SYN_SENT;
	if (unlikely(fs != NULL))
		fs->conns++;
	else
		cl->st.conns_started++;
	lg_connect_syn(cl, c, now);
}

/* Ends client c (a healthz connection or a sale user) with outcome out. */
void
lg_connect_end(struct lg_client *cl, struct lg_conn *c, enum lg_outcome out)
{
	if (unlikely(c->step >= LG_STEP_FLOOD_FIRST)) {
		lg_table_put(cl->ftab, c);
		return;
	}
	if (cl->o->mode == LG_MODE_SALE) {
		cl->st.outcome[out]++;
		cl->st.users_done++;
		cl->st.pop_items[c->bot ? LG_POP_BOTS : LG_POP_PEOPLE] +=
			out == LG_OUT_RESERVED || out == LG_OUT_ORDERED || out == LG_OUT_PAID;
	}
	lg_table_put(cl->tab, c);
}

/* A connection failed (RST, timeout, malformed segment): its client ends with it. */
void
lg_connect_fail(struct lg_client *cl, struct lg_conn *c)
{
	lg_connect_end(cl, c, LG_OUT_CONN_FAILED);
}

/*
 * Idle sale user c starts its next connection at due: at once when due is now, as a browser
 * would (the reserve after the token); a plain poll's wait (--poll-ms, the same for everyone)
 * ends on time in the wake queue, waits of other lengths (think times, Retry-After, a queued
 * user's wait_ms) on the timer heap, or at the timer scan when either is full.
 */
void
lg_connect_idle_until(struct lg_client *cl, struct lg_conn *c, uint64_t due, uint64_t now)
{
	c->t_due = due;
	if (now >= c->t_due)
		lg_connect_open(cl, c, now);
	else if (c->plain_poll && c->t_due - now <= cl->poll)
		lg_table_wake_at(cl->tab, c);
	else
		lg_table_timer_at(cl->tab, c);
}

/* Our FIN was acknowledged: the connection is complete. */
void
lg_connect_closed(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	if (unlikely(c->step >= LG_STEP_FLOOD_FIRST)) {
		lg_connect_end(cl, c, LG_OUT_REFUSED);
		return;
	}
	cl->st.conns_completed++;
	lg_hist_add(&cl->st.conn_lat, now - c->t_syn);
	if (lg_mode_kept(cl->o->mode) && c->left > 0) {
		lg_connect_open(cl, c, now);
		return;
	}
	if (cl->o->mode != LG_MODE_SALE || c->verdict >= 2) {
		lg_connect_end(cl, c,
			c->verdict >= 2 ? (enum lg_outcome)(c->verdict - 2) : LG_OUT_CONN_FAILED);
		return;
	}
	if (c->pow == LG_POW_FAILED) {
		lg_connect_end(cl, c, LG_OUT_GAVE_UP);
		return;
	}
	/* t_due was our FIN's retransmission timer; judge() said when the next step is due. A
	 * reserve that waits for its challenge's solution is started by the solver
	 * (lg_client.c). */
	c->state = LG_CS_IDLE;
	if (c->pow == LG_POW_WAITING && c->step == LG_STEP_RESERVE) {
		c->t_due = UINT64_MAX;
		return;
	}
	lg_connect_idle_until(cl, c, c->t_next, now);
}

void
lg_connect_kept_next(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	lg_judge_kept(cl, c, now);
	c->seq0 += c->req_len;
	c->resp_len = 0;
	c->rtx = 0;
	c->t_due = now + cl->rto;
	if (--c->left == 0) {
		c->req_len = 0;
		c->verdict = 2;
		c->state = LG_CS_FIN_SENT;
		lg_connect_fin(cl, c, now);
		return;
	}
	c->user += lg_mode_reserve(cl->o->mode);
	if (lg_request_build(cl, c) != 0) {
		lg_state_count_malformed(cl, c, false);
		lg_connect_fail(cl, c);
		return;
	}
	c->t_req = now;
	cl->st.requests++;
	lg_connect_req(cl, c, now);
}

static void
scan_table(struct lg_client *cl, struct lg_table *tab, uint64_t now)
{
	const struct lg_opts *o = cl->o;

	for (uint32_t i = 0; i < tab->n; i++) {
		struct lg_conn *c = &tab->c[i];

		if (c->state == LG_CS_FREE || now < c->t_due)
			continue;
		if (c->state == LG_CS_IDLE) {
			lg_connect_open(cl, c, now);
			continue;
		}
		struct lg_flood_stats *fs = lg_state_flood_stats(cl, c);

		if (c->rtx >= o->retries) {
			if (unlikely(fs != NULL))
				fs->timeouts++;
			else
				cl->st.conns_timeout++;
			lg_connect_fail(cl, c);
			continue;
		}
		c->rtx++;
		if (unlikely(fs != NULL))
			fs->retransmits++;
		else
			cl->st.retransmits++;
		/* RFC 6298 §5.5: back off, doubling the timeout each time. */
		c->t_due = now + (cl->rto << c->rtx);
		if (c->state == LG_CS_SYN_SENT)
			lg_connect_syn(cl, c, now);
		else if (c->state == LG_CS_REQ_SENT)
			lg_connect_req(cl, c, now);
		else
			lg_connect_fin(cl, c, now);
	}
}

void
lg_connect_timers(struct lg_client *cl, uint64_t now)
{
	struct lg_conn *c;

	/* Polls whose wait ended, at most a burst of them a call (as launches). */
	for (unsigned k = 0;
		k < LG_BURST && cl->tab != NULL && (c = lg_table_wake_next(cl->tab, now)) != NULL;
		k++)
		lg_connect_open(cl, c, now);
	/* Waits of other lengths whose time has come, as many a call. */
	for (unsigned k = 0;
		k < LG_BURST && cl->tab != NULL && (c = lg_table_timer_next(cl->tab, now)) != NULL;
		k++)
		lg_connect_open(cl, c, now);
	/* A scan of the tables each 1/4 of the first RTO is enough for timers of that size. */
	if (now < cl->t_next_scan)
		return;
	cl->t_next_scan = now + cl->rto / 4 + 1;
	if (cl->tab != NULL)
		scan_table(cl, cl->tab, now);
	if (cl->ftab != NULL && cl->ftab->active != 0)
		scan_table(cl, cl->ftab, now);
}

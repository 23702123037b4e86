/* SPDX-License-Identifier: BSD-3-Clause */
/* The bridge's PUSH side: the workers' rings into batches, sent without blocking. */
#include <zmq.h>

#include "common/now.h"
#include "dataplane/bridge/bridge_int.h"

/* ---- outgoing ----------------------------------------------------------------------------- */

/* Moves records from the rings into the batches while each batch has room. */
unsigned
bridge_out_drain(struct bridge *b, uint64_t now_us)
{
	unsigned total = 0, n_workers = b->cfg.n_workers;

	for (unsigned k = 0; k < n_workers; k++) {
		struct bridge_port *p = &b->ports[(b->rr + k) % n_workers];
		unsigned room = b->cfg.batch_max - b->n_staged;

		if (room == 0)
			break;
		unsigned n = rte_ring_sc_dequeue_burst_elem(p->ring, b->staged + b->n_staged,
			sizeof(b->staged[0]), room < DRAIN_BURST ? room : DRAIN_BURST, NULL);

		if (n > 0 && b->n_staged == 0)
			b->staged_since_us = now_us;
		b->n_staged += n;
		total += n;
	}
	/* Result queries from their own rings, as far as their batch has room: what waits stays
	 * in the rings (a full ring makes the workers answer without asking, counted). */
	for (unsigned k = 0; k < n_workers; k++) {
		struct bridge_port *p = &b->ports[(b->rr + k) % n_workers];
		unsigned room = b->cfg.batch_max - b->n_qstaged;

		if (room == 0)
			break;
		unsigned n = rte_ring_sc_dequeue_burst_elem(p->qring, b->qstaged + b->n_qstaged,
			sizeof(b->qstaged[0]), room < DRAIN_BURST ? room : DRAIN_BURST, NULL);

		b->n_qstaged += n;
		total += n;
	}
	b->rr++;
	return total;
}

/* Encodes the next message to send into b->msg if none is pending. */
void
bridge_out_prepare(struct bridge *b, uint64_t now_us, bool flushing)
{
	int len;

	if (b->pending)
		return;
	if (b->request_due) {
		len = wire_encode(&b->tx, WIRE_T_SNAPSHOT_REQUEST, NULL, 0, b->msg, b->msg_cap);
		b->request_due = false;
		b->pending_type = WIRE_T_SNAPSHOT_REQUEST;
		b->pending_records = 0;
		CTR_INC(b->ctr.snapshot_requests);
	} else if (b->hello_due) {
		/* "This instance holds my dp id": the control plane refuses a second one. */
		struct wire_hello h = {
			.instance = b->instance,
			.now_ms = b->cfg.clock != NULL
					  ? clock_ms(&b->cfg.clock->ref, rte_rdtsc())
					  : now_wall_ms(),
		};

		len = wire_encode(&b->tx, WIRE_T_HELLO, &h, 1, b->msg, b->msg_cap);
		b->hello_due = false;
		b->pending_type = WIRE_T_HELLO;
		b->pending_records = 1;
	} else if (b->stats_due) {
		/* Before reservations: once per stats_ms it is cheap, and under a steady stream
		 * of batches it would never go otherwise. */
		unsigned n = b->n_stats;

		len = wire_encode(&b->tx, WIRE_T_DP_STATS, b->stats, n, b->msg, b->msg_cap);
		b->stats_due = false;
		b->pending_type = WIRE_T_DP_STATS;
		b->pending_records = n;
	} else if (b->n_staged > 0 && !(b->n_qstaged > 0 && b->last_was_reserve) &&
		   (b->n_staged >= b->cfg.batch_max || flushing ||
			   now_us - b->staged_since_us >= b->cfg.batch_wait_us)) {
		/* Reservations and result queries take turns when both wait: a storm of polls
		 * delays a batch by one query message at most. */
		unsigned n = b->n_staged;

		len = wire_encode_reservations(&b->tx, b->staged, n, b->msg, b->msg_cap);
		b->pending_last = b->staged[n - 1];
		b->pending_resend = false;
		b->n_staged = 0;
		b->pending_type = WIRE_T_RESERVE;
		b->pending_records = n;
		b->last_was_reserve = true;
	} else if (b->n_qstaged > 0) {
		unsigned n = b->n_qstaged;

		len = wire_encode(&b->tx, WIRE_T_RESULT_QUERY, b->qstaged, n, b->msg, b->msg_cap);
		b->n_qstaged = 0;
		b->pending_type = WIRE_T_RESULT_QUERY;
		b->pending_records = n;
		b->last_was_reserve = false;
	} else {
		return;
	}
	/* msg_cap holds the largest batch, and every type and count here is valid. */
	if (len > 0) {
		b->msg_len = (size_t)len;
		b->pending = true;
	}
}

/* Tries to send the pending message without blocking. Returns true when it went out. */
bool
bridge_out_send(struct bridge *b)
{
	if (!b->pending)
		return false;
	if (zmq_send(b->push, b->msg, b->msg_len, ZMQ_DONTWAIT) < 0) {
		if (zmq_errno() == EAGAIN)
			CTR_INC(b->ctr.send_retries);
		else
			CTR_INC(b->ctr.send_errors);
		return false;
	}
	b->pending = false;
	CTR_INC(b->ctr.msgs_out[b->pending_type]);
	CTR_ADD(b->ctr.records_out[b->pending_type], b->pending_records);
	if (b->pending_type == WIRE_T_RESERVE) {
		CTR_INC(b->ctr.batches_sent);
		b->mark_sent_ms = now_mono_us() / 1000;
		if (!b->pending_resend) {
			/* Its result will prove that the control plane holds all sent so far. */
			b->sent += b->pending_records;
			b->mark = b->pending_last;
			b->mark_rid = b->mark.reservation_id;
			b->mark_count = b->sent;
		}
	}
	return true;
}

bool
bridge_out_rings_empty(const struct bridge *b)
{
	for (unsigned i = 0; i < b->cfg.n_workers; i++)
		if (!rte_ring_empty(b->ports[i].ring) || !rte_ring_empty(b->ports[i].qring))
			return false;
	return true;
}

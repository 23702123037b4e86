/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/ow_link.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "common/log.h"
#include "common/now.h"

/* Records per message: a batch of orders fits one message (2048 * 48 bytes = 96 KiB). */
#define OW_LINK_RECS_MAX 2048

struct held_msg {
	size_t len;
	unsigned recs;
	uint8_t *data;
};

/* One control plane: its socket and the FIFO of what it could not take yet. */
struct ow_peer {
	void *push;
	void *mon; /* with CURVE: the PUSH socket's monitor (a refused handshake is logged) */
	struct held_msg *held; /* queue_max slots */
	unsigned held_head, held_n;
	struct ow_link_peer_stats st;
};

struct ow_link {
	void *ctx;
	uint64_t last_mon_ms;
	unsigned queue_max;
	unsigned n_peers;
	struct ow_peer peers[OW_LINK_PEERS_MAX];
	struct wire_sender sender;
	struct ow_link_stats st;
	uint8_t buf[WIRE_HDR_SIZE + OW_LINK_RECS_MAX * sizeof(struct wire_result)];
};

struct ow_link *
ow_link_open(const char *endpoints, uint32_t sender_id, unsigned queue_max,
	const struct zlink_keys *keys, char *err, size_t errlen)
{
	char eps[OW_LINK_PEERS_MAX][OW_LINK_EP_MAX];
	int n = ow_link_split(endpoints, eps, err, errlen);
	struct ow_link *l;
	int linger = 1000, hwm;

	if (n < 0)
		return NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->queue_max = queue_max > 0 ? queue_max : 1;
	hwm = (int)l->queue_max;
	l->sender.id = sender_id;
	l->sender.epoch = (uint32_t)time(NULL);
	l->ctx = zmq_ctx_new();
	if (l->ctx == NULL)
		goto fail;
	for (int i = 0; i < n; i++) {
		struct ow_peer *p = &l->peers[i];
		char name[16];

		l->n_peers++;
		snprintf(p->st.endpoint, sizeof(p->st.endpoint), "%s", eps[i]);
		p->held = calloc(l->queue_max, sizeof(*p->held));
		if (p->held == NULL) {
			snprintf(err, errlen, "out of memory");
			goto fail_quiet;
		}
		p->push = zmq_socket(l->ctx, ZMQ_PUSH);
		/* ZeroMQ queues for a control plane that is not connected (ZMQ_IMMEDIATE off),
		 * up to its high-water mark; then our FIFO of as many; then drops. */
		if (p->push == NULL ||
			zmq_setsockopt(p->push, ZMQ_LINGER, &linger, sizeof(linger)) != 0 ||
			zmq_setsockopt(p->push, ZMQ_SNDHWM, &hwm, sizeof(hwm)) != 0)
			goto fail;
		/* Nothing but the handshake arrives on a PUSH socket: the smallest limit. */
		if (zlink_socket_setup(p->push, keys, NULL, 0, err, errlen) != 0)
			goto fail_quiet;
		snprintf(name, sizeof(name), "push%d", i);
		if (keys->curve && (p->mon = zlink_monitor(l->ctx, p->push, name)) == NULL)
			goto fail;
		if (zmq_connect(p->push, eps[i]) != 0) {
			snprintf(err, errlen, "[order_writer] push_endpoint %s: %s", eps[i],
				zmq_strerror(zmq_errno()));
			goto fail_quiet;
		}
	}
	return l;
fail:
	snprintf(err, errlen, "zeromq: %s", zmq_strerror(zmq_errno()));
fail_quiet:
	ow_link_close(l);
	return NULL;
}

void
ow_link_close(struct ow_link *l)
{
	if (l == NULL)
		return;
	ow_link_flush(l);
	for (unsigned k = 0; k < l->n_peers; k++) {
		struct ow_peer *p = &l->peers[k];

		for (unsigned i = 0; p->held != NULL && i < p->held_n; i++)
			free(p->held[(p->held_head + i) % l->queue_max].data);
		free(p->held);
		if (p->mon != NULL)
			zmq_close(p->mon);
		if (p->push != NULL)
			zmq_close(p->push);
	}
	if (l->ctx != NULL)
		zmq_ctx_term(l->ctx);
	free(l);
}

/* Sends what waits for peer p, in order, until it takes no more. Returns messages sent. */
static unsigned
peer_flush(struct ow_link *l, struct ow_peer *p)
{
	unsigned sent = 0;

	while (p->held_n > 0) {
		struct held_msg *h = &p->held[p->held_head];

		if (zmq_send(p->push, h->data, h->len, ZMQ_DONTWAIT) != (int)h->len)
			break;
		p->st.messages++;
		p->st.records += h->recs;
		l->st.messages++;
		free(h->data);
		h->data = NULL;
		p->held_head = (p->held_head + 1) % l->queue_max;
		p->held_n--;
		sent++;
	}
	return sent;
}

unsigned
ow_link_flush(struct ow_link *l)
{
	unsigned sent = 0;

	/* With CURVE, a handshake a control plane refuses is said in the log (at most every
	 * 10 s): the writer otherwise only sees its messages wait. */
	if (now_mono_ms() - l->last_mon_ms >= 100) {
		l->last_mon_ms = now_mono_ms();
		for (unsigned k = 0; k < l->n_peers; k++) {
			struct zlink_events ev = {0};

			if (l->peers[k].mon == NULL)
				continue;
			zlink_monitor_read(l->peers[k].mon, &ev);
			if (ev.handshake_failed > 0)
				LOG_RL(LOG_LEVEL_WARN, 10000,
					"link: the control plane at %s refused the CURVE "
					"handshake: "
					"is this order writer's public key in its "
					"curve_clients_file (as order-writer), and "
					"curve_server_key_file its public key? "
					"(docs/operations.md, "
					"\"Link keys\")",
					l->peers[k].st.endpoint);
		}
	}
	for (unsigned k = 0; k < l->n_peers; k++)
		sent += peer_flush(l, &l->peers[k]);
	return sent;
}

/*
 * Keeps a message peer p would not take now: ZeroMQ's queue for it is full (the control plane
 * is gone, starting or busy). Only when this queue is full too is a message dropped (counted
 * for p; polls still find the state in Redis).
 */
static bool
peer_hold(struct ow_link *l, struct ow_peer *p, const uint8_t *data, size_t len, unsigned recs)
{
	uint8_t *copy;

	if (p->held_n == l->queue_max || (copy = malloc(len)) == NULL)
		return false;
	memcpy(copy, data, len);
	p->held[(p->held_head + p->held_n) % l->queue_max] =
		(struct held_msg){.len = len, .recs = recs, .data = copy};
	p->held_n++;
	return true;
}

/* One encoded message of k records (in l->buf) to every control plane, never waiting. */
static void
send_all(struct ow_link *l, enum wire_type type, size_t len, unsigned k)
{
	for (unsigned i = 0; i < l->n_peers; i++) {
		struct ow_peer *p = &l->peers[i];

		/* In order: nothing new overtakes what is held. */
		if (p->held_n == 0 && zmq_send(p->push, l->buf, len, ZMQ_DONTWAIT) == (int)len) {
			p->st.messages++;
			p->st.records += k;
			l->st.messages++;
		} else if (!peer_hold(l, p, l->buf, len, k)) {
			p->st.dropped += k;
			l->st.dropped += k;
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"link: the control plane at %s takes no %s records and %u messages "
				"wait for it; dropped for it (polls still find them in Redis)",
				p->st.endpoint, wire_type_name(type), l->queue_max);
		}
	}
}

static unsigned
ow_link_send(struct ow_link *l, enum wire_type type, const void *recs, size_t rec_size, unsigned n)
{
	unsigned sent = 0;

	ow_link_flush(l);
	while (sent < n) {
		unsigned k = n - sent < OW_LINK_RECS_MAX ? n - sent : OW_LINK_RECS_MAX;
		int len = wire_encode(&l->sender, type, (const uint8_t *)recs + sent * rec_size, k,
			l->buf, sizeof(l->buf));

		if (len < 0) {
			for (unsigned i = 0; i < l->n_peers; i++)
				l->peers[i].st.dropped += n - sent;
			l->st.dropped += (uint64_t)(n - sent) * l->n_peers;
			break;
		}
		send_all(l, type, (size_t)len, k);
		l->st.records += k;
		sent += k;
	}
	return sent;
}

unsigned
ow_link_results(struct ow_link *l, const struct wire_result *r, unsigned n)
{
	return ow_link_send(l, WIRE_T_RESULT, r, sizeof(*r), n);
}

unsigned
ow_link_restock(struct ow_link *l, const struct wire_stock *s, unsigned n)
{
	return ow_link_send(l, WIRE_T_RESTOCK, s, sizeof(*s), n);
}

void
ow_link_get_stats(const struct ow_link *l, struct ow_link_stats *out)
{
	*out = l->st;
}

unsigned
ow_link_peers(const struct ow_link *l)
{
	return l->n_peers;
}

void
ow_link_get_peer_stats(const struct ow_link *l, unsigned i, struct ow_link_peer_stats *out)
{
	*out = l->peers[i].st;
	out->queued = l->peers[i].held_n;
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/ow_link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "common/log.h"
#include "common/now.h"

/* Records per message: a batch of orders fits one message (2048 * 48 bytes = 96 KiB). */
#define OW_LINK_RECS_MAX 2048

/* Messages kept while the control plane cannot take them (not connected yet, or gone). */
#define OW_LINK_HELD_MAX 4096

struct held_msg {
	size_t len;
	uint8_t *data;
};

struct ow_link {
	void *ctx;
	void *push;
	void *mon; /* with CURVE: the PUSH socket's monitor (a refused handshake is logged) */
	uint64_t last_mon_ms;
	struct wire_sender sender;
	struct ow_link_stats st;
	struct held_msg held[OW_LINK_HELD_MAX]; /* FIFO */
	unsigned held_head, held_n;
	uint8_t buf[WIRE_HDR_SIZE + OW_LINK_RECS_MAX * sizeof(struct wire_result)];
};

struct ow_link *
ow_link_open(const char *endpoint, uint32_t sender_id, const struct zlink_keys *keys, char *err,
	size_t errlen)
{
	struct ow_link *l = calloc(1, sizeof(*l));
	int linger = 1000;

	if (l == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->sender.id = sender_id;
	l->sender.epoch = (uint32_t)time(NULL);
	l->ctx = zmq_ctx_new();
	if (l->ctx == NULL)
		goto fail;
	l->push = zmq_socket(l->ctx, ZMQ_PUSH);
	if (l->push == NULL || zmq_setsockopt(l->push, ZMQ_LINGER, &linger, sizeof(linger)) != 0)
		goto fail;
	/* Nothing but the handshake arrives on a PUSH socket: the smallest limit. */
	if (zlink_socket_setup(l->push, keys, NULL, 0, err, errlen) != 0)
		goto fail_quiet;
	if (keys->curve && (l->mon = zlink_monitor(l->ctx, l->push, "push")) == NULL)
		goto fail;
	if (zmq_connect(l->push, endpoint) != 0) {
		snprintf(err, errlen, "[order_writer] push_endpoint %s: %s", endpoint,
			zmq_strerror(zmq_errno()));
		goto fail_quiet;
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
	for (unsigned i = 0; i < l->held_n; i++)
		free(l->held[(l->held_head + i) % OW_LINK_HELD_MAX].data);
	if (l->mon != NULL)
		zmq_close(l->mon);
	if (l->push != NULL)
		zmq_close(l->push);
	if (l->ctx != NULL)
		zmq_ctx_term(l->ctx);
	free(l);
}

unsigned
ow_link_flush(struct ow_link *l)
{
	unsigned sent = 0;

	/* With CURVE, a handshake the control plane refuses is said in the log (at most every
	 * 10 s): the writer otherwise only sees its messages wait. */
	if (l->mon != NULL && now_mono_ms() - l->last_mon_ms >= 100) {
		struct zlink_events ev = {0};

		l->last_mon_ms = now_mono_ms();
		zlink_monitor_read(l->mon, &ev);
		if (ev.handshake_failed > 0)
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"link: the control plane refused the CURVE handshake: is this order "
				"writer's public key in its curve_clients_file (as order-writer), and "
				"curve_server_key_file its public key? (docs/operations.md, \"Link "
				"keys\")");
	}

	while (l->held_n > 0) {
		struct held_msg *h = &l->held[l->held_head];

		if (zmq_send(l->push, h->data, h->len, ZMQ_DONTWAIT) != (int)h->len)
			break;
		free(h->data);
		h->data = NULL;
		l->held_head = (l->held_head + 1) % OW_LINK_HELD_MAX;
		l->held_n--;
		l->st.messages++;
		sent++;
	}
	return sent;
}

/*
 * Keeps a message the PUSH socket would not take now: a PUSH with no connected peer
 * refuses at once, and the control plane may be starting, restarting or busy. Only when
 * the queue is full is a message dropped (counted; polls still find the state in Redis).
 */
static bool
ow_link_hold(struct ow_link *l, const uint8_t *data, size_t len)
{
	uint8_t *copy;

	if (l->held_n == OW_LINK_HELD_MAX || (copy = malloc(len)) == NULL)
		return false;
	memcpy(copy, data, len);
	l->held[(l->held_head + l->held_n) % OW_LINK_HELD_MAX] =
		(struct held_msg){.len = len, .data = copy};
	l->held_n++;
	return true;
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
			l->st.dropped += n - sent;
			break;
		}
		/* In order: nothing new overtakes what is held. */
		if (l->held_n == 0 && zmq_send(l->push, l->buf, (size_t)len, ZMQ_DONTWAIT) == len) {
			l->st.messages++;
		} else if (!ow_link_hold(l, l->buf, (size_t)len)) {
			l->st.dropped += k;
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"link: the control plane takes no %s records and %d messages wait; "
				"dropped (polls still find them in Redis)",
				wire_type_name(type), OW_LINK_HELD_MAX);
		}
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

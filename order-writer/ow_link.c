/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/ow_link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "common/log.h"

/* Records per message: a batch of orders fits one message (2048 * 48 bytes = 96 KiB). */
#define OW_LINK_RECS_MAX 2048

struct ow_link {
	void *ctx;
	void *push;
	struct wire_sender sender;
	struct ow_link_stats st;
	uint8_t buf[WIRE_HDR_SIZE + OW_LINK_RECS_MAX * sizeof(struct wire_result)];
};

struct ow_link *
ow_link_open(const char *endpoint, uint32_t sender_id, char *err, size_t errlen)
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
	if (l->push != NULL)
		zmq_close(l->push);
	if (l->ctx != NULL)
		zmq_ctx_term(l->ctx);
	free(l);
}

static unsigned
ow_link_send(struct ow_link *l, enum wire_type type, const void *recs, size_t rec_size, unsigned n)
{
	unsigned sent = 0;

	while (sent < n) {
		unsigned k = n - sent < OW_LINK_RECS_MAX ? n - sent : OW_LINK_RECS_MAX;
		int len = wire_encode(&l->sender, type, (const uint8_t *)recs + sent * rec_size, k,
			l->buf, sizeof(l->buf));

		if (len < 0 || zmq_send(l->push, l->buf, (size_t)len, ZMQ_DONTWAIT) != len) {
			l->st.dropped += n - sent;
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"link: cannot push %s records to the control plane (%s); polls "
				"still find them in Redis",
				wire_type_name(type),
				len < 0 ? "encoding failed" : zmq_strerror(zmq_errno()));
			break;
		}
		l->st.messages++;
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

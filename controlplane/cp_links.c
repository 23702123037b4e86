/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_links.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "common/log.h"

struct cp_links {
	void *ctx;
	void *pull;
	void *pub;
	struct cp_zap *zap;
	bool curve; /* senders have roles */
	struct wire_sender tx;
	struct cp_links_counters ctr;
	zmq_msg_t rx; /* the message cp_links_recv() last returned */
	uint8_t *txb; /* one message of CP_LINKS_RECS_PER_MSG of the largest record */
	size_t txb_len;
};

struct cp_links *
cp_links_open(const char *pull_ep, const char *pub_ep, uint32_t sender_id,
	const struct zlink_keys *keys, const char *clients_file, char *err, size_t errlen)
{
	struct cp_links *l = calloc(1, sizeof(*l));
	int hwm = 100000, linger = 1000, zero = 0;

	if (l == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->txb_len = WIRE_HDR_SIZE + (size_t)CP_LINKS_RECS_PER_MSG * 128;
	zmq_msg_init(&l->rx);
	l->txb = malloc(l->txb_len);
	l->ctx = zmq_ctx_new();
	if (l->txb == NULL || l->ctx == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	l->pull = zmq_socket(l->ctx, ZMQ_PULL);
	l->pub = zmq_socket(l->ctx, ZMQ_PUB);
	if (l->pull == NULL || l->pub == NULL) {
		snprintf(err, errlen, "cannot create ZeroMQ sockets: %s", zmq_strerror(zmq_errno()));
		goto fail;
	}
	/* Results must not be dropped for a data plane that is merely busy for a moment. */
	zmq_setsockopt(l->pub, ZMQ_SNDHWM, &hwm, sizeof(hwm));
	zmq_setsockopt(l->pull, ZMQ_RCVHWM, &hwm, sizeof(hwm));
	zmq_setsockopt(l->pub, ZMQ_LINGER, &linger, sizeof(linger));
	zmq_setsockopt(l->pull, ZMQ_LINGER, &zero, sizeof(zero));
	/* Nothing but subscriptions arrive on the PUB socket: it gets the smallest limit. */
	if (zlink_socket_setup(l->pull, keys, ZLINK_DOMAIN_PULL, WIRE_MSG_MAX_TO_CP, err,
		    errlen) != 0 ||
		zlink_socket_setup(l->pub, keys, ZLINK_DOMAIN_PUB, 0, err, errlen) != 0)
		goto fail;
	/* The ZAP handler is in place before a client can connect. */
	l->curve = keys->curve;
	/* With the local key directory's keys, its allow-list (zlink_local_keys()). */
	if (keys->clients_file[0] != '\0')
		clients_file = keys->clients_file;
	l->zap = cp_zap_start(l->ctx, keys->curve ? clients_file : NULL, l->pull, l->pub, err,
		errlen);
	if (l->zap == NULL)
		goto fail;
	if (zmq_bind(l->pull, pull_ep) != 0) {
		snprintf(err, errlen,
			"cannot bind the PULL socket to %s: %s (another control plane there? set "
			"controlplane.pull_endpoint)",
			pull_ep, zmq_strerror(zmq_errno()));
		goto fail;
	}
	if (zmq_bind(l->pub, pub_ep) != 0) {
		snprintf(err, errlen,
			"cannot bind the PUB socket to %s: %s (another control plane there? set "
			"controlplane.pub_endpoint)",
			pub_ep, zmq_strerror(zmq_errno()));
		goto fail;
	}
	l->tx.id = sender_id;
	l->tx.epoch = (uint32_t)time(NULL);
	l->tx.seq = 0;
	return l;
fail:
	cp_links_close(l);
	return NULL;
}

void
cp_links_close(struct cp_links *l)
{
	if (l == NULL)
		return;
	cp_zap_stop(l->zap);
	if (l->pull != NULL)
		zmq_close(l->pull);
	if (l->pub != NULL)
		zmq_close(l->pub);
	zmq_msg_close(&l->rx);
	if (l->ctx != NULL)
		zmq_ctx_term(l->ctx);
	free(l->txb);
	free(l);
}

void *
cp_links_pull_socket(struct cp_links *l)
{
	return l->pull;
}

/* Whether a sender of User-Id uid ("ROLE:NAME", set by the ZAP handler) may send type. */
static bool
role_may_send(const char *uid, uint8_t type)
{
	const char *role = type == WIRE_T_RESULT || type == WIRE_T_RESTOCK
				   ? ZLINK_ROLE_ORDER_WRITER ":"
				   : ZLINK_ROLE_DATAPLANE ":";

	return uid != NULL && strncmp(uid, role, strlen(role)) == 0;
}

int
cp_links_recv(struct cp_links *l, struct wire_msg *m)
{
	int len, rc;

	zmq_msg_close(&l->rx);
	zmq_msg_init(&l->rx);
	len = zmq_msg_recv(&l->rx, l->pull, ZMQ_DONTWAIT);
	if (len < 0)
		return 0;
	if (zmq_msg_more(&l->rx)) {
		/* One frame per message: drain and refuse the rest of a multipart message. */
		while (zmq_msg_more(&l->rx))
			if (zmq_msg_recv(&l->rx, l->pull, ZMQ_DONTWAIT) < 0)
				break;
		l->ctr.decode_errors[WIRE_ERRI_LENGTH]++;
		return WIRE_ERR_LENGTH;
	}
	rc = wire_decode(zmq_msg_data(&l->rx), (size_t)len, m);
	if (rc != 0) {
		unsigned i = wire_err_index(rc);

		if (i < WIRE_ERR_MAX)
			l->ctr.decode_errors[i]++;
		LOG_RL(LOG_LEVEL_WARN, 10000, "a malformed message from a data plane: %s",
			wire_err_name(rc));
		return rc;
	}
	/* RESULT and RESTOCK come from order writers (orders made, orders expired) and are
	 * relayed to every data plane; the rest of the control plane's types never arrive here. */
	if (m->type >= WIRE_T_RESULT && m->type < WIRE_T_MAX && m->type != WIRE_T_RESULT &&
		m->type != WIRE_T_RESTOCK) {
		l->ctr.wrong_direction++;
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"a %s message on the PULL socket: only data planes and order writers "
			"push here",
			wire_type_name(m->type));
		return WIRE_ERR_TYPE;
	}
	if (l->curve && !role_may_send(zmq_msg_gets(&l->rx, "User-Id"), m->type)) {
		const char *uid = zmq_msg_gets(&l->rx, "User-Id");

		l->ctr.wrong_role++;
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"links: dropped a %s message from %s: only %s keys may send it",
			wire_type_name(m->type), uid != NULL ? uid : "a sender without a role",
			m->type == WIRE_T_RESULT || m->type == WIRE_T_RESTOCK
				? ZLINK_ROLE_ORDER_WRITER
				: ZLINK_ROLE_DATAPLANE);
		return WIRE_ERR_TYPE;
	}
	if (m->type < WIRE_T_MAX) {
		l->ctr.msgs_in[m->type]++;
		l->ctr.records_in[m->type] += m->count;
	}
	return 1;
}

int
cp_links_publish(struct cp_links *l, enum wire_type type, const void *recs, unsigned count)
{
	int rs = wire_rec_size(type);
	unsigned done = 0;

	if (rs < 0)
		return -EINVAL;
	do {
		unsigned n = count - done;

		if (n > CP_LINKS_RECS_PER_MSG)
			n = CP_LINKS_RECS_PER_MSG;
		int len = wire_encode(&l->tx, type,
			n ? (const uint8_t *)recs + (size_t)done * (size_t)rs : NULL, n, l->txb,
			l->txb_len);

		if (len < 0)
			return len;
		if (zmq_send(l->pub, l->txb, (size_t)len, ZMQ_DONTWAIT) != len) {
			l->ctr.send_errors++;
			LOG_RL(LOG_LEVEL_WARN, 10000, "cannot publish a %s message: %s",
				wire_type_name(type), zmq_strerror(zmq_errno()));
			return -EIO;
		}
		l->ctr.msgs_out[type]++;
		l->ctr.records_out[type] += n;
		done += n;
	} while (done < count);
	return 0;
}

void
cp_links_counters(const struct cp_links *l, struct cp_links_counters *out)
{
	*out = l->ctr;
	cp_zap_counters(l->zap, &out->zap);
}

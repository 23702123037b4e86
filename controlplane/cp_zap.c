/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_zap.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zmq.h>

#include "common/ctr.h"
#include "common/log.h"
#include "common/now.h"

#define ZAP_ENDPOINT	"inproc://zeromq.zap.01"
#define ZAP_FRAMES_MAX	8
#define RELOAD_CHECK_MS 1000

struct cp_zap {
	void *zap;	      /* REP on ZAP_ENDPOINT; NULL without CURVE */
	void *mon[2];	      /* PAIRs: the monitors of PULL and PUB */
	void *ctl, *ctl_peer; /* PAIRs: the stop signal (ctl_peer is the owner's end) */
	pthread_t thread;
	bool started;
	char path[ZLINK_PATH_MAX];
	struct stat seen;    /* the allow-list file as last read */
	uint64_t checked_ms; /* when it was last looked at (monotonic) */
	struct cp_zap_client *clients;
	unsigned n_clients;
	struct cp_zap_counters ctr; /* written by the thread only */
};

int
cp_zap_load_clients(
	const char *path, struct cp_zap_client **out, unsigned *n, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	struct cp_zap_client *c;
	char line[512];
	unsigned count = 0, lineno = 0;

	if (f == NULL) {
		snprintf(err, errlen, "[controlplane] curve_clients_file: cannot open %s: %s", path,
			strerror(errno));
		return -errno;
	}
	c = calloc(CP_ZAP_CLIENTS_MAX, sizeof(*c));
	if (c == NULL) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char role[32], name[CP_ZAP_NAME_MAX + 1], key[ZLINK_KEY_LEN + 2], extra[2];
		const char *why = NULL;
		char *p = line + strspn(line, " \t");
		int got;

		lineno++;
		if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
			continue;
		if (strchr(line, '\n') == NULL && !feof(f))
			why = "the line is too long";
		else if ((got = sscanf(p, "%31s %64s %41s %1s", role, name, key, extra)) != 3)
			why = got > 3 ? "more than ROLE NAME PUBLIC_KEY"
				      : "expected ROLE NAME PUBLIC_KEY";
		else if (count == CP_ZAP_CLIENTS_MAX)
			why = "too many clients (at most 4096)";
		else if (strcmp(role, ZLINK_ROLE_DATAPLANE) == 0)
			c[count].role = CP_ZAP_DATAPLANE;
		else if (strcmp(role, ZLINK_ROLE_ORDER_WRITER) == 0)
			c[count].role = CP_ZAP_ORDER_WRITER;
		else
			why = "the role must be dataplane or order-writer";
		if (why == NULL && !zlink_name_ok(name))
			why = "the name must be 1..63 of A-Z a-z 0-9 . _ - (not starting with '.')";
		if (why == NULL &&
			(strlen(key) != ZLINK_KEY_LEN || zmq_z85_decode(c[count].key, key) == NULL))
			why = "the public key must be 40 Z85 characters (a NAME.pub of "
			      "flashgatectl curve keygen)";
		for (unsigned i = 0; why == NULL && i < count; i++)
			if (memcmp(c[i].key, c[count].key, sizeof(c[i].key)) == 0)
				why = "this key is listed already";
		if (why != NULL) {
			snprintf(err, errlen, "[controlplane] curve_clients_file: %s:%u: %s", path,
				lineno, why);
			fclose(f);
			free(c);
			return -EINVAL;
		}
		snprintf(c[count].name, sizeof(c[count].name), "%.63s", name);
		count++;
	}
	fclose(f);
	*out = c;
	*n = count;
	return 0;
}

static const struct cp_zap_client *
find_client(const struct cp_zap *z, const uint8_t *key)
{
	for (unsigned i = 0; i < z->n_clients; i++)
		if (memcmp(z->clients[i].key, key, 32) == 0)
			return &z->clients[i];
	return NULL;
}

/* Sends one frame of a ZAP reply; more: others follow. */
static void
send_frame(void *s, const void *data, size_t len, bool more)
{
	zmq_send(s, data, len, more ? ZMQ_SNDMORE : 0);
}

/*
 * One ZAP request (RFC 27): version, request id, domain, address, routing id, mechanism,
 * credentials. Answered 200 with the User-Id "ROLE:NAME" for a listed key whose role may use
 * the socket (the domain says which), 400 otherwise.
 */
static void
serve_zap(struct cp_zap *z)
{
	zmq_msg_t f[ZAP_FRAMES_MAX];
	unsigned n = 0;
	int more = 1;
	const struct cp_zap_client *cl = NULL;
	const char *status = "400", *text = "unknown key";
	char uid[96] = "";

	while (more) {
		zmq_msg_t scratch, *m = n < ZAP_FRAMES_MAX ? &f[n] : &scratch;

		zmq_msg_init(m);
		if (zmq_msg_recv(m, z->zap, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(m);
			if (n == 0)
				return; /* nothing waiting */
			break;
		}
		more = zmq_msg_more(m);
		if (m == &scratch)
			zmq_msg_close(m);
		else
			n++;
	}
	bool pub = n >= 3 && zmq_msg_size(&f[2]) == strlen(ZLINK_DOMAIN_PUB) &&
		   memcmp(zmq_msg_data(&f[2]), ZLINK_DOMAIN_PUB, strlen(ZLINK_DOMAIN_PUB)) == 0;
	char addr[64] = "?";

	if (n >= 4)
		snprintf(addr, sizeof(addr), "%.*s", (int)zmq_msg_size(&f[3]),
			(const char *)zmq_msg_data(&f[3]));
	if (n >= 7 && zmq_msg_size(&f[5]) == 5 && memcmp(zmq_msg_data(&f[5]), "CURVE", 5) == 0 &&
		zmq_msg_size(&f[6]) == 32)
		cl = find_client(z, zmq_msg_data(&f[6]));
	if (cl == NULL) {
		CTR_INC(z->ctr.refused_unknown);
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"links: refused a client from %s on the %s socket: its key is not in "
			"curve_clients_file",
			addr, pub ? "PUB" : "PULL");
	} else if (pub && cl->role != CP_ZAP_DATAPLANE) {
		/* The PUB socket carries the keys: only data planes subscribe. */
		CTR_INC(z->ctr.refused_role);
		text = "role may not subscribe";
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"links: refused %s (order-writer) from %s on the PUB socket: only data "
			"planes subscribe",
			cl->name, addr);
	} else {
		CTR_INC(z->ctr.allowed);
		status = "200";
		text = "OK";
		snprintf(uid, sizeof(uid), "%s:%s",
			cl->role == CP_ZAP_DATAPLANE ? ZLINK_ROLE_DATAPLANE
						     : ZLINK_ROLE_ORDER_WRITER,
			cl->name);
		LOG_INFO("links: %s connected from %s (%s)", uid, addr, pub ? "PUB" : "PULL");
	}
	send_frame(z->zap, "1.0", 3, true);
	if (n >= 2)
		send_frame(z->zap, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), true);
	else
		send_frame(z->zap, "", 0, true);
	send_frame(z->zap, status, 3, true);
	send_frame(z->zap, text, strlen(text), true);
	send_frame(z->zap, uid, strlen(uid), true);
	send_frame(z->zap, "", 0, false);
	for (unsigned i = 0; i < n; i++)
		zmq_msg_close(&f[i]);
}

/* Counts what a monitor reported. */
static void
read_monitor(struct cp_zap *z, void *mon)
{
	struct zlink_events ev = {0};

	zlink_monitor_read(mon, &ev);
	CTR_ADD(z->ctr.disconnected, ev.disconnected);
	CTR_ADD(z->ctr.handshake_failed, ev.handshake_failed);
	if (ev.handshake_failed > 0)
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"links: a client's handshake failed (a wrong server key, plaintext against "
			"CURVE, or not ZeroMQ)");
}

/* Reads the allow-list again when its file changed; keeps the old list when the new is bad. */
static void
maybe_reload(struct cp_zap *z)
{
	struct stat st;
	struct cp_zap_client *c;
	unsigned n;
	char err[512];

	/* At most once a second, however many handshakes wake the thread. */
	if (now_mono_ms() - z->checked_ms < RELOAD_CHECK_MS)
		return;
	z->checked_ms = now_mono_ms();
	if (stat(z->path, &st) != 0 ||
		(st.st_mtim.tv_sec == z->seen.st_mtim.tv_sec &&
			st.st_mtim.tv_nsec == z->seen.st_mtim.tv_nsec &&
			st.st_ino == z->seen.st_ino && st.st_size == z->seen.st_size))
		return;
	z->seen = st;
	if (cp_zap_load_clients(z->path, &c, &n, err, sizeof(err)) != 0) {
		CTR_INC(z->ctr.reload_errors);
		LOG_ERR("links: %s changed but is refused (the previous %u client key(s) stay in "
			"force): %s",
			z->path, z->n_clients, err);
		return;
	}
	free(z->clients);
	z->clients = c;
	z->n_clients = n;
	CTR_INC(z->ctr.reloads);
	LOG_NOTICE("links: %s read again: %u client key(s); connections made before keep their "
		   "key's role",
		z->path, n);
}

static void *
zap_main(void *arg)
{
	struct cp_zap *z = arg;

	for (;;) {
		zmq_pollitem_t it[4];
		int n = 0;

		it[n++] = (zmq_pollitem_t){.socket = z->ctl, .events = ZMQ_POLLIN};
		it[n++] = (zmq_pollitem_t){.socket = z->mon[0], .events = ZMQ_POLLIN};
		it[n++] = (zmq_pollitem_t){.socket = z->mon[1], .events = ZMQ_POLLIN};
		if (z->zap != NULL)
			it[n++] = (zmq_pollitem_t){.socket = z->zap, .events = ZMQ_POLLIN};
		if (zmq_poll(it, n, RELOAD_CHECK_MS) < 0) {
			if (zmq_errno() == EINTR)
				continue;
			LOG_ERR("links: the ZAP thread's poll failed: %s",
				zmq_strerror(zmq_errno()));
			break;
		}
		if (it[0].revents & ZMQ_POLLIN)
			break;
		if (n == 4 && (it[3].revents & ZMQ_POLLIN))
			serve_zap(z);
		if (it[1].revents & ZMQ_POLLIN)
			read_monitor(z, z->mon[0]);
		if (it[2].revents & ZMQ_POLLIN)
			read_monitor(z, z->mon[1]);
		if (z->zap != NULL)
			maybe_reload(z);
	}
	return NULL;
}

static void
close_sockets(struct cp_zap *z)
{
	void **s[] = {&z->zap, &z->mon[0], &z->mon[1], &z->ctl, &z->ctl_peer};
	int zero = 0;

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (*s[i] != NULL) {
			zmq_setsockopt(*s[i], ZMQ_LINGER, &zero, sizeof(zero));
			zmq_close(*s[i]);
			*s[i] = NULL;
		}
}

struct cp_zap *
cp_zap_start(void *zctx, const char *clients_path, void *pull, void *pub, char *err, size_t errlen)
{
	struct cp_zap *z = calloc(1, sizeof(*z));

	if (z == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (clients_path != NULL) {
		snprintf(z->path, sizeof(z->path), "%s", clients_path);
		if (cp_zap_load_clients(clients_path, &z->clients, &z->n_clients, err, errlen) !=
			0) {
			free(z);
			return NULL;
		}
		/* What was read is what is in force: a change after this is read again. */
		stat(clients_path, &z->seen);
		z->zap = zmq_socket(zctx, ZMQ_REP);
		if (z->zap == NULL || zmq_bind(z->zap, ZAP_ENDPOINT) != 0) {
			snprintf(err, errlen, "links: cannot bind the ZAP handler on %s: %s",
				ZAP_ENDPOINT, zmq_strerror(zmq_errno()));
			goto fail;
		}
	}
	z->mon[0] = zlink_monitor(zctx, pull, "pull");
	z->mon[1] = zlink_monitor(zctx, pub, "pub");
	z->ctl = zmq_socket(zctx, ZMQ_PAIR);
	z->ctl_peer = zmq_socket(zctx, ZMQ_PAIR);
	if (z->mon[0] == NULL || z->mon[1] == NULL || z->ctl == NULL || z->ctl_peer == NULL ||
		zmq_bind(z->ctl, "inproc://fg-zap-ctl") != 0 ||
		zmq_connect(z->ctl_peer, "inproc://fg-zap-ctl") != 0) {
		snprintf(err, errlen, "links: cannot set up the socket monitors: %s",
			zmq_strerror(zmq_errno()));
		goto fail;
	}
	/* pthread_create() is a full barrier: the sockets move to the new thread safely. */
	if (pthread_create(&z->thread, NULL, zap_main, z) != 0) {
		snprintf(err, errlen, "links: cannot start the ZAP thread");
		goto fail;
	}
	pthread_setname_np(z->thread, "fg-zap");
	z->started = true;
	return z;
fail:
	close_sockets(z);
	free(z->clients);
	free(z);
	return NULL;
}

void
cp_zap_stop(struct cp_zap *z)
{
	if (z == NULL)
		return;
	if (z->started) {
		zmq_send(z->ctl_peer, "", 0, 0);
		pthread_join(z->thread, NULL);
	}
	close_sockets(z);
	free(z->clients);
	free(z);
}

void
cp_zap_counters(const struct cp_zap *z, struct cp_zap_counters *out)
{
	const uint64_t *src = (const uint64_t *)&z->ctr;
	uint64_t *dst = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

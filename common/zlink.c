/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/zlink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "common/log.h"
#include "common/secret_input.h"

#define KEYGEN_HINT                                                                       \
	"make keys with `flashgatectl curve keygen NAME --dir DIR` (docs/operations.md, " \
	"\"Link keys\")"

bool
zlink_endpoint_is_loopback(const char *ep)
{
	char host[128];
	const char *h, *colon;
	size_t len;

	if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0)
		return true;
	if (strncmp(ep, "tcp://", 6) != 0)
		return false;
	h = ep + 6;
	/* "tcp://source;destination": the destination is what counts. */
	if (strchr(h, ';') != NULL)
		h = strchr(h, ';') + 1;
	colon = strrchr(h, ':');
	if (colon == NULL)
		return false;
	len = (size_t)(colon - h);
	if (len >= sizeof(host))
		return false;
	memcpy(host, h, len);
	host[len] = '\0';
	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		struct in6_addr a6;

		host[len - 1] = '\0';
		return inet_pton(AF_INET6, host + 1, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
	}
	struct in_addr a4;

	/* A name or an interface ("*", "eth0", "localhost") is not taken on trust. */
	return inet_pton(AF_INET, host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

bool
zlink_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n >= 1 && n <= 63 && name[0] != '.' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
		       n;
}

bool
zlink_has_curve(void)
{
	return zmq_has("curve") != 0;
}

/* Whether text is a Z85 key: 40 characters that decode to 32 bytes. */
static bool
key_ok(const char *text)
{
	uint8_t bin[32];
	bool ok = strlen(text) == ZLINK_KEY_LEN && zmq_z85_decode(bin, text) != NULL;

	explicit_bzero(bin, sizeof(bin));
	return ok;
}

int
zlink_read_public(
	const char *path, const char *what, char out[ZLINK_KEY_LEN + 1], char *err, size_t errlen)
{
	char text[128];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open %s: %s", what, path, strerror(errno));
		return -errno;
	}
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: reading %s: %s", what, path, strerror(errno));
		return -EIO;
	}
	text[n] = '\0';
	text[strcspn(text, " \t\r\n")] = '\0';
	if (!key_ok(text)) {
		snprintf(err, errlen,
			"%s: %s does not hold a CURVE public key (one line of 40 Z85 characters, "
			"as `flashgatectl curve keygen` writes NAME.pub)",
			what, path);
		return -EINVAL;
	}
	memcpy(out, text, ZLINK_KEY_LEN + 1);
	return 0;
}

/* Reads the secret key file (mode 0600) and derives the public key from it. */
static int
read_secret(const char *path, const char *what, struct zlink_keys *k, char *err, size_t errlen)
{
	size_t len;
	int rc = secret_read_text(
		path, what, k->secret_key, sizeof(k->secret_key), &len, err, errlen);

	if (rc != 0)
		return rc;
	if (!key_ok(k->secret_key) || zmq_curve_public(k->public_key, k->secret_key) != 0) {
		snprintf(err, errlen,
			"%s: %s does not hold a CURVE secret key (one line of 40 Z85 characters, "
			"as `flashgatectl curve keygen` writes NAME.key)",
			what, path);
		return -EINVAL;
	}
	return 0;
}

int
zlink_keys_load(const struct zlink_settings *s, bool is_server, const char *section,
	const char *const *eps, unsigned n, struct zlink_keys *k, char *err, size_t errlen)
{
	char what[96];
	int rc = 0;

	memset(k, 0, sizeof(*k));
	if (s->secret_key_file[0] == '\0') {
		if (!is_server && s->server_key_file[0] != '\0') {
			snprintf(err, errlen,
				"[%s] curve_server_key_file is set but curve_secret_key_file "
				"is not: a CURVE client needs its own key pair too; %s",
				section, KEYGEN_HINT);
			return -EINVAL;
		}
		for (unsigned i = 0; i < n; i++) {
			if (zlink_endpoint_is_loopback(eps[i]))
				continue;
			if (s->insecure_plaintext) {
				LOG_WARN("[%s] insecure_plaintext_links = yes: the ZeroMQ "
					 "endpoint %s is not on this host and its link is "
					 "PLAINTEXT, without authentication: whoever reaches it "
					 "reads the sale keys and can push records. For a closed "
					 "lab network only; %s",
					section, eps[i], KEYGEN_HINT);
				continue;
			}
			snprintf(err, errlen,
				"[%s] the ZeroMQ endpoint %s is not on this host and the link "
				"has no CURVE keys: whoever reaches it could read the sale keys "
				"or push records. Set curve_secret_key_file%s in [%s]: %s; or, "
				"on a closed lab network only, insecure_plaintext_links = yes",
				section, eps[i], is_server ? "" : " and curve_server_key_file",
				section, KEYGEN_HINT);
			return -EPERM;
		}
		return 0;
	}
	if (!zlink_has_curve()) {
		snprintf(err, errlen,
			"[%s] curve_secret_key_file is set but the libzmq this program runs "
			"with has no CURVE (zmq_has(\"curve\") is false): install a libzmq "
			"built with libsodium (Debian's libzmq5 is)",
			section);
		return -ENOTSUP;
	}
	snprintf(what, sizeof(what), "[%s] curve_secret_key_file", section);
	rc = read_secret(s->secret_key_file, what, k, err, errlen);
	if (rc == 0 && !is_server) {
		snprintf(what, sizeof(what), "[%s] curve_server_key_file", section);
		if (s->server_key_file[0] == '\0') {
			snprintf(err, errlen,
				"%s is not set: a CURVE client needs the control plane's "
				"public key (the NAME.pub of its key pair)",
				what);
			rc = -EINVAL;
		} else {
			rc = zlink_read_public(
				s->server_key_file, what, k->server_key, err, errlen);
		}
	}
	if (rc != 0) {
		zlink_keys_wipe(k);
		return rc;
	}
	k->curve = true;
	return 0;
}

/* Sets one option; on failure says which in err. */
static int
set_opt(void *sock, int opt, const void *v, size_t len, const char *name, char *err, size_t errlen)
{
	if (zmq_setsockopt(sock, opt, v, len) == 0)
		return 0;
	snprintf(err, errlen, "ZeroMQ option %s: %s", name, zmq_strerror(zmq_errno()));
	return -1;
}

int
zlink_socket_setup(void *sock, const struct zlink_keys *k, const char *domain, size_t max_msg,
	char *err, size_t errlen)
{
	int64_t maxsize = (int64_t)((max_msg > ZLINK_COMMAND_MAX ? max_msg : ZLINK_COMMAND_MAX) +
				    ZLINK_CURVE_OVERHEAD);
	int one = 1;

	if (set_opt(sock, ZMQ_MAXMSGSIZE, &maxsize, sizeof(maxsize), "ZMQ_MAXMSGSIZE", err,
		    errlen) != 0)
		return -1;
	if (!k->curve)
		return 0;
	if (domain != NULL)
		return set_opt(sock, ZMQ_ZAP_DOMAIN, domain, strlen(domain), "ZMQ_ZAP_DOMAIN", err,
			       errlen) != 0 ||
				       set_opt(sock, ZMQ_CURVE_SERVER, &one, sizeof(one),
					       "ZMQ_CURVE_SERVER", err, errlen) != 0 ||
				       set_opt(sock, ZMQ_CURVE_SECRETKEY, k->secret_key,
					       ZLINK_KEY_LEN, "ZMQ_CURVE_SECRETKEY", err,
					       errlen) != 0
			       ? -1
			       : 0;
	return set_opt(sock, ZMQ_CURVE_SERVERKEY, k->server_key, ZLINK_KEY_LEN,
		       "ZMQ_CURVE_SERVERKEY", err, errlen) != 0 ||
			       set_opt(sock, ZMQ_CURVE_PUBLICKEY, k->public_key, ZLINK_KEY_LEN,
				       "ZMQ_CURVE_PUBLICKEY", err, errlen) != 0 ||
			       set_opt(sock, ZMQ_CURVE_SECRETKEY, k->secret_key, ZLINK_KEY_LEN,
				       "ZMQ_CURVE_SECRETKEY", err, errlen) != 0
		       ? -1
		       : 0;
}

void
zlink_keys_wipe(struct zlink_keys *k)
{
	explicit_bzero(k, sizeof(*k));
}

#define MONITOR_EVENTS                                                                \
	(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | \
		ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |     \
		ZMQ_EVENT_DISCONNECTED)

void *
zlink_monitor(void *zctx, void *sock, const char *name)
{
	char ep[64];
	void *pair;

	snprintf(ep, sizeof(ep), "inproc://fg-monitor-%s", name);
	if (zmq_socket_monitor(sock, ep, MONITOR_EVENTS) != 0)
		return NULL;
	pair = zmq_socket(zctx, ZMQ_PAIR);
	if (pair != NULL && zmq_connect(pair, ep) != 0) {
		zmq_close(pair);
		return NULL;
	}
	return pair;
}

void
zlink_monitor_read(void *mon, struct zlink_events *ev)
{
	/* An event is two frames: (u16 event, u32 value), then the endpoint. */
	for (;;) {
		zmq_msg_t m;
		uint16_t e = 0;

		zmq_msg_init(&m);
		if (zmq_msg_recv(&m, mon, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&m);
			return;
		}
		if (zmq_msg_size(&m) >= sizeof(e))
			memcpy(&e, zmq_msg_data(&m), sizeof(e));
		while (zmq_msg_more(&m))
			if (zmq_msg_recv(&m, mon, 0) < 0)
				break;
		zmq_msg_close(&m);
		if (e == ZMQ_EVENT_DISCONNECTED)
			ev->disconnected++;
		else if (e == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
			ev->handshake_ok++;
		else if (e & (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
				     ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
				     ZMQ_EVENT_HANDSHAKE_FAILED_AUTH))
			ev->handshake_failed++;
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_ZAP_H
#define FG_CP_ZAP_H
/*
 * The control plane's gatekeeper of its ZeroMQ links, on a thread of its own so that no
 * handshake ever waits for a decision, nor a decision for a handshake:
 *   - with CURVE, the ZAP handler (RFC 27, inproc://zeromq.zap.01): a client is let in only
 *     when its public key is in the allow-list file ([controlplane] curve_clients_file), and its
 *     ZAP User-Id becomes "ROLE:NAME" from that file, which every message it sends carries
 *     (zmq_msg_gets(msg, "User-Id")); only data plane keys may subscribe to the PUB socket.
 *     The file is read again when it changes (a client key added or removed without a
 *     restart; a file with an error is refused, logged, and the previous list kept);
 *   - the monitors of both sockets: failed handshakes and dropped connections are counted (a
 *     message over ZMQ_MAXMSGSIZE makes libzmq drop its connection: it shows here).
 *
 * The allow-list file: one client a line, "ROLE NAME PUBLIC_KEY", ROLE "dataplane" or
 * "order-writer", NAME 1..63 of [A-Za-z0-9._-], PUBLIC_KEY the 40 Z85 characters of the
 * client's NAME.pub; '#' starts a comment line; a key at most once.
 */
#include <stdint.h>

#include "common/zlink.h"

#define CP_ZAP_CLIENTS_MAX 4096
#define CP_ZAP_NAME_MAX	   64

enum cp_zap_role { CP_ZAP_DATAPLANE = 1, CP_ZAP_ORDER_WRITER = 2 };

struct cp_zap_client {
	uint8_t key[32]; /* the public key, binary */
	enum cp_zap_role role;
	char name[CP_ZAP_NAME_MAX];
};

struct cp_zap_counters {
	uint64_t allowed;	   /* handshakes let in */
	uint64_t refused_unknown;  /* a key not in the list */
	uint64_t refused_role;	   /* a listed key on a socket its role may not use */
	uint64_t handshake_failed; /* monitor: HANDSHAKE_FAILED_* (a wrong server key, garbage) */
	uint64_t disconnected;	   /* monitor: connections that ended, an oversized message's too */
	uint64_t reloads;	   /* the allow-list read again after a change */
	uint64_t reload_errors;	   /* a changed allow-list refused (the previous one kept) */
};

struct cp_zap;

/*
 * Reads an allow-list file into a new array (*out, to free(), *n entries). Returns 0, or a
 * negative errno with one line in err naming the file and line. Nothing is kept on error.
 */
int cp_zap_load_clients(
	const char *path, struct cp_zap_client **out, unsigned *n, char *err, size_t errlen);

/*
 * Starts the thread in the ZeroMQ context zctx: the ZAP handler with the allow-list at
 * clients_path (NULL: no ZAP handler, the links are plaintext) and monitors of the pull and
 * pub sockets (created in zctx, not bound yet; called from the thread that owns them).
 * Returns the handle, or NULL with err (the list refused, no memory, ZeroMQ's error).
 */
struct cp_zap *cp_zap_start(
	void *zctx, const char *clients_path, void *pull, void *pub, char *err, size_t errlen);

/* Stops the thread and closes its sockets; before the context is terminated. NULL: no-op. */
void cp_zap_stop(struct cp_zap *z);

/* A copy of the counters (any thread). */
void cp_zap_counters(const struct cp_zap *z, struct cp_zap_counters *out);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_LINKS_H
#define FG_CP_LINKS_H
/*
 * The control plane's ZeroMQ sockets: PULL (bound) receives what data planes
 * push — reservations, snapshot requests, result queries, counters — and PUB
 * (bound) sends everything to every data plane. Messages are the records of
 * common/wire.h; a long array is cut into messages of at most
 * CP_LINKS_RECS_PER_MSG records.
 *
 * With CURVE keys the control plane is the CURVE server of both sockets and only the clients
 * of its allow-list get in (controlplane/cp_zap.h); each message then carries its sender's
 * role, and a message of a type the role may not send is dropped and counted (wrong_role):
 * RESULT and RESTOCK only from order writers, the rest only from data planes. Without keys
 * (loopback, or the lab opt-out) every sender may send every type, as before.
 * Every socket has ZMQ_MAXMSGSIZE from the wire format's largest message (common/wire.h).
 */
#include <stdbool.h>
#include <stdint.h>

#include "common/wire.h"
#include "common/zlink.h"
#include "controlplane/cp_zap.h"

#define CP_LINKS_RECS_PER_MSG 1024

struct cp_links_counters {
	uint64_t msgs_in[WIRE_T_MAX];
	uint64_t records_in[WIRE_T_MAX];
	uint64_t msgs_out[WIRE_T_MAX];
	uint64_t records_out[WIRE_T_MAX];
	uint64_t decode_errors[WIRE_ERR_MAX];
	uint64_t wrong_direction; /* a control-plane type arriving on PULL */
	uint64_t wrong_role;	  /* a type the sender's key may not send (CURVE only) */
	uint64_t send_errors;
	struct cp_zap_counters zap; /* handshakes and connections (the ZAP thread's) */
};

struct cp_links;

/*
 * Creates the context and binds PULL on pull_ep and PUB on pub_ep. sender_id
 * names this control plane on the wire. With keys->curve both are CURVE servers
 * and clients_file is the allow-list (read here: an error in it fails the open;
 * keys->clients_file, the local key directory's, when set, instead);
 * otherwise clients_file is ignored. Returns NULL with err on failure (an
 * endpoint in use or malformed, the allow-list refused).
 */
struct cp_links *cp_links_open(const char *pull_ep, const char *pub_ep, uint32_t sender_id,
	const struct zlink_keys *keys, const char *clients_file, char *err, size_t errlen);

/* Closes the sockets (dropping what is unsent after 1 s) and frees l. NULL is a no-op. */
void cp_links_close(struct cp_links *l);

/* The PULL socket, for zmq_poll(). */
void *cp_links_pull_socket(struct cp_links *l);

/*
 * Receives one message without waiting and validates it. Returns 1 with *m
 * describing it (valid until the next call), 0 when nothing is waiting, or a
 * negative WIRE_ERR_* for a malformed message or one its sender's role may not
 * send (counted, to be skipped).
 */
int cp_links_recv(struct cp_links *l, struct wire_msg *m);

/*
 * Publishes count records of type (cut into messages of at most
 * CP_LINKS_RECS_PER_MSG). Returns 0, or -EIO when ZeroMQ refused a message
 * (counted; a PUB never blocks, it drops for a subscriber that is too slow,
 * and that data plane sees the gap and asks for a snapshot).
 */
int cp_links_publish(struct cp_links *l, enum wire_type type, const void *recs, unsigned count);

/* A copy of the counters. */
void cp_links_counters(const struct cp_links *l, struct cp_links_counters *out);

#endif

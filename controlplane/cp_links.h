/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_LINKS_H
#define FG_CP_LINKS_H
/*
 * The control plane's ZeroMQ sockets: PULL (bound) receives what data planes
 * push — reservations, snapshot requests, result queries, counters — and PUB
 * (bound) sends everything to every data plane. Messages are the records of
 * common/wire.h; a long array is cut into messages of at most
 * CP_LINKS_RECS_PER_MSG records.
 */
#include <stdbool.h>
#include <stdint.h>

#include "common/wire.h"

#define CP_LINKS_RECS_PER_MSG 1024
#define CP_LINKS_RX_MAX       (WIRE_HDR_SIZE + 65535 * 32)

struct cp_links_counters {
	uint64_t msgs_in[WIRE_T_MAX];
	uint64_t records_in[WIRE_T_MAX];
	uint64_t msgs_out[WIRE_T_MAX];
	uint64_t records_out[WIRE_T_MAX];
	uint64_t decode_errors[WIRE_ERR_MAX];
	uint64_t wrong_direction; /* a control-plane type arriving on PULL */
	uint64_t send_errors;
};

struct cp_links;

/*
 * Creates the context and binds PULL on pull_ep and PUB on pub_ep. sender_id
 * names this control plane on the wire. Returns NULL with err on failure (an
 * endpoint in use or malformed).
 */
struct cp_links *cp_links_open(const char *pull_ep, const char *pub_ep, uint32_t sender_id,
	char *err, size_t errlen);

/* Closes the sockets (dropping what is unsent after 1 s) and frees l. NULL is a no-op. */
void cp_links_close(struct cp_links *l);

/* The PULL socket, for zmq_poll(). */
void *cp_links_pull_socket(struct cp_links *l);

/*
 * Receives one message without waiting and validates it. Returns 1 with *m
 * describing it (valid until the next call), 0 when nothing is waiting, or a
 * negative WIRE_ERR_* for a malformed message (counted, to be skipped).
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

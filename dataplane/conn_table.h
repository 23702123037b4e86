/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_CONN_TABLE_H
#define FG_DP_CONN_TABLE_H
/*
 * A worker's table of kept (persistent) TCP connections from trusted edges (docs/edge.md,
 * "Kept connections"): a fixed number of entries allocated at start
 * (dataplane.kept_connections), found by their 4-tuple through an open-addressing index of
 * twice as many slots (linear probing, deletion by backward shift, so no tombstones). An entry
 * holds the connection's TCP state (RFC 9293 §3.3.1: RCV.NXT, SND.UNA, SND.NXT, SND.WND) and
 * the answer it sent last, kept until the peer acknowledges it so that it can be sent again,
 * byte for byte, when the request is retransmitted. Only its worker's lcore touches it: no
 * locks. Nothing is allocated after conn_table_create().
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_ether.h>
#include <rte_prefetch.h>

#include "dataplane/edge.h"

/* The longest answer a kept connection keeps; a longer one is sent with Connection: close. */
#define CONN_ANS_MAX 1200
#define CONN_TABLE_MAX (1u << 20) /* entries per worker (dataplane.kept_connections) */
#define CONN_RTO_MS    250 /* unacknowledged data is first sent again after this */
#define CONN_RETRIES   6   /* times it is sent again, each after twice the wait, before a RST */

enum conn_state {
	CONN_FREE = 0,
	CONN_ESTABLISHED, /* requests are answered */
	CONN_CLOSING,     /* our FIN sent after the answer (close asked, idle, peer's FIN) */
};

struct conn {
	/* The key, as in the packet (network byte order); src_ip 0: a free entry. */
	uint32_t src_ip;
	uint16_t src_port, dst_port;
	uint8_t state;      /* enum conn_state */
	uint8_t port;       /* the worker's port it came in on */
	uint8_t retries;    /* of the held answer (or FIN) by the sweep, since the last ACK */
	bool fin_sent;      /* our FIN follows the held answer: sequence ans_seq + ans_len */
	bool peer_fin;      /* the peer's FIN was received (rcv_nxt counts it) */
	bool has_request;   /* data came on it: a PROXY header is no longer accepted */
	bool proxied;       /* its PROXY header named the client (client) */
	bool pending;       /* a request taken, its answer not yet sent (routed a frame late) */
	bool requested;     /* a request was taken on it (a PROXY header alone is none) */
	uint16_t mss;       /* the largest segment we send on it (the cookie's MSS, <= ours) */
	uint16_t ans_len;   /* bytes of ans: the last answer, from sequence ans_seq */
	uint16_t req_len;   /* the payload length of the request ans answers */
	uint8_t probes;     /* zero-window probes unanswered (kept_probe_slow()) */
	bool zwnd;          /* the peer's zero window holds our data back, since zwnd_ms */
	/* RFC 9293 §3.3.1 (no window scaling: our SYN-ACK offers none). */
	uint32_t rcv_nxt, snd_una, snd_nxt, snd_wnd, max_wnd;
	uint32_t ans_seq;   /* the sequence number of ans[0] */
	uint32_t req_seq;   /* the sequence number of the request ans answers */
	uint64_t last_ms;   /* the last acceptable segment from the peer */
	uint64_t sent_ms;   /* the held answer's (or FIN's) last sending, or window probe */
	uint64_t zwnd_ms;   /* when the zero window began holding the answer back (zwnd) */
	uint64_t open_ms;   /* when the entry was made (a first request is due within
			     * dataplane.kept_first_request_timeout) */
	uint32_t client_slot; /* its client's count in per_client + 1 (conn_client_take()); 0 */
	struct rte_ether_addr peer_mac;
	struct edge_client client; /* from the connection's PROXY header, when proxied */
	/* Which connection holds the entry: changed by every conn_insert() (and kept, unlike
	 * the fields above, across conn_remove()), so that a request held for a connection
	 * whose entry was freed and taken again is told apart from the new one's. */
	uint32_t gen;
	char ans[CONN_ANS_MAX];
};

struct conn_table {
	uint32_t cap;       /* entries */
	uint32_t mask;      /* index slots - 1 (2 * cap rounded up to a power of two) */
	uint32_t used;      /* entries in use */
	uint32_t n_free;    /* entries on the free stack */
	uint32_t sweep;     /* the next entry conn_table_sweep_next() looks at */
	uint32_t seed;
	uint32_t *slot;     /* index: entry number + 1, 0 empty */
	uint32_t *free;     /* the free stack of entry numbers */
	struct conn *e;     /* the entries */
	/* Entries per client address named by a PROXY header, counted in pc_mask + 1 slots
	 * (CONN_CLIENT_SLOTS, or the index's size when more) by a seeded hash of the address:
	 * two addresses may share a slot, and then a bound. */
	uint16_t *per_client;
	uint32_t pc_mask;
};

/*
 * A table of cap kept connections (1..CONN_TABLE_MAX) on NUMA socket socket, all memory
 * allocated here (hugepage memory: rte_zmalloc_socket()). Returns NULL when cap is out of
 * range or memory is short (rte_errno set); conn_table_mem_size() says how much it needs.
 */
struct conn_table *conn_table_create(uint32_t cap, int socket);

/* The bytes conn_table_create(cap) allocates. */
size_t conn_table_mem_size(uint32_t cap);

/* Frees t and everything it holds; t may be NULL. */
void conn_table_free(struct conn_table *t);

/* The index slot of a 4-tuple (addresses and ports as in the packet). */
static inline uint32_t
conn_hash(const struct conn_table *t, uint32_t src_ip, uint16_t src_port, uint16_t dst_port)
{
	uint64_t k = ((uint64_t)src_ip << 32 | (uint32_t)src_port << 16 | dst_port) ^ t->seed;

	k *= UINT64_C(0x9e3779b97f4a7c15);
	return (uint32_t)(k >> 32) & t->mask;
}

/*
 * The entry of a 4-tuple, or NULL, searched from its index slot h: conn_hash()'s answer for
 * that 4-tuple, computed earlier (conn_prefetch_slot()'s, a few frames ahead). h must be that
 * 4-tuple's own slot: from another, an entry stored past it may not be found.
 */
static inline struct conn *
conn_lookup_at(const struct conn_table *t, uint32_t h, uint32_t src_ip, uint16_t src_port,
	uint16_t dst_port)
{
	for (uint32_t i = h;; i = (i + 1) & t->mask) {
		uint32_t s = t->slot[i];

		if (s == 0)
			return NULL;
		struct conn *c = &t->e[s - 1];

		if (likely(c->src_ip == src_ip && c->src_port == src_port &&
			    c->dst_port == dst_port))
			return c;
	}
}

/* The entry of a 4-tuple, or NULL. */
static inline struct conn *
conn_lookup(const struct conn_table *t, uint32_t src_ip, uint16_t src_port, uint16_t dst_port)
{
	return conn_lookup_at(
		t, conn_hash(t, src_ip, src_port, dst_port), src_ip, src_port, dst_port);
}

/* conn_prefetch_slot()'s answer for a frame that is no trusted edge's TCP segment. */
#define CONN_NO_SLOT UINT32_MAX

/*
 * The look-ahead for conn_lookup(), a few frames early: prefetches the index slot of a 4-tuple
 * and returns it (always below CONN_NO_SLOT), for conn_prefetch_entry() a frame later and
 * conn_lookup_at() when the frame goes in.
 */
static inline uint32_t
conn_prefetch_slot(const struct conn_table *t, uint32_t src_ip, uint16_t src_port,
	uint16_t dst_port)
{
	uint32_t h = conn_hash(t, src_ip, src_port, dst_port);

	rte_prefetch0(&t->slot[h]);
	return h;
}

/*
 * The look-ahead's second step, once conn_prefetch_slot()'s line has arrived: prefetches the
 * head (every field before ans) of the entry index slot h names, if any. A 4-tuple stored past
 * h (a collision) is left to conn_lookup(); a slot changed since only wastes the prefetch.
 */
static inline void
conn_prefetch_entry(const struct conn_table *t, uint32_t h)
{
	uint32_t s = t->slot[h];

	if (s != 0) {
		const char *c = (const char *)&t->e[s - 1];

		rte_prefetch0(c);
		rte_prefetch0(c + RTE_CACHE_LINE_SIZE);
		rte_prefetch0(c + offsetof(struct conn, ans) - 1);
	}
}

/*
 * A new entry for a 4-tuple that has none (conn_lookup() said so), zeroed but for its key,
 * state CONN_ESTABLISHED and a generation (gen) other than the entry's last one; NULL when
 * the table is full.
 */
struct conn *conn_insert(struct conn_table *t, uint32_t src_ip, uint16_t src_port,
	uint16_t dst_port);

/* Frees c, an entry of t in use (and its count of conn_client_take(), if any). */
void conn_remove(struct conn_table *t, struct conn *c);

/* Most entries of one client conn_client_take() allows (dataplane.kept_per_client's maximum). */
#define CONN_PER_CLIENT_MAX 65535u
/* The fewest slots clients are counted in (128 kB a worker): two addresses share one with a
 * chance of 1 in 65,536. */
#define CONN_CLIENT_SLOTS (1u << 16)

/*
 * Counts entry c of t (in use, not yet counted) for client cl, the address its PROXY header
 * named (an IPv6 client by its /64, ::ffff:a.b.c.d as a.b.c.d, as the per-IP limit counts
 * them), when that address holds fewer than max (1..CONN_PER_CLIENT_MAX) entries of t: returns
 * true, and conn_remove() uncounts it. Returns false, counting nothing, when it holds max
 * already. Addresses are counted by a seeded hash: one that shares its slot with another
 * shares that one's bound (a chance of 1 in CONN_CLIENT_SLOTS per pair, or fewer). A client
 * of family 0 (a PROXY
 * LOCAL or UNKNOWN header: the edge's own connection) is not counted: true.
 */
bool conn_client_take(struct conn_table *t, struct conn *c, const struct edge_client *cl,
	uint32_t max);

#endif

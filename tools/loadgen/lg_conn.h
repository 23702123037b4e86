/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_CONN_H
#define FG_LG_CONN_H
/*
 * The client side's per-connection state. The data plane keeps none; the load generator is
 * the clients, so it must remember what each simulated browser sent. The table has one slot
 * per concurrent client; slot i always uses TCP source port port_base + i, so the answer's
 * destination port finds the slot in one step, and the slot's address, sequence numbers and
 * state tell a current segment from a late one of an earlier connection on the same port.
 */
#include <stdbool.h>
#include <stdint.h>

#include "common/pow.h"
#include "common/token.h"

#define LG_REQ_MAX  800 /* a request, and a PROXY v2 header before a connection's first */
#define LG_RESP_MAX 2048
#define LG_PATH_MAX 128

enum lg_conn_state {
	LG_CS_FREE, /* no client */
	LG_CS_IDLE, /* a sale user between two connections (waiting for Retry-After or a poll) */
	LG_CS_SYN_SENT, /* SYN sent, waiting for the SYN-ACK */
	LG_CS_REQ_SENT, /* handshake ACK with the request sent, reading the answer */
	LG_CS_FIN_SENT, /* answer and its FIN read, our FIN sent, waiting for its ACK */
};

/* A sale user's challenge (the token answer's, docs/api.md). */
enum lg_pow_state {
	LG_POW_NONE,	/* no challenge: the reserve goes without X-Flash-Solution */
	LG_POW_WAITING, /* in line for the solver (lg_client_solve()) */
	LG_POW_SOLVED,	/* solution in sol: the reserves carry it */
	LG_POW_FAILED,	/* not solved within --pow-max-tries: the user gives up */
};

#define LG_POS_NONE UINT32_MAX /* no position seen yet */

/* What the current connection asks (docs/api.md). */
enum lg_step {
	LG_STEP_HEALTHZ,
	LG_STEP_TOKEN,	 /* POST /api/v1/events/{id}/token with the session token */
	LG_STEP_RESERVE, /* POST {reserve_path} with the purchase token */
	LG_STEP_RESULT,	 /* GET {result_path} with the receipt, until the status is final */
	/* Flood connections (tools/loadgen/lg_flood.h), one request each: */
	LG_STEP_FLOOD_SESSION_FORGED,  /* POST .../token, a session under a random key: 401 */
	LG_STEP_FLOOD_SESSION_NONE,    /* POST .../token without Authorization: 401 */
	LG_STEP_FLOOD_PURCHASE_FORGED, /* POST {reserve_path}, a forged purchase token: 403 */
	LG_STEP_FLOOD_PURCHASE_NONE,   /* POST {reserve_path} without X-Flash-Token: 403 */
	LG_STEP_FLOOD_ONE_IP,	       /* POST .../token with a valid session, from one address */
};

#define LG_STEP_FLOOD_FIRST  LG_STEP_FLOOD_SESSION_FORGED
#define LG_UNSIGNED_VARIANTS 4 /* the unsigned flood's steps, taken in turn */

struct lg_conn {
	uint8_t state;	  /* enum lg_conn_state */
	uint8_t step;	  /* enum lg_step */
	uint8_t rtx;	  /* retransmissions of the segment now outstanding */
	uint8_t verdict;  /* after the answer: 1 go on, 2 + enum lg_outcome: the client ends */
	uint8_t checking; /* sale: polling after a 410 to a reserve (an earlier try may hold) */
	uint8_t clicks;	  /* sale: reserves admitted so far (--double-click sends a second) */
	uint8_t bot;	  /* sale: the user is a bot (--bots) */
	uint8_t pow;	  /* sale: enum lg_pow_state */
	uint8_t plain_poll; /* sale: the wait before the next step is --poll-ms (wake queue) */
	uint16_t sport;
	uint16_t req_len;
	uint16_t resp_len;
	uint16_t attempts; /* answers 425/429/503 to this user so far */
	uint32_t polls;	   /* result polls so far */
	uint32_t cip;	   /* client address, host order */
	uint32_t isn;	   /* our initial sequence number */
	uint32_t seq0;	   /* the sequence number of the request now sent (isn + 1 but on kept) */
	uint32_t left;	   /* kept modes: requests still to send on this client, the current one too */
	uint32_t rcv_nxt;  /* next sequence number expected from the server */
	uint64_t t_syn;	   /* TSC when the first SYN of this connection left */
	uint64_t t_req;	   /* TSC when the request first left */
	uint64_t t_due;	   /* TSC of the next retransmission, or of the next connection (IDLE) */
	uint64_t t_next;   /* sale: TSC the next step is due, said by the answer (judge()) */
	uint64_t user;	   /* sale: the user id; healthz: the connection number */
	uint64_t t_chal;   /* sale: TSC when the challenge came */
	uint32_t last_pos; /* sale: the last position in line a poll gave, or LG_POS_NONE */
	char sol[POW_SOLUTION_MAX + 1]; /* sale: the challenge's solution */
	char req[LG_REQ_MAX];
	char resp[LG_RESP_MAX];
	char token[TOK_BUF_SIZE]; /* purchase token, then receipt */
	char path[LG_PATH_MAX];	  /* reserve path, then result path */
};

/* A slot that waits a short time (a result poll) and when its wait ends. */
struct lg_wake {
	uint32_t slot;
	uint64_t due; /* its t_due when it was queued: a slot whose t_due changed is not woken */
};

/* Wake queue entries per slot: a slot may be queued again before its stale entry leaves. */
#define LG_WAKE_PER_SLOT 4

struct lg_table {
	uint32_t n;	    /* slots */
	uint32_t active;    /* slots not free */
	uint16_t port_base; /* source port of slot 0 */
	uint32_t n_free;
	uint32_t *free_list; /* stack of free slot indexes */
	struct lg_conn *c;
	/* Short waits in the order they began (a ring of wake_cap): the timer scan runs every
	 * RTO/4, far too seldom for a poll every millisecond, so these are woken on time. */
	struct lg_wake *wake;
	uint32_t wake_cap, wake_head, wake_n;
	/* Waits of any length (think times, Retry-After, a queued buyer's wait_ms): a min-heap by
	 * due time, so each is woken on time whatever the order they began in. */
	struct lg_wake *timer;
	uint32_t timer_cap, timer_n;
};

/*
 * Makes a table of n slots (1..65535 - port_base) using source ports port_base.. Returns it,
 * or NULL when n is out of range or memory is short.
 */
struct lg_table *lg_table_create(uint32_t n, uint16_t port_base);

/* Frees t and everything in it; NULL is a no-op. */
void lg_table_free(struct lg_table *t);

/* Takes a free slot (state FREE, its source port set). Returns it, or NULL when all are busy. */
static inline struct lg_conn *
lg_table_take(struct lg_table *t)
{
	if (t->n_free == 0)
		return NULL;
	uint32_t i = t->free_list[--t->n_free];
	struct lg_conn *c = &t->c[i];

	c->sport = (uint16_t)(t->port_base + i);
	t->active++;
	return c;
}

/* Gives slot c back; it becomes FREE. */
static inline void
lg_table_put(struct lg_table *t, struct lg_conn *c)
{
	c->state = LG_CS_FREE;
	t->free_list[t->n_free++] = (uint32_t)(c - t->c);
	t->active--;
}

/*
 * Queues slot c, IDLE until c->t_due, to be woken by lg_table_wake_next(). Only for short
 * waits of one length (queued in the order they began, they end in about that order). Returns
 * false when the queue is full: the timer scan wakes the slot then, later.
 */
static inline bool
lg_table_wake_at(struct lg_table *t, const struct lg_conn *c)
{
	if (t->wake_n == t->wake_cap)
		return false;
	uint32_t i = t->wake_head + t->wake_n;

	if (i >= t->wake_cap)
		i -= t->wake_cap;
	t->wake[i] = (struct lg_wake){ .slot = (uint32_t)(c - t->c), .due = c->t_due };
	t->wake_n++;
	return true;
}

/*
 * The next queued slot whose wait ended by now and that still waits for it (IDLE with the
 * t_due it was queued with), or NULL. Entries of slots that moved on are dropped on the way.
 * The queue is read in order: an entry due later than one behind it holds that one back by at
 * most the difference of the two waits' starts.
 */
static inline struct lg_conn *
lg_table_wake_next(struct lg_table *t, uint64_t now)
{
	while (t->wake_n != 0 && t->wake[t->wake_head].due <= now) {
		struct lg_wake k = t->wake[t->wake_head];
		struct lg_conn *c = &t->c[k.slot];

		if (++t->wake_head == t->wake_cap)
			t->wake_head = 0;
		t->wake_n--;
		if (c->state == LG_CS_IDLE && c->t_due == k.due)
			return c;
	}
	return NULL;
}

/*
 * Queues slot c, IDLE until c->t_due, to be woken by lg_table_timer_next() at that time: for
 * waits of any length. Returns false when the heap is full: the timer scan wakes the slot then.
 */
bool lg_table_timer_at(struct lg_table *t, const struct lg_conn *c);

/*
 * The slot of the earliest timer due by now that still waits for it (IDLE with the t_due it was
 * queued with), or NULL. Timers of slots that moved on are dropped on the way.
 */
struct lg_conn *lg_table_timer_next(struct lg_table *t, uint64_t now);

/*
 * The slot that a segment to client address cip, port dport belongs to, or NULL if no busy
 * slot has that address and port (a late segment of an old connection, or not ours).
 */
static inline struct lg_conn *
lg_table_find(struct lg_table *t, uint32_t cip, uint16_t dport)
{
	uint32_t i = (uint32_t)(uint16_t)(dport - t->port_base);

	if (i >= t->n)
		return NULL;
	struct lg_conn *c = &t->c[i];

	if (c->state == LG_CS_FREE || c->cip != cip)
		return NULL;
	return c;
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fg_testpeer: a TEST TOOL that plays the control plane's side of the ZeroMQ links for the
 * data plane's bridge. It is not a control plane: no Redis, no persistence, one process.
 *
 *   fg_testpeer --pull ENDPOINT --pub ENDPOINT [options]
 *
 * It binds PULL (reservations, snapshot requests and result queries from data planes) and
 * PUB (everything to data planes). On SNAPSHOT_REQUEST it publishes a snapshot of what the
 * options gave it; it answers each RESERVE batch with one RESULT per record from an
 * in-memory stock per event (reserved, duplicate for a second reservation of a user, sold out
 * when the stock is gone, then a SOLD_OUT message); it answers RESULT_QUERY from what it
 * decided. It counts every reservation id it received, so a test can check "exactly once".
 *
 * options:
 *   --id N                 sender id (default 100)
 *   --event ID:STOCK[:NAME]  a sale open from an hour ago to an hour from now (repeatable)
 *   --key auth|sale:KID:SECRET[:current]  SECRET is 16..64 ASCII bytes (repeatable)
 *   --rule "ip A.B.C.D[/N]" | "user N" | "device ID"   (repeatable)
 *   --limits IPR,IPB,USR,USB,DVR,DVB,FWD[,FWB]   rates and bursts, forward budget per
 *                                          second [and its burst]
 *   --heartbeat-ms N       0 for none (default 1000)
 *   --rcvhwm N, --rcvbuf BYTES   of the PULL socket: small values make back-pressure quick
 *
 * Commands on standard input, one per line; each gets one line back, "ok ..." or "err ...":
 *   stats                       counters: reserves, dups, batches, queries, snapshot_requests
 *   sold_out EV | restock EV N  change an event's stock and publish it
 *   rules R1;R2;...             replace the rule set and publish it ("rules" alone: none)
 *   pause | resume              stop / start reading the PULL socket (a stuck control plane)
 *   mute | unmute               stop / start answering reservations
 *   garbage KIND                publish one malformed message: short magic version type
 *                               recsize length count field multipart
 *   skip_seq                    lose one sequence number (the data plane sees a gap)
 *   snapshot                    publish a snapshot now
 *   dpstats [NAME]              the latest DP_STATS: "ok msgs=N sender=S records=K" and then
 *                               every "name=value", or with NAME "value=V" (err if absent)
 *   hello                       the latest HELLO: "ok hellos=N sender=S epoch=E instance=I"
 *   refuse [any]                publish a DP_REFUSED for the latest HELLO's data plane (its
 *                               instance; with "any", instance 0: every one of its epoch)
 *   fair EV STATE BITS ENTRANTS DECIDED RATE
 *                               publish a FAIR record (issue 18): draw state 0..3, pow bits,
 *                               the draw's progress; the queue opened a second before the
 *                               first fair command, the draw is a minute after it; seed_sha256 bytes 0xc5, the digest 0xd6
 *                               from state 2, the seed 0x5e at 3. Kept for the snapshots (after
 *                               the EVENTs) when EV is one of ours
 *   fair_bad EV                 publish a FAIR record with decided > entrants (refused)
 *   queued EV USER RANK         publish a RESULT: USER is an entrant of EV's draw at RANK
 *   quit
 * It prints "ready" once both sockets are bound.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "common/now.h"
#include "common/wire.h"
#include "common/zlink.h"

#define MAX_EVENTS 64
#define MAX_KEYS   16
#define MAX_RULES  1024

/* An open-addressing map from (a, b) to (v, tag); a is never 0. */
struct map_entry {
	uint64_t a, b, v;
	uint8_t tag;
};

struct map {
	struct map_entry *e;
	size_t cap, n;
};

static uint64_t
mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * UINT64_C(0x9e3779b97f4a7c15) ^ (b + UINT64_C(0x632be59bd9b4e019));

	h ^= h >> 31;
	return h * UINT64_C(0xbf58476d1ce4e5b9);
}

static struct map_entry *
map_find(struct map *m, uint64_t a, uint64_t b, bool insert)
{
	if (insert && (m->n + 1) * 2 > m->cap) {
		struct map old = *m;

		m->cap = old.cap ? old.cap * 2 : 1024;
		m->e = calloc(m->cap, sizeof(*m->e));
		m->n = 0;
		if (m->e == NULL) {
			fprintf(stderr, "fg_testpeer: out of memory\n");
			exit(1);
		}
		for (size_t i = 0; i < old.cap; i++)
			if (old.e[i].a != 0)
				*map_find(m, old.e[i].a, old.e[i].b, true) = old.e[i];
		free(old.e);
	}
	if (m->cap == 0)
		return NULL;
	for (size_t i = mix(a, b) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->e[i].a == a && m->e[i].b == b)
			return &m->e[i];
		if (m->e[i].a == 0) {
			if (!insert)
				return NULL;
			m->e[i].a = a;
			m->e[i].b = b;
			m->n++;
			return &m->e[i];
		}
	}
}

static struct {
	void *ctx, *pull, *pub;
	struct wire_sender tx;
	struct wire_event ev[MAX_EVENTS];
	unsigned n_ev;
	struct wire_key keys[MAX_KEYS];
	unsigned n_keys;
	struct wire_rule rules[MAX_RULES];
	unsigned n_rules;
	struct wire_limits limits;
	struct wire_fair fair[MAX_EVENTS]; /* FAIR records of the snapshots */
	unsigned n_fair;
	uint64_t snapshot_id;
	bool paused, muted;
	struct map rids;    /* reservation id -> times received */
	struct map results; /* (event, user) -> reservation id, verdict */
	uint64_t reserves, dups, batches, queries, snapshot_requests, results_sent;
	uint64_t dp_stats_msgs; /* DP_STATS received; the latest one's records below */
	uint32_t dp_stats_sender;
	uint64_t hellos; /* HELLO received; the latest one's sender below */
	uint32_t hello_sender, hello_epoch;
	uint64_t hello_instance;
	struct wire_stat dp_stats[WIRE_STATS_MAX];
	unsigned n_dp_stats;
	uint8_t buf[WIRE_HDR_SIZE + 65535 * 96];
} P;

static void
publish(enum wire_type t, const void *recs, unsigned n)
{
	int len = wire_encode(&P.tx, t, recs, n, P.buf, sizeof(P.buf));

	if (len < 0) {
		fprintf(stderr, "fg_testpeer: cannot encode %s x%u: %d\n", wire_type_name(t), n,
			len);
		exit(1);
	}
	zmq_send(P.pub, P.buf, (size_t)len, 0);
}

static void
publish_snapshot(void)
{
	struct wire_snapshot s = {.snapshot_id = ++P.snapshot_id,
		.n_events = P.n_ev,
		.n_keys = P.n_keys,
		.n_rules = P.n_rules};

	publish(WIRE_T_SNAPSHOT_BEGIN, &s, 1);
	if (P.n_ev > 0)
		publish(WIRE_T_EVENT, P.ev, P.n_ev);
	if (P.n_fair > 0)
		publish(WIRE_T_FAIR, P.fair, P.n_fair);
	publish(WIRE_T_KEYS, P.keys, P.n_keys);
	publish(WIRE_T_RULES, P.rules, P.n_rules);
	publish(WIRE_T_LIMITS, &P.limits, 1);
	publish(WIRE_T_SNAPSHOT_END, &s, 1);
}

static struct wire_event *
find_event(uint32_t id)
{
	for (unsigned i = 0; i < P.n_ev; i++)
		if (P.ev[i].id == id)
			return &P.ev[i];
	return NULL;
}

static void
on_reserve(const struct wire_msg *m)
{
	static struct wire_result out[65535];
	uint32_t sold_out[MAX_EVENTS];
	unsigned n_out = 0, n_sold = 0;

	P.batches++;
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_reserve r;

		if (wire_get_reserve(m, i, &r) != 0)
			continue;
		P.reserves++;
		struct map_entry *seen = map_find(&P.rids, r.reservation_id, 1, true);

		if (seen->v++ > 0)
			P.dups++;
		if (P.muted)
			continue;
		struct wire_event *e = find_event(r.event);
		struct map_entry *res = map_find(&P.results, r.user, r.event, true);
		struct wire_result *o = &out[n_out++];

		memset(o, 0, sizeof(*o));
		o->reservation_id = r.reservation_id;
		o->user = r.user;
		o->event = r.event;
		if (res->tag == WIRE_V_RESERVED && res->v != r.reservation_id) {
			o->verdict = WIRE_V_DUPLICATE;
		} else if (e == NULL || e->stock == 0) {
			o->verdict = e == NULL ? WIRE_V_RETRY : WIRE_V_SOLD_OUT;
		} else {
			e->stock--;
			o->verdict = WIRE_V_RESERVED;
			res->v = r.reservation_id;
			res->tag = WIRE_V_RESERVED;
			if (e->stock == 0) {
				e->flags |= WIRE_EVENT_F_SOLD_OUT;
				sold_out[n_sold++ % MAX_EVENTS] = e->id;
			}
		}
		if (res->tag == 0)
			res->tag = o->verdict;
		o->stock_left = e != NULL ? e->stock : 0;
		o->flags = e != NULL ? WIRE_RESULT_F_STOCK : 0; /* as the cp's reserve rounds */
	}
	if (n_out > 0) {
		publish(WIRE_T_RESULT, out, n_out);
		P.results_sent += n_out;
	}
	for (unsigned i = 0; i < n_sold && i < MAX_EVENTS; i++) {
		struct wire_stock s = {sold_out[i], 0};

		publish(WIRE_T_SOLD_OUT, &s, 1);
	}
}

static void
on_query(const struct wire_msg *m)
{
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_result_query q;
		struct map_entry *res;

		P.queries++;
		if (wire_get_result_query(m, i, &q) != 0 ||
			(res = map_find(&P.results, q.user, q.event, false)) == NULL)
			continue;
		struct wire_result o = {.reservation_id = res->v,
			.user = q.user,
			.event = q.event,
			.verdict = res->tag};

		publish(WIRE_T_RESULT, &o, 1);
	}
}

static void
on_pull(void)
{
	for (;;) {
		int len = zmq_recv(P.pull, P.buf, sizeof(P.buf), ZMQ_DONTWAIT);
		struct wire_msg m;

		if (len < 0)
			return;
		if (wire_decode(P.buf, (size_t)len, &m) != 0)
			continue;
		/* P.buf is reused by publish(): keep the records in a copy while answering. */
		static uint8_t copy[sizeof(P.buf)];

		memcpy(copy, P.buf, (size_t)len);
		m.recs = copy + WIRE_HDR_SIZE;
		switch (m.type) {
		case WIRE_T_RESERVE:
			on_reserve(&m);
			break;
		case WIRE_T_SNAPSHOT_REQUEST:
			P.snapshot_requests++;
			publish_snapshot();
			break;
		case WIRE_T_RESULT_QUERY:
			on_query(&m);
			break;
		case WIRE_T_HELLO: {
			struct wire_hello h;

			if (wire_get_hello(&m, 0, &h) == 0) {
				P.hellos++;
				P.hello_sender = m.sender;
				P.hello_epoch = m.epoch;
				P.hello_instance = h.instance;
			}
			break;
		}
		case WIRE_T_DP_STATS:
			P.dp_stats_msgs++;
			P.dp_stats_sender = m.sender;
			P.n_dp_stats = 0;
			for (unsigned i = 0; i < m.count; i++)
				if (wire_get_stat(&m, i, &P.dp_stats[P.n_dp_stats]) == 0)
					P.n_dp_stats++;
			break;
		default:
			break;
		}
		if (P.paused)
			return;
	}
}

/* "ip A.B.C.D[/N]", "user N", "device ID" -> *r. Returns 0 or -1. */
static int
parse_rule(const char *s, struct wire_rule *r)
{
	unsigned a, b, c, d, prefix = 32;
	char dev[WIRE_DEVICE_MAX];

	memset(r, 0, sizeof(*r));
	while (*s == ' ')
		s++;
	if (sscanf(s, "ip %u.%u.%u.%u/%u", &a, &b, &c, &d, &prefix) >= 4) {
		r->kind = WIRE_RULE_BLOCK_IP_CIDR;
		r->ipv4 = a << 24 | b << 16 | c << 8 | d;
		r->prefix = (uint8_t)prefix;
		return a < 256 && b < 256 && c < 256 && d < 256 && prefix <= 32 ? 0 : -1;
	}
	if (sscanf(s, "user %" SCNu64, &r->user) == 1) {
		r->kind = WIRE_RULE_BLOCK_USER;
		return 0;
	}
	if (sscanf(s, "device %63s", dev) == 1) {
		r->kind = WIRE_RULE_BLOCK_DEVICE;
		memcpy(r->device, dev, strlen(dev) + 1);
		return 0;
	}
	return -1;
}

/* Publishes one malformed message of the given kind. Returns 0, or -1 for an unknown kind. */
static int
garbage(const char *kind)
{
	uint8_t b[256];
	struct wire_result r = {.reservation_id = 1, .user = 1, .event = 1, .verdict = 1};
	struct wire_sender scratch = P.tx; /* a malformed frame takes no sequence number */
	int len = wire_encode(&scratch, WIRE_T_RESULT, &r, 1, b, sizeof(b));

	if (strcmp(kind, "short") == 0) {
		len = 10;
	} else if (strcmp(kind, "magic") == 0) {
		b[0] = 'X';
	} else if (strcmp(kind, "version") == 0) {
		b[2] = 9;
	} else if (strcmp(kind, "type") == 0) {
		b[3] = 99;
	} else if (strcmp(kind, "recsize") == 0) {
		b[4] = 40;
		len = WIRE_HDR_SIZE + 40;
	} else if (strcmp(kind, "length") == 0) {
		b[6] = 2;
	} else if (strcmp(kind, "count") == 0) {
		struct wire_limits l[2] = {0};

		len = wire_encode(&scratch, WIRE_T_LIMITS, l, 1, b, sizeof(b));
		memset(b + len, 0, sizeof(l[1]));
		len += (int)sizeof(l[1]);
		b[6] = 2;
	} else if (strcmp(kind, "field") == 0) {
		r.verdict = 0; /* a well-formed frame with a record out of range: takes a number */
		len = wire_encode(&P.tx, WIRE_T_RESULT, &r, 1, b, sizeof(b));
	} else if (strcmp(kind, "multipart") == 0) {
		zmq_send(P.pub, b, (size_t)len, ZMQ_SNDMORE);
	} else {
		return -1;
	}
	zmq_send(P.pub, b, (size_t)len, 0);
	return 0;
}

static void
command(char *line)
{
	char *nl = strchr(line, '\n');
	unsigned ev, n;
	char word[32];

	if (nl != NULL)
		*nl = '\0';
	if (strcmp(line, "stats") == 0) {
		printf("ok reserves=%" PRIu64 " dups=%" PRIu64 " batches=%" PRIu64
		       " queries=%" PRIu64 " snapshot_requests=%" PRIu64 " results=%" PRIu64 "\n",
			P.reserves, P.dups, P.batches, P.queries, P.snapshot_requests,
			P.results_sent);
	} else if (sscanf(line, "sold_out %u", &ev) == 1 && find_event(ev) != NULL) {
		struct wire_stock s = {ev, 0};

		find_event(ev)->stock = 0;
		find_event(ev)->flags |= WIRE_EVENT_F_SOLD_OUT;
		publish(WIRE_T_SOLD_OUT, &s, 1);
		printf("ok\n");
	} else if (sscanf(line, "restock %u %u", &ev, &n) == 2 && find_event(ev) != NULL) {
		struct wire_stock s = {ev, n};

		find_event(ev)->stock = n;
		find_event(ev)->flags &= (uint8_t)~WIRE_EVENT_F_SOLD_OUT;
		publish(WIRE_T_RESTOCK, &s, 1);
		printf("ok\n");
	} else if (strncmp(line, "rules", 5) == 0) {
		char *save = NULL;
		unsigned cnt = 0;
		bool bad = false;

		for (char *tok = strtok_r(line + 5, ";", &save); tok != NULL;
			tok = strtok_r(NULL, ";", &save)) {
			if (cnt == MAX_RULES || parse_rule(tok, &P.rules[cnt++]) != 0)
				bad = true;
		}
		if (bad) {
			printf("err bad rule\n");
		} else {
			P.n_rules = cnt;
			publish(WIRE_T_RULES, P.rules, P.n_rules);
			printf("ok %u rules\n", cnt);
		}
	} else if (strcmp(line, "pause") == 0 || strcmp(line, "resume") == 0) {
		P.paused = line[0] == 'p';
		printf("ok\n");
	} else if (strcmp(line, "mute") == 0 || strcmp(line, "unmute") == 0) {
		P.muted = line[0] == 'm';
		printf("ok\n");
	} else if (sscanf(line, "garbage %31s", word) == 1) {
		printf(garbage(word) == 0 ? "ok\n" : "err unknown kind\n");
	} else if (strcmp(line, "skip_seq") == 0) {
		P.tx.seq++;
		printf("ok\n");
	} else if (strncmp(line, "dpstats", 7) == 0 && (line[7] == '\0' || line[7] == ' ')) {
		const char *want = line[7] == ' ' ? line + 8 : NULL;
		unsigned i = 0;

		while (want != NULL && i < P.n_dp_stats && strcmp(want, P.dp_stats[i].name) != 0)
			i++;
		if (want != NULL && i == P.n_dp_stats) {
			printf("err no counter %s (msgs=%" PRIu64 ")\n", want, P.dp_stats_msgs);
		} else {
			printf("ok msgs=%" PRIu64 " sender=%" PRIu32 " records=%u", P.dp_stats_msgs,
				P.dp_stats_sender, P.n_dp_stats);
			if (want != NULL)
				printf(" value=%" PRIu64, P.dp_stats[i].value);
			for (unsigned k = 0; want == NULL && k < P.n_dp_stats; k++)
				printf(" %s=%" PRIu64, P.dp_stats[k].name, P.dp_stats[k].value);
			printf("\n");
		}
	} else if (strcmp(line, "hello") == 0) {
		printf("ok hellos=%" PRIu64 " sender=%" PRIu32 " epoch=%" PRIu32
		       " instance=%" PRIu64 "\n",
			P.hellos, P.hello_sender, P.hello_epoch, P.hello_instance);
	} else if (strcmp(line, "refuse") == 0 || strcmp(line, "refuse any") == 0) {
		struct wire_dp_refused d = {
			.instance = line[6] == '\0' ? P.hello_instance : 0,
			.dp_id = P.hello_sender,
			.epoch = P.hello_epoch,
		};

		if (P.hellos == 0) {
			printf("err no hello yet\n");
		} else {
			publish(WIRE_T_DP_REFUSED, &d, 1);
			printf("ok\n");
		}
	} else if (strncmp(line, "fair ", 5) == 0) {
		unsigned st, bits, ent, dec, rate;
		struct wire_fair f = {0};
		static uint64_t now; /* the first fair command's time: the times stay put */

		if (now == 0)
			now = now_wall_ms();
		if (sscanf(line, "fair %u %u %u %u %u %u", &ev, &st, &bits, &ent, &dec, &rate) != 6) {
			printf("err usage: fair EV STATE BITS ENTRANTS DECIDED RATE\n");
		} else {
			f.event = ev;
			f.draw_state = (uint8_t)st;
			f.pow_bits = (uint8_t)bits;
			f.entrants = ent;
			f.decided = dec;
			f.rate = rate;
			if (st != WIRE_DRAW_NONE) {
				f.queue_opens_at_ms = now - 1000;
				f.draw_at_ms = now + 60000;
			}
			memset(f.seed_sha256, 0xc5, sizeof(f.seed_sha256));
			if (st >= WIRE_DRAW_DRAWING)
				memset(f.entrants_digest, 0xd6, sizeof(f.entrants_digest));
			if (st == WIRE_DRAW_DONE)
				memset(f.seed, 0x5e, sizeof(f.seed));
			if (find_event(ev) != NULL) {
				unsigned i = 0;

				while (i < P.n_fair && P.fair[i].event != ev)
					i++;
				P.fair[i] = f;
				P.n_fair += i == P.n_fair;
			}
			publish(WIRE_T_FAIR, &f, 1);
			printf("ok\n");
		}
	} else if (sscanf(line, "fair_bad %u", &ev) == 1) {
		struct wire_fair f = {.event = ev, .entrants = 1, .decided = 2};

		publish(WIRE_T_FAIR, &f, 1);
		printf("ok\n");
	} else if (strncmp(line, "queued ", 7) == 0) {
		struct wire_result r = {.reservation_id = 1, .verdict = WIRE_V_QUEUED};

		if (sscanf(line, "queued %u %" SCNu64 " %u", &r.event, &r.user, &r.rank) != 3) {
			printf("err usage: queued EV USER RANK\n");
		} else {
			r.reservation_id = r.user;
			publish(WIRE_T_RESULT, &r, 1);
			printf("ok\n");
		}
	} else if (strcmp(line, "snapshot") == 0) {
		publish_snapshot();
		printf("ok\n");
	} else if (strcmp(line, "quit") == 0) {
		printf("ok\n");
		fflush(stdout);
		exit(0);
	} else {
		printf("err unknown command\n");
	}
	fflush(stdout);
}

static void
usage_exit(const char *why)
{
	fprintf(stderr,
		"fg_testpeer: %s\nusage: fg_testpeer --pull ENDPOINT --pub ENDPOINT [--id N] "
		"[--event ID:STOCK[:NAME]]... [--key auth|sale:KID:SECRET[:current]]... "
		"[--rule RULE]... [--limits IPR,IPB,USR,USB,DVR,DVB,FWD[,FWB]] [--heartbeat-ms N] "
		"[--rcvhwm N] [--rcvbuf BYTES]\n",
		why);
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *pull_ep = NULL, *pub_ep = NULL;
	int heartbeat_ms = 1000, rcvhwm = 1000, rcvbuf = 0;
	uint64_t start = now_wall_ms();

	P.tx.id = 100;
	P.tx.epoch = (uint32_t)(start / 1000);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (v == NULL)
			usage_exit("an option needs a value");
		i++;
		if (strcmp(a, "--pull") == 0) {
			pull_ep = v;
		} else if (strcmp(a, "--pub") == 0) {
			pub_ep = v;
		} else if (strcmp(a, "--id") == 0) {
			P.tx.id = (uint32_t)strtoul(v, NULL, 10);
		} else if (strcmp(a, "--heartbeat-ms") == 0) {
			heartbeat_ms = atoi(v);
		} else if (strcmp(a, "--rcvhwm") == 0) {
			rcvhwm = atoi(v);
		} else if (strcmp(a, "--rcvbuf") == 0) {
			rcvbuf = atoi(v);
		} else if (strcmp(a, "--event") == 0) {
			struct wire_event *e = &P.ev[P.n_ev];
			unsigned id, stock;
			int off = 0;

			if (P.n_ev == MAX_EVENTS || sscanf(v, "%u:%u%n", &id, &stock, &off) != 2)
				usage_exit("--event ID:STOCK[:NAME]");
			memset(e, 0, sizeof(*e));
			e->id = id;
			e->stock = stock;
			e->starts_at_ms = start - 3600000;
			e->ends_at_ms = start + 3600000;
			snprintf(e->name, sizeof(e->name), "%s",
				v[off] == ':' ? v + off + 1 : "test sale");
			P.n_ev++;
		} else if (strcmp(a, "--key") == 0) {
			struct wire_key *k = &P.keys[P.n_keys];
			char kind[8], secret[80], cur[16] = "";
			unsigned kid;

			if (P.n_keys == MAX_KEYS ||
				sscanf(v, "%7[^:]:%u:%79[^:]:%15s", kind, &kid, secret, cur) < 3 ||
				strlen(secret) < WIRE_SECRET_MIN ||
				strlen(secret) > WIRE_SECRET_MAX)
				usage_exit("--key auth|sale:KID:SECRET[:current] (16..64 bytes)");
			memset(k, 0, sizeof(*k));
			k->kid = kid;
			k->kind = strcmp(kind, "auth") == 0 ? WIRE_KEY_AUTH : WIRE_KEY_SALE;
			k->flags = strcmp(cur, "current") == 0 ? WIRE_KEY_F_CURRENT : 0;
			k->len = (uint8_t)strlen(secret);
			memcpy(k->secret, secret, k->len);
			P.n_keys++;
		} else if (strcmp(a, "--rule") == 0) {
			if (P.n_rules == MAX_RULES || parse_rule(v, &P.rules[P.n_rules]) != 0)
				usage_exit(
					"--rule \"ip A.B.C.D[/N]\" | \"user N\" | \"device ID\"");
			P.n_rules++;
		} else if (strcmp(a, "--limits") == 0) {
			struct wire_limits *l = &P.limits;

			int got = sscanf(v, "%u,%u,%u,%u,%u,%u,%u,%u", &l->ip_rate, &l->ip_burst,
				&l->user_rate, &l->user_burst, &l->device_rate, &l->device_burst,
				&l->event_forward_per_s, &l->event_forward_burst);

			if (got != 7 && got != 8)
				usage_exit("--limits IPR,IPB,USR,USB,DVR,DVB,FWD[,FWB]");
		} else {
			usage_exit("unknown option");
		}
	}
	if (pull_ep == NULL || pub_ep == NULL)
		usage_exit("--pull and --pub are required");
	P.ctx = zmq_ctx_new();
	P.pull = zmq_socket(P.ctx, ZMQ_PULL);
	P.pub = zmq_socket(P.ctx, ZMQ_PUB);
	int zero = 0, big = 0;

	zmq_setsockopt(P.pull, ZMQ_RCVHWM, &rcvhwm, sizeof(rcvhwm));
	if (rcvbuf > 0)
		zmq_setsockopt(P.pull, ZMQ_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	zmq_setsockopt(P.pub, ZMQ_SNDHWM, &big, sizeof(big)); /* 0: no limit, drop nothing */
	zmq_setsockopt(P.pull, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(P.pub, ZMQ_LINGER, &zero, sizeof(zero));
	/* A CURVE server with the local key directory's control plane pair, as the real one
	 * (common/zlink.h); no ZAP handler: any client key is let in. */
	struct zlink_settings zs = {0};
	struct zlink_keys keys;
	char err[512];

	if (zlink_keys_load(&zs, true, "controlplane", NULL, 0, &keys, err, sizeof(err)) != 0 ||
		zlink_socket_setup(P.pull, &keys, ZLINK_DOMAIN_PULL, 1 << 24, err, sizeof(err)) != 0 ||
		zlink_socket_setup(P.pub, &keys, ZLINK_DOMAIN_PUB, 0, err, sizeof(err)) != 0) {
		fprintf(stderr, "fg_testpeer: %s\n", err);
		return 1;
	}
	zlink_keys_wipe(&keys);
	if (zmq_bind(P.pull, pull_ep) != 0 || zmq_bind(P.pub, pub_ep) != 0) {
		fprintf(stderr, "fg_testpeer: cannot bind %s / %s: %s\n", pull_ep, pub_ep,
			zmq_strerror(zmq_errno()));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);

	uint64_t next_hb = now_wall_ms() + (uint64_t)heartbeat_ms;
	char line[4096];
	size_t have = 0;

	for (;;) {
		zmq_pollitem_t it[2] = {
			{.fd = STDIN_FILENO, .events = ZMQ_POLLIN},
			{.socket = P.pull, .events = ZMQ_POLLIN},
		};
		uint64_t now = now_wall_ms();
		long timeout = heartbeat_ms > 0 ? (long)(next_hb > now ? next_hb - now : 0) : 1000;

		if (zmq_poll(it, P.paused ? 1 : 2, timeout) < 0 && zmq_errno() != EINTR)
			return 1;
		/* A closed stdin shows as POLLERR in zmq_poll(), not as a readable EOF. */
		if (it[0].revents & ZMQ_POLLERR)
			return 0; /* the test went away */
		if (it[0].revents & ZMQ_POLLIN) {
			ssize_t r = read(STDIN_FILENO, line + have, sizeof(line) - 1 - have);

			if (r <= 0)
				return 0; /* the test went away */
			have += (size_t)r;
			line[have] = '\0';
			char *nl;

			while ((nl = strchr(line, '\n')) != NULL) {
				size_t used = (size_t)(nl - line) + 1;
				char cmd[4096];

				memcpy(cmd, line, used);
				cmd[used] = '\0';
				memmove(line, line + used, have - used + 1);
				have -= used;
				command(cmd);
			}
			if (have == sizeof(line) - 1)
				have = 0; /* an endless line: drop it */
		}
		if (!P.paused && (it[1].revents & ZMQ_POLLIN))
			on_pull();
		if (heartbeat_ms > 0 && now_wall_ms() >= next_hb) {
			struct wire_heartbeat hb = {now_wall_ms()};

			publish(WIRE_T_HEARTBEAT, &hb, 1);
			next_hb = now_wall_ms() + (uint64_t)heartbeat_ms;
		}
	}
}

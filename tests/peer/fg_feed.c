/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fg_feed: a TEST TOOL that plays one data plane's feed towards a control
 * plane: it PUSHes RESERVE batches for a range of users and SUBscribes to the
 * results, then prints what it was told. Used to drive several control planes
 * at once on one event.
 *
 *   fg_feed --push EP --sub EP --event ID --users FIRST-LAST [--dp N] [--batch K]
 *           [--timeout-ms T] [--secret-key FILE --server-key FILE] [--snapshot]
 *           [--send reserve|result] [--oversize] [--pace-us U] [--epoch E] [--hello]
 *           [--hold-ms H] [--others] [--query FIRST-LAST --storm N]
 *           [--final] [--log FILE]
 *
 * --secret-key and --server-key make both sockets CURVE clients (common/zlink.h); without
 * them the feed uses the data plane's pair of the local key directory ($STATE_DIRECTORY/links,
 * as the programs do), and --plaintext makes plain ZeroMQ sockets (a stranger's feed);
 * --snapshot sends a SNAPSHOT_REQUEST first; --send result pushes, instead of
 * reservations, one ORDERED RESULT per user (what only an order writer may send:
 * the control plane relays it to every data plane, so the feed sees it come back);
 * --oversize pushes only one message a byte over the control plane's
 * ZMQ_MAXMSGSIZE and waits for the timeout. Every send waits for the link at most
 * until the timeout. --pace-us sleeps between batches; --epoch sets the header's epoch
 * (default: now); --hello sends a HELLO (a random instance) first and every 500 ms, as a
 * data plane does; --hold-ms keeps the feed listening (and saying hello) at least that long.
 *
 * Prints one line: "reserved=R duplicate=D sold_out=S retry=T ordered=O missing=M
 * unsent=U msgs=N keys=K closed=C not_started=N reserved_after_closed=A refused=F" where
 * missing counts users without any result before the timeout, unsent the messages the link
 * never took, msgs every message received, keys the KEYS messages among them,
 * reserved_after_closed the RESERVED results that came after a CLOSED one, and refused
 * whether a DP_REFUSED for this feed (its dp id and epoch) arrived. Exit 0 when every user
 * got a result, 1 otherwise, 2 on usage errors. After them: "others=O queried=Q max_ms=X":
 * others counts users of the range that were also sent another data plane's result (a
 * stored result republished, e.g. for a duplicate); with --others the feed waits for all of
 * them. --storm N sends, before each batch, a RESULT_QUERY message of N records: users
 * nobody reserved, then the --query users last; queried counts --query users whose stored
 * result arrived (the feed waits for all). max_ms is the longest time from a batch's send
 * to the last of its results; the exit status then also needs every awaited one. Then
 * "queued=Q": users whose first result was QUEUED (an entrant of a draw). With --final a QUEUED
 * result does not answer a user: the feed waits for the draw's decision. --log FILE writes a
 * line per RESULT for a user of the range or of --query, "result USER VERDICT RANK DP" (DP: the dp id in
 * the reservation id), and one per FAIR record of the event, "fair STATE ENTRANTS DECIDED RATE
 * BITS SEED_SHA256 DIGEST SEED" (hex; zeros when not set), each written as it comes (a test
 * reads the log while the feed waits). --admitted-ms MS sets the
 * reservations' admitted_ms (the data plane's clock at admission; default now);
 * --send-at-ms MS sends them at that Unix time (ms), not at once.
 *   fg_feed --push EP --sub EP --watch-limits MS [--dp N]
 *
 * --watch-limits plays a live data plane for MS milliseconds instead: it asks
 * for a snapshot, sends its counters (a DP_STATS message, as a data plane does
 * every second) every 500 ms and prints each LIMITS record the control plane publishes as a line
 * "limits forward=RATE/BURST ip=RATE/BURST" at once, each EVENT record as "event id=E held=H
 * closed=C", each KEYS message as "keys n=N sale_current=KID" and each RULES message as
 * "rules n=N". Exit 0.
 *   ... --watch-limits MS [--refuse-ms R]
 * also prints each FAIR record as "fair event=E state=S pow_bits=B entrants=N decided=D
 * served=V final=F" (V: the highest rank holding an item; F 1: no item can come back to the
 * waiting list, WIRE_FAIR_F_FINAL);
 * --refuse-ms makes its counters report reservations refused over the forward budget
 * ("rejects.reason=forward_budget"), 100 more each report for the first R milliseconds, then
 * no more (the automatic difficulty follows them); with --event E, 20 of E's reservations
 * that got through go with each report meanwhile (the refused event is the busy one).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "common/now.h"
#include "common/wire.h"
#include "common/zlink.h"

/* Sends one message, waiting for the link until deadline. Returns 0, or -1 when it never went. */
static int
send_until(void *push, const void *buf, size_t len, uint64_t deadline)
{
	for (;;) {
		if (zmq_send(push, buf, len, ZMQ_DONTWAIT) == (int)len)
			return 0;
		if (zmq_errno() != EAGAIN || now_mono_ms() >= deadline)
			return -1;
		zmq_pollitem_t it = {.socket = push, .events = ZMQ_POLLOUT};

		zmq_poll(&it, 1, 50);
	}
}

/* --watch-limits: a live data plane's counters out, the LIMITS it is given printed. */
static int
watch_limits(const struct zlink_settings *zs, const char *push_ep, const char *sub_ep, uint32_t dp,
	unsigned watch_ms, unsigned refuse_ms, uint32_t fwd_event)
{
	uint32_t fwd_seq = 0;
	struct zlink_keys keys;
	char err[512];

	static uint8_t buf[WIRE_MSG_MAX_FROM_CP];
	void *ctx = zmq_ctx_new();
	void *push = zmq_socket(ctx, ZMQ_PUSH);
	void *sub = zmq_socket(ctx, ZMQ_SUB);
	struct wire_sender tx = { .id = dp, .epoch = (uint32_t)time(NULL) };
	struct wire_stat st[2] = {{.value = 1, .kind = WIRE_STAT_GAUGE, .name = "bridge_ready"},
		{.value = 0, .kind = WIRE_STAT_COUNTER, .name = "rejects.reason=forward_budget"}};
	int linger = 0;

	/* Keys as every other mode: a live data plane's link is CURVE unless --plaintext. */
	if (zlink_keys_load(zs, false, "fg_feed", NULL, 0, &keys, err, sizeof(err)) != 0 ||
		zlink_socket_setup(push, &keys, NULL, 0, err, sizeof(err)) != 0 ||
		zlink_socket_setup(sub, &keys, NULL, WIRE_MSG_MAX_FROM_CP, err, sizeof(err)) != 0) {
		fprintf(stderr, "fg_feed: %s\n", err);
		return 2;
	}
	zlink_keys_wipe(&keys);
	if (zmq_connect(push, push_ep) != 0 || zmq_connect(sub, sub_ep) != 0 ||
		zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0) != 0 ||
		zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof(linger)) != 0) {
		fprintf(stderr, "fg_feed: cannot connect: %s\n", zmq_strerror(zmq_errno()));
		return 2;
	}
	uint64_t start = now_mono_ms(), end = start + watch_ms, next_stats = 0;
	int rq = wire_encode(&tx, WIRE_T_SNAPSHOT_REQUEST, NULL, 0, buf, sizeof(buf));

	usleep(300 * 1000); /* a SUB misses what is published before it joined */
	if (rq > 0)
		zmq_send(push, buf, (size_t)rq, 0);

	while (now_mono_ms() < end) {
		if (now_mono_ms() >= next_stats) {
			if (now_mono_ms() - start < refuse_ms) {
				st[1].value += 100;
				/* --event with --refuse-ms: the refused event's reservations that got
				 * through, 20 per half second (users from 800000001). */
				struct wire_reserve fr[20];

				for (unsigned k = 0; fwd_event != 0 && k < 20; k++, fwd_seq++)
					fr[k] = (struct wire_reserve){
						.reservation_id = wire_reservation_id(dp, 0, fwd_seq),
						.user = 800000001 + fwd_seq,
						.admitted_ms = now_wall_ms(),
						.event = fwd_event,
					};
				int fl = fwd_event != 0
						 ? wire_encode_reservations(&tx, fr, 20, buf, sizeof(buf))
						 : -1;

				if (fl > 0)
					zmq_send(push, buf, (size_t)fl, ZMQ_DONTWAIT);
			}
			int len = wire_encode(&tx, WIRE_T_DP_STATS, st, refuse_ms != 0 ? 2 : 1, buf,
				sizeof(buf));

			if (len > 0)
				zmq_send(push, buf, (size_t)len, ZMQ_DONTWAIT);
			next_stats = now_mono_ms() + 500;
		}
		zmq_pollitem_t it = { .socket = sub, .events = ZMQ_POLLIN };

		if (zmq_poll(&it, 1, 100) <= 0)
			continue;
		int len = zmq_recv(sub, buf, sizeof(buf), 0);
		struct wire_msg m;
		struct wire_limits l;
		struct wire_fair f;

		if (len <= 0 || len > (int)sizeof(buf) || wire_decode(buf, (size_t)len, &m) != 0)
			continue;
		for (unsigned i = 0; m.type == WIRE_T_FAIR && i < m.count; i++)
			if (wire_get_fair(&m, i, &f) == 0)
				printf("fair event=%" PRIu32 " state=%u pow_bits=%u "
				       "entrants=%" PRIu32 " decided=%" PRIu32 " served=%" PRIu32
				       " final=%u\n",
					f.event, f.draw_state, f.pow_bits, f.entrants, f.decided,
					f.served, (f.flags & WIRE_FAIR_F_FINAL) != 0);
		/* What else a data plane is told (tests/integration/test_cp_follow.sh). */
		for (unsigned i = 0; m.type == WIRE_T_EVENT && i < m.count; i++) {
			struct wire_event e;

			if (wire_get_event(&m, i, &e) == 0)
				printf("event id=%" PRIu32 " held=%u closed=%u\n", e.id,
					(e.flags & WIRE_EVENT_F_HELD) != 0,
					(e.flags & WIRE_EVENT_F_CLOSED) != 0);
		}
		if (m.type == WIRE_T_KEYS) {
			struct wire_key k;
			uint32_t cur = 0;

			for (unsigned i = 0; i < m.count; i++)
				if (wire_get_key(&m, i, &k) == 0 && k.kind == WIRE_KEY_SALE &&
					(k.flags & WIRE_KEY_F_CURRENT))
					cur = k.kid;
			printf("keys n=%u sale_current=%" PRIu32 "\n", m.count, cur);
		}
		if (m.type == WIRE_T_RULES)
			printf("rules n=%u\n", m.count);
		fflush(stdout);
		if (m.type != WIRE_T_LIMITS || wire_get_limits(&m, 0, &l) != 0)
			continue;
		printf("limits forward=%" PRIu32 "/%" PRIu32 " ip=%" PRIu32 "/%" PRIu32 "\n",
			l.event_forward_per_s, l.event_forward_burst, l.ip_rate, l.ip_burst);
		fflush(stdout);
	}
	zmq_close(push);
	zmq_close(sub);
	zmq_ctx_term(ctx);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *push_ep = NULL, *sub_ep = NULL;
	uint32_t event = 0, dp = 900;
	uint64_t first = 0, last = 0, qfirst = 0, qlast = 0;
	unsigned batch = 100, timeout_ms = 10000, unsent = 0, msgs = 0, keys_msgs = 0;
	struct zlink_settings zs = {0};
	bool snapshot = false, send_results = false, oversize = false;
	unsigned pace_us = 0, hold_ms = 0;
	uint32_t epoch = (uint32_t)time(NULL);
	bool hello = false, refused = false, closed_seen = false;
	unsigned after_closed = 0;
	unsigned storm = 0;
	bool want_others = false;
	unsigned watch_ms = 0, refuse_ms = 0;
	bool final = false;
	FILE *logf = NULL;
	unsigned queued = 0;
	uint64_t admitted_ms = 0; /* --admitted-ms: the data plane's clock at admission; 0: now */
	uint64_t send_at_ms = 0;  /* --send-at-ms: the reservations go out then (Unix ms) */
	int c;

	static const struct option opts[] = {
		{ "push", required_argument, NULL, 'p' },
		{ "sub", required_argument, NULL, 's' },
		{ "event", required_argument, NULL, 'e' },
		{ "users", required_argument, NULL, 'u' },
		{ "dp", required_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "secret-key", required_argument, NULL, 'k' },
		{ "server-key", required_argument, NULL, 'K' },
		{ "plaintext", no_argument, NULL, 'N' },
		{ "snapshot", no_argument, NULL, 'S' },
		{ "send", required_argument, NULL, 'm' },
		{ "oversize", no_argument, NULL, 'o' },
		{ "pace-us", required_argument, NULL, 'P' },
		{ "epoch", required_argument, NULL, 'E' },
		{ "hello", no_argument, NULL, 'H' },
		{ "hold-ms", required_argument, NULL, 'O' },
		{ "others", no_argument, NULL, 'x' },
		{ "query", required_argument, NULL, 'q' },
		{ "storm", required_argument, NULL, 'T' },
		{ "watch-limits", required_argument, NULL, 'w' },
		{ "refuse-ms", required_argument, NULL, 'R' },
		{ "final", no_argument, NULL, 'F' },
		{ "log", required_argument, NULL, 'L' },
		{ "admitted-ms", required_argument, NULL, 'A' },
		{ "send-at-ms", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			push_ep = optarg;
			break;
		case 's':
			sub_ep = optarg;
			break;
		case 'e':
			event = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'u':
			if (sscanf(optarg, "%" SCNu64 "-%" SCNu64, &first, &last) != 2)
				first = 0;
			break;
		case 'd':
			dp = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'b':
			batch = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 't':
			timeout_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'k':
			snprintf(zs.secret_key_file, sizeof(zs.secret_key_file), "%s", optarg);
			break;
		case 'N':
			zs.insecure_plaintext = 1;
			break;
		case 'K':
			snprintf(zs.server_key_file, sizeof(zs.server_key_file), "%s", optarg);
			break;
		case 'S':
			snapshot = true;
			break;
		case 'm':
			if (strcmp(optarg, "result") == 0)
				send_results = true;
			else if (strcmp(optarg, "reserve") != 0)
				event = 0; /* a usage error below */
			break;
		case 'o':
			oversize = true;
			break;
		case 'P':
			pace_us = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'E':
			epoch = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'H':
			hello = true;
			break;
		case 'O':
			hold_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'x':
			want_others = true;
			break;
		case 'q':
			if (sscanf(optarg, "%" SCNu64 "-%" SCNu64, &qfirst, &qlast) != 2)
				qfirst = qlast = 0;
			break;
		case 'T':
			storm = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			watch_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'R':
			refuse_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'F':
			final = true;
			break;
		case 'A':
			admitted_ms = strtoull(optarg, NULL, 10);
			break;
		case 'W':
			send_at_ms = strtoull(optarg, NULL, 10);
			break;
		case 'L':
			if ((logf = fopen(optarg, "w")) == NULL) {
				fprintf(stderr, "fg_feed: %s: %s\n", optarg, strerror(errno));
				return 2;
			}
			/* A line at a time: a test reads it while the feed waits. */
			setvbuf(logf, NULL, _IOLBF, 0);
			break;
		default:
			return 2;
		}
	}
	if (watch_ms != 0 && push_ep != NULL && sub_ep != NULL && dp != 0 && dp <= WIRE_DP_ID_MAX)
		return watch_limits(&zs, push_ep, sub_ep, dp, watch_ms, refuse_ms, event);
	if (push_ep == NULL || sub_ep == NULL || event == 0 || first == 0 || last < first ||
		last - first > 1000000 || batch == 0 || batch > 4096 || dp == 0 || dp > WIRE_DP_ID_MAX ||
		qlast < qfirst || storm > 65535 || (storm > 0 && (qfirst == 0 || storm < qlast - qfirst + 1))) {
		fprintf(stderr, "usage: fg_feed --push EP --sub EP --event ID --users FIRST-LAST "
				"[--dp N] [--batch K] [--timeout-ms T] [--secret-key FILE "
				"--server-key FILE] [--snapshot] [--send reserve|result] "
				"[--oversize] [--pace-us U] [--epoch E] [--hello] "
				"[--hold-ms H] [--others] "
				"[--query FIRST-LAST --storm N (N >= the query users)]\n");
		return 2;
	}
	struct zlink_keys keys;
	char err[512];

	if (zlink_keys_load(&zs, false, "fg_feed", NULL, 0, &keys, err, sizeof(err)) != 0) {
		fprintf(stderr, "fg_feed: %s\n", err);
		return 2;
	}
	unsigned n = (unsigned)(last - first + 1);
	unsigned qn = storm > 0 ? (unsigned)(qlast - qfirst + 1) : 0;
	uint8_t *got = calloc(n, 1), *other = calloc(n, 1), *qgot = calloc(qn + 1, 1);
	uint8_t *qseen = calloc(n, 1);
	uint64_t *sent_ms = calloc(n, sizeof(*sent_ms)), max_ms = 0;
	struct wire_result_query *qrecs = calloc(storm + 1, sizeof(*qrecs));
	unsigned n_other = 0, n_qgot = 0;
	struct wire_reserve *recs = calloc(batch, sizeof(*recs));
	size_t cap = WIRE_HDR_SIZE + (size_t)65535 * 48;
	uint8_t *buf = malloc(cap);
	void *ctx = zmq_ctx_new();
	void *push = zmq_socket(ctx, ZMQ_PUSH);
	void *sub = zmq_socket(ctx, ZMQ_SUB);
	struct wire_sender tx = { .id = dp, .epoch = epoch };
	struct wire_hello hi = { .instance = ((uint64_t)getpid() << 32) ^ now_wall_ms() ^ 1 };
	uint64_t next_hello_ms = 0;
	unsigned counts[WIRE_V_MAX] = { 0 };

	struct wire_result *res = calloc(batch, sizeof(*res));
	uint64_t deadline = now_mono_ms() + timeout_ms;

	if (zlink_socket_setup(push, &keys, NULL, 0, err, sizeof(err)) != 0 ||
		zlink_socket_setup(sub, &keys, NULL, WIRE_MSG_MAX_FROM_CP, err, sizeof(err)) != 0) {
		fprintf(stderr, "fg_feed: %s\n", err);
		return 2;
	}
	if (got == NULL || recs == NULL || res == NULL || buf == NULL ||
		zmq_connect(push, push_ep) != 0 || zmq_connect(sub, sub_ep) != 0 ||
		zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0) != 0) {
		fprintf(stderr, "fg_feed: cannot connect: %s\n", zmq_strerror(zmq_errno()));
		return 2;
	}
	usleep(300 * 1000); /* a SUB misses what is published before it joined */
	uint64_t started_ms = now_mono_ms();
	uint64_t seq = wire_reservation_seq_start((uint64_t)time(NULL) * 1000);

#define SAY_HELLO()                                                                           \
	do {                                                                                  \
		if (hello && now_mono_ms() >= next_hello_ms) {                                \
			hi.now_ms = now_wall_ms();                                            \
			int hl = wire_encode(&tx, WIRE_T_HELLO, &hi, 1, buf, cap);            \
			if (hl > 0)                                                           \
				zmq_send(push, buf, (size_t)hl, 0);                           \
			next_hello_ms = now_mono_ms() + 500;                                  \
		}                                                                             \
	} while (0)
	SAY_HELLO();
	usleep(hello ? 100 * 1000 : 0); /* the control plane hears us before our reservations */
	if (oversize) {
		size_t big = WIRE_MSG_MAX_TO_CP + ZLINK_CURVE_OVERHEAD + 1;
		uint8_t *junk = calloc(1, big);

		/* A reservation's header and record first: what the decoder would call a
		 * message of the wrong length, if it ever saw it. */
		struct wire_reserve one = {.reservation_id = wire_reservation_id(dp, 0, seq++),
			.user = first,
			.admitted_ms = (uint64_t)time(NULL) * 1000,
			.event = event};

		if (junk == NULL || wire_encode_reservations(&tx, &one, 1, junk, big) < 0 ||
			send_until(push, junk, big, deadline) != 0)
			unsent++;
		free(junk);
	}
	if (snapshot) {
		int len = wire_encode(&tx, WIRE_T_SNAPSHOT_REQUEST, NULL, 0, buf, cap);

		if (len < 0 || send_until(push, buf, (size_t)len, deadline) != 0)
			unsent++;
	}

	while (send_at_ms != 0 && now_wall_ms() < send_at_ms)
		usleep(1000);
	/* After an oversized message nothing else: the feed keeps its connection until the
	 * timeout, so that only the control plane can have ended it. */
	for (uint64_t u = oversize ? last + 1 : first, nobody = 900000000; u <= last;) {
		unsigned k = 0;

		SAY_HELLO();
		if (pace_us)
			usleep(pace_us);
		if (storm > 0) {
			/* Users nobody reserved first, then the ones whose results are stored. */
			for (unsigned i = 0; i < storm - qn; i++)
				qrecs[i] = (struct wire_result_query){.user = nobody++, .event = event};
			for (unsigned i = 0; i < qn; i++)
				qrecs[storm - qn + i] =
					(struct wire_result_query){.user = qfirst + i, .event = event};
			int qlen = wire_encode(&tx, WIRE_T_RESULT_QUERY, qrecs, storm, buf, cap);

			if (qlen < 0 || zmq_send(push, buf, (size_t)qlen, 0) != qlen) {
				fprintf(stderr, "fg_feed: send failed\n");
				return 2;
			}
		}
		for (; k < batch && u <= last; k++, u++)
			recs[k] = (struct wire_reserve){
				.reservation_id = wire_reservation_id(dp, 0, seq++),
				.user = u,
				.admitted_ms = admitted_ms ? admitted_ms : (uint64_t)time(NULL) * 1000,
				.event = event,
				.client_ipv4 = 0xc6120001,
			};
		for (unsigned i = 0; i < k; i++)
			res[i] = (struct wire_result){
				.reservation_id = recs[i].reservation_id,
				.user = recs[i].user,
				.order_id = recs[i].user,
				.pay_deadline_ms = (uint64_t)time(NULL) * 1000 + 600000,
				.event = event,
				.verdict = WIRE_V_ORDERED,
			};
		int len = send_results ? wire_encode_results(&tx, res, k, buf, cap)
				       : wire_encode_reservations(&tx, recs, k, buf, cap);

		for (unsigned i = 0; i < k; i++)
			sent_ms[recs[i].user - first] = now_mono_ms();
		if (len < 0) {
			fprintf(stderr, "fg_feed: cannot encode\n");
			return 2;
		}
		if (send_until(push, buf, (size_t)len, deadline) != 0)
			unsent++;
	}
	unsigned answered = 0;

	while ((answered < n || n_qgot < qn || (want_others && n_other < n) ||
		       now_mono_ms() < started_ms + hold_ms) &&
		now_mono_ms() < deadline) {
		zmq_pollitem_t it = { .socket = sub, .events = ZMQ_POLLIN };

		SAY_HELLO();
		if (zmq_poll(&it, 1, 100) <= 0)
			continue;
		int len = zmq_recv(sub, buf, cap, 0);
		struct wire_msg m;

		if (len > 0)
			msgs++;
		if (len <= 0 || wire_decode(buf, (size_t)len, &m) != 0)
			continue;
		if (m.type == WIRE_T_KEYS)
			keys_msgs++;
		if (m.type == WIRE_T_DP_REFUSED) {
			for (unsigned i = 0; i < m.count; i++) {
				struct wire_dp_refused d;

				if (wire_get_dp_refused(&m, i, &d) == 0 && d.dp_id == dp &&
					d.epoch == epoch && (d.instance == 0 || d.instance == hi.instance))
					refused = true;
			}
			continue;
		}
		if (m.type == WIRE_T_FAIR && logf != NULL) {
			for (unsigned i = 0; i < m.count; i++) {
				struct wire_fair f;

				if (wire_get_fair(&m, i, &f) != 0 || f.event != event)
					continue;
				fprintf(logf, "fair %u %u %u %u %u ", f.draw_state, f.entrants,
					f.decided, f.rate, f.pow_bits);
				const uint8_t *h[3] = {f.seed_sha256, f.entrants_digest, f.seed};

				for (unsigned k = 0; k < 3; k++) {
					for (unsigned b = 0; b < WIRE_DIGEST_LEN; b++)
						fprintf(logf, "%02x", h[k][b]);
					fputc(k < 2 ? ' ' : '\n', logf);
				}
			}
			continue;
		}
		if (m.type != WIRE_T_RESULT)
			continue;
		for (unsigned i = 0; i < m.count; i++) {
			struct wire_result r;

			if (wire_get_result(&m, i, &r) != 0 || r.event != event)
				continue;
			if (logf != NULL && ((r.user >= first && r.user <= last) ||
						    (qn > 0 && r.user >= qfirst && r.user <= qlast)))
				fprintf(logf, "result %" PRIu64 " %s %u %" PRIu64 "\n", r.user,
					wire_verdict_name(r.verdict), r.rank,
					r.reservation_id >> (WIRE_RID_WORKER_BITS + WIRE_RID_SEQ_BITS));
			if (r.verdict == WIRE_V_QUEUED && r.user >= first && r.user <= last) {
				/* An entrant: counted once; with --final its decision answers it. */
				if (!qseen[r.user - first]) {
					qseen[r.user - first] = 1;
					queued++;
				}
				if (final)
					continue;
			}
			if (qn > 0 && r.user >= qfirst && r.user <= qlast && !qgot[r.user - qfirst]) {
				qgot[r.user - qfirst] = 1;
				n_qgot++;
			}
			if (r.user < first || r.user > last)
				continue;
			if ((r.reservation_id >> (WIRE_RID_WORKER_BITS + WIRE_RID_SEQ_BITS)) != dp &&
				!(final && r.verdict != WIRE_V_QUEUED)) {
				/* another feed's, or a republished stored result */
				if (!other[r.user - first]) {
					other[r.user - first] = 1;
					n_other++;
				}
				continue;
			}
			if (!got[r.user - first]) {
				uint64_t took = now_mono_ms() - sent_ms[r.user - first];

				max_ms = took > max_ms ? took : max_ms;
				got[r.user - first] = 1;
				answered++;
				if (r.verdict < WIRE_V_MAX)
					counts[r.verdict]++;
				closed_seen = closed_seen || r.verdict == WIRE_V_CLOSED;
				after_closed += closed_seen && r.verdict == WIRE_V_RESERVED;
			}
		}
	}
	printf("reserved=%u duplicate=%u sold_out=%u retry=%u ordered=%u missing=%u unsent=%u "
	       "msgs=%u keys=%u closed=%u not_started=%u reserved_after_closed=%u refused=%d "
	       "others=%u queried=%u max_ms=%" PRIu64 " queued=%u waiting=%u\n",
		counts[WIRE_V_RESERVED], counts[WIRE_V_DUPLICATE], counts[WIRE_V_SOLD_OUT],
		counts[WIRE_V_RETRY], counts[WIRE_V_ORDERED], n - answered, unsent, msgs,
		keys_msgs, counts[WIRE_V_CLOSED], counts[WIRE_V_NOT_STARTED], after_closed, refused,
		n_other, n_qgot, max_ms, queued, counts[WIRE_V_WAITING]);
	if (logf != NULL)
		fclose(logf);
	zlink_keys_wipe(&keys);
	/* What was never sent (a link that never came up: a stranger's feed) is counted above as
	 * unsent; it must not hold zmq_ctx_term() for ever. */
	int no_linger = 0;

	zmq_setsockopt(push, ZMQ_LINGER, &no_linger, sizeof(no_linger));
	zmq_close(push);
	zmq_close(sub);
	zmq_ctx_term(ctx);
	bool all = answered == n && n_qgot == qn && (!want_others || n_other == n);

	free(got);
	free(qseen);
	free(other);
	free(qgot);
	free(sent_ms);
	free(qrecs);
	free(recs);
	free(res);
	free(buf);
	return all ? 0 : 1;
}

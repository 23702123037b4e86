/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fg_feed: a TEST TOOL that plays one data plane's feed towards a control
 * plane: it PUSHes RESERVE batches for a range of users and SUBscribes to the
 * results, then prints what it was told. Used to drive several control planes
 * at once on one event.
 *
 *   fg_feed --push EP --sub EP --event ID --users FIRST-LAST [--dp N] [--batch K]
 *           [--timeout-ms T]
 *   fg_feed --push EP --sub EP --watch-limits MS [--dp N]
 *
 * Prints one line: "reserved=R duplicate=D sold_out=S retry=T missing=M" where
 * missing counts users without any result before the timeout. Exit 0 when
 * every user got a result, 1 otherwise, 2 on usage errors.
 *
 * --watch-limits plays a live data plane for MS milliseconds instead: it asks
 * for a snapshot, sends its counters (a DP_STATS message, as a data plane does
 * every second) every 500 ms and prints each LIMITS record the control plane publishes as a line
 * "limits forward=RATE/BURST ip=RATE/BURST" at once. Exit 0.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "common/now.h"
#include "common/wire.h"

/* --watch-limits: a live data plane's counters out, the LIMITS it is given printed. */
static int
watch_limits(const char *push_ep, const char *sub_ep, uint32_t dp, unsigned watch_ms)
{
	uint8_t buf[4096];
	void *ctx = zmq_ctx_new();
	void *push = zmq_socket(ctx, ZMQ_PUSH);
	void *sub = zmq_socket(ctx, ZMQ_SUB);
	struct wire_sender tx = { .id = dp, .epoch = (uint32_t)time(NULL) };
	struct wire_stat st = { .value = 1, .kind = WIRE_STAT_GAUGE, .name = "bridge_ready" };
	int linger = 0;

	if (zmq_connect(push, push_ep) != 0 || zmq_connect(sub, sub_ep) != 0 ||
		zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0) != 0 ||
		zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof(linger)) != 0) {
		fprintf(stderr, "fg_feed: cannot connect: %s\n", zmq_strerror(zmq_errno()));
		return 2;
	}
	uint64_t end = now_mono_ms() + watch_ms, next_stats = 0;
	int rq = wire_encode(&tx, WIRE_T_SNAPSHOT_REQUEST, NULL, 0, buf, sizeof(buf));

	usleep(300 * 1000); /* a SUB misses what is published before it joined */
	if (rq > 0)
		zmq_send(push, buf, (size_t)rq, 0);

	while (now_mono_ms() < end) {
		if (now_mono_ms() >= next_stats) {
			int len = wire_encode(&tx, WIRE_T_DP_STATS, &st, 1, buf, sizeof(buf));

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

		if (len <= 0 || len > (int)sizeof(buf) || wire_decode(buf, (size_t)len, &m) != 0 ||
			m.type != WIRE_T_LIMITS || wire_get_limits(&m, 0, &l) != 0)
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
	uint64_t first = 0, last = 0;
	unsigned batch = 100, timeout_ms = 10000, watch_ms = 0;
	int c;

	static const struct option opts[] = {
		{ "push", required_argument, NULL, 'p' },
		{ "sub", required_argument, NULL, 's' },
		{ "event", required_argument, NULL, 'e' },
		{ "users", required_argument, NULL, 'u' },
		{ "dp", required_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "watch-limits", required_argument, NULL, 'w' },
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
		case 'w':
			watch_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		default:
			return 2;
		}
	}
	if (watch_ms != 0 && push_ep != NULL && sub_ep != NULL && dp != 0 && dp <= WIRE_DP_ID_MAX)
		return watch_limits(push_ep, sub_ep, dp, watch_ms);
	if (push_ep == NULL || sub_ep == NULL || event == 0 || first == 0 || last < first ||
		last - first > 1000000 || batch == 0 || batch > 4096 || dp == 0 || dp > WIRE_DP_ID_MAX) {
		fprintf(stderr, "usage: fg_feed --push EP --sub EP --event ID --users FIRST-LAST "
				"[--dp N] [--batch K] [--timeout-ms T]\n");
		return 2;
	}
	unsigned n = (unsigned)(last - first + 1);
	uint8_t *got = calloc(n, 1);
	struct wire_reserve *recs = calloc(batch, sizeof(*recs));
	size_t cap = WIRE_HDR_SIZE + (size_t)65535 * 48;
	uint8_t *buf = malloc(cap);
	void *ctx = zmq_ctx_new();
	void *push = zmq_socket(ctx, ZMQ_PUSH);
	void *sub = zmq_socket(ctx, ZMQ_SUB);
	struct wire_sender tx = { .id = dp, .epoch = (uint32_t)time(NULL) };
	unsigned counts[WIRE_V_MAX] = { 0 };

	if (got == NULL || recs == NULL || buf == NULL || zmq_connect(push, push_ep) != 0 ||
		zmq_connect(sub, sub_ep) != 0 || zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0) != 0) {
		fprintf(stderr, "fg_feed: cannot connect: %s\n", zmq_strerror(zmq_errno()));
		return 2;
	}
	usleep(300 * 1000); /* a SUB misses what is published before it joined */
	uint64_t seq = wire_reservation_seq_start((uint64_t)time(NULL) * 1000);

	for (uint64_t u = first; u <= last;) {
		unsigned k = 0;

		for (; k < batch && u <= last; k++, u++)
			recs[k] = (struct wire_reserve){
				.reservation_id = wire_reservation_id(dp, 0, seq++),
				.user = u,
				.admitted_ms = (uint64_t)time(NULL) * 1000,
				.event = event,
				.client_ipv4 = 0xc6120001,
			};
		int len = wire_encode_reservations(&tx, recs, k, buf, cap);

		if (len < 0 || zmq_send(push, buf, (size_t)len, 0) != len) {
			fprintf(stderr, "fg_feed: send failed\n");
			return 2;
		}
	}
	unsigned answered = 0;
	uint64_t deadline = now_mono_ms() + timeout_ms;

	while (answered < n && now_mono_ms() < deadline) {
		zmq_pollitem_t it = { .socket = sub, .events = ZMQ_POLLIN };

		if (zmq_poll(&it, 1, 100) <= 0)
			continue;
		int len = zmq_recv(sub, buf, cap, 0);
		struct wire_msg m;

		if (len <= 0 || wire_decode(buf, (size_t)len, &m) != 0 || m.type != WIRE_T_RESULT)
			continue;
		for (unsigned i = 0; i < m.count; i++) {
			struct wire_result r;

			if (wire_get_result(&m, i, &r) != 0 || r.event != event || r.user < first ||
				r.user > last || (r.reservation_id >> (WIRE_RID_WORKER_BITS +
								      WIRE_RID_SEQ_BITS)) != dp)
				continue; /* another feed's, or a republished stored result */
			if (!got[r.user - first]) {
				got[r.user - first] = 1;
				answered++;
				if (r.verdict < WIRE_V_MAX)
					counts[r.verdict]++;
			}
		}
	}
	printf("reserved=%u duplicate=%u sold_out=%u retry=%u missing=%u\n",
		counts[WIRE_V_RESERVED], counts[WIRE_V_DUPLICATE], counts[WIRE_V_SOLD_OUT],
		counts[WIRE_V_RETRY], n - answered);
	zmq_close(push);
	zmq_close(sub);
	zmq_ctx_term(ctx);
	free(got);
	free(recs);
	free(buf);
	return answered == n ? 0 : 1;
}

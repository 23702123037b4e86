/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fg_feed: a TEST TOOL that plays one data plane's feed towards a control
 * plane: it PUSHes RESERVE batches for a range of users and SUBscribes to the
 * results, then prints what it was told. Used to drive several control planes
 * at once on one event.
 *
 *   fg_feed --push EP --sub EP --event ID --users FIRST-LAST [--dp N] [--batch K]
 *           [--timeout-ms T] [--others] [--query FIRST-LAST --storm N]
 *
 * Prints one line: "reserved=R duplicate=D sold_out=S retry=T missing=M others=O
 * queried=Q max_ms=X" where missing counts users without any result of this
 * feed before the timeout; others counts users of the range that were also
 * sent another data plane's result (a stored result republished, e.g. for a
 * duplicate); with --others the feed waits for all of them. --storm N sends,
 * before each batch, a RESULT_QUERY message of N records: users nobody
 * reserved, then the --query users last; queried counts --query users whose
 * stored result arrived (the feed waits for all). max_ms is the longest time
 * from a batch's send to the last of its results. Exit 0 when every user got
 * a result (and every awaited one), 1 otherwise, 2 on usage errors.
 */
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

int
main(int argc, char **argv)
{
	const char *push_ep = NULL, *sub_ep = NULL;
	uint32_t event = 0, dp = 900;
	uint64_t first = 0, last = 0, qfirst = 0, qlast = 0;
	unsigned batch = 100, timeout_ms = 10000, storm = 0;
	bool want_others = false;
	int c;

	static const struct option opts[] = {
		{ "push", required_argument, NULL, 'p' },
		{ "sub", required_argument, NULL, 's' },
		{ "event", required_argument, NULL, 'e' },
		{ "users", required_argument, NULL, 'u' },
		{ "dp", required_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "others", no_argument, NULL, 'o' },
		{ "query", required_argument, NULL, 'q' },
		{ "storm", required_argument, NULL, 'S' },
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
		case 'o':
			want_others = true;
			break;
		case 'q':
			if (sscanf(optarg, "%" SCNu64 "-%" SCNu64, &qfirst, &qlast) != 2)
				qfirst = qlast = 0;
			break;
		case 'S':
			storm = (unsigned)strtoul(optarg, NULL, 10);
			break;
		default:
			return 2;
		}
	}
	if (push_ep == NULL || sub_ep == NULL || event == 0 || first == 0 || last < first ||
		last - first > 1000000 || batch == 0 || batch > 4096 || dp == 0 || dp > WIRE_DP_ID_MAX ||
		qlast < qfirst || storm > 65535 || (storm > 0 && (qfirst == 0 || storm < qlast - qfirst + 1))) {
		fprintf(stderr, "usage: fg_feed --push EP --sub EP --event ID --users FIRST-LAST "
				"[--dp N] [--batch K] [--timeout-ms T] [--others] "
				"[--query FIRST-LAST --storm N (N >= the query users)]\n");
		return 2;
	}
	unsigned n = (unsigned)(last - first + 1);
	unsigned qn = storm > 0 ? (unsigned)(qlast - qfirst + 1) : 0;
	uint8_t *got = calloc(n, 1), *other = calloc(n, 1), *qgot = calloc(qn + 1, 1);
	uint64_t *sent_ms = calloc(n, sizeof(*sent_ms)), max_ms = 0;
	struct wire_result_query *qrecs = calloc(storm + 1, sizeof(*qrecs));
	unsigned n_other = 0, n_qgot = 0;
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

	for (uint64_t u = first, nobody = 900000000; u <= last;) {
		unsigned k = 0;

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
				.admitted_ms = (uint64_t)time(NULL) * 1000,
				.event = event,
				.client_ipv4 = 0xc6120001,
			};
		int len = wire_encode_reservations(&tx, recs, k, buf, cap);

		for (unsigned i = 0; i < k; i++)
			sent_ms[recs[i].user - first] = now_mono_ms();
		if (len < 0 || zmq_send(push, buf, (size_t)len, 0) != len) {
			fprintf(stderr, "fg_feed: send failed\n");
			return 2;
		}
	}
	unsigned answered = 0;
	uint64_t deadline = now_mono_ms() + timeout_ms;

	while ((answered < n || n_qgot < qn || (want_others && n_other < n)) &&
		now_mono_ms() < deadline) {
		zmq_pollitem_t it = { .socket = sub, .events = ZMQ_POLLIN };

		if (zmq_poll(&it, 1, 100) <= 0)
			continue;
		int len = zmq_recv(sub, buf, cap, 0);
		struct wire_msg m;

		if (len <= 0 || wire_decode(buf, (size_t)len, &m) != 0 || m.type != WIRE_T_RESULT)
			continue;
		for (unsigned i = 0; i < m.count; i++) {
			struct wire_result r;

			if (wire_get_result(&m, i, &r) != 0 || r.event != event)
				continue;
			if (qn > 0 && r.user >= qfirst && r.user <= qlast && !qgot[r.user - qfirst]) {
				qgot[r.user - qfirst] = 1;
				n_qgot++;
			}
			if (r.user < first || r.user > last)
				continue;
			if ((r.reservation_id >> (WIRE_RID_WORKER_BITS + WIRE_RID_SEQ_BITS)) != dp) {
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
			}
		}
	}
	printf("reserved=%u duplicate=%u sold_out=%u retry=%u missing=%u others=%u queried=%u "
	       "max_ms=%" PRIu64 "\n",
		counts[WIRE_V_RESERVED], counts[WIRE_V_DUPLICATE], counts[WIRE_V_SOLD_OUT],
		counts[WIRE_V_RETRY], n - answered, n_other, n_qgot, max_ms);
	zmq_close(push);
	zmq_close(sub);
	zmq_ctx_term(ctx);
	bool all = answered == n && n_qgot == qn && (!want_others || n_other == n);

	free(got);
	free(other);
	free(qgot);
	free(sent_ms);
	free(qrecs);
	free(recs);
	free(buf);
	return all ? 0 : 1;
}

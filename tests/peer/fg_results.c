/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fg_results: a TEST TOOL that plays a data plane's SUB side only: it subscribes to one
 * control plane's PUB socket and prints, for every RESULT record of one event with the
 * verdict ORDERED (an order id the order writer pushed, relayed by that control plane), a
 * line "ordered USER ORDER_ID", flushed at once. It sends nothing.
 *
 *   fg_results --sub EP --event ID [--ms T] [--plaintext]
 *
 * CURVE with the data plane's pair of the local key directory (as tests/peer/fg_feed);
 * --plaintext: plain ZeroMQ. Prints "ready" once subscribed (300 ms after connecting: a SUB
 * misses what is published before it joined); runs until SIGTERM or SIGINT, or T ms (default
 * 60000). Exit 0; 2 on usage or link errors.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "common/now.h"
#include "common/wire.h"
#include "common/zlink.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char **argv)
{
	const char *sub_ep = NULL;
	uint32_t event = 0;
	uint64_t ms = 60000;
	struct zlink_settings zs = {0};
	struct zlink_keys keys;
	char err[512];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--plaintext") == 0)
			zs.insecure_plaintext = 1;
		else if (i + 1 < argc && strcmp(argv[i], "--sub") == 0)
			sub_ep = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--event") == 0)
			event = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (i + 1 < argc && strcmp(argv[i], "--ms") == 0)
			ms = strtoull(argv[++i], NULL, 10);
		else
			sub_ep = NULL, i = argc;
	}
	if (sub_ep == NULL || event == 0) {
		fprintf(stderr, "usage: fg_results --sub EP --event ID [--ms T] [--plaintext]\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (zlink_keys_load(&zs, false, "fg_results", NULL, 0, &keys, err, sizeof(err)) != 0) {
		fprintf(stderr, "fg_results: %s\n", err);
		return 2;
	}
	void *ctx = zmq_ctx_new();
	void *sub = zmq_socket(ctx, ZMQ_SUB);
	int timeout = 100;

	if (sub == NULL ||
		zlink_socket_setup(sub, &keys, NULL, WIRE_MSG_MAX_FROM_CP, err, sizeof(err)) != 0 ||
		zmq_setsockopt(sub, ZMQ_RCVTIMEO, &timeout, sizeof(timeout)) != 0 ||
		zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0) != 0 || zmq_connect(sub, sub_ep) != 0) {
		fprintf(stderr, "fg_results: %s: %s\n", sub_ep, zmq_strerror(zmq_errno()));
		return 2;
	}
	zlink_keys_wipe(&keys);
	usleep(300 * 1000);
	printf("ready\n");
	fflush(stdout);
	uint64_t end = now_mono_ms() + ms;

	while (!stop && now_mono_ms() < end) {
		zmq_msg_t msg;
		struct wire_msg m;

		zmq_msg_init(&msg);
		int len = zmq_msg_recv(&msg, sub, 0);

		if (len >= 0 && wire_decode(zmq_msg_data(&msg), (size_t)len, &m) == 0 &&
			m.type == WIRE_T_RESULT) {
			for (unsigned i = 0; i < m.count; i++) {
				struct wire_result r;

				if (wire_get_result(&m, i, &r) == 0 && r.event == event &&
					r.verdict == WIRE_V_ORDERED)
					printf("ordered %" PRIu64 " %" PRIu64 "\n", r.user,
						r.order_id);
			}
			fflush(stdout);
		}
		zmq_msg_close(&msg);
	}
	zmq_close(sub);
	zmq_ctx_term(ctx);
	return 0;
}

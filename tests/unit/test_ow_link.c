/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * order-writer/ow_link.h: the list of control planes ([order_writer] push_endpoint), table-
 * driven; and the link to two of them (ipc PULL sockets here): every message reaches each,
 * and one that is gone gets what its queues hold, then drops counted for it alone, the
 * other still gets everything, and nothing waits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "common/now.h"
#include "order-writer/ow_link.h"
#include "tests/tap.h"

static const struct {
	const char *list;
	int rc;		   /* count, or -EINVAL */
	const char *first; /* the first endpoint, or a piece of the error */
} lists[] = {
	{"tcp://127.0.0.1:5601", 1, "tcp://127.0.0.1:5601"},
	{"tcp://cp1:5601,tcp://cp2:5601", 2, "tcp://cp1:5601"},
	{" tcp://cp1:5601 , ipc:///run/x ", 2, "tcp://cp1:5601"},
	{"tcp://a:1,tcp://b:2,tcp://c:3,inproc://d", 4, "tcp://a:1"},
	{"tcp://a:1,tcp://b:2,tcp://c:3,tcp://d:4,tcp://e:5", -EINVAL, "more than 4"},
	{"", -EINVAL, "item 1 of the list is empty"},
	{"tcp://a:1,", -EINVAL, "item 2 of the list is empty"},
	{"tcp://a:1, ,tcp://b:2", -EINVAL, "item 2 of the list is empty"},
	{"tcp://a:1,cp2:5601", -EINVAL, "\"cp2:5601\" is not an endpoint"},
	{"tcp://a", -EINVAL, "is not an endpoint"},
	{"tcp://:5601", -EINVAL, "is not an endpoint"},
	{"tcp://a:", -EINVAL, "is not an endpoint"},
	{"tcp://a:56x1", -EINVAL, "is not an endpoint"},
	{"ipc://", -EINVAL, "is not an endpoint"},
	{"udp://a:1", -EINVAL, "is not an endpoint"},
};

/* Receives every waiting message on pull (for up to ms); returns the RESULT records. */
static unsigned
drain(void *pull, unsigned ms)
{
	unsigned recs = 0;
	uint64_t end = now_mono_ms() + ms;
	uint8_t buf[65536];

	while (now_mono_ms() < end) {
		int len = zmq_recv(pull, buf, sizeof(buf), ZMQ_DONTWAIT);
		struct wire_msg m;

		if (len < 0) {
			usleep(1000);
			continue;
		}
		if (wire_decode(buf, (size_t)len, &m) == 0 && m.type == WIRE_T_RESULT)
			recs += m.count;
	}
	return recs;
}

int
main(void)
{
	char out[OW_LINK_PEERS_MAX][OW_LINK_EP_MAX], err[256];

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		int rc = ow_link_split(lists[i].list, out, err, sizeof(err));

		if (lists[i].rc > 0)
			tap_ok(rc == lists[i].rc && strcmp(out[0], lists[i].first) == 0,
				"\"%s\": %d endpoints, the first %s (got %d)", lists[i].list,
				lists[i].rc, lists[i].first, rc);
		else
			tap_ok(rc == lists[i].rc && strstr(err, lists[i].first) != NULL,
				"\"%s\" refused: %s (got %d: %s)", lists[i].list, lists[i].first,
				rc, rc < 0 ? err : "");
	}

	/* Two control planes' PULL sockets; the link to both, 4 messages kept for each. */
	char dir[] = "/tmp/fg-owlink.XXXXXX", ep[2][128], list[300];
	void *ctx = zmq_ctx_new();
	void *pull[2];
	struct zlink_keys plain = {.curve = false};

	if (mkdtemp(dir) == NULL)
		return 1;
	for (int i = 0; i < 2; i++) {
		snprintf(ep[i], sizeof(ep[i]), "ipc://%s/cp%d", dir, i + 1);
		pull[i] = zmq_socket(ctx, ZMQ_PULL);
		if (zmq_bind(pull[i], ep[i]) != 0)
			return 1;
	}
	snprintf(list, sizeof(list), "%s,%s", ep[0], ep[1]);
	struct ow_link *l = ow_link_open(list, 300, 4, &plain, err, sizeof(err));

	tap_ok(l != NULL && ow_link_peers(l) == 2, "a link to both (%s)", l ? "" : err);
	if (l == NULL)
		return tap_done();
	struct wire_result r[10] = {0};

	for (int i = 0; i < 10; i++)
		r[i] = (struct wire_result){.user = (uint64_t)i + 1, .event = 5, .verdict = 5};
	usleep(200 * 1000); /* connected */
	ow_link_results(l, r, 10);
	tap_eq_int(drain(pull[0], 300), 10, "cp1 got the 10 records");
	tap_eq_int(drain(pull[1], 300), 10, "cp2 got the 10 records");

	/* cp1 gone: 200 messages of 10 records, cp2 reading each (a live control plane); none
	 * waits, cp2 gets them all. */
	zmq_close(pull[0]);
	usleep(200 * 1000);
	uint64_t took = 0;
	unsigned got2 = 0;

	for (unsigned k = 0; k < 200; k++) {
		uint64_t t0 = now_mono_ms();

		ow_link_results(l, r, 10);
		took += now_mono_ms() - t0;
		for (uint64_t end = now_mono_ms() + 500;
			got2 < 10 * (k + 1) && now_mono_ms() < end;)
			got2 += drain(pull[1], 1);
	}
	got2 += drain(pull[1], 300);
	ow_link_flush(l);
	tap_ok(took < 1000,
		"2000 records to two control planes, one gone: %llu ms in the sends (no wait)",
		(unsigned long long)took);
	tap_eq_int(got2, 2000, "cp2 got every record while cp1 was gone");
	struct ow_link_peer_stats p1, p2;
	struct ow_link_stats all;

	ow_link_get_peer_stats(l, 0, &p1);
	ow_link_get_peer_stats(l, 1, &p2);
	ow_link_get_stats(l, &all);
	tap_ok(strcmp(p1.endpoint, ep[0]) == 0 && strcmp(p2.endpoint, ep[1]) == 0,
		"the peers' endpoints in the list's order");
	tap_eq_int((long long)p2.dropped, 0, "nothing dropped for cp2");
	tap_eq_int((long long)p2.records, 2010, "2010 records sent to cp2");
	/* cp1 kept at most its two queues of 4 messages (ZeroMQ's high-water mark may let a few
	 * more through to its socket) and dropped the rest. */
	tap_ok(p1.dropped >= 2000 - 10 * 16 && p1.dropped % 10 == 0,
		"records dropped for cp1 counted: %llu", (unsigned long long)p1.dropped);
	tap_eq_int(p1.queued, 4, "4 messages wait in the writer's queue for cp1");
	tap_eq_int((long long)all.dropped, (long long)p1.dropped, "the total dropped is cp1's");
	tap_eq_int((long long)all.records, 2010, "2010 records handed to the link");

	/* cp1 back: what its queues kept reaches it. */
	pull[0] = zmq_socket(ctx, ZMQ_PULL);
	zmq_bind(pull[0], ep[0]);
	unsigned back = 0;

	for (int k = 0; k < 50; k++) {
		ow_link_flush(l);
		back += drain(pull[0], 20);
	}
	ow_link_get_peer_stats(l, 0, &p1);
	tap_ok(back >= 40 && p1.queued == 0 && back + p1.dropped == 2000,
		"cp1 back: it got what was kept (%u records), none waits, the rest dropped", back);
	ow_link_close(l);
	for (int i = 0; i < 2; i++)
		zmq_close(pull[i]);
	zmq_ctx_term(ctx);
	for (int i = 0; i < 2; i++) {
		char path[160];

		snprintf(path, sizeof(path), "%s/cp%d", dir, i + 1);
		unlink(path);
	}
	rmdir(dir);
	return tap_done();
}

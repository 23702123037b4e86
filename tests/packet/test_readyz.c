/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet test of GET /readyz (dataplane/pipeline/readyz.h): 503 with the reason while the data
 * plane cannot sell (no control plane link, no state yet, the control plane silent longer than
 * bridge.resync, refused, stopping, a key missing), 200 once it can; HEAD, other methods;
 * never counted as a refusal.
 */
#include <stdlib.h>
#include <string.h>

#include "common/now.h"

#include "tests/lib/dp_harness.h"
#include "tests/tap.h"

static struct dp_harness H;
static uint16_t next_port = 30000;

/* Sends req on a fresh connection and keeps the answer in a. */
static void
ask(const char *req, struct dph_answer *a)
{
	dph_ask(&H, PB_CL_IP, next_port++, req, a);
}

static uint64_t
refusals(void)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < DP_REJ_MAX; i++)
		n += H.w->ctr.reject[i];
	return n;
}

/* GET /readyz answers want_status with needle in its text. */
static void
expect(unsigned want_status, const char *needle, const char *what)
{
	struct dph_answer a;

	ask("GET /readyz HTTP/1.1\r\nHost: s\r\n\r\n", &a);
	tap_eq_int(a.status, want_status, what);
	tap_ok(strstr(a.text, needle) != NULL, "  says %s", needle);
}

int
main(int argc, char **argv)
{
	struct dp_event_cfg ev = { .id = 1, .name = "open", .stock = 10 };
	struct dp_limits limits = { .user = { 1000, 1000 }, .device = { 1000, 1000 } };
	struct dph_answer a;

	(void)argc;
	dph_init(&H, argv[0]);
	expect(503, "\"reason\":\"no control plane link\"", "no bridge: 503");
	dph_admission_init(&H, 16);
	uint64_t refused0 = refusals();

	expect(503, "no state from the control plane yet", "before the first snapshot: 503");
	ev.starts_at_ms = H.w->now_ms - 1000;
	ev.ends_at_ms = H.w->now_ms + 3600000;
	dph_publish(&H, &ev, NULL, 1, NULL, &limits);
	expect(200, "{\"status\":\"ready\",\"events\":1}", "state and keys there: 200");

	/* The test plays the bridge: heard at start, then silent past the bound (5 s, the
	 * bridge.resync default), then heard again. */
	uint64_t now = now_mono_us() / 1000;

	H.shared.silence_ms = 5000;
	shared_heard(&H.shared, now);
	expect(200, "\"status\":\"ready\"", "the control plane just heard: 200");
	shared_heard(&H.shared, now - 4000);
	expect(200, "\"status\":\"ready\"", "heard 4 s ago, within the bound: 200");
	shared_heard(&H.shared, now - 5200);
	expect(503, "the control plane has not been heard for 5", "silent 5.2 s: 503");
	shared_heard(&H.shared, now - 3600000);
	expect(503, "(longer than bridge.resync)", "silent an hour: 503");
	shared_heard(&H.shared, now_mono_us() / 1000);
	expect(200, "{\"status\":\"ready\",\"events\":1}", "heard again: 200 again");

	H.port.refused = true;
	expect(503, "another one holds its dp_id", "refused by the control plane: 503");
	H.port.refused = false;
	H.stopping = true;
	expect(503, "\"reason\":\"stopping\"", "stopping: 503");
	H.stopping = false;

	/* The test plays the bridge: a state without a current sale key, then without auth keys. */
	struct dp_shared *d = (struct dp_shared *)(uintptr_t)H.w->sh;
	int8_t cur = d->sale.current;

	d->sale.current = -1;
	expect(503, "no sale key", "no current sale key: 503");
	d->sale.current = cur;
	uint8_t used = d->auth.used;

	d->auth.used = 0;
	expect(503, "no auth key", "no auth key: 503");
	d->auth.used = used;
	expect(200, "\"status\":\"ready\"", "keys back: 200 again");

	ask("HEAD /readyz HTTP/1.1\r\nHost: s\r\n\r\n", &a);
	tap_eq_int(a.status, 200, "HEAD /readyz: 200");
	tap_ok(strstr(a.text, "\r\n\r\n") != NULL && strstr(a.text, "\r\n\r\n")[4] == '\0',
		"  without a body");
	ask("POST /readyz HTTP/1.1\r\nHost: s\r\nContent-Length: 0\r\n\r\n", &a);
	tap_eq_int(a.status, 405, "POST /readyz: 405");
	tap_ok(strstr(a.text, "Allow: GET, HEAD, OPTIONS") != NULL, "  with Allow");
	tap_eq_int(refusals() - refused0, 0, "no health check counted as a refusal");
	return tap_done();
}

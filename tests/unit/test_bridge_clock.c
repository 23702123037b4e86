/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bridge's clock wraps (issue 27's review fix): a snapshot's start is stamped with a fresh
 * clock after the bridge thread's round read its now_ms, so it may be 1 ms later than that
 * now_ms; bridge_ms_since() saturates at 0 there, and bridge_in_schedule_snapshot() does not
 * abandon a snapshot as it begins (an unsigned now_ms - started_ms would be ~2^64). The same
 * helper times the stop's drain mark (bridge.c's drain_check(), not reachable from here; the
 * mark's resend is tested end to end in tests/integration/test_bridge.c, section 10b).
 *
 * The bridge thread's insides are driven directly: this test reads the bridge's internal header
 * (dataplane/bridge/bridge_int.h) and calls bridge_in_schedule_snapshot() on a zeroed bridge
 * (no sockets, no snapshot applied: not ready), each case a row of a table.
 */
#include <stdint.h>
#include <stdlib.h>

#include "dataplane/bridge/bridge_int.h"
#include "tests/tap.h"

#define RETRY_MS 100

int
main(void)
{
	static const struct {
		uint64_t now_ms, then_ms, want;
	} since[] = {
		{1000, 1000, 0},
		{1000, 1001, 0}, /* stamped after now_ms was read: 0, not 2^64 - 1 */
		{1000, UINT64_MAX, 0},
		{1001, 1000, 1},
		{UINT64_MAX, 0, UINT64_MAX},
	};
	for (size_t i = 0; i < sizeof(since) / sizeof(since[0]); i++)
		tap_ok(bridge_ms_since(since[i].now_ms, since[i].then_ms) == since[i].want,
			"bridge_ms_since(%llu, %llu) is %llu", (unsigned long long)since[i].now_ms,
			(unsigned long long)since[i].then_ms, (unsigned long long)since[i].want);

	/* A snapshot begun at started_ms, looked at by the round that read now_ms. */
	static const struct {
		uint64_t now_ms, started_ms;
		bool abandoned;
		const char *what;
	} snap[] = {
		{50000, 50001, false, "a snapshot stamped 1 ms after the round's now_ms is kept"},
		{50000, 50000, false, "a snapshot begun in the round's millisecond is kept"},
		{50000, 50000 - 4 * RETRY_MS, false, "one 4 retry periods old is kept"},
		{50000, 50000 - 4 * RETRY_MS - 1, true, "one older is abandoned as incomplete"},
	};
	for (size_t i = 0; i < sizeof(snap) / sizeof(snap[0]); i++) {
		struct bridge *b = calloc(1, sizeof(*b));

		if (b == NULL)
			return 1;
		b->cfg.snapshot_retry_ms = RETRY_MS;
		b->cfg.resync_ms = 10 * RETRY_MS;
		b->last_rx_ms = snap[i].now_ms;
		b->last_request_ms = snap[i].now_ms;
		b->snap.active = true;
		b->snap.started_ms = snap[i].started_ms;
		bridge_in_schedule_snapshot(b, snap[i].now_ms);
		tap_ok(b->snap.active == !snap[i].abandoned &&
				b->ctr.snapshots_incomplete == (snap[i].abandoned ? 1 : 0) &&
				b->want_snapshot == snap[i].abandoned,
			"%s (active %d, incomplete %llu)", snap[i].what, b->snap.active,
			(unsigned long long)b->ctr.snapshots_incomplete);
		free(b);
	}
	return tap_done();
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * controlplane/dp_stats: the latest DP_STATS of each data plane — values replaced, new names
 * added, stale after 5 s, a restart (new epoch) starts afresh, late messages ignored, bad
 * records and conflicting families refused alone, the bounds (counters per data plane, names,
 * 1023 data planes), the totals, and the Prometheus and JSON views byte for byte.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "admin/admin_answer.h"
#include "flashgatectl/render.h"
#include "controlplane/dp_stats.h"
#include "common/metrics.h"
#include "tests/tap.h"

/* One record: "name=value" for a counter, "name:g=value" would be ambiguous, so kinds are
 * given apart. */
struct rec {
	const char *name;
	uint64_t value;
	uint8_t kind; /* 0: counter */
};

static uint8_t msgbuf[WIRE_HDR_SIZE + WIRE_STATS_MAX * 64];

/* Encodes recs as one DP_STATS message of (sender, epoch, seq) and decodes it into *m. */
static bool
make(struct wire_msg *m, uint32_t sender, uint32_t epoch, uint64_t seq, const struct rec *recs,
	unsigned n)
{
	static struct wire_stat st[WIRE_STATS_MAX];
	struct wire_sender s = {.id = sender, .epoch = epoch, .seq = seq};

	for (unsigned i = 0; i < n; i++) {
		/* Names the grammar refuses are written raw, so that the decoder sees them. */
		memset(&st[i], 0, sizeof(st[i]));
		st[i].value = recs[i].value;
		st[i].kind = recs[i].kind ? recs[i].kind : WIRE_STAT_COUNTER;
		snprintf(st[i].name, sizeof(st[i].name), "%s", recs[i].name);
	}
	int len = wire_encode(&s, WIRE_T_DP_STATS, st, n, msgbuf, sizeof(msgbuf));

	return len > 0 && wire_decode(msgbuf, (size_t)len, m) == 0;
}

static int
apply(struct dp_stats *s, uint32_t sender, uint32_t epoch, uint64_t seq, const struct rec *recs,
	unsigned n, uint64_t now)
{
	struct wire_msg m;

	if (!make(&m, sender, epoch, seq, recs, n))
		return -999;
	return dp_stats_apply(s, &m, now);
}

/* A data plane's counters as "name=value name=value ...". */
static const char *
dump(const struct dp_stats *s, uint32_t id, uint64_t now)
{
	static char out[8192];
	struct wire_stat st[DP_STATS_COUNTERS_MAX];
	unsigned n = 0;
	size_t len = 0;

	out[0] = '\0';
	if (dp_stats_get(s, id, now, NULL, st, DP_STATS_COUNTERS_MAX, &n) != 0)
		return "(none)";
	for (unsigned i = 0; i < n && len < sizeof(out) - 64; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s=%llu", i ? " " : "",
			st[i].name, (unsigned long long)st[i].value);
	return out;
}

static const char *
totals(const struct dp_stats *s, uint64_t now)
{
	static char out[8192];
	static struct wire_stat st[DP_STATS_NAMES_MAX];
	unsigned n = dp_stats_totals(s, now, st, DP_STATS_NAMES_MAX);
	size_t len = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < n && len < sizeof(out) - 64; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s=%llu", i ? " " : "",
			st[i].name, (unsigned long long)st[i].value);
	return out;
}

static bool
is(const char *got, const char *want, const char *what)
{
	return tap_ok(strcmp(got, want) == 0, "%s: %s%s%s", what, got,
		strcmp(got, want) == 0 ? "" : " -- want: ", strcmp(got, want) == 0 ? "" : want);
}

static uint64_t
refused(const struct dp_stats *s, enum dp_stats_refusal r)
{
	struct dp_stats_counters c;

	dp_stats_read_counters(s, &c);
	return c.refused[r];
}

static void
test_apply(void)
{
	struct dp_stats *s = dp_stats_create();
	const uint64_t t0 = 1000000;

	if (!tap_ok(s != NULL, "dp_stats_create"))
		return;
	const struct rec first[] = {
		{"rx_packets", 10},
		{"drops.reason=ip_checksum", 3},
		{"http_responses.status=200", 7},
		{"bridge_ready", 1, WIRE_STAT_GAUGE},
	};
	tap_eq_int(apply(s, 5, 100, 1, first, 4, t0), 4, "a first message: 4 records applied");
	is(dump(s, 5, t0),
		"rx_packets=10 drops.reason=ip_checksum=3 http_responses.status=200=7 "
		"bridge_ready=1",
		"data plane 5");

	/* The next second: values replaced, a new name added, order kept. */
	const struct rec second[] = {
		{"drops.reason=ip_checksum", 4},
		{"drops.reason=tcp_checksum", 1},
		{"rx_packets", 20},
	};
	tap_eq_int(apply(s, 5, 100, 9, second, 3, t0 + 1000), 3, "a second message: 3 applied");
	is(dump(s, 5, t0 + 1000),
		"rx_packets=20 drops.reason=ip_checksum=4 http_responses.status=200=7 "
		"bridge_ready=1 drops.reason=tcp_checksum=1",
		"values replaced, a new name added at the end, names not sent kept");

	/* A late message (lower sequence) and an older epoch change nothing. */
	const struct rec late[] = {{"rx_packets", 15}};

	tap_eq_int(apply(s, 5, 100, 8, late, 1, t0 + 1100), 0, "sequence 8 after 9: ignored");
	tap_eq_int(apply(s, 5, 100, 9, late, 1, t0 + 1100), 0, "sequence 9 again: ignored");
	tap_eq_int(apply(s, 5, 99, 50, late, 1, t0 + 1100), 0, "an older epoch: ignored");
	tap_eq_int(refused(s, DP_STATS_REFUSED_OUT_OF_ORDER), 3, "3 counted as out_of_order");
	is(dump(s, 5, t0 + 1100),
		"rx_packets=20 drops.reason=ip_checksum=4 http_responses.status=200=7 "
		"bridge_ready=1 drops.reason=tcp_checksum=1",
		"after the late messages");

	/* A second data plane; the totals. */
	const struct rec other[] = {
		{"rx_packets", 100},
		{"drops.reason=tcp_checksum", 2},
		{"bridge_ready", 1, WIRE_STAT_GAUGE},
		{"drops.reason=ip_ttl_zero", 5},
	};
	tap_eq_int(apply(s, 9, 300, 1, other, 4, t0 + 2000), 4, "data plane 9: 4 applied");
	is(totals(s, t0 + 2000),
		"rx_packets=120 drops.reason=ip_checksum=4 drops.reason=tcp_checksum=3 "
		"drops.reason=ip_ttl_zero=5 http_responses.status=200=7 bridge_ready=2",
		"totals, grouped by family");

	struct dp_stats_info info[4];

	tap_ok(dp_stats_list(s, t0 + 2000, info, 4) == 2 && info[0].id == 5 && info[1].id == 9 &&
			!info[0].stale && info[0].reports == 2 && info[0].epoch == 100 &&
			info[0].n_counters == 5 && info[0].first_ms == t0 &&
			info[0].last_ms == t0 + 1000,
		"dp_stats_list: 5 then 9, with reports, epoch, counters, times");
	tap_eq_int(dp_stats_count(s), 2, "dp_stats_count");
	tap_ok(dp_stats_get(s, 7, t0, info, NULL, 0, NULL) == -ENOENT &&
			dp_stats_get(s, 0, t0, info, NULL, 0, NULL) == -ENOENT,
		"an unknown data plane: -ENOENT");

	/* Data plane 5 goes silent: stale after 5 s, its counters still count, its gauges not. */
	uint64_t t_stale = t0 + 1000 + DP_STATS_STALE_MS + 1;

	dp_stats_list(s, t0 + 1000 + DP_STATS_STALE_MS, info, 4);
	tap_ok(!info[0].stale, "silent for exactly 5 s: not stale yet");
	dp_stats_list(s, t_stale, info, 4);
	tap_ok(info[0].stale && !info[1].stale, "silent for more than 5 s: stale");
	is(totals(s, t_stale),
		"rx_packets=120 drops.reason=ip_checksum=4 drops.reason=tcp_checksum=3 "
		"drops.reason=ip_ttl_zero=5 http_responses.status=200=7 bridge_ready=1",
		"a stale data plane's counters count, its gauge does not");

	/* Data plane 5 restarts: a new epoch starts its counters afresh. */
	const struct rec again[] = {{"rx_packets", 1}, {"bridge_ready", 0, WIRE_STAT_GAUGE}};

	tap_eq_int(apply(s, 5, 200, 0, again, 2, t_stale), 2, "after a restart (epoch 200)");
	is(dump(s, 5, t_stale), "rx_packets=1 bridge_ready=0",
		"the restarted data plane holds only what it sent since");
	dp_stats_list(s, t_stale, info, 4);
	tap_ok(info[0].restarts == 1 && info[0].epoch == 200 && !info[0].stale &&
			info[0].reports == 3,
		"one restart counted, fresh again");
	dp_stats_destroy(s);
}

static void
test_refusals(void)
{
	struct dp_stats *s = dp_stats_create();
	struct wire_msg m;

	const struct rec ok[] = {{"drops.reason=a", 1}, {"rx", 1}, {"x", 1}};

	apply(s, 1, 1, 1, ok, 3, 0);
	const struct rec mixed[] = {
		{"Bad", 1},		    /* bad_record: upper case */
		{"drops", 2},		    /* family_conflict: drops has a label */
		{"drops.kind=b", 3},	    /* family_conflict: another label key */
		{"rx", 4, WIRE_STAT_GAUGE}, /* family_conflict: another kind */
		{"x_total", 5},		    /* family_conflict: both are flashgate_dp_x_total */
		{"y.dp=1", 6},		    /* bad_record: the metrics' own label */
		{"y.__k=1", 7},		    /* bad_record: reserved label */
		{"rx", 8, 7},		    /* bad_record: unknown kind */
		{"drops.reason=c", 9},	    /* fine */
	};
	tap_eq_int(apply(s, 1, 1, 2, mixed, 9, 10), 1, "of 9 records, 1 applied");
	tap_eq_int(refused(s, DP_STATS_REFUSED_BAD_RECORD), 4,
		"bad_record: upper case, label dp, label __k, kind 7");
	tap_eq_int(refused(s, DP_STATS_REFUSED_FAMILY_CONFLICT), 4,
		"family_conflict: label vs none, other key, other kind, same metric name");
	is(dump(s, 1, 10), "drops.reason=a=1 rx=1 x=1 drops.reason=c=9",
		"the valid record of the frame was used");

	tap_ok(make(&m, 0, 1, 1, ok, 1) && dp_stats_apply(s, &m, 0) == -ERANGE &&
			make(&m, WIRE_DP_ID_MAX + 1, 1, 1, ok, 1) &&
			dp_stats_apply(s, &m, 0) == -ERANGE &&
			refused(s, DP_STATS_REFUSED_BAD_SENDER) == 2,
		"sender ids 0 and 1024: -ERANGE, counted");
	m.type = WIRE_T_RESERVE;
	tap_eq_int(dp_stats_apply(s, &m, 0), -EINVAL, "another message type: -EINVAL");
	dp_stats_destroy(s);

	/* Bounds: counters per data plane. */
	s = dp_stats_create();
	static struct rec many[WIRE_STATS_MAX];
	static char names[2 * WIRE_STATS_MAX][16];

	for (unsigned i = 0; i < 2 * WIRE_STATS_MAX; i++)
		snprintf(names[i], sizeof(names[i]), "c.k=%u", i);
	for (unsigned i = 0; i < WIRE_STATS_MAX; i++)
		many[i] = (struct rec){names[i], i};
	int a1 = apply(s, 3, 1, 1, many, WIRE_STATS_MAX, 0);

	for (unsigned i = 0; i < 44; i++)
		many[i] = (struct rec){names[WIRE_STATS_MAX + i], i};
	many[44] = (struct rec){names[0], 1000}; /* a known one still updates */
	int a2 = apply(s, 3, 1, 2, many, 45, 0);
	struct wire_stat st;
	unsigned n;

	dp_stats_get(s, 3, 0, NULL, &st, 1, &n);
	tap_ok(a1 == 256 && a2 == 1 && n == DP_STATS_COUNTERS_MAX &&
			refused(s, DP_STATS_REFUSED_TOO_MANY_COUNTERS) == 44 && st.value == 1000,
		"256 counters per data plane; 44 more refused, a known one still updated");
	dp_stats_destroy(s);

	/* Bounds: distinct names over all data planes. 17 data planes x 256 names > 4096. */
	s = dp_stats_create();
	unsigned applied = 0;
	static char big[17 * WIRE_STATS_MAX][24];

	for (unsigned d = 0; d < 17; d++) {
		for (unsigned i = 0; i < WIRE_STATS_MAX; i++) {
			snprintf(big[d * WIRE_STATS_MAX + i], sizeof(big[0]), "n.k=%u_%u", d, i);
			many[i] = (struct rec){big[d * WIRE_STATS_MAX + i], 1};
		}
		int a = apply(s, 10 + d, 1, 1, many, WIRE_STATS_MAX, 0);

		applied += a > 0 ? (unsigned)a : 0;
	}
	tap_ok(applied == DP_STATS_NAMES_MAX && refused(s, DP_STATS_REFUSED_TOO_MANY_NAMES) ==
							17 * 256 - DP_STATS_NAMES_MAX,
		"%d distinct names in all; the rest refused as too_many_names", DP_STATS_NAMES_MAX);
	dp_stats_destroy(s);

	/* Bounds: families (each plain name is its own family). */
	s = dp_stats_create();
	static char fam[5 * WIRE_STATS_MAX][16];

	applied = 0;
	for (unsigned d = 0; d < 5; d++) {
		for (unsigned i = 0; i < WIRE_STATS_MAX; i++) {
			snprintf(fam[d * WIRE_STATS_MAX + i], sizeof(fam[0]), "f%u", d * 256 + i);
			many[i] = (struct rec){fam[d * WIRE_STATS_MAX + i], 1};
		}
		int a = apply(s, 1 + d, 1, 1, many, WIRE_STATS_MAX, 0);

		applied += a > 0 ? (unsigned)a : 0;
	}
	tap_ok(applied == DP_STATS_FAMILIES_MAX &&
			refused(s, DP_STATS_REFUSED_TOO_MANY_NAMES) == 256,
		"%d families; the rest refused", DP_STATS_FAMILIES_MAX);
	dp_stats_destroy(s);

	/* Every possible data plane id. */
	s = dp_stats_create();
	unsigned ok_all = 0;

	for (uint32_t id = 1; id <= WIRE_DP_ID_MAX; id++)
		ok_all += apply(s, id, 1, 1, ok, 3, 0) == 3;
	is(totals(s, 0), "drops.reason=a=1023 rx=1023 x=1023", "1023 data planes summed");
	tap_ok(ok_all == WIRE_DP_ID_MAX && dp_stats_count(s) == WIRE_DP_ID_MAX,
		"all 1023 data plane ids are held");
	dp_stats_destroy(s);
}

static void
test_views(void)
{
	struct dp_stats *s = dp_stats_create();
	const struct rec a[] = {
		{"rx_packets", 10},
		{"drops.reason=ip_checksum", 3},
		{"drops.reason=tcp_checksum", 0},
		{"bridge_ready", 1, WIRE_STAT_GAUGE},
		{"sent_total", 4},
	};
	const struct rec b[] = {
		{"rx_packets", 5},
		{"drops.reason=tcp_checksum", 2},
	};
	apply(s, 2, 1, 1, a, 5, 10000);
	apply(s, 1, 1, 1, b, 2, 1000); /* silent since: stale at 10000 */

	struct metrics_text t;

	metrics_text_init(&t, 0);
	dp_stats_metrics(s, &t, 10000);
	static const char want[] =
		"# HELP flashgate_dataplane_up 1 when the data plane reported its counters in the "
		"last 5 s, 0 when it went silent (stale)\n"
		"# TYPE flashgate_dataplane_up gauge\n"
		"flashgate_dataplane_up{dp=\"1\"} 0\n"
		"flashgate_dataplane_up{dp=\"2\"} 1\n"
		"# HELP flashgate_dataplane_report_age_seconds Seconds since the data plane's "
		"latest "
		"counters arrived\n"
		"# TYPE flashgate_dataplane_report_age_seconds gauge\n"
		"flashgate_dataplane_report_age_seconds{dp=\"1\"} 9\n"
		"flashgate_dataplane_report_age_seconds{dp=\"2\"} 0\n"
		"# HELP flashgate_dataplane_reports_total Counter reports (DP_STATS messages) "
		"received from the data plane\n"
		"# TYPE flashgate_dataplane_reports_total counter\n"
		"flashgate_dataplane_reports_total{dp=\"1\"} 1\n"
		"flashgate_dataplane_reports_total{dp=\"2\"} 1\n"
		"# HELP flashgate_dataplane_restarts_total Times the data plane came back with a "
		"new "
		"epoch (its counters restart)\n"
		"# TYPE flashgate_dataplane_restarts_total counter\n"
		"flashgate_dataplane_restarts_total{dp=\"1\"} 0\n"
		"flashgate_dataplane_restarts_total{dp=\"2\"} 0\n"
		"# HELP flashgate_dp_rx_packets_total Data plane counter \"rx_packets\", as each "
		"data "
		"plane last reported it\n"
		"# TYPE flashgate_dp_rx_packets_total counter\n"
		"flashgate_dp_rx_packets_total{dp=\"1\"} 5\n"
		"flashgate_dp_rx_packets_total{dp=\"2\"} 10\n"
		"# HELP flashgate_dp_drops_total Data plane counter \"drops\" by reason, as each "
		"data "
		"plane last reported it\n"
		"# TYPE flashgate_dp_drops_total counter\n"
		"flashgate_dp_drops_total{dp=\"2\",reason=\"ip_checksum\"} 3\n"
		"flashgate_dp_drops_total{dp=\"1\",reason=\"tcp_checksum\"} 2\n"
		"flashgate_dp_drops_total{dp=\"2\",reason=\"tcp_checksum\"} 0\n"
		"# HELP flashgate_dp_bridge_ready Data plane gauge \"bridge_ready\", as each data "
		"plane last reported it\n"
		"# TYPE flashgate_dp_bridge_ready gauge\n"
		"flashgate_dp_bridge_ready{dp=\"2\"} 1\n"
		"# HELP flashgate_dp_sent_total Data plane counter \"sent_total\", as each data "
		"plane "
		"last reported it\n"
		"# TYPE flashgate_dp_sent_total counter\n"
		"flashgate_dp_sent_total{dp=\"2\"} 4\n"
		"# HELP flashgate_dataplane_stats_refused_total Data plane counter reports or "
		"records "
		"the control plane did not apply, by reason\n"
		"# TYPE flashgate_dataplane_stats_refused_total counter\n"
		"flashgate_dataplane_stats_refused_total{reason=\"bad_record\"} 0\n"
		"flashgate_dataplane_stats_refused_total{reason=\"bad_sender\"} 0\n"
		"flashgate_dataplane_stats_refused_total{reason=\"out_of_order\"} 0\n"
		"flashgate_dataplane_stats_refused_total{reason=\"too_many_counters\"} 0\n"
		"flashgate_dataplane_stats_refused_total{reason=\"too_many_names\"} 0\n"
		"flashgate_dataplane_stats_refused_total{reason=\"family_conflict\"} 0\n"
		"flashgate_dataplane_stats_refused_total{reason=\"no_memory\"} 0\n";
	bool same = t.error == 0 && t.buf != NULL && strcmp(t.buf, want) == 0;

	if (!same)
		tap_diag("got (error %d):\n%s", t.error, t.buf ? t.buf : "");
	tap_ok(same, "Prometheus text: per data plane state, families by label, _total added once");
	metrics_text_fini(&t);

	/* The stats command's JSON, and how flashgatectl shows it. */
	static char buf[8192];
	struct json_writer j;

	admin_json_ok(&j, buf, sizeof(buf));
	dp_stats_json(s, &j, 10000, true);
	int len = admin_json_end(&j);
	static const char want_json[] =
		"{\"ok\":true,\"data_planes\":["
		"{\"id\":1,\"state\":\"stale\",\"age_ms\":9000,\"reports\":1,\"restarts\":0,"
		"\"counters\":2},"
		"{\"id\":2,\"state\":\"up\",\"age_ms\":0,\"reports\":1,\"restarts\":0,"
		"\"counters\":5}],"
		"\"dp_totals\":{\"rx_packets\":15,\"drops\":{\"ip_checksum\":3,\"tcp_checksum\":2},"
		"\"bridge_ready\":1,\"sent_total\":4},"
		"\"dp_counters\":{\"1\":{\"rx_packets\":5,\"drops\":{\"tcp_checksum\":2}},"
		"\"2\":{\"rx_packets\":10,\"drops\":{\"ip_checksum\":3},\"bridge_ready\":1,"
		"\"sent_total\":4}}}\n";

	same = len > 0 && strcmp(buf, want_json) == 0;
	if (!same)
		tap_diag("got: %s", buf);
	tap_ok(same, "JSON: data planes, totals and each one's counters by family, zeros skipped");

	char *out = NULL;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);

	tap_ok(f != NULL && render_answer(buf, (size_t)len, f, NULL) == 0,
		"flashgatectl's render_answer accepts it");
	if (f != NULL)
		fclose(f);
	tap_ok(out != NULL && strstr(out, "dp_totals:\n") != NULL &&
			strstr(out, "    ip_checksum:  3\n") != NULL &&
			strstr(out, "ID  STATE  AGE_MS") != NULL,
		"rendered for people: a table of data planes, counters by reason");
	if (out != NULL && strstr(out, "ID  STATE") == NULL)
		tap_diag("%s", out);
	free(out);

	admin_json_ok(&j, buf, sizeof(buf));
	dp_stats_json(s, &j, 10000, false);
	len = admin_json_end(&j);
	tap_ok(len > 0 && strstr(buf, "\"drops\":{\"ip_checksum\":3,\"tcp_checksum\":0}") != NULL,
		"without skip_zero, a zero reason is shown");
	dp_stats_destroy(s);
}

/* The largest purchase token lifetime the data planes report: what retired sale keys outlive. */
static void
test_gauge_max(void)
{
	struct dp_stats *s = dp_stats_create();
	const struct rec a[] = {{"purchase_token_ttl_s", 300, WIRE_STAT_GAUGE}, {"rx", 5, 0}};
	const struct rec b[] = {{"purchase_token_ttl_s", 900, WIRE_STAT_GAUGE}};
	const struct rec c[] = {{"purchase_token_ttl_s", 60, WIRE_STAT_GAUGE}};
	uint64_t max = 7;
	uint32_t dp = 0;

	if (!tap_ok(s != NULL, "dp_stats_create"))
		return;
	tap_ok(dp_stats_gauge_max(s, "purchase_token_ttl_s", &max, &dp) == -ENOENT && max == 7,
		"gauge max: -ENOENT before any data plane reported it");
	apply(s, 3, 100, 1, a, 2, 1000);
	apply(s, 5, 100, 1, b, 1, 1000);
	apply(s, 9, 100, 1, c, 1, 1000);
	int rc = dp_stats_gauge_max(s, "purchase_token_ttl_s", &max, &dp);

	tap_ok(rc == 0 && max == 900 && dp == 5,
		"gauge max: the largest of three data planes, and which one (%llu from %u)",
		(unsigned long long)max, dp);
	tap_ok(dp_stats_gauge_max(s, "rx", &max, &dp) == 0 && max == 5 && dp == 3,
		"gauge max: a name only one data plane reports");
	tap_ok(dp_stats_gauge_max(s, "purchase_token_ttl", &max, NULL) == -ENOENT,
		"gauge max: another name is not a prefix match");
	dp_stats_destroy(s);
}

/* A counter summed over the data planes: the forward budget's refusals (automatic difficulty). */
static void
test_sum(void)
{
	struct dp_stats *s = dp_stats_create();
	const struct rec a[] = {{"rejects.reason=forward_budget", 40, 0}, {"rx", 5, 0}};
	const struct rec b[] = {{"rejects.reason=forward_budget", 2, 0}};
	uint64_t sum = 9;

	if (!tap_ok(s != NULL, "dp_stats_create"))
		return;
	tap_ok(dp_stats_sum(s, "rejects.reason=forward_budget", &sum) == -ENOENT && sum == 0,
		"sum: -ENOENT and 0 before any data plane reported it");
	apply(s, 3, 100, 1, a, 2, 1000);
	apply(s, 5, 100, 1, b, 1, 1000);
	tap_ok(dp_stats_sum(s, "rejects.reason=forward_budget", &sum) == 0 && sum == 42,
		"sum: 40 + 2 over two data planes (%llu)", (unsigned long long)sum);
	tap_ok(dp_stats_sum(s, "rejects", &sum) == -ENOENT, "sum: a family is not a name");
	dp_stats_destroy(s);
}

int
main(void)
{
	test_apply();
	test_refusals();
	test_views();
	test_gauge_max();
	test_sum();
	return tap_done();
}

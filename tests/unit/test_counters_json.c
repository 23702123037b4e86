/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dataplane/counters_json: the final counters as JSON (--counters-json). Two workers' counters
 * and the bridge's are written as the data plane's log shows them (counters_print() under the
 * "final counters" line) and as JSON; python3 parses the JSON and reads the text back
 * (tests/lib/dp_counters_check.py, the first argument): the same figures. Exact member names of
 * the parts scripts read, a total that is the workers' sum, and the errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "dataplane/bridge/bridge.h"
#include "dataplane/counters_json.h"
#include "tests/lib/pycheck.h"
#include "tests/tap.h"

static const char *checker;
static struct dp_counters ctr[2];
static struct bridge_counters bc;
static char json[65536];

static void
fill(void)
{
	for (unsigned w = 0; w < 2; w++) {
		struct dp_counters *c = &ctr[w];

		c->rx_packets = 1000 + w, c->rx_bytes = 64000 + w, c->tx_packets = 990 + w;
		c->tx_bytes = 70000 + w, c->requests = 300 + w, c->busy_cycles = 123456 + w;
		c->cpu_ns = 5000 + w, c->wall_ns = 9000 + w;
		c->rx_bursts = 77 + w;
		c->tx_held = 4 + w;
		c->answers[DP_ANS_SYN_ACK] = 300 + w, c->answers[DP_ANS_HTTP] = 299 + w;
		c->http[counters_http_slot(200)] = 100 + w, c->http[counters_http_slot(202)] = 150;
		c->http[counters_http_slot(429)] = w;
		c->admit[DP_ADM_RESERVE_ADMITTED] = 150, c->reject[DP_REJ_LIMIT_IP] = w;
		c->drops[DP_DROP_TCP_PURE_ACK] = 600 + w, c->drops[DP_DROP_TX_FULL] = 3 * w;
		c->limit[DP_LIM_IP][DP_LIM_EV_EVICTIONS] = 9 + w;
		c->limit[DP_LIM_DEVICE][DP_LIM_EV_MOVED] = w;
		c->client[DP_CLIENT_PACKET] = 200 + w, c->client[DP_CLIENT_XFF] = 100;
		c->client[DP_CLIENT_REFUSED] = w;
	}
	memset(&bc, 0, sizeof(bc));
	bc.submitted = 300, bc.ring_full = 1, bc.batches_sent = 12, bc.unsent_at_stop = 0;
	bc.snapshots_applied = 2, bc.results.inserted = 250, bc.results.replaced = 50;
}

/* The log as flashgate-dataplane's report_counters() writes it. */
static void
write_log(FILE *f, const struct counters_of *w, unsigned n, bool bridge)
{
	struct dp_counters sum;

	memset(&sum, 0, sizeof(sum));
	for (unsigned i = 0; i < n; i++)
		counters_add(&sum, w[i].ctr);
	fprintf(f, "EAL: a line before\n");
	fprintf(f, "flashgate-dataplane: final counters (%u worker(s), TSC %" PRIu64 " Hz):\n", n,
		rte_get_tsc_hz());
	counters_print(f, &sum);
	if (bridge)
		fprintf(f,
			"  bridge: %" PRIu64 " reservations handed over, %" PRIu64 " refused (ring "
			"full), %" PRIu64 " batches sent, %" PRIu64 " unsent at stop, %" PRIu64
			" unconfirmed at stop, %" PRIu64 " snapshots applied, %" PRIu64
			" results stored\n",
			bc.submitted, bc.ring_full, bc.batches_sent, bc.unsent_at_stop,
			bc.unconfirmed_at_stop, bc.snapshots_applied, bc.results.inserted + bc.results.replaced);
	if (n > 1) {
		for (unsigned i = 0; i < n; i++) {
			fprintf(f, "worker lcore %u:\n", w[i].lcore);
			counters_print(f, w[i].ctr);
		}
	}
	fprintf(f, "EAL: a line after\n");
}

/* Runs the checker on the log and JSON of w[0..n); true when they agree. */
static bool
agree(const struct counters_of *w, unsigned n, bool bridge, char *diff, size_t dcap)
{
	char *log = NULL;
	size_t log_len = 0;
	FILE *f = open_memstream(&log, &log_len);
	int len = counters_json(json, sizeof(json), rte_get_tsc_hz(), w, n, bridge ? &bc : NULL);
	bool ok = false;

	diff[0] = '\0';
	if (f != NULL) {
		write_log(f, w, n, bridge);
		fclose(f);
		ok = len > 0 && pycheck_run(checker, log, log_len, json, (size_t)len, diff, dcap);
	}
	free(log);
	return ok;
}

static void
test_text_and_json(void)
{
	const struct counters_of w[2] = {{1, &ctr[0]}, {3, &ctr[1]}};
	char diff[2048];
	bool ok;

	ok = agree(w, 1, true, diff, sizeof(diff));
	tap_ok(ok, "one worker and the bridge: the JSON has the log's final counters%s%s",
		diff[0] ? ": " : "", diff);
	ok = agree(w, 2, true, diff, sizeof(diff));
	tap_ok(ok, "two workers: the total and each worker's counters as in the log%s%s",
		diff[0] ? ": " : "", diff);
	ok = agree(w, 2, false, diff, sizeof(diff));
	tap_ok(ok, "without a bridge: no \"bridge\" member, as no bridge line%s%s",
		diff[0] ? ": " : "", diff);
}

static void
test_members(void)
{
	const struct counters_of w[2] = {{1, &ctr[0]}, {3, &ctr[1]}};
	int n = counters_json(json, sizeof(json), 2000000000ull, w, 2, &bc);

	tap_ok(n > 0 && json[n - 1] == '\n' && strchr(json, '\n') == json + n - 1,
		"one JSON object on one line, ended by a newline (%d bytes)", n);
	static const char head[] =
		"{\"workers\":2,\"tsc_hz\":2000000000,\"total\":{\"rx_packets\":2001,"
		"\"rx_bytes\":128001,\"tx_packets\":1981,\"tx_bytes\":140001,"
		"\"http_requests\":601,\"busy_cycles\":246913,\"cpu_ns\":10001,"
		"\"wall_ns\":18001,\"rx_bursts\":155,\"tx_held\":9,\"answers\":{\"arp_reply\":0,";

	tap_ok(strncmp(json, head, strlen(head)) == 0,
		"\"workers\", \"tsc_hz\", then the total's sums under their names");
	tap_ok(strstr(json, "\"http_responses\":{\"200\":201,\"202\":300,") != NULL &&
			strstr(json, "\"drops\":{\"eth_runt\":0,") != NULL &&
			strstr(json, "\"tcp_pure_ack\":1201,\"tcp_mss_below_floor\":0,") != NULL &&
			strstr(json, "\"tx_full\":3,\"answer_no_mbuf\":0,") != NULL &&
			strstr(json, "\"kept_connections_capacity\":0,"
				     "\"kept_connections_in_use\":0,"
				     "\"kept_connections\":{\"opened\":0,") != NULL &&
			strstr(json, "\"admits\":{\"token_issued\":0,\"reserve_admitted\":300,") !=
				NULL &&
			strstr(json, "\"rejects\":{\"blocked_ip\":0,") != NULL &&
			strstr(json, "\"limit_ip\":1,") != NULL &&
			strstr(json, "\"ratelimit_evictions\":{\"ip\":19,") != NULL &&
			strstr(json, "\"ratelimit_moved\":{\"ip\":0,\"user\":0,\"device\":1}") !=
				NULL,
		"families as objects by member, with counters_table[]'s names, zeros too");
	tap_ok(strstr(json, "\"bridge\":{\"submitted\":300,\"ring_full\":1,\"batches_sent\":12,"
			    "\"unsent_at_stop\":0,\"unconfirmed_at_stop\":0,\"snapshots_applied\":2,\"results_stored\":300},"
			    "\"per_worker\":[{\"lcore\":1,\"rx_packets\":1000,") != NULL,
		"the bridge's seven figures, then each worker's counters with its lcore");
	tap_ok(strstr(json, "{\"lcore\":3,\"rx_packets\":1001,") != NULL &&
			strcmp(json + n - 4, "}]}\n") == 0,
		"the second worker is the last member");
}

/* counters_table[] names every value of struct dp_counters exactly once, each name once. */
static void
test_table(void)
{
	enum { WORDS = sizeof(struct dp_counters) / sizeof(uint64_t) };
	unsigned seen[WORDS] = {0}, outside = 0, twice = 0, missing = 0, same_name = 0;

	for (unsigned k = 0; k < COUNTERS_TABLE_LEN; k++) {
		const struct counters_desc *d = &counters_table[k];

		for (unsigned i = 0; i < d->n; i++) {
			size_t w = d->offset / sizeof(uint64_t) + (size_t)i * d->stride;

			if (w >= WORDS)
				outside++;
			else
				seen[w]++;
		}
		for (unsigned j = 0; j < k; j++)
			same_name += strcmp(counters_table[j].name, d->name) == 0;
	}
	for (unsigned w = 0; w < WORDS; w++) {
		missing += seen[w] == 0;
		twice += seen[w] > 1;
	}
	tap_ok(outside == 0 && twice == 0 && missing == 0,
		"counters_table[] covers every counter of struct dp_counters once (%u missing, %u "
		"twice, %u outside)",
		missing, twice, outside);
	tap_eq_int(same_name, 0, "no two entries of counters_table[] share a name");
}

static void
test_errors(void)
{
	const struct counters_of w[1] = {{1, &ctr[0]}};
	char small[100];

	tap_eq_int(counters_json(small, sizeof(small), 1, w, 1, NULL), -ENOSPC,
		"counters larger than the buffer: -ENOSPC");
	tap_eq_int(counters_json_write("/nonexistent-dir/c.json", NULL, 0, NULL), -ENOENT,
		"--counters-json into a missing directory: -ENOENT (after a message)");
	tap_eq_int(counters_json(json, sizeof(json), 1, w, 0, NULL) > 0, 1,
		"no worker: still an object (zeros and an empty per_worker)");
	tap_ok(strstr(json, "\"per_worker\":[]}") != NULL, "no worker: \"per_worker\" is []");
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		printf("Bail out! usage: %s dp_counters_check.py\n", argv[0]);
		return 1;
	}
	checker = argv[1];
	fill();
	test_text_and_json();
	test_members();
	test_table();
	test_errors();
	return tap_done();
}

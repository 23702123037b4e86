/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tools/loadgen/lg_report: the report of a run built from filled counters, in every mode's
 * shape, as text and as JSON. python3 parses the JSON and reads the text back
 * (tests/lib/lg_report_check.py, the first argument): the same members with the same values.
 * The names of one report are checked as exact text, so that a renamed field fails here before
 * a script misses it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/pycheck.h"
#include "tests/tap.h"
#include "tools/loadgen/lg_report.h"

#define HZ 1000000000ull /* one cycle per ns: latencies in µs are cycles / 1000 */

static const char *checker;

/* Distinct counts in every field, so that a figure read from the wrong counter shows. */
static void
fill_stats(struct lg_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->tx_pkts = 3001, s->rx_pkts = 2999, s->tx_dropped = 2, s->other_rx = 5;
	s->conns_started = 1000, s->conns_completed = 990, s->conns_rst = 3;
	s->conns_timeout = 4, s->conns_malformed = 1, s->retransmits = 17;
	s->requests = 1010, s->responses = 1005;
	s->status[200] = 700, s->status[202] = 250, s->status[410] = 55;
	s->malformed_tcp = 6, s->malformed_http = 7, s->unexpected_status = 8, s->stray = 9;
	s->syn_sent = 5000, s->syn_acks = 4990;
	s->blast_sent = 4000, s->blast_syn_acks = 3999, s->blast_ok = 3900, s->blast_busy = 90;
	s->blast_fin_acks = 3980;
	s->users_started = 300, s->users_done = 297, s->double_clicks = 30;
	for (int i = 0; i < LG_OUT_N; i++)
		s->outcome[i] = 10u + (unsigned)i;
	for (unsigned k = 0; k < LG_FLOOD_N; k++) {
		struct lg_flood_stats *f = &s->flood[k];

		f->sent = 100 + k, f->conns = 200 + k, f->answered = 90 + k, f->rsts = k;
		f->timeouts = 2 * k, f->retransmits = 3 * k, f->malformed = 0, f->unexpected = k;
		f->status[401] = 40 + k, f->status[429] = 20 + k;
	}
	for (uint64_t v = 1000; v < 200000; v += 997)
		lg_hist_add(&s->req_lat, v);
	for (uint64_t v = 5000; v < 900000; v += 4999)
		lg_hist_add(&s->conn_lat, v);
	s->pow_challenges = 290, s->pow_solved = 280, s->pow_unsolved = 3;
	s->pow_tries = 280000, s->pow_cycles = 140000000;
	s->queued_polls = 900, s->queued_position = 600, s->queued_wait = 800;
	s->position_rises = 0;
	s->pop_users[LG_POP_PEOPLE] = 200, s->pop_users[LG_POP_BOTS] = 100;
	s->pop_entrants[LG_POP_PEOPLE] = 150, s->pop_entrants[LG_POP_BOTS] = 100;
	s->pop_items[LG_POP_PEOPLE] = 20, s->pop_items[LG_POP_BOTS] = 80;
	s->arrived_pre = 150, s->arrived_burst = 150;
	for (uint64_t v = 100000; v < 2000000; v += 9973)
		lg_hist_add(&s->pow_cpu, v);
	for (uint64_t v = 200000; v < 9000000; v += 49999)
		lg_hist_add(&s->pow_wait, v);
}

static void
make_report(struct lg_report *r, const struct lg_stats *s, const char *mode, enum lg_mode m)
{
	memset(r, 0, sizeof(*r));
	r->mode = mode;
	r->mode_id = m;
	r->elapsed_s = 2.5;
	r->conns_asked = lg_mode_single(m) ? 1000 : 0;
	r->users_asked = m == LG_MODE_SALE ? 300 : 0;
	r->unfinished = 3;
	r->hz = HZ;
	r->st = s;
}

/* Renders r both ways and runs the checker on them; true when they agree. */
static bool
text_and_json_agree(const struct lg_report *r, char *json, size_t cap, char *diff, size_t dcap)
{
	char *text = NULL;
	size_t text_len = 0;
	FILE *f = open_memstream(&text, &text_len);
	int n = lg_report_json(r, json, cap);
	bool ok = false;

	diff[0] = '\0';
	if (f != NULL) {
		lg_report_text(f, r);
		fclose(f);
		ok = n > 0 && pycheck_run(checker, text, text_len, json, (size_t)n, diff, dcap);
	}
	free(text);
	return ok;
}

static void
test_every_mode(void)
{
	static const struct {
		const char *name;
		enum lg_mode mode;
		bool floods, pcap, timed_out;
	} cases[] = {
		{"healthz", LG_MODE_HEALTHZ, false, false, false},
		{"syn-flood", LG_MODE_SYN_FLOOD, false, true, false},
		{"sale", LG_MODE_SALE, true, false, true},
		{"reserve", LG_MODE_RESERVE, false, false, false},
		{"result", LG_MODE_RESULT, false, false, false},
		{"healthz-blast", LG_MODE_HEALTHZ_BLAST, false, false, false},
		{"reserve-blast", LG_MODE_RESERVE_BLAST, false, false, true},
		{"healthz", LG_MODE_HEALTHZ, true, true, false},
		{"sale", LG_MODE_SALE, false, false, false}, /* with bots and a pre-queue */
	};
	static struct lg_stats s;
	char json[65536], diff[2048];

	fill_stats(&s);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lg_report r;

		make_report(&r, &s, cases[i].name, cases[i].mode);
		r.timed_out = cases[i].timed_out;
		if (cases[i].floods) {
			for (unsigned k = 0; k < LG_FLOOD_N; k++) {
				r.flood_rate[k] = 1000.0 * (k + 1);
				r.flood_unfinished[k] = k;
			}
		}
		r.pcap = cases[i].pcap;
		r.pcap_path = cases[i].pcap ? "/tmp/run.pcap" : NULL;
		r.pcap_frames = 100;
		if (i == sizeof(cases) / sizeof(cases[0]) - 1) {
			r.populations = r.arrivals = true;
			r.pow_bits_min = 12, r.pow_bits_max = 14;
			r.arr_first_pre = -9.987, r.arr_last_pre = -0.012, r.arr_first_burst = 0.001;
		}
		bool ok = text_and_json_agree(&r, json, sizeof(json), diff, sizeof(diff));

		tap_ok(ok, "%s%s%s: the JSON report has the text's figures, name for name%s%s",
			cases[i].name, cases[i].floods ? " with floods" : "",
			cases[i].pcap ? " and pcap" : "", diff[0] ? ": " : "", diff);
	}
}

/* The names scripts read, as exact text: a syn-flood run, the smallest report there is. */
static void
test_exact_names(void)
{
	static struct lg_stats s;
	struct lg_report r;
	char json[4096];

	memset(&s, 0, sizeof(s));
	s.syn_sent = 10, s.syn_acks = 9, s.conns_rst = 1, s.tx_pkts = 10, s.rx_pkts = 10;
	s.status[200] = 2;
	lg_hist_add(&s.req_lat, 1500);
	make_report(&r, &s, "syn-flood", LG_MODE_SYN_FLOOD);
	r.elapsed_s = 0.25;
	r.flood_rate[LG_FLOOD_BAD_ACK] = 50;
	int n = lg_report_json(&r, json, sizeof(json));
	const char *want =
		"{\"mode\":\"syn-flood\",\"worker_cores\":1,\"elapsed_s\":0.250,"
		"\"duration_reached\":false,\"syn\":{\"sent\":10,\"syn_ack\":9,\"rst\":1},"
		"\"answers\":{\"200\":2},\"malformed\":{\"tcp\":0,\"http\":0},"
		"\"unexpected_status\":0,\"stray_segments\":0,\"retransmits\":0,"
		"\"packets\":{\"tx\":10,\"rx\":10,\"tx_dropped\":0,\"other_rx\":0},"
		"\"packets_per_s\":{\"tx\":40,\"rx\":40},\"requests\":{\"sent\":0,\"answered\":0,\"kept\":0,\"kept_closed\":0},"
		"\"requests_per_s\":0,"
		"\"latency_request_us\":{\"count\":1,\"p50\":1.5,\"p99\":1.5,\"p999\":1.5,"
		"\"max\":1.5},"
		"\"latency_connection_us\":{\"count\":0,\"p50\":0.0,\"p99\":0.0,\"p999\":0.0,"
		"\"max\":0.0},"
		"\"flood_bad_ack\":{\"rate\":50,\"sent\":0,\"rst\":0,\"malformed\":0,"
		"\"unexpected\":0}}\n";

	bool same = n == (int)strlen(want) && strcmp(json, want) == 0;

	tap_ok(same, "syn-flood report with a bad-ack flood: the exact JSON text%s%.*s",
		same ? "" : "; got ", same ? 0 : (int)strcspn(json, "\n"), json);
}

static void
test_overflow_and_write_errors(void)
{
	static struct lg_stats s;
	struct lg_report r;
	char small[64];

	fill_stats(&s);
	make_report(&r, &s, "sale", LG_MODE_SALE);
	tap_eq_int(lg_report_json(&r, small, sizeof(small)), -ENOSPC,
		"a report larger than the buffer: -ENOSPC, nothing half written is returned");
	tap_ok(lg_report_json_write(&r, "/nonexistent-dir/report.json") == -ENOENT,
		"--report-json into a missing directory: -ENOENT (after a message)");

	char path[] = "/tmp/fg-lg-report-w.XXXXXX";
	int fd = mkstemp(path);
	char want[65536], got[65536];
	int n = lg_report_json(&r, want, sizeof(want));
	ssize_t m = -1;

	if (fd >= 0 && lg_report_json_write(&r, path) == 0)
		m = read(fd, got, sizeof(got));
	tap_ok(n > 0 && m == n && memcmp(got, want, (size_t)n) == 0,
		"lg_report_json_write writes the whole report to the file (%d bytes)", n);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* Whether line (a whole line, its '\n' too) is in text. */
static bool
has_line(const char *text, const char *line)
{
	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if (p == text || p[-1] == '\n')
			return true;
	return false;
}

/*
 * A sale's own lines as exact text: the challenges' cost (solutions, tries, solving time per
 * solution), the queued polls, each population's users, entrants and items with their shares
 * printed directly, the pre-queue's arrivals. Without --bots or --arrive-before, no such line.
 */
static void
test_sale_lines(void)
{
	static struct lg_stats s;
	struct lg_report r;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	memset(&s, 0, sizeof(s));
	s.pow_challenges = 5, s.pow_solved = 4, s.pow_unsolved = 1, s.pow_tries = 4000;
	s.pow_cycles = 2000000; /* 2 ms at HZ */
	s.queued_polls = 9, s.queued_position = 6, s.queued_wait = 8, s.position_rises = 1;
	s.pop_users[LG_POP_PEOPLE] = 200, s.pop_users[LG_POP_BOTS] = 100;
	s.pop_entrants[LG_POP_PEOPLE] = 150, s.pop_entrants[LG_POP_BOTS] = 100;
	s.pop_items[LG_POP_PEOPLE] = 20, s.pop_items[LG_POP_BOTS] = 80;
	s.arrived_pre = 150, s.arrived_burst = 150;
	lg_hist_add(&s.pow_cpu, 500000);
	make_report(&r, &s, "sale", LG_MODE_SALE);
	r.pow_bits_min = 10, r.pow_bits_max = 12;
	r.populations = r.arrivals = true;
	r.arr_first_pre = -9.9871, r.arr_last_pre = -0.0124, r.arr_first_burst = 0.0011;
	f = open_memstream(&text, &len);
	if (f == NULL)
		return;
	lg_report_text(f, &r);
	fclose(f);
	tap_ok(has_line(text, "pow: challenges 5 solved 4 unsolved 1 bits_min 10 bits_max 12 "
			      "tries 4000 tries_per_solution 1000 cpu_s 0.002 "
			      "cpu_us_per_solution 500.0\n"),
		"sale report: challenges, solutions, tries and solving time per solution");
	tap_ok(has_line(text, "pow_cpu_us: count 1 p50 500.0 p99 500.0 p999 500.0 max 500.0\n"),
		"sale report: the solving time of each solution as a distribution");
	tap_ok(has_line(text, "queue: polls 9 position 6 wait 8 rises 1\n"),
		"sale report: queued polls, with a position, with a wait, positions that rose");
	tap_ok(has_line(text, "bots: users 100 entrants 100 items 80 share_users 33.3 "
			      "share_entrants 40.0 share_items 80.0\n") &&
			has_line(text, "people: users 200 entrants 150 items 20 share_users 66.7 "
				       "share_entrants 60.0 share_items 20.0\n"),
		"sale report with --bots: users, entrants and items per population, and their shares");
	tap_ok(has_line(text, "arrivals: before 150 at_start 150 first_before_s -9.987 "
			      "last_before_s -0.012 first_at_start_s 0.001\n"),
		"sale report with --arrive-before: arrivals before and at the start, and when");
	free(text);
	text = NULL;
	r.populations = r.arrivals = false;
	f = open_memstream(&text, &len);
	if (f == NULL)
		return;
	lg_report_text(f, &r);
	fclose(f);
	tap_ok(strstr(text, "\nbots:") == NULL && strstr(text, "\npeople:") == NULL &&
			strstr(text, "\narrivals:") == NULL && strstr(text, "\npow:") != NULL,
		"sale report without --bots and --arrive-before: no population or arrival line");
	free(text);
}

/* lg_report_fill takes the figures that live outside the counters from the options and client. */
static void
test_fill(void)
{
	static struct lg_client cl;
	static struct lg_opts o;
	struct lg_report r;

	memset(&cl, 0, sizeof(cl));
	memset(&o, 0, sizeof(o));
	cl.hz = 2000;
	o.mode = LG_MODE_SALE;
	o.count = 42;
	o.flood_rate[LG_FLOOD_ONE_IP] = 7;
	o.pcap_path = "x.pcap";
	cl.pcap.frames = 5;
	lg_report_fill(&r, &o, &cl, "sale", 5000, true);
	tap_ok(strcmp(r.mode, "sale") == 0 && r.mode_id == LG_MODE_SALE && r.elapsed_s == 2.5 &&
			r.timed_out && r.users_asked == 42 && r.conns_asked == 0 &&
			r.unfinished == 0 && r.flood_rate[LG_FLOOD_ONE_IP] == 7 && r.pcap &&
			r.pcap_frames == 5 && r.st == &cl.st && r.hz == 2000,
		"lg_report_fill: a sale's mode, elapsed time, users asked, flood rates and pcap");
	o.mode = LG_MODE_RESERVE;
	o.pcap_path = NULL;
	lg_report_fill(&r, &o, &cl, "reserve", 0, false);
	tap_ok(r.conns_asked == 42 && r.users_asked == 0 && r.elapsed_s > 0 && !r.pcap,
		"lg_report_fill: reserve asks connections; an empty run's time is still above 0");
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		printf("Bail out! usage: %s lg_report_check.py\n", argv[0]);
		return 1;
	}
	checker = argv[1];
	test_every_mode();
	test_exact_names();
	test_overflow_and_write_errors();
	test_fill();
	test_sale_lines();
	return tap_done();
}

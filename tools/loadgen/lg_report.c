/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/loadgen/lg_report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_writer.h"

void
lg_report_fill(struct lg_report *r, const struct lg_opts *o, const struct lg_client *cl,
	const char *mode, uint64_t elapsed, bool timed_out)
{
	memset(r, 0, sizeof(*r));
	r->mode = mode;
	r->mode_id = o->mode;
	r->elapsed_s = (double)elapsed / (double)cl->hz;
	if (r->elapsed_s <= 0)
		r->elapsed_s = 1e-9;
	r->timed_out = timed_out;
	r->conns_asked = lg_mode_single(o->mode) ? o->count : 0;
	r->users_asked = o->mode == LG_MODE_SALE ? o->count : 0;
	r->unfinished = cl->tab ? cl->tab->active : 0;
	for (unsigned k = 0; k < LG_FLOOD_N; k++) {
		r->flood_rate[k] = o->flood_rate[k];
		/* The flood table is shared by unsigned and one-ip: its open slots, by kind. */
		for (uint32_t i = 0; cl->ftab != NULL && i < cl->ftab->n; i++)
			r->flood_unfinished[k] += cl->ftab->c[i].state != LG_CS_FREE &&
						  lg_flood_of_step(cl->ftab->c[i].step) == k;
	}
	r->pcap = cl->capturing || o->pcap_path;
	r->pcap_path = o->pcap_path;
	r->pcap_frames = cl->pcap.frames;
	r->pow_bits_min = cl->pow_bits_min;
	r->pow_bits_max = cl->pow_bits_max;
	r->populations = o->mode == LG_MODE_SALE && o->populations;
	r->arrivals = o->mode == LG_MODE_SALE && o->arrive_before > 0;
	r->arr_first_pre = cl->arr_first_pre;
	r->arr_last_pre = cl->arr_last_pre;
	r->arr_first_burst = cl->arr_first_burst;
	r->hz = cl->hz;
	r->st = &cl->st;
}

/* n as a percent of total (0 when total is 0). */
static double
pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0;
}

/*
 * The sale's own figures, each line a name and its "word value" pairs, written once for both
 * forms: challenges (solutions, tries, solving time), queued polls, the populations' shares
 * and the pre-queue's arrivals. kind: 'u' a count, 'd' a number with `dec` decimals.
 */
struct sale_item {
	const char *word;
	char kind;
	unsigned dec;
	uint64_t u;
	double d;
};

#define SALE_LINE_MAX 12

struct sale_line {
	const char *key;
	unsigned n;
	struct sale_item it[SALE_LINE_MAX];
};

#define U(w, v)	   {.word = (w), .kind = 'u', .u = (v)}
#define D(w, v, p) {.word = (w), .kind = 'd', .dec = (p), .d = (v)}

/* The sale's lines of r into out (at most 6). Returns how many. */
static unsigned
sale_lines(const struct lg_report *r, struct sale_line *out)
{
	const struct lg_stats *s = r->st;
	uint64_t solved = s->pow_solved;
	double cpu_s = (double)s->pow_cycles / (double)r->hz;
	unsigned n = 0;

	out[n++] = (struct sale_line){"pow", 9,
		{U("challenges", s->pow_challenges), U("solved", solved),
			U("unsolved", s->pow_unsolved), U("bits_min", r->pow_bits_min),
			U("bits_max", r->pow_bits_max), U("tries", s->pow_tries),
			D("tries_per_solution", solved ? (double)s->pow_tries / (double)solved : 0, 0),
			D("cpu_s", cpu_s, 3),
			D("cpu_us_per_solution", solved ? cpu_s * 1e6 / (double)solved : 0, 1)}};
	out[n++] = (struct sale_line){"queue", 4,
		{U("polls", s->queued_polls), U("position", s->queued_position),
			U("wait", s->queued_wait), U("rises", s->position_rises)}};
	if (r->populations) {
		static const char *const key[2] = {"people", "bots"};
		uint64_t tu = s->pop_users[0] + s->pop_users[1];
		uint64_t te = s->pop_entrants[0] + s->pop_entrants[1];
		uint64_t ti = s->pop_items[0] + s->pop_items[1];

		for (int p = LG_POP_BOTS; p >= LG_POP_PEOPLE; p--)
			out[n++] = (struct sale_line){key[p], 6,
				{U("users", s->pop_users[p]), U("entrants", s->pop_entrants[p]),
					U("items", s->pop_items[p]),
					D("share_users", pct(s->pop_users[p], tu), 1),
					D("share_entrants", pct(s->pop_entrants[p], te), 1),
					D("share_items", pct(s->pop_items[p], ti), 1)}};
	}
	if (r->arrivals)
		out[n++] = (struct sale_line){"arrivals", 5,
			{U("before", s->arrived_pre), U("at_start", s->arrived_burst),
				D("first_before_s", r->arr_first_pre, 3),
				D("last_before_s", r->arr_last_pre, 3),
				D("first_at_start_s", r->arr_first_burst, 3)}};
	return n;
}

#undef U
#undef D

static double
us_of(uint64_t cycles, uint64_t hz)
{
	return (double)cycles * 1e6 / (double)hz;
}

/* --- text ------------------------------------------------------------------------------------ */

static void
text_hist(FILE *f, const char *name, const struct lg_hist *h, uint64_t hz)
{
	fprintf(f, "%s: count %" PRIu64 " p50 %.1f p99 %.1f p999 %.1f max %.1f\n", name, h->count,
		us_of(lg_hist_quantile(h, 0.50), hz), us_of(lg_hist_quantile(h, 0.99), hz),
		us_of(lg_hist_quantile(h, 0.999), hz), us_of(h->max, hz));
}

/* One flood's line: its counts apart from the honest clients'. */
static void
text_flood(FILE *f, const struct lg_report *r, enum lg_flood_kind k)
{
	const struct lg_flood_stats *fs = &r->st->flood[k];

	fprintf(f, "%s: rate %.0f", lg_flood_report_key(k), r->flood_rate[k]);
	switch (k) {
	case LG_FLOOD_SYN:
		fprintf(f, " sent %" PRIu64 " syn_ack %" PRIu64 " rst %" PRIu64, fs->sent,
			fs->answered, fs->rsts);
		break;
	case LG_FLOOD_BAD_ACK:
		fprintf(f, " sent %" PRIu64 " rst %" PRIu64, fs->sent, fs->answered);
		break;
	default:
		fprintf(f,
			" connections %" PRIu64 " sent %" PRIu64 " answered %" PRIu64
			" rst %" PRIu64 " timeout %" PRIu64 " unfinished %" PRIu64
			" retransmits %" PRIu64,
			fs->conns, fs->sent, fs->answered, fs->rsts, fs->timeouts,
			r->flood_unfinished[k], fs->retransmits);
		break;
	}
	fprintf(f, " malformed %" PRIu64 " unexpected %" PRIu64, fs->malformed, fs->unexpected);
	if (k == LG_FLOOD_UNSIGNED || k == LG_FLOOD_ONE_IP) {
		fprintf(f, " answers");
		for (unsigned i = 0; i < LG_STATUS_MAX; i++)
			if (fs->status[i])
				fprintf(f, " %u=%" PRIu64, i, fs->status[i]);
	}
	fprintf(f, "\n");
}

static void
text_sale(FILE *f, const struct lg_report *r)
{
	struct sale_line l[6];
	unsigned n = sale_lines(r, l);

	for (unsigned i = 0; i < n; i++) {
		fprintf(f, "%s:", l[i].key);
		for (unsigned k = 0; k < l[i].n; k++) {
			const struct sale_item *it = &l[i].it[k];

			if (it->kind == 'u')
				fprintf(f, " %s %" PRIu64, it->word, it->u);
			else
				fprintf(f, " %s %.*f", it->word, (int)it->dec, it->d);
		}
		fprintf(f, "\n");
		if (i == 0) {
			text_hist(f, "pow_cpu_us", &r->st->pow_cpu, r->hz);
			text_hist(f, "pow_wait_us", &r->st->pow_wait, r->hz);
		}
	}
}

void
lg_report_text(FILE *f, const struct lg_report *r)
{
	const struct lg_stats *s = r->st;
	double secs = r->elapsed_s;

	fprintf(f, "mode: %s\n", r->mode);
	fprintf(f, "worker_cores: 1\n");
	fprintf(f, "elapsed_s: %.3f%s\n", secs, r->timed_out ? " (duration reached)" : "");
	if (r->mode_id == LG_MODE_SYN_FLOOD) {
		fprintf(f, "syn: sent %" PRIu64 " syn_ack %" PRIu64 " rst %" PRIu64 "\n",
			s->syn_sent, s->syn_acks, s->conns_rst);
	} else if (r->mode_id == LG_MODE_HEALTHZ_BLAST) {
		fprintf(f,
			"blast: sent %" PRIu64 " syn_ack %" PRIu64 " answered_200 %" PRIu64
			" fin_ack %" PRIu64 " rst %" PRIu64 "\n",
			s->blast_sent, s->blast_syn_acks, s->blast_ok, s->blast_fin_acks,
			s->conns_rst);
	} else if (r->mode_id == LG_MODE_RESERVE_BLAST) {
		fprintf(f,
			"blast: sent %" PRIu64 " syn_ack %" PRIu64 " answered_202 %" PRIu64
			" answered_503 %" PRIu64 " fin_ack %" PRIu64 " rst %" PRIu64 "\n",
			s->blast_sent, s->blast_syn_acks, s->blast_ok, s->blast_busy,
			s->blast_fin_acks, s->conns_rst);
	} else {
		fprintf(f,
			"connections: asked %" PRIu64 " started %" PRIu64 " completed %" PRIu64
			" rst %" PRIu64 " timeout %" PRIu64 " malformed %" PRIu64
			" unfinished %" PRIu64 "\n",
			r->conns_asked, s->conns_started, s->conns_completed, s->conns_rst,
			s->conns_timeout, s->conns_malformed, r->unfinished);
	}
	if (r->mode_id == LG_MODE_SALE) {
		fprintf(f,
			"users: asked %" PRIu64 " started %" PRIu64 " done %" PRIu64
			" double_clicked %" PRIu64 " unfinished %" PRIu64 "\n",
			r->users_asked, s->users_started, s->users_done, s->double_clicks,
			r->unfinished);
		fprintf(f, "outcomes:");
		for (int i = 0; i < LG_OUT_N; i++)
			fprintf(f, " %s=%" PRIu64, lg_outcome_name((enum lg_outcome)i),
				s->outcome[i]);
		fprintf(f, "\n");
		text_sale(f, r);
	}
	fprintf(f, "answers:");
	for (unsigned i = 0; i < LG_STATUS_MAX; i++)
		if (s->status[i])
			fprintf(f, " %u=%" PRIu64, i, s->status[i]);
	fprintf(f, "\n");
	fprintf(f, "malformed: tcp %" PRIu64 " http %" PRIu64 "\n", s->malformed_tcp,
		s->malformed_http);
	fprintf(f, "unexpected_status: %" PRIu64 "\n", s->unexpected_status);
	fprintf(f, "stray_segments: %" PRIu64 "\n", s->stray);
	fprintf(f, "retransmits: %" PRIu64 "\n", s->retransmits);
	fprintf(f,
		"packets: tx %" PRIu64 " rx %" PRIu64 " tx_dropped %" PRIu64 " other_rx %" PRIu64
		"\n",
		s->tx_pkts, s->rx_pkts, s->tx_dropped, s->other_rx);
	fprintf(f, "packets_per_s: tx %.0f rx %.0f\n", (double)s->tx_pkts / secs,
		(double)s->rx_pkts / secs);
	fprintf(f, "requests: sent %" PRIu64 " answered %" PRIu64 " kept %" PRIu64 " kept_closed %" PRIu64
		   "\n",
		s->requests, s->responses, s->kept_answers, s->kept_closed);
	fprintf(f, "requests_per_s: %.0f\n", (double)s->responses / secs);
	text_hist(f, "latency_request_us", &s->req_lat, r->hz);
	text_hist(f, "latency_connection_us", &s->conn_lat, r->hz);
	for (unsigned k = 0; k < LG_FLOOD_N; k++)
		if (r->flood_rate[k] > 0)
			text_flood(f, r, (enum lg_flood_kind)k);
	if (r->pcap)
		fprintf(f, "pcap: %s frames %" PRIu64 "\n", r->pcap_path, r->pcap_frames);
}

/* --- JSON: the same members, under the names of the text's keys and words --------------- */

/* "answers": {"STATUS": N, ...}, the statuses that were seen. */
static void
json_statuses(struct json_writer *j, const uint64_t status[LG_STATUS_MAX])
{
	char code[8];

	jw_open(j, "answers", '{');
	for (unsigned i = 0; i < LG_STATUS_MAX; i++) {
		if (status[i] == 0)
			continue;
		snprintf(code, sizeof(code), "%u", i);
		jw_u64(j, code, status[i]);
	}
	jw_close(j, '}');
}

static void
json_hist(struct json_writer *j, const char *name, const struct lg_hist *h, uint64_t hz)
{
	jw_open(j, name, '{');
	jw_u64(j, "count", h->count);
	jw_double(j, "p50", us_of(lg_hist_quantile(h, 0.50), hz), 1);
	jw_double(j, "p99", us_of(lg_hist_quantile(h, 0.99), hz), 1);
	jw_double(j, "p999", us_of(lg_hist_quantile(h, 0.999), hz), 1);
	jw_double(j, "max", us_of(h->max, hz), 1);
	jw_close(j, '}');
}

static void
json_flood(struct json_writer *j, const struct lg_report *r, enum lg_flood_kind k)
{
	const struct lg_flood_stats *fs = &r->st->flood[k];

	jw_open(j, lg_flood_report_key(k), '{');
	jw_double(j, "rate", r->flood_rate[k], 0);
	switch (k) {
	case LG_FLOOD_SYN:
		jw_u64(j, "sent", fs->sent);
		jw_u64(j, "syn_ack", fs->answered);
		jw_u64(j, "rst", fs->rsts);
		break;
	case LG_FLOOD_BAD_ACK:
		jw_u64(j, "sent", fs->sent);
		jw_u64(j, "rst", fs->answered);
		break;
	default:
		jw_u64(j, "connections", fs->conns);
		jw_u64(j, "sent", fs->sent);
		jw_u64(j, "answered", fs->answered);
		jw_u64(j, "rst", fs->rsts);
		jw_u64(j, "timeout", fs->timeouts);
		jw_u64(j, "unfinished", r->flood_unfinished[k]);
		jw_u64(j, "retransmits", fs->retransmits);
		break;
	}
	jw_u64(j, "malformed", fs->malformed);
	jw_u64(j, "unexpected", fs->unexpected);
	if (k == LG_FLOOD_UNSIGNED || k == LG_FLOOD_ONE_IP)
		json_statuses(j, fs->status);
	jw_close(j, '}');
}

static void
json_sale(struct json_writer *j, const struct lg_report *r)
{
	struct sale_line l[6];
	unsigned n = sale_lines(r, l);

	for (unsigned i = 0; i < n; i++) {
		jw_open(j, l[i].key, '{');
		for (unsigned k = 0; k < l[i].n; k++) {
			const struct sale_item *it = &l[i].it[k];

			if (it->kind == 'u')
				jw_u64(j, it->word, it->u);
			else
				jw_double(j, it->word, it->d, it->dec);
		}
		jw_close(j, '}');
		if (i == 0) {
			json_hist(j, "pow_cpu_us", &r->st->pow_cpu, r->hz);
			json_hist(j, "pow_wait_us", &r->st->pow_wait, r->hz);
		}
	}
}

int
lg_report_json(const struct lg_report *r, char *buf, size_t cap)
{
	const struct lg_stats *s = r->st;
	double secs = r->elapsed_s;
	struct json_writer j;

	jw_init(&j, buf, cap);
	jw_open(&j, NULL, '{');
	jw_str(&j, "mode", r->mode);
	jw_u64(&j, "worker_cores", 1);
	jw_double(&j, "elapsed_s", secs, 3);
	jw_bool(&j, "duration_reached", r->timed_out);
	if (r->mode_id == LG_MODE_SYN_FLOOD) {
		jw_open(&j, "syn", '{');
		jw_u64(&j, "sent", s->syn_sent);
		jw_u64(&j, "syn_ack", s->syn_acks);
		jw_u64(&j, "rst", s->conns_rst);
		jw_close(&j, '}');
	} else if (lg_mode_blast(r->mode_id)) {
		bool reserve = r->mode_id == LG_MODE_RESERVE_BLAST;

		jw_open(&j, "blast", '{');
		jw_u64(&j, "sent", s->blast_sent);
		jw_u64(&j, "syn_ack", s->blast_syn_acks);
		jw_u64(&j, reserve ? "answered_202" : "answered_200", s->blast_ok);
		if (reserve)
			jw_u64(&j, "answered_503", s->blast_busy);
		jw_u64(&j, "fin_ack", s->blast_fin_acks);
		jw_u64(&j, "rst", s->conns_rst);
		jw_close(&j, '}');
	} else {
		jw_open(&j, "connections", '{');
		jw_u64(&j, "asked", r->conns_asked);
		jw_u64(&j, "started", s->conns_started);
		jw_u64(&j, "completed", s->conns_completed);
		jw_u64(&j, "rst", s->conns_rst);
		jw_u64(&j, "timeout", s->conns_timeout);
		jw_u64(&j, "malformed", s->conns_malformed);
		jw_u64(&j, "unfinished", r->unfinished);
		jw_close(&j, '}');
	}
	if (r->mode_id == LG_MODE_SALE) {
		jw_open(&j, "users", '{');
		jw_u64(&j, "asked", r->users_asked);
		jw_u64(&j, "started", s->users_started);
		jw_u64(&j, "done", s->users_done);
		jw_u64(&j, "double_clicked", s->double_clicks);
		jw_u64(&j, "unfinished", r->unfinished);
		jw_close(&j, '}');
		jw_open(&j, "outcomes", '{');
		for (int i = 0; i < LG_OUT_N; i++)
			jw_u64(&j, lg_outcome_name((enum lg_outcome)i), s->outcome[i]);
		jw_close(&j, '}');
		json_sale(&j, r);
	}
	json_statuses(&j, s->status);
	jw_open(&j, "malformed", '{');
	jw_u64(&j, "tcp", s->malformed_tcp);
	jw_u64(&j, "http", s->malformed_http);
	jw_close(&j, '}');
	jw_u64(&j, "unexpected_status", s->unexpected_status);
	jw_u64(&j, "stray_segments", s->stray);
	jw_u64(&j, "retransmits", s->retransmits);
	jw_open(&j, "packets", '{');
	jw_u64(&j, "tx", s->tx_pkts);
	jw_u64(&j, "rx", s->rx_pkts);
	jw_u64(&j, "tx_dropped", s->tx_dropped);
	jw_u64(&j, "other_rx", s->other_rx);
	jw_close(&j, '}');
	jw_open(&j, "packets_per_s", '{');
	jw_double(&j, "tx", (double)s->tx_pkts / secs, 0);
	jw_double(&j, "rx", (double)s->rx_pkts / secs, 0);
	jw_close(&j, '}');
	jw_open(&j, "requests", '{');
	jw_u64(&j, "sent", s->requests);
	jw_u64(&j, "answered", s->responses);
	jw_u64(&j, "kept", s->kept_answers);
	jw_u64(&j, "kept_closed", s->kept_closed);
	jw_close(&j, '}');
	jw_double(&j, "requests_per_s", (double)s->responses / secs, 0);
	json_hist(&j, "latency_request_us", &s->req_lat, r->hz);
	json_hist(&j, "latency_connection_us", &s->conn_lat, r->hz);
	for (unsigned k = 0; k < LG_FLOOD_N; k++)
		if (r->flood_rate[k] > 0)
			json_flood(&j, r, (enum lg_flood_kind)k);
	if (r->pcap) {
		jw_open(&j, "pcap", '{');
		jw_str(&j, "path", r->pcap_path ? r->pcap_path : "");
		jw_u64(&j, "frames", r->pcap_frames);
		jw_close(&j, '}');
	}
	jw_close(&j, '}');
	return jw_end(&j);
}

int
lg_report_json_write(const struct lg_report *r, const char *path)
{
	/* Up to 600 statuses in each of three lists fit in well under 64 KB. */
	size_t cap = 65536;
	char *buf = malloc(cap);
	int n = buf != NULL ? lg_report_json(r, buf, cap) : -ENOMEM;
	int rc = n < 0 ? n : jw_write_file(path, buf, (size_t)n);

	if (rc != 0)
		fprintf(stderr, "flashgate-loadgen: cannot write the JSON report to %s: %s\n", path,
			strerror(-rc));
	free(buf);
	return rc;
}

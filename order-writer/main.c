/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flashgate-order-writer: turns every reservation Redis accepted into exactly one order in
 * PostgreSQL, at most [order_writer] max_rate orders a second, publishes the order ids, and
 * expires unpaid orders with their stock returned (docs/order-writer.md).
 *   flashgate-order-writer [-c FILE] [-s SECTION.KEY=VALUE]... [--check-config]
 *
 * Test hook: with FG_OW_CRASH_AFTER_COMMIT=1 in the environment the writer _exit(9)s right
 * after its first COMMIT, before it acknowledges the entries in Redis (the crash tests use it).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "common/config_cli.h"
#include "common/log.h"
#include "common/now.h"
#include "store/store_conn.h"
#include "store/store_outbox.h"
#include "order-writer/expiry.h"
#include "order-writer/order_store.h"
#include "order-writer/outbox_reader.h"
#include "order-writer/ow_config.h"
#include "order-writer/ow_link.h"
#include "order-writer/ow_writer.h"

#define PROG "flashgate-order-writer"

static volatile sig_atomic_t stop_requested;

static void
on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void
sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};

	nanosleep(&ts, NULL); /* a signal cuts it short: the loop then sees stop_requested */
}

static void
crash_after_commit(void)
{
	_exit(9);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [options]\n"
		   "  -c, --config FILE         read settings from FILE (INI; see flashgate.conf)\n"
		   "  -s, --set SECTION.KEY=V   override one setting (repeatable; after -c)\n"
		   "      --check-config        check the settings and exit\n"
		   "      --help-config         list every setting with its default and exit\n"
		   "  -h, --help                this text\n");
}

/* --check-config: the settings in force, as this program always printed them. */
static void
print_checked(FILE *out, const void *target)
{
	cfg_write(out, &ow_config_schema, target);
}

/* Returns 0 to run, 1 to exit successfully, -1 on error. */
static int
parse_args(int argc, char **argv, struct ow_config *cfg)
{
	const struct cfg_cli cli = {
		.prog = PROG,
		.schema = &ow_config_schema,
		.target = cfg,
		.usage = usage,
		.print_checked = print_checked,
	};

	return cfg_cli_parse(&cli, argc, argv);
}

struct ow_main {
	struct ow_config cfg;
	struct redis_store *rs;
	struct redis_store *publish_rs; /* the publisher thread's (ow_writer.h) */
	struct order_store *os;
	/* connections - 1 more for batches */
	struct order_store *more[OW_CONFIG_CONNECTIONS_MAX - 1];
	struct ow_link *link;
	struct outbox_reader *reader;
	struct ow_writer w;
	struct expiry_stats ex;
	struct rs_outbox_buf buf; /* the reservations of the entries of one read or claim */
	uint64_t next_commit_ns;  /* the rate cap: no batch starts before this */
};

/*
 * The rate cap: batch i+1 starts no earlier than batch i's start plus its size / max_rate, so
 * over any run of batches the orders committed per second stay at or below the cap (idle time
 * earns no burst).
 */
static void
ow_pace(struct ow_main *m, unsigned n)
{
	uint64_t now;

	if (m->cfg.max_rate == 0)
		return;
	now = now_mono_ns();
	while (now < m->next_commit_ns && !stop_requested) {
		sleep_ns(m->next_commit_ns - now);
		now = now_mono_ns();
	}
	m->next_commit_ns = now + (uint64_t)n * 1000000000u / m->cfg.max_rate;
}

static void
ow_refresh_events(struct ow_main *m)
{
	static uint32_t ids[OREADER_EVENTS_MAX];
	static bool open[OREADER_EVENTS_MAX];
	unsigned n;
	char err[512];

	if (ostore_active_events(m->os, ids, open, OREADER_EVENTS_MAX, &n, err, sizeof(err)) != 0) {
		LOG_RL(LOG_LEVEL_WARN, 10000, "%s", err);
		return;
	}
	oreader_set_events(m->reader, ids, open, n);
}

/*
 * Writes the reservations of one read or claim in batches of at most batch_size, as even as
 * that allows (1,024 reservations with batches of 500: 3 of 342, not 500, 500 and 24), each
 * paced by the rate cap. Stops at the first failure: the entries not acknowledged stay pending
 * and are claimed again whole. Returns 0 or the error.
 */
static int
ow_write_all(struct ow_main *m, uint32_t event, const struct rs_outbox_buf *b)
{
	unsigned parts = (b->n + m->cfg.batch_size - 1) / m->cfg.batch_size;

	for (unsigned done = 0; done < b->n && !stop_requested;) {
		unsigned left = parts-- > 0 ? (b->n - done + parts) / (parts + 1) : b->n - done;
		int rc;

		ow_pace(m, left);
		rc = ow_writer_write(&m->w, event, b->rec + done, left);
		if (rc != 0)
			return rc;
		done += left;
	}
	return 0;
}

/* Claims and writes the entries pending too long on every event. */
static void
ow_claim_all(struct ow_main *m)
{
	for (unsigned i = 0; i < oreader_n_events(m->reader) && !stop_requested; i++) {
		bool done = false;

		/* Bounded: a scan that keeps failing is taken up again at the next interval. */
		for (unsigned round = 0; round < 1000 && !done && !stop_requested; round++) {
			int n = oreader_claim(m->reader, i, m->cfg.claim_idle_ms, m->cfg.batch_size,
				&m->buf, &done);

			if (n <= 0)
				break;
			LOG_INFO("event %" PRIu32 ": claimed %d pending outbox entries (%u "
				 "reservations)",
				oreader_event_id(m->reader, i), n, m->buf.n);
			if (ow_write_all(m, oreader_event_id(m->reader, i), &m->buf) != 0)
				break;
		}
	}
}

/* One pass over every event's new entries. Returns true when any were written. */
static bool
ow_read_all(struct ow_main *m)
{
	bool work = false;

	for (unsigned i = 0; i < oreader_n_events(m->reader) && !stop_requested; i++) {
		int n = oreader_read(m->reader, i, m->cfg.batch_size, &m->buf);

		if (n <= 0)
			continue;
		work = true;
		ow_write_all(m, oreader_event_id(m->reader, i), &m->buf);
	}
	return work;
}

static void
ow_trim_all(struct ow_main *m)
{
	for (unsigned i = 0; i < oreader_n_events(m->reader); i++) {
		uint64_t trimmed = 0;

		if (rs_outbox_trim(m->rs, oreader_event_id(m->reader, i), m->cfg.group, &trimmed) ==
				0 &&
			trimmed > 0)
			LOG_DEBUG("event %" PRIu32 ": trimmed %" PRIu64
				  " acknowledged outbox entries",
				oreader_event_id(m->reader, i), trimmed);
	}
}

static void
ow_log_stats(const struct ow_main *m)
{
	LOG_NOTICE("orders %" PRIu64 " in %" PRIu64 " batches, redelivered %" PRIu64
		   ", conflicts %" PRIu64 " (released %" PRIu64 "), skipped %" PRIu64
		   ", errors %" PRIu64 "; expired %" PRIu64 ", releases applied %" PRIu64
		   " (repeated %" PRIu64 ")",
		m->w.st.orders, m->w.st.batches, m->w.st.redelivered, m->w.st.conflicts,
		m->w.st.released, m->w.st.skipped, m->w.st.errors, m->ex.expired, m->ex.applied,
		m->ex.repeated);
}

int
main(int argc, char **argv)
{
	static struct ow_main m;
	struct rs_config rc = {0};
	char err[512], host[INET_ADDRSTRLEN], consumer[128], hostname[64] = "host";
	const char *crash = getenv("FG_OW_CRASH_AFTER_COMMIT");
	uint64_t next_events = 0, next_claim = 0, next_sweep = 0, next_trim = 0, next_stats = 0;
	int r = parse_args(argc, argv, &m.cfg);

	if (r != 0)
		return r > 0 ? 0 : 2;
	log_set_level((enum log_level)m.cfg.log_level);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);

	gethostname(hostname, sizeof(hostname) - 1);
	snprintf(consumer, sizeof(consumer), "%s-%ld", hostname, (long)getpid());
	rc = store_config_rs(&m.cfg.store, host);
	m.rs = rs_open(&rc, err, sizeof(err));
	if (m.rs == NULL) {
		LOG_ERR("redis: %s", err);
		return 1;
	}
	/* The publisher thread's: results and XACKs while this one reads and writes batches. */
	m.publish_rs = rs_open(&rc, err, sizeof(err));
	if (m.publish_rs == NULL) {
		LOG_ERR("redis: %s", err);
		return 1;
	}
	m.os = ostore_open(m.cfg.store.pg_conninfo, err, sizeof(err));
	if (m.os == NULL) {
		LOG_ERR("%s (check [postgres] conninfo)", err);
		return 1;
	}
	for (unsigned i = 0; i + 1 < m.cfg.connections; i++) {
		m.more[i] = ostore_open(m.cfg.store.pg_conninfo, err, sizeof(err));
		if (m.more[i] == NULL) {
			LOG_ERR("%s (check [postgres] conninfo)", err);
			return 1;
		}
	}
	m.link = ow_link_open(m.cfg.push_endpoint, m.cfg.id, err, sizeof(err));
	m.reader = oreader_open(m.rs, m.cfg.group, consumer);
	if (m.link == NULL || m.reader == NULL) {
		LOG_ERR("%s", m.link == NULL ? err : "out of memory");
		return 1;
	}
	m.w = (struct ow_writer){.rs = m.rs,
		.publish_rs = m.publish_rs,
		.os = m.os,
		.link = m.link,
		.group = m.cfg.group};
	memcpy(m.w.more, m.more, sizeof(m.more));
	m.w.n_more = m.cfg.connections - 1;
	if (crash != NULL && strcmp(crash, "1") == 0) {
		LOG_WARN("test hook FG_OW_CRASH_AFTER_COMMIT: exiting after the first COMMIT");
		m.w.commit_hook = crash_after_commit;
	}
	LOG_NOTICE("consumer %s of group %s; at most %u orders/s in batches of %u on %u "
		   "connection(s)",
		consumer, m.cfg.group, m.cfg.max_rate, m.cfg.batch_size, m.cfg.connections);

	while (!stop_requested) {
		uint64_t now = now_mono_ns() / 1000000u;
		bool work;

		ow_link_flush(m.link);
		/* Whatever else uses PostgreSQL waits for the batch in flight. */
		if (now >= next_events) {
			ow_writer_flush(&m.w);
			ow_refresh_events(&m);
			next_events = now + m.cfg.events_refresh_ms;
		}
		if (now >= next_claim) {
			ow_writer_flush(&m.w);
			ow_claim_all(&m);
			ow_writer_flush(&m.w);
			next_claim = now + m.cfg.claim_interval_ms;
		}
		work = ow_read_all(&m);
		if (now >= next_sweep) {
			ow_writer_flush(&m.w);
			expiry_sweep(m.os, m.rs, m.link, m.cfg.sweep_batch, 10, &m.ex);
			next_sweep = now + m.cfg.sweep_interval_ms;
		}
		if (m.cfg.trim_interval_ms != 0 && now >= next_trim) {
			if (next_trim != 0) {
				ow_writer_flush(&m.w);
				ow_trim_all(&m);
			}
			next_trim = now + m.cfg.trim_interval_ms;
		}
		if (now >= next_stats) {
			if (next_stats != 0 && log_enabled(LOG_LEVEL_INFO))
				ow_log_stats(&m);
			next_stats = now + 60000;
		}
		if (!work) {
			ow_writer_flush(&m.w);
			sleep_ns((uint64_t)m.cfg.poll_ms * 1000000u);
		}
	}
	ow_writer_free(&m.w);
	ow_log_stats(&m);
	ow_link_close(m.link);
	oreader_close(m.reader);
	ostore_close(m.os);
	for (unsigned i = 0; i + 1 < m.cfg.connections; i++)
		ostore_close(m.more[i]);
	rs_close(m.publish_rs);
	rs_close(m.rs);
	rs_outbox_buf_free(&m.buf);
	return 0;
}

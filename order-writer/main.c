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
#include <unistd.h>

#include <arpa/inet.h>

#include "common/config_cli.h"
#include "common/log.h"
#include "common/now.h"
#include "common/sdnotify.h"
#include "order-writer/ow_metrics.h"
#include "order-writer/ow_cron.h"
#include "order-writer/ow_ctx.h"
#include "order-writer/ow_feed.h"

#define PROG "flashgate-order-writer"

static volatile sig_atomic_t stop_requested;

static void
on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
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
		   "  -s, --set SECTION.KEY=V   override one setting (repeatable; applied after -c)\n"
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

int
main(int argc, char **argv)
{
	static struct ow_ctx c = {.stop = &stop_requested};
	struct store_conn_config rsc = {0};
	char err[512], host[INET_ADDRSTRLEN], consumer[128], hostname[64] = "host";
	const char *crash = getenv("FG_OW_CRASH_AFTER_COMMIT");
	int r = parse_args(argc, argv, &c.cfg);

	if (r != 0)
		return r > 0 ? 0 : 2;
	log_set_level((enum log_level)c.cfg.log_level);
	/* Before anything else: a link that would be plaintext off this host stops us here. */
	char eps[OW_LINK_PEERS_MAX][OW_LINK_EP_MAX];
	const char *ep[OW_LINK_PEERS_MAX];
	int n_ep = ow_link_split(c.cfg.push_endpoint, eps, err, sizeof(err));
	struct zlink_keys keys;

	if (n_ep < 0) { /* the config's check said so already */
		LOG_ERR("[order_writer] push_endpoint: %s", err);
		return 2;
	}
	for (int i = 0; i < n_ep; i++)
		ep[i] = eps[i];
	if (zlink_keys_load(&c.cfg.links, false, "order_writer", ep, (unsigned)n_ep, &keys, err,
		    sizeof(err)) != 0) {
		LOG_ERR("%s", err);
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);

	gethostname(hostname, sizeof(hostname) - 1);
	snprintf(consumer, sizeof(consumer), "%s-%ld", hostname, (long)getpid());
	rsc = store_config_conn(&c.cfg.store, host);
	c.rs = store_open(&rsc, err, sizeof(err));
	if (c.rs == NULL) {
		LOG_ERR("redis: %s", err);
		return 1;
	}
	/* The publisher thread's: results and XACKs while this one reads and writes batches. */
	c.publish_rs = store_open(&rsc, err, sizeof(err));
	if (c.publish_rs == NULL) {
		LOG_ERR("redis: %s", err);
		return 1;
	}
	c.os = pg_orders_open(c.cfg.store.pg_conninfo, "flashgate-ow writer", err, sizeof(err));
	if (c.os == NULL) {
		LOG_ERR("%s (check [postgres] conninfo)", err);
		return 1;
	}
	for (unsigned i = 0; i + 1 < c.cfg.connections; i++) {
		c.more[i] = pg_orders_open(
			c.cfg.store.pg_conninfo, "flashgate-ow writer", err, sizeof(err));
		if (c.more[i] == NULL) {
			LOG_ERR("%s (check [postgres] conninfo)", err);
			return 1;
		}
	}
	c.link = ow_link_open(
		c.cfg.push_endpoint, c.cfg.id, c.cfg.push_queue, &keys, err, sizeof(err));
	zlink_keys_wipe(&keys);
	c.reader = outbox_reader_open(c.rs, c.cfg.group, consumer);
	if (c.link == NULL || c.reader == NULL) {
		LOG_ERR("%s", c.link == NULL ? err : "out of memory");
		return 1;
	}
	c.w = (struct ow_writer){.rs = c.rs,
		.publish_rs = c.publish_rs,
		.os = c.os,
		.link = c.link,
		.group = c.cfg.group};
	memcpy(c.w.more, c.more, sizeof(c.more));
	c.w.n_more = c.cfg.connections - 1;
	if (crash != NULL && strcmp(crash, "1") == 0) {
		LOG_WARN("test hook FG_OW_CRASH_AFTER_COMMIT: exiting after the first COMMIT");
		c.w.commit_hook = crash_after_commit;
	}
	LOG_NOTICE("consumer %s of group %s; at most %u orders/s in batches of %u on %u "
		   "connection(s)",
		consumer, c.cfg.group, c.cfg.max_rate, c.cfg.batch_size, c.cfg.connections);
	LOG_NOTICE("pushing order ids, expiries and restocks to %u control plane(s): %s",
		ow_link_peers(c.link), c.cfg.push_endpoint);

	char maddr[INET_ADDRSTRLEN];
	uint64_t next_metrics_ms = 0;

	inet_ntop(AF_INET, &c.cfg.metrics_address, maddr, sizeof(maddr));
	struct ow_metrics *metrics = ow_metrics_start(maddr, c.cfg.metrics_port,
		c.cfg.metrics_allow, c.cfg.store.pg_conninfo, err, sizeof(err));

	if (metrics == NULL) {
		LOG_ERR("%s", err);
		return 1;
	}
	if (ow_metrics_port(metrics) != 0)
		LOG_NOTICE("metrics on %s:%u", maddr, ow_metrics_port(metrics));
	sdnotify_ready("writing orders");
	while (!stop_requested) {
		sdnotify_watchdog(now_mono_ms());
		ow_link_flush(c.link);
		ow_cron(&c, now_mono_ns() / 1000000u);
		if (now_mono_ms() >= next_metrics_ms) {
			ow_metrics_publish(metrics, &c);
			next_metrics_ms = now_mono_ms() + 1000;
		}
		if (!ow_feed_read(&c))
			ow_feed_idle(&c);
	}
	sdnotify_stopping(NULL);
	ow_metrics_stop(metrics);
	ow_writer_free(&c.w);
	ow_cron_log_stats(&c);
	ow_link_close(c.link);
	outbox_reader_close(c.reader);
	pg_orders_close(c.os);
	for (unsigned i = 0; i + 1 < c.cfg.connections; i++)
		pg_orders_close(c.more[i]);
	store_close(c.publish_rs);
	store_close(c.rs);
	store_outbox_buf_free(&c.buf);
	return 0;
}

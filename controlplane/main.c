/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flashgate-controlplane: decides the reservations data planes admit, with one
 * reserve.lua per event batch in Redis, and keeps every data plane told of
 * events, keys, rules, limits, results and the sold-out moment.
 *   flashgate-controlplane [-c FILE] [-s SECTION.KEY=VALUE]... [--migrate] [--check-config]
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <zmq.h>

#include "common/config_cli.h"
#include "common/log.h"
#include "common/now.h"
#include "common/sdnotify.h"
#include "controlplane/admin_server.h"
#include "controlplane/cp_config.h"
#include "controlplane/cp_sampler.h"
#include "controlplane/cp_cron.h"
#include "controlplane/cp_ctx.h"
#include "controlplane/cp_follow.h"
#include "controlplane/cp_slow.h"
#include "pg/pg_health.h"
#include "controlplane/admin_exec.h"

#define PROG "flashgate-controlplane"

static volatile sig_atomic_t stop_requested;

static void
on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [options]\n"
		"  -c, --config FILE         read settings from FILE (INI; see flashgate.conf)\n"
		"  -s, --set SECTION.KEY=V   override one setting (repeatable; applied after -c)\n"
		"      --migrate             apply the database migrations and exit\n"
		"      --check-config        check the settings and exit\n"
		"      --help-config         list every setting with its default and exit\n"
		"  -h, --help                this text\n");
}

static int
on_migrate(const char *arg, void *ctx)
{
	(void)arg;
	*(int *)ctx = 1;
	return 0;
}

/* Returns 0 to run, 1 to exit successfully, -1 on error; *migrate_only set by --migrate. */
static int
parse_args(int argc, char **argv, struct cp_config *cfg, int *migrate_only)
{
	static const struct cfg_cli_extra extra[] = {
		{ "migrate", false, on_migrate },
	};
	const struct cfg_cli cli = {
		.prog = PROG,
		.schema = &cp_config_schema,
		.target = cfg,
		.usage = usage,
		.print_doc = cp_config_print_doc,
		.extra = extra,
		.n_extra = 1,
		.ctx = migrate_only,
	};

	return cfg_cli_parse(&cli, argc, argv);
}

/* Result queries answered per turn of the loop: one pipelined Redis round trip. */
#define CP_QUERIES_PER_TURN 1024

/* Test hook: ORDERED results of one user relayed from the order writer are dropped (the data
 * planes miss them, as after a lost push), so that tests can show a poll recover them. */
#define CP_TEST_DROP_ORDERED_ENV "FG_TEST_DROP_ORDERED_USER"

/* Whether r is dropped by the test hook (and logged). */
static bool
relay_test_drops(const struct cp_ctx *c, const struct wire_result *r)
{
	if (c->test_drop_ordered_user == 0 || r->user != c->test_drop_ordered_user ||
		r->verdict != WIRE_V_ORDERED)
		return false;
	LOG_WARN("test hook %s: the ORDERED result of user %" PRIu64 " (event %" PRIu32
		 ", order %" PRIu64 ") not relayed",
		CP_TEST_DROP_ORDERED_ENV, r->user, r->event, r->order_id);
	return true;
}

/* An order writer's RESULTs (ordered, paid, expired, cancelled, sold out): every data plane's
 * result table gets them. */
static void
relay_results(struct cp_ctx *c, const struct wire_msg *m)
{
	struct wire_result r[CP_LINKS_RECS_PER_MSG];
	unsigned n = 0;

	for (unsigned i = 0; i < m->count; i++) {
		if (wire_get_result(m, i, &r[n]) == 0 && !relay_test_drops(c, &r[n]))
			n++;
		if (n == CP_LINKS_RECS_PER_MSG || (i + 1 == m->count && n > 0)) {
			cp_links_publish(c->links, WIRE_T_RESULT, r, n);
			n = 0;
		}
	}
}

/* Stock came back (expired orders): the event is on sale again everywhere. */
static void
relay_restock(struct cp_ctx *c, const struct wire_msg *m)
{
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_stock s;
		struct cp_state_event *e;

		if (wire_get_stock(m, i, &s) != 0 || (e = cp_state_event(c->st, s.event)) == NULL)
			continue;
		e->stock_left = s.stock_left;
		cp_state_stock_moved(c->st);
		if (s.stock_left > 0)
			e->sold_out = false;
		cp_links_publish(c->links, WIRE_T_RESTOCK, &s, 1);
		LOG_NOTICE("event %u: %u item(s) back on sale", s.event, s.stock_left);
	}
}

/* Handles everything waiting on the PULL socket. */
static void
drain_pull(struct cp_ctx *c)
{
	struct wire_msg m;
	int rc;

	for (unsigned i = 0; i < 4096 && (rc = cp_links_recv(c->links, &m)) != 0; i++) {
		if (rc < 0)
			continue;
		if (m.type < WIRE_T_RESULT) {
			/* A data plane's: only the one holding its dp id is heard. */
			struct wire_hello h;
			bool is_hello = m.type == WIRE_T_HELLO && wire_get_hello(&m, 0, &h) == 0;

			if (!dp_ids_accept(c->ids, m.sender, m.epoch, is_hello ? &h : NULL,
				    now_mono_ms())) {
				if (m.type == WIRE_T_RESERVE)
					dp_ids_count_refused_reservations(c->ids, m.count);
				continue;
			}
		}
		switch (m.type) {
		case WIRE_T_RESERVE:
			decider_add(c->dec, &m, now_mono_ms(), now_wall_ms());
			break;
		case WIRE_T_SNAPSHOT_REQUEST:
			/* Several data planes may ask at once: one snapshot serves them all. */
			c->snapshots_sent++;
			cp_state_publish_snapshot(c->st, c->links);
			break;
		case WIRE_T_RESULT_QUERY:
			decider_query(c->dec, &m);
			break;
		case WIRE_T_DP_STATS:
			dp_stats_apply(c->dps, &m, now_mono_ms());
			break;
		case WIRE_T_RESULT:
			relay_results(c, &m);
			break;
		case WIRE_T_RESTOCK:
			relay_restock(c, &m);
			break;
		default:
			break;
		}
	}
}

/* How long the loop waits for a command on the slow-job thread before it goes on deciding. */
#define CP_SLOW_WAIT_US 4000

/*
 * The admin connections' executor: one request line, answered into out; or, for a command that
 * waits on PostgreSQL, handed to the slow-job thread (answered later, cp_slow_serve()).
 */
static int
exec_admin(void *arg, const char *line, char *out, size_t cap)
{
	struct cp_ctx *c = arg;

	if (c->slow != NULL && admin_server_off_loop(line)) {
		if (cp_slow_submit(c->slow, admin_conns_ticket(c->admin), line) == 0) {
			/* Most commands take a few ms: answered in this turn, the loop held no
			 * longer than CP_SLOW_WAIT_US. */
			cp_slow_wait(c->slow, CP_SLOW_WAIT_US);
			return ADMIN_CONNS_PENDING;
		}
		return admin_exec_error(out, cap,
			"busy: %u admin commands wait for PostgreSQL already; try again",
			CP_SLOW_QUEUE);
	}
	return admin_server_execute(c, line, out, cap);
}

/* A slow-job answer goes to its admin connection. */
static void
slow_done(void *arg, uint64_t ticket, char *out, int n)
{
	struct cp_ctx *c = arg;

	admin_conns_complete(c->admin, ticket, out, n, now_mono_ms());
}

/* The slow-job thread's executor. */
static int
exec_slow(struct cp_ctx *c, const char *line, char *out, size_t cap)
{
	return admin_server_execute(c, line, out, cap);
}

/*
 * GET /metrics, on the metrics thread. The loop's counters are plain 64-bit
 * words written by one thread; an aligned 64-bit load is never torn on the
 * machines DPDK runs on, so a scrape may be a moment old, never garbage.
 */
static void
render_metrics(void *arg, struct metrics_text *t)
{
	struct cp_ctx *c = arg;
	struct decider_counters dc;
	struct cp_links_counters lc;
	struct store_stats rs;
	char labels[64];

	decider_counters(c->dec, &dc);
	cp_links_counters(c->links, &lc);
	store_get_stats(c->rs, &rs);
	metrics_counter(t, "flashgate_cp_reservations_received_total",
		"Reservations received from data planes.", NULL, dc.received);
	for (unsigned v = 1; v < WIRE_V_MAX; v++) {
		labels[0] = '\0';
		metrics_label(labels, sizeof(labels), "verdict", wire_verdict_name(v));
		metrics_counter(t, "flashgate_cp_verdicts_total",
			"Reservations decided, by verdict (retry: Redis could not decide).", labels,
			dc.verdicts[v]);
	}
	metrics_counter(t, "flashgate_cp_outside_sale_total",
		"Reservations answered closed or not started without reaching Redis (the event is "
		"not open, or the control plane's clock is outside its sale).",
		NULL, dc.outside_sale);
	metrics_counter(t, "flashgate_cp_rounds_total", "Rounds of pipelined reserve.lua runs.",
		NULL, dc.rounds);
	metrics_counter(t, "flashgate_cp_batches_total", "Event batches (one reserve.lua each).",
		NULL, dc.batches);
	metrics_counter(t, "flashgate_cp_sold_out_total", "Events published sold out.", NULL,
		dc.sold_out_published);
	metrics_counter(t, "flashgate_cp_result_queries_total", "Result queries answered.", NULL,
		dc.queries);
	metrics_counter(t, "flashgate_cp_result_queries_found_total",
		"Result queries answered with a stored result (published).", NULL, dc.queries_found);
	metrics_counter(t, "flashgate_cp_result_query_failures_total",
		"Lookups of result queries that failed (Redis away or its replicas behind): the "
		"queries waited a back-off.",
		NULL, dc.queries_failed);
	metrics_counter(t, "flashgate_cp_result_queries_shed_total",
		"Result queries dropped: too many waiting (the data planes ask again).", NULL,
		dc.queries_shed);
	struct cp_follow_counters fc;
	static const char *const causes[] = {"notify", "connect", "check", "sale_end",
		"key_retire"};

	cp_follow_counters(c->follow, &fc);
	for (unsigned i = 0; i < 5; i++) {
		const uint64_t v[] = {fc.reloads_notify, fc.reloads_connect, fc.reloads_check,
			c->cron.reloads_sale_end, c->cron.reloads_key_retire};

		labels[0] = '\0';
		metrics_label(labels, sizeof(labels), "cause", causes[i]);
		metrics_counter(t, "flashgate_cp_state_reloads_total",
			"The state read again, by cause: for an admin change made elsewhere (another "
			"control plane, psql): notify (a NOTIFY), connect (the listening connection "
			"made again), check (config_version moved without a notification); by "
			"PostgreSQL's clock: sale_end (a sale ended), key_retire (a sale key retired).",
			labels, v[i]);
	}
	metrics_counter(t, "flashgate_cp_postgres_clock_waits_total",
		"Times a sale's end or a key's retirement was due by the control plane's clock and "
		"not yet by PostgreSQL's: the state was not loaded, PostgreSQL's clock looked at "
		"again later.",
		NULL, c->cron.db_clock_waits);
	metrics_gauge_int(t, "flashgate_cp_postgres_clock_behind_ms",
		"How far PostgreSQL's clock was behind the control plane's at the last such wait "
		"(0: never).",
		NULL, (int64_t)c->cron.db_clock_behind_ms);
	metrics_counter(t, "flashgate_cp_state_follow_failures_total",
		"Reads of the state or of config_version by the follower that failed (tried again).",
		NULL, fc.failures);
	metrics_gauge_int(t, "flashgate_cp_result_queries_waiting",
		"Result queries received and not yet answered.", NULL,
		(int64_t)decider_queries_waiting(c->dec));
	metrics_counter(t, "flashgate_cp_duplicates_republished_total",
		"Stored results published for duplicates.", NULL, dc.held_published);
	metrics_gauge_int(t, "flashgate_cp_redis_connected", "1 while Redis is reachable.", NULL,
		store_connected(c->rs));
	if (c->pg_health != NULL) {
		struct pg_health_state ph;

		pg_health_read(c->pg_health, now_mono_ms(), &ph);
		metrics_gauge_int(t, "flashgate_cp_postgres_up",
			"1 while PostgreSQL answers the control plane's probe (SELECT 1 a second, "
			"5 s at most).",
			NULL, ph.up);
		metrics_gauge(t, "flashgate_cp_postgres_query_seconds",
			"The last probe's time, or the one still waiting when longer.", NULL,
			ph.query_s);
		metrics_gauge(t, "flashgate_cp_postgres_since_success_seconds",
			"Seconds since PostgreSQL last answered the probe (since the start when it "
			"never did).",
			NULL, ph.since_success_s);
	}
	metrics_counter(t, "flashgate_cp_redis_outages_total", "Redis connections lost.", NULL,
		rs.outages);
	metrics_counter(t, "flashgate_cp_redis_failovers_total",
		"Redis failovers followed (Sentinel's +switch-master or a READONLY answer).", NULL,
		rs.failovers);
	metrics_counter(t, "flashgate_cp_redis_wait_timeouts_total",
		"Batches answered retry: they did not reach [redis] wait_replicas in time.", NULL,
		rs.wait_timeouts);
	metrics_counter(t, "flashgate_cp_results_published_total", "RESULT records published.",
		NULL, lc.records_out[WIRE_T_RESULT]);
	metrics_counter(t, "flashgate_cp_snapshots_published_total", "Full snapshots published.",
		NULL, lc.msgs_out[WIRE_T_SNAPSHOT_END]);
	metrics_counter(t, "flashgate_cp_publish_errors_total", "Messages ZeroMQ refused.", NULL,
		lc.send_errors);
	metrics_counter(t, "flashgate_cp_link_wrong_role_total",
		"Messages dropped: a type the sender's key may not send (CURVE).", NULL,
		lc.wrong_role);
	metrics_counter(t, "flashgate_cp_link_clients_allowed_total",
		"CURVE handshakes let in by the allow-list.", NULL, lc.zap.allowed);
	metrics_counter(t, "flashgate_cp_link_clients_refused_total",
		"CURVE handshakes refused: a key not in the allow-list, or a role on the wrong "
		"socket.",
		NULL, lc.zap.refused_unknown + lc.zap.refused_role);
	metrics_counter(t, "flashgate_cp_link_handshakes_failed_total",
		"ZeroMQ handshakes that failed (a wrong server key, plaintext against CURVE).", NULL,
		lc.zap.handshake_failed);
	metrics_counter(t, "flashgate_cp_link_disconnects_total",
		"Link connections that ended, including those libzmq dropped for a message over "
		"ZMQ_MAXMSGSIZE.",
		NULL, lc.zap.disconnected);
	for (unsigned i = 0; i < WIRE_ERR_MAX; i++) {
		labels[0] = '\0';
		metrics_label(labels, sizeof(labels), "reason", wire_err_name(-(int)i - 1));
		metrics_counter(t, "flashgate_cp_decode_errors_total",
			"Malformed messages from data planes, by reason.", labels,
			lc.decode_errors[i]);
	}
	if (c->admin != NULL) {
		struct admin_conns_counters ac;

		admin_conns_get_counters(c->admin, &ac);
		metrics_counter(t, "flashgate_cp_admin_requests_total", "flashgatectl requests.",
			NULL, ac.requests);
		metrics_counter(t, "flashgate_cp_admin_timed_out_total",
			"Admin connections cut off at their deadline (controlplane.admin_timeout).",
			NULL, ac.timed_out);
		metrics_gauge_int(t, "flashgate_cp_admin_connections", "Admin connections open.",
			NULL, ac.open);
	}
	struct dp_ids_counters ic;

	dp_ids_counters(c->ids, &ic);
	metrics_counter(t, "flashgate_cp_dp_refused_messages_total",
		"Messages of a data plane refused because another live one holds its dp id.", NULL,
		ic.refused_msgs);
	metrics_counter(t, "flashgate_cp_dp_refused_reservations_total",
		"Reservations of a refused data plane, never decided.", NULL,
		ic.refused_reservations);
	metrics_counter(t, "flashgate_cp_dp_id_conflicts_total",
		"Times a second live data plane showed up with a dp id in use.", NULL, ic.conflicts);
	metrics_counter(t, "flashgate_cp_loop_turns_total",
		"Turns of the control plane's loop (each: what its sockets had, a round of "
		"decisions, timers).",
		NULL, c->turns.turns);
	metrics_gauge_int(t, "flashgate_cp_loop_longest_turn_us",
		"The longest turn of the loop since the start (us): decisions wait that long at "
		"most, beside the batch wait.",
		NULL, (int64_t)c->turns.max_us);
	dp_stats_metrics(c->dps, t, now_mono_ms());
	cp_pow_metrics(c->pow, t);
	if (c->draws != NULL)
		draw_runner_metrics(c->draws, t);
}

int
main(int argc, char **argv)
{
	static struct cp_config cfg;
	static struct cp_state st;
	static struct cp_pow pow;
	static struct zlink_keys keys;
	struct cp_ctx c = { .cfg = &cfg, .st = &st, .pow = &pow };
	int migrate_only = 0, admin_fd = -1, rc = 1;
	struct cp_sampler *sampler = NULL;
	char err[512];

	log_set_program(PROG);
	rc = parse_args(argc, argv, &cfg, &migrate_only);
	if (rc != 0)
		return rc > 0 ? 0 : 1;
	rc = 1;
	log_set_level((enum log_level)cfg.log_level);
	signal(SIGPIPE, SIG_IGN);
	/* Before anything else: a link that would be plaintext off this host stops us here. */
	const char *eps[] = {cfg.pull_endpoint, cfg.pub_endpoint};

	/* Checked here, not by the loader: two -s options may set them one after the other. */
	if (!migrate_only && (cfg.links.secret_key_file[0] == '\0') != (cfg.clients_file[0] == '\0')) {
		LOG_ERR("[controlplane] curve_secret_key_file and curve_clients_file go together: the "
			"CURVE server needs its key pair and the list of the client keys it lets in "
			"(docs/operations.md, \"Link keys\")");
		return 1;
	}
	if (!migrate_only &&
		zlink_keys_load(&cfg.links, true, "controlplane", eps, 2, &keys, err, sizeof(err)) != 0) {
		LOG_ERR("%s", err);
		return 1;
	}
	if (keys.curve)
		LOG_NOTICE("links: CURVE on both sockets, the clients of %s",
			keys.clients_file[0] != '\0' ? keys.clients_file : cfg.clients_file);

	const char *drop = getenv(CP_TEST_DROP_ORDERED_ENV);

	if (drop != NULL && drop[0] != '\0') {
		c.test_drop_ordered_user = strtoull(drop, NULL, 10);
		LOG_WARN("test hook %s: ORDERED results of user %" PRIu64 " from the order writer "
			 "are not relayed to the data planes",
			CP_TEST_DROP_ORDERED_ENV, c.test_drop_ordered_user);
	}
	c.pg = pg_conn_open_named(cfg.store.pg_conninfo, "flashgate-cp loop", err, sizeof(err));
	if (c.pg == NULL) {
		LOG_ERR("PostgreSQL: %s", err);
		return 1;
	}
	unsigned applied = 0;

	if (pg_migrate(c.pg, NULL, &applied, err, sizeof(err)) != 0) {
		LOG_ERR("database migrations: %s", err);
		goto out;
	}
	if (applied)
		LOG_NOTICE("applied %u database migration(s)", applied);
	if (migrate_only) {
		printf("database schema up to date (%u migration(s) applied now)\n", applied);
		rc = 0;
		goto out;
	}

	char host[INET_ADDRSTRLEN];
	/* Redis may come up after us: reservations are answered retry until it does. */
	struct store_conn_config rsc = store_config_conn(&cfg.store, host);

	c.rs = store_open(&rsc, err, sizeof(err));
	if (c.rs == NULL) {
		LOG_ERR("Redis: %s", err);
		goto out;
	}
	c.links = cp_links_open(cfg.pull_endpoint, cfg.pub_endpoint, cfg.id, &keys,
		cfg.clients_file, err, sizeof(err));
	zlink_keys_wipe(&keys);
	if (c.links == NULL) {
		LOG_ERR("%s", err);
		goto out;
	}
	st.key_life_ms = (uint64_t)cfg.purchase_token_ttl_ms + CP_STATE_KEY_LATE_MS;
	if (cp_state_load(&st, c.pg, c.rs, err, sizeof(err)) != 0) {
		LOG_ERR("reading the state from PostgreSQL: %s", err);
		goto out;
	}
	c.dec = decider_create(c.rs, c.links, &st, cfg.batch_max, cfg.batch_wait_ms);
	c.draws = c.dec != NULL ? draw_runner_create(c.rs, &rsc, c.links, &st,
					  cfg.store.pg_conninfo, cfg.draw_batch)
				: NULL;
	if (c.draws != NULL)
		decider_set_draws(c.dec, c.draws);
	c.dps = dp_stats_create();
	c.ids = dp_ids_create(cfg.dp_timeout_ms);
	admin_fd = admin_server_listen(cfg.admin_socket, err, sizeof(err));
	if (admin_fd >= 0)
		c.admin = admin_conns_create(admin_fd, cfg.admin_timeout_ms, exec_admin, &c);
	if (c.dec == NULL || c.draws == NULL || c.dps == NULL || c.ids == NULL || admin_fd < 0 || c.admin == NULL) {
		LOG_ERR("%s", admin_fd >= 0 ? "out of memory" : err);
		goto out;
	}
	/* PostgreSQL's health, for the metrics and flashgatectl stats (docs/metrics.md): before
	 * the slow-job thread's copy of c and the metrics thread. */
	c.pg_health = pg_health_start(
		cfg.store.pg_conninfo, "flashgate-cp health", 1000, 5000, err, sizeof(err));
	if (c.pg_health == NULL) {
		LOG_ERR("%s", err);
		goto out;
	}
	/* Other control planes' admin changes, read off the loop (docs/ha.md): before the
	 * slow-job thread's copy of c, for its stats. */
	c.follow = cp_follow_start(&st, cfg.store.pg_conninfo, &rsc, err, sizeof(err));
	if (c.follow == NULL) {
		LOG_ERR("%s", err);
		goto out;
	}
	/* Last: its context is a copy of the loop's. */
	c.slow = cp_slow_create(&c, cfg.store.pg_conninfo, &rsc, exec_slow, err, sizeof(err));
	if (c.slow == NULL) {
		LOG_ERR("%s", err);
		goto out;
	}
	char maddr[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &cfg.metrics_address, maddr, sizeof(maddr));
	c.metrics = metrics_start_allow(
		maddr, cfg.metrics_port, cfg.metrics_allow, render_metrics, &c, err, sizeof(err));
	if (c.metrics == NULL) {
		LOG_ERR("metrics: %s", err);
		goto out;
	}
	/* A sample of each open sale a second, for its report (docs/operations.md). */
	sampler = cp_sampler_start(&c, cfg.store.pg_conninfo, 1000, err, sizeof(err));
	if (sampler == NULL) {
		LOG_ERR("%s", err);
		goto out;
	}

	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	c.started_mono_ms = now_mono_ms();
	/* Whoever is already subscribed learns the state without asking. */
	cp_state_publish_snapshot(&st, c.links);
	LOG_NOTICE("ready: PULL %s, PUB %s, admin %s, metrics port %u, %u event(s), %u key(s), %u "
		   "rule(s)",
		cfg.pull_endpoint, cfg.pub_endpoint, cfg.admin_socket, metrics_port(c.metrics),
		st.n_ev, st.n_keys, st.n_rules);

	sdnotify_ready("deciding");
	/* Every wake of the loop is on the monotonic clock: a step of the wall clock (NTP, a
	 * resumed VM, date -s) delays no heartbeat, batch or query (docs/operations.md). */
	uint64_t wake = cp_cron(&c, now_mono_ms(), now_wall_ms());

	while (!stop_requested) {
		uint64_t mono = now_mono_ms();
		long timeout = wake > mono ? (long)(wake - mono) : 0;
		/* Admin clients are served without blocking, each within its deadline: the
		 * loop wakes for them but never waits on one. */
		uint64_t admin_wake = admin_conns_deadline(c.admin);

		if (admin_wake != UINT64_MAX) {
			long admin_ms = admin_wake > mono ? (long)(admin_wake - mono) : 0;

			timeout = admin_ms < timeout ? admin_ms : timeout;
		}
		zmq_pollitem_t items[3 + ADMIN_CONNS_POLLITEMS] = {
			{.socket = cp_links_pull_socket(c.links), .events = ZMQ_POLLIN},
			{.fd = cp_slow_fd(c.slow), .events = ZMQ_POLLIN},
			{.fd = cp_follow_fd(c.follow), .events = ZMQ_POLLIN},
		};
		unsigned n = 3 + admin_conns_pollitems(c.admin, items + 3, ADMIN_CONNS_POLLITEMS);

		if (zmq_poll(items, (int)n, timeout) < 0 && zmq_errno() != EINTR) {
			LOG_ERR("zmq_poll: %s", zmq_strerror(zmq_errno()));
			break;
		}
		uint64_t turn_us = now_mono_us(), turn_cpu_us = cp_turns_cpu_us();

		if (items[0].revents & ZMQ_POLLIN)
			drain_pull(&c);
		wake = cp_cron(&c, now_mono_ms(), now_wall_ms());
		/* Result queries after the round's decisions, a bounded number per turn: a storm of
		 * polls delays the next round by one lookup at most. More waiting: no sleep. */
		uint64_t q_now = now_mono_ms();

		if (decider_serve_queries(c.dec, CP_QUERIES_PER_TURN, q_now) > 0 &&
			decider_queries_waiting(c.dec) > 0)
			wake = q_now;
		else if (decider_queries_at(c.dec) < wake)
			wake = decider_queries_at(c.dec); /* backing off, or Redis away: as usual */
		/* The slow-job thread's calls on the loop and its answers: each turn, between
		 * two rounds. */
		cp_slow_serve(c.slow, slow_done, &c);
		/* Another control plane's admin change, read by the follower thread. */
		cp_follow_serve(c.follow, &c);
		admin_conns_serve(c.admin, items + 3, n - 3, now_mono_ms());
		sdnotify_watchdog(now_mono_ms());
		uint64_t took_us = now_mono_us() - turn_us, cpu_us = cp_turns_cpu_us() - turn_cpu_us;

		cp_turns_note(&c.turns, took_us, cpu_us, now_mono_ms());
		if (took_us > CP_TURN_LONG_US)
			LOG_RL(LOG_LEVEL_INFO, 250,
				"a turn of the loop took %" PRIu64 " us (%" PRIu64 " us of its "
				"CPU time): decisions waited that long",
				took_us, cpu_us);
	}
	LOG_NOTICE("stopping");
	sdnotify_stopping("deciding what was received");
	/* What was received is decided before the sockets close: nothing accepted is dropped. */
	drain_pull(&c);
	decider_flush(c.dec, now_mono_ms(), now_wall_ms(), true);
	rc = 0;
out:
	zlink_keys_wipe(&keys);
	cp_sampler_stop(sampler);
	/* The slow-job thread first: it may call on the loop's state. A command still waiting
	 * on a locked table is not waited for long. */
	cp_slow_destroy(c.slow, 2000);
	c.slow = NULL;
	/* Then the metrics thread, which reads the admin counters. */
	metrics_stop(c.metrics);
	c.metrics = NULL;
	/* The follower after both (their stats and metrics read its counters). */
	cp_follow_stop(c.follow);
	c.follow = NULL;
	pg_health_stop(c.pg_health);
	c.pg_health = NULL;
	admin_conns_destroy(c.admin);
	c.admin = NULL;
	if (admin_fd >= 0) {
		close(admin_fd);
		unlink(cfg.admin_socket);
	}
	draw_runner_free(c.draws);
	decider_free(c.dec);
	dp_stats_destroy(c.dps);
	dp_ids_destroy(c.ids);
	cp_links_close(c.links);
	store_close(c.rs);
	pg_conn_close(c.pg);
	cp_state_free(&st);
	return rc;
}

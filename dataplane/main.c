/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flashgate-dataplane: answers flash-sale HTTP traffic from raw packets on
 * dedicated lcores. Usage:
 *   flashgate-dataplane [EAL options] -- [-c FILE] [-s SECTION.KEY=VALUE]... [--check-config]
 *       [--counters-json FILE]
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "common/config_cli.h"
#include "common/hmac_sha256.h"
#include "common/log.h"
#include "common/now.h"
#include "common/sdnotify.h"
#include "dataplane/dp_config.h"
#include "dataplane/bridge/bridge.h"
#include "dataplane/counters_json.h"
#include "dataplane/events.h"
#include "dataplane/lcore_loop.h"
#include "dataplane/port.h"
#include "dataplane/telemetry.h"
#include "dataplane/worker.h"

#define PROG "flashgate-dataplane"

static volatile bool stop_requested;
/* A second SIGTERM or SIGINT: stop now, without waiting for the handover. */
static volatile bool stop_now;
/* What the workers' loops run until: set only once the bridge handed over what they took. */
static volatile bool workers_stop;

struct app {
	struct dp_config cfg;
	struct event_table events;
	struct edge_trust edge; /* [edge] trusted, parsed once; the workers read it */
	struct worker *workers[RTE_MAX_LCORE];
	struct rte_mempool *pools[RTE_MAX_LCORE];
	struct bridge *bridge;
	struct clock_sync clock; /* the workers' shared calibration, resynced by the main loop */
	unsigned n_workers;
	uint16_t ports[WORKER_MAX_PORTS];
	bool port_started[WORKER_MAX_PORTS];
	unsigned n_ports;
	const char *counters_json; /* --counters-json FILE; NULL: not asked */
	struct zlink_keys link_keys; /* CURVE to the control plane; wiped once the bridge has them */
};

static void
on_signal(int sig __rte_unused)
{
	if (stop_requested)
		stop_now = true;
	stop_requested = true;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [EAL options] -- [options]\n"
		"\n"
		"EAL options are DPDK's (e.g. -l 0,1 --vdev net_af_packet0,iface=fg-dp --no-huge);\n"
		"the first lcore runs the control loop, every other lcore is a worker with one\n"
		"RX/TX queue on each port.\n"
		"\n"
		"options:\n"
		"  -c, --config FILE         read settings from FILE (INI; see flashgate.conf)\n"
		"  -s, --set SECTION.KEY=V   override one setting (repeatable; applied after -c)\n"
		"      --check-config        check the settings, print them, and exit\n"
		"      --help-config         list every setting with its default and exit\n"
		"      --counters-json FILE  at exit, the final counters also as JSON to FILE\n"
		"  -h, --help                this text\n");
}

/*
 * -h or --help among the EAL options (before "--", where an operator types it first): this
 * program's options, then DPDK's own list of EAL options, and exit. Returns only when neither
 * is there.
 */
static void
help_before_separator(int sep, char **argv)
{
	char *eal_help[] = {argv[0], "--help", NULL};

	for (int i = 1; i < sep; i++) {
		if (strcmp(argv[i], "-h") != 0 && strcmp(argv[i], "--help") != 0)
			continue;
		usage(stdout);
		fputs("\nDPDK's EAL options, before \"--\":\n", stdout);
		fflush(stdout);
		rte_eal_init(2, eal_help); /* prints them and exits */
		exit(0);
	}
}

/* Says where the link's keys came from: the key files, or the local key directory's. */
static void
log_link_keys(const struct zlink_settings *s)
{
	char dir[ZLINK_PATH_MAX];

	if (s->server_key_file[0] != '\0')
		LOG_NOTICE("bridge: CURVE to the control plane (its public key from %s)",
			s->server_key_file);
	else if (zlink_local_dir(s, dir, sizeof(dir)) == 0)
		LOG_NOTICE("bridge: CURVE to the control plane (the keys of the local key "
			   "directory %s)",
			dir);
}

/* --check-config: what was loaded, and every setting in force. */
static void
print_checked(FILE *out, const void *target)
{
	const struct dp_config *cfg = target;

	fprintf(out,
		"# configuration OK: %u event(s), %u listening port(s); the settings in force:\n",
		cfg->n_events, cfg->n_listen_ports);
	dp_config_write(out, cfg);
}

static int
on_counters_json(const char *arg, void *ctx)
{
	*(const char **)ctx = arg;
	return 0;
}

/*
 * Parses the options after "--" into cfg and *counters_json. Returns 0 to run, 1 to exit
 * successfully, -1 on error.
 */
static int
parse_app_args(int argc, char **argv, struct dp_config *cfg, const char **counters_json)
{
	static const struct cfg_cli_extra extra[] = {
		{"counters-json", true, on_counters_json},
	};
	const struct cfg_cli cli = {
		.prog = PROG,
		.schema = &dp_config_schema,
		.target = cfg,
		.usage = usage,
		.print_doc = dp_config_print_doc,
		.print_checked = print_checked,
		.stray_hint = "EAL options go before \"--\"",
		.extra = extra,
		.n_extra = 1,
		.ctx = counters_json,
	};

	return cfg_cli_parse(&cli, argc, argv);
}

static int
setup_workers(struct app *a)
{
	const struct dp_config *cfg = &a->cfg;
	uint8_t secret[16];
	char err[256];
	unsigned lcore;

	if (cfg->syncookie_secret_set) {
		memcpy(secret, cfg->syncookie_secret, sizeof(secret));
	} else if (getrandom(secret, sizeof(secret), 0) != (ssize_t)sizeof(secret)) {
		LOG_ERR("cannot draw a random SYN cookie secret: %s", strerror(errno));
		return -1;
	}
	/* The loader checked them already: a failure here is a bug, or the file changed. */
	if (edge_trust_load(cfg->edge_trusted, cfg->edge_trusted_file, &a->edge, err,
		    sizeof(err)) != 0) {
		LOG_ERR("[edge] trusted, trusted_file: %s", err);
		return -1;
	}
	if (a->edge.n4 + a->edge.n6 != 0)
		LOG_INFO("trusted edges: %u IPv4 and %u IPv6 ranges", a->edge.n4, a->edge.n6);
	RTE_LCORE_FOREACH_WORKER(lcore) {
		unsigned idx = a->n_workers;
		int socket = (int)rte_lcore_to_socket_id(lcore);
		struct worker *w = rte_zmalloc_socket("worker", sizeof(*w), RTE_CACHE_LINE_SIZE,
			socket);

		if (w == NULL) {
			LOG_ERR("out of memory for worker on lcore %u", lcore);
			return -1;
		}
		a->workers[a->n_workers++] = w;
		w->lcore_id = lcore;
		w->index = idx;
		w->ipv4_addr = cfg->ipv4_addr;
		w->mss = cfg->mss;
		w->mss_floor = cfg->mss_floor;
		w->ip_ttl = cfg->ip_ttl;
		w->burst = cfg->burst;
		w->events = &a->events;
		w->edge = &a->edge;
		w->stop = &workers_stop;
		w->dp_id = cfg->dp_id;
		w->purchase_ttl_s = cfg->purchase_token_ttl_s;
		w->receipt_young_ms = cfg->receipt_young_ms;
		w->receipt_retry_ms = cfg->receipt_retry_ms;
		w->cors_any = strcmp(cfg->cors_origin, "*") == 0;
		w->cors_len = (uint8_t)strlen(cfg->cors_origin);
		memcpy(w->cors_origin, cfg->cors_origin, w->cors_len);
		w->rl_ip = rl_table_create(cfg->limit_table_log2, socket);
		w->rl_user = rl_table_create(cfg->limit_table_log2, socket);
		w->rl_device = rl_table_create(cfg->limit_table_log2, socket);
		w->rl_poll = rl_table_create(cfg->limit_table_log2, socket);
		w->poll_limit = (struct rl_params){cfg->poll_rate, cfg->poll_burst};
		if (w->rl_ip == NULL || w->rl_user == NULL || w->rl_device == NULL ||
			w->rl_poll == NULL) {
			LOG_ERR("cannot allocate the rate-limit tables of lcore %u (4 x %zu bytes): "
				"lower admission.limit_table_log2 or give DPDK more memory",
				lcore, rl_table_mem_size(cfg->limit_table_log2));
			return -1;
		}
		/* Kept connections only where a trusted edge may open them. */
		w->kept_idle_ms = cfg->kept_idle_ms;
		w->kept_first_ms = cfg->kept_first_ms;
		w->kept_per_client = cfg->kept_per_client;
		if (cfg->kept_connections != 0 && a->edge.n4 != 0) {
			w->conns = conn_table_create(cfg->kept_connections, socket);
			if (w->conns == NULL) {
				LOG_ERR("cannot allocate the kept-connection table of lcore %u (%zu "
					"bytes): lower dataplane.kept_connections or give DPDK more "
					"memory", lcore, conn_table_mem_size(cfg->kept_connections));
				return -1;
			}
			w->ctr.kept[DP_KEPT_CAPACITY] = cfg->kept_connections;
		}
		for (unsigned i = 0; i < cfg->n_listen_ports; i++)
			worker_listen_add(w, cfg->listen_ports[i]);
		clock_attach(&w->clock, &a->clock);
		if (worker_init(w, secret, cfg->syncookie_slot_s, cfg->host) != 0) {
			LOG_ERR("worker on lcore %u: SYN cookie setup failed", lcore);
			return -1;
		}
		char name[RTE_MEMPOOL_NAMESIZE];

		snprintf(name, sizeof(name), "fg_pool_%u", lcore);
		a->pools[idx] = rte_pktmbuf_pool_create(name, cfg->mbufs, cfg->mbuf_cache, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, socket);
		if (a->pools[idx] == NULL) {
			LOG_ERR("cannot create a pool of %u mbufs for lcore %u: %s (lower "
				"dataplane.mbufs or give DPDK more memory: -m, hugepages)",
				cfg->mbufs, lcore, rte_strerror(rte_errno));
			return -1;
		}
		w->pool = a->pools[idx];
	}
	explicit_bzero(secret, sizeof(secret));
	if (a->n_workers == 0) {
		LOG_ERR("no worker lcore: give at least two lcores, e.g. -l 0,1 (the first runs "
			"the control loop)");
		return -1;
	}
	for (unsigned i = 0; i < a->n_workers; i++)
		a->workers[i]->n_workers = a->n_workers;
	return 0;
}

/* The bridge's stats_fn: the workers' counters summed, as DP_STATS records (bridge thread). */
static void
dp_stats_fn(void *arg, struct wire_stat *out, unsigned cap, unsigned *n)
{
	const struct app *a = arg;
	struct dp_counters sum;

	worker_counters_sum(a->workers, a->n_workers, &sum);
	*n = bridge_stats_from_counters(&sum, out, cap);
}

/* Creates the bridge to the control plane and gives each worker its end of it. */
static int
setup_bridge(struct app *a)
{
	const struct dp_config *cfg = &a->cfg;
	struct bridge_config bc;
	char err[512];

	bridge_config_defaults(&bc);
	bc.dp_id = cfg->dp_id;
	snprintf(bc.push_endpoint, sizeof(bc.push_endpoint), "%s", cfg->push_endpoint);
	snprintf(bc.sub_endpoint, sizeof(bc.sub_endpoint), "%s", cfg->sub_endpoint);
	bc.n_workers = a->n_workers;
	bc.ring_size = cfg->ring_size;
	bc.batch_max = cfg->batch_max;
	bc.batch_wait_us = cfg->batch_wait_ms * 1000;
	bc.result_capacity = cfg->result_capacity;
	bc.query_cooldown_ms = cfg->query_cooldown_ms;
	bc.resync_ms = cfg->resync_ms;
	bc.purchase_token_ttl_s = cfg->purchase_token_ttl_s;
	bc.snapshot_retry_ms = cfg->snapshot_retry_ms;
	bc.push_hwm = (int)cfg->push_hwm;
	bc.socket_id = (int)rte_socket_id();
	bc.stats_fn = dp_stats_fn;
	bc.stats_arg = a;
	bc.clock = &a->clock;
	bc.clock_skew_max_ms = cfg->clock_skew_max_ms;
	if (bridge_config_check(&bc, err, sizeof(err)) != 0) {
		LOG_ERR("bridge settings: %s", err);
		return -1;
	}
	bc.keys = a->link_keys;
	zlink_keys_wipe(&a->link_keys);
	a->bridge = bridge_create(&bc, err, sizeof(err));
	zlink_keys_wipe(&bc.keys);
	if (a->bridge == NULL) {
		LOG_ERR("cannot create the bridge to the control plane: %s", err);
		return -1;
	}
	for (unsigned i = 0; i < a->n_workers; i++) {
		a->workers[i]->bridge = bridge_port(a->bridge, i);
		a->workers[i]->qsbr = bridge_qsbr(a->bridge);
	}
	if (bridge_start(a->bridge, err, sizeof(err)) != 0) {
		LOG_ERR("cannot start the bridge to the control plane: %s", err);
		return -1;
	}
	return 0;
}

static int
setup_ports(struct app *a)
{
	uint16_t port_id;

	RTE_ETH_FOREACH_DEV(port_id) {
		if (port_id >= WORKER_MAX_PORTS || a->n_ports == WORKER_MAX_PORTS) {
			LOG_ERR("port %u: at most %d ports are supported", port_id, WORKER_MAX_PORTS);
			return -1;
		}
		a->ports[a->n_ports++] = port_id;
	}
	if (a->n_ports == 0) {
		LOG_ERR("no network port: attach one with EAL options, e.g. "
			"--vdev net_af_packet0,iface=fg-dp, or -a <PCI address> for a NIC bound "
			"to vfio-pci");
		return -1;
	}
	for (unsigned i = 0; i < a->n_ports; i++) {
		uint16_t p = a->ports[i];
		struct port_setup s = {
			.n_queues = (uint16_t)a->n_workers,
			.rx_desc = a->cfg.rx_desc,
			.tx_desc = a->cfg.tx_desc,
			.pools = a->pools,
		};
		struct port_info info;

		if (port_start(p, &s, &info) != 0)
			return -1;
		a->port_started[i] = true;
		for (unsigned k = 0; k < a->n_workers; k++) {
			struct worker *w = a->workers[k];

			w->ports[p].mac = info.mac;
			w->ports[p].tx_cksum_offload = info.tx_cksum_offload;
			w->rxq[w->n_rxq].port = p;
			w->rxq[w->n_rxq].queue = (uint16_t)k;
			w->n_rxq++;
		}
		char mac[RTE_ETHER_ADDR_FMT_SIZE];

		rte_ether_format_addr(mac, sizeof(mac), &info.mac);
		LOG_INFO("port %u (%s): mac %s, %u queue(s)%s, TX checksums %s", p, info.name, mac,
			a->n_workers, info.rss ? " spread by RSS" : "",
			info.tx_cksum_offload ? "offloaded" : "in software");
	}
	return 0;
}

/* The final counters to f, and as JSON to --counters-json's file. Returns 0 or a negative errno. */
static int
report_counters(const struct app *a, FILE *f)
{
	struct dp_counters sum;

	worker_counters_sum(a->workers, a->n_workers, &sum);
	fprintf(f, PROG ": final counters (%u worker(s), TSC %" PRIu64 " Hz):\n", a->n_workers,
		rte_get_tsc_hz());
	counters_print(f, &sum);
	if (a->bridge != NULL) {
		struct bridge_counters bc;

		bridge_counters_read(a->bridge, &bc);
		fprintf(f,
			"  bridge: %" PRIu64 " reservations handed over, %" PRIu64 " refused (ring "
			"full), %" PRIu64 " batches sent, %" PRIu64 " unsent at stop, %" PRIu64
			" unconfirmed at stop, %" PRIu64 " snapshots applied, %" PRIu64
			" results stored\n",
			bc.submitted, bc.ring_full, bc.batches_sent, bc.unsent_at_stop,
			bc.unconfirmed_at_stop, bc.snapshots_applied, bc.results.inserted + bc.results.replaced);
	}
	if (a->n_workers > 1) {
		for (unsigned i = 0; i < a->n_workers; i++) {
			struct dp_counters one;

			worker_counters_read(a->workers[i], &one);
			fprintf(f, "worker lcore %u:\n", a->workers[i]->lcore_id);
			counters_print(f, &one);
		}
	}
	fflush(f);
	if (a->counters_json == NULL)
		return 0;
	return counters_json_write(a->counters_json, a->workers, a->n_workers, a->bridge);
}

/*
 * The stop's first part, while the workers still answer: new reservations get 503 with
 * Retry-After, and every one accepted before is handed over to the control plane, until it has
 * them all, it is known gone (silent for bridge.resync), bridge.stop_timeout passed, or a
 * second signal came (docs/dataplane.md "Stopping without dropping a reservation").
 */
static void
drain_bridge(struct app *a)
{
	static const char *const why[] = {
		[BRIDGE_DRAIN_DONE] = "every accepted reservation is with the control plane",
		[BRIDGE_DRAIN_CP_GONE] = "the control plane is gone (silent for bridge.resync)",
		[BRIDGE_DRAIN_TIMEOUT] = "bridge.stop_timeout passed",
		[BRIDGE_DRAIN_ABORTED] = "a second signal",
	};

	if (a->bridge == NULL)
		return;
	LOG_NOTICE("stopping: new reservations are answered 503; handing over the accepted ones "
		   "(at most %u ms; a second SIGTERM stops at once)",
		a->cfg.stop_timeout_ms);
	bridge_drain_begin(a->bridge);
	/* Once every worker passed a quiescent point, none is between its look at the stop and
	 * its hand-over: the set of accepted reservations is closed. */
	rte_rcu_qsbr_synchronize(bridge_qsbr(a->bridge), RTE_QSBR_THRID_INVALID);
	enum bridge_drain_result r = bridge_drain_wait(a->bridge, a->cfg.stop_timeout_ms, &stop_now);

	if (r == BRIDGE_DRAIN_DONE)
		LOG_NOTICE("stopping: %s", why[r]);
	else
		LOG_WARN("stopping before every accepted reservation is with the control plane: %s "
			 "(the final counters' unsent and unconfirmed at stop say how many)",
			why[r]);
}

static void
periodic_stats(const struct app *a)
{
	struct dp_counters sum;

	worker_counters_sum(a->workers, a->n_workers, &sum);
	uint64_t drops = 0;

	for (unsigned i = 0; i < DP_DROP_MAX; i++)
		drops += sum.drops[i];
	LOG_INFO("rx %" PRIu64 " tx %" PRIu64 " requests %" PRIu64 " drops %" PRIu64,
		sum.rx_packets, sum.tx_packets, sum.requests, drops);
}

static void
teardown(struct app *a)
{
	for (unsigned i = 0; i < a->n_ports; i++)
		if (a->port_started[i])
			port_stop(a->ports[i]);
	bridge_destroy(a->bridge);
	for (unsigned i = 0; i < a->n_workers; i++) {
		rte_mempool_free(a->pools[i]);
		rl_table_free(a->workers[i]->rl_ip);
		rl_table_free(a->workers[i]->rl_user);
		rl_table_free(a->workers[i]->rl_device);
		rl_table_free(a->workers[i]->rl_poll);
		conn_table_free(a->workers[i]->conns);
		rte_free(a->workers[i]);
	}
	edge_trust_free(&a->edge);
}

int
main(int argc, char **argv)
{
	static struct app a;
	int sep = argc, rc;

	log_set_program(PROG);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	}
	help_before_separator(sep, argv);
	/* The settings are checked before DPDK takes any resource: a typo costs nothing. */
	char *app_argv[argc + 1];
	int app_argc = 0;

	app_argv[app_argc++] = argv[0];
	for (int i = sep + 1; i < argc; i++)
		app_argv[app_argc++] = argv[i];
	app_argv[app_argc] = NULL;
	rc = parse_app_args(app_argc, app_argv, &a.cfg, &a.counters_json);
	if (rc != 0)
		return rc > 0 ? 0 : 1;
	log_set_level((enum log_level)a.cfg.log_level);
	if (event_table_build(&a.events, a.cfg.events, a.cfg.n_events) != 0) {
		LOG_ERR("two events share an id");
		return 1;
	}
	/* The link's keys, and the refusal of a plaintext link off this host, before DPDK too. */
	const char *eps[] = {a.cfg.push_endpoint, a.cfg.sub_endpoint};
	char kerr[512];

	if (zlink_keys_load(&a.cfg.links, false, "bridge", eps, 2, &a.link_keys, kerr,
		    sizeof(kerr)) != 0) {
		LOG_ERR("%s", kerr);
		return 1;
	}
	if (a.link_keys.curve)
		log_link_keys(&a.cfg.links);

	argv[sep < argc ? sep : argc] = NULL;
	rc = rte_eal_init(sep, argv);
	if (rc < 0) {
		LOG_ERR("DPDK EAL initialisation failed: %s (check the EAL options before \"--\": "
			"lcores, --vdev/-a devices, hugepages or --no-huge)",
			rte_strerror(rte_errno));
		return 1;
	}
	rc = 1;
	if (clock_sync_init(&a.clock) != 0)
		LOG_WARN("clock: shifted by %" PRId64 " ms by " DP_CLOCK_TEST_OFFSET_ENV
			 " (for tests only: unset it in production)",
			a.clock.test_offset_ms);
	if (setup_workers(&a) != 0 || setup_ports(&a) != 0 || setup_bridge(&a) != 0)
		goto out;
	if (telemetry_register(a.workers, a.n_workers, a.bridge) != 0)
		LOG_WARN("telemetry commands could not be registered; counters show at exit only");

	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	for (unsigned i = 0; i < a.n_workers; i++) {
		if (rte_eal_remote_launch(lcore_loop_run, a.workers[i],
			    a.workers[i]->lcore_id) != 0) {
			LOG_ERR("cannot launch the worker on lcore %u", a.workers[i]->lcore_id);
			stop_requested = workers_stop = true;
			rte_eal_mp_wait_lcore();
			bridge_stop(a.bridge, 0);
			goto out;
		}
	}
	{
		char addr[16];
		uint32_t ip = rte_be_to_cpu_32(a.cfg.ipv4_addr);

		snprintf(addr, sizeof(addr), "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255,
			(ip >> 8) & 255, ip & 255);
		LOG_INFO("tokens: HMAC-SHA256 computed with %s", hmac_sha256_engine());
		LOG_NOTICE("ready: address %s, %u TCP port(s) starting with %u, %u port(s), %u "
			   "worker(s), %u event(s) from the config; control plane at %s and %s",
			addr, a.cfg.n_listen_ports, a.cfg.listen_ports[0], a.n_ports, a.n_workers,
			a.events.n, a.cfg.push_endpoint, a.cfg.sub_endpoint);
	}
	sdnotify_ready("answering");
	uint64_t next_stats = rte_get_timer_cycles(), next_resync = now_mono_ms();

	while (!stop_requested) {
		usleep(100 * 1000);
		sdnotify_watchdog(now_mono_ms());
		if (now_mono_ms() >= next_resync) {
			/* The workers' clock follows the wall clock (NTP) without a syscall of theirs. */
			int64_t step = clock_resync(&a.clock, now_wall_ms(), rte_rdtsc());

			if (step > 1000 || step < -1000)
				LOG_NOTICE("clock: the wall clock moved %" PRId64 " ms against the TSC; "
					   "the workers follow it",
					step);
			next_resync = now_mono_ms() + DP_CLOCK_RESYNC_MS;
		}
		if (a.cfg.stats_interval_s && rte_get_timer_cycles() >= next_stats) {
			periodic_stats(&a);
			next_stats = rte_get_timer_cycles() +
				     (uint64_t)a.cfg.stats_interval_s * rte_get_timer_hz();
		}
	}
	sdnotify_stopping("handing over the accepted reservations");
	drain_bridge(&a);
	workers_stop = true;
	rte_eal_mp_wait_lcore();
	/* drain_bridge() handed over what the workers took, or said why it could not. */
	bridge_stop(a.bridge, 0);
	rc = report_counters(&a, stderr) == 0 ? 0 : 1;
out:
	teardown(&a);
	rte_eal_cleanup();
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_REDIS_HA_H
#define FG_TESTS_REDIS_HA_H
/*
 * Redis with replicas for one test or benchmark (docs/ha.md): a primary, replicas and three
 * Sentinels (redis-server and redis-sentinel), all on free ports of 127.0.0.1, in one
 * temporary directory, stopped by their pids at the end, also when the test fails or is
 * interrupted. Every node runs appendonly yes with appendfsync always and min-replicas-to-write
 * 1 (the settings docs/ha.md asks for); the Sentinels monitor the primary as "flashgate" with
 * a short down-after-milliseconds so that a failover takes a few seconds.
 *
 * Children of a test that forks must leave with _exit(): only the process that started the
 * nodes stops them.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "tests/lib/child_proc.h"

#define RHA_REDIS_MAX	  3 /* the primary and two replicas */
#define RHA_SENTINELS	  3
#define RHA_READY_MS	  10000
#define RHA_MASTER	  "flashgate"
#define RHA_DOWN_AFTER_MS 1000

struct rha_node {
	pid_t pid; /* > 0 while running */
	unsigned port;
	char log[160];
};

struct redis_ha {
	pid_t owner;
	char dir[64];
	unsigned n_redis;
	struct rha_node redis[RHA_REDIS_MAX]; /* [0] the first primary */
	struct rha_node sentinel[RHA_SENTINELS];
	char sentinels[128]; /* "127.0.0.1:P,127.0.0.1:Q,127.0.0.1:R" for [redis] sentinels */
};

static struct redis_ha *rha_current;

/* SIGKILL to every node (async-signal-safe: the fatal-signal hook). */
static inline void
rha_on_fatal(void)
{
	struct redis_ha *h = rha_current;

	if (h == NULL || h->owner != getpid())
		return;
	for (unsigned i = 0; i < RHA_REDIS_MAX; i++)
		if (h->redis[i].pid > 0)
			kill(h->redis[i].pid, SIGKILL);
	for (unsigned i = 0; i < RHA_SENTINELS; i++)
		if (h->sentinel[i].pid > 0)
			kill(h->sentinel[i].pid, SIGKILL);
}

/* Sends sig to node (SIGCONT first, so that a stopped node can end) and reaps it. */
static inline void
rha_kill(struct rha_node *n, int sig)
{
	if (n->pid <= 0)
		return;
	kill(n->pid, SIGCONT);
	child_stop(n->pid, sig, 10000);
	n->pid = -1;
}

/* Stops every node and removes the directory. */
static inline void
rha_stop(struct redis_ha *h)
{
	if (h->owner != getpid())
		return;
	for (unsigned i = 0; i < RHA_SENTINELS; i++)
		rha_kill(&h->sentinel[i], SIGKILL);
	for (unsigned i = 0; i < RHA_REDIS_MAX; i++)
		rha_kill(&h->redis[i], SIGKILL);
	if (h->dir[0] != '\0')
		child_rm_tree(h->dir);
	h->dir[0] = '\0';
	if (rha_current == h)
		rha_current = NULL;
}

static inline void
rha_stop_current(void)
{
	if (rha_current != NULL)
		rha_stop(rha_current);
}

/* A plain connection to 127.0.0.1:port with a 5 s timeout, or NULL. */
static inline redisContext *
rha_connect(unsigned port)
{
	struct timeval tv = {.tv_sec = 5};
	redisContext *c = redisConnectWithTimeout("127.0.0.1", (int)port, tv);

	if (c != NULL && c->err) {
		redisFree(c);
		return NULL;
	}
	if (c != NULL)
		redisSetTimeout(c, tv);
	return c;
}

/* Runs argv (NULL-terminated) as a child; waits until 127.0.0.1:port answers PING. */
static inline int
rha_spawn(struct rha_node *n, const char *const *argv)
{
	uint64_t deadline;

	n->pid = fork();
	if (n->pid < 0)
		return -1;
	if (n->pid == 0) {
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	deadline = now_mono_ms() + RHA_READY_MS;
	while (now_mono_ms() < deadline) {
		redisContext *c = rha_connect(n->port);
		redisReply *r = c != NULL ? redisCommand(c, "PING") : NULL;
		bool ok = r != NULL && r->type == REDIS_REPLY_STATUS;
		int status;

		freeReplyObject(r);
		if (c != NULL)
			redisFree(c);
		if (ok)
			return 0;
		if (waitpid(n->pid, &status, WNOHANG) == n->pid) {
			fprintf(stderr, "# %s exited at start; see %s\n", argv[0], n->log);
			n->pid = -1;
			return -1;
		}
		child_sleep_ms(20);
	}
	fprintf(stderr, "# %s did not answer PING; see %s\n", argv[0], n->log);
	return -1;
}

/* Starts Redis node i: the primary (i == 0) or a replica of it. */
static inline int
rha_start_redis(struct redis_ha *h, unsigned i)
{
	struct rha_node *n = &h->redis[i];
	char port[8], dir[96], primary[8];
	const char *argv[40];
	unsigned a = 0;

	snprintf(port, sizeof(port), "%u", n->port);
	snprintf(dir, sizeof(dir), "%s/r%u", h->dir, i);
	snprintf(n->log, sizeof(n->log), "%s/redis.log", dir);
	snprintf(primary, sizeof(primary), "%u", h->redis[0].port);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -1;
	argv[a++] = "redis-server";
	argv[a++] = "--port";
	argv[a++] = port;
	argv[a++] = "--bind";
	argv[a++] = "127.0.0.1";
	argv[a++] = "--save";
	argv[a++] = "";
	argv[a++] = "--appendonly";
	argv[a++] = "yes";
	argv[a++] = "--appendfsync";
	argv[a++] = "always";
	argv[a++] = "--maxmemory-policy";
	argv[a++] = "noeviction";
	argv[a++] = "--min-replicas-to-write";
	argv[a++] = "1";
	argv[a++] = "--min-replicas-max-lag";
	argv[a++] = "10";
	argv[a++] = "--dir";
	argv[a++] = dir;
	argv[a++] = "--logfile";
	argv[a++] = n->log;
	argv[a++] = "--daemonize";
	argv[a++] = "no";
	if (i > 0) {
		argv[a++] = "--replicaof";
		argv[a++] = "127.0.0.1";
		argv[a++] = primary;
	}
	argv[a] = NULL;
	return rha_spawn(n, argv);
}

/* Starts Sentinel i, monitoring the primary with quorum 2. */
static inline int
rha_start_sentinel(struct redis_ha *h, unsigned i)
{
	struct rha_node *n = &h->sentinel[i];
	char conf[96], port[8];
	FILE *f;

	snprintf(conf, sizeof(conf), "%s/sentinel%u.conf", h->dir, i);
	snprintf(n->log, sizeof(n->log), "%s/sentinel%u.log", h->dir, i);
	snprintf(port, sizeof(port), "%u", n->port);
	f = fopen(conf, "w");
	if (f == NULL)
		return -1;
	fprintf(f,
		"bind 127.0.0.1\nport %u\ndir %s\nlogfile %s\n"
		"sentinel monitor %s 127.0.0.1 %u 2\n"
		"sentinel down-after-milliseconds %s %u\n"
		"sentinel failover-timeout %s 10000\n"
		"sentinel parallel-syncs %s 1\n",
		n->port, h->dir, n->log, RHA_MASTER, h->redis[0].port, RHA_MASTER,
		RHA_DOWN_AFTER_MS, RHA_MASTER, RHA_MASTER);
	fclose(f);
	const char *argv[] = {"redis-sentinel", conf, NULL};

	return rha_spawn(n, argv);
}

/* Waits until every replica of the primary is connected and in sync. Returns 0 or -1. */
static inline int
rha_wait_synced(const struct redis_ha *h, unsigned primary, unsigned replicas, unsigned ms)
{
	uint64_t deadline = now_mono_ms() + ms;

	while (now_mono_ms() < deadline) {
		redisContext *c = rha_connect(h->redis[primary].port);
		redisReply *r = c != NULL ? redisCommand(c, "INFO replication") : NULL;
		unsigned online = 0;

		if (r != NULL && r->type == REDIS_REPLY_STRING)
			for (const char *p = r->str; (p = strstr(p, "state=online")) != NULL; p++)
				online++;
		freeReplyObject(r);
		if (c != NULL)
			redisFree(c);
		if (online >= replicas)
			return 0;
		child_sleep_ms(50);
	}
	return -1;
}

/*
 * Starts a primary with n_replicas replicas (1..2) and three Sentinels in a new temporary
 * directory, and waits until the replicas are in sync and every Sentinel knows them. Returns
 * 0, or -1 (with a message on stderr; rha_stop() then cleans up).
 */
static inline int
rha_start(struct redis_ha *h, unsigned n_replicas)
{
	memset(h, 0, sizeof(*h));
	h->owner = getpid();
	h->n_redis = 1 + n_replicas;
	rha_current = h;
	atexit(rha_stop_current);
	child_at_fatal(rha_on_fatal);
	snprintf(h->dir, sizeof(h->dir), "/tmp/fg-redis-ha-XXXXXX");
	if (mkdtemp(h->dir) == NULL) {
		h->dir[0] = '\0';
		return -1;
	}
	for (unsigned i = 0; i < h->n_redis; i++)
		if ((h->redis[i].port = child_free_port()) == 0 || rha_start_redis(h, i) != 0)
			return -1;
	if (rha_wait_synced(h, 0, n_replicas, 20000) != 0) {
		fprintf(stderr, "# the replicas did not sync within 20 s\n");
		return -1;
	}
	size_t used = 0;

	for (unsigned i = 0; i < RHA_SENTINELS; i++) {
		if ((h->sentinel[i].port = child_free_port()) == 0 || rha_start_sentinel(h, i) != 0)
			return -1;
		used += (size_t)snprintf(h->sentinels + used, sizeof(h->sentinels) - used,
			"%s127.0.0.1:%u", i ? "," : "", h->sentinel[i].port);
	}
	/* Each Sentinel learns the replicas from the primary's INFO (every 10 s at most) and the
	 * other Sentinels by hello messages (every 2 s): a failover needs both. */
	uint64_t deadline = now_mono_ms() + 30000;

	while (now_mono_ms() < deadline) {
		unsigned ready = 0;

		for (unsigned i = 0; i < RHA_SENTINELS; i++) {
			redisContext *c = rha_connect(h->sentinel[i].port);
			redisReply *r = c != NULL
						? redisCommand(c, "SENTINEL MASTER %s", RHA_MASTER)
						: NULL;
			long long slaves = -1, others = -1;

			for (size_t k = 0;
				r != NULL && r->type == REDIS_REPLY_ARRAY && k + 1 < r->elements;
				k += 2) {
				if (strcmp(r->element[k]->str, "num-slaves") == 0)
					slaves = atoll(r->element[k + 1]->str);
				if (strcmp(r->element[k]->str, "num-other-sentinels") == 0)
					others = atoll(r->element[k + 1]->str);
			}
			ready += slaves == (long long)n_replicas && others == RHA_SENTINELS - 1;
			freeReplyObject(r);
			if (c != NULL)
				redisFree(c);
		}
		if (ready == RHA_SENTINELS)
			return 0;
		child_sleep_ms(100);
	}
	fprintf(stderr, "# the Sentinels did not learn the replicas and each other in 30 s\n");
	return -1;
}

/* The index of the node at port, or -1. */
static inline int
rha_node_of_port(const struct redis_ha *h, unsigned port)
{
	for (unsigned i = 0; i < h->n_redis; i++)
		if (h->redis[i].port == port)
			return (int)i;
	return -1;
}

/* The index of the node Sentinel i names the primary, or -1. */
static inline int
rha_primary(const struct redis_ha *h, unsigned i)
{
	redisContext *c = rha_connect(h->sentinel[i].port);
	redisReply *r = c != NULL
				? redisCommand(c, "SENTINEL get-master-addr-by-name %s", RHA_MASTER)
				: NULL;
	int node = -1;

	if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2)
		node = rha_node_of_port(h, (unsigned)atoi(r->element[1]->str));
	freeReplyObject(r);
	if (c != NULL)
		redisFree(c);
	return node;
}

#endif

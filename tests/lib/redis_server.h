/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_REDIS_SERVER_H
#define FG_TESTS_REDIS_SERVER_H
/*
 * A real redis-server for one test: started in a temporary directory with a Unix socket (and a
 * free TCP port on 127.0.0.1 when asked), persistence off unless asked, stopped by its pid at
 * the end, also when the test fails or is interrupted. Kill and restart helpers serve the tests
 * of a Redis outage: a restart reuses the directory, so an append-only file survives it.
 *
 * Also the seed's one-user reservation script, taken verbatim from the seed document
 * (../shared/seed-flash-sale.md) when it is there, so tests and benchmarks compare against the
 * reference itself.
 *
 * Children of a test that forks must leave with _exit(): only the process that started a
 * server stops it.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "tests/lib/child_proc.h"

#define REDIS_SERVER_MAX      4
#define REDIS_SERVER_READY_MS 10000 /* a start that takes longer has failed */
#define REDIS_SERVER_STOP_MS  10000 /* SIGTERM: then SIGKILL */

struct redis_server {
	pid_t pid;     /* > 0 while running */
	pid_t owner;   /* the process that started it */
	bool aof;      /* appendonly yes, appendfsync always */
	unsigned port; /* 0: no TCP */
	char dir[64];
	char sock[96];
	char log[96];
};

static struct redis_server *redis_servers[REDIS_SERVER_MAX];

/* The clock and sleep of tests/lib/child_proc.h, by the names the Redis tests use. */
static inline uint64_t
redis_server_now_ms(void)
{
	return now_mono_ms();
}

static inline void
redis_server_sleep_ms(unsigned ms)
{
	child_sleep_ms(ms);
}

/* Sends sig to the server and, for a signal that ends it, reaps it. */
static inline void
redis_server_kill(struct redis_server *s, int sig)
{
	if (s->pid <= 0 || s->owner != getpid())
		return;
	if (sig != SIGKILL && sig != SIGTERM) {
		kill(s->pid, sig);
		return;
	}
	child_stop(s->pid, sig, REDIS_SERVER_STOP_MS);
	s->pid = -1;
}

/* Stops the server (SIGKILL: nothing of it is kept) and removes its directory. */
static inline void
redis_server_stop(struct redis_server *s)
{
	if (s->owner != getpid())
		return;
	redis_server_kill(s, SIGKILL);
	if (s->dir[0] != '\0')
		child_rm_tree(s->dir);
	s->dir[0] = '\0';
	for (unsigned i = 0; i < REDIS_SERVER_MAX; i++)
		if (redis_servers[i] == s)
			redis_servers[i] = NULL;
}

static inline void
redis_server_stop_all(void)
{
	for (unsigned i = 0; i < REDIS_SERVER_MAX; i++)
		if (redis_servers[i] != NULL)
			redis_server_stop(redis_servers[i]);
}

/* On a fatal signal: SIGKILL to this process's servers (async-signal-safe). */
static inline void
redis_server_on_fatal(void)
{
	for (unsigned i = 0; i < REDIS_SERVER_MAX; i++)
		if (redis_servers[i] != NULL && redis_servers[i]->pid > 0 &&
			redis_servers[i]->owner == getpid())
			kill(redis_servers[i]->pid, SIGKILL);
}

/* True when the server answers PING with PONG on its Unix socket. */
static inline bool
redis_server_ping(const struct redis_server *s)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = 500000};
	redisContext *c = redisConnectUnixWithTimeout(s->sock, tv);
	bool ok = false;

	if (c != NULL && !c->err) {
		redisSetTimeout(c, tv);
		redisReply *r = redisCommand(c, "PING");

		ok = r != NULL && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
		if (r != NULL)
			freeReplyObject(r);
	}
	if (c != NULL)
		redisFree(c);
	return ok;
}

/* Starts redis-server in s->dir as s says and waits until it answers. Returns 0 or -1. */
static inline int
redis_server_launch(struct redis_server *s)
{
	char port[16];
	const char *argv[] = {"redis-server", "--port", port, "--bind", "127.0.0.1", "--unixsocket",
		s->sock, "--unixsocketperm", "700", "--save", "", "--appendonly",
		s->aof ? "yes" : "no", "--appendfsync", "always", "--dir", s->dir, "--logfile",
		s->log, "--daemonize", "no", NULL};
	uint64_t deadline;

	snprintf(port, sizeof(port), "%u", s->port);
	unlink(s->sock);
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid == 0) {
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run redis-server: %s\n", strerror(errno));
		_exit(127);
	}
	deadline = now_mono_ms() + REDIS_SERVER_READY_MS;
	while (now_mono_ms() < deadline) {
		int status;

		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			fprintf(stderr, "# redis-server exited at start; see %s\n", s->log);
			s->pid = -1;
			return -1;
		}
		if (redis_server_ping(s))
			return 0;
		child_sleep_ms(10);
	}
	fprintf(stderr, "# redis-server did not answer PING within %u ms\n", REDIS_SERVER_READY_MS);
	redis_server_kill(s, SIGKILL);
	return -1;
}

/*
 * Starts a server in a new temporary directory. tcp: also on a free port of 127.0.0.1 (in
 * s->port). aof: appendonly yes with appendfsync always, so that a killed server keeps every
 * write it acknowledged. Returns 0, or -1 (with a message on stderr).
 */
static inline int
redis_server_start(struct redis_server *s, bool tcp, bool aof)
{
	static bool hooked;
	unsigned slot = 0;

	memset(s, 0, sizeof(*s));
	s->pid = -1;
	s->owner = getpid();
	s->aof = aof;
	while (slot < REDIS_SERVER_MAX && redis_servers[slot] != NULL)
		slot++;
	if (slot == REDIS_SERVER_MAX)
		return -1;
	if (!hooked) {
		hooked = true;
		atexit(redis_server_stop_all);
		child_at_fatal(redis_server_on_fatal);
	}
	snprintf(s->dir, sizeof(s->dir), "/tmp/fg-redis-XXXXXX");
	if (mkdtemp(s->dir) == NULL) {
		fprintf(stderr, "# mkdtemp: %s\n", strerror(errno));
		s->dir[0] = '\0';
		return -1;
	}
	redis_servers[slot] = s;
	snprintf(s->sock, sizeof(s->sock), "%s/redis.sock", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/redis.log", s->dir);
	s->port = tcp ? child_free_port() : 0;
	if (tcp && s->port == 0)
		return -1;
	return redis_server_launch(s);
}

/* Starts the server again in the same directory, socket and port. Returns 0 or -1. */
static inline int
redis_server_restart(struct redis_server *s)
{
	redis_server_kill(s, SIGKILL);
	return redis_server_launch(s);
}

/*
 * The seed's one-user reservation script (KEYS[1] stock, KEYS[2] buyers, ARGV[1] user:
 * -1 already a buyer, 0 sold out, 1 reserved). Read from the first ```lua block of the seed
 * document at doc_path when it can be read; else this transcription of it, so that the test
 * also runs outside this workspace. *from says which. Returns the text (static storage).
 */
static inline const char *
redis_seed_script(const char *doc_path, const char **from)
{
	static char buf[4096];
	static const char transcription[] =
		"-- KEYS[1]=库存 key  KEYS[2]=已购用户集合  ARGV[1]=用户 id\n"
		"if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then\n"
		"  return -1                              -- 已经抢过\n"
		"end\n"
		"local stock = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
		"if stock <= 0 then\n"
		"  return 0                               -- 售罄\n"
		"end\n"
		"redis.call('DECR', KEYS[1])\n"
		"redis.call('SADD', KEYS[2], ARGV[1])\n"
		"return 1                                 -- 成功，随后发消息异步下单\n";
	FILE *f = doc_path != NULL ? fopen(doc_path, "r") : NULL;
	char doc[32768];
	size_t len = 0;

	*from = "the transcription in tests/lib/redis_server.h";
	if (f != NULL) {
		len = fread(doc, 1, sizeof(doc) - 1, f);
		fclose(f);
	}
	doc[len] = '\0';
	const char *open = strstr(doc, "```lua\n");
	const char *close = open != NULL ? strstr(open + 7, "\n```") : NULL;

	if (close == NULL || (size_t)(close + 1 - (open + 7)) >= sizeof(buf))
		return transcription;
	memcpy(buf, open + 7, (size_t)(close + 1 - (open + 7)));
	buf[close + 1 - (open + 7)] = '\0';
	*from = doc_path;
	return buf;
}

#endif

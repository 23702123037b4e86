/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_PG_SERVER_H
#define FG_TESTS_PG_SERVER_H
/*
 * A real PostgreSQL for one test: a new cluster (initdb) in a temporary directory, listening on
 * a Unix socket in that directory and on a free TCP port of 127.0.0.1, with a database
 * "flashgate"; stopped by its pid at the end, also when the test fails or is interrupted, and
 * its directory removed. As root, initdb and postgres run as the user "postgres" (PostgreSQL
 * refuses root). The binaries come from $FG_PG_BIN, else /usr/lib/postgresql/15/bin, else the
 * newest /usr/lib/postgresql/N/bin. scripts/services does the same for the shell.
 *
 * Children of a test that forks must leave with _exit(): only the process that started a
 * server stops it.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "tests/lib/child_proc.h"

#define PG_SERVER_MAX	    2
#define PG_SERVER_INITDB_MS 60000 /* initdb that takes longer has failed */
#define PG_SERVER_READY_MS  30000 /* a start that takes longer has failed */
#define PG_SERVER_STOP_MS   10000

struct pg_server {
	pid_t pid;     /* the postmaster, > 0 while running */
	pid_t owner;   /* the process that started it */
	bool durable;  /* fsync on (the demo's setting); off by default: faster, same semantics */
	unsigned port; /* on 127.0.0.1 */
	uid_t uid;     /* who runs it */
	gid_t gid;
	char bin[128];
	char dir[64];		/* the temporary directory; also the Unix socket's */
	char data[96];		/* dir/data: the cluster */
	char log[96];		/* dir/postgres.log */
	char conninfo[192];	/* the database flashgate over the Unix socket */
	char conninfo_tcp[192]; /* the same over TCP */
};

static struct pg_server *pg_servers[PG_SERVER_MAX];

/*
 * Sends sig to the postmaster. For SIGQUIT (immediate shutdown), SIGINT (fast shutdown),
 * SIGTERM and SIGKILL it also waits for the exit (SIGKILL after PG_SERVER_STOP_MS).
 */
static inline void
pg_server_kill(struct pg_server *s, int sig)
{
	if (s->pid <= 0 || s->owner != getpid())
		return;
	if (sig != SIGQUIT && sig != SIGINT && sig != SIGTERM && sig != SIGKILL) {
		kill(s->pid, sig);
		return;
	}
	child_stop(s->pid, sig, PG_SERVER_STOP_MS);
	s->pid = -1;
}

/* Stops the server (immediate shutdown: nothing of it is kept) and removes its directory. */
static inline void
pg_server_stop(struct pg_server *s)
{
	if (s->owner != getpid())
		return;
	pg_server_kill(s, SIGQUIT);
	if (s->dir[0] != '\0')
		child_rm_tree(s->dir);
	s->dir[0] = '\0';
	for (unsigned i = 0; i < PG_SERVER_MAX; i++)
		if (pg_servers[i] == s)
			pg_servers[i] = NULL;
}

static inline void
pg_server_stop_all(void)
{
	for (unsigned i = 0; i < PG_SERVER_MAX; i++)
		if (pg_servers[i] != NULL)
			pg_server_stop(pg_servers[i]);
}

/* On a fatal signal: immediate shutdown of this process's postmasters (async-signal-safe). */
static inline void
pg_server_on_fatal(void)
{
	for (unsigned i = 0; i < PG_SERVER_MAX; i++)
		if (pg_servers[i] != NULL && pg_servers[i]->pid > 0 &&
			pg_servers[i]->owner == getpid())
			kill(pg_servers[i]->pid, SIGQUIT);
}

/* Finds the directory of initdb and postgres. Returns 0 or -1. */
static inline int
pg_server_find_bin(struct pg_server *s)
{
	const char *env = getenv("FG_PG_BIN");
	char path[160];
	glob_t g;

	if (env != NULL && *env != '\0') {
		snprintf(s->bin, sizeof(s->bin), "%s", env);
	} else {
		snprintf(s->bin, sizeof(s->bin), "/usr/lib/postgresql/15/bin");
		snprintf(path, sizeof(path), "%s/postgres", s->bin);
		if (access(path, X_OK) != 0 &&
			glob("/usr/lib/postgresql/*/bin", 0, NULL, &g) == 0) {
			/* glob sorts: the last is the newest major version (up to 99). */
			snprintf(s->bin, sizeof(s->bin), "%s", g.gl_pathv[g.gl_pathc - 1]);
			globfree(&g);
		}
	}
	snprintf(path, sizeof(path), "%s/postgres", s->bin);
	if (access(path, X_OK) != 0) {
		fprintf(stderr,
			"# no PostgreSQL server in %s (install the Debian package postgresql, or "
			"set "
			"FG_PG_BIN)\n",
			s->bin);
		return -1;
	}
	return 0;
}

/* Runs argv as the server's user with stdout and stderr to the log. Returns the child's pid. */
static inline pid_t
pg_server_spawn(const struct pg_server *s, const char *const *argv)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	int fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	if (getuid() == 0 &&
		(setgroups(0, NULL) != 0 || setgid(s->gid) != 0 || setuid(s->uid) != 0)) {
		fprintf(stderr, "cannot become uid %u: %s\n", (unsigned)s->uid, strerror(errno));
		_exit(126);
	}
	/* Same process group as the test: whatever kills the test's group (a timeout) also ends
	 * the cluster, even when the test gets no chance to stop it. */
	execv(argv[0], (char *const *)argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* True when the postmaster accepts connections on its Unix socket. */
static inline bool
pg_server_ready(const struct pg_server *s)
{
	char ci[192];

	snprintf(ci, sizeof(ci), "host=%s port=%u dbname=postgres user=postgres connect_timeout=2",
		s->dir, s->port);
	return PQping(ci) == PQPING_OK;
}

/* Starts the postmaster on s->port and waits until it answers. Returns 0 or -1. */
static inline int
pg_server_launch(struct pg_server *s)
{
	char port[16], bin[192];
	const char *argv[] = {bin, "-D", s->data, "-k", s->dir, "-p", port, "-c",
		"listen_addresses=127.0.0.1", "-c", s->durable ? "fsync=on" : "fsync=off", "-c",
		"synchronous_commit=on", "-c",
		s->durable ? "full_page_writes=on" : "full_page_writes=off", "-c",
		"max_connections=64", NULL};
	uint64_t deadline;

	snprintf(bin, sizeof(bin), "%s/postgres", s->bin);
	snprintf(port, sizeof(port), "%u", s->port);
	s->pid = pg_server_spawn(s, argv);
	if (s->pid < 0)
		return -1;
	deadline = now_mono_ms() + PG_SERVER_READY_MS;
	while (now_mono_ms() < deadline) {
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
			fprintf(stderr, "# postgres exited at start; see %s\n", s->log);
			s->pid = -1;
			return -1;
		}
		if (pg_server_ready(s))
			return 0;
		child_sleep_ms(20);
	}
	fprintf(stderr, "# postgres did not accept connections within %u ms; see %s\n",
		PG_SERVER_READY_MS, s->log);
	pg_server_kill(s, SIGKILL);
	return -1;
}

/*
 * Makes a cluster in a new temporary directory, starts it and creates the database flashgate.
 * durable: fsync on, as in production (slower); else fsync off, which loses nothing unless
 * the machine itself crashes. Returns 0, or -1 with a message on stderr.
 */
static inline int
pg_server_start(struct pg_server *s, bool durable)
{
	static bool hooked;
	char initdb[192];
	const char *argv[] = {initdb, "-D", s->data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
		"--locale=C", "--no-sync", "--no-instructions", NULL};
	unsigned slot = 0;
	pid_t pid;
	int status;

	memset(s, 0, sizeof(*s));
	s->pid = -1;
	s->owner = getpid();
	s->durable = durable;
	s->uid = getuid();
	s->gid = getgid();
	while (slot < PG_SERVER_MAX && pg_servers[slot] != NULL)
		slot++;
	if (slot == PG_SERVER_MAX || pg_server_find_bin(s) != 0)
		return -1;
	if (s->uid == 0) {
		struct passwd *pw = getpwnam("postgres");

		if (pw == NULL) {
			fprintf(stderr,
				"# PostgreSQL refuses root and there is no user postgres\n");
			return -1;
		}
		s->uid = pw->pw_uid;
		s->gid = pw->pw_gid;
	}
	if (!hooked) {
		hooked = true;
		atexit(pg_server_stop_all);
		child_at_fatal(pg_server_on_fatal);
	}
	snprintf(s->dir, sizeof(s->dir), "/tmp/fg-pg-XXXXXX");
	if (mkdtemp(s->dir) == NULL) {
		fprintf(stderr, "# mkdtemp: %s\n", strerror(errno));
		s->dir[0] = '\0';
		return -1;
	}
	pg_servers[slot] = s;
	if (chown(s->dir, s->uid, s->gid) != 0) {
		fprintf(stderr, "# chown %s: %s\n", s->dir, strerror(errno));
		return -1;
	}
	snprintf(s->data, sizeof(s->data), "%s/data", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/postgres.log", s->dir);
	snprintf(initdb, sizeof(initdb), "%s/initdb", s->bin);
	pid = pg_server_spawn(s, argv);
	status = pid > 0 ? child_wait(pid, PG_SERVER_INITDB_MS) : -1;
	if (status < 0)
		child_stop(pid, SIGKILL, PG_SERVER_STOP_MS);
	if (status != 0) {
		fprintf(stderr, "# initdb failed; see %s\n", s->log);
		return -1;
	}
	/* The port may be taken between the probe and the bind: try a few. */
	for (int attempt = 0; attempt < 3; attempt++) {
		s->port = child_free_port();
		if (s->port != 0 && pg_server_launch(s) == 0)
			break;
		s->port = 0;
	}
	if (s->port == 0)
		return -1;
	snprintf(s->conninfo, sizeof(s->conninfo), "host=%s port=%u dbname=flashgate user=postgres",
		s->dir, s->port);
	snprintf(s->conninfo_tcp, sizeof(s->conninfo_tcp),
		"host=127.0.0.1 port=%u dbname=flashgate user=postgres", s->port);
	{
		char ci[192];
		PGconn *c;
		PGresult *r;
		bool ok;

		snprintf(ci, sizeof(ci), "host=%s port=%u dbname=postgres user=postgres", s->dir,
			s->port);
		c = PQconnectdb(ci);
		r = PQexec(c, "CREATE DATABASE flashgate");
		ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		if (!ok)
			fprintf(stderr, "# CREATE DATABASE flashgate: %s", PQerrorMessage(c));
		PQclear(r);
		PQfinish(c);
		if (!ok)
			return -1;
	}
	return 0;
}

/* Stops the postmaster (immediate shutdown) and starts it again on the same data and port. */
static inline int
pg_server_restart(struct pg_server *s)
{
	pg_server_kill(s, SIGQUIT);
	return pg_server_launch(s);
}

#endif

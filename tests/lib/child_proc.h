/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_CHILD_PROC_H
#define FG_TESTS_CHILD_PROC_H
/*
 * What a test needs to run other programs beside it and never leave one behind: a monotonic
 * clock, sleeps, a bounded wait for a child, stop-and-reap, a free TCP port on 127.0.0.1,
 * removal of a temporary directory, and hooks that run when the test dies of a signal (to kill
 * its children by pid before the signal takes its default action). No TAP here: the servers of
 * tests/lib and single tests use it alike.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/now.h"

#define CHILD_FATAL_HOOKS 4

/* Milliseconds of CLOCK_MONOTONIC: for deadlines, never for dates. */
/* Sleeps ms milliseconds, also when signals interrupt the sleep. */
static inline void
child_sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Waits up to ms for child pid to exit and reaps it. Returns its wait status (0 also when it is
 * not our child any more), or -1 when it is still running at the deadline.
 */
static inline int
child_wait(pid_t pid, unsigned ms)
{
	uint64_t deadline = now_mono_ms() + ms;
	int status;

	do {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return 0;
		child_sleep_ms(10);
	} while (now_mono_ms() < deadline);
	return -1;
}

/*
 * Sends sig to child pid and reaps it: SIGKILL after grace_ms when it has not exited by then.
 * Nothing for pid <= 0. Cannot fail.
 */
static inline void
child_stop(pid_t pid, int sig, unsigned grace_ms)
{
	if (pid <= 0)
		return;
	kill(pid, sig);
	if (child_wait(pid, grace_ms) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* A TCP port on 127.0.0.1 that was free a moment ago, or 0. */
static inline unsigned
child_free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned port = 0;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static inline int
child_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Removes dir and everything below it (links are removed, not followed); best effort. */
static inline void
child_rm_tree(const char *dir)
{
	nftw(dir, child_rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

typedef void (*child_fatal_fn)(void);

static child_fatal_fn child_fatal_hooks[CHILD_FATAL_HOOKS];

static inline void
child_on_fatal_signal(int sig)
{
	for (unsigned i = 0; i < CHILD_FATAL_HOOKS; i++)
		if (child_fatal_hooks[i] != NULL)
			child_fatal_hooks[i]();
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Runs fn when the test dies of SIGINT, SIGTERM, SIGSEGV, SIGABRT, SIGBUS or SIGALRM (a
 * test's alarm() watchdog), then lets the signal take its default action. fn runs in a signal
 * handler: only async-signal-safe calls (kill, getpid). Registering fn again changes nothing.
 * Returns 0, or -1 when CHILD_FATAL_HOOKS hooks are taken.
 */
static inline int
child_at_fatal(child_fatal_fn fn)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGSEGV, SIGABRT, SIGBUS, SIGALRM};
	unsigned i;

	for (i = 0; i < CHILD_FATAL_HOOKS; i++)
		if (child_fatal_hooks[i] == fn)
			return 0;
	for (i = 0; i < CHILD_FATAL_HOOKS && child_fatal_hooks[i] != NULL; i++)
		;
	if (i == CHILD_FATAL_HOOKS)
		return -1;
	child_fatal_hooks[i] = fn;
	for (unsigned k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
		signal(sigs[k], child_on_fatal_signal);
	return 0;
}

#endif

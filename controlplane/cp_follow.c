/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_follow.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/now.h"

/* After a failed connection or read: tried again this much later. */
#define FOLLOW_RETRY_MS 1000

enum { CAUSE_NOTIFY = 1, CAUSE_CONNECT = 2, CAUSE_CHECK = 4 };

struct cp_follow {
	const struct cp_state *st;
	struct store_conn_config rsc;
	struct pg_conn *pg; /* the thread's */
	struct store *rs;   /* the thread's */
	bool fresh;	    /* the setup ran: a new connection, LISTENing */
	int efd;	    /* to the loop: a read waits */
	int wake;	    /* to the thread: stop */
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	bool stop;		       /* under mu */
	struct cp_state_read *rd;      /* under mu: the read waiting for the loop */
	struct cp_follow_counters cnt; /* under mu */
};

static int
listen_setup(struct pg_conn *c, void *arg, char *err, size_t errlen)
{
	struct cp_follow *f = arg;
	int rc = pg_conn_exec(c, "LISTEN " CP_FOLLOW_CHANNEL, 0, NULL, err, errlen);

	if (rc == 0)
		f->fresh = true;
	return rc;
}

static void
count(struct cp_follow *f, uint64_t *field, uint64_t n)
{
	pthread_mutex_lock(&f->mu);
	*field += n;
	pthread_mutex_unlock(&f->mu);
}

/* Waits for the listening socket (sock < 0: none) or a stop, at most ms. Returns whether to
 * stop. */
static bool
wait_for(struct cp_follow *f, int sock, uint64_t ms)
{
	struct pollfd p[2] = {{.fd = f->wake, .events = POLLIN}, {.fd = sock, .events = POLLIN}};

	(void)poll(p, sock >= 0 ? 2 : 1, (int)(ms > 60000 ? 60000 : ms));
	pthread_mutex_lock(&f->mu);
	bool stop = f->stop;

	pthread_mutex_unlock(&f->mu);
	return stop;
}

/* The notifications received so far, consumed. -1: the connection is gone. */
static int
drain(struct cp_follow *f)
{
	PGconn *pc = pg_conn_libpq(f->pg);
	PGnotify *n;
	int got = 0;

	if (pc == NULL || PQconsumeInput(pc) == 0)
		return -1;
	while ((n = PQnotifies(pc)) != NULL) {
		got++;
		PQfreemem(n);
	}
	return got;
}

/* Reads the version, then the state (so that a change after the version read is seen again),
 * and hands the state to the loop. Returns 0 or < 0 (logged). */
static int
reload(struct cp_follow *f, unsigned causes, uint64_t *version)
{
	char err[512];
	int rc = pg_conn_query_u64(
		f->pg, "SELECT version FROM config_version", 0, NULL, version, err, sizeof(err));
	struct cp_state_read *rd = NULL;

	if (rc == 0)
		rd = cp_state_read(f->st, f->pg, f->rs, &rc, err, sizeof(err));
	if (rd == NULL) {
		LOG_RL(LOG_LEVEL_WARN, 10000, "following other control planes: %s", err);
		count(f, &f->cnt.failures, 1);
		return rc != 0 ? rc : -EIO;
	}
	pthread_mutex_lock(&f->mu);
	struct cp_state_read *old = f->rd;

	f->rd = rd;
	f->cnt.reloads_notify += (causes & CAUSE_NOTIFY) != 0;
	f->cnt.reloads_connect += (causes & CAUSE_CONNECT) != 0;
	f->cnt.reloads_check += (causes & CAUSE_CHECK) != 0;
	pthread_mutex_unlock(&f->mu);
	cp_state_read_free(old);
	uint64_t one = 1;

	if (write(f->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		LOG_RL(LOG_LEVEL_WARN, 10000, "following: eventfd: %s", strerror(errno));
	return 0;
}

static void *
follower(void *arg)
{
	struct cp_follow *f = arg;
	uint64_t version = 0, next_check = 0;
	unsigned causes = 0;
	char err[512];

	for (;;) {
		if (pg_conn_ready(f->pg, err, sizeof(err)) != 0) {
			LOG_RL(LOG_LEVEL_WARN, 10000, "following other control planes: %s", err);
			if (wait_for(f, -1, FOLLOW_RETRY_MS))
				break;
			continue;
		}
		if (f->fresh) {
			/* What was notified while no connection listened is lost: read once. */
			PGconn *pc = pg_conn_libpq(f->pg);

			f->fresh = false;
			pthread_mutex_lock(&f->mu);
			f->cnt.connects++;
			f->cnt.backend_pid = pc != NULL ? PQbackendPID(pc) : 0;
			pthread_mutex_unlock(&f->mu);
			causes |= CAUSE_CONNECT;
		}
		int got = drain(f);

		if (got < 0) {
			if (wait_for(f, -1, 0))
				break;
			continue; /* pg_conn_ready() makes it again */
		}
		if (got > 0) {
			count(f, &f->cnt.notifications, (uint64_t)got);
			causes |= CAUSE_NOTIFY;
		}
		uint64_t now = now_mono_ms();

		if (causes == 0 && now >= next_check) {
			uint64_t v;

			next_check = now + CP_FOLLOW_CHECK_MS;
			if (pg_conn_query_u64(f->pg, "SELECT version FROM config_version", 0, NULL,
				    &v, err, sizeof(err)) != 0) {
				LOG_RL(LOG_LEVEL_WARN, 10000, "following other control planes: %s",
					err);
				count(f, &f->cnt.failures, 1);
			} else if (v != version) {
				causes |= CAUSE_CHECK;
			}
			continue; /* notifications that came with the answer first */
		}
		if (causes != 0) {
			if (reload(f, causes, &version) == 0) {
				causes = 0;
				next_check = now_mono_ms() + CP_FOLLOW_CHECK_MS;
			} else if (wait_for(f, -1, FOLLOW_RETRY_MS)) {
				break;
			}
			continue;
		}
		PGconn *pc = pg_conn_libpq(f->pg);

		if (wait_for(f, pc != NULL ? PQsocket(pc) : -1, next_check - now))
			break;
	}
	return NULL;
}

struct cp_follow *
cp_follow_start(const struct cp_state *st, const char *pg_conninfo,
	const struct store_conn_config *rsc, char *err, size_t errlen)
{
	struct cp_follow *f = calloc(1, sizeof(*f));
	int rc;

	if (f == NULL) {
		snprintf(err, errlen, "following: out of memory");
		return NULL;
	}
	f->efd = f->wake = -1;
	f->st = st;
	f->rsc = *rsc;
	pthread_mutex_init(&f->mu, NULL);
	f->pg = pg_conn_new_named(pg_conninfo, "flashgate-cp follow", listen_setup, f);
	if (f->pg == NULL) {
		snprintf(err, errlen, "following: out of memory");
		goto fail;
	}
	/* Connected by the thread, as after an outage, when Redis is away now. */
	f->rsc.start_offline = true;
	if ((f->rs = store_open(&f->rsc, err, errlen)) == NULL)
		goto fail;
	f->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	f->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (f->efd < 0 || f->wake < 0) {
		snprintf(err, errlen, "following: eventfd: %s", strerror(errno));
		goto fail;
	}
	if ((rc = pthread_create(&f->thread, NULL, follower, f)) != 0) {
		snprintf(err, errlen, "following: cannot start the thread: %s", strerror(rc));
		goto fail;
	}
	f->started = true;
	return f;
fail:
	cp_follow_stop(f);
	return NULL;
}

int
cp_follow_fd(const struct cp_follow *f)
{
	return f->efd;
}

void
cp_follow_serve(struct cp_follow *f, struct cp_ctx *c)
{
	uint64_t v;

	if (f == NULL)
		return;
	(void)!read(f->efd, &v, sizeof(v));
	pthread_mutex_lock(&f->mu);
	struct cp_state_read *rd = f->rd;

	f->rd = NULL;
	pthread_mutex_unlock(&f->mu);
	if (rd == NULL)
		return;
	cp_state_apply(c->st, rd);
	LOG_NOTICE("state read again after an admin change (here or elsewhere): events=%u keys=%u "
		   "rules=%u forward=%u",
		c->st->n_ev, c->st->n_keys, c->st->n_rules,
		(unsigned)c->st->limits.event_forward_per_s);
	if (c->st->events_dropped) {
		cp_state_publish_event_set(c->st, c->links);
		return;
	}
	cp_state_publish_events(c->st, c->links);
	cp_state_publish_keys(c->st, c->links);
	cp_state_publish_rules(c->st, c->links);
	cp_state_publish_limits(c->st, c->links);
	cp_state_publish_fair(c->st, c->links);
}

void
cp_follow_counters(struct cp_follow *f, struct cp_follow_counters *out)
{
	if (f == NULL) {
		memset(out, 0, sizeof(*out));
		return;
	}
	pthread_mutex_lock(&f->mu);
	*out = f->cnt;
	pthread_mutex_unlock(&f->mu);
}

void
cp_follow_stop(struct cp_follow *f)
{
	if (f == NULL)
		return;
	if (f->started) {
		uint64_t one = 1;

		pthread_mutex_lock(&f->mu);
		f->stop = true;
		pthread_mutex_unlock(&f->mu);
		(void)!write(f->wake, &one, sizeof(one));
		pthread_join(f->thread, NULL);
	}
	cp_state_read_free(f->rd);
	pg_conn_close(f->pg);
	store_close(f->rs);
	if (f->efd >= 0)
		close(f->efd);
	if (f->wake >= 0)
		close(f->wake);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_slow.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "admin/admin_proto.h"
#include "controlplane/admin_conns.h"
#include "common/log.h"
#include "common/now.h"

struct slow_req {
	uint64_t ticket;
	struct admin_conns_peer peer; /* who sent it, for the audit log */
	char line[ADMIN_LINE_MAX + 1];
	char *out; /* the answer, once run */
	int n;
};

struct cp_slow {
	struct cp_ctx *loop; /* the loop's context */
	struct cp_ctx wc;    /* the worker's */
	int (*exec)(struct cp_ctx *c, const char *line, char *out, size_t cap);
	int efd;
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a request queued, a loop call run, stop */
	bool stop;
	/* The requests waiting, in order (the first one runs), and those finished. */
	struct slow_req *todo[CP_SLOW_QUEUE];
	unsigned todo_head, n_todo;
	struct slow_req *done[CP_SLOW_QUEUE];
	unsigned n_done;
	/* The worker's call on the loop: at most one at a time (one worker). */
	cp_slow_loop_fn call_fn;
	void *call_arg;
	bool call_done;
	bool exited;
};

static void
notify_loop(struct cp_slow *s)
{
	uint64_t one = 1;

	if (write(s->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		LOG_RL(LOG_LEVEL_WARN, 10000, "slow jobs: eventfd: %s", strerror(errno));
}

static void *
worker(void *arg)
{
	struct cp_slow *s = arg;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->stop && s->n_todo == 0)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->n_todo == 0)
			break;
		struct slow_req *r = s->todo[s->todo_head];

		pthread_mutex_unlock(&s->mu);
		r->out = malloc(ADMIN_CONNS_ANSWER_MAX);
		/* The audit log names the peer of the command running on this thread. */
		admin_conns_set_current_peer(&r->peer);
		r->n = r->out != NULL ? s->exec(&s->wc, r->line, r->out, ADMIN_CONNS_ANSWER_MAX)
				      : -ENOMEM;
		admin_conns_set_current_peer(NULL);
		/* The line may hold a secret (keys auth-set on an old client's command line). */
		explicit_bzero(r->line, sizeof(r->line));
		pthread_mutex_lock(&s->mu);
		s->todo_head = (s->todo_head + 1) % CP_SLOW_QUEUE;
		s->n_todo--;
		s->done[s->n_done++] = r;
		notify_loop(s);
	}
	s->exited = true;
	pthread_mutex_unlock(&s->mu);
	notify_loop(s);
	return NULL;
}

struct cp_slow *
cp_slow_create(struct cp_ctx *loop, const char *pg_conninfo, const struct store_conn_config *rsc,
	int (*exec)(struct cp_ctx *c, const char *line, char *out, size_t cap), char *err,
	size_t errlen)
{
	struct cp_slow *s = calloc(1, sizeof(*s));
	int rc;

	if (s == NULL) {
		snprintf(err, errlen, "slow jobs: out of memory");
		return NULL;
	}
	s->efd = -1;
	s->loop = loop;
	s->exec = exec;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->wc = *loop;
	s->wc.loop = loop;
	s->wc.slow = s;
	/* Connected now: the first command does not wait for it. */
	s->wc.pg = pg_conn_open_named(pg_conninfo, "flashgate-cp admin", err, errlen);
	if (s->wc.pg == NULL || (s->wc.rs = store_open(rsc, err, errlen)) == NULL)
		goto fail;
	s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->efd < 0) {
		snprintf(err, errlen, "slow jobs: eventfd: %s", strerror(errno));
		goto fail;
	}
	if ((rc = pthread_create(&s->thread, NULL, worker, s)) != 0) {
		snprintf(err, errlen, "slow jobs: cannot start the thread: %s", strerror(rc));
		goto fail;
	}
	s->started = true;
	return s;
fail:
	cp_slow_destroy(s, 0);
	return NULL;
}

int
cp_slow_fd(const struct cp_slow *s)
{
	return s->efd;
}

int
cp_slow_submit(struct cp_slow *s, uint64_t ticket, const char *line)
{
	struct slow_req *r;

	pthread_mutex_lock(&s->mu);
	bool full = s->n_todo + s->n_done >= CP_SLOW_QUEUE;

	pthread_mutex_unlock(&s->mu);
	if (full || (r = calloc(1, sizeof(*r))) == NULL)
		return -EBUSY;
	r->ticket = ticket;
	admin_conns_current_peer(&r->peer);
	snprintf(r->line, sizeof(r->line), "%s", line);
	pthread_mutex_lock(&s->mu);
	s->todo[(s->todo_head + s->n_todo) % CP_SLOW_QUEUE] = r;
	s->n_todo++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

unsigned
cp_slow_pending(const struct cp_slow *s)
{
	struct cp_slow *m = (struct cp_slow *)s;

	pthread_mutex_lock(&m->mu);
	unsigned n = s->n_todo + s->n_done;

	pthread_mutex_unlock(&m->mu);
	return n;
}

/* On the loop: the worker's waiting call, if any. Called with s->mu held. */
static void
run_call(struct cp_slow *s)
{
	if (s->call_fn == NULL || s->call_done)
		return;
	cp_slow_loop_fn fn = s->call_fn;
	void *arg = s->call_arg;

	pthread_mutex_unlock(&s->mu);
	fn(s->loop, arg);
	pthread_mutex_lock(&s->mu);
	s->call_done = true;
	pthread_cond_broadcast(&s->cv);
}

void
cp_slow_wait(struct cp_slow *s, unsigned max_us)
{
	uint64_t until = now_mono_us() + max_us;

	for (;;) {
		pthread_mutex_lock(&s->mu);
		run_call(s);
		bool over = s->n_done > 0 || s->n_todo == 0;

		pthread_mutex_unlock(&s->mu);
		if (over || now_mono_us() >= until)
			return;
		/* Spins rather than yields: a yielding loop on a loaded host may wait for a time
		 * slice far longer than the command takes. */
		for (uint64_t t = now_mono_us() + 20; now_mono_us() < t;)
			;
	}
}

void
cp_slow_serve(struct cp_slow *s, cp_slow_done_fn done, void *arg)
{
	struct slow_req *fin[CP_SLOW_QUEUE];
	unsigned n;
	uint64_t v;

	if (s == NULL)
		return;
	(void)!read(s->efd, &v, sizeof(v));
	pthread_mutex_lock(&s->mu);
	run_call(s);
	n = s->n_done;
	memcpy(fin, s->done, n * sizeof(*fin));
	s->n_done = 0;
	pthread_mutex_unlock(&s->mu);
	for (unsigned i = 0; i < n; i++) {
		if (done != NULL)
			done(arg, fin[i]->ticket, fin[i]->out, fin[i]->n);
		else
			free(fin[i]->out);
		free(fin[i]);
	}
}

void
cp_slow_on_loop(struct cp_ctx *c, cp_slow_loop_fn fn, void *arg)
{
	struct cp_slow *s = c->slow;

	if (c->loop == NULL || s == NULL) {
		fn(c, arg);
		return;
	}
	pthread_mutex_lock(&s->mu);
	s->call_fn = fn;
	s->call_arg = arg;
	s->call_done = false;
	notify_loop(s);
	while (!s->call_done)
		pthread_cond_wait(&s->cv, &s->mu);
	s->call_fn = NULL;
	pthread_mutex_unlock(&s->mu);
}

void
cp_slow_destroy(struct cp_slow *s, unsigned wait_ms)
{
	if (s == NULL)
		return;
	if (s->started) {
		uint64_t until = now_mono_ms() + wait_ms;
		bool exited;

		pthread_mutex_lock(&s->mu);
		s->stop = true;
		/* What waits is dropped; what runs finishes (its loop calls served here). */
		while (s->n_todo > 1) {
			unsigned last = (s->todo_head + s->n_todo - 1) % CP_SLOW_QUEUE;

			explicit_bzero(s->todo[last]->line, sizeof(s->todo[last]->line));
			free(s->todo[last]);
			s->n_todo--;
		}
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		for (;;) {
			pthread_mutex_lock(&s->mu);
			run_call(s);
			exited = s->exited;
			pthread_mutex_unlock(&s->mu);
			if (exited || now_mono_ms() >= until)
				break;
			usleep(1000);
		}
		if (!exited) {
			/* Still waiting on PostgreSQL: left to the process's exit, with its memory. */
			LOG_WARN("slow jobs: an admin command still waits on PostgreSQL; not waiting "
				 "for it");
			return;
		}
		pthread_join(s->thread, NULL);
		cp_slow_serve(s, NULL, NULL);
	}
	pg_conn_close(s->wc.pg);
	store_close(s->wc.rs);
	if (s->efd >= 0)
		close(s->efd);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_conns.h"

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/now.h"
#include "admin/admin_answer.h"
#include "admin/admin_proto.h"

/* One client: reading its request line (out == NULL), then writing its answer. */
struct admin_conn {
	int fd;	   /* -1: a free slot */
	pid_t pid; /* the client's, from SO_PEERCRED (0: unknown), for the log */
	int64_t uid; /* its user, from SO_PEERCRED (-1: unknown), for the audit log */
	uint64_t deadline_ms;
	size_t have; /* bytes of line read */
	bool pending; /* its request runs elsewhere (ADMIN_CONNS_PENDING) */
	uint32_t gen; /* which connection of this slot: a ticket's upper half */
	char *out;   /* the answer, once executed */
	size_t out_len, out_off;
	char line[ADMIN_LINE_MAX + 1];
};

struct admin_conns {
	int lfd;
	unsigned deadline_ms;
	admin_conns_exec_fn exec;
	void *arg;
	struct admin_conns_counters cnt;
	uint32_t gen;	 /* the last connection's */
	uint64_t ticket; /* of the request conn_execute() runs */
	struct admin_conn conn[ADMIN_CONNS_MAX];
};

/* The peer whose request the exec callback runs on this thread (admin_conns_current_peer()). */
static _Thread_local struct admin_conns_peer current_peer = {.uid = -1};

void
admin_conns_current_peer(struct admin_conns_peer *out)
{
	*out = current_peer;
}

void
admin_conns_set_current_peer(const struct admin_conns_peer *peer)
{
	current_peer = peer != NULL ? *peer : (struct admin_conns_peer){.uid = -1};
}

struct admin_conns *
admin_conns_create(int listen_fd, unsigned deadline_ms, admin_conns_exec_fn exec, void *arg)
{
	struct admin_conns *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->lfd = listen_fd;
	t->deadline_ms = deadline_ms;
	t->exec = exec;
	t->arg = arg;
	for (unsigned i = 0; i < ADMIN_CONNS_MAX; i++)
		t->conn[i].fd = -1;
	return t;
}

static void
conn_close(struct admin_conns *t, struct admin_conn *k)
{
	close(k->fd);
	free(k->out);
	explicit_bzero(k->line, sizeof(k->line));
	k->fd = -1;
	k->out = NULL;
	t->cnt.open--;
}

void
admin_conns_destroy(struct admin_conns *t)
{
	if (t == NULL)
		return;
	for (unsigned i = 0; i < ADMIN_CONNS_MAX; i++)
		if (t->conn[i].fd >= 0)
			conn_close(t, &t->conn[i]);
	free(t);
}

unsigned
admin_conns_pollitems(const struct admin_conns *t, zmq_pollitem_t *items, unsigned cap)
{
	unsigned n = 0;

	if (cap == 0)
		return 0;
	items[n++] = (zmq_pollitem_t){.fd = t->lfd, .events = ZMQ_POLLIN};
	for (unsigned i = 0; i < ADMIN_CONNS_MAX && n < cap; i++) {
		const struct admin_conn *k = &t->conn[i];

		if (k->fd >= 0 && !k->pending)
			items[n++] = (zmq_pollitem_t){
				.fd = k->fd, .events = k->out != NULL ? ZMQ_POLLOUT : ZMQ_POLLIN};
	}
	return n;
}

/*
 * Writes what the socket takes of k's answer. Closes k when it is all written or the client
 * went away; otherwise the loop polls for room.
 */
static void
conn_write(struct admin_conns *t, struct admin_conn *k)
{
	while (k->out_off < k->out_len) {
		ssize_t w = send(k->fd, k->out + k->out_off, k->out_len - k->out_off,
			MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w > 0) {
			k->out_off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		t->cnt.client_gone++;
		LOG_DEBUG("admin: client pid %d went away after %zu of its answer's %zu bytes",
			(int)k->pid, k->out_off, k->out_len);
		break;
	}
	conn_close(t, k);
}

/* Sets k's answer (out, n bytes: takes out) and writes what the socket takes at once. */
static void
conn_answer(struct admin_conns *t, struct admin_conn *k, char *out, int n)
{
	if (n <= 0) {
		free(out);
		conn_close(t, k);
		return;
	}
	if (strncmp(out, "{\"ok\":false", 11) == 0)
		t->cnt.refused++;
	/* Most answers are short: give the rest of the buffer back while the client reads. */
	char *fit = realloc(out, (size_t)n);

	k->out = fit != NULL ? fit : out;
	k->out_len = (size_t)n;
	k->out_off = 0;
	conn_write(t, k);
}

/* Answers k with the error msg (not a request that ran). */
static void
conn_refuse(struct admin_conns *t, struct admin_conn *k, const char *msg)
{
	char *out = malloc(ADMIN_ERR_MAX + 64);

	if (out == NULL) {
		conn_close(t, k);
		return;
	}
	conn_answer(t, k, out, admin_answer_error(out, ADMIN_ERR_MAX + 64, msg));
}

/* Runs k's complete request line (its '\n' replaced by a NUL) and starts its answer. */
static void
conn_execute(struct admin_conns *t, struct admin_conn *k)
{
	char *out = malloc(ADMIN_CONNS_ANSWER_MAX);

	if (out == NULL) {
		LOG_WARN("admin: out of memory for an answer; closing the client's connection");
		conn_close(t, k);
		return;
	}
	t->cnt.requests++;
	uint64_t started_us = now_mono_us();
	current_peer = (struct admin_conns_peer){.uid = k->uid, .pid = k->pid};
	t->ticket = (uint64_t)k->gen << 32 | (uint64_t)(k - t->conn);
	int len = t->exec(t->arg, k->line, out, ADMIN_CONNS_ANSWER_MAX);

	current_peer = (struct admin_conns_peer){.uid = -1};
	if (len == ADMIN_CONNS_PENDING) {
		free(out);
		explicit_bzero(k->line, sizeof(k->line));
		k->pending = true;
		return;
	}

	/* The deadline is the client's: the time the command itself ran is not counted. */
	k->deadline_ms += (now_mono_us() - started_us) / 1000;
	/* The line may hold a secret (keys auth-set on an old client's command line). */
	explicit_bzero(k->line, sizeof(k->line));
	conn_answer(t, k, out, len);
}

/* Reads what k's client sent; runs its request once the line is complete. */
static void
conn_read(struct admin_conns *t, struct admin_conn *k)
{
	for (;;) {
		ssize_t r = recv(k->fd, k->line + k->have, ADMIN_LINE_MAX - k->have, MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r < 0) {
			t->cnt.client_gone++;
			conn_close(t, k);
			return;
		}
		if (r == 0) {
			/* The client ended its side without a newline: say so, as it may read. */
			t->cnt.requests++;
			conn_refuse(t, k,
				k->have == 0 ? "empty request: send one command line ended by a "
					       "newline"
					     : "incomplete request: end it with a newline");
			return;
		}
		char *nl = memchr(k->line + k->have, '\n', (size_t)r);

		k->have += (size_t)r;
		if (nl != NULL) {
			/* A NUL would end the line early: "event show 1\0 junk" must not run
			 * as "event show 1". Refused as admin_parse() refuses a control byte. */
			const char *nul = memchr(k->line, '\0', (size_t)(nl - k->line));
			char msg[96];

			*nl = '\0';
			if (nul == NULL) {
				conn_execute(t, k);
				return;
			}
			t->cnt.requests++;
			snprintf(msg, sizeof(msg),
				"request has a control character (byte 0x00 at column %zu)",
				(size_t)(nul - k->line) + 1);
			explicit_bzero(k->line, sizeof(k->line));
			conn_refuse(t, k, msg);
			return;
		}
		if (k->have >= ADMIN_LINE_MAX) {
			t->cnt.requests++;
			t->cnt.too_long++;
			LOG_WARN("admin: client pid %d sent a request line longer than %d bytes: "
				 "refused and closed",
				(int)k->pid, ADMIN_LINE_MAX);
			conn_refuse(t, k,
				"request line too long (at most 4096 bytes with its newline)");
			return;
		}
	}
}

/* Takes every waiting connection; one that finds the table full gets a short "busy" answer. */
static void
conns_accept(struct admin_conns *t, uint64_t now_ms)
{
	for (;;) {
		int fd = accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		t->cnt.accepted++;
		struct ucred cred = {0};
		socklen_t cl = sizeof(cred);

		(void)getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl);

		struct admin_conn *k = NULL;

		for (unsigned i = 0; i < ADMIN_CONNS_MAX && k == NULL; i++)
			if (t->conn[i].fd < 0)
				k = &t->conn[i];
		if (k == NULL) {
			char why[96], msg[160];

			snprintf(why, sizeof(why), "busy: %u admin connections are open; try again",
				ADMIN_CONNS_MAX);
			int n = admin_answer_error(msg, sizeof(msg), why);

			t->cnt.busy++;
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"admin: %u connections are open: refused client pid %d (busy)",
				ADMIN_CONNS_MAX, (int)cred.pid);
			if (n > 0)
				(void)send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		*k = (struct admin_conn){
			.fd = fd,
			.pid = cred.pid,
			.uid = cl == sizeof(cred) && cred.pid != 0 ? (int64_t)cred.uid : -1,
			.deadline_ms = now_ms + t->deadline_ms,
			.gen = ++t->gen};
		t->cnt.open++;
	}
}

/* Closes the connections past their deadline, each with one log line that says where it was. */
static void
conns_expire(struct admin_conns *t, uint64_t now_ms)
{
	for (unsigned i = 0; i < ADMIN_CONNS_MAX; i++) {
		struct admin_conn *k = &t->conn[i];

		if (k->fd < 0 || k->pending || now_ms < k->deadline_ms)
			continue;
		t->cnt.timed_out++;
		if (k->out == NULL)
			LOG_WARN("admin: client pid %d did not send a whole request line within "
				 "%u ms (%zu bytes came): closed",
				(int)k->pid, t->deadline_ms, k->have);
		else
			LOG_WARN("admin: client pid %d did not read its answer within %u ms (%zu "
				 "of %zu bytes taken): closed",
				(int)k->pid, t->deadline_ms, k->out_off, k->out_len);
		conn_close(t, k);
	}
}

void
admin_conns_serve(struct admin_conns *t, const zmq_pollitem_t *items, unsigned n, uint64_t now_ms)
{
	bool listen_ready = false;

	for (unsigned i = 0; i < n; i++) {
		if (items[i].revents == 0)
			continue;
		if (items[i].fd == t->lfd) {
			listen_ready = true;
			continue;
		}
		for (unsigned c = 0; c < ADMIN_CONNS_MAX; c++) {
			struct admin_conn *k = &t->conn[c];

			if (k->fd != items[i].fd)
				continue;
			if (k->out != NULL)
				conn_write(t, k);
			else
				conn_read(t, k);
			break;
		}
	}
	if (listen_ready)
		conns_accept(t, now_ms);
	conns_expire(t, now_ms);
}

uint64_t
admin_conns_ticket(const struct admin_conns *t)
{
	return t->ticket;
}

void
admin_conns_complete(struct admin_conns *t, uint64_t ticket, char *out, int n, uint64_t now_ms)
{
	uint32_t slot = (uint32_t)ticket;
	struct admin_conn *k = slot < ADMIN_CONNS_MAX ? &t->conn[slot] : NULL;

	if (k == NULL || k->fd < 0 || !k->pending || k->gen != (uint32_t)(ticket >> 32)) {
		free(out);
		return;
	}
	k->pending = false;
	k->deadline_ms = now_ms + t->deadline_ms;
	conn_answer(t, k, out, n);
}

uint64_t
admin_conns_deadline(const struct admin_conns *t)
{
	uint64_t d = UINT64_MAX;

	for (unsigned i = 0; i < ADMIN_CONNS_MAX; i++)
		if (t->conn[i].fd >= 0 && !t->conn[i].pending && t->conn[i].deadline_ms < d)
			d = t->conn[i].deadline_ms;
	return d;
}

void
admin_conns_get_counters(const struct admin_conns *t, struct admin_conns_counters *out)
{
	*out = t->cnt;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin socket's connection table (controlplane/admin_conns.h) on a real Unix socket, its
 * clock given by the test: several clients at once, each request split over several writes; a
 * client that never reads a large answer and one that never ends its line, both closed at the
 * deadline and never in the way of the others; a line over ADMIN_LINE_MAX; a connection past
 * ADMIN_CONNS_MAX; a client that leaves before its answer. The executor answers {"ok":true,
 * "echo":LINE}, or, for "big", an answer larger than a socket buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "controlplane/admin_conns.h"
#include "controlplane/admin_server.h"
#include "tests/tap.h"

#define BIG (240 * 1024)

static unsigned executed;
static struct admin_conns *pending_t; /* "later": answered by admin_conns_complete() */
static uint64_t pending_ticket;
static bool pending_held;

static int
exec_echo(void *arg, const char *line, char *out, size_t cap)
{
	(void)arg;
	executed++;
	if (strcmp(line, "later") == 0) {
		/* Handed elsewhere (the slow-job thread): answered by ticket. */
		pending_ticket = admin_conns_ticket(pending_t);
		pending_held = true;
		return ADMIN_CONNS_PENDING;
	}
	if (strcmp(line, "big") == 0) {
		memset(out, 'x', BIG);
		out[BIG - 1] = '\n';
		return BIG;
	}
	return snprintf(out, cap, "{\"ok\":%s,\"echo\":\"%s\"}\n",
		strcmp(line, "bad") == 0 ? "false" : "true", line);
}

static struct sockaddr_un sa = {.sun_family = AF_UNIX};

static int
client(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		perror("connect");
		exit(1);
	}
	return fd;
}

/* One round of the control plane's loop at time now_ms: poll (not waiting), then serve. */
static void
round_at(struct admin_conns *t, uint64_t now_ms)
{
	zmq_pollitem_t items[ADMIN_CONNS_POLLITEMS];
	unsigned n = admin_conns_pollitems(t, items, ADMIN_CONNS_POLLITEMS);

	zmq_poll(items, (int)n, 0);
	admin_conns_serve(t, items, n, now_ms);
}

/* Rounds until fd has a whole line to read (or 2000 rounds); returns it in buf. */
static bool
answer_of(struct admin_conns *t, int fd, uint64_t now_ms, char *buf, size_t cap)
{
	size_t have = 0;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 2000 && have + 1 < cap; i++) {
		round_at(t, now_ms);
		ssize_t r = read(fd, buf + have, cap - 1 - have);

		if (r > 0) {
			have += (size_t)r;
			buf[have] = '\0';
			if (memchr(buf, '\n', have) != NULL)
				return true;
		} else if (r == 0) {
			break;
		} else {
			usleep(1000);
		}
	}
	buf[have] = '\0';
	return false;
}

/*
 * Whether the control plane closed fd, seen without reading it (reading would take the answer
 * that a client that never reads leaves waiting): the hang-up of the other end.
 */
static bool
closed_by_server(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP)) != 0;
}

int
main(void)
{
	char dir[] = "/tmp/fg-admin-conn.XXXXXX", err[256], buf[512];
	struct admin_conns_counters cnt;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/admin.sock", dir);
	int lfd = admin_server_listen(sa.sun_path, err, sizeof(err));
	struct admin_conns *t = admin_conns_create(lfd, 5000, exec_echo, NULL);

	if (lfd < 0 || t == NULL) {
		printf("Bail out! %s\n", err);
		return 1;
	}
	uint64_t now = 1000000;

	pending_t = t;

	/* The slow ones first: they hold their connections all along. */
	int never = client(), trickle = client();

	tap_ok(write(never, "big\n", 4) == 4, "a client asks for %d bytes and never reads", BIG);
	tap_ok(write(trickle, "ev", 2) == 2, "a client sends the start of a line and no more");
	round_at(t, now);
	round_at(t, now);
	admin_conns_get_counters(t, &cnt);
	tap_ok(cnt.open == 2 && executed == 1, "both are open; the big answer is made (open %u)",
		cnt.open);

	/* Several clients at once, each line in pieces, answered while the slow ones wait. */
	int fds[8];
	bool all = true;

	for (int i = 0; i < 8; i++) {
		fds[i] = client();
		if (write(fds[i], "hel", 3) != 3)
			all = false;
	}
	round_at(t, now);
	for (int i = 0; i < 8; i++)
		if (write(fds[i], "lo\n", 3) != 3)
			all = false;
	for (int i = 0; i < 8; i++) {
		all = all && answer_of(t, fds[i], now, buf, sizeof(buf)) &&
		      strcmp(buf, "{\"ok\":true,\"echo\":\"hello\"}\n") == 0;
		close(fds[i]);
	}
	tap_ok(all, "8 clients at once, each line in two pieces: each answered");
	round_at(t, now);
	admin_conns_get_counters(t, &cnt);
	tap_ok(cnt.open == 2, "the answered ones are closed; the two slow ones stay (open %u)",
		cnt.open);
	tap_ok(!closed_by_server(never) && !closed_by_server(trickle),
		"the slow clients are still connected before their deadline");

	/* A refusal is counted as one. */
	int bad = client();

	tap_ok(write(bad, "bad\n", 4) == 4 && answer_of(t, bad, now, buf, sizeof(buf)) &&
			strncmp(buf, "{\"ok\":false", 11) == 0,
		"a refused request is answered");
	close(bad);

	/* A NUL inside the line: refused, not run as the line up to it. */
	int nul = client();
	unsigned ran = executed;

	tap_ok(write(nul, "stats\0 junk\n", 12) == 12 && answer_of(t, nul, now, buf, sizeof(buf)) &&
			strstr(buf, "\"ok\":false") != NULL &&
			strstr(buf, "control character (byte 0x00 at column 6)") != NULL &&
			executed == ran,
		"a line with a NUL is refused, not run as the line before it: %s", buf);
	close(nul);

	/* A line over ADMIN_LINE_MAX: an error answer, then closed. */
	int lng = client();
	char line[ADMIN_LINE_MAX + 16];

	memset(line, 'a', sizeof(line));
	tap_ok(write(lng, line, sizeof(line)) == (ssize_t)sizeof(line) &&
			answer_of(t, lng, now, buf, sizeof(buf)) &&
			strstr(buf, "request line too long") != NULL,
		"a line over %d bytes: request line too long", ADMIN_LINE_MAX);
	tap_ok(closed_by_server(lng), "... and the connection is closed");
	close(lng);

	/* A client that leaves before reading its large answer. */
	int gone = client();

	tap_ok(write(gone, "big\n", 4) == 4, "a client asks for the big answer and leaves");
	round_at(t, now);
	close(gone);
	for (int i = 0; i < 5; i++)
		round_at(t, now);

	/* ADMIN_CONNS_MAX open: one more is told busy at once. */
	int many[ADMIN_CONNS_MAX];

	for (int i = 0; i < ADMIN_CONNS_MAX - 2; i++)
		many[i] = client();
	round_at(t, now);
	int extra = client();

	tap_ok(answer_of(t, extra, now, buf, sizeof(buf)) && strstr(buf, "busy") != NULL,
		"connection %d while %d are open: busy", ADMIN_CONNS_MAX + 1, ADMIN_CONNS_MAX);
	close(extra);
	all = true;
	for (int i = 0; i < ADMIN_CONNS_MAX - 2; i++) {
		all = all && write(many[i], "hello\n", 6) == 6 &&
		      answer_of(t, many[i], now, buf, sizeof(buf)) && strstr(buf, "hello") != NULL;
		close(many[i]);
	}
	tap_ok(all, "the %d that were open are answered", ADMIN_CONNS_MAX - 2);

	/* The deadline: just before it nothing is cut; at it both slow ones are. */
	tap_ok(admin_conns_deadline(t) == now + 5000, "the earliest deadline is 5000 ms after");
	round_at(t, now + 4999);
	tap_ok(!closed_by_server(never) && !closed_by_server(trickle),
		"1 ms before the deadline the slow clients are still connected");
	round_at(t, now + 5000);
	tap_ok(closed_by_server(never), "at the deadline the client that never read is closed");
	tap_ok(closed_by_server(trickle), "at the deadline the client that never ended its line is "
					  "closed");
	/* A request answered later (ADMIN_CONNS_PENDING): no answer, no deadline, until
	 * admin_conns_complete(); a stale ticket is ignored. */
	int later = client();

	now += 5000;
	round_at(t, now); /* accepted: its deadline 5000 ms from now */
	tap_ok(write(later, "later\n", 6) == 6 && !answer_of(t, later, now + 6000, buf, 8) &&
		       pending_held && buf[0] == '\0',
		"a request handed elsewhere gets no answer meanwhile");
	tap_ok(!closed_by_server(later), "... and is not closed at its deadline (it waits for the "
					 "command, not for the client)");
	admin_conns_complete(t, pending_ticket ^ (1ull << 32), strdup("{\"ok\":false}\n"), 13,
		now);
	round_at(t, now);
	fcntl(later, F_SETFL, O_NONBLOCK);
	tap_ok(read(later, buf, sizeof(buf)) < 0, "an answer with another connection's ticket is "
						  "dropped");
	char *ans = strdup("{\"ok\":true,\"late\":1}\n");

	admin_conns_complete(t, pending_ticket, ans, (int)strlen(ans), now);
	tap_ok(answer_of(t, later, now, buf, sizeof(buf)) && strstr(buf, "late") != NULL,
		"admin_conns_complete() with its ticket answers it (%s)", buf);
	close(later);
	round_at(t, now);

	admin_conns_get_counters(t, &cnt);
	tap_ok(cnt.timed_out == 2, "timed_out 2 (got %" PRIu64 ")", cnt.timed_out);
	tap_ok(cnt.too_long == 1, "too_long 1 (got %" PRIu64 ")", cnt.too_long);
	tap_ok(cnt.busy == 1, "busy 1 (got %" PRIu64 ")", cnt.busy);
	tap_ok(cnt.client_gone == 1, "client_gone 1 (got %" PRIu64 ")", cnt.client_gone);
	tap_ok(cnt.refused == 3,
		"refused 3: the bad request, the NUL and the long line (got %" PRIu64 ")",
		cnt.refused);
	tap_ok(cnt.open == 0 && admin_conns_deadline(t) == UINT64_MAX,
		"nothing is open, no deadline (open %u)", cnt.open);
	close(never);
	close(trickle);
	admin_conns_destroy(t);
	close(lfd);
	unlink(sa.sun_path);
	rmdir(dir);
	return tap_done();
}

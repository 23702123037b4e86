/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common/sdnotify: what systemd's notify socket receives. The test plays systemd: a datagram
 * socket named by $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID as a unit with
 * WatchdogSec=1s sets them.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/un.h>

#include "common/sdnotify.h"
#include "tests/tap.h"

static int sock = -1;

/* The next datagram on the socket into buf ("" when none is waiting). */
static const char *
next_msg(char *buf, size_t cap)
{
	ssize_t n = recv(sock, buf, cap - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

int
main(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[256], pid[32];

	/* Outside systemd: nothing is sent, nothing fails. */
	unsetenv("NOTIFY_SOCKET");
	sdnotify_ready("nowhere");
	sdnotify_stopping(NULL);
	tap_ok(1, "without $NOTIFY_SOCKET every call does nothing");

	/* An abstract socket ("@name", as systemd allows): no file to clean up. */
	char name[64];
	int len = snprintf(name, sizeof(name), "fg-sdnotify-test-%ld", (long)getpid());

	memcpy(sa.sun_path + 1, name, (size_t)len);
	sock = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (sock < 0 || bind(sock, (struct sockaddr *)&sa,
				(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) != 0) {
		perror("notify socket");
		return 2;
	}
	snprintf(buf, sizeof(buf), "@%s", name);
	setenv("NOTIFY_SOCKET", buf, 1);
	setenv("WATCHDOG_USEC", "1000000", 1);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	setenv("WATCHDOG_PID", pid, 1);

	sdnotify_ready("deciding");
	tap_ok(strcmp(next_msg(buf, sizeof(buf)), "READY=1\nSTATUS=deciding") == 0,
		"ready: READY=1 with its STATUS (got \"%s\")", buf);
	sdnotify_watchdog(10000);
	tap_ok(strcmp(next_msg(buf, sizeof(buf)), "WATCHDOG=1") == 0,
		"the first turn of the loop: WATCHDOG=1 (got \"%s\")", buf);
	sdnotify_watchdog(10499);
	tap_ok(strcmp(next_msg(buf, sizeof(buf)), "") == 0,
		"499 ms later, under half of WatchdogSec=1s: nothing (got \"%s\")", buf);
	sdnotify_watchdog(10500);
	tap_ok(strcmp(next_msg(buf, sizeof(buf)), "WATCHDOG=1") == 0,
		"500 ms later: WATCHDOG=1 again (got \"%s\")", buf);
	sdnotify_stopping(NULL);
	tap_ok(strcmp(next_msg(buf, sizeof(buf)), "STOPPING=1") == 0,
		"stopping: STOPPING=1 (got \"%s\")", buf);
	sdnotify_stopping("handing over");
	tap_ok(strcmp(next_msg(buf, sizeof(buf)), "STOPPING=1\nSTATUS=handing over") == 0,
		"stopping with a status (got \"%s\")", buf);
	close(sock);
	return tap_done();
}

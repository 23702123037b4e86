/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/sdnotify.h"

#include <stdbool.h>
#include <stdio.h>

#include <systemd/sd-daemon.h>

/* Process-wide, as the environment it is read from: the watchdog's half period in ms (0: none)
 * and when the next WATCHDOG=1 is due. Only the main loop's thread calls sdnotify_watchdog(). */
static struct {
	bool read;
	uint64_t half_ms;
	uint64_t next_ms;
} wd;

static void
notify_with_status(const char *state, const char *status)
{
	if (status == NULL)
		sd_notify(0, state);
	else
		sd_notifyf(0, "%s\nSTATUS=%s", state, status);
}

void
sdnotify_ready(const char *status)
{
	notify_with_status("READY=1", status);
}

void
sdnotify_stopping(const char *status)
{
	notify_with_status("STOPPING=1", status);
}

void
sdnotify_watchdog(uint64_t now_mono_ms)
{
	if (!wd.read) {
		uint64_t usec = 0;

		/* 0 unsets nothing: the variables stay for the threads and children we start. */
		if (sd_watchdog_enabled(0, &usec) > 0)
			wd.half_ms = usec / 2000 > 0 ? usec / 2000 : 1;
		wd.read = true;
	}
	if (wd.half_ms == 0 || now_mono_ms < wd.next_ms)
		return;
	sd_notify(0, "WATCHDOG=1");
	wd.next_ms = now_mono_ms + wd.half_ms;
}

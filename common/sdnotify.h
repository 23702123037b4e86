/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_SDNOTIFY_H
#define FG_COMMON_SDNOTIFY_H
/*
 * The daemons' side of systemd's Type=notify (sd_notify(3), through libsystemd): READY=1
 * once a daemon serves, STOPPING=1 when it begins to stop, WATCHDOG=1 from its main loop
 * while WatchdogSec= is set. Outside systemd (no $NOTIFY_SOCKET) every call does nothing, so
 * the programs run the same from a shell, a test or a unit. Slow path only; none can fail in
 * a way the caller must handle (a lost notification is systemd's timeout to see).
 */
#include <stdint.h>

/* READY=1 with STATUS=status (one line, may be NULL): the unit's start is complete. */
void sdnotify_ready(const char *status);

/* STOPPING=1 with STATUS=status (may be NULL): the daemon has begun its stop. */
void sdnotify_stopping(const char *status);

/*
 * WATCHDOG=1, at most once per half of the unit's WatchdogSec= (read once from
 * $WATCHDOG_USEC); call it from every turn of the main loop with the monotonic time in
 * milliseconds (common/now.h now_mono_ms()). Does nothing when no watchdog is set.
 */
void sdnotify_watchdog(uint64_t now_mono_ms);

#endif

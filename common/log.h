/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_LOG_H
#define FG_COMMON_LOG_H
/*
 * Logging for every flashgate program: one line per message on stderr,
 *
 *   2026-11-29T14:30:00.123Z flashgate-dataplane[4242] warn: message
 *
 * written with a single write(2) so that lines from several threads never
 * interleave. Slow path only: a worker lcore never logs per packet; it counts,
 * and the counters are logged from the slow path.
 *
 * The LOG_* names are the ones <syslog.h> also defines: do not include both
 * in one file.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum log_level {
	LOG_LEVEL_ERR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_NOTICE,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/* The most verbose level that is written; the default is LOG_LEVEL_INFO. */
extern _Atomic int log_level_current;

/* Sets the most verbose level that is written. Out-of-range values are clamped. */
void log_set_level(enum log_level level);

/* Returns the most verbose level that is written. */
enum log_level log_get_level(void);

/*
 * Parses "err", "warn", "notice", "info" or "debug" into *out.
 * Returns 0, or -EINVAL (and leaves *out alone) for any other string or NULL.
 */
int log_parse_level(const char *name, enum log_level *out);

/* The name log_parse_level() accepts for level ("err" ... "debug"), or "?". */
const char *log_level_name(enum log_level level);

/*
 * Sets the program name written before "[pid]" on each line; it is copied
 * (at most 63 bytes). NULL restores the default, the executable's name.
 * Call it once at start, before other threads log.
 */
void log_set_program(const char *name);

/*
 * Replaces the monotonic millisecond clock that LOG_RL() uses to measure its
 * intervals; NULL restores the real clock. Tests use it so that they never
 * depend on how fast they run.
 */
void log_set_clock(uint64_t (*now_ms)(void));

/* True when a message of this level would be written. */
static inline bool
log_enabled(enum log_level level)
{
	return (int)level <= atomic_load_explicit(&log_level_current, memory_order_relaxed);
}

/*
 * Writes one line at the given level, printf-style, if the level is enabled.
 * Control characters in the message are written as \xNN so that a logged
 * string cannot forge a line; a message longer than about 1000 bytes is cut
 * and ends with "...". Thread safe; never fails (a failed write is ignored).
 */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* log_msg() with a va_list. */
void log_vmsg(enum log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * log_msg() for LOG_RL(): when suppressed is not 0, the line ends with
 * " (N similar suppressed)".
 */
void log_msg_suppressed(enum log_level level, uint64_t suppressed, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* State of one LOG_RL() call site; zero-initialised, lock free. */
struct log_rl {
	_Atomic uint64_t next_ms;    /* clock value at which the next line may be written */
	_Atomic uint64_t suppressed; /* lines dropped since the last one written */
};

/*
 * Decides whether a rate-limited call site may write now: true at most once
 * per interval_ms; *suppressed then receives how many calls were dropped since
 * the last line written. A false return counts the call as suppressed.
 */
bool log_rl_allow(struct log_rl *rl, uint64_t interval_ms, uint64_t *suppressed);

#define LOG_AT(level, ...)                             \
	do {                                           \
		if (log_enabled(level))                \
			log_msg((level), __VA_ARGS__); \
	} while (0)

/* The arguments are not evaluated when the level is disabled. */
#define LOG_ERR(...)	LOG_AT(LOG_LEVEL_ERR, __VA_ARGS__)
#define LOG_WARN(...)	LOG_AT(LOG_LEVEL_WARN, __VA_ARGS__)
#define LOG_NOTICE(...) LOG_AT(LOG_LEVEL_NOTICE, __VA_ARGS__)
#define LOG_INFO(...)	LOG_AT(LOG_LEVEL_INFO, __VA_ARGS__)
#define LOG_DEBUG(...)	LOG_AT(LOG_LEVEL_DEBUG, __VA_ARGS__)

/*
 * At most one line per interval_ms from this call site, for slow paths that
 * an attacker may trigger often (a bad control message, a full ring). The line
 * written after a quiet spell says how many were suppressed.
 */
#define LOG_RL(level, interval_ms, ...)                                                  \
	do {                                                                             \
		static struct log_rl log_rl_site_;                                       \
		uint64_t log_rl_suppressed_;                                             \
		if (log_enabled(level) &&                                                \
			log_rl_allow(&log_rl_site_, (interval_ms), &log_rl_suppressed_)) \
			log_msg_suppressed((level), log_rl_suppressed_, __VA_ARGS__);    \
	} while (0)

#endif

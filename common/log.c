/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_LINE_MAX	1024
#define LOG_PROGRAM_MAX 64

_Atomic int log_level_current = LOG_LEVEL_INFO;

static const char *const log_level_names[] = {
	[LOG_LEVEL_ERR] = "err",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_NOTICE] = "notice",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

#define LOG_N_LEVELS (sizeof(log_level_names) / sizeof(log_level_names[0]))

/* Empty: use program_invocation_short_name, which is only known at run time. */
static char log_program[LOG_PROGRAM_MAX];

static uint64_t (*log_clock)(void);

void
log_set_level(enum log_level level)
{
	int l = (int)level;

	if (l < LOG_LEVEL_ERR)
		l = LOG_LEVEL_ERR;
	if (l > LOG_LEVEL_DEBUG)
		l = LOG_LEVEL_DEBUG;
	atomic_store_explicit(&log_level_current, l, memory_order_relaxed);
}

enum log_level
log_get_level(void)
{
	return (enum log_level)atomic_load_explicit(&log_level_current, memory_order_relaxed);
}

int
log_parse_level(const char *name, enum log_level *out)
{
	if (name == NULL)
		return -EINVAL;
	for (unsigned i = 0; i < LOG_N_LEVELS; i++) {
		if (strcmp(name, log_level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
log_level_name(enum log_level level)
{
	if ((unsigned)level >= LOG_N_LEVELS)
		return "?";
	return log_level_names[level];
}

void
log_set_program(const char *name)
{
	if (name == NULL) {
		log_program[0] = '\0';
		return;
	}
	snprintf(log_program, sizeof(log_program), "%s", name);
}

void
log_set_clock(uint64_t (*now_ms)(void))
{
	log_clock = now_ms;
}

static uint64_t
log_now_ms(void)
{
	struct timespec ts;

	if (log_clock != NULL)
		return log_clock();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Appends s to buf at *len, escaping control bytes; stops (without overflow) at cap. */
static void
log_append_escaped(char *buf, size_t *len, size_t cap, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t l = *len;

	for (size_t i = 0; i < n && l < cap; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c != 0x7f) {
			buf[l++] = (char)c;
			continue;
		}
		if (l + 4 > cap) {
			l = cap;
			break;
		}
		buf[l++] = '\\';
		buf[l++] = 'x';
		buf[l++] = hex[c >> 4];
		buf[l++] = hex[c & 0xf];
	}
	*len = l;
}

static void
log_write_all(const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* nowhere left to report it */
		buf += n;
		len -= (size_t)n;
	}
}

static void
log_emit(enum log_level level, uint64_t suppressed, const char *fmt, va_list ap)
{
	/* Room for the "..." and the newline is kept outside the text area. */
	char line[LOG_LINE_MAX + 8];
	char text[LOG_LINE_MAX];
	size_t cap = LOG_LINE_MAX;
	struct timespec ts;
	struct tm tm;
	size_t len;
	int n;
	int saved_errno = errno; /* callers may log strerror(errno) and then test errno */

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, cap,
		"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%ld] %s: ", tm.tm_year + 1900,
		tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000L,
		log_program[0] != '\0' ? log_program : program_invocation_short_name,
		(long)getpid(), log_level_name(level));
	len = n < 0 ? 0 : ((size_t)n < cap ? (size_t)n : cap - 1);

	n = vsnprintf(text, sizeof(text), fmt, ap);
	if (n < 0)
		n = 0;
	size_t tlen = (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1;
	int cut = (size_t)n >= sizeof(text);

	log_append_escaped(line, &len, cap, text, tlen);
	if (suppressed != 0 && len < cap) {
		char tail[48];
		int m = snprintf(tail, sizeof(tail), " (%llu similar suppressed)",
			(unsigned long long)suppressed);

		if (m > 0 && len + (size_t)m <= cap) {
			memcpy(line + len, tail, (size_t)m);
			len += (size_t)m;
		} else {
			cut = 1;
		}
	}
	if (cut || len >= cap) {
		memcpy(line + len, "...", 3);
		len += 3;
	}
	line[len++] = '\n';
	log_write_all(line, len);
	errno = saved_errno;
}

void
log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	if (!log_enabled(level))
		return;
	log_emit(level, 0, fmt, ap);
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	log_emit(level, 0, fmt, ap);
	va_end(ap);
}

void
log_msg_suppressed(enum log_level level, uint64_t suppressed, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	log_emit(level, suppressed, fmt, ap);
	va_end(ap);
}

bool
log_rl_allow(struct log_rl *rl, uint64_t interval_ms, uint64_t *suppressed)
{
	uint64_t now = log_now_ms();
	uint64_t next = atomic_load_explicit(&rl->next_ms, memory_order_relaxed);

	/*
	 * next_ms starts at 0, so the first call always writes. Of the threads
	 * that see the window open, only the one that moves it on writes.
	 */
	if (now < next || !atomic_compare_exchange_strong(&rl->next_ms, &next, now + interval_ms)) {
		atomic_fetch_add_explicit(&rl->suppressed, 1, memory_order_relaxed);
		return false;
	}
	*suppressed = atomic_exchange_explicit(&rl->suppressed, 0, memory_order_relaxed);
	return true;
}

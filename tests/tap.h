/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_TAP_H
#define FG_TESTS_TAP_H
/*
 * A minimal TAP producer for flashgate's C tests. Each check prints one
 * "ok N - name" or "not ok N - name" line; tap_done() prints the plan and
 * returns the process exit code (non-zero when any check failed).
 * scripts/test counts these lines, so every check is one counted test.
 */
#include <stdarg.h>
#include <stdio.h>

static int tap_n;
static int tap_failed;

/*
 * Prints a check's description on the one line TAP allows: a newline in it (a message, a usage
 * text) is written as a backslash and an n, so that no line of it reaches the TAP reader as a
 * line of its own.
 */
static inline void
tap_vprint_line(const char *fmt, va_list ap)
{
	char buf[4096];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (const char *p = buf; *p != '\0'; p++) {
		if (*p == '\n')
			fputs("\\n", stdout);
		else
			putchar(*p);
	}
}

static inline int __attribute__((format(printf, 2, 3)))
tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	tap_vprint_line(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

/* A check not run here (the machine lacks what it needs): "ok N - name # SKIP reason", which
 * TAP counts as skipped, so that what went untested shows in the test's summary. */
static inline void __attribute__((format(printf, 2, 3)))
tap_skip(const char *reason, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("ok %d - ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", reason);
	fflush(stdout);
}

/* A diagnostic line; TAP consumers show it but do not count it. */
static inline void __attribute__((format(printf, 1, 2)))
tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Prints the plan; returns 0 when every check passed, 1 otherwise. */
static inline int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/* Checks got == want, showing both; each argument is evaluated once. */
static inline int
tap_eq_int(long long got, long long want, const char *name)
{
	return tap_ok(got == want, "%s (got %lld, want %lld)", name, got, want);
}

#endif

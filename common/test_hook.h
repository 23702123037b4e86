/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_TEST_HOOK_H
#define FG_COMMON_TEST_HOOK_H
/*
 * The tests' timing hooks: an environment variable holding a number of milliseconds that a
 * program waits at one place (documented where each is used; unset in production).
 */
#include <stdbool.h>
#include <stdlib.h>

/* The longest wait a hook may ask for. */
#define TEST_HOOK_MS_MAX 60000u

/* Whether the hook env is set (not empty); its milliseconds, capped at TEST_HOOK_MS_MAX, into
 * *ms (0 when unset). The caller says in its log that the hook is on. */
static inline bool
test_hook_ms(const char *env, unsigned *ms)
{
	const char *s = getenv(env);
	unsigned long v;

	*ms = 0;
	if (s == NULL || *s == '\0')
		return false;
	v = strtoul(s, NULL, 10);
	*ms = v > TEST_HOOK_MS_MAX ? TEST_HOOK_MS_MAX : (unsigned)v;
	return true;
}

#endif

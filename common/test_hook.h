/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_TEST_HOOK_H
#define FG_COMMON_TEST_HOOK_H
/*
 * The tests' hooks: an environment variable holding a number, the milliseconds a program waits
 * at one place or what it acts on (a rank, a user), documented where each is used; unset in
 * production.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* The longest wait a hook may ask for. */
#define TEST_HOOK_MS_MAX 60000u

/* Whether the hook env is set (not empty); its number (decimal) into *v (0 when unset). The
 * caller says in its log that the hook is on. */
static inline bool
test_hook_u64(const char *env, uint64_t *v)
{
	const char *s = getenv(env);

	*v = 0;
	if (s == NULL || *s == '\0')
		return false;
	*v = strtoull(s, NULL, 10);
	return true;
}

/* test_hook_u64() of a wait: its milliseconds, capped at TEST_HOOK_MS_MAX, into *ms. */
static inline bool
test_hook_ms(const char *env, unsigned *ms)
{
	uint64_t v;
	bool set = test_hook_u64(env, &v);

	*ms = v > TEST_HOOK_MS_MAX ? TEST_HOOK_MS_MAX : (unsigned)v;
	return set;
}

#endif

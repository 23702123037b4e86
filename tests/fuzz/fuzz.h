/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_FUZZ_H
#define FG_TESTS_FUZZ_H
/*
 * What the libFuzzer targets of tests/fuzz/ share (docs/testing.md). A target aborts through
 * FUZZ_CHECK() when a result breaks the contract of the code under test, so the fuzzer reports
 * logic errors as crashes too, with the input that caused them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void __attribute__((noreturn, cold)) fuzz_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "fuzz: %s:%d: check failed: %s\n", file, line, what);
	abort();
}

#define FUZZ_CHECK(cond)                                      \
	do {                                                  \
		if (!(cond))                                  \
			fuzz_fail(#cond, __FILE__, __LINE__); \
	} while (0)

/* An exact-size heap copy of the input, so that AddressSanitizer flags a read of copy[size]. */
static inline char *
fuzz_copy(const uint8_t *data, size_t size)
{
	char *p = malloc(size ? size : 1);

	if (p == NULL)
		abort();
	if (size)
		memcpy(p, data, size);
	return p;
}

/* The input as a C string (size + 1 bytes, the last a NUL); a NUL inside ends it early. */
static inline char *
fuzz_cstr(const uint8_t *data, size_t size)
{
	char *p = malloc(size + 1);

	if (p == NULL)
		abort();
	if (size)
		memcpy(p, data, size);
	p[size] = '\0';
	return p;
}

#endif

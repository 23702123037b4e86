/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_FUZZ_KEYS_H
#define FG_TESTS_FUZZ_KEYS_H
/*
 * The keys of the token target (fuzz_token.c) and of the seeds made with them (make_seeds.c):
 * the seed tokens in corpus/token/ verify under these keys, so the fuzzer starts from authentic
 * tokens. Key ids at both ends of their range.
 */
#include <stdint.h>

#define FUZZ_EVENT 7u	       /* the event the target verifies purchase tokens and receipts for */
#define FUZZ_NOW_S 1796112000u /* 2026-12-01T08:00:00Z: tokens expiring later are valid */

struct fuzz_key {
	uint32_t kid;
	const char *secret; /* 32 bytes */
};

/* The shop's auth keys (session tokens); the first one mints. */
static const struct fuzz_key fuzz_auth_keys[] = {
	{1, "fuzz auth key one, 32 bytes long"},
	{4294967295u, "fuzz auth key two, 32 bytes long"},
};

/* The sale keys (purchase tokens, receipts, reserve paths); the first one mints. */
static const struct fuzz_key fuzz_sale_keys[] = {
	{0, "fuzz sale key one, 32 bytes long"},
	{42, "fuzz sale key two, 32 bytes long"},
};

#define FUZZ_N_KEYS	2 /* in each ring */
#define FUZZ_SECRET_LEN 32

#endif

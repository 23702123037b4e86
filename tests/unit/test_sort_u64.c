/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common/sort_u64.h against a reference: records of 8, 16, 24 and 40 bytes with the key at
 * each place it can be, keys spread over every byte, over a few low bytes only (the passes that
 * are skipped), and with many equal keys (stability: equal keys keep their order), for sizes
 * around the edges (0, 1, 2, 255, 256, 257) and larger; the bad arguments refused untouched.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/sort_u64.h"
#include "tests/lib/rng.h"
#include "tests/tap.h"

#define WORDS_MAX 5

struct rec {
	uint64_t w[WORDS_MAX]; /* the key in one word, the record's first place in w[last] */
};

/* The reference order: by key, then by first place (what a stable sort keeps). */
static size_t ref_key;
static int
cmp_ref(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->w[ref_key] != y->w[ref_key])
		return x->w[ref_key] < y->w[ref_key] ? -1 : 1;
	return x->w[WORDS_MAX - 1] < y->w[WORDS_MAX - 1] ? -1 : 1;
}

/*
 * n records of words words (key in word key, place in the last word), keys drawn by kind
 * (0: 64 random bits, 1: only the low 20 bits, 2: one of 7 values), sorted by sort_u64 and by
 * the reference. Whether the two agree.
 */
static bool
agrees(size_t n, unsigned words, unsigned key, int kind, uint64_t *rng)
{
	size_t size = words * 8;
	unsigned char *a = malloc(n * size + 1);
	struct rec *r = calloc(n + 1, sizeof(*r));
	bool ok = a != NULL && r != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		uint64_t k = rng_splitmix64(rng);

		k = kind == 0 ? k : kind == 1 ? k & 0xfffff : k % 7 * UINT64_C(0x0101010101010101);
		for (unsigned w = 0; w < words; w++)
			r[i].w[w] = w == key ? k : rng_splitmix64(rng);
		r[i].w[WORDS_MAX - 1] = i;
		if (words - 1 != key)
			r[i].w[words - 1] = i; /* the place, where the sorted copy carries it */
		memcpy(a + i * size, r[i].w, size);
	}
	ok = ok && sort_u64(a, n, size, key * 8) == 0;
	ref_key = key;
	if (ok)
		qsort(r, n, sizeof(*r), cmp_ref);
	for (size_t i = 0; ok && i < n; i++) {
		uint64_t got[WORDS_MAX];

		memcpy(got, a + i * size, size);
		ok = got[key] == r[i].w[key] &&
		     (words - 1 == key || got[words - 1] == r[i].w[WORDS_MAX - 1]);
	}
	free(a);
	free(r);
	return ok;
}

int
main(void)
{
	static const size_t sizes[] = {0, 1, 2, 255, 256, 257, 5000, 100000};
	static const unsigned shapes[][2] = {{1, 0}, {2, 0}, {2, 1}, {3, 0}, {3, 1}, {5, 2}};
	uint64_t rng = 42;

	for (unsigned s = 0; s < 6; s++)
		for (int kind = 0; kind < 3; kind++) {
			bool ok = true;

			for (unsigned z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
				ok = ok && agrees(sizes[z], shapes[s][0], shapes[s][1], kind, &rng);
			tap_ok(ok,
				"%u-byte records, key at byte %u, %s: sorted as the reference, "
				"equal keys in their order (0..100000 records)",
				shapes[s][0] * 8, shapes[s][1] * 8,
				kind == 0   ? "64 random bits"
				: kind == 1 ? "20 low bits"
					    : "7 values");
		}
	uint64_t v[3] = {3, 1, 2}, w[3] = {3, 1, 2};

	tap_ok(sort_u64(v, 3, 12, 0) == -EINVAL && sort_u64(v, 3, 4, 0) == -EINVAL &&
			sort_u64(v, 3, 72, 0) == -EINVAL && memcmp(v, w, sizeof(v)) == 0,
		"a record size that is not 8..64 in steps of 8 is refused, nothing moved");
	tap_ok(sort_u64(v, 3, 16, 9) == -EINVAL && sort_u64(v, 1, 16, 16) == -EINVAL &&
			memcmp(v, w, sizeof(v)) == 0,
		"a key not inside the record is refused, nothing moved");
	tap_ok(sort_u64(v, 3, 8, 0) == 0 && v[0] == 1 && v[1] == 2 && v[2] == 3,
		"plain 64-bit numbers sort");
	uint64_t big[2] = {UINT64_MAX, 0};

	tap_ok(sort_u64(big, 2, 8, 0) == 0 && big[0] == 0 && big[1] == UINT64_MAX,
		"keys compare unsigned (2^64-1 last)");
	return tap_done();
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/sort_u64.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t
key_at(const unsigned char *rec, size_t key_off)
{
	uint64_t k;

	memcpy(&k, rec + key_off, sizeof(k));
	return k;
}

/* One record moved: the draw's sizes with a constant length (inlined), others by size. */
static inline void
move(unsigned char *dst, const unsigned char *src, size_t size)
{
	switch (size) {
	case 16:
		memcpy(dst, src, 16);
		break;
	case 24:
		memcpy(dst, src, 24);
		break;
	default:
		memcpy(dst, src, size);
	}
}

int
sort_u64(void *base, size_t n, size_t size, size_t key_off)
{
	size_t(*count)[256];
	unsigned char *a = base, *b;

	if (size < 8 || size > 64 || size % 8 != 0 || key_off > size - 8)
		return -EINVAL;
	if (n < 2)
		return 0;
	if (n > SIZE_MAX / size)
		return -ENOMEM;
	count = calloc(8, sizeof(*count));
	b = malloc(n * size);
	if (count == NULL || b == NULL) {
		free(count);
		free(b);
		return -ENOMEM;
	}
	/* Every pass's histogram in one read of the records. */
	for (size_t i = 0; i < n; i++) {
		uint64_t k = key_at(a + i * size, key_off);

		for (unsigned p = 0; p < 8; p++)
			count[p][(k >> (8 * p)) & 0xff]++;
	}
	for (unsigned p = 0; p < 8; p++) {
		size_t at = 0;
		unsigned char *t;

		/* All records share this byte: the pass would move nothing. */
		if (count[p][(key_at(a, key_off) >> (8 * p)) & 0xff] == n)
			continue;
		for (unsigned d = 0; d < 256; d++) {
			size_t c = count[p][d];

			count[p][d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++) {
			const unsigned char *r = a + i * size;

			move(b + count[p][(key_at(r, key_off) >> (8 * p)) & 0xff]++ * size, r,
				size);
		}
		t = a;
		a = b;
		b = t;
	}
	/* After an odd number of passes the sorted records are in the second buffer. */
	if (a != base) {
		memcpy(base, a, n * size);
		b = a;
	}
	free(b);
	free(count);
	return 0;
}

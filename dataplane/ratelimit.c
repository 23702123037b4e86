/* SPDX-License-Identifier: BSD-3-Clause */
/* Set-up side of the token-bucket tables; the per-request code is in ratelimit.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_random.h>

#include "dataplane/mapped_alloc.h"
#include "dataplane/ratelimit.h"

size_t
rl_table_mem_size(unsigned log2_entries)
{
	return sizeof(struct rl_table) +
	       ((size_t)1 << log2_entries) / RL_WAYS * sizeof(struct rl_set);
}

struct rl_table *
rl_table_create(unsigned log2_entries, int socket)
{
	struct rl_table *t;

	if (log2_entries < RL_LOG2_MIN || log2_entries > RL_LOG2_MAX)
		return NULL;
	t = dp_zmalloc_mapped(
		"rl_table", rl_table_mem_size(log2_entries), RTE_CACHE_LINE_SIZE, socket);
	if (t == NULL)
		return NULL;
	t->log2_entries = log2_entries;
	t->set_mask = ((uint64_t)1 << log2_entries) / RL_WAYS - 1;
	/* Random keys: which keys share a set, and which device ids share a key, differ per table
	 * and per run, so neither can be aimed at from outside. */
	t->seed = rte_rand();
	t->bytes_key.k0 = rte_rand();
	t->bytes_key.k1 = rte_rand();
	t->epoch_ms = RL_EPOCH_UNSET;
	return t;
}

void
rl_table_free(struct rl_table *t)
{
	rte_free(t);
}

void
rl_table_reset(struct rl_table *t)
{
	memset(t->sets, 0, ((size_t)t->set_mask + 1) * sizeof(struct rl_set));
	t->epoch_ms = RL_EPOCH_UNSET;
	t->inserts = 0;
	t->recycled = 0;
	t->moved = 0;
	t->evictions = 0;
}

struct rl_entry *
rl_make_room_slow(
	struct rl_table *t, uint64_t s1, uint64_t s2, uint64_t now, uint32_t rate, uint64_t cap)
{
	const uint64_t cand[2] = {s1, s2};
	struct rl_entry *lru = NULL;

	for (unsigned c = 0; c < 2; c++) {
		for (unsigned i = 0; i < RL_WAYS; i++) {
			struct rl_entry *x = &t->sets[cand[c]].way[i];
			uint64_t a, b;
			unsigned n;

			rl_sets_of(t, x->key, &a, &b);
			struct rl_entry *dst =
				rl_set_room(&t->sets[a == cand[c] ? b : a], now, rate, cap, &n);

			if (dst != NULL) {
				/* One cuckoo step: first eviction at ~75% load, not ~45%. */
				if (dst->state != 0)
					t->recycled++;
				*dst = *x;
				t->moved++;
				return x;
			}
			if (lru == NULL ||
				(x->state >> RL_TOKEN_BITS) < (lru->state >> RL_TOKEN_BITS))
				lru = x;
		}
	}
	t->evictions++;
	return lru;
}

void
rl_table_rebase_slow(struct rl_table *t, uint64_t now_ms)
{
	memset(t->sets, 0, ((size_t)t->set_mask + 1) * sizeof(struct rl_set));
	t->epoch_ms = now_ms;
}

int
rl_params_check(const struct rl_params *p, char *err, size_t errlen)
{
	if (p->rate != 0 && p->burst > RL_BURST_MAX) {
		snprintf(err, errlen,
			"burst %u is above %u, the most a per-client bucket holds; lower it "
			"(a burst is how many requests a client may send at once)",
			p->burst, RL_BURST_MAX);
		return -EINVAL;
	}
	return 0;
}

/* total / n with the remainder spread over the lowest indexes; at least 1 when total is not 0. */
static uint32_t
share(uint32_t total, unsigned n, unsigned index)
{
	uint32_t s = total / n + (index % n < total % n ? 1 : 0);

	return total != 0 && s == 0 ? 1 : s;
}

struct rl_params
rl_params_split(const struct rl_params *total, unsigned n_workers, unsigned index)
{
	struct rl_params p = {0, 0};
	unsigned n = n_workers != 0 ? n_workers : 1;

	if (total->rate == 0)
		return p;
	p.rate = share(total->rate, n, index);
	p.burst = share(total->burst != 0 ? total->burst : total->rate, n, index);
	return p;
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/conn_table.h"

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "common/mix64.h"
#include "dataplane/mapped_alloc.h"

/* Slots clients are counted in for cap entries: CONN_CLIENT_SLOTS, or the index's when more. */
static uint32_t
conn_client_slots(uint32_t cap)
{
	uint32_t n = CONN_CLIENT_SLOTS;

	while (n < 2 * cap)
		n <<= 1;
	return n;
}

/* Index slots for cap entries: at least twice as many, a power of two. */
static uint32_t
conn_slots(uint32_t cap)
{
	uint32_t n = 2;

	while (n < 2 * cap)
		n <<= 1;
	return n;
}

size_t
conn_table_mem_size(uint32_t cap)
{
	return sizeof(struct conn_table) + (size_t)conn_slots(cap) * sizeof(uint32_t) +
	       (size_t)conn_client_slots(cap) * sizeof(uint16_t) + (size_t)cap * sizeof(uint32_t) +
	       (size_t)cap * sizeof(struct conn);
}

struct conn_table *
conn_table_create(uint32_t cap, int socket)
{
	struct conn_table *t;

	if (cap == 0 || cap > CONN_TABLE_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	t = rte_zmalloc_socket("conn_table", sizeof(*t), RTE_CACHE_LINE_SIZE, socket);
	if (t == NULL)
		goto fail;
	t->cap = cap;
	t->mask = conn_slots(cap) - 1;
	t->seed = (uint32_t)rte_rdtsc();
	t->slot = dp_zmalloc_mapped("conn_slot", (size_t)(t->mask + 1) * sizeof(uint32_t),
		RTE_CACHE_LINE_SIZE, socket);
	t->free = rte_malloc_socket("conn_free", (size_t)cap * sizeof(uint32_t), 0, socket);
	t->e = dp_zmalloc_mapped("conn_entries", (size_t)cap * sizeof(struct conn),
		RTE_CACHE_LINE_SIZE, socket);
	t->pc_mask = conn_client_slots(cap) - 1;
	t->per_client = dp_zmalloc_mapped("conn_per_client",
		(size_t)(t->pc_mask + 1) * sizeof(uint16_t), RTE_CACHE_LINE_SIZE, socket);
	if (t->slot == NULL || t->free == NULL || t->e == NULL || t->per_client == NULL)
		goto fail;
	/* Entry 0 on top: a lightly used table stays in few cache lines. */
	for (uint32_t i = 0; i < cap; i++)
		t->free[i] = cap - 1 - i;
	t->n_free = cap;
	return t;
fail:
	conn_table_free(t);
	rte_errno = ENOMEM;
	return NULL;
}

void
conn_table_free(struct conn_table *t)
{
	if (t == NULL)
		return;
	rte_free(t->slot);
	rte_free(t->free);
	rte_free(t->e);
	rte_free(t->per_client);
	rte_free(t);
}

struct conn *
conn_insert(struct conn_table *t, uint32_t src_ip, uint16_t src_port, uint16_t dst_port)
{
	if (t->n_free == 0)
		return NULL;

	uint32_t n = t->free[--t->n_free];
	struct conn *c = &t->e[n];
	uint32_t i = conn_hash(t, src_ip, src_port, dst_port);

	/* At most half the slots are in use: an empty one is near. */
	while (t->slot[i] != 0)
		i = (i + 1) & t->mask;
	t->slot[i] = n + 1;
	uint32_t gen = c->gen;

	/* The answer's bytes need no clearing: ans_len says what is held. */
	memset(c, 0, offsetof(struct conn, ans));
	c->gen = gen + 1;
	c->src_ip = src_ip;
	c->src_port = src_port;
	c->dst_port = dst_port;
	c->state = CONN_ESTABLISHED;
	t->used++;
	return c;
}

void
conn_remove(struct conn_table *t, struct conn *c)
{
	uint32_t n = (uint32_t)(c - t->e);
	uint32_t i = conn_hash(t, c->src_ip, c->src_port, c->dst_port);

	while (t->slot[i] != n + 1)
		i = (i + 1) & t->mask;
	/* Backward shift (Knuth 6.4, algorithm R): every later entry of the run whose home slot
	 * is not cyclically in (i, j] moves into the hole, so lookups never meet a gap. */
	for (uint32_t j = (i + 1) & t->mask;; j = (j + 1) & t->mask) {
		uint32_t s = t->slot[j];

		if (s == 0)
			break;
		const struct conn *o = &t->e[s - 1];
		uint32_t home = conn_hash(t, o->src_ip, o->src_port, o->dst_port);

		if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
			t->slot[i] = s;
			i = j;
		}
	}
	t->slot[i] = 0;
	if (c->client_slot != 0) {
		t->per_client[c->client_slot - 1]--;
		c->client_slot = 0;
	}
	c->src_ip = 0;
	c->state = CONN_FREE;
	c->ans_len = 0;
	t->free[t->n_free++] = n;
	t->used--;
}

bool
conn_client_take(struct conn_table *t, struct conn *c, const struct edge_client *cl, uint32_t max)
{
	uint64_t k;

	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (cl->family == 4) {
		k = cl->ip4;
	} else if (cl->family == 6 && memcmp(cl->ip6, mapped, sizeof(mapped)) == 0) {
		uint32_t v4;

		memcpy(&v4, cl->ip6 + 12, 4); /* ::ffff:a.b.c.d is the IPv4 client a.b.c.d */
		k = v4;
	} else if (cl->family == 6) {
		/* An IPv6 client is its /64, as for the per-IP limit: one host has them all. */
		memcpy(&k, cl->ip6, 8);
		k ^= UINT64_C(1) << 63;
	} else {
		return true;
	}
	/* Every bit of the key into the slot's bits (MurmurHash3's 64-bit finalizer). */
	k = fg_mix64(k ^ ((uint64_t)t->seed << 32 | t->seed));

	uint32_t i = (uint32_t)k & t->pc_mask;

	if (t->per_client[i] >= max)
		return false;
	t->per_client[i]++;
	c->client_slot = i + 1;
	return true;
}

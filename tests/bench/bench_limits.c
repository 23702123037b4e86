/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark of rate limits and risk rules on one core: cycles per rl_take() (hit, insert, with
 * and without prefetch), the load at which a table first evicts a hot entry, rule lookups for
 * 16 to 100k rules against the alternatives (rte_hash for users and devices, rte_lpm for single
 * addresses), build times and memory. Prints figures; the TAP checks only assert that answers
 * were right, never a time. FG_BENCH_QUICK=1 runs a short pass.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lpm.h>
#include <rte_malloc.h>

#include "dataplane/ratelimit.h"
#include "dataplane/rules.h"
#include "tests/lib/eal_rundir.h"
#include "tests/lib/rng.h"
#include "tests/tap.h"

#define T0 UINT64_C(1700000000000)

static unsigned scale = 1; /* FG_BENCH_QUICK divides the work by 16 */
static volatile uint64_t sink;
static double tsc_ghz;

static uint64_t rng = 0xbe4c4;

/* splitmix64 (tests/lib/rng.h) from this file's seed. */
static uint64_t
rnd(void)
{
	return rng_splitmix64(&rng);
}

static void
report(const char *what, uint64_t cycles, uint64_t ops, bool right)
{
	double c = (double)cycles / (double)ops;

	tap_ok(right, "%-58s %7.1f cycles %6.1f ns", what, c, c / tsc_ghz);
}

/* rl_take() on n_keys hot keys of a table of 2^log2 entries, in random order. */
static void
bench_take(unsigned log2, unsigned n_keys, bool prefetch)
{
	const struct rl_params p = {.rate = 1000000, .burst = 4000}; /* never refuses here */
	struct rl_table *t = rl_table_create(log2, SOCKET_ID_ANY);
	unsigned n_ops = (1u << 22) / scale;
	uint64_t *keys = malloc(sizeof(*keys) * n_keys);
	uint32_t *order = malloc(sizeof(*order) * n_ops);
	unsigned refused = 0;
	char what[128];

	for (unsigned i = 0; i < n_keys; i++) {
		keys[i] = rnd();
		rl_take(t, keys[i], &p, T0, NULL);
	}
	for (unsigned i = 0; i < n_ops; i++)
		order[i] = (uint32_t)(rnd() % n_keys);
	uint64_t c0 = rte_rdtsc();

	if (prefetch) {
		/* As a worker would: prefetch a burst of 32, then take for each. */
		for (unsigned i = 0; i + 32 <= n_ops; i += 32) {
			for (unsigned j = 0; j < 32; j++)
				rl_prefetch(t, keys[order[i + j]]);
			for (unsigned j = 0; j < 32; j++)
				refused += !rl_take(t, keys[order[i + j]], &p, T0 + i / 1024, NULL);
		}
	} else {
		for (unsigned i = 0; i < n_ops; i++)
			refused += !rl_take(t, keys[order[i]], &p, T0 + i / 1024, NULL);
	}
	uint64_t c1 = rte_rdtsc();

	snprintf(what, sizeof(what), "rl_take hit, %u keys in 2^%u entries%s", n_keys, log2,
		prefetch ? ", prefetched x32" : "");
	report(what, c1 - c0, n_ops & ~31u, refused == 0 && t->evictions == 0);
	rl_table_free(t);
	free(keys);
	free(order);
}

static void
bench_insert(void)
{
	const struct rl_params p = {.rate = 1, .burst = 5};
	const unsigned log2 = 20, n = (1u << 19) / scale;
	struct rl_table *t = rl_table_create(log2, SOCKET_ID_ANY);
	uint64_t c0 = rte_rdtsc();

	for (unsigned i = 0; i < n; i++)
		rl_take(t, rnd(), &p, T0, NULL);
	uint64_t c1 = rte_rdtsc();

	report("rl_take insert (new key), filling 2^20 entries to 50%", c1 - c0, n,
		t->inserts == n && t->evictions == 0);
	tap_diag("  moved %" PRIu64 " hot entries to their other set on the way", t->moved);
	rl_table_free(t);
}

static void
bench_bucket_and_key(void)
{
	const struct rl_params p = {.rate = 1000000, .burst = 1000000};
	const unsigned n = (1u << 24) / scale;
	struct rl_bucket b;
	struct rl_table *t = rl_table_create(RL_LOG2_MIN, SOCKET_ID_ANY);
	const char *uuid = "3f2b8c1e-9d4a-4e6b-8f0c-2a7d5e9b1c44";
	unsigned ok = 0;
	uint64_t c0, c1, acc = 0;

	rl_bucket_init(&b);
	c0 = rte_rdtsc();
	for (unsigned i = 0; i < n; i++)
		ok += rl_bucket_take(&b, &p, T0 + i / 1000, NULL);
	c1 = rte_rdtsc();
	report("rl_bucket_take (forward budget)", c1 - c0, n, ok == n);
	c0 = rte_rdtsc();
	for (unsigned i = 0; i < n; i++)
		acc += rl_key_bytes(t, uuid, 36 - (i & 1));
	c1 = rte_rdtsc();
	sink = acc;
	report("rl_key_bytes of a 36-byte device id (SipHash)", c1 - c0, n, true);
	rl_table_free(t);
}

/* Inserts random hot keys until the first eviction; returns the load at that point. */
static double
first_eviction_load(unsigned log2)
{
	const struct rl_params p = {.rate = 1, .burst = 5};
	struct rl_table *t = rl_table_create(log2, SOCKET_ID_ANY);
	uint64_t n = 0;

	while (t->evictions == 0 && n < (UINT64_C(1) << log2)) {
		rl_take(t, rnd(), &p, T0, NULL);
		n++;
	}
	rl_table_free(t);
	return (double)(n - 1) / (double)(UINT64_C(1) << log2);
}

static void
bench_eviction_load(void)
{
	static const unsigned sizes[] = {12, 16, 20};

	for (size_t s = 0; s < RTE_DIM(sizes); s++) {
		double lo = 1, hi = 0;
		unsigned runs = sizes[s] >= 20 ? (scale > 1 ? 1 : 3) : 8;

		for (unsigned r = 0; r < runs; r++) {
			double l = first_eviction_load(sizes[s]);

			lo = RTE_MIN(lo, l);
			hi = RTE_MAX(hi, l);
		}
		tap_ok(lo > 0.5,
			"2^%u entries: first eviction of a hot entry at %.1f%%..%.1f%% load "
			"(%u runs)",
			sizes[s], 100 * lo, 100 * hi, runs);
	}
}

/* Users: the sorted array of rules.h against rte_hash, half of the probes hits. */
static void
bench_users(unsigned n)
{
	struct rule_spec *s = calloc(n, sizeof(*s));
	uint64_t *ids = malloc(sizeof(*ids) * n);
	const unsigned n_ops = (1u << 22) / scale;
	uint64_t *probe = malloc(sizeof(*probe) * n_ops);
	char err[256], name[32], what[128];
	unsigned hits_a = 0, hits_b = 0;

	for (unsigned i = 0; i < n; i++) {
		ids[i] = 1 + rnd() % INT64_MAX;
		s[i] = (struct rule_spec){.kind = RULE_BLOCK_USER, .user = ids[i]};
	}
	for (unsigned i = 0; i < n_ops; i++)
		probe[i] = i & 1 ? ids[rnd() % n] : 1 + rnd() % INT64_MAX;
	struct rules *r = rules_build(s, n, SOCKET_ID_ANY, err, sizeof(err));

	snprintf(name, sizeof(name), "bench_u%u", n);
	struct rte_hash_parameters hp = {.name = name,
		.entries = RTE_MAX(2 * n, 16u),
		.key_len = sizeof(uint64_t),
		.hash_func = rte_hash_crc,
		.socket_id = SOCKET_ID_ANY,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE};
	struct rte_hash *h = rte_hash_create(&hp);

	for (unsigned i = 0; i < n; i++)
		rte_hash_add_key(h, &ids[i]);
	uint64_t c0 = rte_rdtsc();

	for (unsigned i = 0; i < n_ops; i++)
		hits_a += rules_block_user(r, probe[i]);
	uint64_t c1 = rte_rdtsc();

	for (unsigned i = 0; i < n_ops; i++)
		hits_b += rte_hash_lookup(h, &probe[i]) >= 0;
	uint64_t c2 = rte_rdtsc();

	snprintf(what, sizeof(what), "users, %6u rules: sorted array (rules_block_user)", n);
	report(what, c1 - c0, n_ops, hits_a == hits_b && hits_a >= n_ops / 2);
	snprintf(what, sizeof(what), "users, %6u rules: rte_hash (the alternative)", n);
	report(what, c2 - c1, n_ops, true);
	tap_diag("  memory: sorted array %zu KiB; rte_hash %s", (size_t)n * 8 / 1024,
		"allocates buckets, key store and free-slot ring: several times more");
	rte_hash_free(h);
	rules_free(r);
	free(s);
	free(ids);
	free(probe);
}

/* Single addresses: the sorted array of rules.h against the same /32s in an rte_lpm. */
static void
bench_ip32(unsigned n)
{
	struct rule_spec *s = calloc(n, sizeof(*s));
	const unsigned n_ops = (1u << 22) / scale;
	uint32_t *probe = malloc(sizeof(*probe) * n_ops);
	char err[256], what[128];
	unsigned hits_a = 0, hits_b = 0;

	for (unsigned i = 0; i < n; i++)
		s[i] = (struct rule_spec){
			.kind = RULE_BLOCK_IP, .ip = (uint32_t)rnd(), .prefix = 32};
	for (unsigned i = 0; i < n_ops; i++)
		probe[i] = i & 1 ? s[rnd() % n].ip : (uint32_t)rnd();
	uint64_t b0 = rte_rdtsc();
	struct rules *r = rules_build(s, n, SOCKET_ID_ANY, err, sizeof(err));
	uint64_t b1 = rte_rdtsc();
	struct rte_lpm_config cfg = {.max_rules = n, .number_tbl8s = n};
	char name[32];

	snprintf(name, sizeof(name), "bench_l%u", n);
	struct rte_lpm *l = rte_lpm_create(name, SOCKET_ID_ANY, &cfg);

	for (unsigned i = 0; i < n; i++)
		rte_lpm_add(l, s[i].ip, 32, 1);
	uint64_t c0 = rte_rdtsc();

	for (unsigned i = 0; i < n_ops; i++)
		hits_a += rules_block_ip(r, rte_cpu_to_be_32(probe[i]));
	uint64_t c1 = rte_rdtsc();

	for (unsigned i = 0; i < n_ops; i++) {
		uint32_t hop;

		hits_b += rte_lpm_lookup(l, probe[i], &hop) == 0;
	}
	uint64_t c2 = rte_rdtsc();

	snprintf(what, sizeof(what), "addresses, %6u /32 rules: sorted array (rules_block_ip)", n);
	report(what, c1 - c0, n_ops, hits_a == hits_b);
	snprintf(what, sizeof(what), "addresses, %6u /32 rules: rte_lpm (the alternative)", n);
	report(what, c2 - c1, n_ops, true);
	tap_diag("  memory: sorted array %zu KiB; rte_lpm 64 MiB tbl24 + up to %u KiB of tbl8",
		(size_t)n * 4 / 1024, n);
	tap_diag("  build: rules_build %.1f ms; rte_lpm_add of the same /32s %.1f ms",
		(double)(b1 - b0) / tsc_ghz / 1e6, (double)(c0 - b1) / tsc_ghz / 1e6);
	rte_lpm_free(l);
	rules_free(r);
	free(s);
	free(probe);
}

/*
 * rules_block_ip6() on n IPv6 rules (half /128 addresses, half networks /32../64, in 2000::/3),
 * half the probes inside one of them (a network's address with random host bits).
 */
static void
bench_ip6(unsigned n)
{
	struct rule_spec *s = calloc(n, sizeof(*s));
	const unsigned n_ops = (1u << 22) / scale;
	uint8_t(*probe)[16] = malloc(sizeof(*probe) * n_ops);
	char err[256], what[128];
	unsigned hits = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned pfx = i & 1 ? 128 : 32 + (unsigned)(rnd() % 33);

		s[i] = (struct rule_spec){.kind = RULE_BLOCK_IP6, .prefix = (uint8_t)pfx};
		for (unsigned b = 0; b < 16; b++)
			s[i].ip6[b] = (uint8_t)rnd();
		s[i].ip6[0] = (uint8_t)(0x20 | (s[i].ip6[0] & 0x1f));
		for (unsigned bit = pfx; bit < 128; bit++)
			s[i].ip6[bit / 8] &= (uint8_t) ~(0x80u >> (bit % 8));
	}
	for (unsigned i = 0; i < n_ops; i++) {
		for (unsigned b = 0; b < 16; b++)
			probe[i][b] = (uint8_t)rnd();
		probe[i][0] = (uint8_t)(0x20 | (probe[i][0] & 0x1f));
		if (i & 1) {
			const struct rule_spec *x = &s[rnd() % n];

			for (unsigned bit = 0; bit < x->prefix; bit++) {
				uint8_t m = (uint8_t)(0x80u >> (bit % 8));

				probe[i][bit / 8] =
					(uint8_t)((probe[i][bit / 8] & ~m) | (x->ip6[bit / 8] & m));
			}
		}
	}
	uint64_t b0 = rte_rdtsc();
	struct rules *r = rules_build(s, n, SOCKET_ID_ANY, err, sizeof(err));
	uint64_t c0 = rte_rdtsc();

	for (unsigned i = 0; i < n_ops; i++)
		hits += rules_block_ip6(r, probe[i]);
	uint64_t c1 = rte_rdtsc();

	snprintf(what, sizeof(what), "IPv6, %6u rules: sorted ranges (rules_block_ip6)", n);
	report(what, c1 - c0, n_ops, r != NULL && hits >= n_ops / 2);
	tap_diag("  memory: %zu KiB (32 bytes a range, %u ranges); build: rules_build %.1f ms",
		r != NULL ? (size_t)r->n_ip6 * 32 / 1024 : 0, r != NULL ? r->n_ip6 : 0,
		(double)(c0 - b0) / tsc_ghz / 1e6);
	rules_free(r);
	free(s);
	free(probe);
}

/* The alternative for device ids: SipHash of the id, searched in a sorted array of hashes. */
struct dev_sorted {
	struct sipkey key;
	uint64_t *hash;
	char (*id)[RULE_DEVICE_MAX + 1];
	uint32_t n;
};

static int
cmp_hash_id(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static bool
dev_sorted_has(const struct dev_sorted *d, const char *dev, size_t len)
{
	uint64_t h = siphash24(&d->key, dev, len);
	uint32_t lo = 0, n = d->n;

	while (n > 0) {
		uint32_t half = n / 2;

		if (d->hash[lo + half] < h) {
			lo += half + 1;
			n -= half + 1;
		} else {
			n = half;
		}
	}
	/* Hashes are unique here (random ids, 64 bits); the bench keeps ids in hash order. */
	return lo < d->n && d->hash[lo] == h && d->id[lo][len] == '\0' &&
	       memcmp(d->id[lo], dev, len) == 0;
}

/* Device ids: rules_block_device() (rte_hash) against the sorted array of SipHashes. */
static void
bench_devices(unsigned n)
{
	struct rule_spec *s = calloc(n, sizeof(*s));
	const unsigned n_ops = (1u << 21) / scale, n_probe = 4096;
	char(*probe)[RULE_DEVICE_MAX + 1] = calloc(n_probe, sizeof(*probe));
	char err[256], what[128];
	unsigned hits_a = 0, hits_b = 0;
	struct dev_sorted d = {{rnd(), rnd()}, NULL, NULL, n};
	struct {
		uint64_t h;
		uint32_t i;
	} *tmp = malloc(sizeof(*tmp) * n);

	for (unsigned i = 0; i < n; i++) {
		s[i].kind = RULE_BLOCK_DEVICE;
		snprintf(s[i].device, sizeof(s[i].device), "%08x-%04x-4%03x-8%03x-%012" PRIx64,
			(unsigned)rnd(), (unsigned)rnd() & 0xffff, (unsigned)rnd() & 0xfff,
			(unsigned)rnd() & 0xfff, rnd() & UINT64_C(0xffffffffffff));
		tmp[i].h = siphash24(&d.key, s[i].device, 36);
		tmp[i].i = i;
	}
	qsort(tmp, n, sizeof(*tmp), cmp_hash_id);
	d.hash = malloc(sizeof(*d.hash) * n);
	d.id = calloc(n, sizeof(*d.id));
	for (unsigned i = 0; i < n; i++) {
		d.hash[i] = tmp[i].h;
		memcpy(d.id[i], s[tmp[i].i].device, 37);
	}
	for (unsigned i = 0; i < n_probe; i++) {
		memcpy(probe[i], s[rnd() % n].device, 37);
		if (i & 1)
			probe[i][35] ^= 1;
	}
	struct rules *r = rules_build(s, n, SOCKET_ID_ANY, err, sizeof(err));
	uint64_t c0 = rte_rdtsc();

	for (unsigned i = 0; i < n_ops; i++)
		hits_a += rules_block_device(r, probe[i % n_probe], 36);
	uint64_t c1 = rte_rdtsc();

	for (unsigned i = 0; i < n_ops; i++)
		hits_b += dev_sorted_has(&d, probe[i % n_probe], 36);
	uint64_t c2 = rte_rdtsc();

	snprintf(what, sizeof(what), "devices, %6u rules: rte_hash (rules_block_device)", n);
	report(what, c1 - c0, n_ops, hits_a == hits_b && hits_a == n_ops / 2);
	snprintf(what, sizeof(what), "devices, %6u rules: SipHash + sorted (the alternative)", n);
	report(what, c2 - c1, n_ops, true);
	rules_free(r);
	free(s);
	free(probe);
	free(tmp);
	free(d.hash);
	free(d.id);
}

static void
bench_empty_and_build(void)
{
	const unsigned n_ops = (1u << 24) / scale, n = 100000;
	char err[256];
	struct rules *e = rules_build(NULL, 0, SOCKET_ID_ANY, err, sizeof(err));
	unsigned hits = 0;
	uint64_t c0 = rte_rdtsc();

	for (unsigned i = 0; i < n_ops; i++)
		hits += rules_block_ip(e, i) + rules_block_user(e, i) +
			rules_block_device(e, "abc", 3);
	uint64_t c1 = rte_rdtsc();

	report("empty rule set: ip + user + device lookups", c1 - c0, n_ops, hits == 0);
	rules_free(e);

	/* 100k mixed rules: 40k networks, 20k addresses, 20k users, 20k devices. */
	struct rule_spec *s = calloc(n, sizeof(*s));

	for (unsigned i = 0; i < n; i++) {
		unsigned pfx = 8 + (unsigned)(rnd() % 24);

		if (i < 40000)
			s[i] = (struct rule_spec){.kind = RULE_BLOCK_IP,
				.ip = (uint32_t)rnd() & (UINT32_MAX << (32 - pfx)),
				.prefix = pfx};
		else if (i < 60000)
			s[i] = (struct rule_spec){
				.kind = RULE_BLOCK_IP, .ip = (uint32_t)rnd(), .prefix = 32};
		else if (i < 80000)
			s[i] = (struct rule_spec){
				.kind = RULE_BLOCK_USER, .user = 1 + rnd() % 1000000};
		else
			snprintf(s[i].device, sizeof(s[i].device), "dev-%" PRIx64, rnd());
		if (i >= 80000)
			s[i].kind = RULE_BLOCK_DEVICE;
	}
	c0 = rte_rdtsc();
	struct rules *r = rules_build(s, n, SOCKET_ID_ANY, err, sizeof(err));
	c1 = rte_rdtsc();

	tap_ok(r != NULL, "rules_build of 100000 mixed rules: %.1f ms (%u networks in the LPM)",
		(double)(c1 - c0) / tsc_ghz / 1e6, r != NULL ? r->n_networks : 0);
	c0 = rte_rdtsc();
	for (unsigned i = 0; i < n_ops / 4; i++)
		hits += rules_block_ip(r, (uint32_t)rnd());
	c1 = rte_rdtsc();
	report("  rules_block_ip on that set, random addresses (incl. rnd)", c1 - c0, n_ops / 4,
		true);
	rules_free(r);
	free(s);
}

int
main(int argc, char **argv)
{
	char *eal_argv[] = {argv[0], "--no-huge", "-m", "1024", "--no-pci", "--no-shconf",
		"--no-telemetry", "--log-level", "lib.*:error", "-l", "0", NULL};

	(void)argc;
	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		printf("Bail out! EAL init failed\n");
		return 2;
	}
	test_eal_rundir_cleanup_at_exit();
	if (getenv("FG_BENCH_QUICK") != NULL)
		scale = 16;
	tsc_ghz = (double)rte_get_tsc_hz() / 1e9;

	bench_take(20, 1u << 8, false);
	bench_take(20, 1u << 18, false);
	bench_take(20, 1u << 18, true);
	bench_take(22, 1u << 21, true);
	bench_insert();
	bench_bucket_and_key();
	bench_eviction_load();
	bench_empty_and_build();
	bench_users(16);
	bench_users(1000);
	bench_users(100000);
	bench_ip32(1000);
	bench_ip32(scale > 1 ? 10000 : 100000);
	bench_ip6(1000);
	bench_ip6(scale > 1 ? 10000 : 100000);
	bench_devices(1000);
	bench_devices(100000);
	tap_diag("limits benchmark: TSC %.3f GHz%s", tsc_ghz, scale > 1 ? " (quick)" : "");
	rte_eal_cleanup();
	return tap_done();
}

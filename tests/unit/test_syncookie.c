/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SipHash-2-4 against the reference vectors, and the SYN cookies' contract: what is accepted,
 * what is rejected, for how long, and that the MAC looks random.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "common/siphash.h"
#include "net/tcp_syncookie.h"
#include "tests/tap.h"

/*
 * SipHash-2-4 with key 00 01 .. 0f of the messages (), (00), (00 01), .. (00 .. 3e): the 64
 * outputs published with the paper (vectors_sip64), as little-endian 64-bit values.
 */
static const uint64_t sip_vectors[64] = {
	UINT64_C(0x726fdb47dd0e0e31),
	UINT64_C(0x74f839c593dc67fd),
	UINT64_C(0x0d6c8009d9a94f5a),
	UINT64_C(0x85676696d7fb7e2d),
	UINT64_C(0xcf2794e0277187b7),
	UINT64_C(0x18765564cd99a68d),
	UINT64_C(0xcbc9466e58fee3ce),
	UINT64_C(0xab0200f58b01d137),
	UINT64_C(0x93f5f5799a932462),
	UINT64_C(0x9e0082df0ba9e4b0),
	UINT64_C(0x7a5dbbc594ddb9f3),
	UINT64_C(0xf4b32f46226bada7),
	UINT64_C(0x751e8fbc860ee5fb),
	UINT64_C(0x14ea5627c0843d90),
	UINT64_C(0xf723ca908e7af2ee),
	UINT64_C(0xa129ca6149be45e5),
	UINT64_C(0x3f2acc7f57c29bdb),
	UINT64_C(0x699ae9f52cbe4794),
	UINT64_C(0x4bc1b3f0968dd39c),
	UINT64_C(0xbb6dc91da77961bd),
	UINT64_C(0xbed65cf21aa2ee98),
	UINT64_C(0xd0f2cbb02e3b67c7),
	UINT64_C(0x93536795e3a33e88),
	UINT64_C(0xa80c038ccd5ccec8),
	UINT64_C(0xb8ad50c6f649af94),
	UINT64_C(0xbce192de8a85b8ea),
	UINT64_C(0x17d835b85bbb15f3),
	UINT64_C(0x2f2e6163076bcfad),
	UINT64_C(0xde4daaaca71dc9a5),
	UINT64_C(0xa6a2506687956571),
	UINT64_C(0xad87a3535c49ef28),
	UINT64_C(0x32d892fad841c342),
	UINT64_C(0x7127512f72f27cce),
	UINT64_C(0xa7f32346f95978e3),
	UINT64_C(0x12e0b01abb051238),
	UINT64_C(0x15e034d40fa197ae),
	UINT64_C(0x314dffbe0815a3b4),
	UINT64_C(0x027990f029623981),
	UINT64_C(0xcadcd4e59ef40c4d),
	UINT64_C(0x9abfd8766a33735c),
	UINT64_C(0x0e3ea96b5304a7d0),
	UINT64_C(0xad0c42d6fc585992),
	UINT64_C(0x187306c89bc215a9),
	UINT64_C(0xd4a60abcf3792b95),
	UINT64_C(0xf935451de4f21df2),
	UINT64_C(0xa9538f0419755787),
	UINT64_C(0xdb9acddff56ca510),
	UINT64_C(0xd06c98cd5c0975eb),
	UINT64_C(0xe612a3cb9ecba951),
	UINT64_C(0xc766e62cfcadaf96),
	UINT64_C(0xee64435a9752fe72),
	UINT64_C(0xa192d576b245165a),
	UINT64_C(0x0a8787bf8ecb74b2),
	UINT64_C(0x81b3e73d20b49b6f),
	UINT64_C(0x7fa8220ba3b2ecea),
	UINT64_C(0x245731c13ca42499),
	UINT64_C(0xb78dbfaf3a8d83bd),
	UINT64_C(0xea1ad565322a1a0b),
	UINT64_C(0x60e61c23a3795013),
	UINT64_C(0x6606d7e446282b93),
	UINT64_C(0x6ca4ecb15c5f91e1),
	UINT64_C(0x9f626da15c9625f3),
	UINT64_C(0xe51b38608ef25f57),
	UINT64_C(0x958a324ceb064572),
};

static const uint8_t master_a[16] = {0x3c, 0x91, 0x07, 0xe2, 0x5a, 0x44, 0x18, 0xbf, 0x60, 0x0d,
	0x9e, 0x23, 0xc7, 0x71, 0xfa, 0x16};

/* xorshift64*: reproducible pseudo-random inputs, so a failure can be replayed. */
static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

static uint64_t
rng64(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

struct tuple {
	uint32_t saddr, daddr; /* network order */
	uint16_t sport, dport; /* network order */
	uint32_t isn;
};

static struct tuple
tuple_rand(void)
{
	uint64_t a = rng64(), b = rng64();
	struct tuple t = {(uint32_t)a, (uint32_t)(a >> 32), (uint16_t)b, (uint16_t)(b >> 16),
		(uint32_t)(b >> 32)};

	return t;
}

static uint32_t
make_t(const struct syncookie_ctx *c, const struct tuple *t, unsigned mss_idx)
{
	return syncookie_make(c, t->saddr, t->daddr, t->sport, t->dport, t->isn, mss_idx);
}

static int
check_t(const struct syncookie_ctx *c, const struct tuple *t, uint32_t cookie)
{
	return syncookie_check(c, t->saddr, t->daddr, t->sport, t->dport, t->isn, cookie);
}

static void
put_le64(uint8_t *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * The cookie as tcp_syncookie.h documents it, recomputed with the byte-string SipHash: the
 * format is shared by every dataplane holding the same secret, so it must not drift.
 */
static uint32_t
cookie_by_spec(const uint8_t master[16], uint32_t slot_seconds, uint64_t now_s,
	const struct tuple *t, unsigned mss_idx)
{
	struct sipkey mk = siphash_key_from_bytes(master), sk;
	uint64_t slot = now_s / slot_seconds;
	uint8_t buf[24];

	put_le64(buf, UINT64_C(0x79656b6e79736766)); /* "fgsynkey" */
	put_le64(buf + 8, slot);
	put_le64(buf + 16, 0);
	sk.k0 = siphash24(&mk, buf, sizeof(buf));
	put_le64(buf + 16, 1);
	sk.k1 = siphash24(&mk, buf, sizeof(buf));

	put_le64(buf, (uint64_t)t->saddr << 32 | t->daddr);
	put_le64(buf + 8, (uint64_t)t->sport << 48 | (uint64_t)t->dport << 32 | t->isn);
	put_le64(buf + 16, mss_idx);
	return ((uint32_t)siphash24(&sk, buf, sizeof(buf)) & 0x0fffffff) << 4 |
	       (uint32_t)(slot & 3) << 2 | mss_idx;
}

static void
test_siphash(void)
{
	struct sipkey k;
	uint8_t key_bytes[16], msg[64];
	int bad;

	for (unsigned i = 0; i < 16; i++)
		key_bytes[i] = (uint8_t)i;
	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	k = siphash_key_from_bytes(key_bytes);
	tap_ok(k.k0 == UINT64_C(0x0706050403020100) && k.k1 == UINT64_C(0x0f0e0d0c0b0a0908),
		"siphash: key bytes 00..0f load as k0=0x0706050403020100, k1=0x0f0e0d0c0b0a0908");

	for (unsigned len = 0; len < 64; len++) {
		uint64_t got = siphash24(&k, msg, len);

		tap_ok(got == sip_vectors[len],
			"siphash24: reference vector, %u-byte message (got %016llx)", len,
			(unsigned long long)got);
	}

	tap_ok(siphash24_2w(&k, siphash_load_le64(msg), siphash_load_le64(msg + 8)) ==
			sip_vectors[16],
		"siphash24_2w: reference vector of the 16-byte message");
	tap_ok(siphash24_3w(&k, siphash_load_le64(msg), siphash_load_le64(msg + 8),
		       siphash_load_le64(msg + 16)) == sip_vectors[24],
		"siphash24_3w: reference vector of the 24-byte message");

	bad = 0;
	for (int i = 0; i < 20000; i++) {
		struct sipkey rk = {rng64(), rng64()};
		uint64_t w[3] = {rng64(), rng64(), rng64()};
		uint8_t b[24];

		put_le64(b, w[0]);
		put_le64(b + 8, w[1]);
		put_le64(b + 16, w[2]);
		bad += siphash24_3w(&rk, w[0], w[1], w[2]) != siphash24(&rk, b, 24);
		bad += siphash24_2w(&rk, w[0], w[1]) != siphash24(&rk, b, 16);
	}
	tap_eq_int(bad, 0, "siphash24_2w/_3w equal siphash24 on 20000 random keys and inputs");
}

static void
test_mss(void)
{
	static const struct {
		uint16_t client_mss;
		uint8_t want;
	} rows[] = {
		{0, 0},
		{1, 0},
		{535, 0},
		{536, 0},
		{537, 0},
		{1219, 0},
		{1220, 1},
		{1221, 1},
		{1439, 1},
		{1440, 2},
		{1441, 2},
		{1459, 2},
		{1460, 3},
		{1461, 3},
		{9000, 3},
		{65535, 3},
	};
	static const struct {
		unsigned idx;
		uint16_t want;
	} vals[] = {
		{0, 536},
		{1, 1220},
		{2, 1440},
		{3, 1460},
		{4, 536},
		{255, 536},
		{~0u, 536},
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		tap_eq_int(syncookie_mss_index(rows[i].client_mss), rows[i].want,
			"syncookie_mss_index of the table's edges");
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		tap_eq_int(syncookie_mss_value(vals[i].idx), vals[i].want, "syncookie_mss_value");
	/* We must never send more than the client can take, and never less than we could. */
	for (uint32_t m = 536; m <= 65535; m++) {
		uint8_t idx = syncookie_mss_index((uint16_t)m);

		bad += syncookie_mss_value(idx) > m;
		bad += idx < 3 && syncookie_mss_value(idx + 1u) <= m;
	}
	tap_eq_int(
		bad, 0, "for every MSS 536..65535 the index gives the largest table value <= it");
}

static void
test_init(void)
{
	struct syncookie_ctx c;

	tap_eq_int(syncookie_init(NULL, master_a, 64, 0), -EINVAL, "init: NULL ctx is -EINVAL");
	tap_eq_int(syncookie_init(&c, NULL, 64, 0), -EINVAL, "init: NULL master is -EINVAL");
	tap_eq_int(syncookie_init(&c, master_a, 0, 0), -EINVAL, "init: 0-second slot is -EINVAL");
	tap_eq_int(syncookie_init(&c, master_a, 64, 0), 0, "init: at clock 0 succeeds");
	tap_eq_int(syncookie_init(&c, master_a, 1, UINT64_MAX), 0,
		"init: at the clock's last second succeeds");
}

/* Hand-picked 4-tuples: typical, all zero, all ones, and ports equal to each other. */
static const struct tuple fixed[] = {
	{RTE_BE32(RTE_IPV4(198, 51, 100, 7)), RTE_BE32(RTE_IPV4(203, 0, 113, 1)), RTE_BE16(49152),
		RTE_BE16(80), 0x12345678},
	{0, 0, 0, 0, 0},
	{0xffffffff, 0xffffffff, 0xffff, 0xffff, 0xffffffff},
	{RTE_BE32(RTE_IPV4(10, 0, 0, 2)), RTE_BE32(RTE_IPV4(10, 0, 0, 1)), RTE_BE16(443),
		RTE_BE16(443), 0x80000000},
};
#define N_FIXED (sizeof(fixed) / sizeof(fixed[0]))

static void
test_accept_and_format(void)
{
	const uint64_t now = 1700000000;
	struct syncookie_ctx c;

	syncookie_init(&c, master_a, 64, now);
	for (size_t i = 0; i < N_FIXED; i++) {
		for (unsigned m = 0; m < 4; m++) {
			uint32_t ck = make_t(&c, &fixed[i], m);

			int got = check_t(&c, &fixed[i], ck);

			tap_ok(got == (int)m,
				"tuple %zu, MSS index %u: its cookie is accepted with "
				"index %d",
				i, m, got);
		}
		tap_ok(make_t(&c, &fixed[i], 2) == cookie_by_spec(master_a, 64, now, &fixed[i], 2),
			"tuple %zu: cookie equals the documented format recomputed", i);
	}
	tap_eq_int(make_t(&c, &fixed[0], 3) & 0xf, ((now / 64) & 3) << 2 | 3,
		"cookie low bits: slot modulo 4, then the MSS index");
	tap_eq_int(check_t(&c, &fixed[0], make_t(&c, &fixed[0], 7)), 3,
		"an MSS index above 3 is taken modulo 4");
}

/* One field changed at a time: the cookie of the original tuple must not fit. */
static void
test_other_tuple(void)
{
	static const char *const what[] = {"saddr low bit", "saddr high bit", "daddr", "sport",
		"dport", "ISN + 1", "ISN - 1", "addresses and ports swapped"};
	struct syncookie_ctx c;
	int bad = 0, total = 0;

	syncookie_init(&c, master_a, 64, 1700000000);
	for (size_t i = 0; i < N_FIXED; i++) {
		for (unsigned m = 0; m < 4; m++) {
			uint32_t ck = make_t(&c, &fixed[i], m);

			for (unsigned w = 0; w < 8; w++) {
				struct tuple t = fixed[i];
				int got;

				switch (w) {
				case 0:
					t.saddr ^= 1;
					break;
				case 1:
					t.saddr ^= 0x80000000;
					break;
				case 2:
					t.daddr ^= 0x00010000;
					break;
				case 3:
					t.sport ^= 0x0100;
					break;
				case 4:
					t.dport ^= 0x0001;
					break;
				case 5:
					t.isn += 1;
					break;
				case 6:
					t.isn -= 1;
					break;
				default:
					t.saddr = fixed[i].daddr;
					t.daddr = fixed[i].saddr;
					t.sport = fixed[i].dport;
					t.dport = fixed[i].sport;
					break;
				}
				got = check_t(&c, &t, ck);
				if (i == 0 && m == 0)
					tap_eq_int(got, -1, what[w]);
				/* Swapping equal ends is no change; that one must pass. */
				if (w == 7 && t.saddr == fixed[i].saddr &&
					t.sport == fixed[i].sport)
					bad += got != (int)m;
				else
					bad += got != -1;
				total++;
			}
		}
	}
	tap_ok(bad == 0, "all %d one-field changes of %zu tuples x 4 MSS are rejected", total,
		N_FIXED);
}

static void
test_bit_flips(void)
{
	struct syncookie_ctx c;
	uint32_t ck;
	int bad = 0;

	syncookie_init(&c, master_a, 64, 1700000000);
	ck = make_t(&c, &fixed[0], 1);
	for (unsigned b = 0; b < 32; b++)
		tap_eq_int(
			check_t(&c, &fixed[0], ck ^ (1u << b)), -1, "cookie with one bit flipped");
	for (int i = 0; i < 3000; i++) {
		struct tuple t = tuple_rand();
		uint32_t k = make_t(&c, &t, (unsigned)i & 3);

		for (unsigned b = 0; b < 32; b++)
			bad += check_t(&c, &t, k ^ (1u << b)) != -1;
	}
	tap_eq_int(bad, 0, "every single-bit flip of 3000 random tuples' cookies is rejected");
}

static void
test_keys(void)
{
	uint8_t master_b[16];
	struct syncookie_ctx a, b, a2;
	uint32_t ck;

	memcpy(master_b, master_a, sizeof(master_b));
	master_b[15] ^= 0x80;
	syncookie_init(&a, master_a, 64, 1700000000);
	syncookie_init(&b, master_b, 64, 1700000000);
	syncookie_init(&a2, master_a, 64, 1700000000);
	ck = make_t(&a, &fixed[0], 0);
	tap_eq_int(check_t(&b, &fixed[0], ck), -1, "a cookie is rejected under another master key");
	tap_ok(make_t(&b, &fixed[0], 0) != ck, "another master key makes another cookie");
	tap_eq_int(check_t(&a2, &fixed[0], ck), 0,
		"another worker with the same master key and clock accepts the cookie");
	tap_eq_int(check_t(&b, &fixed[0], make_t(&b, &fixed[0], 0)), 0,
		"the other key accepts its own cookie");
}

/*
 * Age of a cookie: made at `made`, checked at `checked` (seconds, 64-second slots),
 * both through a context ticked forward and through one initialised at `checked`.
 */
static void
test_slots(void)
{
	const uint64_t s = 64, k = 1700000000 / 64; /* a slot in 2023 */
	static const struct {
		uint64_t made_off, checked_off; /* seconds from the start of slot k */
		int ok;
		const char *what;
	} rows[] = {
		{0, 0, 1, "same second"},
		{0, 63, 1, "first to last second of the slot"},
		{63, 64, 1, "last second of the slot to the first of the next"},
		{0, 127, 1, "first second of the slot to the last of the next"},
		{63, 127, 1, "last second to the last second of the next slot"},
		{63, 128, 0, "last second of the slot to the first of two slots later"},
		{0, 128, 0, "two slots old, first second"},
		{10, 191, 0, "two slots old, last second"},
		{5, 3 * 64 + 5, 0, "three slots old"},
		{5, 4 * 64 + 5, 0, "four slots old (same slot bits as the current slot)"},
		{5, 5 * 64 + 5, 0, "five slots old (same slot bits as the previous slot)"},
		{5, 1000 * 64 + 5, 0, "a thousand slots old"},
		{64, 63, 0, "made in the next slot (from the future)"},
		{128, 5, 0, "made two slots ahead"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct syncookie_ctx maker, ticked, fresh;
		uint64_t made = k * s + rows[i].made_off, checked = k * s + rows[i].checked_off;
		uint32_t ck;

		syncookie_init(&maker, master_a, (uint32_t)s, made);
		syncookie_init(&ticked, master_a, (uint32_t)s, made);
		syncookie_init(&fresh, master_a, (uint32_t)s, checked);
		ck = make_t(&maker, &fixed[0], 2);
		for (uint64_t t = made; t <= checked && checked - made < 1000; t++)
			syncookie_tick(&ticked, t);
		syncookie_tick(&ticked, checked);
		tap_ok(check_t(&ticked, &fixed[0], ck) == (rows[i].ok ? 2 : -1), "%s: %s (ticked)",
			rows[i].ok ? "accepted" : "rejected", rows[i].what);
		tap_ok(check_t(&fresh, &fixed[0], ck) == (rows[i].ok ? 2 : -1), "%s: %s (fresh)",
			rows[i].ok ? "accepted" : "rejected", rows[i].what);
	}
}

static void
test_tick(void)
{
	const uint64_t t0 = 1700000000 / 64 * 64;
	struct syncookie_ctx c, fresh;
	uint32_t before, after;
	int bad = 0;

	syncookie_init(&c, master_a, 64, t0);
	before = make_t(&c, &fixed[0], 1);
	syncookie_tick(&c, t0 + 63);
	tap_ok(make_t(&c, &fixed[0], 1) == before, "tick within the slot keeps the cookie");
	syncookie_tick(&c, t0 + 64);
	after = make_t(&c, &fixed[0], 1);
	tap_ok(after != before, "tick into the next slot changes the cookie");
	tap_ok(check_t(&c, &fixed[0], before) == 1 && check_t(&c, &fixed[0], after) == 1,
		"after the tick both the old and the new cookie are accepted");

	/* A ticked context must behave exactly as one set up at that time. */
	syncookie_init(&c, master_a, 64, t0);
	for (uint64_t t = t0; t < t0 + 64 * 20; t += 7) {
		struct tuple tp = tuple_rand();

		syncookie_tick(&c, t);
		syncookie_init(&fresh, master_a, 64, t);
		bad += make_t(&c, &tp, 0) != make_t(&fresh, &tp, 0);
		bad += check_t(&c, &tp, make_t(&fresh, &tp, 3)) != 3;
	}
	tap_eq_int(bad, 0, "ticking slot by slot equals a fresh init at each time");

	syncookie_init(&c, master_a, 64, t0 + 64 * 10);
	syncookie_tick(&c, t0);
	syncookie_init(&fresh, master_a, 64, t0);
	tap_ok(make_t(&c, &fixed[0], 0) == make_t(&fresh, &fixed[0], 0) &&
			check_t(&c, &fixed[0], make_t(&fresh, &fixed[0], 0)) == 0,
		"a clock stepped back ten slots gives the cookies of that time");
	syncookie_tick(&c, t0 + 64 * 500);
	syncookie_tick(&c, t0 + 64 * 501);
	syncookie_init(&fresh, master_a, 64, t0 + 64 * 500);
	tap_eq_int(check_t(&c, &fixed[0], make_t(&fresh, &fixed[0], 2)), 2,
		"after a jump of many slots the previous slot is still accepted");
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * The MAC should look uniform: 100000 random tuples in 2^28 values give on average
 * n^2 / 2^29 = 18.6 equal pairs, and each bit is set in half of them.
 */
static void
test_distribution(void)
{
	enum { N = 100000 };
	static uint32_t mac[N];
	unsigned ones[28] = {0};
	struct syncookie_ctx c;
	unsigned pairs = 0, worst_dev = 0, worst_bit = 0, accepted = 0;

	syncookie_init(&c, master_a, 64, 1700000000);
	for (int i = 0; i < N; i++) {
		struct tuple t = tuple_rand();

		mac[i] = make_t(&c, &t, 0) >> 4;
		for (unsigned b = 0; b < 28; b++)
			ones[b] += (mac[i] >> b) & 1;
	}
	qsort(mac, N, sizeof(mac[0]), cmp_u32);
	for (int i = 1; i < N; i++)
		pairs += mac[i] == mac[i - 1];
	tap_diag("%u equal MACs among %d random tuples (18.6 expected)", pairs, N);
	tap_ok(pairs <= 45, "at most 45 equal 28-bit MACs among 100000 tuples (got %u)", pairs);

	/* The standard deviation of a bit count is sqrt(N / 4) = 158; allow 1% (6.3 sigma). */
	for (unsigned b = 0; b < 28; b++) {
		unsigned dev = ones[b] > N / 2 ? ones[b] - N / 2 : N / 2 - ones[b];

		if (dev > worst_dev) {
			worst_dev = dev;
			worst_bit = b;
		}
	}
	tap_ok(worst_dev <= N / 100,
		"every MAC bit is set in 50%% +- 1%% of cookies (worst: bit %u "
		"off by %u)",
		worst_bit, worst_dev);

	/* Forgery: random cookies for one tuple; 2^20 tries hit with probability 2^-9. */
	for (uint32_t i = 0; i < (1u << 20); i++)
		accepted += check_t(&c, &fixed[0], (uint32_t)rng64()) >= 0;
	tap_eq_int(accepted, 0, "none of 2^20 random cookies is accepted for a tuple");
}

int
main(void)
{
	test_siphash();
	test_mss();
	test_init();
	test_accept_and_format();
	test_other_tuple();
	test_bit_flips();
	test_keys();
	test_slots();
	test_tick();
	test_distribution();
	return tap_done();
}

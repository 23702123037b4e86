/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/loadgen/lg_sched.h"

bool
lg_sched_is_bot(uint64_t i, uint64_t n, uint64_t nb)
{
	if (n == 0 || nb == 0 || i >= n)
		return false;
	/* The bots are the i where floor(i * nb / n) steps up: nb steps over 0..n. */
	return (unsigned __int128)(i + 1) * nb / n > (unsigned __int128)i * nb / n;
}

double
lg_sched_unit(uint64_t user, uint64_t seed)
{
	uint64_t z = user + seed * 0x9e3779b97f4a7c15ull + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) / (double)(1ull << 53);
}

double
lg_sched_think_ms(uint64_t user, uint64_t seed, double mean_ms, bool bot, double speed)
{
	double t;

	if (!(mean_ms > 0))
		return 0;
	t = mean_ms * (0.5 + lg_sched_unit(user, seed));
	return bot && speed > 1 ? t / speed : t;
}

double
lg_sched_arrival_s(uint64_t k, uint64_t n_pre, double span_s, double u)
{
	if (k >= n_pre || !(span_s > 0))
		return 0;
	if (!(u >= 0) || u >= 1)
		u = 0;
	return -span_s + span_s * ((double)k + u) / (double)n_pre;
}

uint64_t
lg_sched_pre_count(uint64_t n, unsigned burst_pct)
{
	if (burst_pct >= 100)
		return 0;
	return n - (uint64_t)((unsigned __int128)n * burst_pct / 100);
}

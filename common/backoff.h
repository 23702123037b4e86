/* SPDX-License-Identifier: BSD-3-Clause */
/* The wait after a failure that doubles while failures go on, up to a bound. */
#ifndef FG_COMMON_BACKOFF_H
#define FG_COMMON_BACKOFF_H

/*
 * The next wait after cur (any unit): twice cur, or max once twice cur would reach it or pass
 * it. Never overflows (cur is compared with half of max before it is doubled).
 */
static inline unsigned
backoff_double(unsigned cur, unsigned max)
{
	return cur >= max / 2 ? max : cur * 2;
}

#endif

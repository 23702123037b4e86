/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "store/store_keys.h"

int
store_key(char *buf, size_t cap, uint32_t event, enum store_key_kind kind)
{
	static const char *const suffix[] = {
		[RS_KEY_STOCK] = "stock",
		[RS_KEY_RESULT] = "result",
		[RS_KEY_OUTBOX] = "outbox",
		[RS_KEY_RELEASED] = "released",
		[RS_KEY_WINDOW] = "window",
		[RS_KEY_ENTRANTS] = "entrants",
		[RS_KEY_DRAW] = "draw",
		[RS_KEY_WAIT] = "wait",
		[RS_KEY_WRANK] = "wrank",
		[RS_KEY_ENTLOG] = "entlog",
	};

	if ((unsigned)kind >= RS_KEY_KINDS)
		return -EINVAL;
	int n = snprintf(buf, cap, "fg:{%" PRIu32 "}:%s", event, suffix[kind]);

	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
}

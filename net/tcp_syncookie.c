/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "net/tcp_syncookie.h"

/* Domain separation: the master key derives slot keys and nothing else hashes under it. */
#define SYNCOOKIE_KDF_TAG UINT64_C(0x79656b6e79736766) /* "fgsynkey" little-endian */

static struct sipkey
syncookie_slot_key(const struct sipkey *master, uint64_t slot)
{
	struct sipkey k = {
		siphash24_3w(master, SYNCOOKIE_KDF_TAG, slot, 0),
		siphash24_3w(master, SYNCOOKIE_KDF_TAG, slot, 1),
	};

	return k;
}

void
syncookie_tick_slow(struct syncookie_ctx *ctx, uint64_t now_s)
{
	uint64_t slot = now_s / ctx->slot_seconds;

	/*
	 * The usual case is the next slot: its predecessor's key is already in place. A jump
	 * (idle worker, init) or a clock step backwards derives both keys afresh.
	 */
	if (slot != ctx->cur_slot + 1 || !((ctx->valid_mask >> (ctx->cur_slot & 3)) & 1))
		ctx->keys[(slot - 1) & 3] = syncookie_slot_key(&ctx->master, slot - 1);
	ctx->keys[slot & 3] = syncookie_slot_key(&ctx->master, slot);
	ctx->cur_slot = slot;
	ctx->slot_start_s = slot * ctx->slot_seconds;
	ctx->valid_mask = (uint8_t)(1u << (slot & 3) | 1u << ((slot - 1) & 3));
}

int
syncookie_init(
	struct syncookie_ctx *ctx, const uint8_t master[16], uint32_t slot_seconds, uint64_t now_s)
{
	if (ctx == NULL || master == NULL || slot_seconds == 0)
		return -EINVAL;
	memset(ctx, 0, sizeof(*ctx));
	ctx->master = siphash_key_from_bytes(master);
	ctx->slot_seconds = slot_seconds;
	syncookie_tick_slow(ctx, now_s);
	return 0;
}

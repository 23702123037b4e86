/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/loadgen/lg_pow.h"

#include <errno.h>
#include <string.h>

#include "common/token.h"
#include "tools/loadgen/lg_http.h"

bool
lg_pow_of_token(const char *tok, size_t len, struct lg_pow_challenge *ch)
{
	const char *prefix;
	unsigned bits;

	if (!tok_purchase_challenge(tok, len, &bits, &prefix))
		return false;
	memcpy(ch->prefix, prefix, TOK_MAC_CHARS);
	ch->prefix[TOK_MAC_CHARS] = '\0';
	ch->plen = TOK_MAC_CHARS;
	ch->bits = (uint8_t)bits;
	return true;
}

int
lg_pow_from_answer(const char *body, size_t body_len, const char *tok, size_t tok_len,
	struct lg_pow_challenge *ch)
{
	struct lg_pow_challenge claim;
	const char *obj, *prefix;
	size_t olen, plen;
	uint64_t bits;
	bool p2 = lg_pow_of_token(tok, tok_len, &claim);
	int rc = lg_json_object(body, body_len, "challenge", &obj, &olen);

	if (rc == -ENOENT)
		return p2 ? -EINVAL : 0;
	/* The answer's challenge must be the one its token claims, which the data plane checks. */
	if (rc != 0 || !p2 || lg_json_string(obj, olen, "prefix", &prefix, &plen) != 0 ||
		lg_json_uint(obj, olen, "bits", &bits) != 0 || bits != claim.bits ||
		plen != claim.plen || memcmp(prefix, claim.prefix, plen) != 0)
		return -EINVAL;
	*ch = claim;
	return 1;
}

void
lg_pow_start(struct lg_pow_solver *s, const struct lg_pow_challenge *ch)
{
	s->ch = *ch;
	s->tries = 0;
	s->nonce[0] = '0';
	s->nonce[1] = '\0';
	s->nlen = 1;
}

/* The next decimal number in s->nonce (999 -> 1000). */
static void
nonce_next(struct lg_pow_solver *s)
{
	int i = s->nlen - 1;

	while (i >= 0 && s->nonce[i] == '9')
		s->nonce[i--] = '0';
	if (i >= 0) {
		s->nonce[i]++;
		return;
	}
	/* All nines: one digit more. 20 digits hold any uint64, far beyond any bound of tries. */
	memmove(s->nonce + 1, s->nonce, s->nlen);
	s->nonce[0] = '1';
	s->nlen++;
	s->nonce[s->nlen] = '\0';
}

bool
lg_pow_step(struct lg_pow_solver *s, uint64_t max)
{
	for (uint64_t n = 0; n < max && s->nlen <= POW_SOLUTION_MAX - 1; n++) {
		s->tries++;
		if (pow_check(s->ch.prefix, s->ch.plen, s->nonce, s->nlen, s->ch.bits))
			return true;
		nonce_next(s);
	}
	return false;
}

/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_POW_H
#define FG_LG_POW_H
/*
 * The load generator's side of a purchase token's proof-of-work challenge (docs/api.md,
 * docs/tokens.md): reading the challenge of a token answer and checking it against the token
 * it came with, and solving it a bounded number of tries at a time, so that the run loop can
 * give each of its iterations a slice of solving and keep answering the other clients. The
 * solver tries nonces 0, 1, 2, ... with pow_check() (common/pow.h, the data plane's own check),
 * so it finds what pow_solve() finds: the smallest solving nonce.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pow.h"

struct lg_pow_challenge {
	char prefix[POW_PREFIX_MAX + 1]; /* the token's MAC text, NUL-terminated */
	uint8_t plen;
	uint8_t bits; /* 1..30 */
};

/*
 * The challenge that purchase token tok (len bytes) claims (tok_purchase_challenge(): a "p2"
 * token's bits and MAC text) into *ch. Returns false for a token without one.
 */
bool lg_pow_of_token(const char *tok, size_t len, struct lg_pow_challenge *ch);

/*
 * Reads the challenge of a token answer's body (body_len bytes) whose token is tok (tok_len
 * bytes): "challenge":{"prefix":"...","bits":N}. Returns 1 with *ch filled; 0 when there is no
 * challenge (no "challenge" member, or null, and a "p1" token); -EINVAL when the answer is not
 * one a data plane gives: a member that is not such an object, bits out of 1..30, a "p2" token
 * without a challenge, or a challenge whose prefix or bits are not those its token claims
 * (tok_purchase_challenge()).
 */
int lg_pow_from_answer(const char *body, size_t body_len, const char *tok, size_t tok_len,
	struct lg_pow_challenge *ch);

/* A challenge being solved: the next nonce to try, as a number and as its decimal text. */
struct lg_pow_solver {
	struct lg_pow_challenge ch;
	uint64_t tries;			 /* nonces tried so far (the next one is this number) */
	char nonce[POW_SOLUTION_MAX + 1]; /* the next nonce's text; the solution once found */
	uint8_t nlen;
};

/* Starts solving ch from nonce 0. */
void lg_pow_start(struct lg_pow_solver *s, const struct lg_pow_challenge *ch);

/*
 * Tries at most max more nonces, in order from where the last call stopped. Returns true when
 * one solves the challenge: s->nonce holds it (NUL-terminated), s->tries counts it too; false
 * when max nonces were tried without success (call again to go on).
 */
bool lg_pow_step(struct lg_pow_solver *s, uint64_t max);

#endif

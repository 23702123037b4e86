/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loadgen client's judging of answers (lg_parts.h): what a well-formed answer means
 * for its user and what the user does next (docs/api.md's flow).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_random.h>

#include "tools/loadgen/lg_parts.h"
#include "tools/loadgen/lg_http.h"
#include "tools/loadgen/lg_sched.h"

/* Result polls after a 410 to a reserve before the user is taken to hold nothing. */
#define LG_CHECK_POLLS 3

/* What an answer means for the user who got it. */
enum next_action {
	NEXT_STEP,  /* go on with c->step at c->t_due */
	NEXT_RETRY, /* ask the same again at c->t_due */
	NEXT_DONE,  /* the user (or healthz connection) has ended; outcome in *out */
};

/*
 * The wait of c's user before asking again after 425/429/503: Retry-After plus up to 1/4 s of
 * jitter; a bot's is --bot-speed times shorter.
 */
static uint64_t
retry_wait(const struct lg_client *cl, const struct lg_conn *c, long retry_after)
{
	uint64_t s = retry_after > 0 ? (uint64_t)retry_after : 1;
	uint64_t w = s * cl->hz + rte_rand_max(cl->hz / 4 + 1);

	return c->bot ? (uint64_t)((double)w / cl->o->bot_speed) : w;
}

/* How many answers 425/429/503 in a row c's user takes: a bot as many more as it is faster. */
static unsigned
retry_limit(const struct lg_client *cl, const struct lg_conn *c)
{
	return c->bot ? (unsigned)(cl->o->retries * cl->o->bot_speed) : cl->o->retries;
}

/*
 * The wait of a queued user before its next poll: the answer's wait_ms (the time to the draw,
 * or the estimated wait for its turn) within [--poll-ms, --poll-max-ms], plus up to a quarter
 * of it (at most 1/4 s) of jitter so that a line of buyers told the same wait does not come
 * back in the same millisecond; --poll-ms when the answer has no wait_ms.
 */
static uint64_t
queued_wait(const struct lg_client *cl, const struct lg_http_resp *r)
{
	const struct lg_opts *o = cl->o;
	uint64_t ms = 0, w, j;

	if (lg_json_uint(r->body, r->body_len, "wait_ms", &ms) != 0)
		return cl->poll;
	ms = lg_sched_poll_wait_ms(true, ms, o->poll_ms, o->poll_max_ms);
	w = ms * cl->hz / 1000;
	j = w / 4 < cl->hz / 4 ? w / 4 : cl->hz / 4;
	return w + rte_rand_max(j + 1);
}

static bool
copy_field(const struct lg_http_resp *r, const char *name, char *dst, size_t cap)
{
	const char *v;
	size_t n;

	if (lg_json_string(r->body, r->body_len, name, &v, &n) != 0 || n == 0 || n >= cap)
		return false;
	memcpy(dst, v, n);
	dst[n] = '\0';
	return true;
}

static bool
is_retry_status(unsigned s)
{
	return s == 425 || s == 429 || s == 503;
}

static enum lg_outcome
result_outcome(const char *v, size_t n)
{
	static const struct {
		const char *name;
		enum lg_outcome out;
	} tab[] = {
		{"reserved", LG_OUT_RESERVED},
		{"ordered", LG_OUT_ORDERED},
		{"paid", LG_OUT_PAID},
		{"sold_out", LG_OUT_SOLD_OUT},
		{"duplicate", LG_OUT_DUPLICATE},
		{"expired", LG_OUT_EXPIRED},
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strlen(tab[i].name) == n && memcmp(tab[i].name, v, n) == 0)
			return tab[i].out;
	return LG_OUT_OTHER_RESULT;
}

/* The unsigned flood's reserves go to the event's real reserve path once one is known. */
static void
learn_reserve_path(struct lg_client *cl, const char *path)
{
	size_t n = strlen(path);

	if (n >= sizeof(cl->reserve_path))
		return;
	memcpy(cl->reserve_path, path, n + 1);
	cl->have_reserve_path = true;
}

/*
 * A token answer's challenge (lg_pow.h): puts c's user in line for its solution. Returns false
 * when the answer's challenge is malformed or not its token's (or the line is full).
 */
static bool
take_challenge(struct lg_client *cl, struct lg_conn *c, const struct lg_http_resp *r, uint64_t now)
{
	struct lg_pow_challenge ch;
	int rc = lg_pow_from_answer(r->body, r->body_len, c->token, strlen(c->token), &ch);

	c->pow = LG_POW_NONE;
	if (rc <= 0)
		return rc == 0;
	cl->st.pow_challenges++;
	if (cl->pow_bits_min == 0 || ch.bits < cl->pow_bits_min)
		cl->pow_bits_min = ch.bits;
	if (ch.bits > cl->pow_bits_max)
		cl->pow_bits_max = ch.bits;
	c->t_chal = now;
	c->pow = LG_POW_WAITING;
	return lg_state_solve_enqueue(cl, c);
}

/*
 * A "queued" result's place in line (docs/api.md): counts it, and a position above the user's
 * last one (the design says it never rises) as unexpected. Returns false when position or
 * wait_ms is there but not a number.
 */
static bool
take_position(struct lg_client *cl, struct lg_conn *c, const struct lg_http_resp *r)
{
	uint64_t pos, w;
	int rc = lg_json_uint(r->body, r->body_len, "position", &pos);
	int rw = lg_json_uint(r->body, r->body_len, "wait_ms", &w);

	if (rc == -EINVAL || rw == -EINVAL)
		return false;
	cl->st.queued_polls++;
	cl->st.queued_wait += rw == 0;
	if (rc != 0)
		return true;
	cl->st.queued_position++;
	if (c->last_pos != LG_POS_NONE && pos > c->last_pos) {
		cl->st.position_rises++;
		cl->st.unexpected_status++;
	}
	c->last_pos = pos < LG_POS_NONE ? (uint32_t)pos : LG_POS_NONE - 1;
	return true;
}

/* An answer that is HTTP but not what its step's answer holds: the user's connection fails. */
static enum next_action
malformed(struct lg_client *cl, enum lg_outcome *out)
{
	cl->st.malformed_http++;
	*out = LG_OUT_CONN_FAILED;
	return NEXT_DONE;
}

/*
 * The result in answer r (a result's 200, or a known buyer's): false when it ends the user
 * (its outcome in *out; a malformed answer counted), true when the user is still queued (its
 * place in line taken).
 */
static bool
queued(struct lg_client *cl, struct lg_conn *c, const struct lg_http_resp *r, enum lg_outcome *out)
{
	const char *v;
	size_t n;

	if (lg_json_string(r->body, r->body_len, "status", &v, &n) != 0) {
		malformed(cl, out);
		return false;
	}
	if (!(n == 6 && memcmp(v, "queued", 6) == 0)) {
		*out = result_outcome(v, n);
		return false;
	}
	if (!take_position(cl, c, r)) {
		malformed(cl, out);
		return false;
	}
	return true;
}

/* A token's 200: the purchase token, the reserve path, maybe a challenge; the reserve next. */
static enum next_action
judge_token(struct lg_client *cl, struct lg_conn *c, const struct lg_http_resp *r, uint64_t now,
	enum lg_outcome *out)
{
	if (!copy_field(r, "token", c->token, sizeof(c->token)) ||
		!copy_field(r, "reserve_path", c->path, sizeof(c->path)) || c->path[0] != '/')
		return malformed(cl, out);
	if (unlikely(!cl->have_reserve_path))
		learn_reserve_path(cl, c->path);
	if (!take_challenge(cl, c, r, now))
		return malformed(cl, out);
	c->step = LG_STEP_RESERVE;
	c->attempts = 0;
	c->t_next = now + lg_state_think_cycles(cl, c);
	return NEXT_STEP;
}

/* c's user polls its result next, after wait cycles (its purchase token or receipt in c). */
static enum next_action
poll_result(struct lg_client *cl, struct lg_conn *c, uint64_t now, uint64_t wait)
{
	snprintf(c->path, sizeof(c->path), "/api/v1/events/%" PRIu32 "/result", cl->o->event);
	c->step = LG_STEP_RESULT;
	c->attempts = 0;
	c->polls = 0;
	c->t_next = now + wait;
	return NEXT_STEP;
}

/*
 * A reserve's 200, a known buyer (docs/api.md): a second click of a user whose result the data
 * plane holds, or an entrant of a draw (a reserve whose 202 was lost, one during the draw):
 * answered with that result. Queued: the user polls it with its purchase token, as after a 410.
 */
static enum next_action
judge_known_buyer(struct lg_client *cl, struct lg_conn *c, const struct lg_http_resp *r,
	uint64_t now, enum lg_outcome *out)
{
	if (!queued(cl, c, r, out))
		return NEXT_DONE;
	if (c->clicks++ == 0)
		cl->st.pop_entrants[c->bot ? LG_POP_BOTS : LG_POP_PEOPLE]++;
	poll_result(cl, c, now, queued_wait(cl, r));
	c->plain_poll = c->t_next == now + cl->poll;
	return NEXT_STEP;
}

/* A reserve's 202: the receipt and the result path (or, with --double-click, a second click). */
static enum next_action
judge_reserved(struct lg_client *cl, struct lg_conn *c, const struct lg_http_resp *r, uint64_t now,
	enum lg_outcome *out)
{
	const struct lg_opts *o = cl->o;

	/* --double-click: a chosen share of users reserve again with the same token, as an
	 * impatient buyer clicks twice; the control plane answers the second duplicate and the
	 * user's result stays the first one's. */
	if (c->clicks == 0)
		cl->st.pop_entrants[c->bot ? LG_POP_BOTS : LG_POP_PEOPLE]++;
	if (c->clicks++ == 0 && (c->user - o->user_base) % 100 < o->double_click) {
		cl->st.double_clicks++;
		c->attempts = 0;
		c->t_next = now;
		return NEXT_STEP;
	}
	if (!copy_field(r, "receipt", c->token, sizeof(c->token)) ||
		!copy_field(r, "result_path", c->path, sizeof(c->path)) || c->path[0] != '/')
		return malformed(cl, out);
	c->step = LG_STEP_RESULT;
	c->attempts = 0;
	c->t_next = now + cl->poll;
	c->plain_poll = 1;
	return NEXT_STEP;
}

/* A result's 200: the user's outcome, or "queued" and another poll (up to --max-polls). */
static enum next_action
judge_result(struct lg_client *cl, struct lg_conn *c, const struct lg_http_resp *r, uint64_t now,
	enum lg_outcome *out)
{
	if (!queued(cl, c, r, out))
		return NEXT_DONE;
	/* After a 410 a result that stays unknown means the user holds nothing. */
	if (c->checking && ++c->polls >= LG_CHECK_POLLS) {
		*out = LG_OUT_SOLD_OUT;
		return NEXT_DONE;
	}
	if (!c->checking && ++c->polls >= cl->o->max_polls) {
		*out = LG_OUT_STILL_QUEUED;
		return NEXT_DONE;
	}
	/* Answered: a 429 of the poll limit before it is no longer "in a row". */
	c->attempts = 0;
	c->t_next = now + queued_wait(cl, r);
	c->plain_poll = c->t_next == now + cl->poll;
	return NEXT_STEP;
}

/*
 * Decides what a well-formed answer r to c's step means (docs/api.md's flow), counting
 * answers an honest client should not get as unexpected.
 */
static enum next_action
judge(struct lg_client *cl, struct lg_conn *c, const struct lg_http_resp *r, uint64_t now,
	enum lg_outcome *out)
{
	const struct lg_opts *o = cl->o;
	unsigned s = r->status;

	*out = LG_OUT_REFUSED;
	c->plain_poll = 0;
	if (c->step == LG_STEP_HEALTHZ) {
		/* A reserve may also be told 503 "busy" when the link to the control plane is
		 * backed up (docs/api.md): the data plane's backpressure, counted by status. */
		if (s != (lg_mode_reserve(o->mode) ? 202u : 200u) &&
			!(lg_mode_reserve(o->mode) && s == 503))
			cl->st.unexpected_status++;
		return NEXT_DONE;
	}
	if (s == 410 && c->step == LG_STEP_RESERVE) {
		/* docs/api.md: a reserve resent after its answer was lost (or a second click) may
		 * be refused 410 while the first attempt holds an item; ask the result with the
		 * purchase token before taking the 410 for sold out. */
		c->checking = 1;
		return poll_result(cl, c, now, 0);
	}
	if (s == 410) {
		*out = LG_OUT_SOLD_OUT;
		return NEXT_DONE;
	}
	/* 425: a token before the sale (or its pre-queue) opens, a reserve while the draw runs. */
	if (is_retry_status(s) && !(s == 425 && c->step == LG_STEP_RESULT)) {
		if (++c->attempts > retry_limit(cl, c)) {
			*out = LG_OUT_GAVE_UP;
			return NEXT_DONE;
		}
		c->t_next = now + retry_wait(cl, c, r->retry_after);
		return NEXT_RETRY;
	}
	if (c->step == LG_STEP_TOKEN && s == 200)
		return judge_token(cl, c, r, now, out);
	if (c->step == LG_STEP_RESERVE && s == 200)
		return judge_known_buyer(cl, c, r, now, out);
	if (c->step == LG_STEP_RESERVE && s == 202)
		return judge_reserved(cl, c, r, now, out);
	if (c->step == LG_STEP_RESULT && s == 200)
		return judge_result(cl, c, r, now, out);
	cl->st.unexpected_status++;
	return NEXT_DONE;
}

/* The whole answer and its FIN are in: check it, count it and decide what comes next. */
void
lg_judge_response(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	struct lg_http_resp r;
	enum lg_http_err e = lg_http_parse_response(c->resp, c->resp_len, &r);
	enum lg_outcome out = LG_OUT_CONN_FAILED;
	enum next_action next = NEXT_DONE;
	struct lg_flood_stats *fs = lg_state_flood_stats(cl, c);

	if (unlikely(fs != NULL)) {
		fs->answered++;
		if (e != LG_HTTP_OK) {
			fs->malformed++;
		} else {
			fs->status[r.status < LG_STATUS_MAX ? r.status : 0]++;
			if (!lg_flood_answer_ok(c->step, &r))
				fs->unexpected++;
			else if (r.status == 200 && !cl->have_reserve_path &&
				 copy_field(&r, "reserve_path", c->path, sizeof(c->path)) &&
				 c->path[0] == '/')
				learn_reserve_path(cl, c->path);
		}
		c->verdict = 2; /* one request per flood connection */
		return;
	}
	cl->st.responses++;
	lg_hist_add(&cl->st.req_lat, now - c->t_req);
	if (e != LG_HTTP_OK) {
		cl->st.malformed_http++;
	} else {
		cl->st.status[r.status < LG_STATUS_MAX ? r.status : 0]++;
		next = judge(cl, c, &r, now, &out);
	}
	/* A kept client answered with Connection: close (the data plane's table was full): the
	 * rest of its requests go on a new connection (lg_connect_closed()). */
	if (lg_mode_kept(cl->o->mode)) {
		cl->st.kept_closed++;
		c->left--;
		c->user += lg_mode_reserve(cl->o->mode);
	}
	/* Remembered until our FIN is acknowledged; polls reuse this slot afterwards. */
	c->verdict = (uint8_t)(next == NEXT_DONE ? 2 + out : 1);
}

void
lg_judge_kept(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	struct lg_http_resp r;
	enum lg_http_err e = lg_http_parse_kept(c->resp, c->resp_len, &r);
	enum lg_outcome out;

	cl->st.responses++;
	cl->st.kept_answers++;
	lg_hist_add(&cl->st.req_lat, now - c->t_req);
	if (e != LG_HTTP_OK) {
		cl->st.malformed_http++;
	} else {
		cl->st.status[r.status < LG_STATUS_MAX ? r.status : 0]++;
		judge(cl, c, &r, now, &out);
	}
}

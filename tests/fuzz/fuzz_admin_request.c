/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the admin socket's request parser (admin/admin_request.c:
 * admin_parse() and admin_join()), which reads every line a client of the admin socket sends
 * (docs/testing.md).
 *
 * The input is parsed as one request line (up to a NUL byte), and the contract checked: 0 with
 * every value of the command in range, or -EINVAL with one line of message and the request
 * zeroed. Then its NUL-separated parts are taken as the words of a command line: admin_join()
 * must write a line that parses exactly as the same words quoted another way (each in single
 * quotes, or in double quotes with \" and \\), and the secret of "keys auth-set" never appears
 * in a message.
 */
#include <errno.h>
#include <stdbool.h>

#include "admin/admin_request.h"
#include "tests/fuzz/fuzz.h"

/* What a caller relies on after a 0 result: the command's values in their ranges. */
static void
check_request(const struct admin_req *req)
{
	char err[ADMIN_ERR_MAX], text[ADMIN_RULE_TEXT_MAX];
	struct admin_rule back;

	FUZZ_CHECK(strcmp(admin_cmd_name(req->cmd), "?") != 0);
	switch (req->cmd) {
	case ADMIN_EVENT_CREATE:
		FUZZ_CHECK(admin_event_check(&req->event, err, sizeof(err)) == 0);
		FUZZ_CHECK(req->event.id != 0 && req->event.name[0] != '\0' &&
			   memchr(req->event.name, '\0', sizeof(req->event.name)) != NULL);
		break;
	case ADMIN_EVENT_PREHEAT:
	case ADMIN_EVENT_OPEN:
	case ADMIN_EVENT_CLOSE:
	case ADMIN_EVENT_SHOW:
	case ADMIN_RECONCILE:
		FUZZ_CHECK(req->event_id != 0);
		FUZZ_CHECK(!req->force || req->repair);
		break;
	case ADMIN_KEYS_AUTH_SET:
		FUZZ_CHECK(
			req->secret_len >= ADMIN_SECRET_MIN && req->secret_len <= ADMIN_SECRET_MAX);
		break;
	case ADMIN_RULES_ADD:
	case ADMIN_RULES_DEL:
		/* A rule writes as a value that parses back to the same rule. */
		FUZZ_CHECK(admin_rule_value(&req->rule, text, sizeof(text)) > 0);
		FUZZ_CHECK(admin_rule_parse(admin_rule_kind_name(req->rule.kind), text, &back, err,
				   sizeof(err)) == 0);
		FUZZ_CHECK(memcmp(&back, &req->rule, sizeof(back)) == 0);
		break;
	case ADMIN_LIMITS_SET:
		FUZZ_CHECK(req->limits_given != 0 && req->limits_given < 16);
		FUZZ_CHECK(req->limits.ip_rate <= ADMIN_RATE_MAX &&
			   req->limits.user_rate <= ADMIN_RATE_MAX &&
			   req->limits.device_rate <= ADMIN_RATE_MAX);
		FUZZ_CHECK(req->limits.ip_burst <= ADMIN_BURST_MAX &&
			   req->limits.user_burst <= ADMIN_BURST_MAX &&
			   req->limits.device_burst <= ADMIN_BURST_MAX);
		FUZZ_CHECK(req->limits.event_forward_per_s <= ADMIN_FORWARD_MAX);
		break;
	case ADMIN_SESSION_TOKEN:
		FUZZ_CHECK(req->user >= 1 && req->user <= ADMIN_USER_MAX);
		FUZZ_CHECK(req->ttl_s >= 1 && req->ttl_s <= ADMIN_TTL_MAX_S);
		break;
	case ADMIN_ORDER_PAY:
		FUZZ_CHECK(req->order_id >= 1 && req->order_id <= ADMIN_ORDER_MAX);
		break;
	default:
		break;
	}
}

/* Parses line and checks the contract; err receives the message. */
static int
parse(const char *line, struct admin_req *req, char *err)
{
	static const struct admin_req zero;
	int rc;

	err[0] = '\0';
	memset(req, 0xa5, sizeof(*req));
	rc = admin_parse(line, req, err, ADMIN_ERR_MAX);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc == 0) {
		check_request(req);
		return rc;
	}
	FUZZ_CHECK(memcmp(req, &zero, sizeof(zero)) == 0);
	FUZZ_CHECK(err[0] != '\0' && memchr(err, '\0', ADMIN_ERR_MAX) != NULL);
	FUZZ_CHECK(strpbrk(err, "\r\n") == NULL);
	return rc;
}

/* word in quotes that admin_parse() reads back as word; returns the end of what was written. */
static char *
quote_other_way(char *p, const char *word)
{
	if (strchr(word, '\'') == NULL) {
		size_t n = strlen(word);

		*p++ = '\'';
		memcpy(p, word, n);
		p += n;
		*p++ = '\'';
		return p;
	}
	*p++ = '"';
	for (; *word != '\0'; word++) {
		if (*word == '"' || *word == '\\')
			*p++ = '\\';
		*p++ = *word;
	}
	*p++ = '"';
	return p;
}

/*
 * The secret of keys auth-set, which a message may not show, when it cannot be in a message for
 * another reason: hex digits with a letter, as no message's own text has 8 of (the numbers in
 * messages have no letter), and in no other word of the request (which a message may quote).
 */
static bool
secret_to_hide(int argc, char **argv)
{
	const char *s;
	size_t len;

	if (argc < 4 || strcmp(argv[0], "keys") != 0 || strcmp(argv[1], "auth-set") != 0)
		return false;
	s = argv[3];
	len = strlen(s);
	if (len < 8 || strspn(s, "0123456789abcdefABCDEF") != len || strspn(s, "0123456789") == len)
		return false;
	for (int i = 0; i < argc; i++)
		if (i != 3 && strstr(argv[i], s) != NULL)
			return false;
	return true;
}

/* The NUL-separated parts of the input as words: admin_join() and another quoting agree. */
static void
check_join(const uint8_t *data, size_t size)
{
	char *copy = fuzz_cstr(data, size), *argv[ADMIN_WORDS_MAX + 2];
	char *joined = malloc(ADMIN_LINE_MAX),
	     *other = malloc(2 * size + 3 * (ADMIN_WORDS_MAX + 2) + 1), *o = other;
	char err1[ADMIN_ERR_MAX], err2[ADMIN_ERR_MAX];
	struct admin_req req1, req2;
	int argc = 0, n, rc1, rc2;

	FUZZ_CHECK(joined != NULL && other != NULL);
	for (size_t i = 0; i < size && argc < ADMIN_WORDS_MAX + 2; i += strlen(copy + i) + 1)
		argv[argc++] = copy + i;
	n = admin_join(argc, argv, joined, ADMIN_LINE_MAX, err1, sizeof(err1));
	FUZZ_CHECK(n == -EINVAL || n == -ENOSPC || (n >= 0 && n < ADMIN_LINE_MAX));
	if (n < 0)
		goto out;
	FUZZ_CHECK((size_t)n == strlen(joined));
	for (int i = 0; i < argc; i++) {
		if (i > 0)
			*o++ = ' ';
		o = quote_other_way(o, argv[i]);
	}
	*o = '\0';
	if (o - other >= ADMIN_LINE_MAX - 1)
		goto out; /* refused as too long, where the joined line is not */
	rc1 = parse(joined, &req1, err1);
	rc2 = parse(other, &req2, err2);
	if (rc1 != rc2 || strcmp(err1, err2) != 0)
		fprintf(stderr, "fuzz: joined: %s\n  -> %d %s\nother:  %s\n  -> %d %s\n", joined,
			rc1, err1, other, rc2, err2);
	FUZZ_CHECK(rc1 == rc2 && strcmp(err1, err2) == 0);
	FUZZ_CHECK(memcmp(&req1, &req2, sizeof(req1)) == 0);
	if (rc1 != 0 && secret_to_hide(argc, argv))
		FUZZ_CHECK(strstr(err1, argv[3]) == NULL);
out:
	free(other);
	free(joined);
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = fuzz_cstr(data, size), err[ADMIN_ERR_MAX];
	struct admin_req req;

	parse(line, &req, err);
	check_join(data, size);
	free(line);
	return 0;
}

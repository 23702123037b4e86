/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/json_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/parse.h"

static void
jput(struct json_writer *j, const char *s, size_t n)
{
	/* One byte stays free for the '\n' of jw_end() and one for the NUL. */
	if (j->overflow || j->len + n + 2 > j->cap) {
		j->overflow = true;
		return;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void
jputs(struct json_writer *j, const char *s)
{
	jput(j, s, strlen(s));
}

/*
 * The length of the UTF-8 sequence at p (RFC 3629 §4: no overlong forms, no surrogates,
 * nothing past U+10FFFF), 1..4; 0 when p does not start one. p is NUL-terminated, and a NUL is
 * never a continuation byte, so this never reads past it.
 */
static size_t
utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

static void
jquoted(struct json_writer *j, const char *s)
{
	static const char hexd[] = "0123456789abcdef";

	jput(j, "\"", 1);
	for (const char *p = s; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;
		char esc[6] = {'\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15]};
		size_t n = utf8_len((const unsigned char *)p);

		if (c == '"' || c == '\\') {
			esc[1] = (char)c;
			jput(j, esc, 2);
		} else if (c < 0x20 || c == 0x7f) {
			jput(j, esc, 6);
		} else if (n == 0) {
			/* JSON text is UTF-8 (RFC 8259 §8.1): a byte that is not, such as an
			 * operator's mistyped word quoted back or a word cut at 48 bytes, becomes
			 * U+FFFD, the replacement character. */
			jput(j, "\\ufffd", 6);
		} else {
			jput(j, p, n);
			p += n - 1;
		}
	}
	jput(j, "\"", 1);
}

/* The comma and key before a value. */
static void
jkey(struct json_writer *j, const char *key)
{
	if (j->comma)
		jput(j, ",", 1);
	if (key != NULL) {
		jquoted(j, key);
		jput(j, ":", 1);
	}
	j->comma = true;
}

void
jw_init(struct json_writer *j, char *buf, size_t cap)
{
	*j = (struct json_writer){.buf = buf, .cap = cap};
	if (cap > 0)
		buf[0] = '\0';
}

void
jw_open(struct json_writer *j, const char *key, char bracket)
{
	jkey(j, key);
	jput(j, bracket == '[' ? "[" : "{", 1);
	j->comma = false;
}

void
jw_close(struct json_writer *j, char bracket)
{
	jput(j, bracket == ']' ? "]" : "}", 1);
	j->comma = true;
}

void
jw_str(struct json_writer *j, const char *key, const char *val)
{
	jkey(j, key);
	jquoted(j, val);
}

void
jw_u64(struct json_writer *j, const char *key, uint64_t v)
{
	char num[24];

	jkey(j, key);
	snprintf(num, sizeof(num), "%" PRIu64, v);
	jputs(j, num);
}

void
jw_i64(struct json_writer *j, const char *key, int64_t v)
{
	char num[24];

	jkey(j, key);
	snprintf(num, sizeof(num), "%" PRId64, v);
	jputs(j, num);
}

void
jw_bool(struct json_writer *j, const char *key, bool v)
{
	jkey(j, key);
	jputs(j, v ? "true" : "false");
}

void
jw_double(struct json_writer *j, const char *key, double v, int decimals)
{
	char num[48];

	jkey(j, key);
	if (!isfinite(v)) {
		jputs(j, "null");
		return;
	}
	if (decimals < 0)
		decimals = 0;
	if (decimals > 9)
		decimals = 9;
	/* %.*f of a huge value can be long; JSON takes it as it is. */
	if (snprintf(num, sizeof(num), "%.*f", decimals, v) >= (int)sizeof(num)) {
		j->overflow = true;
		return;
	}
	jputs(j, num);
}

void
jw_time(struct json_writer *j, const char *key, uint64_t ms)
{
	char t[40];

	parse_time_format(ms, t, sizeof(t));
	jw_str(j, key, t);
}

int
jw_end(struct json_writer *j)
{
	/* jput() kept room for the '\n' and the NUL, unless nothing was ever written. */
	if (j->overflow || j->len + 2 > j->cap)
		return -ENOSPC;
	j->buf[j->len++] = '\n';
	j->buf[j->len] = '\0';
	return (int)j->len;
}

int
jw_write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");
	int rc = 0;

	if (f == NULL)
		return -errno;
	if (fwrite(text, 1, len, f) != len)
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

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

static void
jquoted(struct json_writer *j, const char *s)
{
	static const char hexd[] = "0123456789abcdef";

	jput(j, "\"", 1);
	for (const char *p = s; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;
		char esc[6] = {'\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15]};

		if (c == '"' || c == '\\') {
			esc[1] = (char)c;
			jput(j, esc, 2);
		} else if (c < 0x20 || c == 0x7f) {
			jput(j, esc, 6);
		} else {
			jput(j, p, 1);
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

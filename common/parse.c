/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"

/* ---------------------------------------------------------------------------------------- */
/* Numbers                                                                                   */

int
parse_u64_prefix(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	bool over = false;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (__builtin_mul_overflow(v, 10, &v) ||
			__builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			over = true;
	}
	*end = p;
	if (over)
		return -ERANGE;
	*out = v;
	return 0;
}

int
parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int rc = parse_u64_prefix(s, &end, &v);

	if (rc == -EINVAL || *end != '\0')
		return -EINVAL;
	if (rc != 0)
		return rc;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int
parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	/* strtod() alone would also take spaces, signs, hex, "inf" and "nan". */
	if (*s < '0' || *s > '9' || s[strspn(s, "0123456789.eE+-")] != '\0')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Durations                                                                                 */

static const struct {
	const char *name;
	uint64_t ms;
} parse_units[] = {
	{"ms", 1},
	{"s", 1000},
	{"m", 60000},
	{"h", 3600000},
	{"d", 86400000},
};

#define PARSE_N_UNITS (sizeof(parse_units) / sizeof(parse_units[0]))

int
parse_duration(const char *s, uint64_t *out_ms)
{
	const char *p = s;
	uint64_t total = 0;

	if (strcmp(s, "0") == 0) {
		*out_ms = 0;
		return 0;
	}
	if (*p == '\0')
		return -EINVAL;
	while (*p != '\0') {
		uint64_t v, unit = 0;
		const char *end;

		if (parse_u64_prefix(p, &end, &v) != 0)
			return -EINVAL;
		p = end;
		/* "ms" first: it starts with "m". */
		for (unsigned i = 0; i < PARSE_N_UNITS; i++) {
			size_t ul = strlen(parse_units[i].name);

			if (strncmp(p, parse_units[i].name, ul) == 0) {
				unit = parse_units[i].ms;
				p += ul;
				break;
			}
		}
		if (unit == 0 || __builtin_mul_overflow(v, unit, &v) ||
			__builtin_add_overflow(total, v, &total))
			return -EINVAL;
	}
	*out_ms = total;
	return 0;
}

void
parse_duration_format(uint64_t ms, char *buf, size_t len)
{
	if (ms == 0) {
		snprintf(buf, len, "0");
		return;
	}
	for (int i = (int)PARSE_N_UNITS - 1; i >= 0; i--) {
		if (ms % parse_units[i].ms == 0) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(ms / parse_units[i].ms),
				parse_units[i].name);
			return;
		}
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Times                                                                                     */

static bool
parse_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t
parse_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + (int64_t)doe - 719468;
}

static void
parse_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* Reads exactly n digits. */
static bool
parse_digits(const char **p, int n, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return false;
		v = v * 10 + (unsigned)((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return true;
}

int
parse_time(const char *s, uint64_t *out_ms)
{
	static const unsigned mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	unsigned y, mo, d, h, mi, sec, ms = 0, oh = 0, om = 0;
	const char *p = s;
	int sign = 0;
	uint64_t v;

	if (parse_u64(s, 0, UINT64_MAX, &v) == 0) {
		if (v > PARSE_TIME_MAX_S)
			return -EINVAL;
		*out_ms = v * 1000;
		return 0;
	}
	/* RFC 3339 section 5.6: full-date "T" full-time, with "T" and "Z" in either case. */
	if (!parse_digits(&p, 4, &y) || *p++ != '-' || !parse_digits(&p, 2, &mo) || *p++ != '-' ||
		!parse_digits(&p, 2, &d) || (*p != 'T' && *p != 't'))
		return -EINVAL;
	p++;
	if (!parse_digits(&p, 2, &h) || *p++ != ':' || !parse_digits(&p, 2, &mi) || *p++ != ':' ||
		!parse_digits(&p, 2, &sec))
		return -EINVAL;
	if (*p == '.') {
		int n = 0;

		/* Digits past the millisecond are dropped: nothing here is finer than that. */
		for (p++; isdigit((unsigned char)*p); p++, n++) {
			if (n < 3)
				ms = ms * 10 + (unsigned)(*p - '0');
		}
		if (n == 0)
			return -EINVAL;
		for (; n < 3; n++)
			ms *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '+' ? 1 : -1;
		if (!parse_digits(&p, 2, &oh) || *p++ != ':' || !parse_digits(&p, 2, &om) ||
			oh > 23 || om > 59)
			return -EINVAL;
	} else {
		return -EINVAL; /* a time without an offset is ambiguous */
	}
	if (*p != '\0')
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59)
		return -EINVAL;
	if (d > mdays[mo - 1] + (mo == 2 && parse_leap(y)))
		return -EINVAL;

	int64_t t = parse_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;

	/* The offset says how far local time is ahead of UTC. */
	t -= (int64_t)sign * (oh * 3600 + om * 60);
	if (t < 0 || (uint64_t)t > PARSE_TIME_MAX_S)
		return -EINVAL;
	*out_ms = (uint64_t)t * 1000 + ms;
	return 0;
}

void
parse_time_format(uint64_t ms, char *buf, size_t len)
{
	int64_t secs = (int64_t)(ms / 1000), y;
	int64_t days = secs / 86400, rem = secs % 86400;
	unsigned m, d;

	parse_civil_from_days(days, &y, &m, &d);
	if (ms % 1000 != 0)
		snprintf(buf, len, "%04lld-%02u-%02uT%02u:%02u:%02u.%03uZ", (long long)y, m, d,
			(unsigned)(rem / 3600), (unsigned)(rem / 60 % 60), (unsigned)(rem % 60),
			(unsigned)(ms % 1000));
	else
		snprintf(buf, len, "%04lld-%02u-%02uT%02u:%02u:%02uZ", (long long)y, m, d,
			(unsigned)(rem / 3600), (unsigned)(rem / 60 % 60), (unsigned)(rem % 60));
}

/* ---------------------------------------------------------------------------------------- */
/* Addresses                                                                                 */

/* Four octets at s; *end is set after the last one. */
static int
parse_ipv4_until(const char *s, const char **end, uint32_t *out)
{
	uint32_t addr = 0;
	const char *p = s;

	for (int i = 0; i < 4; i++) {
		unsigned v = 0;
		int digits = 0;

		if (i > 0 && *p++ != '.')
			return -EINVAL;
		/* A leading zero would read as octal to inet_aton(): refuse the ambiguity. */
		if (p[0] == '0' && isdigit((unsigned char)p[1]))
			return -EINVAL;
		while (isdigit((unsigned char)*p) && digits < 4) {
			v = v * 10 + (unsigned)(*p++ - '0');
			digits++;
		}
		if (digits == 0 || digits > 3 || v > 255)
			return -EINVAL;
		addr = addr << 8 | v;
	}
	*end = p;
	*out = addr;
	return 0;
}

int
parse_ipv4(const char *s, uint32_t *out)
{
	const char *end;
	uint32_t addr;

	if (parse_ipv4_until(s, &end, &addr) != 0 || *end != '\0')
		return -EINVAL;
	*out = addr;
	return 0;
}

int
parse_cidr(const char *s, uint32_t *addr, unsigned *prefix)
{
	const char *end;
	uint64_t len = 32;
	uint32_t a;

	if (parse_ipv4_until(s, &end, &a) != 0 || (*end != '\0' && *end != '/'))
		return -EINVAL;
	if (*end == '/' && parse_u64(end + 1, 0, 32, &len) != 0)
		return -ERANGE;
	if ((a & ~parse_prefix_mask((unsigned)len)) != 0) {
		*addr = a & parse_prefix_mask((unsigned)len);
		*prefix = (unsigned)len;
		return -EDOM;
	}
	*addr = a;
	*prefix = (unsigned)len;
	return 0;
}

int
parse_ipv4_n(const char *s, size_t len, uint32_t *out)
{
	char buf[16];

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return parse_ipv4(buf, out);
}

int
parse_ipv6_n(const char *s, size_t len, uint8_t out[16])
{
	uint16_t g[8];
	int n = 0, gap = -1;
	size_t i = 0;

	/* The longest text form: 6 groups of 4, 7 colons... with a dotted tail, 45 bytes. */
	if (len < 2 || len > 45)
		return -EINVAL;
	if (s[0] == ':') {
		if (s[1] != ':')
			return -EINVAL;
		gap = 0;
		i = 2;
	}
	while (i < len) {
		size_t start = i;
		unsigned v = 0;
		int d = 0, h;

		while (i < len && d < 5 && (h = hex_digit(s[i])) >= 0) {
			v = v << 4 | (unsigned)h;
			i++;
			d++;
		}
		if (i < len && s[i] == '.') {
			/* RFC 4291 §2.2 form 3: the last two groups as an IPv4 address. */
			uint32_t a;

			if (n > 6 || parse_ipv4_n(s + start, len - start, &a) != 0)
				return -EINVAL;
			g[n++] = (uint16_t)(a >> 16);
			g[n++] = (uint16_t)a;
			break;
		}
		if (d == 0 || d > 4 || n == 8)
			return -EINVAL;
		g[n++] = (uint16_t)v;
		if (i == len)
			break;
		if (s[i++] != ':' || i == len)
			return -EINVAL;
		if (s[i] == ':') {
			if (gap >= 0)
				return -EINVAL;
			gap = n;
			i++;
		}
	}
	if (gap < 0 ? n != 8 : n > 7)
		return -EINVAL;
	memset(out, 0, 16);
	for (int k = 0; k < n; k++) {
		/* Groups after the gap go to the end. */
		int at = gap >= 0 && k >= gap ? k + 8 - n : k;

		out[2 * at] = (uint8_t)(g[k] >> 8);
		out[2 * at + 1] = (uint8_t)g[k];
	}
	return 0;
}

int
parse_cidr6(const char *s, uint8_t addr[16], unsigned *prefix)
{
	const char *slash = strchr(s, '/');
	size_t alen = slash != NULL ? (size_t)(slash - s) : strlen(s);
	uint64_t len = 128;
	uint8_t a[16];
	bool host_bits = false;

	if (parse_ipv6_n(s, alen, a) != 0)
		return -EINVAL;
	if (slash != NULL && parse_u64(slash + 1, 0, 128, &len) != 0)
		return -ERANGE;
	for (unsigned bit = (unsigned)len; bit < 128; bit++) {
		uint8_t m = (uint8_t)(0x80u >> (bit % 8));

		if (a[bit / 8] & m) {
			host_bits = true;
			a[bit / 8] &= (uint8_t)~m;
		}
	}
	memcpy(addr, a, 16);
	*prefix = (unsigned)len;
	return host_bits ? -EDOM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Bytes and text                                                                            */

int
parse_hex(const char *s, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = strlen(s);

	/* Where the first wrong character is, or how many digits, for the caller's message. */
	for (size_t i = 0; i < n; i++) {
		if (hex_digit(s[i]) < 0) {
			*len = i;
			return -EINVAL;
		}
	}
	if (n % 2 != 0 || n / 2 > cap) {
		*len = n;
		return -ERANGE;
	}
	*len = n / 2;
	return hex_decode(s, n, out, n / 2);
}

long
parse_text_check(const char *s, size_t len, bool *ctl)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		unsigned c = p[i], n, cp, min;

		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f) {
				*ctl = true;
				return (long)i;
			}
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1, cp = c & 0x1f, min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2, cp = c & 0x0f, min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3, cp = c & 0x07, min = 0x10000;
		} else {
			*ctl = false;
			return (long)i;
		}
		if (i + n >= len) {
			*ctl = false;
			return (long)i;
		}
		for (unsigned k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80) {
				*ctl = false;
				return (long)i;
			}
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
			*ctl = false;
			return (long)i;
		}
		if (cp >= 0x80 && cp <= 0x9f) {
			*ctl = true;
			return (long)i;
		}
		i += n + 1;
	}
	return -1;
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/common/opt_table.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <string.h>

#include "common/parse.h"
#include "common/secret_input.h"

/* getopt_long()'s value of entry i without a short name. */
#define LONG_ONLY 256

/* Appends s to err (errlen bytes, NUL-terminated), its first "%s" replaced by value. */
static void
say(char *err, size_t errlen, const char *s, const char *value)
{
	size_t used = strlen(err);
	const char *v = strstr(s, "%s");

	if (v == NULL)
		snprintf(err + used, errlen - used, "%s", s);
	else
		snprintf(err + used, errlen - used, "%.*s%s%s", (int)(v - s), s, value, v + 2);
}

/* Stores v into the unsigned integer of size bytes at p. */
static void
store_uint(void *p, size_t size, uint64_t v)
{
	switch (size) {
	case 1:
		*(uint8_t *)p = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)p = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)p = (uint32_t)v;
		break;
	default:
		*(uint64_t *)p = v;
		break;
	}
}

/* Takes value into dst by e. Returns 0 or a negative errno (err may hold a message). */
static int
take(const struct opt_table_entry *e, const char *value, void *dst, char *err, size_t errlen)
{
	char *p = (char *)dst + e->off;
	uint64_t u;
	int rc;

	switch (e->kind) {
	case OPT_TABLE_FLAG:
		*(bool *)p = true;
		return 0;
	case OPT_TABLE_UINT:
		rc = parse_u64(value, e->min, e->max, &u);
		if (rc == 0)
			store_uint(p, e->size, u);
		return rc;
	case OPT_TABLE_DOUBLE:
		return parse_double(value, e->dmin, e->dmax, (double *)p);
	case OPT_TABLE_IPV4:
		return parse_ipv4(value, (uint32_t *)p);
	case OPT_TABLE_STRING:
		*(const char **)p = value;
		return 0;
	case OPT_TABLE_HEX:
		rc = parse_hex(value, (uint8_t *)p, e->size, (size_t *)((char *)dst + e->len_off));
		return rc == 0 && *(size_t *)((char *)dst + e->len_off) < e->min ? -EINVAL : rc;
	case OPT_TABLE_SECRET_FILE: {
		char name[64];

		snprintf(name, sizeof(name), "--%s", e->name);
		return secret_read_hex(value, name, (uint8_t *)p, (size_t)e->min, e->size,
			(size_t *)((char *)dst + e->len_off), err, errlen);
	}
	case OPT_TABLE_FN:
		return e->fn(e, value, dst, err, errlen);
	default:
		return -EINVAL;
	}
}

/* The getopt_long() values and short options of t into longopts and shorts. */
static void
getopt_tables(const struct opt_table *t, struct option *longopts, char *shorts)
{
	unsigned n = 0, s = 0;

	if (!t->getopt_says)
		shorts[s++] = ':';
	for (unsigned i = 0; i < t->n; i++) {
		const struct opt_table_entry *e = &t->opts[i];
		bool has_arg = e->kind != OPT_TABLE_HELP && e->kind != OPT_TABLE_FLAG;

		if (e->kind == OPT_TABLE_TEXT)
			continue;
		if (e->short_name != 0) {
			shorts[s++] = e->short_name;
			if (has_arg)
				shorts[s++] = ':';
		}
		longopts[n++] = (struct option){e->name, has_arg ? required_argument : no_argument,
			NULL, e->short_name != 0 ? e->short_name : LONG_ONLY + (int)i};
	}
	longopts[n] = (struct option){NULL, 0, NULL, 0};
	shorts[s] = '\0';
}

/* The entry getopt_long() answered c for, or NULL. */
static const struct opt_table_entry *
entry_of(const struct opt_table *t, int c)
{
	if (c >= LONG_ONLY && c < LONG_ONLY + (int)t->n)
		return &t->opts[c - LONG_ONLY];
	for (unsigned i = 0; i < t->n; i++)
		if (t->opts[i].kind != OPT_TABLE_TEXT && t->opts[i].short_name == c)
			return &t->opts[i];
	return NULL;
}

int
opt_table_parse(
	const struct opt_table *t, int argc, char **argv, void *dst, char *err, size_t errlen)
{
	struct option longopts[OPT_TABLE_MAX + 1];
	char shorts[2 + 2 * OPT_TABLE_MAX];
	int c;

	err[0] = '\0';
	if (t->n > OPT_TABLE_MAX) {
		snprintf(
			err, errlen, "%u options, at most %d (a program bug)", t->n, OPT_TABLE_MAX);
		return -1;
	}
	getopt_tables(t, longopts, shorts);
	optind = 0; /* glibc: start over, also inside an argv parsed before */
	opterr = t->getopt_says;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		const struct opt_table_entry *e = entry_of(t, c);

		if (c == ':') {
			snprintf(err, errlen, "%s needs a value", argv[optind - 1]);
			return -1;
		}
		if (e == NULL) {
			if (!t->getopt_says)
				snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
			return -1;
		}
		if (e->kind == OPT_TABLE_HELP)
			return 1;
		if (take(e, optarg, dst, err, errlen) != 0) {
			if (err[0] == '\0') {
				if (t->bad_prefix != NULL)
					say(err, errlen, t->bad_prefix, optarg);
				say(err, errlen, e->bad, optarg);
			}
			return -1;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'%s%s%s", argv[optind],
			t->stray_hint != NULL ? " (" : "",
			t->stray_hint != NULL ? t->stray_hint : "",
			t->stray_hint != NULL ? ")" : "");
		return -1;
	}
	return 0;
}

int
opt_table_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Writes e's line(s) of the help to f, its help from column col. */
static void
usage_entry(const struct opt_table_entry *e, unsigned col, FILE *f)
{
	const char *h = e->help;
	int n;

	if (e->kind == OPT_TABLE_TEXT) {
		fprintf(f, "%s\n", h);
		return;
	}
	n = fprintf(f, "  ");
	if (e->short_name != 0)
		n += fprintf(f, "-%c, ", e->short_name);
	n += fprintf(
		f, "--%s%s%s", e->name, e->arg != NULL ? " " : "", e->arg != NULL ? e->arg : "");
	fprintf(f, "%*s", n < (int)col ? (int)col - n : 2, "");
	for (;;) {
		size_t len = strcspn(h, "\n");

		fprintf(f, "%.*s\n", (int)len, h);
		if (h[len] == '\0')
			break;
		h += len + 1;
		fprintf(f, "%*s", (int)col, "");
	}
}

void
opt_table_usage(const struct opt_table *t, FILE *f)
{
	for (unsigned i = 0; i < t->n; i++)
		usage_entry(&t->opts[i], t->help_col, f);
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/config.h"
#include "common/config_int.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "common/log.h"
#include "common/parse.h"

#define CFG_MAX_KEYS   64
#define CFG_QUOTE_MAX  96 /* a quoted value in a message: longer ones are cut */
#define CFG_LABEL_MAX  64

/* ---------------------------------------------------------------------------------------- */
/* Small helpers                                                                             */

/* Writes s in double quotes, control bytes as \xNN, cut with "..." when long. */
static const char *
cfg_quote(char *buf, size_t len, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	buf[o++] = '"';
	for (size_t i = 0; s[i] != '\0' && o + 8 < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (o >= CFG_QUOTE_MAX) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 0xf];
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

/* Edit distance, for "did you mean": small strings only, else a large number. */
static unsigned
cfg_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[CFG_LABEL_MAX + 1];

	if (la > CFG_LABEL_MAX || lb > CFG_LABEL_MAX)
		return 1000;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* A typo is at most two edits away, and not a whole different short word. */
static bool
cfg_close_enough(const char *typed, const char *known)
{
	unsigned d = cfg_distance(typed, known);

	return d <= 2 && d < strlen(known) / 2 + 1;
}

static bool
cfg_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};

	for (unsigned i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return true;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return true;
		}
	}
	return false;
}

/* ---------------------------------------------------------------------------------------- */
/* Keys: describe, check and store one value                                                 */

/*
 * The per-type halves of cfg_apply() too long to sit in its switch. Each gets
 * the value and its quoted form q, and returns 0 or -EINVAL with the reason.
 */
static int
cfg_apply_string(const struct cfg_key *k, uint8_t *field, const char *value, const char *q,
	char *why, size_t whylen)
{
	size_t len = strlen(value);

	/* Quotes are optional: "Big Sale" and Big Sale are the same text. */
	if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
		value++;
		len -= 2;
	}
	char text[len + 1];
	bool ctl;

	memcpy(text, value, len);
	text[len] = '\0';
	if (parse_text_check(text, len, &ctl) >= 0) {
		snprintf(why, whylen,
			"%s is not valid UTF-8 text (control characters and malformed "
			"bytes are refused)",
			q);
		return -EINVAL;
	}
	if (len < k->min || len > cfg_string_max(k)) {
		if (len == 0)
			snprintf(why, whylen, "is empty (expected %llu..%zu bytes of text)",
				(unsigned long long)k->min, cfg_string_max(k));
		else
			snprintf(why, whylen, "%s is %zu bytes long (expected %llu..%zu)", q, len,
				(unsigned long long)k->min, cfg_string_max(k));
		return -EINVAL;
	}
	memset(field, 0, k->size);
	memcpy(field, text, len);
	return 0;
}

static const char *
cfg_skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* "80, 8080": distinct ports 1..65535, at least min (or 1) and at most max of them. */
static int
cfg_apply_ports(const struct cfg_key *k, uint8_t *obj, const char *value, const char *q, char *why,
	size_t whylen)
{
	static const char example[] = "expected numbers separated by commas, such as 80, 8080";
	uint64_t least = k->min ? k->min : 1;
	uint16_t ports[k->max];
	const char *p = cfg_skip_blanks(value);
	unsigned n = 0;

	while (*p != '\0') {
		const char *end;
		uint64_t v;
		int rc = parse_u64_prefix(p, &end, &v);

		if (rc == -EINVAL) {
			snprintf(why, whylen, "%s is not a list of ports (%s)", q, example);
			return -EINVAL;
		}
		if (rc != 0 || v < 1 || v > 65535) {
			snprintf(why, whylen, "port %.*s is out of range 1..65535", (int)(end - p),
				p);
			return -EINVAL;
		}
		for (unsigned i = 0; i < n; i++) {
			if (ports[i] == v) {
				snprintf(why, whylen, "port %llu is listed twice",
					(unsigned long long)v);
				return -EINVAL;
			}
		}
		if (n == k->max) {
			snprintf(why, whylen, "%s lists more than %llu ports", q,
				(unsigned long long)k->max);
			return -EINVAL;
		}
		ports[n++] = (uint16_t)v;
		p = cfg_skip_blanks(end);
		if (*p == ',') {
			p = cfg_skip_blanks(p + 1);
			if (*p == '\0' || *p == ',') {
				snprintf(why, whylen, "%s has an empty entry (%s)", q, example);
				return -EINVAL;
			}
		} else if (*p != '\0') {
			snprintf(why, whylen, "%s is not a list of ports (%s)", q, example);
			return -EINVAL;
		}
	}
	if (n < least) {
		snprintf(why, whylen, "lists no port (expected at least %llu, such as 80)",
			(unsigned long long)least);
		return -EINVAL;
	}
	memset(obj + k->offset, 0, k->size);
	memcpy(obj + k->offset, ports, n * sizeof(uint16_t));
	cfg_put_count(obj, k->count_offset, n);
	return 0;
}

/* A duration within [min, max] ms, stored in units of unit_ms (which must divide it). */
static int
cfg_apply_duration(const struct cfg_key *k, uint8_t *field, const char *value, const char *q,
	char *why, size_t whylen)
{
	uint64_t unit = k->unit_ms > 1 ? k->unit_ms : 1;
	char lo[32], hi[32];
	uint64_t v;

	if (parse_duration(value, &v) != 0) {
		snprintf(why, whylen,
			"%s is not a duration (expected a number with a unit: ms, s, "
			"m, h or d, such as 30s)",
			q);
		return -EINVAL;
	}
	if (v < k->min || (k->max != 0 && v > k->max) || v / unit > cfg_size_max(k->size)) {
		parse_duration_format(k->min, lo, sizeof(lo));
		if (k->max != 0)
			parse_duration_format(k->max, hi, sizeof(hi));
		else
			snprintf(hi, sizeof(hi), "%llu%s",
				(unsigned long long)cfg_size_max(k->size),
				unit == 1000 ? "s" : "ms");
		snprintf(why, whylen, "%s is out of range %s..%s", q, lo, hi);
		return -EINVAL;
	}
	if (v % unit != 0) {
		snprintf(why, whylen, "%s is not a whole number of %s", q,
			unit == 1000 ? "seconds" : "units");
		return -EINVAL;
	}
	cfg_put_uint(field, k->size, v / unit);
	return 0;
}

/* Exactly 2 * size hex digits. The value may be secret: it is never quoted. */
static int
cfg_apply_hex(const struct cfg_key *k, uint8_t *field, const char *value, char *why, size_t whylen)
{
	size_t len = strlen(value);

	if (len != k->size * 2) {
		snprintf(why, whylen, "expected %zu hex digits (%zu bytes), got %zu characters",
			k->size * 2, k->size, len);
		return -EINVAL;
	}
	if (parse_hex(value, field, k->size, &len) != 0) {
		/* The length is right: the error is a character that is not a hex digit. */
		snprintf(why, whylen,
			"character %zu is not a hex digit (expected %zu of 0-9 and a-f)", len + 1,
			k->size * 2);
		return -EINVAL;
	}
	return 0;
}

/*
 * Parses value for key k and stores it in obj. Returns 0, or -EINVAL with the
 * reason (beginning with the value, unless it is secret) in why.
 */
static int
cfg_apply(const struct cfg_key *k, uint8_t *obj, const char *value, char *why, size_t whylen)
{
	uint8_t *field = obj + k->offset;
	char q[CFG_QUOTE_MAX + 16];
	uint64_t v;

	cfg_quote(q, sizeof(q), value);
	switch (k->type) {
	case CFG_BOOL: {
		int bv;

		if (!cfg_parse_bool(value, &bv)) {
			snprintf(why, whylen, "%s is not a boolean (expected true or false)", q);
			return -EINVAL;
		}
		if (k->size == 1)
			cfg_put_uint(field, 1, (uint64_t)bv);
		else
			memcpy(field, &bv, sizeof(bv));
		break;
	}
	case CFG_UINT: {
		int rc = parse_u64(value, 0, UINT64_MAX, &v);

		if (rc == -EINVAL) {
			snprintf(why, whylen,
				"%s is not a number (expected an integer in %llu..%llu)", q,
				(unsigned long long)k->min, (unsigned long long)cfg_uint_max(k));
			return -EINVAL;
		}
		if (rc != 0 || v < k->min || v > cfg_uint_max(k)) {
			snprintf(why, whylen, "%s is out of range %llu..%llu", rc ? q : value,
				(unsigned long long)k->min, (unsigned long long)cfg_uint_max(k));
			return -EINVAL;
		}
		if ((k->flags & CFG_F_POW2) && (v & (v - 1)) != 0) {
			uint64_t lo = UINT64_C(1) << (63 - __builtin_clzll(v));

			snprintf(why, whylen, "%s is not a power of two (such as %llu or %llu)",
				value, (unsigned long long)lo, (unsigned long long)(lo << 1));
			return -EINVAL;
		}
		cfg_put_uint(field, k->size, v);
		break;
	}
	case CFG_STRING:
		if (cfg_apply_string(k, field, value, q, why, whylen) != 0)
			return -EINVAL;
		break;
	case CFG_IPV4: {
		uint32_t addr;

		if (parse_ipv4(value, &addr) != 0) {
			snprintf(why, whylen, "%s is not an IPv4 address (expected a.b.c.d)", q);
			return -EINVAL;
		}
		addr = htonl(addr); /* stored in network byte order */
		memcpy(field, &addr, 4);
		break;
	}
	case CFG_PORT_LIST:
		if (cfg_apply_ports(k, obj, value, q, why, whylen) != 0)
			return -EINVAL;
		break;
	case CFG_TIME:
		if (parse_time(value, &v) != 0) {
			snprintf(why, whylen,
				"%s is not a time (expected RFC 3339 such as "
				"2026-12-01T10:00:00Z or 2026-12-01T18:00:00+08:00, or Unix "
				"seconds)",
				q);
			return -EINVAL;
		}
		cfg_put_uint(field, k->size, v);
		break;
	case CFG_DURATION:
		if (cfg_apply_duration(k, field, value, q, why, whylen) != 0)
			return -EINVAL;
		break;
	case CFG_HEX:
		if (cfg_apply_hex(k, field, value, why, whylen) != 0)
			return -EINVAL;
		break;
	case CFG_LOGLEVEL: {
		enum log_level l;

		if (log_parse_level(value, &l) != 0) {
			snprintf(why, whylen,
				"%s is not a log level (expected err, warn, notice, "
				"info or debug)",
				q);
			return -EINVAL;
		}
		int li = (int)l;

		memcpy(field, &li, sizeof(li));
		break;
	}
	default:
		snprintf(why, whylen, "has a type this program does not know (a bug)");
		return -EINVAL;
	}
	if (k->flags & CFG_F_MARK_SET) {
		int one = 1;

		memcpy(obj + k->set_offset, &one, sizeof(one));
	}
	return 0;
}

/* Checks the parts of a key's description that the compiler cannot. */
static int
cfg_key_valid(const struct cfg_key *k, char *why, size_t whylen)
{
	bool ok;

	switch (k->type) {
	case CFG_BOOL:
		ok = k->size == 1 || k->size == sizeof(int);
		break;
	case CFG_UINT:
		ok = (k->size == 1 || k->size == 2 || k->size == 4 || k->size == 8) &&
		     cfg_uint_max(k) <= cfg_size_max(k->size) && k->min <= cfg_uint_max(k);
		break;
	case CFG_STRING:
		ok = k->size >= 1 && cfg_string_max(k) < k->size && k->min <= cfg_string_max(k);
		break;
	case CFG_IPV4:
		ok = k->size == 4;
		break;
	case CFG_PORT_LIST:
		ok = k->max >= 1 && k->max <= k->size / sizeof(uint16_t) && k->min <= k->max;
		break;
	case CFG_TIME:
		ok = k->size == 8;
		break;
	case CFG_DURATION:
		ok = (k->size == 4 || k->size == 8) && (k->max == 0 || k->min <= k->max);
		break;
	case CFG_HEX:
		ok = k->size >= 1 && !(k->def != NULL && (k->flags & CFG_F_SECRET));
		break;
	case CFG_LOGLEVEL:
		ok = k->size == sizeof(int);
		break;
	default:
		ok = false;
		break;
	}
	if (ok && (k->flags & CFG_F_REQUIRED) && k->def != NULL)
		ok = false;
	if (!ok)
		snprintf(why, whylen, "key %s: size, bounds or flags do not fit its type", k->name);
	return ok ? 0 : -EINVAL;
}

/* Applies the defaults of a section's keys to obj. Errors are program bugs. */
static int
cfg_apply_defaults(const struct cfg_section *sec, uint8_t *obj, char *why, size_t whylen)
{
	char reason[CFG_WHY_MAX];

	for (size_t i = 0; i < sec->n_keys; i++) {
		const struct cfg_key *k = &sec->keys[i];

		if (cfg_key_valid(k, why, whylen) != 0)
			return -EINVAL;
		if (k->def == NULL)
			continue;
		if (cfg_apply(k, obj, k->def, reason, sizeof(reason)) != 0) {
			snprintf(why, whylen, "default of %s: %.200s", k->name, reason);
			return -EINVAL;
		}
		/* A default is not the operator's choice: keep the "was set" mark clear. */
		if (k->flags & CFG_F_MARK_SET)
			memset(obj + k->set_offset, 0, sizeof(int));
	}
	return 0;
}

static const struct cfg_key *
cfg_find_key(const struct cfg_section *sec, const char *name, size_t *idx)
{
	for (size_t i = 0; i < sec->n_keys; i++) {
		if (strcmp(sec->keys[i].name, name) == 0) {
			*idx = i;
			return &sec->keys[i];
		}
	}
	return NULL;
}

/* ", did you mean "x"?" style hint for an unknown key, or the schema's help. */
static void
cfg_key_hint(const struct cfg_schema *schema, const struct cfg_section *sec, const char *name,
	char *buf, size_t len)
{
	for (size_t i = 0; i < sec->n_keys; i++) {
		if (cfg_close_enough(name, sec->keys[i].name)) {
			snprintf(buf, len, " (did you mean \"%s\"?)", sec->keys[i].name);
			return;
		}
	}
	if (schema->help != NULL)
		snprintf(buf, len, " (%s)", schema->help);
	else
		buf[0] = '\0';
}

static void
cfg_section_hint(const struct cfg_schema *schema, const char *prefix, char *buf, size_t len)
{
	size_t o;

	for (size_t i = 0; i < schema->n_sections; i++) {
		const struct cfg_section *s = &schema->sections[i];

		if (cfg_close_enough(prefix, s->name)) {
			snprintf(buf, len, " (did you mean [%s%s]?)", s->name,
				s->is_array ? ".ID" : "");
			return;
		}
	}
	o = (size_t)snprintf(buf, len, " (known sections:");
	for (size_t i = 0; i < schema->n_sections && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, " [%s%s]", schema->sections[i].name,
			schema->sections[i].is_array ? ".ID" : "");
	if (o < len)
		snprintf(buf + o, len - o, ")");
}

static int
cfg_run_check(const struct cfg_section *sec, const uint8_t *obj, const char **key, char *why,
	size_t whylen)
{
	*key = NULL;
	if (sec->check == NULL)
		return 0;
	return sec->check(obj, key, why, whylen) != 0 ? -EINVAL : 0;
}

/* Parses the ID of [prefix.ID]: 1..2^32-1, decimal, no leading zero. */
static int
cfg_parse_id(const char *s, uint32_t *id)
{
	uint64_t v;

	if (s[0] == '0' || parse_u64(s, 1, UINT32_MAX, &v) != 0)
		return -EINVAL;
	*id = (uint32_t)v;
	return 0;
}

static uint8_t *
cfg_element(const struct cfg_section *sec, uint8_t *root, unsigned i)
{
	return root + sec->array_offset + (size_t)i * sec->elem_size;
}

static int
cfg_find_element(const struct cfg_section *sec, uint8_t *root, uint32_t id)
{
	unsigned n = cfg_get_count(root, sec->count_offset);

	for (unsigned i = 0; i < n; i++) {
		uint32_t eid;

		memcpy(&eid, cfg_element(sec, root, i) + sec->id_offset, sizeof(eid));
		if (eid == id)
			return (int)i;
	}
	return -1;
}

int
cfg_defaults(const struct cfg_schema *schema, void *target, char *err, size_t errlen)
{
	char why[CFG_WHY_MAX];

	memset(target, 0, schema->target_size);
	for (size_t i = 0; i < schema->n_sections; i++) {
		const struct cfg_section *sec = &schema->sections[i];
		int rc;

		if (sec->n_keys > CFG_MAX_KEYS || (sec->is_array && sec->max_count == 0)) {
			snprintf(err, errlen, "configuration schema: [%s] is malformed", sec->name);
			return -EINVAL;
		}
		/* Elements get their defaults when their section opens; here only check them. */
		if (sec->is_array) {
			uint8_t elem[sec->elem_size];

			rc = cfg_apply_defaults(sec, elem, why, sizeof(why));
		} else {
			rc = cfg_apply_defaults(sec, (uint8_t *)target + sec->offset, why,
				sizeof(why));
		}
		if (rc != 0) {
			snprintf(err, errlen, "configuration schema: [%s] %s", sec->name, why);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The loader                                                                                */

struct cfg_loader {
	const struct cfg_schema *schema;
	uint8_t *root;	  /* the copy being filled */
	const char *name; /* of the file, in messages */
	FILE *fp;	  /* input: a file ... */
	const char *text; /* ... or a string */
	size_t pos;
	int lineno;
	int read_errno;
	bool eof;
	/* The open section. */
	bool foreign;                  /* it belongs to another program: its keys are skipped */
	const struct cfg_section *sec; /* NULL: none yet */
	uint8_t *obj;		       /* the struct its keys fill */
	char label[CFG_LABEL_MAX];     /* "dataplane", "event.42" */
	int sec_line;
	uint64_t seen; /* bit i: key i was given */
	int key_line[CFG_MAX_KEYS];
	int *first_line; /* per plain section / array element: line of its header */
	/* The first error. */
	int err_line; /* 0: none */
	int rc;
	char *err;
	size_t errlen;
};

static void __attribute__((format(printf, 3, 4)))
cfg_fail(struct cfg_loader *ld, int line, const char *fmt, ...)
{
	char msg[CFG_WHY_MAX + 128];
	va_list ap;

	if (ld->err_line != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ld->err_line = line > 0 ? line : 1;
	ld->rc = -EINVAL;
	if (line > 0)
		snprintf(ld->err, ld->errlen, "%s:%d: %s", ld->name, line, msg);
	else
		snprintf(ld->err, ld->errlen, "%s: %s", ld->name, msg);
}

/* Index of a section's (or element's) header line in ld->first_line. */
static size_t
cfg_line_slot(const struct cfg_loader *ld, const struct cfg_section *sec, unsigned elem)
{
	size_t base = 0;

	for (const struct cfg_section *s = ld->schema->sections; s != sec; s++)
		base += s->is_array ? s->max_count : 1;
	return base + elem;
}

/* Ends the open section: its required keys and its cross-key check. */
static int
cfg_close_section(struct cfg_loader *ld)
{
	const struct cfg_section *sec = ld->sec;
	char why[CFG_WHY_MAX], what[CFG_WHY_MAX];
	const char *key;
	size_t idx;

	if (sec == NULL)
		return 0;
	ld->sec = NULL;
	for (size_t i = 0; i < sec->n_keys; i++) {
		const struct cfg_key *k = &sec->keys[i];

		if ((k->flags & CFG_F_REQUIRED) && !(ld->seen & (UINT64_C(1) << i))) {
			cfg_describe(k, what, sizeof(what));
			cfg_fail(ld, ld->sec_line,
				"[%s] missing required key \"%s\" (add \"%s = "
				"...\", a %s)",
				ld->label, k->name, k->name, what);
			return -EINVAL;
		}
	}
	if (cfg_run_check(sec, ld->obj, &key, why, sizeof(why)) != 0) {
		int line = ld->sec_line;

		if (key != NULL && cfg_find_key(sec, key, &idx) != NULL &&
			(ld->seen & (UINT64_C(1) << idx)))
			line = ld->key_line[idx];
		cfg_fail(ld, line, "[%s] %s%s%s", ld->label, key ? key : "", key ? ": " : "", why);
		return -EINVAL;
	}
	return 0;
}

/* Handles a "[name]" line: closes the open section and opens the named one. */
static int
cfg_open_section(struct cfg_loader *ld, const char *name)
{
	const struct cfg_schema *schema = ld->schema;
	const struct cfg_section *sec = NULL;
	char prefix[CFG_LABEL_MAX], hint[CFG_WHY_MAX], why[CFG_WHY_MAX], q[CFG_QUOTE_MAX + 16];
	const char *dot = strchr(name, '.');
	size_t plen = dot ? (size_t)(dot - name) : strlen(name);
	int line = ld->lineno;

	if (cfg_close_section(ld) != 0)
		return -EINVAL;
	if (strlen(name) >= CFG_LABEL_MAX) {
		cfg_fail(ld, line, "section name %s is too long", cfg_quote(q, sizeof(q), name));
		return -EINVAL;
	}
	memcpy(prefix, name, plen);
	prefix[plen] = '\0';
	for (size_t i = 0; i < schema->n_sections; i++) {
		const struct cfg_section *s = &schema->sections[i];

		if (s->is_array ? strcmp(s->name, prefix) == 0 : strcmp(s->name, name) == 0) {
			sec = s;
			break;
		}
	}
	ld->foreign = false;
	if (sec == NULL && schema->foreign != NULL) {
		for (const char *const *f = schema->foreign; *f != NULL; f++) {
			if (strcmp(*f, name) == 0 || strcmp(*f, prefix) == 0) {
				ld->foreign = true;
				return 0;
			}
		}
	}
	if (sec == NULL) {
		cfg_section_hint(schema, prefix, hint, sizeof(hint));
		cfg_fail(ld, line, "unknown section [%s]%s", name, hint);
		return -EINVAL;
	}
	snprintf(ld->label, sizeof(ld->label), "%s", name);
	ld->sec_line = line;
	ld->seen = 0;
	if (!sec->is_array) {
		int *first = &ld->first_line[cfg_line_slot(ld, sec, 0)];

		if (*first != 0) {
			cfg_fail(ld, line,
				"section [%s] appears twice (first at line %d); "
				"merge them into one",
				name, *first);
			return -EINVAL;
		}
		*first = line;
		ld->sec = sec;
		ld->obj = ld->root + sec->offset;
		return 0;
	}

	uint32_t id;
	unsigned n = cfg_get_count(ld->root, sec->count_offset);
	int dup;

	if (dot == NULL) {
		cfg_fail(ld, line, "section [%s] needs an id, such as [%s.1]", name, name);
		return -EINVAL;
	}
	if (cfg_parse_id(dot + 1, &id) != 0) {
		cfg_fail(ld, line,
			"[%s]: %s is not a valid id (expected a positive integer up to "
			"4294967295, without leading zeros)",
			name, cfg_quote(q, sizeof(q), dot + 1));
		return -EINVAL;
	}
	dup = cfg_find_element(sec, ld->root, id);
	if (dup >= 0) {
		cfg_fail(ld, line,
			"section [%s] appears twice (first at line %d); each id must be "
			"unique",
			name, ld->first_line[cfg_line_slot(ld, sec, (unsigned)dup)]);
		return -EINVAL;
	}
	if (n >= sec->max_count) {
		cfg_fail(ld, line, "[%s]: too many [%s.ID] sections (at most %u)", name, sec->name,
			sec->max_count);
		return -EINVAL;
	}
	ld->obj = cfg_element(sec, ld->root, n);
	memset(ld->obj, 0, sec->elem_size);
	if (cfg_apply_defaults(sec, ld->obj, why, sizeof(why)) != 0) {
		cfg_fail(ld, line, "configuration schema: [%s] %s", sec->name, why);
		return -EINVAL;
	}
	memcpy(ld->obj + sec->id_offset, &id, sizeof(id));
	cfg_put_count(ld->root, sec->count_offset, n + 1);
	ld->first_line[cfg_line_slot(ld, sec, n)] = line;
	ld->sec = sec;
	return 0;
}

static int
cfg_getc(struct cfg_loader *ld)
{
	if (ld->fp != NULL)
		return getc_unlocked(ld->fp);
	if (ld->text[ld->pos] == '\0')
		return EOF;
	return (unsigned char)ld->text[ld->pos++];
}

/*
 * The ini_reader: hands inih one line at a time. Reading the lines here lets
 * the loader count them, see section headers (inih does not report them, so
 * an empty [event.3] would otherwise pass unseen), refuse what inih would
 * silently misread (overlong lines, NUL bytes, continuation lines) and stop
 * at the first error.
 */
static char *
cfg_reader(char *str, int num, void *stream)
{
	struct cfg_loader *ld = stream;
	int max = num - 3; /* inih needs room for "\r\n" and the NUL */
	int len = 0, c;
	char *s;

	if (ld->err_line != 0 || ld->eof)
		return NULL;
	c = cfg_getc(ld);
	if (c == EOF) {
		if (ld->fp != NULL && ferror(ld->fp)) {
			ld->read_errno = errno != 0 ? errno : EIO;
			ld->err_line = -1;
			return NULL;
		}
		ld->eof = true;
		cfg_close_section(ld);
		return NULL;
	}
	ld->lineno++;
	for (; c != EOF && c != '\n'; c = cfg_getc(ld)) {
		if (c == '\0') {
			cfg_fail(ld, ld->lineno, "contains a NUL byte (is this a text file?)");
			return NULL;
		}
		if (len == max) {
			cfg_fail(ld, ld->lineno, "line is longer than %d characters", max);
			return NULL;
		}
		str[len++] = (char)c;
	}
	if (c == EOF && ld->fp != NULL && ferror(ld->fp)) {
		ld->read_errno = errno != 0 ? errno : EIO;
		ld->err_line = -1;
		return NULL;
	}
	str[len] = '\0';
	s = str;
	if (ld->lineno == 1 && strncmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;
	/* No continuation lines: an indented line is an ordinary line. */
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\v' || *s == '\f')
		s++;
	memmove(str, s, strlen(s) + 1);

	if (str[0] == '\0' || str[0] == ';' || str[0] == '#')
		return str;
	if (str[0] == '[') {
		char *end = strchr(str, ']');
		const char *rest;

		if (end == NULL) {
			cfg_fail(ld, ld->lineno, "section header has no closing \"]\"");
			return NULL;
		}
		for (rest = end + 1; *rest == ' ' || *rest == '\t' || *rest == '\r'; rest++)
			;
		if (*rest != '\0' && *rest != ';' && *rest != '#') {
			cfg_fail(ld, ld->lineno,
				"unexpected text after \"]\" (only a comment may "
				"follow a section header)");
			return NULL;
		}
		char name[end - str];

		memcpy(name, str + 1, (size_t)(end - str - 1));
		name[end - str - 1] = '\0';
		if (cfg_open_section(ld, name) != 0)
			return NULL;
		return str;
	}
	if (strpbrk(str, "=:") == NULL) {
		cfg_fail(ld, ld->lineno, "expected \"key = value\" or \"[section]\"");
		return NULL;
	}
	return str;
}

/* The ini_handler: one "key = value" of the open section. */
static int
cfg_handler(void *user, const char *section, const char *name, const char *value)
{
	struct cfg_loader *ld = user;
	const struct cfg_key *k;
	char why[CFG_WHY_MAX], hint[CFG_WHY_MAX], q[CFG_QUOTE_MAX + 16];
	size_t idx;

	(void)section; /* the reader tracks sections itself */
	if (ld->err_line != 0)
		return 0;
	if (ld->foreign)
		return 1; /* another program's key: not ours to check */
	if (ld->sec == NULL) {
		cfg_fail(ld, ld->lineno,
			"key \"%s\" is outside any section (put it below a "
			"[section] line)",
			name);
		return 0;
	}
	if (name[0] == '\0' || strpbrk(name, " \t") != NULL) {
		cfg_fail(ld, ld->lineno, "[%s] %s is not a key name (expected \"key = value\")",
			ld->label, cfg_quote(q, sizeof(q), name));
		return 0;
	}
	k = cfg_find_key(ld->sec, name, &idx);
	if (k == NULL) {
		cfg_key_hint(ld->schema, ld->sec, name, hint, sizeof(hint));
		cfg_fail(ld, ld->lineno, "[%s] unknown key \"%s\"%s", ld->label, name, hint);
		return 0;
	}
	if (ld->seen & (UINT64_C(1) << idx)) {
		cfg_fail(ld, ld->lineno, "[%s] %s: set twice (first at line %d); keep one",
			ld->label, name, ld->key_line[idx]);
		return 0;
	}
	if (cfg_apply(k, ld->obj, value, why, sizeof(why)) != 0) {
		cfg_fail(ld, ld->lineno, "[%s] %s: %s", ld->label, name, why);
		return 0;
	}
	ld->seen |= UINT64_C(1) << idx;
	ld->key_line[idx] = ld->lineno;
	return 1;
}

/* Every plain section with a required key must be present. */
static int
cfg_check_absent(struct cfg_loader *ld)
{
	for (size_t i = 0; i < ld->schema->n_sections; i++) {
		const struct cfg_section *sec = &ld->schema->sections[i];

		if (sec->is_array || ld->first_line[cfg_line_slot(ld, sec, 0)] != 0)
			continue;
		for (size_t j = 0; j < sec->n_keys; j++) {
			if (sec->keys[j].flags & CFG_F_REQUIRED) {
				cfg_fail(ld, 0, "missing section [%s] (it must set \"%s\")",
					sec->name, sec->keys[j].name);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static int
cfg_run(struct cfg_loader *ld, void *target)
{
	const struct cfg_schema *schema = ld->schema;
	size_t slots = 0;
	int r;

	for (size_t i = 0; i < schema->n_sections; i++)
		slots += schema->sections[i].is_array ? schema->sections[i].max_count : 1;
	ld->root = malloc(schema->target_size);
	ld->first_line = calloc(slots, sizeof(int));
	if (ld->root == NULL || ld->first_line == NULL) {
		snprintf(ld->err, ld->errlen, "%s: out of memory", ld->name);
		ld->rc = -ENOMEM;
		goto out;
	}
	ld->rc = cfg_defaults(schema, ld->root, ld->err, ld->errlen);
	if (ld->rc != 0)
		goto out;

	r = ini_parse_stream(cfg_reader, ld, cfg_handler, ld);
	if (ld->err_line == -1) {
		snprintf(ld->err, ld->errlen, "cannot read %s: %s", ld->name,
			strerror(ld->read_errno));
		ld->rc = -ld->read_errno;
		goto out;
	}
	/* inih keeps the first error it saw; one before ours is a syntax error we let pass. */
	if (r > 0 && (ld->err_line == 0 || r < ld->err_line)) {
		ld->err_line = 0;
		cfg_fail(ld, r, "syntax error (expected \"key = value\" or \"[section]\")");
	} else if (r < 0 && ld->err_line == 0) {
		snprintf(ld->err, ld->errlen, "%s: out of memory", ld->name);
		ld->rc = -ENOMEM;
		goto out;
	}
	if (ld->err_line == 0)
		cfg_check_absent(ld);
	if (ld->err_line == 0) {
		memcpy(target, ld->root, schema->target_size);
		ld->rc = 0;
	}
out:
	free(ld->root);
	free(ld->first_line);
	return ld->rc;
}

int
cfg_load(const struct cfg_schema *schema, void *target, const char *path, char *err, size_t errlen)
{
	struct cfg_loader ld = {
		.schema = schema,
		.name = path,
		.err = err,
		.errlen = errlen,
	};
	int rc;

	if (path == NULL) {
		snprintf(err, errlen, "no configuration file given");
		return -EINVAL;
	}
	ld.fp = fopen(path, "r");
	if (ld.fp == NULL) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return rc;
	}
	rc = cfg_run(&ld, target);
	fclose(ld.fp);
	return rc;
}

int
cfg_load_string(const struct cfg_schema *schema, void *target, const char *name, const char *text,
	char *err, size_t errlen)
{
	struct cfg_loader ld = {
		.schema = schema,
		.name = name,
		.text = text,
		.err = err,
		.errlen = errlen,
	};

	return cfg_run(&ld, target);
}

int
cfg_set(const struct cfg_schema *schema, void *target, const char *key, const char *value,
	char *err, size_t errlen)
{
	const struct cfg_section *sec = NULL;
	const struct cfg_key *k;
	char why[CFG_WHY_MAX], hint[CFG_WHY_MAX], prefix[CFG_LABEL_MAX];
	const char *dot = key != NULL ? strchr(key, '.') : NULL;
	const char *kname, *blame;
	uint8_t *copy, *obj;
	size_t idx;
	int rc = -EINVAL;

	if (key == NULL || value == NULL || dot == NULL || (size_t)(dot - key) >= sizeof(prefix)) {
		snprintf(err, errlen,
			"command line: %s: expected section.key=value (such as "
			"%s.%s=...)",
			key ? key : "(null)", schema->sections[0].name,
			schema->sections[0].n_keys ? schema->sections[0].keys[0].name : "key");
		return -EINVAL;
	}
	memcpy(prefix, key, (size_t)(dot - key));
	prefix[dot - key] = '\0';
	for (size_t i = 0; i < schema->n_sections; i++) {
		if (strcmp(schema->sections[i].name, prefix) == 0) {
			sec = &schema->sections[i];
			break;
		}
	}
	if (sec == NULL) {
		cfg_section_hint(schema, prefix, hint, sizeof(hint));
		snprintf(
			err, errlen, "command line: %s: unknown section [%s]%s", key, prefix, hint);
		return -EINVAL;
	}
	copy = malloc(schema->target_size);
	if (copy == NULL) {
		snprintf(err, errlen, "command line: %s: out of memory", key);
		return -ENOMEM;
	}
	memcpy(copy, target, schema->target_size);
	obj = copy + sec->offset; /* an array section's element replaces it below */
	kname = dot + 1;
	if (sec->is_array) {
		const char *dot2 = strchr(kname, '.');
		char ids[16];
		uint32_t id;
		int e;

		if (dot2 == NULL || (size_t)(dot2 - kname) >= sizeof(ids)) {
			snprintf(err, errlen,
				"command line: %s: expected %s.ID.key (such as %s.1.%s)", key,
				sec->name, sec->name, sec->n_keys ? sec->keys[0].name : "key");
			goto out;
		}
		memcpy(ids, kname, (size_t)(dot2 - kname));
		ids[dot2 - kname] = '\0';
		if (cfg_parse_id(ids, &id) != 0 || (e = cfg_find_element(sec, copy, id)) < 0) {
			snprintf(err, errlen,
				"command line: %s: there is no [%s.%s] (define the "
				"section in the configuration file)",
				key, sec->name, ids);
			goto out;
		}
		obj = cfg_element(sec, copy, (unsigned)e);
		kname = dot2 + 1;
	}
	k = cfg_find_key(sec, kname, &idx);
	if (k == NULL) {
		cfg_key_hint(schema, sec, kname, hint, sizeof(hint));
		snprintf(err, errlen, "command line: %s: unknown key \"%s\"%s", key, kname, hint);
		goto out;
	}
	if (cfg_apply(k, obj, value, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "command line: %s: %s", key, why);
		goto out;
	}
	if (cfg_run_check(sec, obj, &blame, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "command line: %s: %s", key, why);
		goto out;
	}
	memcpy(target, copy, schema->target_size);
	rc = 0;
out:
	free(copy);
	return rc;
}

/* Applies one "section.key=value" override to target (cfg_set() on a copy of the key). */
static int
cfg_set_pair(
	const struct cfg_schema *schema, void *target, const char *pair, char *err, size_t errlen)
{
	const char *eq = strchr(pair, '=');
	char *key;
	int rc;

	if (eq == NULL) {
		snprintf(err, errlen, "-s \"%s\": expected SECTION.KEY=VALUE", pair);
		return -EINVAL;
	}
	/* The caller's argv stays as it is: the key is cut from a copy. */
	key = malloc((size_t)(eq - pair) + 1);
	if (key == NULL) {
		snprintf(err, errlen, "-s \"%s\": out of memory", pair);
		return -ENOMEM;
	}
	memcpy(key, pair, (size_t)(eq - pair));
	key[eq - pair] = '\0';
	rc = cfg_set(schema, target, key, eq + 1, err, errlen);
	free(key);
	return rc;
}

int
cfg_load_cli(const struct cfg_schema *schema, void *target, const char *path, char *const *sets,
	unsigned n_sets, char *err, size_t errlen)
{
	uint8_t *copy = malloc(schema->target_size);
	int rc;

	if (copy == NULL) {
		snprintf(err, errlen, "out of memory for the settings");
		return -ENOMEM;
	}
	/* Everything lands in a copy first, so that a failure leaves target as it was. */
	if (path != NULL)
		rc = cfg_load(schema, copy, path, err, errlen);
	else
		rc = cfg_defaults(schema, copy, err, errlen);
	for (unsigned i = 0; rc == 0 && i < n_sets; i++)
		rc = cfg_set_pair(schema, copy, sets[i], err, errlen);
	if (rc == 0)
		memcpy(target, copy, schema->target_size);
	free(copy);
	return rc;
}

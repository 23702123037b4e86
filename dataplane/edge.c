/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing the [edge] trusted list and trusted_file; the lookups are in edge.h. */
#include "dataplane/edge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "common/parse.h"

struct edge_r4 {
	uint32_t first, last;
};

static int
edge_cmp4(const void *x, const void *y)
{
	const struct edge_r4 *a = x, *b = y;

	return a->first < b->first ? -1 : a->first > b->first;
}

static int
edge_cmp6(const void *x, const void *y)
{
	const struct edge_r6 *a = x, *b = y;

	if (a->first.hi != b->first.hi)
		return a->first.hi < b->first.hi ? -1 : 1;
	return a->first.lo < b->first.lo ? -1 : a->first.lo > b->first.lo;
}

struct edge_ip6
edge_ip6_last(struct edge_ip6 first, unsigned len)
{
	struct edge_ip6 v = first;

	if (len == 0) {
		v.hi = v.lo = UINT64_MAX;
	} else if (len <= 64) {
		v.hi |= len == 64 ? 0 : UINT64_MAX >> len;
		v.lo = UINT64_MAX;
	} else if (len < 128) {
		v.lo |= UINT64_MAX >> (len - 64);
	}
	return v;
}

/* Sorts and merges r[0..n) (overlapping or adjacent ranges become one); returns the count. */
static uint32_t
edge_merge4(struct edge_r4 *r, uint32_t n)
{
	uint32_t k = 0;

	qsort(r, n, sizeof(*r), edge_cmp4);
	for (uint32_t i = 0; i < n; i++) {
		if (k != 0 && (uint64_t)r[i].first <= (uint64_t)r[k - 1].last + 1) {
			if (r[i].last > r[k - 1].last)
				r[k - 1].last = r[i].last;
			continue;
		}
		r[k++] = r[i];
	}
	return k;
}

uint32_t
edge_merge6(struct edge_r6 *r, uint32_t n)
{
	uint32_t k = 0;

	qsort(r, n, sizeof(*r), edge_cmp6);
	for (uint32_t i = 0; i < n; i++) {
		/* Overlapping is enough: adjacent IPv6 networks stay two ranges. */
		if (k != 0 && edge_ip6_le(r[i].first, r[k - 1].last)) {
			if (!edge_ip6_le(r[i].last, r[k - 1].last))
				r[k - 1].last = r[i].last;
			continue;
		}
		r[k++] = r[i];
	}
	return k;
}

/* The networks read so far, both families, in arrays that grow as needed. */
struct edge_build {
	struct edge_r4 *r4;
	struct edge_r6 *r6;
	uint32_t n4, n6, cap4, cap6;
};

/* Room for one more range in *r (n used of *cap, elements of size bytes); -ENOMEM. */
static int
edge_grow(void **r, uint32_t n, uint32_t *cap, size_t size)
{
	if (n < *cap)
		return 0;
	uint32_t want = *cap == 0 ? 64 : *cap * 2;
	void *p = realloc(*r, (size_t)want * size);

	if (p == NULL)
		return -ENOMEM;
	*r = p;
	*cap = want;
	return 0;
}

/* One item (NUL-terminated) added to b; -EINVAL or -ENOMEM with the reason in err. */
static int
edge_item(const char *item, struct edge_build *b, char *err, size_t errlen)
{
	unsigned prefix;
	int rc;

	if (strchr(item, ':') == NULL) {
		uint32_t a;

		rc = parse_cidr(item, &a, &prefix);
		if (rc == -EDOM) {
			snprintf(err, errlen,
				"\"%s\" has host bits set: the network is %u.%u.%u.%u/%u (or give "
				"the address alone)",
				item, a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff, prefix);
			return -EINVAL;
		}
		if (rc != 0) {
			snprintf(err, errlen,
				rc == -ERANGE ? "\"%s\": the prefix length must be 0..32"
					      : "\"%s\" is not an IPv4 or IPv6 address or network "
						"(e.g. 198.18.0.7, 198.18.1.0/24, 2001:db8::/32)",
				item);
			return -EINVAL;
		}
		if (b->n4 == EDGE_TRUSTED_MAX) {
			snprintf(err, errlen, "more than %u IPv4 networks (at \"%s\")",
				EDGE_TRUSTED_MAX, item);
			return -EINVAL;
		}
		if (edge_grow((void **)&b->r4, b->n4, &b->cap4, sizeof(*b->r4)) != 0) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		b->r4[b->n4].first = a;
		b->r4[b->n4].last = a | ~parse_prefix_mask(prefix);
		b->n4++;
		return 0;
	}

	uint8_t a6[16];

	rc = parse_cidr6(item, a6, &prefix);
	if (rc == -EDOM) {
		char net[64];

		inet_ntop(AF_INET6, a6, net, sizeof(net));
		snprintf(err, errlen,
			"\"%s\" has host bits set: the network is %s/%u (or give the address "
			"alone)",
			item, net, prefix);
		return -EINVAL;
	}
	if (rc != 0) {
		snprintf(err, errlen,
			rc == -ERANGE
				? "\"%s\": the prefix length must be 0..128"
				: "\"%s\" is not an IPv6 address or network (e.g. 2001:db8::/32; "
				  "no brackets, no zone)",
			item);
		return -EINVAL;
	}
	if (b->n6 == EDGE_TRUSTED_MAX) {
		snprintf(err, errlen, "more than %u IPv6 networks (at \"%s\")", EDGE_TRUSTED_MAX,
			item);
		return -EINVAL;
	}
	if (edge_grow((void **)&b->r6, b->n6, &b->cap6, sizeof(*b->r6)) != 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	b->r6[b->n6].first = edge_ip6_of(a6);
	b->r6[b->n6].last = edge_ip6_last(b->r6[b->n6].first, prefix);
	b->n6++;
	return 0;
}

/* The [edge] trusted text into b: items separated by commas and/or blanks. */
static int
edge_text(const char *text, struct edge_build *b, char *err, size_t errlen)
{
	const char *p = text;

	if (strlen(text) > EDGE_TRUSTED_TEXT_MAX) {
		snprintf(err, errlen,
			"the list is longer than %u bytes (put the networks in "
			"[edge] trusted_file)",
			EDGE_TRUSTED_TEXT_MAX);
		return -EINVAL;
	}
	for (;;) {
		char item[64];
		size_t len;
		int rc;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '\0')
			return 0;
		len = strcspn(p, " \t,");
		if (len >= sizeof(item)) {
			snprintf(err, errlen, "\"%.40s...\" is not an address or network", p);
			return -EINVAL;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		p += len;
		rc = edge_item(item, b, err, errlen);
		if (rc != 0)
			return rc;
	}
}

/*
 * One line of the trusted file (NUL-terminated, its newline gone) into b: blank, a comment
 * from '#' on, or one network with blanks around it.
 */
static int
edge_line(char *line, struct edge_build *b, char *err, size_t errlen)
{
	char *p = line, *end, *rest;

	line[strcspn(line, "#")] = '\0';
	p += strspn(p, " \t\r");
	end = p + strcspn(p, " \t\r");
	if (end == p)
		return 0;
	rest = end + strspn(end, " \t\r");
	if (*rest != '\0') {
		snprintf(err, errlen, "one network a line (\"%.40s\")", p);
		return -EINVAL;
	}
	*end = '\0';
	if (end - p >= 64) {
		snprintf(err, errlen, "\"%.40s...\" is not an address or network", p);
		return -EINVAL;
	}
	return edge_item(p, b, err, errlen);
}

/* The file at path into b; errors start with "path:line: ". */
static int
edge_file(const char *path, struct edge_build *b, char *err, size_t errlen)
{
	char msg[200];
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	struct stat st;
	int rc = 0;
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		rc = -EINVAL;
		goto out;
	}
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		rc = edge_line(line, b, msg, sizeof(msg));
		if (rc != 0) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, msg);
			goto out;
		}
	}
	if (ferror(f)) {
		rc = -EIO;
		snprintf(err, errlen, "%s: read error after line %u", path, lineno);
	}
out:
	free(line);
	fclose(f);
	return rc;
}

int
edge_trust_load(
	const char *text, const char *path, struct edge_trust *out, char *err, size_t errlen)
{
	struct edge_build b = {0};
	struct edge_trust t = {0};
	int rc = edge_text(text != NULL ? text : "", &b, err, errlen);

	if (rc == 0 && path != NULL && path[0] != '\0')
		rc = edge_file(path, &b, err, errlen);
	if (rc != 0 || out == NULL)
		goto out;
	t.n4 = b.n4 != 0 ? edge_merge4(b.r4, b.n4) : 0;
	t.n6 = b.n6 != 0 ? edge_merge6(b.r6, b.n6) : 0;
	if (t.n4 + t.n6 != 0) {
		/* One block: first4, last4, then first6, last6 (8-byte aligned after the IPv4). */
		t.mem = malloc((size_t)t.n4 * 2 * sizeof(uint32_t) +
			       (size_t)t.n6 * 2 * sizeof(struct edge_ip6) + sizeof(uint64_t));
		if (t.mem == NULL) {
			snprintf(err, errlen, "out of memory for %u + %u networks", t.n4, t.n6);
			rc = -ENOMEM;
			goto out;
		}
		t.first4 = t.mem;
		t.last4 = t.first4 + t.n4;
		t.first6 = (struct edge_ip6 *)(void *)(((uintptr_t)(t.last4 + t.n4) + 7) &
						       ~(uintptr_t)7);
		t.last6 = t.first6 + t.n6;
	}
	for (uint32_t i = 0; i < t.n4; i++) {
		t.first4[i] = b.r4[i].first;
		t.last4[i] = b.r4[i].last;
	}
	for (uint32_t i = 0; i < t.n6; i++) {
		t.first6[i] = b.r6[i].first;
		t.last6[i] = b.r6[i].last;
	}
	*out = t;
out:
	free(b.r4);
	free(b.r6);
	return rc;
}

int
edge_trust_parse(const char *text, struct edge_trust *out, char *err, size_t errlen)
{
	return edge_trust_load(text, NULL, out, err, errlen);
}

void
edge_trust_free(struct edge_trust *t)
{
	if (t == NULL)
		return;
	free(t->mem);
	memset(t, 0, sizeof(*t));
}

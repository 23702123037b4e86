/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing the [edge] trusted list; the lookups are in edge.h. */
#include "dataplane/edge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

/* One item of the list, NUL-terminated in item; adds it to r4 or r6. */
static int
edge_item(const char *item, struct edge_r4 *r4, uint32_t *n4, struct edge_r6 *r6, uint32_t *n6,
	char *err, size_t errlen)
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
		if (*n4 == EDGE_TRUSTED_MAX) {
			snprintf(err, errlen, "more than %u IPv4 networks (at \"%s\")",
				EDGE_TRUSTED_MAX, item);
			return -EINVAL;
		}
		r4[*n4].first = a;
		r4[*n4].last = a | ~parse_prefix_mask(prefix);
		(*n4)++;
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
	if (*n6 == EDGE_TRUSTED_MAX) {
		snprintf(err, errlen, "more than %u IPv6 networks (at \"%s\")", EDGE_TRUSTED_MAX,
			item);
		return -EINVAL;
	}
	r6[*n6].first = edge_ip6_of(a6);
	r6[*n6].last = edge_ip6_last(r6[*n6].first, prefix);
	(*n6)++;
	return 0;
}

int
edge_trust_parse(const char *text, struct edge_trust *out, char *err, size_t errlen)
{
	struct edge_r4 r4[EDGE_TRUSTED_MAX];
	struct edge_r6 r6[EDGE_TRUSTED_MAX];
	uint32_t n4 = 0, n6 = 0;
	const char *p = text;

	if (strlen(text) > EDGE_TRUSTED_TEXT_MAX) {
		snprintf(err, errlen, "the list is longer than %u bytes", EDGE_TRUSTED_TEXT_MAX);
		return -EINVAL;
	}
	for (;;) {
		char item[64];
		size_t len;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		len = strcspn(p, " \t,");
		if (len >= sizeof(item)) {
			snprintf(err, errlen, "\"%.40s...\" is not an address or network", p);
			return -EINVAL;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		p += len;
		if (edge_item(item, r4, &n4, r6, &n6, err, errlen) != 0)
			return -EINVAL;
	}
	if (out == NULL)
		return 0;
	n4 = edge_merge4(r4, n4);
	n6 = edge_merge6(r6, n6);
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < n4; i++) {
		out->first4[i] = r4[i].first;
		out->last4[i] = r4[i].last;
	}
	for (uint32_t i = 0; i < n6; i++) {
		out->first6[i] = r6[i].first;
		out->last6[i] = r6[i].last;
	}
	out->n4 = n4;
	out->n6 = n6;
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Building, checking, parsing and printing risk rules; the lookups are in rules.h. */
#include <errno.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "common/parse.h"
#include "dataplane/rules.h"

static unsigned rules_next_serial;

static uint32_t
prefix_mask(unsigned prefix)
{
	return prefix == 0 ? 0 : UINT32_MAX << (32 - prefix);
}

static void
ip_text(uint32_t ip, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
}

/* An IPv6 address as text (RFC 5952: lowercase, the longest run of zero groups as "::"). */
static void
ip6_text(const uint8_t a[16], char buf[INET6_ADDRSTRLEN])
{
	if (inet_ntop(AF_INET6, a, buf, INET6_ADDRSTRLEN) == NULL)
		snprintf(buf, INET6_ADDRSTRLEN, "?");
}

/* Copies a to net with the bits past prefix (0..128) cleared; returns whether any was set. */
static bool
ip6_network(const uint8_t a[16], unsigned prefix, uint8_t net[16])
{
	bool host_bits = false;

	for (unsigned i = 0; i < 16; i++) {
		unsigned keep = prefix >= 8 * (i + 1) ? 8 : prefix > 8 * i ? prefix - 8 * i : 0;
		uint8_t mask = (uint8_t)(0xff00u >> keep);

		net[i] = a[i] & mask;
		host_bits |= net[i] != a[i];
	}
	return host_bits;
}

/* The first 12 bytes of an IPv4-mapped IPv6 address (RFC 4291 2.5.5.2). */
static const uint8_t ip6_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* rule_spec_check() of an IPv6 network. */
static int
rule_ip6_check(const struct rule_spec *s, char *err, size_t errlen)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	uint8_t net[16];

	ip6_text(s->ip6, a);
	if (s->prefix > 128) {
		snprintf(err, errlen, "ip %s/%u: the prefix length must be 0..128", a, s->prefix);
		return -EINVAL;
	}
	if (ip6_network(s->ip6, s->prefix, net)) {
		ip6_text(net, b);
		snprintf(err, errlen,
			"ip %s/%u has host bits set: the network is %s/%u (use /128 for one "
			"address)",
			a, s->prefix, b, s->prefix);
		return -EINVAL;
	}
	if (s->prefix >= 96 && memcmp(s->ip6, ip6_mapped, sizeof(ip6_mapped)) == 0) {
		uint32_t v4 = (uint32_t)s->ip6[12] << 24 | (uint32_t)s->ip6[13] << 16 |
			      (uint32_t)s->ip6[14] << 8 | s->ip6[15];

		ip_text(v4, b);
		snprintf(err, errlen,
			"ip %s/%u is an IPv4-mapped network: block ip %s/%u instead (a client at "
			"::ffff:a.b.c.d is the IPv4 client a.b.c.d)",
			a, s->prefix, b, (unsigned)s->prefix - 96);
		return -EINVAL;
	}
	return 0;
}

int
rule_spec_check(const struct rule_spec *s, char *err, size_t errlen)
{
	char a[16], b[16];
	const char *end;

	switch (s->kind) {
	case RULE_BLOCK_IP:
		ip_text(s->ip, a);
		if (s->prefix > 32) {
			snprintf(err, errlen, "ip %s/%u: the prefix length must be 0..32", a,
				s->prefix);
			return -EINVAL;
		}
		if ((s->ip & ~prefix_mask(s->prefix)) != 0) {
			ip_text(s->ip & prefix_mask(s->prefix), b);
			snprintf(err, errlen,
				"ip %s/%u has host bits set: the network is %s/%u (use /32 for one "
				"address)",
				a, s->prefix, b, s->prefix);
			return -EINVAL;
		}
		return 0;
	case RULE_BLOCK_IP6:
		return rule_ip6_check(s, err, errlen);
	case RULE_BLOCK_USER:
		if (s->user == 0 || s->user > (uint64_t)RULE_USER_MAX) {
			snprintf(err, errlen, "user id %llu is not from 1 to %lld",
				(unsigned long long)s->user, (long long)RULE_USER_MAX);
			return -EINVAL;
		}
		return 0;
	case RULE_BLOCK_DEVICE:
		end = memchr(s->device, '\0', sizeof(s->device));
		if (end == NULL) {
			snprintf(err, errlen, "device id is longer than %u bytes", RULE_DEVICE_MAX);
			return -EINVAL;
		}
		if (end == s->device) {
			snprintf(err, errlen, "device id is empty");
			return -EINVAL;
		}
		for (const char *p = s->device; p < end; p++) {
			unsigned char c = (unsigned char)*p;

			if (c <= 0x20 || c >= 0x7f) {
				snprintf(err, errlen,
					"device id has byte 0x%02x at offset %u: only "
					"visible ASCII (no spaces or control characters) "
					"can be a device id",
					c, (unsigned)(p - s->device));
				return -EINVAL;
			}
		}
		return 0;
	}
	snprintf(err, errlen, "unknown rule kind %d: expected ip, user or device", (int)s->kind);
	return -EINVAL;
}

/* An address rule as the range it covers. */
struct net {
	uint32_t first;
	uint8_t prefix;
};

static int
cmp_net(const void *x, const void *y)
{
	const struct net *a = x, *b = y;

	/* By first address, then the wider network first, so that it comes before those inside. */
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return (int)a->prefix - (int)b->prefix;
}

static int
cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

void
rules_free(struct rules *r)
{
	if (r == NULL)
		return;
	if (r->lpm != NULL)
		rte_lpm_free(r->lpm);
	rte_hash_free(r->devices);
	rte_free((void *)(uintptr_t)r->ip32);
	rte_free((void *)(uintptr_t)r->users);
	rte_free((void *)(uintptr_t)r->first6);
	rte_free((void *)(uintptr_t)r->last6);
	rte_free(r);
}

/*
 * Sorts the address rules nets[0..n) and keeps those not inside an earlier kept one (CIDR
 * networks are nested or disjoint, and any match blocks). Returns the new count.
 */
static uint32_t
normalise_nets(struct net *nets, uint32_t n)
{
	uint32_t k = 0;
	uint64_t covered_to = 0; /* one past the last address of the last kept network */

	qsort(nets, n, sizeof(*nets), cmp_net);
	for (uint32_t i = 0; i < n; i++) {
		if (k != 0 && nets[i].first < covered_to)
			continue;
		nets[k++] = nets[i];
		covered_to = (uint64_t)nets[i].first + (UINT64_C(1) << (32 - nets[i].prefix));
	}
	return k;
}

/* Builds r->lpm from the normalised networks /1../31. Returns 0 or -1 with a message in err. */
static int
build_lpm(struct rules *r, const struct net *nets, uint32_t n, int socket, char *err, size_t errlen)
{
	struct rte_lpm_config cfg = {0};
	char name[RTE_LPM_NAMESIZE];
	uint32_t n_24s = 0, last_24 = 0;

	for (uint32_t i = 0; i < n; i++) {
		/* Each /24 holding a longer prefix needs one tbl8 group; nets are sorted. */
		if (nets[i].prefix > 24 && (n_24s == 0 || nets[i].first >> 8 != last_24)) {
			n_24s++;
			last_24 = nets[i].first >> 8;
		}
	}
	cfg.max_rules = n;
	cfg.number_tbl8s = n_24s != 0 ? n_24s : 1;
	snprintf(name, sizeof(name), "fg_rules_%u", r->serial);
	r->lpm = rte_lpm_create(name, socket, &cfg);
	if (r->lpm == NULL) {
		snprintf(err, errlen, "cannot create the LPM table for %u network rules: %s", n,
			rte_strerror(rte_errno));
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		/* Any match blocks, so every rule has the same next hop. */
		int rc = rte_lpm_add(r->lpm, nets[i].first, nets[i].prefix, 1);

		if (rc != 0) {
			char a[16];

			ip_text(nets[i].first, a);
			snprintf(err, errlen, "cannot add ip %s/%u to the LPM table: %s", a,
				nets[i].prefix, strerror(-rc));
			return -1;
		}
	}
	r->n_networks = n;
	return 0;
}

/* Builds the address part of r. Returns 0 or -1 with a message in err. */
static int
build_ip(struct rules *r, const struct rule_spec *specs, unsigned n, uint32_t n_ip, int socket,
	char *err, size_t errlen)
{
	struct net *nets;
	uint32_t n_nets = 0, n_ip32 = 0, n_cidr = 0, j = 0;
	uint32_t *ip32 = NULL;
	int rc = -1;

	if (n_ip == 0)
		return 0;
	nets = malloc(sizeof(*nets) * n_ip);
	if (nets == NULL) {
		snprintf(err, errlen, "out of memory for %u address rules", n_ip);
		return -1;
	}
	for (unsigned i = 0; i < n; i++)
		if (specs[i].kind == RULE_BLOCK_IP)
			nets[n_nets++] = (struct net){specs[i].ip, specs[i].prefix};
	n_nets = normalise_nets(nets, n_nets);
	if (nets[0].prefix == 0) {
		/* 0.0.0.0/0 covers everything: normalising left nothing else. */
		r->all_ip = true;
		rc = 0;
		goto out;
	}
	for (uint32_t i = 0; i < n_nets; i++)
		n_ip32 += nets[i].prefix == 32;
	n_cidr = n_nets - n_ip32;
	if (n_cidr > RULES_MAX_NETWORKS) {
		snprintf(err, errlen,
			"%u distinct networks (/1../31), at most %u: merge them into "
			"wider networks or block single addresses (/32, which have no "
			"such limit)",
			n_cidr, RULES_MAX_NETWORKS);
		goto out;
	}
	if (n_ip32 != 0) {
		ip32 = rte_malloc_socket("rules_ip32", sizeof(*ip32) * n_ip32, 0, socket);
		if (ip32 == NULL) {
			snprintf(err, errlen, "out of memory for %u address rules", n_ip32);
			goto out;
		}
		/* nets is sorted, so the /32s come out sorted; the networks move to the front. */
		for (uint32_t i = 0, c = 0; i < n_nets; i++) {
			if (nets[i].prefix == 32)
				ip32[j++] = nets[i].first;
			else
				nets[c++] = nets[i];
		}
		r->ip32 = ip32;
		r->n_ip32 = n_ip32;
	}
	rc = n_cidr != 0 ? build_lpm(r, nets, n_cidr, socket, err, errlen) : 0;
out:
	free(nets);
	return rc;
}

/*
 * Builds the IPv6 part of r: the networks as ranges, those inside another dropped (CIDR networks
 * are nested or disjoint), in two sorted arrays. Returns 0 or -1 with a message in err.
 */
static int
build_ip6(struct rules *r, const struct rule_spec *specs, unsigned n, uint32_t n_ip6, int socket,
	char *err, size_t errlen)
{
	struct edge_r6 *rg;
	struct edge_ip6 *first = NULL, *last = NULL;
	uint32_t k = 0;

	if (n_ip6 == 0)
		return 0;
	rg = malloc(sizeof(*rg) * n_ip6);
	if (rg == NULL) {
		snprintf(err, errlen, "out of memory for %u IPv6 address rules", n_ip6);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		if (specs[i].kind != RULE_BLOCK_IP6)
			continue;
		if (specs[i].prefix == 0) {
			/* ::/0 covers every IPv6 address: nothing else matters. */
			r->all_ip6 = true;
			free(rg);
			return 0;
		}
		rg[k].first = edge_ip6_of(specs[i].ip6);
		rg[k].last = edge_ip6_last(rg[k].first, specs[i].prefix);
		k++;
	}
	k = edge_merge6(rg, k);
	first = rte_malloc_socket("rules_ip6_first", sizeof(*first) * k, 0, socket);
	last = rte_malloc_socket("rules_ip6_last", sizeof(*last) * k, 0, socket);
	if (first == NULL || last == NULL) {
		rte_free(first);
		rte_free(last);
		free(rg);
		snprintf(err, errlen, "out of memory for %u IPv6 address rules", k);
		return -1;
	}
	for (uint32_t i = 0; i < k; i++) {
		first[i] = rg[i].first;
		last[i] = rg[i].last;
	}
	free(rg);
	r->first6 = first;
	r->last6 = last;
	r->n_ip6 = k;
	return 0;
}

/* Builds the device hash of r. Returns 0 or -1 with a message in err. */
static int
build_devices(struct rules *r, const struct rule_spec *specs, unsigned n, uint32_t n_dev,
	int socket, char *err, size_t errlen)
{
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.name = name,
		/* Twice the ids, and the extendable table: every add succeeds. */
		.entries = RTE_MAX(2 * n_dev, 16u),
		.key_len = RULE_DEVICE_MAX + 1,
		.socket_id = socket,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	if (n_dev == 0)
		return 0;
	snprintf(name, sizeof(name), "fg_rdev_%u", r->serial);
	r->devices = rte_hash_create(&hp);
	if (r->devices == NULL) {
		snprintf(err, errlen, "cannot create the hash table for %u device rules: %s", n_dev,
			rte_strerror(rte_errno));
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		char key[RULE_DEVICE_MAX + 1] = {0};

		if (specs[i].kind != RULE_BLOCK_DEVICE)
			continue;
		/* Checked: NUL-terminated within the array; pad the rest. */
		strcpy(key, specs[i].device);
		int rc = rte_hash_add_key(r->devices, key);

		if (rc < 0) {
			snprintf(err, errlen,
				"rule %u (device %s): cannot add it to the hash table: %s", i,
				specs[i].device, strerror(-rc));
			return -1;
		}
	}
	r->n_devices = (uint32_t)rte_hash_count(r->devices);
	return 0;
}

struct rules *
rules_build(const struct rule_spec *specs, unsigned n, int socket, char *err, size_t errlen)
{
	struct rules *r;
	uint32_t n_ip = 0, n_ip6 = 0, n_users = 0, n_dev = 0;
	uint64_t *users = NULL;
	char msg[160];

	if (n > RULES_MAX) {
		snprintf(err, errlen, "too many rules: %u, at most %u", n, RULES_MAX);
		return NULL;
	}
	for (unsigned i = 0; i < n; i++) {
		if (rule_spec_check(&specs[i], msg, sizeof(msg)) != 0) {
			snprintf(err, errlen, "rule %u: %s", i, msg);
			return NULL;
		}
		n_ip += specs[i].kind == RULE_BLOCK_IP;
		n_ip6 += specs[i].kind == RULE_BLOCK_IP6;
		n_users += specs[i].kind == RULE_BLOCK_USER;
		n_dev += specs[i].kind == RULE_BLOCK_DEVICE;
	}
	r = rte_zmalloc_socket("rules", sizeof(*r), RTE_CACHE_LINE_SIZE, socket);
	if (r == NULL) {
		snprintf(err, errlen, "out of memory for a rule set");
		return NULL;
	}
	/* Versions coexist during a swap, and DPDK object names must be unique. */
	r->serial = __atomic_fetch_add(&rules_next_serial, 1, __ATOMIC_RELAXED);
	if (n_users != 0) {
		uint32_t j = 0, k = 0;

		users = rte_malloc_socket("rules_users", sizeof(*users) * n_users, 0, socket);
		if (users == NULL) {
			snprintf(err, errlen, "out of memory for %u user rules", n_users);
			goto fail;
		}
		for (unsigned i = 0; i < n; i++)
			if (specs[i].kind == RULE_BLOCK_USER)
				users[j++] = specs[i].user;
		qsort(users, n_users, sizeof(*users), cmp_u64);
		for (uint32_t i = 0; i < n_users; i++)
			if (k == 0 || users[k - 1] != users[i])
				users[k++] = users[i];
		r->users = users;
		r->n_users = k;
	}
	if (build_ip(r, specs, n, n_ip, socket, err, errlen) != 0)
		goto fail;
	if (build_ip6(r, specs, n, n_ip6, socket, err, errlen) != 0)
		goto fail;
	if (build_devices(r, specs, n, n_dev, socket, err, errlen) != 0)
		goto fail;
	return r;
fail:
	rules_free(r);
	return NULL;
}

/* The rule's words: [p, p + len). */
struct word {
	const char *p;
	size_t len;
};

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Reads the next word at *pos; returns false at the end of the text. */
static bool
next_word(const char **pos, struct word *w)
{
	const char *p = *pos;

	while (is_space(*p))
		p++;
	if (*p == '\0')
		return false;
	w->p = p;
	while (*p != '\0' && !is_space(*p))
		p++;
	w->len = (size_t)(p - w->p);
	*pos = p;
	return true;
}

static bool
word_is(const struct word *w, const char *lit)
{
	return w->len == strlen(lit) && memcmp(w->p, lit, w->len) == 0;
}

/*
 * Reads a decimal number of 1..max_digits digits, without a leading zero unless it is "0",
 * from [*p, end), at most max. Advances *p; returns false on any deviation.
 */
static bool
parse_dec(const char **p, const char *end, unsigned max_digits, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned n = 0;

	while (s < end && *s >= '0' && *s <= '9') {
		if (++n > max_digits)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
		s++;
	}
	if (n == 0 || (n > 1 && **p == '0') || v > max)
		return false;
	*p = s;
	*out = v;
	return true;
}

static int
parse_ip(const struct word *w, struct rule_spec *out, char *err, size_t errlen)
{
	const char *p = w->p, *end = w->p + w->len;
	uint64_t v, pfx = 32;
	uint32_t ip = 0;

	for (int i = 0; i < 4; i++) {
		if ((i > 0 && (p >= end || *p++ != '.')) || !parse_dec(&p, end, 3, 255, &v)) {
			snprintf(err, errlen,
				"'%.*s' is not an IPv4 address: expected four numbers 0..255 "
				"separated by dots, e.g. 'ip 198.18.0.7' or 'ip 198.18.0.0/24'",
				(int)RTE_MIN(w->len, (size_t)40), w->p);
			return -EINVAL;
		}
		ip = ip << 8 | (uint32_t)v;
	}
	if (p < end && *p == '/') {
		const char *l = ++p;

		if (!parse_dec(&p, end, 2, 32, &pfx) || p != end) {
			snprintf(err, errlen, "prefix length '/%.*s' is not a number from 0 to 32",
				(int)RTE_MIN((size_t)(end - l), (size_t)20), l);
			return -EINVAL;
		}
	}
	if (p != end) {
		snprintf(err, errlen,
			"'%.*s' is not an IPv4 address: unexpected '%c' after '%.*s' (expected "
			"'/' and a prefix length, or nothing)",
			(int)RTE_MIN(w->len, (size_t)40), w->p, *p, (int)(p - w->p), w->p);
		return -EINVAL;
	}
	out->kind = RULE_BLOCK_IP;
	out->ip = ip;
	out->prefix = (uint8_t)pfx;
	return 0;
}

/* An IPv6 address or network "a:b::c[/len]" in w (it has a colon). */
static int
parse_ip6(const struct word *w, struct rule_spec *out, char *err, size_t errlen)
{
	const char *end = w->p + w->len, *slash = memchr(w->p, '/', w->len);
	size_t alen = slash != NULL ? (size_t)(slash - w->p) : w->len;
	uint64_t pfx = 128;

	if (parse_ipv6_n(w->p, alen, out->ip6) != 0) {
		snprintf(err, errlen,
			"'%.*s' is not an IPv6 address: expected up to eight groups of 1..4 hex "
			"digits separated by colons, '::' once for a run of zero groups, no "
			"brackets or zone, e.g. 'ip 2001:db8::7' or 'ip 2001:db8::/32'",
			(int)RTE_MIN(alen, (size_t)50), w->p);
		return -EINVAL;
	}
	if (slash != NULL) {
		const char *p = slash + 1;

		if (!parse_dec(&p, end, 3, 128, &pfx) || p != end) {
			snprintf(err, errlen, "prefix length '/%.*s' is not a number from 0 to 128",
				(int)RTE_MIN((size_t)(end - slash - 1), (size_t)20), slash + 1);
			return -EINVAL;
		}
	}
	out->kind = RULE_BLOCK_IP6;
	out->prefix = (uint8_t)pfx;
	return 0;
}

int
rule_spec_parse(const char *text, struct rule_spec *out, char *err, size_t errlen)
{
	const char *pos = text;
	struct word kind, val, extra;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!next_word(&pos, &kind)) {
		snprintf(err, errlen,
			"empty rule: expected 'ip A.B.C.D[/LEN]', 'ip IPV6[/LEN]', 'user ID' or "
			"'device ID'");
		return -EINVAL;
	}
	if (!word_is(&kind, "ip") && !word_is(&kind, "user") && !word_is(&kind, "device")) {
		snprintf(err, errlen, "unknown rule kind '%.*s': expected 'ip', 'user' or 'device'",
			(int)RTE_MIN(kind.len, (size_t)20), kind.p);
		return -EINVAL;
	}
	if (!next_word(&pos, &val)) {
		snprintf(err, errlen, "'%.*s' needs a value, e.g. '%s'", (int)kind.len, kind.p,
			word_is(&kind, "ip")	 ? "ip 198.18.0.0/24"
			: word_is(&kind, "user") ? "user 42"
						 : "device abc-123");
		return -EINVAL;
	}
	if (next_word(&pos, &extra)) {
		snprintf(err, errlen, "unexpected '%.*s' after the rule: one rule has two words",
			(int)RTE_MIN(extra.len, (size_t)20), extra.p);
		return -EINVAL;
	}
	if (word_is(&kind, "ip")) {
		rc = memchr(val.p, ':', val.len) != NULL ? parse_ip6(&val, out, err, errlen)
							 : parse_ip(&val, out, err, errlen);
		if (rc != 0)
			return rc;
	} else if (word_is(&kind, "user")) {
		const char *p = val.p;
		uint64_t u;

		if (!parse_dec(&p, val.p + val.len, 19, RULE_USER_MAX, &u) ||
			p != val.p + val.len || u == 0) {
			snprintf(err, errlen,
				"user id '%.*s' is not a decimal number from 1 to %lld "
				"(no sign, no leading zeros)",
				(int)RTE_MIN(val.len, (size_t)24), val.p, (long long)RULE_USER_MAX);
			return -EINVAL;
		}
		out->kind = RULE_BLOCK_USER;
		out->user = u;
	} else {
		if (val.len > RULE_DEVICE_MAX) {
			snprintf(err, errlen, "device id '%.20s...' is %zu bytes long, at most %u",
				val.p, val.len, RULE_DEVICE_MAX);
			return -EINVAL;
		}
		out->kind = RULE_BLOCK_DEVICE;
		memcpy(out->device, val.p, val.len);
	}
	return rule_spec_check(out, err, errlen);
}

int
rule_spec_format(const struct rule_spec *s, char *buf, size_t len)
{
	char tmp[RULE_TEXT_MAX], a[INET6_ADDRSTRLEN], msg[8];
	int n;

	if (rule_spec_check(s, msg, sizeof(msg)) != 0)
		return -EINVAL;
	switch (s->kind) {
	case RULE_BLOCK_IP:
		ip_text(s->ip, a);
		n = s->prefix == 32 ? snprintf(tmp, sizeof(tmp), "ip %s", a)
				    : snprintf(tmp, sizeof(tmp), "ip %s/%u", a, s->prefix);
		break;
	case RULE_BLOCK_IP6:
		ip6_text(s->ip6, a);
		n = s->prefix == 128 ? snprintf(tmp, sizeof(tmp), "ip %s", a)
				     : snprintf(tmp, sizeof(tmp), "ip %s/%u", a, s->prefix);
		break;
	case RULE_BLOCK_USER:
		n = snprintf(tmp, sizeof(tmp), "user %llu", (unsigned long long)s->user);
		break;
	default:
		n = snprintf(tmp, sizeof(tmp), "device %s", s->device);
		break;
	}
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	memcpy(buf, tmp, (size_t)n + 1);
	return n;
}

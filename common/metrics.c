/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h> /* isnan, isinf: macros, no libm */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/log.h"

static struct metrics *metrics_open(const char *address, uint16_t port, unsigned flags,
	const uint32_t *addr, const uint32_t *mask, unsigned n_allow, metrics_render_fn fn,
	void *arg, char *err, size_t errlen);

struct metrics_seen {
	char name[METRICS_NAME_MAX];
	uint8_t type;
};

struct metrics {
	struct MHD_Daemon *daemon; /* NULL when off */
	uint16_t port;
	metrics_render_fn fn;
	void *arg;
	unsigned n_allow; /* 0: every peer (the address decides who can reach it) */
	uint32_t allow_addr[METRICS_ALLOW_MAX], allow_mask[METRICS_ALLOW_MAX]; /* host order */
};

/* ---- the text ------------------------------------------------------------------------- */

void
metrics_text_init(struct metrics_text *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max != 0 ? max : METRICS_TEXT_MAX;
}

void
metrics_text_fini(struct metrics_text *t)
{
	free(t->buf);
	free(t->seen);
	memset(t, 0, sizeof(*t));
}

static int
fail(struct metrics_text *t, int err)
{
	if (t->error == 0)
		t->error = err;
	return t->error;
}

/* Makes room for n more bytes and the NUL. */
static int
reserve(struct metrics_text *t, size_t n)
{
	if (t->error != 0)
		return t->error;
	if (t->len + n + 1 <= t->cap)
		return 0;
	if (t->len + n + 1 > t->max)
		return fail(t, -E2BIG);
	size_t cap = t->cap != 0 ? t->cap : 4096;

	while (cap < t->len + n + 1)
		cap *= 2;
	if (cap > t->max)
		cap = t->max;
	char *b = realloc(t->buf, cap);

	if (b == NULL)
		return fail(t, -ENOMEM);
	t->buf = b;
	t->cap = cap;
	return 0;
}

static int
append(struct metrics_text *t, const char *s, size_t n)
{
	if (reserve(t, n) != 0)
		return t->error;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
	return 0;
}

static int
vappend(struct metrics_text *t, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	if (t->error != 0)
		return t->error;
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return fail(t, -EINVAL);
	if (reserve(t, (size_t)n) != 0)
		return t->error;
	vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
	t->len += (size_t)n;
	return 0;
}

int
metrics_printf(struct metrics_text *t, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vappend(t, fmt, ap);
	va_end(ap);
	return rc;
}

bool
metrics_name_ok(const char *name)
{
	size_t n = name != NULL ? strnlen(name, METRICS_NAME_MAX) : 0;

	if (n == 0 || n == METRICS_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  c == ':' || (i > 0 && c >= '0' && c <= '9');

		if (!ok)
			return false;
	}
	return true;
}

static bool
label_name_ok(const char *key)
{
	if (key == NULL || key[0] == '\0' || (key[0] == '_' && key[1] == '_'))
		return false; /* names starting with "__" are reserved to Prometheus */
	for (size_t i = 0; key[i] != '\0'; i++) {
		char c = key[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			    (i > 0 && c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

int
metrics_label(char *labels, size_t cap, const char *key, const char *value)
{
	size_t len = strnlen(labels, cap);
	size_t at = len;

	if (!label_name_ok(key))
		return -EINVAL;
	if (len == cap)
		return -ENOSPC;
#define PUT(ch)                       \
	do {                          \
		if (at + 1 >= cap)    \
			goto nospace; \
		labels[at++] = (ch);  \
	} while (0)
	/* Built in place; when the pair does not fit, labels is cut back to len. */
	if (len > 0)
		PUT(',');
	for (const char *k = key; *k != '\0'; k++)
		PUT(*k);
	PUT('=');
	PUT('"');
	for (const char *v = value != NULL ? value : ""; *v != '\0'; v++) {
		/* The exposition format escapes exactly these three in label values. */
		if (*v == '\\' || *v == '"') {
			PUT('\\');
			PUT(*v);
		} else if (*v == '\n') {
			PUT('\\');
			PUT('n');
		} else {
			PUT(*v);
		}
	}
	PUT('"');
#undef PUT
	labels[at] = '\0';
	return 0;
nospace:
	labels[len] = '\0';
	return -ENOSPC;
}

/* "# HELP" text: backslash and newline are escaped (the format's rule for help). */
static int
append_help(struct metrics_text *t, const char *help)
{
	for (const char *p = help; *p != '\0' && t->error == 0; p++) {
		if (*p == '\\')
			append(t, "\\\\", 2);
		else if (*p == '\n')
			append(t, "\\n", 2);
		else
			append(t, p, 1);
	}
	return t->error;
}

/* Writes HELP and TYPE when name starts a new metric; refuses a split or re-typed one. */
static int
begin_sample(struct metrics_text *t, const char *name, const char *help, enum metrics_type type)
{
	if (t->error != 0)
		return t->error;
	if (!metrics_name_ok(name))
		return fail(t, -EINVAL);
	if (strcmp(t->last, name) == 0) {
		for (unsigned i = t->n_seen; i-- > 0;)
			if (strcmp(t->seen[i].name, name) == 0)
				return t->seen[i].type == type ? 0 : fail(t, -EEXIST);
		return fail(t, -EEXIST); /* not reached: last is always in seen */
	}
	for (unsigned i = 0; i < t->n_seen; i++)
		if (strcmp(t->seen[i].name, name) == 0)
			return fail(t, -EEXIST);
	if (t->n_seen == t->cap_seen) {
		unsigned cap = t->cap_seen != 0 ? t->cap_seen * 2 : 64;
		struct metrics_seen *s = realloc(t->seen, sizeof(*s) * cap);

		if (s == NULL)
			return fail(t, -ENOMEM);
		t->seen = s;
		t->cap_seen = cap;
	}
	snprintf(t->seen[t->n_seen].name, sizeof(t->seen[0].name), "%s", name);
	t->seen[t->n_seen].type = (uint8_t)type;
	t->n_seen++;
	snprintf(t->last, sizeof(t->last), "%s", name);
	if (help != NULL && help[0] != '\0') {
		metrics_printf(t, "# HELP %s ", name);
		append_help(t, help);
		append(t, "\n", 1);
	}
	return metrics_printf(
		t, "# TYPE %s %s\n", name, type == METRICS_COUNTER ? "counter" : "gauge");
}

static int
sample(struct metrics_text *t, const char *name, const char *help, enum metrics_type type,
	const char *labels, const char *value)
{
	if (begin_sample(t, name, help, type) != 0)
		return t->error;
	if (labels != NULL && labels[0] != '\0')
		return metrics_printf(t, "%s{%s} %s\n", name, labels, value);
	return metrics_printf(t, "%s %s\n", name, value);
}

int
metrics_counter(struct metrics_text *t, const char *name, const char *help, const char *labels,
	uint64_t value)
{
	char v[24];

	snprintf(v, sizeof(v), "%" PRIu64, value);
	return sample(t, name, help, METRICS_COUNTER, labels, v);
}

int
metrics_gauge(struct metrics_text *t, const char *name, const char *help, const char *labels,
	double value)
{
	char v[40];

	if (isnan(value))
		snprintf(v, sizeof(v), "NaN");
	else if (isinf(value))
		snprintf(v, sizeof(v), value > 0 ? "+Inf" : "-Inf");
	else if (value > -9007199254740992.0 && value < 9007199254740992.0 &&
		 value == (double)(int64_t)value)
		snprintf(v, sizeof(v), "%" PRId64, (int64_t)value); /* an integer, exactly */
	else {
		/* The shortest of the usual precisions that reads back as the same double. */
		snprintf(v, sizeof(v), "%.15g", value);
		if (strtod(v, NULL) != value)
			snprintf(v, sizeof(v), "%.17g", value);
	}
	return sample(t, name, help, METRICS_GAUGE, labels, v);
}

int
metrics_gauge_int(struct metrics_text *t, const char *name, const char *help, const char *labels,
	int64_t value)
{
	char v[24];

	snprintf(v, sizeof(v), "%" PRId64, value);
	return sample(t, name, help, METRICS_GAUGE, labels, v);
}

/* ---- the server ------------------------------------------------------------------------- */

static enum MHD_Result
answer_text(struct MHD_Connection *c, unsigned status, const char *text, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)(uintptr_t)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result rc;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (allow != NULL)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result
answer_metrics(struct metrics *m, struct MHD_Connection *c)
{
	struct metrics_text t;
	struct MHD_Response *r;
	enum MHD_Result rc;

	metrics_text_init(&t, 0);
	m->fn(m->arg, &t);
	if (t.error != 0) {
		LOG_RL(LOG_LEVEL_ERR, 60000, "metrics: the metrics could not be written: %s",
			t.error == -E2BIG    ? "more than the largest answer"
			: t.error == -ENOMEM ? "out of memory"
					     : "a metric name or order is wrong (a bug)");
		metrics_text_fini(&t);
		return answer_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			"the metrics could not be written; see the control plane's log\n", NULL);
	}
	if (t.len == 0) {
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		metrics_text_fini(&t);
	} else {
		/* The buffer goes to MHD, which frees it with free() once it is sent. */
		r = MHD_create_response_from_buffer(t.len, t.buf, MHD_RESPMEM_MUST_FREE);
		if (r != NULL)
			t.buf = NULL;
		metrics_text_fini(&t);
	}
	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, METRICS_CONTENT_TYPE);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	struct metrics *m = cls;

	(void)version;
	(void)upload_data;
	(void)req_cls;
	/* The first call has the headers only: every answer here is known from them, so it is
	 * queued at once and a request body, if any, is never read (MHD then closes). */
	*upload_data_size = 0;
	if (strcmp(url, "/metrics") != 0)
		return answer_text(
			c, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n", NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			"method not allowed: /metrics answers GET and HEAD\n", "GET, HEAD");
	return answer_metrics(m, c);
}

static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[256];
	size_t n;

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	LOG_RL(LOG_LEVEL_WARN, 10000, "metrics: %s", line);
}

/* Parses a numeric address into *ss; false when it is not one. */
static bool
parse_address(const char *address, uint16_t port, struct sockaddr_storage *ss, socklen_t *len,
	bool *loopback)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, address, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		*len = sizeof(*a4);
		*loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
		return true;
	}
	if (inet_pton(AF_INET6, address, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
		*loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
		return true;
	}
	return false;
}

/*
 * libmicrohttpd's accept policy: with an allow-list, a peer on the loopback or in one of its
 * networks; every other connection is closed before a byte is read.
 */
bool
metrics_peer_allowed(const uint32_t *addr, const uint32_t *mask, unsigned n,
	const struct sockaddr *sa, socklen_t len)
{
	uint32_t a;

	if (n == 0)
		return true;
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_LOOPBACK(a6))
			return true;
		if (!IN6_IS_ADDR_V4MAPPED(a6))
			return false;
		memcpy(&a, &a6->s6_addr[12], 4);
	} else if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		a = ((const struct sockaddr_in *)sa)->sin_addr.s_addr;
	} else {
		return false;
	}
	a = ntohl(a);
	if ((a >> 24) == 127)
		return true;
	for (unsigned i = 0; i < n; i++)
		if ((a & mask[i]) == addr[i])
			return true;
	return false;
}

static enum MHD_Result
accept_peer(void *cls, const struct sockaddr *sa, socklen_t len)
{
	const struct metrics *m = cls;
	char text[INET6_ADDRSTRLEN] = "?";

	if (metrics_peer_allowed(m->allow_addr, m->allow_mask, m->n_allow, sa, len))
		return MHD_YES;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, text, sizeof(text));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, text,
			sizeof(text));
	LOG_RL(LOG_LEVEL_WARN, 60000,
		"metrics: refused a scrape from %s: not in the allow-list "
		"(controlplane.metrics_allow)",
		text);
	return MHD_NO;
}

int
metrics_parse_allow(const char *text, uint32_t *addr, uint32_t *mask, unsigned cap, unsigned *n,
	char *err, size_t errlen)
{
	char buf[512], *save = NULL;

	*n = 0;
	if (text == NULL)
		return 0;
	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, errlen, "metrics allow-list: longer than %zu bytes", sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *w = strtok_r(buf, ", \t", &save); w != NULL; w = strtok_r(NULL, ", \t", &save)) {
		char *slash = strchr(w, '/');
		unsigned long bits = 32;
		struct in_addr in;
		char *end, word[64];

		snprintf(word, sizeof(word), "%s", w); /* as given, for a message */

		if (slash != NULL) {
			*slash = '\0';
			bits = strtoul(slash + 1, &end, 10);
			if (slash[1] == '\0' || *end != '\0' || bits > 32)
				goto bad;
		}
		if (inet_pton(AF_INET, w, &in) != 1)
			goto bad;
		if (*n == cap) {
			snprintf(err, errlen, "metrics allow-list: more than %u networks", cap);
			return -EINVAL;
		}
		uint32_t m = bits == 0 ? 0 : ~0u << (32 - bits);
		uint32_t a = ntohl(in.s_addr);

		if ((a & ~m) != 0) {
			snprintf(err, errlen,
				"metrics allow-list: %s/%lu has bits set past its prefix (did you "
				"mean "
				"%u.%u.%u.%u/%lu?)",
				w, bits, (a & m) >> 24, ((a & m) >> 16) & 0xff,
				((a & m) >> 8) & 0xff, (a & m) & 0xff, bits);
			return -EINVAL;
		}
		addr[*n] = a;
		mask[*n] = m;
		(*n)++;
		continue;
	bad:
		snprintf(err, errlen,
			"metrics allow-list: \"%s\" is not an IPv4 address or network A.B.C.D/LEN "
			"(networks separated by commas)",
			word);
		return -EINVAL;
	}
	return 0;
}

struct metrics *
metrics_start_allow(const char *address, uint16_t port, const char *allow, metrics_render_fn fn,
	void *arg, char *err, size_t errlen)
{
	uint32_t addr[METRICS_ALLOW_MAX], mask[METRICS_ALLOW_MAX];
	unsigned n;

	if (metrics_parse_allow(allow, addr, mask, METRICS_ALLOW_MAX, &n, err, errlen) != 0)
		return NULL;
	if (n == 0)
		return metrics_start_ex(address, port, 0, fn, arg, err, errlen);
	return metrics_open(
		address, port, METRICS_F_ALLOW_PUBLIC, addr, mask, n, fn, arg, err, errlen);
}

struct metrics *
metrics_start_ex(const char *address, uint16_t port, unsigned flags, metrics_render_fn fn,
	void *arg, char *err, size_t errlen)
{
	return metrics_open(address, port, flags, NULL, NULL, 0, fn, arg, err, errlen);
}

static struct metrics *
metrics_open(const char *address, uint16_t port, unsigned flags, const uint32_t *addr,
	const uint32_t *mask, unsigned n_allow, metrics_render_fn fn, void *arg, char *err,
	size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sslen = 0;
	bool loopback = false;
	struct metrics *m;
	int fd = -1, one = 1;

	if (port != 0 && fn == NULL) {
		snprintf(err, errlen, "metrics: no render function (a bug)");
		return NULL;
	}
	if (port != 0 &&
		(address == NULL || !parse_address(address, port, &ss, &sslen, &loopback))) {
		snprintf(err, errlen,
			"metrics: \"%s\" is not a numeric IPv4 or IPv6 address; set the metrics "
			"address to e.g. 127.0.0.1",
			address != NULL ? address : "(none)");
		return NULL;
	}
	if (port != 0 && !loopback && !(flags & METRICS_F_ALLOW_PUBLIC)) {
		snprintf(err, errlen,
			"metrics: %s is not a loopback address; metrics have no authentication, so "
			"bind them to 127.0.0.1 or ::1 (and scrape through a proxy), or give the "
			"networks that may scrape them (controlplane.metrics_allow)",
			address);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		snprintf(err, errlen, "metrics: out of memory");
		return NULL;
	}
	if (port == 0)
		return m; /* off */
	m->port = port;
	m->fn = fn;
	m->arg = arg;
	m->n_allow = n_allow;
	for (unsigned i = 0; i < n_allow; i++) {
		m->allow_addr[i] = addr[i];
		m->allow_mask[i] = mask[i];
	}
	/* The socket is ours so that a refused bind says why (MHD would only fail). */
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
		(ss.ss_family == AF_INET6 &&
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
		bind(fd, (struct sockaddr *)&ss, sslen) != 0 || listen(fd, 64) != 0) {
		int e = errno;

		snprintf(err, errlen, "metrics: cannot listen on %s%s%s:%u: %s%s",
			ss.ss_family == AF_INET6 ? "[" : "", address,
			ss.ss_family == AF_INET6 ? "]" : "", port, strerror(e),
			e == EADDRINUSE ? " (another program has this port: choose another metrics "
					  "port, or 0 to turn metrics off)"
					: "");
		goto fail;
	}
	m->daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, port,
		accept_peer, m, on_request, m, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
		MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, 64u,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, 16u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
		MHD_OPTION_END);
	if (m->daemon == NULL) {
		snprintf(err, errlen,
			"metrics: libmicrohttpd could not start on %s:%u (no thread or memory?)",
			address, port);
		goto fail;
	}
	return m;
fail:
	if (fd >= 0)
		close(fd);
	free(m);
	return NULL;
}

struct metrics *
metrics_start(const char *address, uint16_t port, metrics_render_fn fn, void *arg, char *err,
	size_t errlen)
{
	return metrics_start_ex(address, port, 0, fn, arg, err, errlen);
}

uint16_t
metrics_port(const struct metrics *m)
{
	return m != NULL && m->daemon != NULL ? m->port : 0;
}

void
metrics_stop(struct metrics *m)
{
	if (m == NULL)
		return;
	/* MHD closes the listening socket it was given, and joins its thread. */
	if (m->daemon != NULL)
		MHD_stop_daemon(m->daemon);
	free(m);
}

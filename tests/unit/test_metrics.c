/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * controlplane/metrics: the Prometheus text writers (HELP/TYPE once per metric, escaping, name
 * checks, errors for a split or re-typed metric, the size bound), and the libmicrohttpd server
 * on 127.0.0.1 asked by a plain socket client and by curl: 200 with the text, HEAD, 404
 * elsewhere, 405 for other methods, 500 when the render fails, refused addresses and ports,
 * port 0 as "off", and nothing listening after the stop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/metrics.h"
#include "tests/lib/child_proc.h"
#include "tests/tap.h"

/* ---- the writers ------------------------------------------------------------------------ */

static bool
text_is(const struct metrics_text *t, const char *want)
{
	const char *got = t->buf != NULL ? t->buf : "";
	bool same = strcmp(got, want) == 0;

	if (!same)
		tap_diag("got:\n%s# want:\n%s", got, want);
	return same;
}

static void
render_nothing(void *arg, struct metrics_text *t)
{
	(void)arg;
	(void)t;
}

static void
test_writers(void)
{
	struct metrics_text t;
	char l[256];

	metrics_text_init(&t, 0);
	metrics_counter(&t, "fg_requests_total", "Requests.", NULL, 5);
	tap_ok(text_is(&t, "# HELP fg_requests_total Requests.\n"
			   "# TYPE fg_requests_total counter\n"
			   "fg_requests_total 5\n"),
		"a counter: HELP, TYPE, sample");
	metrics_text_fini(&t);

	metrics_text_init(&t, 0);
	l[0] = '\0';
	metrics_label(l, sizeof(l), "code", "200");
	metrics_counter(&t, "fg_http_total", "By code.", l, 7);
	l[0] = '\0';
	metrics_label(l, sizeof(l), "code", "503");
	metrics_counter(&t, "fg_http_total", "By code.", l, 1);
	metrics_gauge_int(&t, "fg_ready", NULL, "", -3);
	tap_ok(text_is(&t, "# HELP fg_http_total By code.\n"
			   "# TYPE fg_http_total counter\n"
			   "fg_http_total{code=\"200\"} 7\n"
			   "fg_http_total{code=\"503\"} 1\n"
			   "# TYPE fg_ready gauge\n"
			   "fg_ready -3\n") &&
			t.error == 0,
		"HELP and TYPE once per metric; no HELP when there is no help; a negative gauge");
	metrics_text_fini(&t);

	/* Escaping: label values \\ \" \n; help \\ and \n. */
	metrics_text_init(&t, 0);
	l[0] = '\0';
	tap_ok(metrics_label(l, sizeof(l), "name", "a\"b\\c\nd") == 0 &&
			metrics_label(l, sizeof(l), "dp", "5") == 0 &&
			strcmp(l, "name=\"a\\\"b\\\\c\\nd\",dp=\"5\"") == 0,
		"label values are escaped and joined with commas: %s", l);
	metrics_gauge(&t, "fg_x", "line one\nback\\slash \"quotes\" stay", l, 1.5);
	tap_ok(text_is(&t, "# HELP fg_x line one\\nback\\\\slash \"quotes\" stay\n"
			   "# TYPE fg_x gauge\n"
			   "fg_x{name=\"a\\\"b\\\\c\\nd\",dp=\"5\"} 1.5\n"),
		"help is escaped (backslash, newline), quotes left alone");
	metrics_text_fini(&t);

	/* Gauge values as Prometheus spells them. */
	static const struct {
		double v;
		const char *want;
	} values[] = {
		{0, "0"},
		{-2, "-2"},
		{1e15, "1000000000000000"},
		{0.1, "0.1"},
		{1.0 / 3, "0.33333333333333331"},
		{1e300, "1e+300"},
		{0.1 + 0.2, "0.30000000000000004"},
		{NAN, "NaN"},
		{INFINITY, "+Inf"},
		{-INFINITY, "-Inf"},
	};
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		char want[128];

		metrics_text_init(&t, 0);
		metrics_gauge(&t, "g", NULL, NULL, values[i].v);
		snprintf(want, sizeof(want), "# TYPE g gauge\ng %s\n", values[i].want);
		tap_ok(text_is(&t, want), "gauge value written as %s", values[i].want);
		metrics_text_fini(&t);
	}
	metrics_text_init(&t, 0);
	metrics_counter(&t, "c_total", NULL, NULL, UINT64_MAX);
	tap_ok(text_is(&t, "# TYPE c_total counter\nc_total 18446744073709551615\n"),
		"a counter is written exactly up to 2^64-1");
	metrics_text_fini(&t);
}

static void
test_errors(void)
{
	static const struct {
		const char *name;
		bool ok;
	} names[] = {
		{"flashgate_dp_drops_total", true},
		{"a:b_c", true},
		{"_x9", true},
		{"", false},
		{"9x", false},
		{"a-b", false},
		{"a b", false},
		{"a.b", false},
		{"é", false},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		tap_ok(metrics_name_ok(names[i].name) == names[i].ok, "metric name \"%s\" %s",
			names[i].name, names[i].ok ? "accepted" : "refused");
	char longname[METRICS_NAME_MAX + 1];

	memset(longname, 'a', sizeof(longname) - 1);
	longname[METRICS_NAME_MAX] = '\0';
	tap_ok(!metrics_name_ok(longname) && !metrics_name_ok(NULL),
		"a name of METRICS_NAME_MAX bytes and NULL are refused");

	struct metrics_text t;

	metrics_text_init(&t, 0);
	tap_ok(metrics_counter(&t, "bad-name", NULL, NULL, 1) == -EINVAL && t.error == -EINVAL &&
			t.len == 0,
		"a bad metric name: -EINVAL, nothing written");
	tap_ok(metrics_counter(&t, "good", NULL, NULL, 1) == -EINVAL && t.len == 0,
		"after an error, nothing more is written");
	metrics_text_fini(&t);

	metrics_text_init(&t, 0);
	metrics_counter(&t, "a_total", NULL, NULL, 1);
	metrics_counter(&t, "b_total", NULL, NULL, 1);
	tap_eq_int(metrics_counter(&t, "a_total", NULL, NULL, 2), -EEXIST,
		"a metric split by another one: -EEXIST");
	metrics_text_fini(&t);

	metrics_text_init(&t, 0);
	metrics_counter(&t, "a", NULL, NULL, 1);
	tap_eq_int(metrics_gauge_int(&t, "a", NULL, NULL, 2), -EEXIST,
		"the same metric as counter then gauge: -EEXIST");
	metrics_text_fini(&t);

	metrics_text_init(&t, 64);
	metrics_counter(&t, "small", NULL, NULL, 1);	       /* 29 bytes */
	int rc2 = metrics_counter(&t, "small", NULL, NULL, 2); /* 8 more */
	int rc3 = metrics_counter(&t, "small", NULL, "k=\"a long label value\"", 3);

	tap_ok(rc2 == 0 && rc3 == -E2BIG && t.error == -E2BIG && t.len == 37,
		"past the size bound of 64: -E2BIG, the text stops before it (%zu bytes)", t.len);
	metrics_text_fini(&t);

	char l[16] = "";

	tap_eq_int(metrics_label(l, sizeof(l), "__name__", "x"), -EINVAL,
		"label keys starting with __ are refused");
	tap_eq_int(metrics_label(l, sizeof(l), "1a", "x"), -EINVAL, "label key 1a is refused");
	tap_eq_int(metrics_label(l, sizeof(l), "a-b", "x"), -EINVAL, "label key a-b is refused");
	tap_ok(metrics_label(l, sizeof(l), "dp", "12345") == 0 &&
			metrics_label(l, sizeof(l), "x", "y") == -ENOSPC &&
			strcmp(l, "dp=\"12345\"") == 0,
		"a label that does not fit: -ENOSPC, the list unchanged (%s)", l);
}

/* ---- the server ------------------------------------------------------------------------- */

struct render_state {
	unsigned calls;
	bool fail;
};

static void
render(void *arg, struct metrics_text *t)
{
	struct render_state *st = arg;
	char l[64] = "";

	st->calls++;
	metrics_label(l, sizeof(l), "dp", "7");
	metrics_counter(t, "fg_test_total", "A test counter.", l, 42);
	metrics_gauge(t, "fg_test_ratio", "A test gauge.", NULL, 0.25);
	if (st->fail)
		metrics_counter(t, "fg_test_total", NULL, NULL, 1); /* written twice: an error */
}

static const char want_body[] = "# HELP fg_test_total A test counter.\n"
				"# TYPE fg_test_total counter\n"
				"fg_test_total{dp=\"7\"} 42\n"
				"# HELP fg_test_ratio A test gauge.\n"
				"# TYPE fg_test_ratio gauge\n"
				"fg_test_ratio 0.25\n";

struct reply {
	int status; /* -1: no connection or no answer */
	char head[2048];
	char body[4096];
	size_t body_len;
};

/* Sends request (a whole HTTP request) to 127.0.0.1:port and reads the answer until close. */
static void
http(unsigned port, const char *request, struct reply *r)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {.tv_sec = 5};
	static char raw[8192];
	size_t n = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(r, 0, sizeof(*r));
	r->status = -1;
	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
		write(fd, request, strlen(request)) != (ssize_t)strlen(request)) {
		close(fd);
		return;
	}
	for (;;) {
		ssize_t k = read(fd, raw + n, sizeof(raw) - 1 - n);

		if (k <= 0)
			break;
		n += (size_t)k;
		if (n == sizeof(raw) - 1)
			break;
	}
	close(fd);
	raw[n] = '\0';
	char *end = strstr(raw, "\r\n\r\n");

	if (end == NULL || sscanf(raw, "HTTP/1.1 %d", &r->status) != 1) {
		r->status = -1;
		return;
	}
	size_t hlen = (size_t)(end - raw);

	snprintf(r->head, sizeof(r->head), "%.*s", (int)hlen, raw);
	r->body_len = n - hlen - 4;
	if (r->body_len >= sizeof(r->body))
		r->body_len = sizeof(r->body) - 1;
	memcpy(r->body, end + 4, r->body_len);
	r->body[r->body_len] = '\0';
}

/* Whether the answer's head has this header line (case-insensitive name, exact value). */
static bool
has_header(const struct reply *r, const char *name, const char *value)
{
	char want[256];

	snprintf(want, sizeof(want), "\r\n%s: %s\r", name, value);
	char head[sizeof(r->head) + 2];

	snprintf(head, sizeof(head), "%s\r\n", r->head);
	for (char *p = head; *p != '\0'; p++) {
		if (strncasecmp(p, want, strlen(name) + 2) == 0 &&
			strncmp(p + strlen(name) + 2, want + strlen(name) + 2,
				strlen(want) - strlen(name) - 2) == 0)
			return true;
	}
	return false;
}

static void
test_server(void)
{
	struct render_state st = {0};
	char err[256] = "", req[256];
	unsigned port = child_free_port();
	struct reply r;
	struct metrics *m =
		metrics_start("127.0.0.1", (uint16_t)port, render, &st, err, sizeof(err));

	if (!tap_ok(m != NULL && metrics_port(m) == port, "metrics_start on 127.0.0.1:%u: %s", port,
		    m != NULL ? "ok" : err))
		return;

	http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
	tap_eq_int(r.status, 200, "GET /metrics: 200");
	tap_ok(has_header(&r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
		"Content-Type: text/plain; version=0.0.4");
	tap_ok(strcmp(r.body, want_body) == 0, "the body is what the render function wrote");
	tap_eq_int(st.calls, 1, "the render function ran once");

	http(port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
	tap_ok(r.status == 200 && r.body_len == 0, "HEAD /metrics: 200 without a body");
	http(port, "GET /metrics?name[]=x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
	tap_ok(r.status == 200 && strcmp(r.body, want_body) == 0,
		"GET /metrics with a query string: 200");
	http(port, "GET /metrics HTTP/1.0\r\n\r\n", &r);
	tap_ok(strncmp(r.head, "HTTP/1.", 7) == 0 && strcmp(r.body, want_body) == 0,
		"an HTTP/1.0 request is answered too");

	static const struct {
		const char *request;
		int status;
		const char *allow;
		const char *what;
	} cases[] = {
		{"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404, NULL, "GET /"},
		{"GET /metricsx HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404, NULL,
			"GET /metricsx"},
		{"GET /metrics/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404, NULL,
			"GET /metrics/"},
		{"POST /other HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404, NULL,
			"POST /other"},
		{"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: "
		 "close\r\n\r\nhello",
			405, "GET, HEAD", "POST /metrics with a body"},
		{"PUT /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: "
		 "close\r\n\r\n",
			405, "GET, HEAD", "PUT /metrics"},
		{"DELETE /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 405,
			"GET, HEAD", "DELETE /metrics"},
		{"BREW /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 405, "GET, HEAD",
			"an unknown method"},
	};
	unsigned calls = st.calls;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		http(port, cases[i].request, &r);
		tap_ok(r.status == cases[i].status &&
				(cases[i].allow == NULL || has_header(&r, "Allow", cases[i].allow)),
			"%s: %d%s%s (got %d)", cases[i].what, cases[i].status,
			cases[i].allow ? ", Allow: " : "", cases[i].allow ? cases[i].allow : "",
			r.status);
	}
	tap_eq_int(st.calls, calls, "404 and 405 answers do not render the metrics");

	st.fail = true;
	http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
	tap_ok(r.status == 500 && strstr(r.body, "fg_test") == NULL,
		"a render that fails answers 500, with none of the half-written text");
	st.fail = false;

	/* Many requests on one keep-alive connection would hide a per-request leak of state:
	 * ask 50 times, each on its own connection. */
	unsigned ok200 = 0;

	for (int i = 0; i < 50; i++) {
		http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
		ok200 += r.status == 200 && strcmp(r.body, want_body) == 0;
	}
	tap_eq_int(ok200, 50, "50 requests in a row: 50 complete answers");

	/* A real client. */
	snprintf(req, sizeof(req),
		"curl -sS --max-time 10 -o /dev/null -w '%%{http_code} %%{content_type}' "
		"http://127.0.0.1:%u/metrics 2>&1",
		port);
	if (system("command -v curl >/dev/null 2>&1") == 0) {
		char out[256] = "";
		FILE *p = popen(req, "r");

		if (p != NULL) {
			if (fgets(out, sizeof(out), p) == NULL)
				out[0] = '\0';
			pclose(p);
		}
		tap_ok(strcmp(out, "200 text/plain; version=0.0.4; charset=utf-8") == 0,
			"curl gets 200 and the exposition content type (%s)", out);
		snprintf(req, sizeof(req),
			"curl -sS --max-time 10 -o /dev/null -w '%%{http_code}' -X POST "
			"http://127.0.0.1:%u/metrics 2>&1",
			port);
		p = popen(req, "r");
		out[0] = '\0';
		if (p != NULL) {
			if (fgets(out, sizeof(out), p) == NULL)
				out[0] = '\0';
			pclose(p);
		}
		tap_ok(strcmp(out, "405") == 0, "curl -X POST gets 405 (%s)", out);
	} else {
		tap_ok(1, "curl gets 200 # SKIP curl is not installed");
		tap_ok(1, "curl -X POST gets 405 # SKIP curl is not installed");
	}

	/* The port is taken now: a second server says so. */
	struct metrics *m2 =
		metrics_start("127.0.0.1", (uint16_t)port, render, &st, err, sizeof(err));

	tap_ok(m2 == NULL && strstr(err, "Address already in use") != NULL &&
			strstr(err, "another program has this port") != NULL,
		"a port in use is refused: %s", err);
	metrics_stop(m2);

	metrics_stop(m);
	http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
	tap_eq_int(r.status, -1, "after metrics_stop nothing answers on the port");
}

static void
test_addresses(void)
{
	struct render_state st = {0};
	char err[256];
	static const struct {
		const char *address;
		unsigned flags;
		const char *want; /* NULL: it starts */
	} cases[] = {
		{"10.0.0.1", 0, "not a loopback address"},
		{"0.0.0.0", 0, "not a loopback address"},
		{"::", 0, "not a loopback address"},
		{"2001:db8::1", 0, "not a loopback address"},
		{"localhost", 0, "not a numeric IPv4 or IPv6 address"},
		{"127.0.0.1:9100", 0, "not a numeric IPv4 or IPv6 address"},
		{"", 0, "not a numeric IPv4 or IPv6 address"},
		{NULL, 0, "not a numeric IPv4 or IPv6 address"},
		/* Allowed explicitly, a public address passes the check; TEST-NET-1 is on no
		 * interface here, so the bind says why it failed. */
		{"192.0.2.1", METRICS_F_ALLOW_PUBLIC, "cannot listen on 192.0.2.1"},
		{"127.0.0.2", 0, NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned port = child_free_port();

		err[0] = '\0';
		struct metrics *m = metrics_start_ex(cases[i].address, (uint16_t)port,
			cases[i].flags, render, &st, err, sizeof(err));

		if (cases[i].want == NULL)
			tap_ok(m != NULL, "%s starts (%s)", cases[i].address, m ? "ok" : err);
		else
			tap_ok(m == NULL && strstr(err, cases[i].want) != NULL, "%s%s: %s",
				cases[i].address ? cases[i].address : "(null)",
				cases[i].flags ? " (public allowed)" : "", err);
		metrics_stop(m);
	}

	/* IPv6 loopback, where the machine has it. */
	int fd6 = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	bool have6 = fd6 >= 0 && bind(fd6, (struct sockaddr *)&a6, sizeof(a6)) == 0;

	if (fd6 >= 0)
		close(fd6);
	if (have6) {
		struct metrics *m = metrics_start(
			"::1", (uint16_t)child_free_port(), render, &st, err, sizeof(err));

		tap_ok(m != NULL, "::1 starts (%s)", m ? "ok" : err);
		metrics_stop(m);
	} else {
		tap_ok(1, "::1 starts # SKIP no IPv6 loopback on this machine");
	}

	/* Port 0: off, but a handle all the same. */
	struct metrics *off = metrics_start("127.0.0.1", 0, render, &st, err, sizeof(err));

	tap_ok(off != NULL && metrics_port(off) == 0, "port 0: a handle that serves nothing");
	metrics_stop(off);
	metrics_stop(NULL);
	tap_eq_int(st.calls, 0, "nothing was rendered by these servers");
}

/* The allow-list of a metrics endpoint on a non-loopback address (controlplane.metrics_allow). */
static void
test_allow(void)
{
	static const struct {
		const char *text;
		int n; /* networks parsed; -1: refused with want in err */
		const char *want;
	} parse_cases[] = {
		{"", 0, NULL},
		{"198.18.0.0/15", 1, NULL},
		{"198.18.0.0/15, 10.1.2.3 ,192.0.2.0/24", 3, NULL},
		{"0.0.0.0/0", 1, NULL},
		{"198.18.0.1/15", -1, "bits set past its prefix (did you mean 198.18.0.0/15?)"},
		{"198.18.0.0/33", -1, "\"198.18.0.0/33\" is not an IPv4 address or network"},
		{"198.18.0.0/", -1, "is not an IPv4 address or network"},
		{"2001:db8::/32", -1, "is not an IPv4 address or network"},
		{"localhost", -1, "is not an IPv4 address or network"},
		{"1.1.1.1,2.2.2.2,3.3.3.3,4.4.4.4,5.5.5.5,6.6.6.6,7.7.7.7,8.8.8.8,9.9.9.9,"
		 "10.10.10.10,11.11.11.11,12.12.12.12,13.13.13.13,14.14.14.14,15.15.15.15,"
		 "16.16.16.16,17.17.17.17",
			-1, "more than 16 networks"},
	};
	uint32_t addr[METRICS_ALLOW_MAX], mask[METRICS_ALLOW_MAX];
	unsigned n;
	char err[256];

	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		err[0] = '\0';
		int rc = metrics_parse_allow(
			parse_cases[i].text, addr, mask, METRICS_ALLOW_MAX, &n, err, sizeof(err));

		if (parse_cases[i].n >= 0)
			tap_ok(rc == 0 && n == (unsigned)parse_cases[i].n,
				"allow \"%.40s\": %u (%s)", parse_cases[i].text, n, err);
		else
			tap_ok(rc == -EINVAL && strstr(err, parse_cases[i].want) != NULL,
				"allow \"%.40s\" refused: %s", parse_cases[i].text, err);
	}

	static const struct {
		const char *peer;
		bool allowed;
	} peers[] = {
		{"198.18.3.4", true},	  /* in 198.18.0.0/15 */
		{"198.19.255.255", true}, /* its last address */
		{"198.20.0.1", false},
		{"10.1.2.3", true}, /* a single address */
		{"10.1.2.4", false},
		{"127.0.0.1", true}, /* the loopback always */
		{"127.9.9.9", true},
		{"::1", true},
		{"::ffff:198.18.0.9", true}, /* IPv4-mapped */
		{"::ffff:203.0.113.9", false},
		{"2001:db8::1", false},
	};
	tap_ok(metrics_parse_allow("198.18.0.0/15,10.1.2.3", addr, mask, METRICS_ALLOW_MAX, &n, err,
		       sizeof(err)) == 0 &&
			n == 2,
		"the allow-list of the peer checks");
	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
		struct sockaddr_storage ss = {0};
		socklen_t len;
		struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;

		if (inet_pton(AF_INET, peers[i].peer, &a4->sin_addr) == 1) {
			a4->sin_family = AF_INET;
			len = sizeof(*a4);
		} else {
			inet_pton(AF_INET6, peers[i].peer, &a6->sin6_addr);
			a6->sin6_family = AF_INET6;
			len = sizeof(*a6);
		}
		tap_ok(metrics_peer_allowed(addr, mask, n, (struct sockaddr *)&ss, len) ==
				peers[i].allowed,
			"peer %s %s", peers[i].peer, peers[i].allowed ? "allowed" : "refused");
	}
	struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0xcb007109)};

	tap_ok(metrics_peer_allowed(addr, mask, 0, (struct sockaddr *)&any, sizeof(any)),
		"no allow-list: every peer (the address decides who can reach it)");

	/* A non-loopback address with an allow-list passes the check (TEST-NET-1 is on no
	 * interface here, so the bind says why it failed); a bad list refuses the start. */
	struct metrics *m = metrics_start_allow("192.0.2.1", (uint16_t)child_free_port(),
		"198.18.0.0/15", render_nothing, NULL, err, sizeof(err));

	tap_ok(m == NULL && strstr(err, "cannot listen on 192.0.2.1") != NULL,
		"192.0.2.1 with an allow-list: past the loopback check (%s)", err);
	m = metrics_start_allow("192.0.2.1", (uint16_t)child_free_port(), "", render_nothing, NULL,
		err, sizeof(err));
	tap_ok(m == NULL && strstr(err, "metrics_allow") != NULL,
		"192.0.2.1 without one: refused, naming metrics_allow (%s)", err);
	m = metrics_start_allow("127.0.0.1", (uint16_t)child_free_port(), "300.1.1.1",
		render_nothing, NULL, err, sizeof(err));
	tap_ok(m == NULL && strstr(err, "\"300.1.1.1\" is not an IPv4 address") != NULL,
		"a bad allow-list refuses the start: %s", err);
	m = metrics_start_allow("127.0.0.1", (uint16_t)child_free_port(), "198.18.0.0/15",
		render_nothing, NULL, err, sizeof(err));
	tap_ok(m != NULL, "127.0.0.1 with an allow-list starts (%s)", m ? "ok" : err);
	metrics_stop(m);
}

int
main(void)
{
	test_writers();
	test_errors();
	test_server();
	test_addresses();
	test_allow();
	return tap_done();
}

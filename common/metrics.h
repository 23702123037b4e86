/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_METRICS_H
#define FG_COMMON_METRICS_H
/*
 * Prometheus metrics over HTTP, served by libmicrohttpd on one internal thread.
 *
 * GET (or HEAD) /metrics answers 200 with the text exposition format 0.0.4, built for each
 * request by a render callback into a struct metrics_text; any other path is 404 and any
 * other method on /metrics is 405. Metrics carry no authentication, so the server binds a
 * loopback address only (127.0.0.0/8 or ::1) unless a public address is allowed explicitly.
 *
 * The render callback runs on the server's thread, one call at a time: what it reads from
 * other threads must be read with atomic loads or under the owner's lock.
 *
 * The metrics_text writers put HELP and TYPE once before the first sample of each metric
 * name, escape help texts and label values, and check metric and label names. Samples of one
 * metric must be written one after the other (the format requires it); a metric that comes
 * back after another one, or with another type, is an error of the text (t->error).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define METRICS_NAME_MAX     128	 /* bytes of a metric name, with its NUL */
#define METRICS_TEXT_MAX     (64u << 20) /* the largest answer: beyond it, 500 */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Flags of metrics_start_ex(). */
#define METRICS_F_ALLOW_PUBLIC 0x1 /* accept an address that is not loopback */

enum metrics_type {
	METRICS_COUNTER = 1,
	METRICS_GAUGE = 2,
};

/* A growing text of metrics. Fields are read-only for callers; use the functions below. */
struct metrics_text {
	char *buf; /* NUL-terminated when not NULL */
	size_t len, cap, max;
	int error; /* the first error: -ENOMEM, -E2BIG (over max), -EINVAL (a bad name),
		      -EEXIST (a metric split or written with two types); 0 if none */
	char last[METRICS_NAME_MAX]; /* the metric whose samples are being written */
	struct metrics_seen *seen;   /* every metric name written, with its type */
	unsigned n_seen, cap_seen;
};

/* Starts an empty text that may grow to max bytes (0: METRICS_TEXT_MAX). Cannot fail. */
void metrics_text_init(struct metrics_text *t, size_t max);

/* Frees what t holds; t can be initialised again. */
void metrics_text_fini(struct metrics_text *t);

/*
 * Appends printf-style text as it is (no checks): for comments or lines a caller has built.
 * Returns 0, or t->error once the text is in error (then nothing more is written).
 */
int metrics_printf(struct metrics_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Appends one counter sample "name{labels} value", preceded by "# HELP name help" and
 * "# TYPE name counter" when name differs from the previous sample's. labels is NULL, "" or
 * what metrics_label() built ("dp=\"5\",reason=\"x\""). Returns 0, or a negative errno (also
 * kept in t->error): -EINVAL for a bad name, -EEXIST when name was written before another
 * metric or with another type, -ENOMEM or -E2BIG when the text cannot grow.
 */
int metrics_counter(struct metrics_text *t, const char *name, const char *help, const char *labels,
	uint64_t value);

/* As metrics_counter() for a gauge; NaN and infinities are written as Prometheus spells them. */
int metrics_gauge(struct metrics_text *t, const char *name, const char *help, const char *labels,
	double value);

/* As metrics_gauge() for an integer value, written exactly. */
int metrics_gauge_int(struct metrics_text *t, const char *name, const char *help,
	const char *labels, int64_t value);

/*
 * Appends key="value" to the label list in labels (cap bytes, NUL-terminated; start with ""),
 * with a comma when the list is not empty. value is escaped as the format requires (\\, \"
 * and \n). Returns 0, -EINVAL for a key that is not a label name ([a-zA-Z_][a-zA-Z0-9_]*, not
 * starting with "__"), or -ENOSPC when it does not fit (then labels is unchanged).
 */
int metrics_label(char *labels, size_t cap, const char *key, const char *value);

/* Whether name is a valid metric name: [a-zA-Z_:][a-zA-Z0-9_:]*, shorter than METRICS_NAME_MAX. */
bool metrics_name_ok(const char *name);

/* Writes the metrics of a request into t. Called on the metrics thread, one call at a time. */
typedef void (*metrics_render_fn)(void *arg, struct metrics_text *t);

struct metrics;

/*
 * Starts serving /metrics on address:port (a numeric IPv4 or IPv6 address of the loopback:
 * "127.0.0.1", "::1"), rendering each answer with fn(arg, t). Port 0 means metrics are off:
 * then a handle that serves nothing is returned, so callers need no special case.
 * Returns NULL with one line in err saying what was wrong and what to do: an address that is
 * not numeric or not loopback, a port in use, no memory or thread.
 */
struct metrics *metrics_start(const char *address, uint16_t port, metrics_render_fn fn, void *arg,
	char *err, size_t errlen);

/* metrics_start() with flags (METRICS_F_*): METRICS_F_ALLOW_PUBLIC accepts any address. */
struct metrics *metrics_start_ex(const char *address, uint16_t port, unsigned flags,
	metrics_render_fn fn, void *arg, char *err, size_t errlen);

#define METRICS_ALLOW_MAX 16 /* networks of an allow-list */

/*
 * Parses an allow-list: IPv4 addresses and networks A.B.C.D/LEN (no bits past the prefix)
 * separated by commas or spaces, into addr[i]/mask[i] (host order), at most cap; *n set.
 * NULL or "" is an empty list. Returns 0, or -EINVAL with one line in err.
 */
int metrics_parse_allow(const char *text, uint32_t *addr, uint32_t *mask, unsigned cap, unsigned *n,
	char *err, size_t errlen);

/*
 * Whether the peer sa (IPv4, or IPv6: its loopback and IPv4-mapped addresses) may scrape under
 * the allow-list addr/mask (n networks; 0: everyone): a loopback peer always, others when in
 * one of the networks.
 */
bool metrics_peer_allowed(const uint32_t *addr, const uint32_t *mask, unsigned n,
	const struct sockaddr *sa, socklen_t len);

/*
 * metrics_start() on any address when allow (metrics_parse_allow()) names networks: then only
 * peers on the loopback or in those networks are served; every other connection is closed
 * unread (a warning a minute at most). allow NULL or "": metrics_start(). Returns as
 * metrics_start(), also NULL for a bad allow-list.
 */
struct metrics *metrics_start_allow(const char *address, uint16_t port, const char *allow,
	metrics_render_fn fn, void *arg, char *err, size_t errlen);

/* The port served, 0 when off. */
uint16_t metrics_port(const struct metrics *m);

/*
 * Stops the server: closes the listening socket and the connections, waits for the thread
 * (a render in progress finishes first) and frees m. NULL is a no-op.
 */
void metrics_stop(struct metrics *m);

#endif

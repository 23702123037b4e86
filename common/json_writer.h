/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_JSON_WRITER_H
#define FG_COMMON_JSON_WRITER_H
/*
 * A JSON writer (RFC 8259) into a caller's buffer, for every program's machine-readable output:
 * the admin socket's answers, a data plane's counters, the load generator's report. Values are
 * written in order; keys are given for members of objects and NULL for elements of arrays and
 * for the top-level value. On overflow it stops writing and jw_end() reports it, so callers
 * check once at the end. Nothing here allocates.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_writer {
	char *buf;
	size_t cap;
	size_t len;
	bool overflow;
	bool comma; /* the next value needs a ',' before it */
};

/* Starts writing into buf (cap bytes, at least 2): empty, NUL-terminated when cap > 0. */
void jw_init(struct json_writer *j, char *buf, size_t cap);

/* Opens an object ('{') or array ('[') as member key (or array element when key is NULL). */
void jw_open(struct json_writer *j, const char *key, char bracket);

/* Closes the innermost object ('}') or array (']'). */
void jw_close(struct json_writer *j, char bracket);

/*
 * A string member or element, escaped as RFC 8259 requires: UTF-8 passes through, each byte
 * that is not part of a valid UTF-8 sequence becomes \ufffd (the answer stays UTF-8).
 */
void jw_str(struct json_writer *j, const char *key, const char *val);

/* Numbers and booleans. */
void jw_u64(struct json_writer *j, const char *key, uint64_t v);
void jw_i64(struct json_writer *j, const char *key, int64_t v);
void jw_bool(struct json_writer *j, const char *key, bool v);

/* A fraction with `decimals` digits after the point (0..9); NaN and infinities as null. */
void jw_double(struct json_writer *j, const char *key, double v, int decimals);

/* A time (Unix ms) as an RFC 3339 string in UTC, "2026-12-01T10:00:00Z". */
void jw_time(struct json_writer *j, const char *key, uint64_t ms);

/*
 * Ends the text with '\n'. Returns its length (with the '\n'), or -ENOSPC when it did not fit
 * (the buffer then holds a truncated text that must not be sent).
 */
int jw_end(struct json_writer *j);

/*
 * Writes text[0..len) (a document jw_end() ended) to the file path, created or truncated.
 * Returns 0, or a negative errno (nothing is printed: the caller names what it was writing).
 */
int jw_write_file(const char *path, const char *text, size_t len);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/secret_input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "common/parse.h"

/* Hex of the longest secret, with room for spaces and a line end around it. */
#define SECRET_TEXT_MAX 1024

/* Reads up to cap - 1 bytes of fd (until EOF, or a line end when one_line) into buf. */
static ssize_t
read_text(int fd, char *buf, size_t cap, bool one_line)
{
	size_t n = 0;

	while (n < cap - 1) {
		ssize_t r = read(fd, buf + n, one_line ? 1 : cap - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
		if (one_line && buf[n - 1] == '\n')
			break;
	}
	buf[n] = '\0';
	return (ssize_t)n;
}

/* Standard input: one line, without echo on a terminal. */
static ssize_t
read_stdin(const char *what, char *buf, size_t cap, char *err, size_t errlen)
{
	struct termios old, quiet;
	bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &old) == 0;
	ssize_t n;

	if (tty) {
		/* Echo goes off before the prompt: nothing typed after it is ever shown. */
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
		quiet.c_lflag |= ICANON;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
		fprintf(stderr, "%s (hex, not shown): ", what);
		fflush(stderr);
	}
	n = read_text(STDIN_FILENO, buf, cap, true);
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
		fputc('\n', stderr);
	}
	if (n < 0)
		snprintf(err, errlen, "%s: reading standard input: %s", what, strerror((int)-n));
	return n;
}

/* A file: only its owner may read or write it. */
static ssize_t
read_file(const char *path, const char *what, char *buf, size_t cap, char *err, size_t errlen)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open %s: %s", what, path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) != 0) {
		n = -errno;
		snprintf(err, errlen, "%s: %s: %s", what, path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		n = -EINVAL;
		snprintf(err, errlen, "%s: %s is not a regular file", what, path);
		goto out;
	}
	if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
		n = -EPERM;
		snprintf(err, errlen,
			"%s: %s is mode %04o: its group or others may read it; a secret's file "
			"must be readable by its owner only: chmod 600 %s",
			what, path, (unsigned)(st.st_mode & 07777), path);
		goto out;
	}
	n = read_text(fd, buf, cap, false);
	if (n < 0)
		snprintf(err, errlen, "%s: reading %s: %s", what, path, strerror((int)-n));
out:
	close(fd);
	return n;
}

/*
 * Reads the secret's text from path or standard input into text (cap bytes) and trims the
 * spaces, tabs and line ends around it. Returns the trimmed text's length (0: empty, with a
 * message naming what was expected, expect) and sets *start; or a negative errno with err.
 */
static ssize_t
read_trimmed(const char *path, const char *what, const char *expect, char *text, size_t cap,
	char **start, char *err, size_t errlen)
{
	ssize_t got;
	char *p, *end;

	if (path == NULL || *path == '\0') {
		snprintf(err, errlen, "%s: no file given (a path, or - for standard input)", what);
		return -EINVAL;
	}
	got = strcmp(path, SECRET_STDIN) == 0 ? read_stdin(what, text, cap, err, errlen)
					      : read_file(path, what, text, cap, err, errlen);
	if (got < 0)
		return got;
	p = text;
	end = text + got;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
		end--;
	*end = '\0';
	if (p == end) {
		snprintf(err, errlen, "%s: %s is empty: expected %s", what,
			strcmp(path, SECRET_STDIN) == 0 ? "standard input" : path, expect);
		return -ENODATA;
	}
	*start = p;
	return end - p;
}

int
secret_read_text(const char *path, const char *what, char *out, size_t cap, size_t *len,
	char *err, size_t errlen)
{
	char text[SECRET_TEXT_MAX], *p = NULL;
	ssize_t n = read_trimmed(path, what, "one line of text", text, sizeof(text), &p, err,
		errlen);

	if (n >= 0 && (size_t)n >= cap) {
		snprintf(err, errlen, "%s: the secret is %zd characters, at most %zu expected",
			what, n, cap - 1);
		n = -ERANGE;
	}
	if (n >= 0) {
		memcpy(out, p, (size_t)n + 1);
		*len = (size_t)n;
	}
	explicit_bzero(text, sizeof(text));
	return n < 0 ? (int)n : 0;
}

int
secret_read_hex(const char *path, const char *what, uint8_t *out, size_t min, size_t cap,
	size_t *len, char *err, size_t errlen)
{
	char text[SECRET_TEXT_MAX], *p = NULL, expect[64];
	size_t n;
	ssize_t got;
	int rc;

	snprintf(expect, sizeof(expect), "%zu..%zu hex digits", 2 * min, 2 * cap);
	got = read_trimmed(path, what, expect, text, sizeof(text), &p, err, errlen);
	if (got < 0) {
		rc = (int)got;
		goto out;
	}
	rc = parse_hex(p, out, cap, &n);
	if (rc == 0 && n < min) {
		explicit_bzero(out, n); /* a short key was decoded: leave nothing of it */
		rc = -ERANGE;
	}
	if (rc == -EINVAL)
		snprintf(err, errlen, "%s: character %zu of the secret is not a hex digit", what,
			n + 1);
	else if (rc != 0)
		snprintf(err, errlen,
			"%s: the secret must be %zu..%zu bytes, an even number of "
			"%zu..%zu hex digits; got %zu digits",
			what, min, cap, 2 * min, 2 * cap, (size_t)got);
	if (rc == 0)
		*len = n;
out:
	explicit_bzero(text, sizeof(text));
	return rc;
}

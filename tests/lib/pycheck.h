/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_PYCHECK_H
#define FG_TESTS_PYCHECK_H
/*
 * Runs a python3 checker of tests/lib on two texts a C test made (a program's text report and its
 * JSON): both go to temporary files, "python3 SCRIPT A B" reads them, and its output (what
 * differs) comes back in out. For the tests of the JSON reports (test_lg_report,
 * test_counters_json), whose checkers read the text as people do and parse the JSON.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Writes len bytes of s to a new temporary file; its name into path (a mkstemp template). */
static inline bool
pycheck_tmpfile(char *path, const char *s, size_t len)
{
	int fd = mkstemp(path);
	bool ok = fd >= 0 && write(fd, s, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * Runs "python3 script A B" on files holding a[0..a_len) and b[0..b_len). Returns true when it
 * exits 0; its output (stdout and stderr, at most cap - 1 bytes) is in out, NUL-terminated.
 */
static inline bool
pycheck_run(const char *script, const char *a, size_t a_len, const char *b, size_t b_len,
	char *out, size_t cap)
{
	char a_path[] = "/tmp/fg-pycheck-a.XXXXXX", b_path[] = "/tmp/fg-pycheck-b.XXXXXX";
	bool ok = false;
	char cmd[512];
	FILE *p = NULL;

	out[0] = '\0';
	if (pycheck_tmpfile(a_path, a, a_len) && pycheck_tmpfile(b_path, b, b_len)) {
		snprintf(cmd, sizeof(cmd), "python3 '%s' %s %s 2>&1", script, a_path, b_path);
		p = popen(cmd, "r");
	}
	if (p != NULL) {
		size_t got = fread(out, 1, cap - 1, p);
		int st;

		out[got] = '\0';
		st = pclose(p);
		ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	unlink(a_path);
	unlink(b_path);
	return ok;
}

#endif

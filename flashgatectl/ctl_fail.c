/* SPDX-License-Identifier: BSD-3-Clause */
#include "flashgatectl/ctl_fail.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int
ctl_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "flashgatectl: %s%s", cmd != NULL ? cmd : "", cmd != NULL ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

int
ctl_option(const char *cmd, int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
		return 0;
	if (*val != NULL)
		return ctl_fail(cmd, "%s given twice", name);
	if (a[n] == '=') {
		*val = a + n + 1;
	} else if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
		*val = argv[++*i];
	} else {
		/* The next word an option ("--dir --role x"): the value is missing, as the admin
		 * socket's parser says; a value that starts with "--" is given as --NAME=VALUE. */
		return ctl_fail(cmd, "%s needs a value", name);
	}
	if (**val == '\0')
		return ctl_fail(cmd, "%s needs a value, got an empty one", name);
	return 1;
}

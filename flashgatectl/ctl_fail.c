/* SPDX-License-Identifier: BSD-3-Clause */
#include "flashgatectl/ctl_fail.h"

#include <stdarg.h>
#include <stdio.h>

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

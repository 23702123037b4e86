/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_LIB_VIS_H
#define FG_TESTS_LIB_VIS_H
/* Strings in TAP test names: the text of a message or an answer shown on one line. */
#include <stdio.h>

/*
 * s with '\n' as "\n" and other control characters as "\xNN", at most about 1 KiB of it. The
 * result stays valid for the next three calls (four rotating buffers), so that one message can
 * show several.
 */
static inline const char *
vis(const char *s)
{
	static char bufs[4][1024];
	static unsigned next;
	char *b = bufs[next++ % 4];
	size_t o = 0;

	for (; *s != '\0' && o + 5 < sizeof(bufs[0]); s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			o += (size_t)snprintf(b + o, 3, "\\n");
		else if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(b + o, 5, "\\x%02x", c);
		else
			b[o++] = (char)c;
	}
	b[o] = '\0';
	return b;
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_SECRET_INPUT_H
#define FG_COMMON_SECRET_INPUT_H
/*
 * Secrets never travel on command lines (argv shows in ps, /proc/PID/cmdline and shell
 * history): the programs and tools read a key as hex text from a file that only its owner may
 * read, or from standard input. One copy of that rule for flashgatectl and the tools.
 */
#include <stddef.h>
#include <stdint.h>

/* The "path" that means standard input. */
#define SECRET_STDIN "-"

/*
 * Reads one secret written as hex digits (either case, an even number; spaces, tabs and line
 * ends around it are ignored) from path, or from standard input when path is SECRET_STDIN:
 * there one line, and not echoed while standard input is a terminal (a prompt naming what goes
 * to stderr). A file whose mode lets its group or others read or write it is refused ("chmod
 * 600"), and so is anything that is not a regular file, a pipe or a terminal. what names the
 * secret in messages ("--auth-key-file"); the secret itself is never quoted.
 * Returns 0 with min..cap bytes in out and their count in *len; otherwise a negative errno
 * with a message in err, and out untouched. Every copy of the text is wiped before returning.
 */
int secret_read_hex(const char *path, const char *what, uint8_t *out, size_t min, size_t cap,
	size_t *len, char *err, size_t errlen);

/*
 * Like secret_read_hex(), for a secret written as text (a ZeroMQ CURVE secret key in Z85):
 * the same sources and the same refusal of a file its group or others may read. Copies the
 * text without the spaces and line ends around it, NUL-terminated, into out (cap bytes) and
 * its length into *len. Returns 0, or a negative errno with a message in err (-ERANGE: longer
 * than cap - 1), out untouched. Every other copy of the text is wiped before returning.
 */
int secret_read_text(const char *path, const char *what, char *out, size_t cap, size_t *len,
	char *err, size_t errlen);

#endif

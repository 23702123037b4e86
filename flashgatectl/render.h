/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_FLASHGATECTL_RENDER_H
#define FG_FLASHGATECTL_RENDER_H
/*
 * flashgatectl's printer of the admin socket's answers (admin/admin_answer.h) for people,
 * read with flashgatectl/json_reader.h. Only flashgatectl links it; the daemon never renders.
 */
#include <stddef.h>
#include <stdio.h>

/*
 * Prints an answer line (len bytes, need not be NUL-terminated) for people: an error as
 * "error: <message>" on err_out; members as "name: value" lines, a "message" member as a plain
 * line, arrays of objects as tables (columns from the keys of the first element), to out.
 * Control characters in strings are shown as '?'. out or err_out NULL: print nothing there.
 * Returns 0 for an ok answer, 1 for a refused one, -EINVAL when the answer is not a JSON object
 * with a boolean "ok" (nothing printed).
 */
int render_answer(const char *answer, size_t len, FILE *out, FILE *err_out);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_FLASHGATECTL_JSON_READER_H
#define FG_FLASHGATECTL_JSON_READER_H
/*
 * A JSON reader (RFC 8259) for flashgatectl: reads one answer of the admin socket into a tree of
 * nodes, which flashgatectl/render.c prints for people. Strings are decoded (escapes, \u with
 * surrogate pairs, to UTF-8); numbers are kept as written. The counterpart of
 * common/json_writer.h; not for the daemons, which only write JSON.
 */
#include <stdbool.h>
#include <stddef.h>

#define JR_DEPTH_MAX 16 /* nested objects and arrays */

enum jr_type { JR_NULL, JR_BOOL, JR_NUM, JR_STR, JR_ARR, JR_OBJ };

struct jr_node {
	enum jr_type t;
	bool b;
	char *key;  /* member name inside an object */
	char *text; /* JR_STR: the decoded string; JR_NUM: the number as written */
	struct jr_node *first, *last, *next;
	size_t n; /* children */
};

/*
 * Reads text[0..len) (need not be NUL-terminated) as one JSON value with nothing but whitespace
 * after it, nested at most JR_DEPTH_MAX deep. Returns the tree, to be freed with jr_free(); NULL
 * when the text is not such a value or memory runs out.
 */
struct jr_node *jr_parse(const char *text, size_t len);

/* Frees a tree of jr_parse() (and its siblings: pass the root). NULL does nothing. */
void jr_free(struct jr_node *n);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#include "flashgatectl/render.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flashgatectl/json_reader.h"

/* Prints s with control characters as '?', so no answer can drive the terminal. */
static void
print_clean(FILE *out, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
	}
}

static size_t
clean_width(const char *s)
{
	size_t w = 0;

	/* Columns, not bytes: UTF-8 continuation bytes take no column. */
	for (; *s != '\0'; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* A scalar's text; for containers a short summary. */
static const char *
scalar_text(const struct jr_node *n, char *tmp, size_t len)
{
	switch (n->t) {
	case JR_NULL:
		return "-";
	case JR_BOOL:
		return n->b ? "yes" : "no";
	case JR_NUM:
	case JR_STR:
		return n->text;
	case JR_ARR:
		snprintf(tmp, len, "[%zu]", n->n);
		return tmp;
	case JR_OBJ:
		snprintf(tmp, len, "{%zu}", n->n);
		return tmp;
	}
	return "";
}

static void
print_indent(FILE *out, int indent)
{
	for (int i = 0; i < indent; i++)
		fputc(' ', out);
}

static void render_object(FILE *out, const struct jr_node *obj, int indent);

/* An array of objects as a table: a column per member of the first element. */
static void
render_table(FILE *out, const struct jr_node *arr, int indent)
{
	const struct jr_node *head = arr->first;
	size_t ncol = head->n, *width;
	char tmp[32];
	size_t c;

	width = calloc(ncol ? ncol : 1, sizeof(*width));
	if (width == NULL)
		return;
	c = 0;
	for (const struct jr_node *k = head->first; k != NULL; k = k->next, c++)
		width[c] = clean_width(k->key);
	for (const struct jr_node *row = arr->first; row != NULL; row = row->next) {
		c = 0;
		for (const struct jr_node *k = head->first; k != NULL; k = k->next, c++) {
			const struct jr_node *cell = NULL;

			for (const struct jr_node *m = row->t == JR_OBJ ? row->first : NULL;
				m != NULL; m = m->next) {
				if (strcmp(m->key, k->key) == 0) {
					cell = m;
					break;
				}
			}
			if (cell != NULL) {
				size_t w = clean_width(scalar_text(cell, tmp, sizeof(tmp)));

				width[c] = w > width[c] ? w : width[c];
			}
		}
	}
	print_indent(out, indent);
	c = 0;
	for (const struct jr_node *k = head->first; k != NULL; k = k->next, c++) {
		for (const char *p = k->key; *p != '\0'; p++) {
			unsigned char ch = (unsigned char)*p;

			fputc(ch < 0x20 || ch == 0x7f ? '?' : toupper(ch), out);
		}
		if (k->next != NULL)
			fprintf(out, "%*s", (int)(width[c] - clean_width(k->key) + 2), "");
	}
	fputc('\n', out);
	for (const struct jr_node *row = arr->first; row != NULL; row = row->next) {
		print_indent(out, indent);
		c = 0;
		for (const struct jr_node *k = head->first; k != NULL; k = k->next, c++) {
			const char *text = "-";

			for (const struct jr_node *m = row->t == JR_OBJ ? row->first : NULL;
				m != NULL; m = m->next) {
				if (strcmp(m->key, k->key) == 0) {
					text = scalar_text(m, tmp, sizeof(tmp));
					break;
				}
			}
			print_clean(out, text);
			if (k->next != NULL)
				fprintf(out, "%*s", (int)(width[c] - clean_width(text) + 2), "");
		}
		fputc('\n', out);
	}
	free(width);
}

static void
render_member(FILE *out, const struct jr_node *m, int indent, size_t keyw)
{
	char tmp[32];

	print_indent(out, indent);
	print_clean(out, m->key);
	fputc(':', out);
	if (m->t == JR_OBJ) {
		fputc('\n', out);
		render_object(out, m, indent + 2);
		return;
	}
	if (m->t == JR_ARR && m->n == 0) {
		fputs(" (none)\n", out);
		return;
	}
	if (m->t == JR_ARR && m->first->t == JR_OBJ) {
		fputc('\n', out);
		render_table(out, m, indent + 2);
		return;
	}
	fprintf(out, "%*s", (int)(keyw - clean_width(m->key) + 1), "");
	if (m->t == JR_ARR) {
		for (const struct jr_node *e = m->first; e != NULL; e = e->next) {
			print_clean(out, scalar_text(e, tmp, sizeof(tmp)));
			if (e->next != NULL)
				fputs(", ", out);
		}
	} else {
		print_clean(out, scalar_text(m, tmp, sizeof(tmp)));
	}
	fputc('\n', out);
}

static void
render_object(FILE *out, const struct jr_node *obj, int indent)
{
	size_t keyw = 0;

	for (const struct jr_node *m = obj->first; m != NULL; m = m->next) {
		size_t w = clean_width(m->key);

		if (indent == 0 && (strcmp(m->key, "ok") == 0 || strcmp(m->key, "message") == 0))
			continue;
		keyw = w > keyw ? w : keyw;
	}
	for (const struct jr_node *m = obj->first; m != NULL; m = m->next) {
		if (indent == 0 && strcmp(m->key, "ok") == 0)
			continue;
		if (indent == 0 && strcmp(m->key, "message") == 0 && m->t == JR_STR) {
			print_clean(out, m->text);
			fputc('\n', out);
			continue;
		}
		render_member(out, m, indent, keyw);
	}
}

int
render_answer(const char *answer, size_t len, FILE *out, FILE *err_out)
{
	const struct jr_node *ok = NULL, *error = NULL;
	struct jr_node *root = jr_parse(answer, len);
	int rc = -EINVAL;

	if (root == NULL || root->t != JR_OBJ)
		goto done;
	for (const struct jr_node *m = root->first; m != NULL; m = m->next) {
		if (strcmp(m->key, "ok") == 0)
			ok = m;
		else if (strcmp(m->key, "error") == 0)
			error = m;
	}
	if (ok == NULL || ok->t != JR_BOOL)
		goto done;
	if (!ok->b) {
		if (err_out != NULL) {
			fputs("error: ", err_out);
			print_clean(err_out, error != NULL && error->t == JR_STR
						     ? error->text
						     : "refused (no reason given)");
			fputc('\n', err_out);
		}
		rc = 1;
		goto done;
	}
	if (out != NULL)
		render_object(out, root, 0);
	rc = 0;
done:
	jr_free(root);
	return rc;
}

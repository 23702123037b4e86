/* SPDX-License-Identifier: BSD-3-Clause */
#include "flashgatectl/json_reader.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"

struct jreader {
	const char *p, *end;
	int depth;
};

void
jr_free(struct jr_node *n)
{
	while (n != NULL) {
		struct jr_node *next = n->next;

		jr_free(n->first);
		free(n->key);
		free(n->text);
		free(n);
		n = next;
	}
}

static void
jskip(struct jreader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static void
utf8_put(char *out, size_t *o, unsigned cp)
{
	if (cp < 0x80) {
		out[(*o)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*o)++] = (char)(0xc0 | cp >> 6);
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		out[(*o)++] = (char)(0xe0 | cp >> 12);
		out[(*o)++] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*o)++] = (char)(0xf0 | cp >> 18);
		out[(*o)++] = (char)(0x80 | (cp >> 12 & 0x3f));
		out[(*o)++] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	}
}

static int
hex4(const char *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		int d = hex_digit(p[i]);

		if (d < 0)
			return -1;
		v = v << 4 | (unsigned)d;
	}
	*out = v;
	return 0;
}

/* A string at r->p (on its opening quote), decoded into a new allocation. */
static char *
jstring(struct jreader *r)
{
	const char *p = r->p + 1;
	size_t o = 0;
	char *out;

	/* The decoded text is never longer than the escaped one. */
	out = malloc((size_t)(r->end - r->p) + 1);
	if (out == NULL)
		return NULL;
	while (p < r->end && *p != '"') {
		unsigned cp;

		if ((unsigned char)*p < 0x20)
			goto bad;
		if (*p != '\\') {
			out[o++] = *p++;
			continue;
		}
		if (++p == r->end)
			goto bad;
		switch (*p) {
		case '"':
		case '\\':
		case '/':
			out[o++] = *p;
			break;
		case 'b':
			out[o++] = '\b';
			break;
		case 'f':
			out[o++] = '\f';
			break;
		case 'n':
			out[o++] = '\n';
			break;
		case 'r':
			out[o++] = '\r';
			break;
		case 't':
			out[o++] = '\t';
			break;
		case 'u':
			if (r->end - p < 5 || hex4(p + 1, &cp) != 0)
				goto bad;
			p += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				unsigned lo;

				if (r->end - p < 7 || p[1] != '\\' || p[2] != 'u' ||
					hex4(p + 3, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
					goto bad;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				goto bad;
			}
			/* Six escaped bytes always hold the (at most four) UTF-8 bytes. */
			utf8_put(out, &o, cp);
			break;
		default:
			goto bad;
		}
		p++;
	}
	if (p == r->end)
		goto bad;
	out[o] = '\0';
	r->p = p + 1;
	return out;
bad:
	free(out);
	return NULL;
}

static struct jr_node *jvalue(struct jreader *r);

static void
jappend(struct jr_node *parent, struct jr_node *kid)
{
	if (parent->last != NULL)
		parent->last->next = kid;
	else
		parent->first = kid;
	parent->last = kid;
	parent->n++;
}

static struct jr_node *
jcontainer(struct jreader *r, struct jr_node *n)
{
	char close = *r->p == '{' ? '}' : ']';

	n->t = close == '}' ? JR_OBJ : JR_ARR;
	if (++r->depth > JR_DEPTH_MAX)
		goto bad;
	r->p++;
	jskip(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		r->depth--;
		return n;
	}
	for (;;) {
		char *key = NULL;
		struct jr_node *kid;

		jskip(r);
		if (n->t == JR_OBJ) {
			if (r->p == r->end || *r->p != '"' || (key = jstring(r)) == NULL)
				goto bad;
			jskip(r);
			if (r->p == r->end || *r->p != ':') {
				free(key);
				goto bad;
			}
			r->p++;
		}
		kid = jvalue(r);
		if (kid == NULL) {
			free(key);
			goto bad;
		}
		kid->key = key;
		jappend(n, kid);
		jskip(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			r->depth--;
			return n;
		}
		goto bad;
	}
bad:
	jr_free(n);
	return NULL;
}

static struct jr_node *
jvalue(struct jreader *r)
{
	struct jr_node *n;

	jskip(r);
	if (r->p == r->end)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return NULL;
	switch (*r->p) {
	case '{':
	case '[':
		return jcontainer(r, n);
	case '"':
		n->t = JR_STR;
		n->text = jstring(r);
		if (n->text == NULL)
			break;
		return n;
	case 't':
	case 'f':
	case 'n': {
		static const char *const lits[] = {"true", "false", "null"};

		for (int k = 0; k < 3; k++) {
			size_t l = strlen(lits[k]);

			if ((size_t)(r->end - r->p) >= l && memcmp(r->p, lits[k], l) == 0) {
				n->t = k == 2 ? JR_NULL : JR_BOOL;
				n->b = k == 0;
				r->p += l;
				return n;
			}
		}
		break;
	}
	default: {
		/* RFC 8259 section 6: -? int frac? exp? */
		const char *s = r->p, *q = s;

		if (q < r->end && *q == '-')
			q++;
		if (q == r->end || !isdigit((unsigned char)*q))
			break;
		if (*q == '0')
			q++;
		else
			while (q < r->end && isdigit((unsigned char)*q))
				q++;
		if (q < r->end && *q == '.') {
			if (++q == r->end || !isdigit((unsigned char)*q))
				break;
			while (q < r->end && isdigit((unsigned char)*q))
				q++;
		}
		if (q < r->end && (*q == 'e' || *q == 'E')) {
			q++;
			if (q < r->end && (*q == '+' || *q == '-'))
				q++;
			if (q == r->end || !isdigit((unsigned char)*q))
				break;
			while (q < r->end && isdigit((unsigned char)*q))
				q++;
		}
		n->t = JR_NUM;
		n->text = strndup(s, (size_t)(q - s));
		if (n->text == NULL)
			break;
		r->p = q;
		return n;
	}
	}
	jr_free(n);
	return NULL;
}

struct jr_node *
jr_parse(const char *text, size_t len)
{
	struct jreader r = {.p = text, .end = text + len};
	struct jr_node *root = jvalue(&r);

	jskip(&r);
	if (root != NULL && r.p != r.end) {
		jr_free(root);
		return NULL;
	}
	return root;
}

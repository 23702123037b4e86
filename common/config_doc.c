/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The config's documentation printer: what --help-config prints, the reference of every section
 * and key of a schema (type, bounds, default, doc), and the description of a key's values that
 * the loader's messages use too.
 */
#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "common/config_int.h"
#include "common/parse.h"

/* What a value of this key looks like, for messages and the reference. */
void
cfg_describe(const struct cfg_key *k, char *buf, size_t len)
{
	char a[32], b[32];

	switch (k->type) {
	case CFG_BOOL:
		snprintf(buf, len, "true or false");
		break;
	case CFG_UINT:
		snprintf(buf, len, "integer %llu..%llu%s", (unsigned long long)k->min,
			(unsigned long long)cfg_uint_max(k),
			k->flags & CFG_F_POW2 ? ", a power of two" : "");
		break;
	case CFG_STRING:
		snprintf(buf, len, "text, %llu..%zu bytes of UTF-8", (unsigned long long)k->min,
			cfg_string_max(k));
		break;
	case CFG_IPV4:
		snprintf(buf, len, "IPv4 address a.b.c.d");
		break;
	case CFG_PORT_LIST:
		snprintf(buf, len, "%llu to %llu TCP ports 1..65535, comma-separated",
			(unsigned long long)(k->min ? k->min : 1), (unsigned long long)k->max);
		break;
	case CFG_TIME:
		snprintf(buf, len,
			"time: RFC 3339 such as 2026-12-01T10:00:00Z or "
			"2026-12-01T18:00:00+08:00, or Unix seconds");
		break;
	case CFG_DURATION: {
		const char *eg = k->unit_ms == 1000 ? "in whole seconds, such as 30s, 15m, 2h"
						    : "such as 500ms, 30s, 15m, 2h";

		parse_duration_format(k->min, a, sizeof(a));
		if (k->max != 0) {
			parse_duration_format(k->max, b, sizeof(b));
			snprintf(buf, len, "duration %s..%s %s", a, b, eg);
		} else {
			snprintf(buf, len, "duration %s", eg);
		}
		break;
	}
	case CFG_HEX:
		snprintf(buf, len, "%zu hex digits (%zu bytes)", k->size * 2, k->size);
		break;
	case CFG_LOGLEVEL:
		snprintf(buf, len, "log level: err, warn, notice, info or debug");
		break;
	default:
		snprintf(buf, len, "?");
		break;
	}
}

/* Prints text word-wrapped at 80 columns, each line indented by indent spaces. */
static void
cfg_print_wrapped(FILE *out, int indent, const char *text)
{
	int col = 0;

	while (*text != '\0') {
		size_t w = strcspn(text, " ");

		if (col > indent && col + 1 + (int)w > 80) {
			fputc('\n', out);
			col = 0;
		}
		if (col == 0)
			col = fprintf(out, "%*s", indent, "");
		else
			col += fprintf(out, " ");
		col += fprintf(out, "%.*s", (int)w, text);
		text += w;
		text += strspn(text, " ");
	}
	if (col != 0)
		fputc('\n', out);
}

void
cfg_print_doc(FILE *out, const struct cfg_schema *schema)
{
	char what[CFG_WHY_MAX];

	for (size_t i = 0; i < schema->n_sections; i++) {
		const struct cfg_section *sec = &schema->sections[i];

		if (sec->is_array)
			fprintf(out,
				"%s[%s.ID]  (ID: a positive integer; at most %u such sections)\n",
				i ? "\n" : "", sec->name, sec->max_count);
		else
			fprintf(out, "%s[%s]\n", i ? "\n" : "", sec->name);
		if (sec->doc != NULL)
			cfg_print_wrapped(out, 2, sec->doc);
		for (size_t j = 0; j < sec->n_keys; j++) {
			const struct cfg_key *k = &sec->keys[j];

			cfg_describe(k, what, sizeof(what));
			fprintf(out, "\n  %s = <%s>\n", k->name, what);
			if (k->flags & CFG_F_REQUIRED)
				fprintf(out, "      required\n");
			else if (k->def != NULL)
				fprintf(out, "      default: %s\n", k->def[0] ? k->def : "(empty)");
			else
				fprintf(out, "      default: none\n");
			if (k->doc != NULL)
				cfg_print_wrapped(out, 6, k->doc);
		}
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The config writer: a loaded configuration written back as a file would spell it (cfg_write(),
 * for --print-config and the tests' round trips), secrets shown only as set or not.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "common/config_int.h"
#include "common/log.h"
#include "common/parse.h"

/* Writes the value of k in obj as the file would spell it. */
static void
cfg_write_value(FILE *out, const struct cfg_key *k, const uint8_t *obj)
{
	const uint8_t *field = obj + k->offset;
	char buf[64];

	switch (k->type) {
	case CFG_BOOL:
		fputs((k->size == 1 ? cfg_get_uint(field, 1) : cfg_get_uint(field, sizeof(int)))
				? "true"
				: "false",
			out);
		break;
	case CFG_UINT:
		fprintf(out, "%llu", (unsigned long long)cfg_get_uint(field, k->size));
		break;
	case CFG_STRING:
		/* Quoted, so that leading and trailing spaces survive a reload. */
		fprintf(out, "\"%.*s\"", (int)strnlen((const char *)field, k->size),
			(const char *)field);
		break;
	case CFG_IPV4:
		fprintf(out, "%u.%u.%u.%u", field[0], field[1], field[2], field[3]);
		break;
	case CFG_PORT_LIST: {
		unsigned n = cfg_get_count(obj, k->count_offset);

		for (unsigned i = 0; i < n; i++)
			fprintf(out, "%s%u", i ? ", " : "",
				(unsigned)cfg_get_uint(field + i * sizeof(uint16_t), 2));
		break;
	}
	case CFG_TIME:
		parse_time_format(cfg_get_uint(field, 8), buf, sizeof(buf));
		fputs(buf, out);
		break;
	case CFG_DURATION:
		parse_duration_format(
			cfg_get_uint(field, k->size) * (k->unit_ms > 1 ? k->unit_ms : 1), buf,
			sizeof(buf));
		fputs(buf, out);
		break;
	case CFG_HEX:
		for (size_t i = 0; i < k->size; i++)
			fprintf(out, "%02x", field[i]);
		break;
	case CFG_LOGLEVEL:
		fputs(log_level_name((enum log_level)cfg_get_uint(field, sizeof(int))), out);
		break;
	default:
		break;
	}
}

static void
cfg_write_keys(FILE *out, const struct cfg_section *sec, const uint8_t *obj)
{
	for (size_t j = 0; j < sec->n_keys; j++) {
		const struct cfg_key *k = &sec->keys[j];

		if (k->flags & CFG_F_SECRET) {
			int set = 0;

			if (k->flags & CFG_F_MARK_SET)
				memcpy(&set, obj + k->set_offset, sizeof(set));
			fprintf(out, "; %s = (%s)\n", k->name, set ? "set, not shown" : "not set");
			continue;
		}
		fprintf(out, "%s = ", k->name);
		cfg_write_value(out, k, obj);
		fputc('\n', out);
	}
}

void
cfg_write(FILE *out, const struct cfg_schema *schema, const void *target)
{
	const uint8_t *root = target;

	for (size_t i = 0; i < schema->n_sections; i++) {
		const struct cfg_section *sec = &schema->sections[i];

		if (!sec->is_array) {
			fprintf(out, "%s[%s]\n", i ? "\n" : "", sec->name);
			cfg_write_keys(out, sec, root + sec->offset);
			continue;
		}
		unsigned n = cfg_get_count(root, sec->count_offset);

		for (unsigned e = 0; e < n && e < sec->max_count; e++) {
			const uint8_t *obj = root + sec->array_offset + (size_t)e * sec->elem_size;
			uint32_t id;

			memcpy(&id, obj + sec->id_offset, sizeof(id));
			fprintf(out, "%s[%s.%u]\n", i || e ? "\n" : "", sec->name, id);
			cfg_write_keys(out, sec, obj);
		}
	}
}

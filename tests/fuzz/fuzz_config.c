/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the config loader (common/config.c) through the key tables of every
 * program: the data plane's, the control plane's and the order writer's, each of which reads
 * the same flashgate.conf (docs/testing.md).
 *
 * Each input is loaded from a file (cfg_load(), through a memfd) and from a string
 * (cfg_load_string()), and the contract checked: 0, or -EINVAL with one line of message and
 * the target untouched; a file and a string of the same text load the same way, and a file with
 * a NUL byte is refused. A loaded configuration is written out (cfg_write(), as --check-config
 * does) and must load back to the same values, its secrets aside (written as comments).
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/config.h"
#include "controlplane/cp_config.h"
#include "dataplane/dp_config.h"
#include "order-writer/ow_config.h"
#include "tests/fuzz/fuzz.h"

#define ERRLEN	  512
#define UNTOUCHED 0xa5

static const struct cfg_schema *const schemas[] = {
	&dp_config_schema,
	&cp_config_schema,
	&ow_config_schema,
};

static int memfd = -1;
static char memfd_path[64];

/*
 * How many structs section sec has in target (1 for a plain section), the first one's offset in
 * *base and the distance between two in *step.
 */
static unsigned
section_structs(const struct cfg_section *sec, const uint8_t *target, size_t *base, size_t *step)
{
	unsigned n;

	if (!sec->is_array) {
		*base = sec->offset;
		*step = 0;
		return 1;
	}
	memcpy(&n, target + sec->count_offset, sizeof(n));
	*base = sec->array_offset;
	*step = sec->elem_size;
	return n < sec->max_count ? n : sec->max_count;
}

/* Copies the secret keys of every section of from (and whether they were set) to to. */
static void
copy_secrets(const struct cfg_schema *schema, uint8_t *to, const uint8_t *from)
{
	for (size_t i = 0; i < schema->n_sections; i++) {
		const struct cfg_section *sec = &schema->sections[i];
		size_t base, step;
		unsigned n = section_structs(sec, from, &base, &step);

		for (size_t at = base; n-- > 0; at += step) {
			for (size_t j = 0; j < sec->n_keys; j++) {
				const struct cfg_key *k = &sec->keys[j];

				if (!(k->flags & CFG_F_SECRET))
					continue;
				memcpy(to + at + k->offset, from + at + k->offset, k->size);
				if (k->flags & CFG_F_MARK_SET)
					memcpy(to + at + k->set_offset, from + at + k->set_offset,
						sizeof(int));
			}
		}
	}
}

/* Names the key whose field holds byte off of a target of schema, for messages. */
static void
key_at(const struct cfg_schema *schema, const uint8_t *target, size_t off, char *buf, size_t len)
{
	snprintf(buf, len, "byte %zu (no key)", off);
	for (size_t i = 0; i < schema->n_sections; i++) {
		const struct cfg_section *sec = &schema->sections[i];
		size_t base, step;
		unsigned n = section_structs(sec, target, &base, &step);

		for (size_t at = base; n-- > 0; at += step) {
			for (size_t j = 0; j < sec->n_keys; j++) {
				const struct cfg_key *k = &sec->keys[j];
				uint32_t id;

				if (off < at + k->offset || off >= at + k->offset + k->size)
					continue;
				if (!sec->is_array) {
					snprintf(buf, len, "[%s] %s", sec->name, k->name);
					return;
				}
				memcpy(&id, target + at + sec->id_offset, sizeof(id));
				snprintf(buf, len, "[%s.%u] %s", sec->name, id, k->name);
				return;
			}
		}
	}
}

/* Whether t (size bytes) still holds UNTOUCHED everywhere. */
static bool
untouched(const uint8_t *t, size_t size)
{
	return size == 0 || (t[0] == UNTOUCHED && memcmp(t, t + 1, size - 1) == 0);
}

/* One failed load: a message on one line, and the target as it was. */
static void
check_refused(int rc, const char *err, const uint8_t *target, size_t size)
{
	FUZZ_CHECK(rc == -EINVAL);
	FUZZ_CHECK(
		err[0] != '\0' && memchr(err, '\0', ERRLEN) != NULL && strchr(err, '\n') == NULL);
	FUZZ_CHECK(untouched(target, size));
}

/* cfg_write() of a loaded target loads back to the same values. */
static void
check_written(const struct cfg_schema *schema, const uint8_t *target)
{
	size_t size = schema->target_size, len = 0;
	uint8_t *back = malloc(size);
	char *text = NULL, err[ERRLEN];
	FILE *f = open_memstream(&text, &len);
	int rc;

	FUZZ_CHECK(back != NULL && f != NULL);
	cfg_write(f, schema, target);
	FUZZ_CHECK(fclose(f) == 0);
	rc = cfg_load_string(schema, back, "written", text, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "fuzz: the written configuration does not load: %s\n%s", err, text);
	FUZZ_CHECK(rc == 0);
	copy_secrets(schema, back, target);
	if (memcmp(back, target, size) != 0) {
		char key[128];
		size_t off = 0;

		while (back[off] == target[off])
			off++;
		key_at(schema, target, off, key, sizeof(key));
		fprintf(stderr, "fuzz: the written configuration loads %s to another value\n%s",
			key, text);
	}
	FUZZ_CHECK(memcmp(back, target, size) == 0);
	free(text);
	free(back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size), err1[ERRLEN], err2[ERRLEN];
	bool has_nul = memchr(data, '\0', size) != NULL;

	if (memfd < 0) {
		memfd = memfd_create("fuzz-config", 0);
		FUZZ_CHECK(memfd >= 0);
		snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	}
	FUZZ_CHECK(ftruncate(memfd, 0) == 0);
	FUZZ_CHECK(pwrite(memfd, data, size, 0) == (ssize_t)size);

	for (size_t s = 0; s < sizeof(schemas) / sizeof(schemas[0]); s++) {
		const struct cfg_schema *schema = schemas[s];
		size_t tsize = schema->target_size;
		uint8_t *t1 = malloc(tsize), *t2 = malloc(tsize);
		int rc1, rc2;

		FUZZ_CHECK(t1 != NULL && t2 != NULL);
		memset(t1, UNTOUCHED, tsize);
		memset(t2, UNTOUCHED, tsize);
		/* The file's name in both, so that their messages are the same. */
		rc1 = cfg_load_string(schema, t1, memfd_path, text, err1, sizeof(err1));
		rc2 = cfg_load(schema, t2, memfd_path, err2, sizeof(err2));
		if (rc1 != 0)
			check_refused(rc1, err1, t1, tsize);
		if (rc2 != 0)
			check_refused(rc2, err2, t2, tsize);
		if (has_nul) {
			FUZZ_CHECK(rc2 == -EINVAL);
		} else {
			if (rc1 != rc2 || strcmp(err1, err2) != 0)
				fprintf(stderr, "fuzz: string: %d %s\nfuzz: file: %d %s\n", rc1,
					rc1 ? err1 : "", rc2, rc2 ? err2 : "");
			FUZZ_CHECK(rc1 == rc2 && (rc1 == 0 || strcmp(err1, err2) == 0));
			FUZZ_CHECK(rc1 != 0 || memcmp(t1, t2, tsize) == 0);
		}
		if (rc1 == 0)
			check_written(schema, t1);
		free(t2);
		free(t1);
	}
	free(text);
	return 0;
}

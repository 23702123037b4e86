/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_CONFIG_H
#define FG_COMMON_CONFIG_H
/*
 * A schema-driven INI loader. A program describes each key once, in a table of
 * struct cfg_key: where the value goes in its settings struct, its type and
 * bounds, its default and a line of documentation. From that table the loader
 * applies the defaults, reads the file (with libinih), checks every value,
 * applies command-line overrides with the same checks, and prints the
 * reference of the keys (--help-config).
 *
 * Sections are either plain ([dataplane]) or arrays of numbered sections
 * ([event.42]) that fill an array of structs in the target and a counter.
 *
 * The file format: "key = value" lines under "[section]" lines; comments are
 * lines starting with ';' or '#', or the rest of a line after " ;". Leading
 * whitespace is ignored (there are no continuation lines). Every key may
 * appear once per section, every section once. Unknown sections and keys are
 * errors, so a typo never goes unnoticed.
 *
 * Errors stop at the first one and are written to a caller buffer as one line
 * naming the file, line, section and key, e.g.
 *   flashgate.conf:9: [dataplane] burst: 500 is out of range 1..64
 * Nothing here is for the per-packet path.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/parse.h"

enum cfg_type {
	/* true/false, yes/no, on/off, 1/0 -> int (size 4) or uint8_t (size 1) */
	CFG_BOOL,
	/* decimal, within [min, max] -> unsigned integer of size 1, 2, 4 or 8 */
	CFG_UINT,
	/* UTF-8 without control bytes, quotes optional, length in [min, max] -> char[size] */
	CFG_STRING,
	/* a.b.c.d -> uint32_t in network byte order */
	CFG_IPV4,
	/* "80, 8080": [min, max] distinct TCP ports -> uint16_t[], their count -> unsigned */
	CFG_PORT_LIST,
	/* RFC 3339 with Z or +hh:mm, or Unix seconds -> uint64_t Unix milliseconds */
	CFG_TIME,
	/* "500ms" "30s" "15m" "2h" "1d" "1h30m", or "0"; range [min, max] in ms */
	CFG_DURATION,
	/* exactly 2 * size hex digits -> uint8_t[size] */
	CFG_HEX,
	/* err, warn, notice, info, debug -> int (enum log_level) */
	CFG_LOGLEVEL,
};

/* struct cfg_key.flags */
#define CFG_F_REQUIRED (1u << 0) /* no default: the section must set it */
#define CFG_F_POW2     (1u << 1) /* CFG_UINT: must be a power of two */
#define CFG_F_MARK_SET (1u << 2) /* set the int at set_offset to 1 when the key is given */
#define CFG_F_SECRET   (1u << 3) /* never echo the value in errors or the reference */

/* One key of a section. Offsets are into the section's struct (target or array element). */
struct cfg_key {
	const char *name;
	enum cfg_type type;
	size_t offset;
	size_t size;	     /* bytes of the field at offset */
	uint64_t min, max;   /* UINT: value; STRING: length; PORT_LIST: ports; DURATION: ms */
	const char *def;     /* the default as it would be written in the file; NULL: none */
	const char *doc;     /* one or two sentences for the reference */
	unsigned flags;	     /* CFG_F_* */
	size_t count_offset; /* PORT_LIST: the unsigned int that receives the count */
	size_t set_offset;   /* CFG_F_MARK_SET: the int that records that the key was given */
	uint32_t unit_ms;    /* DURATION: stored in units of this many ms (0 or 1: ms; 1000: s) */
};

/*
 * A cross-key check of one section's struct (target or element), run when the
 * section ends and after each override. Returns 0, or -EINVAL with a reason
 * in msg and, in *key, the name of the key to blame (its line is cited).
 */
typedef int (*cfg_check_fn)(const void *obj, const char **key, char *msg, size_t msglen);

struct cfg_section {
	const char *name; /* "dataplane"; for an array, the prefix of [event.ID] */
	const char *doc;
	const struct cfg_key *keys;
	size_t n_keys;	    /* at most 64 */
	cfg_check_fn check; /* NULL: none */
	/*
	 * A plain section: where the struct its keys' offsets are relative to starts in the
	 * target (0: the target itself). Lets programs share one key table for a section that
	 * they all have, such as [redis], at whatever place it has in their settings.
	 */
	size_t offset;
	/* An array section: [name.ID], ID a positive 32-bit integer, each ID at most once. */
	int is_array;
	size_t array_offset; /* the first element in the target */
	size_t elem_size;
	unsigned max_count;
	size_t count_offset; /* unsigned int: how many elements are filled */
	size_t id_offset;    /* uint32_t in the element: the ID */
};

struct cfg_schema {
	const struct cfg_section *sections;
	size_t n_sections;
	size_t target_size; /* sizeof the settings struct, for the copy a load works on */
	const char *help;   /* said after an unknown key or section, e.g. "see --help-config" */
	/*
	 * Sections of the other flashgate programs (NULL-terminated names; an array section by
	 * its prefix): one flashgate.conf serves every program, and each skips the others'
	 * sections unread. NULL: none.
	 */
	const char *const *foreign;
};

/*
 * Zeroes the target and applies every default. Returns 0, or -EINVAL with a
 * message when the schema itself is wrong (a default that does not pass its
 * own checks, a field size that does not match the type): a program bug.
 */
int cfg_defaults(const struct cfg_schema *schema, void *target, char *err, size_t errlen);

/*
 * Loads a file: the defaults, then every key of the file, each checked.
 * Returns 0 and fills target; or a negative errno (-ENOENT, -EACCES, ... when
 * the file cannot be read, -EINVAL for its content) with a one-line message in
 * err, and target unchanged.
 */
int cfg_load(
	const struct cfg_schema *schema, void *target, const char *path, char *err, size_t errlen);

/*
 * Like cfg_load(), from a string; name stands for the file in messages.
 * For tests and for configuration that does not come from a file.
 */
int cfg_load_string(const struct cfg_schema *schema, void *target, const char *name,
	const char *text, char *err, size_t errlen);

/*
 * Sets one key on top of a loaded target, with the same checks as the file:
 * key is "section.key" or, for an array section, "section.ID.key" naming an
 * element that exists. Errors start with "command line: <key>:".
 * Returns 0, or -EINVAL (target unchanged).
 */
int cfg_set(const struct cfg_schema *schema, void *target, const char *key, const char *value,
	char *err, size_t errlen);

/*
 * What a program's command line asks for: the defaults, then the file at path (none when path
 * is NULL), then each of sets[0..n_sets) as "section.key=value" in order, each with cfg_set()'s
 * checks. The strings in sets are not modified. Returns 0 and fills target; or a negative errno
 * with one line in err (the file's error, "-s \"X\": expected SECTION.KEY=VALUE" for an
 * override without '=', or cfg_set()'s "command line: key: ..."), and target unchanged.
 */
int cfg_load_cli(const struct cfg_schema *schema, void *target, const char *path, char *const *sets,
	unsigned n_sets, char *err, size_t errlen);

/* Prints the reference of every section and key: type, bounds, default, doc (config_doc.c). */
void cfg_print_doc(FILE *out, const struct cfg_schema *schema);

/*
 * Writes target as a file that loads back to the same values (--check-config):
 * every key of every section, defaults included. Secret keys are written as a
 * comment that says whether they are set, never with their value.
 */
void cfg_write(FILE *out, const struct cfg_schema *schema, const void *target);

/*
 * dataplane/dp_config.c's name for parse_time_format() (common/parse.h, where every value
 * parser is): the value parsers moved there; this stays until dp_config.c calls it directly.
 */
static inline void
cfg_format_time(uint64_t ms, char *buf, size_t len)
{
	parse_time_format(ms, buf, len);
}

#endif

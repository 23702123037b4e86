/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_CONFIG_H
#define FG_DP_CONFIG_H
/*
 * The data plane's settings: section [dataplane] and one [event.ID] section per
 * sale, read from flashgate.conf (see the example at the repository root) and
 * from -s SECTION.KEY=VALUE overrides. The key table in dp_config.c is the
 * single description of every key; --help-config prints it.
 */
#include <stddef.h>
#include <stdio.h>

#include "common/config.h"
#include "dataplane/dp_config-t.h"

/* The key table of the data plane, for code that drives common/config.h itself. */
extern const struct cfg_schema dp_config_schema;

/* Fills cfg with every default: no events, a random SYN cookie secret. Cannot fail. */
void dp_config_defaults(struct dp_config *cfg);

/*
 * Replaces cfg with the defaults plus the settings of the file at path.
 * Returns 0; or a negative errno with a one-line message naming the file,
 * line and key in err, and cfg unchanged.
 */
int dp_config_load(struct dp_config *cfg, const char *path, char *err, size_t errlen);

/*
 * Applies one override on top of cfg, checked as if it were in the file:
 * key "dataplane.mss" or "event.ID.stock" (the event must exist).
 * Returns 0, or -EINVAL with a message starting "command line: <key>:" and cfg
 * unchanged.
 */
int dp_config_set(
	struct dp_config *cfg, const char *key, const char *value, char *err, size_t errlen);

/*
 * Writes the settings in cfg in the file's syntax, the SYN cookie secret
 * excepted (--check-config shows what the data plane will run with).
 */
void dp_config_write(FILE *out, const struct dp_config *cfg);

/* Prints every key with its type, bounds, default and meaning (--help-config). */
void dp_config_print_doc(FILE *out);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/config_cli.h"

#include <getopt.h>
#include <string.h>

/* getopt_long() values of the shared long options; an extra option i gets CLI_EXTRA + i. */
enum {
	CLI_CHECK = 256,
	CLI_HELP_CONFIG,
	CLI_EXTRA,
};

/* Whether the "section.key=value" (or "section.ID.key=value") override sets a CFG_F_SECRET key. */
static bool
set_is_secret(const struct cfg_schema *schema, const char *set)
{
	size_t klen = strcspn(set, "="), slen = strcspn(set, ".");
	const char *name = set + klen;

	if (slen >= klen)
		return false;
	while (name > set && name[-1] != '.')
		name--;
	for (size_t i = 0; i < schema->n_sections; i++) {
		const struct cfg_section *sec = &schema->sections[i];

		if (strlen(sec->name) != slen || strncmp(sec->name, set, slen) != 0)
			continue;
		for (size_t k = 0; k < sec->n_keys; k++)
			if (strlen(sec->keys[k].name) == (size_t)(set + klen - name) &&
				strncmp(sec->keys[k].name, name, (size_t)(set + klen - name)) == 0)
				return (sec->keys[k].flags & CFG_F_SECRET) != 0;
	}
	return false;
}

int
cfg_cli_parse(const struct cfg_cli *cli, int argc, char **argv)
{
	struct option opts[6 + CFG_CLI_MAX_EXTRA] = {
		{"config", required_argument, NULL, 'c'},
		{"set", required_argument, NULL, 's'},
		{"check-config", no_argument, NULL, CLI_CHECK},
		{"help-config", no_argument, NULL, CLI_HELP_CONFIG},
		{"help", no_argument, NULL, 'h'},
	};
	unsigned n_opts = 5;
	const char *path = NULL;
	char *sets[CFG_CLI_MAX_SETS];
	unsigned n_sets = 0;
	bool check = false;
	char err[512];
	int c;

	if (cli->n_extra > CFG_CLI_MAX_EXTRA) {
		fprintf(stderr, "%s: %u options of its own, at most %d (a program bug)\n",
			cli->prog, cli->n_extra, CFG_CLI_MAX_EXTRA);
		return -1;
	}
	for (unsigned i = 0; i < cli->n_extra; i++)
		opts[n_opts++] = (struct option){cli->extra[i].name,
			cli->extra[i].has_arg ? required_argument : no_argument, NULL,
			CLI_EXTRA + (int)i};
	opts[n_opts] = (struct option){NULL, 0, NULL, 0};

	/* 0, not 1: GNU getopt then also forgets where it was inside a previous argv. */
	optind = 0;
	while ((c = getopt_long(argc, argv, "c:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 's':
			if (n_sets == CFG_CLI_MAX_SETS) {
				fprintf(stderr, "%s: too many -s options (at most %d)\n", cli->prog,
					CFG_CLI_MAX_SETS);
				return -1;
			}
			sets[n_sets++] = optarg;
			break;
		case CLI_CHECK:
			check = true;
			break;
		case CLI_HELP_CONFIG:
			if (cli->print_doc != NULL)
				cli->print_doc(stdout);
			else
				cfg_print_doc(stdout, cli->schema);
			return 1;
		case 'h':
			cli->usage(stdout);
			return 1;
		default:
			if (c >= CLI_EXTRA && c < CLI_EXTRA + (int)cli->n_extra) {
				if (cli->extra[c - CLI_EXTRA].fn(optarg, cli->ctx) != 0)
					return -1;
				break;
			}
			/* getopt_long() has said what was wrong. */
			cli->usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument \"%s\"%s%s%s\n", cli->prog, argv[optind],
			cli->stray_hint ? " (" : "", cli->stray_hint ? cli->stray_hint : "",
			cli->stray_hint ? ")" : "");
		return -1;
	}
	/* Refused before anything is loaded: by now ps has seen it, but nothing runs with it. */
	for (unsigned i = 0; i < n_sets; i++)
		if (set_is_secret(cli->schema, sets[i])) {
			fprintf(stderr,
				"%s: -s %.*s is refused: a secret on the command line shows in ps, "
				"/proc/PID/cmdline and the shell history. Put it in the config file "
				"given with -c, readable by its owner only (chmod 600 FILE); and "
				"choose a new secret, this one has been seen\n",
				cli->prog, (int)strcspn(sets[i], "="), sets[i]);
			return -1;
		}
	if (cfg_load_cli(cli->schema, cli->target, path, sets, n_sets, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", cli->prog, err);
		return -1;
	}
	if (check) {
		if (cli->print_checked != NULL) {
			cli->print_checked(stdout, cli->target);
		} else {
			printf("# configuration OK; the settings in force:\n");
			cfg_write(stdout, cli->schema, cli->target);
		}
		return 1;
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The daemons' shared command line (common/config_cli.c) with a small schema: every option,
 * every error, the options of a program's own, and what goes to stdout and stderr.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config_cli.h"
#include "tests/tap.h"

struct mini {
	uint32_t port;
	char name[32];
};

static const struct cfg_key mini_keys[] = {
	{.name = "port",
		.type = CFG_UINT,
		.offset = offsetof(struct mini, port),
		.size = sizeof(uint32_t),
		.min = 1,
		.max = 65535,
		.def = "6379",
		.doc = "The port."},
	{.name = "name",
		.type = CFG_STRING,
		.offset = offsetof(struct mini, name),
		.size = sizeof(((struct mini *)0)->name),
		.min = 0,
		.max = 31,
		.def = "fg",
		.doc = "A name to find in the reference."},
};
static const struct cfg_section mini_sections[] = {
	{.name = "mini", .doc = "A test section.", .keys = mini_keys, .n_keys = 2},
};
static const struct cfg_schema mini_schema = {
	.sections = mini_sections,
	.n_sections = 1,
	.target_size = sizeof(struct mini),
	.help = "see --help-config",
};

/* What the program's own options did. */
struct own {
	int migrate;
	const char *peer;
};

static int
on_migrate(const char *arg, void *ctx)
{
	(void)arg;
	((struct own *)ctx)->migrate++;
	return 0;
}

static int
on_peer(const char *arg, void *ctx)
{
	if (strcmp(arg, "bad") == 0) {
		fprintf(stderr, "test: --peer: \"bad\" is refused\n");
		return -1;
	}
	((struct own *)ctx)->peer = arg;
	return 0;
}

static void
usage(FILE *out)
{
	fprintf(out, "usage: test [options]\n");
}

static struct mini cfg;
static struct own own;
static const struct cfg_cli_extra extras[] = {
	{"migrate", false, on_migrate},
	{"peer", true, on_peer},
};
static struct cfg_cli cli = {
	.prog = "test",
	.schema = &mini_schema,
	.target = &cfg,
	.usage = usage,
	.stray_hint = "options only",
	.extra = extras,
	.n_extra = 2,
	.ctx = &own,
};

/* A schema with a secret, for the refusal of secrets on the command line. */
struct with_secret {
	uint8_t key[4];
	int key_set;
	uint32_t port;
};
static const struct cfg_key secret_keys[] = {
	{.name = "key",
		.type = CFG_HEX,
		.offset = offsetof(struct with_secret, key),
		.size = 4,
		.flags = CFG_F_SECRET | CFG_F_MARK_SET,
		.set_offset = offsetof(struct with_secret, key_set),
		.doc = "A secret."},
	{.name = "port",
		.type = CFG_UINT,
		.offset = offsetof(struct with_secret, port),
		.size = sizeof(uint32_t),
		.min = 1,
		.max = 65535,
		.def = "80",
		.doc = "Not a secret."},
};
static const struct cfg_section secret_sections[] = {
	{.name = "s", .doc = "With a secret.", .keys = secret_keys, .n_keys = 2},
};
static const struct cfg_schema secret_schema = {
	.sections = secret_sections,
	.n_sections = 1,
	.target_size = sizeof(struct with_secret),
	.help = "see --help-config",
};
static struct with_secret secret_cfg;

static char out_text[8192], err_text[8192];

/* The command line run() parses: NULL for cli. */
static const struct cfg_cli *run_cli;

/* Runs cfg_cli_parse() on the NULL-terminated args with stdout and stderr captured. */
static int
run(const char *const *args)
{
	char *argv[2 * CFG_CLI_MAX_SETS + 16];
	int argc = 0;
	FILE *o = tmpfile(), *e = tmpfile();
	int saved_out = dup(1), saved_err = dup(2);

	argv[argc++] = "test";
	for (; *args != NULL; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(o), 1);
	dup2(fileno(e), 2);

	int rc = cfg_cli_parse(run_cli != NULL ? run_cli : &cli, argc, argv);

	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	rewind(o);
	rewind(e);
	out_text[fread(out_text, 1, sizeof(out_text) - 1, o)] = '\0';
	err_text[fread(err_text, 1, sizeof(err_text) - 1, e)] = '\0';
	fclose(o);
	fclose(e);
	return rc;
}

static const char *
write_conf(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/fg-test-cli-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		perror("temporary file");
		exit(2);
	}
	fputs(text, f);
	fclose(f);
	return path;
}

int
main(void)
{
	const char *conf = write_conf("[mini]\nport = 80\nname = from-file\n");
	int rc;

	rc = run((const char *[]){NULL});
	tap_ok(rc == 0 && cfg.port == 6379 && strcmp(cfg.name, "fg") == 0 && err_text[0] == '\0',
		"no options: run with the defaults");
	rc = run((const char *[]){"-c", conf, NULL});
	tap_ok(rc == 0 && cfg.port == 80 && strcmp(cfg.name, "from-file") == 0,
		"-c FILE: its settings");
	rc = run((const char *[]){
		"--config", conf, "-s", "mini.port=81", "--set", "mini.name=x", NULL});
	tap_ok(rc == 0 && cfg.port == 81 && strcmp(cfg.name, "x") == 0,
		"-s and --set override the file, in order");
	rc = run((const char *[]){"-s", "mini.port=0", NULL});
	tap_ok(rc == -1 && strstr(err_text, "test: ") == err_text &&
			strstr(err_text, "port") != NULL && cfg.port == 81,
		"a bad -s: -1, one message naming the key, the settings unchanged");
	rc = run((const char *[]){"-s", "mini.port", NULL});
	tap_ok(rc == -1 && strstr(err_text, "SECTION.KEY=VALUE") != NULL,
		"-s without '=': says what it expects");

	const char *many[CFG_CLI_MAX_SETS * 2 + 4];
	unsigned n = 0;

	for (int i = 0; i <= CFG_CLI_MAX_SETS; i++) {
		many[n++] = "-s";
		many[n++] = "mini.port=82";
	}
	many[n] = NULL;
	rc = run(many);
	tap_ok(rc == -1 && strstr(err_text, "too many -s options (at most 64)") != NULL,
		"65 -s options: refused with the limit");
	many[2 * CFG_CLI_MAX_SETS] = NULL;
	rc = run(many);
	tap_ok(rc == 0 && cfg.port == 82, "64 -s options: taken");

	rc = run((const char *[]){"-c", conf, "--check-config", NULL});
	tap_ok(rc == 1 && strstr(out_text, "# configuration OK") == out_text &&
			strstr(out_text, "port = 80") != NULL && err_text[0] == '\0',
		"--check-config: 1, the settings in force on stdout");
	rc = run((const char *[]){"--check-config", "-s", "mini.port=70000", NULL});
	tap_ok(rc == -1 && out_text[0] == '\0' && strstr(err_text, "port") != NULL,
		"--check-config with a bad setting: -1, the error, nothing on stdout");
	rc = run((const char *[]){"--help-config", NULL});
	tap_ok(rc == 1 && strstr(out_text, "A name to find in the reference.") != NULL,
		"--help-config: 1, the reference of every key on stdout");
	rc = run((const char *[]){"-h", NULL});
	tap_ok(rc == 1 && strcmp(out_text, "usage: test [options]\n") == 0,
		"-h: 1, usage on stdout");
	rc = run((const char *[]){"--help", NULL});
	tap_ok(rc == 1 && strstr(out_text, "usage:") == out_text, "--help: the same");
	rc = run((const char *[]){"--bogus", NULL});
	tap_ok(rc == -1 && strstr(err_text, "bogus") != NULL &&
			strstr(err_text, "usage: test") != NULL && out_text[0] == '\0',
		"an unknown option: -1, getopt's message and the usage on stderr");
	rc = run((const char *[]){"-c", conf, "stray", NULL});
	tap_ok(rc == -1 && strcmp(err_text,
				   "test: unexpected argument \"stray\" (options only)\n") == 0,
		"a stray argument: -1, named, with the program's hint");

	own = (struct own){0, NULL};
	rc = run((const char *[]){"--migrate", "--peer", "tcp://x", "--migrate", NULL});
	tap_ok(rc == 0 && own.migrate == 2 && own.peer != NULL && strcmp(own.peer, "tcp://x") == 0,
		"the program's own options reach its functions, with their arguments");
	rc = run((const char *[]){"--peer", "bad", NULL});
	tap_ok(rc == -1 && strstr(err_text, "\"bad\" is refused") != NULL,
		"an own option's refusal: -1, its message");
	rc = run((const char *[]){"--peer", NULL});
	tap_ok(rc == -1 && strstr(err_text, "peer") != NULL,
		"an own option without its argument: -1");

	cli.stray_hint = NULL;
	cli.n_extra = 0;
	rc = run((const char *[]){"--migrate", NULL});
	tap_ok(rc == -1, "without it among the program's options, --migrate is unknown");
	rc = run((const char *[]){"x", NULL});
	tap_ok(rc == -1 && strcmp(err_text, "test: unexpected argument \"x\"\n") == 0,
		"a stray argument without a hint");
	unlink(conf);
	{
		struct cfg_cli sc = cli;

		sc.schema = &secret_schema;
		sc.target = &secret_cfg;
		run_cli = &sc;
		memset(&secret_cfg, 0, sizeof(secret_cfg));
		rc = run((const char *[]){"-s", "s.port=81", "-s", "s.key=a1b2c3d4", NULL});
		tap_ok(rc == -1 && secret_cfg.key[3] == 0 && secret_cfg.port == 0 &&
				strstr(err_text, "-s s.key is refused: a secret on the command "
						 "line") != NULL &&
				strstr(err_text, "-c") != NULL && strstr(err_text, "chmod 600") != NULL &&
				strstr(err_text, "a1b2c3d4") == NULL && out_text[0] == '\0',
			"a secret given with -s is refused, nothing loaded (not even the -s before "
			"it), the message names the key, not the value, and says where it belongs: "
			"%s",
			err_text);
		rc = run((const char *[]){"-s", "s.port=82", NULL});
		tap_ok(rc == 0 && err_text[0] == '\0', "no warning for a key that is no secret");
		run_cli = NULL;
	}
	return tap_done();
}

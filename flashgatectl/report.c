/* SPDX-License-Identifier: BSD-3-Clause */
#include "flashgatectl/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ini.h>

#include "common/parse.h"
#include "flashgatectl/ctl_fail.h"

/* The command's name in its messages, and its synopsis. */
#define CMD	 "report"
#define SYNOPSIS "report EVENT_ID --out DIR [--conninfo CONNINFO]"

#ifndef FG_REPORT_SCRIPT
#define FG_REPORT_SCRIPT "/usr/share/flashgate/sale_report.py"
#endif

const char report_usage[] = SYNOPSIS
	"   the sale's report (HTML and plots) from PostgreSQL, during the sale or after\n";

/* inih callback: keeps [postgres] conninfo (quotes optional, as in every flashgate config). */
static int
ini_conninfo(void *user, const char *section, const char *name, const char *value)
{
	char *out = user;
	size_t len = strlen(value);

	if (strcmp(section, "postgres") != 0 || strcmp(name, "conninfo") != 0)
		return 1;
	if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
		value++;
		len -= 2;
	}
	snprintf(out, 1024, "%.*s", (int)len, value);
	return 1;
}

int
report_command(int argc, char **argv, const char *config, bool *handled)
{
	const char *event = NULL, *out = NULL, *conninfo = NULL;
	const char *script = getenv("FLASHGATE_REPORT_SCRIPT");
	char from_config[1024] = "";
	uint64_t id;

	*handled = argc > 0 && strcmp(argv[0], "report") == 0;
	if (!*handled)
		return 0;
	for (int i = 1; i < argc; i++) {
		int rc = ctl_option(CMD, argc, argv, &i, "--out", &out);

		if (rc == 0)
			rc = ctl_option(CMD, argc, argv, &i, "--conninfo", &conninfo);
		if (rc == 2)
			return rc;
		if (rc == 1)
			continue;
		if (argv[i][0] == '-')
			return ctl_fail(CMD, "unknown option \"%s\" (%s)", argv[i], SYNOPSIS);
		if (event != NULL)
			return ctl_fail(CMD, "unexpected \"%s\" after EVENT_ID %s (%s)", argv[i],
				event, SYNOPSIS);
		event = argv[i];
	}
	if (event == NULL)
		return ctl_fail(CMD, "missing EVENT_ID (%s)", SYNOPSIS);
	if (parse_u64(event, 1, UINT32_MAX, &id) != 0)
		return ctl_fail(CMD, "EVENT_ID must be 1..4294967295, got \"%s\"", event);
	if (out == NULL)
		return ctl_fail(CMD, "--out DIR is needed: the folder the report is written to");
	if (conninfo == NULL)
		conninfo = getenv("FG_PG_CONNINFO");
	if (conninfo == NULL) {
		(void)ini_parse(config, ini_conninfo, from_config);
		conninfo = from_config;
	}
	if (script == NULL || *script == '\0')
		script = FG_REPORT_SCRIPT;
	if (access(script, X_OK) != 0)
		return ctl_fail(CMD,
			"the report script %s cannot be run: %s (set $FLASHGATE_REPORT_SCRIPT)",
			script, strerror(errno));
	if (setenv("FG_PG_CONNINFO", conninfo, 1) != 0)
		return ctl_fail(CMD, "out of memory");

	pid_t pid = fork();

	if (pid < 0)
		return ctl_fail(CMD, "fork: %s", strerror(errno));
	if (pid == 0) {
		execl(script, script, "--event", event, "--out", out, (char *)NULL);
		fprintf(stderr, "flashgatectl: report: cannot run %s: %s\n", script,
			strerror(errno));
		_exit(2);
	}
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return ctl_fail(CMD, "waitpid: %s", strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

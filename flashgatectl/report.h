/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CTL_REPORT_H
#define FG_CTL_REPORT_H
/*
 * "flashgatectl report EVENT --out DIR [--conninfo CONNINFO]": the report of a sale
 * (docs/operations.md "The report of a sale"), written by the shipped script sale_report.py
 * from PostgreSQL alone, for any sale, during it or after, without a control plane.
 */
#include <stdbool.h>

/*
 * Runs the command when argv[0] is "report" (*handled true), for an event of the database named
 * by --conninfo, else $FG_PG_CONNINFO, else [postgres] conninfo of config (the config file; may
 * not exist). The script is $FLASHGATE_REPORT_SCRIPT, else the installed one. Returns the exit
 * status: the script's (0, 1 when an invariant fails), or 2 (a usage error, no script).
 */
int report_command(int argc, char **argv, const char *config, bool *handled);

/* The usage line of the command, for flashgatectl's help. */
extern const char report_usage[];

#endif

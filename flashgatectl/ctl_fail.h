/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CTL_CTL_FAIL_H
#define FG_CTL_CTL_FAIL_H
/* One way for flashgatectl's commands to say why they stop (docs/operations.md). */

/*
 * Prints "flashgatectl: CMD: <message>" (cmd NULL: "flashgatectl: <message>") and a line end on
 * stderr, the message formatted from fmt as printf does. Returns 2, the exit status of a usage
 * error or a command that could not run. Cannot fail.
 */
int ctl_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Whether argv[*i] is the option name ("--out"), as "--out VALUE" or "--out=VALUE": 1 with *val
 * the value and *i on the option's last word; 0 when it is another word (nothing changed).
 * *val must be NULL on the option's first time: when it is not (given twice), when the value is
 * missing (none follows, or the next word starts with "--": give such a value as
 * --out=VALUE) or empty, it says so as ctl_fail() does and returns 2.
 */
int ctl_option(const char *cmd, int argc, char **argv, int *i, const char *name, const char **val);

#endif

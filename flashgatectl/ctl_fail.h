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

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CTL_TOP_H
#define FG_CTL_TOP_H
/*
 * "flashgatectl top [EVENT_ID] [--count N]": the live view of a sale, refreshed every second as
 * redis-cli --stat or htop are (docs/operations.md "The live view"): decisions per second by
 * verdict, items left, orders and orders per second, the line (challenge, draw), each data
 * plane's answers per second, links. It asks the control plane "stats" and "event show" once a
 * second; without EVENT_ID it follows the first open event. On a terminal each frame redraws the
 * screen; otherwise each is a block of plain lines and a blank line.
 */
#include <stdbool.h>
#include <stddef.h>

/* Sends one request line and returns the answer (malloc'd, *len bytes), or NULL. */
typedef char *(*top_ask_fn)(void *arg, const char *line, size_t *len);

/*
 * Runs the command when argv[0] is "top" (*handled true) until SIGINT or SIGTERM, or N frames.
 * Returns the exit status: 0, or 2 (a usage error, no control plane).
 */
int top_command(int argc, char **argv, top_ask_fn ask, void *arg, bool *handled);

/* The usage line of the command, for flashgatectl's help. */
extern const char top_usage[];

#endif

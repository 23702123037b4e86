/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CTL_CURVE_KEYGEN_H
#define FG_CTL_CURVE_KEYGEN_H
/*
 * "flashgatectl curve keygen NAME [--dir DIR] [--role dataplane|order-writer]": a CURVE key
 * pair for one program's ZeroMQ links (common/zlink.h), made here with zmq_curve_keypair(),
 * without a control plane. DIR/NAME.key holds the secret key (mode 0600: only the program that
 * uses it should read it), DIR/NAME.pub the public key; neither is ever overwritten.
 */
#include <stdbool.h>
#include <stdio.h>

/*
 * Runs the command when argv[0] is "curve" (*handled true), printing what it wrote to out (as
 * one JSON object with json: ok, secret_key_file, public_key_file, public_key, role) and errors
 * to stderr; *handled false for any other command. Returns the exit status: 0, or 2 (a usage
 * error, a file that exists, no CURVE in libzmq).
 */
int curve_keygen_command(int argc, char **argv, FILE *out, bool json, bool *handled);

/* The usage line of the command, for flashgatectl's help. */
extern const char curve_keygen_usage[];

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TOOLS_LG_ARGS_H
#define FG_TOOLS_LG_ARGS_H
/*
 * Option values of the packet tools (flashgate-loadgen, flashgate-pcapgen): whole numbers,
 * fractions, IPv4 addresses and networks. Each returns 0, or -EINVAL (-EDOM for a network
 * with host bits set) and leaves *out as it was; the caller says what was wrong.
 */
#include <stddef.h>
#include <stdint.h>

/* A decimal whole number in [min, max] (no sign, no spaces, nothing after it). */
int lg_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* A finite decimal number in [min, max]. */
int lg_parse_double(const char *s, double min, double max, double *out);

/* A dotted IPv4 address, in host byte order. */
int lg_parse_ipv4(const char *s, uint32_t *out);

/*
 * A.B.C.D/P with P in 8..32: its usable hosts, all but the network and broadcast addresses
 * below /31, as *base (host order) and *n. -EDOM when A.B.C.D has host bits set (the operator
 * probably meant another network); *net_out, when not NULL, gets the network with the host
 * bits cleared and *plen_out the prefix length, also then, for the message.
 */
int lg_parse_net(const char *s, uint32_t *base, uint32_t *n, uint32_t *net_out, unsigned *plen_out);

/* Hex digits (an even number, either case) as *len <= cap bytes into out[0..cap). */
int lg_parse_hex(const char *hex, uint8_t *out, size_t cap, size_t *len);

#endif

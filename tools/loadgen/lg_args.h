/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TOOLS_LG_ARGS_H
#define FG_TOOLS_LG_ARGS_H
/*
 * Option values of the packet tools (flashgate-loadgen, flashgate-pcapgen) that are theirs
 * alone: a client network and its hosts. Numbers, addresses and hex come from common/parse.h.
 */
#include <stdint.h>

/*
 * A.B.C.D/P with P in 8..32: its usable hosts, all but the network and broadcast addresses
 * below /31, as *base (host order) and *n. Returns 0; -EINVAL when s is not such a network (no
 * "/P" included); -EDOM when A.B.C.D has host bits set (the operator probably meant another
 * network): *net_out, when not NULL, gets the network with the host bits cleared and *plen_out
 * the prefix length, also then, for the message; *base and *n are left as they were.
 */
int lg_parse_net(const char *s, uint32_t *base, uint32_t *n, uint32_t *net_out, unsigned *plen_out);

#endif

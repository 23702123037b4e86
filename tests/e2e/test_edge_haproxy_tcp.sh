#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A sale behind haproxy in mode tcp terminating TLS, the shoppers' addresses in PROXY protocol v2
# headers, each shopper keeping its connection (tests/e2e/edge/edge_test.sh says what is checked).
# usage: test_edge_haproxy_tcp.sh DATAPLANE CONTROLPLANE FLASHGATECTL   (prints TAP; needs root)
EDGE_KIND=haproxy
EDGE_CONF=haproxy-tcp.cfg
EDGE_SRC=proxy
# shellcheck source=tests/e2e/edge/edge_test.sh
. "$(dirname "$0")/edge/edge_test.sh"

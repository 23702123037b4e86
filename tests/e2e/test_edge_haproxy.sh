#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A sale behind haproxy terminating TLS (tests/e2e/edge/edge_test.sh says what is checked).
# usage: test_edge_haproxy.sh DATAPLANE CONTROLPLANE FLASHGATECTL   (prints TAP; needs root)
EDGE_KIND=haproxy
EDGE_CONF=haproxy.cfg
# shellcheck source=tests/e2e/edge/edge_test.sh
. "$(dirname "$0")/edge/edge_test.sh"

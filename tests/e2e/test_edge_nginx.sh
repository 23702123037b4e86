#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A sale behind nginx terminating TLS (tests/e2e/edge/edge_test.sh says what is checked).
# usage: test_edge_nginx.sh DATAPLANE CONTROLPLANE FLASHGATECTL   (prints TAP; needs root)
EDGE_KIND=nginx
EDGE_CONF=nginx.conf
# shellcheck source=tests/e2e/edge/edge_test.sh
. "$(dirname "$0")/edge/edge_test.sh"

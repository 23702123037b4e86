#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Load from the kernel's TCP: wrk with 16 connections for 3 seconds, a new connection for each
# request (Connection: close). Every request must be answered with 2xx and no socket error;
# the rate is reported as a diagnostic, never asserted.
# usage: test_wrk.sh DATAPLANE_EXECUTABLE   (prints TAP; needs root)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

E2E_TOOLS=(wrk)
e2e_begin wrk "$@"

out=$(fg_ns_exec timeout 60 wrk -t1 -c16 -d3s --timeout 2s -H 'Connection: close' \
	"$E2E_BASE/healthz" 2>&1) || true
tap_diag "$out"

requests=$(awk '/ requests in / { print $1 }' <<<"$out")
tap_run "wrk completed requests (got '${requests:-none}')" test "${requests:-0}" -gt 0
# wrk prints these lines only when the count is not zero.
socket_errors=$(grep -E '^ *Socket errors:' <<<"$out" || true)
tap_is "$socket_errors" "" "wrk: no socket errors (connect, read, write, timeout)"
non2xx=$(grep -E '^ *Non-2xx or 3xx responses:' <<<"$out" || true)
tap_is "$non2xx" "" "wrk: no non-2xx answers"

e2e_stop_dataplane
tap_done

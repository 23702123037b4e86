#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Malformed requests sent raw (one segment each, from a python3 socket in the client namespace):
# each class gets its status code, and the data plane closes the connection.
# usage: test_http_malformed.sh DATAPLANE_EXECUTABLE   (prints TAP; needs root)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

# Sizes chosen to stay inside one 1,460-byte segment where the class is not "does not fit".
LONG_TARGET=$(printf 'a%.0s' $(seq 1 1100))
MANY_HEADERS=$(for i in $(seq 1 100); do printf 'X-H%03d: v\\r\\n' "$i"; done)
HUGE_VALUE=$(printf 'v%.0s' $(seq 1 4000))

H='Host: gate.test\r\n'
G="GET /healthz HTTP/1.1\r\n$H" # request line and Host
P="POST /healthz HTTP/1.1\r\n$H"
# status | what is wrong | printf format of the raw request (\r, \n, \000 are bytes)
cases=(
	"200|nothing (a well-formed request, the control case)|$G\r\n"
	"400|bare LF ends the request line|GET /healthz HTTP/1.1\n$H\r\n"
	"400|bare LF ends a header line|GET /healthz HTTP/1.1\r\nHost: gate.test\nX-A: b\r\n\r\n"
	"400|bare CR inside the request line|GET /hea\rlthz HTTP/1.1\r\n$H\r\n"
	"400|NUL in a header value|${G}X-A: a\000b\r\n\r\n"
	"400|obs-fold (a header continued on the next line)|${G}X-A: a\r\n b\r\n\r\n"
	"400|space between field name and colon|GET /healthz HTTP/1.1\r\nHost : gate.test\r\n\r\n"
	"400|Content-Length not a number|${P}Content-Length: 1x\r\n\r\n"
	"400|Content-Length given twice|${P}Content-Length: 0\r\nContent-Length: 0\r\n\r\n"
	"501|Transfer-Encoding: chunked|${G}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
	"501|unknown method|BREW /healthz HTTP/1.1\r\n$H\r\n"
	"505|HTTP/2.0 in the request line|GET /healthz HTTP/2.0\r\n$H\r\n"
	"400|no HTTP version in the request line|GET /healthz\r\n$H\r\n"
	"414|1,100-byte request target|GET /$LONG_TARGET HTTP/1.1\r\n$H\r\n"
	"431|100 header fields|$G$MANY_HEADERS\r\n"
	"431|a 4,000-byte header (the request does not fit one segment)|${G}X-Big: $HUGE_VALUE\r\n\r\n"
	"405|DELETE on /healthz (a known route, a wrong method)|DELETE /healthz HTTP/1.1\r\n$H\r\n"
)

e2e_begin mal "$@"

for c in "${cases[@]}"; do
	want=${c%%|*}
	rest=${c#*|}
	what=${rest%%|*}
	fmt=${rest#*|}
	# shellcheck disable=SC2059 # the case's format is the request
	printf "$fmt" >"$E2E_TMP/request"
	got=$(fg_ns_exec timeout 20 python3 "$E2E_DIR/rawhttp.py" "$FG_DP_ADDR" "$E2E_PORT" \
		<"$E2E_TMP/request" 2>&1) || true
	read -r status close header <<<"$got" || true
	tap_is "$status" "$want" "$what: answered $want"
	case $close in
	closed | reset) tap_ok 0 "$what: connection closed after the answer ($close)" ;;
	*) tap_ok 1 "$what: connection closed after the answer (got: $got)" ;;
	esac
	tap_is "$header" conn-close "$what: answer says Connection: close"
done

e2e_stop_dataplane
tap_done

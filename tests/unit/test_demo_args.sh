#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# scripts/demo's wrong command lines, as a newcomer types them: each refused before anything
# starts (no root needed) with one line on stderr that names what was wrong, not the whole usage
# (which buried it: an unknown option printed 40 lines of help and nothing else).
#
# usage: test_demo_args.sh
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
TMP=$(mktemp -d /tmp/fg-demo_args.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# One case a line: the arguments, the exit status, the first line of stderr.
#   ARGS|STATUS|STDERR
cases=(
	"--bogus|2|error: unknown option or argument '--bogus' ($ROOT/scripts/demo --help lists the options)"
	"--keep extra|2|error: unknown option or argument 'extra' ($ROOT/scripts/demo --help lists the options)"
	"--cluster --nope|2|error: unknown option or argument '--nope' (scripts/demo --cluster --help lists the options)"
	"--users|1|error: --users needs a number"
	"--users abc|1|error: --users must be a whole number in 1..1000000, got 'abc'"
	"--stock=0|1|error: --stock must be a whole number in 1..10000, got '0'"
)
for c in "${cases[@]}"; do
	IFS='|' read -r args want_rc want_err <<<"$c"
	read -ra argv <<<"$args"
	rc=0
	"$ROOT/scripts/demo" "${argv[@]}" >"$TMP/out" 2>"$TMP/err" || rc=$?
	tap_is "$rc" "$want_rc" "demo $args: exit status $want_rc"
	tap_is "$(wc -l <"$TMP/err")" 1 "  one line on stderr"
	tap_is "$(head -n 1 "$TMP/err")" "$want_err" "  it says what was wrong"
	tap_is "$(wc -c <"$TMP/out")" 0 "  nothing on stdout"
done
rc=0
"$ROOT/scripts/demo" --help >"$TMP/out" 2>"$TMP/err" || rc=$?
tap_ok "$([ "$rc" = 0 ] && [ ! -s "$TMP/err" ] && head -n 1 "$TMP/out" | grep -q '^usage: ';
	echo $?)" "demo --help: the usage on stdout, exit status 0"
tap_done

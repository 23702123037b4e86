#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# monitoring/flashgate-rules.yml as Prometheus reads it: promtool check rules (syntax, every
# expression parses) and promtool test rules (monitoring/flashgate-rules.test.yml: each alert
# fires on its cause and none on a healthy sale). Prints TAP.
#
# usage: test_prometheus_rules.sh
set -uo pipefail
DIR=$(cd "$(dirname "$0")/../../monitoring" && pwd)
if ! command -v promtool >/dev/null; then
	echo "1..0 # SKIP promtool is not installed (Debian's prometheus, scripts/install-deps)"
	exit 0
fi
out=$(promtool check rules "$DIR/flashgate-rules.yml" 2>&1)
rc=$?
[ $rc -eq 0 ] && echo "ok 1 - promtool check rules flashgate-rules.yml" ||
	echo "not ok 1 - promtool check rules flashgate-rules.yml"
sed 's/^/# /' <<<"$out"
out=$(cd "$DIR" && promtool test rules flashgate-rules.test.yml 2>&1)
rc2=$?
[ $rc2 -eq 0 ] && echo "ok 2 - promtool test rules flashgate-rules.test.yml" ||
	echo "not ok 2 - promtool test rules flashgate-rules.test.yml"
sed 's/^/# /' <<<"$out"
# Every alert of the rules has a test that makes it fire.
missing=0
for a in $(grep -oE 'alert: [A-Za-z]+' "$DIR/flashgate-rules.yml" | cut -d' ' -f2); do
	grep -A1 -E "alertname: $a\$" "$DIR/flashgate-rules.test.yml" | grep -q exp_alerts: || {
		echo "# alert $a has no test where it fires"
		missing=$((missing + 1))
	}
done
[ $missing -eq 0 ] && echo "ok 3 - every alert has a test where it fires" ||
	echo "not ok 3 - every alert has a test where it fires ($missing without)"
echo "1..3"

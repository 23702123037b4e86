#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# scripts/lib.sh fg_items_sold, the demo's 'items sold' line, against a stand-in redis-cli whose
# Redis lets one more order expire after every command (its item back in the stock, its buyer
# released), as the demo's Redis does while it reads: the line's figures add up (items sold =
# buyers - released) only when the three are read at one moment. Read one by one, a demo run
# printed 712 sold, to 1000 buyers, 290 of whom released.
#
# usage: test_items_sold.sh
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
TMP=$(mktemp -d /tmp/fg-items_sold.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# The stand-in: the state "LEFT BUYERS RELEASED" in a file; GET, HLEN and SCARD answer one of
# them, EVAL (a script reads at one moment) all three, one a line; then an order expires.
mkdir "$TMP/bin"
cat >"$TMP/bin/redis-cli" <<'SH'
#!/usr/bin/env bash
read -r left buyers released <"$STATE"
shift 2 # -s SOCK
case ${1,,} in
get) echo "$left" ;;
hlen) echo "$buyers" ;;
scard) echo "$released" ;;
eval) printf '%s\n' "$left" "$buyers" "$released" ;;
*) exit 1 ;;
esac
echo "$((left + 1)) $buyers $((released + 1))" >"$STATE"
SH
chmod +x "$TMP/bin/redis-cli"
export STATE=$TMP/state
PATH=$TMP/bin:$PATH

echo "288 1000 288" >"$STATE"
line=$(fg_items_sold "$TMP/redis.sock" 7 1000)
[[ $line =~ sold\ \(Redis\):\ ([0-9]+)\ of\ 1000,\ to\ ([0-9]+)\ buyers,\ ([0-9]+)\ of\ whom ]]
sold=${BASH_REMATCH[1]:-0} buyers=${BASH_REMATCH[2]:-0} released=${BASH_REMATCH[3]:-1}
tap_is "$sold" "$((buyers - released))" \
	"orders expiring while it reads: items sold = buyers - released ($line)"

echo "0 1000 0" >"$STATE"
tap_is "$(fg_items_sold "$TMP/redis.sock" 7 1000)" "items sold (Redis): 1000 of 1000, to 1000 buyers" \
	"none released: no word of it"
rm "$TMP/bin/redis-cli"
printf '#!/bin/sh\nexit 1\n' >"$TMP/bin/redis-cli"
chmod +x "$TMP/bin/redis-cli"
out=$(fg_items_sold "$TMP/redis.sock" 7 1000)
tap_is "$?/$out" "1/" "Redis not answering: nothing printed, non-zero"
tap_done

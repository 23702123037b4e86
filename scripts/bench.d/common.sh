# SPDX-License-Identifier: BSD-3-Clause
# scripts/bench.d/common.sh: what every part of scripts/bench shares: progress lines, stopping
# what it started (PIDS), the rows of the table and the commands run, and the two number formats.
# Sourced by scripts/bench; it runs nothing.
# shellcheck shell=bash
# shellcheck disable=SC2034 # ROWS and CMDS are read by scripts/bench

log() { printf 'bench: %s\n' "$*" >&2; }

# stop PID: stops one background process of ours and forgets it.
stop() {
	local pid=$1 keep=() p
	fg_stop_pid "$pid" 10 >/dev/null 2>&1 || true
	for p in "${PIDS[@]}"; do
		[ "$p" = "$pid" ] || keep+=("$p")
	done
	PIDS=("${keep[@]}")
}

# --- results ---------------------------------------------------------------------------------
# One row per figure: part|what|flashgate|baseline name|baseline|ratio|note. Every number is
# formatted when the table is printed.
ROWS=()
CMDS=()
row() { ROWS+=("$1|$2|$3|$4|$5|$6|$7"); }
cmd() { CMDS+=("$*"); }

# ratio A B: A/B with two decimals, or "—" when either is missing or B is zero.
ratio() {
	awk -v a="${1:-}" -v b="${2:-}" 'BEGIN {
		if (a == "" || b == "" || b + 0 == 0) { print "—"; exit }
		printf "%.2f×\n", a / b }'
}
# human N: 1234567 -> 1.23 M, 45678 -> 45.7 k; text stays as it is.
human() {
	awk -v n="${1:-}" 'BEGIN {
		if (n == "") { print "—"; exit }
		if (n !~ /^[0-9.]+$/) { print n; exit }
		if (n >= 1e6) printf "%.2f M\n", n / 1e6
		else if (n >= 1e4) printf "%.1f k\n", n / 1e3
		else printf "%.0f\n", n }'
}

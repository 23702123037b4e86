# SPDX-License-Identifier: BSD-3-Clause
# scripts/bench.d/orders.sh: the orders part of scripts/bench: tests/bench_order_writer, the order
# writer against single-row INSERTs. Sourced by scripts/bench; it defines part_orders.
# shellcheck shell=bash
# shellcheck disable=SC2154 # quick, huge, the sizes and programs: set by scripts/bench

part_orders() {
	log "orders: bench_order_writer (the order writer against single-row INSERTs)"
	local o=$TMP/bench_order_writer.out w s
	cmd "$OW_BENCH_EXE $OW_EXE $N_ORDERS"
	timeout 600 "$OW_BENCH_EXE" "$OW_EXE" "$N_ORDERS" >"$o" 2>&1 ||
		log "bench_order_writer failed: $(tail -n 3 "$o")"
	w=$(sed -n 's/^# order writer: [0-9]* orders, \([0-9]*\) orders\/s.*/\1/p' "$o")
	s=$(sed -n 's/^# single-row autocommit INSERTs: [0-9]* rows, \([0-9]*\) rows\/s.*/\1/p' "$o")
	row orders "orders/s committed (fsync on), $N_ORDERS orders" "$w" \
		"single-row autocommit INSERTs" "$s" "$(ratio "$w" "$s")" "target ≥ 100 k/s and ≥ 40×"
}

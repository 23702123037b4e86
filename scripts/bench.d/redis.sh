# SPDX-License-Identifier: BSD-3-Clause
# scripts/bench.d/redis.sh: the redis part of scripts/bench: tests/bench_reserve, reserve.lua in
# batches against the seed script via redis-benchmark (the C benchmark prints its own
# comparison). Sourced by scripts/bench; it defines part_redis.
# shellcheck shell=bash
# shellcheck disable=SC2154 # quick, huge, the sizes and programs: set by scripts/bench

part_redis() {
	log "redis: bench_reserve (reserve.lua against the seed script via redis-benchmark)"
	local q=() seed=$FG_ROOT/../shared/seed-flash-sale.md o=$TMP/bench_reserve.out
	[ "$quick" -eq 0 ] || q=(FG_BENCH_QUICK=1)
	cmd "${q[*]:+${q[*]} }$RESERVE_EXE $seed"
	env "${q[@]}" timeout 600 "$RESERVE_EXE" "$seed" >"$o" 2>&1 ||
		log "bench_reserve failed: $(tail -n 3 "$o")"
	local p1 p32 best best_shape sold_seed sold_ours
	p1=$(awk '/seed one-user script, redis-benchmark -c 50 -P 1 / { print $(NF - 1) }' "$o")
	p32=$(awk '/seed one-user script, redis-benchmark -c 50 -P 32 / { print $(NF - 1) }' "$o")
	best=$(sed -n 's/^# best: batch \([0-9]* x [0-9]*\), \([0-9]*\) decisions.*/\2/p' "$o")
	best_shape=$(sed -n 's/^# best: batch \([0-9]* x [0-9]*\), .*/\1/p' "$o")
	sold_seed=$(sed -n 's/^# sold out: seed -P 32 \([0-9]*\) decisions.*/\1/p' "$o")
	sold_ours=$(sed -n 's/^# sold out: seed .*, reserve.lua batch [0-9]* x [0-9]* \([0-9]*\) decisions.*/\1/p' \
		"$o")
	row redis "decisions/s, reserve.lua batches of ${best_shape:-?}, outbox included" "$best" \
		"seed script, redis-benchmark -P 32" "$p32" "$(ratio "$best" "$p32")" \
		"target ≥ 2×; unpipelined seed $(human "$p1")/s ($(ratio "$best" "$p1"))"
	row redis "decisions/s after sell-out (no writes)" "$sold_ours" \
		"seed script, redis-benchmark -P 32" "$sold_seed" "$(ratio "$sold_ours" "$sold_seed")" ""
}

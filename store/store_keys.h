/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_KEYS_H
#define FG_STORE_STORE_KEYS_H
/*
 * Every Redis key of an event, in one place: what it holds, who writes it and who reads it.
 * The other store modules (store/store_*.c) and the scripts of lua/ use only these keys.
 *
 * Keys of event EV share the hash tag {EV}, so every script touches one cluster slot:
 *
 *   fg:{EV}:stock     string, the stock left (an integer; missing = not preheated = 0).
 *                     Written by store_preheat() (store_event: SET before the sale), reserve.lua
 *                     (store_reserve: DECRBY), release.lua (store_release: INCRBY) and
 *                     store_repair_stock() (store_reconcile: SET while unchanged). Read by
 *                     reserve.lua and store_event_state().
 *
 *   fg:{EV}:result    hash, user -> the latest state of that user's reservation. It has exactly
 *                     one field per user holding a reservation (never removed, see
 *                     release.lua), so it is also the event's set of buyers: |buyers| is its
 *                     HLEN. The values (store_results() reads them all, and the shorter X:, C:
 *                     and P: forms older builds wrote):
 *                       "<rid>"                         reserved (reserve.lua; bare: the hot
 *                                                       path adds nothing)
 *                       "O:<rid>:<order id>:<deadline>" ordered (the order writer:
 *                                                       store_results_ordered_ack(), store_outbox;
 *                                                       reconciliation: store_repair_buyers())
 *                       "P:<rid>:<order id>:<deadline>" paid (the order writer:
 *                                                       store_results_paid(), store_result;
 *                                                       reconciliation: store_repair_buyers())
 *                       "X:<rid>:<order id>:<deadline>" expired, stock returned (release.lua;
 *                                                       reconciliation: store_repair_buyers())
 *                       "C:<rid>:<order id>:<deadline>" cancelled, stock returned (release.lua;
 *                                                       reconciliation: store_repair_buyers())
 *                       "S:<rid>"                       sold out: never an order (PostgreSQL had
 *                                                       no stock for it), stock returned
 *                                                       (release.lua)
 *                       "H"                             holds an order in PostgreSQL: restored
 *                                                       by an older build's reconciliation
 *                                                       (store_repair_buyers() now writes O: or P:)
 *                     Read by reserve.lua (HMGET: who is a buyer already), release.lua (only a
 *                     buyer's stock goes back), store_results() (store_result: the control plane
 *                     answers result queries), store_results_ordered_ack() (a final X:, C:, P:
 *                     stays), store_buyers_missing() (store_reconcile), store_preheat() (a sale
 * ran) and store_event_state() (HLEN).
 *
 *   fg:{EV}:outbox    stream, one entry per batch of reserve.lua (per
 *                     RS_OUTBOX_ENTRY_RESERVATIONS reservations of a batch): the fields
 *                     u=<user> r=<reservation id> repeated once per reservation, in order
 *                     (entries of older builds hold one, and may carry t=<admitted_ms>).
 *                     Written by reserve.lua (XADD). The order writer reads it with a consumer
 *                     group (store_outbox: XREADGROUP, XAUTOCLAIM), acks an entry once every
 *                     reservation in it is an order (XACK) and trims acknowledged entries
 *                     (XTRIM). Read also by store_preheat() (a sale ran) and store_event_state()
 *                     (XLEN).
 *
 *   fg:{EV}:released  set of "<reservation id>:<user>" whose stock went back (older builds
 *                     wrote a bare "<reservation id>", still read). Written by release.lua
 *                     (SADD, exactly once per reservation and user: store_release) and
 *                     store_repair_buyers(), store_repair_orphans() (store_reconcile: the
 *                     member of an X: or C: field they restore, lost with it). Read by
 *                     store_released_check() (the order writer makes no order of a released
 *                     reservation) and store_event_state() (SCARD).
 *
 *   fg:{EV}:window    string, whether the sale may decide now: "<starts_ms> <ends_ms>" (open in
 *                     [starts, ends) by the control plane's clock, which reserve.lua gets as
 *                     an argument), "held" (preheated, not opened) or "closed" (closed by the
 *                     operator). Written by store_sale_window() (store_event: the control plane
 *                     on preheat, open, close and at start from PostgreSQL's state). Read by
 *                     reserve.lua (outside the window it refuses the whole batch and writes
 *                     nothing) and store_sale_window_get(). Missing: no window recorded, so only
 * the control plane's own check refuses (events of older builds).
 *
 *   fg:{EV}:entrants  hash, user -> "<rid>": the entrants of the event's draw (docs/fairness.md),
 *                     each with the reservation that made them one. Written by enter.lua
 *                     (store_draw: store_enter(), HSETNX semantics: a user's second reservation
 *                     changes nothing) while the control plane's clock is in [queue_opens_at,
 *                     draw_at) and the draw key is open; never changed after the freeze. Read
 *                     by draw_freeze.lua (HLEN), store_entrants_scan() (the draw reads them
 *                     with HSCAN when their log below is short), store_entrants_get() (a result
 * query of an entrant) and store_preheat() (a pre-queue ran).
 *
 *   fg:{EV}:draw      hash, the draw's state: "state" open | frozen | done (missing: open, or
 *                     no draw), "n" the entrants fixed at the freeze, "next" the index (0-based,
 *                     rank - 1) of the first entrant not decided yet, "digest" the entrants'
 *                     digest in hex (common/draw.h). Created (state open) by enter.lua's first
 *                     entrant; open -> frozen (n, next 0; done at once when n is 0) by
 *                     draw_freeze.lua (store_draw_freeze()); next advanced by reserve.lua's draw
 *                     batches, which set state done when next reaches n; digest set once by
 *                     store_draw_set_digest(). Read by enter.lua (frozen: refuse), reserve.lua (a
 *                     first-come batch is refused while the key exists and is not done; a draw
 *                     batch runs only when next equals its first index), store_draw_freeze().
 *                     Deleted by store_preheat() when there is no entrant.
 *                     The ranks themselves are not in Redis: the control plane that runs the
 *                     draw holds them in memory (controlplane/draw_runner.h) and PostgreSQL in
 *                     draw_entrants; a restarted control plane reads them back from there.
 *
 *   fg:{EV}:wait      list, "<user>:<rid>:<rank>": the draw's waiting list (docs/fairness.md),
 *                     the entrants beyond the stock in rank order. Appended by reserve.lua's
 *                     draw batches (an entrant answered waiting), popped from the head by
 *                     release.lua (store_release_to()), which hands a returned item to the
 *                     head instead of the stock while the sale is not closed. The draw key's
 *                     "served" is the highest rank holding an item (the draw's or the list's);
 *                     its "paid" counts the buyers paid (store_results_paid(); release.lua
 *                     takes one off should a paid item come back): with the stock 0 and
 *                     every buyer still holding paid, no item can come back to the list
 *                     (store_draw_waiting()'s final, a final sold out for those on it).
 *   fg:{ev}:wrank     hash: user -> rank, one field per entrant that reserve.lua's draw
 *                     batches appended to the waiting list, written in the same script (so
 *                     once). Never popped: it answers a result query of such an entrant after
 *                     the draw is done (store_wranks_get()), by any control plane.
 *
 *   fg:{EV}:entlog    string, "<user>:<rid>\n" per entrant: the entrants of the hash above, in
 *                     the order they entered, appended by enter.lua in the same script as their
 *                     fields (so it holds exactly the hash's entrants). Read by
 *                     store_entrants_log_read() (the draw reads it in slices of a megabyte
 *                     with GETRANGE: an HSCAN costs Redis about 1.3 us an entrant, a slice
 *                     next to nothing); a draw whose log does not hold the freeze's count
 *                     (entrants of an older build) reads the hash with HSCAN. Deleted when the
 *                     draw is done (store_entrants_log_drop()), and with the hash
 *                     (store_preheat() without entrants, store_purge_event()).
 *
 * store_purge_event() (store_event) deletes all ten.
 * Invariant: stock + |buyers| - |released| == preheated stock, and the outbox holds one
 * reservation per buyer until the order writer trims acknowledged entries.
 */
#include <stddef.h>
#include <stdint.h>

/* The most reservations reserve.lua puts in one outbox entry (readers take any number). */
#define RS_OUTBOX_ENTRY_RESERVATIONS 1024

/* A buffer this long holds any key name: "fg:{4294967295}:released" is 24 bytes. */
#define RS_KEY_MAX 32

enum store_key_kind {
	RS_KEY_STOCK,
	RS_KEY_RESULT,
	RS_KEY_OUTBOX,
	RS_KEY_RELEASED,
	RS_KEY_WINDOW,
	RS_KEY_ENTRANTS,
	RS_KEY_DRAW,
	RS_KEY_WAIT,
	RS_KEY_WRANK,
	RS_KEY_ENTLOG,
};
#define RS_KEY_KINDS (RS_KEY_ENTLOG + 1)

/*
 * Writes the name of one of an event's keys ("fg:{42}:stock") to buf. Returns its length,
 * -ENOSPC when cap is too small (RS_KEY_MAX always suffices), or -EINVAL for an unknown kind.
 */
int store_key(char *buf, size_t cap, uint32_t event, enum store_key_kind kind);

#endif

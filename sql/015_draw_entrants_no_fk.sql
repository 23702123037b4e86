-- SPDX-License-Identifier: BSD-3-Clause
-- draw_entrants keep their event without a per-row foreign key.
--
-- The foreign key draw_entrants.event_id -> events(id) checked every row of a draw's COPY with
-- a trigger that locked the event row (SELECT ... FOR KEY SHARE), once per entrant: at 10^6
-- entrants a large part of the draw's write. The same guarantee, as for orders (002), comes
-- from two places:
--   - the draw is written in one transaction that first reads the event row FOR UPDATE
--     (pg/pg_draw.c pg_draw_write_begin()) and writes nothing when there is no such event, so
--     the event cannot be deleted while its entrants are written;
--   - deleting an event that has draw entrants is refused by the trigger below, as one with
--     orders is (events are never deleted by flashgate itself; this stops a hand-written
--     DELETE).
ALTER TABLE draw_entrants DROP CONSTRAINT draw_entrants_event_id_fkey;

CREATE OR REPLACE FUNCTION flashgate_event_delete_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM orders WHERE event_id = OLD.id) THEN
		RAISE EXCEPTION 'event % has orders; it cannot be deleted', OLD.id
			USING ERRCODE = 'foreign_key_violation';
	END IF;
	IF EXISTS (SELECT 1 FROM draw_entrants WHERE event_id = OLD.id) THEN
		RAISE EXCEPTION 'event % has draw entrants; it cannot be deleted', OLD.id
			USING ERRCODE = 'foreign_key_violation';
	END IF;
	RETURN OLD;
END
$$;

-- SPDX-License-Identifier: BSD-3-Clause
-- Orders keep their event without a per-row foreign key.
--
-- The foreign key orders.event_id -> events(id) checked every inserted order with a trigger
-- that locked the event row (SELECT ... FOR KEY SHARE), one per row: about 45 % of the time of
-- a 500-row batch on the test machine, on the order writer's only hot statement. The same
-- guarantee, that no order outlives or precedes its event, now comes from two places:
--   - the order writer's batch statement reads the event row FOR KEY SHARE once per batch and
--     inserts nothing when there is no such event (order-writer/order_store.c), so an event
--     cannot be deleted while a batch of its orders is being written;
--   - deleting an event that has orders is refused by the trigger below (events are never
--     deleted by flashgate itself; this stops a hand-written DELETE).
ALTER TABLE orders DROP CONSTRAINT orders_event_id_fkey;

CREATE FUNCTION flashgate_event_delete_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM orders WHERE event_id = OLD.id) THEN
		RAISE EXCEPTION 'event % has orders; it cannot be deleted', OLD.id
			USING ERRCODE = 'foreign_key_violation';
	END IF;
	RETURN OLD;
END
$$;

CREATE TRIGGER events_delete_guard BEFORE DELETE ON events
	FOR EACH ROW EXECUTE FUNCTION flashgate_event_delete_guard();

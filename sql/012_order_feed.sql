-- SPDX-License-Identifier: BSD-3-Clause
-- Orders announced to the shop (docs/operations.md "Orders announced to the shop"): an ordered
-- change feed that a listener reads from where it stopped, and a NOTIFY that wakes it.
--
-- order_feed: one row per change of an order (created 'pending'; then 'paid', 'cancelled' or
-- 'expired'), written by the triggers below in the transaction that makes the change, so a change
-- is in the feed exactly when it is committed. seq numbers the changes in the order they were
-- committed: the triggers take seq under a transaction-level advisory lock held until COMMIT, so
-- a row with a higher seq never becomes visible before one with a lower seq. A listener that has
-- handled every row up to seq s therefore only ever needs the rows after s (a rolled-back
-- transaction leaves a gap in seq, never a late row). The lock is taken once per statement,
-- after the statement's other locks (the orders' rows, then the stock row, which every batch of
-- the order writer, the expiry sweeper and flashgate_cancel() take in that order), so it adds no
-- wait the stock row did not already impose, and no deadlock.
--
-- Statement-level triggers with transition tables: the order writer's batch of up to 2048 orders
-- costs one INSERT ... SELECT here, not a trigger call per order.
--
-- After each statement that added rows, NOTIFY flashgate_orders, payload the highest seq written;
-- delivered at COMMIT to every session that LISTENs. A NOTIFY is lost while nobody listens: it
-- only wakes a listener, which reads the table itself.
--
-- order_feed_cursors: where each named listener stopped (the last seq it handled), for listeners
-- that keep their place in PostgreSQL (the one of docs/operations.md does, in the transaction
-- that reads the rows).
--
-- Rows stay with their sale (archiving an event keeps them); an operator prunes what every
-- listener has handled: DELETE FROM order_feed WHERE seq <= (SELECT min(seq) FROM
-- order_feed_cursors).
CREATE SEQUENCE order_feed_seq;

CREATE TABLE order_feed (
	seq bigint PRIMARY KEY,
	order_id bigint NOT NULL,
	event_id bigint NOT NULL,
	user_id bigint NOT NULL,
	old_status text, -- NULL: the order was created
	status text NOT NULL,
	pay_deadline timestamptz NOT NULL,
	changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX order_feed_event ON order_feed (event_id, seq);

CREATE TABLE order_feed_cursors (
	listener text PRIMARY KEY CHECK (length(listener) BETWEEN 1 AND 63),
	seq bigint NOT NULL DEFAULT 0,
	updated_at timestamptz NOT NULL DEFAULT now()
);

-- The advisory lock that orders seq by commit: key 0x66676664 ("fgfd").
CREATE FUNCTION flashgate_order_feed_created() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
	top bigint;
BEGIN
	IF NOT EXISTS (SELECT FROM new_orders) THEN
		RETURN NULL;
	END IF;
	PERFORM pg_advisory_xact_lock(1717986916);
	INSERT INTO order_feed (seq, order_id, event_id, user_id, old_status, status, pay_deadline)
	SELECT nextval('order_feed_seq'), s.* FROM (
		SELECT id, event_id, user_id, NULL::text, status, pay_deadline
		FROM new_orders ORDER BY id) s;
	top := currval('order_feed_seq');
	PERFORM pg_notify('flashgate_orders', top::text);
	RETURN NULL;
END
$$;

CREATE FUNCTION flashgate_order_feed_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	IF NOT EXISTS (SELECT FROM new_orders n JOIN old_orders o ON o.id = n.id
			WHERE o.status IS DISTINCT FROM n.status) THEN
		RETURN NULL;
	END IF;
	PERFORM pg_advisory_xact_lock(1717986916);
	INSERT INTO order_feed (seq, order_id, event_id, user_id, old_status, status, pay_deadline)
	SELECT nextval('order_feed_seq'), s.* FROM (
		SELECT n.id, n.event_id, n.user_id, o.status, n.status, n.pay_deadline
		FROM new_orders n JOIN old_orders o ON o.id = n.id
		WHERE o.status IS DISTINCT FROM n.status ORDER BY n.id) s;
	GET DIAGNOSTICS n = ROW_COUNT;
	IF n > 0 THEN
		PERFORM pg_notify('flashgate_orders', currval('order_feed_seq')::text);
	END IF;
	RETURN NULL;
END
$$;

CREATE TRIGGER orders_feed_created AFTER INSERT ON orders
	REFERENCING NEW TABLE AS new_orders
	FOR EACH STATEMENT EXECUTE FUNCTION flashgate_order_feed_created();
CREATE TRIGGER orders_feed_changed AFTER UPDATE ON orders
	REFERENCING OLD TABLE AS old_orders NEW TABLE AS new_orders
	FOR EACH STATEMENT EXECUTE FUNCTION flashgate_order_feed_changed();

-- flashgate_cancel() as before (sql/007), in one statement: the order's row, then the stock row,
-- then (at the statement's end) the feed's lock, the order every other change of orders takes
-- them in. As two statements it took the feed's lock between the two rows and could deadlock
-- with a batch of the order writer holding the stock row.
CREATE OR REPLACE FUNCTION flashgate_cancel(p_order_id bigint) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	st text;
BEGIN
	WITH c AS (
		UPDATE orders SET status = 'cancelled'
		WHERE id = p_order_id AND status = 'pending'
		RETURNING id, event_id, reservation_id, user_id),
	rel AS (
		INSERT INTO stock_releases (event_id, order_id, reservation_id, user_id, n)
		SELECT event_id, id, reservation_id, user_id, 1 FROM c RETURNING 1),
	back AS (
		UPDATE stock s SET available = s.available + 1 FROM c
		WHERE s.event_id = c.event_id RETURNING 1)
	SELECT 'cancelled' INTO st FROM c, (SELECT count(*) FROM rel) r, (SELECT count(*) FROM back) b;
	IF st IS NOT NULL THEN
		RETURN st;
	END IF;
	SELECT status INTO st FROM orders WHERE id = p_order_id;
	IF NOT FOUND THEN
		RETURN 'no_such_order';
	ELSIF st = 'cancelled' THEN
		RETURN 'already_cancelled';
	END IF;
	RETURN st;
END
$$;

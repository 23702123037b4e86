-- SPDX-License-Identifier: BSD-3-Clause
-- Every result the API promises reaches the buyer's poll: paid and cancelled orders.
--
-- result_changes: one row per order whose result changed in PostgreSQL alone (paid by
-- flashgate_pay(), which the shop's backend and flashgatectl order pay call). A trigger writes it
-- in the transaction that pays, so a payment is never missed; the order writer reads the table
-- every order_writer.results_interval (200 ms), writes "P:<rid>:<order id>:<deadline>" into the
-- event's Redis result hash, sends the PAID result to the control plane (which publishes it to
-- every data plane) and deletes the rows it handled (order-writer/ow_results.c).
--
-- Cancelled orders need no row here: flashgate_cancel() writes a stock release like the expiry
-- sweeper's, and the order writer applies releases at the same pace, storing "C:..." and
-- publishing CANCELLED.
CREATE TABLE result_changes (
	id bigserial PRIMARY KEY,
	order_id bigint NOT NULL REFERENCES orders (id),
	created_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION flashgate_result_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO result_changes (order_id) VALUES (NEW.id);
	RETURN NULL;
END
$$;

-- Only an UPDATE that pays fires it: the order writer's INSERTs and the sweeper's expiries do not.
CREATE TRIGGER orders_result_paid AFTER UPDATE OF status ON orders
	FOR EACH ROW WHEN (NEW.status = 'paid' AND OLD.status IS DISTINCT FROM 'paid')
	EXECUTE FUNCTION flashgate_result_changed();

-- What the shop's backend (or an operator) calls to cancel an order. Returns
--   'cancelled'        the order was pending: it is cancelled now and its item goes back on sale
--                      (a stock release, applied to Redis by the order writer);
--   'already_cancelled' it was cancelled before: nothing changes;
--   'paid'             it is paid: nothing changes (refund and cancel it in the shop instead);
--   'expired'          it expired: its item went back already;
--   'no_such_order'    there is no order with this id.
-- Like flashgate_pay() and the expiry sweeper it changes only a 'pending' order, so each order
-- ends exactly one way.
CREATE FUNCTION flashgate_cancel(p_order_id bigint) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	o orders%ROWTYPE;
BEGIN
	UPDATE orders SET status = 'cancelled'
	WHERE id = p_order_id AND status = 'pending'
	RETURNING * INTO o;
	IF FOUND THEN
		INSERT INTO stock_releases (event_id, order_id, reservation_id, user_id, n)
		VALUES (o.event_id, o.id, o.reservation_id, o.user_id, 1);
		UPDATE stock SET available = available + 1 WHERE event_id = o.event_id;
		RETURN 'cancelled';
	END IF;
	SELECT * INTO o FROM orders WHERE id = p_order_id;
	IF NOT FOUND THEN
		RETURN 'no_such_order';
	ELSIF o.status = 'cancelled' THEN
		RETURN 'already_cancelled';
	END IF;
	RETURN o.status;
END
$$;

-- SPDX-License-Identifier: BSD-3-Clause
-- flashgate's first schema: events and their stock (PostgreSQL is the source of truth for
-- stock), orders, the outbox of stock releases, keys, risk rules, limits, and flashgate_pay().
-- pg_migrate() runs this file in one transaction and records version 1 in schema_migrations;
-- it must not contain BEGIN or COMMIT. Times are timestamptz; durations are whole seconds.

-- One row per flash sale. id is the event id of the HTTP API and of the wire format (32 bits).
CREATE TABLE events (
	id bigint PRIMARY KEY CHECK (id BETWEEN 1 AND 4294967295),
	name text NOT NULL CHECK (octet_length(name) BETWEEN 1 AND 63),
	starts_at timestamptz NOT NULL,
	ends_at timestamptz NOT NULL,
	pay_window_s integer NOT NULL CHECK (pay_window_s BETWEEN 10 AND 86400),
	-- UNIQUE (event_id, user_id) on orders makes one item per user the only limit that can
	-- hold today; a later migration relaxes both together.
	per_user_limit integer NOT NULL DEFAULT 1 CHECK (per_user_limit = 1),
	-- draft -> preheated (stock loaded into Redis) -> open -> closed; see docs/operations.md.
	state text NOT NULL DEFAULT 'draft'
		CHECK (state IN ('draft', 'preheated', 'open', 'closed')),
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	CHECK (starts_at < ends_at)
);

-- The stock of each event. available only moves through the order writer (down, by the orders
-- it inserted) and stock releases (up, by cancelled or expired orders); never below 0 and never
-- above what the event started with.
CREATE TABLE stock (
	event_id bigint PRIMARY KEY REFERENCES events (id),
	initial integer NOT NULL CHECK (initial BETWEEN 0 AND 100000000),
	available integer NOT NULL CHECK (available >= 0),
	CHECK (available <= initial)
);

-- One row per reservation that Redis accepted and the order writer committed. The two UNIQUE
-- constraints make a redelivered outbox entry insert nothing (ON CONFLICT DO NOTHING).
CREATE TABLE orders (
	id bigserial PRIMARY KEY,
	event_id bigint NOT NULL REFERENCES events (id),
	user_id bigint NOT NULL CHECK (user_id >= 1),
	reservation_id bigint NOT NULL UNIQUE,
	status text NOT NULL DEFAULT 'pending'
		CHECK (status IN ('pending', 'paid', 'expired', 'cancelled')),
	reserved_at timestamptz NOT NULL DEFAULT now(), -- when Redis decided
	created_at timestamptz NOT NULL DEFAULT now(),
	pay_deadline timestamptz NOT NULL,
	paid_at timestamptz,
	UNIQUE (event_id, user_id),
	CHECK ((status = 'paid') = (paid_at IS NOT NULL))
);
-- The expiry sweeper's scan: pending orders by deadline, and nothing else.
CREATE INDEX orders_pending_deadline ON orders (pay_deadline) WHERE status = 'pending';
-- Counts by status per event (reconcile, stats).
CREATE INDEX orders_event_status ON orders (event_id, status);

-- The outbox of stock returned to PostgreSQL that still has to reach Redis (lua/release.lua).
-- One row per cancelled or expired order (UNIQUE order_id): a release is written once, in the
-- transaction that cancels the order, and applied_at is set once Redis has it.
CREATE TABLE stock_releases (
	id bigserial PRIMARY KEY,
	event_id bigint NOT NULL REFERENCES events (id),
	order_id bigint NOT NULL UNIQUE REFERENCES orders (id),
	reservation_id bigint NOT NULL,
	user_id bigint NOT NULL,
	n integer NOT NULL DEFAULT 1 CHECK (n >= 1),
	created_at timestamptz NOT NULL DEFAULT now(),
	applied_at timestamptz
);
CREATE INDEX stock_releases_pending ON stock_releases (id) WHERE applied_at IS NULL;

-- HMAC keys by kind and id: 'sale' keys sign purchase tokens, receipts and reserve paths (the
-- control plane generates them); 'auth' keys verify session tokens (the shop's login service
-- signs them and gives them to us). One current key per kind mints; the previous one stays for
-- an overlap so that tokens already out keep verifying.
CREATE TABLE keys (
	kind text NOT NULL CHECK (kind IN ('sale', 'auth')),
	kid bigint NOT NULL CHECK (kid BETWEEN 0 AND 4294967295),
	secret bytea NOT NULL CHECK (octet_length(secret) BETWEEN 16 AND 64),
	current boolean NOT NULL DEFAULT false,
	created_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (kind, kid)
);
CREATE UNIQUE INDEX keys_one_current ON keys (kind) WHERE current;

-- Risk rules, in the canonical text of admin_rule_value(): 'ip' a.b.c.d or a.b.c.d/len,
-- 'user' a decimal id, 'device' a device id.
CREATE TABLE rules (
	id bigserial PRIMARY KEY,
	kind text NOT NULL CHECK (kind IN ('ip', 'user', 'device')),
	value text NOT NULL CHECK (octet_length(value) BETWEEN 1 AND 63),
	created_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (kind, value)
);

-- The data planes' limits: one row. Rates are tokens per second (0: no limit), bursts the bucket
-- size (0: one second's worth; at most 4194, what a data plane's table entry holds).
CREATE TABLE limits (
	id boolean PRIMARY KEY DEFAULT true CHECK (id),
	ip_rate integer NOT NULL CHECK (ip_rate BETWEEN 0 AND 1000000),
	ip_burst integer NOT NULL CHECK (ip_burst BETWEEN 0 AND 4194),
	user_rate integer NOT NULL CHECK (user_rate BETWEEN 0 AND 1000000),
	user_burst integer NOT NULL CHECK (user_burst BETWEEN 0 AND 4194),
	device_rate integer NOT NULL CHECK (device_rate BETWEEN 0 AND 1000000),
	device_burst integer NOT NULL CHECK (device_burst BETWEEN 0 AND 4194),
	forward_per_s integer NOT NULL CHECK (forward_per_s BETWEEN 0 AND 10000000),
	updated_at timestamptz NOT NULL DEFAULT now()
);
-- docs/limits.md "Recommended defaults".
INSERT INTO limits (ip_rate, ip_burst, user_rate, user_burst, device_rate, device_burst,
	forward_per_s)
VALUES (20, 40, 2, 5, 2, 5, 20000);

-- What the shop's backend calls when a payment for an order arrives. Returns
--   'paid'                   the order was pending and in time: it is paid now;
--   'already_paid'           it was paid before (a repeated notification): nothing changes;
--   'expired_refund_needed'  it expired or was cancelled, or its deadline has passed: the
--                            stock went (or goes) back on sale, so refund the payment;
--   'no_such_order'          there is no order with this id.
-- Paying and expiring both change only a 'pending' order (UPDATE ... WHERE status = 'pending'),
-- and a payment after the deadline never wins, so exactly one of them takes each order.
CREATE FUNCTION flashgate_pay(p_order_id bigint) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	st text;
BEGIN
	UPDATE orders SET status = 'paid', paid_at = now()
	WHERE id = p_order_id AND status = 'pending' AND pay_deadline > now();
	IF FOUND THEN
		RETURN 'paid';
	END IF;
	SELECT status INTO st FROM orders WHERE id = p_order_id;
	IF NOT FOUND THEN
		RETURN 'no_such_order';
	ELSIF st = 'paid' THEN
		RETURN 'already_paid';
	END IF;
	RETURN 'expired_refund_needed';
END
$$;

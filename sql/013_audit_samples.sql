-- SPDX-License-Identifier: BSD-3-Clause
-- The audit log and the samples of live sales.
--
-- The audit log (docs/operations.md "The audit log"): every admin command that changes
-- something, written by the control plane that ran it once its answer is known: who (the admin
-- socket peer's user and process, from SO_PEERCRED), what (the request line; a secret never),
-- when, the sale it touched (NULL: none, e.g. keys rotate) and the answer. `flashgatectl audit
-- [EVENT]` shows it. Rows stay with their sale, as its orders do.
CREATE TABLE admin_audit (
	id bigserial PRIMARY KEY,
	at timestamptz NOT NULL DEFAULT now(),
	uid bigint CHECK (uid >= 0), -- NULL: not known
	user_name text,		     -- the uid's name where the control plane's host knows it
	pid integer,
	command text NOT NULL,	     -- "event open"
	request text NOT NULL,	     -- "event open 7" (keys auth-set: its key id only)
	event_id bigint,
	ok boolean NOT NULL,
	answer text NOT NULL	     -- the JSON answer (its first 2000 bytes)
);
CREATE INDEX admin_audit_event ON admin_audit (event_id, id);

-- The samples of live sales (docs/operations.md "The report of a sale"): once a second, for
-- each open event, the control plane writes what the live view shows: its decisions and the
-- data planes' answers as running totals (jsonb: {"reserved": N, ...}, {"202": N, ...}; the
-- report turns them into rates), and the sale's own figures from PostgreSQL (items left,
-- orders written, paid, expired, cancelled). Kept with the sale, as its orders are;
-- `flashgatectl report EVENT` draws them.
CREATE TABLE sale_samples (
	event_id bigint NOT NULL,
	at timestamptz NOT NULL DEFAULT now(),
	cp_id bigint NOT NULL,	      -- the control plane that wrote it (its running totals)
	decisions jsonb NOT NULL,     -- the control plane's verdicts so far, by verdict
	answers jsonb NOT NULL,	      -- the data planes' HTTP answers so far, by status
	admitted bigint NOT NULL,     -- reservations the data planes admitted (202) so far
	budget_refused bigint NOT NULL, -- ... refused over the forward budget so far
	data_planes integer NOT NULL, -- data planes reporting
	pow_bits integer NOT NULL,
	items_left bigint,	      -- stock.available: the stock not taken by a written order
	orders bigint NOT NULL,
	paid bigint NOT NULL,
	expired bigint NOT NULL,
	cancelled bigint NOT NULL,
	PRIMARY KEY (event_id, at)
);

-- SPDX-License-Identifier: BSD-3-Clause
-- A fair start (docs/fairness.md): a pre-queue that opens at queue_opens_at, a draw at
-- starts_at + draw_window_s among the entrants, ordered by a keyed hash of a seed drawn at
-- event create (its SHA-256 is published from then on, the seed only after the draw), and a
-- proof-of-work challenge of pow_bits in the purchase tokens.
--
-- draw_window_s 0 keeps first come, first served (queue_opens_at is then NULL). pow_bits is
-- the difficulty the operator set; pow_auto_max > pow_bits lets the control plane raise it by
-- itself up to that while reservations exceed the forward budget.
ALTER TABLE events
	ADD COLUMN queue_opens_at timestamptz,
	ADD COLUMN draw_window_s integer NOT NULL DEFAULT 0
		CHECK (draw_window_s BETWEEN 0 AND 86400),
	ADD COLUMN draw_seed bytea CHECK (octet_length(draw_seed) = 32),
	ADD COLUMN draw_digest bytea CHECK (octet_length(draw_digest) = 32),
	ADD COLUMN draw_entrants integer CHECK (draw_entrants >= 0),
	ADD COLUMN draw_done_at timestamptz,
	ADD COLUMN pow_bits smallint NOT NULL DEFAULT 0 CHECK (pow_bits BETWEEN 0 AND 30),
	ADD COLUMN pow_auto_max smallint NOT NULL DEFAULT 0 CHECK (pow_auto_max BETWEEN 0 AND 30),
	ADD CONSTRAINT events_queue_before_start
		CHECK ((draw_window_s = 0) = (queue_opens_at IS NULL) AND
			(queue_opens_at IS NULL OR queue_opens_at <= starts_at)),
	ADD CONSTRAINT events_draw_inside_sale
		CHECK (starts_at + make_interval(secs => draw_window_s) < ends_at);

-- The entrants of a draw, fixed when the draw begins (the list whose digest is
-- events.draw_digest): each with the reservation that made them an entrant and their rank.
-- Written once, by the control plane that freezes the entrants; never changed.
CREATE TABLE draw_entrants (
	event_id bigint NOT NULL REFERENCES events (id),
	user_id bigint NOT NULL CHECK (user_id >= 1),
	reservation_id bigint NOT NULL,
	rank integer NOT NULL CHECK (rank >= 1),
	PRIMARY KEY (event_id, user_id),
	UNIQUE (event_id, rank)
);

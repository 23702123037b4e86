-- SPDX-License-Identifier: BSD-3-Clause
-- The per-event forward budget gets a burst of its own (`limits set forward RATE/BURST`,
-- docs/limits.md "Per-event forward budget"): the bucket size of all data planes together, 0
-- meaning one second's worth (the rate), which is what every budget had before.
ALTER TABLE limits ADD COLUMN forward_burst integer NOT NULL DEFAULT 0
	CHECK (forward_burst BETWEEN 0 AND 10000000);
-- docs/limits.md "Recommended defaults": 20,000/s with a burst of 5,000, where the budget is
-- still the default one.
UPDATE limits SET forward_burst = 5000 WHERE forward_per_s = 20000 AND forward_burst = 0;

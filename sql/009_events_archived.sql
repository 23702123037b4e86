-- SPDX-License-Identifier: BSD-3-Clause
-- An event that is over can be archived (`flashgatectl event archive ID`, docs/operations.md
-- "More than 64 events"): it leaves the data planes' 64 slots and its Redis keys are deleted;
-- its rows here (the event, its stock, its orders) stay. Nothing leaves 'archived'.
ALTER TABLE events DROP CONSTRAINT events_state_check;
ALTER TABLE events ADD CONSTRAINT events_state_check
	CHECK (state IN ('draft', 'preheated', 'open', 'closed', 'archived'));

-- SPDX-License-Identifier: BSD-3-Clause
-- Keys retire by age, not by count: a key that stops being current keeps verifying until the
-- last purchase token or receipt it signed can no longer be valid, however many rotations
-- happen in between, and is then removed by the control plane (controlplane/pg_store.c
-- computes when from retired_at, the purchase token lifetime and the events the key could have
-- signed receipts for; docs/operations.md, "Key rotation").
--
-- retired_at: when the key stopped being current (NULL while it is). Keys that were already
-- not current get now(): when they stopped is not known, so they keep a full lifetime.
ALTER TABLE keys ADD COLUMN retired_at timestamptz;
UPDATE keys SET retired_at = now() WHERE NOT current;
ALTER TABLE keys ADD CONSTRAINT keys_retired_when_not_current
	CHECK (current = (retired_at IS NULL));

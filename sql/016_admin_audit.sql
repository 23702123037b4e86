-- SPDX-License-Identifier: BSD-3-Clause
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

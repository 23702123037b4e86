-- SPDX-License-Identifier: BSD-3-Clause
-- Every committed change to what a control plane publishes (events, keys, rules, limits) tells
-- every control plane at once: a trigger on each of those tables bumps config_version.version
-- and sends NOTIFY flashgate_config (no payload) in the changing transaction, so
-- that the notification goes out at its commit and never for a rollback. Each control plane
-- LISTENs on a connection of its own and reads its state again (docs/ha.md, "Several control
-- planes"); it also reads config_version every few seconds, so that a notification lost while
-- its listening connection was down costs seconds at most.
CREATE TABLE config_version (
	id boolean PRIMARY KEY DEFAULT true CHECK (id),
	version bigint NOT NULL,
	changed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO config_version (version) VALUES (1);

-- Runs with the rights of its owner (the role that applies the migrations), its search_path
-- pinned as in 014: a role that may change events needs no right on config_version.
CREATE FUNCTION flashgate_config_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE config_version SET version = version + 1, changed_at = now();
	-- Several in one transaction are delivered once (the same channel and payload).
	PERFORM pg_notify('flashgate_config', '');
	RETURN NULL;
END
$$;
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION flashgate_config_changed() SECURITY DEFINER '
		'SET search_path = %I, pg_temp', current_schema());
END
$$;
REVOKE EXECUTE ON FUNCTION flashgate_config_changed() FROM PUBLIC;

-- FOR EACH ROW: a statement that changed no row (a second control plane deleting the sale keys
-- the first one just retired) bumps nothing.
CREATE TRIGGER events_config_changed AFTER INSERT OR UPDATE OR DELETE ON events
	FOR EACH ROW EXECUTE FUNCTION flashgate_config_changed();
CREATE TRIGGER keys_config_changed AFTER INSERT OR UPDATE OR DELETE ON keys
	FOR EACH ROW EXECUTE FUNCTION flashgate_config_changed();
CREATE TRIGGER rules_config_changed AFTER INSERT OR UPDATE OR DELETE ON rules
	FOR EACH ROW EXECUTE FUNCTION flashgate_config_changed();
CREATE TRIGGER limits_config_changed AFTER INSERT OR UPDATE OR DELETE ON limits
	FOR EACH ROW EXECUTE FUNCTION flashgate_config_changed();

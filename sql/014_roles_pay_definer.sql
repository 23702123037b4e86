-- SPDX-License-Identifier: BSD-3-Clause
-- The shop's role may pay and cancel orders and nothing more (docs/install.md, "Roles"):
-- flashgate_pay() and flashgate_cancel() run with the rights of their owner, the role that
-- applies the migrations, so that a caller needs no right on orders, stock or stock_releases,
-- only EXECUTE on the function; their search_path is pinned to this schema (and pg_temp last),
-- so that a caller's own objects cannot stand in for the tables they use. EXECUTE is taken from
-- PUBLIC: scripts/flashgate-db-setup grants it to the control plane's role (flashgatectl order
-- pay and cancel) and the shop's. A later migration that replaces either function must say
-- SECURITY DEFINER and the SET search_path again (CREATE OR REPLACE resets them).
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION flashgate_pay(bigint) SECURITY DEFINER '
		'SET search_path = %I, pg_temp', current_schema());
	EXECUTE format('ALTER FUNCTION flashgate_cancel(bigint) SECURITY DEFINER '
		'SET search_path = %I, pg_temp', current_schema());
END
$$;
REVOKE EXECUTE ON FUNCTION flashgate_pay(bigint), flashgate_cancel(bigint) FROM PUBLIC;

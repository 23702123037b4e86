-- SPDX-License-Identifier: BSD-3-Clause
-- IPv6 address rules (docs/limits.md "Risk rules"): kind 'ip' now holds IPv6 networks too, in
-- the canonical text of admin_rule_value() (RFC 5952: '2001:db8::/32', '2001:db8::7' for one
-- address; at most 49 bytes, within the 63 the column allows). The value of an 'ip' rule must
-- be a network PostgreSQL's cidr type reads (IPv4 or IPv6, no bits set past the prefix), so that
-- a row written by hand that no control plane could load is refused when it is written rather
-- than when a control plane next loads the rule set.
ALTER TABLE rules ADD CONSTRAINT rules_ip_is_network
	CHECK (kind <> 'ip' OR value::cidr IS NOT NULL);

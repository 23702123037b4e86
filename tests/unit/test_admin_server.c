/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin server's dispatch table (controlplane/admin_server.c): every command the protocol
 * names (admin/admin_proto.h admin_cmd_name()) has a handler, and nothing else does. A command
 * added to the protocol without its handler fails here, not in front of an operator.
 */
#include <string.h>

#include "admin/admin_proto.h"
#include "controlplane/admin_server.h"
#include "tests/tap.h"

int
main(void)
{
	unsigned named = 0, missing = 0;
	enum admin_cmd cmd;

	for (cmd = ADMIN_HELP; strcmp(admin_cmd_name(cmd), "?") != 0; cmd++) {
		named++;
		if (!admin_server_handles(cmd)) {
			missing++;
			tap_diag("no handler for \"%s\"", admin_cmd_name(cmd));
		}
	}
	tap_ok(named >= 23, "the protocol names %u commands", named);
	tap_ok(missing == 0, "each has a handler in the dispatch table (%u without)", missing);
	tap_ok(!admin_server_handles(0) && !admin_server_handles(cmd) &&
			!admin_server_handles((enum admin_cmd)1000),
		"a value that is not a command has none");
	return tap_done();
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_server.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "admin/admin_answer.h"
#include "admin/admin_request.h"
#include "common/log.h"
#include "controlplane/admin_audit.h"
#include "controlplane/admin_cmds.h"
#include "controlplane/admin_events.h"
#include "controlplane/admin_exec.h"
#include "controlplane/admin_reconcile.h"
#include "controlplane/admin_verify_draw.h"
#include "store/store_conn.h"

/*
 * The commands this server runs: each of the protocol's commands (admin/admin_proto.h names
 * them, admin/admin_request.h parses their words, admin_help_text() says how to call them) with
 * its handler, whether it only reads, and whether it runs on the loop itself (the few that never
 * wait on PostgreSQL; the others run on the slow-job thread, controlplane/cp_slow.h, where a
 * locked table or a long read holds up only the admin commands): a read runs again after a lost connection whatever
 * its first run answered; a change runs again only when it was refused, knowing it is a second
 * run (admin_server_execute()).
 */
struct admin_command {
	admin_exec_fn run;
	bool reads;
	bool on_loop; /* never waits on PostgreSQL: runs on the loop, not the slow-job thread */
};

static const struct admin_command commands[] = {
	[ADMIN_HELP] = {admin_cmds_help, true, true},
	[ADMIN_EVENT_CREATE] = {admin_events_create, false},
	[ADMIN_EVENT_PREHEAT] = {admin_events_preheat, false},
	[ADMIN_EVENT_OPEN] = {admin_events_open, false},
	[ADMIN_EVENT_CLOSE] = {admin_events_close, false},
	[ADMIN_EVENT_SHOW] = {admin_events_show, true},
	[ADMIN_EVENT_LIST] = {admin_events_list, true},
	[ADMIN_EVENT_ARCHIVE] = {admin_events_archive, false},
	[ADMIN_EVENT_POW] = {admin_events_pow, false},
	[ADMIN_EVENT_VERIFY_DRAW] = {admin_verify_draw, true},
	[ADMIN_STATS] = {admin_cmds_stats, true, true},
	[ADMIN_KEYS_ROTATE] = {admin_cmds_keys_rotate, false},
	[ADMIN_KEYS_LIST] = {admin_cmds_keys_list, true},
	[ADMIN_KEYS_AUTH_SET] = {admin_cmds_keys_auth_set, false},
	[ADMIN_RULES_ADD] = {admin_cmds_rules_change, false},
	[ADMIN_RULES_DEL] = {admin_cmds_rules_change, false},
	[ADMIN_RULES_LIST] = {admin_cmds_rules_list, true},
	[ADMIN_LIMITS_SET] = {admin_cmds_limits_set, false},
	[ADMIN_LIMITS_SHOW] = {admin_cmds_limits_show, true},
	[ADMIN_SESSION_TOKEN] = {admin_cmds_session_token, true, true},
	[ADMIN_ORDER_PAY] = {admin_cmds_order, false},
	[ADMIN_ORDER_CANCEL] = {admin_cmds_order, false},
	[ADMIN_RECONCILE] = {admin_reconcile, false},
	[ADMIN_AUDIT] = {admin_audit_list, true},
};

/* The command cmd's entry, or NULL when this server has none. */
static const struct admin_command *
command_of(enum admin_cmd cmd)
{
	if ((unsigned)cmd >= sizeof(commands) / sizeof(commands[0]) || commands[cmd].run == NULL)
		return NULL;
	return &commands[cmd];
}

bool
admin_server_handles(enum admin_cmd cmd)
{
	return command_of(cmd) != NULL;
}

bool
admin_server_off_loop(const char *line)
{
	struct admin_req req;
	char err[512];
	bool off = false;

	if (admin_parse(line, &req, err, sizeof(err)) == 0) {
		const struct admin_command *cmd = command_of(req.cmd);

		off = cmd != NULL && !cmd->on_loop;
	}
	explicit_bzero(&req, sizeof(req));
	return off;
}

int
admin_server_listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "admin socket path %s is too long (at most %zu bytes)", path,
			sizeof(sa.sun_path) - 1);
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	/* A socket file that nobody answers on is a dead control plane's: replace it. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		snprintf(err, errlen,
			"another control plane answers on %s: stop it first, or set "
			"controlplane.admin_socket",
			path);
		return -1;
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* 0600 from the start: no moment where another user could connect. */
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));

	umask(old);
	if (rc != 0 || listen(fd, 16) != 0) {
		snprintf(err, errlen, "cannot listen on %s: %s (does its directory exist?)", path,
			strerror(errno));
		close(fd);
		return -1;
	}
	chmod(path, 0600);
	return fd;
}

/* Connections lost under calls so far, PostgreSQL's and Redis's. */
static uint64_t
losses(struct cp_ctx *c)
{
	struct store_stats rs;

	store_get_stats(c->rs, &rs);
	return pg_conn_losses(c->pg) + rs.outages;
}

static bool
refused(const char *out, int n)
{
	return n > 0 && strncmp(out, "{\"ok\":false", 11) == 0;
}

/*
 * Rewrites the refusal in out (n bytes) of a change that may or may not have taken effect as
 * one that says so, keeping its message (already escaped: copied as it is).
 */
static int
say_unknown(const struct admin_req *req, char *out, size_t cap, int n)
{
	static const char head[] = "{\"ok\":false,\"error\":\"";
	char prefix[256];
	const char *msg = out + sizeof(head) - 1;
	size_t mlen;

	if (n < (int)sizeof(head) + 2 || strncmp(out, head, sizeof(head) - 1) != 0)
		return n;
	mlen = (size_t)n - (sizeof(head) - 1) - 3; /* without "}\n */
	int p = snprintf(prefix, sizeof(prefix),
		"%s: the connection was lost during the command, and again when it was made "
		"once more: whether it took effect is not known; check (event show, keys list, "
		"rules list) once PostgreSQL and Redis answer. ",
		admin_cmd_name(req->cmd));

	if (p < 0 || (size_t)p + mlen + sizeof(head) + 3 > cap)
		return n;
	memmove(out + sizeof(head) - 1 + (size_t)p, msg, mlen);
	memcpy(out + sizeof(head) - 1, prefix, (size_t)p);
	n = (int)(sizeof(head) - 1 + (size_t)p + mlen);
	memcpy(out + n, "\"}\n", 3);
	return n + 3;
}

int
admin_server_execute(struct cp_ctx *c, const char *line, char *out, size_t cap)
{
	struct admin_req req;
	struct admin_exec_try t = {0};
	char err[512];

	if (admin_parse(line, &req, err, sizeof(err)) != 0)
		return admin_answer_error(out, cap, err);
	/* Right after Redis came back, an admin command must not find the store backing off;
	 * a connection Redis closed since the last call is replaced here, before the count of
	 * losses under the command starts. */
	store_reconnect_now(c->rs);

	const struct admin_command *cmd = command_of(req.cmd);

	if (cmd == NULL)
		return admin_exec_error(out, cap, "%s: this control plane has no handler for it",
			admin_cmd_name(req.cmd));

	uint64_t lost = losses(c);
	int n = cmd->run(c, &req, &t, out, cap);

	/*
	 * A connection lost under the command (PostgreSQL or Redis restarted while it ran) is
	 * made again by the store: a read runs once more on the new one; a change that was
	 * refused runs once more knowing it is a second run, which finds a change already made
	 * and says so rather than make it twice (event create, open, close, keys rotate, rules);
	 * the rest are idempotent (preheat, keys auth-set, limits set, order pay, order cancel,
	 * reconcile).
	 */
	if (losses(c) != lost && (cmd->reads || refused(out, n))) {
		LOG_NOTICE("admin: %s: a connection was lost during the command; running it once "
			   "more on the new one",
			admin_cmd_name(req.cmd));
		t.again = true;
		store_reconnect_now(c->rs);
		lost = losses(c);
		n = cmd->run(c, &req, &t, out, cap);
		if (losses(c) != lost && !cmd->reads && refused(out, n))
			n = say_unknown(&req, out, cap, n);
	}
	if (!cmd->reads)
		admin_audit_record(c, &req, line, out, n);
	explicit_bzero(&req, sizeof(req));
	return n;
}

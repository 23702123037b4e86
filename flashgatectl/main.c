/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flashgatectl: the operator's client of the control plane's admin socket.
 *
 *   flashgatectl [--socket PATH] [--config FILE] [--json] [--timeout DURATION] COMMAND [ARGS...]
 *
 * It checks the command with the same parser as the control plane (admin/admin_request.h,
 * linked from the fg_admin library), sends it as one line, and prints the one-line JSON answer
 * for people (flashgatectl/render.h), or as it is with --json.
 * Exit status: 0 done, 1 refused by the control plane, 2 a usage error or no control plane
 * reachable. "session-token USER --auth-key-file PATH --kid N" works offline, without a socket.
 * Secrets never come from the command line (ps and shell history would show them): "keys
 * auth-set" and offline session tokens read the key from standard input or a file of mode 0600
 * (common/secret_input.h).
 * docs/operations.md is the reference.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <ini.h>

#include "common/hex.h"
#include "common/parse.h"
#include "common/secret_input.h"
#include "common/token.h"
#include "admin/admin_answer.h"
#include "admin/admin_request.h"
#include "flashgatectl/curve_keygen.h"
#include "flashgatectl/report.h"
#include "flashgatectl/top.h"
#include "flashgatectl/render.h"

#define CTL_DEFAULT_CONFIG  "/etc/flashgate/flashgate.conf"
#define CTL_DEFAULT_SOCKET  "/run/flashgate/admin.sock"
#define CTL_DEFAULT_TIMEOUT 30000 /* ms */
#define CTL_ANSWER_MAX	    (256u << 20)
#define EXIT_REFUSED	    1
#define EXIT_USAGE	    2

struct ctl_opts {
	const char *socket;
	const char *socket_from; /* where the socket path came from, for messages */
	const char *config;
	bool config_given;
	bool json;
	uint64_t timeout_ms;
	int argc; /* the command's words */
	char **argv;
};

/* The help line of offline session tokens (offline_token()). */
static const char offline_token_usage[] = "session-token USER [--ttl DURATION] --auth-key-file "
					  "PATH|- --kid N   mints offline, without "
					  "a control plane\n";

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: flashgatectl [--socket PATH] [--config FILE] [--json] [--timeout DURATION] "
		"COMMAND [ARGS...]\n"
		"\n"
		"Sends COMMAND to flashgate-controlplane's admin socket and prints the answer.\n"
		"  --socket PATH       the admin socket; default: $FLASHGATE_SOCKET, else\n"
		"                      [controlplane] admin_socket of the config file, else %s\n"
		"  --config FILE       the config file to read it from (default %s)\n"
		"  --json              print the answer as JSON, one line\n"
		"  --timeout DURATION  how long to wait for the answer (default 30s; 0: forever)\n"
		"Exit status: 0 done, 1 refused by the control plane, 2 usage error or no control "
		"plane.\n"
		"\n"
		"Commands:\n%s%s%s%s%s"
		"\n"
		"Secrets are read from a file of mode 0600 (--key-file PATH, --auth-key-file PATH) "
		"or\n"
		"from standard input (-, or no file: one line, not echoed on a terminal), never "
		"from\n"
		"the command line.\n",
		CTL_DEFAULT_SOCKET, CTL_DEFAULT_CONFIG, admin_help_text(), offline_token_usage,
		curve_keygen_usage, report_usage, top_usage);
}

/*
 * Prints the lines of text that start with the words prefix[0..plen); returns how many. *units
 * becomes true when one of them takes a TIME or a DURATION.
 */
static int
print_matching(const char *text, const char *prefix, size_t plen, bool *units)
{
	int n = 0;

	for (const char *l = text; *l != '\0';) {
		size_t len = strcspn(l, "\n");

		if (len >= plen && strncmp(l, prefix, plen) == 0 &&
			(len == plen || l[plen] == ' ')) {
			printf("%.*s\n", (int)len, l);
			*units |= memmem(l, len, "TIME", 4) != NULL ||
				  memmem(l, len, "DURATION", 8) != NULL;
			n++;
		}
		l += len + (l[len] == '\n');
	}
	return n;
}

/*
 * "COMMAND [SUBCOMMAND] ... --help" (or -h): the help lines of that command, found by its first
 * two words, then by its first, with what TIME and DURATION are when they take one; the whole
 * usage when neither names a command. Returns false when no word of the command is -h or --help.
 */
static bool
command_help(int argc, char **argv)
{
	const char *texts[] = {admin_help_text(), offline_token_usage, curve_keygen_usage,
		report_usage, top_usage};
	bool asked = false, units = false;
	char prefix[64];
	int n = 0;

	for (int i = 1; i < argc; i++)
		asked |= strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0;
	if (!asked)
		return false;
	for (int words = argc > 1 && argv[1][0] != '-' ? 2 : 1; words > 0 && n == 0; words--) {
		int len = words == 2 ? snprintf(prefix, sizeof(prefix), "%s %s", argv[0], argv[1])
				     : snprintf(prefix, sizeof(prefix), "%s", argv[0]);

		for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]) && len > 0 &&
				   (size_t)len < sizeof(prefix);
			t++)
			n += print_matching(texts[t], prefix, (size_t)len, &units);
	}
	if (n == 0)
		usage(stdout);
	else if (units)
		print_matching(admin_help_text(), "TIME:", 5, &units);
	return true;
}

/* Prints "flashgatectl: <message>" on stderr; returns the exit status of a usage error. */
static int die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("flashgatectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

/* inih callback: keeps [controlplane] admin_socket. */
static int
ini_socket(void *user, const char *section, const char *name, const char *value)
{
	char *out = user;
	size_t len = strlen(value);

	if (strcmp(section, "controlplane") != 0 || strcmp(name, "admin_socket") != 0)
		return 1;
	/* Quotes around a value are optional in flashgate's config files. */
	if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
		value++;
		len -= 2;
	}
	snprintf(out, sizeof(((struct sockaddr_un *)0)->sun_path) + 1, "%.*s", (int)len, value);
	return 1;
}

/* Picks the socket path: --socket, $FLASHGATE_SOCKET, the config file, the default. */
static int
resolve_socket(struct ctl_opts *o, char *from_config, size_t len)
{
	static char from[600];
	const char *env = getenv("FLASHGATE_SOCKET");
	int rc;

	if (o->socket != NULL) {
		o->socket_from = "--socket";
		return 0;
	}
	if (env != NULL && *env != '\0') {
		o->socket = env;
		o->socket_from = "$FLASHGATE_SOCKET";
		return 0;
	}
	from_config[0] = '\0';
	(void)len;
	rc = ini_parse(o->config, ini_socket, from_config);
	if (rc < 0 && o->config_given)
		return die_usage("cannot read the config file %s", o->config);
	if (rc > 0) {
		if (o->config_given)
			return die_usage("%s:%d: cannot parse this line", o->config, rc);
		fprintf(stderr,
			"flashgatectl: warning: %s:%d: cannot parse this line; ignoring it\n",
			o->config, rc);
	}
	if (from_config[0] != '\0') {
		o->socket = from_config;
		snprintf(from, sizeof(from), "[controlplane] admin_socket in %s", o->config);
		o->socket_from = from;
		return 0;
	}
	o->socket = CTL_DEFAULT_SOCKET;
	o->socket_from =
		"the default (no --socket, $FLASHGATE_SOCKET or admin_socket in the config)";
	return 0;
}

static int
parse_globals(int argc, char **argv, struct ctl_opts *o)
{
	int i = 1;

	o->config = CTL_DEFAULT_CONFIG;
	o->timeout_ms = CTL_DEFAULT_TIMEOUT;
	while (i < argc && strncmp(argv[i], "-", 1) == 0) {
		const char *a = argv[i], *val = NULL, *eq = strchr(a, '=');
		size_t nlen = eq != NULL ? (size_t)(eq - a) : strlen(a);
		bool takes = false;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strcmp(a, "--json") == 0) {
			o->json = true;
			i++;
			continue;
		}
		if ((nlen == 8 && strncmp(a, "--socket", 8) == 0) ||
			(nlen == 8 && strncmp(a, "--config", 8) == 0) ||
			(nlen == 9 && strncmp(a, "--timeout", 9) == 0))
			takes = true;
		if (!takes)
			return die_usage("unknown option '%s' (try flashgatectl --help)", a);
		if (eq != NULL) {
			val = eq + 1;
			i++;
		} else if (i + 1 < argc) {
			val = argv[i + 1];
			i += 2;
		} else {
			return die_usage("%s needs a value", a);
		}
		if (a[2] == 's') {
			if (*val == '\0')
				return die_usage("--socket needs a path");
			o->socket = val;
		} else if (a[2] == 'c') {
			o->config = val;
			o->config_given = true;
		} else if (parse_duration(val, &o->timeout_ms) != 0) {
			return die_usage(
				"--timeout is not a duration: '%s' (such as 30s or 2m)", val);
		}
	}
	o->argc = argc - i;
	o->argv = argv + i;
	return 0;
}

/*
 * The parser refused the command's words with err: says so, and when one of the words is an
 * option of flashgatectl itself (put after the command, as other tools allow), where it goes.
 * Returns the exit status of a usage error.
 */
static int
refuse_command(const struct ctl_opts *o, const char *err)
{
	static const char *const globals[] = {"--json", "--socket", "--config", "--timeout"};

	for (int i = 1; i < o->argc; i++) {
		for (size_t g = 0; g < sizeof(globals) / sizeof(globals[0]); g++) {
			size_t n = strlen(globals[g]);

			/* Only when the parser's message is about that word. */
			if (strncmp(o->argv[i], globals[g], n) != 0 ||
				(o->argv[i][n] != '\0' && o->argv[i][n] != '=') ||
				strstr(err, globals[g]) == NULL)
				continue;
			return die_usage(
				"%s: %s is an option of flashgatectl itself, given before "
				"the command: flashgatectl [--socket PATH] [--config FILE] "
				"[--json] [--timeout DURATION] %s ...",
				err, globals[g], o->argv[0]);
		}
	}
	return die_usage("%s", err);
}

/* ---------------------------------------------------------------------------------------- */
/* Offline session tokens                                                                    */

/*
 * session-token with --auth-key-file and --kid: mints with that key here, as the shop's login
 * service would. Returns an exit status; *handled is false when the options are not there.
 */
static int
offline_token(struct ctl_opts *o, bool *handled)
{
	char *words[ADMIN_WORDS_MAX + 8], line[ADMIN_LINE_MAX], err[ADMIN_ERR_MAX];
	const char *keyfile = NULL, *kidtext = NULL, *hex = NULL;
	uint8_t secret[TOK_SECRET_MAX];
	char tok[TOK_BUF_SIZE];
	struct tok_keyring ring;
	struct admin_req req;
	size_t secret_len = 0;
	uint64_t kid;
	int n = 0, rc;

	*handled = false;
	if (o->argc == 0 || strcmp(o->argv[0], "session-token") != 0)
		return 0;
	for (int i = 0; i < o->argc; i++) {
		const char *a = o->argv[i], **slot = NULL;
		size_t nlen = strcspn(a, "=");

		if (nlen == 15 && strncmp(a, "--auth-key-file", 15) == 0)
			slot = &keyfile;
		else if (nlen == 14 && strncmp(a, "--auth-key-hex", 14) == 0)
			slot = &hex;
		else if (nlen == 5 && strncmp(a, "--kid", 5) == 0)
			slot = &kidtext;
		if (slot == NULL) {
			if (n == ADMIN_WORDS_MAX + 7)
				return die_usage("session-token: too many arguments");
			words[n++] = o->argv[i];
			continue;
		}
		*handled = true;
		if (*slot != NULL)
			return die_usage("session-token: %.*s given twice", (int)nlen, a);
		if (a[nlen] == '=')
			*slot = a + nlen + 1;
		else if (i + 1 < o->argc)
			*slot = o->argv[++i];
		else
			return die_usage("session-token: %s needs a value", a);
	}
	if (!*handled)
		return 0;
	if (hex != NULL)
		return die_usage("session-token: --auth-key-hex is gone: a key on the command line "
				 "shows in ps and shell history; give it in a file of mode 0600 "
				 "(--auth-key-file PATH) or on standard input (--auth-key-file -)");
	if (keyfile == NULL || kidtext == NULL)
		return die_usage(
			"session-token: offline minting needs both --auth-key-file PATH and "
			"--kid N (or neither, to ask the control plane)");
	if (admin_join(n, words, line, sizeof(line), err, sizeof(err)) < 0 ||
		admin_parse(line, &req, err, sizeof(err)) != 0)
		return die_usage("%s", err);
	if (parse_u64(kidtext, 0, UINT32_MAX, &kid) != 0)
		return die_usage("session-token: --kid must be 0..4294967295, got %s", kidtext);
	if (secret_read_hex(keyfile, "session-token: --auth-key-file", secret, TOK_SECRET_MIN,
		    sizeof(secret), &secret_len, err, sizeof(err)) != 0)
		return die_usage("%s", err);
	tok_keyring_init(&ring);
	rc = tok_keyring_set(&ring, (uint32_t)kid, secret, secret_len, true);
	explicit_bzero(secret, sizeof(secret));
	if (rc == 0) {
		uint64_t expires = (uint64_t)time(NULL) + req.ttl_s;

		rc = tok_session_mint(&ring, req.user, expires, tok, sizeof(tok));
		tok_keyring_wipe(&ring);
		if (rc < 0)
			return die_usage("session-token: cannot mint: %s", strerror(-rc));
		if (o->json) {
			char buf[512];
			struct json_writer j;

			admin_json_ok(&j, buf, sizeof(buf));
			jw_str(&j, "token", tok);
			jw_u64(&j, "user", req.user);
			jw_u64(&j, "kid", kid);
			jw_time(&j, "expires_at", expires * 1000);
			if (admin_json_end(&j) > 0)
				fputs(buf, stdout);
		} else {
			printf("%s\n", tok);
		}
		return 0;
	}
	tok_keyring_wipe(&ring);
	return die_usage("session-token: cannot use that key: %s", strerror(-rc));
}

/* ---------------------------------------------------------------------------------------- */
/* keys auth-set: the key from standard input or a file                                      */

/*
 * "keys auth-set KID [- | --key-file PATH]": reads the key and writes the words of the admin
 * line "keys auth-set KID HEX" to words[0..3], the hex text in hex (cap bytes). A key given as
 * a word of the command line is refused: by then ps and the shell history have it. Returns 0,
 * or the exit status of a usage error. *handled is false for any other command.
 */
static int
auth_set_words(const struct ctl_opts *o, char **words, char *hex, size_t cap, bool *handled)
{
	static const char how[] = "give it on standard input (keys auth-set KID, or KID -; not "
				  "echoed on a terminal) or in a file of mode 0600 (keys auth-set "
				  "KID --key-file PATH)";
	const char *path = SECRET_STDIN, *what;
	uint8_t secret[ADMIN_SECRET_MAX];
	char err[ADMIN_ERR_MAX];
	uint64_t kid;
	size_t len;

	*handled = o->argc >= 2 && strcmp(o->argv[0], "keys") == 0 &&
		   strcmp(o->argv[1], "auth-set") == 0;
	if (!*handled)
		return 0;
	if (o->argc < 3)
		return die_usage(
			"keys auth-set: missing key id: keys auth-set KID, with the key on "
			"standard input or --key-file PATH");
	/* A wrong key id is said before the key is asked for, not after it was typed. */
	if (parse_u64(o->argv[2], 0, UINT32_MAX, &kid) != 0)
		return die_usage(
			"keys auth-set: key id must be 0..4294967295, got " ADMIN_SHOW, o->argv[2]);
	if (o->argc == 4 && strcmp(o->argv[3], SECRET_STDIN) == 0) {
		path = SECRET_STDIN;
	} else if (o->argc == 4 && strncmp(o->argv[3], "--key-file=", 11) == 0) {
		path = o->argv[3] + 11;
	} else if (o->argc == 5 && strcmp(o->argv[3], "--key-file") == 0) {
		path = o->argv[4];
	} else if (o->argc == 4 && strcmp(o->argv[3], "--key-file") == 0) {
		return die_usage("keys auth-set: --key-file needs a path");
	} else if (o->argc >= 4) {
		/* Never echo the word: it may well be the key. */
		return die_usage("keys auth-set: the key is not taken from the command line (ps, "
				 "/proc/PID/cmdline and the shell history would show it): %s",
			how);
	}
	what = strcmp(path, SECRET_STDIN) == 0 ? "keys auth-set: the key on standard input"
					       : "keys auth-set: --key-file";
	if (secret_read_hex(path, what, secret, ADMIN_SECRET_MIN, sizeof(secret), &len, err,
		    sizeof(err)) != 0)
		return die_usage("%s", err);
	if (2 * len + 1 > cap)
		len = (cap - 1) / 2; /* cannot happen: cap holds ADMIN_SECRET_MAX bytes */
	hex_str(secret, len, hex);
	explicit_bzero(secret, sizeof(secret));
	words[0] = o->argv[0];
	words[1] = o->argv[1];
	words[2] = o->argv[2];
	words[3] = hex;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The socket                                                                                */

/* What path is when it is there and not a socket ("that path is a directory, ..."), else NULL. */
static const char *
not_a_socket(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0 || S_ISSOCK(st.st_mode))
		return NULL;
	if (S_ISDIR(st.st_mode))
		return "that path is a directory, not a socket (the admin socket is a file in it, "
		       "such as admin.sock: [controlplane] admin_socket)";
	return "that path is not a socket (the admin socket is the path of [controlplane] "
	       "admin_socket)";
}

static int
connect_socket(const struct ctl_opts *o)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *why;
	int fd, e;

	if (strlen(o->socket) >= sizeof(sa.sun_path)) {
		die_usage("the socket path %s (from %s) is longer than %zu bytes", o->socket,
			o->socket_from, sizeof(sa.sun_path) - 1);
		return -1;
	}
	memcpy(sa.sun_path, o->socket, strlen(o->socket) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		die_usage("socket: %s", strerror(errno));
		return -1;
	}
	if (o->timeout_ms != 0) {
		struct timeval tv = {.tv_sec = (time_t)(o->timeout_ms / 1000),
			.tv_usec = (suseconds_t)(o->timeout_ms % 1000 * 1000)};

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	e = errno;
	close(fd);
	switch (e) {
	case ENOENT:
		why = "no such socket: is flashgate-controlplane running?";
		break;
	case ECONNREFUSED:
		/* Linux says this too of a path that is no socket at all. */
		why = not_a_socket(o->socket);
		if (why == NULL)
			why = "nothing listens there: the control plane is not running (it may "
			      "have left the socket file behind)";
		break;
	case EACCES:
	case EPERM:
		why = "permission denied: the socket is mode 0600, run as the control plane's user "
		      "or root";
		break;
	case ENOTSOCK:
	case ENOTDIR:
		why = "that path is not a socket";
		break;
	default:
		why = strerror(e);
		break;
	}
	die_usage("cannot reach the control plane at %s (from %s): %s", o->socket, o->socket_from,
		why);
	return -1;
}

static int
send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads one answer line into a new allocation (*len without the '\n'). NULL on failure. */
static char *
read_answer(int fd, const struct ctl_opts *o, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap), *nl = NULL;

	while (buf != NULL) {
		ssize_t r;

		if (n == cap) {
			char *bigger = cap < CTL_ANSWER_MAX ? realloc(buf, cap * 2) : NULL;

			if (bigger == NULL) {
				die_usage("the answer is larger than %u MiB", CTL_ANSWER_MAX >> 20);
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		r = recv(fd, buf + n, cap - n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			die_usage("no answer from the control plane at %s within %" PRIu64
				  " ms (--timeout sets how long to wait)",
				o->socket, o->timeout_ms);
			break;
		}
		if (r < 0) {
			die_usage("reading the answer from %s: %s", o->socket, strerror(errno));
			break;
		}
		if (r == 0) {
			if (n == 0) {
				die_usage(
					"the control plane at %s closed the connection without an "
					"answer",
					o->socket);
				break;
			}
			*len = n; /* an answer without its '\n' still counts */
			return buf;
		}
		nl = memchr(buf + n, '\n', (size_t)r);
		n += (size_t)r;
		if (nl != NULL) {
			*len = (size_t)(nl - buf);
			return buf;
		}
	}
	free(buf);
	return NULL;
}

/* top's request (top_ask_fn): one connection per line, as every command. */
static char *
ask_line(void *arg, const char *line, size_t *len)
{
	const struct ctl_opts *o = arg;
	int fd = connect_socket(o);
	char *answer = NULL;

	if (fd < 0)
		return NULL;
	if (send_all(fd, line, strlen(line)) == 0 && send_all(fd, "\n", 1) == 0)
		answer = read_answer(fd, o, len);
	close(fd);
	return answer;
}

int
main(int argc, char **argv)
{
	struct ctl_opts o = {0};
	char line[ADMIN_LINE_MAX + 1], err[ADMIN_ERR_MAX],
		from_config[sizeof(((struct sockaddr_un *)0)->sun_path) + 1],
		hex[2 * ADMIN_SECRET_MAX + 1], *words[4];
	struct admin_req req;
	bool handled;
	char *answer;
	size_t alen;
	int rc, fd, n;

	rc = parse_globals(argc, argv, &o);
	if (rc != 0)
		return rc;
	if (o.argc == 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (command_help(o.argc, o.argv))
		return 0;
	rc = offline_token(&o, &handled);
	if (handled || rc != 0)
		return rc;
	rc = curve_keygen_command(o.argc, o.argv, stdout, o.json, &handled);
	if (handled)
		return rc;
	rc = report_command(o.argc, o.argv, o.config, &handled);
	if (handled)
		return rc;
	if (strcmp(o.argv[0], "top") == 0) {
		rc = resolve_socket(&o, from_config, sizeof(from_config));
		return rc != 0 ? rc : top_command(o.argc, o.argv, ask_line, &o, &handled);
	}
	rc = auth_set_words(&o, words, hex, sizeof(hex), &handled);
	if (rc != 0)
		return rc;
	n = handled ? admin_join(4, words, line, sizeof(line) - 1, err, sizeof(err))
		    : admin_join(o.argc, o.argv, line, sizeof(line) - 1, err, sizeof(err));
	explicit_bzero(hex, sizeof(hex));
	if (n < 0)
		return die_usage("%s", err);
	/* The control plane would refuse the same way: no need to ask it. */
	if (admin_parse(line, &req, err, sizeof(err)) != 0)
		return refuse_command(&o, err);
	if (req.cmd == ADMIN_HELP) {
		usage(stdout);
		return 0;
	}
	explicit_bzero(req.secret, sizeof(req.secret));
	rc = resolve_socket(&o, from_config, sizeof(from_config));
	if (rc != 0)
		return rc;
	fd = connect_socket(&o);
	if (fd < 0)
		return EXIT_USAGE;
	line[n] = '\n';
	if (send_all(fd, line, (size_t)n + 1) != 0) {
		rc = die_usage("sending to the control plane at %s: %s", o.socket, strerror(errno));
		explicit_bzero(line, sizeof(line));
		close(fd);
		return rc;
	}
	explicit_bzero(line, sizeof(line));
	answer = read_answer(fd, &o, &alen);
	close(fd);
	if (answer == NULL)
		return EXIT_USAGE;
	rc = render_answer(answer, alen, o.json ? NULL : stdout, o.json ? NULL : stderr);
	if (rc < 0) {
		rc = die_usage("the control plane at %s answered something that is not a JSON "
			       "answer: %.80s",
			o.socket, answer);
	} else if (o.json) {
		fwrite(answer, 1, alen, stdout);
		fputc('\n', stdout);
	}
	free(answer);
	if (fflush(stdout) != 0)
		return EXIT_USAGE;
	return rc == 1 ? EXIT_REFUSED : rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flashgatectl: its renderer (flashgatectl/render, on flashgatectl/json_reader) prints answers for
 * people exactly; with the path of the program as argument, also the program itself against a
 * stand-in admin socket served here: what it sends, what it prints, its exit status, and offline
 * session tokens.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/token.h"
#include "admin/admin_proto.h"
#include "flashgatectl/render.h"
#include "tests/guard.h"
#include "tests/lib/vis.h"
#include "tests/tap.h"

/* Renders answer (placed before a guard page, without a NUL) into out and errout. */
static int
render(const char *answer, char *out, size_t outlen, char *errout, size_t errlen)
{
	struct guard_buf g = {0};
	const char *p = guard_place(&g, answer, strlen(answer));
	FILE *o, *e;
	int rc;

	/* fmemopen() does not empty the buffer: a stream nothing is written to must read "". */
	out[0] = errout[0] = '\0';
	o = fmemopen(out, outlen, "w");
	e = fmemopen(errout, errlen, "w");

	rc = render_answer(p, strlen(answer), o, e);
	fclose(o);
	fclose(e);
	guard_free(&g);
	return rc;
}

static void
test_render(void)
{
	char out[2048], eo[512];
	int rc;

	rc = render("{\"ok\":true,\"message\":\"event 7 preheated\",\"event\":{\"id\":7,"
		    "\"name\":\"Big sale\",\"sold_out\":false,\"limits\":{\"rate\":2}},"
		    "\"available\":998}",
		out, sizeof(out), eo, sizeof(eo));
	tap_ok(rc == 0 &&
			strcmp(out, "event 7 preheated\n"
				    "event:\n"
				    "  id:       7\n"
				    "  name:     Big sale\n"
				    "  sold_out: no\n"
				    "  limits:\n"
				    "    rate: 2\n"
				    "available: 998\n") == 0 &&
			eo[0] == '\0',
		"an object answer is rendered as aligned lines: %s", vis(out));
	rc = render("{\"ok\":true,\"events\":[{\"id\":7,\"name\":\"耳机 sale\",\"state\":\"open\"},"
		    "{\"id\":12,\"name\":\"B\",\"state\":\"draft\",\"extra\":1},{\"id\":3}],"
		    "\"rules\":[],\"tags\":[\"a\",1,null]}",
		out, sizeof(out), eo, sizeof(eo));
	tap_ok(rc == 0 && strcmp(out, "events:\n"
				      "  ID  NAME     STATE\n"
				      "  7   耳机 sale  open\n"
				      "  12  B        draft\n"
				      "  3   -        -\n"
				      "rules: (none)\n"
				      "tags:   a, 1, -\n") == 0,
		"lists of objects are tables (columns by code points), empty lists (none): %s",
		vis(out));
	rc = render("{\"ok\":false,\"error\":\"event 7 is already open\"}", out, sizeof(out), eo,
		sizeof(eo));
	tap_ok(rc == 1 && out[0] == '\0' && strcmp(eo, "error: event 7 is already open\n") == 0,
		"a refusal is 1 with its message on the error stream: %s", vis(eo));
	rc = render("{\"error\":\"x\",\"ok\":false}", out, sizeof(out), eo, sizeof(eo));
	tap_ok(rc == 1 && strcmp(eo, "error: x\n") == 0, "members in any order");
	rc = render("{\"ok\":true,\"name\":\"evil\\u001b[2J\\u0007\\ud83d\\ude00\"}", out,
		sizeof(out), eo, sizeof(eo));
	tap_ok(rc == 0 && strcmp(out, "name: evil?[2J?\xf0\x9f\x98\x80\n") == 0,
		"control characters are shown as '?', escapes decoded: %s", vis(out));

	static const char *const bad[] = {
		"",
		"not json",
		"[1,2]",
		"{\"ok\":\"yes\"}",
		"{\"message\":\"no ok\"}",
		"{\"ok\":true",
		"{\"ok\":true} trailing",
		"{\"ok\":true,\"a\":01}",
		"{\"ok\":true,\"a\":1.}",
		"{\"ok\":true,\"a\":\"\\x\"}",
		"{\"ok\":true,\"a\":\"\\ud800\"}",
		"{\"ok\":true,\"a\":\"unterminated}",
		"{\"ok\":true,\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}",
		"{\"ok\":true,,\"a\":1}",
		"{\"ok\":tru}",
		"{\"ok\":true,\"a\":\"tab\there\"}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = render(bad[i], out, sizeof(out), eo, sizeof(eo));
		tap_ok(rc == -EINVAL && out[0] == '\0' && eo[0] == '\0',
			"not an answer, nothing printed: %s", vis(bad[i]));
	}
	rc = render("{ \"ok\" : true , \"n\" : -1.5e+3 }\n", out, sizeof(out), eo, sizeof(eo));
	tap_ok(rc == 0 && strcmp(out, "n: -1.5e+3\n") == 0, "white space and numbers: %s",
		vis(out));
}

/* ---------------------------------------------------------------------------------------- */
/* flashgatectl against a stand-in admin socket                                              */

struct fake {
	int lfd;
	char answer[512]; /* what to answer; "" closes without an answer */
	char got[ADMIN_LINE_MAX + 2];
	char cmdline[1024]; /* the client's /proc/PID/cmdline while connected, NULs as spaces */
	bool connected;
};

/* What ps shows of the process at the other end of fd, while it waits for its answer. */
static void
peer_cmdline(int fd, char *out, size_t cap)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char path[64];
	FILE *f;
	size_t n = 0;

	out[0] = '\0';
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)cr.pid);
	if ((f = fopen(path, "r")) != NULL) {
		n = fread(out, 1, cap - 1, f);
		fclose(f);
	}
	for (size_t i = 0; i < n; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	out[n] = '\0';
}

static void *
fake_serve(void *arg)
{
	struct fake *f = arg;
	struct pollfd p = {.fd = f->lfd, .events = POLLIN};
	size_t n = 0;
	int fd;

	f->connected = false;
	f->got[0] = '\0';
	f->cmdline[0] = '\0';
	if (poll(&p, 1, 5000) != 1)
		return NULL;
	fd = accept(f->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	f->connected = true;
	peer_cmdline(fd, f->cmdline, sizeof(f->cmdline));
	while (n < sizeof(f->got) - 1) {
		ssize_t r = read(fd, f->got + n, sizeof(f->got) - 1 - n);

		if (r <= 0)
			break;
		n += (size_t)r;
		f->got[n] = '\0';
		if (memchr(f->got, '\n', n) != NULL)
			break;
	}
	if (f->answer[0] != '\0' && write(fd, f->answer, strlen(f->answer)) < 0)
		tap_diag("fake server: write: %s", strerror(errno));
	close(fd);
	return NULL;
}

struct run {
	int status;
	char out[4096];
	char err[1024];
};

static void
slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f != NULL ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = '\0';
	if (f != NULL)
		fclose(f);
}

/* What the next run_ctl() gives flashgatectl on standard input (NULL: /dev/null); used once. */
static const char *ctl_stdin;

/* Runs flashgatectl with argv (NULL-terminated) and env (NULL: unchanged), serving f. */
static void
run_ctl(const char *exe, struct fake *f, char *const *args, const char *env_socket, struct run *r)
{
	char inp[] = "/tmp/fg-ctl-in-XXXXXX";
	int ifd = mkstemp(inp);

	char *argv[40];
	char outp[] = "/tmp/fg-ctl-out-XXXXXX", errp[] = "/tmp/fg-ctl-err-XXXXXX";
	int ofd = mkstemp(outp), efd = mkstemp(errp), n = 0;
	pthread_t th;
	pid_t pid;

	argv[n++] = (char *)exe;
	for (; *args != NULL && n < 39; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	if (ctl_stdin != NULL && write(ifd, ctl_stdin, strlen(ctl_stdin)) < 0)
		tap_diag("stdin file: %s", strerror(errno));
	ctl_stdin = NULL;
	lseek(ifd, 0, SEEK_SET);
	pthread_create(&th, NULL, fake_serve, f);
	pid = fork();
	if (pid == 0) {
		dup2(ifd, STDIN_FILENO);
		dup2(ofd, STDOUT_FILENO);
		dup2(efd, STDERR_FILENO);
		if (env_socket != NULL)
			setenv("FLASHGATE_SOCKET", env_socket, 1);
		else
			unsetenv("FLASHGATE_SOCKET");
		execv(exe, argv);
		_exit(99);
	}
	waitpid(pid, &r->status, 0);
	r->status = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 128;
	/* A run that never connects leaves the server waiting: wake it with a connection. */
	if (!f->connected) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		socklen_t sl = sizeof(sa);
		int c = socket(AF_UNIX, SOCK_STREAM, 0);

		char keep = f->answer[0];

		getsockname(f->lfd, (struct sockaddr *)&sa, &sl);
		f->answer[0] = '\0';
		connect(c, (struct sockaddr *)&sa, sizeof(sa));
		shutdown(c, SHUT_WR);
		pthread_join(th, NULL);
		f->answer[0] = keep;
		close(c);
		f->connected = false;
		f->got[0] = '\0';
	} else {
		pthread_join(th, NULL);
	}
	slurp(outp, r->out, sizeof(r->out));
	slurp(errp, r->err, sizeof(r->err));
	close(ofd);
	close(efd);
	close(ifd);
	unlink(outp);
	unlink(errp);
	unlink(inp);
}

#define ARGS(...) ((char *const[]){__VA_ARGS__, NULL})

/* Writes text to path with mode. */
static void
write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, text, strlen(text)) < 0 || fchmod(fd, mode) != 0)
		tap_diag("%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

#define KEY16 "000102030405060708090a0b0c0d0e0f"

/* keys auth-set typed on a terminal: a prompt, and the key is not echoed. */
static void
test_no_echo(const char *exe, struct fake *f, char *sock)
{
	char seen[2048];
	size_t n = 0;
	int master, slave, status = -1;
	pthread_t th;
	pid_t pid;

	if (openpty(&master, &slave, NULL, NULL, NULL) != 0) {
		tap_ok(0, "a pseudo-terminal for the typed key: %s", strerror(errno));
		return;
	}
	pthread_create(&th, NULL, fake_serve, f);
	pid = fork();
	if (pid == 0) {
		setsid();
		dup2(slave, STDIN_FILENO);
		dup2(slave, STDOUT_FILENO);
		dup2(slave, STDERR_FILENO);
		close(master);
		execl(exe, exe, "--socket", sock, "keys", "auth-set", "8", (char *)NULL);
		_exit(99);
	}
	close(slave);
	seen[0] = '\0';
	/* Read what the terminal shows; type the key once the prompt is there. */
	for (bool typed = false;;) {
		struct pollfd p = {.fd = master, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, 5000) != 1)
			break;
		r = read(master, seen + n, sizeof(seen) - 1 - n);
		if (r <= 0)
			break; /* EIO: the program exited and closed the terminal */
		n += (size_t)r;
		seen[n] = '\0';
		if (!typed && strstr(seen, "not shown): ") != NULL) {
			typed = write(master, KEY16 "\n", sizeof(KEY16)) == (ssize_t)sizeof(KEY16);
		}
		if (n == sizeof(seen) - 1)
			break;
	}
	waitpid(pid, &status, 0);
	pthread_join(th, NULL);
	close(master);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
			strcmp(f->got, "keys auth-set 8 " KEY16 "\n") == 0,
		"keys auth-set KID on a terminal reads the typed key: %s", vis(f->got));
	tap_ok(strstr(seen, "(hex, not shown)") != NULL && strstr(seen, KEY16) == NULL,
		"and the terminal shows a prompt but not the key: %s", vis(seen));
}

/* keys auth-set: the key from standard input or a 0600 file, never from argv. */
static void
test_auth_set(const char *exe, struct fake *f, char *sock, const char *dir)
{
	char kf[128], open_kf[128];
	struct run r;

	snprintf(kf, sizeof(kf), "%s/auth.key", dir);
	snprintf(open_kf, sizeof(open_kf), "%s/auth-open.key", dir);
	write_file(kf, KEY16 "\n", 0600);
	write_file(open_kf, KEY16 "\n", 0644);
	snprintf(f->answer, sizeof(f->answer), "{\"ok\":true}\n");

	run_ctl(exe, f, ARGS("--socket", sock, "keys", "auth-set", "5", KEY16), NULL, &r);
	tap_ok(r.status == 2 && !f->connected && strstr(r.err, "not taken from the command line") &&
			strstr(r.err, "--key-file PATH") && strstr(r.err, KEY16) == NULL,
		"keys auth-set KID HEX is refused, sends nothing, says how to pass the key and "
		"does "
		"not repeat it: %s",
		vis(r.err));

	ctl_stdin = " " KEY16 "\n";
	run_ctl(exe, f, ARGS("--socket", sock, "keys", "auth-set", "5"), NULL, &r);
	tap_ok(r.status == 0 && strcmp(f->got, "keys auth-set 5 " KEY16 "\n") == 0,
		"keys auth-set KID reads the key from standard input: %s", vis(f->got));
	tap_ok(f->cmdline[0] != '\0' && strstr(f->cmdline, "auth-set 5") != NULL &&
			strstr(f->cmdline, KEY16) == NULL,
		"while it talks to the control plane, its command line has no key: %s",
		vis(f->cmdline));

	ctl_stdin = "000102030405060708090A0B0C0D0E0F101112131415161718191a1b1c1d1e1f";
	run_ctl(exe, f, ARGS("--socket", sock, "keys", "auth-set", "6", "-"), NULL, &r);
	tap_ok(r.status == 0 &&
			strcmp(f->got,
				"keys auth-set 6 000102030405060708090a0b0c0d0e0f101112131415"
				"161718191a1b1c1d1e1f\n") == 0,
		"keys auth-set KID - reads it too (a 32-byte key, no line end): %s", vis(f->got));

	run_ctl(exe, f, ARGS("--socket", sock, "keys", "auth-set", "7", "--key-file", kf), NULL,
		&r);
	tap_ok(r.status == 0 && strcmp(f->got, "keys auth-set 7 " KEY16 "\n") == 0 &&
			strstr(f->cmdline, KEY16) == NULL,
		"keys auth-set KID --key-file reads a 0600 file; the key is not on its command "
		"line: %s",
		vis(f->got));

	run_ctl(exe, f, ARGS("--socket", sock, "keys", "auth-set", "7", "--key-file", open_kf),
		NULL, &r);
	tap_ok(r.status == 2 && !f->connected && strstr(r.err, "chmod 600") != NULL &&
			strstr(r.err, "0644") != NULL,
		"a 0644 key file is refused with chmod 600, nothing sent: %s", vis(r.err));

	ctl_stdin = "00010203\n";
	run_ctl(exe, f, ARGS("--socket", sock, "keys", "auth-set", "7"), NULL, &r);
	tap_ok(r.status == 2 && !f->connected && strstr(r.err, "16..64 bytes") != NULL,
		"a short key on standard input is refused: %s", vis(r.err));
	run_ctl(exe, f, ARGS("--socket", sock, "keys", "auth-set", "7"), NULL, &r);
	tap_ok(r.status == 2 && !f->connected && strstr(r.err, "is empty") != NULL,
		"no key on standard input is refused: %s", vis(r.err));
	run_ctl(exe, f, ARGS("--socket", sock, "keys", "auth-set", "-1"), NULL, &r);
	tap_ok(r.status == 2 && !f->connected &&
			strcmp(r.err, "flashgatectl: keys auth-set: key id must be 0..4294967295, "
				      "got -1\n") == 0,
		"a wrong key id is refused before the key is read: %s", vis(r.err));
	ctl_stdin = KEY16 "zz\n";
	run_ctl(exe, f, ARGS("--socket", sock, "keys", "auth-set", "7"), NULL, &r);
	tap_ok(r.status == 2 && !f->connected && strstr(r.err, "character 33") != NULL &&
			strstr(r.err, KEY16) == NULL,
		"a key that is not hex is refused without quoting it: %s", vis(r.err));

	/* Offline session tokens: the same rule for --auth-key-file. */
	run_ctl(exe, f, ARGS("session-token", "42", "--auth-key-hex", KEY16, "--kid", "9"), NULL,
		&r);
	tap_ok(r.status == 2 && strstr(r.err, "--auth-key-hex is gone") != NULL &&
			strstr(r.err, "--auth-key-file") != NULL && r.out[0] == '\0',
		"session-token --auth-key-hex is refused: %s", vis(r.err));
	run_ctl(exe, f, ARGS("session-token", "42", "--auth-key-file", open_kf, "--kid", "9"), NULL,
		&r);
	tap_ok(r.status == 2 && strstr(r.err, "chmod 600") != NULL && r.out[0] == '\0',
		"session-token refuses a 0644 --auth-key-file: %s", vis(r.err));
	unlink(kf);
	unlink(open_kf);
	test_no_echo(exe, f, sock);
}

/*
 * The commands flashgatectl runs itself (top, report, curve keygen) say which argument is wrong
 * and what it takes (--name VALUE or --name=VALUE), and send nothing.
 */
static void
test_own_commands(const char *exe, struct fake *f, char *sock)
{
	static const struct {
		char *args[8];
		const char *said;
	} bad[] = {
		{{"top", "--count", "0"}, "top: --count must be 1..1000000 frames, got \"0\""},
		{{"top", "--count=-1"}, "top: --count must be 1..1000000 frames, got \"-1\""},
		{{"top", "--count"}, "top: --count needs a value"},
		{{"top", "--count", "1", "--count", "2"}, "top: --count given twice"},
		{{"top", "0"}, "top: EVENT_ID must be 1..4294967295, got \"0\""},
		{{"top", "7", "8"}, "top: unexpected \"8\" after EVENT_ID 7"},
		{{"top", "--cuont", "1"}, "top: unknown option \"--cuont\""},
		{{"report"}, "report: missing EVENT_ID"},
		{{"report", "7", "--out"}, "report: --out needs a value"},
		{{"report", "7", "--out="}, "report: --out needs a value, got an empty one"},
		{{"report", "7", "--out", "a", "--out", "b"}, "report: --out given twice"},
		{{"curve", "keygen", "dp1", "--dir"}, "curve keygen: --dir needs a value"},
		{{"curve", "keygen", "dp1", "--dir", "--role", "dataplane"},
			"curve keygen: --dir needs a value"},
		{{"curve", "keygen", "dp1", "dp2"},
			"curve keygen: unexpected \"dp2\" after NAME dp1"},
	};
	struct run r;

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char *argv[12] = {"--socket", sock};
		char want[160];
		int n = 2;

		for (int a = 0; bad[k].args[a] != NULL; a++)
			argv[n++] = bad[k].args[a];
		snprintf(want, sizeof(want), "flashgatectl: %s", bad[k].said);
		run_ctl(exe, f, argv, NULL, &r);
		tap_ok(r.status == 2 && !f->connected && strncmp(r.err, want, strlen(want)) == 0 &&
				strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
			"%s: exit 2, one line: %s", bad[k].args[0], vis(r.err));
	}
}

static void
test_flashgatectl(const char *exe)
{
	char dir[] = "/tmp/fg-ctl-XXXXXX", sock[64], conf[160], missing[64];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct fake f = {0};
	struct run r;
	FILE *cf;

	if (!tap_ok(mkdtemp(dir) != NULL, "a temporary directory for the stand-in admin socket"))
		return;
	snprintf(sock, sizeof(sock), "%s/admin.sock", dir);
	snprintf(missing, sizeof(missing), "%s/none.sock", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	f.lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (!tap_ok(bind(f.lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(f.lfd, 4) == 0,
		    "stand-in admin socket listening"))
		return;

	snprintf(f.answer, sizeof(f.answer),
		"{\"ok\":true,\"message\":\"event 7 created\",\"event\":{\"id\":7,\"name\":\"Big "
		"sale\",\"state\":\"draft\"}}\n");
	run_ctl(exe, &f,
		ARGS("--socket", sock, "event", "create", "7", "--name", "Big sale", "--stock",
			"10", "--starts-at", "2026-12-01T10:00:00Z", "--ends-at",
			"2026-12-01T11:00:00Z", "--pay-window", "15m"),
		NULL, &r);
	tap_ok(r.status == 0, "flashgatectl: an accepted command exits 0 (got %d; %s)", r.status,
		r.err);
	tap_ok(strcmp(f.got, "event create 7 --name \"Big sale\" --stock 10 --starts-at "
			     "2026-12-01T10:00:00Z --ends-at 2026-12-01T11:00:00Z --pay-window "
			     "15m\n") == 0,
		"it sends one line, quoting the name: %s", vis(f.got));
	tap_ok(strcmp(r.out, "event 7 created\nevent:\n  id:    7\n  name:  Big sale\n  state: "
			     "draft\n") == 0,
		"and prints the answer for people: %s", vis(r.out));

	run_ctl(exe, &f, ARGS("--json", "--socket", sock, "event", "show", "7"), NULL, &r);
	tap_ok(r.status == 0 && strcmp(r.out, f.answer) == 0,
		"--json prints the answer as it came: %s", vis(r.out));

	snprintf(f.answer, sizeof(f.answer),
		"{\"ok\":false,\"error\":\"event 7 is already open\"}\n");
	run_ctl(exe, &f, ARGS("--socket=", "x"), NULL, &r);
	tap_ok(r.status == 2 && strstr(r.err, "--socket needs a path") != NULL,
		"--socket= with no path is a usage error: %s", vis(r.err));
	run_ctl(exe, &f, ARGS("event", "open", "7"), sock, &r);
	tap_ok(r.status == 1 && strcmp(r.err, "error: event 7 is already open\n") == 0 &&
			r.out[0] == '\0',
		"a refused command exits 1 with the control plane's message (socket from "
		"$FLASHGATE_SOCKET): %s",
		vis(r.err));
	run_ctl(exe, &f, ARGS("--json", "--socket", sock, "event", "open", "7"), NULL, &r);
	tap_ok(r.status == 1 && strcmp(r.out, f.answer) == 0,
		"--json: a refusal still exits 1 and prints the JSON");

	run_ctl(exe, &f, ARGS("--socket", sock, "limits", "set", "ip", "20"), NULL, &r);
	tap_ok(r.status == 2 && !f.connected &&
			strcmp(r.err, "flashgatectl: limits set: ip: expected RATE/BURST such as "
				      "20/40, got 20\n") == 0,
		"a bad command exits 2 with the parser's message and sends nothing: %s",
		vis(r.err));
	run_ctl(exe, &f, ARGS("--socket", sock, "event", "show", "7", "--json"), NULL, &r);
	tap_ok(r.status == 2 && !f.connected &&
			strstr(r.err,
				"event show: unexpected argument '--json': --json is an option "
				"of flashgatectl itself, given before the command") != NULL,
		"--json after the command: exit 2, saying it goes before the command: %s",
		vis(r.err));
	run_ctl(exe, &f, ARGS("--socket", sock, "launch"), NULL, &r);
	tap_ok(r.status == 2 && !f.connected && strstr(r.err, "unknown command 'launch'") != NULL,
		"an unknown command exits 2: %s", vis(r.err));
	run_ctl(exe, &f, ARGS("--colour", "stats"), NULL, &r);
	tap_ok(r.status == 2 && strstr(r.err, "unknown option '--colour'") != NULL,
		"an unknown global option exits 2: %s", vis(r.err));
	run_ctl(exe, &f, ARGS("--timeout", "soon", "stats"), NULL, &r);
	tap_ok(r.status == 2 && strstr(r.err, "--timeout is not a duration") != NULL,
		"a bad --timeout exits 2: %s", vis(r.err));

	run_ctl(exe, &f, ARGS("--socket", missing, "stats"), NULL, &r);
	tap_ok(r.status == 2 && strstr(r.err, missing) != NULL &&
			strstr(r.err, "is flashgate-controlplane running?") != NULL,
		"no socket: exits 2 naming the path and asking whether the control plane runs: %s",
		vis(r.err));
	run_ctl(exe, &f, ARGS("--socket", dir, "stats"), NULL, &r);
	tap_ok(r.status == 2 && strstr(r.err, "that path is a directory, not a socket") != NULL,
		"--socket DIRECTORY: exit 2, saying it is a directory: %s", vis(r.err));
	snprintf(conf, sizeof(conf), "%s/flashgate.conf", dir);
	cf = fopen(conf, "w");
	fprintf(cf, "[dataplane]\naddress = 198.18.0.2\n\n[controlplane]\nadmin_socket = \"%s\"\n",
		missing);
	fclose(cf);
	run_ctl(exe, &f, ARGS("--config", conf, "stats"), NULL, &r);
	tap_ok(r.status == 2 && strstr(r.err, missing) != NULL &&
			strstr(r.err, "admin_socket in") != NULL,
		"the socket path comes from [controlplane] admin_socket of --config: %s",
		vis(r.err));
	run_ctl(exe, &f, ARGS("--config", conf, "stats"), sock, &r);
	tap_ok(r.status == 1 && f.connected, "$FLASHGATE_SOCKET comes before the config file");
	run_ctl(exe, &f, ARGS("--config", missing, "stats"), NULL, &r);
	tap_ok(r.status == 2 && strstr(r.err, "cannot read the config file") != NULL,
		"an unreadable --config exits 2: %s", vis(r.err));

	snprintf(f.answer, sizeof(f.answer), "HTTP/1.1 400 Bad Request\r\n\r\n");
	run_ctl(exe, &f, ARGS("--socket", sock, "stats"), NULL, &r);
	tap_ok(r.status == 2 && strstr(r.err, "not a JSON answer") != NULL,
		"an answer that is not JSON exits 2: %s", vis(r.err));
	f.answer[0] = '\0';
	run_ctl(exe, &f, ARGS("--socket", sock, "stats"), NULL, &r);
	tap_ok(r.status == 2 && strstr(r.err, "closed the connection without an answer") != NULL,
		"a connection closed without an answer exits 2: %s", vis(r.err));
	snprintf(f.answer, sizeof(f.answer), "{\"ok\":true,\"keys\":[]}");
	run_ctl(exe, &f, ARGS("--socket", sock, "keys", "list"), NULL, &r);
	tap_ok(r.status == 0 && strcmp(r.out, "keys: (none)\n") == 0,
		"an answer ended by closing instead of a newline still counts: %s", vis(r.out));
	test_auth_set(exe, &f, sock, dir);
	test_own_commands(exe, &f, sock);

	run_ctl(exe, &f, ARGS("help"), NULL, &r);
	tap_ok(r.status == 0 && !f.connected && strstr(r.out, "event create ID") != NULL &&
			strstr(r.out, "reconcile EVENT_ID [--repair [--force]]") != NULL,
		"help lists the commands without a control plane");
	run_ctl(exe, &f, ARGS("--json"), NULL, &r);
	tap_ok(r.status == 2 && strstr(r.err, "usage:") != NULL, "no command: usage, exit 2");
	run_ctl(exe, &f, ARGS("--socket", sock, "event", "create", "--help"), NULL, &r);
	tap_ok(r.status == 0 && !f.connected &&
			strncmp(r.out, "event create ID --name NAME", 27) == 0 &&
			strstr(r.out, "event open") == NULL && strstr(r.out, "\nTIME: ") != NULL &&
			r.err[0] == '\0',
		"COMMAND --help: that command's help and what TIME is, exit 0, nothing sent: %s",
		vis(r.out));
	run_ctl(exe, &f, ARGS("top", "-h"), NULL, &r);
	tap_ok(r.status == 0 && strncmp(r.out, "top [EVENT_ID] [--count N]", 26) == 0 &&
			strchr(r.out, '\n') == r.out + strlen(r.out) - 1,
		"top -h: its one line: %s", vis(r.out));

	/* Offline session tokens verify with the same key (here from standard input). */
	ctl_stdin = KEY16 "\n";
	run_ctl(exe, &f,
		ARGS("session-token", "42", "--ttl", "2h", "--auth-key-file", "-", "--kid", "9"),
		NULL, &r);
	{
		struct tok_keyring ring;
		struct tok_session ts = {0};
		uint8_t key[16];
		size_t len = strcspn(r.out, "\n");
		uint64_t now = (uint64_t)time(NULL);
		enum tok_status st;

		for (int i = 0; i < 16; i++)
			key[i] = (uint8_t)i;
		tok_keyring_init(&ring);
		tok_keyring_set(&ring, 9, key, sizeof(key), true);
		st = tok_session_verify(&ring, r.out, len, now, &ts);
		tap_ok(r.status == 0 && !f.connected && st == TOK_OK && ts.user == 42 &&
				ts.kid == 9 && ts.expires_s >= now + 7200 - 5 &&
				ts.expires_s <= now + 7200 + 5,
			"an offline session token verifies: user 42, key 9, valid 2h (%s)",
			vis(r.out));
		st = tok_session_verify(&ring, r.out, len, now + 7201, &ts);
		tap_ok(st == TOK_EXPIRED, "and expires after its ttl");
	}
	run_ctl(exe, &f, ARGS("session-token", "42", "--kid", "9"), NULL, &r);
	tap_ok(r.status == 2 &&
			strstr(r.err, "needs both --auth-key-file PATH and --kid N") != NULL,
		"offline minting needs both options: %s", vis(r.err));
	ctl_stdin = "0001\n";
	run_ctl(exe, &f, ARGS("session-token", "42", "--auth-key-file", "-", "--kid", "9"), NULL,
		&r);
	tap_ok(r.status == 2 && strstr(r.err, "must be 16..64 bytes") != NULL,
		"a short offline key is refused: %s", vis(r.err));
	ctl_stdin = KEY16 "\n";
	run_ctl(exe, &f, ARGS("session-token", "0", "--auth-key-file", "-", "--kid", "9"), NULL,
		&r);
	tap_ok(r.status == 2 && strstr(r.err, "user id must be 1..") != NULL,
		"offline minting checks the user like the control plane: %s", vis(r.err));

	close(f.lfd);
	unlink(sock);
	unlink(conf);
	rmdir(dir);
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_render();
	if (argc > 1)
		test_flashgatectl(argv[1]);
	else
		tap_diag("no flashgatectl path given: its tests are skipped");
	return tap_done();
}

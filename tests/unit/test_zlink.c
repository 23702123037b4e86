/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The links' security rules without a network: which endpoints are on this host
 * (common/zlink.h), loading CURVE keys and refusing plaintext off the host, and the control
 * plane's allow-list file (controlplane/cp_zap.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zmq.h>

#include "common/zlink.h"
#include "controlplane/cp_zap.h"
#include "tests/tap.h"

static char dir[] = "/tmp/fg-test-zlink.XXXXXX";

/* Writes text to dir/name with mode; returns the path (static buffer, one at a time). */
static const char *
put(const char *name, const char *text, mode_t mode)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	f = fopen(path, "w");
	if (f == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
	return path;
}

static void
test_loopback(void)
{
	static const struct {
		const char *ep;
		bool local;
	} cases[] = {
		{"tcp://127.0.0.1:5601", true},
		{"tcp://127.1.2.3:1", true},
		{"tcp://[::1]:5601", true},
		{"ipc:///run/flashgate/pull", true},
		{"inproc://x", true},
		{"tcp://198.18.0.9;127.0.0.1:5601", true}, /* source;destination */
		{"tcp://0.0.0.0:5601", false},
		{"tcp://*:5601", false},
		{"tcp://localhost:5601", false}, /* a name is not taken on trust */
		{"tcp://eth0:5601", false},
		{"tcp://10.0.0.1:5601", false},
		{"tcp://128.0.0.1:5601", false},
		{"tcp://127.0.0.1;10.0.0.1:5601", false},
		{"tcp://[::ffff:127.0.0.1]:5601", false},
		{"tcp://[2001:db8::1]:5601", false},
		{"pgm://127.0.0.1;239.0.0.1:5601", false},
		{"tcp://127.0.0.1", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tap_ok(zlink_endpoint_is_loopback(cases[i].ep) == cases[i].local, "%s is %s",
			cases[i].ep, cases[i].local ? "on this host" : "not on this host");
}

/* Reads dir/name's first line into out (cap bytes). */
static void
first_line(const char *name, char *out, size_t cap)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out[0] = '\0';
	f = fopen(path, "r");
	if (f != NULL && fgets(out, (int)cap, f) != NULL)
		out[strcspn(out, "\n")] = '\0';
	if (f != NULL)
		fclose(f);
}

/* Without key files: the local key directory, made at first start (issue 25 item 5). */
static void
test_local_keys(struct zlink_settings *s, const char **loop, const char **off)
{
	char path[512], pub[64], again[64], text[512], err[1024];
	struct zlink_keys k, o, c;
	struct stat st;
	int rc;

	snprintf(s->key_dir, sizeof(s->key_dir), "%s/state/links", dir);
	rc = zlink_keys_load(s, false, "bridge", loop, 2, &k, err, sizeof(err));
	first_line("state/links/controlplane.pub", pub, sizeof(pub));
	tap_ok(rc == 0 && k.curve && strcmp(k.server_key, pub) == 0,
		"no key files, loopback: CURVE with the local keys, never plaintext: %s",
		rc ? err : "ok");
	tap_ok(stat(s->key_dir, &st) == 0 && (st.st_mode & 0777) == 0700,
		"the key directory is made mode 0700 (0%o)", (unsigned)(st.st_mode & 0777));
	snprintf(path, sizeof(path), "%s/dataplane.key", s->key_dir);
	tap_ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600,
		"a secret key file of mode 0600 (0%o)", (unsigned)(st.st_mode & 0777));
	first_line("state/links/dataplane.pub", again, sizeof(again));
	tap_ok(strcmp(again, k.public_key) == 0, "the data plane's pair is dataplane.key/.pub");
	rc = zlink_keys_load(s, false, "bridge", off, 2, &o, err, sizeof(err));
	tap_ok(rc == 0 && o.curve && strcmp(o.public_key, k.public_key) == 0 &&
			strcmp(o.secret_key, k.secret_key) == 0,
		"off the host too, and a second start finds the same keys: %s", rc ? err : "ok");
	rc = zlink_keys_load(s, false, "order_writer", loop, 1, &o, err, sizeof(err));
	tap_ok(rc == 0 && o.curve && strcmp(o.public_key, k.public_key) != 0 &&
			strcmp(o.server_key, pub) == 0,
		"[order_writer] has a pair of its own: %s", rc ? err : "ok");
	rc = zlink_keys_load(s, true, "controlplane", loop, 2, &c, err, sizeof(err));
	first_line("state/links/clients", text, sizeof(text));
	snprintf(path, sizeof(path), "%s/%s", s->key_dir, ZLINK_LOCAL_CLIENTS);
	tap_ok(rc == 0 && c.curve && strcmp(c.public_key, pub) == 0 &&
			strcmp(c.clients_file, path) == 0,
		"the control plane: its pair and the directory's allow-list: %s", rc ? err : "ok");
	struct cp_zap_client *cl = NULL;
	unsigned n = 0;

	rc = cp_zap_load_clients(c.clients_file, &cl, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 2 && cl[0].role == CP_ZAP_DATAPLANE &&
			cl[1].role == CP_ZAP_ORDER_WRITER,
		"which lists the local data plane's and order writer's keys: %s", rc ? err : "ok");
	free(cl);
	zlink_keys_wipe(&k);
	zlink_keys_wipe(&o);
	zlink_keys_wipe(&c);

	chmod(s->key_dir, 0755);
	rc = zlink_keys_load(s, false, "bridge", loop, 2, &k, err, sizeof(err));
	tap_ok(rc == -EPERM && strstr(err, "chmod 700") != NULL &&
			strstr(err, "insecure_plaintext_links = yes") != NULL &&
			strstr(err, "[bridge]") != NULL && !k.curve,
		"a key directory others can enter: refused, naming the opt-out: %s", err);
	chmod(s->key_dir, 0700);

	/* The packaged data plane runs as root beside daemons run as the user flashgate: root uses
	 * their directory, and what it writes there stays theirs. */
	if (geteuid() == 0) {
		struct zlink_settings r = *s;
		struct stat ls;
		char state[ZLINK_PATH_MAX - 8];

		snprintf(state, sizeof(state), "%s/daemons", dir);
		snprintf(r.key_dir, sizeof(r.key_dir), "%s/links", state);
		rc = mkdir(state, 0755) == 0 && chown(state, 65534, 65534) == 0 ? 0 : -errno;
		if (rc == 0)
			rc = zlink_keys_load(&r, false, "bridge", loop, 2, &k, err, sizeof(err));
		snprintf(path, sizeof(path), "%s/dataplane.key", r.key_dir);
		memset(&st, 0, sizeof(st));
		memset(&ls, 0, sizeof(ls));
		stat(r.key_dir, &st);
		stat(path, &ls);
		tap_ok(rc == 0 && k.curve && st.st_uid == 65534 && ls.st_uid == 65534,
			"root in the daemons' state directory (uid 65534): the key directory and its "
			"files are made theirs (dir uid %u, key uid %u): %s",
			(unsigned)st.st_uid, (unsigned)ls.st_uid, rc ? err : "ok");
		rc = zlink_keys_load(&r, false, "bridge", loop, 2, &o, err, sizeof(err));
		tap_ok(rc == 0 && o.curve && strcmp(o.public_key, k.public_key) == 0,
			"and root uses that directory again: %s", rc ? err : "ok");
		zlink_keys_wipe(&k);
		zlink_keys_wipe(&o);
	} else {
		tap_skip("not root", "root in the daemons' state directory");
		tap_skip("not root", "and root uses that directory again");
	}

	struct zlink_settings d = {0};

	setenv("STATE_DIRECTORY", "/var/lib/fg-a:/var/lib/fg-b", 1);
	zlink_local_dir(&d, path, sizeof(path));
	tap_ok(strcmp(path, "/var/lib/fg-a/links") == 0, "\"\": $STATE_DIRECTORY's first, /links");
	unsetenv("STATE_DIRECTORY");
	zlink_local_dir(&d, path, sizeof(path));
	tap_ok(strcmp(path, ZLINK_KEY_DIR_DEFAULT) == 0, "else " ZLINK_KEY_DIR_DEFAULT);
	s->key_dir[0] = '\0';
}

static void
test_keys(void)
{
	char pub[41], sec[41], spub[41], ssec[41], text[64], err[1024];
	struct zlink_settings s;
	struct zlink_keys k;
	const char *loop[] = {"tcp://127.0.0.1:1", "ipc:///x"}, *off[] = {"tcp://127.0.0.1:1",
								  "tcp://10.1.2.3:5602"};
	int rc;

	if (!tap_ok(zlink_has_curve(), "the libzmq linked has CURVE"))
		return;
	zmq_curve_keypair(pub, sec);
	zmq_curve_keypair(spub, ssec);

	memset(&s, 0, sizeof(s));
	test_local_keys(&s, loop, off);
	s.insecure_plaintext = 1;
	rc = zlink_keys_load(&s, false, "bridge", loop, 2, &k, err, sizeof(err));
	tap_ok(rc == 0 && !k.curve, "insecure_plaintext_links: plaintext, on loopback too");
	rc = zlink_keys_load(&s, false, "bridge", off, 2, &k, err, sizeof(err));
	tap_ok(rc == 0 && !k.curve, "and off the host");
	s.insecure_plaintext = 0;

	snprintf(text, sizeof(text), "%s\n", sec);
	snprintf(s.secret_key_file, sizeof(s.secret_key_file), "%s", put("c.key", text, 0600));
	snprintf(text, sizeof(text), "%s\n", spub);
	snprintf(s.server_key_file, sizeof(s.server_key_file), "%s", put("s.pub", text, 0644));
	rc = zlink_keys_load(&s, false, "bridge", off, 2, &k, err, sizeof(err));
	tap_ok(rc == 0 && k.curve && strcmp(k.secret_key, sec) == 0 &&
			strcmp(k.public_key, pub) == 0 && strcmp(k.server_key, spub) == 0,
		"a client's keys: its secret, the public key derived from it, the server's: %s",
		rc ? err : "ok");
	zlink_keys_wipe(&k);
	tap_ok(k.secret_key[0] == '\0' && !k.curve, "wiped");

	put("c.key", text, 0644);
	rc = zlink_keys_load(&s, false, "bridge", off, 2, &k, err, sizeof(err));
	tap_ok(rc == -EPERM && strstr(err, "mode 0644") != NULL &&
			strstr(err, "chmod 600") != NULL && !k.curve,
		"a secret key file others can read is refused: %s", err);
	put("c.key", "0123456789\n", 0600);
	rc = zlink_keys_load(&s, false, "bridge", off, 2, &k, err, sizeof(err));
	tap_ok(rc == -EINVAL && strstr(err, "does not hold a CURVE secret key") != NULL &&
			strstr(err, "0123456789") == NULL,
		"a file that is no key is refused, the text not quoted: %s", err);
	put("c.key", sec, 0600);
	put("s.pub", "not a key", 0644);
	rc = zlink_keys_load(&s, false, "bridge", off, 2, &k, err, sizeof(err));
	tap_ok(rc == -EINVAL && strstr(err, "curve_server_key_file") != NULL,
		"a server key file that is no key: %s", err);
	s.server_key_file[0] = '\0';
	rc = zlink_keys_load(&s, false, "bridge", off, 2, &k, err, sizeof(err));
	tap_ok(rc == -EINVAL && strstr(err, "curve_server_key_file is not set") != NULL,
		"a client without the server's key: %s", err);
	rc = zlink_keys_load(&s, true, "controlplane", off, 2, &k, err, sizeof(err));
	tap_ok(rc == 0 && k.curve && strcmp(k.public_key, pub) == 0,
		"a server needs only its own key: %s", rc ? err : "ok");
	zlink_keys_wipe(&k);
	s.secret_key_file[0] = '\0';
	snprintf(s.server_key_file, sizeof(s.server_key_file), "%s/s.pub", dir);
	rc = zlink_keys_load(&s, false, "bridge", loop, 2, &k, err, sizeof(err));
	tap_ok(rc == -EINVAL && strstr(err, "curve_secret_key_file is not") != NULL,
		"the server's key without one of its own: refused: %s", err);
}

static void
test_clients(void)
{
	char a[41], b[41], sec[41], text[512], err[1024];
	struct cp_zap_client *c = NULL;
	unsigned n = 99;
	int rc;

	zmq_curve_keypair(a, sec);
	zmq_curve_keypair(b, sec);
	snprintf(text, sizeof(text),
		"# the clients\n\ndataplane dp1 %s\n  order-writer ow.1_x-2 %s\n", a, b);
	rc = cp_zap_load_clients(put("clients", text, 0644), &c, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 2 && c[0].role == CP_ZAP_DATAPLANE &&
			strcmp(c[0].name, "dp1") == 0 && c[1].role == CP_ZAP_ORDER_WRITER &&
			strcmp(c[1].name, "ow.1_x-2") == 0,
		"an allow-list: roles and names, comments and blank lines skipped: %s",
		rc ? err : "ok");
	free(c);

	static const struct {
		const char *fmt, *want;
	} bad[] = {
		{"admin dp1 %s\n", ":1: the role must be dataplane or order-writer"},
		{"dataplane %s\n", ":1: expected ROLE NAME PUBLIC_KEY"},
		{"dataplane dp1 %s extra\n", ":1: more than ROLE NAME PUBLIC_KEY"},
		{"dataplane d/p %s\n", ":1: the name must be"},
		{"dataplane .dp %s\n", ":1: the name must be"},
		{"# x\ndataplane dp1 %.39s\n", ":2: the public key must be 40 Z85"},
		{"dataplane dp1 %s\norder-writer ow1 %s\n", ":2: this key is listed already"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), bad[i].fmt, a, a);
		c = NULL;
		n = 99;
		rc = cp_zap_load_clients(put("clients", text, 0644), &c, &n, err, sizeof(err));
		tap_ok(rc == -EINVAL && c == NULL && n == 99 && strstr(err, bad[i].want) != NULL &&
				strstr(err, "curve_clients_file") != NULL,
			"refused, naming the line: %s", err);
		free(c);
	}
	snprintf(text, sizeof(text), "%s/none", dir);
	rc = cp_zap_load_clients(text, &c, &n, err, sizeof(err));
	tap_ok(rc == -ENOENT && strstr(err, "cannot open") != NULL, "a missing file: %s", err);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	test_loopback();
	test_keys();
	test_clients();
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
	return tap_done();
}

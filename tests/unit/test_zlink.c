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
	rc = zlink_keys_load(&s, false, "bridge", loop, 2, &k, err, sizeof(err));
	tap_ok(rc == 0 && !k.curve, "no keys on loopback: plaintext, allowed");
	rc = zlink_keys_load(&s, false, "bridge", off, 2, &k, err, sizeof(err));
	tap_ok(rc == -EPERM && strstr(err, "tcp://10.1.2.3:5602 is not on this host") != NULL &&
			strstr(err, "flashgatectl curve keygen NAME --dir DIR") != NULL &&
			strstr(err, "insecure_plaintext_links") != NULL && strstr(err, "[bridge]"),
		"no keys off the host: refused, with how to make keys: %s", err);
	s.insecure_plaintext = 1;
	rc = zlink_keys_load(&s, false, "bridge", off, 2, &k, err, sizeof(err));
	tap_ok(rc == 0 && !k.curve, "the lab opt-out allows it");
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

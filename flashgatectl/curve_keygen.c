/* SPDX-License-Identifier: BSD-3-Clause */
#include "flashgatectl/curve_keygen.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zmq.h>

#include "common/json_writer.h"
#include "common/zlink.h"
#include "flashgatectl/ctl_fail.h"

/* The command's name in its messages. */
#define CMD	 "curve keygen"
#define SYNOPSIS "curve keygen NAME [--dir DIR] [--role dataplane|order-writer]"

const char curve_keygen_usage[] = SYNOPSIS "   a link key pair, offline\n";

/* Writes text and a line end to a new file of mode (never an existing one). */
static int
write_new(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	size_t len = strlen(text);
	int rc = 0;

	if (fd < 0)
		return -errno;
	/* The umask may have taken bits away; the secret's mode must be exactly 0600. */
	if (fchmod(fd, mode) != 0 || write(fd, text, len) != (ssize_t)len ||
		write(fd, "\n", 1) != 1 || fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc != 0)
		unlink(path);
	return rc;
}

int
curve_keygen_command(int argc, char **argv, FILE *out, bool json, bool *handled)
{
	const char *name = NULL, *dir = NULL, *role = NULL;
	char pub[ZLINK_KEY_LEN + 1], sec[ZLINK_KEY_LEN + 1], kpath[4096], ppath[4096];
	int rc;

	*handled = argc > 0 && strcmp(argv[0], "curve") == 0;
	if (!*handled)
		return 0;
	if (argc < 2 || strcmp(argv[1], "keygen") != 0)
		return ctl_fail(CMD, "expected \"%s\"", SYNOPSIS);
	for (int i = 2; i < argc; i++) {
		int got = ctl_option(CMD, argc, argv, &i, "--dir", &dir);

		if (got == 0)
			got = ctl_option(CMD, argc, argv, &i, "--role", &role);
		if (got == 2)
			return got;
		if (got == 1)
			continue;
		if (argv[i][0] == '-')
			return ctl_fail(CMD, "unknown option \"%s\" (%s)", argv[i], SYNOPSIS);
		if (name != NULL)
			return ctl_fail(CMD, "unexpected \"%s\" after NAME %s (%s)", argv[i], name,
				SYNOPSIS);
		name = argv[i];
	}
	if (dir == NULL)
		dir = ".";
	if (name == NULL || !zlink_name_ok(name))
		return ctl_fail(CMD,
			"NAME must be 1..63 of A-Z a-z 0-9 . _ - (not starting with '.'), "
			"got \"%s\"",
			name == NULL ? "" : name);
	if (role != NULL && strcmp(role, ZLINK_ROLE_DATAPLANE) != 0 &&
		strcmp(role, ZLINK_ROLE_ORDER_WRITER) != 0)
		return ctl_fail(CMD, "--role must be dataplane or order-writer, got \"%s\"", role);
	if (!zlink_has_curve())
		return ctl_fail(CMD,
			"the libzmq flashgatectl runs with has no CURVE (zmq_has(\"curve\") is "
			"false)");
	snprintf(kpath, sizeof(kpath), "%s/%s.key", dir, name);
	snprintf(ppath, sizeof(ppath), "%s/%s.pub", dir, name);
	if (access(kpath, F_OK) == 0 || access(ppath, F_OK) == 0)
		return ctl_fail(CMD,
			"%s or its .pub exists already: keys are never overwritten (remove "
			"them first, or choose another NAME)",
			kpath);
	if (zmq_curve_keypair(pub, sec) != 0)
		return ctl_fail(CMD, "zmq_curve_keypair: %s", zmq_strerror(zmq_errno()));
	rc = write_new(kpath, sec, 0600);
	explicit_bzero(sec, sizeof(sec));
	if (rc != 0)
		return ctl_fail(CMD, "cannot write %s: %s", kpath, strerror(-rc));
	rc = write_new(ppath, pub, 0644);
	if (rc != 0) {
		unlink(kpath);
		return ctl_fail(CMD, "cannot write %s: %s", ppath, strerror(-rc));
	}
	if (json) {
		char buf[16384];
		struct json_writer j;

		jw_init(&j, buf, sizeof(buf));
		jw_open(&j, NULL, '{');
		jw_bool(&j, "ok", true);
		jw_str(&j, "secret_key_file", kpath);
		jw_str(&j, "public_key_file", ppath);
		jw_str(&j, "public_key", pub);
		if (role != NULL)
			jw_str(&j, "role", role);
		jw_close(&j, '}');
		if (jw_end(&j) > 0)
			fprintf(out, "%s\n", buf);
		return 0;
	}
	fprintf(out, "wrote %s (secret key, mode 0600) and %s (public key)\n", kpath, ppath);
	if (role != NULL)
		fprintf(out, "for the control plane's curve_clients_file:\n%s %s %s\n", role, name,
			pub);
	else
		fprintf(out, "public key: %s\n", pub);
	return 0;
}

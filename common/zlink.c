/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/zlink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zmq.h>

#include "common/log.h"
#include "common/secret_input.h"

#define KEYGEN_HINT                                                                       \
	"make keys with `flashgatectl curve keygen NAME --dir DIR` (docs/operations.md, " \
	"\"Link keys\")"
#define LOCAL_HINT                                                                              \
	"give the links keys (curve_key_dir, or curve_secret_key_file: docs/operations.md, "    \
	"\"Link keys\"), or, for a closed lab only, set insecure_plaintext_links = yes (links " \
	"without authentication)"

bool
zlink_endpoint_is_loopback(const char *ep)
{
	char host[128];
	const char *h, *colon;
	size_t len;

	if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0)
		return true;
	if (strncmp(ep, "tcp://", 6) != 0)
		return false;
	h = ep + 6;
	/* "tcp://source;destination": the destination is what counts. */
	if (strchr(h, ';') != NULL)
		h = strchr(h, ';') + 1;
	colon = strrchr(h, ':');
	if (colon == NULL)
		return false;
	len = (size_t)(colon - h);
	if (len >= sizeof(host))
		return false;
	memcpy(host, h, len);
	host[len] = '\0';
	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		struct in6_addr a6;

		host[len - 1] = '\0';
		return inet_pton(AF_INET6, host + 1, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
	}
	struct in_addr a4;

	/* A name or an interface ("*", "eth0", "localhost") is not taken on trust. */
	return inet_pton(AF_INET, host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

bool
zlink_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n >= 1 && n <= 63 && name[0] != '.' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
		       n;
}

bool
zlink_has_curve(void)
{
	return zmq_has("curve") != 0;
}

/* Whether text is a Z85 key: 40 characters that decode to 32 bytes. */
static bool
key_ok(const char *text)
{
	uint8_t bin[32];
	bool ok = strlen(text) == ZLINK_KEY_LEN && zmq_z85_decode(bin, text) != NULL;

	explicit_bzero(bin, sizeof(bin));
	return ok;
}

int
zlink_read_public(
	const char *path, const char *what, char out[ZLINK_KEY_LEN + 1], char *err, size_t errlen)
{
	char text[128];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open %s: %s", what, path, strerror(errno));
		return -errno;
	}
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: reading %s: %s", what, path, strerror(errno));
		return -EIO;
	}
	text[n] = '\0';
	text[strcspn(text, " \t\r\n")] = '\0';
	if (!key_ok(text)) {
		snprintf(err, errlen,
			"%s: %s does not hold a CURVE public key (one line of 40 Z85 characters, "
			"as `flashgatectl curve keygen` writes NAME.pub)",
			what, path);
		return -EINVAL;
	}
	memcpy(out, text, ZLINK_KEY_LEN + 1);
	return 0;
}

/* Reads the secret key file (mode 0600) and derives the public key from it. */
static int
read_secret(const char *path, const char *what, struct zlink_keys *k, char *err, size_t errlen)
{
	size_t len;
	int rc = secret_read_text(
		path, what, k->secret_key, sizeof(k->secret_key), &len, err, errlen);

	if (rc != 0)
		return rc;
	if (!key_ok(k->secret_key) || zmq_curve_public(k->public_key, k->secret_key) != 0) {
		snprintf(err, errlen,
			"%s: %s does not hold a CURVE secret key (one line of 40 Z85 characters, "
			"as `flashgatectl curve keygen` writes NAME.key)",
			what, path);
		return -EINVAL;
	}
	return 0;
}

/* The opt-out's warning, once per endpoint at start. */
static void
warn_plaintext(const char *section, const char *const *eps, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		LOG_WARN("[%s] insecure_plaintext_links = yes: the ZeroMQ link %s is PLAINTEXT, "
			 "without authentication: whoever reaches it%s reads the sale keys and can "
			 "push records. For a closed lab only; %s",
			section, eps[i],
			zlink_endpoint_is_loopback(eps[i]) ? " (any user of this host)" : "",
			KEYGEN_HINT);
}

int
zlink_keys_load(const struct zlink_settings *s, bool is_server, const char *section,
	const char *const *eps, unsigned n, struct zlink_keys *k, char *err, size_t errlen)
{
	char what[96];
	int rc = 0;

	memset(k, 0, sizeof(*k));
	if (s->secret_key_file[0] == '\0') {
		if (!is_server && s->server_key_file[0] != '\0') {
			snprintf(err, errlen,
				"[%s] curve_server_key_file is set but curve_secret_key_file "
				"is not: a CURVE client needs its own key pair too; %s",
				section, KEYGEN_HINT);
			return -EINVAL;
		}
		if (s->insecure_plaintext) {
			warn_plaintext(section, eps, n);
			return 0;
		}
		char dir[ZLINK_PATH_MAX];

		if (zlink_local_dir(s, dir, sizeof(dir)) != 0) {
			snprintf(err, errlen, "[%s] curve_key_dir: the path is too long", section);
			return -ENAMETOOLONG;
		}
		return zlink_local_keys(dir,
			strcmp(section, "controlplane") == 0   ? ZLINK_ROLE_CONTROLPLANE
			: strcmp(section, "order_writer") == 0 ? ZLINK_ROLE_ORDER_WRITER
							       : ZLINK_ROLE_DATAPLANE,
			section, k, err, errlen);
	}
	if (!zlink_has_curve()) {
		snprintf(err, errlen,
			"[%s] curve_secret_key_file is set but the libzmq this program runs "
			"with has no CURVE (zmq_has(\"curve\") is false): install a libzmq "
			"built with libsodium (Debian's libzmq5 is)",
			section);
		return -ENOTSUP;
	}
	snprintf(what, sizeof(what), "[%s] curve_secret_key_file", section);
	rc = read_secret(s->secret_key_file, what, k, err, errlen);
	if (rc == 0 && !is_server) {
		snprintf(what, sizeof(what), "[%s] curve_server_key_file", section);
		if (s->server_key_file[0] == '\0') {
			snprintf(err, errlen,
				"%s is not set: a CURVE client needs the control plane's "
				"public key (the NAME.pub of its key pair)",
				what);
			rc = -EINVAL;
		} else {
			rc = zlink_read_public(
				s->server_key_file, what, k->server_key, err, errlen);
		}
	}
	if (rc != 0) {
		zlink_keys_wipe(k);
		return rc;
	}
	k->curve = true;
	return 0;
}

int
zlink_local_dir(const struct zlink_settings *s, char *out, size_t outlen)
{
	const char *st = getenv("STATE_DIRECTORY");
	int n;

	if (s->key_dir[0] != '\0')
		n = snprintf(out, outlen, "%s", s->key_dir);
	else if (st != NULL && st[0] == '/')
		/* systemd lists several directories separated by ':': ours is the first. */
		n = snprintf(out, outlen, "%.*s/links", (int)strcspn(st, ":"), st);
	else
		n = snprintf(out, outlen, "%s", ZLINK_KEY_DIR_DEFAULT);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

/*
 * The owner of the local key directory, for the files a program run as root writes into it
 * (the packaged data plane runs as root beside daemons run as the user flashgate): they are
 * given to the directory's owner, so that those daemons can still read and replace them.
 */
static uid_t local_owner_uid = (uid_t)-1;
static gid_t local_owner_gid = (gid_t)-1;

/* Gives fd to the key directory's owner when this program is root and another user owns it. */
static int
give_to_owner(int fd)
{
	if (geteuid() != 0 || local_owner_uid == (uid_t)-1 || local_owner_uid == 0)
		return 0;
	return fchown(fd, local_owner_uid, local_owner_gid);
}

/* Writes text to dir/name through a temporary file renamed over it, of mode mode. */
static int
write_file(
	const char *dir, const char *name, const char *text, mode_t mode, char *err, size_t errlen)
{
	char path[ZLINK_PATH_MAX + 64], tmp[ZLINK_PATH_MAX + 80];
	size_t len = strlen(text);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", dir, name, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0 || fchmod(fd, mode) != 0 || give_to_owner(fd) != 0 ||
		write(fd, text, len) != (ssize_t)len || fsync(fd) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return -EIO;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot rename %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

/* Whether dir/name holds exactly text. */
static bool
file_holds(const char *dir, const char *name, const char *text)
{
	char path[ZLINK_PATH_MAX + 64], buf[512];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n < 0)
		return false;
	buf[n] = '\0';
	return strcmp(buf, text) == 0;
}

/* Reads dir/ROLE.key into sec and its public key into pub, making the pair when absent. */
static int
local_pair(const char *dir, const char *role, char pub[ZLINK_KEY_LEN + 1],
	char sec[ZLINK_KEY_LEN + 1], char *err, size_t errlen)
{
	char path[ZLINK_PATH_MAX + 64], name[64], line[ZLINK_KEY_LEN + 2];
	size_t len;
	int rc;

	snprintf(path, sizeof(path), "%s/%s.key", dir, role);
	if (access(path, F_OK) != 0 && errno == ENOENT) {
		if (zmq_curve_keypair(pub, sec) != 0) {
			snprintf(err, errlen, "zmq_curve_keypair: %s", zmq_strerror(zmq_errno()));
			return -EIO;
		}
		snprintf(line, sizeof(line), "%.*s\n", ZLINK_KEY_LEN, sec);
		snprintf(name, sizeof(name), "%s.key", role);
		rc = write_file(dir, name, line, 0600, err, errlen);
		explicit_bzero(line, sizeof(line));
		if (rc != 0)
			return rc;
		LOG_NOTICE("links: made the local key pair %s/%s.key", dir, role);
	}
	rc = secret_read_text(path, "local key", sec, ZLINK_KEY_LEN + 1, &len, err, errlen);
	if (rc != 0)
		return rc;
	if (!key_ok(sec) || zmq_curve_public(pub, sec) != 0) {
		snprintf(err, errlen,
			"%s does not hold a CURVE secret key: remove it to make another", path);
		return -EINVAL;
	}
	/* The public half is written again from the secret one: never a stale or missing .pub. */
	snprintf(line, sizeof(line), "%.*s\n", ZLINK_KEY_LEN, pub);
	snprintf(name, sizeof(name), "%s.pub", role);
	return write_file(dir, name, line, 0644, err, errlen);
}

/* Makes dir (mode 0700) and its parent when absent; refuses one others can enter. */
static int
local_dir_ok(const char *dir, char *err, size_t errlen)
{
	char parent[ZLINK_PATH_MAX];
	struct stat st;
	char *slash;
	bool made;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash != NULL && slash != parent) {
		*slash = '\0';
		if (mkdir(parent, 0755) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot make %s: %s", parent, strerror(errno));
			return -errno;
		}
	}
	made = mkdir(dir, 0700) == 0;
	if (!made && errno != EEXIST) {
		snprintf(err, errlen, "cannot make %s: %s", dir, strerror(errno));
		return -errno;
	}
	/* Made by root in the daemons' state directory: theirs, as if they had made it. */
	if (made && geteuid() == 0 && slash != NULL && slash != parent && lstat(parent, &st) == 0 &&
		st.st_uid != 0 && chown(dir, st.st_uid, st.st_gid) != 0) {
		snprintf(err, errlen, "cannot give %s to uid %u: %s", dir, (unsigned)st.st_uid,
			strerror(errno));
		return -errno;
	}
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory", dir);
		return -ENOTDIR;
	}
	/* Root may use the directory of the daemons' user (the packaged data plane runs as root,
	 * the control plane as flashgate); nobody else may use one that is not theirs. */
	if ((st.st_uid != geteuid() && geteuid() != 0) || (st.st_mode & 077) != 0) {
		snprintf(err, errlen,
			"%s must belong to this program's user (uid %u; it is %u's) and be closed "
			"to its group and others (mode 0%o: chmod 700 it)",
			dir, (unsigned)geteuid(), (unsigned)st.st_uid,
			(unsigned)(st.st_mode & 0777));
		return -EPERM;
	}
	local_owner_uid = st.st_uid;
	local_owner_gid = st.st_gid;
	return 0;
}

int
zlink_local_keys(const char *dir, const char *role, const char *section, struct zlink_keys *k,
	char *err, size_t errlen)
{
	static const char *const roles[] = {
		ZLINK_ROLE_CONTROLPLANE, ZLINK_ROLE_DATAPLANE, ZLINK_ROLE_ORDER_WRITER};
	char pub[3][ZLINK_KEY_LEN + 1], sec[ZLINK_KEY_LEN + 1], why[512], lock[ZLINK_PATH_MAX + 8];
	char clients[256];
	int fd = -1, rc;

	memset(k, 0, sizeof(*k));
	if (!zlink_has_curve()) {
		snprintf(err, errlen,
			"[%s] the libzmq this program runs with has no CURVE "
			"(zmq_has(\"curve\") is false), so its links cannot be authenticated: install a libzmq built with "
			"libsodium (Debian's libzmq5 is), or %s",
			section, LOCAL_HINT);
		return -ENOTSUP;
	}
	rc = local_dir_ok(dir, why, sizeof(why));
	if (rc == 0) {
		snprintf(lock, sizeof(lock), "%s/.lock", dir);
		fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0 || give_to_owner(fd) != 0 || flock(fd, LOCK_EX) != 0) {
			snprintf(why, sizeof(why), "cannot lock %s: %s", lock, strerror(errno));
			rc = -EIO;
		}
	}
	for (unsigned i = 0; rc == 0 && i < 3; i++) {
		rc = local_pair(dir, roles[i], pub[i], sec, why, sizeof(why));
		if (rc == 0 && strcmp(role, roles[i]) == 0) {
			memcpy(k->secret_key, sec, sizeof(k->secret_key));
			memcpy(k->public_key, pub[i], sizeof(k->public_key));
		}
		explicit_bzero(sec, sizeof(sec));
	}
	if (rc == 0) {
		snprintf(clients, sizeof(clients),
			"# The local data planes' and order writers' keys (made by flashgate).\n"
			"%s local %s\n%s local %s\n",
			ZLINK_ROLE_DATAPLANE, pub[1], ZLINK_ROLE_ORDER_WRITER, pub[2]);
		/* Written only when it changes: the control plane reads it again on a change. */
		if (!file_holds(dir, ZLINK_LOCAL_CLIENTS, clients))
			rc = write_file(dir, ZLINK_LOCAL_CLIENTS, clients, 0600, why, sizeof(why));
	}
	if (fd >= 0)
		close(fd); /* and the lock with it */
	if (rc != 0) {
		snprintf(err, errlen, "[%s] the local link keys in %s: %s; %s", section, dir, why,
			LOCAL_HINT);
		zlink_keys_wipe(k);
		return rc;
	}
	memcpy(k->server_key, pub[0], sizeof(k->server_key));
	if (strcmp(role, ZLINK_ROLE_CONTROLPLANE) == 0)
		snprintf(k->clients_file, sizeof(k->clients_file), "%s/%s", dir,
			ZLINK_LOCAL_CLIENTS);
	k->curve = true;
	return 0;
}

/* Sets one option; on failure says which in err. */
static int
set_opt(void *sock, int opt, const void *v, size_t len, const char *name, char *err, size_t errlen)
{
	if (zmq_setsockopt(sock, opt, v, len) == 0)
		return 0;
	snprintf(err, errlen, "ZeroMQ option %s: %s", name, zmq_strerror(zmq_errno()));
	return -1;
}

int
zlink_socket_setup(void *sock, const struct zlink_keys *k, const char *domain, size_t max_msg,
	char *err, size_t errlen)
{
	int64_t maxsize = (int64_t)((max_msg > ZLINK_COMMAND_MAX ? max_msg : ZLINK_COMMAND_MAX) +
				    ZLINK_CURVE_OVERHEAD);
	int one = 1;

	if (set_opt(sock, ZMQ_MAXMSGSIZE, &maxsize, sizeof(maxsize), "ZMQ_MAXMSGSIZE", err,
		    errlen) != 0)
		return -1;
	if (!k->curve)
		return 0;
	if (domain != NULL)
		return set_opt(sock, ZMQ_ZAP_DOMAIN, domain, strlen(domain), "ZMQ_ZAP_DOMAIN", err,
			       errlen) != 0 ||
				       set_opt(sock, ZMQ_CURVE_SERVER, &one, sizeof(one),
					       "ZMQ_CURVE_SERVER", err, errlen) != 0 ||
				       set_opt(sock, ZMQ_CURVE_SECRETKEY, k->secret_key,
					       ZLINK_KEY_LEN, "ZMQ_CURVE_SECRETKEY", err,
					       errlen) != 0
			       ? -1
			       : 0;
	return set_opt(sock, ZMQ_CURVE_SERVERKEY, k->server_key, ZLINK_KEY_LEN,
		       "ZMQ_CURVE_SERVERKEY", err, errlen) != 0 ||
			       set_opt(sock, ZMQ_CURVE_PUBLICKEY, k->public_key, ZLINK_KEY_LEN,
				       "ZMQ_CURVE_PUBLICKEY", err, errlen) != 0 ||
			       set_opt(sock, ZMQ_CURVE_SECRETKEY, k->secret_key, ZLINK_KEY_LEN,
				       "ZMQ_CURVE_SECRETKEY", err, errlen) != 0
		       ? -1
		       : 0;
}

void
zlink_keys_wipe(struct zlink_keys *k)
{
	explicit_bzero(k, sizeof(*k));
}

#define MONITOR_EVENTS                                                                \
	(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | \
		ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |     \
		ZMQ_EVENT_DISCONNECTED)

void *
zlink_monitor(void *zctx, void *sock, const char *name)
{
	char ep[64];
	void *pair;

	snprintf(ep, sizeof(ep), "inproc://fg-monitor-%s", name);
	if (zmq_socket_monitor(sock, ep, MONITOR_EVENTS) != 0)
		return NULL;
	pair = zmq_socket(zctx, ZMQ_PAIR);
	if (pair != NULL && zmq_connect(pair, ep) != 0) {
		zmq_close(pair);
		return NULL;
	}
	return pair;
}

void
zlink_monitor_read(void *mon, struct zlink_events *ev)
{
	/* An event is two frames: (u16 event, u32 value), then the endpoint. */
	for (;;) {
		zmq_msg_t m;
		uint16_t e = 0;

		zmq_msg_init(&m);
		if (zmq_msg_recv(&m, mon, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&m);
			return;
		}
		if (zmq_msg_size(&m) >= sizeof(e))
			memcpy(&e, zmq_msg_data(&m), sizeof(e));
		while (zmq_msg_more(&m))
			if (zmq_msg_recv(&m, mon, 0) < 0)
				break;
		zmq_msg_close(&m);
		if (e == ZMQ_EVENT_DISCONNECTED)
			ev->disconnected++;
		else if (e == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
			ev->handshake_ok++;
		else if (e & (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
				     ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
				     ZMQ_EVENT_HANDSHAKE_FAILED_AUTH))
			ev->handshake_failed++;
	}
}

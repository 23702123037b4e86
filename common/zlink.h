/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_ZLINK_H
#define FG_COMMON_ZLINK_H
/*
 * The security of the ZeroMQ links between the programs, one copy for all three
 * (docs/wire.md, "Security"): CURVE keys read from files, the rule that a link leaving the
 * host is never plaintext, and the options every socket gets (ZMQ_MAXMSGSIZE, CURVE).
 *
 * The control plane is the CURVE server of both its sockets; data planes and order writers are
 * clients that know its public key. A key is 40 characters of Z85 (ZeroMQ's RFC 32), as
 * zmq_curve_keypair() makes it and `flashgatectl curve keygen` writes it: a secret key file
 * holds one line, the secret key, and must be readable by its owner only; a public key file
 * holds one line, the public key. Nothing here is on the per-packet path.
 */
#include <stdbool.h>
#include <stddef.h>

#define ZLINK_KEY_LEN  40 /* Z85 characters of a 32-byte CURVE key */
#define ZLINK_PATH_MAX 256

/*
 * What CURVE adds to a message on the wire: a MESSAGE command is its name (8 bytes), a nonce
 * (8), the flags byte and the 16-byte authenticator around the message. ZMQ_MAXMSGSIZE counts
 * the frame as it arrives, so the limit is the wire format's largest message plus this.
 */
#define ZLINK_CURVE_OVERHEAD 64

/*
 * The handshake's commands (CURVE's HELLO, WELCOME, INITIATE and READY with their metadata, a
 * few hundred bytes) pass through the same limit: no socket's is below this, even one that
 * receives no message at all.
 */
#define ZLINK_COMMAND_MAX 4096

/* The ZAP domains of the control plane's two sockets: the ZAP handler tells them apart. */
#define ZLINK_DOMAIN_PULL "flashgate-pull"
#define ZLINK_DOMAIN_PUB  "flashgate-pub"

/* The roles a client key has in the control plane's allow-list. */
#define ZLINK_ROLE_DATAPLANE	"dataplane"
#define ZLINK_ROLE_ORDER_WRITER "order-writer"

/* The role of the control plane's own key pair in a local key directory. */
#define ZLINK_ROLE_CONTROLPLANE "controlplane"

/*
 * The local key directory when [SECTION] curve_key_dir is empty: $STATE_DIRECTORY/links
 * (systemd's StateDirectory=, the first of its list) or else this.
 */
#define ZLINK_KEY_DIR_DEFAULT "/var/lib/flashgate/links"

/* The allow-list a local key directory holds for the control plane (cp_zap.h's format). */
#define ZLINK_LOCAL_CLIENTS "clients"

/* A program's CURVE keys; curve false: a plaintext link (the insecure_plaintext_links opt-out). */
struct zlink_keys {
	bool curve;
	char public_key[ZLINK_KEY_LEN + 1]; /* this program's */
	char secret_key[ZLINK_KEY_LEN + 1]; /* this program's */
	char server_key[ZLINK_KEY_LEN + 1]; /* a client's: the control plane's public key */
	/* The control plane's with local keys: the allow-list file of the key directory. */
	char clients_file[ZLINK_PATH_MAX];
};

/*
 * The settings every program has in its section (config keys curve_*, insecure_plaintext_links).
 * Without key files a program uses the key pairs of a local key directory (key_dir), made at
 * the first start of any of the three programs: a link is never plaintext unless
 * insecure_plaintext says so.
 */
struct zlink_settings {
	char secret_key_file[ZLINK_PATH_MAX]; /* "": the local key directory's */
	char server_key_file[ZLINK_PATH_MAX]; /* clients only: the control plane's public key */
	char key_dir[ZLINK_PATH_MAX];	      /* "": ZLINK_KEY_DIR_DEFAULT's rule */
	int insecure_plaintext;		      /* the opt-out: no keys, plaintext links */
};

/*
 * The cfg_key initialisers of those settings, for a program's key table: T is its settings
 * struct and M the struct zlink_settings member in it. The server has no server key file.
 */
#define ZLINK_CFG_SECRET_KEY(T, M)                                                                \
	{                                                                                         \
		.name = "curve_secret_key_file", .type = CFG_STRING,                              \
		.offset = offsetof(T, M.secret_key_file),                                         \
		.size = sizeof(((T *)0)->M.secret_key_file), .min = 0, .max = ZLINK_PATH_MAX - 1, \
		.def = "",                                                                        \
		.doc = "This program's CURVE secret key for its ZeroMQ links, a file of mode "    \
		       "0600 written by `flashgatectl curve keygen` (docs/operations.md); \"\": " \
		       "the key pairs of curve_key_dir, made at first start (one host only)."     \
	}
#define ZLINK_CFG_SERVER_KEY(T, M)                                                                \
	{                                                                                         \
		.name = "curve_server_key_file", .type = CFG_STRING,                              \
		.offset = offsetof(T, M.server_key_file),                                         \
		.size = sizeof(((T *)0)->M.server_key_file), .min = 0, .max = ZLINK_PATH_MAX - 1, \
		.def = "",                                                                        \
		.doc = "The control plane's CURVE public key (its NAME.pub file); required with " \
		       "curve_secret_key_file."                                                   \
	}
#define ZLINK_CFG_KEY_DIR(T, M)                                                                   \
	{                                                                                         \
		.name = "curve_key_dir", .type = CFG_STRING, .offset = offsetof(T, M.key_dir),    \
		.size = sizeof(((T *)0)->M.key_dir), .min = 0, .max = ZLINK_PATH_MAX - 1,         \
		.def = "",                                                                        \
		.doc = "Without curve_secret_key_file: the directory of this host's link keys, "  \
		       "made at the first start of any program (a key pair per role and the "     \
		       "control plane's allow-list), mode 0700, owned by the user all three run " \
		       "as. \"\": $STATE_DIRECTORY/links under systemd, else "                    \
		       "/var/lib/flashgate/links."                                                \
	}
#define ZLINK_CFG_INSECURE(T, M)                                                                   \
	{                                                                                          \
		.name = "insecure_plaintext_links", .type = CFG_BOOL,                              \
		.offset = offsetof(T, M.insecure_plaintext),                                       \
		.size = sizeof(((T *)0)->M.insecure_plaintext), .def = "no",                       \
		.doc = "yes: without curve_secret_key_file, plaintext ZeroMQ links without "       \
		       "authentication, on this host too: whoever reaches an endpoint (any local " \
		       "user on loopback) reads the sale keys and can push records. For a closed " \
		       "lab only; logged as a warning at start."                                   \
	}

/* Whether endpoint is on this host: ipc://, inproc://, or tcp:// to 127.0.0.0/8 or [::1]. */
bool zlink_endpoint_is_loopback(const char *endpoint);

/*
 * Loads a program's keys from its settings, as a server (is_server: no server key) or a
 * client. With key files, those. Without: plaintext when s->insecure_plaintext (a warning is
 * logged naming eps[0..n)); otherwise the local key directory's (zlink_local_keys()), whose
 * pair is picked by section: "controlplane" (the server's), "order_writer", else a data
 * plane's ("bridge"). section names the program's config section in messages. Checks that the
 * linked libzmq has CURVE. Returns 0 with *k filled (k->curve false only with the opt-out);
 * or a negative errno with one line in err saying what was wrong, how to make keys, and the
 * opt-out's name; *k is then wiped.
 */
int zlink_keys_load(const struct zlink_settings *s, bool is_server, const char *section,
	const char *const *eps, unsigned n, struct zlink_keys *k, char *err, size_t errlen);

/*
 * The local key directory of s (s->key_dir, or ZLINK_KEY_DIR_DEFAULT's rule) into out.
 * Returns 0, or -ENAMETOOLONG.
 */
int zlink_local_dir(const struct zlink_settings *s, char *out, size_t outlen);

/*
 * Makes what is missing in the local key directory dir and loads role's keys from it: dir
 * (created mode 0700 when absent, its parent too) must be a directory of this user that its
 * group and others cannot enter; under an exclusive lock, each of ROLE.key (mode 0600) and
 * ROLE.pub for the three roles (ZLINK_ROLE_*) is made when absent, and ZLINK_LOCAL_CLIENTS
 * (the data plane's and the order writer's public keys, named "local") written again. role
 * ZLINK_ROLE_CONTROLPLANE loads the server's pair and clients_file; the other two their pair
 * and the control plane's public key. Returns 0 with k->curve true, or a negative errno with
 * err (section names the config section in it); *k is then wiped.
 */
int zlink_local_keys(const char *dir, const char *role, const char *section, struct zlink_keys *k,
	char *err, size_t errlen);

/* Reads a public key file: one line of 40 Z85 characters. Returns 0 or -errno with err. */
int zlink_read_public(
	const char *path, const char *what, char out[ZLINK_KEY_LEN + 1], char *err, size_t errlen);

/*
 * Sets the options of a socket: ZMQ_MAXMSGSIZE (max_msg, at least ZLINK_COMMAND_MAX, plus
 * ZLINK_CURVE_OVERHEAD; max_msg 0 for a socket that receives no message) and, with
 * k->curve, CURVE as a client (server key, own keys) or, with domain non-NULL, as a server
 * whose ZAP domain is domain. Call before bind or connect. Returns 0, or -1 with err.
 */
int zlink_socket_setup(void *sock, const struct zlink_keys *k, const char *domain, size_t max_msg,
	char *err, size_t errlen);

/* Whether name can name a client in the allow-list and its key files: 1..63 of A-Z a-z 0-9 . _ -,
 * not starting with '.'. */
bool zlink_name_ok(const char *name);

/* What a socket monitor reported since it was last read. */
struct zlink_events {
	unsigned handshake_failed; /* HANDSHAKE_FAILED_*: keys refused, plaintext against CURVE */
	unsigned handshake_ok;	   /* HANDSHAKE_SUCCEEDED */
	unsigned disconnected;	   /* DISCONNECTED: a peer gone, or a message over the limit */
};

/*
 * Starts a monitor of sock (handshakes and disconnects) and returns the PAIR socket of zctx
 * that receives its events, connected to inproc://fg-monitor-NAME (name unique in zctx); NULL
 * on failure. Called by the thread that owns sock; the PAIR then belongs to the thread that
 * reads it. Close it with zmq_close() before the context ends.
 */
void *zlink_monitor(void *zctx, void *sock, const char *name);

/* Reads every event waiting on a monitor's PAIR without blocking and adds them to *ev. */
void zlink_monitor_read(void *mon, struct zlink_events *ev);

/* Whether the linked libzmq has CURVE (zmq_has("curve")). */
bool zlink_has_curve(void);

/* Wipes k's secret key. */
void zlink_keys_wipe(struct zlink_keys *k);

#endif

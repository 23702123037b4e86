/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration loader (common/config.c) through the data plane's key
 * table (dataplane/dp_config.c), and the logger (common/log.c).
 * Runs with the repository root as working directory (for flashgate.conf).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "dataplane/dp_config.h"
#include "tests/tap.h"

#define ERRLEN 512

static char tmp_path[64];

/* Writes len bytes to a fresh temporary file; its name is left in tmp_path. */
static const char *
write_tmp_len(const char *text, size_t len)
{
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/fg-test-config-XXXXXX");
	fd = mkstemp(tmp_path);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror("temporary file");
		exit(2);
	}
	close(fd);
	return tmp_path;
}

static const char *
write_tmp(const char *text)
{
	return write_tmp_len(text, strlen(text));
}

/* Loads text as a file into cfg; the file is removed again. */
static int
load_text(const char *text, struct dp_config *cfg, char *err)
{
	const char *path = write_tmp(text);
	int rc = dp_config_load(cfg, path, err, ERRLEN);

	unlink(path);
	return rc;
}

static int
has(const char *hay, const char *needle)
{
	return needle == NULL || strstr(hay, needle) != NULL;
}

static uint32_t
ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	uint8_t x[4] = {a, b, c, d};
	uint32_t v;

	memcpy(&v, x, 4);
	return v;
}

/* ------------------------------------------------------------------------------------------ */

static void
test_example_file(struct dp_config *example)
{
	char err[ERRLEN] = "";
	int rc = dp_config_load(example, "flashgate.conf", err, sizeof(err));

	if (!tap_ok(rc == 0, "example flashgate.conf loads"))
		tap_diag("%s", err);
	tap_ok(example->ipv4_addr == ip(198, 18, 0, 2), "example: address 198.18.0.2");
	tap_ok(example->n_listen_ports == 1 && example->listen_ports[0] == 80,
		"example: listen_ports 80");
	tap_eq_int(example->mss, 1460, "example: mss");
	tap_eq_int(example->log_level, LOG_LEVEL_INFO, "example: log_level");
	tap_eq_int(example->syncookie_secret_set, 0, "example: no SYN cookie secret");
	tap_eq_int(example->n_events, 2, "example: two events");
	tap_ok(example->events[0].id == 1 &&
			strcmp(example->events[0].name, "Launch sale: 1000 headphones") == 0,
		"example: event 1 and its name, quotes removed");
	tap_ok(example->events[0].starts_at_ms == 1767225600000ull &&
			example->events[0].ends_at_ms == 2082758400000ull,
		"example: event 1 is open from 2026 to 2036");
	tap_eq_int(example->events[0].stock, 1000, "example: event 1 stock");
	tap_ok(example->events[1].id == 2 && example->events[1].starts_at_ms == 2078323200000ull &&
			example->events[1].ends_at_ms == 2078409600000ull,
		"example: event 2 in +08:00 converts to UTC");
	tap_eq_int(example->events[1].stock, 100, "example: event 2 stock");
}

static void
test_defaults(void)
{
	struct dp_config d, loaded;
	char err[ERRLEN] = "";
	int rc;

	dp_config_defaults(&d);
	tap_ok(d.ipv4_addr == ip(198, 18, 0, 2), "default address");
	tap_ok(d.n_listen_ports == 1 && d.listen_ports[0] == 80, "default listen_ports");
	tap_ok(d.mss == 1460 && d.burst == 32, "default mss and burst");
	tap_ok(d.mss_floor == 536 && d.host[0] == '\0', "default mss_floor 536, no host name");
	tap_ok(d.rx_desc == 1024 && d.tx_desc == 1024, "default descriptors");
	tap_ok(d.mbufs == 8191 && d.mbuf_cache == 256, "default mbufs and cache");
	tap_ok(d.syncookie_slot_s == 64 && !d.syncookie_secret_set, "default SYN cookie settings");
	tap_ok(d.ip_ttl == 64 && d.stats_interval_s == 0, "default ip_ttl and stats_interval");
	tap_ok(d.log_level == LOG_LEVEL_INFO && d.n_events == 0, "default log level, no events");

	memset(&loaded, 0x5a, sizeof(loaded));
	rc = load_text("# nothing set\n[dataplane]\n", &loaded, err);
	tap_ok(rc == 0 && memcmp(&loaded, &d, sizeof(d)) == 0,
		"a file without keys gives exactly the defaults");
	rc = load_text("[event.7]\nname=x\nstarts_at=0\nends_at=1\nstock=0\n", &loaded, err);
	tap_ok(rc == 0 && loaded.mss == 1460 && loaded.n_events == 1 && loaded.events[0].id == 7,
		"a file with only an event keeps the [dataplane] defaults");
}

/* Files that load, and a check of what they set. */
struct good_case {
	const char *name;
	const char *text;
	int (*check)(const struct dp_config *c);
};

static int
chk_times_z_offset(const struct dp_config *c)
{
	/* The same instant written three ways, and Unix seconds. */
	return c->n_events == 3 && c->events[0].starts_at_ms == 1796119200000ull &&
	       c->events[1].starts_at_ms == 1796119200000ull &&
	       c->events[2].starts_at_ms == 1796119200000ull &&
	       c->events[0].ends_at_ms == 1796119200500ull &&
	       c->events[1].ends_at_ms == 1796119200000ull + 3600000 &&
	       c->events[2].ends_at_ms == 1796119200000ull + 60000;
}

static int
chk_durations(const struct dp_config *c)
{
	return c->syncookie_slot_s == 90 && c->stats_interval_s == 7200;
}

static int
chk_durations_max(const struct dp_config *c)
{
	return c->syncookie_slot_s == 600 && c->stats_interval_s == 86400;
}

static int
chk_ports(const struct dp_config *c)
{
	return c->n_listen_ports == 3 && c->listen_ports[0] == 80 && c->listen_ports[1] == 8080 &&
	       c->listen_ports[2] == 65535;
}

static int
chk_eight_ports(const struct dp_config *c)
{
	return c->n_listen_ports == 8 && c->listen_ports[7] == 8;
}

static int
chk_edge(const struct dp_config *c)
{
	return strcmp(c->edge_trusted, "198.18.0.7, 198.18.1.0/24 2001:db8::/32") == 0;
}

static int
chk_secret(const struct dp_config *c)
{
	static const uint8_t want[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc,
		0xba, 0x98, 0x76, 0x54, 0x32, 0x10};

	return c->syncookie_secret_set == 1 && memcmp(c->syncookie_secret, want, 16) == 0;
}

static int
chk_bounds(const struct dp_config *c)
{
	return c->mss == 536 && c->burst == 64 && c->rx_desc == 64 && c->tx_desc == 4096 &&
	       c->mbufs == 1048575 && c->mbuf_cache == 0 && c->ip_ttl == 255 &&
	       c->log_level == LOG_LEVEL_DEBUG;
}

static int
chk_layout(const struct dp_config *c)
{
	return c->mss == 1400 && c->burst == 16 && c->ipv4_addr == ip(10, 0, 0, 1) &&
	       c->n_events == 1 && strcmp(c->events[0].name, "双十一 sale") == 0 &&
	       c->events[0].stock == 100000000;
}

static int
chk_event_order(const struct dp_config *c)
{
	return c->n_events == 2 && c->events[0].id == 4294967295u && c->events[1].id == 3 &&
	       c->events[1].stock == 0;
}

static int
chk_foreign_skipped(const struct dp_config *c)
{
	return c->mss == 1400 && c->n_events == 0;
}

static const struct good_case good_cases[] = {
	{"the other programs' sections are skipped, whatever they hold",
		"[controlplane]\nid = 7\nanything = goes\n[dataplane]\nmss = 1400\n"
		"[redis]\nport = 6379\n[postgres]\nconninfo = dbname=x\n[order_writer]\nx = 1\n",
		chk_foreign_skipped},
	{"times in Z, +08:00, -05:30, fractions and Unix seconds",
		"[event.1]\nname=a\nstarts_at = 2026-12-01T10:00:00Z\n"
		"ends_at = 2026-12-01T10:00:00.5Z\nstock=1\n"
		"[event.2]\nname=b\nstarts_at = 2026-12-01T18:00:00+08:00\n"
		"ends_at = 2026-12-01t11:00:00z\nstock=1\n"
		"[event.3]\nname=c\nstarts_at = 2026-12-01T04:30:00-05:30\n"
		"ends_at = 1796119260\nstock=1\n",
		chk_times_z_offset},
	{"durations with units and combined units",
		"[dataplane]\nsyncookie_slot = 1m30s\nstats_interval = 2h\n", chk_durations},
	{"durations at their maximum", "[dataplane]\nsyncookie_slot = 600s\nstats_interval = 1d\n",
		chk_durations_max},
	{"a list of ports with spaces", "[dataplane]\nlisten_ports = 80 ,8080,  65535\n",
		chk_ports},
	{"eight ports", "[dataplane]\nlisten_ports = 1,2,3,4,5,6,7,8\n", chk_eight_ports},
	{"trusted edges, IPv4 and IPv6",
		"[edge]\ntrusted = 198.18.0.7, 198.18.1.0/24 2001:db8::/32\n", chk_edge},
	{"a SYN cookie secret in mixed case",
		"[dataplane]\nsyncookie_secret = 0123456789ABCDEFfedcba9876543210\n", chk_secret},
	{"every bound of every number",
		"[dataplane]\nmss=536\nburst=64\nrx_desc=64\ntx_desc=4096\nmbufs=1048575\n"
		"mbuf_cache=0\nip_ttl=255\nlog_level=debug\n",
		chk_bounds},
	{"CRLF, a BOM, indentation, comments and UTF-8",
		"\xef\xbb\xbf; comment\r\n[dataplane] ; the data plane\r\n  mss = 1400 ; inline\r\n"
		"\tburst = 16\r\n# another comment\r\naddress: 10.0.0.1\r\n\r\n"
		"[event.5]\r\n  name = \"双十一 sale\"\r\n  starts_at = 0\r\n  ends_at = 1\r\n"
		"  stock = 100000000\r\n",
		chk_layout},
	{"the largest id and a stock of zero, in file order",
		"[event.4294967295]\nname=x\nstarts_at=0\nends_at=1\nstock=1\n"
		"[event.3]\nname=y\nstarts_at=0\nends_at=1\nstock=0\n",
		chk_event_order},
};

static void
test_good_files(void)
{
	for (size_t i = 0; i < sizeof(good_cases) / sizeof(good_cases[0]); i++) {
		const struct good_case *g = &good_cases[i];
		struct dp_config c;
		char err[ERRLEN] = "";
		int rc = load_text(g->text, &c, err);

		if (!tap_ok(rc == 0 && g->check(&c), "loads: %s", g->name))
			tap_diag("rc %d: %s", rc, err);
	}
}

/*
 * Files that must be refused. want[0] must follow the file name at the start
 * of the message (":line: ..."); the other strings must appear anywhere; none
 * of the refuse[] strings may appear (a secret value).
 */
struct bad_case {
	const char *name;
	const char *text;
	const char *want[3];
	const char *refuse;
};

#define EV_OK "name=x\nstarts_at=0\nends_at=1\nstock=1\n"

static const struct bad_case bad_cases[] = {
	{"bad IPv4 address", "[dataplane]\naddress = 198.18.0.300\n",
		{":2: [dataplane] address: \"198.18.0.300\" is not an IPv4 address (expected "
		 "a.b.c.d)"}},
	{"IPv4 with a leading zero", "[dataplane]\naddress = 198.018.0.2\n",
		{":2: [dataplane] address: \"198.018.0.2\" is not an IPv4 address"}},
	{"IPv4 with three parts", "[dataplane]\naddress = 198.18.2\n",
		{":2: [dataplane] address:", "is not an IPv4 address"}},
	{"loopback address", "[dataplane]\n\naddress = 127.0.0.1\nmss = 1400\n",
		{":3: [dataplane] address: 127.0.0.1 cannot be the data plane's address"}},
	{"broadcast address", "[dataplane]\naddress = 255.255.255.255\n",
		{":2: [dataplane] address:", "broadcast"}},
	{"a trusted edge network with host bits", "[edge]\ntrusted = 198.18.0.7, 198.18.1.9/24\n",
		{":2: [edge] trusted: \"198.18.1.9/24\" has host bits set: the network is "
		 "198.18.1.0/24"}},
	{"a trusted edge that is no address", "[edge]\ntrusted = edge.example\n",
		{":2: [edge] trusted: \"edge.example\" is not an IPv4 or IPv6 address"}},
	{"a trusted edge file that is not there", "[edge]\ntrusted_file = /nonexistent/cdn.txt\n",
		{":2: [edge] trusted_file: /nonexistent/cdn.txt: cannot open: No such file"}},
	{"unknown key with a suggestion", "[dataplane]\nadress = 198.18.0.2\n",
		{":2: [dataplane] unknown key \"adress\"", "did you mean \"address\""}},
	{"unknown key without a suggestion", "[dataplane]\nfoo = 1\n",
		{":2: [dataplane] unknown key \"foo\"", "--help-config"}},
	{"unknown section", "[dataplan]\naddress = 198.18.0.2\n",
		{":1: unknown section [dataplan]", "did you mean [dataplane]"}},
	{"unknown section, even empty", "[dataplane]\n[foo]\n",
		{":2: unknown section [foo]", "[event.ID]"}},
	{"burst out of range", "; tuning\n[dataplane]\nburst = 500\n",
		{":3: [dataplane] burst: 500 is out of range 1..64"}},
	{"burst zero", "[dataplane]\nburst = 0\n", {":2: [dataplane] burst: 0 is out of range"}},
	{"mss below 536", "[dataplane]\nmss = 535\n",
		{":2: [dataplane] mss: 535 is out of range 536..1460"}},
	{"mss above 1460", "[dataplane]\nmss = 1461\n", {":2: [dataplane] mss: 1461 is out of"}},
	{"mss_floor below 536", "[dataplane]\nmss_floor = 535\n",
		{":2: [dataplane] mss_floor: 535 is out of range 536..1460"}},
	{"mss_floor above 1460", "[dataplane]\nmss_floor = 1461\n",
		{":2: [dataplane] mss_floor: 1461 is out of range 536..1460"}},
	{"host not a DNS name", "[dataplane]\nhost = sale.shop.example/x\n",
		{":2: [dataplane] host: \"sale.shop.example/x\" is not a DNS name"}},
	{"negative number", "[dataplane]\nip_ttl = -1\n",
		{":2: [dataplane] ip_ttl: \"-1\" is not a number (expected an integer in 1..255)"}},
	{"number larger than 64 bits", "[dataplane]\nmbufs = 99999999999999999999999\n",
		{":2: [dataplane] mbufs:", "is out of range 1023..1048575"}},
	{"number with a trailing unit", "[dataplane]\nmbufs = 8k\n",
		{":2: [dataplane] mbufs: \"8k\" is not a number"}},
	{"rx_desc not a power of two", "[dataplane]\nrx_desc = 1000\n",
		{":2: [dataplane] rx_desc: 1000 is not a power of two (such as 512 or 1024)"}},
	{"tx_desc above its range", "[dataplane]\ntx_desc = 8192\n",
		{":2: [dataplane] tx_desc: 8192 is out of range 64..4096"}},
	{"port 0", "[dataplane]\nlisten_ports = 80, 0\n",
		{":2: [dataplane] listen_ports: port 0 is out of range 1..65535"}},
	{"port 65536", "[dataplane]\nlisten_ports = 65536\n",
		{":2: [dataplane] listen_ports: port 65536 is out of range 1..65535"}},
	{"duplicate port", "[dataplane]\nlisten_ports = 80, 8080, 80\n",
		{":2: [dataplane] listen_ports: port 80 is listed twice"}},
	{"nine ports", "[dataplane]\nlisten_ports = 1,2,3,4,5,6,7,8,9\n",
		{":2: [dataplane] listen_ports:", "more than 8 ports"}},
	{"no port", "[dataplane]\nlisten_ports =\n",
		{":2: [dataplane] listen_ports: lists no port"}},
	{"empty entry in the port list", "[dataplane]\nlisten_ports = 80,,81\n",
		{":2: [dataplane] listen_ports: \"80,,81\" has an empty entry"}},
	{"trailing comma in the port list", "[dataplane]\nlisten_ports = 80,\n",
		{":2: [dataplane] listen_ports:", "empty entry"}},
	{"port by name", "[dataplane]\nlisten_ports = http\n",
		{":2: [dataplane] listen_ports: \"http\" is not a list of ports"}},
	{"secret too short", "[dataplane]\nsyncookie_secret = 0123456789abcdef0123456789abcd\n",
		{":2: [dataplane] syncookie_secret: expected 32 hex digits (16 bytes), got 30"},
		"0123456789abcdef"},
	{"secret too long", "[dataplane]\nsyncookie_secret = 0123456789abcdef0123456789abcdef0\n",
		{":2: [dataplane] syncookie_secret: expected 32 hex digits", "got 33"},
		"0123456789abcdef"},
	{"secret not hex", "[dataplane]\nsyncookie_secret = 0123456789abcdeg0123456789abcdef\n",
		{":2: [dataplane] syncookie_secret: character 16 is not a hex digit"},
		"0123456789abcde"},
	{"duration without a unit", "[dataplane]\nsyncookie_slot = 64\n",
		{":2: [dataplane] syncookie_slot: \"64\" is not a duration", "ms, s, m, h or d"}},
	{"duration out of range", "[dataplane]\nsyncookie_slot = 15m\n",
		{":2: [dataplane] syncookie_slot: \"15m\" is out of range 1s..10m"}},
	{"duration zero where 1s is the least", "[dataplane]\nsyncookie_slot = 0\n",
		{":2: [dataplane] syncookie_slot: \"0\" is out of range 1s..10m"}},
	{"duration not whole seconds", "[dataplane]\nsyncookie_slot = 1500ms\n",
		{":2: [dataplane] syncookie_slot: \"1500ms\" is not a whole number of seconds"}},
	{"duration with an unknown unit", "[dataplane]\nstats_interval = 5y\n",
		{":2: [dataplane] stats_interval: \"5y\" is not a duration"}},
	{"bad log level", "[dataplane]\nlog_level = verbose\n",
		{":2: [dataplane] log_level: \"verbose\" is not a log level",
			"err, warn, notice, info or debug"}},
	{"missing required key",
		"[event.1]\n" EV_OK "\n[event.3]\nname = x\nstarts_at = 0\n"
		"ends_at = 1\n",
		{":7: [event.3] missing required key \"stock\"", "stock = ...",
			"integer 0..100000000"}},
	{"empty event section", "[event.3]\n", {":1: [event.3] missing required key \"name\""}},
	{"ends_at before starts_at",
		"[event.2]\nname = x\nstarts_at = 2026-12-01T10:00:00Z\nends_at = "
		"2026-12-01T09:00:00Z\n"
		"stock = 1\n",
		{":4: [event.2] ends_at: 2026-12-01T09:00:00Z is not after starts_at "
		 "2026-12-01T10:00:00Z"}},
	{"ends_at equal to starts_at, written differently",
		"[event.2]\nname = x\nends_at = 2026-12-01T18:00:00+08:00\nstarts_at = 1796119200\n"
		"stock = 1\n",
		{":3: [event.2] ends_at:", "is not after starts_at"}},
	{"month 13", "[event.1]\nname=x\nstarts_at = 2026-13-01T00:00:00Z\n",
		{":3: [event.1] starts_at: \"2026-13-01T00:00:00Z\" is not a time", "RFC 3339"}},
	{"February 29 of a common year", "[event.1]\nname=x\nstarts_at = 2027-02-29T00:00:00Z\n",
		{":3: [event.1] starts_at: \"2027-02-29T00:00:00Z\" is not a time"}},
	{"time without an offset", "[event.1]\nname=x\nstarts_at = 2026-12-01T10:00:00\n",
		{":3: [event.1] starts_at:", "is not a time"}},
	{"time before 1970", "[event.1]\nname=x\nstarts_at = 1970-01-01T07:00:00+08:00\n",
		{":3: [event.1] starts_at:", "is not a time"}},
	{"stock out of range", "[event.1]\nname=x\nstarts_at=0\nends_at=1\nstock = 100000001\n",
		{":5: [event.1] stock: 100000001 is out of range 0..100000000"}},
	{"empty name", "[event.1]\nname =\n", {":2: [event.1] name: is empty"}},
	{"empty quoted name", "[event.1]\nname = \"\"\n", {":2: [event.1] name: is empty"}},
	{"name of 64 bytes",
		"[event.1]\nname = "
		"0123456789012345678901234567890123456789012345678901234567890123\n",
		{":2: [event.1] name:", "is 64 bytes long (expected 1..63)"}},
	{"name with a tab", "[event.1]\nname = a\tb\n",
		{":2: [event.1] name: \"a\\x09b\" is not valid UTF-8 text"}},
	{"name with a malformed UTF-8 byte", "[event.1]\nname = caf\xe9\n",
		{":2: [event.1] name:", "is not valid UTF-8 text"}},
	{"duplicate event id", "[event.1]\n" EV_OK "[event.2]\n" EV_OK "[event.1]\n" EV_OK,
		{":11: section [event.1] appears twice (first at line 1)"}},
	{"event id 0", "[event.0]\n" EV_OK,
		{":1: [event.0]: \"0\" is not a valid id", "positive integer"}},
	{"event id past 32 bits", "[event.4294967296]\n" EV_OK,
		{":1: [event.4294967296]: \"4294967296\" is not a valid id"}},
	{"event id with a leading zero", "[event.007]\n" EV_OK,
		{":1: [event.007]: \"007\" is not a valid id"}},
	{"event id not a number", "[event.abc]\n" EV_OK,
		{":1: [event.abc]: \"abc\" is not a valid id"}},
	{"event without an id", "[event]\n" EV_OK,
		{":1: section [event] needs an id, such as [event.1]"}},
	{"duplicate key", "[dataplane]\nmss = 1400\n\nmss = 1300\n",
		{":4: [dataplane] mss: set twice (first at line 2)"}},
	{"duplicate section", "[dataplane]\nmss = 1400\n[dataplane]\n",
		{":3: section [dataplane] appears twice (first at line 1)"}},
	{"key outside any section", "mss = 1400\n[dataplane]\n",
		{":1: key \"mss\" is outside any section"}},
	{"line without =", "[dataplane]\nmss 1400\n",
		{":2: expected \"key = value\" or \"[section]\""}},
	{"section without ]", "[dataplane\nmss = 1400\n",
		{":1: section header has no closing \"]\""}},
	{"text after ]", "[dataplane] mss = 1\n", {":1: unexpected text after \"]\""}},
	{"missing = with a time", "[event.1]\nstarts_at 2026-12-01T10:00:00Z\n",
		{":2: [event.1] \"starts_at 2026-12-01T10\" is not a key name"}},
};

static void
test_bad_files(const struct dp_config *example)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *b = &bad_cases[i];
		struct dp_config c;
		char err[ERRLEN] = "", head[ERRLEN];
		const char *path = write_tmp(b->text);
		int rc;
		int ok;

		memcpy(&c, example, sizeof(c)); /* memcpy, not =, so padding compares equal */
		rc = dp_config_load(&c, path, err, sizeof(err));
		unlink(path);
		snprintf(head, sizeof(head), "%s%s", path, b->want[0]);
		ok = rc == -EINVAL && strncmp(err, head, strlen(head)) == 0 &&
		     has(err, b->want[1]) && has(err, b->want[2]) &&
		     (b->refuse == NULL || !has(err, b->refuse));
		if (!tap_ok(ok, "refused with a precise message: %s", b->name))
			tap_diag("rc %d, message: %s", rc, err);
		tap_ok(memcmp(&c, example, sizeof(c)) == 0, "refused file changes nothing: %s",
			b->name);
	}
}

/* Loads the unreadable tmp_path into *c (equal to *example); 0 when refused with -EACCES and
 * *c unchanged, else bit 0 (a wrong refusal) and bit 1 (*c changed). */
static int
load_unreadable(struct dp_config *c, const struct dp_config *example)
{
	char err[256];
	int rc = dp_config_load(c, tmp_path, err, sizeof(err));
	int bad = rc == -EACCES && has(err, "Permission denied") ? 0 : 1;

	return bad | (memcmp(c, example, sizeof(*c)) != 0 ? 2 : 0);
}

static void
test_file_errors(const struct dp_config *example)
{
	struct dp_config c;
	char err[ERRLEN] = "";
	char big[400], text[600];
	int rc;

	memcpy(&c, example, sizeof(c));
	rc = dp_config_load(&c, "/nonexistent/flashgate.conf", err, sizeof(err));
	tap_ok(rc == -ENOENT && has(err, "/nonexistent/flashgate.conf") &&
			has(err, "No such file or directory"),
		"a missing file: -ENOENT, its path and the reason");
	rc = dp_config_load(&c, "tests", err, sizeof(err));
	tap_ok(rc == -EISDIR && has(err, "cannot read tests: Is a directory"),
		"a directory: -EISDIR and the reason");

	/* A line inih would cut in two and misread. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(text, sizeof(text), "[event.1]\nname = %s\n", big);
	write_tmp(text);
	rc = dp_config_load(&c, tmp_path, err, sizeof(err));
	unlink(tmp_path);
	tap_ok(rc == -EINVAL && has(err, ":2: line is longer than"), "an overlong line is refused");

	write_tmp_len("[dataplane]\nmss = 14\0"
		      "00\n",
		24);
	rc = dp_config_load(&c, tmp_path, err, sizeof(err));
	unlink(tmp_path);
	tap_ok(rc == -EINVAL && has(err, ":2: contains a NUL byte"), "a NUL byte is refused");

	/* Root reads anything: as root, the load runs in a child that drops to nobody. Bit 0 of
	 * the result: the refusal is wrong; bit 1: the config changed; 4: could not drop. */
	struct passwd *pw = geteuid() == 0 ? getpwnam("nobody") : NULL;
	int bad = 0;

	write_tmp("[dataplane]\n");
	chmod(tmp_path, 0);
	if (geteuid() != 0) {
		bad = load_unreadable(&c, example);
	} else if (pw != NULL) {
		pid_t pid = fork();
		int st = 0;

		if (pid == 0) {
			if (setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
				_exit(4);
			_exit(load_unreadable(&c, example));
		}
		bad = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 4;
	}
	unlink(tmp_path);
	if (geteuid() == 0 && pw == NULL) {
		tap_ok(1, "an unreadable file: -EACCES # SKIP root, and no user nobody to drop to");
		tap_ok(1, "unreadable files change nothing # SKIP root, and no user nobody");
	} else {
		tap_ok(!(bad & 5), "an unreadable file: -EACCES%s",
			geteuid() == 0 ? " (run as nobody: root reads anything)" : "");
		tap_ok(!(bad & 6), "unreadable files change nothing");
	}

	/* Too many sections: DP_MAX_EVENTS + 1. */
	char *many = malloc(64 * (DP_MAX_EVENTS + 1) + 1);
	size_t o = 0;

	for (unsigned i = 1; i <= DP_MAX_EVENTS + 1; i++)
		o += (size_t)sprintf(many + o, "[event.%u]\n" EV_OK, i);
	rc = load_text(many, &c, err);
	free(many);
	tap_ok(rc == -EINVAL &&
			has(err, ":321: [event.65]: too many [event.ID] sections (at most 64)"),
		"more than 64 events are refused at the 65th");
	tap_ok(memcmp(&c, example, sizeof(c)) == 0, "too many events change nothing");
}

struct set_case {
	const char *key;
	const char *value;
	const char *want; /* NULL: accepted */
};

static const struct set_case bad_sets[] = {
	{"dataplane.address", "198.18.0.300",
		"command line: dataplane.address: \"198.18.0.300\" is not an IPv4 address"},
	{"dataplane.address", "0.0.0.0", "command line: dataplane.address: 0.0.0.0 cannot be"},
	{"dataplane.adress", "1.2.3.4",
		"command line: dataplane.adress: unknown key \"adress\" (did you mean "
		"\"address\"?)"},
	{"dataplane.burst", "65", "command line: dataplane.burst: 65 is out of range 1..64"},
	{"dataplane.listen_ports", "80,80",
		"command line: dataplane.listen_ports: port 80 is listed twice"},
	{"dataplane.syncookie_secret", "xyz",
		"command line: dataplane.syncookie_secret: expected 32"},
	{"event.1.ends_at", "2025-01-01T00:00:00Z",
		"command line: event.1.ends_at: 2025-01-01T00:00:00Z is not after starts_at"},
	{"event.1.stock", "many", "command line: event.1.stock: \"many\" is not a number"},
	{"event.9.stock", "5", "command line: event.9.stock: there is no [event.9]"},
	{"event.1", "5", "command line: event.1: expected event.ID.key"},
	{"dataplan.mss", "1400", "command line: dataplan.mss: unknown section [dataplan]"},
	{"mss", "1400", "command line: mss: expected section.key"},
};

static void
test_overrides(const struct dp_config *example)
{
	struct dp_config c;
	char err[ERRLEN] = "";
	int rc;

	rc = load_text("[dataplane]\nmss = 1000\naddress = 10.1.1.1\n[event.4]\n" EV_OK, &c, err);
	tap_ok(rc == 0 && c.mss == 1000, "file sets mss 1000");
	rc = dp_config_set(&c, "dataplane.mss", "1200", err, sizeof(err));
	tap_ok(rc == 0 && c.mss == 1200, "override dataplane.mss wins over the file");
	rc = dp_config_set(&c, "dataplane.address", "198.18.0.9", err, sizeof(err));
	tap_ok(rc == 0 && c.ipv4_addr == ip(198, 18, 0, 9), "override dataplane.address");
	rc = dp_config_set(&c, "dataplane.syncookie_secret", "00112233445566778899aabbccddeeff",
		err, sizeof(err));
	tap_ok(rc == 0 && c.syncookie_secret_set == 1 && c.syncookie_secret[15] == 0xff,
		"override of the secret marks it as set");
	rc = dp_config_set(&c, "event.4.stock", "77", err, sizeof(err));
	tap_ok(rc == 0 && c.events[0].stock == 77, "override event.4.stock");
	rc = dp_config_set(&c, "event.4.starts_at", "2026-12-01T18:00:00+08:00", err, sizeof(err));
	tap_ok(rc == -EINVAL && has(err, "command line: event.4.starts_at:") &&
			has(err, "is not after starts_at"),
		"override that would put starts_at after ends_at is refused");
	rc = dp_config_set(&c, "dataplane.stats_interval", "30s", err, sizeof(err));
	tap_ok(rc == 0 && c.stats_interval_s == 30, "override dataplane.stats_interval 30s");

	for (size_t i = 0; i < sizeof(bad_sets) / sizeof(bad_sets[0]); i++) {
		const struct set_case *s = &bad_sets[i];
		struct dp_config before, t;

		memcpy(&before, example, sizeof(before));
		memcpy(&t, example, sizeof(t));
		rc = dp_config_set(&t, s->key, s->value, err, sizeof(err));
		if (!tap_ok(rc == -EINVAL && strncmp(err, s->want, strlen(s->want)) == 0,
			    "override %s=%s refused naming the command line", s->key, s->value))
			tap_diag("rc %d: %s", rc, err);
		tap_ok(memcmp(&t, &before, sizeof(t)) == 0, "refused override %s changes nothing",
			s->key);
	}
}

/* cfg_load_cli(): what a program's "-c FILE -s SECTION.KEY=VALUE..." gives. */
struct cli_case {
	const char *name;
	const char *path;    /* NULL: no -c */
	const char *sets[4]; /* NULL-terminated */
	int want_rc;
	const char *want_err; /* failure: the start of the message */
	int (*check)(const struct dp_config *c, const struct dp_config *example);
};

static int
cli_is_defaults(const struct dp_config *c, const struct dp_config *example)
{
	struct dp_config d;

	(void)example;
	dp_config_defaults(&d);
	return memcmp(c, &d, sizeof(d)) == 0;
}

static int
cli_is_example(const struct dp_config *c, const struct dp_config *example)
{
	return memcmp(c, example, sizeof(*c)) == 0;
}

static int
cli_overridden(const struct dp_config *c, const struct dp_config *example)
{
	struct dp_config want;

	memcpy(&want, example, sizeof(want));
	want.mss = 1200;
	want.events[0].stock = 77;
	return memcmp(c, &want, sizeof(want)) == 0;
}

static int
cli_last_wins(const struct dp_config *c, const struct dp_config *example)
{
	(void)example;
	return c->mss == 1000 && c->burst == 16 && c->n_events == 0;
}

static int
cli_value_with_eq(const struct dp_config *c, const struct dp_config *example)
{
	(void)example;
	return strcmp(c->events[0].name, "a=b") == 0 && c->events[1].id == 2;
}

static const struct cli_case cli_cases[] = {
	{"nothing given: the defaults", NULL, {NULL}, 0, NULL, cli_is_defaults},
	{"-c only: the file", "flashgate.conf", {NULL}, 0, NULL, cli_is_example},
	{"-c and -s: the overrides on top of the file", "flashgate.conf",
		{"dataplane.mss=1200", "event.1.stock=77", NULL}, 0, NULL, cli_overridden},
	{"-s alone: on top of the defaults, the last of a key wins", NULL,
		{"dataplane.mss=1400", "dataplane.burst=16", "dataplane.mss=1000", NULL}, 0, NULL,
		cli_last_wins},
	{"a value may hold '=' (split at the first)", "flashgate.conf", {"event.1.name=a=b", NULL},
		0, NULL, cli_value_with_eq},
	{"-s without '='", "flashgate.conf", {"dataplane.mss", NULL}, -EINVAL,
		"-s \"dataplane.mss\": expected SECTION.KEY=VALUE", NULL},
	{"a bad override after a good one", "flashgate.conf",
		{"dataplane.mss=1200", "dataplane.burst=65", NULL}, -EINVAL,
		"command line: dataplane.burst: 65 is out of range 1..64", NULL},
	{"an override of an event the file does not define", NULL, {"event.1.stock=5", NULL},
		-EINVAL, "command line: event.1.stock: there is no [event.1]", NULL},
	{"a file that is not there", "/nonexistent/flashgate.conf", {"dataplane.mss=1200", NULL},
		-ENOENT, "cannot open /nonexistent/flashgate.conf", NULL},
};

static void
test_load_cli(const struct dp_config *example)
{
	for (size_t i = 0; i < sizeof(cli_cases) / sizeof(cli_cases[0]); i++) {
		const struct cli_case *k = &cli_cases[i];
		char *sets[4], copies[4][64];
		unsigned n = 0;
		struct dp_config c, before;
		char err[ERRLEN] = "";
		int rc, same_argv = 1;

		for (; k->sets[n] != NULL; n++) {
			snprintf(copies[n], sizeof(copies[n]), "%s", k->sets[n]);
			sets[n] = copies[n];
		}
		memset(&c, 0x5a, sizeof(c));
		memcpy(&before, &c, sizeof(c));
		rc = cfg_load_cli(&dp_config_schema, &c, k->path, sets, n, err, sizeof(err));
		for (unsigned j = 0; j < n; j++)
			same_argv &= strcmp(sets[j], k->sets[j]) == 0;
		if (k->want_rc == 0) {
			if (!tap_ok(rc == 0 && k->check(&c, example), "load_cli: %s", k->name))
				tap_diag("rc %d: %s", rc, err);
		} else {
			if (!tap_ok(rc == k->want_rc &&
					    strncmp(err, k->want_err, strlen(k->want_err)) == 0,
				    "load_cli: %s is refused: %s", k->name, k->want_err))
				tap_diag("rc %d: %s", rc, err);
			tap_ok(memcmp(&c, &before, sizeof(c)) == 0, "load_cli: %s changes nothing",
				k->name);
		}
		tap_ok(same_argv, "load_cli: %s leaves the -s strings as they were", k->name);
	}
}

/* A copy of s with every run of spaces and newlines made one space. */
static char *
squeeze(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	for (; *s != '\0'; s++) {
		if (*s == ' ' || *s == '\n') {
			if (o == out || o[-1] != ' ')
				*o++ = ' ';
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

static void
test_doc_and_write(const struct dp_config *example)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int all = 1;

	dp_config_print_doc(f);
	fclose(f);
	/* The reference wraps long texts: compare with runs of blanks squeezed to one. */
	char *flat = squeeze(buf);

	for (size_t s = 0; s < dp_config_schema.n_sections; s++) {
		const struct cfg_section *sec = &dp_config_schema.sections[s];

		for (size_t k = 0; k < sec->n_keys; k++) {
			char line[80];

			snprintf(line, sizeof(line), "\n  %s = <", sec->keys[k].name);
			char *doc = squeeze(sec->keys[k].doc);

			if (!has(buf, line) || !has(flat, doc)) {
				tap_diag("key %s is not documented", sec->keys[k].name);
				all = 0;
			}
			free(doc);
		}
	}
	free(flat);
	tap_ok(all, "--help-config documents every key with its meaning");
	tap_ok(has(buf, "address = <IPv4 address a.b.c.d>\n      default: 198.18.0.2"),
		"--help-config shows a type and a default");
	tap_ok(has(buf, "rx_desc = <integer 64..4096, a power of two>"),
		"--help-config shows bounds");
	tap_ok(has(buf, "[event.ID]") && has(buf, "stock = <integer 0..100000000>\n      required"),
		"--help-config shows the event section and required keys");
	free(buf);

	/* What --check-config prints loads back to the same settings. */
	struct dp_config c, back;
	char err[ERRLEN] = "";
	int rc;

	memcpy(&c, example, sizeof(c));
	c.syncookie_secret_set = 1;
	memset(c.syncookie_secret, 0xab, sizeof(c.syncookie_secret));
	c.stats_interval_s = 90;
	c.n_listen_ports = 2;
	c.listen_ports[1] = 8080;
	f = open_memstream(&buf, &len);
	dp_config_write(f, &c);
	fclose(f);
	rc = cfg_load_string(&dp_config_schema, &back, "written", buf, err, sizeof(err));
	if (!tap_ok(rc == 0, "written settings load back"))
		tap_diag("%s\n%s", err, buf);
	c.syncookie_secret_set = 0;
	memset(c.syncookie_secret, 0, sizeof(c.syncookie_secret));
	tap_ok(memcmp(&c, &back, sizeof(c)) == 0, "written settings load back identical");
	tap_ok(!has(buf, "abababab") && has(buf, "; syncookie_secret = (set, not shown)"),
		"the secret is never written out");
	free(buf);
}

/* A schema with what the data plane does not use: a required plain section, booleans. */
struct mini {
	int flag;
	uint8_t small_flag;
	uint64_t big;
	char word[8];
};

static const struct cfg_key mini_keys[] = {
	{.name = "flag",
		.type = CFG_BOOL,
		.offset = offsetof(struct mini, flag),
		.size = sizeof(int),
		.def = "yes",
		.doc = "a flag"},
	{.name = "small_flag",
		.type = CFG_BOOL,
		.offset = offsetof(struct mini, small_flag),
		.size = 1,
		.def = "off",
		.doc = "a byte flag"},
	{.name = "big",
		.type = CFG_UINT,
		.offset = offsetof(struct mini, big),
		.size = 8,
		.flags = CFG_F_REQUIRED,
		.doc = "a required number"},
	{.name = "word",
		.type = CFG_STRING,
		.offset = offsetof(struct mini, word),
		.size = 8,
		.def = "",
		.doc = "a short word"},
};

static const struct cfg_section mini_sections[] = {
	{.name = "mini", .keys = mini_keys, .n_keys = 4},
};

static const struct cfg_schema mini_schema = {
	.sections = mini_sections,
	.n_sections = 1,
	.target_size = sizeof(struct mini),
};

static const struct cfg_key broken_keys[] = {
	{.name = "n", .type = CFG_UINT, .offset = 0, .size = 1, .max = 300, .def = "1"},
};

static const struct cfg_section broken_sections[] = {
	{.name = "b", .keys = broken_keys, .n_keys = 1},
};

static const struct cfg_schema broken_schema = {
	.sections = broken_sections,
	.n_sections = 1,
	.target_size = 8,
};

/* One key table shared by two programs, placed with cfg_section.offset (as [redis] is). */
struct shared_part {
	uint32_t port;
};

struct with_offset {
	uint64_t before;
	struct shared_part part;
};

static const struct cfg_key shared_keys[] = {
	{
		.name = "port",
		.type = CFG_UINT,
		.offset = offsetof(struct shared_part, port),
		.size = sizeof(uint32_t),
		.min = 1,
		.max = 65535,
		.def = "6379",
		.doc = "a port",
	},
};

static const struct cfg_section offset_sections[] = {
	{
		.name = "part",
		.doc = "a section at an offset",
		.keys = shared_keys,
		.n_keys = 1,
		.offset = offsetof(struct with_offset, part),
	},
};

static const struct cfg_schema offset_schema = {
	.sections = offset_sections,
	.n_sections = 1,
	.target_size = sizeof(struct with_offset),
};

static void
test_section_offset(void)
{
	struct with_offset w;
	char err[ERRLEN] = "", buf[256] = "";
	int rc;

	rc = cfg_defaults(&offset_schema, &w, err, sizeof(err));
	tap_ok(rc == 0 && w.part.port == 6379 && w.before == 0,
		"section offset: the default lands in the shared part, nothing before it");
	rc = cfg_load_string(&offset_schema, &w, "o.conf", "[part]\nport = 80\n", err, sizeof(err));
	tap_ok(rc == 0 && w.part.port == 80 && w.before == 0, "section offset: a loaded value too");
	rc = cfg_set(&offset_schema, &w, "part.port", "81", err, sizeof(err));
	tap_ok(rc == 0 && w.part.port == 81 && w.before == 0, "section offset: an override too");
	rc = cfg_set(&offset_schema, &w, "part.port", "0", err, sizeof(err));
	tap_ok(rc == -EINVAL && w.part.port == 81, "section offset: a bad override changes nothing");
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	cfg_write(f, &offset_schema, &w);
	fclose(f);
	tap_ok(has(buf, "port = 81"), "section offset: the settings are written from the part");
}

static void
test_generic(void)
{
	struct mini m;
	char err[ERRLEN] = "";
	uint64_t t[1];
	int rc;

	rc = cfg_load_string(&mini_schema, &m, "mini.conf",
		"[mini]\nflag = off\nsmall_flag = TRUE\nbig = 18446744073709551615\nword = "
		"abcdefg\n",
		err, sizeof(err));
	tap_ok(rc == 0 && m.flag == 0 && m.small_flag == 1 && m.big == UINT64_MAX &&
			strcmp(m.word, "abcdefg") == 0,
		"generic: booleans, a 64-bit number and a full string");
	rc = cfg_load_string(&mini_schema, &m, "mini.conf", "# empty\n", err, sizeof(err));
	tap_ok(rc == -EINVAL &&
			strcmp(err, "mini.conf: missing section [mini] (it must set \"big\")") == 0,
		"generic: an absent section with a required key is named");
	rc = cfg_load_string(
		&mini_schema, &m, "mini.conf", "[mini]\nbig=1\nflag = maybe\n", err, sizeof(err));
	tap_ok(rc == -EINVAL && has(err, "mini.conf:3: [mini] flag: \"maybe\" is not a boolean"),
		"generic: a bad boolean is named");
	rc = cfg_defaults(&broken_schema, t, err, sizeof(err));
	tap_ok(rc == -EINVAL && has(err, "configuration schema"),
		"generic: a key table whose bounds do not fit the field is refused");
}

/* ------------------------------------------------------------------------------------------ */
/* Logging                                                                                    */

static int saved_stderr = -1;
static char capture_path[64];

static void
capture_begin(void)
{
	int fd;

	snprintf(capture_path, sizeof(capture_path), "/tmp/fg-test-log-XXXXXX");
	fd = mkstemp(capture_path);
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

/* Restores stderr and returns what was written (malloc'd). */
static char *
capture_end(void)
{
	FILE *f;
	char *buf;
	long n;

	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	f = fopen(capture_path, "r");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		buf[0] = '\0';
	fclose(f);
	unlink(capture_path);
	return buf;
}

static unsigned
count_lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static uint64_t fake_now;

static uint64_t
fake_clock(void)
{
	return __atomic_load_n(&fake_now, __ATOMIC_RELAXED);
}

static int evaluated;

static int
side_effect(void)
{
	return ++evaluated;
}

static void
rl_site(int i)
{
	LOG_RL(LOG_LEVEL_WARN, 1000, "rl %d", i);
}

static void
rl_other_site(void)
{
	LOG_RL(LOG_LEVEL_WARN, 1000, "other site");
}

#define LOG_THREADS 8
#define LOG_LINES   200

static void *
log_thread(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < LOG_LINES; i++)
		LOG_NOTICE("thread %ld line %d of a message long enough to be written in pieces if "
			   "the "
			   "logger used stdio instead of one write",
			t, i);
	return NULL;
}

static void *
rl_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < LOG_LINES; i++)
		rl_site(i);
	return NULL;
}

static void
test_log(void)
{
	static const char *const names[] = {"err", "warn", "notice", "info", "debug"};
	enum log_level l = LOG_LEVEL_INFO;
	int ok = 1;
	char *out, re_text[256];
	regex_t re;

	for (int i = 0; i < 5; i++)
		ok &= log_parse_level(names[i], &l) == 0 && (int)l == i &&
		      strcmp(log_level_name(l), names[i]) == 0;
	tap_ok(ok, "log: every level name parses and prints back");
	l = LOG_LEVEL_NOTICE;
	tap_ok(log_parse_level("ERR", &l) == -EINVAL && log_parse_level("warning", &l) == -EINVAL &&
			log_parse_level("", &l) == -EINVAL &&
			log_parse_level(NULL, &l) == -EINVAL && l == LOG_LEVEL_NOTICE,
		"log: other names are refused and leave the output alone");

	log_set_program("fgtest");
	log_set_level(LOG_LEVEL_INFO);
	capture_begin();
	LOG_WARN("hello %d", 42);
	out = capture_end();
	snprintf(re_text, sizeof(re_text),
		"^[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{3}Z "
		"fgtest\\[%ld\\] warn: hello 42\n$",
		(long)getpid());
	regcomp(&re, re_text, REG_EXTENDED | REG_NOSUB);
	if (!tap_ok(regexec(&re, out, 0, NULL, 0) == 0, "log: line format"))
		tap_diag("got: %s", out);
	regfree(&re);
	free(out);

	log_set_level(LOG_LEVEL_WARN);
	tap_eq_int(log_get_level(), LOG_LEVEL_WARN, "log: level set and read back");
	evaluated = 0;
	capture_begin();
	LOG_INFO("not shown %d", side_effect());
	LOG_DEBUG("not shown %d", side_effect());
	LOG_NOTICE("not shown");
	LOG_WARN("shown warn");
	LOG_ERR("shown err");
	log_msg(LOG_LEVEL_INFO, "not shown either");
	out = capture_end();
	tap_ok(count_lines(out) == 2 && has(out, "warn: shown warn\n") &&
			has(out, "err: shown err\n"),
		"log: messages above the level are filtered");
	tap_eq_int(evaluated, 0, "log: arguments of filtered messages are not evaluated");
	free(out);

	log_set_level(LOG_LEVEL_DEBUG);
	capture_begin();
	LOG_DEBUG("user \"%s\"", "bob\nfake line\r\x1b[31m");
	out = capture_end();
	tap_ok(count_lines(out) == 1 &&
			has(out, "debug: user \"bob\\x0afake line\\x0d\\x1b[31m\"\n"),
		"log: control characters are escaped, one line per message");
	free(out);

	char *big = malloc(5000);

	memset(big, 'y', 4999);
	big[4999] = '\0';
	capture_begin();
	LOG_INFO("%s", big);
	out = capture_end();
	tap_ok(count_lines(out) == 1 && strlen(out) < 1100 && has(out, "yyy...\n"),
		"log: a long message is cut with ... on one line");
	free(out);
	free(big);

	/* Rate limiting, on a clock the test moves. */
	log_set_clock(fake_clock);
	fake_now = 1000000;
	capture_begin();
	for (int i = 0; i < 38; i++)
		rl_site(i);
	rl_other_site();
	fake_now += 999;
	rl_site(100);
	fake_now += 1;
	rl_site(200);
	fake_now += 1000;
	rl_site(300);
	out = capture_end();
	tap_eq_int(count_lines(out), 4, "log RL: one line per interval per call site");
	tap_ok(has(out, "warn: rl 0\n") && has(out, "warn: other site\n"),
		"log RL: the first call at each site is written as is");
	tap_ok(has(out, "warn: rl 200 (38 similar suppressed)\n"),
		"log RL: the next line says how many were suppressed");
	tap_ok(has(out, "warn: rl 300\n"), "log RL: nothing suppressed, nothing said");
	free(out);

	/* Many threads on one site at one instant: one line, and every other call counted. */
	pthread_t th[LOG_THREADS];

	fake_now += 1000;
	capture_begin();
	for (long t = 0; t < LOG_THREADS; t++)
		pthread_create(&th[t], NULL, rl_thread, (void *)t);
	for (int t = 0; t < LOG_THREADS; t++)
		pthread_join(th[t], NULL);
	fake_now += 1000;
	rl_site(-1);
	out = capture_end();
	snprintf(re_text, sizeof(re_text), "rl -1 (%d similar suppressed)\n",
		LOG_THREADS * LOG_LINES - 1);
	tap_ok(count_lines(out) == 2 && has(out, re_text),
		"log RL: concurrent calls write once and count every suppressed call");
	free(out);
	log_set_clock(NULL);

	/* Lines from many threads never interleave. */
	capture_begin();
	for (long t = 0; t < LOG_THREADS; t++)
		pthread_create(&th[t], NULL, log_thread, (void *)t);
	for (int t = 0; t < LOG_THREADS; t++)
		pthread_join(th[t], NULL);
	out = capture_end();
	regcomp(&re,
		"^[0-9T:.Z-]{24} fgtest\\[[0-9]+\\] notice: thread [0-9] line [0-9]+ of a message "
		"long enough to be written in pieces if the logger used stdio instead of one "
		"write$",
		REG_EXTENDED | REG_NOSUB);
	unsigned good = 0;
	for (char *save = NULL, *line = strtok_r(out, "\n", &save); line != NULL;
		line = strtok_r(NULL, "\n", &save))
		good += regexec(&re, line, 0, NULL, 0) == 0;
	regfree(&re);
	tap_eq_int(good, LOG_THREADS * LOG_LINES, "log: concurrent lines are all whole");
	free(out);
	log_set_level(LOG_LEVEL_INFO);
}

int
main(void)
{
	struct dp_config example;

	test_example_file(&example);
	test_defaults();
	test_good_files();
	test_bad_files(&example);
	test_file_errors(&example);
	test_overrides(&example);
	test_load_cli(&example);
	test_doc_and_write(&example);
	test_generic();
	test_section_offset();
	test_log();
	return tap_done();
}

/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_PARSE_H
#define FG_COMMON_PARSE_H
/*
 * The value parsers of every program, one copy each: the config loader (common/config.c), the
 * admin protocol (controlplane/admin_*.c, flashgatectl) and the tools' options (tools/). Each
 * takes a whole NUL-terminated string (no sign, no spaces around it unless said) and returns 0,
 * or a negative errno and leaves its outputs as they were; the caller writes the message, which
 * names its key or option and what was given. Nothing here allocates or logs.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PARSE_TIME_MAX_S 253402300799ull /* 9999-12-31T23:59:59Z */

/*
 * A run of decimal digits at s (at least one; no sign): *out its value, *end the first byte
 * after it. Returns 0; -EINVAL when s does not start with a digit; -ERANGE past 2^64 - 1 (*end
 * is set then too, so that a message can quote the number).
 */
int parse_u64_prefix(const char *s, const char **end, uint64_t *out);

/*
 * A decimal whole number in [min, max], digits only: no sign ('+' or '-'), no spaces, nothing
 * after it; leading zeros are allowed. Returns 0; -EINVAL when s is not such a number (empty
 * included); -ERANGE when it is one but outside [min, max] or past 2^64 - 1.
 */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * A decimal fraction in [min, max]: a digit first, then digits, '.' and an exponent ("0.25",
 * "1e9"); no sign, spaces, hex, inf or nan. Returns 0 or -EINVAL.
 */
int parse_double(const char *s, double min, double max, double *out);

/*
 * A duration: "0", or one or more <number><unit> with unit ms, s, m, h or d ("1h30m"), in
 * milliseconds. Returns 0, or -EINVAL (no unit, a sign, a space, a fraction, an overflow).
 */
int parse_duration(const char *s, uint64_t *out_ms);

/* Writes ms with the largest unit that divides it exactly ("64s", "15m", "1500ms", "0"). */
void parse_duration_format(uint64_t ms, char *buf, size_t len);

/*
 * A time: an RFC 3339 date-time with Z or a +hh:mm/-hh:mm offset ("2026-12-01T10:00:00Z",
 * "2026-12-01T18:00:00.250+08:00"; 'T' and 'Z' in either case), or Unix seconds ("1764583200"),
 * up to PARSE_TIME_MAX_S, in Unix ms. Digits past the millisecond are dropped. Returns 0, or
 * -EINVAL (a date that does not exist such as 2026-02-29, 24:00, a time without an offset, a
 * time before 1970).
 */
int parse_time(const char *s, uint64_t *out_ms);

/* Writes ms as "2026-12-01T10:00:00Z" (with ".123" when not a whole second): parse_time() reads
 * it back to the same value. */
void parse_time_format(uint64_t ms, char *buf, size_t len);

/*
 * "a.b.c.d": four decimal octets 0..255 without leading zeros (which inet_aton() would read as
 * octal), in host byte order. Returns 0 or -EINVAL.
 */
int parse_ipv4(const char *s, uint32_t *out);

/*
 * An IPv4 network "a.b.c.d/len" (len 0..32, digits) or an address "a.b.c.d" (len 32): *addr in
 * host byte order, *prefix. Returns 0; -EINVAL when the address is not parse_ipv4()'s;
 * -ERANGE when len is not 0..32; -EDOM when the address has bits set past the prefix: then
 * *addr is the network (those bits cleared) and *prefix its length, for the message.
 */
int parse_cidr(const char *s, uint32_t *addr, unsigned *prefix);

/*
 * parse_ipv4() of s[0..len), which need not be NUL-terminated (a header field's value): never
 * reads s[len]. Returns 0 or -EINVAL.
 */
int parse_ipv4_n(const char *s, size_t len, uint32_t *out);

/*
 * An IPv6 address in s[0..len) (RFC 4291 §2.2: eight groups of 1..4 hex digits, either case, one
 * "::" for a run of zero groups, the last 32 bits optionally as a dotted IPv4 address;
 * no zone "%...", no brackets), never reading s[len]: out[0..16) in network byte order.
 * Returns 0 or -EINVAL (out unchanged).
 */
int parse_ipv6_n(const char *s, size_t len, uint8_t out[16]);

/*
 * An IPv6 network "addr/len" (len 0..128, digits) or an address (len 128), like parse_cidr():
 * 0; -EINVAL when the address is not parse_ipv6_n()'s; -ERANGE when len is not 0..128; -EDOM
 * when the address has bits set past the prefix: then *addr is the network and *prefix its
 * length, for the message.
 */
int parse_cidr6(const char *s, uint8_t addr[16], unsigned *prefix);

/* The network mask of a prefix length 0..32, host byte order (0 for /0). */
static inline uint32_t
parse_prefix_mask(unsigned prefix)
{
	return prefix == 0 ? 0 : UINT32_MAX << (32 - prefix);
}

/*
 * Hex digits, either case, an even number of them, as bytes into out[0..cap) (common/hex.h's
 * hex_decode() of a C string, with a message's details). Returns 0 with the byte count in *len; -EINVAL when a character is not a hex digit (*len: its offset; a secret's
 * message can say where without quoting it); -ERANGE when the number of digits is odd or more
 * than 2 * cap (*len: that number). out is written only on success.
 */
int parse_hex(const char *s, uint8_t *out, size_t cap, size_t *len);

/*
 * Checks len bytes of text: UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past
 * U+10FFFF) without control characters (C0, DEL, C1). Returns -1 when it is fine, else the
 * offset of the first bad byte and in *ctl whether it is a control character (else invalid
 * UTF-8).
 */
long parse_text_check(const char *s, size_t len, bool *ctl);

/* The number of decimal digits of v, 1..20 (the length of its text): log10 from the bit length,
 * then one compare, for the token minting path. */
static inline unsigned
parse_dec_digits(uint64_t v)
{
	/* pow10[0] is 0, not 1: t is 0 for v = 0..7, all of one digit (0 included). */
	/* clang-format off */
	static const uint64_t pow10[20] = {
		UINT64_C(0), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000),
		UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000),
		UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000),
		UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
		UINT64_C(1000000000000000), UINT64_C(10000000000000000),
		UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
		UINT64_C(10000000000000000000),
	};
	/* clang-format on */
	/* With b bits, v has t or t + 1 digits for t = floor(b * log10(2)); 1233 / 4096 is
	 * log10(2) closely enough for b <= 64. v >= 10^t tells which. */
	unsigned t = (unsigned)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;

	return t + (v >= pow10[t]);
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The order writer's list of control-plane endpoints ([order_writer] push_endpoint), split and
 * checked: apart from the link itself so that the configuration check (ow_config.c, and its
 * fuzz target) needs no ZeroMQ library.
 */
#include "order-writer/ow_link.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether ep (len bytes, no blanks) looks like an endpoint ZeroMQ can connect to. */
static bool
endpoint_ok(const char *ep, size_t len)
{
	static const char *const schemes[] = {"tcp://", "ipc://", "inproc://"};

	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		size_t sl = strlen(schemes[i]);

		if (len <= sl || strncmp(ep, schemes[i], sl) != 0)
			continue;
		if (i > 0)
			return true;
		/* tcp://HOST:PORT: a port after the last colon, a host before it. */
		const char *colon = NULL;

		for (const char *p = ep + sl; p < ep + len; p++)
			if (*p == ':')
				colon = p;
		if (colon == NULL || colon == ep + sl || colon + 1 == ep + len)
			return false;
		for (const char *p = colon + 1; p < ep + len; p++)
			if (*p < '0' || *p > '9')
				return false;
		return true;
	}
	return false;
}

int
ow_link_split(const char *list, char out[][OW_LINK_EP_MAX], char *err, size_t errlen)
{
	int n = 0;
	const char *p = list;

	for (;;) {
		const char *end = strchr(p, ',');
		const char *e = end != NULL ? end : p + strlen(p);

		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		size_t len = (size_t)(e - p);

		if (len == 0) {
			snprintf(err, errlen,
				"item %d of the list is empty (endpoints separated by "
				"commas, such as tcp://cp1:5601,tcp://cp2:5601)",
				n + 1);
			return -EINVAL;
		}
		if (n == OW_LINK_PEERS_MAX) {
			snprintf(err, errlen, "more than %d control planes", OW_LINK_PEERS_MAX);
			return -EINVAL;
		}
		if (len >= OW_LINK_EP_MAX || !endpoint_ok(p, len)) {
			snprintf(err, errlen,
				"\"%.*s\" is not an endpoint: tcp://HOST:PORT, ipc://PATH or "
				"inproc://NAME, under %d characters",
				(int)(len < 200 ? len : 200), p, OW_LINK_EP_MAX);
			return -EINVAL;
		}
		memcpy(out[n], p, len);
		out[n][len] = '\0';
		n++;
		if (end == NULL)
			return n;
		p = end + 1;
	}
}

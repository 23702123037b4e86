/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "tools/loadgen/lg_pcap.h"

/* libpcap file format: the global header, then a record header before each frame. */
struct pcap_file_hdr {
	uint32_t magic;
	uint16_t version_major, version_minor;
	int32_t thiszone;
	uint32_t sigfigs, snaplen, linktype;
};

struct pcap_rec_hdr {
	uint32_t ts_sec, ts_usec, incl_len, orig_len;
};

#define PCAP_MAGIC_USEC	   0xa1b2c3d4u
#define PCAP_LINK_ETHERNET 1u
#define PCAP_SNAPLEN	   65535u

int
lg_pcap_open(
	struct lg_pcap *p, const char *path, uint64_t max_frames, uint64_t tsc_now, uint64_t hz)
{
	struct pcap_file_hdr h = {
		.magic = PCAP_MAGIC_USEC,
		.version_major = 2,
		.version_minor = 4,
		.snaplen = PCAP_SNAPLEN,
		.linktype = PCAP_LINK_ETHERNET,
	};
	struct timespec ts;

	memset(p, 0, sizeof(*p));
	p->f = fopen(path, "wb");
	if (p->f == NULL)
		return -errno;
	if (fwrite(&h, sizeof(h), 1, p->f) != 1) {
		int e = errno ? errno : EIO;

		fclose(p->f);
		p->f = NULL;
		return -e;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	p->t0_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	p->tsc0 = tsc_now;
	p->hz = hz ? hz : 1;
	p->max_frames = max_frames;
	return 0;
}

void
lg_pcap_write(struct lg_pcap *p, const void *frame, uint32_t len, uint64_t tsc)
{
	if (p->f == NULL || p->frames >= p->max_frames || p->err)
		return;
	uint64_t d = tsc - p->tsc0;
	/* Split the division so cycles * 1e9 cannot overflow. */
	uint64_t ns = p->t0_ns + d / p->hz * 1000000000u + d % p->hz * 1000000000u / p->hz;
	uint32_t incl = len < PCAP_SNAPLEN ? len : PCAP_SNAPLEN;
	struct pcap_rec_hdr r = {
		.ts_sec = (uint32_t)(ns / 1000000000u),
		.ts_usec = (uint32_t)(ns % 1000000000u / 1000u),
		.incl_len = incl,
		.orig_len = len,
	};

	if (fwrite(&r, sizeof(r), 1, p->f) != 1 || fwrite(frame, incl, 1, p->f) != 1)
		p->err = errno ? errno : EIO;
	p->frames++;
}

int
lg_pcap_close(struct lg_pcap *p)
{
	int rc = p->err ? -p->err : 0;

	if (p->f != NULL && fclose(p->f) != 0 && rc == 0)
		rc = -errno;
	p->f = NULL;
	return rc;
}

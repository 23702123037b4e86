/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_PCAP_H
#define FG_LG_PCAP_H
/*
 * A pcap file (the classic libpcap format, Ethernet link type, microsecond timestamps) of
 * the frames the load generator sends and receives, for Wireshark or tcpdump -r. Writes go
 * through stdio's buffer; capturing slows a run down, so it stops after max_frames.
 */
#include <stdint.h>
#include <stdio.h>

struct lg_pcap {
	FILE *f;
	uint64_t frames, max_frames;
	uint64_t t0_ns; /* wall clock (ns) at TSC tsc0 */
	uint64_t tsc0, hz;
	int err; /* first write error (errno), 0 if none */
};

/*
 * Creates (truncates) path and writes the file header. Timestamps are the wall clock at the
 * call plus TSC time since (hz cycles a second). Returns 0, or a negative errno.
 */
int lg_pcap_open(
	struct lg_pcap *p, const char *path, uint64_t max_frames, uint64_t tsc_now, uint64_t hz);

/* Appends len bytes of a frame seen at TSC tsc, unless max_frames were written already. */
void lg_pcap_write(struct lg_pcap *p, const void *frame, uint32_t len, uint64_t tsc);

/* Flushes and closes the file. Returns 0, or the negative errno of the first failed write. */
int lg_pcap_close(struct lg_pcap *p);

#endif

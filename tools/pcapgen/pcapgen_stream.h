/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TOOLS_PCAPGEN_STREAM_H
#define FG_TOOLS_PCAPGEN_STREAM_H
/*
 * Stateless request streams for a packet replayer (pktgen-dpdk -s, tcpreplay, DPDK's net_pcap
 * vdev): every frame is complete and can be sent as it is, in any order, with no answer read.
 * Frame i of a stream depends only on the stream's settings, its seed and i, so a stream can be
 * rebuilt and any one frame checked on its own. The frames are built by the load generator's own
 * builders (tools/loadgen/lg_pkt.h), checksums in software.
 *
 *   syn      SYN with the MSS option; the data plane answers SYN-ACK <ACK=ISN+1>
 *   bad-ack  ACK+PSH with "GET /healthz" and an ACK no SYN cookie of the data plane made; the
 *            data plane answers RST <SEQ=SEG.ACK> and counts rst_bad_cookie
 *   arp      broadcast ARP request "who has --dst"; the data plane answers with its MAC
 *   reserve  whole connections, three frames each, as a client that knows the data plane's
 *            syncookie_secret sends them at once (the loadgen's reserve-blast): the SYN, the
 *            ACK carrying "POST <reserve path>" with user (user_base + i)'s purchase token
 *            (its ACK the SYN cookie the data plane will have answered with, + 1), and the
 *            FIN. The data plane answers SYN-ACK, 202 + receipt with its FIN, and the ACK of
 *            ours. Cookies hold while the data plane's cookie slot is that of now_s or the
 *            next one (one to two syncookie_slot periods: replay soon after writing), tokens
 *            until expires_s.
 *
 * Source address of connection i (frame i of the one-frame streams): host (h0 + i) mod n of
 * --src-net; source port 1024 + (p0 + i div n) mod 64512, where h0 and p0 come from the seed. So
 * no two connections of a stream share an address and port while count <= n * 64512
 * (pcapgen_stream_init() refuses more).
 */
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "common/token.h"
#include "net/tcp_syncookie.h"
#include "tools/loadgen/lg_pkt.h"

#define PCAPGEN_SPORT_MIN   1024u
#define PCAPGEN_SPORT_COUNT (65536u - PCAPGEN_SPORT_MIN)
#define PCAPGEN_FRAME_ROOM  2048u

enum pcapgen_stream_kind {
	PCAPGEN_STREAM_SYN,
	PCAPGEN_STREAM_BAD_ACK,
	PCAPGEN_STREAM_ARP,
	PCAPGEN_STREAM_RESERVE,
};

#define PCAPGEN_HOST_MAX 64

/* What a reserve stream needs of the data plane's secrets and its sale. */
struct pcapgen_reserve_cfg {
	uint8_t cookie_secret[16]; /* its syncookie_secret */
	uint32_t cookie_slot_s;	   /* its syncookie_slot */
	uint64_t now_s;		   /* the cookies' time */
	struct tok_keyring sale;   /* its current sale key */
	uint32_t event;
	uint64_t user_base;	     /* connection i is user user_base + i */
	uint64_t expires_s;	     /* of the purchase tokens */
	char host[PCAPGEN_HOST_MAX]; /* the Host header */
};

/* What to write; addresses and ports in host order. */
struct pcapgen_stream_cfg {
	enum pcapgen_stream_kind kind;
	uint64_t count;	   /* frames */
	uint32_t src_base; /* first client address of --src-net */
	uint32_t n_src;	   /* client addresses from src_base on */
	uint32_t dst_ip;   /* the data plane */
	uint16_t dport;
	struct rte_ether_addr src_mac, dst_mac;
	uint64_t seed;
	struct pcapgen_reserve_cfg reserve; /* --stream reserve only */
};

/* The flow of one frame, for checks and reports. */
struct pcapgen_flow {
	uint32_t src_ip;
	uint16_t sport;
	uint32_t seq, ack; /* TCP only */
	uint64_t user;	   /* reserve: the connection's user */
};

/* A stream being written: its settings and one frame buffer (an mbuf laid over plain memory,
 * never from a pool: the builders only need its data room, so no EAL is involved). */
struct pcapgen_stream {
	struct pcapgen_stream_cfg cfg;
	struct lg_link link;
	uint32_t h0, p0;
	struct syncookie_ctx cookies; /* reserve: the data plane's, at cfg.reserve.now_s */
	char path[TOK_BUF_SIZE + 48]; /* reserve: /api/v1/events/<event>/reserve/<kid>-<key> */
	char req[1024];		      /* reserve: the request of connection req_conn - 1 */
	uint64_t req_conn;	      /* 0: none built yet */
	uint16_t req_len;
	struct rte_mbuf m;
	uint8_t room[PCAPGEN_FRAME_ROOM];
};

/* The request of a bad-ack frame. */
#define PCAPGEN_BAD_ACK_REQUEST \
	"GET /healthz HTTP/1.1\r\nHost: flashgate\r\nUser-Agent: flashgate-pcapgen\r\n\r\n"

/*
 * Parses a stream name ("syn", "bad-ack", "arp", "reserve") into *kind. Returns 0, or -EINVAL for
 * any other name.
 */
int pcapgen_stream_kind_parse(const char *name, enum pcapgen_stream_kind *kind);

/* The name of a stream kind, as pcapgen_stream_kind_parse() takes it. */
const char *pcapgen_stream_kind_name(enum pcapgen_stream_kind kind);

/*
 * Sets s up for cfg. Returns 0; -EINVAL when count is 0, n_src is 0, or count exceeds the
 * n_src * 64512 distinct address/port pairs; -EDOM when the port is 0 for a TCP stream;
 * -ENOKEY when a reserve stream has no current sale key (or its path cannot be made).
 */
int pcapgen_stream_init(struct pcapgen_stream *s, const struct pcapgen_stream_cfg *cfg);

/* How many frames the stream has: count, three per connection for reserve. */
uint64_t pcapgen_stream_frames(const struct pcapgen_stream *s);

/*
 * Builds frame i (i < pcapgen_stream_frames(s)) into s's buffer and returns it, its length in *len
 * and, when flow is not NULL, its flow. The frame stays valid until the next call on s. Never fails
 * for an i below the frame count; returns NULL for any other i.
 */
const uint8_t *pcapgen_stream_frame(
	struct pcapgen_stream *s, uint64_t i, uint16_t *len, struct pcapgen_flow *flow);

/*
 * Writes the whole stream to path as a classic pcap file (Ethernet, microsecond timestamps
 * 1 us apart from the time of writing). Returns 0, or a negative errno of the failed open or
 * write (the file may then be incomplete).
 */
int pcapgen_stream_write_pcap(struct pcapgen_stream *s, const char *path);

#endif

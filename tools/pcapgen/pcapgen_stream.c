/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/loadgen/lg_pcap.h"
#include "tools/pcapgen/pcapgen_stream.h"

static const char *const kind_names[] = {
	[PCAPGEN_STREAM_SYN] = "syn",
	[PCAPGEN_STREAM_BAD_ACK] = "bad-ack",
	[PCAPGEN_STREAM_ARP] = "arp",
	[PCAPGEN_STREAM_RESERVE] = "reserve",
};

int
pcapgen_stream_kind_parse(const char *name, enum pcapgen_stream_kind *kind)
{
	for (unsigned k = 0; k < RTE_DIM(kind_names); k++) {
		if (strcmp(name, kind_names[k]) == 0) {
			*kind = (enum pcapgen_stream_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
pcapgen_stream_kind_name(enum pcapgen_stream_kind kind)
{
	return (unsigned)kind < RTE_DIM(kind_names) ? kind_names[kind] : "?";
}

/* SplitMix64 of (seed, lane): a frame's numbers from its index alone, no state to carry. */
static uint64_t
mix(uint64_t seed, uint64_t lane)
{
	uint64_t z = seed + (lane + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int
pcapgen_stream_init(struct pcapgen_stream *s, const struct pcapgen_stream_cfg *cfg)
{
	if (cfg->count == 0 || cfg->n_src == 0 ||
		cfg->count > (uint64_t)cfg->n_src * PCAPGEN_SPORT_COUNT)
		return -EINVAL;
	if (cfg->kind != PCAPGEN_STREAM_ARP && cfg->dport == 0)
		return -EDOM;
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	if (cfg->kind == PCAPGEN_STREAM_RESERVE) {
		const struct pcapgen_reserve_cfg *r = &cfg->reserve;
		uint32_t kid;

		if (syncookie_init(&s->cookies, r->cookie_secret, r->cookie_slot_s, r->now_s) != 0)
			return -EINVAL;
		if (tok_keyring_current(&r->sale, &kid) != 0)
			return -ENOKEY;
		int n = snprintf(
			s->path, sizeof(s->path), "/api/v1/events/%" PRIu32 "/reserve/", r->event);

		if (tok_path_mint(&r->sale, r->event, s->path + n, sizeof(s->path) - (size_t)n) < 0)
			return -ENOKEY;
	}
	s->link.our_mac = cfg->src_mac;
	s->link.peer_mac = cfg->dst_mac;
	s->h0 = (uint32_t)(mix(cfg->seed, UINT64_MAX) % cfg->n_src);
	s->p0 = (uint32_t)(mix(cfg->seed, UINT64_MAX - 1) % PCAPGEN_SPORT_COUNT);
	s->m.buf_addr = s->room;
	s->m.buf_len = sizeof(s->room);
	rte_mbuf_refcnt_set(&s->m, 1);
	rte_pktmbuf_reset(&s->m);
	return 0;
}

uint64_t
pcapgen_stream_frames(const struct pcapgen_stream *s)
{
	return s->cfg.kind == PCAPGEN_STREAM_RESERVE ? s->cfg.count * 3 : s->cfg.count;
}

/*
 * Frame part (0 SYN, 1 request, 2 FIN) of reserve connection i, whose flow f has its address,
 * port and ISN (f->seq) set: fills in the rest of f. Returns lg_pkt_tcp()'s result.
 */
static int
reserve_frame(struct pcapgen_stream *s, uint64_t i, unsigned part, struct pcapgen_flow *f)
{
	const struct pcapgen_stream_cfg *c = &s->cfg;
	const struct pcapgen_reserve_cfg *r = &c->reserve;
	char tok[TOK_BUF_SIZE];
	uint32_t isn = f->seq;
	struct lg_seg seg = {
		.src_ip = f->src_ip,
		.dst_ip = c->dst_ip,
		.sport = f->sport,
		.dport = c->dport,
		.seq = isn,
		.flags = RTE_TCP_SYN_FLAG,
		.mss_opt = true,
	};

	f->user = r->user_base + i;
	f->ack = 0;
	if (part == 0)
		return lg_pkt_tcp(&s->m, &s->link, &seg);
	/* The SYN-ACK the data plane sends for the SYN above carries this cookie as its ISN. */
	uint32_t cookie = syncookie_make(&s->cookies, rte_cpu_to_be_32(f->src_ip),
		rte_cpu_to_be_32(c->dst_ip), rte_cpu_to_be_16(f->sport), rte_cpu_to_be_16(c->dport),
		isn, syncookie_mss_index(LG_MSS));
	/* The request and the FIN (which needs its length) follow each other: one token each. */
	if (s->req_conn != i + 1) {
		int n = tok_purchase_mint(
			&r->sale, r->event, f->user, r->expires_s, tok, sizeof(tok));

		if (n < 0)
			return -1;
		n = snprintf(s->req, sizeof(s->req),
			"POST %s HTTP/1.1\r\nHost: %s\r\nX-Flash-Token: %s\r\nContent-Length: "
			"0\r\n\r\n",
			s->path, r->host, tok);
		if (n < 0 || (size_t)n >= sizeof(s->req))
			return -1;
		s->req_conn = i + 1;
		s->req_len = (uint16_t)n;
	}
	uint16_t n = s->req_len;
	f->ack = seg.ack = cookie + 1;
	seg.mss_opt = false;
	if (part == 1) {
		f->seq = seg.seq = isn + 1;
		seg.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
		seg.payload = s->req;
		seg.payload_len = n;
	} else {
		f->seq = seg.seq = isn + 1 + (uint32_t)n;
		seg.flags = RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG;
	}
	return lg_pkt_tcp(&s->m, &s->link, &seg);
}

const uint8_t *
pcapgen_stream_frame(struct pcapgen_stream *s, uint64_t i, uint16_t *len, struct pcapgen_flow *flow)
{
	const struct pcapgen_stream_cfg *c = &s->cfg;
	struct pcapgen_flow f = {0};
	unsigned part = 0;
	uint64_t r;
	int rc;

	if (i >= pcapgen_stream_frames(s))
		return NULL;
	if (c->kind == PCAPGEN_STREAM_RESERVE) {
		part = (unsigned)(i % 3);
		i /= 3;
	}
	f.src_ip = c->src_base + (uint32_t)((s->h0 + i) % c->n_src);
	f.sport = (uint16_t)(PCAPGEN_SPORT_MIN + (s->p0 + i / c->n_src) % PCAPGEN_SPORT_COUNT);
	r = mix(c->seed, i);
	f.seq = (uint32_t)r;
	f.ack = (uint32_t)(r >> 32);

	switch (c->kind) {
	case PCAPGEN_STREAM_RESERVE:
		rc = reserve_frame(s, i, part, &f);
		break;
	case PCAPGEN_STREAM_SYN: {
		struct lg_seg seg = {
			.src_ip = f.src_ip,
			.dst_ip = c->dst_ip,
			.sport = f.sport,
			.dport = c->dport,
			.seq = f.seq,
			.flags = RTE_TCP_SYN_FLAG,
			.mss_opt = true,
		};

		f.ack = 0;
		rc = lg_pkt_tcp(&s->m, &s->link, &seg);
		break;
	}
	case PCAPGEN_STREAM_BAD_ACK: {
		/* RFC 9293 §3.10.7.1: in LISTEN an ACK is answered <SEQ=SEG.ACK><CTL=RST>; the data
		 * plane's LISTEN is its cookie check, which a random ACK passes with p = 2^-28. */
		struct lg_seg seg = {
			.src_ip = f.src_ip,
			.dst_ip = c->dst_ip,
			.sport = f.sport,
			.dport = c->dport,
			.seq = f.seq,
			.ack = f.ack,
			.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
			.payload = PCAPGEN_BAD_ACK_REQUEST,
			.payload_len = sizeof(PCAPGEN_BAD_ACK_REQUEST) - 1,
		};

		rc = lg_pkt_tcp(&s->m, &s->link, &seg);
		break;
	}
	case PCAPGEN_STREAM_ARP:
	default:
		f.sport = 0;
		f.seq = f.ack = 0;
		rc = lg_pkt_arp(&s->m, &s->link, RTE_ARP_OP_REQUEST, f.src_ip,
			rte_is_broadcast_ether_addr(&c->dst_mac) ? NULL : &c->dst_mac, c->dst_ip);
		break;
	}
	if (rc != 0)
		return NULL; /* cannot happen: the largest frame is far below PCAPGEN_FRAME_ROOM,
			      * and a reserve stream's key and host were checked */
	if (flow != NULL)
		*flow = f;
	*len = rte_pktmbuf_data_len(&s->m);
	return rte_pktmbuf_mtod(&s->m, const uint8_t *);
}

int
pcapgen_stream_write_pcap(struct pcapgen_stream *s, const char *path)
{
	struct lg_pcap p;
	uint64_t frames = pcapgen_stream_frames(s);
	int rc = lg_pcap_open(&p, path, frames, 0, 1000000);

	if (rc != 0)
		return rc;
	for (uint64_t i = 0; i < frames && p.err == 0; i++) {
		uint16_t len;
		const uint8_t *frame = pcapgen_stream_frame(s, i, &len, NULL);

		if (frame == NULL) {
			lg_pcap_close(&p);
			return -EINVAL;
		}
		lg_pcap_write(&p, frame, len, i); /* "TSC" i at 1 MHz: frames 1 us apart */
	}
	return lg_pcap_close(&p);
}

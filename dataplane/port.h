/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PORT_H
#define FG_DP_PORT_H
/* Setting up, starting and stopping DPDK ports for the workers (slow path). */
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mempool.h>

struct port_setup {
	uint16_t n_queues;              /* one RX and one TX queue per worker */
	uint16_t rx_desc;
	uint16_t tx_desc;
	struct rte_mempool *const *pools; /* pools[q] feeds RX queue q */
};

struct port_info {
	struct rte_ether_addr mac;
	bool tx_cksum_offload;
	bool rss;                       /* several queues spread by RSS on IPv4 addresses */
	char name[64];
};

/*
 * Configures port_id with s->n_queues RX/TX queue pairs (RSS on IPv4
 * source/destination when n_queues > 1, TX checksum offload when the device
 * has it) and starts it. Fills info. Returns 0, or a negative errno with a
 * message logged that names the port and what failed.
 */
int port_start(uint16_t port_id, const struct port_setup *s, struct port_info *info);

/* Stops and closes port_id; safe on a port that never started. */
void port_stop(uint16_t port_id);

#endif
